"""Sparse ``edge_index`` message passing vs dense adjacency products.

The backbone is SLeDGe's :class:`~torch_geometric_stream.nn.GCNBackbone`
(``num_layers`` GCN layers, LayerNorm + ReLU between them), all widths ``h``
(input, hidden and output, so every layer propagates ``h`` features). The graph
is a random top-(k+1) graph like SLeDGe's: every node receives an edge from
itself and from ``k`` distinct random other nodes (``k < N``), with positive
random weights (cosine-like similarities), symmetrically normalized once with
``backbone.normalize`` (outside the timing).

* ``sparse``: ``backbone.forward_normalized(x, edge_index, edge_weight)`` (the
  call of SLeDGe's step, without the public ``forward``'s input checks), the
  default CSR aggregation (one sparse-dense product per layer,
  :mod:`torch_geometric_stream.ops.csr`);
* ``scatter``: the same backbone with ``aggregation="message_passing"`` (PyG
  ``GCNConv`` gather/scatter message passing);
* ``dense``: ``backbone.forward_dense(x, adj)`` with
  ``adj = dense_adjacency(edge_index, edge_weight, N)`` built once outside the
  timing (its time is reported as ``dense build``, ``check=False`` as in the next);
* ``dense incl. build``: the same, building ``adj`` from the edge list in every
  call, as ``sparse`` builds its CSR index in every call: the fair comparison.

Each is timed forward only (``torch.no_grad``) and forward + backward (loss =
sum of the outputs; gradients for the parameters and, with ``--graph-grad yes``
(the default), for the edge weights / the dense adjacency, since SLeDGe learns its
graph; ``dense incl. build``: the edge weights; ``--graph-grad no``: the parameters
only, a fixed graph's). Before the timing the paths are checked to agree, in float64
(copies of the model, the features and the weights: in float32, rounding can flip
the sign of a LayerNorm output within rounding of 0, so that ReLU passes or blocks
its whole gradient in one path and not in the other, as at N = 10,000, k = 10):
every path's output, and in fwd+bwd its edge weights' gradient (``dense``: its
adjacency's at the edges) and parameters' gradients, against the sparse path's;
``max_rel_error`` records the largest difference relative to the sparse tensor's
largest magnitude (``check_dtype``: ``float64``; results without it were checked in
float32, to 1e-4), and above :data:`TOLERANCE` (1e-10, float64 sums in another
order differ by about 1e-15) the run stops with an error naming the path and the
tensor, writing no result. The paths are timed interleaved: every repeat calls
each once (the order rotating), so a change of the machine's load falls on all of
them; each timing records its median with its quartiles (p25, p75). Dense is skipped
where its peak, :data:`DENSE_MATRICES` ``(N, N)`` matrices (the adjacency, the one
``dense incl. build`` builds, the adjacency's gradient as the layers' terms are
summed into it) in the agreement check's float64, would exceed ``--dense-max-gb``
(default 4 GB: N = 10k needs 3.2 GB, N = 50k 80 GB).

Each ``(N, k, threads)`` configuration is one JSON in ``--out-dir`` (its name
ends with ``_no-graph-grad`` for ``--graph-grad no``), skipped when present,
current and measured on this machine (resumable; ``--force`` re-measures): the
result's ``cpu``, ``nproc``, torch, torch-scatter / torch-sparse and SIMD entries
must match this machine's (``machine.other_machine``), else the run measures it
again and says why; results are per host. Every result records what it measured,
its ``format`` (:data:`FORMAT`), the sparse path's ``aggregation``, its seeds, the
machine (``machine``: SIMD flags, ATen's ``cpu_capability``, ``MKL_CBWR``) and the
code (``software``: package version, git commit). A file without format or
aggregation (or with another aggregation) is stale, as session 1's are, whose
``sparse`` was GCNConv's gather/scatter: a run re-measures it (and says so), the
report leaves it out (and says so); one of format 2 or 3 (neighbours drawn with
replacement) is reported but re-measured by a run. The table printed and
written to ``--markdown`` gives medians (p25-p75), the dense/sparse ratios, and
per (host, k, threads, pass) the crossover N above which sparse wins. A win needs a
margin: sparse's interquartile range wholly below dense's, the other way round
a dense win, and an overlap a tie (the ratio cells say which). The crossover is
the smallest N from which sparse wins at every larger measured N: after a dense
win, the log-linear interpolation of the ratio's 1 between the two grid points;
after a tie, the next grid point (``<= N``). Its ``edges`` column counts N (k + 2)
edges: symmetric normalization keeps each node's own edge at weight 0 and appends
N self-loops (:func:`~torch_geometric_stream.graph.normalization.with_self_loops`).
``--out-dir``'s ``summary_hH_lL.json`` (H = ``--hidden``, L = ``--num-layers``,
both recorded in it too) holds those crossovers per (k, threads) (``summary``:
``crossover_fwd``, ``crossover_fwd_bwd``, ``crossover_incl_build_fwd``,
``crossover_incl_build_fwd_bwd`` and the dense/sparse ratios at N = 10,000,
``ratio_10k_fwd`` and ``ratio_10k_fwd_bwd``, ``null`` without that size; each entry
with its host's ``cpu`` and ``nproc``) and the machines and libraries the results
recorded. Whether torch-scatter / torch-sparse are installed
(``torch_geometric.typing.WITH_TORCH_SCATTER`` / ``WITH_TORCH_SPARSE``) is
recorded with every result. A ``--threads`` above the CPUs available to the
process is warned about (its threads would share CPUs).

``--device cuda`` (or ``cuda:N``; default ``cpu``) runs the paths, the model and every
tensor on a GPU (the graph and parameters drawn on the CPU, as there, then moved):
each timed call ends with ``torch.cuda.synchronize()``, inside its timing (the
kernels' time, not their launch's); the dense paths are skipped above the smaller of
``--dense-max-gb`` and the device's free memory (``torch.cuda.mem_get_info``); the
files' names end with ``_cuda`` (``cuda`` and ``cuda:0``) or ``_cudaN`` (``cuda:N``).
Without CUDA it prints 'no CUDA device' and exits with status 1 (after checking its
arguments). A result records its ``device``
(``cpu``, or the GPU's name; one without it ran on the CPU): the reuse check compares
it (:data:`SAME_DEVICE`) and the report's hosts (:func:`~machine.host`), crossovers
and summary keep each device apart. The agreement check's float64 products have no
TF32 mode, so that :data:`TOLERANCE` holds on every device (torch's TF32 setting, the
timings', is recorded on CUDA as ``allow_tf32``). Memory: every result
records ``graph_bytes``, the analytic bytes of each path's graph structure at its
peak (:func:`graph_bytes`), and on CUDA ``peak_mib``, each timed call's peak
allocation in MiB (:func:`cuda_peaks`); the report shows them a column per path
(``-`` for results without them). The CPU's peak is not measured.

Example (N = 10,000's dense paths, seconds a call, take most of its time)::

    OMP_NUM_THREADS=1 python benchmarks/propagation.py --threads 1
"""
from __future__ import annotations

