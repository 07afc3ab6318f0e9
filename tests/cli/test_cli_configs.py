"""Configuration resolution: paper settings, precedence, memory sizes, validation."""
from __future__ import annotations

import itertools

import pytest
import torch

from torch_geometric_stream.cli import configs
from torch_geometric_stream.cli.configs import (BASE_MIN_LAYERS, DEFAULT_CONFIG,
                                                FEW_LABEL_LIGHT_DEFAULTS,
                                                FEW_LABEL_SLOTS_PER_CLASS, MEASURED_CONFIGS,
                                                MEASURED_EXCEPTIONS, MEASURED_RATIO_CONFIGS,
                                                PAPER_CONFIGS, check_quantile_range_entries,
                                                paper_config, parse_tau, resolve_config,
                                                resolve_stream_entries)
from torch_geometric_stream.cli.errors import UsageError
from torch_geometric_stream.cli.models import MODEL_NAMES, build_learner, model_kwargs
from torch_geometric_stream.datasets import DATASETS
from torch_geometric_stream.models import SLEDGE_VARIANTS, build_model


def test_every_paper_dataset_has_both_ratios():
    assert set(PAPER_CONFIGS) == set(DATASETS)
    assert all(set(rows) == {0.001, 0.01} for rows in PAPER_CONFIGS.values())


def test_layer_mapping_and_nearest_ratio():
    # MNIST 0.1 %: gcn_layer 3, k 5, scorer_layer 2, tau inf
    assert paper_config("MNIST", 0.002) == {"num_layers": 4, "k": 5, "embedding_layers": 2,
                                            "tau": None}
    # OD 1 %: gcn_layer 2 -> 3 layers; OD 0.1 %: gcn_layer 1 -> 1 layer; tau 1
    assert paper_config("OD", 0.05)["num_layers"] == 3
    assert paper_config("OD", 0.001) == {"num_layers": 1, "k": 1, "embedding_layers": 1,
                                         "tau": 1.0}
    assert paper_config("synthetic-none", 0.01) == {}


#: The authors' (gcn_layer, k, scorer_layer, tau) per dataset and label ratio (their
#: files config/best_config_<DATASET>_<ratio>.json; tau from the paper's table).
AUTHORS_TABLE = {
    "MNDS": {0.001: (2, 5, 2, 1), 0.01: (1, 10, 1, 1)},
    "Shopper": {0.001: (3, 1, 3, None), 0.01: (1, 5, 3, None)},
    "WebKB": {0.001: (3, 10, 3, 1), 0.01: (2, 5, 3, 1)},
    "MNIST": {0.001: (3, 5, 2, None), 0.01: (3, 5, 1, None)},
    "CIFAR-10": {0.001: (1, 10, 1, None), 0.01: (1, 10, 2, None)},
    "KMNIST": {0.001: (3, 5, 1, None), 0.01: (3, 5, 3, None)},
    "FashionMNIST": {0.001: (1, 10, 3, None), 0.01: (1, 5, 2, None)},
    "Shuttle": {0.001: (1, 5, 1, None), 0.01: (1, 5, 1, None)},
    "GSAD": {0.001: (2, 1, 1, None), 0.01: (2, 1, 1, None)},
    "SDD": {0.001: (2, 1, 2, 1), 0.01: (2, 1, 1, 1)},
    "HAR": {0.001: (2, 10, 1, None), 0.01: (2, 10, 1, None)},
    "OD": {0.001: (1, 1, 1, 1), 0.01: (2, 1, 1, 1)},
}


@pytest.mark.parametrize("dataset, ratio", [(dataset, ratio) for dataset in AUTHORS_TABLE
                                            for ratio in (0.001, 0.01)])
def test_paper_configs_are_the_authors_table(dataset, ratio):
    gcn_layer, k, scorer_layer, tau = AUTHORS_TABLE[dataset][ratio]
    assert paper_config(dataset, ratio) == {
        "num_layers": gcn_layer + 1 if gcn_layer > 1 else 1, "k": k,
        "embedding_layers": scorer_layer, "tau": None if tau is None else float(tau)}


def test_package_defaults_of_the_structure_and_training():
    config = resolve_config("NewStream", 0.01, "sledge", {}, None, preset="package")
    assert {key: config[key] for key in ("memory_size", "k", "hidden_channels",
                                         "embedding_layers", "num_layers", "lam", "lr",
                                         "tau")} == {
        "memory_size": 1000, "k": 5, "hidden_channels": 256, "embedding_layers": 1,
        "num_layers": 2, "lam": 0.1, "lr": 1e-3, "tau": None}


def test_a_label_ratio_takes_the_measured_settings_of_its_nearest_paper_ratio():
    # 0.2 % is the paper's 0.1 % regime, 5 % its 1 %: the per-ratio cells apply too
    assert resolve_config("GSAD", 0.002, "sledge", {}, None)["robust_quantile"] == 0.05
    assert resolve_config("GSAD", 0.05, "sledge", {}, None)["robust_quantile"] == 0.01
    assert resolve_config("Shuttle", 0.002, "sledge-light", {}, None)["lam"] == 0.01
    assert resolve_config("GSAD", 0.05, "sledge", {}, None)["normalization"] == "symmetric-add"


