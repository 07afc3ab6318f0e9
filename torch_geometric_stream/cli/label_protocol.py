"""The label protocol of a ``run`` or ``tune`` command: which samples give their
label (a mask, or an active-learning query that asks where the model is unsure,
:mod:`~torch_geometric_stream.evaluation.label_query`) and how late it comes
(:mod:`~torch_geometric_stream.evaluation.delay`): the options' help, their
checks and the words of a run's heading."""
from __future__ import annotations

import argparse
from typing import Optional

from torch_geometric_stream.cli.arguments import label_ratio, nonnegative_int, unit_fraction
from torch_geometric_stream.cli.errors import UsageError
from torch_geometric_stream.evaluation import LABEL_MASKS, LABEL_QUERIES, UncertaintyQuery

__all__ = ["LABEL_DELAY_HELP", "ARRIVAL_HELP", "LABEL_MASK_HELP", "QUERY_THRESHOLD",
           "QUERY_STEP", "QUERY_THRESHOLD_HELP", "QUERY_STEP_HELP", "QUERY_OPTIONS",
           "add_label_protocol_options", "query_settings", "label_query", "query_words",
           "learn_on_arrival", "label_delay_words"]

#: Help of ``--label-delay`` (``run`` and ``tune``).
LABEL_DELAY_HELP = ("samples predicted between a labeled sample and the learning of its label: "
                    "each label arrives N samples late (N >= 1: as MOA's "
                    "EvaluateInterleavedTestThenTrainSSLDelayed -k N and CapyMOA's Python "
                    "prequential_ssl_evaluation loop with delay_length=N+1; default: 0, every "
                    "label at once)")
#: Help of ``--learn-on-arrival`` (``run`` and ``tune``).
ARRIVAL_HELP = ("with --label-delay: learn a labeled sample without label as it arrives, "
                "then with its label (default, as MOA and CapyMOA); --no-learn-on-arrival: "
                "only once its label comes, as River's delay=N+1")
#: ``--query-threshold`` and ``--query-step`` not given (MOA's ``ALUncertainty`` defaults).
QUERY_THRESHOLD, QUERY_STEP = 0.9, 0.01
#: Help of ``--label-mask`` (``run`` and ``tune``).
LABEL_MASK_HELP = ("paper: first sample of each class + random positions up to "
                   "max(c, floor(R*T)) labels; authors: the same rule with the "
                   "positions the authors' code draws for a seed; bernoulli: each "
                   "sample with probability R; capymoa: likewise, with the draws "
                   "of CapyMOA's prequential_ssl_evaluation for random_seed=S; "
                   "fixed-uncertainty, variable-uncertainty, "
                   "randomized-uncertainty, selective-sampling: active learning, "
                   "the label asked for where the model is unsure, within a "
                   "budget of R labels per sample, as MOA's ALUncertainty "
                   "(default: %(default)s)")
#: Help of ``--query-threshold`` (``run`` and ``tune``).
QUERY_THRESHOLD_HELP = (f"fixed-uncertainty: ask for a label where the largest class "
                        f"probability is below U (default: {QUERY_THRESHOLD})")
#: Help of ``--query-step`` (``run`` and ``tune``).
QUERY_STEP_HELP = (f"variable- and randomized-uncertainty: the threshold falls by "
                   f"the factor 1-S after a label asked for and rises by 1+S "
                   f"after none (default: {QUERY_STEP})")
#: The label queries (``--label-mask``) that read each query option, and its default.
QUERY_OPTIONS = {"query_threshold": (("fixed-uncertainty",), QUERY_THRESHOLD),
                  "query_step": (("variable-uncertainty", "randomized-uncertainty"), QUERY_STEP)}


def add_label_protocol_options(parser: argparse.ArgumentParser | argparse._ArgumentGroup,
                               note: str = "") -> None:
    """The label protocol's options, as ``run`` and ``tune`` take them:
    ``--label-ratio``, ``--label-mask``, the query options, ``--label-delay`` and
    ``--[no-]learn-on-arrival``; ``note`` ends the help of ``--label-mask`` and
    ``--label-delay`` (``tune``'s: that every run of the search has them)."""
    parser.add_argument("--label-ratio", type=label_ratio, default=0.01, metavar="R",
                        help="fraction of labeled samples in (0, 1] (default: %(default)s)")
    parser.add_argument("--label-mask", choices=LABEL_MASKS + LABEL_QUERIES, default="paper",
                        help=LABEL_MASK_HELP + note)
    parser.add_argument("--query-threshold", type=unit_fraction, metavar="U",
                        help=QUERY_THRESHOLD_HELP)
    parser.add_argument("--query-step", type=unit_fraction, metavar="S", help=QUERY_STEP_HELP)
    parser.add_argument("--label-delay", type=nonnegative_int, default=0, metavar="N",
                        help=LABEL_DELAY_HELP + note)
    parser.add_argument("--learn-on-arrival", action=argparse.BooleanOptionalAction,
                        help=ARRIVAL_HELP)


def query_settings(args: argparse.Namespace) -> dict[str, Optional[float]]:
    """``query_threshold`` and ``query_step`` of a run: the value (given, or the
    default) where its ``--label-mask`` reads the option, ``None`` where not.

    Raises:
        UsageError: an option given that the label mask does not read.
    """
    settings: dict[str, Optional[float]] = {}
    for key, (masks, default) in QUERY_OPTIONS.items():
        given, reads = getattr(args, key), args.label_mask in masks
        if given is not None and not reads:
            raise UsageError(f"--{key.replace('_', '-')} is read by --label-mask "
                             f"{' and '.join(masks)}, not by --label-mask {args.label_mask}: "
                             f"drop it")
        settings[key] = (default if given is None else given) if reads else None
    return settings


def label_query(args: argparse.Namespace, seed: int) -> Optional[UncertaintyQuery]:
    """The run's active-learning query of seed ``seed``, ``None`` for a label mask."""
    if args.label_mask not in LABEL_QUERIES:
        return None
    settings = query_settings(args)
    return UncertaintyQuery(args.label_mask, args.label_ratio, seed=seed,
                            **{key.removeprefix("query_"): value
                               for key, value in settings.items() if value is not None})


def query_words(args: argparse.Namespace) -> str:
    """``", labels asked by STRATEGY"`` for a run's heading, ``""`` for a label mask."""
    return f", labels asked by {args.label_mask}" if args.label_mask in LABEL_QUERIES else ""


def learn_on_arrival(args: argparse.Namespace) -> Optional[bool]:
    """Whether a run with ``--label-delay`` learns a labeled sample without label as
    it arrives (``--[no-]learn-on-arrival``, default on); ``None`` without delay.

    Raises:
        UsageError: the flag given without a delay, which never reads it.
    """
    if not args.label_delay:
        if args.learn_on_arrival is not None:
            flag = "--learn-on-arrival" if args.learn_on_arrival else "--no-learn-on-arrival"
            raise UsageError(f"{flag} is read with --label-delay N (N >= 1), where labels "
                             f"come late: add one or drop {flag}")
        return None
    return True if args.learn_on_arrival is None else args.learn_on_arrival


def label_delay_words(delay: int, on_arrival: Optional[bool]) -> str:
    """``", labels N samples late"`` for a run's headings (and how a labeled row
    waits where it is not learned on arrival), ``""`` without delay."""
    held = "" if on_arrival in (None, True) else " (rows held for them)"
    return f", labels {delay} samples late{held}" if delay else ""
