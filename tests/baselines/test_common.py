"""Contract tests every baseline must pass."""
import json
import math
import re

import numpy as np
import pytest
import torch

from baseline_stream_helpers import gaussian_stream
from state_helpers import assert_same
from torch_geometric_stream.baselines import BASELINES, HDSSL, ReSSL, TemporalLabelPropagation
from torch_geometric_stream.models.registry import build_model
from torch_geometric_stream.validation import same_setting

D, C = 4, 3
FACTORIES = {
    "tlp": lambda m=1000, seed=0: TemporalLabelPropagation(D, C, memory_size=m),
    "tlp_knn": lambda m=1000, seed=0: TemporalLabelPropagation(D, C, memory_size=m, sigma=1.0,
                                                               knn=5),
    "ressl": lambda m=1000, seed=0: ReSSL(D, C, memory_size=m, seed=seed),
    "ressl_radius": lambda m=1000, seed=0: ReSSL(D, C, memory_size=m, radius_k=2, seed=seed),
    "hdssl": lambda m=1000, seed=0: HDSSL(D, C, memory_size=m, seed=seed),
    "hdssl_chunk": lambda m=1000, seed=0: HDSSL(D, C, memory_size=m, chunk_size=25, seed=seed),
}
NAMES = sorted(FACTORIES)


def test_registry():
    assert BASELINES == {"tlp": TemporalLabelPropagation, "ressl": ReSSL, "hdssl": HDSSL}
    for cls in BASELINES.values():
        model = cls(D, C)
        assert model.in_channels == D and model.num_classes == C
    with pytest.raises(ValueError, match="^unknown model 'tlpp'; choose one of "):
        build_model("tlpp", D, C)


@pytest.mark.parametrize("name", NAMES)
def test_predict_before_any_label(name):
    model = FACTORIES[name]()
    x = np.ones(D, dtype=np.float32)
    proba = model.predict_proba(x)
    assert proba.shape == (1, C)
    torch.testing.assert_close(proba, torch.full((1, C), 1.0 / C))
    assert model.predict(x).tolist() == [0]
    model.learn(np.random.default_rng(0).normal(size=(10, D)).astype(np.float32))
    pred = model.predict(x)
    assert pred.dtype == torch.long and 0 <= pred.item() < C


@pytest.mark.parametrize("name", NAMES)
def test_memory_budget(name):
    x, _, observed = gaussian_stream(n=3000, dim=D, label_ratio=0.05, spread=1.5, seed=1)
    model = FACTORIES[name](m=50)
    peak = 0
    for i in range(0, len(x), 50):
        model.predict(x[i])
        for j in range(i, min(i + 50, len(x))):
            model.learn(x[j], int(observed[j]))
            peak = max(peak, model.num_items)
            assert model.memory_usage() == model.num_items <= 50
    assert peak == 50


@pytest.mark.parametrize("name", NAMES)
def test_labelled_duplicate_moves_prediction(name):
    x, _, observed = gaussian_stream(n=200, dim=D, seed=2)
    model = FACTORIES[name]()
    model.learn(x, torch.from_numpy(observed))
    probe = np.array([2.5, 2.5, 2.5, 0.0], dtype=np.float32)   # between the blobs
    label = (model.predict(probe).item() + 1) % C              # not the current guess
    before = model.predict_proba(probe)[0, label].item()
    model.learn(probe, label)
    if name == "hdssl_chunk":                      # flush the chunk buffer
        for _ in range(model.chunk_size - model.num_buffered):
            model.learn(probe, label)
    after = model.predict_proba(probe)[0, label].item()
    assert after > before
    if name.startswith("hdssl"):                   # 1-NN on a cluster at the probe
        assert model.predict(probe).item() == label


