"""Parsing helpers of the command line: value types, seeds, devices, config files,
output paths, the data folder option and help text."""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

import torch

from torch_geometric_stream.cli.errors import UsageError
from torch_geometric_stream.datasets import default_data_root
from torch_geometric_stream.datasets.csv_stream import class_lookup
from torch_geometric_stream.evaluation import check_plot_path
from torch_geometric_stream.evaluation.windows import check_window
from torch_geometric_stream.validation import check_device as check_device_exists
from torch_geometric_stream.validation import check_seed

__all__ = ["MAX_THREADS", "Parser", "CommandParser", "positive_int", "thread_count",
           "nonnegative_int", "unit_fraction",
           "window_size", "label_ratio", "tau_value",
           "window_value", "seed_value", "device_value", "parse_seeds", "check_device",
           "check_input_file", "read_config_file", "check_output_file", "check_output_files",
           "check_files_apart", "check_suffixes", "check_folder", "root_option", "add_root_option", "plain_text"]


#: A command-line word that is a negative number, so a value rather than an option:
#: ``-1``, ``-0.5``, ``-.5``, ``-1e-3``, ``-2.5E+2``, ``-inf``, ``-Infinity``, ``-nan``.
#: ``argparse`` (before Python 3.14) reads only the first three kinds as numbers, so
#: ``--feature-range -1e-3 1`` failed, and ``--tau -inf`` said "expected one argument".
NEGATIVE_NUMBER = re.compile(r"^-(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf(?:inity)?|nan)$",
                             re.IGNORECASE)


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that raises :class:`UsageError` instead of printing
    the usage and exiting, so every bad input ends as one ``error:`` line, that
    reads a negative number in scientific notation as a value, and that takes a
    hidden option (``help=argparse.SUPPRESS``) only as spelled in full: no
    abbreviation of it (``run --grid`` for ``--grid-run``) is an option."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = NEGATIVE_NUMBER

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{self.prog}: {message}")

    def _get_option_tuples(self, option_string: str) -> list[tuple[Any, ...]]:
        """The options that ``option_string`` abbreviates (``argparse``'s), less the
        hidden ones (each tuple's first item is the option's action)."""
        return [option for option in super()._get_option_tuples(option_string)
                if option[0].help != argparse.SUPPRESS]


class CommandParser(Parser):
    """The :class:`Parser` of a command (``run``, ``tune``, ...): an option it does
    not know is its own error, named by its prog (``torch_geometric_stream run:
    unrecognized arguments: --datset``), where ``argparse`` hands it up to the
    top-level parser, which names none, followed by ``unknown_hint(unknown)``
    where given (what the command takes instead). It returns no unknown arguments."""

    def __init__(self, *args: Any,
                 unknown_hint: Optional[Callable[[list[str]], str]] = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._unknown_hint = unknown_hint

    def parse_known_args(self, *args: Any, **kwargs: Any) -> Any:  # argparse's overloads
        namespace, unknown = super().parse_known_args(*args, **kwargs)
        if unknown:
            hint = "" if self._unknown_hint is None else self._unknown_hint(unknown)
            self.error(f"unrecognized arguments: {' '.join(unknown)}{hint}")
        return namespace, []


def positive_int(text: str) -> int:
    """An integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


#: The most torch CPU threads ``--threads`` takes: far more than the cores of a
#: machine (more threads than cores is allowed, only slower), far fewer than would
#: exhaust its memory or thread limit (torch starts that many threads).
MAX_THREADS = 1024


def thread_count(text: str) -> int:
    """An integer in :math:`[1,` :data:`MAX_THREADS` :math:`]` (``--threads``)."""
    value = positive_int(text)
    if value > MAX_THREADS:
        raise argparse.ArgumentTypeError(f"expected at most {MAX_THREADS} threads, "
                                         f"got {text!r}")
    return value


def _read_number(text: str, kind: type, fits: Callable[[float], bool], expected: str) -> Any:
    """``text`` read as ``kind`` (``int`` or ``float``) if ``fits`` the value, else
    the ``argparse`` error ``expected {expected}, got {text!r}``."""
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not fits(value):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return value


def nonnegative_int(text: str) -> int:
    """An integer >= 0."""
    return _read_number(text, int, lambda value: value >= 0, "an integer >= 0")


def unit_fraction(text: str) -> float:
    """A number in ``[0, 1]``."""
    return _read_number(text, float, lambda value: 0.0 <= value <= 1.0, "a number in [0, 1]")


def window_size(text: str) -> int:
    """An ``--eval-window``: an integer in ``[1, 2**63 - 1]``
    (:func:`~torch_geometric_stream.evaluation.windows.check_window`)."""
    try:
        return check_window(positive_int(text))
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def class_names(text: str) -> list[str]:
    """A comma list of distinct class names (``ok,fault``), class ids in its order."""
    names = [name.strip() for name in text.split(",")]
    try:
        class_lookup(names)
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"{error} in {text!r}") from None
    return names


def label_ratio(text: str) -> float:
    """A float in (0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1], got {text!r}") from None
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"the label ratio must lie in (0, 1], got {text!r}")
    return value


