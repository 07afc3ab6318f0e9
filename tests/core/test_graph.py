import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch_geometric.nn import (GCNConv, GINConv, GraphConv, HypergraphConv, RGCNConv,
                                SAGEConv)

from torch_geometric_stream.graph import (DynamicKNNGraph, StaticKNNGraph, neighbors_to_edge_index,
                                          normalize_edge_weight, score_neighbors, structure_loss,
                                          topk_neighbors)
from torch_geometric_stream.graph.normalization import dense_adjacency, with_self_loops
from torch_geometric_stream.graph.regularizer import _block_is_cheaper
from torch_geometric_stream.nn import GCNBackbone, GraphBackbone, MLPBackbone
from torch_geometric_stream.ops import CSRGraph


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(0)


def test_exactly_k_edges_per_query_and_cosine_weights():
    graph = DynamicKNNGraph(6, k=3, hidden_channels=8)
    x = torch.randn(10, 6)
    edge_index, edge_weight = graph(x)
    assert edge_index.shape == (2, 30)
    assert torch.equal(torch.bincount(edge_index[1], minlength=10), torch.full((10,), 3))
    emb = graph.embed(x)
    sim = emb @ emb.t()
    assert torch.allclose(edge_weight, sim[edge_index[1], edge_index[0]], atol=1e-6)
    # the kept sources are the top-3 of each row
    for i in range(10):
        kept = set(edge_index[0, edge_index[1] == i].tolist())
        assert kept == set(sim[i].topk(3).indices.tolist())


def test_all_rows_when_fewer_rows_than_k():
    graph = DynamicKNNGraph(4, k=10, hidden_channels=8)
    edge_index, _ = graph(torch.randn(3, 4))
    assert edge_index.size(1) == 9


def test_light_mode_edges_only_into_queries():
    graph = DynamicKNNGraph(4, k=2, hidden_channels=8)
    query = torch.tensor([1, 4])
    edge_index, edge_weight = graph(torch.randn(7, 4), query_index=query)
    assert edge_index.size(1) == 4 and set(edge_index[1].tolist()) == {1, 4}


def test_blockwise_equals_one_shot():
    emb = F.normalize(torch.randn(50, 16), dim=-1)
    one_shot = topk_neighbors(emb, emb, 5, block_size=1000)
    assert torch.allclose(one_shot.values, (emb @ emb.t()).topk(5).values)
    blocked = topk_neighbors(emb, emb, 5, block_size=7)
    assert torch.equal(one_shot.indices, blocked.indices)
    assert torch.allclose(one_shot.values, blocked.values, atol=1e-6)


def test_node_mask_excludes_rows():
    emb = F.normalize(torch.randn(8, 4), dim=-1)
    mask = torch.tensor([True, False, True, True, False, True, True, True])
    nbr = topk_neighbors(emb, emb, 6, key_mask=mask).indices
    assert not set(nbr.flatten().tolist()) & {1, 4}


def test_static_graph_has_no_parameters_and_uses_raw_cosine():
    graph = StaticKNNGraph(3, k=2)
    assert sum(p.numel() for p in graph.parameters()) == 0
    x = torch.tensor([[1.0, 0, 0], [0.9, 0.1, 0], [0, 0, 1.0]])
    edge_index, edge_weight = graph(x)
    assert set(edge_index[0, edge_index[1] == 0].tolist()) == {0, 1}


def _angles(*degrees):
    """Unit rows at these angles (degrees) in the plane."""
    radians = torch.tensor(degrees) * (np.pi / 180)
    return torch.stack([radians.cos(), radians.sin()], dim=1)


@pytest.mark.parametrize("k, expected", [
    (2, [[0, 1, 1, 0, 2, 1, 3, 4, 4, 3], [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]]),
    # graph 1 has 2 rows: its queries get both, 2 edges each (E = 13 < Qk = 15)
    (3, [[0, 1, 2, 1, 0, 2, 2, 1, 0, 3, 4, 4, 3], [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 4, 4]]),
])
def test_batch_links_rows_only_within_their_graph_hand_checked(k, expected):
    # rows 0-2 (0, 40, 90 degrees) form graph 0, rows 3-4 (10, 80 degrees) graph 1;
    # without batch, rows 0 and 1 would pick row 3 and row 2 row 4
    x = _angles(0.0, 40.0, 90.0, 10.0, 80.0)
    batch = torch.tensor([0, 0, 0, 1, 1])
    edge_index, edge_weight = StaticKNNGraph(2, k=k)(x, batch=batch)
    assert edge_index.tolist() == expected
    angle = torch.tensor([0.0, 40.0, 90.0, 10.0, 80.0])
    cosine = (angle[edge_index[0]] - angle[edge_index[1]]).deg2rad().cos()
    torch.testing.assert_close(edge_weight, cosine)
    assert StaticKNNGraph(2, k=2)(x)[0][0, :6].tolist() == [0, 3, 1, 3, 2, 4]  # no batch


def _by_target(edge_index, edge_weight):
    """The edges ordered by target, each target's edges in their given order."""
    order = torch.sort(edge_index[1], stable=True).indices
    return edge_index[:, order], edge_weight[order]


def _per_graph(graph, x, batch, query_index=None, node_mask=None):
    """``graph`` called on each graph's rows alone, the edges in global rows, by target."""
    edges, weights = [], []
    for graph_id in batch.unique().tolist():
        rows = (batch == graph_id).nonzero().view(-1)
        mask = None if node_mask is None else node_mask[rows]
        queries = None
        if query_index is not None:
            queries = torch.searchsorted(rows, query_index[batch[query_index] == graph_id])
        if (mask is not None and not mask.any()) or (queries is not None and not queries.numel()):
            continue  # no row to pick, or no query: no edge
        edge_index, edge_weight = graph(x[rows], query_index=queries, node_mask=mask)
        edges.append(rows[edge_index])
        weights.append(edge_weight)
    return _by_target(torch.cat(edges, dim=1), torch.cat(weights))


_GRAPH_SIZES = [5, 9, 2, 12]


def _random_batch(shuffle):
    batch = torch.repeat_interleave(torch.arange(len(_GRAPH_SIZES)), torch.tensor(_GRAPH_SIZES))
    return batch[torch.randperm(batch.numel())] if shuffle else batch


@pytest.mark.parametrize("make_graph", [lambda k: DynamicKNNGraph(6, k=k, hidden_channels=8),
                                        lambda k: StaticKNNGraph(6, k=k)],
                         ids=["dynamic", "static"])
@pytest.mark.parametrize("k", [1, 3, 7, 40])  # 7 and 40: more than graphs of 5 and 2 rows
@pytest.mark.parametrize("shuffle", [False, True], ids=["sorted", "unsorted"])
def test_batch_gives_the_per_graph_graphs_concatenated(make_graph, k, shuffle):
    graph = make_graph(k)
    batch = _random_batch(shuffle)
    x = torch.randn(batch.numel(), 6)
    edge_index, edge_weight = graph(x, batch=batch)
    expected_index, expected_weight = _per_graph(graph, x, batch)
    assert edge_index.size(1) == sum(n * min(k, n) for n in _GRAPH_SIZES)
    assert torch.equal(edge_index, expected_index)
    torch.testing.assert_close(edge_weight, expected_weight)


@pytest.mark.parametrize("make_graph", [lambda: DynamicKNNGraph(6, k=2, hidden_channels=8),
                                        lambda: StaticKNNGraph(6, k=2)],
                         ids=["dynamic", "static"])
def test_a_positional_batch_vector_is_refused_not_read_as_query_index(make_graph):
    # PyG's knn_graph(x, k, batch) and DynamicEdgeConv(x, batch) take the batch
    # vector second: read as query_index, it gave edges across graphs, silently
    graph = make_graph()
    x, batch = torch.randn(6, 6), torch.tensor([0, 0, 0, 1, 1, 1])
    with pytest.raises(TypeError, match="positional argument"):
        graph(x, batch)
    edge_index, _ = graph(x, batch=batch)
    assert torch.equal(batch[edge_index[0]], batch[edge_index[1]])


def test_batch_with_query_index_and_node_mask_gives_the_per_graph_graphs():
    graph = DynamicKNNGraph(6, k=4, hidden_channels=8)
    batch = _random_batch(shuffle=True)
    x = torch.randn(batch.numel(), 6)
    # graph 0 allows 2 rows (< k), graph 2 none (its queries get no edge)
    node_mask = (batch != 2) & ~((batch == 0) & (torch.cumsum(batch == 0, 0) > 2))
    query_index = torch.tensor([0, 3, 4, 7, 11, 12, 15, 20, 27])
    edge_index, edge_weight = graph(x, query_index=query_index, node_mask=node_mask, batch=batch)
    expected_index, expected_weight = _per_graph(graph, x, batch, query_index, node_mask)
    assert torch.equal(edge_index, expected_index)
    torch.testing.assert_close(edge_weight, expected_weight)
    assert node_mask[edge_index[0]].all()
    assert torch.equal(batch[edge_index[0]], batch[edge_index[1]])
    assert set(edge_index[1].tolist()) == set(query_index[batch[query_index] != 2].tolist())


def test_batch_edge_weights_send_the_per_graph_gradient_to_the_embedding():
    graph = DynamicKNNGraph(6, k=3, hidden_channels=8)
    batch = _random_batch(shuffle=True)
    x = torch.randn(batch.numel(), 6)
    params = list(graph.parameters())
    grads = torch.autograd.grad(graph(x, batch=batch)[1].square().sum(), params)
    expected = torch.autograd.grad(_per_graph(graph, x, batch)[1].square().sum(), params)
    for grad, grad_expected in zip(grads, expected):
        assert grad.abs().sum() > 0
        torch.testing.assert_close(grad, grad_expected)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_one_graph_batch_gives_the_graph_without_batch(dtype):
    graph = DynamicKNNGraph(6, k=3, hidden_channels=8)
    x = torch.randn(10, 6)
    query = torch.tensor([2, 5])
    for kwargs in ({}, {"query_index": query}):
        edge_index, edge_weight = graph(x, batch=torch.zeros(10, dtype=dtype), **kwargs)
        expected_index, expected_weight = graph(x, **kwargs)
        assert torch.equal(edge_index, expected_index)
        assert torch.equal(edge_weight, expected_weight)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.bfloat16])
@pytest.mark.parametrize("index_dtype", [torch.int64, torch.int32])
def test_forward_gives_the_documented_edge_order_and_dtypes(dtype, index_dtype):
    torch.manual_seed(0)
    graph = DynamicKNNGraph(6, k=3, hidden_channels=8).to(dtype)
    x = torch.randn(10, 6, dtype=dtype)
    query = torch.tensor([7, 2, 5], dtype=index_dtype)
    batch = torch.tensor([0] * 6 + [1] * 4, dtype=index_dtype)
    for kwargs, targets in (({}, torch.arange(10)), ({"query_index": query}, query.long()),
                            ({"batch": batch}, torch.arange(10))):
        edge_index, edge_weight = graph(x, **kwargs)
        assert edge_index.dtype == torch.int64 and edge_weight.dtype == dtype
        assert edge_weight.requires_grad
        # grouped by target in query order, each query's weights decreasing
        assert torch.equal(edge_index[1], targets.repeat_interleave(3))
        weights = edge_weight.detach().view(-1, 3).double()
        rounding = 2 * torch.finfo(dtype).eps  # the weights are recomputed after the search
        assert bool((weights[:, :-1] >= weights[:, 1:] - rounding).all())
        assert edge_index.unique(dim=1).size(1) == edge_index.size(1)  # no duplicates
        # cosines of unit vectors, rounded on the scale of 1 whatever their size: up
        # to an eps apart (a bfloat16 one near 0 is further than its rtol: torch 2.1-2.9)
        torch.testing.assert_close(edge_weight, graph.edge_weight(graph.embed(x), edge_index),
                                   rtol=0, atol=rounding)


