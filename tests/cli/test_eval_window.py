"""``run --eval-window N`` (and ``--windows-csv``): the metrics of each window of N
samples in the record, a file and the plot, under both histories, through a resume
and a Ctrl-C."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from torch_geometric_stream.cli import main
from torch_geometric_stream.evaluation.windows import WINDOW_COLUMNS


def _windows(path: Path) -> dict:
    return json.loads(path.read_text())["windows"]


def _csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("history", ["full", "bounded"])
def test_the_record_and_the_windows_csv_hold_the_windows_the_samples_give(
        tmp_path, quick_run, history):
    out, windows_csv, plot = (tmp_path / name for name in ("run.json", "w.csv", "run.png"))
    assert main(quick_run(out, "--eval-window", "8", "--windows-csv", str(windows_csv),
                          "--history", history, "--plot", str(plot))) == 0
    record = json.loads(out.read_text())
    windows = record["windows"]
    assert record["eval_window"] == 8 and list(windows) == list(WINDOW_COLUMNS)
    assert (windows["start"], windows["end"], windows["n_samples"]) == (
        [0, 8, 16, 24], [8, 16, 24, 30], [8, 8, 8, 6])
    assert sum(windows["n_labels"]) == record["n_labels"]
    assert np.dot(windows["accuracy"], windows["n_samples"]) == pytest.approx(
        record["accuracy"] * 30)
    rows = _csv_rows(windows_csv)
    assert [[row[key] for key in WINDOW_COLUMNS] for row in rows] == [
        ["" if value is None else str(value) for value in column]
        for column in zip(*(windows[key] for key in WINDOW_COLUMNS))]
    assert plot.stat().st_size > 0


def test_both_histories_give_the_windows_of_the_per_sample_rows(tmp_path, quick_run):
    full, bounded, samples = tmp_path / "full.json", tmp_path / "bounded.json", tmp_path / "s.csv"
    assert main(quick_run(full, "--eval-window", "7", "--csv", str(samples))) == 0
    assert main(quick_run(bounded, "--eval-window", "7", "--history", "bounded")) == 0
    assert _windows(bounded) == _windows(full)
    correct = [int(row["correct"]) for row in _csv_rows(samples)]  # --csv as before
    assert _windows(full)["accuracy"] == [np.mean(correct[i:i + 7]) for i in range(0, 30, 7)]


def test_without_eval_window_the_record_has_no_windows(tmp_path, quick_run):
    out = tmp_path / "run.json"
    assert main(quick_run(out)) == 0
    record = json.loads(out.read_text())
    assert record["eval_window"] is None and "windows" not in record


@pytest.mark.parametrize("options, message", [
    (["--eval-window", "0"], "argument --eval-window: expected a positive integer, got '0'"),
    (["--eval-window", "2.5"], "argument --eval-window: expected a positive integer"),
    (["--eval-window", str(2 ** 63)], "argument --eval-window: window must be at most 2**63 - 1"),
    (["--windows-csv", "{dir}/w.csv"], "--windows-csv writes one row per --eval-window window: "
                                       "add --eval-window N or drop --windows-csv"),
    (["--eval-window", "5", "--windows-csv", "{dir}/run.json"],
     "--output and --windows-csv name one file"),
])
def test_bad_window_options_are_refused_before_the_run(tmp_path, capsys, quick_run, options,
                                                       message):
    out = tmp_path / "run.json"
    assert main(quick_run(out, *(option.format(dir=tmp_path) for option in options))) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("history", ["full", "bounded"])
def test_a_run_resumed_from_the_middle_of_a_window_has_the_uninterrupted_windows(
        tmp_path, capsys, monkeypatch, quick_run, interrupt_run_after, history):
    reference, out, checkpoint = tmp_path / "ref.json", tmp_path / "run.json", tmp_path / "c"
    options = ["--eval-window", "8", "--history", history]
    assert main(quick_run(reference, *options)) == 0
    saving = quick_run(out, *options, "--checkpoint", str(checkpoint), "--checkpoint-every", "12")
    interrupt_run_after(15)  # the checkpoint at 12, in the window [8, 16)
    assert main(saving) == 130
    monkeypatch.undo()
    assert main([*saving, "--resume", str(checkpoint)]) == 0
    assert json.loads(out.read_text())["resumed_from"] == 12
    assert _windows(out) == _windows(reference)
    # a resume counts the checkpoint's windows
    capsys.readouterr()
    assert main([*saving[:-4], "--eval-window", "5", "--resume", str(checkpoint)]) == 2
    assert "eval_window" in capsys.readouterr().err


def test_ctrl_c_keeps_the_windows_of_the_samples_done(
        tmp_path, capsys, quick_run, interrupted_main, ctrl_c_in_sample):
    out, windows_csv = tmp_path / "run.json", tmp_path / "w.csv"
    ctrl_c_in_sample(12)
    assert interrupted_main(quick_run(out, "--eval-window", "8", "--windows-csv",
                                      str(windows_csv))) == 130
    partials = [tmp_path / "run.json.partial", tmp_path / "w.csv.partial"]
    assert f"{partials[0]}, {partials[1]}" in capsys.readouterr().err
    assert sorted(tmp_path.iterdir()) == sorted(partials)
    windows = _windows(partials[0])
    assert (windows["end"], windows["n_samples"]) == ([8, 13], [8, 5])
    assert [row["end"] for row in _csv_rows(partials[1])] == ["8", "13"]


def test_several_seeds_get_windows_files_of_their_own_the_same_under_jobs(tmp_path, quick_run):
    files = {}
    for jobs in ("1", "2"):
        windows_csv = tmp_path / f"jobs{jobs}.csv"
        assert main(quick_run(tmp_path / f"jobs{jobs}.json", "--seed", "0,1", "--jobs", jobs,
                              "--eval-window", "8", "--windows-csv", str(windows_csv))) == 0
        files[jobs] = [(_windows(tmp_path / f"jobs{jobs}_seed{seed}.json"),
                        _csv_rows(tmp_path / f"jobs{jobs}_seed{seed}.csv")) for seed in (0, 1)]
    assert files["1"] == files["2"]
    (seed0, rows0), (seed1, _) = files["1"]
    assert [row["end"] for row in rows0] == ["8", "16", "24", "30"]
    assert seed0["accuracy"] != seed1["accuracy"]  # each seed's own windows