@pytest.mark.parametrize("name", NAMES)
def test_deterministic_and_batch_equals_sequential(name):
    x, _, observed = gaussian_stream(n=160, dim=D, spread=1.5, seed=3)
    a, b = FACTORIES[name](m=40, seed=7), FACTORIES[name](m=40, seed=7)
    preds_a, preds_b = [], []
    for i in range(len(x)):
        preds_a.append(a.predict(x[i]).item())
        a.learn(x[i], int(observed[i]))
    b.learn(x[:100], torch.from_numpy(observed[:100]))   # one batch ...
    for i in range(100, len(x)):                          # ... then row by row
        preds_b.append(b.predict(x[i]).item())
        b.learn(x[i], int(observed[i]))
    assert preds_a[100:] == preds_b
    assert_same(a.state_dict(), b.state_dict())
    c = FACTORIES[name](m=40, seed=7)
    for i in range(len(x)):
        c.learn(x[i], int(observed[i]))
    assert_same(a.state_dict(), c.state_dict())
    # batch prediction = each row alone
    batch = a.predict_proba(x[:20])
    rows = torch.cat([a.predict_proba(x[i]) for i in range(20)])
    assert torch.equal(batch, rows)


@pytest.mark.parametrize("name", NAMES)
def test_bad_input_leaves_state_unchanged(name):
    x, _, observed = gaussian_stream(n=100, dim=D, seed=4)
    model = FACTORIES[name](m=30)
    model.learn(x, torch.from_numpy(observed))
    before = model.state_dict()
    good = x[0]
    nan = good.copy()
    nan[1] = np.nan
    bad_calls = [
        (ValueError, lambda: model.learn(np.ones(D + 1, dtype=np.float32), 0)),
        (ValueError, lambda: model.learn(nan, 1)),
        (ValueError, lambda: model.learn(good, C)),
        (ValueError, lambda: model.learn(good, -2)),
        (ValueError, lambda: model.learn(x[:3], [0, 1])),
        (ValueError, lambda: model.learn(np.stack([good, nan]), [0, 1])),
        (TypeError, lambda: model.learn(good, 1.0)),
        (ValueError, lambda: model.predict(np.ones(D - 1, dtype=np.float32))),
        (ValueError, lambda: model.predict(nan)),
    ]
    for error, call in bad_calls:
        with pytest.raises(error):
            call()
        assert_same(before, model.state_dict())


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_roundtrip_and_reset(name):
    x, _, observed = gaussian_stream(n=150, dim=D, spread=1.5, seed=5)
    model = FACTORIES[name](m=30)
    model.learn(x[:100], torch.from_numpy(observed[:100]))
    state = model.state_dict()
    assert all(isinstance(v, (torch.Tensor, bool, int, float)) for k, v in state.items()
               if k != "settings")
    assert state["settings"] == clone_settings(name)
    clone = FACTORIES[name](m=30)
    clone.load_state_dict(state)
    for i in range(100, 150):
        assert torch.equal(model.predict_proba(x[i]), clone.predict_proba(x[i]))
        model.learn(x[i], int(observed[i]))
        clone.learn(x[i], int(observed[i]))
    assert_same(model.state_dict(), clone.state_dict())
    model.reset()
    assert model.num_items == 0
    assert_same(model.state_dict(), FACTORIES[name](m=30).state_dict())


def clone_settings(name):
    """The settings a state of ``FACTORIES[name]`` goes with."""
    return {"tlp": {"sigma": None, "knn": None},
            "tlp_knn": {"sigma": 1.0, "knn": 5},
            "ressl": {"decay": 2e-6, "prune_threshold": 0.06, "window": 100,
                      "ks": (1, 3, 5, 7), "radius_k": None},
            "ressl_radius": {"decay": 2e-6, "prune_threshold": 0.06, "window": 100,
                             "ks": (1, 3, 5, 7), "radius_k": 2},
            "hdssl": {"decay": 1e-4, "prune_threshold": 0.15, "k": 5},
            "hdssl_chunk": {"decay": 1e-4, "prune_threshold": 0.15, "k": 5}}[name]


