"""A CSV stream read row by row as it is iterated: a file larger than memory, or a
stream that never ends (standard input fed by ``tail -f``, a socket, a sensor).

>>> stream = CSVRowStream("sensors.csv", ["ok", "fault"])        # doctest: +SKIP
>>> stream.num_features, stream.num_classes                       # doctest: +SKIP
(12, 2)
>>> for x, y in stream: ...                                       # doctest: +SKIP

The table is read as :func:`~torch_geometric_stream.datasets.load_stream_file`
reads a CSV (same header rules, same checks of each row, same error messages),
except that nothing is held: the classes are given up front instead of sorted
from all the labels, and a row is checked when it is read.

A file's beginning can be identified and checked: :meth:`CSVRowStream.digest`
is the digest of the text read for the rows yielded so far, and
:meth:`CSVRowStream.expect` has the next iteration check that its first rows are
that text again (a run resumed from a checkpoint reads them again, unlearned).
"""
from __future__ import annotations

import csv
import hashlib
import io
import math
import sys
from contextlib import closing, contextmanager
from pathlib import Path
from typing import (Callable, ContextManager, Generator, Iterable, Iterator, Optional, Sequence,
                    TextIO)

import numpy as np

from torch_geometric_stream.datasets.errors import DatasetFormatError
from torch_geometric_stream.datasets.io import open_text
from torch_geometric_stream.datasets.numbers import is_nan, is_number
from torch_geometric_stream.datasets.stream_file import (_chain_first, _check_exists,
                                                         _check_limit, _column_name, _data_row,
                                                         _first_row_names, _header_names,
                                                         _label_field, _label_index, _narrow_row,
                                                         _not_a_label, _rows, _utf8_lines)
from torch_geometric_stream.validation import check_positive_int

__all__ = ["STDIN", "STDIN_SOURCE", "DIGEST_DIGITS", "CSVRowStream", "class_lookup"]

#: The ``path`` of :class:`CSVRowStream` that reads standard input.
STDIN = "-"
#: The ``source`` of a :class:`CSVRowStream` that reads standard input.
STDIN_SOURCE = "stdin"
#: Hex digits of :meth:`CSVRowStream.digest`.
DIGEST_DIGITS = 16

#: ``(line number, stripped fields)`` of each CSV row that holds something.
Rows = Iterator[tuple[int, list[str]]]
#: The reader of a stream's rows, which :meth:`~CSVRowStream.close` can close.
RowReader = Generator[tuple[int, list[str]], None, None]


def _class_list(names: Iterable[str]) -> list[str]:
    """``names`` as a list; ``TypeError`` for a string, which would be read as one
    class per character."""
    if isinstance(names, str):
        raise TypeError(f"classes must be a sequence of class names, got the string "
                        f"{names!r}")
    return list(names)


def class_lookup(names: Sequence[str]) -> Callable[[str], Optional[int]]:
    """The class id of a label field among ``names`` (id = position in ``names``),
    ``None`` for a label that is none of them. A label matches a name as text, or
    as a number where both are finite numbers (``1.0`` is class ``1``, as
    :func:`~torch_geometric_stream.datasets.load_stream_file` reads labels).

    Args:
        names (Sequence[str]): the class names, in class-id order.

    Returns:
        Callable[[str], Optional[int]]: a label field's class id, or ``None``.

    Raises:
        ValueError: no names, an empty name, a NaN (a missing label, as
            :func:`~torch_geometric_stream.datasets.load_stream_file` reads one),
            an infinity among names that are all numbers (it refuses one in a label
            column of numbers; among words, ``inf`` is a word), or two names of one
            class (as text or as numbers).
        TypeError: a name that is not a string, or ``names`` a string.
    """
    names = _class_list(names)
    if not names:
        raise ValueError("no classes given")
    _check_class_names(names)
    by_text: dict[str, int] = {}
    by_number: dict[Optional[float], int] = {}  # no None key: no number finds no class
    for class_id, name in enumerate(names):
        number = _finite_number(name.strip())
        earlier = by_text.get(name.strip(), by_number.get(number))
        if earlier is not None:
            raise ValueError(f"classes {names[earlier]!r} and {name!r} are one class; "
                             f"give each once")
        by_text[name.strip()] = class_id
        if number is not None:
            by_number[number] = class_id

    def lookup(label: str) -> Optional[int]:
        found = by_text.get(label)
        return found if found is not None else by_number.get(_finite_number(label))

    return lookup


