"""Turn a dataset bundled with River (optional extra ``river``) into a :class:`StreamDataset`."""
from __future__ import annotations

import importlib
from typing import Any, Optional

import numpy as np

from torch_geometric_stream.datasets.dataset import StreamDataset, encode_labels
from torch_geometric_stream.validation import check_positive_int

__all__ = ["load_river_dataset"]


def load_river_dataset(dataset: str | Any, *, max_samples: Optional[int] = None) -> StreamDataset:
    """Materialize a River classification dataset, e.g. ``"Phishing"`` or ``"ImageSegments"``.

    Args:
        dataset: the name of a class in :mod:`river.datasets` (instantiated
            with no argument) or an iterable of ``(x: dict, y)`` pairs such as
            a River dataset instance.
        max_samples: stop after this many rows.

    Returns:
        Features in the order of the first row's keys (a key missing from a later
        row counts as 0, as in :class:`~torch_geometric_stream.integrations.river.RiverClassifier`;
        the learners refuse NaN), labels remapped to ``0..c-1`` in sorted order.

    Raises:
        ImportError: ``river`` is not installed.
        ValueError: unknown name, an empty dataset, or ``max_samples < 1``.
        TypeError: a ``max_samples`` that is not an integer.
    """
    if max_samples is not None:
        max_samples = check_positive_int(max_samples, "max_samples")
    if isinstance(dataset, str):
        river_datasets = importlib.import_module("river.datasets")
        factory = getattr(river_datasets, dataset, None)
        if not isinstance(factory, type):
            raise ValueError(f"river.datasets has no dataset named {dataset!r}")
        dataset = factory()
    rows, labels, keys = [], [], None
    for i, (features, label) in enumerate(dataset):
        if max_samples is not None and i >= max_samples:
            break
        keys = keys if keys is not None else list(features)
        rows.append([float(features.get(k, 0.0)) for k in keys])
        labels.append(label)
    if not rows:
        raise ValueError("the River dataset yielded no rows")
    y, class_names = encode_labels(labels)
    name = type(dataset).__name__
    return StreamDataset(name, np.asarray(rows), y, len(class_names), class_names,
                         feature_names=[str(k) for k in keys],
                         source=f"River bundled dataset river.datasets.{name}")
