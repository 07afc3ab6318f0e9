"""Save/load of learners: exact continuation, validation, no half-loads, atomic writes."""
from __future__ import annotations

import copy
import os
import pickle
import random
import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
import torch
from state_helpers import assert_same

from torch_geometric_stream.baselines import HDSSL, ReSSL, TemporalLabelPropagation
from torch_geometric_stream.base import StreamClassifier
from torch_geometric_stream.checkpoint import (CheckpointError, checkpoint_callback,
                                               load_checkpoint, save_checkpoint)
from torch_geometric_stream.evaluation import OnlineMinMaxScaler, make_transform, prequential
from torch_geometric_stream.models import SLEDGE_VARIANTS, OnlineMLP, SLeDGe
from torch_geometric_stream.nn.scaling import RunningMinMax

D, C = 8, 3


def small_sledge(seed: int = 0, **kwargs: Any) -> SLeDGe:
    options = dict(labeled_size=6, unlabeled_size=12, hidden_channels=16, k=3, seed=seed)
    options.update(kwargs)
    return SLeDGe(options.pop("in_channels", D), options.pop("num_classes", C), **options)


class PlainLearner(StreamClassifier):
    """A learner without ``state_dict``: checkpointed through its ``__dict__``."""

    def __init__(self, in_channels: int, num_classes: int) -> None:
        self.in_channels, self.num_classes = in_channels, num_classes
        self.counts = np.zeros(num_classes)

    def _predict_proba(self, x: torch.Tensor) -> torch.Tensor:
        proba = torch.as_tensor(self.counts + 1.0, dtype=torch.float32)
        return (proba / proba.sum()).expand(x.size(0), -1)

    def _learn(self, x: torch.Tensor, y: torch.Tensor) -> None:
        for label in y.tolist():
            if label >= 0:
                self.counts[label] += 1


#: name -> factory(seed); a different seed must give a different initial state
#: where the learner has one, so that loading is what makes the copies equal.
LEARNERS: dict[str, Callable[[int], Any]] = {
    "sledge": lambda seed: small_sledge(seed),
    "sledge-light": lambda seed: small_sledge(seed, light=True),
    "sledge-dropout": lambda seed: small_sledge(seed, dropout=0.3),  # its generator resumes
    # the ablations: "static" keeps the memory graph its training steps patch
    **{name: (lambda seed, variant=SLEDGE_VARIANTS[name]: small_sledge(seed, **variant))
       for name in ("gsl", "static", "memory")},
    "online-mlp": lambda seed: OnlineMLP(D, C, hidden_channels=16, seed=seed),
    "ressl": lambda seed: ReSSL(D, C, memory_size=20),
    "hdssl": lambda seed: HDSSL(D, C, memory_size=20, seed=seed),
    "tlp": lambda seed: TemporalLabelPropagation(D, C, memory_size=20),
    "plain": lambda seed: PlainLearner(D, C),
}


def stream(n: int = 120, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, C, n)
    x = rng.normal(size=(n, D)) + 2.0 * np.eye(C, D)[y]
    return x.astype(np.float32), y


def feed(learner: Any, x: np.ndarray, y: np.ndarray, offset: int = 0) -> list[int]:
    """Test-then-train; every third position labeled. Returns the predictions."""
    predictions = []
    for position, (row, label) in enumerate(zip(x, y), start=offset):
        predictions.append(int(learner.predict(row)))
        learner.learn(row, int(label) if position % 3 == 0 else -1)
    return predictions


def state_of(learner: Any) -> Any:
    """A deep copy of everything a checkpoint stores about ``learner``."""
    return copy.deepcopy(learner.state_dict() if hasattr(learner, "state_dict")
                         else learner.__dict__)


@pytest.mark.parametrize("name", list(LEARNERS))
def test_round_trip_continues_exactly(name, tmp_path):
    x, y = stream()
    original = LEARNERS[name](0)
    feed(original, x[:60], y[:60])
    path = save_checkpoint(tmp_path / "mid.ckpt", original, position=60, extra={"note": name})

    restored = LEARNERS[name](1)
    state = load_checkpoint(path, restored)
    assert (state.position, state.record, state.extra) == (60, None, {"note": name})
    assert_same(state_of(restored), state_of(original))
    # Same predictions and, after more learning, the same state: parameters,
    # memory and (for the torch learners) the optimizer's moments and steps.
    assert feed(restored, x[60:], y[60:], 60) == feed(original, x[60:], y[60:], 60)
    assert_same(state_of(restored), state_of(original))


def test_optimizer_state_matters_for_sledge():
    """Without the optimizer state the continuation would differ: the test above is sharp."""
    x, y = stream()
    original = small_sledge()
    feed(original, x[:60], y[:60])
    weights_only = small_sledge(1)
    weights_only.load_state_dict({key: value for key, value in original.state_dict().items()
                                  if key != "_extra_state"}, strict=False)
    feed(original, x[60:], y[60:], 60)
    feed(weights_only, x[60:], y[60:], 60)
    assert not torch.equal(original.backbone.convs[0].lin.weight,
                           weights_only.backbone.convs[0].lin.weight)


