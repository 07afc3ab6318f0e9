"""history="bounded": fixed-memory running counts, exact where the full history is
exact, within their documented bounds elsewhere, resumable."""
import math
import re
import sys
import tracemalloc

import numpy as np
import pytest

from torch_geometric_stream.evaluation import (HISTORIES, PrequentialRecord, StreamMetrics,
                                               accuracy_curve, class_metrics, prequential,
                                               tail_accuracy)
from torch_geometric_stream.evaluation.bounded import (LATENCY_FLOOR, LATENCY_RATIO,
                                                       BoundedStreamMetrics, LatencyHistogram,
                                                       RunningAccuracy, RunningClassCounts,
                                                       _latency_bin, kept_tail_span)
from torch_geometric_stream.evaluation.metrics import TAIL_FRACTIONS, tail_size

#: Entries that depend on the clock (or the process), not on the predictions.
TIMING = ("seconds", "peak_memory_mb", "ms_per_sample_median", "ms_per_sample_p95")


class Scripted:
    """Duck-typed learner predicting ``predictions`` in turn; logs what it learns."""

    def __init__(self, predictions):
        self.predictions = iter(np.asarray(predictions).tolist())
        self.learned = []

    def predict(self, x):
        return next(self.predictions)

    def learn(self, x, y):
        self.learned.append(y)


