"""The ``compare`` command: the JSON records of ``run`` side by side, one row per
setting, mean and std (the sample std, ddof 1, as ``run``'s summary) over its seeds;
optionally as CSV and a plot of the running accuracy.

    python -m torch_geometric_stream compare runs/*.json --plot curves.png --csv table.csv

Runs of one setting are those whose stream, model, label ratio, label mask, prefix,
preset and whole resolved configuration are equal; they differ only in their seed.
Each row names its setting by the model, the stream and the label ratio, and by the
entries in which it differs from the other settings of these three.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import math
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from torch_geometric_stream.cli.arguments import check_output_files, plain_text
from torch_geometric_stream.cli.errors import UsageError
from torch_geometric_stream.cli.report import APPROXIMATE, APPROXIMATE_NOTE
from torch_geometric_stream.cli.run import recorded_config
from torch_geometric_stream.evaluation import plot_curves
from torch_geometric_stream.evaluation.bounded import approximate_tails
from torch_geometric_stream.files import atomic_write_text

__all__ = ["SETTING_KEYS", "add_compare_parser", "compare_command", "group_settings",
           "read_records", "setting_names"]

#: Record entries that, with the resolved ``config``, make a run's setting.
SETTING_KEYS = ("dataset", "model", "label_ratio", "label_mask", "limit", "synthetic_samples",
                "preset")

#: Entries every run record holds, which ``compare`` reads.
_REQUIRED = ("dataset", "model", "label_ratio", "seed", "accuracy", "config")

#: Columns of the table: (record entry, header); each is a mean over the seeds.
_METRICS = (("accuracy_last_20", "last 20 %"), ("balanced_accuracy", "balanced"),
            ("kappa_m", "kappa_m"), ("ms_per_sample_median", "ms/sample"))

Record = dict[str, Any]
Setting = tuple


class BadRecord(UsageError):
    """A run record with an entry that cannot be one of a run (refused in a folder
    too, where what is no run record is passed over)."""


def read_records(paths: Sequence[Path]) -> list[tuple[Path, Record]]:
    """Each run record with its file: a file given must be one; a folder gives
    the run records among its ``*.json`` files (``tune``'s folder also holds its
    best configuration, which is none).

    A file reached twice (named twice, or named and in a folder given) counts once.

    Raises:
        UsageError: a file that is not a ``run`` record (unreadable, no JSON, an
            entry missing), or a folder without one.
    """
    records = []
    for path in map(Path, paths):
        if not path.is_dir():
            records.append((path, _read_record(path)))
            continue
        found = []
        for file in sorted(path.glob("*.json")):
            try:
                found.append((file, _read_record(file)))
            except BadRecord:
                raise
            except UsageError:
                continue  # not a run record: a folder holds other JSON too
        if not found:
            raise UsageError(f"{path}: the folder holds no run record (*.json written by run)")
        records += found
    return _once_each(records)


def _once_each(records: list[tuple[Path, Record]]) -> list[tuple[Path, Record]]:
    """``records`` without the repeats of a file, the first time kept."""
    seen: set[Path] = set()
    unique = []
    for path, record in records:
        if path.resolve() not in seen:
            seen.add(path.resolve())
            unique.append((path, record))
    return unique


def _read_record(path: Path) -> Record:
    try:
        record = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UsageError(f"{path}: cannot read a run record ({error})") from None
    missing = ([key for key in _REQUIRED if key not in record]
               if isinstance(record, dict) else list(_REQUIRED))
    if missing:
        raise UsageError(f"{path}: not a record of python -m torch_geometric_stream run "
                         f"(it lacks {', '.join(missing)})")
    _check_values(path, record)
    return record


def _check_values(path: Path, record: Record) -> None:
    """Refuse a run record whose ``seed`` is no integer or whose ``accuracy`` or
    ``label_ratio`` is no finite number (a record edited by hand, or broken): it
    would be averaged as NaN or fail there.

    Raises:
        BadRecord: the first such entry, named with its value.
    """
    for key, kinds in (("seed", (int,)), ("accuracy", (int, float)),
                       ("label_ratio", (int, float))):
        value = record[key]
        if isinstance(value, bool) or not isinstance(value, kinds) or not math.isfinite(value):
            kind = "an integer" if kinds == (int,) else "a finite number"
            raise BadRecord(f"{path}: the entry {key} must be {kind}, got {value!r}")


def _setting(record: Mapping[str, Any]) -> Setting:
    """The setting of a record: :data:`SETTING_KEYS` (a record older than the
    preset and the label mask ran the paper's) and its configuration, comparable
    with newer records (:func:`~torch_geometric_stream.cli.run.recorded_config`)."""
    known = {"preset": "paper", "label_mask": "paper"}
    return (*(record.get(key, known.get(key)) for key in SETTING_KEYS),
            json.dumps(recorded_config(record), sort_keys=True))


def group_settings(records: Sequence[tuple[Path, Record]]
                   ) -> dict[Setting, list[tuple[Path, Record]]]:
    """The runs of each setting, seeds in order.

    Raises:
        UsageError: two files of one setting and seed (which to count is the user's call).
    """
    groups: dict[Setting, list[tuple[Path, Record]]] = {}
    for path, record in records:
        runs = groups.setdefault(_setting(record), [])
        twin = next((other for other, seen in runs if seen["seed"] == record["seed"]), None)
        if twin is not None:
            raise UsageError(f"{twin} and {path} are runs of one setting and seed "
                             f"{record['seed']}: give one of them")
        runs.append((path, record))
    for runs in groups.values():
        runs.sort(key=lambda run: run[1]["seed"])
    return groups


def setting_names(settings: Sequence[Setting]) -> dict[Setting, tuple[str, str]]:
    """``("<model> on <dataset> at <ratio>", details)`` for each setting; the
    details name the entries (``preset``, ``label_mask``, ``limit``, configuration)
    whose values differ among the settings of that model, stream and label ratio
    (``""`` where none do: the first part tells the setting from the others)."""
    entries = {setting: {**dict(zip(SETTING_KEYS[3:], setting[3:-1])),
                         **json.loads(setting[-1])} for setting in settings}
    names = {}
    for setting, entry in entries.items():
        peers = [entries[other] for other in settings if other[:3] == setting[:3]]
        differing = [key for key in sorted(entry)
                     if len({json.dumps(peer.get(key), sort_keys=True) for peer in peers}) > 1]
        dataset, model, ratio = setting[:3]
        names[setting] = (f"{model} on {dataset} at {ratio:g}",
                          ", ".join(f"{key}={_plain(entry[key])}" for key in differing))
    return names


def _plain(value: Any) -> str:
    """A configuration value as a flag would give it: ``[-1.0, 1.0]`` as ``-1.0:1.0``."""
    if isinstance(value, list):
        return ":".join(map(str, value))
    return str(value)


def _mean(runs: Sequence[tuple[Path, Record]], key: str) -> float | None:
    values = [record[key] for _, record in runs if record.get(key) is not None]
    return float(np.mean(values)) if values else None


def _rows(groups: Mapping[Setting, list[tuple[Path, Record]]]) -> list[dict[str, Any]]:
    """One row per setting, sorted by stream, label ratio, then accuracy (best first)."""
    names = setting_names(list(groups))
    rows = []
    for setting, runs in groups.items():
        accuracy = [record["accuracy"] for _, record in runs]
        base, details = names[setting]
        rows.append({"setting": f"{base} ({details})" if details else base,
                     "base": base, "details": details, "dataset": setting[0],
                     "label_ratio": setting[2],
                     "seeds": [record["seed"] for _, record in runs],
                     "accuracy": float(np.mean(accuracy)),
                     "accuracy_std": float(np.std(accuracy, ddof=1)) if len(runs) > 1 else None,
                     **{key: _mean(runs, key) for key, _ in _METRICS},
                     "approximate": {key for _, record in runs
                                     for key in approximate_tails(record)
                                     if key in dict(_METRICS)},
                     "runs": runs})
    return sorted(rows, key=lambda row: (str(row["dataset"]), row["label_ratio"],
                                         -row["accuracy"]))


def _table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The table of ``rows``, aligned; where several rows share their model, stream
    and label ratio, that heads the table on a line of its own and each row is
    named by its details alone (a grid's rows are long enough). A mean over a tail
    accuracy that is not exact (a ``--history bounded`` record's) ends in
    :data:`~torch_geometric_stream.cli.report.APPROXIMATE`, explained under the table."""
    bases = {row["base"] for row in rows}
    shared = bases.pop() if len(rows) > 1 and len(bases) == 1 else None
    headers = ["setting", "seeds", "accuracy", *(header for _, header in _METRICS)]
    lines = []
    for row in rows:
        accuracy = f"{row['accuracy']:.4f}" + ("" if row["accuracy_std"] is None
                                               else f" ± {row['accuracy_std']:.4f}")
        lines.append([row["details"] if shared else row["setting"], str(len(row["seeds"])),
                      accuracy,
                      *("-" if row[key] is None else
                        f"{row[key]:.2f}" if key == "ms_per_sample_median" else
                        f"{row[key]:.4f}" + APPROXIMATE * (key in row["approximate"])
                        for key, _ in _METRICS)])
    widths = [max(len(cell) for cell in column) for column in zip(headers, *lines)]
    note = [APPROXIMATE_NOTE] * any(row["approximate"] for row in rows)
    return ("" if shared is None else f"{shared}\n") + "\n".join([
        "  ".join(cell.ljust(width) if i == 0 else cell.rjust(width)
                  for i, (cell, width) in enumerate(zip(line, widths))).rstrip()
        for line in [headers, *lines]] + note)


def _write_csv(rows: Sequence[Mapping[str, Any]], path: Path) -> None:
    columns = ["setting", "dataset", "label_ratio", "seeds", "accuracy", "accuracy_std",
               *(key for key, _ in _METRICS), "config"]
    lines = []
    for row in rows:
        cells = {**row, "seeds": " ".join(map(str, row["seeds"])),
                 "config": json.dumps(recorded_config(row["runs"][0][1]), sort_keys=True)}
        lines.append(["" if cells[column] is None else cells[column] for column in columns])
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([columns, *lines])
    atomic_write_text(path, buffer.getvalue())


def _curves(rows: Sequence[Mapping[str, Any]]) -> dict[str, tuple[list, np.ndarray]]:
    """Each setting's running accuracy, the mean over its seeds where their curves
    share positions (the same stream and prefix), else one curve per seed; named
    by their details alone where they share model, stream and label ratio."""
    curves = {}
    one_base = len({row["base"] for row in rows}) == 1
    for row in rows:
        name = (row["details"] or "the setting") if one_base else row["setting"]
        runs = [(path, record) for path, record in row["runs"] if record.get("curve")]
        positions = {tuple(record["curve"]["position"]) for _, record in runs}
        if len(positions) == 1:
            accuracy = np.mean([record["curve"]["running_accuracy"] for _, record in runs],
                               axis=0)
            seeds = "" if len(runs) == 1 else f", mean of {len(runs)} seeds"
            curves[f"{name}{seeds}"] = (list(positions.pop()), accuracy)
        else:
            for _, record in runs:
                curves[f"{name}, seed {record['seed']}"] = (
                    record["curve"]["position"], np.asarray(record["curve"]["running_accuracy"]))
    return curves


def compare_command(args: argparse.Namespace) -> int:
    """Print the table of ``args.records`` and write its CSV and plot if asked."""
    check_output_files((("--csv", args.csv), ("--plot", args.plot)), plot=args.plot)
    rows = _rows(group_settings(read_records(args.records)))
    curves = _curves(rows) if args.plot is not None else {}
    if args.plot is not None and not curves:
        raise UsageError("--plot: none of these records holds a running-accuracy curve "
                         "(the entry curve)")
    print(_table(rows))
    if args.csv is not None:
        _write_csv(rows, args.csv)
    if args.plot is not None:
        bases = sorted({row["base"] for row in rows})
        title = bases[0] if len(bases) == 1 else ", ".join(
            sorted({f"{row['dataset']} at {row['label_ratio']:g}" for row in rows}))
        plot_curves(curves, args.plot, title=title)
        for row in rows:
            if not any(record.get("curve") for _, record in row["runs"]):
                print(f"--plot: {row['setting']} is left out: its records hold no "
                      f"running-accuracy curve", file=sys.stderr)
    return 0


def add_compare_parser(commands: argparse._SubParsersAction) -> None:
    compare = commands.add_parser(
        "compare", help="run records side by side: mean and sample std over seeds per setting",
        description=plain_text(__doc__.split("\n\n")[0].replace("\n", " ")))
    compare.add_argument("records", nargs="+", type=Path, metavar="RUN.json",
                         help="records written by run --output, or folders of them "
                              "(e.g. tune's --out-dir)")
    compare.add_argument("--csv", type=Path, metavar="FILE.csv", help="the table as CSV")
    compare.add_argument("--plot", type=Path, metavar="FILE.png",
                         help="running accuracy over the stream, one curve per setting "
                              "(the mean over its seeds)")
    compare.set_defaults(handler=compare_command)
