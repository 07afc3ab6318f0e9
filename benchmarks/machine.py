"""What the benchmark scripts share: facts about the machine a benchmark ran on
(recorded with every result, read back for the reports' headings and to reuse a
result only on the machine that measured it) and their command-line value types
and data-folder checks."""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Collection, Iterator, Optional, TypeVar

import torch
import torch_geometric.typing as pyg_typing

from torch_geometric_stream.cli.arguments import MAX_THREADS, check_folder
from torch_geometric_stream.cli.compare_command import read_records
from torch_geometric_stream.cli.errors import UsageError
from torch_geometric_stream.cli.report import (cpu_model, machine_description,
                                               software_versions)
from torch_geometric_stream.datasets import (StreamDataset, default_data_root, load_dataset,
                                             resolve_dataset_name)
from torch_geometric_stream.validation import check_seed

__all__ = ["cpu_model", "recorded", "measured_on", "SAME_MACHINE", "NOT_RECORDED",
           "other_machine", "host", "device_spec", "require_cuda", "warn_threads",
           "int_at_least", "int_list", "positive_ints",
           "positive_number", "argument_type", "seed_value", "folder_name", "dataset_name",
           "data_root", "input_folder", "ResultRecord", "read_run", "read_json_object",
           "read_result", "reused", "read_results", "usage_errors", "check_outputs",
           "load_or_exit"]

T = TypeVar("T")


def recorded(results: list[dict[str, Any]], key: str) -> str:
    """Every distinct value of ``key`` the results recorded (``unknown`` for those
    without it), in first-seen order, joined by ``"; "``: a report's heading names
    the machines its results ran on, not the one that renders it."""
    values = dict.fromkeys(str(result.get(key, "unknown")) for result in results)
    return "; ".join(values)


def measured_on() -> dict[str, Any]:
    """What a benchmark result records of the machine and the code that measured it:
    ``cpu``, ``nproc`` (``os.cpu_count()``), ``torch`` and ``python`` (the entries
    the reports' headings read), whether torch-scatter / torch-sparse are installed
    (``WITH_TORCH_SCATTER`` / ``WITH_TORCH_SPARSE``), ``machine`` (the run records'
    :func:`~torch_geometric_stream.cli.report.machine_description`: SIMD flags, ATen's
    ``cpu_capability``, ``MKL_CBWR``) and ``software`` (their
    :func:`~torch_geometric_stream.cli.report.software_versions`: the package's
    version and git commit). :func:`other_machine` compares two of them."""
    machine = machine_description()
    return dict(cpu=machine["processor"], nproc=machine["cpu_count"], torch=torch.__version__,
                python=machine["python"],
                WITH_TORCH_SCATTER=bool(pyg_typing.WITH_TORCH_SCATTER),
                WITH_TORCH_SPARSE=bool(pyg_typing.WITH_TORCH_SPARSE),
                machine=machine, software=software_versions())


#: The entries of :func:`measured_on` (``machine.KEY``: inside its ``machine``) that
#: must match for a result to stand for a measurement on this machine: the CPU, its
#: count, torch, the optional libraries, the vector instructions its kernels use.
SAME_MACHINE = ("cpu", "nproc", "torch", "WITH_TORCH_SCATTER", "WITH_TORCH_SPARSE",
                "machine.simd", "machine.cpu_capability", "machine.mkl_cbwr")


def _entry(result: dict[str, Any], key: str) -> Any:
    """``result``'s entry ``key`` (``machine.KEY``: inside ``machine``); a
    :data:`NOT_RECORDED` where it has none."""
    for part in key.split("."):
        if not isinstance(result, dict) or part not in result:
            return NOT_RECORDED
        result = result[part]
    return result


#: What :func:`other_machine` reads for an entry a result lacks (an older result).
NOT_RECORDED = "not recorded"


