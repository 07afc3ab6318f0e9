"""CSVRowStream: a CSV read row by row, as load_stream_file reads it whole."""
from __future__ import annotations

import gzip
import hashlib
import io
import itertools
import os
import re
import sys
import warnings

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


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="no /proc/self/fd")
@pytest.mark.parametrize("name", ["s.csv", "s.csv.gz"])
def test_close_and_a_with_block_close_the_file_read_for_the_head(tmp_path, name):
    # before, the file opened to read the head stayed open until the stream was released
    path = tmp_path / name
    text = b"a,b,kind\n1,2,x\n3,4,y\n"
    path.write_bytes(gzip.compress(text) if name.endswith(".gz") else text)
    before = _open_descriptors()
    with CSVRowStream(path, ["x", "y"]) as stream:
        assert _open_descriptors() == before + 1
    assert _open_descriptors() == before
    assert [y for _, y in stream] == [0, 1]  # a file is read anew after close
    stream.close()  # nothing left to close: no error
    assert _open_descriptors() == before


def _open_files() -> set[str]:
    return {os.path.realpath(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")}


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="no /proc/self/fd")
@pytest.mark.parametrize("text, make", [
    ("1,2,7\n3,4,0\n", lambda path: list(CSVRowStream(path, ["0", "1"]))),  # a row refused
    ("1,2,0\n3,4,0\n", lambda path: list(CSVRowStream(path, ["0"], limit=1)) + [
        CSVRowStream(path, ["0"], label_column="z")]),  # the head of a new stream refused
], ids=["row", "head"])
def test_a_refused_stream_closes_its_file_while_its_error_is_kept(tmp_path, text, make):
    # before: the file stayed open as long as the error (its traceback) was referenced
    path = tmp_path / "s.csv"
    path.write_text(text)
    with pytest.raises(DatasetFormatError) as refused:
        make(path)
    assert refused.value is not None and str(path.resolve()) not in _open_files()


def test_closing_a_stream_of_standard_input_ends_it(monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"a,kind\n1,x\n2,y\n")))
    stream = CSVRowStream("-", ["x", "y"])
    stream.close()
    assert not sys.stdin.buffer.closed  # detached, not closed
    with pytest.raises(ValueError, match="standard input is read once"):
        list(stream)


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


@pytest.mark.parametrize("name, content, message", [
    ("s.csv", b"", "^s.csv: the file has no rows$"),  # before: "the stream" row by row
    ("s.csv", b"5\n6\n", "^s.csv line 1: a row needs a feature and a label, this one has 1 "
                          "field$"),
    ("s.csv.gz", b"no gzip\n", r"^s.csv.gz: cannot be read \(Not a gzipped file \(b'no'\)\)$")])
