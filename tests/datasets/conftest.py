"""Fixtures of the dataset tests: plain/gzip file writing."""
from __future__ import annotations

import gzip
from pathlib import Path
from typing import Callable

import pytest


@pytest.fixture(params=[False, True], ids=["plain", "gzip"])
def compressed(request) -> bool:
    """Run a test once with plain files and once with ``.gz`` files."""
    return request.param


@pytest.fixture
def write(compressed: bool) -> Callable[[Path, "bytes | str"], Path]:
    """``write(path, data)`` writes ``path`` (or ``path.gz``), creating folders."""
    def _write(path: Path, data: bytes | str) -> Path:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        path.parent.mkdir(parents=True, exist_ok=True)
        if compressed:
            path = path.with_name(path.name + ".gz")
            path.write_bytes(gzip.compress(raw))
        else:
            path.write_bytes(raw)
        return path
    return _write
