"""Run many ``run`` commands, one after the other or in worker processes.

``tune --jobs N`` and ``benchmarks/accuracy.py --jobs N`` fill their grids through
:func:`run_commands`. A run's result does not depend on the number of jobs (each
run is seeded and runs in one process); only its timings do, since the workers
share the machine's cores.
"""
from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Optional, Sequence

import torch_geometric_stream

__all__ = ["INTERRUPT_GRACE_SECONDS", "run_commands"]

#: How long interrupted worker processes get to end (as a run does on Ctrl-C)
#: before they are killed.
INTERRUPT_GRACE_SECONDS = 5.0
#: The signal that interrupts a worker: SIGTERM, which a run takes as its first
#: Ctrl-C (it stops at the end of its sample) and never as a second, so that a
#: worker that got a terminal's Ctrl-C too (the terminal signals the whole process
#: group) still saves its checkpoint and partial record (on Windows, it kills).
_INTERRUPT = signal.SIGTERM


def run_commands(commands: Sequence[tuple[list[str], Path]], jobs: int = 1, threads: int = 1,
                 stop_on_failure: bool = False,
                 on_success: Optional[Callable[[Path], None]] = None,
                 quiet: bool = False) -> list[Optional[int]]:
    """Run ``(argv, output)`` pairs of ``python -m torch_geometric_stream``
    arguments and return their exit codes, in order.

    Args:
        commands: the arguments of each command (e.g. ``["run", "--dataset", ...]``)
            and the JSON it writes, which names the command in progress messages.
        jobs (int): ``1`` runs the commands in this process, one after the other;
            ``N > 1`` runs up to ``N`` at once, each in its own Python process with
            ``OMP_NUM_THREADS=threads``. A worker's output goes to
            ``<output>.log``, which is deleted when the command succeeds and kept
            (and named) when it fails.
        threads (int): threads of each worker process.
        stop_on_failure (bool): after a failure, start no further command (those
            already running finish); the ones never started get ``None``.
        on_success (callable, optional): called with a command's output path as
            soon as that command succeeds (e.g. to delete its checkpoint), so
            that an interrupted batch has tidied up after every finished run.
        quiet (bool): print only the failures: no ``start`` / ``done`` line, and
            a command run in this process writes nothing to stdout (its errors
            and warnings, on stderr, stay).

    On Ctrl-C no further command starts and the running workers are interrupted
    once (each run stops at the end of its sample, saving its checkpoint and
    partial record; killed if they have not ended within
    :data:`INTERRUPT_GRACE_SECONDS`); then the interrupt propagates.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    failed = threading.Event()
    workers = _Workers()
    run_one = (_run_quietly if quiet else _run_here) if jobs == 1 else workers.run

    def run(command: tuple[list[str], Path]) -> Optional[int]:
        if (stop_on_failure and failed.is_set()) or workers.interrupted.is_set():
            return None
        argv, output = command
        if not quiet:
            print(f"start {output.name}", flush=True)
        code = run_one(argv, output, threads)
        if code is None or (code != 0 and workers.interrupted.is_set()):
            return code  # never started, or stopped by Ctrl-C: no failure to report
        if code == 0:
            if not quiet:
                print(f"done {output.name}", flush=True)
            if on_success is not None:
                on_success(output)
        else:
            failed.set()
            print(f"failed with exit code {code}: {output.name}"
                  + (f" (output in {output.with_suffix('.log')})" if jobs > 1 else ""),
                  flush=True)
        return code

    if jobs == 1:
        return [run(command) for command in commands]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        try:
            return list(pool.map(run, commands))
        except KeyboardInterrupt:  # start no further command; stop the running ones
            pool.shutdown(wait=False, cancel_futures=True)
            workers.interrupt()
            raise


def _run_here(argv: list[str], output: Path, threads: int) -> int:
    from torch_geometric_stream.cli.main import dispatch  # the parser lives there
    return dispatch(argv)


def _run_quietly(argv: list[str], output: Path, threads: int) -> int:
    """:func:`_run_here`, its stdout (the run's summary table) discarded."""
    with contextlib.redirect_stdout(io.StringIO()):
        return _run_here(argv, output, threads)


class _Workers:
    """The worker processes of one :func:`run_commands` call, which Ctrl-C stops
    all at once."""

    def __init__(self) -> None:
        self._running: set[subprocess.Popen] = set()
        self._lock = threading.Lock()
        self.interrupted = threading.Event()

    def run(self, argv: list[str], output: Path, threads: int) -> Optional[int]:
        """Run one command in its own Python process, its output in ``<output>.log``
        (deleted when it succeeds); its exit code, ``None`` if interrupted before
        it started."""
        package_parent = str(Path(torch_geometric_stream.__file__).resolve().parents[1])
        env = {**os.environ, "OMP_NUM_THREADS": str(threads),
               "PYTHONPATH": os.pathsep.join(filter(None, [package_parent,
                                                           os.environ.get("PYTHONPATH")]))}
        log = output.with_suffix(".log")
        with log.open("w") as out:
            with self._lock:
                if self.interrupted.is_set():
                    return None
                process = subprocess.Popen(
                    [sys.executable, "-m", "torch_geometric_stream", *argv],
                    stdout=out, stderr=subprocess.STDOUT, env=env)
                self._running.add(process)
            try:
                code = process.wait()
            finally:
                with self._lock:
                    self._running.discard(process)
        if code == 0:
            log.unlink()
        return code

    def interrupt(self) -> None:
        """Start no further process and interrupt the running ones as Ctrl-C does
        (each run then ends with its own message in its log); kill those still
        running after :data:`INTERRUPT_GRACE_SECONDS`."""
        with self._lock:
            self.interrupted.set()
            processes = [process for process in self._running if process.poll() is None]
        for process in processes:
            process.send_signal(_INTERRUPT)
        deadline = time.monotonic() + INTERRUPT_GRACE_SECONDS
        for process in processes:
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
