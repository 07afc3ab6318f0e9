"""SLeDGe: semi-supervised learning on data streams with graph structure learning."""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Optional, Union, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from torch_geometric_stream.base import (RollbackOnFailedLoad, StreamClassifier, restored_on_error,
                                         with_autograd)
from torch_geometric_stream.graph import (STRUCTURE_LOSS_FORMS, DynamicKNNGraph, EmbeddingMLP,
                                          StaticKNNGraph, structure_loss)
from torch_geometric_stream.graph.dynamic_knn import (ReceptiveTopK, TopK, check_search_dtype,
                                                      neighbors_to_edge_index, receptive_topk,
                                                      score_neighbors, topk_neighbors)
from torch_geometric_stream.graph.normalization import dense_adjacency
from torch_geometric_stream.graph.subgraph import in_hop_subgraph
from torch_geometric_stream.memory import SOURCE_MERGES, DualPrototypeMemory, MemoryUpdate
from torch_geometric_stream.models.seeding import drawn_seed, seeded_draws
from torch_geometric_stream.nn import (BIAS_POSITIONS, GCNBackbone, GraphBackbone, MLPBackbone,
                                      RunningMinMax, RunningQuantileRange, check_adam_dtype,
                                      clear_grads, fit_optimizer_state, load_optimizer_state,
                                      make_adam)
from torch_geometric_stream.nn.generators import (generator_on, load_generator_state,
                                                  seeded_generator)
from torch_geometric_stream.nn.modes import set_training
from torch_geometric_stream.ops.normalize import unit_rows
from torch_geometric_stream.validation import (check_bool, check_cast_keeps_finite,
                                               check_choice, check_device,
                                               check_has_values, check_nonnegative, check_positive,
                                               check_positive_int, check_row_index,
                                               check_seed, check_state_entries,
                                               describe_index, first_offender, not_a_count)

__all__ = ["SLeDGe", "PROPAGATIONS", "GRAPHS", "UNLEARNED_GRAPH_ENTRIES", "INPUT_SCALINGS",
           "CLASS_PRIORS", "LIGHT_MEMORIES", "MERGE_SIMILARITIES", "SOURCE_MERGES",
           "unread_arguments"]

#: ``"learned"``: :class:`DynamicKNNGraph` (SLeDGe); ``"static"``: top-k cosine
#: graph on raw features (the "+Static" ablation); ``"none"``: no graph, an
#: :class:`MLPBackbone` trained on the labeled memory (the "+M" ablation).
GRAPHS = ("learned", "static", "none")

#: The arguments SLeDGe sets itself when ``graph`` is not ``"learned"`` (the
#: paper's +M and +Static ablations), whatever it is given: merges by raw-feature
#: cosine, and no structure regularizer (there is no learned graph to regularize).
UNLEARNED_GRAPH_ENTRIES: dict[str, Any] = {"merge_similarity": "raw", "lam": 0.0}

#: Arguments that only shape the learned graph learner f_E.
_GRAPH_LEARNER_ARGUMENTS = frozenset({"embedding_layers", "supervise_graph", "regularizer"})
#: Arguments that only shape a graph or its propagation (none without a graph).
_GRAPH_ARGUMENTS = frozenset({"k", "normalization", "bias_position", "propagation",
                              "reselect_every", "search_dtype", "block_size"})


def unread_arguments(*, graph: str = "learned", light: bool = False,
                     lam: Optional[float] = None, scales_input: bool = True) -> frozenset[str]:
    """The keyword arguments of :class:`SLeDGe` that have no effect on a model
    built with these ``graph``, ``light``, ``lam`` and input scaling: whatever
    they are given, the model computes the same.

    E.g. ``graph="none"`` (an MLP on the labeled memory) reads neither ``k`` nor
    ``normalization``; full mode never reads ``light_memory`` and light mode
    never reads ``reselect_every``; ``lam=0`` never reads ``regularizer``; a
    model without an ``input_scaling`` never reads ``source_merge``. The
    entries of :data:`UNLEARNED_GRAPH_ENTRIES` are not listed: those the model
    sets itself.

    Args:
        graph (str, optional): the model's ``graph``. (default: :obj:`"learned"`)
        light (bool, optional): the model's ``light``. (default: :obj:`False`)
        lam (float, optional): the model's ``lam``; ``None``: some value above
            zero. (default: :obj:`None`)
        scales_input (bool, optional): whether the model has an
            ``input_scaling`` (not ``None``). (default: :obj:`True`)
    """
    unread = {"reselect_every"} if light else {"light_memory"}
    if not scales_input:
        unread.add("source_merge")
    if lam == 0:
        unread.add("regularizer")
    if graph != "learned":
        unread |= _GRAPH_LEARNER_ARGUMENTS
    if graph == "none":
        unread |= _GRAPH_ARGUMENTS
    return frozenset(unread)

#: ``"sparse"``: the top-k ``edge_index`` graph restricted to the rows a
#: prediction or loss depends on, propagated with CSR sparse-matrix products;
#: ``"message_passing"``: the same subgraph through ``GCNConv``'s own
#: gather/scatter ``propagate``; ``"dense"``: the same math with dense
#: :math:`(N, N)` adjacency products over every row (for checking and benchmarks).
#: ``"dense"`` also changes full mode's neighbour search on the CPU: it searches
#: every memory row's top-k, not only the receptive field of the rows read (the
#: same neighbours, so the same results, but more work): a step time of
#: ``"dense"`` differs from ``"sparse"``'s by the search too, not the products alone.
PROPAGATIONS = ("sparse", "message_passing", "dense")
#: ``input_scaling`` choices: rows as given, or scaled inside with the running
#: range (``"online"``) or the running quantile range (``"robust"``).
INPUT_SCALINGS = (None, "online", "robust")
#: The scaler modules ``input_scaling`` also takes.
InputScaler = Union[RunningMinMax, RunningQuantileRange]
#: ``light_memory`` choices of SLeDGe-L: ``"per-class"``: one labeled slot per
#: class (the paper); ``"full"``: the whole labeled memory of ``labeled_size``
#: slots, every filled one a class query (the authors' light script).
LIGHT_MEMORIES = ("per-class", "full")
#: ``class_prior`` choices: the class prior predictions follow. ``"memory"``:
#: the labeled memory's (balanced by its per-class slots; the paper);
#: ``"stream"``: the labeled stream's, by logit adjustment.
CLASS_PRIORS = ("memory", "stream")
#: ``merge_similarity`` choices: what the memory's merge search compares.
#: ``"embedding"``: cosine of the learned embeddings ``f_E`` (the paper);
#: ``"raw"``: cosine of the input features (the +M and +Static ablations).
MERGE_SIMILARITIES = ("embedding", "raw")
#: Full mode on the CPU searches only the rows a prediction or loss reads
#: (:func:`~torch_geometric_stream.graph.receptive_topk`) while they are few;
#: after a search that had to give up, the next steps search every row.
_FULL_SEARCH_STEPS_AFTER_GIVING_UP = 100


@dataclass
class _Snapshot:
    """Embeddings and memory-only top-k graph at the current parameters and memory."""
    memory_version: int  # DualPrototypeMemory.version they were computed at
    emb: Tensor  # (P, h) embeddings of every slot, no grad
    top_value: Optional[Tensor]  # (P, K') memory-only top-k scores (full mode, once searched)
    top_index: Optional[Tensor]  # (P, K')
    live_emb: Optional[Tensor]  # ``emb`` with its autograd graph, reused by the training step
    gave_up: bool = False  # a prediction's search of only the rows read gave up
    # A one-row prediction's row (d,) and its embedding (h,) on the CPU, at the
    # snapshot's parameters: the memory update that follows reuses it
    query: Optional[tuple[Tensor, Tensor]] = None
    # Left by a training step (or loaded with the state), not by a prediction: with
    # a kept memory graph, only such a snapshot is patched by the next step and saved
    kept: bool = False


