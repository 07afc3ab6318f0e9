"""``tune --label-mask`` (and ``--query-threshold`` / ``--query-step``): a search
under another label protocol than the paper's mask."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from torch_geometric_stream.cli import main
from torch_geometric_stream.cli.main import build_parser

#: A grid of two points on 30 samples, with enough labels for a mask to matter.
SEARCH = ("tune", "--dataset", "synthetic", "--model", "memory", "--limit", "30",
          "--label-ratio", "0.3", "--grid", "tau=0.5,1")


def _tune(out_dir: Path, *options: str) -> int:
    return main([*SEARCH, *options, "--out-dir", str(out_dir)])


def _records(out_dir: Path, pattern: str) -> dict[str, dict]:
    return {path.name: json.loads(path.read_text()) for path in sorted(out_dir.glob(pattern))}


@pytest.mark.parametrize("options, name, words, entries", [
    (["--label-mask", "bernoulli"], "mask=bernoulli", " (mask bernoulli)",
     {"label_mask": "bernoulli", "query_threshold": None, "query_step": None}),
    (["--label-mask", "fixed-uncertainty", "--query-threshold", "0.5"],
     "mask=fixed-uncertainty_query-threshold=0.5",
     ", labels asked by fixed-uncertainty, query threshold 0.5",
     {"label_mask": "fixed-uncertainty", "query_threshold": 0.5, "query_step": None}),
    (["--label-mask", "variable-uncertainty"], "mask=variable-uncertainty_query-step=0.01",
     ", labels asked by variable-uncertainty, query step 0.01",
     {"label_mask": "variable-uncertainty", "query_threshold": None, "query_step": 0.01}),
    (["--label-mask", "selective-sampling"], "mask=selective-sampling",
     ", labels asked by selective-sampling",
     {"label_mask": "selective-sampling", "query_threshold": None, "query_step": None}),
])
def test_tune_runs_every_point_under_the_label_mask_and_names_its_files_by_it(
        tmp_path, capsys, options, name, words, entries):
    assert _tune(tmp_path, *options) == 0
    output = capsys.readouterr().out
    assert f"tune memory on synthetic, label ratio 0.3{words}, seeds 0, first 30\n" in output
    runs = _records(tmp_path, "memory_*.json")
    assert list(runs) == [f"memory_synthetic_0.3_{name}_tau={tau}_seed0.json"
                          for tau in ("0.5", "1")]
    assert [{entry: run[entry] for entry in entries} for run in runs.values()] == [entries] * 2
    best = tmp_path / f"best_memory_synthetic_0.3_{name}.json"
    assert best.exists() and (tmp_path / f"ranking_memory_synthetic_0.3_{name}.csv").exists()
    # the command printed repeats the best point under the same protocol
    command = output.split("(use: python -m torch_geometric_stream ")[1].split(")\n")[0]
    assert f"--preset paper {' '.join(entries_as_options(entries))} " in f"{command} "
    repeated = tmp_path / "repeated.json"
    assert main([*command.split(), "--output", str(repeated), "--quiet"]) == 0
    repeated_run = json.loads(repeated.read_text())
    best_run = max(runs.values(), key=lambda run: run["accuracy"])
    assert ({entry: repeated_run[entry] for entry in entries} == entries
            and repeated_run["n_labels"] == best_run["n_labels"]
            and repeated_run["accuracy"] == best_run["accuracy"])


def entries_as_options(entries: dict) -> list[str]:
    """A run record's label protocol as the ``run`` options that give it."""
    return [word for entry, value in entries.items() if value is not None
            for word in (f"--{entry.replace('_', '-')}", str(value))]


