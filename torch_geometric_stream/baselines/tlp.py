"""TLP: temporal label propagation over a sliding window with Kron reduction."""
from __future__ import annotations

import contextlib
from typing import Any, Dict, Iterator, Mapping, Optional, Tuple

import numpy as np
import torch
from torch import Tensor

from torch_geometric_stream.base import StreamClassifier
from torch_geometric_stream.baselines.state import (COUNTER_MAX, FEATURE_MAX, ULPS,
                                                    ArgumentsRepr, CheckedStateLoad, NumpyState,
                                                    check_counter_room, check_derived,
                                                    check_loaded_counter, check_reachable,
                                                    check_shape, check_squared_distances,
                                                    float64_rows, predict_rows)
from torch_geometric_stream.validation import (as_feature_matrix, check_finite, check_positive,
                                               check_positive_int)

__all__ = ["TemporalLabelPropagation", "harmonic_solution"]


@contextlib.contextmanager
def _flush_denormals() -> Iterator[None]:
    """Flush subnormal floats to zero (CPU FTZ/DAZ) inside the block, then restore.

    Gaussian weights and Kron reductions produce tiny values whose products in
    the LU factorisation go subnormal, which makes LAPACK 100x slower.  Only
    values below ``2.2e-308`` are affected.  The previous mode is detected
    numerically (the flag is per thread) and restored on exit.
    """
    was_on = bool(np.multiply(np.float64(1e-300), np.float64(1e-10)) == 0.0)
    if was_on or not torch.set_flush_denormal(True):
        yield
        return
    try:
        yield
    finally:
        torch.set_flush_denormal(False)


def harmonic_solution(weights: np.ndarray, labels: np.ndarray, num_classes: int,
                      query: Optional[np.ndarray] = None) -> np.ndarray:
    r"""Harmonic label values :math:`f_U = (D_{UU} - W_{UU})^{-1} W_{UB} Y_B` of a graph.

    Args:
        weights (np.ndarray): symmetric :math:`(n, n)` non-negative weights (diagonal ignored).
        labels (np.ndarray): :math:`(n,)` class id of boundary nodes, ``-1`` for unlabelled ones.
        num_classes (int): :math:`c`.
        query (np.ndarray, optional): unlabelled nodes whose values are wanted (default: all
            nodes).

    Returns:
        :math:`(|query|, c)` values; boundary nodes get their one-hot label and
        unlabelled nodes that no boundary node can reach get the uniform
        distribution (their harmonic problem has no unique solution). The
        system is solved by :func:`_star_mesh_solve`, which never subtracts:
        exact to rounding also where the weights to the boundary are far below
        the others (a small ``sigma``), where an LU or Cholesky solve returns
        noise (``O(n^3)`` in ``n`` NumPy steps: a reference, not a fast path).
    """
    n = weights.shape[0]
    w = np.array(weights, dtype=np.float64)
    np.fill_diagonal(w, 0.0)
    labelled = labels >= 0
    values = np.full((n, num_classes), 1.0 / num_classes)
    values[labelled] = np.eye(num_classes)[labels[labelled]]
    unl = np.flatnonzero(~labelled)
    if unl.size and labelled.any():
        boundary = w[np.ix_(unl, np.flatnonzero(labelled))] @ values[labelled]
        adjacency = w[np.ix_(unl, unl)]
        reach = _reachable(adjacency > 0, boundary.sum(1) > 0)
        idx = np.flatnonzero(reach)
        if idx.size:
            sub = unl[idx]
            values[sub] = _star_mesh_solve(w[np.ix_(sub, sub)], boundary[idx])
    return values if query is None else values[query]


#: Largest ``|sum - 1|`` of the query's Cholesky harmonic values that is trusted.
#: Cholesky's errors in the near-singular direction of a Laplacian with tiny
#: boundary weights change that sum as much as the values (on random graphs with
#: boundary weights down to 1e-45: normalised error <= 2.6 x the deviation), while
#: an accurate solve keeps it within ~1e-15.
_ROW_SUM_TOLERANCE = 1e-9