def test_checkpoint_of_a_cuda_graph_run_resumes_on_the_cpu(tmp_path):
    """A run stepped from CUDA graphs saves Adam in its capturable form (step
    counts as float tensors), which torch cannot step on the CPU: resumed there,
    it continues as plain Adam, with the same updates as a twin that never was."""
    x, y = stream()
    original = small_sledge()
    feed(original, x[:60], y[:60])
    twin = copy.deepcopy(original)
    for group in original.optimizer.param_groups:  # as CUDAGraphStep leaves it
        group["capturable"] = True
    for state in original.optimizer.state.values():
        state["step"] = torch.as_tensor(float(state["step"]), dtype=torch.float32)
    path = save_checkpoint(tmp_path / "graphed.ckpt", original, position=60)

    restored = small_sledge(1)
    load_checkpoint(path, restored)
    assert not any(group["capturable"] for group in restored.optimizer.param_groups)
    assert feed(restored, x[60:], y[60:], 60) == feed(twin, x[60:], y[60:], 60)
    for a, b in zip(restored.parameters(), twin.parameters()):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", ["sledge", "sledge-light", "online-mlp"])
def test_torch_learners_keep_learning_after_a_dtype_change(name):
    """``Module.to`` converts parameters, not Adam's moments: the torch learners
    convert them too, so that learning goes on (torch's Adam refused mixed dtypes)."""
    x, y = stream()
    model = LEARNERS[name](0)
    feed(model, x[:60], y[:60])
    before = {int(state["step"]) for state in model.optimizer.state.values()}
    model.double()
    feed(model, x[60:].astype(np.float64), y[60:], 60)
    states = list(model.optimizer.state.values())
    assert states and all(state["exp_avg"].dtype == torch.float64 for state in states)
    after = {int(state["step"]) for state in states}
    assert len(before) == len(after) == 1 and after.pop() > before.pop()  # counting on


@pytest.mark.parametrize("scaling, options", [("online", None),
                                             ("robust", {"reservoir_size": 20, "seed": 1})])
def test_prequential_resume_gives_the_uninterrupted_result(tmp_path, scaling, options):
    """With ``robust`` the reservoir (20 rows of 90) and its generator resume too."""
    x, y = stream(90)
    mask = np.arange(90) % 4 == 0
    path = tmp_path / "run.ckpt"

    def build() -> tuple[OnlineMLP, Any]:
        return (OnlineMLP(D, C, hidden_channels=16, seed=0),
                make_transform(scaling, robust_options=options))

    def checkpoint_at_40(position: int, record: Any) -> None:
        if position + 1 == 40:
            save_checkpoint(path, learner, position=40, record=record, transform=transform)

    learner, transform = build()
    full = prequential(learner, list(zip(x, y)), label_mask=mask, transform=transform,
                       progress=False, callback=checkpoint_at_40)
    learner, transform = build()
    state = load_checkpoint(path, learner, transform=transform)
    resumed = prequential(learner, list(zip(x, y)), label_mask=mask, transform=transform,
                          progress=False, start=state.position, initial=state.record)
    assert resumed.start == 0
    for name in ("correct", "predictions", "labels", "labeled"):
        np.testing.assert_array_equal(getattr(resumed, name), getattr(full, name))
    for key in ("accuracy", "accuracy_last_20", "accuracy_last_5", "n_samples", "n_labels"):
        assert resumed.metrics[key] == full.metrics[key]


class ModuleTransform(torch.nn.Linear):
    """A transform that is a :class:`torch.nn.Module`, not a ``StreamTransform``."""

    def __call__(self, x: Any) -> torch.Tensor:
        return super().__call__(torch.as_tensor(x, dtype=torch.float32)).detach()


def test_a_module_transform_is_saved_by_the_callback_and_restored(tmp_path):
    """Any transform with ``state_dict()`` and ``load_state_dict()`` is checkpointed
    (before: ``TypeError: transform must be a StreamTransform or None``)."""
    x, y = stream(20)
    path = tmp_path / "run.ckpt"
    torch.manual_seed(0)
    transform = ModuleTransform(D, D)
    every_10 = checkpoint_callback(path, OnlineMLP(D, C, seed=0), every=10, end=20,
                                   transform=transform)
    prequential(every_10.learner, list(zip(x, y)), transform=transform, progress=False,
                callback=every_10)
    torch.manual_seed(1)
    restored = ModuleTransform(D, D)
    assert not torch.equal(restored.weight, transform.weight)
    state = load_checkpoint(path, OnlineMLP(D, C, seed=1), transform=restored)
    assert state.position == 20
    assert_same(restored.state_dict(), transform.state_dict())


def test_a_checkpoint_whose_record_holds_lists_resumes_to_the_uninterrupted_result(tmp_path):
    """A record saved as Python lists (not as :meth:`PrequentialRecord.state_dict`'s
    arrays) resumes into the compact record as if never interrupted; a record saved
    now holds the arrays it always held."""
    x, y = stream(60)
    mask = np.arange(60) % 3 == 0
    path = tmp_path / "run.ckpt"
    saved = {}

    def checkpoint_at_25(position: int, record: Any) -> None:
        if position + 1 == 25:
            saved.update(record.state_dict())
            as_lists = {key: value.tolist() if isinstance(value, np.ndarray) else value
                        for key, value in saved.items()}
            save_checkpoint(path, learner, position=25, record=as_lists)

    learner = OnlineMLP(D, C, hidden_channels=16, seed=0)
    full = prequential(learner, list(zip(x, y)), label_mask=mask, progress=False,
                       callback=checkpoint_at_25)
    assert [(saved[key].dtype, saved[key].shape) for key in ("predictions", "labels",
                                                             "labeled", "seconds")] == [
        (np.int64, (25,)), (np.int64, (25,)), (bool, (25,)), (np.float64, (25,))]
    learner = OnlineMLP(D, C, hidden_channels=16, seed=0)
    state = load_checkpoint(path, learner)
    assert isinstance(state.record["predictions"], list)
    resumed = prequential(learner, list(zip(x, y)), label_mask=mask, progress=False,
                          start=state.position, initial=state.record)
    for name in ("correct", "predictions", "labels", "labeled"):
        np.testing.assert_array_equal(getattr(resumed, name), getattr(full, name))
        assert getattr(resumed, name).dtype == getattr(full, name).dtype
    timing = {"seconds", "peak_memory_mb", "ms_per_sample_median", "ms_per_sample_p95"}
    assert ({key: value for key, value in resumed.metrics.items() if key not in timing}
            == {key: value for key, value in full.metrics.items() if key not in timing})


