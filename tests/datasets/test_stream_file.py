"""A stream of your own from a CSV file or an ``.npz`` archive."""
import gzip

import numpy as np
import pytest
from hypothesis import given, strategies as st

from stream_file_helpers import load_with_peak
from torch_geometric_stream.datasets import (DatasetFormatError, DatasetNotFoundError,
                                             is_stream_file, load_stream_file,
                                             stream_file_digest)
from torch_geometric_stream.datasets.csv_stream import CSVRowStream
from torch_geometric_stream.datasets.numbers import all_numbers, is_number


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
    ("a,b,label\n1,x,cat\n", {}, "bad.csv line 2: column 'b' holds 'x', not a number"),
    ("1,,0\n", {}, "bad.csv line 1: column 2 is empty"),
    ("1,2\n1,2,3\n", {}, "bad.csv line 2: 3 fields, line 1 has 2"),
    ("a,b\n", {}, "a header and no data rows"),
    ("1\n2\n", {}, "line 1: a row needs a feature and a label, this one has 1 field"),
    ("", {}, "the file has no rows"),
    ("1,nan,0\n", {}, r"line 1: column 2 holds 'nan' \(a missing value: fill in or drop"),
    ("a,b,c\n1,2,0\n-inf,2,0\n", {}, "line 3: column 'a' holds '-inf', not a finite"),
    ("1,2,0\n", {"label_column": "3"}, "label column 3 is outside the 3 columns"),
    ("a,b,c\n1,2,0\n", {"label_column": "z"}, r"no column 'z' in the header \['a', 'b', 'c'\]"),
    # pandas' to_csv writes its index as a first column without a name
    (",a,b,label\n0,1.5,2,x\n1,1,2,y\n", {}, "line 1: column 1 has no name in the header; "
     r"if it is an index \(pandas writes one unless to_csv\(\.\.\., index=False\)\)"),
    (",a,label\n0,1.5,x\n", {"label_column": "label"}, "line 1: column 1 has no name"),
])
def test_a_csv_that_is_no_stream_table_is_named(tmp_path, text, options, message):
    with pytest.raises(DatasetFormatError, match=message):
        load_stream_file(write(tmp_path, "bad.csv", text), **options)


@pytest.mark.parametrize("x, y, message", [
    (np.ones(3), np.ones(3, dtype=int),
     r"^a.npz: x must be a \(T, d\) array of numbers, got shape \(3,\) and dtype float64$"),
    (np.array([["a", "b"]]), np.ones(1, dtype=int),
     r"^a.npz: x must be a \(T, d\) array of numbers, got shape \(1, 2\) and dtype <U1$"),
    (np.ones((0, 2)), np.ones(0, dtype=int), "^a.npz: the stream has no rows$"),
    (np.ones((2, 2)), np.array([b"no", b"\xff"]),
     "^a.npz: y holds bytes that are not UTF-8 .*can't decode byte 0xff")])
def test_an_archive_of_no_stream_is_named(tmp_path, x, y, message):
    np.savez(tmp_path / "a.npz", x=x, y=y)
    with pytest.raises(DatasetFormatError, match=message):
        load_stream_file(tmp_path / "a.npz")


def test_bad_archives_and_paths_are_named(tmp_path):
    np.savez(tmp_path / "nox.npz", a=np.ones(3))
    with pytest.raises(DatasetFormatError, match=r"no array 'x' \(nor 'X'\); it holds \['a'\]"):
        load_stream_file(tmp_path / "nox.npz")
    np.savez(tmp_path / "short.npz", x=np.ones((3, 2)), y=np.ones(2, dtype=int))
    with pytest.raises(DatasetFormatError, match=r"y must be \(3,\) number or string"):
        load_stream_file(tmp_path / "short.npz")
    write(tmp_path, "junk.npz", "not a zip")
    with pytest.raises(DatasetFormatError, match="not a readable .npz archive"):
        load_stream_file(tmp_path / "junk.npz")
    with pytest.raises(ValueError, match="^label_column applies to a CSV or ARFF file; an "
                                         ".npz file holds its labels in the array y$"):
        load_stream_file(tmp_path / "nox.npz", label_column="y")
    with pytest.raises(DatasetNotFoundError, match=r"^stream file \S+absent.csv does not exist$"):
        load_stream_file(tmp_path / "absent.csv")
    with pytest.raises(ValueError, match="must end in .csv, .csv.gz, .npz"):
        load_stream_file(write(tmp_path, "s.txt", "1,2\n"))


@pytest.mark.parametrize("name, expected", [("a.csv", True), ("dir/A.CSV.GZ", True),
                                            ("x.npz", True), ("MNIST", False),
                                            ("a.csv.bz2", False)])
def test_stream_files_are_known_by_their_suffix(name, expected):
    assert is_stream_file(name) is expected


def test_a_utf8_byte_order_mark_is_no_part_of_the_first_field(tmp_path):
    (tmp_path / "h.csv").write_bytes("\ufeffa,b,label\n1,2,x\n3,4,y\n".encode())
    ds = load_stream_file(tmp_path / "h.csv", label_column="label")
    assert ds.feature_names == ["a", "b"] and ds.class_names == ["x", "y"]
    (tmp_path / "n.csv").write_bytes("\ufeff1,2,0\n3,4,1\n".encode())  # no header: 2 rows
    assert load_stream_file(tmp_path / "n.csv").x.tolist() == [[1, 2], [3, 4]]


