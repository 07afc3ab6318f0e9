"""Child processes that a Ctrl-C reaches, started without Python code between
``fork`` and ``exec``: ``subprocess``'s ``preexec_fn`` is not safe while other
threads run (a command-line test may leave a worker thread finishing), and once
crashed the test process itself."""
from __future__ import annotations

import sys

#: Reset SIGINT to its default disposition, which ``exec`` keeps, then become
#: ``argv[1:]``: a child inherits an ignored SIGINT from a parent that ignores it
#: (a background job of a non-interactive shell, as CI runs), and Python leaves
#: an ignored SIGINT ignored, so a Ctrl-C would never reach the command.
_LAUNCHER = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
             "os.execvp(sys.argv[1], sys.argv[1:])")


def reached_by_ctrl_c(argv: list[str]) -> list[str]:
    """``argv`` started so that a Ctrl-C (SIGINT) reaches it with its default
    disposition, whatever this process does with SIGINT (the process keeps its
    pid: ``exec`` replaces the launcher)."""
    return [sys.executable, "-c", _LAUNCHER, *argv]
