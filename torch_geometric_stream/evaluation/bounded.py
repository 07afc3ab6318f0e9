r"""Running summaries of a stream run in memory that does not grow with its length.

A prequential run with ``history="full"`` keeps its per-sample columns (about
18 bytes per sample); with ``history="bounded"`` it keeps these summaries
instead, whose size depends on the number of classes :math:`c`, not on the
number of samples :math:`T`:

* :class:`RunningClassCounts`: the confusion counts of the (label, prediction)
  pairs seen, the running class counts with the prequential majority class and
  the previous label: every entry of
  :func:`~torch_geometric_stream.evaluation.class_metrics`, exactly;
* :class:`RunningAccuracy`: the samples and hits so far, and the cumulative hits
  at every ``stride``-th sample, at most ``max_points`` of them (the stride
  doubles when they are all taken): exact running accuracies at those
  positions, whose nearest to :math:`T - \lceil p T \rceil` gives the tail
  accuracies; exact while :math:`T \leq` ``max_points``, and within
  :math:`1 / (p \cdot \text{max\_points} - 1)` after (:meth:`RunningAccuracy.tail`);
* :class:`LatencyHistogram`: the latencies counted in log-spaced bins
  (:data:`LATENCY_RATIO` wide, from :data:`LATENCY_FLOOR`): quantiles within
  0.5 % of the exact ones, plus 1 ns (:meth:`LatencyHistogram.quantile`);
* :class:`BoundedStreamMetrics`: the latter two, in the role of
  :class:`~torch_geometric_stream.evaluation.StreamMetrics`.

Each has ``state_dict`` / ``load_state_dict`` for checkpoints; a load checks the
whole state before it changes anything.
"""
from __future__ import annotations

import math
from array import array
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np

from torch_geometric_stream.evaluation.metrics import (MAX_CONFUSION_CLASSES, TAIL_FRACTIONS,
                                                       class_count, class_metrics_from_counts,
                                                       curve_positions, tail_size)
from torch_geometric_stream.validation import check_positive_int, check_real, check_unit_interval

__all__ = ["CURVE_POINTS", "LATENCY_FLOOR", "LATENCY_RATIO", "RunningClassCounts",
           "RunningAccuracy", "kept_curve", "kept_tail_span", "approximate_tails",
           "LatencyHistogram", "BoundedStreamMetrics"]

#: Most cumulative-hit points :class:`RunningAccuracy` keeps (32 KiB of ``int64``).
CURVE_POINTS = 4096
#: Latencies below this many seconds share :class:`LatencyHistogram`'s first bin.
LATENCY_FLOOR = 1e-9
#: Ratio of the upper to the lower edge of a :class:`LatencyHistogram` bin.
LATENCY_RATIO = 1.01
_LOG_RATIO = math.log(LATENCY_RATIO)
_UNDERFLOW = -1  # the bin of latencies below LATENCY_FLOOR
_DIRECT = 1e299  # latencies below it (>= LATENCY_FLOOR) are binned inline: a finite ratio


def _integers(state: Mapping[str, Any], key: str, columns: int) -> np.ndarray:
    """``state[key]`` as an ``int64`` array :math:`(k, \\text{columns})`."""
    values = np.asarray(state[key])
    if values.size == 0:
        values = values.reshape(0, columns)
    if values.ndim != 2 or values.shape[1] != columns or (values.size and
                                                          values.dtype.kind not in "iu"):
        raise ValueError(f"{key} must be an integer array of shape (k, {columns}), got dtype "
                         f"{values.dtype} and shape {values.shape}")
    return values.astype(np.int64)


def _missing(state: Mapping[str, Any], keys: Tuple[str, ...], what: str) -> None:
    missing = [key for key in keys if key not in state]
    if missing:
        raise ValueError(f"{what} state lacks the entries {missing}")


