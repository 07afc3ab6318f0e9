"""Shape and first-row checks of the real data shipped in ``shared/data`` (skipped when absent)."""
import warnings

import numpy as np
import pytest

from torch_geometric_stream.datasets import DATASETS, load_dataset


def load_real(dataset_root, name):
    root = dataset_root(name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_dataset(name, root)


@pytest.fixture(scope="module")
def mnist(dataset_root):
    return load_real(dataset_root, "MNIST")


def test_mnist_matches_paper(mnist):
    info = DATASETS["MNIST"]
    assert (mnist.num_samples, mnist.num_features, mnist.num_classes) == \
           (info.paper_rows, info.paper_features, info.paper_classes) == (70000, 784, 10)
    assert mnist.y[:5].tolist() == [5, 0, 4, 1, 9]     # first training labels
    assert mnist.y[60000] == 7                          # first test label
    assert mnist.x.min() == 0.0 and mnist.x.max() == 255.0
    assert np.bincount(mnist.y).tolist()[:2] == [6903, 7877]
    assert mnist.value_range == info.value_range == (0.0, 255.0)  # registry metadata agrees


def test_shopper_matches_paper(dataset_root):
    ds = load_real(dataset_root, "Shopper")
    assert (ds.num_samples, ds.num_features, ds.num_classes) == (12330, 15, 2)
    first = np.float32([0, 0, 0, 0, 1, 0, 0.2, 0.2, 0, 0, 1, 1, 1, 1, 0])
    np.testing.assert_array_equal(ds.x[0], first)
    assert np.bincount(ds.y).tolist() == [10422, 1908]
    assert ds.value_range is DATASETS["Shopper"].value_range is None  # only the data tell


def test_shuttle_has_nine_features_where_the_paper_reports_seven(dataset_root):
    ds = load_real(dataset_root, "Shuttle")
    assert (ds.num_samples, ds.num_classes) == (58000, 7)
    assert ds.num_features == 9 and DATASETS["Shuttle"].paper_features == 7
    rows = (dataset_root("Shuttle") / "Shuttle" / "shuttle.trn").read_text()
    first = rows.split("\n", 1)[0].split()
    np.testing.assert_array_equal(ds.x[0], [float(v) for v in first[:-1]])
    assert ds.class_names[ds.y[0]] == ds.class_names[int(first[-1]) - 1]
    assert np.bincount(ds.y).tolist() == [45586, 50, 171, 8903, 3267, 10, 13]


def test_gsad_present_batches(dataset_root):
    root = dataset_root("GSAD")
    with pytest.warns(UserWarning, match="batch7.dat, batch10.dat"):
        ds = load_dataset("GSAD", root)
    assert (ds.num_samples, ds.num_features, ds.num_classes) == (6697, 128, 6)
    assert DATASETS["GSAD"].paper_rows == 13910
    assert ds.x[0, 0] == pytest.approx(15596.1621)
