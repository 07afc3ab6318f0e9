"""``run --show-config``: the configuration a run will use, each entry with where
its value comes from, as :func:`~torch_geometric_stream.cli.configs.resolve_config`
and :func:`~torch_geometric_stream.cli.configs.resolve_stream_entries` note it
while they resolve the run's configuration (so the two cannot disagree)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Optional

from torch_geometric_stream.cli.configs import CONFIG_FILE_SOURCE
from torch_geometric_stream.cli.models import (ROBUST_SCALING_KEYS, ROBUST_SCALINGS,
                                               unread_config_entries)
from torch_geometric_stream.evaluation import LEARNER_SCALINGS

__all__ = ["config_lines", "unread_in_config"]


def unread_in_config(model: str, config: Mapping[str, Any]) -> list[str]:
    """The entries of a resolved configuration that model ``model`` never reads
    under it, in the order of ``config``: those
    :func:`~torch_geometric_stream.cli.models.unread_config_entries` names with
    its ``lam`` (e.g. ``k`` for ``memory``, ``regularizer`` where ``lam`` is 0),
    the quantile range settings beside a scaling other than ``robust`` and
    ``robust-rescale``, ``source_merge`` beside one other than ``online-rescale``
    and ``robust-rescale``, and ``feature_range`` beside scaling ``none``."""
    unread = set(unread_config_entries(model, config.get("lam")))
    if config["scaling"] not in LEARNER_SCALINGS:
        unread.add("source_merge")
    if config["scaling"] not in ROBUST_SCALINGS:
        unread |= set(ROBUST_SCALING_KEYS)
    if config["scaling"] == "none":
        unread.add("feature_range")
    return [key for key in config if key in unread]


def config_lines(model: str, config: Mapping[str, Any], sources: Mapping[str, str],
                 config_file: Optional[Path]) -> list[str]:
    """One line per entry of a resolved ``config`` of model ``model``: its name, value
    (as a ``--config`` file writes it; a string bare) and source (``sources``; the
    ``--config`` file named by ``config_file``).

    The entries are grouped by their source, in the order the sources apply
    (lowest precedence first: package defaults first, flags and what the
    stream settles last), by name within a group. The entries the model does
    not read under this configuration (:func:`unread_in_config`) follow under a
    heading of their own rather than being left out: the run's record
    (``--output``) holds every entry, and each should be found here, marked as
    changing nothing.
    """
    unread = unread_in_config(model, config)
    layers = list(dict.fromkeys(sources.values()))
    read = sorted((key for key in config if key not in unread),
                  key=lambda key: (layers.index(sources[key]), key))
    width = max(map(len, config))
    values = {key: _value(config[key]) for key in config}
    value_width = max(map(len, values.values()))

    def line(key: str) -> str:
        source = sources[key].replace(CONFIG_FILE_SOURCE, f"--config {config_file}")
        return f"  {key:<{width}}  {values[key]:<{value_width}}  {source}"

    lines = ["configuration (entry, value, where it comes from; each source overrides "
             "those above it):", *map(line, read)]
    if unread:
        lines += [f"not read by {model} in this configuration (setting them changes "
                  f"nothing; the record holds them):", *map(line, unread)]
    return lines


def _value(value: Any) -> str:
    """``value`` as a ``--config`` file writes it, a string without quotes."""
    return value if isinstance(value, str) else json.dumps(value)
