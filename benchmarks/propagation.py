"""Sparse ``edge_index`` message passing vs dense adjacency products.

The backbone is SLeDGe's :class:`~torch_geometric_stream.nn.GCNBackbone`
(``num_layers`` GCN layers, LayerNorm + ReLU between them), all widths ``h``
(input, hidden and output, so every layer propagates ``h`` features). The graph
is a random top-(k+1) graph like SLeDGe's: every node receives an edge from
itself and from ``k`` random other nodes, with positive random weights
(cosine-like similarities), symmetrically normalized once with
``backbone.normalize`` (outside the timing).

* ``sparse``: ``backbone.forward_normalized(x, edge_index, edge_weight)`` (the
  call of SLeDGe's step, without the public ``forward``'s input checks), the
  default CSR aggregation (one sparse-dense product per layer,
  :mod:`torch_geometric_stream.ops.csr`);
* ``scatter``: the same backbone with ``aggregation="message_passing"`` (PyG
  ``GCNConv`` gather/scatter message passing);
* ``dense``: ``backbone.forward_dense(x, adj)`` with
  ``adj = dense_adjacency(edge_index, edge_weight, N)``; the time to build
  ``adj`` from the edge list is reported separately (``dense build``).

Each is timed forward only (``torch.no_grad``) and forward + backward (loss =
sum of the outputs; gradients for the parameters and for the edge weights /
the dense adjacency, since SLeDGe learns its graph). Dense is skipped where an
``(N, N)`` float32 matrix would exceed ``--dense-max-gb`` (default 4 GB: N = 50k
needs 10 GB, twice that with its gradient).

Each ``(N, k, threads)`` configuration is one JSON in ``--out-dir``, skipped
when present (resumable; ``--force`` re-measures). The table printed and
written to ``--markdown`` gives medians, the dense/sparse ratio, and per
(k, threads, pass) the crossover N above which sparse wins (log-linear
interpolation of the ratio between grid points). Its ``edges`` column counts
the N self-loops too: N (k + 1) edges. ``--out-dir``'s ``summary.json`` holds
that crossover per (k, threads) (``summary``: ``crossover_fwd``,
``crossover_fwd_bwd`` and the dense/sparse ratios at N = 10,000,
``ratio_10k_fwd`` and ``ratio_10k_fwd_bwd``, ``null`` without that size) and
the machines and libraries the results recorded. Whether torch-scatter /
torch-sparse are installed (``torch_geometric.typing.WITH_TORCH_SCATTER`` /
``WITH_TORCH_SPARSE``) is recorded with every result.

Example (about 5-10 minutes on one core)::

    OMP_NUM_THREADS=1 python benchmarks/propagation.py --threads 1
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import torch
import torch_geometric
import torch_geometric.typing as pyg_typing

HERE = Path(__file__).resolve().parent

from torch_geometric_stream.graph.normalization import dense_adjacency  # noqa: E402
from torch_geometric_stream.nn import GCNBackbone  # noqa: E402
from torch_geometric_stream.cli.arguments import positive_int  # noqa: E402
from torch_geometric_stream.files import atomic_write_text  # noqa: E402
from machine import (check_outputs, cpu_model, int_list, positive_ints,  # noqa: E402
                     positive_number, read_results, recorded,  # (on sys.path)
                     usage_errors)

SIZES = (100, 250, 500, 1000, 2000, 5000, 10000, 50000)
KS = (1, 5, 10)


def random_topk_graph(N: int, k: int, gen: torch.Generator) -> tuple:
    """Every node gets a self-edge and ``k`` edges from random other nodes."""
    target = torch.arange(N).repeat_interleave(k + 1)
    offset = torch.randint(1, N, (N, k), generator=gen)  # never the node itself
    source = torch.cat([torch.arange(N).view(N, 1),
                        (torch.arange(N).view(N, 1) + offset) % N], dim=1).view(-1)
    weight = torch.rand(N * (k + 1), generator=gen) * 0.9 + 0.1
    return torch.stack([source, target]), weight


def timed(fn: Callable[[], object], repeats: int, max_seconds: float) -> list[float]:
    """Milliseconds of ``repeats`` calls after one warm-up call (fewer, but at
    least 2, when ``max_seconds`` runs out)."""
    fn()
    times: list[float] = []
    begin = time.perf_counter()
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
        if time.perf_counter() - begin > max_seconds and len(times) >= 2:
            break
    return times


def measure(N: int, k: int, threads: int, args: argparse.Namespace) -> dict[str, Any]:
    torch.set_num_threads(threads)
    gen = torch.Generator().manual_seed(N * 100 + k)
    torch.manual_seed(0)
    h = args.hidden
    model = GCNBackbone(h, h, h, args.num_layers)
    scatter_model = GCNBackbone(h, h, h, args.num_layers, aggregation="message_passing")
    scatter_model.load_state_dict(model.state_dict())
    x = torch.randn(N, h, generator=gen)
    edge_index, raw_weight = random_topk_graph(N, k, gen)
    edge_index, edge_weight = model.normalize(edge_index, raw_weight, N)
    result: dict[str, Any] = dict(N=N, k=k, threads=threads, hidden=h,
                                  num_layers=args.num_layers, edges=int(edge_index.size(1)))

    def forward(backbone: GCNBackbone) -> Callable[[], None]:
        def run() -> None:
            with torch.no_grad():
                backbone.forward_normalized(x, edge_index, edge_weight)
        return run

    def forward_backward(backbone: GCNBackbone) -> Callable[[], None]:
        def run() -> None:
            w = edge_weight.detach().requires_grad_()
            backbone.zero_grad(set_to_none=True)
            backbone.forward_normalized(x, edge_index, w).sum().backward()
        return run

    reps = args.repeats if N < args.large else args.repeats_large
    for prefix, backbone in (("sparse", model), ("scatter", scatter_model)):
        for suffix, make in (("fwd", forward), ("fwd_bwd", forward_backward)):
            times = timed(make(backbone), reps, args.max_seconds)
            result[f"{prefix}_{suffix}"] = dict(median_ms=statistics.median(times),
                                                min_ms=min(times), runs=len(times),
                                                times_ms=times)

    dense_gb = N * N * 4 / 1e9
    result["dense_gb"] = dense_gb
    if dense_gb > args.dense_max_gb:
        result["dense_skipped"] = (f"(N, N) float32 adjacency = {dense_gb:.1f} GB > "
                                   f"--dense-max-gb {args.dense_max_gb}")
        return result
    build = timed(lambda: dense_adjacency(edge_index, edge_weight, N), reps, args.max_seconds)
    result["dense_build"] = dict(median_ms=statistics.median(build), runs=len(build))
    adj = dense_adjacency(edge_index, edge_weight, N)

    def dense_fwd() -> None:
        with torch.no_grad():
            model.forward_dense(x, adj)

    def dense_fwd_bwd() -> None:
        a = adj.detach().requires_grad_()
        model.zero_grad(set_to_none=True)
        model.forward_dense(x, a).sum().backward()

    with torch.no_grad():  # same math: check before timing
        diff = (model(x, edge_index, edge_weight, normalized=True)
                - model.forward_dense(x, adj)).abs().max().item()
    result["max_abs_diff"] = diff
    for name, fn in (("dense_fwd", dense_fwd), ("dense_fwd_bwd", dense_fwd_bwd)):
        times = timed(fn, reps, args.max_seconds)
        result[name] = dict(median_ms=statistics.median(times), min_ms=min(times),
                            runs=len(times), times_ms=times)
    return result


#: The result files' names in ``--out-dir`` (:func:`result_path`).
RESULT_FILES = "propagation_*.json"


def result_path(out_dir: Path, N: int, k: int, threads: int, h: int, layers: int) -> Path:
    return out_dir / f"propagation_N{N}_k{k}_t{threads}_h{h}_l{layers}.json"


def crossover(rows: list, key: str) -> str:
    """Smallest N above which sparse beats dense on the grid (interpolated)."""
    pts = sorted((r["N"], r[f"dense_{key}"]["median_ms"] / r[f"sparse_{key}"]["median_ms"])
                 for r in rows if f"dense_{key}" in r)
    if not pts:
        return "n/a"
    if all(ratio > 1 for _, ratio in pts):
        return f"< {pts[0][0]} (sparse faster at every measured N)"
    if all(ratio <= 1 for _, ratio in pts):
        return f"> {pts[-1][0]} (dense faster at every measured N)"
    last_loss = max(i for i, (_, ratio) in enumerate(pts) if ratio <= 1)
    if last_loss == len(pts) - 1:
        return f"> {pts[-1][0]} (dense faster at the largest measured N)"
    (n0, r0), (n1, r1) = pts[last_loss], pts[last_loss + 1]
    t = (0 - math.log(r0)) / (math.log(r1) - math.log(r0))
    n = math.exp(math.log(n0) + t * (math.log(n1) - math.log(n0)))
    return f"~{n:.0f} (between {n0} and {n1})"


def table(results: list) -> tuple:
    lines = ["| N | k | threads | edges | sparse fwd ms | scatter fwd ms | dense fwd ms | "
             "dense/sparse fwd | sparse fwd+bwd ms | scatter fwd+bwd ms | dense fwd+bwd ms | "
             "scatter/sparse fwd+bwd | dense/sparse fwd+bwd | dense build ms | max abs diff |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(results, key=lambda r: (r["threads"], r["k"], r["N"])):
        def cell(name: str) -> str:
            return f"{r[name]['median_ms']:.2f}" if name in r else "skipped"

        def ratio(key: str) -> str:
            if f"dense_{key}" not in r:
                return "-"
            return f"{r[f'dense_{key}']['median_ms'] / r[f'sparse_{key}']['median_ms']:.1f}x"
        scatter_ratio = "-"
        if "scatter_fwd_bwd" in r:
            speedup = r["scatter_fwd_bwd"]["median_ms"] / r["sparse_fwd_bwd"]["median_ms"]
            scatter_ratio = f"{speedup:.1f}x"
        lines.append(
            f"| {r['N']} | {r['k']} | {r['threads']} | {r['edges']} | {cell('sparse_fwd')} | "
            f"{cell('scatter_fwd')} | {cell('dense_fwd')} | {ratio('fwd')} | "
            f"{cell('sparse_fwd_bwd')} | {cell('scatter_fwd_bwd')} | {cell('dense_fwd_bwd')} | "
            f"{scatter_ratio} | {ratio('fwd_bwd')} | {cell('dense_build')} | "
            f"{r.get('max_abs_diff', float('nan')):.1e} |")
    groups: dict = {}
    for r in results:
        groups.setdefault((r["k"], r["threads"]), []).append(r)
    cross = ["| k | threads | crossover N, forward | crossover N, fwd+bwd | dense/sparse at 10k "
             "fwd | dense/sparse at 10k fwd+bwd |", "|---|---|---|---|---|---|"]
    summary = []
    for (k, threads), rows in sorted(groups.items()):
        at10k = next((r for r in rows if r["N"] == 10000 and "dense_fwd" in r), None)
        r10 = {key: (at10k[f"dense_{key}"]["median_ms"] / at10k[f"sparse_{key}"]["median_ms"]
                     if at10k else None) for key in ("fwd", "fwd_bwd")}
        c = {key: crossover(rows, key) for key in ("fwd", "fwd_bwd")}
        summary.append(dict(k=k, threads=threads, crossover_fwd=c["fwd"],
                            crossover_fwd_bwd=c["fwd_bwd"], ratio_10k_fwd=r10["fwd"],
                            ratio_10k_fwd_bwd=r10["fwd_bwd"]))
        fmt = lambda v: f"{v:.1f}x" if v is not None else "n/a"  # noqa: E731
        cross.append(f"| {k} | {threads} | {c['fwd']} | {c['fwd_bwd']} | {fmt(r10['fwd'])} | "
                     f"{fmt(r10['fwd_bwd'])} |")
    return "\n".join(lines), "\n".join(cross), summary


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int_list(2), default=list(SIZES),
                        help="comma-separated N (the issue's grid is 1k..50k; 250/500 locate "
                             "the crossover; N >= 2)")
    parser.add_argument("--ks", type=positive_ints, default=list(KS),
                        help="comma-separated neighbours per node")
    parser.add_argument("--threads", type=positive_ints, default=[1],
                        help="comma-separated thread counts")
    parser.add_argument("--hidden", type=positive_int, default=256,
                        help="feature width of the propagated rows (default: 256)")
    parser.add_argument("--num-layers", type=positive_int, default=2,
                        help="propagation layers (default: 2)")
    parser.add_argument("--repeats", type=positive_int, default=10,
                        help="timed repeats per function below N = --large (default: 10)")
    parser.add_argument("--repeats-large", type=positive_int, default=3,
                        help="repeats at N >= --large")
    parser.add_argument("--large", type=positive_int, default=5000,
                        help="N from which --repeats-large applies (default: 5000)")
    parser.add_argument("--max-seconds", type=positive_number, default=8.0,
                        help="per timed function: stop after this long (>= 2 runs)")
    parser.add_argument("--dense-max-gb", type=positive_number, default=4.0,
                        help="skip the dense products when the (N, N) matrices need more than "
                             "this (default: 4)")
    parser.add_argument("--out-dir", type=Path, default=HERE / "results" / "propagation",
                        help="folder of the JSONs and of summary.json, the crossovers "
                             "(default: benchmarks/results/propagation)")
    parser.add_argument("--markdown", type=Path, default=None,
                        help="table file (default: OUT_DIR/propagation.md)")
    parser.add_argument("--force", action="store_true", help="re-measure existing results")
    parser.add_argument("--report-only", action="store_true",
                        help="only print the table of existing results")
    args = parser.parse_args(argv)
    with usage_errors(parser):
        args.markdown = args.markdown or args.out_dir / "propagation.md"
        check_outputs(parser, {"--out-dir": args.out_dir}, files={"--markdown": args.markdown})
        sizes, ks, threads_list = args.sizes, args.ks, args.threads
        args.out_dir.mkdir(parents=True, exist_ok=True)
        libs = dict(WITH_TORCH_SCATTER=bool(pyg_typing.WITH_TORCH_SCATTER),
                    WITH_TORCH_SPARSE=bool(pyg_typing.WITH_TORCH_SPARSE))
        env = dict(cpu=cpu_model(), nproc=os.cpu_count(), torch=torch.__version__,
                   torch_geometric=torch_geometric.__version__, python=platform.python_version(),
                   **libs)

        if not args.report_only:
            runs = [(N, k, threads, result_path(args.out_dir, N, k, threads, args.hidden,
                                                args.num_layers))
                    for threads in threads_list for k in ks for N in sizes]
            # a result it would skip, or the report read (not rewritten), refused before any run
            read_results(parser, args.out_dir, RESULT_FILES,
                         {path for *_, path in runs} if args.force else set())
            print(f"cpu: {env['cpu']}, nproc={env['nproc']}, torch {env['torch']}, "
                  f"PyG {env['torch_geometric']}, {libs}", flush=True)
            for N, k, threads, path in runs:
                if path.exists() and not args.force:
                    print(f"skip {path.name} (exists)", flush=True)
                    continue
                result = measure(N, k, threads, args)
                result.update(env, command=" ".join(sys.argv),
                              timestamp=time.strftime("%Y-%m-%dT%H:%M:%S"))
                atomic_write_text(path, json.dumps(result, indent=1))
                dense = (f"dense fwd {result['dense_fwd']['median_ms']:.2f} ms, fwd+bwd "
                         f"{result['dense_fwd_bwd']['median_ms']:.2f} ms"
                         if "dense_fwd" in result else f"dense skipped: "
                         f"{result['dense_skipped']}")
                print(f"N={N:6d} k={k:2d} t={threads}: sparse fwd "
                      f"{result['sparse_fwd']['median_ms']:.2f} ms, fwd+bwd "
                      f"{result['sparse_fwd_bwd']['median_ms']:.2f} ms; {dense}",
                      flush=True)

        results = [r for r in read_results(parser, args.out_dir, RESULT_FILES)
                   if r["hidden"] == args.hidden and r["num_layers"] == args.num_layers]
        if not results:
            print("no results")
            return
        text, cross, summary = table(results)
        print(text)
        print(cross)
        # the machines and libraries the results recorded, not this one's
        measured = {key: recorded(results, key) for key in env}
        atomic_write_text(args.out_dir / "summary.json",
                          json.dumps(dict(summary=summary, **measured), indent=1))
        skipped = sorted({r["N"] for r in results if "dense_skipped" in r})
        md = [f"### propagation (CPU: {measured['cpu']}, nproc={measured['nproc']}, "
              f"torch {measured['torch']}, PyG {measured['torch_geometric']}, torch-scatter "
              f"installed: {measured['WITH_TORCH_SCATTER']}, torch-sparse installed: "
              f"{measured['WITH_TORCH_SPARSE']})",
              "", f"GCNBackbone, h = {args.hidden} (input, hidden and output), {args.num_layers} "
              "layers, random top-(k+1) graph, symmetric normalization; medians. fwd+bwd includes "
              "the gradient of the edge weights (sparse) / of the adjacency (dense)."
              + (f" Dense skipped at N = {skipped}: the (N, N) float32 adjacency exceeds "
                 f"{args.dense_max_gb:g} GB." if skipped else ""),
              "", text, "", cross]
        atomic_write_text(args.markdown, "\n".join(md) + "\n")
        print(f"markdown: {args.markdown}")


if __name__ == "__main__":
    main()
