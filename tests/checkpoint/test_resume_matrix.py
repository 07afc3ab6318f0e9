"""A run stopped at a checkpoint and resumed is exactly the run that was not
stopped, across the option matrix: each model family with a pairwise-covering
sample of the protocol's options (label delay, learning on arrival, label
queries, label masks, windows, histories, streamed reading and its limit,
robust scaling with a window, feature transforms, the baselines'
hyperparameters), resumed from several positions (right after the first
sample, just before a held label comes, right after a memory or reservoir
fills, at a window's boundary, before the last sample), through the command
line and through the Python API (:func:`prequential` stopped, its checkpoint
loaded into fresh objects); and a checkpoint resumed with another option or
setting is refused, naming it."""
from __future__ import annotations

import csv
import itertools
import json
import shutil
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pytest
import torch

from torch_geometric_stream.baselines import HDSSL, ReSSL, TemporalLabelPropagation
from torch_geometric_stream.checkpoint import (CheckpointCallback, checkpoint_callback,
                                               load_checkpoint)
from torch_geometric_stream.cli import main
from torch_geometric_stream.evaluation import UncertaintyQuery, make_transform, prequential
from torch_geometric_stream.models import SLeDGe
from torch_geometric_stream.nn.scaling import RunningQuantileRange

#: Samples of every stream here.
N = 72
#: Small memories (filled within the first third of the stream) and widths.
SMALL_SLEDGE = ["--labeled-size", "6", "--unlabeled-size", "12", "--hidden-channels", "8"]
#: Record entries of a run's timing, machine and resumption: the rest must be equal.
TIMING = {"seconds", "ms_per_sample_median", "ms_per_sample_p95", "peak_memory_mb",
          "finished_at", "machine", "resumed_from", "elapsed", "latency"}


def _stream_csv(path: Path) -> Path:
    """Three drifting classes, a header, the label last, :data:`N` rows."""
    generator = np.random.default_rng(3)
    lines = ["f1,f2,f3,label"]
    for index in range(N):
        label = int(generator.integers(3))
        values = generator.normal(1.5 * label + 2 * index / N, 1.0, size=3)
        lines.append(",".join(f"{value:.5f}" for value in values) + f",{'abc'[label]}")
    path.write_text("\n".join(lines) + "\n")
    return path


