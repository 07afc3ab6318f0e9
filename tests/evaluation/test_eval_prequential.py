import copy
import csv
import importlib
import json
import math
import re
import time
import tracemalloc
from array import array

import numpy as np
import pytest
import torch

from torch_geometric_stream.base import StreamClassifier
from torch_geometric_stream.evaluation import (
    HISTORIES,
    FusedStreamLearner,
    L2Normalize,
    OnlineMinMaxScaler,
    PrequentialRecord,
    PrequentialResult,
    check_plot_path,
    make_transform,
    paper_label_mask,
    plot_curves,
    StreamLearner,
    prequential,
)
from torch_geometric_stream.ops import flushes_denormal
from state_helpers import assert_same


class NearestClassMean(StreamClassifier):
    """Nearest class mean over the labeled rows seen so far; class 0 before any label."""

    def __init__(self, in_channels: int, num_classes: int) -> None:
        self.in_channels, self.num_classes = in_channels, num_classes
        self.sums = torch.zeros(num_classes, in_channels)
        self.counts = torch.zeros(num_classes)

    def _predict_proba(self, x):
        seen = self.counts > 0
        means = self.sums / self.counts.clamp_min(1).unsqueeze(1)
        distance = torch.cdist(x, means).masked_fill(~seen, float("inf"))
        return torch.softmax(-distance, dim=-1).nan_to_num(1.0 / self.num_classes)

    def _learn(self, x, y):
        labeled = y >= 0
        self.sums.index_add_(0, y[labeled], x[labeled])
        self.counts += torch.bincount(y[labeled], minlength=self.num_classes)


class PreviousLabel:
    """Duck-typed learner: predicts the last label it learned (0 at first); logs its calls."""

    def __init__(self) -> None:
        self.last = 0
        self.seen_x, self.learned = [], []

    def predict(self, x):
        self.seen_x.append(x)
        return self.last

    def learn(self, x, y=None):
        self.learned.append(y)
        if y != -1:
            self.last = y


LABELS = [0, 0, 1, 1, 0, 1]
X = np.array([[0.0], [0.1], [1.0], [0.9], [0.05], [1.1]])


def stream(labels=LABELS, features=None):
    features = np.zeros((len(labels), 1)) if features is None else features
    return list(zip(features, labels))


def test_exact_correctness_previous_label():
    result = prequential(PreviousLabel(), stream(), progress=False)
    # Predictions 0 0 0 1 1 0 against labels 0 0 1 1 0 1.
    assert result.predictions.tolist() == [0, 0, 0, 1, 1, 0]
    assert result.correct.tolist() == [True, True, False, True, False, False]
    assert result.correct.dtype == bool and result.predictions.dtype == np.int64
    assert result.metrics["accuracy"] == pytest.approx(0.5)
    assert result.metrics["n_labels"] == 6 and result.metrics["n_samples"] == 6
    assert result.metrics["seconds"] > 0 and result.metrics["peak_memory_mb"] > 0


def test_exact_correctness_stream_classifier():
    learner = NearestClassMean(in_channels=1, num_classes=2)
    result = prequential(learner, stream(features=X), progress=False)
    # The first class-1 sample is predicted 0: class 1 has no mean yet.
    assert result.correct.tolist() == [True, True, False, True, True, True]


def test_mask_respected_and_unlabeled_passed_as_minus_one():
    mask = np.array([True, False, True, False, False, True])
    learner = PreviousLabel()
    result = prequential(learner, stream(), label_mask=mask, progress=False)
    assert learner.learned == [0, -1, 1, -1, -1, 1]
    assert result.labeled.tolist() == mask.tolist()
    assert result.metrics["n_labels"] == 3
    assert result.labels.tolist() == LABELS  # every sample is scored, labeled or not

    learner = PreviousLabel()
    prequential(learner, stream(), label_mask=lambda position: position % 3 == 0,
                progress=False)
    assert learner.learned == [0, -1, -1, 1, -1, -1]


def test_a_mask_function_returns_a_bool_and_anything_else_is_named():
    """``lambda t: t % 3`` (``== 0`` forgotten) would label two samples in three."""
    learned = []
    for labeled in (lambda t: np.bool_(t % 3 == 0), lambda t: torch.tensor(t % 3 == 0)):
        learner = PreviousLabel()
        prequential(learner, stream(), label_mask=labeled, progress=False)
        learned.append(learner.learned)
    assert learned == [[0, -1, -1, 1, -1, -1]] * 2
    transform = OnlineMinMaxScaler()
    for labeled, kind in ((lambda t: t % 3, "int"), (lambda t: "no", "str"),
                          (lambda t: torch.tensor([True, False]), "Tensor")):
        with pytest.raises(TypeError, match=f"label_mask\\(0\\) must be a bool, got {kind}"):
            prequential(PreviousLabel(), stream(), label_mask=labeled, transform=transform,
                        progress=False)
    assert transform.state_dict() == OnlineMinMaxScaler().state_dict()  # the row not seen


def test_paper_mask_with_nearest_class_mean():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 3, size=600)
    features = np.eye(3)[labels] + rng.normal(scale=0.1, size=(600, 3))
    mask = paper_label_mask(labels, 0.01, seed=0)
    learner = NearestClassMean(in_channels=3, num_classes=3)
    result = prequential(learner, stream(labels, features), label_mask=mask,
                         transform=make_transform(), progress=True)
    assert result.metrics["n_labels"] == 6
    assert result.metrics["accuracy"] > 0.9


def test_transform_applied_before_learner():
    learner = PreviousLabel()
    prequential(learner, stream(features=np.array([[3.0, 4.0]] * 6)), transform=L2Normalize(),
                progress=False)
    assert all(torch.allclose(x, torch.tensor([0.6, 0.8])) for x in learner.seen_x)