@pytest.mark.parametrize("search_dtype", [None, torch.bfloat16], ids=["exact", "bfloat16"])
def test_topk_neighbors_scores_the_picks_beyond_a_graph_minus_inf(search_dtype):
    keys = F.normalize(torch.randn(5, 4), dim=-1)
    batch = torch.tensor([1, 0, 1, 1, 0])
    key_mask = torch.tensor([True, True, True, False, True])  # 2 rows per graph: k = 3 goes
    top = topk_neighbors(keys, keys, 3, key_mask=key_mask, query_batch=batch, key_batch=batch,
                         search_dtype=search_dtype)
    allowed = (batch[top.indices] == batch[:, None]) & key_mask[top.indices]
    assert allowed.sum(dim=1).tolist() == [2] * 5
    assert top.values[~allowed].isneginf().all()
    torch.testing.assert_close(top.values[allowed],
                               (keys[top.indices] @ keys.unsqueeze(-1)).squeeze(-1)[allowed])


def test_symmetric_normalization_hand_checked():
    # 2 nodes, edge 0 -> 1 with weight 0.5; self-loops added with weight 1
    edge_index = torch.tensor([[0], [1]])
    ei, w = normalize_edge_weight(edge_index, torch.tensor([0.5]), 2, "symmetric")
    dense = dense_adjacency(ei, w, 2)
    deg = torch.tensor([1.0, 1.5])
    expected = torch.tensor([[1.0 / deg[0], 0.0], [0.5 / (deg[0] * deg[1]).sqrt(), 1.0 / deg[1]]])
    assert torch.allclose(dense, expected)


def test_dense_adjacency_is_exported_in_forward_dense_s_target_source_layout():
    # (not exported; PyG's to_dense_adj gives the transpose, a max diff of 0.94)
    from torch_geometric.utils import to_dense_adj

    from torch_geometric_stream.graph import dense_adjacency as exported

    assert exported is dense_adjacency
    edge_index = torch.tensor([[0, 0, 2], [1, 1, 0]])  # 0 -> 1 twice, 2 -> 0
    adj = exported(edge_index, torch.tensor([0.25, 0.5, 2.0]), 3)
    assert adj.tolist() == [[0.0, 0.0, 2.0], [0.75, 0.0, 0.0], [0.0, 0.0, 0.0]]
    torch.testing.assert_close(to_dense_adj(edge_index, edge_attr=torch.tensor(
        [0.25, 0.5, 2.0]))[0], adj.T)


def test_symmetric_add_puts_the_identity_on_top_of_a_kept_self_loop():
    # node 0 kept its own similarity 0.8 and an edge 1 -> 0 of weight 0.5; node 1 kept none
    edge_index = torch.tensor([[0, 1], [0, 0]])
    weight = torch.tensor([0.8, 0.5])
    ei, w = normalize_edge_weight(edge_index, weight, 2, "symmetric-add")
    dense = dense_adjacency(ei, w, 2)
    deg = torch.tensor([1.8 + 0.5, 1.0])  # self weights 0.8 + 1 and 0 + 1
    expected = torch.tensor([[1.8 / deg[0], 0.5 / (deg[0] * deg[1]).sqrt()], [0.0, 1.0]])
    assert torch.allclose(dense, expected)
    # "symmetric" keeps the kept loop's weight instead: 0.8, not 1.8
    ei, w = normalize_edge_weight(edge_index, weight, 2, "symmetric")
    assert torch.allclose(dense_adjacency(ei, w, 2)[0, 0], torch.tensor(0.8 / 1.3))


def test_negative_weights_never_give_nan_or_inf():
    edge_index = torch.tensor([[0, 1, 2, 0], [1, 1, 1, 2]])
    weight = torch.tensor([-0.9, -1.0, -0.8, -0.3])
    for mode in ("symmetric", "symmetric-add", "mean"):
        _, w = normalize_edge_weight(edge_index, weight, 3, mode)
        assert torch.isfinite(w).all()


def test_symmetric_degree_skips_negative_similarities_and_keeps_their_sign():
    # node 1 receives 0 -> 1 (weight -0.5) and 2 -> 1 (weight 0.5), plus its added
    # self-loop 1: degree 1 + 0.5 (the negative weight counts 0); nodes 0, 2 degree 1.
    # The negative edge keeps its sign after scaling.
    edge_index = torch.tensor([[0, 2], [1, 1]])
    ei, w = normalize_edge_weight(edge_index, torch.tensor([-0.5, 0.5], dtype=torch.float64),
                                  3, "symmetric")
    expected = torch.tensor([[1.0, 0.0, 0.0],
                             [-0.5 / 1.5 ** 0.5, 1.0 / 1.5, 0.5 / 1.5 ** 0.5],
                             [0.0, 0.0, 1.0]], dtype=torch.float64)
    torch.testing.assert_close(dense_adjacency(ei, w, 3), expected)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("mode", ["symmetric", "symmetric-add"])
def test_degrees_are_summed_as_pyg_s_scatter_sums_them(dtype, mode):
    """In float16 and bfloat16 index_add_ rounds after every addition and PyG's
    scatter (scatter_add_) does not: a session-80 rewrite with index_add_ changed
    bfloat16 learners' degrees (0.139 against 0.031 from float64 on SLeDGe-sized
    graphs). The weights equal those from PyG's sums bit for bit, gradients too."""
    from torch_geometric.utils import scatter
    gen = torch.Generator().manual_seed(0)
    num_nodes, num_edges = 300, 4000
    edge_index = torch.randint(0, num_nodes, (2, num_edges), generator=gen)
    weight = (torch.rand(num_edges, generator=gen) * 1.5 - 0.2).to(dtype).requires_grad_()
    ei, w = normalize_edge_weight(edge_index, weight, num_nodes, mode)
    loops, loop_weight = with_self_loops(edge_index, weight, num_nodes,
                                         add=mode == "symmetric-add")
    deg = scatter(loop_weight.clamp(min=0.0), loops[1], 0, dim_size=num_nodes, reduce="sum")
    inv_sqrt = torch.where(deg > 0, deg, torch.ones_like(deg)).rsqrt()
    expected = inv_sqrt[loops[0]] * loop_weight * inv_sqrt[loops[1]]
    assert torch.equal(ei, loops) and torch.equal(w, expected)
    grad = torch.randn(w.shape, generator=gen).to(dtype)
    assert torch.equal(*(torch.autograd.grad(out, weight, grad)[0] for out in (w, expected)))


def test_mean_normalization_is_authors_constant():
    edge_index = torch.tensor([[0, 1, 2, 0, 1, 2], [0, 0, 0, 1, 1, 1]])
    weight = torch.rand(6)
    _, w = normalize_edge_weight(edge_index, weight, 3, "mean")
    assert torch.allclose(w, weight / 3)


@pytest.mark.parametrize("bias_position", ["after", "before"])
@pytest.mark.parametrize("normalization", ["symmetric", "symmetric-add", "mean"])
def test_sparse_and_dense_propagation_agree(normalization, bias_position):
    backbone = GCNBackbone(5, 16, 3, num_layers=3, normalization=normalization,
                           bias_position=bias_position)
    x = torch.randn(40, 5)
    edge_index = torch.stack([torch.randint(0, 40, (160,)), torch.arange(40).repeat(4)])
    weight = torch.randn(160)  # negative similarities included
    sparse = backbone(x, edge_index, weight)
    ei, w = backbone.normalize(edge_index, weight, 40)
    dense = backbone.forward_dense(x, dense_adjacency(ei, w, 40))
    assert torch.allclose(sparse, dense, atol=1e-5)


@pytest.mark.parametrize("aggregation", ["csr", "message_passing"])
def test_bias_position_on_rows_without_in_edges(aggregation):
    # one layer, raw weights: edges 0 -> 1 (weight 2) and 1 -> 1 (weight 1); rows 0
    # and 2 have no in-edges. W = 1 (one channel), b = 0.5.
    x = torch.tensor([[1.0], [3.0], [7.0]])
    edge_index, weight = torch.tensor([[0, 1], [1, 1]]), torch.tensor([2.0, 1.0])
    out = {}
    for position in ("after", "before"):
        backbone = GCNBackbone(1, 4, 1, num_layers=1, normalization="none",
                               aggregation=aggregation, bias_position=position)
        with torch.no_grad():
            backbone.convs[0].lin.weight.fill_(1.0)
            backbone.convs[0].bias.fill_(0.5)
        out[position] = backbone(x, edge_index, weight).flatten().tolist()
    # after: A x + b; before: A (x + b), so row 1 takes 2 * 0.5 + 1 * 0.5 of bias
    assert out["after"] == [0.5, 5.5, 0.5]
    assert out["before"] == [0.0, 6.5, 0.0]


@pytest.mark.parametrize("aggregation", ["csr", "message_passing"])
def test_normalized_weights_are_propagated_as_given(aggregation):
    # one layer, W = 1, b = 0, edge 0 -> 1 of (already normalized) weight 0.5: the
    # symmetric normalization would add self-loops and rescale; normalized=True does not
    backbone = GCNBackbone(1, 4, 1, num_layers=1, aggregation=aggregation)
    with torch.no_grad():
        backbone.convs[0].lin.weight.fill_(1.0)
        backbone.convs[0].bias.fill_(0.0)
    x, edge_index = torch.tensor([[1.0], [3.0]]), torch.tensor([[0], [1]])
    out = backbone(x, edge_index, torch.tensor([0.5]), normalized=True)
    assert out.flatten().tolist() == [0.0, 0.5]


@pytest.mark.parametrize("aggregation", ["csr", "message_passing"])
@pytest.mark.parametrize("position", ["after", "before"])
def test_a_layer_whose_conv_has_no_bias_adds_none(aggregation, position):
    # convs[0] swapped for a GCNConv built with bias=False: A x W, in either position
    x, edge_index = torch.tensor([[1.0], [3.0]]), torch.tensor([[0], [1]])
    backbone = GCNBackbone(1, 4, 1, num_layers=1, aggregation=aggregation,
                           bias_position=position)
    backbone.convs[0] = GCNConv(1, 1, normalize=False, add_self_loops=False, bias=False)
    with torch.no_grad():
        backbone.convs[0].lin.weight.fill_(2.0)
    out = backbone(x, edge_index, torch.tensor([0.5]), normalized=True)
    assert out.flatten().tolist() == [0.0, 1.0]
    adj = torch.tensor([[0.0, 0.0], [0.5, 0.0]])
    assert backbone.forward_dense(x, adj).flatten().tolist() == [0.0, 1.0]


@pytest.mark.parametrize("make", [
    lambda: GraphBackbone(4, 8, 3, num_layers=2, conv=lambda i, o: GraphConv(i, o),
                          normalization="Symmetric"),
    lambda: GCNBackbone(4, 8, 3, num_layers=2, normalization="Symmetric")])
