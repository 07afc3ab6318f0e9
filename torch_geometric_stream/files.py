"""Atomic file writes: a reader, or a rerun that skips finished work because its
file exists, never sees half a file, even after a crash or Ctrl-C mid-write."""
from __future__ import annotations

import contextlib
import csv
import io
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Optional, Sequence, Union

__all__ = ["atomic_savefig", "atomic_write", "atomic_write_csv", "atomic_write_text",
           "remove_stale_temporaries"]

#: The random part of a :mod:`tempfile` name: letters, digits and ``_``, no dot.
_RANDOM_PART = r"[a-z0-9_]+"


def atomic_write(path: Union[str, os.PathLike], write: Callable[[IO[bytes]], object]) -> Path:
    """Call ``write(handle)`` on a temporary file beside ``path``, flush and fsync
    it, then rename it onto ``path`` (:func:`os.replace`): ``path`` holds either
    its previous content or the whole new one. The temporary file is removed if
    ``write`` raises (or is interrupted). ``path`` gets the permissions a plain
    ``open(path, "w")`` would give it (:func:`_file_mode`), not the owner-only ones
    of a temporary file.

    Args:
        path (str or os.PathLike): the file to write.
        write (Callable): writes the content to the binary handle it is given.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.
    """
    path = Path(path)
    mode = _file_mode(path)
    handle = tempfile.NamedTemporaryFile(dir=path.parent, prefix=_prefix(path), suffix=".tmp",
                                         delete=False)
    try:
        with handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(handle.name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(handle.name)
        raise
    _fsync_folder(path.parent)
    return path


def atomic_write_text(path: Union[str, os.PathLike], text: str) -> Path:
    """:func:`atomic_write` of ``text`` in UTF-8.

    Args:
        path (str or os.PathLike): the file to write.
        text (str): its content.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.
    """
    return atomic_write(path, lambda handle: handle.write(text.encode("utf-8")))


def atomic_write_csv(path: Union[str, os.PathLike], rows: Iterable[Sequence[Any]],
                     lineterminator: str = "\r\n") -> Path:
    r""":func:`atomic_write_text` of ``rows`` as CSV (the :mod:`csv` module's
    dialect).

    Args:
        path (str or os.PathLike): the file to write.
        rows (Iterable[Sequence]): the rows, the header first.
        lineterminator (str, optional): what ends each line.
            (default: ``"\r\n"``)

    Returns:
        ``path`` as a :class:`~pathlib.Path`.
    """
    text = io.StringIO(newline="")
    csv.writer(text, lineterminator=lineterminator).writerows(rows)
    return atomic_write_text(path, text.getvalue())


def atomic_savefig(path: Union[str, os.PathLike], figure: Any, **options: Any) -> Path:
    """:func:`atomic_write` of a matplotlib ``figure``, so that an interrupted plot
    leaves no half image.

    Args:
        path (str or os.PathLike): the image file to write.
        figure (matplotlib.figure.Figure): the figure; ``figure.savefig(handle, **options)`` writes
            it.
        **options (optional): passed to ``savefig``. The format is ``options["format"]`` if
            given, else the one ``path``'s suffix names (no suffix: matplotlib's
            default, PNG), as ``figure.savefig(path)`` would choose: the temporary
            file's own suffix names none.

    Returns:
        ``path`` as a :class:`~pathlib.Path`.
    """
    path = Path(path)
    if options.get("format") is None:
        options["format"] = path.suffix.removeprefix(".") or None
    return atomic_write(path, lambda handle: figure.savefig(handle, **options))


def remove_stale_temporaries(path: Union[str, os.PathLike]) -> None:
    """Remove the temporary files that :func:`atomic_write` of ``path`` left
    when its process was killed (SIGKILL, power loss) mid-write.

    Only ``path``'s own temporary files (``.NAME.RANDOM.tmp`` beside it) are
    removed, never another file's, so writers of other files in the folder are
    safe. A write of ``path`` running at the same time in another process would
    lose its temporary file: call this only where ``path`` has one writer.

    Args:
        path (str or os.PathLike): the file whose temporaries to remove (a
            missing folder has none).
    """
    path = Path(path)
    own = re.compile(re.escape(_prefix(path)) + _RANDOM_PART + re.escape(".tmp"))
    with contextlib.suppress(FileNotFoundError):  # no folder: nothing to remove
        for candidate in path.parent.iterdir():
            if own.fullmatch(candidate.name) and candidate.is_file():
                with contextlib.suppress(FileNotFoundError):
                    candidate.unlink()


def _file_mode(path: Path) -> Optional[int]:
    """The permission bits of ``path`` where it exists (a rewrite keeps them), else
    those of a new file under the process's umask (``0o666 & ~umask``: ``0o644``
    under the usual ``0o022``); ``None`` where files have no such bits (Windows)."""
    if not hasattr(os, "fchmod"):
        return None
    with contextlib.suppress(FileNotFoundError):
        return stat.S_IMODE(path.stat().st_mode)
    return 0o666 & ~_umask()


def _umask() -> int:
    """The process's umask: read from ``/proc`` on Linux, else set and restored
    (the only portable way to read it)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _prefix(path: Path) -> str:
    """The name start of ``path``'s temporary files."""
    return f".{path.name}."


def _fsync_folder(folder: Path) -> None:
    """Make the rename durable where folders can be fsync'ed (POSIX)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:  # e.g. Windows
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(descriptor)
    finally:
        os.close(descriptor)
