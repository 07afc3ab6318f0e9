"""``benchmarks/seed_spread.py``: which runs stand for each seed, the labels each
draw revealed, and the table's means on hand-checkable cases."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from benchmark_script_helpers import write_run_record, write_shuttle

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from seed_spread import labels_per_class, main, seed_records, spread_table  # noqa: E402


def write_run(folder: Path, seed: int, accuracy: float, limit=None, dataset="toy") -> None:
    suffix = f"_limit{limit}" if limit else ""
    write_run_record(folder / f"sledge_{dataset}_0.02_seed{seed}{suffix}.json",
                     dataset=dataset, seed=seed, accuracy=accuracy, limit=limit,
                     label_ratio=0.02, balanced_accuracy=None)


def test_the_first_tag_holding_a_seed_wins_and_prefixes_do_not_count(tmp_path):
    write_run(tmp_path / "rerun", 0, 0.5)
    write_run(tmp_path / "more", 0, 0.9)
    write_run(tmp_path / "more", 1000, 0.7)
    write_run(tmp_path / "more", 3000, 0.1, limit=50)
    chosen = seed_records(tmp_path, ["rerun", "more"], "sledge", "toy", 0.02)
    assert [(tag, r["seed"], r["accuracy"]) for tag, r in chosen] == [
        ("rerun", 0, 0.5), ("more", 1000, 0.7)]


def test_labels_per_class_redraws_the_mask():
    labels = np.repeat([0, 1, 2], [60, 30, 10])
    record = {"n_samples": 100, "label_ratio": 0.02, "seed": 7, "label_mask": "paper"}
    # max(c, 2) = 3 labels: the first occurrence of every class, nothing drawn
    assert labels_per_class(record, labels, 3) == [1, 1, 1]
    more = labels_per_class({**record, "label_ratio": 0.1}, labels, 3)
    assert sum(more) == 10 and min(more) >= 1


def test_labels_per_class_counts_a_class_the_draw_missed_as_zero():
    # a run over the first 10 samples never sees class 2: its count is 0, and the
    # vector keeps one entry per class of the stream (the table's columns)
    labels = np.repeat([0, 1, 2], [6, 4, 2])
    record = {"n_samples": 10, "label_ratio": 0.2, "seed": 7, "label_mask": "paper"}
    assert labels_per_class(record, labels, 3) == [1, 1, 0]   # max(c, 2) = 2 labels


def test_the_table_gives_each_group_s_mean_and_the_mean_per_rarest_count():
    rows = [{"seed": 0, "tag": "a", "accuracy": 0.6, "balanced": 0.5, "labels": [7, 5]},
            {"seed": 2000, "tag": "a", "accuracy": 0.8, "balanced": None, "labels": [9, 3]},
            {"seed": 1000, "tag": "b", "accuracy": 0.9, "balanced": 0.7, "labels": [11, 1]},
            {"seed": 3000, "tag": "b", "accuracy": 0.7, "balanced": 0.6, "labels": [11, 1]}]
    table = spread_table(rows, rarest=1)
    assert "| 0 | 7 / 5 | 0.6000 | 0.500 | a |" in table
    assert "| 2000 | 9 / 3 | 0.8000 | – | a |" in table
    assert "| the paper's seeds | 2 | 0.7000 ± 0.1414 | 4.00 |" in table
    assert "| the other seeds | 2 | 0.8000 ± 0.1414 | 1.00 |" in table
    assert "| all seeds | 4 | 0.7500 ± 0.1291 | 2.50 |" in table
    assert "| 1 | 1000, 3000 | 0.8000 ± 0.1414 |" in table
    assert "| 5 | 0 | 0.6000 |" in table
    # every paper seed counts as one
    assert "| the paper's seeds | 1 | 0.6000 | 5.00 |" in spread_table([{**rows[0], "seed": 4000}],
                                                                      rarest=1)


@pytest.mark.parametrize("dataset", ["Shuttle", "shuttle"])  # any case, as accuracy.py's
def test_no_run_in_the_tags_is_a_clear_error(dataset, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--dataset", dataset, "--ratio", "0.02", "--tags", "none", "--results",
              str(tmp_path), "--root", str(tmp_path), "--out", str(tmp_path / "out")])
    assert stop.value.code == 2
    assert "no whole-stream run of sledge on Shuttle at 0.02 in none" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_tag_without_runs_is_an_error_even_beside_one_with_runs(tmp_path, capsys):
    write_run(tmp_path / "good", 0, 0.5, dataset="Shuttle")
    write_run(tmp_path / "limited", 1000, 0.5, limit=50, dataset="Shuttle")  # none whole
    with pytest.raises(SystemExit) as stop:
        main(["--dataset", "shuttle", "--ratio", "0.02", "--model", "sledge", "--tags", "good",
              "typo", "limited", "--results", str(tmp_path), "--root", str(tmp_path),
              "--out", str(tmp_path / "out")])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: ")
    assert err.endswith("error: no whole-stream run of sledge on Shuttle at 0.02 in typo, "
                        "limited\n")
    assert not (tmp_path / "out").exists()


def test_the_table_file_is_named_by_model_dataset_ratio_and_first_tag(tmp_path, capsys):
    write_shuttle(tmp_path / "data")
    for tag, seed in (("later", 0), ("first", 1000)):
        write_run_record(tmp_path / "runs" / tag / f"sledge-light_Shuttle_0.25_seed{seed}.json",
                         model="sledge-light", dataset="Shuttle", label_ratio=0.25,
                         n_samples=12, seed=seed)
    assert main(["--model", "sledge-light", "--dataset", "shuttle", "--ratio", "0.25",
                 "--tags", "first", "later", "--results", str(tmp_path / "runs"),
                 "--root", str(tmp_path / "data"), "--out", str(tmp_path / "out")]) == 0
    out = tmp_path / "out" / "sledge-light_Shuttle_0.25_first.md"
    assert [path.name for path in (tmp_path / "out").iterdir()] == [out.name]
    text = out.read_text()
    assert text.startswith("Tags: first, later.\n\n| seed | labels per class |")
    assert "| 0 | 2 / 1 | 0.5000 | – | later |" in text
    assert capsys.readouterr().out.endswith(f"wrote {out}\n")
