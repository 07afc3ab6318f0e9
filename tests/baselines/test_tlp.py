"""TLP against an offline harmonic solver on the full temporal graph."""
import numpy as np
import pytest
import torch
from state_helpers import assert_same

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


def exact_harmonic(weights, labels, c, query):
    """Harmonic values of ``query`` on the float64 ``weights``, solved with 40 more digits
    than the weights span (the Laplacian's condition number grows with that span)."""
    mpmath = pytest.importorskip("mpmath")
    span = -np.log10(weights[weights > 0].min()) if (weights > 0).any() else 0.0
    with mpmath.workdps(40 + int(np.ceil(span))):
        n = len(labels)
        unl = [i for i in range(n) if labels[i] < 0]
        reach = {i for i in unl if any(weights[i, j] > 0 for j in range(n) if labels[j] >= 0)}
        grown = True
        while grown:
            more = {i for i in unl if i not in reach and any(weights[i, j] > 0 for j in reach)}
            reach |= more
            grown = bool(more)
        if query not in reach:
            return np.full(c, 1.0 / c)
        idx = sorted(reach)
        w = mpmath.matrix([[mpmath.mpf(float(weights[i, j])) for j in range(n)] for i in range(n)])
        lap = mpmath.matrix(len(idx), len(idx))
        rhs = mpmath.matrix(len(idx), c)
        for a, i in enumerate(idx):
            lap[a, a] = mpmath.fsum(w[i, j] for j in range(n) if j != i)
            for b, j in enumerate(idx):
                if j != i:
                    lap[a, b] = -w[i, j]
            for j in range(n):
                if labels[j] >= 0:
                    rhs[a, int(labels[j])] += w[i, j]
        row = idx.index(query)
        return np.array([float(mpmath.lu_solve(lap, rhs.column(k))[row]) for k in range(c)])


def test_boundary_weights_far_below_the_others_are_solved_exactly():
    """Labels reachable only through weights ~1e-31 next to ~0.7: the Laplacian is
    singular in float64 (its diagonal absorbs them), the harmonic values are not.
    (These points used to give [0.5, 0.5]; 17 of 60 such draws raised LinAlgError.)"""
    x = np.array([[0.0], [24.0], [12.478580474853516], [12.702773094177246],
                  [11.567464828491211]], dtype=np.float32)
    labels = np.array([0, 1, -1, -1, -1])
    model = TemporalLabelPropagation(1, 2, memory_size=10, sigma=1.0)
    for row, label in zip(x[:-1], labels[:-1]):
        model.learn(row, int(label))
    got = model.predict_proba_float64(x[-1])[0]
    ref = exact_harmonic(reference_weights(x, 10, 1.0), labels, 2, len(x) - 1)
    np.testing.assert_allclose(ref, [0.0405, 0.9595], atol=1e-4)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=0)


def test_cholesky_that_succeeds_but_is_wrong_is_replaced_by_the_exact_solve(monkeypatch):
    """Two groups of points, one near 0 and one near 9, reach class 0 (at -10) and
    class 1 (at 19) through ~1e-21 and each other through ~1e-19: float64 loses both
    from the Laplacian's diagonal, a Cholesky pivot cancels to a positive rounding
    error, Cholesky succeeds and gave [0.977, 0.023] for the query (raw values summing
    to 5e-6 instead of 1); the harmonic values are [0.476, 0.524]."""
    from torch_geometric_stream.baselines import tlp
    x = np.array([[-10.0], [19.0], [-0.14], [-0.19], [9.04], [9.25], [-0.04]],
                 dtype=np.float32)
    labels = np.array([0, 1, -1, -1, -1, -1, -1])
    model = TemporalLabelPropagation(1, 2, memory_size=10, sigma=1.0)
    for row, label in zip(x[:-1], labels[:-1]):
        model.learn(row, int(label))
    infos, fallbacks = [], []
    cholesky_ex, star_mesh = torch.linalg.cholesky_ex, tlp._star_mesh_solve

    def spy_cholesky(matrix):
        out = cholesky_ex(matrix)
        infos.append(int(out[1]))
        return out

    def spy_star_mesh(*args, **kwargs):
        fallbacks.append(args[0].shape[0])
        return star_mesh(*args, **kwargs)

    monkeypatch.setattr(torch.linalg, "cholesky_ex", spy_cholesky)
    monkeypatch.setattr(tlp, "_star_mesh_solve", spy_star_mesh)
    got = model.predict_proba_float64(x[-1])[0]
    assert infos == [0] and fallbacks == [5]      # Cholesky succeeded, then fell back
    ref = exact_harmonic(reference_weights(x, 10, 1.0), labels, 2, len(x) - 1)
    np.testing.assert_allclose(ref, [0.4761, 0.5239], atol=1e-4)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=0)


