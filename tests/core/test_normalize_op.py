"""The fused row normalization: exact values, and F.normalize's value and gradient."""
import contextlib

import pytest
import torch
import torch.nn.functional as F

from torch_geometric_stream.ops import flushes_denormal, l2_normalize
from torch_geometric_stream.ops.normalize import _clamp_min_passes_at_min, unit_rows


def test_l2_normalize_hand_checked_and_equal_to_f_normalize():
    assert torch.equal(l2_normalize(torch.tensor([[3.0, 4.0], [0.0, 0.0]])),
                       torch.tensor([[0.6, 0.8], [0.0, 0.0]]))
    # rows of every size, one of them below eps (the clamp passes g / eps)
    x = torch.randn(7, 5, dtype=torch.float64)
    x[2] = 1e-14
    x.requires_grad_()
    weights = torch.randn(7, 5, dtype=torch.float64)
    grad, = torch.autograd.grad((l2_normalize(x) * weights).sum(), x)
    expected, = torch.autograd.grad((F.normalize(x, dim=-1) * weights).sum(), x)
    assert torch.allclose(l2_normalize(x), F.normalize(x, dim=-1), rtol=1e-15, atol=0)
    assert torch.allclose(grad, expected, rtol=1e-12, atol=0)
    assert torch.autograd.gradcheck(l2_normalize, (torch.randn(4, 3, dtype=torch.float64,
                                                               requires_grad=True),))


@pytest.mark.parametrize("call, error, message", [
    (lambda: l2_normalize(torch.ones(2, 3, dtype=torch.long)), TypeError, "floating"),
    (lambda: l2_normalize([[1.0, 0.0]]), TypeError, "got list"),
    (lambda: l2_normalize(torch.tensor(3.0)), ValueError, "at least one dimension"),
    (lambda: l2_normalize(torch.ones(2, 3).to_sparse()), TypeError, "dense"),
    (lambda: l2_normalize(torch.ones(2, 3), eps=-1.0), ValueError, "eps must be > 0"),
    (lambda: l2_normalize(torch.ones(2, 3), eps=float("inf")), ValueError, "finite"),
    (lambda: l2_normalize(torch.ones(2, 3), eps="1e-12"), TypeError, "eps must be a number"),
])
def test_l2_normalize_names_bad_input(call, error, message):
    """Before: torch's errors (linalg.vector_norm on integers, a list without
    .dim()), or a negative eps taken silently."""
    with pytest.raises(error, match=message):
        call()


def test_unchecked_l2_normalize_gives_the_checked_result():
    x = torch.tensor([[3.0, 4.0], [0.0, 0.0]])
    expected = torch.tensor([[0.6, 0.8], [0.0, 0.0]])
    assert torch.equal(l2_normalize(x), expected)
    assert torch.equal(l2_normalize(x, check=False), expected)


def test_a_norm_of_exactly_eps_has_f_normalize_s_gradient():
    """At ``||x|| = eps`` F.normalize, and this op under torch.func, have the
    gradient of torch's ``clamp_min`` at ``x == min``: through the norm, ``(g - y
    (y . g)) / eps``, where its backward keeps ``x >= min`` (torch 2.13), else
    ``g / eps`` (``x > min``, torch 2.15). Before: ``g / eps`` in torch 2.13, and
    through the norm in torch 2.15."""
    x = torch.tensor([[1.0, 0.0]], dtype=torch.float64, requires_grad=True)
    weights = torch.tensor([[1.0, 1.0]], dtype=torch.float64)
    grad, = torch.autograd.grad((l2_normalize(x, eps=1.0) * weights).sum(), x)
    expected, = torch.autograd.grad((F.normalize(x, dim=-1, eps=1.0) * weights).sum(), x)
    transformed = torch.func.grad(
        lambda rows: (l2_normalize(rows, eps=1.0) * weights).sum())(x.detach())
    one = torch.ones((), requires_grad=True)
    through_the_norm = bool(torch.autograd.grad(one.clamp_min(1.0), one)[0])
    # y = (1, 0), y . g = 1: (1, 1) - (1, 0) through the norm, else g / eps = (1, 1)
    assert (grad.tolist() == expected.tolist() == transformed.tolist()
            == ([[0.0, 1.0]] if through_the_norm else [[1.0, 1.0]]))


@pytest.mark.parametrize("context", [torch.no_grad, torch.inference_mode])
def test_the_import_asks_the_clamp_s_gradient_under_no_grad_too(context):
    """The import asks torch's clamp_min for its gradient at the bound: one under
    ``no_grad`` or ``inference_mode`` gets the same answer, not an error."""
    answer = _clamp_min_passes_at_min()
    with context():
        assert _clamp_min_passes_at_min() is answer


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_a_zero_row_stays_zero_in_every_floating_dtype(dtype):
    """float16 rounds the default eps (1e-12) to 0, so F.normalize divides a zero
    row by 0 there (NaN); both ops raise eps to the dtype's smallest normal
    number. Before: l2_normalize gave NaN too (SLeDGe's first prediction in
    float16 with online scaling, whose first scaled row is a zero row)."""
    x = torch.tensor([[0.0, 0.0], [3.0, 4.0], [3e-5, 4e-5]], dtype=dtype)
    expected = torch.tensor([[0.0, 0.0], [0.6, 0.8], [0.6, 0.8]], dtype=dtype)
    for flush in (False, True):  # the learners flush denormals on the CPU
        with flushed_denormals(flush):
            # a row shorter than float16's smallest normal number still becomes a unit row
            torch.testing.assert_close(unit_rows(x), expected, rtol=1e-3, atol=0)
            torch.testing.assert_close(l2_normalize(x), expected, rtol=1e-3, atol=0)
            leaf = x.clone().requires_grad_()
            grad, = torch.autograd.grad(l2_normalize(leaf).sum(), leaf)
            # a zero row's gradient g / eps is beyond float16's range (1 / 2**-24)
            assert bool(grad[0 if dtype != torch.float16 else 1:].isfinite().all())


@contextlib.contextmanager
def flushed_denormals(flush):
    was = flushes_denormal()
    torch.set_flush_denormal(flush)
    try:
        yield
    finally:
        torch.set_flush_denormal(was)


def test_unit_rows_is_f_normalize_bit_for_bit_in_float32_and_float64():
    for dtype in (torch.float32, torch.float64):
        x = torch.randn(50, 17, dtype=dtype, generator=torch.Generator().manual_seed(0))
        x[3] = 0.0
        assert torch.equal(unit_rows(x), F.normalize(x, dim=-1))
        assert torch.equal(unit_rows(x[5]), F.normalize(x[5], dim=0))
        assert torch.equal(unit_rows(x, eps=10.0), F.normalize(x, dim=-1, eps=10.0))
