"""Facts about the machine a benchmark ran on, recorded with every result."""
from torch_geometric_stream.cli.report import cpu_model

__all__ = ["cpu_model"]
