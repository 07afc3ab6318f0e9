r"""Min-max input scaling as a module: the running per-feature range as buffers.

:func:`min_max_scale` is the one min-max map of the package (the stream
transforms of :mod:`torch_geometric_stream.evaluation.transforms` use it too).
:class:`RunningMinMax` keeps the running range inside a learner, so that the
learner can re-scale rows it stored earlier whenever the range grows (see
``SLeDGe(input_scaling="online")``).
"""
from __future__ import annotations

import math
from typing import Sequence, Tuple

import torch
from torch import Tensor, nn

__all__ = ["check_feature_range", "min_max_scale", "RunningMinMax"]

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
