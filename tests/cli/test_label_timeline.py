"""``benchmarks/label_timeline.py``: window accuracy and label counts on hand-checkable cases."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from benchmark_script_helpers import usage_error, write_shuttle

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from label_timeline import labels_seen, main, timeline, window_accuracy  # noqa: E402


def test_window_accuracy_from_a_running_curve():
    # 8 samples, correct = 1 1 0 1 1 1 1 1; curve stored after 1 sample, then every 2
    correct = np.array([1, 1, 0, 1, 1, 1, 1, 1])
    position = [1, 2, 4, 6, 8]
    running = [correct[:p].mean() for p in position]
    assert window_accuracy(position, running, [0, 4, 8]).tolist() == [0.75, 1.0]
    # a window edge between stored points: 2 correct after 2 samples, 3 after 4,
    # so 2.5 interpolated after 3
    assert window_accuracy(position, running, [0, 3]) == pytest.approx([2.5 / 3])


def test_window_accuracy_of_a_resumed_curve_is_nan_before_its_start():
    # curve of a run that starts at position 4: first stored point is 1 sample in
    position = [5, 6, 8]
    running = [1.0, 0.5, 0.5]  # correct: 1, 0, then 1 of 2
    accuracy = window_accuracy(position, running, [0, 4, 6, 8])
    assert np.isnan(accuracy[0])
    assert accuracy[1:].tolist() == [0.5, 0.5]


def test_labels_seen_counts_per_class_up_to_each_window_end():
    labels = np.array([0, 1, 1, 0, 0, 1])
    mask = np.array([True, True, False, False, True, True])
    assert labels_seen(labels, mask, 2, [0, 2, 4, 6]).tolist() == [[1, 1], [1, 1], [2, 2]]


def test_timeline_redraws_the_record_s_mask():
    labels = np.repeat([0, 1], 50)
    record = {"n_samples": 100, "label_mask": "paper", "label_ratio": 0.05, "seed": 0,
              "accuracy": 0.5, "curve": {"position": list(range(1, 101)),
                                         "running_accuracy": [0.5] * 100}}
    run = timeline(record, labels, 2, window=50)
    assert len(run["arrivals"]) == 5 and run["arrivals"][:1] == [(0, 0)]
    assert (50, 1) in run["arrivals"]  # first occurrence of class 1
    assert run["edges"] == [0, 50, 100]
    assert sum(run["seen"][-1]) == 5


def test_a_record_without_a_curve_is_named(tmp_path, capsys):
    folder = tmp_path / "old"
    folder.mkdir()
    (folder / "sledge_Shopper_0.001_seed0.json").write_text(
        '{"model": "sledge", "dataset": "Shopper", "config": {}, "n_samples": 10, '
        '"label_ratio": 0.001, "seed": 0, "accuracy": 0.5}')
    with pytest.raises(SystemExit):
        main(["--tag", "old", "--dataset", "Shopper", "--ratio", "0.001", "--seeds", "0",
              "--results", str(tmp_path), "--root", str(tmp_path)])
    err = capsys.readouterr().err
    assert "no running-accuracy curve in" in err and "sledge_Shopper_0.001_seed0.json" in err


@pytest.mark.parametrize("dataset", ["Shuttle", "shuttle"])  # any case, as accuracy.py's
def test_the_table_goes_to_out_dir(dataset, tmp_path):
    write_shuttle(tmp_path / "data")
    runs = tmp_path / "runs" / "tag"
    runs.mkdir(parents=True)
    (runs / "sledge_Shuttle_0.5_seed0.json").write_text(
        '{"model": "sledge", "dataset": "Shuttle", "config": {}, '
        '"n_samples": 12, "label_mask": "paper", "label_ratio": 0.5, "seed": 0, '
        '"accuracy": 0.5, "curve": {"position": [4, 8, 12], "running_accuracy": [0.5, 0.5, 0.5]}}')
    out = tmp_path / "tables"
    assert main(["--tag", "tag", "--dataset", dataset, "--ratio", "0.5", "--seeds", "0",
                 "--window", "4", "--results", str(tmp_path / "runs"),
                 "--root", str(tmp_path / "data"), "--out-dir", str(out)]) == 0
    table = out.joinpath("sledge_Shuttle_0.5_tag.md").read_text()
    assert table.count("\n") == 2 + 3  # header, rule, one row per window of 4


@pytest.mark.parametrize("window", ["0", "-3", "wide"])
def test_a_window_below_one_is_refused_at_parse_time(window, tmp_path, capsys):
    # (no such --root: refused after parsing, so an unchecked window fails fast, not by running)
    error = usage_error(main, ["--tag", "t", "--dataset", "Shopper", "--ratio", "0.01",
                               f"--window={window}", "--root", str(tmp_path / "none")], capsys)
    assert error.splitlines()[-1].endswith(
        f"argument --window: expected an integer >= 1, got {window!r}")