#: ``id: (options, extra resume positions)``: each model family, each with a
#: sample of the protocol's options, so that every pair of (model family,
#: option) and most pairs of options meet. ``{csv}`` is the stream file.
#: Positions: besides 1, ``N // 2`` and ``N - 1``; ``"held"`` is the position
#: just before the first held label is learned (found from the run's rows).
MATRIX: dict[str, tuple[list[str], list[Any]]] = {
    "sledge-delay-window-bounded": (
        ["--model", "sledge", *SMALL_SLEDGE, "--label-delay", "5", "--eval-window", "16",
         "--history", "bounded", "--label-ratio", "0.2"], ["held", 12, 16, 32]),
    "sledge-query-delay-noarrival-robust": (
        ["--model", "sledge", *SMALL_SLEDGE, "--label-mask", "variable-uncertainty",
         "--query-step", "0.05", "--label-delay", "3",
         "--no-learn-on-arrival", "--scaling", "robust-rescale", "--robust-reservoir", "10",
         "--robust-window", "20", "--label-ratio", "0.3"], ["held", 10, 11]),
    "sledge-light-stream-query-log1p": (
        ["--model", "sledge-light", *SMALL_SLEDGE, "--dataset", "{csv}", "--stream",
         "--classes", "a,b,c", "--label-mask", "randomized-uncertainty",
         "--query-step", "0.2", "--feature-transform", "signed-log1p",
         "--scaling", "robust-rescale", "--robust-reservoir", "16", "--eval-window", "20",
         "--label-ratio", "0.3"], [16, 20, 40]),
    "sledge-light-capymoa-delay-full": (
        ["--model", "sledge-light", *SMALL_SLEDGE, "--label-mask", "capymoa",
         "--label-delay", "4", "--scaling", "robust", "--robust-reservoir", "12",
         "--robust-window", "24", "--label-ratio", "0.25"], ["held", 12, 13]),
    "tlp-delay-window-robust": (
        ["--model", "tlp", "--knn", "3", "--sigma", "0.5", "--label-delay", "6", "--eval-window", "10", "--scaling", "robust",
         "--robust-reservoir", "15", "--label-ratio", "0.2"], ["held", 10, 15, 30]),
    "ressl-query-bounded-stream": (
        ["--model", "ressl", "--dataset", "{csv}", "--stream", "--classes", "a,b,c",
         "--label-mask", "fixed-uncertainty", "--query-threshold", "0.7",
         "--label-delay", "2", "--eval-window", "12", "--label-ratio", "0.3"],
        ["held", 12, 24]),
    "hdssl-bernoulli-noarrival-log1p": (
        ["--model", "hdssl", "--label-mask", "bernoulli", "--label-delay", "5",
         "--no-learn-on-arrival", "--feature-transform", "signed-log1p",
         "--history", "bounded", "--eval-window", "8", "--label-ratio", "0.3"],
        ["held", 8, 9]),
    "hdssl-selective-robust-window": (
        ["--model", "hdssl", "--radius-k", "3", "--chunk-size", "4", "--decay", "0.02",
         "--label-mask", "selective-sampling",
         "--scaling", "robust", "--robust-reservoir", "10", "--robust-window", "30",
         "--label-ratio", "0.3"], [10, 11, 30]),
    "gsl-delay-stream-bounded": (
        ["--model", "gsl", *SMALL_SLEDGE, "--dataset", "{csv}", "--stream", "--classes", "a,b,c",
         "--label-mask", "bernoulli", "--label-delay", "7", "--eval-window", "15",
         "--label-ratio", "0.3"], ["held", 12, 15]),
    "sledge-reselect-frobenius-dense-raw": (
        ["--model", "sledge", *SMALL_SLEDGE, "--reselect-every", "3", "--regularizer",
         "frobenius", "--propagation", "dense", "--merge-similarity", "raw", "--count-offset",
         "0", "--scaling", "online-rescale", "--label-mask", "authors", "--label-delay", "2",
         "--eval-window", "11", "--label-ratio", "0.2"], ["held", 12, 22]),
    "sledge-light-full-memory-prior-bounded": (
        ["--model", "sledge-light", *SMALL_SLEDGE, "--light-memory", "full", "--class-prior",
         "stream", "--history", "bounded", "--label-delay", "3", "--learn-on-arrival",
         "--no-robust-clip", "--scaling", "robust", "--robust-reservoir", "12",
         "--label-ratio", "0.2"], ["held", 12, 13]),
    "static-fixed-uncertainty-window": (
        ["--model", "static", *SMALL_SLEDGE, "--label-mask", "fixed-uncertainty",
         "--query-threshold", "0.8", "--eval-window", "10", "--feature-transform",
         "signed-log1p", "--label-ratio", "0.3"], [10, 12, 20]),
    "ressl-window-decay-prune-delay": (
        ["--model", "ressl", "--window", "20", "--decay", "0.05", "--prune-threshold", "0.3",
         "--label-delay", "4", "--no-learn-on-arrival", "--label-mask", "capymoa",
         "--label-ratio", "0.3"], ["held", 20, 21]),
    "base-variable-uncertainty-bounded": (
        ["--model", "base", "--hidden-channels", "8", "--label-mask", "variable-uncertainty",
         "--history", "bounded", "--eval-window", "14", "--scaling", "online",
         "--feature-range", "0", "1",
         "--label-ratio", "0.3"], [14, 28]),
    "sledge-message-passing-bfloat16-settings": (
        ["--model", "sledge", *SMALL_SLEDGE, "--propagation", "message_passing",
         "--search-dtype", "bfloat16", "--tau", "2.0", "--alpha", "0.5", "--beta", "0.2",
         "--num-layers", "2", "--embedding-layers", "2", "--no-flush-denormal",
         "--robust-tolerance", "0", "--robust-quantile", "0.1", "--scaling", "robust-rescale",
         "--robust-reservoir", "12", "--label-mask", "bernoulli", "--label-delay", "1",
         "--label-ratio", "0.3"], ["held", 12, 13]),
    "memory-paper-window-full": (
        ["--model", "memory", *SMALL_SLEDGE, "--eval-window", "9", "--label-ratio", "0.15",
         "--scaling", "online"], [9, 12, 18]),
}


