"""``run --show-config``: each configuration entry with where its value comes from."""
from __future__ import annotations

import itertools
import json
import re

import numpy as np
import pytest

from torch_geometric_stream.cli import main
from torch_geometric_stream.cli.configs import (CONFIG_FILE_SOURCE, FEW_LABEL_SOURCE,
                                                PACKAGE_DEFAULT_SOURCE, PRESETS, resolve_config,
                                                resolve_stream_entries)
from torch_geometric_stream.cli.models import MODEL_NAMES
from torch_geometric_stream.cli.show_config import config_lines, unread_in_config

PIXELS = (0.0, 255.0)
MNIST_SLEDGE_SOURCES = {  # the paper preset's MNIST cell at 0.1 %, by hand from cli/configs.py
    "normalization": "paper preset default",
    "k": "authors' setting for MNIST at 0.1 %",
    "embedding_layers": "authors' setting for MNIST at 0.1 %",
    "tau": "paper's setting for MNIST at 0.1 %",  # the paper's table; the files set none
    "num_layers": "measured setting for sledge on MNIST at 0.1 % (see README)",
    "lr": "measured setting for sledge on MNIST at 0.1 % (see README)",
    "supervise_graph": "measured setting for sledge on MNIST at 0.1 % (see README)",
    "labeled_size": "measured setting for sledge on MNIST at 0.1 % (see README)",
    "unlabeled_size": "memory_size - labeled_size",
    "scaling": "auto (package default): the stream's values lie in the known range [0, 255]",
    "feature_transform": ("auto (package default): the stream's values lie in the known "
                          "range [0, 255]"),
}


def _resolved(dataset, ratio, model, overrides=None, config_file=None, num_classes=10,
              value_range=PIXELS, preset="paper"):
    """The configuration as ``run`` resolves it, and its sources."""
    sources: dict[str, str] = {}
    config = resolve_config(dataset, ratio, model, overrides or {}, config_file,
                            num_classes=num_classes, preset=preset, sources=sources)
    return resolve_stream_entries(config, model, value_range, sources), sources


def _not_default(sources):
    return {key: source for key, source in sources.items() if source != PACKAGE_DEFAULT_SOURCE}


def test_mnist_paper_cell_names_the_authors_and_the_measured_settings():
    config, sources = _resolved("MNIST", 0.001, "sledge")
    assert _not_default(sources) == MNIST_SLEDGE_SOURCES
    assert (config["labeled_size"], config["num_layers"], config["scaling"]) == (100, 2, "range")
    # listed by the layer that set each entry last, lowest precedence first
    assert list(sources).index("normalization") < list(sources).index("k") < list(
        sources).index("labeled_size") < list(sources).index("scaling")


def test_the_package_reading_of_the_authors_single_layer_is_named_as_such():
    """The authors' ``gcn_layer = 1`` builds one layer of 256 outputs; ``num_layers = 1``
    (c outputs) is the package's reading, not their setting. ``gcn_layer = 2`` is theirs."""
    config, sources = _resolved("Shuttle", 0.01, "sledge", num_classes=7, value_range=None)
    assert (config["num_layers"], sources["num_layers"]) == (
        1, "package's reading of the authors' gcn_layer 1 for Shuttle at 1 % (see README)")
    assert (sources["k"], sources["tau"]) == ("authors' setting for Shuttle at 1 %",
                                              "paper's setting for Shuttle at 1 %")
    config, sources = _resolved("GSAD", 0.01, "sledge", num_classes=6, value_range=None)
    assert (config["num_layers"], sources["num_layers"]) == (
        3, "authors' setting for GSAD at 1 %")


def test_package_preset_names_the_few_label_rules():
    _, sources = _resolved("MNIST", 0.001, "sledge", preset="package")
    assert _not_default(sources) == {
        "labeled_size": ("package few-label rule (10 slots per class below 0.5 % labels, at "
                         "most 100; c = 10)"),
        "unlabeled_size": "memory_size - labeled_size",
        "scaling": MNIST_SLEDGE_SOURCES["scaling"],
        "feature_transform": MNIST_SLEDGE_SOURCES["feature_transform"]}
    _, sources = _resolved("MNIST", 0.001, "sledge-light", preset="package", value_range=None)
    assert {key: sources[key] for key in ("num_layers", "class_prior", "supervise_graph")} == {
        key: FEW_LABEL_SOURCE for key in ("num_layers", "class_prior", "supervise_graph")}
    assert sources["scaling"] == ("auto (package default): the stream has no known value "
                                  "range; sledge-light scales its own input")
    assert sources["feature_transform"] == ("auto (package default): the stream has no known "
                                            "value range")


