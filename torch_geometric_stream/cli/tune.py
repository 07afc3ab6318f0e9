"""The ``tune`` command: a resumable grid search over ``run``'s configuration options.

Each grid point and seed is one ``run`` writing one JSON into ``--out-dir``;
a point whose JSON exists is not run again, so a search can be stopped and
continued. Runs are ranked only if they agree on every setting outside the
grid: a reused JSON made under other settings than its point's (older defaults,
another ``--config``) or on another copy of the stream (its ``data_sha256``) is
an error naming the setting, never silently mixed in. The
ranked table is printed and the best configuration is written
as a JSON that ``run --config`` accepts; the ranking is also written as
``ranking_<model>_<dataset>_<ratio>.csv`` (``<ratio>_preset=package`` under
``--preset package``, ``<ratio>_mask=NAME`` with another ``--label-mask NAME``
than ``paper``, followed by the query options that mask reads at their values
(``_mask=fixed-uncertainty_query-threshold=0.9``), ``<ratio>_label-delay=N`` with
``--label-delay N``: their runs get files of their own). A stream file's
``<dataset>`` is its name and 8 hex digits of the SHA-256 of its bytes and
``--label-column`` (``mine.csv-1f0e3a9c``): another file of that name, or the
file edited, gets runs of its own. ``--synthetic-drift D`` names the stream
``synthetic-D``, as its runs' records do; the files of the default drift (sudden)
keep the name ``synthetic`` of searches made before the option, though their
records name the stream ``synthetic-sudden``. The ranking and best configuration
are the grid's: a search into an ``--out-dir`` whose ranking file ranks points
that its grid lacks (another grid's, whose files it would overwrite) is refused
before any run; the same points, in any order, resume, and a grid grown by
values ranks the points of the ranking with its new ones. ``--config FILE.json``
is every point's base, which the grid overrides (as flags override ``run
--config``): the names end ``_config=`` and 8 hex digits of the SHA-256 of its
entries.

A search on one seed can be confirmed on more: ``--confirm-top 3
--confirm-seeds 2000,4000`` runs the three best points of the first stage on
the extra seeds and ranks them over all their seeds, above the points that
ran on the first stage's seeds only (the ``seeds`` column says how many).

    python -m torch_geometric_stream tune --dataset GSAD --label-ratio 0.01 \\
        --grid lr=1e-4,1e-3,5e-3 --grid lam=0.01,0.1 --seeds 0,2000 --limit 2000 --jobs 4

An on/off option is gridded by ``true`` / ``false``: ``--grid
supervise-graph=true,false`` runs ``--supervise-graph`` and
``--no-supervise-graph``. A pair option by ``LOW:HIGH``: ``--grid
feature-range=-1:1,0:1`` runs ``--feature-range -1 1`` and ``--feature-range 0 1``.
A grid of several positive lambdas where ``supervise_graph`` is off and the
weight decay 0 is run, with a warning: there lambda only scales ``f_E``'s
gradient, which Adam's step normalizes, so those points train the same model up
to rounding.

``--metric NAME`` ranks by another entry of the run records than ``accuracy``:
``balanced_accuracy``, ``kappa``, ``kappa_m``, ``kappa_t`` (for a stream with a
majority class, where always predicting it scores a high accuracy) or a tail
accuracy ``accuracy_last_20`` / ``_10`` / ``_5``. The ranking, the points
``--confirm-top`` confirms, the table, the CSV and the best configuration all
follow it; the table and the CSV show the accuracy too. Its files are
``ranking_<model>_<dataset>_<ratio>_by-<metric>.csv`` and
``best_<model>_<dataset>_<ratio>_by-<metric>.json``, beside those of the accuracy
ranking of the same search, whose runs they share. A run record written before
runs recorded the metric is refused by name. Under ``--history bounded`` a tail
accuracy is that of the last ``tail_samples`` samples of the record (within
0.0049 of the exact one), a span the same for every bounded run of the stream; the
runs ranked must agree on it (a run of the other history may not, on a stream of
more than 4096 samples): JSONs in ``--out-dir`` of another span than the missing
runs would take are refused before those run.

``--jobs N`` runs N grid runs at once, each in its own process (see
:mod:`~torch_geometric_stream.cli.parallel`).
"""
from __future__ import annotations

import argparse
import csv
import hashlib
import itertools
import json
import statistics
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

from torch_geometric_stream.cli.arguments import (MAX_THREADS, add_root_option, check_device,
                                                  check_files_apart, check_folder,
                                                  check_output_file, check_suffixes, parse_seeds,
                                                  plain_text, positive_int, read_config_file,
                                                  thread_count)
from torch_geometric_stream.cli.configs import (DEFAULT_CONFIG, PRESETS, check_given,
                                                resolve_config)
from torch_geometric_stream.cli.errors import Interrupted, UsageError, one_line
from torch_geometric_stream.cli.models import MODEL_NAMES, check_model_device, config_keys
from torch_geometric_stream.cli.parallel import run_commands
from torch_geometric_stream.cli.record_checks import (BadRecord, check_config,
                                                      check_n_samples, check_number,
                                                      check_tail_samples, is_number)
from torch_geometric_stream.cli.label_protocol import (add_label_protocol_options,
                                                       label_delay_words, learn_on_arrival,
                                                       query_settings, query_words)
from torch_geometric_stream.cli.run import (DATA_DIGEST, DEFAULT_MODEL, OLDER_RECORDS,
                                            OVERRIDE_KEYS, SYNTHETIC_DRIFT, SYNTHETIC_SAMPLES,
                                            check_run, data_digest, labels_after_the_end,
                                            load_stream, recorded_config, synthetic_drift)
from torch_geometric_stream.datasets import (DATASETS, StreamDataset, is_stream_file,
                                             resolve_dataset_name, stream_file_digest)
from torch_geometric_stream.datasets.csv_stream import STDIN
from torch_geometric_stream.datasets.synthetic import DRIFTS as SYNTHETIC_DRIFTS
from torch_geometric_stream.evaluation import HISTORIES, LABEL_QUERIES
from torch_geometric_stream.evaluation.bounded import kept_tail_span
from torch_geometric_stream.evaluation.metrics import TAIL_FRACTIONS, tail_size
from torch_geometric_stream.files import atomic_write_csv, atomic_write_text
from torch_geometric_stream.models import SLEDGE_VARIANTS

__all__ = ["METRICS", "add_tune_parser", "lambda_warning", "parse_grid", "tune_command"]