def test_precedence_defaults_paper_file_flags():
    config = resolve_config("MNIST", 0.01, "sledge", {"lr": None}, None)
    assert config["k"] == 5 and config["num_layers"] == 4 and config["lr"] == DEFAULT_CONFIG["lr"]
    config = resolve_config("MNIST", 0.01, "sledge", {}, {"k": 7, "lr": 0.5})
    assert (config["k"], config["lr"], config["num_layers"]) == (7, 0.5, 4)
    config = resolve_config("MNIST", 0.01, "sledge", {"k": 2, "tau": "inf"}, {"k": 7, "tau": 1})
    assert (config["k"], config["lr"], config["tau"]) == (2, 1e-3, None)
    # --robust-window none (any case) unsets a file's window, as the file's null does
    for none in ("none", " NONE "):
        config = resolve_config("MNIST", 0.01, "sledge", {"robust_window": none},
                                {"robust_window": 2000})
        assert config["robust_window"] is None
    for none in (None, "None"):
        config = resolve_config("MNIST", 0.01, "sledge", {}, {"robust_window": none})
        assert config["robust_window"] is None


def test_package_preset_ignores_the_paper_settings():
    paper = resolve_config("Shuttle", 0.01, "sledge", {}, None, num_classes=7)
    package = resolve_config("Shuttle", 0.01, "sledge", {}, None, num_classes=7,
                             preset="package")
    assert paper["num_layers"] == 1  # Shuttle's gcn_layer = 1
    assert package == resolve_config("synthetic", 0.01, "sledge", {}, None, num_classes=7)
    assert {key: package[key] for key in ("num_layers", "k", "embedding_layers", "tau")} == {
        key: DEFAULT_CONFIG[key] for key in ("num_layers", "k", "embedding_layers", "tau")}
    # a file and flags still override the preset
    given = resolve_config("Shuttle", 0.01, "sledge", {"k": 3}, {"num_layers": 1},
                           preset="package")
    assert (given["k"], given["num_layers"]) == (3, 1)
    assert resolve_config("Shuttle", 0.01, "tlp", {}, None, preset="package") == resolve_config(
        "Shuttle", 0.01, "tlp", {}, None)
    with pytest.raises(UsageError, match="preset 'tuned'"):
        resolve_config("Shuttle", 0.01, "sledge", {}, None, preset="tuned")


def test_sledge_light_takes_its_few_label_defaults_where_no_dataset_setting_applies():
    few_label = DEFAULT_CONFIG | FEW_LABEL_LIGHT_DEFAULTS
    for dataset, preset in (("Shuttle", "package"), ("synthetic", "paper"),
                            ("synthetic", "package")):
        light = resolve_config(dataset, 0.001, "sledge-light", {}, None, preset=preset)
        assert light == few_label
        assert (light["num_layers"], light["class_prior"], light["supervise_graph"]) == (
            1, "stream", False)
        # the rule follows the paper's ratio boundary (0.5 %), and the 1 % regime keeps
        # the package defaults, as every other model does
        assert resolve_config(dataset, 0.0049, "sledge-light", {}, None, preset=preset) == light
        assert resolve_config(dataset, 0.005, "sledge-light", {}, None,
                              preset=preset) == DEFAULT_CONFIG
        assert resolve_config(dataset, 0.001, "sledge", {}, None,
                              preset=preset) == DEFAULT_CONFIG
    # the paper preset on a paper dataset keeps the authors' structure and the paper's prior
    paper = resolve_config("GSAD", 0.001, "sledge-light", {}, None)
    assert (paper["num_layers"], paper["class_prior"]) == (3, "memory")
    # flags still win
    assert resolve_config("Shuttle", 0.001, "sledge-light", {"num_layers": 2}, None,
                          preset="package")["num_layers"] == 2


