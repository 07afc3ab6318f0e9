"""In-model online scaling: RunningMinMax, memory sources, SLeDGe(input_scaling="online"),
and the same learner invariants with input_scaling="robust"."""
import math
import re

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from state_helpers import assert_same, state_of

from torch_geometric_stream.evaluation import GlobalMinMaxScaler, OnlineMinMaxScaler
from torch_geometric_stream.memory import DualPrototypeMemory
from torch_geometric_stream.models import SLeDGe
from torch_geometric_stream.nn import RunningMinMax, RunningQuantileRange


def test_running_min_max_hand_checked():
    scaler = RunningMinMax(2)
    assert torch.equal(scaler(torch.tensor([[5.0, -3.0]])), torch.zeros(1, 2))  # nothing seen
    assert scaler.observe_(torch.tensor([[0.0, 10.0]]))
    assert not scaler.observe_(torch.tensor([[0.0, 10.0]]))  # same row: range unchanged
    assert scaler.observe_(torch.tensor([[4.0, 10.0]]))
    assert scaler.low.tolist() == [0.0, 10.0] and scaler.high.tolist() == [4.0, 10.0]
    # feature 0 spans [0, 4]; feature 1 is constant so far -> middle of [-1, 1]
    assert torch.allclose(scaler(torch.tensor([[1.0, 7.0]])), torch.tensor([[-0.5, 0.0]]))
    # peek widens the range with the row itself and leaves the state alone
    assert torch.allclose(scaler.peek(torch.tensor([[8.0, 12.0]])), torch.tensor([[1.0, 1.0]]))
    assert scaler.high.tolist() == [4.0, 10.0]
    assert repr(scaler) == "RunningMinMax(channels=2, feature_range=(-1.0, 1.0))"
    assert repr(RunningMinMax(3, (0, 1))) == "RunningMinMax(channels=3, feature_range=(0.0, 1.0))"


def test_running_min_max_matches_online_transform():
    rows = torch.randn(50, 3, dtype=torch.float64) * 7
    scaler, online = RunningMinMax(3).double(), OnlineMinMaxScaler()
    for row in rows:
        expected = online.transform_one(row).double()
        assert torch.allclose(scaler.peek(row.unsqueeze(0))[0], expected, atol=1e-6)
        scaler.observe_(row.unsqueeze(0))


def test_memory_sources_follow_merges_and_refresh():
    memory = DualPrototypeMemory(2, num_classes=1, labeled_size=1, unlabeled_size=0,
                                 source_channels=2)
    with pytest.raises(ValueError, match="source"):
        memory.update(F.normalize(torch.tensor([1.0, 0.0]), dim=0), 0)
    unit = lambda r: F.normalize(r, dim=-1)  # noqa: E731  (sources -> prototypes)
    memory.update(unit(torch.tensor([1.0, 0.0])), 0, source=torch.tensor([2.0, 0.0]),
                  derive=unit)
    x = unit(torch.tensor([0.6, 0.8]))
    update = memory.update(x, 0, unit, source=torch.tensor([3.0, 4.0]), derive=unit)
    assert update.merged
    weight = 0.5 * 0.6  # (1 - 1/2) * sim, count offset 1
    expected_source = (1 - weight) * torch.tensor([2.0, 0.0]) + weight * torch.tensor([3.0, 4.0])
    assert torch.allclose(memory.sources[0], expected_source)
    # the merged prototype is derived from the merged source
    assert torch.allclose(memory.prototypes[0], unit(expected_source))
    memory.refresh(lambda r: F.normalize(r * torch.tensor([1.0, 2.0]), dim=-1))
    assert torch.allclose(memory.prototypes[0],
                          F.normalize(expected_source * torch.tensor([1.0, 2.0]), dim=0))


def test_refresh_keeps_empty_slots_zero_and_needs_sources():
    memory = DualPrototypeMemory(2, num_classes=2, labeled_size=2, unlabeled_size=2,
                                 source_channels=2)
    memory.update(F.normalize(torch.tensor([1.0, 1.0]), dim=0), 1, source=torch.tensor([1.0, 1.0]),
                  derive=lambda r: F.normalize(r, dim=-1))
    memory.refresh(lambda r: F.normalize(r + 1.0, dim=-1))
    assert memory.prototypes[[0, 2, 3]].abs().sum() == 0
    assert torch.allclose(memory.prototypes[1], torch.full((2,), 1 / math.sqrt(2)))
    with pytest.raises(RuntimeError, match="source_channels"):
        DualPrototypeMemory(2, 2, 2, 2).refresh(lambda r: r)