#: Entries of every run record (either history) that ``--metric`` ranks by, the
#: higher the better: the accuracy, the class metrics of
#: :func:`~torch_geometric_stream.evaluation.class_metrics` and the tail accuracies.
METRICS = ("accuracy", "balanced_accuracy", "kappa", "kappa_m", "kappa_t", *TAIL_FRACTIONS)

#: Entries set by an on/off flag (``--NAME`` / ``--no-NAME``): those whose default is a bool.
_SWITCHES = tuple(key for key, value in DEFAULT_CONFIG.items() if isinstance(value, bool))
#: Entries set by an option of two values (``--feature-range LOW HIGH``): those whose
#: default is a pair; a grid gives each value as ``LOW:HIGH``.
_PAIRS = tuple(key for key, value in DEFAULT_CONFIG.items() if isinstance(value, list))
_SWITCH_VALUES = {"true": "true", "yes": "true", "on": "true", "1": "true",
                  "false": "false", "no": "false", "off": "false", "0": "false"}


def _grid_value(key: str, value: str, spec: str) -> str:
    """``value`` as the grid keeps it: an on/off entry's as ``true`` or ``false``, a
    pair entry's as ``LOW:HIGH``."""
    if key in _PAIRS:
        low, sep, high = value.partition(":")
        if not sep or not low.strip() or not high.strip() or ":" in high:
            raise UsageError(f"--grid {spec!r}: {key} is a pair; give LOW:HIGH, got {value!r}")
        return f"{low.strip()}:{high.strip()}"
    if key not in _SWITCHES:
        return value
    switch = _SWITCH_VALUES.get(value.lower())
    if switch is None:
        raise UsageError(f"--grid {spec!r}: {key} is on or off; give true or false, "
                         f"got {value!r}")
    return switch


def parse_grid(specs: list[str]) -> dict[str, list[str]]:
    """``["lr=1e-4,1e-3", "lam=0.1"]`` -> ``{"lr": ["1e-4", "1e-3"], "lam": ["0.1"]}``."""
    grid: dict[str, list[str]] = {}
    for spec in specs:
        key, sep, text = spec.partition("=")
        key = key.strip().replace("-", "_")
        values = [value.strip() for value in text.split(",") if value.strip()]
        if not key or not values:
            raise UsageError(f"--grid {spec!r}: expected NAME=V1,V2,...")
        if key not in OVERRIDE_KEYS:
            raise UsageError(f"--grid {spec!r}: {key!r} is not a tunable option; choose from "
                             f"{', '.join(OVERRIDE_KEYS)}")
        if key in grid:
            raise UsageError(f"--grid {key} given twice; give all its values in one --grid "
                             f"{key.replace('_', '-')}=V1,V2,...")
        grid[key] = [_grid_value(key, value, spec) for value in values]
        repeated = sorted({value for value in grid[key] if grid[key].count(value) > 1})
        if repeated:
            raise UsageError(f"--grid {spec!r}: {', '.join(repeated)} given twice")
    return grid


def _point_name(point: dict[str, str]) -> str:
    return "_".join(f"{key}={value}" for key, value in point.items()) or "defaults"


def _by_metric(metric: str) -> str:
    """The end of the name of a ranking or best configuration by ``metric``:
    nothing for ``accuracy``, ``_by-<metric>`` else (the accuracy's files stay)."""
    return "" if metric == "accuracy" else f"_by-{metric}"


def _search_name(args: argparse.Namespace, config_file: Optional[dict] = None) -> str:
    """``<model>_<dataset>_<ratio>``, with ``_mask=<name>`` unless the label mask is
    ``paper`` (a label query's options after it, as :func:`_mask_options` gives
    them: ``_mask=fixed-uncertainty_query-threshold=0.9``), ``_label-delay=<N>`` for
    a delay (``<N>-held`` with ``--no-learn-on-arrival``) and ``_preset=<name>``
    unless the preset is ``paper``: runs of different label protocols or presets
    never share (or skip on) a file. Made once per search (kept as
    ``args.search_name``): the ``--config`` file (``config_file``: its entries,
    if read) and a stream file are read for it once, not for each grid run's
    file name."""
    if getattr(args, "search_name", None) is None:
        args.search_name = _new_search_name(args, config_file)
    return args.search_name


def _new_search_name(args: argparse.Namespace, config_file: Optional[dict]) -> str:
    """:func:`_search_name`, made."""
    preset = "" if args.preset == "paper" else f"_preset={args.preset}"
    held = "-held" if learn_on_arrival(args) is False else ""
    delay = f"_label-delay={args.label_delay}{held}" if args.label_delay else ""
    mask = "" if args.label_mask == "paper" else f"_mask={args.label_mask}" + "".join(
        f"_{key.replace('_', '-')}={value}" for key, value in _query_values(args).items())
    return (f"{args.model}_{_stream_name(args)}_{args.label_ratio:g}{mask}{delay}{preset}"
            f"{_config_name(args, config_file)}")


def _config_name(args: argparse.Namespace, config_file: Optional[dict]) -> str:
    """``_config=`` and 8 hex digits of the SHA-256 of the ``--config`` file's
    entries (``config_file`` if read; nothing without one): a search around
    another base configuration, or the file edited, gets runs of its own."""
    if args.config is None:
        return ""
    if config_file is None:
        config_file = read_config_file(args.config)
    entries = json.dumps(config_file, sort_keys=True)
    return f"_config={hashlib.sha256(entries.encode()).hexdigest()[:8]}"


def _query_values(args: argparse.Namespace) -> dict[str, float]:
    """The query options that the search's ``--label-mask`` reads, by entry, each
    given or at its default (:func:`~torch_geometric_stream.cli.run.query_settings`)."""
    return {key: value for key, value in query_settings(args).items() if value is not None}


def _mask_options(args: argparse.Namespace) -> list[str]:
    """The ``run`` options of the search's label mask: none for ``paper``, ``run``'s
    default, else ``--label-mask`` and the query options it reads, each at its value."""
    if args.label_mask == "paper":
        return []
    return ["--label-mask", args.label_mask,
            *itertools.chain.from_iterable((f"--{key.replace('_', '-')}", str(value))
                                           for key, value in _query_values(args).items())]


def _label_words(args: argparse.Namespace) -> str:
    """The search's label mask for its heading: nothing for ``paper``, `` (mask NAME)``
    for another mask, ``, labels asked by NAME`` and the query options it reads
    for a label query."""
    if args.label_mask not in LABEL_QUERIES:
        return "" if args.label_mask == "paper" else f" (mask {args.label_mask})"
    return query_words(args) + "".join(f", {key.replace('_', ' ')} {value}"
                                       for key, value in _query_values(args).items())