def test_a_flag_overrides_the_config_file_and_both_override_the_model_fixed_entry_rule():
    config, sources = _resolved("Shuttle", 0.01, "gsl", {"lr": 0.5, "supervise_graph": False},
                                {"lr": 0.01, "k": 3}, num_classes=7, value_range=None)
    assert (config["lr"], config["k"], config["lam"]) == (0.5, 3, 0.0)
    assert (sources["lr"], sources["k"], sources["lam"], sources["supervise_graph"]) == (
        "flag --lr", CONFIG_FILE_SOURCE, "fixed by model gsl", "flag --no-supervise-graph")
    assert sources["labeled_size"] == "paper sizing rule (L = 100 from 0.5 % labels)"
    assert "regularizer" in unread_in_config("gsl", config)


def test_derived_entries_say_why():
    # a preset's labeled size that does not fit a smaller memory: the paper's rule instead
    config, sources = _resolved("MNIST", 0.001, "sledge", {"memory_size": 80})
    assert config["labeled_size"] == 10
    assert sources["labeled_size"] == ("paper sizing rule (L = max(c, 10) below 0.5 % labels; "
                                       "c = 10): the preset's 100 does not fit memory_size 80")
    # the rule's cap at memory_size - 1
    config, sources = _resolved("synthetic", 0.01, "sledge", {"memory_size": 50}, num_classes=4)
    assert config["labeled_size"] == 49
    assert sources["labeled_size"] == ("paper sizing rule (L = 100 from 0.5 % labels; at most "
                                       "memory_size - 1)")
    # a preset's quantile range setting goes with its scaling
    config, sources = _resolved("GSAD", 0.001, "sledge", {"scaling": "online"}, num_classes=6,
                                value_range=None)
    assert (config["robust_quantile"], sources["robust_quantile"]) == (
        0.01, "package default (the preset's value goes with its scaling, not online)")
    assert "robust_quantile" in unread_in_config("sledge", config)
    # base cannot scale its own input: the stream does it
    config, sources = _resolved("GSAD", 0.001, "base", num_classes=6, value_range=None)
    assert (config["scaling"], sources["scaling"]) == (
        "robust", "measured setting for GSAD (see README), read as robust: base does not "
                  "scale its own input")
    # the one labeled slot per class of sledge-light's per-class memory
    config, sources = _resolved("synthetic", 0.001, "sledge-light",
                                {"light_memory": "per-class"}, num_classes=4)
    assert (config["labeled_size"], sources["labeled_size"]) == (
        4, "one slot per class (light_memory per-class; c = 4)")


@pytest.mark.parametrize("scaling, unread", [
    ("robust", []),  # a baseline accepts only what it reads: no such heading
    ("online", ["robust_quantile", "robust_tolerance", "robust_reservoir", "robust_window",
                "robust_clip"]),
    ("none", ["robust_quantile", "robust_tolerance", "robust_reservoir", "robust_window",
              "robust_clip", "feature_range"])])  # no scaling, no interval to map to
def test_the_entries_a_baseline_leaves_unread_follow_its_scaling(scaling, unread):
    config, sources = _resolved("synthetic", 0.01, "tlp", {"scaling": scaling}, num_classes=3,
                                value_range=None)
    assert sorted(unread_in_config("tlp", config)) == sorted(unread)
    lines = config_lines("tlp", config, sources, None)
    heading = [index for index, line in enumerate(lines) if line.startswith("not read by tlp")]
    assert len(heading) == bool(unread)
    listed = [line.split()[0] for line in lines[heading[0] + 1:]] if heading else []
    assert listed == [key for key in config if key in unread]


@pytest.mark.parametrize("model, preset", list(itertools.product(MODEL_NAMES, PRESETS)))
def test_sources_cover_every_entry_and_change_no_result(model, preset):
    for dataset, ratio, value_range in itertools.product(
            ("MNIST", "Shuttle", "GSAD", "Shopper", "synthetic"), (0.001, 0.01),
            (None, PIXELS)):
        config, sources = _resolved(dataset, ratio, model, value_range=value_range,
                                    preset=preset)
        plain = resolve_stream_entries(resolve_config(dataset, ratio, model, {}, None,
                                                      num_classes=10, preset=preset),
                                       model, value_range)
        assert config == plain and list(config) == list(plain)
        assert set(sources) == set(config)


def _shown(text: str) -> dict[str, tuple[str, str]]:
    """``entry -> (value, source)`` of the lines ``--show-config`` printed."""
    return {parts[0]: (parts[1], parts[2]) for parts in
            (re.split(r" {2,}", line.strip()) for line in text.splitlines()
             if line.startswith("  "))}


