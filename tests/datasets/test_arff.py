"""A stream of your own from an ARFF file (Weka's, MOA's and CapyMOA's format)."""
import gzip
import re
import signal
from contextlib import contextmanager

import numpy as np
import pytest

from stream_file_helpers import load_with_peak
from torch_geometric_stream.datasets import (DatasetFormatError, arff, is_stream_file,
                                             load_stream_file, stream_file_digest)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


#: Comments, blank lines, quoted names and values, keywords in any case.
DENSE = """% a comment before the header
@RELATION 'my stream'

@attribute 'temp (C)' NUMERIC
@attribute color {red, "dark blue", green}   % a nominal feature
@Attribute x real
@attribute class {no, yes, maybe}

@DATA
1.5, red, 2, yes
% a comment between rows
-2,'dark blue',3e1,no   % and after one

4,green,-0.5,yes
"""


def test_a_dense_arff_has_one_hot_nominal_features_and_declared_classes(tmp_path):
    path = write(tmp_path, "s.arff", DENSE)
    ds = load_stream_file(path)
    assert (ds.name, ds.num_samples, ds.num_features, ds.num_classes) == ("s.arff", 3, 5, 3)
    assert ds.feature_names == ["temp (C)", "color=red", "color=dark blue", "color=green", "x"]
    assert ds.x.tolist() == [[1.5, 1, 0, 0, 2], [-2, 0, 1, 0, 30], [4, 0, 0, 1, -0.5]]
    assert ds.x.dtype == np.float32 and ds.source == str(path.resolve())
    # the declared order, not the sorted one; "maybe", in no row, is a class too
    assert ds.y.tolist() == [1, 0, 1] and ds.class_names == ["no", "yes", "maybe"]
    assert ds.value_range is None


def test_sparse_rows_fill_in_zeros_and_first_declared_values(tmp_path):
    path = write(tmp_path, "s.arff", "@relation r\n@attribute a numeric\n"
                 "@attribute b {lo, hi}\n@attribute c integer\n@attribute k {u, v}\n@data\n"
                 "{0 1.5, 1 hi, 3 v}\n{2 7}\n{}\n{ 3 v , 0 -1 }\n2,lo,3,u\n")
    ds = load_stream_file(path)
    assert ds.feature_names == ["a", "b=lo", "b=hi", "c"]  # a 2-valued nominal: 2 features
    assert ds.x.tolist() == [[1.5, 0, 1, 0], [0, 1, 0, 7], [0, 1, 0, 0], [-1, 1, 0, 0],
                             [2, 1, 0, 3]]
    assert ds.y.tolist() == [1, 0, 0, 1, 0] and ds.class_names == ["u", "v"]


def test_features_are_gathered_as_float32_in_about_twice_their_memory(tmp_path):
    # a nominal attribute of 2000 values, one-hot: 3000 rows make 24 MB of float32
    declared = ",".join(f"v{value}" for value in range(2000))
    rows = "".join(f"v{row % 2000},{'xy'[row % 2]}\n" for row in range(3000))
    path = write(tmp_path, "wide.arff", f"@relation r\n@attribute f {{{declared}}}\n"
                 f"@attribute c {{x, y}}\n@data\n{rows}")
    ds, peak = load_with_peak(path)
    assert ds.x.shape == (3000, 2000) and ds.x.dtype == np.float32
    assert ds.x.sum() == 3000 and ds.x[2001, 1] == 1 and ds.y[:3].tolist() == [0, 1, 0]
    # the features, and as much again while their blocks are joined (a float64 row
    # each, stacked, then cast to float32, took 4 times as much)
    assert peak < 2.2 * ds.x.nbytes, peak / ds.x.nbytes


def test_quoted_names_and_values_hold_spaces_commas_quotes_and_percents(tmp_path):
    path = write(tmp_path, "q.arff", "@relation \"a, b\"\n"
                 "@attribute 'it\\'s 50%' numeric\n"
                 "@attribute \"say \\\"hi\\\"\" {'a, b', \"c%d\", 'tab\\there'}\n"
                 "@attribute 'the class' {'x y', z}\n@data\n"
                 "1,'a, b','x y'\n2,\"c%d\",z % a comment\n3,'tab\\there',z\n")
    ds = load_stream_file(path)
    assert ds.feature_names == ["it's 50%", 'say "hi"=a, b', 'say "hi"=c%d',
                                'say "hi"=tab\there']
    assert ds.x.tolist() == [[1, 1, 0, 0], [2, 0, 1, 0], [3, 0, 0, 1]]
    assert ds.class_names == ["x y", "z"] and ds.y.tolist() == [0, 1, 1]
    assert load_stream_file(path, label_column="the class").class_names == ["x y", "z"]


