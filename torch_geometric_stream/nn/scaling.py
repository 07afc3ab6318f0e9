r"""Min-max input scaling as a module: the running per-feature range as buffers.

:func:`min_max_scale` is the one min-max map of the package (the stream
transforms of :mod:`torch_geometric_stream.evaluation.transforms` use it too).
:class:`RunningMinMax` keeps the running range inside a learner, so that the
learner can re-scale rows it stored earlier whenever the range grows (see
``SLeDGe(input_scaling="online")``). :class:`RunningQuantileRange` is its
robust twin: the range between two running quantiles, which one outlier
cannot stretch (``SLeDGe(input_scaling="robust")``).
"""
from __future__ import annotations

import math
from bisect import bisect_left, insort
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import torch
from torch import Tensor, nn

from torch_geometric_stream.base import RollbackOnFailedLoad
from torch_geometric_stream.validation import (cast_overflow, check_bool,
                                               check_cast_keeps_finite, check_has_values,
                                               check_kept_settings, check_node_features,
                                               check_nonnegative,
                                               check_positive, check_positive_int,
                                               check_same_device, check_seed,
                                               check_state_entries, first_offender,
                                               generator_from_state)

__all__ = ["check_feature_range", "check_range_state", "min_max_scale", "scaled_finite",
           "RunningMinMax",
           "RunningQuantileRange",
           "check_quantile_range_settings", "QuantileRangeSettingError",
           "QuantileRangeTypeError", "QuantileRangeValueError"]

FeatureRange = Tuple[float, float]


def check_feature_range(feature_range: Sequence[float],
                        name: str = "feature_range") -> FeatureRange:
    """``feature_range`` as a float pair ``(low, high)``.

    Args:
        feature_range (Sequence[float]): the pair to check.
        name (str, optional): what the errors call it. (default: ``"feature_range"``)

    Returns:
        tuple[float, float]: ``(low, high)``.

    Raises:
        TypeError: unless it is a pair of real numbers (not bools).
        ValueError: unless both are finite and low < high.
    """
    try:
        bounds = tuple(feature_range)
        if len(bounds) != 2 or any(isinstance(bound, (bool, np.bool_, str, bytes))
                                   for bound in bounds):
            raise TypeError
        low, high = (float(bound) for bound in bounds)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a pair (low, high) of numbers, "
                        f"got {feature_range!r}") from None
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"{name} must be finite with low < high, got {tuple(feature_range)}")
    return low, high


def min_max_scale(rows: Tensor, low: Tensor, high: Tensor,
                  feature_range: FeatureRange = (-1.0, 1.0), *, check: bool = True) -> Tensor:
    r"""Map ``rows`` from ``[low, high]`` to ``feature_range``; features with
    ``high <= low`` (constant so far, or never seen) map to the middle of
    ``feature_range``.

    The result has the rows' dtype, as PyG's functions keep their input's (and
    the scalers take rows of any floating dtype): bounds of another floating
    dtype are applied in the wider of the two, then the result is cast back.

    Args:
        rows (Tensor): the rows :math:`(n, d)`.
        low, high (Tensor): the bounds, each :math:`()`, :math:`(d,)` or
            :math:`(n, d)`.
        feature_range (tuple[float, float], optional): the target interval.
            (default: ``(-1.0, 1.0)``)
        check (bool, optional): refuse (``TypeError`` / ``ValueError``) rows
            that are not a dense floating :math:`(n, d)` tensor with values,
            bounds that are not floating tensors of those shapes on the rows'
            device, or a ``feature_range`` that is not a finite pair with
            low < high (no value is read); the scalers, which checked their
            rows, pass ``False``. (default: :obj:`True`)

    Returns:
        Tensor: the scaled rows :math:`(n, d)`.
    """
    if check:
        for name, value in (("rows", rows), ("low", low), ("high", high)):
            if not isinstance(value, Tensor) or not value.is_floating_point():
                raise TypeError(f"{name} must be a floating-point tensor, got "
                                f"{getattr(value, 'dtype', type(value).__name__)}")
            check_has_values(value, name)
        if rows.dim() != 2:
            raise ValueError(f"rows must have shape (n, d), got {tuple(rows.shape)}")
        for name, bound in (("low", low), ("high", high)):
            if bound.shape not in ((), rows.shape[1:], rows.shape):
                raise ValueError(f"{name} must have shape (), ({rows.size(1)},) or "
                                 f"{tuple(rows.shape)} for rows {tuple(rows.shape)}, got "
                                 f"{tuple(bound.shape)}")
            check_same_device(bound, rows.device, name, "the rows' device")
        feature_range = check_feature_range(feature_range)
    # halves: the difference of two finite values can overflow (3e38 - -3e38 in
    # float32), the difference of their halves cannot; scaling by 2 is exact,
    # so ordinary values get the very same result as (rows - low) / (high - low)
    half_span = high / 2 - low / 2
    known = half_span > 0
    unit = torch.where(known, (rows / 2 - low / 2) / torch.where(known, half_span, 1.0),
                       torch.full_like(rows, 0.5))
    scaled = feature_range[0] + unit * (feature_range[1] - feature_range[0])
    return scaled.to(rows.dtype)  # no copy when the bounds have the rows' dtype


