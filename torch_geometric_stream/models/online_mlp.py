"""The "Base" ablation: an MLP trained one labeled sample at a time."""
from __future__ import annotations

from typing import Any, Callable, Optional, Union

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from torch_geometric_stream.base import RollbackOnFailedLoad, StreamClassifier
from torch_geometric_stream.models.seeding import seeded_draws
from torch_geometric_stream.nn import (MLPBackbone, check_adam_dtype, clear_grads,
                                       fit_optimizer_state, load_optimizer_state, make_adam)
from torch_geometric_stream.nn.modes import set_training
from torch_geometric_stream.ops.normalize import unit_rows
from torch_geometric_stream.validation import (check_cast_keeps_finite, check_device,
                                               check_nonnegative, check_positive_int,
                                               check_seed, check_state_entries, to_device)


class OnlineMLP(StreamClassifier, RollbackOnFailedLoad, nn.Module):
    r"""MLP backbone (LayerNorm + ReLU) without memory or graph.

    Each labeled sample triggers one Adam step on that sample alone;
    unlabeled samples are only predicted (the paper's "Base" ablation).
    Inputs are L2-normalized like SLeDGe's.

    Args:
        in_channels (int): feature dimension :math:`d`.
        num_classes (int): number of classes :math:`c`.
        hidden_channels (int, optional): width. (default: 256)
        num_layers (int, optional): layers. (default: 2)
        lr (float, optional): Adam learning rate. (default: 1e-3)
        weight_decay (float, optional): Adam weight decay. (default: 0)
        seed (int, optional): seed of the initialization, whatever torch's
            global generators hold, which are left as they were. Without a
            seed the parameters are drawn from torch's global generators, which
            move on, as an :class:`~torch.nn.Module`'s. (default: :obj:`None`)
        device (str or torch.device, optional): where the parameters live.

    Shapes:
        - **predict:** :math:`(n, d) \to (n,)`; **learn:** :math:`(n, d)`, :math:`(n,)`
    """

    def __init__(self, in_channels: int, num_classes: int, *, hidden_channels: int = 256,
                 num_layers: int = 2, lr: float = 1e-3, weight_decay: float = 0.0,
                 seed: Optional[int] = None,
                 device: Union[str, torch.device, None] = None) -> None:
        nn.Module.__init__(self)
        self.in_channels = check_positive_int(in_channels, "in_channels")
        self.num_classes = check_positive_int(num_classes, "num_classes")
        seed = None if seed is None else check_seed(seed)
        device = None if device is None else check_device(device)
        with seeded_draws(seed):
            self.backbone = MLPBackbone(in_channels, hidden_channels, num_classes, num_layers)
        if device is not None:
            self.to(device)
        self.optimizer = make_adam(self.parameters(), check_nonnegative(lr, "lr"),
                                   check_nonnegative(weight_decay, "weight_decay"))

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    @property
    def dtype(self) -> torch.dtype:
        return next(self.parameters()).dtype

    @property
    def num_items(self) -> int:
        """Stored samples: none (the "Base" ablation has no memory)."""
        return 0

    def get_extra_state(self) -> dict:
        return {"optimizer": self.optimizer.state_dict()}

    def set_extra_state(self, state: dict) -> None:
        """Restore :meth:`get_extra_state`'s optimizer state.

        Args:
            state (dict): what :meth:`get_extra_state` returned.

        Raises:
            TypeError: ``state`` not a dict.
            ValueError: no ``optimizer`` entry, or one that does not fit this learner
                (:func:`~torch_geometric_stream.nn.optim.load_optimizer_state`).
        """
        check_state_entries(state, ("optimizer",), f"{type(self).__name__}'s extra state")
        load_optimizer_state(self.optimizer, state["optimizer"])

    def _apply(self, fn: Callable[[Tensor], Tensor], *args: Any,
               **kwargs: Any) -> OnlineMLP:  # .to(), .double(): the optimizer's state follows
        check_cast_keeps_finite(self, fn)
        module = super()._apply(fn, *args, **kwargs)
        if hasattr(self, "optimizer"):  # not yet while __init__ moves the modules
            fit_optimizer_state(self.optimizer)
        return module

    def _predict_proba(self, x: Tensor) -> Tensor:
        was_training = self.training
        set_training(self, False)  # self.eval(), faster
        with torch.no_grad():
            proba = self.backbone(unit_rows(x)).softmax(dim=-1)
        set_training(self, was_training)
        return proba

    def _check_can_learn(self) -> None:
        """Refuse float16 (:func:`~torch_geometric_stream.nn.check_adam_dtype`)."""
        check_adam_dtype(self.dtype, type(self).__name__)

    def _learn(self, x: Tensor, y: Tensor) -> None:
        set_training(self, True)
        for row, label in zip(unit_rows(x), y):
            if int(label) < 0:
                continue
            target = to_device(label.view(1), row.device)  # waits where y is pinned
            loss = F.cross_entropy(self.backbone(row.unsqueeze(0)), target)
            clear_grads(self.optimizer)
            loss.backward()
            self.optimizer.step()
