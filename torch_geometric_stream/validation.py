"""Input checks shared by every public entry point.

Each function either returns a clean tensor or raises :class:`TypeError` /
:class:`ValueError` with a message that names the problem.  They never mutate
their input.
"""
from __future__ import annotations

import math
import numbers
import warnings
from contextlib import contextmanager, nullcontext
from itertools import chain
from typing import Any, Callable, ContextManager, Iterator, Mapping, Optional, Sequence

import numpy as np
import torch
from torch import Tensor, nn

__all__ = ["CPU", "INDEX_DTYPES", "as_feature_matrix", "as_label_vector", "cast_overflow", "check_bool",
           "check_cast_keeps_finite", "check_kept_settings", "check_choice", "check_device", "check_dropout",
           "check_edge_index", "check_finite",
           "check_graph_input", "check_has_values", "check_mapping", "check_node_features",
           "check_nonnegative", "check_positive", "check_positive_int", "check_real",
           "check_row_index", "check_row_mask", "check_same_device", "check_seed",
           "check_state_entries", "check_unit_interval", "check_weighted_graph",
           "describe_index", "first_offender", "not_a_count", "ragged_refused",
           "refuse_tracer", "same_setting", "to_device", "torchscript_unsupported"]


#: Dtypes accepted for row indices (``edge_index``, query rows, targets).
INDEX_DTYPES = (torch.int64, torch.int32)

_INT64 = np.iinfo(np.int64)
#: The host device, to compare a tensor's device with (cheaper than reading its type).
CPU = torch.device("cpu")


def _ragged_warning() -> Optional[type[Warning]]:
    """The warning NumPy gives where it makes an object array of the rows of a
    ragged nested sequence (before 1.24), or ``None`` where it refuses one
    (``ValueError``)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            np.asarray([[0.0], [0.0, 0.0]])
        except ValueError:
            return None
    return caught[0].category


#: What this NumPy warns of a ragged nested sequence (see :func:`ragged_refused`).
_RAGGED_WARNING = _ragged_warning()


@contextmanager
def _refusing(category: type[Warning]) -> Iterator[None]:
    """Raise the warnings of ``category`` given inside as :class:`ValueError`."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", category)
        try:
            yield
        except category as warning:
            raise ValueError(str(warning)) from None


def ragged_refused() -> ContextManager[None]:
    """A context in which NumPy refuses a ragged nested sequence (rows of
    different lengths) with a :class:`ValueError`, as it does itself from 1.24 on;
    before, it warns and makes an object array of the rows."""
    return nullcontext() if _RAGGED_WARNING is None else _refusing(_RAGGED_WARNING)


def _to_tensor(value: Any, name: str) -> Tensor:
    if isinstance(value, Tensor):
        check_has_values(value, name)
        return value
    if isinstance(value, np.generic):  # NumPy scalars, e.g. np.uint64(1)
        value = np.asarray(value)
    if isinstance(value, np.ndarray):
        if value.dtype == object or value.dtype.kind in "USVMm":
            raise TypeError(f"{name} must be numeric, got a NumPy array of dtype {value.dtype}")
        if value.dtype.kind == "f" and value.dtype.itemsize > 8:  # long double
            value = value.astype(np.float64)
        if not value.dtype.isnative:  # e.g. big-endian '>f8' from a file: torch refuses it
            value = value.astype(value.dtype.newbyteorder("="))
        if not value.flags.writeable:  # torch would warn, and share memory it may not write
            value = value.copy()
        if value.dtype == np.uint64:  # torch would wrap values >= 2**63 to negative ones
            if value.size and value.max() > _INT64.max:
                raise _beyond_int64(name, int(value.max()))
            value = value.astype(np.int64)
        return _converted(torch.from_numpy, np.ascontiguousarray(value), name)
    if isinstance(value, (list, tuple)):
        try:
            with ragged_refused():
                array = np.asarray(value)
        except ValueError as error:
            raise ValueError(f"{name} is a ragged nested sequence: {error}") from None
        return _to_tensor(_typed(array, name) if array.dtype == object else array, name)
    if isinstance(value, numbers.Number) and not isinstance(value, bool):
        if isinstance(value, int) and not _INT64.min <= value <= _INT64.max:
            raise _beyond_int64(name, value)
        return _converted(torch.as_tensor, value, name)
    raise TypeError(
        f"{name} must be a torch.Tensor, a NumPy array or a sequence of numbers, "
        f"got {type(value).__name__}")


def check_has_values(tensor: Tensor, name: str, *, strided: bool = True) -> None:
    """Raise a :class:`TypeError` unless ``tensor``'s values can be read: a tensor
    on the ``meta`` device has a shape and a dtype but no values to check or
    learn from. No value is read.

    Args:
        tensor (Tensor): the tensor to check.
        name (str): how it is called in the message.
        strided (bool, optional): refuse a sparse tensor too (most element-wise
            and reduction kernels have no sparse form). (default: ``True``)
    """
    if strided and tensor.layout != torch.strided:
        raise TypeError(f"{name} must be a dense tensor, got layout {tensor.layout}")
    if tensor.is_meta:
        raise TypeError(f"{name} is on the 'meta' device, which holds no values: "
                        f"pass a tensor with data (e.g. on the CPU)")


