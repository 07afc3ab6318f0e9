"""The learners' Adam: fused on the CPU, the same updates as torch's default
Adam up to rounding, and a fused group that follows its parameters."""
from __future__ import annotations

import copy

import pytest
import torch
from state_helpers import assert_same

from torch_geometric_stream import SLeDGe
from torch_geometric_stream.models import OnlineMLP
from torch_geometric_stream.nn import (clear_grads, fit_optimizer_state, load_optimizer_state,
                                       make_adam, make_adam_capturable)

pytestmark = pytest.mark.skipif(torch.__version__ < "2.4",
                                reason="torch < 2.4 has no fused CPU Adam")


def _steps(optimizer: torch.optim.Optimizer, params: list, steps: int = 30) -> None:
    gen = torch.Generator().manual_seed(1)
    for _ in range(steps):
        for param in params:
            param.grad = torch.randn(param.shape, generator=gen, dtype=param.dtype)
        optimizer.step()


@pytest.mark.parametrize("dtype, atol", [(torch.float64, 1e-13), (torch.float32, 1e-6)])
@pytest.mark.parametrize("weight_decay", [0.0, 5e-4])
def test_fused_adam_updates_as_torch_default_adam(dtype, atol, weight_decay):
    torch.manual_seed(0)
    start = [torch.randn(7, 5, dtype=dtype), torch.randn(5, dtype=dtype)]
    fused = [p.clone().requires_grad_() for p in start]
    plain = [p.clone().requires_grad_() for p in start]
    optimizer = make_adam(fused, lr=1e-2, weight_decay=weight_decay)
    assert optimizer.param_groups[0]["fused"] is True
    _steps(optimizer, fused)
    _steps(torch.optim.Adam(plain, lr=1e-2, weight_decay=weight_decay), plain)
    for a, b, s in zip(fused, plain, start):
        assert not torch.equal(a, s)  # 30 steps of lr 1e-2 moved them
        torch.testing.assert_close(a, b, rtol=0, atol=atol)


@pytest.mark.parametrize("build", [lambda: SLeDGe(4, 2, seed=0),
                                   lambda: SLeDGe(4, 2, light=True, seed=0),
                                   lambda: OnlineMLP(4, 2, seed=0)])
def test_the_learners_step_with_fused_adam_on_the_cpu(build):
    learner = build()
    assert all(group["fused"] for group in learner.optimizer.param_groups)
    learner.learn(torch.randn(6, 4), torch.tensor([0, 1, 0, 1, 0, 1]))
    steps = [state["step"] for state in learner.optimizer.state.values()]
    assert steps and all(s.dtype == torch.float32 and s.device.type == "cpu" for s in steps)


def test_clear_grads_sets_every_groups_gradients_to_none_as_zero_grad_does():
    params = [torch.randn(3, requires_grad=True) for _ in range(3)]
    optimizer = torch.optim.Adam([{"params": params[:2]}, {"params": params[2:], "lr": 0.1}])
    params[0].grad, params[2].grad = torch.ones(3), torch.ones(3)  # params[1] has none
    clear_grads(optimizer)
    assert [p.grad for p in params] == [None, None, None]
    (params[0] * params[2]).sum().backward()  # the next backward's gradients as they are
    assert torch.equal(params[0].grad, params[2].detach())
    assert params[1].grad is None


def test_reset_parameters_builds_a_fused_adam_again():
    learner = SLeDGe(4, 2, seed=0)
    learner.reset_parameters()
    assert all(group["fused"] for group in learner.optimizer.param_groups)


