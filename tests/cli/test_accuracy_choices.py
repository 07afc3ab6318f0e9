"""``benchmarks/accuracy.py``: the tags and ``run`` options of each choice, and the
options column of the table of every run."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import accuracy  # noqa: E402
from accuracy import _check_tag_runs, _choice_tags, _options, choices_table  # noqa: E402
from accuracy_summary import current_config  # noqa: E402
from benchmark_script_helpers import usage_error, write_run_record  # noqa: E402
from torch_geometric_stream.cli.errors import UsageError  # noqa: E402

GRID = ["--models", "memory", "--datasets", "Shuttle", "--ratios", "0.01", "--seeds", "0",
        "--limit", "30"]


def test_cpu_tags_have_no_device_options():
    assert _choice_tags(["normalization=mean"], None) == {
        "choice-default": [], "choice-normalization=mean": ["--normalization", "mean"]}


def test_cuda_graph_runs_keep_the_cuda_tags():
    tags = _choice_tags(["count-offset=0"], "cuda", cuda_graph=True)
    assert tags == {
        "choice-default-cuda": ["--device", "cuda", "--cuda-graph"],
        "choice-count-offset=0-cuda": ["--count-offset", "0", "--device", "cuda",
                                       "--cuda-graph"]}


def test_a_suffix_keeps_a_repeat_of_the_study_apart():
    assert _choice_tags(["scaling=online"], None, suffix="s43") == {
        "choice-default-s43": [], "choice-scaling=online-s43": ["--scaling", "online"]}
    assert list(_choice_tags([], "cuda", suffix="s43")) == ["choice-default-cuda-s43"]


def test_a_defaults_tag_replaces_the_default_column():
    tags = _choice_tags(["bias-position=before"], None, suffix="s50",
                        defaults_tag="choice-normalization=mean-s43")
    assert tags == {"choice-normalization=mean-s43": [],
                    "choice-bias-position=before-s50": ["--bias-position", "before"]}


def _write_run(tag_dir: Path, config: dict, seed: int, preset: str = "paper") -> Path:
    tag_dir.mkdir(parents=True, exist_ok=True)
    path = tag_dir / f"sledge-light_MNIST_0.001_seed{seed}.json"
    path.write_text(json.dumps({"model": "sledge-light", "dataset": "MNIST",
                                "label_ratio": 0.001, "seed": seed, "limit": None, "accuracy": 0.5,
                                "preset": preset, "label_mask": "paper", "config": config}))
    return path


#: Today's configurations of the runs :func:`_write_run` writes, per preset.
TODAY = {preset: current_config("sledge-light", "MNIST", 0.001, preset)
         for preset in ("paper", "package")}


def test_a_defaults_tag_must_hold_runs_at_todays_configuration(tmp_path, monkeypatch):
    monkeypatch.setattr(accuracy, "RESULTS", tmp_path)
    today = current_config("sledge-light", "MNIST", 0.001)
    grid = (["sledge-light"], ["MNIST"], [0.001], [0, 2000], None)
    _write_run(tmp_path / "adopted", today, 0)
    _check_tag_runs("adopted", [], *grid, hint="")  # seed 2000 missing: run at today's
    _write_run(tmp_path / "adopted", {**today, "lam": today["lam"] * 10}, 2000)
    with pytest.raises(SystemExit, match="seed2000.json was not made at today's config"):
        _check_tag_runs("adopted", [], *grid, hint="")


def test_a_prefix_study_compares_the_configuration_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(accuracy, "RESULTS", tmp_path)
    path = _write_run(tmp_path / "adopted", TODAY["paper"], 0)
    prefix = {**json.loads(path.read_text()), "limit": 30}
    path.rename(path.with_name("sledge-light_MNIST_0.001_seed0_limit30.json")).write_text(
        json.dumps(prefix))
    _check_tag_runs("adopted", [], ["sledge-light"], ["MNIST"], [0.001], [0], 30, hint="")


def test_the_table_sets_each_choice_against_the_defaults_on_the_seeds_both_finished(
        tmp_path, monkeypatch):
    monkeypatch.setattr(accuracy, "RESULTS", tmp_path)
    for tag, seed, value in (("default", 0, 0.5), ("default", 2000, 0.7), ("default", 4000, 0.9),
                             ("choice", 0, 0.6), ("choice", 2000, 0.8), ("choice", 1000, 0.1)):
        write_run_record(tmp_path / tag / f"sledge_Shopper_0.001_seed{seed}.json", seed=seed,
                         accuracy=value)
    table = choices_table(["default", "choice"], ["sledge"], ["Shopper"], [0.001],
                          [0, 1000, 2000, 4000], None)
    # the choice's 0.7 against the defaults' 0.6 on seeds 0 and 2000, not their 0.7
    assert table.splitlines()[2:] == [
        "| Shopper | 0.001 | sledge | 0,2000,4000 | 0.7000 ± 0.2000 "
        "| 0.7000 ± 0.1414 (+0.1000, n=2) |"]


def test_a_study_refuses_a_run_of_its_own_defaults_left_at_another_configuration(
        tmp_path, monkeypatch):
    """Its existing runs are skipped, so a stale one would be compared as today's."""
    monkeypatch.setattr(accuracy, "RESULTS", tmp_path)
    today = current_config("sledge-light", "MNIST", 0.001)
    _write_run(tmp_path / "choice-default", {**today, "lam": today["lam"] * 10}, 0)
    grid = ["--models", "sledge-light", "--datasets", "mnist", "--ratios", "0.001",
            "--seeds", "0", "--choice", "lam=1"]
    with pytest.raises(SystemExit, match=r"the run choice-default/sledge-light_MNIST_"
                                         r"0.001_seed0.json was not made at today's "
                                         r"configuration .*; move it away, or give --suffix"):
        accuracy.main(["choices", *grid])
    assert list((tmp_path / "choice-default").iterdir()) == [
        tmp_path / "choice-default" / "sledge-light_MNIST_0.001_seed0.json"]  # nothing ran


