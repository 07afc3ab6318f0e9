"""Labels that reach the learner ``label_delay`` samples late (``prequential``)."""
import re

import numpy as np
import pytest
import torch

from torch_geometric_stream.evaluation import (DelayedLabels, PrequentialRecord,
                                               check_label_delay, prequential)

X = np.arange(6, dtype=np.float32).reshape(6, 1)
Y = [0, 1, 2, 0, 1, 2]
MASK = np.array([1, 0, 1, 1, 0, 0], dtype=bool)


class CallLog:
    """Duck-typed learner that logs its calls by the row's value; predicts class 0."""

    num_classes = 3

    def __init__(self) -> None:
        self.calls = []

    def predict(self, x):
        self.calls.append(("predict", int(x[0])))
        return 0

    def learn(self, x, y):
        self.calls.append(("learn", int(x[0]), int(y)))


class FusedCallLog(CallLog):
    """A learner with ``predict_learn``, as ``CUDAGraphStep``."""

    def predict_learn(self, x, y):
        self.calls.append(("predict_learn", int(x[0]), int(y)))
        return 0


def _calls(delay, learner=None, **kwargs):
    learner = CallLog() if learner is None else learner
    result = prequential(learner, list(zip(X, Y)), label_mask=MASK, progress=False,
                         label_delay=delay, **kwargs)
    return learner.calls, result


def test_delay_zero_is_the_usual_test_then_train_run_call_for_call():
    calls, _ = _calls(0)
    assert calls == [
        ("predict", 0), ("learn", 0, 0), ("predict", 1), ("learn", 1, -1),
        ("predict", 2), ("learn", 2, 2), ("predict", 3), ("learn", 3, 0),
        ("predict", 4), ("learn", 4, -1), ("predict", 5), ("learn", 5, -1)]
    learner = CallLog()
    prequential(learner, list(zip(X, Y)), label_mask=MASK, progress=False)
    assert learner.calls == calls


def test_a_label_is_learned_right_after_the_sample_delay_positions_later():
    # every sample is learned as it arrives, unlabeled; the labels of 0, 2 and 3 come 2 late
    calls, result = _calls(2)
    assert calls == [("predict", 0), ("learn", 0, -1), ("predict", 1), ("learn", 1, -1),
                     ("predict", 2), ("learn", 2, -1), ("learn", 0, 0),
                     ("predict", 3), ("learn", 3, -1),
                     ("predict", 4), ("learn", 4, -1), ("learn", 2, 2),
                     ("predict", 5), ("learn", 5, -1), ("learn", 3, 0)]
    # the labels given are counted as before; the record says which samples had one
    assert result.metrics["n_labels"] == 3
    assert result.labeled.tolist() == MASK.tolist()


def test_without_learning_on_arrival_a_labeled_row_waits_for_its_label():
    calls, _ = _calls(2, learn_on_arrival=False)
    assert calls == [("predict", 0), ("predict", 1), ("learn", 1, -1),
                     ("predict", 2), ("learn", 0, 0), ("predict", 3),
                     ("predict", 4), ("learn", 4, -1), ("learn", 2, 2),
                     ("predict", 5), ("learn", 5, -1), ("learn", 3, 0)]


def _capymoa_ssl_calls(delay_length):
    """The calls of CapyMOA's ``prequential_ssl_evaluation`` loop (capymoa 0.15,
    ``evaluation.py``) for an SSL learner, on the samples of ``MASK``: labels due
    at index ``i`` are trained before predicting it; a labeled sample is trained
    unlabeled and comes back at ``i + delay_length``."""
    learner, due = CallLog(), []
    for i, (x, y) in enumerate(zip(X, Y)):
        while due and due[0][0] <= i:
            _, row, label = due.pop(0)
            learner.learn(row, label)
        learner.predict(x)
        if not MASK[i]:
            learner.learn(x, -1)
        elif delay_length > 0:
            learner.learn(x, -1)
            due.append((i + delay_length, x, y))
        else:
            learner.learn(x, y)
    return learner.calls


