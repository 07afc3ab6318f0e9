"""SLeDGe's per-sample step on a CUDA device: host-device syncs and throughput.
Without a CUDA device it prints 'no CUDA device' and exits with code 1 (after
checking its arguments).

Two measurements per (model, config), on the steady state of
``step_latency.py`` (memory filled directly, M = 1000, h = 256, 1 % labels),
with the rows fed from host memory one at a time, as a stream delivers them:

* **syncs**: every synchronizing CUDA call of a step, caught with
  ``torch.cuda.set_sync_debug_mode("warn")`` and attributed to the innermost
  frame of ``torch_geometric_stream`` on the Python stack (file:line and
  count per step). Reading the prediction is the one sync a stream cannot
  avoid; it shows up as "outside the package".
* **kernels**: CUDA kernels launched and GPU busy time per step
  (``torch.profiler``), which shows how much of a step is launch overhead,
  and the 40 most launched kernels by name and aten ops called (in the JSON,
  ``top_kernels`` and ``top_ops``).
* **repeatability**: two fresh same-seed models over the same samples:
  differing predictions and the largest parameter difference at the end.
* **throughput**: samples per second over ``--steps`` test-then-train steps
  (prediction read back each step, one device synchronize at the end), and
  the median per-step latency with a synchronize after every step.

A step is ``predict`` then ``learn``, or with ``--cuda-graph`` one
:class:`~torch_geometric_stream.models.CUDAGraphStep` ``predict_learn``
replayed from a CUDA graph (its warm-up meets every kind of label first, so
that no capture is timed).

Results: one JSON per (model, config) in ``results/cuda/`` and a markdown
table ``results/cuda/cuda_step.md`` (``_graphs`` added with ``--cuda-graph``).

    python benchmarks/cuda_step.py --configs gsad,mnist --models ours-full,ours-light
    python benchmarks/cuda_step.py --configs gsad,mnist --models ours-full,ours-light --cuda-graph
"""
from __future__ import annotations

import argparse
import collections
import json
import platform
import statistics
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any, Callable, Optional, Sequence, TextIO, Union

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import check_outputs, int_at_least, require_cuda  # noqa: E402
import step_latency  # noqa: E402
from step_latency import (CONFIGS, checked_selection, package_model, percentile,  # noqa: E402
                          synthetic)

import torch_geometric_stream  # noqa: E402
from torch_geometric_stream import SLeDGe  # noqa: E402
from torch_geometric_stream.files import atomic_write_text  # noqa: E402
from torch_geometric_stream.models import CUDAGraphStep  # noqa: E402

OUT = HERE / "results" / "cuda"
#: The package's folder: a sync is attributed to the innermost frame in it (a
#: substring test of the name would also match this script's frames in a checkout
#: folder named ``torch_geometric_stream``).
PACKAGE_DIR = Path(torch_geometric_stream.__file__).resolve().parent
#: step_latency's models less its dense reference (which has no ``to``, no
#: ``parameters`` and no CUDA graph step: step_latency times it on the CPU).
MODELS = tuple(name for name in step_latency.MODELS if not name.startswith("ref"))
#: ``step(row, label) -> prediction``: one test-then-train step of a stream.
Step = Callable[[torch.Tensor, int], int]


def stepper_of(model: SLeDGe, graphed: bool) -> Step:
    """``step(row, label) -> int``: the stream's test-then-train step, eager
    (``predict`` then ``learn``) or replayed from CUDA graphs."""
    if graphed:
        fused = CUDAGraphStep(model)
        return lambda row, label: int(fused.predict_learn(row, label)[0])

    def step(row: torch.Tensor, label: int) -> int:
        prediction = int(model.predict(row)[0])  # the stream reads every prediction
        model.learn(row, label)
        return prediction
    return step


def package_frames(stack: list[traceback.FrameSummary]) -> list[traceback.FrameSummary]:
    """The frames of ``stack`` whose files lie in the package's folder."""
    return [f for f in stack if Path(f.filename).resolve().is_relative_to(PACKAGE_DIR)]


