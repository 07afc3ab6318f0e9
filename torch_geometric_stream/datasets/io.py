"""File access shared by the loaders: optional gzip, IDX arrays, tables, CSV.

Every function raises :class:`~.errors.DatasetNotFoundError` for a missing
file and :class:`~.errors.DatasetFormatError` for content it cannot parse, so
a loader never leaks a bare ``OSError`` or ``ValueError`` from a bad file.
"""
from __future__ import annotations

import csv
import gzip
import io
import sys
import warnings
import zlib
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Optional, TextIO, cast

import numpy as np

from torch_geometric_stream.datasets.dataset import first_non_finite
from torch_geometric_stream.datasets.errors import DatasetFormatError, DatasetNotFoundError
from torch_geometric_stream.datasets.numbers import all_numbers, is_number

__all__ = ["find_file", "first_existing", "open_text", "open_binary", "read_idx",
           "read_numeric_table", "read_csv_records", "records_to_matrix", "as_integer_labels",
           "check_header_names"]

#: The booleans a CSV field may hold, as numbers (Shopper's Weekend: TRUE/FALSE).
_BOOLEANS = {"true": 1.0, "false": 0.0}
#: What starts a comment in a numeric table (:func:`read_numeric_table`), to the line's end.
_COMMENT = "#"
_IDX_DTYPES: dict[int, np.dtype] = {
    0x08: np.dtype(">u1"), 0x09: np.dtype(">i1"), 0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"), 0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


def find_file(path: Path | str) -> Optional[Path]:
    """``path`` if it exists, else ``path.gz`` if that exists, else ``None``.

    Args:
        path (Path or str): the file, without ``.gz``.
    """
    path = Path(path)
    gz = path.with_name(path.name + ".gz")
    for candidate in (path, gz):
        if candidate.is_file():
            return candidate
    return None


def first_existing(folders: Iterable[Path], name: str) -> Optional[Path]:
    """The first ``folder/name`` (plain or ``.gz``) found in ``folders``, or
    ``None``.

    Args:
        folders (Iterable[Path]): the folders to search, in order.
        name (str): the file name.
    """
    for folder in folders:
        found = find_file(folder / name)
        if found is not None:
            return found
    return None


def _require(path: Path | str) -> Path:
    found = find_file(path)
    if found is None:
        raise DatasetNotFoundError(f"missing file {Path(path).name} (nor {Path(path).name}.gz)")
    return found


class _CheckedGzipFile(gzip.GzipFile):
    """A :class:`gzip.GzipFile` on which a truncated or corrupt file raises a
    :class:`~.errors.DatasetFormatError` naming it, at whichever read meets the
    damage, instead of an ``EOFError``, ``BadGzipFile`` or ``zlib.error``."""

    def _checked(self, read: Callable[..., Any], *args: Any) -> Any:
        try:
            return read(*args)
        except (OSError, EOFError, zlib.error) as error:
            raise DatasetFormatError(f"{Path(self.name).name}: cannot be read "
                                     f"({error})") from None

    def read(self, size: Optional[int] = -1) -> bytes:
        return self._checked(super().read, size)

    def read1(self, size: int = -1) -> bytes:
        return self._checked(super().read1, size)

    def peek(self, n: int) -> bytes:
        return self._checked(super().peek, n)

    def readline(self, size: Optional[int] = -1) -> bytes:
        return self._checked(super().readline, size)


def open_binary(path: Path | str) -> BinaryIO:
    """Open ``path`` or ``path.gz`` for binary reading, decompressing transparently.

    Args:
        path (Path or str): the file.

    Raises:
        DatasetNotFoundError: neither file exists.
        DatasetFormatError: when read, a damaged ``.gz``.
    """
    found = _require(path)
    if found.suffix.lower() == ".gz":  # a binary file, though typeshed's GzipFile is no BinaryIO
        return cast(BinaryIO, _CheckedGzipFile(found, "rb"))
    return open(found, "rb")


def open_text(path: Path | str, encoding: str = "utf-8", errors: str = "strict",
              newline: Optional[str] = None) -> TextIO:
    """Open ``path`` or ``path.gz`` as text (universal newlines unless ``newline``);
    the file is closed again if the options are refused (an unknown ``encoding``).

    Args:
        path (Path or str): the file, without ``.gz``.
        encoding (str, optional): the text encoding. (default: :obj:`"utf-8"`)
        errors (str, optional): how decoding errors are handled, as in
            :func:`open`. (default: :obj:`"strict"`)
        newline (str, optional): as in :func:`open`. (default: :obj:`None`)
    """
    handle = open_binary(path)
    try:
        return io.TextIOWrapper(handle, encoding=encoding, errors=errors, newline=newline)
    except BaseException:
        handle.close()
        raise


def read_idx(path: Path | str) -> np.ndarray:
    """Read a file in LeCun's IDX format (``path`` or ``path.gz``).

    The header is two zero bytes, a type code, the number of dimensions ``n``
    and ``n`` big-endian int32 sizes; the data follows in C order.

    Args:
        path (Path or str): the file, without ``.gz``.

    Returns:
        numpy.ndarray: the array with its native shape, e.g. ``(N, 28, 28)``
        uint8 images or ``(N,)`` uint8 labels.

    Raises:
        DatasetFormatError: not an IDX file, or its size is not the one its
            header announces.
    """
    with open_binary(path) as handle:
        raw = handle.read()
    name = Path(path).name
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise DatasetFormatError(f"{name}: not an IDX file (bad magic number {raw[:4].hex()})")
    dtype, ndim = _IDX_DTYPES[raw[2]], raw[3]
    offset = 4 + 4 * ndim
    if len(raw) < offset:
        raise DatasetFormatError(f"{name}: truncated IDX header")
    shape = tuple(int(v) for v in np.frombuffer(raw, ">i4", count=ndim, offset=4))
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(raw) - offset != expected:
        raise DatasetFormatError(f"{name}: IDX header announces shape {shape} "
                                 f"({expected} bytes) but {len(raw) - offset} bytes follow")
    return np.frombuffer(raw, dtype, offset=offset).reshape(shape).astype(dtype.newbyteorder("="))


def read_numeric_table(path: Path | str, num_columns: int,
                       delimiter: Optional[str] = None) -> np.ndarray:
    """Read a headerless numeric table (UTF-8, a leading byte-order mark skipped).

    Args:
        path (Path or str): the file (or its ``.gz``).
        num_columns (int): the number of columns it must have.
        delimiter (str, optional): the field separator; ``None``: whitespace.
            (default: ``None``)

    Returns:
        float64 array of shape ``(rows, num_columns)``, at least one row.

    Raises:
        DatasetFormatError: a field that is not a number, no row, another
            number of columns, or a non-finite value.
    """
    name = Path(path).name
    with open_text(path, encoding="utf-8-sig") as handle, warnings.catch_warnings():
        # an empty file: NumPy's warning would come before the error below
        warnings.filterwarnings("ignore", "loadtxt: input contained no data")
        try:
            table = np.loadtxt(handle, dtype=np.float64, delimiter=delimiter, ndmin=2,
                               comments=_COMMENT)
        except ValueError as error:
            raise (_non_number_in_table(path, delimiter)
                   or DatasetFormatError(f"{name}: not a numeric table ({error})")) from None
    if table.shape[0] == 0:
        raise DatasetFormatError(f"{name}: the file has no rows")
    if table.shape[1] != num_columns:
        raise DatasetFormatError(f"{name}: expected {num_columns} columns, found {table.shape[1]}")
    found = first_non_finite(table)
    if found is not None:
        (row, column), count = found
        raise DatasetFormatError(f"{name} data row {row + 1}, column {column + 1}: non-finite "
                                 f"value {table[row, column]} ({count} such values in the file)")
    return table


def _non_number_in_table(path: Path | str, delimiter: Optional[str]
                         ) -> Optional[DatasetFormatError]:
    """The error of the first field of the table ``path`` that is not a number
    (:mod:`~torch_geometric_stream.datasets.numbers`), naming its line and column
    (comments skipped, as :func:`read_numeric_table` reads them); ``None`` if every
    field is one."""
    with open_text(path, encoding="utf-8-sig") as handle:
        for line_number, line in enumerate(handle, start=1):
            line = line.partition(_COMMENT)[0]
            fields = line.split(delimiter) if line.strip() else []
            for column, field in enumerate(fields, start=1):
                if not is_number(field.strip()):
                    return DatasetFormatError(f"{Path(path).name}: not a numeric table: line "
                                              f"{line_number}, column {column} holds the "
                                              f"non-numeric value {field.strip()!r}")
    return None


def check_header_names(header: list[str], file_name: str, line: int) -> None:
    """Raise a :class:`~.errors.DatasetFormatError` if two columns of a CSV header
    share a name, naming it and their columns (from 1): a column picked by its
    name would be either of them. Columns without a name are left to the caller.

    Args:
        header (list[str]): the column names.
        file_name (str): the file, for the message.
        line (int): the header's line in the file.
    """
    columns: dict[str, list[int]] = {}
    for column, name in enumerate(header, start=1):
        if name:
            columns.setdefault(name, []).append(column)
    for name, found in columns.items():
        if len(found) > 1:
            numbers = ", ".join(map(str, found[:-1])) + f" and {found[-1]}"
            raise DatasetFormatError(f"{file_name} line {line}: columns {numbers} of the header "
                                     f"share the name {name!r}; give each column its own name")


def read_csv_records(path: Path | str, required: Iterable[str],
                     encoding: str = "utf-8-sig") -> list[dict[str, str]]:
    """Rows of a CSV file with a header, as dicts keyed by column name.

    A row with exactly one field more than the header carries a leading row id
    (R's ``write.csv`` convention, e.g. the Occupancy Detection files): the id
    is dropped.

    Args:
        path (Path or str): the file (or its ``.gz``).
        required (Iterable[str]): the columns the header must have.
        encoding (str, optional): the file's encoding; the default reads UTF-8
            with or without the byte-order mark a spreadsheet's "CSV UTF-8"
            writes. (default: ``"utf-8-sig"``)

    Raises:
        DatasetFormatError: two columns share a name, a required column is
            missing, a row has another length, or there is no data row.
    """
    name = Path(path).name
    csv.field_size_limit(sys.maxsize)
    with open_text(path, encoding=encoding, newline="") as handle:
        reader = csv.reader(handle)
        header = [column.strip() for column in next(reader, [])]
        check_header_names(header, name, reader.line_num)
        missing = [column for column in required if column not in header]
        if missing:
            raise DatasetFormatError(f"{name}: header {header} lacks the columns {missing}")
        records = []
        for line_number, row in enumerate(reader, start=2):
            if not row:
                continue
            if len(row) == len(header) + 1:
                row = row[1:]
            if len(row) != len(header):
                raise DatasetFormatError(f"{name} line {line_number}: {len(row)} fields, "
                                         f"header has {len(header)}")
            records.append(dict(zip(header, row)))
    if not records:
        raise DatasetFormatError(f"{name}: the file has no data rows")
    return records


def as_integer_labels(values: np.ndarray, file_name: str) -> np.ndarray:
    """Check that parsed label values are integral and return them as int64.

    Args:
        values (np.ndarray): the labels.
        file_name (str): the file they come from, for the message.

    Raises:
        DatasetFormatError: a label is not a finite integer.
    """
    values = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(values)) or np.any(values != np.round(values)):
        raise DatasetFormatError(f"{file_name}: class labels must be integers")
    return values.astype(np.int64)


