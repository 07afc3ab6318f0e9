"""The CSR kernels: exact tiny cases, agreement with gather/scatter, gradients."""
import subprocess
import sys
import textwrap

import pytest
import torch

from torch_geometric_stream.graph import DynamicKNNGraph
from torch_geometric_stream.nn import GCNBackbone
from torch_geometric_stream.ops import CSRGraph, csr_aggregate, csr_edge_dot, supports_csr


def scatter_aggregate(x, w, edge_index):
    return torch.zeros_like(x).index_add(0, edge_index[1], w.unsqueeze(1) * x[edge_index[0]])


def test_aggregate_hand_checked():
    # edges 0->1 (w=2), 2->1 (w=3), 1->0 (w=-1); node 2 has no incoming edge
    edge_index = torch.tensor([[0, 2, 1], [1, 1, 0]])
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    out = CSRGraph(edge_index, 3).aggregate(x, torch.tensor([2.0, 3.0, -1.0]))
    assert torch.equal(out, torch.tensor([[0.0, -1.0], [5.0, 3.0], [0.0, 0.0]]))


def test_edge_dot_hand_checked_in_edge_order():
    edge_index = torch.tensor([[0, 2, 1], [1, 1, 0]])  # deliberately not target-sorted
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    b = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    # a[target] . b[source]: a1.b0 = 3, a1.b2 = 7, a0.b1 = 2
    assert torch.equal(CSRGraph(edge_index, 3).edge_dot(a, b), torch.tensor([3.0, 7.0, 2.0]))


@pytest.mark.parametrize("dtype,atol", [(torch.float64, 1e-12), (torch.float32, 1e-4)])
def test_match_gather_scatter_values_and_gradients(dtype, atol):
    gen = torch.Generator().manual_seed(0)
    n, e, h = 50, 300, 8
    edge_index = torch.randint(0, n, (2, e), generator=gen)  # duplicates and self-loops too
    x = torch.randn(n, h, generator=gen, dtype=dtype, requires_grad=True)
    w = torch.randn(e, generator=gen, dtype=dtype, requires_grad=True)
    graph = CSRGraph(edge_index, n)
    grad = torch.randn(n, h, generator=gen, dtype=dtype)

    out, ref = graph.aggregate(x, w), scatter_aggregate(x, w, edge_index)
    torch.testing.assert_close(out, ref, atol=atol, rtol=0)
    for mine, theirs in zip(torch.autograd.grad(out, (x, w), grad),
                            torch.autograd.grad(ref, (x, w), grad)):
        torch.testing.assert_close(mine, theirs, atol=atol, rtol=0)

    dots = graph.edge_dot(x, x)
    ref_dots = (x[edge_index[1]] * x[edge_index[0]]).sum(-1)
    torch.testing.assert_close(dots, ref_dots, atol=atol, rtol=0)
    edge_grad = torch.randn(e, generator=gen, dtype=dtype)
    torch.testing.assert_close(torch.autograd.grad(dots, x, edge_grad)[0],
                               torch.autograd.grad(ref_dots, x, edge_grad)[0], atol=atol, rtol=0)


@pytest.mark.parametrize("needs", [(True, False), (False, True)], ids=["x", "weights"])
def test_aggregate_gradient_of_one_operand_equals_gather_scatters(needs):
    # backward computes the gradient of the one operand that needs one, alone
    gen = torch.Generator().manual_seed(2)
    edge_index = torch.randint(0, 7, (2, 20), generator=gen)
    x = torch.randn(7, 3, generator=gen, dtype=torch.float64).requires_grad_(needs[0])
    w = torch.randn(20, generator=gen, dtype=torch.float64).requires_grad_(needs[1])
    grad = torch.randn(7, 3, generator=gen, dtype=torch.float64)
    wanted = x if needs[0] else w
    mine, = torch.autograd.grad(CSRGraph(edge_index, 7).aggregate(x, w), wanted, grad)
    theirs, = torch.autograd.grad(scatter_aggregate(x, w, edge_index), wanted, grad)
    torch.testing.assert_close(mine, theirs, atol=1e-12, rtol=0)


