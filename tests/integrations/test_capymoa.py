"""CapyMOA adapter driven by CapyMOA's own prequential_ssl_evaluation."""
import threading
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("capymoa")
from capymoa.base import ClassifierSSL  # noqa: E402
from capymoa.evaluation import prequential_ssl_evaluation  # noqa: E402
from capymoa.stream import NumpyStream  # noqa: E402
from state_helpers import assert_same, state_of  # noqa: E402

from torch_geometric_stream.evaluation import OnlineMinMaxScaler  # noqa: E402
from torch_geometric_stream.integrations.capymoa import (CapyMOASLeDGe,  # noqa: E402
                                                         CapyMOASLeDGeLight)

SMALL = dict(hidden_channels=16, labeled_size=10, unlabeled_size=40)


@pytest.fixture(scope="module")
def stream():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 400)
    X = rng.normal(size=(3, 5))[y] * 3 + rng.normal(size=(400, 5))
    return NumpyStream(X, y, dataset_name="blobs")


@pytest.mark.parametrize("cls,name", [(CapyMOASLeDGe, "SLeDGe"), (CapyMOASLeDGeLight, "SLeDGe-L")])
def test_prequential_ssl_evaluation_above_chance(stream, cls, name):
    learner = cls(stream.get_schema(), **SMALL)
    assert isinstance(learner, ClassifierSSL) and str(learner) == name
    results = prequential_ssl_evaluation(stream, learner, label_probability=0.05,
                                         window_size=100, random_seed=1)
    assert results.other_metrics()["unlabeled_ratio"] > 0.9
    assert results.cumulative.accuracy() > 60.0  # chance is 33 %


def test_predict_proba_shape_and_seed(stream):
    schema = stream.get_schema()
    first = CapyMOASLeDGe(schema, random_seed=3, **SMALL)
    second = CapyMOASLeDGe(schema, random_seed=3, **SMALL)
    stream.restart()
    for instance in [stream.next_instance() for _ in range(20)]:
        for learner in (first, second):
            if instance.y_index == 0:
                learner.train(instance)
            else:
                learner.train_on_unlabeled(instance)
    proba = first.predict_proba(instance)
    assert proba.shape == (3,) and proba.sum() == pytest.approx(1.0)
    np.testing.assert_array_equal(proba, second.predict_proba(instance))
    assert first.predict(instance) == int(np.argmax(proba))
    with pytest.raises(TypeError, match="random_seed"):
        CapyMOASLeDGe(schema, seed=1)


def test_a_transform_is_refused_when_built_unless_a_prediction_can_copy_it(stream):
    schema = stream.get_schema()
    with pytest.raises(TypeError, match="transform must be a StreamTransform, got function"):
        CapyMOASLeDGe(schema, transform=lambda x: x)
    locked = OnlineMinMaxScaler()
    locked.lock = threading.Lock()  # what copy.deepcopy cannot copy
    with pytest.raises(TypeError, match=r"^OnlineMinMaxScaler\(.*\) cannot be deep-copied .*: "
                                        r"give OnlineMinMaxScaler a __deepcopy__"):
        CapyMOASLeDGe(schema, transform=locked)


def test_a_rejected_instance_or_a_prediction_changes_nothing_the_transform_included(stream):
    schema = stream.get_schema()
    learners = [CapyMOASLeDGe(schema, random_seed=3, transform=OnlineMinMaxScaler(), **SMALL)
                for _ in range(2)]
    stream.restart()
    instances = [stream.next_instance() for _ in range(30)]
    for learner in learners:
        learner.train(instances[0])
    wide = np.asarray(instances[1].x) * 100.0  # would widen the scaler's running range
    bad = [(learners[0].train, SimpleNamespace(x=wide, y_index=7), ValueError, "label 7"),
           (learners[0].train_on_unlabeled, SimpleNamespace(x=np.append(wide, 1.0), y_index=0),
            ValueError, "features"),
           (learners[0].predict_proba, SimpleNamespace(x=wide[:3], y_index=0), ValueError,
            "features"),
           (learners[0].train, SimpleNamespace(x=wide, y_index=-1), ValueError,
            "train needs a labelled instance, got y_index=-1")]
    for call, instance, error, match in bad:
        with pytest.raises(error, match=match):
            call(instance)
    learners[0].predict_proba(SimpleNamespace(x=wide, y_index=0))  # predicting changes nothing
    assert_same(*({"model": state_of(learner.model), "transform": state_of(learner.transform)}
                  for learner in learners))
    for instance in instances[1:]:
        probas = [learner.predict_proba(instance) for learner in learners]
        np.testing.assert_array_equal(probas[0], probas[1])
        for learner in learners:
            learner.train_on_unlabeled(instance)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_class_metrics_kappas_equal_capymoa_evaluator(stream, seed):
    from capymoa.evaluation import ClassificationEvaluator

    from torch_geometric_stream.evaluation import class_metrics

    rng = np.random.default_rng(seed)
    labels = rng.choice(3, size=400, p=[0.6, 0.3, 0.1])
    if seed == 2:
        labels = np.sort(labels)  # long runs of one class: the no-change reference is strong
    predictions = np.where(rng.random(400) < 0.6, labels, rng.integers(0, 3, 400))
    evaluator = ClassificationEvaluator(schema=stream.get_schema())
    for label, prediction in zip(labels.tolist(), predictions.tolist()):
        evaluator.update(label, prediction)
    ours = class_metrics(labels, predictions)
    assert 100 * ours["kappa"] == pytest.approx(evaluator.kappa())
    assert 100 * ours["kappa_m"] == pytest.approx(evaluator.kappa_m())
    assert 100 * ours["kappa_t"] == pytest.approx(evaluator.kappa_t())


