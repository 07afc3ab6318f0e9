"""``torch.compile`` of a learned-graph classifier: graph breaks, the first
compile's time, and compiled vs eager forward + backward.

The module is what a PyG user composes from the building blocks: a
:class:`~torch_geometric_stream.graph.DynamicKNNGraph` (``--k`` neighbours,
embedding width ``--hidden``) builds the graph of the ``--rows`` rows
:math:`(N, d)`, a :class:`~torch_geometric_stream.nn.GCNBackbone` (default CSR
aggregation, ``--num-layers`` layers, ``--classes`` outputs) classifies the rows
over it, and the loss is the cross-entropy of its logits plus the graph's
structure loss. Per run:

* **breaks** (JSON ``breaks``): ``torch._dynamo.explain`` of the loss
  (backend-independent): the graphs of one forward, its breaks (``graphs - 1``)
  and the reasons it lists, counted by reason and where the break happened (the
  innermost frame, and the innermost frame of the package); a break inside nested
  calls is listed once per frame on the way (dynamo compiles the frames under a
  break on their own);
* **first call** (``compiled.<backend>``): the seconds of the first forward +
  backward of a fresh ``torch.compile(module, backend=...)`` (compiling
  included, inductor's caches off: no kernel compiled by an earlier run
  reused), per ``--backends``, and ``torch._dynamo``'s own count of the breaks
  it met (``dynamo_breaks``);
* **steady state**: the median milliseconds of a forward + backward compiled
  (``compiled.<backend>``) and in eager mode (``uncompiled``), the same module
  and rows, and the largest difference of the loss and the gradients between the
  two (``max_abs_diff``).

The table is printed, the breaks listed, and the result written to
``--out-dir``/``compile_breaks_N<rows>_d<features>_t<threads>.json`` (replaced on
a rerun) with the CPU, the thread count, the load average before and after, and
the torch and Python versions::

    OMP_NUM_THREADS=1 python benchmarks/compile_breaks.py --backends eager,aot_eager
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import re
import statistics
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import torch
import torch._inductor.config
import torch.nn.functional as F
from torch import Tensor, nn

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from machine import check_outputs, cpu_model, positive_number  # noqa: E402
from propagation import timed  # noqa: E402

from torch_geometric_stream.cli.arguments import (MAX_THREADS, positive_int,  # noqa: E402
                                                  thread_count)
from torch_geometric_stream.files import atomic_write_text  # noqa: E402
from torch_geometric_stream.graph import DynamicKNNGraph  # noqa: E402
from torch_geometric_stream.nn import GCNBackbone  # noqa: E402

BACKENDS = ("eager", "aot_eager", "inductor")
#: An object's address in a repr, `` at 0x7f...``.
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
#: The package's folder: frames under it are the package's own.
PACKAGE = str(Path(__file__).resolve().parents[1] / "torch_geometric_stream")


class GraphClassifier(nn.Module):
    """The learned graph, the GCN over it, and their loss (see the module docstring)."""

    def __init__(self, features: int, hidden: int, k: int, classes: int,
                 num_layers: int) -> None:
        super().__init__()
        self.graph = DynamicKNNGraph(features, k, hidden_channels=hidden)
        self.backbone = GCNBackbone(features, hidden, classes, num_layers)

    def forward(self, x: Tensor, y: Tensor) -> Tensor:
        edge_index, edge_weight = self.graph(x)
        logits = self.backbone(x, edge_index, edge_weight)
        return F.cross_entropy(logits, y) + self.graph.structure_loss(x)


#: Package functions that only pass a kernel call on (behind the graph break under
#: compilation): a break in one is listed at the package frame that called it.
FORWARDERS = frozenset({"_call_kernel"})


def frame_name(frame: Any) -> str:
    """``path:line (function)`` of a traceback frame, the path relative to the
    package's parent for the package's files, else the file's name."""
    path = Path(frame.filename)
    name = (str(path.relative_to(Path(PACKAGE).parent)) if frame.filename.startswith(PACKAGE)
            else path.name)
    return f"{name}:{frame.lineno} ({frame.name})"


def break_reason(reason: str) -> str:
    """A break's reason in one line: its first line, with its explanation if any,
    without the objects' addresses (which differ from run to run)."""
    lines = [line.strip() for line in ADDRESS.sub("", reason).splitlines()]
    explanation = next((line[len("Explanation:"):].strip() for line in lines
                        if line.startswith("Explanation:")), "")
    return f"{lines[0]}: {explanation}" if explanation else lines[0]


