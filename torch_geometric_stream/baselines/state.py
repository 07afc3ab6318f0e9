"""State saving and all-or-nothing state loading for the NumPy baselines."""
from __future__ import annotations

import abc
import inspect
import math
from contextlib import nullcontext
from typing import Any, Callable, ContextManager, Dict, Mapping, Tuple, Union

import numpy as np
import torch
from torch import Tensor

from torch_geometric_stream.base import restored_on_error
from torch_geometric_stream.validation import (as_label_vector, check_bool, check_finite,
                                               check_kept_settings, check_positive_int)

#: A baseline's state as it computes with it: NumPy arrays, and NumPy scalars for
#: its counters.
NumpyState = Dict[str, Union[np.ndarray, np.generic]]
#: A baseline's ``state_dict``: :data:`NumpyState` with tensors for the arrays and
#: plain Python scalars for the counters, and the settings it was kept with
#: (:data:`SETTINGS_ENTRY`).
TensorState = Dict[str, Union[Tensor, bool, int, float, Dict[str, Any]]]
#: The entry of a state that holds the settings it was kept with, by name.
SETTINGS_ENTRY = "settings"
#: The largest value of a counter of a state (an ``int64`` entry).
COUNTER_MAX = int(np.iinfo(np.int64).max)


#: The largest magnitude of a feature a baseline learns (its rows are ``float32``).
FEATURE_MAX = float(np.finfo(np.float32).max)


def check_reachable(value: Any, name: str, low: float, high: float) -> None:
    """Raise ``ValueError`` unless every value of ``value``, a state's float entry
    ``name``, lies in ``[low, high]``: the values a run can reach, where beyond
    them later arithmetic (squares of distances, sums of them, exponentials of
    decays) would overflow to inf or NaN (a finite ``1e300`` loads as a float).

    Args:
        value (Any): the entry (an array or a scalar, already checked finite).
        name (str): the entry's name, for the message.
        low (float): the least value a run reaches.
        high (float): the largest value a run reaches.
    """
    array = np.asarray(value, dtype=np.float64)
    outside = array[(array < low) | (array > high)]
    if outside.size:
        raise ValueError(f"state {name} must hold values in [{low:g}, {high:g}] (what a run "
                         f"reaches; beyond, later arithmetic overflows), got {outside[0]:g}")


#: The relative rounding of one correctly rounded float64 operation (a quotient,
#: a square root), with a margin: a few units in the last place.
ULPS = 4.0 * float(np.finfo(np.float64).eps)


def rounding(dim: int) -> float:
    r"""A bound, relative to the magnitudes summed, on the rounding error of a
    ``float64`` sum of ``dim`` products (a squared distance, a sum of squares,
    a dot product) in any order: Higham's :math:`\gamma_{dim}` with a margin of 8.

    Args:
        dim (int): the number of products summed.
    """
    return 8.0 * (dim + 2) * float(np.finfo(np.float64).eps)


