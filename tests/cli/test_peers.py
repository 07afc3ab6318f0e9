"""``benchmarks/peers.py``: the resumable path gives CapyMOA's evaluator's predictions."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("capymoa")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import peers  # noqa: E402

N = 90
LABELED = 8  # CapyMOA's generator, seed 3, draws 8 values below 0.1 in its first 90


@pytest.fixture(scope="module")
def blobs():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, N)
    x = np.tanh(rng.normal(size=(3, 5))[y] + 0.5 * rng.normal(size=(N, 5)))
    return x, y


@pytest.mark.parametrize("learner", ["sledge", "sledge-light"])
def test_the_resumable_path_predicts_what_capymoa_s_evaluator_predicts(blobs, learner,
                                                                       tmp_path):
    from capymoa.evaluation import prequential_ssl_evaluation

    x, y = blobs
    stream = peers.numpy_stream(x, y, "blobs")
    capymoa_learner, _ = peers.make_learner(learner, stream.get_schema(), "blobs", 0.1, 3)
    expected = prequential_ssl_evaluation(stream, capymoa_learner, label_probability=0.1,
                                          random_seed=3, optimise=False, window_size=50,
                                          store_predictions=True).predictions()
    result, _ = peers.evaluate_resumable(learner, "blobs", x, y, 0.1, 3, None,
                                         tmp_path / "run.ckpt", every=30)
    assert result.labeled.sum() == LABELED
    np.testing.assert_array_equal(result.predictions, expected)


def test_an_interrupted_run_resumes_to_the_same_predictions(blobs, tmp_path, monkeypatch):
    x, y = blobs
    whole, _ = peers.evaluate_resumable("sledge-light", "blobs", x, y, 0.1, 3, None,
                                        tmp_path / "whole.ckpt", every=30)
    checkpoint = tmp_path / "cut.ckpt"
    prequential = peers.prequential

    def interrupted(*args, callback, **kwargs):
        def stop(position, record):
            callback(position, record)
            if position == 59:
                raise KeyboardInterrupt

        return prequential(*args, callback=stop, **kwargs)

    monkeypatch.setattr(peers, "prequential", interrupted)
    with pytest.raises(KeyboardInterrupt):
        peers.evaluate_resumable("sledge-light", "blobs", x, y, 0.1, 3, None, checkpoint,
                                 every=30)
    monkeypatch.undo()
    assert checkpoint.exists()  # written at 60 instances
    resumed, _ = peers.evaluate_resumable("sledge-light", "blobs", x, y, 0.1, 3, None,
                                          checkpoint, every=30)
    assert resumed.start == 0 and resumed.correct.size == N
    np.testing.assert_array_equal(resumed.predictions, whole.predictions)
    np.testing.assert_array_equal(resumed.labeled, whole.labeled)


def test_a_checkpoint_of_another_run_is_refused(blobs, tmp_path):
    x, y = blobs
    checkpoint = tmp_path / "run.ckpt"
    peers.evaluate_resumable("sledge-light", "blobs", x, y, 0.1, 3, 40, checkpoint, every=30)
    with pytest.raises(ValueError, match="seed"):
        peers.evaluate_resumable("sledge-light", "blobs", x, y, 0.1, 4, None, checkpoint,
                                 every=30)


def test_run_resumable_writes_the_record_and_deletes_its_checkpoint(blobs, tmp_path):
    x, y = blobs
    path = tmp_path / "sledge-light_blobs.json"
    record = peers.run_resumable("sledge-light", "blobs", x, y, 0.1, 3, None, "global", path,
                                 every=30)
    assert record["samples"] == N and record["driver"] == "resumable"
    assert record["unlabeled_ratio"] == pytest.approx(1 - LABELED / N)
    assert 0.0 <= record["accuracy"] <= 1.0 and record["resumed"] is False
    assert record["ms_per_sample"] > 0.0 and record["ms_per_sample_basis"].startswith("median")
    assert not path.with_suffix(".ckpt").exists()


def test_capymoa_s_evaluator_runs_without_a_progress_bar(blobs, capsys):
    x, y = blobs
    record = peers.run_one("HoeffdingTree", "blobs", peers.numpy_stream(x, y, "blobs"), 0.1, 3,
                           None, "global")
    assert record["samples"] == N
    assert "\r" not in capsys.readouterr().err  # no tqdm bar redrawn
