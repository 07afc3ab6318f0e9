"""Micro-cluster store shared by :class:`~torch_geometric_stream.baselines.ReSSL` and
:class:`~torch_geometric_stream.baselines.HDSSL`.

A micro-cluster summarises the points it absorbed by its linear sum ``LS``
(:math:`d`), squared sum ``SS`` (:math:`d`) and count ``N``; its centre is
``LS / N`` and its radius ``sqrt(max(0, sum(SS / N) - sum((LS / N) ** 2)))``.
It also carries a label (``-1`` = none), the time of its last update and an
importance (ReSSL) or weight (HDSSL).

The store keeps ``capacity`` fixed *slots* (NumPy ``float64`` arrays) with an
``active`` mask; a new cluster takes the lowest free slot, so every tie (nearest
cluster, closest pair, most frequent label) is broken by the lowest slot
index and the learners are deterministic.  The squared distances between all
active centres are cached in a ``capacity x capacity`` matrix that is updated
row by row (:math:`O(\\text{capacity} \\cdot d)` per changed cluster), so the
capacity merge costs :math:`O(\\text{capacity}^2)` instead of a fresh
:math:`O(\\text{capacity}^2 d)` pairwise distance computation.
"""
from __future__ import annotations

import abc
from typing import Any, Callable, Dict, Mapping, Optional, Tuple, Union

import numpy as np
from torch import Tensor

from torch_geometric_stream.base import StreamClassifier
from torch_geometric_stream.baselines.state import (COUNTER_MAX, FEATURE_MAX, ArgumentsRepr,
                                                    ULPS, CheckedStateLoad, NumpyState,
                                                    check_counter_room, check_derived,
                                                    check_loaded_counter, check_reachable,
                                                    check_shape, check_squared_distances,
                                                    check_state_entry, float64_rows,
                                                    predict_rows, rounding)
from torch_geometric_stream.validation import check_nonnegative, check_positive_int, check_seed

__all__ = ["MicroClusterStore", "MicroClusterClassifier", "radius_from_sums", "knn_epsilon"]

_ARRAYS = ("ls", "ss", "centre", "count", "label", "time", "weight", "radius", "active",
           "dist2")
#: The float arrays that may hold ``inf`` (``dist2``: no cluster yet); the others
#: hold finite values in every slot.
_INFINITE_ARRAYS = ("dist2",)
#: The values a run reaches in the arrays whose sums, squares and quotients would
#: overflow beyond them: at most :data:`COUNTER_MAX` points of ``float32`` features.
#: (``weight``, ``radius`` and ``dist2`` are only decayed, incremented and compared.)
_REACHED = {"ls": (-COUNTER_MAX * FEATURE_MAX, COUNTER_MAX * FEATURE_MAX),
            "ss": (0.0, COUNTER_MAX * FEATURE_MAX ** 2),
            "centre": (-FEATURE_MAX, FEATURE_MAX),
            "count": (0.0, float(COUNTER_MAX)),
            "time": (0.0, float(COUNTER_MAX))}


def _check_clusters(values: Mapping[str, np.ndarray], prefix: str) -> None:
    """Raise ``ValueError`` unless the active slots of a store's arrays (``values``,
    by name; saved with ``prefix``) agree as the store keeps them: a count of at
    least 1 (a cluster holds a point), the centre ``ls / count``, for a count above
    1 the radius :func:`radius_from_sums` (a singleton keeps the radius it got),
    ``dist2`` the squared distances between the centres and ``inf`` on the
    diagonal (a cluster never pairs with itself), each to rounding
    (:func:`~torch_geometric_stream.baselines.state.check_derived`). The inactive
    slots are not read: a new cluster overwrites every array of its slot.
    """
    active = np.flatnonzero(values["active"])
    count, ls, ss = values["count"], values["ls"], values["ss"]
    if active.size and count[active].min() < 1.0:
        raise ValueError(f"state {prefix}count must be >= 1 in an active slot (a cluster "
                         f"holds a point), got {count[active].min():g}")
    centre = values["centre"].copy()
    centre[active] = ls[active] / count[active, None]
    check_derived(values["centre"], centre, ULPS * np.abs(centre), prefix + "centre",
                  f"{prefix}ls / {prefix}count to rounding")
    merged = active[count[active] > 1]
    stored = values["radius"]
    radius = stored.copy()
    radius[merged] = radius_from_sums(ls[merged], ss[merged], count[merged])
    # sum(ss / n) - sum(centre ** 2) to rounding of its terms: its square root to that
    # over r + r' (|r - r'| (r + r') = |r^2 - r'^2|), or to the root of it
    scale = np.zeros(len(stored))
    scale[merged] = rounding(ls.shape[1]) * ((ss[merged] / count[merged, None]).sum(1)
                                              + (centre[merged] ** 2).sum(1))
    over = np.maximum(stored + radius, np.sqrt(scale))
    check_derived(stored, radius, np.divide(scale, over, out=np.zeros_like(scale),
                                            where=over > 0),
                  prefix + "radius", f"radius_from_sums({prefix}ls, {prefix}ss, "
                  f"{prefix}count) where {prefix}count > 1, to rounding")
    dist2 = values["dist2"]
    if active.size and not np.isinf(dist2[active, active]).all():
        slot = int(active[~np.isinf(dist2[active, active])][0])
        raise ValueError(f"state {prefix}dist2 must be inf on the diagonal of an active "
                         f"slot (a cluster never pairs with itself), got "
                         f"{float(dist2[slot, slot])!r} at [{slot}, {slot}]")
    check_squared_distances(values["centre"], dist2, active, prefix + "dist2",
                            f"the squared distance between the {prefix}centre rows, to rounding")


