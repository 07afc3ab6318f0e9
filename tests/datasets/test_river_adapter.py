import re

import numpy as np
import pytest

from torch_geometric_stream.datasets import load_river_dataset


def test_iterable_of_dict_rows():
    rows = [({"b": 1.0, "a": 2}, "yes"), ({"a": 3, "b": 4.0}, "no"), ({"b": 5.0}, "yes")]
    ds = load_river_dataset(rows)
    assert ds.feature_names == ["b", "a"] and ds.class_names == ["no", "yes"]
    np.testing.assert_array_equal(ds.x[:2], [[1, 2], [4, 3]])
    assert ds.x[2, 1] == 0.0 and ds.y.tolist() == [1, 0, 1]  # a missing key counts as 0
    assert load_river_dataset(rows, max_samples=2).num_samples == 2
    with pytest.raises(ValueError, match="no rows"):
        load_river_dataset([])


def test_features_are_the_union_of_the_loaded_rows_keys_in_order_of_appearance():
    rows = [({"b": 1.0, "a": 2}, "yes"), ({"a": 3, "c": 6.0}, "no"), ({"d": 7, "b": 5.0}, "yes")]
    ds = load_river_dataset(rows)
    assert ds.feature_names == ["b", "a", "c", "d"] and ds.num_features == 4
    np.testing.assert_array_equal(ds.x, [[1, 2, 0, 0], [0, 3, 6, 0], [5, 0, 0, 7]])
    first_two = load_river_dataset(rows, max_samples=2)  # keys of the rows loaded only
    assert first_two.feature_names == ["b", "a", "c"]
    np.testing.assert_array_equal(first_two.x, [[1, 2, 0], [0, 3, 6]])


@pytest.mark.parametrize("max_samples, error, match", [
    (0, ValueError, "max_samples must be >= 1, got 0"),  # before: "yielded no rows"
    (-1, ValueError, "max_samples must be >= 1, got -1"),
    (2.5, TypeError, "max_samples must be an integer, got float"),
])
def test_a_bad_max_samples_is_named(max_samples, error, match):
    with pytest.raises(error, match=match):
        load_river_dataset([({"a": 1.0}, "x")] * 3, max_samples=max_samples)


@pytest.mark.parametrize("rows, error, message", [
    # before: float()'s "could not convert string to float: 'red'", its TypeError for
    # None, NumPy's "'<' not supported between 'int' and 'NoneType'", and an AttributeError
    ([({"a": 1.0}, 0), ({"a": 2.0, "b": "red"}, 1)], ValueError,
     "River row 1: feature 'b' holds 'red', not a number (encode categorical features as "
     "numbers first)"),
    ([({"a": None}, 0)], ValueError,
     "River row 0: feature 'a' holds None, a missing value: fill in or drop the row first"),
    ([({"a": 1.0}, None), ({"a": 2.0}, 1)], ValueError,
     "River row 0: the label is None; every row needs its true label"),
    ([({"a": 1.0}, 0.0), ({"a": 2.0}, np.float32("nan"))], ValueError,
     "River row 1: the label is nan; every row needs its true label"),
    ([([1.0, 2.0], 0)], TypeError,
     "River row 0: x must be a dict of features by name (River's rows), got list"),
    ([({"a": 1.0}, 0), ({"a": 1.0},)], TypeError,
     "River row 1 must be an (x, y) pair, got tuple of length 1"),
])
def test_a_bad_river_row_is_named_with_its_index_and_feature(rows, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        load_river_dataset(rows)


@pytest.mark.parametrize("name, shape, classes", [("Phishing", (1250, 9), 2),
                                                  ("Bananas", (5300, 2), 2),
                                                  ("ImageSegments", (2310, 18), 7)])
def test_river_bundled_datasets(name, shape, classes):
    pytest.importorskip("river")
    ds = load_river_dataset(name)
    assert (ds.num_samples, ds.num_features) == shape and ds.num_classes == classes
    assert ds.name == name


def test_unknown_river_dataset():
    pytest.importorskip("river")
    with pytest.raises(ValueError, match="no dataset named 'Nope'"):
        load_river_dataset("Nope")
