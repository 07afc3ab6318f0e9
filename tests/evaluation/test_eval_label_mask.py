import math

import numpy as np
import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset
from hypothesis import given, settings
from hypothesis import strategies as st

from torch_geometric_stream.evaluation import (
    authors_label_mask,
    bernoulli_label_mask,
    capymoa_label_mask,
    make_label_mask,
    paper_label_mask,
    paper_memory_sizes,
    PositionMask,
)


def test_paper_label_mask_counts():
    labels = np.repeat([2, 0, 1], [300, 300, 400])
    mask = paper_label_mask(labels, 0.01, seed=0)
    assert mask.dtype == bool and mask.shape == (1000,)
    assert mask.sum() == 10
    assert mask[[0, 300, 600]].all()  # first occurrence of every class

    # 0.1 % of 1000 is 1 < 3 classes: only the first occurrences.
    mask = paper_label_mask(labels, 0.001, seed=0)
    assert np.flatnonzero(mask).tolist() == [0, 300, 600]

    assert paper_label_mask(labels, 1.0, seed=0).all()


def test_paper_label_mask_floor_is_robust_to_rounding():
    # 0.29 * 100 == 28.999999999999996 in floating point.
    assert paper_label_mask(np.zeros(100, dtype=int), 0.29, seed=1).sum() == 29


@settings(max_examples=40, deadline=None)
@given(labels=st.lists(st.integers(0, 6), min_size=1, max_size=300),
       ratio=st.floats(0.001, 1.0), seed=st.integers(0, 2**32 - 1))
def test_paper_label_mask_properties(labels, ratio, seed):
    labels = np.asarray(labels)
    mask = paper_label_mask(labels, ratio, seed)
    _, first = np.unique(labels, return_index=True)
    assert mask[first].all()
    assert mask.sum() == max(first.size, math.floor(ratio * labels.size + 1e-9))


def _authors_draw(labels: np.ndarray, ratio: float, seed: int) -> np.ndarray:
    """The authors' label selection as their script runs it: global seed, a data
    loader walked until every class was seen, then ``torch.randperm``."""
    torch.manual_seed(seed)
    loader = DataLoader(TensorDataset(torch.as_tensor(labels)), batch_size=1, shuffle=False)
    first = {}
    for index, (label,) in enumerate(loader):
        first.setdefault(int(label), index)
        if len(first) == np.unique(labels).size:
            break
    chosen = torch.zeros(labels.size, dtype=torch.bool)
    chosen[list(first.values())] = True
    remaining = max(len(first), int(ratio * labels.size)) - len(first)
    candidates = torch.where(~chosen)[0]
    chosen[candidates[torch.randperm(len(candidates))[:remaining]]] = True
    return chosen.numpy()


@pytest.mark.parametrize("seed", [0, 2000, 4000])
def test_authors_label_mask_matches_the_authors_draw(seed):
    labels = np.random.default_rng(1).integers(0, 3, size=500)
    labels[:4] = [2, 2, 0, 2]
    mask = authors_label_mask(labels, 0.05, seed)
    assert mask.sum() == 25 and mask[[0, 2]].all()
    assert np.array_equal(mask, _authors_draw(labels, 0.05, seed))
    assert not np.array_equal(mask, paper_label_mask(labels, 0.05, seed))


def test_authors_label_mask_floors_without_tolerance():
    # 0.29 * 100 == 28.999999999999996: the authors' int() gives 28
    assert authors_label_mask(np.zeros(100, dtype=int), 0.29, seed=1).sum() == 28
    with pytest.raises(ValueError, match="labels is empty"):
        authors_label_mask(np.zeros(0, dtype=int), 0.1, seed=0)


def test_make_label_mask_dispatches_by_name():
    labels = np.repeat([1, 0], [500, 500])
    assert np.array_equal(make_label_mask("paper", labels, 0.01, seed=3),
                          paper_label_mask(labels, 0.01, seed=3))
    assert np.array_equal(make_label_mask("authors", labels, 0.01, seed=3),
                          authors_label_mask(labels, 0.01, seed=3))
    assert np.array_equal(make_label_mask("bernoulli", labels, 0.01, seed=3),
                          bernoulli_label_mask(1000, 0.01, seed=3))
    assert np.array_equal(make_label_mask("capymoa", labels, 0.01, seed=3),
                          capymoa_label_mask(1000, 0.01, seed=3))
    with pytest.raises(ValueError, match="unknown label mask 'random'"):
        make_label_mask("random", labels, 0.01, seed=3)


