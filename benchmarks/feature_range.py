"""How long a stream's per-feature value range keeps growing, and how much of it
its typical values use.

Online scaling maps each feature by the running minimum and maximum of the samples
seen so far; whole-dataset scaling (``--scaling global``) by the stream's final ones.
The two differ most where a feature's range keeps growing long into the stream
(early rows are spread over [-1, 1], later ones squeezed as outliers arrive) and
where outliers make the final range much wider than the bulk of the values. For
each feature this script prints the final range, the number of samples after which
the running range first reaches 50 %, 90 % and 100 % of it, and the interquartile
range as a share of the final range (the share of [-1, 1] the middle half of the
samples spans under whole-dataset scaling).

    python benchmarks/feature_range.py --datasets Shuttle Shopper

Prints one table per dataset and writes it to
``benchmarks/results/feature_range/<dataset>.md`` (``--out-dir`` elsewhere; with
``--limit N``, ``<dataset>_first<N>.md``, so a prefix never replaces the whole
stream's table).
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

from machine import check_outputs, data_root, dataset_name, load_or_exit  # (on sys.path)
from torch_geometric_stream.cli.arguments import positive_int
from torch_geometric_stream.files import atomic_write_text

RESULTS = Path(__file__).resolve().parent / "results" / "feature_range"
FRACTIONS = (0.5, 0.9, 1.0)


def range_growth(x: np.ndarray, fractions: Sequence[float] = FRACTIONS) -> np.ndarray:
    r"""Samples until each feature's running range first reaches ``fractions`` of
    its final range.

    Args:
        x: the stream's features in arrival order, shape :math:`(T, F)`, finite.
        fractions: shares of the final range, each in :math:`(0, 1]`.

    Returns:
        Sample counts, shape :math:`(F, R)` with :math:`R` = ``len(fractions)``, each
        in :math:`[1, T]`; 1 for a feature that is constant over the stream.
    """
    x = np.asarray(x, dtype=np.float64)
    running = np.maximum.accumulate(x, axis=0) - np.minimum.accumulate(x, axis=0)
    # each column never decreases, so a binary search finds the first sample at or above
    return np.array([np.searchsorted(column, np.asarray(fractions) * column[-1]) + 1
                     for column in running.T])


def middle_share(x: np.ndarray) -> np.ndarray:
    r"""Interquartile range over final range per feature, shape :math:`(F,)`;
    ``nan`` for a constant feature."""
    x = np.asarray(x, dtype=np.float64)
    spread = x.max(axis=0) - x.min(axis=0)
    q1, q3 = np.percentile(x, [25, 75], axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(spread > 0, (q3 - q1) / spread, np.nan)


def markdown_table(x: np.ndarray, names: Sequence[str]) -> str:
    """One row per feature: final range, samples until 50/90/100 % of it, and the
    interquartile range's share of it."""
    growth, share = range_growth(x), middle_share(x)
    head = ["feature", "min", "max", *(f"samples to {f:.0%} of range" for f in FRACTIONS),
            "IQR / range"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for f, name in enumerate(names):
        cells = [name, f"{x[:, f].min():g}", f"{x[:, f].max():g}",
                 *(f"{count:,}" for count in growth[f]),
                 "–" if np.isnan(share[f]) else f"{share[f]:.3g}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", nargs="+", required=True, type=dataset_name,
                        help="streams to measure, any case (e.g. Shuttle Shopper GSAD)")
    parser.add_argument("--root", default=None,
                        help="folder of the datasets (default: $TGS_DATA_ROOT or ../shared/data)")
    parser.add_argument("--limit", type=positive_int, default=None, help="first N samples only")
    parser.add_argument("--out-dir", type=Path, default=RESULTS,
                        help="where the tables go (default: %(default)s)")
    args = parser.parse_args(argv)
    check_outputs(parser, {"--out-dir": args.out_dir})
    root = data_root(parser, args.root)

    for name in args.datasets:
        dataset = load_or_exit(parser, name, root)
        x = np.asarray(dataset.x, dtype=np.float64)[:args.limit]
        names = dataset.feature_names or [str(f) for f in range(x.shape[1])]
        table = markdown_table(x, names)
        print(f"{dataset.name}: {x.shape[0]:,} samples, {x.shape[1]} features\n{table}\n")
        prefix = "" if args.limit is None else f"_first{args.limit}"
        args.out_dir.mkdir(parents=True, exist_ok=True)
        out = args.out_dir / f"{dataset.name}{prefix}.md"
        atomic_write_text(out, table + "\n")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
