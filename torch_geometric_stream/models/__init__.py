"""Stream learners composed from the package's modules."""
from torch_geometric_stream.models.sledge import PROPAGATIONS, SLeDGe

__all__ = ["SLeDGe", "PROPAGATIONS"]
