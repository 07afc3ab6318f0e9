r"""Per-sample input preparation for streams.

Every transform maps one row :math:`(d,)` (NumPy array or tensor) to a
``float32`` tensor with :meth:`StreamTransform.transform_one` (also its
``__call__``), or a batch :math:`(n, d)` *in stream order* with
:meth:`StreamTransform.transform_many`; both give identical results.  Work is
done in ``float64`` and cast at the end; a transformed value beyond ``float32``'s
range (a raw ``1e39`` through an empty pipeline) is refused with a
``ValueError`` naming it, and the state is then as before the call (a pipeline
that does not end in a bounded transform, :class:`L2Normalize`,
:class:`SignedLog1p`, an online min-max range or a clipped quantile range, copies
its state for that on every update: an unclipped quantile range its reservoir;
within ``unchanged_on_error(transform, sole=True)``, which saves it once for its
whole block, it copies nothing more).
A call with ``update=False`` transforms with a copy of the transform (one copy of
its state) and leaves the transform itself untouched.
State lives in plain tensors exposed by :meth:`~StreamTransform.state_dict` /
:meth:`~StreamTransform.load_state_dict` so a checkpoint can store it; the
settings that change what a transform computes (a ``feature_range``, a value range,
the quantile range's settings) go with it, and a transform built with other ones
refuses it, naming the setting (a state saved before they were kept is not checked).

The authors' code min-max scales every feature of a tabular stream to :math:`[-1, 1]`
with the minimum and maximum of the *whole* dataset (:class:`GlobalMinMaxScaler`,
for reproduction only: a real stream cannot see its future; the paper does not
state its scaling).  The default of this package,
:class:`OnlineMinMaxScaler`, uses the running minimum and maximum of the rows
seen so far, the current one included; :class:`OnlineQuantileRangeScaler`
the running range between two quantiles, which one outlier cannot stretch.
Each is followed by :class:`L2Normalize`.  Heavy-tailed features (counts, durations, amounts) can be
compressed first with :class:`SignedLog1p` (``make_transform(feature_transform=
"signed-log1p")``), before any scaling.
"""
from __future__ import annotations

import copy
import functools
from contextlib import contextmanager
from contextvars import ContextVar
from typing import (Any, Dict, FrozenSet, Iterator, List, Mapping, Optional, Sequence,
                    Tuple)

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor

from torch_geometric_stream.base import restored_on_error
from torch_geometric_stream.nn.scaling import (RunningQuantileRange, check_feature_range,
                                               check_range_state, min_max_scale,
                                               scaled_finite)
from torch_geometric_stream.validation import (as_feature_matrix, cast_overflow, check_bool,
                                               check_has_values, check_kept_settings,
                                               check_mapping)

__all__ = ["StreamTransform", "L2Normalize", "SignedLog1p", "OnlineMinMaxScaler",
           "OnlineQuantileRangeScaler",
           "GlobalMinMaxScaler", "FixedRangeScaler", "Compose", "SCALINGS", "LEARNER_SCALINGS",
           "FEATURE_TRANSFORMS", "make_transform", "resolve_scaling",
           "resolve_feature_transform", "unchanged_on_error", "check_transform"]

_FLOAT32_MAX = torch.finfo(torch.float32).max
#: ``id`` s of the transforms whose state an enclosing ``unchanged_on_error(...,
#: sole=True)`` saved (per thread: a context variable).
_RESTORED_ON_ERROR: ContextVar[FrozenSet[int]] = ContextVar("_RESTORED_ON_ERROR",
                                                            default=frozenset())


def _fits_float32(bounds: Sequence[float]) -> bool:
    return max(abs(float(bound)) for bound in bounds) <= _FLOAT32_MAX