def test_a_bounded_run_resumes_from_its_checkpoint_to_the_uninterrupted_counts(tmp_path):
    """The bounded record's counts go through the checkpoint file; a run of the
    other history refuses them, naming both, before the learner takes a step."""
    x, y = stream(90)
    mask = np.arange(90) % 4 == 0
    path = tmp_path / "run.ckpt"

    def checkpoint_at_40(position: int, record: Any) -> None:
        if position + 1 == 40:
            save_checkpoint(path, learner, position=40, record=record)

    learner = OnlineMLP(D, C, hidden_channels=16, seed=0)
    whole = prequential(learner, list(zip(x, y)), label_mask=mask, progress=False,
                        callback=checkpoint_at_40, history="bounded")
    learner = OnlineMLP(D, C, hidden_channels=16, seed=0)
    state = load_checkpoint(path, learner)
    resumed = prequential(learner, list(zip(x, y)), label_mask=mask, progress=False,
                          start=state.position, initial=state.record, history="bounded")
    timing = {"seconds", "peak_memory_mb", "ms_per_sample_median", "ms_per_sample_p95"}
    assert ({key: value for key, value in resumed.metrics.items() if key not in timing}
            == {key: value for key, value in whole.metrics.items() if key not in timing})
    assert resumed.metrics["n_samples"] == 90 and resumed.start == 0
    learner = OnlineMLP(D, C, hidden_channels=16, seed=0)
    state = load_checkpoint(path, learner)
    before = state_of(learner)
    with pytest.raises(ValueError, match="kept with history='bounded', this record keeps "
                                         "history='full'"):
        prequential(learner, list(zip(x, y)), label_mask=mask, progress=False,
                    start=state.position, initial=state.record)
    assert_same(state_of(learner), before)


def test_the_callback_saves_every_n_at_the_end_and_at_finish_of_a_stream_of_no_known_end(
        tmp_path, monkeypatch):
    """With ``end``, the last position is saved as the run reaches it (``during``
    the run); without (a stream read as it comes), :meth:`finish` saves it, once;
    ``extra`` given as a function is called at each save."""
    x, y = stream(10)
    learner = OnlineMLP(D, C, hidden_channels=16, seed=0)
    saved: list[tuple[int, Any]] = []
    monkeypatch.setattr("torch_geometric_stream.checkpoint.save_checkpoint",
                        lambda path, learner, position, extra, **_: saved.append(
                            (position, extra)))
    for every, end, during, positions in ((4, 10, 3, [4, 8, 10]), (None, 10, 1, [10]),
                                          (4, None, 2, [4, 8, 10]), (None, None, 0, [10]),
                                          (5, None, 2, [5, 10])):
        saved.clear()
        callback = checkpoint_callback(tmp_path / "c.ckpt", learner, every=every, end=end,
                                       extra=lambda: {"saves": len(saved)})
        prequential(learner, list(zip(x, y)), progress=False, callback=callback)
        assert len(saved) == during, (every, end)
        callback.finish()
        callback.finish()  # saved already: nothing more
        assert saved == [(position, {"saves": index}) for index, position in
                         enumerate(positions)], (every, end)


def test_initial_must_end_at_start():
    learner = OnlineMLP(D, C, hidden_channels=16, seed=0)
    x, y = stream(10)
    first = prequential(learner, list(zip(x, y)), progress=False, limit=4)
    initial = {"start": 0, "predictions": first.predictions, "labels": first.labels,
               "labeled": first.labeled, "seconds": np.zeros(4), "elapsed": 0.0}
    with pytest.raises(ValueError, match=r"initial covers positions \[0, 4\) but start=5"):
        prequential(learner, list(zip(x, y)), progress=False, start=5, initial=initial)


def test_rng_states_are_restored(tmp_path):
    learner = OnlineMLP(D, C, hidden_channels=16, seed=0)
    torch.manual_seed(3)
    np.random.seed(3)
    path = save_checkpoint(tmp_path / "rng.ckpt", learner, position=0)
    expected = (torch.rand(3), np.random.rand(3))
    torch.manual_seed(4)
    np.random.seed(4)
    load_checkpoint(path, learner)
    assert torch.equal(torch.rand(3), expected[0])
    np.testing.assert_array_equal(np.random.rand(3), expected[1])


def test_a_cpu_run_on_a_machine_with_cuda_leaves_cuda_uninitialized(tmp_path, monkeypatch):
    # before: saving (and loading, which backs the states up) read every CUDA
    # device's generator whenever CUDA was available, creating a CUDA context.
    # The learner learns before CUDA is faked: a CUDA build's Adam (torch 2.1)
    # asks the driver whether a graph capture runs once CUDA says it is there
    learner = small_sledge()
    feed(learner, *stream(10))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    monkeypatch.setattr(torch.cuda, "get_rng_state_all",
                        lambda: pytest.fail("a CPU run's checkpoint initialized CUDA"))
    monkeypatch.setattr(torch.cuda, "set_rng_state_all",
                        lambda states: pytest.fail("no CUDA states were saved"))
    path = save_checkpoint(tmp_path / "cpu.ckpt", learner, position=10)
    assert torch.load(path, weights_only=False)["rng"]["cuda"] is None
    restored = small_sledge(1)
    load_checkpoint(path, restored)
    assert_same(state_of(restored), state_of(learner))


