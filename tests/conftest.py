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


@pytest.fixture
def interrupt_run_after(monkeypatch):
    """``interrupt_run_after(samples)``: Ctrl-C in the next ``run`` command's
    ``prequential``, after ``samples`` samples (and the checkpoint of the last of
    them, if one is due); ``monkeypatch.undo()`` lets later runs go through."""
    from torch_geometric_stream.cli import run as run_module

    def interrupt(samples: int) -> None:
        evaluate = run_module.prequential

        def interrupted(*args, callback, **kwargs):
            def step(position, record):
                callback(position, record)
                if position + 1 == samples:
                    raise KeyboardInterrupt
            return evaluate(*args, callback=step, **kwargs)
        monkeypatch.setattr(run_module, "prequential", interrupted)
    return interrupt
