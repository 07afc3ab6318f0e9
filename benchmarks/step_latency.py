"""Steady-state per-sample latency of SLeDGe (ours) vs the dense reference.

One "step" is what every sample of a stream costs once the memory is full:
``predict(x)`` then ``learn(x, y)`` (1 % of the samples labeled), i.e. the
prediction, the memory merge and one Adam step. The memory is filled directly
with synthetic unit rows (no training), then ``--warmup`` steps are run and
``--steps`` steps timed (or fewer when ``--max-seconds`` runs out); the median
and p95 are reported.

Models: ``ours-full``, ``ours-light`` (``torch_geometric_stream.SLeDGe``; light with
the paper's one labeled slot per class), ``ours-light-full`` (SLeDGe-L with the
authors' full labeled memory, ``light_memory="full"``: L = M/10 labeled slots, all
of them class queries; the command line's default SLeDGe-L), ``ref-full``,
``ref-light`` (``benchmarks/reference_sledge.py``, the dense authors-structured
implementation with the same semantics).

Configurations (h = 256, the paper's width; L = M/10 labeled slots in full
mode and ``ours-light-full``, i.e. 100 of 1000 as in the 1 % runs; ``ours-light`` L = c):

* ``shuttle``: d = 9,   c = 7,  k = 5, num_layers = 2, embedding_layers = 1
* ``gsad``:    d = 128, c = 6,  k = 1, num_layers = 3 (authors' gcn_layer = 2), embedding_layers = 1
* ``mnist``:   d = 784, c = 10, k = 5, num_layers = 4 (authors' gcn_layer = 3), embedding_layers = 1

Every (model, config, M, threads) result goes to its own JSON file in
``--out-dir`` and is skipped when that file exists and was measured on this
machine (the run is resumable; ``--force`` re-measures; a result of another CPU,
CPU count, torch, SIMD flags, ... is measured again, and the run says why: see
``machine.other_machine``). A table is printed and written as markdown
(``--markdown``), with the reference/ours ratio (of two results of one host) and
the achieved GFLOP/s: the step's *useful* arithmetic (the method's floor, see
:func:`step_flops`) divided by the measured median time, next to this machine's
float32 matrix product rate measured at start-up.

``--reselect-every R`` and ``--search-dtype bfloat16`` time ours with those
optional approximations of SLeDGe (a separate result file and a ``variant``
column; the GFLOP/s column still counts the exact method's arithmetic).
``--adam plain`` times ours with torch's default Adam instead of the
package's fused one (variant ``adam-plain``); the "Adam ms" column is the
median of the optimizer step alone, timed inside the measured steps.

Example (GSAD- and MNIST-shaped at M = 1000, 1 thread)::

    OMP_NUM_THREADS=1 python benchmarks/step_latency.py --configs gsad,mnist \\
        --sizes 1000 --threads 1 --models ours-full,ours-light,ref-full,ref-light
"""
from __future__ import annotations

import argparse
import json
import math
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Optional, Sequence, Union

import torch
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from reference_sledge import DenseReferenceSLeDGe  # noqa: E402

from torch_geometric_stream import SLeDGe  # noqa: E402
from torch_geometric_stream.graph import NORMALIZATIONS  # noqa: E402
from machine import (check_outputs, host, int_at_least, measured_on,  # noqa: E402
                     other_machine, positive_ints, positive_number, read_results, recorded,
                     reused, thread_counts, usage_errors, warn_threads)
from torch_geometric_stream.cli.arguments import MAX_THREADS, positive_int  # noqa: E402
from torch_geometric_stream.files import atomic_savefig, atomic_write_text  # noqa: E402

CONFIGS = {
    "shuttle": dict(d=9, c=7, k=5, num_layers=2, embedding_layers=1),
    "gsad": dict(d=128, c=6, k=1, num_layers=3, embedding_layers=1),
    "mnist": dict(d=784, c=10, k=5, num_layers=4, embedding_layers=1),
}
MODELS = ("ours-full", "ours-light", "ours-light-full", "ref-full", "ref-light")