def _learn_both_and_compare(model, clone, x, observed):
    """``clone`` predicts and learns the rows of ``x`` as ``model`` does, bit for bit."""
    for i in range(len(x)):
        assert torch.equal(model.predict_proba(x[i]), clone.predict_proba(x[i]))
        model.learn(x[i], int(observed[i]))
        clone.learn(x[i], int(observed[i]))
    assert_same(model.state_dict(), clone.state_dict())


@pytest.mark.parametrize("name", NAMES)
def test_torch_save_and_default_torch_load_round_trip_the_state(name, tmp_path):
    # before: torch.load (weights_only=True, torch's default since 2.6) refused the
    # NumPy arrays and scalars of the state with an UnpicklingError
    x, _, observed = gaussian_stream(n=90, dim=D, spread=1.5, seed=5)
    model = FACTORIES[name](m=30)
    model.learn(x[:40], torch.from_numpy(observed[:40]))
    torch.save(model.state_dict(), tmp_path / "state.pt")
    state = torch.load(tmp_path / "state.pt", weights_only=True)
    clone = FACTORIES[name](m=30)
    clone.load_state_dict(state)
    assert_same(model.state_dict(), clone.state_dict())
    _learn_both_and_compare(model, clone, x[40:], observed[40:])


@pytest.mark.parametrize("name", NAMES)
def test_a_state_of_numpy_arrays_and_scalars_still_loads(name):
    # the form state_dict had before, which older checkpoints hold
    x, _, observed = gaussian_stream(n=90, dim=D, spread=1.5, seed=5)
    model = FACTORIES[name](m=30)
    model.learn(x[:40], torch.from_numpy(observed[:40]))
    old = {key: value.numpy().copy() if isinstance(value, torch.Tensor)
           else np.asarray(value, dtype=np.uint64 if key == "seed" else None)[()]
           for key, value in model.state_dict().items() if key != "settings"}
    assert all(isinstance(value, (np.ndarray, np.generic)) for value in old.values())
    clone = FACTORIES[name](m=30)
    clone.load_state_dict(old)
    assert_same(model.state_dict(), clone.state_dict())
    _learn_both_and_compare(model, clone, x[40:], observed[40:])


def _through_json(value):
    """``value`` (a state or its settings) after ``json.dumps`` and ``json.loads``:
    tensors as nested lists, tuples as lists."""
    return json.loads(json.dumps(value, default=lambda tensor: tensor.tolist()))


@pytest.mark.parametrize("name", NAMES)
def test_settings_after_a_json_round_trip_load(name):
    """Before, ReSSL's ``ks`` came back as a list and was refused: "the ReSSL state
    was kept with ks=[1, 3, 5, 7], this learner has ks=(1, 3, 5, 7)"."""
    x, _, observed = gaussian_stream(n=90, dim=D, spread=1.5, seed=5)
    model = FACTORIES[name](m=30)
    model.learn(x[:40], torch.from_numpy(observed[:40]))
    state = model.state_dict()
    settings = _through_json(state["settings"])
    clone = FACTORIES[name](m=30)
    clone.load_state_dict({**state, "settings": settings})
    assert_same(model.state_dict(), clone.state_dict())
    _learn_both_and_compare(model, clone, x[40:], observed[40:])
    for setting, value in settings.items():  # another value is still refused
        other = [*value, 9] if isinstance(value, list) else "other"
        with pytest.raises(ValueError, match=re.escape(f"kept with {setting}={other!r}, ")):
            clone.load_state_dict({**state, "settings": {**settings, setting: other}})


@pytest.mark.parametrize("kept, value, same", [
    ([1, 3], (1, 3), True), ([[0, 1.0], None], ((0.0, 1), None), True), (2, 2.0, True),
    ([1, 3], (1, 3, 5), False), ([[0, 1]], ((0, 2),), False), ((1, 3), "(1, 3)", False),
    (None, 0, False)])
def test_settings_compare_by_value_with_sequences_as_tuples(kept, value, same):
    assert same_setting(kept, value) is same_setting(value, kept) is same


