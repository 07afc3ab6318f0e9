"""``benchmarks/stream_length.py``: a finished result survives a rerun, bad
options are refused by argparse."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from benchmark_script_helpers import usage_error

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
import stream_length  # noqa: E402

TINY = ["--model", "light", "--samples", "20", "--window", "10", "--labeled-size", "5",
        "--unlabeled-size", "5", "--hidden", "8", "--k", "2"]


def test_a_finished_run_without_its_checkpoint_is_skipped(capsys, tmp_path):
    stream_length.main([*TINY, "--out-dir", str(tmp_path)])
    (result,) = tmp_path.glob("stream_length_*.json")
    finished = result.read_text()
    assert len(json.loads(finished)["rows"]) == 2
    for checkpoint in tmp_path.glob("*.ckpt"):  # git ignores it: a fresh clone lacks it
        checkpoint.unlink()
    capsys.readouterr()
    stream_length.main([*TINY, "--out-dir", str(tmp_path)])
    assert f"skip {result.name}: finished" in capsys.readouterr().out
    assert result.read_text() == finished
    stream_length.main([*TINY, "--out-dir", str(tmp_path), "--force"])
    rerun = json.loads(result.read_text())
    assert len(rerun["rows"]) == 2 and rerun["final"]["position"] == 20


@pytest.mark.parametrize("argv, message", [
    *[([option, "0"], f"{option}: expected a positive integer, got '0'")
      for option in ("--samples", "--threads", "--window")],
    *[([option, str(least - 1)], f"{option}: expected an integer >= {least}, got '{least - 1}'")
      for option, least in (("--warmup-windows", 0), ("--labeled-size", stream_length.C),
                            ("--unlabeled-size", 0), ("--k", 0), ("--hidden", 1),
                            ("--num-layers", 1))],
    (["--k", "two"], "--k: expected an integer >= 0, got 'two'"),
    *[(["--label-ratio", ratio],
       f"--label-ratio: the label ratio must lie in (0, 1], got {ratio!r}") for ratio in ("0", "1.5", "-0.01")],
    (["--seed", "-1"], "--seed: seed must be >= 0, got -1"),
    (["--seed", str(2 ** 64)], f"--seed: seed must be below 2**64, got {2 ** 64}"),
])
def test_bad_options_are_refused_in_one_line(capsys, tmp_path, argv, message):
    error = usage_error(stream_length.main, [*TINY, "--out-dir", str(tmp_path), *argv], capsys)
    assert error.splitlines()[-1].endswith(f"argument {message}")
    assert not list(tmp_path.iterdir())
