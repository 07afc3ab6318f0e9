"""Active learning: ``UncertaintyQuery`` and ``prequential(..., label_query=...)``."""
import re

import numpy as np
import pytest
import torch

from torch_geometric_stream.evaluation import (LABEL_QUERIES, PrequentialRecord,
                                               UncertaintyQuery, prequential)


def _asks(query, probabilities):
    return [query(p) for p in probabilities]


def test_fixed_uncertainty_asks_below_its_threshold_while_the_budget_allows():
    query = UncertaintyQuery("fixed-uncertainty", budget=0.5, threshold=0.7)
    # seen 1: 0/1 < 0.5, 0.6 < 0.7 asks; seen 2: 1/2 is not below the budget; seen 3: 1/3,
    # 0.8 is not below 0.7; seen 4: 1/4, 0.5 asks; seen 5: 2/5, 0.65 asks
    assert _asks(query, [[0.6, 0.4], [0.1, 0.9], [0.8, 0.2], [0.5, 0.5], [0.35, 0.65]]) == [
        True, False, False, True, True]
    assert (query.seen, query.asked) == (5, 3)


def test_variable_uncertainty_lowers_its_threshold_after_asking_and_raises_it_after_not():
    query = UncertaintyQuery("variable-uncertainty", budget=1.0, step=0.5)
    assert query([0.9, 0.1]) is True and query.variable_threshold == 0.5  # 0.9 < 1
    assert query([0.6, 0.4]) is False and query.variable_threshold == 0.75  # 0.6 >= 0.5
    assert query([0.7, 0.3]) is True and query.variable_threshold == 0.375  # 0.7 < 0.75


def test_over_the_budget_nothing_is_asked_and_the_threshold_stays():
    query = UncertaintyQuery("variable-uncertainty", budget=0.25, step=0.5)
    assert query([0.5, 0.5]) is True and query.variable_threshold == 0.5  # 0/1 < 0.25
    # 1/2, 1/3 and 1/4 are not below the budget: nothing asked, theta stays
    assert _asks(query, [[0.5, 0.5]] * 3) == [False] * 3 and query.variable_threshold == 0.5
    assert query([0.5, 0.5]) is False and query.variable_threshold == 0.75  # 1/5: 0.5 >= 0.5
    assert query([0.5, 0.5]) is True and query.seen == 6  # 1/6: 0.5 < 0.75


def test_selective_sampling_asks_with_probability_b_over_b_plus_the_margin():
    query = UncertaintyQuery("selective-sampling", budget=1.0, seed=3)
    draws = np.random.default_rng(3).random(4)
    margins = [abs(0.9 - 0.5), 0.0, abs(0.7 - 0.5), abs(1.0 - 0.5)]
    expected = [bool(draw < 1.0 / (1.0 + margin)) for draw, margin in zip(draws, margins)]
    assert _asks(query, [[0.9, 0.1], [0.5, 0.5], [0.3, 0.7], [1.0, 0.0]]) == expected


def test_randomized_uncertainty_divides_by_one_plus_a_normal_draw():
    query = UncertaintyQuery("randomized-uncertainty", budget=1.0, step=0.0, seed=5)
    draws = np.random.default_rng(5).standard_normal(3)
    expected = [bool(0.8 / (draw + 1.0) < 1.0) for draw in draws]
    assert _asks(query, [[0.8, 0.2]] * 3) == expected


def test_probabilities_are_normalized_and_one_class_counts_as_unsure():
    query = UncertaintyQuery("fixed-uncertainty", budget=1.0, threshold=0.7)
    assert query(torch.tensor([[2.0, 6.0]])) is False  # 0.75 once normalized
    assert query(np.array([3.0, 2.0, 5.0])) is True  # 0.5
    assert query([1.0]) is True  # one class: MOA's 0


@pytest.mark.parametrize("probabilities, message", [
    ([[0.5, 0.5], [0.5, 0.5]], r"one sample's \(c,\) or \(1, c\), got shape \(2, 2\)"),
    ([], r"got shape \(0,\)"),
    ([0.5, float("nan")], "must be finite numbers >= 0"),
    ([-0.1, 1.1], "must be finite numbers >= 0"),
])
def test_probabilities_no_learner_gives_are_refused_and_nothing_is_counted(probabilities,
                                                                          message):
    query = UncertaintyQuery("variable-uncertainty", budget=0.5)
    before = query.state_dict()
    with pytest.raises(ValueError, match=message):
        query(probabilities)
    assert query.state_dict() == before


