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

``run --perturb EPS --perturb-seeds S...`` measures the noise floor of that
target: our side again, its initial parameters multiplied by ``1 + EPS * z``
(``z`` standard normal, drawn from seed ``S``; ``EPS`` about float32's rounding
unit), so each run differs from the unperturbed one by a rounding-sized change
only. How far those runs' accuracies spread is how far any two implementations
that round differently can be expected to land apart on this stream.

``lockstep`` runs both sides in one process, sample by sample, and records how
far their parameters, memories and predictions are apart (in float32 and, with
``--dtype float64``, in double precision): it separates a difference of
semantics (memories or predictions differ while parameters still agree) from
the amplification of rounding by thousands of Adam steps (parameters drift
apart gradually, memories stay equal).

    python benchmarks/reference_accuracy.py run --datasets GSAD MNIST --side ours
    python benchmarks/reference_accuracy.py run --datasets GSAD MNIST --side reference
    python benchmarks/reference_accuracy.py run --datasets GSAD --side ours --perturb 1e-7 --perturb-seeds 1 2 3 4 5
    python benchmarks/reference_accuracy.py render
    python benchmarks/reference_accuracy.py lockstep --dataset GSAD --limit 400 --dtype float64
"""
from __future__ import annotations

import argparse
import itertools
import json
import platform
import sys
from pathlib import Path
from typing import Any, Optional

import numpy as np
import torch

from torch_geometric_stream.cli.arguments import (MAX_THREADS, add_root_option, label_ratio,
                                                  positive_int, thread_count)
from torch_geometric_stream.cli.configs import resolve_config, resolve_stream_entries
from torch_geometric_stream.cli.errors import UsageError, one_line
from torch_geometric_stream.cli.models import build_learner, build_transform
from torch_geometric_stream.datasets import DatasetError, StreamDataset, load_dataset
from torch_geometric_stream.evaluation import (LEARNER_SCALINGS, StreamTransform,
                                               paper_label_mask, prequential)
from torch_geometric_stream.files import atomic_write_text

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
# (dataset_name: gsad -> GSAD, its setting)
from machine import cpu_model, data_root, dataset_name, read_results, seed_value  # noqa: E402
from reference_sledge import DenseReferenceSLeDGe  # noqa: E402

OUT = HERE / "results" / "reference_accuracy"
LOCKSTEP = OUT / "lockstep"
SIDES = ("ours", "reference")


def result_path(dataset: str, ratio: float, seed: int, limit: int, side: str,
                dtype: str = "float32", perturb: Optional[tuple[float, int]] = None) -> Path:
    suffix = "" if dtype == "float32" else f"_{dtype}"
    if perturb is not None:
        suffix += f"_perturb{perturb[0]:g}_p{perturb[1]}"
    return OUT / f"{dataset}_{ratio:g}_seed{seed}_limit{limit}_{side}{suffix}.json"


def perturb_parameters(module: torch.nn.Module, eps: float, seed: int) -> None:
    """Multiply every parameter by ``1 + eps * z``, ``z`` standard normal from ``seed``."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for param in module.parameters():
            noise = torch.randn(param.shape, generator=generator, dtype=torch.float64)
            param.mul_((1.0 + eps * noise).to(param.dtype))


