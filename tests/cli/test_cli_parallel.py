"""``run_commands``: the grid runner behind ``tune --jobs`` and ``accuracy.py --jobs``."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest
import torch

from torch_geometric_stream.cli.parallel import run_commands


@pytest.fixture
def command(tmp_path, quick_run):
    """``command(name, *options)``: a quick ``run`` and the JSON it writes."""
    return lambda name, *options: (quick_run(tmp_path / f"{name}.json", *options),
                                   tmp_path / f"{name}.json")


def test_workers_return_codes_in_order_and_keep_only_failed_logs(command):
    good, bad = command("good"), command("bad", "--label-ratio", "2")
    assert run_commands([bad, good], jobs=2) == [2, 0]
    assert json.loads(good[1].read_text())["n_samples"] == 30
    assert not good[1].with_suffix(".log").exists()
    log = bad[1].with_suffix(".log").read_text()
    assert "label-ratio" in log and not bad[1].exists()


def test_stop_on_failure_starts_nothing_after_a_failure(command):
    bad, good = command("bad", "--label-ratio", "2"), command("good")
    assert run_commands([bad, good], stop_on_failure=True) == [2, None]
    assert not good[1].exists()
    assert run_commands([bad, good]) == [2, 0]


@pytest.mark.parametrize("jobs", [1, 2])
def test_quiet_prints_only_the_failures(command, capsys, jobs):
    bad, good = command("bad", "--label-ratio", "2"), command("good")
    assert run_commands([bad, good], jobs=jobs, quiet=True) == [2, 0]
    captured = capsys.readouterr()
    log = f" (output in {bad[1].with_suffix('.log')})" if jobs > 1 else ""
    # the failure, and for a worker the log that holds its error; no summary table
    assert captured.out == f"failed with exit code 2: bad.json{log}\n"
    assert ("label-ratio" in captured.err) == (jobs == 1)
    assert json.loads(good[1].read_text())["n_samples"] == 30


def test_jobs_must_be_positive(command):
    with pytest.raises(ValueError, match="jobs must be at least 1, got 0"):
        run_commands([command("x")], jobs=0)


def test_each_worker_runs_with_the_threads_asked(command, monkeypatch):
    """``threads`` reaches each worker process as its ``OMP_NUM_THREADS``."""
    popen, threads = subprocess.Popen, []

    def start(argv, **kwargs):
        threads.append(kwargs["env"]["OMP_NUM_THREADS"])
        return popen(argv, **kwargs)
    monkeypatch.setattr(subprocess, "Popen", start)
    assert run_commands([command("a"), command("b")], jobs=2, threads=3) == [0, 0]
    assert threads == ["3", "3"]


def test_on_success_runs_after_each_successful_command_before_the_next(command):
    first, bad, last = (command("first"), command("bad", "--label-ratio", "2"),
                        command("last"))
    calls = []

    def on_success(output):
        calls.append((output.name, last[1].exists()))

    assert run_commands([first, bad, last], on_success=on_success) == [0, 2, 0]
    assert calls == [("first.json", False), ("last.json", True)]


def test_ctrl_c_stops_the_running_workers_at_once_and_starts_no_other(
        command, ctrl_c_once_started, capsys):
    workers = ctrl_c_once_started(2)
    tic = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_commands([command(name) for name in "abcd"], jobs=2)
    assert time.monotonic() - tic < 2  # a worker left alone runs 4 s
    assert [worker.signals for worker in workers] == [[signal.SIGTERM]] * 2  # a first Ctrl-C
    assert "failed" not in capsys.readouterr().out  # stopped, not failed


#: The test's replacements of ``sys.stdout``, never freed (see its use).
_STDOUTS_KEPT: list = []


class StartingAsCtrlC:
    """``sys.stdout`` of a test of workers whose Ctrl-C comes (from
    :func:`ctrl_c_once_started`) as command ``name`` is starting: its ``start``
    line waits until a worker got the interrupt."""

    def __init__(self, name: str, workers: list) -> None:
        self.name, self.workers = name, workers

    def write(self, text: str) -> int:
        deadline = time.monotonic() + 5
        while (text == f"start {self.name}" and not any(worker.signals for worker in self.workers)
               and time.monotonic() < deadline):
            time.sleep(0.01)
        return len(text)

    def flush(self) -> None:
        pass


def test_a_command_starting_as_ctrl_c_comes_starts_no_worker(
        command, ctrl_c_once_started, monkeypatch):
    """A command past its check for Ctrl-C as the running workers are
    interrupted starts no worker of its own, which nothing would stop."""
    workers = ctrl_c_once_started(2)
    stdout = StartingAsCtrlC("c.json", workers)
    # kept for the process's life: a worker thread's print can still be between the
    # writes of its line as monkeypatch restores sys.stdout, and CPython's print holds
    # sys.stdout by a borrowed reference (a freed stdout crashed CI: a segfault there)
    _STDOUTS_KEPT.append(stdout)
    monkeypatch.setattr(sys, "stdout", stdout)
    tic = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_commands([command(name) for name in "abc"], jobs=3)
    assert time.monotonic() - tic < 2  # a worker left alone runs 4 s
    assert [worker.signals for worker in workers] == [[signal.SIGTERM]] * 2


#: A parent of two ``run`` workers (SLeDGe: some ms a sample, so that a second Ctrl-C
#: would land in one; each checkpointing every 20 samples), the folder of their
#: files its argument.
PARENT = """
import sys
from pathlib import Path
from torch_geometric_stream.cli.parallel import run_commands
folder = Path(sys.argv[1])
run_commands([(["run", "--dataset", "synthetic", "--model", "sledge", "--quiet",
                "--output", str(folder / f"{name}.json"), "--checkpoint",
                str(folder / f"{name}.ckpt"), "--checkpoint-every", "20"],
               folder / f"{name}.json") for name in "ab"], jobs=2)
