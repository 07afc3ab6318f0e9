r"""Prequential (test-then-train) evaluation of any stream learner.

Every sample is first predicted, then learned, with its label only where the
label mask says so (``-1`` otherwise).  The learner is duck-typed: anything
with ``predict(x)`` returning one class id (a Python int, a 0-d or a
one-element tensor/array) and ``learn(x, y)`` taking ``y = -1`` for "no label"
works (:class:`StreamLearner`), e.g. every
:class:`~torch_geometric_stream.base.StreamClassifier`. A learner with
``predict_learn(x, y)``, which does both in one call and returns the prediction
(:class:`FusedStreamLearner`, e.g.
:class:`~torch_geometric_stream.models.CUDAGraphStep`), is stepped through it
instead.
"""
from __future__ import annotations

import contextlib
from contextlib import AbstractContextManager
import itertools
import json
import numbers
import operator
import sys
import time
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import (Any, Callable, Dict, Iterable, Mapping, Optional, Protocol, Sized, Tuple,
                    Union, cast, runtime_checkable)

import numpy as np
import torch
from torch import Tensor
from tqdm.auto import tqdm

from torch_geometric_stream.base import restored_on_error
from torch_geometric_stream.evaluation.bounded import (BoundedStreamMetrics, RunningClassCounts,
                                                       kept_curve)
from torch_geometric_stream.evaluation.columns import (append_class_id, check_int64,
                                                       class_ids, to_numpy)
from torch_geometric_stream.evaluation.delay import DelayedLabels, check_label_delay
from torch_geometric_stream.evaluation.label_query import UncertaintyQuery, host_probabilities
from torch_geometric_stream.evaluation.metrics import (StreamMetrics, accuracy_curve,
                                                       class_metrics)
from torch_geometric_stream.evaluation.progress import ProgressLines, progress_interval
from torch_geometric_stream.evaluation.transforms import StreamTransform
from torch_geometric_stream.evaluation.windows import (WINDOW_COLUMNS, WindowedMetrics,
                                                       check_window, window_lists)
from torch_geometric_stream.files import atomic_savefig, atomic_write_csv, atomic_write_text
from torch_geometric_stream.ops.denormal import flush_denormal as flushing_denormal
from torch_geometric_stream.validation import (check_bool, check_choice, check_mapping,
                                               check_nonnegative, check_positive,
                                               check_positive_int)

__all__ = ["prequential", "PrequentialResult", "PrequentialRecord", "HISTORIES", "MAX_CLASSES",
           "check_history", "plot_running_accuracy", "plot_curves", "check_plot_path",
           "StreamLearner", "FusedStreamLearner", "Learner"]

PathLike = Union[str, Path]
LabelMask = Union[np.ndarray, Callable[[int], bool], None]


@runtime_checkable
class StreamLearner(Protocol):
    """A learner :func:`prequential` steps with ``predict`` then ``learn`` (e.g.
    every :class:`~torch_geometric_stream.base.StreamClassifier`); a run with a
    ``label_query`` calls ``predict_proba`` instead of ``predict``.

    ``isinstance(learner, StreamLearner)`` checks that it has the two methods,
    not their signatures.
    """

    def predict(self, x: Any, /) -> Any:
        """The predicted class id of one sample.

        Args:
            x (Any): one sample :math:`(d,)`, as the transform gives it.

        Returns:
            Any: a Python int, a 0-d or a one-element integer tensor or array.
        """

    def learn(self, x: Any, y: int, /) -> Any:
        """Learn one sample.

        Args:
            x (Any): one sample :math:`(d,)`, as the transform gives it.
            y (int): its class id, ``-1`` for no label.
        """


@runtime_checkable
class FusedStreamLearner(Protocol):
    """A learner :func:`prequential` steps with one call ``predict_learn`` (e.g.
    :class:`~torch_geometric_stream.models.CUDAGraphStep`); a run with a
    ``label_delay`` or a ``label_query`` also calls the methods of
    :class:`StreamLearner` it needs.
    """

    def predict_learn(self, x: Any, y: int, /) -> Any:
        """Predict one sample, then learn it.

        Args:
            x (Any): one sample :math:`(d,)`, as the transform gives it.
            y (int): its class id, ``-1`` for no label.

        Returns:
            Any: the prediction, as :meth:`StreamLearner.predict` gives it.
        """


#: What :func:`prequential` runs: a learner with ``predict`` and ``learn``, or
#: with ``predict_learn``.
Learner = Union[StreamLearner, FusedStreamLearner]


class LabelQuery(Protocol):
    """What :func:`prequential` takes as ``label_query`` (e.g.
    :class:`~torch_geometric_stream.evaluation.label_query.UncertaintyQuery`)."""

    def __call__(self, probabilities: Any) -> bool: ...

    def state_dict(self) -> Dict[str, Any]: ...

    def load_state_dict(self, state: Mapping[str, Any]) -> None: ...

POSTFIX_EVERY = 200

#: What a run keeps of its samples: ``"full"``, the per-sample columns (about 18
#: bytes per sample); ``"bounded"``, running counts in memory that does not grow
#: with the stream (:mod:`~torch_geometric_stream.evaluation.bounded`).
HISTORIES = ("full", "bounded")

#: The most classes of a record sized by its largest class id seen (a learner
#: without ``num_classes``): :meth:`PrequentialRecord.result` keeps lists of as
#: many entries per class (the class counts, ``recall_per_class``), a few
#: MiB at this many; a class id of :math:`2^{40}` would ask for TiB.
MAX_CLASSES = 2 ** 20


def check_history(history: Any) -> str:
    """``history`` if it is one of :data:`HISTORIES`.

    Args:
        history (Any): the value to check.

    Raises:
        TypeError: ``history`` is not a string.
        ValueError: it names no history.
    """
    if not isinstance(history, str):
        raise TypeError(f"history must be one of {HISTORIES}, got {history!r} "
                        f"({type(history).__name__})")
    check_choice(history, HISTORIES, "history")
    return history


