"""The ``run`` command: prequential evaluation of one model on one stream, per seed."""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Optional

import numpy as np
import torch

from torch_geometric_stream.checkpoint import (CheckpointCallback, CheckpointError,
                                               checkpoint_callback, load_checkpoint)
from torch_geometric_stream.cli.arguments import (check_device, check_files_apart,
                                                  check_folder, check_input_file,
                                                  check_output_files, check_suffixes,
                                                  parse_seeds, read_config_file, root_option)
from torch_geometric_stream.cli.configs import resolve_config, resolve_stream_entries
from torch_geometric_stream.cli.errors import Interrupted, UsageError
from torch_geometric_stream.cli.interrupts import (DeferredInterrupt, StoppedBetweenSamples,
                                                   StoppedSeed, interrupted_line, modified_time,
                                                   stopped_after, stopped_line,
                                                   until_stopped)
from torch_geometric_stream.cli.models import (BASELINE_HYPERPARAMETER_KEYS, MODEL_NAMES,
                                               SLEDGE_CONFIG_KEYS, build_learner,
                                               build_transform, config_keys,
                                               fixed_config_entries, unread_config_entries)
from torch_geometric_stream.cli.report import (partial_path, run_record, seed_path,
                                               software_versions, summary_table, write_json)
from torch_geometric_stream.cli.seed_workers import SharedStream, run_in_workers, worker_state
from torch_geometric_stream.cli.show_config import config_lines
from torch_geometric_stream.datasets import (STREAM_FILE_SUFFIXES, DatasetError, StreamDataset,
                                             is_stream_file, load_dataset, load_stream_file,
                                             make_synthetic_dataset, resolve_dataset_name,
                                             stream_file_digest)
from torch_geometric_stream.datasets.bundled import BUNDLED_DATASET, load_bundled_dataset
from torch_geometric_stream.datasets.csv_stream import STDIN, STDIN_SOURCE, CSVRowStream
from torch_geometric_stream.datasets.synthetic import DRIFTS as SYNTHETIC_DRIFTS
from torch_geometric_stream.cli.label_protocol import (QUERY_OPTIONS, label_delay_words,
                                                       label_query, learn_on_arrival,
                                                       query_settings, query_words)
from torch_geometric_stream.evaluation import (LABEL_QUERIES, POSITION_MASKS, PositionMask,
                                               PrequentialResult, StreamTransform,
                                               UncertaintyQuery, make_label_mask,
                                               plot_running_accuracy, prequential)
from torch_geometric_stream.evaluation.progress import LOG_PROGRESS_SECONDS
from torch_geometric_stream.models import SLEDGE_VARIANTS, CUDAGraphStep
from torch_geometric_stream.ops import flush_denormal

__all__ = ["DEFAULT_MODEL", "BUNDLED_MODEL", "BUNDLED_LIMIT", "OVERRIDE_KEYS", "RESUME_KEYS",
           "DATA_DIGEST", "STREAM_DIGEST", "SYNTHETIC_DRIFT", "SYNTHETIC_SAMPLES",
           "HISTORY_HELP", "Stream", "check_run", "data_digest", "load_stream",
           "recorded_config", "run_command", "run_device", "labels_after_the_end",
           "synthetic_drift"]

#: Model when ``--dataset`` is given.
DEFAULT_MODEL = "sledge"
#: Model and sample limit of the default job (bundled Shopper stream, no ``--dataset``).
BUNDLED_MODEL = "sledge-light"
BUNDLED_LIMIT = 2000
#: Drift and length of ``--dataset synthetic`` without ``--synthetic-drift`` /
#: ``--synthetic-samples``.
SYNTHETIC_DRIFT = "sudden"
SYNTHETIC_SAMPLES = 5000
#: Help of ``--history`` (``run`` and ``tune``).
HISTORY_HELP = ("what the run keeps of its samples: full, the per-sample predictions "
                "(about 18 bytes a sample); bounded, running counts whose memory does not "
                "grow with the stream: the accuracy and the class metrics (confusion, "
                "recall, kappas) are exactly full's, the last 20/10/5 %% accuracies come from "
                "the kept position nearest to the tail's start (exact up to 4096 samples; "
                "the record's tail_samples says how many each covers) and ms per sample "
                "from a histogram (within 0.5 %%); --csv needs full")
#: Flags that override configuration entries (argparse destination = entry name).
OVERRIDE_KEYS = SLEDGE_CONFIG_KEYS + BASELINE_HYPERPARAMETER_KEYS
#: Run entries a ``--resume`` checkpoint must share with the command (besides
#: the resolved configuration and the stream's identity; a streamed run's
#: ``limit`` excepted, see :func:`_stream_identity`, and a stream file's name,
#: see :func:`_resume_identity`).
RESUME_KEYS = ("dataset", "model", "label_ratio", "label_mask", "seed", "limit",
               "synthetic_samples", "flush_denormal", "history", "eval_window", "label_delay",
               "learn_on_arrival", "threads", *QUERY_OPTIONS)
#: Configuration entries added after checkpoints were first written, with the
#: value every older checkpoint ran with: a checkpoint (or run record) that lacks
#: one ran with that value, as it predates the entry or was written by a version
#: that left an entry out at that value.
LATER_ENTRIES = {"class_prior": "memory", "light_memory": "per-class", "reselect_every": 1,
                 "search_dtype": None, "feature_transform": "none", "count_offset": 1,
                 "merge_similarity": "embedding", "source_merge": "raw",
                 "supervise_graph": True,
                 "bias_position": "after", "robust_quantile": 0.01,
                 "robust_tolerance": 0.05, "robust_reservoir": 1000, "robust_window": None,
                 "robust_clip": True,
                 "feature_range": [-1.0, 1.0],
                 **{key: None for key in BASELINE_HYPERPARAMETER_KEYS}}
