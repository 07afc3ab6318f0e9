"""The forms taken where an older NumPy behaves otherwise, exercised on every
version: the feature checks are made once at import, so the tests set them."""
import warnings

import numpy as np
import pytest

from torch_geometric_stream import validation
from torch_geometric_stream.validation import generator_from_state, ragged_refused


class RaggedWarning(UserWarning):
    """Stands in for NumPy < 1.24's warning of a ragged nested sequence."""


def test_the_ragged_warning_of_an_older_numpy_is_refused_as_a_value_error(monkeypatch):
    monkeypatch.setattr(validation, "_RAGGED_WARNING", RaggedWarning)
    with pytest.raises(ValueError, match=r"^rows of different lengths$"):
        with ragged_refused():
            warnings.warn("rows of different lengths", RaggedWarning)
    with warnings.catch_warnings(record=True) as caught:  # the filter is undone after
        warnings.simplefilter("always")
        warnings.warn("outside", RaggedWarning)
    assert [str(warning.message) for warning in caught] == ["outside"]


def test_other_warnings_pass_through_the_ragged_check(monkeypatch):
    monkeypatch.setattr(validation, "_RAGGED_WARNING", RaggedWarning)
    with pytest.warns(DeprecationWarning, match="^other$"):
        with ragged_refused():
            warnings.warn("other", DeprecationWarning)


def test_this_numpy_refuses_a_ragged_sequence_in_the_check():
    with pytest.raises(ValueError):
        with ragged_refused():
            np.asarray([[0.0], [0.0, 0.0]])


class _WrappingGenerator:
    """Stands in for an older NumPy's default generator: its state takes any value
    and stays ``held`` (as PCG64 holds -5 as 2**128 - 5 before NumPy 2.0)."""

    def __init__(self, held):
        self.bit_generator, self._held = self, held

    state = property(lambda self: self._held, lambda self, value: None)


@pytest.mark.parametrize("key", ["state", "inc"])
def test_a_state_integer_an_older_numpy_would_wrap_around_is_refused(monkeypatch, key):
    state = np.random.default_rng(0).bit_generator.state
    wrapped = {**state, "state": {**state["state"], key: 2 ** 128 - 5}}
    monkeypatch.setattr(np.random, "default_rng", lambda: _WrappingGenerator(wrapped))
    given = {**state, "state": {**state["state"], key: -5}}
    with pytest.raises(ValueError, match=rf"^x is not a state of NumPy's default generator: "
                                         rf"OverflowError\(\"Python integer -5 out of bounds "
                                         rf"for the generator's 128-bit '{key}'\"\)$"):
        generator_from_state(given, "x")
    assert generator_from_state(wrapped, "x").bit_generator.state == wrapped
