r"""Compact per-sample columns of a stream run.

A run records a few numbers per sample for as long as the stream lasts; kept in
Python lists, each entry is a pointer plus, for a float, an object of its own
(66 bytes per sample for the five columns of a prequential run). These columns
are :class:`array.array` of machine numbers instead: class ids as ``int32``
(``'i'``, widened to an ``int64`` ``'q'`` copy once an id does not fit), flags
as bytes (``'B'``, 0 or 1), latencies as ``float64`` (``'d'``), so the values,
and every result read from them, are exactly those a list would hold.
"""
from __future__ import annotations

import operator
from array import array
from typing import Any

import numpy as np

__all__ = ["class_ids", "check_int64", "append_class_id", "to_numpy"]

_INT64_MIN, _INT64_MAX = -2**63, 2**63 - 1


def class_ids() -> array:
    """An empty column of class ids (``'i'``, :func:`append_class_id` widens it)."""
    return array("i")


def check_int64(value: Any, name: str) -> int:
    """``value`` as a Python int that an ``int64`` holds.

    Args:
        value (Any): the value to check.
        name (str): how it is called in messages.

    Raises:
        TypeError: ``value`` is not an integer (e.g. a float).
        ValueError: it lies outside :math:`[-2^{63}, 2^{63})`.
    """
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {value!r}") from None
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ValueError(f"{name} must fit an int64, got {value}")
    return value


def append_class_id(ids: array, value: int) -> array:
    """Append ``value`` to ``ids`` and return the column holding it: ``ids``
    itself, or its ``int64`` copy where ``value`` does not fit ``ids``' ``int32``.

    Args:
        ids (array): a column of class ids.
        value (int): an int64 (see :func:`check_int64`).
    """
    try:
        ids.append(value)
    except OverflowError:
        ids = array("q", ids)
        ids.append(value)
    return ids


def to_numpy(column: array, dtype: Any) -> np.ndarray:
    """A copy of ``column`` as ``dtype``, read through its buffer (no Python object
    per entry). A copy, not a view: a column exporting its buffer could not grow.

    Args:
        column (array): the column :math:`(n,)`.
        dtype (np.dtype): the NumPy dtype of the result.
    """
    return np.frombuffer(column, dtype=column.typecode).astype(dtype)