def test_blank_lines_are_skipped_and_errors_name_the_line_of_the_file(tmp_path):
    text = "a,b,c\r\n\r\n1,2,0\r\n  \r\n,,\r\n3,4,1\r\n\r\n"  # Windows, a spreadsheet's ",,"
    assert load_stream_file(write(tmp_path, "s.csv", text)).x.tolist() == [[1, 2], [3, 4]]
    with pytest.raises(DatasetFormatError, match=r"^b.csv line 5: column 'b' holds 'x'"):
        load_stream_file(write(tmp_path, "b.csv", "a,b,c\n\n1,2,0\n\n1,x,0\n"))


@pytest.mark.parametrize("text, separator", [("a;b;label\n1;2;x\n", "semicolons"),
                                             ("1\t2\t0\n", "tabs")])
def test_a_table_of_other_separators_is_named(tmp_path, text, separator):
    with pytest.raises(DatasetFormatError, match=f"^t.csv line 1: one field, separated by "
                                                 f"{separator}; a stream file's fields are "
                                                 f"separated by commas"):
        load_stream_file(write(tmp_path, "t.csv", text))
    with pytest.raises(DatasetFormatError, match=r"line 2: column 2 holds '2;5', not a number "
                                                 r"\(fields are separated by commas, not "
                                                 r"semicolons\)"):
        load_stream_file(write(tmp_path, "d.csv", "1,2,0\n1,2;5,0\n"))


def test_a_header_of_numbered_features_over_numeric_labels_is_the_header(tmp_path):
    # as pandas.DataFrame(x).assign(label=y).to_csv(index=False) writes it
    ds = load_stream_file(write(tmp_path, "p.csv", "0,1,label\n0.5,2,1\n1.5,3,0\n"))
    assert ds.feature_names == ["0", "1"] and ds.x.tolist() == [[0.5, 2], [1.5, 3]]
    assert ds.class_names == ["0", "1"] and ds.y.tolist() == [1, 0]
    words = load_stream_file(write(tmp_path, "w.csv", "0,1,cat\n0.5,2,dog\n"))
    assert words.feature_names is None and words.class_names == ["cat", "dog"]


@pytest.mark.parametrize("text, message", [
    ("1,2,0\n3,4,\n", r"e.csv line 2: column 3 \(the label\) is empty; every row needs its"),
    ("a,b,y\n1,2,0\n3,4,nan\n", "e.csv line 3: column 'y' \\(the label\\) holds 'nan', not a "
                                "label"),
    ("1,2,0\n1e39,2,1\n", r"e.csv line 2: column 1 holds '1e39', beyond float32's range"),
])
def test_a_missing_label_or_a_feature_beyond_float32_names_its_line(tmp_path, text, message):
    with pytest.raises(DatasetFormatError, match=f"^{message}"):
        load_stream_file(write(tmp_path, "e.csv", text))


def test_labels_beyond_int64_and_whole_floats_keep_their_classes(tmp_path):
    ds = load_stream_file(write(tmp_path, "l.csv", "1,2,1e20\n3,4,-1\n5,6,-1.0\n"))
    assert ds.class_names == ["-1.0", "1e+20"] and ds.y.tolist() == [1, 0, 0]


def test_the_label_column_name_is_unique_and_read_without_spaces(tmp_path):
    path = write(tmp_path, "h.csv", "a,a,b\n1,2,0\n")
    with pytest.raises(DatasetFormatError, match=r"h.csv: 2 columns named 'a' in the header"):
        load_stream_file(path, label_column="a")
    path = write(tmp_path, "g.csv", "a,c,b\n1,2,0\n")
    assert load_stream_file(path, label_column=" b ").x.tolist() == [[1, 2]]


@pytest.mark.parametrize("text, options, message", [
    # before: accepted, the label read from one of the two (which, by the reader)
    ("a,label,label\n1,0,1\n", {}, "columns 2 and 3 of the header share the name 'label'"),
    ("a,label,label\n1,0,1\n", {"label_column": "1"},
     "columns 2 and 3 of the header share the name 'label'"),
    # before: accepted, two features of one name
    ("a,a,label\n1,0,1\n2,3,0\n", {"label_column": " label"},
     "columns 1 and 2 of the header share the name 'a'"),
    ("x,b,x,x\n1,0,1,2\n", {}, "columns 1, 3 and 4 of the header share the name 'x'"),
    # a header by its label alone (a word over number labels)
    ("2,2,label\n0.5,1,0\n1.5,2,1\n", {}, "columns 1 and 2 of the header share the name '2'"),
])
def test_a_header_that_names_two_columns_alike_is_refused_by_both_readers(tmp_path, text,
                                                                          options, message):
    path = write(tmp_path, "d.csv", text)
    full = f"^d.csv line 1: {message}; give each column its own name$"
    with pytest.raises(DatasetFormatError, match=full):
        load_stream_file(path, **options)
    with pytest.raises(DatasetFormatError, match=full):
        list(CSVRowStream(path, ["0", "1"], **options))


