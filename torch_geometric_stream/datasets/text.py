"""Loaders of the web text datasets MNDS and WebKB, and the tf-idf they share.

The paper turns each document into 500 tf-idf features with scikit-learn's
``TfidfVectorizer(max_features=500)``; :func:`tfidf` reproduces its defaults
in NumPy: lowercase, tokens ``\\b\\w\\w+\\b`` (words of two or more word
characters), the vocabulary = the 500 terms with the highest total count
(ties broken alphabetically) with columns in alphabetical order, raw term
counts times the smooth idf ``ln((1 + n) / (1 + df)) + 1``, then each row
scaled to unit L2 norm.  As in the paper, the vocabulary and idf are fitted on
the *whole* corpus, i.e. with knowledge of the future of the stream.

Layouts read (under the dataset's folder):

- **MNDS** (MN-DS, Petukhova & Fachada, Data 8(5):74, 2023, 10,917 news
  articles, https://zenodo.org/records/7394851): the published CSV
  ``MN-DS-news-classification.csv`` (or, failing that, the folder's only
  ``*.csv``) with at least the columns ``title``, ``content`` and
  ``category_level_1``.  Text = title + content; label = the 17 first-level
  categories.  Stream order = file order.
- **WebKB** (CMU 4 Universities data, Craven et al., AAAI 1998,
  http://www.cs.cmu.edu/afs/cs.cmu.edu/project/theo-20/www/data/): the
  ``webkb/<class>/<university>/<page>`` tree of the original tarball (8,282
  pages, 7 classes: course, department, faculty, other, project, staff,
  student), either as ``WebKB/webkb/`` or directly in ``WebKB/``.  Pages are
  read as Latin-1 (a page named ``*.gz`` is decompressed); the HTTP header
  that precedes each page and all HTML tags are stripped.  Stream order =
  sorted paths (class, university, page): the tarball's grouping by class,
  made deterministic.  Alternatively the preprocessed
  ``webkb-train-stemmed.txt`` then ``webkb-test-stemmed.txt``
  (``<label>\\t<text>`` per line, Cardoso-Cachopo,
  https://ana.cachopo.org/datasets-for-single-label-text-categorization),
  which keeps only 4 classes (4,199 pages) instead of the paper's 7.
"""
from __future__ import annotations

import html
import re
from collections import Counter
from pathlib import Path
from typing import Sequence

import numpy as np

from torch_geometric_stream.datasets.dataset import StreamDataset, encode_labels
from torch_geometric_stream.datasets.errors import DatasetFormatError, DatasetNotFoundError
from torch_geometric_stream.datasets.io import find_file, open_text, read_csv_records

__all__ = ["tfidf", "tokenize", "load_mnds", "load_webkb", "NUM_TEXT_FEATURES",
           "WEBKB_CLASSES", "MNDS_FILE"]

NUM_TEXT_FEATURES = 500
MNDS_FILE = "MN-DS-news-classification.csv"
WEBKB_CLASSES = ("course", "department", "faculty", "other", "project", "staff", "student")
WEBKB_STEMMED_FILES = ("webkb-train-stemmed.txt", "webkb-test-stemmed.txt")
_TOKEN = re.compile(r"(?u)\b\w\w+\b")
_TAG = re.compile(r"<[^>]*>")
_HEADER_LINE = re.compile(r"^[A-Za-z][A-Za-z-]*:")


def tokenize(text: str) -> list[str]:
    """Lowercase words of at least two word characters (scikit-learn's default).

    Args:
        text (str): the text to split.
    """
    return _TOKEN.findall(text.lower())


def tfidf(documents: Sequence[str],
          max_features: int = NUM_TEXT_FEATURES) -> tuple[np.ndarray, list[str]]:
    """Tf-idf matrix over the ``max_features`` most frequent terms of ``documents``.

    Args:
        documents (Sequence[str]): the texts.
        max_features (int, optional): the most frequent terms kept.
            (default: :data:`NUM_TEXT_FEATURES`)

    Returns:
        tuple[numpy.ndarray, list[str]]: ``(x, vocabulary)``: float32 of shape
        ``(len(documents), V)`` with unit (or zero) L2 rows,
        ``V = min(max_features, #distinct terms)``, and the ``V`` terms in
        column order (alphabetical).
    """
    counts = [Counter(tokenize(doc)) for doc in documents]
    totals: Counter = Counter()
    for doc_counts in counts:
        totals.update(doc_counts)
    top = sorted(totals, key=lambda term: (-totals[term], term))[:max_features]
    vocabulary = sorted(top)
    column = {term: j for j, term in enumerate(vocabulary)}
    tf = np.zeros((len(documents), len(vocabulary)), dtype=np.float64)
    for i, doc_counts in enumerate(counts):
        for term, count in doc_counts.items():
            if term in column:
                tf[i, column[term]] = count
    df = (tf > 0).sum(axis=0)
    x = tf * (np.log((1.0 + len(documents)) / (1.0 + df)) + 1.0)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    x = np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)
    return x.astype(np.float32), vocabulary


