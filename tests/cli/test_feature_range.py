"""``benchmarks/feature_range.py``: range growth and spread on hand-checkable streams."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from benchmark_script_helpers import usage_error

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from feature_range import main, markdown_table, middle_share, range_growth  # noqa: E402


def test_range_growth_counts_samples_until_each_share_of_the_final_range():
    # feature 0: running range 0, 1, 1, 4, 10 (final 10)
    # feature 1: constant, reached at the first sample
    # feature 2: running range 0, 6, 8, 8, 8 (final 8)
    x = np.array([[0.0, 3.0, 0.0],
                  [1.0, 3.0, 6.0],
                  [0.5, 3.0, -2.0],
                  [-3.0, 3.0, 1.0],
                  [7.0, 3.0, 2.0]])
    growth = range_growth(x, fractions=(0.5, 0.9, 1.0))
    assert growth.tolist() == [[5, 5, 5], [1, 1, 1], [2, 3, 3]]


def test_middle_share_is_the_interquartile_range_over_the_range():
    # 0..8 then one outlier at 100: numpy's linear interpolation puts the quartiles
    # of these 10 values at 2.25 and 6.75; the range is 100
    x = np.concatenate([np.arange(9.0), [100.0]])[:, None]
    assert middle_share(x)[0] == (6.75 - 2.25) / 100
    assert np.isnan(middle_share(np.ones((4, 1))))[0]


def test_markdown_table_has_one_row_per_feature():
    x = np.array([[0.0, 1.0], [2.0, 1.0]])
    lines = markdown_table(x, ["a", "b"]).splitlines()
    assert len(lines) == 4
    assert lines[2] == "| a | 0 | 2 | 2 | 2 | 2 | 0.5 |"
    assert lines[3] == "| b | 1 | 1 | 1 | 1 | 1 | – |"


def test_a_prefix_table_goes_beside_the_whole_stream_table_not_over_it(tmp_path):
    folder = tmp_path / "data" / "Shuttle"
    folder.mkdir(parents=True)
    rows = "\n".join(" ".join(str(i + j) for j in range(9)) + " 1" for i in range(6))
    (folder / "shuttle.trn").write_text(rows + "\n")
    (folder / "shuttle.tst").write_text(rows + "\n")
    out = tmp_path / "tables"
    argv = ["--datasets", "Shuttle", "--root", str(tmp_path / "data"), "--out-dir", str(out)]
    assert main(argv) == 0 and main([*argv, "--limit", "4"]) == 0
    assert sorted(path.name for path in out.iterdir()) == ["Shuttle.md", "Shuttle_first4.md"]
    assert out.joinpath("Shuttle.md").read_text() != out.joinpath("Shuttle_first4.md").read_text()


@pytest.mark.parametrize("argv, message", [
    (["--datasets", "Foo"], "unknown dataset 'Foo'"),
    (["--datasets", "Shuttle", "--root", "/"], "dataset folder /Shuttle does not exist"),
    (["--datasets", "Shuttle", "--limit", "0"], "--limit: expected a positive integer"),
])
def test_bad_arguments_are_refused_without_a_traceback(argv, message, tmp_path, capsys):
    assert message in usage_error(main, [*argv, "--out-dir", str(tmp_path / "out")], capsys)
    assert not (tmp_path / "out").exists()
