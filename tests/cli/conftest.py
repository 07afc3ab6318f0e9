"""Fixtures shared by the command-line tests."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from torch_geometric_stream.cli import main


@pytest.fixture
def quick_run() -> Callable[..., list[str]]:
    """``quick_run(output, *options)``: the arguments of a ``run`` command that
    takes a second (30 synthetic samples, the memory-only model) and writes ``output``."""

    def arguments(output: Path, *options: str) -> list[str]:
        return ["run", "--dataset", "synthetic", "--model", "memory", "--limit", "30",
                "--output", str(output), "--quiet", *options]

    return arguments


@pytest.fixture
def interrupted_main() -> Callable[[list[str]], int]:
    """``main(argv)`` for a command that gets Ctrl-C: an interrupt that escapes
    ``main`` fails the test instead of stopping pytest."""

    def run(argv: list[str]) -> int:
        try:
            return main(argv)
        except KeyboardInterrupt:
            pytest.fail("the interrupt escaped main()")

    return run
