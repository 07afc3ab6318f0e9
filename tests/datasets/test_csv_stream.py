"""CSVRowStream: a CSV read row by row, as load_stream_file reads it whole."""
from __future__ import annotations

import gzip
import io
import sys

import numpy as np
import pytest

from torch_geometric_stream.datasets import DatasetFormatError, load_stream_file
from torch_geometric_stream.datasets.csv_stream import CSVRowStream, class_lookup


@pytest.mark.parametrize("name, text, classes", [
    ("named.csv", "a,b,kind\n1,2,x\n3,4,y\n\n5,6,x\n", ["x", "y"]),
    ("pandas.csv", "0,1,label\n1.5,2,0\n3,4,1\n5,6,1.0\n", ["0", "1"]),  # header by its label
    ("plain.csv", "1,2,0\n3,4,1\n5,6,0\n", ["0", "1"]),  # no header
    ("packed.csv.gz", "a,b,kind\n1,2,x\n3,4,y\n", ["x", "y"]),
])
def test_rows_are_those_of_the_whole_file_reader(tmp_path, name, text, classes):
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    whole, stream = load_stream_file(path), CSVRowStream(path, classes)
    rows = list(stream)
    np.testing.assert_array_equal(np.stack([x for x, _ in rows]), whole.x)
    assert [y for _, y in rows] == whole.y.tolist()
    assert (stream.feature_names, stream.num_features, stream.class_names) == (
        whole.feature_names, whole.num_features, whole.class_names)
    assert [y for _, y in stream] == whole.y.tolist()  # a file is read again


def test_a_file_is_read_again_and_the_limit_stops_the_reading(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("1,2,0\n3,4,1\n5,6,0\n")
    stream = CSVRowStream(path, ["0", "1"], limit=2)
    assert [y for _, y in stream] == [0, 1]
    assert [y for _, y in stream] == [0, 1]


def test_standard_input_is_read_once(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"a,kind\n1,x\n2,y\n")))
    stream = CSVRowStream("-", ["x", "y"])
    assert [y for _, y in stream] == [0, 1]
    assert not sys.stdin.buffer.closed  # detached, not closed
    with pytest.raises(ValueError, match="standard input is read once"):
        list(stream)


def test_bad_rows_are_errors_naming_their_line(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("a,kind\n1,x\n2,z\n")
    with pytest.raises(DatasetFormatError,
                       match=r"^s.csv line 3: label 'z' is none of the classes given \(x, y\)$"):
        list(CSVRowStream(path, ["x", "y"]))
    path.write_text("a,kind\n1,x\nword,y\n")
    with pytest.raises(DatasetFormatError, match="s.csv line 3: column 'a' holds 'word'"):
        list(CSVRowStream(path, ["x", "y"]))
    path.write_text("a,kind\n")
    with pytest.raises(DatasetFormatError, match="s.csv: the stream has a header and no data"):
        list(CSVRowStream(path, ["x", "y"]))
    with pytest.raises(ValueError, match="a stream read row by row is a CSV file"):
        CSVRowStream(tmp_path / "s.npz", ["x"])


def test_class_lookup_matches_text_and_numbers():
    lookup = class_lookup(["low", "2", "0.5"])
    assert [lookup(label) for label in ("low", "2", "2.0", "0.50", "high", "nan")] == [
        0, 1, 1, 2, None, None]
    with pytest.raises(ValueError, match="classes '2' and '2.0' are one class"):
        class_lookup(["2", "2.0"])
    with pytest.raises(ValueError, match="class 1 has an empty name"):
        class_lookup(["a", " "])
    with pytest.raises(ValueError, match="no classes given"):
        class_lookup([])


def test_classes_are_a_sequence_of_names_not_a_string_and_may_be_any_iterable(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("1,2,x\n3,4,y\n")
    # a string would be one class per character: "xy" as x and y
    with pytest.raises(TypeError, match="classes must be a sequence of class names, got the "
                                        "string 'xy'"):
        CSVRowStream(path, "xy")
    with pytest.raises(TypeError, match="got the string 'x,y'"):
        class_lookup("x,y")
    stream = CSVRowStream(path, (name for name in ["x", "y"]))  # read once, kept
    assert stream.class_names == ["x", "y"] and [y for _, y in stream] == [0, 1]