def _stream_name(args: argparse.Namespace) -> str:
    """``--dataset`` as a part of a file name: a stream file's own name (no folders)
    and ``-`` the digest of its bytes (with ``--limit``, of the part of a CSV its
    runs read) and ``--label-column``
    (:func:`~torch_geometric_stream.datasets.stream_file_digest`), so that two
    files of one name, or a file edited since, never share a JSON."""
    if not is_stream_file(args.dataset):
        # --synthetic-drift D: the name its runs report, as --dataset synthetic-D names
        # it; the default drift named keeps the name of a search that left it out
        drift = args.synthetic_drift and synthetic_drift(args.dataset, args.synthetic_drift)
        return f"synthetic-{drift}" if drift and drift != SYNTHETIC_DRIFT else args.dataset
    path = Path(args.dataset.strip())
    if not path.is_file():
        return path.name  # loading the stream names the problem, before any run
    return f"{path.name}-{stream_file_digest(path, args.label_column, args.limit)}"


def _run_path(args: argparse.Namespace, point: dict[str, str], seed: int) -> Path:
    """The JSON of one grid point and seed (a pair's ``LOW:HIGH`` written ``LOWtoHIGH``:
    Windows file names cannot hold a colon)."""
    name = _point_name(point).replace(":", "to")
    return args.out_dir / f"{_search_name(args)}_{name}_seed{seed}.json"


def _run_argv(args: argparse.Namespace, point: dict[str, str], seed: int,
              path: Path) -> list[str]:
    """The ``run`` arguments of one grid point and seed, writing ``path``."""
    argv = ["run", "--dataset", args.dataset, "--model", args.model, "--label-ratio",
            str(args.label_ratio), "--seed", str(seed), "--threads", str(args.threads),
            *_mask_options(args), "--label-delay", str(args.label_delay),
            *_arrival_flag(args), "--preset", args.preset,
            "--history", args.history, "--device", args.device, "--output", str(path),
            *(["--config", str(args.config)] if args.config is not None else []),
            *(["--quiet"] if args.quiet else []), "--grid-run"]
    argv += _stream_options(args)
    for key, value in point.items():
        flag = key.replace("_", "-")
        if key in _SWITCHES:
            argv.append(f"--{flag}" if value == "true" else f"--no-{flag}")
        elif key in _PAIRS:
            argv += [f"--{flag}", *value.split(":")]
        else:
            argv += [f"--{flag}", value]
    return argv


def _arrival_flag(args: argparse.Namespace) -> list[str]:
    """``--no-learn-on-arrival`` where the search holds a labeled row for its label."""
    return ["--no-learn-on-arrival"] if learn_on_arrival(args) is False else []


def _stream_options(args: argparse.Namespace) -> list[str]:
    """The ``run`` options that shape the stream, as the search was given them
    (``--root`` only for a named dataset: a stream file is read from its path)."""
    root = args.root is not None and not is_stream_file(args.dataset)
    return [*(["--root", str(args.root)] if root else []),
            *(["--label-column", args.label_column] if args.label_column is not None else []),
            *(["--limit", str(args.limit)] if args.limit is not None else []),
            *(["--synthetic-samples", str(args.synthetic_samples)]
              if args.synthetic_samples is not None else []),
            *(["--synthetic-drift", args.synthetic_drift]
              if args.synthetic_drift is not None else [])]


def _best_run_argv(args: argparse.Namespace, best_path: Path) -> list[str]:
    """The ``run`` command that repeats the search's best point: its configuration
    file holds configuration entries only, so the stream, model, label ratio and
    preset (and a label mask and delay) go on the command line."""
    argv = ["python", "-m", "torch_geometric_stream", "run", "--config", str(best_path),
            "--dataset", args.dataset, "--model", args.model, "--label-ratio",
            f"{args.label_ratio:g}", "--preset", args.preset, *_mask_options(args),
            *(["--label-delay", str(args.label_delay)] if args.label_delay else []),
            *_arrival_flag(args)]
    argv += _stream_options(args)
    return argv


def _number(value: Any) -> Optional[float]:
    """``value`` as a float, or ``None`` where it is none (the run names that error)."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def lambda_warning(dataset: str, label_ratio: float, model: str, preset: str,
                   points: list[dict[str, str]],
                   config_file: Optional[dict] = None) -> Optional[str]:
    """The warning for grid points that differ in a positive lambda only and run with
    ``supervise_graph`` off and no weight decay, or ``None``: ``f_E``'s only gradient
    is then lambda times the regularizer's, Adam's step does not depend on a
    gradient's scale, and such points train the same model up to rounding (see
    :class:`~torch_geometric_stream.SLeDGe`'s ``supervise_graph``)."""
    if not points or "lam" not in points[0] or "supervise_graph" not in config_keys(model):
        return None
    base = _base_config(dataset, label_ratio, model, preset, config_file)
    same: dict[tuple, list[str]] = {}
    for point in points:
        supervised = point.get("supervise_graph", str(base["supervise_graph"]).lower())
        decay = _number(point.get("weight_decay", base["weight_decay"]))
        lam = _number(point["lam"])
        if supervised == "false" and decay == 0 and lam is not None and lam > 0:
            rest = tuple(sorted((key, value) for key, value in point.items() if key != "lam"))
            same.setdefault(rest, []).append(point["lam"])
    repeated = sorted({lam for lams in same.values() if len(set(lams)) > 1 for lam in lams},
                      key=float)
    if not repeated:
        return None
    return (f"warning: lam {', '.join(repeated)} train the same model up to rounding where "
            f"supervise_graph is off and weight_decay is 0 ({model} on {dataset}, preset "
            f"{preset}): lambda then only scales f_E's gradient, which Adam's step "
            f"normalizes")


def _base_config(dataset: str, label_ratio: float, model: str, preset: str,
                 config_file: Optional[dict]) -> dict:
    """The configuration of the search's runs before the grid: the preset's
    settings for ``dataset`` and the ``--config`` file's entries (its keys and
    values checked as ``run`` checks them)."""
    try:
        name = resolve_dataset_name(dataset)
    except ValueError:
        name = dataset  # outside the registry (a synthetic stream): the package defaults
    return resolve_config(name, label_ratio, model, {}, config_file, preset=preset)


@dataclass
class _Ranked:
    """One grid point's scores over the seeds it was run with."""
    point: dict[str, str]
    seeds: list[int]
    score: float  # the mean of the metric ranked
    std: Optional[float]  # its sample std over the seeds; None for one seed
    accuracy: float  # the mean accuracy
    ms_per_sample: float
    config: dict  # its runs' configuration, an entry older records lack as they ran it


