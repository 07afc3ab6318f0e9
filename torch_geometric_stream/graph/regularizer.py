r"""The structure regularizer of SLeDGe without an :math:`N \times N` matrix.

With row-normalized inputs :math:`X` :math:`(N, d)` and embeddings :math:`E`
:math:`(N, h)`, :math:`K = XX^\top` and :math:`S = EE^\top`:

.. math::
    \|S - K\|_F^2 = \|E^\top E\|_F^2 - 2\,\|X^\top E\|_F^2 + \|X^\top X\|_F^2,

which costs :math:`O(N h^2 + N d h + N d^2)` instead of :math:`O(N^2 (h + d))`.
The block of :math:`q` query rows against all rows (SLeDGe-L) follows the same
way, with :math:`\|E_q E^\top\|_F^2 = \langle E^\top E, E_q^\top E_q\rangle_F` and
:math:`\langle E_q E^\top, X_q X^\top\rangle_F = \langle E^\top X, E_q^\top X_q\rangle_F`;
it is used instead of the :math:`q \times N` matrices when it is cheaper (many
queries: SLeDGe-L with a large labeled memory).
"""
from __future__ import annotations

from typing import Any, Optional

import torch
from torch import Tensor

from torch_geometric_stream.ops.functorch import in_func_transform
from torch_geometric_stream.ops.higher_order import plain_backward, plain_vjp
from torch_geometric_stream.validation import (check_bool, check_positive_int,
                                               check_row_index, check_row_mask,
                                               check_same_device)

__all__ = ["structure_loss", "STRUCTURE_LOSS_FORMS"]

#: ``"plain"``: MSE of the cosine-similarity matrices (the authors' code);
#: ``"frobenius"``: both matrices divided by their Frobenius norm first (the paper's Eq. 14).
STRUCTURE_LOSS_FORMS = ("plain", "frobenius")

_EPS = 1e-12


class _SelfGramNormSq(torch.autograd.Function):
    r""":math:`\|E^\top E\|_F^2` with the gradient :math:`4\,E\,(E^\top E)`: one
    :math:`N \times h \times h` product backward, where autograd takes one per
    operand of :math:`E^\top E` and adds them. A gradient with a graph
    (``create_graph=True``) is autograd's own (:func:`plain_vjp`)."""

    @staticmethod
    def forward(ctx: Any, emb: Tensor) -> Tensor:
        gram = emb.t() @ emb
        ctx.save_for_backward(emb, gram)
        return gram.square().sum()

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Optional[Tensor]:
        emb, gram = ctx.saved_tensors
        if plain_backward(grad):
            return plain_vjp(lambda rows: _product_norm_sq(rows, rows), (emb,), grad)[0]
        return emb @ (gram * (4.0 * grad))


class _QuerySimilarity(torch.autograd.Function):
    r""":math:`E_q E^\top` :math:`(q, N)` of the rows ``query_index`` of :math:`E`
    :math:`(N, h)`, with the gradient :math:`G^\top E_q` plus :math:`G E` added into
    the rows ``query_index`` in place. Autograd would scatter :math:`G E` into an
    :math:`(N, h)` matrix of zeros and add that matrix: two more passes over
    :math:`(N, h)` on SLeDGe-L's per-sample step (the same sums: autograd adds the
    scattered rows to :math:`G^\top E_q` too, and computes both products alike).
    A gradient with a graph (``create_graph=True``) is autograd's own
    (:func:`plain_vjp`)."""

    @staticmethod
    def forward(ctx: Any, emb: Tensor, query_index: Tensor) -> Tensor:
        emb_q = emb[query_index]
        ctx.save_for_backward(emb, emb_q, query_index)
        return emb_q @ emb.t()

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Optional[Tensor], None]:
        emb, emb_q, query_index = ctx.saved_tensors
        if plain_backward(grad):
            return plain_vjp(lambda rows: rows[query_index] @ rows.t(), (emb,), grad)[0], None
        return (grad.t() @ emb_q).index_add_(0, query_index, grad @ emb), None


def _product_norm_sq(a: Tensor, b: Tensor) -> Tensor:
    r""":math:`\|A^\top B\|_F^2` with autograd's gradient."""
    return (a.t() @ b).square().sum()