def test_measured_per_dataset_settings_apply_with_the_paper_preset_only():
    assert set(MEASURED_CONFIGS) <= set(DATASETS)
    for ratio in (0.001, 0.01):
        for model in ("sledge", "sledge-light", "memory"):
            expected = ("none" if (model, ratio) == ("sledge-light", 0.001)  # the exception
                        else "signed-log1p")
            assert resolve_config("Shuttle", ratio, model, {}, None)["feature_transform"] == \
                expected
        assert resolve_config("Shopper", ratio, "sledge", {}, None)["feature_transform"] == \
            "signed-log1p"
        assert resolve_config("GSAD", ratio, "sledge", {}, None)["feature_transform"] == "none"
    # not for the baselines (they keep their input), the package preset has the
    # package default ("auto": signed-log1p on tabular streams), and a flag still wins
    assert resolve_config("Shuttle", 0.01, "tlp", {}, None)["feature_transform"] == "none"
    assert resolve_config("Shuttle", 0.01, "sledge", {}, None,
                          preset="package")["feature_transform"] == "auto"
    assert resolve_config("GSAD", 0.01, "sledge", {}, None,
                          preset="package")["feature_transform"] == "auto"
    assert resolve_config("NewStream", 0.01, "sledge", {}, None)["feature_transform"] == "auto"
    assert resolve_config("Shuttle", 0.01, "sledge", {"feature_transform": "none"},
                          None)["feature_transform"] == "none"
    assert resolve_config("Shuttle", 0.001, "sledge-light", {"feature_transform": "signed-log1p"},
                          None)["feature_transform"] == "signed-log1p"
    # SLeDGe-L on Shuttle at 0.1 %: the best point of the paper's lambda grid
    assert resolve_config("Shuttle", 0.001, "sledge-light", {}, None)["lam"] == 0.01
    assert resolve_config("Shuttle", 0.01, "sledge-light", {}, None)["lam"] == 0.1
    assert resolve_config("Shuttle", 0.001, "sledge-light", {}, None, preset="package")["lam"] == 0.1
    assert resolve_config("Shuttle", 0.001, "sledge-light", {"lam": 1.0}, None)["lam"] == 1.0
    # ... and, for SLeDGe and SLeDGe-L, on Shopper at 0.1 % (the best point of each grid)
    assert resolve_config("Shopper", 0.001, "sledge-light", {}, None)["lam"] == 0.01
    assert resolve_config("Shopper", 0.001, "sledge", {}, None)["lam"] == 0.01
    # SLeDGe and SLeDGe-L on Shopper at 0.1 % run 2 GCN layers (the authors' file:
    # gcn_layer 3, four); the 1 % setting and the package preset keep their depth
    assert resolve_config("Shopper", 0.001, "sledge", {}, None)["num_layers"] == 2
    assert resolve_config("Shopper", 0.001, "sledge-light", {}, None)["num_layers"] == 2
    assert resolve_config("Shopper", 0.001, "sledge-light", {}, None,
                          preset="package")["num_layers"] == 1
    assert resolve_config("Shopper", 0.01, "sledge", {}, None)["num_layers"] == 1
    # SLeDGe-L on Shopper at 0.1 % merges by the input rows (session 60); SLeDGe there,
    # SLeDGe-L at 1 % and the package preset merge by the learned embeddings
    assert resolve_config("Shopper", 0.001, "sledge-light", {}, None)["merge_similarity"] == "raw"
    for ratio, model, preset in ((0.001, "sledge", "paper"), (0.01, "sledge-light", "paper"),
                                 (0.001, "sledge-light", "package")):
        assert resolve_config("Shopper", ratio, model, {}, None,
                              preset=preset)["merge_similarity"] == "embedding"
    assert resolve_config("Shopper", 0.01, "sledge", {}, None)["lam"] == 0.1
    assert resolve_config("Shopper", 0.001, "sledge-light", {}, None, preset="package")["lam"] == 0.1
    # SLeDGe on Shopper at 1 % trains f_E by the structure regularizer only
    assert resolve_config("Shopper", 0.01, "sledge", {}, None)["supervise_graph"] is False
    for model, ratio in (("sledge", 0.001), ("sledge-light", 0.01)):
        assert resolve_config("Shopper", ratio, model, {}, None)["supervise_graph"] is True
    assert resolve_config("Shopper", 0.01, "sledge", {}, None,
                          preset="package")["supervise_graph"] is True
    # SLeDGe-L on MNIST at 0.1 %: 2 GCN layers, a 1-layer f_E trained by the structure
    # regularizer only, lr 1e-4, lambda 0.01 and the authors' mean normalization
    light = resolve_config("MNIST", 0.001, "sledge-light", {}, None)
    assert (light["num_layers"], light["embedding_layers"], light["lr"], light["lam"],
            light["supervise_graph"], light["normalization"]) == (2, 1, 1e-4, 0.01, False,
                                                                  "mean")
    assert resolve_config("MNIST", 0.01, "sledge-light", {}, None)["normalization"] == "symmetric"
    assert resolve_config("MNIST", 0.001, "sledge", {}, None)["normalization"] == "symmetric"
    assert resolve_config("MNIST", 0.001, "sledge-light", {"normalization": "symmetric"},
                          None)["normalization"] == "symmetric"
    # on GSAD, SLeDGe-L at 0.1 % and SLeDGe at 1 %, on Shopper both at 0.1 %, on Shuttle
    # SLeDGe at 0.1 % and SLeDGe-L at 1 %: the paper's A + I read literally, as the package
    # preset everywhere; the paper preset's other cells and its ablations keep PyG's
    for dataset, model, ratio in (("GSAD", "sledge-light", 0.001), ("GSAD", "sledge", 0.01),
                                  ("Shopper", "sledge", 0.001),
                                  ("Shopper", "sledge-light", 0.001),
                                  ("Shuttle", "sledge", 0.001),
                                  ("Shuttle", "sledge-light", 0.01)):
        assert resolve_config(dataset, ratio, model, {}, None)["normalization"] == (
            "symmetric-add")
        assert resolve_config(dataset, ratio, model, {}, None,
                              preset="package")["normalization"] == "symmetric-add"
    for dataset, model, ratio in (("GSAD", "sledge", 0.001), ("GSAD", "sledge-light", 0.01),
                                  ("GSAD", "static", 0.01), ("GSAD", "gsl", 0.01),
                                  ("Shopper", "sledge", 0.01),
                                  ("Shopper", "sledge-light", 0.01),
                                  ("Shopper", "static", 0.001), ("Shopper", "gsl", 0.001),
                                  ("Shuttle", "sledge-light", 0.001),
                                  ("Shuttle", "sledge", 0.01), ("Shuttle", "gsl", 0.001),
                                  ("Shuttle", "static", 0.01)):
        assert resolve_config(dataset, ratio, model, {}, None)["normalization"] == (
            "symmetric")
        assert resolve_config(dataset, ratio, model, {}, None,
                              preset="package")["normalization"] == "symmetric-add"
    # a stream outside the paper takes the package's; a flag overrides either preset's
    assert resolve_config("synthetic", 0.01, "sledge", {}, None)["normalization"] == (
        "symmetric-add")
    assert resolve_config("Shuttle", 0.01, "sledge", {"normalization": "mean"}, None,
                          preset="package")["normalization"] == "mean"
    # SLeDGe on MNIST at 0.1 %: 2 GCN layers (not the authors' 4), lr 1e-4 and f_E
    # trained by the structure regularizer only
    full = resolve_config("MNIST", 0.001, "sledge", {}, None)
    assert (full["num_layers"], full["embedding_layers"], full["lr"],
            full["supervise_graph"]) == (2, 2, 1e-4, False)
    assert resolve_config("MNIST", 0.01, "sledge", {}, None)["supervise_graph"] is True
    assert resolve_config("MNIST", 0.01, "sledge-light", {}, None)["supervise_graph"] is True
    assert resolve_config("MNIST", 0.01, "sledge", {}, None)["num_layers"] == 4
    assert resolve_config("MNIST", 0.001, "sledge", {}, None, preset="package")["lr"] == 1e-3
    assert resolve_config("MNIST", 0.001, "sledge", {"lr": 1e-3}, None)["lr"] == 1e-3
    assert resolve_config("MNIST", 0.01, "sledge-light", {}, None)["embedding_layers"] == 1
    assert resolve_config("MNIST", 0.001, "sledge-light", {"embedding_layers": 2},
                          None)["embedding_layers"] == 2
    # SLeDGe-L on Shuttle at 0.1 %: 10 labeled slots per class, not the paper's one
    light = resolve_config("Shuttle", 0.001, "sledge-light", {}, None, num_classes=7)
    assert (light["labeled_size"], light["unlabeled_size"]) == (70, 930)
    other = resolve_config("Shuttle", 0.001, "sledge", {}, None, num_classes=7)
    assert (other["labeled_size"], other["unlabeled_size"]) == (10, 990)
    assert resolve_config("Shuttle", 0.001, "sledge-light", {"labeled_size": 20}, None,
                          num_classes=7)["labeled_size"] == 20
    # MNIST at 0.1 %: every label keeps its slot, for both models (sessions 66 and 69);
    # the ablations keep the paper's rule
    light = resolve_config("MNIST", 0.001, "sledge-light", {}, None, num_classes=10)
    assert (light["labeled_size"], light["unlabeled_size"]) == (100, 900)
    full = resolve_config("MNIST", 0.001, "sledge", {}, None, num_classes=10)
    assert (full["labeled_size"], full["unlabeled_size"]) == (100, 900)
    static = resolve_config("MNIST", 0.001, "static", {}, None, num_classes=10)
    assert (static["labeled_size"], static["unlabeled_size"]) == (10, 990)
    # a memory chosen too small for the preset's 70 slots takes the paper's rule; one
    # that holds them keeps them; a --labeled-size that does not fit stays an error
    small = resolve_config("Shuttle", 0.001, "sledge-light", {"memory_size": 50}, None,
                           num_classes=7)
    assert (small["labeled_size"], small["unlabeled_size"]) == (10, 40)
    large = resolve_config("Shuttle", 0.001, "sledge-light", {"memory_size": 2000}, None,
                           num_classes=7)
    assert (large["labeled_size"], large["unlabeled_size"]) == (70, 1930)
    with pytest.raises(UsageError, match="--labeled-size 70 exceeds the memory size 50"):
        resolve_config("Shuttle", 0.001, "sledge-light", {"memory_size": 50, "labeled_size": 70},
                       None, num_classes=7)
    # exceptions name known datasets and models, at the paper's ratios
    for dataset, model, ratio in MEASURED_EXCEPTIONS:
        assert dataset in DATASETS and model in MODEL_NAMES and ratio in (0.001, 0.01)


