"""Edge-weight normalization of learned graphs, safe for negative similarities."""
from __future__ import annotations

from typing import Optional

import torch
from torch import Tensor

from torch_geometric_stream.validation import check_bool, check_finite, check_weighted_graph

__all__ = ["normalize_edge_weight", "dense_adjacency", "with_self_loops", "NORMALIZATIONS"]

#: ``"symmetric"``: :math:`\tilde D^{-1/2}(A + I)\tilde D^{-1/2}` with :math:`I`
#: only filling the self-loops :math:`A` lacks, as PyG's
#: :func:`~torch_geometric.nn.conv.gcn_conv.gcn_norm` does, so a row that kept its
#: own similarity :math:`s_{ii}` (the top-:math:`(k+1)` does) has self weight
#: :math:`s_{ii}`; ``"symmetric-add"``: the same with :math:`I` added to every
#: diagonal entry, self weight :math:`s_{ii} + 1`: the paper's formula as it reads,
#: its top-:math:`k` keeping each node's own similarity (a cosine's highest);
#: ``"mean"``: every kept entry divided by its target's number of kept entries,
#: i.e. the authors' constant :math:`1/(k+1)` (no extra self-loop);
#: ``"none"``: the raw similarities.
NORMALIZATIONS = ("symmetric", "symmetric-add", "mean", "none")
#: The :data:`NORMALIZATIONS` that append one self-loop per node to the graph
#: (see :func:`with_self_loops`).
LOOP_NORMALIZATIONS = ("symmetric", "symmetric-add")


def normalize_edge_weight(edge_index: Tensor, edge_weight: Tensor, num_nodes: int,
                          normalization: str = "symmetric", *,
                          check: bool = True) -> tuple[Tensor, Tensor]:
    r"""Normalize a learned graph's edge weights.

    For ``"symmetric"`` a self-loop of weight 1 is added to every node that
    has none (an existing self-loop keeps its weight, as in PyG's
    :func:`~torch_geometric.nn.conv.gcn_conv.gcn_norm`); ``"symmetric-add"``
    adds 1 to every node's self-loop weight, existing or not; and

    .. math::
        \hat w_{j \to i} = \frac{w_{j \to i}}{\sqrt{\tilde d_i \tilde d_j}},
        \qquad \tilde d_i = \sum_{j} \max(0, w_{j \to i}).

    Degrees count only non-negative weights, so with the self-loop
    :math:`\tilde d_i \geq` its self weight, and a negative similarity can
    never produce a zero, negative, NaN or infinite degree (a node whose only
    self-loop weight is not positive gets degree 1).

    Args:
        edge_index (Tensor): :math:`(2, E)`, ``edge_index[1]`` the target.
        edge_weight (Tensor): :math:`(E,)`.
        num_nodes (int): number of nodes.
        normalization (str, optional): one of :data:`NORMALIZATIONS`.
            (default: :obj:`"symmetric"`)
        check (bool, optional): check the graph first (indices in
            :math:`[0, N)`, weight shape); reading the index range costs one host
            sync on a GPU, so a per-sample step that built its graph itself
            passes ``False``. (default: :obj:`True`)

    Returns:
        ``(edge_index, edge_weight)``, with self-loops appended for
        ``"symmetric"`` and ``"symmetric-add"`` (see :func:`with_self_loops`).

    Raises:
        TypeError / ValueError: with ``check``, a graph that does not fit
            ``num_nodes`` (see
            :func:`~torch_geometric_stream.validation.check_weighted_graph`),
            or ``edge_weight=None``; an unknown ``normalization``.
    """
    if normalization not in NORMALIZATIONS:
        raise ValueError(f"normalization must be one of {NORMALIZATIONS}, got {normalization!r}")
    if check:
        if edge_weight is None:
            raise TypeError("edge_weight must be a floating-point tensor (E,), got None")
        check_weighted_graph(edge_index, edge_weight, num_nodes)
    if normalization == "none":
        return edge_index, edge_weight
    if normalization == "mean":
        target = edge_index[1]
        count = _sum_by_target(torch.ones_like(edge_weight), target, num_nodes)
        return edge_index, edge_weight / count.index_select(0, target)
    edge_index, edge_weight = with_self_loops(edge_index, edge_weight, num_nodes,
                                              add=normalization == "symmetric-add", check=False)
    source, target = edge_index[0], edge_index[1]
    deg = _sum_by_target(edge_weight.clamp(min=0.0), target, num_nodes)
    inv_sqrt = deg.masked_fill_(~(deg > 0), 1.0).rsqrt_()
    return edge_index, inv_sqrt.index_select(0, source) * edge_weight * inv_sqrt.index_select(
        0, target)


def _sum_by_target(values: Tensor, target: Tensor, num_nodes: int) -> Tensor:
    """Per-node sums :math:`(N,)` of the edge ``values`` :math:`(E,)`: PyG's
    ``scatter(..., reduce="sum")`` bit for bit (also in float16 and bfloat16, where
    ``index_add_`` would round after every addition), with fewer calls on the
    per-sample path."""
    return values.new_zeros(num_nodes).scatter_add_(0, target, values)