def _gram_norm_sq(a: Tensor, b: Tensor) -> Tensor:
    r""":math:`\|A^\top B\|_F^2 = \operatorname{tr}(A A^\top B B^\top)` by the cheaper product."""
    if a.size(1) * b.size(1) <= a.size(0) * (a.size(1) + b.size(1)):
        if a is b and not in_func_transform():  # torch.func: autograd's own form
            return _SelfGramNormSq.apply(a)
        return _product_norm_sq(a, b)
    return ((a @ a.t()) * (b @ b.t())).sum()


def structure_loss(x: Tensor, emb: Tensor, *, query_index: Optional[Tensor] = None,
                   form: str = "plain", include_constant: bool = True,
                   num_rows: Optional[int] = None, row_mask: Optional[Tensor] = None,
                   check: bool = True) -> Tensor:
    r"""Mean squared difference between input and embedding similarities.

    Args:
        x (Tensor): inputs :math:`(N, d)`, rows L2-normalized.
        emb (Tensor): embeddings :math:`(N, h)`, rows L2-normalized.
        query_index (Tensor, optional): only the rows ``query_index`` against
            all rows (SLeDGe-L's :math:`c \times N` block); ``None`` = all pairs.
        form (str, optional): ``"plain"`` (authors' code) or ``"frobenius"``
            (paper). (default: :obj:`"plain"`)
        include_constant (bool, optional): add the term that does not depend on
            ``emb`` (:math:`\|K\|_F^2`, plain form); gradients in ``emb``
            are the same without it. (default: :obj:`True`)
        num_rows (int, optional): the number of rows :math:`n` the mean runs
            over, when the other :math:`N - n` rows of ``x`` and ``emb`` are
            zero padding (their pairs add nothing to any sum, so the result is
            the loss of the :math:`n` real rows, with shapes fixed at
            :math:`N`). ``None`` = :math:`N`.
        row_mask (Tensor, optional): ``bool`` :math:`(N,)`: the rows of ``emb``
            outside it count as zero rows (e.g. the embeddings of a memory's
            empty slots, whose rows of ``x`` are zero): for finite ``emb``, the
            loss and gradient of ``emb * row_mask.unsqueeze(1)`` given as
            ``emb``, exactly. With ``query_index`` and the
            :math:`q \times N` form, the similarities of those rows are zeroed
            instead, which spares that :math:`(N, h)` product and its backward.
            ``None``: every row.
        check (bool, optional): check the inputs first (reading
            ``query_index``'s range costs one host sync on a GPU, so a
            per-sample step that built them itself passes ``False``).
            (default: :obj:`True`)

    Returns:
        A scalar tensor, equal (up to rounding) to
        ``F.mse_loss(E_q @ E.T, X_q @ X.T)`` (each matrix divided by its
        Frobenius norm for ``"frobenius"``).

    Raises:
        TypeError / ValueError: an unknown ``form``; with ``check``, ``x`` and
            ``emb`` that are not floating tensors :math:`(N, d)` and
            :math:`(N, h)` of one dtype and device with :math:`N \geq 1`, a
            ``query_index`` that is not a 1-D integer tensor of row indices,
            ``num_rows`` outside :math:`[1, N]`, or an ``include_constant``
            that is not a bool.
    """
    if form not in STRUCTURE_LOSS_FORMS:
        raise ValueError(f"form must be one of {STRUCTURE_LOSS_FORMS}, got {form!r}")
    if check:
        _check_input(x, emb, query_index, num_rows, row_mask)
        check_bool(include_constant, "include_constant")
    num_rows = x.size(0) if num_rows is None else num_rows
    constant = include_constant or form == "frobenius"
    block = query_index is not None and _block_is_cheaper(
        query_index.size(0), x.size(0), x.size(1), emb.size(1), constant)
    if row_mask is not None and not block:
        emb = emb * row_mask.unsqueeze(1).to(emb.dtype)
    if query_index is None:
        terms = (_gram_norm_sq(emb, emb), _gram_norm_sq(x, emb),
                 _gram_norm_sq(x, x) if constant else None)
        num_entries = num_rows ** 2
    else:
        x_q = x[query_index]
        num_entries = x_q.size(0) * num_rows
        if block:
            terms = _block_terms(x_q, x, query_index, emb, constant, row_mask)
        else:
            terms = _query_gram_terms(x_q, x, emb[query_index], emb, constant)
    emb_term, cross, k_term = terms  # ||S||^2, <S, K>, ||K||^2 (None: not needed)
    if form == "frobenius":  # a zero matrix (all-zero inputs) stays zero after scaling
        assert k_term is not None  # computed, as constant is on
        norms = k_term.sqrt().clamp_min(_EPS) * emb_term.sqrt().clamp_min(_EPS)
        return (2.0 - 2.0 * cross / norms) / num_entries
    loss = emb_term - 2.0 * cross
    if include_constant:
        assert k_term is not None  # computed, as constant is on
        loss = loss + k_term
    return loss / num_entries