class StreamTransform:
    """Base class: subclasses implement :meth:`_transform` on validated ``float64`` rows.

    A subclass that learns keeps all its learned state in :meth:`state_dict` /
    :meth:`load_state_dict` (a refused row is undone by loading the state saved
    before it), and every transform must be deep-copyable: a call with
    ``update=False`` (a prediction) transforms with a ``copy.deepcopy`` of it.
    One that holds what cannot be copied (a lock, an open file, a generator)
    implements ``__deepcopy__``, copying its state and sharing or re-creating
    the rest; otherwise such a call raises a ``TypeError`` naming it, and
    :func:`check_transform` (the River and CapyMOA wrappers) refuses it up front.
    The settings that change what it computes (:meth:`_kept_settings`) go with
    its state, and its :meth:`load_state_dict` refuses a state kept with other ones
    (:meth:`_check_settings`).
    """

    #: What the transform's errors call it (``"this scaler has ..."``).
    _noun = "transform"

    def __call__(self, x: Any) -> Tensor:
        return self.transform_one(x)

    def transform_one(self, x: Any, update: bool = True) -> Tensor:
        """Update the state with one row ``x``; return it transformed.

        Args:
            x (Tensor or array-like): one row :math:`(d,)`.
            update (bool, optional): whether the state learns from it; with
                ``False`` the row is transformed as if it had arrived, and the
                state stays as it was (a prediction that must not change the
                transform). (default: :obj:`True`)

        Returns:
            Tensor: the transformed row :math:`(d,)`.

        Raises:
            ValueError: ``x`` holds more than one row.
        """
        rows = as_feature_matrix(x, None, dtype=torch.float64)
        if rows.size(0) != 1:
            raise ValueError(f"transform_one expects one sample (d,), got {rows.size(0)} rows")
        return self._transform_rows(rows, update)[0]

    def transform_many(self, x: Any, update: bool = True) -> Tensor:
        """Transform the rows of ``x`` in order, as :meth:`transform_one` would.

        Args:
            x (Tensor or array-like): the rows :math:`(n, d)`.
            update (bool, optional): whether the state learns from them.
                (default: :obj:`True`)

        Returns:
            Tensor: the transformed rows :math:`(n, d)`.
        """
        rows = as_feature_matrix(x, None, dtype=torch.float64)
        return self._transform_rows(rows, update)

    def _transform_rows(self, rows: Tensor, update: bool) -> Tensor:
        """The ``float32`` transform of ``rows``; a ``ValueError`` names a
        transformed value beyond ``float32``'s range (a raw ``1e39`` through an
        empty pipeline), and the state is then as before the call.

        Without ``update`` a copy of the transform takes the rows (one copy of
        the state, and this state is never touched: not restored, so not copied
        back); with it only an unbounded pipeline saves its state, for the cast,
        and not within ``unchanged_on_error(self, sole=True)``, which saved it
        already."""
        if not check_bool(update, "update"):
            return _copied(self)._cast(rows)
        if self._bounded():
            return self._transform(rows).to(torch.float32)
        if id(self) in _RESTORED_ON_ERROR.get():  # the enclosing block saved the state
            return self._cast(rows)
        with restored_on_error(self.state_dict(), self.load_state_dict):
            return self._cast(rows)

    def _cast(self, rows: Tensor) -> Tensor:
        """:meth:`_transform` of ``rows`` cast to ``float32``, or a ``ValueError``
        naming a value the cast would make inf (checked unless :meth:`_bounded`)."""
        transformed = self._transform(rows)
        # one reduction on the usual path (NaN compares False: the learner names it)
        if not self._bounded() and transformed.numel() and bool(transformed.abs().amax() >
                                                                _FLOAT32_MAX):
            overflow = cast_overflow(transformed, torch.float32)
            if overflow is not None:
                raise ValueError(f"transformed rows{overflow}: a float32 learner would "
                                 f"read inf there")
        return transformed.to(torch.float32)

    def _bounded(self) -> bool:
        """Whether every transformed value lies within ``float32``'s range, whatever
        the row (then nothing is checked, and no state saved, for the cast);
        ``False`` unless a subclass knows better."""
        return False

    def _refuses(self) -> bool:
        """Whether :meth:`_transform` may refuse a finite row of the right width (a
        value a fixed range scales to inf); ``False`` unless a subclass knows better."""
        return False

    def _learns(self) -> bool:
        """Whether :meth:`_transform` may change a state: a subclass with a
        :meth:`state_dict` of its own may."""
        return type(self).state_dict is not StreamTransform.state_dict

    def _kept_settings(self) -> Dict[str, Any]:
        """The settings, by name, that change what the transform computes: they go
        with its state; none unless a subclass has some."""
        return {}

    def _check_settings(self, state: Mapping[str, Any]) -> None:
        """Raise ``ValueError`` naming the first of :meth:`_kept_settings` that
        ``state`` was kept with another value of (a state without it, saved before
        it was kept, is not checked on it)."""
        check_kept_settings(state, self._kept_settings(), f"the {type(self).__name__}",
                            self._noun)

    def state_dict(self) -> Dict[str, Any]:
        """The learned state (none for stateless transforms) and the settings it
        goes with (:meth:`_kept_settings`)."""
        return self._kept_settings()

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned.

        Args:
            state (dict): the state; this stateless transform takes its settings or
                an empty one.

        Raises:
            ValueError: a ``state`` of other keys, or of other settings.
        """
        settings = self._kept_settings()
        if state and not (isinstance(state, dict) and state.keys() <= settings.keys()):
            got = sorted(state) if isinstance(state, dict) else state
            raise ValueError(f"{type(self).__name__} has no state"
                             f"{f' but its settings {sorted(settings)}' if settings else ''}, "
                             f"got keys {got}")
        self._check_settings(state or {})

    def _transform(self, rows: Tensor) -> Tensor:
        """Transform validated rows :math:`(n, d)`, updating the state row by row."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class L2Normalize(StreamTransform):
    r"""Scale every row to unit Euclidean norm: :math:`x / \max(\lVert x \rVert_2, \epsilon)`.

    A zero row stays zero.

    Args:
        eps (float, optional): lower bound of the norm (default ``1e-12``).
    """

    def __init__(self, eps: float = 1e-12) -> None:
        self.eps = eps

    def _transform(self, rows: Tensor) -> Tensor:
        return F.normalize(rows, p=2.0, dim=-1, eps=self.eps)

    def _kept_settings(self) -> Dict[str, Any]:
        return {"eps": self.eps}

    def _bounded(self) -> bool:
        return True


