"""The torch learners' Adam, and keeping its state where its parameters are.

:func:`make_adam` builds the per-sample step's optimizer: fused (one kernel
updates every parameter) on the CPU, where torch's default Adam loops over
the parameters in Python, up to three times slower at SLeDGe's sizes.

``Module.to()`` / ``.double()`` convert a module's parameters in place but not
the optimizer's state (Adam's moments and step counts), and torch's Adam then
fails on mixed devices or dtypes. CUDA-graph capture needs Adam in its
``capturable`` form (step counts on the GPU), which only a GPU can step. The
learners call :func:`fit_optimizer_state` after every conversion and
:func:`load_optimizer_state` to load;
:class:`~torch_geometric_stream.models.CUDAGraphStep` calls
:func:`make_adam_capturable` before capturing.
"""
from __future__ import annotations

import copy
from typing import Any, Iterable

import torch
from torch import Tensor

from torch_geometric_stream.validation import check_state_entries

__all__ = ["check_adam_dtype", "clear_grads", "fit_optimizer_state", "load_optimizer_state",
           "make_adam", "make_adam_capturable"]

def _fuses(params: Iterable[Tensor]) -> bool:
    """Whether Adam runs fused over ``params``: all of them on the CPU. Elsewhere
    torch's default is kept (on a GPU,
    :class:`~torch_geometric_stream.models.CUDAGraphStep` makes it capturable)."""
    return all(param.device.type == "cpu" for param in params)


def make_adam(params: Iterable[Tensor], lr: float, weight_decay: float) -> torch.optim.Adam:
    """Adam over ``params``, fused where :func:`_fuses` allows: the same
    update as torch's default Adam up to rounding (an ulp or so per step), in
    a third to three quarters of its time on the CPU (``benchmarks/step_latency.py``,
    its "Adam ms" column with ``--adam plain`` and without).

    Args:
        params (Iterable[Tensor]): the parameters.
        lr (float): the learning rate.
        weight_decay (float): the L2 penalty.
    """
    params = list(params)
    return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay, fused=_fuses(params))


def clear_grads(optimizer: torch.optim.Optimizer) -> None:
    """``optimizer.zero_grad(set_to_none=True)``: every parameter's ``.grad`` set to
    ``None``, without the wrapper around torch's loop (a profiler range and
    torch.compile's guard): 28 against 138 µs per SLeDGe-L step (GSAD-shaped,
    M = 1000, 1 thread), 9 against 36 µs alone.

    Args:
        optimizer (torch.optim.Optimizer): the optimizer.
    """
    for group in optimizer.param_groups:
        for param in group["params"]:
            param.grad = None


def check_adam_dtype(dtype: torch.dtype, learner: str) -> None:
    """Raise ``TypeError`` for a ``learner`` whose parameters are float16, on every
    learn call (also one that would take no step, e.g. of unlabeled rows only):
    Adam's second moments (a thousandth of the squared gradients at first)
    underflow to 0 in float16 for gradients below about 8e-3, and its eps (1e-8)
    rounds to 0, so a step divides by about nothing (weights jump by about 100
    within a few samples, then turn NaN). bfloat16 has float32's exponent range,
    and float16 predicts well.

    Args:
        dtype (torch.dtype): the learner's parameter dtype.
        learner (str): the learner's name, for the message.
    """
    if dtype == torch.float16:
        raise TypeError(f"{learner} can't learn in float16: Adam's second moments underflow "
                        "to 0 there and its steps blow the weights up to NaN within a few "
                        "samples; call .float() or .bfloat16() before learning (a float16 "
                        "copy, .half(), predicts)")


def fit_optimizer_state(optimizer: torch.optim.Optimizer) -> None:
    """Move each parameter's state to the parameter: moments in its device and
    dtype (float32 for a float16 parameter, which can't learn, see
    :func:`check_adam_dtype`: float16 would round small second moments to 0 and
    make the steps jump after a later ``.float()``), step counts on the host, or
    on the parameter's GPU for a group in ``capturable`` form. A capturable group
    whose parameters are not all on a GPU becomes plain (the same update, step
    counts on the host). An Adam group runs fused while :func:`_fuses` allows it
    (parameters moved to a GPU turn it off, moved back to the CPU on), unless it
    asked for ``foreach``.

    Args:
        optimizer (torch.optim.Optimizer): the optimizer.
    """
    adam = isinstance(optimizer, torch.optim.Adam)
    for group in optimizer.param_groups:
        group["capturable"] = bool(group.get("capturable")) and all(
            param.device.type == "cuda" for param in group["params"])
        if adam:
            group["fused"] = not group.get("foreach") and _fuses(group["params"])
        for param in group["params"]:
            state = optimizer.state.get(param, {})
            for key, value in state.items():
                if not isinstance(value, Tensor):
                    continue
                if key != "step":
                    state[key] = value.to(device=param.device, dtype=_moment_dtype(param))
                elif group.get("fused"):  # the fused kernel counts in float32
                    state[key] = value.to(device=param.device, dtype=torch.float32)
                else:
                    state[key] = value.to(param.device if group["capturable"] else "cpu")


