"""Per-sample cost and process memory over a long synthetic stream (flat or growing?).

Streams a :class:`~torch_geometric_stream.datasets.SyntheticStream` (d = 32,
5 classes, no drift) test-then-train through SLeDGe-L (``light``) or full
SLeDGe (``full``) at M = 1000 (L = 100, U = 900; SLeDGe-L keeps one labeled
prototype per class, so its memory is c + U = 905 slots), h = 256, k = 5,
2 GCN layers, one embedding layer. 1 % of the samples are labeled by a seeded
Bernoulli mask (each 4096-row block of the stream has its own random stream,
so the mask does not depend on where a run was resumed).

Every ``--window`` samples one row is recorded: the median / p95 / mean
per-sample latency (``predict(x)`` + ``learn(x, y)``) over the window, the median
per-sample CPU time of the process (``time.process_time``: with one thread it is
the work of the step, and unlike the wall clock it does not grow when other
processes share the cores; rows written before it was recorded lack it), the
process RSS (VmRSS of ``/proc/self/status``) at the window's end, and the
window's prequential accuracy. At the end every parameter, memory buffer and
optimizer-state tensor is checked for NaN/inf.

Resumable: after every window the learner, the RNG states, the stream
position and the rows so far are written atomically with
:func:`torch_geometric_stream.checkpoint.save_checkpoint`
(``<out-dir>/<name>.ckpt``) and the rows to ``<out-dir>/<name>.json``; a
killed run started again with the same arguments continues at the last
finished window (rows from the resumed process carry a new ``segment``
number: RSS restarts from a fresh process there). A finished run (its JSON
covers all the samples) is skipped, also without its checkpoint, which git
ignores. ``--force`` starts over.

Summary (printed, in the JSON and in ``--markdown``): least-squares slope of
the median latency (ms per 100k samples) and of the RSS (MiB per 100k samples)
against the stream position over the windows after ``--warmup-windows``, and
the last-window / first-window (after warm-up) ratios of both; the same for the
CPU time (over the windows that have it), and the wall-clock ratio within the
last segment (one process, so one load level as long as the machine's load did
not change).

Example (the issue's full runs, hours on one core; a shortened run below)::

    OMP_NUM_THREADS=1 python benchmarks/stream_length.py --model light   # 1,000,000 samples
    OMP_NUM_THREADS=1 python benchmarks/stream_length.py --model full    # 200,000 samples
    OMP_NUM_THREADS=1 python benchmarks/stream_length.py --model light --window 2000 --samples 20000
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
from typing import Optional, Sequence

import numpy as np
import torch

HERE = Path(__file__).resolve().parent

from torch_geometric_stream import SLeDGe  # noqa: E402
from torch_geometric_stream.checkpoint import load_checkpoint, save_checkpoint  # noqa: E402
from torch_geometric_stream.cli.arguments import (MAX_THREADS, label_ratio,  # noqa: E402
                                                  positive_int, thread_count)
from torch_geometric_stream.datasets import SyntheticStream  # noqa: E402
from torch_geometric_stream.files import atomic_write_text  # noqa: E402
from machine import (check_outputs, cpu_model, int_at_least,  # noqa: E402  (on sys.path)
                     read_json_object, read_result, read_results, seed_value,
                     usage_errors)
D, C = 32, 5
DEFAULT_SAMPLES = {"light": 1_000_000, "full": 200_000}


def rss_mib() -> float:
    """Resident set size of this process in MiB (VmRSS; psutil as a fallback)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    import psutil  # pragma: no cover
    return psutil.Process().memory_info().rss / 2 ** 20


def build_learner(model: str, args: argparse.Namespace) -> SLeDGe:
    return SLeDGe(D, C, labeled_size=args.labeled_size, unlabeled_size=args.unlabeled_size,
                  k=args.k, hidden_channels=args.hidden, num_layers=args.num_layers,
                  embedding_layers=1, light=(model == "light"), seed=args.seed)