def _converted(convert: Any, value: Any, name: str) -> Tensor:
    """``convert(value)``, with torch's conversion errors re-raised naming ``name``."""
    try:
        return convert(value)
    except (OverflowError, ValueError) as error:
        raise ValueError(f"{name} holds a value torch cannot represent: {error}") from None
    except (RuntimeError, TypeError) as error:  # RuntimeError: "Could not infer dtype of X"
        raise TypeError(f"{name} has a type torch cannot convert: {error}") from None


def _typed(array: np.ndarray, name: str) -> np.ndarray:
    """The object array NumPy made of a nested list of Python values, typed as NumPy
    types values that fit: floating (complex) where a value is a float (complex), so
    that an ``int`` beyond ``int64``'s range among floats is read as a float, as a
    small one is. Raises naming the first element that is no number torch converts
    (a :class:`TypeError`) or, among integers only, the first beyond ``int64``'s
    range (a :class:`ValueError`); other arrays are returned as they are."""
    def where(index: tuple) -> Any:
        return index[0] if array.ndim == 1 else index

    for index, element in np.ndenumerate(array):
        if not isinstance(element, (int, float, complex, np.number, np.bool_)):
            raise TypeError(f"{name} has a type torch cannot convert: "
                            f"{type(element).__name__} at index {where(index)}")
    elements = array.ravel().tolist()
    inexact = (np.complex128 if any(isinstance(e, (complex, np.complexfloating))
                                    for e in elements) else
               np.float64 if any(isinstance(e, (float, np.floating)) for e in elements)
               else None)
    if inexact is not None:
        try:
            return array.astype(inexact)
        except OverflowError as error:  # an int too large for a float64
            raise ValueError(f"{name} holds a value torch cannot represent: {error}") from None
    for index, element in np.ndenumerate(array):
        if isinstance(element, int) and not _INT64.min <= element <= _INT64.max:
            raise _beyond_int64(name, element, where(index))
    return array


def _beyond_int64(name: str, value: int, index: Any = None) -> ValueError:
    """The error for an integer ``value`` (at ``index``) beyond ``int64``'s range."""
    where = "" if index is None else f" at index {index}"
    return ValueError(f"{name} holds a value torch cannot represent: {value}{where} is "
                      f"outside the int64 range [-2**63, 2**63 - 1]")


def as_feature_matrix(x: Any, num_features: Optional[int], *, name: str = "x",
                      device: Optional[torch.device] = None,
                      dtype: torch.dtype = torch.float32, finite_norms: bool = False) -> Tensor:
    r"""Validate feature rows and return them as a :math:`(n, d)` float tensor.

    Args:
        x (Tensor or array-like): one sample :math:`(d,)` or a batch :math:`(n, d)`; any floating
            dtype.
        num_features (int or None): the expected :math:`d` (``None`` accepts any).
        name (str, optional): how the argument is called in error messages. (default: :obj:`"x"`)
        device (torch.device, optional): where the result goes (default: where ``x`` is). Values
            are checked before the move, so host rows going to a GPU cost no host-device
            synchronization.
        dtype (torch.dtype, optional): the floating dtype of the result.
            (default: :obj:`torch.float32`)
        finite_norms (bool, optional): also refuse rows whose L2 norm overflows ``dtype``
            (float32: entries beyond about 1.8e19), which L2 normalization
            would turn into zero rows (for learners that normalize raw rows).
            (default: :obj:`False`)

    Returns:
        The rows without autograd history: a learner never sends a gradient
        into a caller's tensor that requires one.

    Raises:
        TypeError: for integer, boolean, complex or non-numeric input.
        ValueError: for a wrong number of dimensions or features, an empty
            batch, rows without features, NaN/inf values, or (``finite_norms``) an overflowing norm.
    """
    tensor = _to_tensor(x, name)
    if tensor.requires_grad:  # no new tensor object (0.7 us) in the usual case
        tensor = tensor.detach()
    if tensor.dtype.is_complex or not tensor.dtype.is_floating_point:
        raise TypeError(f"{name} must have a floating-point dtype, got {tensor.dtype}")
    if tensor.dim() == 1:
        tensor = tensor.unsqueeze(0)
    elif tensor.dim() != 2:
        raise ValueError(f"{name} must be one sample (d,) or a batch (n, d), "
                         f"got shape {tuple(tensor.shape)}")
    if tensor.size(0) == 0:
        raise ValueError(f"{name} is an empty batch (0 rows)")
    if tensor.size(1) == 0:
        raise ValueError(f"{name} has no features (shape {tuple(tensor.shape)}): each row "
                         f"needs at least one")
    if num_features is not None and tensor.size(1) != num_features:
        raise ValueError(f"{name} has {tensor.size(1)} features, expected {num_features}")
    # checked where the rows are (host rows: no device synchronization), after
    # the cast (which can overflow); then moved by to_device
    given, tensor = tensor, tensor.to(dtype=dtype)
    # one read of the values: a row's norm is finite only if its entries are
    checked = torch.linalg.vector_norm(tensor, dim=-1) if finite_norms else tensor
    if not bool(torch.isfinite(checked).all()):
        if not bool(torch.isfinite(tensor).all()):
            if bool(torch.isfinite(given).all()):
                raise ValueError(f"{name} holds values beyond {dtype}'s range (about "
                                 f"±{torch.finfo(dtype).max:.1e}); scale the features first")
            raise ValueError(f"{name} contains NaN or inf values")
        row = int(torch.isfinite(checked).logical_not().nonzero()[0, 0])
        raise ValueError(f"{name} row {row} is too large: its L2 norm overflows {dtype} "
                         f"(entries up to about {math.sqrt(torch.finfo(dtype).max):.1e}); "
                         f"scale the features first")
    return tensor if device is None else to_device(tensor, device)


