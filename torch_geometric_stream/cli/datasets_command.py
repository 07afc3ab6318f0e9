"""The ``datasets`` command: the paper's datasets and whether ``--root`` holds them."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Optional

from torch_geometric_stream.datasets import DATASETS
from torch_geometric_stream.datasets.registry import DatasetInfo
from torch_geometric_stream.datasets.bundled import BUNDLED_DATASET, bundled_data_folder
# The registry's own (case-insensitive) folder lookup, so "found" means what
# load_dataset would find.
from torch_geometric_stream.datasets.registry import _dataset_folder

__all__ = ["NOTES", "datasets_command"]

#: Remarks on datasets whose local files differ from the paper's table.
NOTES = {
    "Shuttle": "the files hold 9 attributes (paper: 7, which two it dropped is unknown); "
               "all 9 are kept",
    "GSAD": "missing batch files are skipped with a warning (--strict: error)",
}


def _single_layout_files(info: DatasetInfo) -> tuple[str, ...]:
    """The files the loader reads directly in the dataset's folder: its
    ``required_files``, or its ``expected_files`` where those are plain names
    (e.g. GSAD's batches); empty where the files come in several layouts."""
    if info.required_files or any(" " in entry for entry in info.expected_files):
        return info.required_files
    return tuple(info.expected_files)


def _status(root: Optional[Path], info: DatasetInfo) -> str:
    """``missing`` (no folder), ``empty`` (no data file in it), ``partial (k of n
    files)`` or ``found``. Datasets with one layout (:func:`_single_layout_files`)
    are checked file by file, each also as ``<name>.gz``; the others, whose files
    come in several layouts, by whether the folder holds any file besides notes
    (``*.md``)."""
    if root is None:
        return "no --root"
    folder = _dataset_folder(root, info.folder)
    if not folder.is_dir():
        return "missing"
    names = _single_layout_files(info)
    if not names:
        data = (path for path in folder.rglob("*") if path.is_file() and path.suffix != ".md")
        return "found" if next(data, None) is not None else "empty"
    present = sum((folder / name).is_file() or (folder / f"{name}.gz").is_file()
                  for name in names)
    if present == len(names):
        return "found"
    return f"partial ({present} of {len(names)} files)" if present else "empty"


def _describe_root(root: Optional[Path]) -> str:
    """``root`` for the listing's first line, with a note where it is no folder."""
    if root is None:
        return "(none: pass --root DIR)"
    if not root.exists():
        return f"{root} (does not exist: every dataset below is missing)"
    if not root.is_dir():
        return f"{root} (a file, not a folder: every dataset below is missing)"
    return str(root)


def datasets_command(args: argparse.Namespace) -> int:
    """Print name, paper shape, local status, URL and expected files of each dataset."""
    root = None if args.root is None else Path(args.root)
    header = ("name", "rows", "features", "classes", "status", "url")
    rows = [(info.name, str(info.paper_rows), str(info.paper_features), str(info.paper_classes),
             _status(root, info), info.url) for info in DATASETS.values()]
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    print(f"data folder: {_describe_root(root)}")
    print("  ".join(cell.ljust(width) for cell, width in zip(header, widths)).rstrip())
    for row, info in zip(rows, DATASETS.values()):
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
        print(f"    files: {info.folder}/ " + "; ".join(info.expected_files))
        if info.name in NOTES:
            print(f"    note: {NOTES[info.name]}")
    print(f"\nbundled offline default: {BUNDLED_DATASET} "
          f"({bundled_data_folder() / 'online_shoppers_intention.csv.gz'}, CC BY 4.0, "
          f"see ATTRIBUTION.md there)")
    print("your own stream: run --dataset FILE.csv (label in the last column, or "
          "--label-column NAME), FILE.arff (the label the last attribute) or FILE.npz "
          "(arrays x and y)")
    return 0