class SignedLog1p(StreamTransform):
    r"""Compress every feature with :math:`\operatorname{sign}(x)\,\log(1 + |x|)`.

    Stateless and monotonic (the order of values within a feature is kept), so
    it is honest in a stream. Meant for heavy-tailed features such as counts,
    durations or amounts, whose few extreme values would otherwise squeeze the
    typical ones into a sliver of a min-max scaled range: apply it *before* the
    scaling.
    """

    def _transform(self, rows: Tensor) -> Tensor:
        return rows.sign() * rows.abs().log1p()

    def _bounded(self) -> bool:
        return True  # |log1p(x)| <= 710 for every float64 x


class _MinMaxScaler(StreamTransform):
    """Shared state of the min-max scalers: per-feature ``min_`` and ``max_`` :math:`(d,)`."""

    _noun = "scaler"

    def __init__(self, feature_range: Sequence[float] = (-1.0, 1.0)) -> None:
        self.feature_range = check_feature_range(feature_range)
        self.min_: Optional[Tensor] = None
        self.max_: Optional[Tensor] = None

    def _kept_settings(self) -> Dict[str, Any]:
        return {"feature_range": self.feature_range}

    def state_dict(self) -> Dict[str, Any]:
        return {"min": _clone(self.min_), "max": _clone(self.max_), **self._kept_settings()}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned.

        Args:
            state (dict): ``{"min": ..., "max": ..., "feature_range": ...}``, each
                bound a tensor :math:`(d,)` or ``None`` (a state without
                ``feature_range``, saved before it was kept, is not checked on it).

        Raises:
            ValueError: a state of other keys, bounds that do not fit together, or
                a ``feature_range`` other than this scaler's.
            TypeError: a bound that is neither a tensor nor ``None``, or one on the
                ``meta`` device (no values).
        """
        if not (isinstance(state, dict)
                and {"min", "max"} <= state.keys() <= {"min", "max", "feature_range"}):
            raise ValueError(f"{type(self).__name__} state must have the keys 'min' and "
                             f"'max' (and 'feature_range'), got "
                             f"{sorted(state) if isinstance(state, dict) else state!r}")
        for key in ("min", "max"):
            value = state[key]
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"{type(self).__name__} state[{key!r}] must be a tensor or "
                                f"None, got {type(value).__name__}")
            if value is not None:
                check_has_values(value, f"{type(self).__name__} state[{key!r}]")
        _check_range_pair(state["min"], state["max"], type(self).__name__)
        self._check_settings(state)
        self.min_, self.max_ = _clone(state["min"]), _clone(state["max"])

    def _check_width(self, rows: Tensor) -> None:
        if self.min_ is not None:
            _check_seen_width(rows.size(1), self.min_.numel())

    def __repr__(self) -> str:
        return f"{type(self).__name__}(feature_range={self.feature_range})"


def _check_seen_width(features: int, seen: int) -> None:
    """Refuse rows of ``features`` features for a scaler that has seen ``seen``."""
    if features != seen:
        raise ValueError(f"x has {features} features, the scaler has seen {seen}")


def _check_range_pair(low: Optional[Tensor], high: Optional[Tensor], owner: str) -> None:
    """Raise unless ``low`` and ``high`` are a whole per-feature range: both
    ``None`` (nothing seen yet) or both floating-point of one shape :math:`(d,)`,
    a range a scaler can reach (:func:`check_range_state`)."""
    subject = f"{owner} state['min'] and state['max']"
    if (low is None) != (high is None):
        got = "a tensor and None" if high is None else "None and a tensor"
        raise ValueError(f"{subject} must be both None or both tensors, got {got}")
    if low is None or high is None:
        return
    if low.dim() != 1 or low.shape != high.shape:
        raise ValueError(f"{subject} must be of one shape (d,), got {tuple(low.shape)} and "
                         f"{tuple(high.shape)}")
    if not (low.is_floating_point() and high.is_floating_point()):
        raise TypeError(f"{subject} must be floating-point tensors, got {low.dtype} and "
                        f"{high.dtype}")
    check_range_state(low, high, subject, ("min", "max"))


def _clone(tensor: Optional[Tensor]) -> Optional[Tensor]:
    return None if tensor is None else tensor.detach().clone()


class OnlineMinMaxScaler(_MinMaxScaler):
    r"""Min-max scaling with the running per-feature minimum and maximum.

    The row at position :math:`t` is scaled with
    :math:`\min_{s \leq t} x_s` and :math:`\max_{s \leq t} x_s`: the current
    row is visible when it arrives, future rows never are.  A feature that has
    been constant so far maps to the middle of ``feature_range`` (0 for the
    default :math:`[-1, 1]`).

    Args:
        feature_range (Sequence[float], optional): target interval ``(low, high)`` (default
            ``(-1, 1)``).
    """

    def _transform(self, rows: Tensor) -> Tensor:
        self._check_width(rows)
        low = torch.cummin(rows, dim=0).values
        high = torch.cummax(rows, dim=0).values
        if self.min_ is not None:
            assert self.max_ is not None  # set with min_
            low = torch.minimum(low, self.min_.to(rows.device))
            high = torch.maximum(high, self.max_.to(rows.device))
        self.min_, self.max_ = low[-1].clone(), high[-1].clone()
        return min_max_scale(rows, low, high, self.feature_range, check=False)

    def _bounded(self) -> bool:
        return _fits_float32(self.feature_range)  # each row is in the range it is scaled by


class OnlineQuantileRangeScaler(StreamTransform):
    r"""Min-max scaling with the running per-feature quantile range, values
    outside it clipped (unless ``clip=False``): :class:`OnlineMinMaxScaler`
    with a range that one outlier cannot stretch.

    The row at position :math:`t` is offered to a
    :class:`~torch_geometric_stream.nn.scaling.RunningQuantileRange` (the
    quantiles :math:`q` and :math:`1 - q` of a seeded reservoir of the rows
    seen, moved only past ``tolerance``), then scaled with its range: the
    current row counts, future rows never do. Rows stored earlier by a
    learner keep the range they were scaled with; a SLeDGe-family learner
    can re-derive them instead (``SLeDGe(input_scaling="robust")``). Rows on
    a GPU are scaled on the host, where the range keeps its reservoir, and
    come back on their device.

    Args:
        quantile, tolerance, reservoir_size, seed, clip, window: see
            :class:`~torch_geometric_stream.nn.scaling.RunningQuantileRange`.
        feature_range (Sequence[float], optional): target interval of the range (default
            ``(-1, 1)``).
    """

    _noun = "scaler"

    def __init__(self, quantile: float = 0.01, tolerance: float = 0.05,
                 reservoir_size: int = 1000, seed: int = 0,
                 feature_range: Sequence[float] = (-1.0, 1.0), clip: bool = True,
                 window: Optional[int] = None) -> None:
        self._settings: Dict[str, Any] = {
            "quantile": quantile, "tolerance": tolerance, "reservoir_size": reservoir_size,
            "seed": seed, "feature_range": feature_range, "clip": clip, "window": window}
        checked = RunningQuantileRange(1, **self._settings)  # check the settings now
        self._kept = {name: getattr(checked, name) for name in self._settings}
        self.range_: Optional[RunningQuantileRange] = None  # built by the first row

    def _scaler(self, channels: int) -> RunningQuantileRange:
        """The range, or a new one (kept by :meth:`_transform` once it took its rows)."""
        if self.range_ is None:
            return RunningQuantileRange(channels, **self._settings)
        _check_seen_width(channels, self.range_.low.numel())
        return self.range_

    def _transform(self, rows: Tensor) -> Tensor:
        if not rows.is_cpu:  # the range lives on the host, as its reservoir
            return self._transform(rows.cpu()).to(rows.device)
        scaler = self._scaler(rows.size(1))
        if rows.size(0) > 1:  # observe_ checks its row: a later row's check comes too late
            scaler.check_rows(rows)
        scaled = torch.empty_like(rows)
        for index, row in enumerate(rows.unsqueeze(1)):
            scaler.observe_(row)
            scaled[index] = scaler(row, check=False)[0]  # observe_ checked it
        self.range_ = scaler
        return scaled

    def _bounded(self) -> bool:
        return self._settings["clip"] and _fits_float32(self._settings["feature_range"])

    def _refuses(self) -> bool:
        return True  # a finite row beyond its range's float32

    def _kept_settings(self) -> Dict[str, Any]:
        return dict(self._kept)  # the seed too: a range not built yet is built with it

    def state_dict(self) -> Dict[str, Any]:
        if self.range_ is None:
            return {"range": None, **self._kept_settings()}
        return {"range": {key: value.clone() if isinstance(value, Tensor) else value
                          for key, value in self.range_.state_dict().items()},
                **self._kept_settings()}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned.

        Args:
            state (dict): ``{"range": None}`` or the scaler's state, with the
                settings it was kept with (a state without them, saved before they
                were kept, is not checked on them).

        Raises:
            ValueError: a state of other keys, a scaler state that does not fit, or
                settings other than this scaler's.
        """
        if not (isinstance(state, dict)
                and {"range"} <= state.keys() <= {"range", *self._kept}):
            raise ValueError(f"{type(self).__name__} state must have the key 'range' (and "
                             f"its settings), got "
                             f"{sorted(state) if isinstance(state, dict) else state!r}")
        self._check_settings(state)
        if state["range"] is None:
            self.range_ = None
            return
        low = state["range"].get("low") if isinstance(state["range"], dict) else None
        if not isinstance(low, Tensor):
            raise ValueError(f"{type(self).__name__} state['range'] must be None or a "
                             f"RunningQuantileRange state (with a 'low' tensor)")
        scaler = RunningQuantileRange(low.numel(), **self._settings)
        if set(state["range"]) != set(scaler.state_dict()):
            raise ValueError(f"{type(self).__name__} state['range'] must have the keys "
                             f"{sorted(scaler.state_dict())}, got {sorted(state['range'])}")
        scaler.load_state_dict(state["range"])
        self.range_ = scaler

    def __repr__(self) -> str:
        settings = ", ".join(f"{key}={value!r}" for key, value in self._settings.items())
        return f"{type(self).__name__}({settings})"


