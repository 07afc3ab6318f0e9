"""A benchmark script's ``main`` on bad input: its usage error, no data folder, and a
result file cut short; the parser a script's ``main`` builds; a run record and a small
Shuttle dataset to read."""
from __future__ import annotations

import argparse
import importlib
import json
from pathlib import Path
from typing import Any, Callable, Sequence

import pytest

#: The benchmark scripts with a command line (``main(argv)``), importable by name
#: once ``benchmarks/`` is on ``sys.path``.
SCRIPTS = ["accuracy", "compile_breaks", "cuda_step", "draw_references", "feature_range", "graph_diagnostics",
           "label_timeline", "peers", "propagation", "quantile_range", "reference_accuracy",
           "seed_spread", "step_latency", "stream_length"]

NO_DATA_FOLDER = "error: no data folder: pass --root or set TGS_DATA_ROOT"


def usage_error(main: Callable[[Sequence[str]], Any], argv: Sequence[str],
                capsys: pytest.CaptureFixture[str]) -> str:
    """What ``main(argv)`` writes to stderr; it must exit with argparse's usage
    error (status 2), never a traceback."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err


def cut_short(path: Path) -> str:
    """Write to ``path`` a result JSON cut short, as a run killed while writing it left
    one; the end of the one-line usage error that names it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"median_ms": 2')
    return (f"error: {path}: not JSON (Expecting ',' delimiter: line 1 column 16 (char 15); "
            "cut short by a run killed while writing it?); delete it to rerun its run")


def write_run_record(path: Path, **entries: Any) -> None:
    """Write to ``path`` a record of ``python -m torch_geometric_stream run`` with the
    entries every reader needs (a finished sledge run on Shopper at 0.1 %, config
    ``{}``), ``entries`` added or replacing them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"dataset": "Shopper", "model": "sledge", "label_ratio": 0.001,
                                "label_mask": "paper", "seed": 0, "accuracy": 0.5,
                                "limit": None, "n_samples": 100, "config": {}, **entries}))


def write_shuttle(root: Path) -> None:
    """Write under ``root`` a Shuttle dataset of 12 samples (9 features, classes 1 and
    2 alternating; 6 in each of its two files)."""
    data = root / "Shuttle"
    data.mkdir(parents=True)
    rows = "\n".join(" ".join(str(i + j) for j in range(9)) + f" {1 + i % 2}" for i in range(6))
    (data / "shuttle.trn").write_text(rows + "\n")
    (data / "shuttle.tst").write_text(rows + "\n")


def without_data_folder(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """No ``$TGS_DATA_ROOT``, and a working directory without ``shared/data`` above it."""
    monkeypatch.delenv("TGS_DATA_ROOT", raising=False)
    monkeypatch.chdir(folder)


class _Parsed(Exception):
    """Raised in place of parsing: carries the parser ``main`` built."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        super().__init__()
        self.parser = parser


def built_parser(script: str) -> argparse.ArgumentParser:
    """The parser that ``script``'s ``main`` builds, caught as it starts parsing
    (``benchmarks/`` must be on ``sys.path``)."""

    def catch(parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        raise _Parsed(parser)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(argparse.ArgumentParser, "parse_known_args", catch)
        with pytest.raises(_Parsed) as parsed:
            importlib.import_module(script).main([])
    return parsed.value.parser
