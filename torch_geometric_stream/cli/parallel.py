"""Run many ``run`` commands, one after the other or in worker processes.

``tune --jobs N`` and ``benchmarks/accuracy.py --jobs N`` fill their grids through
:func:`run_commands`. A run's result does not depend on the number of jobs (each
run is seeded and runs in one process); only its timings do, since the workers
share the machine's cores.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Callable, Optional, Sequence

import torch_geometric_stream

__all__ = ["run_commands"]


def run_commands(commands: Sequence[tuple[list[str], Path]], jobs: int = 1, threads: int = 1,
                 stop_on_failure: bool = False,
                 on_success: Optional[Callable[[Path], None]] = None) -> list[Optional[int]]:
    """Run ``(argv, output)`` pairs of ``python -m torch_geometric_stream``
    arguments and return their exit codes, in order.

    Args:
        commands: the arguments of each command (e.g. ``["run", "--dataset", ...]``)
            and the JSON it writes, which names the command in progress messages.
        jobs (int): ``1`` runs the commands in this process, one after the other;
            ``N > 1`` runs up to ``N`` at once, each in its own Python process with
            ``OMP_NUM_THREADS=threads``. A worker's output goes to
            ``<output>.log``, which is deleted when the command succeeds and kept
            (and named) when it fails.
        threads (int): threads of each worker process.
        stop_on_failure (bool): after a failure, start no further command (those
            already running finish); the ones never started get ``None``.
        on_success (callable, optional): called with a command's output path as
            soon as that command succeeds (e.g. to delete its checkpoint), so
            that an interrupted batch has tidied up after every finished run.

    On Ctrl-C no further command starts; the interrupt propagates once the
    running ones have ended.
    """
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, got {jobs}")
    failed = threading.Event()
    run_one = _run_here if jobs == 1 else _run_in_worker

    def run(command: tuple[list[str], Path]) -> Optional[int]:
        if stop_on_failure and failed.is_set():
            return None
        argv, output = command
        print(f"start {output.name}", flush=True)
        code = run_one(argv, output, threads)
        if code == 0:
            print(f"done {output.name}", flush=True)
            if on_success is not None:
                on_success(output)
        else:
            failed.set()
            print(f"failed with exit code {code}: {output.name}"
                  + (f" (output in {output.with_suffix('.log')})" if jobs > 1 else ""),
                  flush=True)
        return code

    if jobs == 1:
        return [run(command) for command in commands]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        try:
            return list(pool.map(run, commands))
        except KeyboardInterrupt:  # start no further command; the running ones finish
            pool.shutdown(cancel_futures=True)
            raise


def _run_here(argv: list[str], output: Path, threads: int) -> int:
    from torch_geometric_stream.cli.main import dispatch  # the parser lives there
    return dispatch(argv)


def _run_in_worker(argv: list[str], output: Path, threads: int) -> int:
    package_parent = str(Path(torch_geometric_stream.__file__).resolve().parents[1])
    env = {**os.environ, "OMP_NUM_THREADS": str(threads),
           "PYTHONPATH": os.pathsep.join(filter(None, [package_parent,
                                                       os.environ.get("PYTHONPATH")]))}
    log = output.with_suffix(".log")
    with log.open("w") as out:
        code = subprocess.run([sys.executable, "-m", "torch_geometric_stream", *argv],
                              stdout=out, stderr=subprocess.STDOUT, env=env).returncode
    if code == 0:
        log.unlink()
    return code
