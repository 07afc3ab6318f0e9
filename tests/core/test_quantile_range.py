"""RunningQuantileRange: P^2 quantiles against a scalar transcription of the
algorithm, hand-checked first steps, clipping, the tolerance, the state."""
import math

import numpy as np
import pytest
import torch

from torch_geometric_stream.nn import RunningMinMax, RunningQuantileRange


def p2_reference(values, p):
    """Jain and Chlamtac's P^2 for one quantile p, one value at a time (the
    paper's steps A-B, 1-based positions; values first clipped to the extreme
    markers widened by their span): the marker heights and positions."""
    heights, positions = sorted(values[:5]), [1, 2, 3, 4, 5]
    increments = [0, p / 2, p, (1 + p) / 2, 1]
    for count, x in enumerate(values[5:], start=6):
        span = heights[4] - heights[0]  # the package's bounded influence
        x = min(max(x, heights[0] - span), heights[4] + span)
        if x < heights[0]:
            heights[0], cell = x, 0
        elif x >= heights[4]:
            heights[4], cell = x, 3
        else:
            cell = max(i for i in range(4) if heights[i] <= x)
        for i in range(cell + 1, 5):
            positions[i] += 1
        desired = [1 + (count - 1) * dn for dn in increments]
        for i in (1, 2, 3):
            gap = desired[i] - positions[i]
            if ((gap >= 1 and positions[i + 1] - positions[i] > 1)
                    or (gap <= -1 and positions[i - 1] - positions[i] < -1)):
                s = 1 if gap > 0 else -1
                q, n = heights, positions
                new = q[i] + s / (n[i + 1] - n[i - 1]) * (
                    (n[i] - n[i - 1] + s) * (q[i + 1] - q[i]) / (n[i + 1] - n[i])
                    + (n[i + 1] - n[i] - s) * (q[i] - q[i - 1]) / (n[i] - n[i - 1]))
                if not q[i - 1] < new < q[i + 1]:
                    new = q[i] + s * (q[i + s] - q[i]) / (n[i + s] - n[i])
                heights[i], positions[i] = new, positions[i] + s
    return heights, positions


def observe_all(scaler, rows):
    return [scaler.observe_(row.unsqueeze(0)) for row in rows]


@pytest.mark.parametrize("quantile", [0.05, 0.2])
def test_markers_match_the_scalar_algorithm(quantile):
    torch.manual_seed(0)
    rows = torch.randn(2000, 3, dtype=torch.float64)
    rows[:, 1] = rows[:, 1].mul(2).exp()  # heavy tail
    rows[:, 2] = rows[:, 2].mul(3).round()  # ties
    scaler = RunningQuantileRange(3, quantile=quantile)
    observe_all(scaler, rows)
    for feature in range(3):
        for row, p in enumerate((quantile, 1 - quantile)):
            heights, positions = p2_reference(rows[:, feature].tolist(), p)
            assert scaler._heights[row, :, feature].tolist() == heights
            assert scaler._positions[row, :, feature].tolist() == positions


def test_first_six_rows_hand_checked():
    """Rows 5, 1, 4, 2, 3, 6 with q = 0.25: the sixth row moves the upper
    quantile's fourth marker by the parabola, to height 5 at position 5; both
    estimates are then NumPy's linear quantiles of 1..6, 2.25 and 4.75."""
    scaler = RunningQuantileRange(1, quantile=0.25, tolerance=0.0)
    observe_all(scaler, torch.tensor([[5.0], [1.0], [4.0], [2.0], [3.0], [6.0]]))
    assert scaler._heights[:, :, 0].tolist() == [[1, 2, 3, 4, 6], [1, 2, 3, 5, 6]]
    assert scaler._positions[:, :, 0].tolist() == [[1, 2, 3, 4, 6], [1, 2, 3, 5, 6]]
    assert (scaler.low.item(), scaler.high.item()) == (2.25, 4.75)
    assert np.quantile(np.arange(1.0, 7.0), [0.25, 0.75]).tolist() == [2.25, 4.75]
    # (3.5 - 2.25) / 2.5 = 0.5 -> the middle of [-1, 1]; outside the range: clipped
    assert scaler(torch.tensor([[3.5], [10.0], [0.0]])).flatten().tolist() == [0.0, 1.0, -1.0]


