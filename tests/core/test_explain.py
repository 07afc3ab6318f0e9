"""The backbones under PyG's explainability: the edge masks that
``torch_geometric.explain`` (GNNExplainer, PGExplainer) and Captum's
``to_captum_model`` set on the convs multiply the messages of the E given edges,
in either aggregation; the self-loops a normalization appends stay unmasked."""
import pytest
import torch
from torch_geometric.explain import Explainer, GNNExplainer, PGExplainer
from torch_geometric.explain.algorithm.utils import clear_masks, set_masks
from torch_geometric.nn import GATConv, GCNConv, GraphConv, to_captum_model

from torch_geometric_stream.graph import DynamicKNNGraph
from torch_geometric_stream.nn import GCNBackbone, GraphBackbone

# 4 nodes, self-loops at 0 and 2 only (PyG's own explain_message is right only
# when some node lacks one), every weight 1
EDGE_INDEX = torch.tensor([[0, 1, 2, 3, 1, 2, 0],
                           [1, 2, 0, 2, 0, 2, 0]])
WEIGHT = torch.ones(7)

BACKBONES = {
    "csr": lambda norm, layers=1: GCNBackbone(3, 4, 2, layers, normalization=norm),
    "message_passing": lambda norm, layers=1: GCNBackbone(
        3, 4, 2, layers, normalization=norm, aggregation="message_passing"),
    "GraphBackbone": lambda norm, layers=1: GraphBackbone(
        3, 4, 2, layers, conv=lambda i, o: GCNConv(i, o, normalize=False), normalization=norm),
}

# each node's own normalized weight: the appended loops (weight 1, or the node's
# loop weight s_ii, plus 1 for "symmetric-add") over the degree of all its in-edges;
# "mean" and "none" append none, and the given loops are masked like any edge
SELF_WEIGHT = {"symmetric": [1 / 3, 1 / 2, 1 / 3, 1.0],
               "symmetric-add": [1 / 2, 1 / 2, 1 / 2, 1.0],
               "mean": [0.0] * 4, "none": [0.0] * 4}


@pytest.mark.parametrize("backbone", BACKBONES)
@pytest.mark.parametrize("normalization", SELF_WEIGHT)
def test_a_zero_edge_mask_leaves_only_the_appended_self_loops(backbone, normalization):
    # before: the CSR aggregation ignored the mask (the unmasked output), and the
    # symmetric ones raised PyG's bare AssertionError in message passing (a mask
    # sized for PyG's layout, which drops the given self-loops)
    torch.manual_seed(0)
    model = BACKBONES[backbone](normalization)
    x = torch.randn(4, 3)
    set_masks(model, torch.zeros(7), EDGE_INDEX, apply_sigmoid=False)
    out = model(x, EDGE_INDEX, WEIGHT)
    conv = model.convs[0]
    expected = torch.tensor(SELF_WEIGHT[normalization]).unsqueeze(1) * conv.lin(x) + conv.bias
    torch.testing.assert_close(out, expected)
    clear_masks(model)
    assert not torch.allclose(model(x, EDGE_INDEX, WEIGHT), out)


@pytest.mark.parametrize("backbone", BACKBONES)
def test_an_edge_mask_acts_as_on_pygs_own_normalizing_gcnconv(backbone):
    # the same values and mask gradients as GCNConv(normalize=True), whose loops
    # PyG leaves unmasked (its gcn_norm is "symmetric" for positive weights)
    torch.manual_seed(0)
    model = BACKBONES[backbone]("symmetric")
    reference = GCNConv(3, 2)
    reference.load_state_dict(model.convs[0].state_dict())
    x, weight = torch.randn(4, 3), torch.rand(7) + 0.5
    outs, grads = [], []
    for module, args in ((model, (weight,)), (reference, (weight,))):
        mask = torch.randn(7, requires_grad=True)
        with torch.no_grad():
            mask.copy_(torch.linspace(-2, 2, 7))
        set_masks(module, mask, EDGE_INDEX)
        out = module(x, EDGE_INDEX, *args)
        (grad,) = torch.autograd.grad(out.square().sum(), mask)
        outs.append(out)
        grads.append(grad)
        clear_masks(module)
    torch.testing.assert_close(outs[0], outs[1])
    torch.testing.assert_close(grads[0], grads[1])
    # the given self-loops (entries 5, 6) are not masked, as PyG's are not
    assert grads[0][5:].eq(0).all() and grads[0][:5].ne(0).all()


@pytest.mark.parametrize("normalization", SELF_WEIGHT)
def test_the_csr_aggregation_gives_message_passings_masked_output(normalization):
    torch.manual_seed(0)
    model = GCNBackbone(3, 4, 2, 2, normalization=normalization)
    x, mask = torch.randn(4, 3), torch.linspace(-2, 2, 7)
    unmasked = model(x, EDGE_INDEX, WEIGHT)
    set_masks(model, mask, EDGE_INDEX)
    out = model(x, EDGE_INDEX, WEIGHT)
    model.aggregation = "message_passing"
    assert torch.equal(out, model(x, EDGE_INDEX, WEIGHT))
    clear_masks(model)
    model.aggregation = "csr"
    assert torch.equal(model(x, EDGE_INDEX, WEIGHT), unmasked)  # CSR again, bit for bit


def _explain(model, x, edge_index, edge_weight, index):
    explainer = Explainer(model, algorithm=GNNExplainer(epochs=5), explanation_type="model",
                          node_mask_type="attributes", edge_mask_type="object",
                          model_config=dict(mode="multiclass_classification",
                                            task_level="node", return_type="raw"))
    return explainer(x, edge_index, edge_weight=edge_weight, index=index)


