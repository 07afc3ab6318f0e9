"""One contract for every stream learner of the package (River's check suite, ours).

Every name of :func:`torch_geometric_stream.models.model_names` (SLeDGe,
SLeDGe-L, the ablations and the baselines) is built through the same
registry and must pass each check.
"""
import copy
import gc
import io
import pickle
import random
import sys
import types
from fractions import Fraction

import numpy as np
import pytest
import torch

from state_helpers import assert_same, state_of
from torch_geometric_stream.models import build_model, model_names

D, C, BUDGET = 5, 3, 40
SMALL = dict(labeled_size=9, unlabeled_size=BUDGET - 9, k=3, hidden_channels=16,
             num_layers=2, lr=5e-3)


def make(name, seed=0):
    return build_model(name, D, C, seed=seed, **SMALL)


def stream(n, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(C, D)) * 4
    y = rng.integers(0, C, n)
    return (centres[y] + rng.normal(size=(n, D))).astype(np.float32), y


NAMES = model_names()


def test_every_paper_method_is_registered():
    assert set(NAMES) == {"base", "memory", "static", "gsl", "sledge", "sledge-light", "tlp",
                          "ressl", "hdssl"}


@pytest.mark.parametrize("name", NAMES)
def test_predict_before_any_label_is_a_valid_class(name):
    model = make(name)
    prediction = model.predict(np.ones(D, dtype=np.float32))
    assert prediction.shape == (1,) and 0 <= int(prediction) < C
    model.learn(stream(5)[0])  # unlabeled only
    assert model.predict(stream(3, seed=1)[0]).shape == (3,)


@pytest.mark.parametrize("name", NAMES)
def test_memory_budget_is_never_exceeded(name):
    x, y = stream(300)
    model = make(name)
    for i in range(len(x)):
        model.learn(x[i], int(y[i]) if i % 7 == 0 else -1)
        assert model.num_items <= BUDGET


# SLeDGe-L keeps one prototype per class: a labeled sample is merged into it
# (weight (1 - 1/N) sim), never stored as itself, so no such guarantee holds.
MOVES_TOWARD_LABEL = [name for name in NAMES if name != "sledge-light"]


@pytest.mark.parametrize("name", MOVES_TOWARD_LABEL)
def test_labeled_sample_moves_its_duplicate_toward_its_label(name):
    # One label per class so far: the probe gets a free labeled slot.
    x, y = stream(60)
    first = np.zeros(60, dtype=bool)
    first[[int(np.flatnonzero(y == c)[0]) for c in range(C)]] = True
    model = make(name)
    model.learn(x, np.where(first, y, -1))
    probe = np.full(D, 0.5, dtype=np.float32)
    label = int(model.predict(probe)) - 1
    label = label % C  # a label the model does not predict now
    before = float(model.predict_proba(probe)[0, label])
    model.learn(probe, label)
    after = float(model.predict_proba(probe)[0, label])
    assert after > before


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_predictions(name):
    x, y = stream(120)
    labels = np.where(np.arange(120) % 5 == 0, y, -1)
    runs = []
    for _ in range(2):
        model = make(name, seed=7)
        predictions = []
        for i in range(len(x)):
            predictions.append(int(model.predict(x[i])))
            model.learn(x[i], int(labels[i]))
        runs.append(predictions)
    assert runs[0] == runs[1]


def scramble_global_generators(seed):
    """Reseed and draw from torch's, NumPy's and Python's global generators."""
    torch.manual_seed(seed), np.random.seed(seed), random.seed(seed)
    torch.rand(3), np.random.rand(3), random.random()


@pytest.mark.parametrize("name", NAMES)
def test_a_seeded_learner_draws_from_no_global_generator(name):
    # global generators used before building, between steps, and by another
    # learner built first leave a seeded learner's predictions and state as they were
    x, y = stream(60)
    labels = np.where(np.arange(60) % 4 == 0, y, -1)
    scramble_global_generators(0)
    model = make(name, seed=7)
    expected = predict_then_learn(model, x, labels)
    scramble_global_generators(1)
    make("sledge", seed=1)
    disturbed = make(name, seed=7)
    probabilities = []
    for row, label in zip(x, labels):
        scramble_global_generators(len(probabilities) + 2)
        probabilities.append(disturbed.predict_proba(row))
        disturbed.learn(row, int(label))
    assert torch.equal(torch.cat(probabilities), expected)
    assert_same(state_of(model), state_of(disturbed))