def test_a_numeric_class_is_read_as_a_csv_label_column_of_numbers(tmp_path):
    path = write(tmp_path, "n.arff", "@relation r\n@attribute a numeric\n"
                 "@attribute target numeric\n@data\n1,10\n2,2\n3,10.0\n4,-1\n")
    ds = load_stream_file(path)
    assert ds.class_names == ["-1", "2", "10"] and ds.y.tolist() == [2, 1, 2, 0]
    assert ds.feature_names == ["a"] and ds.x.ravel().tolist() == [1, 2, 3, 4]


def test_the_label_attribute_is_picked_by_name_or_index_as_a_csv_column(tmp_path):
    path = write(tmp_path, "s.arff", DENSE)
    by_name = load_stream_file(path, label_column="x")
    # floats, not all whole, as a CSV's
    assert by_name.class_names == ["-0.5", "2.0", "30.0"] and by_name.y.tolist() == [1, 2, 0]
    assert by_name.feature_names == ["temp (C)", "color=red", "color=dark blue",
                                     "color=green", "class=no", "class=yes", "class=maybe"]
    assert by_name.x[0].tolist() == [1.5, 1, 0, 0, 0, 1, 0]
    by_index = load_stream_file(path, label_column="1")
    # a label is no feature: its name may be a feature's
    shared = write(tmp_path, "n.arff", "@relation r\n@attribute n {p, q}\n"
                   "@attribute 'n=p' numeric\n@data\nq,1\n")
    assert load_stream_file(shared, label_column="n=p").feature_names == ["n=p", "n=q"]
    assert by_index.class_names == ["red", "dark blue", "green"]
    assert by_index.y.tolist() == [0, 1, 2]
    assert load_stream_file(path, label_column="-4").class_names == ["-2.0", "1.5", "4.0"]
    with pytest.raises(DatasetFormatError, match=re.escape(
            "s.arff: no column 'z' in the header ['temp (C)', 'color', 'x', 'class']")):
        load_stream_file(path, label_column="z")
    with pytest.raises(DatasetFormatError, match="^s.arff: label column 7 is outside the 4 "):
        load_stream_file(path, label_column="7")
    named = write(tmp_path, "p.arff", "@relation r\n@attribute kind {a, b}\n"
                  "@attribute 0 numeric\n@attribute 1 numeric\n@data\na,1,2\n")
    with pytest.raises(DatasetFormatError, match=(
            r"^p.arff: label column 0 is ambiguous: the position of column 'kind' and the "
            r"name of another in the header; give 'kind' or -3 for column 'kind'")):
        load_stream_file(named, label_column="0")


def test_a_gzipped_arff_and_its_suffixes(tmp_path):
    with gzip.open(tmp_path / "g.ARFF.GZ", "wt") as handle:
        handle.write(DENSE)
    assert load_stream_file(tmp_path / "g.ARFF.GZ").y.tolist() == [1, 0, 1]
    assert is_stream_file("a.arff") and is_stream_file("dir/A.Arff.gz")
    assert not is_stream_file("a.arff.bz2")


#: The header the refusals below follow with their rows (data from line 5).
HEADER = "@relation r\n@attribute a numeric\n@attribute c {x, y}\n@data\n"


