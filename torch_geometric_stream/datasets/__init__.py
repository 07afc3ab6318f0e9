"""Datasets of the SLeDGe paper, read from local files, and a synthetic drifting stream.

Nothing is downloaded: :func:`load_dataset` reads a dataset in its original
format from ``<root>/<folder>/`` (``DATASETS[name].expected_files`` lists what
it needs; any text file may be gzip-compressed as ``<name>.gz``) and returns a
:class:`StreamDataset` in the original order (train split, then test split)
with raw, unscaled features.

>>> ds = load_dataset("mnist", default_data_root())      # doctest: +SKIP
>>> ds.x.shape, ds.num_classes                           # doctest: +SKIP
((70000, 784), 10)

Text datasets (MNDS, WebKB) become 500 tf-idf features, see
:mod:`~torch_geometric_stream.datasets.text` for the layouts read. A stream of
your own comes from a CSV file, an ARFF file or an ``.npz`` archive: :func:`load_stream_file`;
:class:`CSVRowStream` reads a CSV row by row, with its classes given.
"""
from torch_geometric_stream.datasets.csv_stream import CSVRowStream
from torch_geometric_stream.datasets.dataset import StreamDataset, encode_labels
from torch_geometric_stream.datasets.errors import (DatasetError, DatasetFormatError,
                                                    DatasetNotFoundError)
from torch_geometric_stream.datasets.io import find_file, open_text, read_idx
from torch_geometric_stream.datasets.registry import (DATASETS, DatasetInfo, default_data_root,
                                                      list_datasets, load_dataset,
                                                      resolve_dataset_name)
from torch_geometric_stream.datasets.river_adapter import load_river_dataset
from torch_geometric_stream.datasets.stream_file import (STREAM_FILE_SUFFIXES, is_stream_file,
                                                         load_stream_file, stream_file_digest)
from torch_geometric_stream.datasets.synthetic import SyntheticStream, make_synthetic_dataset
from torch_geometric_stream.datasets.text import tfidf

__all__ = ["StreamDataset", "DatasetInfo", "DATASETS", "load_dataset", "resolve_dataset_name",
           "list_datasets", "default_data_root", "DatasetError", "DatasetNotFoundError",
           "DatasetFormatError", "open_text", "find_file", "read_idx", "encode_labels", "tfidf",
           "load_river_dataset", "SyntheticStream", "make_synthetic_dataset",
           "STREAM_FILE_SUFFIXES", "is_stream_file", "load_stream_file",
           "stream_file_digest", "CSVRowStream"]