def random_run(seed, samples, classes=4):
    """Labels with classes that first appear late (ids 50, 100 after a random
    position) and predictions right about a random share of the time."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, samples)
    late = int(rng.integers(0, samples))
    labels[late:] += rng.integers(0, 3, samples - late) * 50
    predictions = np.where(rng.random(samples) < rng.random(), labels,
                           rng.integers(0, classes + 120, samples))
    return labels, predictions


def run_both(labels, predictions, **options):
    stream = list(zip(np.zeros((labels.size, 1)), labels.tolist()))
    return [prequential(Scripted(predictions), stream, progress=False, history=history,
                        **options) for history in HISTORIES]


def without(metrics, keys):
    return {key: value for key, value in metrics.items() if key not in keys}


@pytest.mark.parametrize("seed, samples", [(0, 1), (1, 7), (2, 500), (3, 4096), (4, 9000)])
def test_every_class_metric_and_the_accuracy_equal_the_full_history(seed, samples):
    labels, predictions = random_run(seed, samples)
    mask = np.random.default_rng(seed).random(samples) < 0.3
    full, bounded = run_both(labels, predictions, label_mask=mask)
    exact = ["accuracy", "n_samples", "n_labels", "confusion_matrix", "recall_per_class",
             "balanced_accuracy", "kappa", "kappa_m", "kappa_t"]
    assert {key: bounded.metrics[key] for key in exact} == {key: full.metrics[key]
                                                             for key in exact}
    assert bounded.metrics["recall_per_class"] == class_metrics(labels, predictions)[
        "recall_per_class"]
    if samples <= 4096:  # the stride is still 1: the tails are exact too
        assert without(bounded.metrics, TIMING + ("tail_samples",)) == \
            without(full.metrics, TIMING)
        assert bounded.metrics["tail_samples"] == {
            key: tail_size(fraction, samples) for key, fraction in TAIL_FRACTIONS.items()}
        for mine, theirs in zip(bounded.accuracy_curve(200), full.accuracy_curve(200)):
            np.testing.assert_array_equal(mine, theirs)
    assert bounded.history == "bounded" and bounded.correct is None and bounded.positions is None


def test_more_classes_than_a_confusion_matrix_shows_equal_the_full_history_too():
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 150, 2000)
    predictions = np.where(rng.random(2000) < 0.5, labels, rng.integers(0, 150, 2000))
    full, bounded = run_both(labels, predictions)
    assert bounded.metrics["confusion_matrix"] is None
    assert without(bounded.metrics, TIMING + ("tail_samples",)) == without(full.metrics, TIMING)


def test_running_class_counts_by_hand():
    counts = RunningClassCounts()
    # labels 2 0 0 2 2, predictions 2 2 0 0 2; the majority 2 0 0 0 2 (a tie goes to
    # the smaller id), the previous label 0 2 0 0 2
    for label, prediction in ((2, 2), (0, 2), (0, 0), (2, 0), (2, 2)):
        counts.update(label, prediction)
    metrics = counts.metrics()
    assert metrics["confusion_matrix"] == [[1, 0, 1], [0, 0, 0], [1, 0, 2]]
    assert metrics["recall_per_class"] == [0.5, None, 2 / 3]
    assert metrics["kappa_m"] == (0.6 - 0.8) / (1 - 0.8)  # majority right at 1, 2, 3, 5
    assert metrics["kappa_t"] == (0.6 - 0.4) / (1 - 0.4)  # previous right at 3, 5
    assert metrics == class_metrics([2, 0, 0, 2, 2], [2, 2, 0, 0, 2])
    # over 4 classes: class 3, never seen, gets a zero row and column and recall None
    metrics = counts.metrics(num_classes=4)
    assert metrics["confusion_matrix"] == [[1, 0, 1, 0], [0, 0, 0, 0], [1, 0, 2, 0],
                                           [0, 0, 0, 0]]
    assert metrics["recall_per_class"] == [0.5, None, 2 / 3, None]
    assert metrics == class_metrics([2, 0, 0, 2, 2], [2, 2, 0, 0, 2], num_classes=4)
    with pytest.raises(ValueError, match=r"class id 2 is outside \[0, num_classes=2\)"):
        counts.metrics(num_classes=2)


@pytest.mark.parametrize("pairs", [[[0, 0, 1], [1, 0, 0]], [[0, 0, 1], [0, 0, 2]]],
                         ids=["a count of 0", "a pair twice"])
def test_class_counts_refuse_pairs_that_no_run_counts_and_stay_as_they_were(pairs):
    counts = RunningClassCounts()
    counts.update(1, 1)
    state = {**RunningClassCounts().state_dict(), "pairs": np.array(pairs)}
    with pytest.raises(ValueError, match=r"pairs must hold each \(label, prediction\) once "
                                         r"with a count > 0"):
        counts.load_state_dict(state)
    assert counts.samples == 1 and counts.state_dict()["pairs"].tolist() == [[1, 1, 1]]


@pytest.mark.parametrize("make, entries, message", [
    (RunningClassCounts, {"pairs": None}, r"^class count state lacks the entries \['pairs'\]$"),
    (RunningClassCounts, {"pairs": np.array([[0.0, 0.0, 1.0]])},
     r"^pairs must be an integer array of shape \(k, 3\), got dtype float64 and shape "
     r"\(1, 3\)$"),
    (RunningClassCounts, {"pairs": np.array([[0, 0]])},
     r"^pairs must be an integer array of shape \(k, 3\), got dtype int64 and shape \(1, 2\)$"),
    (RunningAccuracy, {"stride": None, "points": None},
     r"^running accuracy state lacks the entries \['stride', 'points'\]$"),
    (RunningAccuracy, {"points": np.array([0.5])},
     r"^points must be an integer array of shape \(k, 1\), got dtype float64"),
    (LatencyHistogram, {"maximum": None}, r"^latency state lacks the entries \['maximum'\]$"),
    (LatencyHistogram, {"bins": np.array([0, 1])},
     r"^bins must be an integer array of shape \(k, 2\), got dtype int64 and shape \(2,\)$"),
    (BoundedStreamMetrics, {"latency": None},
     r"^metrics state lacks the entries \['latency'\]$")])
def test_a_bounded_count_refuses_a_state_without_its_entries_and_stays_as_it_was(
        make, entries, message):
    """An entry ``None`` here: left out of the state."""
    counted = make()
    for index in range(3):
        if make is RunningClassCounts:
            counted.update(index, 0)
        elif make is RunningAccuracy:
            counted.update(index % 2 == 0)
        elif make is LatencyHistogram:
            counted.update(0.001 * (index + 1))
        else:
            counted.update(index % 2 == 0, 0.001 * (index + 1))
    before = repr(counted.state_dict())
    state = {**counted.state_dict(), **entries}
    with pytest.raises(ValueError, match=message):
        counted.load_state_dict({key: value for key, value in state.items() if value is not None})
    assert repr(counted.state_dict()) == before


@pytest.mark.parametrize("ask", [
    lambda: RunningClassCounts().metrics(), lambda: RunningAccuracy().tail(0.5),
    lambda: RunningAccuracy().curve(10), lambda: LatencyHistogram().quantile(50),
    lambda: BoundedStreamMetrics().summary()],
    ids=["class metrics", "tail", "curve", "quantile", "summary"])
def test_a_bounded_count_asked_before_the_first_sample_says_so(ask):
    with pytest.raises(ValueError, match="^no sample recorded yet$"):
        ask()


@pytest.mark.parametrize("pair, message", [
    ((-1, 0), "^labels must hold class ids >= 0, got -1$"),
    ((0, -2), "^predictions must hold class ids >= 0, got -2$")])
def test_class_metrics_of_a_negative_class_id_are_refused(pair, message):
    counts = RunningClassCounts()
    counts.update(1, 1)
    counts.update(*pair)
    with pytest.raises(ValueError, match=message):
        counts.metrics()
    with pytest.raises(ValueError, match=message):
        class_metrics([1, pair[0]], [1, pair[1]])


def test_a_bounded_record_shows_its_samples_and_accuracy():
    metrics = BoundedStreamMetrics()
    for correct in (True, True, False):
        metrics.update(correct, 0.001)
    assert repr(metrics) == "BoundedStreamMetrics(n_samples=3, accuracy=0.6667)"


@pytest.mark.parametrize("state", [
    {"samples": 6, "correct": 3, "stride": 3, "points": [1, 3]},  # a stride no power of 2
    {"samples": 4, "correct": 2, "stride": 1, "points": [1, 2, 2]},  # a point short
    {"samples": 2, "correct": 3, "stride": 1, "points": [1, 3]},  # more right than seen
], ids=["stride", "points", "correct"])
def test_a_running_accuracy_refuses_an_inconsistent_state_and_stays_as_it_was(state):
    accuracy = RunningAccuracy()
    accuracy.update(True)
    with pytest.raises(ValueError, match="inconsistent running accuracy state"):
        accuracy.load_state_dict(state)
    assert (accuracy.samples, accuracy.correct, accuracy.stride) == (1, 1, 1)


@pytest.mark.parametrize("state, match", [
    ({"bins": [[-2, 1]], "minimum": 0.0, "maximum": 0.0}, "each bin >= -1 once"),
    ({"bins": [[0, 1]], "minimum": 2e-9, "maximum": 1e-9}, "no range of latencies"),
], ids=["bin", "range"])
def test_a_latency_histogram_refuses_a_state_no_latencies_give(state, match):
    histogram = LatencyHistogram()
    histogram.update(0.5)
    with pytest.raises(ValueError, match=match):
        histogram.load_state_dict({**state, "bins": np.array(state["bins"])})
    assert histogram.count == 1 and histogram.quantile(50) == 0.5


def test_class_ids_beyond_int32_are_counted_and_saved_exactly():
    record = PrequentialRecord(history="bounded")
    record.update(1, 1, True, 0.001)
    record.update(2**40, 2**63 - 1, False, 0.002)
    state = record.state_dict()
    pairs = state["classes"]["pairs"]
    assert pairs.dtype == np.int64 and pairs.tolist() == [[1, 1, 1], [2**63 - 1, 2**40, 1]]
    again = PrequentialRecord(history="bounded")
    again.load_state_dict(state)
    assert again.state_dict()["classes"]["pairs"].tolist() == pairs.tolist()
    assert again.classes.samples == 2 and again.n_labels == 1


def test_running_accuracy_doubles_its_stride_and_keeps_exact_points():
    accuracy = RunningAccuracy(max_points=4)
    hits = [1, 0, 1, 1, 0, 0, 1, 1, 1]
    for hit in hits:
        accuracy.update(bool(hit))
    # points at 1..4; at 5 the stride became 2 (points 2, 4), then 6, 8: stride 4 at 9
    assert accuracy.stride == 2
    positions, kept = accuracy.points()
    assert positions.tolist() == [2, 4, 6, 8, 9]
    assert kept.tolist() == np.cumsum(hits)[positions - 1].tolist()
    accuracy.update(True)
    assert accuracy.stride == 4 and accuracy.points()[0].tolist() == [4, 8, 10]
    # a curve of 3 points asks for 1, 6 and 10: 6 lies as near 4 as 8, and goes to 4
    counts, running = accuracy.curve(3)
    assert counts.tolist() == [4, 10] and running.tolist() == [0.75, 0.7]
    assert [values.tolist() for values in accuracy.curve(1)] == [[10], [0.7]]  # the whole run
    # the last 20 % of 10: 2 samples from position 8, kept; the last 5 %: 1 sample
    # from 9, not kept: from 8, 2 samples
    assert accuracy.tail(0.2) == (1.0, 2)
    assert accuracy.tail(0.05) == (1.0, 2)
    with pytest.raises(ValueError, match="max_points must be even"):
        RunningAccuracy(max_points=5)


@pytest.mark.parametrize("max_points", [2, 16, 64, 256])
def test_tail_accuracies_stay_within_their_bound(max_points):
    for seed in range(6):
        rng = np.random.default_rng(seed)
        samples = int(rng.integers(max_points, 40 * max_points))
        correct = rng.random(samples) < np.linspace(0.2, 0.9, samples)  # drifting
        full, bounded = StreamMetrics(), BoundedStreamMetrics(curve_points=max_points)
        for hit in correct.tolist():
            full.update(hit, 0.001)
            bounded.update(hit, 0.001)
        exact, kept = full.summary(), bounded.summary()
        for key, fraction in TAIL_FRACTIONS.items():
            size, span = tail_size(fraction, samples), kept["tail_samples"][key]
            error = abs(kept[key] - exact[key])
            assert error <= abs(span - size) / min(span, size) + 1e-12
            if size >= bounded.accuracy.stride / 2:
                assert abs(span - size) <= samples / max_points
                if fraction * max_points > 1:
                    assert error <= 1 / (fraction * max_points - 1) + 1e-12
            if span == size:
                assert kept[key] == exact[key]
        counts, running = bounded.accuracy.curve(50)
        assert counts[-1] == samples and len(counts) <= 50
        np.testing.assert_array_equal(running, np.cumsum(correct)[counts - 1] / counts)


@pytest.mark.parametrize("max_points", [2, 4, 16])
def test_kept_tail_span_is_the_span_a_running_accuracy_records(max_points):
    """The span of a bounded history's tail follows from the stream's length alone
    (the stride it reaches): what tune expects of the runs it has yet to make."""
    accuracy = RunningAccuracy(max_points=max_points)
    for samples in range(1, 40 * max_points + 3):  # through at least five doublings of the stride
        accuracy.update(samples % 3 == 0)
        for fraction in (*TAIL_FRACTIONS.values(), 0.3, 1.0):
            assert kept_tail_span(fraction, samples, max_points) == \
                accuracy.tail(fraction)[1], (samples, fraction)


def test_kept_tail_span_of_the_default_points_and_its_checks():
    assert [kept_tail_span(0.05, samples) for samples in (60, 4096, 5002, 60_000)] == \
        [3, 205, 252, 3008]  # tail_size: 3, 205, 251, 3000
    assert kept_tail_span(0.2, 60_000) == 12_000
    with pytest.raises(ValueError, match=r"fraction must be in \(0, 1\], got 0"):
        kept_tail_span(0, 100)
    with pytest.raises(ValueError, match="samples must be >= 1, got 0"):
        kept_tail_span(0.05, 0)
    with pytest.raises(TypeError, match="samples must be an integer, got float"):
        kept_tail_span(0.05, 100.0)
    with pytest.raises(ValueError, match="max_points must be >= 2, got 1"):
        kept_tail_span(0.05, 100, 1)


def test_latency_quantiles_stay_within_half_a_percent_plus_a_nanosecond():
    rng = np.random.default_rng(0)
    seconds = np.concatenate([rng.lognormal(-7, 1.5, 20_000), np.zeros(300),
                              rng.uniform(0, LATENCY_FLOOR, 300), [5.0, 0.25]])
    rng.shuffle(seconds)
    histogram = LatencyHistogram()
    for value in seconds.tolist():
        histogram.update(value)
    for percent in (0, 1, 5, 50, 95, 99.9, 100):
        exact = float(np.percentile(seconds, percent))
        bound = (math.sqrt(LATENCY_RATIO) - 1) * exact + LATENCY_FLOOR
        assert abs(histogram.quantile(percent) - exact) <= bound, percent
    assert histogram.quantile(0) == 0.0 and histogram.quantile(100) == 5.0  # clamped
    single = LatencyHistogram()
    single.update(0.003)
    assert single.quantile(50) == 0.003


@pytest.mark.parametrize("seconds", [
    0.0, 5e-324, math.nextafter(LATENCY_FLOOR, 0), LATENCY_FLOOR,
    math.nextafter(LATENCY_FLOOR, 1), LATENCY_FLOOR * LATENCY_RATIO, 1e-6, 1.0, 1e6,
    math.nextafter(1e299, 0), 1e299, math.nextafter(1e299, math.inf), 1.7e299, 1.8e299,
    sys.float_info.max,
])
def test_a_latency_is_counted_in_the_bin_the_loader_checks_it_against(seconds):
    # update bins the usual latencies inline; the loader checks the bins of the
    # minimum and the maximum with _latency_bin: the two must agree everywhere
    histogram = LatencyHistogram()
    histogram.update(seconds)
    assert histogram.state_dict()["bins"].tolist() == [[_latency_bin(seconds), 1]]
    LatencyHistogram().load_state_dict(histogram.state_dict())
    if seconds < LATENCY_FLOOR:
        assert _latency_bin(seconds) == -1
    elif seconds == LATENCY_FLOOR:
        assert _latency_bin(seconds) == 0


def test_a_bounded_latency_summary_is_the_median_and_the_95th_percentile():
    # 1, 2 and 9 ms as in the full history: median 2, p95 2 + 0.9 * 7 = 8.3; the
    # histogram's 2 ms is its bin's middle (within 0.5 %), 1 and 9 ms the extremes
    metrics = BoundedStreamMetrics()
    for seconds in (0.001, 0.009, 0.002):
        metrics.update(True, seconds)
    summary = metrics.summary()
    middle = LATENCY_FLOOR * LATENCY_RATIO ** (math.floor(math.log(0.002 / LATENCY_FLOOR,
                                                                   LATENCY_RATIO)) + 0.5)
    assert summary["ms_per_sample_median"] == pytest.approx(middle * 1e3)
    assert summary["ms_per_sample_p95"] == pytest.approx((middle + 0.9 * (0.009 - middle)) * 1e3)


@pytest.mark.parametrize("samples", [10_000, 100_000])
def test_a_bounded_record_holds_at_most_64_kib_however_long_the_run(samples):
    """The kept points (32 KiB at most), the counts of 7 x 5 pairs and 97 latency
    bins; the full history holds 18 bytes a sample (1.8 MB at 100,000)."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        record = PrequentialRecord(history="bounded")
        for index in range(samples):
            record.update(index % 7, index % 5, index % 10 == 0, (index % 97 + 1) * 1e-5)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 64 * 1024