def scaled_finite(rows: Tensor, low: Tensor, high: Tensor, feature_range: FeatureRange,
                  what: str = "value range") -> Tensor:
    """:func:`min_max_scale` of the finite ``rows`` :math:`(n, d)` by the range
    ``low``, ``high`` (each :math:`()` or :math:`(d,)`) that does not clip, or a
    ``ValueError`` naming the first value it scales to inf (a value too far outside
    the range for the dtype: ``1.0`` by ``(0, 1e-310)``, ``1.7e308`` by ``(0, 1)``).

    Args:
        rows (Tensor): the rows :math:`(n, d)`, finite (a NaN row stays NaN).
        low, high (Tensor): the bounds, each :math:`()` or :math:`(d,)`.
        feature_range (tuple[float, float]): the target interval.
        what (str, optional): what the message calls the range.
            (default: ``"value range"``)

    Returns:
        Tensor: the scaled rows :math:`(n, d)`.
    """
    return _scaled_refusing_inf(
        rows, low, high, feature_range,
        lambda offender, bounds, dtype: f"rows{offender} scales to inf by its feature's "
                                        f"{what} {bounds}: too far outside it for {dtype}")


def _scaled_refusing_inf(rows: Tensor, low: Tensor, high: Tensor, feature_range: FeatureRange,
                         refusal: Callable[[str, Tuple[float, float], str], str]) -> Tensor:
    """:func:`scaled_finite` with the message ``refusal`` gives for the first entry
    of ``rows`` :math:`(n, d)` scaled to inf: ``"[i, j] = v"``, its feature's
    bounds and the scaled dtype's name (a NaN row stays NaN: the rows are not read)."""
    scaled = min_max_scale(rows, low, high, feature_range, check=False)
    infinite = torch.isinf(scaled)
    if not bool(infinite.any()):
        return scaled
    column = int(infinite.nonzero()[0, 1])
    bounds = (low, high) if low.dim() == 0 else (low[column], high[column])
    raise ValueError(refusal(first_offender(infinite, rows), (float(bounds[0]), float(bounds[1])),
                             str(scaled.dtype).removeprefix("torch.")))


_NOT_FINITE = "rows contain NaN or inf values: the range is left as it was"


def _check_rows(rows: Tensor, bound: Tensor) -> None:
    r"""Raise unless ``rows`` is a dense floating :math:`(n, d)` tensor with values,
    ``d`` and device those of the range's ``bound`` :math:`(d,)` (no value is read)."""
    check_node_features(rows, bound.numel(), None, "rows", device=bound.device, strided=True)


def _check_fits(rows: Tensor, bound: Tensor) -> None:
    """Raise ``ValueError`` if ``rows`` of a wider dtype than the range's ``bound``
    hold a finite value beyond the bound's dtype (float64 rows beyond float32's, or
    float32 rows beyond float16's): it would turn a bound into inf, a range no
    state may hold. Rows of the bound's dtype (a learner's) cost one comparison."""
    if rows.dtype == bound.dtype:
        return
    overflow = cast_overflow(rows, bound.dtype)
    if overflow is not None:
        raise ValueError(f"rows{overflow}, the range's dtype: the range is left as it was; "
                         f"scale the rows first or move the range to a wider dtype")


def check_range_state(low: Tensor, high: Tensor, what: str = "low and high",
                      names: Tuple[str, str] = ("low", "high")) -> None:
    """Raise unless the per-feature range ``low`` / ``high`` is one a running range
    can reach: per feature either none yet (``+inf`` / ``-inf``) or finite with
    low <= high (a NaN bound would stay for ever, a ``-inf`` low would scale every
    row to NaN). One host sync.

    Args:
        low, high (Tensor): the bounds, of one shape.
        what (str, optional): the subject of the message.
            (default: ``"low and high"``)
        names (tuple[str, str], optional): what the message calls the two bounds
            when it names the first offending feature. (default: ``("low", "high")``)

    Raises:
        ValueError: a feature whose bounds no running range reaches.
    """
    low, high = low.detach().cpu().double(), high.detach().cpu().double()
    unseen = (low == math.inf) & (high == -math.inf)
    seen = torch.isfinite(low) & torch.isfinite(high) & (low <= high)
    wrong = ~(unseen | seen)
    if bool(wrong.any()):
        raise ValueError(f"{what} must be, per feature, inf and -inf (no row seen) or finite "
                         f"with low <= high, got {names[0]}{first_offender(wrong, low)} and "
                         f"{names[1]}{first_offender(wrong, high)}")


