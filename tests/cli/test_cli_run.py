"""End-to-end runs of ``python -m torch_geometric_stream run``."""
from __future__ import annotations

import contextlib
import functools
import gzip
import json
import math
import multiprocessing
import os
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
import torch
import torch_geometric

from torch_geometric_stream.cli import main
from torch_geometric_stream.cli import report as report_module
from torch_geometric_stream.cli import run as run_module
from torch_geometric_stream.cli import seed_workers
from torch_geometric_stream.cli.arguments import check_device, parse_seeds
from torch_geometric_stream.cli.configs import DEFAULT_CONFIG
from torch_geometric_stream.cli.errors import UsageError
from torch_geometric_stream.cli.main import build_parser
from torch_geometric_stream.datasets import DATASETS

#: Small memories and width so that a few hundred samples take seconds.
FAST = ["--labeled-size", "10", "--unlabeled-size", "50", "--hidden-channels", "32", "--quiet"]

DATASET_NAMES = set(DATASETS)

#: Fields every run record must hold.
RECORD_FIELDS = {"dataset", "model", "label_ratio", "seed", "n_samples", "n_labels", "accuracy",
                 "accuracy_last_20", "accuracy_last_10", "accuracy_last_5", "seconds",
                 "ms_per_sample_median", "ms_per_sample_p95", "peak_memory_mb", "threads",
                 "flush_denormal",
                 "device", "torch_version", "numpy_version", "torch_geometric_version",
                 "package_version", "git_commit", "git_dirty", "machine", "config",
                 "balanced_accuracy", "kappa", "kappa_m", "kappa_t", "confusion_matrix",
                 "recall_per_class", "finished_at"}


def _read(path: Path) -> dict:
    record = json.loads(path.read_text())
    assert RECORD_FIELDS <= set(record)
    assert datetime.fromisoformat(record["finished_at"]).utcoffset() == timedelta(0)
    assert 0.0 <= record["accuracy"] <= 1.0
    confusion = record["confusion_matrix"]
    assert sum(map(sum, confusion)) == record["n_samples"]
    assert sum(confusion[c][c] for c in range(len(confusion))) == \
        round(record["accuracy"] * record["n_samples"])
    return record


def test_a_run_draws_a_bar_on_a_terminal_only(tmp_path, monkeypatch, capsys):
    # the rule is prequential's own (progress_interval): stderr a file or a pipe gets a
    # line a minute, none in a run this short, and no bar redraws
    argv = ["run", "--limit", "30", *(option for option in FAST if option != "--quiet")]
    assert main([*argv, "--output", str(tmp_path / "log.json")]) == 0
    assert "\r" not in capsys.readouterr().err
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert main([*argv, "--output", str(tmp_path / "terminal.json")]) == 0
    assert "\rseed 0:" in capsys.readouterr().err


def test_bundled_default_writes_json_and_csv(tmp_path, capsys):
    out, csv = tmp_path / "run.json", tmp_path / "run.csv"
    assert main(["run", "--limit", "150", *FAST, "--output", str(out), "--csv", str(csv)]) == 0
    record = _read(out)
    assert (record["dataset"], record["dataset_source"], record["model"]) == \
        ("Shopper", "bundled", "sledge-light")
    assert record["n_samples"] == 150 and record["threads"] == 1 and record["flush_denormal"]
    # --device auto: the GPU only where there is one
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert (record["device"], record["cuda_graph"]) == (expected, expected == "cuda")
    config = record["config"]
    # Shopper 1 %: gcn_layer 1 -> 1 layer, k 5, scorer_layer 3; light with the full labeled
    # memory (the default light_memory)
    assert (config["num_layers"], config["k"], config["embedding_layers"]) == (1, 5, 3)
    assert (config["labeled_size"], config["unlabeled_size"], config["hidden_channels"]) == \
        (10, 50, 32) and config["light_memory"] == "full"
    # Shopper's measured setting: the running quantile range inside the learner
    assert config["scaling"] == "robust-rescale" and config["tau"] is None
    assert len(csv.read_text().splitlines()) == 151
    # the running-accuracy curve: 150 points (fewer samples than CURVE_POINTS), ends at the total
    curve = record["curve"]
    assert curve["position"] == list(range(1, 151))
    assert curve["running_accuracy"][-1] == pytest.approx(record["accuracy"])
    assert "sledge-light on Shopper" in capsys.readouterr().out


def test_auto_device_puts_only_gpu_capable_learners_on_a_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert check_device("auto") == check_device("auto", gpu_capable=False) == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert check_device("auto") == "cuda"
    assert check_device("auto", gpu_capable=False) == "cpu"  # the baselines


@pytest.mark.parametrize("flag, graph", [(None, True), (True, True), (False, False)])
def test_a_sledge_run_on_a_gpu_steps_through_cuda_graphs_unless_no_cuda_graph(
        monkeypatch, flag, graph):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    parsed = build_parser().parse_args(["run", *{True: ["--cuda-graph"], False: [
        "--no-cuda-graph"]}.get(flag, [])])
    assert parsed.cuda_graph is flag
    assert run_module.run_device(parsed, "sledge") == ("cuda", graph)


def test_baseline_with_auto_device_and_no_cuda_graph_runs_on_the_cpu(tmp_path):
    out = tmp_path / "run.json"
    argv = ["run", "--limit", "40", "--quiet", "--model", "ressl", "--no-cuda-graph",
            "--output", str(out)]
    assert main(argv) == 0
    record = _read(out)
    assert (record["device"], record["cuda_graph"]) == ("cpu", False)


def test_no_flush_denormal_reaches_the_evaluation_and_the_record(tmp_path, monkeypatch):
    asked, evaluate = [], run_module.prequential
    monkeypatch.setattr(run_module, "prequential", lambda *args, **kwargs: asked.append(
        kwargs["flush_denormal"]) or evaluate(*args, **kwargs))
    out = tmp_path / "run.json"
    assert main(["run", "--limit", "40", "--quiet", "--model", "ressl", "--no-flush-denormal",
                 "--output", str(out)]) == 0
    assert asked == [False] and _read(out)["flush_denormal"] is False


@pytest.mark.parametrize("scaling, scaler", [("online-rescale", "RunningMinMax"),
                                             ("robust-rescale", "RunningQuantileRange")])
def test_learner_scalings_scale_inside_the_learner(tmp_path, monkeypatch, scaling, scaler):
    built, build = [], run_module.build_learner
    monkeypatch.setattr(run_module, "build_learner",
                        lambda *args, **kwargs: built.append(build(*args, **kwargs)) or built[-1])
    out = tmp_path / "run.json"
    argv = ["run", "--limit", "60", *FAST, "--model", "memory", "--scaling", scaling,
            "--output", str(out)]
    assert main(argv) == 0
    record = _read(out)
    assert record["config"]["scaling"] == scaling and record["n_samples"] == 60
    assert type(built[0].input_scaler).__name__ == scaler


def test_robust_scaling_options_reach_the_scaler_and_the_record(tmp_path, monkeypatch):
    built, build = [], run_module.build_learner
    monkeypatch.setattr(run_module, "build_learner",
                        lambda *args, **kwargs: built.append(build(*args, **kwargs)) or built[-1])
    out = tmp_path / "run.json"
    argv = ["run", "--limit", "60", *FAST, "--model", "memory", "--scaling", "robust-rescale",
            "--robust-quantile", "0.2", "--robust-tolerance", "0", "--robust-reservoir", "30",
            "--robust-window", "45", "--no-robust-clip", "--seed", "7", "--output", str(out)]
    assert main(argv) == 0
    scaler = built[0].input_scaler
    assert (scaler.quantile, scaler.tolerance, scaler.reservoir_size, scaler.window,
            scaler.clip, scaler.seed) == (0.2, 0.0, 30, 45, False, 7)
    config = _read(out)["config"]
    assert (config["robust_quantile"], config["robust_tolerance"], config["robust_reservoir"],
            config["robust_window"], config["robust_clip"]) == (0.2, 0.0, 30, 45, False)


def test_robust_window_none_unsets_the_window_of_a_config_file(tmp_path, monkeypatch):
    built, build = [], run_module.build_learner
    monkeypatch.setattr(run_module, "build_learner",
                        lambda *args, **kwargs: built.append(build(*args, **kwargs)) or built[-1])
    config_file, out = tmp_path / "window.json", tmp_path / "run.json"
    config_file.write_text(json.dumps({"scaling": "robust-rescale", "robust_reservoir": 30,
                                       "robust_window": 45}))
    assert main(["run", "--limit", "60", *FAST, "--model", "memory", "--config",
                 str(config_file), "--robust-window", "None", "--output", str(out)]) == 0
    assert (built[0].input_scaler.reservoir_size, built[0].input_scaler.window) == (30, None)
    config = _read(out)["config"]
    assert (config["robust_reservoir"], config["robust_window"]) == (30, None)


@pytest.mark.parametrize("scaling, scaler", [("online-rescale", "RunningMinMax"),
                                             ("robust-rescale", "RunningQuantileRange")])
def test_feature_range_reaches_the_learners_scaler_and_the_record(tmp_path, monkeypatch,
                                                                  scaling, scaler):
    built, build = [], run_module.build_learner
    monkeypatch.setattr(run_module, "build_learner",
                        lambda *args, **kwargs: built.append(build(*args, **kwargs)) or built[-1])
    out = tmp_path / "run.json"
    argv = ["run", "--limit", "60", *FAST, "--model", "memory", "--scaling", scaling,
            "--feature-range", "0", "1", "--output", str(out)]
    assert main(argv) == 0
    assert type(built[0].input_scaler).__name__ == scaler
    assert built[0].input_scaler.feature_range == (0.0, 1.0)
    # every stored row was scaled into [0, 1]: no coordinate of the memory is negative
    filled = built[0].memory.prototypes[built[0].memory.node_mask]
    assert filled.numel() > 0 and bool((filled >= 0).all())
    assert _read(out)["config"]["feature_range"] == [0.0, 1.0]


@pytest.mark.parametrize("low, value", [("-1", -1.0), ("-.5", -0.5), ("-1e-3", -0.001),
                                        ("-2.5E+2", -250.0), ("-3.e1", -30.0),
                                        ("-inf", -math.inf), ("-Infinity", -math.inf)])
def test_a_negative_number_in_any_notation_is_an_options_value(low, value):
    # argparse before Python 3.14 read "-1e-3" (and "-inf") as an unknown option, so
    # "--feature-range -1e-3 1" failed with "expected 2 arguments"
    args = build_parser().parse_args(["run", "--feature-range", low, "1"])
    assert args.feature_range == [value, 1.0]


def test_a_negative_nan_is_an_options_value():
    assert math.isnan(build_parser().parse_args(["run", "--sigma", "-NaN"]).sigma)


def test_a_word_that_only_starts_like_a_number_is_still_an_option(capsys):
    assert main(["run", "--limit", "20", "--feature-range", "-1e", "1"]) == 2
    assert "--feature-range: expected 2 arguments" in capsys.readouterr().err


