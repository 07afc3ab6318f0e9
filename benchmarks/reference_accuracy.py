"""Accuracy of the optimized SLeDGe against the dense reference on real streams.

Both sides start from the very same model (``DenseReferenceSLeDGe`` copies the
freshly built ``SLeDGe``'s parameters and memory), see the same stream prefix,
scaling and label mask, and run test-then-train through
:func:`~torch_geometric_stream.evaluation.prequential`. Float rounding differs
between sparse and dense products, so trajectories may drift apart over
thousands of Adam steps; the target is the same mean accuracy within 0.005.

One JSON per (dataset, side) under ``results/reference_accuracy/`` (skipped
when present, so the slow reference side can be run over several sessions, or
the two sides in parallel processes); ``render`` prints the comparison and
writes ``results/reference_accuracy.md``.

    python benchmarks/reference_accuracy.py run --datasets GSAD MNIST --side ours
    python benchmarks/reference_accuracy.py run --datasets GSAD MNIST --side reference
    python benchmarks/reference_accuracy.py render
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

from torch_geometric_stream.cli.configs import resolve_config
from torch_geometric_stream.cli.models import build_learner
from torch_geometric_stream.datasets import default_data_root, load_dataset
from torch_geometric_stream.evaluation import make_transform, paper_label_mask, prequential

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import cpu_model  # noqa: E402
from reference_sledge import DenseReferenceSLeDGe  # noqa: E402

OUT = HERE / "results" / "reference_accuracy"
SIDES = ("ours", "reference")


def result_path(dataset: str, ratio: float, seed: int, limit: int, side: str) -> Path:
    return OUT / f"{dataset}_{ratio:g}_seed{seed}_limit{limit}_{side}.json"


def run_one(dataset_name: str, ratio: float, seed: int, limit: int, side: str,
            root: Path, threads: int) -> dict[str, Any]:
    """Stream the first ``limit`` samples through one side; the run's record."""
    torch.set_num_threads(threads)
    dataset = load_dataset(dataset_name, root).head(limit)
    config = resolve_config(dataset_name, ratio, "sledge", {}, None,
                            num_classes=dataset.num_classes)
    learner = build_learner("sledge", dataset.num_features, dataset.num_classes, config,
                            seed, "cpu")
    if side == "reference":
        learner = DenseReferenceSLeDGe(learner)
    mask = paper_label_mask(dataset.y, ratio, seed)
    transform = make_transform(config["scaling"], value_range=dataset.value_range)
    result = prequential(learner, dataset, label_mask=mask, transform=transform)
    return {"dataset": dataset_name, "label_ratio": ratio, "seed": seed, "limit": limit,
            "side": side, "threads": threads, "cpu": cpu_model(),
            "torch": torch.__version__, "python": platform.python_version(),
            "config": config, "accuracy": result.metrics["accuracy"],
            "ms_per_sample": result.metrics["ms_per_sample_median"],
            "seconds": result.metrics["seconds"],
            "predictions": result.predictions.tolist()}


def render(records: list[dict[str, Any]]) -> str:
    by_key: dict[tuple, dict[str, dict[str, Any]]] = {}
    for record in records:
        key = (record["dataset"], record["label_ratio"], record["seed"], record["limit"])
        by_key.setdefault(key, {})[record["side"]] = record
    lines = ["| stream (first N) | ratio | seed | ours acc | reference acc | abs. diff "
             "| same predictions | first differing sample | ours median ms/sample | reference median ms/sample | threads |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (dataset, ratio, seed, limit), sides in sorted(by_key.items()):
        ours, ref = sides.get("ours"), sides.get("reference")
        cells = [f"{dataset} ({limit})", f"{ratio:g}", str(seed)]
        cells += [f"{r['accuracy']:.4f}" if r else "-" for r in (ours, ref)]
        if ours and ref:
            differ = np.asarray(ours["predictions"]) != np.asarray(ref["predictions"])
            first = str(int(differ.argmax())) if differ.any() else "none"
            cells += [f"{abs(ours['accuracy'] - ref['accuracy']):.4f}",
                      f"{1.0 - differ.mean():.4f}", first]
        else:
            cells += ["-", "-", "-"]
        cells += [f"{r['ms_per_sample']:.1f}" if r else "-" for r in (ours, ref)]
        cells.append(",".join(sorted({str(r["threads"]) for r in (ours, ref) if r})))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run missing (dataset, side) cells")
    run.add_argument("--datasets", nargs="+", default=["GSAD", "MNIST"])
    run.add_argument("--side", choices=(*SIDES, "both"), default="both")
    run.add_argument("--ratio", type=float, default=0.01)
    run.add_argument("--seed", type=int, default=0)
    run.add_argument("--limit", type=int, default=5000)
    run.add_argument("--threads", type=int, default=1)
    run.add_argument("--root", type=Path, default=None)
    sub.add_parser("render", help="print and write the comparison table")
    args = parser.parse_args()

    if args.command == "render":
        records = [json.loads(p.read_text()) for p in sorted(OUT.glob("*.json"))]
        table = render(records)
        (HERE / "results" / "reference_accuracy.md").write_text(table)
        print(table)
        return
    root = args.root or default_data_root()
    if root is None:
        sys.exit("no data folder: pass --root or set TGS_DATA_ROOT")
    sides = SIDES if args.side == "both" else (args.side,)
    OUT.mkdir(parents=True, exist_ok=True)
    for dataset in args.datasets:
        for side in sides:
            path = result_path(dataset, args.ratio, args.seed, args.limit, side)
            if path.exists():
                print(f"skip {path.name} (exists)")
                continue
            record = run_one(dataset, args.ratio, args.seed, args.limit, side, root,
                             args.threads)
            path.write_text(json.dumps(record))
            print(f"{path.name}: accuracy {record['accuracy']:.4f}, "
                  f"{record['ms_per_sample']:.1f} ms/sample")


if __name__ == "__main__":
    main()