#: Configuration entries that older run records (JSON results) lack, with the
#: value those runs had: :data:`LATER_ENTRIES` and the memory coefficients
#: (adaptive was the only rule before ``alpha`` / ``beta`` became options, which
#: predates checkpoints, so they stay part of a checkpoint's identity).
OLDER_RECORDS = {**LATER_ENTRIES, "alpha": "adaptive", "beta": "adaptive"}
#: The entry of a run record, and of a ``--resume`` checkpoint's identity, holding
#: the :func:`data_digest` of the stream the run read whole (``None`` in a record
#: of a ``--stream`` run, whose rows its checkpoint's :data:`STREAM_DIGEST` checks;
#: not in the checkpoint of a stream file, which the digest of its bytes identifies).
DATA_DIGEST = "data_sha256"
#: The identity entries that a ``--resume`` checkpoint older than them lacks and
#: whose value such a run had is not known: accepted unchecked (a checkpoint that
#: has them is checked).
UNCHECKED_WHEN_ABSENT = ("threads", DATA_DIGEST)
#: The entry of a streamed run's checkpoint holding the digest of the text read
#: for the rows done (:meth:`~torch_geometric_stream.datasets.csv_stream.CSVRowStream.digest`).
STREAM_DIGEST = "stream_digest"
#: A ``--resume`` checkpoint's identity entries that older checkpoints lack, with
#: the value those runs had (checkpoints predate flushing denormals). An older
#: checkpoint of a synthetic stream, whose length it did not keep, is refused.
OLDER_CHECKPOINTS = {"flush_denormal": False, "history": "full", "synthetic_samples": None,
                     "eval_window": None, "label_delay": 0, "learn_on_arrival": None,
                     **{key: None for key in QUERY_OPTIONS},
                     **{f"config.{key}": value for key, value in LATER_ENTRIES.items()}}


def recorded_config(record: Mapping[str, Any]) -> dict[str, Any]:
    """The configuration a ``run`` record's run had, comparable across package
    versions: entries the record predates read as :data:`OLDER_RECORDS` says, and
    entries its model does not take (the SLeDGe entries of a baseline), never
    reads (``k`` of ``memory``, ``light_memory`` outside ``sledge-light``) or fixes
    itself (e.g. +GSL's ``lam``) are left out."""
    model = record["model"]
    config = {**OLDER_RECORDS, **record["config"]}
    if model not in MODEL_NAMES:
        return config
    left_out = {*fixed_config_entries(model), *unread_config_entries(model)}
    return {key: value for key, value in config.items()
            if key in config_keys(model) and key not in left_out}


def data_digest(dataset: StreamDataset) -> str:
    """The SHA-256 (hex) of a loaded stream's content: its class names, the
    shapes and bytes of its features and labels (in memory as the run reads
    them: float32 and int64). Another copy of a dataset (another version, or
    one prepared otherwise) gets another digest, a stream file renamed the same.
    Hashing MNIST's 70,000 x 784 features takes about 0.2 s: a run takes it
    once, for all its seeds."""
    digest = hashlib.sha256(json.dumps([dataset.class_names, dataset.x.shape, str(dataset.x.dtype),
                                        dataset.y.shape, str(dataset.y.dtype)]).encode())
    for array in (dataset.x, dataset.y):
        digest.update(np.ascontiguousarray(array).data)
    return digest.hexdigest()


@contextmanager
def user_input(what: str) -> Iterator[None]:
    """Report ``ValueError`` / ``TypeError`` / ``FileNotFoundError`` raised while
    handling user input (not while running the stream) as :class:`UsageError`."""
    try:
        yield
    except (UsageError, DatasetError):
        raise
    except (ValueError, TypeError, FileNotFoundError) as error:
        raise UsageError(f"{what}: {error}") from error


#: ``(dataset, canonical name, source)`` of a run's stream: a stream read as
#: the run goes (``--stream``) is a :class:`CSVRowStream`.
Stream = tuple[StreamDataset | CSVRowStream, str, str]


def _load_stream(args: argparse.Namespace) -> Stream:
    """The :data:`Stream` of ``--dataset`` (the bundled default without; the
    bundled copy for Shopper too when no data folder is found)."""
    drift = None if args.dataset is None else synthetic_drift(args.dataset, args.synthetic_drift)
    _check_stream_options(args, drift)
    from_file = _on_stream_file(args)
    from_csv = from_file and not args.dataset.strip().lower().endswith(".npz")
    if args.label_column is not None and not (from_csv or args.stream):
        raise UsageError("--label-column applies to a CSV or ARFF file given as --dataset "
                         "(an .npz file holds its labels in y); drop it")
    if args.stream:
        rows = CSVRowStream(args.dataset.strip(), args.classes, label_column=args.label_column,
                            limit=args.limit)
        return rows, rows.name, rows.source
    if from_file:
        dataset = load_stream_file(args.dataset.strip(), label_column=args.label_column,
                                   limit=args.limit)  # read no further than the limit
        return dataset, dataset.name, dataset.source
    if args.dataset is None:
        return load_bundled_dataset(), BUNDLED_DATASET, "bundled"
    if drift is not None:
        dataset = make_synthetic_dataset(_synthetic_length(args), drift=drift)
        return dataset, dataset.name, "synthetic"
    name = _dataset_name(args.dataset)
    if args.root is None and name == BUNDLED_DATASET:
        print(f"no data folder found: using the bundled {name} copy", file=sys.stderr)
        return load_bundled_dataset(), name, "bundled"
    if args.root is None:
        raise UsageError(f"no data folder found: pass --root DIR or set TGS_DATA_ROOT (only "
                         f"{BUNDLED_DATASET} is bundled)")
    # named itself, not as a dataset's missing folder
    check_folder(root_option(Path(args.root)), Path(args.root))
    return load_dataset(name, args.root, strict=args.strict), name, str(Path(args.root).resolve())


