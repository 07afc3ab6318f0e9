r"""Row-wise L2 normalization with a fused backward.

:func:`l2_normalize` computes what ``torch.nn.functional.normalize(x, dim=-1)``
computes, :math:`y = x / \max(\|x\|, \epsilon)`, with the closed-form gradient

.. math::
    \frac{\partial L}{\partial x} = \frac{g - y\,(y^\top g)}{\|x\|}
    \quad (\|x\| > \epsilon), \qquad \frac{g}{\epsilon} \quad (\|x\| < \epsilon),

at :math:`\|x\| = \epsilon` the one torch's ``clamp_min`` gives (the first in
torch 2.13, the second from 2.15), three passes over :math:`(N, h)` where
autograd's division by a broadcast norm takes about seven. The learned graph
normalizes every memory embedding on every step, so this sits on the per-sample
path. A gradient with a graph
(``create_graph=True``) is autograd's own instead (see
:mod:`~torch_geometric_stream.ops.higher_order`), differentiable again. Both functions here raise
:math:`\epsilon` to the dtype's smallest positive number, so that a zero row stays
zero in float16 too.
"""
from __future__ import annotations

import math
from typing import Any, Optional

import torch
from torch import Tensor

from torch_geometric_stream.ops.functorch import in_func_transform
from torch_geometric_stream.ops.higher_order import plain_backward, plain_vjp
from torch_geometric_stream.validation import check_has_values, check_positive

__all__ = ["l2_normalize"]

_EPS = 1e-12

#: The smallest positive (subnormal) number of each floating dtype: ``eps`` is raised to
#: it, since a smaller one (the default 1e-12 in float16) rounds to 0, and a zero row
#: would be divided by 0 (NaN) where it should stay zero. (A float16 subnormal is a
#: normal float32 number, which the kernels compute in: flushed denormals keep it.)
_SMALLEST_POSITIVE = {dtype: torch.finfo(dtype).tiny * torch.finfo(dtype).eps for dtype in
                      (torch.float16, torch.bfloat16, torch.float32, torch.float64)}


def _clamp_min_passes_at_min() -> bool:
    """Whether torch's ``clamp_min`` passes the gradient at ``x == min``: torch 2.13
    does (its backward keeps ``x >= min``), 2.15 does not (``x > min``, the
    minimum-norm subgradient, pytorch/pytorch#184572)."""
    with torch.inference_mode(False), torch.enable_grad():  # (an import under no_grad)
        x = torch.ones((), requires_grad=True)
        grad, = torch.autograd.grad(x.clamp_min(1.0), x)
    return bool(grad)


#: The norms whose gradient the clamp passes, chosen once: ``norm >= eps`` where
#: torch's ``clamp_min`` passes it at ``x == min``, else ``norm > eps`` (as
#: ``F.normalize`` and :func:`unit_rows` under ``torch.func`` do, either way).
_UNCLAMPED = torch.ge if _clamp_min_passes_at_min() else torch.gt


def _norm_floor(eps: float, dtype: torch.dtype) -> float:
    return max(eps, _SMALLEST_POSITIVE.get(dtype, 0.0))


def unit_rows(x: Tensor, eps: float = _EPS) -> Tensor:
    r"""Rows of ``x`` :math:`(\ldots, h)` divided by their L2 norm (at least ``eps``,
    and at least the dtype's smallest positive number: a zero row stays zero in
    float16 too), :math:`(\ldots, h)`, with autograd's own gradient. No checks: the
    learners' rows, where :func:`l2_normalize`'s fused backward is not needed."""
    return x / torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min(
        _norm_floor(eps, x.dtype))


class _L2Normalize(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor, eps: float) -> Tensor:
        norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True)
        denom = norm.clamp_min(eps)
        out = x / denom
        ctx.eps = eps
        ctx.save_for_backward(x, out, denom, _UNCLAMPED(norm, eps))
        return out

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Optional[Tensor], None]:
        x, out, denom, unclamped = ctx.saved_tensors
        if plain_backward(grad):  # create_graph (a gradient to differentiate again) or vmap
            return plain_vjp(lambda rows: unit_rows(rows, ctx.eps), (x,), grad)[0], None
        # (y . g) per row; 0 where the norm is under eps (the clamp has no gradient
        # there; at norm = eps it has torch's clamp_min's)
        prod = grad * out
        dot = prod.sum(dim=-1, keepdim=True).mul_(unclamped)
        # the product's buffer takes the result: one (N, h) allocation less
        return torch.addcmul(grad, out, dot, value=-1.0, out=prod).div_(denom), None


def l2_normalize(x: Tensor, eps: float = _EPS, *, check: bool = True) -> Tensor:
    r"""Rows of ``x`` divided by their L2 norm (at least ``eps``); equal to
    ``F.normalize(x, dim=-1, eps=eps)`` in value and gradient (up to rounding),
    except that ``eps`` is raised to the dtype's smallest positive number (in
    float16 ``F.normalize`` turns a zero row into NaN: its default eps rounds to
    0; here its gradient ``g / eps`` is inf there for ``|g| > 0.004``).

    Args:
        x (Tensor): the rows :math:`(\ldots, h)`.
        eps (float, optional): the smallest norm divided by.
            (default: ``1e-12``)
        check (bool, optional): refuse (``TypeError`` / ``ValueError``) an ``x``
            that is not a dense floating tensor with values and at least one
            dimension, or an ``eps`` that is not a finite number > 0 (no value of
            ``x`` is read); the learned graph's per-sample calls pass ``False``.
            (default: :obj:`True`)

    Returns:
        Tensor: :math:`(\ldots, h)`.
    """
    if check:
        if not isinstance(x, Tensor) or not x.is_floating_point():
            raise TypeError(f"x must be a floating-point tensor, got "
                            f"{getattr(x, 'dtype', type(x).__name__)}")
        check_has_values(x, "x")
        if x.dim() == 0:
            raise ValueError("x must have at least one dimension (rows of width h), got a "
                             "0-d tensor")
        if not math.isfinite(check_positive(eps, "eps")):
            raise ValueError(f"eps must be a finite number > 0, got {eps}")
    if in_func_transform():  # autograd's own form: the same values and gradient
        return unit_rows(x, eps)
    return _L2Normalize.apply(x, _norm_floor(eps, x.dtype))
