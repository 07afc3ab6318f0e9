"""Loaders of the tabular datasets: Shopper, Shuttle, GSAD, SDD, HAR and OD.

Each loader takes the dataset's folder and returns a
:class:`~.dataset.StreamDataset` with raw features in the original order
(train split, then test split).  Prefer
:func:`~torch_geometric_stream.datasets.load_dataset`, which adds the citation
and, on failure, the expected files and download URL to the error.
"""
from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np

from torch_geometric_stream.datasets.dataset import StreamDataset, encode_labels
from torch_geometric_stream.datasets.errors import DatasetFormatError, DatasetNotFoundError
from torch_geometric_stream.datasets.io import (as_integer_labels, find_file, first_existing,
                                                open_text, read_csv_records, read_numeric_table,
                                                records_to_matrix)
from torch_geometric_stream.datasets.numbers import is_number, plain_characters

__all__ = ["load_shopper", "load_shuttle", "load_gsad", "load_sdd", "load_har", "load_od",
           "GSAD_NUM_BATCHES", "GSAD_NUM_FEATURES"]

SHOPPER_FEATURES = ["Administrative", "Administrative_Duration", "Informational",
                    "Informational_Duration", "ProductRelated", "ProductRelated_Duration",
                    "BounceRates", "ExitRates", "PageValues", "SpecialDay", "OperatingSystems",
                    "Browser", "Region", "TrafficType", "Weekend"]
#: Shopper's classes, by class id: the values of its ``Revenue`` column.
SHOPPER_CLASSES = ("FALSE", "TRUE")
SHUTTLE_CLASSES = {1: "Rad Flow", 2: "Fpv Close", 3: "Fpv Open", 4: "High", 5: "Bypass",
                   6: "Bpv Close", 7: "Bpv Open"}
GSAD_CLASSES = {1: "Ethanol", 2: "Ethylene", 3: "Ammonia", 4: "Acetaldehyde", 5: "Acetone",
                6: "Toluene"}
GSAD_NUM_BATCHES = 10
GSAD_NUM_FEATURES = 128
HAR_CLASSES = {1: "WALKING", 2: "WALKING_UPSTAIRS", 3: "WALKING_DOWNSTAIRS", 4: "SITTING",
               5: "STANDING", 6: "LAYING"}
HAR_NUM_FEATURES = 561
OD_FILES = ("datatraining.txt", "datatest.txt", "datatest2.txt")
OD_FEATURES = ["Temperature", "Humidity", "Light", "CO2", "HumidityRatio"]
OD_CLASSES = {0: "not occupied", 1: "occupied"}


def _split_features_labels(table: np.ndarray, file_name: str) -> tuple[np.ndarray, np.ndarray]:
    """Last column of a numeric table as integer labels, the rest as features."""
    return table[:, :-1], as_integer_labels(table[:, -1], file_name)


def load_shopper(folder: Path, strict: bool = False) -> StreamDataset:
    """Online Shoppers Purchasing Intention (Sakar et al., Neural Comput. Appl. 2019).

    UCI: https://archive.ics.uci.edu/dataset/468/online+shoppers+purchasing+intention+dataset.
    File ``online_shoppers_intention.csv`` (header, 12,330 rows).  The 15
    features of the paper: the 10 numeric columns, OperatingSystems, Browser,
    Region, TrafficType and Weekend (TRUE/FALSE -> 1/0); ``Month`` and
    ``VisitorType`` are dropped.  Label: ``Revenue`` (FALSE -> 0, TRUE -> 1).

    Args:
        folder (Path): the folder holding the files.
        strict (bool, optional): unused (see
            :func:`~torch_geometric_stream.datasets.load_dataset`). (default: ``False``)
    """
    name = "online_shoppers_intention.csv"
    records = read_csv_records(folder / name, SHOPPER_FEATURES + ["Revenue"])
    x = records_to_matrix(records, SHOPPER_FEATURES, name)
    y = _shopper_revenue(records, name)
    return StreamDataset("Shopper", x, y, len(SHOPPER_CLASSES), list(SHOPPER_CLASSES),
                         feature_names=list(SHOPPER_FEATURES),
                         notes="Month and VisitorType dropped (string columns), as in the paper.")


def _shopper_revenue(records: list[dict[str, str]], file_name: str) -> np.ndarray:
    """The ``Revenue`` column as class ids ``FALSE -> 0``, ``TRUE -> 1`` (any case);
    any other value is a format error, not a third class."""
    ids = {label: index for index, label in enumerate(SHOPPER_CLASSES)}
    y = np.empty(len(records), dtype=np.int64)
    for row, record in enumerate(records):
        text = record["Revenue"].strip().upper()
        if text not in ids:
            raise DatasetFormatError(f"{file_name} data row {row + 1}: column 'Revenue' must be "
                                     f"TRUE or FALSE, got {record['Revenue']!r}")
        y[row] = ids[text]
    return y


