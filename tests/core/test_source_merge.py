"""source_merge: how a memory that keeps unscaled sources merges them. "unit" is
the paper's merge of unit rows at the current range (as with rows scaled
outside); "raw" mixes the sources with the merge's weights."""
import pytest
import torch

from torch_geometric_stream.memory import DualPrototypeMemory
from torch_geometric_stream.models import SLeDGe
from torch_geometric_stream.nn import RunningMinMax, RunningQuantileRange
from torch_geometric_stream.ops.normalize import unit_rows

#: The box [0, 10]^2 the fixed ranges span.
CORNERS = torch.tensor([[0.0, 0.0], [10.0, 10.0]], dtype=torch.float64)


def _min_max():
    scaler = RunningMinMax(2).double()
    scaler.observe_(CORNERS)
    return scaler


def _quantile_range():
    """The 1-99 % range of 101 rows 0, 0.1, ..., 10 per feature, about [0.1, 9.9]:
    nothing observed after, so fixed; OLD and NEW lie inside it (nothing clipped)."""
    scaler = RunningQuantileRange(2, quantile=0.01, reservoir_size=1000).double()
    scaler.observe_(torch.linspace(0.0, 10.0, 101, dtype=torch.float64).repeat(2, 1).T)
    assert (scaler.low < 1.0).all() and (scaler.high > 9.5).all()
    return scaler


def _memory_after_merge(scaler, source_merge, label, old, new, **kwargs):
    """A one-slot memory of ``label``'s partition holding source ``old``, after
    merging source ``new`` (raw-feature similarity)."""
    memory = DualPrototypeMemory(2, 1, 1, 1, source_channels=2, source_merge=source_merge,
                                 **kwargs).double()
    scale = lambda rows: scaler(rows, check=False)  # noqa: E731
    derive = lambda rows: unit_rows(scale(rows))  # noqa: E731
    for source in (old, new):
        memory.update(derive(source.unsqueeze(0))[0], label, source=source, derive=derive,
                      scale=scale)
    slot = 0 if label >= 0 else 1
    return memory.prototypes[slot], memory.sources[slot]


def _paper_merge(p, x, label, weight=None):
    """The paper's merge of unit rows ``p`` (old) and ``x`` (new), by hand: adaptive
    weight (1 - 1/2) max(0, sim) for a slot's first merge (count offset 1)."""
    weight = 0.5 * max(0.0, float(p @ x)) if weight is None else weight
    mixed = (1 - weight) * p + weight * x if label >= 0 else weight * p + (1 - weight) * x
    return unit_rows(mixed)


OLD = torch.tensor([5.5, 4.5], dtype=torch.float64)
NEW = torch.tensor([9.0, 2.0], dtype=torch.float64)
SCALERS = pytest.mark.parametrize("make_scaler", [_min_max, _quantile_range],
                                  ids=["min-max", "quantile"])
LABELS = pytest.mark.parametrize("label", [0, -1], ids=["labeled", "unlabeled"])


@SCALERS
@LABELS
def test_the_unit_merge_is_the_paper_merge_at_a_fixed_range(make_scaler, label):
    scaler = make_scaler()
    p, x = unit_rows(scaler(torch.stack([OLD, NEW])))
    expected = _paper_merge(p, x, label)
    prototype, source = _memory_after_merge(scaler, "unit", label, OLD, NEW)
    assert torch.allclose(prototype, expected, rtol=0, atol=1e-14)
    # the kept source derives it, and lies between the two sources
    assert torch.allclose(unit_rows(scaler(source.unsqueeze(0)))[0], expected, rtol=0,
                          atol=1e-14)
    share = (source - OLD) / (NEW - OLD)
    assert torch.allclose(share, share[:1]) and 0 < share[0] < 1
    # raw mixing does not: the weights move toward the row of the larger scaled norm
    assert not torch.allclose(_memory_after_merge(scaler, "raw", label, OLD, NEW)[0], expected,
                              atol=1e-3)


@SCALERS
@LABELS
def test_the_raw_merge_mixes_the_sources_with_the_merge_weights(make_scaler, label):
    scaler = make_scaler()
    p, x = unit_rows(scaler(torch.stack([OLD, NEW])))
    sim = unit_rows(p.unsqueeze(0))[0] @ unit_rows(x.unsqueeze(0))[0]  # as the memory has it
    weight = (1.0 - 1.0 / torch.tensor(2.0, dtype=torch.float64)) * sim.clamp(min=0.0)
    old_share, new_share = (1 - weight, weight) if label >= 0 else (weight, 1 - weight)
    mixed = old_share * OLD + new_share * NEW
    prototype, source = _memory_after_merge(scaler, "raw", label, OLD, NEW)
    assert torch.equal(source, mixed)  # the merge before source_merge existed, bit for bit
    assert torch.equal(prototype, unit_rows(scaler(mixed.unsqueeze(0)))[0])
    assert DualPrototypeMemory(2, 1, 1, 1).source_merge == "raw"  # the default, for now
    assert SLeDGe(2, 2, input_scaling="online").memory.source_merge == "raw"


