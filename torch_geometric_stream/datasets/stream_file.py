"""A stream of your own from one file: a CSV table or a NumPy ``.npz`` archive.

>>> ds = load_stream_file("sensors.csv", label_column="fault")   # doctest: +SKIP
>>> ds = load_stream_file("stream.npz")                           # arrays x and y

Rows are taken in file order, which is the stream's order. Labels may be numbers or
strings; they become class ids ``0..c-1`` in the order of their sorted distinct values
(numbers sorted as numbers), with the original values as ``class_names``.
"""
from __future__ import annotations

import csv
import itertools
import math
import sys
import zipfile
from pathlib import Path
from typing import Optional

import numpy as np

from torch_geometric_stream.datasets.dataset import StreamDataset, encode_labels
from torch_geometric_stream.datasets.errors import DatasetFormatError, DatasetNotFoundError
from torch_geometric_stream.datasets.io import open_text

__all__ = ["STREAM_FILE_SUFFIXES", "is_stream_file", "load_stream_file"]

#: The file names :func:`load_stream_file` reads, by how they end (any case).
STREAM_FILE_SUFFIXES = (".csv", ".csv.gz", ".npz")


def is_stream_file(name: str) -> bool:
    """Whether ``name`` names a file :func:`load_stream_file` reads (by its suffix)."""
    return name.strip().lower().endswith(STREAM_FILE_SUFFIXES)


def load_stream_file(path: str | Path, *, label_column: Optional[str] = None) -> StreamDataset:
    r"""Read a labelled stream from a CSV file or an ``.npz`` archive.

    - **CSV** (``.csv``, or gzip-compressed ``.csv.gz``): one sample per row, the
      label in the last column unless ``label_column`` names it (a header name, or
      a column index, negative from the end: ``"0"``, ``"-1"``); every other column
      is a numeric feature. The first row is the header if it holds the label
      column's name or a feature field that is a word, not a number.
    - **NPZ**: an array ``x`` (or ``X``) :math:`(T, d)` of numbers and an array ``y``
      (or ``Y``) :math:`(T,)` of labels, as ``np.savez("stream.npz", x=x, y=y)``
      writes them.

    Args:
        path: the file.
        label_column (str, optional): the CSV label column's header name or index.

    Returns:
        The stream, named by the file's name, features raw (float32), no known
        value range.

    Raises:
        DatasetNotFoundError: no such file.
        DatasetFormatError: the content is not such a table: a feature that is not
            a finite number (categorical columns must be encoded first), rows of
            different lengths, a missing label column or array, or no rows.
        ValueError: ``label_column`` with an ``.npz`` file, or a name that is not
            a stream file's.
    """
    path = Path(path)
    if not is_stream_file(path.name):
        raise ValueError(f"{path.name} is not a stream file: its name must end in "
                         f"{', '.join(STREAM_FILE_SUFFIXES)}")
    if not path.is_file():
        raise DatasetNotFoundError(f"Stream file {path} does not exist")
    if path.name.lower().endswith(".npz"):
        if label_column is not None:
            raise ValueError("label_column applies to a CSV file; an .npz file holds its "
                             "labels in the array y")
        x, raw_labels, feature_names = _read_npz(path)
    else:
        x, raw_labels, feature_names = _read_csv(path, label_column)
    y, class_names = encode_labels(raw_labels)
    try:
        return StreamDataset(name=path.name, x=x, y=y, num_classes=len(class_names),
                             class_names=class_names, feature_names=feature_names,
                             source=str(path.resolve()))
    except ValueError as error:  # non-finite after the cast to float32
        raise DatasetFormatError(f"{path.name}: {error}") from None


