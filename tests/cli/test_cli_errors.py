"""Bad input: exit code 2, one ``error:`` line on stderr, no traceback."""
from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest
import torch

from torch_geometric_stream.cli import build_parser, main
from torch_geometric_stream.cli.arguments import parse_seeds, seed_value
from torch_geometric_stream.cli.errors import UsageError, one_line

BAD_INPUTS = {
    "unknown dataset": ["--dataset", "nosuchdata"],
    "ratio zero": ["--label-ratio", "0"],
    "ratio above one": ["--label-ratio", "1.5"],
    "ratio not a number": ["--label-ratio", "abc"],
    "unknown model": ["--model", "nosuchmodel"],
    "bad seed": ["--seed", "0,x"],
    "bad device": ["--device", "nosuchdevice"],
    "bad tau": ["--tau", "-1"],
    "bad k": ["--k", "-3"],
    "missing config file": ["--config", "{tmp}/absent.json"],
    "bad JSON config": ["--config", "{tmp}/bad.json"],
    "config not an object": ["--config", "{tmp}/list.json"],
    "unknown config key": ["--config", "{tmp}/unknown.json"],
    "missing output folder": ["--output", "{tmp}/absent/out.json"],
    "plot format matplotlib does not write": ["--plot", "{tmp}/curve.txt"],
    "baseline with SLeDGe flag": ["--model", "tlp", "--lr", "0.1"],
    "SLeDGe with a baseline flag": ["--knn", "5"],
    "baseline with another's flag": ["--model", "tlp", "--decay", "0.1"],
    "bad bandwidth": ["--model", "tlp", "--sigma", "-1"],
    "bad prune threshold": ["--model", "hdssl", "--prune-threshold", "nan"],
    "zero window": ["--model", "ressl", "--window", "0"],
    "HDSSL's chunk size to ReSSL": ["--model", "ressl", "--chunk-size", "3"],
    "zero radius k of ReSSL": ["--model", "ressl", "--radius-k", "0"],
    "missing dataset folder": ["--dataset", "mnist", "--root", "{tmp}/empty"],
    "zero limit": ["--limit", "0"],
    "memory size beside both of its parts": ["--memory-size", "100", "--labeled-size", "5",
                                             "--unlabeled-size", "5"],
    "alpha above one": ["--alpha", "1.5"],
    "beta not a number": ["--beta", "often"],
    "baseline scaling inside": ["--model", "ressl", "--scaling", "online-rescale"],
    "MLP scaling inside": ["--model", "base", "--scaling", "online-rescale"],
    "baseline robust scaling inside": ["--model", "tlp", "--scaling", "robust-rescale"],
    "robust quantile without robust scaling": ["--preset", "package", "--robust-quantile",
                                               "0.05"],
    "robust tolerance without robust scaling": ["--scaling", "online",
                                                "--robust-tolerance", "0"],
    "robust quantile of one half": ["--scaling", "robust-rescale", "--robust-quantile", "0.5"],
    "negative robust tolerance": ["--scaling", "robust-rescale", "--robust-tolerance", "-1"],
    "empty robust reservoir": ["--scaling", "robust-rescale", "--robust-reservoir", "0"],
    "robust window below the reservoir": ["--scaling", "robust-rescale", "--robust-window",
                                          "999"],
    "zero robust window": ["--scaling", "robust", "--model", "tlp", "--robust-window", "0"],
    "robust window without robust scaling": ["--scaling", "online", "--robust-window", "5000"],
    "baseline robust quantile of one half": ["--model", "tlp", "--scaling", "robust",
                                             "--robust-quantile", "0.5"],
    "source merge without a learner scaling": ["--scaling", "online", "--source-merge",
                                               "unit"],
    "source merge of MLP": ["--model", "base", "--source-merge", "unit"],
    "unknown source merge": ["--source-merge", "paper"],
    "CUDA graph on the CPU": ["--device", "cpu", "--cuda-graph"],
    "CUDA graph of a baseline": ["--model", "tlp", "--cuda-graph"],
}

