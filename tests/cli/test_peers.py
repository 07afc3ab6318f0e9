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


class _Replay:
    """A learner that predicts what it is given, in turn (to evaluate another
    evaluator's predictions with ours)."""

    def __init__(self, predictions, num_classes):
        self.num_classes, self._predictions = num_classes, iter(predictions)

    def predict(self, x):
        return int(next(self._predictions))

    def learn(self, x, y):
        pass


@pytest.mark.parametrize("history", ["full", "bounded"])
def test_the_windows_are_capymoa_s_windowed_accuracy_and_kappa(blobs, history):
    # CapyMOA's (MOA's) windowed evaluator: a row per window of 20 instances, the
    # last one of 10 (90 = 4 x 20 + 10), accuracy and kappa in percent
    from capymoa.evaluation import prequential_ssl_evaluation

    from torch_geometric_stream.evaluation import prequential

    x, y = blobs
    stream = peers.numpy_stream(x, y, "blobs")
    capymoa_learner, _ = peers.make_learner("sledge-light", stream.get_schema(), "blobs", 0.1, 3)
    expected = prequential_ssl_evaluation(stream, capymoa_learner, label_probability=0.1,
                                          random_seed=3, optimise=False, window_size=20,
                                          store_predictions=True)
    table = expected.windowed.metrics_per_window()
    ours = prequential(_Replay(expected.predictions(), 3), zip(x, y), window=20,
                       label_mask=np.zeros(N, dtype=bool), history=history,
                       progress=False).windows
    np.testing.assert_array_equal(ours["end"], table["instances"].to_numpy())
    np.testing.assert_allclose(100 * ours["accuracy"], table["accuracy"].to_numpy(), atol=1e-9)
    np.testing.assert_allclose(100 * ours["kappa"], table["kappa"].to_numpy(), atol=1e-9)
    assert list(ours["n_samples"]) == [20, 20, 20, 20, 10]