def test_paper_preset_takes_the_robust_range_on_shopper_and_gsad():
    for dataset, ratio in itertools.product(("Shopper", "GSAD"), (0.001, 0.01)):
        for model in ("sledge", "sledge-light", "memory", "static", "gsl"):
            config = resolve_config(dataset, ratio, model, {}, None)
            assert config["scaling"] == "robust-rescale"
        # Base has no memory to re-scale: the same range scales its stream
        assert resolve_config(dataset, ratio, "base", {}, None)["scaling"] == "robust"
        # the baselines and the package preset keep the running min-max range
        assert resolve_config(dataset, ratio, "ressl", {}, None)["scaling"] == "auto"
        package = resolve_config(dataset, ratio, "sledge", {}, None, preset="package")
        assert resolve_stream_entries(package, "sledge", None)["scaling"] == "online-rescale"
    # Shuttle (where it lost) and MNIST (a declared pixel range) keep "auto"
    for dataset, model in itertools.product(("Shuttle", "MNIST"), ("sledge", "base")):
        assert resolve_config(dataset, 0.01, model, {}, None)["scaling"] == "auto"
    # a flag still wins, and a learner scaling asked of Base is still refused
    assert resolve_config("GSAD", 0.01, "sledge", {"scaling": "online-rescale"},
                          None)["scaling"] == "online-rescale"
    assert resolve_config("GSAD", 0.01, "base", {"scaling": "online"}, None)["scaling"] == "online"
    config = resolve_config("GSAD", 0.01, "base", {"scaling": "robust-rescale"}, None)
    with pytest.raises(UsageError, match="needs a model that scales its own input"):
        build_learner("base", 3, 2, config, seed=0, device="cpu")