@pytest.mark.parametrize("name", ["ressl", "ressl_radius"])
def test_a_ressl_state_after_a_json_round_trip_loads(name):
    x, _, observed = gaussian_stream(n=90, dim=D, spread=1.5, seed=5)
    model = FACTORIES[name](m=30)
    model.learn(x[:40], torch.from_numpy(observed[:40]))
    state = _through_json(model.state_dict())
    assert state["settings"]["ks"] == [1, 3, 5, 7] and len(state["acc_window"])
    clone = FACTORIES[name](m=30)
    clone.load_state_dict(state)
    assert_same(model.state_dict(), clone.state_dict())
    _learn_both_and_compare(model, clone, x[40:], observed[40:])



@pytest.mark.parametrize("name, seen", [  # the states that hold an empty array
    ("tlp", 40), ("tlp_knn", 0), ("tlp_knn", 40), ("ressl", 0), ("ressl_radius", 0),
    ("hdssl", 0), ("hdssl", 40)])
def test_a_state_with_empty_arrays_after_a_json_round_trip_loads(name, seen):
    """JSON writes every empty array as ``[]``: no dtype, one dimension. Before, a
    state holding one was refused: "state acc_window must hold booleans, got float64"
    (ReSSL before its first label), "state buffer_y must hold integers" (HDSSL
    without a chunk), "state edge must hold booleans" (TLP with ``sigma``, or its
    heuristic frozen); it loads into a learner whose own entry is not empty as well."""
    x, _, observed = gaussian_stream(n=130, dim=D, spread=1.5, seed=5)
    model, clone = FACTORIES[name](m=30), FACTORIES[name](m=30)
    if seen:
        model.learn(x[:seen], torch.from_numpy(observed[:seen]))
    clone.learn(x[40 - seen:90 - seen], torch.from_numpy(observed[40 - seen:90 - seen]))
    state = model.state_dict()
    assert any(isinstance(value, torch.Tensor) and not value.numel() for value in state.values())
    clone.load_state_dict(_through_json(state))
    assert_same(state, clone.state_dict())
    _learn_both_and_compare(model, clone, x[90:], observed[90:])


def _spoiled_states(state):
    """Per entry: the state without it, and with it one element longer (the
    settings aside: an older state lacks them)."""
    for key, value in state.items():
        if key == "settings":
            continue
        yield f"{key} missing", {k: v for k, v in state.items() if k != key}
        flat = np.asarray(value).reshape(-1)
        yield f"{key} reshaped", {**state, key: np.concatenate([flat, flat[:1]])
                                  if flat.size else np.zeros(3, flat.dtype)}
    yield "an unexpected entry", {**state, "extra": np.zeros(1)}
    for key in ("label", "mc_label", "buffer_y"):  # class ids of a learner with more classes
        if np.asarray(state.get(key, ())).size:
            yield f"{key} of more classes", {**state, key: np.full_like(state[key], C)}


@pytest.mark.parametrize("name", NAMES)
def test_a_failed_load_state_dict_changes_nothing(name):
    x, _, observed = gaussian_stream(n=150, dim=D, spread=1.5, seed=5)
    model, other = FACTORIES[name](m=30), FACTORIES[name](m=30)
    model.learn(x[:100], torch.from_numpy(observed[:100]))
    other.learn(x[50:], torch.from_numpy(observed[50:]))  # differs in every entry
    before = model.state_dict()
    for what, state in _spoiled_states(other.state_dict()):
        entry = what.removesuffix(" of more classes")
        with pytest.raises(ValueError, match=None if entry == what else
                           f"state entry {entry}: label {C} is outside \\[0, {C}\\)"):
            model.load_state_dict(state)
        assert_same(before, model.state_dict(), what)
    with pytest.raises(TypeError, match="mapping"):
        model.load_state_dict([1, 2])


