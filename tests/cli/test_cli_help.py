"""The command line's help states the defaults the configuration resolves to."""
import argparse
import importlib
import re

import pytest

from torch_geometric_stream.cli import build_parser
from torch_geometric_stream.cli.configs import (DEFAULT_CONFIG, FEW_LABEL_LIGHT_DEFAULTS,
                                                PAPER_PRESET_DEFAULTS, parse_tau,
                                                resolve_config)
from torch_geometric_stream.cli.errors import UsageError
from torch_geometric_stream.cli.run import OVERRIDE_KEYS
from torch_geometric_stream.cli.tune import parse_grid


def _command(name: str) -> argparse.ArgumentParser:
    subparsers = next(action for action in build_parser()._actions
                      if isinstance(action, argparse._SubParsersAction))
    return subparsers.choices[name]


def _plain(text: str) -> str:
    """``text`` with its line breaks and indentation as single spaces."""
    return " ".join(text.split())


@pytest.fixture(scope="module")
def run_parser() -> argparse.ArgumentParser:
    return _command("run")


@pytest.fixture(scope="module")
def run_help(run_parser) -> str:
    return _plain(run_parser.format_help())


def _as_flag(key: str, value) -> str:
    flag = key.replace("_", "-")
    if isinstance(value, bool):
        return f"--{flag}" if value else f"--no-{flag}"
    return f"--{flag} {value}"


@pytest.mark.parametrize("model", ["sledge", "sledge-light"])
def test_run_help_names_every_few_label_departure_of_the_package_defaults(model, run_help):
    # what the package resolves below 0.5 % labels against 1 %, on a 7-class stream
    few, many = (resolve_config("synthetic", ratio, model, {}, None, num_classes=7,
                                preset="package") for ratio in (0.001, 0.01))
    changed = {key: value for key, value in few.items() if value != many[key]}
    assert changed.keys() >= {"labeled_size", "unlabeled_size"}
    # the labeled memory: n slots per class, named with the model
    slots = changed.pop("labeled_size") // 7
    del changed["unlabeled_size"]
    stated = {name: int(count) for models, count in
              re.findall(r"((?:[\w-]+ and )*[\w-]+) keeps? (\d+) labeled slots per class",
                         run_help) for name in models.split(" and ")}
    assert stated[model] == slots
    # every other entry, as the option that sets it (one list, in the precedence and --preset)
    flags = " ".join(_as_flag(key, value) for key, value in changed.items())
    assert (model == "sledge") == (flags == "")
    if flags:
        assert changed == FEW_LABEL_LIGHT_DEFAULTS
        assert run_help.count(f"{model} runs {flags}") == 2


def _stated_value(action: argparse.Action, text: str):
    """A default as the help of ``action`` states it, read as the option reads a value."""
    if isinstance(action, argparse.BooleanOptionalAction):
        return {"yes": True, "no": False}[text]
    if action.nargs == 2:
        return [float(word) for word in text.split()]
    if action.dest == "tau":
        return parse_tau(text)
    return action.type(text) if action.type is not None else text


def test_each_stated_package_default_is_the_resolved_one(run_parser):
    stated = {}
    for action in run_parser._actions:
        text = _plain(action.help % vars(action) if action.help else "")
        default = re.search(r"package default: ([^;),]+)", text)
        if default is None:
            continue
        stated[action.dest] = _stated_value(action, default.group(1))
        assert stated[action.dest] == DEFAULT_CONFIG[action.dest], action.dest
        few = re.search(r"sledge-light below 0\.5 % labels without per-dataset settings: "
                        r"([^;),]+)", text)
        expected = FEW_LABEL_LIGHT_DEFAULTS.get(action.dest)
        assert (few is None) == (expected is None), action.dest
        if few is not None:
            assert _stated_value(action, few.group(1)) == expected, action.dest
    # every option of an entry with a plain package default states it, and every
    # few-label entry of SLeDGe-L is among them
    entries = {action.dest for action in run_parser._actions if action.dest in DEFAULT_CONFIG}
    assert stated.keys() >= FEW_LABEL_LIGHT_DEFAULTS.keys()
    assert {"k", "lr", "lam", "num_layers", "tau", "feature_range", "robust_clip",
            "robust_quantile", "class_prior", "supervise_graph"} <= stated.keys() <= entries


