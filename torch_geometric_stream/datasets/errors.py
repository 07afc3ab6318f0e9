"""Exceptions raised by the dataset loaders.

Both carry, besides the specific problem, the three facts a user needs to fix
it: the files a loader expects, the folder it searched and the URL where the
dataset is published (:func:`~torch_geometric_stream.datasets.load_dataset`
adds them; see :func:`with_context`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

__all__ = ["DatasetError", "DatasetNotFoundError", "DatasetFormatError", "with_context"]


class DatasetError(Exception):
    """Base class of the dataset loading errors."""


class DatasetNotFoundError(DatasetError, FileNotFoundError):
    """A dataset folder or one of its files is missing."""


class DatasetFormatError(DatasetError, ValueError):
    """A dataset file exists but its content does not follow the expected format."""


def with_context(error: DatasetError, *, name: str, folder: Path,
                 expected_files: Sequence[str], url: str) -> DatasetError:
    """A new error of the same type whose message adds where to look and what to get.

    Args:
        error (DatasetError): the error to extend.
        name (str): the dataset's name.
        folder (Path): the folder searched.
        expected_files (Sequence[str]): the files the dataset needs.
        url (str): where the dataset is published.
    """
    files = "\n".join(f"  - {entry}" for entry in expected_files)
    message = (f"{error}\ndataset {name!r}: searched folder {folder}\n"
               f"expected files (each text file may also be gzip-compressed as <name>.gz):\n"
               f"{files}\nthe dataset is published at {url}")
    return type(error)(message)