def _argv(options: list[str], csv_file: Path) -> list[str]:
    argv = ["run", "--quiet"] + ["--seed", "3"] * ("--seed" not in options)
    if "{csv}" not in options:
        argv += ["--dataset", "synthetic", "--synthetic-samples", str(N)]
    return [*argv, *(str(csv_file) if option == "{csv}" else option for option in options)]


def _outputs(folder: Path, name: str, options: list[str]) -> list[str]:
    files = ["--output", str(folder / f"{name}.json")]
    if "bounded" not in options and "--stream" not in options:
        files += ["--csv", str(folder / f"{name}.csv")]
    if "--eval-window" in options:
        files += ["--windows-csv", str(folder / f"{name}.windows.csv")]
    return files


def _keep_checkpoints(monkeypatch, folder: Path, positions: set[int]) -> None:
    """The next runs, due to save after every sample, save only at ``positions``
    and their stream's end (for speed), each save at a position kept aside as
    ``folder / at<position>.ckpt``."""
    save = CheckpointCallback._save

    def keeping(self):
        if self._last[0] in positions or self._last[0] == N:
            save(self)
            if self._saved in positions:
                shutil.copyfile(self.path, folder / f"at{self._saved}.ckpt")

    monkeypatch.setattr(CheckpointCallback, "_save", keeping)


def _untimed(value: Any) -> Any:
    """``value`` with every :data:`TIMING` entry of its mappings left out, tensors
    and arrays as lists (for ``==``)."""
    if isinstance(value, dict):
        return {key: _untimed(item) for key, item in value.items() if key not in TIMING}
    if isinstance(value, (list, tuple)):
        return [_untimed(item) for item in value]
    if isinstance(value, torch.Tensor):
        return ("tensor", str(value.dtype), value.tolist())
    if isinstance(value, np.ndarray):
        return ("array", str(value.dtype), value.tolist())
    return value


def _windows_rows(path: Path) -> list[dict[str, str]]:
    """The rows of a ``--windows-csv`` but their timing columns."""
    with path.open() as handle:
        return [{key: value for key, value in row.items() if "ms" not in key and
                 "seconds" not in key} for row in csv.DictReader(handle)]


def _outcome(folder: Path, name: str, checkpoint: Path) -> dict[str, Any]:
    """What a run left that must not depend on where it was stopped: its record,
    per-sample and windows files, and the final checkpoint's learner, transform,
    record and RNG states."""
    outcome: dict[str, Any] = {"record": _untimed(json.loads((folder / f"{name}.json")
                                                             .read_text()))}
    if (folder / f"{name}.csv").exists():
        outcome["csv"] = (folder / f"{name}.csv").read_text()
    if (folder / f"{name}.windows.csv").exists():
        outcome["windows"] = _windows_rows(folder / f"{name}.windows.csv")
    payload = torch.load(checkpoint, weights_only=False)
    outcome["state"] = _untimed({key: payload[key] for key in
                                 ("learner", "transform", "position", "record")})
    rng = payload["rng"]
    outcome["rng"] = _untimed([rng["torch"], list(rng["numpy"][1]), rng["python"]])
    return outcome


def _held_position(csv_path: Path, delay: int) -> int:
    """The position just before the first labeled sample's label is learned: the
    sample at ``t + delay`` not yet done, ``t`` read off the per-sample rows (a
    run without them: ``delay + 1``, a position the delay spans)."""
    if not csv_path.exists():
        return delay + 1
    with csv_path.open() as handle:
        return delay + next(int(row["index"]) for row in csv.DictReader(handle)
                            if row["labeled"] == "1")