class _CheckedRangeLoad(RollbackOnFailedLoad, nn.Module):
    """Base of the range modules: a loaded ``low`` / ``high`` must pass
    :func:`check_range_state`, checked before any buffer is copied; and a
    ``load_state_dict`` of the range itself that fails otherwise (a wrong shape,
    a missing or unexpected key, extra state it refuses: torch copies the
    buffers first) leaves it as it was, ``assign=True`` refused
    (:class:`~torch_geometric_stream.base.RollbackOnFailedLoad`)."""

    low: Tensor
    high: Tensor

    def _register_range(self, channels: int) -> None:
        """Register the buffers ``low`` and ``high`` :math:`(d,)`, no row seen."""
        self.register_buffer("low", torch.full((channels,), float("inf")))
        self.register_buffer("high", torch.full((channels,), float("-inf")))
        #: Writes other than by rows seen (``reset_state``, a loaded state), which
        #: may narrow the range: a host copy that widens itself with the rows it
        #: sees compares it to stay current.
        self.resets = 0

    def reset_state(self) -> None:
        """Forget every row seen."""
        self.low.fill_(float("inf"))
        self.high.fill_(float("-inf"))
        self.resets += 1

    def _apply(self, fn: Callable[[Tensor], Tensor], *args: Any,
               **kwargs: Any) -> _CheckedRangeLoad:  # .half(): no bound inf
        check_cast_keeps_finite(self, fn)
        return super()._apply(fn, *args, **kwargs)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, *args: Any,
                              **kwargs: Any) -> None:
        low, high = state_dict.get(prefix + "low"), state_dict.get(prefix + "high")
        if isinstance(low, Tensor) and isinstance(high, Tensor) and low.shape == high.shape:
            check_range_state(low, high, f"{prefix}low and {prefix}high")
        self.resets += 1
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)


class RunningMinMax(_CheckedRangeLoad):
    r"""Per-feature running minimum and maximum, and min-max scaling with them.

    The state is two buffers :math:`(d,)`, ``low`` and ``high``, starting at
    :math:`+\infty` / :math:`-\infty` (no row seen: every feature maps to the
    middle of ``feature_range``). :meth:`observe_` widens the range with new
    rows; :meth:`forward` scales with the current range; :meth:`peek` scales
    rows with the range widened by themselves, without changing the state
    (the range a row would be scaled with once it has been observed).

    Args:
        channels (int): number of features :math:`d`.
        feature_range (tuple, optional): target interval. (default: ``(-1, 1)``)

    Shapes:
        - **forward / peek:** :math:`(n, d) \to (n, d)`
        - **observe_:** :math:`(n, d)`

    Raises:
        TypeError / ValueError: for ``channels`` that is not an integer
            :math:`\geq 1`, or a ``feature_range`` that is not a pair of finite
            numbers with low < high.
    """

    def __init__(self, channels: int, feature_range: Sequence[float] = (-1.0, 1.0)) -> None:
        super().__init__()
        channels = check_positive_int(channels, "channels")
        self.feature_range = check_feature_range(feature_range)
        self._register_range(channels)

    def forward(self, rows: Tensor, *, check: bool = True) -> Tensor:
        """Scale ``rows`` with the current range.

        Args:
            rows (Tensor): the rows :math:`(n, d)`.
            check (bool, optional): refuse (``TypeError`` / ``ValueError``) rows
                that are not a dense floating :math:`(n, d)` tensor with values on
                the range's device (no value is read); the learner's per-sample
                step passes ``False``. (default: :obj:`True`)

        Returns:
            Tensor: the scaled rows :math:`(n, d)`.
        """
        if check:
            _check_rows(rows, self.low)
        return min_max_scale(rows, self.low, self.high, self.feature_range, check=False)

    def peek(self, rows: Tensor, *, check: bool = True) -> Tensor:
        """Scale each row with the range widened by that row alone (state
        unchanged).

        Args:
            rows (Tensor): the rows :math:`(n, d)`.
            check (bool, optional): as for :meth:`forward`. (default: :obj:`True`)
        """
        if check:
            _check_rows(rows, self.low)
        return min_max_scale(rows, torch.minimum(self.low, rows),
                             torch.maximum(self.high, rows), self.feature_range, check=False)

    @torch.no_grad()
    def observe_(self, rows: Tensor) -> bool:
        """Widen the range with ``rows``; whether it changed (reads two flags from
        the device in one transfer).

        Args:
            rows (Tensor): the rows :math:`(n, d)`.

        Raises:
            TypeError / ValueError: for rows that are not a dense floating
                :math:`(n, d)` tensor on the range's device, or hold NaN or inf,
                or values beyond the range's dtype (the range is left as it was).
        """
        _check_rows(rows, self.low)
        _check_fits(rows, self.low)
        if rows.size(0) == 0:
            return False
        low = torch.minimum(self.low, rows.min(dim=0).values)
        high = torch.maximum(self.high, rows.max(dim=0).values)
        changed, finite = torch.stack([torch.logical_or(low != self.low, high != self.high).any(),
                                       torch.isfinite(rows).all()]).tolist()
        if not finite:
            raise ValueError(_NOT_FINITE)
        self.low.copy_(low)
        self.high.copy_(high)
        return changed

    def extra_repr(self) -> str:
        return f"channels={self.low.numel()}, feature_range={self.feature_range}"


