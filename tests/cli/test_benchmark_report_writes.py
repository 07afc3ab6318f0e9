"""The benchmark scripts write their reports (tables, summaries) atomically
(``torch_geometric_stream.files.atomic_write_text``), never with a plain write that
an interrupt or a full disk cuts short, leaving half a report."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from benchmark_script_helpers import write_run_record, write_shuttle
from test_step_latency import write_result

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import label_timeline  # noqa: E402
import seed_spread  # noqa: E402
import step_latency  # noqa: E402
import stream_length  # noqa: E402

#: Runs whose curve label_timeline reads, on the 12 samples of write_shuttle's stream.
CURVE = {"position": [12], "running_accuracy": [0.5]}


def no_plain_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Path, "write_text", lambda *args, **kwargs: pytest.fail("plain write"))


def test_step_latency_writes_its_summary_and_table_atomically(tmp_path, monkeypatch):
    write_result(tmp_path / "out", "cpu A")
    no_plain_writes(monkeypatch)
    step_latency.main(["--out-dir", str(tmp_path / "out"), "--report-only"])
    assert sorted(path.name for path in tmp_path.iterdir()) == ["out", "out.md",
                                                               "out_summary.json"]


def test_stream_length_writes_its_table_atomically(tmp_path, monkeypatch):
    stream_length.main(["--samples", "30", "--window", "10", "--labeled-size", "5",
                        "--unlabeled-size", "5", "--hidden", "8", "--k", "2",
                        "--out-dir", str(tmp_path)])
    (tmp_path / "stream_length.md").unlink()
    no_plain_writes(monkeypatch)
    stream_length.main(["--report-only", "--out-dir", str(tmp_path)])
    assert (tmp_path / "stream_length.md").exists()


@pytest.mark.parametrize("main, argv", [
    (label_timeline.main, ["--tag", "tag", "--seeds", "0", "--out-dir"]),
    (seed_spread.main, ["--tags", "tag", "--out"]),
])
def test_the_tables_of_accuracy_runs_are_written_atomically(main, argv, tmp_path, monkeypatch):
    write_shuttle(tmp_path / "data")
    write_run_record(tmp_path / "runs" / "tag" / "sledge_Shuttle_0.5_seed0.json",
                     dataset="Shuttle", label_ratio=0.5, n_samples=12, curve=CURVE)
    no_plain_writes(monkeypatch)
    assert main(["--dataset", "Shuttle", "--ratio", "0.5", "--results", str(tmp_path / "runs"),
                 "--root", str(tmp_path / "data"), *argv, str(tmp_path / "tables")]) == 0
    assert [path.name for path in (tmp_path / "tables").iterdir()] == [
        "sledge_Shuttle_0.5_tag.md"]
