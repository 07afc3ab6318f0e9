"""Progress of a long run as plain lines, for a log file or a batch job's output.

A tqdm bar redraws itself about ten times a second with carriage returns: on a
terminal that is a bar, but in a log file (``nohup``, a cluster job, a pipe) it is one
line that grows by megabytes over a long stream. :class:`ProgressLines` writes one
whole line every so many seconds instead (here wrapped)::

    prequential: 22,500 / 70,000 samples (32 %), accuracy 0.7123, 42.5 ms per sample in all,
    about 34 min left

:func:`progress_interval` chooses between the two for ``run`` and for
:func:`~torch_geometric_stream.evaluation.prequential` alike.
"""
from __future__ import annotations

import math
import sys
import time
from typing import Callable, Optional, TextIO

from tqdm.auto import tqdm

from torch_geometric_stream.validation import check_positive

__all__ = ["LOG_PROGRESS_SECONDS", "ProgressLines", "format_duration", "progress_interval"]

#: Seconds between two progress lines of a run whose output is not a terminal.
LOG_PROGRESS_SECONDS = 60.0


def progress_interval() -> Optional[float]:
    """How a run shows its progress unless told: ``None``, a tqdm bar, where it is
    redrawn in place (stderr a terminal, or a Jupyter notebook, where the bar is a
    widget); else, stderr a file or a pipe (``nohup``, a batch job), a line every
    :data:`LOG_PROGRESS_SECONDS`."""
    isatty = getattr(sys.stderr, "isatty", None)
    in_place = (callable(isatty) and isatty()) or any(
        base.__module__ == "tqdm.notebook" for base in tqdm.__mro__)
    return None if in_place else LOG_PROGRESS_SECONDS


def format_duration(seconds: float) -> str:
    """``seconds`` rounded for a reader: ``"45 s"``, ``"34 min"``, ``"2.5 h"``.

    Args:
        seconds (float): the duration.
    """
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class ProgressLines:
    r"""Write a run's progress to ``file`` as one line every ``every`` seconds.

    Args:
        total (int or None): samples in the whole run, counted from where its
            record starts (a resumed run included); ``None`` when unknown (a
            generator): the line then gives no share and no time left.
        every (float, optional): seconds between two lines.
            (default: :data:`LOG_PROGRESS_SECONDS`)
        file (TextIO, optional): where the lines go; ``None``: the
            ``sys.stderr`` of the moment of each line (so a redirected or
            captured stderr gets them). (default: :obj:`None`)
        clock (callable, optional): the time in seconds.
            (default: ``time.monotonic``)
        desc (str, optional): the line's first word; ``None`` or ``""``: none (as
            :class:`tqdm.tqdm` shows no description). (default: :obj:`"prequential"`)
        done_before (int, optional): samples of the run done before this process
            (a resumed run's), which :meth:`update`'s counts include.
            (default: ``0``)

    The speed and the time left come from the samples this process ran since the
    reporter was made, so a resumed run's earlier samples do not count as instant.
    The speed is wall time "in all" (the learner's steps, the evaluation around
    them, waiting for the cores): more than a record's ``ms_per_sample_median``,
    the median of the learner's steps alone.
    """

    def __init__(self, total: Optional[int], *, every: float = LOG_PROGRESS_SECONDS,
                 file: Optional[TextIO] = None,
                 clock: Callable[[], float] = time.monotonic,
                 desc: Optional[str] = "prequential", done_before: int = 0) -> None:
        self.total = total
        self.every = check_positive(every, "every")
        self.file = file
        self.clock = clock
        self.desc = desc
        self._started = clock()
        self._last = self._started
        self.done_before = done_before

    def update(self, done: int, accuracy: float) -> None:
        """Note that ``done`` samples of the run are evaluated, with running
        ``accuracy``; write a line if ``every`` seconds passed since the last.

        Args:
            done (int): the samples evaluated in all.
            accuracy (float): the running accuracy.
        """
        now = self.clock()
        if now - self._last < self.every:
            return
        self._last = now
        print(self.line(done, accuracy, now - self._started), flush=True,
              file=self.file if self.file is not None else sys.stderr)

    def line(self, done: int, accuracy: float, seconds: float) -> str:
        """The progress line after ``seconds`` in this process, ``done`` samples in all.

        Args:
            done (int): the samples evaluated in all.
            accuracy (float): the running accuracy.
            seconds (float): the time spent in this process.
        """
        ran = done - self.done_before
        parts = [(f"{self.desc}: " if self.desc else "") + f"{done:,}"
                 + ("" if self.total is None else f" / {self.total:,}") + " samples"]
        if self.total:
            parts[0] += f" ({math.floor(100 * done / self.total)} %)"
        parts.append(f"accuracy {accuracy:.4f}")
        if ran > 0:
            parts.append(f"{1000 * seconds / ran:.1f} ms per sample in all")
            if self.total is not None and done < self.total:
                parts.append(f"about {format_duration(seconds / ran * (self.total - done))} "
                             f"left")
        return ", ".join(parts)