@dataclass
class PrequentialResult:
    r"""Outcome of :func:`prequential` over positions :math:`[start, start + n)`.

    Attributes:
        correct (np.ndarray or None): whether each prediction was right, ``bool`` :math:`(n,)`.
        predictions (np.ndarray or None): predicted class ids, ``int64`` :math:`(n,)`.
        labels (np.ndarray or None): true class ids, ``int64`` :math:`(n,)`.
        labeled (np.ndarray or None): whether the learner got the label, ``bool`` :math:`(n,)`.
        metrics (dict[str, Any]): :meth:`StreamMetrics.summary`, :func:`class_metrics` (confusion
            matrix, balanced accuracy, kappa, kappa_m, kappa_t; the matrix and the
            recall over all ``learner.num_classes`` classes where the learner has
            it as an integer, a 0-d integer tensor included) plus ``seconds`` (wall
            time), ``peak_memory_mb`` and ``n_labels``.
        start (int, optional): stream position of the first entry. (default: :obj:`0`)
        history (str, optional): ``"full"``, or ``"bounded"``: then the four per-sample arrays
            (and ``positions``) are ``None``, ``metrics`` is
            :meth:`~torch_geometric_stream.evaluation.bounded.BoundedStreamMetrics.summary`
            with the class metrics and ``kept`` holds the exact running accuracy
            at some positions. (default: :obj:`"full"`)
        kept (tuple[np.ndarray, np.ndarray], optional): with ``history="bounded"``, the samples
            seen and the hits after them at the positions kept, ``int64`` :math:`(P,)` each
            (:meth:`~torch_geometric_stream.evaluation.bounded.RunningAccuracy.points`).
            (default: :obj:`None`)
        windows (dict[str, np.ndarray], optional): with ``window=N`` (:func:`prequential`), the
            metrics of each consecutive window of :math:`N` samples, under either history: a dict
            of :data:`~torch_geometric_stream.evaluation.windows.WINDOW_COLUMNS` arrays
            :math:`(W,)`, :math:`W = \lceil n / N \rceil`: ``start``, ``end`` (stream positions,
            the window :math:`[start, end)`), ``n_samples`` (:math:`N`, less for a last, partial
            window), ``n_labels`` (``int64``), ``accuracy``, ``balanced_accuracy``, ``kappa``
            (``float64``, kappa NaN where undefined); ``None`` without. (default: :obj:`None`)
        window (int, optional): :math:`N`, the samples per window (``None`` without windows).
            (default: :obj:`None`)
    """

    correct: Optional[np.ndarray]
    predictions: Optional[np.ndarray]
    labels: Optional[np.ndarray]
    labeled: Optional[np.ndarray]
    metrics: Dict[str, Any]
    start: int = 0
    history: str = "full"
    kept: Optional[Tuple[np.ndarray, np.ndarray]] = field(default=None, repr=False)
    windows: Optional[Dict[str, np.ndarray]] = field(default=None, repr=False)
    window: Optional[int] = None
    positions: Optional[np.ndarray] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.positions = None if self.correct is None else np.arange(
            self.start, self.start + self.correct.size, dtype=np.int64)

    def accuracy_curve(self, num_points: int = 200) -> Tuple[np.ndarray, np.ndarray]:
        r"""``(counts, accuracy)``: the running accuracy after ``counts`` samples
        :math:`(P,)`, :math:`P \leq` ``num_points``, the last the whole run; at
        the positions of :func:`~torch_geometric_stream.evaluation.accuracy_curve`,
        or with ``history="bounded"`` at the kept positions nearest to them
        (:func:`~torch_geometric_stream.evaluation.bounded.kept_curve`), exact
        either way.

        Args:
            num_points (int, optional): the most points :math:`P`. (default: ``200``)
        """
        if self.kept is not None:
            return kept_curve(*self.kept, num_points)
        return accuracy_curve(self.correct, num_points)

    def _per_sample(self, use: str) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                             np.ndarray]:
        """The per-sample arrays ``(positions, labels, predictions, correct, labeled)``;
        refuse ``use`` (what needs them) for a bounded history, which keeps none."""
        positions, labels, predictions = self.positions, self.labels, self.predictions
        correct, labeled = self.correct, self.labeled
        if (positions is None or labels is None or predictions is None or correct is None
                or labeled is None):
            raise ValueError(f"{use} needs the per-sample arrays, which history="
                             f"{self.history!r} does not keep: run with history='full'")
        return positions, labels, predictions, correct, labeled

    def to_dict(self, arrays: bool = False) -> Dict[str, Any]:
        """JSON-serializable view: ``metrics``, ``start``, ``windows`` where the run
        has them (lists, an undefined kappa ``None``) and, if asked, the per-sample arrays.

        Args:
            arrays (bool, optional): whether to add the per-sample arrays.
                (default: :obj:`False`)

        Raises:
            ValueError: ``arrays`` with ``history="bounded"``.
        """
        payload: Dict[str, Any] = {"metrics": dict(self.metrics), "start": self.start}
        if self.windows is not None:
            payload["windows"] = window_lists(self.windows)
        if arrays:
            self._per_sample("to_dict(arrays=True)")
            payload.update({name: getattr(self, name).tolist()
                            for name in ("correct", "predictions", "labels", "labeled")})
        return payload

    def save_json(self, path: PathLike, extra: Optional[Mapping[str, Any]] = None,
                  arrays: bool = False) -> Path:
        """Write :meth:`to_dict` merged with ``extra`` (e.g. the configuration) to ``path``.

        Args:
            path (str or Path): the file to write.
            extra (Mapping[str, Any], optional): more entries, none of :meth:`to_dict`'s
                keys. (default: :obj:`None`)
            arrays (bool, optional): whether to add the per-sample arrays.
                (default: :obj:`False`)

        Raises:
            ValueError: ``extra`` redefines a key of :meth:`to_dict`, or as
                :meth:`to_dict`.
        """
        payload = self.to_dict(arrays=arrays)
        clashes = sorted(set(extra or {}) & set(payload))
        if clashes:
            raise ValueError(f"extra must not redefine the keys {clashes}")
        payload.update(extra or {})
        return atomic_write_text(path, json.dumps(payload, indent=2))

    def save_csv(self, path: PathLike) -> Path:
        """Write one row per sample: ``index, label, prediction, correct, labeled``.

        Args:
            path (str or Path): the file to write.

        Raises:
            ValueError: with ``history="bounded"`` (before ``path`` is opened).
        """
        positions, labels, predictions, correct, labeled = self._per_sample("save_csv")
        return atomic_write_csv(path, itertools.chain(
            [("index", "label", "prediction", "correct", "labeled")],
            zip(positions.tolist(), labels.tolist(), predictions.tolist(),
                correct.astype(int).tolist(), labeled.astype(int).tolist())))

    def save_windows_csv(self, path: PathLike) -> Path:
        """Write one row per window, under either history: the
        :data:`~torch_geometric_stream.evaluation.windows.WINDOW_COLUMNS` (an
        undefined kappa empty).

        Args:
            path (str or Path): the file to write.

        Raises:
            ValueError: for a run without ``window`` (before ``path`` is opened).
        """
        if self.windows is None:
            raise ValueError("save_windows_csv needs the windows of a run with window=N")
        rows = window_lists(self.windows)
        return atomic_write_csv(path, itertools.chain(
            [WINDOW_COLUMNS], zip(*(rows[key] for key in WINDOW_COLUMNS))))

    def plot(self, path: PathLike, label: str = "learner") -> Path:
        """Save the running accuracy over the stream as an image, with the
        windowed accuracy where the run has windows (needs matplotlib).

        Args:
            path (str or Path): the image file (its suffix names the format).
            label (str, optional): the curve's legend. (default: :obj:`"learner"`)
        """
        return plot_running_accuracy({label: self}, path)


#: Entries of :meth:`PrequentialRecord.state_dict`, by history.
_RECORD_KEYS = {"full": ("start", "predictions", "labels", "labeled", "seconds", "elapsed"),
                "bounded": ("start", "n_samples", "n_labels", "metrics", "classes", "elapsed")}


def _check_held_labels(delayed: DelayedLabels, loaded: PrequentialRecord, start: int) -> None:
    """Raise unless every label ``delayed`` holds is that of its sample in ``loaded``,
    the record state's samples from stream position ``start``: given to the learner
    (full history), or one of the labels counted (bounded)."""
    held = delayed.held_labels()
    if loaded.classes is not None and len(held) > loaded.n_labels:
        raise ValueError(f"the record state holds {len(held)} labels back but gave "
                         f"{loaded.n_labels}")
    for position, label in held:
        if position < start:
            raise ValueError(f"the held label of position {position} is from before the "
                             f"record state's start {start}")
        if loaded.classes is not None:
            if not loaded.classes.label_count(label):
                raise ValueError(f"the held label {label} of position {position} is no "
                                 f"label the record state counts")
            continue
        assert loaded.labels is not None and loaded.labeled is not None  # a full history's
        recorded, given = loaded.labels[position - start], loaded.labeled[position - start]
        if label != recorded or not given:
            raise ValueError(f"the held label {label} of position {position} is not that of "
                             f"the record state's sample there: label {recorded}, "
                             f"{'given' if given else 'not given'} to the learner")


def _check_query_counts(query: LabelQuery, loaded: PrequentialRecord) -> None:
    """Raise unless an :class:`UncertaintyQuery` ``query``, loaded from a record
    state, has seen the samples of ``loaded`` (that state) and asked for its labels:
    a run asks it about each sample, and gives the learner the labels it asks for."""
    if not isinstance(query, UncertaintyQuery):
        return
    if (query.seen, query.asked) != (loaded.metrics.n_samples, loaded.n_labels):
        raise ValueError(f"the record state's label query saw {query.seen} samples and "
                         f"asked {query.asked} labels, but the record covers "
                         f"{loaded.metrics.n_samples} samples with {loaded.n_labels} labels")


def _state_history(state: Mapping[str, Any]) -> str:
    """The history a :meth:`PrequentialRecord.state_dict` was kept with (``"full"``
    without a ``history`` entry, as states older than the option), or a
    ``ValueError`` if it names none or ``state`` lacks that history's entries."""
    kept = state.get("history", "full")
    if not isinstance(kept, str) or kept not in _RECORD_KEYS:
        raise ValueError(f"record state was kept with history={kept!r}, which is none of "
                         f"{HISTORIES}")
    missing = [key for key in _RECORD_KEYS[kept] if key not in state]
    if missing:
        raise ValueError(f"record state lacks the entries {missing}")
    return kept


def _check_sample(prediction: int, label: int, labeled: Any, seconds: float) -> None:
    """Raise unless a full record state's sample (one :meth:`PrequentialRecord.update`
    took: integers, numbers) is one a run records: class ids >= 0, ``labeled`` a
    bool, ``seconds`` a finite number >= 0."""
    for name, class_id in (("prediction", prediction), ("label", label)):
        if class_id < 0:
            raise ValueError(f"{name} must be a class id >= 0, got {class_id}")
    check_bool(labeled, "labeled")
    check_nonnegative(seconds, "seconds")


