"""Atomic writes: a rerun that skips finished work never reads half a file."""
import json

import pytest

from torch_geometric_stream.cli.report import write_json
from torch_geometric_stream.files import atomic_write, atomic_write_text


def test_a_write_that_fails_midway_leaves_the_old_content_and_no_temporary_file(tmp_path):
    path = tmp_path / "run.json"
    atomic_write_text(path, '{"accuracy": 0.5}\n')

    def half_then_interrupt(handle):
        handle.write(b'{"accur')
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write(path, half_then_interrupt)
    assert path.read_text() == '{"accuracy": 0.5}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]


def test_a_first_write_that_fails_leaves_no_file(tmp_path):
    path = tmp_path / "run.json"
    with pytest.raises(OSError):
        atomic_write(path, lambda handle: (handle.write(b"{"), (_ for _ in ()).throw(OSError)))
    assert list(tmp_path.iterdir()) == []


def test_run_records_are_written_whole(tmp_path):
    path = write_json({"accuracy": 0.75, "seed": 0}, tmp_path / "r.json")
    assert json.loads(path.read_text()) == {"accuracy": 0.75, "seed": 0}
    assert path.read_text().endswith("}\n")
