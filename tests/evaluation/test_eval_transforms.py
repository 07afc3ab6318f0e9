import copy
import math
import re
import threading

import numpy as np
import pytest
import torch
from state_helpers import assert_same, state_of
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from torch_geometric_stream.evaluation import (
    Compose,
    GlobalMinMaxScaler,
    L2Normalize,
    OnlineMinMaxScaler,
    OnlineQuantileRangeScaler,
    SignedLog1p,
    StreamTransform,
    make_transform,
    resolve_feature_transform,
    resolve_scaling,
    unchanged_on_error,
)
from torch_geometric_stream.evaluation.transforms import FixedRangeScaler, check_transform


def row_by_row(transform, data):
    return torch.stack([transform(row) for row in data])


def test_online_scaler_by_hand():
    data = np.array([[0.0, 5.0], [2.0, 5.0], [1.0, 5.0], [4.0, 5.0]])
    # Feature 0: running [min, max] = [0, 0], [0, 2], [0, 2], [0, 4]; feature 1 is constant.
    expected = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0], [1.0, 0.0]])
    assert torch.equal(OnlineMinMaxScaler().transform_many(data), expected)
    assert torch.equal(row_by_row(OnlineMinMaxScaler(), data), expected)
    scaled = OnlineMinMaxScaler(feature_range=(0, 1)).transform_many(data)
    assert torch.equal(scaled, torch.tensor([[0.5, 0.5], [1.0, 0.5], [0.5, 0.5], [1.0, 0.5]]))


def test_transform_without_update_scales_as_if_the_row_arrived_and_keeps_the_state():
    data = np.array([[0.0, 5.0], [2.0, 5.0], [4.0, 1.0]])
    scaler, twin = OnlineMinMaxScaler(), OnlineMinMaxScaler()
    scaler.transform_many(data[:2])
    twin.transform_many(data[:2])
    peeked = scaler.transform_one(data[2], update=False)
    assert torch.equal(peeked, torch.tensor([1.0, -1.0]))  # range [0, 4] and [1, 5]
    assert torch.equal(scaler.transform_many(data[:2], update=False),
                       twin.transform_many(data[:2], update=False))
    assert scaler.max_.tolist() == [2.0, 5.0] and scaler.min_.tolist() == [0.0, 5.0]
    assert torch.equal(scaler.transform_one(data[2]), peeked)  # now it arrives
    assert scaler.max_.tolist() == [4.0, 5.0] and scaler.min_.tolist() == [0.0, 1.0]


def test_online_scaler_never_sees_future_rows():
    data = np.random.default_rng(0).normal(size=(50, 4))
    spiked = data.copy()
    spiked[30] = [1e6, -1e6, 1e6, -1e6]
    clean = OnlineMinMaxScaler().transform_many(data)
    dirty = OnlineMinMaxScaler().transform_many(spiked)
    assert torch.equal(clean[:30], dirty[:30])
    assert not torch.equal(clean[31:], dirty[31:])
    assert torch.equal(row_by_row(OnlineMinMaxScaler(), spiked)[:30], clean[:30])


@settings(max_examples=30, deadline=None)
@given(data=arrays(np.float64, st.tuples(st.integers(1, 30), st.integers(1, 5)),
                   elements=st.floats(-1e3, 1e3)),
       split=st.integers(0, 30))
def test_transform_many_equals_row_by_row(data, split):
    pipeline = make_transform()
    expected = row_by_row(make_transform(), data)
    assert expected.dtype == torch.float32
    # A batch in two chunks gives the same as one batch and as row by row.
    split = min(split, data.shape[0] - 1)
    chunks = [pipeline.transform_many(chunk) for chunk in (data[:split + 1], data[split + 1:])
              if chunk.size]
    assert torch.equal(torch.cat(chunks), expected)
    assert torch.all(expected >= -1) and torch.all(expected <= 1)


def test_online_scaler_state_dict_resumes():
    data = np.random.default_rng(1).normal(size=(20, 3))
    full = make_transform().transform_many(data)
    first = make_transform()
    first.transform_many(data[:12])
    resumed = make_transform()
    resumed.load_state_dict(first.state_dict())
    assert torch.equal(resumed.transform_many(data[12:]), full[12:])


@pytest.mark.parametrize("state, problem", [
    ({"min": torch.zeros(3), "max": None}, "both None or both tensors, got a tensor and None"),
    ({"min": None, "max": torch.ones(3)}, "both None or both tensors, got None and a tensor"),
    ({"min": torch.zeros(3), "max": torch.ones(2)}, "of one shape (d,), got (3,) and (2,)"),
    ({"min": torch.zeros(1, 3), "max": torch.ones(1, 3)},
     "of one shape (d,), got (1, 3) and (1, 3)"),
])
def test_min_max_scaler_refuses_a_state_without_a_whole_range(state, problem):
    scaler = OnlineMinMaxScaler()
    scaler(np.array([0.0, 1.0, 2.0]))
    before = state_of(scaler)
    with pytest.raises(ValueError) as error:
        scaler.load_state_dict(state)
    assert str(error.value) == f"OnlineMinMaxScaler state['min'] and state['max'] must be {problem}"
    assert_same(state_of(scaler), before)


@pytest.mark.parametrize("scaler_class", [OnlineMinMaxScaler, GlobalMinMaxScaler])
def test_min_max_scaler_refuses_a_range_on_the_meta_device_as_a_type(scaler_class):
    # before: NotImplementedError ("Cannot copy out of meta tensor") from the range check
    rows = np.array([[0.0, 1.0], [3.0, 4.0]])
    scaler = scaler_class()
    if scaler_class is GlobalMinMaxScaler:
        scaler.fit(rows)
    scaler.transform_many(rows)
    before = state_of(scaler)
    state = {**scaler.state_dict(), "max": torch.ones(2, dtype=torch.float64, device="meta")}
    with pytest.raises(TypeError, match=rf"^{scaler_class.__name__} state\['max'\] is on the "
                                        r"'meta' device, which holds no values"):
        scaler.load_state_dict(state)
    assert_same(state_of(scaler), before)