def to_device(tensor: Tensor, device: torch.device) -> Tensor:
    """``tensor`` on ``device``, the copy from pageable host memory to an
    accelerator not waiting for it: CUDA stages such a source before the call
    returns, so that the caller may change or free it at once. A copy from
    pinned memory waits (the device reads it later, maybe after the caller
    refilled it), as does one to the host (the host could read it too early).
    On the CPU, :meth:`~torch.Tensor.is_pinned` is not asked.

    Args:
        tensor (Tensor): the tensor to move.
        device (torch.device): where it goes.
    """
    return tensor.to(device, non_blocking=device != CPU and tensor.is_cpu
                     and not tensor.is_pinned())


def as_label_vector(y: Any, num_rows: int, num_classes: int, *,
                    device: Optional[torch.device] = None) -> Tensor:
    """Validate labels and return a :math:`(n,)` ``int64`` tensor, ``-1`` = unlabeled.

    Args:
        y (int or Tensor or array-like or None): the labels: ``None`` (every row unlabeled), a
            Python ``int`` or a 0-d tensor (a single row), or :math:`(n,)` class ids; in a list or
            tuple, ``None`` marks an unlabeled row as ``-1`` does (``[3, None, 0]``).
        num_rows (int): the expected :math:`n`, the rows of ``x``.
        num_classes (int): the number of classes :math:`c`.
        device (torch.device, optional): where the result goes; ``None``: where
            ``y`` is (torch's default device for ``y=None``).

    Raises:
        TypeError: for float, boolean or non-numeric labels.
        ValueError: for a length that differs from ``num_rows`` or a value
            outside :math:`[-1, c)`.
    """
    if y is None:
        return torch.full((num_rows,), -1, dtype=torch.long, device=device)
    if isinstance(y, (list, tuple)):
        y = [-1 if label is None else label for label in y]
        flag = next((index for index, label in enumerate(y)
                     if isinstance(label, (bool, np.bool_))), None)
        if flag is not None:  # [1, True] would read True as class 1
            raise TypeError(f"y must hold integer class ids, got bool {y[flag]!r} at "
                            f"index {flag}")
    if isinstance(y, bool) or isinstance(y, np.bool_):
        raise TypeError("y must be an integer class id, got bool")
    if isinstance(y, (float, np.floating)):
        raise TypeError(f"y must be an integer class id, got float {y!r}")
    tensor = _to_tensor(y, "y")
    if tensor.dtype == torch.bool or tensor.dtype.is_floating_point or tensor.dtype.is_complex:
        raise TypeError(f"y must have an integer dtype, got {tensor.dtype}")
    tensor = tensor.reshape(-1) if tensor.dim() == 0 else tensor
    if tensor.dim() != 1 or tensor.numel() != num_rows:
        raise ValueError(f"y has shape {tuple(tensor.shape)} but x has {num_rows} row(s)")
    tensor = tensor.to(device=device if device is not None else tensor.device, dtype=torch.long)
    if num_rows and bool(((tensor < -1) | (tensor >= num_classes)).any()):
        bad = tensor[(tensor < -1) | (tensor >= num_classes)][0].item()
        raise ValueError(f"label {bad} is outside [0, {num_classes}) (use -1 for unlabeled)")
    return tensor


def check_node_features(x: Any, in_channels: int, dtype: Optional[torch.dtype],
                        name: str = "x", *, device: Optional[torch.device] = None,
                        strided: bool = False) -> None:
    """Raise unless ``x`` is a tensor :math:`(N, F_{in})` for a module. Shape, dtype
    and device only: no value is read, so no device sync.

    Args:
        x (Tensor): the node features.
        in_channels (int): the expected :math:`F_{in}`.
        dtype (torch.dtype or None): the dtype of the module's parameters that
            ``x`` must have; ``None`` accepts any floating dtype.
        name (str, optional): how ``x`` is called in messages. (default: ``"x"``)
        device (torch.device, optional): the module's device, where ``x`` must
            lie if given. (default: ``None``)
        strided (bool, optional): refuse sparse layouts (see
            :func:`check_has_values`). (default: ``False``)

    Raises:
        TypeError: for a non-tensor, a tensor on the ``meta`` device (or sparse,
            with ``strided``), or a wrong dtype.
        ValueError: for a wrong shape or device.
    """
    if not isinstance(x, Tensor):
        refuse_tracer(x, name)
        raise TypeError(f"{name} must be a tensor, got {type(x).__name__}")
    check_has_values(x, name, strided=strided)
    if x.dim() != 2 or x.size(1) != in_channels:
        raise ValueError(f"{name} must have shape (N, {in_channels}), got {tuple(x.shape)}")
    if dtype is None and not x.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got {x.dtype}")
    if dtype is not None and x.dtype != dtype:
        raise TypeError(f"{name} must be {dtype} like the module's parameters, got {x.dtype}")
    if device is not None:
        check_same_device(x, device, name, "the module's device")


