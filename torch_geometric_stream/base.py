"""The stream-classifier contract every learner of the package follows.

A stream classifier is test-then-train: :meth:`StreamClassifier.predict` (or
:meth:`~StreamClassifier.predict_proba`) on a sample, then
:meth:`StreamClassifier.learn` on it, with ``-1`` marking a row without label
(scikit-learn's convention for semi-supervised targets).  Inputs are validated
*before* any state changes, so a call that raises leaves the learner exactly as
it was; a learner that can only refuse a row of a batch once it has learned the
rows before it puts its state back (:meth:`StreamClassifier._all_or_nothing`).

For one sample at a time, River's names work too: ``predict_one`` (a Python
``int``), ``predict_proba_one`` (``{class id: probability}``) and
``learn_one(x, y=None)``, each refusing a batch. Each call runs with autograd
on, also inside ``torch.no_grad()`` or ``torch.inference_mode()``::

    for x, y in stream:
        y_pred = model.predict_one(x)
        model.learn_one(x, y if labeled else None)
"""
from __future__ import annotations

import abc
import copy
import functools
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Optional, TypeVar, cast

import torch
from torch import Tensor, nn

from torch_geometric_stream.validation import as_feature_matrix, as_label_vector

State = TypeVar("State")
Method = TypeVar("Method", bound=Callable[..., Any])
#: The learner a ``learn`` call returns: ``self``, of its own class.
_Self = TypeVar("_Self", bound="StreamClassifier")


def with_autograd(method: Method) -> Method:
    """Run ``method`` with autograd on, whatever the caller's context: a
    learner's step trains (and a prediction caches embeddings with their graph
    for it), also when called under :func:`torch.no_grad` or
    :func:`torch.inference_mode` (which would otherwise make ``backward`` fail
    after the memory was written, or silently leave the cached embeddings
    without gradient). Predictions still return tensors without gradient."""
    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if torch.is_grad_enabled() and not torch.is_inference_mode_enabled():
            return method(*args, **kwargs)  # the usual case: no context to enter (~4 us)
        with torch.inference_mode(False), torch.enable_grad():
            return method(*args, **kwargs)
    return wrapper  # type: ignore[return-value]


