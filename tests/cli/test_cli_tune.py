import csv
import itertools
import json
import time

import pytest
import torch

from torch_geometric_stream.cli import arguments as arguments_module
from torch_geometric_stream.cli import build_parser, main
from torch_geometric_stream.cli import run as run_module
from torch_geometric_stream.cli import tune as tune_module
from torch_geometric_stream.cli.errors import UsageError
from torch_geometric_stream.cli.models import config_keys
from torch_geometric_stream.cli.tune import lambda_warning

SMALL = ["--dataset", "synthetic", "--model", "sledge-light", "--limit", "60", "--seeds", "0"]


def test_tune_ranks_points_writes_best_config_and_resumes(tmp_path, capsys):
    out = tmp_path / "grid"
    argv = ["tune", *SMALL, "--grid", "lr=1e-3,5e-3", "--grid", "hidden-channels=16",
            "--out-dir", str(out)]
    assert main(argv) == 0
    runs = sorted(out.glob("sledge-light_*.json"))
    assert len(runs) == 2
    printed = capsys.readouterr().out
    assert "rank" in printed and "lr=1e-3_hidden_channels=16" in printed
    # the command printed to repeat the best point names the stream, model and ratio:
    # the configuration file holds configuration entries only
    command = printed.split("(use: python -m torch_geometric_stream ")[1].split(")\n")[0]
    assert ("--dataset synthetic --model sledge-light --label-ratio 0.01 --preset paper"
            in command and command.endswith("--limit 60"))
    repeated = tmp_path / "repeated.json"
    assert main([*command.split(), "--seed", "0", "--output", str(repeated), "--quiet"]) == 0
    repeated_run = json.loads(repeated.read_text())
    # it repeats the best point exactly: its accuracy on the search's seed
    best_run = max((json.loads(path.read_text()) for path in runs),
                   key=lambda run: run["accuracy"])
    assert repeated_run["model"] == "sledge-light"
    assert (repeated_run["accuracy"], repeated_run["config"]) == (best_run["accuracy"],
                                                                  best_run["config"])
    best = json.loads(next(out.glob("best_*.json")).read_text())
    assert best["hidden_channels"] == 16 and best["lr"] in (1e-3, 5e-3)
    stamps = [path.stat().st_mtime_ns for path in runs]
    assert main(argv) == 0  # resumed: nothing is run again
    assert [path.stat().st_mtime_ns for path in runs] == stamps
    result = tmp_path / "run.json"
    assert main(["run", "--dataset", "synthetic", "--model", "sledge-light", "--limit", "40",
                 "--config", str(next(out.glob("best_*.json"))), "--output", str(result),
                 "--quiet"]) == 0
    assert json.loads(result.read_text())["config"]["hidden_channels"] == 16


def test_tune_of_another_grid_into_the_same_out_dir_is_refused_before_any_run(tmp_path,
                                                                             capsys):
    # before: the second grid's ranking and best configuration silently replaced the
    # first's (a worse best configuration, where the second grid did worse)
    first = ["tune", *SMALL, "--grid", "lr=1e-3,5e-3", "--out-dir", str(tmp_path)]
    assert main(first) == 0
    written = {path.name: path.read_text() for path in tmp_path.iterdir()}
    capsys.readouterr()
    ranking = tmp_path / "ranking_sledge-light_synthetic_0.01.csv"
    refused = (f"error: --out-dir: {ranking} ranks another grid (2 point(s) of lr, not all "
               f"of this search's); this search would overwrite "
               f"ranking_sledge-light_synthetic_0.01.csv and "
               f"best_sledge-light_synthetic_0.01.json: move them out of {tmp_path} (its "
               f"grid runs are reused) or give another --out-dir\n")
    # other options, an option more, a point less: refused, nothing run or written
    for grid in (["hidden-channels=16,32"], ["lr=1e-3,5e-3", "hidden-channels=16"],
                 ["lr=1e-3"]):
        assert main(["tune", *SMALL, *(f"--grid={spec}" for spec in grid), "--out-dir",
                     str(tmp_path)]) == 2
        assert capsys.readouterr().err == refused
        assert {path.name: path.read_text() for path in tmp_path.iterdir()} == written
    # a reused JSON's more specific refusal comes first
    longer = [arg if arg != "60" else "80" for arg in SMALL]
    assert main(["tune", *longer, "--grid", "lr=1e-3", "--out-dir", str(tmp_path)]) == 2
    assert "ran --limit 60, this search asks for --limit 80" in capsys.readouterr().err
    # the same grid, its values in another order: resumed, nothing run
    stamps = {path: path.stat().st_mtime_ns for path in tmp_path.glob("sledge-light_*")}
    assert main(["tune", *SMALL, "--grid", "lr=5e-3,1e-3", "--out-dir", str(tmp_path)]) == 0
    assert {path: path.stat().st_mtime_ns for path in tmp_path.glob("sledge-light_*")} == stamps
    # a grid grown by a value runs only the new point and ranks it with the others
    assert main(["tune", *SMALL, "--grid", "lr=1e-3,5e-3,1e-2", "--out-dir",
                 str(tmp_path)]) == 0
    assert {path: path.stat().st_mtime_ns for path in stamps} == stamps
    assert len(list(tmp_path.glob("sledge-light_*"))) == 3
    assert sorted(row[1] for row in _ranking(ranking)[1]) == ["1e-2", "1e-3", "5e-3"]
    # with the ranking moved away, a grid of other points runs, reusing their runs
    ranking.rename(tmp_path.parent / "first-ranking.csv")
    assert main(["tune", *SMALL, "--grid", "lr=1e-3", "--out-dir", str(tmp_path)]) == 0
    assert {path: path.stat().st_mtime_ns for path in stamps} == stamps
    assert [row[1] for row in _ranking(ranking)[1]] == ["1e-3"]


