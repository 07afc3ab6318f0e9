"""When the labels of a run arrive, and how accurate the learner was meanwhile.

With 0.1 % labels a stream of 12,330 samples reveals 12 labels, and which classes
the first few of them carry decides much of the run. For the run JSONs of one
tag of ``benchmarks/accuracy.py`` (one per seed), this script redraws each run's
label mask (same dataset, label mask, ratio and seed, so the same positions) and
prints, per window of ``--window`` samples, the labels revealed so far by class
and the accuracy within the window. The window accuracy is read off the run's
stored running-accuracy curve (200 points), interpolated linearly at the window
edges.

    python benchmarks/label_timeline.py --tag preset-package-auto --model sledge \\
        --dataset Shopper --ratio 0.001 --seeds 0 2000 4000

Prints the label arrivals and the table, and writes the table to
``benchmarks/results/label_timeline/<model>_<dataset>_<ratio>_<tag>.md``
(``--out-dir`` elsewhere).
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
from machine import (check_outputs, data_root, dataset_name, folder_name,  # (on sys.path)
                     input_folder, int_at_least, read_run, seed_value, usage_errors)
from torch_geometric_stream.cli.arguments import label_ratio
from torch_geometric_stream.cli.models import MODEL_NAMES
from torch_geometric_stream.datasets import load_dataset
from torch_geometric_stream.evaluation import make_label_mask
from torch_geometric_stream.files import atomic_write_text

ACCURACY_RESULTS = Path(__file__).resolve().parent / "results" / "accuracy"
RESULTS = Path(__file__).resolve().parent / "results" / "label_timeline"


def window_accuracy(position: Sequence[int], running_accuracy: Sequence[float],
                    edges: Sequence[int]) -> np.ndarray:
    r"""Accuracy between consecutive ``edges`` from a running-accuracy curve.

    Args:
        position: stream positions of the curve, shape :math:`(P,)`, increasing;
            the first is 1 sample after the curve's start.
        running_accuracy: accuracy over the samples from the start up to each
            position, shape :math:`(P,)`.
        edges: window edges :math:`(W + 1,)`, as stream positions.

    Returns:
        Accuracy within each window, shape :math:`(W,)`; ``nan`` where a window
        lies outside the curve. The number correct between stored positions is
        interpolated linearly.
    """
    curve = np.asarray(position, dtype=np.float64)
    start = curve[0] - 1
    correct = (curve - start) * np.asarray(running_accuracy, dtype=np.float64)
    points, correct = np.concatenate([[start], curve]), np.concatenate([[0.0], correct])
    bounds = np.asarray(edges, dtype=np.float64)
    at_edges = np.interp(bounds, points, correct)
    accuracy = np.diff(at_edges) / np.diff(bounds)
    outside = (bounds[:-1] < start) | (bounds[1:] > points[-1])
    return np.where(outside, np.nan, accuracy)


def _one_hot(labels: np.ndarray, num_classes: int) -> np.ndarray:
    """Rows :math:`(T, c)` with a 1 in each label's column."""
    return np.eye(num_classes, dtype=np.int64)[labels]


def labels_seen(labels: np.ndarray, mask: np.ndarray, num_classes: int,
                edges: Sequence[int]) -> np.ndarray:
    r"""Labels revealed before each window's end, per class :math:`(W, c)`."""
    counts = np.cumsum(_one_hot(labels, num_classes) * mask[:, None], axis=0)
    ends = np.minimum(np.asarray(edges[1:]), labels.size) - 1
    return counts[ends]


def run_mask(record: dict[str, Any], labels: np.ndarray) -> np.ndarray:
    """The label mask :math:`(T,)` a run record was made with, redrawn (same mask
    kind, ratio and seed) over the stream's first ``record["n_samples"]`` ``labels``."""
    # records from before the mask was recorded used the paper's
    return make_label_mask(record.get("label_mask", "paper"), labels[:record["n_samples"]],
                           record["label_ratio"], record["seed"])