@pytest.mark.parametrize("backbone", BACKBONES)
@pytest.mark.parametrize("normalization", ["symmetric", "mean"])
def test_gnnexplainer_explains_a_learned_graph(backbone, normalization):
    # before: "Could not compute gradients for edges" (CSR) or an AssertionError
    torch.manual_seed(0)
    x = torch.randn(12, 3)
    with torch.no_grad():
        edge_index, edge_weight = DynamicKNNGraph(3, k=3, hidden_channels=8)(x)
    assert (edge_index[0] == edge_index[1]).sum() == 12  # a self-loop at every node
    index = 5
    explanation = _explain(BACKBONES[backbone](normalization, 2), x, edge_index, edge_weight,
                           index)
    # 2 layers: the edges into the node and into its in-neighbours, less the given
    # self-loops where the normalization moved their weight to an unmasked loop
    source, target = edge_index
    hop = source[target == index]
    reaches = torch.isin(target, hop) | (target == index)
    if normalization == "symmetric":
        reaches &= source != target
    assert torch.equal(explanation.edge_mask != 0, reaches)
    # the node mask: the rows those edges read
    read = torch.zeros(12, dtype=torch.bool)
    read[source[torch.isin(target, hop) | (target == index)]] = True
    assert torch.equal((explanation.node_mask != 0).all(dim=1), read)
    assert torch.equal((explanation.node_mask != 0).any(dim=1), read)


@pytest.mark.parametrize("aggregation", ["csr", "message_passing"])
def test_captums_edge_attribution_gets_a_gradient(aggregation):
    # what Captum's IntegratedGradients differentiates: the CSR aggregation gave
    # "differentiated Tensor ... not used in the graph"
    torch.manual_seed(0)
    x = torch.randn(12, 3)
    with torch.no_grad():
        edge_index, _ = DynamicKNNGraph(3, k=3, hidden_channels=8)(x)
    model = GCNBackbone(3, 4, 2, 2, aggregation=aggregation)
    captum_model = to_captum_model(model, mask_type="edge", output_idx=5)
    mask = torch.ones(1, edge_index.size(1), requires_grad=True)
    (grad,) = torch.autograd.grad(captum_model(mask, x, edge_index)[0, 0], mask)
    assert grad.ne(0).any()
    assert all(conv.explain is None for conv in model.convs)  # masks cleared


def test_a_conv_adding_its_own_self_loops_keeps_pygs_handling():
    # GATConv removes the given loops and appends its own, the layout PyG's
    # explain_message assumes: its loop mask stays PyG's
    torch.manual_seed(0)
    model = GraphBackbone(3, 4, 2, 1, conv=lambda i, o: GATConv(i, o, edge_dim=1))
    x = torch.randn(4, 3)
    unmasked = model(x, EDGE_INDEX, WEIGHT)
    set_masks(model, torch.zeros(7), EDGE_INDEX, apply_sigmoid=False)
    out = model(x, EDGE_INDEX, WEIGHT)
    assert torch.equal(model.convs[0]._loop_mask, EDGE_INDEX[0] != EDGE_INDEX[1])
    # node 3, no in-edge, keeps its own loop's message; the others lose the rest
    conv = model.convs[0]
    torch.testing.assert_close(out[3], conv.lin(x)[3] + conv.bias)
    assert torch.equal(out[3], unmasked[3]) and not torch.allclose(out[:3], unmasked[:3])


def test_graphconv_explained_on_a_learned_graph():
    torch.manual_seed(0)
    x = torch.randn(12, 3)
    with torch.no_grad():
        edge_index, edge_weight = DynamicKNNGraph(3, k=3, hidden_channels=8)(x)
    model = GraphBackbone(3, 4, 2, 2, conv=GraphConv)
    explanation = _explain(model, x, edge_index, edge_weight, 0)
    assert explanation.edge_mask.ne(0).any()


@pytest.mark.filterwarnings("ignore:Converting a tensor with requires_grad")
def test_pgexplainer_reads_graphbackbones_gcnconv_layers():
    # the README's way to PGExplainer (it reads the convs' outputs through forward
    # hooks, which GCNBackbone's convs do not fire): the same layers as GraphBackbone
    torch.manual_seed(0)
    x = torch.randn(12, 3)
    with torch.no_grad():
        edge_index, edge_weight = DynamicKNNGraph(3, k=3, hidden_channels=8)(x)
    gcn = GCNBackbone(3, 4, 2, 2)
    model = GraphBackbone(3, 4, 2, 2, conv=lambda i, o: GCNConv(i, o, normalize=False))
    model.load_state_dict(gcn.state_dict())
    torch.testing.assert_close(model(x, edge_index, edge_weight), gcn(x, edge_index, edge_weight))
    explainer = Explainer(model, algorithm=PGExplainer(epochs=1), explanation_type="phenomenon",
                          edge_mask_type="object",
                          model_config=dict(mode="multiclass_classification",
                                            task_level="node", return_type="raw"))
    target = torch.zeros(12, dtype=torch.long)
    explainer.algorithm.train(0, model, x, edge_index, target=target, index=5,
                              edge_weight=edge_weight)
    explanation = explainer(x, edge_index, target=target, index=5, edge_weight=edge_weight)
    assert explanation.edge_mask.shape == (edge_index.size(1),)
    assert explanation.edge_mask.ne(0).any()