def sync_sites(step: Step, x: torch.Tensor, labels: list[int], steps: int) -> dict[str, float]:
    """Synchronizing calls per step (reading the prediction included), by package line."""
    sites: collections.Counter[str] = collections.Counter()

    def record(message: Union[Warning, str], category: type[Warning], filename: str,
               lineno: int, file: Optional[TextIO] = None, line: Optional[str] = None) -> None:
        if "synchronizing" not in str(message):
            return
        frames = package_frames(traceback.extract_stack()[:-1])
        where = (f"{Path(frames[-1].filename).name}:{frames[-1].lineno} ({frames[-1].name})"
                 if frames else "outside the package (reading the prediction)")
        sites[where] += 1

    saved, saved_mode = warnings.showwarning, torch.cuda.get_sync_debug_mode()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = record
            torch.cuda.set_sync_debug_mode("warn")
            for i in range(steps):
                step(x[i], labels[i])
    finally:
        torch.cuda.set_sync_debug_mode(saved_mode)
        warnings.showwarning = saved
    return {where: count / steps for where, count in sites.most_common()}


def throughput(step: Step, x: torch.Tensor, labels: list[int], warmup: int,
               steps: int) -> dict[str, float]:
    for i in range(warmup):
        step(x[i], labels[i])
    torch.cuda.synchronize()
    start = time.perf_counter()
    for i in range(warmup, warmup + steps):
        step(x[i], labels[i])
    torch.cuda.synchronize()
    total = time.perf_counter() - start
    latencies = []
    for i in range(warmup + steps, warmup + 2 * steps):
        begin = time.perf_counter()
        step(x[i], labels[i])
        torch.cuda.synchronize()
        latencies.append((time.perf_counter() - begin) * 1e3)
    return {"samples_per_second": steps / total, "median_ms": statistics.median(latencies),
            "p95_ms": percentile(latencies, 0.95)}


