"""The registry of the 12 datasets of the SLeDGe paper and :func:`load_dataset`.

Nothing is ever downloaded: each dataset is read in its original format from
``<root>/<folder>/`` (see :attr:`DatasetInfo.expected_files`).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Callable, Optional

from torch_geometric_stream.datasets import images, tabular, text
from torch_geometric_stream.datasets.dataset import StreamDataset
from torch_geometric_stream.datasets.errors import DatasetError, DatasetNotFoundError, with_context

__all__ = ["DatasetInfo", "DATASETS", "load_dataset", "resolve_dataset_name", "list_datasets",
           "default_data_root"]

# Every loader is ``loader(folder: Path, strict: bool = False) -> StreamDataset``;
# ``strict`` only matters where part of a dataset may be missing (GSAD).
Loader = Callable[..., StreamDataset]


@dataclass(frozen=True)
class DatasetInfo:
    """Where a dataset lives, what it should look like (paper's table) and how to read it.

    Attributes:
        name (str): the canonical name.
        folder (str): its folder under the data root.
        expected_files (list[str]): the files it needs, described for a user.
        url (str): where to download it.
        paper_rows, paper_features, paper_classes (int): its size in the
            paper's table.
        loader (Callable[..., StreamDataset]): reads it.
        citation (str, optional): its reference. (default: :obj:`""`)
        value_range (tuple[float, float], optional): the range every feature
            lies in a priori (the loaded stream's ``value_range``; images:
            pixels), ``None`` where only the data tell. (default: :obj:`None`)
        required_files (tuple[str, ...], optional): the file names the loader
            reads directly in the folder (each also as ``<name>.gz``) where the
            dataset has one layout; empty where its files come in several
            layouts (``expected_files`` describes them). (default: ``()``)
    """

    name: str
    folder: str
    expected_files: list[str]
    url: str
    paper_rows: int
    paper_features: int
    paper_classes: int
    loader: Loader
    citation: str = ""
    value_range: Optional[tuple[float, float]] = None
    required_files: tuple[str, ...] = ()


_UCI = "https://archive.ics.uci.edu/dataset/"
_IDX_NAMES = tuple(f for pair in images.IDX_FILES.values() for f in pair)
_IDX = [f"{f} (or .gz)" for f in _IDX_NAMES]

DATASETS: dict[str, DatasetInfo] = {info.name: info for info in [
    DatasetInfo("MNDS", "MNDS", [f"{text.MNDS_FILE} (columns title, content, category_level_1)"],
                "https://zenodo.org/records/7394851", 10917, 500, 17, text.load_mnds,
                "A. Petukhova, N. Fachada, MN-DS: A Multilabeled News Dataset for News Articles "
                "Hierarchical Classification, Data 8(5):74, 2023"),
    DatasetInfo("Shopper", "Shopper", ["online_shoppers_intention.csv"],
                _UCI + "468/online+shoppers+purchasing+intention+dataset",
                12330, 15, 2, tabular.load_shopper,
                "C. O. Sakar, S. O. Polat, M. Katircioglu, Y. Kastro, Real-time prediction of "
                "online shoppers' purchasing intention, Neural Comput. Appl. 31, 2019"),
    DatasetInfo("WebKB", "WebKB",
                ["webkb/<class>/<university>/<page> (the 4 Universities tarball, 7 classes)",
                 "or webkb-train-stemmed.txt + webkb-test-stemmed.txt (<label>\\t<text>)"],
                "http://www.cs.cmu.edu/afs/cs.cmu.edu/project/theo-20/www/data/", 8282, 500, 7,
                text.load_webkb,
                "M. Craven et al., Learning to Extract Symbolic Knowledge from the World Wide Web, "
                "AAAI 1998 (CMU WebKB 4 Universities data)"),
    DatasetInfo("MNIST", "MNIST", list(_IDX), "http://yann.lecun.com/exdb/mnist/", 70000, 784, 10,
                images.load_mnist,
                "Y. LeCun, C. Cortes, C. J. C. Burges, The MNIST database of handwritten digits",
                value_range=images.PIXEL_RANGE, required_files=_IDX_NAMES),
    DatasetInfo("FashionMNIST", "FashionMNIST", list(_IDX),
                "https://github.com/zalandoresearch/fashion-mnist", 70000, 784, 10,
                images.load_fashion_mnist,
                "H. Xiao, K. Rasul, R. Vollgraf, Fashion-MNIST, arXiv:1708.07747, 2017",
                value_range=images.PIXEL_RANGE, required_files=_IDX_NAMES),
    DatasetInfo("KMNIST", "KMNIST",
                _IDX + ["or " + ", ".join(f for pair in images.KMNIST_NPZ_FILES.values()
                                          for f in pair) + " (key arr_0)"],
                "https://github.com/rois-codh/kmnist", 70000, 784, 10, images.load_kmnist,
                "T. Clanuwat et al., Deep Learning for Classical Japanese Literature, "
                "arXiv:1812.01718, 2018",
                value_range=images.PIXEL_RANGE),
    DatasetInfo("CIFAR-10", "CIFAR-10",
                [f"cifar-10-batches-py/{f} (or directly in the folder)"
                 for f in images.CIFAR10_FILES],
                "https://www.cs.toronto.edu/~kriz/cifar.html", 60000, 3072, 10, images.load_cifar10,
                "A. Krizhevsky, Learning Multiple Layers of Features from Tiny Images, 2009",
                value_range=images.PIXEL_RANGE),
    DatasetInfo("Shuttle", "Shuttle", ["shuttle.trn", "shuttle.tst"],
                _UCI + "148/statlog+shuttle", 58000, 7, 7,
                tabular.load_shuttle, "Statlog (Shuttle), UCI Machine Learning Repository (NASA)"),
    DatasetInfo("GSAD", "GSAD",
                [f"batch{i}.dat" for i in range(1, tabular.GSAD_NUM_BATCHES + 1)],
                _UCI + "224/gas+sensor+array+drift+dataset",
                13910, 128, 6, tabular.load_gsad,
                "A. Vergara et al., Chemical gas sensor drift compensation using classifier "
                "ensembles, Sensors and Actuators B 166-167, 2012"),
    DatasetInfo("SDD", "SDD", ["Sensorless_drive_diagnosis.txt"],
                _UCI + "325/dataset+for+sensorless+drive+diagnosis",
                58509, 48, 11, tabular.load_sdd,
                "M. Bator, Dataset for Sensorless Drive Diagnosis, UCI Machine Learning "
                "Repository, 2013"),
    DatasetInfo("HAR", "HAR",
                ["UCI HAR Dataset/train/X_train.txt", "UCI HAR Dataset/train/y_train.txt",
                 "UCI HAR Dataset/test/X_test.txt", "UCI HAR Dataset/test/y_test.txt",
                 "(or those four files in train/ and test/, or directly in the folder)"],
                _UCI + "240/human+activity+recognition+using+smartphones",
                10299, 561, 6, tabular.load_har,
                "D. Anguita et al., A Public Domain Dataset for Human Activity Recognition Using "
                "Smartphones, ESANN 2013"),
    DatasetInfo("OD", "OD", list(tabular.OD_FILES),
                _UCI + "357/occupancy+detection", 20560, 5, 2,
                tabular.load_od,
                "L. M. Candanedo, V. Feldheim, Accurate occupancy detection of an office room "
                "from light, temperature, humidity and CO2 measurements, Energy and Buildings "
                "112, 2016"),
]}


def _key(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


_ALIASES = {_key(name): name for name in DATASETS}
_ALIASES.update({"fmnist": "FashionMNIST", "fashion": "FashionMNIST",
                 "kuzushijimnist": "KMNIST", "cifar": "CIFAR-10", "statlogshuttle": "Shuttle",
                 "gassensorarraydrift": "GSAD", "sensorlessdrivediagnosis": "SDD",
                 "occupancy": "OD", "occupancydetection": "OD", "mnnews": "MNDS",
                 "onlineshoppers": "Shopper", "humanactivityrecognition": "HAR"})


def list_datasets() -> list[str]:
    """Canonical names of the 12 datasets, in the paper's order."""
    return list(DATASETS)


def resolve_dataset_name(name: str) -> str:
    """Canonical name for ``name``, ignoring case, spaces, dots, dashes and underscores.

    Args:
        name (str): a dataset's name, in any spelling.

    Raises:
        ValueError: for an unknown name (the message lists the valid ones).
    """
    canonical = _ALIASES.get(_key(name))
    if canonical is None:
        raise ValueError(f"unknown dataset {name!r}; valid names: {', '.join(DATASETS)}")
    return canonical


def _dataset_folder(root: Path, folder: str) -> Path:
    """``root/folder``, or a folder of ``root`` whose name matches it ignoring case."""
    exact = root / folder
    if exact.is_dir() or not root.is_dir():
        return exact
    matches = [p for p in root.iterdir() if p.is_dir() and p.name.lower() == folder.lower()]
    return matches[0] if matches else exact


def load_dataset(name: str, root: str | Path, *, strict: bool = False) -> StreamDataset:
    """Read one of the paper's datasets from ``root/<folder>/`` in its original format.

    Args:
        name (str): a dataset name (see :func:`resolve_dataset_name`).
        root (str or Path): folder that holds one sub-folder per dataset.
        strict (bool, optional): raise instead of warning when part of a dataset is missing
            (GSAD batches). (default: :obj:`False`)

    Returns:
        The stream, in the original order (train split then test split),
        features raw.

    Raises:
        ValueError: unknown ``name``.
        DatasetNotFoundError: the folder or a file is missing.
        DatasetFormatError: a file cannot be parsed.
    """
    info = DATASETS[resolve_dataset_name(name)]
    folder = _dataset_folder(Path(root), info.folder)
    in_context = partial(with_context, name=info.name, folder=folder,
                         expected_files=info.expected_files, url=info.url)
    if not folder.is_dir():
        raise in_context(DatasetNotFoundError(f"dataset folder {folder} does not exist"))
    try:
        dataset = info.loader(folder, strict=strict)
    except DatasetError as error:
        raise in_context(error) from error
    return replace(dataset, source=f"{info.citation}. {info.url}")


def default_data_root() -> Optional[Path]:
    """The local data folder: ``$TGS_DATA_ROOT``, else the first ``shared/data``
    found in the working directory or one of its parents, else ``None``."""
    env = os.environ.get("TGS_DATA_ROOT")
    if env:
        return Path(env)
    cwd = Path.cwd().resolve()
    for base in (cwd, *cwd.parents):
        if (base / "shared" / "data").is_dir():
            return base / "shared" / "data"
    return None