@pytest.fixture(scope="module")
def stream_file(tmp_path_factory) -> Path:
    return _stream_csv(tmp_path_factory.mktemp("stream") / "stream.csv")


@pytest.mark.parametrize("case", list(MATRIX))
def test_a_run_stopped_at_any_checkpoint_resumes_to_the_uninterrupted_run(
        case, stream_file, tmp_path, monkeypatch):
    options, extra_positions = MATRIX[case]
    argv = _argv(options, stream_file)
    # the uninterrupted run, its checkpoint saved after its last sample alone
    whole_checkpoint = tmp_path / "whole.ckpt"
    assert main([*argv, *_outputs(tmp_path, "whole", options),
                 "--checkpoint", str(whole_checkpoint)]) == 0
    expected = _outcome(tmp_path, "whole", whole_checkpoint)
    delay = int(options[options.index("--label-delay") + 1]) if "--label-delay" in options else 0
    positions = sorted({1, N // 2, N - 1, *(
        _held_position(tmp_path / "whole.csv", delay)
        if position == "held" else position for position in extra_positions)})
    assert all(0 < position < N for position in positions)

    _keep_checkpoints(monkeypatch, tmp_path, set(positions))
    saving = tmp_path / "saving.ckpt"
    assert main([*argv, *_outputs(tmp_path, "saving", options), "--checkpoint", str(saving),
                 "--checkpoint-every", "1"]) == 0
    monkeypatch.undo()
    assert _outcome(tmp_path, "saving", saving) == expected  # saving changes nothing

    for position in positions:
        name, resumed = f"resumed{position}", tmp_path / f"resumed{position}.ckpt"
        assert main([*argv, *_outputs(tmp_path, name, options), "--resume",
                     str(tmp_path / f"at{position}.ckpt"), "--checkpoint", str(resumed)]) == 0
        got = _outcome(tmp_path, name, resumed)
        assert json.loads((tmp_path / f"{name}.json").read_text())["resumed_from"] == position
        for key in expected:
            assert got[key] == expected[key], f"{key} differs, resumed at {position}"


#: A run of many protocol options whose checkpoint the refusals below resume.
REFUSED_BASE = ["--model", "sledge-light", *SMALL_SLEDGE, "--label-mask", "fixed-uncertainty",
                "--query-threshold", "0.8", "--label-delay", "3", "--eval-window", "10",
                "--scaling", "robust", "--robust-reservoir", "12", "--robust-window", "24",
                "--label-ratio", "0.3"]


