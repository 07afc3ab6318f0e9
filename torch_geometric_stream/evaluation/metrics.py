r"""Test-then-train accuracy and latency of a stream run.

Every sample counts, labeled or not.  Besides the mean over the whole stream,
the paper reports the mean over the last 20 %, 10 % and 5 % of it: the last
:math:`\lceil p \cdot T \rceil` samples.

Accuracy alone flatters imbalanced streams (Shopper is 84.5 % one class), so
:func:`class_metrics` adds the confusion matrix, balanced accuracy and the
chance-corrected statistics stream-learning tools report (MOA, CapyMOA):
Cohen's :math:`\kappa`, :math:`\kappa_m` against the majority-class
classifier and :math:`\kappa_t` against the no-change classifier.
"""
from __future__ import annotations

import math
import operator
from array import array
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from torch_geometric_stream.evaluation.columns import to_numpy
from torch_geometric_stream.validation import check_positive_int, check_unit_interval

__all__ = ["StreamMetrics", "tail_accuracy", "tail_size", "accuracy_curve", "curve_positions",
           "class_count", "class_metrics", "class_metrics_from_counts"]

#: Most classes for which :func:`class_metrics` returns the confusion matrix.
MAX_CONFUSION_CLASSES = 100

TAIL_FRACTIONS = {"accuracy_last_20": 0.20, "accuracy_last_10": 0.10, "accuracy_last_5": 0.05}


def _as_correct(correct: Any) -> np.ndarray:
    correct = np.asarray(correct, dtype=bool)
    if correct.ndim != 1 or correct.size == 0:
        raise ValueError(f"correct must be a non-empty 1-D sequence, got shape {correct.shape}")
    return correct


def tail_accuracy(correct: Any, fraction: float) -> float:
    r"""Mean of the last :math:`\lceil p \cdot T \rceil` entries of ``correct``.

    Args:
        correct (array-like): whether each prediction was right, a non-empty
            :math:`(T,)`.
        fraction (float): the tail's share :math:`p` of the stream, in
            :math:`(0, 1]`.

    Raises:
        ValueError: ``correct`` empty or not 1-D, or ``fraction`` outside
            :math:`(0, 1]`.
    """
    correct = _as_correct(correct)
    fraction = check_unit_interval(fraction, "fraction")
    return float(correct[-tail_size(fraction, correct.size):].mean())


def tail_size(fraction: float, samples: int) -> int:
    r"""How many of ``samples`` entries the last ``fraction`` of them is:
    :math:`\max(1, \lceil p \cdot T \rceil)`.

    Args:
        fraction (float): the fraction :math:`p`.
        samples (int): the number of entries :math:`T`.
    """
    # The tolerance keeps e.g. ceil(0.1 * 30) at 3 despite 0.1 * 30 = 3.0000000000000004.
    return max(1, math.ceil(fraction * samples - 1e-9))


def accuracy_curve(correct: Any, num_points: int = 200) -> Tuple[np.ndarray, np.ndarray]:
    r"""Running accuracy at (at most) ``num_points`` evenly spaced stream positions.

    Args:
        correct (Tensor or array-like): per-sample correctness, shape :math:`(T,)`.
        num_points (int, optional): how many points of the curve to return. (default: :obj:`200`)

    Returns:
        ``(counts, accuracy)``, both of shape :math:`(P,)` with
        :math:`P \leq \min(\text{num\_points}, T)`: ``counts[i]`` samples seen
        (the last one is :math:`T`) and the running accuracy after them.
    """
    correct = _as_correct(correct)
    counts = curve_positions(correct.size, num_points)
    return counts, np.cumsum(correct)[counts - 1] / counts


def curve_positions(samples: int, num_points: int) -> np.ndarray:
    """The sample counts :math:`(P,)` at which :func:`accuracy_curve` reads the
    running accuracy: ``num_points`` evenly spaced in :math:`[1, T]`, rounded,
    repeats dropped; the last is always :math:`T` (the one point of
    ``num_points=1``).

    Args:
        samples (int): the number of samples :math:`T`.
        num_points (int): the number of points wanted (at most :math:`T` are
            kept).

    Raises:
        TypeError, ValueError: ``num_points`` is not an integer >= 1.
    """
    num_points = check_positive_int(num_points, "num_points")
    if num_points == 1 and samples:  # linspace(1, T, 1) is [1], the first sample
        return np.array([samples], dtype=np.int64)
    return np.unique(np.linspace(1, samples, min(num_points, samples)).round().astype(np.int64))


def _as_class_ids(values: Any, name: str) -> np.ndarray:
    ids = np.asarray(values)
    if ids.ndim != 1 or (ids.size and ids.dtype.kind not in "iu"):
        raise TypeError(f"{name} must be a 1-D sequence of integer class ids, got dtype "
                        f"{ids.dtype} and shape {ids.shape}")
    ids = ids.astype(np.int64, copy=False)
    if ids.size and ids.min() < 0:
        raise ValueError(f"{name} must hold class ids >= 0, got {int(ids.min())}")
    return ids