def radius_from_sums(ls: np.ndarray, ss: np.ndarray,
                     count: Union[np.ndarray, float]) -> np.ndarray:
    r"""Radius ``sqrt(max(0, sum(SS/N) - sum((LS/N)^2)))`` of (stacked) clusters.

    Args:
        ls (np.ndarray): linear sums :math:`(\dots, d)`.
        ss (np.ndarray): squared sums :math:`(\dots, d)`.
        count (np.ndarray or float): point counts :math:`(\dots)`.
    """
    count = np.asarray(count, dtype=np.float64)
    centre = ls / count[..., None]
    value = (ss / count[..., None]).sum(-1) - (centre * centre).sum(-1)
    return np.sqrt(np.maximum(value, 0.0))


def knn_epsilon(points: np.ndarray, k: int, rng: np.random.Generator,
                fraction: float = 0.1) -> float:
    """Mean distance to the ``k`` nearest other points over a random ``fraction`` sample.

    Args:
        points (np.ndarray): the points :math:`(m, d)`.
        k (int): the number of neighbours, clipped to :math:`m - 1`.
        rng (np.random.Generator): draws the sample, ``max(1, floor(fraction *
            m))`` points without replacement.
        fraction (float, optional): the fraction of the points sampled.
            (default: ``0.1``)

    Returns:
        The mean distance; 0 for fewer than two points (or ``k < 1``).
    """
    m = points.shape[0]
    k = min(int(k), m - 1)
    if k < 1:
        return 0.0
    size = max(1, int(m * fraction))
    sample = np.sort(rng.choice(m, size=size, replace=False))
    means = np.empty(size)
    for row, i in enumerate(sample):
        diff = points - points[i]
        dist = np.sqrt(np.einsum("ij,ij->i", diff, diff))
        dist[i] = np.inf
        means[row] = np.partition(dist, k - 1)[:k].mean()
    return float(means.mean())