BAD = [
    ("wrong dimension", lambda: (np.zeros(D + 2, np.float32), 0), ValueError),
    ("nan", lambda: (np.full(D, np.nan, np.float32), 0), ValueError),
    ("inf", lambda: (np.full(D, np.inf, np.float32), -1), ValueError),
    ("label too large", lambda: (np.zeros(D, np.float32), C), ValueError),
    ("float label", lambda: (np.zeros(D, np.float32), 1.5), TypeError),
    ("integral float label", lambda: (np.zeros(D, np.float32), 2.0), TypeError),
    ("bool among labels", lambda: (np.zeros((3, D), np.float32), [0, True, None]), TypeError),
    ("numpy bool among labels", lambda: (np.zeros((2, D), np.float32), [np.True_, 1]),
     TypeError),
    ("integer features", lambda: (np.zeros(D, np.int64), 0), TypeError),
    ("empty batch", lambda: (np.zeros((0, D), np.float32), None), ValueError),
    ("length mismatch", lambda: (np.zeros((3, D), np.float32), np.array([0, 1])), ValueError),
    ("meta features", lambda: (torch.zeros(D, device="meta"), 0), TypeError),
    ("meta label", lambda: (np.zeros(D, np.float32), torch.zeros((), dtype=torch.long,
                                                                device="meta")), TypeError),
    ("3-D features", lambda: (np.zeros((1, 1, D), np.float32), None), ValueError),
    ("nan row among valid rows",
     lambda: (np.stack([np.ones(D), np.full(D, np.nan), np.ones(D)]).astype(np.float32),
              [0, -1, 1]), ValueError),
    ("bad label among valid ones", lambda: (np.ones((3, D), np.float32), [0, 1, C]),
     ValueError),
    ("float label among valid ones", lambda: (np.ones((3, D), np.float32), [0, 1.0, 2]),
     TypeError),
]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("case,make_input,error", BAD, ids=[case for case, *_ in BAD])
@pytest.mark.parametrize("after", ["learning", "a load"])
def test_bad_input_raises_and_leaves_state_unchanged(name, case, make_input, error, after):
    # a batch with one bad row is refused whole (no row of it learned), also by a
    # learner whose state was just loaded; the learner then goes on as its twin
    x, y = stream(40)
    model = make(name)
    model.learn(x, np.where(np.arange(40) % 4 == 0, y, -1))
    if after == "a load":
        model = saved_and_loaded(model, name)
    twin = copy.deepcopy(model)
    before = state_of(model)
    bad_x, bad_y = make_input()
    with pytest.raises(error):
        model.learn(bad_x, bad_y)
    assert_same(before, state_of(model))
    probe, label = stream(3, seed=1)
    for learner in (model, twin):
        learner.learn(probe, label)
    assert torch.equal(model.predict_proba(probe), twin.predict_proba(probe))
    assert_same(state_of(twin), state_of(model))


@pytest.mark.parametrize("name", NAMES)
def test_a_batch_whose_later_row_is_refused_learns_none_of_it(name):
    # each learner's per-row refusals: a NaN row (refused up front by every one) and
    # a row an unclipped quantile input range scales to inf (taken by those without
    # one); before: SLeDGe's range refused that row only once the rows before it
    # were learned, and kept them
    from torch_geometric_stream.nn import RunningQuantileRange

    def learner():
        model = build_model(name, D, C, seed=0, input_scaling=RunningQuantileRange(
            D, quantile=0.25, tolerance=0.0, clip=False), **SMALL)
        model.learn(narrow_first_feature(x[:40]), np.where(np.arange(40) % 4 == 0, y[:40], -1))
        model.predict_proba(narrow_first_feature(x[40]))
        return model

    x, y = stream(60)
    model, twin = learner(), learner()
    for bad in (np.nan, 1e10):
        batch = narrow_first_feature(x[41:44])
        batch[2, 0] = bad
        try:
            model.learn(batch, y[41:44])
        except ValueError:
            pass
        else:  # not refused: a learner without the input range took the row
            assert bad == 1e10 and getattr(model, "input_scaler", None) is None
            twin.learn(batch, y[41:44])
        assert_same(state_of(twin), state_of(model))
    rows = narrow_first_feature(x[44:])
    for learner in (model, twin):
        learner.learn(rows[0], int(y[44]))
        learner.learn(rows[1:], y[45:])
    assert torch.equal(model.predict_proba(rows), twin.predict_proba(rows))
    assert_same(state_of(twin), state_of(model))


