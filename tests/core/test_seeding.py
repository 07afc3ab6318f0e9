from types import SimpleNamespace

import pytest
import torch

from sledge_stream_helpers import C, D, small
from torch_geometric_stream.models import OnlineMLP
from torch_geometric_stream.models.seeding import seeded_draws

LEARNERS = {
    "full": lambda **kw: small(**kw),
    "light": lambda **kw: small(light=True, **kw),
    "static-dropout": lambda **kw: small(graph="static", dropout=0.2, **kw),
    "none-dropout": lambda **kw: small(graph="none", dropout=0.2, **kw),
    "mlp": lambda **kw: OnlineMLP(D, C, hidden_channels=16, **kw),
}


def drawn(learner):
    """The parameters and the dropout generator's state: what a learner draws."""
    generator = getattr(learner.backbone, "generator", None)
    return ([p.detach().clone() for p in learner.parameters()],
            None if generator is None else generator.get_state())


def same(parameters, others):
    return len(parameters) == len(others) and all(
        torch.equal(p, q) for p, q in zip(parameters, others))


def assert_same_draws(a, b):
    (params_a, gen_a), (params_b, gen_b) = a, b
    assert same(params_a, params_b)
    assert (gen_a is None) == (gen_b is None)
    assert gen_a is None or torch.equal(gen_a, gen_b)


def reseeds(monkeypatch):
    """Record the calls that seed a generator of another device than the CPU."""
    calls = []
    seeds = [(torch.cuda, "manual_seed_all"), (torch.cuda, "manual_seed"),
             (torch.mps, "manual_seed")]
    if hasattr(torch, "xpu"):  # not in torch 2.1 and 2.2
        seeds.append((torch.xpu, "manual_seed_all"))
    for module, name in seeds:
        monkeypatch.setattr(module, name,
                            lambda seed, _name=f"{module.__name__}.{name}": calls.append(_name))
    return calls


@pytest.mark.parametrize("learner", LEARNERS)
def test_a_seeded_learner_reseeds_no_other_devices_generators(learner, monkeypatch):
    # before: torch.manual_seed(seed) also reseeded every CUDA (and MPS, XPU)
    # generator, which fork_rng did not put back
    calls = reseeds(monkeypatch)
    model = LEARNERS[learner](seed=3)
    if hasattr(model, "reset_parameters"):
        model.reset_parameters()
    assert calls == []


@pytest.mark.parametrize("learner", LEARNERS)
def test_seeded_draws_are_those_of_torch_manual_seed(learner):
    # the recorded runs depend on these parameters: the same bits as when the
    # seed was given to torch.manual_seed
    torch.manual_seed(11)
    seeded = LEARNERS[learner](seed=3)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(3)
        reference = LEARNERS[learner](seed=None)
    assert_same_draws(drawn(seeded), drawn(reference))
    if hasattr(seeded, "reset_parameters"):
        seeded.reset_parameters()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(3)
            for module in (reference.graph, reference.backbone):
                if module is not None:
                    module.reset_parameters()
        assert same(drawn(seeded)[0], drawn(reference)[0])


def fake_cuda(monkeypatch, seeds):
    """CPU generators standing in for the default generators of CUDA devices
    0, 1, ... (seeded with ``seeds``), read and set as torch.cuda does."""
    generators = tuple(torch.Generator().manual_seed(seed) for seed in seeds)

    def generator(device):
        return generators[device if isinstance(device, int) else torch.device(device).index]

    monkeypatch.setattr(torch.cuda, "default_generators", generators)
    monkeypatch.setattr(torch.cuda, "get_rng_state", lambda device: generator(device).get_state())
    monkeypatch.setattr(torch.cuda, "set_rng_state",
                        lambda state, device: generator(device).set_state(state))
    return generators


def test_seeded_draws_seed_and_restore_the_generator_of_the_parameters_cuda_device(
        monkeypatch):
    # before: the CUDA generators were seeded through torch.cuda.manual_seed_all,
    # every device's, and only the parameters' put back
    calls = reseeds(monkeypatch)
    generators = fake_cuda(monkeypatch, seeds=(10, 11))
    before = [generator.get_state() for generator in generators]
    on_cuda_1 = SimpleNamespace(device=torch.device("cuda", 1))
    with seeded_draws(3, [on_cuda_1]):
        inside = torch.rand(4, generator=generators[1])
        assert torch.equal(generators[0].get_state(), before[0])
    assert torch.equal(inside, torch.rand(4, generator=torch.Generator().manual_seed(3)))
    assert all(torch.equal(g.get_state(), state) for g, state in zip(generators, before))
    assert calls == []


@pytest.mark.parametrize("learner", LEARNERS)
def test_unseeded_learners_draw_from_the_global_generator_as_modules_do(learner):
    # before: seed=None drew from a fork of the global generator, so that two
    # learners built one after the other were the same and the generator stood still
    torch.manual_seed(7)
    first = drawn(LEARNERS[learner](seed=None))
    moved = torch.get_rng_state()
    second = drawn(LEARNERS[learner](seed=None))
    assert not torch.equal(torch.get_rng_state(), moved)
    assert not same(first[0], second[0])
    torch.manual_seed(7)
    assert_same_draws(drawn(LEARNERS[learner](seed=None)), first)


@pytest.mark.parametrize("learner", ["full", "light", "none-dropout"])
def test_reset_parameters_of_an_unseeded_learner_draws_from_the_global_generator(learner):
    model = LEARNERS[learner](seed=None)
    torch.manual_seed(5)
    model.reset_parameters()
    first = drawn(model)[0]
    model.reset_parameters()
    assert not same(first, drawn(model)[0])
    torch.manual_seed(5)
    model.reset_parameters()
    assert same(first, drawn(model)[0])


def test_unseeded_learners_draw_their_reservoir_seeds_from_torch_s_generator():
    """Before, every unseeded ``input_scaling="robust"`` learner drew its reservoir
    with seed 0: two of them kept the same rows. Now the seed is drawn from torch's
    global generator after the parameters, which moves on."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(5)
        online = small(input_scaling="online", seed=None)
        expected = int(torch.randint(2**63 - 1, ()))  # the draw after the parameters
        torch.manual_seed(5)
        first = small(input_scaling="robust", seed=None)
        second = small(input_scaling="robust", seed=None)
        torch.manual_seed(5)
        again = small(input_scaling="robust", seed=None)
    assert first.input_scaler.seed == again.input_scaler.seed == expected
    assert second.input_scaler.seed != expected
    assert same(list(first.parameters()), list(online.parameters()))
    # their reservoirs' generators differ (before: both started from seed 0)
    assert (first.input_scaler.get_extra_state()["rng"]
            != second.input_scaler.get_extra_state()["rng"])

def test_a_seeded_learner_s_reservoir_keeps_its_seed_and_torch_s_generator():
    state = torch.get_rng_state()
    model = small(input_scaling="robust", seed=7)
    assert model.input_scaler.seed == 7
    assert torch.equal(torch.get_rng_state(), state)
