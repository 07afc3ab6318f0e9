import gc
import gzip
import os
import warnings

import numpy as np
import pytest

from torch_geometric_stream.datasets import (DatasetFormatError, DatasetNotFoundError,
                                             StreamDataset, encode_labels, find_file, open_text,
                                             read_idx)
from torch_geometric_stream.datasets.io import (as_integer_labels, open_binary, read_csv_records,
                                                read_numeric_table)


def idx_bytes(array: np.ndarray) -> bytes:
    header = bytes([0, 0, 0x08, array.ndim]) + np.asarray(array.shape, ">i4").tobytes()
    return header + array.astype(np.uint8).tobytes()


def test_open_text_reads_plain_and_gzip(tmp_path, write):
    write(tmp_path / "a.txt", "hello\nworld\n")
    with open_text(tmp_path / "a.txt") as handle:
        assert handle.read() == "hello\nworld\n"
    assert find_file(tmp_path / "a.txt").name in {"a.txt", "a.txt.gz"}


def test_open_text_prefers_plain_file(tmp_path):
    (tmp_path / "a.txt").write_text("plain")
    (tmp_path / "a.txt.gz").write_bytes(gzip.compress(b"gz"))
    with open_text(tmp_path / "a.txt") as handle:
        assert handle.read() == "plain"


def test_missing_file_raises_not_found(tmp_path):
    assert find_file(tmp_path / "nope") is None
    with pytest.raises(DatasetNotFoundError, match="nope"):
        open_text(tmp_path / "nope")


@pytest.mark.parametrize("suffix", ["", ".gz"])
@pytest.mark.parametrize("options, error", [({"encoding": "no-such-codec"}, LookupError),
                                            ({"newline": "x"}, ValueError)])