def test_resuming_a_bounded_run_gives_the_uninterrupted_counts():
    labels, predictions = random_run(7, 6000)
    stream = list(zip(np.zeros((6000, 1)), labels.tolist()))
    mask = np.arange(6000) % 7 == 0
    saved = {}

    def save_at_2500(position, record):
        if position + 1 == 2500:
            saved.update(record.state_dict())

    whole = prequential(Scripted(predictions), stream, label_mask=mask, progress=False,
                        history="bounded", callback=save_at_2500)
    assert PrequentialRecord.state_samples(saved) == 2500
    resumed = prequential(Scripted(predictions[2500:]), stream, label_mask=mask,
                          progress=False, history="bounded", start=2500, initial=saved)
    assert without(resumed.metrics, TIMING) == without(whole.metrics, TIMING)
    for mine, theirs in zip(resumed.kept, whole.kept):
        np.testing.assert_array_equal(mine, theirs)


@pytest.mark.parametrize("kept, resumed", [("full", "bounded"), ("bounded", "full")])
def test_a_state_of_the_other_history_is_refused_naming_both(kept, resumed):
    record = PrequentialRecord(history=kept)
    record.update(1, 1, True, 0.001)
    learner = Scripted([0, 0])
    with pytest.raises(ValueError, match=f"kept with history='{kept}', this record keeps "
                                         f"history='{resumed}': continue it with "
                                         f"history='{kept}'"):
        prequential(learner, [(np.zeros(1), 0)] * 2, progress=False, start=1,
                    initial=record.state_dict(), history=resumed)
    assert learner.learned == []
    older = {key: value for key, value in PrequentialRecord().state_dict().items()
             if key != "history"}  # a state from before the option: a full one
    PrequentialRecord().load_state_dict(older)
    with pytest.raises(ValueError, match="kept with history='full'"):
        PrequentialRecord(history="bounded").load_state_dict(older)