def label_mask(block: int, n: int, seed: int, ratio: float) -> np.ndarray:
    """Seeded Bernoulli(``ratio``) label mask of the stream block ``block``."""
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2, block)))
    return rng.random(n) < ratio


def non_finite_entries(learner: SLeDGe) -> list:
    """Names of state entries (parameters, memory buffers, optimizer state) with NaN/inf."""
    bad = []
    for name, value in learner.state_dict().items():
        if torch.is_tensor(value) and value.is_floating_point() and not bool(
                torch.isfinite(value).all()):
            bad.append(name)
    for pid, state in learner.optimizer.state_dict()["state"].items():
        for key, value in state.items():
            if torch.is_tensor(value) and value.is_floating_point() and not bool(
                    torch.isfinite(value).all()):
                bad.append(f"optimizer.state[{pid}].{key}")
    return bad


def lstsq_slope(xs: list, ys: list) -> float:
    if len(xs) < 2:
        return math.nan
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    den = sum((x - mx) ** 2 for x in xs)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den if den else math.nan


def _trend(rows: list, key: str) -> dict:
    """Slope of ``key`` per 100k samples and its first / last values and ratio."""
    first, last = rows[0], rows[-1]
    return {"slope_per_100k": lstsq_slope([r["end"] / 1e5 for r in rows], [r[key] for r in rows]),
            "first": first[key], "last": last[key], "last_over_first": last[key] / first[key],
            "first_window": [first["start"], first["end"]],
            "last_window": [last["start"], last["end"]]}


def summarize(rows: list, warmup_windows: int) -> dict:
    steady = rows[warmup_windows:]
    if len(steady) < 2:
        return {"windows_after_warmup": len(steady)}
    latency, rss = _trend(steady, "median_ms"), _trend(steady, "rss_mib")
    summary = {
        "windows_after_warmup": len(steady),
        "first_window": latency["first_window"], "last_window": latency["last_window"],
        "latency_slope_ms_per_100k": latency["slope_per_100k"],
        "rss_slope_mib_per_100k": rss["slope_per_100k"],
        "latency_last_over_first": latency["last_over_first"],
        "rss_last_over_first": rss["last_over_first"],
        "latency_first_ms": latency["first"], "latency_last_ms": latency["last"],
        "rss_first_mib": rss["first"], "rss_last_mib": rss["last"],
        "segments": sorted({r["segment"] for r in rows}),
    }
    with_cpu = [r for r in steady if "median_cpu_ms" in r]
    if len(with_cpu) >= 2:
        summary["cpu"] = _trend(with_cpu, "median_cpu_ms")
    last_segment = [r for r in steady if r["segment"] == steady[-1]["segment"]]
    if len(last_segment) >= 2:
        summary["last_segment_latency"] = _trend(last_segment, "median_ms")
    return summary


def finished(out: Path, samples: int) -> bool:
    """Whether the result ``out`` exists and covers all ``samples`` samples.

    Raises:
        UsageError: ``out`` is no JSON object (:func:`~machine.read_json_object`; ``main``
            refuses it before any run).
    """
    if not out.exists():
        return False
    final = read_json_object(out).get("final")
    return final is not None and final["position"] == samples


def stream_samples(model: str, args: argparse.Namespace) -> int:
    """The stream length of ``model``'s run: ``--samples``, else the model's default."""
    return args.samples if args.samples is not None else DEFAULT_SAMPLES[model]


def check_trend_windows(parser: argparse.ArgumentParser, models: Sequence[str],
                        args: argparse.Namespace) -> None:
    """Refuse a run whose windows after ``--warmup-windows`` are too few for a trend
    (fewer than two: the run would be left out of the table)."""
    for model in models:
        windows = math.ceil(stream_samples(model, args) / args.window)
        if windows - args.warmup_windows < 2:
            parser.error(f"--samples {stream_samples(model, args)} in windows of --window "
                         f"{args.window} leave {max(windows - args.warmup_windows, 0)} "
                         f"window(s) after --warmup-windows {args.warmup_windows}; a trend "
                         "needs 2")