def check_derived(value: Any, expected: Any, tolerance: Any, name: str, source: str) -> None:
    """Raise ``ValueError`` unless every value of ``value``, a state's entry
    ``name`` that the learner computes from others, lies within ``tolerance`` of
    ``expected``, what those give (``source``, for the message): a run's state
    always does (rounding aside), and a state whose entries disagree would be
    computed with one here and the other there. Equal infinities agree.

    Args:
        value (np.ndarray or float): the entry.
        expected (np.ndarray or float): what the other entries give, of its shape.
        tolerance (np.ndarray or float): the largest difference allowed
            (broadcast to the shape).
        name (str): the entry's name, for the message.
        source (str): what it is computed as, for the message.
    """
    value, expected = np.asarray(value, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    with np.errstate(invalid="ignore"):  # inf - inf: they agree where they are equal
        off = ~((np.abs(value - expected) <= tolerance) | (value == expected))
    if off.any():
        index = tuple(int(i) for i in np.argwhere(off)[0])
        where = f" at {list(index)}" if index else ""
        raise ValueError(f"state {name} must be {source}, as a run keeps it; got "
                         f"{float(value[index])!r}{where} where that is "
                         f"{float(expected[index])!r}")


def check_squared_distances(points: np.ndarray, dist2: np.ndarray, rows: np.ndarray,
                            name: str, source: str) -> None:
    r"""Raise ``ValueError`` unless ``dist2[i, j]``, a state's entry ``name``, is
    the squared distance between ``points[i]`` and ``points[j]`` (``source``, for
    the message) for every two distinct ``i, j`` of ``rows``, to within
    :func:`rounding` of :math:`\|p_i\|^2 + \|p_j\|^2` (compared with
    :math:`\|p_i\|^2 + \|p_j\|^2 - 2 p_i^\top p_j`, one matrix product:
    :math:`O(|rows|^2 d)`); the diagonal and the other entries are not read.

    Args:
        points (np.ndarray): the points :math:`(n, d)`.
        dist2 (np.ndarray): the entry :math:`(n, n)`.
        rows (np.ndarray): the indices of the points compared :math:`(k,)`.
        name (str): the entry's name, for the message.
        source (str): what it is computed as, for the message.
    """
    kept = points[rows]
    norms = np.einsum("ij,ij->i", kept, kept)
    scale = norms[:, None] + norms[None, :]
    pairs = np.ix_(rows, rows)
    expected = dist2.copy()
    expected[pairs] = scale - 2.0 * (kept @ kept.T)
    expected[rows, rows] = dist2[rows, rows]
    tolerance = np.zeros(dist2.shape)
    tolerance[pairs] = rounding(points.shape[1]) * scale
    check_derived(dist2, expected, tolerance, name, source)


def check_counter_room(counter: int, steps: int, name: str) -> None:
    """Raise ``ValueError`` unless a counter (the state entry ``name``, an
    ``int64``: at most :data:`COUNTER_MAX`) at ``counter`` can tick ``steps``
    more times: a batch it cannot learn whole changes nothing (beyond
    :data:`COUNTER_MAX`, the state would not be saved). A learner whose counter
    is full learns no more samples, and its state does not load
    (:func:`check_loaded_counter`).

    Args:
        counter (int): the counter's value.
        steps (int): the ticks wanted (the rows of a batch).
        name (str): the entry's name, for the message.
    """
    if steps > COUNTER_MAX - counter:
        raise ValueError(f"state {name} is {counter}, {COUNTER_MAX - counter} below its "
                         f"largest value {COUNTER_MAX} (int64): a batch of {steps} would "
                         f"overflow it")


def float64_rows(x: Tensor) -> np.ndarray:
    """The rows of ``x`` :math:`(n, d)` as a ``float64`` NumPy array :math:`(n, d)`,
    to iterate one row at a time (typed as a bare ``np.ndarray``: NumPy 2.2's
    stubs, the newest on Python 3.10, take each row of an array of unknown shape
    for a scalar)."""
    return x.detach().cpu().numpy().astype(np.float64)


def predict_rows(x: Tensor, predict_one: Callable[[np.ndarray], np.ndarray],
                 within: Callable[[], ContextManager[Any]] = nullcontext) -> Tensor:
    r"""Class probabilities :math:`(n, c)` of the rows ``x`` :math:`(n, d)`, in
    ``float32`` on ``x``'s device: ``predict_one`` of each row in ``float64``,
    :math:`(d,) \to (c,)`, one after another, inside ``within()``."""
    rows = float64_rows(x)
    with within():
        out = np.stack([predict_one(row) for row in rows])
    return torch.from_numpy(out).to(dtype=torch.float32, device=x.device)


def check_loaded_counter(value: Any, name: str) -> int:
    """Return ``value``, a state's counter entry ``name``, as an ``int`` if it is
    an integer in :math:`[0,` :data:`COUNTER_MAX` :math:`)`: a loaded learner has
    room to count at least its next sample (:func:`check_counter_room`).

    Args:
        value (Any): the entry (a scalar, already checked an ``int64``).
        name (str): the entry's name, for the messages.

    Raises:
        ValueError: a negative counter, or one at :data:`COUNTER_MAX`.
    """
    counter = check_positive_int(np.asarray(value).item(), f"state {name}", minimum=0)
    if counter >= COUNTER_MAX:
        raise ValueError(f"state {name} must be below {COUNTER_MAX}, the largest int64, "
                         f"got {counter}: a learner loaded with it could not count one "
                         f"more sample")
    return counter


def check_shape(value: np.ndarray, name: str, expected: Tuple[int, ...]) -> np.ndarray:
    """Return ``value``, a state's entry ``name``, as an array of the shape
    ``expected``, raising ``ValueError`` if it has another. An empty value takes
    any shape of no elements: JSON writes every empty array as ``[]``, one
    dimension (an empty window, TLP's ``dist2`` once its bandwidth is frozen).

    Args:
        value (np.ndarray): the entry.
        name (str): the entry's name, for the message.
        expected (Tuple[int, ...]): the shape it must have.
    """
    if value.size == 0 and math.prod(expected) == 0:
        return value.reshape(expected)
    if value.shape != expected:
        raise ValueError(f"state {name} has shape {value.shape}, expected {expected}")
    return value


def check_state_entry(value: Any, name: str, like: Union[np.ndarray, np.generic],
                      finite: bool = True) -> None:
    """Raise unless ``value``, an entry of a state, holds what ``like`` (the
    learner's own entry) can take without a loss: booleans for a ``bool`` entry;
    integers in the range of an integer entry's dtype (a counter of ``int64``
    below :math:`2^{63}`); real numbers (``int`` or ``float``), never NaN and with
    ``finite`` never inf, for a float entry. A scalar entry is checked as
    :func:`~torch_geometric_stream.validation.check_bool`,
    :func:`~torch_geometric_stream.validation.check_positive_int` and
    :func:`~torch_geometric_stream.validation.check_finite` check an argument.

    Args:
        value (Any): the entry as given (an array or a scalar).
        name (str): the entry's name, for the messages.
        like (np.ndarray or np.generic): the learner's own entry.
        finite (bool, optional): whether a float array holds finite values only.
            (default: :obj:`True`)

    Raises:
        TypeError: values of another kind (complex numbers, strings, objects,
            booleans for numbers, numbers for booleans, floats for integers).
        ValueError: an integer outside the dtype's range, NaN, or an inf where
            ``finite``.
    """
    array, kind = np.asarray(value), like.dtype.kind
    if np.ndim(like) == 0:
        item, what = array.item(), f"state {name}"
        if kind == "b":
            check_bool(item, what)
        elif kind in "iu":
            bounds = np.iinfo(like.dtype)
            check_positive_int(item, what, minimum=int(bounds.min), maximum=int(bounds.max))
        else:
            check_finite(item, what)
    elif kind == "b":
        if array.dtype.kind != "b":
            raise TypeError(f"state {name} must hold booleans, got {array.dtype}")
    elif kind in "iu":
        if array.dtype.kind not in "iu":
            raise TypeError(f"state {name} must hold integers, got {array.dtype}")
        bounds = np.iinfo(like.dtype)
        outside = [int(item) for item in (array.min(), array.max())
                   if not bounds.min <= int(item) <= bounds.max] if array.size else []
        if outside:  # NumPy would wrap it around
            raise ValueError(f"state {name} must hold integers in [{bounds.min}, "
                             f"{bounds.max}] ({like.dtype}), got {outside[0]}")
    elif array.dtype.kind not in "iuf":
        raise TypeError(f"state {name} must hold real numbers, got {array.dtype}")
    elif np.isnan(array).any() or (finite and np.isinf(array).any()):
        raise ValueError(f"state {name} holds NaN" + " or inf" * finite + " values")


class CheckedStateLoad(abc.ABC):
    """Mixin giving a ``state_dict`` that :func:`torch.load` reads by default and a
    ``load_state_dict`` that changes nothing when it fails.

    :meth:`state_dict` is the subclass's :meth:`_numpy_state` with every array as
    a tensor and every NumPy scalar as a Python scalar, so that
    ``torch.load(file)`` (``weights_only=True``, torch's default since 2.6)
    reads what ``torch.save(learner.state_dict(), file)`` wrote.
    :meth:`load_state_dict` takes that form or the NumPy one (which older
    checkpoints hold). The state must hold exactly the entries of the learner's
    own state (a scalar entry as a scalar); anything else is refused with a
    :class:`ValueError` naming the entries, and so is an entry whose values its
    own entry's dtype cannot take (:func:`check_state_entry`: NaN, inf but in
    :attr:`_INFINITE_ENTRIES`, a complex number, a string, an integer beyond
    ``int64``, a number for a flag); an empty entry holds none, and loads as an
    empty array of its entry's dtype and shape (:func:`check_shape`), as JSON
    writes it (``[]``) too. The constructor settings that the state's
    meaning depends on and its shapes do not show (:meth:`_kept_settings`: TLP's
    ``sigma`` and ``knn``, the micro-cluster baselines' ``decay``, ...) go with
    the state, as its entry ``settings`` (:data:`SETTINGS_ENTRY`), and a state
    kept with another value of one is refused naming it and both values, before
    any other check. A state without the entry, or without one of its settings
    (saved before they were kept: the NumPy form of older checkpoints), is not
    checked on them and loads as it did then (a checkpoint file still compares
    the settings it recorded, see
    :func:`~torch_geometric_stream.checkpoint.load_checkpoint`). The subclass's
    :meth:`_load_state`
    then loads it, checking shapes as it goes, and that the entries the learner
    computes from others agree with them (:func:`check_derived`: a cluster's
    centre is ``ls / count``, TLP's weights are symmetric, ...); if it raises,
    the learner's earlier state is put back. The entries named in :attr:`_LABEL_ENTRIES` must
    hold class ids in :math:`[-1, c)` of this learner's :math:`c` classes (a
    state of a learner with more classes is refused, not left for a later
    prediction to index with).
    """

    num_classes: int
    #: State entries that hold class ids (``-1``: none).
    _LABEL_ENTRIES: tuple[str, ...] = ()
    #: Float state entries that may hold ``inf`` (never NaN).
    _INFINITE_ENTRIES: tuple[str, ...] = ()
    #: Entries of :meth:`state_dict` that a state saved before them lacks, and
    #: still loads without.
    optional_state_entries: tuple[str, ...] = (SETTINGS_ENTRY,)

    def _kept_settings(self) -> Dict[str, Any]:
        """The constructor settings, by name, that the state's meaning depends on
        and its shapes do not show: they go with the state; none unless a
        subclass has some."""
        return {}

    def _check_settings(self, settings: Any) -> None:
        """Raise unless ``settings``, a state's :data:`SETTINGS_ENTRY`, is a mapping
        of this learner's :meth:`_kept_settings` names (some may lack) to its values."""
        if not isinstance(settings, Mapping):
            raise TypeError(f"state {SETTINGS_ENTRY} must be a mapping of setting names to "
                            f"values, got {type(settings).__name__}")
        own = self._kept_settings()
        unexpected = sorted(map(str, set(settings) - set(own)))
        if unexpected:
            raise ValueError(f"{type(self).__name__} state {SETTINGS_ENTRY} {unexpected} are "
                             f"none of this learner's {list(own)}")
        check_kept_settings(settings, own, f"the {type(self).__name__}", "learner")

    @abc.abstractmethod
    def _numpy_state(self) -> NumpyState:
        """The learner's state as NumPy arrays (copies) and scalars."""

    @abc.abstractmethod
    def _load_state(self, state: Mapping[str, Any]) -> None:
        """Load ``state`` (NumPy arrays and scalars), whose entry names are already
        checked."""

    def state_dict(self) -> TensorState:
        """The learner's state: tensors (copies) and Python scalars, and the
        settings it goes with (:meth:`_kept_settings`) as the entry
        :data:`SETTINGS_ENTRY`."""
        state: TensorState = {name: torch.from_numpy(value) if isinstance(value, np.ndarray)
                              else value.item() for name, value in self._numpy_state().items()}
        state[SETTINGS_ENTRY] = self._kept_settings()
        return state

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore a state from :meth:`state_dict`, entirely or not at all.

        Args:
            state (Mapping[str, Any]): entry names to tensors and scalars, as
                :meth:`state_dict` gives them, or to NumPy arrays and scalars.

        Raises:
            TypeError: if ``state`` is not a mapping, its settings are no mapping,
                or an entry holds values of another kind (:func:`check_state_entry`).
            ValueError: for a setting kept with another value than this learner's,
                missing or unexpected entries, an array where a
                scalar belongs, an entry of the wrong shape, NaN or inf values, an
                integer beyond its dtype, or a class id outside :math:`[-1, c)`;
                the learner is then unchanged.
        """
        if not isinstance(state, Mapping):
            raise TypeError(f"state must be a mapping of entry names to arrays, got "
                            f"{type(state).__name__}")
        if SETTINGS_ENTRY in state:
            self._check_settings(state[SETTINGS_ENTRY])
        state = {name: value.detach().cpu().numpy() if isinstance(value, Tensor) else value
                 for name, value in state.items() if name != SETTINGS_ENTRY}
        own = self._numpy_state()
        missing = [name for name in own if name not in state]
        unexpected = [name for name in state if name not in own]
        if missing or unexpected:
            raise ValueError(f"{type(self).__name__} state does not fit: missing entries "
                             f"{missing}, unexpected entries {unexpected}")
        not_scalar = [name for name, value in own.items()
                      if np.ndim(value) == 0 and np.size(state[name]) != 1]
        if not_scalar:
            raise ValueError(f"{type(self).__name__} state entries {not_scalar} must be "
                             f"scalars")
        # JSON writes every empty array as [] (float64): one holds no value of
        # another kind, and loads as an empty array of its entry's dtype
        state = {name: np.asarray(value, dtype=own[name].dtype) if np.size(value) == 0
                 else value for name, value in state.items()}
        for name, value in own.items():
            check_state_entry(state[name], name, value,
                              finite=name not in self._INFINITE_ENTRIES)
        for name in self._LABEL_ENTRIES:
            labels = np.asarray(state[name], dtype=np.int64).reshape(-1)
            try:
                as_label_vector(labels, labels.size, self.num_classes)
            except ValueError as error:
                raise ValueError(f"{type(self).__name__} state entry {name}: {error}") from None
        with restored_on_error(own, self._load_state):
            self._load_state(state)


class ArgumentsRepr:
    """Mixin giving a ``repr`` that reads as the constructor call, e.g.
    ``ReSSL(in_channels=4, num_classes=3, memory_size=18, ...)``: every
    ``__init__`` argument with the attribute of its name."""

    def __repr__(self) -> str:
        names = [name for name in inspect.signature(type(self).__init__).parameters
                 if name != "self" and hasattr(self, name)]
        arguments = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__name__}({arguments})"