class GlobalMinMaxScaler(_MinMaxScaler):
    r"""Min-max scaling with the minimum and maximum of the whole dataset, as the
    authors' code scales tabular streams (scikit-learn's
    ``MinMaxScaler(feature_range=(-1, 1))`` fitted on the whole dataset; the
    paper does not state its scaling).

    For reproduction only: :meth:`fit` must see every row of the
    stream up front, which a real stream cannot.  Rows outside the fitted
    range are not clipped (one it would scale to inf is refused, as by
    :class:`FixedRangeScaler`).  Constant features map to the middle of
    ``feature_range`` (0 by default), as the package's running scalers map a
    feature constant so far; scikit-learn's scaler maps them to the low end
    (-1). The two differ only on a feature constant over the whole stream:
    none of Shuttle's 9, Shopper's 15 and GSAD's 128, but 65 of MNIST's 784
    pixels (0 in every image; the authors scale images by their known range,
    as ``scaling="range"`` does, which maps those to -1). Rows on another
    device than the fitted bounds (host rows, bounds fitted on a GPU) are
    scaled with a copy of the bounds there, made once for them, not per row.

    Args:
        feature_range (Sequence[float], optional): target interval ``(low, high)`` (default
            ``(-1, 1)``).
    """

    #: ``(min_, max_, device, min_ there, max_ there)``: the bounds as the last rows'
    #: device holds them, or ``None`` before the first rows.
    _moved: Optional[Tuple[Tensor, Tensor, torch.device, Tensor, Tensor]] = None

    def fit(self, data: Any) -> "GlobalMinMaxScaler":
        """Store the per-feature minimum and maximum of ``data`` :math:`(T, d)`.

        Args:
            data (Tensor or array-like): the whole stream :math:`(T, d)`.

        Returns:
            GlobalMinMaxScaler: ``self``.

        Raises:
            ValueError: 1-D ``data`` (one row or one feature's values, either could
                be meant).
        """
        rows = _stream_rows(data)
        self.min_, self.max_ = rows.min(dim=0).values, rows.max(dim=0).values
        return self

    def _transform(self, rows: Tensor) -> Tensor:
        self._check_width(rows)
        return scaled_finite(rows, *self._bounds_on(rows.device), self.feature_range)

    def _bounds_on(self, device: torch.device) -> Tuple[Tensor, Tensor]:
        """``min_`` and ``max_`` :math:`(d,)` on ``device``: a copy there made once
        for these bounds (kept until :meth:`fit` or :meth:`load_state_dict` replaces
        them; a prediction's copy of the scaler keeps it too), not one per row."""
        low, high = self.min_, self.max_
        if low is None or high is None:  # fit sets both
            raise RuntimeError("GlobalMinMaxScaler is not fitted: call fit(data) first")
        moved = self._moved
        if moved is None or moved[0] is not low or moved[1] is not high or moved[2] != device:
            moved = self._moved = (low, high, device, low.to(device), high.to(device))
        return moved[3], moved[4]

    def _refuses(self) -> bool:
        return True


