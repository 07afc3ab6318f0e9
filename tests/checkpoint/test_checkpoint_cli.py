"""``run --checkpoint/--checkpoint-every/--resume``: a killed run resumes exactly."""
from __future__ import annotations

import csv
import gzip
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from ctrl_c_helpers import reached_by_ctrl_c

from torch_geometric_stream.cli import main
from torch_geometric_stream.cli import run as run_module

N = 400


def run_argv(samples: int = N) -> list[str]:
    """A small, fast SLeDGe run on the synthetic stream."""
    return ["run", "--dataset", "synthetic", "--synthetic-samples", str(samples), "--model",
            "sledge", "--labeled-size", "10", "--unlabeled-size", "40", "--hidden-channels",
            "16", "--quiet"]


RUN = run_argv()
#: Metrics that must be equal between an interrupted and an uninterrupted run
#: (timings are not).
EXACT = ("n_samples", "n_labels", "accuracy", "accuracy_last_20", "accuracy_last_10",
         "accuracy_last_5", "dataset", "model", "seed", "config")


def outputs(folder: Path, name: str) -> list[str]:
    return ["--output", str(folder / f"{name}.json"), "--csv", str(folder / f"{name}.csv")]


def assert_same_run(folder: Path, name: str, reference: str = "reference") -> None:
    assert (folder / f"{name}.csv").read_text() == (folder / f"{reference}.csv").read_text()
    got, expected = (json.loads((folder / f"{run}.json").read_text())
                     for run in (name, reference))
    assert {key: got[key] for key in EXACT} == {key: expected[key] for key in EXACT}


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """An uninterrupted run: reference.json and reference.csv."""
    folder = tmp_path_factory.mktemp("reference")
    assert main([*RUN, *outputs(folder, "reference")]) == 0
    return folder


def test_same_seed_twice_gives_identical_predictions(reference, tmp_path):
    assert main([*RUN, *outputs(reference, "again")]) == 0
    assert_same_run(reference, "again")


def _run_until_checkpoint(folder: Path, name: str) -> tuple[subprocess.Popen, Path]:
    """A ``run`` process of :data:`RUN` checkpointing to ``<name>.ckpt`` every 50
    samples, its outputs ``<name>.json`` / ``.csv`` in ``folder``, once it has
    saved its first checkpoint (Ctrl-C reaches it, even where this process
    ignores it); and that checkpoint."""
    checkpoint = folder / f"{name}.ckpt"
    command = [sys.executable, "-m", "torch_geometric_stream", *RUN, "--checkpoint",
               str(checkpoint), "--checkpoint-every", "50", *outputs(folder, name)]
    process = subprocess.Popen(reached_by_ctrl_c(command),
                               env={**os.environ, "OMP_NUM_THREADS": "1"},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while not checkpoint.exists():
        if process.poll() is not None:
            pytest.fail(f"the run ended before its first checkpoint: "
                        f"{process.stderr.read().decode()}")
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail("no checkpoint after 300 s")
        time.sleep(0.005)
    return process, checkpoint


def test_killed_run_resumes_exactly(reference):
    folder = reference
    process, checkpoint = _run_until_checkpoint(folder, "killed")
    process.send_signal(signal.SIGKILL)
    process.wait()
    process.stderr.close()
    assert process.returncode == -signal.SIGKILL
    position = torch.load(checkpoint, weights_only=False)["position"]
    assert 0 < position < N and position % 50 == 0
    assert not (folder / "killed.csv").exists()  # it really died mid-stream

    resume = [*RUN, "--resume", str(checkpoint), "--checkpoint", str(checkpoint),
              "--checkpoint-every", "50", *outputs(folder, "resumed")]
    assert main(resume) == 0
    assert_same_run(folder, "resumed")
    assert json.loads((folder / "resumed.json").read_text())["resumed_from"] == position
    # The final checkpoint sits at the end of the stream: resuming it again
    # only rewrites the same outputs.
    assert torch.load(checkpoint, weights_only=False)["position"] == N
    assert main([*RUN, "--resume", str(checkpoint), *outputs(folder, "finished")]) == 0
    assert_same_run(folder, "finished")


def test_ctrl_c_stops_a_run_process_at_the_end_of_a_sample_saved_there(reference):
    """A real Ctrl-C: exit code 130, the checkpoint, the partial record and
    per-sample file at the sample it stopped after, the line saying so; the
    resumed run is the uninterrupted one, and its files replace the partial ones."""
    folder = reference
    process, checkpoint = _run_until_checkpoint(folder, "ctrl_c")
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=300)
    assert process.returncode == 130, err.decode()
    position = torch.load(checkpoint, weights_only=False)["position"]
    partial, partial_csv = folder / "ctrl_c.json.partial", folder / "ctrl_c.csv.partial"
    record = json.loads(partial.read_text())
    assert 50 <= position == record["interrupted_at"] == record["n_samples"] < N
    assert not (folder / "ctrl_c.json").exists() and not (folder / "ctrl_c.csv").exists()
    reference_rows = (folder / "reference.csv").read_text().splitlines()
    assert partial_csv.read_text().splitlines() == reference_rows[:1 + position]
    assert err.decode().strip().splitlines()[-1] == (
        f"run interrupted after sample {position}; its metrics so far are in {partial}, "
        f"{partial_csv}; its state at that sample is in {checkpoint}: rerun the same command "
        f"with --resume {checkpoint} to continue from it")
    assert main([*RUN, "--resume", str(checkpoint), *outputs(folder, "ctrl_c")]) == 0
    assert_same_run(folder, "ctrl_c")
    assert not partial.exists() and not partial_csv.exists()