def test_gsad_few_label_preset_takes_the_wider_quantile_only_with_its_scaling():
    assert set(MEASURED_RATIO_CONFIGS) <= set(itertools.product(DATASETS, (0.001, 0.01)))
    for model in ("sledge", "sledge-light", "memory", "static", "gsl", "base"):
        assert resolve_config("GSAD", 0.001, model, {}, None)["robust_quantile"] == 0.05
        assert resolve_config("GSAD", 0.01, model, {}, None)["robust_quantile"] == 0.01
    assert resolve_config("GSAD", 0.001, "sledge", {}, None,
                          preset="package")["robust_quantile"] == 0.01
    # another scaling chosen by flag or file leaves the preset's quantile out
    # (instead of an error for a setting nobody gave) ...
    for overrides, config_file in (({"scaling": "online-rescale"}, None),
                                   ({}, {"scaling": "online-rescale"})):
        config = resolve_config("GSAD", 0.001, "sledge", overrides, config_file)
        assert config["robust_quantile"] == 0.01
        assert resolve_stream_entries(config, "sledge", None)["scaling"] == "online-rescale"
    # ... a robust scaling chosen keeps it, and an explicit quantile still wins
    assert resolve_config("GSAD", 0.001, "sledge", {"scaling": "robust-rescale"},
                          None)["robust_quantile"] == 0.05
    assert resolve_config("GSAD", 0.001, "sledge", {"robust_quantile": 0.2},
                          None)["robust_quantile"] == 0.2
    # an explicit quantile with another scaling is still refused
    config = resolve_config("GSAD", 0.001, "sledge", {"scaling": "online-rescale",
                                                      "robust_quantile": 0.05}, None)
    with pytest.raises(UsageError, match="only applies to --scaling robust"):
        resolve_stream_entries(config, "sledge", None)


def test_base_keeps_a_hidden_layer_under_the_paper_preset():
    # Shuttle: gcn_layer 1 -> one layer for SLeDGe, but Base stays an MLP with LayerNorm
    assert resolve_config("Shuttle", 0.01, "sledge", {}, None)["num_layers"] == 1
    assert resolve_config("Shuttle", 0.01, "base", {}, None)["num_layers"] == BASE_MIN_LAYERS
    # deeper paper settings are kept, an explicit choice wins
    assert resolve_config("Shopper", 0.001, "base", {}, None)["num_layers"] == 4
    # ... except on MNIST, where Base (and +M, Base with the memory) measured best
    # with 2 layers at both ratios
    for ratio in (0.001, 0.01):
        assert resolve_config("MNIST", ratio, "base", {}, None)["num_layers"] == 2
        assert resolve_config("MNIST", ratio, "memory", {}, None)["num_layers"] == 2
    assert resolve_config("MNIST", 0.01, "sledge-light", {}, None)["num_layers"] == 4
    assert resolve_config("MNIST", 0.01, "base", {"num_layers": 4}, None)["num_layers"] == 4
    assert resolve_config("Shuttle", 0.01, "base", {"num_layers": 1}, None)["num_layers"] == 1
    # MNIST's 2 layers are its measured cell, not the floor (which only lifts fewer)
    sources = {}
    resolve_config("MNIST", 0.01, "base", {}, None, sources=sources)
    assert sources["num_layers"] == "measured setting for base on MNIST at 1 % (see README)"
    resolve_config("Shuttle", 0.01, "base", {}, None, sources=sources)
    assert sources["num_layers"] == "paper preset: base keeps at least 2 layers"


def test_memory_sizes_follow_the_paper_rule():
    full = resolve_config("GSAD", 0.001, "sledge", {}, None, num_classes=6)
    assert (full["labeled_size"], full["unlabeled_size"]) == (10, 990)  # max(c, 10)
    # sledge-light: the full labeled memory by default (the authors' light script) ...
    light = resolve_config("MNIST", 0.01, "sledge-light", {}, None, num_classes=10)
    assert (light["labeled_size"], light["unlabeled_size"]) == (100, 900)
    # ... or one slot per class (the paper)
    paper = resolve_config("MNIST", 0.01, "sledge-light", {"light_memory": "per-class"}, None,
                           num_classes=10)
    assert (paper["labeled_size"], paper["unlabeled_size"]) == (10, 900)
    given = resolve_config("MNIST", 0.01, "sledge", {"labeled_size": 20}, None, num_classes=10)
    assert (given["labeled_size"], given["unlabeled_size"]) == (20, 980)
    # all three as options: only if they agree (the memory is the sum of its parts)
    agreeing = resolve_config("MNIST", 0.01, "sledge", {"memory_size": 60, "labeled_size": 10,
                                                        "unlabeled_size": 50}, None,
                              num_classes=10)
    assert (agreeing["memory_size"], agreeing["labeled_size"]) == (60, 10)
    with pytest.raises(UsageError, match="--memory-size 100 contradicts --labeled-size 5 and "
                                         r"--unlabeled-size 5 \(the memory is their sum, 10\)"):
        resolve_config("MNIST", 0.01, "sledge", {"memory_size": 100, "labeled_size": 5,
                                                 "unlabeled_size": 5}, None, num_classes=10)