def _poisoned_states(state):
    """Per entry, a value its dtype cannot take, with the error and message
    expected: NaN, inf (but in ``mc_dist2``, which holds it), complex numbers and
    strings for floats; floats and integers beyond the dtype (:math:`2^{63}` for
    ``int64``) for integers; numbers and strings for booleans (the settings aside)."""
    for key, value in state.items():
        if key == "settings":
            continue
        array = np.asarray(value)
        if not array.size:
            continue
        kind, scalar = array.dtype.kind, array.ndim == 0
        if kind == "f" and scalar:
            yield key, math.nan, ValueError, f"^state {key} must be a finite number, got nan$"
            yield key, -math.inf, ValueError, f"^state {key} must be a finite number, got -inf$"
            yield key, 1 + 1j, TypeError, f"^state {key} must be a number, got complex$"
            yield key, "a", TypeError, f"^state {key} must be a number, got str$"
        elif kind == "f":
            nan, inf = array.copy(), array.copy()
            nan.flat[0], inf.flat[-1] = np.nan, -np.inf
            yield key, nan, ValueError, f"^state {key} holds NaN"
            if key != "mc_dist2":
                yield key, inf, ValueError, f"^state {key} holds NaN or inf values$"
            yield key, array + 1j, TypeError, f"^state {key} must hold real numbers, got complex"
            yield key, np.full(array.shape, "a"), TypeError, (
                f"^state {key} must hold real numbers, got <U1$")
        elif kind in "iu" and scalar:
            top = np.iinfo(np.uint64 if key == "seed" else np.int64).max
            for beyond in (top + 1, 10 ** 30):
                yield key, beyond, ValueError, f"^state {key} must be <= {top}, got {beyond}$"
            yield key, 1.0, TypeError, f"^state {key} must be an integer, got float$"
        elif kind in "iu":
            yield key, np.full(array.shape, 2 ** 63, dtype=np.uint64), ValueError, (
                f"^state {key} must hold integers in \\[-{2 ** 63}, {2 ** 63 - 1}\\] \\(int64\\), "
                f"got {2 ** 63}$")
            yield key, array + 0.5, TypeError, f"^state {key} must hold integers, got float64$"
        elif scalar:
            yield key, 1.0, TypeError, f"^state {key} must be a bool, got float$"
            yield key, "abc", TypeError, f"^state {key} must be a bool, got str$"
        else:
            yield key, array.astype(np.float64), TypeError, (
                f"^state {key} must hold booleans, got float64$")
            yield key, np.full(array.shape, "a"), TypeError, (
                f"^state {key} must hold booleans, got <U1$")


@pytest.mark.parametrize("name", NAMES)
def test_a_state_of_values_its_dtypes_cannot_take_is_refused_and_changes_nothing(name):
    """Before, such a state loaded (a complex array with only a ComplexWarning, a
    flag ``"abc"`` as true) and failed later: a counter beyond ``int64`` with an
    OverflowError at the next learn_one or state_dict, NaN features with uniform
    predictions, HDSSL's NaN buffer in clusters whose state no longer loaded."""
    x, _, observed = gaussian_stream(n=150, dim=D, spread=1.5, seed=5)
    model, twin = FACTORIES[name](m=200), FACTORIES[name](m=200)
    for learner in (model, twin):  # 90 rows: HDSSL's chunk of 25 holds 15
        learner.learn(x[:90], torch.from_numpy(observed[:90]))
    before = model.state_dict()
    assert name != "tlp" or before["dist2"].numel()  # TLP not frozen: its graph is a state
    refused = set()
    for key, value, error, message in _poisoned_states(before):
        with pytest.raises(error, match=message):
            model.load_state_dict({**before, key: value})
        assert_same(before, model.state_dict(), f"{key}={value!r}")
        refused.add(key)
    assert refused == {key for key, value in before.items()
                       if key != "settings" and np.asarray(value).size}
    _learn_both_and_compare(model, twin, x[90:], observed[90:])