"""


def test_ctrl_c_at_the_terminal_reaches_each_worker_once_and_each_saves_at_its_sample(
        tmp_path, process_group):
    """A terminal sends Ctrl-C to its whole foreground process group, the workers
    included, and the parent passes it on as SIGTERM: each worker takes the two as
    one interrupt and stops at the end of a sample, its checkpoint and partial
    record there (two Ctrl-C would stop it at once, saving nothing more)."""
    parent = process_group([sys.executable, "-c", PARENT, str(tmp_path)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while not all((tmp_path / f"{name}.ckpt").exists() for name in "ab"):
        if parent.poll() is not None or time.monotonic() > deadline:
            parent.kill()  # its workers too
            pytest.fail(f"the workers saved no checkpoint: {parent.communicate()[1].decode()}")
        time.sleep(0.01)
    os.killpg(parent.pid, signal.SIGINT)
    parent.communicate(timeout=60)
    for name in "ab":
        position = torch.load(tmp_path / f"{name}.ckpt", weights_only=False)["position"]
        record = json.loads((tmp_path / f"{name}.json.partial").read_text())
        assert record["interrupted_at"] == position >= 20
        last_line = (tmp_path / f"{name}.log").read_text().strip().splitlines()[-1]
        assert last_line.startswith(f"run interrupted after sample {position}; ")


#: A ``run`` (its arguments after the script's, its first the sample of the
#: terminal's Ctrl-C) whose parent's SIGTERM comes late: after the stream stopped,
#: as the run writes its files (a parent slow to pass Ctrl-C on, on a busy machine).
LATE_SIGTERM = """
import signal
import sys
from torch_geometric_stream.cli import run
from torch_geometric_stream.cli.main import main
evaluate, write = run.prequential, run._write_outputs
ctrl_c_at = int(sys.argv[1])

def with_ctrl_c(*args, callback, **kwargs):
    def step(position, record):
        if callback is not None:
            callback(position, record)
        if position == ctrl_c_at:
            signal.raise_signal(signal.SIGINT)  # the terminal's
    return evaluate(*args, callback=step, **kwargs)

def write_after_sigterm(*args, **kwargs):
    signal.raise_signal(signal.SIGTERM)  # the parent's, late
    return write(*args, **kwargs)

run.prequential, run._write_outputs = with_ctrl_c, write_after_sigterm
sys.exit(main(sys.argv[2:]))
"""


def test_a_sigterm_after_the_stream_stopped_still_lets_the_run_write_its_files(
        tmp_path, quick_run, process_group):
    """The parent's SIGTERM may come after the terminal's Ctrl-C stopped the
    stream: the run still writes its checkpoint, its partial record and its line."""
    out, checkpoint = tmp_path / "run.json", tmp_path / "run.ckpt"
    argv = quick_run(out, "--checkpoint", str(checkpoint), "--checkpoint-every", "10")
    run = process_group([sys.executable, "-c", LATE_SIGTERM, "14", *argv],
                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = run.communicate(timeout=300)[1].decode()
    assert run.returncode == 130, err
    assert json.loads(out.with_name("run.json.partial").read_text())["interrupted_at"] == 15
    assert torch.load(checkpoint, weights_only=False)["position"] == 15
    assert err.strip().splitlines()[-1].startswith("run interrupted after sample 15; ")


class _StubbornProcess:
    """A worker process that ignores Ctrl-C: its waits time out until it is killed."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def poll(self):
        return None

    def send_signal(self, signum) -> None:
        self.calls.append("signal")

    def wait(self, timeout=None) -> int:
        self.calls.append("wait")
        if "kill" not in self.calls:
            raise subprocess.TimeoutExpired("worker", timeout)
        return -9

    def kill(self) -> None:
        self.calls.append("kill")


def test_a_worker_still_running_after_the_grace_period_is_killed(monkeypatch):
    from torch_geometric_stream.cli import parallel
    monkeypatch.setattr(parallel, "INTERRUPT_GRACE_SECONDS", 0.0)
    workers, process = parallel._Workers(), _StubbornProcess()
    workers._running.add(process)
    workers.interrupt()
    assert process.calls == ["signal", "wait", "kill", "wait"]  # reaped once killed
    assert workers.interrupted.is_set()
