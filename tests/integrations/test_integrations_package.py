"""The integrations package: its classes imported from their submodule on first access."""
import importlib.util
import sys
from pathlib import Path

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


def test_without_river_its_module_imports_and_its_classes_ask_for_the_extra(monkeypatch):
    """Where River is missing (on Python 3.10 no River the extra accepts installs),
    the module imports and each class refuses to be built, naming the extra."""
    for name in ("river", "river.base", "river.compose"):
        monkeypatch.setitem(sys.modules, name, None)  # importing it fails
    path = Path(integrations.__file__).with_name("river.py")
    spec = importlib.util.spec_from_file_location("river_integration_without_river", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # a fresh copy: the package's own stays as it is
    assert module._river_base is None and module._river_compose is None
    for build, owner in ((lambda: module.RiverClassifier(lambda d: None), "RiverClassifier"),
                         (lambda: module.SemiSupervisedWrapper(None, 0.5),
                          "SemiSupervisedWrapper")):
        with pytest.raises(ImportError, match=rf"^{owner} needs River: pip install river "
                                              r"\(or pip install 'torch_geometric_stream"
                                              r"\[river\]'\)$"):
            build()