@pytest.mark.parametrize("content", [b"my,own,notes\n", b"\xff\xfe\x00notes"])
def test_tune_refuses_to_overwrite_a_ranking_file_it_did_not_write(tmp_path, capsys, content):
    ranking = tmp_path / "ranking_sledge-light_synthetic_0.01.csv"
    ranking.write_bytes(content)  # not a table tune wrote, or not text at all
    assert main(["tune", *SMALL, "--grid", "lr=1e-3", "--out-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"error: --out-dir: {ranking} ranks a table tune did not write; this search would "
        f"overwrite ranking_sledge-light_synthetic_0.01.csv: move it out of {tmp_path} (its "
        f"grid runs are reused) or give another --out-dir\n")
    assert [path.name for path in tmp_path.iterdir()] == [ranking.name]


@pytest.mark.parametrize("grid, message", [
    ("colour=red", "colour"),
    ("lr=, ,", "error: --grid 'lr=, ,': expected NAME=V1,V2,..."),  # before: an IndexError
    ("=1e-3", "error: --grid '=1e-3': expected NAME=V1,V2,..."),
    ("k=1,2,1", "'k=1,2,1': 1 given twice"),
    ("supervise-graph=true,yes", "'supervise-graph=true,yes': true given twice"),
    # values that differ as text only: compared as run reads them
    ("lr=1e-3,5e-3,0.001", "error: --grid lr: 1e-3 and 0.001 are the same value; give it once"),
    ("robust-window=none,NONE", "error: --grid robust_window: none and NONE are the same "
                                "value; give it once"),
    ("tau=inf,Infinity", "error: --grid tau: inf and Infinity are the same value; give it once"),
    ("tau=inf,1e999", "error: --grid tau: inf and 1e999 are the same value; give it once"),
    ("memory-size=40,040", "error: --grid memory_size: 40 and 040 are the same value; give "
                           "it once"),
    ("feature-range=-1:1,-1.0:1e0", "error: --grid feature_range: -1:1 and -1.0:1e0 are the "
                                    "same value; give it once"),
    # each point's run arguments are parsed and its configuration checked as run does
    ("lr=1e-3,2e-3,fast", "--grid point lr=fast: torch_geometric_stream run: argument --lr: "
                          "invalid float value: 'fast'"),
    ("scaling=online,onlin", "--grid point scaling=onlin: torch_geometric_stream run: "
                             "argument --scaling: invalid choice: 'onlin'"),
    ("k=3,-1", "--grid point k=-1: configuration: k must be >= 0, got -1"),
    ("hidden-channels=16,0", "--grid point hidden_channels=0: configuration: "),
    ("labeled-size=10,5000", "--grid point labeled_size=5000: --labeled-size 5000 exceeds"),
    ("robust-window=none,0", "--grid point robust_window=0: torch_geometric_stream run: "
                             "argument --robust-window: expected a positive integer or "
                             "'none', got '0'"),
])
def test_tune_rejects_a_bad_grid_before_any_run(tmp_path, capsys, grid, message):
    assert main(["tune", *SMALL, "--grid", grid, "--out-dir", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("error:") and message in captured.err
    assert len(captured.err.splitlines()) == 1 and "start" not in captured.out
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("options, message", [
    (["--dataset", "Shutle"], "error: --dataset: unknown dataset 'Shutle'"),
    (["--dataset", "-"], "error: --dataset - (standard input) is read once; tune reads its "
                         "stream for every grid point and seed: save it to a CSV file"),
    (["--model", "tlp", "--grid", "lr=0.1"],
     "error: --grid: unknown configuration keys for model 'tlp': lr"),
    (["--dataset", "absent/missing.csv"], "error: stream file absent/missing.csv does not "
                                          "exist"),
    (["--seeds", str(2 ** 64)], "error: --seeds must be below 2**64"),
    (["--grid", "memory_size=80"], "error: --grid memory_size given twice; give all its "
                                   "values in one --grid memory-size=V1,V2,..."),
    # tune takes no run option: a fixed value is a grid of one
    (["--memory-size", "80"], "error: torch_geometric_stream tune: unrecognized arguments: "
                              "--memory-size 80"),
])
def test_tune_rejects_a_bad_stream_model_or_seed_before_any_run(tmp_path, capsys, options,
                                                                 message):
    argv = ["tune", *SMALL, "--grid", "memory-size=40,60", *options, "--out-dir",
            str(tmp_path)]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith(message) and len(captured.err.splitlines()) == 1
    assert "start" not in captured.out and not list(tmp_path.iterdir())


def test_tune_names_a_stream_file_of_another_suffix_before_any_run(tmp_path, capsys):
    # before: "--dataset: unknown dataset '.../sensors.txt'; valid names: MNDS, ..."
    stream = tmp_path / "sensors.txt"
    stream.write_text("a,b,label\n1,2,x\n")
    argv = ["tune", "--dataset", str(stream), "--grid", "memory-size=40,60", "--out-dir",
            str(tmp_path / "grid")]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err == (f"error: --dataset: {stream} is not a stream file: its name must "
                            f"end in .csv, .csv.gz, .npz, .arff, .arff.gz (convert or rename "
                            f"it)\n")
    assert "start" not in captured.out and not (tmp_path / "grid").exists()


def test_tune_with_jobs_gives_the_same_runs_as_one_after_the_other(tmp_path, capsys):
    grid = ["--grid", "lr=1e-3,5e-3", "--grid", "hidden-channels=16"]
    assert main(["tune", *SMALL, *grid, "--out-dir", str(tmp_path / "serial")]) == 0
    capsys.readouterr()
    assert main(["tune", *SMALL, *grid, "--jobs", "2", "--out-dir", str(tmp_path / "jobs")]) == 0
    printed = capsys.readouterr().out
    assert printed.count("done sledge-light_synthetic") == 2  # progress of the workers
    assert "seed  samples" not in printed  # the workers' own output went to their logs
    serial = sorted((tmp_path / "serial").glob("sledge-light_*.json"))
    assert len(serial) == 2
    for path in serial:
        one, two = (json.loads(path.read_text()),
                    json.loads((tmp_path / "jobs" / path.name).read_text()))
        assert one["accuracy"] == two["accuracy"] and one["curve"] == two["curve"]
    assert not list((tmp_path / "jobs").glob("*.log"))  # logs of successful runs removed
    assert ((tmp_path / "serial" / "best_sledge-light_synthetic_0.01.json").read_text()
            == (tmp_path / "jobs" / "best_sledge-light_synthetic_0.01.json").read_text())


def test_tune_stops_at_a_failing_grid_run_and_names_it(tmp_path, capsys, monkeypatch):
    def failing(*args, **kwargs):  # a run that fails once started, past tune's checks
        raise UsageError("the stream broke")
    monkeypatch.setattr(run_module, "prequential", failing)
    assert main(["tune", *SMALL, "--grid", "hidden-channels=8,16", "--out-dir", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert "hidden_channels=8_seed0.json" in captured.err and "Traceback" not in captured.err
    assert "hidden_channels=16" not in captured.out  # not started
    assert not list(tmp_path.glob("*.json"))


def test_ctrl_c_stops_tunes_worker_processes_at_once(tmp_path, capsys, ctrl_c_once_started,
                                                     interrupted_main):
    workers = ctrl_c_once_started(2)
    tic = time.monotonic()
    argv = ["tune", *SMALL, "--grid", "hidden-channels=8,16,32", "--jobs", "2",
            "--out-dir", str(tmp_path)]
    assert interrupted_main(argv) == 130
    assert time.monotonic() - tic < 3  # a worker left alone runs 4 s
    assert len(workers) == 2 and all(worker.signals for worker in workers)
    assert capsys.readouterr().err == (
        f"tune interrupted; its 0 finished grid run(s) are kept in {tmp_path}: rerun the "
        f"same command to run only the others\n")


def test_an_interrupted_tune_keeps_its_finished_runs_and_a_rerun_runs_the_others(
        tmp_path, capsys, monkeypatch, interrupted_main):
    evaluate, started = run_module.prequential, []

    def interrupted_second(*args, **kwargs):
        started.append(1)
        if len(started) == 2:
            raise KeyboardInterrupt
        return evaluate(*args, **kwargs)
    monkeypatch.setattr(run_module, "prequential", interrupted_second)
    argv = ["tune", *SMALL, "--grid", "hidden-channels=8,16", "--out-dir", str(tmp_path)]
    assert interrupted_main(argv) == 130
    err = capsys.readouterr().err
    assert err == (f"tune interrupted; its 1 finished grid run(s) are kept in {tmp_path}: "
                   f"rerun the same command to run only the others\n")
    finished = tmp_path / "sledge-light_synthetic_0.01_hidden_channels=8_seed0.json"
    assert [path.name for path in tmp_path.glob("*.json")] == [finished.name]
    stamp = finished.stat().st_mtime_ns
    monkeypatch.undo()
    assert main(argv) == 0
    assert "start sledge-light_synthetic_0.01_hidden_channels=8" not in capsys.readouterr().out
    assert finished.stat().st_mtime_ns == stamp



def test_a_grid_run_that_ctrl_c_stops_at_a_sample_leaves_a_partial_record_no_rerun_skips(
        tmp_path, capsys, monkeypatch, interrupted_main, ctrl_c_in_sample):
    """Tune's own line; the partial record of the point stopped is no finished
    run: a rerun runs that point again, and its record replaces the partial one."""
    ctrl_c_in_sample(29, call=2)
    argv = ["tune", *SMALL, "--grid", "hidden-channels=8,16", "--out-dir", str(tmp_path)]
    assert interrupted_main(argv) == 130
    assert capsys.readouterr().err == (
        f"tune interrupted; its 1 finished grid run(s) are kept in {tmp_path}: rerun the "
        f"same command to run only the others\n")
    stopped = tmp_path / "sledge-light_synthetic_0.01_hidden_channels=16_seed0.json"
    partial = stopped.with_name(f"{stopped.name}.partial")
    assert json.loads(partial.read_text())["interrupted_at"] == 30
    monkeypatch.undo()
    assert main(argv) == 0
    assert f"start {stopped.name}" in capsys.readouterr().out
    assert json.loads(stopped.read_text())["n_samples"] == 60 and not partial.exists()


def test_tune_passes_the_preset_to_every_run_and_keeps_presets_apart(tmp_path, capsys):
    grid = ["--grid", "hidden-channels=8", "--out-dir", str(tmp_path)]
    assert main(["tune", *SMALL, *grid]) == 0
    assert main(["tune", *SMALL, *grid, "--preset", "package"]) == 0  # not skipped
    runs = {json.loads(path.read_text())["preset"]: path.name
            for path in tmp_path.glob("sledge-light_*.json")}
    assert runs == {"paper": "sledge-light_synthetic_0.01_hidden_channels=8_seed0.json",
                    "package": ("sledge-light_synthetic_0.01_preset=package_"
                                "hidden_channels=8_seed0.json")}
    assert (tmp_path / "best_sledge-light_synthetic_0.01_preset=package.json").exists()


@pytest.mark.parametrize("gridded, entry", [("lr", "k"), ("k", "lr")])
def test_tune_refuses_to_rank_runs_made_under_other_settings(tmp_path, capsys, gridded,
                                                              entry):
    grid = ["--grid", f"{gridded}=1e-3,5e-3" if gridded == "lr" else f"{gridded}=3,5",
            "--grid", "hidden-channels=8", "--out-dir", str(tmp_path)]
    assert main(["tune", *SMALL, *grid]) == 0
    stale = sorted(tmp_path.glob("sledge-light_*_seed0.json"))[-1]
    record = json.loads(stale.read_text())
    record["config"][entry] *= 2  # as if the defaults had changed since
    stale.write_text(json.dumps(record))
    capsys.readouterr()
    assert main(["tune", *SMALL, *grid]) == 2
    err = capsys.readouterr().err
    assert stale.name in err and f"{entry}:" in err and "Traceback" not in err


def test_tune_refuses_to_rank_runs_of_another_limit(tmp_path, capsys):
    grid = ["--grid", "lr=1e-3,5e-3", "--out-dir", str(tmp_path)]
    assert main(["tune", *SMALL, *grid]) == 0
    capsys.readouterr()
    longer = [arg if arg != "60" else "80" for arg in SMALL]
    assert main(["tune", *longer, "--grid", "lr=1e-3,5e-3,1e-2", "--out-dir",
                 str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "ran --limit 60, this search asks for --limit 80" in err and "Traceback" not in err
    assert len(list(tmp_path.glob("*lr=1e-2*.json"))) == 0  # refused before any run


@pytest.mark.parametrize("entry, older_value", [("bias_position", "after"),
                                                 ("alpha", "adaptive"), ("source_merge", "raw")])
def test_tune_ranks_older_runs_that_lack_a_later_entry_with_new_ones(
        tmp_path, capsys, entry, older_value):
    # a JSON written before an entry existed ran with that entry's older value
    grid = ["--grid", "lr=1e-3,5e-3", "--grid", "hidden-channels=8", "--out-dir", str(tmp_path)]
    assert main(["tune", *SMALL, *grid]) == 0
    older = tmp_path / "sledge-light_synthetic_0.01_lr=5e-3_hidden_channels=8_seed0.json"
    record = json.loads(older.read_text())
    assert record["config"].pop(entry) == older_value
    older.write_text(json.dumps(record))
    assert main(["tune", *SMALL, *grid]) == 0
    record["config"]["supervise_graph"] = False  # but a real difference is still refused
    older.write_text(json.dumps(record))
    capsys.readouterr()
    assert main(["tune", *SMALL, *grid]) == 2
    assert "supervise_graph:" in capsys.readouterr().err


def test_tune_without_a_grid_runs_the_presets_configuration_as_the_point_defaults(
        tmp_path, capsys):
    assert main(["tune", *SMALL, "--out-dir", str(tmp_path)]) == 0
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "best_sledge-light_synthetic_0.01.json", "ranking_sledge-light_synthetic_0.01.csv",
        "sledge-light_synthetic_0.01_defaults_seed0.json"]
    printed = capsys.readouterr().out.splitlines()
    assert printed[-4].split()[0] == "rank" and printed[-3].split()[-1] == "defaults"


def test_tune_writes_every_entry_of_the_model_from_older_records_as_the_best_configuration(
        tmp_path, capsys):
    """A record older than an entry lacks it (its run had the older value, see
    OLDER_RECORDS) and an older baseline record held the SLeDGe entries too: the
    best configuration holds every entry the model takes, and only those, so that
    run --config repeats the point (before, it lacked the entry, which run then
    took from the preset)."""
    argv = ["tune", "--dataset", "synthetic", "--model", "tlp", "--limit", "60", "--grid",
            "knn=2,4", "--out-dir", str(tmp_path)]
    assert main(argv) == 0
    for path in tmp_path.glob("tlp_*.json"):
        record = json.loads(path.read_text())
        assert record["config"].pop("feature_range") == [-1.0, 1.0]
        record["config"]["lr"] = 1e-3
        path.write_text(json.dumps(record))
    assert main(argv) == 0  # nothing runs again
    best = json.loads((tmp_path / "best_tlp_synthetic_0.01.json").read_text())
    assert list(best) == sorted(config_keys("tlp"))  # in order: a diff of two is plain
    assert best["feature_range"] == [-1.0, 1.0] and best["knn"] in (2, 4)


@pytest.mark.parametrize("model, entry, values", [
    ("tlp", "knn", (2, 4)), ("ressl", "window", (5, 50)), ("hdssl", "chunk_size", (1, 25)),
])
def test_tune_grids_a_baseline_hyperparameter_into_the_baseline(tmp_path, model, entry, values):
    grid = f"{entry}={','.join(map(str, values))}"
    assert main(["tune", "--dataset", "synthetic", "--model", model, "--limit", "60",
                 "--grid", grid, "--out-dir", str(tmp_path)]) == 0
    tried = {json.loads(path.read_text())["config"][entry]
             for path in tmp_path.glob(f"{model}_*.json")}
    assert tried == set(values)
    assert json.loads(next(tmp_path.glob("best_*.json")).read_text())[entry] in values


def test_tune_grids_the_memory_size_and_its_derived_sizes(tmp_path, capsys):
    assert main(["tune", *SMALL, "--grid", "memory-size=40,60", "--grid", "hidden-channels=8",
                 "--out-dir", str(tmp_path)]) == 0
    configs = [json.loads(path.read_text())["config"]
               for path in tmp_path.glob("sledge-light_*.json")]
    assert len({(c["labeled_size"], c["unlabeled_size"]) for c in configs}) == 2


def test_tune_confirms_the_top_points_on_more_seeds_and_writes_the_ranking(tmp_path, capsys):
    argv = ["tune", *SMALL, "--grid", "lr=1e-4,1e-3,5e-3", "--grid", "hidden-channels=8",
            "--confirm-top", "2", "--confirm-seeds", "0,7", "--out-dir", str(tmp_path)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    runs = {path.name for path in tmp_path.glob("sledge-light_*.json")}
    assert len(runs) == 5  # 3 points on seed 0, the best 2 again on seed 7 (0 not repeated)
    with (tmp_path / "ranking_sledge-light_synthetic_0.01.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert [row["seeds"] for row in rows] == ["0 7", "0 7", "0"]
    single = {row["lr"]: float(row["accuracy"]) for row in rows}
    stage_one = {lr: json.loads((tmp_path / f"sledge-light_synthetic_0.01_lr={lr}_"
                                 "hidden_channels=8_seed0.json").read_text())["accuracy"]
                 for lr in ("1e-4", "1e-3", "5e-3")}
    assert rows[2]["lr"] == min(stage_one, key=stage_one.get)  # the one left out of stage 2
    assert single[rows[2]["lr"]] == round(stage_one[rows[2]["lr"]], 6)
    for row in rows[:2]:
        seven = json.loads((tmp_path / f"sledge-light_synthetic_0.01_lr={row['lr']}_"
                            "hidden_channels=8_seed7.json").read_text())["accuracy"]
        assert float(row["accuracy"]) == round((stage_one[row["lr"]] + seven) / 2, 6)
        assert float(row["std"]) == round(abs(stage_one[row["lr"]] - seven) / 2 ** 0.5, 6)
    assert rows[2]["std"] == ""  # one seed: no sample std
    third = next(line.split() for line in printed.splitlines() if line.startswith("   3  "))
    assert third[2:4] == ["–", "1"]  # std, seeds
    assert float(rows[0]["accuracy"]) >= float(rows[1]["accuracy"])
    best = json.loads(next(tmp_path.glob("best_*.json")).read_text())
    assert best["lr"] == float(rows[0]["lr"])
    assert "top 2 also 7" in printed


def test_tune_confirm_options_come_together(tmp_path, capsys):
    assert main(["tune", *SMALL, "--grid", "lr=1e-3", "--confirm-top", "1",
                 "--out-dir", str(tmp_path)]) == 2
    assert "--confirm-seeds" in capsys.readouterr().err
    assert main(["tune", *SMALL, "--grid", "lr=1e-3", "--confirm-seeds", "7",
                 "--out-dir", str(tmp_path)]) == 2
    assert "--confirm-top" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.json"))


def test_tune_refuses_to_confirm_more_points_than_the_grid_has(tmp_path, capsys,
                                                               monkeypatch):
    """It confirmed the grid's 2 points and printed 'top 3'."""
    monkeypatch.setattr(tune_module, "run_commands",
                        lambda *args, **kwargs: pytest.fail("a grid point ran"))
    assert main(["tune", *SMALL, "--grid", "lr=1e-3,5e-3", "--confirm-top", "3",
                 "--confirm-seeds", "7", "--out-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err == ("error: --confirm-top 3 exceeds the grid's 2 point(s); "
                                       "confirm at most all of them\n")


def test_tune_confirms_every_point_of_the_grid_when_asked(tmp_path, capsys, monkeypatch):
    ran = _fake_runs(monkeypatch, {("1e-3", 0): {"accuracy": 0.8}, ("5e-3", 0): {"accuracy": 0.9},
                                   ("1e-3", 7): {"accuracy": 0.6}, ("5e-3", 7): {"accuracy": 0.3}})
    assert main(["tune", *SMALL, "--grid", "lr=1e-3,5e-3", "--confirm-top", "2",
                 "--confirm-seeds", "7", "--out-dir", str(tmp_path)]) == 0
    assert ran == [("1e-3", 0), ("5e-3", 0), ("5e-3", 7), ("1e-3", 7)]
    _, rows = _ranking(tmp_path / "ranking_sledge-light_synthetic_0.01.csv")
    assert [(row[1], row[2], row[3]) for row in rows] == [("1e-3", "0 7", "0.700000"),
                                                          ("5e-3", "0 7", "0.600000")]


def test_tune_refuses_to_grid_an_entry_the_model_fixes(tmp_path, capsys):
    argv = ["tune", "--dataset", "synthetic", "--model", "gsl", "--limit", "60", "--seeds", "0",
            "--grid", "lam=0.01,0.1", "--out-dir", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--grid: model 'gsl' always runs with lam = 0.0" in err and "Traceback" not in err
    assert not list(tmp_path.iterdir())


def test_tune_refuses_to_grid_an_entry_the_model_never_reads(tmp_path, capsys):
    argv = ["tune", "--dataset", "synthetic", "--model", "memory", "--limit", "60", "--seeds",
            "0", "--grid", "k=3,5", "--grid", "lr=1e-3,1e-2", "--out-dir", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert ("--grid: model 'memory' does not read k (setting it changes nothing); drop it"
            in err and "Traceback" not in err)
    assert not list(tmp_path.iterdir())


def test_tune_grids_an_on_off_option_as_its_two_flags(tmp_path, capsys):
    grid = ["--grid", "supervise-graph=yes,false", "--grid", "hidden-channels=8"]
    assert main(["tune", *SMALL, *grid, "--out-dir", str(tmp_path)]) == 0
    runs = {path.name: json.loads(path.read_text())["config"]
            for path in tmp_path.glob("sledge-light_*.json")}
    assert {name: config["supervise_graph"] for name, config in runs.items()} == {
        "sledge-light_synthetic_0.01_supervise_graph=true_hidden_channels=8_seed0.json": True,
        "sledge-light_synthetic_0.01_supervise_graph=false_hidden_channels=8_seed0.json": False}


def test_tune_refuses_an_on_off_option_given_another_value(tmp_path, capsys):
    assert main(["tune", *SMALL, "--grid", "supervise-graph=true,maybe",
                 "--out-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "supervise_graph is on or off; give true or false, got 'maybe'" in err
    assert not list(tmp_path.iterdir())


def test_a_grid_reads_every_spelling_of_on_and_off():
    on, off = ["true", "Yes", "ON", "1"], ["False", "no", "off", "0"]
    assert [tune_module.parse_grid([f"supervise-graph={word}"]) for word in on + off] == (
        [{"supervise_graph": ["true"]}] * 4 + [{"supervise_graph": ["false"]}] * 4)


def test_tune_grids_a_pair_option_as_its_two_values(tmp_path, capsys):
    grid = ["--grid", "feature-range=-1:1, 0:1", "--grid", "hidden-channels=8"]
    assert main(["tune", *SMALL, *grid, "--out-dir", str(tmp_path)]) == 0
    runs = {path.name: json.loads(path.read_text())["config"]
            for path in tmp_path.glob("sledge-light_*.json")}
    assert {name: config["feature_range"] for name, config in runs.items()} == {
        "sledge-light_synthetic_0.01_feature_range=-1to1_hidden_channels=8_seed0.json":
            [-1.0, 1.0],
        "sledge-light_synthetic_0.01_feature_range=0to1_hidden_channels=8_seed0.json":
            [0.0, 1.0]}
    best = json.loads(next(tmp_path.glob("best_*.json")).read_text())
    assert best["feature_range"] in ([-1.0, 1.0], [0.0, 1.0])


def test_tune_grids_the_robust_window_with_none_for_no_window(tmp_path, capsys):
    grid = ["--grid", "scaling=robust-rescale", "--grid", "robust-window=None,2000",
            "--grid", "hidden-channels=8"]
    assert main(["tune", *SMALL, *grid, "--out-dir", str(tmp_path)]) == 0
    runs = {path.name: json.loads(path.read_text())["config"]
            for path in tmp_path.glob("sledge-light_*.json")}
    name = ("sledge-light_synthetic_0.01_scaling=robust-rescale_robust_window={}_"
            "hidden_channels=8_seed0.json")
    assert {file: config["robust_window"] for file, config in runs.items()} == {
        name.format("None"): None, name.format(2000): 2000}
    best = json.loads(next(tmp_path.glob("best_*.json")).read_text())
    assert best["robust_window"] in (None, 2000)


@pytest.mark.parametrize("values, message", [
    ("0:1,0.5", "feature_range is a pair; give LOW:HIGH, got '0.5'"),
    ("0:1:2", "feature_range is a pair; give LOW:HIGH, got '0:1:2'"),
    ("1:0", "--grid point feature_range=1:0: --feature-range (config entry feature_range): "
            "feature_range must be finite with low < high, got (1.0, 0.0)"),
])
def test_tune_refuses_a_pair_option_given_another_value(tmp_path, capsys, values, message):
    assert main(["tune", *SMALL, "--grid", f"feature-range={values}",
                 "--out-dir", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("dataset, ratio, model, preset, grid, warned", [
    # the paper preset trains f_E by the regularizer only for SLeDGe on MNIST at 0.1 %
    ("MNIST", 0.001, "sledge", "paper", {"lam": ["0.01", "0.1"]}, "0.01, 0.1"),
    ("mnist", 0.001, "sledge", "paper", {"lam": ["0.01", "0.1"], "weight_decay": ["5e-4"]},
     None),
    ("Shuttle", 0.01, "sledge", "paper", {"lam": ["0.01", "0.1"]}, None),
    ("Shuttle", 0.01, "sledge", "paper",
     {"lam": ["0.01", "0.1", "1"], "supervise_graph": ["true", "false"]}, "0.01, 0.1, 1"),
    # the package's few-label defaults of SLeDGe-L include supervise_graph off
    ("synthetic", 0.001, "sledge-light", "package", {"lam": ["0", "0.1", "1"]}, "0.1, 1"),
    ("synthetic", 0.001, "sledge-light", "package", {"lam": ["0", "0.1"]}, None),
    ("synthetic", 0.01, "sledge-light", "package", {"lam": ["0.1", "1"]}, None),
    # not numbers: no warning (and no crash), the runs name the error
    ("synthetic", 0.001, "sledge-light", "package", {"lam": ["abc", "0.1"]}, None),
    ("MNIST", 0.001, "sledge", "paper", {"lam": ["0.1", "1"], "weight_decay": ["x"]}, None),
])
def test_tune_warns_of_lambdas_that_train_the_same_model(dataset, ratio, model, preset, grid,
                                                         warned):
    points = [dict(zip(grid, values)) for values in itertools.product(*grid.values())]
    warning = lambda_warning(dataset, ratio, model, preset, points)
    if warned is None:
        assert warning is None
    else:
        assert warning.startswith(f"warning: lam {warned} train the same model")


def test_tune_prints_the_lambda_warning_before_running(tmp_path, capsys):
    grid = ["--grid", "supervise-graph=false", "--grid", "lam=0.1,1"]
    assert main(["tune", *SMALL, "--limit", "30", *grid, "--out-dir", str(tmp_path)]) == 0
    assert "warning: lam 0.1, 1 train the same model" in capsys.readouterr().err


def test_tune_on_a_csv_file_names_its_runs_by_the_files_name(tmp_path, capsys):
    folder = tmp_path / "data"
    folder.mkdir()
    rows = ["label,a,b", *(f"{i % 2},{i % 2 + 0.01 * i},{1 - i % 2}" for i in range(40))]
    (folder / "mine.csv").write_text("\n".join(rows) + "\n")
    out = tmp_path / "grid"
    assert main(["tune", "--dataset", str(folder / "mine.csv"), "--label-column", "label",
                 "--model", "sledge-light", "--seeds", "0", "--grid", "lr=1e-3,5e-3",
                 "--grid", "hidden-channels=8", "--out-dir", str(out),
                 "--root", str(tmp_path)]) == 0
    names = sorted(path.name for path in out.iterdir())
    assert all(name.startswith(("sledge-light_mine.csv-", "best_sledge-light_mine.csv-",
                                "ranking_sledge-light_mine.csv-")) for name in names), names
    assert len([name for name in names if name.endswith("_seed0.json")]) == 2
    printed = capsys.readouterr().out
    assert f"--dataset {folder / 'mine.csv'} " in printed and "--label-column label" in printed
    assert "--root" not in printed  # a stream file is read from its path


def _stream_csv(path, flip: bool):
    """A two-class stream file whose labels are flipped by ``flip``."""
    path.parent.mkdir(exist_ok=True)
    rows = ["a,b,label", *(f"{i % 2},{1 - i % 2},{(i + flip) % 2}" for i in range(40))]
    path.write_text("\n".join(rows) + "\n")


def test_tune_reads_a_stream_file_named_synthetic_dash_as_the_file(tmp_path, monkeypatch):
    """``synthetic-mine.csv`` is a stream file, not an unknown synthetic drift: its
    runs and files are named by the file (and its digest)."""
    _stream_csv(tmp_path / "synthetic-mine.csv", flip=False)
    monkeypatch.chdir(tmp_path)
    assert main(["tune", "--dataset", "synthetic-mine.csv", "--model", "tlp", "--seeds", "0",
                 "--out-dir", str(tmp_path / "grid")]) == 0
    runs = list((tmp_path / "grid").glob("tlp_synthetic-mine.csv-*_seed0.json"))
    assert len(runs) == 1 and json.loads(runs[0].read_text())["dataset"] == "synthetic-mine.csv"


def test_tune_keeps_the_runs_of_two_stream_files_of_one_name_apart(tmp_path, capsys):
    """Two files data.csv in two folders (or one edited, or read with another label
    column) never share a run's JSON: the second search runs on its own file."""
    _stream_csv(tmp_path / "a" / "data.csv", flip=False)
    _stream_csv(tmp_path / "b" / "data.csv", flip=True)
    out = tmp_path / "grid"
    base = ["tune", "--model", "sledge-light", "--seeds", "0", "--grid", "lr=1e-3",
            "--grid", "hidden-channels=8", "--out-dir", str(out)]

    def search(*options):
        assert main([*base, *options]) == 0
        printed = capsys.readouterr().out
        return printed.split("best configuration written to ")[1].split(" ")[0]

    first = search("--dataset", str(tmp_path / "a" / "data.csv"))
    second = search("--dataset", str(tmp_path / "b" / "data.csv"))
    by_column = search("--dataset", str(tmp_path / "b" / "data.csv"), "--label-column", "0")
    runs = sorted(out.glob("sledge-light_data.csv-*_seed0.json"))
    assert len({first, second, by_column}) == 3 and len(runs) == 3
    sources = {json.loads(path.read_text())["dataset_source"] for path in runs}
    assert sources == {str((tmp_path / folder / "data.csv").resolve()) for folder in "ab"}
    # the same file found again, by another path, reuses its runs
    assert search("--dataset", str(tmp_path / "a" / ".." / "a" / "data.csv")) == first
    assert len(list(out.glob("*_seed0.json"))) == 3
    # with --limit, a search reads the rows its runs read: a tail edited since keeps its runs
    limited = search("--dataset", str(tmp_path / "a" / "data.csv"), "--limit", "30")
    with (tmp_path / "a" / "data.csv").open("a") as handle:
        handle.write("1,x,0\n")
    assert search("--dataset", str(tmp_path / "a" / "data.csv"), "--limit", "30") == limited
    assert len(list(out.glob("*_seed0.json"))) == 4


@pytest.mark.parametrize("content, problem", [
    ('{"accuracy": 0.5, "conf', "not JSON: Unterminated string"),
    ("[0.5]", "not a JSON object"),
    ('{"accuracy": 0.5}', "no ms_per_sample_median, config"),
])
def test_tune_names_a_file_in_out_dir_that_is_not_a_runs_json(tmp_path, capsys, content,
                                                               problem):
    """A grid run's JSON cut short (a disk full, a copy stopped) or replaced: one line
    naming it, before any run, not a traceback."""
    argv = ["tune", *SMALL, "--grid", "lr=1e-3", "--out-dir", str(tmp_path)]
    assert main(argv) == 0
    run, = tmp_path.glob("sledge-light_*_seed0.json")
    run.write_text(content)
    capsys.readouterr()
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"error: {run} is not a grid run's JSON ({problem}") and \
        error.endswith("delete it to run its point again\n") and len(error.splitlines()) == 1


def test_tune_passes_the_history_to_every_run(tmp_path, capsys):
    grid = ["--grid", "hidden-channels=8", "--out-dir", str(tmp_path)]
    assert main(["tune", *SMALL, *grid, "--history", "bounded"]) == 0
    (run,) = tmp_path.glob("sledge-light_*.json")
    record = json.loads(run.read_text())
    assert record["history"] == "bounded" and "tail_samples" in record


def _fake_runs(monkeypatch, records):
    """Let tune's grid runs write ``records[(lr, seed)]`` (entries of a run record,
    ``n_samples`` 60 unless given, and the run's configuration) instead of running;
    returns the ``(lr, seed)`` run."""
    ran = []

    def run_commands(missing, **kwargs):
        for argv, path in missing:
            lr, seed = argv[argv.index("--lr") + 1], int(argv[argv.index("--seed") + 1])
            ran.append((lr, seed))
            args = build_parser().parse_args(argv)  # its --config read here, uncounted
            config = run_module._plan(args, config_file=json.loads(
                args.config.read_text()) if args.config else {}).config
            path.write_text(json.dumps({"n_samples": 60, "ms_per_sample_median": 1.0,
                                        "config": config, **records[lr, seed]}))
        return [0] * len(missing)
    monkeypatch.setattr(tune_module, "run_commands", run_commands)
    return ran


def _ranking(path):
    with path.open() as handle:
        reader = csv.reader(handle)
        return next(reader), list(reader)


def test_tune_ranks_by_the_metric_asked_beside_the_accuracys_files(tmp_path, capsys,
                                                                    monkeypatch):
    """The majority class flatters the accuracy: balanced accuracy ranks otherwise,
    and writes files of its own (a tie keeps the grid's order, as the accuracy's)."""
    scores = {"1e-3": (0.9, 0.5), "5e-3": (0.85, 0.7), "1e-2": (0.8, 0.6), "2e-2": (0.8, 0.6)}
    _fake_runs(monkeypatch, {(lr, 0): {"accuracy": accuracy, "balanced_accuracy": balanced}
                             for lr, (accuracy, balanced) in scores.items()})
    argv = ["tune", *SMALL, "--grid", "lr=1e-3,5e-3,1e-2,2e-2", "--out-dir", str(tmp_path)]
    assert main(argv) == 0
    capsys.readouterr()
    by_accuracy = tmp_path / "ranking_sledge-light_synthetic_0.01.csv"
    best_by_accuracy = tmp_path / "best_sledge-light_synthetic_0.01.json"
    files = {path: path.read_text() for path in (by_accuracy, best_by_accuracy)}
    header, rows = _ranking(by_accuracy)
    assert header == ["rank", "lr", "seeds", "accuracy", "std", "ms_per_sample"]  # as before
    assert [row[1] for row in rows] == ["1e-3", "5e-3", "1e-2", "2e-2"]
    assert json.loads(best_by_accuracy.read_text())["lr"] == 1e-3

    assert main([*argv, "--metric", "balanced_accuracy"]) == 0
    printed = capsys.readouterr().out
    header, rows = _ranking(tmp_path / "ranking_sledge-light_synthetic_0.01_by-balanced_"
                                       "accuracy.csv")
    assert header == ["rank", "lr", "seeds", "balanced_accuracy", "std", "accuracy",
                      "ms_per_sample"]
    assert rows == [["1", "5e-3", "0", "0.700000", "", "0.850000", "1.000"],
                    ["2", "1e-2", "0", "0.600000", "", "0.800000", "1.000"],
                    ["3", "2e-2", "0", "0.600000", "", "0.800000", "1.000"],
                    ["4", "1e-3", "0", "0.500000", "", "0.900000", "1.000"]]
    best = tmp_path / "best_sledge-light_synthetic_0.01_by-balanced_accuracy.json"
    assert json.loads(best.read_text())["lr"] == 5e-3
    assert f"best configuration written to {best} " in printed
    assert ", ranked by balanced_accuracy" in printed
    table = printed.splitlines()
    header_line = next(line for line in table if line.startswith("rank"))
    assert header_line.split() == ["rank", "balanced_accuracy", "std", "accuracy", "seeds",
                                   "ms/sample", "point"]
    assert table[table.index(header_line) + 1].split() == ["1", "0.7000", "–", "0.8500", "1",
                                                            "1.00", "lr=5e-3"]
    assert {path: path.read_text() for path in files} == files  # the accuracy's files stay


def test_tune_confirms_the_best_points_by_the_metric(tmp_path, capsys, monkeypatch):
    balanced = {("1e-3", 0): 0.5, ("5e-3", 0): 0.7, ("1e-2", 0): 0.6,
                ("5e-3", 7): 0.5, ("1e-2", 7): 0.8}
    ran = _fake_runs(monkeypatch, {key: {"accuracy": 0.9 - 0.01 * i, "balanced_accuracy": value}
                                   for i, (key, value) in enumerate(balanced.items())})
    assert main(["tune", *SMALL, "--grid", "lr=1e-3,5e-3,1e-2", "--metric", "balanced_accuracy",
                 "--confirm-top", "2", "--confirm-seeds", "7", "--out-dir", str(tmp_path)]) == 0
    assert ran[3:] == [("5e-3", 7), ("1e-2", 7)]  # the top 2 by balanced accuracy, not accuracy
    _, rows = _ranking(tmp_path / "ranking_sledge-light_synthetic_0.01_by-balanced_accuracy.csv")
    assert [(row[1], row[2], row[3]) for row in rows] == [
        ("1e-2", "0 7", "0.700000"), ("5e-3", "0 7", "0.600000"), ("1e-3", "0", "0.500000")]
    assert float(rows[0][4]) == round(0.2 / 2 ** 0.5, 6)  # the std of the balanced accuracy
    assert json.loads(next(tmp_path.glob("best_*_by-balanced_accuracy.json")).read_text()
                      )["lr"] == 1e-2


def test_tune_refuses_by_name_a_record_without_the_metric_before_any_run(tmp_path, capsys,
                                                                         monkeypatch):
    """A record written before runs recorded balanced accuracy cannot be ranked by it
    (it can by accuracy): one line naming the file, not a KeyError."""
    ran = _fake_runs(monkeypatch, {("1e-3", 0): {"accuracy": 0.9},
                                   ("5e-3", 0): {"accuracy": 0.8, "balanced_accuracy": 0.7},
                                   ("1e-2", 0): {"accuracy": 0.7, "balanced_accuracy": 0.6}})
    argv = ["tune", *SMALL, "--grid", "lr=1e-3,5e-3", "--out-dir", str(tmp_path)]
    assert main(argv) == 0
    old = tmp_path / "sledge-light_synthetic_0.01_lr=1e-3_seed0.json"
    capsys.readouterr()
    assert main(["tune", *SMALL, "--grid", "lr=1e-3,5e-3,1e-2", "--metric", "balanced_accuracy",
                 "--out-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"error: {old} has no balanced_accuracy to rank by (a run record written before runs "
        f"recorded it); delete it to run its point again, or choose another --metric\n")
    assert len(ran) == 2  # refused before lr=1e-2 ran
    assert not list(tmp_path.glob("*_by-balanced_accuracy.*"))


@pytest.mark.parametrize("value, problem", [
    (None, "kappa is undefined for its run (null: the reference classifier of the kappa is "
           "right on every sample); choose another --metric"),
    ("0.5", "kappa must be a finite number, got '0.5'; delete it to run its point again"),
    (True, "kappa must be a finite number, got True; delete it to run its point again"),
    (float("nan"), "kappa must be a finite number, got nan; delete it to run its point again"),
])
def test_tune_refuses_a_metric_a_record_does_not_define(tmp_path, capsys, monkeypatch, value,
                                                         problem):
    _fake_runs(monkeypatch, {("1e-3", 0): {"accuracy": 0.9, "kappa": 0.2},
                             ("5e-3", 0): {"accuracy": 0.8, "kappa": value}})
    assert main(["tune", *SMALL, "--grid", "lr=1e-3,5e-3", "--metric", "kappa",
                 "--out-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"error: {tmp_path / 'sledge-light_synthetic_0.01_lr=5e-3_seed0.json'}: {problem}\n")


@pytest.mark.parametrize("metric, entry, value, kind", [
    ("balanced_accuracy", "accuracy", "q", "a finite number"),
    ("accuracy", "accuracy", float("inf"), "a finite number"),
    ("accuracy", "ms_per_sample_median", "1.0", "a finite number"),
    ("accuracy", "config", ["lr"], "an object"),
    ("accuracy_last_5", "tail_samples", [1], "an object of integers"),
    ("accuracy_last_5", "tail_samples", {"accuracy_last_5": True}, "an object of integers"),
    ("accuracy", "n_samples", "x", "an integer >= 1"),  # set against the tail_samples
    ("accuracy_last_5", "n_samples", "x", "an integer >= 1"),
    ("accuracy_last_5", "n_samples", 60.0, "an integer >= 1"),
    # before, these were ranked (a tail over -5 samples as over 1) or failed later
    ("accuracy", "n_samples", -5, "an integer >= 1"),
    ("accuracy_last_5", "n_samples", -5, "an integer >= 1"),
    ("accuracy_last_5", "n_samples", 0, "an integer >= 1"),
    ("accuracy_last_5", "tail_samples", {"accuracy_last_5": 61},
     "an object of integers in [1, n_samples 60]"),
    ("accuracy_last_5", "tail_samples", {"accuracy_last_5": 0},
     "an object of integers in [1, n_samples 60]"),
    ("accuracy", "tail_samples", {"accuracy_last_20": -3},
     "an object of integers in [1, n_samples 60]"),
])
def test_tune_refuses_a_reused_record_with_an_entry_no_run_writes(
        tmp_path, capsys, monkeypatch, metric, entry, value, kind):
    """A JSON skipped when present but edited by hand (or broken) in an entry that
    ranking reads: one line naming the file and the entry as ``compare`` does, before
    any run, not a traceback."""
    record = {"accuracy": 0.8, "balanced_accuracy": 0.7, "accuracy_last_5": 0.6}
    if entry == "n_samples" and metric == "accuracy":
        record["tail_samples"] = {"accuracy_last_5": 3}
    ran = _fake_runs(monkeypatch, {(lr, 0): record for lr in ("1e-3", "5e-3")})
    argv = ["tune", *SMALL, "--metric", metric, "--out-dir", str(tmp_path)]
    assert main([*argv, "--grid", "lr=1e-3"]) == 0
    path = tmp_path / "sledge-light_synthetic_0.01_lr=1e-3_seed0.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), entry: value}))
    capsys.readouterr()
    assert main([*argv, "--grid", "lr=1e-3,5e-3"]) == 2
    assert capsys.readouterr().err == (
        f"error: {path}: the entry {entry} must be {kind}, got {value!r}; delete it to run "
        f"its point again\n")
    assert ran == [("1e-3", 0)]  # refused before lr=5e-3 ran


def test_tune_ranks_a_tail_only_over_one_span(tmp_path, capsys, monkeypatch):
    """A --history bounded run's tail covers its record's tail_samples, the same for
    every bounded run of a stream: ranked with an exact tail of another span, refused."""
    tail = {"n_samples": 60_000, "accuracy": 0.8}
    records = {("1e-3", 0): {**tail, "accuracy_last_5": 0.6, "tail_samples": {
                   "accuracy_last_5": 3008, "accuracy_last_20": 12000}},
               ("5e-3", 0): {**tail, "accuracy_last_5": 0.7, "tail_samples": {
                   "accuracy_last_5": 3008, "accuracy_last_20": 12000}},
               ("1e-2", 0): {**tail, "accuracy_last_5": 0.9, "accuracy_last_20": 0.9}}  # full
    _fake_runs(monkeypatch, records)
    argv = ["tune", *SMALL, "--metric", "accuracy_last_5", "--out-dir", str(tmp_path)]
    assert main([*argv, "--grid", "lr=1e-3,5e-3", "--history", "bounded"]) == 0
    _, rows = _ranking(tmp_path / "ranking_sledge-light_synthetic_0.01_by-accuracy_last_5.csv")
    assert [row[1] for row in rows] == ["5e-3", "1e-3"]
    capsys.readouterr()
    # the runs' spans are checked again after they ran (here runs of a fresh --out-dir,
    # so no JSON present to check them against before)
    fresh = ["--out-dir", str(tmp_path / "fresh"), "--history", "bounded"]
    assert main([*argv, *fresh, "--grid", "lr=1e-3,5e-3,1e-2"]) == 2
    assert capsys.readouterr().err == (
        "error: sledge-light_synthetic_0.01_lr=1e-2_seed0.json and "
        "sledge-light_synthetic_0.01_lr=1e-3_seed0.json give accuracy_last_5 over the last "
        "3000 and 3008 samples (a --history bounded run's tail is over its record's "
        "tail_samples); rank runs of one --history: delete the stale JSON(s) or use another "
        "--out-dir\n")


@pytest.mark.parametrize("metric", ["ms_per_sample_median", "recall", "Accuracy"])
def test_tune_refuses_a_metric_it_cannot_rank_by_and_lists_the_choices(tmp_path, capsys,
                                                                        metric):
    assert main(["tune", *SMALL, "--grid", "lr=1e-3", "--metric", metric,
                 "--out-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"argument --metric: invalid choice: '{metric}'" in err
    assert ("'accuracy', 'balanced_accuracy', 'kappa', 'kappa_m', 'kappa_t', "
            "'accuracy_last_20', 'accuracy_last_10', 'accuracy_last_5'" in err)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("present, history, span, spans", [
    ("full", "bounded", 3000, "3000 samples, this search's --history bounded runs would "
                              "give it over the last 3008"),
    ("bounded", "full", 3008, "3008 samples, this search's --history full runs would give "
                              "it over the last 3000"),
])
def test_tune_refuses_a_tail_of_another_span_than_the_missing_runs_before_any_run(
        tmp_path, capsys, monkeypatch, present, history, span, spans):
    """JSONs of one --history in --out-dir and missing runs of the other: on a stream
    of more than 4096 samples their tails may cover other spans (60000 samples: the
    last 3000 and, the nearest position kept, 3008), refused before any run, not
    after them."""
    tail = {"n_samples": 60_000, "accuracy": 0.8, "accuracy_last_5": 0.7, "history": present}
    if present == "bounded":
        tail["tail_samples"] = {"accuracy_last_5": span}
    ran = _fake_runs(monkeypatch, {(lr, 0): tail for lr in ("1e-3", "5e-3")})
    argv = ["tune", *SMALL, "--metric", "accuracy_last_5", "--out-dir", str(tmp_path)]
    assert main([*argv, "--grid", "lr=1e-3", "--history", present]) == 0
    capsys.readouterr()
    assert main([*argv, "--grid", "lr=1e-3,5e-3", "--history", history]) == 2
    assert capsys.readouterr().err == (
        f"error: sledge-light_synthetic_0.01_lr=1e-3_seed0.json gives accuracy_last_5 over "
        f"the last {spans} (a --history bounded run's tail is over its record's "
        f"tail_samples); rank runs of one --history: delete the stale JSON(s), use another "
        f"--out-dir or run with the --history they used\n")
    assert ran == [("1e-3", 0)]  # nothing ran
    assert not (tmp_path / "sledge-light_synthetic_0.01_lr=5e-3_seed0.json").exists()
    # the runs of their --history do; nothing is checked when no run is missing
    assert main([*argv, "--grid", "lr=1e-3,5e-3", "--history", present]) == 0
    assert ran == [("1e-3", 0), ("5e-3", 0)]
    assert main([*argv, "--grid", "lr=1e-3,5e-3", "--history", history]) == 0
    assert ran == [("1e-3", 0), ("5e-3", 0)]


def test_tune_reuses_a_tail_of_either_history_of_a_short_stream(tmp_path, capsys):
    """Up to 4096 samples a --history bounded run's tails are exact: JSONs of either
    history rank together by a tail accuracy."""
    argv = ["tune", *SMALL, "--metric", "accuracy_last_5", "--out-dir", str(tmp_path)]
    assert main([*argv, "--grid", "lr=1e-3"]) == 0
    assert main([*argv, "--grid", "lr=1e-3,5e-3", "--history", "bounded"]) == 0
    histories = {path.name: json.loads(path.read_text())["history"]
                 for path in tmp_path.glob("sledge-light_*.json")}
    assert histories == {"sledge-light_synthetic_0.01_lr=1e-3_seed0.json": "full",
                         "sledge-light_synthetic_0.01_lr=5e-3_seed0.json": "bounded"}


def test_tune_names_the_one_value_grid_of_a_run_option_it_does_not_take(tmp_path, capsys):
    # before: "unrecognized arguments: --lr 1e-3 --no-supervise-graph" alone
    assert main(["tune", *SMALL, "--lr", "1e-3", "--no-supervise-graph", "--feature-range",
                 "0", "1", "--robust-clip", "--out-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: torch_geometric_stream tune: unrecognized arguments: --lr 1e-3 "
        "--no-supervise-graph --feature-range 0 1 --robust-clip; tune fixes an option through "
        "a one-value grid: --grid lr=1e-3 --grid supervise-graph=false --grid "
        "feature-range=0:1 --grid robust-clip=true")
    assert main(["tune", *SMALL, "--colour", "red", "--out-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.strip().endswith("unrecognized arguments: --colour red")
    assert not list(tmp_path.iterdir())


def test_tune_runs_a_synthetic_stream_of_the_length_and_drift_given(tmp_path, capsys):
    # before: --synthetic-samples and --synthetic-drift were unrecognized by tune
    stream = ["--dataset", "synthetic", "--model", "memory", "--synthetic-drift", "gradual",
              "--grid", "memory-size=20,30", "--out-dir", str(tmp_path)]
    assert main(["tune", *stream, "--synthetic-samples", "50"]) == 0
    runs = sorted(tmp_path.glob("memory_*.json"))
    assert [path.name for path in runs] == [
        "memory_synthetic-gradual_0.01_memory_size=20_seed0.json",
        "memory_synthetic-gradual_0.01_memory_size=30_seed0.json"]
    record = json.loads(runs[0].read_text())
    assert (record["dataset"], record["n_samples"], record["synthetic_samples"]) == (
        "synthetic-gradual", 50, 50)
    printed = capsys.readouterr().out
    assert printed.split("(use: python -m torch_geometric_stream ")[1].split(")\n")[0].endswith(
        "--synthetic-samples 50 --synthetic-drift gradual")
    # another length reuses no JSON of this one, as another --limit
    assert main(["tune", *stream, "--synthetic-samples", "60"]) == 2
    assert ("memory_synthetic-gradual_0.01_memory_size=20_seed0.json ran --synthetic-samples "
            "50, this search asks for --synthetic-samples 60; delete the stale JSON(s)"
            in capsys.readouterr().err)
    # a stream that does not read them refuses them, as run does, before any run
    assert main(["tune", "--dataset", "synthetic-sudden", "--model", "memory",
                 "--synthetic-drift", "gradual", "--out-dir", str(tmp_path / "other")]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: --dataset synthetic-sudden does not read --synthetic-drift (only --dataset "
        "synthetic does; setting it changes nothing); drop it")
    assert not (tmp_path / "other").exists()


def test_tune_naming_the_default_drift_reuses_the_search_that_left_it_out(tmp_path, capsys):
    # before: --synthetic-drift sudden (the default) named the files synthetic-sudden, so
    # the same search, run without the flag, ran again under the name synthetic
    stream = ["--dataset", "synthetic", "--model", "memory", "--synthetic-samples", "40",
              "--grid", "memory-size=20", "--out-dir", str(tmp_path)]
    assert main(["tune", *stream]) == 0
    first = sorted(path.name for path in tmp_path.glob("memory_*.json"))
    assert first == ["memory_synthetic_0.01_memory_size=20_seed0.json"]
    capsys.readouterr()
    assert main(["tune", *stream, "--synthetic-drift", "sudden"]) == 0
    assert sorted(path.name for path in tmp_path.glob("memory_*.json")) == first
    assert "start " not in capsys.readouterr().out


def test_tune_quiet_prints_the_ranking_without_each_runs_summary(tmp_path, capsys):
    # before: tune took no --quiet; with --jobs 1 every run printed its summary table
    argv = ["tune", *SMALL, "--grid", "lr=1e-3", "--out-dir", str(tmp_path)]
    assert main([*argv, "--quiet"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0].startswith("tune sledge-light on synthetic, label ratio 0.01")
    assert lines[1].split() == ["rank", "accuracy", "std", "seeds", "ms/sample", "point"]
    assert len(lines) == 5 and lines[2].endswith("lr=1e-3")  # and the two files written
    assert captured.err == ""  # no progress
    (path,) = tmp_path.glob("sledge-light_*.json")
    path.unlink()
    assert main(argv) == 0  # without: the run's start, summary and done lines too
    out = capsys.readouterr().out
    assert f"start {path.name}" in out and "sledge-light on synthetic-sudden" in out


def test_tune_runs_every_point_on_the_device_given(tmp_path, capsys):
    assert main(["tune", *SMALL, "--grid", "lr=1e-3", "--device", "cpu", "--quiet",
                 "--out-dir", str(tmp_path)]) == 0
    (path,) = tmp_path.glob("sledge-light_*.json")
    assert json.loads(path.read_text())["device"] == "cpu"
    assert main(["tune", *SMALL, "--device", "nosuchdevice", "--out-dir",
                 str(tmp_path / "other")]) == 2
    assert capsys.readouterr().err == ("error: invalid --device 'nosuchdevice' (e.g. cpu, "
                                       "cuda, cuda:0, mps)\n")
    assert not (tmp_path / "other").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
def test_tune_refuses_cuda_without_cuda_before_any_run(tmp_path, capsys):
    assert main(["tune", *SMALL, "--device", "cuda", "--out-dir", str(tmp_path / "grid")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "cuda" in err and len(err.splitlines()) == 1
    assert "--grid point" not in err and not (tmp_path / "grid").exists()


def test_tune_refuses_a_baseline_on_cuda_up_front_as_run_does(tmp_path, monkeypatch, capsys):
    """A CPU-only model on a device that exists is refused before any grid point is
    parsed, with run's message (before: named as the first grid point's error)."""
    monkeypatch.setattr(arguments_module, "check_device_exists",
                        lambda spec, *_: torch.device(spec))  # as if CUDA were here
    assert main(["tune", "--dataset", "synthetic", "--model", "tlp", "--limit", "60",
                 "--grid", "sigma=0.5,1", "--device", "cuda", "--out-dir",
                 str(tmp_path / "grid")]) == 2
    assert capsys.readouterr().err == "error: model 'tlp' runs on the CPU only, got --device cuda\n"
    assert not (tmp_path / "grid").exists()


def test_tune_warns_once_of_a_label_delay_past_the_streams_end(tmp_path, capsys):
    """The warning that every label comes after the end holds for every grid run: the
    search prints it once, its runs not (before: once per grid run)."""
    assert main(["tune", *SMALL, "--grid", "lr=1e-3,5e-3", "--label-delay", "60", "--quiet",
                 "--out-dir", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    assert err.count("warning: --label-delay 60 is at least the stream's length (60 "
                     "samples)") == 1


def test_tune_reads_its_config_file_once(tmp_path, monkeypatch, capsys):
    """--config is read once by the search, not again for each grid point's checks and
    file names (its runs read it, as a run does)."""
    base = tmp_path / "base.json"
    base.write_text(json.dumps({"hidden_channels": 8}))
    reads = []
    read = tune_module.read_config_file
    monkeypatch.setattr(tune_module, "read_config_file",
                        lambda path: reads.append(path) or read(path))
    monkeypatch.setattr(run_module, "read_config_file",
                        lambda path: reads.append(path) or read(path))
    ran = _fake_runs(monkeypatch, {(lr, seed): {"accuracy": 0.5} for lr in ("1e-3", "5e-3")
                                   for seed in (0, 1)})
    assert main(["tune", *SMALL, "--seeds", "0,1", "--grid", "lr=1e-3,5e-3", "--config",
                 str(base), "--quiet", "--out-dir", str(tmp_path / "grid")]) == 0
    assert len(ran) == 4 and reads == [base]  # before: again per point and per file name


def test_tune_searches_around_a_config_file_that_the_grid_overrides(tmp_path, capsys):
    # before: tune took no --config
    base = tmp_path / "base.json"
    base.write_text(json.dumps({"hidden_channels": 8, "lr": 0.5}))
    out = tmp_path / "grid"
    argv = ["tune", *SMALL, "--grid", "lr=1e-3,5e-3", "--quiet", "--out-dir", str(out)]
    assert main([*argv, "--config", str(base)]) == 0
    runs = sorted(out.glob("sledge-light_*.json"))
    assert [path.name for path in runs] == [
        f"sledge-light_synthetic_0.01_config=2c8c7803_lr={lr}_seed0.json"
        for lr in ("1e-3", "5e-3")]
    # a run's file name made before the search read the file reads it
    assert _grid_run_name([*argv, "--config", str(base)], {"lr": "1e-3"}, 0) == runs[0].name
    configs = [json.loads(path.read_text())["config"] for path in runs]
    assert [(config["hidden_channels"], config["lr"]) for config in configs] == [
        (8, 1e-3), (8, 5e-3)]  # the file's entry, the grid's over the file's
    assert json.loads(next(out.glob("best_*config=2c8c7803.json")).read_text())[
        "hidden_channels"] == 8
    capsys.readouterr()
    assert main(argv) == 0  # without the file: runs of its own
    assert len(list(out.glob("sledge-light_synthetic_0.01_lr=*_seed0.json"))) == 2
    base.write_text(json.dumps({"colour": "red"}))
    assert main([*argv, "--config", str(base)]) == 2
    assert capsys.readouterr().err.startswith(
        "error: --config: unknown configuration keys for model 'sledge-light': colour")


def test_a_best_file_that_would_overwrite_the_stream_or_a_grid_run_or_is_no_json_is_refused(
        tmp_path, capsys, monkeypatch):
    """Before: ``--best mine.csv`` replaced the stream by the best configuration;
    --config and a grid run's JSON were replaced alike; any name was written."""
    stream = tmp_path / "mine.csv"
    stream.write_text("a,b,label\n" + "".join(f"{i},{i % 3},{'xy'[i % 2]}\n"
                                              for i in range(20)))
    before = stream.read_text()
    monkeypatch.setattr(tune_module, "run_commands",
                        lambda *args, **kwargs: pytest.fail("ran"))
    out, config = tmp_path / "grid", tmp_path / "base.json"
    config.write_text('{"lr": 0.01}\n')
    argv = ["tune", "--dataset", str(stream), "--model", "memory", "--label-mask", "bernoulli",
            "--grid", "memory-size=40,60", "--seeds", "0,1", "--out-dir", str(out)]
    for best, message in [
            (stream, f"--dataset and --best name one file, {stream}: the --best file would "
                     f"overwrite it; give it another name"),
            (config, f"--config and --best name one file, {config}: the --best file would "
                     f"overwrite it; give it another name"),
            (out / "best.txt", f"--best writes JSON: give a FILE.json, got {out / 'best.txt'}")]:
        assert main([*argv, "--config", str(config), "--best", str(best)]) == 2
        assert capsys.readouterr().err == f"error: {message}\n"
    grid_run = _grid_run_name(argv, {"memory_size": "60"}, 1)
    assert main([*argv, "--best", str(out / grid_run)]) == 2
    assert capsys.readouterr().err == (
        f"error: the grid run memory_size=60 (seed 1) and --best name one file, "
        f"{out / grid_run}: the --best file would overwrite it; give it another name\n")
    assert stream.read_text() == before and config.read_text() == '{"lr": 0.01}\n'
    assert not list(out.iterdir())


def _grid_run_name(argv: list[str], point: dict[str, str], seed: int) -> str:
    """The name of the JSON of grid point ``point``'s run of ``seed`` in the
    ``tune`` command ``argv``."""
    return tune_module._run_path(build_parser().parse_args(argv), point, seed).name


def test_tune_refuses_runs_that_all_ran_under_settings_other_than_their_points(
        tmp_path, capsys):
    """Before: runs were compared with each other only, so JSONs that all ran under
    older defaults (k 7 here) were ranked, and the best configuration carried them."""
    grid = ["--grid", "lr=1e-3,5e-3", "--grid", "hidden-channels=8", "--out-dir", str(tmp_path)]
    assert main(["tune", *SMALL, *grid]) == 0
    runs = sorted(tmp_path.glob("sledge-light_*_seed0.json"))
    for path in runs:
        record = json.loads(path.read_text())
        assert record["config"]["k"] != 7
        record["config"]["k"] = 7
        path.write_text(json.dumps(record))
    capsys.readouterr()
    assert main(["tune", *SMALL, *grid]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {runs[0].name} was run with other settings than this search's point (k: 7 "
        f"vs 5: made under older defaults or another --config?); delete the stale JSON(s) or "
        f"use another --out-dir")


def test_tune_refuses_runs_made_on_another_copy_of_the_stream(tmp_path, capsys):
    """Before: a run was known by its stream's name and length, so a JSON made on
    another copy of a dataset (another version, prepared otherwise) was ranked;
    a record older than the digest is reused unchecked."""
    grid = ["--grid", "lr=1e-3", "--out-dir", str(tmp_path)]
    assert main(["tune", *SMALL, *grid]) == 0
    (run,) = tmp_path.glob("sledge-light_*_seed0.json")
    record = json.loads(run.read_text())
    digest = record.pop("data_sha256")
    run.write_text(json.dumps(record))
    assert main(["tune", *SMALL, *grid]) == 0  # older than the digest: reused
    run.write_text(json.dumps({**record, "data_sha256": "0" * 64}))
    capsys.readouterr()
    assert main(["tune", *SMALL, *grid]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {run.name} ran on another copy of the stream (data_sha256 00000000..., this "
        f"search's {digest[:8]}...); delete the stale JSON(s) or use another --out-dir")