@pytest.mark.parametrize("probabilities, message", [
    # before: float()'s "float() argument must be a string or a real number, not 'dict'"
    ({0: 0.5, 1: 0.5}, "probabilities must be a (c,) array, tensor or list, got dict: a River "
                       "dict of probabilities by class is not taken; pass them as a (c,) array "
                       "in class-id order"),
    (["a", "b"], "probabilities must be numbers, a (c,) array, tensor or list, got list "
                 "(could not convert string to float: 'a')"),
])
def test_probabilities_that_are_no_numbers_are_refused_as_a_type_and_nothing_is_counted(
        probabilities, message):
    query = UncertaintyQuery("variable-uncertainty", budget=0.5)
    before = query.state_dict()
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        query(probabilities)
    assert query.state_dict() == before


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(strategy="uncertain"), ValueError, "strategy must be one of"),
    (dict(strategy=1), TypeError, "strategy must be one of"),
    (dict(budget=0.0), ValueError, r"budget must be in \(0, 1\]"),
    (dict(threshold=1.5), ValueError, r"threshold must be in \[0, 1\]"),
    (dict(step=-0.1), ValueError, r"step must be in \[0, 1\]"),
    (dict(seed=-1), ValueError, "seed must be >= 0"),
])
def test_settings_outside_their_range_are_refused_by_name(kwargs, error, message):
    arguments = {"strategy": "fixed-uncertainty", "budget": 0.1, **kwargs}
    with pytest.raises(error, match=message):
        UncertaintyQuery(**arguments)


@pytest.mark.parametrize("strategy", LABEL_QUERIES)
def test_a_query_continued_from_its_state_asks_as_the_uninterrupted_one(strategy):
    rng = np.random.default_rng(0)
    stream = rng.dirichlet(np.ones(3), size=60)
    whole = UncertaintyQuery(strategy, budget=0.3, seed=7)
    first = UncertaintyQuery(strategy, budget=0.3, seed=7)
    asks = _asks(first, stream[:25])
    rest = UncertaintyQuery(strategy, budget=0.3, seed=99)  # the state carries the draws
    with pytest.raises(ValueError, match="kept with budget=0.3 \\(this query: 0.5\\)"):
        UncertaintyQuery(strategy, budget=0.5).load_state_dict(first.state_dict())
    rest.load_state_dict(first.state_dict())
    assert asks + _asks(rest, stream[25:]) == _asks(whole, stream)


def test_a_state_no_query_keeps_is_refused_and_the_query_left_as_it_was():
    query = UncertaintyQuery("randomized-uncertainty", budget=0.3)
    query([0.5, 0.5])
    before = query.state_dict()
    for change in ({"asked": 5, "seen": 2}, {"variable_threshold": float("inf")},
                   {"rng": {"bit_generator": "MT19937"}}):
        with pytest.raises(ValueError):
            query.load_state_dict({**before, **change})
        assert query.state_dict() == before
    with pytest.raises(ValueError, match=r"lacks the entries \['rng'\]"):
        query.load_state_dict({key: value for key, value in before.items() if key != "rng"})


@pytest.mark.parametrize("entry, value, kind", [
    ("budget", np.array([0.3, 0.3]), "a number, got ndarray"),
    ("threshold", np.array([0.9]), "a number, got ndarray"),
    ("step", [0.01], "a number, got list"), ("budget", "0.3", "a number, got str"),
    ("budget", 0.3 + 0j, "a number, got complex"),
    ("strategy", np.array(["randomized-uncertainty"]), "a str, got ndarray"),
])
def test_a_states_setting_of_another_type_is_refused_by_name(entry, value, kind):
    # before: numpy's unnamed "truth value of an array is ambiguous" for an array
    query = UncertaintyQuery("randomized-uncertainty", budget=0.3)
    query([0.5, 0.5])
    before = query.state_dict()
    with pytest.raises(TypeError, match=f"^the label query's {entry} must be {kind}$"):
        query.load_state_dict({**before, entry: value})
    assert query.state_dict() == before


