"""Where a ``run`` record comes from, as ``compare --by`` tells runs apart: the
folder of its file, the code's commit, the host, the torch and package versions.

Each is one short string; a record without the entry (one older than it) reads
:data:`UNKNOWN`."""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from torch_geometric_stream.cli.errors import UsageError

__all__ = ["ORIGINS", "UNKNOWN", "host_name", "origin", "parse_by"]

#: What a record without the entry reads.
UNKNOWN = "unknown"

#: Hex digits of a commit shown (as ``git log --oneline`` shows a few).
_COMMIT_DIGITS = 8


def _folder(path: Path, record: Mapping[str, Any]) -> str:
    """The name of the folder that holds the record's file (``path``'s, made absolute)."""
    return Path(os.path.abspath(path)).parent.name or UNKNOWN


def _commit(path: Path, record: Mapping[str, Any]) -> str:
    """``git_commit``'s first digits, ``-dirty`` added where ``git_dirty`` is true
    (the package's files differed from it)."""
    commit = record.get("git_commit")
    if not commit:
        return UNKNOWN
    return str(commit)[:_COMMIT_DIGITS] + "-dirty" * (record.get("git_dirty") is True)


def _host(path: Path, record: Mapping[str, Any]) -> str:
    """The processor (and accelerator) on the OS release of the ``machine`` entry:
    ``AMD EPYC on 6.18.44-fc-v1252`` from the platform
    ``Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36`` (the record keeps no host
    name; these machines' kernel release names theirs)."""
    machine = record.get("machine")
    if not isinstance(machine, Mapping):
        return UNKNOWN
    chips = " + ".join(str(machine[key]) for key in ("processor", "accelerator")
                       if machine.get(key) not in (None, "", UNKNOWN))
    release = _release(str(machine.get("platform") or ""), str(machine.get("machine") or ""))
    return " on ".join(part for part in (chips, release) if part) or UNKNOWN


def host_name(record: Mapping[str, Any]) -> str:
    """The machine's name in the OS release of the record's ``machine`` entry:
    ``fc-v1252`` from the platform ``Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36``
    (the release without its leading kernel version; :data:`UNKNOWN` without a
    platform). Results differ between machine types, and a name may later be given
    to a machine of another type (``compare --by host`` adds the processor, which
    older records left empty)."""
    machine = record.get("machine")
    platform = str(machine.get("platform") or "") if isinstance(machine, Mapping) else ""
    if not platform or not isinstance(machine, Mapping):
        return UNKNOWN
    release = _release(platform, str(machine.get("machine") or ""))
    return release.partition("-")[2] or release


def _release(platform: str, architecture: str) -> str:
    """The OS release in ``platform.platform()``'s ``system-release-machine-with-libc``:
    ``6.18.44-fc-v1252`` from ``Linux-6.18.44-fc-v1252-x86_64-with-glibc2.36``
    (``platform`` itself where it has no ``-``, ``""`` where it is empty)."""
    text = platform.partition("-with-")[0]
    if architecture and text.endswith(f"-{architecture}"):
        text = text[:-len(architecture) - 1]
    return text.partition("-")[2] or text


def _version(entry: str) -> Callable[[Path, Mapping[str, Any]], str]:
    def version(path: Path, record: Mapping[str, Any]) -> str:
        return str(record.get(entry) or UNKNOWN)
    version.__doc__ = f"The record's ``{entry}``."
    return version


#: What ``--by`` takes, each with what it reads of a record's file and content.
ORIGINS: dict[str, Callable[[Path, Mapping[str, Any]], str]] = {
    "folder": _folder, "commit": _commit, "host": _host,
    "torch": _version("torch_version"), "package": _version("package_version")}


def origin(path: Path, record: Mapping[str, Any], what: str) -> str:
    """``what`` (one of :data:`ORIGINS`) of the record ``record`` read from ``path``."""
    return ORIGINS[what](path, record)


def parse_by(specs: Sequence[str]) -> tuple[str, ...]:
    """``["folder", "commit,host"]`` -> ``("folder", "commit", "host")``: ``--by``
    repeated or given comma lists, in the order given.

    Raises:
        UsageError: an empty item, one not of :data:`ORIGINS`, or one given twice.
    """
    chosen: list[str] = []
    for spec in specs:
        for what in (item.strip() for item in spec.split(",")):
            if what not in ORIGINS:
                raise UsageError(f"--by {spec!r}: expected {', '.join(ORIGINS)} "
                                 f"(or a comma list of them)")
            if what in chosen:
                raise UsageError(f"--by {what} given twice")
            chosen.append(what)
    return tuple(chosen)