def test_an_upper_case_gzip_name_is_read_and_unreadable_bytes_are_named(tmp_path):
    (tmp_path / "G.CSV.GZ").write_bytes(gzip.compress(b"1,2,0\n3,4,1\n"))
    assert load_stream_file(tmp_path / "G.CSV.GZ").x.tolist() == [[1, 2], [3, 4]]
    (tmp_path / "cut.csv.gz").write_bytes(gzip.compress(b"1,2,0\n3,4,1\n")[:-8])
    with pytest.raises(DatasetFormatError, match="^cut.csv.gz: cannot be read"):
        load_stream_file(tmp_path / "cut.csv.gz")
    (tmp_path / "plain.csv.gz").write_bytes(b"1,2,0\n")
    with pytest.raises(DatasetFormatError, match=r"^plain.csv.gz: cannot be read \(Not a gzip"):
        load_stream_file(tmp_path / "plain.csv.gz")
    (tmp_path / "latin.csv").write_bytes("a,b,label\n1,2,x\n3,4,caf\xe9\n".encode("latin-1"))
    with pytest.raises(DatasetFormatError, match=r"^latin.csv line 3: not UTF-8 text"):
        load_stream_file(tmp_path / "latin.csv")
    (tmp_path / "folder.csv").mkdir()
    with pytest.raises(DatasetNotFoundError,
                       match=r"^stream file \S+folder.csv is a folder, not a file$"):
        load_stream_file(tmp_path / "folder.csv")


def test_npz_labels_may_be_floats_or_bytes_and_are_checked(tmp_path):
    x = np.arange(6).reshape(3, 2)  # integer features are numbers too
    np.savez(tmp_path / "f.npz", x=x, y=np.array([1.0, 0.0, 1.0]))
    ds = load_stream_file(tmp_path / "f.npz")
    assert ds.class_names == ["0", "1"] and ds.y.tolist() == [1, 0, 1]
    np.savez(tmp_path / "b.npz", x=x, y=np.array([b"no", b"yes", b"no"]))
    assert load_stream_file(tmp_path / "b.npz").class_names == ["no", "yes"]
    np.savez(tmp_path / "n.npz", x=x, y=np.array([1.0, np.nan, np.nan]))
    with pytest.raises(DatasetFormatError, match=r"^n.npz: y\[1\] = nan, not a label \(the "
                                                 r"first of 2\)"):
        load_stream_file(tmp_path / "n.npz")


@pytest.mark.parametrize("arrays, message", [
    ({"x": np.ones((2, 2)), "X": np.ones((2, 2)), "y": np.ones(2)},
     "arrays 'x' and 'X' both; keep one"),
    ({"x": np.ones((2, 0)), "y": np.ones(2)}, r"x has no feature columns \(shape \(2, 0\)\)"),
    ({"x": np.array([[1.0, 2.0], [1e300, 3.0]]), "y": np.ones(2)},
     r"x\[1, 0\] = 1e\+300 is beyond float32's range"),
    # a NaN: the hint a CSV's missing value gets (before: "is not a finite number"; then
    # "x[0, 1] = nan (a missing value: fill in or drop the row first) (the first of 2)")
    ({"x": np.array([[1.0, np.nan], [np.nan, 3.0]]), "y": np.ones(2)},
     r"x\[0, 1\] = nan \(the first of 2\) is a missing value: fill in or drop the row first$"),
    ({"x": np.array([[1.0, 2.0], [-np.inf, 3.0]]), "y": np.ones(2)},
     r"x\[1, 0\] = -inf is not a finite number$"),
    ({"x": np.ones((2, 2)), "y": np.array([1, None], dtype=object)},
     "array 'y' cannot be read .*allow_pickle=False"),
])
def test_an_npz_that_is_no_stream_is_named(tmp_path, arrays, message):
    np.savez(tmp_path / "a.npz", **arrays)
    with pytest.raises(DatasetFormatError, match=f"^a.npz: {message}"):
        load_stream_file(tmp_path / "a.npz")


def test_a_single_npy_array_named_npz_is_named(tmp_path):
    with open(tmp_path / "a.npz", "wb") as handle:
        np.save(handle, np.ones(3))
    with pytest.raises(DatasetFormatError, match="^a.npz: one .npy array, not an .npz archive"):
        load_stream_file(tmp_path / "a.npz")


#: A stream file's first 3 data rows, each fine, then rows every check refuses.
GOOD = "a,b,label\n1,2,x\n3,4,y\n5,6,x\n"
BAD_TAILS = ["7,oops,z\n", "7,8,\n", "7,8\n", "7,nan,z\n", "7;8;z\n", "7,1e39,z\n"]


@pytest.mark.parametrize("tail", BAD_TAILS)
def test_a_limit_checks_its_rows_and_no_row_after(tmp_path, tail):
    path = write(tmp_path, "s.csv", GOOD + tail)
    with pytest.raises(DatasetFormatError, match="^s.csv line 5"):
        load_stream_file(path)
    ds = load_stream_file(path, limit=3)  # as if the file ended after its 3rd data row
    assert ds.x.tolist() == [[1, 2], [3, 4], [5, 6]] and ds.y.tolist() == [0, 1, 0]
    assert ds.class_names == ["x", "y"] and ds.feature_names == ["a", "b"]
    with pytest.raises(DatasetFormatError, match="^t.csv line 3: column 'b' holds 'oops'"):
        load_stream_file(write(tmp_path, "t.csv", "a,b,label\n1,2,x\n3,oops,y\n"), limit=3)


def test_a_limit_keeps_the_classes_of_its_rows_and_nan_labels_are_checked(tmp_path):
    path = write(tmp_path, "n.csv", "1,2,10\n3,4,2\n5,6,10\n7,8,1\n9,0,nan\n")
    ds = load_stream_file(path, limit=2)
    assert ds.class_names == ["2", "10"] and ds.y.tolist() == [1, 0] and ds.num_classes == 2
    assert load_stream_file(path, limit=4).class_names == ["1", "2", "10"]
    with pytest.raises(DatasetFormatError, match=r"^n.csv line 5: column 3 \(the label\) "
                                                 r"holds 'nan'"):
        load_stream_file(path, limit=5)


