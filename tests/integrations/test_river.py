"""River adapter: progressive validation, unlabeled learning, class mapping."""
import itertools
import threading
import warnings

import numpy as np
import pytest
import torch

river = pytest.importorskip("river")
from river import datasets, evaluate, metrics  # noqa: E402
from state_helpers import assert_same, state_of  # noqa: E402

from torch_geometric_stream.evaluation.transforms import (OnlineMinMaxScaler,  # noqa: E402
                                                          make_transform)
from torch_geometric_stream.integrations.river import (RiverClassifier,  # noqa: E402
                                                       SemiSupervisedWrapper)
from torch_geometric_stream.models.registry import build_model  # noqa: E402

SMALL = dict(hidden_channels=16, labeled_size=10, unlabeled_size=40, seed=0)


def small_model(num_classes=2, **kwargs):
    return RiverClassifier.sledge(num_classes=num_classes, transform=make_transform(),
                                  input_scaling=None, **SMALL, **kwargs)


def river_state(model):
    """A copy of everything that steers a :class:`RiverClassifier`'s predictions: the
    feature order, the class mapping, its learner's whole state and its transform's."""
    return {"features": model.features_, "classes": list(model.classes_),
            "class_ids": dict(model._class_ids),
            "model": None if model.model_ is None else state_of(model.model_),
            "transform": None if model.transform is None else state_of(model.transform)}


def assert_same_learner(model, twin):
    """``model`` and ``twin`` hold the same :func:`river_state`, bit for bit."""
    assert_same(river_state(model), river_state(twin))


def trained_twins(*samples):
    """Two small learners that learned the same ``(x, y)`` / ``(x,)`` samples: a
    call refused by one must leave it equal to the other."""
    model, twin = small_model(), small_model()
    for learner in (model, twin):
        for sample in samples:
            learner.learn_one(*sample)
    return model, twin


@pytest.fixture(scope="module")
def phishing():
    return list(itertools.islice(datasets.Phishing(), 300))


def majority_rate(stream):
    labels = [y for _, y in stream]
    return max(labels.count(label) for label in set(labels)) / len(labels)


def test_progressive_val_score_beats_majority(phishing):
    model = small_model()
    score = evaluate.progressive_val_score(phishing, model, metrics.Accuracy())
    assert score.get() > majority_rate(phishing) + 0.1
    assert set(model.classes_) == {True, False}


def test_semi_supervised_wrapper_hides_labels(phishing):
    model = SemiSupervisedWrapper(small_model(), label_probability=0.1, seed=1)
    score = evaluate.progressive_val_score(phishing, model, metrics.Accuracy())
    assert model.n_seen == len(phishing)
    assert 0 < model.n_labeled < 0.2 * len(phishing)
    assert score.get() > majority_rate(phishing)


def test_a_rejected_call_leaves_the_label_draws_as_they_were():
    rng = np.random.default_rng(0)
    rows = [({"a": float(rng.normal()), "b": float(rng.normal())}, i % 2) for i in range(30)]
    clean = SemiSupervisedWrapper(small_model(), label_probability=0.5, seed=1)
    other = SemiSupervisedWrapper(small_model(), label_probability=0.5, seed=1)
    for i, (x, y) in enumerate(rows):
        if i == 5:
            with pytest.raises(ValueError, match="NaN"):
                other.learn_one({"a": float("nan"), "b": 0.0}, 1)
            assert_same(wrapper_state(other), wrapper_state(clean))
        clean.learn_one(x, y)
        other.learn_one(x, y)
    assert_same(wrapper_state(other), wrapper_state(clean))
    assert [other.predict_one(x) for x, _ in rows] == [clean.predict_one(x) for x, _ in rows]


def wrapper_state(wrapper):
    """A :class:`SemiSupervisedWrapper`'s label draws, counters and model's state."""
    return {"draws": wrapper._rng.bit_generator.state, "n_seen": wrapper.n_seen,
            "n_labeled": wrapper.n_labeled, "model": river_state(wrapper.model)}


class Recorder:
    """A River-like classifier that logs the labels it learns."""

    def __init__(self):
        self.learned = []

    def learn_one(self, x, y):
        self.learned.append(y)


def test_a_missing_label_takes_its_positions_draw_too():
    # the label mask is drawn for every position, so a position without a label does
    # not shift the draws of the positions after it
    labels = [None, 1, None, 0, 1, 0, 1, 0, 1, 0]
    draws = np.random.default_rng(1).random(len(labels)) < 0.5
    wrapper = SemiSupervisedWrapper(Recorder(), label_probability=0.5, seed=1,
                                    pass_unlabeled=True)
    for i, label in enumerate(labels):
        wrapper.learn_one({"a": float(i)}, label)
    assert wrapper.model.learned == [label if draw else None
                                     for label, draw in zip(labels, draws)]


def test_a_pipeline_ending_in_a_river_classifier_learns_unlabeled_positions():
    from river import preprocessing, tree

    for model, passes in ((preprocessing.StandardScaler() | small_model(), True),
                          (preprocessing.StandardScaler() | tree.HoeffdingTreeClassifier(),
                           False)):
        assert SemiSupervisedWrapper(model, label_probability=0.5)._pass is passes


