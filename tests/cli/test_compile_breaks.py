"""``benchmarks/compile_breaks.py``: a tiny run with the eager backend, and refusals."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch
import torch._inductor.config
from benchmark_script_helpers import usage_error

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from compile_breaks import break_reason, main  # noqa: E402

TINY = ["--rows", "12", "--features", "5", "--hidden", "6", "--k", "3", "--classes", "2",
        "--repeats", "2", "--max-seconds", "1"]


def test_a_tiny_run_counts_the_breaks_and_times_compiled_against_eager(tmp_path, capsys):
    threads = torch.get_num_threads()
    try:
        main([*TINY, "--backends", "eager", "--out-dir", str(tmp_path)])
    finally:
        torch.set_num_threads(threads)
    assert not torch._inductor.config.force_disable_caches  # (off for the run only)
    (path,) = tmp_path.iterdir()
    assert path.name == "compile_breaks_N12_d5_t1.json"
    result = json.loads(path.read_text())
    assert (result["rows"], result["features"], result["k"], result["backends"]) == \
        (12, 5, 3, ["eager"])
    assert (result["threads"], result["torch"]) == (1, torch.__version__)
    assert len(result["load_before"]) == len(result["load_after"]) == 3
    breaks = result["breaks"]
    assert breaks["breaks"] == breaks["graphs"] - 1 >= 1
    # every break listed is in the package, the CSR kernels' calls among them
    assert all(entry["count"] >= 1 and entry["package_frame"].startswith("torch_geometric_stream/")
               for entry in breaks["reasons"])
    frames = {entry["package_frame"].split(" ")[-1] for entry in breaks["reasons"]}
    assert {"(csr_aggregate)", "(csr_edge_dot)"} <= frames
    uncompiled = result["uncompiled"]
    assert uncompiled["runs"] >= 2 and uncompiled["median_ms"] > 0
    (compiled,) = result["compiled"].values()
    assert compiled["runs"] >= 2 and compiled["median_ms"] > 0
    assert compiled["max_abs_diff"] == 0.0  # the same kernels in the same order
    assert compiled["first_call_s"] > 0 and compiled["dynamo_breaks"] >= breaks["breaks"]
    out = capsys.readouterr().out
    assert f"explain: {breaks['graphs']} graphs, {breaks['breaks']} breaks" in out
    assert "| eager | " in out and "(csr_aggregate)" in out


def test_a_break_reason_is_one_line_with_its_explanation_without_addresses():
    reason = ("Unsupported context manager\n  Explanation: Dynamo does not know how to enter a "
              "`RLock` context manager.\n  Hint: Avoid using the unsupported context manager.")
    assert break_reason(reason) == ("Unsupported context manager: Dynamo does not know how to "
                                    "enter a `RLock` context manager.")
    assert break_reason("step_unsupported") == "step_unsupported"
    disabled = ("Skip calling `torch.compiler.disable()`d function\n  Explanation: Skip calling "
                "function `<function _outside_graph at 0x7fcf91d51440>` since it was wrapped")
    assert break_reason(disabled) == ("Skip calling `torch.compiler.disable()`d function: Skip "
                                      "calling function `<function _outside_graph>` since it "
                                      "was wrapped")


@pytest.mark.parametrize("argv, message", [
    (["--backends", "cudagraphs"], "--backends: expected a comma-separated list of eager, "
                                   "aot_eager, inductor, got 'cudagraphs'"),
    (["--backends", ""], "--backends: expected a comma-separated list of eager"),
    (["--rows", "0"], "--rows: expected a positive integer"),
    (["--threads", "1025"], "--threads: expected at most 1024 threads, got '1025'"),
    (["--max-seconds", "0"], "--max-seconds: expected a number > 0"),
])
def test_bad_arguments_are_refused_in_one_line(argv, message, tmp_path, capsys):
    error = usage_error(main, [*argv, "--out-dir", str(tmp_path / "out")], capsys)
    assert message in error.splitlines()[-1]
    assert not (tmp_path / "out").exists()


def test_an_output_folder_that_is_a_file_is_refused_before_the_run(tmp_path, capsys):
    (tmp_path / "out").write_text("")
    error = usage_error(main, [*TINY, "--out-dir", str(tmp_path / "out")], capsys)
    assert error.splitlines()[-1].endswith(
        f"--out-dir: {tmp_path / 'out'} is a file, not a folder")
