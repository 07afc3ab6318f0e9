r"""Sparse CSR kernels of the graph layers: weighted neighbourhood sums and
per-edge dot products, differentiable in node features *and* edge weights.

**Neighbourhood sums** (:func:`csr_aggregate`).

:math:`\text{out}_t = \sum_{(s \to t)} w_{st}\, x_s` is what
:class:`~torch_geometric.nn.conv.GCNConv` computes by gathering
:math:`x_s` for every edge and scattering the products (several passes over
an :math:`(E, F)` buffer, forward and backward). Here it is one sparse-dense
product :math:`A x` with :math:`A` in CSR form; the backward is
:math:`A^\top g` for the features and a sampled dense-dense product
:math:`w'_{st} = g_t^\top x_s` (``torch.sparse.sampled_addmm``) for the edge
weights. Learned graphs need the second one: their edge weights carry the
gradient of the graph learner.

**Edge dot products** (:func:`csr_edge_dot`): :math:`w_{st} = a_t^\top b_s`
for every edge, the learned graph's similarity weights, is a sampled product
(forward) whose backward is two sparse-dense products
(:math:`\partial a = G\,b`, :math:`\partial b = G^\top a` with :math:`G` the
sparse matrix of edge gradients), instead of gathering an :math:`(E, h)`
buffer and back-propagating through it. For similarity weights (``a`` is
``b``) the two are one product, :math:`(G + G^\top)\,a`.

A gradient with a graph (``create_graph=True``: gradient penalties, Hessian-vector
products) is autograd's own of the gather/scatter form instead (see
:mod:`~torch_geometric_stream.ops.higher_order`), differentiable again.

:class:`CSRGraph` holds the orientations of the index structure (target-major,
source-major, symmetric), each built on first use and shared by every call on
the graph.
"""
from __future__ import annotations

import re
import warnings
from functools import cached_property
from typing import Any, Callable, Optional

import torch
from torch import Tensor

from torch_geometric_stream.ops.functorch import in_func_transform, is_compiling, is_exporting
from torch_geometric_stream.ops.higher_order import plain_backward, plain_vjp
from torch_geometric_stream.validation import (check_bool, check_edge_index, check_has_values,
                                               check_positive_int, check_same_device)

__all__ = ["CSRGraph", "csr_aggregate", "csr_edge_dot", "supports_csr"]

# torch flags every CSR tensor as beta once per process; the two kernels used
# here (CSR @ dense, sampled_addmm) are stable on CPU and CUDA. Some torch
# builds (2.11 with CUDA) also warn once that invariant checks are off, although
# every CSR tensor here passes check_invariants=False on purpose: its index
# structure is built by _Orientation and valid by construction. Both are ignored
# only where raised from this module's code (torch names the Python frame that
# called the sparse op), not in the user's own sparse code. (torch flags the
# beta state once per process: the user's CSR tensors made after this module's
# first one are not flagged.)
_THIS_MODULE = re.escape(__name__) + r"\Z"
warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta state",
                        category=UserWarning, module=_THIS_MODULE)
warnings.filterwarnings("ignore", message="Sparse invariant checks are implicitly disabled",
                        category=UserWarning, module=_THIS_MODULE)

#: Floating dtypes the CSR kernels (products and sampled products) handle on every device.
_CSR_DTYPES = (torch.float32, torch.float64)


def supports_csr(x: Tensor) -> bool:
    """Whether the kernels here handle features like ``x`` (else gather/scatter):
    dense float32/float64 ones, outside :mod:`torch.func` transforms (see
    :func:`~torch_geometric_stream.ops.functorch.in_func_transform`) and
    ``torch.export`` (which cannot trace sparse tensors).

    Args:
        x (Tensor): the features.
    """
    return (x.dtype in _CSR_DTYPES and x.layout == torch.strided and not in_func_transform()
            and not is_exporting())


