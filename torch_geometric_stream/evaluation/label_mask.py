"""Which stream positions reveal their label, and how large the memories are.

The paper labels the first occurrence of every class, then random other
positions, until a fixed label budget is reached (:func:`paper_label_mask`).
:func:`authors_label_mask` draws those random positions exactly as the
authors' code does, so a seed gives the positions of the paper's runs.
:func:`bernoulli_label_mask` is the usual alternative of the stream literature
(every sample independently labeled with probability :math:`p`), and
:func:`capymoa_label_mask` draws it exactly as CapyMOA's
``prequential_ssl_evaluation`` does, so a seed gives the positions CapyMOA's
evaluator labels with that ``random_seed``. Those two label each position on its
own draw, so they can also be drawn as a stream goes, for a stream of unknown length
(:class:`PositionMask`).
"""
from __future__ import annotations

import math
from typing import Any, Tuple

import numpy as np
import torch

from torch_geometric_stream.validation import check_positive_int, check_seed, check_unit_interval

__all__ = ["LABEL_MASKS", "POSITION_MASKS", "PositionMask", "make_label_mask",
           "paper_label_mask", "authors_label_mask", "bernoulli_label_mask",
           "capymoa_label_mask", "paper_memory_sizes"]

#: Names of the label masks :func:`make_label_mask` builds.
LABEL_MASKS = ("paper", "authors", "bernoulli", "capymoa")
#: The label masks that draw each position on its own, without the stream's length or
#: classes: :class:`PositionMask` draws them as the stream goes.
POSITION_MASKS = ("bernoulli", "capymoa")

_FLOOR_TOLERANCE = 1e-9


def paper_label_mask(labels: Any, label_ratio: float, seed: int) -> np.ndarray:
    r"""The paper's label mask: first occurrence of every class, then random positions.

    The total number of labels is :math:`\max(c, \lfloor r \cdot T \rfloor)`, with
    :math:`c` the number of classes present in ``labels``.  The floor is taken
    with a :math:`10^{-9}` tolerance so that e.g. :math:`0.29 \cdot 100` gives 29
    rather than 28 from floating-point rounding.

    Args:
        labels (Tensor or array-like): the class of every stream position, shape :math:`(T,)`.
        label_ratio (float): :math:`r \in (0, 1]`.
        seed (int): seed of :func:`numpy.random.default_rng` that draws the extra positions.

    Returns:
        Boolean mask of shape :math:`(T,)`, ``True`` = labeled.

    Raises:
        ValueError: for empty or non-1-D ``labels`` or a ratio outside :math:`(0, 1]`.
    """
    seed = check_seed(seed)
    mask, others, extra = _first_occurrences(labels, label_ratio, _FLOOR_TOLERANCE)
    rng = np.random.default_rng(seed)
    mask[rng.choice(others, size=extra, replace=False)] = True
    return mask


def authors_label_mask(labels: Any, label_ratio: float, seed: int) -> np.ndarray:
    r"""The paper's label mask with the random positions the authors' code draws.

    Same rule as :func:`paper_label_mask` (first occurrence of every class,
    then random positions up to :math:`\max(c, \lfloor r \cdot T \rfloor)`
    labels), but the positions come from :func:`torch.randperm` over the
    unlabeled positions, with a generator seeded with ``seed`` that has made
    one 64-bit draw before (in the authors' script, creating the data loader's
    iterator). So on the same stream (same samples, same order) ``seed`` gives
    the positions of the authors' run with that seed, as far as
    :func:`torch.randperm` draws the same permutation in this torch version as
    in theirs. :math:`\lfloor r \cdot T \rfloor` is taken
    without tolerance, as their code does.

    Args:
        labels (Tensor or array-like): the class of every stream position, shape :math:`(T,)`.
        label_ratio (float): :math:`r \in (0, 1]`.
        seed (int): the authors' run seed (0, 2000, 4000, 6000 or 8000 in the paper).

    Returns:
        Boolean mask of shape :math:`(T,)`, ``True`` = labeled.

    Raises:
        ValueError: for empty or non-1-D ``labels`` or a ratio outside :math:`(0, 1]`.
    """
    mask, others, extra = _first_occurrences(labels, label_ratio, 0.0)
    generator = torch.Generator().manual_seed(check_seed(seed))
    torch.empty((), dtype=torch.int64).random_(generator=generator)  # the loader's draw
    mask[others[torch.randperm(others.size, generator=generator)[:extra].numpy()]] = True
    return mask