#: NumPy draws integers below at most 2**63 + 1 (``Generator.integers`` in int64).
_WINDOW_LIMIT = 2 ** 63


def _holds_negative_zero(values: np.ndarray) -> bool:
    """Whether ``values`` hold a ``-0.0`` (equal to ``0.0``, so a sort or a partition
    may put either first: their order is not the values' own)."""
    return bool((np.signbit(values) & (values == 0)).any())


def _quantiles_of_sorted(columns: List[List[float]], quantiles: np.ndarray) -> np.ndarray:
    r"""``np.quantile(values, quantiles, axis=1)`` (``method="linear"``) of the
    :math:`d` features' values, each given sorted (``columns``: :math:`d` lists of
    :math:`n \geq 1` floats), :math:`(q, d)` float64: NumPy's own steps after its
    partition, which only finds the order statistics that sorted lists hold
    already, so the result is the same bit for bit (for values without
    ``-0.0``, whose place among zeros is NumPy's partition's own choice)."""
    count = len(columns[0])
    virtual = (count - 1) * quantiles  # NumPy's virtual indices, neighbours and weights
    previous = np.floor(virtual)
    following = previous + 1
    above = virtual >= count - 1
    previous[above], following[above] = -1, -1
    previous, following = previous.astype(np.intp), following.astype(np.intp)
    gamma = (virtual - previous).reshape(-1, 1)
    low = np.array([[column[i] for column in columns] for i in previous.tolist()])
    high = np.array([[column[i] for column in columns] for i in following.tolist()])
    # NumPy's _lerp: from the lower value below gamma 0.5, from the upper one above
    difference = high - low
    result = np.add(low, difference * gamma)
    np.subtract(high, difference * (1 - gamma), out=result, where=gamma >= 0.5)
    return result


class QuantileRangeSettingError(Exception):
    """An error of :func:`check_quantile_range_settings`, a :class:`TypeError`
    (:class:`QuantileRangeTypeError`) or a :class:`ValueError`
    (:class:`QuantileRangeValueError`) that says which settings it refuses.

    Args:
        message (str): the error's text.
        settings (tuple): the parameters it refuses, by their own names, in
            the order of :func:`check_quantile_range_settings`'s signature (a
            ``window`` below ``reservoir_size`` refuses both).
    """

    def __init__(self, message: str, settings: Tuple[str, ...]) -> None:
        super().__init__(message)
        self.settings = settings


class QuantileRangeTypeError(QuantileRangeSettingError, TypeError):
    """A quantile range setting of the wrong type (:class:`QuantileRangeSettingError`)."""


class QuantileRangeValueError(QuantileRangeSettingError, ValueError):
    """A quantile range setting of a refused value (:class:`QuantileRangeSettingError`)."""


@contextmanager
def _refusing(*settings: str) -> Iterator[None]:
    """Raise a :class:`TypeError` or :class:`ValueError` of the block as its
    :class:`QuantileRangeSettingError` twin refusing ``settings``."""
    try:
        yield
    except TypeError as error:
        raise QuantileRangeTypeError(str(error), settings) from None
    except ValueError as error:
        raise QuantileRangeValueError(str(error), settings) from None


