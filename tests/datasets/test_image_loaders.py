import pickle

import numpy as np
import pytest

from torch_geometric_stream.datasets import DatasetFormatError, DatasetNotFoundError, load_dataset

IDX_NAMES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
             "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}


def idx_bytes(array: np.ndarray) -> bytes:
    header = bytes([0, 0, 0x08, array.ndim]) + np.asarray(array.shape, ">i4").tobytes()
    return header + array.astype(np.uint8).tobytes()


def toy_split(n: int, offset: int) -> tuple[np.ndarray, np.ndarray]:
    images = (np.arange(n * 28 * 28).reshape(n, 28, 28) + offset) % 256
    return images.astype(np.uint8), (np.arange(n) + offset) % 10


def write_plain(path, data: bytes):
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)


def write_idx_dataset(folder, write, sizes=(3, 2)):
    splits = {"train": toy_split(sizes[0], 0), "test": toy_split(sizes[1], 7)}
    for split, (images, labels) in splits.items():
        image_file, label_file = IDX_NAMES[split]
        write(folder / image_file, idx_bytes(images))
        write(folder / label_file, idx_bytes(labels))
    return splits


@pytest.mark.parametrize("name, first_class", [("MNIST", "0"), ("FashionMNIST", "T-shirt/top"),
                                               ("KMNIST", "o")])
def test_idx_datasets_train_then_test(tmp_path, write, name, first_class):
    splits = write_idx_dataset(tmp_path / name, write)
    ds = load_dataset(name, tmp_path)
    expected = np.concatenate([splits["train"][0], splits["test"][0]]).reshape(5, 784)
    np.testing.assert_array_equal(ds.x, expected.astype(np.float32))
    assert ds.x.dtype == np.float32 and ds.x.max() == 255.0
    assert ds.value_range == (0.0, 255.0)  # pixels: the "auto" scaling uses it
    assert ds.y.tolist() == [0, 1, 2, 3, 4]          # original labels 0, 1, 2, 7, 8
    assert ds.class_names[0] == first_class and ds.num_classes == 5


def test_idx_count_mismatch(tmp_path):
    write_idx_dataset(tmp_path / "MNIST", write_plain)
    (tmp_path / "MNIST" / "t10k-labels-idx1-ubyte").write_bytes(idx_bytes(np.zeros(3)))
    with pytest.raises(DatasetFormatError, match="2 images but labels of shape \\(3,\\)"):
        load_dataset("mnist", tmp_path)


def test_idx_wrong_rank(tmp_path):
    write_idx_dataset(tmp_path / "MNIST", write_plain)
    (tmp_path / "MNIST" / "train-images-idx3-ubyte").write_bytes(idx_bytes(np.zeros((3, 784))))
    with pytest.raises(DatasetFormatError, match="expected 3-d images"):
        load_dataset("mnist", tmp_path)


def test_kmnist_npz(tmp_path):
    folder = tmp_path / "KMNIST"
    folder.mkdir()
    splits = {"train": toy_split(3, 0), "test": toy_split(2, 3)}
    for split, (images, labels) in splits.items():
        np.savez_compressed(folder / f"kmnist-{split}-imgs.npz", images)
        np.savez_compressed(folder / f"kmnist-{split}-labels.npz", labels)
    ds = load_dataset("kmnist", tmp_path)
    assert ds.x.shape == (5, 784) and ds.y.tolist() == [0, 1, 2, 3, 4]
    assert ds.class_names == ["o", "ki", "su", "tsu", "na"]
    np.testing.assert_array_equal(ds.x[3], splits["test"][0][0].ravel())
    (folder / "kmnist-test-labels.npz").unlink()
    with pytest.raises(DatasetNotFoundError, match="kmnist-test-labels.npz"):
        load_dataset("kmnist", tmp_path)
    (folder / "kmnist-test-labels.npz").write_bytes(b"garbage")
    with pytest.raises(DatasetFormatError, match="arr_0"):
        load_dataset("kmnist", tmp_path)


CIFAR_FILES = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]


@pytest.mark.parametrize("nested", [True, False])
def test_cifar10(tmp_path, write, nested):
    folder = tmp_path / "CIFAR-10" / ("cifar-10-batches-py" if nested else "")
    for b, name in enumerate(CIFAR_FILES):
        batch = {b"batch_label": name.encode(), b"labels": [b, 9 - b],
                 b"data": np.full((2, 3072), b * 10, dtype=np.uint8), b"filenames": [b"a", b"b"]}
        write(folder / name, pickle.dumps(batch, protocol=2))
    ds = load_dataset("cifar10", tmp_path)
    assert ds.x.shape == (12, 3072) and ds.x[11, 0] == 50.0
    assert ds.y.tolist()[:4] == [0, 9, 1, 8] and ds.class_names[0] == "airplane"


def test_cifar10_data_of_another_shape_is_refused(tmp_path):
    folder = tmp_path / "CIFAR-10"
    folder.mkdir()
    for name in CIFAR_FILES:  # 32 x 32 of one channel, not 3
        (folder / name).write_bytes(pickle.dumps({b"labels": [0, 1],
                                                  b"data": np.zeros((2, 1024), np.uint8)}))
    with pytest.raises(DatasetFormatError,
                       match=r"^data_batch_1: expected data of shape \(N, 3072\), got "
                             r"\(2, 1024\)\n"):
        load_dataset("CIFAR-10", tmp_path)


def test_cifar10_bad_pickle(tmp_path):
    folder = tmp_path / "CIFAR-10"
    folder.mkdir()
    for name in CIFAR_FILES:
        (folder / name).write_bytes(pickle.dumps({b"labels": [0]}))
    with pytest.raises(DatasetFormatError, match="data_batch_1: not a CIFAR-10 python batch"):
        load_dataset("CIFAR-10", tmp_path)
