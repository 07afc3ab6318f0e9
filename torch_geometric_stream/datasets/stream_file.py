"""A stream of your own from one file: a CSV table, an ARFF file (Weka's, MOA's and
CapyMOA's format) or a NumPy ``.npz`` archive.

>>> ds = load_stream_file("sensors.csv", label_column="fault")   # doctest: +SKIP
>>> ds = load_stream_file("covtype.arff")                         # doctest: +SKIP
>>> ds = load_stream_file("stream.npz")                           # arrays x and y

Rows are taken in file order, which is the stream's order. Labels may be numbers or
strings; they become class ids ``0..c-1`` in the order of their sorted distinct values
(numbers sorted as numbers; among labels of numbers and words, a CSV label column or an
``.npz`` array of strings, the numbers first, then the words in text order), with the
original values as ``class_names`` (an ARFF's nominal class: its declared values, in
their order). A number, label or feature, is ASCII decimal notation (``-2``, ``.5``,
``1e-3``; NaN and infinities as Python spells them): ``1_000`` or other scripts'
digits, which ``float()`` reads, are words.
"""
from __future__ import annotations

import csv
import functools
import hashlib
import itertools
import re
import sys
import warnings
import zipfile
import zlib
from array import array
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Optional, Sequence, TextIO, cast

import numpy as np

from torch_geometric_stream.datasets import arff
from torch_geometric_stream.datasets.dataset import StreamDataset, encode_labels
from torch_geometric_stream.datasets.errors import DatasetFormatError, DatasetNotFoundError
from torch_geometric_stream.datasets.io import check_header_names, open_text
from torch_geometric_stream.datasets.numbers import (all_numbers, is_missing_value, is_nan,
                                                     is_number)

if TYPE_CHECKING:  # the rows of a csv.reader, with the line it has read up to
    from _csv import Reader as CSVReader

__all__ = ["STREAM_FILE_SUFFIXES", "is_stream_file", "load_stream_file",
           "stream_file_digest"]

#: The file names :func:`load_stream_file` reads, by how they end (any case).
STREAM_FILE_SUFFIXES = (".csv", ".csv.gz", ".npz", ".arff", ".arff.gz")
#: The stream files that are ARFF files, by how their names end (any case).
_ARFF_SUFFIXES = (".arff", ".arff.gz")
#: What a feature that is a missing value (``NA``, an empty field, a NaN) is told, in
#: every stream file.
_MISSING_VALUE = "a missing value: fill in or drop the row first"
#: The largest feature magnitude a stream holds: features are float32.
_FLOAT32_MAX = float(np.finfo(np.float32).max)
#: The bytes of each block of float32 features a table's rows are gathered in.
_FLOAT32_BLOCK_BYTES = 1 << 20
#: Separators of other tables, named when a CSV row is one field holding them.
_OTHER_SEPARATORS = {";": "semicolons", "\t": "tabs", "|": "vertical bars"}
#: A column index: ASCII digits, a sign.
_INDEX = re.compile(r"[+-]?[0-9]+")
#: A label of a stream file as its messages name it, from its position ``k``: its file,
#: line and column, and its text (``"d.csv line 3: column 'y' (the label) holds 'NA'"``,
#: ``"d.npz: y[1] = 'NA'"``).
LabelAt = Callable[[int], str]
#: A label column with more values that occur in one row only than this, and more
#: than half as many as rows, is most likely no label (:func:`_check_label_spread`).
_MANY_CLASSES = 20


def is_stream_file(name: str) -> bool:
    """Whether ``name`` names a file :func:`load_stream_file` reads (by its suffix).

    Args:
        name (str): a file name or path.
    """
    return name.strip().lower().endswith(STREAM_FILE_SUFFIXES)


def stream_file_digest(path: str | Path, label_column: Optional[str] = None,
                       limit: Optional[int] = None, *, name_label_column: bool = True) -> str:
    """The first 8 hex digits of the SHA-256 of the bytes of stream file ``path``
    and of ``label_column``: another file of one name, the file edited, or read
    with another label column, gets another digest; the file found by another
    path, the same one.

    With ``limit``, of a CSV's or an ARFF's text read for its first ``limit`` data
    rows (:func:`load_stream_file` with ``limit`` and ``label_column``) instead of
    the whole file's bytes: the digest of what such a stream is made of, which an
    edit further on leaves as it is. An ``.npz`` archive is read whole, and hashed
    whole. ``name_label_column=False`` leaves ``label_column`` out of the digest
    (it still reads the rows): for an identity that names it apart.

    Args:
        path (str or Path): the stream file.
        label_column (str, optional): the label column it is read with.
            (default: :obj:`None`)
        limit (int, optional): the data rows the digest covers, ``None`` for the
            whole file. (default: :obj:`None`)
        name_label_column (bool, optional): whether ``label_column`` is part of
            the digest. (default: :obj:`True`)

    Raises:
        TypeError, ValueError: ``limit`` not a positive integer.
        FileNotFoundError: no such file.
        DatasetFormatError: ``limit`` given and the rows read are no stream table.
    """
    _check_limit(limit)
    path = Path(path).resolve()
    stat = path.stat()
    label_column = None if label_column is None else label_column.strip()
    named = label_column if name_label_column else None
    if limit is not None and not path.name.lower().endswith(".npz"):
        return _prefix_digest(path, stat.st_size, stat.st_mtime_ns, label_column, limit, named)
    return _file_digest(path, stat.st_size, stat.st_mtime_ns, named)


