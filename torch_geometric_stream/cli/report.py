"""What a ``run`` writes: the per-run JSON record, per-seed file names and the
summary table."""
from __future__ import annotations

import functools
import importlib.metadata
import json
import os
import platform
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

import numpy as np
import torch

import torch_geometric_stream
from torch_geometric_stream.evaluation import PrequentialResult
from torch_geometric_stream.evaluation.bounded import approximate_tails
from torch_geometric_stream.evaluation.windows import window_lists
from torch_geometric_stream.files import atomic_write_text

__all__ = ["CURVE_POINTS", "APPROXIMATE", "APPROXIMATE_NOTE", "run_record", "cpu_model",
           "machine_description", "git_revision", "software_versions", "seed_path",
           "partial_path", "write_json", "summary_table"]

#: Points of the running-accuracy curve stored in every run record.
CURVE_POINTS = 200

#: Ends a tail accuracy that is not exact (:func:`approximate_tails`) in a table.
APPROXIMATE = "~"
#: The line under a table with an :data:`APPROXIMATE` value.
APPROXIMATE_NOTE = (f"{APPROXIMATE} from --history bounded: over the last samples that the "
                    f"record's tail_samples gives, within 0.0012 / 0.0025 / 0.0049 of the "
                    f"exact last 20 / 10 / 5 %")

#: Columns of the summary table: (JSON field, header, format).
_COLUMNS = (("seed", "seed", "{}"), ("n_samples", "samples", "{}"), ("n_labels", "labels", "{}"),
            ("accuracy", "acc", "{:.4f}"), ("accuracy_last_20", "last20%", "{:.4f}"),
            ("accuracy_last_10", "last10%", "{:.4f}"), ("accuracy_last_5", "last5%", "{:.4f}"),
            ("balanced_accuracy", "bal.acc", "{:.4f}"), ("kappa_m", "kappa_m", "{:.4f}"),
            ("seconds", "seconds", "{:.1f}"), ("ms_per_sample_median", "ms/sample", "{:.2f}"))


def _cpuinfo_line(key: str) -> Optional[str]:
    """The value of the first ``key`` line of ``/proc/cpuinfo`` (None off Linux)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.split(":", 1)[0].strip() == key:
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), or what ``platform`` knows."""
    return _cpuinfo_line("model name") or platform.processor() or "unknown"


def machine_description(device: Optional[str] = None) -> dict[str, Any]:
    """The machine without its host name: OS, processor, CPU count, Python, the
    vector instructions that decide which MKL / ATen kernels run (``simd``:
    the CPU's AVX and AMX flags; ``cpu_capability``: ATen's choice;
    ``mkl_cbwr``: the ``MKL_CBWR`` setting, None when unset) and for a CUDA
    ``device`` (``"cuda"``, ``"cuda:1"``) the accelerator's name.

    The learned-graph models are bit-reproducible on one machine, but MKL picks
    its kernels by instruction set, so the same run can round differently on
    another CPU (see README, "Reproducibility on the CPU")."""
    flags = (_cpuinfo_line("flags") or "").split()
    description = {"platform": platform.platform(), "processor": cpu_model(),
                   "machine": platform.machine(), "cpu_count": os.cpu_count(),
                   "python": platform.python_version(),
                   "simd": " ".join(sorted(f for f in flags if f.startswith(("avx", "amx")))),
                   "cpu_capability": torch.backends.cpu.get_cpu_capability(),
                   "mkl_cbwr": os.environ.get("MKL_CBWR")}
    if device is not None and torch.device(device).type == "cuda":
        description["accelerator"] = torch.cuda.get_device_name(device)
    return description


def git_revision(folder: Path) -> dict[str, Any]:
    """The git commit checked out where ``folder`` is tracked (``git_commit``) and
    whether ``folder``'s files differ from it (``git_dirty``: edits or new files
    not ignored); both None where ``folder`` is tracked by no git checkout (an
    installed package) or git cannot be run."""
    def git(*arguments: str) -> str:
        return subprocess.run(["git", "-C", str(folder), *arguments], capture_output=True,
                              text=True, check=True, timeout=30).stdout
    try:
        if not git("ls-files", "--", "."):  # e.g. a package inside an ignored .venv
            return {"git_commit": None, "git_dirty": None}
        return {"git_commit": git("rev-parse", "HEAD").strip(),
                "git_dirty": bool(git("status", "--porcelain", "--", "."))}
    except (OSError, subprocess.SubprocessError):
        return {"git_commit": None, "git_dirty": None}


def _torch_geometric_version() -> str:
    """PyTorch Geometric's version from its installed metadata, else (a source
    checkout on the path, which has none) from the module itself."""
    try:
        return importlib.metadata.version("torch-geometric")
    except importlib.metadata.PackageNotFoundError:
        import torch_geometric
        return torch_geometric.__version__


