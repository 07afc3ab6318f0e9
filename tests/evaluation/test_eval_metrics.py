import math
import tracemalloc

import numpy as np
import pytest

from torch_geometric_stream.evaluation import (StreamMetrics, accuracy_curve, class_metrics,
                                               tail_accuracy)
from torch_geometric_stream.evaluation.metrics import (MAX_CONFUSION_CLASSES, _chance_agreement,
                                                       _prequential_majority, curve_positions,
                                                       tail_size)

# 20 samples: 10 right, 5 wrong, then 0 1 1 1 0.
CORRECT = [True] * 10 + [False] * 5 + [False, True, True, True, False]


def test_stream_metrics_summary_by_hand():
    metrics = StreamMetrics()
    assert math.isnan(metrics.running_accuracy)
    for index, correct in enumerate(CORRECT):
        metrics.update(correct, seconds=(index + 1) * 1e-3)  # 1 ms .. 20 ms
    assert metrics.n_samples == 20
    assert metrics.running_accuracy == pytest.approx(13 / 20)
    summary = metrics.summary()
    assert summary == {
        "accuracy": pytest.approx(0.65),
        "accuracy_last_20": pytest.approx(0.75),  # last 4: 1 1 1 0
        "accuracy_last_10": pytest.approx(0.5),   # last 2: 1 0
        "accuracy_last_5": pytest.approx(0.0),    # last 1: 0
        "ms_per_sample_median": pytest.approx(10.5),
        "ms_per_sample_p95": pytest.approx(19.05),
        "n_samples": 20,
    }
    assert all(type(value) in (float, int) for value in summary.values())
    assert metrics.correct.dtype == bool and metrics.seconds.shape == (20,)


def test_stream_metrics_shows_its_samples_and_accuracy():
    metrics = StreamMetrics()
    assert repr(metrics) == "StreamMetrics(n_samples=0, accuracy=nan)"
    for correct in (True, True, False):
        metrics.update(correct, 0.001)
    assert repr(metrics) == "StreamMetrics(n_samples=3, accuracy=0.6667)"


def test_stream_metrics_empty_summary():
    with pytest.raises(ValueError, match="no sample"):
        StreamMetrics().summary()


def test_tail_accuracy_uses_ceil():
    correct = np.zeros(30, dtype=bool)
    correct[-2:] = True
    assert tail_accuracy(correct, 0.05) == 1.0    # ceil(1.5) = 2
    assert tail_accuracy(correct, 0.1) == pytest.approx(2 / 3)  # ceil(3.0000000000000004) = 3
    assert tail_accuracy([True], 0.05) == 1.0     # at least one sample
    with pytest.raises(ValueError):
        tail_accuracy([], 0.1)


def test_accuracy_curve():
    counts, accuracy = accuracy_curve([1, 0, 1, 1], num_points=200)
    assert counts.tolist() == [1, 2, 3, 4]
    assert accuracy == pytest.approx([1.0, 0.5, 2 / 3, 0.75])
    counts, accuracy = accuracy_curve([1, 0, 1, 1], num_points=2)
    assert counts.tolist() == [1, 4] and accuracy == pytest.approx([1.0, 0.75])
    counts, _ = accuracy_curve(np.ones(10_000, dtype=bool), num_points=200)
    assert counts.size == 200 and counts[-1] == 10_000


def test_a_tail_is_at_least_one_sample():
    # 1e-12 * 2 samples rounds up to 0 within the tolerance: the tail is still the last sample
    assert tail_size(1e-12, 2) == 1
    assert tail_accuracy([False, True], 1e-12) == 1.0


def test_accuracy_curve_positions_are_rounded():
    # 4 points evenly spaced in [1, 5]: 1, 2.33, 3.67, 5 -> 1, 2, 4, 5
    assert curve_positions(5, 4).tolist() == [1, 2, 4, 5]
    counts, accuracy = accuracy_curve([1, 0, 1, 1, 0], num_points=4)
    assert counts.tolist() == [1, 2, 4, 5]
    assert accuracy.tolist() == [1.0, 0.5, 0.75, 0.6]