@functools.lru_cache(maxsize=4)
def _file_digest(path: Path, size: int, modified_ns: int, label_column: Optional[str]) -> str:
    """:func:`stream_file_digest` (``size`` and ``modified_ns`` key the cache: an
    edited file is read again)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return _with_label_column(digest, label_column)


@functools.lru_cache(maxsize=4)
def _prefix_digest(path: Path, size: int, modified_ns: int, label_column: Optional[str],
                   limit: int, named: Optional[str]) -> str:
    """:func:`stream_file_digest` of a CSV or an ARFF read for its first ``limit`` rows
    with ``label_column``, the label column ``named`` in the digest (``None``: none)."""
    digest = hashlib.sha256()
    with warnings.catch_warnings():  # the rows' warnings are the stream's, read to run
        warnings.simplefilter("ignore")
        _table_reader(path)(path, label_column, limit, digest)
    return _with_label_column(digest, named)


def _with_label_column(digest: "hashlib._Hash", label_column: Optional[str]) -> str:
    """The first 8 hex digits of ``digest`` updated with ``label_column``, if any."""
    if label_column is not None:
        digest.update(b"\0" + label_column.encode())
    return digest.hexdigest()[:8]


def _check_limit(limit: Optional[int]) -> None:
    """Raise unless ``limit`` is ``None`` or a positive integer."""
    if limit is None:
        return
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise TypeError(f"limit must be an integer, got {type(limit).__name__}")
    if limit < 1:
        raise ValueError(f"limit must be positive, got {limit}")


def load_stream_file(path: str | Path, *, label_column: Optional[str] = None,
                     limit: Optional[int] = None) -> StreamDataset:
    r"""Read a labelled stream from a CSV file, an ARFF file or an ``.npz`` archive.

    - **CSV** (``.csv``, or gzip-compressed ``.csv.gz``; UTF-8, comma-separated):
      one sample per row, the label in the last column unless ``label_column``
      names it (a header name, or a column index, negative from the end: ``"0"``,
      ``"-1"``; an integer no column has as its index is a header name); every
      other column is a numeric feature. An index that is also another column's
      header name is refused as ambiguous: the error gives each column's other
      spellings (its name, its index from the start or from the end). The first row is the
      header if it holds the label column's name, a feature field that is a word
      (neither a number nor a missing value such as ``NA``, ``?``, an empty field:
      a row of numbers with them is a data row, refused), no feature that is a
      number but one that is not empty (``Na,Type``: a row of missing values alone
      names its columns), or a label that is a word (not a missing value) over a
      label column of numbers.
      Blank lines are skipped. Every row needs its true label: the evaluation
      hides labels itself.
    - **ARFF** (``.arff``, or ``.arff.gz``; UTF-8): a header of ``@attribute NAME
      TYPE`` lines, the type ``numeric`` (``real``, ``integer``) or nominal ``{v1,
      v2, ...}``, then ``@data`` and one sample per row, dense (``1.5,red,yes``) or
      sparse (``{0 1.5, 2 yes}``: omitted values are 0, or a nominal attribute's
      first value); :mod:`~torch_geometric_stream.datasets.arff` reads the syntax.
      The label is the last attribute (MOA's convention) unless ``label_column``
      names another, by name or index as a CSV's. A nominal label's classes are its
      declared values, in their order, rows or not (the class ids do not depend on
      ``limit``); a numeric label is read as a CSV label column of numbers. A
      numeric attribute is a feature; a nominal one is one feature per declared
      value, named ``attr=value``, 1 for the row's value and 0 for the others (a
      two-valued one too; CapyMOA gives nominal features as index codes instead).
      A missing value (``?``), an undeclared nominal value, a ``string``, ``date``
      or ``relational`` attribute, an instance weight, two features of one name
      (attribute ``n=p`` and value ``p`` of attribute ``n``) are refused.
    - **NPZ**: an array ``x`` (or ``X``) :math:`(T, d)` of numbers and an array ``y``
      (or ``Y``) :math:`(T,)` of labels (integers, whole or other floats, strings),
      as ``np.savez("stream.npz", x=x, y=y)`` writes them.

    With ``limit``, the stream is the file's first ``limit`` data rows, as if the
    file ended there: a CSV is read no further than them (and the one row after,
    while the first row may be a header by its label alone: a word over labels
    that are all numbers), an ARFF no further than its header and them, and each
    is checked as far as it is read; an ``.npz`` archive is read whole, its rows
    beyond ``limit`` dropped before any check. The classes are those of the rows
    kept (an ARFF's nominal label: all its declared values).

    Args:
        path (str or Path): the file.
        label_column (str, optional): the label column's header name or index (a
            CSV's), or the label attribute's name or index (an ARFF's).
        limit (int, optional): the number of data rows to keep (default: all).

    Returns:
        The stream, named by the file's name, features raw (float32), no known
        value range.

    Raises:
        DatasetNotFoundError: no such file.
        DatasetFormatError: the content is not such a table: a feature that is not
            a finite float32 number (categorical columns must be encoded first; a
            missing value is named so), an empty or NaN label (an infinity too, among
            labels of numbers), rows of different lengths, a missing label
            column or array, text that is not UTF-8, or no rows; in an ARFF, any of
            the refusals above. Its message names the file, the line (CSV, ARFF) or
            entry (NPZ) and the column or attribute; an ambiguous ``label_column``.
        ValueError: ``label_column`` with an ``.npz`` file, a name that is not a
            stream file's, or a ``limit`` below 1.
        TypeError: a ``limit`` that is not an integer.

    Warns:
        UserWarning: a label that reads as a missing value (``NA``, ``N/A``, ``null``,
            ``?``: a class, as it may be one's name; NaN is refused); a CSV's or an
            ARFF's label column with more than 20 values that occur in one of the
            rows read only, and more than half as many as rows (an ID, a
            measurement: is it the label?).
    """
    _check_limit(limit)
    path = Path(path)
    if not is_stream_file(path.name):
        raise ValueError(f"{path.name} is not a stream file: its name must end in "
                         f"{', '.join(STREAM_FILE_SUFFIXES)}")
    _check_exists(path)
    if path.name.lower().endswith(".npz"):
        if label_column is not None:
            raise ValueError("label_column applies to a CSV or ARFF file; an .npz file "
                             "holds its labels in the array y")
        x, y, class_names, feature_names = _read_npz(path, limit)
    else:
        x, y, class_names, feature_names = _table_reader(path)(path, label_column, limit)
    return StreamDataset(name=path.name, x=x, y=y, num_classes=len(class_names),
                         class_names=class_names, feature_names=feature_names,
                         source=str(path.resolve()))


def _table_reader(path: Path) -> Callable[..., tuple[np.ndarray, np.ndarray, list[str],
                                                     Optional[list[str]]]]:
    """The reader of text stream file ``path``: :func:`_read_arff` or :func:`_read_csv`."""
    return _read_arff if path.name.lower().endswith(_ARFF_SUFFIXES) else _read_csv


def _check_exists(path: Path) -> None:
    """Raise :class:`DatasetNotFoundError` unless the stream file ``path`` is a file."""
    if path.is_dir():
        raise DatasetNotFoundError(f"stream file {path} is a folder, not a file")
    if not path.is_file():
        raise DatasetNotFoundError(f"stream file {path} does not exist")


# -- NPZ -----------------------------------------------------------------------------

def _read_npz(path: Path, limit: Optional[int] = None
              ) -> tuple[np.ndarray, np.ndarray, list[str], None]:
    """The features ``x`` :math:`(T, d)`, class ids :math:`(T,)` and class names of
    an ``.npz`` archive (its first ``limit`` rows if given), checked."""
    try:
        archive = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as error:
        raise DatasetFormatError(f"{path.name}: not a readable .npz archive ({error})") from None
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise DatasetFormatError(f"{path.name}: one .npy array, not an .npz archive of x and y "
                                 f"(write it with np.savez(file, x=x, y=y))")
    with archive:
        x, y = (_npz_array(archive, name, path.name) for name in ("x", "y"))
    if x.ndim != 2 or x.dtype.kind not in "biuf":
        raise DatasetFormatError(f"{path.name}: x must be a (T, d) array of numbers, got shape "
                                 f"{x.shape} and dtype {x.dtype}")
    if y.ndim != 1 or len(y) != len(x) or y.dtype.kind not in "biufUS":
        raise DatasetFormatError(f"{path.name}: y must be ({len(x)},) number or string "
                                 f"labels, got shape {y.shape} and dtype {y.dtype}")
    x, y = x[:limit], y[:limit]
    if not len(x):
        raise DatasetFormatError(f"{path.name}: the stream has no rows")
    if not x.shape[1]:
        raise DatasetFormatError(f"{path.name}: x has no feature columns (shape {x.shape})")
    _check_features(x, path.name)
    return x, *_npz_labels(y, path.name), None


def _npz_array(archive: np.lib.npyio.NpzFile, name: str, file_name: str) -> np.ndarray:
    """Array ``name`` (or its upper-case twin) of ``archive``, read without pickles."""
    keys = [key for key in (name, name.upper()) if key in archive.files]
    if not keys:
        raise DatasetFormatError(f"{file_name}: no array {name!r} (nor {name.upper()!r}); "
                                 f"it holds {sorted(archive.files)}")
    if len(keys) > 1:
        raise DatasetFormatError(f"{file_name}: arrays {keys[0]!r} and {keys[1]!r} both; "
                                 f"keep one")
    try:
        return archive[keys[0]]
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as error:
        raise DatasetFormatError(f"{file_name}: array {keys[0]!r} cannot be read ({error}); "
                                 f"save numbers or strings") from None


def _check_features(x: np.ndarray, file_name: str) -> None:
    """Raise unless every entry of ``x`` :math:`(T, d)` is a finite float32 number."""
    bad = np.argwhere(~(np.abs(x.astype(np.float64)) <= _FLOAT32_MAX))
    if len(bad):
        row, column = map(int, bad[0])
        value = x[row, column].item()
        if np.isnan(value):
            problem = f"is {_MISSING_VALUE}"
        elif np.isfinite(value):
            problem = "is beyond float32's range"
        else:
            problem = "is not a finite number"
        raise DatasetFormatError(f"{file_name}: x[{row}, {column}] = {value!r}"
                                 f"{_first_of(len(bad))} {problem}")


def _first_of(count: int) -> str:
    """`` (the first of <count>)`` where ``count`` entries are bad, else nothing."""
    return f" (the first of {count})" if count > 1 else ""


def _npz_labels(y: np.ndarray, file_name: str) -> tuple[np.ndarray, list[str]]:
    """Class ids :math:`(T,)` and class names of the labels ``y`` :math:`(T,)`:
    strings (bytes decoded) as a CSV label column's (:func:`_label_classes`), each
    stripped of blanks as a CSV field is (an empty one is refused, as a CSV's empty
    label field), floats
    checked finite and whole ones made integers (``1.0`` is class ``1``, as in a CSV),
    other numbers as they are."""
    def at(k: int) -> str:
        return f"{file_name}: y[{k}] = {y[k].item()!r}"

    if y.dtype.kind == "S":
        try:
            y = np.char.decode(y, "utf-8")
        except UnicodeDecodeError as error:
            raise DatasetFormatError(f"{file_name}: y holds bytes that are not UTF-8 "
                                     f"({error})") from None
    if y.dtype.kind == "U":
        labels = np.char.strip(y)
        empty = np.flatnonzero(labels == "")
        if len(empty):
            raise DatasetFormatError(f"{file_name}: y[{empty[0]}] = {y[empty[0]].item()!r} is "
                                     f"empty{_first_of(len(empty))}; every row needs its true "
                                     f"label")
        return _label_classes(labels.tolist(), at)
    return encode_labels(_numbers(y, at) if y.dtype.kind == "f" else y)


def _whole_as_integers(numbers: np.ndarray) -> np.ndarray:
    """Finite float labels as int64 where all are whole numbers int64 holds, else as
    they are: equal labels stay equal either way."""
    whole = np.all(numbers == np.round(numbers)) and np.all(np.abs(numbers) < 2.0 ** 63)
    return numbers.astype(np.int64) if whole else numbers


# -- Features of a CSV or an ARFF ----------------------------------------------------

class _Float32Rows:
    """Rows of features, gathered as float32 as they are read (a CSV's or an ARFF's
    data rows): in blocks of :data:`_FLOAT32_BLOCK_BYTES` joined once at the end,
    they take about twice their float32 array at most (a float64 array a row,
    stacked, then cast, took several times as much; a long, narrow table's rows
    more still)."""

    def __init__(self, width: int) -> None:
        self._width, self._count = width, 0
        self._block_rows = max(1, _FLOAT32_BLOCK_BYTES // (4 * width))
        self._blocks: list[np.ndarray] = []

    def next_row(self) -> np.ndarray:
        """The next row, float32 :math:`(d,)` and unset, to fill (a new block's first
        where the last block is full)."""
        block, row = divmod(self._count, self._block_rows)
        if block == len(self._blocks):
            self._blocks.append(np.empty((self._block_rows, self._width), dtype=np.float32))
        self._count += 1
        return self._blocks[block][row]

    def append(self, values: np.ndarray) -> None:
        """Gather row ``values`` :math:`(d,)` (float64 numbers float32 holds), each
        rounded to float32 as ``astype`` rounds it."""
        self.next_row()[:] = values

    def array(self, start: int = 0, stop: Optional[int] = None) -> np.ndarray:
        """Rows ``start`` to ``stop`` (all by default), at least one, as one float32
        array :math:`(T, d)`."""
        stop = self._count if stop is None else stop
        return np.concatenate([block[max(0, start - first):stop - first] for first, block
                               in zip(range(0, stop, self._block_rows), self._blocks)])


# -- CSV -----------------------------------------------------------------------------

def _read_csv(path: Path, label_column: Optional[str], limit: Optional[int] = None,
              digest: Optional["hashlib._Hash"] = None
              ) -> tuple[np.ndarray, np.ndarray, list[str], Optional[list[str]]]:
    """Features, class ids, class names (:func:`_label_classes`) and feature names
    (``None`` without a header) of a CSV (its first ``limit`` data rows if given),
    read row by row: a large file is held as numbers, not as strings. ``digest``, if
    given, is updated with the text read."""
    csv.field_size_limit(sys.maxsize)
    with _text_lines(path, digest) as lines:
        reader = csv.reader(lines)
        try:
            return _parse_csv(reader, path.name, label_column, limit)
        except csv.Error as error:
            raise DatasetFormatError(f"{path.name} line {reader.line_num}: not CSV text "
                                     f"({error})") from None


@contextmanager
def _text_lines(path: Path, digest: Optional["hashlib._Hash"], save_as: str = "CSV UTF-8"
                ) -> Iterator[Iterator[str]]:
    """The lines of text stream file ``path`` (:func:`_utf8_lines`), for a ``with``
    block in which a read that fails (a damaged .gz: io.open_binary names it) is a
    :class:`DatasetFormatError`."""
    try:
        with open_text(path, encoding="utf-8-sig", errors="surrogateescape",
                       newline="") as handle:
            yield _utf8_lines(handle, path.name, digest, save_as)
    except OSError as error:
        raise DatasetFormatError(f"{path.name}: cannot be read ({error})") from None


def _utf8_lines(handle: TextIO, file_name: str, digest: Optional["hashlib._Hash"],
                save_as: str = "CSV UTF-8") -> Iterator[str]:
    """The lines of ``handle`` (decoded with ``surrogateescape``), each refused
    if it is not UTF-8 as it is read (the error says to save the file ``save_as``):
    a stream read in part is checked as far as it is read. ``digest``, if given,
    is updated with each line."""
    for number, line in enumerate(handle, start=1):
        if not line.isascii():
            try:
                line.encode("utf-8")
            except UnicodeEncodeError:  # an undecodable byte, escaped as a lone surrogate
                raise DatasetFormatError(f"{file_name} line {number}: not UTF-8 text (save "
                                         f"the file as {save_as})") from None
        if digest is not None:
            digest.update(line.encode("utf-8"))
        yield line


def _rows(reader: CSVReader) -> Iterator[tuple[int, list[str]]]:
    """``(line number, stripped fields)`` of each row that holds something (blank
    lines, and rows of empty fields a spreadsheet leaves, are skipped)."""
    for row in reader:
        fields = [field.strip() for field in row]
        if any(fields):
            yield reader.line_num, fields


def _parse_csv(reader: CSVReader, file_name: str, label_column: Optional[str],
               limit: Optional[int] = None
               ) -> tuple[np.ndarray, np.ndarray, list[str], Optional[list[str]]]:
    """:func:`_read_csv` on the rows of ``reader`` (a ``csv.reader``), read no
    further than the first ``limit`` data rows (if given) need."""
    rows = _rows(reader)
    first_line, first = next(rows, (0, None))
    if first is None:
        raise DatasetFormatError(f"{file_name}: the file has no rows")
    width = len(first)
    if width < 2:
        raise _narrow_row(file_name, first_line, first[0])
    index, named = _label_index(label_column, first, width, file_name)
    by_features, by_label = _first_row_names(first, index)
    header = first if named or by_features else None
    names = None if header is None else _header_names(label_column, header, index, file_name,
                                                      first_line)
    data = rows if header is not None else _chain_first(first_line, first, rows)
    # Without a header so far, the first row is the header if its label is a word
    # over labels that are all numbers (``0,1,label`` as ``pandas.DataFrame.to_csv``
    # writes unnamed features): while it may be, one row more than ``limit`` is read.
    header_by_label = header is None and by_label
    features, labels, lines = _Float32Rows(width - 1), [], array("q")
    for line, row in data:
        values, label = _data_row(line, row, (first_line, width), index, header, file_name)
        features.append(values)
        labels.append(label)
        lines.append(line)
        header_by_label = header_by_label and (len(labels) == 1 or is_number(label))
        if limit is not None and len(labels) >= limit + header_by_label:
            break
    start = int(header_by_label and len(labels) > 1)  # the first row, the header
    if start:
        header = first
        names = _header_names(label_column, header, index, file_name, first_line)
    stop = None if limit is None else start + limit
    labels, lines = labels[start:stop], lines[start:stop]
    if not labels:
        raise DatasetFormatError(f"{file_name}: the file has a header and no data rows")
    column = f"column {_column_name(index, header)}"
    y, class_names = _label_classes(labels, _csv_label_at(labels, lines, file_name, column))
    _check_label_spread(y, file_name, column)
    return features.array(start, start + len(labels)), y, class_names, names


def _first_row_names(first: list[str], index: int) -> tuple[bool, bool]:
    """How the first row ``first`` (the label at ``index``) may be a header, the
    one rule of both CSV readers: ``(by its features, by its label)``.

    By its features, it is the header if one of them is a word (neither a number
    nor a missing value such as ``NA``, ``?``, empty), or if none is a number and
    one is not empty: a row of missing values alone (``Na,Type``: a feature named
    for sodium; ``None,null,label``) names its columns. A row of numbers whose
    other features are missing values (``NA,1.0,x``) is a data row, refused for
    them. By its label, it may be the header if that is a word (neither a number
    nor a missing value: ``1.5,2.5,?`` is a data row with a missing label), which
    the reader decides by the labels or classes (``0,1,label``)."""
    features = [field for column, field in enumerate(first) if column != index]
    numbers = any(map(is_number, features))
    by_features = any(not is_number(field) and not is_missing_value(field)
                      for field in features) or (not numbers and any(features))
    label = first[index]
    return by_features, not is_number(label) and not is_missing_value(label)


def _data_row(line: int, row: list[str], first: tuple[int, int], index: int,
              header: Optional[list[str]], file_name: str) -> tuple[np.ndarray, str]:
    """The feature values (float64 :math:`(d,)`) and the label field of data ``row``
    on ``line``, checked: as wide as the first row (``first``: its line and width),
    a label, features that are finite float32 numbers."""
    first_line, width = first
    if len(row) != width:
        raise DatasetFormatError(f"{file_name} line {line}: {len(row)} fields, line "
                                 f"{first_line} has {width}")
    label, fields = row[index], row[:index] + row[index + 1:]
    if not label:
        raise DatasetFormatError(f"{file_name} line {line}: column "
                                 f"{_column_name(index, header)} (the label) is empty; "
                                 f"every row needs its true label")
    return _feature_values(fields, file_name, line, index, header), label


def _header_names(label_column: Optional[str], header: list[str], index: int,
                  file_name: str, line: int) -> list[str]:
    """The feature names of ``header`` (on ``line``; the label at ``index``, picked
    by ``label_column``), checked: no name given twice, a label column that is
    unambiguous, each feature named."""
    check_header_names(header, file_name, line)
    _check_unambiguous(label_column, header, index, file_name)
    return _feature_names(header, index, file_name, line)


def _feature_names(header: list[str], index: int, file_name: str, line: int) -> list[str]:
    """The header's feature names (the label at ``index`` taken out), each given: a
    column without a name is most often an index, as ``pandas.DataFrame.to_csv``
    writes one by default, whose row numbers would be learned as a feature."""
    unnamed = [column for column, name in enumerate(header) if not name and column != index]
    if unnamed:
        raise DatasetFormatError(
            f"{file_name} line {line}: column {unnamed[0] + 1} has no name in the header; "
            f"if it is an index (pandas writes one unless to_csv(..., index=False)), "
            f"drop it, else name it")
    return [name for column, name in enumerate(header) if column != index]


def _chain_first(line: int, first: list[str], rows: Iterator[tuple[int, list[str]]]
                 ) -> Iterator[tuple[int, list[str]]]:
    """The first row, a data row, before the others."""
    yield line, first
    yield from rows


def _narrow_row(file_name: str, line: int, field: str) -> DatasetFormatError:
    """The error of a first row of one field: a table of other separators, or no features."""
    separator = _separator_in(field)
    if separator is not None:
        return DatasetFormatError(f"{file_name} line {line}: one field, separated by "
                                  f"{separator}; a stream file's fields are separated by "
                                  f"commas (save it as comma-separated)")
    return DatasetFormatError(f"{file_name} line {line}: a row needs a feature and a label, "
                              f"this one has 1 field")


def _is_index(text: str) -> bool:
    """Whether ``text`` is a column index (:data:`_INDEX`), which ``int`` reads."""
    return _INDEX.fullmatch(text) is not None


def _feature_value_ok(text: str) -> bool:
    """Whether ``text`` is a finite number that float32 holds."""
    return is_number(text) and abs(float(text)) <= _FLOAT32_MAX


def _feature_values(fields: list[str], file_name: str, line: int, index: int,
                    header: Optional[list[str]]) -> np.ndarray:
    """A row's feature ``fields`` (the label at ``index`` taken out) as float64 :math:`(d,)`."""
    values = _float32_numbers(fields)
    if values is None:
        raise _bad_field(file_name, line, fields, index, header)
    return values


def _float32_numbers(fields: list[str]) -> Optional[np.ndarray]:
    """``fields`` as float64 :math:`(d,)` if each is a finite number that float32
    holds (:func:`_feature_value_ok`), else ``None``."""
    try:
        values = np.array(fields, dtype=np.float64)
    except ValueError:
        return None
    if not all_numbers(fields) or not np.all(np.abs(values) <= _FLOAT32_MAX):
        return None
    return values


def _column_name(column: int, header: Optional[list[str]]) -> str:
    """Column ``column`` of the file (0-based): its header name, else its number from 1."""
    return repr(header[column]) if header is not None else str(column + 1)


def _bad_field(file_name: str, line: int, features: list[str], index: int,
               header: Optional[list[str]]) -> DatasetFormatError:
    """The error of the row on ``line``, whose ``features`` (the label at ``index``
    taken out) are not all finite float32 numbers: its first bad field, by column."""
    column = next(column for column, field in enumerate(features)
                  if not _feature_value_ok(field))
    name = _column_name(column + (column >= index), header)  # the label is no feature
    return DatasetFormatError(f"{file_name} line {line}: column {name} "
                              f"{_field_problem(features[column])}")


def _field_problem(value: str, word: str = "encode categorical features as numbers first"
                   ) -> str:
    """What is wrong with feature field ``value``, which is no finite float32 number
    (``word``: what to do where it is a word)."""
    if is_missing_value(value):
        problem = "is empty" if not value else f"holds {value!r}"
        return f"{problem} ({_MISSING_VALUE})"
    separator = _separator_in(value)
    if separator is not None:
        return f"holds {value!r}, not a number (fields are separated by commas, not {separator})"
    if not is_number(value):
        return f"holds {value!r}, not a number ({word})"
    if np.isfinite(float(value)):
        return f"holds {value!r}, beyond float32's range (±{_FLOAT32_MAX:.4g})"
    return f"holds {value!r}, not a finite number"


def _separator_in(text: str) -> Optional[str]:
    """The name of another table's separator found in ``text``, if any."""
    return next((name for mark, name in _OTHER_SEPARATORS.items() if mark in text), None)


def _label_classes(labels: Sequence[str], at: LabelAt) -> tuple[np.ndarray, list[str]]:
    """Text labels :math:`(T,)` (a CSV label column, an ``.npz`` array of strings) as
    class ids :math:`(T,)` and class names (:func:`encode_labels`): labels that are all
    numbers (each finite, else the first that is not, named by ``at``, is refused: a NaN
    is a missing label) as numbers, whole ones as integers; words in text order; both,
    the (finite) numbers' classes first, as if they were alone, then the words'. A NaN
    among words is refused too; another missing value as tables write one (``NA``,
    ``null``, ``?``) is a class, with a warning (:func:`_check_missing_labels`)."""
    if all(map(is_number, labels)):
        return encode_labels(_numbers(labels, at))
    y, texts = encode_labels(np.array(labels, dtype=str))  # distinct labels, in text order
    _check_missing_labels(y, texts, at)
    numeric = np.array([is_number(text) and np.isfinite(float(text)) for text in texts],
                       dtype=bool)
    if not numeric.any():
        return y, texts
    number_ids, number_names = encode_labels(
        _whole_as_integers(np.array([text for text, number in zip(texts, numeric) if number],
                                    dtype=np.float64)))
    class_of_text = np.empty(len(texts), dtype=np.int64)
    class_of_text[numeric] = number_ids
    class_of_text[~numeric] = len(number_names) + np.arange(np.count_nonzero(~numeric))
    words = [text for text, number in zip(texts, numeric) if not number]
    return class_of_text[y], number_names + words


def _check_missing_labels(y: np.ndarray, texts: list[str], at: LabelAt) -> None:
    """Check labels :math:`(T,)` of words, class ids ``y`` of the distinct ``texts``, for
    missing values as tables write them (:func:`~.numbers.is_missing_value`): refuse a
    NaN, the first named by ``at``, as a label of numbers is refused; warn of the first
    other one (``NA``, ``null``, ``?``), which may be a class's name."""
    missing = [k for k, text in enumerate(texts) if is_missing_value(text)]
    if not missing:
        return
    _check_class_names(y, texts, at)
    rows = np.flatnonzero(np.isin(y, missing))
    warnings.warn(f"{at(rows[0])}{_first_of(len(rows))}, which reads as a missing value: it "
                  f"is learned as a class; if it marks an unknown label, fill it in or drop "
                  f"the row first")


def _check_class_names(y: np.ndarray, texts: Sequence[str], at: LabelAt) -> None:
    """Refuse the labels :math:`(T,)`, class ids ``y`` of the class names ``texts``,
    where a row's class is no label (the first row named by ``at``): a NaN (a missing
    label), and where the classes of the rows are all numbers, an infinity, as labels
    of numbers are refused (:func:`_numbers`). Names no row holds are not read."""
    used = np.unique(y).tolist()
    numbers = all(is_number(texts[k]) for k in used)
    bad = [k for k in used if is_nan(texts[k])
           or numbers and not np.isfinite(float(texts[k]))]
    if bad:
        rows = np.flatnonzero(np.isin(y, bad))
        raise _not_a_label(at(rows[0]), len(rows))


def _numbers(labels: Sequence[str] | np.ndarray, at: LabelAt) -> np.ndarray:
    """Labels :math:`(T,)`, each a number (or its text), as integers where all are
    whole numbers, else floats; the first not finite (a NaN is a missing label),
    named by ``at``, is refused."""
    numbers = np.asarray(labels, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(numbers))
    if len(bad):
        raise _not_a_label(at(bad[0]), len(bad))
    return _whole_as_integers(numbers)


def _not_a_label(label: str, count: int = 1) -> DatasetFormatError:
    """The error of a ``label`` (:data:`LabelAt`) that is no label, the first of
    ``count``: a NaN, an infinity."""
    return DatasetFormatError(f"{label}, not a label{_first_of(count)}; every row needs its "
                              f"true label")


def _csv_label_at(labels: list[str], lines: array, file_name: str, column: str) -> LabelAt:
    """The :data:`LabelAt` of CSV (or ARFF) label fields read from ``lines``: its
    line, ``column`` (``column 3``, ``attribute 'y'``) and text."""
    return lambda k: _label_field(file_name, lines[k], column, labels[k])


def _label_field(file_name: str, line: int, column: str, label: str) -> str:
    """Label field ``label`` of ``column`` (``column 3``, ``attribute 'y'``) on
    ``line`` as messages name it (:data:`LabelAt`)."""
    return f"{file_name} line {line}: {column} (the label) holds {label!r}"


def _check_label_spread(y: np.ndarray, file_name: str, column: str) -> None:
    """Warn when the label ``column`` (``column 3``, ``attribute 'y'``) of the class
    ids ``y`` :math:`(T,)` has more than :data:`_MANY_CLASSES` values that occur in
    one row only, and more than half as many as rows (over ``T / 2``): a measurement
    or an ID, most likely, read as one class per row or nearly, which a run learns
    nothing from. Classes seen more than once do not count, so that a prefix
    (``--limit``) of a stream of many classes passes: 26 letters in 40 rows have 12
    seen once. 20 such values in 20 rows, 21 in 42, pass."""
    counts = np.bincount(y)
    once = np.count_nonzero(counts == 1)
    if once > _MANY_CLASSES and 2 * once > len(y):
        warnings.warn(f"{file_name}: {column} (the label) has {np.count_nonzero(counts)} "
                      f"distinct values in {len(y)} rows, {once} of them in one row only: "
                      f"is it the label? (label_column, --label-column on the command line, "
                      f"picks another)")


def _label_index(label_column: Optional[str], first_row: list[str], width: int,
                 file_name: str) -> tuple[int, bool]:
    """The position of the label column, and whether it was picked by its name in
    the first row (which is then the header): the last by default; an integer is a
    position (negative from the end), or a name where it is no column's position;
    other text, a name. An integer that is also another column's header name is
    refused once the header is known (:func:`_check_unambiguous`)."""
    if label_column is None:
        return width - 1, False
    label_column = label_column.strip()
    if _is_index(label_column):
        index = int(label_column)
        if -width <= index < width:
            return index % width, False
        if label_column not in first_row:
            raise DatasetFormatError(f"{file_name}: label column {index} is outside the "
                                     f"{width} columns (0 to {width - 1}, or -{width} to -1 "
                                     f"from the end)")
    count = first_row.count(label_column)
    if count != 1:
        problem = "no column" if not count else f"{count} columns named"
        raise DatasetFormatError(f"{file_name}: {problem} {label_column!r} in the header "
                                 f"{first_row}")
    return first_row.index(label_column), True


def _check_unambiguous(label_column: Optional[str], header: list[str], index: int,
                       file_name: str) -> None:
    """Raise if ``label_column``, read as the position ``index``, is also the name of
    another column of ``header``: the error gives each column's other spellings."""
    if label_column is None:
        return
    label_column = label_column.strip()
    others = [column for column, name in enumerate(header)
              if name == label_column and column != index]
    if not others:
        return
    choices = ", ".join(_choice(column, header) for column in [index, *others])
    raise DatasetFormatError(f"{file_name}: label column {label_column} is ambiguous: the "
                             f"position of column {header[index]!r} and the name of another "
                             f"in the header; give {choices}")


def _choice(column: int, header: list[str]) -> str:
    """How to pick ``column`` of ``header``: its spellings, else a new name."""
    spellings = _spellings(column, header)
    described = f"column {header[column]!r} (position {column})"
    return f"{' or '.join(spellings)} for {described}" if spellings else f"{described} a new name"


def _spellings(column: int, header: list[str]) -> list[str]:
    """The label columns that pick ``column`` of ``header`` and no other: its name, its
    position, its position from the end (names quoted)."""
    width = len(header)
    spellings = []
    for text in dict.fromkeys([header[column], str(column), str(column - width)]):
        try:
            index, _ = _label_index(text, header, width, "")
        except DatasetFormatError:  # no column, or a name of several
            continue
        named_elsewhere = any(name == text for other, name in enumerate(header)
                              if other != column)
        if text and index == column and not named_elsewhere:
            spellings.append(text if _is_index(text) else repr(text))
    return spellings


# -- ARFF ----------------------------------------------------------------------------

def _read_arff(path: Path, label_column: Optional[str], limit: Optional[int] = None,
               digest: Optional["hashlib._Hash"] = None
               ) -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    """Features, class ids, class names and feature names of an ARFF file (its
    header and first ``limit`` data rows if given, read no further), read row by
    row (:class:`_ArffTable`). ``digest``, if given, is updated with the text read."""
    with _text_lines(path, digest, "UTF-8") as text:
        lines = enumerate(text, start=1)
        attributes = arff.read_header(lines, path.name)
        table = _ArffTable(attributes, _attribute_index(label_column, attributes, path.name),
                           path.name)
        for line, values in itertools.islice(arff.data_rows(lines, attributes, path.name),
                                             limit):
            table.add(line, values)
    return table.arrays()


def _attribute_index(label_column: Optional[str], attributes: list[arff.Attribute],
                     file_name: str) -> int:
    """The position of the label attribute: the last by default, else the one
    ``label_column`` names, by name or index as a CSV's label column."""
    names = [attribute.name for attribute in attributes]
    if len(names) < 2:
        raise DatasetFormatError(f"{file_name}: the header declares {len(names)} "
                                 f"attribute{'s' * (len(names) != 1)}; a stream needs a "
                                 f"feature and a label")
    index, _ = _label_index(label_column, names, len(names), file_name)
    _check_unambiguous(label_column, names, index, file_name)
    return index


def _arff_feature_names(attribute: arff.Attribute) -> list[str]:
    """The names of the features of ``attribute``: its own (numeric), or
    ``attr=value`` for each value it declares (nominal)."""
    if attribute.values is None:
        return [attribute.name]
    return [f"{attribute.name}={value}" for value in attribute.values]


def _check_arff_feature_names(attributes: list[arff.Attribute], file_name: str) -> None:
    """Raise if two of the feature ``attributes`` name a feature alike (attribute
    ``n=p`` and value ``p`` of attribute ``n``), naming both and their lines."""
    named: dict[str, arff.Attribute] = {}
    for attribute in attributes:
        for name in _arff_feature_names(attribute):
            first = named.setdefault(name, attribute)
            if first is not attribute:
                raise DatasetFormatError(
                    f"{file_name} line {attribute.line}: attribute {attribute.name!r} and "
                    f"attribute {first.name!r} (line {first.line}) both name a feature "
                    f"{name!r} (a nominal attribute's features are named attr=value); "
                    f"rename one of them")


class _ArffTable:
    """The features and labels of an ARFF file's data rows, gathered as they are
    read: a numeric attribute is one feature, a nominal one a feature per declared
    value (``attr=value``; 1 for the row's value, 0 for the others); the label
    attribute (at ``index``) a class id, its declared value's position (nominal),
    or a number (numeric), whose classes are sorted at the end as a CSV's.

    The features are float32 from the first (each number read as float64, then
    rounded), gathered in :class:`_Float32Rows`: a table holds about twice its
    features at most. Each row starts as the default row, that of a sparse row
    that omits every value, and each value the row gives is set: a sparse row
    costs the values it gives."""

    def __init__(self, attributes: list[arff.Attribute], index: int, file_name: str) -> None:
        self._attributes, self._index, self._file_name = attributes, index, file_name
        self._codes = [None if attribute.values is None
                       else {value: code for code, value in enumerate(attribute.values)}
                       for attribute in attributes]
        self.feature_names: list[str] = []
        self._columns: dict[int, int] = {}  # a numeric feature's position: its column
        self._firsts: dict[int, int] = {}  # a nominal feature's position: its first column
        for position, attribute in enumerate(attributes):
            if position == index:
                continue
            (self._columns if attribute.values is None else self._firsts)[position] = len(
                self.feature_names)
            self.feature_names += _arff_feature_names(attribute)
        _check_arff_feature_names([attribute for position, attribute in enumerate(attributes)
                                   if position != index], file_name)
        self._numeric, self._nominal = list(self._columns), list(self._firsts)
        self._numeric_columns = np.array(list(self._columns.values()), dtype=np.intp)
        self._omitted: list[Optional[str]] = [arff.omitted_value(attribute)
                                              for attribute in attributes]
        self._default = np.zeros(len(self.feature_names), dtype=np.float32)
        self._set(self._default, self._omitted, self._numeric, self._numeric_columns,
                  self._nominal, file_name)
        self._rows = _Float32Rows(len(self.feature_names))
        self._labels: list[int | str] = []
        self._lines = array("q")

    def add(self, line: int, values: arff.Values) -> None:
        """Gather data row ``values`` (:func:`~.arff.data_rows`) read from ``line``."""
        where = f"{self._file_name} line {line}"
        if isinstance(values, dict):  # a sparse row: the values it gives
            given = sorted(values)
            numeric = [position for position in given if position in self._columns]
            columns = np.array([self._columns[position] for position in numeric],
                               dtype=np.intp)
            nominal = [position for position in given if position in self._firsts]
            label = values.get(self._index, self._omitted[self._index])
        else:  # a dense row: every attribute, in the columns found once
            numeric, columns, nominal = self._numeric, self._numeric_columns, self._nominal
            label = values[self._index]
        row = self._rows.next_row()
        row[:] = self._default
        self._set(row, values, numeric, columns, nominal, where)
        self._labels.append(self._label(label, where))
        self._lines.append(line)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
        """The features, class ids, class names and feature names of the rows added."""
        if not self._labels:
            raise DatasetFormatError(f"{self._file_name}: the file has an @data line and no "
                                     f"data rows")
        x = self._rows.array()
        label = self._attributes[self._index]
        column = f"attribute {label.name!r}"
        if label.values is not None:
            y, class_names = np.array(self._labels, dtype=np.int64), list(label.values)
            _check_class_names(y, class_names, lambda k: _label_field(
                self._file_name, self._lines[k], column, class_names[y[k]]))
        else:
            texts = cast("list[str]", self._labels)  # a numeric label's: its numbers' texts
            y, class_names = _label_classes(texts, _csv_label_at(texts, self._lines,
                                                                 self._file_name, column))
        _check_label_spread(y, self._file_name, column)
        return x, y, class_names, self.feature_names

    def _set(self, row: np.ndarray, values: arff.Values, numeric: list[int],
             columns: np.ndarray, nominal: list[int], where: str) -> None:
        """Set the features of the ``numeric`` attributes (positions, in order; their
        ``columns``) and the ``nominal`` ones of ``values`` in ``row``, which holds the
        default row's (a nominal attribute's first value's 1): raise on the first
        value that is no feature's."""
        if numeric:
            numbers = _float32_numbers([values[position] or "" for position in numeric])
            if numbers is None:
                raise self._bad_number(values, numeric, where)
            row[columns] = numbers
        for position in nominal:
            first = self._firsts[position]
            row[first] = 0.0
            row[first + self._code(position, values[position], where)] = 1.0

    def _label(self, value: Optional[str], where: str) -> int | str:
        """The label ``value``: its class id (nominal) or its number's text (numeric)."""
        if self._codes[self._index] is not None:
            return self._code(self._index, value, where)
        if not value:
            raise self._missing(self._index, value, where)
        if not is_number(value):
            raise DatasetFormatError(f"{where}: {self._named(self._index)} holds {value!r}, "
                                     f"not a number (it is declared numeric)")
        return value

    def _code(self, position: int, value: Optional[str], where: str) -> int:
        """The position of ``value`` among the values nominal attribute ``position`` declares."""
        codes = self._codes[position]
        code = None if codes is None or value is None else codes.get(value)
        if code is not None:
            return code
        if not value:
            raise self._missing(position, value, where)
        declared = ", ".join(self._attributes[position].values or ())
        raise DatasetFormatError(f"{where}: {self._named(position)} holds {value!r}, which it "
                                 f"does not declare ({{{declared}}})")

    def _bad_number(self, values: arff.Values, numeric: list[int], where: str
                    ) -> DatasetFormatError:
        """The error of the row ``values`` whose ``numeric`` features (positions, in
        order) are not all finite float32 numbers: its first bad one."""
        position = next(position for position in numeric
                        if not _feature_value_ok(values[position] or ""))
        value = values[position]
        if not value:
            return self._missing(position, value, where)
        return DatasetFormatError(f"{where}: {self._named(position)} "
                                  f"{_field_problem(value, 'it is declared numeric')}")

    def _missing(self, position: int, value: Optional[str], where: str) -> DatasetFormatError:
        """The error of the missing (``None``, ``?``) or empty ``value`` of attribute
        ``position``."""
        problem = "is missing (?)" if value is None else "is empty"
        remedy = ("; every row needs its true label" if position == self._index
                  else f" ({_MISSING_VALUE})")
        return DatasetFormatError(f"{where}: {self._named(position)} {problem}{remedy}")

    def _named(self, position: int) -> str:
        """Attribute ``position`` as an error names it (``attribute 'y' (the label)``)."""
        label = " (the label)" if position == self._index else ""
        return f"attribute {self._attributes[position].name!r}{label}"
