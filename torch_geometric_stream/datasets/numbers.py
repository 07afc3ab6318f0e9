"""What a number in a data file is: the one rule every text reader of the package applies.

A number is ASCII decimal notation (``-2``, ``.5``, ``1e-3``), or NaN or an infinity
as Python spells them (any case; the readers refuse them where a finite value is
needed, naming the field). Not all that ``float()`` reads: ``1_000`` and other
scripts' digits (``"\\u0663"``), which in a data file are a damaged or misread
field, are text.  Fields are checked as the readers split them (surrounding
whitespace stripped).

A field may also be a missing value as tables write one (:func:`is_missing_value`:
``NA``, ``?``, ``null``, NaN...): the readers name it so.
"""
from __future__ import annotations

import re
from typing import Sequence

__all__ = ["NUMBER", "MISSING_VALUES", "is_number", "all_numbers", "plain_characters",
           "is_missing_value", "is_nan"]

#: A number (see the module's docstring): a sign, digits with a fraction or a fraction
#: alone, an exponent; or ``nan``, ``inf``, ``infinity`` in any case, with a sign.
NUMBER = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                    r"|(?i:nan|inf|infinity))")

#: The texts (in lower case) that tables write for a missing value: empty, pandas' and
#: R's ``NA`` (``N/A``, ``#N/A``, ``<NA>``), SQL's ``NULL``, ARFF's and Weka's ``?``,
#: Python's ``None``, and NaN (with a sign too: a number).
MISSING_VALUES = frozenset({"", "?", "na", "n/a", "#n/a", "<na>", "null", "none",
                            "nan", "+nan", "-nan"})


def is_number(text: str) -> bool:
    """Whether ``text`` is a number (:data:`NUMBER`), which ``float`` reads.

    Args:
        text (str): the text.
    """
    return NUMBER.fullmatch(text) is not None


def all_numbers(fields: Sequence[str]) -> bool:
    """Whether the stripped ``fields`` are all numbers (:data:`NUMBER`). Beyond
    them, ``float`` reads only text with underscores or characters that are not
    ASCII: a row with neither (most rows) is checked at once.

    Args:
        fields (Sequence[str]): stripped fields, each of which ``float`` reads.
    """
    return plain_characters("".join(fields)) or all(map(is_number, fields))


def plain_characters(text: str) -> bool:
    """Whether ``text`` is ASCII without underscores: then every part of it that
    ``float`` (or ``int``) reads, whitespace stripped, is a number (:data:`NUMBER`).

    Args:
        text (str): the text.
    """
    return text.isascii() and "_" not in text


def is_missing_value(text: str) -> bool:
    """Whether the stripped field ``text`` is a missing value as tables write one
    (:data:`MISSING_VALUES`, any case). Those that are numbers are NaN.

    Args:
        text (str): the stripped field.
    """
    return text.lower() in MISSING_VALUES


def is_nan(text: str) -> bool:
    """Whether the stripped field ``text`` is a NaN: a missing value
    (:func:`is_missing_value`) that is a number.

    Args:
        text (str): the stripped field.
    """
    return is_missing_value(text) and is_number(text)