import argparse
import copy
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import torch
import torch_geometric
from torch import Tensor

HERE = Path(__file__).resolve().parent

from torch_geometric_stream.graph.normalization import dense_adjacency  # noqa: E402
from torch_geometric_stream.nn import GCNBackbone  # noqa: E402
from torch_geometric_stream.cli.arguments import MAX_THREADS, positive_int  # noqa: E402
from torch_geometric_stream.files import atomic_write_text  # noqa: E402
from torch_geometric_stream.validation import check_device  # noqa: E402
from machine import (SAME_MACHINE, check_outputs, device_spec, host,  # noqa: E402
                     input_folder, int_list, measured_on,  # (on sys.path)
                     other_machine, positive_ints, positive_number, read_result,
                     read_results, recorded, require_cuda, reused, thread_counts,
                     usage_errors, warn_threads)

SIZES = (100, 250, 500, 1000, 2000, 5000, 10000, 50000)
KS = (1, 5, 10)


def random_topk_graph(N: int, k: int, gen: torch.Generator) -> tuple[Tensor, Tensor]:
    """A top-(k+1) graph as SLeDGe's: every node gets an edge from itself and from ``k``
    distinct random other nodes (Floyd's sampling without replacement, each node's
    ``k`` of the ``N - 1`` others uniformly), with weights in [0.1, 1).

    Returns:
        ``edge_index`` :math:`(2, N (k + 1))` (source, target) and its weights
        :math:`(N (k + 1),)`.

    Raises:
        ValueError: unless ``1 <= k < N``.
    """
    if not 1 <= k < N:
        raise ValueError(f"k = {k} distinct neighbours other than the node itself need "
                         f"1 <= k < N, got N = {N}")
    chosen = torch.empty(N, 0, dtype=torch.long)  # offsets 0..N-2 drawn so far, per node
    for j in range(N - 1 - k, N - 1):
        draw = torch.randint(0, j + 1, (N, 1), generator=gen)
        taken = (chosen == draw).any(dim=1, keepdim=True)
        chosen = torch.cat([chosen, torch.where(taken, torch.full_like(draw, j), draw)], dim=1)
    target = torch.arange(N).repeat_interleave(k + 1)
    source = torch.cat([torch.arange(N).view(N, 1),
                        (torch.arange(N).view(N, 1) + chosen + 1) % N], dim=1).view(-1)
    weight = torch.rand(N * (k + 1), generator=gen) * 0.9 + 0.1
    return torch.stack([source, target]), weight


#: What a result file of this script measured: ``format`` 4 (the graph's ``k``
#: neighbours of a node distinct, the paths' agreement checked, ``graph_grad``
#: recorded); 3: interleaved repeats, with quartiles and ``dense incl. build``, its
#: neighbours drawn with replacement (duplicates: 48 of 1,000 at N = 100, k = 10); 2:
#: each path timed in a block of its own (no ``dense incl. build``), with the CSR sparse
#: path. A file with none of them, or with another sparse ``aggregation`` than
#: :data:`AGGREGATION`, is stale (session 1's, whose ``sparse`` was GCNConv's
#: gather/scatter): re-measured, never reported. Formats 2 and 3 are reported (the
#: ``timing`` and ``graph`` columns say which) but re-measured by a run.
FORMAT = 4
FORMATS = {2: "blocks", 3: "interleaved", 4: "interleaved"}
#: The sparse path's aggregation (``GCNBackbone``'s default).
AGGREGATION = "csr"
#: ``(N, N)`` matrices the dense part holds at its peak: the adjacency, the
#: one ``dense incl. build`` builds, and the adjacency's gradient while the layers'
#: terms are summed into it (peak RSS 4.0-4.1 matrices at N = 6000 and 8000, h = 8;
#: ``--dense-max-gb`` checks that many float64 ones, the agreement check's).
DENSE_MATRICES = 4
#: The largest relative error (:func:`relative_error`) allowed between a path's
#: outputs or gradients and the sparse path's, checked in float64 before the timing:
#: float64 sums in another order differ by about 1e-15 relative (4e-16 to 1.1e-15
#: measured at N = 20 to 10,000), a wrong path by far more.
TOLERANCE = 1e-10
#: What a run's reuse check compares (:func:`~machine.other_machine`): the machine's
#: entries and the ``device`` the paths ran on (``cpu`` or a GPU's name).
SAME_DEVICE = (*SAME_MACHINE, "device")
#: Bytes in a MiB, the unit of the memory entries and columns.
MIB = 2 ** 20


