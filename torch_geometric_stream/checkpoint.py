r"""Checkpoint and resume of a stream learner together with its evaluation run.

:func:`save_checkpoint` writes one file holding everything a prequential run
needs to continue exactly where it stopped (:func:`checkpoint_callback` makes a
:func:`~torch_geometric_stream.evaluation.prequential` callback that calls it
every ``N`` samples, and at the end):

* the learner's state: ``state_dict()`` for :class:`torch.nn.Module` learners
  (for :class:`~torch_geometric_stream.models.SLeDGe` this includes the
  parameters, the whole memory with its labeled ages and, through
  ``get_extra_state``, the optimizer state and the dropout generator's), the
  learner's own ``state_dict()`` for other learners that have one (the NumPy
  baselines), else a pickle of its ``__dict__``;
* the learner's class and the sizes that fix its shape (``in_channels``,
  ``num_classes``, memory sizes, widths, layers ...), checked on loading;
* the input transform's state (e.g. the running min/max of the scaler);
* the random number generators: torch CPU, NumPy's global one, Python's
  :mod:`random`, and every CUDA device's when the process uses CUDA (has
  initialized it: a run on the CPU leaves the GPU alone);
* the stream position and the run recorded so far
  (:meth:`~torch_geometric_stream.evaluation.PrequentialRecord.state_dict`: the
  per-sample arrays, or with ``history="bounded"`` the running counts),
  which :func:`~torch_geometric_stream.evaluation.prequential` takes back as
  ``initial`` so that the resumed run reports on the whole stream (a run of the
  other history refuses it);
* ``extra``: anything the caller wants to check on resuming (the command line
  stores the dataset, model, seed and configuration).

.. code-block:: python

    # save every 500 samples and after the last one
    every_500 = checkpoint_callback("run.ckpt", learner, every=500, end=len(mask),
                                    transform=transform)
    prequential(learner, stream, label_mask=mask, transform=transform, callback=every_500)
    # ... later, in a new process, with a freshly built learner and transform:
    state = load_checkpoint("run.ckpt", learner, transform=transform)
    prequential(learner, stream, label_mask=mask, transform=transform,
                start=state.position, initial=state.record)

Writing is atomic: the file is written to a temporary file in the same folder,
flushed and fsync'ed, then renamed onto the target (:func:`os.replace`), so a
crash while saving leaves the previous checkpoint intact.  A save also removes
the temporary files that earlier saves of the same checkpoint left when their
process was killed (``.NAME.RANDOM.tmp`` beside it; other files' are left
alone): a checkpoint file must have one writer at a time.  Loading validates
the file, the learner's class and shape, the state's entries, the transform and
the RNG states *before* changing anything, and rolls every change back if
restoring still fails: a learner is never left half-loaded.

.. warning::
    Checkpoints are pickles (:func:`torch.load` with ``weights_only=False``,
    needed for the optimizer, NumPy and RNG states): loading one can run
    arbitrary code.  Only load checkpoints from a trusted source.

Determinism
-----------
On the CPU, two runs with the same seed (same data, configuration, label mask
and number of threads) give identical predictions, and a run resumed from a
checkpoint gives exactly the predictions and metrics of the uninterrupted run.
Only the timings (``seconds``, ``ms_per_sample_*``) differ.  A different
number of CPU threads may change floating-point reduction orders and so, in
rare near-ties, a prediction.

On CUDA this is not guaranteed: the scatter-add of message passing
(``torch_geometric``'s aggregation, ``index_add_``/``scatter_add_``) uses
atomic additions whose order varies from run to run, and some other reductions
are non-deterministic too, so predictions can differ in near-ties between runs
and after resuming.  Call ``torch.use_deterministic_algorithms(True)`` (and set
``CUBLAS_WORKSPACE_CONFIG=:4096:8``) for reproducible CUDA runs, at some cost
in speed; operations without a deterministic implementation then raise.
Checkpoints map every tensor to the CPU on loading and the learner copies
them to its own device, so a run can move between CPU and GPU; CUDA RNG states
are restored only when the checkpoint has them (it was saved by a process
using CUDA) and this machine has as many CUDA devices as the saving process had
(a process that has not initialized CUDA gets them when it does: torch queues
them, once the load is accepted, after every other state); otherwise the CUDA
generators are left as they are (SLeDGe's dropout masks come from its own
generator, whose state goes with the learner's, not from the global ones).
"""
from __future__ import annotations

