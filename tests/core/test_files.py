"""Atomic writes: a rerun that skips finished work never reads half a file."""
import json
import os
import stat
from pathlib import Path

import pytest

from torch_geometric_stream.cli.report import write_json
from torch_geometric_stream.evaluation import plot_curves
from torch_geometric_stream.files import (atomic_savefig, atomic_write, atomic_write_csv,
                                          atomic_write_text)


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


def test_a_csv_table_is_written_whole_with_its_header_first(tmp_path, monkeypatch):
    path = atomic_write_csv(tmp_path / "t.csv", [("a", "b,c"), (1, 0.5)])
    assert path.read_bytes() == b'a,"b,c"\r\n1,0.5\r\n'  # the csv module's dialect

    def rows_then_interrupt():
        yield ("a", "b")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write_csv(path, rows_then_interrupt())
    assert path.read_bytes() == b'a,"b,c"\r\n1,0.5\r\n'


def test_tunes_ranking_is_written_whole(tmp_path, monkeypatch):
    # before, the ranking CSV was opened with "w": an interrupted write left half a table
    from torch_geometric_stream.cli.tune import _Ranked, _write_ranking
    path = tmp_path / "ranking.csv"
    row = _Ranked(point={"lr": "1e-3"}, seeds=[0, 2000], score=0.75, std=0.01, accuracy=0.75,
                  ms_per_sample=2.5, config={})
    _write_ranking([row], {"lr": ["1e-3"]}, "accuracy", path)
    whole = path.read_text()
    assert whole == ("rank,lr,seeds,accuracy,std,ms_per_sample\n"
                     "1,1e-3,0 2000,0.750000,0.010000,2.500\n")

    def interrupted_replace(source, target):
        raise KeyboardInterrupt

    monkeypatch.setattr("torch_geometric_stream.files.os.replace", interrupted_replace)
    with pytest.raises(KeyboardInterrupt):
        _write_ranking([row, row], {"lr": ["1e-3"]}, "accuracy", path)
    assert path.read_text() == whole
    assert [p.name for p in tmp_path.iterdir()] == ["ranking.csv"]


@pytest.mark.skipif(not hasattr(os, "fchmod"), reason="no POSIX permission bits")
@pytest.mark.parametrize("umask, expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_a_new_file_gets_the_permissions_of_a_plain_open_under_the_umask(tmp_path, umask,
                                                                         expected):
    # a temporary file is owner-only (0o600): renamed as it was, a run record or plot
    # could not be read by the group or others a plain open() would let read it
    previous = os.umask(umask)
    try:
        path = atomic_write_text(tmp_path / "run.json", "{}\n")
        with open(tmp_path / "plain.json", "w") as handle:
            handle.write("{}\n")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(path.stat().st_mode) == expected
    assert stat.S_IMODE((tmp_path / "plain.json").stat().st_mode) == expected


@pytest.mark.skipif(not hasattr(os, "fchmod"), reason="no POSIX permission bits")
def test_a_rewrite_keeps_the_permissions_the_file_had(tmp_path):
    path = atomic_write_text(tmp_path / "run.json", "{}\n")
    path.chmod(0o640)
    atomic_write_text(path, '{"accuracy": 0.5}\n')
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert path.read_text() == '{"accuracy": 0.5}\n'


def test_a_write_where_files_have_no_permission_bits_sets_none(tmp_path, monkeypatch):
    # as on Windows, where os has no fchmod: the temporary file is renamed as it is
    monkeypatch.delattr(os, "fchmod", raising=False)
    path = atomic_write_text(tmp_path / "run.json", "{}\n")
    atomic_write_text(path, '{"accuracy": 0.5}\n')
    assert path.read_text() == '{"accuracy": 0.5}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.json"]


def _interrupted_savefig(figure, target, **options):
    """A savefig that writes half an image to ``target`` (a path or a handle), then
    is interrupted."""
    if isinstance(target, (str, os.PathLike)):
        with open(target, "wb") as handle:
            handle.write(b"\x89PNG half")
    else:
        target.write(b"\x89PNG half")
    raise KeyboardInterrupt


@pytest.mark.parametrize("name, options, start", [
    ("plot.png", {}, b"\x89PNG"), ("plot.SVG", {}, b"<?xml"), ("plot", {}, b"\x89PNG"),
    ("plot.png.partial", {"format": "svg"}, b"<?xml"),
])
def test_a_figure_is_saved_in_the_format_its_path_names(tmp_path, name, options, start):
    from matplotlib.figure import Figure
    path = atomic_savefig(tmp_path / name, Figure(), **options)
    assert path == tmp_path / name and path.read_bytes().startswith(start)
    assert [p.name for p in tmp_path.iterdir()] == [name]


def test_an_interrupted_savefig_leaves_the_old_figure_and_no_temporary_file(tmp_path,
                                                                            monkeypatch):
    from matplotlib.figure import Figure
    path = atomic_savefig(tmp_path / "plot.png", Figure())
    whole = path.read_bytes()
    monkeypatch.setattr(Figure, "savefig", _interrupted_savefig)
    with pytest.raises(KeyboardInterrupt):
        atomic_savefig(path, Figure())
    assert path.read_bytes() == whole
    assert [p.name for p in tmp_path.iterdir()] == ["plot.png"]


def test_the_plots_of_the_package_and_the_benchmarks_are_saved_atomically(tmp_path,
                                                                          monkeypatch):
    # before, an interrupted plot_curves or step_latency plot left half a PNG
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import step_latency
    from matplotlib.figure import Figure
    monkeypatch.setattr(Figure, "savefig", _interrupted_savefig)
    curves = tmp_path / "curves.png"
    with pytest.raises(KeyboardInterrupt):
        plot_curves({"a": ([1, 2], [0.5, 0.6])}, curves)
    latency = tmp_path / "latency.png"
    with pytest.raises(KeyboardInterrupt):
        step_latency.plot([{"config": "gsad", "model": "ours-full", "threads": 1, "M": 250,
                            "median_ms": 2.0}], latency)
    assert list(tmp_path.iterdir()) == []
