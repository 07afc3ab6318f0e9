"""The ``compare`` command: the JSON records of ``run`` side by side, one row per
setting, mean and std (the sample std, ddof 1, as ``run``'s summary) over its seeds;
optionally as CSV and a plot of the running accuracy.

    python -m torch_geometric_stream compare runs/*.json --plot curves.png --csv table.csv

Runs of one setting are those whose stream, model, label ratio, label mask, prefix,
preset and whole resolved configuration are equal; they differ only in their seed.
Each row names its setting by the model, the stream and the label ratio, and by the
entries in which it differs from the other settings of these three.

``--baseline KEY=VALUE`` (an entry as the row names print it, e.g. ``model=sledge`` or
``robust_window=None``; several must all hold) compares seed by seed: among the
settings that share the model (unless the baseline names one: then across models),
stream, label ratio, label mask, limit and synthetic length
(:data:`PAIRED_KEYS`: a seed then draws the same labels), each gets the mean over the
seeds it shares with the baseline of its accuracy minus the baseline's, the same for
balanced accuracy, and on how many of these seeds its accuracy is higher (a tie is
not higher and is counted apart). The spread over seeds is often larger than such a
difference, which the unpaired mean and std then hide. A baseline may name the label
ratio or mask (:data:`LABEL_KEYS`), e.g. ``label_mask=paper`` to set a label query
beside the paper's mask: the settings then pair across its values, on the same
samples with each seed's own labels.

``--by WHAT`` (:data:`~torch_geometric_stream.cli.record_origin.ORIGINS`:
``folder``, ``commit``, ``host``, ``torch``, ``package``; repeated or a comma list)
makes where a run comes from part of its setting: the same setting rerun at another
commit, on another host or into another folder is then a row of its own, named by
these values (``unknown`` where a record predates the entry; a value all rows
share is said once above the table, ``all rows: host=...``), and can be the
baseline: ``--by folder --baseline folder=before``.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from torch_geometric_stream.cli.arguments import (check_files_apart, check_output_files,
                                                  check_suffixes, plain_text)
from torch_geometric_stream.cli.errors import UsageError
from torch_geometric_stream.cli.record_checks import (BadRecord, bad_entry, check_config,
                                                      check_number, check_tail_samples,
                                                      is_number)
from torch_geometric_stream.cli.record_origin import ORIGINS, origin, parse_by
from torch_geometric_stream.cli.report import APPROXIMATE, APPROXIMATE_NOTE
from torch_geometric_stream.cli.run import recorded_config
from torch_geometric_stream.evaluation import LABEL_QUERIES, plot_curves
from torch_geometric_stream.evaluation.bounded import approximate_tails
from torch_geometric_stream.files import atomic_write_csv

__all__ = ["LABEL_KEYS", "PAIRED_KEYS", "SETTING_KEYS", "add_compare_parser", "compare_command",
           "group_settings", "parse_baseline", "read_records", "setting_names",
           "shared_origins"]

#: Record entries that, with the resolved ``config``, make a run's setting.
SETTING_KEYS = ("dataset", "model", "label_ratio", "label_mask", "limit", "synthetic_samples",
                "preset", "label_delay", "learn_on_arrival", "query_threshold", "query_step")

#: Entries that settings compared seed by seed (``--baseline``) share: with them
#: one seed runs on the same samples with the same labeled positions.
PAIRED_KEYS = ("dataset", "label_ratio", "label_mask", "limit", "synthetic_samples")

#: Entries of :data:`PAIRED_KEYS` that only decide which samples are labeled: a
#: ``--baseline`` that names one pairs settings across its values (on the same samples).
LABEL_KEYS = ("label_ratio", "label_mask")

#: Entries of :data:`SETTING_KEYS` that a label query's run sets (:func:`_unset`).
_QUERY_KEYS = ("query_threshold", "query_step")

#: Entries every run record holds, which ``compare`` reads.
_REQUIRED = ("dataset", "model", "label_ratio", "seed", "accuracy", "config")

#: Columns of the table: (record entry, header); each is a mean over the seeds.
_METRICS = (("accuracy_last_20", "last 20 %"), ("balanced_accuracy", "balanced"),
            ("kappa_m", "kappa_m"), ("ms_per_sample_median", "ms/sample"))

#: Headers of the columns ``--baseline`` adds to the table.
_PAIRED_HEADERS = ("accuracy diff", "balanced diff", "seeds higher")

#: Columns ``--baseline`` adds to the CSV (see :func:`_write_csv`).
_PAIRED_COLUMNS = ("baseline", "accuracy_diff", "balanced_accuracy_diff", "seeds_higher",
                   "seeds_tied", "seeds_paired")

#: The entries :func:`_pairing_keys` gives, in words.
_PAIRING_WORDS = {"model": "model", "dataset": "stream", "label_ratio": "label ratio",
                  "label_mask": "label mask",
                  "limit": "limit", "synthetic_samples": "synthetic length"}

#: Joins a list's items in a row name (``feature_range=-1.0:1.0``, as the flag takes it).
_LIST_SEPARATOR = ":"

Record = dict[str, Any]
Setting = tuple


def read_records(paths: Sequence[Path]) -> list[tuple[Path, Record]]:
    """Each run record with its file: a file given must be one; a folder gives
    the run records among its ``*.json`` files (``tune``'s folder also holds its
    best configuration, which is none); a note on stderr names the partial
    records of interrupted runs it leaves out.

    A file reached twice (named twice, or named and in a folder given) counts once.

    Raises:
        UsageError: a file that is not a ``run`` record (unreadable, no JSON, an
            entry missing), or a folder without one.
    """
    records = []
    for path in map(Path, paths):
        if not path.exists():
            raise UsageError(f"{path}: no such file or folder")
        if not path.is_dir():
            records.append((path, _read_record(path)))
            continue
        found, passed_over = [], []
        for file in sorted(path.glob("*.json")):
            try:
                found.append((file, _read_record(file)))
            except BadRecord:
                raise
            except UsageError as error:  # not a run record: a folder holds other JSON too
                passed_over.append(str(error))
        partials = _partial_records(path)
        if not found:
            raise UsageError(f"{path}: the folder holds no run record (*.json written by run)"
                             + "".join(f"; {why}" for why in passed_over[:1])
                             + (f" (and {len(passed_over) - 1} other *.json, none a run "
                                f"record)" if len(passed_over) > 1 else "")
                             + (f"; it {partials}" if partials else ""))
        if partials:  # the rows compared lack those runs: say so
            print(f"note: {path} {partials}", file=sys.stderr)
        records += found
    return _once_each(records)


def _partial_records(folder: Path) -> str:
    """What a folder's partial records of interrupted runs (``*.json.partial``)
    are, which compare leaves out and how to finish them; ``""`` for none."""
    partial = len(list(folder.glob("*.json.partial")))
    if not partial:
        return ""
    return (f"holds {partial} partial record{'s' * (partial != 1)} of interrupted runs "
            f"(*.json.partial), which compare leaves out: finish them (rerun them, with "
            f"--resume where they saved a checkpoint)")


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
    """Refuse a run record with an entry that ``compare`` reads but no run writes
    (a record edited by hand, or broken): a ``seed`` that is no integer; an
    ``accuracy`` or ``label_ratio`` that is no finite number, nor a metric of
    :data:`_METRICS` (which may be null: undefined, or absent from an older
    record); an entry of :data:`SETTING_KEYS` that is a list or an object; a
    ``config`` that is no object; ``tail_samples`` that are no object of integers
    in ``[1, n_samples]`` (with ``n_samples`` an integer >= 1).
    Each would be averaged as NaN, fail there or be marked approximate.
    Refuse too the record so far of a run that Ctrl-C stopped (``interrupted_at``,
    ``run``'s ``FILE.json.partial``), whose metrics cover only the samples done: it
    would be averaged as a finished run. (``curve`` is checked where ``--plot``
    reads it, :func:`_curve`.)

    Raises:
        BadRecord: the first such entry, named with its value.
    """
    if "interrupted_at" in record:
        raise BadRecord(f"{path}: the record of a run interrupted after sample "
                        f"{record['interrupted_at']}, not a finished run: finish it (rerun "
                        f"it, with --resume where it saved a checkpoint) or leave it out")
    check_number(path, record, "seed", integer=True)
    for key in ("accuracy", "label_ratio"):
        check_number(path, record, key)
    for key, _ in _METRICS:
        if record.get(key) is not None:
            check_number(path, record, key)
    for key in SETTING_KEYS:
        if isinstance(record.get(key), (list, dict)):
            raise bad_entry(path, key, "a single value (no list or object)", record[key])
    check_config(path, record)
    check_tail_samples(path, record)


def _curve(path: Path, record: Record) -> dict[str, list] | None:
    """The running-accuracy ``curve`` of a record read from ``path``; ``None``
    where it holds none.

    Raises:
        BadRecord: a curve that is no object of lists ``position`` and
            ``running_accuracy`` of finite numbers, of one length.
    """
    curve = record.get("curve")
    if not curve:
        return None
    lists: list[Any] = ([curve.get(key) for key in ("position", "running_accuracy")]
                        if isinstance(curve, dict) else [None])
    if not (all(isinstance(values, list) and all(map(is_number, values)) for values in lists)
            and len(set(map(len, lists))) == 1):
        raise bad_entry(path, "curve", "an object of lists position and running_accuracy "
                        "of finite numbers, of one length", curve)
    return curve


def _setting(path: Path, record: Mapping[str, Any], by: Sequence[str]) -> Setting:
    """The setting of a record read from ``path``: :data:`SETTING_KEYS` (a record
    older than the preset and the label mask ran the paper's, one older than the
    label delay learned every label at once), its configuration,
    comparable with newer records
    (:func:`~torch_geometric_stream.cli.run.recorded_config`), and its origin
    (:func:`~torch_geometric_stream.cli.record_origin.origin`) for each of ``by``."""
    known = {"preset": "paper", "label_mask": "paper", "label_delay": 0}
    return (*(record.get(key, known.get(key)) for key in SETTING_KEYS),
            json.dumps(recorded_config(record), sort_keys=True),
            json.dumps({what: origin(path, record, what) for what in by}))


def group_settings(records: Sequence[tuple[Path, Record]], by: Sequence[str] = ()
                   ) -> dict[Setting, list[tuple[Path, Record]]]:
    """The runs of each setting, seeds in order; runs of one setting that differ
    in an origin of ``by`` (``--by``) are settings of their own.

    Raises:
        UsageError: two files of one setting and seed (which to count is the user's
            call), naming the ``--by`` that would tell them apart.
    """
    groups: dict[Setting, list[tuple[Path, Record]]] = {}
    for path, record in records:
        runs = groups.setdefault(_setting(path, record, by), [])
        twin = next(((other, seen) for other, seen in runs if seen["seed"] == record["seed"]),
                    None)
        if twin is not None:
            raise UsageError(f"{twin[0]} and {path} are runs of one setting and seed "
                             f"{record['seed']}: give one of them"
                             + _telling_apart(twin, (path, record)))
        runs.append((path, record))
    for runs in groups.values():
        runs.sort(key=lambda run: run[1]["seed"])
    return groups


def _telling_apart(*runs: tuple[Path, Record]) -> str:
    """How ``--by`` could tell ``runs`` (two files of one setting and seed) apart:
    the origins in which they differ, or that there is none."""
    differing = [what for what in ORIGINS
                 if len({origin(path, record, what) for path, record in runs}) > 1]
    if not differing:
        return f" (--by cannot tell them apart: they share {_listed(list(ORIGINS))})"
    return (f", or tell them apart with --by {differing[0]}"
            + (f" (they differ in {_listed(differing)})" if len(differing) > 1 else ""))


def _listed(words: Sequence[str]) -> str:
    """``a, b and c``."""
    return " and ".join(filter(None, (", ".join(words[:-1]), words[-1])))


def setting_names(settings: Sequence[Setting]) -> dict[Setting, tuple[str, str]]:
    """``("<model> on <dataset> at <ratio>", details)`` for each setting; the
    details name its ``--by`` origins but those all the settings share
    (:func:`shared_origins`, said once above the table), then the entries
    (``preset``, ``label_mask``, ``limit``, configuration) whose values differ among
    the settings of that model, stream and label ratio (``""`` where there are none:
    the first part tells the setting from the others)."""
    entries = {setting: _entries(setting) for setting in settings}
    shared = shared_origins([_origins(setting) for setting in settings])
    names = {}
    for setting, entry in entries.items():
        origins = {what: value for what, value in _origins(setting).items()
                   if what not in shared}
        peers = [entries[other] for other in settings if other[:3] == setting[:3]]
        differing = [key for key in sorted(entry) if key not in _origins(setting)
                     and _differs(key, peers) and not _unset(key, entry)]
        dataset, model, ratio = setting[:3]
        names[setting] = (f"{model} on {dataset} at {ratio:g}",
                          ", ".join(f"{key}={_plain(entry[key])}"
                                    for key in [*origins, *differing]))
    return names


def _differs(key: str, entries: Sequence[Mapping[str, Any]]) -> bool:
    """Whether ``entries`` (settings' :func:`_entries`) hold several values of
    ``key``, counting none where it does not apply (:func:`_unset`)."""
    return len({json.dumps(entry.get(key), sort_keys=True) for entry in entries
                if not _unset(key, entry)}) > 1


def _unset(key: str, entry: Mapping[str, Any]) -> bool:
    """Whether the entry ``key`` does not apply to the setting of ``entry``
    (:func:`_entries`): ``learn_on_arrival`` without a label delay, a query's
    options under a label mask. (A record of a delay older than
    ``learn_on_arrival`` lacks it: held, it is set apart by its ``None``.)"""
    if key == "learn_on_arrival":
        return not entry.get("label_delay")
    return key in _QUERY_KEYS and entry.get("label_mask") not in LABEL_QUERIES


def shared_origins(origins: Sequence[Mapping[str, str]]) -> dict[str, str]:
    """The ``--by`` origins (each setting's, as :func:`_origins` gives them) whose
    value all of several settings share, in the order given; none for one setting,
    whose name keeps them."""
    if len(origins) < 2:
        return {}
    return {what: value for what, value in origins[0].items()
            if all(other[what] == value for other in origins[1:])}


def _entries(setting: Setting) -> dict[str, Any]:
    """A setting's entries by name: those of :data:`SETTING_KEYS`, its
    configuration and its ``--by`` origins."""
    count = len(SETTING_KEYS)
    return {**dict(zip(SETTING_KEYS, setting[:count])), **json.loads(setting[count]),
            **_origins(setting)}


def _origins(setting: Setting) -> dict[str, str]:
    """A setting's ``--by`` origins by name, in the order given."""
    return json.loads(setting[len(SETTING_KEYS) + 1])


def _full_name(name: tuple[str, str]) -> str:
    """A setting's name from :func:`setting_names`'s pair: ``base (details)``."""
    base, details = name
    return f"{base} ({details})" if details else base


def _plain(value: Any) -> str:
    """A configuration value as a flag would give it: ``[-1.0, 1.0]`` as ``-1.0:1.0``."""
    if isinstance(value, list):
        return _LIST_SEPARATOR.join(map(str, value))
    return str(value)


def _names_value(text: str, value: Any) -> bool:
    """Whether ``text`` is ``value`` as a row name prints it (:func:`_plain`),
    numbers read as numbers: ``1e-3`` is ``0.001``, ``-1:1`` is ``[-1.0, 1.0]``;
    an on/off entry's in any case: ``true`` is ``True``, as ``tune --grid`` gives it."""
    if isinstance(value, bool):
        return text.strip().lower() == str(value).lower()
    return _parts(text) == _parts(_plain(value))


def _parts(text: str) -> list[float | str]:
    """The items of a printed value, each a number where it reads as a finite one."""
    parts: list[float | str] = []
    for part in text.split(_LIST_SEPARATOR):
        try:
            number = float(part)
        except ValueError:
            number = math.nan
        parts.append(number if math.isfinite(number) else part.strip())
    return parts


def _mean(runs: Sequence[tuple[Path, Record]], key: str) -> float | None:
    values = [record[key] for _, record in runs if record.get(key) is not None]
    return float(np.mean(values)) if values else None


def parse_baseline(specs: Sequence[str]) -> dict[str, str]:
    """``["model=sledge", "robust-window=None"]`` -> ``{"model": "sledge",
    "robust_window": "None"}`` (a key as the row names print it; ``-`` reads as ``_``).

    Raises:
        UsageError: a spec without ``=`` or value, a key given twice, or one of
            :data:`PAIRED_KEYS` but :data:`LABEL_KEYS` (every setting compared seed by
            seed runs on the same samples).
    """
    baseline: dict[str, str] = {}
    for spec in specs:
        key, sep, value = spec.partition("=")
        key, value = key.strip().replace("-", "_"), value.strip()
        if not sep or not key or not value:
            raise UsageError(f"--baseline {spec!r}: expected KEY=VALUE, e.g. model=sledge")
        if key in PAIRED_KEYS and key not in LABEL_KEYS:
            raise UsageError(f"--baseline {spec!r}: the settings compared seed by seed run "
                             f"on the same samples, so they share their {key}; name an entry "
                             f"in which they differ")
        if key in baseline:
            raise UsageError(f"--baseline {key} given twice")
        baseline[key] = value
    return baseline


def _pairing_keys(baseline: Mapping[str, str]) -> tuple[str, ...]:
    """The entries that settings compared seed by seed with ``baseline`` share:
    the model unless it names one (each model then has its own baseline), and
    :data:`PAIRED_KEYS` but those of :data:`LABEL_KEYS` it names."""
    return ("model",) * ("model" not in baseline) + tuple(
        key for key in PAIRED_KEYS if key not in baseline)


def _pairing(setting: Setting, keys: Sequence[str]) -> tuple:
    """The values of ``keys`` (:func:`_pairing_keys`) in ``setting``: the settings
    compared with it share them."""
    return tuple(setting[SETTING_KEYS.index(key)] for key in keys)


def _pairing_words(keys: Sequence[str]) -> str:
    """``keys`` (:func:`_pairing_keys`) in words: ``stream, label mask and limit``."""
    return _listed([_PAIRING_WORDS[key] for key in keys])


def _given(baseline: Mapping[str, str]) -> str:
    """``baseline`` as given: ``model=sledge lr=0.001``."""
    return " ".join(f"{key}={value}" for key, value in baseline.items())


def _baselines(names: Mapping[Setting, tuple[str, str]], baseline: Mapping[str, str]
               ) -> dict[tuple, Setting]:
    """The baseline of each group of settings compared seed by seed (keyed by
    :func:`_pairing`): the setting of ``names`` (:func:`setting_names`) whose
    entries are all of ``baseline``'s values; a group without one is left out.

    Raises:
        UsageError: a ``KEY=VALUE`` no setting has (naming the values ``KEY`` has),
            no setting with all of them, or several in one group (naming them).
    """
    entries = {setting: _entries(setting) for setting in names}
    for key, text in baseline.items():
        values = {_plain(entry[key]) for entry in entries.values() if key in entry}
        if not any(_names_value(text, entry[key]) for entry in entries.values() if key in entry):
            raise UsageError(f"--baseline {key}={text}: " + (
                f"no setting has {key}={text}; its values here: {', '.join(sorted(values))}"
                if values else f"no setting has the entry {key}"
                + f" (add --by {key})" * (key in ORIGINS)))
    found: dict[tuple, list[Setting]] = {}
    keys = _pairing_keys(baseline)
    for setting, entry in entries.items():
        if all(key in entry and _names_value(text, entry[key]) for key, text in baseline.items()):
            found.setdefault(_pairing(setting, keys), []).append(setting)
    if not found:
        raise UsageError(f"--baseline {_given(baseline)}: no setting has all of these")
    for group in found.values():
        if len(group) > 1:
            matching = "; ".join(sorted(_full_name(names[setting]) for setting in group))
            raise UsageError(f"--baseline {_given(baseline)}: {len(group)} settings of "
                             f"one {_pairing_words(keys)} match ({matching}): add a "
                             f"--baseline for an entry in which they differ")
    return {pairing: group[0] for pairing, group in found.items()}


def _paired(groups: Mapping[Setting, list[tuple[Path, Record]]],
            names: Mapping[Setting, tuple[str, str]],
            baseline: Mapping[str, str]) -> dict[Setting, dict[str, Any]]:
    """For each setting of ``groups`` (named by ``names``, :func:`setting_names`):
    ``{"baseline": True}`` for a baseline; else against its
    group's baseline (named in ``"versus"``) over the seeds both have, the mean
    difference of ``"accuracy"`` and ``"balanced_accuracy"`` (None where no such
    seed's records both hold it), the seeds ``"higher"`` and ``"tied"`` on
    accuracy of ``"seeds"`` in all; or ``{"note": why}`` where there is none."""
    baselines, keys = _baselines(names, baseline), _pairing_keys(baseline)
    paired: dict[Setting, dict[str, Any]] = {}
    for setting, runs in groups.items():
        reference = baselines.get(_pairing(setting, keys))
        if reference is None:
            own = ", ".join(f"{key}={_plain(value)}"
                            for key, value in zip(keys, _pairing(setting, keys)))
            paired[setting] = {"note": f"no {_given(baseline)} among the settings of its "
                                       f"{_pairing_words(keys)} ({own})"}
            continue
        if reference == setting:
            paired[setting] = {"baseline": True}
            continue
        theirs = {record["seed"]: record for _, record in groups[reference]}
        pairs = [(record, theirs[record["seed"]]) for _, record in runs
                 if record["seed"] in theirs]
        if not pairs:
            paired[setting] = {"note": f"no seed in common with its baseline "
                                       f"{_full_name(names[reference])}"}
            continue
        accuracy = [record["accuracy"] - other["accuracy"] for record, other in pairs]
        balanced = [record["balanced_accuracy"] - other["balanced_accuracy"]
                    for record, other in pairs if record.get("balanced_accuracy") is not None
                    and other.get("balanced_accuracy") is not None]
        paired[setting] = {"versus": _full_name(names[reference]),
                           "accuracy": float(np.mean(accuracy)),
                           "balanced_accuracy": float(np.mean(balanced)) if balanced else None,
                           "higher": sum(difference > 0 for difference in accuracy),
                           "tied": sum(difference == 0 for difference in accuracy),
                           "seeds": len(pairs)}
    return paired


def _rows(groups: Mapping[Setting, list[tuple[Path, Record]]],
          baseline: Mapping[str, str]) -> list[dict[str, Any]]:
    """One row per setting, sorted by stream, label ratio, then accuracy (best
    first); with its paired comparison (:func:`_paired`) where ``baseline`` is given."""
    names = setting_names(list(groups))
    paired = _paired(groups, names, baseline) if baseline else {}
    rows = []
    for setting, runs in groups.items():
        accuracy = [record["accuracy"] for _, record in runs]
        base, details = names[setting]
        rows.append({"setting": _full_name(names[setting]),
                     "base": base, "details": details, "dataset": setting[0],
                     "label_ratio": setting[2], "origins": _origins(setting),
                     "seeds": [record["seed"] for _, record in runs],
                     "accuracy": float(np.mean(accuracy)),
                     "accuracy_std": float(np.std(accuracy, ddof=1)) if len(runs) > 1 else None,
                     **{key: _mean(runs, key) for key, _ in _METRICS},
                     "approximate": {key for _, record in runs
                                     for key in approximate_tails(record)
                                     if key in dict(_METRICS)},
                     "paired": paired.get(setting), "runs": runs})
    return sorted(rows, key=lambda row: (str(row["dataset"]), row["label_ratio"],
                                         -row["accuracy"]))


def _table(rows: Sequence[Mapping[str, Any]]) -> str:
    """The table of ``rows``, aligned; where several rows share their model, stream
    and label ratio, that heads the table on a line of its own and each row is
    named by its details alone (a grid's rows are long enough); the ``--by``
    origins they all share (:func:`shared_origins`, left out of the row names)
    follow on a line ``all rows: host=..., commit=...``. A mean over a tail
    accuracy that is not exact (a ``--history bounded`` record's) ends in
    :data:`~torch_geometric_stream.cli.report.APPROXIMATE`, explained under the
    table, as is each paired comparison left blank."""
    bases = {row["base"] for row in rows}
    shared = bases.pop() if len(rows) > 1 and len(bases) == 1 else None
    paired = rows[0]["paired"] is not None
    headers = ["setting", "seeds", "accuracy", *(header for _, header in _METRICS),
               *_PAIRED_HEADERS * paired]
    lines = []
    for row in rows:
        accuracy = f"{row['accuracy']:.4f}" + ("" if row["accuracy_std"] is None
                                               else f" ± {row['accuracy_std']:.4f}")
        lines.append([row["details"] if shared else row["setting"], str(len(row["seeds"])),
                      accuracy,
                      *("-" if row[key] is None else
                        f"{row[key]:.2f}" if key == "ms_per_sample_median" else
                        f"{row[key]:.4f}" + APPROXIMATE * (key in row["approximate"])
                        for key, _ in _METRICS),
                      *(_paired_cells(row["paired"]) if paired else ())])
    widths = [max(len(cell) for cell in column) for column in zip(headers, *lines)]
    notes = [f"{row['setting']}: no paired difference: {row['paired']['note']}"
             for row in rows if paired and "note" in row["paired"]]
    notes += [APPROXIMATE_NOTE] * any(row["approximate"] for row in rows)
    common = shared_origins([row["origins"] for row in rows])
    heads = [shared] * (shared is not None) + [
        "all rows: " + ", ".join(f"{what}={value}" for what, value in common.items())] * bool(
        common)
    return "".join(f"{head}\n" for head in heads) + "\n".join([
        "  ".join(cell.ljust(width) if i == 0 else cell.rjust(width)
                  for i, (cell, width) in enumerate(zip(line, widths))).rstrip()
        for line in [headers, *lines]] + notes)


def _paired_cells(paired: Mapping[str, Any]) -> list[str]:
    """The cells under :data:`_PAIRED_HEADERS` of a row's paired comparison
    (:func:`_paired`): ``+0.0123``, ``2/3`` (``2/3, 1 tied``); blank where none."""
    if "baseline" in paired:
        return ["baseline", "", ""]
    if "note" in paired:
        return ["", "", ""]
    tied = f", {paired['tied']} tied" if paired["tied"] else ""
    return [f"{paired['accuracy']:+.4f}",
            "-" if paired["balanced_accuracy"] is None else f"{paired['balanced_accuracy']:+.4f}",
            f"{paired['higher']}/{paired['seeds']}{tied}"]


def _write_csv(rows: Sequence[Mapping[str, Any]], path: Path) -> None:
    """The table as CSV: a column for each ``--by`` origin after the label ratio;
    with a paired comparison, its columns: ``baseline`` (the baseline's name,
    ``baseline`` on its own row), the mean differences and the counts of seeds,
    blank where there is none."""
    paired = rows[0]["paired"] is not None
    columns = ["setting", "dataset", "label_ratio", *rows[0]["origins"], "seeds", "accuracy",
               "accuracy_std",
               *(key for key, _ in _METRICS), *_PAIRED_COLUMNS * paired, "config"]
    lines = []
    for row in rows:
        comparison = row["paired"] or {}
        cells = {**row, **row["origins"], "seeds": " ".join(map(str, row["seeds"])),
                 "baseline": ("baseline" if "baseline" in comparison
                              else comparison.get("versus")),
                 **{f"{key}_diff": comparison.get(key)
                    for key in ("accuracy", "balanced_accuracy")},
                 **{f"seeds_{key}": comparison.get(key) for key in ("higher", "tied")},
                 "seeds_paired": comparison.get("seeds"),
                 "config": json.dumps(recorded_config(row["runs"][0][1]), sort_keys=True)}
        lines.append(["" if cells[column] is None else cells[column] for column in columns])
    atomic_write_csv(path, [columns, *lines], lineterminator="\n")


def _curves(rows: Sequence[Mapping[str, Any]]) -> dict[str, tuple[list, np.ndarray]]:
    """Each setting's running accuracy, the mean over its seeds where their curves
    share positions (the same stream and prefix), else one curve per seed; named
    by their details alone where they share model, stream and label ratio."""
    curves = {}
    one_base = len({row["base"] for row in rows}) == 1
    for row in rows:
        name = (row["details"] or "the setting") if one_base else row["setting"]
        drawn = {record["seed"]: _curve(path, record) for path, record in row["runs"]}
        runs = {seed: curve for seed, curve in drawn.items() if curve is not None}
        positions = {tuple(curve["position"]) for curve in runs.values()}
        if len(positions) == 1:
            accuracy = np.mean([curve["running_accuracy"] for curve in runs.values()], axis=0)
            seeds = "" if len(runs) == 1 else f", mean of {len(runs)} seeds"
            curves[f"{name}{seeds}"] = (list(positions.pop()), accuracy)
        else:
            for seed, curve in runs.items():
                curves[f"{name}, seed {seed}"] = (curve["position"],
                                                  np.asarray(curve["running_accuracy"]))
    return curves


def compare_command(args: argparse.Namespace) -> int:
    """Print the table of ``args.records`` and write its CSV and plot if asked."""
    outputs = (("--csv", args.csv), ("--plot", args.plot))
    check_output_files(outputs, plot=args.plot)
    check_files_apart([("a record compared", path) for path in args.records
                       if not path.is_dir()], outputs)
    check_suffixes([("--csv", args.csv, ".csv")])
    baseline, by = parse_baseline(args.baseline), parse_by(args.by)
    rows = _rows(group_settings(read_records(args.records), by), baseline)
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
    compare.add_argument("--baseline", action="append", default=[], metavar="KEY=VALUE",
                         help="compare seed by seed with the setting of this entry, as the "
                              "row names print it (e.g. model=sledge, robust_window=None, "
                              "supervise_graph=false: an on/off entry in any case; "
                              "repeat it for several, which must all hold), within each "
                              "model (across models where it names one), stream, label "
                              "ratio, label mask, limit and synthetic length "
                              "(label_ratio=R or label_mask=NAME pairs across ratios or "
                              "masks, e.g. a label query against --label-mask paper): "
                              "each other setting gets the mean, over the seeds both have, "
                              "of its accuracy and balanced accuracy minus the baseline's, "
                              "and on how many of these seeds its accuracy is higher (a tie "
                              "is counted apart)")
    compare.add_argument("--by", action="append", default=[], metavar="WHAT",
                         help="make where a run comes from part of its setting, so that "
                              "reruns of one setting are rows of their own (and can be the "
                              "--baseline, e.g. --by folder --baseline folder=NAME): "
                              "folder (the record file's folder), commit (git_commit, "
                              "-dirty marked), host (processor on OS release), torch, "
                              "package (their versions); repeat it or give a comma list; "
                              "a record without the entry reads unknown; a value all rows "
                              "share is said once above the table")
    compare.set_defaults(handler=compare_command)