def test_wrapper_mask_and_skip_for_supervised_models():
    from river import tree

    mask = [True, False, True, False]
    wrapper = SemiSupervisedWrapper(tree.HoeffdingTreeClassifier(), mask=mask)
    assert wrapper._pass is False
    for i in range(4):
        wrapper.learn_one({"a": float(i)}, i % 2)
    assert wrapper.n_labeled == 2
    with pytest.raises(ValueError, match="mask covers 4"):
        wrapper.learn_one({"a": 0.0}, 1)
    with pytest.raises(ValueError, match="exactly one"):
        SemiSupervisedWrapper(small_model())


def test_the_wrapper_refuses_a_mask_of_other_than_one_dimension_and_predicts_as_its_model():
    with pytest.raises(ValueError, match=r"^mask must be 1-D, got shape \(2, 1\)$"):
        SemiSupervisedWrapper(small_model(), mask=[[True], [False]])
    model, twin = trained_twins(({"a": 1.0}, 0), ({"a": -1.0}, 1))
    wrapper = SemiSupervisedWrapper(model, mask=[True])
    assert wrapper._multiclass
    assert wrapper.predict_proba_one({"a": 0.5}) == twin.predict_proba_one({"a": 0.5})


@pytest.mark.parametrize("flag", [1, 0, "no"])
def test_boolean_flags_refuse_other_truth_values(flag):
    # 1 or "no" would otherwise switch the flag on, 0 off, without a word
    message = f"must be a bool, got {type(flag).__name__}"
    with pytest.raises(TypeError, match="pass_unlabeled " + message):
        SemiSupervisedWrapper(small_model(), label_probability=0.5, pass_unlabeled=flag)
    with pytest.raises(TypeError, match="light " + message):
        RiverClassifier.sledge(2, light=flag)


@pytest.mark.parametrize("seed, error, message", [
    ("a", TypeError, "seed must be an integer, got str"),
    (1.5, TypeError, "seed must be an integer, got float"),
    (-1, ValueError, "seed must be >= 0, got -1"),
    (2 ** 64, ValueError, f"seed must be below 2\\*\\*64, got {2 ** 64}"),
])
def test_the_wrappers_seed_is_checked_naming_it(seed, error, message):
    # before: NumPy's "SeedSequence expects int ..." or "expected non-negative integer"
    with pytest.raises(error, match=f"^{message}$"):
        SemiSupervisedWrapper(small_model(), label_probability=0.5, seed=seed)


def test_the_wrappers_seed_none_draws_unseeded():
    # River's convention; before: "seed must be an integer, got NoneType"
    wrapper = SemiSupervisedWrapper(Recorder(), label_probability=0.5, seed=None,
                                    pass_unlabeled=True)
    assert wrapper.seed is None
    for i in range(100):
        wrapper.learn_one({"a": float(i)}, 1)
    assert wrapper.n_seen == 100 and 0 < wrapper.n_labeled < 100
    assert wrapper.model.learned.count(1) == wrapper.n_labeled


def test_learn_and_predict_one_with_unlabeled():
    model = small_model(num_classes=3)
    with pytest.raises(ValueError, match="the first sample has no features"):
        model.learn_one({}, "cat")
    assert model.features_ is None and model.model_ is None
    assert model.predict_one({"a": 1.0, "b": 0.0}) is None  # no class seen yet
    assert model.model_ is not None and model.model_.in_channels == 2
    model.learn_one({"a": 1.0, "b": 0.0}, "cat")
    model.learn_one({"a": 0.0, "b": 1.0})  # unlabeled
    model.learn_one({"b": 1.0, "a": 0.1}, "dog")  # key order does not matter
    model.learn_one({"a": 0.5, "b": 0.5}, None)
    proba = model.predict_proba_one({"a": 1.0, "b": 0.1})
    assert set(proba) == {"cat", "dog"}
    assert sum(proba.values()) == pytest.approx(1.0)
    assert model.predict_one({"a": 1.0, "b": 0.1}) in ("cat", "dog")
    assert model.features_ == ["a", "b"]


def missing_labels():
    labels = [float("nan"), np.float32("nan"), np.float64("nan")]
    try:
        import pandas
        labels.append(pandas.NA)
    except ImportError:  # pandas is River's dependency, but not ours
        pass
    return labels


@pytest.mark.parametrize("missing", missing_labels(), ids=repr)
def test_every_kind_of_missing_label_learns_unlabeled(missing):
    model, twin = small_model(num_classes=3), small_model(num_classes=3)
    for learner, label in ((model, missing), (twin, None)):
        learner.learn_one({"a": 1.0, "b": 0.0}, "cat")
        learner.learn_one({"a": 0.0, "b": 1.0}, "dog")
        learner.learn_one({"a": 0.2, "b": 0.7}, label)
        learner.learn_one({"a": 0.3, "b": 0.6}, label)
    assert model.classes_ == ["cat", "dog"]  # no NaN class, and no labeled slot for one
    for row in ({"a": 0.3, "b": 0.6}, {"a": 0.9, "b": 0.1}):
        assert model.predict_proba_one(row) == twin.predict_proba_one(row)