def test_limit_and_start():
    mask = np.array([True, False, True, False, False, True])
    learner = PreviousLabel()
    result = prequential(learner, stream(), label_mask=mask, limit=4, progress=False)
    assert result.metrics["n_samples"] == 4 and learner.learned == [0, -1, 1, -1]

    learner = PreviousLabel()
    result = prequential(learner, iter(stream()), label_mask=mask, start=3, progress=False)
    assert learner.learned == [-1, -1, 1]  # mask positions 3, 4, 5
    assert result.start == 3 and result.positions.tolist() == [3, 4, 5]
    assert result.labels.tolist() == [1, 0, 1]

    result = prequential(PreviousLabel(), stream(), start=2, limit=4, progress=False)
    assert result.positions.tolist() == [2, 3]


def test_callback_every_sample():
    calls = []

    def callback(position, record):
        calls.append((position, record.metrics.n_samples, record.n_labels))
        if position == 3:
            snapshot = record.result()
            # Labels 0 1 1, predictions 0 0 1.
            assert snapshot.correct.tolist() == [True, False, True]
            assert snapshot.positions.tolist() == [1, 2, 3]

    prequential(PreviousLabel(), stream(), callback=callback, start=1, progress=False)
    assert calls == [(1, 1, 1), (2, 2, 2), (3, 3, 3), (4, 4, 4), (5, 5, 5)]



@pytest.mark.parametrize("history", ["full", "bounded"])
def test_stop_ends_the_run_after_the_sample_it_says_so_reading_no_further(history):
    read, calls = [], []

    def samples():
        for position, sample in enumerate(stream()):
            read.append(position)
            yield sample

    def stop():
        calls.append(len(read))
        return len(read) == 4  # after the sample at position 3

    learner = PreviousLabel()
    result = prequential(learner, samples(), start=1, stop=stop, progress=True,
                         progress_every=60, history=history)
    assert read == [0, 1, 2, 3] and calls == [2, 3, 4]  # asked after each sample, none read after
    assert learner.learned == [0, 1, 1]  # positions 1, 2, 3, each learned whole
    assert (result.start, result.metrics["n_samples"], result.metrics["accuracy"]) == (
        1, 3, pytest.approx(2 / 3))  # labels 0 1 1, predictions 0 0 1


@pytest.mark.skipif(not torch.set_flush_denormal(False), reason="this CPU cannot flush denormals")
@pytest.mark.parametrize("flush", [True, False])
def test_the_learner_steps_with_denormals_flushed_unless_asked_not_to(flush):
    class Probe(PreviousLabel):
        def learn(self, x, y=None):
            flushing.append(flushes_denormal())
            super().learn(x, y)

    flushing = []
    torch.set_flush_denormal(False)
    prequential(Probe(), stream(), progress=False, flush_denormal=flush)
    assert flushing == [flush] * len(LABELS)
    assert not flushes_denormal()  # the process's setting is back


def test_errors():
    with pytest.raises(ValueError, match="stream is empty"):
        prequential(PreviousLabel(), [], progress=False)
    with pytest.raises(ValueError, match="stream is empty"):
        prequential(PreviousLabel(), stream(), start=6, progress=False)
    with pytest.raises(ValueError, match="label_mask has 3 entries but the stream is longer"):
        prequential(PreviousLabel(), iter(stream()), label_mask=np.ones(3, dtype=bool),
                    progress=False)
    with pytest.raises(TypeError, match="boolean"):
        prequential(PreviousLabel(), stream(), label_mask=np.ones(6, dtype=int), progress=False)
    with pytest.raises(ValueError, match="start"):
        prequential(PreviousLabel(), stream(), start=-1, progress=False)
    with pytest.raises(TypeError, match="y at stream position 0 must be one integer"):
        prequential(PreviousLabel(), [(np.zeros(1), 0.5)], progress=False)


@pytest.mark.parametrize("kwargs, message", [
    ({"callback": 5}, "callback must be callable or None, got int"),
    ({"stop": "yes"}, "stop must be callable or None, got str"),
    ({"transform": 5}, "transform must be callable or None, got int"),
    ({"initial": "abc"}, "initial must be a mapping (a record state) or None, got str"),
    ({"stream": 5}, "stream must be an iterable of (x, y) pairs, got int"),
    ({"stream": "0a1b"}, "stream must be an iterable of (x, y) pairs, got str"),
    # before: a truthy "no" showed the bar, or flushed denormals; desc=5 was shown as "5"
    ({"progress": "no"}, "progress must be a bool, got str"),
    ({"progress": None}, "progress must be a bool, got NoneType"),
    ({"flush_denormal": "no"}, "flush_denormal must be a bool, got str"),
    ({"flush_denormal": 0}, "flush_denormal must be a bool, got int"),
    ({"desc": 5}, "desc must be a string or None, got int"),
    ({"desc": 5, "progress": True, "progress_every": 1.0}, "desc must be a string or None, got int"),
])
def test_an_argument_of_another_type_is_refused_before_the_first_sample(kwargs, message):
    """Before, a callback or stop that is not callable failed after the first
    sample was learned, and initial='abc' raised an AttributeError."""
    learner = PreviousLabel()
    options = {"stream": stream(), "progress": False, **kwargs}
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        prequential(learner, options.pop("stream"), **options)
    assert learner.learned == [] and learner.seen_x == []


@pytest.mark.parametrize("label, dtype", [(torch.tensor(1.7), "torch.float32"),
                                          (torch.tensor(True), "torch.bool"),
                                          (torch.tensor([1.0], dtype=torch.float64),
                                           "torch.float64")])