def test_a_state_of_a_tlp_holds_a_boolean_frozen():
    """Before, ``frozen="abc"`` (or 1) loaded as true; a Python bool (what
    state_dict writes), a NumPy bool (older states) and a 0-d bool tensor load."""
    model = FACTORIES["tlp_knn"](m=30)
    state = model.state_dict()
    for frozen in ("abc", 1):
        with pytest.raises(TypeError, match="^state frozen must be a bool, got "):
            model.load_state_dict({**state, "frozen": frozen})
    for frozen in (True, np.bool_(True), torch.tensor(True)):
        model.load_state_dict({**state, "frozen": frozen})
        assert_same(state, model.state_dict())


@pytest.mark.parametrize("name, expected", [
    ("tlp_knn", "TemporalLabelPropagation(in_channels=4, num_classes=3, memory_size=30, "
                "sigma=1.0, knn=5)"),
    ("ressl", "ReSSL(in_channels=4, num_classes=3, memory_size=30, decay=2e-06, "
              "prune_threshold=0.06, window=100, ks=(1, 3, 5, 7), radius_k=None, seed=0)"),
    ("hdssl_chunk", "HDSSL(in_channels=4, num_classes=3, memory_size=30, k=5, decay=0.0001, "
                    "prune_threshold=0.15, chunk_size=25, seed=0)"),
])
def test_repr_reads_as_the_constructor_call(name, expected):
    # before: "<torch_geometric_stream.baselines.ressl.ReSSL object at 0x7f...>"
    assert repr(FACTORIES[name](30)) == expected


@pytest.mark.parametrize("name", NAMES)
def test_a_full_counter_learns_no_more_and_changes_nothing(name):
    """Before, a state whose counter was ``2**63 - 1`` loaded (it is an ``int64``)
    and learned a sample: the counter went to ``2**63``, and the next
    ``state_dict`` (a checkpoint) raised an OverflowError, as did TLP's next learn.
    A run counts to ``2**63 - 1`` at most: a batch that would count beyond it is
    refused whole (and the loader refuses the full counter, see below)."""
    x, _, observed = gaussian_stream(n=40, dim=D, spread=1.5, seed=5)
    model = FACTORIES[name](m=30)
    model.learn(x[:30], torch.from_numpy(observed[:30]))
    state = model.state_dict()
    counter = "time" if name.startswith("tlp") else "now"
    top = 2 ** 63 - 1
    model.load_state_dict({**state, counter: top - 1})
    model.learn(x[30], int(observed[30]))
    assert model.state_dict()[counter] == top
    before = model.state_dict()
    for rows in (x[31], x[31:33]):
        with pytest.raises(ValueError, match=f"^state {counter} is {top}, 0 below its largest "
                           f"value {top} \\(int64\\): a batch of {rows.ndim} would overflow"):
            model.learn(rows)
        assert_same(before, model.state_dict())
    model.load_state_dict({**state, counter: top - 1})
    before = model.state_dict()
    with pytest.raises(ValueError, match=f"^state {counter} is {top - 1}, 1 below "):
        model.learn(x[31:33])
    assert_same(before, model.state_dict())


#: Per baseline, a learner built with another value of each kept setting.
OTHER_SETTINGS = {
    "tlp": [("sigma", None, 2.0), ("knn", None, 3)],
    "tlp_knn": [("sigma", 1.0, None), ("knn", 5, None)],
    "ressl": [("decay", 2e-6, 1e-3), ("prune_threshold", 0.06, 0.5), ("window", 100, 50),
              ("ks", (1, 3, 5, 7), (1, 2, 3, 4)), ("radius_k", None, 2)],
    "ressl_radius": [("radius_k", 2, 3)],
    "hdssl": [("decay", 1e-4, 2e-6), ("prune_threshold", 0.15, 0.06), ("k", 5, 1)],
    "hdssl_chunk": [("k", 5, 10)],
}
_ARGUMENTS = {"tlp": {}, "tlp_knn": {"sigma": 1.0, "knn": 5}, "ressl": {},
              "ressl_radius": {"radius_k": 2}, "hdssl": {}, "hdssl_chunk": {"chunk_size": 25}}


@pytest.mark.parametrize("name, setting, kept, other",
                         [(name, *case) for name in NAMES for case in OTHER_SETTINGS[name]])
