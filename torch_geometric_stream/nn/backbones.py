"""Graph classifiers (:math:`f_B`) over learned graphs, and their MLP ablation."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, NoReturn, Optional, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from torch_geometric_stream.graph.normalization import (LOOP_NORMALIZATIONS, NORMALIZATIONS,
                                                       normalize_edge_weight)
from torch_geometric_stream.nn.convs import ConvFactory, build_conv, edge_argument
from torch_geometric_stream.nn.generators import generator_state, load_generator_state
from torch_geometric_stream.ops import CSRGraph, supports_csr
from torch_geometric_stream.validation import (check_dropout, check_graph_input,
                                               check_has_values, check_node_features,
                                               check_positive_int, check_same_device,
                                               check_weighted_graph, torchscript_unsupported)

if TYPE_CHECKING:  # PyG is imported where a conv is built: the command line starts without it
    from torch_geometric.nn import GCNConv, MessagePassing

__all__ = ["GraphBackbone", "GCNBackbone", "MLPBackbone", "AGGREGATIONS", "BIAS_POSITIONS"]

#: How :class:`GCNBackbone` sums over neighbourhoods.
AGGREGATIONS = ("csr", "message_passing")
#: Where a :class:`GCNBackbone` layer adds its bias: ``"after"`` propagation
#: (PyG's :class:`~torch_geometric.nn.conv.GCNConv`) or ``"before"`` it (the
#: paper's "fully connected layer, then :math:`\hat A`" and the authors' code).
BIAS_POSITIONS = ("after", "before")


def _layer_sizes(in_channels: int, hidden_channels: int, out_channels: int,
                 num_layers: int) -> list[tuple[int, int]]:
    sizes = [in_channels] + [hidden_channels] * (num_layers - 1) + [out_channels]
    return list(zip(sizes[:-1], sizes[1:]))


def _dropout(h: Tensor, p: float, training: bool,
             generator: Optional[torch.Generator]) -> Tensor:
    """:func:`torch.nn.functional.dropout` of ``h`` :math:`(N, F)` with its mask
    drawn from ``generator`` (``None``: torch's global one), which it cannot take."""
    if not training or p == 0:
        return h
    if generator is None:
        return F.dropout(h, p=p, training=True)
    return h * torch.empty_like(h).bernoulli_(1 - p, generator=generator).div_(1 - p)


class _LayerStack(nn.Module):
    """Shared skeleton: ``num_layers`` layers, LayerNorm + ReLU (+ dropout) between them."""

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int,
                 num_layers: int, dropout: float) -> None:
        super().__init__()
        self.in_channels = check_positive_int(in_channels, "in_channels")
        self.hidden_channels = check_positive_int(hidden_channels, "hidden_channels")
        self.out_channels = check_positive_int(out_channels, "out_channels")
        self.num_layers = check_positive_int(num_layers, "num_layers")
        self.dropout = check_dropout(dropout)
        # where the dropout masks come from (on the module's device); None: torch's
        # global generator. A learner sets its own (SLeDGe).
        self.generator: Optional[torch.Generator] = None
        self._generator_bytes: Optional[Tensor] = None  # see generator_state()
        self.norms = nn.ModuleList(nn.LayerNorm(hidden_channels) for _ in range(num_layers - 1))

    def generator_state(self) -> Optional[dict[str, Any]]:
        """:attr:`generator`'s state (:func:`~torch_geometric_stream.nn.generators.generator_state`;
        ``None`` without a generator): the same tensor while the generator has
        not drawn, so two states (and two pickles) of an unchanged module are alike.
        Reading it draws nothing."""
        if self.generator is None:
            return None
        state = generator_state(self.generator, self._generator_bytes)
        self._generator_bytes = state["state"]
        return state

    def __getstate__(self) -> dict:
        """For pickling and ``copy.deepcopy``: :attr:`generator` as its
        :meth:`generator_state` (torch pickles a generator with a new tensor of
        its state each time, which pickles with its address)."""
        generator = self.generator_state()  # first: it updates _generator_bytes
        return {**super().__getstate__(), "generator": generator, "_generator_bytes": None}

    def __setstate__(self, state: dict) -> None:
        saved = state["generator"]
        super().__setstate__({**state, "generator": None})
        if saved is not None:
            device = next(self.parameters()).device
            self.generator = load_generator_state(torch.Generator(device=device), saved)

    def _between_layers(self, h: Tensor, i: int) -> Tensor:
        h = F.relu(self.norms[i](h))
        return _dropout(h, self.dropout, self.training, self.generator)

    def reset_parameters(self) -> None:
        for module in self.modules():
            if module is not self and hasattr(module, "reset_parameters"):
                cast(Callable[[], None], module.reset_parameters)()  # a method, not a submodule

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}({self.in_channels}, {self.out_channels}, "
                f"num_layers={self.num_layers})")

    def __prepare_scriptable__(self) -> NoReturn:
        """``torch.jit.script`` calls this first: a clear error instead of
        TorchScript's own on the first construct it cannot compile."""
        raise torchscript_unsupported(type(self).__name__)