def test_the_cuda_states_of_a_process_using_cuda_are_saved_and_restored(tmp_path,
                                                                         monkeypatch):
    states = [torch.arange(4, dtype=torch.uint8), torch.arange(4, 8, dtype=torch.uint8)]
    restored: list = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "get_rng_state_all", lambda: states)
    monkeypatch.setattr(torch.cuda, "set_rng_state_all", restored.append)
    path = save_checkpoint(tmp_path / "cuda.ckpt", small_sledge(), position=0)
    load_checkpoint(path, small_sledge())
    assert len(restored) == 1 and all(map(torch.equal, restored[0], states))


# ------------------------------------------------------------ bad checkpoints
@pytest.fixture
def saved(tmp_path) -> Path:
    learner = small_sledge()
    x, y = stream(30)
    feed(learner, x, y)
    return save_checkpoint(tmp_path / "good.ckpt", learner, position=30,
                           extra={"seed": 0}, transform=make_transform("online"))


def assert_refused(path: Path, learner: Any, match: str, **kwargs: Any) -> None:
    """Loading raises CheckpointError matching ``match`` and changes nothing."""
    transform = kwargs.pop("transform", make_transform("online"))
    before = state_of(learner), copy.deepcopy(transform.state_dict()), rng_states()
    with pytest.raises(CheckpointError, match=match):
        load_checkpoint(path, learner, transform=transform, **kwargs)
    assert_same((state_of(learner), transform.state_dict(), rng_states()), before)


def rng_states() -> tuple:
    """The global generators' states a checkpoint restores: torch's, NumPy's, Python's."""
    return torch.get_rng_state(), np.random.get_state(), random.getstate()


def test_truncated_file(saved):
    saved.write_bytes(saved.read_bytes()[:len(saved.read_bytes()) // 2])
    assert_refused(saved, small_sledge(), f"cannot read checkpoint {saved}")


def test_empty_file(tmp_path):
    empty = tmp_path / "empty.ckpt"
    empty.touch()
    assert_refused(empty, small_sledge(), r"checkpoint .*empty.ckpt is empty \(0 bytes\)")


@pytest.mark.parametrize("name, write", [
    ("garbage.ckpt", lambda path: path.write_bytes(np.random.default_rng(0).bytes(4096))),
    ("notes.txt", lambda path: path.write_text("hello\nworld\n")),
    ("run.json", lambda path: path.write_text('{"accuracy": 0.9}')),
    ("plain.pkl", lambda path: path.write_bytes(pickle.dumps({"format": "x"}))),
    ("stream.npz", lambda path: np.savez(path, x=np.zeros((2, 2)), y=np.zeros(2))),
], ids=["random bytes", "text", "JSON", "plain pickle", "NumPy archive"])
def test_a_file_torch_save_did_not_write_is_named_as_no_checkpoint(tmp_path, name, write):
    # before: pickle and zip internals ("UnpicklingError: invalid load key, '{'.")
    path = tmp_path / name
    write(path)
    assert_refused(path, small_sledge(),
                   f"^{re.escape(str(path))} is not a torch_geometric_stream checkpoint$")


@pytest.mark.parametrize("protocol", [2, 3, 4, 5])
def test_a_checkpoint_in_torchs_legacy_format_loads(saved, tmp_path, protocol):
    # torch.load reads it; before: "... is not a torch_geometric_stream checkpoint"
    # (protocols 3 to 5 until the sniff read the PROTO and FRAME opcodes)
    payload = torch.load(saved, weights_only=False)
    legacy = tmp_path / "legacy.ckpt"
    torch.save(payload, legacy, _use_new_zipfile_serialization=False, pickle_protocol=protocol)
    assert legacy.read_bytes()[:2] != b"PK"
    learner, transform = small_sledge(seed=1), make_transform("online")
    assert load_checkpoint(legacy, learner, transform=transform).position == 30
    assert_same(learner.state_dict(), payload["learner"]["state"])
    assert_same(transform.state_dict(), payload["transform"]["state"])


def test_a_transform_of_another_feature_range_is_refused(tmp_path):
    """The scaler's state goes with its feature range, and load_checkpoint refuses
    it to a scaler of another, as the command line refuses such a resume (before:
    loaded, and the run went on scaling to another interval than its memory's)."""
    learner = small_sledge()
    x, y = stream(30)
    feed(learner, x, y)
    transform = make_transform("online", feature_range=(0, 1))
    transform.transform_many(x)
    path = save_checkpoint(tmp_path / "r.ckpt", learner, position=30, transform=transform)
    assert_refused(path, small_sledge(seed=1), re.escape(
        "the OnlineMinMaxScaler state was kept with feature_range=(0.0, 1.0), this scaler "
        "has feature_range=(-1.0, 1.0): build it with the state's feature_range"))
    resumed = make_transform("online", feature_range=(0, 1))
    assert load_checkpoint(path, small_sledge(seed=1), transform=resumed).position == 30
    assert_same(resumed.state_dict(), transform.state_dict())


def test_a_checkpoint_without_its_entries_is_named(saved):
    payload = torch.load(saved, weights_only=False)
    del payload["extra"], payload["rng"]
    torch.save(payload, saved)
    assert_refused(saved, small_sledge(), r"lacks the entries \['extra', 'rng'\]")


def rewritten(saved: Path, path: Path, edit: Callable[[dict], Any]) -> Path:
    """A copy of the checkpoint ``saved`` at ``path``, its payload changed by ``edit``."""
    payload = torch.load(saved, weights_only=False)
    edit(payload)
    torch.save(payload, path)
    return path


def test_another_format_version_is_named(saved, tmp_path):
    newer = rewritten(saved, tmp_path / "newer.ckpt",
                      lambda payload: payload.update(format_version=2))
    assert_refused(newer, small_sledge(), "newer.ckpt has format version 2, this package reads 1")


def test_foreign_pickle(tmp_path):
    other = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(2)}, other)
    assert_refused(other, small_sledge(), "is not a torch_geometric_stream checkpoint")