import copy
import random
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Protocol, Union

import numpy as np
import torch
from torch import nn

import torch_geometric_stream
from torch_geometric_stream.evaluation import PrequentialRecord
from torch_geometric_stream.files import atomic_write, remove_stale_temporaries
from torch_geometric_stream.validation import check_mapping, check_positive_int, same_setting

__all__ = ["CheckpointError", "CheckpointState", "CheckpointCallback", "save_checkpoint",
           "load_checkpoint", "checkpoint_callback", "FORMAT_VERSION"]

PathLike = Union[str, Path]


class Stateful(Protocol):
    """What a checkpoint needs of a transform: its state, and a way to set it back
    (a :class:`~torch_geometric_stream.evaluation.StreamTransform`, a
    :class:`~torch.nn.Module` ...)."""

    def state_dict(self) -> Any: ...

    def load_state_dict(self, state: Any) -> Any: ...

#: Version of the file layout; bumped on incompatible changes.
FORMAT_VERSION = 1
_FORMAT = "torch_geometric_stream.checkpoint"
#: The first bytes of every file :func:`torch.save` writes: a zip archive's ...
_ZIP_MAGIC = b"PK\x03\x04"
#: ... or, with ``_use_new_zipfile_serialization=False`` (the legacy format, which
#: :func:`torch.load` reads too), torch's magic number pickled first: a ``PROTO``
#: opcode (protocol 2 to 5), from protocol 4 on a ``FRAME`` opcode with its 8-byte
#: length, then this ``LONG1`` of 10 bytes, little-endian.
_LEGACY_MAGIC = b"\x8a\x0a" + (0x1950a86a20f9469cfc6c).to_bytes(10, "little")
#: Entries every checkpoint holds beside its format tags.
_PAYLOAD_KEYS = frozenset({"package_version", "torch_version", "learner", "transform", "rng",
                           "position", "record", "extra"})
#: Items shown of a list entry of ``expect`` that differs (a long class list is cut).
_SHOWN_ITEMS = 10

#: Sizes that fix a learner's shape: name in the checkpoint -> attribute path.
#: Only those the learner has are stored and compared.
_SHAPE_FIELDS = {
    "in_channels": "in_channels",
    "num_classes": "num_classes",
    "memory_size": "memory_size",
    "labeled_size": "memory.labeled_size",
    "unlabeled_size": "memory.unlabeled_size",
    "light": "light",
    "graph": "graph_kind",
    "k": "k",
    "hidden_channels": "backbone.hidden_channels",
    "num_layers": "backbone.num_layers",
    "embedding_layers": "graph.embedding.num_layers",
    "chunk_size": "chunk_size",
}


#: Settings that change what a learner computes: name in the checkpoint ->
#: attribute path. Stored for the learners that have them (``None`` included)
#: and compared where the checkpoint holds them (older checkpoints hold none).
#: ``lr`` and ``weight_decay`` are the optimizer state's, compared with it.
_SETTING_FIELDS = {
    "lam": "lam",
    "tau": "tau",
    "regularizer": "regularizer",
    "propagation": "propagation",
    "merge_similarity": "merge_similarity",
    "supervise_graph": "supervise_graph",
    "reselect_every": "reselect_every",
    "class_prior": "class_prior",
    "normalization": "backbone.normalization",
    "bias_position": "backbone.bias_position",
    "dropout": "backbone.dropout",
    "alpha": "memory.alpha",
    "beta": "memory.beta",
    "count_offset": "memory.count_offset",
    "source_merge": "memory.source_merge",
    "input_scaler": "input_scaler",
    "input_feature_range": "input_scaler.feature_range",
    # the baselines' hyperparameters (TLP's sigma and knn, the micro-cluster
    # baselines' decay and prune_threshold, ReSSL's window, ks and radius_k)
    "sigma": "sigma",
    "knn": "knn",
    "decay": "decay",
    "prune_threshold": "prune_threshold",
    "window": "window",
    "ks": "ks",
    "radius_k": "radius_k",
}