@pytest.mark.parametrize("choice, config, differences", [
    # the choice's own option at another value: an earlier study's run of another value
    ("lam=1", {**TODAY["paper"], "lam": 0.5}, r"lam 0.5 \(today 1.0\)"),
    # the choice's value, but another entry changed since (today's default is not its)
    ("lam=1", {**TODAY["paper"], "lam": 1.0, "lr": 0.5},
     rf"lr 0.5 \(today {TODAY['paper']['lr']}\)"),
    ("preset=package", TODAY["package"], r"preset paper \(today package\)"),
])
def test_a_study_refuses_a_run_of_a_choice_left_at_another_configuration(
        choice, config, differences, tmp_path, monkeypatch):
    """A choice's existing runs are skipped as done too, so a stale one would be
    compared as today's: refused, naming the file and what differs."""
    monkeypatch.setattr(accuracy, "RESULTS", tmp_path)
    _write_run(tmp_path / f"choice-{choice}", config, 0)
    grid = ["--models", "sledge-light", "--datasets", "mnist", "--ratios", "0.001",
            "--seeds", "0", "--choice", choice]
    with pytest.raises(SystemExit, match=rf"^error: the run choice-{choice}/sledge-light_MNIST_"
                                         rf"0.001_seed0.json was not made at today's "
                                         rf"configuration of sledge-light on MNIST at 0.001 "
                                         rf"with --[a-z]+ [a-z0-9]+: {differences}; move it "
                                         rf"away, or give --suffix to run the study anew$"):
        accuracy.main(["choices", *grid])
    assert [path.name for path in tmp_path.rglob("*.json")] == [
        "sledge-light_MNIST_0.001_seed0.json"]  # nothing ran


def test_a_run_of_a_choice_at_todays_configuration_passes_the_check(tmp_path, monkeypatch):
    monkeypatch.setattr(accuracy, "RESULTS", tmp_path)
    _write_run(tmp_path / "choice-lam=1", {**TODAY["paper"], "lam": 1.0}, 0)
    _write_run(tmp_path / "choice-preset=package", TODAY["package"], 0, preset="package")
    grid = (["sledge-light"], ["MNIST"], [0.001], [0], None)
    _check_tag_runs("choice-lam=1", ["--lam", "1"], *grid, hint="")
    _check_tag_runs("choice-preset=package", ["--preset", "package"], *grid, hint="")


