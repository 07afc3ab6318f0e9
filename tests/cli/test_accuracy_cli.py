"""``benchmarks/accuracy.py``'s command line: bad input refused up front in one line,
failed runs in the exit status, ``plot``'s silent cases, and Ctrl-C's advice."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import accuracy  # noqa: E402
from benchmark_script_helpers import usage_error, without_data_folder  # noqa: E402
from torch_geometric_stream.cli.errors import Interrupted  # noqa: E402

GRID = ["--models", "memory", "--datasets", "Shuttle", "--ratios", "0.01", "--seeds", "0",
        "--limit", "30"]


@pytest.fixture
def results(tmp_path, monkeypatch) -> Path:
    """An empty results folder in place of ``benchmarks/results/accuracy``."""
    monkeypatch.setattr(accuracy, "RESULTS", tmp_path / "results")
    return tmp_path / "results"


@pytest.mark.parametrize("options, message", [
    (["--models", "sledg"], "argument --models: invalid choice: 'sledg'"),
    (["--datasets", "shutle"], "argument --datasets: unknown dataset 'shutle'"),
    (["--limit", "0"], "argument --limit: expected a positive integer"),
    (["--seeds", "-1"], "argument --seeds: seed must be >= 0"),
    (["--jobs", "0"], "argument --jobs: expected a positive integer"),
    (["--threads", "0"], "argument --threads: expected a positive integer"),
    (["--threads", "1025"], "argument --threads: expected at most 1024 threads, got '1025'"),
    (["--checkpoint-every", "0"], "argument --checkpoint-every: expected a positive integer"),
])
def test_bad_grid_options_end_in_one_line(options, message, results, capsys):
    error = usage_error(accuracy.main, ["run", *options], capsys)  # exit status 2
    assert error.count("\n") == 1 and message in error
    assert not results.exists()


@pytest.mark.parametrize("tag", ["../x", "a/b", "..", ""])
def test_a_tag_that_is_not_a_folder_name_is_refused(tag, results, tmp_path, capsys):
    # (the runs went to results/../x, or to results/a/b where no report reads them)
    error = usage_error(accuracy.main, ["run", *GRID, "--root", str(tmp_path / "no-data"),
                                        "--tag", tag], capsys)
    assert error.count("\n") == 1 and error.endswith(
        f" run: argument --tag: expected a folder name (no '/', not '.' or '..'), "
        f"got {tag!r}\n")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("command", [["run"], ["choices"], ["compare", "base", "other"]])
@pytest.mark.parametrize("ratios", [["0.01", "0"], ["1.5"], ["-0.01"]])
def test_ratios_outside_0_1_are_refused_by_every_command(command, ratios, results, tmp_path,
                                                         capsys):
    grid = [*GRID, "--root", str(tmp_path)] if command[0] != "compare" else []
    error = usage_error(accuracy.main, [*command, *grid, "--ratios", *ratios], capsys)
    assert error.count("\n") == 1 and (
        f"argument --ratios: the label ratio must lie in (0, 1], got {ratios[-1]!r}" in error)
    assert not results.exists()


@pytest.mark.parametrize("command", ["run", "choices"])
def test_no_data_folder_is_a_usage_error(command, results, monkeypatch, tmp_path, capsys):
    without_data_folder(monkeypatch, tmp_path)
    error = usage_error(accuracy.main, [command, *GRID], capsys)
    assert error.startswith("error: ") and error.endswith(  # "error: accuracy.py run: ..."
        f" {command}: no data folder: pass --root or set TGS_DATA_ROOT\n")
    assert not results.exists()


def test_dataset_names_are_canonical(monkeypatch):
    grids = []
    monkeypatch.setattr(accuracy, "run_grid", grids.append)
    accuracy.main(["run", "--datasets", "shuttle", "gsad"])
    assert grids[0].datasets == ["Shuttle", "GSAD"]


@pytest.mark.parametrize("options, message", [
    (["--lamm", "1"], "unrecognized arguments: --lamm 1"),
    (["--device", "cuda"], "--device 'cuda': CUDA is not available on this machine"),
])
def test_bad_options_after_the_double_dash_are_refused_before_any_run(
        options, message, results, monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)  # a CPU-only machine
    error = usage_error(accuracy.main, ["run", *GRID, "--root", ".", "--", *options], capsys)
    assert error.startswith("error: the options after --: ") and error.count("\n") == 1
    assert message in error
    assert not results.exists()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_failed_runs_make_the_exit_status(jobs, results, tmp_path):
    (tmp_path / "no-data").mkdir()  # a data folder without the dataset: each run fails
    with pytest.raises(SystemExit, match=r"1 of 1 run\(s\) failed"):
        accuracy.main(["run", *GRID, "--jobs", jobs, "--root", str(tmp_path / "no-data")])


def test_plot_says_when_nothing_matched(results, capsys):
    (results / "tag").mkdir(parents=True)
    (results / "tag" / "memory_Shuttle_0.01_seed0_limit30.json").write_text(json.dumps(
        {"model": "sledge", "limit": 30, "curve": {}, "dataset": "Shuttle", "label_ratio": 0.01,
         "seed": 0, "accuracy": 0.5, "config": {}}))
    with pytest.raises(SystemExit, match="no run .* matched --models and --tags$"):
        accuracy.main(["plot", "--tags", "tag", "--models", "base"])
    with pytest.raises(SystemExit, match=r"\(all were made with --limit\)"):
        accuracy.main(["plot", "--tags", "tag"])
    assert "skipped 1 run(s) made with --limit" in capsys.readouterr().out


def test_ctrl_c_advises_rerunning_the_same_command(results, monkeypatch, capsys):
    def interrupt(*_, **__):
        raise Interrupted("run interrupted; rerun the same command with --resume x.ckpt")

    monkeypatch.setattr(accuracy, "run_commands", interrupt)
    with pytest.raises(SystemExit) as exit_:
        try:
            accuracy.main(["run", *GRID, "--checkpoint-every", "10", "--root", "."])
        except KeyboardInterrupt:
            pytest.fail("the interrupt escaped main()")
    error = capsys.readouterr().err
    assert exit_.value.code == 130 and error.count("\n") == 1
    assert "rerun the same accuracy.py command" in error and "--resume" not in error


@pytest.mark.parametrize("command", [
    ["render"], ["plot", "--tags", "tag"], ["compare", "tag", "tag"],
    ["choices", "--render-only", "--defaults-tag", "tag", "--models", "sledge", "--datasets",
     "Shuttle", "--ratios", "0.01", "--seeds", "0"],
])
def test_a_malformed_run_record_is_one_line_naming_it(command, results, tmp_path, monkeypatch,
                                                      capsys):
    # (it was a JSONDecodeError traceback)
    monkeypatch.setattr(accuracy, "RESULTS_MD", tmp_path / "RESULTS.md")
    (results / "tag").mkdir(parents=True)
    record = results / "tag" / "sledge_Shuttle_0.01_seed0.json"
    record.write_text("{")
    error = usage_error(accuracy.main, command, capsys)
    assert error == (f"error: {record}: cannot read a run record (Expecting property name "
                     "enclosed in double quotes: line 1 column 2 (char 1))\n")
    assert sorted(path.name for path in tmp_path.rglob("*")) == ["results", record.name, "tag"]


def test_a_record_that_is_no_run_s_is_one_line_naming_it(results, capsys):
    # (it was a KeyError traceback deep in the table)
    for tag in ("base", "other"):
        (results / tag).mkdir(parents=True)
        (results / tag / "sledge_Shuttle_0.01_seed0.json").write_text('{"seed": 0}')
    error = usage_error(accuracy.main, ["compare", "base", "other"], capsys)
    assert error == (f"error: {results / 'base' / 'sledge_Shuttle_0.01_seed0.json'}: not a "
                     "record of python -m torch_geometric_stream run (it lacks dataset, model, "
                     "label_ratio, accuracy, config)\n")


@pytest.mark.parametrize("command, option, value", [
    (["compare", "base"], "other", "../x"),
    (["compare", "base"], "other", "more-seeds,a/b"),
    (["plot", "--combine", "--tags", "base"], "--tags", "a/b"),
    (["choices", "--render-only", "--device"], "--device", "../x"),
    (["choices", "--render-only", "--choice"], "--choice", "config=a/b.json"),
    (["choices", "--render-only", "--defaults-tag"], "--defaults-tag", "../x"),
])
def test_a_tag_or_a_word_of_one_that_is_not_a_folder_name_is_refused(
        command, option, value, results, capsys):
    # (compare wrote compare-../x-vs-base.md: a FileNotFoundError traceback; plot wrote
    # base+a/b_*.png; choices used choice-default-../x as a tag)
    (results / "base").mkdir(parents=True)
    error = usage_error(accuracy.main, [*command, value], capsys)
    assert error.count("\n") == 1 and error.endswith(
        f" {command[0]}: argument {option}: expected a folder name (no '/', not '.' or '..'), "
        f"got {value.split(',')[-1]!r}\n")
    assert [path.name for path in results.iterdir()] == ["base"]


@pytest.mark.parametrize("command, message", [
    (["compare", "base", "other,typo"], "compare: typo: no such folder in"),
    (["compare", "typo", "other"], "compare: typo: no such folder in"),
    (["plot", "--combine", "--tags", "base", "typo"], "--tags: typo: no such folder in"),
    (["plot", "--tags", "typo"], "--tags: typo: no such folder in"),
    (["choices", "--defaults-tag", "typo", *GRID], "--defaults-tag: typo: no such folder in"),
])
def test_a_tag_without_its_folder_is_refused(command, message, results, capsys):
    # (plot drew base+typo_*.png; choices ran the defaults into the mistyped tag)
    for tag in ("base", "other"):
        (results / tag).mkdir(parents=True)
    error = usage_error(accuracy.main, [*command, "--root", "."] if command[0] == "choices"
                        else command, capsys)
    assert error == f"error: {message} {results}\n"
    assert sorted(path.name for path in results.iterdir()) == ["base", "other"]


def test_render_without_any_run_leaves_results_md(results, tmp_path, monkeypatch, capsys):
    # (it replaced RESULTS.md's tables with empty ones)
    results_md = tmp_path / "RESULTS.md"
    results_md.write_text("the committed tables\n")
    monkeypatch.setattr(accuracy, "RESULTS_MD", results_md)
    results.mkdir()
    error = usage_error(accuracy.main, ["render"], capsys)
    assert error == f"error: no run record in {results}; RESULTS.md left as it is\n"
    assert results_md.read_text() == "the committed tables\n"
    assert not list(results.iterdir())


def _today_record(seed: int, accuracy_value: float) -> dict:
    """A whole-stream SLeDGe run on Shuttle at 1 % at today's paper configuration."""
    return {"model": "sledge", "dataset": "Shuttle", "label_ratio": 0.01, "seed": seed,
            "limit": None, "n_samples": 58000, "accuracy": accuracy_value,
            "accuracy_last_20": accuracy_value, "preset": "paper",
            "label_mask": "paper", "seconds": 100.0, "ms_per_sample_median": 2.0,
            "config": accuracy.current_config("sledge", "Shuttle", 0.01)}