class CheckpointError(ValueError):
    """A checkpoint that cannot be read or does not fit the learner it is loaded into."""


@dataclass
class CheckpointState:
    """What :func:`load_checkpoint` returns besides the restored learner.

    Attributes:
        position (int): stream position to resume at (samples ``< position`` are done).
        record (dict[str, Any] or None): the run so far (:meth:`PrequentialRecord.state_dict`:
            its per-sample arrays, or with ``history="bounded"`` its running counts),
            ``None`` if none was saved; pass it as ``initial`` to :func:`prequential`.
        extra (dict[str, Any], optional): the ``extra`` dictionary given to
            :func:`save_checkpoint`.
        package_version (str, optional): version of the package that wrote the checkpoint.
            (default: :obj:`""`)
    """

    position: int
    record: Optional[Dict[str, Any]]
    extra: Dict[str, Any] = field(default_factory=dict)
    package_version: str = ""


def save_checkpoint(path: PathLike, learner: Any, *, position: int,
                    record: Union[PrequentialRecord, Mapping[str, Any], None] = None,
                    transform: Optional[Stateful] = None,
                    extra: Optional[Mapping[str, Any]] = None) -> Path:
    """Atomically write ``learner`` and the run's state to ``path``.

    Args:
        path (str or Path): target file; its folder must exist.
        learner (StreamClassifier): the stream learner (see the module docstring for what is
            stored).
        position (int): number of stream samples processed (the resume position).
        record (PrequentialRecord or Mapping[str, Any], optional): the run so far, a
            :class:`PrequentialRecord` or its :meth:`~PrequentialRecord.state_dict`; it must end at
            ``position``. (default: :obj:`None`)
        transform (Stateful, optional): the input transform whose state to store: any object with
            ``state_dict()`` and ``load_state_dict()`` (see :class:`Stateful`).
            (default: :obj:`None`)
        extra (Mapping[str, Any], optional): picklable values to store and check on loading
            (``expect``). (default: :obj:`None`)

    Returns:
        ``path`` as a :class:`~pathlib.Path`.

    Raises:
        ValueError: ``position`` negative, ``record`` a mapping lacking a
            state's entries (naming them), or not ending at ``position``.
        TypeError: ``record`` or ``extra`` of another type, ``transform``
            without ``state_dict()`` and ``load_state_dict()``.
    """
    _check_record(record)
    _check_transform_argument(transform)
    check_mapping(extra, "extra")
    if isinstance(position, bool) or not isinstance(position, (int, np.integer)) or position < 0:
        raise ValueError(f"position must be an integer >= 0, got {position!r}")
    arrays = record.state_dict() if isinstance(record, PrequentialRecord) else record
    if arrays is not None:
        samples = PrequentialRecord.state_samples(arrays)  # checks its entries first
        end = int(arrays["start"]) + samples
        if end != position:
            raise ValueError(f"record ends at position {end}, not at position={position}")
    kind, state = _learner_state(learner)
    payload = {
        "format": _FORMAT,
        "format_version": FORMAT_VERSION,
        "package_version": torch_geometric_stream.__version__,
        "torch_version": torch.__version__,
        "learner": {"class": _class_name(learner), "shape": _shape_info(learner),
                    "settings": _setting_info(learner), "kind": kind, "state": state},
        "transform": None if transform is None else {"class": _class_name(transform),
                                                     "state": transform.state_dict()},
        "rng": _rng_state(),
        "position": int(position),
        "record": None if arrays is None else dict(arrays),
        "extra": dict(extra or {}),
    }
    path = Path(path)
    _atomic_save(payload, path)
    return path


#: The ``extra`` of a checkpoint: a mapping, or a function giving it at each save
#: (values that change as the run goes, e.g. the digest of a stream's text read).
Extra = Union[Mapping[str, Any], Callable[[], Mapping[str, Any]], None]


