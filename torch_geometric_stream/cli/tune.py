"""The ``tune`` command: a resumable grid search over any ``run`` option.

Each grid point and seed is one ``run`` writing one JSON into ``--out-dir``;
a point whose JSON exists is not run again, so a search can be stopped and
continued. Runs are ranked only if they agree on every setting outside the
grid: a reused JSON made under other settings (older defaults, another
``--config``) is an error naming the setting, never silently mixed in. The
ranked table is printed and the best configuration is written
as a JSON that ``run --config`` accepts.

    python -m torch_geometric_stream tune --dataset GSAD --label-ratio 0.01 \\
        --grid lr=1e-4,1e-3,5e-3 --grid lam=0.01,0.1 --seeds 0,2000 --limit 2000 --jobs 4

``--jobs N`` runs N grid runs at once, each in its own process (see
:mod:`~torch_geometric_stream.cli.parallel`).
"""
from __future__ import annotations

import argparse
import itertools
import json
import statistics
from pathlib import Path

from torch_geometric_stream.cli.arguments import label_ratio, parse_seeds, positive_int
from torch_geometric_stream.cli.configs import PRESETS
from torch_geometric_stream.cli.errors import UsageError
from torch_geometric_stream.cli.models import MODEL_NAMES, config_keys
from torch_geometric_stream.cli.parallel import run_commands
from torch_geometric_stream.cli.run import DEFAULT_MODEL, OVERRIDE_KEYS
from torch_geometric_stream.datasets import default_data_root

__all__ = ["add_tune_parser", "parse_grid", "tune_command"]


def parse_grid(specs: list[str]) -> dict[str, list[str]]:
    """``["lr=1e-4,1e-3", "lam=0.1"]`` -> ``{"lr": ["1e-4", "1e-3"], "lam": ["0.1"]}``."""
    grid: dict[str, list[str]] = {}
    for spec in specs:
        key, sep, values = spec.partition("=")
        key = key.strip().replace("-", "_")
        if not sep or not values.strip():
            raise UsageError(f"--grid {spec!r}: expected NAME=V1,V2,...")
        if key not in OVERRIDE_KEYS:
            raise UsageError(f"--grid {spec!r}: {key!r} is not a tunable option; choose from "
                             f"{', '.join(OVERRIDE_KEYS)}")
        if key in grid:
            raise UsageError(f"--grid {key} given twice")
        grid[key] = [value.strip() for value in values.split(",") if value.strip()]
    return grid


def _point_name(point: dict[str, str]) -> str:
    return "_".join(f"{key}={value}" for key, value in point.items()) or "defaults"


def _search_name(args: argparse.Namespace) -> str:
    """``<model>_<dataset>_<ratio>``, with ``_preset=<name>`` unless the preset is
    ``paper``: runs of different presets never share (or skip on) a file."""
    preset = "" if args.preset == "paper" else f"_preset={args.preset}"
    return f"{args.model}_{args.dataset}_{args.label_ratio:g}{preset}"


def _run_argv(args: argparse.Namespace, point: dict[str, str], seed: int,
              path: Path) -> list[str]:
    """The ``run`` arguments of one grid point and seed, writing ``path``."""
    argv = ["run", "--dataset", args.dataset, "--model", args.model, "--label-ratio",
            str(args.label_ratio), "--seed", str(seed), "--threads", str(args.threads),
            "--preset", args.preset, "--output", str(path), "--quiet"]
    if args.root is not None:
        argv += ["--root", str(args.root)]
    if args.limit is not None:
        argv += ["--limit", str(args.limit)]
    for key, value in point.items():
        argv += [f"--{key.replace('_', '-')}", value]
    return argv