@pytest.mark.parametrize("kwargs, match", [
    ({"in_channels": 16}, "checkpoint has in_channels=8, learner has 16"),
    ({"num_classes": 2}, "checkpoint has num_classes=3, learner has 2"),
    ({"labeled_size": 9}, "checkpoint has labeled_size=6, learner has 9"),
    ({"unlabeled_size": 20}, "checkpoint has unlabeled_size=12, learner has 20"),
    ({"hidden_channels": 32}, "checkpoint has hidden_channels=16, learner has 32"),
    ({"light": True}, "checkpoint has light=False, learner has True"),
])
def test_shape_mismatch_is_named(saved, kwargs, match):
    assert_refused(saved, small_sledge(**kwargs), match)


@pytest.mark.parametrize("kwargs, match", [
    ({"lr": 0.5}, r"saved optimizer has lr=0.001 \(this learner: 0.5\)"),
    ({"weight_decay": 0.1}, r"saved optimizer has weight_decay=0.0 \(this learner: 0.1\)"),
])
def test_optimizer_settings_mismatch_is_named(saved, kwargs, match):
    # loading would silently give the learner the saved optimizer's settings
    assert_refused(saved, small_sledge(**kwargs), match)


@pytest.mark.parametrize("kwargs, match", [
    ({"lam": 0.0}, "checkpoint has lam=0.1, learner has 0.0"),
    ({"normalization": "mean"}, "checkpoint has normalization='symmetric', learner has 'mean'"),
    ({"tau": 5.0}, "checkpoint has tau=None, learner has 5.0"),
    ({"count_offset": 0}, "checkpoint has count_offset=1, learner has 0"),
    ({"source_merge": "unit"}, "checkpoint has source_merge='raw', learner has 'unit'"),
    ({"input_scaling": "online"}, "checkpoint has input_scaler=None, learner has "
                                  "'RunningMinMax'"),
    ({"lam": 0.0, "regularizer": "frobenius"},
     "checkpoint has lam=0.1, learner has 0.0; checkpoint has regularizer='plain', learner "
     "has 'frobenius'"),
])
def test_other_settings_are_named(saved, kwargs, match):
    # same shapes, so the state would load: the learner would go on computing
    # something else than the run it resumes
    assert_refused(saved, small_sledge(**kwargs), "saved with other settings: " + match)


@pytest.mark.parametrize("build, other, match", [
    (TemporalLabelPropagation, {"sigma": 0.5}, "checkpoint has sigma=None, learner has 0.5"),
    (TemporalLabelPropagation, {"knn": 3}, "checkpoint has knn=None, learner has 3"),
    (ReSSL, {"window": 30}, "checkpoint has window=100, learner has 30"),
    (ReSSL, {"ks": (1, 3, 5, 9)}, r"checkpoint has ks=\(1, 3, 5, 7\), learner has \(1, 3, 5, 9\)"),
    (ReSSL, {"decay": 0.05}, "checkpoint has decay=2e-06, learner has 0.05"),
    (ReSSL, {"radius_k": 5}, "checkpoint has radius_k=None, learner has 5"),
    (HDSSL, {"prune_threshold": 0.3}, "checkpoint has prune_threshold=0.15, learner has 0.3"),
])
def test_the_baselines_settings_are_named(tmp_path, build, other, match):
    """A baseline built with another hyperparameter than the checkpoint's is
    refused (before: it loaded, and went on computing another run than the one
    it resumed)."""
    x, y = stream(30)
    learner = build(D, C, memory_size=20)
    feed(learner, x, y)
    path = save_checkpoint(tmp_path / "baseline.ckpt", learner, position=30)
    with pytest.raises(CheckpointError, match="saved with other settings: " + match):
        load_checkpoint(path, build(D, C, memory_size=20, **other))
    assert load_checkpoint(path, build(D, C, memory_size=20)).position == 30


@pytest.mark.parametrize("build", [TemporalLabelPropagation, ReSSL, HDSSL])
def test_a_baselines_checkpoint_of_a_state_without_its_settings_loads(tmp_path, build):
    """A baseline's state keeps its settings (the entry ``settings``) since they go
    with it; a checkpoint written before, whose state lacks the entry, still loads
    (the file's own settings are compared, as before)."""
    x, y = stream(30)
    learner = build(D, C, memory_size=20)
    feed(learner, x, y)
    path = save_checkpoint(tmp_path / "baseline.ckpt", learner, position=30)
    older = rewritten(path, tmp_path / "older.ckpt",
                      lambda payload: payload["learner"]["state"].pop("settings"))
    resumed = build(D, C, memory_size=20)
    assert load_checkpoint(older, resumed).position == 30
    assert_same(resumed.state_dict(), learner.state_dict())
    assert_refused(older, build(D, C, memory_size=20, decay=0.5) if build is not
                   TemporalLabelPropagation else build(D, C, memory_size=20, knn=3),
                   "saved with other settings: ")


