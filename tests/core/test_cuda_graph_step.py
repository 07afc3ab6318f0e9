"""CUDAGraphStep off the GPU: the fused step is exactly predict-then-learn,
validates before touching state, and prequential evaluation steps through it.
(Replay from CUDA graphs is checked in ``tests/test_cuda.py``.)"""
import copy

import pytest
import torch

from sledge_stream_helpers import C, D, assert_same_state, gaussian_stream, small
from state_helpers import assert_same, state_of
from torch_geometric_stream.evaluation import prequential
from torch_geometric_stream.models import CUDAGraphStep


def _labels(y):
    return [int(label) if i % 4 == 0 else -1 for i, label in enumerate(y)]


@pytest.mark.parametrize("kwargs", [{}, {"input_scaling": "online"},
                                    {"input_scaling": "robust"}])
def test_fused_step_on_cpu_is_predict_then_learn(kwargs):
    x, y = gaussian_stream(80)
    eager, fused = small(**kwargs), small(**kwargs)
    stepper = CUDAGraphStep(fused)
    for row, label in zip(x, _labels(y)):
        expected = eager.predict(row)
        eager.learn(row, label)
        assert torch.equal(stepper.predict_learn(row, label), expected)
    assert fused.memory.is_full and not stepper.graphable(-1)  # CPU: never graphed
    assert stepper.captures == stepper.replays == 0
    assert_same_state(eager, fused)



@pytest.mark.parametrize("context", [torch.no_grad, torch.inference_mode])
def test_fused_step_inside_no_grad_or_inference_mode_learns_as_outside(context):
    # before: backward raised RuntimeError after the memory was written
    x, y = gaussian_stream(40)
    eager, fused = small(), small()
    stepper = CUDAGraphStep(fused)
    for row, label in zip(x, _labels(y)):
        expected = eager.predict(row)
        eager.learn(row, label)
        with context():
            assert torch.equal(stepper.predict_learn(row, label), expected)
    assert_same_state(eager, fused)

def test_host_copy_of_the_input_range_follows_the_model():
    x, y = gaussian_stream(120)
    model = small(input_scaling="online")
    stepper = CUDAGraphStep(model)
    grew = []
    for row, label in zip(x, _labels(y)):
        before = model.input_scaler.low.clone(), model.input_scaler.high.clone()
        stepper.predict_learn(row, label)
        grew.append(not (torch.equal(before[0], model.input_scaler.low)
                         and torch.equal(before[1], model.input_scaler.high)))
        assert torch.equal(stepper._range[0], model.input_scaler.low)
        assert torch.equal(stepper._range[1], model.input_scaler.high)
    assert grew[0] and 5 < sum(grew) < 60  # the range grows early, then rarely


def test_host_copy_of_the_input_range_follows_a_reset_and_a_loaded_state():
    # before: the copy kept the wider range read before, so on a GPU a row inside it
    # but outside the model's narrower range replayed a graph that does not widen it
    x, y = gaussian_stream(60)
    model = small(input_scaling="online")
    stepper = CUDAGraphStep(model)
    early = None
    for i, (row, label) in enumerate(zip(x, _labels(y))):
        if i == 10:
            early = copy.deepcopy(model.state_dict())
        if i == 30:
            model.reset_state()
        if i == 45:
            model.load_state_dict(early)
        stepper.predict_learn(row, label)
        assert torch.equal(stepper._range[0], model.input_scaler.low)
        assert torch.equal(stepper._range[1], model.input_scaler.high)
    assert model.input_scaler.resets == 2


def test_a_quantile_range_always_steps_eagerly():
    # every row moves the P^2 markers: no host copy of the range can skip them
    model = small(input_scaling="robust")
    stepper = CUDAGraphStep(model)
    x, _ = gaussian_stream(10)
    model.learn(x, torch.full((10,), -1))
    assert stepper._range_grows(x[3]) and stepper._range is None


def test_learning_a_row_inside_the_range_without_observing_it_is_exact():
    x, y = gaussian_stream(60)
    a, b = small(input_scaling="online"), small(input_scaling="online")
    for model in (a, b):
        model.learn(x[:50], torch.tensor(_labels(y[:50])))
    inside = (a.input_scaler.low + a.input_scaler.high) / 2
    a.learn(inside, 1)
    b._learn_row(inside, 1, range_grows=False)
    assert_same_state(a, b)


def test_fused_step_takes_a_batch_row_by_row():
    x, y = gaussian_stream(40)
    labels = _labels(y)
    one, batch = small(), small()
    expected = torch.cat([CUDAGraphStep(one).predict_learn(row, label)
                          for row, label in zip(x, labels)])
    assert torch.equal(CUDAGraphStep(batch).predict_learn(x, torch.tensor(labels)), expected)
    assert torch.equal(one.memory.prototypes, batch.memory.prototypes)


@pytest.mark.parametrize("row, label, error, match", [
    (torch.full((D,), float("nan")), 0, ValueError, "NaN"),
    (torch.zeros(D + 1), 0, ValueError, "feature"),
    (torch.zeros(D), C, ValueError, "label"),
])
def test_bad_input_raises_and_leaves_the_model_unchanged(row, label, error, match):
    x, y = gaussian_stream(30)
    model = small()
    stepper = CUDAGraphStep(model)
    stepper.predict_learn(x, torch.tensor(_labels(y)))
    before = state_of(model)
    with pytest.raises(error, match=match):
        stepper.predict_learn(row, label)
    assert_same(state_of(model), before)


def test_constructor_checks_its_arguments():
    with pytest.raises(TypeError, match="SLeDGe"):
        CUDAGraphStep(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="warmup"):
        CUDAGraphStep(small(), warmup=0)


def test_prequential_steps_a_fused_learner_through_predict_learn():
    x, y = gaussian_stream(60)
    eager, fused = small(), small()
    stream = list(zip(x, y.tolist()))
    mask = torch.arange(60).remainder(4).eq(0).numpy()
    expected = prequential(eager, stream, label_mask=mask, progress=False)
    stepper = CUDAGraphStep(fused)
    calls = []
    original = stepper.predict_learn
    stepper.predict_learn = lambda *args: calls.append(1) or original(*args)
    result = prequential(stepper, stream, label_mask=mask, progress=False)
    assert len(calls) == 60
    assert (result.predictions == expected.predictions).all()


def test_a_float16_model_is_refused_before_any_row_is_read():
    # Adam's steps turn float16 weights NaN (nn.check_adam_dtype); before: learned on
    x, y = gaussian_stream(20)
    model, twin = small(input_scaling="online"), small(input_scaling="online")
    for learner in (model, twin):
        learner.learn(x[:10], _labels(y[:10]))
    stepper = CUDAGraphStep(model.half())
    with pytest.raises(TypeError, match="SLeDGe can't learn in float16"):
        stepper.predict_learn(x[10:12], [0, -1])
    assert stepper.captures == 0 and stepper._range is None
    assert_same_state(model, twin.half())