def test_too_many_classes_raise_and_leave_mapping_unchanged():
    model = small_model(num_classes=2)
    model.learn_one({"x": 1.0}, "a")
    model.learn_one({"x": -1.0}, "b")
    with pytest.raises(ValueError, match="unknown class 'c'"):
        model.learn_one({"x": 0.0}, "c")
    assert model.classes_ == ["a", "b"]
    fixed = RiverClassifier.sledge(num_classes=3, classes=["a", "b"], **SMALL)
    with pytest.raises(ValueError, match="unknown class"):
        fixed.learn_one({"x": 0.0}, "z")


def test_a_failing_call_changes_nothing_not_even_the_first_one():
    fresh, unused = (RiverClassifier.sledge(num_classes=2, classes=["x", "y"], **SMALL)
                     for _ in range(2))
    with pytest.raises(ValueError, match="unknown class 'q'"):
        fresh.learn_one({"p": 1.0}, "q")  # the first call: nothing fixed or built
    assert fresh.features_ is None and fresh.model_ is None
    assert_same_learner(fresh, unused)
    fresh.learn_one({"a": 1.0, "b": 2.0, "c": 3.0}, "x")
    assert fresh.features_ == ["a", "b", "c"] and fresh.model_.in_channels == 3

    model, twin = trained_twins(({"a": 1.0, "b": 0.0}, "cat"), ({"a": 0.0, "b": 1.0}, "dog"))
    with pytest.raises(ValueError, match="unknown class 'z'"):
        model.learn_one({"a": 100.0, "b": -100.0}, "z")  # would widen the scaler's range
    with pytest.raises(ValueError, match="NaN"):
        model.learn_one({"a": float("nan"), "b": 0.0}, "cat")
    model.predict_one({"a": 50.0, "b": -50.0})  # a prediction is read-only too
    assert_same_learner(model, twin)
    for row in ({"a": 0.3, "b": 0.6}, {"a": 0.9, "b": 0.1}):
        assert model.predict_proba_one(row) == twin.predict_proba_one(row)


def robust_twins(reservoir_size=20, clip=True):
    """Two small learners with the robust transform, equal after 30 rows (more than
    ``reservoir_size``: the reservoir's generator has drawn); ``clip=False``: an
    unbounded pipeline (the range unclipped, no L2 normalization after it)."""
    model, twin = (RiverClassifier.sledge(
        num_classes=2, input_scaling=None, **SMALL,
        transform=make_transform("robust", l2=clip, robust_options={
            "reservoir_size": reservoir_size, "clip": clip}))
        for _ in range(2))
    for x, y in itertools.islice(datasets.Phishing(), 30):
        for learner in (model, twin):
            learner.learn_one(x, y)
    return model, twin


@pytest.mark.parametrize("clip", [True, False])  # a bounded and an unbounded pipeline
def test_refused_calls_and_predictions_leave_the_robust_transform_as_it_was(clip):
    pd = pytest.importorskip("pandas")
    model, twin = robust_twins(clip=clip)
    x, y = next(iter(datasets.Phishing()))
    with pytest.raises(ValueError, match="unknown class 'z'"):
        model.learn_one(x, "z")  # refused after the transform took the row
    if not clip:  # refused by the transform's float32 check after it took the row,
        # undone by learn_one's own save of the state (the transform saves none there)
        with pytest.raises(ValueError, match="transformed rows.*beyond float32's range"):
            model.learn_one({key: 3e38 for key in x}, y)
    with pytest.raises(ValueError, match="unknown class 'z'"):
        model.learn_many(pd.DataFrame([x, x]), [y, "z"])
    model.predict_proba_one({key: 100.0 * value for key, value in x.items()})
    model.predict_proba_many(pd.DataFrame([x] * 3))
    with pytest.raises(ValueError, match="none of the"):
        model.predict_proba_one({"q": 1.0})
    assert_same_learner(model, twin)
    for row, label in itertools.islice(datasets.Phishing(), 30, 40):
        assert model.predict_proba_one(row) == twin.predict_proba_one(row)
        model.learn_one(row, label)
        twin.learn_one(row, label)
    assert_same_learner(model, twin)


@pytest.mark.parametrize("clip", [True, False])
def test_predictions_copy_the_robust_transform_once_and_learning_once(monkeypatch, clip):
    """The reservoir is copied once per call: a prediction transforms with a copy
    of the transform (before: four copies and a load), learning saves the state
    in case the learner refuses the row (an unbounded pipeline, before: again for
    its float32 check)."""
    from torch_geometric_stream.nn.scaling import RunningQuantileRange

    model, _ = robust_twins(clip=clip)
    copies = {"copied": 0, "loaded": 0}

    def counting(method, key):
        def counted(self, *args):
            copies[key] += 1
            return method(self, *args)
        return counted

    for name, key in (("get_extra_state", "copied"), ("__getstate__", "copied"),
                      ("set_extra_state", "loaded")):
        monkeypatch.setattr(RunningQuantileRange, name,
                            counting(getattr(RunningQuantileRange, name), key))
    rows = list(itertools.islice(datasets.Phishing(), 30, 33))
    for x, y in rows:
        model.predict_proba_one(x)
    assert copies == {"copied": 3, "loaded": 0}
    for x, y in rows:
        model.learn_one(x, y)
    assert copies == {"copied": 6, "loaded": 0}


