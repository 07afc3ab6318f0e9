"""Parameter draws from a learner's own seed, whatever torch's global generator holds."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterable, Iterator, Optional

import torch

__all__ = ["seeded_draws"]


@contextmanager
def seeded_draws(seed: Optional[int], parameters: Iterable[torch.Tensor] = ()) -> Iterator[None]:
    """Inside, torch's generators draw from ``seed`` (``None``: from their state
    as it stands); after, they are back as they were before, also for the CUDA
    devices of ``parameters`` (where a module's ``reset_parameters()`` draws).

    Args:
        seed (int or None): what :func:`torch.manual_seed` takes, or ``None``.
        parameters (Iterable[Tensor], optional): tensors whose devices' generators are restored
            too. (default: :obj:`()`)
    """
    devices = sorted({p.device.index or 0 for p in parameters if p.device.type == "cuda"})
    with torch.random.fork_rng(devices=devices):
        if seed is not None:
            torch.manual_seed(seed)
        yield