class Confidence:
    """A learner whose probabilities are fixed per sample (its x); logs its labels."""

    num_classes = 2

    def __init__(self) -> None:
        self.learned = []

    def predict_proba(self, x):
        return torch.tensor([[float(x[0]), 1.0 - float(x[0])]])

    def predict(self, x):
        return int(self.predict_proba(x).argmax())

    def learn(self, x, y):
        self.learned.append(int(y))


CONFIDENCES = np.array([[0.95], [0.6], [0.99], [0.3], [0.5], [0.97]], dtype=np.float32)
LABELS = [1, 1, 0, 0, 1, 0]


def test_prequential_asks_for_the_labels_the_query_picks_and_records_them():
    learner = Confidence()
    result = prequential(learner, list(zip(CONFIDENCES, LABELS)), progress=False,
                         label_query=UncertaintyQuery("fixed-uncertainty", budget=0.5,
                                                      threshold=0.9))
    # largest probabilities 0.95, 0.6, 0.99, 0.7, 0.5, 0.97: those below 0.9 are asked
    # for while fewer than half the samples seen so far (this one included) were: at the
    # last, 3 of 6 were
    assert learner.learned == [-1, 1, -1, 0, 1, -1]
    assert result.labeled.tolist() == [False, True, False, True, True, False]
    assert result.metrics["n_labels"] == 3
    # the prediction is the most probable class, the first of a tie
    assert result.predictions.tolist() == [0, 0, 0, 1, 0, 0]


class NumpyConfidence(Confidence):
    """:class:`Confidence` with its probabilities as a NumPy array :math:`(2,)`."""

    def predict_proba(self, x):
        return super().predict_proba(x).numpy().reshape(-1)


def test_probabilities_as_a_numpy_array_predict_as_a_tensor_of_them():
    results = [prequential(make(), list(zip(CONFIDENCES, LABELS)), progress=False,
                           label_query=UncertaintyQuery("fixed-uncertainty", budget=0.5,
                                                        threshold=0.9))
               for make in (Confidence, NumpyConfidence)]
    assert results[1].predictions.tolist() == [0, 0, 0, 1, 0, 0]  # the first of a tie
    assert results[1].labeled.tolist() == results[0].labeled.tolist()


class DeviceTensor(torch.Tensor):
    """Probabilities as a learner on a GPU gives them: each read of their values
    into host memory (``cpu``, ``item``, ``tolist``, ``numpy``, ...) is counted,
    and gives host values (a plain tensor)."""

    READS = {torch.Tensor.cpu, torch.Tensor.item, torch.Tensor.tolist, torch.Tensor.numpy,
             torch.Tensor.__array__, torch.Tensor.__int__, torch.Tensor.__float__,
             torch.Tensor.__index__, torch.Tensor.__bool__}
    reads = 0
    is_cpu = property(lambda self: False)  # as a GPU tensor says: reading it is a copy

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func not in cls.READS:
            return super().__torch_function__(func, types, args, kwargs)
        DeviceTensor.reads += 1
        host = [a.as_subclass(torch.Tensor) if isinstance(a, cls) else a for a in args]
        return func(*host, **(kwargs or {}))


class DeviceConfidence(Confidence):
    """:class:`Confidence` with its probabilities on a (counted) device."""

    def predict_proba(self, x):
        return super().predict_proba(x).as_subclass(DeviceTensor)


def test_the_probabilities_of_a_sample_are_read_from_the_device_once():
    # before: twice, by the query (its values) and by the prediction (its argmax's
    # item()): one more host-device synchronization per sample on a GPU
    DeviceTensor.reads = 0
    runs = [prequential(make(), list(zip(CONFIDENCES, LABELS)), progress=False,
                        label_query=UncertaintyQuery("fixed-uncertainty", budget=0.5,
                                                     threshold=0.9))
            for make in (DeviceConfidence, Confidence)]
    assert DeviceTensor.reads == len(LABELS)
    assert runs[0].predictions.tolist() == runs[1].predictions.tolist() == [0, 0, 0, 1, 0, 0]
    assert runs[0].labeled.tolist() == runs[1].labeled.tolist()


def test_a_label_query_shows_its_settings():
    query = UncertaintyQuery("fixed-uncertainty", budget=0.5, threshold=0.9)
    assert repr(query) == ("UncertaintyQuery('fixed-uncertainty', budget=0.5, threshold=0.9, "
                           f"step={query.step})")