def test_gradcheck_float64():
    gen = torch.Generator().manual_seed(1)
    edge_index = torch.randint(0, 6, (2, 15), generator=gen)
    graph = CSRGraph(edge_index, 6)
    x = torch.randn(6, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    a = torch.randn(6, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    w = torch.randn(15, generator=gen, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(graph.aggregate, (x, w))
    assert torch.autograd.gradcheck(graph.edge_dot, (a, x))
    # similarity weights (one tensor in both places, self-loops and repeats among
    # the 15 random edges): the gradient through W + W^T
    assert (edge_index[0] == edge_index[1]).any()
    assert torch.autograd.gradcheck(lambda e: graph.edge_dot(e, e), (a,))
    grad, = torch.autograd.grad(graph.edge_dot(a, a).square().sum(), a)
    gathered = (a[edge_index[1]] * a[edge_index[0]]).sum(-1)
    expected, = torch.autograd.grad(gathered.square().sum(), a)
    assert torch.allclose(grad, expected, rtol=1e-12, atol=1e-14)


def test_results_do_not_depend_on_uninitialized_memory():
    # regression: sampled products with beta=0 still multiply the pattern's
    # stored values, so an uninitialized pattern leaked NaN into the weights
    edge_index = torch.randint(0, 40, (2, 400), generator=torch.Generator().manual_seed(2))
    graph = CSRGraph(edge_index, 40)
    for _ in range(20):
        garbage = torch.full((10_000,), float("nan"))  # leave NaN in the allocator
        del garbage
        a = torch.randn(40, 16, requires_grad=True)
        dots = graph.edge_dot(a, a)
        assert torch.isfinite(dots).all()
        dots.sum().backward()
        assert torch.isfinite(a.grad).all()


def test_products_write_every_row_of_uninitialized_outputs():
    # the sparse-dense products write into uninitialized tensors (beta=0): rows
    # without an entry must come out zero, forward and backward, and the rest
    # exactly what torch's own product gives, whatever the allocator left there
    gen = torch.Generator().manual_seed(3)
    n, h = 200, 16
    edge_index = torch.randint(0, 20, (2, 30), generator=gen)  # rows 20.. have no edge
    graph = CSRGraph(edge_index, n)
    for _ in range(5):
        garbage = torch.full((n * h,), float("nan"))  # leave NaN in the allocator
        del garbage
        x = torch.randn(n, h, generator=gen, requires_grad=True)
        w = torch.randn(30, generator=gen, requires_grad=True)
        out = graph.aggregate(x, w)
        assert torch.equal(out, graph.by_target.matrix(w.detach()) @ x.detach())
        assert torch.equal(out[20:], torch.zeros(n - 20, h))
        grad = torch.randn(n, h, generator=gen)
        grad_x, = torch.autograd.grad(out, x, grad)
        assert torch.equal(grad_x, graph.by_source.matrix(w.detach()) @ grad)
        edge_grad = torch.randn(30, generator=gen)
        sym, = torch.autograd.grad(graph.edge_dot(x, x), x, edge_grad)
        assert torch.equal(sym, graph.symmetric_matrix(edge_grad) @ x.detach())
        assert torch.equal(sym[20:], torch.zeros(n - 20, h))
        b = x.detach().clone().requires_grad_()
        grad_a, grad_b = torch.autograd.grad(graph.edge_dot(x, b), (x, b), edge_grad)
        assert torch.equal(grad_a, graph.by_target.matrix(edge_grad) @ b.detach())
        assert torch.equal(grad_b, graph.by_source.matrix(edge_grad) @ x.detach())


def test_empty_graph():
    graph = CSRGraph(torch.empty(2, 0, dtype=torch.long), 3)
    x = torch.randn(3, 2, requires_grad=True)
    out = graph.aggregate(x, torch.empty(0))
    assert torch.equal(out, torch.zeros(3, 2))
    out.sum().backward()
    assert torch.equal(x.grad, torch.zeros(3, 2))
    assert graph.edge_dot(x, x).shape == (0,)


def test_bad_input_is_named():
    graph = CSRGraph(torch.tensor([[0, 1], [1, 0]]), 2)
    with pytest.raises(TypeError, match="float32/float64"):
        csr_aggregate(torch.ones(2, 2, dtype=torch.float16), torch.ones(2), graph)
    with pytest.raises(TypeError, match="edge_weight dtype"):
        csr_aggregate(torch.ones(2, 2), torch.ones(2, dtype=torch.float64), graph)
    with pytest.raises(ValueError, match="2 nodes"):
        csr_aggregate(torch.ones(3, 2), torch.ones(2), graph)
    with pytest.raises(ValueError, match="2 edges"):
        csr_aggregate(torch.ones(2, 2), torch.ones(3), graph)
    with pytest.raises(ValueError, match="must match"):
        csr_edge_dot(torch.ones(2, 2), torch.ones(2, 3), graph)
    # one node per row, two dimensions: not the feature rows of a bigger or
    # flatter tensor; as many weights as edges, not fewer; one dtype for a and b
    with pytest.raises(ValueError, match=r"2 nodes, got features of shape \(2,\)"):
        csr_aggregate(torch.ones(2), torch.ones(2), graph)
    with pytest.raises(ValueError, match=r"2 nodes, got features of shape \(2, 2, 1\)"):
        csr_aggregate(torch.ones(2, 2, 1), torch.ones(2), graph)
    with pytest.raises(ValueError, match=r"2 edges, got edge_weight of shape \(1,\)"):
        csr_aggregate(torch.ones(2, 2), torch.ones(1), graph)
    with pytest.raises(ValueError, match="a and b must match, got .* torch.float32 and .* "
                                         "torch.float64"):
        csr_edge_dot(torch.ones(2, 2), torch.ones(2, 2, dtype=torch.float64), graph)


def test_supports_csr_takes_dense_float32_and_float64_only():
    assert supports_csr(torch.ones(2, 2)) and supports_csr(torch.ones(2, 2, dtype=torch.float64))
    assert not supports_csr(torch.ones(2, 2, dtype=torch.float16))
    assert not supports_csr(torch.ones(2, 2).to_sparse())
    assert not supports_csr(torch.ones(2, 2).to_sparse_csr())


@pytest.mark.parametrize("call, error, message", [
    (lambda g: csr_aggregate([[1.0, 0.0], [0.0, 1.0]], torch.ones(2), g), TypeError,
     "csr_aggregate needs tensors, got list"),
    (lambda g: csr_aggregate(torch.ones(2, 2), [1.0, 1.0], g), TypeError,
     "edge_weight must be a tensor, got list"),
    (lambda g: csr_aggregate(torch.ones(2, 2, device="meta"), torch.ones(2), g), TypeError,
     "'meta' device"),
    (lambda g: csr_aggregate(torch.ones(2, 2), torch.ones(2, device="meta"), g), TypeError,
     "edge_weight is on the 'meta' device"),
    (lambda g: csr_aggregate(torch.ones(2, 2), torch.ones(2).to_sparse(), g), TypeError,
     "edge_weight must be a dense tensor"),
    (lambda g: csr_aggregate(torch.ones(2, 2), torch.ones(2), None), TypeError,
     "needs a CSRGraph, got NoneType"),
    (lambda g: csr_edge_dot(torch.ones(2, 2, device="meta"), torch.ones(2, 2), g), TypeError,
     "'meta' device"),
    (lambda g: csr_edge_dot([[1.0, 0.0]], torch.ones(2, 2), g), TypeError,
     "csr_edge_dot needs tensors, got list"),
    # before: "needs float32/float64 tensors, got torch.float32"
    (lambda g: csr_aggregate(torch.ones(2, 2).to_sparse(), torch.ones(2), g), TypeError,
     "csr_aggregate: features must be a dense tensor, got layout torch.sparse_coo"),
    (lambda g: csr_edge_dot(torch.ones(2, 2), torch.ones(2, 2).to_sparse_csr(), g), TypeError,
     "csr_edge_dot: features must be a dense tensor, got layout torch.sparse_csr"),
    (lambda g: CSRGraph(torch.tensor([[0, 1], [1, 0]]).to_sparse(), 2), TypeError,
     "edge_index must be a dense tensor"),
])
def test_tensors_without_values_or_of_another_kind_are_named(call, error, message):
    # before: AttributeError, "Values and crow_indices need to be on the same device",
    # reshape / aminmax not implemented for sparse tensors
    with pytest.raises(error, match=message):
        call(CSRGraph(torch.tensor([[0, 1], [1, 0]]), 2))


@pytest.mark.parametrize("bias_position", ["after", "before"])
@pytest.mark.parametrize("normalization", ["symmetric", "symmetric-add", "mean", "none"])
def test_backbone_csr_equals_gcnconv_message_passing(normalization, bias_position):
    torch.manual_seed(0)
    csr = GCNBackbone(5, 8, 3, num_layers=3, normalization=normalization,
                      bias_position=bias_position)
    passing = GCNBackbone(5, 8, 3, num_layers=3, normalization=normalization,
                          aggregation="message_passing", bias_position=bias_position)
    passing.load_state_dict(csr.state_dict())
    x = torch.randn(20, 5)
    edge_index = torch.randint(0, 20, (2, 60))
    w1 = torch.rand(60, requires_grad=True)
    w2 = w1.detach().clone().requires_grad_(True)
    out1, out2 = csr(x, edge_index, w1), passing(x, edge_index, w2)
    torch.testing.assert_close(out1, out2, atol=1e-5, rtol=0)
    out1.square().sum().backward()
    out2.square().sum().backward()
    torch.testing.assert_close(w1.grad, w2.grad, atol=1e-5, rtol=0)
    for p, q in zip(csr.parameters(), passing.parameters()):
        # relative too: with "none" the float32 gradients reach ~50, where a
        # different CPU's summation order moves them by ~1e-5
        torch.testing.assert_close(p.grad, q.grad, atol=1e-5, rtol=1e-5)


def test_the_layers_check_their_graph_products_once_per_forward(monkeypatch):
    """GCNBackbone.forward checks its input once; the products of its layers,
    over the graph and weights it built, are not checked again (35 us per step
    of SLeDGe at MNIST's four layers), nor the edge weights of an unchecked
    neighbor_weight; the public products still check."""
    from torch_geometric_stream.ops import csr as csr_module

    checked = []
    for name in ("_check_features", "_check_edge_values"):
        check = getattr(csr_module, name)
        monkeypatch.setattr(csr_module, name,
                            lambda *args, _check=check, _name=name, **kwargs: (
                                checked.append(_name), _check(*args, **kwargs)))
    backbone = GCNBackbone(5, 8, 3, num_layers=3)
    x, edge_index = torch.randn(20, 5), torch.randint(0, 20, (2, 60))
    backbone(x, edge_index, torch.rand(60)).sum().backward()
    emb = torch.nn.functional.normalize(torch.randn(4, 3), dim=1)
    DynamicKNNGraph.neighbor_weight(emb, torch.tensor([[0, 1], [1, 2]]), torch.tensor([0, 1]),
                                    check=False)
    assert checked == []
    graph = CSRGraph(torch.tensor([[0, 1], [1, 0]]), 2)
    csr_aggregate(torch.ones(2, 2), torch.ones(2), graph)
    csr_edge_dot(torch.ones(2, 2), torch.ones(2, 2), graph)
    assert checked == ["_check_features", "_check_edge_values", "_check_features",
                       "_check_features"]


def test_backbone_rejects_unknown_aggregation():
    with pytest.raises(ValueError, match="aggregation"):
        GCNBackbone(5, 8, 3, num_layers=2, aggregation="scatter")


def test_more_entries_than_a_dense_pattern():
    # 2 nodes, 6 edges with duplicates: more entries than 2 x 2, where
    # sampled_addmm refuses the pattern; the weight gradient must still be right
    edge_index = torch.tensor([[0, 0, 1, 1, 0, 1], [0, 0, 0, 1, 1, 1]])
    x = torch.tensor([[1.0, 2.0], [3.0, -1.0]], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([0.5, 0.0, 2.0, 1.0, -1.0, 0.0], dtype=torch.float64, requires_grad=True)
    out = CSRGraph(edge_index, 2).aggregate(x, w)
    ref = scatter_aggregate(x, w, edge_index)
    torch.testing.assert_close(out, ref)
    grad = torch.tensor([[1.0, 0.0], [2.0, 1.0]], dtype=torch.float64)
    for mine, theirs in zip(torch.autograd.grad(out, (x, w), grad),
                            torch.autograd.grad(ref, (x, w), grad)):
        torch.testing.assert_close(mine, theirs)



@pytest.mark.parametrize("edge_index, num_nodes, target_crow", [
    # targets 1, 1, 0, 1, 3 (edge 0 -> 1 twice): rows 2 and 4 empty
    (torch.tensor([[0, 2, 1, 0, 0], [1, 1, 0, 1, 3]]), 5, [0, 1, 4, 4, 5, 5]),
    (torch.randint(0, 40, (2, 300), generator=torch.Generator().manual_seed(0)), 40, None),
    (torch.zeros(2, 0, dtype=torch.long), 3, [0, 0, 0, 0]),  # no edges
    (torch.zeros(2, 0, dtype=torch.long), 0, [0]),  # no nodes
])
def test_cpu_row_pointers_are_counted_and_equal_the_searched_ones(edge_index, num_nodes,
                                                                   target_crow, monkeypatch):
    """On the CPU the row pointers are a count of the rows, not a search of the
    sorted rows (the GPU's way, which reads nothing back): same pointers, and
    the whole CSR structure unchanged."""
    def searched(rows, cols):
        perm = torch.argsort(rows * num_nodes + cols)
        return perm, torch.searchsorted(rows[perm], torch.arange(num_nodes + 1)), cols[perm]

    source, target = edge_index
    expected = {"by_target": searched(target, source), "by_source": searched(source, target),
                "_symmetric": searched(torch.cat([target, source]), torch.cat([source, target]))}
    monkeypatch.setattr(torch, "searchsorted", None)  # before: TypeError, not callable
    graph = CSRGraph(edge_index, num_nodes)
    for name, (perm, crow, col) in expected.items():
        orientation = getattr(graph, name)
        assert torch.equal(orientation.perm, perm)
        assert torch.equal(orientation.crow, crow) and orientation.crow.dtype == torch.int64
        assert torch.equal(orientation.col, col)
    if target_crow is not None:
        assert graph.by_target.crow.tolist() == target_crow


def test_index_structures_are_built_only_when_needed():
    edge_index = torch.tensor([[0, 1, 2, 2], [1, 2, 0, 1]])
    x = torch.randn(3, 4, requires_grad=True)
    weight = torch.randn(4, requires_grad=True)
    graph = CSRGraph(edge_index, 3)
    with torch.no_grad():
        graph.aggregate(x, weight)
    assert "by_target" in vars(graph) and "by_source" not in vars(graph)  # no transpose
    graph.aggregate(x, weight).sum().backward()
    assert "by_source" in vars(graph)
    emb = torch.randn(3, 4, requires_grad=True)
    graph = CSRGraph(edge_index, 3)
    graph.edge_dot(emb, emb).sum().backward()  # similarity weights: the symmetric pattern
    assert "_symmetric" in vars(graph) and "by_source" not in vars(graph)
    # d/de of sum over edges of e_t . e_s: every edge adds e_s to row t and e_t to row s
    source, target, e = edge_index[0], edge_index[1], emb.detach()
    expected = torch.zeros(3, 4).index_add_(0, target, e[source]).index_add_(0, source, e[target])
    assert torch.allclose(emb.grad, expected)


def test_layers_sharing_weights_share_one_matrix_until_the_weights_change():
    edge_index = torch.tensor([[0, 2, 1, 1], [1, 1, 0, 2]])
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], requires_grad=True)
    weight = torch.tensor([2.0, 3.0, -1.0, 0.5], requires_grad=True)
    graph = CSRGraph(edge_index, 3)  # by default every product builds its matrix
    assert graph.by_target.matrix(weight) is not graph.by_target.matrix(weight)
    graph = CSRGraph(edge_index, 3, reuse_matrices=True)
    first = graph.by_target.matrix(weight)
    assert graph.by_target.matrix(weight) is first  # same tensor, unchanged: reused
    assert graph.by_target.matrix(weight.detach().clone()) is not first  # another tensor
    matrix = graph.by_target.matrix(weight)
    h = graph.aggregate(graph.aggregate(x, weight), weight)  # two layers, one matrix
    h.sum().backward()
    # A (A x) with A[t, s] = w: hand-checked sums, and their gradients
    adj = torch.tensor([[0.0, -1.0, 0.0], [2.0, 0.0, 3.0], [0.0, 0.5, 0.0]])
    assert torch.equal(h, adj @ (adj @ x.detach()))
    assert torch.equal(x.grad, (adj @ adj).t() @ torch.ones(3, 2))
    # the two layers and their backward read the matrix built above: none built anew
    assert graph.by_target.matrix(weight) is matrix
    with torch.no_grad():
        weight.mul_(2)  # in place: a new version, so a new matrix with the new values
    assert torch.equal(graph.aggregate(x, weight), 2 * adj @ x.detach())
    with torch.inference_mode():  # inference tensors have no version: never reused
        frozen = torch.tensor([1.0, 1.0, 1.0, 1.0])
        again = graph.by_target.matrix(frozen)
        assert graph.by_target.matrix(frozen) is not again
    # the zero pattern of the sampled products is built once per dtype
    assert graph.by_target.zeros(x) is graph.by_target.zeros(x)
    assert graph.by_target.zeros(x.double()).dtype == torch.float64
    assert not graph.by_target.zeros(x).values().any()


@pytest.mark.parametrize("edge_index, num_nodes, error, message", [
    (torch.tensor([[0, -1, 2], [1, 2, 0]]), 3, ValueError,
     r"node indices in \[0, 3\), got values in \[-1, 2\]"),
    (torch.tensor([[0, 1, 2], [1, 2, 0]]), 2, ValueError,
     r"node indices in \[0, 2\), got values in \[0, 2\]"),
    (torch.tensor([[0.0, 1.0], [1.0, 0.0]]), 2, TypeError,
     "int64 .or int32. tensor, got torch.float32"),
    (torch.tensor([0, 1]), 2, ValueError, r"shape \(2, E\), got \(2,\)"),
    ([[0, 1], [1, 0]], 2, TypeError, "edge_index must be a tensor, got list"),
    (torch.tensor([[0], [0]]), -1, ValueError, "num_nodes"),
])
def test_a_bad_edge_index_is_refused_before_any_kernel_reads_it(edge_index, num_nodes, error,
                                                                 message):
    with pytest.raises(error, match=message):
        CSRGraph(edge_index, num_nodes)


def test_int32_indices_match_int64_and_a_trusted_graph_skips_the_range_check():
    edge_index = torch.tensor([[0, 2, 1], [1, 1, 0]])
    x, w = torch.randn(3, 2), torch.tensor([2.0, 3.0, -1.0])
    expected = CSRGraph(edge_index, 3).aggregate(x, w)
    graph = CSRGraph(edge_index.int(), 3)
    assert torch.equal(graph.aggregate(x, w), expected)
    # the index structures are int64 whatever the edge_index (as on the GPU's sparse kernels)
    for orientation in (graph.by_target, graph.by_source):
        assert (orientation.perm.dtype, orientation.crow.dtype, orientation.col.dtype) == (
            torch.int64, torch.int64, torch.int64)
    # a column of weights (E, 1) is one weight per edge, as a row (E,)
    assert torch.equal(graph.aggregate(x, w.unsqueeze(1)), expected)
    # the layers that build their own graph skip the range check (no host sync)
    assert CSRGraph(torch.tensor([[0, 5], [1, 0]]), 3, check_indices=False).num_edges == 2


@pytest.mark.parametrize("call, error, message", [
    (lambda g: g.sampled_dot(torch.ones(3, 2), torch.ones(3, 2)), ValueError,
     "sampled_dot: graph has 2 nodes"),
    (lambda g: g.sampled_dot(torch.ones(2, 2), torch.ones(2, 3)), ValueError,
     "sampled_dot: a and b must match"),
    (lambda g: g.sampled_dot(torch.ones(2, 2, dtype=torch.int64), torch.ones(2, 2)), TypeError,
     "sampled_dot needs float32/float64"),
    (lambda g: g.sampled_dot(torch.ones(2, 2), None), TypeError,
     "sampled_dot needs tensors, got NoneType"),
    (lambda g: g.symmetric_matrix(torch.ones(3)), ValueError,
     "symmetric_matrix: graph has 2 edges, got values of shape \\(3,\\)"),
    (lambda g: g.symmetric_matrix(torch.ones(2, dtype=torch.int64)), TypeError,
     "symmetric_matrix: values must be float32/float64"),
    (lambda g: g.symmetric_matrix([1.0, 2.0]), TypeError,
     "symmetric_matrix: values must be a tensor, got list"),
    (lambda g: g.symmetric_matrix(torch.ones(2).to_sparse()), TypeError,
     "values must be a dense tensor"),
])
def test_graph_products_name_bad_operands(call, error, message):
    # before: sampled_addmm / cat failed inside torch (or, for 3 values, built a
    # matrix from the first 2 and ignored the third)
    with pytest.raises(error, match=message):
        call(CSRGraph(torch.tensor([[0, 1], [1, 0]]), 2))


def test_graph_products_hand_checked_and_unchecked_alike():
    graph = CSRGraph(torch.tensor([[0, 1, 1], [1, 0, 2]]), 3)
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    # edges (source -> target): 0->1: a_1.a_0 = 11, 1->0: 11, 1->2: a_2.a_1 = 39
    for check in (True, False):
        assert graph.sampled_dot(a, a, check=check).tolist() == [11.0, 11.0, 39.0]
        assert graph.edge_dot(a, a, check=check).tolist() == [11.0, 11.0, 39.0]
        assert csr_edge_dot(a, a, graph, check=check).tolist() == [11.0, 11.0, 39.0]
        # weights 1, 2, 3: out_1 = 1 a_0, out_0 = 2 a_1, out_2 = 3 a_1
        expected = [[6.0, 8.0], [1.0, 2.0], [9.0, 12.0]]
        weight = torch.tensor([1.0, 2.0, 3.0])
        assert graph.aggregate(a, weight, check=check).tolist() == expected
        assert csr_aggregate(a, weight, graph, check=check).tolist() == expected
        assert graph.symmetric_matrix(torch.tensor([1.0, 2.0, 3.0]),
                                      check=check).to_dense().tolist() == [
            [0.0, 3.0, 0.0], [3.0, 0.0, 3.0], [0.0, 3.0, 0.0]]


@pytest.mark.parametrize("flag", [0, 1, "no"])
def test_check_indices_refuses_other_truth_values(flag):
    # 0 would skip the range check without a word, "no" keep it
    with pytest.raises(TypeError, match=f"check_indices must be a bool, got {type(flag).__name__}"):
        CSRGraph(torch.tensor([[0, 1], [1, 0]]), 2, check_indices=flag)
    with pytest.raises(TypeError,
                       match=f"reuse_matrices must be a bool, got {type(flag).__name__}"):
        CSRGraph(torch.tensor([[0, 1], [1, 0]]), 2, reuse_matrices=flag)


_PACKAGE_USE = """
    x = torch.randn(10, 8)
    edge_index, edge_weight = DynamicKNNGraph(8, 3, 16)(x)
    GCNBackbone(8, 16, 3, 2)(x, edge_index, edge_weight).sum().backward()
"""
_USER_USE = """
    torch.sparse_csr_tensor(torch.tensor([0, 1, 2]), torch.tensor([0, 1]),
                            torch.tensor([1.0, 2.0]), (2, 2))
"""


def _sparse_warnings(*steps: str) -> list:
    """``(line, message)`` of every sparse warning a fresh process shows running
    ``steps`` after importing the package (Python's default filters: torch
    warns of each once per process)."""
    code = ("import torch\nfrom torch_geometric_stream.graph import DynamicKNNGraph\n"
            "from torch_geometric_stream.nn import GCNBackbone\n"
            + "".join(textwrap.dedent(step) for step in steps))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return [tuple(line.split(": UserWarning: ")) for line in done.stderr.splitlines()
            if "UserWarning: Sparse" in line]


@pytest.mark.parametrize("user_first", [False, True])
def test_the_sparse_warnings_are_ignored_in_this_package_s_code_only(user_first):
    # before: importing the package ignored them process-wide, in the user's own
    # sparse code too. What torch warns of depends on its version: the beta state
    # always, the invariant checks of the user's tensor (implicit there; the package
    # turns them off explicitly) in some (2.13; 2.11's CUDA build also of the
    # package's tensors), each once per process
    alone = [message for _, message in _sparse_warnings(_USER_USE)]
    assert any(message.startswith("Sparse CSR tensor support is in beta state")
               for message in alone)
    if user_first:  # all of them, attributed to the user's line
        assert _sparse_warnings(_USER_USE, _PACKAGE_USE) == [
            ("<string>:5", message) for message in alone]
    else:  # what the package's tensors did not use up, attributed to the user's line:
        # not the beta state, which torch tells of the first CSR tensor only
        shown = _sparse_warnings(_PACKAGE_USE, _USER_USE)
        assert all(line == "<string>:9" and message in alone for line, message in shown)
        assert not any(message.startswith("Sparse CSR tensor support is in beta")
                       for _, message in shown)
