"""The text of an ARFF file (the format of Weka, MOA and CapyMOA), read line by line:
the header's attributes, then each data row as the texts of its values.

>>> lines = enumerate(open("stream.arff"), start=1)              # doctest: +SKIP
>>> attributes = read_header(lines, "stream.arff")  # up to @data  # doctest: +SKIP
>>> for line, values in data_rows(lines, attributes, "stream.arff"): ...  # doctest: +SKIP

A sparse row's values are those it gives, by attribute index: each it omits is
:func:`omitted_value`, which its reader fills in (a row of many attributes and few
values is read in the time of its values).

Keywords (``@relation``, ``@attribute``, ``@data``, the types) are read in any case;
a name or a value may be quoted with ``'`` or ``"`` (a backslash escapes the next
character; ``\\n``, ``\\t``, ``\\r`` are a newline, a tab, a carriage return); an
unquoted ``%`` starts a comment, to the line's end; blank lines are skipped. An
attribute is numeric (``numeric``, ``real``, ``integer``) or nominal (``{v1, v2,
...}``); ``string``, ``date`` and ``relational`` ones are refused. A data row is
dense (``1.5,red,yes``) or sparse (``{0 1.5, 2 yes}``: omitted values are ``0`` for a
numeric attribute and the first declared value for a nominal one); instance weights
(``{w}`` after a row) are refused. Numbers are left as text: their reader checks them.
"""
from __future__ import annotations

import re
from typing import Iterator, NamedTuple, Optional, Union

from torch_geometric_stream.datasets.errors import DatasetFormatError

__all__ = ["Attribute", "Values", "read_header", "data_rows", "omitted_value"]

#: ``(line number, text)`` of each line of the file, from its first.
Lines = Iterator[tuple[int, str]]
#: The values of a data row: a dense row's, one per attribute; a sparse row's, those it
#: gives, by attribute index. ``None`` is a missing value (an unquoted ``?``).
Values = Union[list[Optional[str]], dict[int, Optional[str]]]

#: One token of a line after blanks: a quoted text, a mark, a word, the line's end
#: (or a comment to it), or a quote never closed.
_TOKEN = re.compile(r"""\s*(?:
      (?P<quoted>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
    | (?P<mark>[{},])
    | (?P<word>[^\s{},%'"]+)
    | (?P<end>%.*|\Z)
    | (?P<open>['"]))""", re.VERBOSE | re.DOTALL)
#: A backslash escape in a quoted text, and the characters of those that are no letter.
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r"}
#: The spaces a text of tokens has after ``{`` and before ``}`` and ``,``, which are none.
_MARK_SPACE = re.compile(r"(?<=\{) | (?=[},])")
#: The types of a numeric attribute, and those refused (lower case).
_NUMERIC_TYPES = ("numeric", "real", "integer")
_REFUSED_TYPES = ("string", "date", "relational")
#: A dense row of plain values (no quotes, braces, comment, nor blanks within a value),
#: which splitting at its commas reads as its tokens do, and faster.
#: No two of its parts match the same text, so a line that is no such row fails in
#: linear time (``\s*X*(?:\s*,\s*X*)*\s*``, X a value's character, reads the same rows
#: but backtracks exponentially on many empty values with blanks around their commas).
_PLAIN_ROW = re.compile(r"\s*(?:[^'\"{}%\s,]+\s*)?(?:,\s*(?:[^'\"{}%\s,]+\s*)?)*")
#: A sparse row's attribute index.
_SPARSE_INDEX = re.compile(r"[0-9]+")


class Attribute(NamedTuple):
    """An attribute of the header: its name, its declared values (``None`` for a
    numeric one) and the line that declares it."""
    name: str
    values: Optional[tuple[str, ...]]
    line: int


class _Token(NamedTuple):
    """A token: ``kind`` is ``"quoted"`` (``text`` unquoted and unescaped),
    ``"word"``, or the mark itself (``"{"``, ``"}"``, ``","``)."""
    kind: str
    text: str


def read_header(lines: Lines, file_name: str) -> list[Attribute]:
    """The attributes the header of ``lines`` declares, read up to its ``@data``
    line (the rows are the lines after it).

    Args:
        lines (Iterator[tuple[int, str]]): the file's ``(line number, text)``
            pairs (:data:`Lines`), consumed up to the ``@data`` line.
        file_name (str): the file's name, as the errors give it.

    Raises:
        DatasetFormatError: a line that is no header line, an attribute of a type
            refused or unknown, a name declared twice, or no ``@data`` line.
    """
    attributes: dict[str, Attribute] = {}
    for number, line in lines:
        where = f"{file_name} line {number}"
        tokens = _tokens(line, where)
        keyword = tokens[0].text.lower() if tokens and tokens[0].kind == "word" else None
        if not tokens or keyword == "@relation":
            continue
        if keyword == "@data":
            if len(tokens) > 1:
                raise DatasetFormatError(f"{where}: text after @data; the data rows start on "
                                         f"the next line")
            return list(attributes.values())
        if keyword != "@attribute":
            raise DatasetFormatError(f"{where}: {_shown(tokens)} is no header line "
                                     f"(@relation, @attribute or @data)")
        attribute = _attribute(tokens[1:], where, number)
        if attribute.name in attributes:
            raise DatasetFormatError(f"{where}: attribute {attribute.name!r} is declared again "
                                     f"(first on line {attributes[attribute.name].line}); give "
                                     f"each attribute its own name")
        attributes[attribute.name] = attribute
    raise DatasetFormatError(f"{file_name}: no @data line; an ARFF header ends with @data, "
                             f"the data rows after it")


