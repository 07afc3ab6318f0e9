import pytest

from torch_geometric_stream.datasets import (DATASETS, DatasetFormatError, DatasetNotFoundError,
                                             list_datasets, load_dataset, resolve_dataset_name)

CANONICAL = ["MNDS", "Shopper", "WebKB", "MNIST", "FashionMNIST", "KMNIST", "CIFAR-10",
             "Shuttle", "GSAD", "SDD", "HAR", "OD"]


def test_registry_has_the_twelve_datasets():
    assert sorted(list_datasets()) == sorted(CANONICAL)
    assert {name: (info.paper_rows, info.paper_features, info.paper_classes)
            for name, info in DATASETS.items()}["WebKB"] == (8282, 500, 7)
    assert sum(info.paper_rows for info in DATASETS.values()) == 462807
    assert all(info.url.startswith("http") and info.expected_files for info in DATASETS.values())


@pytest.mark.parametrize("alias, canonical", [
    ("mnist", "MNIST"), ("cifar10", "CIFAR-10"), ("CIFAR_10", "CIFAR-10"),
    ("fashion-mnist", "FashionMNIST"), ("F.MNIST", "FashionMNIST"), ("kmnist", "KMNIST"),
    ("webkb", "WebKB"), ("MN-DS", "MNDS"), ("gsad", "GSAD"), ("occupancy", "OD"),
    ("shuttle", "Shuttle"), ("Shopper", "Shopper"), ("har", "HAR"), ("sdd", "SDD"),
])
def test_resolve_dataset_name(alias, canonical):
    assert resolve_dataset_name(alias) == canonical


def test_unknown_name_lists_valid_names(tmp_path):
    # before: "Unknown dataset ...", unlike every other error's start
    with pytest.raises(ValueError, match="^unknown dataset 'imagenet'; valid names: MNDS, "
                                         "Shopper, WebKB, "):
        load_dataset("imagenet", tmp_path)


@pytest.mark.parametrize("name", CANONICAL)
def test_missing_folder_error_names_files_folder_and_url(tmp_path, name):
    info = DATASETS[name]
    with pytest.raises(DatasetNotFoundError) as caught:
        load_dataset(name, tmp_path)
    message = str(caught.value)
    assert str(tmp_path / info.folder) in message and info.url in message
    assert all(entry in message for entry in info.expected_files)
    assert isinstance(caught.value, FileNotFoundError)


def test_missing_folder_error_lists_the_expected_files_in_lower_case_lines(tmp_path):
    # before: "Dataset folder ... does not exist", "Dataset 'Shuttle': ...", "Expected
    # files ...", "The dataset is published at ...", unlike every other error's start
    url = DATASETS["Shuttle"].url
    with pytest.raises(DatasetNotFoundError) as caught:
        load_dataset("Shuttle", tmp_path)
    assert str(caught.value) == (
        f"dataset folder {tmp_path / 'Shuttle'} does not exist\n"
        f"dataset 'Shuttle': searched folder {tmp_path / 'Shuttle'}\n"
        f"expected files (each text file may also be gzip-compressed as <name>.gz):\n"
        f"  - shuttle.trn\n  - shuttle.tst\n"
        f"the dataset is published at {url}")


@pytest.mark.parametrize("name", CANONICAL)
def test_empty_folder_error_names_files_folder_and_url(tmp_path, name):
    info = DATASETS[name]
    (tmp_path / info.folder).mkdir()
    with pytest.raises(DatasetNotFoundError) as caught:
        load_dataset(name, tmp_path)
    message = str(caught.value)
    assert str(tmp_path / info.folder) in message and info.url in message
    assert info.expected_files[0] in message
    assert message[0].islower(), message  # the loader's own line, as every other error


def test_format_error_gets_context(tmp_path):
    (tmp_path / "Shuttle").mkdir()
    (tmp_path / "Shuttle" / "shuttle.trn").write_text("1 2 3\n")
    (tmp_path / "Shuttle" / "shuttle.tst").write_text("1 2 3\n")
    with pytest.raises(DatasetFormatError, match="(?s)shuttle.trn: expected 10 columns.*"
                                                 "statlog\\+shuttle") as caught:
        load_dataset("shuttle", tmp_path)
    assert isinstance(caught.value, ValueError)


def test_folder_name_is_matched_ignoring_case(tmp_path):
    folder = tmp_path / "shuttle"
    folder.mkdir()
    row = " ".join(["1"] * 9) + " 4\n"
    (folder / "shuttle.trn").write_text(row)
    (folder / "shuttle.tst").write_text(row)
    ds = load_dataset("Shuttle", tmp_path)
    assert ds.num_samples == 2 and "statlog" in ds.source