class GraphBackbone(_LayerStack):
    r"""A stack of message-passing layers with LayerNorm and ReLU between them.

    .. math::
        H^{(l)} = \mathrm{ReLU}(\mathrm{LN}(\mathrm{conv}_l(H^{(l-1)}, \hat A))),
        \qquad H^{(L)} = \mathrm{conv}_L(H^{(L-1)}, \hat A)

    The graph is normalized once per forward (see
    :func:`~torch_geometric_stream.graph.normalize_edge_weight`) and shared by
    all layers, so the convolutions are built without their own
    normalization. Any PyG conv whose ``forward(x, edge_index, edge_weight)``
    accepts edge weights plugs in through ``conv``, and so does one whose
    third argument is ``edge_attr`` built for one feature per edge (e.g.
    ``GATConv(i, o, edge_dim=1)``, ``TransformerConv(i, o, edge_dim=1)``),
    which gets the weights as :math:`(E, 1)` features. A conv that normalizes
    itself normalizes the graph a second time: build ``GCNConv`` with
    ``normalize=False`` (its default normalizes and adds self-loops), or pass
    ``normalization="none"`` to leave the normalizing to the conv.

    PyG's explainability (:mod:`torch_geometric.explain`, Captum's
    ``to_captum_model``) masks the messages of the :math:`E` edges given to
    :meth:`forward`, one mask entry each; the self-loops that ``"symmetric"``
    and ``"symmetric-add"`` append stay unmasked, as PyG leaves those its own
    convs add, and carry the given self-loops' weights, whose entries
    therefore have no effect.

    Args:
        in_channels (int): input size.
        hidden_channels (int): hidden size.
        out_channels (int): output size (number of classes for logits);
            the third argument, where PyG's ``BasicGNN`` models take
            ``num_layers``.
        num_layers (int): number of conv layers :math:`\alpha_2`.
        conv (callable): ``conv(in, out)`` returning a ``MessagePassing`` layer
            (or any module) called as ``layer(x, edge_index, edge_weight)``
            (e.g. ``GCNConv(i, o, normalize=False)``, ``GraphConv``,
            ``LEConv``, ``GATConv(i, o, edge_dim=1)``; not ``SAGEConv``, whose
            third argument is ``size``, nor ``GATConv(i, o)``, which would
            ignore the weights).
        normalization (str, optional): one of
            :data:`~torch_geometric_stream.graph.NORMALIZATIONS`.
            (default: :obj:`"symmetric"`)
        dropout (float, optional): dropout between layers, its masks drawn
            from the attribute ``generator`` (``None``: torch's global
            generator; a generator of its own is not replayed by
            :func:`torch.utils.checkpoint`, which restores only torch's global
            ones, so its recomputed forward would draw other masks).
            (default: 0)

    Raises:
        TypeError: if ``conv`` is not callable or builds anything but a
            module whose ``forward`` takes ``(x, edge_index, edge_weight)``
            (e.g. ``SAGEConv``, whose third argument is ``size``), or takes
            ``edge_attr`` without being built for 1-dim edge features (e.g.
            ``GATConv`` or ``TransformerConv`` without ``edge_dim=1``).

    Shapes:
        - **input:** ``x`` :math:`(N, F_{in})`, ``edge_index`` :math:`(2, E)`,
          ``edge_weight`` :math:`(E,)`
        - **output:** :math:`(N, F_{out})`
    """

    #: Whether :meth:`forward` takes sparse rows ``x``: not through any conv (PyG's
    #: own scatter a sparse ``x`` deep inside), so a sparse ``x`` is refused.
    _takes_sparse_rows = False

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int,
                 num_layers: int, conv: ConvFactory, normalization: str = "symmetric",
                 dropout: float = 0.0) -> None:
        super().__init__(in_channels, hidden_channels, out_channels, num_layers, dropout)
        if normalization not in NORMALIZATIONS:
            raise ValueError(f"normalization must be one of {NORMALIZATIONS}, "
                             f"got {normalization!r}")
        self.normalization = normalization
        self.convs = nn.ModuleList(
            build_conv(conv, a, b) for a, b in _layer_sizes(in_channels, hidden_channels,
                                                            out_channels, num_layers))

    def normalize(self, edge_index: Tensor, edge_weight: Optional[Tensor], num_nodes: int,
                  dtype: torch.dtype = torch.float32, *,
                  check: bool = True) -> tuple[Tensor, Tensor]:
        """Apply this backbone's normalization (once per graph).

        Args:
            edge_index (Tensor): the edges :math:`(2, E)`.
            edge_weight (Tensor or None): their weights :math:`(E,)`; ``None``
                weighs every edge 1 in ``dtype``.
            num_nodes (int): the nodes :math:`N`.
            dtype (torch.dtype, optional): the features' dtype, that of the
                weights without ``edge_weight``. (default: ``torch.float32``)
            check (bool, optional): as for
                :func:`~torch_geometric_stream.graph.normalize_edge_weight`.
                (default: :obj:`True`)

        Returns:
            tuple[Tensor, Tensor]: ``(edge_index, edge_weight)``, normalized.
        """
        if check:
            check_weighted_graph(edge_index, edge_weight, num_nodes)
        if edge_weight is None:
            edge_weight = torch.ones(edge_index.size(1), dtype=dtype, device=edge_index.device)
        return normalize_edge_weight(edge_index, edge_weight, num_nodes, self.normalization,
                                     check=False)

    def forward(self, x: Tensor, edge_index: Tensor, edge_weight: Optional[Tensor] = None,
                *, normalized: bool = False) -> Tensor:
        """Run all layers.

        Args:
            x (Tensor): the rows :math:`(N, F_{in})`.
            edge_index (Tensor): the edges :math:`(2, E)`.
            edge_weight (Tensor, optional): their weights :math:`(E,)`; of
                another floating dtype than ``x``, cast to ``x``'s after
                normalization; ``None`` weighs every edge 1.
                (default: :obj:`None`)
            normalized (bool, optional): whether ``edge_weight`` is already
                normalized (e.g. a subgraph cut out of a normalized graph).
                (default: :obj:`False`)

        Returns:
            Tensor: :math:`(N, F_{out})`.

        Raises:
            TypeError / ValueError: inputs whose shapes, dtypes or devices do not
                fit (see :func:`~torch_geometric_stream.validation.check_graph_input`;
                ``x`` must be on the parameters' device), tensors on the ``meta``
                device, or ``normalized=True`` without ``edge_weight``.
        """
        weight = next(self.parameters(), None)  # any conv: its parameters' dtype, if any
        check_graph_input(x, edge_index, edge_weight, self.in_channels,
                          None if weight is None else weight.dtype,
                          device=None if weight is None else weight.device,
                          strided=not self._takes_sparse_rows)
        if not normalized:
            num_edges = edge_index.size(1)
            edge_index, edge_weight = self.normalize(edge_index, edge_weight, x.size(0),
                                                     x.dtype, check=False)
            if self.normalization in LOOP_NORMALIZATIONS and self._explaining():
                self._mask_given_edges(num_edges, edge_index.device)
        elif edge_weight is None:
            raise ValueError("normalized=True needs the normalized edge_weight (E,); without "
                             "weights, leave normalized=False to normalize the graph here")
        # a conv's gather/scatter would mix the dtypes (e.g. float64 weights, float32 x)
        return self.forward_normalized(x, edge_index, edge_weight.to(x.dtype))

    def forward_normalized(self, x: Tensor, edge_index: Tensor, edge_weight: Tensor) -> Tensor:
        """All layers over an already normalized graph, each conv called as is
        (the weights as :math:`(E, 1)` features for a conv taking ``edge_attr``);
        without :meth:`forward`'s input checks, for callers that built the graph
        themselves (SLeDGe's per-sample step).

        Args:
            x (Tensor): the rows :math:`(N, F_{in})`.
            edge_index (Tensor): the edges :math:`(2, E)`.
            edge_weight (Tensor): their normalized weights :math:`(E,)`.

        Returns:
            Tensor: :math:`(N, F_{out})`.
        """
        return self._run(x, lambda conv, h: conv(h, edge_index,
                                                 edge_argument(conv, edge_weight)))

    def _explaining(self) -> bool:
        """Whether a conv is in PyG's explain mode (set by
        :func:`~torch_geometric.explain.algorithm.utils.set_masks`, as
        ``GNNExplainer``, ``PGExplainer`` and Captum's edge masks do), where its
        ``propagate`` multiplies every message by its edge's mask entry."""
        return any(getattr(conv, "explain", None) for conv in self.convs)

    def _mask_given_edges(self, num_edges: int, device: torch.device) -> None:
        """Explain mode over a graph that :meth:`normalize` gave one self-loop per
        node, appended after the ``num_edges`` given edges (their own self-loops
        kept in place with weight 0, see
        :func:`~torch_geometric_stream.graph.with_self_loops`): the edge mask covers
        the given edges and the appended loops are unmasked, as PyG leaves the
        loops its own convs add. PyG's ``explain_message`` drops the given
        self-loops' entries (``_loop_mask``), which fits the layout of
        :func:`~torch_geometric.utils.add_remaining_self_loops` (they removed),
        not this one; here it keeps every entry. A conv that adds self-loops
        itself (``add_self_loops`` true, e.g. ``GATConv``) removes the given ones
        as PyG assumes, and keeps PyG's ``_loop_mask``."""
        every_edge = torch.ones(num_edges, dtype=torch.bool, device=device)
        for conv in self.convs:
            if getattr(conv, "explain", None) and not getattr(conv, "add_self_loops", False):
                conv._loop_mask = every_edge

    def _run(self, x: Tensor, layer: Callable[[MessagePassing, Tensor], Tensor]) -> Tensor:
        """All layers, ``layer(conv, h)`` computing one, with the norms between."""
        for i, conv in enumerate(self.convs):
            x = layer(conv, x)
            if i < self.num_layers - 1:
                x = self._between_layers(x, i)
        return x


