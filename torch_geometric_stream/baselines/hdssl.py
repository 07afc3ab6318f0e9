"""HDSSL: the micro-cluster (clustering) component of SyncSemiMC / HDSSL."""
from __future__ import annotations

from typing import Any, Dict, List, Mapping

import numpy as np

from torch_geometric_stream.baselines.microclusters import (MicroClusterClassifier,
                                                            knn_epsilon, radius_from_sums)
from torch_geometric_stream.baselines.state import (FEATURE_MAX, NumpyState, check_reachable,
                                                    check_shape)
from torch_geometric_stream.validation import check_positive_int

__all__ = ["HDSSL", "sync_cluster", "knn_epsilon"]


def _pairwise_dist(points: np.ndarray) -> np.ndarray:
    sq = np.einsum("ij,ij->i", points, points)
    d2 = sq[:, None] + sq[None, :] - 2.0 * points @ points.T
    np.fill_diagonal(d2, 0.0)
    return np.sqrt(np.maximum(d2, 0.0))


def sync_cluster(x: np.ndarray, y: np.ndarray, eps: float, max_iter: int = 20,
                 order_threshold: float = 0.999, group_tol: float = 1e-3) -> List[np.ndarray]:
    r"""Synchronization clustering of a chunk with a cannot-link rule.

    Every point moves by :math:`\frac{1}{n_i}\sum_{j \in N_i} \sin(x_j - x_i)`
    (element-wise), where :math:`N_i` are the points within ``eps`` of
    :math:`x_i` (itself included) that may link with it: unlabelled points link
    with everything, two labelled points only if their labels agree.  The
    loop stops when the order parameter
    :math:`r = \mathrm{mean}_i \frac{1}{n_i}\sum_{j \in N_i} e^{-\|x_j - x_i\|}`
    exceeds ``order_threshold``, when it changes by less than ``1e-5`` (as the
    official code), or after ``max_iter`` iterations.  Points whose final
    positions lie within ``group_tol`` of a group's first point form a group;
    a group never holds two different labels.

    Args:
        x (np.ndarray): the chunk's points :math:`(m, d)`.
        y (np.ndarray): their labels :math:`(m,)`, negative for unlabelled.
        eps (float): the linking distance.
        max_iter (int, optional): the most iterations. (default: ``20``)
        order_threshold (float, optional): the order parameter that stops the
            loop. (default: ``0.999``)
        group_tol (float, optional): the distance within which final positions
            form a group. (default: ``1e-3``)

    Returns:
        The groups as arrays of row indices (in order of their first row).
    """
    m = x.shape[0]
    pos = x.copy()
    compat = (y[:, None] < 0) | (y[None, :] < 0) | (y[:, None] == y[None, :])
    previous = None
    for _ in range(max_iter):
        dist = _pairwise_dist(pos)
        link = (dist < eps) & compat
        np.fill_diagonal(link, True)
        n = link.sum(1).astype(np.float64)
        weights = link.astype(np.float64)
        sin_p, cos_p = np.sin(pos), np.cos(pos)
        # sum_j sin(x_j - x_i) = cos(x_i) * sum_j sin(x_j) - sin(x_i) * sum_j cos(x_j)
        pull = cos_p * (weights @ sin_p) - sin_p * (weights @ cos_p)
        pos = pos + pull / n[:, None]  # n >= 1; an isolated point's pull is c*s - s*c = 0
        order = float(((np.exp(-dist) * weights).sum(1) / n).mean())
        if order > order_threshold or (previous is not None and abs(order - previous) < 1e-5):
            break
        previous = order
    dist = _pairwise_dist(pos)
    assigned = np.zeros(m, dtype=bool)
    groups = []
    for i in range(m):
        if assigned[i]:
            continue
        members = np.flatnonzero(~assigned & (dist[i] < group_tol))
        members = np.union1d(members, [i])
        labelled = members[y[members] >= 0]
        if labelled.size:
            first = y[labelled[0]]
            members = members[(y[members] < 0) | (y[members] == first)]
        assigned[members] = True
        groups.append(members)
    return groups