class MicroClusterStore:
    """At most ``capacity`` micro-clusters over ``dim`` features (float64 arrays).

    Public arrays (length ``capacity``; only rows with ``active`` are meaningful):
    ``ls``, ``ss``, ``centre`` (capacity, dim); ``count``, ``time``, ``weight``,
    ``radius`` (float64); ``label`` (int64, ``-1`` = unlabeled); ``active`` (bool);
    ``dist2`` (capacity, capacity) squared centre distances, ``inf`` on the
    diagonal and for inactive slots.

    Args:
        capacity (int): the most micro-clusters held.
        dim (int): the number of features.
    """

    def __init__(self, capacity: int, dim: int) -> None:
        self.capacity = int(capacity)
        self.dim = int(dim)
        self.reset()

    # ------------------------------------------------------------------ state
    def reset(self) -> None:
        cap, dim = self.capacity, self.dim
        self.ls = np.zeros((cap, dim))
        self.ss = np.zeros((cap, dim))
        self.centre = np.zeros((cap, dim))
        self.count = np.zeros(cap)
        self.label = np.full(cap, -1, dtype=np.int64)
        self.time = np.zeros(cap)
        self.weight = np.zeros(cap)
        self.radius = np.zeros(cap)
        self.active = np.zeros(cap, dtype=bool)
        self.dist2 = np.full((cap, cap), np.inf)

    def state_dict(self, prefix: str = "mc_") -> Dict[str, np.ndarray]:
        """The public arrays, copied, keyed by ``prefix`` and their name.

        Args:
            prefix (str, optional): what starts each key. (default: ``"mc_"``)
        """
        return {prefix + name: getattr(self, name).copy() for name in _ARRAYS}

    def load_state_dict(self, state: Mapping[str, np.ndarray], prefix: str = "mc_") -> None:
        """Restore :meth:`state_dict`'s arrays, every shape and the kind of every
        value (:func:`~torch_geometric_stream.baselines.state.check_state_entry`:
        finite sums, counts, times, weights and radii, integer labels, boolean
        flags) checked before any is set.

        Args:
            state (Mapping[str, np.ndarray]): a result of :meth:`state_dict`.
            prefix (str, optional): the ``prefix`` it was saved with.
                (default: ``"mc_"``)

        Raises:
            TypeError: an array of values of another kind (complex, strings, ...).
            ValueError: an array of another shape, NaN or inf values (NaN in
                ``dist2``), labels beyond ``int64``, sums, centres, counts or
                times beyond what a run reaches (:data:`_REACHED`), or an active
                cluster whose arrays disagree (:func:`_check_clusters`).
        """
        values = {name: check_shape(np.asarray(state[prefix + name]), prefix + name,
                                    getattr(self, name).shape) for name in _ARRAYS}
        for name, value in values.items():
            check_state_entry(value, prefix + name, getattr(self, name),
                              finite=name not in _INFINITE_ARRAYS)
        for name, (low, high) in _REACHED.items():
            check_reachable(values[name], prefix + name, low, high)
        _check_clusters(values, prefix)
        for name, value in values.items():
            setattr(self, name, value.astype(getattr(self, name).dtype, copy=True))

    @property
    def num_items(self) -> int:
        """Number of active micro-clusters."""
        return int(self.active.sum())

    def labeled_slots(self) -> np.ndarray:
        return np.flatnonzero(self.active & (self.label >= 0))

    # ------------------------------------------------------------- geometry
    def _refresh(self, slot: int) -> None:
        """Recompute centre, radius and the cached distance row of ``slot``."""
        self.centre[slot] = self.ls[slot] / self.count[slot]
        if self.count[slot] > 1:
            self.radius[slot] = radius_from_sums(self.ls[slot], self.ss[slot],
                                                 self.count[slot])
        self._update_distances(slot)

    def _update_distances(self, slot: int) -> None:
        others = np.flatnonzero(self.active)
        diff = self.centre[others] - self.centre[slot]
        row = np.einsum("ij,ij->i", diff, diff)
        self.dist2[slot, :] = np.inf
        self.dist2[:, slot] = np.inf
        self.dist2[slot, others] = row
        self.dist2[others, slot] = row
        self.dist2[slot, slot] = np.inf

    def nearest(self, x: np.ndarray, mask: Optional[np.ndarray] = None,
                first_only: bool = False) -> Tuple[np.ndarray, np.ndarray]:
        """Active slots (restricted to ``mask``) sorted by distance to ``x``; ties keep
        the lower slot first.

        Args:
            x (np.ndarray): the point :math:`(d,)`.
            mask (np.ndarray, optional): a boolean mask of the slots to consider;
                ``None``: all. (default: ``None``)
            first_only (bool, optional): return only the nearest one.
                (default: ``False``)

        Returns:
            ``(slots, distances)``.
        """
        keep = self.active if mask is None else (self.active & mask)
        slots = np.flatnonzero(keep)
        if slots.size == 0:
            return slots, np.zeros(0)
        diff = self.centre[slots] - x
        dist = np.sqrt(np.einsum("ij,ij->i", diff, diff))
        if first_only:
            best = int(np.argmin(dist))
            return slots[best:best + 1], dist[best:best + 1]
        order = np.argsort(dist, kind="stable")
        return slots[order], dist[order]

    # ------------------------------------------------------------ mutations
    def _free_slot(self) -> int:
        free = np.flatnonzero(~self.active)
        if free.size == 0:
            raise RuntimeError("micro-cluster store is full; merge before creating")
        return int(free[0])

    def create(self, ls: np.ndarray, ss: np.ndarray, count: float, label: int,
               radius: float, now: float, weight: float = 1.0) -> int:
        """Add a cluster from its sums; a singleton keeps the given ``radius``.

        Args:
            ls, ss (np.ndarray): its linear and squared sums :math:`(d,)`.
            count (float): its number of points.
            label (int): its label (``-1``: unlabeled).
            radius (float): its radius, kept while it is a singleton.
            now (float): the stream time.
            weight (float, optional): its weight. (default: ``1.0``)

        Returns:
            The slot it went to.

        Raises:
            RuntimeError: the store is full (merge before creating).
        """
        slot = self._free_slot()
        self.ls[slot] = ls
        self.ss[slot] = ss
        self.count[slot] = count
        self.label[slot] = label
        self.time[slot] = now
        self.weight[slot] = weight
        self.radius[slot] = radius
        self.active[slot] = True
        self._refresh(slot)
        return slot

    def create_point(self, x: np.ndarray, label: int, radius: float, now: float) -> int:
        """:meth:`create` of a singleton cluster at ``x``.

        Args:
            x (np.ndarray): the point :math:`(d,)`.
            label, radius, now: as for :meth:`create`.
        """
        return self.create(x, x * x, 1.0, label, radius, now)

    def absorb(self, slot: int, x: np.ndarray, now: float) -> None:
        """Add point ``x`` to cluster ``slot`` (label unchanged, time = now).

        Args:
            slot (int): the cluster.
            x (np.ndarray): the point :math:`(d,)`.
            now (float): the stream time.
        """
        self.ls[slot] += x
        self.ss[slot] += x * x
        self.count[slot] += 1.0
        self.time[slot] = now
        self._refresh(slot)

    def remove(self, slots: np.ndarray) -> None:
        """Deactivate and clear the clusters in ``slots``.

        Args:
            slots (np.ndarray or int): the slots.
        """
        slots = np.atleast_1d(np.asarray(slots, dtype=np.int64))
        if slots.size == 0:
            return
        self.active[slots] = False
        self.ls[slots] = 0.0
        self.ss[slots] = 0.0
        self.centre[slots] = 0.0
        self.count[slots] = 0.0
        self.label[slots] = -1
        self.time[slots] = 0.0
        self.weight[slots] = 0.0
        self.radius[slots] = 0.0
        self.dist2[slots, :] = np.inf
        self.dist2[:, slots] = np.inf

    def merge(self, keep: int, drop: int) -> None:
        """Merge cluster ``drop`` into ``keep``: sums add, time and weight take the max.

        The merged cluster takes ``keep``'s label, or ``drop``'s if ``keep`` has none.

        Args:
            keep (int): the slot that stays.
            drop (int): the slot merged into it and removed.
        """
        self.ls[keep] += self.ls[drop]
        self.ss[keep] += self.ss[drop]
        self.count[keep] += self.count[drop]
        self.time[keep] = max(self.time[keep], self.time[drop])
        self.weight[keep] = max(self.weight[keep], self.weight[drop])
        if self.label[keep] < 0:
            self.label[keep] = self.label[drop]
        self.remove(np.array([drop]))
        self._refresh(keep)

    def _closest_pair(self, rows: np.ndarray, cols: np.ndarray) -> Optional[Tuple[int, int]]:
        if rows.size == 0 or cols.size == 0:
            return None
        block = self.dist2[np.ix_(rows, cols)]
        flat = int(np.argmin(block))
        if not np.isfinite(block.flat[flat]):
            # every pair is a self pair (a single cluster) -> nothing to merge
            return None
        i, j = divmod(flat, cols.size)
        return int(rows[i]), int(cols[j])

    def merge_for_capacity(self) -> bool:
        """Free one slot by the ReSSL/HDSSL capacity rule; returns whether it merged.

        1. the closest (unlabeled, labeled) pair: the merged cluster takes the
           label (this is how unlabeled data gets pseudo-labels);
        2. with no such pair, the two closest clusters of the most frequent
           label (ties: smaller label id);
        3. fallbacks the authors' code never reaches (it starts from a labelled
           model): with no labeled cluster, the two closest unlabeled clusters;
           if every label has a single cluster, the two closest clusters
           overall, keeping the label of the larger one.
        """
        unl = np.flatnonzero(self.active & (self.label < 0))
        lab = np.flatnonzero(self.active & (self.label >= 0))
        pair = self._closest_pair(unl, lab)
        if pair is not None:
            self.merge(pair[1], pair[0])            # labeled slot survives
            return True
        if lab.size:
            labels = self.label[lab]
            counts = np.bincount(labels)
            top = int(np.argmax(counts))
            members = lab[labels == top]
            pair = self._closest_pair(members, members)
            if pair is not None:
                self.merge(min(pair), max(pair))
                return True
        if unl.size >= 2:
            pair = self._closest_pair(unl, unl)
            if pair is not None:
                self.merge(min(pair), max(pair))
                return True
        act = np.flatnonzero(self.active)
        pair = self._closest_pair(act, act)
        if pair is None:
            return False
        # every cluster here is labeled (an unlabeled one would have paired in 1.)
        a, b = min(pair), max(pair)
        keep, drop = (a, b) if self.count[a] >= self.count[b] else (b, a)
        self.merge(keep, drop)
        return True

    def absorb_or_create(self, x: np.ndarray, label: int, now: float,
                         fallback_radius: Optional[Callable[[], float]] = None) -> int:
        """ReSSL update steps (3)-(4) for one point.

        The nearest cluster absorbs ``x`` if ``x`` lies within its radius and
        ``x`` is unlabeled or carries the cluster's label.  Otherwise a new
        singleton cluster is created at ``x`` with the nearest cluster's radius,
        after a capacity merge if the store is full.

        Args:
            x (np.ndarray): the point :math:`(d,)`.
            label (int): its label (``-1``: unlabeled).
            now (float): the stream time.
            fallback_radius (Callable, optional): gives the radius of a new cluster
                when the nearest one's is 0 or the store is empty. (default: ``None``)

        Returns:
            The slot the point went to.
        """
        slots, dist = self.nearest(x, first_only=True)
        radius = 0.0
        if slots.size:
            slot = int(slots[0])
            if dist[0] <= self.radius[slot] and (label < 0 or label == self.label[slot]):
                self.absorb(slot, x, now)
                return slot
            radius = float(self.radius[slot])
        if radius <= 0.0 and fallback_radius is not None:
            radius = float(fallback_radius())
        if self.num_items >= self.capacity:
            self.merge_for_capacity()
        return self.create_point(x, label, radius, now)

    def decay_and_prune(self, now: float, decay: float, threshold: float,
                        elapsed: Optional[float] = None) -> np.ndarray:
        """Decay every weight, then prune.

        Clusters whose weight falls below ``threshold`` are removed, except that
        the last labeled cluster of a class is never pruned (of a class whose
        clusters would all go, the one with the largest weight stays; ties:
        lower slot).

        Args:
            now (float): the stream time.
            decay (float): the decay rate.
            threshold (float): the weight below which a cluster is pruned.
            elapsed (float, optional): the time since the previous call; then every
                weight is multiplied by ``2 ** (-decay * elapsed)``: plain
                exponential decay, a weight untouched since time ``t`` is
                ``w(t) 2 ** (-decay * (now - t))``. With ``None``, every weight is
                multiplied by ``2 ** (-decay * (now - time))``, the factor since the
                cluster's last update, at every call, so the decay compounds over
                calls (ReSSL's official ``update_Model.m``). (default: ``None``)

        Returns:
            The removed slots.
        """
        act = np.flatnonzero(self.active)
        if act.size == 0:
            return act
        if elapsed is None:
            self.weight[act] *= np.exp2(-decay * (now - self.time[act]))
        else:
            self.weight[act] *= np.exp2(-decay * elapsed)
        low = np.zeros(self.capacity, dtype=bool)
        low[act] = self.weight[act] < threshold
        if not low.any():
            return np.zeros(0, dtype=np.int64)
        labelled = self.active & (self.label >= 0)
        for cls in np.unique(self.label[low & labelled]):
            members = np.flatnonzero(labelled & (self.label == cls))
            if low[members].all():
                low[members[np.argmax(self.weight[members])]] = False
        gone = np.flatnonzero(low)
        self.remove(gone)
        return gone