def test_a_state_kept_with_another_setting_is_refused_naming_it(name, setting, kept, other):
    """Before, a state of a learner built with another setting loaded silently,
    and went on under this learner's (e.g. TLP's edges of ``knn=3`` then joined
    by every pair of window points); an older state without the settings loads."""
    x, _, observed = gaussian_stream(n=60, dim=D, spread=1.5, seed=5)
    saved = FACTORIES[name](m=30)
    saved.learn(x[:20], torch.from_numpy(observed[:20]))  # TLP: the first window fills
    state = saved.state_dict()
    assert state["settings"][setting] == kept
    cls = type(saved)
    model = cls(D, C, memory_size=30, **{**_ARGUMENTS[name], setting: other})
    model.learn(x[20:30], torch.from_numpy(observed[20:30]))
    before = model.state_dict()
    cls_name = cls.__name__
    with pytest.raises(ValueError, match=re.escape(
            f"the {cls_name} state was kept with {setting}={kept!r}, this learner has "
            f"{setting}={other!r}: build it with the state's {setting}")):
        model.load_state_dict(state)
    assert_same(before, model.state_dict())
    older = {key: value for key, value in state.items() if key != "settings"}
    twin = FACTORIES[name](m=30)
    twin.load_state_dict(older)
    _learn_both_and_compare(saved, twin, x[20:], observed[20:])


def test_a_tlp_state_of_knn_mid_fill_is_refused_by_a_learner_without_knn():
    """The case found: a state saved while the first window fills, by ``knn=3``,
    loaded into ``knn=None`` silently; then every pair of window points was
    weighted."""
    x, _, observed = gaussian_stream(n=10, dim=D, seed=5)
    saved = TemporalLabelPropagation(D, C, memory_size=30, knn=3)
    saved.learn(x, torch.from_numpy(observed))
    model = TemporalLabelPropagation(D, C, memory_size=30)
    before = model.state_dict()
    with pytest.raises(ValueError, match="^the TemporalLabelPropagation state was kept with "
                       "knn=3, this learner has knn=None: build it with the state's knn$"):
        model.load_state_dict(saved.state_dict())
    assert_same(before, model.state_dict())


@pytest.mark.parametrize("name", NAMES)
def test_settings_no_learner_writes_are_refused_and_change_nothing(name):
    model = FACTORIES[name](m=30)
    state = model.state_dict()
    before = model.state_dict()
    with pytest.raises(TypeError, match="^state settings must be a mapping of setting names "
                       "to values, got list$"):
        model.load_state_dict({**state, "settings": [1]})
    with pytest.raises(ValueError, match=re.escape(
            f"{type(model).__name__} state settings ['lam'] are none of this learner's "
            f"{list(clone_settings(name))}")):
        model.load_state_dict({**state, "settings": {**state["settings"], "lam": 1.0}})
    assert_same(before, model.state_dict())
    # a state kept before one of its settings was kept is not checked on it
    model.load_state_dict({**state, "settings": {}})
    assert_same(before, model.state_dict())


#: Per baseline, entries set to a finite value no run reaches, beyond which later
#: arithmetic overflows, and the value.
ABSURD = {"tlp": [("x", 1e300), ("dist2", 1e300), ("weights", 1e300), ("weights", -1.0),
                  ("sigma", 1e100)],
          "ressl": [("mc_ls", 1e300), ("mc_ss", 1e300), ("mc_ss", -1.0), ("mc_centre", -1e300),
                    ("mc_count", 1e300), ("mc_time", 1e300)],
          "hdssl_chunk": [("buffer_x", 1e300), ("mc_time", 1e6)]}


@pytest.mark.parametrize("name, key, value",
                         [(name, *case) for name in ABSURD for case in ABSURD[name]])
