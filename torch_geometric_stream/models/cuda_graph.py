r"""SLeDGe's test-then-train step replayed from CUDA graphs.

A step of :class:`~torch_geometric_stream.models.SLeDGe` on a GPU launches
hundreds of small kernels for a few milliseconds of GPU work, so Python's
dispatch and launch costs bound it, not the GPU. A step that merges its row
into the memory (rather than filling a free slot) has no host
synchronization (the prediction is the only value read back) and shapes that
depend only on the memory's fill levels, so it can be captured once into a
CUDA graph and replayed with a single launch until the fill levels change.
"""
from __future__ import annotations

from typing import Any, Optional

import torch
from torch import Tensor

from torch_geometric_stream.base import with_autograd
from torch_geometric_stream.models.sledge import SLeDGe
from torch_geometric_stream.nn import RunningMinMax, check_adam_dtype, make_adam_capturable
from torch_geometric_stream.validation import as_feature_matrix, as_label_vector, to_device

__all__ = ["CUDAGraphStep"]


class CUDAGraphStep:
    r"""Runs a :class:`SLeDGe`'s fused predict-then-learn step from CUDA graphs.

    :meth:`predict_learn` does what ``predict(x)`` followed by
    ``learn(x, y)`` does. A step whose row is merged into the memory is
    captured into a CUDA graph the first time its kind of label meets it (one
    graph per class, one for unlabeled rows: the partition a row is merged
    into depends on its label) and replayed afterwards, until a row fills a
    free slot: the graphs of the old fill levels are then dropped. With the
    paper's memory (1,000 slots, 100 labeled), unlabeled steps replay once
    the unlabeled memory is full, and labeled ones once their class's slots
    are.

    The step runs eagerly, with the same results, when it fills a slot, on
    the CPU, with ``reselect_every > 1`` (whose step reads device values on
    the host), with ``dropout > 0`` (its masks come from the model's own
    generator, which a capture refuses unless it is registered with the
    graph), and, with ``input_scaling="online"``, when the row lies outside
    the input range seen so far (the range grows and the memory is
    re-derived; a host copy of the range decides this without reading the
    device); with ``input_scaling="robust"`` every step runs eagerly (a row
    may enter the quantiles' reservoir, drawn on the host). :meth:`predict`
    and :meth:`learn` are the model's own, eager calls.

    The graphs replay the model's tensors as they were at capture: after
    replacing parameters, buffers, the optimizer or its hyperparameters (e.g.
    ``load_state_dict()`` of the optimizer, a new learning rate), call
    :meth:`reset`; moving the model or a new optimizer object
    (``reset_parameters()``) is detected and re-captures by itself, and the
    host copy of the input range follows the model's ``reset_state()`` and
    loaded states. Eager ``learn()`` calls in between are fine.

    Capturing needs Adam in its ``capturable`` form (step counts on the
    device, bias corrections computed there): a CUDA model's optimizer is
    switched to it on construction (else at the first capture), which
    changes its updates only at the level of float rounding.

    Args:
        model (SLeDGe): the learner to step.
        warmup (int, optional): steady-state steps run eagerly on a side
            stream before the first capture (at least one): lazy
            initializations, of CUDA libraries and of the optimizer's state,
            must not be captured, or every replay would repeat them. (default: 2)

    Attributes:
        captures (int): graphs captured so far.
        replays (int): steps replayed from a graph.

    Shapes:
        - **predict_learn:** :math:`x` :math:`(d,)` or :math:`(n, d)`, :math:`y`
          scalar or :math:`(n,)` with ``-1`` = unlabeled -> class ids :math:`(n,)`
    """

    def __init__(self, model: SLeDGe, warmup: int = 2) -> None:
        if not isinstance(model, SLeDGe):
            raise TypeError(f"CUDAGraphStep needs a SLeDGe model, got {type(model).__name__}")
        if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 1:
            raise ValueError(f"warmup must be a positive int, got {warmup!r}")
        self.model = model
        self.warmup = warmup
        self.captures = 0
        self.replays = 0
        # graphs by label, all captured at the fill levels ``self._levels``
        self._graphs: dict[int, tuple[torch.cuda.CUDAGraph, Tensor]] = {}
        self._levels: Optional[tuple[int, ...]] = None
        self._static_x: Optional[Tensor] = None
        self._pool: Any = None
        self._key: Optional[tuple] = None
        self._params: list[Tensor] = []
        self._warm_steps = 0
        # host copy (low, high) of the model's input range (input_scaling="online"),
        # and the range's ``resets`` it was read at
        self._range: Optional[tuple[Tensor, Tensor]] = None
        self._range_resets = 0
        if model.device.type == "cuda":
            make_adam_capturable(model.optimizer, model.device)

    # ------------------------------------------------ the learner's interface
    @property
    def in_channels(self) -> int:
        return self.model.in_channels

    @property
    def num_classes(self) -> int:
        return self.model.num_classes

    @property
    def device(self) -> torch.device:
        return self.model.device

    def predict_proba(self, x: Any) -> Tensor:
        """The model's eager :meth:`~SLeDGe.predict_proba`.

        Args:
            x (Tensor or array-like): one sample :math:`(d,)` or rows :math:`(n, d)`.
        """
        return self.model.predict_proba(x)

    def predict(self, x: Any) -> Tensor:
        """The model's eager :meth:`~SLeDGe.predict`.

        Args:
            x (Tensor or array-like): one sample :math:`(d,)` or rows :math:`(n, d)`.
        """
        return self.model.predict(x)

    def learn(self, x: Any, y: Any = None) -> "CUDAGraphStep":
        """The model's eager :meth:`~SLeDGe.learn`.

        Args:
            x (Tensor or array-like): one sample :math:`(d,)` or rows :math:`(n, d)`.
            y (int or Tensor or array-like, optional): the labels, ``-1`` or
                ``None`` = unlabeled. (default: :obj:`None`)

        Returns:
            CUDAGraphStep: ``self``.
        """
        self.model.learn(x, y)
        return self

    def reset(self) -> None:
        """Drop the captured graphs; the next steady-state steps capture anew."""
        self._graphs.clear()
        self._static_x = self._pool = self._key = self._levels = self._range = None
        self._warm_steps = 0

    @with_autograd
    def predict_learn(self, x: Any, y: Any = None) -> Tensor:
        """Predict each row of ``x``, then learn it with its label, row after row.

        Args:
            x (Tensor or array-like): one sample :math:`(d,)` or rows :math:`(n, d)`.
            y (int or Tensor or array-like, optional): the labels, a scalar or
                :math:`(n,)`; ``-1`` or ``None`` = unlabeled. (default: :obj:`None`)

        Returns:
            Tensor: the predictions :math:`(n,)`.

        Raises:
            ValueError, TypeError: on invalid rows or labels, or a float16 model
                (see :func:`~torch_geometric_stream.nn.check_adam_dtype`), before
                any state changes; on a row the model refuses (a batch is then
                learned not at all, as by :meth:`SLeDGe.learn`).
        """
        model = self.model
        check_adam_dtype(model.dtype, type(model).__name__)
        host = torch.device("cpu")
        scales = model.input_scaler is not None  # rows are then checked on the host too
        rows = as_feature_matrix(x, model.in_channels, device=host if scales else model.device,
                                 dtype=model.dtype, finite_norms=model.normalizes_raw_rows)
        labels = as_label_vector(y, rows.size(0), model.num_classes, device=host)
        # host rows (maybe the caller's) go without a sync, unless pinned (see to_device)
        on_device = to_device(rows, model.device)
        host_rows = rows if scales else on_device
        with model._all_or_nothing(rows.size(0)):
            return torch.cat([self._step(row, label, host_row) for row, label, host_row
                              in zip(on_device, labels.tolist(), host_rows)])

    # --------------------------------------------------------------- the step
    def graphable(self, label: int) -> bool:
        """Whether a step with ``label`` can run from a graph now, for a row
        inside the input range: a CUDA model, no host-read state and no dropout
        in its step, and a merge into the memory (no slot to fill).

        Args:
            label (int): the step's label, ``-1`` = unlabeled.
        """
        model = self.model
        return (model.device.type == "cuda" and model.reselect_every == 1
                and model.backbone.dropout == 0
                and model.memory.candidate_slots(label) is not None)

    def _step(self, row: Tensor, label: int, host_row: Tensor) -> Tensor:
        """Prediction :math:`(1,)` for ``row`` :math:`(d,)` (``host_row``: the
        same row on the host when the model scales its input), then learn it."""
        self._drop_if_stale()
        grows = self._range_grows(host_row)
        if grows or not self.graphable(label):
            return _eager_step(self.model, row, label)
        levels = self.model.memory.fill_levels
        if levels != self._levels:  # shapes changed: the old graphs are of no use
            self._graphs.clear()
            self._levels = levels
        if self._warm_steps < self.warmup:
            self._warm_steps += 1
            side = torch.cuda.Stream(device=row.device)
            side.wait_stream(torch.cuda.current_stream(row.device))
            with torch.cuda.stream(side):
                prediction = _eager_step(self.model, row, label)
            torch.cuda.current_stream(row.device).wait_stream(side)
            return prediction
        entry = self._graphs.get(label)
        if entry is None:
            entry = self._capture(row, label)
        graph, prediction = entry
        assert self._static_x is not None  # set by the first capture
        self._static_x.copy_(row)
        graph.replay()
        self.replays += 1
        self.model.memory.version += 1  # the replay merged a row (no Python ran)
        self.model._snapshot = None  # an eager predict's snapshot is outdated now
        return prediction.clone()

    def _capture(self, row: Tensor, label: int) -> tuple[torch.cuda.CUDAGraph, Tensor]:
        model = self.model
        if self._static_x is None:
            make_adam_capturable(model.optimizer, model.device)
            self._static_x = torch.empty_like(row)
            self._params = list(model.parameters())
            self._key = _state_key(model, self._params)
        if not self._graphs:  # a pool whose graphs were all dropped cannot be captured into
            self._pool = torch.cuda.graph_pool_handle()
        # cached before capture: built in one, it would hold its values only once
        # the graph replays
        model.memory.labeled_index()
        self._static_x.copy_(row)
        model._snapshot = None
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self._pool):
            prediction = _eager_step(model, self._static_x, label, range_grows=False)
        self._graphs[label] = (graph, prediction)
        self.captures += 1
        return graph, prediction

    def _range_grows(self, host_row: Tensor) -> bool:
        """Whether learning ``host_row`` widens the model's input range (then
        the host copy is widened too); ``False`` without input scaling, ``True``
        with a quantile range (its step always runs eagerly: a row may enter
        its reservoir)."""
        scaler = self.model.input_scaler
        if scaler is None:
            return False
        if not isinstance(scaler, RunningMinMax):
            return True
        if self._range is None or self._range_resets != scaler.resets:
            # one read of the device, at the start and after a reset or load
            self._range = (scaler.low.cpu(), scaler.high.cpu())
            self._range_resets = scaler.resets
        low, high = self._range
        if bool((host_row < low).any() or (host_row > high).any()):
            self._range = (torch.minimum(low, host_row), torch.maximum(high, host_row))
            return True
        return False

    def _drop_if_stale(self) -> None:
        """After the model's tensors or optimizer were replaced: drop the graphs
        and make the (new) optimizer capturable."""
        model = self.model
        if self._key is not None and self._key != _state_key(model, self._params):
            self.reset()
            if model.device.type == "cuda":
                make_adam_capturable(model.optimizer, model.device)


def _eager_step(model: SLeDGe, row: Tensor, label: int,
                range_grows: Optional[bool] = None) -> Tensor:
    """``predict`` then ``learn`` of one validated row :math:`(d,)` on the model's
    device; the prediction :math:`(1,)`, left on the device. ``range_grows``:
    see :meth:`SLeDGe._learn_row`."""
    prediction = model._predict_proba(row.unsqueeze(0)).argmax(dim=-1)
    model._learn_row(row, label, range_grows)
    return prediction


def _state_key(model: SLeDGe, params: list[Tensor]) -> tuple:
    """Identity of the tensors a captured step reads and writes: the optimizer
    and its state, and the storage of ``params`` (the model's parameters, listed
    once: walking the modules every step would cost more than the check). A
    move (``.to()``) re-allocates every parameter, buffers included."""
    return (id(model.optimizer), id(model.optimizer.state),
            tuple(p.data_ptr() for p in params))