class StreamClassifier(abc.ABC):
    r"""Mixin giving the validated stream API on top of two hooks.

    Subclasses set :attr:`in_channels` and :attr:`num_classes` and implement
    :meth:`_predict_proba` and :meth:`_learn`, which receive already validated
    rows on :attr:`device` (and labels on the host).

    Shapes:
        - **x:** :math:`(d,)` for one sample or :math:`(n, d)` for a batch
        - **y:** scalar or :math:`(n,)`, integers in :math:`[-1, c)`
        - **predict:** :math:`(n,)` class ids; **predict_proba:** :math:`(n, c)`
    """

    in_channels: int
    num_classes: int

    @property
    def device(self) -> torch.device:
        """Device the learner's state lives on (CPU unless overridden)."""
        return torch.device("cpu")

    @property
    def dtype(self) -> torch.dtype:
        """Floating dtype inputs are converted to (float32 unless overridden)."""
        return torch.float32

    @property
    def normalizes_raw_rows(self) -> bool:
        """Whether input rows are L2-normalized as they come: rows whose norm overflows
        :attr:`dtype` are then refused (normalization would make them zero rows)."""
        return False

    @with_autograd
    def predict_proba(self, x: Any) -> Tensor:
        """Class probabilities of every row of ``x`` against the current state.

        Args:
            x (Tensor or array-like): one sample :math:`(d,)` or rows :math:`(n, d)`.

        Returns:
            Tensor: the probabilities, shape :math:`(n, c)`.
        """
        return self._predict_proba(self._rows(x))

    def predict(self, x: Any) -> Tensor:
        """Predicted class id of every row of ``x``.

        Args:
            x (Tensor or array-like): one sample :math:`(d,)` or rows :math:`(n, d)`.

        Returns:
            Tensor: the class ids, shape :math:`(n,)`.
        """
        return self.predict_proba(x).argmax(dim=-1)

    @with_autograd
    def learn(self: _Self, x: Any, y: Any = None) -> _Self:
        """Learn from the rows of ``x`` one after another. A refused batch (bad
        input, or a row refused by what the rows before it changed, such as an
        unclipped input range) leaves the learner as it was: no row of it learned.

        Args:
            x (Tensor or array-like): one sample :math:`(d,)` or rows :math:`(n, d)`.
            y (int or Tensor or array-like, optional): the labels, a scalar or
                :math:`(n,)`; ``-1`` or ``None`` = unlabeled. (default: :obj:`None`)

        Returns:
            StreamClassifier: ``self``.
        """
        rows = self._rows(x)
        labels = as_label_vector(y, rows.size(0), self.num_classes, device=torch.device("cpu"))
        self._check_can_learn()  # before a batch's state is saved for nothing
        with self._all_or_nothing(rows.size(0)):
            self._learn(rows, labels)
        return self

    @with_autograd
    def predict_proba_one(self, x: Any) -> dict[int, float]:
        """River's ``predict_proba_one``.

        Args:
            x (Tensor or array-like): one sample :math:`(d,)` (or :math:`(1, d)`).

        Returns:
            dict[int, float]: ``{class id: probability}``.

        Raises:
            ValueError: if ``x`` holds more than one row.
        """
        probabilities = self._predict_proba(self._rows(x, "predict_proba_one"))[0]
        return dict(enumerate(probabilities.tolist()))

    @with_autograd
    def predict_one(self, x: Any) -> int:
        """River's ``predict_one``.

        Args:
            x (Tensor or array-like): one sample :math:`(d,)` (or :math:`(1, d)`).

        Returns:
            int: the predicted class id.

        Raises:
            ValueError: if ``x`` holds more than one row.
        """
        return int(self._predict_proba(self._rows(x, "predict_one"))[0].argmax())

    @with_autograd
    def learn_one(self: _Self, x: Any, y: Any = None) -> _Self:
        """River's ``learn_one``: learn one sample.

        Args:
            x (Tensor or array-like): one sample :math:`(d,)` (or :math:`(1, d)`).
            y (int, optional): its label; ``None`` (or ``-1``) learns it unlabeled.
                (default: :obj:`None`)

        Returns:
            StreamClassifier: ``self``.

        Raises:
            ValueError: if ``x`` holds more than one row.
        """
        rows = self._rows(x, "learn_one")
        labels = as_label_vector(y, 1, self.num_classes, device=torch.device("cpu"))
        self._check_can_learn()
        self._learn(rows, labels)
        return self

    def _rows(self, x: Any, one_sample: Optional[str] = None) -> Tensor:
        """``x`` validated as rows :math:`(n, d)` on :attr:`device`; with
        ``one_sample`` (the calling method's name), exactly one row."""
        rows = as_feature_matrix(x, self.in_channels, device=self.device, dtype=self.dtype,
                                 finite_norms=self.normalizes_raw_rows)
        if one_sample is not None and rows.size(0) != 1:
            raise ValueError(f"{one_sample} takes one sample ({self.in_channels},), got a "
                             f"batch of {rows.size(0)} rows: use "
                             f"{one_sample.removesuffix('_one')} for batches")
        return rows

    def _check_can_learn(self) -> None:
        """Raise if the learner can't learn at all as it is (e.g. in float16),
        whatever the rows: called before :meth:`_learn`, and before a batch's
        state is saved (:meth:`_all_or_nothing`); nothing by default."""

    @property
    def _refuses_mid_batch(self) -> bool:
        """Whether :meth:`_learn` may refuse a row after it has learned the rows
        of the batch before it (a refusal that depends on what those rows
        changed); ``False`` unless a subclass knows better."""
        return False

    def _all_or_nothing(self, num_rows: int) -> AbstractContextManager[None]:
        """A block that learns ``num_rows`` validated rows one after another and,
        if it raises, leaves the learner as it was: a learner that
        :attr:`_refuses_mid_batch` saves its state (:meth:`_saved_state`) for a
        batch of several rows and puts it back (:meth:`_restore_state`); one row,
        refused before it changes anything, and every other learner save nothing."""
        if num_rows > 1 and self._refuses_mid_batch:
            return restored_on_error(self._saved_state(), self._restore_state)
        return nullcontext()

    def _saved_state(self) -> Any:
        """A copy of the learner's state for :meth:`_restore_state`: its
        ``state_dict()``, deep-copied, and its parameters' ``.grad`` (not copied:
        a step sets them to ``None`` before its backward pass, never writes into
        them), so that a refused batch leaves no gradient of rows never learned."""
        # the learners that refuse mid-batch are modules: state_dict is theirs
        module = cast(nn.Module, self)
        return (copy.deepcopy(module.state_dict()),
                [param.grad for param in module.parameters()])

    def _restore_state(self, saved: Any) -> None:
        """Put back the state :meth:`_saved_state` returned."""
        state, grads = saved
        module = cast(nn.Module, self)  # a module's, as above
        module.load_state_dict(state)
        for param, grad in zip(module.parameters(), grads):
            param.grad = grad

    @abc.abstractmethod
    def _predict_proba(self, x: Tensor) -> Tensor:
        """Probabilities for validated rows ``x`` of shape :math:`(n, d)`."""

    @abc.abstractmethod
    def _learn(self, x: Tensor, y: Tensor) -> None:
        """Learn validated rows ``x`` :math:`(n, d)` (on :attr:`device`) with labels
        ``y`` :math:`(n,)` (on the host: reading them costs no device synchronization)."""