@dataclass
class _Expected:
    """What the runs of the search run with: each point's resolved configuration,
    by :func:`_point_name`, and the :func:`~torch_geometric_stream.cli.run.data_digest`
    of the stream."""
    configs: dict[str, dict]
    data_sha256: str


def _missing_runs(args: argparse.Namespace, points: list[dict[str, str]], seeds: list[int],
                  paths: dict[tuple[str, int], Path], expected: _Expected
                  ) -> list[tuple[list[str], Path]]:
    """The ``run`` arguments and JSON of every ``(point, seed)`` whose JSON does not
    exist yet (each one's path recorded in ``paths``), after checking that those
    there ran as ``expected``."""
    for point in points:
        for seed in seeds:
            paths[_point_name(point), seed] = _run_path(args, point, seed)
    present = {key: path for key, path in paths.items() if path.exists()}
    # before any run: stale JSONs cost no run
    present_records = _read_runs(present)
    _check_length(present_records, present, args)
    _check_protocol(present_records, present, args)
    _check_reused(present_records, present, expected, args.model)
    _check_metric(present_records, present, args.metric)
    missing = [(_run_argv(args, point, seed, path), path) for point in points for seed in seeds
               if not (path := paths[_point_name(point), seed]).exists()]
    if missing and present_records and args.metric in TAIL_FRACTIONS:
        _check_missing_span(present_records, present, args.metric, args.history)
    return missing


def _run_missing(args: argparse.Namespace, missing: list[tuple[list[str], Path]]) -> None:
    """Run the grid runs ``missing`` (of :func:`_missing_runs`), refusing a failed one."""
    codes = run_commands(missing, jobs=args.jobs, threads=args.threads, stop_on_failure=True,
                         quiet=args.quiet)
    failed = [path.name for (_, path), code in zip(missing, codes) if code not in (0, None)]
    if failed:
        raise UsageError(f"grid run(s) failed (see the errors above): {', '.join(failed)}")


#: Entries of a run's JSON that ranking reads.
_RANKED_ENTRIES = ("accuracy", "ms_per_sample_median", "config")


def _read_runs(paths: dict[tuple[str, int], Path]) -> dict[tuple[str, int], dict]:
    """The record of each grid run's JSON in ``paths``, by the same keys."""
    return {key: _read_run(path) for key, path in paths.items()}


def _read_run(path: Path) -> dict:
    """The record in grid run JSON ``path``.

    Raises:
        UsageError: a file that is not a run's JSON (cut short, or another file of
            that name), named with what is wrong; or a run's JSON with an entry
            that ranking reads but no run writes (edited by hand, or broken: an
            ``accuracy`` or ``ms_per_sample_median`` that is no finite number, a
            ``config`` that is no object, ``tail_samples`` that are no object of
            integers), named with its value as ``compare`` names it.
    """
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise _not_a_run(path, f"not JSON: {error}") from None
    if not isinstance(record, dict):
        raise _not_a_run(path, "not a JSON object")
    lacking = [entry for entry in _RANKED_ENTRIES if entry not in record]
    if lacking:
        raise _not_a_run(path, f"no {', '.join(lacking)}")
    with _delete_to_rerun():
        for entry in ("accuracy", "ms_per_sample_median"):
            check_number(path, record, entry)
        check_config(path, record)
        check_tail_samples(path, record)
    return record


@contextmanager
def _delete_to_rerun() -> Iterator[None]:
    """Let a :class:`~torch_geometric_stream.cli.record_checks.BadRecord` raised
    within say how to run its point again."""
    try:
        yield
    except BadRecord as error:
        raise UsageError(f"{error}; delete it to run its point again") from None


def _not_a_run(path: Path, problem: str) -> UsageError:
    return UsageError(f"{path} is not a grid run's JSON ({problem}); delete it to run its "
                      f"point again")


#: Stands for an entry a record lacks (``None`` is a value: an undefined kappa).
_ABSENT = object()


def _tail_span(record: dict, metric: str) -> int:
    """How many last samples tail accuracy ``metric`` of run ``record`` covers."""
    spans = record.get("tail_samples") or {}
    return spans.get(metric, tail_size(TAIL_FRACTIONS[metric], record["n_samples"]))


def _check_metric(records: dict[tuple, dict], paths: dict[tuple, Path], metric: str) -> None:
    """Raise unless every run of ``records`` holds ``metric`` as a finite number
    and, for a tail accuracy, an integer ``n_samples`` >= 1 and all take it over as
    many last samples (a ``--history bounded`` run over its ``tail_samples``, see
    :func:`~torch_geometric_stream.evaluation.bounded.approximate_tails`)."""
    for key, record in records.items():
        value = record.get(metric, _ABSENT)
        if value is _ABSENT:
            raise UsageError(f"{paths[key]} has no {metric} to rank by (a run record written "
                             f"before runs recorded it); delete it to run its point again, or "
                             f"choose another --metric")
        if value is None:
            raise UsageError(f"{paths[key]}: {metric} is undefined for its run (null: the "
                             f"reference classifier of the kappa is right on every sample); "
                             f"choose another --metric")
        if not is_number(value):
            raise UsageError(f"{paths[key]}: {metric} must be a finite number, got {value!r}; "
                             f"delete it to run its point again")
    if metric in TAIL_FRACTIONS and records:
        with _delete_to_rerun():
            for key, record in records.items():  # a tail's span counts back from the end
                check_n_samples(paths[key], record)
        spans = {key: _tail_span(record, metric) for key, record in records.items()}
        (first, span), *others = spans.items()
        for key, other in others:
            if other != span:
                raise UsageError(
                    f"{paths[key].name} and {paths[first].name} give {metric} over the last "
                    f"{other} and {span} samples (a --history bounded run's tail is over its "
                    f"record's tail_samples); rank runs of one --history: delete the stale "
                    f"JSON(s) or use another --out-dir")


def _check_missing_span(records: dict[tuple, dict], paths: dict[tuple, Path], metric: str,
                        history: str) -> None:
    """Raise, before they run, if the runs of ``history`` would take tail accuracy
    ``metric`` over another span than the runs of ``records`` (all of one span, of
    the same stream): a full history over its
    :func:`~torch_geometric_stream.evaluation.metrics.tail_size`, a bounded one over
    :func:`~torch_geometric_stream.evaluation.bounded.kept_tail_span`, which may differ
    on a stream of more than 4096 samples."""
    (key, record), *_ = records.items()
    fraction, samples = TAIL_FRACTIONS[metric], record["n_samples"]
    span = (kept_tail_span(fraction, samples) if history == "bounded"
            else tail_size(fraction, samples))
    present = _tail_span(record, metric)
    if span != present:
        raise UsageError(
            f"{paths[key].name} gives {metric} over the last {present} samples, this "
            f"search's --history {history} runs would give it over the last {span} (a "
            f"--history bounded run's tail is over its record's tail_samples); rank runs of "
            f"one --history: delete the stale JSON(s), use another --out-dir or run with the "
            f"--history they used")