def test_a_limit_reads_a_gzip_and_a_bom_file_as_far_as_its_rows(tmp_path):
    # a tail cut short (a download stopped) and bytes that are not UTF-8 beyond the
    # rows: within the first read-ahead block, yet never read as rows
    rows = "".join(f"{i},{i % 2}\n" for i in range(20000))
    (tmp_path / "cut.csv.gz").write_bytes(gzip.compress(rows.encode())[:-50])
    with pytest.raises(DatasetFormatError, match="^cut.csv.gz: cannot be read"):
        load_stream_file(tmp_path / "cut.csv.gz")
    ds = load_stream_file(tmp_path / "cut.csv.gz", limit=5)
    assert ds.x.ravel().tolist() == [0, 1, 2, 3, 4] and ds.y.tolist() == [0, 1, 0, 1, 0]
    (tmp_path / "latin.csv").write_bytes("\ufeffa,label\n1,x\n2,y\n3,caf\xe9\n".encode()[:-3]
                                         + "caf\xe9\n".encode("latin-1"))
    with pytest.raises(DatasetFormatError, match="^latin.csv line 4: not UTF-8 text"):
        load_stream_file(tmp_path / "latin.csv")
    ds = load_stream_file(tmp_path / "latin.csv", limit=2)
    assert ds.feature_names == ["a"] and ds.class_names == ["x", "y"]


def test_a_limit_reads_one_row_more_while_the_first_may_be_a_header_by_its_label(tmp_path):
    # a word over labels that are numbers names the label column (pandas' to_csv)
    numbers = write(tmp_path, "p.csv", "0,1,label\n0.5,2,1\n1.5,3,0\n2.5,4,7\n")
    ds = load_stream_file(numbers, limit=1)
    assert ds.feature_names == ["0", "1"] and ds.x.tolist() == [[0.5, 2]]
    assert ds.class_names == ["1"]
    assert load_stream_file(numbers, limit=2).x.tolist() == [[0.5, 2], [1.5, 3]]
    # a word over words: the first row is data; the row read to know it is dropped
    words = write(tmp_path, "w.csv", "0,1,cat\n0.5,2,dog\n1.5,x,cat\n")
    ds = load_stream_file(words, limit=1)
    assert ds.feature_names is None and ds.x.tolist() == [[0, 1]] and ds.class_names == ["cat"]
    assert load_stream_file(words, limit=2).class_names == ["cat", "dog"]
    alone = write(tmp_path, "a.csv", "0,1,label\n")  # one row, no other label: data
    assert load_stream_file(alone, limit=1).class_names == ["label"]


def test_csv_features_are_gathered_as_float32_in_about_twice_their_memory(tmp_path):
    # 4095 rows of 128 features, 2 MB of float32, in 2 blocks of 2048 rows with a
    # header by its label alone (pandas' to_csv): the first row read, then dropped
    values = np.random.default_rng(0).normal(scale=1e3, size=(4095, 128))
    rows = "".join(",".join(map(repr, row)) + f",{number % 3}\n"
                   for number, row in enumerate(values.tolist()))
    path = write(tmp_path, "wide.csv", ",".join(map(str, range(128))) + f",label\n{rows}")
    ds, peak = load_with_peak(path)
    # each value read as float64, then rounded to float32
    assert ds.x.dtype == np.float32 and ds.x.tobytes() == values.astype(np.float32).tobytes()
    assert ds.y.tolist() == [number % 3 for number in range(4095)]
    assert ds.feature_names == [str(column) for column in range(128)]
    # the features, and as much again while their blocks are joined (a float64 row
    # each, stacked, then cast to float32, took 4.6 times as much)
    assert peak < 2.5 * ds.x.nbytes, peak / ds.x.nbytes
    for limit in (2047, 2048):  # a limit's rows: the first block's, and one more
        assert load_stream_file(path, limit=limit).x.tobytes() == ds.x[:limit].tobytes()


def test_a_limit_on_an_npz_drops_the_rows_after_it_before_any_check(tmp_path):
    x = np.array([[1.0, 2.0], [3.0, 4.0], [np.inf, 0.0]])
    np.savez(tmp_path / "a.npz", x=x, y=np.array([5.0, 3.0, np.nan]))
    with pytest.raises(DatasetFormatError, match=r"x\[2, 0\] = inf"):
        load_stream_file(tmp_path / "a.npz")
    ds = load_stream_file(tmp_path / "a.npz", limit=2)
    assert ds.x.tolist() == [[1, 2], [3, 4]] and ds.class_names == ["3", "5"]


@pytest.mark.parametrize("limit, error, message", [(0, ValueError, "limit must be positive"),
                                                   (-1, ValueError, "limit must be positive"),
                                                   (2.0, TypeError, "must be an integer"),
                                                   (True, TypeError, "must be an integer")])
def test_a_limit_is_a_positive_integer(tmp_path, limit, error, message):
    path = write(tmp_path, "s.csv", GOOD)
    for load in (load_stream_file, stream_file_digest):
        with pytest.raises(error, match=message):
            load(path, limit=limit)


