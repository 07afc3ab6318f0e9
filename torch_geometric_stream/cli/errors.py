"""The one exception the command line turns into ``error: ...`` and exit code 2."""
from __future__ import annotations

__all__ = ["UsageError", "one_line"]


class UsageError(ValueError):
    """Bad user input: an option, a configuration file, a dataset or a device."""


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