def tune_command(args: argparse.Namespace) -> int:
    grid = parse_grid(args.grid)
    seeds = parse_seeds(args.seeds)
    out_dir: Path = args.out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    points = [dict(zip(grid, values)) for values in itertools.product(*grid.values())]
    paths = {(_point_name(point), seed): out_dir / (
        f"{_search_name(args)}_{_point_name(point)}_seed{seed}.json")
        for point in points for seed in seeds}
    missing = [(_run_argv(args, point, seed, path), path) for point in points for seed in seeds
               if not (path := paths[_point_name(point), seed]).exists()]
    codes = run_commands(missing, jobs=args.jobs, threads=args.threads, stop_on_failure=True)
    failed = [path.name for (_, path), code in zip(missing, codes) if code not in (0, None)]
    if failed:
        raise UsageError(f"grid run(s) failed (see the errors above): {', '.join(failed)}")
    records_of = {key: json.loads(path.read_text()) for key, path in paths.items()}
    _check_same_settings(records_of, paths, grid)
    rows = []
    for point in points:
        records = [records_of[_point_name(point), seed] for seed in seeds]
        accuracies = [record["accuracy"] for record in records]
        rows.append((statistics.mean(accuracies),
                     statistics.stdev(accuracies) if len(accuracies) > 1 else 0.0,
                     statistics.mean(record["ms_per_sample_median"] for record in records),
                     point, records[0]["config"]))
    rows.sort(key=lambda row: -row[0])
    print(f"tune {args.model} on {args.dataset}, label ratio {args.label_ratio:g}, "
          f"seeds {','.join(map(str, seeds))}" + (f", first {args.limit}" if args.limit else ""))
    print(f"{'rank':>4}  {'accuracy':>8}  {'std':>6}  {'ms/sample':>9}  point")
    for rank, (mean, std, ms, point, _) in enumerate(rows, 1):
        print(f"{rank:>4}  {mean:8.4f}  {std:6.4f}  {ms:9.2f}  {_point_name(point)}")
    best = {key: value for key, value in rows[0][4].items() if key in config_keys(args.model)}
    best_path = args.best or out_dir / f"best_{_search_name(args)}.json"
    best_path.write_text(json.dumps(best, indent=2, sort_keys=True) + "\n")
    print(f"best configuration written to {best_path} (use: run --config {best_path})")
    return 0


#: Entries resolved from others (the memory sizes): they may differ when these are gridded.
_DERIVED = {"labeled_size": ("memory_size", "light_memory", "unlabeled_size"),
            "unlabeled_size": ("memory_size", "light_memory", "labeled_size")}


def _check_same_settings(records: dict[tuple, dict], paths: dict[tuple, Path],
                         grid: dict[str, list[str]]) -> None:
    """Raise if two runs of the search differ in a configuration entry outside the grid."""
    free = set(grid) | {entry for entry, sources in _DERIVED.items() if set(sources) & set(grid)}
    (first_key, first), *others = records.items()
    for key, record in others:
        differing = sorted(entry for entry in set(first["config"]) | set(record["config"])
                           if entry not in free
                           and first["config"].get(entry) != record["config"].get(entry))
        if differing:
            entry = differing[0]
            raise UsageError(
                f"{paths[key].name} and {paths[first_key].name} were run with different "
                f"settings outside the grid ({entry}: {record['config'].get(entry)!r} vs "
                f"{first['config'].get(entry)!r}); delete the stale JSON(s) or use another "
                f"--out-dir")


def add_tune_parser(commands: argparse._SubParsersAction) -> None:
    tune = commands.add_parser("tune", help="resumable grid search over run options",
                               description=__doc__,
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    tune.add_argument("--dataset", required=True, metavar="NAME")
    tune.add_argument("--root", type=Path, default=default_data_root(), metavar="DIR")
    tune.add_argument("--model", choices=MODEL_NAMES, default=DEFAULT_MODEL)
    tune.add_argument("--label-ratio", type=label_ratio, default=0.01, metavar="R")
    tune.add_argument("--preset", choices=PRESETS, default="paper",
                      help="the grid's base: the paper's per-dataset settings (default) or "
                           "the package defaults (see run --help)")
    tune.add_argument("--grid", action="append", default=[], metavar="NAME=V1,V2",
                      help="an option and its values (repeatable); any run option with a value")
    tune.add_argument("--seeds", action="append", metavar="S", help="e.g. 0,2000 (default: 0)")
    tune.add_argument("--limit", type=positive_int, metavar="N", help="first N samples only")
    tune.add_argument("--threads", type=positive_int, default=1, metavar="N",
                      help="threads of each run (default: %(default)s)")
    tune.add_argument("--jobs", type=positive_int, default=1, metavar="N",
                      help="runs at once, each in its own process (default: %(default)s, "
                           "one after the other in this process); results do not depend on it")
    tune.add_argument("--out-dir", type=Path, default=Path("tune_results"), metavar="DIR",
                      help="one JSON per grid point and seed (default: %(default)s)")
    tune.add_argument("--best", type=Path, metavar="FILE.json",
                      help="where to write the best configuration "
                           "(default: OUT_DIR/best_<model>_<dataset>_<ratio>.json)")
    tune.set_defaults(handler=tune_command)