@pytest.mark.parametrize("kind", ["paper", "authors", "bernoulli", "capymoa"])
def test_every_label_mask_names_a_bad_seed_and_two_dimensional_labels(kind):
    labels = np.repeat([1, 0], [50, 50])
    with pytest.raises(ValueError, match="seed must be >= 0, got -1"):
        make_label_mask(kind, labels, 0.1, seed=-1)
    with pytest.raises(TypeError, match="seed must be an integer, got float"):
        make_label_mask(kind, labels, 0.1, seed=1.5)
    with pytest.raises(ValueError, match=r"labels must be 1-D \(T,\), got shape \(2, 50\)"):
        make_label_mask(kind, labels.reshape(2, 50), 0.1, seed=0)
    with pytest.raises(ValueError, match=r"labels must be 1-D \(T,\), got shape \(\)"):
        make_label_mask(kind, 3, 0.1, seed=0)  # one label, not a stream of them


def test_paper_label_mask_seeds():
    labels = np.arange(5000) % 4
    first = paper_label_mask(labels, 0.01, seed=0)
    assert np.array_equal(first, paper_label_mask(labels, 0.01, seed=0))
    assert not np.array_equal(first, paper_label_mask(labels, 0.01, seed=2000))


@pytest.mark.parametrize("seed, positions", [(0, [0, 3, 6, 7, 8]), (1, [0, 3, 4, 5, 6])])
def test_paper_label_mask_draws_numpys_default_generator_seeded_with_seed(seed, positions):
    """Classes 2, 0, 1 first at 0, 3, 6; half of 10 samples is 5 labels, so 2
    more of the others, drawn by default_rng(seed).choice without replacement."""
    labels = np.repeat([2, 0, 1], [3, 3, 4])
    mask = paper_label_mask(labels, 0.5, seed)
    assert np.flatnonzero(mask).tolist() == positions
    extra = np.random.default_rng(seed).choice([1, 2, 4, 5, 7, 8, 9], size=2, replace=False)
    assert sorted(extra.tolist()) == sorted(set(positions) - {0, 3, 6})


@pytest.mark.parametrize("ratio", [0.0, -0.1, 1.5])
def test_paper_label_mask_bad_ratio(ratio):
    with pytest.raises(ValueError, match="label_ratio"):
        paper_label_mask(np.zeros(10, dtype=int), ratio, seed=0)


def test_paper_label_mask_bad_labels():
    with pytest.raises(ValueError, match="empty"):
        paper_label_mask(np.array([], dtype=int), 0.01, seed=0)
    with pytest.raises(ValueError, match="1-D"):
        paper_label_mask(np.zeros((2, 2), dtype=int), 0.01, seed=0)


def test_bernoulli_label_mask():
    mask = bernoulli_label_mask(10_000, 0.1, seed=0)
    assert mask.dtype == bool and mask.shape == (10_000,)
    assert 800 < mask.sum() < 1200
    assert np.array_equal(mask, bernoulli_label_mask(10_000, 0.1, seed=0))
    assert not np.array_equal(mask, bernoulli_label_mask(10_000, 0.1, seed=1))
    with pytest.raises(ValueError, match="label_probability"):
        bernoulli_label_mask(10, 0.0, seed=0)
    with pytest.raises(ValueError, match="num_samples"):
        bernoulli_label_mask(0, 0.5, seed=0)


def test_bernoulli_label_mask_draws_numpys_default_generator_below_p():
    """default_rng(1) starts 0.5118, 0.9505, 0.1442, 0.9486, 0.3118; a position is
    labeled when its draw is below p, so not at a p equal to its draw."""
    assert bernoulli_label_mask(5, 0.5, seed=1).tolist() == [False, False, True, False, True]
    first = np.random.default_rng(1).random()
    assert bernoulli_label_mask(1, first, seed=1).tolist() == [False]
    assert bernoulli_label_mask(1, np.nextafter(first, 1.0), seed=1).tolist() == [True]


@pytest.mark.parametrize("num_classes, ratio, memory_size, expected", [
    (10, 0.01, 1000, (100, 900)),    # paper, 1 %
    (10, 0.001, 1000, (10, 990)),    # paper, 0.1 %
    (3, 0.001, 1000, (10, 990)),     # max(c, 10)
    (26, 0.001, 1000, (26, 974)),    # max(c, 10)
    (5, 0.004, 1000, (10, 990)),     # below 0.5 %: the 0.1 % setting
    (5, 0.005, 1000, (100, 900)),    # from 0.5 % on: the 1 % setting
    (5, 0.5, 1000, (100, 900)),
    (5, 0.01, 50, (49, 1)),          # L capped at M - 1
    (10, 0.01, 11, (10, 1)),         # L >= c
    (150, 0.01, 1000, (150, 850)),   # L >= c above the paper's 100
])
def test_paper_memory_sizes(num_classes, ratio, memory_size, expected):
    assert paper_memory_sizes(num_classes, ratio, memory_size) == expected


