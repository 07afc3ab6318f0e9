"""The arguments each model declares it never reads change nothing it computes."""
from functools import lru_cache

import pytest
import torch

from torch_geometric_stream.models import MODELS, build_model, unread_arguments, unread_entries

from sledge_stream_helpers import C, D, gaussian_stream

#: A small model's arguments, and another value for each argument a model may not read.
BASE = dict(labeled_size=6, unlabeled_size=12, k=3, hidden_channels=8, num_layers=2, lr=5e-3,
            seed=0)
OTHER_VALUE = dict(labeled_size=4, unlabeled_size=9, k=1, embedding_layers=2,
                   normalization="mean", bias_position="before", regularizer="frobenius",
                   lam=0.5, tau=5.0, light=True, light_memory="full", propagation="dense",
                   alpha=0.3, beta=0.7, count_offset=0, merge_similarity="raw",
                   supervise_graph=False, graph="static", input_scaling="online",
                   source_merge="unit", dropout=0.5,
                   class_prior="stream", block_size=2, reselect_every=3,
                   search_dtype="bfloat16")


def _prequential_probabilities(name, **kwargs):
    """Predict-then-learn over 30 rows (every third labeled; the 18-slot memory
    fills, then merges): the stacked probabilities :math:`(30, C)` and the final
    memory."""
    learner = build_model(name, D, C, **{**BASE, **kwargs})
    x, y = gaussian_stream(30, seed=1)
    probabilities = []
    for i in range(30):
        probabilities.append(learner.predict_proba(x[i]))
        learner.learn(x[i], int(y[i]) if i % 3 == 0 else -1)
    memory = getattr(learner, "memory", None)
    return torch.cat(probabilities), None if memory is None else memory.nodes().clone()


@lru_cache(maxsize=None)
def _default_run(name):
    return _prequential_probabilities(name)


@pytest.mark.parametrize("name, entry", [(name, entry) for name in MODELS
                                         for entry in sorted(unread_entries(name))])
def test_an_unread_argument_changes_nothing(name, entry):
    assert entry in OTHER_VALUE, f"no other value of {entry!r} to try"
    probabilities, memory = _default_run(name)
    other_probabilities, other_memory = _prequential_probabilities(name, **{entry: OTHER_VALUE[entry]})
    assert torch.equal(probabilities, other_probabilities)
    assert (memory is None and other_memory is None) or torch.equal(memory, other_memory)


@pytest.mark.parametrize("name, entry", [("sledge", "k"), ("sledge", "reselect_every"),
                                         ("sledge-light", "light_memory"),
                                         ("gsl", "embedding_layers"), ("static", "k"),
                                         ("memory", "tau"), ("base", "num_layers")])
def test_a_read_argument_changes_the_predictions(name, entry):
    # the check above can fail: the entry next to an unread one is read
    assert entry not in unread_entries(name)
    other = dict(OTHER_VALUE, num_layers=1)[entry]
    assert not torch.equal(_default_run(name)[0],
                           _prequential_probabilities(name, **{entry: other})[0])


def test_the_unread_arguments_of_each_setting():
    assert unread_arguments() == {"light_memory"}
    assert unread_arguments(light=True) == {"reselect_every"}
    assert unread_arguments(lam=0.0) == {"light_memory", "regularizer"}
    assert unread_arguments(graph="static") == {"light_memory", "embedding_layers",
                                                "supervise_graph", "regularizer"}
    assert unread_arguments(graph="none") == {
        "light_memory", "embedding_layers", "supervise_graph", "regularizer", "k",
        "normalization", "bias_position", "propagation", "reselect_every", "search_dtype",
        "block_size"}
    assert unread_entries("memory") == unread_arguments(graph="none")
    assert unread_arguments(scales_input=False) == {"light_memory", "source_merge"}
    assert "lr" not in unread_entries("base") and "k" in unread_entries("base")


@pytest.mark.parametrize("name", ["sledge", "sledge-light", "memory"])
def test_source_merge_is_unread_without_an_input_scaling(name):
    # (the models of BASE have none; with one, test_source_merge shows it read)
    assert "source_merge" in unread_arguments(scales_input=False)
    probabilities, memory = _default_run(name)
    other_probabilities, other_memory = _prequential_probabilities(name, source_merge="unit")
    assert torch.equal(probabilities, other_probabilities) and torch.equal(memory, other_memory)


@pytest.mark.parametrize("name, kwargs, message", [
    ("sledge", {"memory_size": 50}, "memory_size applies to the baselines"),
    ("sledge-light", {"memory_size": 50}, "takes labeled_size and unlabeled_size"),
    ("base", {"bogus_option": 1}, r"unknown keyword\(s\) \['bogus_option'\]"),
    ("sledge", {"lamda": 0.1}, r"unknown keyword\(s\) \['lamda'\]"),
    ("tlp", {"sigmaa": 2.0}, r"\['sigmaa'\]: it takes SLeDGe's arguments or its "
                             r"hyperparameters \['knn', 'sigma'\]"),
    ("ressl", {"sigma": 1.0}, r"\['sigma'\]"),  # TLP's, not ReSSL's
])
def test_a_keyword_no_model_reads_is_refused_not_dropped(name, kwargs, message):
    with pytest.raises(TypeError, match=message):
        build_model(name, D, C, **kwargs)


def test_the_keywords_a_model_reads_still_build_it():
    assert build_model("tlp", D, C, sigma=2.0, lr=5.0, memory_size=12).memory_size == 12
    assert build_model("base", D, C, k=3, lam=0.5).num_classes == C  # SLeDGe's, unread
    assert build_model("sledge", D, C, labeled_size=6, unlabeled_size=6).memory.capacity == 12
