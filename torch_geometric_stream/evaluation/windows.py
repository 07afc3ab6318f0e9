r"""Prequential metrics over consecutive windows of a stream.

The running accuracy averages over every sample seen, so a drift and the
recovery after it fade in it as the stream grows. Stream-learning tools (MOA's
``WindowClassificationPerformanceEvaluator``, CapyMOA's
``prequential_evaluation(..., window_size=N)``) also report the metrics of each
consecutive window of :math:`N` samples: :math:`[s, s + N), [s + N, s + 2N),
\dots`, the last window of a stream whose length :math:`N` does not divide
shorter (its ``n_samples`` says so).

:class:`WindowedMetrics` counts the current window (a
:class:`~torch_geometric_stream.evaluation.bounded.RunningClassCounts` and three
integers: :math:`O(1)` work per sample) and keeps four numbers per finished
window: memory :math:`O(T / N)` for :math:`T` samples, under either history.
"""
from __future__ import annotations

import math
from array import array
from typing import Any, Dict, Mapping

import numpy as np

from torch_geometric_stream.evaluation.bounded import RunningClassCounts
from torch_geometric_stream.validation import check_positive_int

__all__ = ["WINDOW_COLUMNS", "MAX_WINDOW", "WindowedMetrics", "check_window", "window_lists"]

#: The columns of :meth:`WindowedMetrics.columns`, in order: the window's first
#: stream position, the position after its last, its samples and labels
#: (``int64``), its accuracy, balanced accuracy and Cohen's kappa (``float64``;
#: kappa NaN where undefined, see
#: :func:`~torch_geometric_stream.evaluation.class_metrics`).
WINDOW_COLUMNS = ("start", "end", "n_samples", "n_labels", "accuracy", "balanced_accuracy",
                  "kappa")

#: The largest window: its bounds are ``int64`` stream positions.
MAX_WINDOW = int(np.iinfo(np.int64).max)

_KEYS = ("size", "samples", "hits", "labels", "classes", "done_hits", "done_labels",
         "done_balanced_accuracy", "done_kappa")


def check_window(size: Any) -> int:
    """``size`` as ``int`` if it is an integer in :math:`[1,` :data:`MAX_WINDOW`:math:`]`.

    Args:
        size (int): the window size.

    Raises:
        TypeError, ValueError: otherwise, naming ``window``.
    """
    size = check_positive_int(size, "window")
    if size > MAX_WINDOW:
        raise ValueError(f"window must be at most 2**63 - 1 (int64 stream positions), "
                         f"got {size}")
    return size


def _column(state: Mapping[str, Any], key: str, kind: str) -> np.ndarray:
    """``state[key]`` as a 1-D array of integers (``kind`` ``"iu"``) or floats (``"f"``)."""
    values = np.asarray(state[key])
    if values.ndim != 1 or (values.size and values.dtype.kind not in kind):
        what = "integer" if kind == "iu" else "float"
        raise ValueError(f"windows state {key} must be a 1-D {what} array, got dtype "
                         f"{values.dtype} and shape {values.shape}")
    return values


