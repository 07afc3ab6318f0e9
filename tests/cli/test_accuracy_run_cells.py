"""``benchmarks/accuracy.py``'s runs: the grid's runs left to do (a finished one skipped,
an interrupted one resumed), the failed ones counted, and a finished run's checkpoint
gone while a failed one's stays."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import accuracy  # noqa: E402
from accuracy import pending_runs, run_cells  # noqa: E402


@pytest.fixture
def cell(tmp_path, quick_run):
    """``cell(name, *options)``: a quick run's JSON path under a tag folder and its arguments."""

    def make(name: str, *options: str) -> tuple[Path, list[str]]:
        path = tmp_path / "tag" / f"{name}.json"
        return path, quick_run(path, *options)

    return make


def test_pending_runs_skip_finished_runs_and_resume_interrupted_ones(tmp_path, monkeypatch,
                                                                     capsys):
    monkeypatch.setattr(accuracy, "RESULTS", tmp_path)
    done, resumed, fresh = (tmp_path / "t" / f"sledge_Shuttle_0.01_seed{seed}_limit30.json"
                            for seed in (0, 2000, 4000))
    done.parent.mkdir()
    done.write_text("{}")
    resumed.with_suffix(".ckpt").write_bytes(b"")
    args = argparse.Namespace(datasets=["Shuttle"], ratios=[0.01], models=["sledge"],
                              seeds=[0, 2000, 4000], limit=30, tag="t", threads=2,
                              checkpoint_every=10, extra=["--lam", "0.01"])
    pending = pending_runs(args, Path("data"))
    assert capsys.readouterr().out == f"skip {done.name} (exists)\n"

    def argv(path: Path, seed: int, *resume: str) -> list[str]:
        return ["run", "--dataset", "Shuttle", "--root", "data", "--model", "sledge",
                "--label-ratio", "0.01", "--seed", str(seed), "--threads", "2", "--output",
                str(path), "--limit", "30", "--checkpoint", str(path.with_suffix(".ckpt")),
                "--checkpoint-every", "10", *resume, "--lam", "0.01"]

    assert pending == [
        (resumed, argv(resumed, 2000, "--resume", str(resumed.with_suffix(".ckpt")))),
        (fresh, argv(fresh, 4000))]


def test_every_run_that_did_not_exit_0_counts_as_failed(monkeypatch):
    # a worker killed by a signal (e.g. the out-of-memory killer's SIGKILL) exits -9
    monkeypatch.setattr(accuracy, "run_commands", lambda *args, **kwargs: [0, 1, -9, 0])
    assert run_cells([], jobs=2, threads=1, checkpoint_every=None) == 2


def test_only_finished_runs_lose_their_checkpoint(cell):
    good, bad = cell("good"), cell("bad", "--label-ratio", "2")
    run_cells([good, bad], jobs=1, threads=1, checkpoint_every=None)  # creates the folder
    for path, _ in (good, bad):
        path.with_suffix(".ckpt").write_bytes(b"left over")
    good[0].unlink()
    run_cells([good, bad], jobs=1, threads=1, checkpoint_every=10)
    assert good[0].exists() and not good[0].with_suffix(".ckpt").exists()
    assert not bad[0].exists() and bad[0].with_suffix(".ckpt").exists()


def test_without_checkpoints_nothing_is_deleted(cell):
    good = cell("good")
    good[0].parent.mkdir()
    good[0].with_suffix(".ckpt").write_bytes(b"someone else's")
    run_cells([good], jobs=1, threads=1, checkpoint_every=None)
    assert good[0].exists() and good[0].with_suffix(".ckpt").exists()
