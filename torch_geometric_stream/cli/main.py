"""``python -m torch_geometric_stream``: argument parser and entry point."""
from __future__ import annotations

import argparse
import importlib
import inspect
import os
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, TextIO

from torch_geometric_stream.baselines import BASELINES
from torch_geometric_stream.cli.arguments import (MAX_THREADS, CommandParser, Parser,
                                                  add_root_option, class_names,
                                                  coefficient_value, positive_int, tau_value,
                                                  thread_count, window_size, window_value)
from torch_geometric_stream.cli.configs import (DEFAULT_CONFIG, FEW_LABEL_LIGHT_DEFAULTS,
                                                FEW_LABEL_SLOTS_PER_CLASS,
                                                NORMALIZATION_CHOICES, PRESETS)
from torch_geometric_stream.cli.compare_command import add_compare_parser
from torch_geometric_stream.cli.datasets_command import datasets_command
from torch_geometric_stream.cli.errors import INTERRUPTED_EXIT_CODE, UsageError, one_line
from torch_geometric_stream.cli.models import MODEL_NAMES
from torch_geometric_stream.cli.report import software_versions
from torch_geometric_stream.cli.tune import add_tune_parser
from torch_geometric_stream.cli.label_protocol import add_label_protocol_options
from torch_geometric_stream.cli.run import (BUNDLED_LIMIT, BUNDLED_MODEL, DEFAULT_MODEL,
                                            HISTORY_HELP, SYNTHETIC_DRIFT, SYNTHETIC_SAMPLES,
                                            run_command)
from torch_geometric_stream.datasets import DATASETS, DatasetError
from torch_geometric_stream.datasets.synthetic import DRIFTS as SYNTHETIC_DRIFTS
from torch_geometric_stream.evaluation import FEATURE_TRANSFORMS, HISTORIES, SCALINGS
from torch_geometric_stream.models import (BASELINE_HYPERPARAMETERS, CLASS_PRIORS, LIGHT_MEMORIES,
                                           MERGE_SIMILARITIES, PROPAGATIONS, SLEDGE_VARIANTS,
                                           SOURCE_MERGES)
from torch_geometric_stream.graph import STRUCTURE_LOSS_FORMS
from torch_geometric_stream.nn import BIAS_POSITIONS

__all__ = ["build_parser", "dispatch", "main"]


def _published(key: str) -> str:
    """Each baseline's constructor default of hyperparameter entry ``key``, e.g.
    ``"2e-06 for ressl, 0.0001 for hdssl"``; a default of ``None`` reads ``"off"``."""
    defaults = {name: inspect.signature(BASELINES[name]).parameters[arguments[key]].default
                for name, arguments in BASELINE_HYPERPARAMETERS.items() if key in arguments}
    return ", ".join(f"{'off' if value is None else format(value, 'g')} for {name}"
                     for name, value in defaults.items())


#: Where the package's few-label defaults apply (:data:`FEW_LABEL_SLOTS_PER_CLASS`,
#: :data:`FEW_LABEL_LIGHT_DEFAULTS`), as help text.
_FEW_LABELS = "below 0.5 % labels without per-dataset settings"


def _as_flags(entries: Mapping[str, Any]) -> str:
    """Configuration entries as the ``run`` options that set them, e.g.
    ``{"num_layers": 1, "supervise_graph": False}`` ->
    ``"--num-layers 1 --no-supervise-graph"``."""
    flags = []
    for key, value in entries.items():
        flag = "--" + key.replace("_", "-")
        flags.append((flag if value else "--no-" + flag[2:]) if isinstance(value, bool)
                     else f"{flag} {value}")
    return " ".join(flags)


def _few_label_slots() -> str:
    """The labeled memory of the package defaults below 0.5 % labels, as help text,
    from :data:`FEW_LABEL_SLOTS_PER_CLASS`: e.g. ``"sledge and sledge-light keep 10
    labeled slots per class (at most 100 in all)"``."""
    models_by_slots: dict[int, list[str]] = {}
    for model, slots in FEW_LABEL_SLOTS_PER_CLASS.items():
        models_by_slots.setdefault(slots, []).append(model)
    return ", ".join(f"{' and '.join(models)} keep{'s' if len(models) == 1 else ''} {slots} "
                     f"labeled slots per class (at most 100 in all)"
                     for slots, models in models_by_slots.items())


