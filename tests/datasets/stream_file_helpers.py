"""Helpers of the stream-file tests."""
from __future__ import annotations

import tracemalloc
from pathlib import Path

from torch_geometric_stream.datasets import StreamDataset, load_stream_file


def load_with_peak(path: Path) -> tuple[StreamDataset, int]:
    """``load_stream_file(path)`` and the peak of the memory traced while it ran (bytes)."""
    tracemalloc.start()
    try:
        dataset = load_stream_file(path)
        return dataset, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
