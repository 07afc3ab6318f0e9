"""The one exception the command line turns into ``error: ...`` and exit code 2."""
from __future__ import annotations

__all__ = ["UsageError", "one_line"]


class UsageError(ValueError):
    """Bad user input: an option, a configuration file, a dataset or a device."""


def one_line(error: BaseException) -> str:
    """The message of ``error`` on one line (multi-line dataset errors are joined)."""
    lines = (line.strip() for line in str(error).splitlines())
    return " ".join(line for line in lines if line) or type(error).__name__
