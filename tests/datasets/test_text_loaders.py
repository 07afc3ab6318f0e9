import csv
import io
import math

import numpy as np
import pytest

from torch_geometric_stream.datasets import DatasetFormatError, load_dataset, tfidf
from torch_geometric_stream.datasets.text import WEBKB_CLASSES, tokenize


def test_tokenize_like_scikit_learn():
    assert tokenize("Hello, World! a I x2 naïve_words 42") == ["hello", "world", "x2",
                                                                "naïve_words", "42"]


def test_tfidf_exact_values():
    x, vocabulary = tfidf(["apple banana apple", "Banana cherry", ""], max_features=2)
    assert vocabulary == ["apple", "banana"]          # cherry has the lowest count
    idf_apple, idf_banana = math.log(4 / 2) + 1, math.log(4 / 3) + 1
    row0 = np.array([2 * idf_apple, idf_banana])
    np.testing.assert_allclose(x[0], row0 / np.linalg.norm(row0), rtol=1e-6)
    np.testing.assert_allclose(x[1], [0.0, 1.0])
    np.testing.assert_array_equal(x[2], [0.0, 0.0])
    assert x.dtype == np.float32


def test_tfidf_ties_broken_alphabetically_and_500_default():
    docs = [" ".join(f"w{i:04d}" for i in range(600))]
    x, vocabulary = tfidf(docs)
    assert x.shape == (1, 500) and vocabulary[0] == "w0000" and vocabulary[-1] == "w0499"


def mnds_csv(rows) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["data_id", "id", "date", "source", "title", "content", "author", "url",
                     "published", "published_utc", "collection_utc", "category_level_1",
                     "category_level_2"])
    for i, (title, content, level1) in enumerate(rows):
        writer.writerow([i, f"id{i}", "2019-01-01", "src", title, content, "me", "http://x",
                         "", "", "", level1, "sub"])
    return out.getvalue()


@pytest.mark.parametrize("file_name", ["MN-DS-news-classification.csv", "mnds.csv"])
def test_mnds(tmp_path, write, file_name):
    rows = [("Election news", "The vote, counted\nacross lines.", "politics"),
            ("Match report", "Goal goal goal", "sport"),
            ("Budget", "The vote on the budget", "economy, business and finance")]
    write(tmp_path / "MNDS" / file_name, mnds_csv(rows))
    ds = load_dataset("MN-DS", tmp_path)
    assert ds.class_names == ["economy, business and finance", "politics", "sport"]
    assert ds.y.tolist() == [1, 2, 0]
    expected, vocabulary = tfidf([f"{t}\n{c}" for t, c, _ in rows])
    np.testing.assert_array_equal(ds.x, expected)
    assert ds.feature_names == vocabulary and "whole corpus" in ds.notes
    np.testing.assert_allclose(np.linalg.norm(ds.x, axis=1), 1.0, rtol=1e-6)


def test_mnds_missing_columns(tmp_path):
    (tmp_path / "MNDS").mkdir()
    (tmp_path / "MNDS" / "MN-DS-news-classification.csv").write_text("title,text\na,b\n")
    with pytest.raises(DatasetFormatError,
                       match="lacks the columns \\['content', 'category_level_1'\\]"):
        load_dataset("MNDS", tmp_path)


PAGE = ("MIME-Version: 1.0\nServer: CERN/3.0\nContent-Type: text/html\n\n"
        "<html><head><title>{title}</title></head><body>{body} &amp; more</body></html>\n")


@pytest.mark.parametrize("nested", [True, False])
def test_webkb_tree(tmp_path, nested):
    root = tmp_path / "WebKB" / ("webkb" if nested else "")
    pages = {("student", "cornell", "b.html"): ("Jane", "my homepage"),
             ("student", "cornell", "a.html"): ("Joe", "student homepage"),
             ("course", "texas", "cs101"): ("CS 101", "lecture notes homework")}
    for (cls, uni, name), (title, body) in pages.items():
        (root / cls / uni).mkdir(parents=True, exist_ok=True)
        (root / cls / uni / name).write_bytes(PAGE.format(title=title, body=body).encode("latin-1"))
    ds = load_dataset("webkb", tmp_path)
    assert ds.class_names == ["course", "student"] and ds.y.tolist() == [0, 1, 1]
    expected, vocabulary = tfidf(["CS 101 lecture notes homework & more",
                                  "Joe student homepage & more", "Jane my homepage & more"])
    np.testing.assert_allclose(ds.x, expected, rtol=1e-6)
    assert "mime" not in vocabulary and "html" not in ds.feature_names
    assert "Class folders missing: department, faculty, other, project, staff" in ds.notes


def test_webkb_tree_of_every_class_and_a_page_without_an_http_header(tmp_path):
    """No class folder missing: no note of one; a page that does not open with an
    HTTP header line is read whole (an empty page is no document text)."""
    root = tmp_path / "WebKB" / "webkb"
    for cls in WEBKB_CLASSES:
        (root / cls / "cornell").mkdir(parents=True)
        (root / cls / "cornell" / "page").write_text("" if cls == "other" else
                                                     f"<p>{cls} Server: text</p>\n")
    ds = load_dataset("webkb", tmp_path)
    assert ds.class_names == list(WEBKB_CLASSES) and ds.y.tolist() == list(range(7))
    expected, _ = tfidf([f"{cls} Server: text" if cls != "other" else ""
                         for cls in WEBKB_CLASSES])
    np.testing.assert_allclose(ds.x, expected, rtol=1e-6)
    assert "missing" not in ds.notes and "server" in ds.feature_names


def test_webkb_stemmed_files(tmp_path, write):
    write(tmp_path / "WebKB" / "webkb-train-stemmed.txt",  # a blank line is skipped
          "student\tjoe homepag studi\n\n  \nfaculty\tprofessor research\n")
    write(tmp_path / "WebKB" / "webkb-test-stemmed.txt", "course\tlectur homework\n")
    ds = load_dataset("WebKB", tmp_path)
    assert ds.class_names == ["course", "faculty", "student"] and ds.y.tolist() == [2, 1, 0]
    assert ds.x.shape == (3, 7) and "4 classes" in ds.notes


def test_webkb_stemmed_malformed(tmp_path):
    (tmp_path / "WebKB").mkdir()
    (tmp_path / "WebKB" / "webkb-train-stemmed.txt").write_text("student joe\n")
    (tmp_path / "WebKB" / "webkb-test-stemmed.txt").write_text("")
    with pytest.raises(DatasetFormatError, match="webkb-train-stemmed.txt line 1"):
        load_dataset("WebKB", tmp_path)