@pytest.mark.parametrize("delay", [0, 1, 2, 4])
def test_the_calls_are_capymoa_s_ssl_evaluation_with_a_delay_one_longer(delay):
    # CapyMOA trains the labels due before the next prediction, this package after the
    # last: the same calls in the same order, up to the last sample's (a label due after
    # it this package learns, CapyMOA never)
    calls, reference = _calls(delay)[0], _capymoa_ssl_calls(delay + 1 if delay else 0)
    last = ("learn", 5, -1)
    assert calls[:calls.index(last) + 1] == reference[:reference.index(last) + 1]


def test_labels_due_after_the_stream_ends_are_held_not_learned():
    calls, _ = _calls(10, learn_on_arrival=False)
    assert [call for call in calls if call[0] == "learn"] == [
        ("learn", 1, -1), ("learn", 4, -1), ("learn", 5, -1)]
    calls, _ = _calls(10)
    assert [call for call in calls if call[0] == "learn"] == [("learn", i, -1) for i in range(6)]


def test_a_fused_learner_is_stepped_for_every_sample_learned_on_arrival():
    calls, _ = _calls(1, FusedCallLog())
    assert calls == [("predict_learn", 0, -1), ("predict_learn", 1, -1), ("learn", 0, 0),
                     ("predict_learn", 2, -1), ("predict_learn", 3, -1), ("learn", 2, 2),
                     ("predict_learn", 4, -1), ("learn", 3, 0), ("predict_learn", 5, -1)]
    calls, _ = _calls(1, FusedCallLog(), learn_on_arrival=False)
    assert calls == [("predict", 0), ("predict_learn", 1, -1), ("learn", 0, 0),
                     ("predict", 2), ("predict", 3), ("learn", 2, 2),
                     ("predict_learn", 4, -1), ("learn", 3, 0), ("predict_learn", 5, -1)]


@pytest.mark.parametrize("learn_on_arrival, missing", [(True, "learn"),
                                                       (False, "learn and predict")])
def test_a_learner_without_the_calls_a_delay_needs_is_refused_before_the_first_sample(
        learn_on_arrival, missing):
    class FusedOnly:
        num_classes = 3

        def __init__(self):
            self.steps = 0

        def predict_learn(self, x, y):
            self.steps += 1
            return 0

    learner = FusedOnly()
    with pytest.raises(TypeError, match=f"label_delay needs the learner's {missing}, which "
                                        f"FusedOnly lacks"):
        prequential(learner, list(zip(X, Y)), label_mask=MASK, progress=False, label_delay=2,
                    learn_on_arrival=learn_on_arrival)
    assert learner.steps == 0


def test_a_held_row_is_a_copy_of_the_sample_of_its_type_not_the_streams_buffer():
    buffers = {np.ndarray: np.zeros(1, dtype=np.float32), torch.Tensor: torch.zeros(1),
               list: [0.0]}
    for kind, buffer in buffers.items():
        def refilled():
            for value, label in zip(range(6), Y):
                buffer[0] = value  # one buffer handed out for every sample
                yield buffer, label
        learner, rows = CallLog(), []
        learner.learn = lambda x, y: rows.append((type(x), int(x[0]), int(y)))
        prequential(learner, refilled(), label_mask=MASK, progress=False, label_delay=2,
                    learn_on_arrival=False)
        assert (kind, 0, 0) in rows and (kind, 2, 2) in rows


@pytest.mark.parametrize("history, learn_on_arrival", [("full", True), ("bounded", True),
                                                       ("full", False)])