#: The result files' names in ``--out-dir`` (:func:`run_files`).
RESULT_FILES = "stream_length_*.json"


def run_files(model: str, args: argparse.Namespace) -> tuple[Path, Path]:
    """``(checkpoint, result JSON)`` of ``model``'s run; their name holds the stream
    length, window, threads and seed, not the model's sizes (see :func:`run_config`)."""
    name = (f"stream_length_{model}_N{stream_samples(model, args)}_w{args.window}"
            f"_t{args.threads}_seed{args.seed}")
    return args.out_dir / f"{name}.ckpt", args.out_dir / f"{name}.json"


def run_config(model: str, args: argparse.Namespace) -> dict:
    """The configuration ``model``'s run records and resumes at."""
    return dict(model=model, samples=stream_samples(model, args), window=args.window,
                threads=args.threads, seed=args.seed, d=D, c=C, labeled_size=args.labeled_size,
                unlabeled_size=args.unlabeled_size, k=args.k, hidden=args.hidden,
                num_layers=args.num_layers, label_ratio=args.label_ratio)


def check_existing_runs(parser: argparse.ArgumentParser, models: Sequence[str],
                        args: argparse.Namespace) -> None:
    """Refuse (unless ``--force``) a run whose result exists with another configuration:
    it would be skipped, or resumed from a checkpoint of that other configuration."""
    for model in models:
        _, out = run_files(model, args)
        if args.force or not out.exists():
            continue
        recorded, asked = read_result(parser, out)["config"], run_config(model, args)
        differing = [f"{key} {recorded[key]}" for key in asked
                     if key in recorded and recorded[key] != asked[key]]
        if differing:
            parser.error(f"{out} exists, made with {', '.join(differing)}: pass that, "
                         "--force to start over, or another --out-dir")


def run(model: str, args: argparse.Namespace) -> dict:
    torch.set_num_threads(args.threads)
    samples = stream_samples(model, args)
    ckpt, out = run_files(model, args)
    config = run_config(model, args)
    if args.force:
        for path in (ckpt, out):
            path.unlink(missing_ok=True)
    elif finished(out, samples):
        print(f"[{model}] skip {out.name}: finished ({samples} samples); --force reruns it",
              flush=True)
        return read_json_object(out)
    learner = build_learner(model, args)
    rows, position = [], 0
    if ckpt.exists():
        state = load_checkpoint(ckpt, learner, expect={"config": config})
        rows, position = list(state.extra["rows"]), state.position
        print(f"[{model}] resumed from {ckpt.name} at position {position}", flush=True)
    segment = 1 + max((r["segment"] for r in rows), default=-1)

    def write(final: dict | None = None) -> None:
        payload = dict(config=config, rows=rows, summary=summarize(rows, args.warmup_windows),
                       cpu=cpu_model(), nproc=os.cpu_count(), torch=torch.__version__,
                       python=platform.python_version(), command=" ".join(sys.argv),
                       timestamp=time.strftime("%Y-%m-%dT%H:%M:%S"))
        if final is not None:
            payload["final"] = final
        atomic_write_text(out, json.dumps(payload, indent=1))

    stream = SyntheticStream(samples, D, C, seed=args.seed)
    times, cpu_times, correct, labeled = [], [], 0, 0
    window_start, started = position, time.perf_counter()
    t = 0
    for block, (xb, yb) in enumerate(stream.iter_chunks()):
        n = len(yb)
        if t + n <= position:  # already done before the resume
            t += n
            continue
        mask = label_mask(block, n, args.seed, args.label_ratio)
        x_all = torch.from_numpy(xb)
        for i in range(max(0, position - t), n):
            x, y = x_all[i], int(yb[i])
            label = y if mask[i] else -1
            start, cpu_start = time.perf_counter(), time.process_time()
            pred = learner.predict(x)
            learner.learn(x, label)
            times.append((time.perf_counter() - start) * 1e3)
            cpu_times.append((time.process_time() - cpu_start) * 1e3)
            correct += int(pred[0]) == y
            labeled += label >= 0
            pos = t + i + 1
            if len(times) == args.window or pos == samples:
                ordered = sorted(times)
                row = dict(start=window_start, end=pos, segment=segment,
                           median_ms=statistics.median(times),
                           p95_ms=ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))],
                           mean_ms=statistics.fmean(times),
                           median_cpu_ms=statistics.median(cpu_times), rss_mib=rss_mib(),
                           accuracy=correct / len(times), labeled=labeled,
                           memory_items=learner.num_items,
                           wall_s=time.perf_counter() - started)
                rows.append(row)
                save_checkpoint(ckpt, learner, position=pos, extra={"config": config,
                                                                    "rows": rows})
                write()
                print(f"[{model}] {window_start:>8d}-{pos:<8d} median {row['median_ms']:7.2f} ms"
                      f"  p95 {row['p95_ms']:7.2f} ms  CPU {row['median_cpu_ms']:7.2f} ms  RSS {row['rss_mib']:7.1f} MiB  acc "
                      f"{row['accuracy']:.3f}  items {row['memory_items']}", flush=True)
                times, cpu_times, correct, labeled, window_start = [], [], 0, 0, pos
                started = time.perf_counter()
        t += n
    bad = non_finite_entries(learner)
    final = dict(position=samples, non_finite=bad, all_finite=not bad)
    write(final)
    return read_json_object(out)