def explained_breaks(module: nn.Module, *inputs: Tensor) -> dict[str, Any]:
    """``torch._dynamo.explain`` of ``module(*inputs)``: graphs, breaks, and the
    breaks counted by reason and place (most frequent first): the innermost frame,
    and the innermost package frame outside :data:`FORWARDERS`."""
    torch._dynamo.reset()
    explanation = torch._dynamo.explain(module)(*inputs)
    counts: collections.Counter = collections.Counter()
    for entry in explanation.break_reasons:
        stack = entry.user_stack
        own = [frame for frame in stack if frame.filename.startswith(PACKAGE)
               and frame.name not in FORWARDERS]
        counts[(break_reason(entry.reason), frame_name(stack[-1]) if stack else "",
                frame_name(own[-1]) if own else "")] += 1
    torch._dynamo.reset()
    return dict(graphs=explanation.graph_count, breaks=explanation.graph_break_count,
                reasons=[dict(count=count, reason=reason, frame=frame, package_frame=own)
                         for (reason, frame, own), count in counts.most_common()])


def forward_backward(module: Callable[[Tensor, Tensor], Tensor], params: nn.Module,
                     x: Tensor, y: Tensor) -> Callable[[], Tensor]:
    """One step of ``module``'s loss, forward and backward, gradients reset first."""

    def step() -> Tensor:
        params.zero_grad(set_to_none=True)
        loss = module(x, y)
        loss.backward()
        return loss.detach()

    return step


def gradients(module: nn.Module) -> list[Tensor]:
    """The gradients of ``module``'s parameters after a backward (each takes part
    in the loss, so each has one)."""
    grads = []
    for name, param in module.named_parameters():
        if param.grad is None:
            raise RuntimeError(f"the parameter {name} got no gradient")
        grads.append(param.grad)
    return grads


def max_difference(loss: Tensor, expected_loss: Tensor, grads: list[Tensor],
                   expected_grads: list[Tensor]) -> float:
    """The largest absolute difference of the losses and of the gradients."""
    return max((a - b).abs().max().item()
               for a, b in zip([loss, *grads], [expected_loss, *expected_grads]))


def compiled_steps(module: nn.Module, x: Tensor, y: Tensor, backend: str,
                   expected_loss: Tensor, expected_grads: list[Tensor],
                   args: argparse.Namespace) -> dict[str, Any]:
    """A fresh ``torch.compile(module, backend=backend)``: its first forward +
    backward (seconds, dynamo's count of breaks, the largest difference from eager
    mode) and its steady state."""
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    step = forward_backward(torch.compile(module, backend=backend), module, x, y)
    start = time.perf_counter()
    loss = step()
    first = time.perf_counter() - start
    dynamo_breaks = sum(torch._dynamo.utils.counters["graph_break"].values())
    difference = max_difference(loss, expected_loss,
                                gradients(module), expected_grads)
    times = timed(step, args.repeats, args.max_seconds)
    return dict(first_call_s=first, dynamo_breaks=dynamo_breaks,
                median_ms=statistics.median(times), runs=len(times), max_abs_diff=difference)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Breaks, then per backend the first call and the steady state, and eager."""
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    module = GraphClassifier(args.features, args.hidden, args.k, args.classes,
                             args.num_layers)
    x = torch.randn(args.rows, args.features)
    y = torch.randint(0, args.classes, (args.rows,))
    result: dict[str, Any] = dict(breaks=explained_breaks(module, x, y))
    eager = forward_backward(module, module, x, y)
    expected_loss = eager()
    expected_grads = [grad.clone() for grad in gradients(module)]
    times = timed(eager, args.repeats, args.max_seconds)
    result["uncompiled"] = dict(median_ms=statistics.median(times), runs=len(times))
    # a cold compile: inductor's caches would reuse what an earlier process compiled
    # (dynamo says once that its profile-guided sizes are off with them)
    with torch._inductor.config.patch(force_disable_caches=True), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="dynamo_pgo force disabled")
        result["compiled"] = {backend: compiled_steps(module, x, y, backend, expected_loss,
                                                      expected_grads, args)
                              for backend in args.backends}
    torch._dynamo.reset()  # no compiled code left behind
    return result


def table(result: dict[str, Any]) -> str:
    """The backends' rows (first call, steady state, against eager) and the breaks."""
    eager_ms = result["uncompiled"]["median_ms"]  # (eager mode, not the eager backend)
    lines = [f"explain: {result['breaks']['graphs']} graphs, {result['breaks']['breaks']} "
             f"breaks; uncompiled fwd+bwd {eager_ms:.2f} ms", "",
             "| backend | dynamo breaks | first call s | compiled fwd+bwd ms | compiled/uncompiled | "
             "max abs diff |", "|---|---|---|---|---|---|"]
    for backend, row in result["compiled"].items():
        lines.append(f"| {backend} | {row['dynamo_breaks']} | {row['first_call_s']:.1f} | "
                     f"{row['median_ms']:.2f} | {row['median_ms'] / eager_ms:.2f}x | "
                     f"{row['max_abs_diff']:.1e} |")
    lines += ["", "| breaks | reason | frame | package frame |", "|---|---|---|---|"]
    lines += [f"| {entry['count']} | {entry['reason']} | {entry['frame']} | "
              f"{entry['package_frame']} |" for entry in result["breaks"]["reasons"]]
    return "\n".join(lines)


