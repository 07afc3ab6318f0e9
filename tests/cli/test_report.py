"""The summary table ``run`` prints and the machine and code its records describe."""
import os
import subprocess
from pathlib import Path

import numpy as np
import torch
import torch_geometric

import torch_geometric_stream
from torch_geometric_stream.cli.report import (git_revision, machine_description, run_record,
                                               software_versions, summary_table)
from torch_geometric_stream.evaluation import PrequentialResult


def _record(seed, accuracy, kappa_m):
    return {"seed": seed, "n_samples": 100, "n_labels": 1, "accuracy": accuracy,
            "accuracy_last_20": accuracy, "accuracy_last_10": accuracy,
            "accuracy_last_5": accuracy, "balanced_accuracy": accuracy, "kappa_m": kappa_m,
            "seconds": 1.0, "ms_per_sample_median": 2.0}


def test_summary_table_mean_std_and_undefined_values():
    lines = summary_table([_record(0, 0.5, 0.2), _record(1, 0.7, None),
                           _record(2, 0.9, 0.4)]).splitlines()
    assert lines[0].split()[:6] == ["seed", "samples", "labels", "acc", "last20%", "last10%"]
    assert "kappa_m" in lines[0] and "bal.acc" in lines[0]
    column = lines[0].split().index("kappa_m")
    assert [line.split()[column] for line in lines[1:4]] == ["0.2000", "-", "0.4000"]
    # mean and std rows leave samples and labels blank
    mean, std = lines[4].split(), lines[5].split()
    assert mean[0] == "mean" and mean[1] == "0.7000"      # accuracy over the 3 runs
    assert mean[column - 2] == "0.3000"                   # kappa_m over the 2 defined
    assert std[0] == "std" and std[1] == "0.2000" and std[column - 2] == "0.1414"


def test_summary_table_leaves_the_mean_and_std_of_a_value_one_run_defines_blank():
    header, *rows = summary_table([_record(0, 0.5, 0.2), _record(1, 0.7, None)]).splitlines()
    start = header.index("kappa_m")
    kappa_m = [row[start:start + len("kappa_m")].strip() for row in rows]
    assert kappa_m == ["0.2000", "-", "", ""]  # no mean nor std of one value
    assert rows[2].split()[:2] == ["mean", "0.6000"] and rows[3].split()[:2] == ["std", "0.1414"]


def test_summary_table_reads_records_without_the_class_metrics():
    record = _record(0, 0.5, 0.1)
    del record["kappa_m"], record["balanced_accuracy"]
    assert summary_table([record]).splitlines()[1].split()[7:9] == ["-", "-"]


def test_machine_description_names_the_accelerator_of_a_cuda_run(monkeypatch):
    asked = []
    monkeypatch.setattr(torch.cuda, "get_device_name",
                        lambda device: asked.append(device) or "Fake GPU 80GB")
    assert machine_description("cuda:1")["accelerator"] == "Fake GPU 80GB"
    assert asked == ["cuda:1"]
    for device in (None, "cpu"):
        description = machine_description(device)
        assert "accelerator" not in description
        assert description["cpu_count"] == os.cpu_count()


def test_machine_description_records_what_picks_the_cpu_kernels(monkeypatch):
    monkeypatch.delenv("MKL_CBWR", raising=False)
    description = machine_description()
    assert description["mkl_cbwr"] is None
    assert description["cpu_capability"] == torch.backends.cpu.get_cpu_capability()
    assert all(flag.startswith(("avx", "amx")) for flag in description["simd"].split())
    monkeypatch.setenv("MKL_CBWR", "COMPATIBLE")
    assert machine_description()["mkl_cbwr"] == "COMPATIBLE"


def _git(folder, *arguments):
    return subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@t",
                           *arguments], capture_output=True, text=True, check=True).stdout.strip()


def test_git_revision_names_the_commit_and_uncommitted_files_of_the_folder(tmp_path):
    # before: a record's package_version (0.1.0 since the first commit) named no code
    package, other = tmp_path / "package", tmp_path / "other"
    package.mkdir(), other.mkdir()
    _git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text("venv/\n")
    (package / "module.py").write_text("x = 1\n")
    _git(tmp_path, "add", "."), _git(tmp_path, "commit", "-q", "-m", "first")
    commit = _git(tmp_path, "rev-parse", "HEAD")
    assert git_revision(package) == {"git_commit": commit, "git_dirty": False}
    (other / "notes.txt").write_text("beside the package\n")
    assert git_revision(package)["git_dirty"] is False
    (package / "module.py").write_text("x = 2\n")
    assert git_revision(package) == {"git_commit": commit, "git_dirty": True}
    (tmp_path / "venv" / "package").mkdir(parents=True)  # installed, ignored
    assert git_revision(tmp_path / "venv" / "package") == {"git_commit": None,
                                                           "git_dirty": None}