def test_built_learner_and_bad_arguments():
    learner = build_model("sledge-light", 2, 2, **SMALL)
    model = RiverClassifier(learner, feature_names=["u", "v"])
    model.learn_one({"u": 1.0}, 1)  # missing key "v" counts as 0
    assert model.model_ is learner
    with pytest.raises(ValueError, match="3 features"):
        RiverClassifier(learner, feature_names=["u", "v", "w"])
    with pytest.raises(TypeError, match="StreamClassifier"):
        RiverClassifier(42)
    with pytest.raises(TypeError, match="transform must be a StreamTransform, got function"):
        RiverClassifier(learner, transform=lambda x: x)
    locked = OnlineMinMaxScaler()
    locked.lock = threading.Lock()  # copy.deepcopy cannot copy it: before, the first
    # prediction raised "cannot pickle '_thread.lock' object" from deep in copy
    with pytest.raises(TypeError, match=r"^OnlineMinMaxScaler\(.*\) cannot be deep-copied .*: "
                                        r"give OnlineMinMaxScaler a __deepcopy__"):
        RiverClassifier(learner, transform=locked)
    with pytest.raises(ValueError, match=r"classes must be distinct, got \['u', 'v', 'u'\]"):
        RiverClassifier(learner, classes=["u", "v", "u"])
    with pytest.raises(TypeError, match="dict"):
        model.learn_one([1.0, 2.0], 1)
    with pytest.raises(ValueError, match="feature 'v' must be a number, got 'high'"):
        model.learn_one({"u": 1.0, "v": "high"}, 1)


def test_more_classes_than_the_learner_has_or_a_factory_of_no_learner_are_refused():
    learner = build_model("sledge-light", 2, 2, **SMALL)
    with pytest.raises(ValueError, match="^3 classes given, the learner has 2$"):
        RiverClassifier(learner, classes=["a", "b", "c"])
    model = RiverClassifier(lambda features: 42)
    with pytest.raises(TypeError, match="^the factory returned int, not a StreamClassifier$"):
        model.learn_one({"u": 1.0}, 1)
    assert model.model_ is None and model.classes_ == []


def test_learn_many_refuses_labels_of_another_length_and_changes_nothing():
    pd = pytest.importorskip("pandas")
    model, twin = trained_twins(({"a": 1.0, "b": 0.0}, 0))
    with pytest.raises(ValueError, match="^X has 2 rows, y has 1 labels$"):
        model.learn_many(pd.DataFrame({"a": [1.0, 2.0], "b": [0.0, 1.0]}), pd.Series([1]))
    assert_same_learner(model, twin)


def test_rows_keyed_by_other_features_and_tables_that_are_no_frames_are_named():
    pd = pytest.importorskip("pandas")
    model, twin = trained_twins(({"a": 1.0, "b": 0.0}, "cat"), ({"a": 0.0, "b": 1.0}, "dog"))
    # before: learned (and predicted) as an all-zero row
    for row in ({"q": 1.0, "r": 2.0}, {}):
        with pytest.raises(ValueError, match="none of the 2 features fixed by the first "
                                             "sample \\('a', 'b'\\)"):
            model.learn_one(row, "cat")
        with pytest.raises(ValueError, match="none of the 2 features"):
            model.predict_proba_one(row)
    with pytest.raises(ValueError, match="X has none of the 2 features"):
        model.learn_many(pd.DataFrame({"q": [1.0], "r": [2.0]}), ["cat"])
    # before: AttributeError: 'list' object has no attribute 'columns'
    for table in ([{"a": 1.0, "b": 0.0}], np.ones((1, 2))):
        with pytest.raises(TypeError, match="X must be a pandas.DataFrame"):
            model.learn_many(table, ["cat"])
        with pytest.raises(TypeError, match="X must be a pandas.DataFrame"):
            model.predict_proba_many(table)
    model.learn_one({"a": 0.5}, "cat")  # one known feature is enough; "b" reads 0
    twin.learn_one({"a": 0.5, "b": 0.0}, "cat")
    assert_same_learner(model, twin)


def test_a_non_numeric_column_is_named_and_changes_nothing():
    pd = pytest.importorskip("pandas")
    model, twin = trained_twins(({"a": 1.0, "b": 0.0}, "cat"))
    frame = pd.DataFrame({"a": [0.5, 100.0], "b": [0.1, "n/a"]})
    with pytest.raises(ValueError, match="feature 'b' must be a number, got 'n/a'"):
        model.learn_many(frame, ["dog", "cat"])
    assert_same_learner(model, twin)
    assert model.classes_ == ["cat"]


