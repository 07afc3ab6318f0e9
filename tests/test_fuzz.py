"""Property-based fuzzing of the public stream API (``predict``, ``predict_proba``, ``learn``).

Learners (small, so that every example is cheap): SLeDGe full, SLeDGe with
in-model online scaling and SLeDGe-L (hidden 8, memory 6 labeled + 12
unlabeled, k = 2), the "+M" and "+Static" ablations (``graph="none"``,
``graph="static"``), the ReSSL, TLP and HDSSL baselines and the "Base"
:class:`OnlineMLP`.  Each test builds its learner once (fixture), warms it up
so that the memory is full and merges happen, and then feeds it random
inputs: 0-3 dimensions, 0-4 rows, right or wrong feature counts,
float16/32/64, int32/64, bool, complex64 and object dtypes, nested lists,
strings, NaN/inf, labels out of range or of the wrong type, mismatched x/y
lengths, empty batches.

Properties:

* every call either succeeds or raises ``ValueError``/``TypeError`` with a
  non-empty message (any other exception fails the test);
* after a *failed* call the learner's state is bit-for-bit unchanged
  (``state_dict()``: for the torch learners with the memory buffers and the
  extra state (optimizer, generators, counters); for the NumPy baselines their
  arrays and counters);
* ``predict``/``predict_proba`` never change the state, succeed with shape
  ``(n,)`` / ``(n, c)``, class ids in ``[0, c)``, finite probabilities summing
  to 1;
* after a successful ``learn`` every floating-point entry of the state is finite;
* interleaving invalid calls with valid ones leaves the learner exactly where a
  clone that saw only the valid calls ends up.
"""
from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from state_helpers import assert_same, state_of
from torch_geometric_stream.models import CUDAGraphStep
from torch_geometric_stream.models.registry import build_model

D, C = 4, 3
LEARNERS = ("sledge", "sledge-light", "sledge-rescale", "sledge-options", "ressl", "base",
            "memory", "static", "tlp", "hdssl")
SMALL = dict(hidden_channels=8, labeled_size=6, unlabeled_size=12, k=2, seed=0)

FUZZ = settings(max_examples=30, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow, HealthCheck.data_too_large])


# --------------------------------------------------------------------- learners
def make_learner(name: str, warm: bool = True):
    if name == "ressl":
        learner = build_model(name, D, C, memory_size=18, seed=0)
    elif name == "sledge-rescale":  # scales raw rows itself; its range is state too
        learner = build_model("sledge", D, C, input_scaling="online", **SMALL)
    elif name == "sledge-options":  # label counts and kept neighbour sets are state too
        learner = build_model("sledge", D, C, class_prior="stream", reselect_every=3,
                              search_dtype="bfloat16", **SMALL)
    else:
        learner = build_model(name, D, C, **SMALL)
    if not warm:
        return learner
    # Warm up: fill the memory (18 slots) so that merges and training happen.
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(C, D))
    for t in range(40):
        label = t % C
        x = (centres[label] + 0.3 * rng.normal(size=D)).astype(np.float32)
        learner.learn(x, label if t % 4 == 0 else -1)
    return learner


@pytest.fixture(params=LEARNERS)
def learner(request):
    return make_learner(request.param)


@pytest.fixture(params=[name for name in LEARNERS if name.startswith("sledge")])
def stepper(request):
    """A warm SLeDGe behind the fused predict-then-learn step."""
    return CUDAGraphStep(make_learner(request.param))


@pytest.fixture(params=LEARNERS)
def fresh_learner(request):
    """A learner that has seen nothing (empty memory, no optimizer state)."""
    return make_learner(request.param, warm=False)


# ----------------------------------------------------------------- state compare
#: State entries where inf is a documented sentinel (micro-cluster distance cache:
#: ``inf`` on the diagonal and for empty slots).
INF_SENTINELS = ("mc_dist2",)


def assert_finite(state: Any, path: str = "state") -> None:
    if any(f"[{key!r}]" in path for key in INF_SENTINELS):
        return
    if isinstance(state, torch.Tensor):
        if state.is_floating_point() or state.is_complex():
            assert bool(torch.isfinite(state).all()), f"{path} holds NaN/inf"
    elif isinstance(state, np.ndarray):
        if state.dtype.kind in "fc":
            assert np.isfinite(state).all(), f"{path} holds NaN/inf"
    elif isinstance(state, dict):
        for key, value in state.items():
            assert_finite(value, f"{path}[{key!r}]")
    elif isinstance(state, (list, tuple)):
        for i, value in enumerate(state):
            assert_finite(value, f"{path}[{i}]")


# -------------------------------------------------------------------- strategies
SPECIAL = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e30, -1e30, 3e38, 1e-40, 1e-45, 65504.0]
FINITE32 = st.one_of(st.floats(-10, 10, width=32),
                     st.sampled_from([0.0, -0.0, 1e-40, 1e-45, 1e30, -1e30, 3e38, -3e38]))
ANY_FLOAT = st.one_of(st.floats(-10, 10), st.sampled_from(SPECIAL))
DTYPES = ("float16", "float32", "float64", "int32", "int64", "bool", "complex64", "object")
CONTAINERS = ("numpy", "torch", "list", "tuple")


