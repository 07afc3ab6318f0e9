"""``DeferredInterrupt``: the first Ctrl-C waits for a clean stop, a second one does not."""
from __future__ import annotations

import multiprocessing
import os
import signal
import threading

import pytest

from torch_geometric_stream.cli.interrupts import (DeferredInterrupt, interrupted_line,
                                                   until_stopped)
from torch_geometric_stream.cli.main import build_parser


def test_the_first_ctrl_c_is_noted_a_second_raises_and_the_handler_comes_back(ctrl_c_raises):
    interrupt = DeferredInterrupt()
    with pytest.raises(KeyboardInterrupt):
        with interrupt.deferring():
            signal.raise_signal(signal.SIGINT)
            assert interrupt.requested and interrupt()
            signal.raise_signal(signal.SIGINT)
            pytest.fail("the second Ctrl-C did not raise")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_handler_comes_back_after_an_error_and_outside_ctrl_c_raises(ctrl_c_raises):
    interrupt = DeferredInterrupt()
    with pytest.raises(ValueError, match="in the loop"):
        with interrupt.deferring():
            assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
            raise ValueError("in the loop")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)
    assert not interrupt()


def test_a_process_that_ignores_ctrl_c_keeps_ignoring_it(request):
    """E.g. a ``run --jobs`` worker, which its pool ends."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, previous))
    interrupt = DeferredInterrupt()
    with interrupt.deferring():
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        signal.raise_signal(signal.SIGINT)
    assert not interrupt()


def test_sigterm_is_deferred_where_ctrl_c_is_ignored(request):
    """A run started in the background by a script (``python -m ... &``, whose shell
    ignores Ctrl-C for it) still stops at the end of its sample on a scheduler's
    SIGTERM (before: killed at once, nothing written); Ctrl-C stays ignored."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, previous))
    interrupt = DeferredInterrupt()
    with interrupt.deferring():
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL  # else it kills pytest
        signal.raise_signal(signal.SIGTERM)
        assert interrupt()
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_sigterm_is_deferred_like_a_first_ctrl_c_and_never_raises(ctrl_c_raises):
    """A scheduler's SIGTERM, or ``tune --jobs`` passing on a Ctrl-C that the worker
    also got from the terminal: noted, never "stop at once"; the default comes back."""
    interrupt = DeferredInterrupt()
    with interrupt.deferring():
        signal.raise_signal(signal.SIGINT)   # the terminal's Ctrl-C
        signal.raise_signal(signal.SIGTERM)  # the parent's, passed on
        signal.raise_signal(signal.SIGTERM)
        assert interrupt()
        with pytest.raises(KeyboardInterrupt):  # a second Ctrl-C still stops at once
            signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_sigterm_first_then_one_ctrl_c_is_still_a_first_ctrl_c(ctrl_c_raises):
    interrupt = DeferredInterrupt()
    with interrupt.deferring():
        signal.raise_signal(signal.SIGTERM)
        signal.raise_signal(signal.SIGINT)
        assert interrupt()


def test_a_handler_of_the_callers_for_sigterm_is_left_alone(ctrl_c_raises, request):
    calls = []
    previous = signal.signal(signal.SIGTERM, lambda *_: calls.append("caller"))
    request.addfinalizer(lambda: signal.signal(signal.SIGTERM, previous))
    interrupt = DeferredInterrupt()
    with interrupt.deferring():
        signal.raise_signal(signal.SIGTERM)
    assert calls == ["caller"] and not interrupt()


def test_an_event_set_by_another_process_counts_as_a_deferred_ctrl_c(request):
    """A ``run --jobs`` worker ignores Ctrl-C; its main process sets the event, and
    the worker's seed stops at the end of its sample; the handlers stay as they were."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, previous))
    event = multiprocessing.get_context("spawn").Event()
    interrupt = DeferredInterrupt(event)
    with interrupt.deferring():
        signal.raise_signal(signal.SIGINT)  # the terminal's, ignored
        assert not interrupt.requested and not interrupt()
        event.set()
        assert interrupt.requested and interrupt()
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the pool's terminate() kills


@pytest.mark.parametrize("written, line", [
    ([], "run interrupted; nothing was saved: --seed 0,1,2 runs the rest"),
    ([1], "run interrupted; the files of seed(s) 1 are written: --seed 0,2 runs the rest"),
    # Ctrl-C after every seed's files (before: "--seed  runs the rest", no seed named)
    ([0, 1, 2], "run interrupted; the files of seed(s) 0, 1, 2 are written; the --plot and "
                "the summary table were not made")])
def test_a_run_of_several_seeds_stopped_at_once_names_the_seeds_to_run_again(written, line):
    """``run --jobs`` stopped before any seed made progress (or before their files):
    the seeds to run again, not ``--checkpoint``, which takes a single seed."""
    args = build_parser().parse_args(["run", "--dataset", "synthetic", "--seed", "0,1,2",
                                      "--jobs", "2", "--output", "run.json"])
    assert interrupted_line(args, None, [0, 1, 2], written) == line


def test_a_run_of_one_seed_stopped_at_once_points_at_checkpoint():
    args = build_parser().parse_args(["run", "--dataset", "synthetic"])
    assert interrupted_line(args, None, [0], []) == (
        "run interrupted; nothing was saved (--checkpoint FILE keeps a resumable state)")


def _pipe_with(text: str) -> tuple:
    """A pipe's read end as text, ``text`` in it and its write end kept open: a read
    past ``text`` waits for more, as standard input does while its writer lives."""
    read_end, write_end = os.pipe()
    writer = os.fdopen(write_end, "w")
    writer.write(text)
    writer.flush()
    return os.fdopen(read_end, "r"), writer


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_while_the_next_item_is_awaited_ends_the_items_at_once(ctrl_c_raises, signum):
    # before: the deferred stop waited for a row that never came (until a second Ctrl-C)
    reader, writer = _pipe_with("a\nb\n")
    interrupt = DeferredInterrupt()
    main_thread = threading.main_thread().ident
    timer = threading.Timer(0.5, signal.pthread_kill, (main_thread, signum))
    with reader, writer, interrupt.deferring():
        timer.start()
        items = list(until_stopped(reader, interrupt))  # waits after "b\n" until the signal
    timer.join()
    assert items == ["a\n", "b\n"] and interrupt.requested
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_stop_before_the_first_item_is_an_interrupt_and_one_asked_before_reads_nothing(
        ctrl_c_raises):
    reader, writer = _pipe_with("")
    interrupt = DeferredInterrupt()
    timer = threading.Timer(0.5, signal.pthread_kill,
                            (threading.main_thread().ident, signal.SIGINT))
    with reader, writer, interrupt.deferring():
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            next(until_stopped(reader, interrupt))
        timer.join()
        writer.write("a\n")
        writer.flush()
        with pytest.raises(KeyboardInterrupt):  # asked before: nothing is read
            next(until_stopped(reader, interrupt))
        assert reader.readline() == "a\n"


def test_items_end_with_their_iterable_and_without_signals_nothing_stops_them():
    interrupt = DeferredInterrupt()
    assert list(until_stopped(iter("abc"), interrupt)) == ["a", "b", "c"]
    assert not interrupt.requested
