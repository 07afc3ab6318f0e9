"""``benchmarks/propagation.py``: the report names the machines of its results,
refuses a result cut short in one line, a run's result is written whole or not at all,
and the command line refuses bad sizes."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from benchmark_script_helpers import cut_short, usage_error

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
import propagation  # noqa: E402


def test_report_only_names_the_recorded_machine_not_this_one(tmp_path):
    timing = {"median_ms": 1.0, "min_ms": 1.0, "runs": 1, "times_ms": [1.0]}
    result = dict(N=100, k=1, threads=1, hidden=256, num_layers=2, edges=200,
                  sparse_fwd=timing, sparse_fwd_bwd=timing, dense_skipped="too large",
                  cpu="an old CPU", nproc=64, torch="1.0", torch_geometric="2.0",
                  python="3.9", WITH_TORCH_SCATTER=False, WITH_TORCH_SPARSE=True)
    path = propagation.result_path(tmp_path, 100, 1, 1, 256, 2)
    path.write_text(json.dumps(result))
    propagation.main(["--out-dir", str(tmp_path), "--report-only"])
    heading = (tmp_path / "propagation.md").read_text().splitlines()[0]
    assert heading.startswith("### propagation (CPU: an old CPU, nproc=64, torch 1.0, PyG 2.0")
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["cpu"] == "an old CPU" and summary["nproc"] == "64"


def test_report_only_refuses_a_result_cut_short_in_one_line(tmp_path, capsys):
    refusal = cut_short(propagation.result_path(tmp_path, 100, 1, 1, 256, 2))
    error = usage_error(propagation.main, ["--out-dir", str(tmp_path), "--report-only"], capsys)
    assert error.splitlines()[-1].endswith(refusal)
    assert not (tmp_path / "propagation.md").exists()


#: propagation.py measuring N = 2, k = 1 (a made-up result of 100 kB) on a disk that
#: takes 50 kB per file (a full disk, in a process of its own).
FULL_DISK = f"""
import resource, signal, sys
sys.path.insert(0, {str(BENCHMARKS)!r})
import propagation
propagation.measure = lambda N, k, threads, args: {{"padding": "x" * 100_000}}
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, resource.RLIM_INFINITY))
propagation.main(["--sizes", "2", "--ks", "1", "--out-dir", sys.argv[1]])
"""


def test_a_result_cut_short_by_a_full_disk_is_not_left_behind(tmp_path):
    done = subprocess.run([sys.executable, "-c", FULL_DISK, str(tmp_path)],
                          capture_output=True, text=True)
    assert done.returncode == 1 and "File too large" in done.stderr.splitlines()[-1]
    assert list(tmp_path.iterdir()) == []  # neither the result nor a temporary file


@pytest.mark.parametrize("argv, message", [
    (["--sizes", "0"], "--sizes: expected a comma-separated list of integers >= 2"),
    (["--sizes", "1"], "--sizes: expected a comma-separated list of integers >= 2"),
    (["--sizes", "-5"], "--sizes: expected a comma-separated list of integers >= 2"),
    (["--ks", "-1"], "--ks: expected a comma-separated list of integers >= 1"),
    (["--repeats", "0"], "--repeats: expected a positive integer"),
    (["--threads", "0"], "--threads: expected a comma-separated list of integers >= 1"),
    (["--large", "0"], "--large: expected a positive integer"),
    (["--max-seconds", "0"], "--max-seconds: expected a number > 0"),
    (["--max-seconds", "nan"], "--max-seconds: expected a number > 0"),
    (["--dense-max-gb", "-1"], "--dense-max-gb: expected a number > 0"),
])
def test_bad_sizes_are_refused_in_one_line(argv, message, tmp_path, capsys):
    error = usage_error(propagation.main, [*argv, "--out-dir", str(tmp_path / "out")], capsys)
    assert message in error.splitlines()[-1]


def test_the_edge_count_and_summary_json_are_documented():
    # (the edges column counted self-loops without saying so; summary.json was undocumented)
    from benchmark_script_helpers import built_parser

    doc = " ".join(propagation.__doc__.split())
    assert "Its ``edges`` column counts the N self-loops too: N (k + 1) edges." in doc
    assert "``--out-dir``'s ``summary.json`` holds that crossover per (k, threads)" in doc
    (out_dir,) = [action for action in built_parser("propagation")._actions
                  if action.dest == "out_dir"]
    assert "summary.json" in out_dir.help
    readme = (Path(propagation.__file__).parent / "README.md").read_text()
    entry = " ".join(readme.split("- `propagation.py`:")[1].split("- `peers.py`")[0].split())
    assert "Its `edges` column counts each node's self-loop too (N (k + 1) edges)." in entry
    assert "`summary.json` holds per (k, threads) the crossover N" in entry


def test_with_force_a_result_cut_short_that_it_does_not_rewrite_is_refused_before_any_run(
        tmp_path, monkeypatch, capsys):
    # (--force skipped the check: the report refused it after the runs)
    refusal = cut_short(propagation.result_path(tmp_path, 4, 1, 1, 256, 2))
    cut_short(propagation.result_path(tmp_path, 2, 1, 1, 256, 2))  # rewritten
    monkeypatch.setattr(propagation, "measure", lambda *args: pytest.fail("ran"))
    argv = ["--sizes", "2", "--ks", "1", "--force", "--out-dir", str(tmp_path)]
    assert usage_error(propagation.main, argv, capsys).splitlines()[-1].endswith(refusal)
