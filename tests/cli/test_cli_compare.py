"""``compare``: run records side by side, one row per setting."""
import csv
import json
from pathlib import Path

import pytest

from torch_geometric_stream.cli import compare_command, main
from torch_geometric_stream.cli.compare_command import SETTING_KEYS
from torch_geometric_stream.cli.configs import DEFAULT_CONFIG
from torch_geometric_stream.cli.errors import UsageError
from torch_geometric_stream.cli.models import MODEL_NAMES, config_keys
from torch_geometric_stream.cli.record_checks import SHOWN_CHARACTERS
from torch_geometric_stream.cli.run import OLDER_RECORDS, recorded_config
from torch_geometric_stream.cli.record_origin import ORIGINS, host_name, origin

ROOT = Path(__file__).resolve().parents[2]


def record(seed, accuracy, **config):
    """A minimal ``run`` record of SLeDGe on Shuttle at 1 %."""
    return {"dataset": "Shuttle", "model": "sledge", "label_ratio": 0.01, "label_mask": "paper",
            "limit": None, "preset": "paper", "seed": seed, "accuracy": accuracy,
            "accuracy_last_20": accuracy + 0.1, "balanced_accuracy": accuracy / 2,
            "kappa_m": 0.5, "ms_per_sample_median": 2.0 + seed,
            "curve": {"position": [1, 2], "running_accuracy": [accuracy, accuracy + 0.1]},
            "config": {**DEFAULT_CONFIG, **config}}


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_text(json.dumps(content))
    return str(path)


def test_runs_of_a_setting_are_one_row_with_mean_and_std(tmp_path, capsys):
    paths = [write(tmp_path, "a0.json", record(0, 0.80)),
             write(tmp_path, "a1.json", record(1, 0.90)),
             write(tmp_path, "b0.json", record(0, 0.95, lr=5e-3))]
    table, plot = tmp_path / "table.csv", tmp_path / "curves.png"
    assert main(["compare", *paths, "--csv", str(table), "--plot", str(plot)]) == 0
    lines = capsys.readouterr().out.splitlines()
    # the model, stream and label ratio they share heads the table; the rows name the rest
    assert lines[0] == "sledge on Shuttle at 0.01"
    assert lines[1].split() == ["setting", "seeds", "accuracy", "last", "20", "%", "balanced",
                                "kappa_m", "ms/sample"]
    # best first; std over seeds with ddof 1: |0.80 - 0.90| / sqrt(2)
    assert lines[2].split() == ["lr=0.005", "1", "0.9500", "1.0500", "0.4750", "0.5000", "2.00"]
    assert lines[3].split() == ["lr=0.001", "2", "0.8500", "±", "0.0707", "0.9500", "0.4250",
                                "0.5000", "2.50"]
    assert len({len(line) for line in lines[1:]}) == 1  # aligned: every cell padded
    rows = list(csv.DictReader(table.open()))
    assert [(row["setting"], row["seeds"]) for row in rows] == [
        ("sledge on Shuttle at 0.01 (lr=0.005)", "0"),
        ("sledge on Shuttle at 0.01 (lr=0.001)", "0 1")]
    assert [float(row["accuracy"]) for row in rows] == pytest.approx([0.95, 0.85])
    assert rows[0]["accuracy_std"] == "" and float(rows[1]["accuracy_std"]) == pytest.approx(
        0.1 / 2 ** 0.5)
    assert json.loads(rows[1]["config"])["lr"] == 1e-3
    assert plot.stat().st_size > 0


def test_a_plot_draws_a_settings_mean_curve_named_by_its_seeds(tmp_path, monkeypatch):
    """One curve per setting, the mean over its seeds (named so where they are
    several); seeds whose curves have other positions are a curve each."""
    drawn = {}
    monkeypatch.setattr(compare_command, "plot_curves",
                        lambda curves, path, title: drawn.update(curves, title=title))
    shifted = {**record(1, 0.6, lr=1e-2), "curve": {"position": [2, 4],
                                                     "running_accuracy": [0.5, 0.6]}}
    paths = [write(tmp_path, "a0.json", record(0, 0.80)),
             write(tmp_path, "a1.json", record(1, 0.90)),
             write(tmp_path, "b0.json", record(0, 0.95, lr=5e-3)),
             write(tmp_path, "c0.json", record(0, 0.7, lr=1e-2)),
             write(tmp_path, "c1.json", shifted)]
    assert main(["compare", *paths, "--plot", str(tmp_path / "curves.png")]) == 0
    title = drawn.pop("title")
    assert title == "sledge on Shuttle at 0.01"
    assert {name: (positions, list(accuracy)) for name, (positions, accuracy)
            in drawn.items()} == {
        "lr=0.005": ([1, 2], pytest.approx([0.95, 1.05])),
        "lr=0.001, mean of 2 seeds": ([1, 2], pytest.approx([0.85, 0.95])),
        "lr=0.01, seed 0": ([1, 2], [0.7, pytest.approx(0.8)]),
        "lr=0.01, seed 1": ([2, 4], [0.5, 0.6])}