def test_a_run_resumed_from_its_record_state_makes_the_uninterrupted_calls(history,
                                                                           learn_on_arrival):
    whole, _ = _calls(2, history=history, learn_on_arrival=learn_on_arrival)
    for stop_after in range(1, 6):
        first = CallLog()
        done = []
        prequential(first, list(zip(X, Y)), label_mask=MASK, progress=False, label_delay=2,
                    history=history, callback=lambda position, record: done.append(record),
                    stop=lambda: len(done) == stop_after, learn_on_arrival=learn_on_arrival)
        state = done[-1].state_dict()
        assert state["delayed"]["positions"] == [p for p in range(stop_after)
                                                  if MASK[p] and p + 2 >= stop_after]
        rest = CallLog()
        result = prequential(rest, list(zip(X, Y)), label_mask=MASK, progress=False,
                             label_delay=2, history=history, start=stop_after, initial=state,
                             learn_on_arrival=learn_on_arrival)
        assert first.calls + rest.calls == whole
        assert result.metrics["n_samples"] == 6 and result.metrics["n_labels"] == 3


def _state_after(samples, delay, history="full"):
    records = []
    prequential(CallLog(), list(zip(X, Y)), label_mask=MASK, progress=False,
                label_delay=delay, history=history, limit=samples,
                callback=lambda position, record: records.append(record))
    return records[-1].state_dict()


def test_a_held_labels_state_is_a_copy_both_ways():
    queue = DelayedLabels(2)
    queue.push(0, torch.tensor([1.0]), 1)
    state = queue.state_dict()
    state["rows"][0].fill_(9.0)
    (row, _), = list(queue.due(2))
    assert row.tolist() == [1.0]
    queue.load_state_dict(state, end=1)
    state["rows"][0].fill_(7.0)
    (row, _), = list(queue.due(2))
    assert row.tolist() == [9.0]


def test_held_labels_continue_only_with_the_arrival_rule_they_were_kept_with():
    state = _state_after(3, 2)
    record = PrequentialRecord(label_delay=2, learn_on_arrival=False)
    with pytest.raises(ValueError, match="kept with learn_on_arrival=True, this run has "
                                         "learn_on_arrival=False: continue it with "
                                         "learn_on_arrival=True"):
        record.load_state_dict(state)
    assert record.metrics.n_samples == 0


@pytest.mark.parametrize("kept, resumed", [(2, 3), (2, 0), (0, 2)])
def test_a_record_state_continues_only_with_the_delay_it_was_kept_with(kept, resumed):
    state = _state_after(3, kept)
    record = PrequentialRecord(label_delay=resumed)
    with pytest.raises(ValueError, match=f"kept with label_delay={kept}, this record has "
                                         f"label_delay={resumed}: continue it with "
                                         f"label_delay={kept}"):
        record.load_state_dict(state)
    assert record.metrics.n_samples == 0 and record.label_delay == resumed


@pytest.mark.parametrize("change, error, message", [
    (lambda held: held.update(positions=[2, 0]), ValueError, r"positions \[2, 0\] are not"),
    (lambda held: held.update(positions=[0, 0]), ValueError, "are not distinct positions in"),
    (lambda held: held.update(positions=[0, 3]), ValueError, r"in \[0, 3\), in order"),
    (lambda held: held.update(labels=[2]), ValueError, "2 positions, 2 rows and 1 labels"),
    (lambda held: held.update(labels=[0, -1]), ValueError,
     "the held label of position 2 must be >= 0"),
    (lambda held: held.update(positions=[0.0, 2]), TypeError, "position must be an integer"),
    (lambda held: held.pop("rows"), ValueError, r"lacks the entries \['rows'\]"),
    (lambda held: held.pop("learn_on_arrival"), ValueError,
     r"lacks the entries \['learn_on_arrival'\]"),
    (lambda held: held.pop("label_delay"), ValueError,
     r"^the held labels' state lacks the entries \['label_delay'\]$"),
])
def test_held_labels_that_no_run_could_hold_are_refused_and_the_record_stays_empty(
        change, error, message):
    state = _state_after(3, 3)
    assert state["delayed"]["positions"] == [0, 2]  # positions [0, 3) may be held at 3
    change(state["delayed"])
    record = PrequentialRecord(label_delay=3)
    with pytest.raises(error, match=message):
        record.load_state_dict(state)
    assert record.metrics.n_samples == 0 and len(record.delayed) == 0


