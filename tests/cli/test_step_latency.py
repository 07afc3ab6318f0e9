"""``benchmarks/step_latency.py``: where the plot goes, what it draws, the
machines the table names, and the command line's refusals."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pytest
import torch
from benchmark_script_helpers import cut_short, usage_error

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import step_latency  # noqa: E402
from machine import read_results  # noqa: E402


def write_result(out_dir: Path, cpu: str, normalization: str = "symmetric", M: int = 250) -> None:
    """A result file as ``measure`` writes it, with only what the report reads."""
    out_dir.mkdir(parents=True, exist_ok=True)
    result = dict(model="ours-full", config="gsad", M=M, threads=1, d=128,
                  normalization=normalization, variant="exact", median_ms=2.0, p95_ms=3.0,
                  steps=5, flops={"total": 1e9}, achieved_gflops=500.0, gemm_gflops=100.0,
                  cpu=cpu, nproc=2, torch="2.0")
    path = step_latency.result_path(out_dir, "ours-full", "gsad", M, 1, normalization)
    path.write_text(json.dumps(result))


def test_the_plot_goes_beside_its_out_dir_and_draws_every_normalization(tmp_path):
    out_dir = tmp_path / "step_latency_s63"
    write_result(out_dir, "cpu A", normalization="mean")
    write_result(out_dir, "cpu A", normalization="mean", M=500)
    step_latency.main(["--out-dir", str(out_dir), "--report-only", "--plot"])
    assert (tmp_path / "step_latency_s63.png").exists()
    assert not (tmp_path / "step_latency.png").exists()
    results = read_results(argparse.ArgumentParser(), out_dir, step_latency.RESULT_FILES)
    lines = step_latency.series(results)
    assert list(lines) == [("gsad", "ours-full", "exact", 1, "mean")]
    assert [r["M"] for r in lines[("gsad", "ours-full", "exact", 1, "mean")]] == [250, 500]


def test_the_plot_leaves_no_matplotlib_figure_open(tmp_path):
    plt = pytest.importorskip("matplotlib.pyplot")
    out_dir = tmp_path / "step_latency_s63"
    write_result(out_dir, "cpu A")
    results = read_results(argparse.ArgumentParser(), out_dir, step_latency.RESULT_FILES)
    before = plt.get_fignums()
    step_latency.plot(results, tmp_path / "plot.png")
    assert (tmp_path / "plot.png").exists()
    assert plt.get_fignums() == before


def test_a_plot_of_nothing_is_refused(tmp_path, capsys):
    step_latency.main(["--out-dir", str(tmp_path / "empty"), "--report-only", "--plot"])
    assert "no plot written" in capsys.readouterr().out
    assert not (tmp_path / "empty.png").exists()


def test_the_heading_names_every_cpu_the_results_recorded(tmp_path):
    out_dir = tmp_path / "mixed"
    write_result(out_dir, "cpu A")
    write_result(out_dir, "cpu B", M=500)
    step_latency.main(["--out-dir", str(out_dir), "--report-only"])
    assert "CPU: cpu A; cpu B," in (tmp_path / "mixed.md").read_text()


def test_the_report_refuses_a_result_cut_short_in_one_line(tmp_path, capsys):
    write_result(tmp_path, "cpu A")
    refusal = cut_short(step_latency.result_path(tmp_path, "ours-full", "gsad", 500, 1))
    error = usage_error(step_latency.main, ["--out-dir", str(tmp_path), "--report-only"], capsys)
    assert error.splitlines()[-1].endswith(refusal)
    assert not (tmp_path.parent / f"{tmp_path.name}.md").exists()


def test_a_result_cut_short_is_refused_before_any_run(tmp_path, monkeypatch, capsys):
    refusal = cut_short(step_latency.result_path(tmp_path, "ours-full", "gsad", 250, 1))
    monkeypatch.setattr(step_latency, "gemm_gflops", lambda threads: 100.0)
    monkeypatch.setattr(step_latency, "measure", lambda *args: pytest.fail("ran"))
    argv = ["--configs", "gsad", "--models", "ours-full", "--sizes", "250,500",
            "--out-dir", str(tmp_path)]  # (M = 250 would be skipped: its file exists)
    assert usage_error(step_latency.main, argv, capsys).splitlines()[-1].endswith(refusal)


@pytest.mark.parametrize("argv, message", [
    (["--sizes", "0"], "--sizes: expected a comma-separated list of integers >= 1"),
    (["--sizes", "-5"], "--sizes: expected a comma-separated list of integers >= 1"),
    (["--sizes", "250,"], "--sizes: expected a comma-separated list of integers >= 1"),
    (["--steps", "0"], "--steps: expected a positive integer"),
    (["--steps", "-3"], "--steps: expected a positive integer"),
    (["--warmup", "-1"], "--warmup: expected an integer >= 0, got '-1'"),
    (["--warmup", "two"], "--warmup: expected an integer >= 0, got 'two'"),
    (["--threads", "0"], "--threads: expected a comma-separated list of integers >= 1"),
    (["--threads", "1025"], "--threads: expected a comma-separated list of integers >= 1 "
                            "and <= 1024, got '1025'"),
    # (--configs nope: refused after parsing, so an unchecked value fails fast, not by running)
    (["--reselect-every", "0", "--configs", "nope"],
     "--reselect-every: expected an integer >= 1, got '0'"),
    (["--reselect-every", "-2", "--configs", "nope"],
     "--reselect-every: expected an integer >= 1, got '-2'"),
    (["--ref-max-size", "0", "--configs", "nope"],
     "--ref-max-size: expected an integer >= 1, got '0'"),
    (["--max-seconds", "0", "--configs", "nope"], "--max-seconds: expected a number > 0, got '0'"),
    (["--max-seconds", "-1", "--configs", "nope"],
     "--max-seconds: expected a number > 0, got '-1'"),
    (["--max-seconds", "nan", "--configs", "nope"],
     "--max-seconds: expected a number > 0, got 'nan'"),
    (["--max-seconds", "soon"], "--max-seconds: expected a number > 0, got 'soon'"),
    (["--sizes", "10", "--configs", "shuttle"], "M = 10 is too small for ours-full"),
    (["--sizes", "7", "--configs", "shuttle", "--models", "ours-light"],
     "labeled slots leave no unlabeled one"),
])
def test_bad_sizes_and_counts_are_refused_in_one_line(argv, message, tmp_path, capsys):
    error = usage_error(step_latency.main, [*argv, "--out-dir", str(tmp_path / "out")], capsys)
    assert message in error.splitlines()[-1]
    assert not (tmp_path / "out").exists()


def test_the_shuttle_configuration_has_the_shuttle_stream_s_features(tmp_path):
    # (it had d = 7, the paper's count; the loaded stream keeps all 9 attributes)
    from torch_geometric_stream.datasets.tabular import load_shuttle

    row = " ".join(["0"] * 9) + " 1\n"
    for name in ("shuttle.trn", "shuttle.tst"):
        (tmp_path / name).write_text(row)
    assert step_latency.CONFIGS["shuttle"]["d"] == load_shuttle(tmp_path).num_features == 9


def test_ours_is_set_against_the_reference_of_its_own_dimension():
    # the shuttle configuration went from d = 7 to d = 9: an old reference run must not
    # give the new one its ref/ours ratio
    def result(model, d, median_ms):
        return dict(model=model, config="shuttle", M=250, threads=1, d=d, median_ms=median_ms,
                    p95_ms=1.0, steps=5, flops={"total": 1e9}, achieved_gflops=1.0,
                    gemm_gflops=1.0)
    rows = step_latency.table([result("ref-full", 7, 8.0), result("ours-full", 9, 2.0),
                               result("ours-full", 7, 4.0)]).splitlines()[2:]
    ours = {row.split(" | ")[2]: row.split(" | ")[11] for row in rows if "ours-full" in row}
    assert ours == {"7": "2.0x", "9": ""}


def test_with_force_a_result_cut_short_that_it_does_not_rewrite_is_refused_before_any_run(
        tmp_path, monkeypatch, capsys):
    # (--force skipped the check: the report refused it after the runs)
    refusal = cut_short(step_latency.result_path(tmp_path, "ours-full", "gsad", 500, 1))
    cut_short(step_latency.result_path(tmp_path, "ours-full", "gsad", 250, 1))  # rewritten
    monkeypatch.setattr(step_latency, "gemm_gflops", lambda threads: 100.0)
    monkeypatch.setattr(step_latency, "measure", lambda *args: pytest.fail("ran"))
    argv = ["--configs", "gsad", "--models", "ours-full", "--sizes", "250", "--force",
            "--out-dir", str(tmp_path)]
    assert usage_error(step_latency.main, argv, capsys).splitlines()[-1].endswith(refusal)


def test_max_seconds_bounds_the_timed_steps_not_the_warm_up(monkeypatch):
    # (the budget's clock started before the warm-up: a slow warm-up cut the timed
    # steps to 3.) A fake clock: each warm-up step takes 100 s, each timed step 1 s.
    clock = [0.0]
    monkeypatch.setattr(step_latency.time, "perf_counter", lambda: clock[0])

    class Model:
        calls = 0

        def predict(self, row):
            Model.calls += 1
            clock[0] += 100.0 if Model.calls <= 2 else 1.0

        def learn(self, row, label):
            pass

    x, y, labeled = torch.zeros(20, 1), torch.zeros(20), torch.zeros(20, dtype=torch.bool)
    times, _ = step_latency.time_steps(Model(), x, y, labeled, warmup=2, steps=10,
                                       max_seconds=5.5)
    assert times == [1000.0] * 6  # the sixth timed step ends 6 s after the first began


def test_a_result_of_another_machine_is_measured_again_not_reused(tmp_path, monkeypatch,
                                                                  capsys):
    # (a result counted as present by its file name: a rerun on another machine printed
    # "skip ... (exists)" and reported the shipped results of this repository's host)
    from machine import measured_on

    write_result(tmp_path, "cpu A")  # M = 250, of another machine
    mine = step_latency.result_path(tmp_path, "ours-full", "gsad", 500, 1)
    mine.write_text(json.dumps(dict(json.loads(step_latency.result_path(
        tmp_path, "ours-full", "gsad", 250, 1).read_text()), M=500, **measured_on())))
    ran = []
    monkeypatch.setattr(step_latency, "gemm_gflops", lambda threads: 100.0)
    monkeypatch.setattr(step_latency, "measure", lambda model, config, M, *args: ran.append(
        M) or dict(json.loads(mine.read_text()), M=M))
    step_latency.main(["--configs", "gsad", "--models", "ours-full", "--sizes", "250,500",
                       "--out-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert ran == [250] and f"skip {mine.name} (exists)" in out
    assert ("re-measure step_latency_ours-full_gsad_d128_M250_t1.json: measured elsewhere: "
            f"cpu 'cpu A' (here {measured_on()['cpu']!r})") in out


def test_ours_is_set_against_the_reference_of_its_own_machine_only():
    # (the ref/ours pairs ignored the cpu: a ratio of two machines' timings)
    def result(model, cpu, median_ms, M=250):
        return dict(model=model, config="gsad", M=M, threads=1, d=128, median_ms=median_ms,
                    p95_ms=1.0, steps=5, flops={"total": 1e9}, achieved_gflops=1.0,
                    gemm_gflops=1.0, cpu=cpu, nproc=2)
    rows = step_latency.table([result("ref-full", "cpu B", 8.0), result("ours-full", "cpu A",
                                                                         2.0),
                               result("ref-full", "cpu A", 6.0, M=500),
                               result("ours-full", "cpu A", 2.0, M=500)]).splitlines()[2:]
    ours = {row.split(" | ")[3]: row.split(" | ")[11] for row in rows if "ours-full" in row}
    assert ours == {"250": "", "500": "3.0x"}
    slopes = step_latency.slopes([result("ours-full", "cpu A", 2.0),
                                  result("ours-full", "cpu B", 4.0, M=500)])
    assert slopes == []  # one size per machine: no line through two machines' points
