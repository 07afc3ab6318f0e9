"""The learners the command line can run, by name.

Every name of :func:`torch_geometric_stream.models.model_names` (SLeDGe,
SLeDGe-L, the ablations ``base``, ``memory``, ``static``, ``gsl`` and the
baselines ``tlp``, ``ressl``, ``hdssl``) is built by
:func:`torch_geometric_stream.models.build_model`; this module only maps the
CLI's resolved configuration onto it.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Mapping, Optional

from torch_geometric_stream.cli.errors import UsageError
from torch_geometric_stream.datasets import CSVRowStream, StreamDataset
from torch_geometric_stream.evaluation import LEARNER_SCALINGS, StreamTransform, make_transform
from torch_geometric_stream.models import (BASELINE_HYPERPARAMETERS, MODELS, SLEDGE_VARIANTS,
                                           build_model, fixed_entries, model_names,
                                           unread_entries)
from torch_geometric_stream.nn.scaling import RunningMinMax, RunningQuantileRange

__all__ = ["MODEL_NAMES", "ROBUST_SCALING_KEYS", "ROBUST_SCALINGS", "SLEDGE_CONFIG_KEYS",
           "BASELINE_CONFIG_KEYS", "BASELINE_HYPERPARAMETER_KEYS", "config_keys",
           "fixed_config_entries", "model_kwargs", "unread_config_entries", "uses_sledge_config",
           "build_learner", "build_transform", "check_model_device", "quantile_range_options"]

#: The configuration entries that set the
#: :class:`~torch_geometric_stream.nn.scaling.RunningQuantileRange` of scalings
#: ``"robust"`` and ``"robust-rescale"`` (its ``quantile``, ``tolerance``,
#: ``reservoir_size``, ``window`` and ``clip``; see :func:`quantile_range_options`);
#: the other scalings read none.
ROBUST_SCALING_KEYS = ("robust_quantile", "robust_tolerance", "robust_reservoir",
                       "robust_window", "robust_clip")
#: The scalings that read :data:`ROBUST_SCALING_KEYS`.
ROBUST_SCALINGS = ("robust", "robust-rescale")
#: Configuration entries every SLeDGe-family learner reads (see ``cli.configs``).
SLEDGE_CONFIG_KEYS = ("memory_size", "labeled_size", "unlabeled_size", "k", "hidden_channels",
                      "embedding_layers", "num_layers", "normalization", "bias_position",
                      "regularizer", "lam", "tau", "lr", "weight_decay", "propagation",
                      "scaling", "alpha", "beta", "class_prior", "light_memory",
                      "reselect_every", "search_dtype", "feature_transform", "count_offset",
                      "merge_similarity", "source_merge", "supervise_graph"
                      ) + ROBUST_SCALING_KEYS + (
                      "feature_range",)
#: Configuration entries of every baseline.
BASELINE_CONFIG_KEYS = ("memory_size", "scaling", "feature_transform",
                        "feature_range") + ROBUST_SCALING_KEYS
#: The baselines' own hyperparameters, each read by some of them
#: (:data:`~torch_geometric_stream.models.BASELINE_HYPERPARAMETERS`); ``None``,
#: their default, leaves the baseline's own default (its published setting where
#: its paper fixes one; TLP's bandwidth is the package's median heuristic).
BASELINE_HYPERPARAMETER_KEYS: tuple[str, ...] = tuple(dict.fromkeys(
    key for keys in BASELINE_HYPERPARAMETERS.values() for key in keys))
#: Entries that prepare the input stream or size the memory rather than being
#: model keyword arguments.
_NOT_MODEL_KWARGS = ("memory_size", "scaling", "feature_transform",
                     "feature_range") + ROBUST_SCALING_KEYS

MODEL_NAMES: tuple[str, ...] = tuple(model_names())


def uses_sledge_config(name: str) -> bool:
    """Whether ``name`` reads the SLeDGe configuration (and the paper's per-dataset one)."""
    return name in MODELS


def config_keys(name: str) -> tuple[str, ...]:
    """The configuration entries model ``name`` accepts."""
    if name not in MODEL_NAMES:
        raise UsageError(f"unknown model {name!r}; choose from {', '.join(MODEL_NAMES)}")
    if uses_sledge_config(name):
        return SLEDGE_CONFIG_KEYS
    return BASELINE_CONFIG_KEYS + tuple(BASELINE_HYPERPARAMETERS[name])


def fixed_config_entries(name: str) -> dict[str, Any]:
    """The configuration entries model ``name`` sets itself, whatever it is given
    (:func:`~torch_geometric_stream.models.fixed_entries`), e.g. ``{"lam": 0.0}``
    for ``gsl``; empty for the models that have none."""
    if name not in SLEDGE_VARIANTS:
        return {}
    return {key: value for key, value in fixed_entries(name).items()
            if key in SLEDGE_CONFIG_KEYS}


def unread_config_entries(name: str, lam: Optional[float] = None) -> tuple[str, ...]:
    """The configuration entries model ``name`` accepts but never reads
    (:func:`~torch_geometric_stream.models.unread_entries`; ``lam``: the
    configuration's, ``None`` for any value above zero), e.g. ``k`` for ``memory``,
    ``regularizer`` where ``lam`` is 0; for ``base``, an MLP without a memory,
    ``memory_size`` too. Empty for the baselines, which accept only what they read."""
    if not uses_sledge_config(name):
        return ()
    unread = unread_entries(name, lam)
    if name == "base":
        unread = unread | {"memory_size"}
    return tuple(key for key in SLEDGE_CONFIG_KEYS if key in unread)


def model_kwargs(config: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of a resolved SLeDGe-family configuration that are keyword
    arguments of the model (without the stream's preparation and the memory size)."""
    return {key: value for key, value in config.items() if key not in _NOT_MODEL_KWARGS}


def build_learner(name: str, in_channels: int, num_classes: int, config: Mapping[str, Any],
                  seed: int, device: str) -> Any:
    """Instantiate model ``name`` from a configuration resolved by ``cli.configs``.

    The baselines run on the CPU: ``device`` must then be ``"cpu"``.

    A scaling of :data:`LEARNER_SCALINGS` (``scaling="online-rescale"``,
    ``"robust-rescale"``) builds a SLeDGe-family learner with the matching
    ``input_scaling``: a :class:`~torch_geometric_stream.nn.scaling.RunningMinMax`,
    or a :class:`~torch_geometric_stream.nn.scaling.RunningQuantileRange` set by
    the entries ``robust_quantile``, ``robust_tolerance``, ``robust_reservoir``,
    ``robust_window`` and ``robust_clip`` and seeded by ``seed``; either maps to the
    entry ``feature_range``.

    Raises:
        UsageError: unknown model, a baseline on another device or with a
            scaling the learner does itself, an invalid quantile range setting.
    """
    config_keys(name)  # raises for unknown names
    scaling = config.get("scaling", "")
    input_scaling = LEARNER_SCALINGS.get(scaling)
    if input_scaling is not None and name not in SLEDGE_VARIANTS:
        raise UsageError(f"--scaling {scaling} needs a model that scales its own input "
                         f"({', '.join(SLEDGE_VARIANTS)}); {name!r} does not: use "
                         f"--scaling {scaling.removesuffix('-rescale')}")
    if uses_sledge_config(name):
        kwargs = model_kwargs(config)
        if input_scaling == "robust":
            with _robust_scaling_input(scaling):
                kwargs["input_scaling"] = RunningQuantileRange(
                    in_channels, **quantile_range_options(config, seed),
                    feature_range=config["feature_range"])
        elif input_scaling is not None:
            kwargs["input_scaling"] = RunningMinMax(in_channels, config["feature_range"])
        return build_model(name, in_channels, num_classes, seed=seed, device=device, **kwargs)
    check_model_device(name, device)
    return build_model(name, in_channels, num_classes, memory_size=config["memory_size"],
                       seed=seed, **{key: config[key] for key in BASELINE_HYPERPARAMETERS[name]})


def check_model_device(name: str, device: str) -> None:
    """Refuse ``device`` (canonical, as ``--device`` resolves it) for model ``name``
    where it runs on the CPU only (a baseline)."""
    if not uses_sledge_config(name) and device != "cpu":
        raise UsageError(f"model {name!r} runs on the CPU only, got --device {device}")


def quantile_range_options(config: Mapping[str, Any], seed: int) -> dict[str, Any]:
    """The settings of a resolved configuration's quantile range (scalings
    ``"robust"`` and ``"robust-rescale"``), as keyword arguments of
    :class:`~torch_geometric_stream.nn.scaling.RunningQuantileRange`, its
    reservoir seeded by the run's ``seed``."""
    return {"quantile": config["robust_quantile"], "tolerance": config["robust_tolerance"],
            "reservoir_size": config["robust_reservoir"], "window": config["robust_window"],
            "clip": config["robust_clip"], "seed": seed}


def build_transform(config: Mapping[str, Any], dataset: StreamDataset | CSVRowStream,
                    seed: int) -> StreamTransform:
    """The input pipeline of one run of a resolved configuration (its ``scaling``,
    ``feature_range`` and ``feature_transform``, settled by
    ``cli.configs.resolve_stream_entries``) over ``dataset``.

    Raises:
        UsageError: an invalid quantile range setting.
    """
    scaling = config["scaling"]
    with _robust_scaling_input(scaling):
        return make_transform(
            scaling, data=dataset.x
            if scaling == "global" and not isinstance(dataset, CSVRowStream)
            else None,  # a stream read as it comes has no whole x: make_transform refuses
            value_range=dataset.value_range, feature_transform=config["feature_transform"],
            feature_range=config["feature_range"],
            robust_options=quantile_range_options(config, seed) if scaling == "robust" else None)


@contextmanager
def _robust_scaling_input(scaling: str) -> Iterator[None]:
    """Report a ``ValueError`` of the quantile range's settings as a
    :class:`UsageError` naming ``--scaling``."""
    try:
        yield
    except ValueError as error:
        raise UsageError(f"--scaling {scaling}: {error}") from None