@pytest.mark.parametrize("delay, error, message", [
    (-1, ValueError, "label_delay must be >= 0, got -1"),
    (1.0, TypeError, "label_delay must be an integer, got float"),
    (True, TypeError, "label_delay must be an integer, got bool"),
])
def test_a_label_delay_that_is_no_count_of_samples_is_refused_before_the_run(delay, error,
                                                                               message):
    learner = CallLog()
    with pytest.raises(error, match=message):
        prequential(learner, list(zip(X, Y)), progress=False, label_delay=delay)
    assert learner.calls == []
    with pytest.raises(error, match=message):
        check_label_delay(delay)


def test_the_queue_holds_copies_and_releases_each_label_once_when_due():
    queue = DelayedLabels(3)
    row = torch.tensor([1.0, 2.0])
    queue.push(4, row, 1)
    row.zero_()
    assert list(queue.due(6)) == [] and len(queue) == 1
    (held, label), = list(queue.due(7))
    assert held.tolist() == [1.0, 2.0] and label == 1 and len(queue) == 0
    with pytest.raises(ValueError, match="label_delay must be >= 1, got 0"):
        DelayedLabels(0)


class Rows(CallLog):
    """A CallLog that says its rows' width, as the package's learners do."""

    in_channels = 1


@pytest.mark.parametrize("history", ["full", "bounded"])
def test_a_held_label_other_than_its_samples_is_refused_at_the_resume(history):
    # before: a held 7 (of a learner of 3 classes) loaded, and the run failed at the
    # learning of it, 2 samples later ("label 7 is outside [0, 3)")
    state = _state_after(4, 2, history)
    assert state["delayed"]["positions"] == [2, 3] and state["delayed"]["labels"] == [2, 0]
    state["delayed"]["labels"] = [7, 0]
    learner = CallLog()
    message = (r"^the held label 7 of position 2 is not that of the record state's sample "
               r"there: label 2, given to the learner$" if history == "full" else
               r"^the held label 7 of position 2 is no label the record state counts$")
    with pytest.raises(ValueError, match=message):
        prequential(learner, list(zip(X, Y)), label_mask=MASK, progress=False, label_delay=2,
                    history=history, start=4, initial=state)
    assert learner.calls == []


def test_a_held_label_of_an_unlabeled_sample_or_before_the_record_is_refused():
    state = _state_after(4, 2)  # sample 3 labeled 0, sample 1 unlabeled
    record = PrequentialRecord(label_delay=2)
    unlabeled = {**state, "labeled": np.array([True, False, True, False])}
    with pytest.raises(ValueError, match="label 0, not given to the learner"):
        record.load_state_dict(unlabeled)
    late = {**state, "start": 3, "predictions": state["predictions"][:1],
            "labels": state["labels"][3:], "labeled": state["labeled"][3:],
            "seconds": state["seconds"][3:]}  # covers [3, 4): position 2 is before it
    late["delayed"] = {**state["delayed"], "positions": [2, 3]}
    with pytest.raises(ValueError, match="position 2 is from before the record state's "
                                         "start 3"):
        record.load_state_dict(late)
    assert record.metrics.n_samples == 0 and len(record.delayed) == 0


def test_a_held_row_without_values_is_refused():
    state = _state_after(4, 2)["delayed"]
    queue = DelayedLabels(2)
    with pytest.raises(TypeError, match=re.escape("the held row of position 2 is on the "
                                                  "'meta' device")):
        queue.load_state_dict({**state, "rows": [torch.zeros(1, device="meta"), np.zeros(1)]},
                              end=4)
    assert len(queue) == 0
    queue.load_state_dict({**state, "rows": [[0.5], {"a": 1.0}]}, end=4)  # a list, River's dict
    assert len(queue) == 2


