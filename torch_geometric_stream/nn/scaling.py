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
from typing import Sequence, Tuple

import numpy as np
import torch
from torch import Tensor, nn

__all__ = ["check_feature_range", "min_max_scale", "RunningMinMax", "RunningQuantileRange"]

FeatureRange = Tuple[float, float]


def check_feature_range(feature_range: Sequence[float],
                        name: str = "feature_range") -> FeatureRange:
    """``feature_range`` as a float pair ``(low, high)``; ``ValueError`` unless both are
    finite and low < high."""
    low, high = (float(bound) for bound in feature_range)
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"{name} must be finite with low < high, got {tuple(feature_range)}")
    return low, high


def min_max_scale(rows: Tensor, low: Tensor, high: Tensor,
                  feature_range: FeatureRange = (-1.0, 1.0)) -> Tensor:
    r"""Map ``rows`` :math:`(n, d)` from ``[low, high]`` (each :math:`(d,)` or
    :math:`(n, d)`) to ``feature_range``; features with ``high <= low`` (constant
    so far, or never seen) map to the middle of ``feature_range``."""
    # halves: the difference of two finite values can overflow (3e38 - -3e38 in
    # float32), the difference of their halves cannot; scaling by 2 is exact,
    # so ordinary values get the very same result as (rows - low) / (high - low)
    half_span = high / 2 - low / 2
    known = half_span > 0
    unit = torch.where(known, (rows / 2 - low / 2) / torch.where(known, half_span, 1.0),
                       torch.full_like(rows, 0.5))
    return feature_range[0] + unit * (feature_range[1] - feature_range[0])


