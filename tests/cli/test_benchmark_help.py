"""Every benchmark script's ``--help`` describes every option it takes."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest
from benchmark_script_helpers import SCRIPTS, built_parser

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))


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
def test_help_describes_every_option(script):
    assert undescribed(built_parser(script)) == []
