"""Every benchmark script's ``--help`` describes every option it takes."""
from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

SCRIPTS = ["accuracy", "cuda_step", "draw_references", "feature_range", "graph_diagnostics",
           "label_timeline", "peers", "propagation", "quantile_range", "reference_accuracy",
           "seed_spread", "step_latency", "stream_length"]


class _Parsed(Exception):
    """Raised in place of parsing: carries the parser ``main`` built."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__()
        self.parser = parser


def built_parser(script: str, monkeypatch: pytest.MonkeyPatch) -> argparse.ArgumentParser:
    """The parser that ``script``'s ``main`` builds, caught as it starts parsing."""

    def catch(parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        raise _Parsed(parser)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_known_args", catch)
    with pytest.raises(_Parsed) as parsed:
        importlib.import_module(script).main([])
    return parsed.value.parser


def undescribed(parser: argparse.ArgumentParser, prefix: str = "") -> list[str]:
    """The options and positionals of ``parser`` and its sub-commands without a help text."""
    missing = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                missing += undescribed(sub, f"{prefix}{name} ")
        elif not isinstance(action, argparse._HelpAction) and not action.help:
            missing.append(prefix + (action.option_strings[0] if action.option_strings
                                     else action.dest))
    return missing


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_describes_every_option(script, monkeypatch):
    assert undescribed(built_parser(script, monkeypatch)) == []
