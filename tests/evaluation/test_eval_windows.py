"""prequential(..., window=N): the metrics of each consecutive window of N samples,
exact, equal under both histories, through a resume and up to where a run stopped."""
import csv
import math

import numpy as np
import pytest

from torch_geometric_stream import evaluation
from torch_geometric_stream.evaluation import HISTORIES, PrequentialRecord, prequential
from torch_geometric_stream.evaluation.windows import WINDOW_COLUMNS, WindowedMetrics


class Scripted:
    """Duck-typed learner predicting ``predictions`` in turn."""

    def __init__(self, predictions):
        self.predictions = iter(np.asarray(predictions).tolist())

    def predict(self, x):
        return next(self.predictions)

    def learn(self, x, y):
        pass


def run(labels, predictions, **options):
    labels = np.asarray(labels)
    stream = list(zip(np.zeros((labels.size, 1)), labels.tolist()))
    return prequential(Scripted(predictions), stream, progress=False, **options)


def random_run(seed, samples, classes=4):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, samples)
    predictions = np.where(rng.random(samples) < 0.6, labels, rng.integers(0, classes, samples))
    return labels, predictions, rng.random(samples) < 0.3


def assert_same_windows(got, expected):
    assert list(got) == list(expected) == list(WINDOW_COLUMNS)
    for key in WINDOW_COLUMNS:
        np.testing.assert_array_equal(got[key], expected[key], err_msg=key)


# 7 samples, windows of 3: [0, 3), [3, 6), [6, 7)
LABELS = [0, 1, 1, 0, 0, 1, 1]
PREDICTIONS = [0, 1, 0, 0, 1, 1, 1]
MASK = np.array([1, 0, 1, 1, 0, 0, 1], dtype=bool)


@pytest.mark.parametrize("history", HISTORIES)
def test_seven_samples_in_windows_of_three_by_hand(history):
    result = run(LABELS, PREDICTIONS, label_mask=MASK, history=history, window=3)
    windows = result.windows
    np.testing.assert_array_equal(windows["start"], [0, 3, 6])
    np.testing.assert_array_equal(windows["end"], [3, 6, 7])
    np.testing.assert_array_equal(windows["n_samples"], [3, 3, 1])  # the last one partial
    np.testing.assert_array_equal(windows["n_labels"], [2, 1, 1])
    # [0, 3): labels 0 1 1, predicted 0 1 0: 2 right; recalls 1/1 and 1/2; kappa: the
    # marginals (1, 2) and (2, 1) agree by chance (2 + 2) / 9, so (2/3 - 4/9) / (5/9)
    # [3, 6): labels 0 0 1, predicted 0 1 1: the same counts mirrored
    # [6, 7): one right: every classifier agrees, kappa undefined
    np.testing.assert_allclose(windows["accuracy"], [2 / 3, 2 / 3, 1.0])
    np.testing.assert_allclose(windows["balanced_accuracy"], [0.75, 0.75, 1.0])
    np.testing.assert_allclose(windows["kappa"], [0.4, 0.4, math.nan])
    for key in ("start", "end", "n_samples", "n_labels"):
        assert windows[key].dtype == np.int64
    lists = result.to_dict()["windows"]
    assert lists["kappa"][2] is None and lists["n_samples"] == [3, 3, 1]
    assert lists["accuracy"] == windows["accuracy"].tolist()


def test_windows_start_at_the_runs_first_position():
    labels, predictions = [0] * 7, [0, 1, 0, 0, 0]  # for positions 2 to 6
    result = run(labels, predictions, start=2, window=3)
    np.testing.assert_array_equal(result.windows["start"], [2, 5])
    np.testing.assert_array_equal(result.windows["end"], [5, 7])
    np.testing.assert_allclose(result.windows["accuracy"], [2 / 3, 1.0])


@pytest.mark.parametrize("seed, samples, window", [(0, 1, 1), (1, 7, 1), (2, 500, 7),
                                                   (3, 500, 100), (4, 300, 1000)])
