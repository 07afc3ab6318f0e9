"""The fused row normalization: exact values, and F.normalize's value and gradient."""
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