def _wrap(array: np.ndarray, container: str) -> Any:
    if container == "torch" and array.dtype != object:
        return torch.from_numpy(array.copy())
    if container in ("list", "tuple", "torch"):
        value = array.tolist()
        return tuple(value) if container == "tuple" and isinstance(value, list) else value
    return array


@st.composite
def valid_x(draw) -> tuple[Any, int]:
    """Well-formed finite float rows: ``(d,)`` or ``(n, d)`` with n >= 1."""
    single = draw(st.booleans())
    n = 1 if single else draw(st.integers(1, 4))
    values = draw(st.lists(FINITE32, min_size=n * D, max_size=n * D))
    dtype = draw(st.sampled_from(["float32", "float64"]))
    array = np.asarray(values, dtype=dtype).reshape((D,) if single else (n, D))
    return _wrap(array, draw(st.sampled_from(CONTAINERS))), n


@st.composite
def random_array_x(draw) -> tuple[Any, int]:
    ndim = draw(st.integers(0, 3))
    shape = [draw(st.integers(0, 4)) for _ in range(ndim)]
    if ndim and draw(st.booleans()):
        shape[-1] = D
    size = int(np.prod(shape)) if shape else 1
    values = np.asarray(draw(st.lists(ANY_FLOAT, min_size=size, max_size=size)),
                        dtype=np.float64).reshape(shape)
    dtype = draw(st.sampled_from(DTYPES))
    with np.errstate(all="ignore"):
        array = values.astype(dtype)
    n = shape[0] if ndim == 2 else 1
    return _wrap(array, draw(st.sampled_from(CONTAINERS))), n


ODD_X = st.sampled_from([
    None, "abc", b"\x00\x01", {"a": 1.0}, {1.0, 2.0}, 1.5, 3, True, 1j,
    ["a", "b", "c", "d"], [[1.0, 2.0], [1.0]], [[1.0, None, 2.0, 3.0]],
    np.array(["1", "2", "3", "4"]), np.array([b"1", b"2", b"3", b"4"]),
    np.zeros((1, D), dtype="datetime64[s]"), np.zeros((1, D), dtype=np.uint16),
    np.ones((1, D), dtype=np.longdouble), torch.zeros(1, D, dtype=torch.complex128),
    torch.zeros(1, D, dtype=torch.uint8), torch.zeros(0, D), np.zeros((0, D), np.float32),
    np.zeros((1, 0), np.float32), [], [[]],
]).map(lambda x: (x, 1))

ANY_X = st.one_of(valid_x(), random_array_x(), ODD_X)


def labels(n: int):
    """Random labels for ``n`` rows: valid and invalid values, types and shapes."""
    ints = st.integers(-3, C + 2)
    lengths = st.sampled_from(sorted({0, max(n - 1, 0), n, n + 1}))
    return st.one_of(
        st.none(), ints, st.integers(-1, C - 1),
        st.sampled_from([1.0, 0.0, math.nan, True, False, np.bool_(True), np.float32(1.0),
                         "1", b"1", 1j, [None], {"y": 1}, np.int64(1), np.int32(C),
                         np.uint8(1), 2 ** 70, -2 ** 70, [2 ** 70]]),
        lengths.flatmap(lambda k: st.lists(ints, min_size=k, max_size=k)),
        lengths.flatmap(lambda k: st.lists(st.integers(-1, C - 1), min_size=k, max_size=k)
                        .flatmap(lambda v: st.sampled_from([
                            np.asarray(v, dtype=np.int64), np.asarray(v, dtype=np.int32),
                            np.asarray(v, dtype=np.float32), np.asarray(v, dtype=bool),
                            np.asarray(v, dtype=np.int64).reshape(-1, 1),
                            torch.tensor(v, dtype=torch.long),
                            torch.tensor(v, dtype=torch.int32).reshape(1, -1),
                            torch.tensor(v, dtype=torch.float64), [str(u) for u in v],
                            [float(u) for u in v]]))),
        st.sampled_from([np.array(1), torch.tensor(1), torch.tensor(C), np.array([[1]]),
                         np.array(1.0), torch.tensor(True)]),
    )


@st.composite
def x_and_y(draw):
    x, n = draw(ANY_X)
    return x, draw(labels(n))


@st.composite
def valid_x_and_y(draw):
    x, n = draw(valid_x())
    y = draw(st.one_of(st.none(), st.lists(st.integers(-1, C - 1), min_size=n, max_size=n)))
    return x, y


@st.composite
def invalid_learn_call(draw):
    """Calls that must fail: (method, args)."""
    x, n = draw(valid_x())
    bad_x = st.sampled_from([
        np.full((2, D), np.nan, np.float32), np.full(D, np.inf), np.zeros((2, D + 1)),
        np.zeros((0, D), np.float32), np.zeros((2, 2, D)), np.zeros((1, D), np.int64),
        np.zeros((1, D), bool), np.zeros((1, D), np.complex64), "x", None,
        np.zeros((1, D), dtype=object), [[1.0] * (D - 1)], np.float32(1.0)])
    bad_y = st.sampled_from([C, -2, 1.0, True, "1", [0] * (n + 1), np.zeros((n, 2), np.int64),
                             np.zeros(n, np.float32), 2 ** 70, [None] * (n + 1)])
    return draw(st.one_of(
        bad_x.map(lambda b: ("learn", (b, None))),
        bad_x.map(lambda b: ("predict", (b,))),
        bad_x.map(lambda b: ("predict_proba", (b,))),
        bad_y.map(lambda b: ("learn", (x, b)))))