def test_the_held_rows_a_queue_took_round_trip_whatever_their_type_and_shape():
    # before: rows of two lengths, or a scalar, were held and saved, and then their
    # state was refused ("the held rows must be of one shape", "must be a tensor, ...")
    queue = DelayedLabels(3)
    for position, row in enumerate([[1.0, 2.0], [3.0, 4.0, 5.0], 1.5]):
        queue.push(position, row, position)
    resumed = DelayedLabels(3)
    resumed.load_state_dict(queue.state_dict(), end=3)
    assert resumed.state_dict() == queue.state_dict()
    assert resumed.row_widths() == [(0, 2), (1, 3), (2, None)]
    assert list(resumed.due(5)) == [([1.0, 2.0], 0), ([3.0, 4.0, 5.0], 1), (1.5, 2)]


def test_a_held_label_beyond_int64_is_refused():
    state = _state_after(4, 2)["delayed"]
    queue = DelayedLabels(2)
    with pytest.raises(ValueError, match=r"^the held label of position 2 must fit an int64, "
                                         r"got 1180591620717411303424$"):
        queue.load_state_dict({**state, "labels": [2 ** 70, 0]}, end=4)
    assert len(queue) == 0


def test_a_held_row_of_another_width_than_the_learners_is_refused_at_the_resume():
    records = []
    prequential(Rows(), list(zip(X, Y)), label_mask=MASK, progress=False, label_delay=2,
                limit=4, callback=lambda position, record: records.append(record))
    state = records[-1].state_dict()
    resumed = prequential(Rows(), list(zip(X, Y)), label_mask=MASK, progress=False,
                          label_delay=2, start=4, initial=state)
    assert resumed.metrics["n_samples"] == 6
    state["delayed"]["rows"] = [np.zeros(3, np.float32), np.zeros(3, np.float32)]
    learner = Rows()
    with pytest.raises(ValueError, match=r"^initial holds back the row of position 2 with 3 "
                                         r"features, but the learner has in_channels=1$"):
        prequential(learner, list(zip(X, Y)), label_mask=MASK, progress=False, label_delay=2,
                    start=4, initial=state)
    assert learner.calls == []


@pytest.mark.parametrize("row", ["junk", None, 1.5, [[1.0], [2.0, 3.0]]])
def test_a_held_row_without_features_is_refused_at_the_resume_of_a_learner_with_them(row):
    # the held labels take any row (a learner's own), the learner's in_channels does not
    state = _state_after(4, 2)
    state["delayed"]["rows"] = [np.zeros(1, np.float32), row]
    learner = Rows()
    with pytest.raises(ValueError, match=r"^initial holds back the row of position 3 with no "
                                         r"feature dimension \(no tensor, array or list of "
                                         r"one shape\), but the learner has in_channels=1$"):
        prequential(learner, list(zip(X, Y)), label_mask=MASK, progress=False, label_delay=2,
                    start=4, initial=state)
    assert learner.calls == []


@pytest.mark.parametrize("entry, value, kind", [
    ("label_delay", 2.0, "an integer, got float"), ("label_delay", True, "an integer, got bool"),
    ("label_delay", "2", "an integer, got str"), ("learn_on_arrival", 1, "a bool, got int"),
    ("learn_on_arrival", "yes", "a bool, got str"),
])
def test_a_held_labels_setting_of_another_type_is_refused_by_name(entry, value, kind):
    # before: 2.0 == 2 and 1 == True, so the state of another run's types was taken
    state = _state_after(4, 2)["delayed"]
    queue = DelayedLabels(2)
    with pytest.raises(TypeError, match=f"^the held labels' {entry} must be {kind}$"):
        queue.load_state_dict({**state, entry: value}, end=4)
    assert len(queue) == 0 and queue.delay == 2 and queue.learn_on_arrival is True
    queue.load_state_dict({**state, "label_delay": np.int64(2),
                           "learn_on_arrival": np.bool_(True)}, end=4)  # NumPy's, as NumPy saves
    assert len(queue) == 2
