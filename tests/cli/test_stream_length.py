"""``benchmarks/stream_length.py``: a finished result survives a rerun, bad
options are refused by argparse."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
import stream_length  # noqa: E402

TINY = ["--model", "light", "--samples", "20", "--window", "10", "--labeled-size", "5",
        "--unlabeled-size", "5", "--hidden", "8", "--k", "2"]


def main(monkeypatch, *argv: str) -> None:
    monkeypatch.setattr(sys, "argv", ["stream_length.py", *argv])
    stream_length.main()


def test_a_finished_run_without_its_checkpoint_is_skipped(monkeypatch, capsys, tmp_path):
    main(monkeypatch, *TINY, "--out-dir", str(tmp_path))
    (result,) = tmp_path.glob("stream_length_*.json")
    finished = result.read_text()
    assert len(json.loads(finished)["rows"]) == 2
    for checkpoint in tmp_path.glob("*.ckpt"):  # git ignores it: a fresh clone lacks it
        checkpoint.unlink()
    capsys.readouterr()
    main(monkeypatch, *TINY, "--out-dir", str(tmp_path))
    assert f"skip {result.name}: finished" in capsys.readouterr().out
    assert result.read_text() == finished
    main(monkeypatch, *TINY, "--out-dir", str(tmp_path), "--force")
    rerun = json.loads(result.read_text())
    assert len(rerun["rows"]) == 2 and rerun["final"]["position"] == 20


@pytest.mark.parametrize("option", ["--samples", "--threads", "--window"])
def test_a_count_below_one_is_refused(monkeypatch, capsys, tmp_path, option):
    with pytest.raises(SystemExit) as exit_:
        main(monkeypatch, "--out-dir", str(tmp_path), option, "0")
    assert exit_.value.code == 2
    assert f"{option}: expected a positive integer, got '0'" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("ratio", ["0", "1.5", "-0.01"])
def test_a_label_ratio_outside_0_1_is_refused(monkeypatch, capsys, tmp_path, ratio):
    with pytest.raises(SystemExit) as exit_:
        main(monkeypatch, *TINY, "--out-dir", str(tmp_path), "--label-ratio", ratio)
    assert exit_.value.code == 2
    assert (f"argument --label-ratio: the label ratio must lie in (0, 1], got {ratio!r}"
            in capsys.readouterr().err)
    assert not list(tmp_path.iterdir())