def small_model(input_scaling="online", **kwargs):
    return SLeDGe(2, 2, labeled_size=2, unlabeled_size=6, k=1, hidden_channels=8,
                  num_layers=2, seed=0, input_scaling=input_scaling, **kwargs)


SCALINGS = pytest.mark.parametrize("input_scaling", ["online", "robust"])


def test_first_row_is_rederived_once_the_range_grows():
    model = small_model()
    model.learn(torch.tensor([0.0, 0.0]), 0)  # no range yet: scaled to the zero vector
    assert model.memory.prototypes[0].abs().sum() == 0
    model.learn(torch.tensor([2.0, 4.0]), 1)
    s = 1 / math.sqrt(2)
    assert torch.allclose(model.memory.prototypes[0], torch.tensor([-s, -s]))
    assert torch.allclose(model.memory.prototypes[1], torch.tensor([s, s]))
    assert torch.equal(model.memory.sources[:2], torch.tensor([[0.0, 0.0], [2.0, 4.0]]))


@SCALINGS
@pytest.mark.parametrize("variant", [{}, {"light": True}, {"graph": "none"}])
def test_prototypes_are_always_derived_from_sources(variant, input_scaling):
    torch.manual_seed(1)
    model = small_model(input_scaling, **variant)
    rows = torch.randn(40, 2) * torch.tensor([1.0, 30.0]) + torch.linspace(0, 20, 40)[:, None]
    rows[25] = torch.tensor([1e5, -1e5])  # an outlier: the robust range clips it
    for position, row in enumerate(rows):
        model.predict(row)
        model.learn(row, position % 2 if position % 3 == 0 else -1)
        mask = model.memory.node_mask
        derived = F.normalize(model.input_scaler(model.memory.sources), dim=-1)
        assert torch.allclose(model.memory.prototypes[mask], derived[mask], atol=1e-6)
        assert model.memory.prototypes[~mask].abs().sum() == 0
    assert model.memory.is_full


def test_memory_equals_outside_scaling_once_the_range_is_known():
    """Rows inside the range of the first two: without merges, the memory is
    exactly the whole-stream-scaled rows (the first two are re-derived)."""
    torch.manual_seed(2)
    rows = torch.rand(8, 2) * 10
    rows[0], rows[1] = torch.tensor([-1.0, -1.0]), torch.tensor([11.0, 11.0])
    labels = [0, 1, -1, -1, -1, -1, -1, -1]
    model = small_model()
    for row, label in zip(rows, labels):
        model.learn(row, label)
    scaled = F.normalize(GlobalMinMaxScaler().fit(rows).transform_many(rows), dim=-1)
    assert torch.allclose(model.memory.prototypes, scaled, atol=1e-6)


@SCALINGS
def test_bad_input_leaves_scaler_and_memory_unchanged(input_scaling):
    model = small_model(input_scaling)
    model.learn(torch.tensor([[0.0, 1.0], [3.0, -2.0], [1.0, 1.0], [2.0, 0.0], [5.0, 4.0],
                              [-1.0, 2.0]]), torch.tensor([0, -1, -1, 1, -1, -1]))
    before = state_of(model)
    with pytest.raises(ValueError, match="NaN|finite"):
        model.learn(torch.tensor([float("nan"), 100.0]), 1)
    with pytest.raises(ValueError):
        model.learn(torch.tensor([1.0, 2.0, 3.0]), 1)
    assert_same(state_of(model), before)


@SCALINGS
def test_state_dict_round_trip_resumes_identically(input_scaling):
    torch.manual_seed(3)
    rows = torch.randn(30, 2) * 5
    labels = [p % 2 if p % 4 == 0 else -1 for p in range(30)]
    model, twin = small_model(input_scaling), small_model(input_scaling)
    for row, label in zip(rows[:15], labels[:15]):
        model.learn(row, label)
    twin.load_state_dict(model.state_dict())
    for row, label in zip(rows[15:], labels[15:]):
        assert torch.equal(model.predict_proba(row), twin.predict_proba(row))
        model.learn(row, label)
        twin.learn(row, label)
    assert torch.equal(model.input_scaler.low, twin.input_scaler.low)


@SCALINGS
def test_reset_state_forgets_the_range(input_scaling):
    model = small_model(input_scaling)
    model.learn(torch.tensor([1.0, 5.0]), 0)
    model.learn(torch.tensor([2.0, 3.0]), 1)
    model.reset_state()
    assert model.memory.num_nodes == 0
    assert torch.isinf(model.input_scaler.low).all()


