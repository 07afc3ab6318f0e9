r"""The structure regularizer of SLeDGe without an :math:`N \times N` matrix.

With row-normalized inputs :math:`X` :math:`(N, d)` and embeddings :math:`E`
:math:`(N, h)`, :math:`K = XX^\top` and :math:`S = EE^\top`:

.. math::
    \|S - K\|_F^2 = \|E^\top E\|_F^2 - 2\,\|X^\top E\|_F^2 + \|X^\top X\|_F^2,

which costs :math:`O(N h^2 + N d h + N d^2)` instead of :math:`O(N^2 (h + d))`.
"""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

__all__ = ["structure_loss", "STRUCTURE_LOSS_FORMS"]

#: ``"plain"``: MSE of the cosine-similarity matrices (the authors' code);
#: ``"frobenius"``: both matrices divided by their Frobenius norm first (the paper's Eq. 14).
STRUCTURE_LOSS_FORMS = ("plain", "frobenius")

_EPS = 1e-12


def _gram_norm_sq(a: Tensor, b: Tensor) -> Tensor:
    r""":math:`\|A^\top B\|_F^2 = \operatorname{tr}(A A^\top B B^\top)` by the cheaper product."""
    if a.size(1) * b.size(1) <= a.size(0) * (a.size(1) + b.size(1)):
        return (a.t() @ b).square().sum()
    return ((a @ a.t()) * (b @ b.t())).sum()


def structure_loss(x: Tensor, emb: Tensor, *, query_index: Optional[Tensor] = None,
                   form: str = "plain", include_constant: bool = True,
                   num_rows: Optional[int] = None) -> Tensor:
    r"""Mean squared difference between input and embedding similarities.

    Args:
        x (Tensor): inputs :math:`(N, d)`, rows L2-normalized.
        emb (Tensor): embeddings :math:`(N, h)`, rows L2-normalized.
        query_index (Tensor, optional): only the rows ``query_index`` against
            all rows (SLeDGe-L's :math:`c \times N` block); ``None`` = all pairs.
        form (str): ``"plain"`` (authors' code) or ``"frobenius"`` (paper).
        include_constant (bool): add the term that does not depend on ``emb``
            (:math:`\|K\|_F^2`, plain form); gradients are the same without it.
        num_rows (int, optional): the number of rows :math:`n` the mean runs
            over, when the other :math:`N - n` rows of ``x`` and ``emb`` are
            zero padding (their pairs add nothing to any sum, so the result is
            the loss of the :math:`n` real rows, with shapes fixed at
            :math:`N`). ``None`` = :math:`N`.

    Returns:
        A scalar tensor, equal (up to rounding) to
        ``F.mse_loss(E_q @ E.T, X_q @ X.T)`` (each matrix divided by its
        Frobenius norm for ``"frobenius"``).
    """
    if form not in STRUCTURE_LOSS_FORMS:
        raise ValueError(f"form must be one of {STRUCTURE_LOSS_FORMS}, got {form!r}")
    num_rows = x.size(0) if num_rows is None else num_rows
    if query_index is not None:
        return _block_loss(x[query_index], x, emb[query_index], emb, form, num_rows)
    num_entries = num_rows ** 2
    emb_term = _gram_norm_sq(emb, emb)  # ||S||_F^2
    cross = _gram_norm_sq(x, emb)  # tr(K S)
    if form == "frobenius":  # a zero matrix (all-zero inputs) stays zero after scaling
        k_norm = _gram_norm_sq(x, x).sqrt().clamp_min(_EPS)
        return (2.0 - 2.0 * cross / (k_norm * emb_term.sqrt().clamp_min(_EPS))) / num_entries
    loss = emb_term - 2.0 * cross
    if include_constant:
        loss = loss + _gram_norm_sq(x, x)
    return loss / num_entries


def _block_loss(x_q: Tensor, x: Tensor, e_q: Tensor, e: Tensor, form: str,
                num_rows: int) -> Tensor:
    sim_e = e_q @ e.t()
    with torch.no_grad():
        sim_x = x_q @ x.t()
    if form == "frobenius":
        sim_e = sim_e / sim_e.norm().clamp_min(_EPS)
        sim_x = sim_x / sim_x.norm().clamp_min(_EPS)
    return (sim_e - sim_x).square().sum() / (x_q.size(0) * num_rows)
