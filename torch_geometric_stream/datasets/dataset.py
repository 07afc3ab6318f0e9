"""The in-memory stream: :class:`StreamDataset` and the label encoding every loader uses."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterator, Mapping, Optional, Sequence

import numpy as np

__all__ = ["StreamDataset", "encode_labels", "first_non_finite"]


def first_non_finite(table: np.ndarray) -> Optional[tuple[tuple[int, int], int]]:
    """``((row, column), count)`` of the first NaN/inf entry of ``table`` and how
    many there are, or ``None`` when every entry is finite.

    Args:
        table (np.ndarray): the values :math:`(T, d)`.
    """
    non_finite = np.argwhere(~np.isfinite(table))
    if not len(non_finite):
        return None
    return (int(non_finite[0][0]), int(non_finite[0][1])), len(non_finite)


@dataclass
class StreamDataset:
    r"""A labelled stream held in memory, rows in stream order.

    Features are raw (no scaling, no normalization): stream transforms do that.

    Args:
        name (str): the dataset's name.
        x (numpy.ndarray): the features, converted to float32.
        y (numpy.ndarray): the class ids, converted to int64.
        num_classes (int): the number of classes :math:`c`.
        class_names (list[str]): the name of each class, in class id order.
        feature_names (list[str], optional): the name of each feature.
            (default: :obj:`None`)
        source (str, optional): where the data come from. (default: :obj:`""`)
        notes (str, optional): free text. (default: :obj:`""`)
        value_range (tuple[float, float], optional): the range every feature is
            known to lie in a priori (pixels: ``(0, 255)``), ``None`` when it is
            not known (tabular data); the ``"range"`` / ``"auto"`` input scaling
            uses it. (default: :obj:`None`)

    Raises:
        ValueError: shapes or lengths that disagree, labels outside
            :math:`[0, c)`, or non-finite features.

    Shapes:
        - **x:** :math:`(T, d)` float32
        - **y:** :math:`(T,)` int64 in :math:`[0, c)`

    Iterating yields ``(x_row, y)`` pairs: a float32 array of shape
    :math:`(d,)` and a Python ``int``.
    """

    name: str
    x: np.ndarray
    y: np.ndarray
    num_classes: int
    class_names: list[str]
    feature_names: Optional[list[str]] = None
    source: str = ""
    notes: str = ""
    value_range: Optional[tuple[float, float]] = None

    def __post_init__(self) -> None:
        with np.errstate(over="ignore"):  # values beyond float32 become inf, refused below
            self.x = np.ascontiguousarray(self.x, dtype=np.float32)
        self.y = np.ascontiguousarray(self.y, dtype=np.int64)
        if self.x.ndim != 2 or self.y.ndim != 1 or len(self.x) != len(self.y):
            raise ValueError(f"x must be (T, d) and y (T,), got {self.x.shape} and {self.y.shape}")
        if len(self.class_names) != self.num_classes:
            raise ValueError(f"{len(self.class_names)} class names for {self.num_classes} classes")
        if len(self.y) and (self.y.min() < 0 or self.y.max() >= self.num_classes):
            raise ValueError(f"labels must lie in [0, {self.num_classes})")
        found = first_non_finite(self.x)
        if found is not None:
            (row, column), count = found
            raise ValueError(f"x holds {count} non-finite values (as float32), the "
                             f"first at row {row}, column {column}")
        if self.feature_names is not None and len(self.feature_names) != self.x.shape[1]:
            raise ValueError(f"{len(self.feature_names)} feature names for "
                             f"{self.x.shape[1]} features")

    @property
    def num_samples(self) -> int:
        """Stream length :math:`T`."""
        return int(self.x.shape[0])

    @property
    def num_features(self) -> int:
        """Feature dimension :math:`d`."""
        return int(self.x.shape[1])

    def __len__(self) -> int:
        return self.num_samples

    def __iter__(self) -> Iterator[tuple[np.ndarray, int]]:
        for row, label in zip(self.x, self.y):
            yield row, int(label)

    def head(self, n: int) -> "StreamDataset":
        """The first ``n`` rows as a new dataset (same classes and metadata).

        Args:
            n (int): the number of rows, non-negative.

        Raises:
            ValueError: if ``n`` is negative.
        """
        if n < 0:
            raise ValueError(f"n must be non-negative, got {n}")
        return replace(self, x=self.x[:n].copy(), y=self.y[:n].copy())

    def __repr__(self) -> str:
        return (f"StreamDataset(name={self.name!r}, num_samples={self.num_samples}, "
                f"num_features={self.num_features}, num_classes={self.num_classes})")


def encode_labels(raw: Sequence | np.ndarray,
                  names: Optional[Mapping] = None) -> tuple[np.ndarray, list[str]]:
    """Map original labels to ``0..c-1`` in the order of the sorted distinct values.

    Args:
        raw (Sequence or np.ndarray): original labels, numbers or strings, shape :math:`(T,)`.
        names (Mapping, optional): optional readable name per original value (e.g.
            ``{1: "WALKING"}``); values without an entry are named ``str(value)``.
            (default: :obj:`None`)

    Returns:
        ``(y, class_names)``: int64 labels of shape :math:`(T,)` and one name per class.
    """
    values, y = np.unique(np.asarray(raw), return_inverse=True)
    names = names or {}
    class_names = [str(names.get(value.item(), value.item())) for value in values]
    return y.astype(np.int64).reshape(-1), class_names
