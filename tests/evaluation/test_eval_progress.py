"""Progress lines for a run whose output is a log file, not a terminal."""
import importlib
import io
import itertools
import sys

import pytest
import tqdm.notebook

from torch_geometric_stream.evaluation import prequential
from torch_geometric_stream.evaluation import progress as progress_module
from torch_geometric_stream.evaluation.progress import (LOG_PROGRESS_SECONDS, ProgressLines,
                                                        format_duration, progress_interval)

# the module, which the package's ``prequential`` function shadows as an attribute
prequential_module = importlib.import_module("torch_geometric_stream.evaluation.prequential")


def lines_of(total, every, times, done, done_before=0):
    """The lines a reporter writes when sample ``done[i]`` ends at ``times[i]`` (the
    reporter is made at time 0)."""
    clock = iter([0.0, *times])
    out = io.StringIO()
    reporter = ProgressLines(total, every=every, file=out, clock=lambda: next(clock),
                             done_before=done_before)
    for n in done:
        reporter.update(n, 0.5)
    return out.getvalue().splitlines()


def test_a_line_every_so_many_seconds_with_speed_and_time_left():
    # 1,000 samples, 50 ms each: 10 s after the start, 200 are done and 800 left (40 s)
    done = range(1, 401)
    lines = lines_of(1000, 10.0, [0.05 * n for n in done], done)
    assert lines == [
        "prequential: 200 / 1,000 samples (20 %), accuracy 0.5000, 50.0 ms per sample in all, "
        "about 40 s left",
        "prequential: 400 / 1,000 samples (40 %), accuracy 0.5000, 50.0 ms per sample in all, "
        "about 30 s left",
    ]


def test_a_resumed_run_counts_only_the_samples_this_process_ran():
    # resumed at 500 of 1,000: 200 samples in 10 s, so 300 left take 15 s
    done = range(501, 701)
    assert lines_of(1000, 10.0, [0.05 * (n - 500) for n in done], done, done_before=500) == [
        "prequential: 700 / 1,000 samples (70 %), accuracy 0.5000, 50.0 ms per sample in all, "
        "about 15 s left"]


def test_a_stream_of_unknown_length_gets_no_share_and_no_time_left():
    assert lines_of(None, 1.0, [0.5, 2.0], [1, 20]) == [
        "prequential: 20 samples, accuracy 0.5000, 100.0 ms per sample in all"]


@pytest.mark.parametrize("seconds, text", [(45, "45 s"), (89.4, "89 s"), (90, "2 min"),
                                           (120, "2 min"), (2040, "34 min"), (4000, "67 min"),
                                           (5399, "90 min"), (5400, "1.5 h"), (9000, "2.5 h")])
def test_durations_are_rounded_for_a_reader(seconds, text):
    assert format_duration(seconds) == text


def test_the_share_is_rounded_down_so_100_percent_means_done():
    assert lines_of(1000, 1.0, [2.0], [999]) == [
        "prequential: 999 / 1,000 samples (99 %), accuracy 0.5000, 2.0 ms per sample in all, "
        "about 0 s left"]


def test_a_run_of_no_samples_gets_no_share():
    # a run resumed at its end: nothing to divide by
    assert ProgressLines(0).line(0, 0.5, 1.0) == "prequential: 0 / 0 samples, accuracy 0.5000"


class PreviousLabel:
    """Predicts the label it learned last (0 before any)."""
    last = 0

    def predict(self, x):
        return self.last

    def learn(self, x, y):
        self.last = y


def tick(monkeypatch, seconds):
    """Make :func:`prequential`'s progress lines read a clock that moves ``seconds``
    at every read."""
    ticks = itertools.count(step=seconds)
    monkeypatch.setattr(prequential_module, "ProgressLines",
                        lambda total, every, desc, done_before: ProgressLines(
                            total, every=every, desc=desc, done_before=done_before,
                            clock=lambda: next(ticks)))


def test_prequential_writes_lines_instead_of_the_bar(monkeypatch, capsys):
    tick(monkeypatch, 1)  # one second per clock read: a line at every sample
    labels = [0, 0, 1, 1, 0, 1]  # predicted 0 0 0 1 1 0: 3 of 6 right
    prequential(PreviousLabel(), [([0.0], y) for y in labels], progress_every=1.0)
    err = capsys.readouterr().err
    assert "\r" not in err  # no bar
    lines = err.splitlines()
    assert len(lines) == 6
    assert lines[-1] == "prequential: 6 / 6 samples (100 %), accuracy 0.5000, 1000.0 ms per sample in all"