def test_render_writes_the_readme_table_between_the_readme_s_markers_only(
        results, tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(accuracy, "RESULTS_MD", tmp_path / "RESULTS.md")
    (results / "tag").mkdir(parents=True)
    for seed, value in ((0, 0.9), (2000, 0.95), (4000, 0.92)):
        (results / "tag" / f"sledge_Shuttle_0.01_seed{seed}.json").write_text(
            json.dumps(_today_record(seed, value)))
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{accuracy.README_BEGIN}\nold table\n{accuracy.README_END}\n"
                      "outro\n")
    monkeypatch.setattr(accuracy, "README_MD", readme)
    accuracy.main(["render"])
    text = readme.read_text()
    assert text.startswith(f"intro\n{accuracy.README_BEGIN}\n| stream, labels | SLeDGe, ")
    assert text.endswith(f"|\n{accuracy.README_END}\noutro\n") and "old table" not in text
    assert ("| Shuttle 1 % | 0.9233 ± 0.0252 | – | 0.9370 ± 0.0132 | – | – | 0.8519 ± 0.0360 |"
            in text)
    readme.write_text("a README without the markers\n")   # left as it is
    accuracy.main(["render"])
    assert readme.read_text() == "a README without the markers\n"
    kept = f"{accuracy.README_BEGIN}\nthe table\n{accuracy.README_END}\n"
    readme.write_text(kept)   # no SLeDGe run: the table is kept, not emptied
    for path in (results / "tag").iterdir():
        path.write_text(json.dumps({**json.loads(path.read_text()), "model": "tlp"}))
    accuracy.main(["render"])
    assert readme.read_text() == kept
    capsys.readouterr()


def test_the_readme_s_table_is_what_render_writes_from_the_committed_records():
    if not accuracy.RESULTS.is_dir():
        pytest.skip("no committed run records")
    text = accuracy.README_MD.read_text()
    start = text.index(accuracy.README_BEGIN) + len(accuracy.README_BEGIN) + 1
    committed = text[start:text.index(accuracy.README_END) - 1]
    assert committed == accuracy.readme_table(accuracy.load_records(), accuracy.PAPER,
                                              accuracy.PAPER_STD), (
        "README.md's accuracy table is stale: run python benchmarks/accuracy.py render")