@pytest.mark.parametrize("text, message", [
    ("@relation r\n@attribute s string\n@attribute c {x}\n@data\n",
     "b.arff line 2: attribute 's' is of type string, which a stream file cannot hold; drop "
     "it, or make it numeric or nominal first"),
    ("@relation r\n@attribute d DATE \"yyyy-MM-dd\"\n@attribute c {x}\n@data\n",
     "b.arff line 2: attribute 'd' is of type date, which a stream file cannot hold; drop "
     "it, or make it numeric or nominal first"),
    ("@relation r\n@attribute bag relational\n@attribute a numeric\n@end bag\n@data\n",
     "b.arff line 2: attribute 'bag' is of type relational, which a stream file cannot hold; "
     "drop it, or make it numeric or nominal first"),
    ("@relation r\n@attribute a numbers\n@data\n",
     "b.arff line 2: attribute 'a' has the type 'numbers'; declare it numeric, real, integer "
     "or {v1, v2, ...}"),
    ("@relation r\n@attribute a\n@data\n", "b.arff line 2: @attribute needs a name and a type "
     "(@attribute NAME numeric, or @attribute NAME {v1, v2})"),
    ("@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute a {x}\n@data\n",
     "b.arff line 4: attribute 'a' is declared again (first on line 2); give each attribute "
     "its own name"),
    ("@relation r\n@attribute n {p, q}\n@attribute 'n=p' numeric\n@attribute c {x}\n@data\n",
     "b.arff line 3: attribute 'n=p' and attribute 'n' (line 2) both name a feature 'n=p' (a "
     "nominal attribute's features are named attr=value); rename one of them"),
    ("@relation r\n@attribute 'a=b' {c, d}\n@attribute x numeric\n@attribute a {e, 'b=c'}\n"
     "@attribute c {x}\n@data\n", "b.arff line 4: attribute 'a' and attribute 'a=b' (line 2) "
     "both name a feature 'a=b=c' (a nominal attribute's features are named attr=value); "
     "rename one of them"),
    ("@relation r\n@attribute c {x, y, x}\n@data\n",
     "b.arff line 2: attribute 'c' declares 'x' twice; give each value once"),
    ("@relation r\n@attribute c {x, , y}\n@data\n",
     "b.arff line 2: attribute 'c' declares an empty value; give each value once"),
    ("@relation r\n@attribute c {}\n@data\n", "b.arff line 2: attribute 'c' declares no values"),
    ("@relation r\n@attribute c {x, y\n@data\n", "b.arff line 2: attribute 'c': its values are "
     "one list {v1, v2, ...}, closed by } at the line's end"),
    ("@relation r\n@attribute 'a numeric\n@data\n",
     "b.arff line 2: the quote ' is never closed (a quote in a quoted text is escaped: \\')"),
    ("@relation r\n@attribute a numeric\n1,2\n@data\n",
     "b.arff line 3: '1, 2' is no header line (@relation, @attribute or @data)"),
    ("@relation r\n@attribute a numeric\n@attribute c {x}\n@data 1,x\n",
     "b.arff line 4: text after @data; the data rows start on the next line"),
    ("@relation r\n@attribute a numeric\n@attribute c {x}\n1,x\n",
     "b.arff line 4: '1, x' is no header line (@relation, @attribute or @data)"),
    ("@relation r\n@attribute a numeric\n@attribute c {x}\n",
     "b.arff: no @data line; an ARFF header ends with @data, the data rows after it"),
    ("@relation r\n@attribute c {x}\n@data\nx\n",
     "b.arff: the header declares 1 attribute; a stream needs a feature and a label"),
    (HEADER, "b.arff: the file has an @data line and no data rows"),
    (HEADER + "% only a comment\n\n", "b.arff: the file has an @data line and no data rows"),
    # a missing feature gets the CSV's and the .npz's wording (before: "; fill in missing
    # values first")
    (HEADER + "?,x\n", "b.arff line 5: attribute 'a' is missing (?) (a missing value: fill "
     "in or drop the row first)"),
    (HEADER + ",x\n", "b.arff line 5: attribute 'a' is empty (a missing value: fill in or "
     "drop the row first)"),
    (HEADER + ",'x'\n", "b.arff line 5: attribute 'a' is empty (a missing value: fill in or "
     "drop the row first)"),  # a row of quotes, read token by token
    (HEADER + "1,?\n", "b.arff line 5: attribute 'c' (the label) is missing (?); every row "
     "needs its true label"),
    (HEADER + "{1 ?}\n", "b.arff line 5: attribute 'c' (the label) is missing (?); every row "
     "needs its true label"),
    (HEADER + "1,z\n", "b.arff line 5: attribute 'c' (the label) holds 'z', which it does not "
     "declare ({x, y})"),
    (HEADER + "1,'?'\n", "b.arff line 5: attribute 'c' (the label) holds '?', which it does "
     "not declare ({x, y})"),
    ("@relation r\n@attribute f {p, q}\n@attribute c {x}\n@data\nP,x\n",
     "b.arff line 5: attribute 'f' holds 'P', which it does not declare ({p, q})"),
    (HEADER + "1,x,2\n", "b.arff line 5: 3 values, the header declares 2 attributes"),
    (HEADER + "1\n", "b.arff line 5: 1 value, the header declares 2 attributes"),
    (HEADER + "1,dark x\n", "b.arff line 5: 'dark x' is not one value; values are separated "
     "by commas (quote a value that holds spaces)"),
    (HEADER + "1,x,{2}\n", "b.arff line 5: an instance weight '{2}'; every sample of a stream "
     "weighs 1, drop the weights"),
    (HEADER + "{0 1, 1 x}, {0.5}\n", "b.arff line 5: an instance weight '{0.5}'; every sample "
     "of a stream weighs 1, drop the weights"),
    (HEADER + "{0 1, 1 x} 3\n", "b.arff line 5: '3' after the sparse row's }"),
    (HEADER + "{0 1, 1 x\n", "b.arff line 5: a sparse row {i v, j w, ...} has no closing }"),
    (HEADER + "{0 1, 2 x}\n", "b.arff line 5: sparse index 2 is outside the 2 attributes "
     "(0 to 1)"),
    (HEADER + "{0 1, 0 2}\n", "b.arff line 5: sparse index 0 is given twice"),
    (HEADER + "{0}\n", "b.arff line 5: sparse entry '0' is not an attribute index and a value "
     "({i v, j w, ...}, i from 0)"),
    (HEADER + "{-1 2}\n", "b.arff line 5: sparse entry '-1 2' is not an attribute index and a "
     "value ({i v, j w, ...}, i from 0)"),
    (HEADER + "abc,x\n", "b.arff line 5: attribute 'a' holds 'abc', not a number (it is "
     "declared numeric)"),
    # a missing value as tables write one is named so (before: 'nan' was not a finite
    # number, 'NA' not a number)
    (HEADER + "nan,x\n", "b.arff line 5: attribute 'a' holds 'nan' (a missing value: fill in "
     "or drop the row first)"),
    (HEADER + "NA,x\n", "b.arff line 5: attribute 'a' holds 'NA' (a missing value: fill in "
     "or drop the row first)"),
    (HEADER + "-inf,x\n", "b.arff line 5: attribute 'a' holds '-inf', not a finite number"),
    (HEADER + "1e39,x\n", "b.arff line 5: attribute 'a' holds '1e39', beyond float32's range "
     "(±3.403e+38)"),
    (HEADER + "1_000,x\n", "b.arff line 5: attribute 'a' holds '1_000', not a number (it is "
     "declared numeric)"),
    ("@relation r\n@attribute a numeric\n@attribute t numeric\n@data\n1,2\n1,abc\n",
     "b.arff line 6: attribute 't' (the label) holds 'abc', not a number (it is declared "
     "numeric)"),
    ("@relation r\n@attribute a numeric\n@attribute t numeric\n@data\n1,2\n1,?\n",
     "b.arff line 6: attribute 't' (the label) is missing (?); every row needs its true label"),
    ("@relation r\n@attribute a numeric\n@attribute t numeric\n@data\n1,2\n\n1,nan\n",
     "b.arff line 7: attribute 't' (the label) holds 'nan', not a label; every row needs its "
     "true label"),
    # a declared class that is no label, as a CSV's label column refuses it (before: a
    # class): a NaN among words or numbers, an infinity where the rows' classes are numbers
    ("@relation r\n@attribute a numeric\n@attribute c {x, nan}\n@data\n1,x\n2,nan\n3,nan\n",
     "b.arff line 6: attribute 'c' (the label) holds 'nan', not a label (the first of 2); "
     "every row needs its true label"),
    ("@relation r\n@attribute a numeric\n@attribute c {0, 1, NaN}\n@data\n1,0\n2,NaN\n",
     "b.arff line 6: attribute 'c' (the label) holds 'NaN', not a label; every row needs its "
     "true label"),
    ("@relation r\n@attribute a numeric\n@attribute c {0,1,inf}\n@data\n1,0\n{1 inf}\n",
     "b.arff line 6: attribute 'c' (the label) holds 'inf', not a label; every row needs its "
     "true label"),
])
def test_an_arff_that_is_no_stream_is_refused_by_file_line_and_attribute(tmp_path, text,
                                                                          message):
    with pytest.raises(DatasetFormatError, match=f"^{re.escape(message)}$"):
        load_stream_file(write(tmp_path, "b.arff", text))