def _dataset_name(value: str) -> str:
    """The canonical name of the paper dataset ``--dataset value``. A file or
    folder there that is no stream file is named as what it is, and a value named
    like a file (a suffix, a folder) that is none: the list of dataset names
    would not say why a path was refused."""
    try:
        return resolve_dataset_name(value)
    except ValueError as error:
        path = Path(value.strip())
        if path.is_dir():
            raise UsageError(f"--dataset: {value} is a folder; for a dataset's folder give "
                             f"its name and the folder above it (--dataset NAME --root DIR)"
                             ) from None
        if path.exists():
            raise UsageError(f"--dataset: {value} is not a stream file: its name must end "
                             f"in {', '.join(STREAM_FILE_SUFFIXES)} (convert or rename it)"
                             ) from None
        if _named_like_file(value):
            raise UsageError(f"--dataset: no file {value} is there, and {error} (a stream "
                             f"file's name ends in {', '.join(STREAM_FILE_SUFFIXES)})"
                             ) from None
        raise


def _named_like_file(value: str) -> bool:
    """Whether ``--dataset value`` is named like a file: with a suffix or a folder."""
    path = Path(value.strip())
    return bool(path.suffix) or len(path.parts) > 1


def _synthetic_length(args: argparse.Namespace) -> int:
    """The length of a synthetic ``--dataset``'s stream (before ``--limit`` cuts it)."""
    return args.synthetic_samples or SYNTHETIC_SAMPLES


def synthetic_drift(name: str, flag_drift: Optional[str]) -> Optional[str]:
    """The drift of a synthetic ``--dataset`` name: ``synthetic`` takes
    ``--synthetic-drift``; ``synthetic-<drift>`` (the name a synthetic run reports,
    so results can be re-run or tuned by it) names its own. ``None``: not synthetic,
    as a name like a file's (a suffix, a folder: ``synthetic-mine.csv``) is not."""
    name = name.strip().lower()
    if name == "synthetic":
        return flag_drift or SYNTHETIC_DRIFT
    prefix, _, drift = name.partition("-")
    if prefix != "synthetic" or _named_like_file(name):
        return None
    if drift not in SYNTHETIC_DRIFTS:
        raise UsageError(f"--dataset {name!r}: unknown synthetic drift {drift!r}; choose from "
                         f"{', '.join('synthetic-' + d for d in SYNTHETIC_DRIFTS)}")
    return drift


def _check_stream_options(args: argparse.Namespace, drift: Optional[str]) -> None:
    """Refuse ``--synthetic-samples`` / ``--synthetic-drift`` and ``--strict``
    where the stream does not read them (``drift``: the synthetic stream's,
    ``None`` for another stream): setting them would change nothing."""
    plain = drift is not None and args.dataset.strip().lower() == "synthetic"
    named = args.dataset is not None and drift is None and not is_stream_file(args.dataset)
    for flag, value, read, readers in (
            ("--synthetic-samples", args.synthetic_samples, drift is not None,
             "the synthetic datasets do"),
            ("--synthetic-drift", args.synthetic_drift, plain,
             "--dataset synthetic does"),
            ("--strict", args.strict or None, named,
             "the paper's datasets, read from a data folder, do")):
        if value is not None and not read:
            stream = ("the bundled default stream" if args.dataset is None
                      else f"--dataset {args.dataset}")
            raise UsageError(f"{stream} does not read {flag} (only {readers}; setting it "
                             f"changes nothing); drop it")


def run_command(args: argparse.Namespace) -> int:
    """Run ``args.model`` on the stream once per seed; write and print the results."""
    seeds = parse_seeds(args.seed)
    _check_checkpoint_flags(args, seeds)
    query_settings(args)  # a query option its label mask does not read
    learn_on_arrival(args)  # the arrival flag without a delay
    _check_stream_flags(args, seeds)
    args.history = args.history or ("bounded" if args.stream else "full")
    if args.csv is not None and args.history == "bounded":
        raise UsageError("--csv writes one row per sample, which --history bounded does not "
                         "keep: drop --csv or run with --history full")
    if args.windows_csv is not None and args.eval_window is None:
        raise UsageError("--windows-csv writes one row per --eval-window window: add "
                         "--eval-window N or drop --windows-csv")
    outputs = (("--output", args.output), ("--csv", args.csv), ("--plot", args.plot),
               ("--checkpoint", args.checkpoint), ("--windows-csv", args.windows_csv))
    check_output_files(outputs, plot=args.plot)
    _check_files_apart(args, outputs)
    check_suffixes((("--output", args.output, ".json"), ("--csv", args.csv, ".csv"),
                    ("--windows-csv", args.windows_csv, ".csv")))
    if args.resume is not None:  # before the stream loads
        check_input_file("--resume", args.resume)
    if args.show_config:
        return _show_config(args, seeds)
    _warn_of_replaced_checkpoint(args)
    torch.set_num_threads(args.threads)
    checkpoint_before = modified_time(args.checkpoint)
    written: list[int] = []
    try:
        # Flush from the start, so that torch's worker threads (which loading a
        # large stream starts) flush too: a thread takes the setting it starts with.
        with flush_denormal() if args.flush_denormal else nullcontext():
            return _run_seeds(args, seeds, written)
    except KeyboardInterrupt as interrupt:
        line = (stopped_line(args, seeds, written, interrupt)
                if isinstance(interrupt, StoppedBetweenSamples)
                else interrupted_line(args, checkpoint_before, seeds, written))
        raise Interrupted(line) from None


def _warn_of_replaced_checkpoint(args: argparse.Namespace) -> None:
    """Warn on stderr when ``--checkpoint`` names a file that exists and the run
    does not resume from it: a rerun that forgot ``--resume`` starts from the
    first sample (one resumed from another file goes on from there), and its first
    checkpoint replaces the state it could go on from."""
    if args.checkpoint is None or not args.checkpoint.is_file():
        return
    if args.resume is not None and args.resume.resolve() == args.checkpoint.resolve():
        return
    start = ("starts from the first sample" if args.resume is None
             else f"goes on from --resume {args.resume}")
    print(f"warning: --checkpoint {args.checkpoint} exists; this run {start} and its first "
          f"checkpoint replaces it (--resume {args.checkpoint} goes on from it)",
          file=sys.stderr)