@pytest.mark.parametrize("sigma", [None, 1.2])
def test_accurate_cholesky_solutions_are_kept(monkeypatch, sigma):
    """Weights of one magnitude: every query's Cholesky values sum to 1 to rounding, so
    the star-mesh solve never runs and the predictions are Cholesky's, bit for bit."""
    from torch_geometric_stream.baselines import tlp

    def no_fallback(*args, **kwargs):
        raise AssertionError("star-mesh fallback on a well-conditioned system")

    monkeypatch.setattr(tlp, "_star_mesh_solve", no_fallback)
    rng = np.random.default_rng(7)
    x = rng.normal(size=(60, 3)).astype(np.float32)
    y = np.where(rng.random(60) < 0.3, rng.integers(3, size=60), -1)
    model = TemporalLabelPropagation(3, 3, memory_size=20, sigma=sigma)
    for t in range(60):
        model.predict_proba_float64(x[t])
        model.learn(x[t], int(y[t]))


def test_small_sigma_stream_matches_high_precision_reference():
    """The conformance stream (class centres 4 apart) with sigma 1: the third
    prediction used to raise LinAlgError; every one equals the high-precision solution."""
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(3, 5)) * 4
    y = rng.integers(0, 3, 30)
    x = (centres[y] + rng.normal(size=(30, 5))).astype(np.float32)
    labels = np.where(np.arange(30) % 5 == 0, y, -1)
    model = TemporalLabelPropagation(5, 3, memory_size=40, sigma=1.0)
    weights = reference_weights(x, 40, 1.0)
    for t in range(30):
        got = model.predict_proba_float64(x[t])[0]
        ref = exact_harmonic(weights[:t + 1, :t + 1], np.append(labels[:t], -1), 3, t)
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)
        model.learn(x[t], int(labels[t]))


def test_stream_past_the_window_with_small_sigma_predicts():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(3, 5)) * 4
    y = rng.integers(0, 3, 120)
    x = (centres[y] + rng.normal(size=(120, 5))).astype(np.float32)
    model = TemporalLabelPropagation(5, 3, memory_size=40, sigma=1.0)
    for t in range(120):
        proba = model.predict_proba_float64(x[t])[0]
        assert np.all(np.isfinite(proba)) and proba.sum() == pytest.approx(1.0, abs=1e-12)
        model.learn(x[t], int(y[t]) if t % 5 == 0 else -1)


def test_star_mesh_solve_matches_a_direct_solve():
    from torch_geometric_stream.baselines.tlp import _star_mesh_solve
    rng = np.random.default_rng(5)
    w = np.triu(rng.random((6, 6)) * (rng.random((6, 6)) < 0.7), 1)
    w += w.T
    pull = rng.random((6, 3)) * (rng.random((6, 1)) < 0.5)
    pull[0] = [0.2, 0.0, 0.1]
    lap = np.diag(w.sum(1) + pull.sum(1)) - w
    expected = np.linalg.solve(lap, pull)
    np.testing.assert_allclose(_star_mesh_solve(w, pull), expected, rtol=1e-12)
    last = _star_mesh_solve(w, pull, last_only=True)
    np.testing.assert_allclose(last / last.sum(), expected[-1], rtol=1e-12)
    np.testing.assert_allclose(expected.sum(1), 1.0, rtol=1e-12)  # harmonic values


