"""SLeDGe and SLeDGe-L against CapyMOA's learners, all driven by CapyMOA's own evaluator.

Every (learner, dataset, label_probability, seed) run streams the same
preprocessed NumPy array through ``capymoa.evaluation.prequential_ssl_evaluation``
(Python loop, ``optimise=False``, so every learner sees the same label mask
drawn from ``random_seed``), and writes one JSON under
``benchmarks/results/peers/``; a run whose JSON exists is skipped. Afterwards
all JSONs are rendered into ``benchmarks/results/peers/peers.md`` and printed.

SLeDGe and SLeDGe-L runs longer than a session (the whole MNIST stream on a
CPU) take ``--checkpoint-every N``: they then run through the package's
resumable runner (:func:`~torch_geometric_stream.evaluation.prequential`) with
the draws of CapyMOA's evaluator
(:func:`~torch_geometric_stream.evaluation.capymoa_label_mask`), the same
predict-then-train order and the same float32 rows, which gives the
predictions CapyMOA's evaluator gives (``tests/cli/test_peers.py`` asserts it),
checkpoint beside their JSON every N instances and resume from there.
CapyMOA's own learners always run in one process: SLEADE and
StreamingRandomPatches hold a MOA class that Java cannot serialize, so
CapyMOA's ``save_model`` cannot checkpoint them.

SSL learners (SLeDGe, SLeDGe-L, SLEADE, OSNN) also learn the unlabeled
instances; the supervised ones (HoeffdingTree, KNN, StreamingRandomPatches)
see only the labeled ones, as CapyMOA's evaluator does. CapyMOA's OSNN has a
single sigmoid output (binary classification only) and is skipped on
multi-class streams.

    OMP_NUM_THREADS=1 python benchmarks/peers.py --datasets Shopper GSAD --ratios 0.01
    OMP_NUM_THREADS=1 python benchmarks/peers.py --learners sledge sledge-light --limit 3000
    OMP_NUM_THREADS=1 python benchmarks/peers.py --datasets MNIST --learners sledge \
        --checkpoint-every 2000
    python benchmarks/peers.py --render-only
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import torch

from torch_geometric_stream.checkpoint import checkpoint_callback, load_checkpoint
from torch_geometric_stream.cli.configs import resolve_config
from torch_geometric_stream.cli.models import model_kwargs
from machine import (data_root, load_or_exit, read_results,  # noqa: E402  (on sys.path)
                     seed_value, usage_errors)
from torch_geometric_stream.cli.arguments import label_ratio, positive_int
from torch_geometric_stream.datasets import StreamDataset
from torch_geometric_stream.evaluation import (PrequentialResult, capymoa_label_mask,
                                               prequential)
from torch_geometric_stream.evaluation.transforms import make_transform
from torch_geometric_stream.files import atomic_write_text

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "peers"
DATASETS = ("Shuttle", "Shopper", "GSAD", "MNIST")
LEARNERS = ("sledge", "sledge-light", "SLEADE", "OSNN", "HoeffdingTree", "KNN",
            "StreamingRandomPatches")
LABELS = {"sledge": "SLeDGe", "sledge-light": "SLeDGe-L"}
_COLUMN_ORDER = ["SLeDGe", "SLeDGe-L", "SLeDGe-L (per-class)",
                 *[name for name in LEARNERS if name not in LABELS]]


def sledge_config(model: str, dataset: str, ratio: float, num_classes: int) -> dict[str, Any]:
    """The package's paper configuration of ``model`` for this run (as the CLI resolves it)."""
    return model_kwargs(resolve_config(dataset, ratio, model, {}, None,
                                       num_classes=num_classes))


def make_learner(name: str, schema: Any, dataset: str, ratio: float,
                 seed: int) -> tuple[Any, dict[str, Any]]:
    """The learner ``name`` for ``schema`` and the configuration recorded with its result."""
    from capymoa.classifier import KNN, HoeffdingTree, StreamingRandomPatches
    from capymoa.ssl import OSNN, SLEADE

    from torch_geometric_stream.integrations.capymoa import CapyMOASLeDGe

    num_classes = schema.get_num_classes()
    if name in ("sledge", "sledge-light"):
        config = sledge_config(name, dataset, ratio, num_classes)
        return CapyMOASLeDGe(schema, light=name == "sledge-light", random_seed=seed,
                             **config), config
    if name == "OSNN":
        return OSNN(schema, seed=seed), {}
    builders: dict[str, Callable[..., Any]] = {
        "SLEADE": SLEADE, "HoeffdingTree": HoeffdingTree, "KNN": KNN,
        "StreamingRandomPatches": StreamingRandomPatches}
    if name not in builders:
        raise ValueError(f"unknown learner {name!r}; choose from {LEARNERS}")
    return builders[name](schema, random_seed=seed), {}


