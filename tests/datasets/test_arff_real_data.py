"""An ARFF copy of a real stream reads as the stream itself (skipped without the data)."""
from __future__ import annotations

import csv

import numpy as np

from torch_geometric_stream.datasets import load_dataset, load_stream_file


def test_an_arff_copy_of_shopper_is_the_shopper_stream(dataset_root, tmp_path):
    """Shopper's CSV written as ARFF, its columns as the package's loader reads them
    (Weekend as 0/1, Month and VisitorType dropped, Revenue the nominal class): the
    same 12,330 rows, features and classes, bit for bit."""
    root = dataset_root("Shopper")
    with open(root / "Shopper" / "online_shoppers_intention.csv", newline="") as handle:
        header, *rows = list(csv.reader(handle))
    kept = [i for i, name in enumerate(header)
            if name not in ("Month", "VisitorType", "Revenue")]
    weekend, label = header.index("Weekend"), header.index("Revenue")
    lines = ["% Shopper, as the package's loader reads it", "@RELATION 'online shoppers'"]
    lines += [f"@ATTRIBUTE {header[i]} NUMERIC" for i in kept]
    lines += ["@ATTRIBUTE Revenue {FALSE, TRUE}", "@DATA"]
    lines += [",".join([str(int(row[i] == "TRUE")) if i == weekend else row[i] for i in kept]
                       + [row[label]]) for row in rows]
    path = tmp_path / "shopper.arff"
    path.write_text("\r\n".join(lines) + "\r\n")
    arff, stream = load_stream_file(path), load_dataset("Shopper", root)
    assert arff.x.shape == (12330, 15)
    assert np.array_equal(np.asarray(arff.x), np.asarray(stream.x))
    assert np.array_equal(np.asarray(arff.y), np.asarray(stream.y))
    assert arff.class_names == stream.class_names == ["FALSE", "TRUE"]
    assert arff.feature_names == stream.feature_names
