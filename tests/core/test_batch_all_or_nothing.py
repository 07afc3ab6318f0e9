"""A batch SLeDGe refuses part-way learns none of its rows. An unclipped quantile
input range refuses a row by what the rows before it left (the range, the stored
rows): the learner then puts back the state it saved for the batch, so that it
goes on exactly as a twin that never saw the batch (before: the rows before the
refused one stayed learned). A refused ``load_state_dict`` keeps the prediction's
cache too."""
import pytest
import torch

from sledge_stream_helpers import D, assert_same_state, gaussian_stream, small
from state_helpers import assert_same
from torch_geometric_stream.models import CUDAGraphStep
from torch_geometric_stream.nn import RunningQuantileRange

#: The SLeDGe variants of the registry, and one whose graph learner gets no gradient
#: (its training steps keep and patch the memory graph).
VARIANTS = {"sledge": {}, "sledge-light": {"light": True}, "gsl": {"lam": 0.0},
            "static": {"graph": "static"}, "memory": {"graph": "none"},
            "kept graph": {"lam": 0.0, "supervise_graph": False}}


def narrow(rows):
    """``rows`` with feature 0 alternating 0 and 1e-30: its quantile range is a sliver."""
    rows = rows.clone()
    rows[:, 0] = torch.tensor([0.0, 1e-30]).repeat(len(rows))[:len(rows)]
    return rows


def labels(y):
    return torch.tensor([int(label) if i % 3 == 0 else -1 for i, label in enumerate(y)])


def learned(variant, dropout=0.0, searches_read_rows=False):
    """A small SLeDGe with an unclipped quantile range that learned 30 rows and
    then predicted one (a prediction's cache, which the next step reuses); with
    ``searches_read_rows``, that prediction searched only the rows it reads, and gave
    up (the next training step then searches every row)."""
    x, y = gaussian_stream(40)
    model = small(input_scaling=RunningQuantileRange(D, quantile=0.25, tolerance=0.0,
                                                      clip=False),
                  dropout=dropout, k=5 if searches_read_rows else 3, **VARIANTS[variant])
    model.learn(narrow(x[:30]), labels(y[:30]))
    if searches_read_rows:
        model._full_search_steps = 0  # as after 100 steps that did not give up
    model.predict_proba(narrow(x[30:31]))
    assert model._snapshot is None or model._snapshot.gave_up == searches_read_rows
    return model


def goes_on_alike(model, twin, prepare=narrow):
    """Predict and learn the same rows (``prepare`` d) with both; equal
    predictions and states."""
    x, y = gaussian_stream(40, seed=1)
    rows = prepare(x[:8])
    for learner in (model, twin):
        learner.learn(rows[0], int(y[0]))  # the step reuses the prediction's cache
        learner.predict_proba(rows[1])
        learner.learn(rows[1:], labels(y[1:8]))
    assert torch.equal(model.predict_proba(rows), twin.predict_proba(rows))
    assert_same_state(model, twin)


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("call", ["learn", "predict_learn"])
def test_a_batch_whose_later_row_is_refused_learns_none_of_it(variant, call):
    dropout = 0.5 if variant == "sledge" else 0.0  # its masks' generator is put back too
    model, twin = learned(variant, dropout), learned(variant, dropout)
    batch = narrow(gaussian_stream(3, seed=2)[0])
    batch[2, 0] = 1e10  # far outside (0, 1e-30): scaled to inf
    named = "row 2 of the batch: " if call == "learn" else ""
    step = model.learn if call == "learn" else CUDAGraphStep(model).predict_learn
    with pytest.raises(ValueError, match=rf"^{named}rows\[0, 0\] = 10000000000.0 scales to "
                                         r"inf by its feature's quantile range"):
        step(batch, torch.tensor([0, -1, 1]))
    assert_same_state(model, twin)
    goes_on_alike(model, twin)


def test_a_refused_batch_keeps_the_cache_of_a_prediction_that_gave_up_its_search():
    """The prediction before the batch searched only the rows it reads and gave up,
    which its cache tells the next training step (to search every row for a while):
    the refused batch leaves that cache as it was."""
    model, twin = learned("sledge", searches_read_rows=True), learned(
        "sledge", searches_read_rows=True)
    batch = narrow(gaussian_stream(2, seed=2)[0])
    batch[1, 0] = 1e10
    with pytest.raises(ValueError, match=r"^row 1 of the batch: "):
        model.learn(batch, torch.tensor([0, 1]))
    assert model._snapshot.gave_up
    goes_on_alike(model, twin)


def test_a_refused_load_keeps_the_cache_of_a_prediction_that_gave_up_its_search():
    """The same cache through a state_dict refused part-way (its rollback loads the
    old state again, which dropped the cache and counted a memory write)."""
    model, twin = learned("sledge", searches_read_rows=True), learned(
        "sledge", searches_read_rows=True)
    version = model.memory.version
    with pytest.raises(RuntimeError, match="Missing key"):
        model.load_state_dict(dict(list(model.state_dict().items())[:-1]))
    assert model._snapshot.gave_up and model.memory.version == version
    goes_on_alike(model, twin)