class CheckpointCallback:
    r"""A :func:`~torch_geometric_stream.evaluation.prequential` callback that
    saves a checkpoint to ``path`` every ``every`` stream positions and after
    position ``end - 1`` (the run's last sample); for a stream whose end is not
    known (``end=None``), :meth:`finish` saves its last position after the run.

    Args:
        path, learner, transform: as for :func:`save_checkpoint`.
        every (int or None): checkpoint interval in samples (:math:`\geq 1`); ``None``: only
            at the end.
        end (int or None): stream position after the run's last sample; ``None``: not known.
        extra (Mapping[str, Any] or callable, optional): as for
            :func:`save_checkpoint`, or a function returning it, called at each save.
            (default: :obj:`None`)

    Raises:
        TypeError, ValueError: ``every`` or ``end`` is not an integer of its range,
            ``transform`` or ``extra`` of another type (before the run's first sample).
    """

    def __init__(self, path: PathLike, learner: Any, *, every: Optional[int],
                 end: Optional[int], transform: Optional[Stateful] = None,
                 extra: Extra = None) -> None:
        every = None if every is None else check_positive_int(every, "every")
        end = None if end is None else check_positive_int(end, "end", minimum=0)
        _check_transform_argument(transform)
        if not callable(extra):
            check_mapping(extra, "extra")
        self.path, self.learner, self.transform = path, learner, transform
        self.every, self.end, self.extra = every, end, extra
        self._last: Optional[tuple[int, PrequentialRecord]] = None  # position done, record
        self._saved: Optional[int] = None  # the position saved last

    def __call__(self, position: int, record: PrequentialRecord) -> None:
        done = position + 1
        self._last = (done, record)
        if (self.every is not None and done % self.every == 0) or done == self.end:
            self._save()

    def finish(self) -> None:
        """Save the last position the run reached unless it is saved (a run
        whose end was not known); a run that reached none saves nothing."""
        if self._last is not None and self._saved != self._last[0]:
            self._save()

    def _save(self) -> None:
        assert self._last is not None  # each save follows a position done
        done, record = self._last
        extra = self.extra() if callable(self.extra) else self.extra
        save_checkpoint(self.path, self.learner, position=done, record=record,
                        transform=self.transform, extra=extra)
        self._saved = done


def checkpoint_callback(path: PathLike, learner: Any, *, every: Optional[int],
                        end: Optional[int], transform: Optional[Stateful] = None,
                        extra: Extra = None) -> CheckpointCallback:
    """The :class:`CheckpointCallback` of these arguments.

    Args:
        path, learner, every, end, transform, extra: as for
            :class:`CheckpointCallback`.
    """
    return CheckpointCallback(path, learner, every=every, end=end, transform=transform,
                              extra=extra)


#: The ``expect`` of :func:`load_checkpoint`: a mapping, or a function of the
#: checkpoint's ``extra`` giving it (what to compare may depend on what the
#: checkpoint is of), which may refuse the checkpoint itself by raising
#: :class:`CheckpointError`.
Expect = Union[Mapping[str, Any], Callable[[Mapping[str, Any]], Mapping[str, Any]], None]


