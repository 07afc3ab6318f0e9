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

import inspect
from typing import Any, Callable, Mapping, Optional

from torch_geometric_stream.base import StreamClassifier
from torch_geometric_stream.models.online_mlp import OnlineMLP
from torch_geometric_stream.models.sledge import UNLEARNED_GRAPH_ENTRIES, SLeDGe, unread_arguments

__all__ = ["MODELS", "SLEDGE_VARIANTS", "BASELINE_NAMES", "BASELINE_HYPERPARAMETERS",
           "build_model", "fixed_entries", "model_names", "unread_entries"]

#: Names of :data:`torch_geometric_stream.baselines.BASELINES` (imported lazily).
BASELINE_NAMES = ("tlp", "ressl", "hdssl")

#: Hyperparameters of each baseline that :func:`build_model` passes on, as
#: configuration entry (the command line's ``--sigma``, ``--knn``, ...) ->
#: constructor argument.  HDSSL's ``k`` is the entry ``radius_k``: ``k`` is
#: SLeDGe's top-k (ReSSL's opt-in ``radius_k`` is the same estimate's).
BASELINE_HYPERPARAMETERS: dict[str, dict[str, str]] = {
    "tlp": {"sigma": "sigma", "knn": "knn"},
    "ressl": {"decay": "decay", "prune_threshold": "prune_threshold", "window": "window",
              "radius_k": "radius_k"},
    "hdssl": {"decay": "decay", "prune_threshold": "prune_threshold", "radius_k": "k",
              "chunk_size": "chunk_size"},
}

#: SLeDGe keyword arguments that define each SLeDGe-based model name.
SLEDGE_VARIANTS: dict[str, dict[str, Any]] = {
    "sledge": {},
    "sledge-light": {"light": True},
    "gsl": {"lam": 0.0},
    "static": {"graph": "static"},
    "memory": {"graph": "none"},
}


def fixed_entries(name: str) -> dict[str, Any]:
    """The SLeDGe keyword arguments the SLeDGe-based model ``name`` sets itself,
    whatever :func:`build_model` is given: its entries of :data:`SLEDGE_VARIANTS`
    and, for the ablations without a learned graph, SLeDGe's
    :data:`~torch_geometric_stream.models.sledge.UNLEARNED_GRAPH_ENTRIES`.
    E.g. ``fixed_entries("gsl") == {"lam": 0.0}``: +GSL is SLeDGe without the
    structure regularizer.

    Args:
        name (str): a SLeDGe-based model of :data:`SLEDGE_VARIANTS`.
    """
    variant = SLEDGE_VARIANTS[name]
    if variant.get("graph", "learned") == "learned":
        return dict(variant)
    return {**variant, **UNLEARNED_GRAPH_ENTRIES}


#: Keyword arguments of SLeDGe that the "base" MLP understands.
_MLP_KEYS = ("hidden_channels", "num_layers", "lr", "weight_decay", "seed", "device")


def _baselines() -> Mapping[str, type]:
    from torch_geometric_stream.baselines import BASELINES
    return BASELINES


def unread_entries(name: str, lam: Optional[float] = None) -> frozenset[str]:
    """The SLeDGe keyword arguments that the model ``name`` of :data:`MODELS`
    never reads: for a SLeDGe-based one the
    :func:`~torch_geometric_stream.models.sledge.unread_arguments` of its
    :data:`SLEDGE_VARIANTS` entries (e.g. ``k`` for ``"memory"``, which has no
    graph, or ``light_memory`` for all but ``"sledge-light"``) with ``lam``
    where the variant does not fix it; for ``"base"`` every argument but the
    MLP's.

    Args:
        name (str): a model of :data:`MODELS`.
        lam (float, optional): the model's ``lam``; ``None``: some value above
            zero. (default: :obj:`None`)
    """
    if name == "base":
        arguments = inspect.signature(SLeDGe.__init__).parameters
        return frozenset(arguments) - {"self", "in_channels", "num_classes", *_MLP_KEYS}
    variant = SLEDGE_VARIANTS[name]
    return unread_arguments(graph=variant.get("graph", "learned"),
                            light=variant.get("light", False), lam=variant.get("lam", lam))


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


def build_model(name: str, in_channels: int, num_classes: int, *,
                memory_size: Optional[int] = None, **config: Any) -> StreamClassifier:
    """Build the learner ``name`` (see the module docstring).

    Args:
        name (str): a name of :data:`MODELS` or :data:`BASELINE_NAMES`.
        in_channels (int): the input features :math:`d`.
        num_classes (int): the classes :math:`c`.
        memory_size (int, optional): a baseline's memory; ``None``:
            ``labeled_size + unlabeled_size`` of ``config``, i.e. 1000 by
            default. (default: :obj:`None`)
        **config (optional): SLeDGe keyword arguments; each model takes the ones it
            understands, and a SLeDGe-based model overrides its
            :func:`fixed_entries`. Baselines take ``seed`` where their
            constructor has one and their entries of
            :data:`BASELINE_HYPERPARAMETERS` (``None``: the constructor's
            default).

    Returns:
        StreamClassifier: the learner.

    Raises:
        ValueError: for an unknown ``name``.
        TypeError: for a keyword that is neither a SLeDGe argument nor one of
            the baseline's hyperparameters (e.g. a misspelled ``sigmaa``), and for
            ``memory_size`` with a model other than a baseline (SLeDGe's memory
            is ``labeled_size + unlabeled_size``).
    """
    if name not in MODELS and name not in BASELINE_NAMES:
        raise ValueError(f"unknown model {name!r}; choose one of {model_names()}")
    _check_keywords(name, config, memory_size)
    if name in MODELS:
        return MODELS[name](in_channels, num_classes, **config)
    cls = _baselines()[name]
    if memory_size is None:
        memory_size = config.get("labeled_size", 100) + config.get("unlabeled_size", 900)
    kwargs: dict[str, Any] = {"memory_size": memory_size}
    if "seed" in inspect.signature(cls).parameters and config.get("seed") is not None:
        kwargs["seed"] = config["seed"]
    kwargs.update({argument: config[key]
                   for key, argument in BASELINE_HYPERPARAMETERS[name].items()
                   if config.get(key) is not None})
    return cls(in_channels, num_classes, **kwargs)


def _check_keywords(name: str, config: dict[str, Any], memory_size: Optional[int]) -> None:
    """Raise a ``TypeError`` for a keyword :func:`build_model` would drop unread."""
    if memory_size is not None and name in MODELS:
        raise TypeError(f"memory_size applies to the baselines {BASELINE_NAMES}; model "
                        f"{name!r} takes labeled_size and unlabeled_size (its memory is "
                        f"their sum)")
    known = set(inspect.signature(SLeDGe.__init__).parameters) - {"self", "in_channels",
                                                                  "num_classes"}
    known |= set(BASELINE_HYPERPARAMETERS.get(name, {}))
    unknown = sorted(set(config) - known)
    if unknown:
        hyperparameters = BASELINE_HYPERPARAMETERS.get(name)
        extra = f" or its hyperparameters {sorted(hyperparameters)}" if hyperparameters else ""
        raise TypeError(f"build_model({name!r}) got unknown keyword(s) {unknown}: it takes "
                        f"SLeDGe's arguments{extra}")


def model_names() -> list[str]:
    """All model names: SLeDGe variants and ablations, then baselines."""
    return [*MODELS, *BASELINE_NAMES]
