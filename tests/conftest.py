"""Fixtures shared by every test folder."""
from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from torch_geometric_stream.datasets import DATASETS, default_data_root

# Helper modules (``tests/<folder>/*_helpers.py``) importable by name: pytest
# runs with --import-mode=importlib, which puts no test folder on sys.path.
for _folder in sorted({str(path.parent) for path in Path(__file__).parent.glob("*/*_helpers.py")}):
    if _folder not in sys.path:
        sys.path.insert(0, _folder)

# The suite's Python subprocesses (a script's stderr is compared whole) ignore
# torch's TorchScript deprecation as pytest.ini does here: PyG 2.8.1's import
# scripts two classes, and torch 2.15 warns of it with a FutureWarning, shown
# (torch 2.13: a DeprecationWarning, not shown outside __main__).
os.environ["PYTHONWARNINGS"] = ",".join(filter(None, (
    os.environ.get("PYTHONWARNINGS"), "ignore:`torch.jit.script` is deprecated")))


@pytest.fixture(scope="session")
def data_root() -> Path:
    """The shared real-data folder (``$TGS_DATA_ROOT`` or ``shared/data`` beside the
    checkout), or skip."""
    root = default_data_root() or Path(__file__).resolve().parents[2] / "shared" / "data"
    if not root.is_dir():
        pytest.skip("no local data folder (set TGS_DATA_ROOT)")
    return root


@pytest.fixture(scope="session")
def dataset_root(data_root):
    """``dataset_root(NAME)``: the data folder, or skip when it lacks dataset NAME (a
    machine may hold some of the paper's streams and not others)."""
    def holding(name: str) -> Path:
        if not (data_root / DATASETS[name].folder).is_dir():
            pytest.skip(f"{name} not in {data_root}")
        return data_root
    return holding


@pytest.fixture
def interrupt_run_after(monkeypatch):
    """``interrupt_run_after(samples)``: Ctrl-C in the next ``run`` command's
    ``prequential``, after ``samples`` samples (and the checkpoint of the last of
    them, if one is due); ``monkeypatch.undo()`` lets later runs go through."""
    from torch_geometric_stream.cli import run as run_module

    def interrupt(samples: int) -> None:
        evaluate = run_module.prequential

        def interrupted(*args, callback, **kwargs):
            def step(position, record):
                callback(position, record)
                if position + 1 == samples:
                    raise KeyboardInterrupt
            return evaluate(*args, callback=step, **kwargs)
        monkeypatch.setattr(run_module, "prequential", interrupted)
    return interrupt


@pytest.fixture
def ctrl_c_in_sample(monkeypatch, request):
    """``ctrl_c_in_sample(position, times=1, call=1)``: the ``call``-th
    ``prequential`` of the next ``run`` command (its ``call``-th seed) gets
    ``times`` real Ctrl-C (SIGINT to this process, handled at once) in the middle
    of the sample at stream ``position``: as its input is transformed, before the
    learner sees it; ``monkeypatch.undo()`` lets later runs go through. Python's
    own Ctrl-C handler is in place for the test (not a JVM's that CapyMOA may
    have left)."""
    from torch_geometric_stream.cli import run as run_module

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, previous))

    def interrupt(position: int, times: int = 1, call: int = 1) -> None:
        evaluate, calls = run_module.prequential, []

        def interrupted(*args, transform, start=0, **kwargs):
            calls.append(start)
            positions = iter(range(start, sys.maxsize))

            def transforming(x):
                if next(positions) == position and len(calls) == call:
                    for _ in range(times):
                        signal.raise_signal(signal.SIGINT)
                return x if transform is None else transform(x)
            return evaluate(*args, transform=transforming, start=start, **kwargs)
        monkeypatch.setattr(run_module, "prequential", interrupted)
    return interrupt


#: How long a thread a test started may take to end after the test.
THREAD_GRACE_SECONDS = 1.0


def _outlives_tests(thread) -> bool:
    """Whether ``thread`` is a library's that lives on by design once started:
    tqdm's monitor of its bars, multiprocessing's sharer of file descriptors."""
    from multiprocessing import resource_sharer

    from tqdm._monitor import TMonitor

    return (isinstance(thread, TMonitor)
            or thread is getattr(resource_sharer._resource_sharer, "_thread", None))


@pytest.fixture(autouse=True)
def no_thread_outlives_its_test(request):
    """Fail a test that leaves a thread of its own running (after
    :data:`THREAD_GRACE_SECONDS`): a thread left running by one test ran on
    into the next, and a child that one started crashed the test run."""
    import threading
    import time

    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + THREAD_GRACE_SECONDS
    while True:
        left = {thread for thread in set(threading.enumerate()) - before
                if not _outlives_tests(thread)}
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.01)
    if left:
        pytest.fail(f"{request.node.nodeid} left threads running: "
                    f"{sorted(thread.name for thread in left)}", pytrace=False)