def _moment_dtype(param: Tensor) -> torch.dtype:
    return torch.float32 if param.dtype == torch.float16 else param.dtype


#: Hyperparameters a learner sets from its own arguments (``lr=``, ``weight_decay=``).
_CONFIGURED = ("lr", "weight_decay", "betas", "eps")


def load_optimizer_state(optimizer: torch.optim.Optimizer, state: dict[str, Any]) -> None:
    """Load an optimizer's ``state_dict()`` as a copy of its own, then
    :func:`fit_optimizer_state`. torch's ``Optimizer.load_state_dict`` keeps the
    given moment tensors where their device and dtype already fit, so a learner
    loaded from another one's live ``state_dict()`` would share its moments and
    each one's steps would move the other.

    Args:
        optimizer (torch.optim.Optimizer): the optimizer to load into.
        state (dict[str, Any]): a ``state_dict()`` of an optimizer of the same
            parameters and settings.

    Raises:
        ValueError: the saved hyperparameters (learning rate, weight decay, betas,
            eps) differ from ``optimizer``'s, which its learner was built with:
            loading would silently replace them; or a parameter's saved state no
            step can have left (:func:`_check_moments`).
    """
    check_state_entries(state, ("state", "param_groups"), "the optimizer's state")
    for saved, group in zip(state.get("param_groups", []), optimizer.param_groups):
        differing = [f"{key}={saved[key]!r} (this learner: {group[key]!r})"
                     for key in _CONFIGURED
                     if key in saved and key in group and saved[key] != group[key]]
        if differing:
            raise ValueError(f"the saved optimizer has {', '.join(differing)}: build the "
                             f"learner with the saved settings")
        for index, param in zip(saved.get("params", []), group["params"]):
            _check_moments(state.get("state", {}).get(index), param, index)
    optimizer.load_state_dict(copy.deepcopy(state))
    _restore_float16_moments(optimizer, state)
    fit_optimizer_state(optimizer)


def _restore_float16_moments(optimizer: torch.optim.Optimizer, state: dict[str, Any]) -> None:
    """Copy the saved moments of float16 parameters again, in float32: torch's
    ``load_state_dict`` cast them to float16 (:func:`_moment_dtype` says why not)."""
    for saved, group in zip(state.get("param_groups", []), optimizer.param_groups):
        for index, param in zip(saved.get("params", []), group["params"]):
            if param.dtype != torch.float16:
                continue
            for key, value in state.get("state", {}).get(index, {}).items():
                if key != "step" and isinstance(value, Tensor):
                    optimizer.state[param][key] = value.detach().to(
                        param.device, torch.float32, copy=True)


def _check_moments(saved: Any, param: Tensor, index: Any) -> None:
    """Raise ``ValueError`` unless a parameter's saved Adam state is one steps can
    leave: a step count >= 0 (a negative one divides by zero in the bias
    correction), moments of the parameter's shape (torch's step would fail deep
    inside) and a second moment >= 0 (a negative one is a NaN square root). NaN
    moments pass: a diverged run saves them itself."""
    if not isinstance(saved, dict):
        return
    step = saved.get("step")
    if step is not None and float(step) < 0:
        raise ValueError(f"the saved optimizer's parameter {index} has step {float(step):g}: "
                         f"a step count is >= 0")
    for name in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
        moment = saved.get(name)
        if not isinstance(moment, Tensor):
            continue
        if moment.shape != param.shape:
            raise ValueError(f"the saved optimizer's parameter {index} has {name} of shape "
                             f"{tuple(moment.shape)}, its parameter {tuple(param.shape)}")
        if name != "exp_avg" and bool((moment < 0).any()):
            raise ValueError(f"the saved optimizer's parameter {index} has a negative "
                             f"{name} (a mean of squares is >= 0)")


def make_adam_capturable(optimizer: torch.optim.Optimizer, device: torch.device) -> None:
    """Switch an Adam optimizer to its capturable form: step counts on ``device``
    as float32, updates computed there without reading the host.

    Args:
        optimizer (torch.optim.Optimizer): the Adam optimizer.
        device (torch.device): the GPU its parameters are on.
    """
    for group in optimizer.param_groups:
        group["capturable"] = True
    for state in optimizer.state.values():
        step = state.get("step")
        if isinstance(step, Tensor) and step.device != device:
            state["step"] = step.to(device=device, dtype=torch.float32)