def other_machine(result: dict[str, Any], here: dict[str, Any],
                  keys: tuple[str, ...] = SAME_MACHINE) -> Optional[str]:
    """Why ``result`` does not stand for a measurement on the machine ``here``
    (:func:`measured_on`): the entries of ``keys`` (default :data:`SAME_MACHINE`; a
    benchmark that runs on a chosen device adds its ``device``) that differ, as
    ``cpu 'A' (here 'B')``, an entry it lacks as ``not recorded``; ``None`` where
    all match. A resumable benchmark reuses a result only then, so that a rerun
    elsewhere measures that machine instead of reporting the shipped results."""
    differ = [f"{key} {_entry(result, key)!r} (here {_entry(here, key)!r})"
              for key in keys if _entry(result, key) != _entry(here, key)]
    return f"measured elsewhere: {', '.join(differ)}" if differ else None


def host(result: dict[str, Any]) -> str:
    """The machine a result ran on, as a report groups by it: its ``cpu`` and
    ``nproc`` (``unknown`` where not recorded), and its ``device`` where it records
    one other than ``cpu`` (a GPU's name: its results never join the CPU's)."""
    device = result.get("device", "cpu")
    return (f"{result.get('cpu', 'unknown')}, nproc={result.get('nproc', 'unknown')}"
            + (f", {device}" if device != "cpu" else ""))


def device_spec(text: str) -> str:
    """An argparse type: ``cpu``, ``cuda`` or ``cuda:N`` (whether this machine has it
    is :func:`require_cuda`'s and the run's check, after the arguments')."""
    if re.fullmatch(r"cpu|cuda(:[0-9]+)?", text):
        return text
    raise argparse.ArgumentTypeError(f"expected cpu, cuda or cuda:N, got {text!r}")


def require_cuda() -> None:
    """Exit with status 1 and the one line ``no CUDA device`` on stderr where this
    machine has none (a benchmark's check after its arguments', so that a typo is
    caught on any machine)."""
    if not torch.cuda.is_available():
        sys.exit("no CUDA device")


def warn_threads(threads: Collection[int]) -> None:
    """Warn on stderr where a thread count exceeds the CPUs this process may run on
    (``os.sched_getaffinity``, where the OS has it): its threads share CPUs, and the
    timings measure that."""
    if not hasattr(os, "sched_getaffinity"):
        return
    available = len(os.sched_getaffinity(0))
    for count in sorted(set(threads)):
        if count > available:
            print(f"warning: --threads {count} exceeds the {available} CPUs available to "
                  "this process: its threads share CPUs", file=sys.stderr, flush=True)


def int_at_least(minimum: int, maximum: Optional[int] = None) -> Callable[[str], int]:
    """An argparse type: an integer >= ``minimum`` (and <= ``maximum``)."""
    expected = f"an integer >= {minimum}" + f" and <= {maximum}" * (maximum is not None)

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
        return value

    return parse


def int_list(minimum: int = 1, maximum: Optional[int] = None) -> Callable[[str], list[int]]:
    """An argparse type: a comma-separated list of integers >= ``minimum`` (and
    <= ``maximum``)."""
    single = int_at_least(minimum, maximum)

    def parse(text: str) -> list[int]:
        try:
            return [single(part) for part in text.split(",")]
        except argparse.ArgumentTypeError:
            raise argparse.ArgumentTypeError(
                f"expected a comma-separated list of integers >= {minimum}"
                + f" and <= {maximum}" * (maximum is not None) + f", got {text!r}") from None

    return parse


positive_ints = int_list(1)
#: ``--threads`` of a benchmark that measures several thread counts, each as
#: ``run --threads`` takes it.
thread_counts = int_list(1, MAX_THREADS)


def positive_number(text: str) -> float:
    """An argparse type: a number > 0 (``inf`` included, ``nan`` not)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
    return value


def argument_type(check: Callable[[str], T]) -> Callable[[str], T]:
    """An argparse ``type`` of ``check``, whose ``ValueError`` becomes the option's error."""

    def parse(text: str) -> T:
        try:
            return check(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return parse


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"expected an integer seed, got {text!r}") from None
    return check_seed(value)