def with_self_loops(edge_index: Tensor, edge_weight: Tensor, num_nodes: int,
                    fill_value: float = 1.0, add: bool = False, *,
                    check: bool = True) -> tuple[Tensor, Tensor]:
    r"""Give every node exactly one self-loop weight: its existing self-loop's
    weight, else ``fill_value``; with ``add=True``, ``fill_value`` plus its
    existing self-loops' weights (:math:`A + \text{fill} \cdot I`).

    The same weighted graph as PyG's
    :func:`~torch_geometric.utils.add_remaining_self_loops`, but built
    without data-dependent shapes, which would read sizes back from a GPU:
    existing self-loop edges stay in place with weight 0 and :math:`N` loops
    are appended, so the result has :math:`E + N` edges (a node that had a
    loop now has a zero-weight duplicate of it, which adds nothing to sums or
    degrees).

    Shapes: ``edge_index`` :math:`(2, E)`, ``edge_weight`` :math:`(E,)` ->
    :math:`(2, E + N)`, :math:`(E + N,)`.

    Args:
        edge_index (Tensor): the edges :math:`(2, E)`.
        edge_weight (Tensor): their weights :math:`(E,)`.
        num_nodes (int): the number of nodes :math:`N`.
        fill_value (float, optional): the weight of a new self-loop.
            (default: ``1.0``)
        add (bool, optional): add ``fill_value`` to the existing self-loops'
            weights instead of keeping them. (default: ``False``)
        check (bool, optional): check the arguments
            (:func:`normalize_edge_weight` itself passes ``False``).
            (default: ``True``)

    Raises:
        TypeError / ValueError: with ``check`` (as for :func:`normalize_edge_weight`),
            a graph that does not fit ``num_nodes`` (see
            :func:`~torch_geometric_stream.validation.check_weighted_graph`),
            ``edge_weight=None``, a ``fill_value`` that is not a finite number,
            or an ``add`` that is not a bool.
    """
    if check:
        if edge_weight is None:
            raise TypeError("edge_weight must be a floating-point tensor (E,), got None")
        check_weighted_graph(edge_index, edge_weight, num_nodes)
        check_finite(fill_value, "fill_value")
        check_bool(add, "add")
    source, target = edge_index
    is_loop = source == target
    # loop weights scattered by node; the other edges write into a discarded slot N
    slot = torch.where(is_loop, source, num_nodes)
    fill = edge_weight.new_full((num_nodes + 1,), fill_value)
    loop_weight = (fill.scatter_add(0, slot, edge_weight) if add
                   else fill.scatter(0, slot, edge_weight))[:num_nodes]
    loops = torch.arange(num_nodes, device=edge_index.device).expand(2, num_nodes)
    return (torch.cat([edge_index, loops], dim=1),
            torch.cat([torch.where(is_loop, 0.0, edge_weight), loop_weight]))


def dense_adjacency(edge_index: Tensor, edge_weight: Optional[Tensor], num_nodes: int,
                    dtype: torch.dtype = torch.float32, *, check: bool = True) -> Tensor:
    r"""The dense adjacency of a weighted edge list, in the layout of
    :meth:`~torch_geometric_stream.nn.GCNBackbone.forward_dense`:
    ``A[target, source] = weight`` (row = the receiving node, duplicates summed),
    the transpose of PyG's ``to_dense_adj(edge_index, edge_attr=weight)[0]``
    (``A[source, target]``). One :math:`(N, N)` allocation: the weights are added
    into the fresh zeros in place (autograd as for the out-of-place ``index_put``:
    the edge weights get the matrix's gradient).

    Args:
        edge_index (Tensor): :math:`(2, E)`, ``edge_index[0]`` the source,
            ``edge_index[1]`` the target.
        edge_weight (Tensor or None): :math:`(E,)`; ``None`` weighs every edge 1
            in ``dtype``.
        num_nodes (int): :math:`N`.
        dtype (torch.dtype, optional): the matrix's dtype without ``edge_weight``
            (else ``edge_weight``'s). (default: ``torch.float32``)
        check (bool, optional): as for :func:`normalize_edge_weight`.
            (default: :obj:`True`)

    Returns:
        Tensor: :math:`(N, N)`, ``A[target, source]``; pass
        :func:`normalize_edge_weight`'s edges for the normalized adjacency that
        ``forward_dense`` takes.

    Raises:
        TypeError / ValueError: with ``check``, a graph that does not fit
            ``num_nodes`` (see
            :func:`~torch_geometric_stream.validation.check_weighted_graph`).
    """
    if check:
        check_weighted_graph(edge_index, edge_weight, num_nodes)
    if edge_weight is None:
        edge_weight = torch.ones(edge_index.size(1), dtype=dtype, device=edge_index.device)
    adj = edge_weight.new_zeros(num_nodes, num_nodes)
    return adj.index_put_((edge_index[1], edge_index[0]), edge_weight, accumulate=True)