def test_harmonic_solution_equals_a_direct_solve_where_that_is_accurate():
    """Weights of one magnitude (sigma 1.2, points of unit spread): the star-mesh
    solve equals numpy's LU solve to rounding."""
    rng = np.random.default_rng(6)
    x = rng.normal(size=(20, 3)).astype(np.float32)
    labels = np.where(rng.random(20) < 0.3, rng.integers(3, size=20), -1)
    weights = reference_weights(x, 20, 1.2)
    unl, lab = np.flatnonzero(labels < 0), np.flatnonzero(labels >= 0)
    lap = np.diag(weights[unl].sum(1)) - weights[np.ix_(unl, unl)]
    direct = np.linalg.solve(lap, weights[np.ix_(unl, lab)] @ np.eye(3)[labels[lab]])
    got = harmonic_solution(weights, labels, 3)
    np.testing.assert_allclose(got[unl], direct, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(got[lab], np.eye(3)[labels[lab]])


def test_harmonic_solution_is_exact_where_the_boundary_weights_are_tiny():
    """The points of the streaming test above: np.linalg.solve gave about
    [-4e-14, -9e-13] for every unknown (the diagonal absorbs the 1e-31 boundary
    weights); the values are [0.0405, 0.9595]."""
    x = np.array([[0.0], [24.0], [12.478580474853516], [12.702773094177246],
                  [11.567464828491211]], dtype=np.float32)
    labels = np.array([0, 1, -1, -1, -1])
    weights = reference_weights(x, 10, 1.0)
    got = harmonic_solution(weights, labels, 2)
    for node in (2, 3, 4):
        np.testing.assert_allclose(got[node], exact_harmonic(weights, labels, 2, node),
                                   rtol=1e-12, atol=0)


def test_harmonic_solution_matches_high_precision_on_the_small_sigma_stream():
    """The conformance stream with sigma 1 (see above): np.linalg.solve raised
    LinAlgError at t = 2 and 4 and was off by up to 0.02 at t = 6 (a Cholesky
    solve there succeeds and is as wrong); every unknown now equals the
    high-precision solution."""
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(3, 5)) * 4
    y = rng.integers(0, 3, 12)
    x = (centres[y] + rng.normal(size=(12, 5))).astype(np.float32)
    labels = np.where(np.arange(12) % 5 == 0, y, -1)
    weights = reference_weights(x, 40, 1.0)
    for t in range(1, 12):
        sub_labels = np.append(labels[:t], -1)
        got = harmonic_solution(weights[:t + 1, :t + 1], sub_labels, 3)
        for node in np.flatnonzero(sub_labels < 0):
            ref = exact_harmonic(weights[:t + 1, :t + 1], sub_labels, 3, int(node))
            np.testing.assert_allclose(got[node], ref, rtol=0, atol=1e-12)


def test_an_unlabelled_node_with_two_neighbours_leaves_an_edge_between_them():
    """knn=1, tau=3: the unlabelled point at 0 joins the labelled point at 1 and the
    unlabelled point at -1; when it leaves, the Kron reduction joins those two, the
    only path from a query at -1.5 (which joins -1) to a label."""
    model = TemporalLabelPropagation(1, 2, memory_size=3, sigma=1.0, knn=1)
    x = np.array([[0.0], [1.0], [-1.0], [5.0], [-1.5]], dtype=np.float32)
    y = np.array([-1, 0, -1, 1, -1])
    for row, label in zip(x[:4], y[:4]):
        model.learn(row, int(label))
    w = np.exp(-0.5)                                  # weight of a distance of 1
    c = 2
    assert model.weight_matrix[c + 1, c + 2] == w * w / (w + w)
    got = model.predict_proba_float64(x[4])[0]
    ref = harmonic_solution(reference_weights(x, 3, 1.0, knn=1), y, 2, query=np.array([4]))[0]
    np.testing.assert_array_equal(got, [1.0, 0.0])
    np.testing.assert_allclose(ref, [1.0, 0.0], rtol=0, atol=1e-15)


@pytest.mark.parametrize("points", [
    [0.0, 1.0, 2.0, 1.5],          # the leaving unlabelled node has one neighbour
    [0.0, 100.0, 101.0, 100.5]])   # it has none (its weight underflows to 0)