#: An argparse type: a seed, an integer in [0, 2**64) (the package's
#: :func:`~torch_geometric_stream.validation.check_seed`: what ``torch.manual_seed`` takes).
seed_value = argument_type(_seed)


def _folder_name(text: str) -> str:
    if not text or text in (".", "..") or "/" in text:
        raise ValueError(f"expected a folder name (no '/', not '.' or '..'), got {text!r}")
    return text


#: An argparse type: one folder's name (a result tag), never a path that leads out of
#: the results folder or into a sub-folder the reports do not read.
folder_name = argument_type(_folder_name)

#: An argparse type: a paper dataset's canonical name (``gsad`` is ``GSAD``: its
#: setting, its result files).
dataset_name = argument_type(resolve_dataset_name)


def data_root(parser: argparse.ArgumentParser, root: Optional[str | Path]) -> Path:
    """``root``, else :func:`default_data_root`; a usage error when there is neither
    or when that folder does not exist (refused before any run or file is written)."""
    found = root or default_data_root()
    if found is None:
        parser.error("no data folder: pass --root or set TGS_DATA_ROOT")
    return input_folder(parser, "--root", Path(found))


def input_folder(parser: argparse.ArgumentParser, option: str, folder: Path) -> Path:
    """``folder``, read by ``option``; a usage error when it does not exist or is a file."""
    try:
        check_folder(option, folder)
    except UsageError as error:
        parser.error(str(error))
    return folder


def read_run(path: Path) -> ResultRecord:
    """The record of a ``python -m torch_geometric_stream run`` JSON (``accuracy.py``'s
    results), read as the package's ``compare`` reads one.

    Its objects are :class:`ResultRecord` objects: an entry the record lacks beyond
    those ``compare`` requires is a :class:`UsageError` where it is read.

    Raises:
        UsageError: the file is no such record (no JSON, cut short, an entry missing or
            broken, an interrupted run's), named with what is wrong.
    """
    ((_, record),) = read_records([path])
    return _entries(path, record)


def read_json_object(path: Path) -> dict[str, Any]:
    """The JSON object in result file ``path``: a benchmark's record of one run, read
    back by a resume check or a report (``run`` records are :func:`read_run`'s). Its
    objects are :class:`ResultRecord` objects: an entry it lacks is a
    :class:`UsageError` where it is read.

    Raises:
        UsageError: ``path`` unreadable, not JSON (e.g. cut short by a run killed while
            writing it) or no JSON object, named with what is wrong and that deleting it
            reruns its run.
    """
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise _bad_result(path, f"cannot be read ({error.strerror or error})") from None
    except UnicodeDecodeError as error:
        raise _bad_result(path, f"not UTF-8 text ({error.reason})") from None
    except json.JSONDecodeError as error:
        raise _bad_result(path, f"not JSON ({error}; cut short by a run killed while "
                                "writing it?)") from None
    if not isinstance(value, dict):
        raise _bad_result(path, f"not a JSON object ({_JSON_VALUES[type(value)]})")
    return _entries(path, value)


class ResultRecord(dict):
    """A JSON object read from result file ``path`` (at ``where`` in it: ``""`` for
    the file's object, ``flops.`` or ``rows[3].`` for one inside it), whose entry read
    as ``record[key]`` but missing is a :class:`UsageError` naming the file and the
    entry, not a ``KeyError`` traceback (an older or edited result lacking an entry
    the report reads). ``get`` and ``in`` read it as a plain ``dict`` does."""

    def __init__(self, path: Path, where: str, entries: dict[str, Any]) -> None:
        super().__init__(entries)
        self.path, self.where = path, where

    def __missing__(self, key: str) -> Any:
        raise _bad_result(self.path, f"lacks the entry {self.where}{key} (an older or "
                                     "edited result?)")

    def with_entries(self, **entries: Any) -> ResultRecord:
        """A copy of this record, of the same file and place, with ``entries`` set."""
        return ResultRecord(self.path, self.where, {**self, **entries})


