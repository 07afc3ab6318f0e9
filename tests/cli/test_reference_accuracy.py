"""``benchmarks/reference_accuracy.py``: both sides get the same rows, names and
options are checked before anything runs."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from torch_geometric_stream.datasets import StreamDataset

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import reference_accuracy  # noqa: E402
from benchmark_script_helpers import cut_short, usage_error  # noqa: E402

N = 60


def like(name: str, features: int, classes: int) -> StreamDataset:
    """A heavy-tailed synthetic stream under a paper dataset's name (its setting)."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, classes, N)
    x = rng.normal(size=(classes, features))[y] + rng.normal(size=(N, features))
    x = np.sign(x) * np.expm1(3.0 * np.abs(x))
    return StreamDataset(name=name, x=x.astype(np.float32), y=y, num_classes=classes,
                         class_names=[str(c) for c in range(classes)])


@pytest.mark.parametrize("name, features, classes, inputs", [
    ("GSAD", 128, 6, {"scaling": "robust", "feature_transform": "none",
                      "setting_scaling": "robust-rescale"}),
    ("Shopper", 17, 2, {"scaling": "robust", "feature_transform": "signed-log1p",
                        "setting_scaling": "robust-rescale"}),
])
def test_both_sides_agree_sample_for_sample(name, features, classes, inputs):
    record = reference_accuracy.lockstep(like(name, features, classes), 0.01, 0,
                                         torch.float64, every=10)
    assert record["inputs"] == inputs
    assert record["differing_predictions"] == []
    assert max(t["max_memory_diff"] for t in record["trace"]) < 1e-12
    assert max(t["max_param_diff"] for t in record["trace"]) < 1e-8
    assert max(t["max_proba_diff"] for t in record["trace"]) < 1e-8


def test_run_records_the_same_predictions_and_inputs_on_both_sides(capsys):
    dataset = like("Shopper", 17, 2)
    ours, reference = (reference_accuracy.run_one(dataset, 0.01, 0, side, 1, torch.float64)
                       for side in reference_accuracy.SIDES)
    assert capsys.readouterr().err == ""  # no progress bar, as in the other scripts
    assert ours["predictions"] == reference["predictions"]
    assert ours["inputs"] == reference["inputs"] == {
        "scaling": "robust", "feature_transform": "signed-log1p",
        "setting_scaling": "robust-rescale"}


def test_the_reference_refuses_a_model_that_scales_its_own_input():
    from torch_geometric_stream import SLeDGe

    with pytest.raises(ValueError, match="input_scaling='robust'"):
        reference_accuracy.DenseReferenceSLeDGe(SLeDGe(4, 2, input_scaling="robust"))


def test_a_dataset_name_is_canonical_in_setting_and_file(monkeypatch, tmp_path):
    loaded: list[str] = []

    def load_prefix(name: str, root: Path, limit: int) -> StreamDataset:
        loaded.append(name)
        return like(name, 4, 2)

    def run_one(dataset: StreamDataset, *args: Any) -> dict[str, Any]:
        return {"dataset": dataset.name, "accuracy": 0.5, "ms_per_sample": 1.0}

    monkeypatch.setattr(reference_accuracy, "OUT", tmp_path)
    monkeypatch.setattr(reference_accuracy, "load_prefix", load_prefix)
    monkeypatch.setattr(reference_accuracy, "run_one", run_one)
    reference_accuracy.main(["run", "--side", "ours", "--datasets", "gsad", "--limit", "50",
                             "--root", str(tmp_path)])
    assert loaded == ["GSAD"]
    assert [p.name for p in tmp_path.glob("*.json")] == ["GSAD_0.01_seed0_limit50_ours.json"]


@pytest.mark.parametrize("argv, message", [
    (["run", "--datasets", "Foo"], "unknown dataset 'Foo'"),
    (["lockstep", "--dataset", "Foo"], "unknown dataset 'Foo'"),
    (["run", "--threads", "0"], "--threads: expected a positive integer"),
    (["run", "--threads", "1025"], "--threads: expected at most 1024 threads, got '1025'"),
    (["run", "--limit", "0"], "--limit: expected a positive integer"),
    (["run", "--root", "/nonexistent"], "--root: folder /nonexistent does not exist"),
    (["lockstep", "--root", "/nonexistent"], "--root: folder /nonexistent does not exist"),
    (["run", "--perturb", "0.1", "--root", "."], "--perturb perturbs our side only"),
    *[(["run", "--side", "ours", "--root", ".", f"--perturb={eps}"],
       f"argument --perturb: expected a relative size in (0, 1), got {eps!r}")
      for eps in ("0", "-1e-7", "1", "2.5", "inf", "nan", "tiny")],
])
def test_bad_input_is_one_usage_error_line(capsys, argv, message):
    error = usage_error(reference_accuracy.main, argv, capsys)  # exit status 2
    assert message in error.splitlines()[-1]
    assert "Traceback" not in error


def test_render_refuses_a_result_cut_short_in_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(reference_accuracy, "OUT", tmp_path)
    monkeypatch.setattr(reference_accuracy, "LOCKSTEP", tmp_path / "lockstep")
    refusal = cut_short(tmp_path / "lockstep" / "GSAD_0.01_seed0_limit400_float32.json")
    error = usage_error(reference_accuracy.main, ["render"], capsys)
    assert error.splitlines()[-1].endswith(refusal)


def test_an_unloadable_dataset_is_one_error_line(tmp_path):
    with pytest.raises(reference_accuracy.UsageError, match="cannot load GSAD"):
        reference_accuracy.load_prefix("GSAD", tmp_path, 10)