def test_ctrl_c_mid_sample_finishes_it_and_resumes_from_it_exactly(
        reference, monkeypatch, capsys, ctrl_c_in_sample):
    """Ctrl-C as a sample's input is scaled, before the learner sees it: the
    sample is learned whole, the run saves its checkpoint after it (not at the
    last periodic one) and its metrics so far, which are the uninterrupted run's
    first samples'."""
    folder, checkpoint = reference, reference / "mid.ckpt"
    saving = [*RUN, "--checkpoint", str(checkpoint), "--checkpoint-every", "50",
              *outputs(folder, "mid")]
    ctrl_c_in_sample(123)
    assert main(saving) == 130
    assert torch.load(checkpoint, weights_only=False)["position"] == 124
    partial = json.loads((folder / "mid.json.partial").read_text())
    with (folder / "reference.csv").open() as rows:
        correct = [int(row["correct"]) for row in csv.DictReader(rows)][:124]
    assert (partial["interrupted_at"], partial["n_samples"]) == (124, 124)
    assert partial["accuracy"] == pytest.approx(sum(correct) / 124, abs=1e-12)
    assert capsys.readouterr().out.splitlines()[0].endswith("; interrupted after sample 124")
    monkeypatch.undo()
    assert main([*saving, "--resume", str(checkpoint)]) == 0
    assert json.loads((folder / "mid.json").read_text())["resumed_from"] == 124
    assert_same_run(folder, "mid")
    assert not (folder / "mid.json.partial").exists()


@pytest.mark.parametrize("model", [
    ["--model", "tlp"], ["--model", "ressl"], ["--model", "hdssl"],
    ["--model", "sledge-light", "--scaling", "robust-rescale", "--robust-reservoir", "50",
     "--class-prior", "stream"],
])
def test_every_model_family_resumes_exactly(tmp_path, monkeypatch, interrupt_run_after, model):
    """The baselines, and SLeDGe with the robust scaler's reservoir and the
    stream's class prior (state beyond the learner's parameters and memory)."""
    argv = ["run", "--dataset", "synthetic", "--synthetic-samples", "200", "--label-ratio",
            "0.05", "--quiet", *model]
    assert main([*argv, *outputs(tmp_path, "reference")]) == 0
    checkpoint = tmp_path / "run.ckpt"
    saving = [*argv, "--checkpoint", str(checkpoint), "--checkpoint-every", "50"]
    interrupt_run_after(120)
    assert main(saving) == 130
    monkeypatch.undo()
    assert main([*saving, "--resume", str(checkpoint), *outputs(tmp_path, "resumed")]) == 0
    assert json.loads((tmp_path / "resumed.json").read_text())["resumed_from"] == 100
    assert_same_run(tmp_path, "resumed")


