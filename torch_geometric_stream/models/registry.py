"""Every stream learner of the package by name, with the paper's settings.

The ablations of the paper's Sec. 5.2 are named configurations of the same
modules, not copies:

======================  ===========================================================
``base``                :class:`OnlineMLP`: MLP, no memory, no graph
``memory`` ("+M")       SLeDGe with ``graph="none"``: dual memory merged by raw
                        cosine, MLP trained on the labeled memory
``static`` ("+Static")  SLeDGe with ``graph="static"``: + fixed raw-cosine kNN graph
``gsl`` ("+GSL")        SLeDGe with ``lam=0``: learned graph, no regularizer
``sledge``              SLeDGe
``sledge-light``        SLeDGe-L
``tlp``, ``ressl``,     the baselines of :mod:`torch_geometric_stream.baselines`
``hdssl``
======================  ===========================================================
"""
from __future__ import annotations

from typing import Any, Callable

from torch_geometric_stream.base import StreamClassifier
from torch_geometric_stream.models.online_mlp import OnlineMLP
from torch_geometric_stream.models.sledge import SLeDGe

__all__ = ["MODELS", "SLEDGE_VARIANTS", "build_model"]

#: SLeDGe keyword arguments that define each SLeDGe-based model name.
SLEDGE_VARIANTS: dict[str, dict[str, Any]] = {
    "sledge": {},
    "sledge-light": {"light": True},
    "gsl": {"lam": 0.0},
    "static": {"graph": "static"},
    "memory": {"graph": "none"},
}

#: Keyword arguments of SLeDGe that the "base" MLP understands.
_MLP_KEYS = ("hidden_channels", "num_layers", "lr", "weight_decay", "seed", "device")


def _baselines() -> dict[str, type]:
    from torch_geometric_stream.baselines import BASELINES
    return BASELINES


def _build_base(in_channels: int, num_classes: int, **config: Any) -> StreamClassifier:
    return OnlineMLP(in_channels, num_classes,
                     **{key: value for key, value in config.items() if key in _MLP_KEYS})


def _build_sledge(name: str) -> Callable[..., StreamClassifier]:
    def build(in_channels: int, num_classes: int, **config: Any) -> StreamClassifier:
        return SLeDGe(in_channels, num_classes, **{**config, **SLEDGE_VARIANTS[name]})
    return build


MODELS: dict[str, Callable[..., StreamClassifier]] = {
    "base": _build_base,
    **{name: _build_sledge(name) for name in SLEDGE_VARIANTS},
}


def build_model(name: str, in_channels: int, num_classes: int, **config: Any) -> StreamClassifier:
    """Build the learner ``name`` (see the module docstring).

    ``config`` holds SLeDGe keyword arguments; each model takes the ones it
    understands (baselines take ``memory_size`` and ``seed``).
    """
    if name in MODELS:
        return MODELS[name](in_channels, num_classes, **config)
    baselines = _baselines()
    if name not in baselines:
        raise ValueError(f"unknown model {name!r}; choose one of "
                         f"{sorted(MODELS) + sorted(baselines)}")
    memory_size = config.get("labeled_size", 100) + config.get("unlabeled_size", 900)
    return baselines[name](in_channels, num_classes, memory_size=memory_size,
                           seed=config.get("seed", 0))


def model_names() -> list[str]:
    """All model names, SLeDGe variants and ablations first, then baselines."""
    return list(MODELS) + sorted(_baselines())
