"""The CSR layers under :class:`torch.autocast`: what message passing gives, gradients included."""
import pytest
import torch

from torch_geometric_stream.graph import DynamicKNNGraph
from torch_geometric_stream.nn import BIAS_POSITIONS, GCNBackbone
from torch_geometric_stream.ops import CSRGraph, csr_aggregate, csr_edge_dot
from torch_geometric_stream.ops.csr import _matmul

GEN = torch.Generator().manual_seed(0)
X = torch.randn(10, 8, generator=GEN)
EDGE_INDEX = torch.randint(0, 10, (2, 30), generator=GEN)  # duplicates and self-loops too
WEIGHT = torch.rand(30, generator=GEN)


def _forward_and_grads(backbone, dtype):
    weight = WEIGHT.clone().requires_grad_()
    with torch.autocast("cpu", dtype=dtype):
        out = backbone(X, EDGE_INDEX, weight)
    return out, torch.autograd.grad(out.square().sum(), [weight, *backbone.parameters()])


@pytest.mark.parametrize("bias_position", BIAS_POSITIONS)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_gcn_backbone_under_autocast_gives_what_message_passing_gives(dtype, bias_position):
    # before: the linear map's dtype features met the float32 weights in the CSR
    # product: "RuntimeError: mat1 and mat2 must have the same dtype"
    torch.manual_seed(0)
    csr = GCNBackbone(8, 16, 3, 2, bias_position=bias_position)
    passing = GCNBackbone(8, 16, 3, 2, aggregation="message_passing",
                          bias_position=bias_position)
    passing.load_state_dict(csr.state_dict())
    out, grads = _forward_and_grads(csr, dtype)
    ref, ref_grads = _forward_and_grads(passing, dtype)
    # float32, as PyG's GCNConv under autocast (float32 weights times the features)
    assert out.dtype == ref.dtype == torch.float32
    # the same lower-precision features summed in float32: equal up to the sum's order
    torch.testing.assert_close(out, ref)
    # message passing sums the features' gradients in the lower precision, the CSR
    # product in float32: equal to the lower precision's rounding
    for grad, ref_grad in zip(grads, ref_grads):
        assert grad.dtype == ref_grad.dtype
        assert (grad - ref_grad).abs().max() <= 2e-2 * ref_grad.abs().max()


def test_the_graph_learner_trains_through_the_csr_layers_under_autocast():
    torch.manual_seed(0)
    graph, backbone = DynamicKNNGraph(8, 3, 16), GCNBackbone(8, 16, 3, 2)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        edge_index, edge_weight = graph(X)
        out = backbone(X, edge_index, edge_weight)
    out.sum().backward()
    assert graph.embedding.lins[0].weight.grad.abs().sum() > 0


def test_csr_kernels_under_autocast_compute_in_their_operands_dtype():
    # autocast casts none of the CPU kernels' operands: the results, gradients
    # included, are those outside it, bit for bit
    graph = CSRGraph(EDGE_INDEX, 10)
    results = []
    for enabled in (False, True):
        x, weight = X.clone().requires_grad_(), WEIGHT.clone().requires_grad_()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=enabled):
            out = (csr_aggregate(x, weight, graph).square().sum()
                   + csr_edge_dot(x, x, graph).sum() + csr_edge_dot(x, 2 * x, graph).sum())
            results.append((out, *torch.autograd.grad(out, (x, weight))))
    for plain, autocast in zip(*results):
        assert autocast.dtype == torch.float32
        assert torch.equal(plain, autocast)


def test_the_product_of_other_devices_runs_outside_autocast():
    # the GPU's product (matrix @ dense, checked here on the CPU): autocast would
    # cast the CSR matrix to bfloat16, a product the CPU has no kernel for
    # ("addmm_out_sparse_csr_impl_mkl" not implemented for 'BFloat16'), float16
    # on a GPU, whose backward would then mix dtypes
    matrix = torch.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse_csr()
    dense = torch.tensor([[1.0, 1.0 / 3.0], [0.5, 1.0]])
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = _matmul(matrix, dense)
        assert torch.is_autocast_enabled("cpu")  # back on after the product
    assert out.dtype == torch.float32
    assert torch.equal(out, torch.tensor([[1.0, 2.0], [3.0, 1.0]]))
