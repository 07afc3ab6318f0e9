"""``flush_denormal``: denormal floats read as zero inside the block, the
process's previous setting back after it."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings

import pytest
import torch

from torch_geometric_stream.ops import flush_denormal, flushes_denormal

#: float32's denormals lie under 1.18e-38.
FLOAT32_DENORMAL = 1e-40


def _supported() -> bool:
    supported = torch.set_flush_denormal(True)
    torch.set_flush_denormal(False)
    return supported


pytestmark = pytest.mark.skipif(not _supported(), reason="this CPU cannot flush denormals")


@pytest.fixture(autouse=True)
def _flushing_off():
    torch.set_flush_denormal(False)
    yield
    torch.set_flush_denormal(False)


def _denormal_product() -> float:
    return (torch.tensor([FLOAT32_DENORMAL]) * 1.0).item()


def test_denormals_read_as_zero_inside_and_survive_after():
    assert not flushes_denormal() and _denormal_product() > 0.0
    with flush_denormal() as supported:
        assert supported and flushes_denormal()
        assert _denormal_product() == 0.0
    assert not flushes_denormal() and _denormal_product() == pytest.approx(FLOAT32_DENORMAL)


def test_a_process_that_flushed_before_still_flushes_after():
    torch.set_flush_denormal(True)
    with flush_denormal():
        pass
    assert flushes_denormal()


def test_nested_blocks_keep_the_outer_setting_until_the_outer_exit():
    with flush_denormal():
        with flush_denormal():
            pass
        assert flushes_denormal()
    assert not flushes_denormal()


def test_the_setting_is_restored_when_the_block_raises():
    with pytest.raises(RuntimeError, match="inside"):
        with flush_denormal():
            raise RuntimeError("inside")
    assert not flushes_denormal()


def test_a_cpu_that_cannot_flush_runs_the_block_unchanged_without_a_warning(monkeypatch):
    """Where torch cannot set flushing, the block yields False and asks no
    worker thread (none flushes: that is no news)."""
    calls = []
    monkeypatch.setattr(torch, "set_flush_denormal", lambda mode: calls.append(mode) or False)
    monkeypatch.setattr(torch, "get_num_threads", lambda: 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with flush_denormal() as supported:
            assert supported is False and not flushes_denormal()
    assert calls == [True, False]


def test_the_worker_thread_warning_points_at_the_with_statement(monkeypatch):
    from torch_geometric_stream.ops import denormal

    monkeypatch.setattr(torch, "get_num_threads", lambda: 2)
    # the calling thread flushes, the (pretended) worker threads do not
    monkeypatch.setattr(denormal, "flushes_denormal", lambda all_threads=False: not all_threads)
    with pytest.warns(RuntimeWarning, match="1 intra-op worker thread") as caught:
        with flush_denormal():
            pass
    assert caught[0].filename == __file__


def _in_fresh_process(code: str) -> str:
    """Run ``code`` in a new interpreter (torch's worker threads not yet started)
    and return its stdout."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "OMP_NUM_THREADS": "2"})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_worker_threads_started_before_the_block_are_named_in_a_warning():
    out = _in_fresh_process("""
        import warnings, torch
        from torch_geometric_stream.ops import flush_denormal, flushes_denormal
        torch.set_num_threads(2)
        torch.ones(1_000_000).mul(2.0)  # starts the intra-op worker thread
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with flush_denormal():
                print(flushes_denormal(), flushes_denormal(all_threads=True))
        print(len(caught), caught[0].category.__name__ if caught else "")
        print("1 intra-op worker thread(s), started before" in str(caught[0].message))
    """)
    assert out.split("\n") == ["True False", "1 RuntimeWarning", "True"]


def test_worker_threads_started_inside_the_block_flush_too():
    out = _in_fresh_process("""
        import warnings, torch
        from torch_geometric_stream.ops import flush_denormal, flushes_denormal
        torch.set_num_threads(2)
        warnings.simplefilter("error")
        with flush_denormal():
            torch.ones(1_000_000).mul(2.0)
            print(flushes_denormal(all_threads=True))
    """)
    assert out == "True"


def test_the_all_threads_probe_allocates_a_bounded_share(monkeypatch):
    """Before, it asked for 65,536 float64 per thread whatever their number:
    52 GB for ``torch.set_num_threads(99999)`` (``run --threads 99999`` crashed)."""
    from torch_geometric_stream.ops import denormal

    sizes, full = [], torch.full
    monkeypatch.setattr(torch, "full", lambda size, *args, **kwargs: sizes.append(size[0])
                        or full((1,), *args, **kwargs))
    for threads in (1, 4, 128, 99999):
        monkeypatch.setattr(torch, "get_num_threads", lambda: threads)
        assert flushes_denormal(all_threads=True) is False
    assert sizes == [2 ** 16, 2 ** 18, 2 ** 23, 2 ** 23]  # 64 MiB of float64 at most
    assert denormal._MAX_PROBED_THREADS == 128
