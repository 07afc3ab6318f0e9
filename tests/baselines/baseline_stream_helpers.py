"""Shared stream generators for the baseline tests."""
import numpy as np


def gaussian_stream(n=2000, num_classes=3, dim=4, label_ratio=0.05, spread=0.5,
                    distance=5.0, seed=0):
    """Well-separated Gaussian blobs (centres ``distance * e_k``) in random order.

    Returns x (float32, (n, dim)), the true labels y and the observed labels
    (``-1`` except for ``label_ratio`` of the rows and each class's first row).
    """
    assert dim >= num_classes
    rng = np.random.default_rng(seed)
    centres = np.eye(num_classes, dim) * distance
    y = rng.integers(num_classes, size=n)
    x = (centres[y] + spread * rng.normal(size=(n, dim))).astype(np.float32)
    observed = np.full(n, -1)
    labelled = rng.random(n) < label_ratio
    for cls in range(num_classes):                       # first occurrence labelled
        labelled[np.flatnonzero(y == cls)[0]] = True
    observed[labelled] = y[labelled]
    return x, y, observed


def prequential_accuracy(model, x, y, observed):
    correct = 0
    for i in range(len(x)):
        correct += int(model.predict(x[i]).item() == y[i])
        model.learn(x[i], int(observed[i]))
    return correct / len(x)