@pytest.mark.parametrize("num_classes, ratio, slots, memory_size, expected", [
    (7, 0.001, 10, 1000, (70, 930)),      # Shuttle: 10 per class
    (2, 0.001, 10, 1000, (20, 980)),      # Shopper
    (10, 0.001, 10, 1000, (100, 900)),    # MNIST: 100 at most ...
    (26, 0.001, 10, 1000, (100, 900)),    # ... in all
    (150, 0.001, 10, 1000, (150, 850)),   # still one slot per class
    (2, 0.001, 3, 1000, (10, 990)),       # never below the paper's max(c, 10)
    (7, 0.01, 10, 1000, (100, 900)),      # from 0.5 % on: the paper's 100
    (7, 0.001, 10, 50, (49, 1)),          # capped at M - 1
])
def test_paper_memory_sizes_slots_per_class(num_classes, ratio, slots, memory_size, expected):
    assert paper_memory_sizes(num_classes, ratio, memory_size,
                              slots_per_class=slots) == expected


def test_paper_memory_sizes_errors():
    with pytest.raises(ValueError, match="memory_size"):
        paper_memory_sizes(10, 0.01, memory_size=10)
    with pytest.raises(ValueError, match="label_ratio"):
        paper_memory_sizes(10, 0.0)
    with pytest.raises(ValueError, match="num_classes"):
        paper_memory_sizes(0, 0.01)
    with pytest.raises(ValueError, match="slots_per_class"):
        paper_memory_sizes(7, 0.001, slots_per_class=0)


def test_capymoa_label_mask_draws_the_legacy_seeded_mersenne_twister():
    # numpy's legacy stream for seed 1 starts 0.417022, 0.720324, 0.000114, 0.302333, 0.146756
    assert capymoa_label_mask(5, 0.2, seed=1).tolist() == [False, False, True, False, True]
    assert capymoa_label_mask(5, 0.72, seed=1).tolist() == [True, False, True, True, True]
    first = np.random.RandomState(1).random_sample()  # a draw equal to p: not below it
    assert capymoa_label_mask(1, first, seed=1).tolist() == [False]
    assert capymoa_label_mask(1, np.nextafter(first, 1.0), seed=1).tolist() == [True]
    mask = capymoa_label_mask(20_000, 0.01, seed=0)
    assert mask.dtype == bool and 150 < mask.sum() < 250
    assert not mask[:10].all()  # no first-occurrence rule


@pytest.mark.parametrize("kwargs, error, match", [
    ({"num_samples": 0}, ValueError, "num_samples"),
    ({"label_probability": 0.0}, ValueError, "label_probability"),
    ({"seed": -1}, ValueError, "seed"),
    ({"seed": 2 ** 32}, ValueError, "seed must be < 2\\*\\*32"),
    ({"seed": 1.5}, TypeError, "seed"),
])
def test_capymoa_label_mask_bad_arguments(kwargs, error, match):
    arguments = {"num_samples": 10, "label_probability": 0.5, "seed": 1, **kwargs}
    with pytest.raises(error, match=match):
        capymoa_label_mask(**arguments)


@pytest.mark.parametrize("kind", ["bernoulli", "capymoa"])
@pytest.mark.parametrize("block", [1, 7, 4096])
def test_position_mask_labels_exactly_the_whole_stream_masks_positions(kind, block):
    whole = make_label_mask(kind, np.zeros(10_000, dtype=np.int64), 0.3, seed=5)
    drawn = PositionMask(kind, 0.3, seed=5, block=block)
    assert [drawn(position) for position in range(10_000)] == whole.tolist()
    assert 2_800 < whole.sum() < 3_200  # a mask that labels something, not everything


def test_position_mask_resumed_later_labels_the_same_positions():
    whole = bernoulli_label_mask(5_000, 0.1, seed=3)
    resumed = PositionMask("bernoulli", 0.1, seed=3, block=64)
    assert [resumed(position) for position in range(4_321, 5_000)] == whole[4_321:].tolist()
    with pytest.raises(ValueError, match="position 7 comes before position 4999"):
        resumed(7)


def test_position_mask_refuses_what_needs_the_whole_stream_and_bad_settings():
    for kind in ("paper", "authors"):
        with pytest.raises(ValueError, match=f"label mask '{kind}' needs the whole stream"):
            PositionMask(kind, 0.1, seed=0)
    with pytest.raises(ValueError, match="2\\*\\*32"):
        PositionMask("capymoa", 0.1, seed=2 ** 32)
    with pytest.raises(ValueError, match="label_ratio"):
        PositionMask("bernoulli", 0.0, seed=0)


@pytest.mark.parametrize("position,error,message", [
    (-1, ValueError, "position must be >= 0, got -1"),
    (2.0, TypeError, "position must be an integer, got float"),
    (True, TypeError, "position must be an integer, got bool")])
def test_position_mask_names_a_bad_position_and_stays_as_it_was(position, error, message):
    mask = PositionMask("bernoulli", 0.5, seed=1, block=4)
    whole = bernoulli_label_mask(10, 0.5, seed=1)
    assert mask(1) == whole[1]
    with pytest.raises(error, match=message):
        mask(position)
    assert [mask(t) for t in range(1, 10)] == whole[1:].tolist()