def test_each_choice_called_the_default_is_the_package_default(run_parser, run_help):
    named = {}
    for action in run_parser._actions:
        if action.dest in DEFAULT_CONFIG and (action.choices or action.dest in ("alpha",
                                                                               "beta")):
            # e.g. "'embedding' (default, the paper: ...", "'after' propagation (default"
            match = re.search(r"(?:'([\w-]+)'|\b(\d+))(?: \w+)? \(default\b",
                              _plain(action.help))
            if match is not None:
                named[action.dest] = match.group(1) or match.group(2)
                assert named[action.dest] == str(DEFAULT_CONFIG[action.dest]), action.dest
    assert {"alpha", "beta", "count_offset", "merge_similarity", "source_merge", "bias_position",
            "regularizer", "propagation", "light_memory"} <= named.keys()
    # the normalization of each preset
    for name, preset in ((DEFAULT_CONFIG["normalization"], "the package preset's"),
                         (PAPER_PRESET_DEFAULTS["normalization"], "the paper preset's default")):
        # said of this choice, before the next one's "'name' ("
        assert re.search(rf"'{name}' \((?:(?!'[\w-]+' \().)*{preset}", run_help), name


def test_tune_grids_exactly_the_run_options_that_set_configuration_entries(run_parser):
    entries = {action.dest for action in run_parser._actions if action.dest in OVERRIDE_KEYS}
    assert entries == set(OVERRIDE_KEYS)
    for key in entries:  # each by its option's name
        value = "0:1" if key == "feature_range" else "1"
        assert list(parse_grid([f"{key.replace('_', '-')}={value}"])) == [key]
    for protocol in ("label-mask=paper", "device=cpu", "threads=2", "preset=package"):
        with pytest.raises(UsageError, match="is not a tunable option"):
            parse_grid([protocol])
    grid_help = _plain(next(action.help for action in _command("tune")._actions
                            if action.dest == "grid"))
    assert "sets a configuration entry" in grid_help and "with a value" not in grid_help


@pytest.mark.parametrize("name", ["run", "tune", "compare", "datasets"])
def test_command_help_is_plain_text_without_restructuredtext_markup(name):
    text = _command(name).format_help()
    assert "``" not in text and ":class:" not in text and ":func:" not in text


@pytest.mark.parametrize("name", ["run", "tune", "compare", "datasets"])
def test_every_command_help_has_a_description(name):
    # before: datasets --help showed its usage and options only
    assert _command(name).description


def test_version_names_the_package_and_what_it_runs_on_and_exits_zero(capsys, monkeypatch):
    import numpy as np
    import torch
    import torch_geometric

    import torch_geometric_stream
    cli_main = importlib.import_module("torch_geometric_stream.cli.main")  # not the function

    with pytest.raises(SystemExit) as stopped:
        build_parser().parse_args(["--version"])
    assert stopped.value.code == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"torch_geometric_stream {torch_geometric_stream.__version__}")
    for name, version in (("torch", torch.__version__),
                          ("torch-geometric", torch_geometric.__version__),
                          ("numpy", np.__version__)):
        assert f"{name} {version}" in line
    assert re.search(r"torch-scatter (found|not installed), torch-sparse (found|not installed)",
                     line)
    # outside a git checkout (an installed package) no commit is named
    monkeypatch.setattr(cli_main, "software_versions", lambda: {
        "package_version": "9.9", "torch_version": "t", "torch_geometric_version": "g",
        "numpy_version": "n", "git_commit": None, "git_dirty": None})
    assert cli_main.version_line().startswith("torch_geometric_stream 9.9 (torch t, ")
    monkeypatch.setattr(cli_main, "software_versions", lambda: {
        "package_version": "9.9", "torch_version": "t", "torch_geometric_version": "g",
        "numpy_version": "n", "git_commit": "0123456789abcdef", "git_dirty": True})
    assert cli_main.version_line().startswith(
        "torch_geometric_stream 9.9, git 0123456789ab with changes (torch t, ")