def _stream_rows(data: Any) -> Tensor:
    """The whole stream ``data`` :math:`(T, d)` as float64 rows; 1-D ``data`` is
    refused: one row or one feature's values, either could be meant."""
    rows = as_feature_matrix(data, None, name="data", dtype=torch.float64)
    if np.ndim(data) == 1:
        raise ValueError(f"data must be the whole stream (T, d), got 1-D values of shape "
                         f"({rows.size(1)},): reshape them to (1, d) for one row or (T, 1) "
                         f"for one feature")
    return rows


class FixedRangeScaler(StreamTransform):
    r"""Min-max scaling with a range known a priori, the same for every feature
    (e.g. pixels in :math:`[0, 255]`): stateless, so honest in a stream and
    identical for every row. Values outside the range are not clipped; one so far
    out of it that it would be scaled to inf (``1.0`` by ``(0, 1e-310)``, ``1e308``
    by ``(0, 1)``) is refused with a ``ValueError`` naming it.

    Args:
        value_range (Sequence[float]): ``(low, high)`` with ``low < high``.
        feature_range (Sequence[float], optional): target interval (default ``(-1, 1)``).
    """

    _noun = "scaler"

    def __init__(self, value_range: Sequence[float],
                 feature_range: Sequence[float] = (-1.0, 1.0)) -> None:
        self.low, self.high = check_feature_range(value_range, "value_range")
        self.feature_range = check_feature_range(feature_range)

    def _kept_settings(self) -> Dict[str, Any]:
        return {"value_range": (self.low, self.high), "feature_range": self.feature_range}

    def _transform(self, rows: Tensor) -> Tensor:
        # keyed by the bounds' bits (a dict holds 0.0 and -0.0 as one key)
        low, high = _fixed_bounds(self.low.hex(), self.high.hex(), rows.device, rows.dtype)
        return scaled_finite(rows, low, high, self.feature_range)

    def _refuses(self) -> bool:
        return True

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(value_range={(self.low, self.high)}, "
                f"feature_range={self.feature_range})")