def stale(result: dict[str, Any]) -> Optional[str]:
    """Why ``result`` is not reported (``None``: it is current)."""
    fmt, aggregation = result.get("format"), result.get("aggregation")
    if fmt in FORMATS and aggregation == AGGREGATION:
        return None
    return (f"stale: format {fmt if fmt is not None else 'not recorded'}, sparse aggregation "
            f"{aggregation if aggregation is not None else 'not recorded'} (this script "
            f"writes format {FORMAT}, aggregation {AGGREGATION!r})")


def outdated(result: dict[str, Any], here: dict[str, Any]) -> Optional[str]:
    """Why a run measures ``result`` again rather than reusing it (``None``: it is
    reused): :func:`stale`, of an older :data:`FORMAT`, or measured on another machine
    than ``here`` (:func:`~machine.other_machine`)."""
    if (why := stale(result)) is not None:
        return why
    if result["format"] != FORMAT:
        return (f"format {result['format']} (its neighbours drawn with replacement; this "
                f"script writes format {FORMAT}, k distinct neighbours)")
    # (a result without a device ran on the CPU: the script had no --device then)
    return other_machine({"device": "cpu", **result}, here, SAME_DEVICE)


def device_name(device: torch.device) -> str:
    """What a result records as its ``device``: ``cpu``, or the CUDA device's name."""
    return "cpu" if device.type == "cpu" else torch.cuda.get_device_name(device)


def graph_kind(result: dict[str, Any]) -> str:
    """The ``graph`` column: how the result's neighbours were drawn."""
    return "distinct" if result["format"] >= 4 else "with replacement"


def relative_error(value: Tensor, reference: Tensor) -> float:
    """``max |value - reference|`` relative to ``max |reference|`` (an absolute error
    where ``reference`` is all zeros)."""
    scale = reference.abs().max().item()
    return (value - reference).abs().max().item() / (scale if scale > 0 else 1.0)


class PathsDisagree(RuntimeError):
    """The paths' outputs or gradients differ by more than :data:`TOLERANCE`."""


def quartiles(times: list[float]) -> tuple[float, float]:
    """The 25th and 75th percentiles of ``times`` (inclusive method)."""
    if len(times) < 2:
        return times[0], times[0]
    q = statistics.quantiles(times, n=4, method="inclusive")
    return q[0], q[2]


def timing(times: list[float]) -> dict[str, Any]:
    p25, p75 = quartiles(times)
    return dict(median_ms=statistics.median(times), p25_ms=p25, p75_ms=p75,
                min_ms=min(times), runs=len(times), times_ms=times)


def timed(fn: Callable[[], object], repeats: int, max_seconds: float) -> list[float]:
    """Milliseconds of ``repeats`` calls after one warm-up call (fewer, but at
    least 2, when ``max_seconds`` runs out)."""
    return interleaved({"fn": fn}, repeats, max_seconds)["fn"]


def no_sync() -> None:
    """A CPU call's end: its work is done when it returns."""


def interleaved(fns: dict[str, Callable[[], object]], repeats: int, max_seconds: float,
                sync: Callable[[], None] = no_sync) -> dict[str, list[float]]:
    """Milliseconds of ``repeats`` calls of every function of ``fns``, interleaved: each
    repeat calls each function once (the order rotating from repeat to repeat), after
    one warm-up call of each; fewer repeats (at least 2) once the repeats took
    ``max_seconds`` per function. ``sync()`` follows every call, inside its timing (on
    CUDA ``torch.cuda.synchronize``: the time of its kernels, not of their launch)."""
    for fn in fns.values():
        fn()
        sync()
    names = list(fns)
    times: dict[str, list[float]] = {name: [] for name in names}
    begin = time.perf_counter()
    for repeat in range(repeats):
        for name in names[repeat % len(names):] + names[:repeat % len(names)]:
            start = time.perf_counter()
            fns[name]()
            sync()
            times[name].append((time.perf_counter() - start) * 1e3)
        if time.perf_counter() - begin > max_seconds * len(names) and repeat >= 1:
            break
    return times


#: What a forward + backward pass of :func:`measure` gives: its output and the graph's
#: gradient (the edge weights' :math:`(E,)`, ``dense``: the adjacency's :math:`(N, N)`;
#: ``None`` with ``--graph-grad no``).
Pass = tuple[Tensor, Optional[Tensor]]