def load_checkpoint(path: PathLike, learner: Any, *,
                    transform: Optional[Stateful] = None,
                    expect: Expect = None,
                    assume: Optional[Mapping[str, Any]] = None) -> CheckpointState:
    """Restore ``learner`` (and ``transform`` and the RNG states) from ``path``.

    Everything is checked before anything changes: the file, ``expect``, the
    learner's class, sizes and settings (``lam``, ``lr``, ``normalization``, ...,
    where the checkpoint records them), the state's entries (and, for
    :class:`~torch.nn.Module` learners, their shapes), the transform and the RNG
    states (the CUDA ones as byte tensors: torch checks their values only as it
    sets them, which a process that has not initialized CUDA does at its
    initialization; they are set last).  If restoring still fails, learner,
    transform and RNG states are rolled back.

    Args:
        path (str or Path): a file written by :func:`save_checkpoint` (trusted: it is unpickled).
        learner (StreamClassifier): a learner built like the saved one.
        transform (Stateful, optional): the transform to restore; required exactly when the
            checkpoint holds a transform state. (default: :obj:`None`)
        expect (Mapping or callable, optional): entries that the checkpoint's ``extra`` must hold
            with equal values, or a function of the checkpoint's ``extra`` returning them (called
            before anything changes; it may raise :class:`CheckpointError`). (default: :obj:`None`)
        assume (Mapping[str, Any], optional): the value of an ``expect`` entry in checkpoints that
            lack it (written before the entry existed, or leaving it out at that value); without
            one, a lacking entry reads ``None``. (default: :obj:`None`)

    Returns:
        A :class:`CheckpointState` (position, the run's record, extra).

    Raises:
        CheckpointError: unreadable, truncated or foreign file, or any mismatch
            (the message names it, e.g. ``checkpoint has in_channels=8,
            learner has 16``).
    """
    _check_transform_argument(transform)
    if not callable(expect):
        check_mapping(expect, "expect")
    check_mapping(assume, "assume")
    path = Path(path)
    payload = _read(path)
    if callable(expect):
        expect = expect(payload["extra"])
        check_mapping(expect, "expect(extra)")
    _check_expected(path, payload["extra"], expect or {}, assume or {})
    saved = payload["learner"]
    _check_learner(path, saved, learner)
    _check_transform(path, payload["transform"], transform)
    _check_rng_state(path, payload["rng"])
    backup = (_learner_state(learner, copy_state=True), _rng_state(),
              None if transform is None else copy.deepcopy(transform.state_dict()))
    try:
        _restore_learner(learner, saved["kind"], saved["state"])
        if transform is not None:
            transform.load_state_dict(payload["transform"]["state"])
        # last, the CUDA states after the host ones: where CUDA is not initialized
        # they are queued for its initialization, which no rollback takes back
        _set_rng_state(payload["rng"])
    except Exception as error:
        (kind, state), rng, transform_state = backup
        _restore_learner(learner, kind, state)
        _set_rng_state(rng)
        if transform is not None:
            transform.load_state_dict(transform_state)
        raise CheckpointError(f"cannot restore checkpoint {path}: {error}") from error
    return CheckpointState(position=payload["position"], record=payload["record"],
                           extra=payload["extra"], package_version=payload["package_version"])


# ------------------------------------------------------------------ arguments
def _check_transform_argument(transform: Any) -> None:
    """``TypeError`` unless ``transform`` is ``None`` or has callable ``state_dict``
    and ``load_state_dict`` (see :class:`Stateful`)."""
    if transform is not None and not all(callable(getattr(transform, name, None))
                                         for name in ("state_dict", "load_state_dict")):
        raise TypeError(f"transform must have state_dict() and load_state_dict() (e.g. a "
                        f"StreamTransform) or be None, got {type(transform).__name__}")


def _check_record(record: Any) -> None:
    """``TypeError`` unless ``record`` is ``None``, a :class:`PrequentialRecord` or a mapping."""
    if record is not None and not isinstance(record, (PrequentialRecord, Mapping)):
        raise TypeError(f"record must be a PrequentialRecord, its state_dict() or None, "
                        f"got {type(record).__name__}")


# ------------------------------------------------------------------ writing
def _atomic_save(payload: Dict[str, Any], path: Path) -> None:
    """``torch.save`` ``payload`` onto ``path`` atomically (see :func:`atomic_write`),
    first removing the temporary files of a save of ``path`` that was killed
    (each as large as a checkpoint; ``path`` has one writer at a time)."""
    remove_stale_temporaries(path)
    atomic_write(path, lambda handle: torch.save(payload, handle))


# --------------------------------------------------------------- the learner
def _class_name(obj: Any) -> str:
    return f"{type(obj).__module__}.{type(obj).__qualname__}"


_ABSENT = object()


def _attribute(obj: Any, attribute_path: str) -> Any:
    """``obj.a.b`` for the path ``"a.b"``, or :data:`_ABSENT` where a link is missing."""
    for attribute in attribute_path.split("."):
        obj = getattr(obj, attribute, _ABSENT)
        if obj is _ABSENT:
            break
    return obj