def test_a_float_or_bool_tensor_label_is_refused_not_truncated(label, dtype):
    learner = NearestClassMean(1, 2)
    with pytest.raises(TypeError, match=f"y at stream position 1 must be an integer class "
                                        f"id, got a {dtype} tensor"):
        prequential(learner, [(X[0], 0), (X[1], label)], progress=False)
    assert learner.counts.tolist() == [1.0, 0.0]  # the sample before it, and no more
    result = prequential(NearestClassMean(1, 2), [(X[0], torch.tensor(1, dtype=torch.int32))],
                         progress=False)
    assert result.labels.tolist() == [1]


class ConstantPrediction(PreviousLabel):
    """Duck-typed learner with 3 classes that always predicts ``value``."""

    num_classes = 3

    def __init__(self, value) -> None:
        super().__init__()
        self.value = value

    def predict(self, x):
        super().predict(x)
        return self.value


@pytest.mark.parametrize("value", [3, -1, 10 ** 12])
def test_a_prediction_outside_the_classes_stops_the_run_at_its_sample(value):
    learner = ConstantPrediction(value)
    with pytest.raises(ValueError, match=f"the prediction at stream position 0 must be a "
                                         f"class id >= 0 and < num_classes=3, got {value}"):
        prequential(learner, stream(), progress=False)
    assert learner.learned == []  # refused before the learner learned the sample


def test_a_float_prediction_is_refused():
    with pytest.raises(TypeError, match="the prediction at stream position 0 must be an "
                                        "integer class id, got a torch.float32 tensor"):
        prequential(ConstantPrediction(torch.tensor(1.0)), stream(), progress=False)


@pytest.mark.parametrize("bad", [-1, 7])
def test_a_bad_stream_label_stops_the_run_at_its_sample(bad):
    # at an unlabeled position too: every sample is scored against its label
    learner, seen = NearestClassMean(1, 2), []
    labels = [0, 1, 0, bad, 1]
    mask = np.array([True, True, False, False, False])
    with pytest.raises(ValueError, match=f"y at stream position 3 must be a class id >= 0 "
                                         f"and < num_classes=2, got {bad}"):
        prequential(learner, stream(labels, X[:5]), label_mask=mask, progress=False,
                    callback=lambda position, record: seen.append(position))
    assert seen == [0, 1, 2]  # the learner never saw position 3
    assert learner.counts.tolist() == [1.0, 1.0]


def test_a_bad_stream_label_leaves_the_transform_as_it_was():
    transform = make_transform("online")
    prequential(NearestClassMean(1, 2), stream([0, 1], X[:2]), transform=transform, progress=False)
    before = copy.deepcopy(transform.state_dict()["0"])
    with pytest.raises(ValueError, match="y at stream position 0 must be a class id"):
        prequential(NearestClassMean(1, 2), [(X[0] + 100.0, 7)], transform=transform,
                    progress=False)
    after = transform.state_dict()["0"]
    assert after.keys() == before.keys()
    assert all(torch.equal(after[key], before[key]) for key in ("min", "max"))
    assert after["feature_range"] == before["feature_range"]


@pytest.mark.parametrize("item, got", [((np.zeros(1), 0, True), "tuple of length 3"),
                                       ([np.zeros(1)], "list of length 1"),
                                       (np.zeros(3), "ndarray of shape (3,)"),
                                       (5, "int")])
def test_a_stream_item_that_is_no_pair_is_named_with_its_position(item, got):
    # before: Python's bare "too many values to unpack (expected 2)", without a position
    learner = PreviousLabel()
    with pytest.raises(TypeError, match=re.escape(f"stream item at position 1 must be an "
                                                  f"(x, y) pair, got {got}")):
        prequential(learner, [(np.zeros(1), 0), item], progress=False)
    assert learner.learned == [0]


@pytest.mark.parametrize("batch", [np.zeros((2, 1)), torch.zeros(3, 1)])
def test_a_batch_in_the_stream_is_refused_before_the_learner_sees_it(batch):
    # before: the learner took both rows, and the run blamed its prediction of shape (2,)
    learner = PreviousLabel()
    with pytest.raises(ValueError, match=f"^x at stream position 0 holds {len(batch)} rows; "
                                         f"prequential steps one row at a time$"):
        prequential(learner, [(batch, 0)], progress=False)
    assert learner.seen_x == [] and learner.learned == []
    # one row as (1, d) is one sample still
    assert prequential(learner, [(batch[:1], 0)], progress=False).metrics["n_samples"] == 1


@pytest.mark.parametrize("scaling", ["online", "robust"])
def test_a_first_row_the_learner_refuses_leaves_the_transform_as_it_was(scaling):
    """The transform took the 3-wide row before the 2-feature learner refused it:
    it then refused every 2-wide row ("the scaler has seen 3")."""
    rows, wide = np.array([[0.0, 1.0], [2.0, -1.0], [1.0, 5.0]]), np.ones(3)
    transform, fresh = make_transform(scaling), make_transform(scaling)
    before = copy.deepcopy(transform.state_dict())
    learner = NearestClassMean(2, 2)
    with pytest.raises(ValueError, match="x has 3 features, expected 2"):
        prequential(learner, [(wide, 0)], transform=transform, progress=False)
    assert_same(transform.state_dict(), before)
    assert learner.counts.tolist() == [0.0, 0.0]
    ran = prequential(learner, stream([0, 1, 1], rows), transform=transform, progress=False)
    again = prequential(NearestClassMean(2, 2), stream([0, 1, 1], rows), transform=fresh,
                        progress=False)
    assert ran.predictions.tolist() == again.predictions.tolist()
    assert_same(transform.state_dict(), fresh.state_dict())
    # a transform fitted on 3-wide rows by an earlier run: the same at a run's first row
    transform = make_transform(scaling)
    prequential(NearestClassMean(3, 2), [(wide, 0), (-wide, 1)], transform=transform,
                progress=False)
    before = copy.deepcopy(transform.state_dict())
    with pytest.raises(ValueError, match="x has 3 features, expected 2"):
        prequential(NearestClassMean(2, 2), [(2 * wide, 0)], transform=transform,
                    progress=False)
    assert_same(transform.state_dict(), before)


