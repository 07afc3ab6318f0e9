"""Fixed-capacity stream memories."""
from torch_geometric_stream.memory.dual_prototype import (SOURCE_MERGES, DualPrototypeMemory,
                                                          MemoryUpdate)

__all__ = ["DualPrototypeMemory", "MemoryUpdate", "SOURCE_MERGES"]