def perturbation_size(text: str) -> float:
    """An argparse type: ``--perturb``'s EPS, a relative size in (0, 1). The
    factors ``1 + EPS * z`` perturb nothing at 0, draw the perturbations of
    ``abs(EPS)`` (mirrored) below it, and from 1 on are no small change (a
    parameter's sign flips wherever ``z <= -1 / EPS``); ``nan`` is refused too."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a relative size in (0, 1), got {text!r}")
    return value


def run_one(dataset: StreamDataset, ratio: float, seed: int, side: str, threads: int,
            dtype: torch.dtype = torch.float32,
            perturb: Optional[tuple[float, int]] = None) -> dict[str, Any]:
    """Stream ``dataset`` (a prefix, see :func:`load_prefix`) through one side in
    ``dtype``, without a progress bar (like the other benchmark scripts: one line
    per finished run); the run's record. ``perturb = (eps, seed)``: see
    :func:`perturb_parameters` (our side only)."""
    torch.set_num_threads(threads)
    config, setting_scaling, learner, mask, transform = _setup(dataset, ratio, seed)
    learner = learner.to(dtype)
    if perturb is not None:
        perturb_parameters(learner, *perturb)
    if side == "reference":
        learner = reference_of(learner, dataset.name)
    result = prequential(learner, dataset, label_mask=mask, progress=False,
                         transform=lambda x: transform(x).to(dtype))
    assert result.predictions is not None  # kept by the default history="full"
    return {"dataset": dataset.name, "label_ratio": ratio, "seed": seed,
            "limit": dataset.num_samples,
            "side": side, "dtype": str(dtype).replace("torch.", ""), "threads": threads,
            "cpu": cpu_model(),
            "torch": torch.__version__, "python": platform.python_version(),
            "config": config, "inputs": _inputs(config, setting_scaling),
            "accuracy": result.metrics["accuracy"],
            "perturb": None if perturb is None else {"eps": perturb[0], "seed": perturb[1]},
            "ms_per_sample": result.metrics["ms_per_sample_median"],
            "seconds": result.metrics["seconds"],
            "predictions": result.predictions.tolist()}


def load_prefix(name: str, root: Path, limit: int) -> StreamDataset:
    """The first ``limit`` samples of the dataset ``name`` (canonical).

    Raises:
        UsageError: the dataset's files are missing or unreadable.
    """
    try:
        return load_dataset(name, root).head(limit)
    except (DatasetError, OSError) as error:
        raise UsageError(f"cannot load {name} from --root {root}: {error}") from None


def _setup(dataset: StreamDataset, ratio: float, seed: int
           ) -> tuple[dict[str, Any], str, Any, np.ndarray, StreamTransform]:
    """The resolved configuration, the setting's own scaling, a freshly built
    SLeDGe, the label mask and the input pipeline shared by both sides.

    The dense reference takes rows as given: a scaling the setting has SLeDGe
    do itself (:data:`~torch_geometric_stream.evaluation.LEARNER_SCALINGS`,
    e.g. GSAD's ``"robust-rescale"``) is done by the shared pipeline instead
    (``"robust"``, same quantile range settings), after the setting's feature
    transform, so both sides get the very same rows."""
    config = resolve_stream_entries(
        resolve_config(dataset.name, ratio, "sledge", {}, None,
                       num_classes=dataset.num_classes),
        "sledge", dataset.value_range)
    setting_scaling = config["scaling"]
    config["scaling"] = LEARNER_SCALINGS.get(setting_scaling, setting_scaling)
    learner = build_learner("sledge", dataset.num_features, dataset.num_classes, config,
                            seed, "cpu")
    mask = paper_label_mask(dataset.y, ratio, seed)
    return config, setting_scaling, learner, mask, build_transform(config, dataset, seed)


def reference_of(learner: Any, dataset_name: str) -> DenseReferenceSLeDGe:
    """The dense reference of ``learner``.

    Raises:
        UsageError: the setting of ``dataset_name`` has an entry the reference
            cannot mirror.
    """
    try:
        return DenseReferenceSLeDGe(learner)
    except ValueError as error:
        raise UsageError(f"the {dataset_name} setting cannot be compared: {error}") from None


def _inputs(config: dict[str, Any], setting_scaling: str) -> dict[str, str]:
    """The input pipeline both sides ran on, and the scaling of the setting."""
    return {"scaling": config["scaling"], "feature_transform": config["feature_transform"],
            "setting_scaling": setting_scaling}


def lockstep(dataset: StreamDataset, ratio: float, seed: int, dtype: torch.dtype,
             every: int = 25) -> dict[str, Any]:
    """Both sides step by step on one prefix; distances every ``every`` samples."""
    config, setting_scaling, ours, mask, transform = _setup(dataset, ratio, seed)
    limit = dataset.num_samples
    ours = ours.to(dtype)
    reference = reference_of(ours, dataset.name)
    trace, differing = [], []
    for position, (raw, y) in enumerate(dataset):
        x = transform(raw).to(dtype)
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
    return {"dataset": dataset.name, "label_ratio": ratio, "seed": seed, "limit": limit,
            "dtype": str(dtype).replace("torch.", ""), "config": config,
            "inputs": _inputs(config, setting_scaling), "trace": trace,
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


def _run_key(record: dict[str, Any]) -> tuple:
    return (record["dataset"], record["label_ratio"], record["seed"], record["limit"],
            record.get("dtype", "float32"))


def _sides_by_key(records: list[dict[str, Any]]) -> dict[tuple, dict[str, dict[str, Any]]]:
    """Unperturbed records by run key, then side."""
    by_key: dict[tuple, dict[str, dict[str, Any]]] = {}
    for record in records:
        if record.get("perturb") is None:
            by_key.setdefault(_run_key(record), {})[record["side"]] = record
    return by_key


def render_noise(records: list[dict[str, Any]]) -> str:
    """Perturbed runs of our side against the unperturbed ones and the reference."""
    sides = _sides_by_key(records)
    groups: dict[tuple, list[float]] = {}
    for record in records:
        if record.get("perturb") is not None:
            key = (*_run_key(record), record["perturb"]["eps"])
            groups.setdefault(key, []).append(record["accuracy"])
    lines = ["| stream (first N) | ratio | seed | dtype | eps | perturbed runs "
             "| accuracy mean +- std | min - max | max abs(perturbed - ours) "
             "| abs(ours - reference) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for (dataset, ratio, seed, limit, dtype, eps), accs in sorted(groups.items()):
        base = sides.get((dataset, ratio, seed, limit, dtype), {})
        ours, ref = base.get("ours"), base.get("reference")
        values = np.asarray(accs)
        spread = f"{np.abs(values - ours['accuracy']).max():.4f}" if ours else "-"
        gap = f"{abs(ours['accuracy'] - ref['accuracy']):.4f}" if ours and ref else "-"
        std = values.std(ddof=1) if len(values) > 1 else 0.0
        lines.append(f"| {dataset} ({limit}) | {ratio:g} | {seed} | {dtype} | {eps:g} | "
                     f"{len(values)} | {values.mean():.4f} +- {std:.4f} | "
                     f"{values.min():.4f} - {values.max():.4f} | {spread} | {gap} |")
    return "\n".join(lines) + "\n"


def render(records: list[dict[str, Any]]) -> str:
    by_key = _sides_by_key(records)
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
    return "\n".join(lines) + "\n" + render_seed_means(by_key)


def render_seed_means(by_key: dict[tuple, dict[str, dict[str, Any]]]) -> str:
    """Mean accuracy of each side over the seeds where both sides ran, per
    (stream, ratio, first N, dtype): the quantity the 0.005 target is about."""
    paired: dict[tuple, list[tuple[float, float]]] = {}
    for (dataset, ratio, _, limit, dtype), sides in by_key.items():
        if "ours" in sides and "reference" in sides:
            paired.setdefault((dataset, ratio, limit, dtype), []).append(
                (sides["ours"]["accuracy"], sides["reference"]["accuracy"]))
    lines = ["", "| stream (first N) | ratio | dtype | seeds | ours mean | reference mean "
             "| abs. diff of means | per-seed diff (ours - reference) std |",
             "|---|---|---|---|---|---|---|---|"]
    for (dataset, ratio, limit, dtype), pairs in sorted(paired.items()):
        ours, ref = np.asarray(pairs).T
        std = f"{(ours - ref).std(ddof=1):.4f}" if len(pairs) > 1 else "-"
        lines.append(f"| {dataset} ({limit}) | {ratio:g} | {dtype} | {len(pairs)} | "
                     f"{ours.mean():.4f} | {ref.mean():.4f} | {abs(ours.mean() - ref.mean()):.4f} "
                     f"| {std} |")
    return "\n".join(lines) + "\n"


def main(argv: Optional[list[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run missing (dataset, side) cells")
    run.add_argument("--datasets", type=dataset_name, nargs="+", default=["GSAD", "MNIST"],
                     help="streams, any case (default: GSAD MNIST)")
    run.add_argument("--side", choices=(*SIDES, "both"), default="both",
                     help="which side to run (default: both)")
    run.add_argument("--ratio", type=label_ratio, default=0.01,
                     help="label ratio in (0, 1] (default: 0.01)")
    run.add_argument("--seed", type=seed_value, default=0,
                     help="label-draw and model seed (default: 0)")
    run.add_argument("--limit", type=positive_int, default=5000,
                     help="first N samples of each stream (default: 5000)")
    run.add_argument("--threads", type=thread_count, default=1,
                     help=f"torch threads, at most {MAX_THREADS} (default: 1)")
    run.add_argument("--dtype", choices=("float32", "float64"), default="float32",
                     help="precision of both sides (default: float32)")
    run.add_argument("--perturb", type=perturbation_size, default=None, metavar="EPS",
                     help="our side with its initial parameters scaled by 1 + EPS * z "
                          "(the noise floor of the comparison; EPS in (0, 1))")
    run.add_argument("--perturb-seeds", type=seed_value, nargs="+", default=[1], metavar="S",
                     help="with --perturb: the seeds of z, one run each (default: 1)")
    add_root_option(run)
    sub.add_parser("render", help="print and write the comparison table")
    step = sub.add_parser("lockstep", help="both sides step by step: where they part")
    step.add_argument("--dataset", type=dataset_name, default="GSAD",
                      help="the stream, any case (default: GSAD)")
    step.add_argument("--dtype", choices=("float32", "float64"), default="float32",
                      help="precision of both sides (default: float32)")
    step.add_argument("--ratio", type=label_ratio, default=0.01,
                      help="label ratio in (0, 1] (default: 0.01)")
    step.add_argument("--seed", type=seed_value, default=0,
                      help="label-draw and model seed (default: 0)")
    step.add_argument("--limit", type=positive_int, default=400,
                      help="first N samples (default: 400)")
    add_root_option(step)
    args = parser.parse_args(argv)
    try:
        command(args, parser)
    except UsageError as error:
        parser.error(one_line(error))


def command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Run the parsed command; no data folder is ``parser``'s usage error.

    Raises:
        UsageError: a missing data folder, unloadable data, a setting the
            reference cannot mirror.
    """
    if args.command == "render":
        records = read_results(parser, OUT, "*.json")
        steps = read_results(parser, LOCKSTEP, "*.json")
        table = render(records) + "\n" + render_noise(records) + "\n" + render_lockstep(steps)
        atomic_write_text(HERE / "results" / "reference_accuracy.md", table)
        print(table)
        return
    root = data_root(parser, args.root)
    if args.command == "lockstep":
        torch.set_num_threads(1)
        record = lockstep(load_prefix(args.dataset, root, args.limit), args.ratio,
                          args.seed, getattr(torch, args.dtype))
        LOCKSTEP.mkdir(parents=True, exist_ok=True)
        path = LOCKSTEP / (f"{args.dataset}_{args.ratio:g}_seed{args.seed}_limit{args.limit}"
                           f"_{args.dtype}.json")
        atomic_write_text(path, json.dumps(record))
        print(render_lockstep([record]))
        return
    if args.perturb is not None and args.side != "ours":
        raise UsageError("--perturb perturbs our side only: add --side ours")
    sides = SIDES if args.side == "both" else (args.side,)
    perturbs = ([None] if args.perturb is None
                else [(args.perturb, seed) for seed in args.perturb_seeds])
    OUT.mkdir(parents=True, exist_ok=True)
    for dataset, side, perturb in itertools.product(args.datasets, sides, perturbs):
        path = result_path(dataset, args.ratio, args.seed, args.limit, side, args.dtype,
                           perturb)
        if path.exists():
            print(f"skip {path.name} (exists)")
            continue
        record = run_one(load_prefix(dataset, root, args.limit), args.ratio, args.seed,
                         side, args.threads, getattr(torch, args.dtype), perturb)
        atomic_write_text(path, json.dumps(record))
        print(f"{path.name}: accuracy {record['accuracy']:.4f}, "
              f"{record['ms_per_sample']:.1f} ms/sample")


if __name__ == "__main__":
    main()