def data_rows(lines: Lines, attributes: list[Attribute], file_name: str
              ) -> Iterator[tuple[int, Values]]:
    """``(line number, values)`` of each data row of ``lines`` (those after the
    header), read as they are iterated: a dense row's text of each attribute, a
    sparse row's of each attribute it gives (:data:`Values`); ``None`` for a missing
    value (an unquoted ``?``), ``""`` for an empty one.

    Args:
        lines (Iterator[tuple[int, str]]): the file's ``(line number, text)``
            pairs after the ``@data`` line (:data:`Lines`).
        attributes (list[Attribute]): the attributes :func:`read_header` read.
        file_name (str): the file's name, as the errors give it.

    Raises:
        DatasetFormatError: a row that is not as wide as the header, a sparse index
            that is not an attribute's or is given twice, an instance weight.
    """
    for number, line in lines:
        if not line.strip():
            continue
        if _PLAIN_ROW.fullmatch(line):
            yield number, _plain_row(line, len(attributes), f"{file_name} line {number}")
            continue
        where = f"{file_name} line {number}"
        tokens = _tokens(line, where)
        if not tokens:
            continue
        if tokens[0].kind == "{":
            yield number, _sparse_row(tokens, attributes, where)
        else:
            yield number, _dense_row(tokens, len(attributes), where)


def omitted_value(attribute: Attribute) -> str:
    """The value of ``attribute`` in a sparse row that omits it.

    Args:
        attribute (Attribute): an attribute of the header.

    Returns:
        str: ``"0"`` for a numeric attribute, its first declared value for a
        nominal one.
    """
    return "0" if attribute.values is None else attribute.values[0]


def _tokens(line: str, where: str) -> list[_Token]:
    """The tokens of ``line`` (on ``where``), up to its end or a comment."""
    tokens: list[_Token] = []
    position = 0
    while True:
        match = _TOKEN.match(line, position)
        assert match is not None and match.lastgroup is not None  # one group matches always
        kind = match.lastgroup
        if kind == "end":
            return tokens
        if kind == "open":
            raise DatasetFormatError(f"{where}: the quote {match['open']} is never closed "
                                     f"(a quote in a quoted text is escaped: \\{match['open']})")
        text = _ESCAPE.sub(lambda escape: _ESCAPES.get(escape[1], escape[1]),
                           match[kind][1:-1]) if kind == "quoted" else match[kind]
        tokens.append(_Token(text if kind == "mark" else kind, text))
        position = match.end()


def _shown(tokens: list[_Token]) -> str:
    """``tokens`` as a quoted text, to name them in an error (``'{0 1, 2 x}'``)."""
    return repr(_MARK_SPACE.sub("", " ".join(token.text for token in tokens)))


def _attribute(tokens: list[_Token], where: str, line: int) -> Attribute:
    """The attribute an ``@attribute`` line declares (``tokens``, after the keyword)."""
    if len(tokens) < 2 or tokens[0].kind not in ("word", "quoted"):
        raise DatasetFormatError(f"{where}: @attribute needs a name and a type "
                                 f"(@attribute NAME numeric, or @attribute NAME {{v1, v2}})")
    name, kind = tokens[0].text, tokens[1].text.lower()
    if tokens[1].kind == "{":
        return Attribute(name, _nominal_values(tokens[1:], name, where), line)
    if kind in _NUMERIC_TYPES and len(tokens) == 2:
        return Attribute(name, None, line)
    if kind in _REFUSED_TYPES:
        raise DatasetFormatError(f"{where}: attribute {name!r} is of type {kind}, which a "
                                 f"stream file cannot hold; drop it, or make it numeric or "
                                 f"nominal first")
    raise DatasetFormatError(f"{where}: attribute {name!r} has the type {_shown(tokens[1:])}; "
                             f"declare it numeric, real, integer or {{v1, v2, ...}}")


