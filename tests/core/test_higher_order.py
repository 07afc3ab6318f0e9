"""Second-order gradients (``create_graph=True``: gradient penalties, meta-learning,
Hessian-vector products) through every custom autograd Function of the package:
``gradgradcheck`` in float64, and the same numbers as autograd's plain forms.

Before: ``l2_normalize`` and the structure regularizer's products were
``once_differentiable``, so their second-order terms vanished without an error
wherever torch's error node was off the differentiated path (``None`` or a wrong
number); the CSR kernels' second order raised torch's shape error on graphs with
duplicate entries (a top-k graph's self-loops, in the symmetric product), and
``structure_loss`` with ``query_index`` had no gradient in ``x``."""
import copy

import pytest
import torch
import torch.nn.functional as F
from torch.autograd import gradcheck, gradgradcheck
from torch_geometric.nn import GCNConv

from torch_geometric_stream import DynamicKNNGraph, GCNBackbone
from torch_geometric_stream.graph import normalize_edge_weight, structure_loss
from torch_geometric_stream.graph.regularizer import _block_is_cheaper
from torch_geometric_stream.models.sledge import _RowReplacedInPlace
from torch_geometric_stream.ops import CSRGraph, csr_aggregate, csr_edge_dot, l2_normalize

# a self-loop, a duplicate edge (0 -> 1 twice) and a pair of opposite edges
# (1 -> 2, 2 -> 1): repeated entries in every CSR orientation
EDGES = torch.tensor([[0, 1, 2, 3, 4, 0, 2, 0], [1, 2, 3, 3, 0, 1, 1, 4]])


def _rand(*shape, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, dtype=torch.float64, generator=generator).requires_grad_()


def _unit(*shape, seed=0):
    return F.normalize(_rand(*shape, seed=seed).detach(), dim=-1).requires_grad_()


def _hessian_vector(function, x, vector):
    """:math:`H v` of the scalar ``function`` at ``x``, by double backward."""
    x = x.detach().requires_grad_()
    grad, = torch.autograd.grad(function(x), x, create_graph=True)
    hvp, = torch.autograd.grad((grad * vector).sum(), x)
    return hvp


def test_l2_normalize_second_order():
    assert gradgradcheck(l2_normalize, (_rand(4, 3),))
    weights, vector = _rand(4, 3, seed=1).detach(), _rand(4, 3, seed=2).detach()
    got = _hessian_vector(lambda x: ((l2_normalize(x) * weights).sum(-1) ** 2).sum(),
                          _rand(4, 3), vector)
    expected = _hessian_vector(lambda x: ((F.normalize(x, dim=-1) * weights).sum(-1) ** 2).sum(),
                               _rand(4, 3), vector)
    assert torch.allclose(got, expected, rtol=1e-10, atol=1e-12)


def _reference_structure_loss(x, emb, query_index, form):
    x_q, emb_q = (x, emb) if query_index is None else (x[query_index], emb[query_index])
    sim_e, sim_x = emb_q @ emb.t(), x_q @ x.t()
    if form == "frobenius":
        sim_e, sim_x = sim_e / sim_e.norm(), sim_x / sim_x.norm()
    return F.mse_loss(sim_e, sim_x)


# (rows, d, h, queries): every path of structure_loss; N = 2 < h the Gram
# products' (N, N) form, the rest the fused E^T E
_STRUCTURE_CASES = {"all pairs": (6, 3, 4, None),
                    "all pairs, (N, N) products": (2, 3, 4, None),
                    "q x N block": (6, 3, 4, [1, 4]),
                    "Gram products of queries": (6, 2, 2, [0, 1, 2, 3, 4, 5, 1, 3])}


@pytest.mark.parametrize("form", ["plain", "frobenius"])
@pytest.mark.parametrize("case", list(_STRUCTURE_CASES))
def test_structure_loss_second_order(case, form):
    rows, d, h, queries = _STRUCTURE_CASES[case]
    query_index = None if queries is None else torch.tensor(queries)
    if query_index is not None:  # the case takes the path it names
        assert _block_is_cheaper(len(queries), rows, d, h, True) == (case == "q x N block")
    x, emb = _unit(rows, d), _unit(rows, h, seed=1)
    loss = lambda x, emb: structure_loss(x, emb, query_index=query_index, form=form)
    assert gradgradcheck(loss, (x, emb))
    # Hessian-vector products in emb and in x (in both when emb is computed from x)
    vector = _rand(rows, h, seed=2).detach()

    def hessian_vectors(function):
        return (_hessian_vector(lambda e: function(x.detach(), e), emb, vector),
                _hessian_vector(lambda x: function(x, x @ torch.ones(d, h, dtype=x.dtype)),
                                x, vector[:, :d]))
    expected = hessian_vectors(lambda x, e: _reference_structure_loss(x, e, query_index, form))
    for got, want in zip(hessian_vectors(loss), expected):
        assert torch.allclose(got, want, rtol=1e-9, atol=1e-12)