def check_graph_input(x: Any, edge_index: Any, edge_weight: Any, in_channels: int,
                      dtype: Optional[torch.dtype], *,
                      device: Optional[torch.device] = None, strided: bool = False) -> None:
    """Raise unless ``x``, ``edge_index`` and ``edge_weight`` fit together, all on
    ``x``'s device. Reading the indices' range costs one host sync on a GPU:
    this is for public entry points, not for a per-sample step that built its
    graph itself.

    Args:
        x (Tensor): the node features :math:`(N, F_{in})`, checked as by
            :func:`check_node_features`.
        edge_index (Tensor): the edges :math:`(2, E)`: integer, every index in
            :math:`[0, N)`.
        edge_weight (Tensor or None): ``None`` or floating :math:`(E,)` weights.
        in_channels (int): the expected :math:`F_{in}`.
        dtype (torch.dtype or None): the dtype ``x`` must have (``None``: any
            floating dtype).
        device (torch.device, optional): the module's device, where ``x`` must
            lie if given. (default: ``None``)
        strided (bool, optional): refuse a sparse ``x`` (see
            :func:`check_node_features`). (default: :obj:`False`)
    """
    check_node_features(x, in_channels, dtype, device=device, strided=strided)
    check_weighted_graph(edge_index, edge_weight, x.size(0), what=f" (x has {x.size(0)} rows)")
    check_same_device(edge_index, x.device, "edge_index", "x's device")


def check_weighted_graph(edge_index: Any, edge_weight: Any, num_nodes: int,
                         what: str = "") -> None:
    """Raise unless ``edge_index`` and ``edge_weight`` form a weighted graph over
    ``num_nodes`` nodes (one host sync on a GPU).

    Args:
        edge_index (Tensor): the edges :math:`(2, E)`, integer indices in :math:`[0, N)`.
        edge_weight (Tensor or None): ``None`` or a dense floating :math:`(E,)` tensor with
            values, on ``edge_index``'s device.
        num_nodes (int): the number of nodes :math:`N` (``>= 0``).
        what (str, optional): as for :func:`check_edge_index`. (default: ``""``)
    """
    check_positive_int(num_nodes, "num_nodes", minimum=0)
    check_edge_index(edge_index, num_nodes, what=what)
    if edge_weight is None:
        return
    if not isinstance(edge_weight, Tensor) or not edge_weight.is_floating_point():
        raise TypeError(f"edge_weight must be a floating-point tensor or None, got "
                        f"{getattr(edge_weight, 'dtype', type(edge_weight).__name__)}")
    check_has_values(edge_weight, "edge_weight")
    if edge_weight.shape != (edge_index.size(1),):
        raise ValueError(f"edge_weight must have shape ({edge_index.size(1)},) like "
                         f"edge_index's edges, got {tuple(edge_weight.shape)}")
    check_same_device(edge_weight, edge_index.device, "edge_weight", "edge_index's device")


def check_same_device(tensor: Tensor, device: torch.device, name: str, where: str) -> None:
    """Raise a :class:`ValueError` unless ``tensor`` lies on ``device``.

    Args:
        tensor (Tensor): the tensor to check.
        device (torch.device): where it must lie.
        name (str): how ``tensor`` is called in the message.
        where (str): what names ``device`` in the message, e.g. ``"x's device"``.
    """
    if tensor.device != device:
        raise ValueError(f"{name} must be on {where} {device}, got {tensor.device}")


def check_row_mask(mask: Any, rows: Tensor, name: str, where: str) -> None:
    """Raise unless ``mask`` is a boolean tensor :math:`(N,)` over the :math:`N`
    rows of ``rows``, on their device; no value is read.

    Args:
        mask (Tensor): the mask to check.
        rows (Tensor): the rows it selects from.
        name (str): how ``mask`` is called in messages.
        where (str): what names ``rows``' device in the message.

    Raises:
        TypeError: unless ``mask`` is a boolean tensor.
        ValueError: for a wrong shape or device.
    """
    if not isinstance(mask, Tensor) or mask.dtype != torch.bool:
        raise TypeError(f"{name} must be a boolean tensor, got "
                        f"{getattr(mask, 'dtype', type(mask).__name__)}")
    if mask.shape != (rows.size(0),):
        raise ValueError(f"{name} must have shape ({rows.size(0)},), got {tuple(mask.shape)}")
    check_same_device(mask, rows.device, name, where)