def _check_class_names(names: list[str]) -> None:
    """Refuse a class name that is no string, empty, a NaN, or an infinity among
    names that are all numbers (:func:`class_lookup`)."""
    for class_id, name in enumerate(names):
        if not isinstance(name, str):
            raise TypeError(f"class names must be strings, got {name!r}")
        if not name.strip():
            raise ValueError(f"class {class_id} has an empty name")
        if is_nan(name.strip()):
            raise ValueError(f"class {class_id} is {name!r}, a missing label, not a class")
    if all(is_number(name.strip()) for name in names):
        infinite = [k for k, name in enumerate(names) if _finite_number(name.strip()) is None]
        if infinite:
            raise ValueError(f"class {infinite[0]} is {names[infinite[0]]!r}, not a finite "
                             f"number: a label of numbers must be finite")


def _finite_number(text: str) -> Optional[float]:
    """``text`` as a finite number, ``None`` if it is no number or not finite."""
    if not is_number(text):
        return None
    number = float(text)
    return number if math.isfinite(number) else None


class CSVRowStream:
    r"""A labelled CSV stream, read one row at a time as it is iterated: its
    memory does not grow with the stream.

    The table is a CSV as :func:`~torch_geometric_stream.datasets.load_stream_file`
    reads it (the label in the last column unless ``label_column`` names it, a
    header row allowed, blank lines skipped), but the classes are given: class id
    ``i`` is ``classes[i]``, and a row whose label is none of them is an error
    naming its line. The first row is the header if it holds the label column's
    name, a feature field that is a word (neither a number nor a missing value
    such as ``NA``), no feature that is a number but one that is not empty
    (``Na,Type``), or a label that is neither a class, a number nor a missing
    value (``0,1,label``). The header (or first row) is read when
    the stream is made, to know its width; each further row when iterated.

    A file is read again from its start by each iteration; standard input
    (``path="-"``) once. The file opened to read the head stays open until an
    iteration takes it over; :meth:`close` (or leaving a ``with`` block) closes
    it if none does. :attr:`rows_read` counts the data rows the iteration in
    progress (or the last one) has yielded, and :meth:`digest` identifies the
    text read for them.

    Args:
        path (str or Path): a ``.csv`` or ``.csv.gz`` file, or ``"-"`` for standard input
            (UTF-8 text).
        classes (sequence of str): the class names, in class id order.
        label_column (str, optional): the label column's header name or index.
        limit (int, optional): stop after this many data rows.

    Iterating yields ``(x, y)``: float32 features :math:`(d,)` and a class id.

    Raises:
        DatasetNotFoundError: no such file.
        DatasetFormatError: as :func:`~torch_geometric_stream.datasets.load_stream_file`,
            here or at the row iterated; a label that is none of ``classes``.
        ValueError: a name that is not a CSV file's, bad ``classes`` or ``limit``;
            standard input iterated a second time.
        TypeError: ``classes`` a string, or holding a name that is not one.
    """

    value_range: Optional[tuple[float, float]] = None  # a CSV declares no range
    width: int  # the columns, label included, and the first row's line number,
    _first_line: int  # both set as the first row is read
    _index: int  # the label column's position, and the header (None: the file has none),
    _header: Optional[list[str]]  # both set as the first row is read

    def __init__(self, path: str | Path, classes: Sequence[str], *,
                 label_column: Optional[str] = None, limit: Optional[int] = None) -> None:
        _check_limit(limit)
        classes = _class_list(classes)  # an iterator read once
        self._lookup = class_lookup(classes)
        self.class_names = [name.strip() for name in classes]
        self.label_column, self.limit = label_column, limit
        self._path = None if str(path) == STDIN else Path(path)
        if self._path is None:
            self.name, self.source = "<stdin>", STDIN_SOURCE
        else:
            _check_csv_file(self._path)
            self.name, self.source = self._path.name, str(self._path.resolve())
        self.rows_read = 0
        self._expected: Optional[tuple[int, str]] = None  # checked by the next iteration
        self._head_reader: Optional[RowReader] = None  # set by _open, until an iteration
        self._pending: Optional[Rows] = self._opened()  # the rows after the head, to iterate

    @property
    def num_classes(self) -> int:
        return len(self.class_names)

    @property
    def num_features(self) -> int:
        """Feature dimension :math:`d`: the columns but the label's."""
        return self.width - 1

    def _not_a_label(self, label: str) -> bool:
        """Whether ``label``, none of the classes, is no label at all, as the whole
        file reader refuses it: a NaN, or an infinity where the classes are numbers
        (among words, ``inf`` is a word)."""
        return is_nan(label) or (is_number(label) and _finite_number(label) is None
                                 and all(map(is_number, self.class_names)))

    def __iter__(self) -> Iterator[tuple[np.ndarray, int]]:
        rows, self._pending = self._pending, None
        if rows is None:
            if self._path is None:
                raise ValueError("standard input is read once: a stream from it runs once")
            rows = self._opened()
        reader, self._head_reader = self._head_reader, None  # the iteration's now: it closes it
        assert reader is not None
        with closing(reader):  # as the iteration ends, by an error too (one kept holds it)
            yield from self._data(rows)

    def _data(self, rows: Rows) -> Iterator[tuple[np.ndarray, int]]:
        """The samples of ``rows``, the rows after the head, checked."""
        expected, self._expected = self._expected, None
        first = (self._first_line, self.width)
        self.rows_read = 0
        for line, row in rows:
            values, label = _data_row(line, row, first, self._index, self._header, self.name)
            class_id = self._lookup(label)
            if class_id is None and self._not_a_label(label):
                raise _not_a_label(_label_field(self.name, line, f"column "
                                                f"{_column_name(self._index, self._header)}",
                                                label))
            if class_id is None:
                raise DatasetFormatError(
                    f"{self.name} line {line}: label {label!r} is none of the classes given "
                    f"({', '.join(self.class_names)})")
            self.rows_read += 1
            self._digested = self._text_digest.copy()  # not the text read after the row
            if expected is not None and self.rows_read == expected[0]:
                self._check_beginning(*expected)
            yield values.astype(np.float32), class_id
            if self.rows_read == self.limit:  # not a row further: standard input would wait
                break
        if expected is not None and self.rows_read < expected[0]:
            raise DatasetFormatError(
                f"{self.source}: the stream has {self.rows_read} data rows, not the "
                f"{expected[0]} read before: its beginning changed since")
        if not self.rows_read:
            raise DatasetFormatError(f"{self.name}: the stream has a header and no data rows")

    def close(self) -> None:
        """Close the file opened to read the head, unless an iteration took it
        over (an iteration closes its file when it ends or is released). A file
        stream is read anew by a later iteration; standard input is done."""
        if self._head_reader is not None:  # (exactly while _pending is not None)
            self._pending = None
            self._head_reader.close()
            self._head_reader = None

    def __enter__(self) -> "CSVRowStream":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def digest(self) -> str:
        """The first :data:`DIGEST_DIGITS` hex digits of the SHA-256 of the text
        (decompressed, for a ``.csv.gz``) read for the :attr:`rows_read` data rows
        yielded so far: the header, the blank lines between and those rows; the
        text after the last row yielded is not in it. Other text read for those
        rows (a value edited, a row inserted), or another file, gets another digest."""
        return self._digested.hexdigest()[:DIGEST_DIGITS]

    def expect(self, rows: int, digest: str) -> None:
        """Have the next iteration check that its first ``rows`` data rows are
        the text of ``digest`` (:meth:`digest` of an earlier iteration after
        ``rows`` rows): a resumed run reads them again, and goes on from the same
        rows only. The check is made as the ``rows``-th row is read, before it
        is yielded; a stream that ends before it (not at its limit) fails too.

        Args:
            rows (int): the data rows read before, a positive integer.
            digest (str): :meth:`digest` after those rows.

        Raises:
            ValueError: ``rows`` not a positive integer, or more than the limit.
            DatasetFormatError: in the iteration, the text read for the rows is
                not that of ``digest``, or the stream has fewer rows; the message
                names the file.
        """
        rows = check_positive_int(rows, "rows")
        if self.limit is not None and rows > self.limit:
            raise ValueError(f"{rows} rows were read before, more than limit={self.limit}")
        self._expected = (rows, digest)

    def _check_beginning(self, rows: int, digest: str) -> None:
        """Raise unless the text read for the first ``rows`` rows has ``digest``."""
        if self.digest() != digest:
            raise DatasetFormatError(
                f"{self.source}: its first {rows} data rows are not the text read before "
                f"(digest {self.digest()}, was {digest}): the file's beginning changed since")

    def _opened(self) -> Rows:
        """:meth:`_open`, whose file is closed again if its head is refused."""
        try:
            return self._open()
        except BaseException:
            self.close()
            raise

    def _open(self) -> Rows:
        """Open the stream and read its head: the width, the label column, the
        header if any (which set the attributes); the data rows, to read."""
        self._text_digest, self._digested = hashlib.sha256(), hashlib.sha256()
        rows = self._head_reader = self._read()
        self._first_line, first = next(rows, (0, None))
        if first is None:
            raise DatasetFormatError(f"{self.name}: the file has no rows")
        self.width = len(first)
        if self.width < 2:
            raise _narrow_row(self.name, self._first_line, first[0])
        self._index, named = _label_index(self.label_column, first, self.width, self.name)
        by_features, by_label = _first_row_names(first, self._index)
        by_label = by_label and self._lookup(first[self._index]) is None
        self._header = first if named or by_features or by_label else None
        self.feature_names = None
        if self._header is None:
            return _chain_first(self._first_line, first, rows)
        self.feature_names = _header_names(self.label_column, first, self._index, self.name,
                                           self._first_line)
        return rows

    def _read(self) -> RowReader:
        """The rows of the stream (a generator: the file opens at the first row)."""
        csv.field_size_limit(sys.maxsize)
        try:
            with self._text() as handle:
                reader = csv.reader(_utf8_lines(handle, self.name, self._text_digest))
                try:
                    yield from _rows(reader)
                except csv.Error as error:
                    raise DatasetFormatError(f"{self.name} line {reader.line_num}: not CSV "
                                             f"text ({error})") from None
        except OSError as error:
            raise DatasetFormatError(f"{self.name}: cannot be read ({error})") from None

    def _text(self) -> ContextManager[TextIO]:
        """The stream's text, decoded as the file reader decodes it."""
        options = dict(encoding="utf-8-sig", errors="surrogateescape", newline="")
        if self._path is not None:
            return open_text(self._path, **options)
        return _stdin_text(**options)

    def __repr__(self) -> str:
        return (f"CSVRowStream(name={self.name!r}, num_features={self.num_features}, "
                f"num_classes={self.num_classes})")


@contextmanager
def _stdin_text(encoding: str, errors: str, newline: str) -> Iterator[TextIO]:
    """Standard input's bytes as text, left open when done (detached, not closed)."""
    text = io.TextIOWrapper(sys.stdin.buffer, encoding=encoding, errors=errors, newline=newline)
    try:
        yield text
    finally:
        text.detach()


def _check_csv_file(path: Path) -> None:
    """Raise unless ``path`` is a CSV stream file (``.csv``, ``.csv.gz``) that exists."""
    if not path.name.lower().endswith((".csv", ".csv.gz")):
        raise ValueError(f"{path.name}: a stream read row by row is a CSV file (.csv or "
                         f".csv.gz)")
    _check_exists(path)