def test_an_error_after_the_first_row_was_learned_keeps_it_in_the_transform():
    # the learner took the row: the transform must keep it too
    transform, fresh = make_transform("online"), make_transform("online")
    fresh(X[0])

    def fail(position, record):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        prequential(NearestClassMean(1, 2), stream([0], X[:1]), transform=transform,
                    callback=fail, progress=False)
    assert_same(transform.state_dict(), fresh.state_dict())


def test_a_mask_shorter_than_a_stream_with_a_length_stops_before_the_first_sample():
    learner, short = PreviousLabel(), np.ones(3, dtype=bool)
    with pytest.raises(ValueError, match="label_mask has 3 entries but the stream has 6 samples$"):
        prequential(learner, stream(), label_mask=short, progress=False)
    with pytest.raises(ValueError, match=r"the stream has 4 samples \(limit=4\)"):
        prequential(learner, stream(), label_mask=short, limit=4, progress=False)
    assert learner.seen_x == [] and learner.learned == []
    result = prequential(learner, stream(), label_mask=short, limit=3, progress=False)
    assert result.metrics["n_samples"] == 3
    # without a length, a limit beyond the stream's end is no claim about its length
    result = prequential(PreviousLabel(), iter(stream()), label_mask=np.ones(6, dtype=bool),
                         limit=10, progress=False)
    assert result.metrics["n_samples"] == 6


class ThreeClassPreviousLabel(PreviousLabel):
    """:class:`PreviousLabel` with 3 classes."""

    num_classes = 3


@pytest.mark.parametrize("history", HISTORIES)
def test_the_class_metrics_cover_every_class_of_the_learner(history):
    # labels 0 0 1 1 0 1, predicted 0 0 0 1 1 0; class 2 never seen nor predicted
    # (before: a 2 x 2 matrix, whose rows a reader could not tell from the classes')
    result = prequential(ThreeClassPreviousLabel(), stream(), history=history, progress=False)
    assert result.metrics["confusion_matrix"] == [[2, 1, 0], [2, 1, 0], [0, 0, 0]]
    assert result.metrics["recall_per_class"] == [2 / 3, 1 / 3, None]
    unsized = prequential(PreviousLabel(), stream(), history=history, progress=False).metrics
    assert unsized["confusion_matrix"] == [[2, 1], [2, 1]]
    apart = ("seconds", "peak_memory_mb", "ms_per_sample_median", "ms_per_sample_p95",
             "confusion_matrix", "recall_per_class")  # the timings and the two sized ones
    assert {key: value for key, value in unsized.items() if key not in apart} == {
        key: value for key, value in result.metrics.items() if key not in apart}


@pytest.mark.parametrize("history", HISTORIES)
def test_a_resumed_run_refuses_a_record_of_more_classes_than_the_learner(history):
    state = _record(0, [0, 3], history=history).state_dict()
    with pytest.raises(ValueError, match="initial holds class id 3, but the learner has "
                                         "num_classes=3: resume with a learner"):
        prequential(ThreeClassPreviousLabel(), stream(), progress=False, start=2,
                    initial=state, history=history)


@pytest.mark.parametrize("num_classes", [np.int64(3), torch.tensor(3)])
def test_a_learner_whose_num_classes_is_an_integer_tensor_sizes_the_record(num_classes):
    # a module keeping num_classes as a buffer; before: "num_classes must be an
    # integer, got Tensor" before the first sample
    learner = PreviousLabel()
    learner.num_classes = num_classes
    result = prequential(learner, stream(), progress=False)
    assert np.array(result.metrics["confusion_matrix"]).shape == (3, 3)  # classes 0, 1 seen
    with pytest.raises(ValueError, match="^y at stream position 2 must be a class id >= 0 "
                                         "and < num_classes=3, got 3$"):
        prequential(learner, stream([0, 1, 3]), progress=False)
    learner.last = 5  # predicted next
    with pytest.raises(ValueError, match="^the prediction at stream position 0 must be a "
                                         "class id >= 0 and < num_classes=3, got 5$"):
        prequential(learner, stream(), progress=False)


def test_a_learner_whose_num_classes_is_a_float_runs_sized_by_the_classes_seen():
    # as before the record knew the learner's classes; before: "num_classes must be an
    # integer, got float" before the first sample
    learner = PreviousLabel()
    learner.num_classes = 3.0
    result = prequential(learner, stream(), progress=False)
    assert np.array(result.metrics["confusion_matrix"]).shape == (2, 2)
    with pytest.raises(ValueError, match="^y at stream position 2 must be a class id >= 0 "
                                         "and < num_classes=3.0, got 3$"):
        prequential(learner, stream([0, 1, 3]), progress=False)


def test_a_learner_without_num_classes_gets_any_label_from_zero():
    result = prequential(PreviousLabel(), stream([0, 5, 5]), progress=False)
    assert result.labels.tolist() == [0, 5, 5] and result.correct.tolist() == [True, False, True]


@pytest.fixture
def result() -> PrequentialResult:
    mask = np.array([True, False, True, False, False, True])
    return prequential(PreviousLabel(), stream(), label_mask=mask, start=0, progress=False)


def test_save_json(result, tmp_path):
    path = result.save_json(tmp_path / "run.json", extra={"dataset": "toy", "seed": 0})
    payload = json.loads(path.read_text())
    assert payload["dataset"] == "toy" and payload["start"] == 0
    assert payload["metrics"] == result.metrics  # JSON keeps floats exactly
    assert "correct" not in payload
    payload = json.loads(result.save_json(tmp_path / "full.json", arrays=True).read_text())
    assert payload["predictions"] == result.predictions.tolist()
    with pytest.raises(ValueError, match="metrics"):
        result.save_json(tmp_path / "bad.json", extra={"metrics": 1})