def _row_pointers(rows: Tensor, perm: Tensor, num_rows: int) -> Tensor:
    """CSR row pointers :math:`(R + 1,)`: entry ``i`` counts the ``rows`` below
    ``i``, for ``perm`` the order that sorts them.

    On the CPU a count of every row (``rows + 1`` leaves slot 0 empty) summed
    up, three passes without the sorted rows; on other devices a search of the
    sorted rows, since a count would read its maximum back from the device (a
    host sync per graph)."""
    if rows.device.type == "cpu":
        return torch.bincount(rows + 1, minlength=num_rows + 1).cumsum(0)
    return torch.searchsorted(rows.index_select(0, perm),
                              torch.arange(num_rows + 1, device=rows.device))


class _Orientation:
    """One CSR index structure: ``perm`` reorders edge-ordered weights into it."""

    def __init__(self, rows: Tensor, cols: Tensor, num_rows: int, num_cols: int,
                 reuse_matrices: bool = False) -> None:
        # sort key rows * num_cols + cols in one integer op (exact)
        self.perm = torch.argsort(cols.add(rows, alpha=num_cols))
        self.crow = _row_pointers(rows, self.perm, num_rows)
        self.col = cols.index_select(0, self.perm)
        self.size = (num_rows, num_cols)
        self.reuse_matrices = reuse_matrices
        # reuse_matrices: the last matrix built, with the values tensor and its version
        self._last: Optional[tuple[Tensor, int, Tensor]] = None
        self._zeros: dict[torch.dtype, Tensor] = {}  # zero-valued matrices by dtype

    def matrix(self, values: Tensor) -> Tensor:
        """The sparse :math:`(R, C)` matrix with the edge-ordered ``values`` :math:`(E,)`.

        With ``reuse_matrices``, called again with the same ``values`` tensor at
        the same version, it returns the matrix it built last instead of
        reordering them anew."""
        # (inference tensors keep no version counter to tell a change)
        if not self.reuse_matrices or values.is_inference():
            return self._build(values)
        last = self._last
        if last is not None and last[0] is values and last[1] == values._version:
            return last[2]
        matrix = self._build(values)
        self._last = (values, values._version, matrix)
        return matrix

    def _build(self, values: Tensor) -> Tensor:
        return self._build_ordered(values.index_select(0, self.perm))

    def _build_ordered(self, ordered: Tensor) -> Tensor:
        """The matrix of values already in CSR order :math:`(E,)`."""
        return torch.sparse_csr_tensor(self.crow, self.col, ordered, self.size,
                                       check_invariants=False)

    def zeros(self, like: Tensor) -> Tensor:
        """The matrix with every stored value zero, in ``like``'s dtype (built once)."""
        matrix = self._zeros.get(like.dtype)
        if matrix is None:
            # (perm-ordered zeros are zeros: no reordering)
            matrix = self._zeros[like.dtype] = self._build_ordered(
                like.new_zeros(self.perm.numel()))
        return matrix


