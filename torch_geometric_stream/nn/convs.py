"""The convs :class:`~torch_geometric_stream.nn.GraphBackbone` takes, and how it
passes them the edge weights: the third argument of ``layer(x, edge_index, ...)``,
as ``edge_weight`` :math:`(E,)` or, to a conv whose forward takes ``edge_attr``,
as one feature per edge :math:`(E, 1)` (PyG's shape of edge features)."""
from __future__ import annotations

import inspect
from operator import attrgetter
from typing import TYPE_CHECKING, Callable, Optional

from torch import Tensor, nn

if TYPE_CHECKING:  # PyG is imported where a conv is built: the command line starts without it
    from torch_geometric.nn import MessagePassing

__all__ = ["ConvFactory", "build_conv", "edge_argument"]

ConvFactory = Callable[[int, int], "MessagePassing"]

#: Third ``forward`` arguments of PyG convs that are no edge weights: ``size``
#: (``SAGEConv``, ``GINConv``, ``MFConv``), ``batch`` (``GPSConv``), ``edge_type``
#: (``RGCNConv``, ...), ``neg_edge_index`` (``SignedConv``), ``edge_index``
#: (``GCN2Conv``, ``FAConv``: ``forward(x, x_0, edge_index, ...)``),
#: ``hyperedge_weight`` (``HypergraphConv``, whose second argument is a
#: node-hyperedge incidence), ``max_num_neighbors`` (``CuGraphSAGEConv``).
_NOT_EDGE_WEIGHTS = ("size", "batch", "edge_type", "neg_edge_index", "edge_index",
                     "hyperedge_weight", "max_num_neighbors")


def _gine_conv_size(conv: nn.Module) -> Optional[int]:
    # lin: PyG's Linear(edge_dim, in_channels), None without edge_dim
    lin = getattr(conv, "lin", None)
    return None if lin is None else int(lin.in_channels)


def _gen_conv_size(conv: nn.Module) -> Optional[int]:
    # without lin_edge (edge_dim None or out_channels) the edge features are
    # added to the messages, out_channels wide
    lin = getattr(conv, "lin_edge", None)
    return int(lin.in_channels) if lin is not None else int(getattr(conv, "out_channels"))


#: PyG convs taking ``edge_attr`` whose edge-feature size is no ``edge_dim``
#: attribute: the constructor argument that sets it, and how to read it off the
#: conv. The others (``GATConv``, ``GATv2Conv``, ``TransformerConv``,
#: ``PNAConv``, ``PDNConv``, ``ResGatedGraphConv``) keep ``edge_dim``, ``None``
#: when they take no edge features (and ignore or choke on them).
_EDGE_SIZES: dict[str, tuple[str, Callable[[nn.Module], Optional[int]]]] = {
    "GINEConv": ("edge_dim", _gine_conv_size),
    "GENConv": ("edge_dim", _gen_conv_size),
    "GeneralConv": ("in_edge_channels", attrgetter("in_edge_channels")),
    # edge features (CGConv), pseudo-coordinates (GMMConv, SplineConv)
    "CGConv": ("dim", attrgetter("dim")),
    "GMMConv": ("dim", attrgetter("dim")),
    "SplineConv": ("dim", attrgetter("dim")),
}


def _edge_size(conv: nn.Module) -> Optional[tuple[str, Optional[int]]]:
    """``(argument, size)``: the edge-feature size a conv taking ``edge_attr``
    was built for and the constructor argument that sets it; ``None`` for a
    conv that declares none (``NNConv``, whose ``nn`` takes them, or a conv of
    the user's own)."""
    for cls in type(conv).__mro__:
        if cls.__module__.startswith("torch_geometric.") and cls.__name__ in _EDGE_SIZES:
            argument, size = _EDGE_SIZES[cls.__name__]
            return argument, size(conv)
    if hasattr(conv, "edge_dim"):
        return "edge_dim", getattr(conv, "edge_dim")
    return None


#: :func:`_third_argument` by module class.
_THIRD_ARGUMENTS: dict[type[nn.Module], Optional[str]] = {}


def _third_argument(module: nn.Module) -> Optional[str]:
    """The parameter of ``module``'s ``forward`` that takes the third positional
    argument (``None``: it takes no three), read once per class."""
    module_type = type(module)
    if module_type not in _THIRD_ARGUMENTS:
        try:
            bound = inspect.signature(module_type.forward).bind(None, None, None, None)
            _THIRD_ARGUMENTS[module_type] = list(bound.arguments)[-1]
        except (TypeError, ValueError):
            _THIRD_ARGUMENTS[module_type] = None
    return _THIRD_ARGUMENTS[module_type]


def build_conv(conv: ConvFactory, in_channels: int, out_channels: int) -> nn.Module:
    """``conv(in_channels, out_channels)``, checked.

    Args:
        conv (callable): the factory of :class:`~torch_geometric_stream.nn.GraphBackbone`.
        in_channels (int): the layer's input size.
        out_channels (int): its output size.

    Raises:
        TypeError: unless ``conv`` is callable and builds a module callable as
            ``layer(x, edge_index, edge_weight)`` whose third argument is not
            one of :data:`_NOT_EDGE_WEIGHTS` and, if it is ``edge_attr``, that
            was built for one feature per edge (anything else would fail only
            at the first forward, deep inside it, or ignore the weights).
    """
    if not callable(conv):
        raise TypeError(f"conv must be a callable conv(in_channels, out_channels), got "
                        f"{type(conv).__name__}")
    layer = conv(in_channels, out_channels)
    third = _third_argument(layer) if isinstance(layer, nn.Module) else None
    if third is None:
        raise TypeError(f"conv({in_channels}, {out_channels}) must return a module called as "
                        f"layer(x, edge_index, edge_weight), such as a MessagePassing layer, "
                        f"got {type(layer).__name__}")
    built = f"conv({in_channels}, {out_channels}) builds {type(layer).__name__}, whose forward"
    use_instead = "use a conv that takes edge_weight (GCNConv, GraphConv, LEConv, ...)"
    if third in _NOT_EDGE_WEIGHTS:
        raise TypeError(f"{built} takes {third!r} where GraphBackbone passes edge weights: "
                        f"{use_instead}")
    size = _edge_size(layer) if third == "edge_attr" else None
    if size is not None and size[1] != 1:
        raise TypeError(f"{built} takes 'edge_attr' (GraphBackbone passes the weights as one "
                        f"feature per edge), but it was not built for 1-dim edge features: "
                        f"build it with {size[0]}=1, or {use_instead}")
    return layer


def edge_argument(conv: nn.Module, edge_weight: Tensor) -> Tensor:
    """What ``conv`` gets for the edge weights: the weights themselves, or one
    feature per edge :math:`(E, 1)` for a conv whose forward takes ``edge_attr``
    (one lookup per class after the first).

    Args:
        conv (Module): a layer :func:`build_conv` built.
        edge_weight (Tensor): the weights :math:`(E,)`.
    """
    if _third_argument(conv) == "edge_attr":
        return edge_weight.view(-1, 1)
    return edge_weight