def test_a_plain_state_loads_fused_and_steps_as_its_plain_twin():
    """A checkpoint written before the fused optimizer (group ``fused=None``,
    step counts as plain Adam keeps them) loads fused and goes on with the
    updates of torch's default Adam, within rounding."""
    params = [torch.randn(6, 3, requires_grad=True)]
    old = torch.optim.Adam(params, lr=1e-2)
    _steps(old, params, steps=5)
    saved = copy.deepcopy(old.state_dict())
    assert saved["param_groups"][0]["fused"] is None

    resumed_params = [params[0].detach().clone().requires_grad_()]
    resumed = make_adam(resumed_params, lr=1e-2, weight_decay=0.0)
    load_optimizer_state(resumed, saved)
    assert resumed.param_groups[0]["fused"] is True
    assert resumed.state[resumed_params[0]]["step"].dtype == torch.float32
    _steps(resumed, resumed_params)
    _steps(old, params)
    torch.testing.assert_close(resumed_params[0], params[0], rtol=0, atol=1e-6)


def test_a_foreach_group_is_not_fused():
    """torch refuses ``fused`` and ``foreach`` together: a group that asked for
    ``foreach`` keeps it."""
    params = [torch.randn(3, requires_grad=True)]
    optimizer = torch.optim.Adam(params, foreach=True)
    fit_optimizer_state(optimizer)
    assert not optimizer.param_groups[0]["fused"]
    _steps(optimizer, params, steps=2)


def test_a_learner_converted_to_float64_stays_fused():
    learner = SLeDGe(4, 2, seed=0)
    learner.learn(torch.randn(4, 4), torch.tensor([0, 1, 0, 1]))
    learner.double()
    assert all(group["fused"] for group in learner.optimizer.param_groups)
    before = [p.detach().clone() for p in learner.parameters()]
    learner.learn(torch.randn(4, 4, dtype=torch.float64), torch.tensor([0, 1, 0, 1]))
    assert any(not torch.equal(a, p) for a, p in zip(before, learner.parameters()))


def test_other_optimizers_are_moved_but_not_made_fused():
    params = [torch.randn(3, requires_grad=True)]
    optimizer = torch.optim.RMSprop(params)
    _steps(optimizer, params, steps=2)
    fit_optimizer_state(optimizer)
    assert "fused" not in optimizer.param_groups[0]
    _steps(optimizer, params, steps=2)


def test_adam_is_not_fused_unless_every_parameter_is_on_the_cpu():
    params = [torch.randn(2, requires_grad=True), torch.randn(2, device="meta", requires_grad=True)]
    assert make_adam(params, lr=1e-2, weight_decay=0.0).param_groups[0]["fused"] is False


def test_a_capturable_group_on_the_cpu_becomes_plain_and_steps():
    """torch's capturable Adam refuses CPU parameters (AssertionError at the step)."""
    params = [torch.randn(3, requires_grad=True)]
    optimizer = torch.optim.Adam(params, capturable=True)
    fit_optimizer_state(optimizer)
    assert optimizer.param_groups[0]["capturable"] is False
    _steps(optimizer, params, steps=2)
    assert optimizer.state[params[0]]["step"].item() == 2.0


def test_float64_step_counts_load_fused_as_float32():
    """A plain Adam stepped under a float64 default dtype counts its steps in
    float64; the fused kernel counts in float32."""
    params = [torch.randn(3, dtype=torch.float64, requires_grad=True)]
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        old = torch.optim.Adam(params, lr=1e-2)
        _steps(old, params, steps=3)
    finally:
        torch.set_default_dtype(default)
    assert old.state[params[0]]["step"].dtype == torch.float64
    resumed_params = [params[0].detach().clone().requires_grad_()]
    resumed = make_adam(resumed_params, lr=1e-2, weight_decay=0.0)
    load_optimizer_state(resumed, old.state_dict())
    step = resumed.state[resumed_params[0]]["step"]
    assert step.dtype == torch.float32 and step.item() == 3.0


