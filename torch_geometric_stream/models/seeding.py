"""Parameter draws from a learner's own seed, whatever torch's global generator holds."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Iterable, Iterator, Optional

import torch

__all__ = ["seeded_draws", "drawn_seed"]


@contextmanager
def seeded_draws(seed: Optional[int], parameters: Iterable[torch.Tensor] = ()) -> Iterator[None]:
    """Inside, torch's CPU generator and the default generators of the CUDA or
    MPS devices of ``parameters`` (where a module's ``reset_parameters()``
    draws) draw from ``seed``; after, they are back as they were before. No
    other generator is touched (:func:`torch.manual_seed` would reseed every
    device's). Without a seed, the draws come from torch's global generators as
    they stand and move them on, as an :class:`~torch.nn.Module`'s do.

    Args:
        seed (int or None): what :func:`torch.manual_seed` takes, or ``None``.
        parameters (Iterable[Tensor], optional): tensors whose devices' generators are seeded
            and restored too. (default: :obj:`()`)
    """
    if seed is None:
        yield
        return
    devices = sorted({p.device for p in parameters if p.device.type in ("cuda", "mps")}, key=str)
    states = [_device_rng_state(device) for device in devices]
    cpu_state = torch.get_rng_state()
    try:
        torch.random.default_generator.manual_seed(seed)
        for device in devices:
            _seed_default_generator(device, seed)
        yield
    finally:
        torch.set_rng_state(cpu_state)
        for device, state in zip(devices, states):
            _set_device_rng_state(device, state)


def drawn_seed() -> int:
    """A seed in :math:`[0, 2^{63} - 1)` drawn from torch's CPU generator (inside
    :func:`seeded_draws`, the learner's seed; outside, the global generator as it
    stands, which moves on)."""
    return int(torch.randint(2**63 - 1, ()))


# per device type (torch.mps's calls take no device: MPS has one)
def _device_rng_state(device: torch.device) -> torch.Tensor:
    """The state of the default generator of ``device`` (a CUDA or MPS one)."""
    if device.type == "cuda":
        return torch.cuda.get_rng_state(device)
    return torch.mps.get_rng_state()


def _set_device_rng_state(device: torch.device, state: torch.Tensor) -> None:
    """Put back the state of the default generator of ``device`` (a CUDA or MPS one)."""
    if device.type == "cuda":
        torch.cuda.set_rng_state(state, device)
    else:
        torch.mps.set_rng_state(state)


def _seed_default_generator(device: torch.device, seed: int) -> None:
    """Seed the default generator of ``device`` (a CUDA or MPS one) alone."""
    if device.type == "cuda":
        torch.cuda.default_generators[device.index or 0].manual_seed(seed)
    else:
        torch.mps.manual_seed(seed)