def test_a_backbone_names_an_unknown_normalization(make):
    with pytest.raises(ValueError, match=r"^normalization must be one of \('symmetric', "
                                         r".*got 'Symmetric'$"):
        make()


def _mlp_by_hand(backbone: MLPBackbone, x: torch.Tensor,
                 masks: tuple[torch.Tensor, ...] = ()) -> torch.Tensor:
    """``backbone``'s layers applied by hand, hidden layer ``i``'s output scaled by
    ``masks[i]`` where given."""
    for i, lin in enumerate(backbone.lins[:-1]):
        x = F.relu(backbone.norms[i](lin(x)))
        if i < len(masks):
            x = x * masks[i]
    return backbone.lins[-1](x)


def test_every_hidden_layer_has_its_own_layer_norm():
    backbone = MLPBackbone(3, 8, 2, num_layers=3)
    with torch.no_grad():  # the second norm unlike the first (both start at 1 and 0)
        backbone.norms[1].weight.fill_(2.0)
        backbone.norms[1].bias.fill_(-0.5)
    x = torch.randn(5, 3)
    torch.testing.assert_close(backbone(x), _mlp_by_hand(backbone, x))


@pytest.mark.parametrize("own_generator", [True, False])
def test_dropout_keeps_units_with_probability_one_minus_p_and_rescales_them(own_generator):
    # p = 0.25: the kept units are scaled by 1 / 0.75; the mask is the one a twin
    # generator draws (without a generator of its own: torch's global one), and
    # eval mode drops nothing
    backbone = MLPBackbone(3, 8, 2, num_layers=2, dropout=0.25)
    x = torch.randn(5, 3)
    mask = torch.empty(5, 8).bernoulli_(0.75, generator=torch.Generator().manual_seed(3))
    if own_generator:
        backbone.generator = torch.Generator().manual_seed(3)
    else:
        torch.manual_seed(3)
    assert 0 < mask.sum() < mask.numel()
    torch.testing.assert_close(backbone(x), _mlp_by_hand(backbone, x, (mask / 0.75,)))
    backbone.eval()
    torch.testing.assert_close(backbone(x), _mlp_by_hand(backbone, x))


@pytest.mark.parametrize("conv, message", [
    (None, "conv must be a callable conv\\(in_channels, out_channels\\), got NoneType"),
    (lambda i, o: torch.nn.Linear(i, o), "conv\\(4, 8\\) must return a module called as "
                                         "layer\\(x, edge_index, edge_weight\\).*got Linear"),
    (lambda i, o: 3, "got int"),
])
def test_graph_backbone_names_a_conv_that_builds_no_message_passing_layer(conv, message):
    # before: a Linear was accepted and failed at the first forward, inside torch
    with pytest.raises(TypeError, match=message):
        GraphBackbone(4, 8, 3, num_layers=2, conv=conv)



@pytest.mark.parametrize("conv, name, argument", [
    (lambda i, o: SAGEConv(i, o), "SAGEConv", "size"),
    (lambda i, o: GINConv(torch.nn.Linear(i, o)), "GINConv", "size"),
    (lambda i, o: RGCNConv(i, o, num_relations=2), "RGCNConv", "edge_type"),
    (lambda i, o: HypergraphConv(i, o), "HypergraphConv", "hyperedge_weight"),
])
def test_graph_backbone_names_a_conv_that_takes_no_edge_weights(conv, name, argument):
    # before: built, then the first forward failed inside PyG ("Encountered tensor
    # with size 5 in dimension -2, but expected size 0.0" for SAGEConv)
    with pytest.raises(TypeError, match=f"conv\\(4, 8\\) builds {name}, whose forward takes "
                                        f"'{argument}' where GraphBackbone passes edge weights"):
        GraphBackbone(4, 8, 3, num_layers=2, conv=conv)

def test_graph_backbone_builds_its_layers_with_the_conv():
    backbone = GraphBackbone(4, 8, 3, num_layers=2, conv=lambda i, o: GraphConv(i, o))
    assert [(conv.in_channels, conv.out_channels) for conv in backbone.convs] == [(4, 8), (8, 3)]
    assert all(isinstance(conv, GraphConv) for conv in backbone.convs)


def test_backbone_rejects_unknown_bias_position():
    with pytest.raises(ValueError, match="bias_position"):
        GCNBackbone(5, 16, 3, num_layers=2, bias_position="middle")


X10 = torch.randn(10, 4, generator=torch.Generator().manual_seed(0))
EDGES = torch.tensor([[1, 2, 3], [0, 0, 1]])


@pytest.mark.parametrize("call, error, message", [
    (lambda g: g(X10, query_index=torch.tensor([-1])), ValueError,
     r"query_index must hold row indices in \[0, 10\)"),
    (lambda g: g(X10, query_index=torch.tensor([0.5])), TypeError, "query_index must be a 1-D"),
    (lambda g: g(X10[0]), ValueError, r"x must have shape \(N, 4\), got \(4,\)"),
    (lambda g: g(X10.double()), TypeError, "x must be torch.float32"),
    (lambda g: g(X10, node_mask=torch.ones(9, dtype=torch.bool)), ValueError,
     r"node_mask must have shape \(10,\)"),
    (lambda g: g(X10, node_mask=torch.zeros(10, dtype=torch.bool)), ValueError, "no row"),
    (lambda g: g(X10, batch=torch.zeros(10)), TypeError,
     r"batch must be an int64 \(or int32\) tensor of graph ids, got shape \(10,\), "
     r"dtype torch.float32"),
    (lambda g: g(X10, batch=[0] * 10), TypeError, "batch must be an int64 .* got list"),
    (lambda g: g(X10, batch=torch.zeros(9, dtype=torch.long)), ValueError,
     r"batch must have shape \(10,\), one graph id per row, got \(9,\)"),
    (lambda g: g(X10, batch=torch.zeros(10, 1, dtype=torch.long)), ValueError,
     r"batch must have shape \(10,\), one graph id per row, got \(10, 1\)"),
    (lambda g: g(X10, batch=torch.zeros(10, dtype=torch.long, device="meta")), TypeError,
     "batch is on the 'meta' device"),
    (lambda g: g(X10, batch=torch.tensor([0, 1, -1, 0, 0, 0, 0, 0, 0, 0])), ValueError,
     "batch must hold graph ids >= 0, got -1"),
    (lambda g: g.structure_loss(torch.randn(10, 5)), ValueError, r"x must have shape \(N, 4\)"),
    (lambda g: g.structure_loss(X10.long()), TypeError, "x must be torch.float32"),
    (lambda g: g.structure_loss(X10, query_index=torch.tensor([0, 10])), ValueError,
     r"query_index must hold row indices in \[0, 10\)"),
    (lambda g: g.structure_loss(X10, emb=torch.randn(3, 8)), ValueError,
     r"emb must have shape \(N, h\) with x's N = 10 rows, got \(3, 8\)"),
    (lambda g: g.structure_loss(X10, emb=torch.randn(10, 8).double()), TypeError,
     "emb must be a torch.float32 tensor like x, got torch.float64"),
    (lambda g: g.structure_loss(torch.randn(0, 4)), ValueError, "x has no rows"),
    (lambda g: g.structure_loss(X10, batch=torch.zeros(10)), TypeError,
     r"batch must be an int64 \(or int32\) tensor of graph ids, got shape \(10,\), "
     r"dtype torch.float32"),
    (lambda g: g.structure_loss(X10, batch=torch.zeros(9, dtype=torch.long)), ValueError,
     r"batch must have shape \(10,\), one graph id per row, got \(9,\)"),
    (lambda g: g.structure_loss(X10, batch=torch.zeros(10, dtype=torch.long, device="meta")),
     TypeError, "batch is on the 'meta' device"),
    (lambda g: g.structure_loss(X10, batch=torch.tensor([0, 1, -1, 0, 0, 0, 0, 0, 0, 0])),
     ValueError, "batch must hold graph ids >= 0, got -1"),
    # before: torch's "mat1 and mat2 shapes cannot be multiplied"
    (lambda g: g.embed(torch.randn(10, 5)), ValueError,
     r"x must have shape \(N, 4\), got \(10, 5\)"),
    (lambda g: g.embed(X10.double()), TypeError, "x must be torch.float32"),
    (lambda g: g.embed(X10.tolist()), TypeError, "x must be a tensor, got list"),
])
def test_graph_learner_names_bad_input(call, error, message):
    with pytest.raises(error, match=message):
        call(DynamicKNNGraph(4, k=2, hidden_channels=8))


def test_static_graph_embed_names_rows_of_another_width():
    graph = StaticKNNGraph(4, k=2)
    # before: (10, 5) rows came back L2-normalized, a graph over the wrong features
    with pytest.raises(ValueError, match=r"x must have shape \(N, 4\), got \(10, 5\)"):
        graph.embed(torch.randn(10, 5))
    assert torch.equal(graph.embed(X10), F.normalize(X10, dim=-1))


@pytest.mark.parametrize("graph", [DynamicKNNGraph(4, k=2, hidden_channels=8),
                                   StaticKNNGraph(4, k=2)], ids=["dynamic", "static"])
def test_unchecked_embed_gives_the_checked_result(graph):
    assert torch.equal(graph.embed(X10, check=False), graph.embed(X10))


@pytest.mark.parametrize("args, error, message", [
    ((X10, EDGES.float()), TypeError, "edge_index must be an int64"),
    ((X10, EDGES[:1]), ValueError, r"edge_index must have shape \(2, E\)"),
    ((X10, EDGES, torch.ones(2)), ValueError, r"edge_weight must have shape \(3,\)"),
    ((X10, EDGES, torch.ones(3, dtype=torch.long)), TypeError, "edge_weight must be a floating"),
    ((X10, torch.tensor([[0, 10], [1, 0]])), ValueError,
     r"edge_index must hold node indices in \[0, 10\) \(x has 10 rows\), got values in \[0, 10\]"),
    ((X10, torch.tensor([[0, -1], [1, 0]])), ValueError, r"got values in \[-1, 1\]"),
    ((torch.randn(10, 5), EDGES), ValueError, r"x must have shape \(N, 4\)"),
    ((X10.long(), EDGES), TypeError, "x must be torch.float32"),
])
def test_backbone_names_bad_input(args, error, message):
    with pytest.raises(error, match=message):
        GCNBackbone(4, 8, 3, 2)(*args)
    if message.startswith("x must"):  # the graph-free backbone checks its features alike
        with pytest.raises(error, match=message):
            MLPBackbone(4, 8, 3, 2)(*args)


