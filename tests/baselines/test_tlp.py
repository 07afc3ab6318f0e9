"""TLP against an offline harmonic solver on the full temporal graph."""
import numpy as np
import pytest

from torch_geometric_stream.baselines import TemporalLabelPropagation
from torch_geometric_stream.baselines.tlp import harmonic_solution


def reference_weights(x, tau, sigma, knn=None):
    """Full temporal graph: j joins the points at most tau steps before it."""
    x = x.astype(np.float64)
    n = len(x)
    w = np.zeros((n, n))
    for j in range(1, n):
        prev = np.arange(max(0, j - tau), j)
        d2 = ((x[prev] - x[j]) ** 2).sum(1)
        if knn is not None and prev.size > knn:
            keep = np.argsort(d2, kind="stable")[:knn]
            prev, d2 = prev[keep], d2[keep]
        w[j, prev] = w[prev, j] = np.exp(-d2 / (2 * sigma ** 2))
    return w


@pytest.mark.parametrize("knn", [None, 3])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_offline_harmonic_solution(seed, knn):
    rng = np.random.default_rng(seed)
    n, tau, c, d, sigma = 45, 7, 3, 3, 1.2
    x = rng.normal(size=(n, d)).astype(np.float32)
    y = np.where(rng.random(n) < 0.3, rng.integers(c, size=n), -1)
    model = TemporalLabelPropagation(d, c, memory_size=tau, sigma=sigma, knn=knn)
    checked = 0
    for t in range(n):
        got = model.predict_proba_float64(x[t])[0]
        labels = np.append(y[:t], -1)
        ref = harmonic_solution(reference_weights(x[:t + 1], tau, sigma, knn), labels, c,
                                query=np.array([t]))[0]
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-8)
        checked += int((y[:t] >= 0).any())
        model.learn(x[t], int(y[t]))
        assert model.num_items == min(t + 1, tau)
        w = model.weight_matrix
        assert np.array_equal(w, w.T) and np.all(np.diag(w) == 0)
    assert checked > n // 2


def test_median_heuristic_frozen_after_first_window():
    rng = np.random.default_rng(3)
    n, tau, c, d = 30, 6, 2, 2
    x = rng.normal(size=(n, d)).astype(np.float32)
    y = np.where(rng.random(n) < 0.4, rng.integers(c, size=n), -1)
    model = TemporalLabelPropagation(d, c, memory_size=tau)
    for t in range(tau):
        model.learn(x[t], int(y[t]))
    first = x[:tau].astype(np.float64)
    dist = np.sqrt(((first[:, None] - first[None]) ** 2).sum(-1))[np.triu_indices(tau, 1)]
    sigma = model.bandwidth
    assert sigma == pytest.approx(np.median(dist), rel=1e-12)
    for t in range(tau, n):        # frozen: the reduced graph stays exact for that sigma
        got = model.predict_proba_float64(x[t])[0]
        ref = harmonic_solution(reference_weights(x[:t + 1], tau, sigma), np.append(y[:t], -1),
                                c, query=np.array([t]))[0]
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-8)
        model.learn(x[t], int(y[t]))
    assert model.bandwidth == sigma


def test_unreachable_query_is_uniform():
    model = TemporalLabelPropagation(2, 3, memory_size=5, sigma=0.01)
    model.learn(np.array([0.0, 0.0], dtype=np.float32), 2)
    far = np.array([100.0, 100.0], dtype=np.float32)   # weight underflows to 0
    np.testing.assert_allclose(model.predict_proba(far).numpy()[0], np.full(3, 1 / 3))
    assert model.predict(far).item() == 0
    near = np.array([0.0, 0.001], dtype=np.float32)
    assert model.predict(near).item() == 2


@pytest.mark.parametrize("sigma", [None, 0.8])
def test_predictions_leave_learning_unchanged(sigma):
    """Predicting (the same point, or another) between learning steps changes no state,
    and a prediction right after learning sees the point just learned."""
    rng = np.random.default_rng(4)
    n, tau, c, d = 25, 6, 2, 3
    x = rng.normal(size=(n, d)).astype(np.float32)
    x[5], x[12] = x[4], x[11]       # a repeated point meets its own earlier copy
    other = rng.normal(size=(n, d)).astype(np.float32)
    y = np.where(rng.random(n) < 0.4, rng.integers(c, size=n), -1)
    plain = TemporalLabelPropagation(d, c, memory_size=tau, sigma=sigma)
    queried = TemporalLabelPropagation(d, c, memory_size=tau, sigma=sigma)
    for t in range(n):
        fresh = TemporalLabelPropagation(d, c, memory_size=tau, sigma=sigma)
        fresh.load_state_dict(queried.state_dict())
        np.testing.assert_array_equal(queried.predict_proba_float64(x[t]),
                                      fresh.predict_proba_float64(x[t]))
        queried.predict_proba_float64(other[t])
        plain.learn(x[t], int(y[t]))
        queried.learn(x[t], int(y[t]))
        assert np.array_equal(plain.weight_matrix, queried.weight_matrix)