def test_baselines_take_memory_input_preparation_and_their_own_hyperparameters():
    assert resolve_config("MNIST", 0.01, "tlp", {}, None) == {
        "memory_size": 1000, "scaling": "auto", "feature_transform": "none",
        "robust_quantile": 0.01, "robust_tolerance": 0.05, "robust_reservoir": 1000,
        "robust_window": None, "robust_clip": True, "feature_range": [-1.0, 1.0], "sigma": None,
        "knn": None}
    assert set(resolve_config("MNIST", 0.01, "hdssl", {}, None)) == {
        "memory_size", "scaling", "feature_transform", "robust_quantile", "robust_tolerance",
        "robust_reservoir", "robust_window", "robust_clip", "feature_range", "decay",
        "prune_threshold", "radius_k", "chunk_size"}
    with pytest.raises(UsageError, match="'tlp': radius_k"):
        resolve_config("MNIST", 0.01, "tlp", {"radius_k": 3}, None)
    with pytest.raises(UsageError, match="'ressl': chunk_size"):
        resolve_config("MNIST", 0.01, "ressl", {"chunk_size": 3}, None)
    with pytest.raises(UsageError, match="lr"):
        resolve_config("MNIST", 0.01, "tlp", {"lr": 0.1}, None)
    with pytest.raises(UsageError, match="'tlp': decay"):
        resolve_config("MNIST", 0.01, "tlp", {"decay": 0.1}, None)
    with pytest.raises(UsageError, match="'sledge': knn"):
        resolve_config("MNIST", 0.01, "sledge", {"knn": 5}, None)


@pytest.mark.parametrize("name, given, attributes", [
    ("tlp", {"sigma": 0.5, "knn": 3}, ("sigma", "knn")),
    ("ressl", {"decay": 1e-3, "prune_threshold": 0.2, "window": 7, "radius_k": 3},
     ("decay", "prune_threshold", "window", "radius_k")),
    ("hdssl", {"decay": 1e-3, "prune_threshold": 0.2, "radius_k": 2, "chunk_size": 9},
     ("decay", "prune_threshold", "k", "chunk_size")),
])
def test_baseline_hyperparameters_reach_the_baseline_and_default_to_its_own(name, given,
                                                                            attributes):
    default = build_learner(name, 4, 3, resolve_config("synthetic", 0.01, name, {}, None),
                            seed=0, device="cpu")
    published = type(default)(4, 3)
    assert all(getattr(default, key) == getattr(published, key) for key in attributes)
    set_ = build_learner(name, 4, 3, resolve_config("synthetic", 0.01, name, given, None),
                         seed=0, device="cpu")
    assert [getattr(set_, key) for key in attributes] == list(given.values())
    assert all(getattr(published, key) != value
               for key, value in zip(attributes, given.values()))


def test_unknown_keys_and_bad_tau_are_usage_errors():
    with pytest.raises(UsageError, match="bogus"):
        resolve_config("MNIST", 0.01, "sledge", {}, {"bogus": 1})
    with pytest.raises(UsageError, match="tau"):
        parse_tau(-1)
    # zero and minus infinity are no positive numbers (minus infinity is no 'inf')
    for value in (0, 0.0, "0", float("-inf"), "-inf", "-Infinity"):
        with pytest.raises(UsageError, match="tau must be a positive number or 'inf'"):
            parse_tau(value)
    assert parse_tau("inf") is None and parse_tau(2) == 2.0
    assert parse_tau(float("inf")) is None and parse_tau(1e-9) == 1e-9


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_every_model_builds(name):
    config = resolve_config("synthetic", 0.01, name, {"hidden_channels": 8}
                            if "sledge" in name else {}, None, num_classes=3)
    learner = build_learner(name, 4, 3, config, seed=0, device="cpu")
    assert int(learner.predict([0.1, 0.2, 0.3, 0.4])) in range(3)


@pytest.mark.parametrize("model", ["sledge", "sledge-light", "memory", "static", "gsl"])
def test_online_rescale_builds_learners_that_scale_inside(model):
    config = resolve_config("Shuttle", 0.01, model, {"scaling": "online-rescale"}, None,
                            num_classes=7)
    assert build_learner(model, 9, 7, config, 0, "cpu").input_scaler is not None
    config = resolve_config("Shuttle", 0.01, model, {"scaling": "online"}, None, num_classes=7)
    assert build_learner(model, 9, 7, config, 0, "cpu").input_scaler is None


def test_approximation_options_reach_the_model_and_default_to_exact():
    exact = build_learner("sledge", 9, 7, resolve_config("Shuttle", 0.01, "sledge", {}, None,
                                                         num_classes=7), 0, "cpu")
    assert exact.reselect_every == 1 and exact.graph.search_dtype is None
    config = resolve_config("Shuttle", 0.01, "sledge",
                            {"reselect_every": 4, "search_dtype": "bfloat16"}, None,
                            num_classes=7)
    approx = build_learner("sledge", 9, 7, config, 0, "cpu")
    assert approx.reselect_every == 4 and approx.graph.search_dtype is torch.bfloat16


def test_class_prior_option_reaches_the_model():
    default = resolve_config("Shopper", 0.01, "sledge", {}, None, num_classes=2)
    assert build_learner("sledge", 17, 2, default, 0, "cpu").class_prior == "memory"
    config = resolve_config("Shopper", 0.01, "sledge", {"class_prior": "stream"}, None,
                            num_classes=2)
    assert build_learner("sledge", 17, 2, config, 0, "cpu").class_prior == "stream"


@pytest.mark.parametrize("model", sorted(SLEDGE_VARIANTS))
@pytest.mark.parametrize("dataset", ["Shopper", "MNIST"])
def test_model_kwargs_of_every_resolved_config_build_the_model(model, dataset):
    # what benchmarks/peers.py hands to the CapyMOA adapter: every entry a model argument
    config = resolve_config(dataset, 0.001, model, {}, None, num_classes=2)
    kwargs = model_kwargs(config)
    assert not {"memory_size", "scaling", "feature_transform"} & set(kwargs)
    learner = build_model(model, 4, 2, seed=0, **kwargs)
    assert learner.memory.capacity == config["memory_size"]