def test_save_csv(result, tmp_path):
    with result.save_csv(tmp_path / "run.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [int(row["index"]) for row in rows] == list(range(6))
    assert [int(row["label"]) for row in rows] == LABELS
    assert [int(row["prediction"]) for row in rows] == result.predictions.tolist()
    assert [bool(int(row["correct"])) for row in rows] == result.correct.tolist()
    assert [int(row["labeled"]) for row in rows] == [1, 0, 1, 0, 0, 1]


def test_plot(result, tmp_path):
    pytest.importorskip("matplotlib")
    path = result.plot(tmp_path / "run.png", label="previous label")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_curves_from_stored_records(tmp_path):
    pytest.importorskip("matplotlib")
    curves = {"a": ([1, 2, 3], [1.0, 0.5, 0.67]), "b": ([1, 2, 3], [0.0, 0.5, 0.33])}
    path = plot_curves(curves, tmp_path / "curves.png", title="two runs")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_format_follows_the_suffix_and_an_unknown_one_is_refused(tmp_path):
    pytest.importorskip("matplotlib")
    curves = {"a": ([1, 2, 3], [1.0, 0.5, 0.67])}
    assert plot_curves(curves, tmp_path / "curves.svg").read_text().lstrip().startswith("<?xml")
    with pytest.raises(ValueError, match=r"cannot plot to .*curves\.txt: matplotlib writes .*"
                                         r"png.* not 'txt'"):
        plot_curves(curves, tmp_path / "curves.txt")
    assert not (tmp_path / "curves.txt").exists()
    assert check_plot_path(tmp_path / "CURVES.PDF") == tmp_path / "CURVES.PDF"
    assert check_plot_path(tmp_path / "curves") == tmp_path / "curves"  # no suffix: PNG


def test_an_image_format_given_overrides_the_suffix_and_is_checked(tmp_path):
    """What ``run`` writes a partial plot (``run.svg.partial``) with."""
    pytest.importorskip("matplotlib")
    curves = {"a": ([1, 2, 3], [1.0, 0.5, 0.67])}
    path = plot_curves(curves, tmp_path / "curves.svg.partial", image_format="svg")
    assert path == tmp_path / "curves.svg.partial"
    assert path.read_text().lstrip().startswith("<?xml")
    with pytest.raises(ValueError, match=r"cannot plot to .*curves\.png: matplotlib writes .*"
                                         r" not 'txt'"):
        plot_curves(curves, tmp_path / "curves.png", image_format="txt")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["curves.svg.partial"]


@pytest.mark.parametrize("drop", ["start", "elapsed", "labels"])
def test_a_record_state_lacking_an_entry_is_refused_before_anything_loads(drop):
    record = PrequentialRecord()
    for prediction, label in ((0, 0), (1, 0), (1, 1)):
        record.update(prediction, label, True, 0.01)
    state = {key: value for key, value in record.state_dict().items() if key != drop}
    fresh = PrequentialRecord()
    with pytest.raises(ValueError, match=f"lacks the entries \\['{drop}'\\]"):
        fresh.load_state_dict(state)
    assert fresh.metrics.n_samples == 0 and fresh.predictions.tolist() == []
    fresh.load_state_dict(record.state_dict())  # still empty, so a whole state loads
    assert fresh.predictions.tolist() == [0, 1, 1] and fresh.metrics.n_samples == 3


# (prediction, label, labeled, seconds): predictions 0 1 1 2 2 against labels 0 0 1 1 2
SAMPLES = [(0, 0, True, 0.001), (1, 0, False, 0.002), (1, 1, True, 0.003), (2, 1, False, 0.004),
           (2, 2, True, 0.005)]


def test_a_record_gives_hand_checked_results_from_its_compact_columns():
    record = PrequentialRecord(start=7)
    for sample in SAMPLES:
        record.update(*sample)
    # the columns are arrays, read like lists
    assert isinstance(record.predictions, array) and record.predictions.typecode == "i"
    assert record.predictions[3] == 2 and record.labels[1:3].tolist() == [0, 1]
    assert len(record.labeled) == 5 and np.asarray(record.labeled).tolist() == [1, 0, 1, 0, 1]
    result = record.result()
    assert result.positions.tolist() == [7, 8, 9, 10, 11]
    expected = {"correct": ([True, False, True, False, True], bool),
                "predictions": ([0, 1, 1, 2, 2], np.int64),
                "labels": ([0, 0, 1, 1, 2], np.int64),
                "labeled": ([True, False, True, False, True], bool)}
    for name, (values, dtype) in expected.items():
        column = getattr(result, name)
        assert column.dtype == dtype and column.tolist() == values, name
    metrics = {key: value for key, value in result.metrics.items()
               if key not in ("seconds", "peak_memory_mb")}
    milliseconds = np.array([sample[3] for sample in SAMPLES]) * 1e3
    chance = (2 * 1 + 2 * 2 + 1 * 2) / 5 ** 2  # true counts 2 2 1, predicted 1 2 2
    assert metrics == {
        "accuracy": 0.6, "accuracy_last_20": 1.0, "accuracy_last_10": 1.0,
        "accuracy_last_5": 1.0,
        "ms_per_sample_median": float(np.median(milliseconds)),  # 3 ms
        "ms_per_sample_p95": float(np.percentile(milliseconds, 95)),  # 4.8 ms
        "n_samples": 5, "n_labels": 3,
        "confusion_matrix": [[1, 1, 0], [0, 1, 1], [0, 0, 1]],
        "recall_per_class": [0.5, 0.5, 1.0],
        "balanced_accuracy": float(np.mean([0.5, 0.5, 1.0])),
        "kappa": (0.6 - chance) / (1.0 - chance),
        "kappa_m": (0.6 - 0.4) / (1.0 - 0.4),  # the majority stays class 0: right 2 of 5
        "kappa_t": (0.6 - 0.6) / (1.0 - 0.6),  # previous label 0 0 0 1 1: right 3 of 5
    }
    state = record.state_dict()
    assert [(state[key].dtype, state[key].tolist()) for key in ("predictions", "labels",
                                                                "labeled", "seconds")] == [
        (np.int64, [0, 1, 1, 2, 2]), (np.int64, [0, 0, 1, 1, 2]),
        (bool, [True, False, True, False, True]),
        (np.float64, [sample[3] for sample in SAMPLES])]
    record.update(0, 0, True, 0.006)  # a snapshot taken does not pin the columns
    assert record.result().metrics["n_samples"] == 6


@pytest.mark.parametrize("column, bad, error, match", [
    # an object array whose last entry is no integer, or does not fit an int64, or no float
    ("predictions", None, TypeError, "sample 4: prediction must be an integer, got None"),
    ("labels", 2**64, ValueError, "sample 4: label must fit an int64"),
    ("seconds", "slow", ValueError, "sample 4: could not convert"),
])
def test_a_full_record_state_with_a_bad_late_entry_loads_nothing(column, bad, error, match):
    record = PrequentialRecord(start=4)
    for sample in SAMPLES:
        record.update(*sample)
    good = record.state_dict()
    state = {**good, "start": 9, column: np.array([*good[column].tolist()[:-1], bad],
                                                  dtype=object)}
    fresh = PrequentialRecord(start=2)
    before = {key: value for key, value in fresh.state_dict().items() if key != "elapsed"}
    with pytest.raises(error, match=match):
        fresh.load_state_dict(state)
    after = {key: value for key, value in fresh.state_dict().items() if key != "elapsed"}
    assert after.keys() == before.keys() and fresh.n_labels == 0
    for key, value in before.items():
        np.testing.assert_array_equal(after[key], value, err_msg=key)
        assert np.asarray(after[key]).dtype == np.asarray(value).dtype, key
    fresh.load_state_dict(good)  # nothing was loaded, so the good state still loads
    assert fresh.start == 4 and fresh.n_labels == 3
    assert fresh.result().metrics["accuracy"] == 0.6
    for key in ("predictions", "labels", "labeled", "seconds"):
        np.testing.assert_array_equal(fresh.state_dict()[key], good[key], err_msg=key)


@pytest.mark.parametrize("history", ["full", "bounded"])
@pytest.mark.parametrize("entry, bad, error, message", [
    ("start", -3, ValueError, "the record state's start must be >= 0, got -3"),
    ("start", 1.5, TypeError, "the record state's start must be an integer, got float"),
    ("elapsed", -5.0, ValueError,
     "the record state's elapsed must be a finite number >= 0, got -5.0"),
    ("elapsed", math.nan, ValueError,
     "the record state's elapsed must be a finite number >= 0, got nan"),
])
def test_a_record_state_with_a_negative_start_or_elapsed_loads_nothing(history, entry, bad,
                                                                       error, message):
    # before: loaded; result() then gave positions from -3 or a negative / NaN wall time
    record = _record(4, [0, 1, 1], history=history)
    fresh = PrequentialRecord(history=history)
    with pytest.raises(error) as raised:
        fresh.load_state_dict({**record.state_dict(), entry: bad})
    assert str(raised.value) == message
    assert fresh.metrics.n_samples == 0 and fresh.start == 0
    fresh.load_state_dict(record.state_dict())
    assert fresh.start == 4 and fresh.metrics.n_samples == 3


@pytest.mark.parametrize("column, index, bad, error, message", [
    # before: loaded; result() then raised (class ids) or gave a NaN / 100 s median latency
    ("labels", 4, -1, ValueError, "sample 4: label must be a class id >= 0, got -1"),
    ("predictions", 2, -2, ValueError, "sample 2: prediction must be a class id >= 0, got -2"),
    ("labeled", 0, 2, TypeError, "sample 0: labeled must be a bool, got int"),
    ("seconds", 1, -1.0, ValueError, "sample 1: seconds must be a finite number >= 0, got -1.0"),
    ("seconds", 3, math.nan, ValueError, "sample 3: seconds must be a finite number >= 0, got nan"),
])
def test_a_full_record_state_with_an_entry_out_of_range_loads_nothing(column, index, bad, error,
                                                                      message):
    record = PrequentialRecord(start=4)
    for sample in SAMPLES:
        record.update(*sample)
    good = record.state_dict()
    values = good[column].tolist()
    values[index] = bad
    fresh = PrequentialRecord()
    with pytest.raises(error) as raised:
        fresh.load_state_dict({**good, column: np.array(values)})
    assert str(raised.value) == f"the record state's {message}"
    assert fresh.metrics.n_samples == 0 and fresh.n_labels == 0 and fresh.start == 0
    fresh.load_state_dict(good)
    assert fresh.result().metrics["accuracy"] == 0.6


def test_a_bounded_record_state_with_a_negative_class_id_loads_nothing():
    # before: loaded; result() then raised 'labels must hold class ids >= 0, got -1'
    record = _record(0, [0, 1, 2], history="bounded")
    good = record.state_dict()
    pairs = good["classes"]["pairs"].copy()
    pairs[1, 0] = -1
    fresh = PrequentialRecord(history="bounded")
    with pytest.raises(ValueError) as raised:
        fresh.load_state_dict({**good, "classes": {**good["classes"], "pairs": pairs}})
    assert str(raised.value) == "pairs must hold class ids >= 0, got the pair [-1, 1]"
    with pytest.raises(ValueError) as raised:
        fresh.load_state_dict({**good, "classes": {**good["classes"], "previous": -1}})
    assert str(raised.value) == "the class counts' previous must be >= 0, got -1"
    assert fresh.metrics.n_samples == 0
    fresh.load_state_dict(good)
    assert fresh.result().metrics["confusion_matrix"] == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]