class RunningClassCounts:
    r"""Counts of a run's labels and predictions from which
    :func:`~torch_geometric_stream.evaluation.class_metrics` follows exactly.

    Kept: the count of each (label, prediction) pair seen (a dict, so
    :math:`O(c^2)` at most and not :math:`O(\text{largest id}^2)`), the count of
    each label with the prequential majority class (the most frequent label so
    far, the current one counted, the smallest id on ties: MOA's
    :math:`\kappa_m` reference) and the previous label (class 0 before the first:
    the :math:`\kappa_t` reference), and how often each reference was right.
    """

    _KEYS = ("pairs", "majority", "majority_hits", "previous", "no_change_hits")

    def __init__(self) -> None:
        self._pairs: Dict[Tuple[int, int], int] = {}
        self._support: Dict[int, int] = {}
        self._majority = 0
        self._majority_hits = 0
        self._previous = 0
        self._no_change_hits = 0

    def update(self, label: int, prediction: int) -> None:
        """Count one sample.

        Args:
            label (int): its true class.
            prediction (int): the class predicted.
        """
        pairs, support, majority = self._pairs, self._support, self._majority
        pair = (label, prediction)
        pairs[pair] = pairs.get(pair, 0) + 1
        count = support.get(label, 0) + 1
        support[label] = count
        if label != majority:
            leader = support.get(majority, 0)
            if count > leader or (count == leader and label < majority):
                self._majority = majority = label
        self._majority_hits += majority == label
        self._no_change_hits += self._previous == label
        self._previous = label

    @property
    def samples(self) -> int:
        """Number of samples counted."""
        return sum(self._support.values())

    @property
    def largest(self) -> int:
        """The largest class id counted, label or prediction (-1 before the first sample)."""
        return max((max(pair) for pair in self._pairs), default=-1)

    @property
    def hits(self) -> int:
        """Number of samples whose prediction was their label."""
        return sum(count for (label, prediction), count in self._pairs.items()
                   if label == prediction)

    def label_count(self, label: int) -> int:
        """Number of samples of true class ``label`` counted.

        Args:
            label (int): the class id.
        """
        return self._support.get(label, 0)

    def metrics(self, num_classes: Optional[int] = None) -> Dict[str, Any]:
        """:func:`~torch_geometric_stream.evaluation.class_metrics` of the samples
        counted.

        Args:
            num_classes (int, optional): as for
                :func:`~torch_geometric_stream.evaluation.class_metrics`.
                (default: ``None``)

        Raises:
            ValueError: before the first sample, for a negative class id, or one
                not below ``num_classes``.
            TypeError: a ``num_classes`` that is no integer.
        """
        if not self._pairs:
            raise ValueError("no sample recorded yet")
        for name, index in (("labels", 0), ("predictions", 1)):
            smallest = min(pair[index] for pair in self._pairs)
            if smallest < 0:
                raise ValueError(f"{name} must hold class ids >= 0, got {smallest}")
        num_classes = class_count(self.largest, num_classes)
        support, hits, predicted = ([0] * num_classes for _ in range(3))
        for (label, prediction), count in self._pairs.items():
            support[label] += count
            predicted[prediction] += count
            if label == prediction:
                hits[label] += count
        confusion = None
        if num_classes <= MAX_CONFUSION_CLASSES:
            confusion = [[self._pairs.get((label, prediction), 0)
                          for prediction in range(num_classes)] for label in range(num_classes)]
        return class_metrics_from_counts(support, hits, predicted,
                                         majority_hits=self._majority_hits,
                                         no_change_hits=self._no_change_hits,
                                         confusion=confusion)

    def state_dict(self) -> Dict[str, Any]:
        """``pairs``: ``int64`` :math:`(k, 3)` rows ``label, prediction, count``; the
        majority class, the previous label and each reference's hits (ints)."""
        pairs = np.array([[*pair, count] for pair, count in self._pairs.items()],
                         dtype=np.int64).reshape(-1, 3)
        return {"pairs": pairs, "majority": self._majority,
                "majority_hits": self._majority_hits, "previous": self._previous,
                "no_change_hits": self._no_change_hits}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Replace the counts by :meth:`state_dict`'s (checked before any is set).

        Args:
            state (Mapping): a result of :meth:`state_dict`.

        Raises:
            ValueError: an entry is missing, or the counts are no counts of class
                ids: a reference right more often than there are samples, a
                majority class that is not the most frequent label (the smallest
                id on ties), a previous label never counted.
            TypeError: the majority class, the previous label or a reference's
                hits is no integer (a float is not truncated).
        """
        _missing(state, self._KEYS, "class count")
        rows = _integers(state, "pairs", 3)
        if (rows[:, 2] <= 0).any() or len({(a, b) for a, b, _ in rows.tolist()}) != len(rows):
            raise ValueError("pairs must hold each (label, prediction) once with a count > 0")
        if (rows[:, :2] < 0).any():  # class ids: metrics() would refuse them after the load
            raise ValueError(f"pairs must hold class ids >= 0, got the pair "
                             f"{rows[(rows[:, :2] < 0).any(axis=1)][0, :2].tolist()}")
        majority, majority_hits, previous, no_change_hits = (
            check_positive_int(state[key], f"the class counts' {key}", minimum=0)
            for key in self._KEYS[1:])
        pairs: Dict[Tuple[int, int], int] = {}
        support: Dict[int, int] = {}
        for label, prediction, count in rows.tolist():  # Python ints: no int64 sum to wrap
            pairs[label, prediction] = count
            support[label] = support.get(label, 0) + count
        samples = sum(support.values())
        # the smallest of the most frequent labels, and a label counted; class 0 before the first
        leader = min(support, key=lambda label: (-support[label], label), default=0)
        previous_counted = previous in support if support else previous == 0
        if majority != leader or not previous_counted:
            raise ValueError(f"the class counts' majority class {majority} and previous label "
                             f"{previous} are not those of the labels counted: the majority "
                             f"is {leader}, the previous one of {sorted(support) or [0]}")
        if max(majority_hits, no_change_hits) > samples:
            raise ValueError(f"the class counts' majority_hits {majority_hits} and "
                             f"no_change_hits {no_change_hits} must be at most the "
                             f"{samples} samples counted")
        self._pairs, self._support = pairs, support
        (self._majority, self._majority_hits, self._previous,
         self._no_change_hits) = majority, majority_hits, previous, no_change_hits


class RunningAccuracy:
    r"""Samples and hits so far, and the cumulative hits at every ``stride``-th
    sample: exact running accuracies at :math:`\text{stride}, 2\,\text{stride},
    \dots`, at most ``max_points`` of them.

    The stride starts at 1 and doubles (every other point dropped) when a point
    is due and all ``max_points`` are taken, so that after :math:`T` samples the
    points are at most :math:`2T / \text{max\_points}` apart once the stride
    is above 1 (it is 1 while :math:`T \leq \text{max\_points}`).

    Args:
        max_points (int, optional): even, at least 2. (default: :obj:`4096`)
    """

    _KEYS = ("samples", "correct", "stride", "points")

    def __init__(self, max_points: int = CURVE_POINTS) -> None:
        max_points = check_positive_int(max_points, "max_points", minimum=2)
        if max_points % 2:
            raise ValueError(f"max_points must be even, got {max_points}")
        self.max_points = max_points
        self.samples = 0
        self.correct = 0
        self.stride = 1
        self._points = array("q")  # cumulative hits after stride, 2 stride, ... samples

    def update(self, correct: bool) -> None:
        """Count one sample.

        Args:
            correct (bool): whether its prediction was right.
        """
        self.samples += 1
        self.correct += correct
        if self.samples % self.stride:
            return
        if len(self._points) == self.max_points:
            # the due point is the (max_points + 1)-th, an odd multiple of the
            # stride (max_points is even): not one of the doubled stride
            self._points = self._points[1::2]
            self.stride *= 2
            return
        self._points.append(self.correct)

    @staticmethod
    def stride_after(samples: int, max_points: int) -> int:
        r"""The stride after ``samples`` updates: the smallest power of 2 that keeps
        at most ``max_points`` positions.

        Args:
            samples (int): the updates (:math:`\geq 0`).
            max_points (int): as for :class:`RunningAccuracy`.
        """
        stride = 1
        while samples // stride > max_points:
            stride *= 2
        return stride

    def _hits_at(self, samples: int) -> int:
        """Cumulative hits after ``samples`` samples, 0 or a kept multiple of the stride."""
        return self._points[samples // self.stride - 1] if samples else 0

    def points(self) -> Tuple[np.ndarray, np.ndarray]:
        """Every position known exactly: ``(samples seen, hits after them)``, both
        ``int64`` :math:`(P,)`, the multiples of the stride and the current count."""
        positions = np.arange(1, len(self._points) + 1, dtype=np.int64) * self.stride
        hits = np.frombuffer(self._points, dtype=np.int64).copy() if self._points else \
            np.zeros(0, dtype=np.int64)
        if positions.size and positions[-1] == self.samples:
            return positions, hits
        return np.append(positions, self.samples), np.append(hits, self.correct)

    def tail(self, fraction: float) -> Tuple[float, int]:
        r"""Accuracy over the last :math:`m` samples and :math:`m`, from the kept
        position nearest to :math:`T - n` (:math:`n = \lceil p T \rceil`,
        :func:`~torch_geometric_stream.evaluation.metrics.tail_size`; ties to the
        longer span): the exact tail accuracy when :math:`m = n` (always while the
        stride is 1).

        With :math:`|m - n| \leq \text{stride} / 2 \leq T / \text{max\_points}`
        (where :math:`n \geq \text{stride} / 2`), it differs from the exact one
        by at most :math:`|m - n| / \min(m, n) \leq 1 / (p \cdot
        \text{max\_points} - 1)`: for the default 4096 points, 0.0049 for the last
        5 %, 0.0025 for 10 % and 0.0012 for 20 %.

        Args:
            fraction (float): the fraction :math:`p` of the stream, in :math:`(0, 1]`.

        Raises:
            ValueError: before the first sample, or a ``fraction`` outside
                :math:`(0, 1]` (as :func:`~torch_geometric_stream.evaluation.tail_accuracy`).
            TypeError: a ``fraction`` that is not a number.
        """
        fraction = check_unit_interval(fraction, "fraction")
        if not self.samples:
            raise ValueError("no sample recorded yet")
        span = _kept_span(fraction, self.samples, self.stride)
        return (self.correct - self._hits_at(self.samples - span)) / span, span

    def curve(self, num_points: int) -> Tuple[np.ndarray, np.ndarray]:
        """``(counts, accuracy)`` as
        :func:`~torch_geometric_stream.evaluation.accuracy_curve` gives them, each
        position moved to the nearest kept one (repeats dropped): exact running
        accuracies, the last at :math:`T`; the positions of
        :func:`~torch_geometric_stream.evaluation.accuracy_curve` while the stride
        is 1.

        Args:
            num_points (int): the most points to give.

        Raises:
            ValueError: before the first sample.
        """
        if not self.samples:
            raise ValueError("no sample recorded yet")
        return kept_curve(*self.points(), num_points)

    def state_dict(self) -> Dict[str, Any]:
        """``samples``, ``correct``, ``stride`` (ints) and ``points``: the kept
        cumulative hits, ``int64`` :math:`(P,)`."""
        return {"samples": self.samples, "correct": self.correct, "stride": self.stride,
                "points": np.frombuffer(self._points, dtype=np.int64).copy()
                if self._points else np.zeros(0, dtype=np.int64)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Replace the counts by :meth:`state_dict`'s (checked before any is set).

        Args:
            state (Mapping): a result of :meth:`state_dict`.

        Raises:
            ValueError: an entry is missing, or the counts are inconsistent: more
                right than samples, a stride other than that of as many samples,
                points not one per stride, or cumulative hits that fall or grow by
                more than the samples between them.
            TypeError: ``samples``, ``correct`` or ``stride`` is no integer (a float
                is not truncated).
        """
        _missing(state, self._KEYS, "running accuracy")
        samples, correct, stride = (
            check_positive_int(state[key], f"the running accuracy's {key}", minimum=minimum)
            for key, minimum in zip(self._KEYS[:3], (0, 0, 1)))
        points = _integers({"points": np.asarray(state["points"]).reshape(-1, 1)}, "points", 1)
        if not (correct <= samples and stride == self.stride_after(samples, self.max_points)
                and len(points) == samples // stride):
            raise ValueError(f"inconsistent running accuracy state: {samples} samples, "
                             f"{correct} right, stride {stride}, {len(points)} points (at "
                             f"most {self.max_points})")
        hits = [0, *points[:, 0].tolist(), correct]
        spans = [stride] * len(points) + [samples - len(points) * stride]
        steps = [(later - earlier, span) for earlier, later, span in zip(hits, hits[1:], spans)]
        if any(not 0 <= step <= span for step, span in steps):
            raise ValueError(f"the running accuracy's points must be cumulative hits after "
                             f"every {stride} samples, rising by at most {stride} from 0 up to "
                             f"the {correct} right, got {hits[1:-1]}")
        self.samples, self.correct, self.stride = samples, correct, stride
        self._points = array("q", points[:, 0].tolist())


def kept_curve(positions: np.ndarray, hits: np.ndarray,
               num_points: int) -> Tuple[np.ndarray, np.ndarray]:
    """``(counts, accuracy)`` of :meth:`RunningAccuracy.curve`: the positions of
    :func:`~torch_geometric_stream.evaluation.accuracy_curve`, each moved to the
    nearest kept one (ties to the earlier), repeats dropped.

    Args:
        positions, hits (np.ndarray): :meth:`RunningAccuracy.points`, each
            :math:`(P,)`.
        num_points (int): the most points to give.
    """
    targets = curve_positions(int(positions[-1]), num_points)
    after = np.searchsorted(positions, targets).clip(max=positions.size - 1)
    before = (after - 1).clip(min=0)
    nearer = np.where(np.abs(positions[before] - targets) <= np.abs(positions[after] - targets),
                      before, after)
    chosen = np.unique(nearer)
    return positions[chosen], hits[chosen] / positions[chosen]


def _kept_span(fraction: float, samples: int, stride: int) -> int:
    """How many last of ``samples`` samples the tail ``fraction`` covers from the
    multiple of ``stride`` (or 0) nearest to the start of its
    :func:`~torch_geometric_stream.evaluation.metrics.tail_size` (ties to the longer span)."""
    target = samples - tail_size(fraction, samples)
    below = target - target % stride  # a kept position, or 0
    above = below + stride
    return samples - (above if (above < samples and above - target < target - below)
                      else below)


def kept_tail_span(fraction: float, samples: int, max_points: int = CURVE_POINTS) -> int:
    r"""The ``tail_samples`` of a bounded history for the last ``fraction`` of a
    stream: the span of :meth:`RunningAccuracy.tail` after ``samples`` updates,
    whose stride is then the smallest power of 2 that keeps at most
    ``max_points`` positions
    (:func:`~torch_geometric_stream.evaluation.metrics.tail_size` while
    ``samples`` :math:`\leq` ``max_points``).

    Args:
        fraction (float): the fraction of the stream, in :math:`(0, 1]`.
        samples (int): the stream's length (:math:`\geq 1`).
        max_points (int, optional): as for :class:`RunningAccuracy` (:math:`\geq 2`).
            (default: :data:`CURVE_POINTS`)

    Raises:
        ValueError: ``fraction`` outside :math:`(0, 1]`, ``samples`` below 1 or
            ``max_points`` below 2.
        TypeError: a ``fraction`` that is not a number, or ``samples`` or
            ``max_points`` not an integer.
    """
    fraction = check_unit_interval(fraction, "fraction")
    samples = check_positive_int(samples, "samples")
    max_points = check_positive_int(max_points, "max_points", minimum=2)
    return _kept_span(fraction, samples, RunningAccuracy.stride_after(samples, max_points))


def approximate_tails(metrics: Mapping[str, Any]) -> List[str]:
    """The tail accuracy keys (``accuracy_last_20``, ...) of ``metrics`` that
    are not exact: those whose
    ``tail_samples`` (a bounded history's) differ from the tail's size; none for a
    full history, which has no ``tail_samples``.

    Args:
        metrics (Mapping[str, Any]): a result's ``metrics`` or a run's JSON record.
    """
    spans = metrics.get("tail_samples") or {}
    return [key for key, fraction in TAIL_FRACTIONS.items()
            if key in spans and spans[key] != tail_size(fraction, metrics["n_samples"])]


def _latency_bin(seconds: float) -> int:
    """The :class:`LatencyHistogram` bin of a latency of ``seconds`` (finite, >= 0)."""
    if seconds < LATENCY_FLOOR:
        return _UNDERFLOW
    ratio = seconds / LATENCY_FLOOR  # inf above 1.8e299 s: then apart
    scale = math.log(ratio) if ratio < math.inf else math.log(seconds) - math.log(LATENCY_FLOOR)
    return math.floor(scale / _LOG_RATIO)


def _bin_middle(key: int) -> float:
    """The geometric middle of :class:`LatencyHistogram` bin ``key`` (0 for the
    lowest bin; ``inf`` beyond ``float``'s range, for the bin of a latency near it)."""
    if key == _UNDERFLOW:
        return 0.0
    try:
        return LATENCY_FLOOR * LATENCY_RATIO ** (key + 0.5)
    except OverflowError:
        return math.inf


class LatencyHistogram:
    r"""Latencies counted in log-spaced bins, for their quantiles.

    Bin :math:`k \geq 0` holds :math:`[f r^k, f r^{k+1})` with
    :math:`f` = :data:`LATENCY_FLOOR` and :math:`r` = :data:`LATENCY_RATIO`; one
    more bin holds the latencies below :math:`f`. Only the bins hit are kept
    (a dict): :math:`\log_r(\max / \min)` at most, 1620 for latencies from
    1 µs to 10 s.
    """

    _KEYS = ("bins", "minimum", "maximum")

    def __init__(self) -> None:
        self._bins: Dict[int, int] = {}
        self._count = 0
        self._minimum = math.inf
        self._maximum = -math.inf

    def update(self, seconds: float) -> None:
        r"""Count one latency.

        Args:
            seconds (float): the latency, a finite number :math:`\geq 0`.

        Raises:
            ValueError: ``seconds`` is not a finite number :math:`\geq 0` (nothing
                is counted).
        """
        seconds = float(seconds)
        if not 0.0 <= seconds < math.inf:
            raise ValueError(f"seconds must be a finite number >= 0, got {seconds}")
        key = (math.floor(math.log(seconds / LATENCY_FLOOR) / _LOG_RATIO)
               if LATENCY_FLOOR <= seconds < _DIRECT else _latency_bin(seconds))
        self._bins[key] = self._bins.get(key, 0) + 1
        self._count += 1
        if seconds < self._minimum:
            self._minimum = seconds
        if seconds > self._maximum:
            self._maximum = seconds

    @property
    def count(self) -> int:
        """Number of latencies counted."""
        return self._count

    def _order_statistic(self, rank: int, bins: list) -> float:
        """Estimate of the ``rank``-th smallest latency (0-based): its bin's geometric
        middle (0 for the lowest bin), clamped to the smallest and largest seen."""
        seen = 0
        for key, count in bins:
            seen += count
            if seen > rank:
                return min(max(_bin_middle(key), self._minimum), self._maximum)
        raise AssertionError("rank beyond the count")

    def quantile(self, percent: float) -> float:
        r"""The ``percent``-th percentile as :func:`numpy.percentile` (linear
        interpolation between order statistics) would give it, from the bins:
        within :math:`(\sqrt{r} - 1)\,x + f` of the exact :math:`x`, i.e. 0.5 %
        plus 1 ns (each order statistic is within its bin, or below :math:`f`).

        Args:
            percent (float): the percentile, in :math:`[0, 100]`.

        Raises:
            ValueError: before the first latency, or a ``percent`` outside
                :math:`[0, 100]` (as :func:`numpy.percentile`).
            TypeError: a ``percent`` that is not a number.
        """
        percent = check_real(percent, "percent")
        if not 0.0 <= percent <= 100.0:
            raise ValueError(f"percent must be in [0, 100], got {percent}")
        if not self._count:
            raise ValueError("no sample recorded yet")
        bins = sorted(self._bins.items())
        position = (self._count - 1) * percent / 100
        rank = math.floor(position)
        low = self._order_statistic(rank, bins)
        high = self._order_statistic(min(rank + 1, self._count - 1), bins)
        return low + (position - rank) * (high - low)

    def state_dict(self) -> Dict[str, Any]:
        """``bins``: ``int64`` :math:`(k, 2)` rows ``bin, count``; ``minimum`` and
        ``maximum`` latency (floats, :math:`\\pm\\infty` before the first)."""
        return {"bins": np.array(sorted(self._bins.items()), dtype=np.int64).reshape(-1, 2),
                "minimum": self._minimum, "maximum": self._maximum}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Replace the counts by :meth:`state_dict`'s (checked before any is set).

        Args:
            state (Mapping): a result of :meth:`state_dict`.

        Raises:
            ValueError: an entry is missing, or the bins or the range are no
                histogram's: the smallest and the largest bin must be those of
                ``minimum`` and ``maximum`` (``inf`` and ``-inf`` without bins).
            TypeError: ``minimum`` or ``maximum`` is not a number.
        """
        _missing(state, self._KEYS, "latency")
        rows = _integers(state, "bins", 2)
        if (rows[:, 1] <= 0).any() or (rows[:, 0] < _UNDERFLOW).any() or \
                len(set(rows[:, 0].tolist())) != len(rows):
            raise ValueError("bins must hold each bin >= -1 once with a count > 0")
        minimum = check_real(state["minimum"], "the latency minimum")
        maximum = check_real(state["maximum"], "the latency maximum")
        if not len(rows):
            if (minimum, maximum) != (math.inf, -math.inf):
                raise ValueError(f"latency range [{minimum}, {maximum}] without bins: a "
                                 f"histogram of no latency has [inf, -inf]")
        elif not 0 <= minimum <= maximum < math.inf:
            raise ValueError(f"latency range [{minimum}, {maximum}] is no range of latencies")
        elif (int(rows[:, 0].min()), int(rows[:, 0].max())) != (_latency_bin(minimum),
                                                                _latency_bin(maximum)):
            raise ValueError(f"the latency bins [{int(rows[:, 0].min())}, "
                             f"{int(rows[:, 0].max())}] are not those of the range "
                             f"[{minimum}, {maximum}]: [{_latency_bin(minimum)}, "
                             f"{_latency_bin(maximum)}]")
        self._bins = dict(rows.tolist())
        self._count = sum(self._bins.values())  # Python ints: no int64 sum to wrap
        self._minimum, self._maximum = minimum, maximum


class BoundedStreamMetrics:
    """:class:`~torch_geometric_stream.evaluation.StreamMetrics` in fixed memory:
    a :class:`RunningAccuracy` and a :class:`LatencyHistogram`.

    Args:
        curve_points (int, optional): ``max_points`` of the :class:`RunningAccuracy`.
            (default: :obj:`4096`)
    """

    def __init__(self, curve_points: int = CURVE_POINTS) -> None:
        self.accuracy = RunningAccuracy(curve_points)
        self.latency = LatencyHistogram()

    def update(self, correct: bool, seconds: float) -> None:
        """Record one sample: whether it was predicted right and how long it took.

        Args:
            correct (bool): whether the sample was predicted right.
            seconds (float): how long it took.

        Raises:
            ValueError: ``seconds`` is not a finite number :math:`\\geq 0` (nothing
                is recorded).
        """
        correct = bool(correct)  # read before anything changes
        self.latency.update(seconds)  # checks seconds first: a refused one counts nothing
        self.accuracy.update(correct)

    @property
    def n_samples(self) -> int:
        """Number of recorded samples."""
        return self.accuracy.samples

    @property
    def running_accuracy(self) -> float:
        """Accuracy over every sample so far (NaN before the first one)."""
        return self.accuracy.correct / self.n_samples if self.n_samples else math.nan

    def summary(self) -> Dict[str, Any]:
        """The keys of :meth:`StreamMetrics.summary
        <torch_geometric_stream.evaluation.StreamMetrics.summary>`, ``accuracy``
        exact, the tails from :meth:`RunningAccuracy.tail` and the latencies from
        :meth:`LatencyHistogram.quantile`, plus ``tail_samples``: how many of the
        last samples each tail accuracy covers.

        Raises:
            ValueError: before the first sample.
        """
        if not self.n_samples:
            raise ValueError("no sample recorded yet")
        summary: Dict[str, Any] = {"accuracy": self.running_accuracy}
        spans = {}
        for key, fraction in TAIL_FRACTIONS.items():
            summary[key], spans[key] = self.accuracy.tail(fraction)
        summary["ms_per_sample_median"] = self.latency.quantile(50) * 1e3
        summary["ms_per_sample_p95"] = self.latency.quantile(95) * 1e3
        summary["n_samples"] = self.n_samples
        summary["tail_samples"] = spans
        return summary

    def state_dict(self) -> Dict[str, Any]:
        """``accuracy`` and ``latency``: their ``state_dict``."""
        return {"accuracy": self.accuracy.state_dict(), "latency": self.latency.state_dict()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Replace both by :meth:`state_dict`'s (both checked before either is set).

        Args:
            state (Mapping[str, Any]): what :meth:`state_dict` returned.

        Raises:
            ValueError: an entry missing or refused, or counts of samples and
                latencies that differ.
        """
        _missing(state, ("accuracy", "latency"), "metrics")
        accuracy, latency = RunningAccuracy(self.accuracy.max_points), LatencyHistogram()
        accuracy.load_state_dict(state["accuracy"])
        latency.load_state_dict(state["latency"])
        if latency.count != accuracy.samples:
            raise ValueError(f"the state counts {accuracy.samples} samples but "
                             f"{latency.count} latencies")
        self.accuracy, self.latency = accuracy, latency

    def __repr__(self) -> str:
        return (f"BoundedStreamMetrics(n_samples={self.n_samples}, "
                f"accuracy={self.running_accuracy:.4f})")