def test_a_checkpoint_keeps_the_source_merge(tmp_path):
    x, y = stream(30)
    learner = small_sledge(input_scaling="online", source_merge="unit")
    feed(learner, x[:20], y[:20])
    path = save_checkpoint(tmp_path / "unit.ckpt", learner, position=20)
    with pytest.raises(CheckpointError, match="checkpoint has source_merge='unit', learner "
                                              "has 'raw'"):
        load_checkpoint(path, small_sledge(input_scaling="online"))
    resumed = small_sledge(input_scaling="online", source_merge="unit")
    assert load_checkpoint(path, resumed).position == 20
    feed(learner, x[20:], y[20:])
    feed(resumed, x[20:], y[20:])
    assert torch.equal(learner.memory.prototypes, resumed.memory.prototypes)
    assert torch.equal(learner.memory.sources, resumed.memory.sources)


def test_the_input_scalers_feature_range_is_named(tmp_path):
    """A SLeDGe learner scaling its own input to another interval than the
    checkpoint's is refused (before: it loaded, and scaled its input otherwise)."""
    learner = small_sledge(input_scaling=RunningMinMax(D))
    path = save_checkpoint(tmp_path / "scaled.ckpt", learner, position=0)
    with pytest.raises(CheckpointError, match=r"checkpoint has input_feature_range=\(-1.0, 1.0\), "
                                              r"learner has \(0.0, 1.0\)"):
        load_checkpoint(path, small_sledge(input_scaling=RunningMinMax(D, feature_range=(0, 1))))
    assert load_checkpoint(path, small_sledge(input_scaling=RunningMinMax(D))).position == 0


def test_a_checkpoint_without_settings_loads_as_before(saved, tmp_path):
    # checkpoints written before the settings were recorded
    payload = torch.load(saved, weights_only=False)
    del payload["learner"]["settings"]
    torch.save(payload, tmp_path / "older.ckpt")
    learner = small_sledge(lam=0.0)
    assert load_checkpoint(tmp_path / "older.ckpt", learner,
                           transform=make_transform("online")).position == 30


def test_a_setting_the_learner_lacks_is_not_compared_but_a_size_it_has_is(saved, tmp_path):
    # a setting of a learner that has it (not this one) does not concern this learner
    newer = rewritten(saved, tmp_path / "newer.ckpt",
                      lambda payload: payload["learner"]["settings"].update(future_setting=1))
    assert load_checkpoint(newer, small_sledge(), transform=make_transform("online")).position == 30
    # a size this learner has must be the checkpoint's, also when it does not record it
    fewer = rewritten(newer, tmp_path / "fewer.ckpt",
                      lambda payload: payload["learner"]["shape"].pop("hidden_channels"))
    assert_refused(fewer, small_sledge(), "does not fit the learner: checkpoint has "
                                          "hidden_channels=None, learner has 16")


def test_a_learner_stored_another_way_is_named(saved, tmp_path):
    # the state_dict's entries restored as attributes would wreck the learner
    pickled = rewritten(saved, tmp_path / "pickled.ckpt",
                        lambda payload: payload["learner"].update(kind="pickle"))
    assert_refused(pickled, small_sledge(), "stores the learner as 'pickle', this learner "
                                            "needs 'state_dict'")


def test_wrong_class(saved):
    assert_refused(saved, OnlineMLP(D, C), "holds a torch_geometric_stream.models.sledge.SLeDGe, "
                                           "the learner is a .*OnlineMLP")


def test_wrong_state_entries(tmp_path):
    learner = small_sledge()
    payload_path = save_checkpoint(tmp_path / "entries.ckpt", learner, position=0,
                                   transform=make_transform("online"))
    payload = torch.load(payload_path, weights_only=False)
    payload["learner"]["state"]["backbone.convs.0.lin.weight"] = torch.zeros(5, 5)
    del payload["learner"]["state"]["memory.ages"]
    payload["learner"]["state"]["memory.extra"] = torch.zeros(1)
    torch.save(payload, payload_path)
    assert_refused(payload_path, learner, r"missing entries \['memory.ages'\]; unexpected "
                   r"entries \['memory.extra'\]; backbone.convs.0.lin.weight has shape \(5, 5\)")


def test_expected_extra_and_transform_presence(saved):
    assert_refused(saved, small_sledge(), "seed=0 in the checkpoint, 1 here", expect={"seed": 1})
    learner = small_sledge()
    before = state_of(learner)
    with pytest.raises(CheckpointError, match="holds a transform state, but transform=None"):
        load_checkpoint(saved, learner)
    assert_same(state_of(learner), before)
    assert_refused(saved, small_sledge(), r"^checkpoint .*good.ckpt holds a \S+\.Compose "
                   r"transform, got a \S+\.OnlineMinMaxScaler$", expect={"seed": 0},
                   transform=OnlineMinMaxScaler())