def _kappa(observed: float, chance: float) -> Optional[float]:
    """:math:`(p_o - p_c) / (1 - p_c)`; ``None`` where undefined (:math:`p_c = 1`)."""
    return None if chance >= 1.0 else (observed - chance) / (1.0 - chance)


def _chance_agreement(support: Sequence[int], predicted: Sequence[int]) -> float:
    r"""Chance agreement :math:`p_c = \sum_j n_j \hat n_j / T^2` of the true and the
    predicted class counts :math:`(c,)`, :math:`T` samples; in Python integers: an
    ``int64`` dot product overflows once :math:`T > 3.04 \cdot 10^9`."""
    support, predicted = list(map(int, support)), list(map(int, predicted))
    return sum(map(operator.mul, support, predicted)) / sum(support) ** 2


def _prequential_majority(labels: np.ndarray, num_classes: int) -> np.ndarray:
    r"""For every position, the most frequent true label up to and including
    it (smallest id on ties) :math:`(T,)`: the reference of MOA's
    :math:`\kappa_m`, which counts the current label before asking for the
    majority. :math:`O(T + c)`: a count only grows for the label just seen, so
    only that label can take the majority over. The labels are read, and the
    majority written, as machine integers: no Python list of :math:`T` entries."""
    counts = [0] * num_classes
    majority, current = array("q"), 0
    for label in np.ascontiguousarray(labels, dtype=np.int64).data:  # a memoryview
        counts[label] += 1
        if counts[label] > counts[current] or (counts[label] == counts[current]
                                               and label < current):
            current = label
        majority.append(current)
    return np.frombuffer(majority, dtype=np.int64)


def class_count(largest: int, num_classes: Optional[int] = None) -> int:
    """The :math:`c` that :func:`class_metrics` sizes its matrix and recall by.

    Args:
        largest (int): the largest class id seen.
        num_classes (int, optional): the number of classes, if given; else
            :math:`c` is 1 + ``largest``. (default: ``None``)

    Raises:
        TypeError, ValueError: ``num_classes`` is not an integer >= 1, or not above
            ``largest``.
    """
    if num_classes is None:
        return largest + 1
    num_classes = check_positive_int(num_classes, "num_classes")
    if largest >= num_classes:
        raise ValueError(f"class id {largest} is outside [0, num_classes={num_classes}): "
                         f"pass the number of classes of the stream")
    return num_classes


def class_metrics(labels: Any, predictions: Any,
                  num_classes: Optional[int] = None) -> Dict[str, Any]:
    r"""Class-wise and chance-corrected agreement of a run's predictions.

    Args:
        labels (Tensor or array-like): true class ids :math:`(T,)`.
        predictions (Tensor or array-like): predicted class ids :math:`(T,)`.
        num_classes (int, optional): the number of classes :math:`c` of the stream, where known
            (e.g. ``learner.num_classes``): the matrix and the recall then cover
            every class, seen or not; ``None``: :math:`c` = 1 + the largest id in
            either (the classes above it left out). (default: :obj:`None`)

    Returns:
        ``confusion_matrix``: :math:`(c, c)` nested lists indexed by class id,
        entry ``[i][j]`` the samples of class ``i`` predicted as ``j`` (a class
        never seen and never predicted has a row and a column of zeros),
        ``None`` above :data:`MAX_CONFUSION_CLASSES` classes (a run record would
        hold :math:`c^2` numbers); ``recall_per_class``: :math:`(c,)` indexed by
        class id, ``None`` for classes absent from ``labels``; ``balanced_accuracy``: mean recall
        over the classes present; ``kappa``: Cohen's :math:`\kappa` against
        chance agreement of the two marginals; ``kappa_m``: against the
        accuracy of the prequential majority-class classifier (the most
        frequent true label so far, the current one counted); ``kappa_t``:
        against the no-change classifier (predicts the previous true label,
        class 0 at the start). The three kappas follow MOA and equal
        CapyMOA's ``ClassificationEvaluator`` on the same predictions.
        A :math:`\kappa` whose reference classifier is always right is ``None``.

    Raises:
        ValueError: empty or unequal lengths, negative ids, or ids not below
            ``num_classes``.
        TypeError: non-integer ids, or a ``num_classes`` that is no integer.
    """
    labels = _as_class_ids(labels, "labels")
    predictions = _as_class_ids(predictions, "predictions")
    if labels.size == 0 or labels.size != predictions.size:
        raise ValueError(f"labels and predictions must be non-empty and of one length, got "
                         f"{labels.size} and {predictions.size}")
    num_classes = class_count(int(max(labels.max(), predictions.max())), num_classes)
    right = labels == predictions
    # each reference's hits at once: its (T,) predictions are freed before the next one
    majority_hits = int(np.count_nonzero(_prequential_majority(labels, num_classes) == labels))
    no_change_hits = int(np.count_nonzero(np.concatenate([[0], labels[:-1]]) == labels))
    confusion = None
    if num_classes <= MAX_CONFUSION_CLASSES:
        confusion = np.bincount(labels * num_classes + predictions, minlength=num_classes ** 2
                                ).reshape(num_classes, num_classes).tolist()
    return class_metrics_from_counts(
        np.bincount(labels, minlength=num_classes).tolist(),
        np.bincount(labels[right], minlength=num_classes).tolist(),
        np.bincount(predictions, minlength=num_classes).tolist(),
        majority_hits=majority_hits, no_change_hits=no_change_hits, confusion=confusion)


