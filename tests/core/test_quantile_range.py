"""RunningQuantileRange: exact quantiles of the rows seen (all of them, then a
seeded reservoir), hand-checked scaling, clipping, the tolerance, the state."""
import copy
import math

import numpy as np
import pytest
import torch
from state_helpers import assert_same, state_of

from torch_geometric_stream.models import SLeDGe
from torch_geometric_stream.nn import RunningMinMax, RunningQuantileRange, min_max_scale
from torch_geometric_stream.nn.scaling import (QuantileRangeSettingError,
                                               check_quantile_range_settings)


def observe_all(scaler, rows):
    return [scaler.observe_(row.unsqueeze(0)) for row in rows]


def test_first_six_rows_hand_checked():
    """Rows 5, 1, 4, 2, 3, 6 with q = 0.25: the range is NumPy's linear
    quantiles of 1..6, 2.25 and 4.75 (positions 1.25 and 3.75 of 0..5)."""
    scaler = RunningQuantileRange(1, quantile=0.25, tolerance=0.0)
    observe_all(scaler, torch.tensor([[5.0], [1.0], [4.0], [2.0], [3.0], [6.0]]))
    assert (scaler.low.item(), scaler.high.item()) == (2.25, 4.75)
    # (3.5 - 2.25) / 2.5 = 0.5 -> the middle of [-1, 1]; outside the range: clipped
    assert scaler(torch.tensor([[3.5], [10.0], [0.0]])).flatten().tolist() == [0.0, 1.0, -1.0]


def test_without_clipping_values_outside_keep_their_distance():
    """The rows of the test above with ``clip=False``: 10 lies (10 - 2.25) / 2.5
    = 3.1 spans above the low end, so -1 + 2 * 3.1 = 5.2; 0 lies -0.9 spans
    from it, so -2.8. Inside the range nothing changes."""
    scaler = RunningQuantileRange(1, quantile=0.25, tolerance=0.0, clip=False)
    observe_all(scaler, torch.tensor([[5.0], [1.0], [4.0], [2.0], [3.0], [6.0]]))
    assert (scaler.low.item(), scaler.high.item()) == (2.25, 4.75)
    scaled = scaler(torch.tensor([[3.5], [10.0], [0.0], [2.25]])).flatten()
    assert torch.allclose(scaled, torch.tensor([0.0, 5.2, -2.8, -1.0]))
    assert "clip=False" in repr(scaler) and "clip=True" in repr(RunningQuantileRange(1))


def test_first_rows_set_the_range_and_peek_leaves_it():
    scaler = RunningQuantileRange(2, quantile=0.1)
    assert torch.equal(scaler(torch.tensor([[5.0, -3.0]])), torch.zeros(1, 2))  # nothing seen
    assert scaler.observe_(torch.tensor([[1.0, 7.0]]))
    assert torch.equal(scaler(torch.tensor([[5.0, -3.0]])), torch.zeros(1, 2))  # zero span
    assert scaler.observe_(torch.tensor([[3.0, 7.0]]))
    # two rows: the 0.1 / 0.9 quantiles are 1.2 / 2.8 and 7 / 7
    assert torch.allclose(scaler.low, torch.tensor([1.2, 7.0]))
    assert torch.allclose(scaler.high, torch.tensor([2.8, 7.0]))
    assert torch.allclose(scaler.peek(torch.tensor([[2.0, 100.0]])), torch.zeros(1, 2))
    assert torch.allclose(scaler.low, torch.tensor([1.2, 7.0]))


def test_quantiles_are_exact_on_tied_values_until_the_reservoir_fills():
    torch.manual_seed(0)
    rows = torch.randn(400, 3, dtype=torch.float64)
    rows[:, 0] = torch.where(rows[:, 0].abs() < 2, 0.0, rows[:, 0].mul(3).round())  # ties
    scaler = RunningQuantileRange(3, quantile=0.02, tolerance=0.0, reservoir_size=400)
    observe_all(scaler, rows)
    expected = np.quantile(rows.numpy(), [0.02, 0.98], axis=0)
    assert np.array_equal(scaler.quantiles(), expected)
    assert np.allclose(scaler.low.numpy(), expected[0], rtol=1e-6)
    assert expected[0, 0] < 0 < expected[1, 0]  # a feature mostly 0 keeps its tails


def _bits(values):
    return np.asarray(values, dtype=np.float64).view(np.int64)


@pytest.mark.parametrize("count", [1, 2, 3, 7, 20, 99, 100, 101, 1000])
@pytest.mark.parametrize("quantile", [0.01, 0.05, 0.25, 1 / 3, 0.49])
def test_quantiles_of_sorted_columns_are_numpys_bit_for_bit(count, quantile):
    from torch_geometric_stream.nn.scaling import _quantiles_of_sorted

    rng = np.random.default_rng(count)
    # ties, and magnitudes far apart; + 0.0 turns a rounded -0.0 into 0.0
    values = rng.standard_normal((6, count)).round(1) * 10.0 ** rng.integers(-3, 4, (6, 1)) + 0.0
    expected = np.quantile(values, [quantile, 1 - quantile], axis=1)
    found = _quantiles_of_sorted(np.sort(values, axis=1).tolist(),
                                 np.asanyarray([quantile, 1 - quantile]))
    assert found.shape == expected.shape and np.array_equal(_bits(found), _bits(expected))


@pytest.mark.parametrize("window", [None, 300])
def test_quantiles_stay_numpys_of_the_reservoir_bit_for_bit_as_rows_enter_and_leave(window):
    """The sorted sample follows every row that enters (a free slot, then in
    place of a kept row), also across deepcopy, pickling and a state load."""
    import pickle

    rng = np.random.default_rng(5)
    rows = torch.from_numpy(rng.standard_normal((900, 4)).round(1) + 0.0)
    scaler = RunningQuantileRange(4, reservoir_size=60, seed=3, window=window)
    for start in range(0, 900, 9):
        scaler.observe_(rows[start:start + 9])
        filled = scaler._reservoir[:, :min(scaler._seen, 60)]
        expected = np.quantile(filled, [0.01, 0.99], axis=1)
        assert np.array_equal(_bits(scaler.quantiles()), _bits(expected))
        assert scaler._sorted == np.sort(filled, axis=1).tolist()
        if start % 90 == 0:
            scaler = copy.deepcopy(scaler) if start % 180 else pickle.loads(pickle.dumps(scaler))
        if start == 630:
            twin = RunningQuantileRange(4, reservoir_size=60, seed=3, window=window)
            twin.load_state_dict(scaler.state_dict())
            scaler = twin