def test_assumed_values_stand_in_for_entries_a_checkpoint_lacks(saved):
    """``saved`` holds ``seed`` only: ``assume`` gives the value of the rest."""
    assert_refused(saved, small_sledge(), "flush=False in the checkpoint, True here",
                   expect={"seed": 0, "flush": True}, assume={"flush": False})
    assert_refused(saved, small_sledge(), r"flush not in the checkpoint \(older than the "
                   r"entry\), True here", expect={"flush": True})  # read as None
    # an entry the checkpoint holds is compared as saved, whatever is assumed
    assert_refused(saved, small_sledge(), "seed=0 in the checkpoint, 1 here",
                   expect={"seed": 1}, assume={"seed": 1})
    state = load_checkpoint(saved, small_sledge(), transform=make_transform("online"),
                            expect={"seed": 0, "flush": False}, assume={"flush": False})
    assert state.position == 30


def test_expect_may_be_a_function_of_the_checkpoints_extra(saved):
    """Called with the saved ``extra`` before anything changes: the entries it
    returns are compared, and a CheckpointError it raises refuses the checkpoint."""
    seen = []

    def expect(extra):
        seen.append(dict(extra))
        return {"seed": 1} if "seed" in extra else {}

    assert_refused(saved, small_sledge(), "seed=0 in the checkpoint, 1 here", expect=expect)
    assert seen == [{"seed": 0}]

    def refuse(extra):
        raise CheckpointError(f"a checkpoint of seed {extra['seed']} is not for this run")

    assert_refused(saved, small_sledge(), "^a checkpoint of seed 0 is not for this run$",
                   expect=refuse)
    with pytest.raises(TypeError, match=r"^expect\(extra\) must be a mapping"):
        load_checkpoint(saved, small_sledge(), transform=make_transform("online"),
                        expect=lambda extra: 5)
    state = load_checkpoint(saved, small_sledge(), transform=make_transform("online"),
                            expect=lambda extra: {"seed": 0})
    assert state.position == 30


@pytest.mark.parametrize("items, shown", [
    (10, r"\[0, 1, 2, 3, 4, 5, 6, 7, 8, 9\]"),
    (11, r"\[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, \.\.\. \(11 in all\)\]")])
def test_an_expected_list_is_shown_up_to_10_items(saved, items, shown):
    assert_refused(saved, small_sledge(), f"seed=0 in the checkpoint, {shown} here",
                   expect={"seed": list(range(items))})


def failing_once(real: Callable[..., Any]) -> tuple[Callable[..., Any], list]:
    """``real`` except that its first call raises (a restore fails, its rollback
    works), and the list of the calls' arguments."""
    calls: list = []

    def call(*args: Any) -> Any:
        calls.append(args)
        if len(calls) == 1:
            raise RuntimeError("disk on fire")
        return real(*args)

    return call, calls


def test_failed_restore_rolls_back(saved, monkeypatch):
    """A failure after the learner was loaded (here: the transform) undoes the load."""
    transform = make_transform("online")
    fails_once, calls = failing_once(transform.load_state_dict)
    monkeypatch.setattr(transform, "load_state_dict", fails_once)
    learner = small_sledge(5)
    before = state_of(learner)
    with pytest.raises(CheckpointError, match="cannot restore checkpoint .*disk on fire"):
        load_checkpoint(saved, learner, transform=transform)
    assert_same(state_of(learner), before)
    assert len(calls) == 2 and transform.state_dict() == {
        "0": {"min": None, "max": None, "feature_range": (-1.0, 1.0)}, "1": {"eps": 1e-12}}


def test_a_failed_restore_rolls_the_rng_states_back(saved, monkeypatch):
    """A failure while the RNG states are set (here: Python's, after torch's and
    NumPy's were set from the checkpoint) puts back the states from before."""
    learner, transform = small_sledge(), make_transform("online")
    torch.manual_seed(4)
    np.random.seed(4)
    random.seed(4)
    before = rng_states()
    setstate, calls = failing_once(random.setstate)
    monkeypatch.setattr(random, "setstate", setstate)
    with pytest.raises(CheckpointError, match="cannot restore checkpoint .*disk on fire"):
        load_checkpoint(saved, learner, transform=transform)
    assert len(calls) == 2
    assert_same(rng_states(), before)


# ------------------------------------------------------------------- atomicity
def test_crash_while_saving_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    learner = OnlineMLP(D, C, hidden_channels=16, seed=0)
    path = save_checkpoint(tmp_path / "run.ckpt", learner, position=10)
    real_save = torch.save

    def crash(obj: Any, handle: Any, *args: Any, **kwargs: Any) -> None:
        real_save(obj, handle, *args, **kwargs)
        handle.truncate(100)  # half-written file ...
        raise OSError("no space left on device")  # ... and the writer dies

    monkeypatch.setattr(torch, "save", crash)
    with pytest.raises(OSError, match="no space left"):
        save_checkpoint(path, learner, position=20)
    monkeypatch.undo()
    assert load_checkpoint(path, OnlineMLP(D, C, hidden_channels=16)).position == 10
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.ckpt"]