@pytest.mark.parametrize("scaling", ["online", "robust", "global"])
def test_feature_range_reaches_a_baselines_stream_transform(tmp_path, monkeypatch, scaling):
    built, build = [], run_module.build_transform
    monkeypatch.setattr(run_module, "build_transform",
                        lambda *args, **kwargs: built.append(build(*args, **kwargs)) or built[-1])
    out = tmp_path / "run.json"
    argv = ["run", "--limit", "60", "--quiet", "--model", "tlp", "--scaling", scaling,
            "--feature-range", "-2", "0.5", "--output", str(out)]
    assert main(argv) == 0
    assert "feature_range=(-2.0, 0.5)" in repr(built[0])
    assert _read(out)["config"]["feature_range"] == [-2.0, 0.5]


def test_robust_scaling_of_a_baseline_is_the_stream_transform(tmp_path, monkeypatch):
    built, build = [], run_module.build_transform
    monkeypatch.setattr(run_module, "build_transform",
                        lambda *args, **kwargs: built.append(build(*args, **kwargs)) or built[-1])
    out = tmp_path / "run.json"
    argv = ["run", "--limit", "60", "--quiet", "--model", "ressl", "--scaling", "robust",
            "--robust-quantile", "0.1", "--no-robust-clip", "--robust-window", "1500",
            "--seed", "3", "--output", str(out)]
    assert main(argv) == 0
    assert repr(built[0]).startswith("Compose([OnlineQuantileRangeScaler(quantile=0.1, "
                                     "tolerance=0.05, reservoir_size=1000, seed=3")
    assert "clip=False, window=1500" in repr(built[0])
    record = _read(out)
    assert record["config"]["scaling"] == "robust" and record["n_samples"] == 60
    assert record["config"]["robust_quantile"] == 0.1 and not record["config"]["robust_clip"]


def test_a_limited_synthetic_run_records_the_length_of_the_stream_it_cut(tmp_path):
    """--limit cuts the default 5000-sample stream: the record names that length, not
    the limit's, so compare keeps it apart from a 60-sample stream cut at 60 (the two
    are other streams: the drift sits at another position)."""
    records = []
    for name, lengths in (("cut", []), ("short", ["--synthetic-samples", "60"])):
        out = tmp_path / f"{name}.json"
        assert main(["run", "--dataset", "synthetic-sudden", *lengths, "--limit", "60",
                     "--model", "base", "--quiet", "--output", str(out)]) == 0
        records.append(_read(out))
    assert [(r["synthetic_samples"], r["limit"], r["n_samples"]) for r in records] == [
        (5000, 60, 60), (60, 60, 60)]


def test_synthetic_two_seeds_write_two_files_and_a_plot(tmp_path, capsys):
    out, plot = tmp_path / "syn.json", tmp_path / "syn.png"
    argv = ["run", "--dataset", "synthetic", "--synthetic-samples", "120", "--model", "sledge",
            "--seed", "0,1", *FAST, "--k", "3", "--output", str(out), "--plot", str(plot)]
    assert main(argv) == 0
    records = [_read(tmp_path / f"syn_seed{seed}.json") for seed in (0, 1)]
    assert [r["seed"] for r in records] == [0, 1]
    assert all(r["dataset_source"] == "synthetic" and r["n_samples"] == 120 for r in records)
    assert all(r["synthetic_samples"] == 120 for r in records)  # compare tells lengths apart
    assert records[0]["config"]["k"] == 3
    assert not out.exists() and plot.stat().st_size > 0
    table = capsys.readouterr().out
    assert "mean" in table and "std" in table


#: Record entries that vary from run to run (timings, the clock) or name the jobs.
UNREPEATABLE = {"seconds", "ms_per_sample_median", "ms_per_sample_p95", "peak_memory_mb",
                "finished_at", "jobs"}


def test_seeds_run_in_worker_processes_give_one_jobs_results(tmp_path, capsys):
    argv = ["run", "--dataset", "synthetic", "--synthetic-samples", "150", "--model", "sledge",
            "--seed", "0,1,2", *FAST, "--k", "3"]
    outputs = {}
    for jobs in (1, 2):
        out, csv = tmp_path / f"jobs{jobs}.json", tmp_path / f"jobs{jobs}.csv"
        assert main([*argv, "--jobs", str(jobs), "--output", str(out), "--csv", str(csv)]) == 0
        outputs[jobs] = [(_read(tmp_path / f"jobs{jobs}_seed{seed}.json"),
                          (tmp_path / f"jobs{jobs}_seed{seed}.csv").read_text())
                         for seed in (0, 1, 2)]
        assert "mean" in capsys.readouterr().out
    for (one, one_csv), (two, two_csv) in zip(outputs[1], outputs[2]):
        assert (one["jobs"], two["jobs"]) == (1, 2)
        assert {k: v for k, v in one.items() if k not in UNREPEATABLE} == \
            {k: v for k, v in two.items() if k not in UNREPEATABLE}
        assert one_csv == two_csv  # every prediction
    assert [record["seed"] for record, _ in outputs[2]] == [0, 1, 2]


def _shared_synthetic_stream(samples):
    args = build_parser().parse_args(["run", "--dataset", "synthetic", "--synthetic-samples",
                                      str(samples)])
    return seed_workers.SharedStream(run_module.load_stream(args))


def _in_workers(args, shared, seeds):
    """The outcomes of ``run --jobs``'s workers running ``seeds`` on ``shared``."""
    return list(seed_workers.run_in_workers(
        args, shared, seeds, functools.partial(run_module._run_seed_in_worker,
                                               data_sha256=None)))


def test_an_error_in_a_worker_is_raised_in_the_main_process(tmp_path):
    # the main process checked the run before starting the workers; here the
    # workers meet a --config file gone since
    args = build_parser().parse_args(["run", "--dataset", "synthetic", "--model", "memory",
                                      "--config", str(tmp_path / "gone.json"), "--jobs", "2",
                                      "--quiet"])
    with pytest.raises(UsageError, match="--config: file .*gone.json does not exist"):
        _in_workers(args, _shared_synthetic_stream(30), [0, 1])


def test_a_worker_that_dies_is_an_error_not_a_hang():
    # one worker: the pool notices a second one's death only when a seed ends (CPython's
    # ProcessPoolExecutor), which with two 50,000-sample seeds would take a minute
    args = build_parser().parse_args(["run", "--dataset", "synthetic", "--model", "memory",
                                      "--jobs", "1", "--quiet"])

    others = set(multiprocessing.active_children())

    def kill_a_worker():
        while not (workers := set(multiprocessing.active_children()) - others):
            time.sleep(0.05)
        os.kill(workers.pop().pid, signal.SIGKILL)  # as the out-of-memory killer would

    killer = threading.Thread(target=kill_a_worker, daemon=True)
    killer.start()
    with pytest.raises(UsageError, match="a worker process ended abruptly .*seed 0 did not "
                                         "finish"):
        _in_workers(args, _shared_synthetic_stream(50_000), [0, 1])
    killer.join()


#: Run in a worker as it unpickles the shared stream: the worker SIGKILLs itself
#: in the middle of receiving the arrays' file descriptors (while it shakes
#: hands with the main process to get one, or right after getting one).
_DIE_RECEIVING = textwrap.dedent("""
    import multiprocessing.connection, os, signal
    import torch.multiprocessing.reductions as reductions
    def die(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)
    def rebuild_storage_fd(cls, handle, size):
        handle.detach()
        die()
    multiprocessing.connection.answer_challenge = die
    reductions.rebuild_storage_fd = rebuild_storage_fd
""")


class _DieReceiving:
    def __reduce__(self):
        return exec, (_DIE_RECEIVING, {})


def test_a_worker_killed_receiving_the_shared_stream_is_only_the_one_line_error(capfd):
    args = build_parser().parse_args(["run", "--dataset", "synthetic", "--model", "memory",
                                      "--jobs", "2", "--quiet"])
    shared = _shared_synthetic_stream(30)
    shared.__dict__ = {"die": _DieReceiving(), **shared.__dict__}  # unpickled before the arrays
    capfd.readouterr()
    with pytest.raises(UsageError, match="a worker process ended abruptly .*seed 0 did not "
                                         "finish"):
        _in_workers(args, shared, [0, 1])
    # the main process hands file descriptors out one connection at a time: once it
    # has served this one, it has reported on the killed worker's, if it ever will
    from multiprocessing import resource_sharer
    with open(os.devnull) as devnull:
        os.close(resource_sharer.DupFd(devnull.fileno()).detach())
    assert capfd.readouterr() == ("", "")


class _SignalledStarting:
    """Unpickled in a worker before its start (:func:`seed_workers._start_worker`): the
    worker gets Ctrl-C and SIGTERM as it starts, as from a terminal or a batch
    scheduler that signals every process of the job while the workers import torch."""

    def __reduce__(self):
        return exec, ("import os, signal\n"
                      "for signum in (signal.SIGINT, signal.SIGTERM):\n"
                      "    os.kill(os.getpid(), signum)", {})


@pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="POSIX signal masks")
def test_a_worker_signalled_as_it_starts_runs_its_seed():
    """The signals held until the worker ignores them (their main process, which
    gets them too, stops the workers by their event): no "ended abruptly"."""
    args = build_parser().parse_args(["run", "--dataset", "synthetic", "--model", "memory",
                                      "--history", "full", "--jobs", "2", "--quiet"])
    shared = _shared_synthetic_stream(30)
    shared.__dict__ = {"signals": _SignalledStarting(), **shared.__dict__}
    before = signal.pthread_sigmask(signal.SIG_BLOCK, set())
    outcomes = _in_workers(args, shared, [0, 1])
    assert [(seed, record["n_samples"]) for seed, _, record in outcomes] == [(0, 30), (1, 30)]
    assert signal.pthread_sigmask(signal.SIG_BLOCK, set()) == before  # nothing left held


def test_a_pool_that_breaks_while_seeds_are_submitted_is_the_one_line_error(monkeypatch):
    # a worker killed as it starts: the pool may refuse the next seed already
    class BreakingPool:
        def __init__(self):
            self.submitted = 0

        def submit(self, *args):
            if self.submitted:
                raise BrokenProcessPool("A child process terminated abruptly")
            self.submitted += 1

    monkeypatch.setattr(seed_workers, "_worker_pool",
                        lambda jobs, shared, stop: contextlib.nullcontext(BreakingPool()))
    args = build_parser().parse_args(["run", "--dataset", "synthetic", "--jobs", "2"])
    with pytest.raises(UsageError, match="a worker process ended abruptly .*seed 3 did not "
                                         "finish"):
        _in_workers(args, None, [3, 4])


def _ignores(pid: int, signum: int) -> bool:
    """Whether process ``pid`` ignores signal ``signum`` (Linux: its ``SigIgn`` mask)."""
    status = Path(f"/proc/{pid}/status").read_text()
    mask = int(re.search(r"^SigIgn:\s*([0-9a-f]+)$", status, re.M).group(1), 16)
    return bool(mask >> (signum - 1) & 1)