def test_the_digest_of_a_limit_is_that_of_the_text_its_rows_are_read_from(tmp_path):
    path = write(tmp_path, "s.csv", GOOD + "7,8,z\n")
    whole, first = stream_file_digest(path), stream_file_digest(path, limit=3)
    assert first != whole
    assert first == stream_file_digest(write(tmp_path, "c.csv", GOOD), limit=3)  # cut there
    write(tmp_path, "s.csv", GOOD + "7,8,w\n9,9,w\n")  # the tail edited
    assert stream_file_digest(path) != whole and stream_file_digest(path, limit=3) == first
    write(tmp_path, "s.csv", GOOD.replace("5,6", "5,7") + "7,8,z\n")  # a row read edited
    assert stream_file_digest(path, limit=3) != first
    assert stream_file_digest(path, "label", limit=3) != stream_file_digest(path, limit=3)
    assert stream_file_digest(path, limit=2) != stream_file_digest(path, limit=3)
    with pytest.raises(DatasetFormatError, match="^bad.csv line 3"):
        stream_file_digest(write(tmp_path, "bad.csv", "a,b,c\n1,2,0\n1,x,0\n"), limit=2)


def test_an_integer_label_column_that_names_another_column_is_refused(tmp_path):
    # pandas' to_csv of a label column first, then unnamed (numbered) features
    path = write(tmp_path, "p.csv", "label,0,1\n2,0.5,1.5\n1,0.25,2.5\n")
    with pytest.raises(DatasetFormatError, match=(
            r"^p.csv: label column 0 is ambiguous: the position of column 'label' and the "
            r"name of another in the header; give 'label' or -3 for column 'label' "
            r"\(position 0\), -2 for column '0' \(position 1\)$")):
        load_stream_file(path, label_column="0")  # before: column 'label', read by position
    with pytest.raises(DatasetFormatError, match=r"give -2 for column '0' \(position 1\), "
                                                 r"2 or -1 for column '1' \(position 2\)$"):
        load_stream_file(path, label_column=" 1 ")
    by_name = load_stream_file(path, label_column="label")  # each other spelling is taken
    assert by_name.feature_names == ["0", "1"] and by_name.class_names == ["1", "2"]
    assert by_name.y.tolist() == [1, 0]
    assert load_stream_file(path, label_column="-3").y.tolist() == [1, 0]
    named_0 = load_stream_file(path, label_column="-2")
    assert named_0.feature_names == ["label", "1"] and named_0.class_names == ["0.25", "0.5"]
    assert named_0.y.tolist() == [1, 0] and named_0.x.tolist() == [[2, 1.5], [1, 2.5]]


def test_an_integer_label_column_stays_a_position_where_no_header_names_it(tmp_path):
    # the first row is data (a word over word labels): its numbers are no names
    words = write(tmp_path, "w.csv", "2,7,cat\n1,2,dog\n")
    ds = load_stream_file(words, label_column="2")
    assert ds.feature_names is None and ds.x.tolist() == [[2, 7], [1, 2]]
    assert ds.class_names == ["cat", "dog"]
    numbers = write(tmp_path, "n.csv", "1,0,5\n3,4,0\n")  # no header: every row is data
    assert load_stream_file(numbers, label_column="0").y.tolist() == [0, 1]
    same = write(tmp_path, "s.csv", "a,1,c\n5,0,6\n7,1,8\n")  # named 1, at position 1
    assert load_stream_file(same, label_column="1").feature_names == ["a", "c"]


def test_a_header_by_its_label_alone_makes_an_integer_that_names_another_ambiguous(tmp_path):
    # the word 'label' over numbers makes the first row the header
    path = write(tmp_path, "p.csv", "3,2,label\n0.5,1,0\n1.5,2,1\n")
    with pytest.raises(DatasetFormatError, match=r"^p.csv: label column 2 is ambiguous"):
        load_stream_file(path, label_column="2")
    assert load_stream_file(path, label_column="-1").feature_names == ["3", "2"]
    # where each spelling of a column is another's name, only a new name picks it
    odd = write(tmp_path, "o.csv", "w,3,-1,0\n1,2,3,4\n5,6,7,8\n")
    with pytest.raises(DatasetFormatError, match=r"give 'w' or -4 for column 'w' \(position "
                                                 r"0\), column '0' \(position 3\) a new "
                                                 r"name$"):
        load_stream_file(odd, label_column="0")
    # no name picks one of two unnamed columns: the two share the empty one
    unnamed = write(tmp_path, "u.csv", "a,,,1\n1,x,3,4\n4,y,6,7\n")
    with pytest.raises(DatasetFormatError, match=r"give -3 for column '' \(position 1\), 3 or "
                                                 r"-1 for column '1' \(position 3\)$"):
        load_stream_file(unnamed, label_column="1")


def test_an_integer_label_column_beyond_the_positions_is_a_header_name(tmp_path):
    path = write(tmp_path, "h.csv", "a,b,7\n1,2,x\n3,4,y\n")
    ds = load_stream_file(path, label_column="7")
    assert ds.feature_names == ["a", "b"] and ds.class_names == ["x", "y"]
    with pytest.raises(DatasetFormatError, match=r"d.csv: 2 columns named '9' in the header"):
        load_stream_file(write(tmp_path, "d.csv", "9,9,c\n1,2,x\n"), label_column="9")


