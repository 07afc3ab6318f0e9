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

``lockstep`` runs both sides in one process, sample by sample, and records how
far their parameters, memories and predictions are apart (in float32 and, with
``--dtype float64``, in double precision): it separates a difference of
semantics (memories or predictions differ while parameters still agree) from
the amplification of rounding by thousands of Adam steps (parameters drift
apart gradually, memories stay equal).

    python benchmarks/reference_accuracy.py run --datasets GSAD MNIST --side ours
    python benchmarks/reference_accuracy.py run --datasets GSAD MNIST --side reference
    python benchmarks/reference_accuracy.py render
    python benchmarks/reference_accuracy.py lockstep --dataset GSAD --limit 400 --dtype float64
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
LOCKSTEP = OUT / "lockstep"
SIDES = ("ours", "reference")


def result_path(dataset: str, ratio: float, seed: int, limit: int, side: str,
                dtype: str = "float32") -> Path:
    suffix = "" if dtype == "float32" else f"_{dtype}"
    return OUT / f"{dataset}_{ratio:g}_seed{seed}_limit{limit}_{side}{suffix}.json"


def run_one(dataset_name: str, ratio: float, seed: int, limit: int, side: str,
            root: Path, threads: int, dtype: torch.dtype = torch.float32) -> dict[str, Any]:
    """Stream the first ``limit`` samples through one side in ``dtype``; the run's record."""
    torch.set_num_threads(threads)
    dataset, config, learner, mask, transform = _setup(dataset_name, ratio, seed, limit, root)
    learner = learner.to(dtype)
    if side == "reference":
        learner = DenseReferenceSLeDGe(learner)
    result = prequential(learner, dataset, label_mask=mask,
                         transform=lambda x: transform(x).to(dtype))
    return {"dataset": dataset_name, "label_ratio": ratio, "seed": seed, "limit": limit,
            "side": side, "dtype": str(dtype).replace("torch.", ""), "threads": threads,
            "cpu": cpu_model(),
            "torch": torch.__version__, "python": platform.python_version(),
            "config": config, "accuracy": result.metrics["accuracy"],
            "ms_per_sample": result.metrics["ms_per_sample_median"],
            "seconds": result.metrics["seconds"],
            "predictions": result.predictions.tolist()}


def _setup(dataset_name: str, ratio: float, seed: int, limit: int, root: Path):
    """The stream prefix, its label mask and transform, and a freshly built SLeDGe."""
    dataset = load_dataset(dataset_name, root).head(limit)
    config = resolve_config(dataset_name, ratio, "sledge", {}, None,
                            num_classes=dataset.num_classes)
    learner = build_learner("sledge", dataset.num_features, dataset.num_classes, config,
                            seed, "cpu")
    mask = paper_label_mask(dataset.y, ratio, seed)
    transform = make_transform(config["scaling"], value_range=dataset.value_range)
    return dataset, config, learner, mask, transform


def lockstep(dataset_name: str, ratio: float, seed: int, limit: int, root: Path,
             dtype: torch.dtype, every: int = 25) -> dict[str, Any]:
    """Both sides step by step on one prefix; distances every ``every`` samples."""
    dataset, config, ours, mask, transform = _setup(dataset_name, ratio, seed, limit, root)
    ours = ours.to(dtype)
    reference = DenseReferenceSLeDGe(ours)
    trace, differing = [], []
    for position, (x, y) in enumerate(dataset):
        x = transform(x).to(dtype)
        p_ours, p_ref = ours.predict_proba(x)[0], reference.predict_proba(x)[0]
        if int(p_ours.argmax()) != int(p_ref.argmax()):
            differing.append(position)
        label = int(y) if mask[position] else -1
        ours.learn(x, label)
        reference.learn(x, label)
        if position % every == 0 or position == limit - 1:
            params = max(float((p.detach() - reference.params[name].detach()).abs().max())
                         for name, p in ours.named_parameters())
            memory = float((ours.memory.prototypes
                            - reference.memory_state()["prototypes"]).abs().max())
            trace.append({"position": position, "max_param_diff": params,
                          "max_memory_diff": memory,
                          "max_proba_diff": float((p_ours - p_ref).abs().max())})
    return {"dataset": dataset_name, "label_ratio": ratio, "seed": seed, "limit": limit,
            "dtype": str(dtype).replace("torch.", ""), "config": config, "trace": trace,
            "differing_predictions": differing}


