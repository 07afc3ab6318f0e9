"""Adapters to other stream-learning libraries (each an optional extra).

- :mod:`~torch_geometric_stream.integrations.river`: :class:`RiverClassifier`
  and :class:`SemiSupervisedWrapper` for River (extra ``river``).
- :mod:`~torch_geometric_stream.integrations.capymoa`: :class:`CapyMOASLeDGe`
  and :class:`CapyMOASLeDGeLight` for CapyMOA (extra ``capymoa``).

The submodules are imported on first attribute access, so importing this
package neither needs the libraries nor starts CapyMOA's Java virtual machine.
"""
from __future__ import annotations

import importlib
from typing import Any

__all__ = ["RiverClassifier", "SemiSupervisedWrapper", "CapyMOASLeDGe", "CapyMOASLeDGeLight"]

_SOURCES = {"RiverClassifier": "river", "SemiSupervisedWrapper": "river",
            "CapyMOASLeDGe": "capymoa", "CapyMOASLeDGeLight": "capymoa"}


def __getattr__(name: str) -> Any:
    if name not in _SOURCES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_SOURCES[name]}"), name)


def __dir__() -> list[str]:
    return sorted(__all__)