def test_a_record_older_than_an_option_is_the_same_setting_as_a_newer_one(tmp_path, capsys):
    old = record(0, 0.7)
    del old["config"]["feature_range"], old["config"]["robust_clip"], old["preset"]
    paths = [write(tmp_path, "old.json", old), write(tmp_path, "new.json", record(1, 0.9))]
    assert main(["compare", *paths]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[1].split()[:7] == ["sledge", "on", "Shuttle", "at",
                                                        "0.01", "2", "0.8000"]


def test_a_mean_over_a_bounded_records_approximate_tail_is_marked(tmp_path, capsys):
    """A bounded record's last 20 % over 1999 of 10,000 samples (the tail is 2000) is
    approximate, and so is every mean it enters; one over the exact span is not."""
    spans = {"accuracy_last_20": 2000, "accuracy_last_10": 1000, "accuracy_last_5": 500}
    exact = {**record(0, 0.80), "n_samples": 10_000, "tail_samples": spans}
    inexact = {**record(1, 0.90), "n_samples": 10_000,
               "tail_samples": {**spans, "accuracy_last_20": 1999}}
    paths = [write(tmp_path, "full.json", record(0, 0.6, lr=5e-3)),
             write(tmp_path, "exact.json", exact), write(tmp_path, "inexact.json", inexact)]
    assert main(["compare", *paths]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].split()[:5] == ["lr=0.001", "2", "0.8500", "±", "0.0707"]
    assert lines[2].split()[5:7] == ["0.9500~", "0.4250"]
    assert lines[3].split()[:4] == ["lr=0.005", "1", "0.6000", "0.7000"]
    assert lines[4].startswith("~ from --history bounded: over the last samples that the "
                               "record's tail_samples gives") and len(lines) == 5
    assert main(["compare", paths[0], paths[1]]) == 0
    assert "~" not in capsys.readouterr().out


def test_no_note_when_only_a_tail_compare_does_not_show_is_approximate(tmp_path, capsys):
    """compare shows the last 20 % alone: a bounded record whose last 10 % and 5 % are
    approximate but whose last 20 % is exact gets no ``~`` and no line about it."""
    spans = {"accuracy_last_20": 2000, "accuracy_last_10": 999, "accuracy_last_5": 499}
    bounded = {**record(0, 0.80), "n_samples": 10_000, "tail_samples": spans}
    assert main(["compare", write(tmp_path, "bounded.json", bounded)]) == 0
    out = capsys.readouterr().out
    assert "~" not in out and len(out.splitlines()) == 2


def test_synthetic_streams_of_two_lengths_are_two_settings(tmp_path, capsys):
    short, long = record(0, 0.7), record(0, 0.8)
    short.update(dataset="synthetic-sudden", synthetic_samples=9_999)
    long.update(dataset="synthetic-sudden", synthetic_samples=10_000)
    paths = [write(tmp_path, "short.json", short), write(tmp_path, "long.json", long)]
    assert main(["compare", *paths]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[2:4]] == ["synthetic_samples=10000",
                                                         "synthetic_samples=9999"]


def test_two_files_of_one_setting_and_seed_are_refused(tmp_path, capsys):
    paths = [write(tmp_path, "a.json", record(0, 0.8)),
             write(tmp_path, "b.json", record(0, 0.9))]
    assert main(["compare", *paths]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {paths[0]} and {paths[1]} are runs of one setting and seed 0: give one of "
        f"them (--by cannot tell them apart: they share folder, commit, host, torch and "
        f"package)")


def test_a_file_reached_twice_counts_once(tmp_path, capsys):
    path = write(tmp_path, "a.json", record(0, 0.8))
    write(tmp_path, "b.json", record(1, 0.9))
    (tmp_path / "sub").mkdir()
    assert main(["compare", path, str(tmp_path), str(tmp_path / "." / "a.json"),
                 str(tmp_path / "sub" / ".." / "a.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[1].split()[5:7] == ["2", "0.8500"]  # seeds 0 and 1


def test_rows_go_by_label_ratio_before_accuracy_and_list_their_seeds_in_order(tmp_path,
                                                                               capsys):
    few = {**record(0, 0.5), "label_ratio": 0.001}
    paths = [write(tmp_path, "b1.json", record(1, 0.9)), write(tmp_path, "b0.json", record(0, 0.8)),
             write(tmp_path, "a0.json", few)]
    table = tmp_path / "table.csv"
    assert main(["compare", *paths, "--csv", str(table)]) == 0
    rows = list(csv.DictReader(table.open()))
    assert [(row["label_ratio"], row["seeds"]) for row in rows] == [("0.001", "0"),
                                                                    ("0.01", "0 1")]


@pytest.mark.parametrize("content, message", [
    ("{", "cannot read a run record"),
    ('{"accuracy": 0.5}', "not a record of python -m torch_geometric_stream run (it lacks "
                          "dataset, model, label_ratio, seed, config)"),
    ("[1, 2]", "not a record of python -m torch_geometric_stream run"),
])
def test_what_is_not_a_run_record_is_named(tmp_path, capsys, content, message):
    path = tmp_path / "x.json"
    path.write_text(content)
    assert main(["compare", str(path)]) == 2
    err = capsys.readouterr().err
    assert message in err and str(path) in err and "Traceback" not in err


def test_a_missing_file_and_a_bad_plot_name_are_usage_errors(tmp_path, capsys):
    assert main(["compare", str(tmp_path / "absent.json")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {tmp_path / 'absent.json'}: no such file or folder")
    path = write(tmp_path, "a.json", record(0, 0.8))
    assert main(["compare", path, "--plot", str(tmp_path / "curves.xyz")]) == 2
    assert capsys.readouterr().err.startswith("error: --plot:")


def test_a_plot_of_records_without_curves_is_refused(tmp_path, capsys):
    old = record(0, 0.8)
    del old["curve"]
    assert main(["compare", write(tmp_path, "a.json", old), "--plot",
                 str(tmp_path / "curves.png")]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: --plot: none of these records holds a running-accuracy curve (the entry curve)")
    assert not (tmp_path / "curves.png").exists()


def test_a_plot_names_the_settings_it_leaves_out_for_want_of_a_curve(tmp_path, capsys):
    old = record(0, 0.8, lr=5e-3)
    del old["curve"]
    plot = tmp_path / "curves.png"
    assert main(["compare", write(tmp_path, "new.json", record(0, 0.9)),
                 write(tmp_path, "old.json", old), "--plot", str(plot)]) == 0
    assert capsys.readouterr().err.strip() == (
        "--plot: sledge on Shuttle at 0.01 (lr=0.005) is left out: its records hold no "
        "running-accuracy curve")
    assert plot.stat().st_size > 0


def test_a_folder_gives_the_run_records_among_its_json_files(tmp_path, capsys):
    folder = tmp_path / "grid"
    folder.mkdir()
    write(folder, "r0.json", record(0, 0.8))
    write(folder, "r1.json", record(1, 0.9))
    write(folder, "best_sledge.json", {"lr": 1e-3})  # tune's best configuration: no record
    assert main(["compare", str(folder)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 and lines[1].split()[5:7] == ["2", "0.8500"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["compare", str(empty)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {empty}: the folder holds no run record (*.json written by run)")
    # why its *.json are none: before, a broken record went unnamed
    (empty / "a.json").write_text('{"accuracy": ')
    assert main(["compare", str(empty)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {empty}: the folder holds no run record (*.json written by run); "
        f"{empty / 'a.json'}: cannot read a run record (Expecting value: line 1 column 14 "
        f"(char 13))")
    write(empty, "best_sledge.json", {"lr": 1e-3})
    assert main(["compare", str(empty)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {empty}: the folder holds no run record (*.json written by run); "
        f"{empty / 'a.json'}: cannot read a run record (Expecting value: line 1 column 14 "
        f"(char 13)) (and 1 other *.json, none a run record)")


def test_a_row_names_only_what_sets_it_apart_from_its_own_model_stream_and_ratio(
        tmp_path, capsys):
    memory = {**record(0, 0.6), "model": "memory"}  # reads no k, fixes lam itself
    paths = [write(tmp_path, "k3.json", record(0, 0.8, k=3)),
             write(tmp_path, "k5.json", record(0, 0.9, k=5)),
             write(tmp_path, "memory.json", memory),
             write(tmp_path, "tlp.json", {**record(0, 0.5), "model": "tlp", "config": {
                 "memory_size": 1000, "scaling": "online", "feature_transform": "none",
                 "sigma": None, "knn": None}})]
    table = tmp_path / "table.csv"
    assert main(["compare", *paths, "--csv", str(table)]) == 0
    names = [line.split("  ")[0] for line in capsys.readouterr().out.splitlines()[1:]]
    assert names == ["sledge on Shuttle at 0.01 (k=5)", "sledge on Shuttle at 0.01 (k=3)",
                     "memory on Shuttle at 0.01", "tlp on Shuttle at 0.01"]
    configs = {row["setting"]: json.loads(row["config"]) for row in csv.DictReader(table.open())}
    # each setting's configuration holds the entries its model reads, and only those
    assert "k" not in configs["memory on Shuttle at 0.01"]
    assert "lam" not in configs["memory on Shuttle at 0.01"]
    assert set(configs["tlp on Shuttle at 0.01"]) == {
        "memory_size", "scaling", "feature_transform", "feature_range", "robust_quantile",
        "robust_tolerance", "robust_reservoir", "robust_window", "robust_clip", "sigma",
        "knn"}


@pytest.mark.parametrize("entry, value, message", [
    ("accuracy", float("nan"), "the entry accuracy must be a finite number, got nan"),
    ("accuracy", "0.8", "the entry accuracy must be a finite number, got '0.8'"),
    ("seed", 1.5, "the entry seed must be an integer, got 1.5"),
    ("seed", True, "the entry seed must be an integer, got True"),  # JSON true, no seed
    ("label_ratio", None, "the entry label_ratio must be a finite number, got None"),
    # before, each of these failed with a traceback (averaged, hashed or read as a dict)
    ("balanced_accuracy", "q", "the entry balanced_accuracy must be a finite number, got 'q'"),
    ("kappa_m", "0.5", "the entry kappa_m must be a finite number, got '0.5'"),
    ("accuracy_last_20", [0.9], "the entry accuracy_last_20 must be a finite number, got [0.9]"),
    ("ms_per_sample_median", float("inf"),
     "the entry ms_per_sample_median must be a finite number, got inf"),
    ("config", [], "the entry config must be an object, got []"),
    ("model", ["sledge"], "the entry model must be a single value (no list or object), got "
                          "['sledge']"),
    ("label_delay", {}, "the entry label_delay must be a single value (no list or object), "
                        "got {}"),
    ("tail_samples", 5, "the entry tail_samples must be an object of integers, got 5"),
    ("tail_samples", {"accuracy_last_20": "2"},
     "the entry tail_samples must be an object of integers, got {'accuracy_last_20': '2'}"),
])
def test_a_record_with_a_value_no_run_writes_is_refused_in_a_folder_too(
        tmp_path, capsys, entry, value, message):
    folder = tmp_path / "runs"
    folder.mkdir()
    write(folder, "good.json", record(0, 0.8))
    bad = write(folder, "bad.json", {**record(1, 0.9), entry: value})
    for given in (bad, str(folder)):
        assert main(["compare", given]) == 2
        assert capsys.readouterr().err.strip() == f"error: {bad}: {message}"


def test_a_bounded_record_whose_tail_samples_are_set_against_no_count_is_refused(
        tmp_path, capsys):
    """Its tails are approximate where ``tail_samples`` differ from the tail of
    ``n_samples``: before, a string ``n_samples`` failed there with a traceback."""
    bounded = {**record(0, 0.8), "n_samples": "10000",
               "tail_samples": {"accuracy_last_20": 1999}}
    path = write(tmp_path, "bounded.json", bounded)
    assert main(["compare", path]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {path}: the entry n_samples must be an integer >= 1, got '10000'")


@pytest.mark.parametrize("samples, spans, entry, kind", [
    (-5, {"accuracy_last_20": 1999}, "n_samples", "an integer >= 1"),
    (0, {"accuracy_last_20": 1999}, "n_samples", "an integer >= 1"),
    (10_000, {"accuracy_last_20": 10_001}, "tail_samples",
     "an object of integers in [1, n_samples 10000]"),
    (10_000, {"accuracy_last_20": 2000, "accuracy_last_5": 0}, "tail_samples",
     "an object of integers in [1, n_samples 10000]"),
    (10_000, {"accuracy_last_20": -2000}, "tail_samples",
     "an object of integers in [1, n_samples 10000]"),
])
def test_a_bounded_record_whose_tail_samples_no_stream_has_is_refused(
        tmp_path, capsys, samples, spans, entry, kind):
    """A tail spans 1 to ``n_samples`` of a stream's last samples: before, a count
    below 1 or a span outside made the table mark the tail approximate ("~")."""
    bounded = {**record(0, 0.8), "n_samples": samples, "tail_samples": spans}
    path = write(tmp_path, "bounded.json", bounded)
    assert main(["compare", path]) == 2
    shown = samples if entry == "n_samples" else spans
    assert capsys.readouterr().err.strip() == (
        f"error: {path}: the entry {entry} must be {kind}, got {shown!r}")


@pytest.mark.parametrize("curve", [
    "zz", [0.5, 0.6], {"position": [1, 2]},
    {"position": [1, 2], "running_accuracy": [0.5]},
    {"position": [1, 2], "running_accuracy": [0.5, "0.6"]},
    {"position": [1, 2], "running_accuracy": [0.5, float("nan")]},
])
def test_a_plot_refuses_a_curve_no_run_writes_and_only_a_plot_reads_it(
        tmp_path, capsys, curve):
    """Before, ``--plot`` failed on each with a traceback (or drew NaN)."""
    paths = [write(tmp_path, "good.json", record(0, 0.8)),
             write(tmp_path, "bad.json", {**record(1, 0.9), "curve": curve})]
    plot = tmp_path / "curves.png"
    assert main(["compare", *paths, "--plot", str(plot)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.strip() == (
        f"error: {paths[1]}: the entry curve must be an object of lists position and "
        f"running_accuracy of finite numbers, of one length, got {curve!r}")
    assert not plot.exists()
    assert main(["compare", *paths]) == 0  # the table reads no curve


def test_a_refused_value_is_shown_cut_short(tmp_path, capsys):
    curve = {"position": list(range(200)), "running_accuracy": "z"}
    path = write(tmp_path, "bad.json", {**record(0, 0.9), "curve": curve})
    assert main(["compare", path, "--plot", str(tmp_path / "curves.png")]) == 2
    assert capsys.readouterr().err.strip().endswith(
        f"got {repr(curve)[:SHOWN_CHARACTERS]}...")


def test_the_partial_record_of_an_interrupted_run_is_refused_in_a_folder_too(
        tmp_path, capsys):
    """Before: ``compare runs/*`` took run's ``FILE.json.partial`` (its metrics over
    the samples done before Ctrl-C) as a finished run, averaged with the others."""
    folder = tmp_path / "runs"
    folder.mkdir()
    write(folder, "g_seed0.json", record(0, 0.8))
    partial = write(folder, "g_seed1.json.partial", {**record(1, 0.9), "interrupted_at": 480})
    renamed = write(folder, "g_seed2.json", {**record(2, 0.7), "interrupted_at": 65})
    message = ("the record of a run interrupted after sample {}, not a finished run: finish "
               "it (rerun it, with --resume where it saved a checkpoint) or leave it out")
    assert main(["compare", str(folder / "g_seed0.json"), partial]) == 2
    assert capsys.readouterr().err.strip() == f"error: {partial}: {message.format(480)}"
    assert main(["compare", str(folder)]) == 2  # a .json one is refused in a folder too
    assert capsys.readouterr().err.strip() == f"error: {renamed}: {message.format(65)}"


def test_a_baseline_gives_each_setting_its_paired_difference_and_seeds_higher(
        tmp_path, capsys):
    """Against lr=0.001 (0.80, 0.90, 0.70 on seeds 0, 1, 2): lr=0.005 differs by
    +0.02, -0.05, +0.05 on the three (its seed 3 has no pair), lr=0.01 by 0 and
    +0.05 on seeds 0 and 1 (a tie is not higher); balanced accuracy is half the
    accuracy in these records, so are its differences. An approximate tail of a
    bounded record marks the last 20 %, never a difference."""
    bounded = {**record(2, 0.70), "n_samples": 10_000,
               "tail_samples": {"accuracy_last_20": 1999, "accuracy_last_10": 1000,
                                "accuracy_last_5": 500}}
    runs = {"base0": record(0, 0.80), "base1": record(1, 0.90), "base2": bounded,
            **{f"fast{seed}": record(seed, accuracy, lr=5e-3)
               for seed, accuracy in ((0, 0.82), (1, 0.85), (2, 0.75), (3, 0.99))},
            "faster0": record(0, 0.80, lr=1e-2), "faster1": record(1, 0.95, lr=1e-2)}
    paths = [write(tmp_path, f"{name}.json", content) for name, content in runs.items()]
    table = tmp_path / "table.csv"
    assert main(["compare", *paths, "--baseline", "lr=1e-3", "--csv", str(table)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split()[-6:] == ["accuracy", "diff", "balanced", "diff", "seeds", "higher"]
    assert lines[2].split()[0] == "lr=0.01" and lines[2].split()[-5:] == [
        "+0.0250", "+0.0125", "1/2,", "1", "tied"]
    assert lines[3].split()[0] == "lr=0.005" and lines[3].split()[-3:] == [
        "+0.0067", "+0.0033", "2/3"]
    assert lines[4].split()[0] == "lr=0.001" and lines[4].split()[-3:] == [
        "0.5000", "3.00", "baseline"]
    assert "0.9000~" in lines[4] and lines[5].startswith("~ from --history bounded")
    assert len(lines) == 6 and len({len(line) for line in lines[1:4]}) == 1
    rows = {row["setting"].rpartition("(")[2][:-1]: row for row in csv.DictReader(table.open())}
    assert list(rows["lr=0.005"])[-7:] == ["baseline", "accuracy_diff",
                                           "balanced_accuracy_diff", "seeds_higher",
                                           "seeds_tied", "seeds_paired", "config"]
    assert rows["lr=0.005"]["baseline"] == "sledge on Shuttle at 0.01 (lr=0.001)"
    assert float(rows["lr=0.005"]["accuracy_diff"]) == pytest.approx(0.02 / 3)
    assert float(rows["lr=0.005"]["balanced_accuracy_diff"]) == pytest.approx(0.01 / 3)
    assert float(rows["lr=0.01"]["accuracy_diff"]) == pytest.approx(0.025)
    assert [rows["lr=0.01"][f"seeds_{key}"] for key in ("higher", "tied", "paired")] == [
        "1", "1", "2"]
    assert [rows["lr=0.001"][column] for column in list(rows["lr=0.001"])[-7:-1]] == [
        "baseline", "", "", "", "", ""]
    # the printed value names the setting as well, and without --baseline no column is added
    assert main(["compare", *paths, "--baseline", "lr=0.001"]) == 0
    assert capsys.readouterr().out.splitlines() == lines
    assert main(["compare", *paths, "--csv", str(table)]) == 0
    assert next(csv.reader(table.open())) == [
        "setting", "dataset", "label_ratio", "seeds", "accuracy", "accuracy_std",
        "accuracy_last_20", "balanced_accuracy", "kappa_m", "ms_per_sample_median", "config"]
    assert "diff" not in capsys.readouterr().out


def test_a_metric_some_runs_lack_is_averaged_and_paired_over_the_runs_that_have_it(
        tmp_path, capsys):
    """A record older than the balanced accuracy lacks it and an undefined kappa is
    null: the mean takes the other runs, the paired difference the seeds where
    both settings have it (before, a null was averaged, or a baseline without it
    paired, and compare failed)."""
    older = {key: value for key, value in record(1, 0.9).items() if key != "balanced_accuracy"}
    paths = [write(tmp_path, "base0.json", record(0, 0.8)),
             write(tmp_path, "base1.json", older),
             write(tmp_path, "fast0.json", {**record(0, 0.82, lr=5e-3), "kappa_m": None}),
             write(tmp_path, "fast1.json", {**record(1, 0.85, lr=5e-3), "kappa_m": 0.25})]
    table = tmp_path / "table.csv"
    assert main(["compare", *paths, "--baseline", "lr=1e-3", "--csv", str(table)]) == 0
    rows = {row["setting"].rpartition("(")[2][:-1]: row for row in csv.DictReader(table.open())}
    assert float(rows["lr=0.001"]["balanced_accuracy"]) == pytest.approx(0.4)
    assert float(rows["lr=0.005"]["kappa_m"]) == pytest.approx(0.25)
    assert float(rows["lr=0.005"]["accuracy_diff"]) == pytest.approx((0.02 - 0.05) / 2)
    assert float(rows["lr=0.005"]["balanced_accuracy_diff"]) == pytest.approx(0.01)
    assert rows["lr=0.005"]["seeds_paired"] == "2"


def test_settings_without_a_baseline_or_a_common_seed_are_blank_with_a_note(
        tmp_path, capsys):
    """Paired are only settings of one stream, label ratio, label mask, limit and
    synthetic length: another mask or stream has no baseline here, and its note gives
    these entries of its own (before: not, so a row whose name leaves out its limit
    gave no clue why it had no baseline)."""
    paths = [write(tmp_path, "base.json", record(0, 0.8)),
             write(tmp_path, "other_seed.json", record(1, 0.9, lr=5e-3)),
             write(tmp_path, "mask.json", {**record(0, 0.7, lr=5e-3), "label_mask": "bernoulli"}),
             write(tmp_path, "gsad.json", {**record(0, 0.6, lr=5e-3), "dataset": "GSAD"})]
    table = tmp_path / "table.csv"
    assert main(["compare", *paths, "--baseline", "lr=0.001", "--csv", str(table)]) == 0
    lines = capsys.readouterr().out.splitlines()
    cells = {line.split("  ")[0]: line.split() for line in lines[1:5]}
    assert cells["sledge on Shuttle at 0.01 (label_mask=paper, lr=0.001)"][-1] == "baseline"
    # ms/sample (2 + the seed in these records) ends each other line: its paired cells are blank
    assert {name: line[-1] for name, line in cells.items() if line[-1] != "baseline"} == {
        "sledge on GSAD at 0.01": "2.00",
        "sledge on Shuttle at 0.01 (label_mask=paper, lr=0.005)": "3.00",
        "sledge on Shuttle at 0.01 (label_mask=bernoulli, lr=0.005)": "2.00"}
    assert lines[5:] == [
        "sledge on GSAD at 0.01: no paired difference: no lr=0.001 among the settings of its "
        "model, stream, label ratio, label mask, limit and synthetic length (model=sledge, "
        "dataset=GSAD, label_ratio=0.01, label_mask=paper, limit=None, "
        "synthetic_samples=None)",
        "sledge on Shuttle at 0.01 (label_mask=paper, lr=0.005): no paired difference: no "
        "seed in common with its baseline sledge on Shuttle at 0.01 (label_mask=paper, "
        "lr=0.001)",
        "sledge on Shuttle at 0.01 (label_mask=bernoulli, lr=0.005): no paired difference: "
        "no lr=0.001 among the settings of its model, stream, label ratio, label mask, "
        "limit and synthetic length (model=sledge, dataset=Shuttle, label_ratio=0.01, "
        "label_mask=bernoulli, limit=None, synthetic_samples=None)"]
    blank = [row for row in csv.DictReader(table.open()) if row["baseline"] != "baseline"]
    assert len(blank) == 3 and all(row[column] == "" for row in blank for column in (
        "baseline", "accuracy_diff", "balanced_accuracy_diff", "seeds_higher", "seeds_tied",
        "seeds_paired"))


@pytest.mark.parametrize("given, entry, values", [
    (["robust_window=None"], "robust_window", (None, 100)),
    (["robust-window=100"], "robust_window", (100, None)),
    (["feature_range=-1:1"], "feature_range", ([-1.0, 1.0], [0.0, 1.0])),
    (["feature_range=0.0:1.0"], "feature_range", ([0.0, 1.0], [-1.0, 1.0])),
    (["scaling=robust"], "scaling", ("robust", "online")),
    (["robust_clip=True"], "robust_clip", (True, False)),
    # before: refused, 'no setting has robust_clip=true; its values here: False, True'
    (["robust_clip=true"], "robust_clip", (True, False)),
    (["supervise-graph=FALSE"], "supervise_graph", (False, True)),
])
def test_a_baseline_value_is_read_as_the_row_names_print_it(tmp_path, capsys, given, entry,
                                                            values):
    baseline, other = values
    paths = [write(tmp_path, "base.json", record(0, 0.8, **{entry: baseline})),
             write(tmp_path, "other.json", record(0, 0.9, **{entry: other}))]
    assert main(["compare", *paths, *(f"--baseline={spec}" for spec in given)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2].split()[-3:] == ["+0.1000", "+0.0500", "1/1"]
    assert lines[3].split()[-1] == "baseline"


def test_several_baselines_must_all_hold(tmp_path, capsys):
    memory = {**record(0, 0.6), "model": "memory"}  # lr 0.001 too
    paths = [write(tmp_path, "memory.json", memory),
             write(tmp_path, "slow.json", record(0, 0.8)),
             write(tmp_path, "fast.json", record(0, 0.9, lr=5e-3))]
    assert main(["compare", *paths, "--baseline", "lr=0.001", "--baseline",
                 "model=sledge"]) == 0
    cells = {line.split("  ")[0]: line.split()[-3:]
             for line in capsys.readouterr().out.splitlines()[1:]}
    assert cells == {"sledge on Shuttle at 0.01 (lr=0.005)": ["+0.1000", "+0.0500", "1/1"],
                     "sledge on Shuttle at 0.01 (lr=0.001)": ["0.5000", "2.00", "baseline"],
                     "memory on Shuttle at 0.01": ["-0.2000", "-0.1000", "0/1"]}


@pytest.mark.parametrize("given, message", [
    (["lr=7"], "--baseline lr=7: no setting has lr=7; its values here: 0.001, 0.005"),
    (["seed=0"], "--baseline seed=0: no setting has the entry seed"),
    (["supervise_graph=yes"], "--baseline supervise_graph=yes: no setting has "
                              "supervise_graph=yes; its values here: True"),
    (["model=sledge"], "--baseline model=sledge: 2 settings of one stream, label ratio, "
                       "label mask, limit and synthetic length match (sledge on Shuttle at "
                       "0.01 (lr=0.001); sledge on Shuttle at 0.01 (lr=0.005)): add a "
                       "--baseline for an entry in which they differ"),
    (["model=sledge", "lr=0.005", "k=3"], "--baseline k=3: no setting has k=3; its values "
                                          "here: 5"),
    (["model=memory", "lr=0.005"], "--baseline model=memory lr=0.005: no setting has all "
                                   "of these"),
    (["dataset=Shuttle"], "--baseline 'dataset=Shuttle': the settings compared seed by "
                          "seed run on the same samples, so they share their dataset; name "
                          "an entry in which they differ"),
    (["limit=None"], "--baseline 'limit=None': the settings compared seed by seed run on the "
                     "same samples, so they share their limit; name an entry in which they "
                     "differ"),
    (["label_mask=paper"], "--baseline label_mask=paper: 2 settings of one model, stream, "
                           "label ratio, limit and synthetic length match (sledge on Shuttle at "
                           "0.01 (lr=0.001); sledge on Shuttle at 0.01 (lr=0.005)): add a "
                           "--baseline for an entry in which they differ"),
    (["lr"], "--baseline 'lr': expected KEY=VALUE, e.g. model=sledge"),
    (["lr=0.001", "lr=0.005"], "--baseline lr given twice"),
])
def test_a_baseline_that_names_no_single_setting_is_a_usage_error(tmp_path, capsys, given,
                                                                   message):
    paths = [write(tmp_path, "memory.json", {**record(0, 0.6), "model": "memory"}),
             write(tmp_path, "slow.json", record(0, 0.8)),
             write(tmp_path, "fast.json", record(0, 0.9, lr=5e-3))]
    table = tmp_path / "table.csv"
    assert main(["compare", *paths, "--csv", str(table),
                 *(f"--baseline={spec}" for spec in given)]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == f"error: {message}" and captured.out == ""
    assert not table.exists()


def _rerun(folder, seed, accuracy, **origins):
    """A record of SLeDGe on Shuttle at 1 % in ``folder`` with the ``origins``
    entries (``git_commit``, ``machine``, ...) of the run that wrote it."""
    folder.mkdir(exist_ok=True)
    return write(folder, f"sledge_seed{seed}.json", {**record(seed, accuracy), **origins})


def test_by_folder_makes_a_rerun_a_row_of_its_own_that_pairs_with_the_first(tmp_path, capsys):
    """The rerun in after/ against before/: +0.10 and 0 on seeds 0 and 1 (a mean of
    +0.05, 1 of 2 higher, 1 tied); without --by the two are one setting and refused."""
    before, after = tmp_path / "before", tmp_path / "after"
    paths = [_rerun(before, 0, 0.7), _rerun(before, 1, 0.8),
             _rerun(after, 0, 0.8), _rerun(after, 1, 0.8)]
    assert main(["compare", *paths]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {paths[0]} and {paths[2]} are runs of one setting and seed 0: give one of "
        f"them, or tell them apart with --by folder")
    table = tmp_path / "table.csv"
    assert main(["compare", str(before), str(after), "--by", "folder",
                 "--baseline", "folder=before", "--csv", str(table)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "sledge on Shuttle at 0.01"
    assert [line.split()[0] for line in lines[2:]] == ["folder=after", "folder=before"]
    assert lines[2].split()[-5:] == ["+0.0500", "+0.0250", "1/2,", "1", "tied"]
    assert lines[3].split()[-1] == "baseline" and len(lines) == 4
    rows = list(csv.DictReader(table.open()))
    assert list(rows[0])[:4] == ["setting", "dataset", "label_ratio", "folder"]
    assert [(row["setting"], row["folder"], row["baseline"]) for row in rows] == [
        ("sledge on Shuttle at 0.01 (folder=after)", "after",
         "sledge on Shuttle at 0.01 (folder=before)"),
        ("sledge on Shuttle at 0.01 (folder=before)", "before", "baseline")]


def test_by_names_each_origin_and_unknown_where_a_record_lacks_it(tmp_path, capsys):
    """A record of a dirty checkout on a GPU machine beside one older than these
    entries; the --by values come first in a row's name, in the order given."""
    new = {"git_commit": "18a68348bd65b45828de1b2594d0f75632864129", "git_dirty": True,
           "torch_version": "2.11.0+cu130", "package_version": "0.1.0",
           "machine": {"platform": "Linux-6.18.44-fc-v1252-gpu-x86_64-with-glibc2.39",
                       "processor": "Intel(R) Xeon(R) Processor", "machine": "x86_64",
                       "accelerator": "NVIDIA H200"}}
    paths = [_rerun(tmp_path / "new", 0, 0.9, **new), _rerun(tmp_path / "old", 0, 0.8)]
    table = tmp_path / "table.csv"
    assert main(["compare", *paths, "--by", "commit,host", "--by", "torch, package",
                 "--csv", str(table)]) == 0
    names = [line.split("  ")[0] for line in capsys.readouterr().out.splitlines()[2:]]
    assert names == ["commit=18a68348-dirty, host=Intel(R) Xeon(R) Processor + NVIDIA H200 "
                     "on 6.18.44-fc-v1252-gpu, torch=2.11.0+cu130, package=0.1.0",
                     "commit=unknown, host=unknown, torch=unknown, package=unknown"]
    rows = list(csv.DictReader(table.open()))
    assert [[row[what] for what in ("commit", "host", "torch", "package")]
            for row in rows] == [
        ["18a68348-dirty", "Intel(R) Xeon(R) Processor + NVIDIA H200 on 6.18.44-fc-v1252-gpu",
         "2.11.0+cu130", "0.1.0"], ["unknown", "unknown", "unknown", "unknown"]]
    # a clean checkout has no mark; a machine without a processor is its OS release
    clean = {"git_commit": "0123456789abcdef", "git_dirty": False,
             "machine": {"platform": "Linux-6.18.44-fc-v657-x86_64-with-glibc2.36",
                         "processor": "", "machine": "x86_64"}}
    assert [origin(Path("r.json"), clean, what) for what in ("commit", "host")] == [
        "01234567", "6.18.44-fc-v657"]


def test_host_name_is_the_machine_named_in_the_kernel_release():
    """What the accuracy summary pairs runs on: the name alone, whatever the record
    says of the processor; a GPU machine's release names a machine of its own."""
    def machine(platform, processor=""):
        return {"machine": {"platform": platform, "processor": processor, "machine": "x86_64"}}
    assert host_name(machine("Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36", "AMD EPYC")) == (
        "fc-v1252")
    assert host_name(machine("Linux-6.18.44-fc-v669-x86_64-with-glibc2.36")) == "fc-v669"
    assert host_name(machine("Linux-6.18.44-fc-v1252-gpu-x86_64-with-glibc2.39")) == (
        "fc-v1252-gpu")
    assert host_name(machine("")) == host_name({}) == host_name({"machine": None}) == "unknown"


def test_by_that_does_not_tell_two_runs_of_a_seed_apart_still_refuses_them(tmp_path, capsys):
    host = {"machine": {"platform": "Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36",
                        "processor": "AMD EPYC", "machine": "x86_64"}}
    paths = [_rerun(tmp_path / "a", 0, 0.8, **host, git_commit="aaaaaaaaaa"),
             _rerun(tmp_path / "b", 0, 0.8, **host, git_commit="bbbbbbbbbb")]
    assert main(["compare", *paths, "--by", "host"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {paths[0]} and {paths[1]} are runs of one setting and seed 0: give one of "
        f"them, or tell them apart with --by folder (they differ in folder and commit)")
    assert main(["compare", *paths, "--by", "host,commit"]) == 0
    lines = capsys.readouterr().out.splitlines()
    # the host both share is said once, above the table
    assert lines[:2] == ["sledge on Shuttle at 0.01",
                         "all rows: host=AMD EPYC on 6.18.44-fc-v1252"]
    assert [line.split("  ")[0] for line in lines[3:]] == ["commit=aaaaaaaa",
                                                            "commit=bbbbbbbb"]


def test_by_values_all_rows_share_are_said_once_and_the_rest_name_the_rows(tmp_path, capsys):
    """Two streams rerun at two commits on one host with one torch: commit tells
    the rows apart, host and torch are the same in all four (a line above the
    table); the CSV keeps a column for each. One row alone keeps them in its name."""
    same = {"machine": {"platform": "Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36",
                        "processor": "AMD EPYC", "machine": "x86_64"},
            "torch_version": "2.11.0"}
    for commit in ("a", "b"):
        (tmp_path / commit).mkdir()
    paths = [write(tmp_path / commit, f"{dataset}.json",
                   {**record(0, 0.8), "dataset": dataset, **same, "git_commit": commit * 8})
             for commit in ("a", "b") for dataset in ("Shuttle", "GSAD")]
    table = tmp_path / "table.csv"
    assert main(["compare", *paths, "--by", "host,commit,torch", "--csv", str(table)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "all rows: host=AMD EPYC on 6.18.44-fc-v1252, torch=2.11.0"
    assert lines[1].startswith("setting ")
    assert sorted(line.split("  ")[0] for line in lines[2:]) == [
        "sledge on GSAD at 0.01 (commit=aaaaaaaa)", "sledge on GSAD at 0.01 (commit=bbbbbbbb)",
        "sledge on Shuttle at 0.01 (commit=aaaaaaaa)",
        "sledge on Shuttle at 0.01 (commit=bbbbbbbb)"]
    rows = list(csv.DictReader(table.open()))
    assert {(row["host"], row["commit"], row["torch"]) for row in rows} == {
        ("AMD EPYC on 6.18.44-fc-v1252", "aaaaaaaa", "2.11.0"),
        ("AMD EPYC on 6.18.44-fc-v1252", "bbbbbbbb", "2.11.0")}
    assert main(["compare", paths[0], "--by", "host,commit"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("sledge on Shuttle at 0.01 (host=AMD EPYC on "
                               "6.18.44-fc-v1252, commit=aaaaaaaa)")


@pytest.mark.parametrize("given, message", [
    (["--by", "machine"], "--by 'machine': expected folder, commit, host, torch, package (or "
                          "a comma list of them)"),
    (["--by", "folder,"], "--by 'folder,': expected folder, commit, host, torch, package (or "
                          "a comma list of them)"),
    (["--by", "folder", "--by", "commit,folder"], "--by folder given twice"),
    (["--baseline", "folder=a"], "--baseline folder=a: no setting has the entry folder "
                                 "(add --by folder)"),
    (["--by", "folder", "--baseline", "folder=c"], "--baseline folder=c: no setting has "
                                                   "folder=c; its values here: a, b"),
])
def test_a_bad_by_is_a_usage_error(tmp_path, capsys, given, message):
    paths = [_rerun(tmp_path / "a", 0, 0.8), _rerun(tmp_path / "b", 1, 0.9)]
    assert main(["compare", *paths, *given]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == f"error: {message}" and captured.out == ""


def test_by_names_are_no_entry_of_a_setting():
    """An origin named like a configuration entry would hide it in the row names
    and in --baseline."""
    entries = {*SETTING_KEYS, *(key for model in MODEL_NAMES for key in config_keys(model))}
    assert not entries & set(ORIGINS)


RECHECK = ROOT / "benchmarks/results/accuracy/tlp-recheck-s73"
FIRST = ROOT / "benchmarks/results/accuracy/balanced-tlp-v1252"


@pytest.mark.skipif(not (RECHECK.is_dir() and FIRST.is_dir()), reason="results not present")
def test_a_rerun_of_the_tlp_results_pairs_with_them_seed_for_seed(capsys):
    """tlp-recheck-s73 reran GSAD and Shopper of balanced-tlp-v1252 at a later
    commit, every metric the same: each of its four rows ties on all 3 seeds."""
    assert main(["compare", str(RECHECK), str(FIRST)]) == 2
    assert capsys.readouterr().err.strip().endswith(
        "give one of them, or tell them apart with --by folder (they differ in folder and "
        "commit)")
    assert main(["compare", str(RECHECK), str(FIRST), "--by", "folder",
                 "--baseline", "folder=balanced-tlp-v1252"]) == 0
    lines = {line.split("  ")[0]: line.split()
             for line in capsys.readouterr().out.splitlines()[1:]}
    reruns = {name: cells[-5:] for name, cells in lines.items() if "tlp-recheck-s73" in name}
    assert reruns == {f"tlp on {stream} at {ratio} (folder=tlp-recheck-s73)":
                      ["+0.0000", "+0.0000", "0/3,", "3", "tied"]
                      for stream in ("GSAD", "Shopper") for ratio in ("0.001", "0.01")}
    # and each of the six settings of balanced-tlp-v1252 (Shuttle too) is a baseline
    assert len(lines) == 10 and sum(cells[-1] == "baseline" for cells in lines.values()) == 6


def test_a_path_that_is_not_there_and_a_folder_of_partial_records_say_so(tmp_path, capsys):
    # before: "cannot read a run record ([Errno 2] No such file or directory: ...)", and
    # a folder of partial records only: "holds no run record", which did not say why
    missing = tmp_path / "nope"
    assert main(["compare", f"{missing}/"]) == 2
    assert capsys.readouterr().err.strip() == f"error: {missing}: no such file or folder"
    folder = tmp_path / "runs"
    folder.mkdir()
    for seed in (0, 1):
        write(folder, f"g_seed{seed}.json.partial", {**record(seed, 0.9), "interrupted_at": 9})
    assert main(["compare", str(folder)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {folder}: the folder holds no run record (*.json written by run); it holds 2 "
        f"partial records of interrupted runs (*.json.partial), which compare leaves out: "
        f"finish them (rerun them, with --resume where they saved a checkpoint)")


def _queried(seed, accuracy, **entries):
    """A record of a label query's run (``--label-mask variable-uncertainty``)."""
    return {**record(seed, accuracy), "label_mask": "variable-uncertainty",
            "query_threshold": 0.9, "query_step": 0.01, **entries}


def test_a_label_mask_baseline_pairs_a_query_with_the_mask_seed_by_seed(tmp_path, capsys):
    paths = [write(tmp_path, "mask0.json", record(0, 0.70)),
             write(tmp_path, "mask1.json", record(1, 0.80)),
             write(tmp_path, "query0.json", _queried(0, 0.75)),
             write(tmp_path, "query1.json", _queried(1, 0.78)),
             write(tmp_path, "bernoulli0.json", {**record(0, 0.72), "label_mask": "bernoulli"}),
             write(tmp_path, "other.json", {**record(0, 0.9), "label_ratio": 0.001})]
    assert main(["compare", *paths, "--baseline", "label_mask=paper"]) == 0
    lines = capsys.readouterr().out.splitlines()
    cells = {line.split("  ")[0]: line.split() for line in lines[1:]
             if line.startswith("sledge")}
    # the query's threshold and step, unset for a mask, set it apart from no other query
    query = "sledge on Shuttle at 0.01 (label_mask=variable-uncertainty)"
    assert cells["sledge on Shuttle at 0.01 (label_mask=paper)"][-1] == "baseline"
    # (0.75 - 0.70 + 0.78 - 0.80) / 2 and balanced accuracy its half; higher on seed 0
    assert cells[query][-3:] == ["+0.0150", "+0.0075", "1/2"]
    assert cells["sledge on Shuttle at 0.01 (label_mask=bernoulli)"][-3:] == [
        "+0.0200", "+0.0100", "1/1"]
    # another label ratio pairs within its own: its paper mask is its baseline
    assert cells["sledge on Shuttle at 0.001"][-1] == "baseline"


def test_a_label_ratio_baseline_pairs_the_ratios_of_one_stream(tmp_path, capsys):
    paths = [write(tmp_path, "few.json", {**record(0, 0.6), "label_ratio": 0.001}),
             write(tmp_path, "many.json", record(0, 0.8))]
    assert main(["compare", *paths, "--baseline", "label_ratio=0.001"]) == 0
    cells = {line.split("  ")[0]: line.split() for line in capsys.readouterr().out.splitlines()}
    assert cells["sledge on Shuttle at 0.001"][-1] == "baseline"
    assert cells["sledge on Shuttle at 0.01"][-3:] == ["+0.2000", "+0.1000", "1/1"]


def test_a_row_name_leaves_out_the_entries_that_do_not_apply_to_its_run(tmp_path, capsys):
    paths = [write(tmp_path, "mask.json", record(0, 0.7)),
             write(tmp_path, "query.json", _queried(0, 0.8)),
             write(tmp_path, "step.json", _queried(0, 0.9, query_step=0.05)),
             write(tmp_path, "late.json", {**record(0, 0.6), "label_delay": 5,
                                           "learn_on_arrival": True}),
             write(tmp_path, "held.json", {**record(0, 0.5), "label_delay": 5,
                                           "learn_on_arrival": False})]
    assert main(["compare", *paths]) == 0
    names = [line.split("  ")[0] for line in capsys.readouterr().out.splitlines()[2:]]
    assert names == ["label_delay=0, label_mask=variable-uncertainty, query_step=0.05",
                     "label_delay=0, label_mask=variable-uncertainty, query_step=0.01",
                     "label_delay=0, label_mask=paper",
                     "label_delay=5, label_mask=paper, learn_on_arrival=True",
                     "label_delay=5, label_mask=paper, learn_on_arrival=False"]


def test_a_baseline_that_names_no_model_pairs_each_model_with_its_own(tmp_path, capsys):
    """Before: both models' paper-mask runs matched label_mask=paper in one group,
    an error; a baseline without a model now pairs within each model."""
    paths = [write(tmp_path, "mask.json", record(0, 0.70)),
             write(tmp_path, "query.json", _queried(0, 0.75)),
             write(tmp_path, "memory_mask.json", {**record(0, 0.60), "model": "memory"}),
             write(tmp_path, "memory_query.json", {**_queried(0, 0.50), "model": "memory"})]
    assert main(["compare", *paths, "--baseline", "label_mask=paper"]) == 0
    cells = {line.split("  ")[0]: line.split()[-3:]
             for line in capsys.readouterr().out.splitlines()[1:]}
    assert cells["sledge on Shuttle at 0.01 (label_mask=variable-uncertainty)"] == [
        "+0.0500", "+0.0250", "1/1"]
    assert cells["memory on Shuttle at 0.01 (label_mask=variable-uncertainty)"] == [
        "-0.1000", "-0.0500", "0/1"]
    assert cells["sledge on Shuttle at 0.01 (label_mask=paper)"][-1] == "baseline"
    assert cells["memory on Shuttle at 0.01 (label_mask=paper)"][-1] == "baseline"


def test_a_delayed_record_older_than_learn_on_arrival_keeps_its_name_apart(tmp_path, capsys):
    """Records of a label delay written before ``learn_on_arrival`` held their rows
    (None): beside records that learned on arrival they are another setting, and
    their names must say so (before the fix both names were empty)."""
    older = {**record(0, 0.6), "label_delay": 5}  # no learn_on_arrival entry
    newer = {**record(0, 0.7), "label_delay": 5, "learn_on_arrival": True}
    paths = [write(tmp_path, "older.json", older), write(tmp_path, "newer.json", newer)]
    assert main(["compare", *paths]) == 0
    names = [line.split("  ")[0] for line in capsys.readouterr().out.splitlines()[2:]]
    assert names == ["learn_on_arrival=True", "learn_on_arrival=None"]


def test_a_csv_that_would_overwrite_a_record_or_is_no_csv_is_refused(tmp_path, capsys):
    """Before: ``--csv a0.json`` replaced the record by the table, and ``--csv
    DIR/table.json`` wrote a JSON that is no record into the folder compared."""
    path = write(tmp_path, "a0.json", record(0, 0.80))
    before = Path(path).read_text()
    assert main(["compare", path, "--csv", path]) == 2
    assert capsys.readouterr().err == (
        f"error: a record compared and --csv name one file, {path}: the --csv file would "
        f"overwrite it; give it another name\n")
    assert main(["compare", str(tmp_path), "--csv", str(tmp_path / "table.json")]) == 2
    assert capsys.readouterr().err == (
        f"error: --csv writes CSV: give a FILE.csv, got {tmp_path / 'table.json'}\n")
    assert [file.name for file in tmp_path.iterdir()] == ["a0.json"]
    assert Path(path).read_text() == before


def test_a_folder_of_finished_and_partial_records_notes_the_partial_ones_left_out(
        tmp_path, capsys):
    """Before: the note came only where the folder held no finished record, so the
    rows compared silently lacked the interrupted runs."""
    folder = tmp_path / "runs"
    folder.mkdir()
    write(folder, "g_seed0.json", record(0, 0.8))
    write(folder, "g_seed1.json.partial", {**record(1, 0.9), "interrupted_at": 9})
    assert main(["compare", str(folder)]) == 0
    captured = capsys.readouterr()
    assert captured.err.strip() == (
        f"note: {folder} holds 1 partial record of interrupted runs (*.json.partial), which "
        f"compare leaves out: finish them (rerun them, with --resume where they saved a "
        f"checkpoint)")
    assert captured.out.splitlines()[1].split()[:6] == ["sledge", "on", "Shuttle", "at",
                                                        "0.01", "1"]  # the finished seed


def test_a_record_of_a_model_this_version_does_not_know_keeps_its_whole_config():
    # nothing is left out as fixed or unread by a model of another version
    record = {"model": "future-model", "config": {"k": 3, "novel": True}}
    assert recorded_config(record) == {**OLDER_RECORDS, "k": 3, "novel": True}
    with pytest.raises(UsageError, match="^unknown model 'future-model'; choose from "
                                         f"{', '.join(MODEL_NAMES)}$"):
        config_keys("future-model")