@pytest.mark.parametrize("history", ["xyz", ["full"]])
def test_a_state_of_an_unknown_history_is_named_as_unknown(history):
    # before: "... kept with history='xyz', this record keeps history='full': continue
    # it with history='xyz'", a history no record keeps; ["full"]: unhashable type
    state = {**PrequentialRecord().state_dict(), "history": history}
    for record in (PrequentialRecord(), PrequentialRecord(history="bounded")):
        with pytest.raises(ValueError, match="^" + re.escape(
                f"record state was kept with history={history!r}, which is none of "
                f"('full', 'bounded')") + "$"):
            record.load_state_dict(state)
        assert record.metrics.n_samples == 0


def test_a_bad_bounded_state_is_refused_and_the_record_stays_empty():
    record = PrequentialRecord(history="bounded")
    for sample in ((0, 0, True, 0.001), (1, 0, False, 0.002)):
        record.update(*sample)
    state = record.state_dict()
    fresh = PrequentialRecord(history="bounded")
    with pytest.raises(ValueError, match="covers 3 samples with 1 labels, its metrics 2"):
        fresh.load_state_dict({**state, "n_samples": 3})
    with pytest.raises(ValueError, match="covers 2 samples with 3 labels"):
        fresh.load_state_dict({**state, "n_labels": 3})  # more labels than samples
    longer = PrequentialRecord(history="bounded")
    for sample in ((0, 0, True, 0.001),) * 3:
        longer.update(*sample)
    with pytest.raises(ValueError, match="its metrics 2 and its class counts 3 samples"):
        fresh.load_state_dict({**state, "classes": longer.state_dict()["classes"]})
    with pytest.raises(ValueError, match="the state counts 2 samples but 3 latencies"):
        fresh.load_state_dict({**state, "metrics": {
            **state["metrics"], "latency": longer.state_dict()["metrics"]["latency"]}})
    with pytest.raises(ValueError, match=r"lacks the entries \['classes'\]"):
        fresh.load_state_dict({key: value for key, value in state.items() if key != "classes"})
    assert fresh.metrics.n_samples == 0 and fresh.classes.samples == 0
    fresh.load_state_dict(state)
    assert fresh.result().metrics["kappa"] == record.result().metrics["kappa"]


