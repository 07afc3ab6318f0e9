"""torch.func transforms (grad) through the custom kernels and the public modules:
the same gradients as autograd's backward."""
import pytest
import torch
from torch.func import functional_call, grad

from torch_geometric_stream.graph import DynamicKNNGraph, structure_loss
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
        edge_index, edge_weight = functional_call(graph, graph_params, (x, query_index))
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


def test_l2_normalize_under_func_grad_clamps_at_the_given_eps():
    # ||x|| = 0.5 under eps = 1: y = x / 1, so the gradient of sum(y) is (1, 1)
    x = torch.tensor([[0.5, 0.0]], dtype=torch.float64)
    assert grad(lambda t: l2_normalize(t, eps=1.0).sum())(x).tolist() == [[1.0, 1.0]]