def check_edge_index(edge_index: Any, num_nodes: int, check_indices: bool = True,
                     what: str = "") -> None:
    """Raise unless ``edge_index`` is a dense ``int64`` (or ``int32``) tensor
    :math:`(2, E)` with values.

    Args:
        edge_index (Tensor): the edges to check.
        num_nodes (int): the number of nodes :math:`N`.
        check_indices (bool, optional): also check that every index lies in
            :math:`[0, N)` (reading their range costs one host sync on a GPU).
            (default: ``True``)
        what (str, optional): what follows the range in the message, e.g.
            ``" (x has 5 rows)"``. (default: ``""``)

    Raises:
        TypeError: for a non-tensor, a sparse tensor (a sparse adjacency matrix,
            PyG's ``adj_t`` included: the message says how to pass its entries)
            or a wrong dtype.
        ValueError: for a wrong shape or an index out of range.
    """
    if not isinstance(edge_index, Tensor):
        refuse_tracer(edge_index, "edge_index")
        raise TypeError(f"edge_index must be a tensor, got {type(edge_index).__name__}"
                        + _adjacency_hint(edge_index))
    if edge_index.layout != torch.strided:  # before the shape: an (N, N) matrix
        raise TypeError(f"edge_index must be a dense tensor, got layout {edge_index.layout}"
                        + _adjacency_hint(edge_index))
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise ValueError(f"edge_index must have shape (2, E), got {tuple(edge_index.shape)}")
    if edge_index.dtype not in INDEX_DTYPES:
        raise TypeError(f"edge_index must be an int64 (or int32) tensor, got {edge_index.dtype}")
    check_has_values(edge_index, "edge_index")
    if check_indices:
        _check_index_range(edge_index, num_nodes, "edge_index", "node indices", what)


def _adjacency_hint(edge_index: Any) -> str:
    """How to pass the graph of a sparse adjacency matrix (a sparse tensor or
    PyG's ``SparseTensor``) that was given as ``edge_index``; ``""`` for anything else."""
    from torch_geometric.typing import SparseTensor  # (a placeholder without torch-sparse)
    if isinstance(edge_index, SparseTensor):
        # PyG's adj_t: row the target, col the source
        return ("; a SparseTensor is not taken as edge_index: for PyG's adj_t "
                "(adj_t[target, source]) pass row, col, value = adj_t.coo(); "
                "edge_index = torch.stack([col, row]), edge_weight = value")
    if not isinstance(edge_index, Tensor) or edge_index.layout == torch.strided:
        return ""
    return ("; a sparse adjacency matrix is not taken as edge_index: pass its entries as "
            "edge_index (2, E) (row 0 the sources, row 1 the targets, PyG's convention) "
            "and edge_weight (E,): for adj[source, target], a = adj.to_sparse_coo().coalesce(); "
            "edge_index, edge_weight = a.indices(), a.values() (for PyG's transposed "
            "adj_t[target, source]: a.indices().flip(0)). GCNBackbone.forward_dense(x, adj_t) "
            "takes an already normalized adjacency as it is")


def describe_index(value: Any) -> str:
    """What an index argument is, for a message: its shape and dtype, or its type.

    Args:
        value (Any): the argument.
    """
    if isinstance(value, Tensor):
        return f"shape {tuple(value.shape)}, dtype {value.dtype}"
    return type(value).__name__


def first_offender(bad: Tensor, values: Tensor) -> str:
    """``"[i] = v"``: the first index where ``bad`` holds and the entry of
    ``values`` there, for a message that names one offending entry rather than
    listing a whole state.

    Args:
        bad (Tensor): a boolean tensor of the shape of ``values`` that holds
            somewhere.
        values (Tensor): the entries.
    """
    index = tuple(int(i) for i in bad.nonzero()[0])
    where = ", ".join(map(str, index))
    return f"[{where}] = {values[index].item()}"


#: The floating dtypes a cast can overflow into inf (float8 types saturate or have no inf).
_DTYPES_WITH_INF = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def cast_overflow(values: Tensor, dtype: torch.dtype) -> Optional[str]:
    """The first entry of ``values`` that a cast to ``dtype`` turns from finite into
    inf, for a message.

    Args:
        values (Tensor): the floating entries.
        dtype (torch.dtype): the floating dtype of the cast.

    Returns:
        ``"[i] = v is beyond float16's range (|x| <= 65504)"``, or ``None`` if
        there is none (also for a cast to a dtype at least as wide).
    """
    if torch.finfo(dtype).max >= torch.finfo(values.dtype).max:
        return None
    overflow = torch.isfinite(values) & ~torch.isfinite(values.detach().to(dtype))
    if not bool(overflow.any()):
        return None
    return (f"{first_offender(overflow, values)} is beyond {str(dtype).removeprefix('torch.')}'s "
            f"range (|x| <= {torch.finfo(dtype).max:.7g})")


def check_kept_settings(state: Mapping[str, Any], own: Mapping[str, Any], subject: str,
                        noun: str, required: tuple[str, ...] = ()) -> None:
    """Raise ``ValueError`` for the first setting of ``own`` (name: value) that the
    ``state`` (a mapping) was kept with another value of (by :func:`same_setting`: a
    list for a tuple is the same value): a state learned under one setting is not
    the state of an object built with another. A state without a
    setting, saved before it was kept, is not checked on it, unless the setting is
    ``required`` (then the state had ``None``).

    Args:
        state (Mapping): the state, with the settings it was kept with.
        own (Mapping): the object's own settings, by name, in the order to check.
        subject (str): the state's owner, as the message's subject (``"the quantile
            range's"``, ``"the OnlineMinMaxScaler"``).
        noun (str): what the object is called (``"range"``, ``"scaler"``).
        required (tuple, optional): the settings a state without them had ``None`` of.
            (default: ``()``)
    """
    for name, value in own.items():
        kept = state.get(name) if name in required else state.get(name, value)
        if not same_setting(kept, value):
            raise ValueError(f"{subject} state was kept with {name}={kept!r}, this {noun} has "
                             f"{name}={value!r}: build it with the state's {name}")