def test_open_text_refusing_its_options_leaves_no_file_open(tmp_path, suffix, options, error):
    path = tmp_path / f"a.txt{suffix}"
    path.write_bytes(gzip.compress(b"text") if suffix else b"text")
    gc.collect()  # files other tests left to the collector are not closed mid-test
    descriptors = sorted(os.listdir("/proc/self/fd"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ResourceWarning)
        with pytest.raises(error):
            open_text(tmp_path / "a.txt", **options)
        assert sorted(os.listdir("/proc/self/fd")) == descriptors
    assert [str(warning.message) for warning in caught] == []


def test_read_idx_roundtrip(tmp_path, write):
    images = np.arange(2 * 3 * 4).reshape(2, 3, 4)
    write(tmp_path / "imgs", idx_bytes(images))
    out = read_idx(tmp_path / "imgs")
    assert out.dtype == np.uint8 and out.shape == (2, 3, 4)
    np.testing.assert_array_equal(out, images)


@pytest.mark.parametrize("payload, match", [
    (b"\x01\x00\x08\x01\x00\x00\x00\x01\x05", "magic"),
    (b"\x00\x01\x08\x01\x00\x00\x00\x01\x05", "magic number 00010801"),
    (b"\x00\x00\x08\x01\x00\x00\x00\x01\x05\x06", r"shape \(1,\) \(1 bytes\) but 2 bytes"),
    (b"\x00\x00\x08\x01\x00\x00\x00\x03\x05", "shape"),
    (b"\x00\x00\x08\x02\x00\x00", "truncated"),
])
def test_read_idx_rejects_bad_files(tmp_path, payload, match):
    (tmp_path / "bad").write_bytes(payload)
    with pytest.raises(DatasetFormatError, match=match):
        read_idx(tmp_path / "bad")


def test_read_numeric_table_checks_columns(tmp_path):
    (tmp_path / "t.txt").write_text("1 2 3\n4 5 6\n")
    np.testing.assert_array_equal(read_numeric_table(tmp_path / "t.txt", 3), [[1, 2, 3], [4, 5, 6]])
    with pytest.raises(DatasetFormatError, match="expected 4 columns"):
        read_numeric_table(tmp_path / "t.txt", 4)
    (tmp_path / "u.txt").write_text("1 x 3\n")
    with pytest.raises(DatasetFormatError,
                       match="^u.txt: not a numeric table: line 1, column 2 holds the "
                             "non-numeric value 'x'$"):
        read_numeric_table(tmp_path / "u.txt", 3)
    (tmp_path / "v.txt").write_text("1 2 3\n4 5\n")  # numbers all, rows of two widths
    with pytest.raises(DatasetFormatError, match=r"^v.txt: not a numeric table \(.*columns"):
        read_numeric_table(tmp_path / "v.txt", 3)


@pytest.mark.parametrize("text", ["nan", "inf", "-inf"])
def test_read_numeric_table_rejects_non_finite_values(tmp_path, text):
    (tmp_path / "t.txt").write_text(f"1 2 3\n4 {text} 6\n7 8 {text}\n")
    with pytest.raises(DatasetFormatError,
                       match=f"t.txt data row 2, column 2: non-finite value {text} \\(2 such"):
        read_numeric_table(tmp_path / "t.txt", 3)


def test_read_csv_records_drops_leading_row_id(tmp_path):
    (tmp_path / "c.csv").write_text('"a","b"\n"1",2,3\n4,5\n')
    records = read_csv_records(tmp_path / "c.csv", ["a"])
    assert records == [{"a": "2", "b": "3"}, {"a": "4", "b": "5"}]
    with pytest.raises(DatasetFormatError, match="lacks the columns \\['z'\\]"):
        read_csv_records(tmp_path / "c.csv", ["z"])
    (tmp_path / "d.csv").write_text("a,b\n1,2,3,4\n")
    with pytest.raises(DatasetFormatError, match="line 2: 4 fields"):
        read_csv_records(tmp_path / "d.csv", ["a"])


def test_read_csv_records_refuses_a_header_that_names_two_columns_alike(tmp_path):
    # before: the record kept the last column of the name, silently
    (tmp_path / "c.csv").write_text("a, b ,b\n1,2,3\n")
    with pytest.raises(DatasetFormatError, match=r"^c.csv line 1: columns 2 and 3 of the "
                                                 r"header share the name 'b'; give each "
                                                 r"column its own name$"):
        read_csv_records(tmp_path / "c.csv", ["a"])


def test_read_csv_records_strips_header_names_skips_blank_lines_and_needs_a_row(tmp_path):
    (tmp_path / "c.csv").write_text(" a , b\n\n1,2\n\n3,4\n\n")
    assert read_csv_records(tmp_path / "c.csv", ["a", "b"]) == [{"a": "1", "b": "2"},
                                                                 {"a": "3", "b": "4"}]
    (tmp_path / "h.csv").write_text("a,b\n\n")
    with pytest.raises(DatasetFormatError, match="^h.csv: the file has no data rows$"):
        read_csv_records(tmp_path / "h.csv", ["a"])


@pytest.mark.parametrize("value", [np.inf, -np.inf, np.nan, 1.5])
def test_integer_labels_are_finite_whole_numbers(value):
    assert as_integer_labels(np.array([2.0, -1.0]), "f").tolist() == [2, -1]
    with pytest.raises(DatasetFormatError, match="^f: class labels must be integers$"):
        as_integer_labels(np.array([1.0, value]), "f")


def test_encode_labels_sorted_order_and_names():
    y, names = encode_labels([7, 3, 7, 5])
    np.testing.assert_array_equal(y, [2, 0, 2, 1])
    assert y.dtype == np.int64 and names == ["3", "5", "7"]
    y, names = encode_labels(["b", "a"], {"a": "Alpha"})
    assert y.tolist() == [1, 0] and names == ["Alpha", "b"]


def make_dataset() -> StreamDataset:
    return StreamDataset("toy", np.arange(6, dtype=np.float64).reshape(3, 2), np.array([0, 1, 0]),
                         2, ["a", "b"], feature_names=["f0", "f1"])


def test_stream_dataset_api():
    ds = make_dataset()
    assert ds.x.dtype == np.float32 and ds.y.dtype == np.int64
    assert (len(ds), ds.num_samples, ds.num_features) == (3, 3, 2)
    rows = list(ds)
    assert isinstance(rows[1][1], int) and rows[1][1] == 1
    np.testing.assert_array_equal(rows[2][0], [4.0, 5.0])
    head = ds.head(2)
    assert head.num_samples == 2 and head.class_names == ["a", "b"] and head.name == "toy"
    assert "num_samples=3" in repr(ds)
    with pytest.raises(ValueError, match="^n must be non-negative, got -1$"):
        ds.head(-1)


@pytest.mark.parametrize("kwargs, match", [
    (dict(y=np.array([0, 1])), "x must be"),
    (dict(class_names=["a"]), "class names"),
    (dict(y=np.array([0, 2, 0])), "labels must lie"),
    (dict(feature_names=["f0"]), "feature names"),
    (dict(x=np.array([[0.0, 0.0], [0.0, np.nan], [np.inf, 0.0]])),
     "2 non-finite values .*the first at row 1, column 1"),
    (dict(x=np.array([[0.0, 0.0], [0.0, 1e39], [0.0, 0.0]])), "non-finite values \\(as float32\\)"),
])
def test_stream_dataset_validates(kwargs, match):
    base = dict(name="toy", x=np.zeros((3, 2)), y=np.array([0, 1, 0]), num_classes=2,
                class_names=["a", "b"])
    with pytest.raises(ValueError, match=match):
        StreamDataset(**{**base, **kwargs})


@pytest.mark.parametrize("damage, reason", [("truncated", "Compressed file ended"),
                                           ("not gzip", "Not a gzipped file")])
def test_damaged_gzip_is_a_format_error_naming_the_file(tmp_path, damage, reason):
    packed = gzip.compress(idx_bytes(np.arange(2 * 28 * 28).reshape(2, 28, 28)))
    payload = packed[:len(packed) // 2] if damage == "truncated" else b"plain text"
    (tmp_path / "imgs.gz").write_bytes(payload)
    message = rf"^imgs.gz: cannot be read \({reason}"
    with pytest.raises(DatasetFormatError, match=message):
        read_idx(tmp_path / "imgs")
    with pytest.raises(DatasetFormatError, match=message):
        with open_text(tmp_path / "imgs", errors="replace") as handle:
            list(handle)
    with pytest.raises(DatasetFormatError, match=message):
        with open_binary(tmp_path / "imgs") as handle:
            while handle.readline():
                pass


def test_a_byte_order_mark_is_skipped(tmp_path):
    (tmp_path / "c.csv").write_bytes(b"\xef\xbb\xbfa,b\n1,2\n")
    assert read_csv_records(tmp_path / "c.csv", ["a"]) == [{"a": "1", "b": "2"}]
    (tmp_path / "t.txt").write_bytes(b"\xef\xbb\xbf1 2\n3 4\n")
    np.testing.assert_array_equal(read_numeric_table(tmp_path / "t.txt", 2), [[1, 2], [3, 4]])


def test_an_empty_numeric_table_is_one_error_without_numpy_warning(tmp_path):
    (tmp_path / "t.txt").write_text("")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(DatasetFormatError, match="^t.txt: the file has no rows$"):
            read_numeric_table(tmp_path / "t.txt", 3)