def tau_value(text: str) -> str | float:
    """A positive number or ``inf``; any spelling of infinity (``Infinity``,
    ``1e999``) is ``"inf"``."""
    value = _read_number(text, float, lambda value: value > 0, "a positive number or 'inf'")
    return "inf" if value == math.inf else value


def window_value(text: str) -> str | int:
    """A ``--robust-window``: a positive integer or ``none`` (no window; kept as
    ``"none"``, which the configuration resolves to ``None``, as ``--tau``'s ``inf``)."""
    if text.strip().lower() == "none":
        return "none"
    try:
        return positive_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'none', "
                                         f"got {text!r}") from None


def coefficient_value(text: str) -> str | float:
    """``adaptive`` or a fixed memory merge coefficient in ``[0, 1]``."""
    if text.strip().lower() == "adaptive":
        return "adaptive"
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected 'adaptive' or a number in [0, 1], "
                                         f"got {text!r}")
    return value


def _seed(text: str, name: str) -> int:
    """``text`` as a seed: an integer in [0, 2**64), what :func:`torch.manual_seed`
    takes; a ``TypeError`` if it is no integer, :func:`check_seed`'s ``ValueError``
    naming ``name`` if it is out of range."""
    try:
        value = int(text)
    except ValueError:
        raise TypeError(f"{name} must be an integer, got {text!r}") from None
    return check_seed(value, name)


def seed_value(text: str) -> int:
    """One seed: an integer in [0, 2**64), what :func:`torch.manual_seed` takes."""
    try:
        return _seed(text, "seed")
    except (TypeError, ValueError) as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def device_value(text: str) -> str:
    """A device this machine has: ``cpu``, ``cuda``, ``cuda:i`` or ``mps``."""
    try:
        return str(check_device_exists(text))
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def parse_seeds(values: Optional[Sequence[str]], option: str = "--seed") -> list[int]:
    """Seeds from repeated ``option`` options, each an integer in [0, 2**64) or
    a comma list of them (duplicates dropped, order kept); ``[0]`` when none is
    given."""
    seeds: list[int] = []
    for value in values or ["0"]:
        for part in value.split(","):
            try:
                seed = _seed(part, option)
            except TypeError:
                raise UsageError(f"{option} expects integers or comma lists of integers, "
                                 f"got {value!r}") from None
            except ValueError as error:
                raise UsageError(str(error)) from None
            if seed not in seeds:
                seeds.append(seed)
    return seeds


def check_device(spec: str, gpu_capable: bool = True) -> str:
    """``spec`` as a canonical device string, if that device exists here.
    ``"auto"``: ``"cuda"`` when CUDA is available and the learner can run
    there (``gpu_capable``), else ``"cpu"``."""
    if spec == "auto":
        return "cuda" if gpu_capable and torch.cuda.is_available() else "cpu"
    try:
        return str(check_device_exists(spec, "--device"))
    except ValueError as error:
        raise UsageError(str(error)) from None


def check_input_file(option: str, path: Path) -> None:
    """Refuse an input file that does not exist or is a folder, naming ``option``."""
    if path.is_dir():
        raise UsageError(f"{option}: {path} is a folder, not a file")
    if not path.exists():
        raise UsageError(f"{option}: file {path} does not exist")