def test_structure_loss_query_rows_have_a_gradient_in_x():
    """Before: None (the terms of x were computed without gradient)."""
    x, emb, query_index = _unit(6, 3), _unit(6, 4, seed=1), torch.tensor([1, 4])
    grad, = torch.autograd.grad(structure_loss(x, emb, query_index=query_index), x)
    expected, = torch.autograd.grad(_reference_structure_loss(x, emb, query_index, "plain"), x)
    assert torch.allclose(grad, expected, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("query_index", [None, torch.tensor([0, 3, 4])])
def test_batched_structure_loss_second_order(query_index):
    graph = DynamicKNNGraph(3, 2, hidden_channels=4).double()
    batch = torch.tensor([0, 0, 1, 1, 1, 0])
    assert gradgradcheck(lambda x: graph.structure_loss(x, query_index=query_index,
                                                        batch=batch), (_rand(6, 3),))


@pytest.mark.parametrize("query_index", [None, torch.tensor([0, 3, 3, 5])])
def test_dynamic_knn_edge_weights_second_order(query_index):
    graph = DynamicKNNGraph(3, 3, hidden_channels=4).double()
    x = _rand(6, 3)
    edge_index = graph(x, query_index=query_index)[0]  # fixed: the top-k choice has no gradient
    assert gradgradcheck(lambda x: graph(x, query_index=query_index)[1], (x,))
    lin = graph.embedding.lins[0]

    def reference(x):
        emb = F.normalize(lin(x), dim=-1)
        return (emb[edge_index[0]] * emb[edge_index[1]]).sum(-1)
    vector = _rand(6, 3, seed=1).detach()
    got = _hessian_vector(lambda x: (graph(x, query_index=query_index)[1] ** 2).sum(), x, vector)
    expected = _hessian_vector(lambda x: (reference(x) ** 2).sum(), x, vector)
    assert torch.allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_csr_kernels_second_order():
    graph = CSRGraph(EDGES, 5)
    x, a, weight = _rand(5, 3), _rand(5, 3, seed=1), _rand(EDGES.size(1), seed=2)
    assert gradgradcheck(lambda x, w: csr_aggregate(x, w, graph), (x, weight))
    assert gradgradcheck(lambda a, b: csr_edge_dot(a, b, graph), (a, x))
    assert gradgradcheck(lambda a: csr_edge_dot(a, a, graph), (a,))
    # b computed from a: each operand its own share of a's gradient (not counted twice)
    assert gradgradcheck(lambda a: csr_edge_dot(a, 2 * a, graph), (a,))
    assert gradgradcheck(lambda a: csr_edge_dot(a, x.detach(), graph), (a,))


@pytest.mark.parametrize("aggregation", ["csr", "message_passing"])
@pytest.mark.parametrize("normalization", ["symmetric", "none"])
def test_gcn_backbone_second_order(aggregation, normalization):
    torch.manual_seed(0)
    backbone = GCNBackbone(3, 4, 2, 2, normalization=normalization,
                           aggregation=aggregation).double()
    weight = _rand(EDGES.size(1), seed=2).detach().abs().requires_grad_()
    assert gradgradcheck(lambda x, w: backbone(x, EDGES, w), (_rand(5, 3), weight))


def test_gcn_backbone_penalty_gradient_same_on_both_aggregations():
    """A first backward without a graph before the one with it (the CSR
    matrices a forward keeps) changes nothing."""
    torch.manual_seed(0)
    backbone = GCNBackbone(3, 8, 2, 2, normalization="none").double()
    results = []
    for aggregation in ("csr", "message_passing"):
        model = copy.deepcopy(backbone)
        model.aggregation = aggregation
        x, weight = _rand(5, 3), _rand(EDGES.size(1), seed=2)
        out = model(x, EDGES, weight)
        torch.autograd.grad(out.sum(), x, retain_graph=True)
        grad, = torch.autograd.grad(out.sum(), x, create_graph=True)
        results.append(torch.autograd.grad(grad.square().sum(),
                                           [weight, *model.parameters()], allow_unused=True))
    for got, expected in zip(*results):
        assert (got is None) == (expected is None)
        assert got is None or torch.allclose(got, expected, rtol=1e-10, atol=1e-12)


def test_normalize_edge_weight_second_order():
    weight = _rand(EDGES.size(1), seed=2).detach().abs().add(0.1).requires_grad_()
    for normalization in ("symmetric", "symmetric-add", "mean"):
        assert gradgradcheck(lambda w: normalize_edge_weight(EDGES, w, 5, normalization)[1],
                             (weight,))


def test_row_replaced_in_place_second_order():
    """SLeDGe's own training step (internal; its backward is linear)."""
    row = torch.tensor([2])

    def replaced(emb, new):
        return _RowReplacedInPlace.apply(emb * 1.0, row, new)  # a fresh tensor to write into
    assert gradcheck(replaced, (_rand(4, 3), _rand(1, 3, seed=1)))
    assert gradgradcheck(replaced, (_rand(4, 3), _rand(1, 3, seed=1)))


def test_input_gradient_penalty_on_learned_graph_matches_plain_autograd():
    """The reviewer's case: an input-gradient penalty on DynamicKNNGraph -> GCNConv.
    Before: d(penalty)/dW_E [0.061, 0.172, -0.092, -0.195] against the
    reference's [-0.071, -0.251, 0.013, -0.005], without an error."""
    torch.manual_seed(0)
    graph = DynamicKNNGraph(4, 3, 5).double()
    conv = GCNConv(4, 2, normalize=False).double()
    x0 = torch.randn(8, 4, dtype=torch.float64)
    y = torch.randint(0, 2, (8,))
    edge_index = graph(x0)[0]
    weight = graph.embedding.lins[0].weight

    def reference(x):
        emb = F.normalize(graph.embedding.lins[0](x), dim=-1)
        return edge_index, (emb[edge_index[0]] * emb[edge_index[1]]).sum(-1)
    results = []
    for build in (graph, reference):
        x = x0.clone().requires_grad_()
        loss = F.cross_entropy(conv(x, *build(x)), y)
        grad, = torch.autograd.grad(loss, x, create_graph=True)
        penalty = grad.square().sum()
        results.append((penalty, *torch.autograd.grad(penalty, [weight, *conv.parameters()])))
    for got, expected in zip(*results):
        assert torch.allclose(got, expected, rtol=1e-10, atol=1e-14)
    assert results[0][1].abs().max() > 1e-3  # a gradient there to compare