@contextmanager
def restored_on_error(saved: State, restore: Callable[[State], Any]) -> Iterator[None]:
    """Call ``restore(saved)`` if the block raises (a ``KeyboardInterrupt`` too),
    then re-raise: the block's partial changes are undone (``saved`` must be a
    copy, not a live view)."""
    try:
        yield
    except BaseException:
        restore(saved)
        raise


if TYPE_CHECKING:  # the mixin's methods call the Module's it is mixed into
    _ModuleMixin = nn.Module
else:
    _ModuleMixin = object


class RollbackOnFailedLoad(_ModuleMixin):
    """Mixin for :class:`torch.nn.Module` s that update their own tensors as they
    learn (learners with an optimizer, the prototype memory, the running
    ranges of :mod:`torch_geometric_stream.nn.scaling`): a
    ``load_state_dict`` that fails (a missing or unexpected key under
    ``strict``, a wrong shape, a submodule refusing its entries) leaves the
    module exactly as it was, and ``assign=True`` is refused.

    :meth:`torch.nn.Module.load_state_dict` copies entry by entry and reports
    most errors only at the end, so without this a failed load leaves the
    entries met before the error loaded and the others not.  ``assign=True``
    would replace the module's tensors by the given ones: the module would then
    share them with the state's owner (each writing into the other's), and a
    learner's optimizer would keep updating the replaced parameters, so
    learning would silently stop.  List the mixin before
    :class:`torch.nn.Module` among the bases.
    """

    @with_autograd  # under inference_mode, the copies it makes would be inference tensors
    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> Any:
        """:meth:`torch.nn.Module.load_state_dict`, all or nothing, also under
        :func:`torch.inference_mode` (see :func:`with_autograd`: the state a
        learner copies, e.g. its optimizer's, would otherwise be inference tensors,
        which its next step could not update).

        Args:
            state_dict (Mapping[str, Any]): the state to load.
            strict (bool, optional): whether the keys must match exactly.
                (default: :obj:`True`)
            assign (bool, optional): refused unless ``False``. (default: :obj:`False`)

        Raises:
            ValueError: if ``assign`` is ``True``.
        """
        if assign:
            raise ValueError(f"{type(self).__name__}.load_state_dict copies into its own "
                             "tensors, which it updates as it learns: assign=True would "
                             "replace them by the given ones (shared with their owner, and for "
                             "a learner not those its optimizer updates); call it with "
                             "assign=False")
        load = super().load_state_dict
        with restored_on_error(copy.deepcopy(self.state_dict()), load):
            return load(state_dict, strict=strict)