def _few_label_defaults() -> str:
    """What the package defaults change below 0.5 % labels, as help text: the
    labeled memory (:func:`_few_label_slots`) and :data:`FEW_LABEL_LIGHT_DEFAULTS`
    as options (``"..., sledge-light runs --num-layers 1 ..."``)."""
    return f"{_few_label_slots()}, sledge-light runs {_as_flags(FEW_LABEL_LIGHT_DEFAULTS)}"


def _package_default(key: str, shown: Optional[str] = None) -> str:
    """``"package default: V"`` of configuration entry ``key`` (``shown``, else its
    value), with SLeDGe-L's few-label default where :data:`FEW_LABEL_LIGHT_DEFAULTS`
    sets one; for an argparse help (``%`` escaped)."""
    def text(value: Any) -> str:
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, list):
            return " ".join(f"{item:g}" for item in value)
        return str(value)

    default = f"package default: {shown or text(DEFAULT_CONFIG[key])}"
    if key in FEW_LABEL_LIGHT_DEFAULTS:
        default += f"; sledge-light {_FEW_LABELS}: {text(FEW_LABEL_LIGHT_DEFAULTS[key])}"
    return default.replace("%", "%%")


def _numbered(items: Sequence[str], width: int = 88) -> str:
    """``items`` as a numbered list of plain text, each wrapped to ``width``."""
    return "\n".join(textwrap.fill(item, width, initial_indent=f"  {number}. ",
                                    subsequent_indent="     ", break_on_hyphens=False)
                      for number, item in enumerate(items, start=1))


_PRECEDENCE = _numbered([
    f'package defaults: each option\'s "package default"; {_FEW_LABELS}, '
    f"{_few_label_defaults()};",
    f"the paper preset's per-dataset settings (every model but {', '.join(BASELINES)} on a "
    f"paper dataset; not with --preset package): the paper's structure (layers, k, tau), "
    f"PyG's symmetric normalization and the settings measured per dataset, model and label "
    f'ratio (README, "Presets"; cli/configs.py, MEASURED_*);',
    "--config FILE.json;",
    "flags."])

_RUN_DESCRIPTION = f"""\
Prequential (test-then-train) evaluation of a stream learner.

Default job (no --dataset): model {BUNDLED_MODEL} on the first {BUNDLED_LIMIT} rows of the
Online Shoppers Purchasing Intention stream bundled with the package (UCI, CC BY 4.0),
label ratio 0.01, seed 0, 1 thread: about 20 ms of CPU time per sample, under a minute
on one CPU core (measured: 41 s of CPU time for the whole job, imports included).

Configuration precedence (lowest first):
{_PRECEDENCE}
--show-config prints the configuration a run resolves, each entry with its source; the
record of --output holds it too."""