def render_lockstep(records: list[dict[str, Any]]) -> str:
    lines = ["| stream (first N) | dtype | first differing prediction | differing predictions "
             "| max param diff at 100 / 300 / end | max memory diff (any step) |",
             "|---|---|---|---|---|---|"]
    for r in records:
        trace = {t["position"]: t for t in r["trace"]}
        at = [trace[p]["max_param_diff"] for p in (100, 300) if p in trace]
        at.append(r["trace"][-1]["max_param_diff"])
        first = r["differing_predictions"][0] if r["differing_predictions"] else "none"
        lines.append(f"| {r['dataset']} ({r['limit']}) | {r['dtype']} | {first} | "
                     f"{len(r['differing_predictions'])} | "
                     f"{' / '.join(f'{v:.1e}' for v in at)} | "
                     f"{max(t['max_memory_diff'] for t in r['trace']):.1e} |")
    return "\n".join(lines) + "\n"


def render(records: list[dict[str, Any]]) -> str:
    by_key: dict[tuple, dict[str, dict[str, Any]]] = {}
    for record in records:
        key = (record["dataset"], record["label_ratio"], record["seed"], record["limit"],
               record.get("dtype", "float32"))
        by_key.setdefault(key, {})[record["side"]] = record
    lines = ["| stream (first N) | ratio | seed | dtype | ours acc | reference acc | abs. diff "
             "| same predictions | first differing sample | ours median ms/sample "
             "| reference median ms/sample | threads |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (dataset, ratio, seed, limit, dtype), sides in sorted(by_key.items()):
        ours, ref = sides.get("ours"), sides.get("reference")
        cells = [f"{dataset} ({limit})", f"{ratio:g}", str(seed), dtype]
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
    run.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    run.add_argument("--root", type=Path, default=None)
    sub.add_parser("render", help="print and write the comparison table")
    step = sub.add_parser("lockstep", help="both sides step by step: where they part")
    step.add_argument("--dataset", default="GSAD")
    step.add_argument("--dtype", choices=("float32", "float64"), default="float32")
    step.add_argument("--ratio", type=float, default=0.01)
    step.add_argument("--seed", type=int, default=0)
    step.add_argument("--limit", type=int, default=400)
    step.add_argument("--root", type=Path, default=None)
    args = parser.parse_args()

    if args.command == "render":
        records = [json.loads(p.read_text()) for p in sorted(OUT.glob("*.json"))]
        steps = [json.loads(p.read_text()) for p in sorted(LOCKSTEP.glob("*.json"))]
        table = render(records) + "\n" + render_lockstep(steps)
        (HERE / "results" / "reference_accuracy.md").write_text(table)
        print(table)
        return
    root = args.root or default_data_root()
    if root is None:
        sys.exit("no data folder: pass --root or set TGS_DATA_ROOT")
    if args.command == "lockstep":
        torch.set_num_threads(1)
        record = lockstep(args.dataset, args.ratio, args.seed, args.limit, root,
                          getattr(torch, args.dtype))
        LOCKSTEP.mkdir(parents=True, exist_ok=True)
        path = LOCKSTEP / (f"{args.dataset}_{args.ratio:g}_seed{args.seed}_limit{args.limit}"
                           f"_{args.dtype}.json")
        path.write_text(json.dumps(record))
        print(render_lockstep([record]))
        return
    sides = SIDES if args.side == "both" else (args.side,)
    OUT.mkdir(parents=True, exist_ok=True)
    for dataset in args.datasets:
        for side in sides:
            path = result_path(dataset, args.ratio, args.seed, args.limit, side, args.dtype)
            if path.exists():
                print(f"skip {path.name} (exists)")
                continue
            record = run_one(dataset, args.ratio, args.seed, args.limit, side, root,
                             args.threads, getattr(torch, args.dtype))
            path.write_text(json.dumps(record))
            print(f"{path.name}: accuracy {record['accuracy']:.4f}, "
                  f"{record['ms_per_sample']:.1f} ms/sample")


if __name__ == "__main__":
    main()
