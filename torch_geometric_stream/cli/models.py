"""The learners the command line can run, by name.

``sledge`` and ``sledge-light`` are :class:`~torch_geometric_stream.SLeDGe`;
``tlp``, ``ressl`` and ``hdssl`` come from
:data:`torch_geometric_stream.baselines.BASELINES`, imported only when asked
for (and reported as unavailable if that package cannot be imported).
"""
from __future__ import annotations

import inspect
from functools import partial
from typing import Any, Callable, Mapping

from torch_geometric_stream.cli.errors import UsageError
from torch_geometric_stream.models import SLeDGe

__all__ = ["MODEL_NAMES", "SLEDGE_MODELS", "ABLATIONS", "BASELINE_NAMES", "SLEDGE_CONFIG_KEYS",
           "BASELINE_CONFIG_KEYS", "config_keys", "uses_sledge_config", "build_learner"]

#: ``factory(in_channels, num_classes, config, seed, device) -> learner``.
LearnerFactory = Callable[[int, int, Mapping[str, Any], int, str], Any]

#: Configuration entries every SLeDGe-family learner reads (see ``cli.configs``).
SLEDGE_CONFIG_KEYS = ("memory_size", "labeled_size", "unlabeled_size", "k", "hidden_channels",
                      "embedding_layers", "num_layers", "normalization", "regularizer", "lam",
                      "tau", "lr", "weight_decay", "propagation", "scaling")
#: Configuration entries of the baselines.
BASELINE_CONFIG_KEYS = ("memory_size", "scaling")
#: Entries that prepare the input stream or size the memory rather than being
#: SLeDGe keyword arguments.
_NOT_SLEDGE_KWARGS = ("memory_size", "scaling")


def _build_sledge(in_channels: int, num_classes: int, config: Mapping[str, Any], seed: int,
                  device: str, *, light: bool, **extra: Any) -> SLeDGe:
    """SLeDGe with the SLeDGe entries of ``config`` (plus ``extra`` keyword arguments)."""
    kwargs = {key: value for key, value in config.items() if key not in _NOT_SLEDGE_KWARGS}
    return SLeDGe(in_channels, num_classes, light=light, seed=seed, device=device,
                  **kwargs, **extra)


SLEDGE_MODELS: dict[str, LearnerFactory] = {
    "sledge": partial(_build_sledge, light=False),
    "sledge-light": partial(_build_sledge, light=True),
}

#: Hook for the ablations (``base``, ``memory``, ``static``, ``gsl``): add one
#: entry ``name -> LearnerFactory`` each, e.g. built with ``partial(_build_sledge,
#: light=False, merge_similarity="raw")``. They take the SLeDGe configuration.
ABLATIONS: dict[str, LearnerFactory] = {}

#: Names of :data:`torch_geometric_stream.baselines.BASELINES` (imported lazily).
BASELINE_NAMES = ("tlp", "ressl", "hdssl")

MODEL_NAMES: tuple[str, ...] = (*SLEDGE_MODELS, *ABLATIONS, *BASELINE_NAMES)


def uses_sledge_config(name: str) -> bool:
    """Whether ``name`` reads the SLeDGe configuration (and the paper's per-dataset one)."""
    return name in SLEDGE_MODELS or name in ABLATIONS


def config_keys(name: str) -> tuple[str, ...]:
    """The configuration entries model ``name`` accepts."""
    if name not in MODEL_NAMES:
        raise UsageError(f"unknown model {name!r}; choose from {', '.join(MODEL_NAMES)}")
    return SLEDGE_CONFIG_KEYS if uses_sledge_config(name) else BASELINE_CONFIG_KEYS


def _build_baseline(name: str, in_channels: int, num_classes: int, config: Mapping[str, Any],
                    seed: int) -> Any:
    """A baseline of the registry, seeded where its constructor takes a seed."""
    try:
        from torch_geometric_stream.baselines import BASELINES
    except ImportError as error:
        raise UsageError(f"model {name!r} needs torch_geometric_stream.baselines, which "
                         f"cannot be imported: {error}") from error
    if name not in BASELINES:
        raise UsageError(f"model {name!r} is not in the baselines registry "
                         f"({', '.join(BASELINES)})")
    cls = BASELINES[name]
    kwargs: dict[str, Any] = {"memory_size": config["memory_size"]}
    if "seed" in inspect.signature(cls).parameters:
        kwargs["seed"] = seed
    return cls(in_channels, num_classes, **kwargs)


def build_learner(name: str, in_channels: int, num_classes: int, config: Mapping[str, Any],
                  seed: int, device: str) -> Any:
    """Instantiate model ``name`` from a configuration resolved by ``cli.configs``.

    The baselines run on the CPU: ``device`` must then be ``"cpu"``.

    Raises:
        UsageError: unknown or unavailable model, or a baseline on another device.
    """
    factory = SLEDGE_MODELS.get(name) or ABLATIONS.get(name)
    if factory is not None:
        return factory(in_channels, num_classes, config, seed, device)
    config_keys(name)  # raises for unknown names
    if device != "cpu":
        raise UsageError(f"model {name!r} runs on the CPU only, got --device {device}")
    return _build_baseline(name, in_channels, num_classes, config, seed)
