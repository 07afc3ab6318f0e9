"""A small Gaussian stream and a small SLeDGe for the core tests."""
import torch
from state_helpers import assert_same

from torch_geometric_stream import SLeDGe

C, D = 3, 6


def gaussian_stream(n, seed=0, separation=4.0):
    """``n`` rows :math:`(n, D)` around ``C`` random centres, and their labels."""
    gen = torch.Generator().manual_seed(seed)
    centers = torch.randn(C, D, generator=gen) * separation
    y = torch.randint(0, C, (n,), generator=gen)
    return centers[y] + torch.randn(n, D, generator=gen), y


def small(**kw):
    """A SLeDGe with a 26-slot memory; ``kw`` overrides its arguments."""
    args = dict(labeled_size=6, unlabeled_size=20, k=3, hidden_channels=16, num_layers=2,
                lr=5e-3, seed=0)
    args.update(kw)
    return SLeDGe(D, C, **args)


def assert_same_state(a, b):
    """Equal ``state_dict()`` s of the learners ``a`` and ``b``, their extra state
    (optimizer, reservoir, generators, counters) included, entry by entry."""
    assert_same(a.state_dict(), b.state_dict())