def _text_stream(name: str, documents: list[str], labels: list[str], notes: str) -> StreamDataset:
    x, vocabulary = tfidf(documents)
    y, class_names = encode_labels(labels)
    return StreamDataset(name, x, y, len(class_names), class_names,
                         feature_names=vocabulary, notes=notes)


def load_mnds(folder: Path, strict: bool = False) -> StreamDataset:
    """MN-DS news articles (see the module docstring) -> 500 tf-idf features, 17 classes.

    Args:
        folder (Path): the folder holding the files.
        strict (bool, optional): unused (see
            :func:`~torch_geometric_stream.datasets.load_dataset`). (default: ``False``)
    """
    path = find_file(folder / MNDS_FILE)
    if path is None:
        candidates = sorted(folder.glob("*.csv")) + sorted(folder.glob("*.csv.gz"))
        if len(candidates) != 1:
            raise DatasetNotFoundError(f"missing file {MNDS_FILE} (found {len(candidates)} "
                                       f"other CSV files, need exactly one)")
        path = candidates[0]
    records = read_csv_records(path, ["title", "content", "category_level_1"])
    documents = [f"{r['title']}\n{r['content']}" for r in records]
    labels = [r["category_level_1"].strip() for r in records]
    return _text_stream("MNDS", documents, labels,
                        notes="tf-idf vocabulary and idf fitted on the whole corpus (as the "
                              "paper); text = title + content; label = category_level_1.")


def _page_text(raw: str) -> str:
    """Visible text of a WebKB page: HTTP header and HTML tags removed, entities decoded."""
    lines = raw.splitlines()
    if lines and _HEADER_LINE.match(lines[0]):
        blank = next((i for i, line in enumerate(lines) if not line.strip()), len(lines))
        lines = lines[blank + 1:]
    return html.unescape(_TAG.sub(" ", "\n".join(lines)))


def _webkb_tree(folder: Path) -> Path | None:
    """The folder holding the ``<class>/`` directories of the raw tree, if any."""
    for base in (folder / "webkb", folder):
        if any((base / cls).is_dir() for cls in WEBKB_CLASSES):
            return base
    return None


def load_webkb(folder: Path, strict: bool = False) -> StreamDataset:
    """WebKB pages (see the module docstring) -> 500 tf-idf features, 7 classes.

    Args:
        folder (Path): the folder holding the files.
        strict (bool, optional): unused (see
            :func:`~torch_geometric_stream.datasets.load_dataset`). (default: ``False``)
    """
    tree = _webkb_tree(folder)
    if tree is not None:
        documents, labels = [], []
        for cls in WEBKB_CLASSES:
            for page in sorted(p for p in (tree / cls).rglob("*") if p.is_file()):
                with open_text(page, encoding="latin-1") as handle:
                    documents.append(_page_text(handle.read()))
                labels.append(cls)
        missing = [cls for cls in WEBKB_CLASSES if not (tree / cls).is_dir()]
        notes = "Raw webkb tree, pages in sorted path order (class, university, page)."
        if missing:
            notes += f" Class folders missing: {', '.join(missing)}."
        return _text_stream("WebKB", documents, labels, notes + " tf-idf fitted on the whole "
                                                                "corpus, as the paper.")
    if any(find_file(folder / f) is None for f in WEBKB_STEMMED_FILES):
        raise DatasetNotFoundError("neither the webkb/<class>/<university>/<page> tree nor "
                                   "both preprocessed files were found")
    documents, labels = [], []
    for name in WEBKB_STEMMED_FILES:
        with open_text(folder / name) as handle:
            for line_number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                label, tab, text = line.rstrip("\n").partition("\t")
                if not tab:
                    raise DatasetFormatError(f"{name} line {line_number}: expected "
                                             f"'<label>\\t<text>'")
                documents.append(text)
                labels.append(label.strip())
    return _text_stream("WebKB", documents, labels,
                        "Preprocessed stemmed files (Cardoso-Cachopo): 4 classes, not the "
                        "paper's 7. tf-idf fitted on the whole corpus, as the paper.")