def _shape_info(learner: Any) -> Dict[str, Any]:
    """The entries of :data:`_SHAPE_FIELDS` that ``learner`` has."""
    return {name: value for name, path in _SHAPE_FIELDS.items()
            if isinstance(value := _attribute(learner, path), (bool, int, float, str))}


def _setting_info(learner: Any) -> Dict[str, Any]:
    """The entries of :data:`_SETTING_FIELDS` that ``learner`` has: plain values
    (``None`` included) and tuples of them, and a module (the input scaler) by
    its class name."""
    info = {}
    for name, path in _SETTING_FIELDS.items():
        value = _attribute(learner, path)
        if _plain(value) or isinstance(value, tuple) and all(map(_plain, value)):
            info[name] = value
        elif isinstance(value, nn.Module):
            info[name] = type(value).__name__
    return info


def _plain(value: Any) -> bool:
    """Whether ``value`` is ``None``, a bool, a number or a string."""
    return value is None or isinstance(value, (bool, int, float, str))


def _has_state_dict(learner: Any) -> bool:
    return callable(getattr(learner, "state_dict", None)) and \
        callable(getattr(learner, "load_state_dict", None))


def _learner_state(learner: Any, copy_state: bool = False) -> tuple[str, Any]:
    """``("state_dict", learner.state_dict())`` or ``("pickle", learner.__dict__)``;
    deep-copied with ``copy_state`` (for a rollback)."""
    kind, state = (("state_dict", learner.state_dict()) if _has_state_dict(learner)
                   else ("pickle", learner.__dict__))
    return kind, copy.deepcopy(state) if copy_state else state


def _restore_learner(learner: Any, kind: str, state: Any) -> None:
    if kind == "state_dict":
        learner.load_state_dict(state)
    else:
        learner.__dict__.clear()
        learner.__dict__.update(state)


def _check_learner(path: Path, saved: Mapping[str, Any], learner: Any) -> None:
    """Class, sizes, storage kind and state entries of the checkpoint vs ``learner``."""
    if saved["class"] != _class_name(learner):
        raise CheckpointError(f"checkpoint {path} holds a {saved['class']}, "
                              f"the learner is a {_class_name(learner)}")
    ours = _shape_info(learner)
    mismatches = [f"checkpoint has {name}={saved['shape'].get(name)!r}, "
                  f"learner has {ours.get(name)!r}"
                  for name in sorted(set(saved["shape"]) | set(ours))
                  if saved["shape"].get(name) != ours.get(name)]
    if mismatches:
        raise CheckpointError(f"checkpoint {path} does not fit the learner: "
                              + "; ".join(mismatches))
    ours = _setting_info(learner)
    mismatches = [f"checkpoint has {name}={value!r}, learner has {ours.get(name)!r}"
                  for name, value in sorted(saved.get("settings", {}).items())
                  if not same_setting(ours.get(name, value), value)]
    if mismatches:
        raise CheckpointError(f"checkpoint {path} was saved with other settings: "
                              + "; ".join(mismatches))
    kind, current = _learner_state(learner)
    if saved["kind"] != kind:
        raise CheckpointError(f"checkpoint {path} stores the learner as {saved['kind']!r}, "
                              f"this learner needs {kind!r}")
    mismatches = _entry_mismatches(saved["state"], current, shapes=isinstance(learner, nn.Module),
                                   optional=getattr(learner, "optional_state_entries", ()))
    if mismatches:
        raise CheckpointError(f"checkpoint {path} does not fit the learner's state: "
                              + "; ".join(mismatches))