def test_a_file_of_no_rows_of_a_stream_is_refused_by_both_readers(tmp_path, name, content,
                                                                    message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(DatasetFormatError, match=message):
        load_stream_file(path)
    with pytest.raises(DatasetFormatError, match=message):
        list(CSVRowStream(path, ["0"]))


def test_a_stream_shows_its_name_and_sizes(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("a,b,kind\n1,2,x\n")
    assert repr(CSVRowStream(path, ["x", "y"])) == (
        "CSVRowStream(name='s.csv', num_features=2, num_classes=2)")


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
    with pytest.raises(TypeError, match="^class names must be strings, got 1$"):
        class_lookup(["a", 1])


@pytest.mark.parametrize("nan", ["nan", "NaN", " -NAN"])
def test_a_nan_is_refused_as_a_class_and_as_a_label_as_the_whole_file_reader_refuses_it(
        tmp_path, nan):
    # before: a class 'nan' given took the label 'nan'; a label 'nan' was none of the classes
    with pytest.raises(ValueError, match=f"^class 1 is '{nan}', a missing label, not a class$"):
        class_lookup(["x", nan])
    path = tmp_path / "s.csv"
    path.write_text(f"a,kind\n1,x\n2,{nan}\n")
    with pytest.raises(DatasetFormatError) as error:
        list(CSVRowStream(path, ["x", "y"]))
    assert str(error.value) == (f"s.csv line 3: column 'kind' (the label) holds "
                                f"'{nan.strip()}', not a label; every row needs its true label")


@pytest.mark.parametrize("infinity", ["inf", "-inf", "Infinity"])
def test_an_infinity_among_number_labels_is_refused_as_the_whole_file_reader_refuses_it(
        tmp_path, infinity):
    """Among classes of numbers, an infinity is no class and, in a row, no label (before:
    class 'inf' given took it; the row's message said "none of the classes given");
    among words it is a word."""
    with pytest.raises(ValueError, match=f"^class 2 is '{infinity}', not a finite number: "
                                         f"a label of numbers must be finite$"):
        class_lookup(["0", "1", infinity])
    assert class_lookup(["a", infinity])(infinity) == 1
    path = tmp_path / "s.csv"
    path.write_text(f"a,kind\n1,0\n2,{infinity}\n")
    message = (f"s.csv line 3: column 'kind' (the label) holds '{infinity}', not a label; "
               f"every row needs its true label")
    with pytest.raises(DatasetFormatError) as whole:
        load_stream_file(path)
    with pytest.raises(DatasetFormatError) as streamed:
        list(CSVRowStream(path, ["0", "1"]))
    assert str(whole.value) == str(streamed.value) == message
    with pytest.raises(DatasetFormatError, match=f"label '{infinity}' is none of the classes"):
        list(CSVRowStream(path, ["0", "a"]))  # among words, a word


def test_class_lookup_takes_numbers_in_ascii_decimal_notation_only():
    # before: '1_000' and '\u0663' (ARABIC-INDIC DIGIT THREE) were the numbers 1000 and 3
    lookup = class_lookup(["1000", "3", "x"])
    assert [lookup(label) for label in ("1000.0", "1e3", "1_000", "\u0663", "+3")] == [
        0, 0, None, None, 1]
    assert class_lookup(["1000", "1_000"])("1_000") == 1  # two classes, not one


def test_a_streamed_file_has_the_whole_file_readers_classes_of_words_like_numbers(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("a,kind\n1,1000\n2,1_000\n3,\u0663\n4,3\n", encoding="utf-8")
    whole = load_stream_file(path)
    assert whole.class_names == ["3", "1000", "1_000", "\u0663"]
    assert [y for _, y in CSVRowStream(path, whole.class_names)] == whole.y.tolist()


def _digest_after(path, rows: int) -> str:
    stream = CSVRowStream(path, ["x", "y"])
    for _ in itertools.islice(stream, rows):
        pass
    assert stream.rows_read == rows
    return stream.digest()


def test_the_digest_is_of_the_text_read_for_the_rows_yielded(tmp_path):
    """The header, blank lines between and the rows yielded: the SHA-256 of
    exactly that text, whatever is read after (the blank lines at the end)."""
    path = tmp_path / "s.csv"
    head = "a,kind\n1,x\n\n2,y\n"
    path.write_text(head + "3,x\n\n\n")
    assert _digest_after(path, 2) == hashlib.sha256(head.encode()).hexdigest()[:16]
    whole = CSVRowStream(path, ["x", "y"])
    assert [y for _, y in whole] == [0, 1, 0]  # read to the end, trailing blank lines too
    assert whole.digest() == hashlib.sha256(b"a,kind\n1,x\n\n2,y\n3,x\n").hexdigest()[:16]
    packed = tmp_path / "s.csv.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    assert _digest_after(packed, 2) == _digest_after(path, 2)  # of the text, decompressed


def test_expect_checks_the_beginning_read_again(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("a,kind\n1,x\n2,y\n3,x\n")
    digest = _digest_after(path, 2)
    stream = CSVRowStream(path, ["x", "y"])
    stream.expect(2, digest)
    assert [y for _, y in stream] == [0, 1, 0]
    path.write_text("a,kind\n1,x\n2,y\n4,y\n5,x\n")  # changed after the rows: the same
    stream.expect(2, digest)
    assert [y for _, y in stream] == [0, 1, 1, 0]
    for changed in ("a,kind\n1,x\n2.5,y\n3,x\n", "b,kind\n1,x\n2,y\n", "a,kind\n1,x\n2,y"):
        path.write_text(changed)  # a value, the header, the line end of the last row
        stream = CSVRowStream(path, ["x", "y"])
        stream.expect(2, digest)
        with pytest.raises(DatasetFormatError, match=(
                rf"^{re.escape(str(path))}: its first 2 data rows are not the text read "
                rf"before \(digest [0-9a-f]{{16}}, was {digest}\): the file's beginning "
                rf"changed since$")):
            list(stream)
    path.write_text("a,kind\n1,x\n")
    stream = CSVRowStream(path, ["x", "y"])
    stream.expect(2, digest)
    with pytest.raises(DatasetFormatError, match=r"s.csv: the stream has 1 data rows, not "
                                                 r"the 2 read before: its beginning changed"):
        list(stream)
    with pytest.raises(ValueError, match="2 rows were read before, more than limit=1"):
        CSVRowStream(path, ["x", "y"], limit=1).expect(2, digest)
    with pytest.raises(ValueError, match="rows must be >= 1"):
        stream.expect(0, digest)


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


def test_expect_takes_as_many_rows_as_the_limit(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("a,kind\n1,x\n2,y\n3,x\n")
    stream = CSVRowStream(path, ["x", "y"], limit=2)
    stream.expect(2, _digest_after(path, 2))
    assert [y for _, y in stream] == [0, 1]


@pytest.mark.parametrize("text, options", [
    (",2,0\n1,2,0\n", {}),  # an empty field is no header name: the first row is data
    ("x,0,label\n1,2,0\n", {"label_column": "0"}),  # a position that is another's name
])
def test_the_first_row_is_refused_as_the_whole_file_reader_refuses_it(tmp_path, text, options):
    path = tmp_path / "s.csv"
    path.write_text(text)
    with pytest.raises(DatasetFormatError) as whole:
        load_stream_file(path, **options)
    with pytest.raises(DatasetFormatError) as streamed:
        list(CSVRowStream(path, ["0"], **options))
    assert str(streamed.value) == str(whole.value)


@pytest.mark.parametrize("text, classes", [
    ("NA,1.0,x\n0.5,2,y\n", ["x", "y"]),  # before: a header naming the features 'NA', '1.0'
    ("?,1.0,0\n0.5,2,1\n", ["0", "1"]),
])
def test_a_missing_value_makes_no_header_of_the_first_row(tmp_path, text, classes):
    """A missing value (``NA``, ``?``) is no word that makes a header, as an empty
    field is not: the first row is data, refused for its missing value by both readers."""
    path = tmp_path / "s.csv"
    path.write_text(text)
    message = (rf"^s.csv line 1: column 1 holds '{re.escape(text[0:2].rstrip(','))}' "
               r"\(a missing value: fill in or drop the row first\)$")
    with pytest.raises(DatasetFormatError, match=message):
        load_stream_file(path)
    with pytest.raises(DatasetFormatError, match=message):
        list(CSVRowStream(path, classes))


@pytest.mark.parametrize("text, classes, names", [
    ("Na,Type\n0.5,glass\n1.5,window\n", ["glass", "window"], ["Na"]),  # sodium (UCI Glass)
    ("Na,Type\n0.5,0\n1.5,1\n", ["0", "1"], ["Na"]),
    ("None,null,label\n0,0,0\n1,1,1\n", ["0", "1"], ["None", "null"]),
    ("id,1990,1991,label\n0,0,0,0\n1,1,1,1\n", ["0", "1"], ["id", "1990", "1991"]),
])
def test_a_first_row_of_no_number_but_missing_values_names_the_columns(tmp_path, text, classes,
                                                                     names):
    """A first row whose features hold no number, only words that read as missing
    values (``Na``, ``None``), names the columns in both readers (before: refused as
    a data row with a missing value by the whole-file reader); a header naming
    columns by numbers (years) is read without a warning."""
    path = tmp_path / "s.csv"
    path.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data = load_stream_file(path)
        stream = CSVRowStream(path, classes)
        rows = list(stream)
    assert data.feature_names == stream.feature_names == names
    assert data.class_names == classes and data.y.tolist() == [y for _, y in rows] == [0, 1]
    assert data.x[:, 0].tolist() == [row[0].item() for row, _ in rows] == [
        float(line.split(",")[0]) for line in text.splitlines()[1:]]


@pytest.mark.parametrize("text, label, classes", [
    ("1.5,2.5,?\n3,4,0\n5,6,1\n7,8,0\n", "?", ["0", "1", "?"]),
    ("1.5,2.5,NA\n3,4,a\n5,6,b\n7,8,a\n", "NA", ["NA", "a", "b"]),
])
def test_a_missing_label_in_a_first_row_of_numbers_makes_no_header(tmp_path, text, label,
                                                                   classes):
    """A first row of numbers whose label is a missing value (``?``, ``NA``) is a data
    row in both readers (before: a header naming the features '1.5', '2.5', the row's
    sample dropped): its label is read as any row's, a class with a warning by the
    whole-file reader, none of the classes given unless one is it."""
    path = tmp_path / "s.csv"
    path.write_text(text)
    with pytest.warns(UserWarning, match=rf"^s.csv line 1: column 3 \(the label\) holds "
                                         rf"'{re.escape(label)}', which reads as a missing"):
        data = load_stream_file(path)
    assert data.feature_names is None and data.class_names == classes
    assert data.x[:, 0].tolist() == [1.5, 3, 5, 7]
    assert [data.class_names[y] for y in data.y] == [line.split(",")[2]
                                                     for line in text.splitlines()]
    with pytest.raises(DatasetFormatError, match=rf"^s.csv line 1: label "
                                                 rf"'{re.escape(label)}' is none of the classes"):
        list(CSVRowStream(path, [name for name in classes if name != label]))
    stream = CSVRowStream(path, classes)
    assert stream.feature_names is None and [y for _, y in stream] == data.y.tolist()


def test_a_first_row_of_numbers_is_data_even_with_a_label_of_no_class(tmp_path):
    path = tmp_path / "s.csv"
    path.write_text("1,2,7\n3,4,0\n")
    with pytest.raises(DatasetFormatError,
                       match=r"^s.csv line 1: label '7' is none of the classes given \(0, 1\)$"):
        list(CSVRowStream(path, ["0", "1"]))


def test_class_names_are_stripped_and_an_upper_case_name_is_read(tmp_path):
    path = tmp_path / "S.CSV"
    path.write_text("1,2,x\n3,4,y\n")
    stream = CSVRowStream(path, [" x", "y "])
    assert stream.class_names == ["x", "y"] and [y for _, y in stream] == [0, 1]