class HDSSL(MicroClusterClassifier):
    r"""HDSSL's micro-cluster classifier (the clustering component the SLeDGe paper ran).

    S. U. Din, J. Kumar, J. Shao, C. B. Mawuli and W. D. Ndiaye, "Learning
    high-dimensional evolving data streams with limited labels", *IEEE
    Transactions on Cybernetics* 52(11) (2022).

    The model is a set of at most ``memory_size`` micro-clusters (LS, SS, N,
    label or none, centre, radius, time, weight).  Prediction: the label of the
    nearest labelled centre (one-hot probabilities; uniform before any label).
    Learning a sample at time ``now`` (one tick per learned sample): if it is
    labelled, the nearest labelled cluster gains weight +1 when its label is
    right and loses 1 otherwise; all weights decay by ``2 ** -decay`` and
    clusters below ``prune_threshold`` are pruned (never the last labelled
    cluster of a class).  With ``chunk_size == 1`` (the SLeDGe setting) the
    sample is then absorbed by the nearest cluster if it lies within its
    radius and is unlabelled or has the same label, otherwise it becomes a
    new cluster with the nearest cluster's radius (ReSSL's step 3), merging
    first at capacity with ReSSL's rule
    (closest unlabelled/labelled pair, else the two closest clusters of the most
    frequent label).  With ``chunk_size > 1`` samples are buffered and every
    full chunk is clustered by synchronization (:func:`sync_cluster`, with
    ``eps`` the mean distance to the ``k`` nearest neighbours over a 10 %
    sample of the chunk); each group becomes a micro-cluster.

    Args:
        in_channels (int): number of features :math:`d`.
        num_classes (int): number of classes :math:`c`.
        memory_size (int, optional): maximum number of micro-clusters (default ``1000``).
        k (int, optional): neighbour count of the radius estimate (default ``5``, the
            middle of the grid :math:`k \in \{1, 5, 10\}` over which the SLeDGe paper
            varied it).
        decay (float, optional): decay rate :math:`\lambda` (default ``1e-4``).
        prune_threshold (float, optional): weight below which a cluster is pruned (default
            ``0.15``).
        chunk_size (int, optional): ``1`` for the per-instance variant, ``> 1`` for chunked
            synchronization clustering (default ``1``).
        seed (int, optional): seed of the 10 % samples of the radius estimate (default ``0``);
            part of the state: a loaded state brings the seed it was saved with,
            so the learner goes on drawing the saved learner's samples.

    Deviations from the authors' code (Java, ``SyncSemiMC/src/SyncSemiMC.java``):
        * No initial labelled set (the official run clusters 1000 instances
          first): the model starts empty.  Per-instance, a new cluster copies
          the nearest cluster's radius as in the official ``createMC``; when
          that radius is 0 (the store holds only radius-0 clusters, as at the
          start) it gets ``eps`` = mean distance to the ``k`` nearest centres
          over a 10 % sample of the current centres and the new point (the
          official ``eRangMC``), which is where ``k`` acts with chunks of one.
          The very first cluster has radius 0.
        * The absorb rule follows ReSSL's step 3 (a labelled sample is not
          absorbed by an unlabelled or differently labelled cluster); the
          official ``updateMC`` absorbs any sample within the radius and lets a
          labelled one label an unlabelled cluster.
        * Pruning works (the official ``LocalM.remove(mcToDel)`` removes
          nothing) and keeps the last labelled cluster of each class.
        * Weights decay exponentially, by ``2 ** -decay`` per step, so a
          cluster untouched for ``n`` steps has lost the factor
          ``2 ** (-decay n)``: at the defaults, a cluster of weight 1 left
          alone is pruned after about 27,000 steps.  The official ``updateModel``
          multiplies every weight by the factor since the cluster's last
          update at *every* step, which compounds (``2 ** (-decay n^2 / 2)``
          after ``n`` idle steps): together with working pruning that
          removes any cluster within about 230 steps and starves the 1-NN
          classifier of labelled clusters (1 % labels, seed 0: MNIST first
          10,000 samples 0.416 compounding vs 0.627 here, Shopper 0.630 vs
          0.820 with the paper at 0.8025). The official code never showed
          this because its pruning removes nothing.
        * Chunk mode: samples are buffered until ``chunk_size`` of them have
          arrived (prediction and reward/decay still happen per sample), then
          each synchronization group is added as a new micro-cluster (time =
          now, weight 1, merging at capacity).  A group takes the label of its
          labelled members and never mixes two labels (official: majority
          vote); singleton groups get the mean radius of the chunk's groups
          (official), or ``eps`` if that is 0.  The order parameter counts an
          isolated point as synchronized (official: 0); the official
          stagnation stop (change < 1e-5) is kept.  Groups are disjoint (the
          official grouping can put a point into several groups).
    """

    _LABEL_ENTRIES = ("mc_label", "buffer_y")

    def __init__(self, in_channels: int, num_classes: int, memory_size: int = 1000,
                 k: int = 5, decay: float = 1e-4, prune_threshold: float = 0.15,
                 chunk_size: int = 1, seed: int = 0) -> None:
        super().__init__(in_channels, num_classes, memory_size, decay, prune_threshold, seed)
        self.k = check_positive_int(k, "k")
        self.chunk_size = check_positive_int(chunk_size, "chunk_size")
        self.reset()

    # ----------------------------------------------------------------- state
    def reset(self) -> None:
        """Forget everything (empty model, empty chunk buffer, time 0)."""
        super().reset()
        # any shape to mypy: a loaded state's buffers replace these
        self._buffer_x: np.ndarray = np.zeros((self.chunk_size if self.chunk_size > 1 else 0,
                                               self.in_channels))
        self._buffer_y: np.ndarray = np.full(self._buffer_x.shape[0], -1, dtype=np.int64)
        self._buffered = 0

    @property
    def num_buffered(self) -> int:
        """Raw samples waiting in the chunk buffer (chunk mode, < ``chunk_size``)."""
        return self._buffered

    def _kept_settings(self) -> Dict[str, Any]:
        """The micro-cluster settings and ``k`` (the radii of new clusters)."""
        return {**super()._kept_settings(), "k": self.k}

    def _numpy_state(self) -> NumpyState:
        state = self._store_state(seeded=True)
        state["buffer_x"] = self._buffer_x.copy()
        state["buffer_y"] = self._buffer_y.copy()
        state["buffered"] = np.int64(self._buffered)
        return state

    def _load_state(self, state: Mapping[str, np.ndarray]) -> None:
        buffer_x = check_shape(np.asarray(state["buffer_x"], dtype=np.float64), "buffer_x",
                               self._buffer_x.shape)
        buffer_y = check_shape(np.asarray(state["buffer_y"], dtype=np.int64), "buffer_y",
                               self._buffer_y.shape)
        check_reachable(buffer_x, "buffer_x", -FEATURE_MAX, FEATURE_MAX)  # raw features
        buffered = check_positive_int(np.asarray(state["buffered"]).item(), "state buffered",
                                      minimum=0)
        if buffered >= self.chunk_size:  # a full chunk is clustered at once
            raise ValueError(f"state buffered must be below chunk_size {self.chunk_size} "
                             f"(a full chunk is clustered at once), got {buffered}")
        self._load_store_state(state)
        self._buffer_x = buffer_x.copy()
        self._buffer_y = buffer_y.copy()
        self._buffered = buffered

    # ------------------------------------------------------------ predicting
    def _nearest_labelled(self, x: np.ndarray) -> int:
        store = self._store
        slots, _ = store.nearest(x, mask=store.label >= 0, first_only=True)
        return int(slots[0]) if slots.size else -1

    def _predict_one(self, x: np.ndarray) -> np.ndarray:
        slot = self._nearest_labelled(x)
        if slot < 0:
            return np.full(self.num_classes, 1.0 / self.num_classes)
        out = np.zeros(self.num_classes)
        out[self._store.label[slot]] = 1.0
        return out

    # ------------------------------------------------------------- learning
    def _flush_chunk(self, now: float) -> None:
        x = self._buffer_x[:self._buffered].copy()
        y = self._buffer_y[:self._buffered].copy()
        self._buffered = 0
        self._buffer_y[:] = -1
        self._buffer_x[:] = 0.0
        eps = knn_epsilon(x, self.k, self._rng())
        groups = sync_cluster(x, y, eps)
        sums = [(x[g].sum(0), (x[g] ** 2).sum(0), float(g.size)) for g in groups]
        radii = np.array([radius_from_sums(ls, ss, np.float64(n)) if n > 1 else 0.0
                          for ls, ss, n in sums])
        singleton_radius = float(radii.mean())  # a full chunk has at least one group
        if singleton_radius <= 0.0:
            singleton_radius = eps
        store = self._store
        for (ls, ss, n), members in zip(sums, groups):
            labels = y[members]
            label = int(labels[labels >= 0][0]) if (labels >= 0).any() else -1
            if store.num_items >= store.capacity:
                store.merge_for_capacity()
            # the store computes a larger group's radius from its sums
            store.create(ls, ss, n, label, singleton_radius, now)

    def _learn_one(self, x: np.ndarray, y: int) -> None:
        store = self._store
        self._now += 1
        now = float(self._now)
        if y >= 0:
            slot = self._nearest_labelled(x)
            if slot >= 0:
                store.weight[slot] += 1.0 if store.label[slot] == y else -1.0
        store.decay_and_prune(now, self.decay, self.prune_threshold, elapsed=1.0)
        if self.chunk_size == 1:
            store.absorb_or_create(x, y, now,
                                   fallback_radius=lambda: self._centre_epsilon(x, self.k))
            return
        self._buffer_x[self._buffered] = x
        self._buffer_y[self._buffered] = y
        self._buffered += 1
        if self._buffered == self.chunk_size:
            self._flush_chunk(now)
