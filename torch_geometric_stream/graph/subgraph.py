"""The receptive field of target rows: the subgraph a few rounds of message passing read."""
from __future__ import annotations

from typing import NamedTuple

import torch
from torch import Tensor

__all__ = ["InHopSubgraph", "in_hop_subgraph"]


class InHopSubgraph(NamedTuple):
    """What :func:`in_hop_subgraph` returns (the four results of PyG's
    ``k_hop_subgraph``, in its order)."""
    subset: Tensor  # (R,) the rows reached, ascending
    edge_index: Tensor  # (2, E') the kept edges, relabelled into subset
    mapping: Tensor  # (T,) each target's position in subset
    edge_mask: Tensor  # (E,) which edges are kept


def in_hop_subgraph(targets: Tensor, num_hops: int, edge_index: Tensor,
                    num_nodes: int) -> InHopSubgraph:
    """The rows within ``num_hops`` in-hops of ``targets``, and the edges into the
    rows within ``num_hops - 1`` in-hops: everything ``num_hops`` rounds of
    message passing into ``targets`` read.

    The same results, tensor for tensor, as PyG's
    ``k_hop_subgraph(targets, num_hops, edge_index, relabel_nodes=True,
    num_nodes=num_nodes, directed=True)`` from PyG 2.7 on (before it, PyG
    kept only the last hop's edges), with fewer tensor operations: the
    reached rows are kept in one mask that each hop widens (instead of a list
    of frontiers made unique at the end), and relabelled by its running count.
    No input is checked: for callers that built the graph themselves.

    Args:
        targets (Tensor): the target rows :math:`(T,)`.
        num_hops (int): the number of in-hops.
        edge_index (Tensor): the graph :math:`(2, E)`, ``edge_index[0]`` the
            source, ``edge_index[1]`` the target.
        num_nodes (int): the number of rows of the graph.
    """
    source, target = edge_index[0], edge_index[1]
    reached = torch.zeros(num_nodes, dtype=torch.bool, device=edge_index.device)
    reached[targets] = True
    if num_hops < 1:  # no hop: no edge
        edge_mask = reached.new_zeros(edge_index.size(1))
    for _ in range(num_hops):
        # the edges into every row reached so far: at the last hop, those into
        # the rows within num_hops - 1 hops, as k_hop_subgraph keeps them
        edge_mask = reached.index_select(0, target)
        # their sources join (a maximum per row: no mask of them to gather first)
        reached = reached.scatter_reduce(0, source, edge_mask, "amax")
    relabel = reached.cumsum(0).sub_(1)  # a reached row's position among the reached rows
    return InHopSubgraph(reached.nonzero().view(-1),
                         relabel.index_select(0, edge_index.masked_select(edge_mask)).view(2, -1),
                         relabel.index_select(0, targets), edge_mask)