def _gcn_conv(in_channels: int, out_channels: int) -> GCNConv:
    from torch_geometric.nn import GCNConv
    return GCNConv(in_channels, out_channels, normalize=False, add_self_loops=False)


class GCNBackbone(GraphBackbone):
    r"""SLeDGe's graph classifier: :class:`~torch_geometric.nn.conv.GCNConv`
    layers (linear map, then propagation, bias) with LayerNorm + ReLU between.

    With ``bias_position="before"`` each layer adds its bias before
    propagating, :math:`\hat A (H W + \mathbf{1} b^\top)`, as the paper's
    "fully connected layer, then :math:`\hat A`" and the authors' code do. The
    two differ where rows have no in-edges (SLeDGe-L's graph without
    self-loops: every row but the queries): such a row carries the bias after
    propagation, the same vector for every row, but zero before it.

    The LayerNorm and ReLU of a hidden layer come after its propagation,
    :math:`\mathrm{ReLU}(\mathrm{LN}(\hat A H W))`, as in the authors' code
    (their ``GCN_GSL``); the paper's text puts the layer normalization in the
    fully connected layer :math:`f_B^{(l)}`, before :math:`\hat A` (no option
    selects that order).

    The sparse ``edge_index`` graph is propagated in one of two ways, the
    same math: ``aggregation="csr"`` (default) turns it into CSR matrices once
    per forward and every layer does one sparse-dense product (see
    :mod:`~torch_geometric_stream.ops.csr`; several times faster
    than gather/scatter at SLeDGe's sizes, and still differentiable in the
    edge weights); ``"message_passing"`` uses each ``GCNConv``'s
    gather/scatter ``propagate``. Dtypes other than float32/float64, and
    :mod:`torch.func` transforms (``grad``, ``vjp``, ...; their tensors have no
    sparse form), always use message passing. Under :class:`torch.autocast` the
    linear maps' lower-precision features are summed in the weights' dtype, as
    message passing sums them. Under PyG's explain mode (the edge masks that
    :mod:`torch_geometric.explain` and Captum's ``to_captum_model`` set on the
    convs) it propagates by message passing, which applies them. A dense
    normalized adjacency :math:`(N, N)` (``adj[target, source]``) goes through
    :meth:`forward_dense`.

    The layers call their convs' ``lin`` and, with message passing,
    ``propagate``, never the convs themselves (a module call per layer would
    cost the per-sample step): hooks on the backbone, on a ``convs[i].lin`` and,
    with message passing, PyG's propagate hooks fire; forward and backward hooks
    on ``convs[i]`` do not, so neither do what reads the layers' outputs through them
    (:func:`~torch_geometric.utils.get_embeddings`, hence ``PGExplainer``).
    For those, build
    ``GraphBackbone(..., conv=lambda i, o: GCNConv(i, o, normalize=False))``:
    the same layers with the bias after propagation, called as modules.

    Args:
        in_channels (int): input size.
        hidden_channels (int): hidden size (256 in the paper).
        out_channels (int): number of classes; the third argument, where
            PyG's ``BasicGNN`` models take ``num_layers``.
        num_layers (int): number of GCN layers :math:`\alpha_2`.
        normalization (str, optional): one of
            :data:`~torch_geometric_stream.graph.NORMALIZATIONS`: ``"symmetric"``
            (PyG's), ``"symmetric-add"`` (the paper's :math:`A + I` literally),
            ``"mean"`` (authors' code) or ``"none"``. (default: :obj:`"symmetric"`)
        dropout (float, optional): dropout between layers, its masks drawn
            from the attribute ``generator`` (``None``: torch's global
            generator; a generator of its own is not replayed by
            :func:`torch.utils.checkpoint`, which restores only torch's global
            ones, so its recomputed forward would draw other masks).
            (default: 0)
        aggregation (str, optional): one of :data:`AGGREGATIONS`.
            (default: :obj:`"csr"`)
        bias_position (str, optional): one of :data:`BIAS_POSITIONS`.
            (default: :obj:`"after"`)
    """

    _takes_sparse_rows = True  # its first layer's linear map multiplies them

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int,
                 num_layers: int, normalization: str = "symmetric", dropout: float = 0.0,
                 aggregation: str = "csr", bias_position: str = "after") -> None:
        super().__init__(in_channels, hidden_channels, out_channels, num_layers,
                         conv=_gcn_conv, normalization=normalization, dropout=dropout)
        if aggregation not in AGGREGATIONS:
            raise ValueError(f"aggregation must be one of {AGGREGATIONS}, got {aggregation!r}")
        if bias_position not in BIAS_POSITIONS:
            raise ValueError(f"bias_position must be one of {BIAS_POSITIONS}, "
                             f"got {bias_position!r}")
        self.aggregation, self.bias_position = aggregation, bias_position

    def forward_normalized(self, x: Tensor, edge_index: Tensor, edge_weight: Tensor) -> Tensor:
        """:meth:`GraphBackbone.forward_normalized`, aggregating through the CSR
        form of the graph unless ``aggregation="message_passing"`` (or a dtype
        or transform the CSR product does not support).

        Args:
            x (Tensor): the rows :math:`(N, F_{in})`.
            edge_index (Tensor): the edges :math:`(2, E)`, already checked.
            edge_weight (Tensor): their normalized weights :math:`(E,)`.

        Returns:
            Tensor: :math:`(N, F_{out})`.
        """
        # PyG's explain masks multiply the messages of propagate: the CSR product has none
        if self.aggregation == "message_passing" or not supports_csr(x) or self._explaining():
            return self._run(x, lambda conv, h: self._layer(conv, h, lambda z: conv.propagate(
                edge_index, x=z, edge_weight=edge_weight)))
        # forward checked the indices (check_graph_input); no second host sync here.
        # The graph is this forward's own: every layer's product (and its
        # backward's transpose) reuses the one CSR matrix of edge_weight.
        graph = CSRGraph(edge_index, x.size(0), check_indices=False, reuse_matrices=True)
        weight = edge_weight.to(x.dtype)

        def aggregate(z: Tensor) -> Tensor:
            # under autocast the linear map gives lower-precision features (bfloat16,
            # float16): summed in the weights' dtype, as message passing's weighted
            # messages are (the CSR product takes one dtype)
            return graph.aggregate(z if z.dtype == weight.dtype else z.to(weight.dtype),
                                   weight, check=False)

        return self._run(x, lambda conv, h: self._layer(conv, h, aggregate))

    def forward_dense(self, x: Tensor, adj: Tensor) -> Tensor:
        r"""Same layers with a dense normalized adjacency.

        Args:
            x (Tensor): the rows :math:`(N, F_{in})`.
            adj (Tensor): the normalized adjacency :math:`(N, N)`,
                ``adj[target, source]``.

        Returns:
            Tensor: :math:`(N, F_{out})`.

        Raises:
            TypeError / ValueError: for ``x`` or ``adj`` of another shape, dtype or
                device than the parameters', or on the ``meta`` device (shapes,
                dtypes and devices only: no value is read).
        """
        weight = cast("GCNConv", self.convs[0]).lin.weight
        check_node_features(x, self.in_channels, weight.dtype, device=weight.device)
        if not isinstance(adj, Tensor) or adj.dtype != x.dtype:
            raise TypeError(f"adj must be a {x.dtype} tensor like x, got "
                            f"{getattr(adj, 'dtype', type(adj).__name__)}")
        check_has_values(adj, "adj", strided=False)
        if adj.shape != (x.size(0), x.size(0)):
            raise ValueError(f"adj must have shape ({x.size(0)}, {x.size(0)}) for x's rows, "
                             f"got {tuple(adj.shape)}")
        check_same_device(adj, x.device, "adj", "x's device")
        return self._run(x, lambda conv, h: self._layer(conv, h, lambda z: adj @ z))

    def _layer(self, conv: GCNConv, h: Tensor, aggregate: Callable[[Tensor], Tensor]) -> Tensor:
        """``conv`` with its propagation replaced by ``aggregate``: linear map,
        then the neighbourhood sum, with the bias added after or before it."""
        z = conv.lin(h)
        if conv.bias is None:
            return aggregate(z)
        if self.bias_position == "before":
            return aggregate(z + conv.bias)
        return aggregate(z) + conv.bias