@functools.lru_cache(maxsize=32)
def _fixed_bounds(low: str, high: str, device: torch.device,
                  dtype: torch.dtype) -> Tuple[Tensor, Tensor]:
    """The bounds ``low`` and ``high`` (:meth:`float.hex` strings) as tensors
    :math:`()` of ``dtype`` on ``device``, made once for all calls (never
    modified: shared): not a host-to-device copy per row on a GPU."""
    return (torch.tensor(float.fromhex(low), dtype=dtype, device=device),
            torch.tensor(float.fromhex(high), dtype=dtype, device=device))


class Compose(StreamTransform):
    """Apply ``transforms`` one after the other (an empty list only casts to ``float32``).

    Args:
        transforms (Sequence[StreamTransform]): the transforms, in order.

    Raises:
        TypeError: an element that is not a :class:`StreamTransform`.
    """

    def __init__(self, transforms: Sequence[StreamTransform]) -> None:
        self.transforms = list(transforms)
        for transform in self.transforms:
            if not isinstance(transform, StreamTransform):
                raise TypeError(f"Compose takes StreamTransform objects, got "
                                f"{type(transform).__name__}")

    def _transform(self, rows: Tensor) -> Tensor:
        for transform in self.transforms:
            rows = transform._transform(rows)
        return rows

    def _bounded(self) -> bool:
        return (bool(self.transforms) and self.transforms[-1]._bounded()
                and self._refuses_unlearned())

    def _refuses(self) -> bool:
        return any(transform._refuses() for transform in self.transforms)

    def _learns(self) -> bool:
        return any(transform._learns() for transform in self.transforms)

    def _refuses_unlearned(self) -> bool:
        """Whether each part that may refuse a row does so before any part has
        learned from it (else a bounded pipeline saves its state all the same)."""
        learned = False
        for transform in self.transforms:
            if transform._refuses() and (learned or isinstance(transform, Compose)
                                         and not transform._refuses_unlearned()):
                return False
            learned = learned or transform._learns()
        return True

    def state_dict(self) -> Dict[str, Any]:
        return {str(index): transform.state_dict()
                for index, transform in enumerate(self.transforms)}

    def load_state_dict(self, state: Dict[str, Any]) -> None:
        """Restore every transform's state, or none: if one refuses its state,
        those loaded before it are put back.

        Args:
            state (dict): ``{"0": ..., "1": ...}``, one entry per transform.

        Raises:
            ValueError: a state without one entry per transform, or one a transform
                refuses.
        """
        keys = [str(index) for index in range(len(self.transforms))]
        if not isinstance(state, dict) or sorted(state) != sorted(keys):
            raise ValueError(f"Compose state must have one entry per transform, the "
                             f"keys {keys}, got "
                             f"{sorted(state) if isinstance(state, dict) else state!r}")
        with restored_on_error(self.state_dict(), self._load_each):
            self._load_each(state)

    def _load_each(self, state: Dict[str, Any]) -> None:
        for index, transform in enumerate(self.transforms):
            transform.load_state_dict(state[str(index)])

    def __repr__(self) -> str:
        return f"Compose({self.transforms!r})"


def _copied(transform: StreamTransform) -> StreamTransform:
    """A deep copy of ``transform``, or a ``TypeError`` naming it (the part of a
    pipeline that cannot be copied) and what to do."""
    try:
        return copy.deepcopy(transform)
    except (TypeError, copy.Error) as error:
        if isinstance(transform, Compose):
            for part in transform.transforms:
                _copied(part)
        raise TypeError(f"{transform!r} cannot be deep-copied ({error}), and a transform "
                        f"called with update=False (a prediction) transforms with a copy of "
                        f"itself: give {type(transform).__name__} a __deepcopy__ that copies "
                        f"its state and shares or re-creates the rest (a lock, a file, a "
                        f"generator)") from None