def _read_npz(path: Path) -> tuple[np.ndarray, np.ndarray, None]:
    """The ``x`` and ``y`` arrays of an ``.npz`` archive, checked."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {key: archive[key] for key in archive.files}
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        raise DatasetFormatError(f"{path.name}: not a readable .npz archive ({error})") from None
    found = {}
    for name in ("x", "y"):
        key = next((key for key in (name, name.upper()) if key in arrays), None)
        if key is None:
            raise DatasetFormatError(f"{path.name}: no array {name!r} (nor {name.upper()!r}); "
                                     f"it holds {sorted(arrays)}")
        found[name] = arrays[key]
    x, y = found["x"], found["y"]
    if x.ndim != 2 or x.dtype.kind not in "biuf":
        raise DatasetFormatError(f"{path.name}: x must be a (T, d) array of numbers, got shape "
                                 f"{x.shape} and dtype {x.dtype}")
    if y.ndim != 1 or len(y) != len(x) or y.dtype.kind not in "biuUS":
        raise DatasetFormatError(f"{path.name}: y must be ({len(x)},) integer or string "
                                 f"labels, got shape {y.shape} and dtype {y.dtype}")
    if not len(x):
        raise DatasetFormatError(f"{path.name}: the stream has no rows")
    return x, y, None


def _parses(text: str, kind: type = float) -> bool:
    """Whether ``kind(text)`` parses: a number (``float``) or an index (``int``)."""
    try:
        kind(text)
    except ValueError:
        return False
    return True


def _read_csv(path: Path, label_column: Optional[str]
              ) -> tuple[np.ndarray, np.ndarray, Optional[list[str]]]:
    """Features, raw labels and feature names (``None`` without a header) of a CSV,
    read row by row: a large file is held as numbers, not as strings."""
    csv.field_size_limit(sys.maxsize)
    with open_text(path, newline="") as handle:
        rows = ([field.strip() for field in row] for row in csv.reader(handle) if row)
        first = next(rows, None)
        if first is None:
            raise DatasetFormatError(f"{path.name}: the file has no rows")
        width = len(first)
        if width < 2:
            raise DatasetFormatError(f"{path.name}: a row needs a feature and a label, the "
                                     f"first has {width} field(s)")
        index = _label_index(label_column, first, width, path.name)
        named = label_column is not None and not _parses(label_column, int)  # in the header
        words = [field for column, field in enumerate(first)
                 if column != index and field and not _parses(field)]
        header = first if named or words else None
        features, labels = [], []
        data = rows if header is not None else itertools.chain([first], rows)
        for number, row in enumerate(data, start=1):
            if len(row) != width:
                raise DatasetFormatError(f"{path.name} row {number + (header is not None)}: "
                                         f"{len(row)} fields, the first row has {width}")
            labels.append(row.pop(index))
            try:
                values = np.array(row, dtype=np.float64)
            except ValueError:
                values = None
            if values is None or not np.isfinite(values).all():
                raise _bad_field(path.name, number, row, index, header)
            features.append(values)
    if not labels:
        raise DatasetFormatError(f"{path.name}: the file has a header and no data rows")
    names = None if header is None else [name for column, name in enumerate(header)
                                         if column != index]
    return np.stack(features), _label_values(labels), names


def _finite(text: str) -> bool:
    return _parses(text) and math.isfinite(float(text))


def _bad_field(file_name: str, number: int, features: list[str], index: int,
               header: Optional[list[str]]) -> DatasetFormatError:
    """The error of data row ``number``, whose ``features`` (the label at ``index``
    taken out) are not all finite numbers: its first bad field, by column."""
    column = next(column for column, field in enumerate(features) if not _finite(field))
    in_file = column + (column >= index)  # the label column is not a feature
    name = repr(header[in_file]) if header is not None else str(in_file + 1)
    value = features[column]
    what = ("is empty (a missing value: fill in or drop the row first)" if not value else
            f"holds {value!r}, not a finite number" if _parses(value) else
            f"holds {value!r}, not a number (encode categorical features as numbers first)")
    return DatasetFormatError(f"{file_name} data row {number}: column {name} {what}")


def _label_values(labels: list[str]) -> np.ndarray:
    """CSV label fields as integers where all are whole numbers, floats where all
    are numbers, else strings: numbers sort as numbers in :func:`encode_labels`."""
    if not all(map(_parses, labels)):
        return np.array(labels, dtype=str)
    numbers = np.array(labels, dtype=np.float64)
    return numbers.astype(np.int64) if np.all(numbers == np.round(numbers)) else numbers


def _label_index(label_column: Optional[str], first_row: list[str], width: int,
                 file_name: str) -> int:
    """The position of the label column: the last by default, an index (negative
    from the end) or a name of the first row (the header)."""
    if label_column is None:
        return width - 1
    if _parses(label_column, int):
        index = int(label_column)
        if not -width <= index < width:
            raise DatasetFormatError(f"{file_name}: label column {index} is outside the "
                                     f"{width} columns")
        return index % width
    if label_column not in first_row:
        raise DatasetFormatError(f"{file_name}: no column {label_column!r} in the header "
                                 f"{first_row}")
    return first_row.index(label_column)