class MLPBackbone(_LayerStack):
    r"""Linear layers with LayerNorm + ReLU between them, ignoring any graph
    (the "Base" and "+M" ablations).

    Args:
        in_channels (int): input size.
        hidden_channels (int): hidden size.
        out_channels (int): output size (number of classes for logits);
            the third argument, where PyG's ``BasicGNN`` models take
            ``num_layers``.
        num_layers (int): number of linear layers.
        dropout (float, optional): dropout between layers, its masks drawn
            from the attribute ``generator`` (``None``: torch's global
            generator; a generator of its own is not replayed by
            :func:`torch.utils.checkpoint`, which restores only torch's global
            ones, so its recomputed forward would draw other masks).
            (default: 0)

    Shapes:
        - **input:** :math:`(N, F_{in})` (``edge_index``/``edge_weight`` ignored)
        - **output:** :math:`(N, F_{out})`
    """

    def __init__(self, in_channels: int, hidden_channels: int, out_channels: int,
                 num_layers: int, dropout: float = 0.0) -> None:
        super().__init__(in_channels, hidden_channels, out_channels, num_layers, dropout)
        self.lins = nn.ModuleList(
            nn.Linear(a, b) for a, b in _layer_sizes(in_channels, hidden_channels, out_channels,
                                                     num_layers))

    def forward(self, x: Tensor, edge_index: Optional[Tensor] = None,
                edge_weight: Optional[Tensor] = None) -> Tensor:
        """The layers over ``x`` alone.

        Args:
            x (Tensor): the rows :math:`(N, F_{in})`.
            edge_index (Tensor, optional): ignored, for the backbones' common
                signature. (default: :obj:`None`)
            edge_weight (Tensor, optional): ignored. (default: :obj:`None`)

        Returns:
            Tensor: :math:`(N, F_{out})`.

        Raises:
            TypeError / ValueError: for ``x`` of another width, dtype or device
                than the parameters', or on the ``meta`` device.
        """
        weight = cast(nn.Linear, self.lins[0]).weight
        check_node_features(x, self.in_channels, weight.dtype, device=weight.device)
        for i, lin in enumerate(self.lins):
            x = lin(x)
            if i < self.num_layers - 1:
                x = self._between_layers(x, i)
        return x
