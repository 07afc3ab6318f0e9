"""Learned top-k similarity graphs over a set of rows."""
from __future__ import annotations

import numbers
from typing import Callable, NamedTuple, NoReturn, Optional, Union, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from torch_geometric_stream.ops import CSRGraph, l2_normalize, supports_csr
from torch_geometric_stream.ops.functorch import in_vmap, is_batched
from torch_geometric_stream.graph.regularizer import structure_loss
from torch_geometric_stream.validation import (INDEX_DTYPES, check_edge_index,
                                               check_has_values, check_node_features,
                                               check_positive_int, check_row_index,
                                               check_row_mask, check_same_device,
                                               describe_index, torchscript_unsupported)

__all__ = ["DynamicKNNGraph", "StaticKNNGraph", "EmbeddingMLP", "TopK", "topk_neighbors",
           "ReceptiveTopK", "receptive_topk", "score_neighbors", "neighbors_to_edge_index",
           "check_search_dtype"]


class EmbeddingMLP(nn.Module):
    r"""The embedding function :math:`f_E`: an MLP with ReLU between layers and
    L2-normalized outputs.

    Args:
        in_channels (int): input size :math:`d`.
        hidden_channels (int): width and output size :math:`h`.
        num_layers (int, optional): number of linear layers :math:`\alpha_1 \geq 1`.
            (default: ``1``)

    Shapes:
        - **input:** :math:`(N, d)`; **output:** :math:`(N, h)`, unit rows
    """

    def __init__(self, in_channels: int, hidden_channels: int, num_layers: int = 1) -> None:
        super().__init__()
        self.in_channels = check_positive_int(in_channels, "in_channels")
        self.hidden_channels = check_positive_int(hidden_channels, "hidden_channels")
        self.num_layers = check_positive_int(num_layers, "num_layers")
        sizes = [in_channels] + [hidden_channels] * num_layers
        self.lins = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        for lin in self.lins:
            cast(nn.Linear, lin).reset_parameters()

    def forward(self, x: Tensor) -> Tensor:
        """The L2-normalized embeddings of ``x``.

        Args:
            x (Tensor): the rows :math:`(N, d)`.

        Returns:
            Tensor: :math:`(N, h)`.
        """
        for i, lin in enumerate(self.lins):
            x = lin(x)
            if i < self.num_layers - 1:
                x = F.relu(x)
        return l2_normalize(x, check=False)

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}({self.in_channels}, {self.hidden_channels}, "
                f"num_layers={self.num_layers})")


class TopK(NamedTuple):
    """Scores :math:`(Q, k)` and indices :math:`(Q, k)` of the kept neighbours."""
    values: Tensor
    indices: Tensor


def check_search_dtype(search_dtype: Union[str, torch.dtype, None]) -> Optional[torch.dtype]:
    """``search_dtype`` as a floating ``torch.dtype``, or ``None``.

    Args:
        search_dtype (str or torch.dtype or None): a dtype, or its name like
            ``"bfloat16"``.

    Raises:
        TypeError: for another type.
        ValueError: for a name no torch dtype has, or a dtype that is not
            floating.
    """
    if search_dtype is None:
        return None
    if isinstance(search_dtype, str):
        dtype = getattr(torch, search_dtype, None)
        if not isinstance(dtype, torch.dtype):
            raise ValueError(f"search_dtype {search_dtype!r} is not a torch dtype name")
        search_dtype = dtype
    if not isinstance(search_dtype, torch.dtype):
        raise TypeError(f"search_dtype must be a torch.dtype, a dtype name or None, "
                        f"got {type(search_dtype).__name__}")
    if not search_dtype.is_floating_point:
        raise ValueError(f"search_dtype must be a floating dtype, got {search_dtype}")
    return search_dtype


def score_neighbors(query: Tensor, keys: Tensor, neighbors: Tensor, *,
                    check: bool = True) -> Tensor:
    r"""Dot products of each query row with its neighbours ``keys[neighbors]``,
    differentiable in both.

    Args:
        query (Tensor): the query rows :math:`(Q, h)`.
        keys (Tensor): the rows :math:`(N, h)` the neighbours are taken from.
        neighbors (Tensor): row indices :math:`(Q, k)` into ``keys``.
        check (bool, optional): refuse (``TypeError`` / ``ValueError``)
            ``query`` and ``keys`` that are not real 2-D tensors of one width,
            dtype and device, or ``neighbors`` that are not integer
            :math:`(Q, k)` row indices into ``keys`` (one host sync on a GPU);
            callers that built ``neighbors`` themselves pass ``False``.
            (default: :obj:`True`)

    Returns:
        Tensor: the products :math:`(Q, k)`.
    """
    if check:
        _check_query_keys(query, keys)
        _check_neighbors(neighbors, keys, query.size(0))
    # the width, not -1: a view of no elements cannot infer it (k = 0, no queries)
    sources = keys.index_select(0, neighbors.reshape(-1)).view(*neighbors.shape, keys.size(1))
    return torch.bmm(sources, query.unsqueeze(-1)).squeeze(-1)