def same_setting(kept: Any, value: Any) -> bool:
    """Whether a setting a state was kept with, ``kept``, is ``value``: compared by
    value, a list or a tuple as the tuple of its entries, recursively (a JSON round
    trip, or a user writing the settings by hand, turns a tuple into a list), and
    numbers as Python compares them (``2 == 2.0``: a constructor takes an ``int``
    for a ``float`` setting and keeps it as given or as a ``float``).

    Args:
        kept (Any): the state's setting.
        value (Any): the object's own setting.
    """
    return _setting_form(kept) == _setting_form(value)


def _setting_form(value: Any) -> Any:
    """``value`` with every list and tuple in it, recursively, as a tuple."""
    if isinstance(value, (list, tuple)):
        return tuple(map(_setting_form, value))
    return value


def check_cast_keeps_finite(module: nn.Module, fn: Callable[[Tensor], Tensor]) -> None:
    """Raise before ``module._apply(fn)`` (``.half()``, ``.to(dtype)``) casts a
    floating parameter or buffer to a narrower dtype that would turn one of its
    finite values into inf (``.half()`` of a running range that saw 1e5):
    nothing of ``module`` is cast then (a container of it may have cast its other
    children already).

    Args:
        module (nn.Module): the module about to be cast.
        fn (Callable): the function ``_apply`` maps over its tensors; it is
            probed on an empty tensor, so moves between devices and widening
            casts read no value.

    Raises:
        ValueError: if the cast would turn a finite value into inf.
    """
    for name, tensor in chain(module.named_parameters(), module.named_buffers()):
        if not tensor.is_floating_point() or tensor.is_meta:
            continue
        dtype = fn(tensor.new_empty(0)).dtype
        if dtype == tensor.dtype or dtype not in _DTYPES_WITH_INF:  # float8: no inf to check
            continue
        overflow = cast_overflow(tensor, dtype)
        if overflow is not None:
            raise ValueError(f"{name}{overflow}: {type(module).__name__} in "
                             f"{str(dtype).removeprefix('torch.')} would hold inf there; "
                             f"the cast was refused")


def not_a_count(values: Tensor) -> Tensor:
    r"""The boolean mask of the entries of ``values`` that are no count an ``int64``
    holds: negative, or, in a floating tensor (older states may keep counts as
    floats), NaN, infinite, fractional or :math:`\geq 2^{63}` (each of which an
    integer buffer would load as a wrong count, e.g. ``INT64_MIN``).

    Args:
        values (Tensor): the counts.
    """
    bad = values < 0
    if values.is_floating_point():
        bad |= ~torch.isfinite(values) | (values != values.trunc()) | (values >= 2.0 ** 63)
    return bad


def check_row_index(index: Any, num_rows: int, name: str = "query_index") -> None:
    """Raise unless ``index`` is a dense 1-D ``int64`` (or ``int32``) tensor of row
    indices in :math:`[0, N)` (reading their range costs one host sync on a GPU).

    Args:
        index (Tensor): the row indices.
        num_rows (int): the number of rows :math:`N`.
        name (str, optional): how ``index`` is called in messages.
            (default: ``"query_index"``)

    Raises:
        TypeError: for a non-tensor, a wrong dtype or number of dimensions.
        ValueError: for an index out of range.
    """
    if not isinstance(index, Tensor) or index.dim() != 1 or index.dtype not in INDEX_DTYPES:
        raise TypeError(f"{name} must be a 1-D int64 (or int32) integer tensor of row "
                        f"indices, got {describe_index(index)}")
    check_has_values(index, name)
    _check_index_range(index, num_rows, name, "row indices")


def _check_index_range(index: Tensor, size: int, name: str, kind: str,
                       what: str = "") -> None:
    """Raise unless every entry of ``index`` lies in :math:`[0, size)` (one host
    sync: both ends are read together); ``what`` follows the range in the message.
    Under :func:`torch.func.vmap`, whose batched tensors have no values to read,
    the indices of every sample are read together; under ``torch.export``, whose
    program would keep no check of them, none is read."""
    # (here, not at the top: the ops package imports this module)
    from torch_geometric_stream.ops.functorch import is_exporting, unwrapped
    if index.numel() and not is_exporting():
        low, high = torch.stack(torch.aminmax(unwrapped(index))).tolist()
        if low < 0 or high >= size:
            raise ValueError(f"{name} must hold {kind} in [0, {size}){what}, got values in "
                             f"[{low}, {high}]")


