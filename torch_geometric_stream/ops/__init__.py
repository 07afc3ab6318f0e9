"""Low-level kernels shared by the graph learners and the backbones."""
from torch_geometric_stream.ops.csr import CSRGraph, csr_aggregate, csr_edge_dot, supports_csr
from torch_geometric_stream.ops.denormal import flush_denormal, flushes_denormal
from torch_geometric_stream.ops.normalize import l2_normalize

__all__ = ["CSRGraph", "csr_aggregate", "csr_edge_dot", "supports_csr", "l2_normalize",
           "flush_denormal", "flushes_denormal"]