def test_learn_many_and_predict_many(phishing):
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame([x for x, _ in phishing[:60]])
    y = pd.Series([y if i % 3 == 0 else None for i, (_, y) in enumerate(phishing[:60])],
                  dtype=object)
    model = small_model()
    model.learn_many(X, y)
    proba = model.predict_proba_many(X)
    assert list(proba.columns) == model.classes_ and proba.shape == (60, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-6)
    assert set(model.predict_many(X)) <= {True, False}
    # predicting rows beyond the range seen so far leaves the transform's state
    state = river_state(model)
    model.predict_proba_many(1000.0 * X)
    assert_same(river_state(model), state)


def test_learn_many_maps_a_new_class_that_repeats_to_its_first_id(monkeypatch):
    pd = pytest.importorskip("pandas")
    model = small_model(num_classes=3)
    model.learn_one({"x": 0.0}, "a")
    learned = []
    real_learn = model.model_.learn
    monkeypatch.setattr(model.model_, "learn",
                        lambda rows, ids: learned.append(list(ids)) or real_learn(rows, ids))
    model.learn_many(pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]}), ["b", "c", "b", "a"])
    assert learned == [[1, 2, 1, 0]] and model.classes_ == ["a", "b", "c"]


def test_the_order_of_a_dicts_keys_does_not_matter():
    # before: the first dict's key order fixed the input columns, so two models fed
    # the same rows with their keys in another order learned differently
    rng = np.random.default_rng(0)
    rows = [dict(zip("dcba", rng.normal(size=4).tolist())) for _ in range(40)]
    labels = [str(int(row["a"] > 0)) if i % 3 == 0 else None for i, row in enumerate(rows)]
    given, reversed_keys = small_model(), small_model()
    for row, label in zip(rows, labels):
        flipped = dict(reversed(list(row.items())))
        assert given.predict_proba_one(row) == reversed_keys.predict_proba_one(flipped)
        given.learn_one(row, label)
        reversed_keys.learn_one(flipped, label)
    assert given.features_ == reversed_keys.features_ == ["a", "b", "c", "d"]
    mixed = small_model()
    mixed.learn_one({"b": 1.0, 2: 0.5, "a": 0.0, 1: 2.0}, "x")  # keys that do not compare
    assert mixed.features_ == [1, 2, "a", "b"]


def test_river_estimator_checks_pass():
    pytest.importorskip("sklearn")  # River's checks draw datasets from scikit-learn
    from river import checks

    for params in RiverClassifier._unit_test_params():
        checks.check_estimator(RiverClassifier(**params))


class Table:
    """The part of a pandas.DataFrame that ``learn_many`` reads (pandas is optional)."""

    def __init__(self, data):
        self.data, self.columns = data, list(data)

    def __len__(self):
        return len(next(iter(self.data.values())))

    def __getitem__(self, name):
        return self.data[name]

    def reindex(self, columns, fill_value):
        return Table({name: self.data.get(name, [fill_value] * len(self)) for name in columns})

    def to_numpy(self, dtype=None):
        return np.array([self.data[name] for name in self.columns], dtype=dtype).T


def assert_refused_by_every_call(model, twin, value, error, message):
    """``learn_one``, ``predict_proba_one`` and ``learn_many`` refuse feature ``b``
    of ``value`` with ``error`` matching ``message``, and leave ``model`` equal to
    ``twin`` (:func:`trained_twins`)."""
    with pytest.raises(error, match=message):
        model.learn_one({"a": 0.5, "b": value}, "dog")
    with pytest.raises(error, match=message):
        model.predict_proba_one({"a": 0.5, "b": value})
    with pytest.raises(error, match=message):
        model.learn_many(Table({"a": [0.5, 50.0], "b": [0.1, value]}), ["dog", None])
    assert_same_learner(model, twin)


BEYOND_FLOAT32 = [(1e39, "1e\\+39"), (-3.5e38, "-3.5e\\+38"), (10 ** 400, "beyond")]


@pytest.mark.parametrize("value, shown", BEYOND_FLOAT32, ids=["1e39", "-3.5e38", "10**400"])
def test_a_finite_feature_beyond_float32_is_named_and_changes_nothing(value, shown):
    # before: cast to inf first, so the learner said "x contains NaN or inf values"
    message = f"feature 'b' is {shown}.*float32's range"
    fresh = small_model()
    with pytest.raises(ValueError, match=message):
        fresh.learn_one({"a": 0.0, "b": value}, "cat")
    assert fresh.features_ is None and fresh.model_ is None
    assert_same_learner(fresh, small_model())
    model, twin = trained_twins(({"a": 1.0, "b": 0.0}, "cat"), ({"a": 0.0, "b": 1.0},))
    assert_refused_by_every_call(model, twin, value, ValueError, message)
    largest = float(np.finfo(np.float32).max)  # the largest float32 itself is fine
    for learner in (model, twin):
        learner.learn_one({"a": 0.5, "b": largest}, "dog")
    assert model.predict_proba_one({"a": 0.5, "b": 0.5}) == twin.predict_proba_one(
        {"a": 0.5, "b": 0.5})