def timeline(record: dict[str, Any], labels: np.ndarray, num_classes: int,
             window: int) -> dict[str, Any]:
    """Label arrivals and per-window label counts and accuracy of one run record."""
    labels = labels[:record["n_samples"]]
    mask = run_mask(record, labels)
    edges = list(range(0, labels.size, window)) + [labels.size]
    curve = record["curve"]
    arrivals = np.flatnonzero(mask)
    return {"seed": record["seed"], "accuracy": record["accuracy"],
            "arrivals": list(zip(arrivals.tolist(), labels[arrivals].tolist())),
            "edges": edges,
            "seen": labels_seen(labels, mask, num_classes, edges).tolist(),
            "window_accuracy": window_accuracy(curve["position"], curve["running_accuracy"],
                                               edges).tolist()}


def markdown_table(timelines: list[dict[str, Any]], class_share: np.ndarray) -> str:
    """One row per window: the classes' true shares, then per seed the labels
    seen so far (``a/b`` = class 0 / class 1 ...) and the window's accuracy."""
    head = ["window start", "true class shares"]
    for run in timelines:
        head += [f"seed {run['seed']}: labels so far", "accuracy"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for w, start in enumerate(timelines[0]["edges"][:-1]):
        cells = [f"{start:,}", " / ".join(f"{share:.2f}" for share in class_share[w])]
        for run in timelines:
            accuracy = run["window_accuracy"][w]
            cells += ["/".join(map(str, run["seen"][w])),
                      "–" if np.isnan(accuracy) else f"{accuracy:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tag", type=folder_name, required=True,
                        help="sub-folder of benchmarks/results/accuracy")
    parser.add_argument("--model", default="sledge", choices=MODEL_NAMES,
                        help="model of the runs (default: sledge)")
    parser.add_argument("--dataset", type=dataset_name, required=True,
                        help="stream of the runs, any case (e.g. Shopper)")
    parser.add_argument("--ratio", type=label_ratio, required=True,
                        help="label ratio of the runs, in (0, 1]")
    parser.add_argument("--seeds", type=seed_value, nargs="+", default=[0, 2000, 4000],
                        help="seeds of the runs (default: the paper's 0 2000 4000)")
    parser.add_argument("--window", type=int_at_least(1), default=1000,
                        help="samples per row of the table (default: 1000)")
    parser.add_argument("--root", type=Path, default=None,
                        help="folder of the datasets (default: $TGS_DATA_ROOT or ../shared/data)")
    parser.add_argument("--results", type=Path, default=ACCURACY_RESULTS,
                        help="folder of accuracy.py's tags (default: benchmarks/results/accuracy)")
    parser.add_argument("--out-dir", type=Path, default=RESULTS,
                        help="folder of the written table (default: %(default)s)")
    args = parser.parse_args(argv)
    with usage_errors(parser):
        check_outputs(parser, {"--out-dir": args.out_dir})
        root = data_root(parser, args.root)
        input_folder(parser, "--results", args.results)

        folder = args.results / args.tag
        paths = [folder / f"{args.model}_{args.dataset}_{args.ratio:g}_seed{seed}.json"
                 for seed in args.seeds]
        missing = [str(path) for path in paths if not path.is_file()]
        if missing:
            parser.error("no run record " + ", ".join(missing))
        records = [read_run(path) for path in paths]
        no_curve = [str(path) for path, record in zip(paths, records) if "curve" not in record]
        if no_curve:
            parser.error("no running-accuracy curve in " + ", ".join(no_curve)
                         + " (recorded by runs since the curve was added)")
        dataset = load_dataset(args.dataset, root)
        labels = np.asarray(dataset.y, dtype=np.int64)
        timelines = [timeline(record, labels, dataset.num_classes, args.window)
                     for record in records]
        edges = timelines[0]["edges"]
        onehot = _one_hot(labels[:edges[-1]], dataset.num_classes)
        class_share = np.stack([onehot[a:b].mean(axis=0) for a, b in zip(edges[:-1], edges[1:])])

        for run in timelines:
            arrivals = ", ".join(f"{pos:,}: {cls}" for pos, cls in run["arrivals"])
            print(f"seed {run['seed']} (accuracy {run['accuracy']:.4f}), labels at "
                  f"(position: class): {arrivals}")
        table = markdown_table(timelines, class_share)
        print(table)
        args.out_dir.mkdir(parents=True, exist_ok=True)
        out = args.out_dir / f"{args.model}_{args.dataset}_{args.ratio:g}_{args.tag}.md"
        atomic_write_text(out, table + "\n")
        print(f"wrote {out}")
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