def result_path(learner: str, dataset: str, ratio: float, seed: int, limit: Optional[int],
                scaling: str) -> Path:
    suffix = f"_limit{limit}" if limit else ""
    return RESULTS / f"{learner}_{dataset}_{ratio:g}_seed{seed}_{scaling}{suffix}.json"


def load_arrays(data: StreamDataset, scaling: str) -> tuple[np.ndarray, np.ndarray]:
    """The dataset's features after min-max scaling to [-1, 1], float64 :math:`(T, d)`,
    and its classes :math:`(T,)`."""
    transform = make_transform(scaling, l2=False, data=data.x if scaling == "global" else None)
    return transform.transform_many(data.x).double().numpy(), np.asarray(data.y)


def numpy_stream(x: np.ndarray, y: np.ndarray, name: str) -> Any:
    """``x`` and ``y`` as a CapyMOA ``NumpyStream``."""
    from capymoa.stream import NumpyStream

    return NumpyStream(x, y, dataset_name=name)


def run_one(learner_name: str, dataset: str, stream: Any, ratio: float, seed: int,
            limit: Optional[int], scaling: str) -> dict[str, Any]:
    """Evaluate one learner prequentially, without a progress bar, and return the JSON record."""
    from capymoa.evaluation import prequential_ssl_evaluation

    learner, config = make_learner(learner_name, stream.get_schema(), dataset, ratio, seed)
    start = time.perf_counter()
    results = prequential_ssl_evaluation(stream, learner, max_instances=limit,
                                         label_probability=ratio, random_seed=seed,
                                         optimise=False, window_size=1000, progress_bar=False)
    seconds = time.perf_counter() - start
    samples = int(results.cumulative.instances_seen)
    return {
        "learner": LABELS.get(learner_name, learner_name), "key": learner_name,
        "dataset": dataset, "label_probability": ratio, "seed": seed, "limit": limit,
        "samples": samples, "scaling": scaling,
        "accuracy": float(results.cumulative.accuracy()) / 100.0,
        "unlabeled_ratio": float(results.other_metrics()["unlabeled_ratio"]),
        "seconds": seconds, "ms_per_sample": 1000.0 * seconds / samples,
        "torch_threads": torch.get_num_threads(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "config": config, "capymoa": version("capymoa"), "torch": torch.__version__,
    }


def evaluate_resumable(learner_name: str, dataset: str, x: np.ndarray, y: np.ndarray,
                       ratio: float, seed: int, limit: Optional[int], checkpoint: Path,
                       every: int) -> tuple[PrequentialResult, dict[str, Any]]:
    """SLeDGe or SLeDGe-L evaluated as CapyMOA's evaluator evaluates it, resumably.

    Every instance is predicted, then learned with its label where
    :func:`capymoa_label_mask` (CapyMOA's draw for ``random_seed=seed``) reveals
    it and without otherwise, from the float32 row the adapter would read.
    ``checkpoint`` is written every ``every`` instances and after the last; if
    it exists when the run starts, the run resumes from it. No progress bar: one
    line per finished run, as in the other benchmark scripts.

    Returns:
        The result over the evaluated positions, and the learner's configuration.
    """
    learner, config = make_learner(learner_name, numpy_stream(x, y, dataset).get_schema(),
                                   dataset, ratio, seed)
    model = learner.model
    end = len(y) if limit is None else min(limit, len(y))
    identity = {"learner": learner_name, "dataset": dataset, "label_probability": ratio,
                "seed": seed, "limit": limit, "num_samples": len(y)}
    start, initial = 0, None
    if checkpoint.exists():
        state = load_checkpoint(checkpoint, model, expect=identity)
        start, initial = state.position, state.record
    result = prequential(model, zip(x.astype(np.float32), y),
                         label_mask=capymoa_label_mask(len(y), ratio, seed), limit=limit,
                         start=start, initial=initial, progress=False,
                         callback=checkpoint_callback(checkpoint, model, every=every, end=end,
                                                      extra=identity))
    return result, config


def run_resumable(learner_name: str, dataset: str, x: np.ndarray, y: np.ndarray,
                  ratio: float, seed: int, limit: Optional[int], scaling: str, path: Path,
                  every: int) -> dict[str, Any]:
    """:func:`evaluate_resumable` with its checkpoint beside ``path`` (deleted at
    the end), as the JSON record :func:`run_one` writes."""
    checkpoint = path.with_suffix(".ckpt")
    resumed = checkpoint.exists()
    result, config = evaluate_resumable(learner_name, dataset, x, y, ratio, seed, limit,
                                        checkpoint, every)
    assert result.correct is not None and result.labeled is not None  # history="full"
    samples = int(result.correct.size)
    record = {
        "learner": LABELS[learner_name], "key": learner_name, "dataset": dataset,
        "label_probability": ratio, "seed": seed, "limit": limit, "samples": samples,
        "scaling": scaling, "accuracy": float(result.correct.mean()),
        "unlabeled_ratio": float(1.0 - result.labeled.mean()),
        # wall seconds of this invocation only (a resumed run ran in several); the
        # median latency of predict + learn over every instance instead of wall / n
        "seconds": float(result.metrics["seconds"]),
        "ms_per_sample": float(result.metrics["ms_per_sample_median"]),
        "ms_per_sample_basis": "median of predict + learn",
        "torch_threads": torch.get_num_threads(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "config": config, "capymoa": version("capymoa"), "torch": torch.__version__,
        "driver": "resumable", "resumed": resumed,
    }
    checkpoint.unlink(missing_ok=True)
    return record


def display_name(record: dict[str, Any]) -> str:
    """The learner's name in tables; SLeDGe-L runs made with one labeled slot per class
    (the paper's memory, and the only one before ``light_memory`` existed) say so."""
    if record["key"] == "sledge-light" and \
            record["config"].get("light_memory", "per-class") == "per-class":
        return "SLeDGe-L (per-class)"
    return record["learner"]


def summary_table(records: list[dict[str, Any]]) -> list[str]:
    """One row per (dataset, label p, samples, scaling), one column per learner:
    accuracy (mean over seeds), the best of the row in bold."""
    columns = sorted({display_name(r) for r in records},
                     key=lambda name: (_COLUMN_ORDER.index(name) if name in _COLUMN_ORDER
                                       else len(_COLUMN_ORDER), name))
    cells: dict[tuple, dict[str, list[float]]] = {}
    for r in records:
        name = display_name(r)
        row = (r["dataset"], r["label_probability"], r["samples"], r["scaling"])
        cells.setdefault(row, {}).setdefault(name, []).append(r["accuracy"])
    lines = ["| dataset | label p | samples | scaling | " + " | ".join(columns) + " |",
             "|---" * (4 + len(columns)) + "|"]
    for (dataset, ratio, samples, scaling), by_learner in cells.items():
        means = {name: sum(values) / len(values) for name, values in by_learner.items()}
        best = max(means.values())
        shown = [("**{:.2f} %**" if means[name] == best else "{:.2f} %").format(100 * means[name])
                 if name in means else "-" for name in columns]
        lines.append(f"| {dataset} | {ratio:g} | {samples} | {scaling} | " + " | ".join(shown)
                     + " |")
    return lines


def render(records: list[dict[str, Any]]) -> str:
    """``records``, the JSONs of ``RESULTS``, as Markdown tables, a summary and every
    run (also written to ``peers.md``)."""
    order = {name: i for i, name in enumerate(LEARNERS)}
    records.sort(key=lambda r: (r["dataset"], r["label_probability"], r["limit"] is not None,
                                order.get(r["key"], len(order)), r["seed"]))
    lines = [
        "# SLeDGe vs CapyMOA learners (CapyMOA `prequential_ssl_evaluation`)",
        "",
        "Generated by `benchmarks/peers.py`. Same stream, same min-max scaling to [-1, 1], "
        "same label mask (Python evaluation loop, `optimise=False`) for every learner. "
        "Accuracy = cumulative prequential accuracy over the first `samples` instances "
        "(a `limit` marks a truncated stream: compare only rows with the same samples). "
        "ms/sample = wall clock of the whole evaluation (predict + train + loop) per "
        "instance. SLeDGe uses the package's paper configuration for the dataset and ratio. "
        "CapyMOA's OSNN is binary-only (one sigmoid output): run on Shopper only.",
        "",
        "Summary (accuracy; mean over seeds where there are several; best of a row in bold; "
        "SLeDGe-L (per-class) = runs with one labeled slot per class):",
        "",
        *summary_table(records),
        "",
        "Every run:",
        "",
        "| dataset | label p | samples | learner | seed | accuracy | ms/sample | threads "
        "(torch/OMP) | scaling |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        limit = f"{r['samples']} (limit)" if r["limit"] else str(r["samples"])
        lines.append(f"| {r['dataset']} | {r['label_probability']:g} | {limit} | {display_name(r)} "
                     f"| {r['seed']} | {100 * r['accuracy']:.2f} % | {r['ms_per_sample']:.2f} "
                     f"| {r['torch_threads']}/{r['omp_num_threads']} | {r['scaling']} |")
    text = "\n".join(lines) + "\n"
    atomic_write_text(RESULTS / "peers.md", text)
    return text


def main(argv: Optional[list[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS,
                        help="streams (default: all four)")
    parser.add_argument("--learners", nargs="+", default=list(LEARNERS), choices=LEARNERS,
                        help="learners (default: all)")
    parser.add_argument("--ratios", nargs="+", type=label_ratio, default=[0.01, 0.001],
                        help="label ratios, each in (0, 1] (default: 0.01 0.001)")
    parser.add_argument("--seeds", nargs="+", type=seed_value, default=[1],
                        help="label-draw seeds (default: 1)")
    parser.add_argument("--limit", type=positive_int, default=None,
                        help="evaluate only the first LIMIT instances")
    parser.add_argument("--scaling", choices=("global", "online"), default="global",
                        help="min-max to [-1, 1] with the whole dataset's range (the issue's "
                             "orientation numbers) or the running range")
    parser.add_argument("--root", type=Path, default=None, help="data root")
    parser.add_argument("--checkpoint-every", type=positive_int, default=None, metavar="N",
                        help="SLeDGe and SLeDGe-L: run resumably (same predictions as "
                             "CapyMOA's evaluator), checkpointing every N instances")
    parser.add_argument("--render-only", action="store_true",
                        help="run nothing: print and write the table of the existing results")
    args = parser.parse_args(argv)
    with usage_errors(parser):

        RESULTS.mkdir(parents=True, exist_ok=True)
        if not args.render_only:
            root = data_root(parser, args.root)
            if importlib.util.find_spec("capymoa") is None:
                parser.error('CapyMOA is not installed: pip install ".[capymoa]"')
            read_results(parser, RESULTS, "*.json")  # a bad result: refused before any run
            for dataset in args.datasets:
                arrays = stream = None
                for ratio in args.ratios:
                    for seed in args.seeds:
                        for learner in args.learners:
                            path = result_path(learner, dataset, ratio, seed, args.limit,
                                               args.scaling)
                            if path.exists():
                                print(f"skip {path.name}")
                                continue
                            if arrays is None:
                                arrays = load_arrays(load_or_exit(parser, dataset, root),
                                                     args.scaling)
                                stream = numpy_stream(*arrays, dataset)
                            assert stream is not None  # loaded with the arrays
                            if learner == "OSNN" and stream.get_schema().get_num_classes() > 2:
                                print(f"skip OSNN on {dataset}: CapyMOA's OSNN is binary only")
                                continue
                            if learner in LABELS and args.checkpoint_every:
                                record = run_resumable(learner, dataset, *arrays, ratio, seed,
                                                       args.limit, args.scaling, path,
                                                       args.checkpoint_every)
                            else:
                                record = run_one(learner, dataset, stream, ratio, seed,
                                                 args.limit, args.scaling)
                            atomic_write_text(path, json.dumps(record, indent=1))
                            print(f"{record['learner']:>24} {dataset:>8} p={ratio:g} seed={seed} "
                                  f"n={record['samples']}: {100 * record['accuracy']:.2f} % "
                                  f"{record['ms_per_sample']:.2f} ms/sample", flush=True)
        print(render(read_results(parser, RESULTS, "*.json")))


if __name__ == "__main__":
    main()