def _first_occurrences(labels: Any, label_ratio: float,
                       tolerance: float) -> Tuple[np.ndarray, np.ndarray, int]:
    """The mask with every class's first occurrence labeled :math:`(T,)`, the
    other positions, and how many of them the label budget still draws."""
    labels = _stream_labels(labels)
    if labels.size == 0:
        raise ValueError("labels is empty")
    ratio = check_unit_interval(label_ratio, "label_ratio")
    _, first_positions = np.unique(labels, return_index=True)
    budget = max(first_positions.size, math.floor(ratio * labels.size + tolerance))
    mask = np.zeros(labels.size, dtype=bool)
    mask[first_positions] = True
    return mask, np.flatnonzero(~mask), budget - first_positions.size


def bernoulli_label_mask(num_samples: int, label_probability: float, seed: int) -> np.ndarray:
    r"""Label every position independently with probability :math:`p`.

    Args:
        num_samples (int): :math:`T`.
        label_probability (float): :math:`p \in (0, 1]`.
        seed (int): seed of :func:`numpy.random.default_rng`.

    Returns:
        Boolean mask of shape :math:`(T,)`, ``True`` = labeled.
    """
    num_samples = check_positive_int(num_samples, "num_samples")
    probability = check_unit_interval(label_probability, "label_probability")
    return _position_generator("bernoulli", seed).random(num_samples) < probability


def capymoa_label_mask(num_samples: int, label_probability: float, seed: int) -> np.ndarray:
    r"""The label mask of CapyMOA's ``prequential_ssl_evaluation`` (``optimise=False``).

    CapyMOA seeds a Mersenne Twister with ``random_seed`` the legacy way (as
    :class:`numpy.random.RandomState` does), draws one float64 per instance
    and reveals the label when it is below :math:`p`; it does not label the
    first occurrence of each class. This draws the same numbers, so the
    package's runner labels the same positions as CapyMOA's evaluator.

    Args:
        num_samples (int): :math:`T`.
        label_probability (float): :math:`p \in (0, 1]`.
        seed (int): CapyMOA's ``random_seed``, :math:`0 \leq` seed :math:`< 2^{32}`.

    Returns:
        Boolean mask of shape :math:`(T,)`, ``True`` = labeled.

    Raises:
        ValueError: for a non-positive ``num_samples``, a probability outside
            :math:`(0, 1]` or a seed outside :math:`[0, 2^{32})`.
    """
    num_samples = check_positive_int(num_samples, "num_samples")
    probability = check_unit_interval(label_probability, "label_probability")
    return _position_generator("capymoa", seed).random(num_samples) < probability


def _position_generator(kind: str, seed: int) -> Any:
    """The generator of the position mask ``kind`` (:data:`POSITION_MASKS`) seeded
    with ``seed``: its ``random(n)`` draws the next ``n`` float64 of the mask's
    sequence (:func:`numpy.random.default_rng` for ``"bernoulli"``; a legacy
    Mersenne Twister, as :class:`numpy.random.RandomState`, for ``"capymoa"``).

    Raises:
        ValueError: a seed outside :math:`[0, 2^{64})`, or :math:`[0, 2^{32})` for
            ``"capymoa"``.
    """
    seed = check_seed(seed)
    if kind == "bernoulli":
        return np.random.default_rng(seed)
    if seed >= 2 ** 32:
        raise ValueError(f"seed must be < 2**32 for CapyMOA's generator, got {seed}")
    return np.random.RandomState(seed)


class PositionMask:
    r"""The label mask ``kind`` (:data:`POSITION_MASKS`) drawn as a stream goes,
    in blocks of ``block`` positions: a function ``position -> bool`` for
    :func:`~torch_geometric_stream.evaluation.prequential`, for a stream whose
    length is not known (read as it comes, endless). Position :math:`t` is
    labeled exactly where :func:`make_label_mask` over a stream of more than
    :math:`t` samples labels it: both draw the generator's one sequence.

    Positions must be asked for in increasing order (a run resumed at
    ``start`` asks from there: the draws before are made and dropped); memory
    is one block, whatever the stream's length.

    Args:
        kind (str): ``"bernoulli"`` or ``"capymoa"``.
        label_ratio (float): :math:`p \in (0, 1]`.
        seed (int): as the mask's function takes it.
        block (int, optional): positions drawn at a time. (default: 4096)

    Raises:
        ValueError: a kind that needs the whole stream (``"paper"``,
            ``"authors"``), or a ratio or seed out of range; at a call, a position
            below 0 or before one asked for already.
        TypeError: at a call, a position that is not an integer.
    """

    def __init__(self, kind: str, label_ratio: float, seed: int, block: int = 4096) -> None:
        if kind not in POSITION_MASKS:
            raise ValueError(f"label mask {kind!r} needs the whole stream; "
                             f"{', '.join(POSITION_MASKS)} can be drawn as it goes")
        self.probability = check_unit_interval(label_ratio, "label_ratio")
        self.block = check_positive_int(block, "block")
        self._generator = _position_generator(kind, seed)
        self._drawn = np.zeros(0, dtype=bool)  # the positions [_first, _first + len)
        self._first = 0
        self._last = -1  # the last position asked for

    def __call__(self, position: int) -> bool:
        r"""Whether ``position`` (an ``int`` :math:`\geq 0`, not before one asked
        for already) is labeled; a bad position changes nothing."""
        position = check_positive_int(position, "position", minimum=0)
        if position < self._last:
            raise ValueError(f"position {position} comes before position {self._last}, "
                             f"asked for already: the mask is drawn in stream order")
        self._last = position
        while position >= self._first + self._drawn.size:
            self._first += self._drawn.size
            self._drawn = self._generator.random(self.block) < self.probability
        return bool(self._drawn[position - self._first])