def test_class_ids_beyond_int32_widen_the_columns_exactly():
    record = PrequentialRecord()
    record.update(1, 1, True, 0.001)
    record.update(2**40, 2**63 - 1, False, 0.002)
    assert record.predictions.typecode == record.labels.typecode == "q"
    assert record.predictions.tolist() == [1, 2**40] and record.labels.tolist() == [1, 2**63 - 1]
    state = record.state_dict()
    assert state["labels"].tolist() == [1, 2**63 - 1] and state["labels"].dtype == np.int64


@pytest.mark.parametrize("prediction, label, error, match", [
    (2**63, 0, ValueError, "prediction must fit an int64"),
    (0, -2**63 - 1, ValueError, "label must fit an int64"),
    (1.0, 1, TypeError, "prediction must be an integer, got 1.0"),
    (0, None, TypeError, "label must be an integer, got None"),
])
def test_a_record_refuses_what_its_columns_cannot_hold_and_stays_as_it_was(prediction, label,
                                                                            error, match):
    record = PrequentialRecord()
    record.update(1, 1, True, 0.001)
    before = record.state_dict()
    with pytest.raises(error, match=match):
        record.update(prediction, label, True, 0.002)
    after = record.state_dict()
    assert record.n_labels == 1 and record.metrics.n_samples == 1
    for key in ("predictions", "labels", "labeled", "seconds"):
        np.testing.assert_array_equal(after[key], before[key])


