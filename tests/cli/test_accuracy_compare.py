"""``benchmarks/accuracy.py compare``: two tags paired seed by seed, with what
differs between the paired runs' settings."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Optional

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import accuracy  # noqa: E402
from accuracy import compare, compare_table, setting_changes  # noqa: E402


def _run(accuracy_value: float, balanced: Optional[float] = 0.5, last_fifth: float = 0.6,
         normalization: str = "symmetric", mkl_cbwr: Optional[str] = None) -> dict[str, Any]:
    record = {"model": "sledge", "dataset": "Shopper", "label_ratio": 0.001,
              "accuracy": accuracy_value, "accuracy_last_20": last_fifth,
              "preset": "paper", "label_mask": "paper", "threads": 1,
              "machine": {"platform": "host-a", "mkl_cbwr": mkl_cbwr},
              "config": {"k": 1, "normalization": normalization}}
    if balanced is not None:
        record["balanced_accuracy"] = balanced
    return record


def _write(results: Path, tag: str, seed: int, record: dict[str, Any]) -> None:
    folder = results / tag
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"sledge_Shopper_0.001_seed{seed}.json").write_text(json.dumps(
        {**record, "seed": seed}))


GRID = (["sledge", "sledge-light"], ["Shopper", "GSAD"], [0.001, 0.01], [0, 2000, 4000], None)


def test_pairs_the_seeds_both_tags_finished(tmp_path, monkeypatch):
    monkeypatch.setattr(accuracy, "RESULTS", tmp_path)
    _write(tmp_path, "base", 0, _run(0.50, balanced=0.40, last_fifth=0.60))
    _write(tmp_path, "base", 2000, _run(0.60, balanced=0.50, last_fifth=0.70))
    for seed, value in ((0, 0.55), (2000, 0.58), (4000, 0.90)):  # seed 4000: no pair
        _write(tmp_path, "other", seed, _run(value, balanced=0.60, last_fifth=0.80,
                                             normalization="symmetric-add"))
    lines = compare_table("base", "other", *GRID).splitlines()
    assert len(lines) == 3  # header, rule, the one cell both ran
    cells = [cell.strip() for cell in lines[2].strip("|").split("|")]
    assert cells == ["Shopper", "0.001", "sledge", "0,2000",
                     "0.5500 ± 0.0707 (0.5000, 0.6000)", "0.5650 ± 0.0212 (0.5500, 0.5800)",
                     "+5.0, -2.0", "1 of 2", "0.450 -> 0.600", "0.650 -> 0.800",
                     "normalization: symmetric -> symmetric-add"]


def test_a_record_without_a_metric_shows_a_dash(tmp_path, monkeypatch):
    monkeypatch.setattr(accuracy, "RESULTS", tmp_path)
    _write(tmp_path, "old", 0, _run(0.50, balanced=None))
    _write(tmp_path, "new", 0, _run(0.50))
    cells = [cell.strip() for cell in
             compare_table("old", "new", *GRID).splitlines()[2].strip("|").split("|")]
    assert cells[6:] == ["+0.0", "0 of 1", "- -> 0.500", "0.600 -> 0.600", "-"]
    # a tag of which one paired run lacks it: no mean over the others alone
    _write(tmp_path, "old", 2000, _run(0.50))
    _write(tmp_path, "new", 2000, _run(0.50))
    cells = [cell.strip() for cell in
             compare_table("old", "new", *GRID).splitlines()[2].strip("|").split("|")]
    assert cells[8] == "- -> 0.500"


def test_setting_changes_name_each_change_once_in_order():
    pairs = [(_run(0.5), _run(0.5, normalization="mean", mkl_cbwr="AVX2")),
             (_run(0.5), _run(0.5, mkl_cbwr="AVX2"))]
    assert setting_changes(pairs) == ["normalization: symmetric -> mean",
                                      "mkl_cbwr: None -> AVX2"]
    assert setting_changes([(_run(0.5), _run(0.7))]) == []  # the result is no setting
    assert setting_changes([(_run(0.5), {**_run(0.5), "threads": 4})]) == ["threads: 1 -> 4"]


def test_settings_a_record_predates_read_as_the_value_its_run_had():
    old, new = _run(0.5), _run(0.5)
    new["flush_denormal"] = True
    new["config"].update(robust_quantile=0.01, count_offset=1)  # the values old runs had
    assert setting_changes([(old, new)]) == ["flush_denormal: False -> True"]
    new["config"]["count_offset"] = 0
    assert setting_changes([(old, new)]) == ["count_offset: 1 -> 0",
                                             "flush_denormal: False -> True"]
    new["config"]["count_offset"], new["flush_denormal"] = 1, False
    new["history"] = "full"  # records before --history kept the full history
    assert setting_changes([(old, new)]) == []
    new["history"] = "bounded"
    assert setting_changes([(old, new)]) == ["history: full -> bounded"]


def test_compare_refuses_tags_without_a_shared_run(tmp_path, monkeypatch):
    monkeypatch.setattr(accuracy, "RESULTS", tmp_path)
    _write(tmp_path, "base", 0, _run(0.5))
    _write(tmp_path, "other", 2000, _run(0.5))
    args = argparse.Namespace(base="base", other="other", models=GRID[0], datasets=GRID[1],
                              ratios=GRID[2], seeds=GRID[3], limit=None)
    with pytest.raises(SystemExit, match="base and other share no finished run"):
        compare(args)
    assert not list(tmp_path.glob("compare-*.md"))


def test_compare_writes_the_table_it_prints(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(accuracy, "RESULTS", tmp_path)
    _write(tmp_path, "base", 0, _run(0.5))
    _write(tmp_path, "other", 0, _run(0.6))
    accuracy.main(["compare", "base", "other", "--datasets", "Shopper", "--seeds", "0"])
    written = (tmp_path / "compare-other-vs-base.md").read_text()
    assert written == capsys.readouterr().out
    assert "| +10.0 | 1 of 1 |" in written


def test_joined_tags_take_a_seed_from_the_first_that_holds_it(tmp_path, monkeypatch):
    monkeypatch.setattr(accuracy, "RESULTS", tmp_path)
    _write(tmp_path, "paper-seeds", 0, _run(0.50))
    _write(tmp_path, "more-seeds", 0, _run(0.10))  # seed 0 again: the first tag's wins
    _write(tmp_path, "more-seeds", 1000, _run(0.70))
    for seed in (0, 1000):
        _write(tmp_path, "variant", seed, _run(0.60))
    accuracy.main(["compare", "paper-seeds,more-seeds", "variant", "--datasets", "Shopper"])
    row = (tmp_path / "compare-variant-vs-paper-seeds+more-seeds.md").read_text()
    assert "| 0,1000 | 0.6000 ± 0.1414 (0.5000, 0.7000) |" in row
    assert "| +10.0, -10.0 | 1 of 2 |" in row