def test_asked_labels_come_late_with_a_delay():
    learner = Confidence()
    prequential(learner, list(zip(CONFIDENCES, LABELS)), progress=False, label_delay=2,
                label_query=UncertaintyQuery("fixed-uncertainty", budget=0.5, threshold=0.9))
    # samples 1, 3 and 4 are asked about: each learned unlabeled as it comes, its label
    # after the sample 2 later (4's after the stream's end: held)
    assert learner.learned == [-1, -1, -1, -1, 1, -1, -1, 0]


def test_a_run_resumed_from_its_record_state_continues_the_query():
    stream = list(zip(CONFIDENCES, LABELS))

    def run(**kwargs):
        learner = Confidence()
        query = UncertaintyQuery("randomized-uncertainty", budget=0.5, seed=1)
        records = []
        prequential(learner, stream, progress=False, label_query=query,
                    callback=lambda position, record: records.append(record), **kwargs)
        return learner.learned, records[-1].state_dict()

    whole, _ = run()
    first, state = run(limit=3)
    rest, _ = run(start=3, initial=state)
    assert first + rest == whole
    assert state["label_query"]["seen"] == 3


def test_a_record_state_continues_only_with_a_query_if_it_was_kept_with_one():
    learner, stream = Confidence(), list(zip(CONFIDENCES, LABELS))
    records = []
    prequential(learner, stream, progress=False, limit=2,
                callback=lambda position, record: records.append(record))
    plain = records[-1].state_dict()
    query = UncertaintyQuery("fixed-uncertainty", budget=0.5)
    record = PrequentialRecord(label_query=query)
    with pytest.raises(ValueError, match="kept with no label query, this record has one"):
        record.load_state_dict(plain)
    asked = {**plain, "label_query": {**query.state_dict(), "seen": 2, "asked": 1}}
    with pytest.raises(ValueError, match="kept with a label query, this record has none"):
        PrequentialRecord().load_state_dict(asked)
    # a record part refused after the query's state was read sets the query back
    broken = {**asked, "labeled": np.array([True])}
    with pytest.raises(ValueError, match="1-D of one length"):
        record.load_state_dict(broken)
    assert (query.seen, query.asked) == (0, 0)


def test_a_query_is_refused_before_the_first_sample_with_a_mask_or_without_probabilities():
    stream = list(zip(CONFIDENCES, LABELS))
    query = UncertaintyQuery("fixed-uncertainty", budget=0.5)
    with pytest.raises(ValueError, match="label_mask and label_query both decide"):
        prequential(Confidence(), stream, progress=False, label_query=query,
                    label_mask=np.ones(6, bool))

    class PredictOnly:
        def predict(self, x):
            return 0

        def learn(self, x, y):
            raise AssertionError("never reached")

    with pytest.raises(TypeError, match="PredictOnly has no predict_proba"):
        prequential(PredictOnly(), stream, progress=False, label_query=query)
    with pytest.raises(TypeError, match="label_query must be callable, got str"):
        prequential(Confidence(), stream, progress=False, label_query="fixed-uncertainty")
    assert query.seen == 0


def test_a_step_of_one_keeps_a_threshold_of_zero_that_a_state_carries():
    # MOA's rule: theta * (1 - 1) = 0 after the first label, and nothing is asked after
    query = UncertaintyQuery("variable-uncertainty", budget=1.0, step=1.0)
    assert _asks(query, [[0.6, 0.4], [0.5, 0.5]]) == [True, False]
    assert query.variable_threshold == 0.0
    resumed = UncertaintyQuery("variable-uncertainty", budget=1.0, step=1.0)
    resumed.load_state_dict(query.state_dict())
    assert resumed.variable_threshold == 0.0 and resumed([0.5, 0.5]) is False


def test_infinite_probabilities_are_refused_and_name_the_sample_in_a_run():
    query = UncertaintyQuery("fixed-uncertainty", budget=1.0)
    with pytest.raises(ValueError, match="must be finite numbers >= 0"):
        query([float("inf"), 1.0])
    assert query.seen == 0

    class Batch(Confidence):
        def predict_proba(self, x):
            return torch.full((2, 2), 0.5)

    with pytest.raises(ValueError, match=r"class probabilities for the sample at position 0: "
                                         r"probabilities must be one sample's"):
        prequential(Batch(), list(zip(CONFIDENCES, LABELS)), progress=False, label_query=query)

    class RiverStyle(Confidence):
        def predict_proba(self, x):
            return {0: 0.5, 1: 0.5}

    with pytest.raises(TypeError, match=r"^the learner's class probabilities for the sample at "
                                        r"position 0: probabilities must be a \(c,\) array"):
        prequential(RiverStyle(), list(zip(CONFIDENCES, LABELS)), progress=False,
                    label_query=query)
    assert query.seen == 0


