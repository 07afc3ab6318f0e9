"""Fixtures of the command-line tests."""
from __future__ import annotations

from pathlib import Path

import pytest

from torch_geometric_stream.datasets import default_data_root


@pytest.fixture(scope="session")
def data_root() -> Path:
    """The shared real-data folder, or skip."""
    root = default_data_root() or Path(__file__).resolve().parents[3] / "shared" / "data"
    if not root.is_dir():
        pytest.skip("no local data folder (set TGS_DATA_ROOT)")
    return root