def test_both_histories_give_the_same_windows_as_the_samples_say(seed, samples, window):
    labels, predictions, mask = random_run(seed, samples)
    full, bounded = (run(labels, predictions, label_mask=mask, history=history, window=window)
                     for history in HISTORIES)
    assert_same_windows(bounded.windows, full.windows)
    # each window from the per-sample arrays
    for index, (begin, end) in enumerate(zip(full.windows["start"], full.windows["end"])):
        assert (begin, end) == (index * window, min((index + 1) * window, samples))
        assert full.windows["accuracy"][index] == full.correct[begin:end].mean()
        assert full.windows["n_labels"][index] == full.labeled[begin:end].sum()
    # one window over the whole run is the run
    whole = run(labels, predictions, label_mask=mask, window=samples)
    assert whole.windows["accuracy"].tolist() == [whole.metrics["accuracy"]]
    assert whole.windows["balanced_accuracy"].tolist() == [whole.metrics["balanced_accuracy"]]


def test_no_window_adds_nothing():
    result = run(LABELS, PREDICTIONS)
    assert result.windows is None and "windows" not in result.to_dict()
    assert PrequentialRecord().windowed is None and PrequentialRecord().window is None
    with pytest.raises(ValueError, match="save_windows_csv needs the windows of a run with "
                                         "window=N"):
        result.save_windows_csv("never.csv")


@pytest.mark.parametrize("history", HISTORIES)
@pytest.mark.parametrize("stopped_after", [4, 6, 10])  # mid-window, at a window's end, mid
def test_a_resumed_run_has_the_uninterrupted_windows(history, stopped_after):
    labels, predictions, mask = random_run(7, 23)
    whole = run(labels, predictions, label_mask=mask, history=history, window=4)
    states = {}
    run(labels, predictions, label_mask=mask, history=history, window=4,
        callback=lambda position, record: states.setdefault(position + 1, record.state_dict()))
    resumed = run(labels, predictions[stopped_after:], label_mask=mask, history=history,
                  window=4, start=stopped_after, initial=states[stopped_after])
    assert resumed.start == 0
    assert_same_windows(resumed.windows, whole.windows)


@pytest.mark.parametrize("history", HISTORIES)
def test_a_stopped_run_has_the_windows_of_the_samples_done(history):
    calls = iter(range(100))
    result = run(LABELS, PREDICTIONS, history=history, window=3, stop=lambda: next(calls) == 4)
    np.testing.assert_array_equal(result.windows["n_samples"], [3, 2])
    np.testing.assert_array_equal(result.windows["end"], [3, 5])
    np.testing.assert_allclose(result.windows["accuracy"], [2 / 3, 0.5])


def test_a_full_state_resumes_with_any_window_a_bounded_one_with_its_own():
    labels, predictions, _ = random_run(8, 20)
    states = {}
    for history in HISTORIES:
        run(labels[:9], predictions[:9], history=history, window=4,
            callback=lambda position, record: states.__setitem__(history, record.state_dict()))
    # the full history's windows are counted again from its samples: any window, or one now
    for window in (3, 4, None):
        resumed = run(labels, predictions[9:], window=window, start=9, initial=states["full"])
        if window is None:
            assert resumed.windows is None
        else:
            assert_same_windows(resumed.windows, run(labels, predictions, window=window).windows)
    # a bounded one keeps its window's counts only
    record = PrequentialRecord(history="bounded", window=3)
    with pytest.raises(ValueError, match=r"the record state was kept with window=4, this "
                                         r"record counts window=3: continue it with window=4"):
        record.load_state_dict(states["bounded"])
    assert record.metrics.n_samples == 0 and record.windowed.n_samples == 0  # as it was
    without = dict(states["bounded"], windows=None)
    with pytest.raises(ValueError, match="kept without windows, this record counts window=4"):
        PrequentialRecord(history="bounded", window=4).load_state_dict(without)
    # resumed without windows, a bounded run drops them
    resumed = run(labels, predictions[9:], history="bounded", start=9,
                  initial=states["bounded"])
    assert resumed.windows is None and resumed.metrics["n_samples"] == 20