def records_to_matrix(records: list[dict[str, str]], columns: Iterable[str],
                      file_name: str) -> np.ndarray:
    """Numeric columns of CSV records as a float64 matrix ``(rows, len(columns))``.

    A field (surrounding spaces stripped) is a number in ASCII decimal notation
    (:mod:`~torch_geometric_stream.datasets.numbers`) or ``TRUE``/``FALSE`` (any
    case, 1/0).

    Args:
        records (list[dict[str, str]]): rows of :func:`read_csv_records`.
        columns (Iterable[str]): the columns to read, in order.
        file_name (str): the file, for messages.

    Raises:
        DatasetFormatError: for anything else (``1_000``, other scripts' digits,
            an empty field) or a number that is not finite (``nan``, ``inf``),
            naming the file, the data row, the column and the text.
    """
    columns = list(columns)
    out = np.empty((len(records), len(columns)), dtype=np.float64)
    for i, record in enumerate(records):
        texts = [record[column].strip() for column in columns]
        try:
            values = [_BOOLEANS[text.lower()] if text.lower() in _BOOLEANS else float(text)
                      for text in texts]
        except ValueError:
            values = None
        if values is None or not all_numbers(texts):  # the booleans: ASCII, no underscore
            raise _non_number(texts, columns, f"{file_name} data row {i + 1}")
        out[i] = values
    found = first_non_finite(out)
    if found is not None:
        (row, column), _ = found
        raise DatasetFormatError(f"{file_name} data row {row + 1}: column {columns[column]!r} "
                                 f"holds the non-finite value "
                                 f"{records[row][columns[column]].strip()!r}")
    return out


def _non_number(texts: list[str], columns: list[str], where: str) -> DatasetFormatError:
    """The error of the row ``where`` whose ``texts`` (one per column) are not all
    booleans or numbers: its first field that is neither."""
    text, column = next((text, column) for text, column in zip(texts, columns)
                        if text.lower() not in _BOOLEANS and not is_number(text))
    return DatasetFormatError(f"{where}: column {column!r} holds the non-numeric value "
                              f"{text!r}")
