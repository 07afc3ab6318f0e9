"""Fixed-capacity labeled and unlabeled prototype memory of SLeDGe."""
from __future__ import annotations

import numbers
from functools import partial
from typing import Any, Callable, Mapping, NamedTuple, Optional, Union

import torch
from torch import Tensor, nn

from torch_geometric_stream.base import RollbackOnFailedLoad, restored_on_error
from torch_geometric_stream.ops.normalize import unit_rows
from torch_geometric_stream.validation import (CPU, check_bool, check_cast_keeps_finite,
                                               check_choice, check_has_values,
                                               check_positive_int, first_offender, not_a_count)

Coefficient = Union[str, float]
EmbeddingFn = Callable[[Tensor], Tensor]

#: ``source_merge`` choices: how a merge mixes the sources of a memory that keeps
#: them. ``"raw"``: the sources as they are, with the merge's weights; ``"unit"``:
#: with the weights corrected by the norms of the sources' scaled rows, so that the
#: merged prototype is the paper's merge of the unit rows at the current scaling.
SOURCE_MERGES = ("raw", "unit")


class MemoryUpdate(NamedTuple):
    """What :meth:`DualPrototypeMemory.update` did.

    Attributes:
        merged: ``False`` when the sample went into a free slot, ``True`` when
            it was merged into an existing prototype.
        node: index of the written row in :meth:`DualPrototypeMemory.nodes`
            (labeled slots first, then unlabeled slots), a 0-d ``long`` tensor
            on the memory's device: the merge target is found on the device
            and never read back to the host.
    """
    merged: bool
    node: Tensor