def _warn_of_labels_after_the_end(args: argparse.Namespace, plan: RunPlan) -> None:
    """Print :func:`labels_after_the_end` on stderr, if any; not in a run of tune's
    grid (``--grid-run``): tune warns once for all of them."""
    warning = None if args.grid_run else labels_after_the_end(args, plan)
    if warning is not None:
        print(warning, file=sys.stderr)


def labels_after_the_end(args: argparse.Namespace, plan: RunPlan) -> Optional[str]:
    """The warning of a ``--label-delay`` at least the number of samples the
    run's stream has (a file read whole, a named dataset, or ``--stream`` with
    ``--limit``, which it has at most): the label of sample ``t`` comes after
    sample ``t + N``, so none comes before the stream ends and the run learns no
    label; ``None`` for a shorter delay, or a stream read as it comes without
    ``--limit``, which has no known end."""
    dataset = plan.stream[0]  # a stream read as it comes (--stream): its --limit at most
    length = dataset.num_samples if isinstance(dataset, StreamDataset) else plan.limit
    if length is None or args.label_delay < length:
        return None
    samples = f"at most {length:,} samples: --limit" if args.stream else f"{length:,} samples"
    return (f"warning: --label-delay {args.label_delay} is at least the stream's length "
            f"({samples}): every label comes after the stream's end, so the run learns none "
            f"(give a delay below the stream's length)")


def _check_files_apart(args: argparse.Namespace,
                       outputs: tuple[tuple[str, Optional[Path]], ...]) -> None:
    """:func:`~torch_geometric_stream.cli.arguments.check_files_apart` of
    ``outputs`` and the run's inputs (the stream file, ``--config``, ``--resume``);
    ``--checkpoint`` may be ``--resume``: the run goes on saving where it resumed
    from."""
    inputs = (("--dataset", Path(args.dataset.strip()) if _on_stream_file(args) else None),
              ("--config", args.config), ("--resume", args.resume))
    check_files_apart(inputs, outputs, may_share=frozenset({"--resume", "--checkpoint"}))


@dataclass
class RunPlan:
    """What ``run`` resolves and checks before its stream starts."""
    model: str
    device: str
    cuda_graph: bool
    limit: Optional[int]
    stream: Stream
    config: dict[str, Any]
    #: The stream's :func:`data_digest` (``None``: read as it comes, or not run).
    data_sha256: Optional[str] = None


def load_stream(args: argparse.Namespace) -> Stream:
    """The :data:`Stream` of a ``run``'s arguments, cut to its limit."""
    with user_input("--dataset"):
        dataset, name, source = _load_stream(args)
    limit = _limit(args)
    if limit is None or isinstance(dataset, CSVRowStream):  # --stream stops at the limit
        return dataset, name, source
    return dataset.head(limit), name, source


def _limit(args: argparse.Namespace) -> Optional[int]:
    return args.limit or (BUNDLED_LIMIT if args.dataset is None else None)


def run_device(args: argparse.Namespace, model: str) -> tuple[str, bool]:
    """The device of a run of ``model`` (``--device``, checked to exist here) and
    whether it steps through CUDA graphs (``--cuda-graph``, checked to fit them).

    A label query decides a sample's label between its prediction and its
    learning, which a CUDA graph's fused step does in one call: such a run steps
    eagerly.

    Raises:
        UsageError: a device this machine lacks, or CUDA graphs where none can run.
    """
    device = check_device(args.device, gpu_capable=model in SLEDGE_VARIANTS)
    graphable = device.startswith("cuda") and model in SLEDGE_VARIANTS
    if args.cuda_graph and not graphable:
        raise UsageError(f"--cuda-graph needs a SLeDGe model on CUDA, got model {model!r} on "
                         f"device {device}")
    if args.cuda_graph and args.label_mask in LABEL_QUERIES:
        raise UsageError(f"--cuda-graph replays a sample's prediction and learning as one "
                         f"step, but --label-mask {args.label_mask} decides the label between "
                         f"them: drop --cuda-graph")
    if args.label_mask in LABEL_QUERIES:
        return device, False
    return device, graphable if args.cuda_graph is None else args.cuda_graph


def _plan(args: argparse.Namespace, stream: Optional[Stream] = None,
          sources: Optional[dict[str, str]] = None,
          config_file: Optional[dict[str, Any]] = None) -> RunPlan:
    """Model, device, stream (``stream`` if given, already loaded with the same
    arguments) and configuration of a run (``config_file``: the ``--config``
    file's entries if already read), each checked; ``sources``, if given, is
    filled with where each configuration entry comes from
    (:func:`~torch_geometric_stream.cli.configs.resolve_config`)."""
    model = args.model or (BUNDLED_MODEL if args.dataset is None else DEFAULT_MODEL)
    device, cuda_graph = run_device(args, model)
    sources = {} if sources is None else sources
    if stream is None:
        stream = load_stream(args)
    dataset, name, _ = stream
    overrides = {key: getattr(args, key) for key in OVERRIDE_KEYS}
    with user_input("configuration"):
        config = resolve_config(name, args.label_ratio, model, overrides,
                                read_config_file(args.config) if config_file is None
                                else config_file, num_classes=dataset.num_classes,
                                preset=args.preset, sources=sources)
        resolve_stream_entries(config, model, dataset.value_range, sources)
    if args.stream and config["scaling"] == "global":
        raise UsageError(f"--stream: scaling global (from {sources['scaling']}) scales by the "
                         f"range of the whole stream, which a stream read as it comes does "
                         f"not know: pass --scaling online or robust (online-rescale or "
                         f"robust-rescale for the SLeDGe family)")
    return RunPlan(model, device, cuda_graph, _limit(args), stream, config)