def test_every_default_entry_is_a_sledge_entry_and_a_flag():
    # one list of entries: the defaults, what SLeDGe models read, and what `run`
    # overrides besides the baselines' own hyperparameters
    from torch_geometric_stream.cli.models import BASELINE_HYPERPARAMETER_KEYS, SLEDGE_CONFIG_KEYS
    from torch_geometric_stream.cli.run import OVERRIDE_KEYS
    assert BASELINE_HYPERPARAMETER_KEYS == ("sigma", "knn", "decay", "prune_threshold",
                                            "window", "radius_k", "chunk_size")
    assert tuple(DEFAULT_CONFIG) == SLEDGE_CONFIG_KEYS
    assert OVERRIDE_KEYS == SLEDGE_CONFIG_KEYS + BASELINE_HYPERPARAMETER_KEYS


@pytest.mark.parametrize("model, fixed", [
    ("gsl", {"lam": 0.0}),
    ("static", {"lam": 0.0, "merge_similarity": "raw"}),
    ("memory", {"lam": 0.0, "merge_similarity": "raw"}),
])
def test_a_run_records_the_entries_its_model_fixes(model, fixed):
    # the paper preset's lam and the default merge similarity give way to the model's own
    config = resolve_config("MNIST", 0.001, model, {}, None, num_classes=10)
    assert {key: config[key] for key in fixed} == fixed
    learner = build_learner(model, 4, 10, config, 0, "cpu")
    assert (learner.lam, learner.merge_similarity) == (config["lam"], config["merge_similarity"])
    # giving the fixed value itself is no conflict
    assert resolve_config("MNIST", 0.001, model, fixed, dict(fixed))["lam"] == 0.0


@pytest.mark.parametrize("model, overrides, unread", [
    ("memory", {"k": 3, "lr": 1e-2, "normalization": "mean"}, "k, normalization"),
    ("sledge", {"light_memory": "full"}, "light_memory"),
    ("sledge-light", {"reselect_every": 4}, "reselect_every"),
    ("gsl", {"regularizer": "frobenius"}, "regularizer"),
    ("base", {"memory_size": 500, "tau": 100}, "memory_size, tau"),
])
def test_an_option_the_model_never_reads_is_refused(model, overrides, unread):
    them = "them" if "," in unread else "it"
    with pytest.raises(UsageError, match=rf"^options: model '{model}' does not read {unread} "
                                         rf"\(setting {them} changes nothing\); drop {them}$"):
        resolve_config("MNIST", 0.01, model, overrides, None)
    # a --config file may hold them (tune writes every entry into its best configuration)
    config = resolve_config("MNIST", 0.01, model, {}, dict(overrides))
    assert all(config[key] == value for key, value in overrides.items())
    # the models that read them take them as options
    reader = "sledge-light" if model == "sledge" else "sledge"
    assert resolve_config("MNIST", 0.01, reader, overrides, None)["lr"] == overrides.get("lr", 1e-3)


@pytest.mark.parametrize("source, overrides, config_file", [
    ("options", {"lam": 0.5}, None),
    ("--config", {}, {"lam": 0.01, "k": 3}),
])
def test_an_entry_the_model_fixes_is_refused_not_ignored(source, overrides, config_file):
    with pytest.raises(UsageError, match=rf"^{source}: model 'gsl' always runs with lam = 0.0; "
                                         r"drop lam, or use model 'sledge' to set it$"):
        resolve_config("MNIST", 0.001, "gsl", overrides, config_file)
    with pytest.raises(UsageError, match="lam = 0.0, merge_similarity = 'raw'; drop lam, "
                                         "merge_similarity, or use model 'sledge' to set them"):
        resolve_config("MNIST", 0.001, "static", {"lam": 0.5, "merge_similarity": "embedding"},
                       None)
    # SLeDGe itself and its light mode fix neither
    assert resolve_config("MNIST", 0.001, "sledge", overrides, config_file)["lam"] in (0.5, 0.01)
    assert resolve_config("MNIST", 0.001, "sledge-light", {"lam": 0.5}, None)["lam"] == 0.5


@pytest.mark.parametrize("dataset, num_classes, model, ratio, preset, expected", [
    ("Shuttle", 7, "sledge-light", 0.001, "package", (70, 930)),
    ("Shopper", 2, "sledge-light", 0.001, "package", (20, 980)),
    ("MNIST", 10, "sledge-light", 0.001, "package", (100, 900)),
    ("MNIST", 10, "sledge-light", 0.002, "package", (100, 900)),
    ("synthetic", 3, "sledge-light", 0.001, "paper", (30, 970)),  # a stream outside the paper
    ("Shuttle", 7, "sledge-light", 0.01, "package", (100, 900)),  # from 0.5 % on: the paper's
    ("GSAD", 6, "sledge-light", 0.001, "paper", (10, 990)),       # the paper preset: the paper's
    ("Shuttle", 7, "sledge", 0.001, "package", (70, 930)),
    ("MNIST", 10, "sledge", 0.001, "package", (100, 900)),
    ("Shuttle", 7, "sledge", 0.001, "paper", (10, 990)),         # the paper preset: the paper's
    ("MNIST", 10, "sledge", 0.001, "paper", (100, 900)),         # ... but for measured cells
    ("Shuttle", 7, "memory", 0.001, "package", (10, 990)),       # the ablations: the paper's
])
def test_package_labeled_slots_per_class_below_half_a_percent(dataset, num_classes, model,
                                                              ratio, preset, expected):
    config = resolve_config(dataset, ratio, model, {}, None, num_classes=num_classes,
                            preset=preset)
    assert (config["labeled_size"], config["unlabeled_size"]) == expected


