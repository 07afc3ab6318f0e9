"""How much of a cell's mean is the label draw: every seed's accuracy beside the
labels its draw revealed per class.

With 0.1 % labels a stream of 12,330 samples reveals 12 labels, and the paper's
mean over three seeds (0, 2000, 4000) rests on three draws. For one (model,
dataset, label ratio), this script reads every whole-stream run JSON of the given
tags of ``benchmarks/accuracy.py`` (one per seed; a seed in several tags counts
once, from the first tag that holds it; a tag holding none, e.g. a mistyped one,
is an error), redraws each run's label mask and prints
one row per seed: the labels per class, accuracy and balanced accuracy; then the
mean over the paper's seeds, over the other seeds and over all, and the mean
accuracy per number of labels of the rarest class.

    python benchmarks/seed_spread.py --model sledge-light --dataset Shopper \\
        --ratio 0.001 --tags spread-rerun more-seeds

Writes the table to
``benchmarks/results/seed_spread/<model>_<dataset>_<ratio>_<first tag>.md``.
"""
from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
from accuracy_summary import PAPER_SEEDS, mean_std
from label_timeline import ACCURACY_RESULTS, run_mask
from machine import (check_outputs, data_root, dataset_name, folder_name, input_folder,
                     read_run, usage_errors)

from torch_geometric_stream.cli.arguments import label_ratio
from torch_geometric_stream.cli.models import MODEL_NAMES
from torch_geometric_stream.datasets import load_dataset
from torch_geometric_stream.files import atomic_write_text

RESULTS = Path(__file__).resolve().parent / "results" / "seed_spread"


def seed_records(results: Path, tags: Sequence[str], model: str, dataset: str,
                 ratio: float, *, every_tag: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """``(tag, record)`` of every seed's whole-stream run, the first tag holding a
    seed winning, ordered by seed.

    Raises:
        ValueError: with ``every_tag``, a tag (e.g. a mistyped one) holds no
            whole-stream run of the cell; the message names every such tag.
        UsageError: a JSON of the cell that is no run record (:func:`~machine.read_run`).
    """
    chosen: dict[int, tuple[str, dict[str, Any]]] = {}
    empty = []
    for tag in tags:
        whole = [record for path in
                 sorted((results / tag).glob(f"{model}_{dataset}_{ratio:g}_seed*.json"))
                 if (record := read_run(path)).get("limit") is None]
        if not whole:
            empty.append(tag)
        for record in whole:
            chosen.setdefault(record["seed"], (tag, record))
    if every_tag and empty:
        raise ValueError(f"no whole-stream run of {model} on {dataset} at {ratio:g} in "
                         f"{', '.join(empty)}")
    return [chosen[seed] for seed in sorted(chosen)]


def labels_per_class(record: dict[str, Any], labels: np.ndarray,
                     num_classes: int) -> list[int]:
    """How many labels of each class the run's mask revealed, :math:`(c,)`."""
    revealed = labels[:record["n_samples"]][run_mask(record, labels)]
    return np.bincount(revealed, minlength=num_classes).tolist()


def spread_table(rows: list[dict[str, Any]], rarest: int) -> str:
    """Markdown: one row per seed (``rows``: seed, tag, labels, accuracy,
    balanced), then the means over the paper's seeds, the others and all, and
    the mean accuracy per count of class ``rarest``'s labels."""
    lines = ["| seed | labels per class | accuracy | balanced accuracy | tag |",
             "|---|---|---|---|---|"]
    for row in rows:
        balanced = row["balanced"]
        lines.append(f"| {row['seed']} | {' / '.join(map(str, row['labels']))} | "
                     f"{row['accuracy']:.4f} | "
                     f"{'–' if balanced is None else f'{balanced:.3f}'} | {row['tag']} |")
    groups = {"the paper's seeds": [r for r in rows if r["seed"] in PAPER_SEEDS],
              "the other seeds": [r for r in rows if r["seed"] not in PAPER_SEEDS],
              "all seeds": rows}
    lines += ["", "| seeds | n | mean accuracy | rarest-class labels (mean) |", "|---|---|---|---|"]
    for name, group in groups.items():
        if group:
            lines.append(f"| {name} | {len(group)} | "
                         f"{mean_std([r['accuracy'] for r in group])} | "
                         f"{statistics.mean(r['labels'][rarest] for r in group):.2f} |")
    lines += ["", f"| labels of class {rarest} | seeds | mean accuracy |", "|---|---|---|"]
    for count in sorted({r["labels"][rarest] for r in rows}):
        group = [r for r in rows if r["labels"][rarest] == count]
        lines.append(f"| {count} | {', '.join(str(r['seed']) for r in group)} | "
                     f"{mean_std([r['accuracy'] for r in group])} |")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="sledge", choices=MODEL_NAMES,
                        help="model of the runs (default: sledge)")
    parser.add_argument("--dataset", type=dataset_name, required=True,
                        help="stream of the runs, any case (e.g. Shopper)")
    parser.add_argument("--ratio", type=label_ratio, required=True,
                        help="label ratio of the runs, in (0, 1]")
    parser.add_argument("--tags", nargs="+", type=folder_name, required=True,
                        help="sub-folders of benchmarks/results/accuracy, first wins per seed; "
                             "each must hold a whole-stream run of the cell")
    parser.add_argument("--root", type=Path, default=None,
                        help="folder of the datasets (default: $TGS_DATA_ROOT or ../shared/data)")
    parser.add_argument("--results", type=Path, default=ACCURACY_RESULTS,
                        help="folder of accuracy.py's tags (default: benchmarks/results/accuracy)")
    parser.add_argument("--out", type=Path, default=RESULTS,
                        help="folder of the written table (default: "
                             "benchmarks/results/seed_spread)")
    args = parser.parse_args(argv)
    with usage_errors(parser):
        check_outputs(parser, {"--out": args.out})
        root = data_root(parser, args.root)
        input_folder(parser, "--results", args.results)
        try:
            records = seed_records(args.results, args.tags, args.model, args.dataset, args.ratio,
                                   every_tag=True)
        except ValueError as error:  # UsageError too, a ValueError
            parser.error(str(error))
        dataset = load_dataset(args.dataset, root)
        labels = np.asarray(dataset.y, dtype=np.int64)
        rows = [{"seed": record["seed"], "tag": tag, "accuracy": record["accuracy"],
                 "balanced": record.get("balanced_accuracy"),
                 "labels": labels_per_class(record, labels, dataset.num_classes)}
                for tag, record in records]
        rarest = int(np.argmin(np.bincount(labels, minlength=dataset.num_classes)))
        table = spread_table(rows, rarest)
        print(table)
        args.out.mkdir(parents=True, exist_ok=True)
        out = args.out / f"{args.model}_{args.dataset}_{args.ratio:g}_{args.tags[0]}.md"
        atomic_write_text(out, f"Tags: {', '.join(args.tags)}.\n\n{table}\n")
        print(f"wrote {out}")
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
