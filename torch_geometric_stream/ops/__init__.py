"""Low-level sparse kernels shared by the graph learners and the backbones."""
from torch_geometric_stream.ops.csr import CSRGraph, csr_aggregate, csr_edge_dot, supports_csr

__all__ = ["CSRGraph", "csr_aggregate", "csr_edge_dot", "supports_csr"]