def test_run_show_config_prints_the_run_and_writes_nothing(tmp_path, capsys, dataset_root):
    output = tmp_path / "run.json"
    argv = ["run", "--dataset", "MNIST", "--root", str(dataset_root("MNIST")), "--label-ratio",
            "0.001", "--model", "sledge", "--seed", "0,2000", "--device", "cpu", "--limit", "300",
            "--output", str(output), "--csv", str(tmp_path / "run.csv"), "--show-config"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[:2] == [
        "sledge on MNIST: its first 300 samples, 784 features, 10 classes, values in [0, 255]",
        "label ratio 0.001 (mask paper), preset paper, seeds 0,2000, device cpu"]
    shown = _shown(printed)
    assert {key: source for key, (_, source) in shown.items()
            if source != PACKAGE_DEFAULT_SOURCE} == MNIST_SLEDGE_SOURCES
    assert shown["labeled_size"][0] == "100" and shown["scaling"][0] == "range"
    assert shown["lr"][0] == "0.0001" and shown["feature_range"][0] == "[-1.0, 1.0]"
    # the entries sledge does not read here come last, under their own heading
    unread = printed.split("not read by sledge in this configuration")[1]
    assert set(_shown(unread)) == {"light_memory", "robust_quantile", "robust_tolerance",
                                   "robust_reservoir", "robust_window", "robust_clip",
                                   "source_merge"}
    assert printed.rstrip().endswith("--show-config: nothing was run or written")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("scaling, read", [("online-rescale", True), ("robust-rescale", True),
                                           ("online", False), ("none", False)])
def test_show_config_reads_source_merge_only_where_the_learner_keeps_sources(capsys, scaling,
                                                                             read):
    flags = ["--source-merge", "unit"] if read else []
    assert main(["run", "--dataset", "synthetic", "--scaling", scaling, *flags,
                 "--show-config"]) == 0
    printed = capsys.readouterr().out
    shown, (_, unread) = _shown(printed), printed.split("not read by sledge")
    assert shown["source_merge"] == (("unit", "flag --source-merge") if read
                                     else ("raw", PACKAGE_DEFAULT_SOURCE))
    assert ("source_merge" in _shown(unread)) is not read


def test_show_config_of_a_stream_file_and_a_config_file(tmp_path, capsys):
    rng = np.random.default_rng(0)
    stream = tmp_path / "mine.npz"
    np.savez(stream, x=rng.normal(size=(40, 3)), y=np.arange(40) % 3)
    config_file = tmp_path / "cfg.json"
    config_file.write_text(json.dumps({"lr": 0.01, "k": 3}))
    assert main(["run", "--dataset", str(stream), "--config", str(config_file), "--lr", "0.5",
                 "--show-config"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("sledge on mine.npz: 40 samples, 3 features, 3 classes\n")
    assert {key: shown for key, shown in _shown(printed).items()
            if shown[1] != PACKAGE_DEFAULT_SOURCE} == {
        "k": ("3", f"--config {config_file}"),
        "lr": ("0.5", "flag --lr"),
        "labeled_size": ("100", "paper sizing rule (L = 100 from 0.5 % labels)"),
        "unlabeled_size": ("900", "memory_size - labeled_size"),
        "scaling": ("online-rescale", "auto (package default): the stream has no known value "
                                      "range; sledge scales its own input"),
        "feature_transform": ("signed-log1p", "auto (package default): the stream has no "
                                              "known value range")}


@pytest.mark.parametrize("value", ["none", "NONE", " None "])
def test_robust_window_none_unsets_a_config_files_window_as_its_null_does(tmp_path, capsys,
                                                                         value):
    config_file = tmp_path / "cfg.json"
    argv = ["run", "--dataset", "synthetic", "--synthetic-samples", "50", "--config",
            str(config_file), "--show-config"]
    config_file.write_text(json.dumps({"scaling": "robust", "robust_window": 2000}))
    assert main(argv) == 0
    assert _shown(capsys.readouterr().out)["robust_window"] == ("2000", f"--config {config_file}")
    assert main([*argv, "--robust-window", value]) == 0
    assert _shown(capsys.readouterr().out)["robust_window"] == ("null", "flag --robust-window")
    config_file.write_text(json.dumps({"scaling": "robust", "robust_window": None}))
    assert main(argv) == 0
    assert _shown(capsys.readouterr().out)["robust_window"] == ("null", f"--config {config_file}")


@pytest.mark.parametrize("options, message", [
    (["--model", "memory", "--k", "3"], "model 'memory' does not read k"),
    (["--model", "gsl", "--lam", "0.5"], "model 'gsl' always runs with lam = 0.0"),
    (["--lr", "-1"], "lr must be a finite number >= 0, got -1.0"),  # the learner refuses it
    (["--config", "missing.json"], "--config: file missing.json does not exist"),
    (["--output", "no/such/folder/run.json"], "--output: folder no/such/folder does not exist"),
])
def test_show_config_refuses_what_the_run_refuses_in_one_line(tmp_path, capsys, monkeypatch,
                                                              options, message):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "--dataset", "synthetic", "--synthetic-samples", "50", *options,
                 "--show-config"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    error = captured.err.strip()
    assert error.startswith("error: ") and "\n" not in error and message in error
