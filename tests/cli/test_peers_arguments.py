"""``benchmarks/peers.py``'s command line: a missing CapyMOA or data folder, and a
result cut short, is one line; its own resumable runs show no progress bar (these tests
need no CapyMOA)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from benchmark_script_helpers import NO_DATA_FOLDER, cut_short, usage_error, without_data_folder

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
    argv = ["--datasets", "Shopper", "--learners", "KNN", "--root", "/"]  # a folder without it
    assert "dataset folder /Shopper does not exist" in usage_error(peers.main, argv, capsys)


def test_the_table_refuses_a_result_cut_short_in_one_line(capsys):
    refusal = cut_short(peers.result_path("KNN", "Shopper", 0.01, 1, None, "global"))
    error = usage_error(peers.main, ["--render-only"], capsys)
    assert error.splitlines()[-1].endswith(refusal)
    assert not (peers.RESULTS / "peers.md").exists()


def test_a_result_cut_short_is_refused_before_any_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: object())  # "installed"
    refusal = cut_short(peers.result_path("KNN", "Shopper", 0.01, 1, None, "global"))
    argv = ["--datasets", "GSAD", "--learners", "KNN", "--root", str(tmp_path)]  # no GSAD
    assert usage_error(peers.main, argv, capsys).splitlines()[-1].endswith(refusal)


def test_the_resumable_run_shows_no_progress_bar(tmp_path, monkeypatch, capsys):
    from torch_geometric_stream import SLeDGe

    model = SLeDGe(4, 2, labeled_size=4, unlabeled_size=8, k=2, hidden_channels=8, seed=0)
    monkeypatch.setattr(peers, "numpy_stream", lambda x, y, name: SimpleNamespace(
        get_schema=lambda: None))  # CapyMOA's stream and adapter stand-ins
    monkeypatch.setattr(peers, "make_learner", lambda *args: (SimpleNamespace(model=model), {}))
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(30, 4)), rng.integers(0, 2, 30)
    result, _ = peers.evaluate_resumable("sledge-light", "blobs", x, y, 0.2, 3, None,
                                         tmp_path / "run.ckpt", every=10)
    assert result.correct.size == 30
    assert capsys.readouterr().err == ""  # one line per finished run, as the other scripts