def check_quantile_range_settings(quantile: float, tolerance: float, reservoir_size: int,
                                  window: Optional[int], clip: bool,
                                  names: Optional[Mapping[str, str]] = None
                                  ) -> Tuple[float, float, int, Optional[int], bool]:
    r"""The settings of a :class:`RunningQuantileRange` as it keeps them, checked
    (see its ``Raises``) in this order.

    Args:
        quantile (float): the lower quantile, in :math:`(0, 0.5)`.
        tolerance (float): the drift share that moves the effective range, :math:`\geq 0`.
        reservoir_size (int): rows kept for the quantiles, :math:`\geq 1`.
        window (int or None): the forgetting window, ``None`` or an integer in
            :math:`[\text{reservoir\_size}, 2^{63}]`.
        clip (bool): whether scaled values are clipped.
        names (Mapping[str, str], optional): what the errors call a parameter (a
            command line's option, say), by its name; one not given is called by
            its own name. (default: :obj:`None`)

    Returns:
        tuple: ``(quantile, tolerance, reservoir_size, window, clip)``, as kept.

    Raises:
        QuantileRangeTypeError / QuantileRangeValueError: the first bad setting,
            named; its ``settings`` say which (:class:`QuantileRangeSettingError`).
    """
    names = {key: key for key in ("quantile", "tolerance", "reservoir_size", "window",
                                  "clip")} | dict(names or {})
    with _refusing("quantile"):
        if not check_positive(quantile, names["quantile"]) < 0.5:
            raise ValueError(f"{names['quantile']} must lie in (0, 0.5), got {quantile}")
    with _refusing("tolerance"):
        tolerance = check_nonnegative(tolerance, names["tolerance"])
    with _refusing("reservoir_size"):
        reservoir_size = check_positive_int(reservoir_size, names["reservoir_size"])
    if window is not None:
        try:
            window = check_positive_int(window, names["window"], minimum=reservoir_size)
        except TypeError as error:
            raise QuantileRangeTypeError(str(error), ("window",)) from None
        except ValueError as error:
            raise QuantileRangeValueError(
                f"{error} ({names['reservoir_size']}: a row enters with probability "
                f"{names['reservoir_size']} / {names['window']})",
                ("reservoir_size", "window")) from None
        if window > _WINDOW_LIMIT:
            raise QuantileRangeValueError(f"{names['window']} must be at most 2**63, "
                                          f"got {window}", ("window",))
    with _refusing("clip"):
        clip = check_bool(clip, names["clip"])
    return float(quantile), tolerance, reservoir_size, window, clip


@dataclass
class _Undo:
    """What one :meth:`RunningQuantileRange.observe_` changed, to put it back: the
    row count and generator state before it, each replaced slot with the row it
    held (in the order replaced), and the bounds before it if it moved them."""
    seen: int
    rng: Mapping[str, Any]
    replaced: List[Tuple[int, np.ndarray]] = field(default_factory=list)
    bounds: Optional[Tuple[Tensor, Tensor]] = None


#: The settings of a :class:`RunningQuantileRange` that go with its state and that
#: a range must share to take it.
_KEPT_SETTINGS = ("window", "quantile", "tolerance", "reservoir_size", "clip", "feature_range")


