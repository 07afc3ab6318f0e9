"""The checks the benchmark scripts share instead of each keeping its own: no data
folder is ``machine.data_root``'s usage error, and a label ratio outside (0, 1]
is refused at parse time by the CLI's ``label_ratio`` type (both exit 2)."""
from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from benchmark_script_helpers import NO_DATA_FOLDER, usage_error, without_data_folder

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import machine  # noqa: E402


@pytest.mark.parametrize("script, argv", [
    ("label_timeline", ["--tag", "t", "--dataset", "Shopper", "--ratio", "0.01"]),
    ("seed_spread", ["--dataset", "Shuttle", "--ratio", "0.02", "--tags", "none"]),
    ("reference_accuracy", ["run"]),
    ("reference_accuracy", ["lockstep"]),
])
def test_no_data_folder_is_machine_s_usage_error(script, argv, tmp_path, monkeypatch, capsys):
    module = importlib.import_module(script)
    assert module.data_root is machine.data_root  # one check, no twin of it
    without_data_folder(monkeypatch, tmp_path)
    assert usage_error(module.main, argv, capsys).splitlines()[-1].endswith(NO_DATA_FOLDER)


@pytest.mark.parametrize("ratio", ["0", "1.5", "-0.001", "nan"])
@pytest.mark.parametrize("script, option, argv", [  # argv, then the ratio, then --root
    ("label_timeline", "--ratio", ["--tag", "t", "--dataset", "Shopper", "--ratio"]),
    ("seed_spread", "--ratio", ["--dataset", "Shuttle", "--tags", "none", "--ratio"]),
    ("graph_diagnostics", "--ratio", ["--ratio"]),
    ("peers", "--ratios", ["--datasets", "Shopper", "--learners", "KNN", "--ratios", "0.01"]),
    ("reference_accuracy", "--ratio", ["run", "--ratio"]),
    ("reference_accuracy", "--ratio", ["lockstep", "--ratio"]),
])
def test_a_label_ratio_outside_0_1_is_refused(script, option, argv, ratio, tmp_path, capsys):
    # (no such --root: refused after parsing, so an unchecked ratio fails fast, not by running)
    error = usage_error(importlib.import_module(script).main,
                        [*argv, ratio, "--root", str(tmp_path / "none")], capsys)
    assert error.splitlines()[-1].endswith(
        f"argument {option}: the label ratio must lie in (0, 1], got {ratio!r}")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("seed, message", [
    ("-1", "seed must be >= 0, got -1"),
    (str(2 ** 64), f"seed must be below 2**64, got {2 ** 64}"),
])
@pytest.mark.parametrize("script, option, argv", [  # argv, then the seed, then --root
    ("accuracy", "--seeds", ["run", "--seeds"]),
    ("graph_diagnostics", "--seed", ["--seed"]),
    ("label_timeline", "--seeds", ["--tag", "t", "--dataset", "Shopper", "--ratio", "0.01",
                                   "--seeds", "0"]),
    ("peers", "--seeds", ["--datasets", "Shopper", "--learners", "KNN", "--seeds"]),
    ("reference_accuracy", "--seed", ["run", "--seed"]),
    ("reference_accuracy", "--perturb-seeds", ["run", "--side", "ours", "--perturb", "1e-7",
                                               "--perturb-seeds"]),
    ("reference_accuracy", "--seed", ["lockstep", "--seed"]),
])
def test_a_seed_outside_0_2_64_is_refused(script, option, argv, seed, message, tmp_path,
                                          capsys):
    module = importlib.import_module(script)
    assert module.seed_value is machine.seed_value  # one type, on the package's check_seed
    # (no such --root: refused after parsing, so an unchecked seed fails fast, not by running)
    error = usage_error(module.main, [*argv, seed, "--root", str(tmp_path / "none")], capsys)
    assert error.splitlines()[-1].endswith(f"argument {option}: {message}")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("script, argv", [
    ("accuracy", ["run", "--models", "memory", "--datasets", "Shuttle", "--ratios", "0.01",
                  "--seeds", "0", "--limit", "30", "--tag", "no-such-root"]),
    ("accuracy", ["choices", "--choice", "normalization=mean", "--models", "sledge",
                  "--datasets", "Shuttle", "--ratios", "0.01", "--seeds", "0", "--limit", "30",
                  "--suffix", "no-such-root"]),
    ("draw_references", ["--dataset", "Shuttle", "--ratio", "0.01"]),
    ("feature_range", ["--datasets", "Shuttle"]),
    ("graph_diagnostics", ["--dataset", "Shuttle"]),
    ("quantile_range", ["--datasets", "Shuttle"]),
    ("reference_accuracy", ["run"]),
])
@pytest.mark.parametrize("by_environment", [False, True])
def test_a_data_folder_that_does_not_exist_is_one_usage_line(script, argv, by_environment,
                                                             tmp_path, monkeypatch, capsys):
    # before any run starts (accuracy ran every cell, each failing on its own) or
    # any file is written
    module = importlib.import_module(script)
    missing = tmp_path / "none"
    if by_environment:
        monkeypatch.setenv("TGS_DATA_ROOT", str(missing))
    else:
        argv = [*argv, "--root", str(missing)]
    if script == "accuracy":
        monkeypatch.setattr(module, "RESULTS", tmp_path / "results")
    error = usage_error(module.main, argv, capsys)
    assert error.splitlines()[-1].endswith(f": --root: folder {missing} does not exist")
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("script, argv, option", [
    ("cuda_step", [], "--out-dir"),
    ("draw_references", ["--dataset", "Shuttle", "--ratio", "0.01"], "--out"),
    ("feature_range", ["--datasets", "Shuttle"], "--out-dir"),
    ("graph_diagnostics", ["--dataset", "synthetic"], "--out-dir"),
    ("label_timeline", ["--tag", "t", "--dataset", "Shuttle", "--ratio", "0.01"], "--out-dir"),
    ("propagation", [], "--out-dir"),
    ("propagation", [], "--markdown"),
    ("quantile_range", [], "--out-dir"),
    ("seed_spread", ["--dataset", "Shuttle", "--ratio", "0.01", "--tags", "t"], "--out"),
    ("step_latency", [], "--out-dir"),
    ("step_latency", [], "--summary"),
    ("stream_length", [], "--out-dir"),
])
def test_an_output_inside_a_file_is_one_usage_line(script, argv, option, tmp_path, capsys):
    # (it was a NotADirectoryError traceback, after the runs for --markdown and --summary)
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    output = a_file / "inside" / ("out.md" if option in ("--markdown", "--summary") else "")
    # (refused right after parsing: before the data folder is looked for)
    error = usage_error(importlib.import_module(script).main, [*argv, option, str(output)],
                        capsys)
    assert error.splitlines()[-1].endswith(f"error: {option}: {a_file} is a file, not a folder")
    assert [path.name for path in tmp_path.iterdir()] == ["a_file"]