def test_a_bounded_windows_state_that_does_not_fit_is_refused_whole():
    record = PrequentialRecord(history="bounded", window=4)
    for sample in range(6):
        record.update(sample % 2, 0, True, 0.001)
    state = record.state_dict()
    for bad, message in (({"samples": 3}, "inconsistent windows state"),
                         ({"done_hits": np.array([5])}, "inconsistent windows state"),
                         ({"done_kappa": np.array([0.1, 0.2])}, "inconsistent windows state"),
                         ({"done_hits": np.array([[1]])}, "done_hits must be a 1-D integer")):
        target = PrequentialRecord(history="bounded", window=4)
        with pytest.raises(ValueError, match=message):
            target.load_state_dict({**state, "windows": {**state["windows"], **bad}})
        assert target.metrics.n_samples == 0 and target.windowed.n_samples == 0
    # a corrupt checkpoint's float is refused, not truncated (int() passed 4.0 and 2.0)
    for bad, message in (({"size": 4.0}, "the windows state's size must be an integer"),
                         ({"samples": 2.0}, "the windows state's samples must be an integer")):
        target = PrequentialRecord(history="bounded", window=4)
        with pytest.raises(TypeError, match=message):
            target.load_state_dict({**state, "windows": {**state["windows"], **bad}})
        assert target.metrics.n_samples == 0 and target.windowed.n_samples == 0
    windows = WindowedMetrics(4)
    lacking = {key: value for key, value in state["windows"].items()
               if key not in ("hits", "done_kappa")}
    with pytest.raises(ValueError, match=r"^windows state lacks the entries "
                                         r"\['hits', 'done_kappa'\]$"):
        windows.load_state_dict(lacking)
    assert windows.n_samples == 0
    windows.load_state_dict(state["windows"])
    assert_same_windows(windows.columns(), record.result().windows)


def test_a_windows_state_with_a_full_or_overcounted_current_window_is_refused():
    """A current window of ``size`` samples would have been finished (and the
    next sample would never finish one); more hits or labels than samples cannot be."""
    full, three = WindowedMetrics(5), WindowedMetrics(4)
    for sample in range(4):
        full.update(sample % 2, 0, True)
    for sample in range(3):
        three.update(sample % 2, 0, True)  # 2 right of 3
    target = WindowedMetrics(4)
    for bad in ({**full.state_dict(), "size": 4},  # 4 samples in a window of 4
                {**three.state_dict(), "hits": 4},  # 4 right of 3
                {**three.state_dict(), "labels": 4}):  # 4 labels in 3 samples
        with pytest.raises(ValueError, match="inconsistent windows state: window=4"):
            target.load_state_dict(bad)
        assert target.n_samples == 0
    # 3 right of 3 fits the window, not its class counts (2 right): before, loaded,
    # with an accuracy of 1 beside the class counts' balanced accuracy
    with pytest.raises(ValueError, match=r"class counts of 3, 2 right"):
        target.load_state_dict({**three.state_dict(), "hits": 3})
    target.load_state_dict(three.state_dict())
    assert target.columns()["accuracy"].tolist() == [2 / 3]


def test_a_windows_state_with_finished_counts_outside_zero_to_size_is_refused():
    """A finished window of 4 holds 0 to 4 labels (and hits): -1 and 5 are refused,
    4 (every sample labeled) fits."""
    windows = WindowedMetrics(4)
    for sample in range(6):
        windows.update(sample % 2, 0, True)
    state = windows.state_dict()
    assert state["done_labels"].tolist() == [4] and state["done_hits"].tolist() == [2]
    target = WindowedMetrics(4)
    for key, count in (("done_labels", -1), ("done_labels", 5), ("done_hits", -1),
                       ("done_hits", 5)):
        with pytest.raises(ValueError, match="inconsistent windows state: window=4"):
            target.load_state_dict({**state, key: np.array([count])})
        assert target.n_samples == 0
    target.load_state_dict({**state, "done_hits": np.array([4])})
    assert target.columns()["accuracy"].tolist() == [1.0, 0.5]


def test_a_windows_state_of_another_size_is_refused_naming_both():
    five = WindowedMetrics(5)
    five.update(1, 1, True)
    target = WindowedMetrics(4)
    with pytest.raises(ValueError, match="the windows state was kept with window=5, "
                                         "these windows have window=4"):
        target.load_state_dict(five.state_dict())
    assert target.n_samples == 0


def test_a_windows_state_with_no_finished_window_loads_from_empty_lists():
    """Empty lists (as a state written as JSON holds them, float64 to NumPy)
    are columns of no finished window, whatever their dtype."""
    windows = WindowedMetrics(4)
    for sample in range(3):
        windows.update(sample % 2, 0, sample == 0)
    empty = dict.fromkeys(("done_hits", "done_labels", "done_balanced_accuracy",
                           "done_kappa"), [])
    target = WindowedMetrics(4)
    target.load_state_dict({**windows.state_dict(), **empty})
    assert_same_windows(target.columns(), windows.columns())
    assert target.columns()["n_labels"].tolist() == [1]