@torch.no_grad()
def topk_neighbors(query: Tensor, keys: Tensor, k: int, *, key_mask: Optional[Tensor] = None,
                   query_batch: Optional[Tensor] = None, key_batch: Optional[Tensor] = None,
                   block_size: int = 2048,
                   search_dtype: Union[str, torch.dtype, None] = None,
                   check_key_mask: bool = True) -> TopK:
    r"""Indices of the :math:`k` keys with the largest dot product, per query.

    Scores are computed in blocks of ``block_size`` query rows, so the peak
    extra memory is :math:`O(\text{block\_size} \cdot N)`, never
    :math:`O(Q \cdot N)`. No gradient flows through the selection.

    Args:
        query (Tensor): :math:`(Q, h)`.
        keys (Tensor): :math:`(N, h)`.
        k (int): neighbours per query, :math:`0 \leq k \leq N`.
        key_mask (Tensor, optional): :math:`(N,)` boolean, ``False`` keys are
            never selected (at least ``k`` keys must be allowed, unless
            ``query_batch`` is given).
        query_batch, key_batch (Tensor, optional): integer graph ids
            :math:`(Q,)` and :math:`(N,)` (given together): a query selects
            only keys of its own graph, as PyG's ``batch`` vector (any ids,
            sorted or not). A query whose graph has fewer than ``k`` allowed
            keys gets the others with score ``-inf`` (drop them).
        block_size (int, optional): query rows scored at once. (default: 2048)
        search_dtype (torch.dtype or str, optional): an approximate search: the
            neighbours are *chosen* with scores in this (lower) precision, e.g.
            ``torch.bfloat16``, and their returned scores recomputed in the
            inputs' precision. Near-ties may then pick other neighbours than
            the exact search. ``None``: exact, in the inputs' precision.
        check_key_mask (bool, optional): count the keys ``key_mask`` allows
            (one host sync on a GPU); callers that chose ``k`` by that count
            pass ``False``. Shapes and dtypes are checked either way.
            (default: :obj:`True`)

    Returns:
        :class:`TopK` of scores and ``int64`` indices into ``keys``, :math:`(Q, k)`
        (sorted by score only for the exact search).

    Raises:
        TypeError: ``query`` and ``keys`` of different dtypes, boolean or
            complex, a ``key_mask`` that is not boolean, or a ``query_batch`` or
            ``key_batch`` that is not an integer tensor.
        ValueError: ``query`` or ``keys`` not 2-D with one width, a ``key_mask``,
            ``query_batch`` or ``key_batch`` of another length or device than the
            rows it labels, only one of ``query_batch`` and ``key_batch``, ``k``
            outside :math:`[0, N]` or (without ``query_batch``) above the allowed
            keys, or ``block_size < 1``.
    """
    _check_topk_input(query, keys, key_mask, block_size)
    if query_batch is not None or key_batch is not None:
        _check_query_key_batch(query_batch, key_batch, query, keys)
    _check_k(k, 0, keys.size(0), "keys")
    if check_key_mask and query_batch is None:
        _check_allowed_keys(k, key_mask)
    search_dtype = check_search_dtype(search_dtype)
    if search_dtype == keys.dtype:
        search_dtype = None
    search_keys = keys if search_dtype is None else keys.to(search_dtype)
    values, indices = [], []
    # out of place, block by block (vmap has no batching rule for topk's out= form
    # nor for writes of batched blocks into preallocated results); no queries: one
    # empty block
    for start in range(0, max(query.size(0), 1), block_size):
        block = slice(start, start + block_size)
        scores = query[block].to(search_keys.dtype) @ search_keys.t()
        if key_mask is not None:
            scores.masked_fill_(~key_mask, float("-inf"))
        if query_batch is not None:  # keys of other graphs
            assert key_batch is not None  # given together (checked)
            scores.masked_fill_(query_batch[block, None] != key_batch, float("-inf"))
        top = scores.topk(k, dim=-1)
        block_values = top.values
        if search_dtype is not None:  # the picks' scores in the inputs' precision
            block_values = score_neighbors(query[block], keys, top.indices, check=False)
            if query_batch is not None:  # the picks the search could not avoid stay -inf
                block_values.masked_fill_(top.values.isneginf(), float("-inf"))
        values.append(block_values)
        indices.append(top.indices)
    if len(values) == 1:
        return TopK(values[0], indices[0])
    return TopK(torch.cat(values), torch.cat(indices))


def _check_topk_input(query: Tensor, keys: Tensor, key_mask: Optional[Tensor],
                      block_size: int) -> None:
    """Shapes and dtypes of :func:`topk_neighbors`' inputs (no value is read)."""
    _check_query_keys(query, keys)
    if key_mask is not None:
        check_row_mask(key_mask, keys, "key_mask", "the keys' device")
    if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
        raise ValueError(f"block_size must be a positive int, got {block_size!r}")


