"""``run --jobs``: the seeds of a run in spawned worker processes, on one shared copy
of its stream (in shared memory); Ctrl-C and SIGTERM reach the main process only,
which stops the workers at the end of their sample; a worker whose main process
dies (killed) ends at once."""
from __future__ import annotations

import argparse
import multiprocessing
import os
import signal
import threading
import time
from concurrent.futures import Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import fields
from multiprocessing.process import BaseProcess
from multiprocessing.synchronize import Event
from typing import Any, Callable, Iterator, Optional

import torch

from torch_geometric_stream.cli.errors import UsageError
from torch_geometric_stream.cli.interrupts import DeferredInterrupt
from torch_geometric_stream.cli.parallel import INTERRUPT_GRACE_SECONDS
from torch_geometric_stream.datasets import StreamDataset
from torch_geometric_stream.evaluation import PrequentialResult

__all__ = ["SharedStream", "run_in_workers", "worker_state"]

#: A seed's run in a worker (its arguments, its seed): its result and record,
#: ``None`` where the worker's stop event was set before it started. Pickled by
#: reference: a module-level function of a module the workers can import.
SeedTask = Callable[[argparse.Namespace, int],
                    Optional[tuple[PrequentialResult, dict[str, Any]]]]


class SharedStream:
    """A loaded :data:`~torch_geometric_stream.cli.run.Stream` (its dataset a
    :class:`StreamDataset`) for spawned worker processes: its arrays in shared
    memory, which a pickled ``SharedStream`` names rather than copies
    (``torch.multiprocessing``), so that the workers neither load the stream
    again nor each hold a copy of it."""

    def __init__(self, stream: tuple[StreamDataset, str, str]) -> None:
        dataset, self.name, self.source = stream
        self.x, self.y = (torch.from_numpy(array).share_memory_()
                          for array in (dataset.x, dataset.y))
        self.metadata = {field.name: getattr(dataset, field.name) for field in fields(dataset)
                         if field.name not in ("x", "y")}

    def stream(self) -> tuple[StreamDataset, str, str]:
        """The stream, its arrays views of the shared memory."""
        return (StreamDataset(x=self.x.numpy(), y=self.y.numpy(), **self.metadata),
                self.name, self.source)


#: How often the main process of ``run --jobs`` looks whether Ctrl-C came while it
#: waits for a seed.
_POLL_SECONDS = 0.1


def run_in_workers(args: argparse.Namespace, shared: SharedStream, seeds: list[int],
                   task: SeedTask, interrupt: Optional[DeferredInterrupt] = None
                   ) -> Iterator[tuple[int, PrequentialResult, dict[str, Any]]]:
    """Each seed with its result and record, in the order of ``seeds``, from up to
    ``args.jobs`` worker processes reading the ``shared`` stream, each seed run
    there by ``task``. An error in a
    worker is raised here; it, or a worker that dies (killed for lack of memory;
    the pool notices at the latest when another seed ends) stops the workers
    still running.

    The first Ctrl-C (or SIGTERM) of this process (``interrupt``, a fresh
    :class:`DeferredInterrupt` if not given) starts no further seed and stops the
    seeds in progress at the end of their sample: their records, with
    ``interrupted_at``, still come; those never started do not. A second Ctrl-C,
    or workers that have not returned within
    :data:`~torch_geometric_stream.cli.parallel.INTERRUPT_GRACE_SECONDS` of the
    first, raise ``KeyboardInterrupt`` and the workers still running are ended;
    the seeds returned before it (behind one not returned, in the order of
    ``seeds``) come first."""
    interrupt = DeferredInterrupt() if interrupt is None else interrupt
    stop = multiprocessing.get_context("spawn").Event()  # the workers' Ctrl-C
    seed = seeds[0]  # the first seed without a result
    pending: list[Future] = []
    unsent = 0  # the index of the first seed not yielded
    try:
        with _worker_pool(min(args.jobs, len(seeds)), shared, stop) as pool, \
                interrupt.deferring():
            try:  # a worker killed as it starts may break the pool before every seed is in
                with _signals_held():  # the workers spawned as the seeds go in
                    pending = [pool.submit(task, args, each) for each in seeds]
                deadline: Optional[float] = None  # set by Ctrl-C: when the workers are ended
                for seed, outcome in zip(seeds, pending):
                    while not outcome.done():
                        if interrupt.requested and deadline is None:
                            deadline = time.monotonic() + INTERRUPT_GRACE_SECONDS
                            _stop_workers(stop, pending)
                        if deadline is not None and time.monotonic() >= deadline:
                            raise KeyboardInterrupt  # a worker that does not stop: ended now
                        wait([outcome], timeout=_POLL_SECONDS)
                    if not outcome.cancelled() and (returned := outcome.result()) is not None:
                        yield (seed, *returned)
                    unsent += 1
            except BrokenProcessPool:
                raise UsageError(f"a worker process ended abruptly (killed, e.g. for lack of "
                                 f"memory: fewer --jobs need less); seed {seed} did not "
                                 f"finish") from None
    except KeyboardInterrupt:  # the workers still running are ended
        # the seeds that their workers returned (stopped at their sample, or done)
        # behind one that did not still come, so that their files are written
        for later, outcome in list(zip(seeds, pending))[unsent:]:
            if (outcome.done() and not outcome.cancelled() and outcome.exception() is None
                    and (returned := outcome.result()) is not None):
                yield (later, *returned)
        raise