def test_a_negative_zero_hands_the_quantiles_back_to_numpy_until_reset():
    """-0.0 equals 0.0: which of the two np.quantile's partition puts at a
    quantile's place is its own choice, so with a -0.0 in the sample the
    quantiles are np.quantile's of the reservoir itself."""
    rows = torch.tensor([[1.0, 0.0], [2.0, -0.0], [3.0, 0.0], [4.0, 5.0]], dtype=torch.float64)
    scaler = RunningQuantileRange(2, quantile=0.25)
    observe_all(scaler, rows[:1])
    assert scaler._sorted == [[1.0], [0.0]]
    observe_all(scaler, rows[1:])
    assert scaler._sorted is None
    expected = np.quantile(rows.numpy().T, [0.25, 0.75], axis=1)
    assert np.array_equal(_bits(scaler.quantiles()), _bits(expected))
    scaler.reset_state()
    observe_all(scaler, rows[2:])
    assert scaler._sorted == [[3.0, 4.0], [0.0, 5.0]]


def test_a_state_load_replaces_the_sorted_sample():
    """A range that has sorted its own sample (rows 10, 20) and loads another's
    (rows 0, 4, q = 0.25) has the loaded sample's quantiles 1 and 3; a row 4 then
    moves them to 2 and 4."""
    scaler, other = (RunningQuantileRange(1, quantile=0.25, tolerance=0.0) for _ in range(2))
    observe_all(scaler, torch.tensor([[0.0], [4.0]]))
    observe_all(other, torch.tensor([[10.0], [20.0]]))
    other.load_state_dict(scaler.state_dict())
    assert other.quantiles().tolist() == [[1.0], [3.0]]
    assert observe_all(other, torch.tensor([[4.0]])) == [True]
    assert (other.low.item(), other.high.item()) == (2.0, 4.0)


def test_a_loaded_sample_with_a_negative_zero_keeps_numpys_quantiles():
    """The first sort of a loaded sample (0, -0, -0, -1) checks it for -0.0 too:
    its quantiles stay np.quantile's bit for bit (q = 0.01: -0.97 and a zero
    whose sign is np.quantile's choice)."""
    rows = torch.tensor([[0.0], [-0.0], [-0.0], [-1.0]], dtype=torch.float64)
    scaler, twin = (RunningQuantileRange(1, quantile=0.01) for _ in range(2))
    observe_all(scaler, rows)
    twin.load_state_dict(scaler.state_dict())
    expected = np.quantile(rows.numpy().T, [0.01, 0.99], axis=1)
    assert expected[0].tolist() == [-0.97]
    assert np.array_equal(_bits(twin.quantiles()), _bits(expected))
    assert twin._sorted is None


def test_reservoir_keeps_a_seeded_uniform_sample():
    rows = torch.arange(3000.0).unsqueeze(1)  # value = arrival position
    scaler = RunningQuantileRange(1, reservoir_size=200, seed=5)
    observe_all(scaler, rows)
    kept = scaler._reservoir[0]  # feature-major: feature 0's sample
    assert len(np.unique(kept)) == 200  # 200 distinct rows seen
    # uniform over the stream: about a third from each third (binomial sd ~6.7)
    counts = np.histogram(kept, bins=[0, 1000, 2000, 3000])[0]
    assert np.all(np.abs(counts - 200 / 3) < 25)
    twin = RunningQuantileRange(1, reservoir_size=200, seed=5)
    observe_all(twin, rows)
    assert np.array_equal(twin._reservoir, scaler._reservoir)
    other = RunningQuantileRange(1, reservoir_size=200, seed=6)
    observe_all(other, rows)
    assert not np.array_equal(other._reservoir, scaler._reservoir)


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
    unclipped = RunningQuantileRange(2, clip=False)
    observe_all(unclipped, rows)
    assert torch.equal(unclipped.low, robust.low)  # the same range, not clipped
    assert unclipped(outlier)[0, 0] > 1e5 and unclipped(outlier)[0, 1] < -1e5
    assert torch.equal(unclipped(rows[:50]).clamp(-1, 1), robust(rows[:50]))
    bulk = torch.tensor([[1.0, 1.0]])  # one standard deviation
    assert robust(bulk).abs().min() > 0.3  # about 1 / 2.33 of the way to an end
    # min-max: squeezed against the end away from the outlier
    assert torch.allclose(min_max(bulk), torch.tensor([[-1.0, 1.0]]), atol=1e-4)


def test_the_range_settles_and_the_tolerance_limits_its_moves():
    torch.manual_seed(2)
    rows = torch.randn(6000, 4, dtype=torch.float64) * torch.tensor([1.0, 10.0, 0.1, 3.0])
    scaler = RunningQuantileRange(4, quantile=0.05, tolerance=0.05)
    changes = observe_all(scaler, rows)
    expected = np.quantile(rows.numpy(), [0.05, 0.95], axis=0)
    span = expected[1] - expected[0]
    assert np.all(np.abs(scaler.quantiles() - expected) < 0.05 * span)
    assert changes[0] and sum(changes[3000:]) <= 2 < sum(changes[:1000])
    eager = RunningQuantileRange(4, quantile=0.05, tolerance=0.0)
    assert sum(observe_all(eager, rows[:2000])) > 10 * sum(changes[:2000])


def test_a_drift_of_exactly_the_tolerance_leaves_the_range():
    """Rows 0, 4 with q = 0.25: the range is 1 to 3 (span 2). A third row 4 moves
    the quantiles to 2 and 4, by 1 = 0.5 * 2: not *more* than tolerance 0.5 times
    the span, so the range stays. With tolerance 0, rows 0, 1 give 0.25 to 0.75,
    and a row 0.5 that leaves both quantiles where they are changes nothing."""
    scaler = RunningQuantileRange(1, quantile=0.25, tolerance=0.5)
    assert observe_all(scaler, torch.tensor([[0.0], [4.0], [4.0]])) == [True, True, False]
    assert scaler.quantiles().tolist() == [[2.0], [4.0]]
    assert (scaler.low.item(), scaler.high.item()) == (1.0, 3.0)
    batch = RunningQuantileRange(1, quantile=0.25, tolerance=0.5)  # one call, row after row
    assert batch.observe_(torch.tensor([[0.0], [4.0], [4.0]])) is True
    assert (batch.low.item(), batch.high.item()) == (1.0, 3.0)
    eager = RunningQuantileRange(1, quantile=0.25, tolerance=0.0)
    assert observe_all(eager, torch.tensor([[0.0], [1.0], [0.5]])) == [True, True, False]
    assert (eager.low.item(), eager.high.item()) == (0.25, 0.75)