class _RecordingLearner(ClassifierSSL):
    """Predicts class 0 and records which instances CapyMOA's evaluator labels."""

    def __init__(self, schema):
        super().__init__(schema=schema, random_seed=1)
        self.labeled = []

    def __str__(self):
        return "recording"

    def train(self, instance):
        self.labeled.append(True)

    def train_on_unlabeled(self, instance):
        self.labeled.append(False)

    def predict_proba(self, instance):
        return np.eye(self.schema.get_num_classes())[0]


@pytest.mark.parametrize("probability, seed", [(0.05, 1), (0.3, 7), (0.01, 2000)])
def test_capymoa_label_mask_labels_what_capymoa_s_evaluator_labels(stream, probability, seed):
    from torch_geometric_stream.evaluation import capymoa_label_mask

    learner = _RecordingLearner(stream.get_schema())
    prequential_ssl_evaluation(stream, learner, label_probability=probability,
                               random_seed=seed, optimise=False, window_size=100)
    expected = capymoa_label_mask(400, probability, seed)
    assert expected.any()
    np.testing.assert_array_equal(np.array(learner.labeled), expected)


def test_sledge_scales_raw_rows_and_sledge_light_keeps_the_full_labeled_memory():
    # before: the learners took SLeDGe's own input_scaling=None and light_memory=
    # "per-class", where the command line (and RiverClassifier.sledge) scale a raw
    # stream and keep SLeDGe-L's whole labeled memory: a feature's unit changed what
    # SLeDGe learned, and a class's labels merged into one slot
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(30, 2))
    y = (X[:, 0] > X[:, 1]).astype(int)
    stretched = X * [1000.0, 1.0] + [5.0, 0.0]
    learners = []
    for features in (X, stretched):
        stream = NumpyStream(features, y, dataset_name="units")
        learner = CapyMOASLeDGe(stream.get_schema(), **SMALL)
        for _ in range(len(y)):
            instance = stream.next_instance()
            learner.train(instance) if instance.y_index == 0 else \
                learner.train_on_unlabeled(instance)
        learners.append((learner, stream))
    (raw, raw_stream), (wide, wide_stream) = learners
    raw_stream.restart(), wide_stream.restart()
    for _ in range(10):
        np.testing.assert_allclose(wide.predict_proba(wide_stream.next_instance()),
                                   raw.predict_proba(raw_stream.next_instance()), atol=1e-4)
    light = CapyMOASLeDGeLight(NumpyStream(X[:3], np.array([0, 1, 0])).get_schema(), **SMALL)
    stream = NumpyStream(X[:3], np.array([0, 1, 0]))
    for _ in range(3):
        light.train(stream.next_instance())
    assert light.model.memory.fill_levels[:2] == (2, 1)  # class 0 twice, class 1 once


@pytest.mark.parametrize("flag", [1, 0, "no"])
def test_light_refuses_other_truth_values(stream, flag):
    # "no" would otherwise build SLeDGe-L, 0 SLeDGe, without a word
    with pytest.raises(TypeError, match=f"light must be a bool, got {type(flag).__name__}"):
        CapyMOASLeDGe(stream.get_schema(), light=flag, **SMALL)