#: Bad input refused before the run, by a line naming the option at fault:
#: ``(run options, the line's start)``.
NAMED_ERRORS = {
    "output is a folder": (["--output", "{tmp}/empty"], "--output: {tmp}/empty is a folder"),
    "csv is a folder": (["--csv", "{tmp}/empty"], "--csv: {tmp}/empty is a folder"),
    "plot is a folder": (["--plot", "{tmp}/empty"], "--plot: {tmp}/empty is a folder"),
    "checkpoint is a folder": (["--checkpoint", "{tmp}/empty"],
                               "--checkpoint: {tmp}/empty is a folder"),
    "output in a file": (["--output", "{tmp}/bad.json/out.json"],
                         "--output: {tmp}/bad.json is a file, not a folder"),
    # not taken for inf; before: "tau must be a positive number or 'inf', got -inf",
    # which named no option (as --tau -1, --tau 0 and --tau nan), and "--tau -inf" said
    # "argument --tau: expected one argument"
    "tau of minus infinity": (["--tau=-Infinity"], "torch_geometric_stream run: argument "
                                                   "--tau: expected a positive number or "
                                                   "'inf', got '-Infinity'"),
    "tau of minus inf": (["--tau", "-inf"], "torch_geometric_stream run: argument --tau: "
                                            "expected a positive number or 'inf', got '-inf'"),
    "negative tau": (["--tau", "-1"], "torch_geometric_stream run: argument --tau: expected a "
                                      "positive number or 'inf', got '-1'"),
    "tau of zero": (["--tau=0"], "torch_geometric_stream run: argument --tau: expected a "
                                 "positive number or 'inf', got '0'"),
    "tau of nan": (["--tau=nan"], "torch_geometric_stream run: argument --tau: expected a "
                                  "positive number or 'inf', got 'nan'"),
    "learning rate of minus infinity": (["--lr", "-Infinity"],
                                        "configuration: lr must be a finite number >= 0, got "
                                        "-inf"),
    "seed beyond 2**64": (["--seed", str(2 ** 70)], "--seed must be below 2**64"),
    "unknown dataset": (["--dataset", "Shutle"], "--dataset: unknown dataset 'Shutle'; valid "
                                                 "names: MNDS, Shopper"),
    "drift of a synthetic-<drift> name": (
        ["--dataset", "synthetic-gradual", "--synthetic-drift", "sudden"],
        "--dataset synthetic-gradual does not read --synthetic-drift"),
    "synthetic length of a real stream": (["--synthetic-samples", "50"],
                                          "the bundled default stream does not read "
                                          "--synthetic-samples"),
    # before: accepted, though only a paper dataset read from --root reads it
    "strict of a stream file": (["--dataset", "{tmp}/stream.csv", "--strict"],
                                "--dataset {tmp}/stream.csv does not read --strict (only "
                                "the paper's datasets, read from a data folder, do; setting "
                                "it changes nothing); drop it"),
    "strict of a synthetic stream": (["--dataset", "synthetic", "--strict"],
                                     "--dataset synthetic does not read --strict"),
    # before: accepted (propagating the raw similarities), as --normalization none is not
    "normalization none in a config": (["--dataset", "synthetic", "--config",
                                        "{tmp}/none.json"],
                                       "--config: normalization must be one of symmetric, "
                                       "symmetric-add, mean (as --normalization), got 'none'"),
    "range scaling of a stream of no value range": (
        ["--dataset", "synthetic", "--scaling", "range"],
        "--scaling range: scaling='range' needs value_range=(low, high)"),
    "tau of no number": (["--tau", "word"], "torch_geometric_stream run: argument --tau: "
                                            "expected a positive number or 'inf', got 'word'"),
    # before: without the "--config:" that names the file's other errors
    "tau of no number in a config": (["--dataset", "synthetic", "--config", "{tmp}/tau.json"],
                                     "--config: tau must be a positive number or 'inf', got "
                                     "'abc'"),
    # before: light_memory listed too, which sledge does not read (refused as an option)
    "valid keys of sledge": (["--dataset", "synthetic", "--model", "sledge", "--sigma", "1"],
                             "options: unknown configuration keys for model 'sledge': sigma "
                             "(valid: memory_size, labeled_size, unlabeled_size, k, "
                             "hidden_channels, embedding_layers, num_layers, normalization, "
                             "bias_position, regularizer, lam, tau, lr, weight_decay, "
                             "propagation, scaling, alpha, beta, class_prior, reselect_every, "
                             "search_dtype, feature_transform, count_offset, "
                             "merge_similarity, source_merge, supervise_graph, "
                             "robust_quantile, "
                             "robust_tolerance, robust_reservoir, robust_window, robust_clip, "
                             "feature_range)"),
    "labeled memory beyond the memory": (["--labeled-size", "5000"],
                                         "--labeled-size 5000 exceeds the memory size 1000 "
                                         "(--memory-size)"),
    "missing data folder": (["--dataset", "mnist", "--root", "{tmp}/absent"],
                            "--root: folder {tmp}/absent does not exist"),
    "data folder a file": (["--dataset", "mnist", "--root", "{tmp}/bad.json"],
                           "--root: {tmp}/bad.json is a file, not a folder"),
    "missing stream file": (["--dataset", "{tmp}/absent.csv"],
                            "stream file {tmp}/absent.csv does not exist"),
    "stream file a folder": (["--dataset", "{tmp}/folder.csv"],
                             "stream file {tmp}/folder.csv is a folder, not a file"),
    # before: "--dataset: unknown dataset '.../bad.json'; valid names: MNDS, ...", which
    # named neither the file's suffix nor the suffixes a stream file takes
    # before: "unknown dataset 'nothing.txt'; valid names: ...", which did not say that
    # no file of that name was there, nor the suffixes of a stream file
    "no file of a file's name": (["--dataset", "{tmp}/nothing.txt"],
                                 "--dataset: no file {tmp}/nothing.txt is there, and unknown "
                                 "dataset '{tmp}/nothing.txt'; valid names: MNDS, "),
    "stream file of another suffix": (["--dataset", "{tmp}/bad.json"],
                                      "--dataset: {tmp}/bad.json is not a stream file: its "
                                      "name must end in .csv, .csv.gz, .npz, .arff, "
                                      ".arff.gz (convert or rename it)"),
    "dataset folder as the dataset": (["--dataset", "{tmp}/empty"],
                                      "--dataset: {tmp}/empty is a folder; for a dataset's "
                                      "folder give its name and the folder above it "
                                      "(--dataset NAME --root DIR)"),
}