def test_state_dict_round_trip_resumes_the_reservoir_and_reset_forgets():
    torch.manual_seed(3)
    rows = torch.randn(600, 3)
    scaler, twin = RunningQuantileRange(3, reservoir_size=50), RunningQuantileRange(
        3, reservoir_size=50, seed=9)
    observe_all(scaler, rows[:200])
    twin.load_state_dict(scaler.state_dict())  # the generator's state comes along
    assert observe_all(scaler, rows[200:]) == observe_all(twin, rows[200:])
    assert torch.equal(scaler.low, twin.low)
    assert np.array_equal(scaler._reservoir, twin._reservoir)
    scaler.reset_state()
    assert scaler._seen == 0 and torch.isinf(scaler.low).all()
    assert scaler.quantiles()[0].tolist() == [math.inf] * 3


@pytest.mark.parametrize("spoil", [
    lambda extra: {**extra, "reservoir": extra["reservoir"][:, :2]},  # 2 features, not 3
    lambda extra: {**extra, "seen": 10},  # 10 rows seen, 40 in the reservoir
], ids=["features", "seen"])
def test_a_reservoir_state_that_does_not_fit_is_refused_and_changes_nothing(spoil):
    torch.manual_seed(4)
    scaler, other = RunningQuantileRange(3, reservoir_size=50), RunningQuantileRange(
        3, reservoir_size=50)  # a state of another size is refused for the size first
    observe_all(scaler, torch.randn(20, 3))
    observe_all(other, torch.randn(40, 3))
    before = state_of(scaler)
    with pytest.raises(ValueError, match="reservoir state has shape"):
        scaler.set_extra_state(spoil(other.get_extra_state()))
    assert_same(state_of(scaler), before)


@pytest.mark.parametrize("spoil, error, message", [
    (lambda extra: {k: v for k, v in extra.items() if k != "rng"}, ValueError,
     r"^the quantile range's state has no entry 'rng' \(it has \['reservoir', 'seen', "),
    (lambda extra: [1, 2], TypeError, "^the quantile range's state must be a dict, got list$"),
    (lambda extra: {**extra, "reservoir": extra["reservoir"].numpy()}, TypeError,
     "reservoir state must be a floating-point tensor"),
    (lambda extra: {**extra, "reservoir": extra["reservoir"].fill_(float("nan"))}, ValueError,
     "NaN or inf"),
    (lambda extra: {**extra, "seen": -1}, ValueError, "seen state must be >= 0"),
    (lambda extra: {**extra, "rng": {"bit_generator": "MT19937"}}, ValueError, "rng state"),
], ids=["no-rng", "not-a-dict", "numpy", "nan", "negative-seen", "other-generator"])
def test_a_spoiled_state_is_named_and_changes_nothing(spoil, error, message):
    """Before: KeyError, AttributeError, or (NaN) taken and the quantiles spoiled."""
    torch.manual_seed(5)
    scaler, other = RunningQuantileRange(3, reservoir_size=50), RunningQuantileRange(
        3, reservoir_size=50)  # a state of another size is refused for the size first
    observe_all(scaler, torch.randn(20, 3))
    observe_all(other, torch.randn(40, 3))
    before = state_of(scaler)
    with pytest.raises(error, match=message):
        scaler.set_extra_state(spoil(other.get_extra_state()))
    assert_same(state_of(scaler), before)


_ROWS = torch.tensor([[0.0, 5.0], [2.0, 10.0]])


def test_min_max_scale_hand_checked_with_each_bound_shape():
    low, high = torch.tensor([0.0, 0.0]), torch.tensor([2.0, 10.0])
    expected = torch.tensor([[-1.0, 0.0], [1.0, 1.0]])
    for check in (True, False):
        assert torch.equal(min_max_scale(_ROWS, low, high, check=check), expected)
    assert torch.equal(min_max_scale(_ROWS, torch.tensor(0.0), torch.tensor(10.0),
                                     (0.0, 1.0)), torch.tensor([[0.0, 0.5], [0.2, 1.0]]))
    assert torch.equal(min_max_scale(_ROWS, _ROWS, _ROWS + 1), torch.zeros(2, 2) - 1)


@pytest.mark.parametrize("rows_dtype, bound_dtype", [
    (torch.float32, torch.float64), (torch.float64, torch.float32),
    (torch.bfloat16, torch.float32)])
def test_min_max_scale_keeps_the_rows_dtype(rows_dtype, bound_dtype):
    """Before: float64 bounds turned float32 rows into a float64 result."""
    low, high = torch.tensor([0.0, 0.0], dtype=bound_dtype), torch.tensor([2.0, 10.0],
                                                                          dtype=bound_dtype)
    for check in (True, False):
        scaled = min_max_scale(_ROWS.to(rows_dtype), low, high, check=check)
        assert scaled.dtype == rows_dtype
        assert torch.equal(scaled, torch.tensor([[-1.0, 0.0], [1.0, 1.0]], dtype=rows_dtype))


def test_running_min_max_in_float64_keeps_float32_rows_float32():
    scaler = RunningMinMax(2).double()
    scaler.observe_(_ROWS.double())
    assert scaler(_ROWS).dtype == torch.float32
    assert torch.equal(scaler(_ROWS), torch.tensor([[-1.0, -1.0], [1.0, 1.0]]))


@pytest.mark.parametrize("call, error, message", [
    (lambda: min_max_scale(_ROWS[0], _ROWS[0], _ROWS[0]), ValueError, r"rows must have shape"),
    (lambda: min_max_scale(_ROWS.long(), _ROWS[0], _ROWS[1]), TypeError, "rows must be a float"),
    (lambda: min_max_scale(_ROWS, _ROWS[0, :1].repeat(3), _ROWS[1]), ValueError,
     r"low must have shape"),
    (lambda: min_max_scale(_ROWS, _ROWS[0], [2.0, 10.0]), TypeError, "high must be a float"),
    (lambda: min_max_scale(_ROWS, _ROWS[0], _ROWS[1].to("meta")), TypeError, "meta"),
    (lambda: min_max_scale(_ROWS, _ROWS[0], _ROWS[1], (1.0, -1.0)), ValueError, "low < high"),
])
def test_min_max_scale_names_input_that_does_not_fit(call, error, message):
    """Before: a broadcast error inside torch, or (a reversed range) a mirrored result."""
    with pytest.raises(error, match=message):
        call()


