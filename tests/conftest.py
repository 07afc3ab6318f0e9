"""Fixtures shared by every test folder."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from torch_geometric_stream.datasets import DATASETS, default_data_root

# Helper modules (``tests/<folder>/*_helpers.py``) importable by name: pytest
# runs with --import-mode=importlib, which puts no test folder on sys.path.
for _folder in sorted({str(path.parent) for path in Path(__file__).parent.glob("*/*_helpers.py")}):
    if _folder not in sys.path:
        sys.path.insert(0, _folder)


@pytest.fixture(scope="session")
def data_root() -> Path:
    """The shared real-data folder (``$TGS_DATA_ROOT`` or ``shared/data`` beside the
    checkout), or skip."""
    root = default_data_root() or Path(__file__).resolve().parents[2] / "shared" / "data"
    if not root.is_dir():
        pytest.skip("no local data folder (set TGS_DATA_ROOT)")
    return root


@pytest.fixture(scope="session")
def dataset_root(data_root):
    """``dataset_root(NAME)``: the data folder, or skip when it lacks dataset NAME (a
    machine may hold some of the paper's streams and not others)."""
    def holding(name: str) -> Path:
        if not (data_root / DATASETS[name].folder).is_dir():
            pytest.skip(f"{name} not in {data_root}")
        return data_root
    return holding