def _entries(path: Path, value: Any, where: str = "") -> Any:
    """``value`` read from ``path`` at ``where``, with its objects (also those in
    arrays) as :class:`ResultRecord` objects."""
    if isinstance(value, dict):
        return ResultRecord(path, where, {key: _entries(path, entry, f"{where}{key}.")
                                          for key, entry in value.items()})
    if isinstance(value, list):
        return [_entries(path, entry, f"{where[:-1]}[{index}].")
                for index, entry in enumerate(value)]
    return value


#: What :func:`json.loads` reads, by the type it gives.
_JSON_VALUES = {list: "an array", str: "a string", int: "a number", float: "a number",
                bool: "true or false", type(None): "null"}


def _bad_result(path: Path, problem: str) -> UsageError:
    return UsageError(f"{path}: {problem}; delete it to rerun its run")


def read_result(parser: argparse.ArgumentParser, path: Path) -> dict[str, Any]:
    """:func:`read_json_object`, with a bad result file as a usage error."""
    try:
        return read_json_object(path)
    except UsageError as error:
        parser.error(str(error))


def reused(parser: argparse.ArgumentParser, path: Path, force: bool,
           outdated: Callable[[dict[str, Any]], Optional[str]]) -> bool:
    """Whether a resumable benchmark skips the run of result file ``path``: it exists,
    ``--force`` is off and ``outdated(result)`` gives no reason to measure it again
    (e.g. :func:`other_machine`'s). Says which: ``skip NAME (exists)`` or
    ``re-measure NAME: WHY``."""
    if force or not path.exists():
        return False
    why = outdated(read_result(parser, path))
    if why is None:
        print(f"skip {path.name} (exists)", flush=True)
        return True
    print(f"re-measure {path.name}: {why}", flush=True)
    return False


def read_results(parser: argparse.ArgumentParser, folder: Path, pattern: str,
                 rewritten: Collection[Path] = ()) -> list[dict[str, Any]]:
    """:func:`read_result` of every file of ``folder`` that ``pattern`` matches, in name
    order, but those of ``rewritten``: a script's results, read back before its runs (a
    bad file refused before any run; with ``--force``, one that the runs do not rewrite
    but the report reads) and by its report."""
    return [read_result(parser, path) for path in sorted(folder.glob(pattern))
            if path not in rewritten]


@contextmanager
def usage_errors(parser: argparse.ArgumentParser) -> Iterator[None]:
    """Inside, a :class:`UsageError` (a result file lacking an entry read, the
    :class:`ResultRecord`'s) is ``parser``'s usage error: one line, no traceback."""
    try:
        yield
    except UsageError as error:
        parser.error(str(error))


def check_outputs(parser: argparse.ArgumentParser, outputs: dict[str, Path],
                  files: Optional[dict[str, Path]] = None) -> None:
    """Refuse, as a usage error before anything runs, an output folder (``{option:
    folder}``) that is a file or lies in one, and an output file (``files``,
    ``{option: file}``) that is a folder or lies in a file."""
    for option, file in (files or {}).items():
        if file.is_dir():
            parser.error(f"{option}: {file} is a folder, not a file")
    folders = {**outputs, **{option: file.parent for option, file in (files or {}).items()}}
    for option, folder in folders.items():
        try:
            check_folder(option, folder, must_exist=False)
        except UsageError as error:
            parser.error(str(error))


def load_or_exit(parser: argparse.ArgumentParser, name: str, root: Path) -> StreamDataset:
    """:func:`load_dataset`, with a missing or unreadable dataset as a usage error."""
    try:
        return load_dataset(name, root)
    except (FileNotFoundError, ValueError) as error:
        parser.error(str(error))