def expected_rows(x: Any) -> int:
    shape = np.shape(x) if not isinstance(x, torch.Tensor) else tuple(x.shape)
    return 1 if len(shape) == 1 else shape[0]


def refuses_as_too_large(learner, x: Any) -> bool:
    """Whether ``learner`` normalizes raw rows and a row of ``x`` has a float32 norm
    that overflows (entries such as 1e30): then it refuses ``x`` by design."""
    rows = torch.as_tensor(np.asarray(x.numpy() if isinstance(x, torch.Tensor) else x,
                                      dtype=np.float32))
    return (getattr(learner, "normalizes_raw_rows", False)
            and not bool(torch.isfinite(torch.linalg.vector_norm(rows, dim=-1)).all()))


def call(learner, method: str, *args):
    """Run ``learner.method(*args)``; return ``(ok, result)`` after checking the
    failure properties (exception type, message, unchanged state)."""
    before = state_of(learner)
    try:
        out = getattr(learner, method)(*args)
    except (ValueError, TypeError) as error:
        event(f"{method}: {type(error).__name__}")
        assert str(error).strip(), f"{type(error).__name__} with an empty message"
        assert_same(before, state_of(learner))
        return False, error
    event(f"{method}: ok")
    if method in ("predict", "predict_proba"):
        assert_same(before, state_of(learner))  # prediction never changes the state
    return True, out


# ------------------------------------------------------------------------- tests
@FUZZ
@given(case=x_and_y())
def test_fuzz_learn(learner, case):
    x, y = case
    ok, _ = call(learner, "learn", x, y)
    if ok:
        assert_finite(state_of(learner))


@FUZZ
@given(case=ANY_X)
def test_fuzz_predict(learner, case):
    x, _ = case
    ok, out = call(learner, "predict", x)
    if ok:
        n = expected_rows(x)
        assert isinstance(out, torch.Tensor) and out.shape == (n,)
        assert not out.is_floating_point()
        assert bool(((out >= 0) & (out < C)).all()), out
    ok, proba = call(learner, "predict_proba", x)
    if ok:
        n = expected_rows(x)
        assert proba.shape == (n, C) and proba.is_floating_point()
        assert bool(torch.isfinite(proba).all()) and bool((proba >= 0).all())
        assert torch.allclose(proba.sum(-1), torch.ones(n, dtype=proba.dtype), atol=1e-4)


@FUZZ
@given(case=x_and_y())
def test_fuzz_fused_step(stepper, case):
    """``CUDAGraphStep.predict_learn``: a prediction per row, or a clear error
    with the model untouched."""
    x, y = case
    before = state_of(stepper.model)
    try:
        out = stepper.predict_learn(x, y)
    except (ValueError, TypeError) as error:
        event(f"predict_learn: {type(error).__name__}")
        assert str(error).strip(), f"{type(error).__name__} with an empty message"
        assert_same(before, state_of(stepper.model))
        return
    event("predict_learn: ok")
    assert out.shape == (expected_rows(x),) and not out.is_floating_point()
    assert bool(((out >= 0) & (out < C)).all()), out
    assert_finite(state_of(stepper.model))


@settings(FUZZ, max_examples=15)
@given(case=x_and_y(), x=ANY_X)
def test_fuzz_fresh_learner(fresh_learner, case, x):
    """The empty-memory paths: first calls on a learner that has seen nothing."""
    ok, out = call(fresh_learner, "predict", x[0])
    if ok:
        assert out.shape == (expected_rows(x[0]),)
        assert bool(((out >= 0) & (out < C)).all())
    ok, _ = call(fresh_learner, "learn", *case)
    if ok:
        assert_finite(state_of(fresh_learner))


@settings(FUZZ, max_examples=25)
@given(ops=st.lists(st.one_of(valid_x_and_y().map(lambda c: ("valid", "learn", c)),
                              valid_x().map(lambda c: ("valid", "predict", (c[0],))),
                              invalid_learn_call().map(lambda c: ("invalid", *c))),
                    min_size=1, max_size=10))
def test_invalid_calls_do_not_disturb_valid_sequence(learner, ops):
    noisy, clean = copy.deepcopy(learner), copy.deepcopy(learner)
    for kind, method, args in ops:
        if kind == "invalid" or refuses_as_too_large(noisy, args[0]):
            ok, _ = call(noisy, method, *args)
            assert not ok, f"{method}{args!r} was accepted"
            continue
        out_noisy = getattr(noisy, method)(*args)
        out_clean = getattr(clean, method)(*args)
        if method == "predict":
            assert torch.equal(out_noisy, out_clean)
    assert_same(state_of(clean), state_of(noisy))