def check_transform(transform: Any) -> Optional[StreamTransform]:
    """``transform``, checked: for wrappers to refuse a transform when they are
    built, not at the first prediction.

    Args:
        transform (StreamTransform or None): ``None``, or a :class:`StreamTransform`
            that can be deep-copied (see :class:`StreamTransform`: predictions
            copy it).

    Returns:
        StreamTransform or None: ``transform``.

    Raises:
        TypeError: saying what is wrong: no :class:`StreamTransform`, or one that
            cannot be deep-copied.
    """
    if transform is not None:
        if not isinstance(transform, StreamTransform):
            raise TypeError(f"transform must be a StreamTransform, got "
                            f"{type(transform).__name__}")
        _copied(transform)
    return transform


@contextmanager
def unchanged_on_error(transform: Optional[StreamTransform], *,
                       sole: bool = False) -> Iterator[None]:
    """Restore ``transform``'s state if the block raises (nothing to do for ``None``):
    a row the transform updated on but the learner then rejected (a wrong label, a
    wrong width) leaves no trace.

    Args:
        transform (StreamTransform or None): the transform whose state the block may change.
        sole (bool, optional): the block promises that an error of the transform leaves it, and
            that it does not pause (no ``yield`` or ``await`` within it): the state is then saved
            once, here, and the transform's own calls within the block save nothing (an unbounded
            pipeline would, for its float32 check; a call of it that raises is undone as the error
            leaves the block). By default they save and undo themselves, as outside a block: a
            block that catches a refused row and goes on sees the transform as before that row.

    Example::

        with unchanged_on_error(transform):
            learner.learn(transform.transform_one(x), y)
    """
    if transform is None:
        yield
        return
    saved = transform.state_dict()
    if not check_bool(sole, "sole"):
        with restored_on_error(saved, transform.load_state_dict):
            yield
        return
    restored = _RESTORED_ON_ERROR.set(_RESTORED_ON_ERROR.get() | {id(transform)})
    try:
        with restored_on_error(saved, transform.load_state_dict):
            yield
    finally:
        _RESTORED_ON_ERROR.reset(restored)


#: Input scalings of :func:`make_transform`.  ``"online-rescale"`` and
#: ``"robust-rescale"`` are done by the learner itself (see
#: :data:`LEARNER_SCALINGS`): the stream transform then only applies the
#: feature transform, if any, and casts to ``float32``.
SCALINGS = ("auto", "online", "online-rescale", "robust", "robust-rescale", "global", "range",
            "none")
#: The scalings a SLeDGe-family learner does itself -> its ``input_scaling``.
LEARNER_SCALINGS = {"online-rescale": "online", "robust-rescale": "robust"}
#: Feature transforms of :func:`make_transform`, applied before the scaling
#: (``"auto"``: see :func:`resolve_feature_transform`).
FEATURE_TRANSFORMS = ("auto", "none", "signed-log1p")


def resolve_scaling(scaling: str, value_range: Optional[Sequence[float]] = None,
                    learner_scales: bool = False) -> str:
    """``"auto"`` becomes ``"range"`` when the stream declares the range of its
    values a priori (e.g. pixels in ``[0, 255]``); otherwise
    ``"online-rescale"`` when the learner can scale its own input and re-scale
    its memory, else ``"online"``. Other names are returned unchanged.

    Args:
        scaling (str): one of :data:`SCALINGS`.
        value_range (Sequence[float], optional): the stream's declared value
            range, ``None`` for none. (default: :obj:`None`)
        learner_scales (bool, optional): whether the learner scales its own
            input (the SLeDGe family). (default: :obj:`False`)

    Raises:
        ValueError: ``scaling`` is none of :data:`SCALINGS`.
    """
    if scaling not in SCALINGS:
        raise ValueError(f"scaling must be one of {SCALINGS}, got {scaling!r}")
    if scaling == "auto":
        if value_range is not None:
            return "range"
        return "online-rescale" if learner_scales else "online"
    return scaling


def resolve_feature_transform(feature_transform: str,
                              value_range: Optional[Sequence[float]] = None) -> str:
    """``"auto"`` becomes ``"none"`` when the stream declares the range of its values a
    priori (images: the pixel range is the scale), else ``"signed-log1p"`` (tabular
    streams, whose features are often heavy-tailed). Other names are returned
    unchanged.

    Args:
        feature_transform (str): one of :data:`FEATURE_TRANSFORMS`.
        value_range (Sequence[float], optional): the stream's declared value
            range, ``None`` for none. (default: :obj:`None`)

    Raises:
        ValueError: ``feature_transform`` is none of :data:`FEATURE_TRANSFORMS`.
    """
    if feature_transform not in FEATURE_TRANSFORMS:
        raise ValueError(f"feature_transform must be one of {FEATURE_TRANSFORMS}, "
                         f"got {feature_transform!r}")
    if feature_transform == "auto":
        return "none" if value_range is not None else "signed-log1p"
    return feature_transform