def test_a_declared_class_a_csv_would_read_as_a_word_stays_a_class(tmp_path):
    # an infinity among words is a word, as in a CSV; a NaN no row holds is not read
    text = ("@relation r\n@attribute a numeric\n@attribute c {x, -inf, nan}\n@data\n1,x\n"
            "2,-inf\n")
    data = load_stream_file(write(tmp_path, "w.arff", text))
    assert data.y.tolist() == [0, 1]
    assert data.class_names == ["x", "-inf", "nan"]


def test_a_sparse_row_is_read_as_the_values_it_gives():
    # its reader fills in the others: a sparse row costs the values it gives
    lines = enumerate(HEADER.splitlines(keepends=True)
                      + ["{1 y}\n", "{}\n", "{1 ?, 0 2}\n", "3,x\n"], start=1)
    attributes = arff.read_header(lines, "s.arff")
    assert list(arff.data_rows(lines, attributes, "s.arff")) == [
        (5, {1: "y"}), (6, {}), (7, {1: None, 0: "2"}), (8, ["3", "x"])]
    assert [arff.omitted_value(attribute) for attribute in attributes] == ["0", "x"]


#: A header of a nominal feature, two numeric ones and a nominal label, for sparse rows.
SPARSE = ("@relation r\n@attribute f {p, q}\n@attribute a numeric\n@attribute b numeric\n"
          "@attribute c {x}\n@data\n")


