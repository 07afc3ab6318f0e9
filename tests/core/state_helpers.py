"""Comparing learners' states in tests: bit for bit, entry by entry."""
from __future__ import annotations

import copy
import math
from collections import deque
from typing import Any

import numpy as np
import torch


def state_of(learner: Any) -> Any:
    """A copy of everything that steers ``learner``'s future predictions: its
    ``state_dict()``, which for a torch learner holds its extra state too
    (optimizer, generators, counters, an input range's reservoir) and for a NumPy
    baseline its arrays and counters."""
    return copy.deepcopy(learner.state_dict())


def assert_same(a: Any, b: Any, path: str = "state") -> None:
    """Bit-for-bit equality of nested dicts/lists/tuples/deques of tensors, arrays and
    scalars (NaN equal to NaN)."""
    assert type(a) is type(b), f"{path}: {type(a).__name__} != {type(b).__name__}"
    if isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape, f"{path}: dtype/shape changed"
        a_bytes = a.detach().cpu().contiguous().view(-1).view(torch.uint8) if a.numel() else a
        b_bytes = b.detach().cpu().contiguous().view(-1).view(torch.uint8) if b.numel() else b
        assert torch.equal(a_bytes, b_bytes), f"{path}: values changed"
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape, f"{path}: dtype/shape changed"
        assert a.tobytes() == b.tobytes(), f"{path}: values changed"
    elif isinstance(a, dict):
        assert list(a) == list(b), f"{path}: keys changed {list(a)} != {list(b)}"
        for key in a:
            assert_same(a[key], b[key], f"{path}[{key!r}]")
    elif isinstance(a, (list, tuple, deque)):
        assert len(a) == len(b), f"{path}: length changed"
        for i, (u, v) in enumerate(zip(a, b)):
            assert_same(u, v, f"{path}[{i}]")
    elif isinstance(a, float) and math.isnan(a):
        assert math.isnan(b), f"{path}: {a!r} != {b!r}"
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"