def make_label_mask(kind: str, labels: Any, label_ratio: float, seed: int) -> np.ndarray:
    r"""The label mask named ``kind`` for a stream with classes ``labels``.

    Args:
        kind (str): ``"paper"`` (:func:`paper_label_mask`), ``"authors"``
            (:func:`authors_label_mask`), ``"bernoulli"``
            (:func:`bernoulli_label_mask` with probability ``label_ratio``) or
            ``"capymoa"`` (:func:`capymoa_label_mask`, likewise).
        labels (Tensor or array-like): the class of every stream position, shape :math:`(T,)`.
        label_ratio (float): :math:`r \in (0, 1]`.
        seed (int): seed of the draw.

    Returns:
        Boolean mask of shape :math:`(T,)`, ``True`` = labeled.

    Raises:
        ValueError: for an unknown ``kind``, or what the named mask raises.
    """
    if kind == "paper":
        return paper_label_mask(labels, label_ratio, seed)
    if kind == "authors":
        return authors_label_mask(labels, label_ratio, seed)
    if kind == "bernoulli":
        return bernoulli_label_mask(_stream_labels(labels).size, label_ratio, seed)
    if kind == "capymoa":
        return capymoa_label_mask(_stream_labels(labels).size, label_ratio, seed)
    raise ValueError(f"unknown label mask {kind!r}; choose from {', '.join(LABEL_MASKS)}")


def _stream_labels(labels: Any) -> np.ndarray:
    """``labels`` as an array :math:`(T,)`, one class per stream position."""
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"labels must be 1-D (T,), got shape {labels.shape}")
    return labels


def paper_memory_sizes(num_classes: int, label_ratio: float, memory_size: int = 1000, *,
                       slots_per_class: int = 1) -> Tuple[int, int]:
    r"""Labeled and unlabeled memory sizes :math:`(L, U)` of the paper's runs.

    The paper uses :math:`L = 100` at a 1 % label ratio and
    :math:`L = \max(c, 10)` at 0.1 %, with :math:`U = M - L`.  Other ratios are
    mapped to the nearer of the two settings: :math:`L = \max(c, 10)` below
    0.5 %, :math:`L = 100` from 0.5 % on.  Below 0.5 %, ``slots_per_class``
    :math:`n` raises :math:`L` to :math:`\min(n c, 100)`: with :math:`n = 1` (the
    paper) a stream of 6 classes or more keeps one labeled slot per class (the
    memory holds :math:`\lfloor L / c \rfloor` per class), and all labels of a
    class merge into one prototype.  :math:`L` is then capped at
    :math:`M - 1` (so :math:`U \geq 1`) and raised to at least :math:`c` (one
    labeled slot per class).

    Args:
        num_classes (int): :math:`c`.
        label_ratio (float): :math:`r \in (0, 1]`.
        memory_size (int, optional): :math:`M = L + U` (default 1000).
        slots_per_class (int, optional): :math:`n \geq 1`, labeled slots per class below 0.5 %
            labels, up to 100 slots in all (default 1: the paper's rule).

    Returns:
        ``(L, U)`` with :math:`c \leq L < M` and :math:`L + U = M`.

    Raises:
        ValueError: if :math:`M < c + 1`, or an argument is out of its range.

    Example:
        >>> paper_memory_sizes(7, 0.001), paper_memory_sizes(7, 0.001, slots_per_class=10)
        ((10, 990), (70, 930))
    """
    num_classes = check_positive_int(num_classes, "num_classes")
    ratio = check_unit_interval(label_ratio, "label_ratio")
    memory_size = check_positive_int(memory_size, "memory_size")
    slots_per_class = check_positive_int(slots_per_class, "slots_per_class")
    if memory_size < num_classes + 1:
        raise ValueError(f"memory_size must be >= num_classes + 1 = {num_classes + 1} "
                         f"(one labeled slot per class and one unlabeled slot), got {memory_size}")
    if ratio < 0.005:
        paper_labeled = max(num_classes, 10, min(slots_per_class * num_classes, 100))
    else:
        paper_labeled = 100
    labeled = max(num_classes, min(paper_labeled, memory_size - 1))
    return labeled, memory_size - labeled
