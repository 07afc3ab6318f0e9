"""Whether a :mod:`torch.func` transform is running, and what a tensor is under one.

The custom kernels of :mod:`torch_geometric_stream.ops` (CSR sparse products,
fused backward passes) serve autograd and ``torch.compile``; inside a
``torch.func`` transform (``grad``, ``vjp``, ``vmap``, ...), whose wrapped tensors
have no sparse form and no rule for these kernels, the callers take autograd's
plain forms instead: the same values and gradients, slower.

Supported transforms of the public building blocks
(:class:`~torch_geometric_stream.graph.DynamicKNNGraph`,
:func:`~torch_geometric_stream.graph.structure_loss`,
:class:`~torch_geometric_stream.nn.GCNBackbone`,
:func:`~torch_geometric_stream.ops.l2_normalize`,
:func:`~torch_geometric_stream.graph.topk_neighbors`):

- ``grad``, ``vjp``, ``jacrev`` and ``vmap``, nested too (``vmap(grad(f))`` for
  per-sample gradients): the values and gradients of a Python loop;
- ``vmap`` over a leading batch of graphs (node features, edge weights, query
  rows), each sample its own top-:math:`k` graph of :math:`k` edges per query.
  What gives samples graphs of different sizes cannot be batched and is
  refused with a ``ValueError`` naming it: a ``node_mask`` or ``key_mask``
  that varies over the batch (the number :math:`k'` of neighbours would),
  and ``DynamicKNNGraph``'s ``batch`` argument (graphs with fewer than
  :math:`k` rows drop edges);
- batched gradients of a graph built outside any transform, a ``vmap`` over
  the backward alone (``torch.autograd.grad(..., is_grads_batched=True)``,
  ``torch.autograd.functional.jacobian`` and ``hessian`` with
  ``vectorize=True``, ``gradcheck(check_batched_grad=True)``, ``vmap`` of
  ``torch.autograd.grad``): the fused backwards take autograd's plain forms
  (see :func:`is_batched_grad`), the numbers of a loop over the batch;
- ``torch.compile`` (``"eager"``, ``"aot_eager"`` and ``"inductor"`` backends),
  which traces through the custom kernels themselves, but for the CSR kernels:
  they build sparse tensors, which it cannot trace, so each runs eagerly behind
  one graph break where it is called.

:func:`~torch_geometric_stream.ops.csr_aggregate` and
:func:`~torch_geometric_stream.ops.csr_edge_dot` refuse every ``torch.func``
transform (``TypeError``): their callers take gather and scatter instead.
"""
from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["in_func_transform", "in_vmap", "is_batched", "is_batched_grad", "is_compiling",
           "is_exporting", "unwrapped"]

try:  # non-empty while a torch.func transform runs (torch has no public query for it)
    from torch._C._functorch import (TransformType, get_unwrapped, is_batchedtensor,
                                     is_functorch_wrapped_tensor, is_legacy_batchedtensor,
                                     peek_interpreter_stack)
    from torch._functorch.pyfunctorch import retrieve_all_functorch_interpreters
except ImportError:  # a torch without them: no transform to step aside for
    # torch's stub says CInterpreter, but the real one also returns None (no transform)
    def peek_interpreter_stack() -> None:  # type: ignore[misc]
        return None

    def is_functorch_wrapped_tensor(tensor: Tensor) -> bool:
        return False

    def is_legacy_batchedtensor(tensor: Tensor) -> bool:
        return False

#: Whether ``torch.compile`` is tracing (``torch.compiler.is_compiling``).
is_compiling = torch.compiler.is_compiling

#: Whether ``torch.export`` is tracing (``torch.compiler.is_exporting``): the CSR
#: kernels, which it cannot trace, give way to gather and scatter, and the input
#: checks read no values.
is_exporting = torch.compiler.is_exporting


def in_func_transform() -> bool:
    """Whether a :mod:`torch.func` transform is running. ``torch.compile``'s
    tracing, which runs one of these transforms itself and which the kernels
    support, is not counted."""
    return peek_interpreter_stack() is not None and not is_compiling()


def in_vmap() -> bool:
    """Whether a :func:`torch.func.vmap` runs, under or over other transforms."""
    return in_func_transform() and any(interpreter.key() == TransformType.Vmap
                                       for interpreter in retrieve_all_functorch_interpreters())


def unwrapped(tensor: Tensor) -> Tensor:
    """The plain tensor under ``tensor``'s :mod:`torch.func` wrappers: under
    ``vmap``, every sample's values at once, which input checks read where the
    wrapped tensor has no values to read.

    Args:
        tensor (Tensor): a tensor, wrapped or not (outside a transform: returned
            as it is).
    """
    if not in_func_transform():  # (nor does torch.compile trace the wrapper queries)
        return tensor
    while is_functorch_wrapped_tensor(tensor):
        tensor = get_unwrapped(tensor)
    return tensor


def is_batched(tensor: Tensor) -> bool:
    """Whether ``tensor`` varies over a running :func:`torch.func.vmap` (under any
    other transform's wrappers).

    Args:
        tensor (Tensor): the tensor (outside a transform: never batched).
    """
    if not in_func_transform():
        return False
    while is_functorch_wrapped_tensor(tensor):
        if is_batchedtensor(tensor):
            return True
        tensor = get_unwrapped(tensor)
    return False


def is_batched_grad(grad: Tensor) -> bool:
    """Whether a custom backward runs under a transform, given its incoming
    gradient: a :mod:`torch.func` transform, or the ``vmap`` over the backward
    alone that batched gradients take (``torch.autograd.grad(...,
    is_grads_batched=True)``, ``torch.autograd.functional.jacobian(...,
    vectorize=True)``, ``gradcheck(check_batched_grad=True)``), which runs no
    transform and batches ``grad`` itself. Three flag reads; never under
    ``torch.compile``, which cannot trace the queries (and traces the kernels).

    Args:
        grad (Tensor): the backward's incoming gradient.
    """
    return not is_compiling() and (is_legacy_batchedtensor(grad)
                                   or peek_interpreter_stack() is not None)