def test_an_unhashable_label_is_named_and_changes_nothing():
    # before: TypeError: unhashable type: 'list', which did not say the label was the problem
    message = "a label must be hashable .*got list \\[1\\]"
    fresh = small_model()
    with pytest.raises(TypeError, match=message):
        fresh.learn_one({"a": 1.0, "b": 0.0}, [1])
    assert fresh.features_ is None and fresh.model_ is None
    assert_same_learner(fresh, small_model())
    model, twin = trained_twins(({"a": 1.0, "b": 0.0}, "cat"))
    with pytest.raises(TypeError, match=message):
        model.learn_one({"a": 100.0, "b": -100.0}, [1])  # would widen the scaler's range
    with pytest.raises(TypeError, match=message):
        model.learn_many(Table({"a": [0.5, 50.0], "b": [0.1, 0.2]}), ["dog", [1]])
    assert_same_learner(model, twin)
    with pytest.raises(TypeError, match="a label must be hashable .*got dict"):
        RiverClassifier.sledge(num_classes=2, classes=["a", {"b": 1}], **SMALL)


def test_a_tensor_label_is_named_and_changes_nothing():
    # before: a tensor hashes by identity, so each torch.tensor(0) became a class of its own
    message = (r"^a label must be hashable by value \(a class name or id such as 1 or 'cat'\), "
               r"got a tensor tensor\(0\): pass label.item\(\)$")
    model, twin = small_model(num_classes=3), small_model(num_classes=3)
    for learner in (model, twin):
        learner.learn_one({"a": 1.0, "b": 0.0}, 0)
    for _ in range(2):
        with pytest.raises(TypeError, match=message):
            model.learn_one({"a": 100.0, "b": -100.0}, torch.tensor(0))
    with pytest.raises(TypeError, match=message):
        model.learn_many(Table({"a": [0.5, 50.0], "b": [0.1, 0.2]}), [1, torch.tensor(0)])
    assert_same_learner(model, twin)
    with pytest.raises(TypeError, match=message):
        RiverClassifier.sledge(num_classes=2, classes=[torch.tensor(0)], **SMALL)


def test_sledge_scales_raw_rows_by_default():
    # before: RiverClassifier.sledge fed River's raw rows to SLeDGe unscaled, so a
    # feature in thousands (a salary) outweighed the others in the cosine graph; the
    # command line scales such a stream (--scaling auto). A feature's unit and offset
    # must not change what the model learns.
    rng = np.random.default_rng(0)
    rows = [{"a": float(a), "b": float(b)} for a, b in rng.uniform(size=(30, 2))]
    labels = [str(int(row["a"] > row["b"])) if i % 3 == 0 else None
              for i, row in enumerate(rows)]
    raw = RiverClassifier.sledge(num_classes=2, **SMALL)
    rescaled = RiverClassifier.sledge(num_classes=2, **SMALL)
    for row, label in zip(rows, labels):
        raw.learn_one(row, label)
        rescaled.learn_one({"a": 1000.0 * row["a"] + 5.0, "b": row["b"]}, label)
    for row in rows[:10]:
        want = raw.predict_proba_one(row)
        got = rescaled.predict_proba_one({"a": 1000.0 * row["a"] + 5.0, "b": row["b"]})
        assert got == pytest.approx(want, abs=1e-4)
    assert raw.model_.input_scaling == "online"
    unscaled = RiverClassifier.sledge(num_classes=2, input_scaling=None, **SMALL)
    unscaled.learn_one(rows[0], labels[0])
    assert unscaled.model_.input_scaling is None


def test_sledge_light_keeps_the_command_lines_labeled_memory():
    # before: RiverClassifier.sledge(light=True) took SLeDGe's own light_memory,
    # "per-class" (one labeled slot per class), where the command line's package
    # default is "full"; on River's Phishing the class's one slot, merged with weights
    # that low cosines of scaled rows keep small, stayed near its first labels (running
    # accuracy 0.27-0.48 after 300 rows at 10 % labels). A class's second label now
    # gets a slot of its own.
    from torch_geometric_stream.cli.configs import DEFAULT_CONFIG

    rows = [{"a": 0.0, "b": 1.0}, {"a": 1.0, "b": 0.0}, {"a": 0.2, "b": 0.9}]
    labels = ["x", "y", "x"]
    fills = {}
    for light_memory in (None, "per-class"):
        extra = {} if light_memory is None else {"light_memory": light_memory}
        model = RiverClassifier.sledge(num_classes=2, light=True, **SMALL, **extra)
        for row, label in zip(rows, labels):
            model.learn_one(row, label)
        fills[light_memory] = model.model_.memory.fill_levels
    assert fills[None] == (2, 1, 0)  # 5 labeled slots per class: "x" twice, "y" once
    assert fills["per-class"] == (1, 1, 0)  # the second "x" merged into the first
    assert DEFAULT_CONFIG["light_memory"] == "full"