@pytest.mark.parametrize("labels, y, class_names", [
    (["2", "10", "a", "2"], [0, 1, 2, 0], ["2", "10", "a"]),  # before: '10' < '2' < 'a'
    (["b", "-1", "a", "0.5"], [3, 0, 2, 1], ["-1.0", "0.5", "a", "b"]),  # floats as floats
    (["2", "2.0", "x", "1e1"], [0, 0, 2, 1], ["2", "10", "x"]),  # before: 4 classes
    (["10", "2", "10"], [1, 0, 1], ["2", "10"]),  # as before: numbers alone, words alone
    (["b", "10", "a"], [2, 0, 1], ["10", "a", "b"]),  # as before: the numbers already first
    (["dog", "cat"], [1, 0], ["cat", "dog"]),
    (["1", "x", "nano"], [0, 2, 1], ["1", "nano", "x"]),
    ([" 2", "a ", "2"], [0, 1, 0], ["2", "a"]),  # stripped (before, in an .npz: 3 classes)
])
@pytest.mark.parametrize("form", ["csv", "npz str", "npz bytes"])
def test_labels_of_numbers_and_words_have_the_numbers_classes_first_in_either_file(
        tmp_path, labels, y, class_names, form):
    # one table gives the same classes saved as CSV or as .npz (before: an .npz array of
    # strings sorted as text, '10' < '2' < 'a')
    if form == "csv":
        text = "".join(f"{row},{label}\n" for row, label in enumerate(labels))
        ds = load_stream_file(write(tmp_path, "m.csv", text))
    else:
        array = np.array(labels, dtype="S" if form == "npz bytes" else "U")
        np.savez(tmp_path / "m.npz", x=np.arange(len(labels))[:, None], y=array)
        ds = load_stream_file(tmp_path / "m.npz")
    assert ds.y.tolist() == y and ds.class_names == class_names


@pytest.mark.parametrize("labels, y, class_names", [
    # float() reads these as numbers; a CSV's user means words (before: one class '1000',
    # '3', 'inf' a missing label)
    (["1000", "1_000", "a"], [0, 1, 2], ["1000", "1_000", "a"]),
    (["3", "\u0663"], [0, 1], ["3", "\u0663"]),  # ARABIC-INDIC DIGIT THREE
    (["1", "\uff12"], [0, 1], ["1", "\uff12"]),  # FULLWIDTH DIGIT TWO
    # numbers as a CSV writes them stay numbers: signs, fractions, exponents
    (["+1", ".5", "5.", "1E1", "-2e-1"], [2, 1, 3, 4, 0], ["-0.2", "0.5", "1.0", "5.0", "10.0"]),
])
@pytest.mark.parametrize("form", ["csv", "npz str"])
def test_a_label_is_a_number_in_ascii_decimal_notation_only(tmp_path, labels, y,
                                                            class_names, form):
    if form == "csv":
        text = "".join(f"{row},{label}\n" for row, label in enumerate(labels))
        path = tmp_path / "m.csv"
        path.write_text(text, encoding="utf-8")
    else:
        path = tmp_path / "m.npz"
        np.savez(path, x=np.arange(len(labels))[:, None], y=np.array(labels))
    ds = load_stream_file(path)
    assert ds.y.tolist() == y and ds.class_names == class_names


@pytest.mark.parametrize("labels", [["1", "Infinity"], ["1", "-NaN"], ["1", "iNf"]])
def test_nan_and_infinities_among_number_labels_stay_missing_labels(tmp_path, labels):
    text = "".join(f"{row},{label}\n" for row, label in enumerate(labels))
    with pytest.raises(DatasetFormatError, match=f"line 2: column 2 \\(the label\\) holds "
                                                 f"'{labels[1]}', not a label"):
        load_stream_file(write(tmp_path, "n.csv", text))


def test_a_label_column_index_is_ascii_digits(tmp_path):
    # before: '0_2' was the index 2, ambiguous with the column named '0_2'
    ds = load_stream_file(write(tmp_path, "i.csv", "0_2,b,c\nx,1,2\ny,3,4\n"),
                          label_column="0_2")
    assert ds.class_names == ["x", "y"] and ds.feature_names == ["b", "c"]


@given(st.text(alphabet="0123456789+-.eE_ \u0663\uff12nNaAiIfFtTyY", max_size=8))
def test_a_number_is_text_float_reads_in_ascii_without_underscores(text):
    # the rule, and the shortcut all_numbers takes for it in a row that float() reads
    text = text.strip()
    try:
        float(text)
        reads = True
    except ValueError:
        reads = False
    assert is_number(text) == (reads and text.isascii() and "_" not in text)
    if reads:
        assert all_numbers([text, "1"]) == is_number(text)


@pytest.mark.parametrize("value", ["1_000", "\u0663"])
def test_a_feature_is_a_number_in_ascii_decimal_notation_only(tmp_path, value):
    # before: read as 1000 and 3
    path = tmp_path / "f.csv"
    path.write_text(f"a,b,label\n1,2,x\n{value},2,y\n", encoding="utf-8")
    with pytest.raises(DatasetFormatError, match=f"^f.csv line 3: column 'a' holds "
                                                 f"'{value}', not a number"):
        load_stream_file(path)


@pytest.mark.parametrize("dtype", ["U", "S"])
def test_an_empty_npz_string_label_is_refused_as_an_empty_csv_label_is(tmp_path, dtype):
    # before: class '' (a CSV refuses an empty label field, and one of blanks, stripped)
    np.savez(tmp_path / "e.npz", x=np.ones((4, 1)), y=np.array(["a", "", "b", " "], dtype))
    with pytest.raises(DatasetFormatError, match=r"^e.npz: y\[1\] = '' is empty \(the first "
                                                 r"of 2\); every row needs its true label$"):
        load_stream_file(tmp_path / "e.npz")


def test_an_npz_array_of_number_strings_has_a_nan_refused_as_a_csv_column_has(tmp_path):
    np.savez(tmp_path / "s.npz", x=np.ones((4, 1)), y=np.array(["2", "nan", "1", "inf"]))
    with pytest.raises(DatasetFormatError, match=r"^s.npz: y\[1\] = 'nan', not a label "
                                                 r"\(the first of 2\); every row needs"):
        load_stream_file(tmp_path / "s.npz")


