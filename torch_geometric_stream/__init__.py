"""torch_geometric_stream: semi-supervised learning on data streams with graph
structure learning, as PyTorch Geometric modules."""
from torch_geometric_stream.base import StreamClassifier
from torch_geometric_stream.graph import DynamicKNNGraph, StaticKNNGraph
from torch_geometric_stream.memory import DualPrototypeMemory
from torch_geometric_stream.models import SLeDGe
from torch_geometric_stream.nn import GCNBackbone, GraphBackbone, MLPBackbone

__version__ = "0.1.0"

__all__ = ["StreamClassifier", "DualPrototypeMemory", "DynamicKNNGraph", "StaticKNNGraph",
           "GCNBackbone", "GraphBackbone", "MLPBackbone", "SLeDGe", "__version__"]