def _seed_run(args: argparse.Namespace, plan: RunPlan, seed: int
              ) -> tuple[Any, Any, Optional[UncertaintyQuery], StreamTransform]:
    """The learner, label mask (``None`` for a label query), label query (``None``
    for a label mask) and input transform of one seed of ``plan``."""
    dataset = plan.stream[0]
    query = label_query(args, seed)
    with user_input("configuration"):
        learner = build_learner(plan.model, dataset.num_features, dataset.num_classes,
                                plan.config, seed, plan.device)
        mask = (None if query is not None
                else PositionMask(args.label_mask, args.label_ratio, seed)
                if isinstance(dataset, CSVRowStream)
                else make_label_mask(args.label_mask, dataset.y, args.label_ratio, seed))
        transform = build_transform(plan.config, dataset, seed)
    return learner, mask, query, transform


def check_run(args: argparse.Namespace, stream: Stream,
              config_file: Optional[dict[str, Any]] = None) -> RunPlan:
    """Every check ``run`` makes of its configuration before the stream starts
    (its first seed's learner built), without running: ``tune`` checks each grid
    point so, on ``stream`` and with the ``--config`` entries ``config_file``,
    each read once for all of them. Returns the run's plan.

    Raises:
        UsageError: what the run would refuse.
    """
    plan = _plan(args, stream, config_file=config_file)
    _seed_run(args, plan, parse_seeds(args.seed)[0])
    return plan


def _show_config(args: argparse.Namespace, seeds: list[int]) -> int:
    """``run --show-config``: resolve and check the run as it would start (the
    stream loaded for its class count and value range, the first seed's learner
    built), print the run and its configuration with each entry's source
    (:func:`~torch_geometric_stream.cli.show_config.config_lines`), and run
    and write nothing. Output options are checked, not refused: the flag is
    meant to be appended to the command about to run."""
    sources: dict[str, str] = {}
    plan = _plan(args, sources=sources)
    _warn_of_labels_after_the_end(args, plan)
    _seed_run(args, plan, seeds[0])  # what the run refuses before its stream starts
    dataset, name, _ = plan.stream
    values = ("" if dataset.value_range is None
              else ", values in [{:g}, {:g}]".format(*dataset.value_range))
    length = ("read as it comes" if isinstance(dataset, CSVRowStream)
              else f"{'' if plan.limit is None else 'its first '}{dataset.num_samples} samples")
    print(f"{plan.model} on {name}: {length}, {dataset.num_features} features, "
          f"{dataset.num_classes} classes{values}")
    query = "".join(f", {key.replace('_', ' ')} {value}"
                    for key, value in query_settings(args).items() if value is not None)
    print(f"label ratio {args.label_ratio} (mask {args.label_mask}{query})"
          f"{label_delay_words(args.label_delay, learn_on_arrival(args))}, "
          f"preset {args.preset}, "
          f"seeds {','.join(map(str, seeds))}, device {plan.device}"
          f"{' with CUDA graphs' if plan.cuda_graph else ''}")
    print("\n".join(config_lines(plan.model, plan.config, sources, args.config)))
    print("--show-config: nothing was run or written")
    return 0


def _run_seeds(args: argparse.Namespace, seeds: list[int], written: list[int]) -> int:
    """:func:`run_command` after its checks: load, build, evaluate and report; each
    seed whose output files are written (``--output``, ``--csv``) joins ``written``.

    The first Ctrl-C starts no further seed and stops the seeds in progress (one;
    with ``--jobs``, one per worker) at the end of their sample: their partial
    files (:func:`_write_outputs`) and the partial ``--plot`` of every seed run
    written and the table printed, :class:`StoppedBetweenSamples` is raised (a
    plain ``KeyboardInterrupt`` where none was in progress)."""
    several = len(seeds) > 1
    plan = _plan(args)
    _warn_of_labels_after_the_end(args, plan)
    if isinstance(plan.stream[0], StreamDataset):  # once for all seeds
        plan = replace(plan, data_sha256=data_digest(plan.stream[0]))
    interrupt = DeferredInterrupt()
    if args.jobs > 1 and several:
        _seed_run(args, plan, seeds[0])  # what the workers would refuse, refused here once
        dataset, name, source = plan.stream
        assert isinstance(dataset, StreamDataset)  # --stream runs one seed at a time
        shared = SharedStream((dataset, name, source))
        plan = replace(plan, stream=shared.stream())  # the copy in shared memory alone
        outcomes = run_in_workers(args, shared, seeds, partial(
            _run_seed_in_worker, data_sha256=plan.data_sha256), interrupt)
    else:
        outcomes = ((seed, *_run_seed(args, plan, seed, interrupt=interrupt)) for seed in seeds
                    if not interrupt.requested)  # no seed starts after a Ctrl-C
    with interrupt.deferring():  # from the first seed's stream to the last file
        return _report_seeds(args, plan, seeds, outcomes, written)


