"""The CUDA path gives the CPU path's results (skipped without a CUDA device).

Compared in float64, where the two devices' rounding differences stay far
below anything that could flip a prediction over a short stream.
"""
import contextlib

import pytest
import torch
from device_helpers import record_moves
from state_helpers import assert_same, state_of

from torch_geometric_stream import SLeDGe
from torch_geometric_stream.ops import CSRGraph

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")

C, D = 3, 6


def gaussian_stream(n, seed=0):
    gen = torch.Generator().manual_seed(seed)
    centers = torch.randn(C, D, generator=gen) * 4.0
    y = torch.randint(0, C, (n,), generator=gen)
    return (centers[y] + torch.randn(n, D, generator=gen)).double(), y


def run(model, x, y):
    predictions = []
    for i in range(len(x)):
        predictions.append(int(model.predict(x[i])))
        model.learn(x[i], int(y[i]) if i % 10 == 0 else -1)
    return predictions


VARIANTS = {
    "full": {},
    "light": {"light": True},
    "memory": {"graph": "none"},
    "static": {"graph": "static"},
    "dense": {"propagation": "dense"},
    "message_passing": {"propagation": "message_passing"},
    "online-rescale": {"input_scaling": "online"},
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_cuda_stream_equals_cpu_stream(variant):
    x, y = gaussian_stream(120)
    kwargs = dict(labeled_size=6, unlabeled_size=20, k=3, hidden_channels=16, num_layers=2,
                  lr=5e-3, seed=0, **VARIANTS[variant])
    cpu = SLeDGe(D, C, **kwargs).double()
    gpu = SLeDGe(D, C, **kwargs).double().to("cuda")
    assert run(cpu, x, y) == run(gpu, x.cuda(), y)
    for (name, a), b in zip(cpu.state_dict().items(), gpu.state_dict().values()):
        if isinstance(a, torch.Tensor):
            assert b.device.type == "cuda", name
            assert torch.allclose(a, b.cpu(), atol=1e-8), name


def test_csr_kernels_on_cuda_equal_cpu():
    gen = torch.Generator().manual_seed(0)
    num_nodes, h = 50, 8
    edge_index = torch.randint(0, num_nodes, (2, 200), generator=gen)
    x = torch.randn(num_nodes, h, generator=gen, dtype=torch.float64)
    w = torch.rand(200, generator=gen, dtype=torch.float64)
    results = []
    for device in ("cpu", "cuda"):
        xd = x.detach().to(device).requires_grad_()
        wd = w.detach().to(device).requires_grad_()
        graph = CSRGraph(edge_index.to(device), num_nodes)
        out = graph.aggregate(xd, wd)
        dots = graph.edge_dot(xd, xd)
        (out.square().sum() + dots.sum()).backward()
        # and one CSR structure: the CPU counts the rows, the GPU searches them
        structure = [getattr(graph, name).crow for name in ("by_target", "by_source",
                                                             "_symmetric")]
        results.append([t.detach().cpu() for t in (out, dots, xd.grad, wd.grad, *structure)])
    for a, b in zip(*results):
        assert a.dtype == b.dtype and torch.allclose(a, b, atol=1e-10)


def test_cpu_input_to_a_cuda_model_and_bad_input():
    model = SLeDGe(D, C, labeled_size=6, unlabeled_size=20, k=3, hidden_channels=16,
                   seed=0).to("cuda")
    x, y = gaussian_stream(5)
    model.learn(x.float(), y)  # host rows are moved to the model's device
    assert model.predict_proba(x[0].float()).device.type == "cuda"
    before = state_of(model)
    with pytest.raises(ValueError):
        model.learn(torch.full((D,), float("nan"), device="cuda"), 0)
    assert_same(state_of(model), before)


GRAPHED_VARIANTS = {**VARIANTS,
                    "class-prior": {"class_prior": "stream"},
                    # labeled memory never full: graphs at partial fill levels
                    "partial": {"labeled_size": 30},
                    "light-partial-frobenius": {"light": True, "labeled_size": 30,
                                                "regularizer": "frobenius"}}
SMALL = dict(labeled_size=6, unlabeled_size=20, k=3, hidden_channels=16, num_layers=2,
             lr=5e-3, seed=0)


def _twins(**kwargs):
    """An eager CUDA model with capturable Adam, as CUDAGraphStep makes it, and
    a CUDAGraphStep over an identical model."""
    from torch_geometric_stream.models import CUDAGraphStep
    eager = SLeDGe(D, C, **{**SMALL, **kwargs}).double().to("cuda")
    for group in eager.optimizer.param_groups:
        group["capturable"] = True
    return eager, CUDAGraphStep(SLeDGe(D, C, **{**SMALL, **kwargs}).double().to("cuda"))


def _step_both(eager, stepper, x, y, start, stop):
    """Predictions of an eager model and of a CUDAGraphStep over ``x[start:stop]``."""
    by_eager, by_graph = [], []
    for i in range(start, stop):
        label = int(y[i]) if i % 10 == 0 else -1
        by_eager.append(int(eager.predict(x[i])))
        eager.learn(x[i], label)
        by_graph.append(int(stepper.predict_learn(x[i], label)))
    return by_eager, by_graph


def _assert_same_state(a, b):
    for (name, u), v in zip(a.state_dict().items(), b.state_dict().values()):
        if isinstance(u, torch.Tensor):
            assert torch.allclose(u, v, atol=1e-8), name


@pytest.mark.parametrize("variant", GRAPHED_VARIANTS)
def test_cuda_graph_replay_equals_eager_steps(variant):
    x, y = gaussian_stream(200)
    x = x.cuda()
    eager, stepper = _twins(**GRAPHED_VARIANTS[variant])
    by_eager, by_graph = _step_both(eager, stepper, x, y, 0, len(x))
    assert by_eager == by_graph
    assert stepper.captures >= 2 and stepper.replays >= 50, (stepper.captures, stepper.replays)
    _assert_same_state(eager, stepper.model)


def test_cuda_graph_recaptures_after_the_optimizer_is_replaced():
    x, y = gaussian_stream(260)
    x = x.cuda()
    eager, stepper = _twins()
    first = _step_both(eager, stepper, x, y, 0, 150)
    captures = stepper.captures
    for model in (eager, stepper.model):
        torch.manual_seed(1)
        model.reset_parameters()  # new parameters in place, a new optimizer
    for group in eager.optimizer.param_groups:
        group["capturable"] = True  # the stepper's is switched when it re-captures
    second = _step_both(eager, stepper, x, y, 150, len(x))
    assert first[0] == first[1] and second[0] == second[1]
    assert stepper.captures > captures
    _assert_same_state(eager, stepper.model)


def test_a_graph_stepped_model_moved_to_the_cpu_keeps_learning():
    """CUDAGraphStep leaves Adam capturable with its state on the GPU; after
    ``.to("cpu")`` the model steps as plain Adam, like a twin moved before any capture."""
    from torch_geometric_stream.models import CUDAGraphStep
    x, y = gaussian_stream(200)
    stepper = CUDAGraphStep(SLeDGe(D, C, **SMALL).double().to("cuda"))
    for i in range(150):
        stepper.predict_learn(x[i].cuda(), int(y[i]) if i % 10 == 0 else -1)
    assert stepper.replays > 0
    model = stepper.model.to("cpu")
    assert not any(group["capturable"] for group in model.optimizer.param_groups)
    assert all(t.device.type == "cpu" for state in model.optimizer.state.values()
               for t in state.values())
    run(model, x[150:], y[150:])
    assert all(torch.isfinite(p).all() for p in model.parameters())


@pytest.mark.skipif(torch.__version__ < "2.4", reason="torch < 2.4 has no fused CPU Adam")
def test_adam_is_fused_on_the_cpu_only():
    """The learners' Adam runs fused on the CPU; on a GPU it is torch's default
    (which CUDAGraphStep makes capturable), and fused again back on the CPU."""
    x, y = gaussian_stream(40)
    model = SLeDGe(D, C, **SMALL).double()
    run(model, x[:20], y[:20])
    assert all(group["fused"] for group in model.optimizer.param_groups)
    model.to("cuda")
    assert not any(group["fused"] for group in model.optimizer.param_groups)
    run(model, x[20:30].cuda(), y[20:30])
    model.to("cpu")
    assert all(group["fused"] for group in model.optimizer.param_groups)
    run(model, x[30:], y[30:])
    assert all(torch.isfinite(p).all() for p in model.parameters())


def test_dropout_on_cuda_draws_from_the_learner_s_generator():
    """SLeDGe's dropout masks come from its own CUDA generator: twins stay equal
    (to rounding) whatever draws from torch's global generators, a state_dict resumes exactly
    on CUDA, a CUDA state seeds a CPU learner's generator, and CUDAGraphStep
    steps a dropout model eagerly with the plain steps' results."""
    import copy

    from torch_geometric_stream.models import CUDAGraphStep
    from torch_geometric_stream.nn import make_adam_capturable
    x, y = gaussian_stream(120)
    x = x.cuda()
    model = SLeDGe(D, C, **SMALL, dropout=0.3).double().to("cuda")
    assert model.backbone.generator.device.type == "cuda"
    run(model, x[:60], y[:60])
    twin, stepped = copy.deepcopy(model), copy.deepcopy(model)
    fresh = SLeDGe(D, C, **{**SMALL, "seed": 1}, dropout=0.3).double().to("cuda")
    fresh.load_state_dict(model.state_dict())
    graph_step = CUDAGraphStep(stepped)  # which makes its Adam capturable: so do the others
    for m in (model, twin, fresh):
        make_adam_capturable(m.optimizer, m.device)
    for i in range(60, 120):
        torch.rand(3, device="cuda")  # the global generators move; no learner reads them
        label = int(y[i]) if i % 10 == 0 else -1
        outputs = [m.predict_proba(x[i]) for m in (model, twin, fresh)]
        for m in (model, twin, fresh):
            m.learn(x[i], label)
        graph_step.predict_learn(x[i], label)
        for other in outputs[1:]:  # CUDA's atomic sums round in any order: not bit-exact;
            # another mask (dropout 0.3) moves them by far more
            torch.testing.assert_close(other, outputs[0], rtol=0, atol=1e-8)
    assert graph_step.replays == 0  # dropout steps run eagerly
    _assert_same_state(model, graph_step.model)
    on_cpu = SLeDGe(D, C, **SMALL, dropout=0.3).double()
    on_cpu.load_state_dict(model.state_dict())  # a CUDA generator's state seeds the CPU one
    assert on_cpu.backbone.generator.device.type == "cpu"
    run(on_cpu, x[:20].cpu(), y[:20])
    assert all(torch.isfinite(p).all() for p in on_cpu.parameters())


@contextlib.contextmanager
def no_sync():
    """Fail on any synchronizing CUDA call inside (torch's sync debug mode)."""
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        yield
    finally:
        torch.cuda.set_sync_debug_mode("default")


def test_robust_transform_scales_rows_on_a_gpu_as_on_the_host():
    """``make_transform("robust")`` keeps its range on the host: rows on a GPU
    are scaled there and come back on their device, the very values of host
    rows (before: a ValueError, the rows not on the range's device)."""
    from torch_geometric_stream.evaluation import make_transform
    x, _ = gaussian_stream(40)
    on_host, on_gpu = (make_transform("robust", l2=False,
                                      robust_options={"reservoir_size": 16})
                       for _ in range(2))
    for row in x[:30]:
        got, expected = on_gpu.transform_one(row.cuda()), on_host.transform_one(row)
        assert got.device.type == "cuda" and torch.equal(got.cpu(), expected)
    for update in (False, True):
        got = on_gpu.transform_many(x[30:].cuda(), update=update)
        assert got.device.type == "cuda"
        assert torch.equal(got.cpu(), on_host.transform_many(x[30:], update=update))
    assert_same(on_gpu.state_dict(), on_host.state_dict())


@pytest.mark.parametrize("pinned", [False, True])
def test_host_rows_reach_the_gpu_without_a_sync_unless_pinned(monkeypatch, pinned):
    """Pageable host rows are copied without waiting (CUDA stages them before
    the call returns); pinned ones with a wait, so that the caller may refill
    its buffer as soon as the call returns."""
    from torch_geometric_stream.validation import as_feature_matrix
    rows = torch.arange(float(D)).view(1, D)
    rows = rows.pin_memory() if pinned else rows
    moves = record_moves(monkeypatch)
    moved = as_feature_matrix(rows, D, device=torch.device("cuda"))
    assert [move[:3] for move in moves] == [("cpu", "cuda", not pinned)]
    rows.fill_(-1.0)  # the caller refills its buffer at once
    assert moved.tolist() == [list(map(float, range(D)))]


@pytest.mark.parametrize("pinned", [False, True])
def test_cuda_graph_step_sends_host_rows_without_a_sync_unless_pinned(monkeypatch, pinned):
    """A model that scales its input checks host rows on the host, then copies
    them to the GPU without waiting (unless pinned), with the eager steps' results."""
    twin_x, y = gaussian_stream(200)  # the eager twin's rows: moves of their own
    x = twin_x.pin_memory() if pinned else twin_x.clone()
    rows = {x[i].data_ptr() for i in range(len(x))}
    eager, stepper = _twins(input_scaling="online")
    moves = record_moves(monkeypatch)
    by_eager, by_graph = [], []
    for i in range(len(x)):
        label = int(y[i]) if i % 10 == 0 else -1
        by_eager.append(int(eager.predict(twin_x[i])))
        eager.learn(twin_x[i], label)
        by_graph.append(int(stepper.predict_learn(x[i], label)))
    assert by_eager == by_graph and stepper.replays > 0
    by_graph_step = [move[:3] for move in moves if move[0] == "cpu" and move[3] in rows]
    assert by_graph_step == [("cpu", "cuda", not pinned)] * len(x)
    _assert_same_state(eager, stepper.model)


def test_labeled_index_is_built_on_the_gpu_without_a_sync():
    """Before: built on the host and copied, a sync per labeled insert."""
    from torch_geometric_stream.memory import DualPrototypeMemory
    memory = DualPrototypeMemory(2, num_classes=2, labeled_size=4, unlabeled_size=1).cuda()
    memory.update(torch.tensor([1.0, 0.0], device="cuda"), 0)
    memory.update(torch.tensor([0.0, 1.0], device="cuda"), 1)
    with no_sync():
        index = memory.labeled_index()
    assert index.device.type == "cuda" and index.tolist() == [0, 2]


def test_a_scaler_module_goes_to_the_learner_s_device():
    """A scaler given on the GPU to a CPU learner is moved to the CPU, as
    ``.to()`` moves a submodule (before: the first predict failed with a
    mixed-device error), and one on the CPU to a CUDA learner's device."""
    from torch_geometric_stream.nn import RunningMinMax
    x, y = gaussian_stream(60)
    scaler = RunningMinMax(D).cuda()
    model = SLeDGe(D, C, **SMALL, input_scaling=scaler)
    assert model.input_scaler is scaler and scaler.low.device.type == "cpu"
    assert run(model, x.float(), y) == run(SLeDGe(D, C, **SMALL, input_scaling="online"),
                                           x.float(), y)
    on_gpu = SLeDGe(D, C, **SMALL, input_scaling=RunningMinMax(D), device="cuda")
    assert on_gpu.input_scaler.low.device.type == "cuda"


def test_a_fixed_range_on_gpu_rows_makes_its_bounds_once(monkeypatch):
    """FixedRangeScaler's bounds are made on the rows' device once, not copied
    there per row; the values are the host rows' ones."""
    from torch_geometric_stream.evaluation import transforms
    bounds, scaled = [], transforms.scaled_finite

    def recorded(rows, low, high, *args):
        bounds.append((low, high))
        return scaled(rows, low, high, *args)
    monkeypatch.setattr(transforms, "scaled_finite", recorded)
    scaler = transforms.FixedRangeScaler((-8.0, 8.0))
    x, _ = gaussian_stream(10)
    for row in x:
        got = scaler.transform_one(row.cuda())
        assert got.device.type == "cuda" and torch.equal(got.cpu(), scaler.transform_one(row))
    on_gpu = [pair for pair in bounds if pair[0].device.type == "cuda"]
    assert len(on_gpu) == len(x) and all(pair[0] is on_gpu[0][0] and pair[1] is on_gpu[0][1]
                                         for pair in on_gpu)


@pytest.mark.parametrize("pinned", [False, True])
def test_online_mlp_sends_pinned_labels_with_a_wait(monkeypatch, pinned):
    """A label of the caller's pinned ``y`` reaches the GPU with a wait (before:
    never), so that the caller may refill ``y`` as soon as ``learn`` returns."""
    from torch_geometric_stream.models import OnlineMLP
    model = OnlineMLP(D, C, seed=0).to("cuda")
    y = torch.tensor([1, 0, 2])
    y = y.pin_memory() if pinned else y
    moves = record_moves(monkeypatch)
    model.learn(torch.ones(3, D), y)
    labels = [move[:3] for move in moves if move[:2] == ("cpu", "cuda") and move[3] in
              {y[i].data_ptr() for i in range(3)}]
    assert labels == [("cpu", "cuda", not pinned)] * 3
