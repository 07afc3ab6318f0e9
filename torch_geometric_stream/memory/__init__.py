"""Fixed-capacity stream memories."""
from torch_geometric_stream.memory.dual_prototype import DualPrototypeMemory, MemoryUpdate

__all__ = ["DualPrototypeMemory", "MemoryUpdate"]