def read_config_file(path: Optional[Path]) -> Optional[dict[str, Any]]:
    """The JSON object of a ``--config`` file (``None`` without one)."""
    if path is None:
        return None
    path = Path(path)
    check_input_file("--config", path)
    try:
        content = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise UsageError(f"--config: cannot read file {path} ({error.strerror or error})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise UsageError(f"--config: file {path} is not valid JSON ({error})") from None
    if not isinstance(content, dict):
        raise UsageError(f"--config: file {path} must hold a JSON object, "
                         f"got {type(content).__name__}")
    return content


def check_output_file(option: str, path: Path) -> None:
    """Refuse, before any work, an output file that could not be written at
    the end: a folder, or a file in a folder that does not exist, is a file, or
    takes no new file (no permission, read-only)."""
    if path.is_dir():
        raise UsageError(f"{option}: {path} is a folder; give a file name")
    check_folder(option, path.parent)
    _check_writable(option, path.parent)


def _check_writable(option: str, folder: Path) -> None:
    """Refuse a folder in which this process cannot create a file (the test file
    is removed at once)."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        raise UsageError(f"{option}: cannot write in folder {folder} "
                         f"({error.strerror or error})") from None


def check_output_files(outputs: Sequence[tuple[str, Optional[Path]]],
                       plot: Optional[Path] = None) -> None:
    """:func:`check_output_file` for each ``(option, path)`` given (``None``: not
    asked for), and the ``--plot`` file's format (and matplotlib) when ``plot``
    is given: fail before the work, not after it."""
    for option, path in outputs:
        if path is not None:
            check_output_file(option, path)
    if plot is not None:
        try:
            check_plot_path(plot)
        except (ImportError, ValueError) as error:
            raise UsageError(f"--plot: {error}") from error


def check_files_apart(inputs: Sequence[tuple[str, Optional[Path]]],
                      outputs: Sequence[tuple[str, Optional[Path]]],
                      may_share: frozenset[str] = frozenset()) -> None:
    """Refuse a file that two of ``outputs`` name, or that an output shares with
    one of ``inputs``, which it would overwrite (each ``(option, path)``; ``None``:
    not given); the two options of ``may_share`` may name one file."""
    named = {path.resolve(): option for option, path in reversed(inputs) if path is not None}
    for option, path in outputs:
        if path is None:
            continue
        earlier = named.setdefault(path.resolve(), option)
        if earlier != option and {earlier, option} != may_share:
            raise UsageError(f"{earlier} and {option} name one file, {path}: the "
                             f"{option} file would overwrite it; give it another name")


#: What an output file of each suffix holds.
_WRITES = {".json": "JSON", ".csv": "CSV"}


def check_suffixes(outputs: Sequence[tuple[str, Optional[Path], str]]) -> None:
    """Refuse an output file (``(option, path, suffix)``; ``path`` ``None``: not
    asked for) whose name does not end in its ``suffix``: records are found by
    theirs (``compare`` and ``tune`` read a folder's ``*.json``), and several
    seeds' files are named ``<stem>_seed<S><suffix>`` (``out.json.gz`` would give
    plain JSON named ``out.json_seed0.gz``)."""
    for option, path, suffix in outputs:
        if path is not None and path.suffix != suffix:
            raise UsageError(f"{option} writes {_WRITES[suffix]}: give a FILE{suffix}, "
                             f"got {path}")


def check_folder(option: str, folder: Path, must_exist: bool = True) -> None:
    """Refuse an output folder that is a file or lies in one, or (``must_exist``)
    that does not exist; else ``folder`` can be created with its parents."""
    nearest = next(path for path in (folder, *folder.parents) if path.exists())
    if not nearest.is_dir():
        raise UsageError(f"{option}: {nearest} is a file, not a folder")
    if must_exist and nearest != folder:
        raise UsageError(f"{option}: folder {folder} does not exist")


def root_option(root: Path) -> str:
    """How an error names the data folder ``root``: ``$TGS_DATA_ROOT`` where that
    variable gave it (``--root``'s default), else ``--root``."""
    variable = os.environ.get("TGS_DATA_ROOT")
    return "$TGS_DATA_ROOT" if variable and Path(variable) == root else "--root"


def add_root_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """The ``--root DIR`` option: the data folder, by default
    :func:`~torch_geometric_stream.datasets.default_data_root` (as found now)."""
    default = default_data_root()
    found = "none found here" if default is None else f"here {default}".replace("%", "%%")
    parser.add_argument("--root", type=Path, default=default, metavar="DIR",
                        help=f"folder with one sub-folder per dataset (default: "
                             f"$TGS_DATA_ROOT or the nearest shared/data; {found})")


#: A reStructuredText role (``:mod:`~a.b```) and an inline literal (````x````).
_RST_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_RST_LITERAL = re.compile(r"``([^`]+)``")


def plain_text(rst: str) -> str:
    """A docstring's reStructuredText as plain help text: roles and inline
    literals become their bare text."""
    return _RST_LITERAL.sub(r"\1", _RST_ROLE.sub(r"\1", rst))