def measure(N: int, k: int, threads: int, args: argparse.Namespace) -> dict[str, Any]:
    """The timings of every path at ``N`` nodes, ``k`` neighbours and ``threads``
    threads, after checking that the paths agree (:func:`agreement`).

    Raises:
        PathsDisagree: a path's outputs or gradients differ from the sparse path's by
            more than :data:`TOLERANCE`.
    """
    torch.set_num_threads(threads)
    device = torch.device(args.device)
    seed = N * 100 + k
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(0)
    h, graph_grad = args.hidden, args.graph_grad
    # (drawn on the CPU, then moved: every device times the same graph and parameters)
    model = GCNBackbone(h, h, h, args.num_layers).to(device)
    scatter_model = GCNBackbone(h, h, h, args.num_layers,
                                aggregation="message_passing").to(device)
    scatter_model.load_state_dict(model.state_dict())
    x = torch.randn(N, h, generator=gen).to(device)
    edge_index, raw_weight = random_topk_graph(N, k, gen)
    edge_index, edge_weight = model.normalize(edge_index.to(device), raw_weight.to(device), N)
    result: dict[str, Any] = dict(format=FORMAT, aggregation=model.aggregation, N=N, k=k,
                                  threads=threads, hidden=h, num_layers=args.num_layers,
                                  graph_grad=graph_grad, edges=int(edge_index.size(1)),
                                  seed=seed, model_seed=0, device=device_name(device),
                                  graph_bytes=graph_bytes(N, int(edge_index.size(1))))
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else no_sync

    models = {"sparse": model, "scatter": scatter_model}
    dense_gb = N * N * 4 / 1e9
    result["dense_gb"] = dense_gb
    limit, limit_name = args.dense_max_gb, f"--dense-max-gb {args.dense_max_gb:g}"
    if device.type == "cuda" and (free := torch.cuda.mem_get_info(device)[0] / 1e9) < limit:
        limit, limit_name = free, f"the device's free {free:.1f} GB"
    dense = DENSE_MATRICES * 2 * dense_gb <= limit
    if not dense:
        result["dense_skipped"] = (f"{DENSE_MATRICES} (N, N) float64 matrices (the agreement "
                                   f"check's) = {DENSE_MATRICES * 2 * dense_gb:.1f} GB > "
                                   f"{limit_name}")
    # the check in float64 (float32 rounding can flip the sign of a value at ReLU's kink,
    # and so pass or block its gradient), then freed before the float32 paths are built
    wide = {name: copy.deepcopy(backbone).double() for name, backbone in models.items()}
    errors = agreement(paths(wide, x.double(), edge_index, edge_weight.double(), N, dense,
                             graph_grad), wide, edge_index)
    del wide
    result.update(max_abs_diff=errors.pop("max_abs_diff"), rel_errors=errors,
                  max_rel_error=max(errors.values(), default=0.0), tolerance=TOLERANCE,
                  check_dtype="float64")
    fns = paths(models, x, edge_index, edge_weight, N, dense, graph_grad)
    held: dict[str, int] = {}  # bytes a path alone holds outside its calls
    if dense:
        held = dict.fromkeys(("dense_fwd", "dense_fwd_bwd"), N * N * x.element_size())
    if device.type == "cuda":
        result.update(allow_tf32=torch.backends.cuda.matmul.allow_tf32,
                      peak_mib=cuda_peaks(fns, device, [model, scatter_model], held))
    reps = args.repeats if N < args.large else args.repeats_large
    for name, times in interleaved(fns, reps, args.max_seconds, sync).items():
        result[name] = timing(times)
    return result


def paths(models: dict[str, GCNBackbone], x: Tensor, edge_index: Tensor,
          edge_weight: Tensor, N: int, dense: bool,
          graph_grad: bool) -> dict[str, Callable[[], object]]:
    """The functions :func:`measure` times and :func:`agreement` compares, in the dtype
    of ``x``, ``edge_weight`` and ``models``: ``{path}_fwd`` (no gradient) and
    ``{path}_fwd_bwd`` (a :data:`Pass`) of ``sparse`` and ``scatter`` (``models``' of
    that name), and with ``dense`` of ``dense`` (``models["sparse"].forward_dense`` on an
    adjacency built here, once), ``dense_incl_build`` (building it in every call) and
    ``dense_build`` (the building alone).

    Args:
        x: the node features :math:`(N, h)`.
        edge_index: the normalized graph's edges :math:`(2, E)`.
        edge_weight: their weights :math:`(E,)`.
    """
    def backward(output: Tensor, graph: Tensor) -> Pass:
        """``output``'s sum back-propagated (into ``graph`` too with ``graph_grad``)."""
        output.sum().backward()
        return output, graph.grad

    def sparse(backbone: GCNBackbone) -> tuple[Callable[[], Tensor], Callable[[], Pass]]:
        def fwd() -> Tensor:
            with torch.no_grad():
                return backbone.forward_normalized(x, edge_index, edge_weight)

        def fwd_bwd() -> Pass:
            w = edge_weight.detach().requires_grad_(graph_grad)
            backbone.zero_grad(set_to_none=True)
            return backward(backbone.forward_normalized(x, edge_index, w), w)
        return fwd, fwd_bwd

    fns: dict[str, Callable[[], object]] = {}
    for prefix, backbone in models.items():
        fns[f"{prefix}_fwd"], fns[f"{prefix}_fwd_bwd"] = sparse(backbone)
    if not dense:
        return fns
    model = models["sparse"]
    adj = dense_adjacency(edge_index, edge_weight, N, check=False)

    def dense_fwd() -> Tensor:
        with torch.no_grad():
            return model.forward_dense(x, adj)

    def dense_fwd_bwd() -> Pass:
        a = adj.detach().requires_grad_(graph_grad)
        model.zero_grad(set_to_none=True)
        return backward(model.forward_dense(x, a), a)

    def dense_incl_build_fwd() -> Tensor:
        with torch.no_grad():
            return model.forward_dense(x, dense_adjacency(edge_index, edge_weight, N,
                                                          check=False))

    def dense_incl_build_fwd_bwd() -> Pass:
        # the edge weights' gradient, as the sparse paths give it
        w = edge_weight.detach().requires_grad_(graph_grad)
        model.zero_grad(set_to_none=True)
        return backward(model.forward_dense(x, dense_adjacency(edge_index, w, N, check=False)), w)

    fns.update(dense_build=lambda: dense_adjacency(edge_index, edge_weight, N, check=False),
               dense_fwd=dense_fwd, dense_fwd_bwd=dense_fwd_bwd,
               dense_incl_build_fwd=dense_incl_build_fwd,
               dense_incl_build_fwd_bwd=dense_incl_build_fwd_bwd)
    return fns