def _report_seeds(args: argparse.Namespace, plan: RunPlan, seeds: list[int],
                  outcomes: Iterable[tuple[int, PrequentialResult, dict[str, Any]]],
                  written: list[int]) -> int:
    """Write each seed's files as its ``outcomes`` come (the seeds whose final
    files are written join ``written``), then the ``--plot`` and the summary
    table; :class:`StoppedBetweenSamples` if Ctrl-C stopped seeds at a sample.
    Run within :meth:`DeferredInterrupt.deferring`: a first Ctrl-C or a SIGTERM
    that comes after the streams stopped (a ``run_commands`` parent passes the
    terminal's Ctrl-C on as SIGTERM, late on a busy machine) or between seeds
    lets the run write its files, start no further seed, and say what it kept."""
    several = len(seeds) > 1
    results, records, stopped = {}, [], []
    try:
        for seed, result, record in outcomes:
            records.append(record)
            results[f"seed {seed}"] = result
            files = _write_outputs(args, result, record, seed, several)
            if "interrupted_at" in record:
                stopped.append(StoppedSeed(seed, record["interrupted_at"], files))
            elif files:
                written.append(seed)
    except KeyboardInterrupt:  # a second Ctrl-C, or --jobs workers that did not stop
        if not stopped:
            raise
    title = f"{plan.model} on {plan.stream[1]}"
    if stopped:  # the seeds' partial files written before stay the run's report
        interrupted = f"interrupted {stopped_after(stopped, several)}"
        plot = None if args.plot is None else plot_running_accuracy(
            results, partial_path(args.plot), title=f"{title}; {interrupted}",
            image_format=args.plot.suffix.removeprefix(".") or "png")
        _print_summary(args, plan, records, interrupted)
        raise StoppedBetweenSamples(stopped, plot)
    if len(records) < len(seeds):
        raise KeyboardInterrupt  # Ctrl-C during a seed's last sample: no next seed
    if args.plot is not None:
        plot_running_accuracy(results, args.plot, title=title)
        partial_path(args.plot).unlink(missing_ok=True)
    _print_summary(args, plan, records)
    return 0


def _print_summary(args: argparse.Namespace, plan: RunPlan, records: list[dict[str, Any]],
                   interrupted: Optional[str] = None) -> None:
    """Print the run's heading (with ``interrupted``, where Ctrl-C stopped it)
    and the :func:`~torch_geometric_stream.cli.report.summary_table` of ``records``."""
    dataset, name, source = plan.stream
    length = (f"{records[0]['n_samples']} samples read as they came"
              if isinstance(dataset, CSVRowStream) else f"{dataset.num_samples} samples")
    print(f"{plan.model} on {name} ({source}), label ratio {args.label_ratio}"
          f"{query_words(args)}{label_delay_words(args.label_delay, learn_on_arrival(args))}"
          f", {length}"
          f"{'' if interrupted is None else f'; {interrupted}'}")
    print(summary_table(records))


def _run_seed_in_worker(args: argparse.Namespace, seed: int, data_sha256: Optional[str]
                        ) -> Optional[tuple[PrequentialResult, dict[str, Any]]]:
    """One seed of ``args`` on the worker's shared stream (its :func:`data_digest`
    ``data_sha256``, made once by the main process), as the main process runs
    it, stopped at the end of a sample once the main process's Ctrl-C sets the stop
    event; ``None`` where it was set before the seed started (the task of a
    :func:`~torch_geometric_stream.cli.seed_workers.run_in_workers` worker)."""
    shared, stop = worker_state()
    assert shared is not None and stop is not None  # set as the worker process started
    if stop.is_set():
        return None
    torch.set_num_threads(args.threads)
    with flush_denormal() if args.flush_denormal else nullcontext():
        plan = replace(_plan(args, shared.stream()), data_sha256=data_sha256)
        return _run_seed(args, plan, seed,
                         progress_every=LOG_PROGRESS_SECONDS,
                         interrupt=DeferredInterrupt(stop))


def _run_seed(args: argparse.Namespace, plan: RunPlan, seed: int, *,
              interrupt: DeferredInterrupt, progress_every: Optional[float] = None
              ) -> tuple[PrequentialResult, dict[str, Any]]:
    """Evaluate one seed of ``plan`` (from ``--resume`` if given): its result and
    record. Its progress: as
    :func:`~torch_geometric_stream.evaluation.progress.progress_interval` says, or a
    line every ``progress_every`` seconds if given (a worker's, whose bar would garble
    the others').

    The stream stops at the end of the sample after which ``interrupt`` is
    requested (the caller defers Ctrl-C: :func:`_run_seeds`; a worker's stop
    event); a run so stopped before its end saves its checkpoint there and its
    record has ``interrupted_at``, the stream position after its last sample."""
    dataset, _, source = plan.stream
    learner, mask, query, transform = _seed_run(args, plan, seed)
    run = _run_entries(args, plan, seed)
    identity = _checkpoint_identity(args, plan, run)
    start, initial = _resumed(args, seed, learner, transform, identity, dataset, run)
    stepper = CUDAGraphStep(learner) if plan.cuda_graph else learner
    checkpointer = _checkpointer(args, learner, transform, identity, dataset)
    # standard input may wait for a row without end: a stop must not wait for one
    rows = until_stopped(dataset, interrupt) if source == STDIN_SOURCE else dataset
    result = prequential(stepper, rows, label_mask=mask, transform=transform,
                         progress=not args.quiet, desc=f"seed {seed}",
                         progress_every=progress_every,
                         start=start, initial=initial,
                         flush_denormal=args.flush_denormal, history=args.history,
                         callback=checkpointer, stop=interrupt, window=args.eval_window,
                         label_delay=args.label_delay,
                         learn_on_arrival=learn_on_arrival(args) is not False,
                         label_query=query)
    if checkpointer is not None:
        checkpointer.finish()  # a streamed run's end, not known before, or where Ctrl-C stopped
    record = run_record(result, run=run, config=plan.config)
    done = result.start + record["n_samples"]
    if interrupt.requested and done != (plan.limit if isinstance(dataset, CSVRowStream)
                                        else dataset.num_samples):
        record["interrupted_at"] = done  # (a streamed run without --limit: its end not known)
    return result, record


