"""torch.func transforms (grad, vmap) through the custom kernels and the public modules:
the same gradients as autograd's backward, the same values as a Python loop."""
import pytest
import torch
from torch.func import functional_call, grad, vmap

from torch_geometric_stream.graph import DynamicKNNGraph, structure_loss, topk_neighbors
from torch_geometric_stream.nn import GCNBackbone
from torch_geometric_stream.ops import CSRGraph, csr_aggregate, l2_normalize


def assert_func_grad_equals_backward(loss, inputs):
    """``torch.func.grad`` of ``loss(inputs)`` (a dict of tensors) equals backward's."""
    func_grads = grad(loss)(inputs)
    leaves = {name: value.detach().requires_grad_() for name, value in inputs.items()}
    loss(leaves).backward()
    assert func_grads.keys() == leaves.keys()
    for name, leaf in leaves.items():
        torch.testing.assert_close(func_grads[name], leaf.grad, rtol=1e-12, atol=1e-12)


def test_l2_normalize_and_structure_loss_under_func_grad():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(6, 4, generator=gen, dtype=torch.float64)
    x[2] = 0  # a clamped norm
    weight = torch.randn(6, 4, generator=gen, dtype=torch.float64)
    rows = l2_normalize(torch.randn(6, 3, generator=gen, dtype=torch.float64))
    assert_func_grad_equals_backward(lambda p: (l2_normalize(p["x"]) * weight).sum(), {"x": x})
    # (the x-independent Gram product of the embeddings goes through its own kernel)
    assert_func_grad_equals_backward(
        lambda p: structure_loss(rows, l2_normalize(p["x"])), {"x": x + 1})


def test_structure_loss_query_block_under_func_grad():
    # a few query rows of many: the q x N block, SLeDGe-L's, with its own backward
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(50, 8, generator=gen, dtype=torch.float64)
    emb = torch.randn(50, 4, generator=gen, dtype=torch.float64)
    query_index = torch.tensor([3, 7])
    assert_func_grad_equals_backward(
        lambda p: structure_loss(x, p["emb"], query_index=query_index), {"emb": emb})


@pytest.mark.parametrize("query_index", [None, torch.tensor([4, 1])])
def test_learned_graph_and_gcn_parameters_under_func_grad(query_index):
    torch.manual_seed(0)
    x = torch.randn(12, 5, dtype=torch.float64)
    graph = DynamicKNNGraph(5, 3, hidden_channels=6).double()
    backbone = GCNBackbone(5, 8, 2, 2).double()  # aggregation="csr"

    def loss(params):
        graph_params = {k[6:]: v for k, v in params.items() if k.startswith("graph.")}
        edge_index, edge_weight = functional_call(graph, graph_params, (x,),
                                                  {"query_index": query_index})
        backbone_params = {k[9:]: v for k, v in params.items() if k.startswith("backbone.")}
        return functional_call(backbone, backbone_params, (x, edge_index, edge_weight)).square().sum()

    params = {**{f"graph.{k}": v.detach() for k, v in graph.named_parameters()},
              **{f"backbone.{k}": v.detach() for k, v in backbone.named_parameters()}}
    assert_func_grad_equals_backward(loss, params)


def test_csr_kernels_refuse_a_func_transform_by_name():
    graph = CSRGraph(torch.tensor([[0, 1], [1, 0]]), 2)
    weight = torch.ones(2)
    with pytest.raises(TypeError, match=r"^csr_aggregate cannot run inside a torch.func "
                                        r"transform \(grad, vmap, \.\.\.\), which has no sparse "
                                        r"tensors: gather and scatter instead$"):
        grad(lambda x: csr_aggregate(x, weight, graph).sum())(torch.ones(2, 3))


def assert_vmap_equals_loop(func, *batches, in_dims=0):
    """``vmap(func)`` over the leading dimension of ``batches`` equals a loop of ``func``."""
    batched = vmap(func, in_dims=in_dims)(*batches)
    dims = in_dims if isinstance(in_dims, tuple) else (in_dims,) * len(batches)
    size = next(b.size(0) for b, dim in zip(batches, dims) if dim is not None)
    looped = [func(*(b if dim is None else b[i] for b, dim in zip(batches, dims)))
              for i in range(size)]
    torch.testing.assert_close(batched, torch.utils._pytree.tree_map(
        lambda *leaves: torch.stack(leaves), *looped), rtol=1e-12, atol=1e-12)


def _graph_and_backbone(aggregation="csr", normalization="symmetric"):
    torch.manual_seed(0)
    return (DynamicKNNGraph(5, 3, hidden_channels=6).double(),
            GCNBackbone(5, 8, 2, 2, normalization=normalization,
                        aggregation=aggregation).double())


def test_l2_normalize_and_structure_loss_per_sample_grads_under_vmap():
    gen = torch.Generator().manual_seed(2)
    xs = torch.randn(4, 6, 4, generator=gen, dtype=torch.float64)
    xs[1, 2] = 0  # a clamped norm
    rows = l2_normalize(torch.randn(6, 3, generator=gen, dtype=torch.float64))
    weight = torch.randn(6, 4, generator=gen, dtype=torch.float64)
    assert_vmap_equals_loop(grad(lambda x: (l2_normalize(x) * weight).sum()), xs)
    assert_vmap_equals_loop(grad(lambda x: structure_loss(rows, l2_normalize(x))), xs)
    query_index = torch.tensor([3, 1])
    assert_vmap_equals_loop(grad(lambda x: structure_loss(
        rows, l2_normalize(x), query_index=query_index, form="frobenius")), xs)