class MicroClusterClassifier(ArgumentsRepr, CheckedStateLoad, StreamClassifier):
    r"""Accessors and state shared by the micro-cluster baselines (ReSSL, HDSSL).

    Subclasses keep their clusters in ``self._store`` and the stream time in
    ``self._now``. The constructor checks and keeps the settings every
    micro-cluster baseline has and makes its (empty) store; the subclass checks
    its own settings, then calls ``reset()``.

    Args:
        in_channels (int): number of features :math:`d`.
        num_classes (int): number of classes :math:`c`.
        memory_size (int): maximum number of micro-clusters (:math:`\geq 2`).
        decay (float): decay rate (:math:`\geq 0`).
        prune_threshold (float): importance below which a cluster is pruned
            (:math:`\geq 0`).
        seed (int): the seed (see
            :func:`~torch_geometric_stream.validation.check_seed`).
    """

    _LABEL_ENTRIES: Tuple[str, ...] = ("mc_label",)
    _INFINITE_ENTRIES: Tuple[str, ...] = tuple("mc_" + name for name in _INFINITE_ARRAYS)

    def __init__(self, in_channels: int, num_classes: int, memory_size: int, decay: float,
                 prune_threshold: float, seed: int) -> None:
        self.in_channels = check_positive_int(in_channels, "in_channels")
        self.num_classes = check_positive_int(num_classes, "num_classes")
        self.memory_size = check_positive_int(memory_size, "memory_size", minimum=2)
        self.decay = check_nonnegative(decay, "decay")
        self.prune_threshold = check_nonnegative(prune_threshold, "prune_threshold")
        self.seed = check_seed(seed)
        self._store = MicroClusterStore(self.memory_size, self.in_channels)
        self._now = 0

    def reset(self) -> None:
        """Forget every micro-cluster and set the stream time to 0 (subclasses also
        clear their own buffers)."""
        self._store.reset()
        self._now = 0

    @property
    def num_items(self) -> int:
        """Number of micro-clusters held (at most ``memory_size``)."""
        return self._store.num_items

    def memory_usage(self) -> int:
        return self.num_items

    @property
    def micro_clusters(self) -> MicroClusterStore:
        """The micro-cluster store (read it, do not modify it)."""
        return self._store

    def _rng(self) -> np.random.Generator:
        """The generator of the random samples drawn at the current stream time."""
        return np.random.default_rng([self.seed, self._now])

    def _centre_epsilon(self, x: np.ndarray, k: int) -> float:
        """The radius estimate of a new cluster at ``x`` :math:`(d,)`: :func:`knn_epsilon`
        of the active centres and ``x`` with ``k`` neighbours (HDSSL's, the official
        ``eRangMC``)."""
        store = self._store
        points = np.vstack([store.centre[store.active], x[None, :]])
        return knn_epsilon(points, k, self._rng())

    @abc.abstractmethod
    def _predict_one(self, x: np.ndarray) -> np.ndarray:
        """Class probabilities :math:`(c,)` of one row ``x`` :math:`(d,)`."""

    def _predict_proba(self, x: Tensor) -> Tensor:
        return predict_rows(x, self._predict_one)

    @abc.abstractmethod
    def _learn_one(self, x: np.ndarray, y: int) -> None:
        """Learn one row ``x`` :math:`(d,)` of label ``y`` (``-1``: none), one tick
        of the stream time."""

    def _learn(self, x: Tensor, y: Tensor) -> None:
        check_counter_room(self._now, x.size(0), "now")
        rows = float64_rows(x)
        labels = y.detach().cpu().numpy()
        for row, label in zip(rows, labels):
            self._learn_one(row, int(label))

    def _kept_settings(self) -> Dict[str, Any]:
        """``decay`` and ``prune_threshold`` (the weights were decayed and pruned
        with them); subclasses add their own."""
        return {"decay": self.decay, "prune_threshold": self.prune_threshold}

    def _store_state(self, seeded: bool = False) -> NumpyState:
        """The clusters and the time, and with ``seeded`` the seed (with the time, it
        seeds the radius samples)."""
        state: NumpyState = {**self._store.state_dict(), "now": np.int64(self._now)}
        if seeded:
            state["seed"] = np.uint64(self.seed)
        return state

    def _load_store_state(self, state: Mapping[str, np.ndarray]) -> None:
        """Load :meth:`_store_state`'s entries (the seed where ``state`` has one)."""
        now = check_loaded_counter(state["now"], "now")
        # a cluster's time is one of the stream's (decayed by 2 ** (-decay (now - time)))
        check_reachable(state["mc_time"], "mc_time", 0.0, float(now))
        seed = (check_seed(np.asarray(state["seed"]).item(), "state seed")
                if "seed" in state else self.seed)
        self._store.load_state_dict(state)
        self._now = now
        self.seed = seed