@pytest.mark.parametrize("seconds", [-0.001, math.nan, math.inf])
def test_a_bounded_record_refuses_a_latency_it_cannot_count_and_stays_as_it_was(seconds):
    record = PrequentialRecord(history="bounded")
    record.update(1, 1, True, 0.001)
    before = repr(record.state_dict()["metrics"]) + repr(record.state_dict()["classes"])
    with pytest.raises(ValueError, match="seconds must be a finite number >= 0"):
        record.update(0, 1, True, seconds)
    after = repr(record.state_dict()["metrics"]) + repr(record.state_dict()["classes"])
    assert after == before and record.n_labels == 1


@pytest.mark.parametrize("seconds", [-0.001, math.nan, math.inf])
def test_a_latency_histogram_refuses_a_latency_it_cannot_count_and_stays_as_it_was(seconds):
    """Before: -0.001 and NaN were counted in the lowest bin (and the minimum set
    to them), a state that load_state_dict then refused: a checkpoint that does
    not resume."""
    histogram = LatencyHistogram()
    histogram.update(0.002)
    before = repr(histogram.state_dict())
    with pytest.raises(ValueError, match="seconds must be a finite number >= 0"):
        histogram.update(seconds)
    assert repr(histogram.state_dict()) == before and histogram.count == 1
    LatencyHistogram().load_state_dict(histogram.state_dict())


