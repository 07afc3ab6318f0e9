"""``benchmarks/peers.py``'s command line: a missing CapyMOA or data folder is
one line (these tests need no CapyMOA)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from benchmark_script_helpers import NO_DATA_FOLDER, usage_error, without_data_folder

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import peers  # noqa: E402


@pytest.fixture(autouse=True)
def results(tmp_path, monkeypatch):
    """Results (and the rendered peers.md) in a temporary folder."""
    monkeypatch.setattr(peers, "RESULTS", tmp_path / "results")


def test_without_capymoa_the_error_says_how_to_install_it(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "capymoa", None)  # find_spec: not installed
    error = usage_error(peers.main, ["--datasets", "Shopper", "--learners", "KNN", "--root", "."],
                        capsys)
    assert error.splitlines()[-1].endswith('CapyMOA is not installed: pip install ".[capymoa]"')


def test_no_data_folder_is_refused_in_one_line(tmp_path, monkeypatch, capsys):
    without_data_folder(monkeypatch, tmp_path)
    error = usage_error(peers.main, ["--datasets", "Shopper", "--learners", "KNN"], capsys)
    assert error.splitlines()[-1].endswith(NO_DATA_FOLDER)


def test_a_missing_dataset_folder_is_refused_without_a_traceback(monkeypatch, capsys):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: object())  # "installed"
    argv = ["--datasets", "Shopper", "--learners", "KNN", "--root", "/nonexistent"]
    assert "Dataset folder /nonexistent/Shopper does not exist" in usage_error(peers.main, argv,
                                                                               capsys)


@pytest.mark.parametrize("ratios", [["0.01", "0"], ["1.5"], ["-0.01"]])
def test_a_ratio_outside_0_1_is_refused(ratios, capsys):
    argv = ["--datasets", "Shopper", "--learners", "KNN", "--root", ".", "--ratios", *ratios]
    assert usage_error(peers.main, argv, capsys).splitlines()[-1].endswith(
        f"argument --ratios: the label ratio must lie in (0, 1], got {ratios[-1]!r}")