@pytest.mark.filterwarnings("error::RuntimeWarning")  # ComplexWarning is one
def test_a_complex_numpy_value_is_refused_not_cut_to_its_real_part():
    """Before: ``float(np.complex128(1 + 2j))`` gave 1.0 with only a NumPy
    ComplexWarning, and the row was learned with the imaginary part dropped."""
    model, twin = trained_twins(({"a": 1.0, "b": 0.0}, "cat"))
    value = np.complex128(1 + 2j)
    message = r"^feature 'b' must be a number, got "
    assert_refused_by_every_call(model, twin, value, ValueError, message)
    model.learn_one({"a": 0.5, "b": np.float64(0.25)}, "dog")  # a real NumPy value is one


@pytest.mark.filterwarnings("error::RuntimeWarning")  # ComplexWarning is one
def test_a_tensor_without_values_as_a_feature_is_named_and_changes_nothing():
    # before: RuntimeError: Tensor.item() cannot be called on meta tensors
    meta = torch.tensor(1.0, device="meta")
    message = r"^feature 'b' is on the 'meta' device, which holds no values"
    fresh = small_model()
    with pytest.raises(TypeError, match=message):
        fresh.learn_one({"a": 0.0, "b": meta}, "cat")
    assert fresh.features_ is None and fresh.model_ is None
    assert_same_learner(fresh, small_model())
    model, twin = trained_twins(({"a": 1.0, "b": 0.0}, "cat"))
    assert_refused_by_every_call(model, twin, meta, TypeError, message)
    # before: RuntimeError: value cannot be converted to type double without overflow
    assert_refused_by_every_call(model, twin, torch.tensor(1 + 2j), ValueError,
                                 r"^feature 'b' must be a number, got tensor\(1\.\+2\.j\)$")
    model.learn_one({"a": 0.5, "b": torch.tensor(0.25)}, "dog")  # a tensor with a value is one



def users_step():
    warnings.warn("the user's own once-per-location warning", UserWarning)


def test_a_row_leaves_the_warning_filters_alone():
    """Before: each row entered ``warnings.catch_warnings()``, which clears every
    module's warning registry, so a warning the user's code shows once per location
    (the "default" action) was shown again after every sample."""
    model = small_model()
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("default")
        for i in range(3):
            model.learn_one({"a": float(i), "b": 1.0}, "cat")
            model.predict_proba_one({"a": 0.5, "b": 0.5})
            model.learn_many(Table({"a": [0.5, 1.0], "b": [0.1, 0.2]}), ["cat", None])
            users_step()
    users = [warning for warning in shown if warning.filename == __file__]
    assert [str(warning.message) for warning in users] == [
        "the user's own once-per-location warning"]


@pytest.mark.parametrize("value, want", [
    (True, 1.0), (3, 3.0), (2 ** 53 + 1, float(2 ** 53 + 1)), (-(2 ** 63) + 1, -(2.0 ** 63)),
    (2 ** 64 + 1, float(2 ** 64 + 1)), (np.int64(2 ** 62 + 1), float(2 ** 62 + 1)),
    (np.uint64(2 ** 64 - 1), 2.0 ** 64), (np.float16(0.1), float(np.float16(0.1))),
    (np.float32(0.1), float(np.float32(0.1))), (0.1, 0.1), (torch.tensor(0.25), 0.25),
    (torch.tensor(0.1, dtype=torch.float64), 0.1), ("1.5", 1.5), (np.bool_(True), 1.0),
    pytest.param(torch.tensor(0.5, requires_grad=True), 0.5, marks=pytest.mark.filterwarnings(
        "ignore:Converting a tensor with requires_grad=True")), (torch.tensor([0.5]), 0.5),
])
def test_a_row_holds_each_accepted_value_as_float_would(value, want):
    """A row NumPy holds as real numbers is cast at once, any other value by value:
    both give the float32 of ``float(value)``, next to Python and NumPy values."""
    for neighbour in (0.5, np.float32(0.5), 2, np.int8(2)):
        model = small_model()
        model.learn_one({"a": neighbour, "b": value}, "cat")
        assert model._row({"a": neighbour, "b": value}, update=False).tolist() == \
            model.transform.transform_one(np.array([float(neighbour), want], np.float32),
                                          update=False).tolist()
        frame = Table({"a": [neighbour, neighbour], "b": [value, value]})
        assert model._rows(frame, update=False).tolist() == model.transform.transform_many(
            np.array([[float(neighbour), want]] * 2, np.float32), update=False).tolist()


@pytest.mark.parametrize("value, error, message", [
    (np.complex64(1 + 2j), ValueError, r"must be a number, got np\.complex64\(1\+2j\)$"),
    (np.complex128(1 + 0j), ValueError, r"must be a number, got np\.complex128\(1\+0j\)$"),
    (np.array(1 + 2j), ValueError, r"must be a number, got array\(1\.\+2\.j\)$"),
    (1 + 2j, ValueError, r"must be a number, got \(1\+2j\)$"),
    (None, ValueError, r"must be a number, got None$"),
    ("high", ValueError, r"must be a number, got 'high'$"),
    (10 ** 400, ValueError, r"is beyond float32's range"),
    (1e39, ValueError, r"is 1e\+39, beyond float32's range"),
    (torch.tensor(1.0, device="meta"), TypeError, r"is on the 'meta' device"),
])
def test_a_row_refuses_each_value_that_is_no_real_number(value, error, message):
    for neighbour in (0.5, np.float32(0.5)):
        model = small_model()
        model.learn_one({"a": 1.0, "b": 1.0}, "cat")  # builds the model (PyG's warnings)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # refused with no warning before
            with pytest.raises(error, match=r"^feature 'b' " + message):
                model.learn_one({"a": neighbour, "b": value}, "cat")
            with pytest.raises(error, match=r"^feature 'b' " + message):
                model.learn_many(Table({"a": [neighbour, 1.0], "b": [1.0, value]}),
                                 ["cat", None])