@pytest.mark.parametrize("labels, y, class_names", [
    (np.array([10, 2, -1, 2]), [2, 1, 0, 1], ["-1", "2", "10"]),
    (np.array([2.0, 10.0, 2.0]), [0, 1, 0], ["2", "10"]),
    (np.array([0.5, 2.0, -1.0]), [1, 2, 0], ["-1.0", "0.5", "2.0"]),
    (np.array([0.5, 0.25], dtype=np.float32), [1, 0], ["0.25", "0.5"]),
    (np.array([True, False, True]), [1, 0, 1], ["False", "True"]),
])
def test_npz_arrays_of_numbers_keep_their_classes(tmp_path, labels, y, class_names):
    np.savez(tmp_path / "n.npz", x=np.ones((len(labels), 1)), y=labels)
    ds = load_stream_file(tmp_path / "n.npz")
    assert ds.y.tolist() == y and ds.class_names == class_names


def test_the_digest_reads_the_whole_file_and_the_label_column_without_spaces(tmp_path):
    rows = "1,2,0\n" * ((1 << 20) // 6 + 1)  # past the first MiB read
    path = write(tmp_path, "big.csv", rows + "3,4,1\n")
    whole = stream_file_digest(path)
    write(tmp_path, "big.csv", rows + "3,5,1\n")  # a byte after the first MiB edited
    assert stream_file_digest(path) != whole
    path = write(tmp_path, "s.csv", GOOD)
    assert stream_file_digest(path, " label ") == stream_file_digest(path, "label")
    assert stream_file_digest(path, " label ", limit=2) == stream_file_digest(path, "label",
                                                                              limit=2)
    with pytest.raises(DatasetFormatError, match=r"^s.csv: no column 'kind' in the header"):
        stream_file_digest(path, "kind", limit=2)  # the rows are read with that label


FLOAT32_MAX = str(np.finfo(np.float32).max.item())  # '3.4028234663852886e+38'


def test_the_largest_float32_is_a_feature_value(tmp_path):
    ds = load_stream_file(write(tmp_path, "m.csv", f"{FLOAT32_MAX},-{FLOAT32_MAX},0\n"))
    assert ds.x.tolist() == [[np.finfo(np.float32).max, np.finfo(np.float32).min]]
    with pytest.raises(DatasetFormatError, match=r"^m.csv line 1: column 2 holds 'inf', not a "):
        load_stream_file(write(tmp_path, "m.csv", f"{FLOAT32_MAX},inf,0\n"))
    np.savez(tmp_path / "m.npz", x=np.array([[float(FLOAT32_MAX), 1.0]]), y=np.array([0]))
    assert load_stream_file(tmp_path / "m.npz").x.tolist() == [[np.finfo(np.float32).max, 1]]


def test_one_bad_npz_entry_is_named_without_a_count(tmp_path):
    np.savez(tmp_path / "a.npz", x=np.array([[1.0, np.nan], [1.0, 2.0]]), y=np.ones(2))
    with pytest.raises(DatasetFormatError, match=r"^a.npz: x\[0, 1\] = nan is a missing value: "
                                                 r"fill in or drop the row first$"):
        load_stream_file(tmp_path / "a.npz")


def test_the_label_column_may_have_no_name_in_the_header(tmp_path):
    ds = load_stream_file(write(tmp_path, "u.csv", "a,b,\n1,2,x\n3,4,y\n"))
    assert ds.feature_names == ["a", "b"] and ds.class_names == ["x", "y"]
    assert ds.x.tolist() == [[1, 2], [3, 4]] and ds.y.tolist() == [0, 1]


def test_a_bad_feature_right_after_the_label_column_is_named_by_its_own_column(tmp_path):
    with pytest.raises(DatasetFormatError, match=r"^f.csv line 2: column 2 holds 'abc', not a"):
        load_stream_file(write(tmp_path, "f.csv", "0,1,2\n1,abc,3\n"), label_column="0")


def test_labels_of_plus_and_minus_two_to_the_63_stay_two_classes(tmp_path):
    ds = load_stream_file(write(tmp_path, "l.csv", "1,9223372036854775808\n"
                                                   "2,-9223372036854775808\n"))
    assert ds.class_names == ["-9.223372036854776e+18", "9.223372036854776e+18"]
    assert ds.y.tolist() == [1, 0]


def test_a_named_label_column_makes_the_header_over_labels_of_words(tmp_path):
    ds = load_stream_file(write(tmp_path, "w.csv", "1,cls,2\n0.5,x,7\n0.25,y,8\n"),
                          label_column="cls")
    assert ds.feature_names == ["1", "2"] and ds.class_names == ["x", "y"]
    assert ds.x.tolist() == [[0.5, 7], [0.25, 8]] and ds.y.tolist() == [0, 1]


@pytest.mark.parametrize("nan", ["nan", "NaN", "-NAN"])
@pytest.mark.parametrize("form", ["csv", "npz str", "npz bytes"])
def test_a_nan_label_is_refused_among_words_as_among_numbers(tmp_path, nan, form):
    # before: among labels that are words, a NaN was a class of its own
    labels = ["x", nan, "x", nan]
    if form == "csv":
        text = "a,label\n" + "".join(f"{row},{label}\n" for row, label in enumerate(labels))
        message = (f"^m.csv line 3: column 'label' \\(the label\\) holds '{nan}', not a label "
                   f"\\(the first of 2\\); every row needs its true label$")
        path = write(tmp_path, "m.csv", text)
    else:
        path = tmp_path / "m.npz"
        np.savez(path, x=np.ones((4, 1)), y=np.array(labels, "S" if form == "npz bytes" else "U"))
        message = (f"^m.npz: y\\[1\\] = '{nan}', not a label \\(the first of 2\\); every row "
                   f"needs its true label$")
    with pytest.raises(DatasetFormatError, match=message):
        load_stream_file(path)


@pytest.mark.parametrize("labels, marker, class_names", [
    (["0", "NA", "1", "NA"], "NA", ["0", "1", "NA"]),  # pandas' NA among numbers
    (["x", "N/A", "y"], "N/A", ["N/A", "x", "y"]),
    (["x", "null", "y"], "null", ["null", "x", "y"]),
    (["x", "?", "y"], "?", ["?", "x", "y"]),
])
@pytest.mark.parametrize("form", ["csv", "npz str"])
def test_a_label_that_reads_as_a_missing_value_is_a_class_with_a_warning(
        tmp_path, labels, marker, class_names, form):
    # it may be a class's name: kept, but said (before: silently a class)
    count = labels.count(marker)
    if form == "csv":
        path = write(tmp_path, "m.csv", "a,label\n" + "".join(
            f"{row},{label}\n" for row, label in enumerate(labels)))
        where = f"m.csv line 3: column 'label' (the label) holds '{marker}'"
    else:
        path = tmp_path / "m.npz"
        np.savez(path, x=np.ones((len(labels), 1)), y=np.array(labels))
        where = f"m.npz: y[1] = '{marker}'"
    first_of = f" (the first of {count})" if count > 1 else ""
    with pytest.warns(UserWarning) as caught:
        ds = load_stream_file(path)
    assert [str(warning.message) for warning in caught] == [
        f"{where}{first_of}, which reads as a missing value: it is learned as a class; if it "
        f"marks an unknown label, fill it in or drop the row first"]
    assert ds.class_names == class_names


def test_labels_that_only_look_like_missing_values_read_without_a_warning(tmp_path, recwarn):
    ds = load_stream_file(write(tmp_path, "w.csv", "a,label\n1,nano\n2,Nancy\n3,none yet\n"
                                                   "4,NAB\n5,inf\n"))
    assert ds.class_names == ["NAB", "Nancy", "inf", "nano", "none yet"]
    assert not recwarn.list


@pytest.mark.parametrize("value", ["NA", "n/a", "?", "null", "NULL", "None", "NaN", "-nan",
                                   "#N/A", "<NA>"])
def test_a_feature_that_reads_as_a_missing_value_is_named_so(tmp_path, value):
    # before: 'NA' was a word to encode as a number, 'NaN' not a finite number
    path = write(tmp_path, "m.csv", f"a,b,label\n1,2,x\n3,{value},y\n")
    with pytest.raises(DatasetFormatError) as error:
        load_stream_file(path)
    assert str(error.value) == (f"m.csv line 3: column 'b' holds '{value}' (a missing value: "
                                f"fill in or drop the row first)")
    with pytest.raises(DatasetFormatError) as streamed:
        list(CSVRowStream(path, ["x", "y"]))
    assert str(streamed.value) == str(error.value)


def _label_column(distinct, rows):
    """Rows ``a,label``: ``distinct`` labels, the first repeated to fill ``rows``."""
    labels = [*range(distinct), *[0] * (rows - distinct)]
    return "a,label\n" + "".join(f"{row},{label}\n" for row, label in enumerate(labels))


@pytest.mark.parametrize("distinct, rows, once, warned", [
    (22, 41, 21, True), (22, 42, 21, False),  # more than half the rows once: warned
    (20, 20, 20, False), (21, 21, 21, True),  # more than 20 classes seen once
])
def test_a_label_column_of_more_values_seen_once_than_half_its_rows_is_warned_of(
        tmp_path, recwarn, distinct, rows, once, warned):
    # before: a measurement or an ID as the label ran silently, a class per row
    ds = load_stream_file(write(tmp_path, "id.csv", _label_column(distinct, rows)))
    assert ds.num_classes == distinct
    assert [str(warning.message) for warning in recwarn.list] == (
        [f"id.csv: column 'label' (the label) has {distinct} distinct values in {rows} rows, "
         f"{once} of them in one row only: is it the label? (label_column, --label-column on "
         f"the command line, picks another)"] if warned else [])


def test_a_prefix_of_a_stream_of_many_classes_is_not_warned_of(tmp_path, recwarn):
    # the first form counted distinct values: 26 letters in a 40-row --limit warned
    rows = "".join(f"{row},{chr(65 + row % 26)}\n" for row in range(200))
    path = write(tmp_path, "letters.csv", "a,letter\n" + rows)
    assert load_stream_file(path, limit=40).num_classes == 26
    assert not recwarn.list


def test_the_label_spread_is_of_the_rows_read_and_a_limit_digest_warns_of_nothing(tmp_path,
                                                                                  recwarn):
    path = write(tmp_path, "id.csv", _label_column(30, 100))
    load_stream_file(path)
    assert not recwarn.list
    with pytest.warns(UserWarning, match="has 30 distinct values in 40 rows, 29 of them"):
        load_stream_file(path, limit=40)
    recwarn.clear()
    stream_file_digest(path, limit=40)  # the rows' warnings are the stream's, not the digest's
    assert not recwarn.list
