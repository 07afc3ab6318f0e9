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
    result = dict(format=3, aggregation="csr", N=100, k=1, threads=1, hidden=256,
                  num_layers=2, edges=200,
                  sparse_fwd=timing, sparse_fwd_bwd=timing, dense_skipped="too large",
                  cpu="an old CPU", nproc=64, torch="1.0", torch_geometric="2.0",
                  python="3.9", WITH_TORCH_SCATTER=False, WITH_TORCH_SPARSE=True)
    path = propagation.result_path(tmp_path, 100, 1, 1, 256, 2)
    path.write_text(json.dumps(result))
    propagation.main(["--out-dir", str(tmp_path), "--report-only"])
    heading = (tmp_path / "propagation_h256_l2.md").read_text().splitlines()[0]
    assert heading.startswith("### propagation (CPU: an old CPU, nproc=64, torch 1.0, PyG 2.0")
    summary = json.loads((tmp_path / "summary_h256_l2.json").read_text())
    assert summary["cpu"] == "an old CPU" and summary["nproc"] == "64"


def test_report_only_refuses_a_result_cut_short_in_one_line(tmp_path, capsys):
    refusal = cut_short(propagation.result_path(tmp_path, 100, 1, 1, 256, 2))
    error = usage_error(propagation.main, ["--out-dir", str(tmp_path), "--report-only"], capsys)
    assert error.splitlines()[-1].endswith(refusal)
    assert not (tmp_path / "propagation_h256_l2.md").exists()


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
    (["--threads", "1,1025"], "--threads: expected a comma-separated list of integers >= 1 "
                              "and <= 1024, got '1,1025'"),
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
    assert ("Its ``edges`` column counts N (k + 2) edges: symmetric normalization keeps each "
            "node's own edge at weight 0 and appends N self-loops") in doc
    assert ("``--out-dir``'s ``summary_hH_lL.json`` (H = ``--hidden``, L = ``--num-layers``, "
            "both recorded in it too) holds those crossovers per (k, threads)") in doc
    (out_dir,) = [action for action in built_parser("propagation")._actions
                  if action.dest == "out_dir"]
    assert "summary_hH_lL.json" in out_dir.help
    readme = (Path(propagation.__file__).parent / "README.md").read_text()
    entry = " ".join(readme.split("- `propagation.py`:")[1].split("- `peers.py`")[0].split())
    assert ("Its `edges` column counts N (k + 2) edges: symmetric normalization keeps each "
            "node's own edge at weight 0 and appends N self-loops.") in entry
    assert "`summary_hH_lL.json` holds per (k, threads) the crossover N" in entry


def test_with_force_a_result_cut_short_that_it_does_not_rewrite_is_refused_before_any_run(
        tmp_path, monkeypatch, capsys):
    # (--force skipped the check: the report refused it after the runs)
    refusal = cut_short(propagation.result_path(tmp_path, 4, 1, 1, 256, 2))
    cut_short(propagation.result_path(tmp_path, 2, 1, 1, 256, 2))  # rewritten
    monkeypatch.setattr(propagation, "measure", lambda *args: pytest.fail("ran"))
    argv = ["--sizes", "2", "--ks", "1", "--force", "--out-dir", str(tmp_path)]
    assert usage_error(propagation.main, argv, capsys).splitlines()[-1].endswith(refusal)


