"""Parsing helpers of the command line: value types, seeds, devices, config files."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Optional, Sequence

import torch

from torch_geometric_stream.cli.errors import UsageError
from torch_geometric_stream.validation import check_device as check_device_exists

__all__ = ["Parser", "positive_int", "label_ratio", "tau_value", "parse_seeds", "check_device",
           "read_config_file"]


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that raises :class:`UsageError` instead of printing
    the usage and exiting, so every bad input ends as one ``error:`` line."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")


def positive_int(text: str) -> int:
    """An integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def label_ratio(text: str) -> float:
    """A float in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text!r}") from None
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"the label ratio must lie in (0, 1], got {text!r}")
    return value


def tau_value(text: str) -> str | float:
    """A positive number or ``inf`` (checked when the configuration is resolved)."""
    if text.strip().lower() in ("inf", "infinity"):
        return "inf"
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number or 'inf', "
                                         f"got {text!r}") from None


def coefficient_value(text: str) -> str | float:
    """``adaptive`` or a fixed memory merge coefficient in ``[0, 1]``."""
    if text.strip().lower() == "adaptive":
        return "adaptive"
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected 'adaptive' or a number in [0, 1], "
                                         f"got {text!r}")
    return value


def parse_seeds(values: Optional[Sequence[str]]) -> list[int]:
    """Seeds from repeated ``--seed`` options, each an integer or a comma list
    (duplicates dropped, order kept); ``[0]`` when none is given."""
    seeds: list[int] = []
    for value in values or ["0"]:
        for part in value.split(","):
            try:
                seed = int(part)
            except ValueError:
                raise UsageError(f"--seed expects integers or comma lists of integers, "
                                 f"got {value!r}") from None
            if seed < 0:
                raise UsageError(f"seeds must be non-negative, got {seed}")
            if seed not in seeds:
                seeds.append(seed)
    return seeds


def check_device(spec: str, gpu_capable: bool = True) -> str:
    """``spec`` as a canonical device string, if that device exists here.
    ``"auto"``: ``"cuda"`` when CUDA is available and the learner can run
    there (``gpu_capable``), else ``"cpu"``."""
    if spec == "auto":
        return "cuda" if gpu_capable and torch.cuda.is_available() else "cpu"
    try:
        return str(check_device_exists(spec, "--device"))
    except ValueError as error:
        raise UsageError(str(error)) from None


def read_config_file(path: Optional[Path]) -> Optional[dict[str, Any]]:
    """The JSON object of a ``--config`` file (``None`` without one)."""
    if path is None:
        return None
    try:
        content = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise UsageError(f"cannot read --config file {path}: {error.strerror or error}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise UsageError(f"--config file {path} is not valid JSON: {error}") from None
    if not isinstance(content, dict):
        raise UsageError(f"--config file {path} must hold a JSON object, "
                         f"got {type(content).__name__}")
    return content