def _stop_workers(stop: Event, pending: list[Future]) -> None:
    """Set the workers' ``stop`` event: those in a seed stop at the end of their
    sample, and none starts another; cancel the ``pending`` seeds not yet sent
    to a worker."""
    stop.set()
    for outcome in pending:
        outcome.cancel()


#: The signals that reach the main process of ``run --jobs`` only (Ctrl-C, and
#: SIGTERM from a batch scheduler, which sends it to every process of the job).
_MAIN_ONLY_SIGNALS = {signal.SIGINT, signal.SIGTERM}


@contextmanager
def _signals_held() -> Iterator[None]:
    """Hold :data:`_MAIN_ONLY_SIGNALS` within (POSIX; a signal mask): the workers
    spawned here start with them held, so that none that comes while a worker
    imports torch kills it before it ignores them (:func:`_start_worker`); this
    process gets those that came as it leaves."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _MAIN_ONLY_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextmanager
def _worker_pool(jobs: int, shared: SharedStream, stop: Event) -> Iterator[ProcessPoolExecutor]:
    """``jobs`` spawned worker processes (no fork of torch's threads) holding the
    ``shared`` stream and the ``stop`` event (:func:`_start_worker`); Ctrl-C
    and SIGTERM reach the main process only. Left by an error, Ctrl-C or a
    generator closed early, the pool kills the workers still running (SIGKILL:
    they ignore SIGTERM, all that the executor sends them when one of them dies).

    A worker gets the stream once, as it is spawned: the arrays' file descriptors
    are then inherited by the new process. Sent with each seed instead, they
    would be served by a thread of the main process, which prints a traceback
    (``ConnectionResetError``) when a worker is killed while it receives them."""
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_start_worker, initargs=(shared, stop))
    try:
        yield pool
    except BaseException:
        # killed before the shutdown: a pool broken by a dead worker (Python >= 3.12)
        # holds the lock that shutdown() takes while it waits for the others to end
        for worker in list(pool._processes.values()):  # no public way before Python 3.14
            worker.kill()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()


#: The stream of this worker process and the event its main process sets on
#: Ctrl-C (set by :func:`_start_worker`).
_worker_stream: Optional[SharedStream] = None
_worker_stop: Optional[Event] = None


def _start_worker(shared: SharedStream, stop: Event) -> None:
    """A worker process's start: it ignores Ctrl-C and SIGTERM (a terminal's and
    a batch scheduler's reach every process of the job), which its main process
    passes on as the ``stop`` event, and keeps the ``shared`` stream. Those
    that came while it started, held (:func:`_signals_held`), are dropped. It
    ends with its main process (:func:`_end_with_parent`)."""
    global _worker_stream, _worker_stop
    for signum in _MAIN_ONLY_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _MAIN_ONLY_SIGNALS)
    _worker_stream, _worker_stop = shared, stop
    threading.Thread(target=_end_with_parent, args=(multiprocessing.parent_process(),),
                     name="end with the main process", daemon=True).start()


def _end_with_parent(parent: BaseProcess) -> None:
    """Wait for this worker's ``parent`` to end, then end the worker at once. A
    main process that dies without stopping its workers (SIGKILL, the kernel's
    OOM killer) would leave them running their seed to its end for no one, then
    waiting forever for the next: this thread, blocked on the parent's sentinel
    (a pipe that closes as the parent ends, on any OS), costs the samples
    nothing. Ended, the worker writes nothing: its main process wrote its files."""
    parent.join()
    os._exit(1)  # no cleanup: the pool's queues and their locks are the dead parent's


def worker_state() -> tuple[Optional[SharedStream], Optional[Event]]:
    """This worker process's shared stream and stop event (:func:`_start_worker`;
    ``None`` outside a worker)."""
    return _worker_stream, _worker_stop
