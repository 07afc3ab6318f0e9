r"""Labels that reach the learner some samples after their own sample.

In a deployed stream the label of a sample often comes later than the sample:
a fraud is confirmed days after the payment, a purchase ends a session some
clicks after it started. :func:`~torch_geometric_stream.evaluation.prequential`
with ``label_delay=d`` evaluates a learner so: every sample is predicted as it
arrives; a sample without label is learned then (there is nothing to wait
for); a labeled one's label is held back and learned, with its row, right
after the sample :math:`d` positions later was predicted (and learned, if
unlabeled). The :math:`d` samples in between are predicted without it.

That is MOA's ``EvaluatePrequentialDelayed`` with ``delayLength`` :math:`d`;
River's ``progressive_val_score(..., delay=d + 1)`` reveals each label at the
same point (its delay counts the sample itself). With :math:`d = 0` the run is
the usual test-then-train one, call for call.

:class:`DelayedLabels` is the queue of labels on their way: at most :math:`d +
1` of them (one per position of the last :math:`d + 1`), so its memory does not
grow with the stream.
"""
from __future__ import annotations

from collections import deque
from typing import Any, Dict, Iterator, Mapping, Tuple

import numpy as np
from torch import Tensor

from torch_geometric_stream.validation import check_positive_int

__all__ = ["DelayedLabels", "check_label_delay"]


def check_label_delay(delay: Any) -> int:
    """``delay`` as an ``int`` if it is an integer >= 0 (a bool is refused).

    Raises:
        TypeError, ValueError: otherwise, naming ``label_delay``.
    """
    return check_positive_int(delay, "label_delay", minimum=0)


def _held(row: Any) -> Any:
    """A copy of ``row`` that later changes to the caller's object do not reach: a
    stream may hand out one buffer refilled for every sample."""
    if isinstance(row, Tensor):
        return row.detach().clone()
    return np.array(row, copy=True)


class DelayedLabels:
    r"""The labeled samples whose label has not reached the learner yet, oldest first.

    Args:
        delay: :math:`d`, the samples predicted between a sample and the
            learning of its label (an integer >= 1; ``0`` needs no queue).

    Raises:
        TypeError, ValueError: ``delay`` is no integer >= 1.
    """

    def __init__(self, delay: int) -> None:
        self.delay = check_positive_int(delay, "label_delay")
        self._pending: deque[Tuple[int, Any, int]] = deque()  # (position, row, label)

    def __len__(self) -> int:
        return len(self._pending)

    def push(self, position: int, row: Any, label: int) -> None:
        """Hold the label ``label`` of the sample at ``position`` (a copy of its row)."""
        self._pending.append((position, _held(row), label))

    def due(self, position: int) -> Iterator[Tuple[Any, int]]:
        r"""Remove and yield ``(row, label)`` of every held sample whose label is
        due once the sample at ``position`` is done: those at positions
        :math:`\le position - d`, oldest first."""
        while self._pending and self._pending[0][0] + self.delay <= position:
            _, row, label = self._pending.popleft()
            yield row, label

    def state_dict(self) -> Dict[str, Any]:
        """``label_delay`` and the held samples: ``positions`` and ``labels``
        (lists of ints) and ``rows`` (the rows as held, a list), oldest first."""
        positions, rows, labels = zip(*self._pending) if self._pending else ((), (), ())
        return {"label_delay": self.delay, "positions": list(positions),
                "rows": list(rows), "labels": list(labels)}

    def load_state_dict(self, state: Mapping[str, Any], end: int) -> None:
        r"""Hold what :meth:`state_dict` returned, for a run whose next sample is at
        stream position ``end`` (everything is checked before anything changes).

        Raises:
            ValueError: ``state`` was kept with another ``label_delay`` (naming
                it), lacks an entry, its lists differ in length, or a position
                is not one whose label is still held before ``end`` (held labels
                come from the last :math:`d` positions, in order), or a label is
                no class id >= 0.
        """
        missing = [key for key in ("label_delay", "positions", "rows", "labels")
                   if key not in state]
        if missing:
            raise ValueError(f"the held labels' state lacks the entries {missing}")
        if state["label_delay"] != self.delay:
            raise ValueError(f"the held labels were kept with label_delay="
                             f"{state['label_delay']!r}, this run has label_delay={self.delay}: "
                             f"continue it with label_delay={state['label_delay']!r}")
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
        classes = [check_positive_int(label, "a held label", minimum=0) for label in labels]
        self._pending = deque(zip(held, rows, classes))
