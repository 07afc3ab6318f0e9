import itertools
import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from torch_geometric_stream.datasets import StreamDataset, SyntheticStream, make_synthetic_dataset


def class_means(ds: StreamDataset, start: int, stop: int) -> np.ndarray:
    x, y = ds.x[start:stop], ds.y[start:stop]
    return np.stack([x[y == j].mean(axis=0) for j in range(ds.num_classes)])


def test_basic_attributes_and_iteration():
    stream = SyntheticStream(10_000, num_features=5, num_classes=3, seed=1)
    assert len(stream) == 10_000 and stream.num_features == 5 and stream.num_classes == 3
    assert stream.name == "synthetic-none"
    x, y = next(iter(stream))
    assert x.shape == (5,) and x.dtype == np.float32 and isinstance(y, int)
    rows = list(stream)
    assert len(rows) == 10_000 and {label for _, label in rows} == {0, 1, 2}


def test_deterministic_given_seed():
    stream = SyntheticStream(9_000, drift="gradual", seed=3)
    first, second = stream.take(9_000), stream.take(9_000)
    np.testing.assert_array_equal(first.x, second.x)
    rows = list(itertools.islice(stream, 5000))
    np.testing.assert_array_equal(np.stack([r for r, _ in rows]), first.x[:5000])
    np.testing.assert_array_equal(SyntheticStream(9_000, drift="gradual", seed=3).take(100).x,
                                  first.x[:100])
    assert not np.array_equal(SyntheticStream(9_000, seed=4).take(100).x, first.x[:100])
    with pytest.raises(ValueError, match="^n must be non-negative, got -1$"):
        stream.take(-1)


def test_lazy_for_a_million_rows():
    stream = SyntheticStream(10**6, num_features=64)
    start = time.perf_counter()
    rows = list(itertools.islice(stream, 10))
    assert time.perf_counter() - start < 0.5 and len(rows) == 10
    assert len(stream) == 10**6


def test_take_prefix_and_make_synthetic_dataset():
    stream = SyntheticStream(5000, num_classes=2, seed=7)
    head = stream.take(4100)
    assert head.num_samples == 4100 and head.num_classes == 2 and head.class_names == ["0", "1"]
    full = make_synthetic_dataset(5000, num_classes=2, seed=7)
    np.testing.assert_array_equal(full.x[:4100], head.x)
    assert stream.take(10**9).num_samples == 5000 and stream.take(0).num_samples == 0


def test_no_drift_keeps_means():
    ds = make_synthetic_dataset(20_000, noise=0.5, seed=2)
    np.testing.assert_allclose(class_means(ds, 0, 10_000), class_means(ds, 10_000, 20_000),
                               atol=0.1)


def test_sudden_drift_moves_means_at_the_drift_point():
    stream = SyntheticStream(20_000, drift="sudden", drift_points=(0.5,), noise=0.5, seed=2)
    ds = stream.take(20_000)
    before, after = class_means(ds, 0, 10_000), class_means(ds, 10_000, 20_000)
    np.testing.assert_allclose(before, stream.centres[0], atol=0.1)
    np.testing.assert_allclose(after, stream.centres[1], atol=0.1)
    assert np.linalg.norm(before - after, axis=1).min() > 1.0


def test_gradual_drift_interpolates():
    stream = SyntheticStream(20_000, drift="gradual", drift_points=(8000,), drift_width=4000)
    y = np.zeros(3, dtype=np.int64)
    centres = stream.class_centres(np.array([7999, 10_000, 12_000]), y)
    np.testing.assert_allclose(centres[0], stream.centres[0, 0])
    np.testing.assert_allclose(centres[1], 0.5 * (stream.centres[0, 0] + stream.centres[1, 0]))
    np.testing.assert_allclose(centres[2], stream.centres[1, 0])


def test_class_incremental_introduces_classes_over_time():
    ds = make_synthetic_dataset(8000, num_classes=4, class_incremental=True, seed=5)
    assert ds.name == "synthetic-none-class-incremental"
    for j, start in enumerate(range(0, 8000, 2000)):
        assert set(np.unique(ds.y[start:start + 2000])) == set(range(j + 1))
        assert ds.y[:start].size == 0 or ds.y[:start].max() < j


@pytest.mark.parametrize("kwargs, match", [
    (dict(num_samples=0), "num_samples"), (dict(drift="abrupt"), "drift must be"),
    (dict(drift="sudden", drift_points=(0.6, 0.4)), "increasing"),
    (dict(drift="sudden", drift_points=(1.5,)), "fraction"),
    (dict(drift="sudden", drift_points=(1000,)), "increasing"),
    (dict(drift="gradual", drift_points=(0.9,), drift_width=0.5), "drift_width"),
    (dict(noise=-1.0), "noise must be a finite number >= 0"),
    (dict(noise=float("nan")), "noise must be a finite number >= 0, got nan"),
    (dict(separation=float("inf")), "separation must be a finite number >= 0, got inf"),
    (dict(seed=-1), "seed must be >= 0, got -1"),
])
def test_invalid_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        SyntheticStream(**{"num_samples": 1000, **kwargs})


@pytest.mark.parametrize("kwargs, match", [
    (dict(num_samples=True), "num_samples must be an integer, got bool"),
    (dict(num_features=2.0), "num_features must be an integer, got float"),
    (dict(drift="sudden", drift_points=(True,)), "a drift point must be a row index"),
    (dict(class_incremental="yes"), "class_incremental must be a bool, got str"),
])
def test_arguments_of_a_wrong_type(kwargs, match):
    with pytest.raises(TypeError, match=match):
        SyntheticStream(**{"num_samples": 1000, **kwargs})


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 9000), classes=st.integers(1, 6),
       drift=st.sampled_from(["none", "sudden", "gradual"]), incremental=st.booleans())
def test_labels_in_range_and_shapes(n, classes, drift, incremental):
    points = (n // 2,) if n >= 20 else ()
    if drift != "none" and not points:
        drift = "none"
    kwargs = dict(drift=drift, drift_points=points, drift_width=max(1, n // 10))
    ds = make_synthetic_dataset(n, num_features=3, num_classes=classes,
                                class_incremental=incremental, **kwargs)
    assert ds.x.shape == (n, 3) and np.isfinite(ds.x).all()
    assert ds.y.min() >= 0 and ds.y.max() < classes