def narrow_first_feature(x):
    """``x`` with feature 0 alternating 0 and 1e-30 (a sliver of a quantile range)."""
    x = np.array(x, dtype=np.float32, ndmin=2)
    x[:, 0] = np.resize([0.0, 1e-30], len(x))
    return x


@pytest.mark.parametrize("name", NAMES)
def test_a_tensor_that_requires_grad_is_learned_as_its_values_and_left_untouched(name):
    # before: "base" sent its training loss's gradient into the caller's x.grad
    x, y = stream(40)
    labels = np.where(np.arange(40) % 4 == 0, y, -1)
    given = torch.from_numpy(x.copy()).requires_grad_()
    model, reference = make(name), make(name)
    model.learn(given, labels)
    reference.learn(x, labels)
    assert given.grad is None and given.grad_fn is None and torch.equal(given.detach(),
                                                                        torch.from_numpy(x))
    assert_same(state_of(model), state_of(reference))
    assert not model.predict_proba(given).requires_grad


@pytest.mark.parametrize("name", NAMES)
def test_river_style_one_sample_calls_match_the_tensor_api(name):
    x, y = stream(60)
    labels = np.where(np.arange(60) % 4 == 0, y, -1)
    river_style, tensor_api = make(name, seed=3), make(name, seed=3)
    for i in range(len(x)):
        label = None if labels[i] == -1 else int(labels[i])
        prediction = river_style.predict_one(x[i])
        assert type(prediction) is int and prediction == int(tensor_api.predict(x[i])[0])
        proba = river_style.predict_proba_one(x[i][None])  # (1, d) is one sample too
        assert sorted(proba) == list(range(C)) and sum(proba.values()) == pytest.approx(1.0)
        assert list(proba.values()) == tensor_api.predict_proba(x[i])[0].tolist()
        assert river_style.learn_one(x[i], label) is river_style
        tensor_api.learn(x[i], int(labels[i]))
    assert_same(state_of(river_style), state_of(tensor_api))


def partly_labeled(name):
    """A learner ``name`` after 40 rows of :func:`stream`, one in four labeled, and the rows."""
    x, y = stream(40)
    model = make(name)
    model.learn(x, np.where(np.arange(40) % 4 == 0, y, -1))
    return model, x


@pytest.mark.parametrize("name", NAMES)
def test_one_sample_calls_refuse_a_batch_and_change_nothing(name):
    model, x = partly_labeled(name)
    before = state_of(model)
    for call, args in (("predict_one", (x[:2],)), ("predict_proba_one", (x[:2],)),
                       ("learn_one", (x[:2], None))):
        with pytest.raises(ValueError, match=f"{call} takes one sample \\({D},\\), got a batch "
                                             f"of 2 rows: use {call.removesuffix('_one')}"):
            getattr(model, call)(*args)
    with pytest.raises(ValueError, match="outside"):
        model.learn_one(x[0], C)
    assert_same(before, state_of(model))


BEYOND_INT64 = ("holds a value torch cannot represent: 1180591620717411303424{} is outside "
                "the int64 range [-2**63, 2**63 - 1]")
UNCONVERTIBLE = [  # (label or row, error, message after "y " or "x ")
    (2 ** 70, ValueError, BEYOND_INT64.format("")),
    ([2 ** 70], ValueError, BEYOND_INT64.format(" at index 0")),
    (Fraction(1, 2), TypeError, "has a type torch cannot convert: Could not infer dtype of "
                                "Fraction"),
    ([Fraction(2)], TypeError, "has a type torch cannot convert: Fraction at index 0"),
]


@pytest.mark.parametrize("name", NAMES)
def test_an_int_beyond_int64_or_a_fraction_is_refused_by_name_and_changes_nothing(name):
    # before: [2**70] read "must be numeric, got a NumPy array of dtype object", 2**70
    # "Overflow when unpacking long long" (no value), and Fraction(1, 2) a ValueError
    model, x = partly_labeled(name)
    before = state_of(model)
    for value, error, message in UNCONVERTIBLE:
        row = value * D if isinstance(value, list) else value  # one sample: D such values
        calls = [("learn", (x[0], value), "y"), ("learn_one", (x[0], value), "y"),
                 ("learn", (row, 0), "x"), ("learn_one", (row, None), "x"),
                 ("predict_one", (row,), "x"), ("predict_proba_one", (row,), "x")]
        for call, args, argument in calls:
            with pytest.raises(error) as refused:
                getattr(model, call)(*args)
            assert str(refused.value) == f"{argument} {message}", call
    assert_same(before, state_of(model))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("context", [torch.no_grad, torch.inference_mode])