def test_a_suffix_that_is_not_a_folder_name_is_refused(tmp_path, monkeypatch, capsys):
    # (its tags were paths: choice-default-../x wrote outside the results folder)
    monkeypatch.setattr(accuracy, "RESULTS", tmp_path / "results")
    error = usage_error(accuracy.main, ["choices", *GRID, "--root", str(tmp_path),
                                        "--render-only", "--suffix", "a/b"], capsys)
    assert error.count("\n") == 1 and error.endswith(
        " choices: argument --suffix: expected a folder name (no '/', not '.' or '..'), "
        "got 'a/b'\n")
    assert not list(tmp_path.iterdir())


def test_a_choice_without_value_is_refused():
    with pytest.raises(UsageError, match="expected NAME=VALUE"):
        _choice_tags(["normalization"], None)


def test_options_name_what_a_run_switched_away_from_the_paper():
    record = {"model": "sledge", "config": {"class_prior": "memory", "light_memory": "full"}}
    assert _options(record) == ""  # light_memory counts for sledge-light only
    record.update(preset="package", label_mask="authors")
    record["config"]["class_prior"] = "stream"
    assert _options(record) == "preset=package, label_mask=authors, class_prior=stream"


def test_the_table_of_every_run_keeps_options_and_prefixes_apart():
    def run(seed, accuracy, seconds, ms, limit=None, threads=1, **config):
        return ("t", {"model": "sledge", "dataset": "Shuttle", "label_ratio": 0.01, "seed": seed,
                      "limit": limit, "n_samples": limit or 43500, "accuracy": accuracy,
                      "accuracy_last_20": accuracy - 0.1, "seconds": seconds,
                      "ms_per_sample_median": ms, "threads": threads,
                      "config": {"scaling": "online", **config}})
    runs = [run(0, 0.90, 100.0, 1.0), run(2000, 0.92, 110.0, 2.0), run(4000, 0.97, 150.0, 6.0),
            run(0, 0.80, 50.0, 1.0, class_prior="stream"), run(0, 0.70, 10.0, 1.0, limit=3000),
            run(0, 0.91, 40.0, 0.5, threads=4)]
    # the seconds and the ms per sample: means over the seeds; no paper value for a prefix;
    # a run with more threads in a row of its own, not in the mean of the 1-thread runs
    assert accuracy.render_tables(runs).splitlines()[2:] == [
        "| t | Shuttle | 0.01 | sledge | online |  | 3000 | 1 | 0.7000 |  | 0.6000 | 10 | 1.0 "
        "| 1 | cpu |",
        "| t | Shuttle | 0.01 | sledge | online |  | 43500 | 3 | 0.9300 ± 0.0361 | 0.9370 "
        "| 0.8300 ± 0.0361 | 120 | 3.0 | 1 | cpu |",
        "| t | Shuttle | 0.01 | sledge | online |  | 43500 | 1 | 0.9100 | 0.9370 | 0.8100 | 40 "
        "| 0.5 | 4 | cpu |",
        "| t | Shuttle | 0.01 | sledge | online | class_prior=stream | 43500 | 1 | 0.8000 "
        "| 0.9370 | 0.7000 | 50 | 1.0 | 1 | cpu |"]


def test_options_name_a_structural_override_of_the_package_preset():
    record = {"model": "sledge-light", "preset": "package",
              "config": {"num_layers": 1, "k": 5, "lr": 1e-3, "light_memory": "full"}}
    assert _options(record) == "preset=package, num_layers=1, light_memory=full"
    record["preset"] = "paper"  # the paper preset's structure is per dataset: not listed
    assert _options(record) == "light_memory=full"


def test_options_leave_out_the_entries_the_model_fixes():
    # +GSL records lam = 0 and +Static raw merges: the model, not an option
    assert _options({"model": "gsl", "preset": "package", "config": {"lam": 0.0}}) == (
        "preset=package")
    assert _options({"model": "static", "config": {"merge_similarity": "raw"}}) == ""
    assert _options({"model": "sledge", "config": {"merge_similarity": "raw"}}) == (
        "merge_similarity=raw")