@pytest.mark.parametrize("args, kwargs, error, message", [
    ((torch.randn(3, 4)[0], torch.randn(5, 4), 2), {}, ValueError,
     r"must be 2-D with one width h, got \(4,\) and \(5, 4\)"),
    ((torch.randn(3, 4), torch.randn(5, 3), 2), {}, ValueError, "one width h"),
    ((torch.randn(3, 4), torch.randn(5, 4).double(), 2), {}, TypeError,
     "one dtype, got torch.float32 and torch.float64"),
    ((torch.randn(3, 4), torch.randn(5, 4), 3), {"key_mask": torch.arange(5) < 2}, ValueError,
     r"k=3 but key_mask allows only 2 key\(s\)"),
    ((torch.randn(3, 4), torch.randn(5, 4), 2), {"key_mask": torch.ones(5)}, TypeError,
     "key_mask must be a boolean tensor, got torch.float32"),
    ((torch.randn(3, 4), torch.randn(5, 4), 2), {"key_mask": torch.ones(4, dtype=torch.bool)},
     ValueError, r"key_mask must have shape \(5,\)"),
    ((torch.randn(3, 4), torch.randn(5, 4), 2), {"block_size": 0}, ValueError, "block_size"),
    ((torch.randn(3, 4), torch.randn(5, 4), 2), {"query_batch": torch.zeros(3, dtype=torch.long)},
     ValueError, "query_batch and key_batch must be given together"),
    ((torch.randn(3, 4), torch.randn(5, 4), 2),
     {"query_batch": torch.zeros(5, dtype=torch.long), "key_batch": torch.zeros(5, dtype=torch.long)},
     ValueError, r"query_batch must have shape \(3,\)"),
    ((torch.randn(3, 4), torch.randn(5, 4), 2),
     {"query_batch": torch.zeros(3, dtype=torch.long), "key_batch": torch.zeros(5, dtype=torch.bool)},
     TypeError, "key_batch must be an int64 \\(or int32\\) tensor of graph ids"),
    ((torch.ones(3, 4, dtype=torch.bool), torch.ones(5, 4, dtype=torch.bool), 2), {}, TypeError,
     "query and keys must be real numbers, got torch.bool"),
    ((torch.randn(3, 4).cfloat(), torch.randn(5, 4).cfloat(), 2), {}, TypeError,
     "query and keys must be real numbers, got torch.complex64"),
])
def test_topk_neighbors_names_bad_input(args, kwargs, error, message):
    from torch_geometric_stream.graph import topk_neighbors

    with pytest.raises(error, match=message):
        topk_neighbors(*args, **kwargs)


@pytest.mark.parametrize("query_keys, error, message", [
    ([[1.0, 0.0], [0.0, 1.0]], TypeError, "query and keys must be tensors, got list"),
    (torch.randn(4), ValueError, r"must be 2-D with one width h, got \(4,\) and \(4,\)"),
    (torch.ones(4, 2, dtype=torch.bool), TypeError, "real numbers, got torch.bool"),
])
def test_receptive_topk_names_bad_query_keys(query_keys, error, message):
    from torch_geometric_stream.graph import receptive_topk

    with pytest.raises(error, match=message):
        receptive_topk(query_keys, torch.tensor([0]), 1, 1)


def test_topk_neighbors_names_a_k_beyond_the_keys():
    from torch_geometric_stream.graph import topk_neighbors

    with pytest.raises(ValueError, match=r"k must lie in \[0, 2\] \(the number of keys\), got 5"):
        topk_neighbors(torch.randn(3, 4), torch.randn(2, 4), 5)


@pytest.mark.parametrize("k", [1.0, True, "2"])
def test_the_searches_name_a_k_that_is_not_an_integer(k):
    # a float k was torch's "topk(): argument 'k' must be int", a str a comparison error
    from torch_geometric_stream.graph import receptive_topk, topk_neighbors

    keys = torch.randn(3, 4)
    with pytest.raises(TypeError, match=f"k must be an integer, got {type(k).__name__}"):
        topk_neighbors(keys, keys, k)
    with pytest.raises(TypeError, match=f"k must be an integer, got {type(k).__name__}"):
        receptive_topk(keys, torch.tensor([0]), k, 1)


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_unweighted_graph_is_weighed_in_the_features_dtype(dtype):
    torch.manual_seed(0)
    backbone = GCNBackbone(4, 8, 3, num_layers=2).to(dtype)
    x = torch.randn(10, 4, dtype=dtype)
    ones = torch.ones(EDGES.size(1), dtype=dtype)
    assert torch.equal(backbone(x, EDGES), backbone(x, EDGES, ones))  # no float32 detour
    assert dense_adjacency(EDGES, None, 10, dtype=dtype).dtype == dtype


@pytest.mark.parametrize("adj, error, message", [
    (torch.eye(9), ValueError, r"adj must have shape \(10, 10\) for x's rows, got \(9, 9\)"),
    (torch.eye(10).double(), TypeError, "adj must be a torch.float32 tensor like x"),
    ("eye", TypeError, "got str"),
])
def test_dense_forward_names_a_bad_adjacency(adj, error, message):
    with pytest.raises(error, match=message):
        GCNBackbone(4, 8, 3, num_layers=2).forward_dense(X10, adj)


@pytest.mark.parametrize("call, error, message", [
    (lambda m: m(X10.to("meta"), EDGES), TypeError, "x is on the 'meta' device"),
    (lambda m: m(X10, EDGES, torch.ones(3, device="meta")), TypeError,
     "edge_weight is on the 'meta' device"),
    (lambda m: m(X10, EDGES.to_sparse()), TypeError, "edge_index must be a dense tensor"),
    (lambda m: m(X10, EDGES, torch.ones(3).to_sparse()), TypeError,
     "edge_weight must be a dense tensor"),
    (lambda m: m.to("meta")(X10, EDGES), ValueError, "x must be on the module.s device meta"),
    (lambda m: m.forward_dense(X10.to("meta"), torch.eye(10)), TypeError,
     "x is on the 'meta' device"),
    (lambda m: m.forward_dense(X10, torch.eye(10, device="meta")), TypeError,
     "adj is on the 'meta' device"),
    (lambda m: m.to("meta").forward_dense(X10, torch.eye(10)), ValueError,
     "x must be on the module.s device meta"),
])
def test_backbone_names_tensors_without_values_or_on_another_device(call, error, message):
    # before: torch's "Tensor on device meta is not on the expected device cpu!",
    # NotImplementedError (aminmax of a sparse edge_index), or a meta result
    with pytest.raises(error, match=message):
        call(GCNBackbone(4, 8, 3, 2))


def _adjacency_t(num_nodes=10):
    """StaticKNNGraph's graph of X10 and its sparse adj_t[target, source] (PyG's)."""
    edge_index, weight = StaticKNNGraph(4, 3)(X10[:num_nodes])
    return edge_index, weight, torch.sparse_coo_tensor(
        edge_index.flip(0), weight, (num_nodes, num_nodes), check_invariants=True).coalesce()


@pytest.mark.parametrize("layout", ["coo", "csr", "coo, N = 2", "coo int, N = 2"])
@pytest.mark.parametrize("call", [
    lambda x, adj: GCNBackbone(4, 8, 3, 2)(x, adj),
    lambda x, adj: GraphBackbone(4, 8, 3, 2, conv=GraphConv)(x, adj),
    lambda x, adj: CSRGraph(adj, x.size(0)),
    lambda x, adj: normalize_edge_weight(adj, adj.values(), x.size(0)),
], ids=["GCNBackbone", "GraphBackbone", "CSRGraph", "normalize_edge_weight"])
def test_sparse_adjacency_as_edge_index_is_refused_with_the_entries_to_pass(layout, call):
    """Before: "edge_index must have shape (2, E), got (10, 10)" and, for N = 2
    (a (2, 2) matrix), "edge_index must be an int64 (or int32) tensor, got torch.float32"."""
    num_nodes = 2 if "N = 2" in layout else 10
    adj_t = _adjacency_t(num_nodes)[2]
    adj_t = (adj_t.to_sparse_csr() if layout == "csr" else
             adj_t.long() if "int" in layout else adj_t)
    with pytest.raises(TypeError, match=r"edge_index must be a dense tensor, got layout "
                       r"torch.sparse_\w+; a sparse adjacency matrix is not taken as "
                       r"edge_index: pass its entries .* a.indices\(\).flip\(0\)"):
        call(X10[:num_nodes], adj_t)


def test_the_entries_the_sparse_adjacency_message_names_give_the_graph():
    """What the message says to pass, for adj_t and adj, is the graph itself."""
    edge_index, weight, adj_t = _adjacency_t()
    backbone = GCNBackbone(4, 8, 3, 2)
    expected = backbone(X10, edge_index, weight)
    a = adj_t.to_sparse_coo().coalesce()
    assert torch.allclose(backbone(X10, a.indices().flip(0), a.values()), expected, atol=1e-6)
    a = adj_t.t().to_sparse_coo().coalesce()  # adj[source, target]
    assert torch.allclose(backbone(X10, a.indices(), a.values()), expected, atol=1e-6)


def test_sparse_tensor_as_edge_index_names_its_entries():
    from torch_geometric.typing import SparseTensor
    adj_t = SparseTensor.__new__(SparseTensor)  # (torch-sparse itself need not be installed)
    with pytest.raises(TypeError, match=r"edge_index must be a tensor, got SparseTensor; a "
                       r"SparseTensor is not taken as edge_index: .*adj_t.coo\(\); "
                       r"edge_index = torch.stack\(\[col, row\]\)"):
        GCNBackbone(4, 8, 3, 2)(X10, adj_t)


def test_sparse_rows_are_embedded_by_the_learned_graph_refused_where_normalized():
    """The learned f_E (a linear layer first) takes sparse rows; the static graph
    and the structure loss, which normalize the rows themselves, refuse them
    (before: torch's NotImplementedError for linalg_vector_norm on SparseCPU)."""
    graph = DynamicKNNGraph(4, 3, hidden_channels=8)
    dense, sparse = graph(X10), graph(X10.to_sparse())
    assert torch.equal(dense[0], sparse[0])
    assert torch.allclose(dense[1], sparse[1], atol=1e-6)
    for call in (lambda: StaticKNNGraph(4, 3)(X10.to_sparse()),
                 lambda: StaticKNNGraph(4, 3).embed(X10.to_sparse()),
                 lambda: graph.structure_loss(X10.to_sparse())):
        with pytest.raises(TypeError, match="x must be a dense tensor, got layout "
                           "torch.sparse_coo"):
            call()


def test_sparse_rows_go_through_gcn_backbone_refused_by_a_graph_backbone():
    """GCNBackbone's first linear map multiplies sparse rows; GraphBackbone's convs
    need not (before: GraphConv's scatter_add_ failed on SparseCPU, deep in PyG)."""
    edge_index, edge_weight = StaticKNNGraph(4, 3)(X10)
    torch.manual_seed(0)
    gcn = GCNBackbone(4, 8, 3, 2)
    torch.testing.assert_close(gcn(X10.to_sparse(), edge_index, edge_weight),
                               gcn(X10, edge_index, edge_weight))
    with pytest.raises(TypeError, match="x must be a dense tensor, got layout torch.sparse_coo"):
        GraphBackbone(4, 8, 3, 2, conv=GraphConv)(X10.to_sparse(), edge_index, edge_weight)


@pytest.mark.parametrize("x, error, message", [
    (X10.to("meta"), TypeError, "x is on the 'meta' device"),
    (X10, ValueError, "x must be on the module.s device meta"),
])
def test_mlp_backbone_names_features_without_values_or_on_another_device(x, error, message):
    backbone = MLPBackbone(4, 8, 3, 2)
    with pytest.raises(error, match=message):
        (backbone if x.is_meta else backbone.to("meta"))(x)


@pytest.mark.parametrize("aggregation", ["csr", "message_passing"])
def test_edge_weights_of_another_float_dtype_are_cast_to_the_features(aggregation):
    # message passing raised torch's "mixed dtype (CPU)"; the CSR path already cast them
    torch.manual_seed(0)
    backbone = GCNBackbone(4, 8, 3, 2, aggregation=aggregation)
    weight = torch.rand(3)
    torch.testing.assert_close(backbone(X10, EDGES, weight.double()),
                               backbone(X10, EDGES, weight))
    torch.testing.assert_close(backbone(X10, EDGES, weight.double(), normalized=True),
                               backbone(X10, EDGES, weight, normalized=True))