class CSRGraph:
    r"""The CSR index structures of a directed graph (``edge_index[0]`` the
    source, ``edge_index[1]`` the target, PyG convention), target-major for
    aggregation and source-major for its transpose.

    Args:
        edge_index (Tensor): :math:`(2, E)` ``int64`` (or ``int32``), every index
            in :math:`[0, N)`.
        num_nodes (int): number of nodes :math:`N`.
        check_indices (bool, optional): read the indices' range (one host sync on a GPU).
            Layers that built ``edge_index`` themselves pass ``False``; shape
            and dtype are checked either way. (default: ``True``)
        reuse_matrices (bool, optional): keep the last CSR matrix built from an
            edge-weight tensor, and use it again for the same tensor at the same
            version (``Tensor._version``), as the layers of one forward (and its
            backward) do: for a graph private to one forward, whose weights no
            one changes through ``.data`` (which keeps the version) in between.
            (default: ``False``)

    Raises:
        TypeError: if ``edge_index`` is not an integer tensor, or
            ``check_indices`` not a bool.
        ValueError: for a shape other than :math:`(2, E)`, a negative
            ``num_nodes`` or, with ``check_indices``, an index outside
            :math:`[0, N)` (the sparse kernels would read past the features).
    """

    def __init__(self, edge_index: Tensor, num_nodes: int, *,
                 check_indices: bool = True, reuse_matrices: bool = False) -> None:
        num_nodes = check_positive_int(num_nodes, "num_nodes", minimum=0)
        check_edge_index(edge_index, num_nodes, check_bool(check_indices, "check_indices"))
        self.reuse_matrices = check_bool(reuse_matrices, "reuse_matrices")
        edge_index = edge_index.long()  # the CSR structures index in int64
        self.source, self.target = edge_index[0], edge_index[1]
        self.num_nodes = num_nodes
        self.num_edges = int(edge_index.size(1))

    # Each structure costs a sort of the edges and is built on first use: a
    # forward without gradient never needs the transpose, similarity weights
    # (``a`` is ``b``) need the symmetric pattern instead.
    @cached_property
    def by_target(self) -> _Orientation:
        """Target-major structure: :math:`A` with ``A[target, source]``."""
        return _Orientation(self.target, self.source, self.num_nodes, self.num_nodes,
                            self.reuse_matrices)

    @cached_property
    def by_source(self) -> _Orientation:
        r"""Source-major structure: :math:`A^\top`."""
        return _Orientation(self.source, self.target, self.num_nodes, self.num_nodes,
                            self.reuse_matrices)

    @cached_property
    def _symmetric(self) -> _Orientation:
        return _Orientation(torch.cat([self.target, self.source]),
                            torch.cat([self.source, self.target]),
                            self.num_nodes, self.num_nodes)

    def symmetric_matrix(self, values: Tensor, *, check: bool = True) -> Tensor:
        r"""The sparse :math:`(N, N)` matrix :math:`W + W^\top` of the edge-ordered
        ``values``. Under ``torch.compile`` the matrix is built eagerly, behind
        one graph break.

        Args:
            values (Tensor): :math:`(E,)`, in edge order.
            check (bool, optional): refuse (``TypeError`` / ``ValueError``)
                ``values`` that are not a dense float32/float64 tensor of
                :math:`E` entries on the graph's device (no value is read).
                (default: :obj:`True`)
        """
        if check:
            _check_edge_values(values, self, "symmetric_matrix", "values")
        return _call_kernel(self._symmetric_matrix, values)

    def _symmetric_matrix(self, values: Tensor) -> Tensor:
        return self._symmetric.matrix(torch.cat([values, values]))

    def aggregate(self, x: Tensor, edge_weight: Tensor, *, check: bool = True) -> Tensor:
        r""":math:`\text{out}_t = \sum_{(s \to t)} w_{st}\, x_s`, :math:`(N, F)`.

        Args:
            x (Tensor): the features :math:`(N, F)`.
            edge_weight (Tensor): the weights :math:`(E,)`, in edge order.
            check (bool, optional): as in :func:`csr_aggregate`.
                (default: :obj:`True`)
        """
        return csr_aggregate(x, edge_weight, self, check=check)

    def edge_dot(self, a: Tensor, b: Tensor, *, check: bool = True) -> Tensor:
        r""":math:`a_t^\top b_s` per edge :math:`(E,)`, in edge order.

        Args:
            a, b (Tensor): the operands :math:`(N, h)`.
            check (bool, optional): as in :func:`csr_edge_dot`.
                (default: :obj:`True`)
        """
        return csr_edge_dot(a, b, self, check=check)

    def sampled_dot(self, a: Tensor, b: Tensor, *, check: bool = True) -> Tensor:
        r""":math:`a_t^\top b_s` per edge :math:`(E,)` in edge order, without
        autograd. Under ``torch.compile`` the product runs eagerly, behind one
        graph break.

        Args:
            a, b (Tensor): the operands :math:`(N, h)`.
            check (bool, optional): refuse what :func:`csr_edge_dot` refuses (no
                value is read). (default: :obj:`True`)
        """
        if check:
            _check_pair(a, b, self, "sampled_dot")
        return _call_kernel(self._sampled_dot, a, b)

    def _gathered_dot(self, a: Tensor, b: Tensor) -> Tensor:
        """:meth:`sampled_dot` by gathering each edge's rows, with autograd's gradient."""
        return (a.index_select(0, self.target) * b.index_select(0, self.source)).sum(-1)

    def _gathered_sum(self, x: Tensor, edge_weight: Tensor) -> Tensor:
        """:meth:`aggregate` by gathering and scattering, with autograd's gradient."""
        return x.new_zeros(x.shape).index_add(
            0, self.target, edge_weight.unsqueeze(1) * x.index_select(0, self.source))

    def _sampled_dot(self, a: Tensor, b: Tensor) -> Tensor:
        if self.num_edges > self.num_nodes ** 2:
            # more entries than a dense pattern (duplicate edges on a tiny graph):
            # sampled_addmm refuses those, so gather (sizes known on the host)
            return self._gathered_dot(a, b)
        # zeros, not empty: beta = 0 still multiplies the stored values (0 * NaN = NaN)
        pattern = self.by_target.zeros(a)
        sampled = torch.sparse.sampled_addmm(pattern, a, b.t(), beta=0.0).values()
        return torch.empty_like(sampled).index_copy_(0, self.by_target.perm, sampled)


