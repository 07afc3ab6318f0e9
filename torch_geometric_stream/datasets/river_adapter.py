"""Turn a dataset bundled with River (optional extra ``river``) into a :class:`StreamDataset`."""
from __future__ import annotations

import importlib
from typing import Any, Mapping, Optional, Sized

import numpy as np

from torch_geometric_stream.datasets.dataset import StreamDataset, encode_labels
from torch_geometric_stream.datasets.stream_file import _MISSING_VALUE
from torch_geometric_stream.validation import check_positive_int

__all__ = ["load_river_dataset"]


def load_river_dataset(dataset: str | Any, *, max_samples: Optional[int] = None) -> StreamDataset:
    """Materialize a River classification dataset, e.g. ``"Phishing"`` or ``"ImageSegments"``.

    Args:
        dataset (str or Iterable): the name of a class in :mod:`river.datasets` (instantiated
            with no argument) or an iterable of ``(x: dict, y)`` pairs such as
            a River dataset instance.
        max_samples (int, optional): stop after this many rows. (default: :obj:`None`)

    Returns:
        ``x`` of shape :math:`(n, d)` over the :math:`d` keys of all the rows loaded,
        in the order they first appear (the first row's keys first, then each key
        new in a later row): River's rows are sparse dicts, so a row lacking a key
        reads 0 there (as in :class:`~torch_geometric_stream.integrations.river.RiverClassifier`;
        the learners refuse NaN), and a key first seen in row 1000 is a feature
        too. Labels are remapped to ``0..c-1`` in sorted order.

    Raises:
        ImportError: ``river`` is not installed.
        ValueError: unknown name, an empty dataset, ``max_samples < 1``, a
            feature value that is no number (a category's name, ``None``) or a
            missing label (``None``, NaN); the message names the row and the
            feature.
        TypeError: a ``max_samples`` that is not an integer, or a row that is no
            ``(x: dict, y)`` pair.
    """
    if max_samples is not None:
        max_samples = check_positive_int(max_samples, "max_samples")
    if isinstance(dataset, str):
        river_datasets = importlib.import_module("river.datasets")
        factory = getattr(river_datasets, dataset, None)
        if not isinstance(factory, type):
            raise ValueError(f"river.datasets has no dataset named {dataset!r}")
        dataset = factory()
    rows: list[dict[int, float]] = []
    labels: list[Any] = []
    columns: dict[Any, int] = {}  # key -> its column, in order of appearance
    for i, pair in enumerate(dataset):
        if max_samples is not None and i >= max_samples:
            break
        features, label = _river_pair(pair, i)
        rows.append({columns.setdefault(key, len(columns)): _feature(value, key, i)
                     for key, value in features.items()})
        if label is None or isinstance(label, (float, np.floating)) and np.isnan(label):
            raise ValueError(f"River row {i}: the label is {label}; every row needs its "
                             f"true label")
        labels.append(label)
    if not rows:
        raise ValueError("the River dataset yielded no rows")
    x = np.zeros((len(rows), len(columns)))
    for i, row in enumerate(rows):
        x[i, list(row)] = list(row.values())
    y, class_names = encode_labels(labels)
    name = type(dataset).__name__
    return StreamDataset(name, x, y, len(class_names), class_names,
                         feature_names=[str(key) for key in columns],
                         source=f"River bundled dataset river.datasets.{name}")


def _river_pair(pair: Any, row: int) -> tuple[Mapping[Any, Any], Any]:
    """The ``(x, y)`` of River's ``row``, ``x`` a dict of features, or a ``TypeError``."""
    try:
        features, label = pair
    except (TypeError, ValueError):
        size = f" of length {len(pair)}" if isinstance(pair, Sized) else ""
        raise TypeError(f"River row {row} must be an (x, y) pair, got "
                        f"{type(pair).__name__}{size}") from None
    if not isinstance(features, Mapping):
        raise TypeError(f"River row {row}: x must be a dict of features by name (River's "
                        f"rows), got {type(features).__name__}")
    return features, label


def _feature(value: Any, key: Any, row: int) -> float:
    """The feature ``key`` of River's ``row`` as a number, or a ``ValueError`` in the
    words of the stream files' errors."""
    try:
        return float(value)
    except (TypeError, ValueError):
        problem = (_MISSING_VALUE if value is None
                   else "not a number (encode categorical features as numbers first)")
        raise ValueError(f"River row {row}: feature {key!r} holds {value!r}, "
                         f"{problem}") from None
