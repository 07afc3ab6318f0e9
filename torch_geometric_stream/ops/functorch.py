"""Whether a :mod:`torch.func` transform is running.

The custom kernels of :mod:`torch_geometric_stream.ops` (CSR sparse products,
fused backward passes) serve autograd and ``torch.compile``; inside a
``torch.func`` transform (``grad``, ``vjp``, ``vmap``, ...), whose wrapped tensors
have no sparse form and no rule for these kernels, the callers take autograd's
plain forms instead: the same values and gradients, slower.
"""
from __future__ import annotations

import torch

__all__ = ["in_func_transform"]

try:  # non-empty while a torch.func transform runs (torch has no public query for it)
    from torch._C._functorch import peek_interpreter_stack
except ImportError:  # a torch without it: no transform to step aside for
    def peek_interpreter_stack() -> None:
        return None

#: ``torch.compiler.is_compiling`` from torch 2.3 on; before it, compiled code takes
#: the plain forms too (the same results, slower).
_is_compiling = getattr(torch.compiler, "is_compiling", lambda: False)


def in_func_transform() -> bool:
    """Whether a :mod:`torch.func` transform is running. ``torch.compile``'s
    tracing, which runs one of these transforms itself and which the kernels
    support, is not counted."""
    return peek_interpreter_stack() is not None and not _is_compiling()