def _sparse_dense_product(matrix: Tensor, dense: Tensor) -> Tensor:
    r"""``matrix @ dense`` for a sparse CSR :math:`(R, C)` and a dense :math:`(C, F)`
    matrix, :math:`(R, F)`, written straight into a new tensor: ``@`` fills a
    zero :math:`(R, F)` tensor and copies it once more before the product, two
    passes over the output that matter when :math:`R` is the memory's every row
    and few of them have an entry (SLeDGe-L). Same kernel, same values:
    ``beta=0`` ignores the uninitialized input (NaN included) and every row,
    with or without entries, is written. On the CPU only: other devices keep
    ``@``, the product checked on a GPU (this form was not). Autocast leaves
    in-place products alone; ``@`` runs outside it (see :func:`_matmul`)."""
    if dense.device.type != "cpu":
        return _matmul(matrix, dense)
    return dense.new_empty(matrix.size(0), dense.size(1)).addmm_(matrix, dense, beta=0)


def _matmul(matrix: Tensor, dense: Tensor) -> Tensor:
    """``matrix @ dense`` in their own dtype, also under :class:`torch.autocast`,
    which would run it in lower precision, the CSR matrix cast too (float16 on a
    GPU; the CPU has no bfloat16 kernel): a float16 forward would then meet
    float32 saved tensors in its backward's products. One flag read outside
    autocast."""
    device = dense.device.type
    if torch.is_autocast_enabled(device):
        with torch.autocast(device, enabled=False):
            return matrix @ dense
    return matrix @ dense


class _CSRAggregate(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: Tensor, edge_weight: Tensor, graph: CSRGraph) -> Tensor:
        ctx.graph = graph
        ctx.save_for_backward(x, edge_weight)
        return _sparse_dense_product(graph.by_target.matrix(edge_weight), x)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Optional[Tensor], ...]:
        x, edge_weight = ctx.saved_tensors
        graph: CSRGraph = ctx.graph
        if plain_backward(grad):  # create_graph (a gradient to differentiate again) or vmap
            return (*plain_vjp(graph._gathered_sum, (x, edge_weight), grad,
                               ctx.needs_input_grad), None)
        grad = grad.contiguous()
        grad_x = grad_weight = None
        if ctx.needs_input_grad[0]:
            grad_x = _sparse_dense_product(graph.by_source.matrix(edge_weight), grad)
        if ctx.needs_input_grad[1]:
            grad_weight = graph._sampled_dot(grad, x)  # g_t . x_s per edge
        return grad_x, grad_weight, None


