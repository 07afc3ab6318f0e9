"""``run --stream``: a CSV read row by row as the run goes (a file, or standard input)."""
from __future__ import annotations

import fcntl
import io
import json
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
import torch

from torch_geometric_stream.cli import main
from torch_geometric_stream.cli.run import STREAM_DIGEST
from torch_geometric_stream.datasets.csv_stream import CSVRowStream

#: A small SLeDGe run: the learner with memory and graph, fast.
FAST = ["--model", "sledge", "--labeled-size", "10", "--unlabeled-size", "30",
        "--hidden-channels", "16", "--quiet"]
#: Record entries a run's timing and machine do not change.
SAME = ("n_samples", "n_labels", "accuracy", "accuracy_last_20", "accuracy_last_10",
        "accuracy_last_5", "tail_samples", "confusion_matrix", "recall_per_class",
        "balanced_accuracy", "kappa", "kappa_m", "kappa_t", "curve", "class_names", "config")


def _csv(path: Path, rows: int = 300) -> Path:
    """Three drifting classes named by words, a header, the label in the middle column."""
    generator = np.random.default_rng(1)
    lines = ["f1,kind,f2,f3"]
    for index in range(rows):
        label = generator.integers(3)
        f1, f2, f3 = generator.normal(2.0 * label + index / rows, 1.0, size=3)
        lines.append(f"{f1:.5f},{'abc'[label]},{f2:.5f},{f3:.5f}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(tmp_path: Path, name: str, *options: str) -> dict:
    out, csv = tmp_path / f"{name}.json", tmp_path / f"{name}.csv"
    csv_option = ["--csv", str(csv)] if "full" in options else []
    assert main(["run", *FAST, "--output", str(out), *csv_option, *options]) == 0
    record = json.loads(out.read_text())
    if csv_option:
        record["per_sample"] = csv.read_text()
    return record


def _same(streamed: dict, whole: dict) -> None:
    """``streamed`` holds ``whole``'s entries of :data:`SAME` (``tail_samples``: a
    bounded history's) and per-sample file, with equal values."""
    assert [key for key in SAME if key in streamed] == [key for key in SAME if key in whole]
    for key in [key for key in SAME if key in whole] + ["per_sample"] * ("per_sample" in whole):
        assert streamed[key] == whole[key], key
    assert (streamed["dataset"], streamed["dataset_source"]) == (
        whole["dataset"], whole["dataset_source"])


@pytest.mark.parametrize("mask", ["bernoulli", "capymoa"])
@pytest.mark.parametrize("history", ["full", "bounded"])
def test_a_streamed_run_gives_the_whole_file_runs_record(tmp_path, mask, history):
    stream = str(_csv(tmp_path / "data.csv"))
    common = ["--dataset", stream, "--label-column", "kind", "--label-mask", mask,
              "--label-ratio", "0.2", "--seed", "3", "--history", history]
    whole = _run(tmp_path, "whole", *common)
    streamed = _run(tmp_path, "streamed", *common, "--stream", "--classes", "a,b,c")
    _same(streamed, whole)
    assert whole["n_samples"] == 300 and 30 < whole["n_labels"] < 90
    assert whole["class_names"] == ["a", "b", "c"]


def test_a_streamed_run_defaults_to_a_bounded_history_and_stops_at_the_limit(tmp_path):
    stream = str(_csv(tmp_path / "data.csv"))
    common = ["--dataset", stream, "--label-column", "1", "--label-mask", "bernoulli",
              "--label-ratio", "0.3", "--limit", "120"]
    whole = _run(tmp_path, "whole", *common, "--history", "bounded")
    streamed = _run(tmp_path, "streamed", *common, "--stream", "--classes", "a,b,c")
    assert (streamed["history"], streamed["n_samples"], streamed["limit"]) == ("bounded", 120, 120)
    _same(streamed, whole)


def test_classes_in_another_order_are_other_class_ids(tmp_path):
    stream = str(_csv(tmp_path / "data.csv", rows=60))
    record = _run(tmp_path, "streamed", "--dataset", stream, "--label-column", "kind",
                  "--label-mask", "bernoulli", "--stream", "--classes", "c,a,b",
                  "--history", "full")
    labels = [line.split(",")[1] for line in record["per_sample"].splitlines()[1:]]
    kinds = [line.split(",")[1] for line in Path(stream).read_text().splitlines()[1:]]
    assert labels == [str("cab".index(kind)) for kind in kinds]
    assert record["class_names"] == ["c", "a", "b"]


class _FakeStdin:
    """Standard input whose bytes come from a generator, a line at a time (a pipe)."""

    def __init__(self, lines: Iterator[bytes]) -> None:
        self.buffer = io.BufferedReader(_GeneratorReader(lines))


class _GeneratorReader(io.RawIOBase):
    def __init__(self, lines: Iterator[bytes]) -> None:
        self._lines, self._left = lines, b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:
        if not self._left:
            self._left = next(self._lines, b"")
        size = min(len(buffer), len(self._left))
        buffer[:size], self._left = self._left[:size], self._left[size:]
        return size


def _endless(path: Path) -> Iterator[bytes]:
    """The lines of ``path``, then the same data rows again and again: no end."""
    header, *rows = path.read_bytes().splitlines(keepends=True)
    yield header
    while True:
        yield from rows


def test_standard_input_streams_as_the_file_and_stops_at_the_limit(tmp_path, monkeypatch):
    stream = _csv(tmp_path / "data.csv")
    common = ["--label-column", "kind", "--label-mask", "capymoa", "--label-ratio", "0.2",
              "--history", "full", "--limit", "300"]
    whole = _run(tmp_path, "whole", "--dataset", str(stream), *common)
    monkeypatch.setattr(sys, "stdin", _FakeStdin(_endless(stream)))  # endless: the limit ends it
    streamed = _run(tmp_path, "stdin", "--dataset", "-", "--stream", "--classes", "a,b,c",
                    *common)
    assert (streamed["dataset"], streamed["dataset_source"]) == ("<stdin>", "stdin")
    _same({**streamed, "dataset": "data.csv", "dataset_source": whole["dataset_source"]},
          whole)


def _error(capsys, *argv: str) -> str:
    assert main(["run", "--quiet", *argv]) == 2
    return capsys.readouterr().err.strip()


def test_a_label_outside_the_classes_is_an_error_naming_its_line(tmp_path, capsys):
    stream = _csv(tmp_path / "data.csv", rows=20)
    lines = stream.read_text().splitlines()
    lines[7] = lines[7].replace(",b,", ",B,").replace(",a,", ",B,").replace(",c,", ",B,")
    stream.write_text("\n".join(lines) + "\n")
    out = tmp_path / "run.json"
    assert _error(capsys, "--dataset", str(stream), "--label-column", "kind", "--stream",
                  "--classes", "a,b,c", "--label-mask", "bernoulli", "--model", "base",
                  "--output", str(out)) == (
        "error: data.csv line 8: label 'B' is none of the classes given (a, b, c)")
    assert not out.exists()


def test_a_nan_label_stops_a_streamed_run_as_it_stops_the_whole_file_run(tmp_path, capsys):
    # before: the whole file ran with a class 'nan' (its other labels words), the stream
    # said 'nan' was none of the classes given
    stream = _csv(tmp_path / "data.csv", rows=20)
    lines = stream.read_text().splitlines()
    fields = lines[7].split(",")
    lines[7] = ",".join([fields[0], "NaN", *fields[2:]])
    stream.write_text("\n".join(lines) + "\n")
    message = ("error: data.csv line 8: column 'kind' (the label) holds 'NaN', not a label; "
               "every row needs its true label")
    whole = ["--dataset", str(stream), "--label-column", "kind", "--model", "base"]
    assert _error(capsys, *whole) == message
    assert _error(capsys, *whole, "--stream", "--classes", "a,b,c",
                  "--label-mask", "bernoulli") == message


def test_a_suspect_label_column_is_warned_of_where_the_file_is_read_whole(tmp_path, capsys):
    # before: a run on an ID column, one class per row, was silent
    stream = tmp_path / "ids.csv"
    stream.write_text("id,f,kind\n" + "".join(f"{row},{row % 3},{row % 2}\n"
                                               for row in range(30)))
    options = ["run", "--quiet", "--dataset", str(stream), "--model", "base",
               "--label-column", "id"]
    assert main(options) == 0
    assert [line for line in capsys.readouterr().err.splitlines()
            if line.startswith("warning:")] == [
        "warning: ids.csv: column 'id' (the label) has 30 distinct values in 30 rows, 30 of "
        "them in one row only: is it the label? (label_column, --label-column on the "
        "command line, picks another)"]
    classes = ",".join(map(str, range(30)))
    assert main([*options, "--stream", "--classes", classes, "--label-mask", "bernoulli",
                 "--scaling", "online"]) == 0
    assert "warning:" not in capsys.readouterr().err  # its classes are given


@pytest.mark.parametrize("options, message", [
    (["--label-mask", "paper"], "error: --label-mask paper needs the whole stream (the first "
     "sample of each class, floor(R*T) labels); with --stream give --label-mask bernoulli "
     "or capymoa, or a label query (fixed-uncertainty, variable-uncertainty, "
     "randomized-uncertainty, selective-sampling)"),
    (["--label-mask", "bernoulli", "--scaling", "global"], "error: --stream: scaling global "
     "(from flag --scaling) scales by the range of the whole stream, which a stream read as "
     "it comes does not know: pass --scaling online or robust (online-rescale or "
     "robust-rescale for the SLeDGe family)"),
    (["--label-mask", "bernoulli", "--seed", "0,1", "--jobs", "2"], "error: --stream runs "
     "one seed at a time (each seed reads the file again): drop --jobs"),
])
def test_what_needs_the_whole_stream_is_refused_with_stream(tmp_path, capsys, options,
                                                            message):
    stream = str(_csv(tmp_path / "data.csv", rows=20))
    assert _error(capsys, "--dataset", stream, "--label-column", "kind", "--stream",
                  "--classes", "a,b,c", "--model", "base", *options) == message


def test_stream_options_are_refused_where_they_do_not_apply(tmp_path, capsys):
    stream = str(_csv(tmp_path / "data.csv", rows=20))
    assert _error(capsys, "--dataset", stream, "--stream", "--label-mask", "bernoulli") == (
        "error: --stream needs --classes A,B,... (the class names, class ids in that order): "
        "a stream read as it comes cannot sort all its labels")
    assert _error(capsys, "--dataset", stream, "--classes", "a,b") == (
        "error: --classes applies to --stream (a file read whole takes its classes from its "
        "labels); drop it or add --stream")
    assert _error(capsys, "--dataset", "-") == (
        "error: --dataset - (standard input) is read as it comes: add --stream --classes "
        "A,B,...")
    assert _error(capsys, "--dataset", "synthetic", "--stream", "--classes", "a,b") == (
        "error: --stream reads a CSV file (.csv, .csv.gz) or standard input (-) given as "
        "--dataset, got --dataset synthetic")
    for arff in ("small.arff", "small.ARFF.gz"):  # before: the CSV-or-stdin error alone
        assert _error(capsys, "--dataset", arff, "--stream", "--classes", "a,b") == (
            "error: --stream reads a CSV file row by row; an ARFF file is read whole: drop "
            "--stream and --classes (its header declares the classes)")
    assert _error(capsys, "--dataset", "-", "--stream", "--classes", "a,b", "--seed", "0,1",
                  "--label-mask", "bernoulli") == (
        "error: --stream runs one seed at a time (standard input is read once): give one "
        "--seed")
    for flag in ("--checkpoint", "--resume"):
        assert _error(capsys, "--dataset", "-", "--stream", "--classes", "a,b",
                      "--label-mask", "bernoulli", flag, "ck.pt") == (
            f"error: {flag} is not available on standard input: a resume reads the stream "
            f"again from its start, to check and skip the rows read before, and standard "
            f"input is read once; stream from a file (--dataset FILE.csv --stream) or drop "
            f"{flag}")
    assert _error(capsys, "--dataset", stream, "--stream", "--classes", "a,b,1,1.0") == (
        "error: torch_geometric_stream run: argument --classes: classes '1' and '1.0' are one "
        "class; give each once in 'a,b,1,1.0'")


#: A streamed run resumable from ``ck.ckpt`` (``--dataset`` and the rest follow).
RESUMABLE = ["--label-column", "kind", "--stream", "--classes", "a,b,c", "--label-mask",
             "bernoulli", "--label-ratio", "0.2", "--seed", "3"]


@pytest.mark.parametrize("history", ["bounded", "full"])
def test_an_interrupted_streamed_run_resumes_to_the_uninterrupted_record(
        tmp_path, capsys, monkeypatch, interrupt_run_after, history):
    stream = str(_csv(tmp_path / "data.csv"))
    common = ["--dataset", stream, *RESUMABLE, "--history", history]
    whole = _run(tmp_path, "whole", *common)
    checkpoint = tmp_path / "ck.ckpt"
    saving = [*common, "--checkpoint", str(checkpoint), "--checkpoint-every", "50"]
    interrupt_run_after(120)
    assert main(["run", *FAST, *saving]) == 130
    assert capsys.readouterr().err == (
        f"run interrupted; last checkpoint in {checkpoint}: rerun the same command with "
        f"--resume {checkpoint} to continue from it\n")
    assert torch.load(checkpoint, weights_only=False)["position"] == 100
    monkeypatch.undo()
    resumed = _run(tmp_path, "resumed", *saving, "--resume", str(checkpoint))
    assert resumed["resumed_from"] == 100
    _same(resumed, whole)
    assert torch.load(checkpoint, weights_only=False)["position"] == 300  # at the end



def test_ctrl_c_saves_a_streamed_run_at_the_end_of_its_sample_with_the_rows_read_so_far(
        tmp_path, capsys, monkeypatch, ctrl_c_in_sample):
    """Without --checkpoint-every too: the checkpoint after the sample at position
    119 holds the digest of the text of its 120 rows (none read after), which the
    resumed run checks; its record is the uninterrupted one."""
    stream = str(_csv(tmp_path / "data.csv"))
    common = ["--dataset", stream, *RESUMABLE]
    whole = _run(tmp_path, "whole", *common)
    checkpoint = tmp_path / "ck.ckpt"
    saving = [*common, "--checkpoint", str(checkpoint)]
    ctrl_c_in_sample(119)
    assert main(["run", *FAST, *saving]) == 130
    assert capsys.readouterr().err.startswith("run interrupted after sample 120; its state ")
    saved = torch.load(checkpoint, weights_only=False)
    assert saved["position"] == 120
    assert saved["extra"][STREAM_DIGEST] == _digest(Path(stream), 120)
    monkeypatch.undo()
    resumed = _run(tmp_path, "resumed", *saving, "--resume", str(checkpoint))
    assert resumed["resumed_from"] == 120
    _same(resumed, whole)


@pytest.mark.parametrize("streamed", [True, False], ids=["stream", "file-read-whole"])
@pytest.mark.parametrize("history", ["bounded", "full"])
def test_ctrl_c_in_the_last_row_resumes_from_the_end_to_the_uninterrupted_record(
        tmp_path, capsys, monkeypatch, ctrl_c_in_sample, streamed, history):
    """Ctrl-C in the file's last row. Streamed, the run cannot know the row was
    the last (it stops before reading on): it is interrupted there, its
    checkpoint and partial files at the end; read whole, it finishes. Either
    way, a --resume from that checkpoint reads no row more and finishes: the
    uninterrupted record and per-sample file, no partial file left."""
    stream = str(_csv(tmp_path / "data.csv", rows=60))
    reading = RESUMABLE if streamed else [option for option in RESUMABLE
                                          if option not in ("--stream", "--classes", "a,b,c")]
    common = ["--dataset", stream, *reading, "--history", history]
    whole = _run(tmp_path, "whole", *common)
    checkpoint = tmp_path / "ck.ckpt"
    saving = [*common, "--checkpoint", str(checkpoint)]
    outputs = ["--output", str(tmp_path / "resumed.json"),
               *["--csv", str(tmp_path / "resumed.csv")] * (history == "full")]
    ctrl_c_in_sample(59)
    assert main(["run", *FAST, *saving, *outputs]) == (130 if streamed else 0)
    assert capsys.readouterr().err.startswith("run interrupted after sample 60; ") == streamed
    assert torch.load(checkpoint, weights_only=False)["position"] == 60
    partials = sorted(path.name for path in tmp_path.glob("*.partial"))
    assert partials == ([*["resumed.csv.partial"] * (history == "full"), "resumed.json.partial"]
                        if streamed else [])
    monkeypatch.undo()
    resumed = _run(tmp_path, "resumed", *saving, "--resume", str(checkpoint))
    assert (resumed["resumed_from"], resumed["n_samples"]) == (60, 60)
    _same(resumed, whole)
    assert not list(tmp_path.glob("*.partial"))


def test_a_streamed_run_resumes_on_its_file_grown_and_checks_the_rows_read(tmp_path, capsys):
    """A run to the end of a file (its last position saved as the stream ends)
    goes on when rows are appended; a file whose rows read changed is refused,
    naming the file, and nothing is written."""
    full = _csv(tmp_path / "full.csv")
    stream = tmp_path / "data.csv"
    stream.write_text("".join(full.read_text().splitlines(keepends=True)[:201]))
    checkpoint = tmp_path / "ck.ckpt"
    saving = ["--dataset", str(stream), *RESUMABLE, "--checkpoint", str(checkpoint)]
    first = _run(tmp_path, "first", *saving)
    assert first["n_samples"] == 200 and torch.load(checkpoint, weights_only=False)[
        "position"] == 200
    stream.write_text(full.read_text())  # 100 rows appended
    resumed = _run(tmp_path, "resumed", *saving, "--resume", str(checkpoint))
    assert resumed["resumed_from"] == 200
    _same({**resumed, "dataset": "full.csv", "dataset_source": str(full.resolve())},
          _run(tmp_path, "whole", "--dataset", str(full), *RESUMABLE))
    lines = stream.read_text().splitlines(keepends=True)
    lines[5] = lines[5].replace(".", "9", 1)  # a value of row 5 edited
    stream.write_text("".join(lines))
    out = tmp_path / "edited.json"
    assert _error(capsys, *FAST, *saving, "--resume", str(checkpoint), "--output",
                  str(out)) == (
        f"error: {stream.resolve()}: its first 300 data rows are not the text read before "
        f"(digest {_digest(stream, 300)}, was {_digest(full, 300)}): the file's beginning "
        f"changed since")
    assert not out.exists()


def _digest(path: Path, rows: int) -> str:
    stream = CSVRowStream(path, ["a", "b", "c"], label_column="kind", limit=rows)
    for _ in stream:
        pass
    return stream.digest()


def test_a_run_interrupted_by_its_limit_goes_on_to_another_and_the_limit_is_checked(
        tmp_path, capsys):
    stream = str(_csv(tmp_path / "data.csv"))
    checkpoint = tmp_path / "ck.ckpt"
    saving = ["--dataset", stream, *RESUMABLE, "--checkpoint", str(checkpoint)]
    assert _run(tmp_path, "first", *saving, "--limit", "130")["n_samples"] == 130
    resume = [*saving, "--resume", str(checkpoint)]
    assert _error(capsys, *FAST, *resume, "--limit", "100") == (
        "error: --resume: 130 rows were read before, more than limit=100")
    assert _error(capsys, *FAST, *resume, "--classes", "c,a,b") == (
        f"error: --resume: checkpoint {checkpoint} was made by another run: "
        f"classes=['a', 'b', 'c'] in the checkpoint, ['c', 'a', 'b'] here")
    resumed = _run(tmp_path, "resumed", *resume, "--limit", "250")
    assert (resumed["resumed_from"], resumed["n_samples"], resumed["limit"]) == (130, 250, 250)
    _same(resumed, _run(tmp_path, "whole", "--dataset", stream, *RESUMABLE, "--limit", "250"))


def test_a_streamed_run_interrupted_before_its_first_checkpoint_says_how_to_save_sooner(
        tmp_path, capsys, interrupt_run_after):
    """Without --checkpoint-every, a stream's checkpoint is written as it ends."""
    checkpoint = tmp_path / "ck.ckpt"
    interrupt_run_after(50)
    assert main(["run", *FAST, "--dataset", str(_csv(tmp_path / "data.csv", rows=60)),
                 *RESUMABLE, "--checkpoint", str(checkpoint)]) == 130
    assert capsys.readouterr().err == (
        f"run interrupted before its first checkpoint (this run wrote none to {checkpoint}; "
        f"--checkpoint-every N saves every N samples)\n")
    assert not checkpoint.exists()


def _unread_bytes(pipe) -> int:
    """The bytes written to ``pipe`` that its reader has not taken yet."""
    return struct.unpack("i", fcntl.ioctl(pipe.fileno(), termios.FIONREAD, b"\0" * 4))[0]


def _cpu_ticks(pid: int) -> int:
    """The CPU time process ``pid`` has used so far (user + system, all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime


def _wait_until_idle(pid: int, quiet: float, deadline: float) -> None:
    """Wait until process ``pid`` has used no CPU for ``quiet`` seconds (it waits
    on a read), or until ``deadline`` (``time.monotonic``). A fixed sleep was not
    enough on loaded cores: the run was still learning when signalled."""
    ticks, since = _cpu_ticks(pid), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.25)
        now = _cpu_ticks(pid)
        if now != ticks:
            ticks, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_while_standard_input_sends_no_row_keeps_the_rows_done(tmp_path, process_group,
                                                                      signum):
    # before: the run waited for a row that never came; a second Ctrl-C lost everything
    rows = _csv(tmp_path / "data.csv", rows=60).read_bytes()
    out, log = tmp_path / "stdin.json", tmp_path / "stderr.txt"
    with log.open("wb") as stderr:
        command = process_group([sys.executable, "-m", "torch_geometric_stream", "run", *FAST,
                                 "--dataset", "-", "--stream", "--classes", "a,b,c",
                                 "--label-column", "kind", "--label-mask", "bernoulli",
                                 "--output", str(out)],
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=stderr)
    command.stdin.write(rows)
    command.stdin.flush()  # and kept open (not communicate()): the writer lives on, silent
    deadline = time.monotonic() + 120
    while _unread_bytes(command.stdin) and time.monotonic() < deadline:
        time.sleep(0.1)
    _wait_until_idle(command.pid, 2.0, deadline)  # the 60 rows learned, it waits for the next
    command.send_signal(signum)
    assert command.wait(timeout=60) == 130, log.read_text()
    assert log.read_text().splitlines()[-1] == (
        f"run interrupted after sample 60; its metrics so far are in {out}.partial; nothing "
        f"resumable was saved (--checkpoint FILE keeps a resumable state)")
    record = json.loads(Path(f"{out}.partial").read_text())
    assert (record["n_samples"], record["interrupted_at"]) == (60, 60)
    assert not out.exists()


#: ``RESUMABLE`` reading the file whole (without ``--stream --classes a,b,c``).
READ_WHOLE = [option for option in RESUMABLE if option not in ("--stream", "--classes", "a,b,c")]


@pytest.mark.parametrize("options", [["--history", "bounded"], ["--history", "full"],
                                     ["--history", "bounded", "--limit", "200"]])
def test_a_checkpoint_resumed_with_another_reading_of_its_file_is_refused_as_such(
        tmp_path, capsys, options):
    """A checkpoint of a run that read its file whole, resumed with --stream, and
    one of a --stream run resumed without, are named as such (before: a KeyError
    for the digest of the rows read, and entries 'older than' the checkpoint).
    The label is the last column: no --label-column."""
    stream = tmp_path / "data.csv"
    stream.write_text("".join(",".join([*fields[:1], *fields[2:], fields[1]]) + "\n"
                              for fields in (line.split(",") for line in
                                             _csv(tmp_path / "kind.csv").read_text().split())))
    streamed_run, whole_run = (["--dataset", str(stream), *options,
                                *[option for option in reading if option not in
                                  ("--label-column", "kind")]]
                               for reading in (RESUMABLE, READ_WHOLE))
    whole, streamed = tmp_path / "whole.ckpt", tmp_path / "streamed.ckpt"
    _run(tmp_path, "first", *whole_run, "--checkpoint", str(whole))
    _run(tmp_path, "second", *streamed_run, "--checkpoint", str(streamed))
    assert _error(capsys, *FAST, *streamed_run, "--resume", str(whole)) == (
        f"error: --resume: checkpoint {whole} was made by a run that read data.csv whole: "
        f"drop --stream and --classes to resume it, or start the streamed run afresh "
        f"(without --resume)")
    assert _error(capsys, *FAST, *whole_run, "--resume", str(streamed)) == (
        f"error: --resume: checkpoint {streamed} was made by a --stream run of data.csv: "
        f"add --stream --classes a,b,c to resume it")


@pytest.mark.parametrize("reading", [RESUMABLE, READ_WHOLE], ids=["stream", "file-read-whole"])
def test_a_renamed_copy_of_the_stream_resumes_and_an_edited_one_is_refused(
        tmp_path, capsys, interrupt_run_after, monkeypatch, reading):
    """A file stream is its bytes (read whole: their SHA-256; streamed: the
    digest of the rows read), not its name: a run stopped on data.csv resumes on
    a renamed copy to the uninterrupted record (before: refused, dataset='data.csv'
    in the checkpoint, 'renamed.csv' here); a copy edited is refused."""
    stream = _csv(tmp_path / "data.csv")
    whole = _run(tmp_path, "whole", "--dataset", str(stream), *reading)
    checkpoint = tmp_path / "ck.ckpt"
    interrupt_run_after(120)
    assert main(["run", *FAST, "--dataset", str(stream), *reading, "--checkpoint",
                 str(checkpoint), "--checkpoint-every", "50"]) == 130
    monkeypatch.undo()
    capsys.readouterr()
    renamed = tmp_path / "renamed.csv"
    renamed.write_bytes(stream.read_bytes())
    resume = ["--dataset", str(renamed), *reading, "--resume", str(checkpoint)]
    resumed = _run(tmp_path, "resumed", *resume)
    assert resumed["resumed_from"] == 100
    _same(resumed, {**whole, "dataset": "renamed.csv", "dataset_source": str(renamed.resolve())})
    lines = renamed.read_text().splitlines(keepends=True)
    lines[5] = lines[5].replace(".", "9", 1)  # a value of row 5 edited
    renamed.write_text("".join(lines))
    assert _error(capsys, *FAST, *resume).startswith(
        f"error: {renamed.resolve()}: its first 100 data rows are not the text read before"
        if "--stream" in reading else
        f"error: --resume: checkpoint {checkpoint} was made by another run: dataset_sha256=")


def test_a_prefix_of_a_file_whose_label_column_is_no_last_one_checkpoints_and_resumes(
        tmp_path, capsys, interrupt_run_after, monkeypatch):
    """Before: the checkpoint's digest of the rows read for --limit read them without
    --label-column, so the word labels of the middle column were features: 'column
    'kind' holds 'b', not a number', and no such run could checkpoint."""
    stream = _csv(tmp_path / "data.csv")
    options = ["--dataset", str(stream), *READ_WHOLE, "--limit", "200"]
    whole = _run(tmp_path, "whole", *options)
    checkpoint = tmp_path / "ck.ckpt"
    interrupt_run_after(120)
    assert main(["run", *FAST, *options, "--checkpoint", str(checkpoint),
                 "--checkpoint-every", "50"]) == 130
    monkeypatch.undo()
    capsys.readouterr()
    resumed = _run(tmp_path, "resumed", *options, "--resume", str(checkpoint))
    assert resumed["resumed_from"] == 100
    _same(resumed, whole)