def test_a_record_holds_at_most_20_bytes_per_sample():
    """Lists held 66 bytes per sample (a pointer per entry and a float object per latency)."""
    samples = 100_000
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        record = PrequentialRecord()
        for index in range(samples):
            record.update(index % 7, index % 5, index % 10 == 0, index * 1e-9)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held / samples < 20


class FusedPreviousLabel(PreviousLabel):
    """Duck-typed fused learner: ``predict_learn`` in one call."""

    def predict_learn(self, x, y):
        prediction = self.predict(x)
        self.learn(x, y)
        return prediction


def test_a_fused_learner_gets_minus_one_for_unlabeled_samples():
    mask = np.array([True, False, True, False, False, True])
    learner = FusedPreviousLabel()
    result = prequential(learner, stream(), label_mask=mask, progress=False)
    assert learner.learned == [0, -1, 1, -1, -1, 1]
    assert result.predictions.tolist() == [0, 0, 0, 1, 1, 1]


class OnlyFused:
    """Duck-typed learner with nothing but ``predict_learn``."""

    def __init__(self) -> None:
        self.inner = PreviousLabel()

    def predict_learn(self, x, y):
        prediction = self.inner.predict(x)
        self.inner.learn(x, y)
        return prediction


def test_the_learner_protocols_name_what_a_run_steps():
    assert isinstance(NearestClassMean(1, 2), StreamLearner)
    assert isinstance(PreviousLabel(), StreamLearner)
    assert not isinstance(PreviousLabel(), FusedStreamLearner)
    assert isinstance(FusedPreviousLabel(), StreamLearner)
    assert isinstance(FusedPreviousLabel(), FusedStreamLearner)
    learner = OnlyFused()
    assert isinstance(learner, FusedStreamLearner) and not isinstance(learner, StreamLearner)
    mask = np.array([True, False, True, False, False, True])
    result = prequential(learner, stream(), label_mask=mask, progress=False)
    assert learner.inner.learned == [0, -1, 1, -1, -1, 1]
    assert result.predictions.tolist() == [0, 0, 0, 1, 1, 1]


class OnlyPredicts:
    num_classes = 2

    def __init__(self):
        self.calls = 0

    def predict(self, x):
        self.calls += 1
        return 0


@pytest.mark.parametrize("learner, missing", [(OnlyPredicts(), "learn"),
                                              (object(), "learn and predict")])
def test_a_learner_without_the_methods_a_run_calls_is_refused_before_the_first_sample(
        learner, missing):
    """Not an AttributeError at the first sample, after the predictions began."""
    name = type(learner).__name__
    with pytest.raises(TypeError, match=f"the learner needs predict_learn, or predict and "
                                        f"learn: {name} lacks {missing}$"):
        prequential(learner, stream(), progress=False)
    assert getattr(learner, "calls", 0) == 0


def _record(start, labels, history="full", window=None):
    record = PrequentialRecord(start=start, history=history, window=window)
    for label in labels:
        record.update(label, label, True, 0.001)
    return record


def test_a_run_resumed_from_a_late_start_covers_positions_from_there():
    # the state covers positions [2, 4): the run continues at 4, not at 2 (its length)
    state = _record(2, LABELS[2:4]).state_dict()
    result = prequential(PreviousLabel(), stream(), progress=False, start=4, initial=state)
    assert result.start == 2 and result.positions.tolist() == [2, 3, 4, 5]
    assert result.predictions.tolist() == [1, 1, 0, 0]
    with pytest.raises(ValueError, match=r"initial covers positions \[2, 4\) but start=2"):
        prequential(PreviousLabel(), stream(), progress=False, start=2, initial=state)


def test_a_resumed_run_reports_the_wall_time_before_it_too():
    state = {**_record(0, LABELS[:2]).state_dict(), "elapsed": 1000.0}
    result = prequential(PreviousLabel(), stream(), progress=False, start=2, initial=state)
    assert 1000.0 <= result.metrics["seconds"] < 1100.0


def test_a_records_state_holds_the_wall_time_since_the_record_started(monkeypatch):
    clock = iter([10.0, 12.5])  # read when the record is made, then by state_dict
    monkeypatch.setattr(time, "perf_counter", lambda: next(clock))
    assert PrequentialRecord().state_dict()["elapsed"] == 2.5


