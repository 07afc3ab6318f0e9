r"""Higher-order gradients through the fused backward passes.

The custom ``torch.autograd.Function`` s of the package
(:func:`~torch_geometric_stream.ops.l2_normalize`, the CSR kernels, the
structure regularizer's products) compute their gradient with fused kernels,
from tensors saved without a graph: fast, but not differentiable again (the
sparse kernels' own derivatives also refuse the duplicate entries a graph can
hold). Their backward runs with gradient mode on only when autograd was asked
for a graph of the gradient (``create_graph=True``: gradient penalties,
meta-learning, Hessian-vector products); there each takes :func:`plain_vjp`
instead, autograd's own gradient of the plain (dense, gather/scatter) form,
which can be differentiated again to any order. So does a backward given a
batched gradient (a ``vmap`` over the backward: ``is_grads_batched=True``,
``jacobian(..., vectorize=True)``), which the fused kernels have no batching
rule for (see :func:`plain_backward`).
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence

import torch
from torch import Tensor

from torch_geometric_stream.ops.functorch import is_batched_grad

__all__ = ["plain_backward", "plain_vjp"]


def plain_backward(grad: Tensor) -> bool:
    """Whether a custom backward takes :func:`plain_vjp`: autograd was asked for
    a graph of the gradient (gradient mode on), or the gradient is batched
    (see :func:`~torch_geometric_stream.ops.functorch.is_batched_grad`), which
    the fused kernels (sparse products, ``out=`` forms) have no batching rule
    for. Four flag reads on the first-order path.

    Args:
        grad (Tensor): the backward's incoming gradient.
    """
    return torch.is_grad_enabled() or is_batched_grad(grad)


def plain_vjp(function: Callable[..., Tensor], inputs: Sequence[Tensor], grad: Tensor,
              needs_input_grad: Optional[Sequence[bool]] = None
              ) -> tuple[Optional[Tensor], ...]:
    r"""The gradients :math:`g^\top \partial f / \partial x_i` of ``function`` at
    ``inputs``, as autograd computes them for the plain form, with their graph
    (in the inputs and ``grad``), so that they can be differentiated again.

    For a custom Function's backward while gradient mode is on: ``inputs``
    tensors it saved (inputs of its forward, so their graph leads back to
    what produced them), ``function`` recomputing the forward's value from
    them.

    Args:
        function (callable): the forward's plain form, :math:`(x_1, \ldots) \mapsto f`.
        inputs (sequence of Tensor): the :math:`x_i`.
        grad (Tensor): :math:`g`, the shape of :math:`f`.
        needs_input_grad (sequence of bool, optional): which :math:`x_i` get a
            gradient (``ctx.needs_input_grad``; entries past ``inputs`` are
            ignored). (default: every one)

    Returns:
        tuple: per input, its gradient (its shape) or ``None``.
    """
    needed = [True] * len(inputs) if needs_input_grad is None else [
        need for need, _ in zip(needs_input_grad, inputs)]
    with torch.enable_grad():
        # a view of each: the gradient in one input then takes no path through
        # another that was computed from it (b = 2a), which gets its own gradient
        aliases = [x.view_as(x) if need else x for x, need in zip(inputs, needed)]
        value = function(*aliases)
    grads = iter(torch.autograd.grad(value, [x for x, need in zip(aliases, needed) if need],
                                     grad, create_graph=True, allow_unused=True))
    return tuple(next(grads) if need else None for need in needed)