def graph_bytes(N: int, E: int) -> dict[str, int]:
    """The analytic bytes of each path's graph structure at its peak (fwd+bwd), for ``N``
    nodes and ``E`` edges (self-loops included): ``scatter`` the edge list (``edge_index``
    :math:`(2, E)` int64, the weights :math:`(E,)` float32); ``sparse`` that and the CSR
    index of the forward (target-major) and of the backward (source-major), each a
    permutation and column indices :math:`(E,)` int64, row pointers :math:`(N + 1,)`
    int64 and the reordered weights :math:`(E,)` float32; ``dense`` the dense part's
    :data:`DENSE_MATRICES` ``(N, N)`` float32 matrices (what ``--dense-max-gb`` checks)."""
    edge_list = E * (2 * 8 + 4)
    csr = 2 * (E * (8 + 8 + 4) + (N + 1) * 8)
    return dict(sparse=edge_list + csr, scatter=edge_list, dense=DENSE_MATRICES * N * N * 4)


def cuda_peaks(fns: dict[str, Callable[[], object]], device: torch.device,
               models: list[GCNBackbone], held: dict[str, int]) -> dict[str, float]:
    """Every function's peak CUDA memory in MiB: the most allocated during one call
    (``torch.cuda.max_memory_allocated``) above what was allocated before it (the
    features, the models, the edge list), plus ``held[name]`` bytes that it alone holds
    outside its calls (``dense``'s adjacency). The models' gradients are freed first, as
    a fwd+bwd call frees them before it allocates them again."""
    peaks = {}
    for name, fn in fns.items():
        for backbone in models:
            backbone.zero_grad(set_to_none=True)
        torch.cuda.synchronize(device)
        before = torch.cuda.memory_allocated(device)
        torch.cuda.reset_peak_memory_stats(device)
        fn()
        torch.cuda.synchronize(device)
        peaks[name] = (torch.cuda.max_memory_allocated(device) - before
                       + held.get(name, 0)) / MIB
    return peaks


def agreement(fns: dict[str, Callable[[], Any]], models: dict[str, GCNBackbone],
              edge_index: Tensor) -> dict[str, float]:
    """Every path's largest :func:`relative_error` against the sparse path's, over its
    output, and for ``fwd_bwd`` its edge weights' gradient (``dense``: its adjacency's
    at ``edge_index``) and the parameters' (``scatter``: ``models["scatter"]``'s, the
    others ``models["sparse"]``'s); also ``max_abs_diff``, the largest absolute
    difference of the outputs. One call of each path of ``fns`` (``{path}_fwd``,
    ``{path}_fwd_bwd``; ``dense_build`` is not called).

    Raises:
        PathsDisagree: an error above :data:`TOLERANCE`, naming the path and what
            differs.
    """
    def pass_of(name: str) -> dict[str, Tensor]:
        if not name.endswith("_fwd_bwd"):
            return {"output": fns[name]()}
        output, graph = fns[name]()
        backbone = models["scatter" if name.startswith("scatter") else "sparse"]
        tensors = {"output": output}
        if graph is not None:  # an adjacency's gradient: the edge weights' at the edges
            tensors["edge weight gradient"] = (graph if graph.dim() == 1
                                               else graph[edge_index[1], edge_index[0]])
        tensors.update((f"gradient of {key}", param.grad.clone())
                       for key, param in backbone.named_parameters() if param.grad is not None)
        return tensors

    errors: dict[str, float] = {}
    max_abs = 0.0
    for key in ("fwd", "fwd_bwd"):
        reference = pass_of(f"sparse_{key}")
        for name in fns:
            if not name.endswith(f"_{key}") or name == f"sparse_{key}":
                continue
            tensors = pass_of(name)
            if tensors.keys() != reference.keys():
                raise PathsDisagree(f"{name} gives {sorted(tensors)}, sparse_{key} "
                                    f"{sorted(reference)}")
            max_abs = max(max_abs, (tensors["output"] - reference["output"]).abs().max().item())
            errors[name] = 0.0
            for what, value in tensors.items():
                error = relative_error(value, reference[what])
                errors[name] = max(errors[name], error)
                if not error <= TOLERANCE:
                    raise PathsDisagree(
                        f"{name} disagrees with sparse_{key}: its {what} differs by "
                        f"{error:.2e} relative (> {TOLERANCE:g})")
    return {**errors, "max_abs_diff": max_abs}


#: The optional libraries whose presence a result records (:func:`~machine.measured_on`).
LIBRARIES = ("WITH_TORCH_SCATTER", "WITH_TORCH_SPARSE")
#: What the report's heading and summary name of the machines and libraries the
#: results recorded.
HEADING = ("cpu", "nproc", "torch", "torch_geometric", "python", *LIBRARIES)

#: The result files' names in ``--out-dir`` (:func:`result_path`).
RESULT_FILES = "propagation_*.json"


def result_path(out_dir: Path, N: int, k: int, threads: int, h: int, layers: int,
                graph_grad: bool = True, device: str = "cpu") -> Path:
    """A result's file; ``_no-graph-grad`` ends the name of one without the graph's
    gradient (``--graph-grad no``), then ``_cuda`` that of one on a CUDA device
    (``--device cuda`` or ``cuda:0``; ``_cudaN`` on ``cuda:N``), so that those of the
    defaults keep their names."""
    on = "" if device == "cpu" else f"_cuda{torch.device(device).index or ''}"
    return out_dir / (f"propagation_N{N}_k{k}_t{threads}_h{h}_l{layers}{suffix(graph_grad)}"
                      f"{on}.json")


def suffix(graph_grad: bool) -> str:
    """What ends the names of the files of ``--graph-grad no``."""
    return "" if graph_grad else "_no-graph-grad"


def summary_path(out_dir: Path, h: int, layers: int, graph_grad: bool = True) -> Path:
    """The crossovers of the results of width ``h`` and ``layers`` layers."""
    return out_dir / f"summary_h{h}_l{layers}{suffix(graph_grad)}.json"


