"""A stream of your own from a CSV file or an ``.npz`` archive."""
import gzip

import numpy as np
import pytest

from torch_geometric_stream.datasets import (DatasetFormatError, DatasetNotFoundError,
                                             is_stream_file, load_stream_file)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_csv_with_a_header_and_string_labels(tmp_path):
    path = write(tmp_path, "s.csv", "a,b,label\n1,2,cat\n3,4.5,dog\n-5,6e1,cat\n")
    ds = load_stream_file(path)
    assert (ds.name, ds.num_samples, ds.num_features, ds.num_classes) == ("s.csv", 3, 2, 2)
    assert ds.x.tolist() == [[1, 2], [3, 4.5], [-5, 60]] and ds.x.dtype == np.float32
    assert ds.y.tolist() == [0, 1, 0] and ds.class_names == ["cat", "dog"]
    assert ds.feature_names == ["a", "b"] and ds.source == str(path.resolve())
    assert ds.value_range is None


def test_numeric_labels_are_sorted_as_numbers_and_the_label_may_be_any_column(tmp_path):
    path = write(tmp_path, "n.csv", "1,2,10\n3,4,2\n5,6,10\n")
    ds = load_stream_file(path)  # no header: every row is data
    assert ds.y.tolist() == [1, 0, 1] and ds.class_names == ["2", "10"]
    assert ds.feature_names is None
    first = load_stream_file(path, label_column="0")
    assert first.x.tolist() == [[2, 10], [4, 2], [6, 10]] and first.y.tolist() == [0, 1, 2]
    assert load_stream_file(path, label_column="-2").x.tolist() == [[1, 10], [3, 2], [5, 10]]


def test_a_named_label_column_makes_the_first_row_the_header_even_of_numbers(tmp_path):
    path = write(tmp_path, "h.csv", "1,cls,2\n0.5,0,7\n0.25,1,8\n")
    ds = load_stream_file(path, label_column="cls")
    assert ds.feature_names == ["1", "2"] and ds.x.tolist() == [[0.5, 7], [0.25, 8]]
    assert ds.y.tolist() == [0, 1]


def test_a_gzipped_csv_and_an_npz_archive(tmp_path):
    with gzip.open(tmp_path / "g.csv.gz", "wt") as handle:
        handle.write("x,y\n1,a\n2,b\n")
    assert load_stream_file(tmp_path / "g.csv.gz").y.tolist() == [0, 1]
    np.savez(tmp_path / "a.npz", X=np.arange(6.0).reshape(3, 2), y=np.array([7, 3, 7]))
    ds = load_stream_file(tmp_path / "a.npz")
    assert ds.x.tolist() == [[0, 1], [2, 3], [4, 5]] and ds.y.tolist() == [1, 0, 1]
    assert ds.class_names == ["3", "7"] and ds.name == "a.npz"


@pytest.mark.parametrize("text, options, message", [
    ("a,b,label\n1,x,cat\n", {}, "data row 1: column 'b' holds 'x', not a number"),
    ("1,,0\n", {}, "data row 1: column 2 is empty"),
    ("1,2\n1,2,3\n", {}, "row 2: 3 fields, the first row has 2"),
    ("a,b\n", {}, "a header and no data rows"),
    ("1\n2\n", {}, "a row needs a feature and a label"),
    ("", {}, "the file has no rows"),
    ("1,nan,0\n", {}, "data row 1: column 2 holds 'nan', not a finite number"),
    ("a,b,c\n1,2,0\n-inf,2,0\n", {}, "data row 2: column 'a' holds '-inf', not a finite"),
    ("1,2,0\n", {"label_column": "3"}, "label column 3 is outside the 3 columns"),
    ("a,b,c\n1,2,0\n", {"label_column": "z"}, r"no column 'z' in the header \['a', 'b', 'c'\]"),
])
def test_a_csv_that_is_no_stream_table_is_named(tmp_path, text, options, message):
    with pytest.raises(DatasetFormatError, match=message):
        load_stream_file(write(tmp_path, "bad.csv", text), **options)


def test_bad_archives_and_paths_are_named(tmp_path):
    np.savez(tmp_path / "nox.npz", a=np.ones(3))
    with pytest.raises(DatasetFormatError, match=r"no array 'x' \(nor 'X'\); it holds \['a'\]"):
        load_stream_file(tmp_path / "nox.npz")
    np.savez(tmp_path / "short.npz", x=np.ones((3, 2)), y=np.ones(2, dtype=int))
    with pytest.raises(DatasetFormatError, match=r"y must be \(3,\) integer or string"):
        load_stream_file(tmp_path / "short.npz")
    write(tmp_path, "junk.npz", "not a zip")
    with pytest.raises(DatasetFormatError, match="not a readable .npz archive"):
        load_stream_file(tmp_path / "junk.npz")
    with pytest.raises(ValueError, match="label_column applies to a CSV file"):
        load_stream_file(tmp_path / "nox.npz", label_column="y")
    with pytest.raises(DatasetNotFoundError, match="does not exist"):
        load_stream_file(tmp_path / "absent.csv")
    with pytest.raises(ValueError, match="must end in .csv, .csv.gz, .npz"):
        load_stream_file(write(tmp_path, "s.txt", "1,2\n"))


@pytest.mark.parametrize("name, expected", [("a.csv", True), ("dir/A.CSV.GZ", True),
                                            ("x.npz", True), ("MNIST", False),
                                            ("a.csv.bz2", False)])
def test_stream_files_are_known_by_their_suffix(name, expected):
    assert is_stream_file(name) is expected