def test_extreme_finite_values_stay_finite():
    scaler = RunningQuantileRange(1, tolerance=0.0)
    observe_all(scaler, torch.tensor([[3e38], [-3e38], [0.0], [1.0], [-1.0], [3e38], [2.0]]))
    assert torch.isfinite(scaler.low).all() and torch.isfinite(scaler.high).all()
    assert torch.isfinite(scaler(torch.tensor([[3e38], [-3e38]]))).all()


@pytest.mark.parametrize("kwargs, match", [({"quantile": 0.5}, "quantile"),
                                           ({"quantile": 0.0}, "quantile"),
                                           ({"tolerance": -0.1}, "tolerance"),
                                           ({"tolerance": float("nan")}, "tolerance"),
                                           ({"reservoir_size": 0}, "reservoir_size"),
                                           ({"feature_range": (1, -1)}, "feature_range")])
def test_bad_arguments_are_rejected(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RunningQuantileRange(2, **kwargs)


@pytest.mark.parametrize("make, error, message", [
    # before: torch's "negative dimension", "full(): argument 'size'" or a comparison error
    (lambda: RunningQuantileRange(-1), ValueError, "channels must be >= 1, got -1"),
    (lambda: RunningQuantileRange(2.5), TypeError, "channels must be an integer, got float"),
    (lambda: RunningMinMax(-1), ValueError, "channels must be >= 1, got -1"),
    (lambda: RunningMinMax(True), TypeError, "channels must be an integer, got bool"),
    (lambda: RunningQuantileRange(2, quantile="0.1"), TypeError,
     "quantile must be a number, got str"),
    (lambda: RunningQuantileRange(2, tolerance=True), TypeError,
     "tolerance must be a number, got bool"),
    (lambda: RunningQuantileRange(2, reservoir_size=2.5), TypeError,
     "reservoir_size must be an integer, got float"),
    (lambda: RunningQuantileRange(2, clip="no"), TypeError, "clip must be a bool, got str"),
    (lambda: RunningQuantileRange(2, clip=0), TypeError, "clip must be a bool, got int"),
    (lambda: RunningMinMax(2, feature_range=(0, 1, 2)), TypeError,
     r"feature_range must be a pair \(low, high\) of numbers"),
    (lambda: RunningMinMax(2, feature_range=None), TypeError, "feature_range must be a pair"),
    (lambda: RunningMinMax(2, feature_range=(True, 2)), TypeError,
     "feature_range must be a pair"),
])
def test_bad_arguments_are_named(make, error, message):
    with pytest.raises(error, match=message):
        make()


_SETTINGS = {"quantile": 0.01, "tolerance": 0.05, "reservoir_size": 1000, "window": None,
             "clip": True}


@pytest.mark.parametrize("bad, error, settings, message", [
    ({"clip": 1}, TypeError, ("clip",), "CLIP must be a bool, got int"),
    ({"quantile": 0.5}, ValueError, ("quantile",), "Q must lie in (0, 0.5), got 0.5"),
    ({"quantile": "0.1"}, TypeError, ("quantile",), "Q must be a number, got str"),
    ({"tolerance": -1}, ValueError, ("tolerance",), "TOL must be a finite number >= 0, got -1"),
    ({"reservoir_size": 0}, ValueError, ("reservoir_size",), "K must be >= 1, got 0"),
    ({"window": 2.5}, TypeError, ("window",), "W must be an integer, got float"),
    ({"window": 10}, ValueError, ("reservoir_size", "window"),
     "W must be >= 1000, got 10 (K: a row enters with probability K / W)"),
    ({"window": 2 ** 64}, ValueError, ("window",), f"W must be at most 2**63, got {2 ** 64}"),
])
def test_quantile_range_settings_errors_say_which_settings_they_refuse(bad, error, settings,
                                                                       message):
    """The errors name the settings as ``names`` says, and tell the parameters
    apart in ``settings`` whatever the names (the command line's check reads them)."""
    names = {"quantile": "Q", "tolerance": "TOL", "reservoir_size": "K", "window": "W",
             "clip": "CLIP"}
    with pytest.raises(QuantileRangeSettingError) as caught:
        check_quantile_range_settings(**(_SETTINGS | bad), names=names)
    assert isinstance(caught.value, error)
    assert caught.value.settings == settings
    assert str(caught.value) == message


@pytest.mark.parametrize("first, bad", [
    ("quantile", {"quantile": 0.5, "tolerance": -1, "clip": 1}),
    ("tolerance", {"tolerance": -1, "reservoir_size": 0, "clip": 1}),
    ("reservoir_size", {"reservoir_size": 0, "window": 2.5, "clip": 1}),
    ("window", {"window": 2.5, "clip": 1}),
])
def test_quantile_range_settings_refuse_the_first_bad_setting_in_the_signatures_order(
        first, bad):
    with pytest.raises(QuantileRangeSettingError) as caught:
        check_quantile_range_settings(**(_SETTINGS | bad))
    assert caught.value.settings == (first,)


@pytest.mark.parametrize("make", [lambda: RunningMinMax(3),
                                  lambda: RunningQuantileRange(3, reservoir_size=5)],
                         ids=["min-max", "quantile"])
@pytest.mark.parametrize("rows, error, message", [
    (torch.ones(1, 4), ValueError, r"shape \(N, 3\), got \(1, 4\)"),
    (torch.ones(3), ValueError, r"shape \(N, 3\), got \(3,\)"),
    (torch.tensor([[1.0, float("nan"), 0.0]]), ValueError, "NaN or inf"),
    (torch.tensor([[0.0, 0.0, 0.0], [1.0, float("inf"), 0.0]]), ValueError, "NaN or inf"),
    (torch.ones(1, 3, dtype=torch.long), TypeError, "floating-point tensor, got torch.int64"),
    (np.ones((1, 3)), TypeError, "must be a tensor, got ndarray"),
    (torch.ones(1, 3, device="meta"), TypeError, "rows is on the 'meta' device"),
    (torch.ones(1, 3).to_sparse(), TypeError, "rows must be a dense tensor"),
])
def test_bad_rows_are_refused_and_leave_the_range_as_it_was(make, rows, error, message):
    scaler, twin = make(), make()
    for module in (scaler, twin):
        module.observe_(torch.tensor([[1.0, 2.0, 3.0]]))
    before = state_of(scaler)
    with pytest.raises(error, match=message):
        scaler.observe_(rows)
    assert_same(state_of(scaler), before)
    if "NaN" not in message:  # scaling reads no value: NaN rows scale to NaN
        for scale in (scaler, scaler.peek):  # before: torch's broadcast or device errors
            with pytest.raises(error, match=message):
                scale(rows)
    # and the next good row is treated exactly as without the bad call
    row = torch.tensor([[1.5, 2.5, 3.5]])
    assert scaler.observe_(row) == twin.observe_(row)
    assert_same(state_of(scaler), state_of(twin))


def _with(state, drop=(), entries=None, **extra):
    """A copy of the range's ``state`` without the keys ``drop``, with the
    ``entries`` set and the ``extra`` entries of its extra state replaced."""
    state = {name: item for name, item in state.items() if name not in drop}
    state.update(entries or {})
    if extra:
        state["_extra_state"] = {**state["_extra_state"], **extra}
    return state


@pytest.mark.parametrize("make, spoil, error, message", [
    (lambda: RunningQuantileRange(3, reservoir_size=5),
     lambda state: RunningQuantileRange(3, reservoir_size=10).state_dict(), ValueError,
     "kept with reservoir_size=10, this range has reservoir_size=5"),
    (lambda: RunningQuantileRange(3, reservoir_size=5),
     lambda state: _with(state, quantile=0.2), ValueError, "kept with quantile=0.2"),
    (lambda: RunningQuantileRange(3, reservoir_size=5),
     lambda state: _with(state, reservoir=torch.full((5, 3), math.nan)), ValueError,
     "reservoir state holds NaN or inf"),
    (lambda: RunningQuantileRange(3, reservoir_size=5),
     lambda state: _with(state, reservoir=torch.zeros(5, 2)), ValueError,
     r"reservoir state has shape \(5, 2\)"),
    (lambda: RunningQuantileRange(3, reservoir_size=5),
     lambda state: _with(state, seen="8"), TypeError, "seen state must be an integer"),
    (lambda: RunningQuantileRange(3, reservoir_size=5),
     lambda state: _with(state, drop=["_extra_state"]), RuntimeError, "Missing key"),
    (lambda: RunningQuantileRange(3, reservoir_size=5),
     lambda state: _with(state, entries={"high": torch.zeros(4)}), RuntimeError,
     "size mismatch"),
    (lambda: RunningMinMax(3),
     lambda state: _with(state, entries={"high": torch.zeros(4)}), RuntimeError, "size mismatch"),
    (lambda: RunningMinMax(3),
     lambda state: _with(state, drop=["high"]), RuntimeError, "Missing key"),
    (lambda: RunningMinMax(3),
     lambda state: _with(state, entries={"scale": torch.ones(3)}), RuntimeError, "Unexpected key"),
], ids=["other-size", "other-quantile", "nan-reservoir", "reservoir-features",
        "seen-not-int", "no-extra-state", "high-shape", "min-max-high-shape",
        "min-max-no-high", "min-max-unexpected-key"])
def test_a_refused_load_leaves_the_range_exactly_as_it_was(make, spoil, error, message):
    """torch copies a range's buffers before it reports a key or shape error, and
    before it hands the extra state over (which the quantile range then refuses):
    before, the refused range kept the state's ``low`` / ``high`` with its own
    sample."""
    torch.manual_seed(6)
    scaler, kept = make(), make()
    scaler.observe_(torch.randn(4, 3))
    kept.observe_(torch.randn(8, 3) * 10)  # bounds other than the scaler's
    before = state_of(scaler)
    with pytest.raises(error, match=message):
        scaler.load_state_dict(spoil(kept.state_dict()))
    assert_same(state_of(scaler), before)
    with pytest.raises(ValueError, match="assign=True"):  # it would share the state's buffers
        scaler.load_state_dict(kept.state_dict(), assign=True)
    assert_same(state_of(scaler), before)
    scaler.load_state_dict(kept.state_dict())
    assert_same(state_of(scaler), state_of(kept))


def test_no_rows_change_nothing():
    for scaler in (RunningMinMax(2), RunningQuantileRange(2)):
        assert scaler.observe_(torch.empty(0, 2)) is False
        assert torch.isinf(scaler.low).all() and torch.isinf(scaler.high).all()


def test_quantiles_stay_those_of_the_kept_rows_after_the_reservoir_fills():
    """Past the reservoir's size rows replace random slots; the quantiles are
    still NumPy's of exactly the rows kept (as the state lists them)."""
    torch.manual_seed(2)
    rows = torch.randn(600, 5, dtype=torch.float64).mul(2).round()  # many ties
    scaler = RunningQuantileRange(5, quantile=0.05, reservoir_size=50, seed=3)
    for start in range(0, 600, 150):
        observe_all(scaler, rows[start:start + 150])
        kept = scaler.get_extra_state()["reservoir"].numpy()
        assert kept.shape == (50, 5)
        assert np.array_equal(scaler.quantiles(), np.quantile(kept, [0.05, 0.95], axis=0))


def test_algorithm_r_keeps_its_seed_path_without_a_window():
    """Rows 0..9 (value = position), 2 slots, seed 0: rows 0 and 1 fill them;
    row t (0-based) then draws j uniform in [0, t + 1), the seed-0 draws
    2, 2, 2, 1, 2, 0, 0, 0: only rows 5 (slot 1), 7, 8 and 9 (slot 0) enter."""
    draws = np.random.default_rng(0)
    assert [int(draws.integers(t + 1)) for t in range(2, 10)] == [2, 2, 2, 1, 2, 0, 0, 0]
    scaler = RunningQuantileRange(1, reservoir_size=2, seed=0)
    entered = [scaler._offer(np.array([float(t)])) for t in range(10)]
    assert entered == [True, True, False, False, False, True, False, True, True, True]
    assert scaler._reservoir[0].tolist() == [9.0, 5.0]


def test_a_window_draws_a_fixed_bound_on_the_same_seed_path():
    """The rows above with ``window=4``: row t >= 2 draws j uniform in [0, 4)
    and enters slot j if j < 2; the seed-0 draws 3, 2, 2, 1, 1, 0, 0, 0 keep
    rows 2, 3, 4 out, put rows 5 then 6 in slot 1, and rows 7, 8, 9 in slot 0."""
    draws = np.random.default_rng(0)
    assert [int(draws.integers(4)) for _ in range(8)] == [3, 2, 2, 1, 1, 0, 0, 0]
    scaler = RunningQuantileRange(1, reservoir_size=2, seed=0, window=4)
    entered = [scaler._offer(np.array([float(t)])) for t in range(10)]
    assert entered == [True, True, False, False, False, True, True, True, True, True]
    assert scaler._reservoir[0].tolist() == [9.0, 6.0]


def _algorithm_r(rows: np.ndarray, size: int, seed: int) -> np.ndarray:
    """Vitter's algorithm R written out: the reservoir :math:`(size, d)` it keeps."""
    draws, kept = np.random.default_rng(seed), rows[:size].copy()
    for t in range(size, len(rows)):
        slot = draws.integers(t + 1)
        if slot < size:
            kept[slot] = rows[t]
    return kept


def test_without_a_window_the_reservoir_is_algorithm_r_bit_for_bit():
    """``window=None`` (the default) draws as before the option: the same
    reservoir as algorithm R written out, the same quantiles and range."""
    torch.manual_seed(6)
    rows = torch.randn(3000, 3, dtype=torch.float64)
    scaler, explicit = RunningQuantileRange(3, reservoir_size=100, seed=7), RunningQuantileRange(
        3, reservoir_size=100, seed=7, window=None)
    for start in range(0, 3000, 250):
        assert scaler.observe_(rows[start:start + 250]) == explicit.observe_(
            rows[start:start + 250])
    assert np.array_equal(scaler._reservoir.T, _algorithm_r(rows.numpy(), 100, 7))
    assert np.array_equal(scaler._reservoir, explicit._reservoir)
    assert torch.equal(scaler.low, explicit.low) and torch.equal(scaler.high, explicit.high)
    assert scaler._rng.bit_generator.state == explicit._rng.bit_generator.state


def _expected_mean_age(seen: int, size: int, window: int) -> float:
    """The expected mean age (0: the newest row) of a full reservoir of ``size``
    slots after ``seen`` rows under ``window``: a slot's row is ``a < n`` rows old
    with probability (1/W)(1 - 1/W)^a (n = seen - size rows past the fill), else
    it is still its fill row, ``seen - 1 - j`` rows old for slot j."""
    n, keep = seen - size, 1 - 1 / window
    ages = np.arange(n)
    replaced = np.sum(ages * keep ** ages) / window
    fill_age = seen - 1 - (size - 1) / 2  # the mean over the slots j = 0..size-1
    return float(replaced + keep ** n * fill_age)


def test_a_window_keeps_rows_about_window_rows_old():
    """Rows valued by their position, 50 slots, window 400: the mean age of the
    kept rows, averaged over the 140 snapshots every 100 rows from row 6050 on,
    lies within 5 % of its exact expectation (W - 1 = 399 there; the snapshots'
    mean has a standard deviation of about 399 / sqrt(50 * 140 * 100 / 400) =
    10, 2.5 %); k / W = 1/8 of the 19950 rows past the fill entered (binomial sd
    47); e^-1 of the kept rows are older than W (over seeds 11-30: mean age
    within 2.3 % sd of its expectation, the share of old rows 0.7 % sd). Without a window, the same
    reservoir after 20000 rows has a mean age about half the stream."""
    size, window, seen = 50, 400, 20_000
    rows = torch.arange(float(seen), dtype=torch.float64).unsqueeze(1)
    scaler = RunningQuantileRange(1, reservoir_size=size, seed=11, window=window)
    entered = sum(scaler._offer(row) for row in rows[:size].numpy())
    ages, expected, old = [], [], []
    for end in range(size + 100, seen + 1, 100):
        entered += sum(scaler._offer(row) for row in rows[end - 100:end].numpy())
        age = (end - 1) - scaler._reservoir[0]
        ages.append(age.mean())
        expected.append(_expected_mean_age(end, size, window))
        old.append((age >= window).mean())
    # from row 6050 on, a fill row survives with probability (1 - 1/400)^6000 = 3e-7
    ages, expected = np.array(ages[-140:]), np.mean(expected[-140:])
    assert abs(expected - (window - 1)) < 1e-3
    assert abs(ages.mean() / expected - 1) < 0.05
    assert abs(entered - size - (seen - size) * size / window) < 4 * 47
    assert abs(np.mean(old[-140:]) - (1 - 1 / window) ** window) < 0.02
    uniform = RunningQuantileRange(1, reservoir_size=size, seed=11)
    uniform.observe_(rows)
    assert abs(((seen - 1) - uniform._reservoir[0]).mean() / (seen / 2) - 1) < 0.2


def test_a_window_follows_a_level_shift_that_the_uniform_sample_averages():
    """5000 rows around 0, then 5000 around 10: with window 500 the range's low
    end moves to the new level (a row of the first half survives 5000 later
    rows with probability (1 - 1/500)^5000 = e^-10 per slot); without a window
    half the reservoir still holds the first half, and the 1 % quantile stays
    near the old level."""
    torch.manual_seed(12)
    rows = torch.cat([torch.randn(5000, 2), torch.randn(5000, 2) + 10])
    forgetting = RunningQuantileRange(2, reservoir_size=100, seed=0, window=500)
    uniform = RunningQuantileRange(2, reservoir_size=100, seed=0)
    forgetting.observe_(rows)
    uniform.observe_(rows)
    assert (forgetting.low > 6).all() and (uniform.low < 2).all()
    assert (forgetting._reservoir > 5).all()


def test_the_window_goes_with_the_state_and_a_mismatch_is_refused():
    """The round trip resumes the windowed reservoir exactly (the generator's
    state comes along); a state kept under another window (or none) is
    refused, naming both, and changes nothing; a state from before the option
    (no ``window`` entry) had none."""
    torch.manual_seed(13)
    rows = torch.randn(800, 3)
    scaler = RunningQuantileRange(3, reservoir_size=20, window=60)
    twin = RunningQuantileRange(3, reservoir_size=20, seed=4, window=60)
    scaler.observe_(rows[:300])
    state = scaler.state_dict()
    assert state["_extra_state"]["window"] == 60
    twin.load_state_dict(state)
    assert twin._rng.bit_generator.state == scaler._rng.bit_generator.state
    assert observe_all(scaler, rows[300:]) == observe_all(twin, rows[300:])
    assert np.array_equal(scaler._reservoir, twin._reservoir)
    assert torch.equal(scaler.low, twin.low)
    for other_window, state_window in ((None, 60), (61, 60)):
        other = RunningQuantileRange(3, reservoir_size=20, window=other_window)
        other.observe_(rows[:5])
        before = state_of(other)
        with pytest.raises(ValueError, match=f"state was kept with window={state_window}, "
                                             f"this range has window={other_window}"):
            other.set_extra_state(scaler.get_extra_state())
        assert_same(state_of(other), before)
    uniform = RunningQuantileRange(3, reservoir_size=20)
    uniform.observe_(rows[:50])
    older = {key: value for key, value in uniform.get_extra_state().items() if key != "window"}
    restored = RunningQuantileRange(3, reservoir_size=20, seed=8)
    restored.set_extra_state(older)
    assert restored._seen == 50 and np.array_equal(restored._reservoir, uniform._reservoir)
    with pytest.raises(ValueError, match="window=None, this range has window=60"):
        RunningQuantileRange(3, reservoir_size=20, window=60).set_extra_state(older)


@pytest.mark.parametrize("setting, value, message", [
    ("quantile", 0.05, "quantile=0.01, this range has quantile=0.05"),
    ("tolerance", 0.0, "tolerance=0.05, this range has tolerance=0.0"),
    ("reservoir_size", 30, "reservoir_size=20, this range has reservoir_size=30"),
    ("clip", False, "clip=True, this range has clip=False"),
    ("feature_range", (0.0, 1.0),
     r"feature_range=\(-1.0, 1.0\), this range has feature_range=\(0.0, 1.0\)"),
])
def test_a_state_kept_with_other_settings_is_refused_naming_them(setting, value, message):
    """The settings that shape the sample and the range go with the state, as
    its window: a range of another one refuses it and changes nothing (before:
    it took the state, and went on as another range than the one saved; with a
    larger reservoir, one not yet full, silently); a state from before they were
    kept is taken."""
    torch.manual_seed(2)
    rows = torch.randn(15, 3)  # the reservoir of 20 not yet full
    scaler = RunningQuantileRange(3, reservoir_size=20, seed=1)
    scaler.observe_(rows)
    state = scaler.get_extra_state()
    other = RunningQuantileRange(3, **{"reservoir_size": 20, setting: value})
    before = state_of(other)
    with pytest.raises(ValueError, match=f"the quantile range's state was kept with {message}: "
                                         f"build it with the state's {setting}"):
        other.set_extra_state(state)
    assert_same(state_of(other), before)
    older = {key: item for key, item in state.items() if key != setting}
    other.set_extra_state(older)
    assert other._seen == 15


@pytest.mark.parametrize("size", [5, 30])
def test_a_full_reservoirs_state_of_another_size_is_refused_naming_the_size(size):
    """A state whose reservoir is full has as many rows as its reservoir_size: a range
    of another size names the setting, as for a reservoir not yet full (before: "reservoir
    state has shape (10, 3), expected (5, 3)" for a smaller one), and changes nothing."""
    torch.manual_seed(3)
    kept = RunningQuantileRange(3, reservoir_size=10, seed=1)
    kept.observe_(torch.randn(20, 3))
    message = (rf"^the quantile range's state was kept with reservoir_size=10, this "
               rf"range has reservoir_size={size}: build it with the state's reservoir_size$")
    with pytest.raises(ValueError, match=message):
        RunningQuantileRange(3, reservoir_size=size).load_state_dict(kept.state_dict())
    other = RunningQuantileRange(3, reservoir_size=size)
    before = state_of(other)
    with pytest.raises(ValueError, match=message):
        other.set_extra_state(kept.get_extra_state())
    assert_same(state_of(other), before)


@pytest.mark.parametrize("window, error, message", [
    (True, TypeError, "window must be an integer, got bool"),
    (2000.0, TypeError, "window must be an integer, got float"),
    ("2000", TypeError, "window must be an integer, got str"),
    (999, ValueError, r"window must be >= 1000, got 999 \(reservoir_size: a row enters "
                      r"with probability reservoir_size / window\)"),
    (0, ValueError, "window must be >= 1000, got 0"),
    (-5, ValueError, "window must be >= 1000, got -5"),
    (2 ** 63 + 1, ValueError, r"window must be at most 2\*\*63"),
])
def test_bad_windows_are_named(window, error, message):
    with pytest.raises(error, match=message):
        RunningQuantileRange(2, window=window)


def test_the_widest_and_narrowest_windows():
    """``window = reservoir_size``: every row past the fill enters; 2**63, the
    widest NumPy draws from, and a NumPy integer are taken."""
    scaler = RunningQuantileRange(1, reservoir_size=3, window=3)
    assert all(scaler._offer(np.array([float(t)])) for t in range(50))
    assert RunningQuantileRange(1, window=np.int64(5000)).window == 5000
    widest = RunningQuantileRange(1, reservoir_size=1, window=2 ** 63)
    assert [widest._offer(np.array([float(t)])) for t in range(3)] == [True, False, False]
    assert repr(scaler).endswith("clip=True, window=3)")


def test_the_nn_package_exports_the_quantile_range_errors():
    # RunningQuantileRange raises them, so they are importable beside it, as the
    # datasets package exports its loaders' errors
    import torch_geometric_stream.nn as package
    from torch_geometric_stream.nn import scaling
    for name in ["QuantileRangeSettingError", "QuantileRangeTypeError",
                 "QuantileRangeValueError"]:
        assert name in package.__all__
        assert getattr(package, name) is getattr(scaling, name)
    assert all(hasattr(package, name) for name in package.__all__)
    with pytest.raises(package.QuantileRangeValueError):
        RunningQuantileRange(2, quantile=0.7)


#: A feature of a narrow quantile range (0, 1e-30) and one of (1, 2), float32.
_NARROW = torch.tensor([[0.0, 1.0], [1e-30, 2.0], [0.0, 1.0], [1e-30, 2.0]])
_NARROW_MESSAGE = (r"^rows\[{}, 0\] = 10000000000.0 scales to inf by its feature's quantile "
                   r"range \(0.0, 1.0000000031710769e-30\): too far outside it for float32$")


def test_without_clipping_a_value_scaled_to_inf_is_refused_and_changes_nothing():
    """A value far out of a narrow range would be scaled to inf, which a learner reads
    as NaN (before: returned, and a SLeDGe learner's weights all became NaN): scaling
    refuses it, naming it, as a fixed range does; observing it is refused, and the
    range, its sample and its generator are as before. Clipped, it is the range's end."""
    scaler = RunningQuantileRange(2, quantile=0.25, tolerance=0.0, clip=False)
    twin = copy.deepcopy(scaler)
    for module in (scaler, twin):
        observe_all(module, _NARROW)
    assert torch.equal(torch.stack([scaler.low, scaler.high]),
                       torch.tensor([[0.0, 1.0], [1e-30, 2.0]]))
    far = torch.tensor([[1e10, 1.5]])
    for scale in (scaler, scaler.peek):
        with pytest.raises(ValueError, match=_NARROW_MESSAGE.format(0)):
            scale(far)
    before = state_of(scaler)
    with pytest.raises(ValueError, match=_NARROW_MESSAGE.format(1)):
        scaler.observe_(torch.cat([torch.tensor([[0.0, 1.5]]), far]))
    assert_same(state_of(scaler), before)
    row = torch.tensor([[0.5e-30, 1.5]])  # and the next row goes on as without the call
    assert scaler.observe_(row) == twin.observe_(row)
    assert_same(state_of(scaler), state_of(twin))
    assert np.array_equal(scaler.quantiles(), twin.quantiles())
    assert torch.equal(scaler(row), torch.tensor([[0.0, 0.0]]))
    clipped = RunningQuantileRange(2, quantile=0.25, tolerance=0.0)
    observe_all(clipped, _NARROW)
    assert clipped(far).tolist() == [[1.0, 0.0]]


def test_a_learner_refuses_a_row_its_unclipped_range_scales_to_inf_and_changes_nothing():
    """SLeDGe with an unclipped robust input range refuses such a row (before: its
    prediction was NaN, and learning it made its weights NaN), and is left as it was:
    its range, sample and class counts too."""
    learner = SLeDGe(2, 2, seed=0, class_prior="stream", input_scaling=RunningQuantileRange(
        2, quantile=0.25, tolerance=0.0, clip=False))
    learner.learn(_NARROW, torch.zeros(4, dtype=torch.long))
    before = state_of(learner)
    with pytest.raises(ValueError, match=_NARROW_MESSAGE.format(0)):
        learner.predict_proba(torch.tensor([[1e10, 1.5]]))
    with pytest.raises(ValueError, match=_NARROW_MESSAGE.format(0)):
        learner.learn(torch.tensor([[1e10, 1.5]]), torch.tensor([1]))
    assert_same(state_of(learner), before)
    assert learner.input_scaler._seen == 4


def test_a_row_that_narrows_the_range_past_a_stored_row_is_refused_and_changes_nothing():
    """A window drifts the range from (3.75, 2.5e9) to a sliver near 0, where the
    stored row 1e10 would be re-derived as inf: the row that narrows it is refused,
    and the range, sample, memory and weights are as before (before: the memory's
    prototypes and then the weights became NaN)."""
    learner = SLeDGe(1, 2, seed=0, input_scaling=RunningQuantileRange(
        1, quantile=0.25, tolerance=0.0, reservoir_size=4, window=4, clip=False))
    learner.learn(torch.tensor([[0.0], [1e10], [5.0], [7.0]]), torch.tensor([0, 1, 0, 1]))
    learner.learn(torch.tensor([[0.0], [1e-30], [0.0]]), torch.tensor([0, 0, 0]))
    before = state_of(learner)
    with pytest.raises(ValueError, match=r"^the rows would narrow the quantile range so "
                                         r"that a stored row scales to inf: keep_finite"
                                         r"\[50, 0\] = 10000000000.0 by its feature's range "
                                         r"\(0.0, 2.500000007927692e-31\), too far outside "
                                         r"it for float32; the rows are refused and the range "
                                         r"is left as it was$"):
        learner.learn(torch.tensor([[1e-30]]), torch.tensor([0]))
    assert_same(state_of(learner), before)
    assert learner.input_scaler._seen == 7


def test_a_refused_batch_that_replaced_kept_rows_is_undone_exactly():
    """A full reservoir (k = W = 4: every row replaces a slot) offered six tiny
    rows that replace slots 3, 2, 2, 1, 1, 0 (slots 2 and 1 twice) narrows the
    range to (0, 2.5e-31), by which the stored row 1e10 scales to inf: the batch
    is refused, and the sample, row count, generator and bounds are put back from
    the log of what it changed, so that the range goes on as an untouched twin."""
    scaler = RunningQuantileRange(1, quantile=0.25, tolerance=0.0, reservoir_size=4, window=4,
                                  clip=False)
    observe_all(scaler, torch.tensor([[1.0], [2.0], [3.0], [4.0]]))
    twin = copy.deepcopy(scaler)
    assert [int(i) for i in copy.deepcopy(scaler._rng).integers(4, size=6)] == [3, 2, 2, 1, 1, 0]
    before = state_of(scaler)
    tiny = torch.tensor([[0.0], [1e-30], [0.0], [1e-30], [0.0], [1e-30]])
    stored = torch.tensor([[1e10]])
    with pytest.raises(ValueError, match=r"^the rows would narrow the quantile range so that "
                                         r"a stored row scales to inf: keep_finite\[0, 0\] = "
                                         r"10000000000.0 by its feature's range \(0.0, "
                                         r"2.500000007927692e-31\), too far outside it for "
                                         r"float32; the rows are refused and the range is left "
                                         r"as it was$"):
        scaler.observe_(tiny, keep_finite=stored)
    assert_same(state_of(scaler), before)
    assert (scaler.low.item(), scaler.high.item()) == (1.75, 3.25)
    assert np.array_equal(scaler.quantiles(), twin.quantiles())
    for rows in (tiny[:3], torch.tensor([[2.5], [0.5]])):  # as if never offered
        assert scaler.observe_(rows, keep_finite=stored) == twin.observe_(rows)
        assert_same(state_of(scaler), state_of(twin))
        assert np.array_equal(scaler.quantiles(), twin.quantiles())
    assert torch.equal(scaler(stored), twin(stored))


def test_the_undo_log_changes_no_sample():
    """The unclipped range's log of what a call changes is only read when it
    refuses: clipped and unclipped ranges fed the same stream keep the very same
    sample, generator and bounds (keep_finite is ignored with clipping)."""
    rows = torch.from_numpy(np.random.default_rng(5).normal(size=(60, 3))).float()
    for window in (None, 12):
        clipped, unclipped = (RunningQuantileRange(3, quantile=0.1, tolerance=0.0,
                                                   reservoir_size=8, window=window, clip=clip)
                              for clip in (True, False))
        for batch in rows.split(7):
            assert (clipped.observe_(batch, keep_finite=rows)
                    == unclipped.observe_(batch, keep_finite=rows))
            sample, other = state_of(clipped), state_of(unclipped)
            assert (sample["_extra_state"].pop("clip"), other["_extra_state"].pop("clip")) == (
                True, False)  # a setting, which differs by design
            assert_same(sample, other)
        assert np.array_equal(clipped.quantiles(), unclipped.quantiles())
