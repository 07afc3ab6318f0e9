"""A benchmark script's ``main`` on bad input: its usage error, and no data folder."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Sequence

import pytest

NO_DATA_FOLDER = "error: no data folder: pass --root or set TGS_DATA_ROOT"


def usage_error(main: Callable[[Sequence[str]], Any], argv: Sequence[str],
                capsys: pytest.CaptureFixture[str]) -> str:
    """What ``main(argv)`` writes to stderr; it must exit with argparse's usage
    error (status 2), never a traceback."""
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    return capsys.readouterr().err


def without_data_folder(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """No ``$TGS_DATA_ROOT``, and a working directory without ``shared/data`` above it."""
    monkeypatch.delenv("TGS_DATA_ROOT", raising=False)
    monkeypatch.chdir(folder)