@pytest.mark.parametrize("row, message", [
    ("{3 z, 2 abc, 0 r, 1 ?}", "attribute 'a' is missing (?) (a missing value: fill in or "
     "drop the row first)"),
    ("{3 z, 0 r, 2 abc}", "attribute 'b' holds 'abc', not a number (it is declared numeric)"),
    ("{3 z, 0 r}", "attribute 'f' holds 'r', which it does not declare ({p, q})"),
    ("{3 z}", "attribute 'c' (the label) holds 'z', which it does not declare ({x})"),
])
def test_a_sparse_row_is_refused_for_its_first_bad_value_as_a_dense_row(tmp_path, row,
                                                                        message):
    # numeric features first, then nominal ones, then the label; each by position
    with pytest.raises(DatasetFormatError, match=f"^b.arff line 7: {re.escape(message)}$"):
        load_stream_file(write(tmp_path, "b.arff", SPARSE + row + "\n"))


@contextmanager
def deadline(seconds):
    """Fail the test, rather than hang it, where its block runs past ``seconds``."""
    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")
    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("row, message", [
    ("1," + " ," * 38 + " x % a comment", "40 values, the header declares 2 attributes"),
    ("1" + " , " * 39 + "}", "40 values, the header declares 2 attributes"),
    ("1" + " , " * 39 + "'", "the quote ' is never closed (a quote in a quoted text is "
     "escaped: \\')"),
], ids=["comment", "brace", "quote"])
@pytest.mark.skipif(not hasattr(signal, "SIGALRM"), reason="the hang guard needs SIGALRM")
def test_a_row_of_many_empty_values_and_a_mark_is_refused_at_once(tmp_path, row, message):
    # blanks around many commas, then a mark no plain row holds: read in linear time
    path = write(tmp_path, "b.arff", HEADER + row + "\n")
    with deadline(20), pytest.raises(DatasetFormatError,
                                     match=f"^b.arff line 5: {re.escape(message)}$"):
        load_stream_file(path)


