"""A learner's own random generator: made on its device, moved with it, saved with its state.

A learner that draws from its own :class:`torch.Generator` (SLeDGe's dropout
masks) repeats its run from its seed whatever else draws from torch's global
generator, two copies of it stay equal, and its ``state_dict()`` carries the
generator's position (:func:`generator_state`) so that a loaded state goes on
with the same draws. A generator draws only on its own device, and a CPU
state does not fit a CUDA generator (nor the other way round): moving the
learner, or loading a state saved on another kind of device, seeds a
generator there from the old state instead (:func:`generator_on`), the same
way every time.
"""
from __future__ import annotations

import hashlib
from typing import Any, Optional

import torch
from torch import Tensor

__all__ = ["generator_on", "generator_state", "load_generator_state", "seeded_generator"]


def seeded_generator(seed: int, device: torch.device) -> torch.Generator:
    """A new generator on ``device`` seeded with ``seed``.

    Args:
        seed (int): the seed, in :math:`[0, 2^{63})`.
        device (torch.device): where the generator draws.
    """
    return torch.Generator(device=device).manual_seed(seed)


def _seed_of(state: Tensor) -> int:
    """A seed in :math:`[0, 2^{63})` that the bytes of a generator state :math:`(B,)` determine."""
    digest = hashlib.blake2b(state.cpu().numpy().tobytes(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def generator_on(generator: torch.Generator, device: torch.device) -> torch.Generator:
    """``generator`` itself if it is on ``device``, else a new generator there,
    seeded from ``generator``'s state (for ``.to()``).

    Args:
        generator (torch.Generator): the generator to move.
        device (torch.device): where it must draw.
    """
    if generator.device == device:
        return generator
    return seeded_generator(_seed_of(generator.get_state()), device)


def generator_state(generator: torch.Generator,
                    previous: Optional[Tensor] = None) -> dict[str, Any]:
    """``{"cuda": whether it is a CUDA generator, "state": its bytes}``, a copy,
    for ``state_dict()`` (no strings: ``torch.testing.assert_close`` compares it).

    Args:
        generator (torch.Generator): the generator.
        previous (Tensor, optional): the ``"state"`` of an earlier result, given
            back as it is while it still holds the generator's bytes. A tensor
            pickles with its storage's address, so two new tensors of equal
            bytes pickle differently: with ``previous``, two states of a
            generator that has not drawn since pickle alike (River's checks
            compare pickles of a learner). (default: ``None``)
    """
    state = generator.get_state()
    if previous is not None and torch.equal(previous, state):
        state = previous
    return {"cuda": generator.device.type == "cuda", "state": state}


def load_generator_state(generator: torch.Generator, state: Any) -> torch.Generator:
    """A new generator on ``generator``'s device at the position
    :func:`generator_state` saved (seeded from it when it was saved on another
    kind of device).

    Args:
        generator (torch.Generator): the generator whose device the result
            draws on; it is left as it was.
        state (dict): a result of :func:`generator_state`.

    Raises:
        ValueError: if ``state`` is not such a dictionary, or its bytes are no
            state of a generator of its kind of device.
    """
    if not (isinstance(state, dict) and set(state) == {"cuda", "state"}
            and isinstance(state["cuda"], bool) and isinstance(state["state"], Tensor)
            and state["state"].dtype == torch.uint8 and state["state"].dim() == 1):
        raise ValueError("a generator state must be a dict with a bool 'cuda' and the "
                         f"generator's bytes 'state' (a 1-D uint8 tensor), got {state!r}")
    if state["cuda"] != (generator.device.type == "cuda"):
        return seeded_generator(_seed_of(state["state"]), generator.device)
    loaded = torch.Generator(device=generator.device)
    try:
        loaded.set_state(state["state"].cpu())
    except RuntimeError as error:
        kind = "a CUDA" if state["cuda"] else "a CPU"
        raise ValueError(f"the saved generator state does not fit {kind} generator: "
                         f"{error}") from None
    return loaded