def test_normalized_graph_without_weights_is_named():
    with pytest.raises(ValueError, match="normalized=True needs the normalized edge_weight"):
        GCNBackbone(4, 8, 3, num_layers=2)(X10, EDGES, normalized=True)


_TWO_EDGES = torch.tensor([[0, 1], [1, 0]])
_BAD_GRAPHS = [
    (torch.tensor([[0, 3], [1, 0]]), torch.ones(2), ValueError,
     r"edge_index must hold node indices in \[0, 3\), got values in \[0, 3\]"),
    (torch.tensor([[0, -1], [1, 0]]), torch.ones(2), ValueError, r"got values in \[-1, 1\]"),
    (_TWO_EDGES.float(), torch.ones(2), TypeError, "edge_index must be an int64"),
    (_TWO_EDGES[0], torch.ones(2), ValueError, r"edge_index must have shape \(2, E\)"),
    (_TWO_EDGES, torch.ones(3), ValueError, r"edge_weight must have shape \(2,\)"),
    (_TWO_EDGES, torch.ones(2, dtype=torch.long), TypeError, "edge_weight must be a floating"),
    (_TWO_EDGES.to("meta"), torch.ones(2), TypeError,
     "edge_index is on the 'meta' device, which holds no values"),
    (_TWO_EDGES, torch.ones(2, device="meta"), TypeError,
     "edge_weight is on the 'meta' device, which holds no values"),
    (_TWO_EDGES.to_sparse(), torch.ones(2), TypeError, "edge_index must be a dense tensor"),
    (_TWO_EDGES, torch.ones(2).to_sparse(), TypeError, "edge_weight must be a dense tensor"),
]


@pytest.mark.parametrize("edge_index, weight, error, message", _BAD_GRAPHS)
@pytest.mark.parametrize("call", [
    lambda ei, w: normalize_edge_weight(ei, w, 3),
    lambda ei, w: normalize_edge_weight(ei, w, 3, "mean"),
    lambda ei, w: dense_adjacency(ei, w, 3),
    lambda ei, w: GCNBackbone(4, 8, 3, num_layers=2).normalize(ei, w, 3),
    lambda ei, w: with_self_loops(ei, w, 3),
], ids=["symmetric", "mean", "dense_adjacency", "backbone.normalize", "with_self_loops"])
def test_graph_helpers_name_a_graph_that_does_not_fit(call, edge_index, weight, error, message):
    with pytest.raises(error, match=message):
        call(edge_index, weight)


@pytest.mark.parametrize("call, error, message", [
    (lambda: with_self_loops(_TWO_EDGES, None, 3), TypeError, "edge_weight must be a floating"),
    (lambda: with_self_loops(_TWO_EDGES, torch.ones(2), -1), ValueError, "num_nodes must be >= 0"),
    (lambda: with_self_loops(_TWO_EDGES, torch.ones(2), True), TypeError,
     "num_nodes must be an integer, got bool"),
    (lambda: with_self_loops(_TWO_EDGES, torch.ones(2), 3, "1"), TypeError,
     "fill_value must be a number, got str"),
    # before: NaN self-loop weights, and a truthy "yes" / 1 read as add=True
    (lambda: with_self_loops(_TWO_EDGES, torch.ones(2), 3, float("nan")), ValueError,
     "fill_value must be a finite number, got nan"),
    (lambda: with_self_loops(_TWO_EDGES, torch.ones(2), 3, float("-inf")), ValueError,
     "fill_value must be a finite number, got -inf"),
    (lambda: with_self_loops(_TWO_EDGES, torch.ones(2), 3, add="yes"), TypeError,
     "add must be a bool, got str"),
    (lambda: with_self_loops(_TWO_EDGES, torch.ones(2), 3, add=1), TypeError,
     "add must be a bool, got int"),
])
def test_with_self_loops_names_bad_arguments(call, error, message):
    # before: AttributeError on None, torch's index errors, a silent 1-node graph for True
    with pytest.raises(error, match=message):
        call()


def test_with_self_loops_takes_numpy_bools_as_flags():
    weight = torch.tensor([0.5, 2.0])
    for flag in (True, False):
        expected = with_self_loops(_TWO_EDGES, weight, 3, 1.0, flag)
        got = with_self_loops(_TWO_EDGES, weight, 3, 1.0, np.bool_(flag))
        assert all(torch.equal(a, b) for a, b in zip(got, expected))


def test_normalize_edge_weight_names_missing_weights_and_unknown_modes():
    with pytest.raises(TypeError, match="edge_weight must be a floating-point tensor"):
        normalize_edge_weight(_TWO_EDGES, None, 3)
    with pytest.raises(ValueError, match="normalization must be one of"):
        normalize_edge_weight(_TWO_EDGES, torch.ones(2), 3, "Symmetric")
    with pytest.raises(TypeError, match="num_nodes must be an integer"):
        dense_adjacency(_TWO_EDGES, None, 3.0)


def test_unchecked_graph_helpers_give_the_checked_result():
    weight = torch.tensor([0.5, 0.25])
    for mode in ("symmetric", "symmetric-add", "mean", "none"):
        checked = normalize_edge_weight(_TWO_EDGES, weight, 3, mode)
        unchecked = normalize_edge_weight(_TWO_EDGES, weight, 3, mode, check=False)
        assert all(torch.equal(a, b) for a, b in zip(checked, unchecked))
    assert torch.equal(dense_adjacency(_TWO_EDGES, weight, 3),
                       dense_adjacency(_TWO_EDGES, weight, 3, check=False))


def _out_of_place_dense_adjacency(edge_index, weight, num_nodes):
    """dense_adjacency before session 87: a second (N, N) matrix from index_put."""
    return weight.new_zeros(num_nodes, num_nodes).index_put(
        (edge_index[1], edge_index[0]), weight, accumulate=True)


