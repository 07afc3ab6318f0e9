"""torch.compile of the learned graph and the GCN backbone: the eager outputs and
gradients (the CSR kernels and the top-k search break the graph, each piece compiled)."""
import torch
from torch import Tensor, nn

from torch_geometric_stream.graph import DynamicKNNGraph
from torch_geometric_stream.nn import GCNBackbone


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