class _CSREdgeDot(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, a: Tensor, b: Tensor, graph: CSRGraph) -> Tensor:
        ctx.graph = graph
        ctx.same = a is b
        ctx.save_for_backward(a, b)
        return graph._sampled_dot(a, b)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Optional[Tensor], ...]:
        a, b = ctx.saved_tensors
        graph: CSRGraph = ctx.graph
        if plain_backward(grad):  # create_graph (a gradient to differentiate again) or vmap
            if ctx.same:  # one tensor in both places: its whole gradient through one
                return plain_vjp(lambda rows: graph._gathered_dot(rows, rows), (a,), grad
                                 ) + (None, None)
            return (*plain_vjp(graph._gathered_dot, (a, b), grad, ctx.needs_input_grad), None)
        grad = grad.contiguous()
        if ctx.same and all(ctx.needs_input_grad[:2]):
            # one tensor in both places: its whole gradient through one operand
            return _sparse_dense_product(graph._symmetric_matrix(grad), a), None, None
        grad_a = (_sparse_dense_product(graph.by_target.matrix(grad), b)
                  if ctx.needs_input_grad[0] else None)
        grad_b = (_sparse_dense_product(graph.by_source.matrix(grad), a)
                  if ctx.needs_input_grad[1] else None)
        return grad_a, grad_b, None


def _run_kernel(kernel: Callable[..., Tensor], *args: object) -> Tensor:
    """``kernel(*args)`` run eagerly under ``torch.compile``: the kernels build
    sparse CSR tensors, which it cannot trace. One graph break where the kernel is
    called, instead of one in each frame of the kernel, which it would compile on
    their own (and a graph per piece between them)."""
    return kernel(*args)


# torch's own lazy form of torch.compiler.disable, which would import torch._dynamo
# (over a second) when this module is imported; this one imports it at its first call,
# which only compiled code makes.
_outside_graph = getattr(torch, "_disable_dynamo", torch.compiler.disable)(_run_kernel)


def _call_kernel(kernel: Callable[..., Tensor], *args: object) -> Tensor:
    """``kernel(*args)``; under ``torch.compile``, through :func:`_outside_graph`
    (the one check of the eager path)."""
    if is_compiling():
        return _outside_graph(kernel, *args)
    return kernel(*args)


def _check_features(x: Tensor, graph: CSRGraph, what: str) -> None:
    if not isinstance(graph, CSRGraph):
        raise TypeError(f"{what} needs a CSRGraph, got {type(graph).__name__}")
    if not isinstance(x, Tensor):
        raise TypeError(f"{what} needs tensors, got {type(x).__name__}")
    check_has_values(x, f"{what}: features")
    if in_func_transform():
        raise TypeError(f"{what} cannot run inside a torch.func transform (grad, vmap, ...), "
                        f"which has no sparse tensors: gather and scatter instead")
    if is_exporting():
        raise TypeError(f"{what} cannot run under torch.export, which cannot trace sparse "
                        f"tensors: gather and scatter instead")
    if not supports_csr(x):
        raise TypeError(f"{what} needs float32/float64 tensors, got {x.dtype}")
    if x.dim() != 2 or x.size(0) != graph.num_nodes:
        raise ValueError(f"{what}: graph has {graph.num_nodes} nodes, got features of shape "
                         f"{tuple(x.shape)}")
    check_same_device(x, graph.source.device, f"{what}: features", "the graph's device")