# (tiny runs: before the check, the runs came first)
TINY_PROPAGATION = ["--sizes", "2", "--ks", "1", "--hidden", "2", "--repeats", "1"]
TINY_STEP_LATENCY = ["--configs", "shuttle", "--models", "ours-light", "--sizes", "20",
                     "--warmup", "0", "--steps", "1"]
TINY_STREAM_LENGTH = ["--samples", "2", "--window", "1", "--warmup-windows", "0",
                      "--unlabeled-size", "1", "--hidden", "2"]


@pytest.mark.parametrize("script, argv, option", [
    ("propagation", TINY_PROPAGATION, "--markdown"),
    ("step_latency", TINY_STEP_LATENCY, "--markdown"),
    ("step_latency", TINY_STEP_LATENCY, "--summary"),
    ("stream_length", TINY_STREAM_LENGTH, "--markdown"),
])
def test_an_output_file_that_is_a_folder_is_one_usage_line(script, argv, option, tmp_path,
                                                           capsys):
    # (it was an IsADirectoryError traceback, after the runs)
    a_folder = tmp_path / "a_folder"
    a_folder.mkdir()
    argv = [*argv, "--out-dir", str(tmp_path / "out"), option, str(a_folder)]
    error = usage_error(importlib.import_module(script).main, argv, capsys)
    assert error.splitlines()[-1].endswith(f"error: {option}: {a_folder} is a folder, not a file")
    assert [path.name for path in tmp_path.iterdir()] == ["a_folder"]


#: A run's arguments of the scripts that read accuracy.py's run records (then
#: ``--results``, ``--root`` and the output folder follow).
RECORD_READERS = [
    ("label_timeline", ["--tag", "tag", "--dataset", "Shuttle", "--ratio", "0.01", "--seeds", "0"],
     "--out-dir"),
    ("seed_spread", ["--tags", "tag", "--dataset", "Shuttle", "--ratio", "0.01"], "--out"),
]


@pytest.mark.parametrize("script, argv, out", RECORD_READERS)
@pytest.mark.parametrize("text, problem", [
    ("{", "cannot read a run record (Expecting property name enclosed in double quotes: "
          "line 1 column 2 (char 1))"),
    ('{"seed": 0}', "not a record of python -m torch_geometric_stream run (it lacks dataset, "
                    "model, label_ratio, accuracy, config)"),
])
def test_a_malformed_run_record_is_one_usage_line_naming_it(script, argv, out, text, problem,
                                                            tmp_path, capsys):
    # (it was a JSONDecodeError, AttributeError or KeyError traceback)
    record = tmp_path / "tag" / "sledge_Shuttle_0.01_seed0.json"
    record.parent.mkdir()
    record.write_text(text)
    error = usage_error(importlib.import_module(script).main,
                        [*argv, "--results", str(tmp_path), "--root", str(tmp_path),
                         out, str(tmp_path / "out")], capsys)
    assert error.splitlines()[-1].endswith(f"error: {record}: {problem}")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["tag"]


@pytest.mark.parametrize("script, argv, out", RECORD_READERS)
@pytest.mark.parametrize("options, message", [
    (["--model", "sledgee"], "argument --model: invalid choice: 'sledgee' (choose from "
                             "'base', 'sledge', 'sledge-light', 'gsl', 'static', 'memory', "
                             "'tlp', 'ressl', 'hdssl')"),
    (["--results", "none"], "--results: folder {tmp_path}/none does not exist"),
    (["TAG", "../x"], "expected a folder name (no '/', not '.' or '..'), got '../x'"),
])
def test_bad_run_arguments_are_one_usage_line(script, argv, out, options, message, tmp_path,
                                              capsys):
    # (a tag ../x wrote the table to OUT/..._../x.md: a FileNotFoundError traceback at the end)
    if options[0] == "TAG":
        options = [argv[0], options[1]]
        message = f"argument {argv[0]}: {message}"
    else:
        options = [options[0], options[1].replace("none", str(tmp_path / "none"))]
        message = message.format(tmp_path=tmp_path)
    error = usage_error(importlib.import_module(script).main,
                        [*argv, "--results", str(tmp_path), "--root", str(tmp_path),
                         out, str(tmp_path / "out"), *options], capsys)
    assert error.splitlines()[-1].endswith(message)
    assert not list(tmp_path.iterdir())