def test_a_finite_value_no_run_reaches_is_refused_naming_the_entry(name, key, value):
    """Before, such a value loaded (it is finite) and later arithmetic overflowed
    (a squared distance or a merged sum to inf, a decay 2 ** (decay (time - now))
    to inf, a median bandwidth's square to inf)."""
    x, _, observed = gaussian_stream(n=90, dim=D, spread=1.5, seed=5)
    model, twin = FACTORIES[name](m=200), FACTORIES[name](m=200)
    for learner in (model, twin):
        learner.learn(x[:40], torch.from_numpy(observed[:40]))
    before = model.state_dict()
    spoiled = before[key].clone() if isinstance(before[key], torch.Tensor) else value
    if isinstance(spoiled, torch.Tensor):
        spoiled.view(-1)[0] = value
    with pytest.raises(ValueError, match=f"^state {key} must hold values in \\["):
        model.load_state_dict({**before, key: spoiled})
    assert_same(before, model.state_dict())
    _learn_both_and_compare(model, twin, x[40:], observed[40:])


def test_values_of_a_long_run_load():
    """Counts after 1e9 samples and sums of squares of features of magnitude 1e6
    are what a run reaches: they load (with the centres ``ls / count`` they give)."""
    model = ReSSL(D, C, memory_size=30)
    model.learn(np.ones((3, D), dtype=np.float32), [0, 1, 2])
    state = model.state_dict()
    active = state["mc_active"].numpy()
    count, ls, ss, centre = (state[key].clone()
                             for key in ("mc_count", "mc_ls", "mc_ss", "mc_centre"))
    count[active], ls[active], ss[active], centre[active] = 1e9, 1e9 * 1e6, 1e9 * 1e12, 1e6
    model.load_state_dict({**state, "mc_count": count, "mc_ls": ls, "mc_ss": ss,
                           "mc_centre": centre, "now": 10 ** 9})
    model.learn(np.full(D, 1e6, dtype=np.float32), 0)
    assert np.isfinite(model.micro_clusters.ss).all()


@pytest.mark.parametrize("name", NAMES)
def test_a_state_whose_counter_has_no_room_for_one_more_sample_is_refused(name):
    """Before, a counter of ``2**63 - 1`` loaded: the learner could not learn one
    more sample (the next learn was refused). The largest counter that leaves room
    for it, ``2**63 - 2``, loads and learns one sample."""
    x, _, observed = gaussian_stream(n=40, dim=D, spread=1.5, seed=5)
    model = FACTORIES[name](m=30)
    model.learn(x[:30], torch.from_numpy(observed[:30]))
    state, before = model.state_dict(), model.state_dict()
    counter = "time" if name.startswith("tlp") else "now"
    top = 2 ** 63 - 1
    for full in (top, np.int64(top), torch.tensor(top)):
        with pytest.raises(ValueError, match=(
                f"^state {counter} must be below {top}, the largest int64, got {top}: a "
                f"learner loaded with it could not count one more sample$")):
            model.load_state_dict({**state, counter: full})
        assert_same(before, model.state_dict())
    model.load_state_dict({**state, counter: top - 1})
    model.learn(x[30], int(observed[30]))
    assert model.state_dict()[counter] == top


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("seed, scale, offset", [(0, 1.0, 0.0), (1, 1e3, 1e4), (2, 1e-3, 0.0)])
def test_every_state_of_a_run_loads(name, seed, scale, offset):
    """The checks that a state's entries agree (centres ``ls / count``, radii, the
    squared distances, TLP's symmetric weights and first window) take every state
    a run writes: 300 steps of a stream (shifted and scaled: sums that cancel)
    with merges, pruning, TLP's window filling and sliding; a copy loaded at each
    step goes on as the run does."""
    x, _, observed = gaussian_stream(n=300, dim=D, spread=1.5, seed=seed, label_ratio=0.1)
    x = (x * scale + offset).astype(np.float32)
    model = FACTORIES[name](m=40, seed=seed)
    for i in range(len(x)):
        model.learn(x[i], int(observed[i]))
        clone = FACTORIES[name](m=40, seed=seed + 1)
        clone.load_state_dict(model.state_dict())
    _learn_both_and_compare(model, clone, x[:20], observed[:20])
