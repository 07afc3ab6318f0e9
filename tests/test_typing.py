"""The package and its examples type-check clean under mypy (``mypy.ini``), as
the package's ``py.typed`` marker tells a user's type checker; skipped where mypy
2.4.1, the version it is checked with, is not installed (CI installs it; another
version may read torch's annotations differently)."""
from importlib import resources
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The mypy version the package is checked with (.ci/run installs it).
MYPY_VERSION = "2.4.1"


def test_the_installed_package_carries_its_py_typed_marker():
    assert resources.files("torch_geometric_stream").joinpath("py.typed").is_file()


def test_mypy_finds_no_error_in_the_package_and_its_examples(tmp_path):
    api = pytest.importorskip("mypy.api")
    from mypy.version import __version__ as version
    if version != MYPY_VERSION:
        pytest.skip(f"the package is checked with mypy {MYPY_VERSION}, this is {version}")
    stdout, stderr, status = api.run([
        "--config-file", str(ROOT / "mypy.ini"), "--cache-dir", str(tmp_path),
        str(ROOT / "torch_geometric_stream"), str(ROOT / "examples")])
    assert status == 0, stdout + stderr