def test_a_run_refusing_its_initial_state_leaves_the_query_as_it_was():
    stream = list(zip(CONFIDENCES, LABELS))
    records = []
    prequential(Confidence(), stream, progress=False, limit=4,
                label_query=UncertaintyQuery("randomized-uncertainty", budget=0.5, seed=1),
                callback=lambda position, record: records.append(record))
    state = records[-1].state_dict()
    query = UncertaintyQuery("randomized-uncertainty", budget=0.5, seed=1)
    before = query.state_dict()
    with pytest.raises(ValueError, match=r"initial covers positions \[0, 4\) but start=2"):
        prequential(Confidence(), stream, progress=False, label_query=query, initial=state,
                    start=2)
    assert query.state_dict()["seen"] == before["seen"] == 0
    assert query.state_dict()["rng"] == before["rng"]


@pytest.mark.parametrize("label_delay", [0, 2])
def test_a_query_with_a_learner_that_cannot_learn_names_what_the_query_needs(label_delay):
    """predict_learn is no help with a query: the message does not offer it."""
    class FusedWithoutLearn:
        num_classes = 2

        def predict_learn(self, x, y):
            raise AssertionError("never reached")

        def predict_proba(self, x):
            raise AssertionError("never reached")

    query = UncertaintyQuery("fixed-uncertainty", budget=0.5)
    with pytest.raises(TypeError, match="^label_query needs the learner's predict_proba and "
                                        "learn: FusedWithoutLearn lacks learn$"):
        prequential(FusedWithoutLearn(), list(zip(CONFIDENCES, LABELS)), progress=False,
                    label_query=query, label_delay=label_delay)
    assert query.seen == 0


def test_probabilities_whose_sum_overflows_are_normalized_by_their_largest():
    # before: [1e308, 1e308] summed to inf, p_max read as 0 and the label asked
    query = UncertaintyQuery("fixed-uncertainty", budget=1.0, threshold=0.4)
    assert query([1e308, 1e308]) is False  # 0.5
    assert query(np.array([1.7e308, 1.7e308, 1.7e308, 1.7e308, 1.7e308])) is True  # 0.2
    assert (query.seen, query.asked) == (2, 1)


def test_ordinary_probabilities_give_the_largest_over_their_sum_bit_for_bit():
    rng = np.random.default_rng(3)
    samples = [rng.dirichlet(np.ones(classes)) * scale for classes in (2, 3, 10, 100)
               for scale in (1.0, 1e-300, 7.5, 1e300)]
    for values in samples:
        largest, classes = UncertaintyQuery._largest_probability(values)
        assert largest == float(values.max() / values.sum()) and classes == values.size


@pytest.mark.parametrize("probabilities, message", [
    (np.array([0.5 + 3j, 0.5]), "probabilities must be real numbers, got complex values"),
    (torch.tensor([0.5, 0.5], dtype=torch.complex64),
     "probabilities must be real numbers, got complex values"),
    (np.array([True, False]), "probabilities must be real numbers, got bool values"),
    (torch.tensor([[True, False]]), "probabilities must be real numbers, got bool values"),
    (torch.ones(2, device="meta"), "probabilities is on the 'meta' device, which holds no "
                                   "values: pass a tensor with data (e.g. on the CPU)"),
])
def test_complex_bool_or_meta_probabilities_are_refused_as_a_type(probabilities, message):
    # before: the imaginary part dropped (with a warning), True read as 1, and a meta
    # tensor's NotImplementedError
    query = UncertaintyQuery("fixed-uncertainty", budget=1.0)
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        query(probabilities)
    assert (query.seen, query.asked) == (0, 0)


def test_an_integer_beyond_float64_is_refused_as_a_value():
    query = UncertaintyQuery("fixed-uncertainty", budget=1.0)
    with pytest.raises(ValueError, match="must be finite numbers >= 0"):
        query([10 ** 400, 1])
    assert query.seen == 0


