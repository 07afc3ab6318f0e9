"""Fixtures shared by the command-line tests."""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import pytest
from ctrl_c_helpers import reached_by_ctrl_c

from torch_geometric_stream.cli import main


@pytest.fixture
def quick_run() -> Callable[..., list[str]]:
    """``quick_run(output, *options)``: the arguments of a ``run`` command that
    takes a second (30 synthetic samples, the memory-only model) and writes ``output``."""

    def arguments(output: Path, *options: str) -> list[str]:
        return ["run", "--dataset", "synthetic", "--model", "memory", "--limit", "30",
                "--output", str(output), "--quiet", *options]

    return arguments


@pytest.fixture
def ctrl_c_raises(request) -> None:
    """Python's own Ctrl-C handler in place for the test."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, previous))


class ProcessGroup(subprocess.Popen):
    """``subprocess.Popen`` in a process group of its own (the group that a
    terminal's Ctrl-C or a batch scheduler's SIGTERM reaches:
    ``os.killpg(process.pid, ...)``), with Python's own Ctrl-C handler;
    :meth:`kill` kills the whole group (the command's workers too)."""

    def __init__(self, argv: list[str], **arguments: Any) -> None:
        super().__init__(reached_by_ctrl_c(argv), start_new_session=True, **arguments)

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):  # the whole group ended already
            os.killpg(self.pid, signal.SIGKILL)


@pytest.fixture
def process_group() -> Iterator[Callable[..., ProcessGroup]]:
    """``process_group(argv, **popen_arguments)``: a :class:`ProcessGroup`, which
    is killed and reaped when the test ends, whatever its outcome."""
    started: list[ProcessGroup] = []

    def start(argv: list[str], **arguments: Any) -> ProcessGroup:
        started.append(ProcessGroup(argv, **arguments))
        return started[-1]

    yield start
    for process in started:
        process.kill()
        process.communicate()


@pytest.fixture
def interrupted_main() -> Callable[[list[str]], int]:
    """``main(argv)`` for a command that gets Ctrl-C: an interrupt that escapes
    ``main`` fails the test instead of stopping pytest."""

    def run(argv: list[str]) -> int:
        try:
            return main(argv)
        except KeyboardInterrupt:
            pytest.fail("the interrupt escaped main()")

    return run


class StuckWorker:
    """A worker process (``subprocess.Popen``'s place) that runs until it gets a
    signal, or ends by itself with success after ``FINISH_SECONDS``."""

    FINISH_SECONDS = 4.0

    def __init__(self, started: list["StuckWorker"]) -> None:
        self.signals: list[int] = []
        self.returncode: Optional[int] = None
        self._ended = threading.Event()
        started.append(self)

    def _end(self, code: int) -> None:
        self.returncode = code
        self._ended.set()

    def send_signal(self, signum: int) -> None:
        self.signals.append(signum)
        self._end(-signum)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def poll(self) -> Optional[int]:
        return self.returncode

    def wait(self, timeout: Optional[float] = None) -> int:
        if not self._ended.wait(self.FINISH_SECONDS if timeout is None else timeout):
            if timeout is not None:
                raise subprocess.TimeoutExpired("worker", timeout)
            self._end(0)  # finished its point
        return self.returncode


@pytest.fixture
def ctrl_c_once_started(monkeypatch, request) -> Callable[[int], list[StuckWorker]]:
    """``ctrl_c_once_started(n)``: worker processes are :class:`StuckWorker`; once ``n``
    of them have started, the main thread gets Ctrl-C (SIGINT). Returns the list of
    the workers started."""
    from torch_geometric_stream.cli import parallel

    if not hasattr(signal, "pthread_kill"):
        pytest.skip("needs POSIX signals")
    # Python's own Ctrl-C handler for the test, whatever the process has now: once a
    # test imported CapyMOA, the JVM that JPype started handles SIGINT by ending the
    # process (exit status 130, the whole test run with it); a run started in the
    # background by a shell without job control ignores SIGINT
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, previous))

    def arrange(n: int) -> list[StuckWorker]:
        started: list[StuckWorker] = []
        popen = subprocess.Popen

        def start(argv: list[str], **kwargs: object) -> object:
            if "torch_geometric_stream" not in argv:  # not a worker
                return popen(argv, **kwargs)
            return StuckWorker(started)

        monkeypatch.setattr(parallel.subprocess, "Popen", start)
        main_thread = threading.main_thread().ident

        def interrupt() -> None:
            while len(started) < n:
                time.sleep(0.01)
            signal.pthread_kill(main_thread, signal.SIGINT)

        threading.Thread(target=interrupt, daemon=True).start()
        return started

    return arrange