def labeled_slots(model: str, c: int, M: int) -> int:
    """Labeled slots L of ``model`` at memory size M: one per class for the paper's
    SLeDGe-L (``ours-light``, ``ref-light``), else M/10 (at least one per class)."""
    return c if model.endswith("-light") else max(c, M // 10)
SIZES = (250, 500, 1000, 2000, 4000, 8000)
HIDDEN = 256


# --------------------------------------------------------------------- FLOPs
def step_flops(d: int, c: int, k: int, num_layers: int, embedding_layers: int, M: int,
               light: bool, n_labeled: int, h: int = HIDDEN) -> dict:
    r"""Useful floating-point operations of one steady-state step (the method's
    arithmetic floor, the same for every implementation of it).

    * ``embedding``: :math:`f_E` over the M memory rows, forward and backward
      (the backward of the first layer needs no input gradient);
    * ``similarity``: one :math:`M \times M \times h` similarity product
      (full: the memory's top-k graph; light: the c query rows and the test row);
    * ``backbone``: forward and backward of the GCN layers' linear maps over
      the rows the loss depends on (full: all M; light: the ``n_labeled`` labeled
      rows' receptive field, at most :math:`n_\text{labeled} (k+1)^{L}` rows);
    * ``regularizer``: the cheap Gram form :math:`E^\top E`, :math:`X^\top E`
      (full) or, in light mode, the cheaper of the :math:`n_\text{labeled} \times M`
      block and the Gram form, forward and backward.
    """
    emb_fwd = 2 * M * (d * h + (embedding_layers - 1) * h * h)
    embedding = 3 * emb_fwd - 2 * M * d * h
    if light:
        similarity = 2 * (n_labeled + 1) * M * h
        rows = min(M, n_labeled * (k + 1) ** num_layers)
    else:
        similarity = 2 * M * M * h
        rows = M
    sizes = [d] + [h] * (num_layers - 1) + [c]
    bb_fwd = 2 * rows * sum(a * b for a, b in zip(sizes[:-1], sizes[1:]))
    backbone = 3 * bb_fwd - 2 * rows * d * h
    if light:  # the cheaper of the two exact forms, as structure_loss picks
        regularizer = min(3 * 2 * n_labeled * M * h + 2 * n_labeled * M * d,
                          3 * 2 * (M + n_labeled) * (h * h + h * d))
    else:
        regularizer = 3 * (2 * M * h * h + 2 * M * d * h)
    parts = dict(embedding=embedding, similarity=similarity, backbone=backbone,
                 regularizer=regularizer)
    parts["total"] = sum(parts.values())
    return parts


def gemm_gflops(threads: int, n: int = 1024, repeats: int = 5) -> float:
    """This machine's float32 matrix-product rate (best of ``repeats``)."""
    torch.set_num_threads(threads)
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2 * n ** 3 / best / 1e9


# ------------------------------------------------------------------ streams
def synthetic(n: int, d: int, c: int, seed: int, label_ratio: float = 0.01
              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    centers = torch.randn(c, d, generator=gen)
    y = torch.randint(0, c, (n,), generator=gen)
    x = F.normalize(centers[y] + torch.randn(n, d, generator=gen), dim=1)
    labeled = torch.rand(n, generator=gen) < label_ratio
    return x, y, labeled


def memory_rows(cfg: dict, name: str, M: int, seed: int = 1) -> torch.Tensor:
    """Synthetic unit rows that fill the memory of ``name`` at size M: its labeled
    slots (``slots_per_class`` rows of each class, class by class), then its
    unlabeled ones.

    Raises:
        ValueError: where M is too small for the labeled slots of the
            configuration (none left unlabeled, or a class the synthetic rows miss).
    """
    c = cfg["c"]
    L = labeled_slots(name, c, M)
    if M <= L:
        raise ValueError(f"M = {M} is too small for {name} with {c} classes: its {L} labeled "
                         f"slots leave no unlabeled one")
    per_class = L // c
    capacity = per_class * c + M - L
    x, y, _ = synthetic(capacity * 2, cfg["d"], c, seed=seed)
    labeled = [x[y == j][:per_class] for j in range(c)]
    if any(rows.size(0) < per_class for rows in labeled):
        raise ValueError(f"M = {M} is too small for {name} with {c} classes: the "
                         f"{capacity * 2} synthetic rows miss a class of its {L} labeled "
                         f"slots; use a larger M")
    return torch.cat([*labeled, x[:M - L]])


def build_model(name: str, cfg: dict, M: int, seed: int = 0,
                normalization: str = "symmetric", approximations: Optional[dict] = None
                ) -> Union[SLeDGe, DenseReferenceSLeDGe]:
    """A model with a full memory; ``approximations``: SLeDGe keyword
    arguments such as ``reselect_every`` (see :func:`approximations`). The
    dense reference for the ``ref-`` models, else the package's SLeDGe
    (:func:`package_model`)."""
    model = package_model(name, cfg, M, seed, normalization, approximations)
    return DenseReferenceSLeDGe(model) if name.startswith("ref") else model


def package_model(name: str, cfg: dict, M: int, seed: int = 0,
                  normalization: str = "symmetric", approximations: Optional[dict] = None
                  ) -> SLeDGe:
    """The package's SLeDGe of ``name`` with a full memory (the dense reference's
    starting point for the ``ref-`` models); arguments as :func:`build_model`'s."""
    light = "light" in name
    c = cfg["c"]
    L = labeled_slots(name, c, M)
    model = SLeDGe(cfg["d"], c, labeled_size=L, unlabeled_size=M - L, k=cfg["k"],
                   hidden_channels=HIDDEN, embedding_layers=cfg["embedding_layers"],
                   num_layers=cfg["num_layers"], light=light, lam=0.1, lr=1e-3, seed=seed,
                   normalization=normalization,
                   light_memory="full" if name.endswith("light-full") else "per-class",
                   **(approximations or {}))
    # Fill every slot directly with synthetic unit rows (a full memory).
    mem = model.memory
    state = model.state_dict()
    state["memory.prototypes"] = memory_rows(cfg, name, M, seed=seed + 1)
    state["memory.counts"] = torch.ones_like(mem.counts)
    state["memory.node_mask"] = torch.ones_like(mem.node_mask)
    state["memory.ages"] = torch.zeros_like(mem.ages)
    model.load_state_dict(state)
    assert model.memory.is_full
    return model


def record_optimizer_steps(model: Union[SLeDGe, DenseReferenceSLeDGe]) -> list[float]:
    """Milliseconds of each ``model.optimizer.step()`` from now on (the list
    fills as the model learns): the Adam share of a step, which a whole-step
    median on a shared machine cannot resolve."""
    times: list[float] = []
    step = model.optimizer.step

    def timed_step(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        result = step(*args, **kwargs)
        times.append((time.perf_counter() - start) * 1e3)
        return result

    # the instance's step timed in place (mypy refuses assigning to a method)
    model.optimizer.step = timed_step  # type: ignore[method-assign]
    return times


def time_steps(model: Union[SLeDGe, DenseReferenceSLeDGe], x: torch.Tensor, y: torch.Tensor,
               labeled: torch.Tensor, warmup: int, steps: int,
               max_seconds: float) -> tuple[list, float]:
    """Milliseconds of each timed step, and the minor page faults per timed step;
    ``max_seconds`` bounds the timed steps, counted from the first (not the warm-up)."""
    times = []
    budget_start: Optional[float] = None
    faults = 0
    for i in range(warmup + steps):
        label = int(y[i]) if labeled[i] else -1
        faults_before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        start = time.perf_counter()
        model.predict(x[i])
        model.learn(x[i], label)
        elapsed = time.perf_counter() - start
        if i >= warmup:
            faults += resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults_before
            times.append(elapsed * 1e3)
            budget_start = start if budget_start is None else budget_start
            if time.perf_counter() - budget_start > max_seconds and len(times) >= 3:
                break
    return times, faults / len(times)


def adam_text(result: dict) -> str:
    adam = result.get("adam_median_ms")
    return "" if adam is None else f"{adam:.2f}"


def faults_text(result: dict) -> str:
    faults = result.get("minor_faults_per_step")
    return "" if faults is None else f"{faults:.0f}"


def percentile(values: list, q: float) -> float:
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def approximations(args: argparse.Namespace, model: str = "ours-full") -> dict[str, Any]:
    """The approximation options of the command line that are switched on
    (for ours; the reference has none)."""
    chosen: dict[str, Any] = {}
    if model.startswith("ref"):
        return chosen
    if args.reselect_every > 1:
        chosen["reselect_every"] = args.reselect_every
    if args.search_dtype is not None:
        chosen["search_dtype"] = args.search_dtype
    return chosen


def variant_name(approx: dict, adam: str = "fused") -> str:
    """``exact``, or the approximations (and ``--adam plain``) as
    ``reselect8+bfloat16+adam-plain``."""
    parts = [f"reselect{approx['reselect_every']}" if "reselect_every" in approx else "",
             approx.get("search_dtype") or "", "adam-plain" if adam == "plain" else ""]
    return "+".join(part for part in parts if part) or "exact"


def variant_of(args: argparse.Namespace, model: str) -> str:
    """The variant name of ``model`` under the command line's options."""
    return variant_name(approximations(args, model),
                        "fused" if model.startswith("ref") else args.adam)


#: The result files' names in ``--out-dir`` (:func:`result_path`).
RESULT_FILES = "step_latency_*.json"


def result_path(out_dir: Path, model: str, config: str, M: int, threads: int,
                normalization: str = "symmetric", variant: str = "exact") -> Path:
    suffix = "" if normalization == "symmetric" else f"_{normalization}"
    suffix += "" if variant == "exact" else f"_{variant}"
    return out_dir / (f"step_latency_{model}_{config}_d{CONFIGS[config]['d']}_M{M}"
                      f"_t{threads}{suffix}.json")


def planned_runs(args: argparse.Namespace, models: Sequence[str],
                 configs: Sequence[str]) -> list[tuple[str, str, int, int, Path]]:
    """``(model, config, M, threads, result file)`` of every run the command line asks
    for, in the order they run."""
    return [(model, config, M, threads, result_path(args.out_dir, model, config, M, threads,
                                                    args.normalization, variant_of(args, model)))
            for threads in args.threads for config in configs for M in args.sizes
            for model in models]


def too_large(args: argparse.Namespace, model: str, M: int) -> bool:
    """Whether the run of ``model`` at ``M`` is skipped: the dense reference above
    ``--ref-max-size``."""
    return model.startswith("ref") and M > args.ref_max_size


def measure(model_name: str, config: str, M: int, threads: int, args: argparse.Namespace,
            gemm: float) -> dict:
    cfg = CONFIGS[config]
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    approx = approximations(args, model_name)
    model = build_model(model_name, cfg, M, normalization=args.normalization,
                        approximations=approx)
    if args.adam == "plain" and isinstance(model, SLeDGe):  # not the dense reference
        # torch's default Adam (a Python loop over the parameters), as before make_adam
        model.optimizer = torch.optim.Adam(model.parameters(), lr=model.lr,
                                           weight_decay=model.weight_decay)
    n = args.warmup + args.steps
    x, y, labeled = synthetic(n, cfg["d"], cfg["c"], seed=1234)
    adam_times = record_optimizer_steps(model)
    times, faults = time_steps(model, x, y, labeled, args.warmup, args.steps, args.max_seconds)
    adam_times = adam_times[args.warmup:]  # one optimizer step per learned sample
    n_labeled = labeled_slots(model_name, cfg["c"], M)
    flops = step_flops(cfg["d"], cfg["c"], cfg["k"], cfg["num_layers"],
                       cfg["embedding_layers"], M, "light" in model_name, n_labeled)
    median = statistics.median(times)
    return dict(
        model=model_name, config=config, M=M, threads=threads, hidden=HIDDEN, **cfg,
        normalization=args.normalization, variant=variant_of(args, model_name),
        labeled_size=n_labeled,
        warmup=args.warmup, steps=len(times), median_ms=median,
        p95_ms=percentile(times, 0.95), mean_ms=statistics.fmean(times),
        adam_median_ms=statistics.median(adam_times) if adam_times else None,
        min_ms=min(times), times_ms=times, minor_faults_per_step=faults, flops=flops,
        achieved_gflops=flops["total"] / (median * 1e-3) / 1e9,
        gemm_gflops=gemm, **measured_on(),
        command=" ".join(sys.argv), timestamp=time.strftime("%Y-%m-%dT%H:%M:%S"),
    )


# ------------------------------------------------------------------- output
def table(results: list) -> str:
    def norm(r: dict) -> str:
        return r.get("normalization", "symmetric")

    def variant(r: dict) -> str:
        return r.get("variant", "exact")

    # a ratio only of results measured on one machine (host: its cpu and nproc)
    index = {(r["model"], r["config"], r["d"], r["M"], r["threads"], norm(r), host(r)): r
             for r in results if variant(r) == "exact"}
    lines = ["| config | norm | d | M | threads | model | variant | median ms | p95 ms | "
             "Adam ms | steps | "
             "ref/ours | GFLOP/step | GFLOP/s | gemm GFLOP/s | page faults/step |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    order = {m: i for i, m in enumerate(MODELS)}
    for r in sorted(results, key=lambda r: (r["config"], norm(r), r["M"], r["threads"],
                                            order.get(r["model"], 9), variant(r))):
        ratio = ""
        if r["model"].startswith("ours"):
            ref = index.get((r["model"].replace("ours", "ref"), r["config"], r["d"], r["M"],
                             r["threads"], norm(r), host(r)))
            if ref is not None:
                ratio = f"{ref['median_ms'] / r['median_ms']:.1f}x"
        lines.append(
            f"| {r['config']} | {norm(r)} | {r['d']} | {r['M']} | {r['threads']} | {r['model']} | "
            f"{variant(r)} | "
            f"{r['median_ms']:.1f} | {r['p95_ms']:.1f} | {adam_text(r)} | {r['steps']} | {ratio} | "
            f"{r['flops']['total'] / 1e9:.2f} | {r['achieved_gflops']:.1f} | "
            f"{r['gemm_gflops']:.0f} | {faults_text(r)} |")
    return "\n".join(lines)


def slopes(results: list) -> list:
    """Least-squares slope (ms per 1000 memory rows) per (model, config, threads,
    normalization, host): the results of one machine (:func:`~machine.host`) only."""
    groups: dict = {}
    for r in results:
        if r.get("variant", "exact") != "exact":
            continue
        groups.setdefault((r["model"], r["config"], r["threads"],
                           r.get("normalization", "symmetric"), host(r)), []).append(r)
    out = []
    for key, rows in sorted(groups.items()):
        if len(rows) < 2:
            continue
        ms = [r["M"] / 1000 for r in rows]
        ts = [r["median_ms"] for r in rows]
        mean_m, mean_t = statistics.fmean(ms), statistics.fmean(ts)
        slope = (sum((a - mean_m) * (b - mean_t) for a, b in zip(ms, ts))
                 / sum((a - mean_m) ** 2 for a in ms))
        out.append(dict(model=key[0], config=key[1], threads=key[2], normalization=key[3],
                        host=key[4], M=sorted(r["M"] for r in rows), ms_per_1000_rows=slope))
    return out


def series(results: list) -> dict:
    """The plotted lines: median ms against M per (config, model, variant, threads,
    normalization), each sorted by M."""
    lines: dict = {}
    for r in results:
        lines.setdefault((r["config"], r["model"], r.get("variant", "exact"), r["threads"],
                          r.get("normalization", "symmetric")), []).append(r)
    for rows in lines.values():
        rows.sort(key=lambda r: r["M"])
    return lines


def plot_path(out_dir: Path) -> Path:
    """The plot of ``out_dir``'s results: ``<out_dir>.png`` beside it."""
    return out_dir.with_name(f"{out_dir.name}.png")


def plot(results: list, path: Path) -> None:
    """Median time against M, one panel per config (log-log); refuses (a message,
    no file) when there is nothing to draw. The figure is not pyplot's (as in
    :func:`~torch_geometric_stream.evaluation.plot_curves`), so none is left open."""
    if not results:
        print(f"no results: no plot written to {path}")
        return
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    configs = sorted({r["config"] for r in results})
    fig = Figure(figsize=(5 * len(configs), 4))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(configs), squeeze=False)
    for ax, config in zip(axes[0], configs):
        for (cfg, model, variant, threads, norm), rows in sorted(series(results).items()):
            if cfg != config:
                continue
            ax.plot([r["M"] for r in rows], [r["median_ms"] for r in rows], marker="o",
                    linestyle="--" if model.startswith("ref") else "-",
                    label=f"{model}{'' if variant == 'exact' else ' ' + variant}, "
                          f"{norm}, {threads} thr")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("memory size M")
        ax.set_ylabel("median ms / sample")
        ax.set_title(f"{config} (d={CONFIGS[config]['d']})")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    atomic_savefig(path, fig, dpi=120)
    print(f"plot: {path}")


def checked_selection(parser: argparse.ArgumentParser, models: str, configs: str,
                      sizes: Sequence[int], size_option: str,
                      known_models: Sequence[str] = MODELS) -> tuple[list[str], list[str]]:
    """The names of the comma-separated ``models`` (``--models``, of ``known_models``)
    and ``configs`` (``--configs``), each a usage error naming its option where it
    names none or an unknown one, as is a memory size of ``sizes`` too small for a
    (config, model) (``size_option``)."""
    chosen = {}
    for option, text, known in (("--models", models, known_models),
                                ("--configs", configs, tuple(CONFIGS))):
        chosen[option] = [name for name in text.split(",") if name]
        if not chosen[option]:
            parser.error(f"argument {option}: names no {option[2:-1]}, got {text!r}")
        for name in chosen[option]:
            if name not in known:
                parser.error(f"argument {option}: unknown {option[2:-1]} {name!r} "
                             f"(known: {', '.join(known)})")
    for config in chosen["--configs"]:
        for M in sizes:
            for model in chosen["--models"]:
                try:
                    memory_rows(CONFIGS[config], model, M)
                except ValueError as error:
                    parser.error(f"argument {size_option}: config {config}: {error}")
    return chosen["--models"], chosen["--configs"]


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS),
                        help=f"comma-separated subset of {MODELS}")
    parser.add_argument("--configs", default="gsad,mnist",
                        help=f"comma-separated subset of {tuple(CONFIGS)}")
    parser.add_argument("--sizes", type=positive_ints, default=[1000],
                        help=f"comma-separated memory sizes M (paper grid: {SIZES})")
    parser.add_argument("--threads", type=thread_counts, default=[1],
                        help=f"comma-separated thread counts, each at most {MAX_THREADS}")
    parser.add_argument("--normalization", default="symmetric", choices=NORMALIZATIONS,
                        help="graph normalization of both models (symmetric-add = A + I "
                             "literally, mean = authors' 1/(k+1))")
    parser.add_argument("--warmup", type=int_at_least(0), default=5,
                        help="untimed steps before the timed ones (default: %(default)s)")
    parser.add_argument("--steps", type=positive_int, default=30,
                        help="timed steps per configuration (default: 30)")
    parser.add_argument("--max-seconds", type=positive_number, default=60.0,
                        help="stop timing a configuration once its timed steps (not the "
                             "warm-up) took this long (>= 3 steps)")
    parser.add_argument("--ref-max-size", type=int_at_least(1), default=4000,
                        help="skip the dense reference above this M (memory, time)")
    parser.add_argument("--reselect-every", type=int_at_least(1), default=1, metavar="R",
                        help="ours: search the memory's top-k anew every R steps (approximation)")
    parser.add_argument("--search-dtype", choices=("bfloat16",),
                        help="ours: choose neighbours with scores in this precision "
                             "(approximation)")
    parser.add_argument("--adam", choices=("fused", "plain"), default="fused",
                        help="ours: the package's fused Adam, or torch's default one "
                             "(what the fused kernel saves)")
    parser.add_argument("--out-dir", type=Path, default=HERE / "results" / "step_latency",
                        help="folder of the JSONs, one per result (default: "
                             "benchmarks/results/step_latency)")
    parser.add_argument("--markdown", type=Path, default=None,
                        help="table file (default: OUT_DIR.md, beside OUT_DIR)")
    parser.add_argument("--summary", type=Path, default=None,
                        help="JSON summary (default: OUT_DIR_summary.json, beside OUT_DIR)")
    parser.add_argument("--force", action="store_true", help="re-measure existing results")
    parser.add_argument("--plot", action="store_true",
                        help="write the plot OUT_DIR.png, beside OUT_DIR")
    parser.add_argument("--report-only", action="store_true",
                        help="only print the table / plot of existing results")
    args = parser.parse_args(argv)
    with usage_errors(parser):
        args.markdown = args.markdown or args.out_dir.with_suffix(".md")
        args.summary = args.summary or args.out_dir.with_name(f"{args.out_dir.name}_summary.json")
        check_outputs(parser, {"--out-dir": args.out_dir},
                      files={"--markdown": args.markdown, "--summary": args.summary})

        models, configs = checked_selection(parser, args.models, args.configs,
                                            [] if args.report_only else args.sizes, "--sizes")
        args.out_dir.mkdir(parents=True, exist_ok=True)

        if not args.report_only:
            runs = planned_runs(args, models, configs)
            rewritten = ({path for model, _, M, _, path in runs if not too_large(args, model, M)}
                         if args.force else set())
            # a result it would skip, or the report read (not rewritten), refused before any run
            read_results(parser, args.out_dir, RESULT_FILES, rewritten)
            warn_threads(args.threads)
            here = measured_on()
            gemm = {t: gemm_gflops(t) for t in args.threads}
            print(f"cpu: {here['cpu']}, nproc={here['nproc']}, torch {here['torch']}, "
                  f"gemm GFLOP/s: {gemm}", flush=True)
            for model, config, M, threads, path in runs:
                if too_large(args, model, M):
                    print(f"skip {model} at M={M} (> --ref-max-size)", flush=True)
                    continue
                if reused(parser, path, args.force, lambda result: other_machine(result, here)):
                    continue
                result = measure(model, config, M, threads, args, gemm[threads])
                atomic_write_text(path, json.dumps(result, indent=1))
                print(f"{model:10s} {config:7s} M={M:5d} t={threads}: median "
                      f"{result['median_ms']:.1f} ms, p95 {result['p95_ms']:.1f} ms, "
                      f"Adam {adam_text(result)} ms ({result['steps']} steps), "
                      f"{result['achieved_gflops']:.1f} GFLOP/s, "
                      f"{faults_text(result)} page faults/step", flush=True)

        results = read_results(parser, args.out_dir, RESULT_FILES)
        if not results:
            print("no results")
            if args.plot:
                plot(results, plot_path(args.out_dir))
            return
        text = table(results)
        slope_rows = slopes(results)
        print(text)
        for s in slope_rows:
            print(f"slope {s['model']} {s['config']} t={s['threads']} M={s['M']}: "
                  f"{s['ms_per_1000_rows']:.2f} ms per 1000 rows")
        summary = dict(results=[{k: v for k, v in r.items() if k != "times_ms"} for r in results],
                       slopes=slope_rows)
        atomic_write_text(args.summary, json.dumps(summary, indent=1))
        if args.markdown:
            md = [f"### step_latency (steady state, memory full; "
                  f"CPU: {recorded(results, 'cpu')}, nproc={recorded(results, 'nproc')}, "
                  f"torch {recorded(results, 'torch')})", "",
                  "GFLOP/step = the method's arithmetic with the top-k searched for every "
                  "row (benchmarks/step_latency.py:step_flops); GFLOP/s = that divided by the "
                  "median, a nominal rate: full SLeDGe on the CPU searches only the rows a "
                  "prediction or the loss reads (graph.receptive_topk) and can exceed the "
                  "matrix-product rate; gemm = this machine's float32 1024^3 matrix-product "
                  "rate at the same thread count.", "", text]
            if slope_rows:
                md += ["", "| model | config | threads | M | ms per 1000 rows |",
                       "|---|---|---|---|---|"]
                md += [f"| {s['model']} | {s['config']} | {s['threads']} | {s['M']} | "
                       f"{s['ms_per_1000_rows']:.2f} |" for s in slope_rows]
            atomic_write_text(args.markdown, "\n".join(md) + "\n")
        if args.plot:
            plot(results, plot_path(args.out_dir))


if __name__ == "__main__":
    main()
