"""torch.compile of the learned graph and the GCN backbone: the eager outputs and
gradients (the CSR kernels and the host reads of the input checks break the graph,
each piece compiled), and a CSR kernel run eagerly behind one graph break."""
import pytest
import torch
from torch import Tensor, nn

from torch_geometric_stream.graph import DynamicKNNGraph
from torch_geometric_stream.nn import GCNBackbone
from torch_geometric_stream.ops import CSRGraph


class _GraphClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.graph = DynamicKNNGraph(5, 3, hidden_channels=6)
        self.backbone = GCNBackbone(5, 8, 2, 2)  # aggregation="csr"

    def forward(self, x: Tensor) -> Tensor:
        edge_index, edge_weight = self.graph(x)
        return self.backbone(x, edge_index, edge_weight) + self.graph.structure_loss(x)


def test_aot_eager_compile_gives_eager_outputs_and_gradients():
    torch.manual_seed(0)
    model = _GraphClassifier().double()
    x = torch.randn(12, 5, dtype=torch.float64)
    expected = model(x)
    expected.square().sum().backward()
    expected_grads = {name: param.grad for name, param in model.named_parameters()}
    model.zero_grad(set_to_none=True)
    try:
        out = torch.compile(model, backend="aot_eager")(x)
        out.square().sum().backward()
    finally:
        torch._dynamo.reset()  # no compiled code left for the tests that follow
    torch.testing.assert_close(out, expected, rtol=1e-12, atol=1e-12)
    grads = {name: param.grad for name, param in model.named_parameters()}
    torch.testing.assert_close(grads, expected_grads, rtol=1e-12, atol=1e-12)


#: Each public CSRGraph kernel, called from compiled code: (name, its call on the
#: graph, features h (4, 3) and weights w (5,)), the frame that calls the eager kernel.
KERNEL_CALLS = {
    "aggregate": (lambda graph, h, w: graph.aggregate(h, w), "csr_aggregate"),
    "edge_dot": (lambda graph, h, w: graph.edge_dot(h, h), "csr_edge_dot"),
    "sampled_dot": (lambda graph, h, w: graph.sampled_dot(h, h), "sampled_dot"),
    "symmetric_matrix": (lambda graph, h, w: graph.symmetric_matrix(w).to_dense(),
                         "symmetric_matrix"),
}


@pytest.mark.parametrize("kernel", sorted(KERNEL_CALLS))
def test_a_csr_kernel_breaks_the_compiled_graph_at_its_call_and_runs_eagerly(kernel):
    # (dynamo traced into the kernels and broke in each of their frames: on the
    # lock of functools.cached_property, bincount, is_inference, sparse_csr_tensor;
    # the methods sampled_dot and symmetric_matrix did so until they too ran
    # their kernels behind the one break)
    torch.manual_seed(0)
    edge_index = torch.tensor([[0, 1, 2, 2, 3], [1, 2, 0, 3, 3]])
    graph = CSRGraph(edge_index, 4)
    x, w = torch.randn(4, 3), torch.randn(5)
    call, frame = KERNEL_CALLS[kernel]

    def step(x: Tensor, w: Tensor) -> Tensor:
        return call(graph, x * 2.0, w * 2.0) + 1.0

    try:
        explanation = torch._dynamo.explain(step)(x, w)
        compiled = torch.compile(step, backend="aot_eager")(x, w)
    finally:
        torch._dynamo.reset()
    # every break is the call of the kernel run eagerly (dynamo breaks at it in each
    # frame on the way: step's, then the kernel function's own, down to _call_kernel)
    assert explanation.break_reasons
    for entry in explanation.break_reasons:
        assert "_run_kernel" in entry.reason  # the function run eagerly
        assert [f.name for f in entry.user_stack][-2:] == [frame, "_call_kernel"]
    assert torch.equal(compiled, step(x, w))