class RunningQuantileRange(_CheckedRangeLoad):
    r"""Per-feature running quantile range, and min-max scaling with it
    (clipped by default): a range one outlier cannot stretch.

    The quantiles :math:`q` and :math:`1 - q` of every feature are the exact
    (linearly interpolated, as :func:`numpy.quantile`) quantiles of a sample
    of the rows seen: all of them while at most ``reservoir_size`` :math:`k`
    are seen, then a reservoir of :math:`k` rows, drawn with its own NumPy
    generator seeded by ``seed``. By default the sample is uniform over the
    whole stream (Vitter's algorithm R: row :math:`t > k` draws an integer
    :math:`j` uniform in :math:`[0, t)` and replaces slot :math:`j` if
    :math:`j < k`, so it enters with probability :math:`k / t`). On a long
    stream that freezes the range on the stream's distant past (after
    :math:`10^6` rows a new row enters with probability :math:`10^{-3}`);
    ``window`` :math:`W \geq k` makes it forget instead (a biased reservoir,
    Aggarwal, VLDB 2006): row :math:`t > k` draws :math:`j` uniform in
    :math:`[0, W)` and replaces slot :math:`j` if :math:`j < k`, so it enters
    with the fixed probability :math:`k / W` into a uniform slot, and each
    kept row is replaced by each later row with probability :math:`1 / W`.
    After :math:`n` rows past the fill, a slot's row is then
    :math:`a < n` rows old (age 0: the newest row) with probability
    :math:`\frac{1}{W} (1 - \frac{1}{W})^a`, and still its fill row with
    probability :math:`(1 - \frac{1}{W})^n`: as :math:`n` grows, the age of
    a kept row is geometric on :math:`\{0, 1, \dots\}` with mean
    :math:`W - 1`, and a row :math:`a` rows old is still in the sample with
    probability :math:`\frac{k}{W} (1 - \frac{1}{W})^a`. Exact quantiles of
    a sample stay right on features with many tied values (streaming
    estimators with a few markers, such as P\ :sup:`2`, can collapse there).
    The reservoir lives in float64 on the host whatever the module's device,
    and goes with the generator's state and the window into ``state_dict()``
    as the module's extra state; the quantiles are recomputed only when a row
    enters it (every row at first, then a :math:`k / t` share, or with a
    window a :math:`k / W` share for good: the cost per row of a window is
    that of its entering rows), from each feature's sample kept sorted on the
    host (an entering row is a binary search and a move per feature, not a
    partition of the whole reservoir).

    Rows are scaled with the *effective* range, buffers ``low`` and ``high``
    :math:`(d,)`, and clipped to ``feature_range`` unless ``clip=False``: then
    a value outside the range keeps its distance from it, scaled as the
    values inside (a robust scaler, as scikit-learn's ``RobustScaler``: the
    bulk is spread over ``feature_range`` whatever the outliers, and the
    outliers stay apart from it). The effective range follows
    the quantiles only when one of them has drifted by more than
    ``tolerance`` times the feature's effective span (or the span is still
    zero), so a learner that re-derives its stored rows whenever
    :meth:`observe_` reports a change does so rarely once they have settled.

    Args:
        channels (int): number of features :math:`d`.
        quantile (float, optional): the lower quantile :math:`q`, in
            :math:`(0, 0.5)`; the upper one is :math:`1 - q`. (default: ``0.01``)
        tolerance (float, optional): the drift, as a share of the effective
            span, that moves the effective range; ``0`` follows every
            change. (default: ``0.05``)
        reservoir_size (int, optional): rows kept for the quantiles.
            (default: ``1000``)
        seed (int, optional): seed of the reservoir's generator. (default: ``0``)
        feature_range (tuple, optional): target interval of the range.
            (default: ``(-1, 1)``)
        clip (bool, optional): clip the scaled values to ``feature_range``.
            (default: ``True``)
        window (int, optional): once the reservoir is full, each row enters
            with probability ``reservoir_size / window``, so a kept row is
            about ``window`` rows old; ``None`` keeps a uniform sample of the
            whole stream. (default: ``None``)

    Shapes:
        - **forward / peek:** :math:`(n, d) \to (n, d)`
        - **observe_:** :math:`(n, d)`

    Raises:
        TypeError / ValueError: for ``channels`` or ``reservoir_size`` that is
            not an integer :math:`\geq 1`, a ``quantile`` that is not a number
            in :math:`(0, 0.5)`, a ``tolerance`` that is not a finite number
            :math:`\geq 0` (bools are refused), a bad ``seed`` or
            ``feature_range``, a ``clip`` that is not a bool, a ``window`` that
            is neither ``None`` nor an integer in
            :math:`[\text{reservoir\_size}, 2^{63}]`.
    """

    def __init__(self, channels: int, quantile: float = 0.01, tolerance: float = 0.05,
                 reservoir_size: int = 1000, seed: int = 0,
                 feature_range: Sequence[float] = (-1.0, 1.0), clip: bool = True,
                 window: Optional[int] = None) -> None:
        super().__init__()
        channels = check_positive_int(channels, "channels")
        (self.quantile, self.tolerance, self.reservoir_size, self.window,
         self.clip) = check_quantile_range_settings(quantile, tolerance, reservoir_size, window,
                                                    clip)
        self.seed = check_seed(seed)
        self.feature_range = check_feature_range(feature_range)
        self._register_range(channels)
        self.reset_state()

    def reset_state(self) -> None:
        """Forget every row seen (and restart the generator from ``seed``)."""
        super().reset_state()
        # feature-major (d, reservoir_size): each feature's sample is contiguous, for the
        # first sort of the sample and np.quantile's partition after a -0.0 (1.6x faster
        # than over (reservoir_size, d) columns)
        self._reservoir = np.empty((self.low.numel(), self.reservoir_size))
        self._seen = 0  # rows seen; min(seen, reservoir_size) slots are filled
        self._rng = np.random.default_rng(self.seed)
        self._forget_sorted()

    def _forget_sorted(self) -> None:
        """Drop the sorted copy of the sample; the next :meth:`quantiles` sorts it anew."""
        # each feature's filled slots, sorted (None: not sorted yet); kept up to
        # date by _offer while the sample holds no -0.0, after which the quantiles
        # partition the reservoir as np.quantile does
        self._sorted: Optional[List[List[float]]] = None
        self._negative_zero = False

    def forward(self, rows: Tensor, *, check: bool = True) -> Tensor:
        """Scale ``rows`` with the effective range, clipped unless ``clip`` is off
        (then a value so far out of a narrow range that it would be scaled to inf is
        refused: a ``ValueError`` names it).

        Args:
            rows (Tensor): the rows :math:`(n, d)`.
            check (bool, optional): as for :meth:`RunningMinMax.forward`.
                (default: :obj:`True`)
        """
        if check:
            _check_rows(rows, self.low)
        if not self.clip:
            return scaled_finite(rows, self.low, self.high, self.feature_range,
                                 "quantile range")
        scaled = min_max_scale(rows, self.low, self.high, self.feature_range, check=False)
        return scaled.clamp(*self.feature_range)

    def peek(self, rows: Tensor, *, check: bool = True) -> Tensor:
        """The same as :meth:`forward`: one row does not move a quantile range.

        Args:
            rows (Tensor): the rows :math:`(n, d)`.
            check (bool, optional): as for :meth:`forward`. (default: :obj:`True`)
        """
        return self(rows, check=check)

    def quantiles(self) -> np.ndarray:
        """The quantiles :math:`q` and :math:`1 - q` of the reservoir, float64
        :math:`(2, d)` (infinite before any row)."""
        filled = self._reservoir[:, :min(self._seen, self.reservoir_size)]
        if filled.shape[1] == 0:
            return np.stack([np.full(self.low.numel(), np.inf),
                             np.full(self.low.numel(), -np.inf)])
        quantiles = [self.quantile, 1 - self.quantile]
        if self._sorted is None and not self._negative_zero:
            if _holds_negative_zero(filled):
                self._negative_zero = True
            else:
                self._sorted = np.sort(filled, axis=1).tolist()
        if self._sorted is None:
            return np.quantile(filled, quantiles, axis=1)
        return _quantiles_of_sorted(self._sorted, np.asanyarray(quantiles))

    def check_rows(self, rows: Tensor) -> None:
        """Raise as :meth:`observe_` would for ``rows``, offering nothing: a
        batch checked whole before its first row is offered (observe_ offers the
        rows one by one, and a later row's refusal comes too late).

        Args:
            rows (Tensor): the rows :math:`(n, d)`.
        """
        _check_rows(rows, self.low)
        _check_fits(rows, self.low)
        if not bool(torch.isfinite(rows).all()):
            raise ValueError(_NOT_FINITE)

    @torch.no_grad()
    def observe_(self, rows: Tensor, *, keep_finite: Optional[Tensor] = None) -> bool:
        """Offer ``rows`` to the reservoir, row after row; whether the
        effective range changed.

        Without ``clip``, the rows are refused if the new range scales one of
        them, or of ``keep_finite``, to inf, and the range, its sample and its
        generator are put back as they were (from a log of what the call
        changed: the slots the rows took, the row count, the generator's
        state, and the bounds if they moved).

        Args:
            rows (Tensor): the rows :math:`(n, d)`.
            keep_finite (Tensor, optional): without ``clip``, other rows
                :math:`(m, d)` that the range scales finitely and must keep
                scaling finitely (the rows a learner stores and re-derives when
                the range changes), checked when the range changes (while it
                does not, their scaled values do not either); ignored with
                ``clip``. (default: :obj:`None`)

        Raises:
            TypeError / ValueError: for rows, or ``keep_finite``, that are not a
                dense floating :math:`(n, d)` tensor on the range's device, or
                rows that hold NaN or inf, or values beyond the range's dtype
                (nothing is offered); without ``clip``, rows the range then
                scales to inf, or rows that narrow it so that a row of
                ``keep_finite`` is scaled to inf (the range is left as it was).
        """
        _check_rows(rows, self.low)
        if keep_finite is not None:
            check_node_features(keep_finite, self.low.numel(), None, "keep_finite",
                                device=self.low.device, strided=True)
        _check_fits(rows, self.low)
        host_rows = rows.detach().cpu().double().numpy()
        if not np.isfinite(host_rows).all():
            raise ValueError(_NOT_FINITE)
        if self.clip:
            return self._observe(host_rows)
        undo = _Undo(self._seen, self._rng.bit_generator.state)
        changed = self._observe(host_rows, undo)
        try:
            self(rows, check=False)  # the rows, whether or not the range moved
            if changed and keep_finite is not None:  # unmoved, it scales them as before
                _scaled_refusing_inf(
                    keep_finite, self.low, self.high, self.feature_range,
                    lambda offender, bounds, dtype: (
                        f"the rows would narrow the quantile range so that a stored row "
                        f"scales to inf: keep_finite{offender} by its feature's range "
                        f"{bounds}, too far outside it for {dtype}; the rows are refused and "
                        f"the range is left as it was"))
        except ValueError:
            self._undo(undo)
            raise
        return changed

    def _observe(self, host_rows: np.ndarray, undo: Optional[_Undo] = None) -> bool:
        """:meth:`observe_` of the checked float64 rows :math:`(n, d)`, logging
        into ``undo`` (if given) what it changes."""
        effective: Optional[np.ndarray] = None  # read once a row has entered
        changed = False
        for row in host_rows:
            if not self._offer(row, undo):
                continue
            if effective is None:
                effective = np.stack([self.low.cpu().double().numpy(),
                                      self.high.cpu().double().numpy()])
            estimates = self.quantiles()
            # halves, as in min_max_scale; not (drift <= ...): the first
            # estimates (inf - inf = nan) move the range
            half_span = effective[1] / 2 - effective[0] / 2
            with np.errstate(invalid="ignore"):
                half_drift = np.abs(estimates / 2 - effective / 2).max(axis=0)
                moved = ~(half_drift <= self.tolerance * half_span)
            if moved.any():
                effective, changed = estimates, True
        if changed:
            assert effective is not None  # set to the estimates that moved the range
            if undo is not None:
                undo.bounds = (self.low.clone(), self.high.clone())
            self.low.copy_(torch.from_numpy(effective[0]))
            self.high.copy_(torch.from_numpy(effective[1]))
        return changed

    def _undo(self, undo: _Undo) -> None:
        """Put the range back as it was before the :meth:`_observe` that logged
        ``undo`` (the sorted copy of the sample is sorted anew on first use)."""
        for slot, column in reversed(undo.replaced):
            self._reservoir[:, slot] = column
        self._seen, self._rng.bit_generator.state = undo.seen, undo.rng
        if undo.bounds is not None:
            self.low.copy_(undo.bounds[0])
            self.high.copy_(undo.bounds[1])
        self._forget_sorted()

    def _offer(self, row: np.ndarray, undo: Optional[_Undo] = None) -> bool:
        """The reservoir's step for one row :math:`(d,)` (algorithm R, or the
        biased reservoir of ``window``); whether it entered. A row that replaces
        a kept one logs the slot and the kept row into ``undo`` (if given); one
        that fills a free slot needs no log: the row count frees it again."""
        self._seen += 1
        if self._seen <= self.reservoir_size:
            slot = self._seen - 1
        else:
            slot = int(self._rng.integers(self._seen if self.window is None else self.window))
            if slot >= self.reservoir_size:
                return False
            if undo is not None:
                undo.replaced.append((slot, self._reservoir[:, slot].copy()))
        self._keep_sorted(row, None if self._seen <= self.reservoir_size
                          else self._reservoir[:, slot])
        self._reservoir[:, slot] = row
        return True

    def _keep_sorted(self, row: np.ndarray, replaced: Optional[np.ndarray]) -> None:
        """Enter ``row`` :math:`(d,)` into the sorted sample, in place of ``replaced``
        :math:`(d,)` (``None``: into a free slot); a row with ``-0.0`` drops it."""
        if self._sorted is None:
            return
        if _holds_negative_zero(row):
            self._sorted, self._negative_zero = None, True
            return
        if replaced is None:
            for column, value in zip(self._sorted, row.tolist()):
                insort(column, value)
            return
        for column, old, value in zip(self._sorted, replaced.tolist(), row.tolist()):
            del column[bisect_left(column, old)]
            insort(column, value)

    def __getstate__(self) -> dict:
        """For pickling and ``copy.deepcopy``: without the sorted copy of the
        sample (sorted anew on first use)."""
        return {**super().__getstate__(), "_sorted": None}

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._forget_sorted()  # also for pickles from before the sorted copy

    def get_extra_state(self) -> dict:
        filled = self._reservoir[:, :min(self._seen, self.reservoir_size)].T  # (n, d)
        return {"reservoir": torch.from_numpy(filled.copy()), "seen": self._seen,
                "rng": self._rng.bit_generator.state,
                **{name: getattr(self, name) for name in _KEPT_SETTINGS}}

    def set_extra_state(self, state: dict) -> None:
        """Take the reservoir, the row count and the generator's state of
        :meth:`get_extra_state`.

        Args:
            state (dict): what :meth:`get_extra_state` returned.

        Raises:
            TypeError, ValueError: naming what does not fit (a missing entry, a
                reservoir that is not a finite floating tensor of
                ``min(seen, reservoir_size)`` rows, a negative count, a generator
                state NumPy refuses, a ``window`` or another of
                :data:`_KEPT_SETTINGS` other than this range's: a sample kept
                under another window is not this range's sample, nor a range kept
                with another quantile, tolerance or clipping this range's; a state
                without ``window``, saved before the option, had none, and one
                without the other settings, saved before they were kept, is not
                checked on them), and then nothing changes.
        """
        # everything is checked and built before any attribute changes
        check_state_entries(state, ("reservoir", "seen", "rng"), "the quantile range's state")
        check_kept_settings(state, {name: getattr(self, name) for name in _KEPT_SETTINGS},
                            "the quantile range's", "range", required=("window",))
        stored = state["reservoir"]
        if not isinstance(stored, Tensor) or not stored.is_floating_point():
            raise TypeError(f"reservoir state must be a floating-point tensor, got "
                            f"{getattr(stored, 'dtype', type(stored).__name__)}")
        check_has_values(stored, "reservoir state")
        seen = check_positive_int(state["seen"], "seen state", minimum=0)
        channels = self.low.numel()
        filled = stored.detach().cpu().double().numpy()
        expected = (min(seen, self.reservoir_size), channels)
        if filled.shape != expected:
            raise ValueError(f"reservoir state has shape {filled.shape}, expected {expected} "
                             f"(min(seen, reservoir_size) rows of {channels} features)")
        if not np.isfinite(filled).all():
            raise ValueError("reservoir state holds NaN or inf values")
        reservoir = np.empty((channels, self.reservoir_size))
        reservoir[:, :len(filled)] = filled.T
        rng = generator_from_state(state["rng"], "rng state")
        self._reservoir, self._seen, self._rng = reservoir, seen, rng
        self._forget_sorted()

    def extra_repr(self) -> str:
        return (f"channels={self.low.numel()}, quantile={self.quantile}, "
                f"tolerance={self.tolerance}, reservoir_size={self.reservoir_size}, "
                f"feature_range={self.feature_range}, clip={self.clip}, window={self.window}")