def test_calls_inside_no_grad_or_inference_mode_learn_as_outside(name, context):
    # before: learn raised RuntimeError after writing the memory, and a prediction
    # under inference_mode cached embeddings without gradient for the next step
    x, y = stream(40)
    labels = np.where(np.arange(40) % 4 == 0, y, -1)
    plain, wrapped = make(name), make(name)
    for i in range(len(x)):
        expected = plain.predict_proba(x[i])
        plain.learn_one(x[i], int(labels[i]))
        with context():
            assert torch.equal(wrapped.predict_proba(x[i]), expected)
            wrapped.learn_one(x[i], int(labels[i]))
    assert_same(state_of(plain), state_of(wrapped))


def predict_then_learn(model, x, labels):
    """Probabilities :math:`(n, c)` of each row, predicted before it is learned."""
    probabilities = []
    for row, label in zip(x, labels):
        probabilities.append(model.predict_proba(row))
        model.learn(row, int(label))
    return torch.cat(probabilities)


def saved_and_loaded(model, name):
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    fresh = make(name, seed=5)
    fresh.load_state_dict(torch.load(buffer, weights_only=False))
    return fresh


COPIES = {"deepcopy": lambda model, name: copy.deepcopy(model),
          "pickle": lambda model, name: pickle.loads(pickle.dumps(model)),
          "state_dict": saved_and_loaded}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("how", COPIES)
def test_a_copy_made_mid_stream_continues_exactly_as_the_original(name, how):
    # before: "static" (whose training steps patch a kept memory graph) lost that
    # graph in the copy, and the copy's search anew differed in the last bits
    x, y = stream(120)
    labels = np.where(np.arange(120) % 4 == 0, y, -1)
    model = make(name)
    predict_then_learn(model, x[:50], labels[:50])
    model.predict_proba(x[50])  # a prediction's cache is there too
    twin = COPIES[how](model, name)
    expected = predict_then_learn(model, x[50:], labels[50:])
    assert torch.equal(predict_then_learn(twin, x[50:], labels[50:]), expected)
    assert_same(state_of(model), state_of(twin))


@pytest.mark.parametrize("name", NAMES)
def test_repr_names_the_learner_class(name):
    # before: the baselines printed as "<...ReSSL object at 0x7f...>"
    model = make(name)
    assert repr(model).startswith(f"{type(model).__name__}(")


def held_bytes(root):
    """Bytes held by ``root``'s object graph: ``sys.getsizeof`` of every object
    reachable through ``gc.get_referents``, plus the data of its tensors (storage
    counted once) and arrays (classes, modules and functions not followed)."""
    skip = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
            types.MethodType)
    seen, storages, total, todo = set(), set(), 0, [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, skip):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, torch.Tensor):
            storage = obj.untyped_storage()
            if storage.data_ptr() not in storages:
                storages.add(storage.data_ptr())
                total += storage.nbytes()
        elif isinstance(obj, np.ndarray):
            total += obj.nbytes
        todo.extend(gc.get_referents(obj))
    return total


#: Settings that bound a baseline's state by less than the stream of the test.
BOUNDED = {"ressl": {"window": 6}}


@pytest.mark.parametrize("name", NAMES)
def test_the_state_held_does_not_grow_with_the_stream(name):
    # fixed memory: once the memory is full, the bytes a learner holds (its
    # tensors, arrays and Python objects) after n and 4 n samples are the same
    n = 2 * BUDGET
    x, y = stream(4 * n)
    labels = np.where(np.arange(4 * n) % 4 == 0, y, -1)
    model = build_model(name, D, C, seed=0, **SMALL, **BOUNDED.get(name, {}))
    predict_then_learn(model, x[:n], labels[:n])
    held = held_bytes(model)
    shapes = {key: getattr(value, "shape", None) for key, value in model.state_dict().items()}
    predict_then_learn(model, x[n:], labels[n:])
    assert held_bytes(model) == held
    assert {key: getattr(value, "shape", None)
            for key, value in model.state_dict().items()} == shapes
