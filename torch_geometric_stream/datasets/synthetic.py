"""A synthetic Gaussian stream with optional concept drift and class-incremental arrival.

Each class ``j`` of concept ``k`` has a centre drawn once from
:math:`\\mathcal{N}(0, \\frac{s^2}{d} I_d)` (``s = separation``, so a centre's
norm is about ``s``); a row of class ``y`` at time ``t`` is its current
centre plus :math:`\\mathcal{N}(0, \\sigma^2 I_d)` noise (``σ = noise``).

- ``drift="sudden"``: at every drift point all centres jump to the next
  concept's.
- ``drift="gradual"``: after a drift point the centres move linearly from the
  old concept's to the new one's over ``drift_width`` rows.
- ``class_incremental=True``: class ``j`` appears at ``t = floor(j T / c)``;
  labels are uniform over the classes that have appeared.

Rows are generated lazily in blocks of :attr:`SyntheticStream.CHUNK_SIZE`,
each from its own random stream keyed by ``(seed, block)``, so memory is
O(block) for any length, iterating twice yields identical data and the data
depend only on the constructor's arguments.
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Iterator, Sequence

import numpy as np

from torch_geometric_stream.datasets.dataset import StreamDataset
from torch_geometric_stream.validation import (check_bool, check_choice, check_nonnegative,
                                               check_positive_int, check_seed)

__all__ = ["SyntheticStream", "make_synthetic_dataset"]

DRIFTS = ("none", "sudden", "gradual")


class SyntheticStream:
    r"""Lazily generated, seeded Gaussian stream with drift.

    Args:
        num_samples (int): stream length :math:`T`.
        num_features (int, optional): :math:`d` (default 16).
        num_classes (int, optional): :math:`c` (default 4).
        drift (str, optional): ``"none"``, ``"sudden"`` or ``"gradual"``. (default: :obj:`"none"`)
        drift_points (Sequence[float or int], optional): where concepts change, each a fraction of
            :math:`T` in ``(0, 1)`` (float) or a row index (int); ignored for ``"none"``.
            (default: :obj:`(0.5,)`)
        drift_width (float or int, optional): length of a gradual transition, a fraction of
            :math:`T` (float) or rows (int); must fit before the next drift point.
            (default: :obj:`0.1`)
        class_incremental (bool, optional): classes appear one after the other over time.
            (default: :obj:`False`)
        separation (float, optional): scale of the class centres. (default: :obj:`4.0`)
        noise (float, optional): standard deviation of the per-feature Gaussian noise.
            (default: :obj:`1.0`)
        seed (int, optional): seed of every random draw. (default: :obj:`0`)

    Shapes:
        - iteration: ``(x_row (d,) float32, y int)``
        - :meth:`iter_chunks`: ``(x (n, d) float32, y (n,) int64)``, ``n <= CHUNK_SIZE``
    """

    CHUNK_SIZE = 4096

    def __init__(self, num_samples: int, num_features: int = 16, num_classes: int = 4, *,
                 drift: str = "none", drift_points: Sequence[float | int] = (0.5,),
                 drift_width: float | int = 0.1, class_incremental: bool = False,
                 separation: float = 4.0, noise: float = 1.0, seed: int = 0) -> None:
        self.num_samples = check_positive_int(num_samples, "num_samples")
        self.num_features = check_positive_int(num_features, "num_features")
        self.num_classes = check_positive_int(num_classes, "num_classes")
        check_choice(drift, DRIFTS, "drift")
        class_incremental = check_bool(class_incremental, "class_incremental")
        separation = check_nonnegative(separation, "separation")
        noise = check_nonnegative(noise, "noise")
        self.drift, self.seed = drift, check_seed(seed)
        self.class_incremental, self.separation, self.noise = class_incremental, separation, noise
        self.drift_points = self._positions(drift_points) if drift != "none" else np.zeros(0, int)
        self.drift_width = self._width(drift_width) if drift == "gradual" else 0
        self.name = f"synthetic-{drift}" + ("-class-incremental" if class_incremental else "")
        rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(0,)))
        scale = separation / math.sqrt(self.num_features)
        shape = (len(self.drift_points) + 1, self.num_classes, self.num_features)
        self.centres = rng.normal(0.0, scale, size=shape)  # (concepts, c, d)
        self.class_starts = (np.arange(self.num_classes) * self.num_samples // self.num_classes
                             if class_incremental else np.zeros(self.num_classes, dtype=np.int64))

    def _positions(self, points: Sequence[float | int]) -> np.ndarray:
        rows: list[int] = []
        for point in points:
            if isinstance(point, bool) or not isinstance(point, numbers.Real):
                raise TypeError(f"a drift point must be a row index (int) or a fraction "
                                f"(float), got {point!r}")
            if isinstance(point, numbers.Integral):
                rows.append(int(point))
            elif 0.0 < point < 1.0:
                rows.append(int(round(point * self.num_samples)))
            else:
                raise ValueError(f"a float drift point must be a fraction in (0, 1), got {point}")
        positions = np.asarray(rows, dtype=np.int64)
        if (len(positions) == 0 or np.any(np.diff(positions) <= 0) or positions[0] <= 0
                or positions[-1] >= self.num_samples):
            raise ValueError(f"drift points must be increasing row indices in (0, "
                             f"{self.num_samples}), got {positions.tolist()}")
        return positions

    def _width(self, width: float | int) -> int:
        integral = isinstance(width, (int, np.integer))
        rows = int(width) if integral else int(round(width * self.num_samples))
        gaps = np.diff(np.append(self.drift_points, self.num_samples))
        if rows < 1 or rows > gaps.min():
            raise ValueError(f"drift_width must cover 1..{int(gaps.min())} rows (the shortest "
                             f"gap after a drift point), got {rows}")
        return rows

    def __len__(self) -> int:
        return self.num_samples

    def __repr__(self) -> str:
        return (f"SyntheticStream(num_samples={self.num_samples}, num_features="
                f"{self.num_features}, num_classes={self.num_classes}, drift={self.drift!r}, "
                f"class_incremental={self.class_incremental}, seed={self.seed})")

    def class_centres(self, t: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Centre of class ``y[i]`` at time ``t[i]``, shape ``(n, d)``.

        Args:
            t (numpy.ndarray): stream positions :math:`(n,)`.
            y (numpy.ndarray): class ids :math:`(n,)`.
        """
        t, y = np.asarray(t, dtype=np.int64), np.asarray(y, dtype=np.int64)
        concept = np.searchsorted(self.drift_points, t, side="right")
        previous = np.maximum(concept - 1, 0)
        if self.drift_width:
            since = t - self.drift_points[previous]
            alpha = np.where(concept > 0, np.clip(since / self.drift_width, 0.0, 1.0), 1.0)
        else:
            alpha = np.ones(len(t))
        alpha = alpha[:, None]
        return (1.0 - alpha) * self.centres[previous, y] + alpha * self.centres[concept, y]

    def _chunk(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        start = index * self.CHUNK_SIZE
        t = np.arange(start, min(start + self.CHUNK_SIZE, self.num_samples))
        rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(1, index)))
        available = np.searchsorted(self.class_starts, t, side="right")
        y = np.minimum((rng.random(len(t)) * available).astype(np.int64), available - 1)
        x = self.class_centres(t, y) + rng.normal(0.0, self.noise, (len(t), self.num_features))
        return x.astype(np.float32), y

    def iter_chunks(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Blocks of consecutive rows, in stream order."""
        for index in range(-(-self.num_samples // self.CHUNK_SIZE)):
            yield self._chunk(index)

    def __iter__(self) -> Iterator[tuple[np.ndarray, int]]:
        for x, y in self.iter_chunks():
            for row, label in zip(x, y):
                yield row, int(label)

    def take(self, n: int) -> StreamDataset:
        """The first ``min(n, T)`` rows as a :class:`StreamDataset`.

        Args:
            n (int): the number of rows, non-negative.

        Raises:
            ValueError: if ``n`` is negative.
        """
        if n < 0:
            raise ValueError(f"n must be non-negative, got {n}")
        n = min(n, self.num_samples)
        xs, ys = [np.zeros((0, self.num_features), np.float32)], [np.zeros(0, np.int64)]
        for index in range(-(-n // self.CHUNK_SIZE)):
            x, y = self._chunk(index)
            xs.append(x)
            ys.append(y)
        return StreamDataset(self.name, np.concatenate(xs)[:n], np.concatenate(ys)[:n],
                             self.num_classes, [str(j) for j in range(self.num_classes)],
                             source="torch_geometric_stream.datasets.SyntheticStream",
                             notes=repr(self))


def make_synthetic_dataset(num_samples: int, **kwargs: Any) -> StreamDataset:
    """Materialize a whole :class:`SyntheticStream` (keyword arguments as its constructor).

    Args:
        num_samples (int): stream length :math:`T`.
        **kwargs (optional): the other arguments of :class:`SyntheticStream`.
    """
    return SyntheticStream(num_samples, **kwargs).take(num_samples)
