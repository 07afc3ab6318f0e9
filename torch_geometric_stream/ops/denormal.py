"""Flushing denormal floats to zero on the CPU for a block of work.

With ``weight_decay > 0``, some weights shrink into the denormal range
(magnitudes under about ``1e-38`` in float32), where x86 CPUs compute tens of
times slower: after 1,500 samples of SLeDGe-L on Shopper at 0.1 % labels with
``weight_decay=1e-5``, 93 weights of ``f_E`` were denormal (none without weight
decay; Adam's moments held thousands of denormals either way, at no measurable
cost). Over that whole stream the step took 171-235 ms per sample (median, 3 seeds),
and 14-15 ms with denormals flushed (``benchmarks/RESULTS.md``, session 55).
Without weight decay, flushing changed no prediction in the runs checked.

:func:`flush_denormal` turns flushing on (:func:`torch.set_flush_denormal`) and
puts the process's previous setting back on exit.
:func:`~torch_geometric_stream.evaluation.prequential` runs inside it by default.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import torch

__all__ = ["flush_denormal", "flushes_denormal"]

#: A float64 denormal: read as zero when the CPU flushes denormals.
_DENORMAL = 1e-310


def flushes_denormal() -> bool:
    """Whether CPU arithmetic in this thread treats denormals as zero now
    (torch has no getter for :func:`torch.set_flush_denormal`'s setting)."""
    return torch.tensor(_DENORMAL, dtype=torch.float64).mul(1.0).item() == 0.0


@contextmanager
def flush_denormal() -> Iterator[bool]:
    """Flush denormal floats to zero on the CPU inside the ``with`` block,
    then restore the previous setting.

    The setting is the calling thread's (and that of threads it starts
    afterwards): with ``torch.set_num_threads(1)`` every CPU kernel follows it.

    Yields:
        bool: whether this CPU flushes (``False`` where torch cannot set it,
        e.g. a CPU without the SSE3 flags; the block then runs unchanged).

    Example:
        >>> with flush_denormal():
        ...     for x, y in stream:
        ...         prediction = learner.predict(x)
        ...         learner.learn(x, y)
    """
    before = flushes_denormal()
    supported = torch.set_flush_denormal(True)
    try:
        yield supported
    finally:
        torch.set_flush_denormal(before)