def _rank(points: list[dict[str, str]], seeds: list[int],
          records: dict[tuple[str, int], dict], metric: str) -> list[_Ranked]:
    """The points ordered by the mean of ``metric`` over ``seeds``, best first
    (a tie keeps the order of ``points``)."""
    rows = []
    for point in points:
        runs = [records[_point_name(point), seed] for seed in seeds]
        scores = [run[metric] for run in runs]
        rows.append(_Ranked(point, seeds, statistics.mean(scores),
                            statistics.stdev(scores) if len(scores) > 1 else None,
                            statistics.mean(run["accuracy"] for run in runs),
                            statistics.mean(run["ms_per_sample_median"] for run in runs),
                            {**OLDER_RECORDS, **runs[0]["config"]}))
    return sorted(rows, key=lambda row: -row.score)


def _write_ranking(rows: list[_Ranked], grid: dict[str, list[str]], metric: str,
                   path: Path) -> None:
    """The ranked table as CSV: rank, one column per gridded option, seeds, the
    metric ranked and its std, the accuracy (when another metric is ranked) and
    the time per sample."""
    accuracy = metric != "accuracy"
    header = ["rank", *grid, "seeds", metric, "std", *["accuracy"] * accuracy, "ms_per_sample"]
    atomic_write_csv(path, [header, *([rank, *(row.point[key] for key in grid),
                                       " ".join(map(str, row.seeds)), f"{row.score:.6f}",
                                       "" if row.std is None else f"{row.std:.6f}",
                                       *[f"{row.accuracy:.6f}"] * accuracy,
                                       f"{row.ms_per_sample:.3f}"]
                                      for rank, row in enumerate(rows, 1))])


def _print_ranking(rows: list[_Ranked], metric: str) -> None:
    """The ranked table: rank, the metric ranked and its std, the accuracy (when
    another metric is ranked), seeds, time per sample and the point."""
    accuracy = metric != "accuracy"
    width = max(8, len(metric))
    print(f"{'rank':>4}  {metric:>{width}}  {'std':>6}  " + f"{'accuracy':>8}  " * accuracy
          + f"{'seeds':>5}  {'ms/sample':>9}  point")
    for rank, row in enumerate(rows, 1):
        std = "–" if row.std is None else f"{row.std:.4f}"
        print(f"{rank:>4}  {row.score:{width}.4f}  {std:>6}  "
              + f"{row.accuracy:8.4f}  " * accuracy
              + f"{len(row.seeds):>5}  {row.ms_per_sample:9.2f}  {_point_name(row.point)}")


def _check_points(args: argparse.Namespace, points: list[dict[str, str]], seed: int,
                  config_file: Optional[dict]) -> tuple[Optional[str], _Expected]:
    """Parse every grid point's ``run`` arguments and check its configuration as
    ``run`` does (``config_file``: the ``--config`` entries), before the first
    point runs: a typo fails now, not hours in. Returns the warning of a label
    delay past the stream's end (:func:`~torch_geometric_stream.cli.run.labels_after_the_end`),
    the same for every run, which the runs leave to the search to print once, and
    what the runs run with, which a JSON reused must have run with."""
    from torch_geometric_stream.cli.main import build_parser  # main imports this module
    parser, runs = build_parser(), []
    for point in points:
        with _grid_point(point):
            runs.append(parser.parse_args(_run_argv(args, point, seed,
                                                    _run_path(args, point, seed))))
    _check_distinct(points, runs)
    stream = load_stream(runs[0])  # the same for every point
    assert isinstance(stream[0], StreamDataset)  # tune reads no stream as it comes
    configs = {}
    for point, run_args in zip(points, runs):
        with _grid_point(point):
            plan = check_run(run_args, stream, config_file)
        configs[_point_name(point)] = plan.config
    return labels_after_the_end(runs[0], plan), _Expected(configs, data_digest(stream[0]))


def _check_distinct(points: list[dict[str, str]], runs: list[argparse.Namespace]) -> None:
    """Refuse two values of a gridded option that ``run`` reads as one (``1e-3`` and
    ``0.001``, ``none`` and ``NONE``): their points would run the same configuration
    twice. ``runs``: the parsed ``run`` arguments of ``points``, in order."""
    for key in points[0]:
        values = {point[key]: getattr(run_args, key) for point, run_args in zip(points, runs)}
        for (text, value), (other, other_value) in itertools.combinations(values.items(), 2):
            if value == other_value:
                raise UsageError(f"--grid {key}: {text} and {other} are the same value; "
                                 f"give it once")


@contextmanager
def _grid_point(point: dict[str, str]) -> Iterator[None]:
    """Name grid point ``point`` in the :class:`UsageError` its arguments raise."""
    try:
        yield
    except UsageError as error:
        raise UsageError(f"--grid point {_point_name(point)}: {one_line(error)}") from None


def tune_command(args: argparse.Namespace) -> int:
    """Run the grid's missing points, rank them and write the best configuration;
    Ctrl-C keeps the finished points (a rerun continues with the others)."""
    paths: dict[tuple[str, int], Path] = {}
    try:
        return _tune(args, paths)
    except KeyboardInterrupt:
        finished = sum(path.exists() for path in paths.values())
        raise Interrupted(f"tune interrupted; its {finished} finished grid run(s) are kept in "
                          f"{args.out_dir}: rerun the same command to run only the "
                          f"others") from None


