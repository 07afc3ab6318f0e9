"""Loaders of the image datasets: MNIST, FashionMNIST, KMNIST and CIFAR-10.

Features are the raw pixels as float32 in ``[0, 255]`` (declared as the
dataset's ``value_range``), flattened in C order
(``28 * 28 = 784`` for the MNIST family, ``3 * 32 * 32 = 3072`` channel-major
for CIFAR-10).  Stream order: the training split, then the test split.
"""
from __future__ import annotations

import pickle
from pathlib import Path
from typing import Mapping, Optional

import numpy as np

from torch_geometric_stream.datasets.dataset import StreamDataset, encode_labels
from torch_geometric_stream.datasets.errors import DatasetFormatError, DatasetNotFoundError
from torch_geometric_stream.datasets.io import find_file, open_binary, read_idx

__all__ = ["load_mnist", "load_fashion_mnist", "load_kmnist", "load_cifar10", "IDX_FILES",
           "KMNIST_NPZ_FILES", "CIFAR10_FILES"]

IDX_FILES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
             "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}
KMNIST_NPZ_FILES = {"train": ("kmnist-train-imgs.npz", "kmnist-train-labels.npz"),
                    "test": ("kmnist-test-imgs.npz", "kmnist-test-labels.npz")}
CIFAR10_FILES = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
FASHION_CLASSES = dict(enumerate(["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                  "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]))
KMNIST_CLASSES = dict(enumerate(["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]))
#: Every pixel lies in this range a priori (8-bit images).
PIXEL_RANGE = (0.0, 255.0)

CIFAR10_CLASSES = dict(enumerate(["airplane", "automobile", "bird", "cat", "deer", "dog",
                                  "frog", "horse", "ship", "truck"]))


def _image_stream(name: str, splits: list[tuple[np.ndarray, np.ndarray]],
                  class_names: Optional[Mapping] = None) -> StreamDataset:
    """Concatenate ``(images (N, ...), labels (N,))`` splits into a flattened stream."""
    for images, labels in splits:
        if len(images) != len(labels) or labels.ndim != 1:
            raise DatasetFormatError(f"{name}: {len(images)} images but labels of shape "
                                     f"{labels.shape}")
    x = np.concatenate([images.reshape(len(images), -1) for images, _ in splits])
    y, names = encode_labels(np.concatenate([labels for _, labels in splits]).astype(np.int64),
                             class_names)
    return StreamDataset(name, x.astype(np.float32), y, len(names), names,
                         value_range=PIXEL_RANGE)


def _read_idx_split(folder: Path, split: str) -> tuple[np.ndarray, np.ndarray]:
    """Images ``(N, 28, 28)`` and labels ``(N,)`` of one split in IDX format."""
    image_file, label_file = IDX_FILES[split]
    images, labels = read_idx(folder / image_file), read_idx(folder / label_file)
    if images.ndim != 3 or labels.ndim != 1:
        raise DatasetFormatError(f"{image_file}/{label_file}: expected 3-d images and 1-d "
                                 f"labels, got shapes {images.shape} and {labels.shape}")
    return images, labels


def _load_mnist_family(name: str, folder: Path,
                       class_names: Optional[Mapping] = None) -> StreamDataset:
    return _image_stream(name, [_read_idx_split(folder, s) for s in ("train", "test")],
                         class_names)


def load_mnist(folder: Path, strict: bool = False) -> StreamDataset:
    """MNIST (LeCun, Cortes & Burges), http://yann.lecun.com/exdb/mnist/.

    The four IDX files (gzipped or not): ``train-images-idx3-ubyte``,
    ``train-labels-idx1-ubyte``, ``t10k-images-idx3-ubyte``,
    ``t10k-labels-idx1-ubyte``.  70,000 x 784, 10 classes.

    Args:
        folder (Path): the folder holding the files.
        strict (bool, optional): unused (see
            :func:`~torch_geometric_stream.datasets.load_dataset`). (default: ``False``)
    """
    return _load_mnist_family("MNIST", folder)


def load_fashion_mnist(folder: Path, strict: bool = False) -> StreamDataset:
    """Fashion-MNIST (Xiao, Rasul & Vollgraf, arXiv:1708.07747, 2017).

    https://github.com/zalandoresearch/fashion-mnist; the same four IDX file
    names as MNIST.  70,000 x 784, 10 classes.

    Args:
        folder (Path): the folder holding the files.
        strict (bool, optional): unused (see
            :func:`~torch_geometric_stream.datasets.load_dataset`). (default: ``False``)
    """
    return _load_mnist_family("FashionMNIST", folder, FASHION_CLASSES)


def _read_npz_array(path: Path) -> np.ndarray:
    """The ``arr_0`` array of a KMNIST ``.npz`` file."""
    try:
        with np.load(path) as archive:
            return archive["arr_0"]
    except (OSError, ValueError, KeyError) as error:
        raise DatasetFormatError(f"{path.name}: not an .npz file with key 'arr_0' "
                                 f"({error})") from None


def load_kmnist(folder: Path, strict: bool = False) -> StreamDataset:
    """Kuzushiji-MNIST (Clanuwat et al., arXiv:1812.01718, 2018).

    https://github.com/rois-codh/kmnist.  Either the four IDX files named as
    MNIST's (gzipped or not), or ``kmnist-{train,test}-{imgs,labels}.npz``
    (key ``arr_0``).  70,000 x 784, 10 classes.

    Args:
        folder (Path): the folder holding the files.
        strict (bool, optional): unused (see
            :func:`~torch_geometric_stream.datasets.load_dataset`). (default: ``False``)
    """
    if all(find_file(folder / f) is not None for pair in IDX_FILES.values() for f in pair):
        return _load_mnist_family("KMNIST", folder, KMNIST_CLASSES)
    splits = []
    for split in ("train", "test"):
        images, labels = (folder / f for f in KMNIST_NPZ_FILES[split])
        for path in (images, labels):
            if not path.is_file():
                raise DatasetNotFoundError(f"missing file {path.name} (and the IDX files)")
        splits.append((_read_npz_array(images), _read_npz_array(labels)))
    return _image_stream("KMNIST", splits, KMNIST_CLASSES)


def _read_cifar_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Images ``(N, 3072)`` uint8 and labels ``(N,)`` of one CIFAR-10 python batch.

    The batches are pickles (the dataset's original format): load only files
    you trust.
    """
    with open_binary(path) as handle:
        try:
            batch = pickle.load(handle, encoding="bytes")
            data = np.asarray(batch[b"data"], dtype=np.uint8)
            labels = np.asarray(batch[b"labels"], dtype=np.int64)
        except (pickle.UnpicklingError, EOFError, KeyError, TypeError, ValueError) as error:
            raise DatasetFormatError(f"{path.name}: not a CIFAR-10 python batch "
                                     f"({type(error).__name__}: {error})") from None
    if data.ndim != 2 or data.shape[1] != 3072:
        raise DatasetFormatError(f"{path.name}: expected data of shape (N, 3072), got {data.shape}")
    return data, labels


def load_cifar10(folder: Path, strict: bool = False) -> StreamDataset:
    """CIFAR-10 (Krizhevsky, tech. report, 2009), https://www.cs.toronto.edu/~kriz/cifar.html.

    The python version: ``data_batch_1`` ... ``data_batch_5`` then
    ``test_batch``, in ``cifar-10-batches-py/`` or directly in the folder.
    60,000 x 3,072 (R, G, B planes of 32 x 32), 10 classes.

    Args:
        folder (Path): the folder holding the files.
        strict (bool, optional): unused (see
            :func:`~torch_geometric_stream.datasets.load_dataset`). (default: ``False``)
    """
    nested = folder / "cifar-10-batches-py"
    base = nested if find_file(nested / CIFAR10_FILES[0]) is not None else folder
    return _image_stream("CIFAR-10", [_read_cifar_batch(base / f) for f in CIFAR10_FILES],
                         CIFAR10_CLASSES)