def load_shuttle(folder: Path, strict: bool = False) -> StreamDataset:
    """Statlog (Shuttle), NASA data via UCI (Catlett).

    UCI: https://archive.ics.uci.edu/dataset/148/statlog+shuttle.  Files
    ``shuttle.trn`` (43,500 rows) then ``shuttle.tst`` (14,500 rows):
    space-separated, 9 numeric attributes then the class 1..7.

    Args:
        folder (Path): the folder holding the files.
        strict (bool, optional): unused (see
            :func:`~torch_geometric_stream.datasets.load_dataset`). (default: ``False``)
    """
    parts = [_split_features_labels(read_numeric_table(folder / f, 10), f)
             for f in ("shuttle.trn", "shuttle.tst")]
    y, class_names = encode_labels(np.concatenate([p[1] for p in parts]), SHUTTLE_CLASSES)
    return StreamDataset("Shuttle", np.concatenate([p[0] for p in parts]), y, len(class_names),
                         class_names,
                         notes="All 9 attributes kept; the paper reports 7 features without "
                               "saying which two it dropped.")


def _parse_gsad_line(line: str, file_name: str, line_number: int) -> tuple[int, np.ndarray]:
    """One ``<class>[;<concentration>] 1:v ... 128:v`` line -> (class, features
    :math:`(128,)`); the class, indices and values are numbers in ASCII decimal
    notation (:mod:`~torch_geometric_stream.datasets.numbers`), each feature
    index at most once."""
    tokens = line.split()
    where = f"{file_name} line {line_number}"
    row = np.zeros(GSAD_NUM_FEATURES, dtype=np.float64)
    seen = set()
    try:
        label_text = tokens[0].split(";")[0]
        label = int(label_text)
        fields = [token.partition(":") for token in tokens[1:]]
        for index, _, value in fields:
            position = int(index) - 1
            if not 0 <= position < GSAD_NUM_FEATURES:
                raise DatasetFormatError(f"{where}: feature index {index} outside "
                                         f"1..{GSAD_NUM_FEATURES}")
            if position in seen:
                raise DatasetFormatError(f"{where}: feature index {index} given twice "
                                         "(each feature at most once)")
            seen.add(position)
            number = float(value)
            if not math.isfinite(number):
                raise DatasetFormatError(f"{where}: feature {index} holds the non-finite "
                                         f"value {value!r}")
            row[position] = number
    except ValueError as error:
        if isinstance(error, DatasetFormatError):
            raise
        raise DatasetFormatError(f"{where}: expected '<class> <index>:<value> ...' "
                                 f"({error})") from None
    if not plain_characters(line):  # rare: int() or float() may have read a non-number
        _check_gsad_numbers(where, label_text, fields)
    return label, row


def _check_gsad_numbers(where: str, label_text: str,
                        fields: list[tuple[str, str, str]]) -> None:
    """Raise :class:`~.errors.DatasetFormatError` for the first of a GSAD line's
    (``where``) class and ``(index, ":", value)`` fields, which ``int()`` or
    ``float()`` read, that is not a number."""
    if not is_number(label_text):
        raise DatasetFormatError(f"{where}: the class {label_text!r} is not a number")
    for index, _, value in fields:
        if not is_number(index):
            raise DatasetFormatError(f"{where}: feature index {index!r} is not a number")
        if not is_number(value):
            raise DatasetFormatError(f"{where}: feature {index} holds the non-numeric "
                                     f"value {value!r}")


def load_gsad(folder: Path, strict: bool = False) -> StreamDataset:
    """Gas Sensor Array Drift (Vergara et al., Sens. Actuators B 166-167, 2012).

    UCI: https://archive.ics.uci.edu/dataset/224/gas+sensor+array+drift+dataset.
    Files ``batch1.dat`` ... ``batch10.dat`` streamed in batch order, libsvm
    style ``<class> 1:v ... 128:v``; the UCI variant's first token
    ``<class>;<concentration>`` is accepted too (the concentration is ignored).

    Args:
        folder (Path): the folder holding the files.
        strict (bool, optional): raise a :class:`~.errors.DatasetNotFoundError`
            for missing batches instead of skipping them with a warning.
            (default: ``False``)
    """
    names = [f"batch{i}.dat" for i in range(1, GSAD_NUM_BATCHES + 1)]
    present = [n for n in names if find_file(folder / n) is not None]
    missing = [n for n in names if n not in present]
    if not present:
        raise DatasetNotFoundError("none of the GSAD batch files was found")
    if missing:
        if strict:
            raise DatasetNotFoundError(f"GSAD batches missing (strict: nothing is streamed): "
                                       f"{', '.join(missing)}")
        warnings.warn(f"GSAD batches missing, streaming only the others: {', '.join(missing)}",
                      stacklevel=3)
    labels, rows = [], []
    for file_name in present:
        with open_text(folder / file_name) as handle:
            for line_number, line in enumerate(handle, start=1):
                if line.strip():
                    label, row = _parse_gsad_line(line, file_name, line_number)
                    labels.append(label)
                    rows.append(row)
    y, class_names = encode_labels(labels, GSAD_CLASSES)
    notes = "Batches streamed: " + ", ".join(present) + "."
    if missing:
        notes += f" Missing (skipped): {', '.join(missing)}; the paper uses all 10 (13,910 rows)."
    return StreamDataset("GSAD", np.stack(rows), y, len(class_names), class_names, notes=notes)