def _tune(args: argparse.Namespace, paths: dict[tuple[str, int], Path]) -> int:
    """:func:`tune_command`, recording the JSON of each grid run in ``paths``."""
    query_settings(args)  # a query option its label mask does not read
    learn_on_arrival(args)  # the arrival flag without a delay
    if args.dataset.strip() == STDIN:
        raise UsageError(f"--dataset {STDIN} (standard input) is read once; tune reads its "
                         f"stream for every grid point and seed: save it to a CSV file and "
                         f"give that")
    grid = parse_grid(args.grid)
    check_given(args.model, grid, "--grid")  # a list of values is never the fixed one
    seeds, confirm_seeds = _search_seeds(args)
    check_folder("--out-dir", args.out_dir, must_exist=False)
    # as run does, and refused as run refuses it, not as a grid point's
    check_model_device(args.model, check_device(args.device,
                                                gpu_capable=args.model in SLEDGE_VARIANTS))
    config_file = read_config_file(args.config)
    _search_name(args, config_file)  # a bad synthetic stream, named once, not for a point
    _base_config(args.dataset, args.label_ratio, args.model, args.preset, config_file)
    points = _grid_points(args, grid)
    delay_warning, expected = _check_points(args, points, seeds[0], config_file)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    if args.best is not None:
        check_output_file("--best", args.best)
        _check_best_apart(args, points, seeds + confirm_seeds)
        check_suffixes([("--best", args.best, ".json")])
    for warning in (delay_warning, lambda_warning(args.dataset, args.label_ratio, args.model,
                                                  args.preset, points, config_file)):
        if warning:
            print(warning, file=sys.stderr)
    missing = _missing_runs(args, points, seeds, paths, expected)
    _check_same_grid(args, points)  # after the JSONs' own checks, before any run
    _run_missing(args, missing)
    rows = _ranked(args, grid, points, seeds, paths)
    if confirm_seeds:
        finalists = [row.point for row in rows[:args.confirm_top]]
        _run_missing(args, _missing_runs(args, finalists, confirm_seeds, paths, expected))
        rows = (_ranked(args, grid, finalists, seeds + confirm_seeds, paths)
                + rows[args.confirm_top:])
    _print_heading(args, seeds, confirm_seeds)
    _print_ranking(rows, args.metric)
    _write_results(args, grid, rows)
    return 0


def _search_seeds(args: argparse.Namespace) -> tuple[list[int], list[int]]:
    """``(seeds, confirm_seeds)``: ``--seeds``, and those of ``--confirm-seeds`` not
    among them, checked to come with ``--confirm-top`` and only with it."""
    seeds = parse_seeds(args.seeds, "--seeds")
    confirm_seeds = ([seed for seed in parse_seeds(args.confirm_seeds, "--confirm-seeds")
                      if seed not in seeds] if args.confirm_seeds else [])
    if args.confirm_top is not None and not confirm_seeds:
        raise UsageError("--confirm-top needs --confirm-seeds with seeds not in --seeds")
    if confirm_seeds and args.confirm_top is None:
        raise UsageError("--confirm-seeds needs --confirm-top N (how many points to confirm)")
    return seeds, confirm_seeds


def _grid_points(args: argparse.Namespace, grid: dict[str, list[str]]) -> list[dict[str, str]]:
    """Every point of ``grid`` (option -> value), in the grid's order, checked to be
    at least ``--confirm-top`` of them."""
    points = [dict(zip(grid, values)) for values in itertools.product(*grid.values())]
    if args.confirm_top is not None and args.confirm_top > len(points):
        raise UsageError(f"--confirm-top {args.confirm_top} exceeds the grid's {len(points)} "
                         f"point(s); confirm at most all of them")
    return points


def _ranked(args: argparse.Namespace, grid: dict[str, list[str]],
            points: list[dict[str, str]], seeds: list[int],
            paths: dict[tuple[str, int], Path]) -> list[_Ranked]:
    """``points`` ranked by ``--metric`` over ``seeds``, from the grid runs in
    ``paths``, once all of these are checked to be of the same search."""
    records = _read_runs(paths)
    _check_same_settings(records, paths, grid)
    _check_metric(records, paths, args.metric)
    return _rank(points, seeds, records, args.metric)


def _print_heading(args: argparse.Namespace, seeds: list[int], confirm_seeds: list[int]
                   ) -> None:
    """Print what the search ran: model, stream, label protocol, seeds, limit and metric."""
    print(f"tune {args.model} on {args.dataset}, label ratio {args.label_ratio:g}"
          f"{_label_words(args)}{label_delay_words(args.label_delay, learn_on_arrival(args))}, "
          f"seeds {','.join(map(str, seeds))}"
          + (f" (top {args.confirm_top} also {','.join(map(str, confirm_seeds))})"
             if confirm_seeds else "")
          + (f", first {args.limit}" if args.limit else "")
          + (f", ranked by {args.metric}" if args.metric != "accuracy" else ""))


def _write_results(args: argparse.Namespace, grid: dict[str, list[str]],
                   rows: list[_Ranked]) -> None:
    """Write the ranking's CSV and the best point's configuration (``--best``, or
    in ``--out-dir``), and say where, with the ``run`` command that repeats it."""
    ranking_path, best_path = _output_paths(args)
    _write_ranking(rows, grid, args.metric, ranking_path)
    best = {key: value for key, value in rows[0].config.items() if key in config_keys(args.model)}
    atomic_write_text(best_path, json.dumps(best, indent=2, sort_keys=True) + "\n")
    print(f"ranking written to {ranking_path}")
    print(f"best configuration written to {best_path} (use: "
          f"{' '.join(_best_run_argv(args, best_path))})")


def _output_paths(args: argparse.Namespace) -> tuple[Path, Path]:
    """The search's ranking CSV and best configuration JSON (``--best`` if given)."""
    name = f"{_search_name(args)}{_by_metric(args.metric)}"
    return (args.out_dir / f"ranking_{name}.csv",
            args.best or args.out_dir / f"best_{name}.json")


def _check_same_grid(args: argparse.Namespace, points: list[dict[str, str]]) -> None:
    """Refuse a search whose ranking CSV exists in ``--out-dir`` and ranks a point
    that ``points`` lack (a search of another grid, whose ranking and best
    configuration this one would overwrite), or is not a table tune wrote. The
    same points, their options in any order, are the same search, resumed; more
    points (values added to the grid) rank those of the CSV with the others."""
    ranking, best = _output_paths(args)
    if not ranking.is_file():
        return
    try:
        with ranking.open(newline="", encoding="utf-8") as handle:
            table = list(csv.reader(handle))
    except (UnicodeDecodeError, csv.Error):
        table = []
    header = table[0] if table else []
    if header[:1] == ["rank"] and "seeds" in header:  # rank, the gridded options, seeds...
        keys = header[1:header.index("seeds")]
        ranked = {frozenset(zip(keys, row[1:len(keys) + 1])) for row in table[1:]}
        if ranked <= {frozenset(point.items()) for point in points}:
            return
        what = (f"another grid ({len(ranked)} point(s) of "
                f"{', '.join(key.replace('_', '-') for key in keys) or 'no option'}, "
                f"not all of this search's)")
    else:
        what = "a table tune did not write"
    files = " and ".join(path.name for path in (ranking, best)
                         if path.parent == args.out_dir and path.exists())
    raise UsageError(f"--out-dir: {ranking} ranks {what}; this search would overwrite "
                     f"{files}: move {'them' if ' and ' in files else 'it'} out of "
                     f"{args.out_dir} (its grid runs are reused) or give another --out-dir")