def test_a_limit_reads_the_header_and_its_rows_and_no_further(tmp_path):
    rows = "1,x\n2,y\n% a comment\n3,x\n"
    for tail in ("oops,x\n", "1,z\n", "1,?\n", "1,x,{2}\n", "1\n", "'open,x\n"):
        path = write(tmp_path, "s.arff", HEADER + rows + tail)
        with pytest.raises(DatasetFormatError, match="^s.arff line 9: "):
            load_stream_file(path)
        ds = load_stream_file(path, limit=3)  # as if the file ended after its 3rd row
        assert ds.x.ravel().tolist() == [1, 2, 3] and ds.y.tolist() == [0, 1, 0]
        assert stream_file_digest(path, limit=3) == stream_file_digest(
            write(tmp_path, "cut.arff", HEADER + rows), limit=3)
    # the classes are the declared ones, whichever rows are read: ids do not move
    ds = load_stream_file(path, limit=1)
    assert ds.class_names == ["x", "y"] and ds.y.tolist() == [0] and ds.num_classes == 2


def test_a_limit_reads_a_gzipped_arff_only_as_far_as_its_rows(tmp_path):
    rows = "".join(f"{i},{'xy'[i % 2]}\n" for i in range(20000))
    (tmp_path / "cut.arff.gz").write_bytes(gzip.compress((HEADER + rows).encode())[:-50])
    with pytest.raises(DatasetFormatError, match="^cut.arff.gz: cannot be read"):
        load_stream_file(tmp_path / "cut.arff.gz")
    ds = load_stream_file(tmp_path / "cut.arff.gz", limit=4)
    assert ds.x.ravel().tolist() == [0, 1, 2, 3] and ds.y.tolist() == [0, 1, 0, 1]
    (tmp_path / "latin.arff").write_bytes((HEADER + "1,x\n2,y\n").encode()
                                          + "3,caf\xe9\n".encode("latin-1"))
    with pytest.raises(DatasetFormatError, match=r"^latin.arff line 7: not UTF-8 text \(save "
                                                 r"the file as UTF-8\)$"):
        load_stream_file(tmp_path / "latin.arff")
    assert load_stream_file(tmp_path / "latin.arff", limit=2).y.tolist() == [0, 1]


def test_the_digest_of_an_arff_changes_with_the_file_and_the_label_attribute(tmp_path):
    path = write(tmp_path, "s.arff", HEADER + "1,x\n2,y\n3,x\n")
    whole, first = stream_file_digest(path), stream_file_digest(path, limit=2)
    assert whole != first
    write(tmp_path, "s.arff", HEADER + "1,x\n2,y\n3,y\n")  # a row after the limit edited
    assert stream_file_digest(path) != whole and stream_file_digest(path, limit=2) == first
    write(tmp_path, "s.arff", HEADER.replace("{x, y}", "{y, x}") + "1,x\n2,y\n3,y\n")
    assert stream_file_digest(path, limit=2) != first  # the header read: other class ids
    assert stream_file_digest(path, "a", limit=2) != stream_file_digest(path, limit=2)
    with pytest.raises(DatasetFormatError, match="^s.arff: no column 'b' in the header"):
        stream_file_digest(path, "b", limit=2)


def test_windows_line_ends_and_blanks_around_values_are_no_part_of_them(tmp_path):
    text = HEADER + " 1 , x \n\t2,'y' % quoted\n  \n3 ,\t? \n"
    path = write(tmp_path, "w.arff", text.replace("\n", "\r\n"))
    with pytest.raises(DatasetFormatError, match=r"^w.arff line 8: attribute 'c' \(the label\) "
                                                 r"is missing \(\?\); every row needs"):
        load_stream_file(path)
    ds = load_stream_file(path, limit=2)
    assert ds.x.ravel().tolist() == [1, 2] and ds.y.tolist() == [0, 1]


@pytest.mark.parametrize("label_column, warned", [("temp", True), (None, False)])
def test_a_label_attribute_of_more_distinct_values_than_half_its_rows_is_warned_of(
        tmp_path, recwarn, label_column, warned):
    # before: --label-column temp ran silently with a class per row
    rows = "".join(f"{20 + row / 10},{'xy'[row % 2]}\n" for row in range(30))
    path = write(tmp_path, "t.arff", "@relation r\n@attribute temp numeric\n"
                                     "@attribute c {x, y}\n@data\n" + rows)
    ds = load_stream_file(path, label_column=label_column)
    assert ds.num_classes == (30 if warned else 2)
    assert [str(warning.message) for warning in recwarn.list] == (
        ["t.arff: attribute 'temp' (the label) has 30 distinct values in 30 rows, 30 of them "
         "in one row only: is it the label? (label_column, --label-column on the command "
         "line, picks another)"]
        if warned else [])