#: ``tune`` output paths that cannot be written: ``(option, path, the line's start)``.
TUNE_OUTPUT_PATHS = [("--out-dir", "{tmp}/bad.json", "--out-dir: {tmp}/bad.json is a file, "
                                                     "not a folder"),
                     ("--best", "{tmp}/empty", "--best: {tmp}/empty is a folder")]


@pytest.fixture
def tmp(tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "unknown.json").write_text('{"k": 3, "nosuchkey": 1}')
    (tmp_path / "empty").mkdir()
    (tmp_path / "folder.csv").mkdir()
    (tmp_path / "stream.csv").write_text("a,y\n1,0\n2,1\n")
    (tmp_path / "none.json").write_text('{"normalization": "none"}')
    (tmp_path / "tau.json").write_text('{"tau": "abc"}')
    return tmp_path


@pytest.fixture
def no_run(monkeypatch):
    """An evaluation that starts fails the test: the checks come before it."""
    from torch_geometric_stream.cli import run as run_module

    def evaluate(*args, **kwargs):
        raise AssertionError("the run started")
    monkeypatch.setattr(run_module, "prequential", evaluate)


def _check_one_error_line(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_run_input_exits_2(case, tmp, capsys):
    argv = ["run", *(arg.format(tmp=tmp) for arg in BAD_INPUTS[case]), "--quiet"]
    _check_one_error_line(argv, capsys)


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
def test_cuda_without_cuda_exits_2(capsys):
    _check_one_error_line(["run", "--device", "cuda"], capsys)


def test_missing_subcommand_exits_2(capsys):
    _check_one_error_line([], capsys)


@pytest.mark.parametrize("case", list(NAMED_ERRORS))
def test_bad_run_input_is_named_before_the_run_starts(case, tmp, capsys, no_run):
    options, message = NAMED_ERRORS[case]
    line = _check_one_error_line(["run", *(arg.format(tmp=tmp) for arg in options), "--quiet"],
                                 capsys)
    assert line.startswith(f"error: {message.format(tmp=tmp)}"), line


def test_tune_names_a_missing_data_folder_before_any_run(tmp, capsys, no_run):
    line = _check_one_error_line(["tune", "--dataset", "mnist", "--root", str(tmp / "absent"),
                                  "--out-dir", str(tmp / "grid")], capsys)
    assert line == f"error: --root: folder {tmp / 'absent'} does not exist"
    assert not (tmp / "grid").exists()


@pytest.mark.parametrize("command", ["run", "tune"])
def test_a_missing_data_folder_from_the_environment_is_named_as_such(command, tmp, capsys,
                                                                    monkeypatch, no_run):
    # before: "--root: folder ... does not exist", an option the command line never gave
    monkeypatch.setenv("TGS_DATA_ROOT", str(tmp / "absent"))
    outputs = ["--out-dir", str(tmp / "grid")] if command == "tune" else ["--quiet"]
    line = _check_one_error_line([command, "--dataset", "mnist", *outputs], capsys)
    assert line == f"error: $TGS_DATA_ROOT: folder {tmp / 'absent'} does not exist"


@pytest.mark.parametrize("argv, unknown", [
    (["run", "--datset", "mnist"], "--datset mnist"),
    (["tune", "--dataset", "synthetic", "--grid", "k=3", "--out-dir", "grid", "--modle", "x"],
     "--modle x"),
    (["compare", "a.json", "--baseline-of", "b"], "--baseline-of b"),
    (["datasets", "--roots", "data"], "--roots data"),
])
def test_a_mistyped_option_is_named_by_its_command(argv, unknown, capsys, no_run):
    # before: "torch_geometric_stream: unrecognized arguments: ...", as if the
    # option were the top-level command's
    line = _check_one_error_line(argv, capsys)
    assert line == f"error: torch_geometric_stream {argv[0]}: unrecognized arguments: {unknown}"


@pytest.mark.parametrize("option", ["--config", "--resume"])
def test_a_missing_input_file_is_named_alike_for_every_option(option, tmp, capsys, no_run):
    # before: "cannot read --config file F: No such file or directory" and "--resume:
    # cannot read checkpoint F: FileNotFoundError: [Errno 2] No such file or directory: 'F'"
    line = _check_one_error_line(["run", option, str(tmp / "absent"), "--quiet"], capsys)
    assert line == f"error: {option}: file {tmp / 'absent'} does not exist"
    line = _check_one_error_line(["run", option, str(tmp / "empty"), "--quiet"], capsys)
    assert line == f"error: {option}: {tmp / 'empty'} is a folder, not a file"


def test_a_config_file_that_cannot_be_read_is_named_as_a_missing_one(tmp, capsys,
                                                                       monkeypatch, no_run):
    def refuse(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(Path, "read_text", refuse)
    line = _check_one_error_line(["run", "--config", str(tmp / "list.json"), "--quiet"], capsys)
    assert line == f"error: --config: cannot read file {tmp / 'list.json'} (Permission denied)"


@pytest.mark.parametrize("name, content, message", [
    ("bad.json", None, "file {path} is not valid JSON (Expecting property name enclosed in "
                       "double quotes: line 1 column 2 (char 1))"),
    ("list.json", None, "file {path} must hold a JSON object, got list"),
    ("unknown.json", None, "unknown configuration keys for model 'sledge-light': nosuchkey "
                           "(valid: "),
    ("gsl.json", '{"lam": 0.5}', "model 'gsl' always runs with lam = 0.0; drop lam, or use "
                                 "model 'sledge' to set it"),
])
def test_every_config_file_error_names_the_option_alike(name, content, message, tmp, capsys,
                                                        no_run):
    # before: "--config file F is not valid JSON: ...", "--config file F must hold ...",
    # "--config file: unknown configuration keys ...", beside "--config: file F does not exist"
    path = tmp / name
    if content is not None:
        path.write_text(content)
    model = ["--model", "gsl"] if name == "gsl.json" else []
    line = _check_one_error_line(["run", "--config", str(path), *model, "--quiet"], capsys)
    assert line.startswith(f"error: --config: {message.format(path=path)}"), line


@pytest.mark.parametrize("option, path, message", TUNE_OUTPUT_PATHS)
def test_a_tune_output_path_that_cannot_be_written_stops_it_before_any_run(
        option, path, message, tmp, capsys, no_run):
    argv = ["tune", "--dataset", "synthetic", "--model", "memory", "--limit", "30",
            "--grid", "hidden-channels=8", "--out-dir", str(tmp / "grid"), option,
            path.format(tmp=tmp)]
    assert _check_one_error_line(argv, capsys).startswith(f"error: {message.format(tmp=tmp)}")


@pytest.mark.parametrize("command", ["run", "tune", "datasets"])
def test_help_is_plain_text_and_explains_every_option(command, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("TGS_DATA_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)  # no data folder: --root has no default
    parser = next(action for action in build_parser()._actions
                  if isinstance(action, argparse._SubParsersAction)).choices[command]
    assert [action.dest for action in parser._actions if not action.help] == []
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "None" not in text and "``" not in text and ":mod:" not in text
    assert "the nearest shared/data; none found here)" in text


def test_a_plot_path_matplotlib_cannot_write_stops_the_run_before_it_starts(tmp, capsys,
                                                                           no_run):
    assert main(["run", "--limit", "20", "--plot", str(tmp / "curve.txt"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--plot: cannot plot to" in err and "matplotlib writes" in err and "'txt'" in err
    assert "png" in err and "svg" in err


def test_missing_dataset_error_names_folder_and_url(tmp, capsys):
    folder = tmp / "empty" / "Shuttle"
    line = _check_one_error_line(["run", "--dataset", "shuttle", "--root", str(tmp / "empty")],
                                 capsys)
    assert line == (f"error: dataset folder {folder} does not exist; dataset 'Shuttle': "
                    f"searched folder {folder}; expected files (each text file may also be "
                    f"gzip-compressed as <name>.gz): shuttle.trn, shuttle.tst; the dataset is "
                    f"published at https://archive.ics.uci.edu/dataset/148/statlog+shuttle")


def test_a_multi_line_message_reads_as_one_line():
    message = "folder x does not exist\nexpected files:\n  - a.csv\n  - b.csv\nsee http://u"
    assert one_line(ValueError(message)) == (
        "folder x does not exist; expected files: a.csv, b.csv; see http://u")
    assert one_line(ValueError("")) == "ValueError"
    assert one_line(ValueError("first\n\n  \nsecond\n")) == "first; second"  # blank lines


def test_a_config_files_robust_entry_with_a_flag_scaling_names_the_entry(tmp_path, capsys):
    config = tmp_path / "robust.json"
    config.write_text('{"robust_quantile": 0.05}')
    assert main(["run", "--preset", "package", "--config", str(config),
                 "--scaling", "online-rescale"]) == 2
    err = capsys.readouterr().err
    assert "(config entry robust_quantile) only applies to --scaling robust" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("scaling", ["online", "robust", "global", "none"])
def test_a_source_merge_other_than_raw_without_a_learner_scaling_is_refused(capsys, scaling):
    assert main(["run", "--dataset", "synthetic", "--scaling", scaling, "--source-merge",
                 "unit"]) == 2
    assert capsys.readouterr().err == (
        "error: --source-merge unit (config entry source_merge) only applies to --scaling "
        "online-rescale or robust-rescale, whose learner keeps the unscaled rows it merges; "
        f"this run's scaling is {scaling}\n")


@pytest.mark.parametrize("options, message", [
    (["--scaling", "none", "--feature-range", "0", "1"],
     "error: --feature-range (config entry feature_range) only applies to a scaling; this "
     "run's scaling is none"),
    (["--feature-range", "1", "1"], "error: --feature-range (config entry feature_range): "
                                    "feature_range must be finite with low < high, got (1.0, 1.0)"),
    (["--feature-range", "0", "inf"], "error: --feature-range (config entry feature_range): "
                                      "feature_range must be finite with low < high, got "
                                      "(0.0, inf)"),
])
def test_a_feature_range_that_changes_nothing_or_is_no_interval_is_refused(capsys, options,
                                                                           message):
    assert main(["run", "--limit", "20", *options]) == 2
    assert capsys.readouterr().err.strip() == message


def test_a_feature_range_of_a_config_file_is_checked_as_the_flags(tmp_path, capsys):
    config = tmp_path / "config.json"
    config.write_text('{"feature_range": [0, 1, 2]}')
    assert main(["run", "--limit", "20", "--config", str(config)]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: --feature-range (config entry feature_range): feature_range must be a pair "
        "(low, high) of numbers, got [0, 1, 2]")


WINDOW_HINT = ("(--robust-reservoir: a row enters with probability --robust-reservoir / "
               "--robust-window) (config entries robust_reservoir, robust_window)")


@pytest.mark.parametrize("options, message", [
    (["--scaling", "robust", "--robust-window", "10"],
     f"--robust-window must be >= 1000, got 10 {WINDOW_HINT}"),
    (["--model", "tlp", "--scaling", "robust", "--robust-window", "10"],
     f"--robust-window must be >= 1000, got 10 {WINDOW_HINT}"),
    (["--scaling", "robust-rescale", "--robust-reservoir", "50", "--robust-window", "20"],
     f"--robust-window must be >= 50, got 20 {WINDOW_HINT}"),
    (["--scaling", "robust", "--robust-window", str(2 ** 64)],
     f"--robust-window must be at most 2**63, got {2 ** 64} (config entry robust_window)"),
    (["--scaling", "robust", "--robust-quantile", "0.7"],
     "--robust-quantile must lie in (0, 0.5), got 0.7 (config entry robust_quantile)"),
    (["--model", "tlp", "--scaling", "robust", "--robust-tolerance", "-1"],
     "--robust-tolerance must be a finite number >= 0, got -1.0 (config entry "
     "robust_tolerance)"),
    (["--config", "{tmp}/robust.json"],
     f"--robust-window must be >= 1000, got 999 {WINDOW_HINT}"),
])
def test_quantile_range_settings_are_refused_naming_the_options(options, message, tmp, capsys,
                                                                no_run):
    # before: the scaler's own words, "--scaling robust: window must be >= 1000 ...
    # (reservoir_size: ...)", once the seed's transform or learner was built
    (tmp / "robust.json").write_text('{"scaling": "robust", "robust_window": 999}')
    line = _check_one_error_line(["run", "--limit", "20", "--quiet",
                                  *(arg.format(tmp=tmp) for arg in options)], capsys)
    assert line == f"error: {message}"


def test_no_robust_clip_with_another_scaling_names_the_flag_as_given(capsys):
    assert main(["run", "--preset", "package", "--no-robust-clip"]) == 2
    err = capsys.readouterr().err
    assert ("--no-robust-clip (config entry robust_clip) only applies to --scaling robust "
            "or robust-rescale; this run's scaling is online-rescale") in err


def test_robust_options_with_another_scaling_name_the_flag_and_the_scaling(capsys):
    assert main(["run", "--preset", "package", "--robust-quantile", "0.05",
                 "--robust-reservoir", "10"]) == 2
    err = capsys.readouterr().err
    assert ("--robust-quantile, --robust-reservoir (config entries robust_quantile, "
            "robust_reservoir) only apply to --scaling robust or robust-rescale; this run's "
            "scaling is online-rescale") in err


def test_a_robust_window_of_another_type_in_a_config_file_is_named(tmp_path, capsys):
    config = tmp_path / "window.json"
    config.write_text('{"robust_window": 2500.0}')
    assert main(["run", "--scaling", "robust-rescale", "--config", str(config)]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: --robust-window must be an integer, got float (config entry robust_window)")


@pytest.mark.parametrize("value", ["abc", "0", "-5", "nan", "2.5", "", "none5"])
def test_a_robust_window_neither_a_positive_integer_nor_none_is_named(value, capsys, no_run):
    line = _check_one_error_line(["run", "--scaling", "robust", "--robust-window", value,
                                  "--quiet"], capsys)
    assert line == ("error: torch_geometric_stream run: argument --robust-window: expected a "
                    f"positive integer or 'none', got {value!r}")


def test_a_warning_is_one_line_on_stderr(monkeypatch, capsys):
    """A warning while a command runs (e.g. GSAD's missing batches) shows as the
    command line's other messages do: one line, without Python's source line."""
    import importlib
    import warnings

    cli_main = importlib.import_module("torch_geometric_stream.cli.main")  # the module

    def warns(args):
        warnings.warn("GSAD batches missing,\n  streaming only the others", UserWarning)
        return 0

    monkeypatch.setattr(cli_main, "datasets_command", warns)
    assert main(["datasets"]) == 0
    assert capsys.readouterr().err == (
        "warning: GSAD batches missing,; streaming only the others\n")


@pytest.mark.parametrize("values, error", [
    (["1,x"], "--seeds expects integers or comma lists of integers, got '1,x'"),
    (["2", "1.5"], "--seeds expects integers or comma lists of integers, got '1.5'"),
    (["-1"], "--seeds must be >= 0, got -1"),
    ([str(2 ** 64)], f"--seeds must be below 2**64, got {2 ** 64}"),
])
def test_seed_lists_and_one_seed_read_seeds_alike(values, error):
    """``parse_seeds`` and ``seed_value`` share one conversion, each with its messages."""
    with pytest.raises(UsageError, match=f"^{re.escape(error)}$"):
        parse_seeds(values, "--seeds")
    assert parse_seeds(["3,1", "3", " 2"], "--seeds") == [3, 1, 2]
    assert parse_seeds(None) == [0]
    part = values[-1].split(",")[-1]
    with pytest.raises(argparse.ArgumentTypeError,
                       match=f"^{re.escape(error.replace('--seeds', 'seed'))}$"
                       if "must be" in error else f"^seed must be an integer, got '{part}'$"):
        seed_value(part)
    assert seed_value("7") == 7


@pytest.mark.parametrize("command", ["run", "tune"])
def test_threads_above_the_maximum_are_refused(command, capsys, no_run):
    """Before, ``run --threads 99999`` crashed (a traceback: 52 GB asked for by
    the denormal probe, then exit 139); the maximum is far above any machine's
    cores, which fewer threads may exceed (4 on 2 cores is a user's call)."""
    from torch_geometric_stream.cli.arguments import MAX_THREADS, thread_count

    line = _check_one_error_line([command, "--threads", str(MAX_THREADS + 1), "--quiet"],
                                 capsys)
    assert line == (f"error: torch_geometric_stream {command}: argument --threads: expected "
                    f"at most {MAX_THREADS} threads, got '{MAX_THREADS + 1}'")
    assert MAX_THREADS == 1024 and thread_count("1024") == 1024 and thread_count("4") == 4
    required = ["--dataset", "Shuttle"] * (command == "tune")
    assert build_parser().parse_args([command, *required, "--threads", "1024"]).threads == 1024