def _harmonic_last(lap: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Last row of ``lap^{-1} rhs`` for a Laplacian block of a connected graph.

    Cholesky ``lap = R R^T`` in float64: the last unknown is
    ``(R^{-1} rhs)_{n} / R_{nn}``, so one forward substitution suffices.  A
    diagonal entry is a sum of edge weights; when the weights to the boundary
    are far below the others (Gaussian weights of far points: 1e-43 next to
    1e-4), float64 drops them from the diagonal and ``lap`` is singular to
    working precision, although the solution is well defined.  Then a pivot
    ``R_kk^2 = lap_kk - ...`` cancels to zero or below and Cholesky fails, or
    it cancels to a positive rounding error and Cholesky returns a wrong
    answer (e.g. ``[0.98, 0.02]`` for ``[0.48, 0.52]`` where two groups of
    points each reach one class through ~1e-21 and each other through
    ~1e-19).  The exact row sums to 1 (each row of ``rhs`` sums to the node's
    weights to the boundary, so ``lap @ 1 = rhs @ 1``); where the computed one
    is off by more than :data:`_ROW_SUM_TOLERANCE`, or Cholesky fails,
    :func:`_star_mesh_solve` solves the system without subtractions.

    Args:
        lap: :math:`(n, n)` ``D - W`` of the unknowns, ``D`` including their
            weights to the boundary; every unknown reaches the boundary.
        rhs: :math:`(n, c)` non-negative boundary pull ``W_UB Y_B`` (one-hot
            ``Y_B``: row ``v`` sums to ``v``'s weights to the boundary).

    Returns:
        :math:`(c,)` last row of ``lap^{-1} rhs``, up to a positive factor.
    """
    factor, info = torch.linalg.cholesky_ex(torch.from_numpy(lap))
    if int(info) == 0:
        forward = torch.linalg.solve_triangular(
            factor, torch.from_numpy(np.ascontiguousarray(rhs)), upper=False)
        last = (forward[-1] / factor[-1, -1]).numpy()
        if abs(last.sum() - 1.0) <= _ROW_SUM_TOLERANCE:
            return last
    adjacency = -lap
    np.fill_diagonal(adjacency, 0.0)
    return _star_mesh_solve(adjacency, rhs, last_only=True)


def _star_mesh_solve(adjacency: np.ndarray, pull: np.ndarray, *,
                     last_only: bool = False) -> np.ndarray:
    r"""Harmonic values ``(D - W)^{-1} pull`` by star-mesh elimination, without subtractions.

    Gaussian elimination of ``(D - W) f = pull`` with ``D_vv = sum(pull_v) +
    sum_w W_vw``, written on the weights (the GTH form): eliminating ``v``
    adds ``W_uv W_vw / d_v`` to ``W_uw`` and ``W_uv pull_v / d_v`` to
    ``pull_u``, where ``d_v`` is recomputed as a sum of the remaining
    non-negative terms.  The last node is left with no edges: its degree is
    ``sum(pull)`` and its harmonic value is ``pull / sum(pull)``; back
    substitution ``f_v = (pull_v + sum_{w > v} W_vw f_w) / d_v`` gives the
    others.  Nothing is subtracted, so every value keeps full relative
    accuracy however far apart the weights are.  ``O(n^3)`` in ``n`` NumPy
    steps.  A node whose degree is zero when it is eliminated (all its links
    to the boundary underflowed, or were flushed as subnormals) gets the
    uniform distribution, as a node that no boundary node reaches does.

    Args:
        adjacency: :math:`(n, n)` symmetric non-negative weights, zero diagonal.
        pull: :math:`(n, c)` non-negative boundary pull.
        last_only: return only the last node's pull once the others are
            eliminated (its harmonic values times its degree), without back
            substitution.

    Returns:
        :math:`(n, c)` harmonic values, or with ``last_only`` :math:`(c,)`.
    """
    weights = adjacency.copy()
    pull = pull.copy()
    n, c = pull.shape
    degrees = np.zeros(n)
    for v in range(n - 1):
        edges = weights[v, v + 1:]
        degrees[v] = degree = pull[v].sum() + edges.sum()
        if degree == 0:       # only where underflow or flushed subnormals cut v off
            continue
        share = edges / degree
        rest = weights[v + 1:, v + 1:]
        rest += np.multiply.outer(share, edges)
        np.fill_diagonal(rest, 0.0)          # self-loops add to D and W alike
        pull[v + 1:] += np.multiply.outer(share, pull[v])
    if last_only:
        return pull[-1]
    degrees[-1] = pull[-1].sum()
    values = np.empty((n, c))
    for v in range(n - 1, -1, -1):    # row v of weights is as v's elimination left it
        values[v] = ((pull[v] + weights[v, v + 1:] @ values[v + 1:]) / degrees[v]
                     if degrees[v] > 0 else 1.0 / c)
    return values


#: The bandwidths whose Gaussian denominator ``2 sigma ** 2`` is a normal ``float64``
#: (a smaller one is 0 or flushed to it: weights 0 or 0 / 0; a larger one overflows);
#: a bandwidth the median heuristic gives from ``float32`` rows lies within.
_SIGMA_RANGE = (float(np.sqrt(np.finfo(np.float64).tiny / 2)),
                float(np.sqrt(np.finfo(np.float64).max / 2)))


def check_bandwidth(sigma: float, name: str) -> None:
    """Raise ``ValueError`` unless the positive bandwidth ``sigma`` (named ``name``)
    lies in :data:`_SIGMA_RANGE`, where ``exp(-d2 / (2 sigma ** 2))`` is defined."""
    low, high = _SIGMA_RANGE
    if not low <= sigma <= high:
        raise ValueError(f"{name} must lie in [{low:.3g}, {high:.3g}] (where 2 sigma ** 2 "
                         f"is a normal float64), got {sigma:g}")


def _reachable(edges: np.ndarray, seed: np.ndarray) -> np.ndarray:
    """Nodes connected through ``edges`` (a boolean :math:`(n, n)` matrix) to a node of ``seed``."""
    reach = seed.copy()
    if reach.all() or not reach.any():
        return reach
    while True:
        grown = reach | edges[:, reach].any(axis=1)
        if grown.sum() == reach.sum():
            return grown
        reach = grown


class TemporalLabelPropagation(ArgumentsRepr, CheckedStateLoad, StreamClassifier):
    r"""Temporal label propagation (TLP) on a sliding window.

    T. Wagner, S. Guha, S. P. Kasiviswanathan and N. Mishra, "Semi-supervised
    learning on data streams via temporal label propagation", *ICML 2018*.  **This is a reimplementation from the paper: the authors
    published no code.**

    The graph has one node per point of a sliding window over the last
    ``tau = memory_size`` points plus one terminal node per class; points
    ``x_i, x_j`` are joined by ``exp(-||x_i - x_j||^2 / (2 sigma^2))`` when they
    are at most ``tau`` steps apart in the stream (with ``knn``: each arriving
    point only joins its ``knn`` nearest window points).  A query is predicted
    by the harmonic solution ``f_U = (D_UU - W_UU)^{-1} W_UB Y_B`` of the graph
    with the query added as an unlabelled node, labelled window points and
    terminals fixed to their one-hot labels; the probabilities are the query's
    row.  Learning adds the point (its edges cost ``O(tau d)``); when the
    window overflows, the oldest node leaves: a labelled node is contracted
    into its class terminal (its edges are added to the terminal's), an
    unlabelled node ``v`` is eliminated by the star-mesh (Kron) reduction
    ``W_uw += W_uv W_vw / d_v`` (``O(tau^2)``).  Both keep the harmonic values
    of every remaining node, and of any later point, *exactly* those of the
    full temporal graph over all points seen so far.  A prediction solves one
    dense SPD system by Cholesky (``O(tau^3)``).  All arithmetic is float64 and ``W`` stays
    exactly symmetric.

    Args:
        in_channels (int): number of features :math:`d`.
        num_classes (int): number of classes :math:`c`.
        memory_size (int, optional): window length :math:`\tau` (default ``1000``); the model
            stores ``tau`` points and ``(tau + 1 + c)^2`` weights.
        sigma (float, optional): Gaussian bandwidth; ``None`` (default) uses the median
            heuristic: the median pairwise distance of the window points,
            recomputed while the first window fills and frozen once it holds
            ``tau`` points (1.0 while fewer than two distinct points exist). A
            given one lies in about ``[1e-154, 9e153]``, where ``2 sigma ** 2`` is a
            normal float.
        knn (int, optional): if set, each arriving point (and each query) joins only its
            ``knn`` nearest window points (default ``None``: all of them).

    Deviations from the authors' code:
        No public code exists; the algorithm follows the paper.  The memory
        follows ``docs/baselines.md``: one window of ``tau = memory_size``
        points (labelled or not, in arrival order) plus one terminal per class.
        The SLeDGe paper's appendix says its TLP adopts the labelled and
        unlabelled sample counts of its memory (``L = 100``, ``U = 900`` at
        1 % labels), a split the window here does not make.  Choices made
        here: the median heuristic of ``sigma=None``; the query joins the
        graph as an unlabelled node (it is not stored); unlabelled nodes that
        no labelled node or terminal can reach are dropped from the linear
        system (their values are not unique) and a query in such a component
        gets uniform probabilities (argmax: class 0); no regularisation is
        added, so the solve is exact.  Where the weights
        to the labelled nodes are lost in float64 next to the others (e.g.
        ``1e-43`` next to ``1e-4`` with a small ``sigma``), Cholesky fails or
        returns harmonic values that do not sum to 1 (the exact ones do); then
        (a sum off by more than ``1e-9``) the system is solved by star-mesh
        elimination of every other unknown, which adds and never subtracts
        (``O(tau^3)`` NumPy steps, ~80x slower than Cholesky at ``tau = 1000``,
        but exact to rounding).  With ``knn`` the
        graph is built incrementally (an arriving point picks its neighbours;
        existing nodes keep theirs), which is the graph the Kron reduction is
        exact for.  With ``sigma=None`` the weights are rebuilt from stored
        distances while the first window fills (no node has left yet, so this
        is exact too; the pairwise distances are kept sorted for the median,
        an arrival's merged in with one copy of the ``O(tau^2)`` sorted ones,
        and it rewrites only the edge weights: ``O(tau knn)`` with ``knn``, all
        ``O(tau^2)`` pairs without); negative harmonic values from
        round-off are clipped before normalising.  Prediction and learning run
        with subnormal floats flushed to zero (values below ``2.2e-308``; the
        thread's previous mode is restored), because subnormal fill-in makes
        the dense solve ~100x slower.
    """

    def __init__(self, in_channels: int, num_classes: int, memory_size: int = 1000,
                 sigma: Optional[float] = None, knn: Optional[int] = None) -> None:
        self.in_channels = check_positive_int(in_channels, "in_channels")
        self.num_classes = check_positive_int(num_classes, "num_classes")
        self.memory_size = check_positive_int(memory_size, "memory_size")
        if sigma is not None:
            if isinstance(sigma, bool) or not isinstance(sigma, (int, float, np.floating)):
                raise TypeError(f"sigma must be a number or None, got {type(sigma).__name__}")
            if not np.isfinite(sigma) or sigma <= 0:
                raise ValueError(f"sigma must be a finite number > 0, got {sigma}")
            check_bandwidth(float(sigma), "sigma")
        self.sigma = None if sigma is None else float(sigma)
        self.knn = None if knn is None else check_positive_int(knn, "knn")
        self.reset()

    # ----------------------------------------------------------------- state
    def reset(self) -> None:
        """Empty window, terminals without edges, bandwidth unfrozen (if heuristic)."""
        c, slots = self.num_classes, self.memory_size + 1
        self._weights = np.zeros((c + slots, c + slots))
        self._x = np.zeros((slots, self.in_channels))
        self._label = np.full(slots, -1, dtype=np.int64)
        self._arrival = np.full(slots, -1, dtype=np.int64)    # -1 = free slot
        self._time = 0
        self._last_query: Optional[Tuple[np.ndarray, np.ndarray]] = None
        if self.sigma is None:
            self._sigma = 1.0
            self._frozen = False
            self._dist2 = np.zeros((slots, slots))             # squared distances
            self._edge = np.zeros((slots, slots), dtype=bool)  # edge pattern
        else:
            self._sigma = self.sigma
            self._frozen = True
            self._dist2 = np.zeros((0, 0))
            self._edge = np.zeros((0, 0), dtype=bool)
        self._index_window_pairs()

    _STATE = ("_weights", "_x", "_label", "_arrival", "_dist2", "_edge")
    _LABEL_ENTRIES = ("label",)

    def _numpy_state(self) -> NumpyState:
        state = {name.lstrip("_"): getattr(self, name).copy() for name in self._STATE}
        state["time"] = np.int64(self._time)
        state["sigma"] = np.float64(self._sigma)
        state["frozen"] = np.bool_(self._frozen)
        return state

    def _kept_settings(self) -> Dict[str, Any]:
        """``sigma`` (``None``: the median heuristic built the state's bandwidth) and
        ``knn`` (the edges of a state saved while the first window fills)."""
        return {"sigma": self.sigma, "knn": self.knn}

    def _load_state(self, state: Mapping[str, np.ndarray]) -> None:
        frozen = bool(state["frozen"])
        slots = self.memory_size + 1
        shapes = {name.lstrip("_"): getattr(self, name).shape for name in self._STATE}
        shapes["dist2"] = shapes["edge"] = (0, 0) if frozen else (slots, slots)
        state = {**state, **{name: check_shape(np.asarray(state[name]), name, shape)
                             for name, shape in shapes.items()}}
        time = check_loaded_counter(state["time"], "time")
        sigma = check_finite(np.asarray(state["sigma"]).item(), "state sigma")
        check_positive(sigma, "state sigma")
        check_bandwidth(sigma, "state sigma")
        self._check_reached(state)
        self._check_arrivals(np.asarray(state["arrival"]), time)
        self._check_graph(state, time, frozen, sigma)
        for name in self._STATE:
            current = getattr(self, name)
            setattr(self, name, np.asarray(state[name.lstrip("_")]).astype(current.dtype))
        self._time = time
        self._sigma = sigma
        self._frozen = frozen
        self._last_query = None
        with _flush_denormals():        # as learning measured them
            self._index_window_pairs()
            if not frozen:  # raising, the learner's earlier state is put back
                self._check_heuristic()

    def _check_graph(self, state: Mapping[str, np.ndarray], time: int, frozen: bool,
                     sigma: float) -> None:
        """Raise unless the state's entries agree as learning keeps them: the weights
        symmetric, 0 on the diagonal and at free slots; a given ``sigma`` the
        state's, frozen from the start; while the first window fills (not frozen),
        no point has left it (slot ``i`` holds the ``i``-th point, ``time`` of them)
        and ``dist2`` holds the squared distances of its points (to rounding)."""
        weights = np.asarray(state["weights"], dtype=np.float64)
        arrival = np.asarray(state["arrival"])
        expected = weights.T.copy()
        np.fill_diagonal(expected, 0.0)
        free = self.num_classes + np.flatnonzero(arrival == -1)
        expected[free, :] = expected[:, free] = 0.0
        check_derived(weights, expected, 0.0, "weights",
                      "symmetric, 0 on the diagonal and at free slots")
        if self.sigma is not None and (sigma != self.sigma or not frozen):
            raise ValueError(f"state sigma must be this learner's sigma={self.sigma!r}, and "
                             f"frozen true, got {sigma!r} and {frozen}")
        if frozen:
            return
        held = int((arrival != -1).sum())
        order = np.where(np.arange(arrival.size) < held, np.arange(arrival.size), -1)
        if held >= self.memory_size or time != held or not np.array_equal(arrival, order):
            raise ValueError(f"state arrival must be 0, 1, ..., time - 1 in the first slots "
                             f"and -1 after, fewer than memory_size {self.memory_size}, while "
                             f"the first window fills (frozen false): no point has left it; "
                             f"got time {time} and {arrival.tolist()}")
        check_squared_distances(np.asarray(state["x"], dtype=np.float64),
                                np.asarray(state["dist2"], dtype=np.float64),
                                np.arange(held), "dist2", "the squared distance between "
                                "the x rows of the window, to rounding")

    def _check_heuristic(self) -> None:
        """Raise unless the loaded bandwidth and weights of a state saved while the
        first window fills are what its distances give: the median one
        (:meth:`_median_bandwidth`) and its Gaussian weights on the window's edges
        (:meth:`_write_window_weights`), to rounding."""
        sigma = self._median_bandwidth()
        check_derived(self._sigma, sigma, ULPS * sigma, "sigma", "the median distance "
                      "between the window points while the first window fills, to rounding")
        weights = np.zeros_like(self._weights)
        self._write_window_weights(weights, int((self._arrival >= 0).sum()))
        check_derived(self._weights, weights, ULPS * weights, "weights",
                      "the Gaussian weights of dist2 with sigma on the window's edges while "
                      "the first window fills, to rounding")

    def _check_reached(self, state: Mapping[str, np.ndarray]) -> None:
        """Raise unless the window's ``float32`` features, their squared distances, the
        weights and the heuristic bandwidth (at most the longest distance; a given
        ``sigma`` is the setting's) hold what a run reaches, beyond which distances,
        Kron products and ``sigma ** 2`` overflow: a node's weights sum to at most
        its ``2 memory_size`` Gaussian edges (a Kron reduction lowers them, a
        contraction moves them), and an eviction adds at most that to two terminals'
        weight, once per learned sample."""
        spread = 2.0 * FEATURE_MAX * np.sqrt(self.in_channels)  # the longest distance
        check_reachable(state["x"], "x", -FEATURE_MAX, FEATURE_MAX)
        check_reachable(state["dist2"], "dist2", 0.0, spread ** 2)
        check_reachable(state["weights"], "weights", 0.0,
                        2.0 * self.memory_size * (COUNTER_MAX + 1.0))
        check_reachable(state["sigma"], "sigma", 0.0, max(spread, self.sigma or 0.0))

    def _check_arrivals(self, arrival: np.ndarray, time: int) -> None:
        """Raise unless the state's ``arrival`` marks at most ``memory_size`` window
        points (a learned point needs a free slot) with distinct times in
        :math:`[0, time)`, and free slots with ``-1``."""
        held = arrival[arrival != -1]
        if held.size > self.memory_size:
            raise ValueError(f"state arrival marks {held.size} window points, at most "
                             f"memory_size {self.memory_size} (-1: free slot)")
        if held.size and (held.min() < 0 or held.max() >= time
                          or np.unique(held).size != held.size):
            raise ValueError(f"state arrival must hold distinct times in [0, time {time}) "
                             f"(-1: free slot), got {sorted(held.tolist())}")

    @property
    def num_items(self) -> int:
        """Number of points in the window (at most ``memory_size``)."""
        return int((self._arrival >= 0).sum())

    def memory_usage(self) -> int:
        return self.num_items

    @property
    def bandwidth(self) -> float:
        """The Gaussian bandwidth in use."""
        return self._sigma

    @property
    def weight_matrix(self) -> np.ndarray:
        """Copy of the dense weight matrix: ``c`` terminals, then the window slots."""
        return self._weights.copy()

    # --------------------------------------------------------------- graph
    def _neighbours(self, x: np.ndarray
                    ) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The filled window slots and their squared distances to ``x``, then
        those of the slots ``x`` joins (its ``knn`` nearest, or all of them).

        The distances to every slot are kept until the window changes, so
        learning the point just predicted (test-then-train) measures nothing
        again.
        """
        slots = np.flatnonzero(self._arrival >= 0)
        if self._last_query is None or not np.array_equal(self._last_query[0], x):
            diff = self._x - x
            self._last_query = (x.copy(), np.einsum("ij,ij->i", diff, diff))
        dist2 = self._last_query[1][slots]
        if self.knn is not None and slots.size > self.knn:
            keep = np.sort(np.argsort(dist2, kind="stable")[:self.knn])
            return slots, dist2, slots[keep], dist2[keep]
        return slots, dist2, slots, dist2

    def _gauss(self, dist2: np.ndarray, out: Optional[np.ndarray] = None) -> np.ndarray:
        """``exp(-dist2 / (2 sigma^2))``, written into ``out`` if given."""
        scaled = np.divide(dist2, -2.0 * self._sigma ** 2, out=out)
        return np.exp(scaled, out=scaled)

    def _index_window_pairs(self) -> None:
        """Rebuild, from ``_dist2`` and ``_edge``, what the median heuristic keeps
        up to date while the first window fills: the sorted positive pairwise
        distances of the window points and, with ``knn``, the window's edges
        (both directions); empty once the bandwidth is frozen."""
        k = 0 if self._frozen else int((self._arrival >= 0).sum())
        dist = np.sqrt(self._dist2[:k, :k][np.triu_indices(k, k=1)])
        self._pair_dist = np.sort(dist[dist > 0])
        edges = self._edge[:k, :k] if self.knn is not None else np.zeros((0, 0), dtype=bool)
        self._edge_rows, self._edge_cols = np.nonzero(edges)

    def _add_window_pairs(self, slot: int, dist2: np.ndarray, neighbours: np.ndarray) -> None:
        """Merge the distances ``dist2`` of the point arriving in ``slot`` to the
        window points into the sorted ones, and its edges to ``neighbours``
        into the edge list (a sort of ``O(tau)`` new distances, then one copy of
        the ``O(tau^2)`` sorted ones)."""
        dist = np.sqrt(dist2)
        dist = np.sort(dist[dist > 0])
        self._pair_dist = np.insert(self._pair_dist, np.searchsorted(self._pair_dist, dist),
                                    dist)
        if self.knn is not None:
            ends = np.full(neighbours.size, slot)
            self._edge_rows = np.concatenate([self._edge_rows, ends, neighbours])
            self._edge_cols = np.concatenate([self._edge_cols, neighbours, ends])

    def _refresh_heuristic(self) -> None:
        """Median-heuristic bandwidth and weights while the first window fills.

        The median comes from the middle one or two of the sorted distances
        (their mean, as :func:`numpy.median` takes it); only edge weights are
        rewritten (``O(tau knn)`` with ``knn``, ``O(tau^2)`` without), the
        others are still zero.
        """
        # no node has left before the bandwidth freezes, so slots 0..k-1 are the window
        k = int((self._arrival >= 0).sum())
        self._sigma = self._median_bandwidth()
        self._write_window_weights(self._weights, k)
        if k >= self.memory_size:
            self._frozen = True
            self._dist2 = np.zeros((0, 0))
            self._edge = np.zeros((0, 0), dtype=bool)
            self._index_window_pairs()

    def _median_bandwidth(self) -> float:
        """The median of the sorted distances: the middle one or two (their mean,
        as :func:`numpy.median` takes it); 1.0 without any."""
        size = self._pair_dist.size
        middle = self._pair_dist[(size - 1) // 2:size // 2 + 1]
        return float(np.mean(middle)) if size else 1.0

    def _write_window_weights(self, weights: np.ndarray, k: int) -> None:
        r"""Write the Gaussian weights of the distances between the ``k`` window
        points (slots ``0..k-1``) with the bandwidth in use onto their edges in
        ``weights`` :math:`(c + \tau + 1, c + \tau + 1)`: ``O(tau knn)`` with
        ``knn``, all ``O(tau^2)`` pairs without."""
        c = self.num_classes
        if self.knn is None:       # every pair is an edge
            block = weights[c:c + k, c:c + k]
            self._gauss(self._dist2[:k, :k], out=block)
            np.fill_diagonal(block, 0.0)
        else:
            rows, cols = self._edge_rows, self._edge_cols
            weights[c + rows, c + cols] = self._gauss(self._dist2[rows, cols])

    def _insert(self, x: np.ndarray, y: int) -> None:
        c = self.num_classes
        all_slots, all_d2, nb, nb_d2 = self._neighbours(x)
        slot = int(np.flatnonzero(self._arrival < 0)[0])
        self._last_query = None
        self._x[slot] = x
        self._label[slot] = y
        self._arrival[slot] = self._time
        self._time += 1
        if not self._frozen:
            self._dist2[slot, :] = 0.0
            self._dist2[:, slot] = 0.0
            self._dist2[slot, all_slots] = all_d2
            self._dist2[all_slots, slot] = all_d2
            self._edge[slot, :] = False
            self._edge[:, slot] = False
            self._edge[slot, nb] = True
            self._edge[nb, slot] = True
            self._add_window_pairs(slot, all_d2, nb)
            self._refresh_heuristic()
            return
        w = self._gauss(nb_d2)
        node = c + slot
        self._weights[node, :] = 0.0
        self._weights[:, node] = 0.0
        self._weights[node, c + nb] = w
        self._weights[c + nb, node] = w

    def _evict_oldest(self) -> None:
        c = self.num_classes
        active = np.flatnonzero(self._arrival >= 0)
        slot = int(active[np.argmin(self._arrival[active])])
        node = c + slot
        row = self._weights[node].copy()
        row[node] = 0.0
        self._weights[node, :] = 0.0
        self._weights[:, node] = 0.0
        label = int(self._label[slot])
        if label >= 0:
            # contract into the class terminal: its edges join the terminal's
            row[label] = 0.0
            self._weights[label, :] += row
            self._weights[:, label] += row
            self._weights[label, label] = 0.0
        else:
            degree = row.sum()
            nz = np.flatnonzero(row)
            if degree > 0 and nz.size > 1:
                # star-mesh (Kron) reduction: W_uw += W_uv W_vw / d_v (r_u r_w = r_w r_u,
                # so W stays exactly symmetric; zero rows add exact zeros)
                update = np.multiply.outer(row, row)
                update /= degree
                self._weights += update
                self._weights[nz, nz] = 0.0
        self._x[slot] = 0.0
        self._label[slot] = -1
        self._arrival[slot] = -1

    # ----------------------------------------------------------- predicting
    def _predict_one(self, x: np.ndarray) -> np.ndarray:
        c = self.num_classes
        uniform = np.full(c, 1.0 / c)
        _, _, nb, nb_d2 = self._neighbours(x)
        w_x = np.zeros(self._x.shape[0])
        w_x[nb] = self._gauss(nb_d2)
        active = self._arrival >= 0
        lab_slots = np.flatnonzero(active & (self._label >= 0))
        unl_slots = np.flatnonzero(active & (self._label < 0))
        onehot = np.eye(c)[self._label[lab_slots]]
        unl_nodes = c + unl_slots
        W = self._weights
        # boundary pull on every unlabelled node (terminals + labelled window nodes)
        g_u = W[unl_nodes, :c] + W[np.ix_(unl_nodes, c + lab_slots)] @ onehot
        g_x = w_x[lab_slots] @ onehot
        m = unl_slots.size
        # Laplacian of the unlabelled nodes and the query (last row)
        lap: np.ndarray = np.empty((m + 1, m + 1))  # any shape to mypy: cut below
        np.negative(W[np.ix_(unl_nodes, unl_nodes)], out=lap[:m, :m])
        lap[:m, m] = -w_x[unl_slots]
        lap[m, :m] = -w_x[unl_slots]
        np.fill_diagonal(lap, np.append(W.sum(1)[unl_nodes] + w_x[unl_slots], w_x.sum()))
        rhs = np.vstack([g_u, g_x[None, :]])
        reach = rhs.sum(1) > 0
        if not reach.all():
            # the off-diagonal of a Laplacian is negative exactly where an edge is
            reach = _reachable(lap < 0, reach)
            if not reach[m]:
                return uniform
            idx = np.flatnonzero(reach)
            lap, rhs = lap[np.ix_(idx, idx)], rhs[idx]
        f_x = np.clip(_harmonic_last(lap, rhs), 0.0, None)
        total = f_x.sum()
        return f_x / total if total > 0 else uniform

    def _predict_proba(self, x: Tensor) -> Tensor:
        return predict_rows(x, self._predict_one, _flush_denormals)

    def predict_proba_float64(self, x: Any) -> np.ndarray:
        """Like :meth:`predict_proba` on float64 inputs, returning float64 NumPy values.

        The public API works in float32; this is for exactness checks.

        Args:
            x (Tensor or array-like): one sample :math:`(d,)` or rows :math:`(n, d)`.

        Returns:
            numpy.ndarray: the probabilities, shape :math:`(n, c)`, float64.
        """
        rows = as_feature_matrix(x, self.in_channels, dtype=torch.float64).cpu().numpy()
        with _flush_denormals():
            return np.stack([self._predict_one(row) for row in rows])

    # ------------------------------------------------------------- learning
    def _learn(self, x: Tensor, y: Tensor) -> None:
        check_counter_room(self._time, x.size(0), "time")
        rows = float64_rows(x)
        labels = y.detach().cpu().numpy()
        with _flush_denormals():
            for row, label in zip(rows, labels):
                self._insert(row, int(label))
                if self.num_items > self.memory_size:
                    self._evict_oldest()