class WindowedMetrics:
    r"""Accuracy, balanced accuracy, kappa and labels of each consecutive window
    of ``size`` samples.

    Args:
        size (int): samples per window, an integer in :math:`[1,` :data:`MAX_WINDOW`:math:`]`.

    Raises:
        TypeError, ValueError: ``size`` is not (:func:`check_window`).
    """

    def __init__(self, size: int) -> None:
        self.size = check_window(size)
        self._classes = RunningClassCounts()
        self._samples = self._hits = self._labels = 0
        # per finished window
        self._done_hits, self._done_labels = array("q"), array("q")
        self._done_balanced, self._done_kappa = array("d"), array("d")

    @property
    def n_samples(self) -> int:
        """Samples counted, over every window."""
        return len(self._done_hits) * self.size + self._samples

    @property
    def n_labels(self) -> int:
        """Labels given to the learner, over every window."""
        return sum(self._done_labels) + self._labels

    def update(self, label: int, prediction: int, labeled: bool) -> None:
        """Count one sample of true class ``label`` predicted as ``prediction``
        (ints), its label given to the learner or not; a window full after it is
        finished.

        Args:
            label (int): the true class id.
            prediction (int): the predicted class id.
            labeled (bool): whether the learner was given the label.
        """
        self._classes.update(label, prediction)
        self._samples += 1
        self._hits += label == prediction
        self._labels += labeled
        if self._samples == self.size:
            balanced, kappa = self._class_metrics()
            self._done_hits.append(self._hits)
            self._done_labels.append(self._labels)
            self._done_balanced.append(balanced)
            self._done_kappa.append(kappa)
            self._classes = RunningClassCounts()
            self._samples = self._hits = self._labels = 0

    def _class_metrics(self) -> tuple[float, float]:
        """Balanced accuracy and kappa (NaN where undefined) of the current window."""
        metrics = self._classes.metrics()
        kappa = metrics["kappa"]
        return metrics["balanced_accuracy"], math.nan if kappa is None else kappa

    def columns(self, start: int = 0) -> Dict[str, np.ndarray]:
        r""":data:`WINDOW_COLUMNS` of the windows so far, the first starting at
        stream position ``start``: each :math:`(W,)`, one entry per finished
        window and one for the current window if it holds a sample (then the
        last ``n_samples`` is below ``size``).

        Args:
            start (int, optional): the stream position of the first window's first
                sample. (default: ``0``)
        """
        hits, labels = np.array(self._done_hits, np.int64), np.array(self._done_labels, np.int64)
        balanced = np.array(self._done_balanced, np.float64)
        kappa = np.array(self._done_kappa, np.float64)
        samples = np.full_like(hits, self.size)
        if self._samples:
            current_balanced, current_kappa = self._class_metrics()
            hits, labels = np.append(hits, self._hits), np.append(labels, self._labels)
            balanced = np.append(balanced, current_balanced)
            kappa = np.append(kappa, current_kappa)
            samples = np.append(samples, self._samples)
        starts = start + np.arange(samples.size, dtype=np.int64) * self.size
        return {"start": starts, "end": starts + samples, "n_samples": samples,
                "n_labels": labels, "accuracy": hits / samples,
                "balanced_accuracy": balanced, "kappa": kappa}

    def state_dict(self) -> Dict[str, Any]:
        """``size``; the current window's ``samples``, ``hits``, ``labels`` (ints)
        and ``classes`` (:meth:`RunningClassCounts.state_dict`); the finished
        windows' ``done_hits``, ``done_labels`` (``int64``),
        ``done_balanced_accuracy``, ``done_kappa`` (``float64``), each :math:`(W,)`."""
        return {"size": self.size, "samples": self._samples, "hits": self._hits,
                "labels": self._labels, "classes": self._classes.state_dict(),
                "done_hits": np.array(self._done_hits, np.int64),
                "done_labels": np.array(self._done_labels, np.int64),
                "done_balanced_accuracy": np.array(self._done_balanced, np.float64),
                "done_kappa": np.array(self._done_kappa, np.float64)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Replace the counts by :meth:`state_dict`'s, of windows of this ``size``
        (all checked before any is set).

        Args:
            state (Mapping[str, Any]): what :meth:`state_dict` returned.

        Raises:
            ValueError: a lacking entry, another ``size`` (naming both),
                counts that do not fit together, or a finished window's balanced
                accuracy outside :math:`[0, 1]` or kappa outside :math:`[-1, 1]`
                (NaN where undefined, as :meth:`state_dict` keeps it).
            TypeError: a size or count that is not an integer (a float is not
                truncated).
        """
        missing = [key for key in _KEYS if key not in state]
        if missing:
            raise ValueError(f"windows state lacks the entries {missing}")
        size = check_positive_int(state["size"], "the windows state's size")
        if size != self.size:
            raise ValueError(f"the windows state was kept with window={size}, "
                             f"these windows have window={self.size}")
        samples, hits, labels = (check_positive_int(state[key], f"the windows state's {key}",
                                                    minimum=0)
                                 for key in ("samples", "hits", "labels"))
        classes = RunningClassCounts()
        classes.load_state_dict(state["classes"])
        done = [_column(state, key, kind) for key, kind in (
            ("done_hits", "iu"), ("done_labels", "iu"), ("done_balanced_accuracy", "f"),
            ("done_kappa", "f"))]
        if (not 0 <= hits <= samples < self.size or not 0 <= labels <= samples
                or classes.samples != samples or classes.hits != hits
                or len({column.size for column in done}) != 1
                or ((done[0] < 0) | (done[0] > self.size) | (done[1] < 0)
                    | (done[1] > self.size)).any()):
            raise ValueError(f"inconsistent windows state: window={self.size}, current window "
                             f"of {samples} samples ({hits} right, {labels} labels, class "
                             f"counts of {classes.samples}, {classes.hits} right), finished "
                             f"windows "
                             f"{[column.size for column in done]}")
        balanced, kappa = done[2], done[3]
        wrong = ~((balanced >= 0) & (balanced <= 1) & (np.isnan(kappa) | (np.abs(kappa) <= 1)))
        if wrong.any():
            window = int(wrong.argmax())
            raise ValueError(f"the windows state's finished windows must have balanced "
                             f"accuracies in [0, 1] and kappas in [-1, 1] (NaN where "
                             f"undefined), got {balanced[window]} and {kappa[window]} for "
                             f"window {window}")
        self._classes, self._samples, self._hits, self._labels = classes, samples, hits, labels
        self._done_hits, self._done_labels = (array("q", done[0].tolist()),
                                              array("q", done[1].tolist()))
        self._done_balanced, self._done_kappa = (array("d", done[2].tolist()),
                                                 array("d", done[3].tolist()))


def window_lists(columns: Mapping[str, np.ndarray]) -> Dict[str, list]:
    """:meth:`WindowedMetrics.columns` as JSON lists (an undefined kappa ``None``).

    Args:
        columns (Mapping): the columns.
    """
    lists = {key: np.asarray(columns[key]).tolist() for key in WINDOW_COLUMNS}
    lists["kappa"] = [None if math.isnan(kappa) else kappa for kappa in lists["kappa"]]
    return lists
