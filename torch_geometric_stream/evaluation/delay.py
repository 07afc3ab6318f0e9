r"""Labels that reach the learner some samples after their own sample.

In a deployed stream the label of a sample often comes later than the sample:
a fraud is confirmed days after the payment, a purchase ends a session some
clicks after it started. :func:`~torch_geometric_stream.evaluation.prequential`
with ``label_delay=d`` evaluates a learner so: every sample is predicted as it
arrives and learned then without label (``learn_on_arrival``, the default: the
row is there, only its label is not); a labeled one's label is held back and
learned, with its row, right after the sample :math:`d` positions later was
predicted and learned. The :math:`d` samples in between are predicted without
it. That is the semi-supervised protocol of MOA's
``EvaluateInterleavedTestThenTrainSSLDelayed -k d`` and CapyMOA's
``prequential_ssl_evaluation(..., delay_length=d + 1)`` (whose delay counts the
sample itself; the Python loop it runs for a Python learner), for :math:`d \geq 1`.

With ``learn_on_arrival=False`` a labeled sample's row waits for its label and
is learned once, with it: the supervised protocol of River's
``progressive_val_score(..., delay=d + 1)`` and MOA's
``EvaluatePrequentialDelayed -k d + 1``. Either way, :math:`d = 0` is the usual
test-then-train run, call for call.

:class:`DelayedLabels` is the queue of labels on their way: at most :math:`d +
1` of them (one per position of the last :math:`d + 1`), so its memory does not
grow with the stream.
"""
from __future__ import annotations

import copy
from collections import deque
from typing import Any, Dict, Iterator, List, Mapping, Optional, Tuple

import numpy as np
from torch import Tensor

from torch_geometric_stream.evaluation.columns import check_int64
from torch_geometric_stream.validation import (check_bool, check_has_values, check_positive_int,
                                               ragged_refused)

__all__ = ["DelayedLabels", "check_label_delay"]


def check_label_delay(delay: Any) -> int:
    """``delay`` as an ``int`` if it is an integer >= 0 (a bool is refused).

    Args:
        delay (Any): the value to check.

    Raises:
        TypeError, ValueError: otherwise, naming ``label_delay``.
    """
    return check_positive_int(delay, "label_delay", minimum=0)


def _held(row: Any) -> Any:
    """A copy of ``row``, of its type, that later changes to the caller's object do
    not reach: a stream may hand out one buffer refilled for every sample."""
    if isinstance(row, Tensor):
        return row.detach().clone()
    if isinstance(row, np.ndarray):
        return row.copy()
    return copy.deepcopy(row)  # e.g. a list or River's dict


