"""Active learning from the command line: ``--label-mask`` with a label query."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from torch_geometric_stream.cli import main

#: A label budget that 30 samples can spend.
BUDGET = ("--label-ratio", "0.2")


@pytest.mark.parametrize("query, threshold, step", [
    ("fixed-uncertainty", 0.9, None), ("variable-uncertainty", None, 0.01),
    ("randomized-uncertainty", None, 0.01), ("selective-sampling", None, None)])
def test_a_query_spends_at_most_its_budget_and_records_what_it_read(tmp_path, capsys,
                                                                    quick_run, query,
                                                                    threshold, step):
    out = tmp_path / "run.json"
    assert main(quick_run(out, *BUDGET, "--label-mask", query)) == 0
    record = json.loads(out.read_text())
    assert (record["label_mask"], record["query_threshold"], record["query_step"]) == (
        query, threshold, step)
    # a label is asked for only while fewer than 20 % of the samples seen so far were
    assert 0 < record["n_labels"] <= 0.2 * 30 + 1
    assert f"label ratio 0.2, labels asked by {query}, 30 samples" in capsys.readouterr().out


def test_the_query_options_set_the_query_and_are_refused_where_not_read(tmp_path, capsys,
                                                                       quick_run):
    runs = {}
    for threshold in ("0.2", "1"):
        out = tmp_path / f"t{threshold}.json"
        assert main(quick_run(out, *BUDGET, "--label-mask", "fixed-uncertainty",
                              "--query-threshold", threshold)) == 0
        runs[threshold] = json.loads(out.read_text())
    # the memory model's largest probability is 1 where it has one class's labels only:
    # a threshold of 1 asks about every sample while the budget allows, 0.2 never
    assert runs["0.2"]["n_labels"] == 0 and runs["1"]["n_labels"] > 0
    assert runs["1"]["query_threshold"] == 1.0
    capsys.readouterr()
    for options, message in (
            (["--label-mask", "variable-uncertainty", "--query-threshold", "0.5"],
             "--query-threshold is read by --label-mask fixed-uncertainty, not by "
             "--label-mask variable-uncertainty: drop it"),
            (["--query-step", "0.1"], "--query-step is read by --label-mask "
             "variable-uncertainty and randomized-uncertainty, not by --label-mask paper"),
            (["--label-mask", "fixed-uncertainty", "--query-threshold", "1.5"],
             "argument --query-threshold: expected a number in [0, 1], got '1.5'")):
        out = tmp_path / "refused.json"
        assert main(quick_run(out, *options)) == 2
        assert message in capsys.readouterr().err
        assert not out.exists()


def test_a_queried_run_resumes_to_the_uninterrupted_record(tmp_path, monkeypatch, quick_run,
                                                           interrupt_run_after, capsys):
    reference, out, checkpoint = tmp_path / "ref.json", tmp_path / "run.json", tmp_path / "c"
    options = [*BUDGET, "--label-mask", "randomized-uncertainty", "--label-delay", "3",
               "--model", "sledge-light", "--labeled-size", "10", "--unlabeled-size", "20"]
    assert main(quick_run(reference, *options)) == 0
    saving = quick_run(out, *options, "--checkpoint", str(checkpoint), "--checkpoint-every", "10")
    interrupt_run_after(14)
    assert main(saving) == 130
    monkeypatch.undo()
    assert main([*saving, "--resume", str(checkpoint)]) == 0
    resumed, whole = json.loads(out.read_text()), json.loads(reference.read_text())
    assert resumed["resumed_from"] == 10
    for key in ("accuracy", "confusion_matrix", "n_labels", "curve"):
        assert resumed[key] == whole[key], key
    capsys.readouterr()
    assert main([*saving, "--label-mask", "variable-uncertainty", "--resume",
                 str(checkpoint)]) == 2
    assert "label_mask" in capsys.readouterr().err


def test_a_query_reads_a_stream_as_it_comes(tmp_path):
    generator = np.random.default_rng(0)
    rows = ["a,b,label"] + [f"{x:.4f},{-x:.4f},{'yn'[int(x > 0)]}"
                            for x in generator.normal(size=80)]
    stream = tmp_path / "data.csv"
    stream.write_text("\n".join(rows) + "\n")
    outputs = []
    for name, options in (("whole", []), ("streamed", ["--stream", "--classes", "n,y"])):
        out = tmp_path / f"{name}.json"
        assert main(["run", "--dataset", str(stream), "--model", "memory", "--quiet",
                     "--label-mask", "selective-sampling", "--label-ratio", "0.1",
                     "--history", "full", "--output", str(out), *options]) == 0
        outputs.append(json.loads(Path(out).read_text()))
    whole, streamed = outputs
    assert streamed["n_labels"] == whole["n_labels"] > 0
    assert streamed["accuracy"] == whole["accuracy"]


def test_a_query_steps_eagerly_on_cuda_and_refuses_cuda_graphs(monkeypatch):
    from torch_geometric_stream.cli import run as run_module
    from torch_geometric_stream.cli.errors import UsageError
    from torch_geometric_stream.cli.main import build_parser

    monkeypatch.setattr(run_module, "check_device", lambda spec, gpu_capable: "cuda:0")
    parser = build_parser()
    plain = parser.parse_args(["run", "--device", "cuda"])
    assert run_module.run_device(plain, "sledge") == ("cuda:0", True)  # graphs by default
    queried = parser.parse_args(["run", "--device", "cuda", "--label-mask",
                                 "variable-uncertainty"])
    assert run_module.run_device(queried, "sledge") == ("cuda:0", False)
    forced = parser.parse_args(["run", "--device", "cuda", "--label-mask", "selective-sampling",
                                "--cuda-graph"])
    with pytest.raises(UsageError, match="--label-mask selective-sampling decides the label "
                                         "between them: drop --cuda-graph"):
        run_module.run_device(forced, "sledge")
