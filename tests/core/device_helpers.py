"""Host-to-device copies seen on a machine with or without a GPU: each
``Tensor.to`` that changes the device type, with its ``non_blocking`` and the
source's ``data_ptr``."""
import torch


class MovedToCuda(Exception):
    """Raised by ``record_moves(stop_at_cuda=True)`` at a move to CUDA."""


def record_moves(monkeypatch, *, stop_at_cuda=False, pinned=None):
    """Record ``(source type, target type, non_blocking, source data_ptr)`` of
    each ``Tensor.to`` that changes the device type; with ``stop_at_cuda`` a
    move to CUDA is recorded, then :class:`MovedToCuda` is raised (a machine
    without CUDA cannot make it); with ``pinned`` (bool), ``Tensor.is_pinned``
    answers it.

    Returns:
        list: the moves, appended as they happen.
    """
    moves = []
    to = torch.Tensor.to

    def recorded(self, *args, **kwargs):
        device, _, non_blocking, _ = torch._C._nn._parse_to(*args, **kwargs)
        if device is not None and device.type != self.device.type:
            moves.append((self.device.type, device.type, non_blocking, self.data_ptr()))
            if stop_at_cuda and device.type == "cuda":
                raise MovedToCuda
        return to(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "to", recorded)
    if pinned is not None:
        monkeypatch.setattr(torch.Tensor, "is_pinned", lambda self, *args: pinned)
    return moves
