"""All-or-nothing state loading for the NumPy baselines."""
from __future__ import annotations

import abc
import inspect
from typing import Any, Dict, Mapping, Union

import numpy as np

from torch_geometric_stream.base import restored_on_error
from torch_geometric_stream.validation import as_label_vector

#: A baseline's ``state_dict``: NumPy arrays, and NumPy scalars for its counters.
NumpyState = Dict[str, Union[np.ndarray, np.generic]]


class CheckedStateLoad(abc.ABC):
    """Mixin giving a ``load_state_dict`` that changes nothing when it fails.

    The state must hold exactly the entries of the learner's own
    ``state_dict()`` (a scalar entry as a scalar); anything else is refused with
    a :class:`ValueError` naming the entries. The subclass's
    :meth:`_load_state` then loads it, checking shapes as it goes; if it
    raises, the learner's earlier state is put back. The entries named in
    :attr:`_LABEL_ENTRIES` must hold class ids in :math:`[-1, c)` of this
    learner's :math:`c` classes (a state of a learner with more classes is
    refused, not left for a later prediction to index with).
    """

    num_classes: int
    #: State entries that hold class ids (``-1``: none).
    _LABEL_ENTRIES: tuple[str, ...] = ()

    @abc.abstractmethod
    def state_dict(self) -> NumpyState:
        """The learner's state as NumPy arrays (copies) and scalars."""

    @abc.abstractmethod
    def _load_state(self, state: Mapping[str, Any]) -> None:
        """Load ``state``, whose entry names are already checked."""

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore a state from :meth:`state_dict`, entirely or not at all.

        Args:
            state (Mapping[str, Any]): entry names to arrays, as :meth:`state_dict`
                gives them.

        Raises:
            TypeError: if ``state`` is not a mapping.
            ValueError: for missing or unexpected entries, an array where a
                scalar belongs, an entry of the wrong shape, or a class id
                outside :math:`[-1, c)`; the learner is then unchanged.
        """
        if not isinstance(state, Mapping):
            raise TypeError(f"state must be a mapping of entry names to arrays, got "
                            f"{type(state).__name__}")
        own = self.state_dict()
        missing = [name for name in own if name not in state]
        unexpected = [name for name in state if name not in own]
        if missing or unexpected:
            raise ValueError(f"{type(self).__name__} state does not fit: missing entries "
                             f"{missing}, unexpected entries {unexpected}")
        not_scalar = [name for name, value in own.items()
                      if np.ndim(value) == 0 and np.size(state[name]) != 1]
        if not_scalar:
            raise ValueError(f"{type(self).__name__} state entries {not_scalar} must be "
                             f"scalars")
        for name in self._LABEL_ENTRIES:
            labels = np.asarray(state[name], dtype=np.int64).reshape(-1)
            try:
                as_label_vector(labels, labels.size, self.num_classes)
            except ValueError as error:
                raise ValueError(f"{type(self).__name__} state entry {name}: {error}") from None
        with restored_on_error(own, self._load_state):
            self._load_state(state)


class ArgumentsRepr:
    """Mixin giving a ``repr`` that reads as the constructor call, e.g.
    ``ReSSL(in_channels=4, num_classes=3, memory_size=18, ...)``: every
    ``__init__`` argument with the attribute of its name."""

    def __repr__(self) -> str:
        names = [name for name in inspect.signature(type(self).__init__).parameters
                 if name != "self" and hasattr(self, name)]
        arguments = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__name__}({arguments})"