def spread(entry: dict[str, Any]) -> tuple[float, float]:
    """A timing's (p25, p75): recorded (format 3), else from its ``times_ms`` (format
    2 recorded them for all but ``dense_build``)."""
    if "p25_ms" in entry:
        return entry["p25_ms"], entry["p75_ms"]
    return quartiles(entry["times_ms"])


def verdict(result: dict[str, Any], key: str, dense: str = "dense") -> Optional[str]:
    """``"sparse"`` or ``"dense"`` where its interquartile range lies wholly below the
    other's, else ``"tie"``; ``None`` without the dense timing ``{dense}_{key}``."""
    if f"{dense}_{key}" not in result:
        return None
    (s25, s75), (d25, d75) = (spread(result[f"sparse_{key}"]),
                              spread(result[f"{dense}_{key}"]))
    return "sparse" if s75 < d25 else "dense" if d75 < s25 else "tie"


def crossover(rows: list, key: str, dense: str = "dense") -> str:
    """Smallest N from which sparse wins at every larger measured N. A win needs a
    margin: sparse's interquartile range wholly below dense's (:func:`verdict`); an
    overlap is a tie. Between a dense win and the next N the ratio's 1 is
    interpolated (log-linear); after a tie the crossover is that next N."""
    pts = sorted((r["N"], r[f"{dense}_{key}"]["median_ms"] / r[f"sparse_{key}"]["median_ms"],
                  verdict(r, key, dense)) for r in rows if f"{dense}_{key}" in r)
    if not pts:
        return "n/a"
    if all(v == "sparse" for *_, v in pts):
        return f"< {pts[0][0]} (sparse faster at every measured N)"
    last = max(i for i, (*_, v) in enumerate(pts) if v != "sparse")
    if last == len(pts) - 1:
        return f"> {pts[-1][0]} ({pts[-1][2]} at the largest measured N)"
    (n0, r0, v0), (n1, r1, _) = pts[last], pts[last + 1]
    if v0 == "tie":
        return f"<= {n1} (tie at {n0})"
    t = (0 - math.log(r0)) / (math.log(r1) - math.log(r0))
    n = math.exp(math.log(n0) + t * (math.log(n1) - math.log(n0)))
    return f"~{n:.0f} (between {n0} and {n1})"


def memory(result: dict[str, Any], path: str) -> str:
    """A memory column's cell: the analytic MiB of ``path``'s graph structure
    (:func:`graph_bytes`), then where measured (CUDA) its peaks, fwd / fwd+bwd
    (:func:`cuda_peaks`); ``-`` for a result without them (older results)."""
    parts = []
    if (analytic := result.get("graph_bytes", {}).get(path)) is not None:
        parts.append(f"{analytic / MIB:.2f}")
    if f"{path}_fwd" in (peaks := result.get("peak_mib", {})):
        parts.append(f"peak {peaks[f'{path}_fwd']:.1f} / {peaks[f'{path}_fwd_bwd']:.1f}")
    return "; ".join(parts) or "-"


def check_error(result: dict[str, Any]) -> str:
    """The ``max rel error`` column: the agreement check's largest relative error and its
    dtype (``f64``; ``f32`` before ``check_dtype`` was recorded); ``-`` without one."""
    if "max_rel_error" not in result:
        return "-"
    dtype = "f64" if result.get("check_dtype") == "float64" else "f32"
    return f"{result['max_rel_error']:.1e} ({dtype})"


def processor(result: dict[str, Any]) -> str:
    """The ``cpu`` column: the result's CPU, and its device where not the CPU."""
    device = result.get("device", "cpu")
    return result.get("cpu", "unknown") + (f", {device}" if device != "cpu" else "")