def _check_query_key_batch(query_batch: Optional[Tensor], key_batch: Optional[Tensor],
                           query: Tensor, keys: Tensor) -> None:
    """Raise unless both graph-id vectors are given and label ``query`` and ``keys``
    (no value is read)."""
    if query_batch is None or key_batch is None:
        raise ValueError("query_batch and key_batch must be given together (the graph ids of "
                         "the queries and of the keys)")
    _check_batch(query_batch, query, "query_batch", "query's device")
    _check_batch(key_batch, keys, "key_batch", "the keys' device")


def _check_batch(batch: Tensor, rows: Tensor, name: str, where: str) -> None:
    r"""Raise unless ``batch`` is an integer tensor :math:`(N,)` of graph ids over the
    :math:`N` rows of ``rows``, on their device (``where`` names it in the
    message); no value is read."""
    if not isinstance(batch, Tensor) or batch.dtype not in INDEX_DTYPES:
        raise TypeError(f"{name} must be an int64 (or int32) tensor of graph ids, got "
                        f"{describe_index(batch)}")
    check_has_values(batch, name)
    if batch.shape != (rows.size(0),):
        raise ValueError(f"{name} must have shape ({rows.size(0)},), one graph id per row, "
                         f"got {tuple(batch.shape)}")
    check_same_device(batch, rows.device, name, where)


def _check_query_keys(query: Tensor, keys: Tensor) -> None:
    """Raise unless ``query`` :math:`(Q, h)` and ``keys`` :math:`(N, h)` are real
    tensors of one width, dtype and device (no value is read)."""
    if not isinstance(query, Tensor) or not isinstance(keys, Tensor):
        raise TypeError(f"query and keys must be tensors, got {type(query).__name__} and "
                        f"{type(keys).__name__}")
    if query.dim() != 2 or keys.dim() != 2 or query.size(1) != keys.size(1):
        raise ValueError(f"query (Q, h) and keys (N, h) must be 2-D with one width h, got "
                         f"{tuple(query.shape)} and {tuple(keys.shape)}")
    if query.dtype != keys.dtype:
        raise TypeError(f"query and keys must have one dtype, got {query.dtype} and "
                        f"{keys.dtype}")
    if query.dtype == torch.bool or query.dtype.is_complex:
        raise TypeError(f"query and keys must be real numbers, got {query.dtype}")
    check_same_device(query, keys.device, "query", "the keys' device")


def _check_embeddings(emb: Tensor) -> None:
    r"""Raise unless ``emb`` is a floating :math:`(N, h)` tensor (no value is read)."""
    if not isinstance(emb, Tensor) or not emb.is_floating_point():
        raise TypeError(f"emb must be a floating-point tensor, got "
                        f"{getattr(emb, 'dtype', type(emb).__name__)}")
    if emb.dim() != 2:
        raise ValueError(f"emb must have shape (N, h), got {tuple(emb.shape)}")


def _check_neighbors(neighbors: Tensor, keys: Optional[Tensor],
                     num_queries: Optional[int] = None) -> None:
    r"""Raise unless ``neighbors`` is an integer :math:`(Q, k)` tensor with
    ``num_queries`` rows (if given) and, with ``keys`` :math:`(N, h)`, on their
    device with every index in :math:`[0, N)` (one host sync on a GPU)."""
    if not isinstance(neighbors, Tensor) or neighbors.dim() != 2 \
            or neighbors.dtype not in INDEX_DTYPES:
        raise TypeError(f"neighbors must be a 2-D int64 (or int32) tensor (Q, k) of row "
                        f"indices, got {describe_index(neighbors)}")
    if num_queries is not None and neighbors.size(0) != num_queries:
        raise ValueError(f"neighbors must have one row per query ({num_queries}), got "
                         f"{neighbors.size(0)}")
    if keys is not None:
        check_same_device(neighbors, keys.device, "neighbors", "the keys' device")
        check_row_index(neighbors.reshape(-1), keys.size(0), "neighbors")