@functools.lru_cache(maxsize=1)
def software_versions() -> dict[str, Any]:
    """What code computed a run, besides the machine: the versions of torch,
    NumPy (its generators draw the label masks and HDSSL's samples), PyTorch
    Geometric (its layers' initialization; from its installed metadata, as
    importing it takes seconds that ``--version`` should not) and this package, and
    the package's :func:`git_revision` (``package_version`` alone names no commit).
    Read once per process (call it as a run starts: the code imported then is the
    code that runs, whatever is committed or edited while it runs)."""
    return {"torch_version": torch.__version__, "numpy_version": np.__version__,
            "torch_geometric_version": _torch_geometric_version(),
            "package_version": torch_geometric_stream.__version__,
            **git_revision(Path(torch_geometric_stream.__file__).parent)}


def run_record(result: PrequentialResult, *, run: Mapping[str, Any],
               config: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON record of one run: ``run`` (dataset, model, seed, ...,
    :func:`software_versions`), the metrics of ``result``, its running-accuracy
    ``curve`` (at most :data:`CURVE_POINTS` points, enough to plot), its
    ``windows`` where it has them (:func:`~torch_geometric_stream.evaluation.windows.window_lists`),
    when it finished (``finished_at``, UTC, ISO 8601), machine and the resolved ``config``."""
    counts, accuracy = result.accuracy_curve(CURVE_POINTS)
    curve = {"position": (result.start + counts).tolist(), "running_accuracy": accuracy.tolist()}
    windows = {} if result.windows is None else {"windows": window_lists(result.windows)}
    return {**run, **result.metrics, "curve": curve, **windows,
            "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "machine": machine_description(run.get("device")),
            "config": dict(config)}


def seed_path(path: Optional[Path], seed: int, several: bool) -> Optional[Path]:
    """``path`` itself for a single seed, else ``<stem>_seed<S><suffix>``."""
    if path is None or not several:
        return path
    return path.with_name(f"{path.stem}_seed{seed}{path.suffix}")


def partial_path(path: Path) -> Path:
    """Where the record, per-sample file or plot so far of a run to ``path`` that
    Ctrl-C stopped goes: ``<path>.partial``, a name that no ``*.json`` (``*.csv``,
    ``*.png``) glob of finished runs (``tune``, ``compare``, the benchmarks)
    matches and no "skip when present" check tests."""
    return path.with_name(f"{path.name}.partial")


def write_json(record: Mapping[str, Any], path: Path) -> Path:
    """Write ``record`` as indented JSON, atomically (a rerun that skips a run
    whose JSON exists never reads half of one)."""
    return atomic_write_text(path, json.dumps(record, indent=2) + "\n")


def _cell(value: Any, fmt: str) -> str:
    """``value`` formatted, ``-`` where undefined (``None``, e.g. a kappa with no
    disagreement possible, or a record written before the field existed)."""
    return "-" if value is None else fmt.format(value)


def summary_table(records: Sequence[Mapping[str, Any]]) -> str:
    """One row per run, plus mean and std (ddof 1, over the runs where the
    value is defined) rows when there are several. A run that Ctrl-C stopped
    (``interrupted_at``) is marked so, and left out of the mean and std, then
    labelled as of the finished runs (none for fewer than two). A tail accuracy
    that is not exact (:func:`approximate_tails`), and its mean and std, end in
    :data:`APPROXIMATE`, explained by :data:`APPROXIMATE_NOTE` under the table."""
    inexact = [approximate_tails(record) for record in records]
    rows = [[_cell(record.get(key), fmt) + APPROXIMATE * (key in keys)
             + " (interrupted)" * (key == "seed" and "interrupted_at" in record)
             for key, _, fmt in _COLUMNS]
            for record, keys in zip(records, inexact)]
    anywhere = {key for keys in inexact for key in keys}
    finished = [record for record in records if "interrupted_at" not in record]
    of = " of finished" * (len(finished) < len(records))
    if len(finished) > 1:
        for name, reduce in (("mean", np.mean), ("std", lambda v: np.std(v, ddof=1))):
            row = [name + of]
            for key, _, fmt in _COLUMNS[1:]:
                values = [r[key] for r in finished if r.get(key) is not None]
                row.append(_cell(reduce(values), fmt) + APPROXIMATE * (key in anywhere)
                           if "f}" in fmt and len(values) > 1 else "")
            rows.append(row)
    headers = [header for _, header, _ in _COLUMNS]
    widths = [max(len(cell) for cell in column) for column in zip(headers, *rows)]
    lines = ["  ".join(cell.rjust(width) for cell, width in zip(line, widths))
             for line in [headers, *rows]]
    return "\n".join(lines + [APPROXIMATE_NOTE] * bool(anywhere))