def _run_entries(args: argparse.Namespace, plan: RunPlan, seed: int) -> dict[str, Any]:
    """The run entries of the record of one seed of ``plan`` (the configuration
    apart), with the versions of the code as the run starts."""
    dataset, name, source = plan.stream
    return {"dataset": name, "dataset_source": source,
            DATA_DIGEST: plan.data_sha256,
            "label_column": args.label_column,
            "class_names": dataset.class_names, "model": plan.model,
            "label_ratio": args.label_ratio, "label_mask": args.label_mask,
            **query_settings(args), "label_delay": args.label_delay,
            "learn_on_arrival": learn_on_arrival(args),
            "seed": seed, "limit": plan.limit,
            "synthetic_samples": _synthetic_length(args) if source == "synthetic"
            else None,
            "preset": args.preset,
            "threads": args.threads, "jobs": args.jobs,
            "flush_denormal": args.flush_denormal, "history": args.history,
            "eval_window": args.eval_window,
            "device": plan.device, "cuda_graph": plan.cuda_graph,
            **software_versions()}  # the code as the run starts


def _checkpoint_identity(args: argparse.Namespace, plan: RunPlan, run: dict[str, Any]
                         ) -> dict[str, Any]:
    """What a checkpoint of the seed whose record has the ``run`` entries keeps
    to identify it, and a ``--resume`` checkpoint must share with it (see
    :func:`_resume_identity`)."""
    return {**{key: run[key] for key in RESUME_KEYS if key != "limit" or not args.stream},
            **_stream_identity(args, plan.stream[0]),
            # a stream file's bytes identify it (_stream_file_identity)
            **({} if plan.data_sha256 is None or _on_stream_file(args)
               else {DATA_DIGEST: plan.data_sha256}),
            **{f"config.{key}": value for key, value in plan.config.items()}}


def _resumed(args: argparse.Namespace, seed: int, learner: Any, transform: StreamTransform,
             identity: dict[str, Any], dataset: StreamDataset | CSVRowStream,
             run: dict[str, Any]) -> tuple[int, Optional[dict[str, Any]]]:
    """``(start, initial)`` of ``prequential`` for one seed: ``(0, None)``, or with
    ``--resume``, the position and record of its checkpoint, loaded into ``learner``
    and ``transform`` once its ``identity`` is checked, and the position set as the
    ``run``'s ``resumed_from``; a :class:`UsageError` for a checkpoint past its start
    that holds no record."""
    if args.resume is None:
        return 0, None
    with user_input("--resume"):
        state = load_checkpoint(args.resume, learner, transform=transform,
                                expect=_resume_identity(args, identity),
                                assume=OLDER_CHECKPOINTS)
        if isinstance(dataset, CSVRowStream):  # its rows read again are checked as they are
            dataset.expect(state.position, state.extra[STREAM_DIGEST])
    if state.record is None and state.position > 0:  # saved by hand, not by run
        raise UsageError(f"--resume: checkpoint {args.resume} holds no record of its "
                         f"first {state.position} samples (saved with record=None), "
                         "so the run's outputs could not cover the whole stream; save "
                         "it with the run's record (save_checkpoint(..., record=...))")
    run["resumed_from"] = state.position
    if not args.quiet:
        print(f"seed {seed}: resumed from {args.resume} after sample {state.position:,}",
              file=sys.stderr)
    return state.position, state.record


def _resume_identity(args: argparse.Namespace, identity: dict[str, Any]
                     ) -> Callable[[Mapping[str, Any]], dict[str, Any]]:
    """The ``expect`` of a ``--resume`` checkpoint, a function of its ``extra``:
    ``identity``, without the file's name where the run and the checkpoint are
    both of a stream file (its bytes, or a streamed run's rows read, identify it:
    a renamed copy is the same stream), and without the entries of
    :data:`UNCHECKED_WHEN_ABSENT` that a checkpoint older than them lacks. A
    checkpoint of a run that read its file whole resumed with ``--stream``, or one
    of a ``--stream`` run resumed without, is refused as such: the entries either
    lacks would read as older."""
    def expect(extra: Mapping[str, Any]) -> dict[str, Any]:
        streamed, name = STREAM_DIGEST in extra, extra.get("dataset")
        if args.stream and not streamed:
            raise CheckpointError(
                f"checkpoint {args.resume} was made by a run that read {name} whole: drop "
                f"--stream and --classes to resume it, or start the streamed run afresh "
                f"(without --resume)")
        if streamed and not args.stream:
            raise CheckpointError(
                f"checkpoint {args.resume} was made by a --stream run of {name}: add --stream "
                f"--classes {','.join(map(str, extra.get('classes', [])))} to resume it")
        renamed = _on_stream_file(args) and isinstance(name, str) and is_stream_file(name)
        return {key: value for key, value in identity.items()
                if not (key == "dataset" and renamed)
                and (key in extra or key not in UNCHECKED_WHEN_ABSENT)}
    return expect


def _on_stream_file(args: argparse.Namespace) -> bool:
    """Whether ``--dataset`` names a stream file (read whole or as it comes)."""
    return args.dataset is not None and is_stream_file(args.dataset)


def _stream_identity(args: argparse.Namespace, dataset: StreamDataset | CSVRowStream
                     ) -> dict[str, Any]:
    """What a ``--resume`` checkpoint must share with the run about its stream,
    besides :data:`RESUME_KEYS`: the stream's length and
    :func:`_stream_file_identity`; for a stream read as it comes (``--stream``),
    its classes and ``--label-column``, and not its length, unknown, nor its
    ``--limit``: the rows read before are checked by the digest of their text
    (:data:`STREAM_DIGEST`) as the resumed run reads them again, and a run
    resumed with another limit is the run with that limit."""
    if isinstance(dataset, CSVRowStream):
        return {"classes": dataset.class_names, "label_column": args.label_column}
    return {"num_samples": dataset.num_samples, **_stream_file_identity(args, dataset)}


