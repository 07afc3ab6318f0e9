"""Ctrl-C (and SIGTERM) deferred to a point where a run can stop cleanly (the end of a
sample)."""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from multiprocessing.synchronize import Event
from types import FrameType
from typing import Iterator, Optional

__all__ = ["DeferredInterrupt"]


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
    that may set a handler) and where Ctrl-C raises ``KeyboardInterrupt``
    (:func:`signal.default_int_handler`); elsewhere (a run in another thread, a
    process that ignores SIGINT, such as a ``run --jobs`` worker, or a handler
    of the caller's) the handler in place is left alone and :attr:`requested`
    stays ``False`` until ``event`` is set; SIGTERM is deferred along with
    Ctrl-C, where its handler is the default one.

    Args:
        event (optional): set (by another process: a ``run --jobs`` worker's
            parent, on its first Ctrl-C), it counts as a deferred Ctrl-C, in a
            process that gets none itself.
    """

    def __init__(self, event: Optional[Event] = None) -> None:
        self._requested = False
        self._ctrl_c = False  # a Ctrl-C came (the next one raises)
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
        """Defer Ctrl-C within; the previous handler is back on leaving, also by an error."""
        if (threading.current_thread() is not threading.main_thread()
                or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
            yield
            return
        term = signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
        previous = signal.signal(signal.SIGINT, self._handle_ctrl_c)
        if term:
            signal.signal(signal.SIGTERM, self._handle_term)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)
            if term:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)

    def _handle_ctrl_c(self, signum: int, frame: Optional[FrameType]) -> None:
        if self._ctrl_c:
            signal.default_int_handler(signum, frame)  # the second: KeyboardInterrupt now
        self._ctrl_c = self._requested = True

    def _handle_term(self, signum: int, frame: Optional[FrameType]) -> None:
        self._requested = True