def make_transform(scaling: str = "online", l2: bool = True, data: Optional[Any] = None,
                   value_range: Optional[Sequence[float]] = None,
                   feature_transform: str = "none",
                   robust_options: Optional[Mapping[str, Any]] = None,
                   feature_range: Sequence[float] = (-1.0, 1.0)) -> Compose:
    """Build the input pipeline: a feature transform, min-max scaling to
    ``feature_range`` (:math:`[-1, 1]` by default), then L2 normalization.

    Args:
        scaling (str, optional): one of :data:`SCALINGS`: ``"online"``
            (:class:`OnlineMinMaxScaler`, the running per-feature range),
            ``"robust"`` (:class:`OnlineQuantileRangeScaler`, the running
            per-feature quantile range, values outside it clipped),
            ``"global"`` (:class:`GlobalMinMaxScaler` fitted on ``data``, as in
            the authors' tabular runs; not possible in a real stream),
            ``"range"`` (every feature scaled with the a-priori ``value_range``,
            e.g. ``(0, 255)`` for pixels: the authors' image preprocessing, and
            honest in a stream), ``"auto"`` (see :func:`resolve_scaling`),
            ``"none"``, or one of :data:`LEARNER_SCALINGS` (``"online-rescale"``,
            ``"robust-rescale"``): scaling and L2 normalization happen inside
            the learner, so the pipeline only applies ``feature_transform``
            (if any) and casts to ``float32`` (``l2`` is ignored).
            (default: :obj:`"online"`)
        l2 (bool, optional): append :class:`L2Normalize` (default ``True``); a bool.
        data (Tensor or array-like, optional): the whole stream :math:`(T, d)` (2-D: one row is
            :math:`(1, d)`); required by, and only allowed with, ``scaling="global"``.
            (default: :obj:`None`)
        value_range (Sequence[float], optional): ``(low, high)`` of every feature; required by
            ``"range"``. (default: :obj:`None`)
        feature_transform (str, optional): one of :data:`FEATURE_TRANSFORMS`: ``"none"``,
            ``"signed-log1p"`` (:class:`SignedLog1p` first; the global range is
            then fitted, and an a-priori range mapped, through it) or ``"auto"``
            (see :func:`resolve_feature_transform`). (default: :obj:`"none"`)
        robust_options (Mapping[str, Any], optional): a mapping of keyword arguments of
            :class:`OnlineQuantileRangeScaler` (``quantile``, ``tolerance``, ``reservoir_size``,
            ``seed``, ``clip``, ``window``); only allowed with ``scaling="robust"``.
            (default: :obj:`None`)
        feature_range (Sequence[float], optional): the interval ``(low, high)`` the scaler maps
            each feature's range to (ignored by ``"none"`` and the learner's scalings, whose
            learner holds its own scaler). (default: :obj:`(-1.0, 1.0)`)
    """
    l2 = check_bool(l2, "l2")
    scaling = resolve_scaling(scaling, value_range)
    feature_transform = resolve_feature_transform(feature_transform, value_range)
    if (scaling == "global") != (data is not None):
        raise ValueError("data is required by scaling='global' and unused otherwise")
    check_mapping(robust_options, "robust_options", " of OnlineQuantileRangeScaler's keyword "
                  "arguments (e.g. {'quantile': 0.05})")
    if robust_options and scaling != "robust":
        raise ValueError(f"robust_options need scaling='robust', got scaling={scaling!r}")
    if robust_options and "feature_range" in robust_options:
        raise ValueError("pass feature_range to make_transform itself, not in robust_options")
    if scaling == "range" and value_range is None:
        raise ValueError("scaling='range' needs value_range=(low, high)")
    feature_range = check_feature_range(feature_range)
    steps: List[StreamTransform] = []
    if feature_transform == "signed-log1p":  # fit / map the ranges through it, in float64
        steps.append(SignedLog1p())
        if data is not None:
            data = steps[0]._transform(_stream_rows(data))
        if value_range is not None:
            value_range = steps[0]._transform(
                torch.tensor(value_range, dtype=torch.float64)).tolist()
    if scaling in LEARNER_SCALINGS:
        return Compose(steps)
    if scaling == "online":
        steps.append(OnlineMinMaxScaler(feature_range))
    elif scaling == "robust":
        steps.append(OnlineQuantileRangeScaler(**(robust_options or {}),
                                               feature_range=feature_range))
    elif scaling == "global":
        steps.append(GlobalMinMaxScaler(feature_range).fit(data))
    elif scaling == "range":
        assert value_range is not None  # refused above
        steps.append(FixedRangeScaler(value_range, feature_range))
    if l2:
        steps.append(L2Normalize())
    return Compose(steps)
