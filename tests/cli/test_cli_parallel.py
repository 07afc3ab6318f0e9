"""``run_commands``: the grid runner behind ``tune --jobs`` and ``accuracy.py --jobs``."""
import json

import pytest

from torch_geometric_stream.cli.parallel import run_commands


def _run(tmp_path, name, *options):
    output = tmp_path / f"{name}.json"
    return ["run", "--dataset", "synthetic", "--model", "memory", "--limit", "30",
            "--output", str(output), "--quiet", *options], output


def test_workers_return_codes_in_order_and_keep_only_failed_logs(tmp_path):
    good, bad = _run(tmp_path, "good"), _run(tmp_path, "bad", "--label-ratio", "2")
    assert run_commands([bad, good], jobs=2) == [2, 0]
    assert json.loads(good[1].read_text())["n_samples"] == 30
    assert not good[1].with_suffix(".log").exists()
    log = bad[1].with_suffix(".log").read_text()
    assert "label-ratio" in log and not bad[1].exists()


def test_stop_on_failure_starts_nothing_after_a_failure(tmp_path):
    bad, good = _run(tmp_path, "bad", "--label-ratio", "2"), _run(tmp_path, "good")
    assert run_commands([bad, good], stop_on_failure=True) == [2, None]
    assert not good[1].exists()
    assert run_commands([bad, good]) == [2, 0]


def test_jobs_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="jobs must be at least 1, got 0"):
        run_commands([_run(tmp_path, "x")], jobs=0)


def test_on_success_runs_after_each_successful_command_before_the_next(tmp_path):
    first, bad, last = (_run(tmp_path, "first"), _run(tmp_path, "bad", "--label-ratio", "2"),
                        _run(tmp_path, "last"))
    calls = []

    def on_success(output):
        calls.append((output.name, last[1].exists()))

    assert run_commands([first, bad, last], on_success=on_success) == [0, 2, 0]
    assert calls == [("first.json", False), ("last.json", True)]