@pytest.mark.parametrize("desc", [None, ""])
def test_a_run_without_desc_writes_lines_and_a_bar_without_a_first_word(desc, monkeypatch,
                                                                          capsys):
    # before: desc=None was refused ("desc must be a string, got NoneType"), which tqdm
    # takes; the lines read "None: 3 / 3 samples", ": 3 / 3 samples"
    tick(monkeypatch, 1)  # one second per clock read: a line at every sample
    samples = [([0.0], y) for y in [0, 0, 1]]  # predicted 0 0 0: 2 of 3 right
    prequential(PreviousLabel(), samples, progress_every=1.0, desc=desc)
    assert capsys.readouterr().err.splitlines()[-1] == (
        "3 / 3 samples (100 %), accuracy 0.6667, 1000.0 ms per sample in all")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # a terminal: the bar
    assert prequential(PreviousLabel(), samples, desc=desc).metrics["n_samples"] == 3
    assert capsys.readouterr().err.splitlines()[-1].startswith("100%|")


def test_a_resumed_prequential_counts_its_total_from_the_record_and_its_speed_from_now(
        monkeypatch, capsys):
    tick(monkeypatch, 1)  # one second per clock read: a line at every sample
    record = prequential_module.PrequentialRecord()
    for _ in range(2):  # positions 0 and 1 done before, both right
        record.update(0, 0, True, 0.001)
    labels = [0, 0, 1, 1, 0, 1]  # from position 2 predicted 0 1 1 0: 1 of 4 right
    prequential(PreviousLabel(), [([0.0], y) for y in labels], progress_every=1.0, start=2,
                initial=record.state_dict())
    # 6 of the run's 6 samples, 4 of them in 4 s in this process
    assert capsys.readouterr().err.splitlines()[-1] == (
        "prequential: 6 / 6 samples (100 %), accuracy 0.5000, 1000.0 ms per sample in all")


@pytest.mark.parametrize("every", [0, -1.0, float("nan")])
def test_a_progress_interval_that_is_no_positive_number_is_refused(every):
    with pytest.raises(ValueError, match="progress_every must be > 0"):
        prequential(lambda: None, [([0.0], 0)], progress=False, progress_every=every)


def test_a_bar_on_a_terminal_or_in_a_notebook_and_lines_to_a_file(monkeypatch):
    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", Terminal())
    assert progress_interval() is None
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert progress_interval() == LOG_PROGRESS_SECONDS
    monkeypatch.setattr(progress_module, "tqdm", tqdm.notebook.tqdm)  # a widget: no redraws
    assert progress_interval() is None


def test_prequential_from_python_writes_lines_where_stderr_is_no_terminal(monkeypatch, capsys):
    # before: the default drew the bar into a log file too (nohup, a pipe), a redraw
    # ten times a second; now it writes the command line's line a minute
    tick(monkeypatch, LOG_PROGRESS_SECONDS)  # a minute per clock read: a line a sample
    prequential(PreviousLabel(), [([0.0], y) for y in [0, 0, 1, 1, 0, 1]])
    err = capsys.readouterr().err
    assert "\r" not in err and "acc=" not in err  # no bar
    assert err.splitlines()[-1] == ("prequential: 6 / 6 samples (100 %), accuracy 0.5000, "
                                    "60000.0 ms per sample in all")
    prequential(PreviousLabel(), [([0.0], 0)], progress=False)  # an explicit choice holds
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("as_generator", [False, True])
def test_the_bar_ends_on_the_accuracy_of_the_whole_run(as_generator, monkeypatch, capsys):
    # before: the bar's acc was set every POSTFIX_EVERY samples only, so a run of
    # 250 ended on the accuracy after 200 samples (1.0000), not the result's 0.8000
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # a terminal: the bar
    labels = [0] * prequential_module.POSTFIX_EVERY + [1, 0] * 25  # the last 50 all wrong
    samples = [([0.0], y) for y in labels]
    result = prequential(PreviousLabel(), iter(samples) if as_generator else samples)
    assert result.metrics["accuracy"] == 0.8
    err = capsys.readouterr().err
    assert "\r" in err and err.rsplit("acc=", 1)[1].startswith("0.8000")