class DelayedLabels:
    r"""The labeled samples whose label has not reached the learner yet, oldest first.

    Args:
        delay (int): :math:`d`, the samples predicted between a sample and the
            learning of its label (an integer >= 1; ``0`` needs no queue).
        learn_on_arrival (bool, optional): whether the held samples were learned without label
            as they arrived (kept with the queue, so that a run goes on as it
            began; the queue itself learns nothing). (default: :obj:`True`)

    Raises:
        TypeError, ValueError: ``delay`` is no integer >= 1, ``learn_on_arrival``
            no bool.
    """

    def __init__(self, delay: int, learn_on_arrival: bool = True) -> None:
        self.delay = check_positive_int(delay, "label_delay")
        self.learn_on_arrival = check_bool(learn_on_arrival, "learn_on_arrival")
        self._pending: deque[Tuple[int, Any, int]] = deque()  # (position, row, label)

    def __len__(self) -> int:
        return len(self._pending)

    def push(self, position: int, row: Any, label: int) -> None:
        """Hold the label ``label`` of the sample at ``position`` (a copy of its row).

        Args:
            position (int): the sample's stream position.
            row (Any): its features.
            label (int): its label.
        """
        self._pending.append((position, _held(row), label))

    def due(self, position: int) -> Iterator[Tuple[Any, int]]:
        r"""Remove and yield ``(row, label)`` of every held sample whose label is
        due once the sample at ``position`` is done: those at positions
        :math:`\le position - d`, oldest first.

        Args:
            position (int): the stream position of the sample just done.
        """
        while self._pending and self._pending[0][0] + self.delay <= position:
            _, row, label = self._pending.popleft()
            yield row, label

    def state_dict(self) -> Dict[str, Any]:
        """``label_delay``, ``learn_on_arrival`` and the held samples:
        ``positions`` and ``labels`` (lists of ints) and ``rows`` (copies of the
        rows held, a list), oldest first."""
        positions, rows, labels = zip(*self._pending) if self._pending else ((), (), ())
        return {"label_delay": self.delay, "learn_on_arrival": self.learn_on_arrival,
                "positions": list(positions), "rows": [_held(row) for row in rows],
                "labels": list(labels)}

    def load_state_dict(self, state: Mapping[str, Any], end: int) -> None:
        r"""Hold what :meth:`state_dict` returned, for a run whose next sample is at
        stream position ``end`` (everything is checked before anything changes).

        Args:
            state (Mapping[str, Any]): what :meth:`state_dict` returned.
            end (int): the stream position of the run's next sample.

        Raises:
            ValueError: ``state`` was kept with another ``label_delay`` or
                ``learn_on_arrival`` (naming it), lacks an entry, its lists differ
                in length, a position is not one whose label is still held before
                ``end`` (held labels come from the last :math:`d` positions, in
                order) or a label is no class id in :math:`[0, 2^{63})`.
            TypeError: ``label_delay``, a position or a label is no integer (a
                bool included), ``learn_on_arrival`` no bool, or a row is a tensor
                without values (on the ``meta`` device). A row may be anything a
                learner took (its width is checked where the learner is known:
                see :meth:`row_widths`).
        """
        missing = [key for key in ("label_delay", "learn_on_arrival", "positions", "rows",
                                   "labels") if key not in state]
        if missing:
            raise ValueError(f"the held labels' state lacks the entries {missing}")
        check_positive_int(state["label_delay"], "the held labels' label_delay", minimum=0)
        check_bool(state["learn_on_arrival"], "the held labels' learn_on_arrival")
        for key, value in (("label_delay", self.delay),
                           ("learn_on_arrival", self.learn_on_arrival)):
            if state[key] != value:
                raise ValueError(f"the held labels were kept with {key}={state[key]!r}, this "
                                 f"run has {key}={value}: continue it with "
                                 f"{key}={state[key]!r}")
        positions, rows, labels = (list(state[key]) for key in ("positions", "rows", "labels"))
        if not len(positions) == len(rows) == len(labels):
            raise ValueError(f"the held labels' state has {len(positions)} positions, "
                             f"{len(rows)} rows and {len(labels)} labels")
        held = [check_positive_int(position, "a held label's position", minimum=0)
                for position in positions]
        if held != sorted(set(held)) or any(not end - self.delay <= position < end
                                            for position in held):
            raise ValueError(f"the held labels' positions {held} are not distinct positions in "
                             f"[{end - self.delay}, {end}), in order: those of a run whose next "
                             f"sample is at position {end} with label_delay={self.delay}")
        classes = [_held_label(label, position) for position, label in zip(held, labels)]
        _check_rows(rows, held)
        self._pending = deque(zip(held, map(_held, rows), classes))

    def held_labels(self) -> List[Tuple[int, int]]:
        """``(position, label)`` of every held sample, oldest first."""
        return [(position, label) for position, _, label in self._pending]

    def row_widths(self) -> List[Tuple[int, Optional[int]]]:
        """``(position, features)`` of every held row but River's dicts, oldest
        first: the last dimension of a tensor, an array or a (nested) list,
        ``None`` for a row without one (a scalar, a ragged list, another object)."""
        return [(position, _width(row)) for position, row, _ in self._pending
                if not isinstance(row, Mapping)]


def _width(row: Any) -> Optional[int]:
    """The last dimension of ``row``; ``None`` if it has none numpy can read."""
    try:
        with ragged_refused():
            shape = np.shape(row)
    except (ValueError, RuntimeError):  # ragged; a list of tensors that require grad
        return None
    return int(shape[-1]) if shape else None


def _held_label(label: Any, position: int) -> int:
    """``label``, held for the sample at ``position``, as a class id an ``int64`` holds."""
    name = f"the held label of position {position}"
    return check_int64(check_positive_int(label, name, minimum=0), name)


def _check_rows(rows: List[Any], positions: List[int]) -> None:
    """Raise if a row of ``rows``, held for the samples at ``positions``, is a
    tensor without values (on the ``meta`` device): any other row a learner took
    is held as it came."""
    for position, row in zip(positions, rows):
        if isinstance(row, Tensor):
            check_has_values(row, f"the held row of position {position}", strided=False)
