"""``benchmarks/stream_length.py``: a finished result survives a rerun, bad
options are refused by argparse."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from benchmark_script_helpers import cut_short, usage_error

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
import stream_length  # noqa: E402

TINY = ["--model", "light", "--samples", "30", "--window", "10", "--labeled-size", "5",
        "--unlabeled-size", "5", "--hidden", "8", "--k", "2"]


def test_a_finished_run_without_its_checkpoint_is_skipped(capsys, tmp_path):
    stream_length.main([*TINY, "--out-dir", str(tmp_path)])
    (result,) = tmp_path.glob("stream_length_*.json")
    finished = result.read_text()
    assert len(json.loads(finished)["rows"]) == 3
    for checkpoint in tmp_path.glob("*.ckpt"):  # git ignores it: a fresh clone lacks it
        checkpoint.unlink()
    capsys.readouterr()
    stream_length.main([*TINY, "--out-dir", str(tmp_path)])
    assert f"skip {result.name}: finished" in capsys.readouterr().out
    assert result.read_text() == finished
    stream_length.main([*TINY, "--out-dir", str(tmp_path), "--force"])
    rerun = json.loads(result.read_text())
    assert len(rerun["rows"]) == 3 and rerun["final"]["position"] == 30


@pytest.mark.parametrize("argv, message", [
    *[([option, "0"], f"{option}: expected a positive integer, got '0'")
      for option in ("--samples", "--threads", "--window")],
    *[([option, str(least - 1)], f"{option}: expected an integer >= {least}, got '{least - 1}'")
      for option, least in (("--warmup-windows", 0), ("--labeled-size", stream_length.C),
                            ("--unlabeled-size", 0), ("--k", 0), ("--hidden", 1),
                            ("--num-layers", 1))],
    (["--k", "two"], "--k: expected an integer >= 0, got 'two'"),
    (["--threads", "1025"], "--threads: expected at most 1024 threads, got '1025'"),
    *[(["--label-ratio", ratio],
       f"--label-ratio: the label ratio must lie in (0, 1], got {ratio!r}") for ratio in ("0", "1.5", "-0.01")],
    (["--seed", "-1"], "--seed: seed must be >= 0, got -1"),
    (["--seed", str(2 ** 64)], f"--seed: seed must be below 2**64, got {2 ** 64}"),
])
def test_bad_options_are_refused_in_one_line(capsys, tmp_path, argv, message):
    error = usage_error(stream_length.main, [*TINY, "--out-dir", str(tmp_path), *argv], capsys)
    assert error.splitlines()[-1].endswith(f"argument {message}")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("argv, left", [
    (["--samples", "10"], "--samples 10 in windows of --window 10 leave 0 window(s) after "
                          "--warmup-windows 1"),
    (["--warmup-windows", "2"], "--samples 30 in windows of --window 10 leave 1 window(s) "
                                "after --warmup-windows 2"),
])
def test_too_few_windows_for_a_trend_are_refused_before_running(capsys, tmp_path, argv, left):
    # (the run used to go through and its row was left out of the table)
    error = usage_error(stream_length.main, [*TINY, "--out-dir", str(tmp_path), *argv], capsys)
    assert error.splitlines()[-1].endswith(f"{left}; a trend needs 2")
    assert not list(tmp_path.iterdir())


def test_two_windows_after_the_warm_up_are_enough(capsys, tmp_path):
    stream_length.main([*TINY, "--samples", "25", "--out-dir", str(tmp_path)])  # 10, 10, 5
    assert "| light | 25 | 10 | 1 | 2 | " in capsys.readouterr().out


def test_a_result_without_a_trend_is_a_row_of_the_report(capsys, tmp_path):
    stream_length.main([*TINY, "--out-dir", str(tmp_path)])
    capsys.readouterr()
    stream_length.main(["--report-only", "--warmup-windows", "2", "--out-dir", str(tmp_path)])
    row = "| light | 30 | 10 | 1 | 1 | too few windows after the warm-up for a trend |"
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith(row))
    assert line.count("|") == 15 and line.endswith("| none |")  # 14 cells, as the header


def test_a_result_cut_short_is_refused_before_the_run(capsys, tmp_path, monkeypatch):
    refusal = cut_short(tmp_path / "stream_length_light_N30_w10_t1_seed0.json")
    monkeypatch.setattr(stream_length, "run", lambda *args: pytest.fail("ran"))
    error = usage_error(stream_length.main, [*TINY, "--out-dir", str(tmp_path)], capsys)
    assert error.splitlines()[-1].endswith(refusal)


def test_the_report_refuses_a_result_that_is_no_json_object(capsys, tmp_path):
    (tmp_path / "stream_length_full_N30_w10_t1_seed0.json").write_text("[]")
    error = usage_error(stream_length.main, ["--report-only", "--out-dir", str(tmp_path)],
                        capsys)
    assert error.splitlines()[-1].endswith(
        f"error: {tmp_path / 'stream_length_full_N30_w10_t1_seed0.json'}: not a JSON object "
        "(an array); delete it to rerun its run")


def test_a_result_of_another_configuration_is_refused_not_skipped(capsys, tmp_path):
    stream_length.main([*TINY, "--out-dir", str(tmp_path)])
    (result,) = tmp_path.glob("stream_length_*.json")
    made = result.read_text()
    # (the file name holds neither: it was skipped as finished, or resumed from the
    # checkpoint of the other configuration)
    error = usage_error(stream_length.main, [*TINY, "--k", "3", "--hidden", "16",
                                             "--out-dir", str(tmp_path)], capsys)
    assert error.splitlines()[-1].endswith(
        f"{result} exists, made with k 2, hidden 8: pass that, --force to start over, "
        "or another --out-dir")
    assert result.read_text() == made
    stream_length.main([*TINY, "--k", "3", "--out-dir", str(tmp_path), "--force"])
    assert json.loads(result.read_text())["config"]["k"] == 3


def test_with_force_a_result_cut_short_that_it_does_not_rewrite_is_refused_before_the_run(
        capsys, tmp_path, monkeypatch):
    # (--force skipped the check: the report refused it after the run)
    cut_short(tmp_path / "stream_length_full_N30_w10_t1_seed0.json")  # rewritten
    refusal = cut_short(tmp_path / "stream_length_light_N30_w10_t1_seed0.json")
    monkeypatch.setattr(stream_length, "run", lambda *args: pytest.fail("ran"))
    argv = [*TINY, "--model", "full", "--force", "--out-dir", str(tmp_path)]
    error = usage_error(stream_length.main, argv, capsys)
    assert error.splitlines()[-1].endswith(refusal)