def table(results: list) -> str:
    lines = ["| model | samples | window | threads | windows | latency first -> last (ms) | "
             "latency slope (ms/100k) | last/first | RSS first -> last (MiB) | "
             "RSS slope (MiB/100k) | last/first | CPU ms first -> last (slope/100k) | "
             "latency last/first, last segment | NaN/inf at end |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        s, cfg = r["summary"], r["config"]
        final = r.get("final")
        nan = "n/a (unfinished)" if final is None else ("none" if final["all_finite"]
                                                        else ", ".join(final["non_finite"]))
        start = (f"| {cfg['model']} | {cfg['samples']} | {cfg['window']} | {cfg['threads']} | "
                 f"{s['windows_after_warmup']} |")
        if "latency_slope_ms_per_100k" not in s:  # shown, not left out: why it has no trend
            lines.append(f"{start} too few windows after the warm-up for a trend |"
                         f"{' - |' * 7} {nan} |")
            continue
        lines.append(
            f"{start} {s['latency_first_ms']:.2f} -> "
            f"{s['latency_last_ms']:.2f} | {s['latency_slope_ms_per_100k']:+.3f} | "
            f"{s['latency_last_over_first']:.3f} | {s['rss_first_mib']:.1f} -> "
            f"{s['rss_last_mib']:.1f} | {s['rss_slope_mib_per_100k']:+.2f} | "
            f"{s['rss_last_over_first']:.3f} | {_trend_cell(s.get('cpu'))} | "
            f"{_ratio_cell(s.get('last_segment_latency'))} | {nan} |")
    return "\n".join(lines)


def _trend_cell(trend: dict | None) -> str:
    if trend is None:
        return "-"
    return (f"{trend['first']:.2f} -> {trend['last']:.2f} "
            f"({trend['slope_per_100k']:+.3f}, last/first {trend['last_over_first']:.3f})")


def _ratio_cell(trend: dict | None) -> str:
    if trend is None:
        return "-"
    return (f"{trend['last_over_first']:.3f} ({trend['first_window'][0]}-"
            f"{trend['last_window'][1]})")


def window_table(result: dict) -> str:
    lines = ["| window | median ms | p95 ms | CPU ms | RSS MiB | accuracy | segment |",
             "|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        cpu = f"{r['median_cpu_ms']:.2f}" if "median_cpu_ms" in r else "-"
        lines.append(f"| {r['start']}-{r['end']} | {r['median_ms']:.2f} | {r['p95_ms']:.2f} | "
                     f"{cpu} | {r['rss_mib']:.1f} | {r['accuracy']:.3f} | {r['segment']} |")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="light", choices=("light", "full", "both"),
                        help="SLeDGe-L, full SLeDGe or both (default: light)")
    parser.add_argument("--samples", type=positive_int, default=None,
                        help="stream length (default 1,000,000 light / 200,000 full)")
    parser.add_argument("--window", type=positive_int, default=10_000,
                        help="samples per measured window (default: 10000)")
    parser.add_argument("--warmup-windows", type=int_at_least(0), default=1,
                        help="windows left out of the slopes and ratios (memory filling)")
    parser.add_argument("--threads", type=thread_count, default=1,
                        help=f"torch threads, at most {MAX_THREADS} (default: 1)")
    parser.add_argument("--seed", type=seed_value, default=0,
                        help="stream and model seed (default: 0)")
    parser.add_argument("--label-ratio", type=label_ratio, default=0.01,
                        help="label ratio in (0, 1] (default: 0.01)")
    parser.add_argument("--labeled-size", type=int_at_least(C), default=100,
                        help=f"labeled slots, at least one per class of the stream's {C}")
    parser.add_argument("--unlabeled-size", type=int_at_least(0), default=900,
                        help="unlabeled slots (default: 900)")
    parser.add_argument("--k", type=int_at_least(0), default=5,
                        help="neighbours per node besides itself (0: none; the GCN acts as "
                             "an MLP; default: 5)")
    parser.add_argument("--hidden", type=int_at_least(1), default=256,
                        help="hidden width (default: 256)")
    parser.add_argument("--num-layers", type=int_at_least(1), default=2,
                        help="GCN layers (default: 2)")
    parser.add_argument("--out-dir", type=Path, default=HERE / "results" / "stream_length",
                        help="folder of the JSONs and checkpoints (default: "
                             "benchmarks/results/stream_length)")
    parser.add_argument("--markdown", type=Path, default=None,
                        help="table file (default: OUT_DIR/stream_length.md)")
    parser.add_argument("--force", action="store_true",
                        help="start over (drop the checkpoint and the result, also a "
                             "finished one, which is skipped otherwise)")
    parser.add_argument("--report-only", action="store_true",
                        help="only print the tables of existing results")
    args = parser.parse_args(argv)
    with usage_errors(parser):
        args.markdown = args.markdown or args.out_dir / "stream_length.md"
        check_outputs(parser, {"--out-dir": args.out_dir}, files={"--markdown": args.markdown})
        models = ("light", "full") if args.model == "both" else (args.model,)
        if not args.report_only:
            check_trend_windows(parser, models, args)
            # a result it would skip, or the report read (not rewritten), refused before any run
            read_results(parser, args.out_dir, RESULT_FILES,
                         {run_files(model, args)[1] for model in models} if args.force else set())
            check_existing_runs(parser, models, args)
        args.out_dir.mkdir(parents=True, exist_ok=True)

        if not args.report_only:
            print(f"cpu: {cpu_model()}, nproc={os.cpu_count()}, torch {torch.__version__}, "
                  f"threads={args.threads}", flush=True)
            for model in models:
                run(model, args)

        results = read_results(parser, args.out_dir, RESULT_FILES)
        if not results:
            print("no results")
            return
        for result in results:  # summaries by the current rules, also for older files
            result["summary"] = summarize(result["rows"], args.warmup_windows)
        text = table(results)
        print(text)
        md = [f"### stream_length (CPU: {results[0]['cpu']}, nproc={results[0]['nproc']}, "
              f"torch {results[0]['torch']})", "",
              "Slopes: least squares of the window median latency / RSS against the stream "
              "position, windows after the first (warm-up) one; last/first: last window over the "
              "first window after warm-up.", "", text]
        for r in results:
            cfg = r["config"]
            md += ["", f"#### {cfg['model']}, {cfg['samples']} samples, window {cfg['window']}, "
                       f"{cfg['threads']} thread(s)", "", f"`{r['command']}`", "", window_table(r)]
        atomic_write_text(args.markdown, "\n".join(md) + "\n")
        print(f"markdown: {args.markdown}")


if __name__ == "__main__":
    main()