@pytest.mark.parametrize("scaler_class", [OnlineMinMaxScaler, GlobalMinMaxScaler])
@pytest.mark.parametrize("key, index, value, error, problem", [
    ("min", 1, math.nan, ValueError, "must be, per feature, inf and -inf (no row seen) or "
     "finite with low <= high, got min[1] = nan and max[1] = 4.0"),
    ("min", 1, -math.inf, ValueError, "must be, per feature, inf and -inf (no row seen) or "
     "finite with low <= high, got min[1] = -inf and max[1] = 4.0"),
    ("min", 2, 9.0, ValueError, "must be, per feature, inf and -inf (no row seen) or "
     "finite with low <= high, got min[2] = 9.0 and max[2] = 5.0"),
    ("max", 0, math.inf, ValueError, "must be, per feature, inf and -inf (no row seen) or "
     "finite with low <= high, got min[0] = 0.0 and max[0] = inf"),
    ("max", None, None, TypeError, "must be floating-point tensors, got torch.float64 and "
     "torch.int64"),
])
def test_min_max_scaler_refuses_a_range_it_cannot_reach(scaler_class, key, index, value,
                                                        error, problem):
    # before: each loaded; a NaN or -inf bound then scaled rows to 0 or NaN for ever, a
    # low above high or an integer range scaled them silently wrong
    rows = np.array([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    scaler = scaler_class()
    if scaler_class is GlobalMinMaxScaler:
        scaler.fit(rows)
    scaler.transform_many(rows)
    before = state_of(scaler)
    state = scaler.state_dict()
    if index is None:
        state[key] = state[key].long()
    else:
        state[key][index] = value
    with pytest.raises(error) as raised:
        scaler.load_state_dict(state)
    assert str(raised.value) == (f"{type(scaler).__name__} state['min'] and state['max'] "
                                 f"{problem}")
    assert_same(scaler.state_dict(), before)
    unseen = {"min": torch.full((3,), math.inf, dtype=torch.float64),
              "max": torch.full((3,), -math.inf, dtype=torch.float64)}
    scaler.load_state_dict(unseen)  # a feature no row has reached is a range


def test_quantile_scaler_refuses_a_range_state_without_its_entries():
    # before: torch's RuntimeError 'Error(s) in loading state_dict'
    scaler = OnlineQuantileRangeScaler()
    scaler.transform_many(np.arange(6.0).reshape(2, 3))
    before = state_of(scaler)
    state = scaler.state_dict()
    del state["range"]["high"]
    with pytest.raises(ValueError) as raised:
        scaler.load_state_dict(state)
    assert str(raised.value) == ("OnlineQuantileRangeScaler state['range'] must have the keys "
                                 "['_extra_state', 'high', 'low'], got ['_extra_state', 'low']")
    assert_same(state_of(scaler), before)


def test_online_scaler_rejects_other_width():
    scaler = OnlineMinMaxScaler()
    scaler(np.zeros(3))
    with pytest.raises(ValueError, match="features"):
        scaler(np.zeros(4))


@pytest.mark.parametrize("build", [OnlineMinMaxScaler, make_transform, L2Normalize,
                                   OnlineQuantileRangeScaler])
def test_unchanged_on_error_restores_the_state_a_failing_block_changed(build):
    data = np.random.default_rng(2).normal(size=(6, 3))
    transform, twin = build(), build()
    transform.transform_many(data[:3])
    twin.transform_many(data[:3])
    with pytest.raises(RuntimeError, match="rejected"):
        with unchanged_on_error(transform):
            transform(data[3] * 100.0)  # widens the running range, then the block fails
            raise RuntimeError("rejected by the learner")
    assert torch.equal(transform.transform_many(data[3:]), twin.transform_many(data[3:]))
    with unchanged_on_error(transform):  # no error: the update stays
        transform(data[0] * 100.0)
    if build is not L2Normalize:
        assert not torch.equal(transform(data[5]), twin(data[5]))
    with pytest.raises(RuntimeError), unchanged_on_error(None):
        raise RuntimeError("no transform: nothing to restore")


def test_within_unchanged_on_error_an_unbounded_pipeline_saves_its_state_once(monkeypatch):
    # before: the block saved the state, and the pipeline saved it again on each
    # call for its float32 check (a robust range: its reservoir twice per learned row)
    def unbounded():  # log1p(1e30) = 69 over a range of width 1e-40: beyond float32
        scaler = Compose([SignedLog1p(), OnlineQuantileRangeScaler(clip=False)])
        scaler.transform_many(np.array([[0.0, 0.0], [2.0, 1e-40]] * 200))
        return scaler

    def reservoir(scaler):
        return scaler.transforms[1].range_.get_extra_state()

    transform, twin, other = unbounded(), unbounded(), unbounded()
    saved = []
    for scaler in (transform, other):
        monkeypatch.setattr(scaler, "state_dict",
                            lambda _scaler=scaler, _method=scaler.state_dict:
                            saved.append(_scaler) or _method())
    huge = np.array([0.5, 1e30])
    with pytest.raises(ValueError, match="beyond float32's range"):
        with unchanged_on_error(transform, sole=True):
            transform.transform_one(np.array([3.0, 0.0]))  # learned, then undone by the block
            other.transform_one(np.array([3.0, 0.0]))  # not in a block of its own: saves
            assert saved == [transform, other]
            transform.transform_one(huge)  # refused after it took the row
    assert reservoir(other)["seen"] == reservoir(twin)["seen"] + 1
    for scaler in (transform, twin):
        assert reservoir(scaler)["seen"] == 400
    assert torch.equal(reservoir(transform)["reservoir"], reservoir(twin)["reservoir"])
    with pytest.raises(ValueError, match="beyond float32's range"):
        transform.transform_one(huge)  # out of the block: saves, and restores, itself
    assert reservoir(transform)["seen"] == 400
    rows = np.array([[1.0, 0.0], [0.5, 1e-40]])
    assert torch.equal(transform.transform_many(rows), twin.transform_many(rows))


class Counting(StreamTransform):
    """A custom unbounded transform that counts its rows and scales them by 1e10:
    a row of 1e30 ends beyond float32 and is refused after it was counted."""

    def __init__(self):
        self.rows = 0

    def _transform(self, rows):
        self.rows += rows.size(0)
        return rows * 1e10

    def state_dict(self):
        return {"rows": self.rows}

    def load_state_dict(self, state):
        self.rows = state["rows"]


def test_by_default_a_block_that_catches_a_refused_row_sees_the_transform_as_before_it():
    # with the transform's own save skipped in every block (this session's first
    # form), the refused row stayed counted in a block that caught it and went on
    transform = Counting()
    with unchanged_on_error(transform):
        for row in ([1.0], [1e30], [2.0]):
            try:
                transform.transform_one(row)
            except ValueError:
                pass  # a bad row skipped
    assert transform.rows == 2


def test_by_default_a_generator_paused_in_a_block_leaves_the_transform_to_save_itself():
    # the first form marked the transform for the caller while the generator paused
    # in its block: a refused row outside the generator then stayed counted
    transform = Counting()

    def scaled(rows):
        with unchanged_on_error(transform):
            for row in rows:
                yield transform.transform_one(row)

    rows = scaled([[1.0], [2.0]])
    next(rows)
    with pytest.raises(ValueError, match="beyond float32's range"):
        transform.transform_one([1e30])
    assert transform.rows == 1
    with pytest.raises(TypeError, match="sole must be a bool"):
        with unchanged_on_error(transform, sole=1):
            pass


class Locked(StreamTransform):
    """A custom transform that holds a lock, which ``copy.deepcopy`` cannot copy."""

    def __init__(self):
        self.lock = threading.Lock()
        self.rows = 0

    def _transform(self, rows):
        with self.lock:
            self.rows += rows.size(0)
        return rows

    def state_dict(self):
        return {"rows": self.rows}

    def load_state_dict(self, state):
        self.rows = state["rows"]


class SharedLock(Locked):
    """:class:`Locked` with a ``__deepcopy__``: the copy shares the lock (its state,
    a number, cannot be shared)."""

    def __deepcopy__(self, memo):
        return copy.copy(self)


@pytest.mark.parametrize("build", [Locked, lambda: Compose([OnlineMinMaxScaler(), Locked()]),
                                   lambda: Compose([Compose([Locked()])])])
def test_a_transform_that_cannot_be_copied_is_named_with_what_to_do(build):
    # before: a prediction raised "cannot pickle '_thread.lock' object" from deep in copy
    transform = build()
    transform.transform_one(np.array([1.0]))  # learning copies nothing
    # the part of a pipeline that cannot be copied is named (not "Compose([...])")
    message = (r"^Locked\(\) cannot be deep-copied \(cannot pickle '_thread.lock' object\), "
               r"and a transform called with update=False \(a prediction\) transforms with a "
               r"copy of itself: give Locked a __deepcopy__ that copies its state and shares "
               r"or re-creates the rest \(a lock, a file, a generator\)$")
    state = state_of(transform)
    with pytest.raises(TypeError, match=message):
        transform.transform_one(np.array([2.0]), update=False)
    assert_same(state_of(transform), state)
    with pytest.raises(TypeError, match=message):
        check_transform(transform)
    with pytest.raises(TypeError, match="transform must be a StreamTransform, got lock"):
        check_transform(threading.Lock())
    assert check_transform(None) is None


def test_a_transform_with_its_own_deepcopy_predicts():
    transform = SharedLock()
    assert check_transform(transform) is transform
    assert torch.equal(transform.transform_one(np.array([2.0]), update=False),
                       torch.tensor([2.0]))
    assert transform.rows == 0


def test_quantile_range_scaler_by_hand():
    """Rows 5, 1, 4, 2, 3, 6 with q = 0.25 and tolerance 0: row t is scaled with
    NumPy's 25-75 % quantiles of rows 1..t, clipped: [5, 5] (zero span: the
    middle), [2, 4], [2.5, 4.5], [1.75, 4.25], [2, 4], [2.25, 4.75]."""
    data = np.array([[5.0], [1.0], [4.0], [2.0], [3.0], [6.0]])
    expected = torch.tensor([[0.0], [-1.0], [0.5], [-0.8], [0.0], [1.0]])
    scaler = OnlineQuantileRangeScaler(quantile=0.25, tolerance=0.0)
    assert torch.allclose(scaler.transform_many(data), expected)
    assert torch.allclose(row_by_row(OnlineQuantileRangeScaler(quantile=0.25, tolerance=0.0),
                                     data), expected)
    assert (scaler.range_.low.item(), scaler.range_.high.item()) == (2.25, 4.75)


def test_quantile_range_scaler_clips_an_outlier_that_stretches_the_min_max_range():
    data = np.random.default_rng(3).normal(size=(1000, 2))
    spiked = data.copy()
    spiked[500] = [1e6, -1e6]
    clean = OnlineQuantileRangeScaler().transform_many(data)
    dirty = OnlineQuantileRangeScaler().transform_many(spiked)
    assert dirty[500].tolist() == [1.0, -1.0]
    assert (dirty[501:] - clean[501:]).abs().max() < 0.05  # the bulk barely moves
    squeezed = OnlineMinMaxScaler().transform_many(spiked)[501:]
    spread = squeezed.max(dim=0).values - squeezed.min(dim=0).values
    assert (spread < 1e-4).all()  # while min-max squeezes it into a sliver


def test_quantile_range_scaler_state_resumes_and_peeking_keeps_it():
    data = np.random.default_rng(4).exponential(size=(1500, 3))
    full = OnlineQuantileRangeScaler(reservoir_size=100, seed=5).transform_many(data)
    first = OnlineQuantileRangeScaler(reservoir_size=100, seed=5)
    first.transform_many(data[:700])
    peeked = first.transform_many(data[700:900], update=False)
    assert torch.equal(peeked, full[700:900])
    resumed = OnlineQuantileRangeScaler(reservoir_size=100, seed=5)
    resumed.load_state_dict(first.state_dict())
    assert torch.equal(resumed.transform_many(data[700:]), full[700:])
    assert torch.equal(first.transform_many(data[700:]), full[700:])
    with pytest.raises(ValueError, match="features"):
        first(np.zeros(4))
    assert torch.equal(first(data[0]), resumed(data[0]))  # the failed row left no trace


@pytest.mark.parametrize("clip", [True, False])  # a bounded and an unbounded pipeline
def test_a_transform_without_update_copies_the_reservoir_once_and_loads_nothing(monkeypatch,
                                                                                 clip):
    # before: three copies of the state (one to restore, two while loading it back:
    # Compose's own and the range's) and a load that dropped the sorted sample
    from torch_geometric_stream.nn.scaling import RunningQuantileRange

    transform, twin = (make_transform("robust", l2=clip,
                                      robust_options={"reservoir_size": 20, "clip": clip})
                       for _ in range(2))
    data = np.random.default_rng(7).normal(size=(40, 3))
    transform.transform_many(data[:30])
    twin.transform_many(data[:30])
    calls = []
    for name in ("get_extra_state", "__getstate__", "set_extra_state"):
        method = getattr(RunningQuantileRange, name)
        monkeypatch.setattr(RunningQuantileRange, name,
                            lambda self, *args, _name=name, _method=method:
                            calls.append(_name) or _method(self, *args))
    transform.transform_one(data[30], update=False)
    transform.transform_many(data[31:], update=False)
    assert calls == ["__getstate__", "__getstate__"]  # copy.deepcopy, one per call
    monkeypatch.undo()
    assert transform.transforms[0].range_._sorted is not None  # not loaded back: still sorted
    assert torch.equal(transform.transform_many(data[30:]), twin.transform_many(data[30:]))


def test_quantile_range_scaler_passes_its_window_and_keeps_it_in_the_state():
    """``window`` reaches the range (checked at construction, as its other
    settings); the state resumes only a scaler of the same window."""
    data = np.random.default_rng(6).normal(size=(600, 2))
    first = OnlineQuantileRangeScaler(reservoir_size=50, window=120, seed=2)
    first.transform_many(data[:300])
    assert first.range_.window == 120 and "window=120" in repr(first)
    resumed = OnlineQuantileRangeScaler(reservoir_size=50, window=120, seed=2)
    resumed.load_state_dict(first.state_dict())
    assert torch.equal(resumed.transform_many(data[300:]), first.transform_many(data[300:]))
    with pytest.raises(ValueError, match="window=120, this scaler has window=None"):
        OnlineQuantileRangeScaler(reservoir_size=50, seed=2).load_state_dict(
            first.state_dict())
    with pytest.raises(ValueError, match="window must be >= 50"):
        OnlineQuantileRangeScaler(reservoir_size=50, window=49)


def test_make_transform_maps_to_the_feature_range_by_hand():
    data = np.array([[0.0, 5.0], [2.0, 5.0], [1.0, 5.0], [4.0, 5.0]])
    # running ranges as in test_online_scaler_by_hand; a constant feature maps to the
    # middle of (0, 1), 0.5
    online = make_transform("online", l2=False, feature_range=(0, 1))
    assert torch.equal(online.transform_many(data), torch.tensor(
        [[0.5, 0.5], [1.0, 0.5], [0.5, 0.5], [1.0, 0.5]]))
    # the known range (0, 4) to (-2, 0): x / 2 - 2, not clipped
    fixed = make_transform("range", l2=False, value_range=(0, 4), feature_range=(-2, 0))
    assert torch.equal(fixed.transform_many(data), torch.tensor(
        [[-2.0, 0.5], [-1.0, 0.5], [-1.5, 0.5], [0.0, 0.5]]))
    robust = make_transform("robust", robust_options={"quantile": 0.1}, feature_range=(0, 1))
    assert "feature_range=(0.0, 1.0)" in repr(robust)
    with pytest.raises(ValueError, match=r"feature_range must be finite with low < high, "
                                         r"got \(1, 0\)"):
        make_transform("online", feature_range=(1, 0))
    with pytest.raises(ValueError, match="pass feature_range to make_transform itself"):
        make_transform("robust", robust_options={"feature_range": (0, 1)})


def test_robust_scaling_builds_the_quantile_range_scaler():
    pipeline = make_transform("robust", robust_options={"quantile": 0.1, "seed": 3})
    assert repr(pipeline).startswith("Compose([OnlineQuantileRangeScaler(quantile=0.1, "
                                     "tolerance=0.05, reservoir_size=1000, seed=3")
    assert repr(pipeline).endswith("L2Normalize()])")
    assert repr(make_transform("robust-rescale")) == "Compose([])"  # done by the learner
    with pytest.raises(ValueError,
                       match="robust_options need scaling='robust', got scaling='online'"):
        make_transform("online", robust_options={"quantile": 0.1})
    with pytest.raises(ValueError, match="quantile must lie in"):
        OnlineQuantileRangeScaler(quantile=0.5)
    with pytest.raises(ValueError, match="key 'range'"):
        OnlineQuantileRangeScaler().load_state_dict({"min": None})
    with pytest.raises(ValueError, match="'low' tensor"):
        OnlineQuantileRangeScaler().load_state_dict({"range": {"high": torch.zeros(2)}})


def test_a_compose_state_one_transform_refuses_loads_none():
    data = np.random.default_rng(1).normal(size=(20, 3))
    pipeline = Compose([OnlineMinMaxScaler(), OnlineQuantileRangeScaler(reservoir_size=10)])
    pipeline.transform_many(data[:10])
    other = Compose([OnlineMinMaxScaler(), OnlineQuantileRangeScaler(reservoir_size=10)])
    other.transform_many(data[10:])
    before = state_of(pipeline)
    state = {**other.state_dict(), "1": {"range": {"high": torch.zeros(3)}}}
    with pytest.raises(ValueError, match="'low' tensor"):
        pipeline.load_state_dict(state)  # the scaler "0" loaded first, then was put back
    assert_same(state_of(pipeline), before)
    assert torch.equal(pipeline.transform_many(data[10:]),
                       Compose([OnlineMinMaxScaler(), OnlineQuantileRangeScaler(
                           reservoir_size=10)]).transform_many(data)[10:])


def test_global_scaler_exact():
    data = np.array([[0.0, 10.0, 7.0], [5.0, 20.0, 7.0], [10.0, 30.0, 7.0]])
    scaler = GlobalMinMaxScaler().fit(data)
    expected = torch.tensor([[-1.0, -1.0, 0.0], [0.0, 0.0, 0.0], [1.0, 1.0, 0.0]])
    assert torch.equal(scaler.transform_many(data), expected)
    assert torch.equal(scaler(torch.tensor([15.0, 10.0, 7.0])), torch.tensor([2.0, -1.0, 0.0]))
    with pytest.raises(RuntimeError, match="fit"):
        GlobalMinMaxScaler()(np.zeros(3))


class CudaBounds(torch.Tensor):
    """Bounds as a scaler fitted on a GPU holds them: they say they are on a CUDA
    device, and each copy to another device (``to``) is counted and gives the
    host values (a plain tensor)."""

    copies = 0
    device = property(lambda self: torch.device("cuda"))

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is not torch.Tensor.to:
            return super().__torch_function__(func, types, args, kwargs)
        CudaBounds.copies += 1
        return func(args[0].as_subclass(torch.Tensor), *args[1:], **(kwargs or {}))

    def __deepcopy__(self, memo):
        return self.as_subclass(torch.Tensor).clone().as_subclass(CudaBounds)


def on_cuda(scaler: GlobalMinMaxScaler) -> GlobalMinMaxScaler:
    """``scaler`` with its bounds loaded as :class:`CudaBounds`."""
    state = scaler.state_dict()
    scaler.load_state_dict({**state, "min": state["min"].as_subclass(CudaBounds),
                            "max": state["max"].as_subclass(CudaBounds)})
    return scaler


def test_a_global_scaler_on_a_gpu_copies_its_bounds_to_the_host_rows_once():
    # before: two copies (min and max) per row, a host-device sync each on a GPU
    data = np.random.default_rng(0).normal(size=(12, 3))
    expected = GlobalMinMaxScaler().fit(data).transform_many(data)
    scaler = on_cuda(GlobalMinMaxScaler().fit(data))
    CudaBounds.copies = 0
    assert torch.equal(row_by_row(scaler, data), expected)
    assert torch.equal(torch.stack([scaler.transform_one(row, update=False) for row in data]),
                       expected)  # a prediction's copy of the scaler keeps the host copy
    assert CudaBounds.copies == 2
    # new bounds, new host copy: refit, and loaded
    assert torch.equal(scaler.fit(data[:6]).transform_many(data),
                       GlobalMinMaxScaler().fit(data[:6]).transform_many(data))
    on_cuda(scaler)
    assert torch.equal(row_by_row(scaler, data),
                       GlobalMinMaxScaler().fit(data[:6]).transform_many(data))
    assert CudaBounds.copies == 4


def test_l2_normalize():
    transform = L2Normalize()
    out = transform(np.array([3.0, 4.0]))
    assert out.dtype == torch.float32 and out.shape == (2,)
    assert torch.allclose(out, torch.tensor([0.6, 0.8]))
    assert torch.equal(transform(torch.zeros(3)), torch.zeros(3))
    batch = torch.randn(10, 4, dtype=torch.float64)
    assert torch.equal(transform.transform_many(batch), row_by_row(transform, batch))
    assert transform.state_dict() == {"eps": 1e-12}  # its setting


def test_make_transform_options():
    data = np.array([[0.0, 2.0], [4.0, 2.0]])
    assert repr(make_transform()) == ("Compose([OnlineMinMaxScaler(feature_range=(-1.0, 1.0)), "
                                      "L2Normalize()])")
    assert torch.equal(make_transform("global", data=data).transform_many(data),
                       torch.tensor([[-1.0, 0.0], [1.0, 0.0]]))
    identity = make_transform("none", l2=False)
    assert torch.equal(identity(data[1]), torch.tensor([4.0, 2.0]))
    # the learner scales (and normalizes) inside: the pipeline only casts
    assert repr(make_transform("online-rescale")) == "Compose([])"
    assert torch.equal(make_transform("online-rescale")(data[1]), torch.tensor([4.0, 2.0]))
    with pytest.raises(ValueError, match="data"):
        make_transform("global")
    with pytest.raises(ValueError, match="data"):
        make_transform("online", data=data)
    with pytest.raises(ValueError, match="scaling"):
        make_transform("standard")


def test_signed_log1p_by_hand_and_before_every_scaling():
    e = np.e
    rows = np.array([[0.0, e - 1.0, -(e ** 2 - 1.0)], [3.0, 0.0, e - 1.0]])
    torch.testing.assert_close(SignedLog1p().transform_many(rows),
                               torch.tensor([[0.0, 1.0, -2.0], [np.log(4.0), 0.0, 1.0]],
                                            dtype=torch.float32))
    assert SignedLog1p()(np.array([-(e - 1.0)])).item() == pytest.approx(-1.0)
    # online-rescale: the learner scales, the pipeline only compresses
    assert repr(make_transform("online-rescale", feature_transform="signed-log1p")) == \
        "Compose([SignedLog1p()])"
    # global: fitted on the compressed data, so its extremes map to -1 / 1
    scaled = make_transform("global", l2=False, data=rows,
                            feature_transform="signed-log1p").transform_many(rows)
    assert torch.equal(scaled.min(dim=0).values, torch.tensor([-1.0, -1.0, -1.0]))
    assert torch.equal(scaled.max(dim=0).values, torch.tensor([1.0, 1.0, 1.0]))
    torch.testing.assert_close(scaled[1, 0], torch.tensor(1.0))
    # online: the running range of the compressed rows (second row: [0, log 4])
    online = make_transform("online", l2=False, feature_transform="signed-log1p")
    torch.testing.assert_close(online.transform_many(rows)[1],
                               torch.tensor([1.0, -1.0, 1.0]))
    # an a-priori range is mapped through the transform: 0 -> -1, 255 -> 1
    ranged = make_transform("range", l2=False, value_range=(0, 255),
                            feature_transform="signed-log1p")
    torch.testing.assert_close(ranged.transform_many(np.array([[0.0, 255.0]])),
                               torch.tensor([[-1.0, 1.0]]))
    with pytest.raises(ValueError, match="feature_transform"):
        make_transform(feature_transform="log")


def test_auto_feature_transform_compresses_tabular_streams_only():
    assert resolve_feature_transform("auto") == "signed-log1p"
    assert resolve_feature_transform("auto", (0, 255)) == "none"  # images keep their scale
    assert resolve_feature_transform("none") == "none"
    assert repr(make_transform("online-rescale", feature_transform="auto")) == \
        "Compose([SignedLog1p()])"
    assert "SignedLog1p" not in repr(make_transform("auto", value_range=(0, 255),
                                                    feature_transform="auto"))
    with pytest.raises(ValueError, match="feature_transform"):
        resolve_feature_transform("log")


def test_known_range_scaling_is_the_authors_image_mapping():
    # pixels p in [0, 255] -> (p / 255 - 0.5) / 0.5, the same for every row and feature
    pixels = np.array([[0.0, 51.0, 255.0], [255.0, 0.0, 127.5]])
    scaled = make_transform("range", l2=False, value_range=(0, 255)).transform_many(pixels)
    expected = torch.tensor(pixels / 255.0 * 2.0 - 1.0, dtype=torch.float32)
    torch.testing.assert_close(scaled, expected)
    # stateless: a row is scaled the same whether it comes first or after others
    transform = make_transform("range", l2=False, value_range=(0, 255))
    transform(pixels[0])
    torch.testing.assert_close(transform(pixels[1]), expected[1])
    with pytest.raises(ValueError, match="value_range"):
        make_transform("range")
    with pytest.raises(ValueError, match="value_range must be finite with low < high"):
        make_transform("range", value_range=(1, 1))


@pytest.mark.parametrize("build, row, entry, bounds", [
    # a range so narrow that a value near it overflows float64 (before: inf, silently)
    (lambda: FixedRangeScaler((0, 1e-310)), [0.0, 0.5], r"1\] = 0.5", r"\(0.0, 1e-310\)"),
    # an ordinary range and a value far out of it
    (lambda: FixedRangeScaler((0, 1)), [1.7e308, 0.0], r"0\] = 1.7e\+308", r"\(0.0, 1.0\)"),
    # the second feature's range, fitted
    (lambda: GlobalMinMaxScaler().fit(np.array([[0.0, 0.0], [1.0, 1e-310]])), [0.5, 0.5],
     r"1\] = 0.5", r"\(0.0, 1e-310\)"),
])
def test_a_fixed_range_refuses_a_value_it_scales_to_inf(build, row, entry, bounds):
    """A value far out of a range that does not clip would be scaled to inf: refused at
    the row (any finite range has such values), naming it, alone or before a scaler
    that would learn inf as its range, whose state is then as before (before: max inf)."""
    message = (rf"^rows\[0, {entry} scales to inf by its feature's value range "
               rf"{bounds}: too far outside it for float64$")  # before: "too far out of so
    # narrow a range", though (0, 1) is not narrow
    with pytest.raises(ValueError, match=message):
        build().transform_one(np.array(row))
    pipeline = Compose([build(), OnlineMinMaxScaler()])
    pipeline.transform_one(np.array([0.0, 0.0]))
    before = state_of(pipeline)
    with pytest.raises(ValueError, match=message):
        pipeline.transform_one(np.array(row))
    assert_same(pipeline.state_dict(), before)
    assert torch.isfinite(pipeline.transforms[1].max_).all()


@pytest.mark.parametrize("nested", [False, True])
def test_a_pipeline_that_learns_before_a_fixed_range_saves_its_state(nested):
    """A bounded pipeline saves no state for the cast, unless a part that may refuse a
    row (a fixed range) comes after one that learned from it (a pipeline's part
    learns where one of its own does)."""
    assert make_transform("range", value_range=(0, 255))._bounded()
    assert make_transform("range", value_range=(0, 255), feature_transform="signed-log1p"
                          )._bounded()
    narrow = FixedRangeScaler((0, 1e-310))
    learner = Compose([OnlineMinMaxScaler()]) if nested else OnlineMinMaxScaler()
    pipeline = Compose([learner, narrow, L2Normalize()])
    assert not pipeline._bounded() and not Compose([pipeline, L2Normalize()])._bounded()
    pipeline.transform_one(np.array([0.0, 0.0]))
    before = state_of(pipeline)
    with pytest.raises(ValueError, match="scales to inf"):
        pipeline.transform_one(np.array([0.5, 1.0]))  # 1.0 by (0, 1e-310) after min-max
    assert_same(pipeline.state_dict(), before)


def test_a_fixed_range_makes_its_bound_tensors_once(monkeypatch):
    """The bounds are made once per device and dtype, not per row (on a GPU: two
    host-to-device copies per row); ``-0.0`` and ``0.0`` keep their own, and a
    copy (a prediction's) reads them too. Before: new tensors per call."""
    from torch_geometric_stream.evaluation import transforms
    bounds, scaled = [], transforms.scaled_finite

    def recorded(rows, low, high, *args):
        bounds.append((low, high))
        return scaled(rows, low, high, *args)
    monkeypatch.setattr(transforms, "scaled_finite", recorded)
    scaler = FixedRangeScaler((0, 255))
    rows = torch.tensor([[0.0, 51.0, 255.0]])
    first = scaler.transform_many(rows)
    assert torch.equal(first, torch.tensor([[-1.0, -0.6, 1.0]]))
    assert torch.equal(scaler.transform_many(rows, update=False), first)
    assert torch.equal(FixedRangeScaler((0, 255)).transform_many(rows), first)
    assert all(low is bounds[0][0] and high is bounds[0][1] for low, high in bounds)
    assert bounds[0][0].dtype == torch.float64 and bounds[0][0].shape == ()
    FixedRangeScaler((-0.0, 255)).transform_many(rows)
    assert torch.signbit(bounds[-1][0]) and not torch.signbit(bounds[0][0])


def test_auto_scaling_uses_the_known_range_when_declared():
    assert resolve_scaling("auto", (0, 255)) == "range"
    assert resolve_scaling("auto", None) == "online"
    assert resolve_scaling("auto", None, learner_scales=True) == "online-rescale"
    assert resolve_scaling("auto", (0, 255), learner_scales=True) == "range"
    assert resolve_scaling("global", (0, 255)) == "global"
    assert "FixedRangeScaler" in repr(make_transform("auto", value_range=(0, 255)))
    assert "OnlineMinMaxScaler" in repr(make_transform("auto"))


@pytest.mark.parametrize("build", [OnlineMinMaxScaler, make_transform, L2Normalize,
                                   OnlineQuantileRangeScaler])
def test_a_row_without_features_is_refused_and_leaves_the_state(build):
    transform = build()
    for empty in (np.zeros(0), [], np.zeros((2, 0))):
        with pytest.raises(ValueError, match=r"^x has no features \(shape \((1|2), 0\)\): "
                                             r"each row needs at least one$"):
            transform(empty)
    assert torch.equal(transform(np.array([0.0, 2.0, 4.0])), build()(np.array([0.0, 2.0, 4.0])))


def test_global_scaling_refuses_data_without_features():
    with pytest.raises(ValueError, match=r"^data has no features \(shape \(1, 0\)\)"):
        make_transform("global", data=[])


@pytest.mark.parametrize("build", [OnlineMinMaxScaler, make_transform, L2Normalize,
                                   OnlineQuantileRangeScaler])
@pytest.mark.parametrize("update", ["no", 0, None])
def test_update_must_be_a_bool_and_a_refused_one_leaves_the_state(build, update):
    # before: a truthy "no" updated the state, a falsy 0 or None did not
    transform, twin = build(), build()
    for scaler in (transform, twin):
        scaler.transform_one(np.array([0.0, 2.0]))
    message = f"^update must be a bool, got {type(update).__name__}$"
    with pytest.raises(TypeError, match=message):
        transform.transform_one(np.array([-5.0, 9.0]), update=update)
    with pytest.raises(TypeError, match=message):
        transform.transform_many(np.array([[-5.0, 9.0]]), update=update)
    for row in (np.array([1.0, 1.0]), np.array([-5.0, 9.0])):  # the range is [0, 2] still
        assert torch.equal(transform.transform_one(row), twin.transform_one(row))


@pytest.mark.parametrize("robust_options", [[("quantile", 0.1)], "quantile", 0.1])
def test_make_transform_refuses_robust_options_that_are_no_mapping(robust_options):
    # before: TypeError: ... argument after ** must be a mapping, not list
    message = (r"^robust_options must be a mapping of OnlineQuantileRangeScaler's keyword "
               r"arguments \(e\.g\. {'quantile': 0\.05}\) or None, got ")
    with pytest.raises(TypeError, match=message + type(robust_options).__name__ + "$"):
        make_transform("robust", robust_options=robust_options)


@pytest.mark.parametrize("data", [np.array([1.0, 5.0, 3.0]), [1.0, 5.0, 3.0],
                                  torch.tensor([1.0, 5.0, 3.0])])
@pytest.mark.parametrize("feature_transform", ["none", "signed-log1p"])
def test_global_scaling_refuses_a_one_dimensional_stream(data, feature_transform):
    # before: taken as a single row (d = 3), whose every feature was then constant
    message = (r"^data must be the whole stream \(T, d\), got 1-D values of shape \(3,\): "
               r"reshape them to \(1, d\) for one row or \(T, 1\) for one feature$")
    with pytest.raises(ValueError, match=message):
        make_transform("global", data=data, feature_transform=feature_transform)
    with pytest.raises(ValueError, match=message):
        GlobalMinMaxScaler().fit(data)
    scaler = make_transform("global", data=np.array([[1.0], [5.0], [3.0]]), l2=False)
    assert scaler.transform_many(np.array([[1.0], [3.0]])).tolist() == [[-1.0], [0.0]]


@pytest.mark.parametrize("l2", ["yes", 1, None])
def test_make_transform_refuses_an_l2_that_is_no_bool(l2):
    # before: a truthy "yes" or 1 appended L2Normalize, None left it out
    with pytest.raises(TypeError, match=f"^l2 must be a bool, got {type(l2).__name__}$"):
        make_transform(l2=l2)


def test_argument_errors():
    with pytest.raises(ValueError, match="feature_range"):
        OnlineMinMaxScaler(feature_range=(1, -1))
    with pytest.raises(ValueError,
                       match=r"value_range must be finite with low < high, got \(0, inf\)"):
        make_transform("range", value_range=(0, float("inf")))
    with pytest.raises(ValueError, match="one sample"):
        L2Normalize().transform_one(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="NaN"):
        L2Normalize()(np.array([np.nan, 1.0]))
    with pytest.raises(TypeError, match="StreamTransform"):
        Compose([abs])
    with pytest.raises(ValueError, match=r"one entry per transform, the keys \['0'\], got \[\]"):
        Compose([L2Normalize()]).load_state_dict({})
    with pytest.raises(ValueError, match="keys 'min' and 'max' \\(and 'feature_range'\\), got \\['min'\\]"):
        Compose([OnlineMinMaxScaler()]).load_state_dict({"0": {"min": 1}})
    with pytest.raises(TypeError, match=r"state\['max'\] must be a tensor or None, got int"):
        OnlineMinMaxScaler().load_state_dict({"min": None, "max": 1})


def state_shapes(state):
    """A state's entries by key path: the shape of a tensor, the type of anything else."""
    if isinstance(state, dict):
        return {key: state_shapes(value) for key, value in state.items()}
    return tuple(state.shape) if isinstance(state, torch.Tensor) else type(state)


@pytest.mark.parametrize("scaling", ["online", "robust", "range", "global"])
def test_a_transforms_state_does_not_grow_with_the_stream(scaling):
    # fixed memory: the state after n and 4 n rows has the same entries and shapes
    rows = np.random.default_rng(0).normal(size=(80, 3)).astype(np.float32)
    transform = make_transform(scaling, data=rows if scaling == "global" else None,
                               value_range=(-5.0, 5.0) if scaling == "range" else None,
                               feature_transform="signed-log1p",
                               robust_options={"reservoir_size": 8} if scaling == "robust"
                               else None)
    transform.transform_many(rows[:20])
    shapes = state_shapes(transform.state_dict())
    transform.transform_many(rows[20:])
    assert state_shapes(transform.state_dict()) == shapes


@pytest.mark.parametrize("build, value", [
    (lambda: Compose([]), 1e39),
    (lambda: OnlineQuantileRangeScaler(clip=False), 1e30),  # 1e30 / 1e-40: extrapolated
    (lambda: Compose([SignedLog1p(), OnlineQuantileRangeScaler(clip=False)]), 1e30),
])
@pytest.mark.parametrize("many", [False, True])
@pytest.mark.parametrize("update", [True, False])
def test_a_value_beyond_float32_is_named_and_leaves_the_state(build, value, many, update):
    # before: the cast to float32 made it inf, and a learner refused "NaN or inf"
    transform, twin = build(), build()
    for scaler in (transform, twin):  # the second feature's range is [0, 1e-40]
        scaler.transform_many(np.array([[0.0, 0.0], [2.0, 1e-40]] * 200))
    huge = np.array([[0.5, value]])
    with pytest.raises(ValueError, match=r"^transformed rows\[0, 1\] = .*is beyond "
                                         r"float32's range .*: a float32 learner would "
                                         r"read inf there$"):
        if many:
            transform.transform_many(huge, update)
        else:
            transform.transform_one(huge[0], update)
    for row in (np.array([0.5, 1e-41]), np.array([-3.0, 0.0])):
        assert torch.equal(transform.transform_one(row), twin.transform_one(row))


def test_a_value_beyond_float32_s_largest_that_rounds_to_it_is_kept():
    # |x| above float32's max but below max + half its last step: the cast rounds
    # it to the max, not to inf, so nothing is refused
    largest = float(torch.finfo(torch.float32).max)
    value = np.nextafter(largest + 2.0 ** 103, 0.0)  # the largest double that rounds down
    assert value > largest
    got = Compose([]).transform_one(np.array([value, -value]))
    assert got.dtype == torch.float32 and got.tolist() == [largest, -largest]
    with pytest.raises(ValueError, match="is beyond float32's range"):
        Compose([]).transform_one(np.array([largest + 2.0 ** 103]))  # a tie: rounds to inf


def test_a_transform_without_a_transform_of_its_own_says_so():
    class Unfinished(StreamTransform):
        pass

    with pytest.raises(NotImplementedError):
        Unfinished().transform_one(np.array([1.0]))


def test_a_pipeline_that_cannot_be_copied_though_its_parts_can_is_named_itself():
    pipeline = Compose([L2Normalize()])
    pipeline.lock = threading.Lock()
    with pytest.raises(TypeError, match=r"^Compose\(\[L2Normalize\(\)\]\) cannot be "
                                        r"deep-copied \(cannot pickle '_thread.lock' object\)"):
        pipeline.transform_one(np.array([2.0]), update=False)


@pytest.mark.parametrize("build", [OnlineQuantileRangeScaler, lambda: make_transform("robust")])
def test_a_bounded_robust_range_refuses_a_batch_whose_later_row_it_cannot_hold_whole(build):
    # before: the rows before it were offered to the reservoir, and stayed (a bounded
    # pipeline saves no state for its learned rows)
    transform, twin = build(), build()
    data = np.random.default_rng(3).normal(size=(30, 2))
    transform.transform_many(data[:20])
    twin.transform_many(data[:20])
    with pytest.raises(ValueError, match=r"rows\[1, 0\] = 1e\+300 is beyond float32's range"):
        transform.transform_many(np.array([[100.0, 100.0], [1e300, 1.0]]))
    assert torch.equal(transform.transform_many(data[20:]), twin.transform_many(data[20:]))


def test_a_robust_range_refuses_a_batch_whose_later_row_an_earlier_step_made_infinite():
    # before: the range's batch check read only values beyond float32; a row that the
    # pipeline's fixed range scaled to inf was refused after the rows before it had
    # entered the reservoir, which kept them (the error said it was left as it was)
    # (a fixed range now refuses a value it scales to inf itself: a step of one's own here)
    class Exp(StreamTransform):
        def _transform(self, rows):
            return rows.exp()

    def build():
        return Compose([Exp(), OnlineQuantileRangeScaler(reservoir_size=10)])

    transform, twin = build(), build()
    for scaler in (transform, twin):
        scaler.transform_many(np.array([[0.0], [1.0]]))
    with pytest.raises(ValueError, match="NaN or inf values: the range is left as it was"):
        transform.transform_many(np.array([[0.5], [1e10]]))
    assert torch.equal(transform.transforms[1].range_.get_extra_state()["reservoir"],
                       twin.transforms[1].range_.get_extra_state()["reservoir"])
    rows = np.array([[0.25], [0.75]])
    assert torch.equal(transform.transform_many(rows), twin.transform_many(rows))


@pytest.mark.parametrize("build, value", [
    (L2Normalize, 1e300), (SignedLog1p, 1e300), (OnlineMinMaxScaler, 1e300),
    (OnlineQuantileRangeScaler, 3e38),  # its float32 range refuses more itself
    (lambda: make_transform("range", value_range=(0, 1)), 1e300),
])
def test_a_bounded_transform_maps_a_large_value_into_float32(build, value):
    out = build().transform_many(np.array([[0.5, 1.0], [0.25, value]]))
    assert out.dtype == torch.float32 and bool(torch.isfinite(out).all())
    assert float(out.abs().max()) <= 710.0


@pytest.mark.parametrize("build", [make_transform, lambda: make_transform("robust"),
                                   lambda: make_transform("online-rescale",
                                                          feature_transform="signed-log1p")])
def test_a_bounded_pipeline_saves_no_state_for_a_row_it_learns(build, monkeypatch):
    # the float32 check's state copy would cost a robust range its reservoir per row
    transform = build()
    monkeypatch.setattr(transform, "state_dict", lambda: pytest.fail("the state was saved"))
    out = transform.transform_many(np.array([[1.0, 2.0], [3.0, -1.0]]))
    assert out.dtype == torch.float32 and out.shape == (2, 2)


def _fitted(transform):
    """``transform`` after two rows (a global range fitted on them first)."""
    rows = np.array([[0.0, 1.0], [2.0, 5.0]])
    if isinstance(transform, GlobalMinMaxScaler):
        transform.fit(rows)
    transform.transform_many(rows)
    return transform


@pytest.mark.parametrize("saved, other, setting, kept, own", [
    (lambda: OnlineMinMaxScaler((0, 1)), OnlineMinMaxScaler, "feature_range", (0.0, 1.0),
     (-1.0, 1.0)),
    (lambda: GlobalMinMaxScaler((0, 1)), GlobalMinMaxScaler, "feature_range", (0.0, 1.0),
     (-1.0, 1.0)),
    (lambda: OnlineQuantileRangeScaler(feature_range=(0, 1)), OnlineQuantileRangeScaler,
     "feature_range", (0.0, 1.0), (-1.0, 1.0)),
    (lambda: OnlineQuantileRangeScaler(seed=3), OnlineQuantileRangeScaler, "seed", 3, 0),
    (lambda: FixedRangeScaler((0, 255), (0, 1)), lambda: FixedRangeScaler((0, 1), (0, 1)),
     "value_range", (0.0, 255.0), (0.0, 1.0)),
    (lambda: FixedRangeScaler((0, 1), (0, 1)), lambda: FixedRangeScaler((0, 1)),
     "feature_range", (0.0, 1.0), (-1.0, 1.0)),
    (lambda: L2Normalize(1e-6), L2Normalize, "eps", 1e-6, 1e-12),
])
def test_a_state_kept_with_other_settings_is_refused_naming_the_setting(saved, other,
                                                                        setting, kept, own):
    """The settings that change what a transform computes go with its state, as the
    quantile range's; one built with other ones refuses it, naming the setting, and
    is left as it was (before: a min-max scaler of another feature range took the
    state and went on scaling to another interval, silently); a state saved before
    the settings were kept loads unchecked; in a pipeline too."""
    state = _fitted(saved()).state_dict()
    assert state[setting] == kept
    noun = "transform" if setting == "eps" else "scaler"
    message = (f"the {type(other()).__name__} state was kept with {setting}={kept!r}, this "
               f"{noun} has {setting}={own!r}: build it with the state's {setting}")
    target = _fitted(other())
    before = state_of(target)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        target.load_state_dict(state)
    assert_same(target.state_dict(), before)
    pipeline = Compose([SignedLog1p(), _fitted(other())])
    before = state_of(pipeline)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        pipeline.load_state_dict({"0": {}, "1": state})
    assert_same(pipeline.state_dict(), before)
    legacy = {key: value for key, value in state.items()
              if key not in saved()._kept_settings()}
    if isinstance(target, OnlineQuantileRangeScaler) and setting != "seed":
        with pytest.raises(ValueError, match="^the quantile range's state was kept with"):
            target.load_state_dict(legacy)  # checked by the range within, as before
        assert_same(target.state_dict(), _fitted(other()).state_dict())
        return
    target.load_state_dict(legacy)  # unchecked
    assert_same(target.state_dict(), {**legacy, **target._kept_settings()})
    resumed = other()
    resumed.load_state_dict(target.state_dict())
    assert_same(resumed.state_dict(), target.state_dict())


def test_a_stateless_transform_refuses_another_transforms_settings():
    """A pipeline of another stateless transform in a place is refused by its settings
    (before: two empty states, loaded silently)."""
    state = make_transform("range", value_range=(0, 255)).state_dict()
    with pytest.raises(ValueError, match=r"^SignedLog1p has no state, got keys "
                                         r"\['feature_range', 'value_range'\]$"):
        Compose([SignedLog1p(), L2Normalize()]).load_state_dict(state)
    with pytest.raises(ValueError, match=r"^L2Normalize has no state but its settings "
                                         r"\['eps'\], got keys \['x'\]$"):
        L2Normalize().load_state_dict({"x": 1})


@pytest.mark.parametrize("rows", [[[2.0, 1.0]], [[1.0, 1.0], [2.0, 1.0]]], ids=["one", "batch"])
def test_a_quantile_range_refusing_what_an_earlier_part_learned_leaves_the_pipeline(rows):
    # the quantile range refuses finite rows beyond its float32 (the min-max scaler's
    # feature range puts them there); before: the pipeline counted it as a part that
    # refuses nothing, saved no state, and the min-max scaler kept the refused rows
    pipeline = Compose([OnlineMinMaxScaler(feature_range=(0.0, 1e300)),
                        OnlineQuantileRangeScaler(), L2Normalize()])
    before = copy.deepcopy(pipeline.state_dict())
    with pytest.raises(ValueError, match=r"is beyond float32's range .*the range's dtype"):
        pipeline.transform_many(np.array(rows))
    assert repr(pipeline.state_dict()) == repr(before)


@pytest.mark.parametrize("rows", [[[1e300, 1.0]], [[1.0, 1.0], [1e300, 1.0]]],
                         ids=["one", "batch"])
def test_refused_first_rows_leave_the_quantile_scaler_without_a_range(rows):
    # before: the scaler kept the range it built for them (an empty one, state_dict
    # no longer {"range": None})
    for scaler in (OnlineQuantileRangeScaler(), Compose([OnlineQuantileRangeScaler(),
                                                         L2Normalize()])):
        before = copy.deepcopy(scaler.state_dict())
        with pytest.raises(ValueError, match=r"is beyond float32's range"):
            scaler.transform_many(np.array(rows))
        assert repr(scaler.state_dict()) == repr(before)
