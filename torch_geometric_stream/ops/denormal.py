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
puts the calling thread's previous setting back on exit.
:func:`~torch_geometric_stream.evaluation.prequential` runs inside it by default.
"""
from __future__ import annotations

import warnings
from contextlib import contextmanager
from typing import Iterator

import torch

__all__ = ["flush_denormal", "flushes_denormal"]

#: A float64 denormal: read as zero when the CPU flushes denormals.
_DENORMAL = 1e-310
#: Elements per thread of the all-threads probe: twice torch's grain size for
#: element-wise work, so that every intra-op thread gets a share.
_PER_THREAD = 2 ** 16
#: The most threads the all-threads probe gives a share (64 MiB of float64):
#: beyond them it would allocate without bound (``torch.set_num_threads(99999)``:
#: 52 GB). Workers start together, at torch's first multi-threaded operation, so
#: those it asks tell whether the others flush.
_MAX_PROBED_THREADS = 128


def flushes_denormal(all_threads: bool = False) -> bool:
    """Whether CPU arithmetic treats denormals as zero now (torch has no getter
    for :func:`torch.set_flush_denormal`'s setting).

    Args:
        all_threads (bool, optional): ask torch's intra-op worker threads too, by an operation
            large enough to be split over all :func:`torch.get_num_threads`
            threads (over 128 of more: they start together); otherwise only the
            calling thread is asked. (default: :obj:`False`)
    """
    threads = min(torch.get_num_threads(), _MAX_PROBED_THREADS)
    size = _PER_THREAD * threads if all_threads else 1
    product = torch.full((size,), _DENORMAL, dtype=torch.float64).mul(1.0)
    return not bool(product.any())


@contextmanager
def flush_denormal() -> Iterator[bool]:
    """Flush denormal floats to zero on the CPU inside the ``with`` block,
    then restore the previous setting.

    The setting is the calling thread's (and that of threads it starts
    afterwards): with ``torch.set_num_threads(1)`` every CPU kernel follows it.
    With more threads, torch's intra-op worker threads follow it only if they
    start inside the block (the first multi-threaded operation starts them):
    when they started before, a :class:`RuntimeWarning` says so, and
    ``torch.set_flush_denormal(True)`` before any torch work flushes in them too.
    Restoring on exit reaches the calling thread only: workers started inside
    the block keep flushing after it.

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
    if supported and torch.get_num_threads() > 1 and not flushes_denormal(all_threads=True):
        warnings.warn("denormal floats are flushed in this thread but not in torch's "
                      f"{torch.get_num_threads() - 1} intra-op worker thread(s), started "
                      "before: where weights decay into denormals those threads compute "
                      "much slower. Call torch.set_flush_denormal(True) before any "
                      "multi-threaded torch work, or run with torch.set_num_threads(1)",
                      RuntimeWarning, stacklevel=3)
    try:
        yield supported
    finally:
        torch.set_flush_denormal(before)