def _nominal_values(tokens: list[_Token], name: str, where: str) -> tuple[str, ...]:
    """The declared values of nominal attribute ``name``: ``tokens`` ``{v1, v2, ...}``."""
    if tokens[-1].kind != "}" or any(token.kind in ("{", "}") for token in tokens[1:-1]):
        raise DatasetFormatError(f"{where}: attribute {name!r}: its values are one list "
                                 f"{{v1, v2, ...}}, closed by }} at the line's end")
    if len(tokens) == 2:
        raise DatasetFormatError(f"{where}: attribute {name!r} declares no values")
    values = [_text(group, where) if group else "" for group in _split(tokens[1:-1])]
    for position, value in enumerate(values):
        if not value or value in values[:position]:
            problem = "an empty value" if not value else f"{value!r} twice"
            raise DatasetFormatError(f"{where}: attribute {name!r} declares {problem}; "
                                     f"give each value once")
    return tuple(values)


def _split(tokens: list[_Token]) -> list[list[_Token]]:
    """``tokens`` split at their commas."""
    groups: list[list[_Token]] = [[]]
    for token in tokens:
        if token.kind == ",":
            groups.append([])
        else:
            groups[-1].append(token)
    return groups


def _text(group: list[_Token], where: str) -> str:
    """The text of ``group``, tokens between two commas that are one value."""
    if len(group) > 1 or group[0].kind not in ("word", "quoted"):
        raise DatasetFormatError(f"{where}: {_shown(group)} is not one value; values are "
                                 f"separated by commas (quote a value that holds spaces)")
    return group[0].text


def _one_value(group: list[_Token], where: str) -> Optional[str]:
    """The value of ``group``, the tokens between two commas of a data row: ``""``
    for none, ``None`` for an unquoted ``?`` (a missing value)."""
    if not group:
        return ""
    text = _text(group, where)
    return None if group[0] == ("word", "?") else text


def _plain_row(line: str, width: int, where: str) -> list[Optional[str]]:
    """The values of a dense row of plain values (:data:`_PLAIN_ROW`), as
    :func:`_dense_row` reads its tokens."""
    values: list[Optional[str]] = [value.strip() for value in line.split(",")]
    if len(values) != width:
        raise _width_error(len(values), width, where)
    return [None if value == "?" else value for value in values]


def _dense_row(tokens: list[_Token], width: int, where: str) -> list[Optional[str]]:
    """The values of a dense row (``tokens``), one per attribute (``width``)."""
    groups = _split(tokens)
    if groups[-1] and groups[-1][0].kind == "{":
        raise _weight(groups[-1], where)
    if len(groups) != width:
        raise _width_error(len(groups), width, where)
    return [_one_value(group, where) for group in groups]


def _width_error(count: int, width: int, where: str) -> DatasetFormatError:
    """The error of a dense row of ``count`` values under a header of ``width`` attributes."""
    return DatasetFormatError(f"{where}: {count} value{'s' * (count != 1)}, the header "
                              f"declares {width} attributes")


def _sparse_row(tokens: list[_Token], attributes: list[Attribute], where: str
                ) -> dict[int, Optional[str]]:
    """The values a sparse row (``tokens``, ``{i v, j w, ...}``) gives, by attribute
    index (those it omits are :func:`omitted_value`)."""
    end = next((position for position, token in enumerate(tokens) if token.kind == "}"), None)
    if end is None:
        raise DatasetFormatError(f"{where}: a sparse row {{i v, j w, ...}} has no closing }}")
    after = tokens[end + 1:]
    if len(after) > 1 and after[0].kind == "," and after[1].kind == "{":
        raise _weight(after[1:], where)
    if after:
        raise DatasetFormatError(f"{where}: {_shown(after)} after the sparse row's }}")
    values: dict[int, Optional[str]] = {}
    for entry in _split(tokens[1:end]) if end > 1 else []:
        index, value = _sparse_entry(entry, len(attributes), where)
        if index in values:
            raise DatasetFormatError(f"{where}: sparse index {index} is given twice")
        values[index] = value
    return values


def _sparse_entry(entry: list[_Token], width: int, where: str) -> tuple[int, Optional[str]]:
    """The attribute index and the value of a sparse row's ``entry`` (``i v``)."""
    if len(entry) != 2 or entry[0].kind != "word" or not _SPARSE_INDEX.fullmatch(entry[0].text):
        raise DatasetFormatError(f"{where}: sparse entry {_shown(entry)} is not an attribute "
                                 f"index and a value ({{i v, j w, ...}}, i from 0)")
    index = int(entry[0].text)
    if index >= width:
        raise DatasetFormatError(f"{where}: sparse index {index} is outside the {width} "
                                 f"attributes (0 to {width - 1})")
    return index, _one_value(entry[1:], where)


def _weight(tokens: list[_Token], where: str) -> DatasetFormatError:
    """The error of an instance weight (``tokens``, ``{w}``) after a row."""
    return DatasetFormatError(f"{where}: an instance weight {_shown(tokens)}; every sample of "
                              f"a stream weighs 1, drop the weights")