@pytest.mark.parametrize("fraction, error, match", [
    (1.5, ValueError, r"fraction must be in \(0, 1\], got 1.5"),
    (-0.1, ValueError, r"fraction must be in \(0, 1\], got -0.1"),
    (0, ValueError, r"fraction must be in \(0, 1\], got 0"),
    (math.nan, ValueError, r"fraction must be in \(0, 1\], got nan"),
    ("0.2", TypeError, "fraction must be a number, got str"),
    (True, TypeError, "fraction must be a number, got bool")])
def test_a_tail_of_no_fraction_is_refused_as_the_full_history_refuses_it(fraction, error,
                                                                         match):
    """Before: tail(1.5) after 20 samples gave (0.125, 32), a span longer than the
    run, tail(-0.1) and tail(0) the last 4 samples, tail(nan) NumPy's error."""
    accuracy = RunningAccuracy(8)
    for index in range(20):
        accuracy.update(index % 3 == 0)
    with pytest.raises(error, match=match):
        accuracy.tail(fraction)
    with pytest.raises(error, match=match):
        tail_accuracy(np.arange(20) % 3 == 0, fraction)
    assert accuracy.tail(1.0) == (7 / 20, 20)


@pytest.mark.parametrize("percent, error, match", [
    (150, ValueError, r"percent must be in \[0, 100\], got 150"),
    (-5, ValueError, r"percent must be in \[0, 100\], got -5"),
    (math.nan, ValueError, r"percent must be in \[0, 100\], got nan"),
    ("50", TypeError, "percent must be a number, got str")])
def test_a_latency_quantile_of_no_percent_is_refused(percent, error, match):
    """Before: quantile(150) raised an AssertionError, quantile(-5) gave the
    smallest latency and quantile(nan) NumPy's error."""
    histogram = LatencyHistogram()
    for seconds in (0.001, 0.002, 0.004):
        histogram.update(seconds)
    with pytest.raises(error, match=match):
        histogram.quantile(percent)


