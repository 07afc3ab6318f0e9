"""The summary table ``run`` prints and the machine its records describe."""
import os

import torch

from torch_geometric_stream.cli.report import machine_description, summary_table


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