def _check_pair(a: Tensor, b: Tensor, graph: CSRGraph, what: str) -> None:
    """Raise unless ``a`` and ``b`` are features of ``graph`` of one shape and dtype."""
    _check_features(a, graph, what)
    _check_features(b, graph, what)
    if a.shape != b.shape or a.dtype != b.dtype:
        raise ValueError(f"{what}: a and b must match, got {tuple(a.shape)} {a.dtype} "
                         f"and {tuple(b.shape)} {b.dtype}")


def _check_edge_values(values: Tensor, graph: CSRGraph, what: str, name: str,
                       dtype: Optional[torch.dtype] = None) -> None:
    """Raise unless ``values`` is a dense float32/float64 tensor (of the features'
    ``dtype``, if given) with one entry per edge of ``graph``, on its device."""
    if not isinstance(values, Tensor):
        raise TypeError(f"{what}: {name} must be a tensor, got {type(values).__name__}")
    check_has_values(values, f"{what}: {name}")
    if values.dtype not in _CSR_DTYPES:
        raise TypeError(f"{what}: {name} must be float32/float64, got {values.dtype}")
    if dtype is not None and values.dtype != dtype:
        raise TypeError(f"{what}: {name} dtype {values.dtype} differs from the features' "
                        f"{dtype}")
    if values.numel() != graph.num_edges:
        raise ValueError(f"{what}: graph has {graph.num_edges} edges, got {name} of shape "
                         f"{tuple(values.shape)}")
    check_same_device(values, graph.source.device, f"{what}: {name}", "the graph's device")


def csr_aggregate(x: Tensor, edge_weight: Tensor, graph: CSRGraph, *,
                  check: bool = True) -> Tensor:
    r"""Weighted sum over incoming edges, :math:`(N, F)`, differentiable in ``x``
    and ``edge_weight``.

    Args:
        x (Tensor): the features :math:`(N, F)`.
        edge_weight (Tensor): the weights :math:`(E,)`, in the edge order of the
            ``edge_index`` ``graph`` was built from.
        graph (CSRGraph): the graph.
        check (bool, optional): refuse what is listed below (no value is read);
            layers that built the graph and the weights themselves pass
            ``False``. (default: :obj:`True`)

    Raises:
        ValueError: if the sizes do not match ``graph``.
        TypeError: for dtypes other than float32 / float64 (see :func:`supports_csr`),
            a ``graph`` that is no :class:`CSRGraph`, non-tensors, tensors on the
            ``meta`` device or a sparse ``edge_weight``.
    """
    if check:
        _check_features(x, graph, "csr_aggregate")
        _check_edge_values(edge_weight, graph, "csr_aggregate", "edge_weight", x.dtype)
    # the weights tensor itself where it is 1-D: its CSR matrix then serves every layer
    weight = edge_weight if edge_weight.dim() == 1 else edge_weight.reshape(-1)
    return _call_kernel(_CSRAggregate.apply, x.contiguous(), weight, graph)


def csr_edge_dot(a: Tensor, b: Tensor, graph: CSRGraph, *, check: bool = True) -> Tensor:
    r"""Per-edge dot products :math:`a_t^\top b_s` :math:`(E,)` (edge order of
    the ``edge_index`` ``graph`` was built from), differentiable in ``a`` and
    ``b``; pass the same tensor twice for similarity weights.

    Args:
        a, b (Tensor): the operands :math:`(N, h)`.
        graph (CSRGraph): the graph.
        check (bool, optional): refuse what is listed below (no value is read);
            layers that built the graph and the operands themselves pass
            ``False``. (default: :obj:`True`)

    Raises:
        ValueError: if the sizes do not match ``graph`` or each other.
        TypeError: for dtypes other than float32 / float64, or mixed dtypes, a
            ``graph`` that is no :class:`CSRGraph`, non-tensors or tensors on the
            ``meta`` device.
    """
    if check:
        _check_pair(a, b, graph, "csr_edge_dot")
    return _call_kernel(_CSREdgeDot.apply, a.contiguous(), b.contiguous(), graph)
