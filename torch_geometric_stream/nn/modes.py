"""A module tree's training mode, set at a fraction of ``nn.Module.train``'s cost."""
from __future__ import annotations

from torch import nn

__all__ = ["set_training"]

_MODULE_TRAIN = nn.Module.train
_MODULE_SETATTR = nn.Module.__setattr__


def set_training(module: nn.Module, mode: bool) -> None:
    """``module.train(mode)``: the same flags on the same modules, for the
    learners that switch to evaluation and back for every sample.

    ``nn.Module.train`` sets each module's ``training`` through
    ``nn.Module.__setattr__`` (which first looks for a parameter, buffer or
    submodule of that name) and walks the children with a generator; on a
    tree of a few dozen modules that is tens of microseconds. Here the flag is
    set directly on every module whose class keeps ``nn.Module``'s ``train``
    and ``__setattr__``, and every other module (a custom ``train`` that does
    more, a scripted module) gets its own ``train(mode)``, which covers its
    subtree as PyTorch would. Modules added or replaced at any time are
    found, as the walk reads the tree on every call.

    Args:
        module (nn.Module): the root of the tree.
        mode (bool): ``True`` for training, ``False`` for evaluation.
    """
    cls = type(module)
    if cls.train is not _MODULE_TRAIN or cls.__setattr__ is not _MODULE_SETATTR:
        module.train(mode)
        return
    object.__setattr__(module, "training", mode)
    children = module._modules
    # each child once, as Module.children() yields them
    for child in dict.fromkeys(children.values()) if len(children) > 1 else children.values():
        if child is not None:
            set_training(child, mode)
