"""``--label-delay``: labels that reach the learner N samples late, in ``run``,
``tune`` and ``compare``."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from torch_geometric_stream.cli import main

#: More labels than the default ratio gives 30 samples, so that a delay moves them.
LABELS = ("--label-ratio", "0.3")


def _predictions(path: Path) -> list[tuple[str, str]]:
    with path.open() as handle:
        return [(row["prediction"], row["labeled"]) for row in csv.DictReader(handle)]


def test_a_run_records_its_delay_and_zero_is_the_run_without_one(tmp_path, capsys, quick_run):
    runs = {}
    for name, options in (("plain", []), ("zero", ["--label-delay", "0"]),
                          ("late", ["--label-delay", "4"])):
        out = tmp_path / f"{name}.json"
        assert main(quick_run(out, *LABELS, *options, "--csv", str(tmp_path / f"{name}.csv"))) == 0
        runs[name] = json.loads(out.read_text()), _predictions(tmp_path / f"{name}.csv")
    heading = capsys.readouterr().out.splitlines()
    assert [line for line in heading if "label ratio" in line] == [
        "memory on synthetic-sudden (synthetic), label ratio 0.3, 30 samples",
        "memory on synthetic-sudden (synthetic), label ratio 0.3, 30 samples",
        "memory on synthetic-sudden (synthetic), label ratio 0.3, labels 4 samples late, "
        "30 samples"]
    (plain, plain_rows), (zero, zero_rows), (late, late_rows) = runs.values()
    assert (plain["label_delay"], zero["label_delay"], late["label_delay"]) == (0, 0, 4)
    assert zero_rows == plain_rows and zero["accuracy"] == plain["accuracy"]
    # the same labels are given, later: the predictions after the first label differ
    assert late["n_labels"] == plain["n_labels"] == 9
    assert [labeled for _, labeled in late_rows] == [labeled for _, labeled in plain_rows]
    assert late_rows != plain_rows


@pytest.mark.parametrize("history", ["full", "bounded"])
def test_a_delayed_run_resumes_to_the_uninterrupted_record_with_its_held_labels(
        tmp_path, capsys, monkeypatch, quick_run, interrupt_run_after, history):
    reference, out, checkpoint = tmp_path / "ref.json", tmp_path / "run.json", tmp_path / "c"
    options = [*LABELS, "--label-delay", "6", "--history", history, "--eval-window", "5"]
    assert main(quick_run(reference, *options)) == 0
    saving = quick_run(out, *options, "--checkpoint", str(checkpoint), "--checkpoint-every", "12")
    interrupt_run_after(15)  # the checkpoint at 12 holds the labels of [6, 12)
    assert main(saving) == 130
    monkeypatch.undo()
    assert main([*saving, "--resume", str(checkpoint)]) == 0
    resumed, whole = json.loads(out.read_text()), json.loads(reference.read_text())
    assert resumed["resumed_from"] == 12
    for key in ("accuracy", "confusion_matrix", "n_labels", "windows", "curve"):
        assert resumed[key] == whole[key], key
    # the held labels belong to the delay they were held for
    capsys.readouterr()
    other = [*saving[:saving.index("--label-delay")], "--label-delay", "3",
             *saving[saving.index("--label-delay") + 2:], "--resume", str(checkpoint)]
    assert main(other) == 2
    assert "label_delay" in capsys.readouterr().err
    assert main([*saving, "--no-learn-on-arrival", "--resume", str(checkpoint)]) == 2
    assert "learn_on_arrival" in capsys.readouterr().err


def test_a_row_held_for_its_label_is_a_setting_of_its_own(tmp_path, capsys, quick_run):
    records = {}
    for name, options in (("arrival", []), ("held", ["--no-learn-on-arrival"])):
        out = tmp_path / f"{name}.json"
        assert main(quick_run(out, *LABELS, "--label-delay", "4", *options, "--csv",
                              str(tmp_path / f"{name}.csv"))) == 0
        records[name] = json.loads(out.read_text()), _predictions(tmp_path / f"{name}.csv")
    assert "labels 4 samples late (rows held for them), 30 samples" in capsys.readouterr().out
    assert [record["learn_on_arrival"] for record, _ in records.values()] == [True, False]
    assert records["arrival"][1] != records["held"][1]
    # a run without delay never reads the flag
    out = tmp_path / "plain.json"
    assert main(quick_run(out, "--no-learn-on-arrival")) == 2
    assert ("--no-learn-on-arrival is read with --label-delay N (N >= 1), where labels come "
            "late: add one or drop --no-learn-on-arrival") in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("value, message", [
    ("-1", "argument --label-delay: expected an integer >= 0, got '-1'"),
    ("2.5", "argument --label-delay: expected an integer >= 0, got '2.5'"),
])
def test_a_delay_that_is_no_count_of_samples_is_refused(tmp_path, capsys, quick_run, value,
                                                       message):
    out = tmp_path / "run.json"
    assert main(quick_run(out, "--label-delay", value)) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_compare_keeps_delays_apart_and_pairs_them_seed_by_seed(tmp_path, capsys, quick_run):
    paths = []
    for delay in ("0", "8"):
        out = tmp_path / f"delay{delay}.json"
        assert main(quick_run(out, *LABELS, "--label-delay", delay)) == 0
        paths.append(str(out))
    older = json.loads(Path(paths[0]).read_text())
    del older["label_delay"]  # a record older than the option: every label at once
    (tmp_path / "older.json").write_text(json.dumps({**older, "seed": 1}))
    capsys.readouterr()
    assert main(["compare", *paths, str(tmp_path / "older.json"),
                 "--baseline", "label_delay=0"]) == 0
    lines = capsys.readouterr().out.splitlines()
    rows = {line.split("  ")[0]: line.split() for line in lines[2:]}
    plain, late = "label_delay=0", "label_delay=8"  # learn_on_arrival: unset at delay 0
    assert set(rows) == {plain, late}
    assert rows[plain][1] == "2"  # the older record is the delay-0 setting's seed 1
    assert rows[plain][-1] == "baseline" and rows[late][-1] == "0/1"


def test_tune_runs_every_point_with_the_delay_and_names_its_files_by_it(tmp_path, capsys):
    out_dir = tmp_path / "tune"
    assert main(["tune", "--dataset", "synthetic", "--model", "memory", "--limit", "30",
                 "--label-ratio", "0.3", "--label-delay", "5", "--grid", "tau=0.5,1",
                 "--out-dir", str(out_dir)]) == 0
    output = capsys.readouterr().out
    assert "tune memory on synthetic, label ratio 0.3, labels 5 samples late, seeds 0" in output
    assert "--label-delay 5" in output  # the command that repeats the best point
    runs = sorted(out_dir.glob("memory_synthetic_0.3_label-delay=5_tau=*_seed0.json"))
    assert len(runs) == 2
    assert [json.loads(path.read_text())["label_delay"] for path in runs] == [5, 5]
    # a JSON of another delay under the search's name is refused, not ranked
    record = json.loads(runs[0].read_text())
    runs[0].write_text(json.dumps({**record, "label_delay": 0, "learn_on_arrival": None}))
    capsys.readouterr()
    assert main(["tune", "--dataset", "synthetic", "--model", "memory", "--limit", "30",
                 "--label-ratio", "0.3", "--label-delay", "5", "--grid", "tau=0.5,1",
                 "--out-dir", str(out_dir)]) == 2
    assert (f"{runs[0].name} ran with label_delay=0, learn_on_arrival=None, this search asks "
            f"for label_delay=5, learn_on_arrival=True") in capsys.readouterr().err
    # rows held for their labels get runs of their own
    assert main(["tune", "--dataset", "synthetic", "--model", "memory", "--limit", "30",
                 "--label-ratio", "0.3", "--label-delay", "5", "--no-learn-on-arrival",
                 "--grid", "tau=0.5", "--out-dir", str(out_dir)]) == 0
    held, = out_dir.glob("memory_synthetic_0.3_label-delay=5-held_tau=0.5_seed0.json")
    assert json.loads(held.read_text())["learn_on_arrival"] is False


@pytest.mark.parametrize("delay, warned", [(29, False), (30, True), (45, True)])
def test_a_delay_as_long_as_the_stream_is_warned_of(tmp_path, capsys, quick_run, delay,
                                                    warned):
    # before: the run went through without a word, and learned no label
    out = tmp_path / "late.json"
    assert main(quick_run(out, *LABELS, "--label-delay", str(delay))) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "warning" in line]
    assert warnings == ([f"warning: --label-delay {delay} is at least the stream's length "
                         f"(30 samples): every label comes after the stream's end, so the run "
                         f"learns none (give a delay below the stream's length)"]
                        if warned else [])


def test_a_streamed_run_is_warned_of_a_delay_as_long_as_its_limit_only(tmp_path, capsys):
    stream = tmp_path / "s.csv"
    stream.write_text("a,label\n" + "".join(f"{row},{row % 2}\n" for row in range(40)))
    options = ["run", "--dataset", str(stream), "--stream", "--classes", "0,1",
               "--label-mask", "bernoulli", "--scaling", "online", "--model", "memory",
               "--quiet", "--label-delay", "20"]
    assert main([*options, "--limit", "20"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "warning: --label-delay 20 is at least the stream's length (at most 20 samples: "
        "--limit): every label comes after the stream's end, so the run learns none (give a "
        "delay below the stream's length)"]
    assert main(options) == 0  # a stream read as it comes has no known end
    assert "warning" not in capsys.readouterr().err
