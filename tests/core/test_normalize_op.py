"""The fused row normalization: exact values, and F.normalize's value and gradient."""
import pytest
import torch
import torch.nn.functional as F

from torch_geometric_stream.ops import l2_normalize


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
    """At ``||x|| = eps`` torch's clamp passes the gradient through the norm
    (``clamp_min``'s backward keeps ``x >= min``): F.normalize, and this op
    under torch.func, give ``(g - y (y . g)) / eps``. Before: ``g / eps``."""
    x = torch.tensor([[1.0, 0.0]], dtype=torch.float64, requires_grad=True)
    weights = torch.tensor([[1.0, 1.0]], dtype=torch.float64)
    grad, = torch.autograd.grad((l2_normalize(x, eps=1.0) * weights).sum(), x)
    expected, = torch.autograd.grad((F.normalize(x, dim=-1, eps=1.0) * weights).sum(), x)
    # y = (1, 0), y . g = 1: (1, 1) - (1, 0)
    assert grad.tolist() == expected.tolist() == [[0.0, 1.0]]
