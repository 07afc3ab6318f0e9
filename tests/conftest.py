"""Fixtures shared by every test folder."""
from __future__ import annotations

from pathlib import Path

import pytest

from torch_geometric_stream.datasets import default_data_root


@pytest.fixture(scope="session")
def data_root() -> Path:
    """The shared real-data folder (``$TGS_DATA_ROOT`` or ``shared/data`` beside the
    checkout), or skip."""
    root = default_data_root() or Path(__file__).resolve().parents[2] / "shared" / "data"
    if not root.is_dir():
        pytest.skip("no local data folder (set TGS_DATA_ROOT)")
    return root