def backend_list(text: str) -> list[str]:
    """An argparse type: a comma-separated list of :data:`BACKENDS`."""
    backends = text.split(",")
    if any(backend not in BACKENDS for backend in backends):
        raise argparse.ArgumentTypeError(f"expected a comma-separated list of "
                                         f"{', '.join(BACKENDS)}, got {text!r}")
    return list(dict.fromkeys(backends))


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=positive_int, default=1000,
                        help="rows N of the graph (default: 1000)")
    parser.add_argument("--features", type=positive_int, default=64,
                        help="input width d (default: 64)")
    parser.add_argument("--hidden", type=positive_int, default=64,
                        help="embedding and hidden width (default: 64)")
    parser.add_argument("--k", type=positive_int, default=10,
                        help="neighbours per row (default: 10)")
    parser.add_argument("--classes", type=positive_int, default=10,
                        help="outputs of the backbone (default: 10)")
    parser.add_argument("--num-layers", type=positive_int, default=2,
                        help="GCN layers (default: 2)")
    parser.add_argument("--backends", type=backend_list, default=["eager", "aot_eager"],
                        help=f"comma-separated torch.compile backends, of {', '.join(BACKENDS)} "
                             "(default: eager,aot_eager)")
    parser.add_argument("--threads", type=thread_count, default=1,
                        help=f"torch threads, at most {MAX_THREADS} (default: 1)")
    parser.add_argument("--repeats", type=positive_int, default=20,
                        help="timed forward + backward steps per function (default: 20)")
    parser.add_argument("--max-seconds", type=positive_number, default=10.0,
                        help="per timed function: stop after this long (>= 2 runs)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the module and rows")
    parser.add_argument("--out-dir", type=Path, default=HERE / "results" / "compile_breaks",
                        help="folder of the JSON (default: benchmarks/results/compile_breaks)")
    args = parser.parse_args(argv)
    check_outputs(parser, {"--out-dir": args.out_dir})
    env = dict(cpu=cpu_model(), nproc=os.cpu_count(), threads=args.threads,
               torch=torch.__version__, python=platform.python_version(),
               load_before=os.getloadavg())
    result = dict(rows=args.rows, features=args.features, hidden=args.hidden, k=args.k,
                  classes=args.classes, num_layers=args.num_layers, backends=args.backends,
                  **measure(args), **env, load_after=os.getloadavg(),
                  command=" ".join(sys.argv), timestamp=time.strftime("%Y-%m-%dT%H:%M:%S"))
    args.out_dir.mkdir(parents=True, exist_ok=True)
    path = args.out_dir / f"compile_breaks_N{args.rows}_d{args.features}_t{args.threads}.json"
    atomic_write_text(path, json.dumps(result, indent=1) + "\n")
    print(table(result))
    print(f"cpu: {env['cpu']}, nproc={env['nproc']}, threads={args.threads}, torch "
          f"{env['torch']}, load average {env['load_before'][0]:.1f} before, "
          f"{result['load_after'][0]:.1f} after")


if __name__ == "__main__":
    main()
