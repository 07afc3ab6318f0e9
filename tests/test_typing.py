"""The package, its examples and the benchmark scripts type-check clean under
mypy (``mypy.ini``), as the package's ``py.typed`` marker tells a user's type
checker; skipped where mypy 2.4.1, the version it is checked with, is not
installed (CI installs it; another version may read torch's annotations
differently)."""
from importlib import resources
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The mypy version the package is checked with (.ci/run installs it).
MYPY_VERSION = "2.4.1"


def test_the_installed_package_carries_its_py_typed_marker():
    assert resources.files("torch_geometric_stream").joinpath("py.typed").is_file()


@pytest.fixture(scope="module")
def mypy_run(tmp_path_factory):
    """``mypy_run(*arguments)``: mypy's report and exit status with ``mypy.ini``
    (one cache for the module's runs: the first is cold, about 30 s)."""
    api = pytest.importorskip("mypy.api")
    from mypy.version import __version__ as version
    if version != MYPY_VERSION:
        pytest.skip(f"the package is checked with mypy {MYPY_VERSION}, this is {version}")
    cache = tmp_path_factory.mktemp("mypy_cache")

    def run(*arguments: str) -> tuple:
        stdout, stderr, status = api.run(["--config-file", str(ROOT / "mypy.ini"),
                                          "--cache-dir", str(cache), *arguments])
        return stdout + stderr, status
    return run


def test_mypy_finds_no_error_in_the_package_its_examples_and_the_benchmarks(mypy_run):
    report, status = mypy_run(str(ROOT / "torch_geometric_stream"), str(ROOT / "examples"),
                              str(ROOT / "benchmarks"))
    assert status == 0, report


def test_a_learn_call_is_typed_as_the_learner_it_returns(mypy_run, tmp_path):
    """``model.learn(...)`` is the model, of its own class, to a user's type
    checker (not a bare ``StreamClassifier``): chained calls keep their types."""
    user = tmp_path / "user.py"
    user.write_text("\n".join([
        "import torch",
        "from torch_geometric_stream import SLeDGe",
        "model: SLeDGe = SLeDGe(3, 2).learn(torch.zeros(3), 0).learn_one(torch.zeros(3))",
        "reveal_type(model.learn(torch.zeros(2, 3)).memory)", ""]))
    report, status = mypy_run(str(user))
    assert status == 0, report
    assert 'Revealed type is "torch_geometric_stream.memory.dual_prototype.' \
           'DualPrototypeMemory"' in report
