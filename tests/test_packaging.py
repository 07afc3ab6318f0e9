"""The source distribution carries what its tests need (MANIFEST.in)."""
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_sdist_carries_the_tests_and_what_they_read(tmp_path):
    pytest.importorskip("setuptools")
    subprocess.run([sys.executable, "setup.py", "-q", "egg_info", "--egg-base", str(tmp_path),
                    "sdist", "--dist-dir", str(tmp_path)],
                   cwd=ROOT, check=True, capture_output=True, timeout=300)
    (archive,) = tmp_path.glob("*.tar.gz")
    with tarfile.open(archive) as tar:
        names = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
    shipped = {"README.md", "pytest.ini", "mypy.ini", "torch_geometric_stream/py.typed",
               "tests/conftest.py", "tests/core/test_sledge.py",
               "tests/cli/benchmark_script_helpers.py", "examples/quickstart.py",
               "benchmarks/accuracy.py", "benchmarks/README.md",
               "torch_geometric_stream/datasets/data/ATTRIBUTION.md",
               "torch_geometric_stream/datasets/data/online_shoppers_intention.csv.gz"}
    assert shipped <= names, sorted(shipped - names)
    tests = {str(path.relative_to(ROOT)) for path in (ROOT / "tests").rglob("*.py")}
    assert tests <= names, sorted(tests - names)
    # the repository's own files stay out too where setuptools_scm is installed (its
    # file finder adds every file git tracks, benchmarks/results/ among them)
    kept = ("benchmarks/results/", ".ci/", ".gitignore", "benchmarks/RESULTS.md")
    assert not any(name.startswith(kept) or name.endswith(".pyc") for name in names)