class DualPrototypeMemory(RollbackOnFailedLoad, nn.Module):
    r"""The dual prototype memory of SLeDGe (Sec. 3.1 of the paper).

    A labeled memory of :math:`S = \lfloor L/c \rfloor` slots per class,
    :math:`cS` in all (:math:`L` rounded down to a multiple of :math:`c`: the
    attribute ``labeled_size``), and an unlabeled memory of :math:`U` slots. A
    sample goes into a free slot while its partition has one; otherwise it is
    merged into the most similar prototype :math:`p` of its partition (cosine
    similarity of embeddings):

    .. math::
        p \leftarrow \frac{(1-\alpha) p + \alpha x}{\|(1-\alpha) p + \alpha x\|_2}
        \quad\text{(labeled)},\qquad
        p \leftarrow \frac{\beta p + (1-\beta) x}{\|\beta p + (1-\beta) x\|_2}
        \quad\text{(unlabeled)},

    with the adaptive coefficients :math:`\alpha = \beta = (1 - 1/N)\,
    \max(0, \mathrm{sim})`, :math:`N` the prototype's update count (or a fixed
    float for the paper's 0.05 / 0.95 ablation). The paper's coefficient is
    :math:`(1 - 1/N)\,\mathrm{sim}`; the clip at 0 is the authors' code's (a
    negative similarity would give a negative weight).

    All state lives in registered buffers, so ``state_dict()`` round-trips and
    ``.to(device)`` moves it. Slots are fixed: row ``i`` of :meth:`nodes` is
    always the same slot, and :attr:`node_mask` says which slots hold a
    prototype. Labeled slots of class ``j`` are rows ``j * S ... (j+1) * S - 1``
    and fill in order, so the filled slots of a class are a prefix of its
    partition; unlabeled slots fill in arrival order.

    Args:
        in_channels (int): feature dimension :math:`d`.
        num_classes (int): number of classes :math:`c`.
        labeled_size (int): labeled capacity :math:`L \geq c`, rounded down to
            a multiple of :math:`c` (``DualPrototypeMemory(4, 3, 10, 5)`` keeps
            9 labeled slots); ignored when ``light=True``.
        unlabeled_size (int): unlabeled capacity :math:`U \geq 0`.
        light (bool, optional): SLeDGe-L memory with exactly one labeled
            prototype per class (:math:`L = c`). (default: :obj:`False`)
        alpha (str or float, optional): ``"adaptive"`` or a fixed weight of the
            new sample in labeled merges. (default: :obj:`"adaptive"`)
        beta (str or float, optional): ``"adaptive"`` or a fixed weight of the
            old prototype in unlabeled merges. (default: :obj:`"adaptive"`)
        count_offset (int, optional): :math:`N` is the stored count plus this
            offset. ``1`` is the authors' code (first merge weighs
            :math:`0.5\,\mathrm{sim}`); ``0`` is the paper's text read
            literally (first merge weighs 0). (default: :obj:`1`)
        source_channels (int, optional): also keep, per slot, a *source* row
            of this width (e.g. the unscaled input) that inserts store and
            merges mix, without normalization (see ``source_merge``); then
            :meth:`refresh` can re-derive the prototypes from their sources
            (when the input scaling changes). (default: :obj:`None`, no sources)
        source_merge (str, optional): how a merge mixes the sources, one of
            :data:`SOURCE_MERGES`, when the prototypes are the unit rows of
            scaled sources, :math:`p = \mathrm{unit}(\mathrm{scale}(s_p))` with
            an affine ``scale`` (see :meth:`update`). ``"raw"``: :math:`s' =
            (1-\alpha) s_p + \alpha s_x`, whose prototype
            :math:`\mathrm{unit}((1-\alpha)\,\mathrm{scale}(s_p) + \alpha\,
            \mathrm{scale}(s_x))` mixes the scaled rows before their
            normalization: the paper's merge with the weights shifted toward the
            row of the larger norm. ``"unit"``: the weights divided by the
            norms of the scaled rows and renormalized to sum to 1, so that the
            prototype is the paper's merge of the unit rows :math:`p` and
            :math:`x` at the current scaling, exactly (up to rounding; for a
            scaling that clips, such as a quantile range, while neither source
            has a clipped value). The same for the unlabeled merge's
            :math:`\beta`. Unused without sources. (default: :obj:`"raw"`)

    Shapes:
        - **nodes():** :math:`(cS + U, d)`; **node_mask:** :math:`(cS + U,)`
        - **update(x):** :math:`x` of shape :math:`(d,)`
        - **sources:** :math:`(cS + U, d_s)` when ``source_channels`` is set
    """

    prototypes: Tensor
    counts: Tensor
    ages: Tensor
    node_mask: Tensor
    slot_labels: Tensor

    def __init__(self, in_channels: int, num_classes: int, labeled_size: int,
                 unlabeled_size: int, *, light: bool = False,
                 alpha: Coefficient = "adaptive", beta: Coefficient = "adaptive",
                 count_offset: int = 1, source_channels: Optional[int] = None,
                 source_merge: str = "raw") -> None:
        super().__init__()
        self.in_channels = check_positive_int(in_channels, "in_channels")
        self.num_classes = check_positive_int(num_classes, "num_classes")
        light = check_bool(light, "light")
        labeled_size = num_classes if light else check_positive_int(labeled_size, "labeled_size")
        if labeled_size < num_classes:
            raise ValueError(f"labeled_size ({labeled_size}) must be >= num_classes "
                             f"({num_classes}): every class needs at least one slot")
        self.unlabeled_size = check_positive_int(unlabeled_size, "unlabeled_size", minimum=0)
        self.light = light
        self.slots_per_class = labeled_size // num_classes
        self.labeled_size = self.slots_per_class * num_classes
        self.alpha = _check_coefficient(alpha, "alpha")
        self.beta = _check_coefficient(beta, "beta")
        self.count_offset = check_positive_int(count_offset, "count_offset", minimum=0)
        check_choice(source_merge, SOURCE_MERGES, "source_merge")
        self.source_merge = source_merge

        size = self.labeled_size + self.unlabeled_size
        self.register_buffer("prototypes", torch.zeros(size, in_channels))
        self.register_buffer("counts", torch.zeros(size, dtype=torch.long))
        self.register_buffer("ages", torch.zeros(self.labeled_size, dtype=torch.long))
        self.register_buffer("node_mask", torch.zeros(size, dtype=torch.bool))
        self.sources: Optional[Tensor]
        if source_channels is None:
            self.sources = None
        else:
            self.register_buffer("sources", torch.zeros(
                size, check_positive_int(source_channels, "source_channels")))
        self.register_buffer(
            "slot_labels",
            torch.arange(num_classes).repeat_interleave(self.slots_per_class),
            persistent=False)
        #: Writes so far (``update``, ``refresh``, ``reset_state``, a loaded
        #: state): caches of what the memory holds compare it to stay current.
        self.version = 0
        self.reset_state()

    # ------------------------------------------------------------------ state
    def reset_state(self) -> None:
        """Empty the memory."""
        self.prototypes.zero_()
        if self.sources is not None:
            self.sources.zero_()
        self.counts.zero_()
        self.ages.zero_()
        self.node_mask.zero_()
        self.version += 1
        self._sync_host_counts()

    def _sync_host_counts(self) -> None:
        # Host-side fill levels drive the insert-or-merge decision without
        # reading device memory in the per-sample path.
        *self._class_fill, self._num_unlabeled = self._fill_levels(self.node_mask)
        self._labeled_index: Optional[Tensor] = None

    def _fill_levels(self, mask: Tensor) -> list[int]:
        """Filled slots per class, then unlabeled, of ``mask`` :math:`(cS + U,)`;
        slots fill in order within each block, so a mask with a gap is refused."""
        mask = mask.detach().cpu().bool()
        blocks = [*mask[:self.labeled_size].view(self.num_classes, self.slots_per_class),
                  mask[self.labeled_size:]]
        levels = [int(block.sum()) for block in blocks]
        for j, (block, filled) in enumerate(zip(blocks, levels)):
            if not bool(block[:filled].all()):
                name = f"class {j}" if j < self.num_classes else "the unlabeled part"
                raise ValueError(f"node_mask must fill the slots of {name} from its first "
                                 f"slot on, got {block.int().tolist()}")
        return levels

    def _apply(self, fn: Callable[[Tensor], Tensor], *args: Any,
               **kwargs: Any) -> DualPrototypeMemory:  # .half(): no kept source row inf
        check_cast_keeps_finite(self, fn)
        return super()._apply(fn, *args, **kwargs)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> Any:
        """:meth:`RollbackOnFailedLoad.load_state_dict`; a refused state leaves
        :attr:`version` as it was too (putting the old buffers back is no new
        content, so the caches of what the memory holds stay current).

        Args:
            state_dict (Mapping[str, Any]): the state to load.
            strict (bool, optional): whether the keys must match exactly.
                (default: :obj:`True`)
            assign (bool, optional): refused unless ``False``. (default: :obj:`False`)
        """
        with restored_on_error(self.version, partial(setattr, self, "version")):
            return super().load_state_dict(state_dict, strict=strict, assign=assign)

    def _load_from_state_dict(self, state_dict: dict, prefix: str, *args: Any,
                              **kwargs: Any) -> None:
        mask = state_dict.get(prefix + "node_mask")
        if isinstance(mask, Tensor) and mask.shape == self.node_mask.shape:
            self._fill_levels(mask)  # refuse a mask with a gap before any buffer is copied
            self._check_loaded_values(state_dict, prefix, mask.detach().cpu().bool())
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)
        self.version += 1
        self._sync_host_counts()

    def _check_loaded_values(self, state_dict: dict, prefix: str, mask: Tensor) -> None:
        r"""Raise unless the state's ``counts`` are integers :math:`\geq 1` in the
        slots its ``mask`` fills and 0 in the others, its ``ages`` integers
        :math:`\geq 0` (:func:`~torch_geometric_stream.validation.not_a_count`) and its
        prototypes and sources finite in the filled slots (a count below 1 would
        zero the adaptive merge weight, a negative age inflate the slot's loss
        weight, a NaN row every prediction; an empty slot's row is never read
        unmasked); an entry missing or of another shape is torch's to report."""
        def given(name: str) -> Optional[Tensor]:
            value = state_dict.get(prefix + name)
            own = getattr(self, name)
            if isinstance(value, Tensor) and own is not None and value.shape == own.shape:
                return value.detach().cpu()
            return None
        counts, ages = given("counts"), given("ages")
        if counts is not None:
            wrong = not_a_count(counts) | torch.where(mask, counts < 1, counts != 0)
            if bool(wrong.any()):
                raise ValueError(f"{prefix}counts must be integers >= 1 in the filled slots "
                                 f"(node_mask) and 0 in the empty ones, got "
                                 f"{prefix}counts{first_offender(wrong, counts)}")
        if ages is not None and bool(not_a_count(ages).any()):
            raise ValueError(f"{prefix}ages must be integers >= 0, got "
                             f"{prefix}ages{first_offender(not_a_count(ages), ages)}")
        for name in ("prototypes", "sources"):
            rows = given(name)
            if rows is not None and not bool(torch.isfinite(rows[mask]).all()):
                raise ValueError(f"{prefix}{name} holds NaN or inf values")

    # -------------------------------------------------------------- accessors
    @property
    def capacity(self) -> int:
        r"""Total number of slots :math:`cS + U` (:math:`S = \lfloor L/c \rfloor`
        per class)."""
        return self.labeled_size + self.unlabeled_size

    @property
    def num_labeled(self) -> int:
        """Number of filled labeled slots."""
        return sum(self._class_fill)

    @property
    def num_unlabeled(self) -> int:
        """Number of filled unlabeled slots."""
        return self._num_unlabeled

    @property
    def num_nodes(self) -> int:
        """Number of filled slots."""
        return self.num_labeled + self._num_unlabeled

    @property
    def is_full(self) -> bool:
        """Whether every slot holds a prototype."""
        return self.num_nodes == self.capacity

    def nodes(self) -> Tensor:
        r"""All slots :math:`(cS + U, d)` (a view: empty slots are zero rows)."""
        return self.prototypes

    @property
    def fill_levels(self) -> tuple[int, ...]:
        """Filled slots per class, then filled unlabeled slots (host-side; every
        shape in a SLeDGe step is a function of these)."""
        return (*self._class_fill, self._num_unlabeled)

    def labeled_index(self) -> Tensor:
        """Slot indices of the filled labeled slots, class by class (cached on
        the device until a labeled slot is filled: do not modify)."""
        index = self._labeled_index
        if index is None or index.device != self.prototypes.device:
            device, size, fills = (self.prototypes.device, self.slots_per_class,
                                   enumerate(self._class_fill))
            if device == CPU:  # as always: naming the device costs about 1 us more
                index = torch.cat([torch.arange(j * size, j * size + fill)
                                   for j, fill in fills]).to(device)
            else:  # built there: a host-to-device copy would wait, at every labeled insert
                index = torch.cat([torch.arange(j * size, j * size + fill, device=device)
                                   for j, fill in fills])
            self._labeled_index = index
        return index

    def labeled(self) -> tuple[Tensor, Tensor, Tensor]:
        r"""Filled labeled rows :math:`(n_L, d)`, their labels and ages :math:`(n_L,)`
        (an age: the labeled arrivals since the slot was last written, as the
        authors' code counts it; the paper's :math:`t_i` is a recency rank).

        Views of the buffers once the labeled memory is full, else gathered.
        """
        if self.num_labeled == self.labeled_size:
            return self.prototypes[:self.labeled_size], self.slot_labels, self.ages
        index = self.labeled_index()
        return self.prototypes[index], self.slot_labels[index], self.ages[index]

    def unlabeled(self) -> Tensor:
        r"""Filled unlabeled rows :math:`(n_U, d)` (a view)."""
        start = self.labeled_size
        return self.prototypes[start:start + self._num_unlabeled]

    # ---------------------------------------------------------------- updates
    def candidate_slots(self, label: int) -> Optional[slice]:
        """Slots a sample with ``label`` is merged into, or ``None`` when it
        is merged into none: it will be inserted into a free slot, or dropped
        (an unlabeled sample when ``unlabeled_size == 0``).

        Args:
            label (int): the sample's label, ``-1`` = unlabeled.

        Raises:
            TypeError / ValueError: for a label that is not a class id in
                :math:`[-1, c)` (a tensor label on the ``meta`` device included).
        """
        label = self._checked_label(label)
        if label >= 0:
            if self._class_fill[label] < self.slots_per_class:
                return None
            start = label * self.slots_per_class
            return slice(start, start + self.slots_per_class)
        if self._num_unlabeled < self.unlabeled_size or self.unlabeled_size == 0:
            return None
        return slice(self.labeled_size, self.capacity)

    @torch.no_grad()
    def refresh(self, derive: Callable[[Tensor], Tensor]) -> None:
        r"""Re-derive every filled prototype from its source: ``prototypes =
        derive(sources)``; empty slots stay zero.

        Args:
            derive (Callable[[Tensor], Tensor]): maps sources :math:`(n, d_s)`
                to L2-normalized prototypes :math:`(n, d)`.

        Raises:
            RuntimeError: a memory built without ``source_channels``.
            ValueError: ``derive`` gives no tensor of the prototypes' shape.
        """
        if self.sources is None:
            raise RuntimeError("refresh needs a memory built with source_channels")
        derived = derive(self.sources)
        if not isinstance(derived, Tensor) or derived.shape != self.prototypes.shape:
            raise ValueError(f"derive must map the sources {tuple(self.sources.shape)} to "
                             f"prototypes {tuple(self.prototypes.shape)}, got "
                             f"{tuple(getattr(derived, 'shape', ())) or type(derived).__name__}")
        self.prototypes.copy_(torch.where(self.node_mask.unsqueeze(1), derived, 0.0))
        self.version += 1

    def _checked_label(self, label: Any) -> int:
        """``label`` as ``int`` if it is an integer (or a one-element integer
        tensor with values) in :math:`[-1, c)`."""
        if type(label) is not int:  # SLeDGe's per-sample path passes an int: no ABC check
            if isinstance(label, Tensor) and label.numel() == 1 and not label.is_floating_point():
                check_has_values(label, "label", strided=False)
                label = label.item()
            if isinstance(label, bool) or not isinstance(label, numbers.Integral):
                raise TypeError(f"label must be an integer class id (-1: unlabeled), got "
                                f"{type(label).__name__} {label!r}")
        if not -1 <= label < self.num_classes:
            raise ValueError(f"label must be in [-1, {self.num_classes}) (-1: unlabeled), "
                             f"got {label}")
        return int(label)

    @staticmethod
    def _check_row(row: Any, like: Tensor, name: str) -> None:
        """Raise unless ``row`` is one row :math:`(d,)` of ``like`` :math:`(P, d)`:
        a dense tensor of its width, dtype and device."""
        if not isinstance(row, Tensor):
            raise TypeError(f"{name} must be a tensor, got {type(row).__name__}")
        if row.shape != like.shape[1:]:
            raise ValueError(f"{name} must have shape ({like.size(1)},), got {tuple(row.shape)}")
        if row.dtype != like.dtype or row.device != like.device:
            raise TypeError(f"{name} must be {like.dtype} on {like.device} like the memory, "
                            f"got {row.dtype} on {row.device}")
        check_has_values(row, name)  # a sparse row

    @torch.no_grad()
    def update(self, x: Tensor, label: int, embed: Optional[EmbeddingFn] = None, *,
               x_embedding: Optional[Tensor] = None,
               node_embeddings: Optional[Tensor] = None,
               source: Optional[Tensor] = None,
               derive: Optional[Callable[[Tensor], Tensor]] = None,
               scale: Optional[Callable[[Tensor], Tensor]] = None) -> Optional[MemoryUpdate]:
        r"""Insert or merge one sample.

        Args:
            x (Tensor): the sample :math:`(d,)` (assumed L2-normalized, as
                stored prototypes are).
            label (int): its class, or ``-1`` when unlabeled.
            embed (callable, optional): maps rows :math:`(n, d)` to
                L2-normalized embeddings :math:`(n, h)`. ``None`` uses the
                L2-normalized raw features (the "+M" ablation).
            x_embedding (Tensor, optional): precomputed embedding of ``x``
                :math:`(h,)`.
            node_embeddings (Tensor, optional): precomputed embeddings of all
                slots :math:`(cS + U, h)`, e.g. reused from prediction.
            source (Tensor, optional): the sample's source row :math:`(d_s,)`;
                required exactly when the memory keeps sources.
            derive (callable, optional): maps sources :math:`(n, d_s)` to
                prototypes, as in :meth:`refresh`; with sources, a merged
                prototype is derived from its merged source (``x`` is
                ``derive(source)``), so prototypes and sources always agree.
            scale (callable, optional): maps sources :math:`(n, d_s)` to the
                rows before their normalization, an affine map per feature
                (``derive`` is ``scale`` followed by the L2 normalization);
                required by ``source_merge="unit"``'s merges, which weigh the
                sources by the norms of its rows, and unused otherwise.

        Returns:
            A :class:`MemoryUpdate`, or ``None`` when the sample was unlabeled
            and the unlabeled capacity is zero.

        Raises:
            TypeError / ValueError: for a label that is not an integer in
                :math:`[-1, c)`, an ``x`` or ``source`` that is not one row of the
                memory's width, dtype and device, or ``source`` / ``derive``
                given without sources kept (or missing with them), ``scale``
                missing from a ``source_merge="unit"`` memory's merge, a label or
                tensor on the ``meta`` device or sparse, or embeddings (given or
                computed by ``embed``) that are not floating tensors of one dtype
                and device, :math:`(h,)` for the sample and one row per
                candidate slot;
                the memory is then unchanged, also when ``embed`` or ``derive``
                raises. The values are not read (no device sync): finite,
                normalized rows are the caller's part.
        """
        label = self._checked_label(label)
        # read once: every step below uses this buffer, whatever embed or derive do
        sources = self._check_sample(x, source, derive)
        target = self.candidate_slots(label)
        if target is None:
            return self._insert(x, label, source, sources)
        # everything that can fail (the embeddings, their shapes) before any state changes
        query, keys = self._merge_embeddings(x, target, embed, x_embedding, node_embeddings)
        sims = keys @ query
        best = torch.argmax(sims)
        # the slot stays on the device; 1-element index ops read nothing back
        # (indexing with a 0-d tensor would call .item())
        slot = best + target.start
        index = slot.view(1)
        weight = self._weight(self.alpha if label >= 0 else self.beta,
                              sims.index_select(0, best.view(1))[0], index)
        merged, mixed = self._merged_rows(x, label, index, weight, source, sources, derive,
                                          scale)
        # every write after every step that can fail
        self._write_merge(label, index, merged, mixed, sources)
        return MemoryUpdate(True, slot)

    def _check_sample(self, x: Tensor, source: Optional[Tensor],
                      derive: Optional[Callable[[Tensor], Tensor]]) -> Optional[Tensor]:
        """The memory's sources :math:`(M, d_s)` (``None`` without), once ``x`` (and
        ``source``) are checked to be rows of the memory, ``source`` and ``derive``
        given exactly when it keeps sources."""
        self._check_row(x, self.prototypes, "x")
        sources = self.sources
        if not (source is None) == (derive is None) == (sources is None):
            raise ValueError("source and derive are required exactly when the memory keeps "
                             "sources (source_channels)")
        if source is not None:
            assert sources is not None  # given together (just checked)
            self._check_row(source, sources, "source")
        return sources

    def _insert(self, x: Tensor, label: int, source: Optional[Tensor],
                sources: Optional[Tensor]) -> Optional[MemoryUpdate]:
        """Write the sample (and its ``source`` into ``sources``) into its
        partition's next free slot (``None``: an unlabeled sample without an
        unlabeled memory, dropped)."""
        slot = self._free_slot(label)
        if slot is None:
            return None
        self.version += 1
        self._age_labeled_slots(label)
        self.prototypes[slot] = x
        if source is not None:
            assert sources is not None  # checked by _check_sample
            sources[slot] = source
        self.counts[slot] = 1
        self.node_mask[slot] = True
        if label >= 0:
            self._class_fill[label] += 1
            self._labeled_index = None
            self.ages[slot] = 0
        else:
            self._num_unlabeled += 1
        return MemoryUpdate(False, torch.full((), slot, device=self.prototypes.device))

    def _merge_embeddings(self, x: Tensor, target: slice, embed: Optional[EmbeddingFn],
                          x_embedding: Optional[Tensor], node_embeddings: Optional[Tensor]
                          ) -> tuple[Tensor, Tensor]:
        """The sample's embedding :math:`(h,)` and the ``target`` slots'
        :math:`(S, h)`, given or computed, checked."""
        for name, given in (("x_embedding", x_embedding), ("node_embeddings", node_embeddings)):
            if given is not None and not isinstance(given, Tensor):
                raise TypeError(f"{name} must be a tensor or None, got {type(given).__name__}")
            if given is not None:
                check_has_values(given, name)
        if node_embeddings is not None and (node_embeddings.dim() != 2
                                            or node_embeddings.size(0) != self.capacity):
            raise ValueError(f"node_embeddings must be ({self.capacity}, h), one row per "
                             f"slot, got {tuple(node_embeddings.shape)}")
        embed_rows = embed if embed is not None else _normalized
        query = x_embedding if x_embedding is not None else embed_rows(x.unsqueeze(0))[0]
        keys = (node_embeddings[target] if node_embeddings is not None
                else embed_rows(self.prototypes[target]))
        for name, given in (("the sample's embedding", query), ("the slots' embeddings", keys)):
            if not isinstance(given, Tensor) or not given.is_floating_point():
                raise TypeError(f"{name} must be a floating-point tensor, got "
                                f"{getattr(given, 'dtype', type(given).__name__)}")
            check_has_values(given, name)
        num_slots = target.stop - target.start
        if query.dim() != 1 or keys.shape != (num_slots, query.size(0)):
            raise ValueError(f"the sample's embedding {tuple(query.shape)} and the slots' "
                             f"{tuple(keys.shape)} must be (h,) and ({num_slots}, h)")
        if query.dtype != keys.dtype or query.device != keys.device:
            raise TypeError(f"the sample's embedding ({query.dtype} on {query.device}) and the "
                            f"slots' ({keys.dtype} on {keys.device}) must have one dtype and "
                            f"device")
        return query, keys

    def _merged_rows(self, x: Tensor, label: int, index: Tensor, weight: Tensor,
                     source: Optional[Tensor], sources: Optional[Tensor],
                     derive: Optional[Callable[[Tensor], Tensor]],
                     scale: Optional[Callable[[Tensor], Tensor]]
                     ) -> tuple[Tensor, Optional[Tensor]]:
        """The prototype :math:`(d,)` of slot ``index`` merged with the sample at
        ``weight``, and the slot's source in ``sources`` merged with ``source``
        :math:`(d_s,)` (``None`` without sources)."""
        if label >= 0:  # plastic: the new sample gets the weight
            old_share, new_share = 1 - weight, weight
        else:  # stable: the old prototype gets the weight
            old_share, new_share = weight, 1 - weight
        old = self.prototypes.index_select(0, index)[0]
        if source is None:
            return unit_rows(_replace_if_zero(old, old_share * old + new_share * x, x)), None
        assert sources is not None and derive is not None  # given with source
        mixed = self._mixed_source(sources.index_select(0, index)[0], source,
                                   old_share, new_share, scale)
        mixed = _replace_if_zero(old, mixed, source)
        merged = derive(mixed.unsqueeze(0))[0]
        self._check_row(merged, self.prototypes, "derive's prototype")
        return merged, mixed

    def _write_merge(self, label: int, index: Tensor, merged: Tensor,
                     mixed: Optional[Tensor], sources: Optional[Tensor]) -> None:
        """Write a merge's prototype (and source, into ``sources``) into slot
        ``index`` and count it."""
        self.version += 1
        self._age_labeled_slots(label)
        if label >= 0:
            self.ages.index_fill_(0, index, 0)
        if mixed is not None:
            assert sources is not None  # merged from a source
            sources.index_copy_(0, index, mixed.unsqueeze(0))
        self.prototypes.index_copy_(0, index, merged.unsqueeze(0))
        self.counts.index_add_(0, index, torch.ones_like(index))

    def _mixed_source(self, old: Tensor, new: Tensor, old_share: Tensor, new_share: Tensor,
                      scale: Optional[Callable[[Tensor], Tensor]]) -> Tensor:
        """The merged source :math:`(d_s,)` of the old source and the new one
        with these shares, as :attr:`source_merge` mixes them."""
        if self.source_merge == "raw":
            return old_share * old + new_share * new
        if scale is None:
            raise ValueError('a merge of source_merge="unit" needs scale')
        pair = torch.stack([old, new])
        norms = torch.linalg.vector_norm(scale(pair), dim=1)
        # each share over its scaled row's norm: the scaled rows' mix is then the
        # mix of their unit rows (a zero row, whose unit row is zero, weighs 0)
        weights = torch.where(norms > 0, torch.stack([old_share, new_share]) / norms, 0.0)
        total = weights.sum()
        # weights that sum to 1 carry the scaling's offset through the mix; none
        # (both unit rows weigh 0): the merge is a zero row, the new row's
        return torch.where(total > 0, (weights / total) @ pair, new)

    def _age_labeled_slots(self, label: int) -> None:
        """A labeled sample ages every filled labeled slot by one (no boolean indexing: no sync)."""
        if label >= 0:
            self.ages.add_(self.node_mask[:self.labeled_size].to(self.ages.dtype))

    def _free_slot(self, label: int) -> Optional[int]:
        if label >= 0:
            return label * self.slots_per_class + self._class_fill[label]
        if self.unlabeled_size == 0:
            return None
        return self.labeled_size + self._num_unlabeled

    def _weight(self, coefficient: Coefficient, sim: Tensor, index: Tensor) -> Tensor:
        if isinstance(coefficient, str):  # "adaptive", the one string _check_coefficient lets by
            count = self.counts.index_select(0, index)[0].to(sim.dtype) + self.count_offset
            return (1.0 - 1.0 / count.clamp(min=1.0)) * sim.clamp(min=0.0)
        return torch.full_like(sim, coefficient)  # a fill: no host-to-device copy

    def extra_repr(self) -> str:
        return (f"in_channels={self.in_channels}, num_classes={self.num_classes}, "
                f"labeled_size={self.labeled_size}, unlabeled_size={self.unlabeled_size}, "
                f"light={self.light}")


def _normalized(rows: Tensor) -> Tensor:
    return unit_rows(rows)


def _replace_if_zero(old: Tensor, merged: Tensor, x: Tensor) -> Tensor:
    """``merged``, or ``x`` when the old prototype is all zeros.

    An all-zero prototype has no direction (its cosine similarity to every
    sample is 0), so the adaptive weight of a plastic merge into it is 0 and it
    would stay zero for ever. Such rows do occur: an online scaler maps the
    first row of a stream, whose range is still empty, to zeros. A merge into
    it stores the new sample instead. Without zero rows, as in the paper's
    setting, nothing changes. (``torch.where``: no host synchronization.)
    """
    return torch.where(old.any(), merged, x)


def _check_coefficient(value: Coefficient, name: str) -> Coefficient:
    if value == "adaptive":
        return "adaptive"  # a plain str, whatever compared equal to it (np.array("adaptive"))
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be 'adaptive' or a float in [0, 1], got {value!r}")
    if not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must be in [0, 1], got {value}")
    return float(value)