@pytest.fixture
def no_runs(tmp_path, monkeypatch) -> Path:
    """An empty results folder in place of ``benchmarks/results/accuracy``, and a
    ``run_commands`` that fails the test: nothing may run."""
    monkeypatch.setattr(accuracy, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(accuracy, "run_commands",
                        lambda *_, **__: pytest.fail("a run started"))
    return tmp_path / "results"


@pytest.mark.parametrize("options, message", [
    (["--choice", "normaliztion=mean"],
     "error: the runs of choice-normaliztion=mean: torch_geometric_stream run: "
     "unrecognized arguments: --normaliztion mean"),
    (["--device", "cuda"],
     "error: the runs of choice-default-cuda: --device 'cuda': CUDA is not available"),
    (["--device", "cuda", "--choice", "lam=0.1"],  # the defaults' tag is checked too
     "error: the runs of choice-default-cuda: --device 'cuda': CUDA is not available"),
    (["--cuda-graph"], "error: the runs of choice-default: --cuda-graph needs a SLeDGe model "
                       "on CUDA, got model 'memory' on device cpu"),
    (["--choice", "normalization=mean"],  # every run of it would fail
     "error: the runs of choice-normalization=mean: its options: model 'memory' does not read "
     "normalization (setting it changes nothing); drop it"),
])
def test_every_runs_options_and_device_are_refused_before_any_run(
        options, message, no_runs, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # a CPU-only machine
    error = usage_error(accuracy.main, ["choices", *GRID, "--root", str(tmp_path), *options],
                        capsys)
    assert error.startswith(message) and error.count("\n") == 1
    assert not no_runs.exists()


def test_a_render_checks_no_device(no_runs, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    _write_run(no_runs / "choice-default-cuda", {}, 0)  # a GPU study rendered elsewhere
    run = no_runs / "choice-default-cuda" / "sledge-light_MNIST_0.001_seed0.json"
    run.write_text(json.dumps({**json.loads(run.read_text()), "accuracy": 0.5}))
    accuracy.main(["choices", "--render-only", "--device", "cuda", "--models", "sledge-light",
                   "--datasets", "mnist", "--ratios", "0.001", "--seeds", "0"])
    assert "| MNIST | 0.001 | sledge-light | 0 |" in (no_runs / "choices-cuda.md").read_text()


def test_a_render_without_the_defaults_leaves_the_table_file(tmp_path, monkeypatch):
    monkeypatch.setattr(accuracy, "RESULTS", tmp_path)
    run = _write_run(tmp_path / "choice-default", {}, 0)
    run.write_text(json.dumps({**json.loads(run.read_text()), "accuracy": 0.5}))
    table = tmp_path / "choices.md"
    table.write_text("the committed table\n")
    (tmp_path / "nosuch").mkdir()  # a tag without runs on the grid
    grid = ["--models", "sledge-light", "--datasets", "mnist", "--ratios", "0.001",
            "--seeds", "0"]
    with pytest.raises(SystemExit, match="nosuch has no finished run on the grid.*left as it"):
        accuracy.main(["choices", "--render-only", "--defaults-tag", "nosuch", *grid])
    with pytest.raises(SystemExit, match="choice-default has no finished run"):
        accuracy.main(["choices", "--render-only", *grid, "--limit", "30"])
    assert table.read_text() == "the committed table\n"
    accuracy.main(["choices", "--render-only", *grid])  # the default tag's run is there
    assert "| MNIST | 0.001 | sledge-light | 0 |" in table.read_text()


def test_the_check_of_a_tags_runs_reads_them_as_result_records(tmp_path, monkeypatch):
    # a study's check compares a run without its --limit: before, that copy was a
    # plain dict, and an entry it lacked a KeyError traceback, not the file named
    monkeypatch.setattr(accuracy, "RESULTS", tmp_path)
    path = _write_run(tmp_path / "adopted", TODAY["paper"], 0)
    monkeypatch.setattr(accuracy, "config_differences",
                        lambda record, *args: record["n_samples"])
    with pytest.raises(UsageError, match=rf"^{path}: lacks the entry n_samples "):
        _check_tag_runs("adopted", [], ["sledge-light"], ["MNIST"], [0.001], [0], None,
                        hint="")