def test_a_batch_whose_later_row_narrows_the_range_past_a_stored_row_learns_none_of_it():
    """The window of the single-row case (see test_quantile_range.py): row 0 of the
    batch is taken, row 1 would narrow the range so that the stored row 1e10
    scales to inf."""
    def learner():
        model = small(input_scaling=RunningQuantileRange(
            D, quantile=0.25, tolerance=0.0, reservoir_size=4, window=4, clip=False))
        rows = torch.zeros(7, D)
        rows[:, 0] = torch.tensor([0.0, 1e10, 5.0, 7.0, 0.0, 1e-30, 0.0])
        model.learn(rows, torch.tensor([0, 1, 0, 1, 0, 0, 0]))
        return model
    model, twin = learner(), learner()
    batch = torch.zeros(2, D)
    batch[:, 0] = torch.tensor([5.0, 1e-30])
    with pytest.raises(ValueError, match=r"^row 1 of the batch: the rows would narrow the "
                                         r"quantile range so that a stored row scales to inf"):
        model.learn(batch, torch.tensor([0, 0]))
    assert model.input_scaler._seen == 7
    assert_same_state(model, twin)
    goes_on_alike(model, twin, lambda rows: rows.index_fill(1, torch.tensor([0]), 5.0))


def test_the_batch_is_learned_as_before_when_no_row_is_refused():
    # the saved state is only read when a row is refused
    model, twin = learned("sledge"), learned("sledge")
    x, y = gaussian_stream(20, seed=3)
    model.learn(narrow(x), labels(y))
    for row, label in zip(narrow(x), labels(y)):
        twin.learn(row, int(label))
    assert_same_state(model, twin)


def test_only_an_unclipped_quantile_range_saves_the_state_of_a_batch():
    assert small(input_scaling=RunningQuantileRange(D, clip=False))._refuses_mid_batch
    for scaling in (None, "online", "robust"):
        assert not small(input_scaling=scaling)._refuses_mid_batch


def test_the_refusal_keeps_its_origin_as_the_cause():
    model = learned("sledge")
    batch = narrow(gaussian_stream(2, seed=2)[0])
    batch[1, 0] = 1e10
    with pytest.raises(ValueError, match=r"^row 1 of the batch: ") as caught:
        model.learn(batch, torch.tensor([0, 1]))
    assert str(caught.value) == f"row 1 of the batch: {caught.value.__cause__}"


def test_an_internal_error_is_not_worded_as_a_refused_row(monkeypatch):
    """Only the input range's refusal names the batch row (an error elsewhere is
    raised as it is, its traceback kept)."""
    model = learned("sledge")

    def failing(update):
        raise ValueError("internal")
    monkeypatch.setattr(model, "_train_step", failing)
    with pytest.raises(ValueError, match="^internal$"):
        model.learn(narrow(gaussian_stream(2, seed=2)[0]), torch.tensor([0, 1]))


def test_a_ctrl_c_inside_a_batch_that_saved_its_state_learns_none_of_it(monkeypatch):
    model, twin = learned("sledge"), learned("sledge")
    train_step, steps = model._train_step, []

    def interrupted(update):
        steps.append(update)
        if len(steps) == 2:  # the second row: its memory written, its step not taken
            raise KeyboardInterrupt
        train_step(update)
    monkeypatch.setattr(model, "_train_step", interrupted)
    with pytest.raises(KeyboardInterrupt):
        model.learn(narrow(gaussian_stream(3, seed=2)[0]), torch.tensor([0, -1, 1]))
    monkeypatch.undo()
    assert_same_state(model, twin)
    goes_on_alike(model, twin)


def test_a_dense_propagation_without_a_dense_forward_is_refused_before_any_row():
    model, twin = small(propagation="dense"), small(propagation="dense")

    class NoDenseForward(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def __getattr__(self, name):
            if name == "forward_dense":
                raise AttributeError(name)
            try:
                return super().__getattr__(name)
            except AttributeError:
                return getattr(self.inner, name)

    model.backbone = NoDenseForward(model.backbone)
    x, y = gaussian_stream(3)
    for rows, targets in ((x, labels(y)), (x[0], 0)):
        with pytest.raises(TypeError, match="propagation='dense' needs a backbone with "
                                            r"forward_dense \(a GCNBackbone\), the backbone "
                                            "is NoDenseForward"):
            model.learn(rows, targets)
    assert model.memory.num_nodes == 0
    model.backbone = model.backbone.inner
    assert_same_state(model, twin)


@pytest.mark.parametrize("grads", ["of the last step", "none"])
def test_a_refused_batch_puts_the_gradients_back(grads):
    """The batch's first row took a step before row 2 was refused: the parameters'
    ``.grad`` are put back as they were (before: they held that row's gradients,
    of a row never learned)."""
    model, twin = learned("sledge"), learned("sledge")
    if grads == "none":
        for learner in (model, twin):
            learner.optimizer.zero_grad(set_to_none=True)
    batch = narrow(gaussian_stream(3, seed=2)[0])
    batch[2, 0] = 1e10
    with pytest.raises(ValueError, match=r"^row 2 of the batch: "):
        model.learn(batch, torch.tensor([0, -1, 1]))
    assert_same([param.grad for param in model.parameters()],
                 [param.grad for param in twin.parameters()], "grads")
    assert (next(model.parameters()).grad is None) == (grads == "none")


def test_a_float16_model_is_refused_before_a_batch_saves_its_state(monkeypatch):
    """A float16 learner can't learn at all: its batch is refused before its state
    is copied for an all-or-nothing batch (before: copied, then refused)."""
    model = small(input_scaling=RunningQuantileRange(D, clip=False)).half()
    saved = []
    monkeypatch.setattr(model, "_saved_state", lambda: saved.append(1))
    with pytest.raises(TypeError, match="can't learn in float16"):
        model.learn(gaussian_stream(3)[0].half(), torch.tensor([0, -1, 1]))
    assert saved == []