def _entry_mismatches(saved: Mapping[str, Any], current: Mapping[str, Any],
                      shapes: bool, optional: tuple[str, ...] = ()) -> List[str]:
    """Missing and unexpected entries and, with ``shapes``, entries of another shape;
    an entry of ``optional`` (that a state saved before it lacks) may be missing."""
    problems = []
    missing = sorted(set(current) - set(saved) - set(optional))
    unexpected = sorted(set(saved) - set(current))
    if missing:
        problems.append(f"missing entries {missing}")
    if unexpected:
        problems.append(f"unexpected entries {unexpected}")
    if shapes:
        for key in sorted(set(saved) & set(current)):
            old, new = (tuple(value.shape) if hasattr(value, "shape") else None
                        for value in (saved[key], current[key]))
            if old != new:
                problems.append(f"{key} has shape {old} in the checkpoint, {new} in the learner")
    return problems


def _check_transform(path: Path, saved: Optional[Mapping[str, Any]],
                     transform: Optional[Stateful]) -> None:
    if saved is None and transform is None:
        return
    if saved is None or transform is None:
        have = "holds a transform state" if transform is None else "holds no transform state"
        raise CheckpointError(f"checkpoint {path} {have}, but transform="
                              f"{'None' if transform is None else _class_name(transform)}")
    if saved["class"] != _class_name(transform):
        raise CheckpointError(f"checkpoint {path} holds a {saved['class']} transform, "
                              f"got a {_class_name(transform)}")


def _check_expected(path: Path, extra: Mapping[str, Any], expect: Mapping[str, Any],
                    assume: Mapping[str, Any]) -> None:
    saved = {key: extra[key] if key in extra else assume.get(key) for key in expect}
    mismatches = [f"{_saved_entry(key, saved[key], extra, assume)}, {_shown(value)} here"
                  for key, value in expect.items() if saved[key] != value]
    if mismatches:
        raise CheckpointError(f"checkpoint {path} was made by another run: "
                              + "; ".join(mismatches))


def _saved_entry(key: str, value: Any, extra: Mapping[str, Any],
                 assume: Mapping[str, Any]) -> str:
    """How a mismatch names the checkpoint's entry ``key`` (read as ``value``)."""
    if key in extra or key in assume:
        return f"{key}={_shown(value)} in the checkpoint"
    return f"{key} not in the checkpoint (older than the entry)"


def _shown(value: Any) -> str:
    """``repr(value)``, a list or tuple of more than :data:`_SHOWN_ITEMS` cut there."""
    if isinstance(value, (list, tuple)) and len(value) > _SHOWN_ITEMS:
        head = ", ".join(map(repr, value[:_SHOWN_ITEMS]))
        return f"[{head}, ... ({len(value)} in all)]"
    return repr(value)


# ------------------------------------------------------------------ reading
def _read(path: Path) -> Dict[str, Any]:
    """The payload of ``path``, or :class:`CheckpointError` for anything unreadable."""
    if path.is_file() and path.stat().st_size == 0:  # torch says 'EOFError: Ran out of input'
        raise CheckpointError(f"checkpoint {path} is empty (0 bytes): not a checkpoint")
    try:
        payload = (torch.load(path, map_location="cpu", weights_only=False)
                   if _saved_by_torch(path) else None)
    except Exception as error:  # truncated zip, missing file, damaged pickle ...
        raise CheckpointError(f"cannot read checkpoint {path}: {type(error).__name__}: "
                              f"{error}") from error
    if not isinstance(payload, dict) or payload.get("format") != _FORMAT:
        raise CheckpointError(f"{path} is not a torch_geometric_stream checkpoint")
    if payload.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"checkpoint {path} has format version "
                              f"{payload.get('format_version')!r}, this package reads "
                              f"{FORMAT_VERSION}")
    missing = sorted(_PAYLOAD_KEYS - set(payload))
    if missing:
        raise CheckpointError(f"checkpoint {path} lacks the entries {missing}")
    return payload


def _is_legacy_torch_file(head: bytes) -> bool:
    """Whether the first bytes ``head`` of a file open a legacy :func:`torch.save`
    file of any pickle protocol from 2 on (see :data:`_LEGACY_MAGIC`)."""
    if len(head) < 2 or head[0] != 0x80 or not 2 <= head[1] <= 5:  # PROTO n
        return False
    body = head[11:] if head[1] >= 4 and head[2:3] == b"\x95" else head[2:]  # FRAME
    return body.startswith(_LEGACY_MAGIC)


