"""Installation script of torch_geometric_stream."""
from pathlib import Path

from setuptools import find_packages, setup

HERE = Path(__file__).parent

setup(
    name="torch_geometric_stream",
    version="0.1.0",
    description=("Semi-supervised learning on data streams with graph structure "
                 "learning (SLeDGe) as PyTorch Geometric modules"),
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    python_requires=">=3.10",  # what torch 2.12 and torch-geometric 2.7 ask for
    packages=find_packages(include=["torch_geometric_stream", "torch_geometric_stream.*"]),
    package_data={"torch_geometric_stream": ["py.typed"],  # type information (PEP 561)
                  "torch_geometric_stream.datasets": ["data/*", "data/**/*"]},
    install_requires=[
        # 2.12: the oldest whose torch.compile, torch.func and torch.export pass the
        # suite (on 2.11 a CSR kernel called under torch.compile is refused as not
        # float32; on 2.9 index checks under torch.func.grad cannot read values; on
        # 2.6 and before torch.export traces the checks, and so on down to 2.1)
        "torch>=2.12",
        # 2.7: 2.5 and 2.6 trace (to_hetero) with torch.fx names torch 2.12 no longer has
        "torch-geometric>=2.7",
        # 1.23: loadtxt's own parser, which refuses what datasets.numbers calls no
        # number (1_000, non-ASCII digits); 1.22's takes them as Python's float does
        "numpy>=1.23",
        "tqdm>=4.60",
    ],
    extras_require={
        # matplotlib: the suite checks --plot and plot_curves; 3.6: the oldest with
        # wheels for Python 3.11 (3.5 builds from source there)
        "test": ["pytest>=7", "hypothesis>=6", "matplotlib>=3.6"],
        "plot": ["matplotlib>=3.6"],
        # 0.26.1: 0.26.0 subscripts csv.DictReader at import, which Python 3.11 refuses;
        # Python 3.10 gets River <= 0.22 and CapyMOA <= 0.14 only (the integration tests
        # pass with River 0.22.0 and CapyMOA 0.14.0 there)
        "river": ["river>=0.26.1; python_version >= '3.11'",
                  "river>=0.22; python_version < '3.11'"],
        "capymoa": ["capymoa>=0.15; python_version >= '3.11'",
                    "capymoa>=0.14; python_version < '3.11'"],
        "accel": ["torch-scatter", "torch-sparse"],
    },
    entry_points={"console_scripts": ["torch-geometric-stream=torch_geometric_stream.cli:main"]},
)