@pytest.mark.parametrize("history, error, match", [
    ("partial", ValueError, r"history must be one of \('full', 'bounded'\), got 'partial'"),
    ("Bounded", ValueError, "got 'Bounded'"),
    (None, TypeError, "history must be one of .* got None"),
    (1, TypeError, r"got 1 \(int\)"),
])
def test_a_bad_history_is_refused_before_the_first_sample(history, error, match):
    learner = Scripted([0])
    with pytest.raises(error, match=match):
        prequential(learner, [(np.zeros(1), 0)], progress=False, history=history)
    assert learner.learned == []
    with pytest.raises(error, match=match):
        PrequentialRecord(history=history)


def test_per_sample_outputs_refuse_a_bounded_result_and_its_plot_uses_the_kept_curve(tmp_path):
    pytest.importorskip("matplotlib")
    labels, predictions = random_run(3, 300)
    _, bounded = run_both(labels, predictions)
    for call, name in ((lambda: bounded.save_csv(tmp_path / "run.csv"), "save_csv"),
                       (lambda: bounded.to_dict(arrays=True), r"to_dict\(arrays=True\)")):
        with pytest.raises(ValueError, match=f"{name} needs the per-sample arrays, which "
                                             f"history='bounded' does not keep"):
            call()
    assert not (tmp_path / "run.csv").exists()
    assert bounded.to_dict()["metrics"]["n_samples"] == 300
    assert bounded.plot(tmp_path / "run.png").stat().st_size > 0
    counts, running = bounded.accuracy_curve(20)
    np.testing.assert_array_equal(counts, accuracy_curve(labels == predictions, 20)[0])
    np.testing.assert_array_equal(running,
                                  np.cumsum(labels == predictions)[counts - 1] / counts)


def test_the_evaluation_package_exports_the_bounded_history_api():
    # what a bounded run's user reads (its metrics class, which tails are inexact, the
    # class metrics from kept counts) is importable from the package like its full twins
    import torch_geometric_stream.evaluation as evaluation
    from torch_geometric_stream.evaluation import bounded, metrics
    for module, name in [(bounded, "BoundedStreamMetrics"), (bounded, "approximate_tails"),
                         (metrics, "class_metrics_from_counts")]:
        assert name in evaluation.__all__
        assert getattr(evaluation, name) is getattr(module, name)
    assert all(hasattr(evaluation, name) for name in evaluation.__all__)


def _bounded_state():
    """A bounded record state of 20 samples of 3 classes, with windows of 8."""
    records = []
    labels = [0, 1, 2, 2, 1, 0, 0, 2, 1, 1, 0, 2, 2, 2, 1, 0, 1, 2, 0, 0]
    predictions = [0, 1, 1, 2, 0, 0, 2, 2, 1, 0, 0, 2, 1, 2, 1, 1, 1, 2, 0, 2]

    class Replay:
        num_classes = 3

        def __init__(self):
            self.predictions = iter(predictions)

        def predict(self, x):
            return next(self.predictions)

        def learn(self, x, y):
            pass

    prequential(Replay(), [(np.zeros(1), label) for label in labels], progress=False,
                history="bounded", window=8,
                callback=lambda position, record: records.append(record))
    return records[-1].state_dict()


def _edited(path, value):
    """The bounded state with the entry at ``path`` (keys) set to ``value``(state)."""
    state = _bounded_state()
    entry = state
    for key in path[:-1]:
        entry = entry[key]
    entry[path[-1]] = value(entry[path[-1]]) if callable(value) else value
    return state


