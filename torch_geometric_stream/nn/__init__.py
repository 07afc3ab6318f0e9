"""Backbones (graph classifiers :math:`f_B`) built from PyG convolutions."""
from torch_geometric_stream.nn.backbones import (AGGREGATIONS, GCNBackbone, GraphBackbone,
                                                 MLPBackbone)

__all__ = ["AGGREGATIONS", "GCNBackbone", "GraphBackbone", "MLPBackbone"]