def test_package_labeled_slots_per_class_name_sledge_models():
    assert set(FEW_LABEL_SLOTS_PER_CLASS) <= set(SLEDGE_VARIANTS)
    assert all(slots > 1 for slots in FEW_LABEL_SLOTS_PER_CLASS.values())


def test_package_labeled_slots_yield_to_the_options():
    given = resolve_config("Shuttle", 0.001, "sledge-light", {"labeled_size": 20}, None,
                           num_classes=7, preset="package")
    assert (given["labeled_size"], given["unlabeled_size"]) == (20, 980)
    small = resolve_config("Shuttle", 0.001, "sledge-light", {"memory_size": 50}, None,
                           num_classes=7, preset="package")
    assert (small["labeled_size"], small["unlabeled_size"]) == (49, 1)
    per_class = resolve_config("Shuttle", 0.001, "sledge-light", {"light_memory": "per-class"},
                               None, num_classes=7, preset="package")
    assert per_class["labeled_size"] == 7


def test_a_presets_labeled_memory_goes_only_with_a_memory_that_holds_more():
    # SLeDGe on MNIST at 0.1 % keeps 100 labeled slots: a memory of 100 cannot hold
    # them and an unlabeled memory, so the paper's rule sizes it; one of 101 can
    exact = resolve_config("MNIST", 0.001, "sledge", {"memory_size": 100}, None, num_classes=10)
    assert (exact["labeled_size"], exact["unlabeled_size"]) == (10, 90)
    larger = resolve_config("MNIST", 0.001, "sledge", {"memory_size": 101}, None, num_classes=10)
    assert (larger["labeled_size"], larger["unlabeled_size"]) == (100, 1)


def test_only_sledge_light_keeps_one_labeled_slot_per_class():
    # a --config file may hold every entry (tune's best configurations do): SLeDGe
    # never reads light_memory, so its labeled memory stays the paper's
    config = resolve_config("MNIST", 0.01, "sledge", {}, {"light_memory": "per-class"},
                            num_classes=10)
    assert (config["labeled_size"], config["unlabeled_size"]) == (100, 900)


@pytest.mark.parametrize("flag, config_file", [({"labeled_size": 5}, None),
                                               ({}, {"labeled_size": 5})])
def test_a_per_class_light_memory_refuses_another_labeled_size(flag, config_file):
    # before, the 5 was replaced by one slot per class without a word
    with pytest.raises(UsageError) as error:
        resolve_config("Shuttle", 0.001, "sledge-light", {"light_memory": "per-class", **flag},
                       config_file, num_classes=7, preset="package")
    assert str(error.value) == ("--labeled-size 5 (config entry labeled_size) does not apply "
                                "to --light-memory per-class, which keeps one labeled slot "
                                "per class (7); drop it, or choose --light-memory full")
    # one slot per class given as such (a best configuration that tune wrote) is accepted,
    # and so is a preset's labeled memory, which the per-class memory replaces
    resolve_config("Shuttle", 0.001, "sledge-light", {"light_memory": "per-class"},
                   {"labeled_size": 7}, num_classes=7, preset="package")
    paper = resolve_config("MNIST", 0.001, "sledge-light", {"light_memory": "per-class"}, None,
                           num_classes=10)
    assert paper["labeled_size"] == 10


def test_quantile_range_entries_are_named_by_their_whole_option(monkeypatch):
    # an option whose name holds another's (--robust-window-reservoir holds
    # --robust-window): before, the error named robust_window too
    monkeypatch.setitem(configs._QUANTILE_RANGE_ENTRIES, "reservoir_size",
                        "robust_window_reservoir")
    config = {"robust_quantile": 0.01, "robust_tolerance": 0.0, "robust_window_reservoir": 0,
              "robust_window": None, "robust_clip": True}
    with pytest.raises(UsageError) as error:
        check_quantile_range_entries(config)
    assert str(error.value) == ("--robust-window-reservoir must be >= 1, got 0 (config "
                                "entry robust_window_reservoir)")


@pytest.mark.parametrize("entries, message", [
    ({"robust_window": 10},
     "ROBUST_WINDOW must be >= 1000, got 10 (ROBUST_RESERVOIR: a row enters with probability "
     "ROBUST_RESERVOIR / ROBUST_WINDOW) (config entries robust_reservoir, robust_window)"),
    ({"robust_window": 2.5},
     "ROBUST_WINDOW must be an integer, got float (config entry robust_window)"),
    ({"robust_tolerance": -1},
     "ROBUST_TOLERANCE must be a finite number >= 0, got -1 (config entry robust_tolerance)"),
])
def test_quantile_range_entries_are_named_whatever_the_error_says(monkeypatch, entries,
                                                                  message):
    # the check says which settings it refuses: before, the entries were read
    # off the options in the error's text, and names not spelled --... named none
    monkeypatch.setattr(configs, "_flag", lambda key, value: key.upper())
    config = {"robust_quantile": 0.01, "robust_tolerance": 0.0, "robust_reservoir": 1000,
              "robust_window": None, "robust_clip": True, **entries}
    with pytest.raises(UsageError) as error:
        check_quantile_range_entries(config)
    assert str(error.value) == message