@pytest.mark.parametrize("key, saved, message", [
    ("eps", 1e-6, r"the saved optimizer has eps=1e-06 \(this learner: 1e-08\)"),
    ("betas", (0.8, 0.999), r"betas=\(0.8, 0.999\) \(this learner: \(0.9, 0.999\)\)"),
])
def test_a_state_of_other_adam_settings_is_refused(key, saved, message):
    params = [torch.randn(3, requires_grad=True)]
    state = torch.optim.Adam(params, lr=1e-2, **{key: saved}).state_dict()
    optimizer = make_adam(params, lr=1e-2, weight_decay=0.0)
    before = copy.deepcopy(optimizer.state_dict())
    with pytest.raises(ValueError, match=message):
        load_optimizer_state(optimizer, state)
    assert_same(optimizer.state_dict(), before)


@pytest.mark.parametrize("corrupt, message", [
    # before: each loaded; a negative step divided by zero in the bias correction
    # (inf/NaN weights), a negative second moment gave a NaN square root, moments of
    # another shape failed deep inside the next step
    (lambda s: s.update(step=torch.tensor(-3.0)), "parameter 0 has step -3: a step count"),
    (lambda s: s.update(exp_avg_sq=-s["exp_avg_sq"] - 1), "parameter 0 has a negative "
                                                          "exp_avg_sq"),
    (lambda s: s.update(exp_avg=torch.zeros(4)), r"parameter 0 has exp_avg of shape \(4,\), "
                                                 r"its parameter \(3,\)"),
])
def test_a_state_no_step_can_leave_is_refused(corrupt, message):
    params = [torch.randn(3, requires_grad=True)]
    source = make_adam(params, lr=1e-2, weight_decay=0.0)
    _steps(source, params, steps=2)
    state = copy.deepcopy(source.state_dict())
    corrupt(state["state"][0])
    optimizer = make_adam([params[0].detach().clone().requires_grad_()], lr=1e-2,
                          weight_decay=0.0)
    before = copy.deepcopy(optimizer.state_dict())
    with pytest.raises(ValueError, match=message):
        load_optimizer_state(optimizer, state)
    assert_same(optimizer.state_dict(), before)
    nan = copy.deepcopy(source.state_dict())
    nan["state"][0]["exp_avg"].fill_(float("nan"))  # a diverged run's own state loads
    load_optimizer_state(optimizer, nan)


def test_a_loaded_state_shares_no_tensor_with_the_saved_one():
    params = [torch.randn(3, requires_grad=True)]
    source = make_adam(params, lr=1e-2, weight_decay=0.0)
    _steps(source, params, steps=2)
    moments = {key: value.clone() for key, value in source.state[params[0]].items()}
    copied = [params[0].detach().clone().requires_grad_()]
    loaded = make_adam(copied, lr=1e-2, weight_decay=0.0)
    load_optimizer_state(loaded, source.state_dict())  # a live state_dict: its own tensors
    _steps(loaded, copied, steps=2)
    for key, value in source.state[params[0]].items():
        assert torch.equal(value, moments[key]), key


def test_other_optimizers_keep_their_state_entries_that_are_no_tensors():
    params = [torch.randn(3, requires_grad=True)]
    optimizer = torch.optim.LBFGS(params)

    def closure():
        optimizer.zero_grad()
        loss = params[0].square().sum()
        loss.backward()
        return loss

    optimizer.step(closure)
    state = optimizer.state[params[0]]
    counts = (state["func_evals"], state["n_iter"])
    assert all(isinstance(count, int) for count in counts)
    fit_optimizer_state(optimizer)  # (an int has no .to())
    assert (state["func_evals"], state["n_iter"]) == counts


def test_make_adam_capturable_moves_the_step_counts_as_float32():
    params = [torch.randn(3, dtype=torch.float64, requires_grad=True)]
    optimizer = torch.optim.Adam(params)
    _steps(optimizer, params, steps=2)
    optimizer.state[params[0]]["step"] = torch.tensor(2.0, dtype=torch.float64)
    make_adam_capturable(optimizer, torch.device("meta"))  # (a stand-in for a GPU)
    step = optimizer.state[params[0]]["step"]
    assert optimizer.param_groups[0]["capturable"] is True
    assert step.device.type == "meta" and step.dtype == torch.float32