def _add_run_parser(commands: argparse._SubParsersAction) -> None:
    """The ``run`` command, its options in groups, each group declared by a helper."""
    run = commands.add_parser("run", help="evaluate a model on a stream",
                              description=_RUN_DESCRIPTION,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_data_options(run.add_argument_group("data"))
    _add_protocol_options(run.add_argument_group("protocol"))
    hyper = run.add_argument_group(
        "hyperparameters (override --config and the paper settings; an option the model never "
        "reads, such as --k for memory, is an error)")
    _add_hyperparameters(hyper)
    _add_approximations(run.add_argument_group(
        "approximations (off by default; full SLeDGe; see benchmarks/RESULTS.md for their cost)"))
    _add_baseline_hyperparameters(run.add_argument_group(
        "baseline hyperparameters (default: each baseline's own, as each option says)"))
    # the hyperparameters' last option, declared after the baselines' as it always was: the
    # usage line lists the options in the order they were declared
    hyper.add_argument("--config", type=Path, metavar="FILE.json",
                       help="JSON object of configuration entries (keys as the flags, "
                            "with underscores)")
    _add_output_options(run.add_argument_group("output"))
    _add_checkpoint_options(run.add_argument_group("checkpoint and resume (single seed)"))
    # a run of tune's grid: tune warns once of what holds for all its runs
    run.add_argument("--grid-run", action="store_true", help=argparse.SUPPRESS)
    run.set_defaults(handler=run_command)


def _add_data_options(data: argparse._ArgumentGroup) -> None:
    """The ``data`` group of ``run``: the stream, its scaling and the synthetic stream."""
    _add_source_options(data)
    _add_scaling_options(data)
    data.add_argument("--synthetic-samples", type=positive_int, metavar="N",
                      help=f"length of the synthetic stream (default: {SYNTHETIC_SAMPLES})")
    data.add_argument("--synthetic-drift", choices=SYNTHETIC_DRIFTS,
                      help=f"drift of --dataset synthetic (default: {SYNTHETIC_DRIFT})")


def _add_source_options(data: argparse._ArgumentGroup) -> None:
    """Where the stream comes from, how it is read and how much of it."""
    data.add_argument("--dataset", metavar="NAME",
                      help=f"one of {', '.join(DATASETS)} (case-insensitive), 'synthetic' "
                           f"(drift from --synthetic-drift), 'synthetic-<drift>', or a file "
                           f"of your own stream: FILE.csv (rows in stream order, the label "
                           f"in the last column or --label-column, a header row allowed; "
                           f"also .csv.gz), FILE.arff (Weka's, MOA's: the label the last "
                           f"attribute or --label-column, nominal features one-hot; also "
                           f".arff.gz) or FILE.npz (arrays x and y), or - for a CSV on "
                           f"standard input (with --stream) (default: the "
                           f"bundled Shopper stream, which Shopper also uses when no data "
                           f"folder is found)")
    data.add_argument("--stream", action="store_true",
                      help="read a CSV --dataset (or - for standard input) row by row as the "
                           "run goes, never whole: a file larger than memory, or a stream "
                           "that does not end (tail -f sensors.csv | ... --dataset -). Needs "
                           "--classes and --label-mask bernoulli or capymoa, refuses "
                           "--scaling global and --jobs (and --checkpoint, --resume on "
                           "standard input); --history defaults to bounded; results are "
                           "written when the stream ends (or at --limit)")
    data.add_argument("--classes", type=class_names, metavar="A,B,...",
                      help="with --stream: the class names (label values), class ids in "
                           "this order; a row with another label is an error naming its "
                           "line (numbers match as numbers: 1.0 is class 1)")
    data.add_argument("--label-column", metavar="NAME",
                      help="a CSV --dataset's label column (an ARFF's label attribute): "
                           "its header name or its index "
                           "(negative from the end; an index that is also another column's "
                           "header name is refused, the error says how to pick each) "
                           "(default: the last column)")
    add_root_option(data)
    data.add_argument("--limit", type=positive_int, metavar="N",
                      help=f"only the first N samples (default: all; {BUNDLED_LIMIT} for the "
                           f"bundled default); a CSV or ARFF --dataset is read no further, "
                           f"its classes those of these rows (an ARFF's nominal label: all "
                           f"it declares)")
    data.add_argument("--strict", action="store_true",
                      help="a paper dataset read from --root: error instead of a warning "
                           "when part of it is missing (see datasets); other streams refuse it")


def _add_scaling_options(data: argparse._ArgumentGroup) -> None:
    """The feature transform and the scaling of every feature, with its options."""
    data.add_argument("--scaling", choices=SCALINGS,
                      help="min-max scaling to [-1, 1] (see --feature-range): auto (the "
                           "known value range of image datasets, else online-rescale for "
                           "the SLeDGe family and online for the others; the default, "
                           "except under the paper preset on GSAD and Shopper, which takes "
                           "robust-rescale, robust for base), online (running range), "
                           "online-rescale (running range inside a SLeDGe-family learner, "
                           "which re-scales its memory whenever the range grows), robust "
                           "(the running 1-99 %% quantile range, values outside clipped: "
                           "outliers do not stretch it), robust-rescale (that range inside "
                           "a SLeDGe-family learner, as online-rescale), global "
                           "(whole dataset, as the authors' tabular runs), range (the known "
                           "value range) or none; always followed by L2 normalization")
    _add_config_flags(data, (
        ("--robust-quantile", float, "lower quantile q of the range of robust and "
                                     "robust-rescale (q to 1 - q), in (0, 0.5)"),
        ("--robust-tolerance", float, "drift of a quantile, as a share of the range, that "
                                      "moves the range of robust and robust-rescale"),
        ("--robust-reservoir", positive_int, "rows robust and robust-rescale keep (a uniform "
                                             "sample) for their quantiles"),
        ("--robust-window", window_value, "forget the distant past: once the reservoir is "
                                          "full, each row enters it with probability "
                                          "reservoir / N, so its rows are about N rows old "
                                          "(N >= --robust-reservoir; none: no window, the "
                                          "default, a uniform sample of the whole stream)")))
    data.add_argument("--robust-clip", action=argparse.BooleanOptionalAction,
                      help="whether robust and robust-rescale clip the values outside their "
                           "range to --feature-range (" + _package_default("robust_clip")
                           + "); with --no-robust-clip such "
                           "values keep their distance from the range, scaled as the values "
                           "inside (measured level with clipping; see benchmarks/RESULTS.md)")
    data.add_argument("--feature-range", type=float, nargs=2, metavar=("LOW", "HIGH"),
                      help="the interval every scaling but none maps a feature's range to, "
                           "e.g. --feature-range 0 1 (" + _package_default("feature_range")
                           + ", as the authors' code; the placement of the scaled features "
                           "is measured in benchmarks/RESULTS.md)")
    data.add_argument("--feature-transform", choices=FEATURE_TRANSFORMS,
                      help="applied to every feature before the scaling: none, "
                           "signed-log1p (sign(x) log(1 + |x|), for heavy-tailed features such "
                           "as counts, durations, amounts) or auto (none for streams with a "
                           "known value range, i.e. images, else signed-log1p; the default of "
                           "the SLeDGe family, the baselines default to none)")


def _add_protocol_options(protocol: argparse._ArgumentGroup) -> None:
    """The ``protocol`` group of ``run``: the model, the label protocol, the seeds,
    and where and how the run computes."""
    protocol.add_argument("--model", choices=MODEL_NAMES,
                          help=f"default: {DEFAULT_MODEL} ({BUNDLED_MODEL} for the default job)")
    add_label_protocol_options(protocol)
    protocol.add_argument("--seed", "--seeds", action="append", metavar="S",
                          help="repeatable, or a comma list, e.g. 0,2000,4000 (default: 0; "
                               "--seeds as in tune)")
    _add_device_options(protocol)


def _add_device_options(protocol: argparse._ArgumentGroup) -> None:
    """The device, CUDA graphs, threads, parallel seeds and denormal floats."""
    protocol.add_argument("--device", default="auto",
                          help=f"auto, cpu, cuda, cuda:i or mps (default: auto = the GPU for "
                               f"{', '.join(SLEDGE_VARIANTS)} when there is one, else the "
                               f"CPU)")
    protocol.add_argument("--cuda-graph", action=argparse.BooleanOptionalAction,
                          help="SLeDGe on a CUDA device: replay the step from CUDA graphs "
                               "(same results up to float rounding, 6-8x faster; default: "
                               "on when the run is on CUDA)")
    protocol.add_argument("--threads", type=thread_count, default=1, metavar="N",
                          help=f"torch CPU threads, at most {MAX_THREADS} (default: "
                               f"%(default)s)")
    protocol.add_argument("--jobs", type=positive_int, default=1, metavar="N",
                          help="with several seeds, run up to N at once, each in its own "
                               "process with --threads threads; the results equal one "
                               "job's, only the timings change (default: %(default)s)")
    protocol.add_argument("--flush-denormal", action=argparse.BooleanOptionalAction,
                          default=True,
                          help="read denormal floats as zero on the CPU during the run: with "
                               "--weight-decay > 0, weights decayed into the denormal range "
                               "otherwise slow the step about 15-fold (default: on)")


def _add_hyperparameters(hyper: argparse._ArgumentGroup) -> None:
    """SLeDGe's hyperparameters, all of the group's options but ``--config``."""
    _add_core_hyperparameters(hyper)
    _add_merge_hyperparameters(hyper)
    _add_graph_hyperparameters(hyper)
    _add_prediction_hyperparameters(hyper)


def _add_core_hyperparameters(hyper: argparse._ArgumentGroup) -> None:
    """The preset, the sizes, the optimizer, the regularizer weight and ``--tau``."""
    hyper.add_argument("--preset", choices=PRESETS, default="paper",
                       help="paper (default): on its datasets, the paper's per-dataset "
                            "structural settings (layers, k, tau) and the settings measured "
                            "per dataset (see the precedence above); package: the package "
                            "defaults on every stream, no per-dataset settings (below 0.5 %% "
                            "labels: " + _few_label_defaults().replace("%", "%%") + ")")
    _add_config_flags(hyper, (
        ("--k", int, "neighbours per node besides itself (0: none; the GCN acts as an MLP)"),
        ("--lr", float, "Adam learning rate"),
        ("--weight-decay", float, "Adam weight decay"),
        ("--lam", float, "structure regularizer weight"),
        ("--embedding-layers", int, "layers of the embedding MLP f_E"),
        ("--num-layers", int, "GCN layers of the classifier f_B"),
        ("--hidden-channels", int, "hidden width"),
        ("--labeled-size", int,
         "labeled memory L (default: the paper's rule, 100 from 0.5 %% labels on, else "
         "max(c, 10), at most M - 1; "
         + f"{_FEW_LABELS}: {_few_label_slots()}".replace("%", "%%")
         + "; sledge-light --light-memory per-class: one per class)"),
        ("--unlabeled-size", int, "unlabeled memory U (default: memory size - L)"),
        ("--memory-size", int, "total memory M (also the baselines' memory)")))
    hyper.add_argument("--tau", type=tau_value, metavar="X",
                       help="temporal decay of the loss weights, a number or 'inf' ("
                            + _package_default("tau", "inf, uniform weights") + ")")


def _add_merge_hyperparameters(hyper: argparse._ArgumentGroup) -> None:
    """How the memory merges a sample into a slot."""
    for flag, text in (("--alpha", "weight of a new labeled sample in its merge"),
                       ("--beta", "weight of the old prototype in an unlabeled merge")):
        hyper.add_argument(flag, type=coefficient_value, metavar="X",
                           help=f"{text}: 'adaptive' (default, the paper's rule) or a "
                                f"fixed number in [0, 1]")
    hyper.add_argument("--count-offset", type=int, choices=(0, 1),
                       help="weight of the first merge into a memory slot: 1 (default, the "
                            "authors' code: 0.5 sim) or 0 (the paper's text: 0)")
    hyper.add_argument("--merge-similarity", choices=MERGE_SIMILARITIES,
                       help="what the memory's merge search compares: 'embedding' (default, "
                            "the paper: cosine of the learned embeddings f_E) or 'raw' (cosine "
                            "of the input features, as the +M and +Static ablations do)")
    hyper.add_argument("--source-merge", choices=SOURCE_MERGES,
                       help="how a merge mixes the unscaled rows that the memory keeps under "
                            "--scaling online-rescale or robust-rescale: 'raw' (default: "
                            "with the merge's weights as they are, which mixes the scaled rows "
                            "before their L2 normalization: not the paper's rule) or 'unit' "
                            "(weights divided by the scaled rows' norms: the paper's merge of "
                            "unit rows at the current range, as with the rows scaled outside); "
                            "the other scalings do not read it")


def _add_graph_hyperparameters(hyper: argparse._ArgumentGroup) -> None:
    """How the learned graph is trained, normalized, regularized and propagated."""
    hyper.add_argument("--supervise-graph", action=argparse.BooleanOptionalAction,
                       help="whether the classification loss trains the graph learner f_E "
                            "through the edge weights (yes: the paper); with "
                            "--no-supervise-graph only the structure regularizer trains it ("
                            + _package_default("supervise_graph") + ")")
    hyper.add_argument("--normalization", choices=NORMALIZATION_CHOICES,
                       help="the learned graph's normalization: 'symmetric' (PyG's "
                            "D^-1/2 (A + I) D^-1/2 with a kept self-similarity as the "
                            "self-loop; the paper preset's default), 'symmetric-add' (the "
                            "paper's formula as it reads: I added to the kept "
                            "self-similarity, self weight 2; the package preset's and "
                            "outside the paper's datasets) or 'mean' (the authors' code: "
                            "every kept entry over k + 1)")
    hyper.add_argument("--bias-position", choices=BIAS_POSITIONS,
                       help="where each GCN layer adds its bias: 'after' propagation "
                            "(default, PyG's GCNConv) or 'before' it (the paper's text and "
                            "the authors' code: a biased linear map, then A_hat)")
    hyper.add_argument("--regularizer", choices=STRUCTURE_LOSS_FORMS,
                       help="form of the structure regularizer: 'plain' (default, the authors' "
                            "code: mean squared difference of the cosine-similarity matrices) "
                            "or 'frobenius' (the paper: both matrices divided by their "
                            "Frobenius norm first)")
    hyper.add_argument("--propagation", choices=PROPAGATIONS,
                       help="how the top-k graph is propagated: 'sparse' (default: CSR "
                            "sparse-matrix products over the rows a prediction or loss "
                            "needs), 'message_passing' (the same subgraph through GCNConv's "
                            "propagate) or 'dense' (dense (N, N) adjacency products over "
                            "every row, for checks and benchmarks); the same results up to "
                            "rounding, which a long stream can amplify")


def _add_prediction_hyperparameters(hyper: argparse._ArgumentGroup) -> None:
    """The class prior of the predictions and sledge-light's labeled memory."""
    hyper.add_argument("--class-prior", choices=CLASS_PRIORS,
                       help="class prior of the predictions: 'memory' (the paper: the "
                            "balanced labeled memory's) or 'stream' (the labeled stream's "
                            "class frequencies, by logit adjustment) ("
                            + _package_default("class_prior") + ")")
    hyper.add_argument("--light-memory", choices=LIGHT_MEMORIES,
                       help="sledge-light's labeled memory: 'full' (default; the authors' "
                            "light script: the labeled memory of the full model, every slot a "
                            "class query) or 'per-class' (the paper: one slot per class)")


def _add_approximations(approximations: argparse._ArgumentGroup) -> None:
    """The approximations of full SLeDGe (off by default)."""
    approximations.add_argument("--reselect-every", type=positive_int, metavar="R",
                                help="search the memory's top-k neighbours anew every R steps, "
                                     "re-weighting the kept ones in between (default: 1, exact)")
    approximations.add_argument("--search-dtype", choices=("bfloat16",),
                                help="choose neighbours with similarities in this precision; "
                                     "edge weights stay exact (default: the model's dtype)")


def _add_baseline_hyperparameters(baselines: argparse._ArgumentGroup) -> None:
    """The baselines' hyperparameters, each help with each baseline's default."""
    baselines.add_argument("--sigma", type=float, metavar="X",
                           help="tlp: Gaussian bandwidth of the edge weights (default: the "
                                "median pairwise distance of the first window)")
    baselines.add_argument("--knn", type=positive_int, metavar="N",
                           help="tlp: each arriving point joins only its N nearest window "
                                "points (default: all of them)")
    for flag, kind, text in (
            ("--decay", float, "ressl, hdssl: decay rate of the micro-cluster weights; "
                               "ressl's compounds (each step multiplies a weight by "
                               "2^(-X * steps since its update), as the official code), "
                               "hdssl's is plain exponential (2^(-X) a step)"),
            ("--prune-threshold", float,
             "ressl, hdssl: weight below which a micro-cluster is pruned"),
            ("--window", positive_int, "ressl: labelled samples in the voters' accuracy window"),
            ("--radius-k", positive_int,
             "hdssl: neighbour count of the radius estimate; ressl: give a new cluster "
             "whose inherited radius is 0 that estimate"),
            ("--chunk-size", positive_int,
             "hdssl: 1 learns per sample; N > 1 clusters every N samples by synchronization")):
        baselines.add_argument(flag, type=kind, metavar="X" if kind is float else "N",
                               help=f"{text} (default: {_published(flag[2:].replace('-', '_'))})")


def _add_output_options(output: argparse._ArgumentGroup) -> None:
    """What the run prints and writes: records, rows, windows, history, plot, progress."""
    output.add_argument("--show-config", action="store_true",
                        help="print the run's configuration, each entry with where its value "
                             "comes from, and exit without running (the other options are "
                             "checked as the run checks them; no file is written)")
    output.add_argument("--output", type=Path, metavar="FILE.json",
                        help="results and full configuration (several seeds: "
                             "FILE_seed<S>.json each); a run that Ctrl-C stops writes "
                             "its results so far to FILE.json.partial instead, which a "
                             "finished run to FILE.json removes")
    output.add_argument("--csv", type=Path, metavar="FILE.csv",
                        help="one row per sample (several seeds: FILE_seed<S>.csv each; "
                             "needs --history full); a run that Ctrl-C stops writes its "
                             "rows so far to FILE.csv.partial instead, which a finished "
                             "run to FILE.csv removes")
    output.add_argument("--eval-window", type=window_size, metavar="N",
                        help="also the accuracy, balanced accuracy, kappa and labels of each "
                             "consecutive window of N samples (the last one shorter where N "
                             "does not divide the stream), in the record's windows entry and "
                             "as steps over the --plot curve: they show a drift and the "
                             "recovery after it, which the running accuracy averages away "
                             "(either --history: 32 bytes kept per window, which under "
                             "--history bounded grow with the stream; a checkpoint resumes "
                             "only with its own N)")
    output.add_argument("--windows-csv", type=Path, metavar="FILE.csv",
                        help="one row per --eval-window window (several seeds: "
                             "FILE_seed<S>.csv each); a run that Ctrl-C stops writes its "
                             "windows so far to FILE.csv.partial instead, which a finished "
                             "run to FILE.csv removes")
    output.add_argument("--history", choices=HISTORIES,
                        help=HISTORY_HELP + " (default: full; bounded with --stream)")
    output.add_argument("--plot", type=Path, metavar="FILE.png",
                        help="running accuracy over the stream, one curve per seed, in the "
                             "format the suffix names (png, pdf, svg, ...; needs matplotlib); "
                             "a run that Ctrl-C stops plots the samples done to "
                             "FILE.png.partial instead, which a finished run to FILE.png "
                             "removes")
    output.add_argument("--quiet", action="store_true",
                        help="no progress (a bar on a terminal; where stderr is a file or a "
                             "pipe, a line every minute: samples done, accuracy, ms per "
                             "sample, time left)")


def _add_checkpoint_options(checkpoint: argparse._ArgumentGroup) -> None:
    """Checkpoints of a single-seed run and its resumption."""
    checkpoint.add_argument("--checkpoint", type=Path, metavar="FILE",
                            help="save learner, transform, RNG states and the run so far to "
                                 "FILE (atomically) after the last sample (with --stream, as "
                                 "the stream ends), after the sample where Ctrl-C stops the "
                                 "run and, with --checkpoint-every, every N samples")
    checkpoint.add_argument("--checkpoint-every", type=positive_int, metavar="N",
                            help="checkpoint every N stream positions")
    checkpoint.add_argument("--resume", type=Path, metavar="FILE",
                            help="continue the run stored in FILE (same dataset, model, seed "
                                 "and configuration; trusted files only, they are pickles); "
                                 "the outputs cover the whole stream. With --stream, the file "
                                 "is read again from its start, the rows done checked against "
                                 "the digest of their text and skipped; --limit may differ")


def _add_config_flags(group: argparse._ArgumentGroup,
                      flags: Sequence[tuple[str, Callable[[str], Any], str]]) -> None:
    """One option per ``(flag, type, help)`` that sets the configuration entry
    of its name (``--k`` -> ``k``), its help ending with the package default
    (:func:`_package_default`, where it is a value: ``None`` entries are resolved per
    run, as ``help`` says)."""
    for flag, kind, text in flags:
        key = flag[2:].replace("-", "_")
        group.add_argument(flag, type=kind, metavar="X" if kind is float else "N",
                           help=text if DEFAULT_CONFIG[key] is None
                           else f"{text} ({_package_default(key)})")


def _importable(module: str) -> bool:
    """Whether ``module`` imports, as PyTorch Geometric decides ``WITH_TORCH_SCATTER``
    and ``WITH_TORCH_SPARSE`` (without importing PyTorch Geometric, which takes seconds)."""
    try:
        importlib.import_module(module)
    except Exception:  # not installed, or installed but broken: PyG does not use it either
        return False
    return True


def version_line() -> str:
    """What ``--version`` prints: this package's version and the versions of the
    software a run depends on, with the optional accelerators found (what a bug
    report needs), e.g. ``torch_geometric_stream 0.1.0 (torch 2.13.0+cpu, ...)``."""
    versions = software_versions()
    accelerators = ", ".join(
        f"{name} {'found' if _importable(name.replace('-', '_')) else 'not installed'}"
        for name in ("torch-scatter", "torch-sparse"))
    commit = (f", git {versions['git_commit'][:12]}{' with changes' if versions['git_dirty'] else ''}"
              if versions["git_commit"] else "")
    return (f"torch_geometric_stream {versions['package_version']}{commit} (torch "
            f"{versions['torch_version']}, torch-geometric {versions['torch_geometric_version']}, "
            f"numpy {versions['numpy_version']}; {accelerators})")


class _VersionAction(argparse.Action):
    """``--version``: print :func:`version_line` and exit 0 (built when asked, so
    that building the parser runs no ``git``)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 help: Optional[str] = None) -> None:
        super().__init__(option_strings, dest=dest, nargs=0, default=argparse.SUPPRESS,
                         help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: Optional[str] = None) -> None:
        print(version_line())
        parser.exit()


def build_parser() -> Parser:
    """The parser of ``python -m torch_geometric_stream``."""
    parser = Parser(prog="torch_geometric_stream",
                    description="Semi-supervised learning on data streams (SLeDGe).")
    parser.add_argument("--version", action=_VersionAction,
                        help="print the versions of this package, torch, PyTorch Geometric "
                             "and NumPy, and which optional accelerators are installed")
    commands = parser.add_subparsers(dest="command", metavar="{run,tune,compare,datasets}",
                                     required=True, parser_class=CommandParser)
    _add_run_parser(commands)
    add_tune_parser(commands)
    add_compare_parser(commands)
    datasets = commands.add_parser(
        "datasets", help="list the paper's datasets and which are found under --root",
        description="List the paper's datasets: their shape, where to download them, the "
                    "files each needs in its folder under --root and which of them are "
                    "found there; then the bundled stream and how to run a stream file "
                    "of your own.")
    add_root_option(datasets)
    datasets.set_defaults(handler=datasets_command)
    return parser


def dispatch(argv: Optional[Sequence[str]] = None) -> int:
    """Parse ``argv`` and run its command; bad input prints one ``error:`` line
    and returns 2. An interrupt propagates (to the enclosing command or :func:`main`)."""
    try:
        args = build_parser().parse_args(argv)
        with warnings.catch_warnings():
            warnings.showwarning = _warning_line
            return args.handler(args)
    except (UsageError, DatasetError) as error:
        print(f"error: {one_line(error)}", file=sys.stderr)
        return 2


def _warning_line(message: Warning | str, category: type[Warning], filename: str,
                  lineno: int, file: Optional[TextIO] = None, line: Optional[str] = None
                  ) -> None:
    """Show a warning as the command line's other messages: one ``warning:`` line
    on stderr (not Python's two, the second the source line that warned)."""
    text = one_line(message) if isinstance(message, Warning) else " ".join(message.split())
    print(f"warning: {text}", file=sys.stderr if file is None else file)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the command line: :func:`dispatch`, and for Ctrl-C the interrupted
    command's one line on stderr (exit code 130); a closed stdout (``| head``)
    ends it quietly.

    Args:
        argv (Sequence[str], optional): the arguments; ``None``: ``sys.argv[1:]``.
            (default: :obj:`None`)

    Returns:
        int: the exit code.
    """
    try:
        code = dispatch(argv)
        sys.stdout.flush()  # a reader gone shows here, not in the interpreter's last flush
        return code
    except KeyboardInterrupt as interrupt:  # an Interrupted says what is kept
        print(str(interrupt) or "interrupted", file=sys.stderr)
        return INTERRUPTED_EXIT_CODE
    except BrokenPipeError:
        # the Python documentation's idiom (library/signal, "Note on SIGPIPE"), with
        # os.devnull's own descriptor closed: main may be called again in the process
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())
        finally:
            os.close(devnull)
        return 1