@pytest.mark.parametrize("window, error, message", [
    (0, ValueError, "window must be >= 1, got 0"),
    (-3, ValueError, "window must be >= 1, got -3"),
    (2.0, TypeError, "window must be an integer, got float"),
    (True, TypeError, "window must be an integer, got bool"),
    # its bounds are int64 positions: refused before the run, not after it (OverflowError)
    (2 ** 63, ValueError, r"window must be at most 2\*\*63 - 1 \(int64 stream positions\), "
                          r"got 9223372036854775808"),
])
def test_a_window_that_is_no_positive_integer_is_refused(window, error, message):
    learner = Scripted(PREDICTIONS)
    with pytest.raises(error, match=message):
        prequential(learner, [(np.zeros(1), 0)], progress=False, window=window)
    assert next(learner.predictions) == 0  # refused before the first sample
    with pytest.raises(error, match=message):
        PrequentialRecord(window=window)


@pytest.mark.parametrize("history", HISTORIES)
def test_the_largest_window_holds_the_whole_run(history):
    windows = run(LABELS, PREDICTIONS, history=history, window=2 ** 63 - 1).windows
    assert (windows["start"].tolist(), windows["end"].tolist(),
            windows["n_samples"].tolist()) == ([0], [7], [7])


@pytest.mark.parametrize("history", HISTORIES)
def test_windows_csv_has_one_row_per_window(tmp_path, history):
    result = run(LABELS, PREDICTIONS, label_mask=MASK, history=history, window=3)
    path = result.save_windows_csv(tmp_path / "windows.csv")
    with path.open(newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == list(WINDOW_COLUMNS)
    assert rows[1:] == [["0", "3", "3", "2", str(2 / 3), "0.75", str((2 / 3 - 4 / 9) / (5 / 9))],
                        ["3", "6", "3", "1", str(2 / 3), "0.75", str((2 / 3 - 4 / 9) / (5 / 9))],
                        ["6", "7", "1", "1", "1.0", "1.0", ""]]


def test_the_csv_files_are_written_whole(tmp_path, monkeypatch):
    # before, save_csv and save_windows_csv opened their path with "w": a crash or
    # Ctrl-C mid-write left a truncated table where the previous one was
    result = run(LABELS, PREDICTIONS, label_mask=MASK, history="full", window=3)

    def interrupted_replace(source, target):
        raise KeyboardInterrupt

    monkeypatch.setattr("torch_geometric_stream.files.os.replace", interrupted_replace)
    for save in (result.save_csv, result.save_windows_csv):
        path = tmp_path / "table.csv"
        path.write_text("previous\n")
        with pytest.raises(KeyboardInterrupt):
            save(path)
        assert path.read_text() == "previous\n"
        assert [p.name for p in tmp_path.iterdir()] == ["table.csv"]


def test_the_plot_draws_the_windows_as_steps(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    from matplotlib.axes import Axes
    drawn = []
    stairs = Axes.stairs
    monkeypatch.setattr(Axes, "stairs", lambda self, values, edges, **kwargs: drawn.append(
        (list(values), list(edges), kwargs["label"])) or stairs(self, values, edges, **kwargs))
    run(LABELS, PREDICTIONS, window=3).plot(tmp_path / "run.png", label="seed 0")
    assert drawn == [([2 / 3, 2 / 3, 1.0], [0, 3, 6, 7], "seed 0, windows of 3")]
    assert (tmp_path / "run.png").stat().st_size > 0
    run(LABELS, PREDICTIONS).plot(tmp_path / "plain.png")
    assert len(drawn) == 1  # no window, no steps
    # a run shorter than its window: one partial window, named by the window's size
    # (it said "windows of 7", its n_samples)
    shorter = run(LABELS, PREDICTIONS, window=10)
    assert shorter.window == 10
    shorter.plot(tmp_path / "short.png", label="seed 0")
    assert drawn[1] == ([5 / 7], [0, 7], "seed 0, windows of 10")


def test_the_windows_are_exported_by_the_evaluation_package():
    assert evaluation.WindowedMetrics is WindowedMetrics
    assert evaluation.WINDOW_COLUMNS is WINDOW_COLUMNS