def kernel_profile(step: Step, x: torch.Tensor, labels: list[int],
                   steps: int) -> dict[str, Any]:
    """CUDA kernels launched and GPU busy time per step (``torch.profiler``)."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for i in range(steps):
            step(x[i], labels[i])
        torch.cuda.synchronize()
    kernels = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    busy_us = sum(getattr(e, "device_time", 0.0) for e in kernels)
    by_name: collections.Counter[str] = collections.Counter()
    time_by_name: collections.defaultdict[str, float] = collections.defaultdict(float)
    for e in kernels:
        by_name[e.name] += 1
        time_by_name[e.name] += getattr(e, "device_time", 0.0)
    top = [{"kernel": name[:160], "per_step": count / steps,
            "us_per_step": time_by_name[name] / steps}
           for name, count in by_name.most_common(40)]
    ops = [{"op": a.key, "per_step": a.count / steps}
           for a in sorted(prof.key_averages(), key=lambda a: -a.count)
           if a.key.startswith("aten::")][:40]  # empty when replayed from a graph
    return {"kernels_per_step": len(kernels) / steps,
            "gpu_busy_ms_per_step": busy_us / steps / 1e3, "top_kernels": top, "top_ops": ops}


def repeatability(model_name: str, config: str, M: int, steps: int,
                  graphed: bool) -> dict[str, Union[int, float]]:
    """Two fresh models with the same seed over the same ``steps`` samples on
    the GPU: how many predictions differ, and how far their parameters end apart."""
    cfg = CONFIGS[config]
    x, y, labeled = synthetic(steps, cfg["d"], cfg["c"], seed=99)
    runs = []
    for _ in range(2):
        torch.manual_seed(0)
        model = package_model(model_name, cfg, M).to("cuda")
        step = stepper_of(model, graphed)
        predictions = [step(x[i], int(y[i]) if labeled[i] else -1) for i in range(steps)]
        runs.append((predictions, [p.detach().clone() for p in model.parameters()]))
    (first, params_a), (second, params_b) = runs
    return {"repeat_steps": steps,
            "repeat_differing_predictions": sum(a != b for a, b in zip(first, second)),
            "repeat_max_param_diff": max(float((a - b).abs().max())
                                         for a, b in zip(params_a, params_b))}


def measure(model_name: str, config: str, M: int, args: argparse.Namespace) -> dict:
    cfg = CONFIGS[config]
    torch.manual_seed(0)
    model = package_model(model_name, cfg, M).to("cuda")
    step = stepper_of(model, args.cuda_graph)
    # with graphs, the warm-up meets every kind of label, so that no capture is timed
    warmup = max(args.warmup, 3 * (cfg["c"] + 1)) if args.cuda_graph else args.warmup
    n = warmup + 2 * args.steps + 2 * args.sync_steps
    x, y, labeled = synthetic(n, cfg["d"], cfg["c"], seed=1234)  # host rows, as a stream reads
    labels = [int(y[i]) if labeled[i] else -1 for i in range(n)]
    if args.cuda_graph:
        labels[:warmup] = [i % (cfg["c"] + 1) - 1 for i in range(warmup)]
    speed = throughput(step, x, labels, warmup, args.steps)
    offset = warmup + 2 * args.steps
    syncs = sync_sites(step, x[offset:], labels[offset:], args.sync_steps)
    offset += args.sync_steps
    kernels = kernel_profile(step, x[offset:], labels[offset:], args.sync_steps)
    repeat = repeatability(model_name, config, M, args.repeat_steps, args.cuda_graph)
    return {"model": model_name, "config": config, "M": M, "cuda_graph": args.cuda_graph,
            **cfg, **speed, **kernels, **repeat,
            "syncs_per_step": syncs, "sync_steps": args.sync_steps,
            "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            "python": platform.python_version(), "command": " ".join(sys.argv),
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S")}


def table(results: list[dict]) -> str:
    lines = ["| model | config | CUDA graphs | M | samples/s | median ms (synced) | p95 ms "
             "| syncs/step (reading the prediction included) | kernels/step | GPU busy ms/step "
             "| same-seed runs: differing predictions / max param diff | GPU |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['model']} | {r['config']} | {'yes' if r['cuda_graph'] else 'no'} | "
                     f"{r['M']} | {r['samples_per_second']:.0f} | {r['median_ms']:.2f} | "
                     f"{r['p95_ms']:.2f} | {sum(r['syncs_per_step'].values()):.1f} | "
                     f"{r['kernels_per_step']:.0f} | "
                     f"{r['gpu_busy_ms_per_step']:.2f} | "
                     f"{r['repeat_differing_predictions']} of {r['repeat_steps']} / "
                     f"{r['repeat_max_param_diff']:.1e} | {r['gpu']} |")
    lines.append("")
    for r in results:
        for where, count in r["syncs_per_step"].items():
            lines.append(f"- {r['model']} {r['config']}"
                         f"{' (CUDA graphs)' if r['cuda_graph'] else ''}: {where} x{count:g}")
    return "\n".join(lines) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", default="gsad,mnist",
                        help=f"comma-separated subset of {tuple(CONFIGS)}")
    parser.add_argument("--models", default="ours-full,ours-light",
                        help=f"comma-separated subset of {MODELS}")
    parser.add_argument("--size", type=int_at_least(1), default=1000,
                        help="memory size M, filled directly (default: 1000)")
    parser.add_argument("--warmup", type=int_at_least(0), default=20,
                        help="untimed steps before the measured ones (default: 20)")
    parser.add_argument("--steps", type=int_at_least(1), default=200,
                        help="timed steps for throughput and latency (default: 200)")
    parser.add_argument("--sync-steps", type=int_at_least(1), default=20,
                        help="steps traced for host-device syncs and for kernels (default: 20)")
    parser.add_argument("--repeat-steps", type=int_at_least(1), default=300,
                        help="steps of the two same-seed runs compared for repeatability")
    parser.add_argument("--cuda-graph", action="store_true",
                        help="step through CUDAGraphStep.predict_learn (graph replay)")
    parser.add_argument("--out-dir", type=Path, default=OUT,
                        help="folder of the JSONs and the table (default: "
                             "benchmarks/results/cuda)")
    args = parser.parse_args(argv)
    check_outputs(parser, {"--out-dir": args.out_dir})
    models, configs = checked_selection(parser, args.models, args.configs, [args.size], "--size",
                                        MODELS)
    require_cuda()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    results = []
    for config in configs:
        for model_name in models:
            record = measure(model_name, config, args.size, args)
            graphs = "_graphs" if args.cuda_graph else ""
            path = args.out_dir / f"cuda_step_{model_name}_{config}_M{args.size}{graphs}.json"
            atomic_write_text(path, json.dumps(record, indent=1))
            results.append(record)
            print(table([record]), flush=True)
    text = table(results)
    atomic_write_text(args.out_dir / f"cuda_step{'_graphs' if args.cuda_graph else ''}.md", text)
    print(text)


if __name__ == "__main__":
    main()