def _saved_by_torch(path: Path) -> bool:
    """Whether ``path`` may be a file that :func:`torch.save` wrote: a zip archive
    holding a ``data.pkl`` entry, or one too damaged to list (a truncated checkpoint,
    which :func:`torch.load` then names), or a file of the legacy format (starting
    with :data:`_LEGACY_MAGIC`). Any other file (text, JSON, a plain pickle, an
    ``.npz``) is no checkpoint, and is not unpickled."""
    with open(path, "rb") as handle:
        head = handle.read(2 + 9 + len(_LEGACY_MAGIC))
    if _is_legacy_torch_file(head):
        return True
    if not head.startswith(_ZIP_MAGIC):
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            return any(name.endswith("/data.pkl") for name in archive.namelist())
    except zipfile.BadZipFile:
        return True


# ---------------------------------------------------------------------- RNG
def _rng_state() -> Dict[str, Any]:
    """The generators' states; the CUDA devices' only where this process uses
    CUDA already (reading them would initialize it: a CUDA context on every
    device, for a run on the CPU)."""
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None
    return {"torch": torch.get_rng_state(), "numpy": np.random.get_state(),
            "python": random.getstate(), "cuda": cuda}


def _check_rng_state(path: Path, state: Any) -> None:
    """Raise :class:`CheckpointError` naming the first of the generators' states
    ``state`` (what :func:`_rng_state` gave) that its generator refuses, tried on
    a generator of its own (the process's are left alone), or a CUDA state that is
    no ``torch.ByteTensor`` (see :func:`_cuda_rng_problem`)."""
    refused = f"checkpoint {path} holds RNG states that cannot be restored"
    keys = sorted({*_HOST_GENERATORS, "cuda"})
    if not isinstance(state, Mapping) or sorted(state) != keys:
        got = sorted(state) if isinstance(state, Mapping) else type(state).__name__
        raise CheckpointError(f"{refused}: rng must have the keys {keys}, got {got}")
    for name, set_state in _HOST_GENERATORS.items():
        try:
            set_state(state[name])
        except Exception as error:
            raise CheckpointError(f"{refused}: rng[{name!r}]: {error}") from error
    problem = _cuda_rng_problem(state["cuda"])
    if problem is not None:
        raise CheckpointError(f"{refused}: {problem}")


#: The host generators a checkpoint restores, by their key in its ``rng``: a
#: function that sets a state on a generator of its own, raising for a state
#: that the generator refuses.
_HOST_GENERATORS: Dict[str, Callable[[Any], Any]] = {
    "torch": lambda state: torch.Generator().set_state(state),
    "numpy": lambda state: np.random.RandomState(0).set_state(state),
    "python": lambda state: random.Random().setstate(state),
}


def _cuda_rng_problem(cuda: Any) -> Optional[str]:
    """What is wrong with the CUDA states ``cuda``, or ``None``: they must be
    ``None`` or a list of ``torch.ByteTensor`` s. Torch checks them only as it
    sets them, and a process that has not initialized CUDA sets them at its
    initialization (:func:`torch.cuda.set_rng_state` queues them): too late to
    refuse the load, so what can be checked without a device is checked here."""
    if cuda is None:
        return None
    if not isinstance(cuda, (list, tuple)):
        return (f"rng['cuda'] is a {type(cuda).__name__}, not None or a list of states, one "
                f"per CUDA device")
    for device, state in enumerate(cuda):
        if not (isinstance(state, torch.Tensor) and state.dtype == torch.uint8
                and state.layout == torch.strided and state.is_cpu):
            got = (f"{state.dtype} tensor on {state.device}" if isinstance(state, torch.Tensor)
                   else type(state).__name__)
            return (f"rng['cuda'][{device}] is a {got}, not a torch.ByteTensor (uint8, dense, "
                    f"on the CPU)")
    return None


def _set_rng_state(state: Mapping[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    np.random.set_state(state["numpy"])
    random.setstate(state["python"])
    cuda = state["cuda"]
    if cuda is not None and torch.cuda.is_available() and len(cuda) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(cuda)