def test_tune_with_the_paper_mask_keeps_its_file_names_and_skips_its_runs(tmp_path, capsys):
    assert _tune(tmp_path) == 0
    output = capsys.readouterr().out
    assert "tune memory on synthetic, label ratio 0.3, seeds 0, first 30\n" in output
    assert "--label-mask" not in output
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        "best_memory_synthetic_0.3.json", "memory_synthetic_0.3_tau=0.5_seed0.json",
        "memory_synthetic_0.3_tau=1_seed0.json", "ranking_memory_synthetic_0.3.csv"]
    # the mask given is the same search: its runs are skipped, not run again
    assert _tune(tmp_path, "--label-mask", "paper") == 0
    output = capsys.readouterr().out
    assert "start " not in output and "--label-mask" not in output
    # so is a run record older than the label mask (and its query options) in it
    older = tmp_path / "memory_synthetic_0.3_tau=1_seed0.json"
    record = json.loads(older.read_text())
    for entry in ("label_mask", "query_threshold", "query_step"):
        del record[entry]
    older.write_text(json.dumps(record))
    assert _tune(tmp_path) == 0
    assert "start " not in capsys.readouterr().out


@pytest.mark.parametrize("options, stale, message", [
    (["--label-mask", "bernoulli"], {"label_mask": "paper"},
     "ran with label_mask=paper, this search asks for label_mask=bernoulli"),
    (["--label-mask", "bernoulli"], {"label_mask": None},  # a record older than the mask
     "ran with label_mask=paper, this search asks for label_mask=bernoulli"),
    (["--label-mask", "fixed-uncertainty", "--query-threshold", "0.5"],
     {"query_threshold": 0.9},
     "ran with query_threshold=0.9, this search asks for query_threshold=0.5"),
    (["--label-mask", "randomized-uncertainty", "--query-step", "0.1"],
     {"label_mask": "variable-uncertainty", "query_step": 0.01},
     "ran with label_mask=variable-uncertainty, query_step=0.01, this search asks for "
     "label_mask=randomized-uncertainty, query_step=0.1"),
])
def test_tune_refuses_a_json_of_another_label_mask_before_any_run(tmp_path, capsys, options,
                                                                    stale, message):
    assert _tune(tmp_path, *options) == 0
    first, _ = _records(tmp_path, "memory_*.json")
    path = tmp_path / first
    record = json.loads(path.read_text())
    record.update({entry: value for entry, value in stale.items() if value is not None})
    for entry in (entry for entry, value in stale.items() if value is None):
        del record[entry]
    path.write_text(json.dumps(record))
    capsys.readouterr()
    assert main([*SEARCH[:-1], "tau=0.5,1,2", *options, "--out-dir", str(tmp_path)]) == 2
    assert (f"error: {first} {message}; delete the stale JSON(s) or use another --out-dir"
            in capsys.readouterr().err)
    assert not list(tmp_path.glob("*tau=2*"))  # refused before any run


@pytest.mark.parametrize("options, message", [
    (["--query-threshold", "0.5"], "--query-threshold is read by --label-mask "
     "fixed-uncertainty, not by --label-mask paper: drop it"),
    (["--label-mask", "variable-uncertainty", "--query-threshold", "0.5"],
     "--query-threshold is read by --label-mask fixed-uncertainty, not by --label-mask "
     "variable-uncertainty: drop it"),
    (["--label-mask", "bernoulli", "--query-step", "0.1"],
     "--query-step is read by --label-mask variable-uncertainty and randomized-uncertainty, "
     "not by --label-mask bernoulli: drop it"),
    (["--learn-on-arrival"], "--learn-on-arrival is read with --label-delay N (N >= 1), "
     "where labels come late: add one or drop --learn-on-arrival"),
])
def test_tune_refuses_an_option_its_label_protocol_never_reads_before_any_run(
        tmp_path, capsys, options, message):
    out_dir = tmp_path / "tune"
    assert _tune(out_dir, *options) == 2
    assert capsys.readouterr().err == f"error: {message}\n"  # not a grid point's error
    assert not out_dir.exists()


def _option(command: str, flag: str) -> argparse.Action:
    subparsers = next(action for action in build_parser()._actions
                      if isinstance(action, argparse._SubParsersAction))
    return subparsers.choices[command]._option_string_actions[flag]


@pytest.mark.parametrize("flag, suffix", [("--label-mask", "; every run of the search has it"),
                                          ("--query-threshold", ""), ("--query-step", "")])
def test_tunes_label_options_are_runs(flag, suffix):
    run, tune = _option("run", flag), _option("tune", flag)
    assert tune.help == run.help + suffix
    assert (tune.choices, tune.default, tune.type, tune.metavar) == (
        run.choices, run.default, run.type, run.metavar)
