"""A result file that is JSON but lacks an entry its script reads (an older or edited
result) is one usage line naming the file and the entry, never a ``KeyError``
traceback, in every benchmark script that reads result files back."""
from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from benchmark_script_helpers import usage_error, write_shuttle

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import machine  # noqa: E402

#: A run record of accuracy.py without ``n_samples`` (older runs did not record it).
RUN_WITHOUT_SAMPLES = {"dataset": "Shuttle", "model": "sledge", "label_ratio": 0.5, "seed": 0,
                       "accuracy": 0.5, "config": {}, "label_mask": "paper",
                       "curve": {"position": [12], "running_accuracy": [0.5]}}

#: (script, the result file under tmp_path, what it holds, the arguments after
#: the script's name (``{tmp}`` is tmp_path), the entry missing).
CASES = [
    ("step_latency", "out/step_latency_ours-full_gsad_d128_M250_t1.json",
     {"model": "ours-full", "config": "gsad", "M": 250, "threads": 1, "d": 128,
      "median_ms": 2.0, "p95_ms": 3.0, "steps": 5, "flops": {}},
     ["--out-dir", "{tmp}/out", "--report-only"], "flops.total"),
    ("propagation", "out/propagation_N100_k1_t1_h256_l2.json", {},
     ["--out-dir", "{tmp}/out", "--report-only"], "hidden"),
    ("stream_length", "out/stream_length_light_N30_w10_t1_seed0.json", {},
     ["--out-dir", "{tmp}/out", "--report-only"], "rows"),
    ("graph_diagnostics", "out/sledge_synthetic-none_0.01_seed0_limit120.json",
     {"snapshots": [{"position": 60}, {}], "windows": []},
     ["--dataset", "synthetic", "--limit", "120", "--out-dir", "{tmp}/out"],
     "snapshots[1].position"),
    ("peers", "peers/a.json", {}, ["--render-only"], "dataset"),
    ("reference_accuracy", "reference/a.json", {}, ["render"], "dataset"),
    ("seed_spread", "runs/tag/sledge_Shuttle_0.5_seed0.json", RUN_WITHOUT_SAMPLES,
     ["--tags", "tag", "--dataset", "Shuttle", "--ratio", "0.5", "--results", "{tmp}/runs",
      "--root", "{tmp}/data", "--out", "{tmp}/tables"], "n_samples"),
    ("label_timeline", "runs/tag/sledge_Shuttle_0.5_seed0.json", RUN_WITHOUT_SAMPLES,
     ["--tag", "tag", "--dataset", "Shuttle", "--ratio", "0.5", "--seeds", "0", "--results",
      "{tmp}/runs", "--root", "{tmp}/data", "--out-dir", "{tmp}/tables"], "n_samples"),
]


@pytest.mark.parametrize("script, name, record, argv, entry", CASES)
def test_a_result_lacking_an_entry_read_is_one_usage_line(script, name, record, argv, entry,
                                                          tmp_path, monkeypatch, capsys):
    # (it was a KeyError traceback)
    module = importlib.import_module(script)
    monkeypatch.setattr(module, "RESULTS", tmp_path / "peers", raising=False)
    monkeypatch.setattr(module, "OUT", tmp_path / "reference", raising=False)
    monkeypatch.setattr(module, "LOCKSTEP", tmp_path / "lockstep", raising=False)
    write_shuttle(tmp_path / "data")
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record))
    error = usage_error(module.main, [arg.format(tmp=tmp_path) for arg in argv], capsys)
    assert error.splitlines()[-1].endswith(
        f"error: {path}: lacks the entry {entry} (an older or edited result?); delete it to "
        "rerun its run")
    assert not (tmp_path / "tables").exists()


def read(tmp_path: Path, value: Any) -> Any:
    path = tmp_path / "result.json"
    path.write_text(json.dumps(value))
    return machine.read_json_object(path)


def test_a_record_reads_as_the_json_it_holds(tmp_path):
    value = {"a": 1, "rows": [{"b": [2, {"c": None}]}], "d": {}}
    record = read(tmp_path, value)
    assert record == value and json.loads(json.dumps(record)) == value
    assert record.get("missing") is None and "missing" not in record
    with pytest.raises(machine.UsageError, match=r"lacks the entry rows\[0\]\.b\[1\]\.e "):
        record["rows"][0]["b"][1]["e"]


def test_a_record_with_an_entry_changed_is_still_one_of_its_file(tmp_path):
    record = read(tmp_path, {"limit": 30, "config": {"lr": 0.1}})
    changed = record.with_entries(limit=None)
    assert changed == {"limit": None, "config": {"lr": 0.1}} and record["limit"] == 30
    with pytest.raises(machine.UsageError, match=r"result\.json: lacks the entry model "):
        changed["model"]


def test_a_heading_names_each_recorded_value_once_in_first_seen_order():
    results = [{"cpu": "B"}, {"cpu": "A"}, {}, {"cpu": "B"}]
    assert machine.recorded(results, "cpu") == "B; A; unknown"