class RunningMinMax(nn.Module):
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
    """

    def __init__(self, channels: int, feature_range: Sequence[float] = (-1.0, 1.0)) -> None:
        super().__init__()
        self.feature_range = check_feature_range(feature_range)
        self.register_buffer("low", torch.full((channels,), float("inf")))
        self.register_buffer("high", torch.full((channels,), float("-inf")))

    def reset_state(self) -> None:
        """Forget every row seen."""
        self.low.fill_(float("inf"))
        self.high.fill_(float("-inf"))

    def forward(self, rows: Tensor) -> Tensor:
        return min_max_scale(rows, self.low, self.high, self.feature_range)

    def peek(self, rows: Tensor) -> Tensor:
        """Scale each row with the range widened by that row alone (state unchanged)."""
        return min_max_scale(rows, torch.minimum(self.low, rows),
                             torch.maximum(self.high, rows), self.feature_range)

    @torch.no_grad()
    def observe_(self, rows: Tensor) -> bool:
        """Widen the range with ``rows``; whether it changed (reads one flag from
        the device)."""
        low = torch.minimum(self.low, rows.min(dim=0).values)
        high = torch.maximum(self.high, rows.max(dim=0).values)
        changed = bool(torch.logical_or(low != self.low, high != self.high).any())
        self.low.copy_(low)
        self.high.copy_(high)
        return changed

    def extra_repr(self) -> str:
        return f"channels={self.low.numel()}, feature_range={self.feature_range}"


class RunningQuantileRange(nn.Module):
    r"""Per-feature running quantile range, and min-max scaling with it,
    clipped: a range one outlier cannot stretch.

    The two quantiles :math:`q` and :math:`1 - q` of every feature are tracked
    with the P\ :sup:`2` algorithm (Jain and Chlamtac, 1985: five markers per
    quantile and feature, :math:`O(d)` memory and work per row, no stored
    rows), in float64 NumPy on the host whatever the module's device (the
    markers are the module's extra state in ``state_dict()``). One change
    bounds an outlier's influence: a value farther beyond the extreme markers
    than their span is clipped to that distance before the update (plain P\
    :sup:`2` moves the markers next to the extremes toward the new extreme by
    interpolation, so a single huge value could drag a quantile away). The quantiles
    are the markers' heights interpolated at their positions among the rows
    seen (the minimum and maximum while fewer than five are seen). Rows are
    scaled with the *effective* range, buffers ``low`` and ``high``
    :math:`(d,)`, and clipped to ``feature_range``. The effective range
    follows the quantiles only when one of them has drifted by more than
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
        feature_range (tuple, optional): target interval. (default: ``(-1, 1)``)

    Shapes:
        - **forward / peek:** :math:`(n, d) \to (n, d)`
        - **observe_:** :math:`(n, d)`
    """

    def __init__(self, channels: int, quantile: float = 0.01, tolerance: float = 0.05,
                 feature_range: Sequence[float] = (-1.0, 1.0)) -> None:
        super().__init__()
        if not 0.0 < quantile < 0.5:
            raise ValueError(f"quantile must lie in (0, 0.5), got {quantile}")
        if not (math.isfinite(tolerance) and tolerance >= 0.0):
            raise ValueError(f"tolerance must be finite and >= 0, got {tolerance}")
        self.quantile, self.tolerance = float(quantile), float(tolerance)
        self.feature_range = check_feature_range(feature_range)
        self.register_buffer("low", torch.full((channels,), float("inf")))
        self.register_buffer("high", torch.full((channels,), float("-inf")))
        # how fast each marker's desired position moves (P^2's dn'), (2, 5, 1):
        # row 0 tracks q, row 1 tracks 1 - q
        self._increments = np.array([[0.0, p / 2, p, (1 + p) / 2, 1.0]
                                     for p in (quantile, 1 - quantile)])[:, :, None]
        self.reset_state()

    def reset_state(self) -> None:
        """Forget every row seen."""
        self.low.fill_(float("inf"))
        self.high.fill_(float("-inf"))
        channels = self.low.numel()
        self._heights = np.zeros((2, 5, channels))  # marker heights
        self._positions = np.tile(np.arange(1.0, 6.0)[None, :, None], (2, 1, channels))
        self._count = 0  # rows seen

    def forward(self, rows: Tensor) -> Tensor:
        return min_max_scale(rows, self.low, self.high, self.feature_range).clamp(
            *self.feature_range)

    def peek(self, rows: Tensor) -> Tensor:
        """The same as :meth:`forward`: one row does not move a quantile range."""
        return self(rows)

    def quantiles(self) -> Tuple[np.ndarray, np.ndarray]:
        """The current estimates of the two quantiles, float64 :math:`(d,)` each
        (infinite before any row)."""
        seen = self._count
        if seen == 0:
            channels = self.low.numel()
            return np.full(channels, np.inf), np.full(channels, -np.inf)
        if seen < 5:
            rows = self._heights[0, :seen]
            return rows.min(axis=0), rows.max(axis=0)
        target = 1 + (seen - 1) * self._increments[:, 2:3]  # the quantiles' positions
        segment = (self._positions[:, 1:4] <= target).sum(axis=1, keepdims=True)
        n_left = np.take_along_axis(self._positions, segment, 1)
        n_right = np.take_along_axis(self._positions, segment + 1, 1)
        share = np.clip((target - n_left) / (n_right - n_left), 0.0, 1.0)
        estimate = (np.take_along_axis(self._heights, segment, 1) * (1 - share)
                    + np.take_along_axis(self._heights, segment + 1, 1) * share)
        return estimate[0, 0], estimate[1, 0]

    @torch.no_grad()
    def observe_(self, rows: Tensor) -> bool:
        """Update the quantiles with ``rows``, row after row; whether the
        effective range changed."""
        effective = np.stack([self.low.cpu().double().numpy(),
                              self.high.cpu().double().numpy()])
        changed = False
        for row in rows.detach().cpu().double().numpy():
            self._observe_row(row)
            estimates = np.stack(self.quantiles())
            # halves, as in min_max_scale; not (drift <= ...): the first
            # estimates (inf - inf = nan) move the range
            half_span = effective[1] / 2 - effective[0] / 2
            with np.errstate(invalid="ignore"):
                half_drift = np.abs(estimates / 2 - effective / 2).max(axis=0)
                moved = ~(half_drift <= self.tolerance * half_span)
            if moved.any():
                effective, changed = estimates, True
        if changed:
            self.low.copy_(torch.from_numpy(effective[0]))
            self.high.copy_(torch.from_numpy(effective[1]))
        return changed

    def _observe_row(self, x: np.ndarray) -> None:
        """One P^2 step of both quantiles with a float64 row :math:`(d,)`."""
        seen, h, n = self._count, self._heights, self._positions
        self._count += 1
        if seen < 5:  # the first five rows are the markers
            h[:, seen] = x
            if seen == 4:
                h.sort(axis=1)
            return
        # bounded influence (our change to P^2): a value beyond the extreme
        # markers by more than their span counts at that bound, so that one
        # outlier cannot drag the markers next to the extremes (which move by
        # interpolating toward them) far from the bulk
        span = h[:, 4] - h[:, 0]
        x = np.clip(x, h[:, 0] - span, h[:, 4] + span)
        np.minimum(h[:, 0], x, out=h[:, 0])
        np.maximum(h[:, 4], x, out=h[:, 4])
        cell = (h[:, 1:4] <= x[:, None]).sum(axis=1, keepdims=True)  # (2, 1, d): 0..3
        n += np.arange(5)[None, :, None] > cell
        desired = 1 + seen * self._increments  # seen + 1 rows now
        for i in (1, 2, 3):
            below, here, above = h[:, i - 1], h[:, i], h[:, i + 1]
            n_below, n_here, n_above = n[:, i - 1], n[:, i], n[:, i + 1]
            gap = desired[:, i] - n_here
            step = (((gap >= 1) & (n_above - n_here > 1)).astype(float)
                    - ((gap <= -1) & (n_below - n_here < -1)))
            if not step.any():
                continue
            parabolic = here + step / (n_above - n_below) * (
                (n_here - n_below + step) * (above - here) / (n_above - n_here)
                + (n_above - n_here - step) * (here - below) / (n_here - n_below))
            up = step > 0
            linear = here + step * (np.where(up, above, below) - here) / np.where(
                step != 0, np.where(up, n_above, n_below) - n_here, 1.0)
            inside = (below < parabolic) & (parabolic < above)
            h[:, i] = np.where(step == 0, here, np.where(inside, parabolic, linear))
            n[:, i] = n_here + step

    def get_extra_state(self) -> dict:
        return {"heights": torch.from_numpy(self._heights.copy()),
                "positions": torch.from_numpy(self._positions.copy()), "count": self._count}

    def set_extra_state(self, state: dict) -> None:
        self._heights = state["heights"].double().numpy().copy()
        self._positions = state["positions"].double().numpy().copy()
        self._count = int(state["count"])

    def extra_repr(self) -> str:
        return (f"channels={self.low.numel()}, quantile={self.quantile}, "
                f"tolerance={self.tolerance}, feature_range={self.feature_range}")