def test_an_unlabelled_node_with_at_most_one_neighbour_leaves_no_edge(points):
    model = TemporalLabelPropagation(1, 2, memory_size=2, sigma=1.0)
    x = np.array(points, dtype=np.float32)[:, None]
    y = np.array([-1, 0, -1, -1])
    for row, label in zip(x[:3], y[:3]):
        model.learn(row, int(label))
    w = model.weight_matrix
    assert np.array_equal(w, w.T) and np.all(np.diag(w) == 0)
    assert np.count_nonzero(w) == 2                        # the edge 1 - 2 alone
    got = model.predict_proba_float64(x[3])[0]
    ref = harmonic_solution(reference_weights(x, 2, 1.0), y, 2, query=np.array([3]))[0]
    np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("sigma, error, message", [
    ("1.0", TypeError, "^sigma must be a number or None, got str$"),
    (True, TypeError, "^sigma must be a number or None, got bool$"),
    (0.0, ValueError, r"^sigma must be a finite number > 0, got 0\.0$"),
    (np.inf, ValueError, "^sigma must be a finite number > 0, got inf$"),
    # before: accepted; 2 sigma ** 2 was 0 (weights 0 or 0 / 0: uniform predictions)
    # or overflowed (an OverflowError at the first learn)
    (1e-200, ValueError, r"^sigma must lie in \[1\.05e-154, 9\.48e\+153\] .*got 1e-200$"),
    (1e200, ValueError, r"^sigma must lie in .*got 1e\+200$")])
def test_a_sigma_that_is_no_positive_number_is_refused(sigma, error, message):
    with pytest.raises(error, match=message):
        TemporalLabelPropagation(1, 2, sigma=sigma)


def test_a_node_no_boundary_reaches_gets_the_uniform_distribution():
    # nodes 0 - 1 joined to each other only: node 1's degree is 0 once 0 is
    # eliminated (in the learner: where underflow cut its links to the boundary)
    from torch_geometric_stream.baselines.tlp import _star_mesh_solve
    w = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    pull = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 3.0]])
    expected = [[0.5, 0.5], [0.5, 0.5], [0.0, 1.0]]
    np.testing.assert_array_equal(_star_mesh_solve(w, pull), expected)
    # the same pair, and a labelled node joined to neither: no unlabelled node is solved for
    np.testing.assert_array_equal(harmonic_solution(w, np.array([-1, -1, 1]), 2), expected)


def test_median_heuristic_ignores_the_distances_between_duplicates():
    model = TemporalLabelPropagation(1, 2, memory_size=4)
    for value in (0.0, 0.0, 0.0):
        model.learn(np.array([value], dtype=np.float32), -1)
    assert model.bandwidth == 1.0                     # no two distinct points yet
    model.learn(np.array([3.0], dtype=np.float32), -1)
    assert model.bandwidth == 3.0                     # distances 3, 3, 3 (zeros: 1.5)


def _learned(sigma=None, tau=4, n=9):
    rng = np.random.default_rng(0)
    model = TemporalLabelPropagation(2, 2, memory_size=tau, sigma=sigma)
    for row, label in zip(rng.normal(size=(n, 2)), [0, -1, 1] * n):
        model.learn(row, label)
    return model


def _arrival_of_every_slot(state):
    arrival = state["arrival"].clone()
    arrival[arrival == -1] = state["time"]  # the free slot marked as a window point
    return arrival


@pytest.mark.parametrize("entry, corrupt, message", [
    # before: loaded, then the next learn found no free slot (IndexError)
    ("arrival", _arrival_of_every_slot,
     r"state arrival marks 5 window points, at most memory_size 4 \(-1: free slot\)"),
    # before: loaded, then a new point arrived "before" older ones and the wrong
    # node left the window
    ("arrival", lambda state: np.where(state["arrival"] >= 0, state["arrival"] + 20, -1),
     r"state arrival must hold distinct times in \[0, time 9\)"),
    ("arrival", lambda state: np.where(state["arrival"] >= 0, 5, -1), "distinct times"),
    ("time", lambda state: np.int64(-3), "state time must be >= 0, got -3"),
    # before: loaded, then every weight was NaN (0 / 0) or grew with the distance
    ("sigma", lambda state: np.float64(0.0), "state sigma must be > 0, got 0.0"),
    ("sigma", lambda state: np.float64(-1.0), "state sigma must be > 0, got -1.0"),
    ("sigma", lambda state: np.float64(np.nan), "state sigma must be a finite number, got nan"),
    ("sigma", lambda state: np.float64(1e-200), "state sigma must lie in .*got 1e-200")])