def _stream_file_identity(args: argparse.Namespace, dataset: StreamDataset
                          ) -> dict[str, Any]:
    """What a ``--resume`` checkpoint must share with a run on a stream file
    (``{}`` for another stream): the digest of the file's bytes
    (:func:`~torch_geometric_stream.datasets.stream_file_digest`), so that a file
    edited, or replaced by another of its name, is refused, and ``--label-column``;
    with ``--limit``, the digest of the part of a CSV read for it: an edit further
    on, which the run never reads, is no other stream; and its class names in
    class id order, which a package that orders labels otherwise (numbers before
    words since session 72) gives the same bytes (a checkpoint older than them is
    refused). Read only by checkpoints: a run without one does not hash the file."""
    if not _on_stream_file(args) or (args.checkpoint is None and args.resume is None):
        return {}
    # the rows read with their label column (a word in a feature's place would be
    # refused), whose name the identity keeps apart, as it did before the digest read it
    digest = stream_file_digest(args.dataset.strip(), args.label_column, limit=args.limit,
                                name_label_column=False)
    return {"dataset_sha256": digest, "label_column": args.label_column,
            "classes": dataset.class_names}


def _check_checkpoint_flags(args: argparse.Namespace, seeds: list[int]) -> None:
    """``--checkpoint-every`` needs ``--checkpoint``; checkpoints are for one seed."""
    if args.checkpoint_every is not None and args.checkpoint is None:
        raise UsageError("--checkpoint-every needs --checkpoint FILE")
    if len(seeds) > 1 and (args.checkpoint is not None or args.resume is not None):
        raise UsageError(f"--checkpoint and --resume take a single seed, got {len(seeds)}")


def _check_stream_flags(args: argparse.Namespace, seeds: list[int]) -> None:
    """What ``--stream`` (a CSV read row by row as the run goes) needs, and what
    it cannot do: what needs the whole stream (its classes sorted, the paper's
    label masks), or read it again (checkpoints on standard input: a resume
    reads the rows done again, to check them)."""
    if args.classes is not None and not args.stream:
        raise UsageError("--classes applies to --stream (a file read whole takes its classes "
                         "from its labels); drop it or add --stream")
    stdin = args.dataset is not None and args.dataset.strip() == STDIN
    if not args.stream:
        if stdin:
            raise UsageError(f"--dataset {STDIN} (standard input) is read as it comes: add "
                             f"--stream --classes A,B,...")
        return
    if args.dataset is not None and args.dataset.strip().lower().endswith(
            (".arff", ".arff.gz")):
        raise UsageError("--stream reads a CSV file row by row; an ARFF file is read whole: "
                         "drop --stream and --classes (its header declares the classes)")
    if args.dataset is None or not (stdin or args.dataset.strip().lower().endswith(
            (".csv", ".csv.gz"))):
        raise UsageError(f"--stream reads a CSV file (.csv, .csv.gz) or standard input "
                         f"({STDIN}) given as --dataset, got --dataset {args.dataset}")
    if args.classes is None:
        raise UsageError("--stream needs --classes A,B,... (the class names, class ids in "
                         "that order): a stream read as it comes cannot sort all its labels")
    if args.label_mask not in POSITION_MASKS + LABEL_QUERIES:
        raise UsageError(f"--label-mask {args.label_mask} needs the whole stream (the first "
                         f"sample of each class, floor(R*T) labels); with --stream give "
                         f"--label-mask {' or '.join(POSITION_MASKS)}, or a label query "
                         f"({', '.join(LABEL_QUERIES)})")
    for flag, value in (("--checkpoint", args.checkpoint), ("--resume", args.resume)):
        if value is not None and stdin:
            raise UsageError(f"{flag} is not available on standard input: a resume reads "
                             f"the stream again from its start, to check and skip the rows "
                             f"read before, and standard input is read once; stream from a "
                             f"file (--dataset FILE.csv --stream) or drop {flag}")
    if len(seeds) > 1 and (stdin or args.jobs > 1):
        why, how = (("standard input is read once", "give one --seed") if stdin else
                    ("each seed reads the file again", "drop --jobs"))
        raise UsageError(f"--stream runs one seed at a time ({why}): {how}")


def _checkpointer(args: argparse.Namespace, learner: Any, transform: StreamTransform,
                  identity: dict[str, Any], dataset: StreamDataset | CSVRowStream
                  ) -> Optional[CheckpointCallback]:
    """The ``prequential`` callback writing ``--checkpoint`` every
    ``--checkpoint-every`` stream positions and after the last sample (of a
    streamed run, whose end is not known before: at its ``finish()``), with
    ``identity`` and, for a streamed run, the digest of the text read
    (:data:`STREAM_DIGEST`)."""
    if args.checkpoint is None:
        return None
    if isinstance(dataset, CSVRowStream):
        return checkpoint_callback(args.checkpoint, learner, every=args.checkpoint_every,
                                   end=args.limit, transform=transform,
                                   extra=lambda: {**identity, STREAM_DIGEST: dataset.digest()})
    end = dataset.num_samples
    return checkpoint_callback(args.checkpoint, learner, every=args.checkpoint_every or end,
                               end=end, transform=transform, extra=identity)


def _write_outputs(args: argparse.Namespace, result: PrequentialResult,
                   record: dict[str, Any], seed: int, several: bool) -> tuple[Path, ...]:
    """The ``--output`` JSON record, ``--csv`` per-sample file and ``--windows-csv``
    per-window file of one seed (those asked for), which this returns: of a seed
    that Ctrl-C stopped (its ``record`` with ``interrupted_at``), to their
    :func:`~torch_geometric_stream.cli.report.partial_path`; of a finished seed, to theirs,
    removing the partial files an interrupted run left."""
    interrupted = "interrupted_at" in record
    files = []
    for path, write in ((seed_path(args.output, seed, several),
                         lambda target: write_json(record, target)),
                        (seed_path(args.csv, seed, several), result.save_csv),
                        (seed_path(args.windows_csv, seed, several), result.save_windows_csv)):
        if path is None:
            continue
        files.append(write(partial_path(path) if interrupted else path))
        if not interrupted:
            partial_path(path).unlink(missing_ok=True)
    return tuple(files)