def _exit_codes(workers, timeout: float = 10.0) -> list:
    """The exit codes of the ``workers`` processes once all ended, ``None`` for those
    still running after ``timeout`` seconds. Polled, not joined: the pool's thread
    reaps them too, and of two threads waiting for a process one may find it gone."""
    deadline = time.monotonic() + timeout
    while any(worker.exitcode is None for worker in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [worker.exitcode for worker in workers]


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
def test_a_worker_that_dies_ends_the_others_which_ignore_sigterm():
    """The pool, broken, sends SIGTERM to the other workers, which ignore it (a
    batch scheduler's reaches them too; their main process stops them): the
    main process kills them (before, on Python >= 3.12: it waited for them
    forever, behind the lock that the broken pool held while joining them)."""
    args = build_parser().parse_args(["run", "--dataset", "synthetic", "--model", "memory",
                                      "--history", "full", "--jobs", "2", "--quiet"])
    others = set(multiprocessing.active_children())
    workers = []
    returned, hung = threading.Event(), threading.Event()

    def kill_a_worker_once_both_started():
        while len(workers) < 2:
            workers[:] = sorted(set(multiprocessing.active_children()) - others,
                                key=lambda worker: worker.pid)
            time.sleep(0.05)
        while not all(_ignores(worker.pid, signal.SIGINT) for worker in workers):
            time.sleep(0.05)  # not started yet: SIGTERM would kill it, whatever it ignores
        # the first started, whose death the pool sees at once (CPython's may miss
        # that of one started after it began to wait until a seed ends)
        os.kill(workers[0].pid, signal.SIGKILL)
        if not returned.wait(60):  # a hang: ended here, a failure below
            hung.set()
            workers[1].kill()

    killer = threading.Thread(target=kill_a_worker_once_both_started, daemon=True)
    killer.start()
    try:
        with pytest.raises(UsageError, match="a worker process ended abruptly"):
            _in_workers(args, _shared_synthetic_stream(50_000), [0, 1])
        returned.set()
        killer.join()
        assert not hung.is_set()
        assert _exit_codes(workers) == [-signal.SIGKILL] * 2
    finally:
        returned.set()
        for worker in workers:
            worker.kill()


class _StuckWorkers:
    """``_worker_pool``'s place: a pool whose first ``jobs`` seeds are in progress
    in workers that never return (the futures running), the others waiting; it
    notes its ``stop`` event and the error that left it."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.futures: list[Future] = []
        self.stop = None
        self.left_by = None

    @contextlib.contextmanager
    def __call__(self, jobs, shared, stop):
        self.stop = stop
        try:
            yield self
        except BaseException as error:
            self.left_by = type(error)
            raise

    def submit(self, *arguments):
        self.futures.append(Future())
        if len(self.futures) <= self.jobs:
            self.futures[-1].set_running_or_notify_cancel()
        return self.futures[-1]


def _stuck_workers(monkeypatch, waiting):
    """Two :class:`_StuckWorkers` of three seeds; ``run --jobs`` waits for them
    with ``waiting(futures, timeout)``. Returns the pool."""
    pool = _StuckWorkers(2)
    monkeypatch.setattr(seed_workers, "_worker_pool", pool)
    monkeypatch.setattr(seed_workers, "wait", waiting)
    return pool


def _stuck_and_stopped(pool):
    """The two seeds in progress asked to stop, neither cancelled, the third
    cancelled, and the pool left by ``KeyboardInterrupt``, which ends its workers."""
    return (pool.stop.is_set() and [future.cancelled() for future in pool.futures]
            == [False, False, True] and pool.left_by is KeyboardInterrupt)


def test_a_second_ctrl_c_ends_the_workers_at_once(monkeypatch, ctrl_c_raises):
    waits = []

    def ctrl_c_each_wait(futures, timeout):
        waits.append(timeout)
        signal.raise_signal(signal.SIGINT)  # the second raises KeyboardInterrupt here

    pool = _stuck_workers(monkeypatch, ctrl_c_each_wait)
    args = build_parser().parse_args(["run", "--dataset", "synthetic", "--jobs", "2"])
    with pytest.raises(KeyboardInterrupt) as raised:
        _in_workers(args, None, [0, 1, 2])
    assert raised.type is KeyboardInterrupt and len(waits) == 2  # not the grace period's
    assert _stuck_and_stopped(pool)


def test_workers_not_stopped_within_the_grace_period_are_ended(monkeypatch, ctrl_c_raises):
    grace, waits = 0.3, []
    real_wait = seed_workers.wait

    def ctrl_c_once(futures, timeout):
        waits.append(time.monotonic())
        if len(waits) == 1:
            signal.raise_signal(signal.SIGINT)
        elif len(waits) > 100:
            pytest.fail("the grace period never ended")
        else:
            real_wait(futures, timeout)

    monkeypatch.setattr(seed_workers, "INTERRUPT_GRACE_SECONDS", grace)
    pool = _stuck_workers(monkeypatch, ctrl_c_once)
    args = build_parser().parse_args(["run", "--dataset", "synthetic", "--jobs", "2"])
    with pytest.raises(KeyboardInterrupt) as raised:
        _in_workers(args, None, [0, 1, 2])
    assert raised.type is KeyboardInterrupt
    assert time.monotonic() - waits[0] >= grace and len(waits) > 2  # waited, polling
    assert _stuck_and_stopped(pool)


def test_the_pool_kills_its_workers_which_ignore_ctrl_c_and_sigterm():
    """Ctrl-C and SIGTERM reach the main process only (which stops the workers by
    their event); left by an error, the pool kills the workers still running."""
    stop = multiprocessing.get_context("spawn").Event()
    worker = None
    try:
        with pytest.raises(RuntimeError, match="leaving the pool"):
            with seed_workers._worker_pool(1, _shared_synthetic_stream(30), stop) as pool:
                handlers = [pool.submit(signal.getsignal, signum).result()
                            for signum in (signal.SIGINT, signal.SIGTERM)]
                pool.submit(time.sleep, 60)
                (worker,) = pool._processes.values()
                assert handlers == [signal.SIG_IGN] * 2
                raise RuntimeError("leaving the pool")
        assert _exit_codes([worker]) == [-signal.SIGKILL]
    finally:
        if worker is not None:
            worker.kill()


#: A module the ``run --jobs`` workers import (pickled by name): their seeds run as
#: ``run`` runs them, each noting ``$MARKERS/seed<S>`` once it has done 5 samples,
#: its worker's pid in it (written whole: renamed into place).
_NOTING_WORKERS = """
import os
from pathlib import Path
from torch_geometric_stream.cli import run as run_module

run_seed = run_module._run_seed_in_worker

def run_seed_noting_progress(args, seed, **kwargs):
    evaluate = run_module.prequential

    def noting(*arguments, callback, **kwargs):
        def step(position, record):
            if callback is not None:
                callback(position, record)
            if position == 4:
                marker = Path(os.environ["MARKERS"]) / f"seed{seed}"
                marker.with_suffix(".new").write_text(str(os.getpid()))
                marker.with_suffix(".new").replace(marker)
        return evaluate(*arguments, callback=step, **kwargs)
    run_module.prequential = noting
    try:
        return run_seed(args, seed, **kwargs)
    finally:
        run_module.prequential = evaluate
"""
#: ``python -m torch_geometric_stream`` with its workers' seeds so noted.
_MAIN_NOTING_WORKERS = """
import sys
import noting_workers
from torch_geometric_stream.cli import main, run as run_module
run_module._run_seed_in_worker = noting_workers.run_seed_noting_progress
sys.exit(main(sys.argv[1:]))
"""


def _run_noting_workers(tmp_path: Path, process_group, outputs: Path) -> subprocess.Popen:
    """``run --jobs 2`` of seeds 0, 1 and 2 (SLeDGe: some 20 ms a sample), its
    workers noting their seeds in ``tmp_path/markers`` (:data:`_NOTING_WORKERS`),
    its files in the folder ``outputs``: a :class:`ProcessGroup` started."""
    markers = tmp_path / "markers"
    markers.mkdir(), outputs.mkdir()
    (tmp_path / "noting_workers.py").write_text(_NOTING_WORKERS)
    package_parent = str(Path(run_module.__file__).resolve().parents[2])
    env = dict(os.environ, OMP_NUM_THREADS="1", MARKERS=str(markers),
               PYTHONPATH=os.pathsep.join([str(tmp_path), package_parent]))
    return process_group(
        [sys.executable, "-c", _MAIN_NOTING_WORKERS, "run", "--dataset", "synthetic",
         "--model", "sledge", "--seed", "0,1,2", "--jobs", "2", "--quiet", "--output",
         str(outputs / "run.json"), "--csv", str(outputs / "run.csv")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)


def _worker_pids(command: subprocess.Popen, markers: Path) -> list[int]:
    """The pids of the workers of ``command`` (:func:`_run_noting_workers`) once
    both are 5 samples into their seeds, 0 and 1."""
    deadline = time.monotonic() + 120
    while not all((markers / f"seed{seed}").exists() for seed in (0, 1)):
        if command.poll() is not None or time.monotonic() > deadline:
            command.kill()  # its workers too
            pytest.fail(f"the workers did not start their seeds: {command.communicate()[1]}")
        time.sleep(0.01)
    return [int((markers / f"seed{seed}").read_text()) for seed in (0, 1)]


def _running(pid: int) -> bool:
    """Whether process ``pid`` runs (Linux's ``/proc``): neither gone nor a zombie
    that its new parent has not reaped yet."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"  # the state, after the name


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_stops_the_seeds_of_the_workers_at_their_sample_and_keeps_metrics(
        tmp_path, process_group, signum):
    """``run --jobs 2`` of three seeds, Ctrl-C at the terminal or a batch scheduler's
    SIGTERM (both reach every process of the job) once both workers are in a seed
    (SLeDGe: some 20 ms a sample): each stops at the end of its sample and its
    metrics so far go to its partial record and per-sample file; the third seed
    never starts."""
    outputs = tmp_path / "outputs"
    command = _run_noting_workers(tmp_path, process_group, outputs)
    _worker_pids(command, tmp_path / "markers")
    os.killpg(command.pid, signum)  # the workers ignore it: their main process stops them
    out, err = command.communicate(timeout=60)
    assert command.returncode == 130, err
    assert "ended abruptly" not in err, err
    partials = [outputs / f"run_seed{seed}.{kind}.partial" for seed in (0, 1)
                for kind in ("json", "csv")]
    assert sorted(outputs.iterdir()) == sorted(partials)  # nothing of seed 2, never started
    records = [_read(partial) for partial in partials[::2]]
    done = [record["interrupted_at"] for record in records]
    assert all(5 <= n == record["n_samples"] == len(_csv_rows(csv)) < 5000
               and record["curve"]["position"][-1] == n
               for n, record, csv in zip(done, records, partials[1::2]))
    assert [record["seed"] for record in records] == [0, 1]
    assert err.strip().splitlines()[-1] == (
        f"run interrupted after sample {done[0]} of seed 0 and sample {done[1]} of seed 1; "
        f"their metrics so far are in {', '.join(map(str, partials))}; --seed 0,1,2 runs "
        f"the rest")
    assert "Traceback" not in err, err
    heading, table = out.splitlines()[0], out.splitlines()[1:]
    assert heading.endswith(f"; interrupted after sample {done[0]} of seed 0 and sample "
                            f"{done[1]} of seed 1")
    assert [row.split()[:3] for row in table[1:3]] == [["0", "(interrupted)", str(done[0])],
                                                        ["1", "(interrupted)", str(done[1])]]
    assert len(table) == 3  # no mean nor std of the seeds cut off


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_the_workers_end_at_once_when_their_main_process_is_killed(tmp_path, process_group):
    """The main process of ``run --jobs 2`` killed while both workers are in their
    seeds (SIGKILL, the OOM killer: it stops no one): the workers end within
    seconds, rather than run their seeds (minutes) for no one and then wait
    forever for the next; nothing of their seeds is written."""
    outputs = tmp_path / "outputs"
    command = _run_noting_workers(tmp_path, process_group, outputs)
    workers = _worker_pids(command, tmp_path / "markers")
    os.kill(command.pid, signal.SIGKILL)  # the main process alone
    command.wait()
    deadline = time.monotonic() + 5
    while any(map(_running, workers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [_running(pid) for pid in workers] == [False, False]
    assert list(outputs.iterdir()) == []


@pytest.mark.parametrize("alpha, beta, coefficients", [("0.05", "adaptive", (0.05, "adaptive")),
                                                      ("0", "1", (0.0, 1.0))])  # [0, 1]'s ends
def test_fixed_memory_coefficients_reach_the_model(alpha, beta, coefficients, tmp_path,
                                                   monkeypatch):
    from torch_geometric_stream.cli import run as run_module

    built = []
    original = run_module.build_learner

    def spy(*args, **kwargs):
        built.append(original(*args, **kwargs))
        return built[-1]

    monkeypatch.setattr(run_module, "build_learner", spy)
    out = tmp_path / "fixed.json"
    argv = ["run", "--dataset", "synthetic", "--synthetic-samples", "60", "--model", "sledge",
            *FAST, "--alpha", alpha, "--beta", beta, "--output", str(out)]
    assert main(argv) == 0
    config = _read(out)["config"]
    assert (config["alpha"], config["beta"]) == coefficients
    assert (built[0].memory.alpha, built[0].memory.beta) == coefficients


def test_module_entry_point(tmp_path):
    out = tmp_path / "sub.json"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-m", "torch_geometric_stream", "run", "--limit",
                           "200", *FAST, "--output", str(out)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert _read(out)["n_samples"] == 200


@pytest.mark.parametrize("argv", [["datasets"], ["run", "--dataset", "synthetic", "--model",
                                                 "memory", "--limit", "30", "--quiet"]])
def test_a_reader_that_closes_stdout_ends_the_command_quietly(argv):
    """``... | head -1``: no BrokenPipeError traceback, whichever command."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    command = subprocess.Popen([sys.executable, "-m", "torch_geometric_stream", *argv],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    command.stdout.close()  # gone before the command writes its first line
    err = command.stderr.read().decode()
    assert command.wait(timeout=300) == 1
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


def test_a_reader_that_closes_stdout_leaves_no_descriptor_open(tmp_path, monkeypatch):
    # in process (main called from Python): stdout goes to os.devnull, whose own
    # descriptor is closed once duplicated onto stdout's
    cli_main = sys.modules["torch_geometric_stream.cli.main"]

    def broken_pipe(argv):
        raise BrokenPipeError

    monkeypatch.setattr(cli_main, "dispatch", broken_pipe)
    with open(tmp_path / "stdout", "w") as stdout:
        monkeypatch.setattr(sys, "stdout", stdout)
        before = sorted(os.listdir("/proc/self/fd"))
        assert main([]) == 1
        assert sorted(os.listdir("/proc/self/fd")) == before
        assert os.path.samefile(f"/proc/self/fd/{stdout.fileno()}", os.devnull)


def _interrupted_after(samples: int, monkeypatch) -> None:
    """Ctrl-C once the run has evaluated ``samples`` samples (and saved its checkpoint)."""
    evaluate = run_module.prequential

    def interrupted(*args, callback=None, **kwargs):
        def step(position, record):
            if callback is not None:
                callback(position, record)
            if position + 1 == samples:
                raise KeyboardInterrupt
        return evaluate(*args, callback=step, **kwargs)
    monkeypatch.setattr(run_module, "prequential", interrupted)


def _one_stderr_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err.strip()


def test_an_interrupted_run_says_where_its_checkpoint_is_and_resumes_from_it(
        tmp_path, capsys, monkeypatch, quick_run, interrupted_main):
    out, checkpoint = tmp_path / "run.json", tmp_path / "run.ckpt"
    argv = quick_run(out, "--limit", "60", "--checkpoint", str(checkpoint),
                     "--checkpoint-every", "20")
    _interrupted_after(50, monkeypatch)
    assert interrupted_main(argv) == 130
    assert _one_stderr_line(capsys) == (
        f"run interrupted; last checkpoint in {checkpoint}: rerun the same command with "
        f"--resume {checkpoint} to continue from it")
    assert not out.exists()
    monkeypatch.undo()
    assert main([*argv, "--resume", str(checkpoint)]) == 0
    record = _read(out)
    assert (record["resumed_from"], record["n_samples"]) == (40, 60)
    assert capsys.readouterr().err == ""  # --quiet
    out.unlink()
    argv.remove("--quiet")  # before: nothing said that the run went on from a checkpoint
    assert main([*argv, "--resume", str(checkpoint)]) == 0  # saved at its end now
    assert (f"seed 0: resumed from {checkpoint} after sample 60"
            in capsys.readouterr().err.splitlines())


def _run_checkpointed_and_interrupted_after_30(tmp_path, capsys, monkeypatch, quick_run,
                                                interrupted_main):
    """A 60-sample run saving every 20 samples, interrupted after sample 30 (its
    checkpoint at 20): its record's and checkpoint's paths and its arguments."""
    out, checkpoint = tmp_path / "run.json", tmp_path / "run.ckpt"
    argv = quick_run(out, "--limit", "60", "--checkpoint", str(checkpoint),
                     "--checkpoint-every", "20")
    _interrupted_after(30, monkeypatch)
    assert interrupted_main(argv) == 130
    capsys.readouterr()
    return out, checkpoint, argv


def test_a_resumed_run_interrupted_after_it_saved_points_at_its_checkpoint(
        tmp_path, capsys, monkeypatch, quick_run, interrupted_main):
    """A resumed run that saved its checkpoint since (to the file it resumed from)
    continues from that one: the line names it, as a run's not resumed does."""
    out, checkpoint, argv = _run_checkpointed_and_interrupted_after_30(
        tmp_path, capsys, monkeypatch, quick_run, interrupted_main)
    resume = [*argv, "--resume", str(checkpoint)]
    monkeypatch.undo()
    _interrupted_after(50, monkeypatch)  # after position 40, its next checkpoint
    assert interrupted_main(resume) == 130
    assert _one_stderr_line(capsys) == (
        f"run interrupted; last checkpoint in {checkpoint}: rerun the same command to "
        f"continue from it")
    monkeypatch.undo()
    assert main(resume) == 0 and _read(out)["resumed_from"] == 40


def test_a_run_without_checkpoint_every_saves_its_checkpoint_after_its_last_sample_only(
        tmp_path, capsys, monkeypatch, quick_run, interrupted_main):
    checkpoint = tmp_path / "run.ckpt"
    argv = quick_run(tmp_path / "run.json", "--checkpoint", str(checkpoint))
    _interrupted_after(29, monkeypatch)
    assert interrupted_main(argv) == 130
    assert _one_stderr_line(capsys) == (
        f"run interrupted before its first checkpoint (this run wrote none to {checkpoint}; "
        f"--checkpoint-every N saves every N samples)")
    assert not checkpoint.exists()
    monkeypatch.undo()
    assert main(argv) == 0
    assert torch.load(checkpoint, weights_only=False)["position"] == 30


@pytest.mark.parametrize("saving", [True, False])
def test_a_resumed_run_interrupted_before_it_saves_names_the_state_it_resumed_from(
        tmp_path, capsys, monkeypatch, quick_run, interrupted_main, saving):
    """It still holds a resumable state: the line says so, not 'nothing saved' or
    'wrote none', whether the run saves to that file (``saving``) or to none."""
    out, checkpoint, argv = _run_checkpointed_and_interrupted_after_30(
        tmp_path, capsys, monkeypatch, quick_run, interrupted_main)
    resume = [*(argv if saving else argv[:-4]), "--resume", str(checkpoint)]
    _interrupted_after(30, monkeypatch)  # before position 40, its next checkpoint
    assert interrupted_main(resume) == 130
    assert _one_stderr_line(capsys) == (
        f"run interrupted before it saved a checkpoint; {checkpoint} still holds the state it "
        f"resumed from: rerun the same command to continue from it")
    monkeypatch.undo()
    assert main(resume) == 0 and _read(out)["resumed_from"] == 20


def test_an_interrupted_run_without_checkpoint_says_nothing_was_saved(
        tmp_path, capsys, monkeypatch, quick_run, interrupted_main):
    _interrupted_after(10, monkeypatch)
    assert interrupted_main(quick_run(tmp_path / "run.json")) == 130
    assert _one_stderr_line(capsys).startswith("run interrupted; nothing was saved")
    _interrupted_after(10, monkeypatch)  # --checkpoint takes a single seed: the seeds left
    assert interrupted_main(quick_run(tmp_path / "run.json", "--seed", "0,1")) == 130
    assert _one_stderr_line(capsys) == ("run interrupted; nothing was saved: --seed 0,1 runs "
                                        "the rest")


def test_an_interrupted_run_of_several_seeds_names_those_written_and_those_left(
        tmp_path, capsys, monkeypatch, quick_run, interrupted_main):
    evaluate, calls = run_module.prequential, []

    def third_seed_interrupted(*args, **kwargs):  # Ctrl-C as the third seed starts
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return evaluate(*args, **kwargs)
    monkeypatch.setattr(run_module, "prequential", third_seed_interrupted)
    out = tmp_path / "run.json"
    assert interrupted_main(quick_run(out, "--seed", "0,1,2")) == 130
    assert _one_stderr_line(capsys) == (
        f"run interrupted; the files of seed(s) 0, 1 are written: --seed 2 --output "
        f"{tmp_path / 'run_seed2.json'} runs the rest")
    assert [path.name for path in sorted(tmp_path.iterdir())] == ["run_seed0.json",
                                                                  "run_seed1.json"]


def test_ctrl_c_keeps_the_metrics_so_far_in_a_partial_record_no_json_glob_takes(
        tmp_path, capsys, quick_run, interrupted_main, ctrl_c_in_sample):
    out = tmp_path / "run.json"
    ctrl_c_in_sample(12)
    assert interrupted_main(quick_run(out)) == 130
    partial = tmp_path / "run.json.partial"
    assert _one_stderr_line(capsys) == (
        f"run interrupted after sample 13; its metrics so far are in {partial}; nothing "
        f"resumable was saved (--checkpoint FILE keeps a resumable state)")
    assert [path.name for path in tmp_path.iterdir()] == ["run.json.partial"]
    assert not list(tmp_path.glob("*.json"))  # no tune, compare or benchmark takes it
    record = _read(partial)
    assert (record["interrupted_at"], record["n_samples"], record["model"], record["seed"]) == (
        13, 13, "memory", 0)
    assert record["curve"]["position"][-1] == 13



def test_ctrl_c_in_a_resumed_run_that_saves_no_checkpoint_names_the_state_it_resumed_from(
        tmp_path, capsys, monkeypatch, quick_run, interrupted_main, ctrl_c_in_sample):
    out, checkpoint = tmp_path / "run.json", tmp_path / "run.ckpt"
    argv = quick_run(out, "--checkpoint", str(checkpoint), "--checkpoint-every", "10")
    ctrl_c_in_sample(12)
    assert interrupted_main(argv) == 130
    capsys.readouterr()
    monkeypatch.undo()
    ctrl_c_in_sample(20)
    assert interrupted_main([*argv[:-4], "--resume", str(checkpoint)]) == 130
    assert _one_stderr_line(capsys) == (
        f"run interrupted after sample 21; its metrics so far are in {out}.partial; "
        f"{checkpoint} still holds the state it resumed from: rerun the same command to "
        f"continue from it")
    assert torch.load(checkpoint, weights_only=False)["position"] == 13


def test_a_finished_run_removes_the_partial_record_an_interrupted_one_left(
        tmp_path, monkeypatch, quick_run, interrupted_main, ctrl_c_in_sample):
    out = tmp_path / "run.json"
    ctrl_c_in_sample(12)
    assert interrupted_main(quick_run(out)) == 130
    assert [path.name for path in tmp_path.iterdir()] == ["run.json.partial"]
    monkeypatch.undo()
    assert main(quick_run(out)) == 0
    assert [path.name for path in tmp_path.iterdir()] == ["run.json"]
    assert "interrupted_at" not in _read(out) and _read(out)["n_samples"] == 30


def _csv_rows(path: Path) -> list[list[str]]:
    """The data rows of a ``--csv`` file (its header checked)."""
    header, *rows = [line.split(",") for line in path.read_text().splitlines()]
    assert header == ["index", "label", "prediction", "correct", "labeled"]
    return rows


def test_ctrl_c_writes_the_csv_of_the_samples_done_beside_the_partial_record(
        tmp_path, capsys, monkeypatch, quick_run, interrupted_main, ctrl_c_in_sample):
    """``--csv`` too: its rows so far in ``run.csv.partial`` (no ``*.csv`` glob
    takes it), named in the line; a finished rerun replaces both partial files."""
    out, csv = tmp_path / "run.json", tmp_path / "run.csv"
    argv = quick_run(out, "--csv", str(csv))
    ctrl_c_in_sample(12)
    assert interrupted_main(argv) == 130
    partials = [tmp_path / "run.json.partial", tmp_path / "run.csv.partial"]
    assert _one_stderr_line(capsys) == (
        f"run interrupted after sample 13; its metrics so far are in {partials[0]}, "
        f"{partials[1]}; nothing resumable was saved (--checkpoint FILE keeps a resumable "
        f"state)")
    assert sorted(tmp_path.iterdir()) == sorted(partials)
    rows = _csv_rows(partials[1])
    assert [int(row[0]) for row in rows] == list(range(13))
    assert sum(int(row[3]) for row in rows) == round(_read(partials[0])["accuracy"] * 13)
    monkeypatch.undo()
    assert main(argv) == 0
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run.csv", "run.json"]
    assert _csv_rows(csv)[:13] == rows and len(_csv_rows(csv)) == 30  # the run is repeatable


def test_ctrl_c_in_a_later_seed_writes_its_csv_and_the_plot_of_every_seed_run(
        tmp_path, capsys, monkeypatch, quick_run, interrupted_main, ctrl_c_in_sample):
    """Several seeds: the stopped seed's files go to its per-seed partial names,
    the one ``--plot`` of the seeds run (the finished and the stopped one) to
    ``run.png.partial``, a PNG; a finished rerun removes the partial plot too."""
    pytest.importorskip("matplotlib")
    out, csv, plot = tmp_path / "run.json", tmp_path / "run.csv", tmp_path / "run.png"
    argv = quick_run(out, "--seed", "0,1,2", "--csv", str(csv), "--plot", str(plot))
    ctrl_c_in_sample(19, call=2)
    assert interrupted_main(argv) == 130
    partials = [tmp_path / name for name in ("run_seed1.json.partial", "run_seed1.csv.partial",
                                             "run.png.partial")]
    assert _one_stderr_line(capsys) == (
        f"run interrupted after sample 20 of seed 1; the files of seed(s) 0 are written; its "
        f"metrics so far are in {', '.join(map(str, partials))}; --seed 1,2 runs the rest")
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted(
        ["run_seed0.json", "run_seed0.csv", *(path.name for path in partials)])
    assert len(_csv_rows(tmp_path / "run_seed0.csv")) == 30
    assert len(_csv_rows(partials[1])) == _read(partials[0])["interrupted_at"] == 20
    assert partials[2].read_bytes().startswith(b"\x89PNG")
    monkeypatch.undo()
    assert main(argv) == 0
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "run.png", *(f"run_seed{seed}.{kind}" for seed in (0, 1, 2) for kind in ("csv", "json"))]


def test_the_advice_after_ctrl_c_in_the_last_seed_names_its_files_as_the_run_does(
        tmp_path, capsys, monkeypatch, quick_run, interrupted_main, ctrl_c_in_sample):
    """Before: ``--seed 1 runs the rest``, whose run of one seed wrote run.json and
    run.csv, and left run_seed1.*.partial behind."""
    pytest.importorskip("matplotlib")
    out, csv, plot = tmp_path / "run.json", tmp_path / "run.csv", tmp_path / "run.png"
    argv = quick_run(out, "--seed", "0,1", "--csv", str(csv), "--plot", str(plot))
    ctrl_c_in_sample(19, call=2)
    assert interrupted_main(argv) == 130
    json1, csv1, png1 = (tmp_path / f"run_seed1.{kind}" for kind in ("json", "csv", "png"))
    line = _one_stderr_line(capsys)
    assert line.endswith(f"; --seed 1 --output {json1} --csv {csv1} --plot {png1} runs the rest")
    monkeypatch.undo()
    rest = quick_run(json1, "--seed", "1", "--csv", str(csv1), "--plot", str(png1))
    assert main(rest) == 0
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "run.png.partial", *(f"run_seed{seed}.{kind}" for seed in (0, 1)
                             for kind in ("csv", "json")), "run_seed1.png"]


def test_ctrl_c_in_a_later_seed_keeps_the_seeds_done_and_that_seeds_metrics(
        tmp_path, capsys, quick_run, interrupted_main, ctrl_c_in_sample):
    out = tmp_path / "run.json"
    ctrl_c_in_sample(19, call=2)
    assert interrupted_main(quick_run(out, "--seed", "0,1,2")) == 130
    partial = tmp_path / "run_seed1.json.partial"
    assert _one_stderr_line(capsys) == (
        f"run interrupted after sample 20 of seed 1; the files of seed(s) 0 are written; its "
        f"metrics so far are in {partial}; --seed 1,2 runs the rest")
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run_seed0.json",
                                                                "run_seed1.json.partial"]
    assert _read(partial)["interrupted_at"] == 20


def test_ctrl_c_in_a_later_seed_of_a_run_that_writes_no_file_names_every_seed_to_run(
        tmp_path, capsys, quick_run, interrupted_main, ctrl_c_in_sample):
    """Without --output, --csv or --windows-csv a finished seed kept nothing (its
    line of the summary table is not printed): no seed's files are said to be
    written, and every seed is left to run."""
    argv = quick_run(tmp_path / "run.json", "--seed", "0,1,2")
    del argv[7:9]  # no --output
    ctrl_c_in_sample(19, call=2)
    assert interrupted_main(argv) == 130
    assert _one_stderr_line(capsys) == (
        "run interrupted after sample 20 of seed 1; --seed 0,1,2 runs the rest")
    assert not list(tmp_path.iterdir())


def test_ctrl_c_in_the_last_sample_of_a_seed_lets_it_finish_and_starts_no_other(
        tmp_path, capsys, quick_run, interrupted_main, ctrl_c_in_sample):
    out = tmp_path / "run.json"
    ctrl_c_in_sample(29)
    assert interrupted_main(quick_run(out, "--seed", "0,1")) == 130
    assert _one_stderr_line(capsys) == (
        f"run interrupted; the files of seed(s) 0 are written: --seed 1 --output "
        f"{tmp_path / 'run_seed1.json'} runs the rest")
    assert [path.name for path in tmp_path.iterdir()] == ["run_seed0.json"]
    assert _read(tmp_path / "run_seed0.json")["n_samples"] == 30


def test_a_second_ctrl_c_stops_the_run_at_once(
        tmp_path, capsys, quick_run, interrupted_main, ctrl_c_in_sample):
    """Mid-sample, as before deferring: no partial record, no checkpoint at the
    sample; the last periodic checkpoint stays."""
    out, checkpoint = tmp_path / "run.json", tmp_path / "run.ckpt"
    ctrl_c_in_sample(12, times=2)
    assert interrupted_main(quick_run(out, "--checkpoint", str(checkpoint),
                                      "--checkpoint-every", "10")) == 130
    assert _one_stderr_line(capsys) == (
        f"run interrupted; last checkpoint in {checkpoint}: rerun the same command with "
        f"--resume {checkpoint} to continue from it")
    assert [path.name for path in tmp_path.iterdir()] == ["run.ckpt"]
    assert torch.load(checkpoint, weights_only=False)["position"] == 10


def test_a_run_off_the_main_thread_leaves_the_ctrl_c_handler_alone(tmp_path, monkeypatch,
                                                                   quick_run):
    """``signal.signal`` works on the main thread only: a run in another thread
    (a library user's) runs with the handler in place."""
    evaluate, handlers, codes = run_module.prequential, [], []

    def noting_the_handler(*args, **kwargs):
        handlers.append(signal.getsignal(signal.SIGINT))
        return evaluate(*args, **kwargs)
    monkeypatch.setattr(run_module, "prequential", noting_the_handler)
    before = signal.getsignal(signal.SIGINT)
    thread = threading.Thread(target=lambda: codes.append(main(quick_run(tmp_path / "r.json"))))
    thread.start()
    thread.join(timeout=300)
    assert codes == [0] and handlers == [before] and signal.getsignal(signal.SIGINT) is before


@pytest.fixture
def fresh_software_versions():
    """``software_versions`` read anew in the test, and again after it."""
    report_module.software_versions.cache_clear()
    yield
    report_module.software_versions.cache_clear()


def test_a_record_names_the_code_as_the_run_started(tmp_path, monkeypatch,
                                                    fresh_software_versions):
    # before: read as the record was written, after a commit made during the run
    commit = {"git_commit": "started", "git_dirty": False}
    monkeypatch.setattr(report_module, "git_revision", lambda folder: dict(commit))
    evaluate = run_module.prequential

    def committing_meanwhile(*args, **kwargs):
        commit["git_commit"] = "committed meanwhile"
        return evaluate(*args, **kwargs)
    monkeypatch.setattr(run_module, "prequential", committing_meanwhile)
    out = tmp_path / "run.json"
    assert main(["run", "--dataset", "synthetic", "--synthetic-samples", "30", "--model", "tlp",
                 "--quiet", "--output", str(out)]) == 0
    record = _read(out)
    assert (record["git_commit"], record["git_dirty"]) == ("started", False)
    assert (record["numpy_version"], record["torch_geometric_version"]) == (
        np.__version__, torch_geometric.__version__)


def _two_class_csv(path: Path, rows: int = 80) -> Path:
    """A stream file of two separated classes, the label (a word) in the first column."""
    generator = np.random.default_rng(0)
    lines = ["kind,f1,f2,f3"]
    for index in range(rows):
        kind = ("low", "high")[index % 2]
        values = generator.normal(3.0 * (index % 2), 0.5, size=3)
        lines.append(",".join([kind, *(f"{v:.5f}" for v in values)]))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_csv_file_of_your_own_is_a_stream(tmp_path, capsys):
    stream, out = _two_class_csv(tmp_path / "mine.csv"), tmp_path / "run.json"
    assert main(["run", "--dataset", str(stream), "--label-column", "kind", *FAST,
                 "--label-ratio", "0.1", "--output", str(out)]) == 0
    record = _read(out)
    assert (record["dataset"], record["dataset_source"]) == ("mine.csv", str(stream.resolve()))
    assert record["label_column"] == "kind"  # before: the record did not say which column
    assert record["synthetic_samples"] is None  # a synthetic stream's length only
    assert record["class_names"] == ["high", "low"]  # the confusion matrix's order
    assert (record["n_samples"], record["confusion_matrix"] and len(record["confusion_matrix"])
            ) == (80, 2)
    assert record["accuracy"] > 0.8  # two classes 6 standard deviations apart
    assert "on mine.csv" in capsys.readouterr().out
    # the same rows as arrays: the same run, prediction for prediction
    table = np.loadtxt(stream, delimiter=",", skiprows=1, usecols=(1, 2, 3))
    kinds = np.loadtxt(stream, delimiter=",", skiprows=1, usecols=0, dtype=str)
    np.savez(tmp_path / "mine.npz", x=table, y=kinds)
    again = tmp_path / "again.json"
    assert main(["run", "--dataset", str(tmp_path / "mine.npz"), *FAST, "--label-ratio", "0.1",
                 "--output", str(again)]) == 0
    again_record = _read(again)
    assert again_record["confusion_matrix"] == record["confusion_matrix"]
    assert again_record["label_column"] is None


def test_the_record_s_class_metrics_cover_every_class_seen_or_not(tmp_path):
    # "odd" is a class of the stream that never comes (nor is predicted by this model):
    # before, the matrix had 2 rows for the 3 class_names
    stream, out = _two_class_csv(tmp_path / "mine.csv"), tmp_path / "run.json"
    assert main(["run", "--dataset", str(stream), "--label-column", "kind", "--stream",
                 "--classes", "high,low,odd", "--label-mask", "bernoulli", "--model", "memory",
                 *FAST, "--label-ratio", "0.1", "--output", str(out)]) == 0
    record = _read(out)
    assert record["class_names"] == ["high", "low", "odd"]
    confusion, recall = record["confusion_matrix"], record["recall_per_class"]
    assert confusion == [[15, 25, 0], [0, 40, 0], [0, 0, 0]]
    assert recall == [15 / 40, 1.0, None]


def test_a_limit_on_a_csv_file_runs_on_its_first_rows_as_if_the_file_ended_there(tmp_path):
    stream = _two_class_csv(tmp_path / "mine.csv")
    with stream.open("a") as handle:  # a third class and a bad row, after the limit
        handle.write("odd,1,2,3\nodd,1,x,3\n")
    argv = ["run", "--label-column", "kind", *FAST, "--label-ratio", "0.1", "--limit", "80"]
    out, cut = tmp_path / "run.json", tmp_path / "cut.json"
    assert main([*argv, "--dataset", str(stream), "--output", str(out)]) == 0
    lines = stream.read_text().splitlines()[:81]
    (tmp_path / "cut.csv").write_text("\n".join(lines) + "\n")
    assert main([*argv, "--dataset", str(tmp_path / "cut.csv"), "--output", str(cut)]) == 0
    record, whole = _read(out), _read(cut)
    assert record["class_names"] == ["high", "low"] and record["limit"] == 80
    assert record["confusion_matrix"] == whole["confusion_matrix"]  # the same run


def _two_class_arff(path: Path, rows: int = 60) -> Path:
    """An ARFF stream of two separated classes, with a nominal feature; its header
    declares a third class, which no row holds."""
    generator = np.random.default_rng(0)
    lines = ["% two classes", "@relation two", "@attribute f1 numeric", "@attribute f2 real",
             "@attribute side {left, right}", "@attribute kind {low, high, odd}", "@data"]
    for index in range(rows):
        f1, f2 = generator.normal(3.0 * (index % 2), 0.5, size=2)
        lines.append(f"{f1:.5f},{f2:.5f},{('left', 'right')[index % 2]},"
                     f"{('low', 'high')[index % 2]}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_an_arff_file_of_your_own_is_a_stream_read_no_further_than_its_limit(tmp_path,
                                                                             capsys):
    stream = _two_class_arff(tmp_path / "small.arff")
    cut = tmp_path / "cut.arff"  # its header and first 50 rows
    cut.write_text("\n".join(stream.read_text().splitlines()[:57]) + "\n")
    with stream.open("a") as handle:  # a row no stream holds, after the limit
        handle.write("1,2,up,low\n")
    argv = ["run", *FAST, "--label-ratio", "0.1", "--limit", "50"]
    out, again = tmp_path / "run.json", tmp_path / "again.json"
    assert main([*argv, "--dataset", str(stream), "--output", str(out)]) == 0
    record = _read(out)
    assert (record["dataset"], record["n_samples"], record["limit"]) == ("small.arff", 50, 50)
    assert record["class_names"] == ["low", "high", "odd"]  # declared, in their order
    assert len(record["confusion_matrix"]) == 3 and record["accuracy"] > 0.8
    assert main([*argv, "--dataset", str(cut), "--label-column", "kind",
                 "--output", str(again)]) == 0
    assert _read(again)["confusion_matrix"] == record["confusion_matrix"]  # the same run
    assert main(["run", "--dataset", str(stream), *FAST]) == 2  # read whole: the last row
    assert capsys.readouterr().err.strip() == (
        "error: small.arff line 68: attribute 'side' holds 'up', which it does not declare "
        "({left, right})")


def test_an_integer_label_column_that_names_another_column_is_one_error_line(tmp_path, capsys):
    stream = _two_class_csv(tmp_path / "mine.csv")
    stream.write_text(stream.read_text().replace("kind,f1,f2,f3", "kind,f1,0,f3", 1))
    argv = ["run", "--dataset", str(stream), *FAST, "--label-ratio", "0.1"]
    assert main([*argv, "--label-column", "0"]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: mine.csv: label column 0 is ambiguous: the position of column 'kind' and the "
        "name of another in the header; give 'kind' or -4 for column 'kind' (position 0), "
        "2 or -2 for column '0' (position 2)")
    out = tmp_path / "run.json"
    assert main([*argv, "--label-column", "-4", "--output", str(out)]) == 0
    record = _read(out)  # the column as given, and the classes it holds
    assert (record["label_column"], record["class_names"]) == ("-4", ["high", "low"])


@pytest.mark.parametrize("dataset", ["synthetic", "Shopper", "mine.npz"])
def test_a_label_column_where_no_csv_is_read_is_refused(tmp_path, capsys, dataset):
    assert main(["run", "--dataset", dataset, "--label-column", "kind", "--limit", "20"]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: --label-column applies to a CSV or ARFF file given as --dataset (an .npz file "
        "holds its labels in y); drop it")


def test_a_missing_or_malformed_stream_file_is_one_error_line(tmp_path, capsys):
    assert main(["run", "--dataset", str(tmp_path / "absent.csv")]) == 2
    assert capsys.readouterr().err.strip() == \
        f"error: stream file {tmp_path / 'absent.csv'} does not exist"
    (tmp_path / "bad.csv").write_text("a,b\n1,x\n2,y\n")
    assert main(["run", "--dataset", str(tmp_path / "bad.csv"), "--label-column", "0"]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: bad.csv line 2: column 'b' holds 'x', not a number (encode categorical "
        "features as numbers first)")
    (tmp_path / "cut.csv.gz").write_bytes(gzip.compress(b"1,2,0\n3,4,1\n")[:-8])
    assert main(["run", "--dataset", str(tmp_path / "cut.csv.gz")]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: cut.csv.gz: cannot be read (Compressed file ended before the end-of-stream "
        "marker was reached)")


def test_shopper_without_a_data_folder_runs_on_the_bundled_copy(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("TGS_DATA_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)  # no shared/data above it
    out = tmp_path / "shopper.json"
    assert main(["run", "--dataset", "shopper", "--model", "memory", "--limit", "30",
                 "--quiet", "--output", str(out)]) == 0
    assert "no data folder found: using the bundled Shopper copy" in capsys.readouterr().err
    record = _read(out)
    assert (record["dataset"], record["dataset_source"]) == ("Shopper", "bundled")
    assert main(["run", "--dataset", "shuttle", "--limit", "30", "--quiet"]) == 2
    assert "only Shopper is bundled" in capsys.readouterr().err


@pytest.mark.parametrize("root, note", [("absent", "does not exist"),
                                        ("file", "a file, not a folder")])
def test_datasets_command_says_when_the_data_folder_is_not_one(tmp_path, capsys, root, note):
    (tmp_path / "file").touch()
    assert main(["datasets", "--root", str(tmp_path / root)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == f"data folder: {tmp_path / root} ({note}: every dataset below is missing)"


def test_datasets_command_without_a_data_folder_asks_for_root(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("TGS_DATA_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)  # no shared/data above it
    assert main(["datasets"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "data folder: (none: pass --root DIR)"
    statuses = [line for line in lines if re.search(r"  no --root  ", line)]
    assert len(statuses) == len(DATASET_NAMES)


def test_real_dataset_shuttle(tmp_path, dataset_root):
    out = tmp_path / "shuttle.json"
    assert main(["run", "--root", str(dataset_root("Shuttle")), "--dataset", "SHUTTLE",
                 "--limit", "200", *FAST, "--output", str(out)]) == 0
    record = _read(out)
    assert (record["dataset"], record["model"], record["n_samples"]) == ("Shuttle", "sledge", 200)
    assert record["config"]["labeled_size"] == 10


def test_datasets_command_lists_all_twelve(tmp_path, capsys):
    (tmp_path / "shuttle").mkdir()
    (tmp_path / "shuttle" / "shuttle.trn").touch()
    (tmp_path / "shuttle" / "shuttle.tst.gz").touch()
    for name in ("GSAD", "OD", "HAR"):
        (tmp_path / name).mkdir()
    (tmp_path / "GSAD" / "batch3.dat").touch()
    (tmp_path / "HAR" / "SOURCE.md").touch()
    (tmp_path / "mnist").mkdir()
    (tmp_path / "mnist" / "train-images-idx3-ubyte").touch()
    (tmp_path / "mnist" / "t10k-labels-idx1-ubyte.gz").touch()
    (tmp_path / "KMNIST" / "raw").mkdir(parents=True)
    (tmp_path / "KMNIST" / "raw" / "kmnist-train-imgs.npz").touch()
    assert main(["datasets", "--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.splitlines() if line and not line[0].isspace()}
    status = {name: re.search(r"  (found|empty|missing|partial \(\d+ of \d+ files\))  ",
                              line).group(1)
              for name, line in lines.items() if name in DATASET_NAMES}
    assert status["Shuttle"] == "found" and status["KMNIST"] == "found"  # any data file
    # before: "found" (any data file), though the loader needs all four IDX files
    assert status["MNIST"] == "partial (2 of 4 files)"
    assert status["GSAD"] == "partial (1 of 10 files)"
    assert status["OD"] == "empty" and status["HAR"] == "empty"  # notes are no data
    assert status["SDD"] == "missing" and status["FashionMNIST"] == "missing"
    assert {"MNDS", "WebKB", "CIFAR-10", "OD"} <= set(lines)
    assert out.splitlines()[-1] == ("your own stream: run --dataset FILE.csv (label in the last "
                                    "column, or --label-column NAME), FILE.arff (the label the "
                                    "last attribute) or FILE.npz (arrays x and y)")


def test_synthetic_name_with_its_drift_round_trips(tmp_path):
    """The name a synthetic run reports is accepted as --dataset and names the drift."""
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    base = ["--synthetic-samples", "40", "--model", "sledge", *FAST]
    assert main(["run", "--dataset", "synthetic", "--synthetic-drift", "gradual", *base,
                 "--output", str(first)]) == 0
    reported = _read(first)["dataset"]
    assert reported == "synthetic-gradual"
    assert main(["run", "--dataset", reported.upper(), *base, "--output", str(second)]) == 0
    again = _read(second)
    assert again["dataset"] == reported and again["curve"] == _read(first)["curve"]


def test_unknown_synthetic_drift_is_a_usage_error(capsys):
    assert main(["run", "--dataset", "synthetic-bogus", "--limit", "5"]) == 2
    assert "unknown synthetic drift 'bogus'" in capsys.readouterr().err


def test_a_stream_file_named_synthetic_dash_is_read_as_the_file(tmp_path, monkeypatch, capsys):
    """A file named like a synthetic stream (``synthetic-mine.csv``) is a stream file,
    whole or as it comes, by its name alone or a path; before: "unknown synthetic
    drift 'mine.csv'". A name without a suffix still names a synthetic stream."""
    stream = _two_class_csv(tmp_path / "synthetic-mine.csv")
    monkeypatch.chdir(tmp_path)
    for run, (name, streamed) in enumerate(
            (("synthetic-mine.csv", []), (str(stream), []),
             ("synthetic-mine.csv", ["--stream", "--classes", "high,low",
                                     "--label-mask", "bernoulli"]))):
        out = tmp_path / f"run{run}.json"
        assert main(["run", "--dataset", name, "--label-column", "kind", *streamed, *FAST,
                     "--label-ratio", "0.1", "--output", str(out)]) == 0
        assert _read(out)["dataset"] == "synthetic-mine.csv"
    capsys.readouterr()
    assert main(["run", "--dataset", "synthetic-mine.arff", "--limit", "5"]) == 2
    assert "stream file synthetic-mine.arff does not exist" in capsys.readouterr().err
    assert main(["run", "--dataset", "synthetic-mine", "--limit", "5"]) == 2
    assert "unknown synthetic drift 'mine'" in capsys.readouterr().err


def test_feature_transform_reaches_the_stream_and_the_record(tmp_path):
    plain, logged, default = (tmp_path / f"{name}.json" for name in ("plain", "log", "default"))
    base = ["run", "--dataset", "synthetic", "--synthetic-samples", "60", "--model", "memory",
            "--quiet"]
    assert main([*base, "--feature-transform", "none", "--output", str(plain)]) == 0
    assert main([*base, "--feature-transform", "signed-log1p", "--output", str(logged)]) == 0
    assert main([*base, "--output", str(default)]) == 0
    assert _read(plain)["config"]["feature_transform"] == "none"
    record = _read(logged)
    assert record["config"]["feature_transform"] == "signed-log1p"
    assert record["curve"] != _read(plain)["curve"]
    # the default, "auto", takes the log on a stream without a declared value range
    assert _read(default)["config"]["feature_transform"] == "signed-log1p"
    assert _read(default)["curve"] == record["curve"]


@pytest.fixture
def built(monkeypatch):
    """The learners ``run`` builds, in order."""
    from torch_geometric_stream.cli import run as run_module

    learners = []
    build = run_module.build_learner
    monkeypatch.setattr(run_module, "build_learner",
                        lambda *args, **kwargs: learners.append(build(*args, **kwargs))
                        or learners[-1])
    return learners


OPTIONS_REACHING_THE_MODEL = {
    # config entry: (model, [(flags, recorded value)], what the built learner holds)
    "count_offset": ("memory", [(["--count-offset", "0"], 0), (["--count-offset", "1"], 1)],
                     lambda learner: learner.memory.count_offset),
    "merge_similarity": ("sledge", [(["--merge-similarity", "raw"], "raw"),
                                    (["--merge-similarity", "embedding"], "embedding")],
                         lambda learner: learner.merge_similarity),
    # (on the synthetic stream the SLeDGe family scales its own input: auto is online-rescale)
    "source_merge": ("sledge", [(["--source-merge", "unit"], "unit"),
                                (["--source-merge", "raw"], "raw")],
                     lambda learner: learner.memory.source_merge),
    "supervise_graph": ("sledge", [(["--no-supervise-graph"], False),
                                   (["--supervise-graph"], True)],
                        lambda learner: learner.supervise_graph),
    "bias_position": ("sledge-light", [(["--bias-position", "before"], "before"),
                                       (["--bias-position", "after"], "after")],
                      lambda learner: learner.backbone.bias_position),
    "k": ("static", [(["--k", "0"], 0), (["--k", "2"], 2)], lambda learner: learner.k),
    "normalization": ("sledge", [(["--normalization", "symmetric-add"], "symmetric-add"),
                                 (["--normalization", "mean"], "mean")],
                      lambda learner: learner.backbone.normalization),
}


@pytest.mark.parametrize("key", OPTIONS_REACHING_THE_MODEL)
def test_option_reaches_the_model_and_the_record(tmp_path, built, key):
    model, settings, held = OPTIONS_REACHING_THE_MODEL[key]
    recorded = []
    for i, (flags, _) in enumerate(settings):
        output = tmp_path / f"run{i}.json"
        assert main(["run", "--dataset", "synthetic", "--synthetic-samples", "40", "--model",
                     model, "--hidden-channels", "8", *flags, "--quiet", "--output",
                     str(output)]) == 0
        recorded.append(_read(output)["config"][key])
    expected = [value for _, value in settings]
    assert [held(learner) for learner in built] == expected
    assert recorded == expected


def test_preset_package_leaves_out_the_paper_settings_and_is_recorded(tmp_path):
    # the bundled stream is Shopper, a paper dataset: 1 % -> gcn_layer 1, scorer_layer 3
    records = {}
    for preset in ("paper", "package"):
        output = tmp_path / f"{preset}.json"
        assert main(["run", "--model", "sledge", "--limit", "30", "--hidden-channels", "8",
                     "--preset", preset, "--quiet", "--output", str(output)]) == 0
        records[preset] = _read(output)
    assert records["paper"]["preset"] == "paper" and records["package"]["preset"] == "package"
    assert (records["paper"]["config"]["num_layers"],
            records["paper"]["config"]["embedding_layers"]) == (1, 3)
    assert (records["package"]["config"]["num_layers"],
            records["package"]["config"]["embedding_layers"]) == (
        DEFAULT_CONFIG["num_layers"], DEFAULT_CONFIG["embedding_layers"])


def test_count_offset_takes_0_or_1(capsys):
    assert main(["run", "--dataset", "synthetic", "--count-offset", "2"]) == 2
    assert "--count-offset" in capsys.readouterr().err


def _can_flush_denormal() -> bool:
    supported = torch.set_flush_denormal(True)
    torch.set_flush_denormal(False)
    return supported


@pytest.mark.skipif(not _can_flush_denormal(), reason="this CPU cannot flush denormals")
def test_worker_threads_a_large_stream_starts_flush_denormals_too():
    """Loading a large stream starts torch's worker threads before the evaluation;
    ``run`` flushes from its start, so they take the setting."""
    script = textwrap.dedent("""
        import warnings, torch
        import torch_geometric_stream.cli.run as run_module
        from torch_geometric_stream.cli import main
        from torch_geometric_stream.ops import flushes_denormal
        asked, evaluate, load = [], run_module.prequential, run_module._load_stream
        def spy(*args, **kwargs):
            asked.append(flushes_denormal(all_threads=True))
            return evaluate(*args, **kwargs)
        def loading_a_large_stream(args):
            torch.ones(1_000_000).mul(2.0)  # multi-threaded: starts the worker thread
            return load(args)
        run_module.prequential, run_module._load_stream = spy, loading_a_large_stream
        warnings.simplefilter("error", RuntimeWarning)
        assert main(["run", "--limit", "20", "--quiet", "--model", "ressl", "--threads", "2"]) == 0
        print(asked)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[True]"


def test_run_takes_seeds_as_tune_spells_it():
    # before: tune takes --seeds (and --seed), run only --seed: 'run --seeds 0,2000'
    # was "unrecognized arguments"
    args = build_parser().parse_args(["run", "--seeds", "0,2000", "--seed", "4000"])
    assert parse_seeds(args.seed) == [0, 2000, 4000]


@pytest.mark.parametrize("extra, unknown", [
    (["--grid"], "--grid"),  # before: taken as --grid-run, its warning silenced
    (["--grid", "lr=1"], "--grid lr=1"),  # before: "unrecognized arguments: lr=1"
    (["--grid-r"], "--grid-r"),
])
def test_runs_hidden_grid_run_option_is_taken_only_as_spelled_in_full(extra, unknown, capsys):
    """``--grid-run`` (tune's grid runs pass it) is no option by an abbreviation; the
    other options still are (``--datas``)."""
    assert build_parser().parse_args(["run", "--grid-run"]).grid_run is True
    assert build_parser().parse_args(["run", "--datas", "mnist"]).dataset == "mnist"
    assert main(["run", "--dataset", "synthetic", "--quiet", *extra]) == 2
    assert capsys.readouterr().err == (f"error: torch_geometric_stream run: unrecognized "
                                       f"arguments: {unknown}\n")


def test_a_seed_given_twice_runs_once_in_the_place_it_was_first_given():
    assert parse_seeds(["3,1", "3", "1,2,2"]) == [3, 1, 2]
    assert parse_seeds(None) == parse_seeds([]) == [0]


def test_a_bounded_history_reports_the_full_historys_numbers_and_plots(tmp_path, capsys):
    """Up to 4096 samples everything but the timings is the full history's; the
    record says which history ran and how many samples each tail covers."""
    argv = ["run", "--limit", "300", "--quiet", "--model", "ressl"]
    full, bounded = tmp_path / "full.json", tmp_path / "bounded.json"
    assert main([*argv, "--output", str(full)]) == 0
    plot = tmp_path / "bounded.png"
    assert main([*argv, "--history", "bounded", "--output", str(bounded),
                 "--plot", str(plot)]) == 0
    full, bounded = _read(full), _read(bounded)
    assert (full["history"], bounded["history"]) == ("full", "bounded")
    assert bounded.pop("tail_samples") == {"accuracy_last_20": 60, "accuracy_last_10": 30,
                                           "accuracy_last_5": 15}
    unrepeatable = UNREPEATABLE | {"history"}
    assert ({key: value for key, value in bounded.items() if key not in unrepeatable}
            == {key: value for key, value in full.items() if key not in unrepeatable})
    assert plot.stat().st_size > 0


def test_a_bounded_history_refuses_the_per_sample_csv_before_the_run(tmp_path, capsys,
                                                                    monkeypatch):
    monkeypatch.setattr(run_module, "prequential", lambda *args, **kwargs: pytest.fail("ran"))
    assert main(["run", "--limit", "40", "--quiet", "--model", "ressl", "--history", "bounded",
                 "--csv", str(tmp_path / "run.csv")]) == 2
    assert capsys.readouterr().err == (
        "error: --csv writes one row per sample, which --history bounded does not keep: drop "
        "--csv or run with --history full\n")
    assert main(["run", "--limit", "40", "--quiet", "--history", "partial"]) == 2
    assert "argument --history: invalid choice: 'partial'" in capsys.readouterr().err


@pytest.mark.parametrize("options, message", [
    # before: plain JSON as out.json_seed0.gz and out.json_seed1.gz, which compare DIR
    # (reading *.json) never found
    (["--output", "{dir}/out.json.gz", "--seed", "0,1"],
     "--output writes JSON: give a FILE.json, got {dir}/out.json.gz"),
    (["--output", "{dir}/out", "--seed", "0"],
     "--output writes JSON: give a FILE.json, got {dir}/out"),
    (["--output", "{dir}/out.json", "--csv", "{dir}/rows.csv.gz"],
     "--csv writes CSV: give a FILE.csv, got {dir}/rows.csv.gz"),
    (["--output", "{dir}/out.json", "--eval-window", "10", "--windows-csv", "{dir}/w.txt"],
     "--windows-csv writes CSV: give a FILE.csv, got {dir}/w.txt"),
])
def test_an_output_named_for_another_format_is_refused_before_the_run(
        tmp_path, capsys, monkeypatch, options, message):
    monkeypatch.setattr(run_module, "prequential", lambda *args, **kwargs: pytest.fail("ran"))
    argv = ["run", "--dataset", "synthetic", "--model", "memory", "--limit", "30", "--quiet",
            *(option.format(dir=tmp_path) for option in options)]
    assert main(argv) == 2
    assert capsys.readouterr().err == f"error: {message.format(dir=tmp_path)}\n"
    assert not list(tmp_path.iterdir())


def test_build_transform_takes_the_whole_x_of_any_dataset_not_read_as_it_comes():
    """Duck-typed: a dataset-like object with ``x`` gets its global scaling."""
    from types import SimpleNamespace

    from torch_geometric_stream.cli.models import build_transform

    dataset = SimpleNamespace(x=torch.tensor([[0.0, 1.0], [2.0, 3.0]]), value_range=None)
    config = {"scaling": "global", "feature_transform": "none", "feature_range": (-1.0, 1.0)}
    transform = build_transform(config, dataset, seed=0)  # type: ignore[arg-type]
    # the whole x's range scales [2, 1] to [1, -1], then L2-normalized
    row = transform.transform_one(torch.tensor([2.0, 1.0]))
    assert torch.allclose(row, torch.tensor([1.0, -1.0]) / math.sqrt(2))


#: A sample that never ends (the step after ``position`` 5 of seed ``$HOLD``), which
#: notes ``$MARKERS/stop-seen`` once its process's Ctrl-C handler noted a first Ctrl-C.
_HOLD = """            if position == 5 and seed == int(os.environ["HOLD"]):
                while True:
                    handler = signal.getsignal(signal.SIGINT)
                    if getattr(getattr(handler, "__self__", None), "requested", False):
                        (Path(os.environ["MARKERS"]) / "stop-seen").touch()
                    time.sleep(0.01)
"""
#: :data:`_NOTING_WORKERS` of seeds run by ``run``'s function ``$RUN_SEED`` (a
#: worker's, or ``_run_seed`` of ``--jobs 1``, whose last positional argument is the
#: seed), seed ``$HOLD`` never ending its 6th sample (:data:`_HOLD`).
_HOLDING_WORKERS = (
    _NOTING_WORKERS.replace("import os\n", "import os\nimport signal\nimport time\n")
    .replace("run_module._run_seed_in_worker", "getattr(run_module, os.environ['RUN_SEED'])")
    .replace("(args, seed, **kwargs):", "(*arguments, **kwargs):\n    seed = arguments[-1]")
    .replace("            if position == 4:", _HOLD + "            if position == 4:")
    .replace("run_seed(args, seed, **kwargs)", "run_seed(*arguments, **kwargs)"))
#: ``python -m torch_geometric_stream`` with its seeds run by :data:`_HOLDING_WORKERS`,
#: no end to the grace period of ``--jobs`` workers (only Ctrl-C ends the hold), and
#: ``$MARKERS/result`` noted once a seed's result reached the main process.
_MAIN_HOLDING = """
import os
import sys
import noting_workers
from torch_geometric_stream.cli import main, run as run_module, seed_workers
from concurrent.futures import Future
from pathlib import Path
setattr(run_module, os.environ["RUN_SEED"], noting_workers.run_seed_noting_progress)
seed_workers.INTERRUPT_GRACE_SECONDS = 600
set_result = Future.set_result

def noting_results(future, result):  # a seed's result here, in the main process
    set_result(future, result)
    (Path(os.environ["MARKERS"]) / "result").touch()

Future.set_result = noting_results
sys.exit(main(sys.argv[1:]))
"""


def _wait_for(path: Path, command: subprocess.Popen, what: str) -> None:
    """Return once ``path`` exists; fail the test if ``command`` ended or 120 s passed."""
    deadline = time.monotonic() + 120
    while not path.exists():
        if command.poll() is not None or time.monotonic() > deadline:
            command.kill()
            pytest.fail(f"{what}: {command.communicate()[1]}")
        time.sleep(0.01)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.parametrize("jobs", [1, 2])
def test_a_second_ctrl_c_keeps_the_seeds_stopped_or_done_before_it(tmp_path, process_group,
                                                                     jobs):
    """``run`` of seeds 0, 1 and 2, whose seed ``held`` never ends its 6th sample.
    ``--jobs 2``: the first Ctrl-C stops seed 1 at its sample (its worker returns
    it) while seed 0 is held; a second Ctrl-C ends seed 0's worker at once, and
    the run writes seed 1's partial files and names them (before: seed 1, behind
    seed 0 in the seeds' order, was never written, and the run said it kept
    nothing). ``--jobs 1``: seed 0 done, the first Ctrl-C comes while seed 1 is
    held, and the second stops the run at once: seed 0's files stay, nothing of
    seed 1 is written, and ``--seed 1,2`` runs the rest."""
    held = 0 if jobs == 2 else 1
    outputs, markers = tmp_path / "outputs", tmp_path / "markers"
    outputs.mkdir(), markers.mkdir()
    (tmp_path / "noting_workers.py").write_text(_HOLDING_WORKERS)
    package_parent = str(Path(run_module.__file__).resolve().parents[2])
    env = dict(os.environ, OMP_NUM_THREADS="1", MARKERS=str(markers), HOLD=str(held),
               RUN_SEED="_run_seed_in_worker" if jobs == 2 else "_run_seed",
               PYTHONPATH=os.pathsep.join([str(tmp_path), package_parent]))
    limit = [] if jobs == 2 else ["--limit", "60"]  # --jobs 1: seed 0 runs to its end
    command = process_group(
        [sys.executable, "-c", _MAIN_HOLDING, "run", "--dataset", "synthetic", "--model",
         "sledge", *limit, "--seed", "0,1,2", "--jobs", str(jobs), "--quiet", "--output",
         str(outputs / "run.json"), "--csv", str(outputs / "run.csv")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    _wait_for(markers / f"seed{held}", command, f"seed {held} did not start")
    pid = int((markers / f"seed{held}").read_text())
    if jobs == 2:
        _wait_for(markers / "seed1", command, "seed 1 did not start")
    os.killpg(command.pid, signal.SIGINT)
    if jobs == 2:
        # seed 1 stopped, and its result reached the main process
        _wait_for(markers / "result", command, "seed 1 did not stop")
    else:
        _wait_for(markers / "stop-seen", command, "the first Ctrl-C was not noted")
    os.killpg(command.pid, signal.SIGINT)  # the second Ctrl-C
    out, err = command.communicate(timeout=60)
    assert command.returncode == 130, err
    assert "Traceback" not in err, err
    if jobs == 2:
        assert not _running(pid)  # the held worker, ended
        partials = [outputs / f"run_seed1.{kind}.partial" for kind in ("json", "csv")]
        assert sorted(outputs.iterdir()) == sorted(partials)
        done = _read(partials[0])["interrupted_at"]
        assert 5 <= done == len(_csv_rows(partials[1])) < 5000
        assert err.strip().splitlines()[-1] == (
            f"run interrupted after sample {done} of seed 1; its metrics so far are in "
            f"{partials[0]}, {partials[1]}; --seed 0,1,2 runs the rest")
    else:
        written = [outputs / f"run_seed0.{kind}" for kind in ("json", "csv")]
        assert sorted(outputs.iterdir()) == sorted(written)
        assert _read(written[0])["n_samples"] == 60 == len(_csv_rows(written[1]))
        assert err.strip().splitlines()[-1] == ("run interrupted; the files of seed(s) 0 are "
                                                "written: --seed 1,2 runs the rest")