#: A process that saves ``run.ckpt`` once, then is SIGKILLed in the middle of
#: its second save (after half the file is written, before the rename).
_KILLED_WRITER = textwrap.dedent("""
    import os, signal, sys
    import torch
    from torch_geometric_stream.checkpoint import save_checkpoint
    from torch_geometric_stream.models import OnlineMLP
    learner = OnlineMLP(8, 3, hidden_channels=16, seed=0)
    save_checkpoint(sys.argv[1], learner, position=10)
    real_save = torch.save
    def killed(obj, handle, *args, **kwargs):
        real_save(obj, handle, *args, **kwargs)
        handle.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    torch.save = killed
    save_checkpoint(sys.argv[1], learner, position=20)
""")


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL (POSIX)")
def test_a_save_removes_the_temporary_file_of_a_killed_save_of_that_checkpoint(tmp_path):
    path = tmp_path / "run.ckpt"
    killed = subprocess.run([sys.executable, "-c", _KILLED_WRITER, str(path)],
                            env={**os.environ, "OMP_NUM_THREADS": "1"}, timeout=120)
    assert killed.returncode == -signal.SIGKILL
    leftovers = [p.name for p in tmp_path.iterdir() if p.name != "run.ckpt"]
    assert len(leftovers) == 1 and leftovers[0].startswith(".run.ckpt.")
    assert (tmp_path / leftovers[0]).stat().st_size > 1000  # a whole checkpoint's worth
    # other checkpoints' temporary files (live writers) and look-alikes stay
    others = [".other.ckpt.abcd1234.tmp", ".run.ckpt.x.abcd1234.tmp", ".run.ckpt.abcd1234.tmp~",
              "run.ckpt.abcd1234.tmp", ".run.ckpt2.abcd1234.tmp"]
    for name in others:
        (tmp_path / name).write_bytes(b"live")
    learner = OnlineMLP(D, C, hidden_channels=16, seed=0)
    save_checkpoint(path, learner, position=30)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(others + ["run.ckpt"])
    assert load_checkpoint(path, OnlineMLP(D, C, hidden_channels=16)).position == 30


def test_save_checks_position_against_record(tmp_path):
    learner = OnlineMLP(D, C, hidden_channels=16, seed=0)
    record = {"start": 0, "predictions": np.zeros(5, dtype=np.int64),
              "labels": np.zeros(5, dtype=np.int64), "labeled": np.ones(5, dtype=np.uint8),
              "seconds": np.zeros(5), "elapsed": 0.0}
    with pytest.raises(ValueError, match="record ends at position 5, not at position=6"):
        save_checkpoint(tmp_path / "x.ckpt", learner, position=6, record=record)
    with pytest.raises(ValueError, match="position must be an integer >= 0"):
        save_checkpoint(tmp_path / "x.ckpt", learner, position=-1)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("record, message", [
    # before: KeyError: 'start'
    ({}, "record state lacks the entries ['start', 'predictions', 'labels', 'labeled', "
         "'seconds', 'elapsed']"),
    ({"start": 0, "predictions": [1, 0]}, "record state lacks the entries ['labels', "
                                          "'labeled', 'seconds', 'elapsed']"),
    ({"history": "bounded", "start": 0, "n_samples": 2},
     "record state lacks the entries ['n_labels', 'metrics', 'classes', 'elapsed']"),
    ({"history": "some", "start": 0}, "record state was kept with history='some', which is "
                                      "none of ('full', 'bounded')"),
])
def test_save_refuses_a_mapping_that_is_no_records_state(tmp_path, record, message):
    learner = OnlineMLP(D, C, hidden_channels=16, seed=0)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        save_checkpoint(tmp_path / "x.ckpt", learner, position=2, record=record)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("kwargs, error, message", [
    ({"every": 0}, ValueError, "every must be >= 1, got 0"),
    ({"every": -1}, ValueError, "every must be >= 1, got -1"),
    ({"every": "2"}, TypeError, "every must be an integer, got str"),
    ({"every": 1.5}, TypeError, "every must be an integer, got float"),
    ({"every": True}, TypeError, "every must be an integer, got bool"),
    ({"end": -1}, ValueError, "end must be >= 0, got -1"),
    ({"end": "3"}, TypeError, "end must be an integer, got str"),
    ({"extra": 5}, TypeError, "extra must be a mapping (e.g. a dict) or None, got int"),
    ({"transform": 5}, TypeError, "transform must have state_dict() and load_state_dict() (e.g. a StreamTransform) or be None, got int"),
])
def test_the_callback_refuses_bad_arguments_before_the_run_learns(tmp_path, kwargs, error,
                                                                  message):
    """Before, ``every=0`` divided by zero and ``every="2"``, ``extra=5`` or
    ``transform=5`` failed at the first save, after the learner had learned;
    ``every=-1``, ``1.5``, ``True`` or ``end=-1`` were taken."""
    options = {"every": None, "end": None, **kwargs}
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        checkpoint_callback(tmp_path / "c.ckpt", OnlineMLP(D, C), **options)


@pytest.mark.parametrize("kwargs, message", [
    ({"extra": 5}, "extra must be a mapping (e.g. a dict) or None, got int"),
    ({"extra": "ab"}, "extra must be a mapping (e.g. a dict) or None, got str"),
    ({"transform": 5}, "transform must have state_dict() and load_state_dict() (e.g. a StreamTransform) or be None, got int"),
    ({"record": "abc"}, "record must be a PrequentialRecord, its state_dict() or None, got str"),
])
def test_save_refuses_arguments_of_another_type(tmp_path, kwargs, message):
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        save_checkpoint(tmp_path / "x.ckpt", OnlineMLP(D, C), position=0, **kwargs)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("kwargs, message", [
    ({"expect": 5}, "expect must be a mapping (e.g. a dict) or None, got int"),
    ({"expect": "ab"}, "expect must be a mapping (e.g. a dict) or None, got str"),
    ({"assume": 5}, "assume must be a mapping (e.g. a dict) or None, got int"),
    ({"transform": 5}, "transform must have state_dict() and load_state_dict() (e.g. a StreamTransform) or be None, got int"),
])
def test_load_refuses_arguments_of_another_type(saved, kwargs, message):
    learner = small_sledge(seed=1)
    before = state_of(learner)
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        load_checkpoint(saved, learner, **kwargs)
    assert_same(state_of(learner), before)