def test_dense_adjacency_allocates_one_matrix():
    # (it allocated two: new_zeros, then the out-of-place index_put's copy)
    from torch.utils._python_dispatch import TorchDispatchMode

    class Storages(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.square = set()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if isinstance(out, torch.Tensor) and out.shape == (7, 7):
                self.square.add(out.untyped_storage().data_ptr())
            return out

    edge_index = torch.tensor([[0, 1, 1, 6], [1, 2, 2, 0]])
    with Storages() as storages:
        dense_adjacency(edge_index, torch.rand(4), 7, check=False)
    assert len(storages.square) == 1


def test_dense_adjacency_in_place_keeps_values_and_gradients():
    # duplicate edges (2 -> 1 three times, a self-loop twice) are summed as before;
    # first and second derivatives w.r.t. the weights, and vmap over them, unchanged
    edge_index = torch.tensor([[2, 2, 0, 2, 1, 1, 0], [1, 1, 2, 1, 1, 1, 0]])
    weight = torch.tensor([0.5, -0.25, 2.0, 0.125, 1.0, 3.0, 0.75], dtype=torch.float64)
    adj = dense_adjacency(edge_index, weight, 3)
    assert adj[1, 2] == 0.375 and adj[1, 1] == 4.0 and adj[2, 0] == 2.0 and adj[0, 0] == 0.75
    assert torch.equal(adj, _out_of_place_dense_adjacency(edge_index, weight, 3))
    probe = torch.arange(9, dtype=torch.float64).view(3, 3)
    grads = []
    for build in (dense_adjacency, _out_of_place_dense_adjacency):
        w = weight.clone().requires_grad_()
        (first,) = torch.autograd.grad((build(edge_index, w, 3) ** 3 * probe).sum(), w,
                                       create_graph=True)
        (second,) = torch.autograd.grad(first.sum(), w)
        batched = torch.func.vmap(lambda v: build(edge_index, v, 3))(weight.expand(2, 7) * 2)
        grads.append((first.detach(), second, batched))
    assert all(torch.equal(a, b) for a, b in zip(*grads))
    assert torch.equal(grads[0][0][:2], 3 * 0.375 ** 2 * torch.full((2,), 5.0, dtype=torch.float64))


def test_backbone_repr_and_reset():
    backbone = GCNBackbone(5, 16, 3, num_layers=2)
    assert repr(backbone) == "GCNBackbone(5, 3, num_layers=2)"
    assert len(backbone.convs) == 2 and len(backbone.norms) == 1
    mlp = MLPBackbone(5, 16, 3, num_layers=1)
    assert mlp(torch.randn(2, 5)).shape == (2, 3)


def test_the_learner_structure_loss_compares_cosine_similarities_of_raw_rows():
    # the rows are L2-normalized first, so their scale does not matter, and the
    # value is the mean squared difference of the two cosine-similarity matrices
    torch.manual_seed(0)
    graph = DynamicKNNGraph(4, k=2, hidden_channels=8)
    x = torch.randn(6, 4)
    unit = x / x.norm(dim=1, keepdim=True)
    emb = graph.embed(unit)
    expected = F.mse_loss(emb @ emb.T, unit @ unit.T)
    torch.testing.assert_close(graph.structure_loss(x), expected)
    torch.testing.assert_close(graph.structure_loss(10.0 * x), expected)
    torch.testing.assert_close(graph.structure_loss(x, emb=emb), expected)


@pytest.mark.parametrize("form", ["plain", "frobenius"])
def test_structure_loss_cheap_form_equals_dense_mse(form):
    x = F.normalize(torch.randn(30, 12), dim=-1)
    emb = F.normalize(torch.randn(30, 7), dim=-1)
    k, s = x @ x.t(), emb @ emb.t()
    if form == "frobenius":
        k, s = k / k.norm(), s / s.norm()
    expected = F.mse_loss(s, k)
    assert torch.allclose(structure_loss(x, emb, form=form), expected, atol=1e-6)
    query = torch.tensor([0, 3, 5])
    kq, sq = x[query] @ x.t(), emb[query] @ emb.t()
    if form == "frobenius":
        kq, sq = kq / kq.norm(), sq / sq.norm()
    assert torch.allclose(structure_loss(x, emb, query_index=query, form=form),
                          F.mse_loss(sq, kq), atol=1e-6)


def _backward_node_names(tensor):
    """Names of the autograd nodes ``tensor``'s backward runs."""
    seen, stack = set(), [tensor.grad_fn]
    while stack:
        node = stack.pop()
        if node is not None and node not in seen:
            seen.add(node)
            stack.extend(next_node for next_node, _ in node.next_functions)
    return {type(node).__name__ for node in seen}


@pytest.mark.parametrize("query", [[3, 0, 17], [3, 3, 0]])
def test_structure_loss_query_block_gradient_is_autograds(query):
    # SLeDGe-L's q x N block has its own backward (no (N, h) scatter of the query
    # rows' gradient): the gradient of autograd's gather and product, bit for bit
    # with distinct query rows (a repeated row sums its two parts in another order)
    gen = torch.Generator().manual_seed(0)
    x = F.normalize(torch.randn(40, 12, generator=gen), dim=-1)
    emb = F.normalize(torch.randn(40, 7, generator=gen), dim=-1).requires_grad_()
    query = torch.tensor(query)
    assert _block_is_cheaper(3, 40, 12, 7, False)  # the block, not the Gram form
    loss = structure_loss(x, emb, query_index=query, include_constant=False)
    assert "IndexBackward0" not in _backward_node_names(loss)
    sim_e, sim_x = emb[query] @ emb.t(), x[query] @ x.t()
    expected = (sim_e.square().sum() - 2.0 * (sim_e * sim_x).sum()) / 120
    assert torch.equal(loss, expected)
    grad, expected_grad = (torch.autograd.grad(value, emb)[0] for value in (loss, expected))
    if query.unique().numel() == query.numel():
        assert torch.equal(grad, expected_grad)
    else:
        torch.testing.assert_close(grad, expected_grad, rtol=1e-6, atol=1e-7)


_EMB10 = torch.randn(10, 3, generator=torch.Generator().manual_seed(1))


@pytest.mark.parametrize("args, kwargs, error, message", [
    ((X10, _EMB10[:9]), {}, ValueError,
     r"x \(N, d\) and emb \(N, h\) must be 2-D with one number of rows N, got \(10, 4\) "
     r"and \(9, 3\)"),
    ((X10[0], _EMB10[0]), {}, ValueError, r"must be 2-D with one number of rows N, got \(4,\)"),
    ((X10, _EMB10.double()), {}, TypeError,
     "x and emb must have one floating-point dtype, got torch.float32 and torch.float64"),
    ((X10.long(), _EMB10.long()), {}, TypeError, "one floating-point dtype, got torch.int64"),
    ((X10.tolist(), _EMB10), {}, TypeError, "x and emb must be tensors, got list and Tensor"),
    ((X10[:0], _EMB10[:0]), {}, ValueError, "x has no rows"),
    ((X10, _EMB10), {"query_index": torch.tensor([0, 10])}, ValueError,
     r"query_index must hold row indices in \[0, 10\), got values in \[0, 10\]"),
    ((X10, _EMB10), {"query_index": torch.tensor([1.0])}, TypeError,
     "query_index must be a 1-D int64"),
    ((X10, _EMB10), {"query_index": torch.tensor([[0, 1]])}, TypeError,
     r"query_index must be a 1-D int64 \(or int32\) integer tensor of row indices, got "
     r"shape \(1, 2\), dtype torch.int64"),
    ((X10, _EMB10), {"num_rows": 11}, ValueError, "num_rows must be at most x's 10 rows, got 11"),
    ((X10, _EMB10), {"num_rows": 0}, ValueError, "num_rows must be >= 1, got 0"),
    # before: a meta-device loss silently (another device: torch's matmul error)
    ((X10, _EMB10.to("meta")), {}, ValueError, "emb must be on x's device cpu, got meta"),
    # before: read as include_constant=True
    ((X10, _EMB10), {"include_constant": "no"}, TypeError,
     "include_constant must be a bool, got str"),
    ((X10, _EMB10), {"include_constant": 0}, TypeError, "include_constant must be a bool, got int"),
    ((X10, _EMB10), {"form": "cosine"}, ValueError,
     r"^form must be one of \('plain', 'frobenius'\), got 'cosine'$"),
])
def test_structure_loss_names_bad_input(args, kwargs, error, message):
    with pytest.raises(error, match=message):
        structure_loss(*args, **kwargs)


def test_unchecked_structure_loss_gives_the_checked_result():
    query = torch.tensor([0, 3, 5])
    for kwargs in ({}, {"query_index": query}, {"num_rows": 7, "form": "frobenius"}):
        assert torch.equal(structure_loss(X10, _EMB10, **kwargs),
                           structure_loss(X10, _EMB10, check=False, **kwargs))


@pytest.mark.parametrize("form", ["plain", "frobenius"])
def test_structure_loss_all_pairs_gradient_equals_the_dense_mse_gradient(form):
    # the all-pairs form takes ||E^T E||^2 through one product backward (4 E E^T E)
    x = F.normalize(torch.randn(40, 5, dtype=torch.float64), dim=-1)
    emb = F.normalize(torch.randn(40, 6, dtype=torch.float64), dim=-1).requires_grad_()
    k, s = x @ x.t(), emb @ emb.t()
    if form == "frobenius":
        k, s = k / k.norm(), s / s.norm()
    grad, = torch.autograd.grad(structure_loss(x, emb, form=form), emb)
    expected, = torch.autograd.grad(F.mse_loss(s, k), emb)
    assert torch.allclose(grad, expected, rtol=1e-10, atol=1e-14)
    assert torch.autograd.gradcheck(lambda e: structure_loss(x, e, form=form), (emb,))


@pytest.mark.parametrize("form", ["plain", "frobenius"])
@pytest.mark.parametrize("include_constant", [True, False])
def test_structure_loss_many_queries_uses_gram_products_with_the_same_value_and_gradient(
        form, include_constant):
    from torch_geometric_stream.graph.regularizer import _block_is_cheaper

    x = F.normalize(torch.randn(40, 4, dtype=torch.float64), dim=-1)
    emb = F.normalize(torch.randn(40, 3, dtype=torch.float64), dim=-1).requires_grad_()
    query = torch.arange(5, 35)  # 30 queries of 40 rows, h = 3, d = 4: Gram products
    assert not _block_is_cheaper(30, 40, 4, 3, constant=True)
    assert _block_is_cheaper(3, 40, 4, 3, constant=True)
    kq, sq = x[query] @ x.t(), emb[query] @ emb.t()
    if form == "frobenius":
        kq, sq = kq / kq.norm(), sq / sq.norm()
    expected = F.mse_loss(sq, kq)
    loss = structure_loss(x, emb, query_index=query, form=form,
                          include_constant=include_constant)
    if include_constant or form == "frobenius":
        assert torch.allclose(loss, expected, rtol=1e-12, atol=1e-15)
    else:  # the constant ||X_q X^T||^2 / (q N) is left out
        assert torch.allclose(loss + (x[query] @ x.t()).square().mean(), expected, rtol=1e-12)
    grad, = torch.autograd.grad(loss, emb, retain_graph=True)
    expected_grad, = torch.autograd.grad(expected, emb)
    assert torch.allclose(grad, expected_grad, rtol=1e-10, atol=1e-14)
    padded_x, padded_emb = torch.zeros(56, 4).double(), torch.zeros(56, 3).double()
    padded_x[:40], padded_emb[:40] = x, emb.detach()
    padded = structure_loss(padded_x, padded_emb, query_index=query, form=form,
                            include_constant=include_constant, num_rows=40)
    assert torch.allclose(padded, loss, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("form", ["plain", "frobenius"])
@pytest.mark.parametrize("query", [None, torch.tensor([0, 3, 5]), torch.arange(18)])
def test_structure_loss_of_zero_padded_rows_equals_the_loss_of_the_real_rows(form, query):
    x = F.normalize(torch.randn(20, 12, dtype=torch.float64), dim=-1)
    emb = F.normalize(torch.randn(20, 7, dtype=torch.float64), dim=-1)
    padded_x, padded_emb = torch.zeros(32, 12).double(), torch.zeros(32, 7).double()
    padded_x[:20], padded_emb[:20] = x, emb
    expected = structure_loss(x, emb, query_index=query, form=form)
    padded = structure_loss(padded_x, padded_emb, query_index=query, form=form, num_rows=20)
    assert torch.allclose(padded, expected, rtol=1e-12, atol=0)
    assert not torch.allclose(structure_loss(padded_x, padded_emb, query_index=query, form=form),
                              expected, rtol=1e-3)  # without num_rows: the mean over 32


@pytest.mark.parametrize("form", ["plain", "frobenius"])
@pytest.mark.parametrize("query", [None, [3, 0, 17], [3, 5, 0], list(range(5, 35))])
def test_structure_loss_row_mask_equals_the_masked_embeddings_bit_for_bit(form, query):
    # SLeDGe's memory before it is full: the empty slots' embeddings count as zero
    # rows. The q x N block zeroes their similarities instead of an (N, h) product:
    # the same loss and gradient bit for bit (a query row outside the mask, 5, too)
    gen = torch.Generator().manual_seed(0)
    x = F.normalize(torch.randn(40, 4, generator=gen), dim=-1)
    mask = torch.rand(40, generator=gen) < 0.7
    mask[[0, 3, 17]] = True
    mask[5] = False
    x = x * mask.unsqueeze(1)  # empty slots: zero rows of x
    emb = F.normalize(torch.randn(40, 3, generator=gen), dim=-1).requires_grad_()
    query = None if query is None else torch.tensor(query)
    if query is not None:  # 3 queries: the q x N block; 30: the Gram form
        assert _block_is_cheaper(query.numel(), 40, 4, 3, form == "frobenius") == (
            query.numel() == 3)
    kwargs = dict(query_index=query, form=form, include_constant=False,
                  num_rows=int(mask.sum()))
    loss = structure_loss(x, emb, row_mask=mask, **kwargs)
    expected = structure_loss(x, emb * mask.unsqueeze(1), **kwargs)
    assert torch.equal(loss, expected)
    grad, expected_grad = (torch.autograd.grad(value, emb)[0] for value in (loss, expected))
    assert torch.equal(grad, expected_grad)
    assert torch.equal(structure_loss(x, emb, row_mask=mask, check=False, **kwargs), loss)
    full = torch.ones(40, dtype=torch.bool)  # every row: the loss without a mask
    assert torch.equal(structure_loss(x, emb, row_mask=full, **kwargs),
                       structure_loss(x, emb, **kwargs))


@pytest.mark.parametrize("row_mask, error, message", [
    (torch.ones(10), TypeError, "row_mask must be a boolean tensor, got torch.float32"),
    ([True] * 10, TypeError, "row_mask must be a boolean tensor, got list"),
    (torch.ones(9, dtype=torch.bool), ValueError,
     r"row_mask must have shape \(10,\), got \(9,\)"),
    (torch.ones(10, 1, dtype=torch.bool), ValueError, r"got \(10, 1\)"),
    (torch.ones(10, dtype=torch.bool, device="meta"), ValueError,
     "row_mask must be on x's device cpu, got meta"),
])
def test_structure_loss_names_a_bad_row_mask(row_mask, error, message):
    with pytest.raises(error, match=message):
        structure_loss(X10, _EMB10, row_mask=row_mask)


def test_structure_loss_gradient_without_constant_is_the_same():
    x = F.normalize(torch.randn(20, 50), dim=-1)  # d > N: other product order
    emb = F.normalize(torch.randn(20, 6), dim=-1).requires_grad_()
    g1, = torch.autograd.grad(structure_loss(x, emb), emb)
    g2, = torch.autograd.grad(structure_loss(x, emb, include_constant=False), emb)
    expected, = torch.autograd.grad(F.mse_loss(emb @ emb.t(), x @ x.t()), emb)
    assert torch.allclose(g1, expected, atol=1e-6) and torch.allclose(g2, expected, atol=1e-6)


@pytest.mark.parametrize("query", [None, torch.tensor([0, 2])])
def test_frobenius_form_is_finite_for_all_zero_inputs(query):
    # the online scaler maps the first sample of a stream to the zero vector
    x = torch.zeros(3, 4)
    emb = F.normalize(torch.randn(3, 5), dim=-1).requires_grad_()
    loss = structure_loss(x, emb, query_index=query, form="frobenius")
    grad, = torch.autograd.grad(loss, emb)
    assert torch.isfinite(loss) and torch.isfinite(grad).all()


def _dense_batched_structure_loss(x, emb, batch, query_index, form):
    """The structure loss over the same-graph pairs from the dense matrices, by hand."""
    x = F.normalize(x, dim=-1)
    query = torch.arange(x.size(0)) if query_index is None else query_index
    k, s = x[query] @ x.t(), emb[query] @ emb.t()
    query_graph = batch[query][:, None]
    same = query_graph == batch[None, :]
    if form == "frobenius":  # each graph's block divided by its own Frobenius norm
        for graph_id in batch.unique():
            block = same & (query_graph == graph_id)
            if block.any():
                k = torch.where(block, k / k[block].norm(), k)
                s = torch.where(block, s / s[block].norm(), s)
    return (s - k)[same].square().mean()


def _batch_without_graph_2_queries(batch):
    """Unsorted query rows, one twice, none of graph 2 (its pairs drop out)."""
    return (batch != 2).nonzero().view(-1)[torch.tensor([9, 0, 3, 3, 14, 7, 20])]


@pytest.mark.parametrize("form", ["plain", "frobenius"])
@pytest.mark.parametrize("with_query", [False, True], ids=["all-pairs", "query"])
@pytest.mark.parametrize("shuffle", [False, True], ids=["sorted", "unsorted"])
def test_the_learner_structure_loss_with_batch_compares_same_graph_pairs_only(
        form, with_query, shuffle):
    graph = DynamicKNNGraph(6, k=3, hidden_channels=8).double()
    batch = _random_batch(shuffle)
    x = torch.randn(batch.numel(), 6, dtype=torch.float64)
    query = _batch_without_graph_2_queries(batch) if with_query else None
    emb = graph.embed(F.normalize(x, dim=-1))
    expected = _dense_batched_structure_loss(x, emb, batch, query, form)
    loss = graph.structure_loss(x, query_index=query, form=form, batch=batch)
    torch.testing.assert_close(loss, expected, rtol=0, atol=1e-12)
    torch.testing.assert_close(graph.structure_loss(x, emb=emb, query_index=query, form=form,
                                                    batch=batch), expected, rtol=0, atol=1e-12)
    assert not torch.allclose(loss, graph.structure_loss(x, query_index=query, form=form),
                              rtol=1e-3)  # without batch: all pairs
    params = list(graph.parameters())
    grads = torch.autograd.grad(loss, params)
    expected_grads = torch.autograd.grad(expected, params)
    for grad, grad_expected in zip(grads, expected_grads):
        assert grad.abs().sum() > 0
        torch.testing.assert_close(grad, grad_expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize("form", ["plain", "frobenius"])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32])
def test_the_learner_structure_loss_with_one_graph_batch_is_the_loss_without_batch(form, dtype):
    graph = DynamicKNNGraph(6, k=3, hidden_channels=8)
    x = torch.randn(10, 6)
    batch = torch.full((10,), 3, dtype=dtype)  # any id
    for query in (None, torch.tensor([5, 2, 5])):
        assert torch.equal(graph.structure_loss(x, query_index=query, form=form, batch=batch),
                           graph.structure_loss(x, query_index=query, form=form))
    # no query row, no pair: what the loss without batch gives (before, the int 0)
    none = torch.tensor([], dtype=torch.long)
    torch.testing.assert_close(graph.structure_loss(x, query_index=none, form=form, batch=batch),
                               graph.structure_loss(x, query_index=none, form=form),
                               equal_nan=True, rtol=0, atol=0)


def test_edge_weight_of_any_edge_index_matches_neighbor_weights():
    graph = DynamicKNNGraph(4, k=3, hidden_channels=8)
    x = torch.randn(9, 4)
    emb = graph.embed(x)
    neighbors = graph.neighbors(emb)
    edge_index = neighbors_to_edge_index(neighbors)
    assert torch.allclose(DynamicKNNGraph.edge_weight(emb, edge_index),
                          DynamicKNNGraph.neighbor_weight(emb, neighbors), atol=1e-6)


def test_with_self_loops_is_the_graph_of_add_remaining_self_loops():
    from torch_geometric.utils import add_remaining_self_loops
    # node 1 has a loop of weight -0.5, nodes 0 and 2 have none
    edge_index = torch.tensor([[0, 1, 2, 1], [1, 1, 0, 2]])
    weight = torch.tensor([2.0, -0.5, 3.0, 1.5], dtype=torch.float64, requires_grad=True)
    mine = dense_adjacency(*with_self_loops(edge_index, weight, 3), 3)
    theirs = dense_adjacency(*add_remaining_self_loops(edge_index, weight, 1.0, 3), 3)
    assert torch.equal(mine, theirs)
    assert torch.equal(mine.diagonal(), torch.tensor([1.0, -0.5, 1.0], dtype=torch.float64))
    out_grad = torch.arange(9.0, dtype=torch.float64).view(3, 3)
    assert torch.equal(torch.autograd.grad(mine, weight, out_grad)[0],
                       torch.autograd.grad(theirs, weight, out_grad)[0])
    new_index, new_weight = with_self_loops(edge_index, weight, 3)
    assert new_index.size(1) == 4 + 3 and new_weight[1] == 0  # the old loop stays, weight 0
    added = dense_adjacency(*with_self_loops(edge_index, weight, 3, add=True), 3)
    assert torch.equal(added - mine, torch.diag(torch.tensor([0.0, 1.0, 0.0],
                                                             dtype=torch.float64)))


def test_receptive_topk_gives_the_rows_within_the_hops_their_full_search_neighbours():
    from torch_geometric_stream.graph import receptive_topk

    emb = F.normalize(torch.randn(60, 5), dim=-1)
    full = topk_neighbors(emb, emb, 2)
    targets = torch.tensor([7, 3, 7])
    found = receptive_topk(emb, targets, 2, num_hops=2)
    # rows within 2 in-hops of the targets, by breadth-first search over the full graph
    within, frontier = {3, 7}, {3, 7}
    for _ in range(2):
        frontier = {int(j) for i in frontier for j in full.indices[i]} - within
        within |= frontier
    assert sorted(found.rows.tolist()) == sorted(within)
    assert torch.equal(found.top.indices, full.indices[found.rows])
    # scores from a smaller product: equal up to rounding
    assert torch.allclose(found.top.values, full.values[found.rows], atol=1e-6)
    assert receptive_topk(emb, targets, 2, num_hops=2, max_rows=len(within) - 1) is None
    # a masked row is never picked
    mask = torch.ones(60, dtype=torch.bool)
    mask[full.indices[7, 1]] = False
    masked = receptive_topk(emb, targets, 2, num_hops=2, key_mask=mask)
    assert not (masked.top.indices == full.indices[7, 1]).any()


def test_in_hop_subgraph_on_a_hand_checked_graph():
    from torch_geometric_stream.graph.subgraph import in_hop_subgraph

    # 0 -> 1 -> 2 <- 3, 4 -> 4; two hops into row 2 read rows 0, 1, 2, 3
    edge_index = torch.tensor([[0, 1, 3, 4], [1, 2, 2, 4]])
    subset, sub_edge_index, mapping, edge_mask = in_hop_subgraph(torch.tensor([2]), 2,
                                                                 edge_index, 5)
    assert subset.tolist() == [0, 1, 2, 3]
    assert edge_mask.tolist() == [True, True, True, False]
    assert sub_edge_index.tolist() == [[0, 1, 3], [1, 2, 2]]
    assert mapping.tolist() == [2]
    # one hop: only the edges into row 2 (row 0 is read by nothing)
    subset, sub_edge_index, mapping, edge_mask = in_hop_subgraph(torch.tensor([2]), 1,
                                                                 edge_index, 5)
    assert subset.tolist() == [1, 2, 3] and sub_edge_index.tolist() == [[0, 2], [1, 1]]
    assert edge_mask.tolist() == [False, True, True, False] and mapping.tolist() == [1]
    # no hop: row 2 alone, no edge
    subset, sub_edge_index, mapping, edge_mask = in_hop_subgraph(torch.tensor([2]), 0,
                                                                 edge_index, 5)
    assert subset.tolist() == [2] and sub_edge_index.shape == (2, 0)
    assert edge_mask.tolist() == [False] * 4 and mapping.tolist() == [0]


def test_in_hop_subgraph_takes_int32_indices_and_edgeless_graphs():
    from torch_geometric_stream.graph.subgraph import in_hop_subgraph

    # the hand-checked graph above in int32 (targets too): the same int64 results
    edge_index = torch.tensor([[0, 1, 3, 4], [1, 2, 2, 4]], dtype=torch.int32)
    subset, sub_edge_index, mapping, edge_mask = in_hop_subgraph(
        torch.tensor([2], dtype=torch.int32), 2, edge_index, 5)
    assert subset.tolist() == [0, 1, 2, 3] and sub_edge_index.tolist() == [[0, 1, 3], [1, 2, 2]]
    assert edge_mask.tolist() == [True, True, True, False] and mapping.tolist() == [2]
    assert subset.dtype == sub_edge_index.dtype == mapping.dtype == torch.int64
    # no edges: the targets alone (a repeated one once), at any number of hops
    for num_hops in (0, 1, 2):
        subset, sub_edge_index, mapping, edge_mask = in_hop_subgraph(
            torch.tensor([3, 1, 3]), num_hops, torch.empty(2, 0, dtype=torch.long), 4)
        assert subset.tolist() == [1, 3] and mapping.tolist() == [1, 0, 1]
        assert sub_edge_index.shape == (2, 0) and edge_mask.shape == (0,)
        assert edge_mask.dtype == torch.bool


@pytest.mark.parametrize("num_hops", [0, 1, 2, 3])
def test_in_hop_subgraph_gives_what_pyg_k_hop_subgraph_gives(num_hops):
    import torch_geometric
    from torch_geometric.utils import k_hop_subgraph

    from torch_geometric_stream.graph.subgraph import InHopSubgraph, in_hop_subgraph

    # before PyG 2.7, k_hop_subgraph(directed=True) keeps only the last hop's edges
    # (and sets none at 0 hops: pyg-team/pytorch_geometric#9756); there the rows and
    # the targets' places are compared, and the edges by the test above
    pyg_version = tuple(int(part) for part in torch_geometric.__version__.split(".")[:2])
    fields = InHopSubgraph._fields if pyg_version >= (2, 7) else ("subset", "mapping")
    generator = torch.Generator().manual_seed(num_hops)
    for num_nodes, k, num_targets in [(30, 2, 3), (50, 4, 1), (12, 1, 5), (40, 3, 0)]:
        # top-k shaped (every query row k in-edges, some rows none) and random graphs
        queries = torch.randperm(num_nodes, generator=generator)[:num_nodes // 2]
        neighbors = torch.randint(num_nodes, (queries.numel(), k), generator=generator)
        random_edges = torch.randint(num_nodes, (2, 3 * num_nodes), generator=generator)
        for edge_index in (neighbors_to_edge_index(neighbors, queries), random_edges):
            # duplicate targets too
            targets = torch.randint(num_nodes, (num_targets,), generator=generator)
            expected = InHopSubgraph(*k_hop_subgraph(targets, num_hops, edge_index,
                                                     relabel_nodes=True, num_nodes=num_nodes,
                                                     directed=True))
            found = in_hop_subgraph(targets, num_hops, edge_index, num_nodes)
            for field in fields:
                mine, theirs = getattr(found, field), getattr(expected, field)
                assert mine.dtype == theirs.dtype and torch.equal(mine, theirs), field


def test_receptive_topk_searches_up_to_max_rows_rows():
    # identity embeddings, k = 1: every row picks itself, so targets 0 and 2 are
    # the only rows searched, and max_rows = 2 is enough while 1 is not
    from torch_geometric_stream.graph import receptive_topk

    emb, targets = torch.eye(3), torch.tensor([0, 2])
    found = receptive_topk(emb, targets, 1, num_hops=1, max_rows=2)
    assert found.rows.tolist() == [0, 2]
    assert found.top.indices.tolist() == [[0], [2]]
    assert found.top.values.tolist() == [[1.0], [1.0]]
    assert receptive_topk(emb, targets, 1, num_hops=1, max_rows=1) is None


def test_receptive_topk_names_bad_input():
    from torch_geometric_stream.graph import receptive_topk

    emb = F.normalize(torch.randn(6, 3), dim=-1)
    with pytest.raises(ValueError, match="num_hops"):
        receptive_topk(emb, torch.tensor([0]), 2, num_hops=-1)
    with pytest.raises(ValueError, match="k must lie"):
        receptive_topk(emb, torch.tensor([0]), 7, num_hops=1)
    with pytest.raises(TypeError, match="integer"):
        receptive_topk(emb, torch.tensor([0.0]), 2, num_hops=1)
    with pytest.raises(TypeError, match="integer tensor of row indices, got list"):
        receptive_topk(emb, [0], 2, num_hops=1)
    with pytest.raises(ValueError, match=r"\[0, 6\)"):
        receptive_topk(emb, torch.tensor([6]), 2, num_hops=1)


_EMB = torch.eye(4, 3)  # 4 rows of width 3
_NEIGHBORS = torch.tensor([[1, 2], [0, 3]])  # rows 0 and 1 each aggregate from two
_ROWS = torch.tensor([0, 1])


@pytest.mark.parametrize("call, error, message", [
    (lambda: score_neighbors(_EMB[:2], _EMB, _NEIGHBORS.float()), TypeError, "neighbors"),
    (lambda: score_neighbors(_EMB[:2], _EMB, _NEIGHBORS[0]), TypeError, r"2-D int64"),
    (lambda: score_neighbors(_EMB[:2], _EMB, _NEIGHBORS + 2), ValueError, r"\[0, 4\)"),
    (lambda: score_neighbors(_EMB[:2], _EMB, _NEIGHBORS - 1), ValueError, r"\[-1, 2\]"),
    (lambda: score_neighbors(_EMB[:3], _EMB, _NEIGHBORS), ValueError, "one row per query"),
    (lambda: score_neighbors(_EMB[:2], _EMB[:, :2], _NEIGHBORS), ValueError, "one width"),
    (lambda: score_neighbors(_EMB[:2], _EMB.double(), _NEIGHBORS), TypeError, "one dtype"),
    (lambda: score_neighbors(_EMB[:2], _EMB.to("meta"), _NEIGHBORS), ValueError,
     "the keys' device"),
    (lambda: neighbors_to_edge_index(_NEIGHBORS.tolist()), TypeError, "got list"),
    (lambda: neighbors_to_edge_index(_NEIGHBORS, torch.tensor([0, 1, 2])), TypeError,
     r"one target per row"),
    (lambda: neighbors_to_edge_index(_NEIGHBORS, _ROWS.float()), TypeError, "query_index"),
    (lambda: neighbors_to_edge_index(_NEIGHBORS, _ROWS.to("meta")), ValueError,
     "neighbors' device"),
    (lambda: DynamicKNNGraph.neighbor_weight(_EMB, _NEIGHBORS), ValueError,
     r"one row per query \(4\)"),
    (lambda: DynamicKNNGraph.neighbor_weight(_EMB, _NEIGHBORS, _ROWS + 3), ValueError,
     "query_index"),
    (lambda: DynamicKNNGraph.neighbor_weight(_EMB, _NEIGHBORS * 3, _ROWS), ValueError,
     "neighbors"),
    (lambda: DynamicKNNGraph.neighbor_weight(_EMB.long(), _NEIGHBORS, _ROWS), TypeError,
     "emb must be a floating"),
    (lambda: DynamicKNNGraph.neighbor_weight(_EMB[0], _NEIGHBORS, _ROWS), ValueError,
     r"\(N, h\)"),
    (lambda: DynamicKNNGraph.edge_weight(_EMB, torch.tensor([[0, 4], [1, 1]])), ValueError,
     "edge_index"),
    (lambda: DynamicKNNGraph.edge_weight(torch.tensor(1.0), torch.tensor([[0], [0]])),
     ValueError, r"\(N, h\)"),
])
def test_neighbor_helpers_name_input_that_does_not_fit(call, error, message):
    """Before, these crashed inside torch (index_select, stack, bmm) or, for a
    target list of the wrong length, failed only in torch.stack."""
    with pytest.raises(error, match=message):
        call()


def test_unchecked_neighbor_helpers_give_the_checked_result():
    """Hand-checked: unit rows at 0, 45, 90 and -45 degrees; row 0 meets rows 1
    and 2 (cosines 1/sqrt(2), 0), row 1 meets rows 0 and 3 (1/sqrt(2), 0)."""
    emb = F.normalize(torch.tensor([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0], [1.0, -1.0]]), dim=-1)
    expected = torch.tensor([[2 ** -0.5, 0.0], [2 ** -0.5, 0.0]])
    for check in (True, False):
        assert torch.allclose(score_neighbors(emb[:2], emb, _NEIGHBORS, check=check), expected)
        assert torch.equal(neighbors_to_edge_index(_NEIGHBORS, _ROWS, check=check),
                           torch.tensor([[1, 2, 0, 3], [0, 0, 1, 1]]))
        assert torch.allclose(DynamicKNNGraph.neighbor_weight(emb, _NEIGHBORS, _ROWS,
                                                              check=check),
                              expected.view(-1))


def test_scores_of_an_empty_neighbour_matrix_are_empty():
    """``topk_neighbors`` allows k = 0 and no queries; scoring those neighbours
    (the approximate search, and the learned graph in dtypes without CSR
    kernels) was torch's "cannot reshape tensor of 0 elements"."""
    keys = torch.randn(5, 4)
    for num_queries, k in ((3, 0), (0, 2)):
        query = keys[:num_queries]
        neighbors = torch.zeros(num_queries, k, dtype=torch.long)
        assert score_neighbors(query, keys, neighbors).shape == (num_queries, k)
        top = topk_neighbors(query, keys, k, search_dtype=torch.bfloat16)
        assert top.values.shape == top.indices.shape == (num_queries, k)
    graph = DynamicKNNGraph(4, k=3, hidden_channels=8).bfloat16()
    x = torch.randn(3, 4, dtype=torch.bfloat16)
    no_queries = torch.zeros(0, dtype=torch.long)
    for edge_index, edge_weight in (graph(x[:0]), graph(x, query_index=no_queries)):
        assert edge_index.shape == (2, 0) and edge_weight.shape == (0,)


def test_receptive_topk_names_a_key_mask_that_allows_fewer_than_k_rows():
    """Before, the search picked masked rows with score -inf, silently."""
    from torch_geometric_stream.graph import receptive_topk

    emb = F.normalize(torch.randn(5, 3), dim=-1)
    mask = torch.tensor([True, False, True, False, False])
    with pytest.raises(ValueError, match=r"k=3 but key_mask allows only 2 key\(s\)"):
        receptive_topk(emb, torch.tensor([0]), 3, num_hops=1, key_mask=mask)
    # a caller that chose k by the count skips it, as for topk_neighbors
    found = receptive_topk(emb, torch.tensor([0]), 2, num_hops=1, key_mask=mask,
                           check_key_mask=False)
    assert set(found.top.indices.flatten().tolist()) <= {0, 2}


@pytest.mark.parametrize("kwargs, error, message", [
    ({"num_hops": 1.5}, TypeError, "num_hops must be an integer, got float"),
    ({"num_hops": None}, TypeError, "num_hops must be an integer, got NoneType"),
    ({"num_hops": 1, "max_rows": 2.5}, TypeError, "max_rows must be an integer, got float"),
    ({"num_hops": 1, "max_rows": -1}, ValueError, "max_rows must be >= 0, got -1"),
])
def test_receptive_topk_names_hops_and_row_limits_that_are_no_counts(kwargs, error, message):
    """Before, a float num_hops was range()'s "'float' object cannot be interpreted
    as an integer", None a comparison error, and a negative max_rows gave up
    (returned None) on every search."""
    from torch_geometric_stream.graph import receptive_topk

    with pytest.raises(error, match=message):
        receptive_topk(torch.randn(5, 3), torch.tensor([0]), 2, **kwargs)


def test_the_row_masks_must_lie_on_the_rows_device():
    """Before, a key_mask or node_mask on another device was refused deep in torch
    (masked_fill_, or .item() of its count), and receptive_topk even searched
    with a meta-device mask, silently."""
    from torch_geometric_stream.graph import receptive_topk

    keys = torch.randn(5, 4)
    mask = torch.ones(5, dtype=torch.bool, device="meta")
    message = r"key_mask must be on the keys' device cpu, got meta"
    with pytest.raises(ValueError, match=message):
        topk_neighbors(keys, keys, 2, key_mask=mask)
    with pytest.raises(ValueError, match=message):
        topk_neighbors(keys, keys, 2, key_mask=mask, check_key_mask=False)
    with pytest.raises(ValueError, match=message):
        receptive_topk(keys, torch.tensor([0]), 2, 1, key_mask=mask, check_key_mask=False)
    with pytest.raises(ValueError, match=r"node_mask must be on x's device cpu, got meta"):
        DynamicKNNGraph(4, k=2, hidden_channels=8)(keys, node_mask=mask)


def test_the_learner_structure_loss_names_embeddings_on_another_device():
    graph = DynamicKNNGraph(4, k=2, hidden_channels=3)
    with pytest.raises(ValueError, match="emb must be on x's device cpu, got meta"):
        graph.structure_loss(X10, emb=_EMB10.to("meta"))


def test_a_graph_backbone_of_gcnconv_normalizes_once_as_documented():
    """GraphBackbone's docs: GCNConv(normalize=False), or the default GCNConv with
    normalization="none", is GCNBackbone; the default GCNConv under the backbone's
    normalization normalizes twice (the docs named plain ``GCNConv`` before)."""
    x, edge_index = torch.randn(5, 4), torch.tensor([[0, 1, 2, 3, 4, 1], [1, 2, 3, 4, 0, 0]])
    edge_weight = torch.rand(6)
    reference = GCNBackbone(4, 8, 3, num_layers=2)
    expected = reference(x, edge_index, edge_weight)
    outputs = {}
    for name, conv, normalization in (
            ("once", lambda i, o: GCNConv(i, o, normalize=False), "symmetric"),
            ("by the conv", lambda i, o: GCNConv(i, o), "none"),
            ("twice", lambda i, o: GCNConv(i, o), "symmetric")):
        backbone = GraphBackbone(4, 8, 3, num_layers=2, conv=conv, normalization=normalization)
        backbone.load_state_dict(reference.state_dict())
        outputs[name] = backbone(x, edge_index, edge_weight)
    assert torch.allclose(outputs["once"], expected, atol=1e-6)
    assert torch.allclose(outputs["by the conv"], expected, atol=1e-6)
    assert not torch.allclose(outputs["twice"], expected, atol=1e-2)