def table(results: list) -> tuple:
    """The markdown table of ``results``, that of the crossovers per (host, k, threads)
    (:func:`~machine.host`: results of one machine only), and the summary's entries."""
    lines = ["| N | k | threads | cpu | edges | timing | graph | sparse fwd ms | "
             "scatter fwd ms | dense fwd ms | dense/sparse fwd | dense incl. build/sparse fwd | "
             "sparse fwd+bwd ms | "
             "scatter fwd+bwd ms | dense fwd+bwd ms | scatter/sparse fwd+bwd | "
             "dense/sparse fwd+bwd | dense incl. build/sparse fwd+bwd | dense build ms | "
             "max abs diff | max rel error | sparse MiB | scatter MiB | dense MiB |",
             "|---" * 24 + "|"]
    for r in sorted(results, key=lambda r: (host(r), r["threads"], r["k"], r["N"])):
        def cell(name: str) -> str:
            if name not in r:
                return "skipped" if "dense_skipped" in r and "dense" in name else "-"
            if "p25_ms" not in r[name] and "times_ms" not in r[name]:
                return f"{r[name]['median_ms']:.2f}"  # format 2's dense_build
            p25, p75 = spread(r[name])
            return f"{r[name]['median_ms']:.2f} ({p25:.2f}-{p75:.2f})"

        def ratio(dense: str, key: str) -> str:
            if f"{dense}_{key}" not in r:
                return "-"
            ratio = r[f"{dense}_{key}"]["median_ms"] / r[f"sparse_{key}"]["median_ms"]
            return f"{ratio:.1f}x ({verdict(r, key, dense)})"
        scatter_ratio = "-"
        if "scatter_fwd_bwd" in r:
            speedup = r["scatter_fwd_bwd"]["median_ms"] / r["sparse_fwd_bwd"]["median_ms"]
            scatter_ratio = f"{speedup:.1f}x"
        lines.append(
            f"| {r['N']} | {r['k']} | {r['threads']} | {processor(r)} | {r['edges']} | "
            f"{FORMATS[r['format']]} | {graph_kind(r)} | "
            f"{cell('sparse_fwd')} | {cell('scatter_fwd')} | {cell('dense_fwd')} | "
            f"{ratio('dense', 'fwd')} | {ratio('dense_incl_build', 'fwd')} | "
            f"{cell('sparse_fwd_bwd')} | {cell('scatter_fwd_bwd')} | {cell('dense_fwd_bwd')} | "
            f"{scatter_ratio} | {ratio('dense', 'fwd_bwd')} | "
            f"{ratio('dense_incl_build', 'fwd_bwd')} | {cell('dense_build')} | "
            f"{r.get('max_abs_diff', float('nan')):.1e} | {check_error(r)} | "
            f"{memory(r, 'sparse')} | {memory(r, 'scatter')} | {memory(r, 'dense')} |")
    groups: dict = {}
    for r in results:
        groups.setdefault((host(r), r["k"], r["threads"]), []).append(r)
    cross = ["| host | k | threads | crossover N, fwd | crossover N, fwd+bwd | crossover N, "
             "fwd, dense incl. build | crossover N, fwd+bwd, dense incl. build | "
             "dense/sparse at 10k fwd | "
             "dense/sparse at 10k fwd+bwd |", "|---" * 9 + "|"]
    summary = []
    variants = {"": "dense", "incl_build_": "dense_incl_build"}
    for (machine, k, threads), rows in sorted(groups.items()):
        at10k = next((r for r in rows if r["N"] == 10000 and "dense_fwd" in r), None)
        r10 = {key: (at10k[f"dense_{key}"]["median_ms"] / at10k[f"sparse_{key}"]["median_ms"]
                     if at10k else None) for key in ("fwd", "fwd_bwd")}
        c = {f"{tag}{key}": crossover(rows, key, dense) for tag, dense in variants.items()
             for key in ("fwd", "fwd_bwd")}
        summary.append(dict(cpu=rows[0].get("cpu"), nproc=rows[0].get("nproc"),
                            device=rows[0].get("device", "cpu"), k=k,
                            threads=threads,
                            **{f"crossover_{name}": value for name, value in c.items()},
                            ratio_10k_fwd=r10["fwd"], ratio_10k_fwd_bwd=r10["fwd_bwd"]))
        fmt = lambda v: f"{v:.1f}x" if v is not None else "n/a"  # noqa: E731
        cross.append(f"| {machine} | {k} | {threads} | {c['fwd']} | {c['fwd_bwd']} | "
                     f"{c['incl_build_fwd']} | {c['incl_build_fwd_bwd']} | {fmt(r10['fwd'])} | "
                     f"{fmt(r10['fwd_bwd'])} |")
    return "\n".join(lines), "\n".join(cross), summary


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int_list(2), default=list(SIZES),
                        help="comma-separated N (the issue's grid is 1k..50k; 250/500 locate "
                             "the crossover; N >= 2)")
    parser.add_argument("--ks", type=positive_ints, default=list(KS),
                        help="comma-separated neighbours per node")
    parser.add_argument("--threads", type=thread_counts, default=[1],
                        help=f"comma-separated thread counts, each at most {MAX_THREADS}")
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
                        help="time budget per timed function: the interleaved repeats stop "
                             "once they took this long times the functions timed (>= 2 "
                             "repeats; default: 8)")
    parser.add_argument("--dense-max-gb", type=positive_number, default=4.0,
                        help=f"skip the dense paths when their peak, {DENSE_MATRICES} (N, N) "
                             "matrices (the adjacency, the one dense incl. build builds, "
                             "the adjacency's gradient as the layers' terms are summed "
                             "into it) in the agreement check's float64, needs more GB "
                             "than this (default: 4; N = 10,000 needs 3.2)")
    parser.add_argument("--out-dir", type=Path, default=HERE / "results" / "propagation",
                        help="folder of the JSONs and of summary_hH_lL.json, the crossovers "
                             "of --hidden H and --num-layers L (default: "
                             "benchmarks/results/propagation)")
    parser.add_argument("--markdown", type=Path, default=None,
                        help="table file (default: OUT_DIR/propagation_hH_lL.md)")
    parser.add_argument("--graph-grad", choices=("yes", "no"), default="yes",
                        help="fwd+bwd also computes the graph's gradient (the edge weights', "
                             "dense: the adjacency's), as SLeDGe learns its graph; no: a "
                             "fixed graph's (default: yes; no ends the files' names with "
                             "_no-graph-grad)")
    parser.add_argument("--device", type=device_spec, default="cpu",
                        help="cpu, cuda or cuda:N: where the paths run (default: cpu; a CUDA "
                             "device's files end with _cuda, cuda:N's with _cudaN; without "
                             "one the run prints 'no CUDA device' and exits with status 1)")
    parser.add_argument("--force", action="store_true", help="re-measure existing results")
    parser.add_argument("--report-only", action="store_true",
                        help="only print the table of existing results")
    args = parser.parse_args(argv)
    with usage_errors(parser):
        args.graph_grad = args.graph_grad == "yes"
        tag = f"h{args.hidden}_l{args.num_layers}{suffix(args.graph_grad)}"
        args.markdown = args.markdown or (args.out_dir / f"propagation_{tag}.md")
        check_outputs(parser, {"--out-dir": args.out_dir}, files={"--markdown": args.markdown})
        sizes, ks, threads_list = args.sizes, args.ks, args.threads
        if args.report_only:
            input_folder(parser, "--out-dir", args.out_dir)
        else:
            for k in ks:
                if k >= min(sizes):
                    parser.error(f"argument --ks: k = {k} distinct neighbours other than the "
                                 f"node itself need N > k, but --sizes has N = {min(sizes)}")
            if args.device != "cpu":
                require_cuda()
                try:
                    check_device(args.device, "--device")  # cuda:N of a device this has
                except ValueError as error:
                    parser.error(str(error))
            args.out_dir.mkdir(parents=True, exist_ok=True)

        if not args.report_only:
            here = dict(measured_on(), torch_geometric=torch_geometric.__version__,
                        device=device_name(torch.device(args.device)))
            runs = [(N, k, threads, result_path(args.out_dir, N, k, threads, args.hidden,
                                                args.num_layers, args.graph_grad, args.device))
                    for threads in threads_list for k in ks for N in sizes]
            # a result it would skip, or the report read (not rewritten), refused before any run
            read_results(parser, args.out_dir, RESULT_FILES,
                         {path for *_, path in runs} if args.force else set())
            warn_threads(threads_list)
            print(f"device: {here['device']}, cpu: {here['cpu']}, nproc={here['nproc']}, "
                  f"torch {here['torch']}, PyG {here['torch_geometric']}, "
                  f"{ {key: here[key] for key in LIBRARIES} }", flush=True)
            for N, k, threads, path in runs:
                if reused(parser, path, args.force, lambda result: outdated(result, here)):
                    continue
                try:
                    result = measure(N, k, threads, args)
                except PathsDisagree as error:
                    parser.exit(1, f"{parser.prog}: error: N={N} k={k} t={threads}: {error}; "
                                   "no result written\n")
                result.update(here, command=" ".join(sys.argv),
                              timestamp=time.strftime("%Y-%m-%dT%H:%M:%S"))
                atomic_write_text(path, json.dumps(result, indent=1))
                dense = (f"dense fwd {result['dense_fwd']['median_ms']:.2f} ms, fwd+bwd "
                         f"{result['dense_fwd_bwd']['median_ms']:.2f} ms"
                         if "dense_fwd" in result else f"dense skipped: "
                         f"{result['dense_skipped']}")
                print(f"N={N:6d} k={k:2d} t={threads}: sparse fwd "
                      f"{result['sparse_fwd']['median_ms']:.2f} ms, fwd+bwd "
                      f"{result['sparse_fwd_bwd']['median_ms']:.2f} ms; {dense}; paths agree "
                      f"to {result['max_rel_error']:.1e} relative", flush=True)

        results = []
        for path in sorted(args.out_dir.glob(RESULT_FILES)):
            result = read_result(parser, path)
            if (result["hidden"], result["num_layers"], result.get("graph_grad", True)) != (
                    args.hidden, args.num_layers, args.graph_grad):
                continue
            why = stale(result)
            if why is None:
                results.append(result)
            else:
                print(f"not reported: {path.name}: {why}; run it again without --report-only "
                      "to re-measure it", flush=True)
        if not results:
            print("no results")
            return
        text, cross, summary = table(results)
        print(text)
        print(cross)
        # the machines and libraries the results recorded, not this one's
        measured = {key: recorded(results, key) for key in HEADING}
        atomic_write_text(summary_path(args.out_dir, args.hidden, args.num_layers,
                                       args.graph_grad),
                          json.dumps(dict(hidden=args.hidden, num_layers=args.num_layers,
                                          graph_grad=args.graph_grad, summary=summary,
                                          **measured), indent=1))
        skipped = sorted({r["N"] for r in results if "dense_skipped" in r})
        gradient = ("fwd+bwd includes the gradient of the edge weights (sparse, dense "
                    "incl. build) / of the adjacency (dense)." if args.graph_grad else
                    "fwd+bwd: the parameters' gradients only (--graph-grad no: a fixed "
                    "graph).")
        devices = "; ".join(dict.fromkeys(r.get("device", "cpu") for r in results))
        md = [f"### propagation (CPU: {measured['cpu']}, nproc={measured['nproc']}, "
              f"torch {measured['torch']}, PyG {measured['torch_geometric']}, torch-scatter "
              f"installed: {measured['WITH_TORCH_SCATTER']}, torch-sparse installed: "
              f"{measured['WITH_TORCH_SPARSE']}"
              + (f", devices: {devices}" if devices != "cpu" else "") + ")",
              "", f"GCNBackbone, h = {args.hidden} (input, hidden and output), {args.num_layers} "
              "layers, random top-(k+1) graph, symmetric normalization (N (k + 2) edges: the "
              f"N appended self-loops, and each node's own edge kept at weight 0); medians "
              f"(p25-p75). {gradient} dense incl. build builds the adjacency "
              "from the edges in every call, as sparse builds its CSR index. A ratio's "
              "(sparse) / (dense) is a win (interquartile ranges apart), (tie) an overlap. "
              "timing: interleaved (every repeat times each path once) or blocks (each path's "
              "repeats in a block of their own; no dense incl. build)."
              + (f" Dense skipped at N = {skipped}: {DENSE_MATRICES} (N, N) float64 matrices "
                 f"exceed --dense-max-gb." if skipped else "")
              + " graph: each node's k neighbours distinct, or drawn with replacement (older "
              "results); max rel error: the largest difference of a path's outputs and "
              "gradients from sparse's, relative to sparse's largest (checked to be at most "
              f"{TOLERANCE:g} in float64 before the timing: f64; f32: checked in float32 to "
              "1e-4, older results). sparse / scatter / dense MiB: the "
              "analytic size of the path's graph structure at its peak (sparse: the edge "
              "list and its two CSR indexes, scatter: the edge list, dense: "
              f"{DENSE_MATRICES} (N, N) float32 matrices), then on CUDA its measured peak "
              "allocation, fwd / fwd+bwd; - for results without them. Crossovers per host "
              "(and device): the results of one machine only.",
              "", text, "", cross]
        atomic_write_text(args.markdown, "\n".join(md) + "\n")
        print(f"markdown: {args.markdown}")


if __name__ == "__main__":
    main()