def _check_best_apart(args: argparse.Namespace, points: list[dict[str, str]],
                      seeds: list[int]) -> None:
    """Refuse a ``--best`` file that is the stream file, ``--config`` or the JSON
    of a grid run (a point and seed of ``points`` and ``seeds``, in ``--out-dir``):
    writing the best configuration would overwrite it."""
    stream = Path(args.dataset.strip())
    runs = [(f"the grid run {_point_name(point)} (seed {seed})",
             _run_path(args, point, seed)) for point in points for seed in seeds]
    check_files_apart([("--dataset", stream if is_stream_file(args.dataset) else None),
                       ("--config", args.config), *runs], [("--best", args.best)])


#: Entries resolved from others (the memory sizes): they may differ when these are gridded.
_DERIVED = {"labeled_size": ("memory_size", "light_memory", "unlabeled_size"),
            "unlabeled_size": ("memory_size", "light_memory", "labeled_size")}


def _check_length(records: dict[tuple, dict], paths: dict[tuple, Path],
                  args: argparse.Namespace) -> None:
    """Raise if a run covers another part of the stream than ``--limit`` asks, or
    a synthetic stream of another length than ``--synthetic-samples`` (a JSON
    reused from a search with another ``--limit`` or ``--synthetic-samples``)."""
    drift = synthetic_drift(args.dataset, args.synthetic_drift)
    samples = (args.synthetic_samples or SYNTHETIC_SAMPLES) if drift else None
    for key, record in records.items():
        for entry, asked, option in (("limit", args.limit, "--limit"),
                                     ("synthetic_samples", samples, "--synthetic-samples")):
            if entry in record and record[entry] != asked:
                ran, wanted = (f"{option} {value}" if value else "the whole stream"
                               for value in (record[entry], asked))
                raise UsageError(f"{paths[key].name} ran {ran}, this search asks for "
                                 f"{wanted}; delete the stale JSON(s) or use another "
                                 f"--out-dir")


#: The label protocol's entries of a run record, with the value of a record older
#: than the entry.
_OLDER_PROTOCOL = {"label_mask": "paper", "query_threshold": None, "query_step": None,
                   "label_delay": 0, "learn_on_arrival": None}


def _check_protocol(records: dict[tuple, dict], paths: dict[tuple, Path],
                    args: argparse.Namespace) -> None:
    """Raise if a run gave its labels otherwise than the search asks, naming the
    entries that differ: another ``label_mask``, ``query_threshold``,
    ``query_step``, ``label_delay`` or ``learn_on_arrival`` (a JSON renamed, or
    written by hand; a record older than an entry ran as :data:`_OLDER_PROTOCOL` says)."""
    asked = {"label_mask": args.label_mask, **query_settings(args),
             "label_delay": args.label_delay, "learn_on_arrival": learn_on_arrival(args)}
    for key, record in records.items():
        differing = [entry for entry, value in asked.items()
                     if record.get(entry, _OLDER_PROTOCOL[entry]) != value]
        if differing:
            ran, wanted = (", ".join(f"{entry}={values.get(entry, _OLDER_PROTOCOL[entry])}"
                                     for entry in differing) for values in (record, asked))
            raise UsageError(f"{paths[key].name} ran with {ran}, this search asks for "
                             f"{wanted}; delete the stale JSON(s) or use another --out-dir")


def _check_reused(records: dict[tuple, dict], paths: dict[tuple, Path], expected: _Expected,
                  model: str) -> None:
    """Raise if a run reused from ``--out-dir`` ran on another copy of the stream
    (its ``data_sha256``), or with another configuration than its point's in this
    search, naming the first entry that differs: the defaults or ``--config`` it
    ran under since changed. Entries are compared as
    :func:`~torch_geometric_stream.cli.run.recorded_config` reads them for the
    search's ``model`` (an entry a record predates at the value such runs had); a
    record without the digest, or without an entry of neither kind, is not
    checked on it."""
    for key, record in records.items():
        digest = record.get(DATA_DIGEST, expected.data_sha256)
        if digest != expected.data_sha256:
            raise UsageError(f"{paths[key].name} ran on another copy of the stream "
                             f"({DATA_DIGEST} {str(digest)[:8]}..., this search's "
                             f"{expected.data_sha256[:8]}...); delete the stale JSON(s) or use "
                             f"another --out-dir")
        ran, asked = (recorded_config({"model": model, "config": config}) for config in (
            record["config"], json.loads(json.dumps(expected.configs[key[0]]))))  # as saved
        differing = sorted(entry for entry in asked if entry in ran and ran[entry] != asked[entry])
        if differing:
            entry = differing[0]
            raise UsageError(f"{paths[key].name} was run with other settings than this "
                             f"search's point ({entry}: {ran[entry]!r} vs {asked[entry]!r}: "
                             f"made under older defaults or another --config?); delete the "
                             f"stale JSON(s) or use another --out-dir")


def _check_same_settings(records: dict[tuple, dict], paths: dict[tuple, Path],
                         grid: dict[str, list[str]]) -> None:
    """Raise if two runs of the search differ in a configuration entry outside the
    grid. An entry that an older run lacks counts with the value such runs had
    (:data:`~torch_geometric_stream.cli.run.OLDER_RECORDS`)."""
    free = set(grid) | {entry for entry, sources in _DERIVED.items() if set(sources) & set(grid)}
    (first_key, first), *others = records.items()

    def entry_of(record: dict, entry: str) -> object:
        return record["config"].get(entry, OLDER_RECORDS.get(entry))

    for key, record in others:
        differing = sorted(entry for entry in set(first["config"]) | set(record["config"])
                           if entry not in free
                           and entry_of(first, entry) != entry_of(record, entry))
        if differing:
            entry = differing[0]
            raise UsageError(
                f"{paths[key].name} and {paths[first_key].name} were run with different "
                f"settings outside the grid ({entry}: {entry_of(record, entry)!r} vs "
                f"{entry_of(first, entry)!r}); delete the stale JSON(s) or use another "
                f"--out-dir")


def _fixed_option_hint(unknown: list[str]) -> str:
    """What to give instead of ``unknown`` arguments (as the parser left them) that
    set a configuration entry, as ``run`` takes them: ``--lr 1e-3`` ->
    ``"; tune fixes an option through a one-value grid: --grid lr=1e-3"``;
    nothing where none does."""
    grids = []
    for index, word in enumerate(unknown):
        if not word.startswith("--"):
            continue
        name, sep, value = word[2:].partition("=")
        key = name.replace("-", "_")
        following = [text for text in unknown[index + 1:index + 3] if not text.startswith("--")]
        if key.startswith("no_") and key[3:] in _SWITCHES:
            name, value = name[3:], "false"
        elif key in _SWITCHES:
            value = "true"
        elif key in _PAIRS:
            value = ":".join(following) if len(following) == 2 else "LOW:HIGH"
        elif key in OVERRIDE_KEYS:
            value = value if sep else (following[:1] or ["V"])[0]
        else:
            continue
        grids.append(f"--grid {name}={value}")
    return f"; tune fixes an option through a one-value grid: {' '.join(grids)}" if grids else ""