def test_git_revision_outside_any_checkout_is_none():
    assert git_revision(Path("/")) == {"git_commit": None, "git_dirty": None}


def test_software_versions_name_every_library_that_decides_the_numbers():
    versions = software_versions()
    assert versions["torch_version"] == torch.__version__
    assert versions["numpy_version"] == np.__version__
    assert versions["torch_geometric_version"] == torch_geometric.__version__
    assert versions["package_version"] == torch_geometric_stream.__version__
    folder = Path(torch_geometric_stream.__file__).parent
    assert versions["git_commit"] == git_revision(folder)["git_commit"]


def test_summary_table_marks_the_tails_a_bounded_history_gives_approximately():
    exact = {**_record(0, 0.5, 0.1), "tail_samples": {"accuracy_last_20": 20,
                                                       "accuracy_last_10": 10,
                                                       "accuracy_last_5": 5}}
    # 101 samples: the tails are 21, 11 and 6 samples long; a bounded record that
    # kept them over 20, 11 and 5 gives the last 20 % and 5 % approximately
    inexact = {**_record(1, 0.7, 0.1), "n_samples": 101,
               "tail_samples": {"accuracy_last_20": 20, "accuracy_last_10": 11,
                                "accuracy_last_5": 5}}
    lines = summary_table([exact, _record(2, 0.9, 0.2), inexact]).splitlines()
    header = lines[0].split()
    tails = [header.index(name) for name in ("last20%", "last10%", "last5%")]
    assert [[line.split()[i] for i in tails] for line in lines[1:4]] == [
        ["0.5000", "0.5000", "0.5000"], ["0.9000", "0.9000", "0.9000"],
        ["0.7000~", "0.7000", "0.7000~"]]
    mean, std = lines[4].split(), lines[5].split()
    assert [mean[i - 2] for i in tails] == ["0.7000~", "0.7000", "0.7000~"]
    assert [std[i - 2] for i in tails] == ["0.2000~", "0.2000", "0.2000~"]
    assert lines[6].startswith("~ from --history bounded: over the last samples")
    assert len(lines) == 7
    assert "~" not in summary_table([exact, _record(2, 0.9, 0.2)])


def test_software_versions_read_pyg_from_the_module_without_installed_metadata(monkeypatch):
    # a source checkout of PyTorch Geometric on the path has no distribution metadata
    import importlib.metadata

    def no_metadata(name):
        raise importlib.metadata.PackageNotFoundError(name)

    software_versions.cache_clear()
    monkeypatch.setattr(importlib.metadata, "version", no_metadata)
    try:
        assert software_versions()["torch_geometric_version"] == torch_geometric.__version__
    finally:
        software_versions.cache_clear()


def test_a_record_places_its_curve_at_the_stream_positions_its_samples_end():
    # a run resumed at position 10 from a checkpoint without the per-sample arrays
    # before it (save_checkpoint(..., record=None)) covers positions 10 to 13 only
    # (the CLI's own checkpoints keep the arrays from 0: its results start at 0)
    correct = np.array([True, False, True, True])
    classes = np.zeros(4, dtype=np.int64)
    result = PrequentialResult(correct, classes, classes, np.ones(4, dtype=bool),
                               metrics={"accuracy": 0.75}, start=10)
    record = run_record(result, run={"seed": 0}, config={"k": 2})
    assert record["curve"] == {"position": [11, 12, 13, 14],
                               "running_accuracy": [1.0, 0.5, 2 / 3, 0.75]}
    assert (record["seed"], record["accuracy"], record["config"]) == (0, 0.75, {"k": 2})


def test_summary_table_marks_an_interrupted_run_and_leaves_it_out_of_the_mean_and_std():
    """Before: Ctrl-C's cut-off seed was averaged with the finished ones, unmarked."""
    stopped = {**_record(3, 0.1, 0.0), "n_samples": 20, "interrupted_at": 20}
    header, *rows = summary_table([_record(0, 0.5, 0.2), _record(1, 0.7, 0.4),
                                   stopped]).splitlines()
    assert rows[2].split()[:3] == ["3", "(interrupted)", "20"]
    assert rows[3].split()[:4] == ["mean", "of", "finished", "0.6000"]
    assert rows[4].split()[:4] == ["std", "of", "finished", "0.1414"]
    # one finished seed: no mean nor std
    lines = summary_table([_record(0, 0.5, 0.2), stopped]).splitlines()
    assert [line.split()[0] for line in lines] == ["seed", "0", "3"]
