"""Backbones (graph classifiers :math:`f_B`) built from PyG convolutions."""
from torch_geometric_stream.nn.backbones import GCNBackbone, GraphBackbone, MLPBackbone

__all__ = ["GCNBackbone", "GraphBackbone", "MLPBackbone"]