@pytest.mark.parametrize("old, new, alpha, expected", [
    # the old source scales to the zero row: the merge stores the new one
    ([5.0, 5.0], [9.0, 2.0], "adaptive", "new"),
    # the new one does: similarity 0, weight 0, the old prototype stays
    ([9.0, 2.0], [5.0, 5.0], "adaptive", "old"),
    # ... but with all the weight on it, the merge is its zero row
    ([9.0, 2.0], [5.0, 5.0], 1.0, "zero"),
])
def test_a_zero_scaled_row_merges_as_its_zero_unit_row(old, new, alpha, expected):
    scaler = _min_max()
    old, new = torch.tensor(old, dtype=torch.float64), torch.tensor(new, dtype=torch.float64)
    prototype, source = _memory_after_merge(scaler, "unit", 0, old, new, alpha=alpha)
    want = {"new": (unit_rows(scaler(new.unsqueeze(0)))[0], new),
            "old": (unit_rows(scaler(old.unsqueeze(0)))[0], old),
            "zero": (torch.zeros(2, dtype=torch.float64), new)}[expected]
    assert torch.equal(prototype, want[0]) and torch.equal(source, want[1])
    p, x = unit_rows(scaler(torch.stack([old, new])))
    paper = x if not p.any() else _paper_merge(p, x, 0, None if alpha == "adaptive" else alpha)
    assert torch.equal(prototype, paper)


def test_a_unit_merge_needs_scale_and_leaves_the_memory_unchanged():
    memory = DualPrototypeMemory(2, 1, 1, 0, source_channels=2, source_merge="unit")
    derive = lambda rows: unit_rows(rows)  # noqa: E731
    memory.update(unit_rows(OLD.float()), 0, source=OLD.float(), derive=derive)  # an insert
    before = {name: value.clone() for name, value in memory.state_dict().items()}
    with pytest.raises(ValueError, match='source_merge="unit" needs scale'):
        memory.update(unit_rows(NEW.float()), 0, source=NEW.float(), derive=derive)
    assert all(torch.equal(value, memory.state_dict()[name]) for name, value in before.items())
    with pytest.raises(ValueError, match="source_merge must be one of"):
        DualPrototypeMemory(2, 1, 1, 0, source_channels=2, source_merge="paper")
    with pytest.raises(ValueError, match="source_merge must be one of"):
        SLeDGe(2, 2, input_scaling="online", source_merge="paper")


def _learned_memory(source_merge, inside, **kwargs):
    """SLeDGe (float64) over 40 rows in [0, 10]^2 after the box's corners: scaled
    by its own online range (``inside``), or by that fixed range outside."""
    generator = torch.Generator().manual_seed(0)
    rows = torch.cat([CORNERS, torch.rand(40, 2, generator=generator,
                                          dtype=torch.float64) * 10])
    labels = [-1, -1] + [i % 2 if i % 3 == 0 else -1 for i in range(40)]
    model = SLeDGe(2, 2, labeled_size=4, unlabeled_size=4, k=2, hidden_channels=8, seed=0,
                   input_scaling="online" if inside else None, source_merge=source_merge,
                   **kwargs).double()
    for row, label in zip(rows, labels):
        model.learn(row if inside else row / 10 * 2 - 1, label)
    return model.memory


@pytest.mark.parametrize("kwargs", [{}, {"merge_similarity": "raw"}, {"light": True}])
def test_a_unit_merge_learner_equals_rows_scaled_outside(kwargs):
    outside = _learned_memory("raw", inside=False, **kwargs)
    inside = _learned_memory("unit", inside=True, **kwargs)
    assert int(outside.counts.sum()) > int(outside.node_mask.sum()) + 20  # many merges
    assert torch.allclose(inside.prototypes, outside.prototypes, rtol=0, atol=1e-12)
    raw = _learned_memory("raw", inside=True, **kwargs)
    assert not torch.allclose(raw.prototypes, outside.prototypes, atol=1e-3)


@pytest.mark.parametrize("source_merge", ["raw", "unit"])
def test_a_state_dict_round_trip_goes_on_identically(source_merge):
    generator = torch.Generator().manual_seed(1)
    rows = torch.rand(30, 2, generator=generator) * 10
    make = lambda: SLeDGe(2, 2, labeled_size=2, unlabeled_size=3, k=1,  # noqa: E731
                          hidden_channels=8, seed=0, input_scaling="online",
                          source_merge=source_merge)
    model, twin = make(), make()
    for position, row in enumerate(rows[:15]):
        model.learn(row, position % 2 if position % 3 == 0 else -1)
    twin.load_state_dict(model.state_dict())
    for position, row in enumerate(rows[15:]):
        label = position % 2 if position % 3 == 0 else -1
        model.learn(row, label)
        twin.learn(row, label)
    assert twin.memory.source_merge == source_merge
    assert torch.equal(model.memory.sources, twin.memory.sources)
    assert torch.equal(model.memory.prototypes, twin.memory.prototypes)