@pytest.mark.parametrize("search_dtype", [None, torch.float32])
@pytest.mark.parametrize("masked", [False, True])
def test_topk_neighbors_under_vmap(search_dtype, masked):
    # blocks of 2 query rows (the last one short); the masks the same for every sample
    gen = torch.Generator().manual_seed(3)
    queries = torch.randn(3, 5, 4, generator=gen, dtype=torch.float64)
    keys = torch.randn(3, 7, 4, generator=gen, dtype=torch.float64)
    key_mask = torch.tensor([True, False, True, True, True, False, True]) if masked else None
    graph_ids = (dict(query_batch=torch.tensor([0, 1, 0, 1, 1]), key_batch=torch.arange(7) % 2)
                 if masked else {})
    assert_vmap_equals_loop(lambda q, k: tuple(topk_neighbors(
        q, k, 3, key_mask=key_mask, block_size=2, search_dtype=search_dtype, **graph_ids)),
        queries, keys)


@pytest.mark.parametrize("aggregation", ["csr", "message_passing"])
@pytest.mark.parametrize("normalization", ["symmetric", "mean"])
def test_learned_graph_and_gcn_batch_of_graphs_under_vmap(aggregation, normalization):
    graph, backbone = _graph_and_backbone(aggregation, normalization)
    xs = torch.randn(3, 12, 5, dtype=torch.float64)
    node_mask = torch.arange(12) < 9  # one for all samples

    def logits(x, query_index=None):
        edge_index, edge_weight = graph(x, query_index=query_index, node_mask=node_mask)
        return backbone(x, edge_index, edge_weight)

    assert_vmap_equals_loop(logits, xs)
    assert_vmap_equals_loop(logits, xs, torch.tensor([[4, 1], [0, 11], [7, 7]]))
    assert_vmap_equals_loop(lambda x: graph(x), xs)  # the graphs themselves


def test_learned_graph_and_gcn_per_sample_grads_under_vmap():
    graph, backbone = _graph_and_backbone()
    xs = torch.randn(3, 12, 5, dtype=torch.float64)

    def loss(params, x):
        graph_params = {k[6:]: v for k, v in params.items() if k.startswith("graph.")}
        edge_index, edge_weight = functional_call(graph, graph_params, (x,))
        backbone_params = {k[9:]: v for k, v in params.items() if k.startswith("backbone.")}
        logits = functional_call(backbone, backbone_params, (x, edge_index, edge_weight))
        return logits.square().sum() + graph.structure_loss(x)

    params = {**{f"graph.{k}": v.detach() for k, v in graph.named_parameters()},
              **{f"backbone.{k}": v.detach() for k, v in backbone.named_parameters()}}
    assert_vmap_equals_loop(grad(loss), params, xs, in_dims=(None, 0))


def test_vmap_refuses_what_varies_the_graph_size_by_name():
    graph, _ = _graph_and_backbone()
    xs = torch.randn(2, 6, 5, dtype=torch.float64)
    masks = torch.tensor([[True] * 6, [True, False] * 3])
    mask_error = (r"cannot vary over a torch.func.vmap batch: the number of rows it allows, "
                  r"which bounds the neighbours per query, would differ between samples; pass "
                  r"one {0} for all samples$")
    with pytest.raises(ValueError, match="^node_mask " + mask_error.format("node_mask")):
        vmap(lambda x, m: graph(x, node_mask=m))(xs, masks)
    with pytest.raises(ValueError, match="^key_mask " + mask_error.format("key_mask")):
        vmap(lambda m: topk_neighbors(xs[0], xs[0], 2, key_mask=m))(masks)
    with pytest.raises(ValueError, match=r"^batch cannot be used under torch.func.vmap: a graph "
                                         r"with fewer than k rows drops edges, so samples would "
                                         r"get graphs of different sizes; vmap over a leading "
                                         r"dimension of graphs instead$"):
        vmap(lambda x: graph(x, batch=torch.arange(6) % 2))(xs)
    with pytest.raises(ValueError, match=r"^batch cannot vary over a torch.func.vmap batch: its "
                                         r"graph ids are read on the host; pass one batch for "
                                         r"all samples$"):
        vmap(lambda b: graph.structure_loss(xs[0], batch=b))(torch.tensor([[0] * 6, [1] * 6]))
    # the rows of every sample are checked (a wrapped tensor has no values to read)
    with pytest.raises(ValueError, match=r"^query_index must hold row indices in \[0, 6\), "
                                         r"got values in \[0, 6\]$"):
        vmap(lambda x, q: graph(x, query_index=q))(xs, torch.tensor([[0, 1], [5, 6]]))


def test_structure_loss_with_one_batch_under_vmap():
    graph, _ = _graph_and_backbone()
    xs = torch.randn(3, 9, 5, dtype=torch.float64)
    batch = torch.arange(9) % 3
    assert_vmap_equals_loop(lambda x: graph.structure_loss(x, batch=batch), xs)


def test_l2_normalize_under_func_grad_clamps_at_the_given_eps():
    # ||x|| = 0.5 under eps = 1: y = x / 1, so the gradient of sum(y) is (1, 1)
    x = torch.tensor([[0.5, 0.0]], dtype=torch.float64)
    assert grad(lambda t: l2_normalize(t, eps=1.0).sum())(x).tolist() == [[1.0, 1.0]]
