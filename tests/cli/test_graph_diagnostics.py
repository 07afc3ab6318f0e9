"""``benchmarks/graph_diagnostics.py``: the graph statistics on hand-checkable cases."""
from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest
from benchmark_script_helpers import NO_DATA_FOLDER, cut_short, usage_error, without_data_folder
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import graph_diagnostics  # noqa: E402
from graph_diagnostics import (main, mean_cosine, memory_snapshot,  # noqa: E402
                               nearest_classes, neighbour_stats, window_shares)

from torch_geometric_stream import SLeDGe  # noqa: E402


def test_mean_cosine_over_distinct_pairs():
    rows = torch.tensor([[1.0, 0.0], [0.0, 2.0], [3.0, 0.0]])
    # pairs: (0,1) 0, (0,2) 1, (1,2) 0 -> 1/3
    assert mean_cosine(rows) == pytest.approx(1 / 3)
    assert math.isnan(mean_cosine(rows[:1]))


def test_neighbour_stats_on_a_line():
    # two pairs of nearby rows (by dot product): each row's top-1 is its partner
    emb = torch.tensor([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    labels = torch.tensor([0, 1, 1, -1])
    stats = neighbour_stats(emb, labels, k=1)
    # neighbours: 0 -> 1, 1 -> 0, 2 -> 3, 3 -> 2
    # labeled rows 0, 1, 2: neighbours 1 (labeled), 0 (labeled), 3 (unlabeled)
    assert stats["labeled_neighbours"] == pytest.approx(2 / 3)
    # labeled-to-labeled edges 0->1 (0 vs 1) and 1->0: none agree
    assert stats["homophily"] == 0.0
    assert stats["max_in_degree"] == 1


def test_nearest_classes_across_blocks():
    seen = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8], [0.8, 0.6]])
    seen_labels = torch.tensor([3, 4, 5, 6])
    rows = torch.tensor([[0.0, 1.0], [0.7, 0.7], [1.0, 0.1]])
    # dot products: row 0 -> seen 1 (1.0); row 1 -> seen 2 and 3 tie (0.98): the earlier;
    # row 2 -> seen 0 (1.0) against seen 3 (0.86)
    for block_size in (1, 2, 8192):
        assert nearest_classes(rows, seen, seen_labels, block_size).tolist() == [4, 5, 3]