class SLeDGe(StreamClassifier, RollbackOnFailedLoad, nn.Module):
    r"""SLeDGe and SLeDGe-L (Moon et al.) as one PyG module with a stream API.

    Every sample is handled in the paper's order: **predict** with a graph
    learned over :math:`[M_L; M_U; x_t]`, **update the memory** with
    :math:`x_t` (and its label, if any), then one **Adam step** on the updated
    memory with a temporally weighted cross-entropy on the labeled rows plus
    :math:`\lambda` times the structure regularizer.

    The graph is a :class:`~torch_geometric_stream.graph.DynamicKNNGraph`
    keeping, per query row, itself and its :math:`k` most similar rows
    (top-:math:`(k{+}1)`, as the authors' code), the classifier a
    :class:`~torch_geometric_stream.nn.GCNBackbone`, the memory a
    :class:`~torch_geometric_stream.memory.DualPrototypeMemory`. In light mode
    (SLeDGe-L) the memory holds one labeled prototype per class (with
    ``light_memory="per-class"``, the default) and only the query rows get
    edges: the test sample at prediction, the labeled prototypes in training.

    Inputs are L2-normalized inside (the method stores unit rows).

    On the CPU, full mode computes the top-k only for the rows a prediction or
    the loss reads (those within ``num_layers`` hops of the test sample or of the
    labeled rows, :func:`~torch_geometric_stream.graph.receptive_topk`) while
    they are few, and over every row otherwise; both give the same graph.

    Where this module and the authors' code (Heechan-Moon/SLeDGe) differ, by
    design: the symmetric normalization counts only non-negative
    weights in the degrees, so negative similarities cannot produce NaN; in
    light mode the labeled memory has exactly one slot per class, as the
    paper says (their light script keeps the full labeled memory:
    ``light_memory="full"``). Their
    ``gcn_layer`` settings map to ``num_layers`` in
    :mod:`torch_geometric_stream.cli.configs`. The remaining choices where the
    paper and their code disagree are options: ``normalization``,
    ``regularizer``, ``count_offset``; and where both depart from PyG's
    :class:`~torch_geometric.nn.conv.GCNConv`, ``bias_position``.

    Args:
        in_channels (int): feature dimension :math:`d`.
        num_classes (int): number of classes :math:`c`.
        labeled_size (int, optional): labeled memory :math:`L`, rounded down to a
            multiple of :math:`c` (:math:`\lfloor L/c \rfloor` slots per class).
            (default: 100)
        unlabeled_size (int, optional): unlabeled memory :math:`U`. (default: 900)
        k (int, optional): neighbours per query row besides itself; ``0``: every
            row keeps only itself, no message passes between rows and the GCN
            layers act as an MLP on each row. (default: 5)
        hidden_channels (int, optional): width :math:`h` of :math:`f_E` and
            :math:`f_B`. (default: 256)
        embedding_layers (int, optional): layers of :math:`f_E` (:math:`\alpha_1`).
            (default: 1)
        num_layers (int, optional): GCN layers of :math:`f_B` (:math:`\alpha_2`).
            (default: 2)
        normalization (str, optional): ``"symmetric"`` (PyG's; a kept
            self-similarity is the self-loop), ``"symmetric-add"`` (the paper's
            :math:`A + I` as it reads, :math:`I` added to the kept
            self-similarity) or ``"mean"`` (authors' :math:`1/(k+1)`); see
            :data:`~torch_geometric_stream.graph.NORMALIZATIONS`.
            (default: :obj:`"symmetric"`, PyG's; the command line's package
            defaults (``--preset package``, and streams outside the paper's) take
            ``"symmetric-add"``, measured better on 9 of 16 cells, see
            ``cli.configs.DEFAULT_CONFIG``)
        bias_position (str, optional): where each GCN layer adds its bias, one
            of :data:`~torch_geometric_stream.nn.BIAS_POSITIONS`: ``"after"``
            propagation (PyG's :class:`~torch_geometric.nn.conv.GCNConv`) or
            ``"before"`` it (the paper's "fully connected layer, then
            :math:`\hat A`" and the authors' code). They differ most in light
            mode, whose rows other than the queries have no in-edges: with
            ``"before"`` and ``normalization="mean"`` those rows are zero
            instead of the bias. (default: :obj:`"after"`)
        regularizer (str, optional): ``"plain"`` (authors' code) or
            ``"frobenius"`` (paper). (default: :obj:`"plain"`)
        lam (float, optional): regularizer weight :math:`\lambda`. (default: 0.1)
        tau (float, optional): temporal decay :math:`\tau` of the loss weights
            :math:`e^{-\mathrm{age}/\tau}`, a labeled slot's age the labeled
            arrivals since it was last written (the authors' code). The paper's
            :math:`t_i` is the slot's recency rank (newest 0, oldest
            :math:`L-1`): the same order, but an age counts every labeled
            arrival since, so it exceeds the rank once some slot was written
            twice since (a frequent class's merges age a rare class's slots past
            :math:`L-1`). ``None`` = uniform. (default: None)
        lr (float, optional): Adam learning rate. (default: 1e-3)
        weight_decay (float, optional): Adam weight decay. (default: 0)
        light (bool, optional): SLeDGe-L. (default: :obj:`False`)
        light_memory (str, optional): SLeDGe-L's labeled memory, one of
            :data:`LIGHT_MEMORIES`: ``"per-class"`` (the paper: one slot per
            class) or ``"full"`` (the authors' light script: ``labeled_size``
            slots, every filled labeled slot a query of the training graph).
            No effect in full mode. (default: :obj:`"per-class"`)
        propagation (str, optional): one of :data:`PROPAGATIONS`. (default: :obj:`"sparse"`)
        alpha, beta (str or float, optional): memory merge coefficients,
            ``"adaptive"`` or fixed. (default: :obj:`"adaptive"`)
        count_offset (int, optional): see
            :class:`~torch_geometric_stream.memory.DualPrototypeMemory`. (default: 1)
        merge_similarity (str, optional): ``"embedding"`` (:math:`f_E`) or
            ``"raw"`` (input cosine, the "+M" ablation). (default: :obj:`"embedding"`)
        supervise_graph (bool, optional): whether the classification loss
            trains the graph learner :math:`f_E` through the edge weights (the
            paper, :obj:`True`). With :obj:`False` the edge weights enter the
            loss as constants, so :math:`f_E` learns from the structure
            regularizer alone and the backbone alone fits the labels; the
            graph then cannot be bent around the labeled memory, where the loss
            is. Then, with ``weight_decay=0``, every ``lam > 0`` trains the same
            model up to rounding: :math:`f_E`'s only gradient is ``lam`` times
            the regularizer's, and Adam's step does not depend on a gradient's
            scale (beyond its ``eps``); only ``lam=0`` (:math:`f_E` left
            untrained) differs.
            (default: :obj:`True`)
        graph (str, optional): one of :data:`GRAPHS`; ``"static"`` and
            ``"none"`` override ``merge_similarity`` and ``lam`` with
            :data:`UNLEARNED_GRAPH_ENTRIES` (raw-cosine merges, no regularizer).
            (default: :obj:`"learned"`)
        input_scaling (str or torch.nn.Module, optional): ``None`` (rows are
            used as given, e.g. scaled by a stream transform) or ``"online"``: the learner min-max
            scales raw rows to :math:`[-1, 1]` with the running range of the
            rows it has learned from (a :class:`~torch_geometric_stream.nn.scaling.RunningMinMax`;
            a predicted row is scaled with the range widened by itself), keeps
            each prototype's unscaled source in the memory, and re-derives
            every prototype from its source whenever the range grows, so that
            rows stored early in the stream, while the range was still narrow,
            stay comparable with later ones. With a fixed range, inserts and
            predictions are the same as with rows scaled outside by it; merges
            are only with ``source_merge="unit"`` (see there), not with the
            default ``"raw"``. ``"robust"``: the same with the range
            between the running 1 % and 99 % quantiles of each feature (a
            :class:`~torch_geometric_stream.nn.scaling.RunningQuantileRange`:
            exact quantiles of a 1,000-row reservoir drawn with ``seed``),
            values outside it clipped, so that an outlier neither stretches
            the range nor squeezes the rows inside it; the memory is
            re-derived only when a quantile drifts by 5 % of its range.
            A :class:`~torch_geometric_stream.nn.scaling.RunningMinMax` or
            :class:`~torch_geometric_stream.nn.scaling.RunningQuantileRange`
            of ``in_channels`` features, unused so far, does the same with
            its own settings (e.g. another quantile, or ``feature_range=(0, 1)``);
            it becomes a submodule, moved to the learner's device and cast to its
            dtype (in place, as :meth:`~torch.nn.Module.to` moves it and
            :meth:`~torch.nn.Module.double` casts it).
            (default: :obj:`None`)
        source_merge (str, optional): with an ``input_scaling``, how a merge
            mixes the unscaled sources, one of :data:`SOURCE_MERGES` (see
            :class:`~torch_geometric_stream.memory.DualPrototypeMemory`):
            ``"raw"`` mixes them with the merge's weights, which mixes the
            scaled rows before their L2 normalization, so that the prototype
            differs from the paper's merge of unit rows (the weights shift
            toward the row of the larger scaled norm); ``"unit"`` corrects the
            weights by those norms: the merged prototype is the paper's merge
            at the current range, the same as with rows scaled outside with that
            range (for ``"robust"``, while neither row has a clipped value).
            Unread without an ``input_scaling``. (default: :obj:`"raw"`)
        dropout (float, optional): dropout in :math:`f_B`, in :math:`[0, 1)`.
            Its masks come from the learner's own generator, seeded from
            ``seed`` (from torch's global generator when ``seed`` is not
            given, as the parameters), whatever else draws from torch's
            global one; its state goes with ``state_dict()`` (with
            ``dropout=0`` there is no generator). (default: 0)
        class_prior (str, optional): ``"memory"`` (the paper): predictions
            follow the class balance of the labeled memory, which keeps
            :math:`\lfloor L/c \rfloor` slots per class whatever the stream's
            class frequencies. ``"stream"``: predictions are corrected to the
            class frequencies of the labels seen so far, by adding
            :math:`\log \pi_\text{stream}(y) - \log \pi_\text{memory}(y)` to the
            logits (logit adjustment for label shift; both estimated with
            add-one smoothing). Training is unchanged. (default: :obj:`"memory"`)
        block_size (int, optional): rows scored at once by the graph learner.
            (default: 2048)
        reselect_every (int, optional): full mode: search every memory row's
            top-k neighbours anew only every ``reselect_every`` steps, and
            whenever a slot has been filled since the last search; in
            between, the neighbour sets of the last training graph are kept
            (on the CPU with the merged row re-searched, as always)
            and their edge weights recomputed from the current embeddings,
            which saves the :math:`O(M^2 h)` similarity search. An
            approximation: ``1`` (the default) is the exact method. No effect
            in light mode, whose search covers only the class queries.
        search_dtype (torch.dtype or str, optional): choose neighbours with
            similarity scores in this lower precision (e.g. ``"bfloat16"``),
            recomputing the kept edges' weights exactly. An approximation;
            :obj:`None` (the default) searches in the model's dtype.
        seed (int, optional): seed of the parameter initialization, also
            of :meth:`reset_parameters` (and of the robust input scaling's
            reservoir), whatever torch's global generators hold, which are
            left as they were. Without a seed the parameters (and then the
            reservoir's seed) are drawn from torch's global generators, which
            move on, as an :class:`~torch.nn.Module`'s: two learners built one
            after the other differ, and :func:`torch.manual_seed` before
            building reproduces them. (default: :obj:`None`)
        device (str or torch.device, optional): where parameters and memory live.

    Shapes:
        - **predict / predict_proba:** :math:`(d,)` or :math:`(n, d)` ->
          :math:`(n,)` / :math:`(n, c)`
        - **learn:** :math:`x` :math:`(d,)` or :math:`(n, d)`, :math:`y` scalar or
          :math:`(n,)` with ``-1`` = unlabeled
    """

    label_counts: Tensor  # registered with class_prior="stream"

    def __init__(self, in_channels: int, num_classes: int, *, labeled_size: int = 100,
                 unlabeled_size: int = 900, k: int = 5, hidden_channels: int = 256,
                 embedding_layers: int = 1, num_layers: int = 2,
                 normalization: str = "symmetric", bias_position: str = "after",
                 regularizer: str = "plain",
                 lam: float = 0.1, tau: Optional[float] = None, lr: float = 1e-3,
                 weight_decay: float = 0.0, light: bool = False,
                 light_memory: str = "per-class", propagation: str = "sparse",
                 alpha: Union[str, float] = "adaptive", beta: Union[str, float] = "adaptive",
                 count_offset: int = 1, merge_similarity: str = "embedding",
                 supervise_graph: bool = True, graph: str = "learned",
                 input_scaling: Union[str, InputScaler, None] = None,
                 source_merge: str = "raw", dropout: float = 0.0, class_prior: str = "memory",
                 block_size: int = 2048, reselect_every: int = 1,
                 search_dtype: Union[str, torch.dtype, None] = None,
                 seed: Optional[int] = None,
                 device: Union[str, torch.device, None] = None) -> None:
        nn.Module.__init__(self)
        self.in_channels = check_positive_int(in_channels, "in_channels")
        self.num_classes = check_positive_int(num_classes, "num_classes")
        device = None if device is None else check_device(device)
        self.k = check_positive_int(k, "k", minimum=0)
        check_choice(regularizer, STRUCTURE_LOSS_FORMS, "regularizer")
        check_choice(propagation, PROPAGATIONS, "propagation")
        check_choice(merge_similarity, MERGE_SIMILARITIES, "merge_similarity")
        check_choice(source_merge, SOURCE_MERGES, "source_merge")
        check_choice(graph, GRAPHS, "graph")
        check_choice(class_prior, CLASS_PRIORS, "class_prior")
        check_choice(light_memory, LIGHT_MEMORIES, "light_memory")
        check_choice(bias_position, BIAS_POSITIONS, "bias_position")
        lam = check_nonnegative(lam, "lam")
        if graph != "learned":
            merge_similarity = UNLEARNED_GRAPH_ENTRIES["merge_similarity"]
            lam = UNLEARNED_GRAPH_ENTRIES["lam"]
        tau = None if tau is None else check_positive(tau, "tau")
        self.regularizer, self.lam, self.tau = regularizer, lam, tau
        self.light, self.propagation = check_bool(light, "light"), propagation
        self.merge_similarity, self.graph_kind = merge_similarity, graph
        self.supervise_graph = check_bool(supervise_graph, "supervise_graph")
        self.lr = check_nonnegative(lr, "lr")  # 0: frozen parameters
        self.weight_decay = check_nonnegative(weight_decay, "weight_decay")
        self.seed = None if seed is None else check_seed(seed)
        _check_input_scaling(input_scaling, self.in_channels)
        check_positive_int(embedding_layers, "embedding_layers")
        self.reselect_every = check_positive_int(reselect_every, "reselect_every")
        # Full mode, reselect_every > 1: the memory rows' neighbour sets of the
        # last training step (P, K'), the number of filled slots they were
        # built over, and the steps since they were last searched.
        self._kept_neighbors: Optional[Tensor] = None
        self._kept_num_nodes = 0
        self._steps_since_search = 0
        # Training steps left in which full mode searches every row (see
        # _FULL_SEARCH_STEPS_AFTER_GIVING_UP); 0: only the rows read.
        self._full_search_steps = 0

        with seeded_draws(self.seed):
            self.graph = self._build_graph(graph, hidden_channels, embedding_layers, block_size,
                                           check_search_dtype(search_dtype))
            # any GraphBackbone may replace the GCN (examples/image_encoder.py)
            self.backbone: Union[MLPBackbone, GraphBackbone]
            if graph == "none":
                self.backbone = MLPBackbone(in_channels, hidden_channels, num_classes,
                                            num_layers, dropout=dropout)
            else:
                self.backbone = GCNBackbone(
                    in_channels, hidden_channels, num_classes, num_layers,
                    normalization=normalization, dropout=dropout,
                    aggregation="message_passing" if propagation == "message_passing"
                    else "csr", bias_position=bias_position)
            dropout_seed = drawn_seed()
        # after the parameters: unseeded, the same ones as seed=s after torch.manual_seed(s)
        input_scaler = _input_scaler(input_scaling, self.in_channels, self.seed)
        self.input_scaler = input_scaler
        self.class_prior = class_prior
        if class_prior == "stream":  # labels seen per class: int64, exact on any stream
            # (a float32 count stops growing at 2**24 labels) and untouched by .half()
            self.register_buffer("label_counts", torch.zeros(num_classes, dtype=torch.long))
        self.memory = DualPrototypeMemory(
            in_channels, num_classes, labeled_size, unlabeled_size,
            light=self.light and light_memory == "per-class", alpha=alpha,
            beta=beta, count_offset=count_offset,
            source_channels=None if self.input_scaler is None else in_channels,
            source_merge=source_merge)
        if device is not None:
            self.to(device)
        if input_scaler is not None and (input_scaler.low.device, input_scaler.low.dtype) != (
                self.device, self.dtype):
            # a submodule: with the others, as .to() moves and .double() casts it
            input_scaler.to(self.device, self.dtype)
        if dropout > 0:  # the masks' own generator (none to draw from, or to save, without)
            self.backbone.generator = seeded_generator(dropout_seed, self.device)
        self.optimizer = make_adam(self.parameters(), self.lr, self.weight_decay)
        self._snapshot: Optional[_Snapshot] = None
        # A kept memory graph read by set_extra_state, adopted once the memory is loaded.
        self._loaded_memory_graph: Optional[tuple[Tensor, Tensor, Tensor]] = None
        self.register_load_state_dict_post_hook(_adopt_loaded_memory_graph)

    def _build_graph(self, kind: str, hidden_channels: int, embedding_layers: int,
                     block_size: int, search_dtype: Optional[torch.dtype]
                     ) -> Optional[DynamicKNNGraph]:
        if kind == "learned":
            return DynamicKNNGraph(self.in_channels, self.k + 1, hidden_channels,
                                   embedding_layers, block_size=block_size,
                                   search_dtype=search_dtype)
        if kind == "static":
            return StaticKNNGraph(self.in_channels, self.k + 1, block_size=block_size,
                                  search_dtype=search_dtype)
        return None

    # ---------------------------------------------------------------- basics
    @property
    def device(self) -> torch.device:
        return self.memory.prototypes.device

    @property
    def dtype(self) -> torch.dtype:
        return self.memory.prototypes.dtype

    @property
    def input_scaling(self) -> Optional[str]:
        """The name of the input scaling (:data:`INPUT_SCALINGS`), also when a
        scaler module was given."""
        if self.input_scaler is None:
            return None
        return "online" if isinstance(self.input_scaler, RunningMinMax) else "robust"

    @property
    def normalizes_raw_rows(self) -> bool:
        """Without ``input_scaling`` rows are L2-normalized as they come."""
        return self.input_scaler is None

    @property
    def num_items(self) -> int:
        """Number of stored prototypes (at most ``labeled_size + unlabeled_size``)."""
        return self.memory.num_nodes

    def reset_parameters(self) -> None:
        """Re-initialize the learnable modules and the optimizer; keep the memory.
        The new parameters are drawn from ``seed`` (the same ones on every call,
        whatever torch's global generators hold, which the call leaves as they
        were), or without a seed from torch's global generators, which move on."""
        with seeded_draws(self.seed, self.parameters()):
            if self.graph is not None:
                self.graph.reset_parameters()
            self.backbone.reset_parameters()
        self.optimizer = make_adam(self.parameters(), self.lr, self.weight_decay)
        self._drop_cached_graphs()

    def reset_state(self) -> None:
        """Empty the memory, forget the input range and the label counts
        (parameters are kept)."""
        self.memory.reset_state()
        if self.input_scaler is not None:
            self.input_scaler.reset_state()
        if self.class_prior == "stream":
            self.label_counts.zero_()
        self._drop_cached_graphs()

    def _drop_cached_graphs(self) -> None:
        self._snapshot = None
        self._kept_neighbors, self._kept_num_nodes, self._steps_since_search = None, 0, 0

    def __getstate__(self) -> dict:
        """For ``copy.deepcopy`` and pickling: with the kept memory graph
        (:meth:`_kept_memory_graph`), without a stale snapshot or one whose
        embeddings carry an autograd graph (which cannot be copied; the copy's
        next step computes them anew, to the same values)."""
        snap = self._snapshot
        portable = (snap is not None and snap.live_emb is None
                    and snap.memory_version == self.memory.version)
        return {**super().__getstate__(), "_snapshot": snap if portable else None}

    def _apply(self, fn: Callable[[Tensor], Tensor], *args: Any,
               **kwargs: Any) -> SLeDGe:  # .to(), .cuda(), .double() ...
        check_cast_keeps_finite(self, fn)
        self._snapshot = None
        module = super()._apply(fn, *args, **kwargs)
        if self._kept_neighbors is not None:
            self._kept_neighbors = self._kept_neighbors.to(self.device)
        if self.backbone.generator is not None:  # not yet while __init__ moves the modules
            self.backbone.generator = generator_on(self.backbone.generator, self.device)
        if hasattr(self, "optimizer"):  # not yet while __init__ moves the modules
            fit_optimizer_state(self.optimizer)
        return module

    def get_extra_state(self) -> dict:
        """Optimizer state, the kept neighbour sets (``reselect_every > 1``), the
        search mode's countdown, the kept memory graph
        (:meth:`_kept_memory_graph`) and the dropout generator's state, stored in
        ``state_dict()`` under ``_extra_state``."""
        return {"optimizer": self.optimizer.state_dict(),
                "kept_neighbors": self._kept_neighbors,
                "kept_num_nodes": self._kept_num_nodes,
                "steps_since_search": self._steps_since_search,
                "full_search_steps": self._full_search_steps,
                "memory_graph": self._kept_memory_graph(),
                "dropout_generator": self.backbone.generator_state()}

    def _load_from_state_dict(self, state_dict: dict, prefix: str, *args: Any,
                              **kwargs: Any) -> None:
        counts = state_dict.get(prefix + "label_counts")
        if self.class_prior == "stream" and isinstance(counts, Tensor):
            wrong = not_a_count(counts)  # loaded as int64, it would make the stream prior NaN
            if bool(wrong.any()):
                raise ValueError(f"{prefix}label_counts must be integers >= 0 (labels seen "
                                 f"per class), got {prefix}label_counts"
                                 f"{first_offender(wrong, counts)}")
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def set_extra_state(self, state: dict) -> None:
        """Restore what :meth:`get_extra_state` returned (everything is checked
        before anything changes).

        Args:
            state (dict): what :meth:`get_extra_state` returned.

        Raises:
            TypeError: ``state`` not a dict, or an entry of another type.
            ValueError: no ``optimizer`` entry, or entries that do not fit this
                learner.
        """
        check_state_entries(state, ("optimizer",), f"{type(self).__name__}'s extra state")
        # states saved before the learner had its dropout generator keep its own
        generator = self.backbone.generator
        if generator is not None and state.get("dropout_generator") is not None:
            generator = load_generator_state(generator, state["dropout_generator"])
        kept = state.get("kept_neighbors")
        if kept is not None:
            self._check_slot_indices(kept, "kept_neighbors")
        kept_num_nodes, steps_since_search, full_search_steps = (
            check_positive_int(state.get(name, 0), f"the state's {name}", minimum=0)
            for name in ("kept_num_nodes", "steps_since_search", "full_search_steps"))
        if kept_num_nodes > self.memory.capacity:
            raise ValueError(f"the state's kept_num_nodes must be at most the memory's "
                             f"{self.memory.capacity} slots, got {kept_num_nodes}")
        memory_graph = self._fitted_memory_graph(state.get("memory_graph"))
        # a copy (never another learner's live moments), fitted to this learner's
        # device: e.g. saved from CUDA graphs, resumed on the CPU
        load_optimizer_state(self.optimizer, state["optimizer"])
        self.backbone.generator = generator
        self._snapshot = None
        self._kept_neighbors = None if kept is None else kept.to(self.device, copy=True)
        self._kept_num_nodes = kept_num_nodes
        self._steps_since_search = steps_since_search
        self._full_search_steps = full_search_steps
        self._loaded_memory_graph = memory_graph

    def _check_slot_indices(self, index: Any, name: str) -> None:
        """Raise unless the state's ``index`` is a top-k graph of the memory: an
        integer tensor :math:`(P, K')` of slot indices in :math:`[0, P)`."""
        slots = self.memory.capacity
        if not isinstance(index, Tensor) or index.dim() != 2 or index.size(0) != slots:
            raise ValueError(f"the state's {name} must be a ({slots}, k) tensor of slot "
                             f"indices, one row per memory slot, got {describe_index(index)}")
        check_row_index(index.reshape(-1), slots, f"the state's {name}")

    def _kept_memory_graph(self) -> Optional[tuple[Tensor, Tensor, Tensor]]:
        """The memory's embeddings :math:`(P, h)` and top-k graph :math:`(P, K')`
        that training steps patch where the memory is written, when
        :attr:`_keeps_memory_graph` (``None`` otherwise, or before the first step):
        searched anew they could differ in the last bits (another summation
        order), so a copy or a loaded state carries them to continue exactly.
        Only a training step's graph is kept: one a prediction searched (before
        the first labeled step, or after the memory was written outside a step)
        is neither saved nor patched, so predictions change no state."""
        snap = self._snapshot
        if (not self._keeps_memory_graph or snap is None or not snap.kept
                or snap.top_index is None or snap.memory_version != self.memory.version):
            return None
        assert snap.top_value is not None  # set with top_index
        return snap.emb, snap.top_value, snap.top_index

    def _fitted_memory_graph(self, graph: Optional[tuple[Tensor, Tensor, Tensor]]
                             ) -> Optional[tuple[Tensor, Tensor, Tensor]]:
        """A saved :meth:`_kept_memory_graph` as copies on this learner's device
        and dtype; ``ValueError`` unless it has a row per memory slot, its top-k
        slots lie in the memory and the embeddings of those slots are finite."""
        if graph is None:
            return None
        emb, top_value, top_index = graph
        slots = self.memory.capacity
        if emb.size(0) != slots or top_value.shape != top_index.shape or \
                top_index.size(0) != slots:
            raise ValueError(f"the state's memory graph has {emb.size(0)} rows and top-k "
                             f"shapes {tuple(top_value.shape)}, {tuple(top_index.shape)}; "
                             f"this learner's memory has {slots} slots")
        self._check_slot_indices(top_index, "memory graph's top-k slots")
        # only the rows the graph names are read: an empty slot's row may be NaN
        # (float16 states saved before eps was floored: a zero prototype normalized
        # to NaN), which the search masks
        if not bool(torch.isfinite(emb[top_index.unique()]).all()):
            raise ValueError("the state's memory graph embeddings hold NaN or inf values "
                             "in rows its top-k slots name")
        return (emb.to(self.device, self.dtype, copy=True),
                top_value.to(self.device, self.dtype, copy=True),
                top_index.to(self.device, copy=True))

    @property
    def num_neighbors(self) -> int:
        """Rows kept per query row: itself plus :attr:`k` neighbours."""
        return self.k + 1

    # ----------------------------------------------------------- prediction
    def _snapshot_now(self) -> _Snapshot:
        """Memory embeddings, cached until the memory or the parameters change;
        in full mode with the memory-only top-k graph, once :meth:`_snapshot_graph`
        searched it.

        The embeddings are computed once with their autograd graph: the
        training step that follows (same parameters, one memory row changed)
        reuses them instead of embedding the whole memory again. When
        :math:`f_E` does not train (:attr:`_keeps_memory_graph`) the training
        step leaves the snapshot of the updated memory, its graph patched.
        """
        if self._snapshot is None or self._snapshot.memory_version != self.memory.version:
            live_emb = self._memory_embeddings()
            self._snapshot = _Snapshot(self.memory.version, live_emb.detach(), None, None,
                                       live_emb if live_emb.requires_grad else None)
        return self._snapshot

    def _memory_embeddings(self) -> Tensor:
        """The embeddings :math:`(P, h)` of every slot, with their autograd graph
        when :math:`f_E` trains (:meth:`_snapshot_now`)."""
        trains = self._trains_graph
        nodes = self.memory.nodes()
        with torch.set_grad_enabled(trains):
            return self._knn_graph.embed(_rows_kept_for_backward(nodes) if trains else nodes,
                                         check=False)

    def _snapshot_graph(self, snap: _Snapshot) -> _Snapshot:
        """``snap`` with its memory-only top-k graph (full mode), searched over
        every row on first use."""
        if snap.top_index is None and not self.light and self.memory.num_nodes > 0:
            snap.top_value, snap.top_index = self._memory_graph(snap.emb)
        return snap

    @property
    def _keeps_memory_graph(self) -> bool:
        """Whether the snapshot outlives a training step: when no step changes
        :math:`f_E` (``graph="static"`` has no parameters; a learned graph gets
        no gradient with ``lam=0`` and ``supervise_graph=False``), the memory's
        embeddings and top-k graph change only where the memory is written, so
        the graph is patched there instead of searched anew."""
        graph = self.graph
        return graph is not None and not (
            self._trains_graph and any(p.requires_grad for p in graph.parameters()))

    def _searches_receptive_field(self) -> bool:
        """Whether full mode searches only the rows read (CPU subgraph propagation,
        exact search every step, not backing off after giving up; not with a
        kept memory graph, which every step patches)."""
        return (self.graph is not None and not self.light and self.reselect_every == 1
                and not self._keeps_memory_graph
                and self.propagation != "dense" and self.device.type == "cpu"
                and self._full_search_steps == 0)

    def _receptive_topk(self, keys: Tensor, targets: Tensor, k: int,
                        key_mask: Optional[Tensor], max_rows: int) -> Optional[ReceptiveTopK]:
        """:func:`receptive_topk` over the backbone's hops (``None``: gave up); ``k``
        is at most the rows ``key_mask`` allows (the callers chose it by the count)."""
        graph = self._knn_graph
        return receptive_topk(keys, targets, k, self.backbone.num_layers, key_mask=key_mask,
                              max_rows=max_rows, block_size=graph.block_size,
                              search_dtype=graph.search_dtype, check_key_mask=False)

    @property
    def _trains_graph(self) -> bool:
        """Whether a training step sends a gradient into the graph learner
        :math:`f_E`: through the edge weights, or through the regularizer."""
        return self.graph is not None and (self.supervise_graph or self.lam > 0)

    @property
    def _knn_graph(self) -> DynamicKNNGraph:
        """:attr:`graph`, for the steps that run only with one (``graph`` is not
        ``"none"``; merges by embedding: ``"learned"``)."""
        graph = self.graph
        assert graph is not None  # the callers run only with a graph
        return graph

    def _training_embeddings(self, snap: Optional[_Snapshot],
                             update: Optional[MemoryUpdate]) -> Tensor:
        r"""Embeddings :math:`(P, h)` of the updated memory, with gradient when
        :math:`f_E` trains: the snapshot's, with the written row embedded anew."""
        graph = self._knn_graph
        with torch.set_grad_enabled(self._trains_graph):
            nodes = self.memory.nodes()
            reused = None if snap is None else (
                snap.emb if snap.live_emb is None else snap.live_emb)
            if reused is None:
                return graph.embed(nodes, check=False)
            if update is None:
                return reused
            row = update.node.view(1)
            new_row = graph.embed(nodes.index_select(0, row), check=False)
            if (snap is not None and snap.live_emb is not None and reused.device.type == "cpu"
                    and type(graph.embedding) is EmbeddingMLP):
                return _RowReplacedInPlace.apply(reused, row, new_row)
            return reused.index_copy(0, row, new_row)

    def _filled_slots_mask(self) -> Optional[Tensor]:
        """The slots a search may pick :math:`(P,)`; ``None`` once every slot is filled."""
        return None if self.memory.is_full else self.memory.node_mask

    def _memory_topk(self, emb: Tensor, rows: Optional[Tensor] = None) -> TopK:
        """Top-k scores and slots :math:`(R, K')` of ``rows`` (all slots if
        ``None``) among the filled slots."""
        query = emb if rows is None else emb.index_select(0, rows)
        graph = self._knn_graph
        return topk_neighbors(query, emb, min(self.num_neighbors, self.memory.num_nodes),
                              key_mask=self._filled_slots_mask(),
                              block_size=graph.block_size,
                              search_dtype=graph.search_dtype,
                              check_key_mask=False)  # the mask allows num_nodes slots

    def _reuses_kept_neighbors(self) -> bool:
        """Whether the kept neighbour sets stand in for a search: fewer than
        ``reselect_every`` steps old, and no slot filled since."""
        return (self._kept_neighbors is not None
                and self._steps_since_search < self.reselect_every
                and self._kept_num_nodes == self.memory.num_nodes)

    def _memory_graph(self, emb: Tensor) -> TopK:
        """Full mode: the memory-only top-k graph :math:`(P, K')`, searched over
        every slot, or the kept neighbour sets re-scored with ``emb`` while
        ``reselect_every`` allows it."""
        if self._reuses_kept_neighbors():
            kept = self._kept_neighbors
            assert kept is not None  # checked by _reuses_kept_neighbors
            return TopK(score_neighbors(emb, emb, kept, check=False), kept)
        return self._memory_topk(emb)

    def _inference_graph(self, snap: _Snapshot, x_emb: Tensor) -> tuple[Tensor, Tensor]:
        """Graph over ``[slots; x]`` with ``x`` as node ``P``, as if ``x`` were the
        only test sample. Returns unnormalized ``(edge_index, edge_weight)``.

        Full mode without the snapshot's graph searches only the rows the
        prediction reads, while they are at most a quarter of the memory."""
        num_slots = snap.emb.size(0)
        k = min(self.num_neighbors, self.memory.num_nodes + 1)
        if not self.light and snap.top_index is None and self.memory.num_nodes > 0:
            filled = self._filled_slots_mask()
            key_mask = None if filled is None else torch.cat([filled, filled.new_ones(1)])
            found = self._receptive_topk(torch.cat([snap.emb, x_emb.unsqueeze(0)]),
                                         torch.full((1,), num_slots, device=x_emb.device), k,
                                         key_mask, max_rows=(self.memory.num_nodes + 1) // 4)
            if found is not None:
                return (neighbors_to_edge_index(found.top.indices, found.rows, check=False),
                        found.top.values.view(-1))
            snap.gave_up = True  # the training step backs off (predictions change no state)
            self._snapshot_graph(snap)
        scores = snap.emb @ x_emb
        own = torch.cat([scores.masked_fill(~self.memory.node_mask, float("-inf")),
                         (x_emb @ x_emb).view(1)]).topk(k)  # x's own neighbours
        sources, targets, weights = [own.indices], [torch.full_like(own.indices, num_slots)], \
            [own.values]
        if not self.light and snap.top_index is not None:
            # Memory rows: their memory-only top-k, with x competing for a place.
            assert snap.top_value is not None  # set with top_index
            values, neighbors = _top_with_column(
                snap.top_value, snap.top_index, scores,
                torch.full_like(snap.top_index[:, :1], num_slots), k)
            sources.append(neighbors.view(-1))
            targets.append(torch.arange(num_slots, device=x_emb.device).repeat_interleave(k))
            weights.append(values.view(-1))
        return torch.stack([torch.cat(sources), torch.cat(targets)]), torch.cat(weights)

    def _predict_proba(self, x: Tensor) -> Tensor:
        if self.input_scaler is not None:
            x = self.input_scaler.peek(x, check=False)
        x = unit_rows(x)
        was_training = self.training
        set_training(self, False)  # self.eval(), faster
        try:
            with torch.no_grad():
                if self.graph is None:
                    logits = self.backbone(x)
                else:
                    snap = self._snapshot_now()
                    if x.size(0) > 1 or not self._searches_receptive_field():
                        self._snapshot_graph(snap)  # one search serves every row
                    emb = self.graph.embed(x, check=False)
                    if x.size(0) == 1 and x.device.type == "cpu":  # (a GPU would sync to compare)
                        snap.query = (x[0], emb[0])
                    logits = torch.stack([self._logits_of_query(snap, row, row_emb)
                                          for row, row_emb in zip(x, emb)])
        finally:
            set_training(self, was_training)
        if self.class_prior == "stream":
            logits = logits + self._prior_shift()
        return logits.softmax(dim=-1)

    def _prior_shift(self) -> Tensor:
        r""":math:`\log \pi_\text{stream} - \log \pi_\text{memory}` :math:`(c,)`,
        add-one smoothed: the labeled stream's class frequencies against the
        filled labeled slots' (read on the device, no host round trip)."""
        memory = self.memory
        filled = memory.node_mask[:memory.labeled_size].view(self.num_classes, -1).sum(dim=1)
        # the integer counts in the model's dtype, at least float32 (a float16 sum overflows)
        dtype = torch.promote_types(self.dtype, torch.float32)
        stream = self.label_counts.to(dtype) + 1
        held = filled.to(dtype) + 1
        return ((stream / stream.sum()).log() - (held / held.sum()).log()).to(self.dtype)

    def _logits_of_query(self, snap: _Snapshot, x: Tensor, x_emb: Tensor) -> Tensor:
        nodes = self.memory.nodes()
        edge_index, edge_weight = self._inference_graph(snap, x_emb)
        return self._propagate(nodes, edge_index, edge_weight,
                               torch.full((1,), nodes.size(0), device=x.device), query=x)[0]

    def _propagate(self, nodes: Tensor, edge_index: Tensor, edge_weight: Tensor,
                   targets: Tensor, query: Optional[Tensor] = None) -> Tensor:
        """Backbone logits of the rows ``targets`` :math:`(T, c)` of ``nodes``
        :math:`(P, d)`, and of ``query`` :math:`(d,)` as node :math:`P` if given.

        The graph is normalized over all nodes. On the CPU, sparse propagation
        then runs only on the ``num_layers``-hop in-neighbourhood of
        ``targets``, which gives their exact outputs (and reads only those rows:
        the query is not appended to a copy of the memory); on a GPU it runs over
        every node, since extracting the subgraph (data-dependent sizes) would
        wait for the device and saves little there.
        """
        # with a graph, a graph backbone: any GraphBackbone, or a module that acts as
        # one (a wrapper that delegates to it, torch.compile's OptimizedModule)
        backbone = cast(GraphBackbone, self.backbone)
        num_nodes = nodes.size(0) + (query is not None)
        edge_index, edge_weight = backbone.normalize(edge_index, edge_weight, num_nodes,
                                                     check=False)
        if self.propagation != "dense" and nodes.device.type == "cpu":
            subset, sub_edge_index, mapping, edge_mask = in_hop_subgraph(
                targets, backbone.num_layers, edge_index, num_nodes)
            out = backbone.forward_normalized(_gather_rows(nodes, subset, query),
                                              sub_edge_index,
                                              edge_weight.masked_select(edge_mask))
            return out.index_select(0, mapping)
        if query is not None:
            nodes = torch.cat([nodes, query.unsqueeze(0)])
        if self.propagation == "dense":
            adj = dense_adjacency(edge_index, edge_weight, num_nodes, check=False)
            return self._dense_forward()(nodes, adj).index_select(0, targets)
        return backbone.forward_normalized(nodes, edge_index, edge_weight).index_select(
            0, targets)

    def _dense_forward(self) -> Callable[[Tensor, Tensor], Tensor]:
        """The backbone's ``forward_dense`` (``propagation="dense"``), or a
        ``TypeError`` for a backbone without one."""
        forward_dense = getattr(self.backbone, "forward_dense", None)
        if forward_dense is None:
            raise TypeError(f"propagation='dense' needs a backbone with forward_dense (a "
                            f"GCNBackbone), the backbone is {type(self.backbone).__name__}")
        return forward_dense

    # -------------------------------------------------------------- learning
    @property
    def _refuses_mid_batch(self) -> bool:
        """An unclipped quantile input range refuses a row by the range and the
        memory that the rows before it left (:meth:`_observe`)."""
        scaler = self.input_scaler
        return isinstance(scaler, RunningQuantileRange) and not scaler.clip

    @with_autograd  # the restored snapshot's embeddings carry their graph
    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> Any:
        """:meth:`RollbackOnFailedLoad.load_state_dict`; a refused state leaves
        the memory's ``version`` and the prediction's snapshot (see
        :meth:`_saved_state`) as they were too: putting the old state back
        writes no new content, so the caches of what the memory holds stay
        current.

        Args:
            state_dict (Mapping[str, Any]): the state to load.
            strict (bool, optional): whether the keys must match exactly.
                (default: :obj:`True`)
            assign (bool, optional): refused unless ``False``. (default: :obj:`False`)
        """
        with restored_on_error((self.memory.version, self._saved_snapshot()),
                               self._restore_caches):
            return super().load_state_dict(state_dict, strict=strict, assign=assign)

    def _restore_caches(self, saved: tuple[int, Any]) -> None:
        version, snapshot = saved
        self.memory.version = version
        self._restore_snapshot(snapshot)

    def _saved_state(self) -> Any:
        """The ``state_dict()`` copy, and the snapshot of the memory's embeddings
        (:meth:`_saved_snapshot`)."""
        return super()._saved_state(), self._saved_snapshot()

    def _restore_state(self, saved: Any) -> None:
        state, snapshot = saved
        super()._restore_state(state)
        self._restore_snapshot(snapshot)

    def _saved_snapshot(self) -> Optional[tuple[_Snapshot, int]]:
        """The snapshot of the memory's embeddings (a cache, but a prediction's
        one also steers the next training step: whether its search gave up, its
        graph) with its lag behind the memory's version, or ``None``. Its tensors
        are not copied: a step replaces them rather than writing into them,
        except the live embeddings, which are computed anew on restoring."""
        snap = self._snapshot
        return None if snap is None else (replace(snap),
                                          self.memory.version - snap.memory_version)

    def _restore_snapshot(self, snapshot: Optional[tuple[_Snapshot, int]]) -> None:
        """Put back what :meth:`_saved_snapshot` returned."""
        self._snapshot = None
        if snapshot is not None:
            snap, lag = snapshot
            snap.memory_version = self.memory.version - lag
            if snap.live_emb is not None and lag == 0:  # its autograd graph went with a step
                snap.live_emb = self._memory_embeddings()
                snap.emb = snap.live_emb.detach()  # the same values
            self._snapshot = snap

    def _check_can_learn(self) -> None:
        """Refuse float16 (:func:`~torch_geometric_stream.nn.check_adam_dtype`) and
        dense propagation with a backbone without ``forward_dense``."""
        check_adam_dtype(self.dtype, type(self).__name__)
        if self.propagation == "dense" and self.graph is not None:
            self._dense_forward()

    def _learn(self, x: Tensor, y: Tensor) -> None:
        several = x.size(0) > 1
        for index, (row, label) in enumerate(zip(x, y.tolist())):
            self._learn_row(row, label, batch_row=index if several else None)

    def _learn_row(self, row: Tensor, label: int, range_grows: Optional[bool] = None,
                   batch_row: Optional[int] = None) -> None:
        """Learn one validated row :math:`(d,)`. ``range_grows=False``: the caller
        knows that the row lies inside the input range (``input_scaling="online"``),
        so the range is left as it is without reading the device. ``batch_row``:
        the row's position in a batch, which the input range's refusal names."""
        source = None
        if self.input_scaler is not None:  # first: an unclipped range may refuse the row
            try:
                source, row = row, self._observe(row, range_grows)
            except ValueError as error:
                if batch_row is None:
                    raise
                raise ValueError(f"row {batch_row} of the batch: {error}") from error
        if label >= 0 and self.class_prior == "stream":
            self.label_counts[label] += 1
        self._train_step(self._update_memory(unit_rows(row), label, source))

    def _observe(self, source: Tensor, range_grows: Optional[bool] = None) -> Tensor:
        """Widen the input range with a raw row :math:`(d,)` (re-deriving the
        memory if the range grew, unless ``range_grows`` is ``False``); the row
        scaled with the new range. An unclipped quantile range refuses a row that
        it would scale to inf, or that narrows it so far that a source the memory
        holds would be (all of them, as :meth:`DualPrototypeMemory.refresh`
        re-derives them: empty slots are zero rows), and is left as it was."""
        scaler = self.input_scaler
        assert scaler is not None  # called with an input scaling only
        if range_grows is False:
            return scaler(source.unsqueeze(0), check=False)[0]
        kept = {"keep_finite": self.memory.sources} if self._refuses_mid_batch else {}
        if scaler.observe_(source.unsqueeze(0), **kept):
            self.memory.refresh(self._scaled)
            self._drop_cached_graphs()
        return scaler(source.unsqueeze(0), check=False)[0]

    def _scaled(self, sources: Tensor) -> Tensor:
        """Rows :math:`(n, d)` scaled with the current input range, L2-normalized."""
        return unit_rows(self._scale(sources))

    def _scale(self, sources: Tensor) -> Tensor:
        """Rows :math:`(n, d)` scaled with the current input range."""
        scaler = self.input_scaler
        assert scaler is not None  # the memory keeps sources with an input scaling only
        return scaler(sources, check=False)

    def _update_memory(self, x: Tensor, label: int,
                       source: Optional[Tensor] = None) -> Optional[MemoryUpdate]:
        with_source: dict[str, Any] = {} if source is None else {
            "source": source, "derive": self._scaled, "scale": self._scale}
        if self.memory.candidate_slots(label) is None or self.merge_similarity == "raw":
            # insert, drop (no unlabeled memory), or raw-cosine merge
            return self.memory.update(x, label, **with_source)
        with torch.no_grad():
            snap = self._snapshot_now()
            x_emb = self._row_embedding(snap, x)
        return self.memory.update(x, label, self._knn_graph.embed, x_embedding=x_emb,
                                  node_embeddings=snap.emb, **with_source)

    def _row_embedding(self, snap: _Snapshot, x: Tensor) -> Tensor:
        """The embedding :math:`(h,)` of the row :math:`(d,)` ``x``: the one-row
        prediction's where it predicted this very row (the snapshot's parameters
        are the current ones: a step or a new state drops the snapshot), else
        embedded now."""
        if snap.query is not None and torch.equal(snap.query[0], x):
            return snap.query[1]
        return self._knn_graph.embed(x.unsqueeze(0), check=False)[0]

    def _train_step(self, update: Optional[MemoryUpdate]) -> None:
        snap, self._snapshot = self._snapshot, None
        keeps_graph = not self.light and self._keeps_memory_graph
        if keeps_graph and snap is not None and not snap.kept:
            snap = None  # a prediction's: the steps go on as if it had not been made
        memory = self.memory
        if memory.num_labeled == 0:
            return
        self._full_search_steps = (_FULL_SEARCH_STEPS_AFTER_GIVING_UP
                                   if snap is not None and snap.gave_up
                                   else max(self._full_search_steps - 1, 0))
        if snap is not None and snap.memory_version != memory.version - (update is not None):
            snap = None  # the memory was written outside this step (e.g. memory.update)
        set_training(self, True)
        nodes = memory.nodes()
        labeled = memory.labeled_index()
        if self.graph is None:
            logits = self.backbone(nodes[labeled])
            emb = None
        else:
            emb = self._training_embeddings(snap, update)
            queries: Optional[Tensor]  # None: every row
            if self.light:
                queries, neighbors = labeled, self._memory_topk(emb.detach(), labeled).indices
            else:
                queries, top = self._training_graph(snap, update, emb.detach(), labeled)
                neighbors = top.indices
                if keeps_graph:
                    self._snapshot = _Snapshot(memory.version, emb.detach(), top.values,
                                               top.indices, None, kept=True)
            edge_index = neighbors_to_edge_index(neighbors, queries, check=False)
            weighted = emb if self.supervise_graph else emb.detach()
            edge_weight = self.graph.neighbor_weight(weighted, neighbors, queries, check=False)
            logits = self._propagate(nodes, edge_index, edge_weight, labeled)
        loss = self._supervised_loss(logits, memory.slot_labels.index_select(0, labeled),
                                     memory.ages.index_select(0, labeled))
        if self.lam > 0:
            assert emb is not None  # lam > 0 only with a learned graph
            loss = loss + self.lam * self._structure_loss(nodes, emb, labeled)
        clear_grads(self.optimizer)
        loss.backward()
        self.optimizer.step()

    def _training_graph(self, snap: Optional[_Snapshot], update: Optional[MemoryUpdate],
                        emb: Tensor, labeled: Tensor) -> tuple[Optional[Tensor], TopK]:
        r"""Full mode: the query rows (``None``: every row) and their top-k
        scores and neighbours :math:`(Q, K')` in the updated memory. Without the snapshot's
        graph, only the rows the loss reads are searched, while they are at most
        half of the memory; otherwise every row's neighbours come from
        :meth:`_training_neighbors`: the snapshot's graph, patched on the CPU
        after a write; without a snapshot graph every row is searched, and on a
        GPU every row is re-scored."""
        memory = self.memory
        if (snap is None or snap.top_index is None) and self._searches_receptive_field():
            found = self._receptive_topk(emb, labeled, min(self.num_neighbors, memory.num_nodes),
                                         self._filled_slots_mask(),
                                         max_rows=memory.num_nodes // 2)
            if found is not None:
                return found.rows, found.top
            self._full_search_steps = _FULL_SEARCH_STEPS_AFTER_GIVING_UP
        top = self._training_neighbors(snap, update, emb)
        self._keep_neighbors(top.indices)
        return None, top

    def _keep_neighbors(self, neighbors: Tensor) -> None:
        """Remember the training graph's neighbour sets for the next steps
        (``reselect_every > 1``) and count the steps since the last full search."""
        if self.reselect_every == 1:
            return
        searched = not self._reuses_kept_neighbors()
        self._steps_since_search = 1 if searched else self._steps_since_search + 1
        self._kept_neighbors, self._kept_num_nodes = neighbors, self.memory.num_nodes

    def _training_neighbors(self, snap: Optional[_Snapshot], update: Optional[MemoryUpdate],
                            emb: Tensor) -> TopK:
        r"""Memory-only top-k scores and neighbours :math:`(P, K')` of the updated memory.

        After a write into slot :math:`j` (a merge, or a sample in a free slot
        once :math:`K'` slots were filled) the snapshot's graph (same
        embeddings, memory before the update) is patched instead of rebuilt:
        rows that had :math:`j` among their neighbours, and row :math:`j`, are
        searched anew; every other row lets :math:`j` compete with its current
        top-k. That is :math:`O(P h)` instead of :math:`O(P^2 h)`. On a GPU
        every row is re-scored (the same neighbours), which needs no host
        synchronization to find the stale rows. Without a write (an unlabeled
        sample and no unlabeled slots) the snapshot's graph is the graph.
        """
        if snap is not None and snap.top_index is not None and update is None:
            assert snap.top_value is not None  # set with top_index
            return TopK(snap.top_value, snap.top_index)
        if (snap is None or snap.top_index is None
                or snap.top_index.size(1) != min(self.num_neighbors, self.memory.num_nodes)
                or emb.device.type != "cpu"):  # GPU: rescoring all beats a host round trip
            return self._memory_graph(emb)
        assert snap.top_value is not None and update is not None  # with top_index; see above
        j = update.node
        column = (emb @ emb[j]).masked_fill(~self.memory.node_mask, float("-inf"))
        values, neighbors = _top_with_column(snap.top_value, snap.top_index, column,
                                             j.expand_as(snap.top_index[:, :1]),
                                             snap.top_index.size(1))
        stale = (snap.top_index == j).any(dim=1)  # rows whose score of j is outdated
        stale[j] = True
        rows = stale.nonzero().view(-1)
        values[rows], neighbors[rows] = self._memory_topk(emb, rows)
        return TopK(values, neighbors)

    def _supervised_loss(self, logits: Tensor, labels: Tensor, ages: Tensor) -> Tensor:
        loss = F.cross_entropy(logits, labels, reduction="none")
        if self.tau is not None:
            loss = loss * torch.exp(-ages.to(loss.dtype) / self.tau)
        return loss.mean()

    def _structure_loss(self, nodes: Tensor, emb: Tensor, labeled: Tensor) -> Tensor:
        """The regularizer over the filled slots; empty slots (zero prototypes)
        enter as zero rows, so that shapes do not depend on the fill level."""
        memory = self.memory
        return structure_loss(nodes, emb, query_index=labeled if self.light else None,
                              form=self.regularizer, include_constant=False,
                              num_rows=memory.num_nodes,
                              row_mask=self._filled_slots_mask(),
                              check=False)

    def extra_repr(self) -> str:
        return (f"in_channels={self.in_channels}, num_classes={self.num_classes}, k={self.k}, "
                f"light={self.light}, propagation={self.propagation!r}, lam={self.lam}, "
                f"tau={self.tau}, lr={self.lr}, "
                f"input_scaling={self.input_scaling!r}"
                + (f", class_prior={self.class_prior!r}" if self.class_prior != "memory" else "")
                + (f", reselect_every={self.reselect_every}" if self.reselect_every > 1 else "")
                + ("" if self.supervise_graph else ", supervise_graph=False")
                + ("" if self.graph is None or self.graph.search_dtype is None
                   else f", search_dtype={self.graph.search_dtype}"))


def _adopt_loaded_memory_graph(model: SLeDGe, incompatible_keys: Any) -> None:
    """Post-hook of ``load_state_dict`` (which loads the memory after the
    learner's own extra state): the loaded kept memory graph becomes the
    snapshot of the loaded memory (not of a memory a ``strict=False`` load left
    as it was)."""
    graph, model._loaded_memory_graph = model._loaded_memory_graph, None
    buffers = [f"memory.{name}" for name, _ in model.memory.named_buffers()]
    memory_missing = any(key == buffer or key.endswith("." + buffer)
                         for key in incompatible_keys.missing_keys for buffer in buffers)
    if graph is not None and not memory_missing:
        model._snapshot = _Snapshot(model.memory.version, *graph, live_emb=None, kept=True)


def _top_with_column(top_value: Tensor, top_index: Tensor, column: Tensor,
                     column_index: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """Each row's top-``k`` scores and neighbours :math:`(R, k)` among its kept
    top-k (``top_value``, ``top_index`` :math:`(R, K')`) and one new column:
    scores ``column`` :math:`(R,)` of the neighbours ``column_index``
    :math:`(R, 1)`; ``k`` at most :math:`K' + 1`. (A plain tuple: it is on the
    per-sample path.)"""
    cand_value = torch.cat([top_value, column.unsqueeze(1)], dim=1)
    cand_index = torch.cat([top_index, column_index], dim=1)
    best = cand_value.topk(k, dim=1)
    return best.values, cand_index.gather(1, best.indices)


def _rows_kept_for_backward(nodes: Tensor) -> Tensor:
    r"""The memory's rows :math:`(P, d)` as the snapshot embeds them with
    gradient: autograd keeps them for :math:`f_E`'s first weight gradient
    :math:`\sum_i g_i \mathbf{x}_i^\top`, and the memory update before the
    training step's backward writes one row, slot :math:`j`, in place.

    On the CPU, the rows themselves, outside autograd's version check
    (``.data``), which spares a copy of the memory per step: the step replaces
    the snapshot's embedding of row :math:`j` (:meth:`SLeDGe._training_embeddings`,
    whose row replacement passes it no gradient), so :math:`g_j = 0` and the
    written row enters the sum times zero, as the row before the write would
    (the rows are finite). No other row changes before the backward: every
    other write drops the snapshot (a re-derived memory, ``.to()``) or makes
    it stale (the memory's version), and a stale snapshot trains nothing. A
    GPU keeps the copy (the CUDA-graph step was checked with it)."""
    return nodes.data if nodes.device.type == "cpu" else nodes.clone()


class _RowReplacedInPlace(torch.autograd.Function):
    r"""``emb.index_copy(0, row, new)`` for the snapshot's live embeddings
    :math:`(P, h)`, written into their own storage: the training step spares
    the copy of every embedding (the CPU's step; a GPU keeps ``index_copy``).

    The same values and gradients: ``index_copy``'s backward, row ``row`` of
    the gradient to ``emb`` zero. That row is zeroed in the incoming gradient
    :math:`(P, h)` itself, one copy less: the step's consumers of the
    embeddings (the edge weights, the regularizer) each return a new gradient
    that nothing else holds, and autograd sums them into one of those or a
    new tensor; an expanded gradient (stride 0, as a sum's backward gives),
    whose rows share memory, is copied as before. A new consumer must return
    a gradient of its own. ``emb``'s own backward (:math:`f_E`'s
    L2 normalization, which kept ``emb``) then reads the new row outside
    autograd's version check (``.data``), but only times that zero gradient,
    as the old row would be read (both rows are finite), just as
    :func:`_rows_kept_for_backward` reads the written memory row. Nothing else
    reads the old row: the snapshot it belongs to is the training step's own,
    dropped before the write, and never saved (a snapshot with live
    embeddings is neither pickled nor a kept memory graph).

    Only for the package's :class:`~torch_geometric_stream.graph.EmbeddingMLP`
    as :math:`f_E`, whose last backward multiplies by the row it kept: another
    embedding's could divide by it (the written row's zeros would give NaN).
    A forward hook on :math:`f_E` that keeps its output sees the written row
    change in it."""

    @staticmethod
    def forward(ctx: Any, emb: Tensor, row: Tensor, new: Tensor) -> Tensor:
        ctx.save_for_backward(row)
        return emb.data.index_copy_(0, row, new)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor, None, Tensor]:
        row, = ctx.saved_tensors
        new_grad = grad.index_select(0, row)
        # an expanded gradient (a sum's), whose rows share memory, or one with a
        # graph (create_graph=True; the step's own backward has none): a copy
        if 0 in grad.stride() or torch.is_grad_enabled():
            return grad.index_fill(0, row, 0), None, new_grad
        return grad.index_fill_(0, row, 0), None, new_grad


def _gather_rows(nodes: Tensor, index: Tensor, query: Optional[Tensor]) -> Tensor:
    r"""Rows ``index`` :math:`(R,)` of ``nodes`` :math:`(P, d)` with ``query``
    :math:`(d,)` appended as row :math:`P`, without copying ``nodes``: :math:`(R, d)`."""
    if query is None:
        return nodes.index_select(0, index)
    is_query = (index == nodes.size(0)).unsqueeze(1)
    return torch.where(is_query, query,
                       nodes.index_select(0, index.clamp_max(nodes.size(0) - 1)))


def _input_scaler(input_scaling: Union[str, InputScaler, None], in_channels: int,
                  seed: Optional[int]) -> Optional[InputScaler]:
    """The scaler module of ``SLeDGe(input_scaling=...)`` (checked by
    :func:`_check_input_scaling`): a new one for a name of
    :data:`INPUT_SCALINGS`, the given one as it is. The robust range's reservoir
    is drawn with ``seed``, or without one with a seed drawn from torch's global
    generator (:func:`drawn_seed`), which moves on: two unseeded learners differ."""
    if isinstance(input_scaling, (RunningMinMax, RunningQuantileRange)):
        return input_scaling
    if input_scaling == "robust":
        return RunningQuantileRange(in_channels, seed=drawn_seed() if seed is None else seed)
    return None if input_scaling is None else RunningMinMax(in_channels)


def _check_input_scaling(input_scaling: Union[str, InputScaler, None], in_channels: int) -> None:
    """Raise unless ``input_scaling`` is a name of :data:`INPUT_SCALINGS`, or a
    scaler of ``in_channels`` features, unused so far."""
    if not isinstance(input_scaling, (RunningMinMax, RunningQuantileRange)):
        check_choice(input_scaling, INPUT_SCALINGS, "input_scaling")
        return
    check_has_values(input_scaling.low, "input_scaling")  # meta: no values, none to move
    if input_scaling.low.numel() != in_channels:
        raise ValueError(f"input_scaling scales {input_scaling.low.numel()} features, "
                         f"in_channels is {in_channels}")
    if bool(torch.isfinite(input_scaling.low).any()):
        raise ValueError("input_scaling has seen rows already: pass a new scaler "
                         "(or call its reset_state())")