def test_a_state_out_of_range_is_refused(entry, corrupt, message):
    model = _learned(sigma=1.0)
    before = model.state_dict()
    with pytest.raises(ValueError, match=message):
        model.load_state_dict({**before, entry: corrupt(before)})
    assert_same(model.state_dict(), before)


def _changed(entry, *cells, by=0.25, scale=1.0):
    """A corruption of ``state[entry]``: ``by`` added and then ``scale`` applied at
    each of ``cells`` (index tuples)."""
    def corrupt(state):
        value = state[entry].clone()
        for cell in cells:
            value[cell] = (value[cell] + by) * scale
        return value
    return corrupt


def _swapped_first_arrivals(state):
    arrival = state["arrival"].clone()
    arrival[[0, 1]] = arrival[[1, 0]]
    return arrival


_FILLING = dict(tau=8, n=5)  # not frozen: the window fills (5 of 8 points, 9 slots)
_NODE = 2  # the first window slot's node (after the 2 terminals)


@pytest.mark.parametrize("learned, entry, corrupt, message", [
    # before: each loaded, and the learner computed with one entry here and the
    # other there (an asymmetric Laplacian, degrees counting a self-loop or a free
    # slot, another bandwidth than the learner's sigma, a median over other slots)
    (dict(sigma=1.0), "weights", _changed("weights", (_NODE, _NODE + 1)),
     r"^state weights must be symmetric, 0 on the diagonal and at free slots, as a run keeps "
     r"it; got [\d.]+ at \[2, 3\] where that is [\d.]+$"),
    (dict(sigma=1.0), "weights", _changed("weights", (_NODE, _NODE)), "0 on the diagonal"),
    (dict(sigma=1.0), "weights", _changed("weights", (_NODE, -1), (-1, _NODE)),
     r"at free slots, as a run keeps it; got 0\.25 at \[2, 6\] where that is 0\.0$"),
    (dict(sigma=1.0), "sigma", lambda state: 2.0,
     r"^state sigma must be this learner's sigma=1\.0, and frozen true, got 2\.0 and True$"),
    (_FILLING, "arrival", _swapped_first_arrivals,
     r"^state arrival must be 0, 1, \.\.\., time - 1 in the first slots and -1 after, "
     r"fewer than memory_size 8, while the first window fills \(frozen false\): no point "
     r"has left it; got time 5 and \[1, 0, 2, 3, 4, -1, -1, -1, -1\]$"),
    (_FILLING, "time", lambda state: 7, "got time 7 and "),
    (_FILLING, "dist2", _changed("dist2", (0, 1), (1, 0), scale=2.0),
     r"^state dist2 must be the squared distance between the x rows of the window, to "
     r"rounding, as a run keeps it; got [\d.]+ at \[0, 1\]"),
    (_FILLING, "sigma", lambda state: state["sigma"] * 1.01,
     r"^state sigma must be the median distance between the window points while the first "
     r"window fills, to rounding, as a run keeps it; got [\d.]+ where that is [\d.]+$"),
    (_FILLING, "weights", _changed("weights", (_NODE, _NODE + 1), (_NODE + 1, _NODE), by=0,
                                   scale=0.5),
     r"^state weights must be the Gaussian weights of dist2 with sigma on the window's edges "
     r"while the first window fills, to rounding, as a run keeps it; got [\d.e-]+ at \[2, 3\]")])
def test_a_state_whose_entries_disagree_is_refused(learned, entry, corrupt, message):
    model = _learned(**learned)
    before = model.state_dict()
    assert before["frozen"] is (learned is not _FILLING)
    with pytest.raises(ValueError, match=message):
        model.load_state_dict({**before, entry: corrupt(before)})
    assert_same(model.state_dict(), before)


def test_states_it_writes_load_filling_and_past_the_window():
    for n in (0, 1, 3, 9):
        model = _learned(n=n)
        copy = TemporalLabelPropagation(2, 2, memory_size=4)
        copy.load_state_dict(model.state_dict())
        assert copy.num_items == model.num_items