def _check_k(k: int, low: int, high: int, what: str) -> None:
    """Raise unless ``k`` is an integer in :math:`[low, high]` (``high``: the number of
    ``what``)."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"k must be an integer, got {type(k).__name__}")
    if not low <= k <= high:
        raise ValueError(f"k must lie in [{low}, {high}] (the number of {what}), got {k}")


def _check_allowed_keys(k: int, key_mask: Optional[Tensor]) -> None:
    """Raise unless ``key_mask`` (if any) allows at least ``k`` keys (one host sync
    on a GPU)."""
    if key_mask is None:
        return
    _refuse_batched(key_mask, "key_mask", _MASK_COUNTED)
    if k > (allowed := int(key_mask.sum())):
        raise ValueError(f"k={k} but key_mask allows only {allowed} key(s)")


#: Why a row mask must be one for every sample of a vmap (see :func:`_refuse_batched`).
_MASK_COUNTED = ("the number of rows it allows, which bounds the neighbours per query, would "
                 "differ between samples")


def _refuse_batched(tensor: Tensor, name: str, reason: str) -> None:
    """Raise a ``ValueError`` (saying ``reason``) if ``tensor`` varies over a running
    :func:`torch.func.vmap`."""
    if is_batched(tensor):
        raise ValueError(f"{name} cannot vary over a torch.func.vmap batch: {reason}; pass "
                         f"one {name} for all samples")


class ReceptiveTopK(NamedTuple):
    """The rows :math:`(R,)` :func:`receptive_topk` searched and their :class:`TopK`
    :math:`(R, k)`."""
    rows: Tensor
    top: TopK


def receptive_topk(query_keys: Tensor, targets: Tensor, k: int, num_hops: int, *,
                   key_mask: Optional[Tensor] = None, max_rows: Optional[int] = None,
                   block_size: int = 2048,
                   search_dtype: Union[str, torch.dtype, None] = None,
                   check_key_mask: bool = True) -> Optional[ReceptiveTopK]:
    r"""The top-k neighbours of only the rows that ``num_hops`` rounds of message
    passing into ``targets`` read, in a top-k graph over the rows of ``query_keys``.

    In the graph where row :math:`i` receives edges from its :math:`k` best
    rows (:func:`topk_neighbors` of ``query_keys`` against itself), an
    :math:`L`-layer GNN's output at the targets depends on the rows within
    :math:`L` in-hops, and a degree normalization on their in-edges. This
    searches the targets, then the rows they picked, hop by hop, :math:`L + 1`
    rounds: every row within :math:`L` hops gets exactly the neighbours the
    search over all rows would give it, at the cost of those rows only.

    Args:
        query_keys (Tensor): :math:`(N, h)`, queries and keys at once.
        targets (Tensor): :math:`(T,)` rows whose outputs are needed.
        k (int): neighbours per row.
        num_hops (int): message-passing rounds :math:`L \geq 0`.
        key_mask (Tensor, optional): :math:`(N,)`, rows that may be picked.
        max_rows (int, optional): give up (return ``None``) when more rows than
            this would be searched: the whole search is then cheaper.
        block_size, search_dtype, check_key_mask: as in :func:`topk_neighbors`.

    Returns:
        :class:`ReceptiveTopK` (rows in search order, each once), or ``None``.

    Raises:
        ValueError: ``num_hops < 0``, ``max_rows < 0``, ``k`` outside
            :math:`[1, N]` or (with ``check_key_mask``) above the rows
            ``key_mask`` allows, or targets that are not row indices of
            ``query_keys``; as :func:`topk_neighbors` for ``query_keys``,
            ``key_mask`` and ``block_size``.
        TypeError: targets that are not an integer tensor, ``num_hops`` or
            ``max_rows`` that are not integers; as :func:`topk_neighbors` for
            ``query_keys`` and ``key_mask``.
    """
    _check_topk_input(query_keys, query_keys, key_mask, block_size)
    num_rows = query_keys.size(0)
    num_hops = check_positive_int(num_hops, "num_hops", minimum=0)
    if max_rows is not None:
        check_positive_int(max_rows, "max_rows", minimum=0)
    _check_k(k, 1, num_rows, "rows")
    check_row_index(targets, num_rows, "targets")
    if check_key_mask:
        _check_allowed_keys(k, key_mask)
    seen = torch.zeros(num_rows, dtype=torch.bool, device=query_keys.device)
    frontier = targets.unique()
    rows, values, indices = [], [], []
    searched = 0
    for hop in range(num_hops + 1):
        searched += frontier.numel()
        if max_rows is not None and searched > max_rows:
            return None
        seen[frontier] = True
        top = topk_neighbors(query_keys.index_select(0, frontier), query_keys, k,
                             key_mask=key_mask, block_size=block_size,
                             search_dtype=search_dtype, check_key_mask=False)
        rows.append(frontier)
        values.append(top.values)
        indices.append(top.indices)
        if hop < num_hops:
            picked = top.indices.unique()
            frontier = picked.masked_select(seen.index_select(0, picked).logical_not_())
            if frontier.numel() == 0:
                break
    return ReceptiveTopK(torch.cat(rows), TopK(torch.cat(values), torch.cat(indices)))


def neighbors_to_edge_index(neighbors: Tensor, query_index: Optional[Tensor] = None, *,
                            check: bool = True) -> Tensor:
    r"""PyG ``edge_index`` from a neighbour matrix.

    Args:
        neighbors (Tensor): :math:`(Q, k)`; row ``q`` lists the sources that
            target ``query_index[q]`` (or ``q``) aggregates from.
        query_index (Tensor, optional): the targets :math:`(Q,)`; ``None``:
            ``0, ..., Q - 1``. (default: :obj:`None`)
        check (bool, optional): refuse (``TypeError`` / ``ValueError``)
            ``neighbors`` that are not an integer :math:`(Q, k)` tensor, or a
            ``query_index`` that is not an integer :math:`(Q,)` tensor on their
            device (no value is read). (default: :obj:`True`)

    Returns:
        Tensor: :math:`(2, Qk)`, ``edge_index[0]`` the source and
        ``edge_index[1]`` the target.
    """
    if check:
        _check_neighbors(neighbors, None)
        if query_index is not None:
            if not isinstance(query_index, Tensor) or query_index.dtype not in INDEX_DTYPES \
                    or query_index.shape != neighbors.shape[:1]:
                raise TypeError(f"query_index must be an int64 (or int32) tensor "
                                f"({neighbors.size(0)},), one target per row of neighbors, "
                                f"got {describe_index(query_index)}")
            check_same_device(query_index, neighbors.device, "query_index",
                              "neighbors' device")
    num_queries, k = neighbors.shape
    target = (torch.arange(num_queries, device=neighbors.device)
              if query_index is None else query_index)
    return torch.stack([neighbors.reshape(-1), target.repeat_interleave(k)])


def _batched_structure_loss(x: Tensor, emb: Tensor, query_index: Optional[Tensor],
                            batch: Tensor, form: str) -> Tensor:
    r""":func:`structure_loss` of each graph of ``batch`` (its query rows against
    its rows), averaged with weights proportional to the graphs' numbers of
    pairs; graphs without a query row have no pairs (none at all: the loss
    without ``batch``, a mean over no pair)."""
    query_batch = batch if query_index is None else batch[query_index]
    if query_batch.numel() == 0:
        return structure_loss(x, emb, query_index=query_index, form=form, check=False)
    losses, num_pairs = [], []
    for graph in torch.unique(query_batch):
        rows = (batch == graph).nonzero().view(-1)
        query = None if query_index is None else torch.searchsorted(
            rows, query_index[query_batch == graph])  # positions among the graph's rows
        losses.append(structure_loss(x[rows], emb[rows], query_index=query, form=form,
                                     check=False))
        num_pairs.append(rows.numel() * (rows.numel() if query is None else query.numel()))
    total = sum(num_pairs)
    return sum(loss * (count / total) for loss, count in zip(losses, num_pairs))


class DynamicKNNGraph(nn.Module):
    r"""Learned top-k graph (:math:`f_P \circ f_S \circ f_E` of SLeDGe).

    Rows are embedded by :math:`f_E` (an :class:`EmbeddingMLP`), scored by
    cosine similarity, and every query row keeps its :math:`k` highest-scoring
    rows (itself included, as a candidate like any other):

    .. math::
        \mathbf{e}_i = \frac{f_E(\mathbf{x}_i)}{\|f_E(\mathbf{x}_i)\|},\qquad
        \mathcal{N}(i) = \operatorname{top-}k_j\;\mathbf{e}_i^\top\mathbf{e}_j,
        \qquad w_{j \to i} = \mathbf{e}_i^\top\mathbf{e}_j .

    The top-k is chosen without gradient; the kept weights are recomputed
    from the embeddings with gradient, which is exactly the gradient of the
    dense "mask times similarity matrix" formulation.

    Args:
        in_channels (int): input size :math:`d`.
        k (int): neighbours kept per query row (clipped to the number of rows).
        hidden_channels (int, optional): embedding size :math:`h`. (default: 256)
        num_layers (int, optional): layers of :math:`f_E`. (default: 1)
        block_size (int, optional): query rows scored at once. (default: 2048)
        search_dtype (torch.dtype or str, optional): choose the neighbours with
            scores in this lower precision (an approximation, see
            :func:`topk_neighbors`); the edge weights stay exact.
            (default: :obj:`None`, exact)

    Shapes:
        - **input:** :math:`(N, d)`, optional ``query_index`` :math:`(Q,)`,
          ``node_mask`` :math:`(N,)`, ``batch`` :math:`(N,)`
        - **output:** ``edge_index`` :math:`(2, E)`, ``edge_weight`` :math:`(E,)`:
          :math:`E = Qk` (:math:`k` clipped to the rows ``node_mask`` allows);
          :math:`E \leq Qk` with ``batch`` (graphs with fewer rows than :math:`k`)
    """

    def __init__(self, in_channels: int, k: int, hidden_channels: int = 256,
                 num_layers: int = 1, block_size: int = 2048,
                 search_dtype: Union[str, torch.dtype, None] = None) -> None:
        super().__init__()
        self.in_channels = check_positive_int(in_channels, "in_channels")
        self.k = check_positive_int(k, "k")
        self.block_size = check_positive_int(block_size, "block_size")
        self.search_dtype = check_search_dtype(search_dtype)
        self.embedding = self._build_embedding(in_channels, hidden_channels, num_layers)

    def _build_embedding(self, in_channels: int, hidden_channels: int, num_layers: int) -> nn.Module:
        return EmbeddingMLP(in_channels, hidden_channels, num_layers)

    def reset_parameters(self) -> None:
        if hasattr(self.embedding, "reset_parameters"):
            cast(Callable[[], None], self.embedding.reset_parameters)()  # a method

    def embed(self, x: Tensor, *, check: bool = True) -> Tensor:
        r"""L2-normalized embeddings :math:`(N, h)` of rows :math:`(N, d)`.

        Args:
            x (Tensor): the rows :math:`(N, d)`.
            check (bool, optional): refuse (``TypeError`` / ``ValueError``) an
                ``x`` that is not a tensor :math:`(N, d)` with
                ``d = in_channels``, in the parameters' dtype (any floating dtype
                for the static graph); no value is read. Callers that checked
                their rows (:meth:`forward`, SLeDGe's per-sample step) pass
                ``False``. (default: :obj:`True`)
        """
        if check:
            self._check_rows(x)
        return self.embedding(x)

    def neighbors(self, emb: Tensor, query_index: Optional[Tensor] = None,
                  node_mask: Optional[Tensor] = None) -> Tensor:
        r"""Top-k neighbour indices :math:`(Q, k')`, :math:`k' = \min(k, n)` with
        :math:`n` the rows ``node_mask`` allows (all :math:`N` without it).

        Args:
            emb (Tensor): L2-normalized embeddings :math:`(N, h)`.
            query_index (Tensor, optional): the query rows :math:`(Q,)`;
                ``None``: every row. (default: :obj:`None`)
            node_mask (Tensor, optional): :math:`(N,)`, excludes rows from being
                chosen (their own query rows still get neighbours; callers ignore
                them). (default: :obj:`None`)
        """
        return self._search(emb, query_index, node_mask).indices

    def _search(self, emb: Tensor, query_index: Optional[Tensor], node_mask: Optional[Tensor],
                batch: Optional[Tensor] = None) -> TopK:
        r""":func:`topk_neighbors` of the rows ``query_index`` :math:`(Q, k')` among
        the rows ``node_mask`` allows (of the query's graph, with ``batch``:
        the picks beyond those score ``-inf``), :math:`k'` as in :meth:`neighbors`."""
        available = emb.size(0) if node_mask is None else int(node_mask.sum())
        k = min(self.k, available)
        query = emb if query_index is None else emb[query_index]
        query_batch = batch if batch is None or query_index is None else batch[query_index]
        return topk_neighbors(query.detach(), emb.detach(), k, key_mask=node_mask,
                              query_batch=query_batch, key_batch=batch,
                              block_size=self.block_size,
                              search_dtype=self.search_dtype,
                              check_key_mask=False)  # k is at most the count

    @staticmethod
    def edge_weight(emb: Tensor, edge_index: Tensor) -> Tensor:
        r"""Cosine similarity of each edge's endpoints, with gradient (one host
        sync on a GPU, for the checks).

        Args:
            emb (Tensor): L2-normalized embeddings :math:`(N, h)`.
            edge_index (Tensor): any edges :math:`(2, E)` over them.

        Returns:
            Tensor: the weights :math:`(E,)`.

        Raises:
            TypeError, ValueError: ``emb`` or ``edge_index`` of the wrong type,
                shape or range.
        """
        _check_embeddings(emb)
        check_edge_index(edge_index, emb.size(0))
        return (emb[edge_index[0]] * emb[edge_index[1]]).sum(dim=-1)

    @staticmethod
    def neighbor_weight(emb: Tensor, neighbors: Tensor,
                        query_index: Optional[Tensor] = None, *,
                        check: bool = True) -> Tensor:
        r"""Edge weights, with gradient, in the order of
        :func:`neighbors_to_edge_index`: sampled products over the CSR form of
        the graph (float32/float64, outside :mod:`torch.func` transforms), else
        one gather.

        Args:
            emb (Tensor): the embeddings :math:`(N, h)`.
            neighbors (Tensor): the neighbour matrix :math:`(Q, k)` of the rows
                ``query_index``.
            query_index (Tensor, optional): the query rows :math:`(Q,)`;
                ``None``: every row, :math:`Q = N`. (default: :obj:`None`)
            check (bool, optional): refuse (``TypeError`` / ``ValueError``)
                inputs that do not fit together (one host sync on a GPU); the
                per-sample step, which built them, passes ``False``.
                (default: :obj:`True`)

        Returns:
            Tensor: the weights :math:`(Qk,)`.
        """
        if check:
            _check_embeddings(emb)
            if query_index is not None:
                check_row_index(query_index, emb.size(0))
            _check_neighbors(neighbors, emb,
                             emb.size(0) if query_index is None else query_index.numel())
        if supports_csr(emb):
            graph = CSRGraph(neighbors_to_edge_index(neighbors, query_index, check=False),
                             emb.size(0), check_indices=False)
            return graph.edge_dot(emb, emb, check=check)
        query = emb if query_index is None else emb[query_index]
        return score_neighbors(query, emb, neighbors, check=False).view(-1)

    def forward(self, x: Tensor, *, query_index: Optional[Tensor] = None,
                node_mask: Optional[Tensor] = None,
                batch: Optional[Tensor] = None) -> tuple[Tensor, Tensor]:
        r"""Build the graph.

        Every argument after ``x`` is keyword-only: PyG's
        :func:`~torch_geometric.nn.knn_graph` and ``DynamicEdgeConv`` take the
        ``batch`` vector right after the rows, so a positional second argument
        here would be ambiguous (Python refuses it with a ``TypeError``).

        Args:
            x (Tensor): rows :math:`(N, d)`; sparse too, but for the static
                graph (the learned :math:`f_E`'s first linear layer takes it).
            query_index (Tensor, optional): rows that get incoming edges
                (class-query light mode); ``None`` = every row.
            node_mask (Tensor, optional): :math:`(N,)` rows that may be chosen
                as neighbours.
            batch (Tensor, optional): :math:`(N,)` integer graph ids
                :math:`\geq 0` assigning each row to a graph of a mini-batch,
                as in PyG: a query picks its :math:`k` neighbours among the rows
                of its own graph only (all of them if its graph has fewer
                allowed rows, like :func:`torch_geometric.nn.knn_graph`). Unlike
                ``torch-cluster``, the ids need not be sorted.

        Returns:
            ``(edge_index, edge_weight)`` in PyG convention (source = neighbour,
            target = query): ``int64`` :math:`(2, E)` and the cosine
            similarities :math:`(E,)` in ``x``'s dtype, with gradient, in
            :math:`[-1, 1]`: negative where a query has fewer similar rows than
            :math:`k` (see :func:`~torch_geometric_stream.graph.normalize_edge_weight`
            for a normalization that stays finite). Each
            query's edges come together, queries in ``query_index`` order
            (row order without it), and, for the exact search, by decreasing
            weight (up to rounding): grouped by target, so not in the source-major order of
            :func:`torch_geometric.utils.coalesce`. The graph is directed (not
            symmetric); a row is a candidate of its own query, so self-loops
            are usually among the edges (none is added); there are no duplicate
            edges unless ``query_index`` repeats a row.

        Raises:
            TypeError / ValueError: an ``x`` that is not floating :math:`(N, d)`,
                a ``query_index`` that is not a 1-D integer tensor of row
                indices, a ``node_mask`` that is not boolean :math:`(N,)` on
                ``x``'s device with at least one ``True``, or a ``batch`` that is
                not an integer :math:`(N,)` tensor on ``x``'s device with ids
                :math:`\geq 0`.
        """
        self._check_input(x, query_index, node_mask, batch)
        if batch is not None and in_vmap():
            raise ValueError("batch cannot be used under torch.func.vmap: a graph with fewer "
                             "than k rows drops edges, so samples would get graphs of "
                             "different sizes; vmap over a leading dimension of graphs instead")
        emb = self.embed(x, check=False)
        if batch is None:
            neighbors = self.neighbors(emb, query_index, node_mask)
            return (neighbors_to_edge_index(neighbors, query_index, check=False),
                    self.neighbor_weight(emb, neighbors, query_index, check=False))
        top = self._search(emb, query_index, node_mask, batch)
        kept = top.values.isneginf().logical_not_().view(-1)  # picks of the query's graph
        return (neighbors_to_edge_index(top.indices, query_index, check=False)[:, kept],
                self.neighbor_weight(emb, top.indices, query_index, check=False)[kept])

    def _check_input(self, x: Tensor, query_index: Optional[Tensor],
                     node_mask: Optional[Tensor], batch: Optional[Tensor] = None, *,
                     strided: bool = False) -> None:
        self._check_rows(x, strided=strided)
        num_rows = x.size(0)
        if query_index is not None:
            check_row_index(query_index, num_rows)
        if node_mask is not None:
            check_row_mask(node_mask, x, "node_mask", "x's device")
            _refuse_batched(node_mask, "node_mask", _MASK_COUNTED)
            if not bool(node_mask.any()):
                raise ValueError("node_mask allows no row as a neighbour")
        if batch is not None:
            _check_batch(batch, x, "batch", "x's device")
            _refuse_batched(batch, "batch", "its graph ids are read on the host")
            if num_rows and (low := int(batch.min())) < 0:
                raise ValueError(f"batch must hold graph ids >= 0, got {low}")

    def _check_rows(self, x: Tensor, *, strided: bool = False) -> None:
        """Raise unless ``x`` is a tensor :math:`(N, d)` that :math:`f_E` can embed
        (see :meth:`embed`); no value is read. A sparse ``x`` is taken by a
        learned :math:`f_E` (its first linear layer), not by the static graph,
        which normalizes the rows themselves, nor with ``strided``."""
        weight = next(self.embedding.parameters(), None)  # none: the static graph
        check_node_features(x, self.in_channels, None if weight is None else weight.dtype,
                            strided=strided or weight is None)

    def structure_loss(self, x: Tensor, emb: Optional[Tensor] = None,
                       query_index: Optional[Tensor] = None, form: str = "plain", *,
                       batch: Optional[Tensor] = None) -> Tensor:
        r"""The structure regularizer of rows ``x``: how far the embeddings'
        cosine similarities are from the inputs'; see
        :func:`~torch_geometric_stream.graph.structure_loss`.

        The rows are L2-normalized here (SLeDGe stores them so: the regularizer
        compares cosine similarities), then embedded unless ``emb`` is given.

        Args:
            x (Tensor): the rows :math:`(N, d)`, :math:`N \geq 1`, dense.
            emb (Tensor, optional): their embeddings :math:`(N, h)`, L2-normalized
                rows. (default: :obj:`None`)
            query_index (Tensor, optional): as in :meth:`forward`.
                (default: :obj:`None`)
            form (str, optional): ``"plain"`` or ``"frobenius"``.
                (default: :obj:`"plain"`)
            batch (Tensor, optional): :math:`(N,)`, graph ids as in
                :meth:`forward`: compares only the pairs of rows of one graph
                (with ``query_index``: each query row against the rows of its
                graph). (default: :obj:`None`)

        With ``batch``, the loss is the mean of each
        graph's own loss weighted by its number of pairs: for ``"plain"``,
        ``F.mse_loss`` of the same-graph entries of the two similarity
        matrices; for ``"frobenius"``, each graph's two matrices divided by
        their own Frobenius norm (so a graph's term does not depend on the
        other graphs of the mini-batch), then the mean squared difference over
        all same-graph pairs. One graph gives the loss without ``batch``.

        Raises:
            TypeError / ValueError: for ``x``, ``emb``, ``query_index`` or
                ``batch`` of the wrong type or shape, an ``emb`` or ``batch`` on
                another device than ``x``, graph ids below 0, or an ``x``
                without rows.
        """
        self._check_input(x, query_index, None, batch, strided=True)  # x is normalized
        if x.size(0) == 0:
            raise ValueError("x has no rows: the structure loss is a mean over row pairs")
        if emb is not None:
            if not isinstance(emb, Tensor) or emb.dtype != x.dtype:
                raise TypeError(f"emb must be a {x.dtype} tensor like x, got "
                                f"{getattr(emb, 'dtype', type(emb).__name__)}")
            if emb.dim() != 2 or emb.size(0) != x.size(0):
                raise ValueError(f"emb must have shape (N, h) with x's N = {x.size(0)} rows, "
                                 f"got {tuple(emb.shape)}")
            check_same_device(emb, x.device, "emb", "x's device")
        x = l2_normalize(x, check=False)
        if emb is None:
            emb = self.embed(x, check=False)
        if batch is None:
            return structure_loss(x, emb, query_index=query_index, form=form, check=False)
        return _batched_structure_loss(x, emb, query_index, batch, form)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.in_channels}, k={self.k}, embedding={self.embedding})"

    def __prepare_scriptable__(self) -> NoReturn:
        """``torch.jit.script`` calls this first: a clear error instead of
        TorchScript's own on the first construct it cannot compile."""
        raise torchscript_unsupported(type(self).__name__)


class _L2Normalize(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        return l2_normalize(x, check=False)

    def __repr__(self) -> str:
        return "L2Normalize()"


class StaticKNNGraph(DynamicKNNGraph):
    r"""Top-k cosine graph on the raw features (the "+Static" ablation).

    Same interface as :class:`DynamicKNNGraph` with the identity (then
    L2 normalization) as embedding, so it has no parameters.

    Args:
        in_channels (int): input size :math:`d`.
        k (int): neighbours kept per query row (clipped to the number of rows).
        block_size (int, optional): query rows scored at once. (default: 2048)
        search_dtype (torch.dtype or str, optional): choose the neighbours with
            scores in this lower precision, as :class:`DynamicKNNGraph`.
            (default: :obj:`None`, exact)
    """

    def __init__(self, in_channels: int, k: int, block_size: int = 2048,
                 search_dtype: Union[str, torch.dtype, None] = None) -> None:
        super().__init__(in_channels, k, block_size=block_size, search_dtype=search_dtype)

    def _build_embedding(self, in_channels: int, hidden_channels: int, num_layers: int) -> nn.Module:
        return _L2Normalize()
