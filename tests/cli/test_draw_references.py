"""``benchmarks/draw_references.py``: the references a label draw is judged
against, on hand-checkable cases, and the script on the bundled Shopper stream."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from benchmark_script_helpers import (NO_DATA_FOLDER, usage_error, without_data_folder,
                                      write_run_record)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from draw_references import (decide, knn_graph, main, offline_rows,  # noqa: E402
                             propagate_labels, references_table, run_spec, seed_row,
                             streaming_nearest_labeled)

from torch_geometric_stream.datasets.bundled import bundled_data_folder  # noqa: E402


def unit(rows: list[list[float]]) -> torch.Tensor:
    return torch.nn.functional.normalize(torch.tensor(rows), dim=1)


def test_streaming_nearest_labeled_sees_only_earlier_labels_in_the_running_range():
    rows = torch.tensor([[0, 0], [4, 4], [1, 0], [3, 2.5], [100, 0]], dtype=torch.float64)
    labels = np.array([0, 1, 0, 1, 0])
    mask = np.array([True, True, False, False, False])
    # row 0: nothing revealed; row 1: only row 0's label (cosine -1, still the nearest);
    # row 3 in the range [0, 4] x [0, 4] is (0.5, 0.25), nearer row 1's (1, 1); in the
    # whole stream's range (row 4 stretches feature 0 to 100) it would be row 0's class
    expected = [-1, 0, 0, 1, 0]
    assert streaming_nearest_labeled(rows, labels, mask).tolist() == expected
    assert streaming_nearest_labeled(rows, labels, mask, block_size=2).tolist() == expected
    assert streaming_nearest_labeled(rows, labels, np.zeros(5, bool)).tolist() == [-1] * 5
    whole = offline_rows(rows)
    assert whole[3].tolist() == pytest.approx((F.normalize(torch.tensor([-0.94, 0.25]),
                                                           dim=0)).tolist())


def test_the_knn_graph_has_no_self_loops_is_undirected_and_clamps_negative_cosines():
    rows = unit([[1, 0], [1, 0], [0.8, 0.6], [-1, 0.1], [-1, -0.1]])  # rows 0, 1 duplicates
    edge_index, edge_weight = knn_graph(rows, k=1)
    edges = {(int(s), int(t)): float(w) for (s, t), w in zip(edge_index.T, edge_weight)}
    assert all(s != t for s, t in edges)
    assert all((t, s) in edges for s, t in edges)
    assert edges[(0, 1)] == pytest.approx(1.0) and edges[(3, 4)] == pytest.approx(0.9802, abs=1e-4)
    assert min(edges.values()) >= 0
    far = knn_graph(unit([[1.0, 0.0], [-1.0, 0.0]]), k=1)  # cosine -1: an edge of weight 0
    assert far[1].tolist() == [0.0, 0.0]


def test_label_propagation_fills_each_component_with_its_label_and_leaves_others_unreached():
    # two triangles (0-1-2, 3-4-5) and a lone pair (6-7) no label reaches
    pairs = [(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5), (6, 7)]
    edge_index = torch.tensor(pairs + [(t, s) for s, t in pairs]).T
    labels = np.array([0, 0, 0, 1, 1, 1, 0, 1])
    mask = np.zeros(8, bool)
    mask[[0, 5]] = True
    scores = propagate_labels(edge_index, torch.ones(edge_index.size(1)), labels, mask, 2)
    assert decide(scores).tolist() == [0, 0, 0, 1, 1, 1, -1, -1]
    assert scores[:6].max() <= 1 and scores[6:].abs().sum() == 0
    # a seed's row counts those rows (its mask: the first row of each class, 0 and 3)
    row = seed_row(0, labels, 0.01, torch.rand(8, 3, dtype=torch.float64),
                   (edge_index, torch.ones(edge_index.size(1))), 2)
    assert row["labels"] == [1, 1] and row["unreached"] == 2


def test_class_mass_normalization_scales_each_class_to_its_share():
    scores = torch.tensor([[0.6, 0.4], [0.5, 0.5], [0.2, 0.8], [0.0, 0.0]])
    assert decide(scores).tolist() == [0, 0, 1, -1]  # 0.5 / 0.5: argmax takes the first
    # column sums 1.3 and 1.7: with equal shares row 1 is 0.385 against 0.294
    assert decide(scores, torch.tensor([0.5, 0.5])).tolist() == [0, 0, 1, -1]
    # a rare class 0: row 0 is 0.1 * 0.6 / 1.3 = 0.046 against 0.9 * 0.4 / 1.7 = 0.212
    assert decide(scores, torch.tensor([0.1, 0.9])).tolist() == [1, 1, 1, -1]
    # column sums 0.3 and 1.4: row 0 is 1.0 * 0.5 against 0.286 * 0.5, not 0.3 against 0.4
    assert decide(torch.tensor([[0.3, 0.4], [0.0, 1.0]]), torch.tensor([0.5, 0.5])).tolist() == [
        0, 1]


def test_the_table_gives_each_seed_and_the_means_of_the_paper_s_and_other_seeds():
    rows = [{"seed": 0, "labels": [9, 3], "majority": 0.8, "nearest_labeled": 0.7,
             "propagation": 0.6, "propagation_true_shares": 0.7,
             "runs": {"A": 0.75, "B": 0.5}},
            {"seed": 1000, "labels": [11, 1], "majority": 0.8, "nearest_labeled": 0.9,
             "propagation": 0.8, "propagation_true_shares": 0.9, "runs": {"A": None, "B": 0.7}}]
    table = references_table(rows, ["A", "B"])
    assert table.startswith("| seed | labels per class | majority class | 1-NN, streaming | "
                            "label propagation, offline | + true class shares | A | B |")
    assert "| 0 | 9 / 3 | 0.8000 | 0.7000 | 0.6000 | 0.7000 | 0.7500 | 0.5000 |" in table
    assert "| 1000 | 11 / 1 | 0.8000 | 0.9000 | 0.8000 | 0.9000 | – | 0.7000 |" in table
    assert "| mean, the paper's seeds | | 0.8000 (1) | 0.7000 (1) |" in table
    assert table.endswith("| mean, all seeds | | 0.8000 (2) | 0.8000 (2) | 0.7000 (2) | "
                          "0.8000 (2) | 0.7500 (1) | 0.6000 (2) |")
    only_paper = references_table(rows[:1])
    assert "the paper's seeds" not in only_paper and "| A |" not in only_paper
    assert only_paper.endswith("| mean, all seeds | | 0.8000 (1) | 0.7000 (1) | 0.6000 (1) | "
                               "0.7000 (1) |")


def test_a_run_column_names_its_model_and_tags():
    assert run_spec("SLeDGe paper=sledge:a,b") == ("SLeDGe paper", "sledge", ["a", "b"])
    for bad in ("sledge:a", "X=sledge", "X=:a", "=sledge:a", "X=sledge:,"):
        with pytest.raises(argparse.ArgumentTypeError, match="NAME=MODEL:TAG"):
            run_spec(bad)


def write_run(folder: Path, model: str, seed: int, accuracy: float) -> None:
    write_run_record(folder / f"{model}_Shopper_0.001_seed{seed}.json", model=model, seed=seed,
                     accuracy=accuracy)


def test_the_script_scores_every_seed_s_draw_on_the_bundled_shopper_stream(tmp_path,
                                                                            monkeypatch):
    monkeypatch.setattr(torch, "get_num_threads", lambda: 3)  # recorded as torch has it
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "Shopper").symlink_to(bundled_data_folder())
    out = tmp_path / "out"
    write_run(tmp_path / "runs" / "first", "sledge", 4000, 0.66)
    write_run(tmp_path / "runs" / "second", "sledge", 4000, 0.5)
    write_run(tmp_path / "runs" / "second", "sledge", 0, 0.8)
    assert main(["--dataset", "shopper", "--ratio", "0.001", "--seeds", "0", "4000", "0",
                 "--root", str(tmp_path / "data"), "--out", str(out),
                 "--results", str(tmp_path / "runs"), "--runs", "S=sledge:first,second",
                 "--runs", "L=sledge-light:second"]) == 0
    record = json.loads((out / "Shopper_0.001.json").read_text())
    assert record["k"] == 10 and record["threads"] == 3
    assert [row["seed"] for row in record["rows"]] == [0, 4000]
    assert [row["runs"] for row in record["rows"]] == [{"S": 0.8, "L": None},
                                                       {"S": 0.66, "L": None}]
    for row in record["rows"]:
        assert sum(row["labels"]) == 12  # 0.1 % of 12,330
        assert row["majority"] == pytest.approx(10422 / 12330)
        for key in ("nearest_labeled", "propagation", "propagation_true_shares"):
            assert 0.3 < row[key] < 0.9
    assert record["rows"][1]["labels"] == [7, 5]
    assert (out / "Shopper_0.001.md").read_text().startswith(
        "Shopper, 0.001 labels, k = 10; S: sledge from first, second; "
        "L: sledge-light from second.")


def test_bad_arguments_are_usage_errors(tmp_path, monkeypatch, capsys):
    argv = ["--dataset", "Shopper", "--ratio", "0.001", "--out", str(tmp_path / "out")]
    assert "--runs names a column twice: A, A" in usage_error(
        main, argv + ["--runs", "A=sledge:x", "--runs", "A=base:y", "--root", str(tmp_path)],
        capsys)
    assert "expected NAME=MODEL:TAG" in usage_error(main, argv + ["--runs", "sledge"], capsys)
    (tmp_path / "runs" / "first").mkdir(parents=True)  # a mistyped tag: not a column of dashes
    assert usage_error(main, argv + ["--results", str(tmp_path / "runs"), "--runs",
                                     "S=sledge:first,frist,secnd", "--root", str(tmp_path)],
                       capsys).splitlines()[-1].endswith(
        f"--runs: no such tag in {tmp_path / 'runs'}: frist, secnd")
    assert "argument --k" in usage_error(main, argv + ["--k", "0"], capsys)
    assert "argument --ratio" in usage_error(main, ["--dataset", "Shopper", "--ratio", "2"],
                                             capsys)
    without_data_folder(monkeypatch, tmp_path)
    assert NO_DATA_FOLDER in usage_error(main, argv, capsys)
    assert not (tmp_path / "out").exists()
