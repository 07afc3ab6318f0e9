"""The exceptions the command line turns into one line on stderr: ``error: ...``
and exit code 2, or the interrupted command's message and exit code 130."""
from __future__ import annotations

__all__ = ["INTERRUPTED_EXIT_CODE", "Interrupted", "UsageError", "one_line"]

#: Exit code of a command stopped by Ctrl-C (128 + SIGINT, as the shells report it).
INTERRUPTED_EXIT_CODE = 130


class UsageError(ValueError):
    """Bad user input: an option, a configuration file, a dataset or a device."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during a command, with the one line that tells what is kept and how
    to continue (a ``KeyboardInterrupt``, so that an enclosing command, ``tune``
    around its runs, still sees an interrupt and can say its own line instead)."""


def one_line(error: BaseException) -> str:
    """The message of ``error`` on one line: the lines of a multi-line message (a
    dataset error's) joined with ``"; "``, the items of a ``"- item"`` list after
    their heading with ``", "``."""
    parts: list[str] = []
    for line in (line.strip() for line in str(error).splitlines()):
        if line.startswith("- ") and parts:
            parts[-1] += (" " if parts[-1].endswith(":") else ", ") + line[2:]
        elif line:
            parts.append(line)
    return "; ".join(parts) or type(error).__name__