class _RecomputedHeuristic(TemporalLabelPropagation):
    """TLP as it was before the median heuristic was kept incrementally: the
    bandwidth and every window weight recomputed from all pairwise distances
    at each arrival (the reference the incremental one must match bit for bit)."""

    def _gauss(self, dist2, out=None):
        assert out is None
        return np.exp(-dist2 / (2.0 * self._sigma ** 2))

    def _refresh_heuristic(self):
        k = int((self._arrival >= 0).sum())
        dist = np.sqrt(self._dist2[:k, :k][np.triu_indices(k, k=1)])
        dist = dist[dist > 0]
        self._sigma = float(np.median(dist)) if dist.size else 1.0
        c = self.num_classes
        block = np.where(self._edge[:k, :k], self._gauss(self._dist2[:k, :k]), 0.0)
        np.fill_diagonal(block, 0.0)
        self._weights[c:c + k, c:c + k] = block
        if k >= self.memory_size:
            self._frozen = True
            self._dist2 = np.zeros((0, 0))
            self._edge = np.zeros((0, 0), dtype=bool)


def _stream_with_duplicates(seed, n, d=3):
    """Rounded points, a third of them copies of earlier ones (zero distances)."""
    rng = np.random.default_rng(seed)
    x = np.round(rng.normal(size=(n, d)), 1)
    copies = np.flatnonzero(rng.random(n) < 0.3)
    x[copies] = x[rng.integers(0, copies + 1)]
    return x.astype(np.float32), np.where(rng.random(n) < 0.2, rng.integers(3, size=n), -1)


def _assert_learn_alike(models, x, y):
    """Learn ``x, y`` into every model, asserting identical predictions,
    bandwidths and weights throughout."""
    first, *others = models
    for row, label in zip(x, y):
        expected = first.predict_proba_float64(row)
        for model in others:
            np.testing.assert_array_equal(model.predict_proba_float64(row), expected)
        for model in models:
            model.learn(row, int(label))
        for model in others:
            assert model.bandwidth == first.bandwidth
            np.testing.assert_array_equal(model.weight_matrix, first.weight_matrix)


@pytest.mark.parametrize("knn", [None, 1, 4])
@pytest.mark.parametrize("tau, n", [(5, 30), (50, 90)])
@pytest.mark.parametrize("duplicates", [False, True])
def test_median_heuristic_equals_its_recomputation_bit_for_bit(tau, n, knn, duplicates):
    if duplicates:
        x, y = _stream_with_duplicates(tau + (knn or 0), n)
    else:
        rng = np.random.default_rng(tau + (knn or 0))
        x = rng.normal(size=(n, 3)).astype(np.float32)
        y = np.where(rng.random(n) < 0.2, rng.integers(3, size=n), -1)
    _assert_learn_alike([_RecomputedHeuristic(3, 3, memory_size=tau, knn=knn),
                         TemporalLabelPropagation(3, 3, memory_size=tau, knn=knn)], x, y)


def test_median_heuristic_while_filling_averages_the_two_middle_distances():
    model = TemporalLabelPropagation(1, 2, memory_size=10, knn=2)
    bandwidths = []
    for value in (0.0, 1.0, 3.0, 7.0, 0.0):
        model.learn(np.array([value], dtype=np.float32), -1)
        bandwidths.append(model.bandwidth)
    # distances: {1}; {1, 2, 3}; {1, 2, 3, 4, 6, 7}; and 1, 3, 7 again (0 left out)
    assert bandwidths == [1.0, 1.0, 2.0, 3.5, 3.0]


@pytest.mark.parametrize("knn", [None, 2])
@pytest.mark.parametrize("stop", [1, 7, 11])
def test_a_state_loaded_or_reset_while_filling_continues_bit_for_bit(knn, stop):
    x, y = _stream_with_duplicates(4, 40)
    models = [_RecomputedHeuristic(3, 3, memory_size=12, knn=knn)] + [
        TemporalLabelPropagation(3, 3, memory_size=12, knn=knn) for _ in range(3)]
    reference, model, loaded, reset = models
    for learner in (loaded, reset):      # what they hold is to be replaced
        learner.learn(x[20:27], y[20:27])
    reset.reset()
    for learner in (reference, model, reset):
        learner.learn(x[:stop], y[:stop])
    loaded.load_state_dict(model.state_dict())
    _assert_learn_alike(models, x[stop:], y[stop:])
