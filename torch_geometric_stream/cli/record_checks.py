"""Checks of the entries a command reads from a run record (``run``'s JSON, perhaps
edited by hand or broken): one refusal ``FILE: the entry KEY must be KIND, got
VALUE`` instead of a traceback where the entry is used."""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping

from torch_geometric_stream.cli.errors import UsageError

__all__ = ["BadRecord", "SHOWN_CHARACTERS", "bad_entry", "check_config", "check_n_samples",
           "check_number", "check_tail_samples", "is_integer", "is_number"]

#: How much of a refused entry's value an error shows (:func:`bad_entry`).
SHOWN_CHARACTERS = 80


class BadRecord(UsageError):
    """A run record with an entry that cannot be one of a run (refused in a folder
    too, where what is no run record is passed over)."""


def is_integer(value: Any) -> bool:
    """Whether ``value`` is an int (not a bool: JSON ``true`` is no count)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    """Whether ``value`` is a finite int or float (not a bool)."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def check_number(path: Path, record: Mapping[str, Any], key: str, integer: bool = False
                 ) -> None:
    """Raise :class:`BadRecord` unless the entry ``key`` of ``record`` (read from
    ``path``) is an integer (``integer``), else a finite number."""
    value = record.get(key)
    if not (is_integer if integer else is_number)(value):
        raise bad_entry(path, key, "an integer" if integer else "a finite number", value)


def check_n_samples(path: Path, record: Mapping[str, Any]) -> int:
    """The ``n_samples`` of ``record`` (read from ``path``), or :class:`BadRecord`
    unless it is an integer >= 1 (a run records at least one sample)."""
    value = record.get("n_samples")
    if not (isinstance(value, int) and is_integer(value) and value >= 1):
        raise bad_entry(path, "n_samples", "an integer >= 1", value)
    return value


def check_config(path: Path, record: Mapping[str, Any]) -> None:
    """Raise :class:`BadRecord` unless the ``config`` of ``record`` (read from
    ``path``) is an object."""
    if not isinstance(record["config"], dict):
        raise bad_entry(path, "config", "an object", record["config"])


def check_tail_samples(path: Path, record: Mapping[str, Any]) -> None:
    """Raise :class:`BadRecord` unless the ``tail_samples`` of ``record`` (read from
    ``path``; absent or null in a ``--history full`` run's) are an object of
    integers, with ``n_samples`` an integer >= 1 (:func:`check_n_samples`)
    where there are any (they are set against the tail of ``n_samples``, see
    :func:`~torch_geometric_stream.evaluation.bounded.approximate_tails`) and each in
    ``[1, n_samples]`` (a tail of the stream's last samples)."""
    spans = record.get("tail_samples")
    if spans is not None:
        if not isinstance(spans, dict) or not all(map(is_integer, spans.values())):
            raise bad_entry(path, "tail_samples", "an object of integers", spans)
        if spans:
            samples = check_n_samples(path, record)
            if not all(1 <= span <= samples for span in spans.values()):
                raise bad_entry(path, "tail_samples",
                                f"an object of integers in [1, n_samples {samples}]", spans)


def bad_entry(path: Path, key: str, kind: str, value: Any) -> BadRecord:
    """``FILE: the entry KEY must be KIND, got VALUE`` (the value's repr cut after
    :data:`SHOWN_CHARACTERS`)."""
    shown = repr(value)
    if len(shown) > SHOWN_CHARACTERS:
        shown = shown[:SHOWN_CHARACTERS] + "..."
    return BadRecord(f"{path}: the entry {key} must be {kind}, got {shown}")