@pytest.mark.parametrize("flags, message", [
    (["--checkpoint-every", "10"], "--checkpoint-every needs --checkpoint FILE"),
    (["--seed", "0,1", "--checkpoint", "{dir}/c.ckpt"], "single seed, got 2"),
    (["--seed", "0,1", "--resume", "{dir}/absent.ckpt"], "single seed, got 2"),
    (["--checkpoint", "{dir}/missing/c.ckpt"], "--checkpoint: folder .*missing does not exist"),
    (["--resume", "{dir}/absent.ckpt"], "--resume: file .*absent.ckpt does not exist"),
])
def test_flag_errors(tmp_path, capsys, flags, message):
    flags = [flag.format(dir=tmp_path) for flag in flags]
    assert main([*run_argv(20), *flags]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_a_resume_file_that_is_no_checkpoint_is_named_in_one_line(tmp_path, capsys):
    notes = tmp_path / "notes.txt"
    notes.write_text("not a checkpoint\n")
    assert main([*run_argv(20), "--resume", str(notes)]) == 2
    assert capsys.readouterr().err == \
        f"error: --resume: {notes} is not a torch_geometric_stream checkpoint\n"


@pytest.mark.parametrize("files, message", [
    (["--checkpoint", "{dir}/mine.csv"], "--dataset and --checkpoint name one file"),
    (["--output", "{dir}/mine.csv"], "--dataset and --output name one file"),
    (["--output", "{dir}/run.out", "--csv", "{dir}/./run.out"],
     "--output and --csv name one file"),
    (["--checkpoint", "{dir}/run.png", "--plot", "{dir}/run.png"],
     "--plot and --checkpoint name one file"),
    (["--resume", "{dir}/run.ckpt", "--output", "{dir}/run.ckpt"],
     "--resume and --output name one file"),
])
def test_an_output_that_would_overwrite_another_file_of_the_run_is_refused(
        tmp_path, capsys, monkeypatch, files, message):
    """Above all the stream file: ``--checkpoint mine.csv`` replaced the data by a
    checkpoint."""
    stream = _write_stream_csv(tmp_path / "mine.csv")
    before = stream.read_text()
    monkeypatch.setattr(run_module, "prequential", lambda *args, **kwargs: pytest.fail("ran"))
    argv = ["run", "--dataset", str(stream), "--model", "memory", "--quiet",
            *(flag.format(dir=tmp_path) for flag in files)]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert error.startswith(f"error: {message}") and len(error.splitlines()) == 1, error
    assert stream.read_text() == before


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_checkpoint_in_a_folder_that_takes_no_file_is_refused_before_the_run(capsys,
                                                                             monkeypatch):
    """/proc takes no new file, even for root (whom file permissions do not stop)."""
    monkeypatch.setattr(run_module, "prequential", lambda *args, **kwargs: pytest.fail("ran"))
    assert main([*run_argv(20), "--checkpoint", "/proc/run.ckpt"]) == 2
    assert capsys.readouterr().err == ("error: --checkpoint: cannot write in folder /proc "
                                       "(No such file or directory)\n")


def test_resume_refuses_another_run(tmp_path, capsys):
    checkpoint = tmp_path / "short.ckpt"
    short = [*run_argv(30), "--checkpoint", str(checkpoint)]
    assert main(short) == 0
    assert main([*short, "--resume", str(checkpoint), "--seed", "1", "--lr", "0.01"]) == 2
    error = capsys.readouterr().err
    assert "seed=0 in the checkpoint, 1 here" in error
    assert "config.lr=0.001 in the checkpoint, 0.01 here" in error
    assert main([*short, "--resume", str(checkpoint), "--model", "sledge-light"]) == 2
    assert "model='sledge' in the checkpoint, 'sledge-light' here" in capsys.readouterr().err


def test_resume_refuses_other_approximations(tmp_path, capsys):
    checkpoint = tmp_path / "exact.ckpt"
    exact = [*run_argv(30), "--checkpoint", str(checkpoint)]
    assert main(exact) == 0
    assert main([*exact, "--resume", str(checkpoint), "--reselect-every", "4"]) == 2
    assert "config.reselect_every=1 in the checkpoint, 4 here" in capsys.readouterr().err
    assert main([*exact, "--resume", str(checkpoint)]) == 0  # the exact run resumes
    # and the other way round: an approximate run's checkpoint does not resume exactly
    approximate = [*run_argv(30), "--checkpoint", str(checkpoint), "--reselect-every", "4"]
    assert main(approximate) == 0
    assert main([*exact, "--resume", str(checkpoint)]) == 2
    assert "config.reselect_every=4 in the checkpoint, 1 here" in capsys.readouterr().err


def test_resume_refuses_another_source_merge_and_reads_an_older_checkpoint_as_raw(
        tmp_path, capsys):
    checkpoint = tmp_path / "unit.ckpt"
    unit = [*run_argv(30), "--checkpoint", str(checkpoint), "--source-merge", "unit"]
    assert main(unit) == 0  # (the synthetic stream: sledge scales its own input)
    assert main([*run_argv(30), "--resume", str(checkpoint)]) == 2
    assert ("config.source_merge='unit' in the checkpoint, 'raw' here"
            in capsys.readouterr().err)
    assert main([*unit, "--resume", str(checkpoint)]) == 0
    # a checkpoint written before the entry existed ran with "raw"
    raw = [*run_argv(30), "--checkpoint", str(checkpoint)]
    assert main(raw) == 0
    payload = torch.load(checkpoint, weights_only=False)
    assert payload["extra"].pop("config.source_merge") == "raw"
    assert payload["learner"]["settings"].pop("source_merge") == "raw"
    torch.save(payload, checkpoint)
    assert main([*unit, "--resume", str(checkpoint)]) == 2
    assert ("config.source_merge='raw' in the checkpoint, 'unit' here"
            in capsys.readouterr().err)
    assert main([*raw, "--resume", str(checkpoint)]) == 0


def test_resume_refuses_another_denormal_setting(tmp_path, capsys):
    checkpoint = tmp_path / "flushed.ckpt"
    flushed = [*run_argv(30), "--checkpoint", str(checkpoint)]
    assert main(flushed) == 0  # flushing is the default
    assert main([*flushed, "--resume", str(checkpoint), "--no-flush-denormal"]) == 2
    assert "flush_denormal=True in the checkpoint, False here" in capsys.readouterr().err


def test_resume_refuses_a_synthetic_stream_of_another_length_cut_to_the_same_limit(
        tmp_path, capsys):
    """The first 30 samples of a 400-sample synthetic stream are not a 30-sample
    stream (the drift sits elsewhere), though both runs are 30 samples long."""
    checkpoint = tmp_path / "cut.ckpt"
    cut = [*run_argv(400), "--limit", "30", "--checkpoint", str(checkpoint)]
    assert main(cut) == 0
    assert main([*run_argv(30), "--limit", "30", "--resume", str(checkpoint)]) == 2
    assert "synthetic_samples=400 in the checkpoint, 30 here" in capsys.readouterr().err
    assert main([*cut, "--resume", str(checkpoint)]) == 0


def test_checkpoints_older_than_an_entry_resume_at_its_old_value(tmp_path, capsys):
    """Checkpoints from before flushing denormals (and before an option, or
    leaving it out at its old value) lack the entry: they ran with the old value."""
    checkpoint = tmp_path / "old.ckpt"
    old = [*run_argv(30), "--checkpoint", str(checkpoint), "--no-flush-denormal"]
    assert main(old) == 0
    payload = torch.load(checkpoint, weights_only=False)
    assert payload["extra"]["flush_denormal"] is False
    del payload["extra"]["flush_denormal"], payload["extra"]["config.count_offset"]
    torch.save(payload, checkpoint)
    assert main([*old, "--resume", str(checkpoint)]) == 0
    capsys.readouterr()
    assert main([*run_argv(30), "--resume", str(checkpoint)]) == 2
    assert "flush_denormal=False in the checkpoint, True here" in capsys.readouterr().err
    assert main([*old, "--resume", str(checkpoint), "--count-offset", "0"]) == 2
    assert "config.count_offset=1 in the checkpoint, 0 here" in capsys.readouterr().err


@pytest.mark.parametrize("stop_after", [30, 20], ids=["at_the_end", "mid_stream"])
def test_resume_refuses_a_checkpoint_without_the_record_of_its_samples(
        tmp_path, capsys, monkeypatch, interrupt_run_after, stop_after):
    """The outputs of a resumed run cover the whole stream: a checkpoint saved
    by hand with ``record=None`` cannot give them (before, one at the stream's
    end crashed in ``prequential`` and one mid-stream gave metrics of the
    resumed part only, unmarked)."""
    checkpoint, output = tmp_path / "bare.ckpt", tmp_path / "resumed.json"
    run = [*run_argv(30), "--checkpoint", str(checkpoint), "--checkpoint-every", "10"]
    if stop_after < 30:
        interrupt_run_after(stop_after)
    main(run)
    monkeypatch.undo()
    payload = torch.load(checkpoint, weights_only=False)
    assert payload["position"] == stop_after
    payload["record"] = None
    torch.save(payload, checkpoint)
    capsys.readouterr()
    assert main([*run, "--resume", str(checkpoint), "--output", str(output)]) == 2
    assert (f"--resume: checkpoint {checkpoint} holds no record of its first {stop_after} "
            "samples (saved with record=None)") in capsys.readouterr().err
    assert not output.exists()


def _write_stream_csv(path: Path, first_feature: str = "0.5") -> Path:
    """A 30-row, two-class stream file: features a, b, the label last."""
    path.parent.mkdir(exist_ok=True)
    rows = ["a,b,label", *(f"{first_feature if i == 0 else i % 3},{1 - i % 2},{i % 2}"
                           for i in range(30))]
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("saving", [True, False], ids=["checkpoint", "no_checkpoint"])
def test_resume_refuses_a_stream_file_that_changed(tmp_path, capsys, saving):
    """A checkpoint of a run on a stream file resumes on that file's bytes and
    label column only: edited, replaced by another file of its name, or read by
    another label column, it is refused with a line naming what differs; by a
    resume that saves no checkpoint (no --checkpoint) too."""
    stream = _write_stream_csv(tmp_path / "data" / "mine.csv")
    checkpoint = tmp_path / "mine.ckpt"
    argv = ["run", "--dataset", str(stream), "--model", "sledge-light", "--quiet",
            "--checkpoint", str(checkpoint)]
    assert main(argv) == 0
    resume = [*(argv if saving else argv[:-2]), "--resume", str(checkpoint)]
    # the same file by another path resumes
    assert main([*resume[:2], str(tmp_path / "data" / ".." / "data" / "mine.csv"),
                 *resume[3:]]) == 0
    capsys.readouterr()
    _write_stream_csv(stream, first_feature="0.25")  # one value edited, same shape
    assert main(resume) == 2
    error = capsys.readouterr().err
    assert re.fullmatch(r"error: --resume: checkpoint .*mine.ckpt was made by another run: "
                        r"dataset_sha256='[0-9a-f]{8}' in the checkpoint, '[0-9a-f]{8}' here\n",
                        error), error
    _write_stream_csv(stream)  # restored: it resumes again
    assert main(resume) == 0
    capsys.readouterr()
    other = _write_stream_csv(tmp_path / "other" / "mine.csv", first_feature="2")
    assert main([*resume[:2], str(other), *resume[3:]]) == 2
    assert "dataset_sha256=" in capsys.readouterr().err
    assert main([*resume, "--label-column", "a"]) == 2
    assert "label_column=None in the checkpoint, 'a' here" in capsys.readouterr().err


def test_resume_refuses_a_stream_file_whose_classes_differ(tmp_path, capsys):
    """The file's bytes and label column are not its classes: a checkpoint written
    before the label order changed (numbers first since session 72) has the same
    digest and other class ids. Its class names are kept and checked; a checkpoint
    older than them is refused, as an old synthetic one that never kept its length."""
    stream = tmp_path / "mine.csv"
    stream.write_text("a,label\n" + "".join(f"{i},{'10' if i % 2 else 'x'}\n"
                                             for i in range(30)))
    checkpoint = tmp_path / "mine.ckpt"
    argv = ["run", "--dataset", str(stream), "--model", "sledge-light", "--quiet",
            "--checkpoint", str(checkpoint)]
    assert main(argv) == 0
    resume = [*argv, "--resume", str(checkpoint)]
    payload = torch.load(checkpoint, weights_only=False)
    assert payload["extra"]["classes"] == ["10", "x"]
    assert main(resume) == 0  # the same classes resume
    capsys.readouterr()
    payload["extra"]["classes"] = ["x", "10"]  # the text order of before
    torch.save(payload, checkpoint)
    assert main(resume) == 2
    assert ("classes=['x', '10'] in the checkpoint, ['10', 'x'] here"
            in capsys.readouterr().err)
    payload["extra"]["classes"] = [str(i) for i in range(12)]  # a long list is cut
    torch.save(payload, checkpoint)
    assert main(resume) == 2
    assert ("classes=['0', '1', '2', '3', '4', '5', '6', '7', '8', '9', ... (12 in all)] in "
            "the checkpoint, ['10', 'x'] here" in capsys.readouterr().err)
    del payload["extra"]["classes"]
    torch.save(payload, checkpoint)
    assert main(resume) == 2
    assert ("classes not in the checkpoint (older than the entry), ['10', 'x'] here"
            in capsys.readouterr().err)


def test_a_limited_run_resumes_on_its_rows_whatever_follows_them(tmp_path, capsys):
    """With --limit, the checkpoint holds the digest of the rows the run reads: a
    file whose tail grew or changed resumes, one whose rows read changed does not."""
    stream = _write_stream_csv(tmp_path / "mine.csv")
    checkpoint = tmp_path / "mine.ckpt"
    argv = ["run", "--dataset", str(stream), "--model", "sledge-light", "--quiet",
            "--limit", "20", "--checkpoint", str(checkpoint)]
    assert main(argv) == 0
    resume = [*argv, "--resume", str(checkpoint)]
    with stream.open("a") as handle:
        handle.write("7,8,9\n1,x,0\n")  # appended, a bad row among them: never read
    assert main(resume) == 0
    capsys.readouterr()
    _write_stream_csv(stream, first_feature="0.25")  # the first row read edited
    assert main(resume) == 2
    assert "dataset_sha256=" in capsys.readouterr().err


def test_a_rerun_that_would_replace_its_checkpoint_is_warned_of(tmp_path, capsys):
    """A rerun that forgot --resume starts from the first sample: it says so, and
    that its first checkpoint replaces the state it could go on from."""
    stream = _write_stream_csv(tmp_path / "mine.csv")
    checkpoint = tmp_path / "mine.ckpt"
    argv = ["run", "--dataset", str(stream), "--model", "sledge-light", "--quiet",
            "--checkpoint", str(checkpoint)]
    assert main(argv) == 0
    assert "warning" not in capsys.readouterr().err  # no file there yet
    assert main(argv) == 0
    assert capsys.readouterr().err == (
        f"warning: --checkpoint {checkpoint} exists; this run starts from the first sample "
        f"and its first checkpoint replaces it (--resume {checkpoint} goes on from it)\n")
    assert main([*argv, "--resume", str(checkpoint)]) == 0
    assert "warning" not in capsys.readouterr().err
    # resumed from another file, it goes on from there (before: it said "starts from
    # the first sample"), and still replaces this one
    other = tmp_path / "other.ckpt"
    other.write_bytes(checkpoint.read_bytes())
    assert main([*argv, "--resume", str(other)]) == 0
    assert capsys.readouterr().err == (
        f"warning: --checkpoint {checkpoint} exists; this run goes on from --resume {other} "
        f"and its first checkpoint replaces it (--resume {checkpoint} goes on from it)\n")


def test_a_bounded_run_resumes_exactly_and_a_run_of_the_other_history_is_refused(
        tmp_path, capsys, monkeypatch, interrupt_run_after):
    argv = [*run_argv(60), "--history", "bounded"]
    whole = tmp_path / "whole.json"
    assert main([*argv, "--output", str(whole)]) == 0
    checkpoint = tmp_path / "bounded.ckpt"
    saving = [*argv, "--checkpoint", str(checkpoint), "--checkpoint-every", "20"]
    interrupt_run_after(30)
    assert main(saving) == 130
    monkeypatch.undo()
    resumed = tmp_path / "resumed.json"
    assert main([*saving, "--resume", str(checkpoint), "--output", str(resumed)]) == 0
    got, expected = (json.loads(path.read_text()) for path in (resumed, whole))
    assert got["resumed_from"] == 20
    same = (*EXACT, "kappa", "kappa_m", "kappa_t", "confusion_matrix", "tail_samples")
    assert {key: got[key] for key in same} == {key: expected[key] for key in same}
    capsys.readouterr()
    assert main([*run_argv(60), "--resume", str(checkpoint)]) == 2
    assert "history='bounded' in the checkpoint, 'full' here" in capsys.readouterr().err


def _shopper_folder(root: Path, reverse: bool = False) -> Path:
    """A data folder holding Shopper: the bundled copy's rows (reversed: another copy
    of the dataset, of the same name and length)."""
    from torch_geometric_stream.datasets.bundled import bundled_data_folder
    text = gzip.decompress((bundled_data_folder() / "online_shoppers_intention.csv.gz")
                           .read_bytes()).decode()
    header, *rows = text.splitlines()
    (root / "Shopper").mkdir(parents=True)
    (root / "Shopper" / "online_shoppers_intention.csv").write_text(
        "\n".join([header, *(rows[::-1] if reverse else rows)]) + "\n")
    return root


def test_resume_refuses_another_copy_of_a_named_dataset(tmp_path, capsys):
    """Before: a named dataset was known by its name and length only, so a checkpoint
    went on over another copy of it (rows reversed here)."""
    checkpoint, out = tmp_path / "shopper.ckpt", tmp_path / "shopper.json"
    first = ["run", "--dataset", "Shopper", "--model", "memory", "--limit", "30", "--quiet",
             "--checkpoint", str(checkpoint), "--output", str(out)]
    root, other = _shopper_folder(tmp_path / "data"), _shopper_folder(tmp_path / "other", True)
    assert main([*first, "--root", str(root)]) == 0
    digest = json.loads(out.read_text())["data_sha256"]
    assert re.fullmatch("[0-9a-f]{64}", digest)
    assert torch.load(checkpoint, weights_only=False)["extra"]["data_sha256"] == digest
    assert main([*first, "--root", str(other), "--resume", str(checkpoint)]) == 2
    assert re.search(rf"data_sha256='{digest}' in the checkpoint, '[0-9a-f]{{64}}' here",
                     capsys.readouterr().err)
    assert main([*first, "--root", str(root), "--resume", str(checkpoint)]) == 0


def test_resume_refuses_another_thread_count(tmp_path, capsys):
    """Before: accepted, the record naming the new count, though a thread count can
    change a near-tie's prediction (see checkpoint.py)."""
    checkpoint = tmp_path / "threads.ckpt"
    argv = ["run", "--dataset", "synthetic", "--model", "memory", "--limit", "30", "--quiet",
            "--checkpoint", str(checkpoint)]
    assert main([*argv, "--threads", "2"]) == 0
    assert main([*argv, "--resume", str(checkpoint)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: --resume: checkpoint {checkpoint} was made by another run: threads=2 in the "
        f"checkpoint, 1 here")
    assert main([*argv, "--threads", "2", "--resume", str(checkpoint)]) == 0


def test_checkpoints_older_than_the_threads_and_the_data_digest_resume_unchecked(tmp_path):
    """Their values in such a run are not known: accepted, as before they were kept."""
    checkpoint = tmp_path / "old.ckpt"
    argv = ["run", "--dataset", "synthetic", "--model", "memory", "--limit", "30", "--quiet",
            "--checkpoint", str(checkpoint)]
    assert main(argv) == 0
    payload = torch.load(checkpoint, weights_only=False)
    del payload["extra"]["threads"], payload["extra"]["data_sha256"]
    torch.save(payload, checkpoint)
    assert main([*argv, "--threads", "2", "--resume", str(checkpoint)]) == 0