def test_unknown_input_scaling_is_rejected():
    with pytest.raises(ValueError, match="input_scaling"):
        SLeDGe(2, 2, input_scaling="global")
    with pytest.raises(ValueError, match="input_scaling must be one of"):
        SLeDGe(2, 2, input_scaling=torch.nn.Identity())


def _learn_stream(model, rows):
    predictions = []
    for position, row in enumerate(rows):
        predictions.append(model.predict(row).item())
        model.learn(row, position % 2 if position % 4 == 0 else -1)
    return predictions


@pytest.mark.parametrize("name, scaler", [("online", lambda: RunningMinMax(2)),
                                          ("robust", lambda: RunningQuantileRange(2, seed=0))])
def test_a_scaler_module_equals_its_name(name, scaler):
    """``input_scaling=<module>`` with the settings the name builds runs the very
    same stream: same predictions, memory and range."""
    torch.manual_seed(3)
    rows = torch.randn(30, 2) * torch.tensor([1.0, 20.0])
    by_name, by_module = small_model(name), small_model(scaler())
    assert by_module.input_scaling == name
    assert _learn_stream(by_name, rows) == _learn_stream(by_module, rows)
    assert torch.equal(by_name.memory.prototypes, by_module.memory.prototypes)
    assert torch.equal(by_name.input_scaler.high, by_module.input_scaler.high)


def test_a_scaler_module_brings_its_own_quantile():
    """q = 0.25, tolerance 0: the range is NumPy's 25-75 % quantiles of every row
    learned (fewer than the reservoir), and the memory is derived with it."""
    torch.manual_seed(4)
    rows = torch.randn(20, 2) * torch.tensor([3.0, 0.5])
    model = small_model(RunningQuantileRange(2, quantile=0.25, tolerance=0.0))
    _learn_stream(model, rows)
    expected = np.quantile(rows.double().numpy(), [0.25, 0.75], axis=0)
    assert torch.allclose(model.input_scaler.low.double(), torch.from_numpy(expected[0]))
    assert torch.allclose(model.input_scaler.high.double(), torch.from_numpy(expected[1]))
    mask = model.memory.node_mask
    derived = F.normalize(model.input_scaler(model.memory.sources), dim=-1)
    assert torch.allclose(model.memory.prototypes[mask], derived[mask], atol=1e-6)


def test_an_unclipped_range_keeps_the_outlier_apart_in_the_memory():
    """``RunningQuantileRange(clip=False)`` inside the learner: the memory is
    still derived from its sources, and an outlier's row is not the clipped
    corner (1, -1) / sqrt(2) but points along its own, far larger, values."""
    torch.manual_seed(1)
    rows = torch.randn(200, 2) * torch.tensor([1.0, 30.0])  # q = 0.01 leaves out one row
    rows[25] = torch.tensor([1e3, -2e5])
    model = small_model(RunningQuantileRange(2, seed=0, clip=False))
    _learn_stream(model, rows)
    mask = model.memory.node_mask
    derived = F.normalize(model.input_scaler(model.memory.sources), dim=-1)
    assert torch.allclose(model.memory.prototypes[mask], derived[mask], atol=1e-6)
    outlier = model.input_scaler(rows[25:26])[0]
    assert outlier[1] < -100 and outlier.abs().max() > 1  # unclipped
    assert not torch.allclose(F.normalize(outlier, dim=0),
                              torch.tensor([1.0, -1.0]) / math.sqrt(2), atol=0.1)


def test_a_scaler_module_must_fit_and_be_new():
    with pytest.raises(ValueError, match="scales 3 features, in_channels is 2"):
        small_model(RunningQuantileRange(3))
    used = RunningMinMax(2)
    used.observe_(torch.tensor([[1.0, 2.0]]))
    with pytest.raises(ValueError, match="has seen rows already"):
        small_model(used)
    used.reset_state()
    assert small_model(used).input_scaler is used


@pytest.mark.parametrize("make", [RunningMinMax, RunningQuantileRange])
def test_a_scaler_module_goes_to_the_learner_s_device(monkeypatch, make):
    """A scaler on another device than the learner is a submodule like the
    others: moved to the learner's device (in place), as ``.to()`` moves it.
    Without a second device here, the learner reports ``meta`` as its device;
    on a GPU: tests/test_cuda.py. Before: it stayed where it was given."""
    scaler = make(2)
    monkeypatch.setattr(SLeDGe, "device", property(lambda self: torch.device("meta")))
    model = small_model(scaler)
    assert model.input_scaler is scaler and scaler.low.is_meta and scaler.high.is_meta