@pytest.mark.parametrize("seen, asked", [(50, 50), (50, 11), (10, 3), (1, 2), (0, 1)])
def test_a_state_that_spent_more_than_its_budget_is_refused(seen, asked):
    # before: seen=50, asked=50 at budget 0.2 loaded, and no label was asked after it
    query = UncertaintyQuery("fixed-uncertainty", budget=0.2)
    before = query.state_dict()
    with pytest.raises(ValueError, match=rf"asked {asked} labels of {seen} samples, beyond "
                                         r"its budget=0.2"):
        query.load_state_dict({**before, "seen": seen, "asked": asked})
    assert query.state_dict() == before


def test_every_state_a_query_writes_is_within_its_budget_and_loads():
    rng = np.random.default_rng(0)
    for budget in (0.05, 0.2, 1 / 3, 0.5, 1.0):
        for strategy in LABEL_QUERIES:
            query = UncertaintyQuery(strategy, budget=budget, seed=2)
            for probabilities in rng.dirichlet(np.ones(3) * 0.3, size=200):
                query(probabilities)
                UncertaintyQuery(strategy, budget=budget).load_state_dict(query.state_dict())
            assert query.asked > 0  # the bound was reached, not only approached


def test_a_generator_state_numpy_cannot_hold_is_refused_as_a_value():
    # before: OverflowError ("Python integer -1 out of bounds for uint64")
    query = UncertaintyQuery("selective-sampling", budget=0.5)
    before = query.state_dict()
    state = {**before, "rng": {**before["rng"], "state": {**before["rng"]["state"],
                                                          "state": -5}}}
    with pytest.raises(ValueError, match=r"^the label query's rng state is not a state of "
                                         r"NumPy's default generator: OverflowError"):
        query.load_state_dict(state)
    assert query.state_dict() == before


@pytest.mark.parametrize("history", ["full", "bounded"])
@pytest.mark.parametrize("label_delay", [0, 2])
def test_a_record_states_query_saw_its_samples_and_asked_its_labels(history, label_delay):
    stream = list(zip(CONFIDENCES, LABELS))
    records = []
    prequential(Confidence(), stream, progress=False, limit=4, history=history,
                label_delay=label_delay,
                label_query=UncertaintyQuery("fixed-uncertainty", budget=0.5),
                callback=lambda position, record: records.append(record))
    state = records[-1].state_dict()
    assert (state["label_query"]["seen"], state["label_query"]["asked"]) == (4, 2)

    def resume(query_state):
        query = UncertaintyQuery("fixed-uncertainty", budget=0.5)
        prequential(Confidence(), stream, progress=False, start=4, history=history,
                    label_delay=label_delay, label_query=query,
                    initial={**state, "label_query": query_state})
        return query

    assert (resume(state["label_query"]).seen, resume(state["label_query"]).asked) == (6, 3)
    # before: loaded, the budget read as spent (or as not spent) over samples never seen
    for seen, asked in ((10 ** 6, 0), (4, 1), (5, 2)):
        with pytest.raises(ValueError, match=rf"^the record state's label query saw {seen} "
                                             rf"samples and asked {asked} labels, but the "
                                             rf"record covers 4 samples with 2 labels$"):
            resume({**state["label_query"], "seen": seen, "asked": asked})
    query = UncertaintyQuery("fixed-uncertainty", budget=0.5)
    with pytest.raises(ValueError, match="saw 5 samples"):
        prequential(Confidence(), stream, progress=False, start=4, history=history,
                    label_delay=label_delay, label_query=query,
                    initial={**state, "label_query": {**state["label_query"], "seen": 5}})
    assert (query.seen, query.asked) == (0, 0)  # put back as it was


def test_a_query_that_saw_another_runs_samples_is_refused_before_a_new_run():
    stream = list(zip(CONFIDENCES, LABELS))
    query = UncertaintyQuery("fixed-uncertainty", budget=0.5)
    prequential(Confidence(), stream, progress=False, label_query=query)
    learner = Confidence()
    with pytest.raises(ValueError, match=r"^label_query has seen 6 samples \(of another run\)"):
        prequential(learner, stream, progress=False, label_query=query)
    assert learner.learned == [] and query.seen == 6