def load_sdd(folder: Path, strict: bool = False) -> StreamDataset:
    """Dataset for Sensorless Drive Diagnosis (Bator, 2013).

    UCI: https://archive.ics.uci.edu/dataset/325/dataset+for+sensorless+drive+diagnosis.
    File ``Sensorless_drive_diagnosis.txt``: whitespace-separated, 48
    features then the class 1..11, 58,509 rows.

    Args:
        folder (Path): the folder holding the files.
        strict (bool, optional): unused (see
            :func:`~torch_geometric_stream.datasets.load_dataset`). (default: ``False``)
    """
    name = "Sensorless_drive_diagnosis.txt"
    x, labels = _split_features_labels(read_numeric_table(folder / name, 49), name)
    y, class_names = encode_labels(labels)
    return StreamDataset("SDD", x, y, len(class_names), class_names)


def _read_name_list(path: Path | None) -> dict[int, str]:
    """``<id> <name>`` lines (HAR's features.txt, activity_labels.txt) as a dict."""
    if path is None:
        return {}
    with open_text(path) as handle:
        pairs = [line.split(maxsplit=1) for line in handle if line.strip()]
    try:
        return {int(key): value.strip() for key, value in pairs}
    except ValueError:
        raise DatasetFormatError(f"{path.name}: expected '<id> <name>' lines") from None


def load_har(folder: Path, strict: bool = False) -> StreamDataset:
    """Human Activity Recognition Using Smartphones (Anguita et al., ESANN 2013).

    UCI: https://archive.ics.uci.edu/dataset/240/human+activity+recognition+using+smartphones.
    Train then test split: ``X_train.txt``/``y_train.txt`` and
    ``X_test.txt``/``y_test.txt`` (561 whitespace-separated features, class
    1..6), found in ``UCI HAR Dataset/<split>/``, ``<split>/`` or the folder
    itself.  ``features.txt`` and ``activity_labels.txt`` give the names
    when present.

    Args:
        folder (Path): the folder holding the files.
        strict (bool, optional): unused (see
            :func:`~torch_geometric_stream.datasets.load_dataset`). (default: ``False``)
    """
    base = [folder / "UCI HAR Dataset", folder]
    parts = []
    for split in ("train", "test"):
        places = [b / split for b in base] + base
        found: dict[str, Path] = {}
        for kind in ("X", "y"):
            path = first_existing(places, f"{kind}_{split}.txt")
            if path is None:
                raise DatasetNotFoundError(f"missing file {kind}_{split}.txt")
            found[kind] = path
        x = read_numeric_table(found["X"], HAR_NUM_FEATURES)
        labels = as_integer_labels(read_numeric_table(found["y"], 1)[:, 0], found["y"].name)
        if len(x) != len(labels):
            raise DatasetFormatError(f"{found['X'].name} has {len(x)} rows but "
                                     f"{found['y'].name} has {len(labels)}")
        parts.append((x, labels))
    features = _read_name_list(first_existing(base, "features.txt"))
    activities = _read_name_list(first_existing(base, "activity_labels.txt")) or HAR_CLASSES
    y, class_names = encode_labels(np.concatenate([p[1] for p in parts]), activities)
    feature_names = [features[i] for i in range(1, HAR_NUM_FEATURES + 1)] \
        if len(features) == HAR_NUM_FEATURES else None
    return StreamDataset("HAR", np.concatenate([p[0] for p in parts]), y, len(class_names),
                         class_names, feature_names=feature_names)


def load_od(folder: Path, strict: bool = False) -> StreamDataset:
    """Occupancy Detection (Candanedo & Feldheim, Energy and Buildings 112, 2016).

    UCI: https://archive.ics.uci.edu/dataset/357/occupancy+detection.  Files
    ``datatraining.txt`` (8,143 rows), ``datatest.txt`` (2,665) and
    ``datatest2.txt`` (9,752), streamed in that order (20,560 rows): CSV with
    header ``"date","Temperature","Humidity","Light","CO2","HumidityRatio",
    "Occupancy"`` and a leading quoted row id on every data row.  Features:
    the 5 numeric columns (date and id dropped); label: Occupancy.

    Args:
        folder (Path): the folder holding the files.
        strict (bool, optional): unused (see
            :func:`~torch_geometric_stream.datasets.load_dataset`). (default: ``False``)
    """
    xs, labels = [], []
    for name in OD_FILES:
        records = read_csv_records(folder / name, OD_FEATURES + ["Occupancy"])
        xs.append(records_to_matrix(records, OD_FEATURES, name))
        labels.append(as_integer_labels(records_to_matrix(records, ["Occupancy"], name)[:, 0],
                                        name))
    y, class_names = encode_labels(np.concatenate(labels), OD_CLASSES)
    return StreamDataset("OD", np.concatenate(xs), y, len(class_names), class_names,
                         feature_names=list(OD_FEATURES))