def add_tune_parser(commands: argparse._SubParsersAction) -> None:
    """The ``tune`` command and its options."""
    tune = commands.add_parser("tune", help="resumable grid search over run options",
                               description=plain_text(__doc__),
                               formatter_class=argparse.RawDescriptionHelpFormatter,
                               unknown_hint=_fixed_option_hint)
    _add_data_options(tune)
    tune.add_argument("--model", choices=MODEL_NAMES, default=DEFAULT_MODEL,
                      help="the model every run evaluates (default: %(default)s)")
    add_label_protocol_options(tune, "; every run of the search has it")
    tune.add_argument("--preset", choices=PRESETS, default="paper",
                      help="the grid's base: the paper's per-dataset settings (default) or "
                           "the package defaults (see run --help)")
    _add_search_options(tune)
    _add_execution_options(tune)
    _add_output_options(tune)
    tune.set_defaults(handler=tune_command)


def _add_data_options(tune: argparse.ArgumentParser) -> None:
    """The stream every run evaluates on."""
    tune.add_argument("--dataset", required=True, metavar="NAME",
                      help=f"the stream every run evaluates on: one of {', '.join(DATASETS)} "
                           f"(case-insensitive), a synthetic one or a file of your own "
                           f"stream, FILE.csv, FILE.arff or FILE.npz (see run --help)")
    tune.add_argument("--label-column", metavar="NAME",
                      help="a CSV or ARFF --dataset's label column (see run --help)")
    add_root_option(tune)
    tune.add_argument("--synthetic-samples", type=positive_int, metavar="N",
                      help=f"length of a synthetic --dataset (default: {SYNTHETIC_SAMPLES}); "
                           f"a JSON of another length in --out-dir is refused")
    tune.add_argument("--synthetic-drift", choices=SYNTHETIC_DRIFTS,
                      help="drift of --dataset synthetic (see run --help); its files are "
                           "named synthetic-<drift>, as the runs name the stream")


def _add_search_options(tune: argparse.ArgumentParser) -> None:
    """The grid, its base configuration, the seeds of both stages and the stream's length."""
    tune.add_argument("--grid", action="append", default=[], metavar="NAME=V1,V2",
                      help="an option and its values (repeatable): any run option that "
                           "sets a configuration entry (a key of run --config: the "
                           "hyperparameters, approximations, baseline hyperparameters and "
                           "the scaling options), an on/off one as true or false, "
                           "--feature-range as LOW:HIGH; not --seed and --limit (use --seeds "
                           "and --limit). One value fixes the option for every point: "
                           "--grid lr=1e-3 (tune takes no --lr)")
    tune.add_argument("--config", type=Path, metavar="FILE.json",
                      help="the base configuration of every point (as run --config): "
                           "--grid overrides its entries, which override the preset's; its "
                           "files' names end _config=<8 hex digits of its entries' SHA-256>")
    tune.add_argument("--seeds", action="append", metavar="S", help="e.g. 0,2000 (default: 0)")
    tune.add_argument("--confirm-top", type=positive_int, metavar="N",
                      help="a second stage: run the N best points of --seeds again on "
                           "--confirm-seeds and rank those N over all their seeds (the "
                           "best configuration is the best of them)")
    tune.add_argument("--confirm-seeds", action="append", metavar="S",
                      help="the second stage's extra seeds, e.g. 2000,4000")
    tune.add_argument("--limit", type=positive_int, metavar="N",
                      help="first N samples only (a CSV or ARFF --dataset is read no "
                           "further, its classes those of these rows: see run --help)")


def _add_execution_options(tune: argparse.ArgumentParser) -> None:
    """Where and how the runs compute, and what each keeps of its samples."""
    tune.add_argument("--device", default="auto",
                      help="the device of every run, as run's --device: auto, cpu, cuda, "
                           "cuda:i or mps (default: %(default)s); with --jobs N the N runs "
                           "share it; a JSON of another device is reused (its ms/sample "
                           "that device's)")
    tune.add_argument("--threads", type=thread_count, default=1, metavar="N",
                      help=f"threads of each run, at most {MAX_THREADS} (default: "
                           f"%(default)s)")
    tune.add_argument("--jobs", type=positive_int, default=1, metavar="N",
                      help="runs at once, each in its own process (default: %(default)s, "
                           "one after the other in this process); results do not depend on it")
    tune.add_argument("--history", choices=HISTORIES, default="full",
                      help="what each run keeps of its samples (see run --help): bounded "
                           "keeps memory from growing with the stream; the accuracy and "
                           "the class metrics ranked are the same for both (a tail "
                           "accuracy: see --metric), a JSON of either is reused "
                           "(default: %(default)s)")


def _add_output_options(tune: argparse.ArgumentParser) -> None:
    """The ranking metric, what is printed and the files written."""
    tune.add_argument("--metric", choices=METRICS, default="accuracy", metavar="NAME",
                      help=f"the run records' entry to rank by, the higher the better: "
                           f"{', '.join(METRICS)} (default: %(default)s); another than "
                           f"accuracy writes "
                           f"ranking_..._by-NAME.csv and best_..._by-NAME.json beside the "
                           f"accuracy's. Under --history bounded a tail accuracy "
                           f"(accuracy_last_*) is over the record's tail_samples, the same "
                           f"span for every bounded run of the stream")
    tune.add_argument("--quiet", action="store_true",
                      help="print the ranking only: no progress, no start/done line and no "
                           "summary table of each run (errors stay)")
    tune.add_argument("--out-dir", type=Path, default=Path("tune_results"), metavar="DIR",
                      help="one JSON per grid point and seed (default: %(default)s)")
    tune.add_argument("--best", type=Path, metavar="FILE.json",
                      help="where to write the best configuration "
                           "(default: OUT_DIR/best_<model>_<dataset>_<ratio>.json, "
                           "<ratio>_mask=NAME with another --label-mask NAME than paper "
                           "(and the query options it reads, e.g. "
                           "_mask=fixed-uncertainty_query-threshold=0.9), "
                           "<ratio>_label-delay=N with --label-delay N, "
                           "<ratio>_preset=package under --preset package, ending "
                           "_by-NAME.json under another --metric than accuracy)")
