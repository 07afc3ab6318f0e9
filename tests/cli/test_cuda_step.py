"""``benchmarks/cuda_step.py``'s command line: bad counts, unknown configs or
models, and a size too small for a config are refused before the CUDA check, so
these tests need no GPU."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from benchmark_script_helpers import usage_error

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import cuda_step  # noqa: E402


@pytest.mark.parametrize("argv, message", [
    (["--warmup", "-1"], "--warmup: expected an integer >= 0, got '-1'"),
    (["--warmup", "few"], "--warmup: expected an integer >= 0, got 'few'"),
    (["--steps", "0"], "--steps: expected an integer >= 1, got '0'"),
    (["--size", "0"], "--size: expected an integer >= 1, got '0'"),
    (["--sync-steps", "0"], "--sync-steps: expected an integer >= 1, got '0'"),
    (["--repeat-steps", "-5"], "--repeat-steps: expected an integer >= 1, got '-5'"),
    # step_latency's check of the selection: names, and sizes too small for a config
    (["--configs", "gsad,cifar"], "--configs: unknown config 'cifar'"),
    (["--models", "ours-full,ours"], "--models: unknown model 'ours'"),
    (["--models", ","], "--models: names no model, got ','"),
    # the dense reference runs on the CPU only (it has no ``to``)
    (["--models", "ours-full,ref-full"],
     "--models: unknown model 'ref-full' (known: ours-full, ours-light, ours-light-full)"),
    (["--configs", ""], "--configs: names no config, got ''"),
    (["--size", "10", "--configs", "gsad"], "--size: config gsad: M = 10 is too small"),
    (["--size", "14", "--configs", "gsad,mnist", "--models", "ours-light"],
     "--size: config mnist: M = 14 is too small for ours-light"),
])
def test_bad_counts_and_selections_are_refused_before_the_cuda_check(argv, message, tmp_path,
                                                                     capsys):
    error = usage_error(cuda_step.main, [*argv, "--out-dir", str(tmp_path / "out")], capsys)
    assert f"argument {message}" in error.splitlines()[-1]
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="the check for a CUDA device passes here")
def test_the_least_counts_pass_to_the_cuda_check(tmp_path):
    argv = ["--warmup", "0", "--steps", "1", "--size", "15", "--sync-steps", "1",
            "--repeat-steps", "1", "--out-dir", str(tmp_path / "out")]
    with pytest.raises(SystemExit, match="no CUDA device"):
        cuda_step.main(argv)
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="the check for a CUDA device passes here")
def test_without_cuda_it_ends_as_its_help_says(tmp_path, capsys):
    with pytest.raises(SystemExit):
        cuda_step.main(["--help"])
    described = " ".join(capsys.readouterr().out.split())
    assert "Without a CUDA device it prints 'no CUDA device' and exits with code 1" in described
    ended = subprocess.run([sys.executable, cuda_step.__file__, "--steps", "1", "--out-dir",
                            str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert (ended.returncode, ended.stderr) == (1, "no CUDA device\n")


def test_syncs_are_attributed_to_the_package_s_folder_not_to_a_checkout_named_after_it(
        tmp_path):
    # (a substring test of "torch_geometric_stream" in the file name also took this
    # script's own frames, in a checkout folder of that name, for the package's)
    import traceback

    inside = str(cuda_step.PACKAGE_DIR / "models" / "sledge.py")
    script = str(tmp_path / "torch_geometric_stream" / "benchmarks" / "cuda_step.py")
    stack = [traceback.FrameSummary(name, 1, "f") for name in (script, inside)]
    assert [f.filename for f in cuda_step.package_frames(stack)] == [inside]


def test_sync_sites_restores_the_sync_debug_mode_when_a_step_fails(monkeypatch):
    modes = []
    monkeypatch.setattr(torch.cuda, "get_sync_debug_mode", lambda: 0)
    monkeypatch.setattr(torch.cuda, "set_sync_debug_mode", modes.append)

    def step(row, label):
        raise RuntimeError("a failing step")

    with pytest.raises(RuntimeError, match="a failing step"):
        cuda_step.sync_sites(step, torch.zeros(2, 1), [0, 0], 2)
    assert modes == ["warn", 0]