@pytest.mark.parametrize("name, make", [("online", lambda: RunningMinMax(2)),
                                        ("robust", lambda: RunningQuantileRange(2, seed=0))])
@pytest.mark.parametrize("given, learner", [(torch.float64, torch.float32),
                                            (torch.float32, torch.float64)])
def test_a_scaler_module_takes_the_learner_s_dtype(name, make, given, learner):
    """A scaler of another floating dtype than the learner is cast to the
    learner's (in place), as ``.to()`` and ``.double()`` cast a submodule: the
    stream is then the one of the scaler the name builds. Before: it kept its
    own dtype (a float64 range scaling a float32 learner's rows)."""
    torch.manual_seed(3)
    rows = (torch.randn(30, 2) * torch.tensor([1.0, 20.0])).to(learner)
    scaler = make().to(given)
    default = torch.get_default_dtype()
    torch.set_default_dtype(learner)  # the learner's parameters and memory
    try:
        by_module, by_name = small_model(scaler), small_model(name)
    finally:
        torch.set_default_dtype(default)
    assert by_module.dtype == by_name.dtype == learner
    assert by_module.input_scaler is scaler
    assert scaler.low.dtype == scaler.high.dtype == learner
    assert _learn_stream(by_module, rows) == _learn_stream(by_name, rows)
    assert_same(state_of(by_module), state_of(by_name))


def test_a_scaler_module_on_meta_is_refused():
    # before: a RuntimeError from torch (reading a meta tensor)
    with pytest.raises(TypeError, match="input_scaling is on the 'meta' device"):
        small_model(RunningMinMax(2).to("meta"))


def test_extreme_finite_values_do_not_overflow_the_range():
    # 3e38 - (-3e38) overflows float32; the scaled rows must stay finite and exact
    scaler = RunningMinMax(1)
    scaler.observe_(torch.tensor([[3e38], [-3e38]]))
    scaled = scaler(torch.tensor([[3e38], [0.0], [-3e38]]))
    assert torch.equal(scaled, torch.tensor([[1.0], [0.0], [-1.0]]))
    model = small_model()
    for row in ([3e38, 1.0], [-3e38, 2.0], [0.0, 0.0], [1.0, -3e38]):
        model.learn(torch.tensor(row), -1)
    assert all(bool(torch.isfinite(v).all()) for v in model.state_dict().values()
               if isinstance(v, torch.Tensor) and v.is_floating_point())


@pytest.mark.parametrize("make", [lambda: RunningMinMax(2), lambda: RunningQuantileRange(2)],
                         ids=["min-max", "quantile"])
@pytest.mark.parametrize("dtype, rows_dtype, value",
                         [(torch.float32, torch.float64, 1e39),
                          (torch.float16, torch.float32, 1e5),
                          (torch.bfloat16, torch.float64, 1e39)])
def test_rows_beyond_the_range_s_dtype_are_refused(make, dtype, rows_dtype, value):
    """Finite rows of a wider dtype cast into an inf bound. Before: the range
    took them, scaled the feature to -1 for good and its own state_dict was
    refused on loading ('finite with low <= high, got ... high[0] = inf')."""
    scaler = make().to(dtype)
    scaler.observe_(torch.tensor([[0.0, 0.0], [1.0, 2.0]], dtype=rows_dtype))
    before = state_of(scaler)
    name, shown = str(dtype).removeprefix("torch."), torch.tensor(value, dtype=rows_dtype).item()
    with pytest.raises(ValueError, match=rf"^rows\[0, 0\] = {re.escape(str(shown))} is beyond "
                                         rf"{name}'s range \(\|x\| <= .*\), the range's dtype: "
                                         r"the range is left as it was; scale the rows first or "
                                         r"move the range to a wider dtype"):
        scaler.observe_(torch.tensor([[value, 0.5]], dtype=rows_dtype))
    assert_same(state_of(scaler), before)
    assert scaler.observe_(torch.tensor([[2.0, 3.0]], dtype=rows_dtype))  # rows that fit do
    make().to(dtype).load_state_dict(scaler.state_dict())


def test_a_cast_to_float8_is_not_checked_for_inf():
    # float8_e4m3fn has no inf (it saturates); before: isfinite raised NotImplementedError
    scaler = RunningMinMax(2)
    scaler.observe_(torch.tensor([[1000.0, 1.0], [0.0, 0.0]]))
    assert scaler.to(torch.float8_e4m3fn).low.dtype == torch.float8_e4m3fn