@pytest.fixture(scope="module")
def mid_checkpoint(tmp_path_factory, stream_file) -> Path:
    """The checkpoint of :data:`REFUSED_BASE` after ``N // 2`` samples."""
    folder = tmp_path_factory.mktemp("refused")
    with pytest.MonkeyPatch.context() as patch:
        _keep_checkpoints(patch, folder, {N // 2})
        assert main([*_argv(REFUSED_BASE, stream_file), "--checkpoint",
                     str(folder / "run.ckpt"), "--checkpoint-every", "1"]) == 0
    return folder / f"at{N // 2}.ckpt"


def _changed(options: list[str], flag: str, value: str | None) -> list[str]:
    """``options`` with ``flag``'s value ``value`` (added if absent; the flag and
    its value dropped for ``None``; a switch ``flag`` without value: added)."""
    if flag in options:
        index = options.index(flag)
        head, tail = options[:index], options[index + 2:]
        return [*head, *tail] if value is None else [*head, flag, value, *tail]
    return [*options, flag] if value == "" else [*options, flag, value]


@pytest.mark.parametrize("flag, value, message", [
    ("--label-delay", "4", "label_delay=3 in the checkpoint, 4 here"),
    ("--label-delay", None, "label_delay=3 in the checkpoint, 0 here"),
    ("--no-learn-on-arrival", "", "learn_on_arrival=True in the checkpoint, False here"),
    ("--query-threshold", "0.7", "query_threshold=0.8 in the checkpoint, 0.7 here"),
    ("--eval-window", "12", "eval_window=10 in the checkpoint, 12 here"),
    ("--eval-window", None, "eval_window=10 in the checkpoint, None here"),
    ("--robust-window", "30", "config.robust_window=24 in the checkpoint, 30 here"),
    ("--robust-reservoir", "14", "config.robust_reservoir=12 in the checkpoint, 14 here"),
    ("--seed", "4", "seed=3 in the checkpoint, 4 here"),
    ("--model", "sledge", "model='sledge-light' in the checkpoint, 'sledge' here"),
    ("--label-ratio", "0.2", "label_ratio=0.3 in the checkpoint, 0.2 here"),
    # auto takes signed-log1p on a stream of no known value range
    ("--feature-transform", "none",
     "config.feature_transform='signed-log1p' in the checkpoint, 'none' here"),
    ("--history", "bounded", "history='full' in the checkpoint, 'bounded' here"),
])
def test_a_checkpoint_resumed_with_another_option_is_refused_naming_it(
        mid_checkpoint, stream_file, tmp_path, capsys, flag, value, message):
    capsys.readouterr()
    options = _changed(REFUSED_BASE, flag, value)
    output = tmp_path / "resumed.json"
    assert main([*_argv(options, stream_file), "--resume", str(mid_checkpoint),
                 "--output", str(output)]) == 2
    error = capsys.readouterr().err
    assert error.startswith("error: --resume: ") and error.count("\n") == 1, error
    assert message in error
    assert not output.exists()


# ----------------------------------------------------------- the Python API
D, C = 5, 3


def _learner(family: str, **settings: Any) -> Any:
    """A small learner of ``family`` (of other ``settings`` if given); SLeDGe-L
    scales its own input (robust, with a window, the reservoir filled at position 10)."""
    if family in ("sledge", "sledge-light"):
        scaler = RunningQuantileRange(D, reservoir_size=10, window=20, seed=2)
        return SLeDGe(D, C, **{"labeled_size": 6, "unlabeled_size": 12, "hidden_channels": 8,
                               "k": 3, "seed": 1, "light": family == "sledge-light",
                               "dropout": 0.2, "input_scaling": scaler
                               if family == "sledge-light" else None, **settings})
    return {"tlp": TemporalLabelPropagation, "ressl": ReSSL, "hdssl": HDSSL}[family](
        D, C, memory_size=12, **settings)


#: ``id: (family, prequential options, label query or None, transform or None,
#: stop positions)``: each family with a sample of the loop's options.
API_MATRIX: dict[str, tuple[str, dict[str, Any], Optional[dict[str, Any]], Optional[str],
                            list[int]]] = {
    "sledge-delay-noarrival-window-robust": (
        "sledge", {"label_delay": 4, "learn_on_arrival": False, "window": 16}, None, "robust",
        [10, 13, 16, 40]),
    "sledge-light-query-delay-bounded": (
        "sledge-light", {"label_delay": 3, "history": "bounded", "window": 20},
        {"strategy": "randomized-uncertainty", "budget": 0.3, "step": 0.1}, None, [10, 11, 20]),
    "tlp-query-window": (
        "tlp", {"window": 12}, {"strategy": "variable-uncertainty", "budget": 0.4}, "online",
        [12, 30]),
    "ressl-delay-bounded-robust": (
        "ressl", {"label_delay": 5, "history": "bounded"}, None, "robust", [6, 10, 11]),
    "hdssl-query-delay-noarrival": (
        "hdssl", {"label_delay": 2, "learn_on_arrival": False, "window": 9},
        {"strategy": "fixed-uncertainty", "budget": 0.5, "threshold": 0.8}, "robust", [9, 27]),
}


def _api_run(case: str, rows: list, stop_at: Optional[int] = None, resume: Optional[Path] = None,
             save: Optional[Path] = None, change: Optional[dict[str, dict[str, Any]]] = None
             ) -> tuple[Any, Any, Any, Any]:
    """``prequential`` of ``case`` on ``rows``, from a fresh learner, transform and
    query: whole, stopped after ``stop_at`` samples (saved to ``save``), or
    resumed from ``resume``; ``change``: other ``"options"`` of ``prequential``,
    ``"learner"``, ``"robust"`` (scaler) or ``"query"`` settings. Returns the
    result, learner, transform and query."""
    family, options, query_options, scaling, _ = API_MATRIX[case]
    change = change or {}
    options = {**options, **change.get("options", {})}
    learner = _learner(family, **change.get("learner", {}))
    robust = ({"reservoir_size": 10, "window": 24, "seed": 5, **change.get("robust", {})}
              if scaling == "robust" else None)
    transform = None if scaling is None else make_transform(scaling, robust_options=robust)
    query = None if query_options is None else UncertaintyQuery(
        **{**query_options, "seed": 7, **change.get("query", {})})
    mask = None if query is not None else np.arange(len(rows)) % 3 == 0
    start, initial = 0, None
    if resume is not None:
        state = load_checkpoint(resume, learner, transform=transform)
        start, initial = state.position, state.record
    callback = None if save is None else checkpoint_callback(save, learner, every=None,
                                                            end=None, transform=transform)
    steps = itertools.count(1)
    result = prequential(learner, rows, label_mask=mask, label_query=query, transform=transform,
                         progress=False, start=start, initial=initial, callback=callback,
                         stop=None if stop_at is None else lambda: next(steps) == stop_at,
                         **options)
    if callback is not None:
        callback.finish()
    return result, learner, transform, query


def _api_outcome(result: Any, learner: Any, transform: Any, query: Any) -> dict[str, Any]:
    arrays = {} if result.predictions is None else {
        name: getattr(result, name).tolist() for name in ("predictions", "labels", "labeled")}
    return _untimed({"metrics": result.metrics, "windows": result.windows, **arrays,
                     "learner": learner.state_dict(),
                     "transform": None if transform is None else transform.state_dict(),
                     "query": None if query is None else query.state_dict(),
                     "rng": [torch.get_rng_state(), list(np.random.get_state()[1])]})


@pytest.mark.parametrize("case", list(API_MATRIX))
def test_prequential_stopped_at_a_checkpoint_resumes_to_the_uninterrupted_run(case, tmp_path):
    generator = np.random.default_rng(4)
    y = generator.integers(0, C, N)
    x = generator.standard_t(2, size=(N, D)) + 2.0 * np.eye(C, D)[y]  # heavy tails
    rows = list(zip(x.astype(np.float32), y.tolist()))
    torch.manual_seed(0)
    expected = _api_outcome(*_api_run(case, rows))
    for position in API_MATRIX[case][4]:
        path = tmp_path / f"at{position}.ckpt"
        torch.manual_seed(0)
        stopped = _api_run(case, rows, stop_at=position, save=path)[0]
        assert stopped.metrics["n_samples"] == position
        torch.manual_seed(123)  # the checkpoint's RNG states, not these, go on
        got = _api_outcome(*_api_run(case, rows, resume=path))
        for key in expected:
            assert got[key] == expected[key], f"{key} differs, resumed at {position}"


@pytest.mark.parametrize("case", [case for case, (options, _) in MATRIX.items()
                                  if "--stream" in options])
@pytest.mark.parametrize("limit", [12, 37])
def test_a_streamed_run_resumed_from_the_end_of_its_limit_goes_on_as_the_longer_run(
        case, limit, stream_file, tmp_path):
    """A streamed run's ``--limit`` is no part of its checkpoint's identity: the
    run of the first rows, resumed without the limit, is the run of all of them
    (its held labels, window and query go on)."""
    options = MATRIX[case][0]
    argv = _argv(options, stream_file)
    assert main([*argv, *_outputs(tmp_path, "whole", options),
                 "--checkpoint", str(tmp_path / "whole.ckpt")]) == 0
    expected = _outcome(tmp_path, "whole", tmp_path / "whole.ckpt")
    checkpoint = tmp_path / "short.ckpt"
    assert main([*argv, "--limit", str(limit), "--checkpoint", str(checkpoint)]) == 0
    assert torch.load(checkpoint, weights_only=False)["position"] == limit
    assert main([*argv, *_outputs(tmp_path, "resumed", options), "--resume", str(checkpoint),
                 "--checkpoint", str(checkpoint)]) == 0
    got = _outcome(tmp_path, "resumed", checkpoint)
    for key in expected:
        assert got[key] == expected[key], f"{key} differs"


@pytest.mark.parametrize("case, change, message", [
    ("hdssl-query-delay-noarrival", {"options": {"label_delay": 3}},
     "label_delay=2.*label_delay=3|label_delay=3.*label_delay=2"),
    ("hdssl-query-delay-noarrival", {"options": {"learn_on_arrival": True}}, "learn_on_arrival"),
    ("hdssl-query-delay-noarrival", {"query": {"threshold": 0.7}}, "threshold"),
    ("hdssl-query-delay-noarrival", {"robust": {"quantile": 0.05}},
     "kept with quantile=0.01, this scaler has quantile=0.05"),
    ("hdssl-query-delay-noarrival", {"learner": {"decay": 0.1}}, "decay"),
    ("sledge-light-query-delay-bounded", {"options": {"window": 10}}, "window"),
    ("sledge-light-query-delay-bounded", {"learner": {"input_scaling": RunningQuantileRange(
        D, reservoir_size=10, window=20, seed=2, tolerance=0.0)}},
     "kept with tolerance=0.05, this range has tolerance=0.0"),
    ("tlp-query-window", {"learner": {"sigma": 0.3}}, "checkpoint has sigma=None, learner has 0.3"),
    ("ressl-delay-bounded-robust", {"learner": {"window": 50}},
     "checkpoint has window=100, learner has 50"),
])
def test_prequential_resumed_with_another_setting_is_refused(case, change, message, tmp_path):
    """Through the Python API too, a run resumed with another protocol option,
    learner, scaler or query setting than its checkpoint's is refused, naming it."""
    generator = np.random.default_rng(4)
    y = generator.integers(0, C, N)
    rows = list(zip(generator.normal(size=(N, D)).astype(np.float32), y.tolist()))
    path = tmp_path / "mid.ckpt"
    _api_run(case, rows, stop_at=20, save=path)
    with pytest.raises(ValueError, match=message):
        _api_run(case, rows, resume=path, change=change)


@pytest.mark.parametrize("case", ["sledge-delay-window-bounded", "tlp-delay-window-robust",
                                  "sledge-light-stream-query-log1p"])
def test_a_run_stopped_twice_resumes_to_the_uninterrupted_run(case, stream_file, tmp_path,
                                                              monkeypatch):
    """Stopped, resumed, stopped again later and resumed again: the record the
    first resume took goes on through the second checkpoint."""
    options = MATRIX[case][0]
    argv = _argv(options, stream_file)
    assert main([*argv, *_outputs(tmp_path, "whole", options),
                 "--checkpoint", str(tmp_path / "whole.ckpt")]) == 0
    expected = _outcome(tmp_path, "whole", tmp_path / "whole.ckpt")
    first, second = 17, 45
    checkpoint = tmp_path / "run.ckpt"
    saving = [*argv, "--checkpoint", str(checkpoint), "--checkpoint-every", "1"]
    _keep_checkpoints(monkeypatch, tmp_path, {first})
    assert main(saving) == 0
    monkeypatch.undo()
    _keep_checkpoints(monkeypatch, tmp_path, {second})  # saved by the resumed run
    assert main([*saving, "--resume", str(tmp_path / f"at{first}.ckpt")]) == 0
    monkeypatch.undo()
    assert main([*argv, *_outputs(tmp_path, "resumed", options), "--resume",
                 str(tmp_path / f"at{second}.ckpt"), "--checkpoint", str(checkpoint)]) == 0
    got = _outcome(tmp_path, "resumed", checkpoint)
    for key in expected:
        assert got[key] == expected[key], f"{key} differs"
