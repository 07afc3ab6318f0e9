"""``benchmarks/accuracy.py run_cells``: a finished run's checkpoint goes, a failed one's stays."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from accuracy import run_cells  # noqa: E402


@pytest.fixture
def cell(tmp_path, quick_run):
    """``cell(name, *options)``: a quick run's JSON path under a tag folder and its arguments."""

    def make(name: str, *options: str) -> tuple[Path, list[str]]:
        path = tmp_path / "tag" / f"{name}.json"
        return path, quick_run(path, *options)

    return make


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