class PrequentialRecord:
    """What :func:`prequential` has seen so far; handed to its ``callback``.

    ``metrics`` is the live :class:`StreamMetrics`, ``n_labels`` the number of
    labels the learner got so far, :meth:`result` a full snapshot.
    ``predictions`` and ``labels`` (class ids, ``int32`` ``'i'``, or ``int64``
    ``'q'`` once an id does not fit) and ``labeled`` (``'B'``, 0 or 1) are
    :class:`array.array` :math:`(n,)`, compact columns
    (:mod:`~torch_geometric_stream.evaluation.columns`): they index, slice and
    convert with :func:`numpy.asarray` like lists, but compare equal only to arrays.

    With ``history="bounded"`` the record keeps no per-sample column (the three
    are ``None``): ``metrics`` is a
    :class:`~torch_geometric_stream.evaluation.bounded.BoundedStreamMetrics` and
    ``classes`` a :class:`~torch_geometric_stream.evaluation.bounded.RunningClassCounts`,
    whose size depends on the number of classes, not of samples.

    With ``window``, ``windowed`` is a
    :class:`~torch_geometric_stream.evaluation.windows.WindowedMetrics` counting
    the windows of ``window`` samples from ``start`` (``None`` without).

    With a ``label_delay`` of 1 or more, ``delayed`` is the
    :class:`~torch_geometric_stream.evaluation.delay.DelayedLabels` holding the
    labels not yet learned (``None`` for 0): part of the run's
    state, so a checkpoint keeps them. ``labeled`` and ``n_labels`` count the
    labels given, learned or still held.

    Args:
        start (int, optional): stream position of the first sample. (default: :obj:`0`)
        cuda_device (torch.device, optional): the learner's CUDA device, whose peak memory is added
            to the report (``None`` for CPU learners). (default: :obj:`None`)
        history (str, optional): one of :data:`HISTORIES`. (default: :obj:`"full"`)
        window (int, optional): samples per window (an integer >= 1), ``None`` for no windows.
            (default: :obj:`None`)
        num_classes (int, optional): the classes of the stream (an integer >= 1), by which
            :meth:`result` sizes the confusion matrix and the recall
            (:func:`class_metrics`); ``None``: by the largest class id seen. (default: :obj:`None`)
        label_delay (int, optional): samples predicted between a labeled sample and the
            learning of its label (an integer >= 0, see :func:`prequential`). (default: :obj:`0`)
        learn_on_arrival (bool, optional): with a ``label_delay``, whether labeled samples were
            learned without label as they arrived (see :func:`prequential`). (default: :obj:`True`)
        label_query (LabelQuery, optional): the run's ``label_query`` (see :func:`prequential`),
            whose ``state_dict()`` is then part of the record's: the record reads and sets its
            state, it does not call it. (default: :obj:`None`)
    """

    def __init__(self, start: int = 0, cuda_device: Optional[torch.device] = None,
                 history: str = "full", window: Optional[int] = None,
                 num_classes: Optional[int] = None, label_delay: int = 0,
                 learn_on_arrival: bool = True,
                 label_query: Optional[LabelQuery] = None) -> None:
        self.history = check_history(history)
        self.label_query = label_query
        label_delay = check_label_delay(label_delay)
        self.delayed = (DelayedLabels(label_delay, learn_on_arrival) if label_delay
                        else None)
        self.num_classes = (None if num_classes is None
                            else check_positive_int(num_classes, "num_classes"))
        self.windowed = None if window is None else WindowedMetrics(window)
        self.start = start
        self.cuda_device = cuda_device
        bounded = history == "bounded"
        self.metrics: Union[StreamMetrics, BoundedStreamMetrics] = (
            BoundedStreamMetrics() if bounded else StreamMetrics())
        self.classes: Optional[RunningClassCounts] = RunningClassCounts() if bounded else None
        self.predictions: Optional[array] = None if bounded else class_ids()
        self.labels: Optional[array] = None if bounded else class_ids()
        self.labeled: Optional[array] = None if bounded else array("B")
        self.n_labels = 0
        self._started = time.perf_counter()

    def update(self, prediction: int, label: int, labeled: bool, seconds: float) -> None:
        """Record one sample.

        Args:
            prediction (int): the predicted class id.
            label (int): the true class id.
            labeled (bool): whether the learner got the label.
            seconds (float): how long the sample took.

        Raises:
            TypeError: ``prediction`` or ``label`` is not an integer.
            ValueError: either does not fit an ``int64``, or (``history="bounded"``)
                ``seconds`` is not a finite number >= 0. The record is left as it was.
        """
        prediction = check_int64(prediction, "prediction")
        label = check_int64(label, "label")
        labeled = bool(labeled)
        self.metrics.update(prediction == label, seconds)
        if self.classes is not None:
            self.classes.update(label, prediction)
        else:  # the full history's columns
            assert (self.predictions is not None and self.labels is not None
                    and self.labeled is not None)
            self.predictions = append_class_id(self.predictions, prediction)
            self.labels = append_class_id(self.labels, label)
            self.labeled.append(labeled)
        self.n_labels += labeled
        if self.windowed is not None:
            self.windowed.update(label, prediction, labeled)

    @property
    def window(self) -> Optional[int]:
        """Samples per window, ``None`` for a record without windows."""
        return None if self.windowed is None else self.windowed.size

    @property
    def label_delay(self) -> int:
        """Samples predicted between a labeled sample and the learning of its label."""
        return 0 if self.delayed is None else self.delayed.delay

    def largest_class(self) -> int:
        """The largest class id recorded, label or prediction (-1 before the first sample)."""
        if self.classes is not None:
            return self.classes.largest
        labels, predictions = self.labels, self.predictions  # kept under the full history
        if not labels or predictions is None:
            return -1
        return int(max(to_numpy(labels, np.int64).max(), to_numpy(predictions, np.int64).max()))

    def state_dict(self) -> Dict[str, Any]:
        """The run so far, for a checkpoint (``initial`` of :func:`prequential`).

        Keys: ``history``, ``start``, ``elapsed`` (wall time so far) and, for the
        full history, ``predictions``, ``labels`` (``int64``), ``labeled``
        (``bool``), ``seconds`` (per-sample latency, ``float64``), all
        :math:`(n,)`; for the bounded one, ``n_samples``, ``n_labels``, the
        ``state_dict`` of ``metrics`` and ``classes``, and ``windows``: that of
        ``windowed``, ``None`` without (a full record's windows follow from its
        per-sample arrays); with a ``label_delay`` of 1 or more, ``delayed``:
        :meth:`DelayedLabels.state_dict` (a state without it has delay 0); with a
        ``label_query``, ``label_query``: its ``state_dict()``.
        """
        state: Dict[str, Any] = {"history": self.history, "start": self.start}
        metrics = self.metrics
        if isinstance(metrics, BoundedStreamMetrics):
            assert self.classes is not None  # kept with the bounded metrics
            state.update({"n_samples": metrics.n_samples, "n_labels": self.n_labels,
                          "metrics": metrics.state_dict(),
                          "classes": self.classes.state_dict(),
                          "windows": None if self.windowed is None
                          else self.windowed.state_dict()})
        else:
            state.update(self._column_arrays())
            state["seconds"] = metrics.seconds
        if self.delayed is not None:
            state["delayed"] = self.delayed.state_dict()
        if self.label_query is not None:
            state["label_query"] = self.label_query.state_dict()
        state["elapsed"] = time.perf_counter() - self._started
        return state

    @staticmethod
    def state_samples(state: Mapping[str, Any]) -> int:
        """How many samples a :meth:`state_dict` covers (either history; a state
        without ``history`` is a full one).

        Args:
            state (Mapping[str, Any]): what :meth:`state_dict` returned.

        Raises:
            ValueError: ``state`` names no history or lacks its entries.
        """
        if _state_history(state) == "bounded":
            return check_positive_int(state["n_samples"], "the record state's n_samples",
                                      minimum=0)
        return len(state["predictions"])

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continue from what :meth:`state_dict` returned (only on an empty record
        of the same history; everything is checked before anything changes).

        Args:
            state (Mapping[str, Any]): what :meth:`state_dict` returned.

        Raises:
            ValueError: a record that is not empty, a state of the other history
                (naming it), a bounded state kept with another ``window`` than
                this record's, or without one where this record has one (a full
                state's windows are counted again from its per-sample arrays,
                for any ``window``), or a state lacking or mismatching entries, a
                ``start`` below 0, an ``elapsed`` that is not a finite number >= 0,
                a class id below 0 or a per-sample ``seconds`` that is not a finite
                number >= 0, or held labels (``delayed``) of another
                ``label_delay`` than this record's (a state without them has 0) or
                that are not those of the state's last positions
                (:meth:`DelayedLabels.load_state_dict`), a ``label_query`` state
                where this record has no query or none where it has one, or
                one its query refuses (its ``load_state_dict``).
            TypeError: as :meth:`update`, for a full state's per-sample entry, or a
                ``labeled`` entry that is no bool (as its ValueError; the message
                names the sample), a ``start`` that is no integer, a held label
                or its position that is no integer.
        """
        if self.metrics.n_samples:
            raise ValueError("load_state_dict needs an empty record")
        kept = _state_history(state)  # a history it names, with that history's entries
        if kept != self.history:
            raise ValueError(f"the record state was kept with history={kept!r}, this record "
                             f"keeps history={self.history!r}: continue it with "
                             f"history={kept!r}")
        # read before anything changes
        start = check_positive_int(state["start"], "the record state's start", minimum=0)
        elapsed = check_nonnegative(state["elapsed"], "the record state's elapsed")
        delayed = self._held_labels(state.get("delayed"),
                                    start + PrequentialRecord.state_samples(state))
        query_state = self._query_state(state.get("label_query"))
        loaded = self._load_bounded(state) if self.classes is not None else self._load_full(state)
        if delayed is not None:
            _check_held_labels(delayed, loaded, start)
        with _query_restored_on_error(self.label_query):
            if self.label_query is not None and query_state is not None:
                self.label_query.load_state_dict(query_state)
                _check_query_counts(self.label_query, loaded)
        self.metrics, self.classes, self.n_labels = loaded.metrics, loaded.classes, loaded.n_labels
        self.windowed = loaded.windowed
        self.predictions, self.labels, self.labeled = (loaded.predictions, loaded.labels,
                                                       loaded.labeled)
        self.start, self.delayed = start, delayed
        self._started = time.perf_counter() - elapsed

    def _query_state(self, state: Optional[Mapping[str, Any]]) -> Optional[Mapping[str, Any]]:
        """``state`` (a record state's ``"label_query"``), refused unless it is
        ``None`` exactly when the record has no label query."""
        if (state is None) != (self.label_query is None):
            kept, here = ("no", "one") if state is None else ("a", "none")
            raise ValueError(f"the record state was kept with {kept} label query, this "
                             f"record has {here}: continue it as it was run")
        return state

    def _held_labels(self, state: Optional[Mapping[str, Any]],
                     end: int) -> Optional[DelayedLabels]:
        """The held labels of a record state (its ``"delayed"``) that ends at stream
        position ``end``, for this record's ``label_delay``; ``None`` for delay 0."""
        check_mapping(state, "the record state's delayed")
        if state is not None and "label_delay" not in state:
            raise ValueError("the held labels' state lacks the entries ['label_delay']")
        kept = 0 if state is None else state["label_delay"]
        if kept != self.label_delay:
            raise ValueError(f"the record state was kept with label_delay={kept!r}, this "
                             f"record has label_delay={self.label_delay}: continue it with "
                             f"label_delay={kept!r}")
        if state is None or self.delayed is None:
            return None
        delayed = DelayedLabels(self.label_delay, self.delayed.learn_on_arrival)
        delayed.load_state_dict(state, end)
        return delayed

    def _load_full(self, state: Mapping[str, Any]) -> PrequentialRecord:
        """A full record of this one's window holding the samples of ``state``."""
        arrays = [np.asarray(state[key]) for key in ("predictions", "labels", "labeled",
                                                     "seconds")]
        if any(array.ndim != 1 or array.size != arrays[0].size for array in arrays):
            raise ValueError(f"the per-sample arrays must be 1-D of one length, got shapes "
                             f"{[array.shape for array in arrays]}")
        # filled apart and adopted whole, so that a bad entry partway leaves this record as it was
        loaded = PrequentialRecord(history="full", window=self.window)
        for index, sample in enumerate(zip(*(array.tolist() for array in arrays))):
            try:
                loaded.update(*sample)
                _check_sample(*sample)
            except (TypeError, ValueError) as error:
                raise type(error)(f"the record state's sample {index}: {error}") from error
        return loaded

    def _load_bounded(self, state: Mapping[str, Any]) -> PrequentialRecord:
        """A bounded record of this one's window holding the counts of ``state``."""
        loaded = PrequentialRecord(history="bounded")
        metrics, classes = BoundedStreamMetrics(), RunningClassCounts()
        metrics.load_state_dict(state["metrics"])
        classes.load_state_dict(state["classes"])
        samples = PrequentialRecord.state_samples(state)
        labels = check_positive_int(state["n_labels"], "the record state's n_labels", minimum=0)
        if not metrics.n_samples == classes.samples == samples or not labels <= samples:
            raise ValueError(f"the record state covers {samples} samples with {labels} labels, "
                             f"its metrics {metrics.n_samples} and its class counts "
                             f"{classes.samples} samples")
        if classes.hits != metrics.accuracy.correct:
            raise ValueError(f"the record state's class counts hold {classes.hits} right "
                             f"predictions, its metrics {metrics.accuracy.correct}")
        loaded.windowed = self._bounded_windows(state.get("windows"), samples, labels)
        loaded.metrics, loaded.classes, loaded.n_labels = metrics, classes, labels
        return loaded

    def _bounded_windows(self, state: Optional[Mapping[str, Any]], samples: int,
                         labels: int) -> Optional[WindowedMetrics]:
        """The windows of a bounded record ``state`` (its ``"windows"``) of
        ``samples`` samples and ``labels`` labels, for this record's ``window``;
        ``None`` without."""
        if self.windowed is None:
            return None  # a run resumed without windows
        if state is None:
            raise ValueError(f"the record state was kept without windows, this record counts "
                             f"window={self.window}: a bounded history keeps no sample to "
                             f"count them from; continue it without window (or start again)")
        kept = state.get("size")  # checked as an integer by WindowedMetrics.load_state_dict
        if kept != self.window:
            raise ValueError(f"the record state was kept with window={kept}, this record "
                             f"counts window={self.window}: continue it with window={kept}")
        windowed = WindowedMetrics(self.windowed.size)
        windowed.load_state_dict(state)
        if windowed.n_samples != samples or windowed.n_labels != labels:
            raise ValueError(f"the record state covers {samples} samples with {labels} "
                             f"labels, its windows {windowed.n_samples} with "
                             f"{windowed.n_labels}")
        return windowed

    def _column_arrays(self) -> Dict[str, np.ndarray]:
        """A full record's columns as arrays :math:`(n,)`: ``predictions``,
        ``labels`` (``int64``) and ``labeled`` (``bool``)."""
        predictions, labels, labeled = self.predictions, self.labels, self.labeled
        assert predictions is not None and labels is not None and labeled is not None
        return {"predictions": to_numpy(predictions, np.int64),
                "labels": to_numpy(labels, np.int64), "labeled": to_numpy(labeled, bool)}

    def result(self) -> PrequentialResult:
        """Snapshot as a :class:`PrequentialResult` (wall time measured up to now)."""
        metrics = self.metrics.summary()
        columns: Dict[str, Optional[np.ndarray]]
        if self.classes is not None:
            metrics.update(self.classes.metrics(self.num_classes))
            columns = dict(correct=None, predictions=None, labels=None, labeled=None)
        else:
            assert isinstance(self.metrics, StreamMetrics)  # kept without class counts
            arrays = self._column_arrays()
            columns = dict(correct=self.metrics.correct, **arrays)
            metrics.update(class_metrics(arrays["labels"], arrays["predictions"],
                                         self.num_classes))
        metrics["seconds"] = time.perf_counter() - self._started
        metrics.update(_peak_memory_mb(self.cuda_device))
        metrics["n_labels"] = self.n_labels
        kept = (self.metrics.accuracy.points() if isinstance(self.metrics, BoundedStreamMetrics)
                else None)
        windows = None if self.windowed is None else self.windowed.columns(self.start)
        return PrequentialResult(**columns, metrics=metrics, start=self.start,
                                 history=self.history, kept=kept, windows=windows,
                                 window=self.window)


def prequential(learner: Learner, stream: Iterable[Tuple[Any, Any]], *,
                label_mask: LabelMask = None,
                transform: Optional[Callable[[Any], Any]] = None,
                progress: bool = True,
                progress_every: Optional[float] = None,
                desc: Optional[str] = "prequential",
                limit: Optional[int] = None,
                callback: Optional[Callable[[int, PrequentialRecord], None]] = None,
                start: int = 0,
                initial: Optional[Mapping[str, Any]] = None,
                flush_denormal: bool = True,
                history: str = "full",
                stop: Optional[Callable[[], bool]] = None,
                window: Optional[int] = None,
                label_delay: int = 0,
                learn_on_arrival: bool = True,
                label_query: Optional[LabelQuery] = None) -> PrequentialResult:
    r"""Run ``learner`` test-then-train over ``stream``.

    For the sample at position :math:`t`: its label is checked, ``x = transform(x)``, then
    ``learner.predict(x)``, then ``learner.learn(x, y if mask[t] else -1)``
    (one call ``learner.predict_learn(x, y if mask[t] else -1)`` where the
    learner has it). The latency recorded per sample covers ``predict`` and ``learn`` only.

    With ``label_delay`` :math:`d \geq 1` a labeled sample is learned as it
    arrives as if unlabeled, ``learner.learn(x, -1)``, and ``learner.learn(x,
    y)`` comes right after the sample at :math:`t + d`
    (:mod:`~torch_geometric_stream.evaluation.delay`); that sample's latency
    covers it.

    With ``label_query`` the learner's class probabilities decide which labels
    it gets (active learning): ``p = learner.predict_proba(x)``, the prediction
    ``p.argmax()``, then ``learner.learn(x, y if label_query(p) else -1)``.

    Args:
        learner (StreamLearner or FusedStreamLearner): any object with ``predict(x)`` and
            ``learn(x, y)``, or with ``predict_learn(x, y)`` (:data:`Learner`).
        stream (Iterable[tuple]): iterable of ``(x, y)`` pairs, ``x`` of shape :math:`(d,)`
            (array or tensor), ``y`` an integer class id.
        label_mask (np.ndarray or callable, optional): boolean array :math:`(T,)` indexed by stream
            position, or a function ``position -> bool`` (a Python, NumPy or 0-d tensor bool:
            anything else is a ``TypeError``); ``None`` labels every sample. (default: :obj:`None`)
        transform (callable, optional): applied to every ``x`` before the learner sees it (e.g.
            :func:`~torch_geometric_stream.evaluation.make_transform`); a
            :class:`~torch_geometric_stream.evaluation.StreamTransform` is put
            back as it was if the learner refuses the run's first row (a wrong
            width). (default: :obj:`None`)
        progress (bool, optional): show the progress: a tqdm bar with the running accuracy, or
            lines (``progress_every``). (default: :obj:`True`)
        progress_every (float, optional): with ``progress``, write a plain line to stderr every
            ``progress_every`` seconds instead of the bar
            (:class:`~torch_geometric_stream.evaluation.progress.ProgressLines`:
            done, accuracy, ms per sample, time left), for a log file where the
            bar's redraws would pile up; ``None``: as ``run`` does
            (:func:`~torch_geometric_stream.evaluation.progress.progress_interval`),
            the bar where stderr is a terminal (or in a Jupyter notebook), else
            a line every
            :data:`~torch_geometric_stream.evaluation.progress.LOG_PROGRESS_SECONDS`.
            (default: :obj:`None`)
        desc (str, optional): the first word of the bar or the lines (e.g. ``"seed 0"``); ``None``:
            none. (default: :obj:`"prequential"`)
        limit (int, optional): only the first ``limit`` samples of the stream are used
            (positions :math:`< \text{limit}`), also when resuming with ``start``.
            (default: :obj:`None`)
        callback (callable, optional): ``callback(position, record)`` after every sample, with the
            live :class:`PrequentialRecord` (e.g. to checkpoint
            ``record.result()`` every so often). (default: :obj:`None`)
        start (int, optional): skip the first ``start`` samples (resuming a run); positions,
            and so the label mask, stay aligned with the full stream. (default: :obj:`0`)
        initial (Mapping[str, Any], optional): the record of positions
            :math:`[s, \text{start})` kept before (:meth:`PrequentialRecord.state_dict`: the
            per-sample arrays, or with ``history="bounded"`` the running counts; e.g.
            from :func:`~torch_geometric_stream.checkpoint.load_checkpoint`): the result then
            covers the run from :math:`s` as if never interrupted. (default: :obj:`None`)
        flush_denormal (bool, optional): run inside
            :func:`~torch_geometric_stream.ops.flush_denormal` (denormal floats
            read as zero on the CPU, the calling thread's setting restored after):
            with weight decay, weights decayed into the denormal range otherwise
            slow the CPU step 15-fold.
            ``False`` leaves the setting as it is. (default: :obj:`True`)
        history (str, optional): what the run keeps of its samples (:data:`HISTORIES`):
            ``"full"``, the per-sample arrays of the result (about 18 bytes per
            sample); ``"bounded"``, running counts whose memory does not grow
            with the stream (:mod:`~torch_geometric_stream.evaluation.bounded`):
            the accuracy and every :func:`class_metrics` entry are exactly the
            full history's, the tail accuracies come from the kept position
            nearest to the tail's start (``metrics["tail_samples"]`` says how
            many samples each covers; exact up to 4096 samples, within
            0.0049 / 0.0025 / 0.0012 of the last 5 / 10 / 20 % after), the
            latency quantiles from a log-spaced histogram (within 0.5 % plus
            1 ns), and the result has no per-sample arrays. ``initial`` must
            come from a run of the same history. (default: :obj:`"full"`)
        stop (callable, optional): asked after every sample (after ``callback``): ``True`` ends the
            run there, before the next sample is read, and the result covers
            the samples done (e.g. Ctrl-C deferred to the end of a sample, see
            :class:`~torch_geometric_stream.cli.interrupts.DeferredInterrupt`).
            (default: :obj:`None`)
        window (int, optional): also the metrics of each consecutive window of ``window``
            samples from the run's first position (``result.windows``, see
            :class:`PrequentialResult`; the last, partial window included), as
            MOA's and CapyMOA's windowed evaluation: they show a drift and the
            recovery after it, which the running accuracy averages away. Counted
            as the run goes (:math:`O(1)` per sample, memory :math:`O(T /
            \text{window})`), under either history, through ``initial`` (a
            bounded ``initial`` must be kept with the same ``window``) and up to
            where ``stop`` ended the run. ``None``: no windows. (default: :obj:`None`)
        label_delay (int, optional): :math:`d`, the samples predicted between a labeled sample
            and the learning of its label (MOA's
            ``EvaluateInterleavedTestThenTrainSSLDelayed -k d``; CapyMOA's
            ``prequential_ssl_evaluation(..., delay_length=d + 1)``): ``0``, the
            usual test-then-train. The labels still held at the end are not
            learned; they are part of the record's state (``initial`` must be
            kept with the same delay and ``learn_on_arrival``). The learner
            needs ``learn``. (default: :obj:`0`)
        learn_on_arrival (bool, optional): with a ``label_delay``, learn a labeled sample without
            label as it arrives (``True``, the semi-supervised protocol of MOA
            and CapyMOA; a ``predict_learn`` learner is stepped through it) or
            only once its label comes (``False``: River's ``delay=d + 1`` and
            MOA's ``EvaluatePrequentialDelayed -k d + 1``; the learner needs
            ``predict``). (default: :obj:`True`)
        label_query (LabelQuery, optional): instead of ``label_mask``, a function of the learner's
            class probabilities for a sample (``predict_proba(x)``, e.g.
            :math:`(1, c)`; a tensor detached and on the CPU, read from the
            learner's device once for the query and the prediction,
            :func:`~torch_geometric_stream.evaluation.label_query.host_probabilities`)
            that says whether the sample's label is asked for,
            with ``state_dict()`` and ``load_state_dict()`` (its state is part
            of the record's, so ``initial`` must come from a run with one):
            e.g. :class:`~torch_geometric_stream.evaluation.label_query.UncertaintyQuery`.
            The learner needs ``predict_proba``; a ``predict_learn`` one is
            stepped through ``predict_proba`` and ``learn``. Combines with
            ``label_delay``: an asked label then comes late. (default: :obj:`None`)

    Returns:
        A :class:`PrequentialResult` over the positions
        :math:`[\text{start}, \min(T, \text{limit}))` (from :math:`s` with
        ``initial``; up to the sample after which ``stop`` said ``True``).

    Raises:
        ValueError: if no sample is left to evaluate (``"stream is empty"``),
            the label mask is shorter than the stream (before the first sample
            when the stream has a ``len``, else at the first position the mask
            lacks), ``progress_every`` is not > 0, ``initial`` does not
            end at ``start``, was kept with another ``history`` (or, bounded,
            another ``window``) or holds a class id not below
            ``learner.num_classes``, ``history`` names no history, ``window`` is
            below 1, ``label_delay`` below 0 (or ``initial`` kept with another),
            ``label_mask`` and ``label_query`` both given, an
            :class:`~torch_geometric_stream.evaluation.label_query.UncertaintyQuery`
            that has seen samples already without ``initial`` (another run's),
            ``initial`` whose held labels or rows, or whose ``label_query`` counts,
            are not those of its samples, a ``y`` is not a class
            id of the learner or an ``x`` holds more than one row (raised at
            that sample, before the transform and the learner see it), or the
            learner predicts
            a class outside ``[0, learner.num_classes)`` (raised at that sample).
            A learner without ``num_classes`` takes class ids below
            :data:`MAX_CLASSES` (:math:`2^{20}`), labels and predictions: its
            record sizes the per-class metrics by the largest id seen.
        TypeError: if a ``y`` or a prediction is not an integer (a float or
            bool label is refused, not truncated), a ``label_mask`` function
            returns no bool (raised at that sample, before the transform and the
            learner see it), ``history`` is no string, ``window`` is no integer,
            ``stream`` is not iterable (or is a string), a stream item is no
            ``(x, y)`` pair (raised at that item), ``initial`` is no mapping,
            ``desc`` is no string or ``None``, ``progress`` or ``flush_denormal`` is no bool,
            ``label_delay`` is no integer, ``learn_on_arrival`` no bool, the
            learner lacks a method the run calls (``predict_learn``, or
            ``predict`` and ``learn``; with a ``label_delay``, ``learn``, and
            ``predict`` where it is stepped without ``predict_learn``),
            ``label_query`` is not callable or the learner has no
            ``predict_proba`` for it, or
            ``transform``, ``callback`` or ``stop`` is not callable (before the
            first sample).
    """
    history = check_history(history)
    _check_arguments(stream, initial, desc, transform=transform, callback=callback, stop=stop)
    progress = check_bool(progress, "progress")
    flush_denormal = check_bool(flush_denormal, "flush_denormal")
    start = check_positive_int(start, "start", minimum=0)
    limit = None if limit is None else check_positive_int(limit, "limit")
    window = None if window is None else check_window(window)
    label_delay = check_label_delay(label_delay)
    learn_on_arrival = check_bool(learn_on_arrival, "learn_on_arrival")
    _check_query(label_query, label_mask, learner)
    progress_every = _progress_seconds(progress, progress_every)
    is_labeled, mask_size = _mask_function(label_mask)
    end = _run_end(stream, limit, mask_size)
    _check_learner(learner, label_delay, learn_on_arrival, label_query is not None)
    num_classes = _learner_classes(learner)
    fused_step = getattr(learner, "predict_learn", None)
    record = _new_record(learner, initial, num_classes, start=start, history=history,
                         window=window, label_delay=label_delay,
                         learn_on_arrival=learn_on_arrival, label_query=label_query)
    samples = itertools.islice(stream, start, limit)
    lines, bar = _progress_display(progress, progress_every, desc, end, start, record)
    flushing = flushing_denormal() if flush_denormal else contextlib.nullcontext()
    # put back if the run's first row is refused after the transform took it (see
    # _restore_transform): saved once per run, the loop pays nothing for it
    saved = transform.state_dict() if isinstance(transform, StreamTransform) else None
    done_before = record.metrics.n_samples
    try:
        with flushing, bar if bar is not None else contextlib.nullcontext():
            _step_samples(learner, fused_step, samples, start, record, is_labeled=is_labeled,
                          transform=transform, label_query=label_query,
                          num_classes=num_classes, callback=callback, lines=lines, bar=bar,
                          stop=stop)
            if bar is not None and record.metrics.n_samples > 0:
                _show_accuracy(bar, record)  # drawn as the bar closes
    except BaseException:
        _restore_transform(transform, saved, record.metrics.n_samples == done_before)
        raise
    if record.metrics.n_samples == 0:
        raise ValueError(f"stream is empty (no sample at position >= start={start}"
                         f"{'' if limit is None else f' and < limit={limit}'})")
    return record.result()


def _progress_seconds(progress: bool, progress_every: Optional[float]) -> Optional[float]:
    """The seconds between progress lines: ``progress_every`` once checked, else
    (with ``progress``) :func:`progress_interval`'s; ``None``: a bar, or no progress."""
    if progress_every is not None:
        check_positive(progress_every, "progress_every")
    elif progress:
        progress_every = progress_interval()
    return progress_every


def _run_end(stream: Iterable[Tuple[Any, Any]], limit: Optional[int],
             mask_size: Optional[int]) -> Optional[int]:
    """The position after the run's last sample, if known (``stream`` with a
    ``len``, or a ``limit``), once a mask array of ``mask_size`` entries is known to
    cover it."""
    # None: e.g. a generator
    length = len(cast(Sized, stream)) if hasattr(stream, "__len__") else None
    ends = [n for n in (length, limit) if n is not None]
    end = min(ends) if ends else None
    if mask_size is not None and length is not None and end is not None and mask_size < end:
        raise ValueError(f"label_mask has {mask_size} entries but the stream has {end} "
                         f"samples{'' if limit is None else f' (limit={limit})'}")
    return end


def _new_record(learner: Any, initial: Optional[Mapping[str, Any]], num_classes: Any, *,
                start: int, history: str, window: Optional[int], label_delay: int,
                learn_on_arrival: bool, label_query: Optional[LabelQuery]
                ) -> PrequentialRecord:
    """The record of a run from ``start``, ``initial`` loaded into it where given,
    the peak memory of ``learner``'s CUDA device (if any) counted from now."""
    cuda_device = _cuda_device(learner)
    if cuda_device is not None:
        torch.cuda.reset_peak_memory_stats(cuda_device)
    record = PrequentialRecord(start=start, cuda_device=cuda_device, history=history,
                               window=window, label_delay=label_delay,
                               learn_on_arrival=learn_on_arrival,
                               label_query=label_query,
                               num_classes=num_classes if isinstance(num_classes, int) else None)
    if initial is not None:
        _load_initial(record, initial, start, num_classes, getattr(learner, "in_channels", None))
    elif isinstance(label_query, UncertaintyQuery) and label_query.seen:
        raise ValueError(f"label_query has seen {label_query.seen} samples (of another run): "
                         f"a run's query counts its samples from the start of its record; "
                         f"pass a new one, or resume that run from its record "
                         f"(initial=...)")
    return record


def _progress_display(progress: bool, progress_every: Optional[float], desc: Optional[str],
                      end: Optional[int], start: int, record: PrequentialRecord
                      ) -> Tuple[Optional[ProgressLines], Optional[tqdm]]:
    """``(lines, bar)``: what shows the progress of a run from ``start`` to ``end``
    (``None`` if not known), lines every ``progress_every`` seconds or else a bar;
    neither without ``progress``."""
    lines = None if not progress or progress_every is None else ProgressLines(
        None if end is None else max(0, end - record.start), every=progress_every, desc=desc,
        done_before=record.metrics.n_samples)
    # no bar object at all without a bar: a tqdm, even disabled, makes a
    # multiprocessing lock, which a worker process ended from outside would leak
    # the bar counts the samples itself (not wrapping them), so that it is still open
    # after the last one, to show the whole run's accuracy
    bar = None if not progress or lines is not None else tqdm(
        total=None if end is None else max(0, end - start), desc=desc, unit="sample")
    return lines, bar


def _step_samples(learner: Any, fused_step: Optional[Callable[[Any, int], Any]],
                  samples: Iterable[Any], start: int, record: PrequentialRecord, *,
                  is_labeled: Callable[[int], bool],
                  transform: Optional[Callable[[Any], Any]], label_query: Optional[LabelQuery],
                  num_classes: Any, callback: Optional[Callable[[int, PrequentialRecord], None]],
                  lines: Optional[ProgressLines], bar: Optional[tqdm],
                  stop: Optional[Callable[[], bool]]) -> None:
    """Predict then learn each of ``samples`` (the first at position ``start``)
    into ``record``, showing the progress on ``lines`` or ``bar``, until they end
    or ``stop`` says ``True`` after one; with ``learner``'s ``fused_step`` (its
    ``predict_learn``) where it has one."""
    # stepped with predict and learn only where it has no predict_learn: a StreamLearner then
    plain = cast(StreamLearner, learner)
    cuda_device = record.cuda_device
    for position, item in enumerate(samples, start=start):
        x, y = _sample_pair(item, position)
        # the label and its mask first: a sample rejected for either leaves the
        # transform as it was
        label = _stream_label(y, position, num_classes)
        target = label if is_labeled(position) else -1
        if transform is not None:
            x = transform(x)
        tic = time.perf_counter()
        if label_query is not None:
            prediction, target = _queried_step(learner, label_query, record.delayed, x,
                                               label, position, num_classes)
        elif record.delayed is not None:
            prediction = _delayed_step(learner, fused_step, record.delayed, x, target,
                                       position, num_classes)
        elif fused_step is not None:
            prediction = _prediction(fused_step(x, target), position, num_classes)
        else:
            prediction = _prediction(plain.predict(x), position, num_classes)
            plain.learn(x, target)
        if cuda_device is not None:
            torch.cuda.synchronize(cuda_device)
        record.update(prediction, label, target != -1, time.perf_counter() - tic)
        if callback is not None:
            callback(position, record)
        if lines is not None:
            lines.update(record.metrics.n_samples, record.metrics.running_accuracy)
        elif bar is not None:
            if record.metrics.n_samples % POSTFIX_EVERY == 0:
                _show_accuracy(bar, record)
            bar.update()
        if stop is not None and stop():
            break


def _sample_pair(item: Any, position: int) -> Tuple[Any, Any]:
    """The ``(x, y)`` of the stream ``item`` at ``position``, ``x`` one row."""
    try:
        x, y = item
    except (TypeError, ValueError):
        raise _not_a_pair(item, position) from None
    if getattr(x, "ndim", 1) > 1 and len(x) > 1:  # a learner would take the batch
        raise ValueError(f"x at stream position {position} holds {len(x)} rows; "
                         f"prequential steps one row at a time")
    return x, y


def _load_initial(record: PrequentialRecord, initial: Mapping[str, Any], start: int,
                  num_classes: Any, in_channels: Any) -> None:
    """Load ``initial`` into the empty ``record`` of a run from ``start`` with a
    learner of ``num_classes`` (and, where it has them as an ``int``, rows of
    ``in_channels`` features, as the held ones must be); a refusal leaves the
    record's label query as it was."""
    with _query_restored_on_error(record.label_query):
        record.load_state_dict(initial)
        if record.start + record.metrics.n_samples != start:
            raise ValueError(f"initial covers positions [{record.start}, "
                             f"{record.start + record.metrics.n_samples}) but start={start}")
        if num_classes is not None and record.largest_class() >= num_classes:
            raise ValueError(f"initial holds class id {record.largest_class()}, but the "
                             f"learner has num_classes={num_classes}: resume with a learner "
                             f"of the run's classes")
        if not isinstance(num_classes, int) and record.largest_class() >= MAX_CLASSES:
            raise ValueError(f"initial holds class id {record.largest_class()}, but a run "
                             f"whose learner has no num_classes takes class ids below "
                             f"{MAX_CLASSES} (2**20): resume with a learner of the run's "
                             f"classes")
        if record.delayed is not None and isinstance(in_channels, int):
            for position, width in record.delayed.row_widths():
                if width != in_channels:
                    features = ("no feature dimension (no tensor, array or list of one "
                                "shape)" if width is None else f"{width} features")
                    raise ValueError(f"initial holds back the row of position {position} "
                                     f"with {features}, but the learner has "
                                     f"in_channels={in_channels}")


def _query_restored_on_error(query: Optional[LabelQuery]) -> AbstractContextManager[None]:
    """A block that, if it raises, puts ``query``'s state (if any) back as it was."""
    if query is None:
        return contextlib.nullcontext()
    return restored_on_error(query.state_dict(), query.load_state_dict)


def _not_a_pair(item: Any, position: int) -> TypeError:
    """The error for a stream ``item`` at ``position`` that is no ``(x, y)`` pair,
    saying what it is."""
    shape = getattr(item, "shape", None)
    what = type(item).__name__ + (f" of shape {tuple(shape)}" if shape is not None
                                  else f" of length {len(item)}" if isinstance(item, Sized)
                                  else "")
    return TypeError(f"stream item at position {position} must be an (x, y) pair, got {what}")


def _restore_transform(transform: Any, saved: Optional[Dict[str, Any]], first: bool) -> None:
    """Put ``transform`` back to its ``saved`` state (``None``: no
    :class:`~torch_geometric_stream.evaluation.StreamTransform`) if the run stopped
    at its ``first`` sample: the transform may have taken a row that the learner
    then refused. Only the first can be: the label is checked before the
    transform sees the row, the package's transforms refuse NaN, inf and a width
    other than the one they have seen, and give finite ``float32`` rows, and once
    the learner took a row of the transform's output, that width is the learner's
    too. (A learner that refuses a later finite row of that width keeps it in the
    transform: one normalizing raw rows refuses a row whose L2 norm overflows
    ``float32``, which only a pipeline without a bounded end, e.g. an unclipped
    quantile range without :class:`L2Normalize`, can give.)"""
    if first and saved is not None:
        transform.load_state_dict(saved)


def _delayed_step(learner: Any, fused_step: Optional[Callable[[Any, int], Any]],
                  delayed: DelayedLabels, x: Any, target: int, position: int,
                  num_classes: Optional[int]) -> int:
    """One sample of a run with ``delayed`` labels: predict ``x``; learn it now
    without label if it has none (``target`` -1) or ``delayed.learn_on_arrival``;
    hold its label; then learn the labels due."""
    if fused_step is not None and (target == -1 or delayed.learn_on_arrival):
        prediction = _prediction(fused_step(x, -1), position, num_classes)
        if target != -1:
            delayed.push(position, x, target)
        _learn_due(learner, delayed, position)
    else:
        prediction = _prediction(learner.predict(x), position, num_classes)
        _learn_or_hold(learner, delayed, x, target, position)
    return prediction


def _queried_step(learner: Any, label_query: LabelQuery, delayed: Optional[DelayedLabels],
                  x: Any, label: int, position: int,
                  num_classes: Optional[int]) -> Tuple[int, int]:
    """One sample of a run with ``label_query``: the prediction from the learner's
    class probabilities, which decide whether it learns ``label`` (or, with
    ``delayed``, holds it); the prediction and the label given (-1 for none)."""
    probabilities = learner.predict_proba(x)
    try:  # read from the learner's device once, for the query and the prediction
        probabilities = host_probabilities(probabilities)
        asked = label_query(probabilities)  # checks them first: one sample's, finite
    except (TypeError, ValueError) as error:
        kind = TypeError if isinstance(error, TypeError) else ValueError
        raise kind(f"the learner's class probabilities for the sample at position "
                   f"{position}: {error}") from error
    prediction = _prediction(_top_class(probabilities), position, num_classes)
    target = label if asked else -1
    _learn_or_hold(learner, delayed, x, target, position)
    return prediction, target


def _top_class(probabilities: Any) -> Any:
    """The class of the largest of one sample's ``probabilities`` (:math:`(c,)` or
    :math:`(1, c)`: ``argmax`` flattens them), the first of a tie, as ``predict``
    takes it."""
    if isinstance(probabilities, Tensor):
        return probabilities.argmax()
    return np.asarray(probabilities).argmax()


def _learn_or_hold(learner: Any, delayed: Optional[DelayedLabels], x: Any, target: int,
                   position: int) -> None:
    """Learn ``x`` with ``target``, or with ``delayed`` hold a label (``x`` is then
    learned without it at once where ``delayed.learn_on_arrival``) and learn the
    labels due."""
    if delayed is None or target == -1:
        learner.learn(x, target)
    else:
        if delayed.learn_on_arrival:
            learner.learn(x, -1)
        delayed.push(position, x, target)
    if delayed is not None:
        _learn_due(learner, delayed, position)


def _learn_due(learner: Any, delayed: DelayedLabels, position: int) -> None:
    """Learn the held labels due once the sample at ``position`` is done."""
    for row, label in delayed.due(position):
        learner.learn(row, label)


def _check_learner(learner: Any, label_delay: int, learn_on_arrival: bool,
                   queried: bool) -> None:
    """Raise before the first sample unless ``learner`` has the methods the run
    calls: ``predict_learn``, or ``predict`` and ``learn``; with a label delay,
    ``learn`` for the labels due, and ``predict`` where a labeled sample is not
    stepped through ``predict_learn``; when ``queried``, ``learn`` (its
    ``predict_proba`` is checked with the query)."""
    fused = callable(getattr(learner, "predict_learn", None))
    needed = (["learn"] if label_delay or queried or not fused else []) + (
        ["predict"] if not queried and not (fused and (learn_on_arrival or not label_delay))
        else [])
    missing = [name for name in needed if not callable(getattr(learner, name, None))]
    if not missing:
        return
    if queried:  # predict_learn is not used: the query decides on the probabilities
        raise TypeError(f"label_query needs the learner's predict_proba and learn: "
                        f"{type(learner).__name__} lacks {' and '.join(missing)}")
    if label_delay:
        raise TypeError(f"label_delay needs the learner's {' and '.join(missing)}, which "
                        f"{type(learner).__name__} lacks")
    raise TypeError(f"the learner needs predict_learn, or predict and learn: "
                    f"{type(learner).__name__} lacks {' and '.join(missing)}")


def _check_query(label_query: Any, label_mask: LabelMask, learner: Any) -> None:
    """Raise before the first sample unless ``label_query`` is ``None`` or a callable
    the run can use: without ``label_mask``, for a learner with ``predict_proba``."""
    if label_query is None:
        return
    if not callable(label_query):
        raise TypeError(f"label_query must be callable, got {type(label_query).__name__}")
    if label_mask is not None:
        raise ValueError("label_mask and label_query both decide which labels the learner "
                         "gets: give one of them")
    if not callable(getattr(learner, "predict_proba", None)):
        raise TypeError(f"label_query needs the learner's class probabilities, but "
                        f"{type(learner).__name__} has no predict_proba")


def _check_arguments(stream: Any, initial: Any, desc: Any, **functions: Any) -> None:
    """``TypeError`` naming the first argument of :func:`prequential` of another type:
    ``stream`` not iterable (or a string), ``initial`` no mapping, ``desc`` no string
    or ``None``, or one of ``functions`` (given, ``None`` allowed) not callable:
    they would fail only once a sample was learned."""
    if isinstance(stream, (str, bytes)) or not any(hasattr(type(stream), method)
                                                   for method in ("__iter__", "__getitem__")):
        raise TypeError(f"stream must be an iterable of (x, y) pairs, got "
                        f"{type(stream).__name__}")
    check_mapping(initial, "initial", " (a record state)")
    if desc is not None and not isinstance(desc, str):
        raise TypeError(f"desc must be a string or None, got {type(desc).__name__}")
    for name, function in functions.items():
        if function is not None and not callable(function):
            raise TypeError(f"{name} must be callable or None, got {type(function).__name__}")


def _show_accuracy(bar: tqdm, record: PrequentialRecord) -> None:
    """Set ``bar``'s postfix to the running accuracy of ``record``, shown at its next redraw."""
    bar.set_postfix(acc=f"{record.metrics.running_accuracy:.4f}", refresh=False)


def plot_running_accuracy(results: Mapping[str, PrequentialResult], path: PathLike,
                          title: Optional[str] = None, num_points: int = 200, *,
                          image_format: Optional[str] = None) -> Path:
    """Plot the running accuracy of one or more runs (legend = the mapping's keys) to
    ``path`` (in ``image_format`` if given, see :func:`plot_curves`), with the
    windowed accuracy of those that have windows.

    Args:
        results (Mapping[str, PrequentialResult]): the runs, by legend.
        path (str or Path): the image file.
        title (str, optional): the plot's title. (default: :obj:`None`)
        num_points (int, optional): the most points per curve. (default: ``200``)
        image_format (str, optional): as in :func:`plot_curves`.
            (default: :obj:`None`)
    """
    curves = {}
    for name, result in results.items():
        counts, accuracy = result.accuracy_curve(num_points)
        curves[name] = (result.start + counts, accuracy)
    windows = {name: (result.window, result.windows) for name, result in results.items()
               if result.window is not None and result.windows is not None}
    return plot_curves(curves, path, title=title, image_format=image_format, windows=windows)


def plot_curves(curves: Mapping[str, Tuple[Any, Any]], path: PathLike,
                title: Optional[str] = None, *, image_format: Optional[str] = None,
                windows: Optional[Mapping[str, Tuple[int, Mapping[str, Any]]]] = None) -> Path:
    """Plot running accuracy curves to ``path``, in the format its suffix names
    (PNG, PDF, SVG, ...; see :func:`check_plot_path`), or in ``image_format``
    if given.

    Args:
        curves (Mapping[str, tuple]): ``name -> (stream positions, running accuracy)``
            (e.g. the ``"curve"`` entries of the CLI's JSON records).
        path (str or Path): the image file.
        title (str, optional): the plot's title. (default: :obj:`None`)
        image_format (str, optional): the format (``"png"``, ...), whatever
            ``path``'s suffix (e.g. the partial plot ``run.png.partial`` of a
            ``run`` that Ctrl-C stopped). (default: :obj:`None`)
        windows (Mapping[str, tuple], optional): ``name -> (N, windows)`` of some
            of the curves: the samples per window and their metrics
            (:attr:`PrequentialResult.window` and
            :attr:`~PrequentialResult.windows`, or a record's ``eval_window`` and
            ``"windows"`` entries), whose accuracy is drawn as thin steps over
            each window, in its curve's colour. (default: :obj:`None`)
    """
    path = check_plot_path(path, image_format)
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    figure = Figure(figsize=(6.4, 4.0))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    windows = windows or {}
    for name, (positions, accuracy) in curves.items():
        (line,) = axes.plot(positions, accuracy, label=name)
        if name in windows:
            size, columns = windows[name]
            edges = np.append(columns["start"], columns["end"][-1:])
            axes.stairs(columns["accuracy"], edges, color=line.get_color(), linewidth=0.8,
                        alpha=0.7, baseline=None, label=f"{name}, windows of {size}")
    ylabel = "accuracy: running, and per window (steps)" if windows else "running accuracy"
    axes.set(xlabel="stream position", ylabel=ylabel, ylim=(0.0, 1.0), title=title)
    axes.grid(alpha=0.3)
    axes.legend()
    return atomic_savefig(path, figure, format=image_format, dpi=120, bbox_inches="tight")


def check_plot_path(path: PathLike, image_format: Optional[str] = None) -> Path:
    """``path`` as a :class:`~pathlib.Path` once matplotlib is importable and can
    write the format its suffix names (no suffix: PNG), or ``image_format`` if
    given, so that a run can refuse a bad plot path before it starts rather than after.

    Args:
        path (str or Path): the image file.
        image_format (str, optional): the format, whatever ``path``'s suffix.
            (default: :obj:`None`)

    Raises:
        ImportError: without matplotlib.
        ValueError: for a suffix matplotlib cannot write (the message lists those
            it can).
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
    except ImportError as error:
        raise ImportError("plotting needs matplotlib: pip install matplotlib "
                          "(or torch_geometric_stream[plot])") from error
    path = Path(path)
    formats = FigureCanvasAgg.get_supported_filetypes()
    suffix = (path.suffix if image_format is None else image_format).lower().removeprefix(".")
    if suffix and suffix not in formats:
        raise ValueError(f"cannot plot to {path}: matplotlib writes {', '.join(sorted(formats))} "
                         f"files, not {suffix!r}")
    return path


def _mask_function(label_mask: LabelMask) -> Tuple[Callable[[int], bool], Optional[int]]:
    """Turn ``label_mask`` into ``position -> bool``, with the array mask's length
    (``None`` for no mask or a function)."""
    if label_mask is None:
        return (lambda position: True), None
    if callable(label_mask):
        def from_function(position: int) -> bool:
            labeled = label_mask(position)
            if isinstance(labeled, (bool, np.bool_)):
                return bool(labeled)  # the common case: no message built per sample
            if isinstance(labeled, Tensor) and labeled.dtype == torch.bool and labeled.dim() == 0:
                return bool(labeled.item())
            return check_bool(labeled, f"label_mask({position})")  # raises, naming it

        return from_function, None
    mask = np.asarray(label_mask)
    if mask.dtype != bool or mask.ndim != 1:
        raise TypeError(f"label_mask must be a 1-D boolean array, got dtype {mask.dtype} "
                        f"and shape {mask.shape}")

    def is_labeled(position: int) -> bool:
        if position >= mask.size:
            raise ValueError(f"label_mask has {mask.size} entries but the stream is longer")
        return bool(mask[position])

    return is_labeled, mask.size


def _as_int(value: Any, name: str) -> int:
    """A single class id from an int, a NumPy scalar/array or a tensor with one element
    of an integer dtype (a float or bool is refused, not truncated)."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value)  # a Python int beyond int64 too, for the message of _class_id
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError(f"{name} must hold one class id, got shape {tuple(value.shape)}")
        if value.dtype == torch.bool or value.dtype.is_floating_point or value.dtype.is_complex:
            raise TypeError(f"{name} must be an integer class id, got a {value.dtype} tensor")
        return int(value.item())
    array = np.asarray(value)
    if array.size != 1:
        raise ValueError(f"{name} must be one integer class id, got {value!r}")
    if array.dtype.kind not in "iu":
        raise TypeError(f"{name} must be one integer class id, got {value!r}")
    return int(array.item())


def _learner_classes(learner: Any) -> Any:
    """``learner.num_classes`` as an ``int`` where it is an integer (a NumPy integer,
    a 0-d integer tensor a module keeps as a buffer, ...), else as the learner has
    it: ``None`` when it has none, or e.g. a float ``3.0``, which still bounds the
    class ids but leaves the record sized by the largest class id seen."""
    num_classes = getattr(learner, "num_classes", None)
    try:
        return operator.index(num_classes)  # type: ignore[arg-type]  # None: TypeError
    except TypeError:
        return num_classes


def _class_id(value: Any, name: str, num_classes: Optional[int]) -> int:
    """``value`` as a class id, at least 0 and, where the learner says, below its
    ``num_classes``; below :data:`MAX_CLASSES` where that is no ``int`` (the record
    is then sized by the largest class id seen)."""
    class_id = _as_int(value, name)
    if class_id < 0 or (num_classes is not None and class_id >= num_classes):
        bound = "" if num_classes is None else f" and < num_classes={num_classes}"
        raise ValueError(f"{name} must be a class id >= 0{bound}, got {class_id}")
    if class_id >= MAX_CLASSES and not isinstance(num_classes, int):
        raise ValueError(f"{name} must be a class id < {MAX_CLASSES} (2**20) for a learner "
                         f"without num_classes, whose record sizes its per-class metrics by "
                         f"the largest class id seen, got {class_id}: give the learner a "
                         f"num_classes")
    return class_id


def _stream_label(y: Any, position: int, num_classes: Optional[int]) -> int:
    """The class id ``y`` of the sample at ``position``, checked before the learner
    sees the sample (every sample is scored against its label, labeled for the
    learner or not)."""
    return _class_id(y, f"y at stream position {position}", num_classes)


def _prediction(value: Any, position: int, num_classes: Optional[int]) -> int:
    """The learner's prediction for the sample at ``position`` as a class id: a
    learner that predicts outside its classes stops the run there, not in the
    metrics at its end."""
    return _class_id(value, f"the prediction at stream position {position}", num_classes)


def _cuda_device(learner: Any) -> Optional[torch.device]:
    """The learner's ``device`` attribute if it names a CUDA device, else ``None``."""
    device = getattr(learner, "device", None)
    if isinstance(device, (str, torch.device)) and torch.device(device).type == "cuda":
        return torch.device(device)
    return None


def _peak_memory_mb(cuda_device: Optional[torch.device]) -> Dict[str, Optional[float]]:
    """Peak resident memory of the process (plus the CUDA peak when on a GPU), in MiB.

    ``ru_maxrss`` is the peak over the whole process lifetime, not only the
    run; it is ``None`` where :mod:`resource` does not exist (Windows).
    """
    try:
        import resource
    except ImportError:
        return {"peak_memory_mb": None}
    max_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rss_mb = max_rss / 2**20 if sys.platform == "darwin" else max_rss / 2**10
    if cuda_device is None:
        return {"peak_memory_mb": rss_mb}
    cuda_mb = torch.cuda.max_memory_allocated(cuda_device) / 2**20
    return {"peak_memory_mb": rss_mb + cuda_mb, "peak_cuda_memory_mb": cuda_mb}
