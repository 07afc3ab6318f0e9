import math

import numpy as np
import pytest

from torch_geometric_stream.evaluation import StreamMetrics, accuracy_curve, tail_accuracy

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