def test_a_one_point_curve_is_the_whole_run():
    # linspace(1, T, 1) is [1]: the one point must be T, as the docstring says of the last
    assert curve_positions(10, 1).tolist() == [10]
    assert curve_positions(1, 1).tolist() == [1] and curve_positions(0, 1).tolist() == []
    counts, accuracy = accuracy_curve([1, 0, 0, 0, 0, 0, 0, 0, 0, 0], num_points=1)
    assert counts.tolist() == [10] and accuracy.tolist() == [0.1]


# class_metrics by hand: 6 samples, classes 0, 1, 2.
LABELS = [0, 0, 1, 1, 1, 2]
PREDICTIONS = [0, 1, 1, 1, 0, 2]


def test_class_metrics_by_hand():
    metrics = class_metrics(LABELS, PREDICTIONS)
    assert metrics["confusion_matrix"] == [[1, 1, 0], [1, 2, 0], [0, 0, 1]]
    assert metrics["recall_per_class"] == pytest.approx([0.5, 2 / 3, 1.0])
    assert metrics["balanced_accuracy"] == pytest.approx(13 / 18)
    # observed 4/6; chance (2*2 + 3*3 + 1*1) / 36 = 14/36
    assert metrics["kappa"] == pytest.approx(5 / 11)
    # majority with each sample counted (MOA): 0 0 0 0(tie -> 0) 1 1 -> right 3 times
    assert metrics["kappa_m"] == pytest.approx((4 / 6 - 3 / 6) / (3 / 6))
    # no-change: 0 0 0 1 1 1 -> right 4 times, like the learner
    assert metrics["kappa_t"] == pytest.approx(0.0)


def test_class_metrics_undefined_and_absent_classes():
    metrics = class_metrics([0, 0, 0], [0, 0, 0])
    assert metrics["kappa"] is None and metrics["kappa_m"] is None
    assert metrics["balanced_accuracy"] == 1.0
    # class 1 is only predicted, never true: its recall is None, not 0
    metrics = class_metrics(np.array([0, 0]), np.array([1, 0]))
    assert metrics["recall_per_class"] == [0.5, None]
    assert metrics["balanced_accuracy"] == 0.5
    assert metrics["confusion_matrix"] == [[1, 1], [0, 0]]


# 5 classes: 0 right once and once taken for 3; 1 seen, never predicted (taken for 0);
# 2 and 4 never seen nor predicted (4 above the largest id seen); 3 right twice of 3
FIVE_LABELS = [0, 0, 1, 3, 3, 3]
FIVE_PREDICTIONS = [0, 3, 0, 3, 3, 0]


def test_class_metrics_over_the_classes_of_the_stream_by_hand():
    metrics = class_metrics(FIVE_LABELS, FIVE_PREDICTIONS, num_classes=5)
    assert metrics["confusion_matrix"] == [[1, 0, 0, 1, 0],
                                           [1, 0, 0, 0, 0],
                                           [0, 0, 0, 0, 0],
                                           [1, 0, 0, 2, 0],
                                           [0, 0, 0, 0, 0]]
    assert metrics["recall_per_class"] == [0.5, 0.0, None, 2 / 3, None]
    assert metrics["balanced_accuracy"] == float(np.mean([0.5, 0.0, 2 / 3]))
    # observed 3/6; chance (2*3 + 1*0 + 3*3) / 36 = 15/36
    assert metrics["kappa"] == (3 / 6 - 15 / 36) / (1 - 15 / 36)
    # majority 0 0 0 0 0(tie) 3: right 3 times; previous 0 0 0 1 3 3: right 4 times
    assert metrics["kappa_m"] == 0.0 and metrics["kappa_t"] == (3 / 6 - 4 / 6) / (1 - 4 / 6)
    # before: sized by the largest id seen, 4 rows: the values of those classes are the same
    seen = class_metrics(FIVE_LABELS, FIVE_PREDICTIONS)
    assert seen["confusion_matrix"] == [row[:4] for row in metrics["confusion_matrix"][:4]]
    assert seen["recall_per_class"] == metrics["recall_per_class"][:4]
    assert without(seen, ("confusion_matrix", "recall_per_class")) == \
        without(metrics, ("confusion_matrix", "recall_per_class"))


