r"""Test-then-train accuracy and latency of a stream run.

Every sample counts, labeled or not.  Besides the mean over the whole stream,
the paper reports the mean over the last 20 %, 10 % and 5 % of it: the last
:math:`\lceil p \cdot T \rceil` samples.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Tuple

import numpy as np

from torch_geometric_stream.validation import check_positive_int, check_unit_interval

__all__ = ["StreamMetrics", "tail_accuracy", "accuracy_curve"]

TAIL_FRACTIONS = {"accuracy_last_20": 0.20, "accuracy_last_10": 0.10, "accuracy_last_5": 0.05}


def _as_correct(correct: Any) -> np.ndarray:
    correct = np.asarray(correct, dtype=bool)
    if correct.ndim != 1 or correct.size == 0:
        raise ValueError(f"correct must be a non-empty 1-D sequence, got shape {correct.shape}")
    return correct


def tail_accuracy(correct: Any, fraction: float) -> float:
    r"""Mean of the last :math:`\lceil p \cdot T \rceil` entries of ``correct`` :math:`(T,)`."""
    correct = _as_correct(correct)
    fraction = check_unit_interval(fraction, "fraction")
    # The tolerance keeps e.g. ceil(0.1 * 30) at 3 despite 0.1 * 30 = 3.0000000000000004.
    count = max(1, math.ceil(fraction * correct.size - 1e-9))
    return float(correct[-count:].mean())


def accuracy_curve(correct: Any, num_points: int = 200) -> Tuple[np.ndarray, np.ndarray]:
    r"""Running accuracy at (at most) ``num_points`` evenly spaced stream positions.

    Args:
        correct: per-sample correctness, shape :math:`(T,)`.
        num_points: how many points of the curve to return.

    Returns:
        ``(counts, accuracy)``, both of shape :math:`(P,)` with
        :math:`P \leq \min(\text{num\_points}, T)`: ``counts[i]`` samples seen
        (the last one is :math:`T`) and the running accuracy after them.
    """
    correct = _as_correct(correct)
    num_points = check_positive_int(num_points, "num_points")
    counts = np.unique(np.linspace(1, correct.size, min(num_points, correct.size))
                       .round().astype(np.int64))
    return counts, np.cumsum(correct)[counts - 1] / counts


class StreamMetrics:
    """Accumulates per-sample correctness and latency of a test-then-train run.

    Example::

        metrics = StreamMetrics()
        metrics.update(correct=True, seconds=0.004)
        metrics.running_accuracy  # 1.0
        metrics.summary()
    """

    def __init__(self) -> None:
        self._correct: List[bool] = []
        self._seconds: List[float] = []
        self._num_correct = 0

    def update(self, correct: bool, seconds: float) -> None:
        """Record one sample: whether it was predicted right and how long it took."""
        self._correct.append(bool(correct))
        self._seconds.append(float(seconds))
        self._num_correct += bool(correct)

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
        return np.asarray(self._correct, dtype=bool)

    @property
    def seconds(self) -> np.ndarray:
        """Per-sample latency in seconds, ``float64`` :math:`(T,)`."""
        return np.asarray(self._seconds, dtype=np.float64)

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
