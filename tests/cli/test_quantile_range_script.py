"""``benchmarks/quantile_range.py``: the command line's refusals and skips."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from benchmark_script_helpers import NO_DATA_FOLDER, usage_error, without_data_folder

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from quantile_range import main  # noqa: E402


@pytest.mark.parametrize("argv, message", [
    (["--rows", "0"], "--rows: expected a positive integer"),
    (["--rows", "-5"], "--rows: expected a positive integer"),
    (["--datasets", "Foo"], "unknown dataset 'Foo'"),
])
def test_bad_arguments_are_refused_in_one_line(argv, message, tmp_path, capsys):
    error = usage_error(main, [*argv, "--out-dir", str(tmp_path / "out")], capsys)
    assert message in error.splitlines()[-1]
    assert not (tmp_path / "out").exists()


def test_no_data_folder_is_refused_in_one_line(tmp_path, monkeypatch, capsys):
    without_data_folder(monkeypatch, tmp_path)
    argv = ["--datasets", "Shopper", "--rows", "100", "--out-dir", str(tmp_path / "out")]
    assert usage_error(main, argv, capsys).splitlines()[-1].endswith(NO_DATA_FOLDER)


def test_a_missing_dataset_is_skipped(tmp_path, capsys):
    main(["--datasets", "Shopper", "--rows", "100", "--root", str(tmp_path),
          "--out-dir", str(tmp_path / "out")])
    assert capsys.readouterr().out.startswith("skip Shopper: ")
    assert not (tmp_path / "out").exists()