def test_fewer_than_five_rows_use_their_minimum_and_maximum():
    scaler = RunningQuantileRange(2)
    assert torch.equal(scaler(torch.tensor([[5.0, -3.0]])), torch.zeros(1, 2))  # nothing seen
    assert scaler.observe_(torch.tensor([[1.0, 7.0]]))
    assert torch.equal(scaler(torch.tensor([[5.0, -3.0]])), torch.zeros(1, 2))  # zero span
    assert scaler.observe_(torch.tensor([[3.0, 7.0], [-1.0, 9.0]]))
    assert scaler.low.tolist() == [-1.0, 7.0] and scaler.high.tolist() == [3.0, 9.0]
    assert torch.equal(scaler.peek(torch.tensor([[1.0, 8.0]])), torch.zeros(1, 2))


def test_an_outlier_neither_stretches_the_range_nor_squeezes_the_bulk():
    torch.manual_seed(1)
    rows = torch.randn(3000, 2)
    robust, min_max = RunningQuantileRange(2), RunningMinMax(2)
    observe_all(robust, rows)
    min_max.observe_(rows)
    before = robust.low.clone(), robust.high.clone()
    outlier = torch.tensor([[1e6, -1e6]])
    assert not robust.observe_(outlier) and min_max.observe_(outlier)
    assert torch.equal(robust.low, before[0]) and torch.equal(robust.high, before[1])
    assert robust(outlier).tolist() == [[1.0, -1.0]]
    bulk = torch.tensor([[1.0, 1.0]])  # one standard deviation
    assert robust(bulk).abs().min() > 0.3  # 1 / 2.33 of the way to an end
    # min-max: squeezed against the end away from the outlier
    assert torch.allclose(min_max(bulk), torch.tensor([[-1.0, 1.0]]), atol=1e-4)


def test_quantiles_converge_and_the_range_settles():
    torch.manual_seed(2)
    rows = torch.randn(8000, 4, dtype=torch.float64) * torch.tensor([1.0, 10.0, 0.1, 3.0])
    scaler = RunningQuantileRange(4, quantile=0.05, tolerance=0.05)
    changes = observe_all(scaler, rows)
    expected = np.quantile(rows.numpy(), [0.05, 0.95], axis=0)
    span = expected[1] - expected[0]
    assert np.all(np.abs(np.stack(scaler.quantiles()) - expected) < 0.02 * span)
    assert changes[0] and sum(changes[4000:]) <= 2 < sum(changes[:1000])
    eager = RunningQuantileRange(4, quantile=0.05, tolerance=0.0)
    assert sum(observe_all(eager, rows[:2000])) > 10 * sum(changes[:2000])


def test_state_dict_round_trip_and_reset():
    torch.manual_seed(3)
    rows = torch.randn(300, 3)
    scaler, twin = RunningQuantileRange(3), RunningQuantileRange(3)
    observe_all(scaler, rows[:200])
    twin.load_state_dict(scaler.state_dict())
    assert observe_all(scaler, rows[200:]) == observe_all(twin, rows[200:])
    assert torch.equal(scaler.low, twin.low) and np.array_equal(scaler._heights, twin._heights)
    scaler.reset_state()
    assert scaler._count == 0 and torch.isinf(scaler.low).all()
    assert scaler.quantiles()[0].tolist() == [math.inf] * 3


def test_extreme_finite_values_stay_finite():
    scaler = RunningQuantileRange(1, tolerance=0.0)
    observe_all(scaler, torch.tensor([[3e38], [-3e38], [0.0], [1.0], [-1.0], [3e38], [2.0]]))
    assert torch.isfinite(scaler.low).all() and torch.isfinite(scaler.high).all()
    assert torch.isfinite(scaler(torch.tensor([[3e38], [-3e38]]))).all()


@pytest.mark.parametrize("kwargs, match", [({"quantile": 0.5}, "quantile"),
                                           ({"quantile": 0.0}, "quantile"),
                                           ({"tolerance": -0.1}, "tolerance"),
                                           ({"tolerance": float("nan")}, "tolerance"),
                                           ({"feature_range": (1, -1)}, "feature_range")])
def test_bad_arguments_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RunningQuantileRange(2, **kwargs)
