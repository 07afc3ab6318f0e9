"""The integrations package: its classes imported from their submodule on first access."""
import pytest

import torch_geometric_stream.integrations as integrations


def test_the_package_lists_its_classes_and_refuses_another_name():
    assert dir(integrations) == ["CapyMOASLeDGe", "CapyMOASLeDGeLight", "RiverClassifier",
                                 "SemiSupervisedWrapper"]
    with pytest.raises(AttributeError, match="^module 'torch_geometric_stream.integrations' "
                                             "has no attribute 'RiverClassifer'$"):
        integrations.RiverClassifer  # noqa: B018
    assert not hasattr(integrations, "MOAClassifier")


def test_a_class_is_its_submodules():
    pytest.importorskip("river")
    from torch_geometric_stream.integrations.river import RiverClassifier
    assert integrations.RiverClassifier is RiverClassifier
