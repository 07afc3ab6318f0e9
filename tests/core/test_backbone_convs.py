"""GraphBackbone's convs whose third argument is ``edge_attr``: accepted only when
built for one feature per edge, which they get as the weights :math:`(E, 1)`."""
import pytest
import torch
from torch.nn import Linear
from torch_geometric.nn import (CGConv, FAConv, GATConv, GATv2Conv, GCN2Conv, GENConv, GeneralConv,
                                GINEConv, GMMConv, NNConv, PDNConv, PNAConv, ResGatedGraphConv,
                                TransformerConv)

from torch_geometric_stream.graph import DynamicKNNGraph
from torch_geometric_stream.nn import GraphBackbone

DEGREES = torch.tensor([0, 3, 3])  # PNAConv's in-degree histogram

# built for 1-dim edge features
TAKING_ONE_FEATURE = {
    "GATConv": lambda i, o: GATConv(i, o, edge_dim=1),
    "GATv2Conv": lambda i, o: GATv2Conv(i, o, edge_dim=1),
    "TransformerConv": lambda i, o: TransformerConv(i, o, edge_dim=1),
    "GINEConv": lambda i, o: GINEConv(Linear(i, o), edge_dim=1),
    "GENConv": lambda i, o: GENConv(i, o, edge_dim=1),
    "PNAConv": lambda i, o: PNAConv(i, o, ["mean"], ["identity"], DEGREES, edge_dim=1),
    "PDNConv": lambda i, o: PDNConv(i, o, edge_dim=1, hidden_channels=4),
    "ResGatedGraphConv": lambda i, o: ResGatedGraphConv(i, o, edge_dim=1),
    "GeneralConv": lambda i, o: GeneralConv(i, o, in_edge_channels=1),
    "CGConv": lambda i, o: CGConv(i, dim=1),  # keeps the width: i == o below
    "GMMConv": lambda i, o: GMMConv(i, o, dim=1, kernel_size=2),
    "NNConv": lambda i, o: NNConv(i, o, Linear(1, i * o)),  # its nn takes them
}


@pytest.mark.parametrize("name", TAKING_ONE_FEATURE)
def test_a_conv_built_for_one_edge_feature_gets_the_weights_as_one(name):
    # before: GraphBackbone passed (E,) edge_attr; all but GATConv / GATv2Conv
    # (which reshape it) failed inside PyG ("mat1 and mat2 shapes cannot be multiplied")
    torch.manual_seed(0)
    backbone = GraphBackbone(4, 4, 4, num_layers=1, conv=TAKING_ONE_FEATURE[name],
                             normalization="none")
    x = torch.randn(5, 4)
    edge_index = torch.tensor([[0, 1, 2, 3, 4, 0], [1, 2, 3, 4, 0, 2]])
    weight = torch.rand(6, requires_grad=True)
    out = backbone(x, edge_index, weight)
    # exactly the conv with the weights as (E, 1) edge features
    assert torch.equal(out, backbone.convs[0](x, edge_index, weight.detach().view(-1, 1)))
    # ... which it uses: another weight changes the output and the gradient reaches them
    assert not torch.allclose(out, backbone(x, edge_index, weight.detach() * torch.arange(1., 7.)))
    (grad,) = torch.autograd.grad(out.square().sum(), weight)
    assert grad.abs().sum() > 0


def test_the_graph_learner_gets_the_gradient_through_gatconv_with_edge_dim_1():
    # the review's case: GATConv(i, o) ignored the weights and the learner got no gradient
    graph = DynamicKNNGraph(8, 3, 16)
    backbone = GraphBackbone(8, 16, 3, 2, conv=lambda i, o: GATConv(i, o, edge_dim=1))
    x = torch.randn(10, 8)
    backbone(x, *graph(x)).sum().backward()
    assert graph.embedding.lins[0].weight.grad.abs().sum() > 0


@pytest.mark.parametrize("conv, name, argument", [
    (lambda i, o: GATConv(i, o), "GATConv", "edge_dim"),  # ignored the weights
    (lambda i, o: GATv2Conv(i, o), "GATv2Conv", "edge_dim"),
    (lambda i, o: TransformerConv(i, o), "TransformerConv", "edge_dim"),  # size mismatch
    (lambda i, o: GATConv(i, o, edge_dim=2), "GATConv", "edge_dim"),
    (lambda i, o: GINEConv(Linear(i, o)), "GINEConv", "edge_dim"),
    (lambda i, o: GENConv(i, o), "GENConv", "edge_dim"),
    (lambda i, o: PNAConv(i, o, ["mean"], ["identity"], DEGREES), "PNAConv", "edge_dim"),
    (lambda i, o: PDNConv(i, o, edge_dim=2, hidden_channels=4), "PDNConv", "edge_dim"),
    (lambda i, o: ResGatedGraphConv(i, o), "ResGatedGraphConv", "edge_dim"),
    (lambda i, o: GeneralConv(i, o), "GeneralConv", "in_edge_channels"),
    (lambda i, o: CGConv(i), "CGConv", "dim"),
    (lambda i, o: GMMConv(i, o, dim=2, kernel_size=2), "GMMConv", "dim"),
])
def test_a_conv_taking_edge_attr_not_built_for_one_feature_is_refused(conv, name, argument):
    # before: GATConv(i, o) was accepted and ignored the weights (the graph learner
    # got no gradient); the others failed at the first forward, inside PyG
    with pytest.raises(TypeError, match=f"conv\\(4, 8\\) builds {name}, whose forward takes "
                                        f"'edge_attr' .* not built for 1-dim edge features: "
                                        f"build it with {argument}=1, or use a conv that "
                                        f"takes edge_weight"):
        GraphBackbone(4, 8, 4, num_layers=2, conv=conv)


@pytest.mark.parametrize("conv, name", [
    (lambda i, o: GCN2Conv(i, alpha=0.1), "GCN2Conv"),
    (lambda i, o: FAConv(i), "FAConv"),
])
def test_a_conv_whose_third_argument_is_edge_index_is_refused(conv, name):
    # forward(x, x_0, edge_index, ...): before, accepted, then edge_index took x_0's place
    with pytest.raises(TypeError, match=f"builds {name}, whose forward takes 'edge_index' "
                                        f"where GraphBackbone passes edge weights"):
        GraphBackbone(4, 4, 4, num_layers=2, conv=conv)