def test_estimated_homophily_counts_unlabeled_neighbours():
    emb = torch.tensor([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    labels = torch.tensor([0, 1, 1, -1])
    # neighbours (k = 1): 0 -> 1, 1 -> 0, 2 -> 3; row 3's estimated class is 1
    stats = neighbour_stats(emb, labels, k=1, classes=torch.tensor([0, 1, 1, 1]))
    # agree: 2 -> 3 (1 = 1) only; 0 -> 1 and 1 -> 0 differ
    assert stats["estimated_homophily"] == pytest.approx(1 / 3)
    assert "estimated_homophily" not in neighbour_stats(emb, labels, k=1)


@pytest.mark.parametrize("given", ["seen", "seen_labels"])
def test_a_snapshot_refuses_seen_rows_without_their_labels_and_back(given):
    learner = SLeDGe(2, 2, labeled_size=2, unlabeled_size=2, k=1)
    seen = {"seen": torch.eye(2), "seen_labels": torch.tensor([0, 1])}
    with pytest.raises(ValueError, match=f"seen and seen_labels go together: got only {given}$"):
        memory_snapshot(learner, **{given: seen[given]})


def test_neighbour_stats_without_labeled_edges_is_nan():
    emb = torch.eye(3)
    stats = neighbour_stats(emb, torch.tensor([0, -1, -1]), k=1)
    assert math.isnan(stats["homophily"])


def test_window_shares():
    predictions = np.array([0, 0, 1, 1, 1])
    labels = np.array([0, 1, 1, 1, 0])
    rows = window_shares(predictions, labels, num_classes=2, window=4)
    assert [row["start"] for row in rows] == [0, 4]
    assert rows[0]["accuracy"] == 0.75
    assert rows[0]["predicted_share"] == [0.5, 0.5]
    assert rows[0]["true_share"] == [0.25, 0.75]
    assert rows[1]["accuracy"] == 0.0


def test_a_run_writes_snapshots_and_windows(tmp_path, capsys):
    main(["--dataset", "synthetic", "--limit", "120", "--every", "60", "--window", "60",
          "--out-dir", str(tmp_path)])
    (path,) = tmp_path.iterdir()
    report = json.loads(path.read_text())
    assert [row["position"] for row in report["snapshots"]] == [60, 120]
    assert len(report["windows"]) == 2
    snapshot = report["snapshots"][0]
    assert {"cosine_graph", "homophily_raw", "max_in_degree_graph"} <= set(snapshot)
    for key in ("estimated_homophily_raw", "estimated_homophily_graph"):
        assert 0.0 <= snapshot[key] <= 1.0
    assert "accuracy" in capsys.readouterr().out


def test_an_existing_report_is_skipped_only_at_its_spacing(tmp_path, capsys):
    argv = ["--dataset", "synthetic", "--limit", "120", "--out-dir", str(tmp_path)]
    main([*argv, "--every", "30", "--window", "40"])
    (path,) = tmp_path.iterdir()
    made = path.read_text()
    capsys.readouterr()
    main([*argv, "--every", "30", "--window", "40"])
    assert f"skip {path.name} (exists; --force reruns it)" in capsys.readouterr().out
    # (it was shown as if made at the spacing asked for)
    for other, made_with in ((["--every", "60", "--window", "40"], "--every 30"),
                             (["--every", "30"], "--window 40"),
                             ([], "--every 30 --window 40")):
        assert usage_error(main, [*argv, *other], capsys).splitlines()[-1].endswith(
            f"{path} exists, made with {made_with}: pass that, or --force to rerun it")
    assert path.read_text() == made
    main([*argv, "--every", "60", "--force"])
    assert [row["position"] for row in json.loads(path.read_text())["snapshots"]] == [60, 120]


def test_an_existing_report_cut_short_is_refused_in_one_line(tmp_path, monkeypatch, capsys):
    refusal = cut_short(tmp_path / "sledge_synthetic-none_0.01_seed0_limit120.json")
    monkeypatch.setattr(graph_diagnostics, "diagnose", lambda *args: pytest.fail("ran"))
    argv = ["--dataset", "synthetic", "--limit", "120", "--out-dir", str(tmp_path)]
    assert usage_error(main, argv, capsys).splitlines()[-1].endswith(refusal)


@pytest.mark.parametrize("argv, message", [
    (["--every", "0"], "--every: expected a positive integer"),
    (["--window", "0"], "--window: expected a positive integer"),
    (["--limit", "0"], "--limit: expected a positive integer"),
    (["--dataset", "Shoper"], "unknown dataset 'Shoper'"),
    (["--root", "/"], "dataset folder /Shopper does not exist"),  # a data folder without it
])
def test_bad_arguments_are_refused_without_a_traceback(argv, message, tmp_path, capsys):
    assert message in usage_error(main, [*argv, "--out-dir", str(tmp_path)], capsys)
    assert not list(tmp_path.iterdir())


def test_an_unknown_dataset_s_error_names_synthetic_too(tmp_path, capsys):
    # (it listed the paper's datasets only)
    from torch_geometric_stream.datasets import DATASETS

    error = usage_error(main, ["--dataset", "Shoper", "--out-dir", str(tmp_path)], capsys)
    assert error.splitlines()[-1].endswith(
        f"argument --dataset: unknown dataset 'Shoper'; valid names: {', '.join(DATASETS)}, "
        "or synthetic")


def test_no_data_folder_is_refused_in_one_line(tmp_path, monkeypatch, capsys):
    without_data_folder(monkeypatch, tmp_path)
    argv = ["--dataset", "Shopper", "--limit", "50", "--out-dir", str(tmp_path / "out")]
    assert usage_error(main, argv, capsys).splitlines()[-1].endswith(NO_DATA_FOLDER)
