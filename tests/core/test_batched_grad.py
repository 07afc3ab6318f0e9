"""Batched gradients through every custom autograd Function of the package: a
``vmap`` over the backward alone (``torch.autograd.grad(..., is_grads_batched=True)``,
``jacobian(..., vectorize=True)``, ``hessian(..., vectorize=True)``,
``gradcheck(check_batched_grad=True)``, ``torch.func.vmap`` of ``autograd.grad``)
gives the numbers of the loop over the rows of the batch.

Before: the fused backwards met the batched gradient (the forward, outside any
transform, had taken them): the CSR kernels raised "Sparse CSR tensors do not have
is_contiguous", ``l2_normalize`` (and with it the learned graph and its structure
loss) "Batching rule not implemented for aten::addcmul.out"."""
import pytest
import torch
from torch.autograd import gradcheck
from torch.autograd.functional import hessian, jacobian

from torch_geometric_stream import DynamicKNNGraph, GCNBackbone
from torch_geometric_stream.graph import structure_loss
from torch_geometric_stream.ops import CSRGraph, csr_aggregate, csr_edge_dot, l2_normalize

# a self-loop, a duplicate edge (0 -> 1 twice) and a pair of opposite edges
EDGES = torch.tensor([[0, 1, 2, 3, 4, 0, 2, 0], [1, 2, 3, 3, 0, 1, 1, 4]])


def _rand(*shape, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, dtype=torch.float64, generator=generator).requires_grad_()


def _models():
    torch.manual_seed(0)
    return (DynamicKNNGraph(3, 3, hidden_channels=4).double(),
            GCNBackbone(3, 4, 2, 2, aggregation="csr").double())


def _functions():
    """Functions of (x (5, 3), w (8,)) through each custom Function."""
    graph = CSRGraph(EDGES, 5)
    knn, gcn = _models()
    lin = torch.ones(3, 3, dtype=torch.float64)
    return {"l2_normalize": lambda x, w: l2_normalize(x),
            "csr_aggregate": lambda x, w: csr_aggregate(x, w, graph),
            "csr_edge_dot": lambda x, w: csr_edge_dot(x, x @ lin, graph),
            "csr_edge_dot, a is b": lambda x, w: csr_edge_dot(x, x, graph),
            "DynamicKNNGraph weights": lambda x, w: knn(x)[1],
            "DynamicKNNGraph weights, query rows": lambda x, w: knn(
                x, query_index=torch.tensor([0, 3]))[1],
            "GCNBackbone (csr)": lambda x, w: gcn(x, EDGES, w.abs())}


@pytest.mark.parametrize("name", list(_functions()))
def test_vectorized_jacobian_equals_loop(name):
    function = _functions()[name]
    inputs = (_rand(5, 3), _rand(EDGES.size(1), seed=1))
    expected = jacobian(function, inputs)
    got = jacobian(function, inputs, vectorize=True)
    for g, e in zip(got, expected):
        assert torch.allclose(g, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", list(_functions()))
def test_is_grads_batched_and_func_vmap_equal_loop(name):
    x, w = _rand(5, 3), _rand(EDGES.size(1), seed=1)
    out = _functions()[name](x, w)
    vectors = _rand(4, *out.shape, seed=2).detach()
    inputs = (x, w) if name == "csr_aggregate" or name.startswith("GCN") else (x,)

    def vjp(vector):
        return torch.autograd.grad(out, inputs, vector, retain_graph=True)
    expected = [torch.stack(grads) for grads in zip(*map(vjp, vectors))]
    batched = torch.autograd.grad(out, inputs, vectors, retain_graph=True,
                                  is_grads_batched=True)
    for got in (batched, torch.func.vmap(vjp)(vectors)):
        for g, e in zip(got, expected):
            assert torch.allclose(g, e, rtol=1e-10, atol=1e-12)


def test_csr_kernels_check_batched_grad():
    graph = CSRGraph(EDGES, 5)
    x, a, weight = _rand(5, 3), _rand(5, 3, seed=1), _rand(EDGES.size(1), seed=2)
    assert gradcheck(lambda x, w: csr_aggregate(x, w, graph), (x, weight),
                     check_batched_grad=True)
    assert gradcheck(lambda a, b: csr_edge_dot(a, b, graph), (a, x), check_batched_grad=True)
    assert gradcheck(lambda a: csr_edge_dot(a, a, graph), (a,), check_batched_grad=True)
    assert gradcheck(l2_normalize, (x,), check_batched_grad=True)


# (rows, d, h, queries): all pairs (the fused E^T E), the q x N block (the fused
# query similarities), the Gram products of queries
@pytest.mark.parametrize("rows, d, h, queries", [(6, 3, 4, None), (6, 3, 4, [1, 4]),
                                                 (6, 2, 2, [0, 1, 2, 3, 4, 5, 1, 3])])
def test_structure_loss_vectorized_hessian_equals_loop(rows, d, h, queries):
    query_index = None if queries is None else torch.tensor(queries)
    x = torch.nn.functional.normalize(_rand(rows, d).detach(), dim=-1)

    def loss(emb):
        return structure_loss(x, l2_normalize(emb), query_index=query_index)
    emb = _rand(rows, h, seed=1)
    expected = hessian(loss, emb)
    assert torch.allclose(hessian(loss, emb, vectorize=True), expected, rtol=1e-10, atol=1e-12)


def test_learned_graph_structure_loss_vectorized_hessian_equals_loop():
    knn, _ = _models()
    x = _rand(6, 3)
    expected = hessian(knn.structure_loss, x)
    assert torch.allclose(hessian(knn.structure_loss, x, vectorize=True), expected,
                          rtol=1e-10, atol=1e-12)


def test_the_batched_gradient_check_adds_no_graph_break_under_torch_compile():
    """dynamo traces the backward with the forward: the check must be traceable
    (is_legacy_batchedtensor is not; with it, 2 breaks at l2_normalize)."""
    x = _rand(6, 3)
    try:
        explanation = torch._dynamo.explain(lambda x: l2_normalize(x).sum())(x)
    finally:
        torch._dynamo.reset()
    assert explanation.graph_break_count == 0
