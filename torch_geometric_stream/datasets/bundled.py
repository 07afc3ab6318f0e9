"""The small real dataset shipped inside the package: the offline default stream.

``datasets/data/online_shoppers_intention.csv.gz`` is the UCI Online Shoppers
Purchasing Intention CSV (CC BY 4.0, see ``datasets/data/ATTRIBUTION.md``),
read by the regular Shopper loader so both give identical streams.
"""
from __future__ import annotations

from dataclasses import replace
from importlib import resources
from pathlib import Path

from torch_geometric_stream.datasets.dataset import StreamDataset
from torch_geometric_stream.datasets.registry import DATASETS

__all__ = ["BUNDLED_DATASET", "bundled_data_folder", "load_bundled_dataset"]

#: Registry name of the bundled dataset.
BUNDLED_DATASET = "Shopper"


def bundled_data_folder() -> Path:
    """The folder holding the bundled files (inside the installed package)."""
    return Path(str(resources.files("torch_geometric_stream.datasets") / "data"))


def load_bundled_dataset() -> StreamDataset:
    """The bundled Shopper stream (12,330 rows, 15 features, 2 classes), as
    :func:`~torch_geometric_stream.datasets.load_dataset` would return it."""
    info = DATASETS[BUNDLED_DATASET]
    dataset = info.loader(bundled_data_folder())
    return replace(dataset, source=f"{info.citation}. {info.url} (bundled copy, CC BY 4.0)")
