"""``benchmarks/accuracy.py run_cells``: a finished run's checkpoint goes, a failed one's stays."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from accuracy import run_cells  # noqa: E402


def _cell(tmp_path: Path, name: str, *options: str) -> tuple[Path, list[str]]:
    path = tmp_path / "tag" / f"{name}.json"
    return path, ["run", "--dataset", "synthetic", "--model", "memory", "--limit", "30",
                  "--output", str(path), "--quiet", *options]


def test_only_finished_runs_lose_their_checkpoint(tmp_path):
    good, bad = _cell(tmp_path, "good"), _cell(tmp_path, "bad", "--label-ratio", "2")
    run_cells([good, bad], jobs=1, threads=1, checkpoint_every=None)  # creates the folder
    for path, _ in (good, bad):
        path.with_suffix(".ckpt").write_bytes(b"left over")
    good[0].unlink()
    run_cells([good, bad], jobs=1, threads=1, checkpoint_every=10)
    assert good[0].exists() and not good[0].with_suffix(".ckpt").exists()
    assert not bad[0].exists() and bad[0].with_suffix(".ckpt").exists()


def test_without_checkpoints_nothing_is_deleted(tmp_path):
    good = _cell(tmp_path, "good")
    good[0].parent.mkdir()
    good[0].with_suffix(".ckpt").write_bytes(b"someone else's")
    run_cells([good], jobs=1, threads=1, checkpoint_every=None)
    assert good[0].exists() and good[0].with_suffix(".ckpt").exists()