def test_a_feature_value_float_takes_skips_the_tensor_check(monkeypatch):
    # isinstance(value, torch.Tensor) goes through torch's metaclass: run for every value
    # it made a row of 784 features about 2x slower; now it runs for refused values only
    from torch_geometric_stream.integrations import river as river_module

    checked = []

    class Torch:
        @property
        def Tensor(self):
            checked.append(True)
            return torch.Tensor

    monkeypatch.setattr(river_module, "torch", Torch())
    values = [1.5, 2, np.float32(0.5), np.int64(3), torch.tensor(0.25)]
    assert [river_module._number("b", value) for value in values] == [1.5, 2.0, 0.5, 3.0, 0.25]
    assert checked == []
    with pytest.raises(ValueError, match="^feature 'b' must be a number, got 'high'$"):
        river_module._number("b", "high")
    assert checked == [True]


@pytest.mark.parametrize("feature_names, error, message", [
    # before: each accepted when the classifier was built
    ([], ValueError, r"^feature_names is empty: give at least one name, or None to take the "
                     r"first sample's keys$"),
    (["a", "b", "a"], ValueError, r"^feature_names must be distinct: 'a' is given twice$"),
    ("ab", TypeError, r"^feature_names must be a sequence of names, got the string 'ab'$"),
    (b"ab", TypeError, r"^feature_names must be a sequence of names, got the bytes b'ab'$"),
    (["a", ["b"]], TypeError, r"^feature_names must hold hashable names \(dict keys\), got "
                              r"list \['b'\]$"),
])
def test_bad_feature_names_are_refused_when_the_classifier_is_built(feature_names, error,
                                                                     message):
    with pytest.raises(error, match=message):
        RiverClassifier.sledge(num_classes=2, feature_names=feature_names, **SMALL)


@pytest.mark.parametrize("missing", [None, float("nan")])
def test_a_class_that_means_unlabeled_is_refused_when_the_classifier_is_built(missing):
    # before: accepted, though a label of None (or NaN) is learned unlabeled
    with pytest.raises(ValueError, match=rf"^classes\[1\] is {missing!r}, which means "
                                         r"unlabeled: give class names or ids$"):
        RiverClassifier.sledge(num_classes=2, classes=["x", missing], **SMALL)
    with pytest.raises(TypeError, match=r"^classes must be a sequence of names, got the string "
                                        r"'xy'$"):
        RiverClassifier.sledge(num_classes=2, classes="xy", **SMALL)


def test_a_frame_of_mixed_column_types_is_read_column_by_column_as_its_rows():
    """A bool column beside float ones makes the frame object-typed: its columns
    are read at once where NumPy holds them as numbers, value by value where not
    (an object column of floats and bools); the rows equal ``learn_one``'s."""
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [0.5, -1.25, 3.0], "b": [True, False, True], "c": [1, 2, 3],
                          "d": pd.Series([0.25, True, 2.0], dtype=object)})
    model, twin = small_model(num_classes=3), small_model(num_classes=3)
    model.learn_many(frame, ["x", None, "y"])
    for record, label in zip(frame.to_dict("records"), ["x", None, "y"]):
        twin.learn_one(record, label)
    assert_same_learner(model, twin)
    probe = {"a": 1.0, "b": False, "c": 2, "d": 0.5}
    assert model.predict_proba_one(probe) == twin.predict_proba_one(probe)


@pytest.mark.parametrize("dtype, missing", [("Int64", 2), ("Float64", 2.5), ("boolean", True)])
def test_a_missing_value_of_a_pandas_extension_column_is_named(dtype, missing):
    """A frame NumPy holds as objects (the bool column) is read column by column;
    an extension column's ``pd.NA`` is named as ``learn_one`` names it. Before
    (reading such a column at once): NaN, refused as 'x contains NaN or inf values'."""
    pd = pytest.importorskip("pandas")
    model, twin = small_model(), small_model()
    frame = pd.DataFrame({"a": pd.Series([missing, pd.NA], dtype=dtype), "b": [True, False]})
    with pytest.raises(ValueError, match="feature 'a' must be a number, got <NA>"):
        model.learn_many(frame, ["cat", None])
    with pytest.raises(ValueError, match="feature 'a' must be a number, got <NA>"):
        model.learn_one({"a": pd.NA, "b": True}, "cat")
    assert_same_learner(model, twin)
    assert model.classes_ == [] and model.features_ is None