def test_a_full_state_whose_columns_differ_in_length_is_refused():
    # zipped as they were, the longer column's last sample would be dropped silently
    state = {**_record(0, [0, 1]).state_dict(), "labels": np.array([0, 1, 1])}
    record = PrequentialRecord()
    with pytest.raises(ValueError, match=r"must be 1-D of one length, got shapes "
                                         r"\[\(2,\), \(3,\), \(2,\), \(2,\)\]"):
        record.load_state_dict(state)
    assert record.metrics.n_samples == 0


def test_a_bounded_state_whose_windows_cover_other_samples_is_refused():
    state = {**_record(0, [0, 1, 1], "bounded", window=2).state_dict(),
             "windows": _record(0, [0], "bounded", window=2).state_dict()["windows"]}
    record = PrequentialRecord(history="bounded", window=2)
    with pytest.raises(ValueError, match="the record state covers 3 samples with 3 labels, its "
                                         "windows 1 with 1"):
        record.load_state_dict(state)
    assert record.metrics.n_samples == 0


def test_a_record_with_samples_refuses_a_state():
    record = _record(0, [0, 1])
    with pytest.raises(ValueError, match="load_state_dict needs an empty record"):
        record.load_state_dict(_record(0, [1]).state_dict())
    assert record.metrics.n_samples == 2 and record.labels.tolist() == [0, 1]


@pytest.mark.parametrize("value, message", [
    (torch.tensor([1, 2]), r"must hold one class id, got shape \(2,\)$"),
    (torch.zeros(0, dtype=torch.int64), r"must hold one class id, got shape \(0,\)$"),
    (np.array([1, 2]), r"must be one integer class id, got array\(\[1, 2\]\)$"),
    ([1, 2], r"must be one integer class id, got \[1, 2\]$")])
def test_a_prediction_of_other_than_one_class_id_stops_the_run_at_its_sample(value, message):
    learner = ConstantPrediction(value)
    with pytest.raises(ValueError, match="^the prediction at stream position 0 " + message):
        prequential(learner, stream(), progress=False)
    assert learner.learned == []


def test_a_record_without_samples_has_no_largest_class():
    assert [PrequentialRecord(history=history).largest_class() for history in HISTORIES] == [
        -1, -1]


def test_a_numpy_bool_prediction_is_refused():
    with pytest.raises(TypeError, match="the prediction at stream position 0 must be one "
                                        r"integer class id, got (np\.)?True"):
        prequential(ConstantPrediction(np.bool_(True)), stream(), progress=False)


def test_the_running_accuracy_plot_puts_a_late_run_at_its_stream_positions(monkeypatch):
    module = importlib.import_module("torch_geometric_stream.evaluation.prequential")
    drawn = {}
    monkeypatch.setattr(module, "plot_curves", lambda curves, path, **kwargs: drawn.update(curves))
    result = prequential(PreviousLabel(), stream(), progress=False, start=2)
    module.plot_running_accuracy({"run": result}, "unused.png")
    positions, accuracy = drawn["run"]
    assert positions.tolist() == [3, 4, 5, 6] and accuracy.tolist() == [0.0, 0.5, 1 / 3, 0.25]
    for history in HISTORIES:  # one point per curve: the whole run, at its last position
        result = prequential(PreviousLabel(), stream(), progress=False, start=2, history=history)
        module.plot_running_accuracy({"run": result}, "unused.png", num_points=1)
        assert [values.tolist() for values in drawn["run"]] == [[6], [0.25]]


class Unsized:
    """A learner without num_classes: the record is sized by the largest class id seen."""

    def predict(self, x):
        return 0

    def learn(self, x, y):
        pass


@pytest.mark.parametrize("history", ["full", "bounded"])
@pytest.mark.parametrize("label", [2 ** 20, 2 ** 40, 2 ** 70, np.int64(2 ** 40)])
def test_a_class_id_beyond_the_classes_a_record_sizes_is_refused_at_its_sample(history, label):
    # before: 2**40 was recorded, and result() raised MemoryError (lists of 2**40 + 1
    # entries); 2**70 raised "must be one integer class id" as if it were no integer
    seen = []
    with pytest.raises(ValueError, match=rf"^y at stream position 1 must be a class id < "
                                         rf"1048576 \(2\*\*20\) for a learner without "
                                         rf"num_classes, .* got {int(label)}: give the learner "
                                         rf"a num_classes$"):
        prequential(Unsized(), [(np.zeros(2), 0), (np.zeros(2), label)], progress=False,
                    history=history, callback=lambda position, record: seen.append(position))
    assert seen == [0]
    result = prequential(Unsized(), [(np.zeros(2), 2 ** 20 - 1)], progress=False,
                         history=history)
    assert len(result.metrics["recall_per_class"]) == 2 ** 20


def test_a_learner_with_num_classes_takes_class_ids_beyond_the_cap():
    class Sized(Unsized):
        num_classes = 2 ** 20 + 2

    result = prequential(Sized(), [(np.zeros(2), 2 ** 20 + 1)], progress=False,
                         history="bounded")
    assert result.metrics["n_samples"] == 1


@pytest.mark.parametrize("history", ["full", "bounded"])
def test_a_resumed_run_without_num_classes_refuses_an_initial_class_id_beyond_the_cap(history):
    record = PrequentialRecord(history=history)
    record.update(0, 2 ** 40, True, 0.001)
    with pytest.raises(ValueError, match=r"^initial holds class id 1099511627776, but a run "
                                         r"whose learner has no num_classes takes class ids "
                                         r"below 1048576"):
        prequential(Unsized(), [(np.zeros(2), 0)] * 2, progress=False, history=history,
                    start=1, initial=record.state_dict())