def timing(*times):
    return {"median_ms": sorted(times)[len(times) // 2], "times_ms": list(times)}


def test_a_win_needs_interquartile_ranges_apart_and_an_overlap_is_a_tie():
    # (any median ratio > 1 counted as a sparse win)
    def row(N, sparse, dense):
        return {"N": N, "sparse_fwd": timing(*sparse), "dense_fwd": timing(*dense)}
    apart = row(100, (1.0, 1.1, 1.2), (2.0, 2.1, 2.2))
    overlap = row(200, (1.0, 1.5, 2.0), (1.6, 1.7, 2.6))
    dense_wins = row(50, (2.0, 2.1, 2.2), (1.0, 1.1, 1.2))
    assert [propagation.verdict(r, "fwd") for r in (apart, overlap, dense_wins)] == [
        "sparse", "tie", "dense"]
    assert propagation.crossover([overlap, apart], "fwd") == "> 200 (tie at the largest measured N)"
    assert propagation.crossover([apart, overlap | {"N": 400}, apart | {"N": 800}],
                                 "fwd") == "<= 800 (tie at 400)"
    # a dense win then a sparse win: the ratio's 1 interpolated, log-linear
    assert propagation.crossover([dense_wins, apart], "fwd") == "~71 (between 50 and 100)"
    assert propagation.crossover([apart], "fwd") == "< 100 (sparse faster at every measured N)"


def test_the_paths_are_timed_interleaved_in_a_rotating_order():
    calls = []
    fns = {name: (lambda name=name: calls.append(name)) for name in "abc"}
    times = propagation.interleaved(fns, 3, max_seconds=1e9)
    assert "".join(calls) == "abc" + "abc" + "bca" + "cab"  # warm-up, then 3 repeats
    assert {name: len(t) for name, t in times.items()} == {"a": 3, "b": 3, "c": 3}


def measured(N, dense_max_gb=4.0, graph_grad=True, device="cpu"):
    import argparse
    args = argparse.Namespace(hidden=4, num_layers=2, repeats=3, repeats_large=3, large=10**9,
                              max_seconds=1.0, dense_max_gb=dense_max_gb, graph_grad=graph_grad,
                              device=device)
    return propagation.measure(N, 2, 1, args)


def test_a_result_records_what_it_measured_with_quartiles_and_dense_incl_build():
    result = measured(20)
    assert result["format"] == propagation.FORMAT and result["aggregation"] == "csr"
    assert result["edges"] == 20 * (2 + 2)  # N (k + 2): N loops appended, own edges kept at 0
    for name in ("sparse_fwd", "scatter_fwd_bwd", "dense_fwd", "dense_incl_build_fwd",
                 "dense_incl_build_fwd_bwd", "dense_build"):
        entry = result[name]
        assert entry["runs"] == 3 and entry["p25_ms"] <= entry["median_ms"] <= entry["p75_ms"]


def test_dense_is_skipped_by_its_peak_not_by_one_matrix():
    # (--dense-max-gb compared one (N, N) matrix; the dense part holds about four, in the
    # agreement check's float64)
    one = 100 * 100 * 8 / 1e9
    result = measured(100, dense_max_gb=3.9 * one)
    assert "dense_fwd" not in result and "dense_build" not in result
    assert result["dense_skipped"].startswith("4 (N, N) float64 matrices (the agreement "
                                              "check's) = 0.0 GB")
    assert "dense_fwd" in measured(100, dense_max_gb=4 * one)


def write(path, **entries):
    t = {"median_ms": 1.0, "p25_ms": 1.0, "p75_ms": 1.0, "times_ms": [1.0]}
    result = dict(N=100, k=1, threads=1, hidden=256, num_layers=2, edges=300, sparse_fwd=t,
                  sparse_fwd_bwd=t, dense_skipped="too large", cpu="c", nproc=2) | entries
    path.write_text(json.dumps(result))


def test_a_stale_result_is_measured_again_and_never_reported(tmp_path, monkeypatch, capsys):
    # (session 1's files, whose "sparse" was GCNConv's gather/scatter, were skipped as
    # present and reported as the CSR path)
    stale = propagation.result_path(tmp_path, 100, 1, 1, 256, 2)
    current = propagation.result_path(tmp_path, 200, 1, 1, 256, 2)
    other = propagation.result_path(tmp_path, 400, 1, 1, 256, 2)
    write(stale)
    write(current, N=200, format=2, aggregation="csr")
    write(other, N=400, format=3, aggregation="message_passing")
    propagation.main(["--out-dir", str(tmp_path), "--report-only"])
    out = capsys.readouterr().out
    assert (f"not reported: {stale.name}: stale: format not recorded, sparse aggregation not "
            "recorded (this script writes format 4, aggregation 'csr')") in out
    assert f"not reported: {other.name}: stale: format 3, sparse aggregation message_passing" in out
    rows = [line for line in out.splitlines() if "| blocks |" in line or "| interleaved |" in line]
    assert [row.split(" | ")[0] for row in rows] == ["| 200"]
    ran = []
    monkeypatch.setattr(propagation, "measure", lambda N, *args: ran.append(N) or dict(
        json.loads(stale.read_text()), N=N, format=4, aggregation="csr", max_rel_error=0.0))
    write(current, N=200, format=4, aggregation="csr", **here())
    propagation.main(["--out-dir", str(tmp_path), "--sizes", "100,200,400", "--ks", "1"])
    out = capsys.readouterr().out
    assert ran == [100, 400] and f"skip {current.name} (exists)" in out
    assert f"re-measure {stale.name}: stale: format not recorded" in out


def here():
    """What a result measured on this machine records of it."""
    import torch_geometric
    from machine import measured_on

    return dict(measured_on(), torch_geometric=torch_geometric.__version__)


def test_a_result_of_another_machine_or_an_older_format_is_measured_again_not_reused(
        tmp_path, monkeypatch, capsys):
    # (a result counted as present by its file name: a rerun on another machine printed
    # "skip ... (exists)" and reported the shipped results of this repository's host)
    shipped = propagation.result_path(tmp_path, 100, 1, 1, 256, 2)
    older = propagation.result_path(tmp_path, 200, 1, 1, 256, 2)
    mine = propagation.result_path(tmp_path, 400, 1, 1, 256, 2)
    write(shipped, format=4, aggregation="csr", **(here() | {"cpu": "an old CPU"}))
    write(older, N=200, format=3, aggregation="csr", **here())
    write(mine, N=400, format=4, aggregation="csr", **here())
    ran = []
    monkeypatch.setattr(propagation, "measure", lambda N, *args: ran.append(N) or dict(
        json.loads(mine.read_text()), N=N, max_rel_error=0.0))
    propagation.main(["--out-dir", str(tmp_path), "--sizes", "100,200,400", "--ks", "1"])
    out = capsys.readouterr().out
    assert ran == [100, 200] and f"skip {mine.name} (exists)" in out
    assert (f"re-measure {shipped.name}: measured elsewhere: cpu 'an old CPU' (here "
            f"{here()['cpu']!r})") in out
    assert (f"re-measure {older.name}: format 3 (its neighbours drawn with replacement; this "
            "script writes format 4, k distinct neighbours)") in out


def test_a_result_without_the_machine_s_simd_entries_is_not_taken_for_this_machine_s():
    from machine import other_machine

    result = here()
    assert other_machine(result, here()) is None
    del result["machine"]["simd"]
    assert other_machine(result, here()) == (f"measured elsewhere: machine.simd 'not recorded' "
                                             f"(here {here()['machine']['simd']!r})")
    assert "nproc 64 (here" in other_machine(here() | {"nproc": 64}, here())


def test_crossovers_are_per_host_never_across_machines():
    # (the crossovers grouped by (k, threads) only: two machines' rows made one curve)
    def row(N, cpu, sparse, dense):
        return dict(N=N, k=1, threads=1, cpu=cpu, nproc=2, edges=3 * N, format=4,
                    sparse_fwd=timing(*sparse), dense_fwd=timing(*dense),
                    sparse_fwd_bwd=timing(*sparse), dense_fwd_bwd=timing(*dense))
    fast, slow = (1.0, 1.1, 1.2), (2.0, 2.1, 2.2)
    results = [row(100, "cpu A", slow, fast), row(200, "cpu B", fast, slow)]
    _, cross, summary = propagation.table(results)
    assert [(s["cpu"], s["crossover_fwd"]) for s in summary] == [
        ("cpu A", "> 100 (dense at the largest measured N)"),
        ("cpu B", "< 200 (sparse faster at every measured N)")]
    assert cross.splitlines()[2].startswith("| cpu A, nproc=2 | 1 | 1 | > 100 (dense")


def test_the_paths_agree_in_outputs_and_gradients_and_the_error_is_recorded():
    result = measured(20)
    assert set(result["rel_errors"]) == {"scatter_fwd", "dense_fwd", "dense_incl_build_fwd",
                                         "scatter_fwd_bwd", "dense_fwd_bwd",
                                         "dense_incl_build_fwd_bwd"}
    assert 0 <= result["max_rel_error"] <= propagation.TOLERANCE == 1e-10
    assert result["check_dtype"] == "float64"
    assert result["max_rel_error"] == max(result["rel_errors"].values())


def test_a_path_that_disagrees_stops_the_run_loudly_and_writes_no_result(
        tmp_path, monkeypatch, capsys):
    # (only the CSR and dense forwards were compared, recorded and never checked)
    from torch_geometric_stream.graph.normalization import dense_adjacency

    def off(edge_index, edge_weight, N, check=True):  # a dense path 1 % off
        return dense_adjacency(edge_index, edge_weight, N, check=check) * 1.01
    monkeypatch.setattr(propagation, "dense_adjacency", off)
    argv = ["--sizes", "20", "--ks", "2", "--hidden", "4", "--repeats", "2",
            "--out-dir", str(tmp_path)]
    with pytest.raises(SystemExit) as exit_info:
        propagation.main(argv)
    assert exit_info.value.code == 1
    error = capsys.readouterr().err.splitlines()[-1]
    assert error.endswith("error: N=20 k=2 t=1: dense_fwd disagrees with sparse_fwd: its "
                          "output differs by 1.00e-02 relative (> 1e-10); no result written")
    assert list(tmp_path.glob(propagation.RESULT_FILES)) == []


def test_the_gradient_check_reads_the_dense_adjacency_s_gradient_at_the_edges(monkeypatch):
    # a wrong gradient (not the output) is caught too
    result = measured(20)
    original = propagation.GCNBackbone.forward_dense

    def scaled_gradient(self, x, adj):
        if adj.requires_grad:
            adj = adj + (adj * 0.01 - (adj * 0.01).detach())  # same value, 1.01 x gradient
        return original(self, x, adj)
    monkeypatch.setattr(propagation.GCNBackbone, "forward_dense", scaled_gradient)
    with pytest.raises(propagation.PathsDisagree, match="dense_fwd_bwd disagrees with "
                       "sparse_fwd_bwd: its edge weight gradient differs by 1.00e-02"):
        measured(20)
    assert result["max_rel_error"] < 1e-4


def test_every_node_gets_k_distinct_neighbours_other_than_itself():
    # (randint drew them with replacement: 48 of 1,000 duplicates at N = 100, k = 10)
    import torch

    gen = torch.Generator().manual_seed(0)
    for N, k in ((100, 10), (11, 10), (2, 1), (1000, 5)):
        (source, target), weight = propagation.random_topk_graph(N, k, gen)
        assert source.numel() == target.numel() == weight.numel() == N * (k + 1)
        pairs = set(zip(source.tolist(), target.tolist()))
        assert len(pairs) == N * (k + 1)  # no duplicate edge
        assert (target.bincount(minlength=N) == k + 1).all()
        assert sum(s == t for s, t in pairs) == N  # the self-edge, and only it
    (source, target), _ = propagation.random_topk_graph(11, 10, gen)
    assert set(zip(source.tolist(), target.tolist())) == {(s, t) for s in range(11)
                                                          for t in range(11)}
    with pytest.raises(ValueError, match="need 1 <= k < N, got N = 5"):
        propagation.random_topk_graph(5, 5, gen)


def test_k_of_at_least_n_is_refused_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(propagation, "measure", lambda *args: pytest.fail("ran"))
    argv = ["--sizes", "100,10", "--ks", "5,10", "--out-dir", str(tmp_path)]
    assert usage_error(propagation.main, argv, capsys).splitlines()[-1].endswith(
        "error: argument --ks: k = 10 distinct neighbours other than the node "
        "itself need N > k, but --sizes has N = 10")


def test_graph_grad_no_times_a_fixed_graph_in_files_of_its_own(tmp_path):
    # (fwd+bwd always computed the graph's gradient, the dense N x N adjacency's)
    result = measured(20, graph_grad=False)
    assert result["graph_grad"] is False and result["max_rel_error"] <= 1e-4
    assert measured(20)["graph_grad"] is True
    argv = ["--sizes", "8", "--ks", "1", "--hidden", "2", "--repeats", "2", "--max-seconds",
            "0.01", "--out-dir", str(tmp_path)]
    propagation.main([*argv, "--graph-grad", "no"])
    propagation.main(argv)
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "propagation_N8_k1_t1_h2_l2.json", "propagation_N8_k1_t1_h2_l2_no-graph-grad.json",
        "propagation_h2_l2.md", "propagation_h2_l2_no-graph-grad.md", "summary_h2_l2.json",
        "summary_h2_l2_no-graph-grad.json"]
    assert json.loads((tmp_path / "summary_h2_l2_no-graph-grad.json").read_text())[
        "graph_grad"] is False
    assert "(--graph-grad no: a fixed graph)" in (
        tmp_path / "propagation_h2_l2_no-graph-grad.md").read_text()
    assert propagation.result_path(tmp_path, 8, 1, 1, 2, 2) == propagation.result_path(
        tmp_path, 8, 1, 1, 2, 2, graph_grad=True)  # the committed names stay valid


def test_a_result_records_its_provenance_and_too_many_threads_are_warned_of(
        tmp_path, monkeypatch, capsys):
    # (no git commit, package version, cpu_capability / SIMD / MKL_CBWR or seed)
    import machine

    propagation.main(["--sizes", "8", "--ks", "1", "--hidden", "2", "--repeats", "2",
                      "--max-seconds", "0.01", "--out-dir", str(tmp_path)])
    result = json.loads(propagation.result_path(tmp_path, 8, 1, 1, 2, 2).read_text())
    assert result["machine"] == json.loads(json.dumps(here()["machine"]))
    assert {"cpu_capability", "simd", "mkl_cbwr"} <= set(result["machine"])
    assert {"git_commit", "package_version"} <= set(result["software"])
    assert (result["seed"], result["model_seed"]) == (8 * 100 + 1, 0)
    assert "warning" not in capsys.readouterr().err
    monkeypatch.setattr(machine.os, "sched_getaffinity", lambda pid: {0}, raising=False)
    monkeypatch.setattr(propagation, "measure", lambda N, k, threads, args: dict(
        result, threads=threads))
    propagation.main(["--sizes", "8", "--ks", "1", "--hidden", "2", "--threads", "1,2",
                      "--out-dir", str(tmp_path)])
    assert capsys.readouterr().err == ("warning: --threads 2 exceeds the 1 CPUs available to "
                                       "this process: its threads share CPUs\n")


def test_report_only_refuses_a_missing_out_dir_in_one_line(tmp_path, capsys):
    # (it created the folder and reported "no results", exit status 0)
    missing = tmp_path / "missing"
    error = usage_error(propagation.main, ["--out-dir", str(missing), "--report-only"], capsys)
    assert error.splitlines()[-1].endswith(f"error: --out-dir: folder {missing} does not exist")
    assert not missing.exists()


def test_every_dense_adjacency_is_built_unchecked_as_the_timed_calls_build_it(monkeypatch):
    # (dense build timed dense_adjacency(..., check=True), dense incl. build check=False)
    checks = []
    original = propagation.dense_adjacency

    def recorded(*args, check=True):
        checks.append(check)
        return original(*args, check=check)
    monkeypatch.setattr(propagation, "dense_adjacency", recorded)
    measured(10)
    assert checks and not any(checks)


def test_an_unknown_device_is_refused_in_one_line(tmp_path, capsys):
    for device in ("bogus", "cuda:", "cuda:x", "mps", "cpu:0"):
        error = usage_error(propagation.main, ["--device", device, "--out-dir",
                                               str(tmp_path / "out")], capsys)
        assert error.splitlines()[-1].endswith(
            f"error: argument --device: expected cpu, cuda or cuda:N, got {device!r}")
    assert not (tmp_path / "out").exists()


def test_without_cuda_a_cuda_run_prints_one_line_and_exits_with_status_1(
        tmp_path, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(propagation, "measure", lambda *args: pytest.fail("ran"))
    for device in ("cuda", "cuda:1"):
        with pytest.raises(SystemExit) as exit_info:  # (sys.exit: the line, status 1)
            propagation.main(["--sizes", "8", "--ks", "1", "--device", device, "--out-dir",
                              str(tmp_path / "out")])
        assert exit_info.value.code == "no CUDA device"
    assert not (tmp_path / "out").exists()
    ended = subprocess.run([sys.executable, "-c", "import sys, torch; torch.cuda.is_available "
                            "= lambda: False; sys.argv[0] = 'propagation.py'; sys.path.insert("
                            f"0, {str(BENCHMARKS)!r}); import propagation; propagation.main()",
                            "--device", "cuda", "--out-dir", str(tmp_path / "out")],
                           capture_output=True, text=True, timeout=120)
    assert (ended.returncode, ended.stderr) == (1, "no CUDA device\n")


def test_a_cpu_result_records_its_device_and_its_graphs_analytic_bytes(tmp_path):
    # (no device, and no memory of any path, was recorded)
    result = measured(20)  # k = 2: E = 20 (2 + 2) = 80 edges, self-loops included
    edge_list = 80 * (2 * 8 + 4)  # edge_index int64, weights float32
    csr = 80 * (8 + 8 + 4) + 21 * 8  # permutation, columns, reordered weights, row pointers
    assert result["device"] == "cpu" and "peak_mib" not in result
    assert result["graph_bytes"] == {"sparse": edge_list + 2 * csr, "scatter": edge_list,
                                     "dense": 4 * 20 * 20 * 4} == {
        "sparse": 5136, "scatter": 1600, "dense": 6400}
    assert propagation.graph_bytes(20, 80)["dense"] == propagation.DENSE_MATRICES * 1600
    # a CPU result keeps its file's name; a CUDA device's ends with _cuda
    assert propagation.result_path(tmp_path, 8, 1, 1, 2, 2, device="cpu").name == (
        "propagation_N8_k1_t1_h2_l2.json")
    assert propagation.result_path(tmp_path, 8, 1, 1, 2, 2, False, "cuda:0").name == (
        "propagation_N8_k1_t1_h2_l2_no-graph-grad_cuda.json")
    # (cuda:1's were named _cuda too: two GPUs' results took one file)
    assert propagation.result_path(tmp_path, 8, 1, 1, 2, 2, False, "cuda:1").name == (
        "propagation_N8_k1_t1_h2_l2_no-graph-grad_cuda1.json")


def test_the_report_shows_memory_per_path_and_renders_results_without_it(tmp_path, capsys):
    old = propagation.result_path(tmp_path, 100, 1, 1, 256, 2)
    new = propagation.result_path(tmp_path, 200, 1, 1, 256, 2)
    gpu = propagation.result_path(tmp_path, 200, 1, 1, 256, 2, device="cuda")
    write(old, format=4, aggregation="csr")
    write(new, N=200, format=4, aggregation="csr", device="cpu",
          graph_bytes={"sparse": 3 * 2 ** 20, "scatter": 2 ** 20, "dense": 2 ** 19})
    propagation.main(["--out-dir", str(tmp_path), "--report-only"])
    md = (tmp_path / "propagation_h256_l2.md").read_text()
    rows = [line for line in md.splitlines() if "| interleaved |" in line]
    assert rows[0].startswith("| 100 |") and rows[0].endswith(" | - | - | - |")
    assert rows[1].startswith("| 200 |") and rows[1].endswith(" | 3.00 | 1.00 | 0.50 |")
    assert "devices" not in md.splitlines()[0]
    summary = json.loads((tmp_path / "summary_h256_l2.json").read_text())["summary"]
    assert [entry["device"] for entry in summary] == ["cpu"]
    # a GPU's result: its measured peaks, in a host of its own, named in the heading
    write(gpu, N=200, format=4, aggregation="csr", device="NVIDIA X",
          graph_bytes={"sparse": 2 ** 20, "scatter": 2 ** 20, "dense": 2 ** 20},
          peak_mib={"sparse_fwd": 1.5, "sparse_fwd_bwd": 2.5, "scatter_fwd": 3.0,
                    "scatter_fwd_bwd": 4.0})
    capsys.readouterr()
    propagation.main(["--out-dir", str(tmp_path), "--report-only"])
    md = (tmp_path / "propagation_h256_l2.md").read_text()
    assert md.splitlines()[0].endswith(", devices: cpu; NVIDIA X)")
    (row,) = [line for line in md.splitlines() if line.startswith("| 200 | 1 | 1 | c, NVIDIA X |")]
    assert row.endswith(" | 1.00; peak 1.5 / 2.5 | 1.00; peak 3.0 / 4.0 | 1.00 |")
    hosts = [line.split(" | ")[0] for line in md.split("| host |")[1].splitlines()[2:]]
    assert hosts == ["| c, nproc=2", "| c, nproc=2, NVIDIA X"]
    summary = json.loads((tmp_path / "summary_h256_l2.json").read_text())["summary"]
    assert [entry["device"] for entry in summary] == ["cpu", "NVIDIA X"]


def test_a_result_of_another_device_is_measured_again_one_without_a_device_is_the_cpu_s(
        tmp_path, monkeypatch, capsys):
    # (the reuse check compared the CPU and libraries only: a GPU's result counted as this
    # CPU's)
    gpu = propagation.result_path(tmp_path, 100, 1, 1, 256, 2)
    older = propagation.result_path(tmp_path, 200, 1, 1, 256, 2)
    write(gpu, format=4, aggregation="csr", **(here() | {"device": "NVIDIA X"}))
    write(older, N=200, format=4, aggregation="csr", **here())  # format 4 had no device
    ran = []
    monkeypatch.setattr(propagation, "measure", lambda N, *args: ran.append(N) or dict(
        json.loads(older.read_text()), N=N, device="cpu", max_rel_error=0.0))
    propagation.main(["--out-dir", str(tmp_path), "--sizes", "100,200", "--ks", "1"])
    out = capsys.readouterr().out
    assert ran == [100] and f"skip {older.name} (exists)" in out
    assert f"re-measure {gpu.name}: measured elsewhere: device 'NVIDIA X' (here 'cpu')" in out


def test_the_timing_of_a_call_includes_its_sync():
    # (on CUDA a call returns once its kernels are launched: the timing measured that)
    calls = []
    fns = {name: (lambda name=name: calls.append(name)) for name in "ab"}
    propagation.interleaved(fns, 2, 1e9, sync=lambda: calls.append("|"))
    assert "".join(calls) == "a|b|" + "a|b|" + "b|a|"


def test_the_check_compares_the_paths_in_float64_and_the_timing_runs_float32(monkeypatch):
    import torch

    checked, timed = [], []
    original, interleaved = propagation.agreement, propagation.interleaved

    def agreement(fns, models, edge_index):
        checked.extend(fns[name]().dtype for name in ("sparse_fwd", "dense_fwd"))
        checked.extend(param.dtype for model in models.values() for param in model.parameters())
        return original(fns, models, edge_index)

    def timing(fns, *args, **kwargs):
        timed.extend(fns[name]().dtype for name in ("sparse_fwd", "dense_fwd"))
        return interleaved(fns, *args, **kwargs)
    monkeypatch.setattr(propagation, "agreement", agreement)
    monkeypatch.setattr(propagation, "interleaved", timing)
    assert measured(10)["check_dtype"] == "float64"
    assert set(checked) == {torch.float64} and len(checked) > 2
    assert timed == [torch.float32] * 2


@pytest.mark.skipif(not __import__("torch").cuda.is_available(), reason="no CUDA device")
def test_on_cuda_the_paths_run_there_and_record_the_device_and_their_peaks(tmp_path):
    import torch

    result = measured(50, device="cuda")
    assert result["device"] == torch.cuda.get_device_name() and result["max_rel_error"] <= 1e-4
    assert set(result["peak_mib"]) == {"sparse_fwd", "sparse_fwd_bwd", "scatter_fwd",
                                       "scatter_fwd_bwd", "dense_build", "dense_fwd",
                                       "dense_fwd_bwd", "dense_incl_build_fwd",
                                       "dense_incl_build_fwd_bwd"}
    # dense's peak holds at least its adjacency, (50, 50) float32
    assert result["peak_mib"]["dense_fwd"] >= 50 * 50 * 4 / 2 ** 20
    propagation.main(["--sizes", "8", "--ks", "1", "--hidden", "2", "--repeats", "2",
                      "--device", "cuda", "--out-dir", str(tmp_path)])
    path = propagation.result_path(tmp_path, 8, 1, 1, 2, 2, device="cuda")
    assert json.loads(path.read_text())["device"] == torch.cuda.get_device_name()
