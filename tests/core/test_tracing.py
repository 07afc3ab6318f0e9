"""TorchScript and torch.fx symbolic tracing are refused with a TypeError that
says so and names torch.compile (and, for to_hetero, per-type modules).

Before: ``torch.jit.trace`` raised "num_nodes must be an integer, got Tensor"
(an argument the user never passed: the traced ``x.size(0)``), torch.fx and
PyG's ``to_hetero`` "x must be a tensor, got Proxy", and ``torch.jit.script``
of ``DynamicKNNGraph`` torch's NotSupportedError on its keyword-only arguments."""
import pytest
import torch
from torch_geometric.nn import GraphConv, to_hetero

from torch_geometric_stream import (DynamicKNNGraph, GCNBackbone, GraphBackbone, MLPBackbone,
                                    StaticKNNGraph)
from torch_geometric_stream.ops import CSRGraph

X = torch.randn(12, 5, generator=torch.Generator().manual_seed(0))
EDGE_INDEX, EDGE_WEIGHT = StaticKNNGraph(5, 3)(X)

_TORCHSCRIPT = (r"TorchScript \(torch.jit.script, torch.jit.trace, torch.onnx.export's "
                r"TorchScript exporter\) is not supported by {}: .* use torch.compile")
_FX = (r"x is a torch.fx Proxy: torch.fx symbolic tracing \(torch.fx.symbolic_trace, "
       r"torch_geometric.nn.to_hetero\) is not supported, .* use torch.compile to compile, "
       r"and for heterogeneous graphs one module per node or edge type")


def _modules():
    torch.manual_seed(0)
    return {"GCNBackbone": (GCNBackbone(5, 8, 3, 2), (X, EDGE_INDEX, EDGE_WEIGHT)),
            "GCNBackbone message_passing": (
                GCNBackbone(5, 8, 3, 2, aggregation="message_passing"),
                (X, EDGE_INDEX, EDGE_WEIGHT)),
            "GraphBackbone": (GraphBackbone(5, 8, 3, 2, conv=GraphConv),
                              (X, EDGE_INDEX, EDGE_WEIGHT)),
            "DynamicKNNGraph": (DynamicKNNGraph(5, 3, 8), (X,)),
            "StaticKNNGraph": (StaticKNNGraph(5, 3), (X,))}


@pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning")  # the trace up to the refusal
# (a DeprecationWarning up to torch 2.14, a FutureWarning from 2.15)
@pytest.mark.filterwarnings("ignore:`torch.jit.trace` is deprecated")
@pytest.mark.filterwarnings("ignore:`torch.jit.trace_method` is deprecated")
@pytest.mark.parametrize("name", list(_modules()))
def test_jit_trace_is_refused(name):
    module, inputs = _modules()[name]
    with pytest.raises(TypeError, match=_TORCHSCRIPT.format("torch_geometric_stream's graph "
                                                            "modules")):
        torch.jit.trace(module, inputs)


@pytest.mark.parametrize("module", [DynamicKNNGraph(5, 3, 8), StaticKNNGraph(5, 3),
                                    GCNBackbone(5, 8, 3, 2), MLPBackbone(5, 8, 3, 2),
                                    GraphBackbone(5, 8, 3, 2, conv=GraphConv)],
                         ids=lambda module: type(module).__name__)
def test_jit_script_of_the_modules_is_refused(module):
    # the backbones: torch's NotSupportedError, or "Python type cannot be used as a value"
    with pytest.raises(TypeError, match=_TORCHSCRIPT.format(type(module).__name__)):
        torch.jit.script(module)
    with pytest.raises(TypeError, match=_TORCHSCRIPT.format(type(module).__name__)):
        torch.jit.script(torch.nn.Sequential(module))  # a submodule too


@pytest.mark.parametrize("name", list(_modules()))
def test_fx_symbolic_trace_is_refused(name):
    with pytest.raises(TypeError, match=_FX):
        torch.fx.symbolic_trace(_modules()[name][0])


def test_to_hetero_is_refused():
    metadata = (["a", "b"], [("a", "to", "b"), ("b", "to", "a")])
    with pytest.raises(TypeError, match=_FX):
        to_hetero(_modules()["GCNBackbone"][0], metadata)


def test_a_tensor_for_an_int_outside_tracing_keeps_its_message():
    with pytest.raises(TypeError, match="^num_nodes must be an integer, got Tensor$"):
        CSRGraph(EDGE_INDEX, torch.tensor(12))
    with pytest.raises(TypeError, match="^x must be a tensor, got list$"):
        GCNBackbone(5, 8, 3, 2)([[1.0] * 5], EDGE_INDEX)


def _exported_cases():
    torch.manual_seed(0)
    return {"GCNBackbone": GCNBackbone(5, 8, 3, 2),
            "GCNBackbone message_passing": GCNBackbone(5, 8, 3, 2,
                                                       aggregation="message_passing"),
            "GraphBackbone": GraphBackbone(5, 8, 3, 2, conv=GraphConv),
            "DynamicKNNGraph": DynamicKNNGraph(5, 3, 8),
            "DynamicKNNGraph query rows": DynamicKNNGraph(5, 3, 8)}


@pytest.mark.parametrize("strict", [False, True], ids=["non-strict", "strict"])
@pytest.mark.parametrize("name", list(_exported_cases()))
def test_exported_program_matches_eager(name, strict):
    """torch.export traces the gather/scatter forms (no CSR kernel) and reads no
    index range. Before: GuardOnDataDependentSymNode (the range check) and, for
    the learned graph, the CSR kernel run on fake tensors ("Values and
    compressed tensor instance need to be on the same device")."""
    module = _exported_cases()[name].eval()
    if "Backbone" in name:
        inputs = (X, EDGE_INDEX, EDGE_WEIGHT)
        other = torch.randn(12, 5, generator=torch.Generator().manual_seed(1))
        other_inputs = (other, *StaticKNNGraph(5, 3)(other))
    elif "query" in name:
        query_index = torch.tensor([0, 4, 7])
        inputs, other_inputs = (X, query_index), (X.flip(0), query_index)
        module = _QueryRows(module)
    else:
        inputs, other_inputs = (X,), (X.flip(0),)
    program = torch.export.export(module, inputs, strict=strict).module()
    for args in (inputs, other_inputs):  # the same shapes, other values and graph
        expected, got = module(*args), program(*args)
        for e, g in zip(*((expected, got) if isinstance(got, tuple) else ((expected,), (got,)))):
            assert torch.allclose(g, e, atol=1e-6) and g.dtype == e.dtype


class _QueryRows(torch.nn.Module):
    def __init__(self, knn):
        super().__init__()
        self.knn = knn  # (not "graph": the exported module's own attribute)

    def forward(self, x, query_index):
        return self.knn(x, query_index=query_index)


def test_the_csr_kernels_refuse_torch_export():
    graph = CSRGraph(EDGE_INDEX, 12)

    class Aggregate(torch.nn.Module):
        def forward(self, x, w):
            return graph.aggregate(x, w)
    with pytest.raises(TypeError, match="csr_aggregate cannot run under torch.export, which "
                       "cannot trace sparse tensors: gather and scatter instead"):
        torch.export.export(Aggregate(), (X, EDGE_WEIGHT))
