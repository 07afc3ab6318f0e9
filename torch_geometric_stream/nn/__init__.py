"""Backbones (graph classifiers :math:`f_B`) built from PyG convolutions, and
the in-model input scaler."""
from torch_geometric_stream.nn.backbones import (AGGREGATIONS, GCNBackbone, GraphBackbone,
                                                 MLPBackbone)
from torch_geometric_stream.nn.scaling import RunningMinMax, min_max_scale

__all__ = ["AGGREGATIONS", "GCNBackbone", "GraphBackbone", "MLPBackbone", "RunningMinMax",
           "min_max_scale"]
