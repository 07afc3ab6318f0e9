"""What the robust input range costs per row: :class:`RunningQuantileRange.observe_`
over a stream's first rows.

``--scaling robust`` / ``robust-rescale`` offer every row to a reservoir of
``--reservoir`` rows and recompute the quantiles of every feature whenever a row
enters it (every row at first, a ``reservoir / t`` share later), and a learner
re-derives its memory whenever the effective range moves. For each dataset this
script times ``observe_`` row by row and prints the rows that entered the
reservoir, the moves of the effective range, the total time and the time per row
and per entering row; ``--window`` times the forgetting reservoir
(``RunningQuantileRange(window=...)``, ``--robust-window``), whose rows keep entering
(a ``reservoir / window`` share); ``--no-clip`` times the unclipped range
(``--no-robust-clip``), which also checks that no row it takes scales to inf::

    OMP_NUM_THREADS=1 python benchmarks/quantile_range.py --datasets MNIST GSAD --rows 4000

The table is printed, and each dataset's row written to
``benchmarks/results/quantile_range/<dataset>_first<rows>.json`` (``..._window<W>.json``
with a window, ``..._noclip.json`` without clipping; replaced on a rerun) with the CPU, the thread count and the torch and NumPy versions.
"""
from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path
from typing import Optional, Sequence

import numpy as np
import torch

from machine import (check_outputs, cpu_model, data_root,  # noqa: E402  (on sys.path)
                     dataset_name)
from torch_geometric_stream.cli.arguments import positive_int
from torch_geometric_stream.datasets import load_dataset
from torch_geometric_stream.files import atomic_write_text
from torch_geometric_stream.nn import RunningQuantileRange

RESULTS = Path(__file__).resolve().parent / "results" / "quantile_range"
COLUMNS = ("dataset", "features", "rows", "window", "clip", "entered", "moves", "seconds", "ms/row",
           "ms/entering row")


def time_observe(x: torch.Tensor, reservoir: int, seed: int = 0,
                 window: Optional[int] = None, clip: bool = True) -> dict:
    """Offer the rows :math:`(T, d)` one by one to a fresh range; counts and seconds."""
    scaler = RunningQuantileRange(x.size(1), reservoir_size=reservoir, seed=seed, window=window,
                                  clip=clip)
    moves = 0
    start = time.perf_counter()
    for row in x:
        moves += scaler.observe_(row.unsqueeze(0))
    seconds = time.perf_counter() - start
    entered = _entered(x.size(0), reservoir, seed, window)
    return {"features": x.size(1), "rows": x.size(0), "window": window, "clip": clip,
            "entered": entered,
            "moves": moves,
            "seconds": round(seconds, 3), "ms/row": round(1e3 * seconds / x.size(0), 3),
            "ms/entering row": round(1e3 * seconds / entered, 3)}


def _entered(rows: int, reservoir: int, seed: int, window: Optional[int] = None) -> int:
    """How many of ``rows`` rows enter a reservoir of ``reservoir`` slots seeded by
    ``seed`` under ``window`` (the same draws as :class:`RunningQuantileRange`,
    without the rows)."""
    scaler = RunningQuantileRange(1, reservoir_size=reservoir, seed=seed, window=window)
    return sum(scaler._offer(np.zeros(1)) for _ in range(rows))


def markdown(rows: list[dict]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(str(row[column]) for column in COLUMNS) + " |" for row in rows]
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", type=dataset_name,
                        default=["MNIST", "GSAD", "Shopper"],
                        help="streams, any case (default: MNIST GSAD Shopper)")
    parser.add_argument("--rows", type=positive_int, default=4000,
                        help="first N rows of each stream")
    parser.add_argument("--reservoir", type=positive_int, default=1000,
                        help="rows the quantiles are computed over (default: 1000)")
    parser.add_argument("--window", type=positive_int, default=None,
                        help="the reservoir's forgetting window, >= --reservoir (default: "
                             "none, a uniform sample of the whole stream)")
    parser.add_argument("--no-clip", dest="clip", action="store_false",
                        help="time the unclipped range (RunningQuantileRange(clip=False))")
    parser.add_argument("--root", type=Path, default=None,
                        help="folder of the datasets (default: $TGS_DATA_ROOT or ../shared/data)")
    parser.add_argument("--out-dir", type=Path, default=RESULTS,
                        help="folder of the JSONs (default: benchmarks/results/quantile_range)")
    args = parser.parse_args(argv)
    if args.window is not None and args.window < args.reservoir:
        parser.error(f"--window {args.window} is below --reservoir {args.reservoir}")
    check_outputs(parser, {"--out-dir": args.out_dir})
    root = data_root(parser, args.root)
    machine = {"cpu": cpu_model(), "threads": torch.get_num_threads(),
               "torch": torch.__version__, "numpy": np.__version__,
               "python": platform.python_version()}
    results = []
    for name in args.datasets:
        try:
            data = load_dataset(name, root)
        except FileNotFoundError as error:
            print(f"skip {name}: {error}")
            continue
        x = torch.as_tensor(np.asarray(data.x[:args.rows]), dtype=torch.float32)
        result = {"dataset": name, "reservoir": args.reservoir,
                  **time_observe(x, args.reservoir, window=args.window, clip=args.clip),
                  **machine}
        results.append(result)
        args.out_dir.mkdir(parents=True, exist_ok=True)
        stem = args.out_dir / (f"{name}_first{args.rows}"
                               + ("" if args.window is None else f"_window{args.window}")
                               + ("" if args.clip else "_noclip"))
        atomic_write_text(stem.with_suffix(".json"), json.dumps(result, indent=1) + "\n")
    if results:
        table = markdown(results)
        print(table)
        print(f"machine: {machine}")


if __name__ == "__main__":
    main()