def check_positive_int(value: Any, name: str, minimum: int = 1,
                       maximum: Optional[int] = None) -> int:
    """Return ``value`` as ``int`` if it is an integer ``>= minimum`` (and
    ``<= maximum``).

    Args:
        value (Any): the value to check.
        name (str): how it is called in messages.
        minimum (int, optional): the smallest value allowed. (default: ``1``)
        maximum (int, optional): the largest value allowed; ``None``: no bound.
            (default: :obj:`None`)

    Raises:
        TypeError: for a non-integer (a bool included).
        ValueError: for a value below ``minimum`` or above ``maximum``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        refuse_tracer(value, name)  # (a traced size is a tensor or a Proxy)
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and int(value) > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
    return int(value)


def torchscript_unsupported(what: str) -> TypeError:
    """The error for TorchScript (``torch.jit.script``, ``torch.jit.trace``) of ``what``.

    Args:
        what (str): what is refused, e.g. a module's class name.
    """
    return TypeError(
        f"TorchScript (torch.jit.script, torch.jit.trace, torch.onnx.export's TorchScript "
        f"exporter) is not supported by {what}: the package's modules check their inputs "
        f"in Python and run custom autograd Functions and sparse kernels; use "
        f"torch.compile (or the eager module) instead")


def refuse_tracer(value: Any, name: str) -> None:
    """Raise a :class:`TypeError` naming the tracer when ``value``, which failed a
    type check, is a tracer's stand-in: a :class:`torch.fx.Proxy`
    (``torch.fx.symbolic_trace``, PyG's ``to_hetero``) or, while
    ``torch.jit.trace`` runs, a traced size (a tensor where an ``int`` was
    expected). For the failing branch of the checks only (no cost to eager calls).

    Args:
        value (Any): the value that failed.
        name (str): how it is called in the message.
    """
    from torch.fx import Proxy  # (here: the failing branch)
    if isinstance(value, Proxy):
        raise TypeError(
            f"{name} is a torch.fx Proxy: torch.fx symbolic tracing (torch.fx.symbolic_trace, "
            f"torch_geometric.nn.to_hetero) is not supported, as the modules check their "
            f"inputs' shapes and values in Python; use torch.compile to compile, and for "
            f"heterogeneous graphs one module per node or edge type (a ModuleDict keyed by "
            f"type; PyG's HeteroConv for its convs) instead of to_hetero")
    if torch.jit.is_tracing():
        raise torchscript_unsupported("torch_geometric_stream's graph modules")


def check_choice(value: Any, choices: tuple, name: str) -> None:
    """Raise a :class:`ValueError` naming ``name`` unless ``value`` is one of
    ``choices``.

    Args:
        value (Any): the value to check.
        choices (tuple): the values allowed.
        name (str): how it is called in the message.
    """
    if value not in choices:
        raise ValueError(f"{name} must be one of {choices}, got {value!r}")


#: Seeds reach :func:`torch.manual_seed`, which takes 64-bit unsigned integers.
_SEED_LIMIT = 2 ** 64


def check_mapping(value: Any, name: str, what: str = " (e.g. a dict)"
                  ) -> Optional[Mapping[str, Any]]:
    """Return ``value`` if it is ``None`` or a mapping, else raise a
    :class:`TypeError` reading ``{name} must be a mapping{what} or None, got
    {type}``.

    Args:
        value (Any): the value to check.
        name (str): how it is called in the message.
        what (str, optional): what follows "mapping" in the message.
            (default: ``" (e.g. a dict)"``)
    """
    if value is not None and not isinstance(value, Mapping):
        raise TypeError(f"{name} must be a mapping{what} or None, got {type(value).__name__}")
    return value


def check_state_entries(state: Any, entries: Sequence[str], name: str) -> Mapping[str, Any]:
    """Return ``state`` if it is a mapping that holds each of ``entries`` (as a
    ``get_extra_state`` or ``state_dict`` gave it), else raise naming ``name``: a
    :class:`TypeError` for a state that is no mapping, a :class:`ValueError` naming
    the entries it lacks (not a ``KeyError`` as they are read).

    Args:
        state (Mapping[str, Any]): the state to check.
        entries (Sequence[str]): the entries it must hold.
        name (str): how it is called in the message.
    """
    if not isinstance(state, Mapping):
        raise TypeError(f"{name} must be a dict, got {type(state).__name__}")
    missing = [entry for entry in entries if entry not in state]
    if missing:
        entries = "entry" if len(missing) == 1 else "entries"
        raise ValueError(f"{name} has no {entries} {', '.join(map(repr, missing))} (it has "
                         f"{list(state)})")
    return state


def check_seed(value: Any, name: str = "seed") -> int:
    """Return ``value`` as ``int`` if it is an integer in :math:`[0, 2^{64})`
    (what :func:`torch.manual_seed` and NumPy's generators take).

    Args:
        value (Any): the seed.
        name (str, optional): how it is called in messages. (default: ``"seed"``)

    Raises:
        TypeError: for a non-integer.
        ValueError: for a seed outside :math:`[0, 2^{64})`.
    """
    seed = check_positive_int(value, name, minimum=0)
    if seed >= _SEED_LIMIT:
        raise ValueError(f"{name} must be below 2**64, got {seed}")
    return seed


def _check_state_taken(given: Mapping[str, Any], taken: Mapping[str, Any]) -> None:
    """Raise :class:`OverflowError` where PCG64 holds another 128-bit integer than
    the state ``given`` has: NumPy before 2.0 takes one below 0 modulo 2**128
    (1.24 on with a ``DeprecationWarning``); later ones refuse it."""
    for key in ("state", "inc"):
        if taken["state"][key] != given["state"][key]:
            raise OverflowError(f"Python integer {given['state'][key]} out of bounds for "
                                f"the generator's 128-bit {key!r}")


def generator_from_state(state: Any, name: str) -> np.random.Generator:
    """A NumPy default generator (PCG64) in the ``bit_generator.state`` ``state``, or
    a :class:`ValueError` naming ``name`` where NumPy refuses it (a state integer
    beyond 128 bits or below 0 included)."""
    rng = np.random.default_rng()
    try:
        rng.bit_generator.state = state
        _check_state_taken(state, rng.bit_generator.state)
    except (TypeError, ValueError, KeyError, OverflowError) as error:
        raise ValueError(f"{name} is not a state of NumPy's default generator: "
                         f"{error!r}") from None
    return rng


def check_device(device: Any, name: str = "device") -> torch.device:
    """``device`` as a :class:`torch.device` if it names a CPU, or a CUDA or MPS
    device that this machine has.

    Args:
        device (str or torch.device): the device, e.g. ``"cuda:0"``.
        name (str, optional): how it is called in messages.
            (default: ``"device"``)

    Raises:
        ValueError: saying why the device is refused.
    """
    try:
        resolved = torch.device(device)
    except (RuntimeError, TypeError, ValueError):
        raise ValueError(f"invalid {name} {device!r} (e.g. cpu, cuda, cuda:0, mps)") from None
    if resolved.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"{name} {device!r}: CUDA is not available on this machine")
        if resolved.index is not None and resolved.index >= torch.cuda.device_count():
            raise ValueError(f"{name} {device!r}: only {torch.cuda.device_count()} CUDA "
                             f"device(s) available")
    elif resolved.type == "mps":
        if not torch.backends.mps.is_available():
            raise ValueError(f"{name} {device!r}: MPS is not available on this machine")
    elif resolved.type != "cpu":
        raise ValueError(f"unsupported {name} {device!r} (use cpu, cuda[:i] or mps)")
    return resolved


def check_real(value: Any, name: str) -> float:
    """``value`` as ``float`` if it is a real number (not a bool).

    Args:
        value (Any): the value to check.
        name (str): how it is called in the message.

    Raises:
        TypeError: for anything else.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    return float(value)


def check_bool(value: Any, name: str) -> bool:
    """``value`` as ``bool`` if it is one (NumPy's ``bool_`` included): a truthy
    ``"no"`` or ``1`` would otherwise switch a flag on.

    Args:
        value (Any): the value to check.
        name (str): how it is called in the message.

    Raises:
        TypeError: for anything else.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    return bool(value)


def check_finite(value: Any, name: str) -> float:
    """Return ``value`` as ``float`` if it is a finite number.

    Args:
        value (Any): the value to check.
        name (str): how it is called in messages.

    Raises:
        TypeError: for a non-number (see :func:`check_real`).
        ValueError: for NaN or inf.
    """
    number = check_real(value, name)
    if not math.isfinite(number):
        raise ValueError(f"{name} must be a finite number, got {value}")
    return number


def check_nonnegative(value: Any, name: str) -> float:
    """Return ``value`` as ``float`` if it is a finite number ``>= 0``.

    Args:
        value (Any): the value to check.
        name (str): how it is called in messages.

    Raises:
        TypeError: for a non-number (see :func:`check_real`).
        ValueError: for a negative or non-finite number.
    """
    number = check_real(value, name)
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")
    return number


def check_positive(value: Any, name: str) -> float:
    """Return ``value`` as ``float`` if it is a number ``> 0`` (``inf`` included).

    Args:
        value (Any): the value to check.
        name (str): how it is called in messages.

    Raises:
        TypeError: for a non-number (see :func:`check_real`).
        ValueError: for a number ``<= 0`` or NaN.
    """
    number = check_real(value, name)
    if not number > 0:
        raise ValueError(f"{name} must be > 0, got {value}")
    return number


def check_unit_interval(value: Any, name: str) -> float:
    """Return ``value`` as ``float`` if it lies in :math:`(0, 1]`.

    Args:
        value (Any): the value to check.
        name (str): how it is called in messages.

    Raises:
        TypeError: for a non-number (see :func:`check_real`).
        ValueError: for a number outside :math:`(0, 1]`.
    """
    number = check_real(value, name)
    if not 0.0 < number <= 1.0:
        raise ValueError(f"{name} must be in (0, 1], got {value}")
    return number


def check_dropout(value: Any, name: str = "dropout") -> float:
    """Return ``value`` as ``float`` if it is a drop probability in :math:`[0, 1)`.

    Args:
        value (Any): the value to check.
        name (str, optional): how it is called in messages.
            (default: ``"dropout"``)

    Raises:
        TypeError: for a non-number (see :func:`check_real`).
        ValueError: for a number outside :math:`[0, 1)`.
    """
    number = check_real(value, name)
    if not 0.0 <= number < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {value}")
    return number