def class_metrics_from_counts(support: List[int], hits: List[int], predicted: List[int], *,
                              majority_hits: int, no_change_hits: int,
                              confusion: Optional[List[List[int]]]) -> Dict[str, Any]:
    r""":func:`class_metrics` from the counts of a run of :math:`T` samples and
    :math:`c` classes, which a run can keep as it goes (memory :math:`O(c^2)`, not
    :math:`O(T)`): the same numbers, computed the same way, from either.

    Args:
        support (list[int]): samples of each class :math:`(c,)`, Python ints summing to :math:`T`.
        hits (list[int]): samples of each class predicted right :math:`(c,)`.
        predicted (list[int]): samples predicted as each class :math:`(c,)`.
        majority_hits (int): samples the prequential majority-class classifier gets right.
        no_change_hits (int): samples the no-change classifier gets right.
        confusion (list[list[int]] or None): the :math:`(c, c)` confusion matrix as nested lists,
            or ``None``.
    """
    samples = sum(support)
    recall = [h / n if n else None for h, n in zip(hits, support)]
    # a mean of T booleans (float64 sums of ones, exact below 2**53) equals count / T
    observed = sum(hits) / samples
    return {
        "confusion_matrix": confusion,
        "recall_per_class": recall,
        "balanced_accuracy": float(np.mean([r for r in recall if r is not None])),
        "kappa": _kappa(observed, _chance_agreement(support, predicted)),
        "kappa_m": _kappa(observed, majority_hits / samples),
        "kappa_t": _kappa(observed, no_change_hits / samples),
    }


class StreamMetrics:
    """Accumulates per-sample correctness and latency of a test-then-train run.

    Both are kept as :class:`array.array` (a byte and a ``float64`` per sample,
    :mod:`~torch_geometric_stream.evaluation.columns`), not Python lists.

    Example::

        metrics = StreamMetrics()
        metrics.update(correct=True, seconds=0.004)
        metrics.running_accuracy  # 1.0
        metrics.summary()
    """

    def __init__(self) -> None:
        self._correct = array("B")  # 0 or 1
        self._seconds = array("d")
        self._num_correct = 0

    def update(self, correct: bool, seconds: float) -> None:
        """Record one sample: whether it was predicted right and how long it took.

        Args:
            correct (bool): whether the sample was predicted right.
            seconds (float): how long it took.
        """
        correct, seconds = bool(correct), float(seconds)  # both read before anything changes
        self._correct.append(correct)
        self._seconds.append(seconds)
        self._num_correct += correct

    @property
    def n_samples(self) -> int:
        """Number of recorded samples."""
        return len(self._correct)

    @property
    def running_accuracy(self) -> float:
        """Accuracy over every sample so far (NaN before the first one)."""
        return self._num_correct / self.n_samples if self._correct else math.nan

    @property
    def correct(self) -> np.ndarray:
        """Per-sample correctness, ``bool`` :math:`(T,)`."""
        return to_numpy(self._correct, bool)

    @property
    def seconds(self) -> np.ndarray:
        """Per-sample latency in seconds, ``float64`` :math:`(T,)`."""
        return to_numpy(self._seconds, np.float64)

    def summary(self) -> Dict[str, Any]:
        """Whole-stream and tail accuracies, median and 95th-percentile latency in ms.

        Keys: ``accuracy``, ``accuracy_last_20``, ``accuracy_last_10``,
        ``accuracy_last_5``, ``ms_per_sample_median``, ``ms_per_sample_p95``,
        ``n_samples``.

        Raises:
            ValueError: before the first sample.
        """
        if not self._correct:
            raise ValueError("no sample recorded yet")
        correct, milliseconds = self.correct, self.seconds * 1e3
        summary: Dict[str, Any] = {"accuracy": float(correct.mean())}
        summary.update({key: tail_accuracy(correct, fraction)
                        for key, fraction in TAIL_FRACTIONS.items()})
        summary["ms_per_sample_median"] = float(np.median(milliseconds))
        summary["ms_per_sample_p95"] = float(np.percentile(milliseconds, 95))
        summary["n_samples"] = self.n_samples
        return summary

    def __repr__(self) -> str:
        return f"StreamMetrics(n_samples={self.n_samples}, accuracy={self.running_accuracy:.4f})"
