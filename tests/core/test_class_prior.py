"""``SLeDGe(class_prior="stream")``: logit adjustment from the balanced labeled
memory's class prior to the labeled stream's."""
import io
import math

import pytest
import torch

from sledge_stream_helpers import C, D, gaussian_stream, small
from torch_geometric_stream import SLeDGe


def test_shift_hand_checked():
    model = small(class_prior="stream", labeled_size=6)  # 2 slots per class
    x, _ = gaussian_stream(6)
    # labels 0, 0, 0, 1: class 0 fills its 2 slots (third merges), class 1 one slot
    for row, label in zip(x, [0, 0, 0, 1]):
        model.learn(row, label)
    assert model.label_counts.tolist() == [3.0, 1.0, 0.0]
    stream = torch.tensor([4.0, 2.0, 1.0]) / 7  # counts + 1
    held = torch.tensor([3.0, 2.0, 1.0]) / 6  # filled slots + 1
    assert torch.allclose(model._prior_shift(), stream.log() - held.log())
    expected = math.log(4 / 7) - math.log(3 / 6)
    assert model._prior_shift()[0].item() == pytest.approx(expected)


def test_probabilities_are_the_memory_model_reweighted_by_the_prior_ratio():
    x, y = gaussian_stream(60)
    memory_prior, stream_prior = small(), small(class_prior="stream")
    for row, label in zip(x, y):
        memory_prior.learn(row, int(label))
        stream_prior.learn(row, int(label))
    p_memory, p_stream = memory_prior.predict_proba(x[:5]), stream_prior.predict_proba(x[:5])
    ratio = stream_prior._prior_shift().exp()
    reweighted = p_memory * ratio
    assert torch.allclose(p_stream, reweighted / reweighted.sum(dim=1, keepdim=True),
                          atol=1e-6)


def test_balanced_labels_in_a_balanced_memory_change_nothing():
    x, _ = gaussian_stream(30)
    model = small(class_prior="stream", labeled_size=6)
    for i, row in enumerate(x[:6]):
        model.learn(row, i % C)  # 2 labels per class, every slot filled
    assert torch.allclose(model._prior_shift(), torch.zeros(C))


def test_majority_class_gains_probability_on_every_query():
    # 30 labels of class 0, 3 of class 1, 3 of class 2: the memory holds 2 of each
    x, _ = gaussian_stream(200, separation=0.0)  # pure noise: classes indistinguishable
    labels = [0, 1, 2] * 3 + [0] * 27
    memory_prior, stream_prior = small(), small(class_prior="stream")
    for row, label in zip(x, labels):
        memory_prior.learn(row, label)
        stream_prior.learn(row, label)
    shift = stream_prior._prior_shift()
    assert shift[0] > 0 > shift[1] and shift[1] == shift[2]
    queries = x[100:200]
    p_memory, p_stream = memory_prior.predict_proba(queries), stream_prior.predict_proba(queries)
    assert (p_stream[:, 0] > p_memory[:, 0]).all()
    assert (p_stream[:, 1:] < p_memory[:, 1:]).all()


def test_label_counts_round_trip_and_reset():
    x, y = gaussian_stream(40)
    model = small(class_prior="stream")
    for row, label in zip(x, y):
        model.learn(row, int(label))
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    clone = small(class_prior="stream", seed=3)
    clone.load_state_dict(torch.load(buffer, weights_only=False))
    assert torch.equal(clone.label_counts, model.label_counts)
    assert torch.equal(clone.predict_proba(x[:4]), model.predict_proba(x[:4]))
    model.reset_state()
    assert model.label_counts.sum() == 0


def test_bad_label_leaves_the_counts_unchanged():
    model = small(class_prior="stream")
    model.learn(torch.randn(D), 1)
    with pytest.raises(ValueError):
        model.learn(torch.randn(2, D), torch.tensor([0, C]))
    assert model.label_counts.tolist() == [0.0, 1.0, 0.0]


def test_memory_prior_keeps_no_counts_and_unknown_prior_is_rejected():
    assert "label_counts" not in small().state_dict()
    with pytest.raises(ValueError, match="class_prior"):
        SLeDGe(D, C, class_prior="uniform")


def test_label_counts_keep_counting_past_float32_integers():
    # a float32 count stops at 2**24 (+1 rounds back): the prior froze after ~16.8M labels
    model = small(class_prior="stream")
    model.label_counts.copy_(torch.tensor([2**24, 2**24, 2**40]))
    x, _ = gaussian_stream(2)
    model.learn(x, torch.tensor([0, 0]))
    assert model.label_counts.tolist() == [2**24 + 2, 2**24, 2**40]
    stream = torch.tensor([2**24 + 3, 2**24 + 1, 2**40 + 1], dtype=torch.float64)
    held = torch.tensor([3.0, 1.0, 1.0], dtype=torch.float64)  # both slots of class 0 filled
    expected = (stream / stream.sum()).log() - (held / held.sum()).log()
    assert torch.allclose(model._prior_shift().double(), expected, rtol=1e-6, atol=0)


def test_label_counts_stay_integers_under_dtype_casts_and_old_float_states_load():
    model = small(class_prior="stream").double()
    assert model.label_counts.dtype == torch.long  # .half() would have made them stop at 2048
    assert model._prior_shift().dtype == torch.float64
    state = model.state_dict()
    state["label_counts"] = torch.tensor([5.0, 0.0, 2.0])  # saved when the counts were float32
    clone = small(class_prior="stream").double()
    clone.load_state_dict(state)
    assert clone.label_counts.dtype == torch.long and clone.label_counts.tolist() == [5, 0, 2]


def test_a_float64_learner_shifts_by_its_prior_in_float64():
    # the integer counts were divided in the default float32, then cast to float64
    model = small(class_prior="stream").double()
    model.label_counts.copy_(torch.tensor([3, 10**9 + 1, 7]))
    stream = torch.tensor([4, 10**9 + 2, 8], dtype=torch.float64)
    held = torch.ones(3, dtype=torch.float64)  # nothing learned: no slot filled
    expected = (stream / stream.sum()).log() - (held / held.sum()).log()
    torch.testing.assert_close(model._prior_shift(), expected, rtol=1e-14, atol=0)


def test_unlabeled_samples_are_not_counted():
    x, _ = gaussian_stream(4)
    model = small(class_prior="stream")
    model.learn(x, torch.tensor([1, -1, -1, 1]))
    assert model.label_counts.tolist() == [0, 2, 0]