def _check_input(x: Tensor, emb: Tensor, query_index: Optional[Tensor],
                 num_rows: Optional[int], row_mask: Optional[Tensor]) -> None:
    """Raise unless :func:`structure_loss`'s inputs fit together."""
    if not isinstance(x, Tensor) or not isinstance(emb, Tensor):
        raise TypeError(f"x and emb must be tensors, got {type(x).__name__} and "
                        f"{type(emb).__name__}")
    if not x.is_floating_point() or emb.dtype != x.dtype:
        raise TypeError(f"x and emb must have one floating-point dtype, got {x.dtype} and "
                        f"{emb.dtype}")
    if x.dim() != 2 or emb.dim() != 2 or emb.size(0) != x.size(0):
        raise ValueError(f"x (N, d) and emb (N, h) must be 2-D with one number of rows N, "
                         f"got {tuple(x.shape)} and {tuple(emb.shape)}")
    check_same_device(emb, x.device, "emb", "x's device")
    if x.size(0) == 0:
        raise ValueError("x has no rows: the structure loss is a mean over row pairs")
    if num_rows is not None and check_positive_int(num_rows, "num_rows") > x.size(0):
        raise ValueError(f"num_rows must be at most x's {x.size(0)} rows, got {num_rows}")
    if query_index is not None:
        check_row_index(query_index, x.size(0))
    if row_mask is not None:
        check_row_mask(row_mask, x, "row_mask", "x's device")


def _gram_inner(a: Tensor, b: Tensor, a_q: Tensor, b_q: Tensor) -> Tensor:
    r""":math:`\langle A_q B_q^\top, A B^\top\rangle_F = \langle A^\top B, A_q^\top B_q\rangle_F`."""
    return ((a.t() @ b) * (a_q.t() @ b_q)).sum()


def _query_gram_terms(x_q: Tensor, x: Tensor, e_q: Tensor, e: Tensor,
                      constant: bool) -> tuple[Tensor, Tensor, Optional[Tensor]]:
    r""":math:`\|E_q E^\top\|_F^2`, :math:`\langle E_q E^\top, X_q X^\top\rangle_F` and
    (``constant``) :math:`\|X_q X^\top\|_F^2` from :math:`h \times h`,
    :math:`h \times d` and :math:`d \times d` products."""
    k_term = _gram_inner(x, x, x_q, x_q) if constant else None
    return _gram_inner(e, e, e_q, e_q), _gram_inner(e, x, e_q, x_q), k_term


def _block_terms(x_q: Tensor, x: Tensor, query_index: Tensor, e: Tensor,
                 constant: bool, row_mask: Optional[Tensor] = None
                 ) -> tuple[Tensor, Tensor, Optional[Tensor]]:
    r"""The same three terms from the :math:`q \times N` similarity matrices; the
    similarities of rows outside ``row_mask`` zeroed."""
    # a GPU keeps the CUDA-graph-checked ops, torch.func autograd's own
    plain = e.device.type != "cpu" or in_func_transform()
    sim_e = e[query_index] @ e.t() if plain else _QuerySimilarity.apply(e, query_index)
    if row_mask is not None:
        sim_e = sim_e.masked_fill(~(row_mask[query_index].unsqueeze(1) & row_mask), 0.0)
    sim_x = x_q @ x.t()
    k_term = sim_x.square().sum() if constant else None
    return sim_e.square().sum(), (sim_e * sim_x).sum(), k_term


def _block_is_cheaper(q: int, n: int, d: int, h: int, constant: bool) -> bool:
    r"""Whether the :math:`q \times N` matrices cost fewer multiply-adds than the
    Gram products (few queries, as SLeDGe-L with one labeled slot per class)."""
    gram = (n + q) * (h * h + h * d + (d * d if constant else 0))
    return q * n * (h + d) <= gram