@pytest.mark.parametrize("path, value, error, message", [
    # before: accuracy_last_20 of 200.2 and accuracy_last_5 of 500.5
    (("metrics", "accuracy", "points"), lambda points: points - 1000, ValueError,
     "the running accuracy's points must be cumulative hits after every 1 samples"),
    (("metrics", "accuracy", "points"), lambda points: points[::-1].copy(), ValueError,
     "rising by at most 1 from 0 up to the 13 right"),
    # before: 4 bins of 2**62 counted 3 latencies (an int64 sum that wraps)
    (("metrics", "latency", "bins"),
     np.array([[1, 2 ** 62], [2, 2 ** 62], [3, 2 ** 62], [4, 2 ** 62 + 20]]), ValueError,
     "the latency bins [1, 4] are not those of the range"),
    # before: OverflowError in result()
    (("metrics", "latency", "bins"), lambda bins: bins + [10 ** 6, 0], ValueError,
     "are not those of the range"),
    (("metrics", "latency", "minimum"), "0.001", TypeError,
     "the latency minimum must be a number, got str"),
    # before: kappa_m silently None
    (("classes", "majority_hits"), 10 ** 6, ValueError,
     "the class counts' majority_hits 1000000 and no_change_hits"),
    (("classes", "no_change_hits"), 21, ValueError, "must be at most the 20 samples counted"),
    # before: OverflowError
    (("classes", "majority_hits"), math.inf, TypeError,
     "the class counts' majority_hits must be an integer, got float"),
    (("classes", "majority"), 2, ValueError,  # 7 labels of class 0 and of 2: 0
     "the class counts' majority class 2 and previous label 0 are not those of the labels "
     "counted: the majority is 0"),
    (("classes", "previous"), 7, ValueError, "previous label 7 are not those"),
    (("n_samples",), math.inf, TypeError,
     "the record state's n_samples must be an integer, got float"),
    # before: 5.9 loaded as 5, '2' as 2
    (("n_labels",), 5.9, TypeError, "the record state's n_labels must be an integer, got float"),
    (("n_labels",), "2", TypeError, "the record state's n_labels must be an integer, got str"),
    (("n_labels",), 19, ValueError,
     "the record state covers 20 samples with 19 labels, its windows 20 with 20"),
    (("metrics", "accuracy", "stride"), 2, ValueError, "stride 2"),
    # before: NaN and 7.0 kept as finished windows' balanced accuracies
    (("windows", "done_balanced_accuracy"), np.array([np.nan, 0.5]), ValueError,
     "got nan and"),
    (("windows", "done_balanced_accuracy"), np.array([0.5, 7.0]), ValueError,
     "got 7.0 and"),
    (("windows", "done_kappa"), np.array([0.5, -1.5]), ValueError, "and -1.5 for window 1"),
    (("windows", "hits"), 4, ValueError, "(4 right, 4 labels, class counts of 4, 3 right)"),
])
def test_a_bounded_state_no_run_gives_is_refused_naming_the_entry(path, value, error,
                                                                  message):
    state = _edited(path, value)
    record = PrequentialRecord(history="bounded", window=8)
    with pytest.raises(error, match=re.escape(message)):
        record.load_state_dict(state)
    assert record.metrics.n_samples == 0 and record.classes.samples == 0
    assert record.windowed.n_samples == 0


def test_the_right_predictions_of_the_class_counts_and_the_metrics_agree():
    state = _bounded_state()
    pairs = state["classes"]["pairs"].copy()
    rows = {(label, prediction): row for row, (label, prediction, _) in enumerate(pairs)}
    pairs[rows[0, 0], 2] -= 1  # a sample of class 0 predicted as 2, not as 0
    pairs[rows[0, 2], 2] += 1
    record = PrequentialRecord(history="bounded", window=8)
    with pytest.raises(ValueError, match="class counts hold 12 right predictions, its "
                                         "metrics 13"):
        record.load_state_dict({**state, "classes": {**state["classes"], "pairs": pairs}})


def test_every_bounded_state_a_run_writes_loads_and_gives_its_metrics():
    rng = np.random.default_rng(5)
    for max_points in (2, 4, 6):
        accuracy, counts, histogram = RunningAccuracy(max_points), RunningClassCounts(), \
            LatencyHistogram()
        for _ in range(150):
            label, prediction = (int(value) for value in rng.integers(0, 4, size=2))
            accuracy.update(label == prediction)
            counts.update(label, prediction)
            histogram.update(float(rng.choice([0.0, 1e-10, rng.exponential(1e-3), 1e300])))
            for kept, fresh in ((accuracy, RunningAccuracy(max_points)),
                                (counts, RunningClassCounts()), (histogram, LatencyHistogram())):
                fresh.load_state_dict(kept.state_dict())
                assert repr(fresh.state_dict()) == repr(kept.state_dict())
        assert histogram.quantile(100) == 1e300  # the bin of 1e300 has no finite middle


def test_a_latency_histogram_without_latencies_has_no_range():
    with pytest.raises(ValueError, match=r"latency range \[nan, nan\] without bins"):
        LatencyHistogram().load_state_dict({"bins": np.zeros((0, 2), np.int64),
                                            "minimum": math.nan, "maximum": math.nan})
    LatencyHistogram().load_state_dict(LatencyHistogram().state_dict())
