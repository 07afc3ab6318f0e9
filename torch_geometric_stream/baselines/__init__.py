"""The SLeDGe paper's streaming baselines: TLP, ReSSL and HDSSL.

All three follow :class:`torch_geometric_stream.base.StreamClassifier`
(test-then-train, ``-1`` = unlabelled), start with no labelled data and keep at
most ``memory_size`` items (window points or micro-clusters), see
``docs/baselines.md``.
"""
from torch_geometric_stream.baselines.hdssl import HDSSL
from torch_geometric_stream.baselines.ressl import ReSSL
from torch_geometric_stream.baselines.tlp import TemporalLabelPropagation

BASELINES = {
    "tlp": TemporalLabelPropagation,
    "ressl": ReSSL,
    "hdssl": HDSSL,
}

__all__ = ["TemporalLabelPropagation", "ReSSL", "HDSSL", "BASELINES"]
