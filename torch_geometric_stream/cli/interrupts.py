"""Ctrl-C (and SIGTERM) deferred to a point where a run can stop cleanly (the end of a
sample), and what a ``run`` so stopped, or stopped at once, says it kept and how to
continue."""
from __future__ import annotations

import argparse
import signal
import threading
from contextlib import contextmanager
from multiprocessing.synchronize import Event
from pathlib import Path
from types import FrameType
from typing import Iterable, Iterator, NamedTuple, Optional, TypeVar

from torch_geometric_stream.cli.report import seed_path

__all__ = ["DeferredInterrupt", "StoppedBetweenSamples", "StoppedSeed", "interrupted_line",
           "modified_time", "stopped_after", "stopped_line", "until_stopped"]

Item = TypeVar("Item")


class _StopWaiting(BaseException):
    """A stop asked for while :meth:`DeferredInterrupt.waiting`: raised by the
    signal's handler, so that a read blocked on input gives up (a handler that
    returns lets Python retry the read). A ``BaseException``, which no
    ``except Exception`` on the way out of the read keeps."""


class DeferredInterrupt:
    """The first Ctrl-C (SIGINT) within :meth:`deferring` only sets
    :attr:`requested`, which the interrupted loop reads where it can stop
    cleanly (``prequential``'s ``stop``: the object is the predicate); a second
    one raises ``KeyboardInterrupt`` at once, as Python's handler does.

    SIGTERM (what a batch scheduler sends before it kills, and what ``tune
    --jobs`` passes on to its workers) sets :attr:`requested` too, and never
    raises: a worker that gets a terminal's Ctrl-C, its process group's, and its
    parent's SIGTERM still stops at the end of its sample.

    Deferred only on the main thread (the one that gets signals, and the only one
    that may set a handler): Ctrl-C where it raises ``KeyboardInterrupt``
    (:func:`signal.default_int_handler`), SIGTERM where its handler is the
    default one, also where Ctrl-C is ignored (a run started in the background
    by a script, ``python -m ... &``). Elsewhere (a run in another thread, a
    process that ignores both, such as a ``run --jobs`` worker, or a handler of
    the caller's) the handler in place is left alone and :attr:`requested`
    stays ``False`` until ``event`` is set.

    Args:
        event (optional): set (by another process: a ``run --jobs`` worker's
            parent, on its first Ctrl-C), it counts as a deferred Ctrl-C, in a
            process that gets none itself.
    """

    def __init__(self, event: Optional[Event] = None) -> None:
        self._requested = False
        self._ctrl_c = False  # a Ctrl-C came (the next one raises)
        self._waiting = False  # within waiting(): a stop raises _StopWaiting at once
        self._event = event

    @property
    def requested(self) -> bool:
        """Whether a stop was asked for: a Ctrl-C or SIGTERM deferred, or ``event`` set."""
        return self._requested or (self._event is not None and self._event.is_set())

    def __call__(self) -> bool:
        """Whether a stop was asked for (:attr:`requested`)."""
        return self.requested

    @contextmanager
    def deferring(self) -> Iterator[None]:
        """Defer Ctrl-C and SIGTERM within; the previous handlers are back on
        leaving, also by an error."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        ctrl_c = signal.getsignal(signal.SIGINT) is signal.default_int_handler
        term = signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        if ctrl_c:
            signal.signal(signal.SIGINT, self._handle_ctrl_c)
        if term:
            signal.signal(signal.SIGTERM, self._handle_term)
        try:
            yield
        finally:
            if ctrl_c:
                signal.signal(signal.SIGINT, signal.default_int_handler)
            if term:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """Within, a stop asked for (also before: :attr:`requested`) raises
        ``_StopWaiting`` at once: for a read that may wait for input without end
        (standard input), where no sample ends for the deferred stop to be read at.
        Only what such a read does may run within: it is abandoned where it was."""
        self._waiting = True
        try:
            if self.requested:
                raise _StopWaiting
            yield
        finally:
            self._waiting = False

    def _handle_ctrl_c(self, signum: int, frame: Optional[FrameType]) -> None:
        if self._ctrl_c:
            signal.default_int_handler(signum, frame)  # the second: KeyboardInterrupt now
        self._ctrl_c = True
        self._handle_term(signum, frame)

    def _handle_term(self, signum: int, frame: Optional[FrameType]) -> None:
        self._requested = True
        if self._waiting:
            raise _StopWaiting


def until_stopped(items: Iterable[Item], interrupt: DeferredInterrupt) -> Iterator[Item]:
    """The items of ``items`` until ``interrupt`` asks for a stop, also while the
    next one is awaited (standard input that sends no row: Ctrl-C or SIGTERM then
    ends the stream at once, where the deferred stop alone would wait for a row
    that may never come). The item being read is dropped; those yielded were
    whole. ``KeyboardInterrupt`` if the stop came before the first item: there is
    no stream to keep."""
    iterator = iter(items)
    yielded = False
    while True:
        try:
            with interrupt.waiting():
                item = next(iterator)
        except StopIteration:
            return
        except _StopWaiting:
            if not yielded:
                raise KeyboardInterrupt from None
            return
        yield item
        yielded = True


class StoppedSeed(NamedTuple):
    """A seed that Ctrl-C stopped cleanly after ``done`` stream positions, its
    files so far in ``partials`` (its record for ``--output``, its per-sample
    rows for ``--csv``; none without either)."""
    seed: int
    done: int
    partials: tuple[Path, ...]


class StoppedBetweenSamples(KeyboardInterrupt):
    """Ctrl-C deferred to the end of a sample (:class:`DeferredInterrupt`): the
    seeds in progress (one; those of the workers of ``--jobs``) ``stopped`` there,
    the checkpoint of a single seed (if ``--checkpoint``) saved there, the
    running accuracy of the samples done (if ``--plot``) in ``plot``."""

    def __init__(self, stopped: list[StoppedSeed], plot: Optional[Path] = None) -> None:
        super().__init__(stopped)
        self.stopped, self.plot = stopped, plot


def modified_time(path: Optional[Path]) -> Optional[int]:
    """When file ``path`` was last written (ns), ``None`` if it is not there."""
    return path.stat().st_mtime_ns if path is not None and path.exists() else None


def interrupted_line(args: argparse.Namespace, checkpoint_before: Optional[int],
                     seeds: list[int], written: list[int]) -> str:
    """The line of a run stopped by Ctrl-C: where its last checkpoint is, and how
    to continue from it (``checkpoint_before``: the checkpoint file's time
    before the run; unchanged, the run wrote none), or which of its ``seeds``
    finished with their files ``written``, and which are left; a resumed run
    that saved none names the ``--resume`` file, which still holds its state."""
    if written:
        files = f"the files of seed(s) {', '.join(map(str, written))} are written"
        if set(written) >= set(seeds):  # stopped after them: in the --plot or the summary
            return f"run interrupted; {files}; the --plot and the summary table were not made"
        return f"run interrupted; {files}: {_run_the_rest(args, seeds, written)}"
    saved = args.checkpoint is not None and modified_time(args.checkpoint) not in (
        None, checkpoint_before)
    if not saved and args.resume is not None:  # the state it resumed from is still there
        return (f"run interrupted before it saved a checkpoint; {args.resume} still holds "
                f"the state it resumed from: rerun the same command to continue from it")
    if len(seeds) > 1:  # no --checkpoint (it takes a single seed): the seeds to run again
        return f"run interrupted; nothing was saved: {_run_the_rest(args, seeds, written)}"
    if args.checkpoint is None:
        return "run interrupted; nothing was saved (--checkpoint FILE keeps a resumable state)"
    if not saved:
        every = ("" if args.checkpoint_every is not None
                 else "; --checkpoint-every N saves every N samples")
        return (f"run interrupted before its first checkpoint (this run wrote none to "
                f"{args.checkpoint}{every})")
    return f"run interrupted; last checkpoint in {args.checkpoint}: {_continue_from(args)}"


def _continue_from(args: argparse.Namespace) -> str:
    """How to continue from ``--checkpoint``."""
    resume = "" if args.resume == args.checkpoint else f" with --resume {args.checkpoint}"
    return f"rerun the same command{resume} to continue from it"


def stopped_line(args: argparse.Namespace, seeds: list[int], written: list[int],
                 stopped: StoppedBetweenSamples) -> str:
    """The line of a run that Ctrl-C stopped at the end of a sample: what it kept
    (the files of the ``seeds`` ``written`` before, the partial files of the
    seeds stopped and the partial plot, the checkpoint of a single seed at that
    sample) and how to continue."""
    parts = [f"run interrupted {stopped_after(stopped.stopped, several=len(seeds) > 1)}"]
    if written:
        parts.append(f"the files of seed(s) {', '.join(map(str, written))} are written")
    partials = [str(path) for seed in stopped.stopped for path in seed.partials]
    partials += [str(stopped.plot)] * (stopped.plot is not None)
    if partials:
        whose = "its" if len(stopped.stopped) == 1 else "their"
        parts.append(f"{whose} metrics so far are in {', '.join(partials)}")
    if args.checkpoint is not None:
        parts.append(f"its state at that sample is in {args.checkpoint}: "
                     f"{_continue_from(args)}")
    elif args.resume is not None:  # the state it resumed from is still there
        parts.append(f"{args.resume} still holds the state it resumed from: rerun the same "
                     f"command to continue from it")
    elif len(seeds) > 1:
        parts.append(_run_the_rest(args, seeds, written))
    else:
        parts.append("nothing resumable was saved (--checkpoint FILE keeps a resumable state)")
    return "; ".join(parts)


def _run_the_rest(args: argparse.Namespace, seeds: list[int], written: list[int]) -> str:
    """How to run the ``seeds`` of a run whose files were not ``written``: ``--seed``
    and, where one of several is left, the names its files have in this run
    (``run_seed1.json``), which a run of one seed does not add (its partial files,
    of those names, are removed as it finishes)."""
    rest = [seed for seed in seeds if seed not in written]
    names = "" if len(rest) != 1 or len(seeds) == 1 else "".join(
        f" {flag} {seed_path(path, rest[0], several=True)}"
        for flag, path in (("--output", args.output), ("--csv", args.csv),
                           ("--windows-csv", args.windows_csv), ("--plot", args.plot))
        if path is not None)
    return f"--seed {','.join(map(str, rest))}{names} runs the rest"


def stopped_after(stopped: list[StoppedSeed], several: bool) -> str:
    """Where Ctrl-C ``stopped`` the seeds in progress: ``after sample 13``, ``after
    sample 20 of seed 1`` (of ``several`` seeds), ``after sample 20 of seed 1 and
    sample 18 of seed 2``."""
    return "after " + " and ".join(f"sample {seed.done}" + f" of seed {seed.seed}" * several
                                   for seed in stopped)