@pytest.mark.parametrize("num_classes, error, match", [
    (3, ValueError, r"class id 3 is outside \[0, num_classes=3\): pass the number of classes"),
    (0, ValueError, "num_classes must be >= 1, got 0"),
    (4.0, TypeError, "num_classes must be an integer, got float"),
])
def test_class_metrics_refuse_a_num_classes_below_the_ids(num_classes, error, match):
    with pytest.raises(error, match=match):
        class_metrics(FIVE_LABELS, FIVE_PREDICTIONS, num_classes=num_classes)


def without(metrics, keys):
    return {key: value for key, value in metrics.items() if key not in keys}


def test_class_metrics_leave_out_the_confusion_matrix_of_many_classes():
    labels = np.arange(MAX_CONFUSION_CLASSES + 1)
    metrics = class_metrics(labels, labels)
    assert metrics["confusion_matrix"] is None and metrics["balanced_accuracy"] == 1.0
    assert len(metrics["recall_per_class"]) == MAX_CONFUSION_CLASSES + 1
    assert len(class_metrics(labels[:-1], labels[:-1])["confusion_matrix"]) == \
        MAX_CONFUSION_CLASSES


def test_prequential_majority_is_the_argmax_of_the_running_counts():
    for num_classes in (2, 4, 50):
        labels = np.random.default_rng(num_classes).integers(0, num_classes, size=1000)
        counts, expected = np.zeros(num_classes, dtype=int), []
        for label in labels:
            counts[label] += 1
            expected.append(int(counts.argmax()))  # argmax: the smallest id on ties
        assert _prequential_majority(labels, num_classes).tolist() == expected


@pytest.mark.parametrize("labels, predictions, error, match", [
    ([], [], ValueError, "non-empty"),
    ([0, 1], [0], ValueError, "one length"),
    ([0, -1], [0, 0], ValueError, ">= 0"),
    ([0.5, 1.0], [0, 1], TypeError, "integer class ids"),
    ([[0, 1]], [[0, 1]], TypeError, "1-D"),
])
def test_class_metrics_rejects_bad_input(labels, predictions, error, match):
    with pytest.raises(error, match=match):
        class_metrics(labels, predictions)


def test_chance_agreement_is_exact_past_int64_products():
    # 4e9 samples: the int64 dot product 3e9 * 3.1e9 + 1e9 * 0.9e9 = 1.02e19 wrapped to
    # -8.2e18, a negative chance agreement (and a kappa far off) on streams over 3.04e9
    support = np.array([3_000_000_000, 1_000_000_000])
    predicted = np.array([3_100_000_000, 900_000_000])
    assert _chance_agreement(support, predicted) == 10_200_000_000_000_000_000 / 16e18
    assert _chance_agreement(np.array([2, 1]), np.array([1, 2])) == 4 / 9


def test_class_metrics_peak_memory_stays_near_two_int64_per_sample():
    """The majority reference used to go through two Python lists of T entries and
    every (T,) temporary was alive at once: 41 bytes per sample above the inputs."""
    samples = 100_000
    labels = np.arange(samples, dtype=np.int64) % 7
    predictions = (labels * 3) % 7
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        class_metrics(labels, predictions)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert peak / samples < 20


def test_latency_summary_is_the_median_and_the_95th_percentile():
    # 1, 2 and 9 ms: median 2 (the mean would be 4), p95 2 + 0.9 * 7 = 8.3
    metrics = StreamMetrics()
    for seconds in (0.001, 0.009, 0.002):
        metrics.update(True, seconds)
    summary = metrics.summary()
    assert summary["ms_per_sample_median"] == pytest.approx(2.0)
    assert summary["ms_per_sample_p95"] == pytest.approx(8.3)
