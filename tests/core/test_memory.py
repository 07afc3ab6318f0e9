import copy
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from state_helpers import assert_same, state_of

from torch_geometric_stream.memory import DualPrototypeMemory


def unit(*values):
    return F.normalize(torch.tensor(values, dtype=torch.float32), dim=0)


def memory_state(memory):
    """Everything that steers ``memory``: its ``state_dict()`` (copied), its host-side
    fill levels and its version (which tells a learner whether its cached embeddings
    of the memory still hold)."""
    return {"state_dict": state_of(memory), "fill_levels": memory.fill_levels,
            "version": memory.version}


def raw(rows):  # embedding function = identity on unit rows
    return F.normalize(rows, dim=-1)


def test_slot_layout_and_accounting():
    memory = DualPrototypeMemory(2, num_classes=3, labeled_size=7, unlabeled_size=2)
    assert memory.slots_per_class == 2 and memory.labeled_size == 6 and memory.capacity == 8
    memory.update(unit(1.0, 0.0), 2)
    memory.update(unit(0.0, 1.0), 0)
    memory.update(unit(1.0, 1.0), -1)
    assert memory.num_labeled == 2 and memory.num_unlabeled == 1
    assert memory.node_mask.tolist() == [True, False, False, False, True, False, True, False]
    rows, labels, ages = memory.labeled()
    assert labels.tolist() == [0, 2]
    assert torch.equal(rows, torch.stack([unit(0.0, 1.0), unit(1.0, 0.0)]))
    assert torch.equal(memory.unlabeled(), unit(1.0, 1.0).unsqueeze(0))
    # the class-2 slot aged by one when the class-0 sample arrived
    assert ages.tolist() == [0, 1]


def test_labeled_merge_alpha_hand_checked():
    memory = DualPrototypeMemory(2, num_classes=1, labeled_size=1, unlabeled_size=0)
    p, x = unit(1.0, 0.0), unit(0.6, 0.8)
    memory.update(p, 0)
    result = memory.update(x, 0, raw)
    assert result.merged and result.node == 0
    sim = 0.6
    alpha = (1 - 1 / 2) * sim  # count 1 + offset 1 -> N = 2
    expected = F.normalize((1 - alpha) * p + alpha * x, dim=0)
    assert torch.allclose(memory.prototypes[0], expected, atol=1e-6)
    assert memory.counts[0].item() == 2
    # second merge uses N = 3
    before = memory.prototypes[0].clone()
    memory.update(x, 0, raw)
    sim = float(before @ x)
    alpha = (1 - 1 / 3) * sim
    expected = F.normalize((1 - alpha) * before + alpha * x, dim=0)
    assert torch.allclose(memory.prototypes[0], expected, atol=1e-6)


def test_unlabeled_merge_beta_picks_most_similar_and_is_stable():
    memory = DualPrototypeMemory(2, num_classes=1, labeled_size=1, unlabeled_size=2)
    a, b = unit(1.0, 0.0), unit(0.0, 1.0)
    memory.update(a, -1)
    memory.update(b, -1)
    x = unit(0.28, 0.96)  # closer to b (sim 0.96)
    result = memory.update(x, -1, raw)
    assert result.merged and result.node == 2  # slot 1 + labeled_size 1
    beta = 0.5 * 0.96
    expected = F.normalize(beta * b + (1 - beta) * x, dim=0)
    assert torch.allclose(memory.prototypes[2], expected, atol=1e-6)
    assert torch.equal(memory.prototypes[1], a)


def test_negative_similarity_is_clipped_to_zero_weight():
    memory = DualPrototypeMemory(2, num_classes=1, labeled_size=1, unlabeled_size=0)
    memory.update(unit(1.0, 0.0), 0)
    memory.update(unit(-1.0, 0.1), 0, raw)  # sim < 0 -> alpha = 0 -> prototype kept
    assert torch.allclose(memory.prototypes[0], unit(1.0, 0.0))


@pytest.mark.parametrize("label", [0, -1])
def test_all_zero_prototype_is_replaced_by_the_next_merge(label):
    # an online scaler maps a stream's first row to zeros; with the adaptive
    # rule its similarity (0) gives a plastic merge weight 0, so without the
    # rule the slot would stay zero for ever
    labeled, unlabeled = (1, 0) if label >= 0 else (1, 1)
    memory = DualPrototypeMemory(2, num_classes=1, labeled_size=labeled,
                                 unlabeled_size=unlabeled)
    if label < 0:
        memory.update(unit(1.0, 0.0), 0)
    memory.update(torch.zeros(2), label)
    slot = 0 if label >= 0 else 1
    assert torch.equal(memory.prototypes[slot], torch.zeros(2))
    memory.update(unit(0.6, 0.8), label, raw)
    assert torch.allclose(memory.prototypes[slot], unit(0.6, 0.8))
    # a non-zero prototype still follows the rule (sim < 0 -> kept)
    memory.update(unit(-1.0, 0.0), label, raw)
    if label >= 0:
        assert torch.allclose(memory.prototypes[slot], unit(0.6, 0.8))


def merged_with_fixed_coefficients(alpha, beta):
    """A one-slot labeled and unlabeled memory that stored ``p`` and merged ``x`` into
    each slot, with fixed coefficients: ``(memory, p, x)``."""
    memory = DualPrototypeMemory(2, num_classes=1, labeled_size=1, unlabeled_size=1,
                                 alpha=alpha, beta=beta)
    p, x = unit(1.0, 0.0), unit(0.0, 1.0)
    memory.update(p, 0)
    memory.update(p, -1)
    memory.update(x, 0, raw)
    memory.update(x, -1, raw)
    return memory, p, x


@pytest.mark.parametrize("alpha,beta", [(0.05, 0.05), (0.95, 0.95), (0.3, 0.9)])
def test_fixed_coefficients(alpha, beta):
    memory, p, x = merged_with_fixed_coefficients(alpha, beta)
    assert torch.allclose(memory.prototypes[0], F.normalize((1 - alpha) * p + alpha * x, dim=0))
    assert torch.allclose(memory.prototypes[1], F.normalize(beta * p + (1 - beta) * x, dim=0))


def test_adaptive_given_as_a_numpy_string_merges_as_the_plain_string():
    """``np.array("adaptive")`` compares equal to ``"adaptive"`` and is taken as it."""
    memory, _, _ = merged_with_fixed_coefficients(np.array("adaptive"), np.str_("adaptive"))
    plain, _, _ = merged_with_fixed_coefficients("adaptive", "adaptive")
    assert memory.alpha == "adaptive" and type(memory.alpha) is str
    assert torch.equal(memory.prototypes, plain.prototypes)


@pytest.mark.parametrize("value, error, message", [
    ("fixed", TypeError, r"^alpha must be 'adaptive' or a float in \[0, 1\], got 'fixed'$"),
    (True, TypeError, r"^alpha must be 'adaptive' or a float in \[0, 1\], got True$"),
    (None, TypeError, r"^alpha must be 'adaptive' or a float in \[0, 1\], got None$"),
    (1.5, ValueError, r"^alpha must be in \[0, 1\], got 1.5$"),
    (-0.1, ValueError, r"^alpha must be in \[0, 1\], got -0.1$"),
    (math.nan, ValueError, r"^alpha must be in \[0, 1\], got nan$")])
def test_a_merge_coefficient_that_is_no_weight_is_refused(value, error, message):
    with pytest.raises(error, match=message):
        DualPrototypeMemory(2, num_classes=1, labeled_size=1, unlabeled_size=1, alpha=value)
    with pytest.raises(error, match=message.replace("alpha", "beta")):
        DualPrototypeMemory(2, num_classes=1, labeled_size=1, unlabeled_size=1, beta=value)


def test_paper_count_offset_makes_first_merge_a_no_op():
    memory = DualPrototypeMemory(2, num_classes=1, labeled_size=1, unlabeled_size=0,
                                 count_offset=0)
    memory.update(unit(1.0, 0.0), 0)
    memory.update(unit(0.6, 0.8), 0, raw)
    assert torch.allclose(memory.prototypes[0], unit(1.0, 0.0))


def test_capacity_never_exceeded_and_unit_norm():
    torch.manual_seed(0)
    memory = DualPrototypeMemory(4, num_classes=3, labeled_size=6, unlabeled_size=5)
    for step in range(300):
        label = int(torch.randint(-1, 3, ()).item())
        memory.update(F.normalize(torch.randn(4), dim=0), label, raw)
        assert memory.num_nodes <= memory.capacity
        assert int(memory.node_mask.sum()) == memory.num_nodes
    assert memory.is_full
    norms = memory.prototypes.norm(dim=1)
    assert torch.allclose(norms, torch.ones_like(norms), atol=1e-5)


def test_light_mode_one_prototype_per_class():
    memory = DualPrototypeMemory(3, num_classes=4, labeled_size=100, unlabeled_size=10, light=True)
    assert memory.labeled_size == 4 and memory.slots_per_class == 1


def test_too_small_labeled_memory_is_rejected():
    with pytest.raises(ValueError, match="labeled_size"):
        DualPrototypeMemory(3, num_classes=4, labeled_size=3, unlabeled_size=10)


def test_state_dict_round_trip_restores_host_counters():
    memory = DualPrototypeMemory(2, num_classes=2, labeled_size=4, unlabeled_size=3)
    memory.update(unit(1.0, 0.0), 1)
    memory.update(unit(0.0, 1.0), -1)
    clone = DualPrototypeMemory(2, num_classes=2, labeled_size=4, unlabeled_size=3)
    clone.load_state_dict(memory.state_dict())
    assert clone.num_labeled == 1 and clone.num_unlabeled == 1
    assert torch.equal(clone.prototypes, memory.prototypes)
    clone.update(unit(1.0, 1.0), -1)
    assert clone.num_unlabeled == 2 and math.isclose(float(clone.prototypes[5].norm()), 1.0,
                                                     rel_tol=1e-6)


@pytest.mark.parametrize("x, label, error, message", [
    (unit(1.0, 0.0), 3, ValueError, r"label must be in \[-1, 3\)"),
    (unit(1.0, 0.0), -2, ValueError, r"label must be in \[-1, 3\)"),
    (unit(1.0, 0.0), 1.5, TypeError, "label must be an integer class id"),
    (unit(1.0, 0.0), True, TypeError, "label must be an integer class id"),
    (unit(1.0, 0.0, 0.0), 0, ValueError, r"x must have shape \(2,\)"),
    (unit(1.0, 0.0).unsqueeze(0), 0, ValueError, r"x must have shape \(2,\)"),
    (unit(1.0, 0.0).double(), 0, TypeError, "x must be torch.float32"),
    ([1.0, 0.0], 0, TypeError, "x must be a tensor"),
    (unit(1.0, 0.0), torch.tensor(0, device="meta"), TypeError,
     "label is on the 'meta' device"),
    (unit(1.0, 0.0), torch.tensor([0], device="meta"), TypeError,
     "label is on the 'meta' device"),
    (unit(1.0, 0.0).to_sparse(), 0, TypeError, "x must be a dense tensor"),
])
def test_a_bad_update_raises_and_leaves_the_memory_unchanged(x, label, error, message):
    memory = DualPrototypeMemory(2, num_classes=3, labeled_size=3, unlabeled_size=2)
    memory.update(unit(1.0, 0.0), 0)  # class 0's only slot is full: a class-0 sample merges
    memory.update(unit(0.0, 1.0), 1)
    before = memory_state(memory)
    with pytest.raises(error, match=message):
        memory.update(x, label, raw)
    assert_same(memory_state(memory), before)
    assert memory.fill_levels == (1, 1, 0, 0)
    assert memory.update(unit(0.6, 0.8), torch.tensor(0), raw).merged  # a 0-d tensor label


@pytest.mark.parametrize("embed, kwargs, error, message", [
    (lambda rows: torch.randn(4, 2), {}, ValueError, r"the slots' \(4, 2\) must be \(h,\) and \(1, h\)"),
    (lambda rows: rows.tolist(), {}, TypeError, "the sample's embedding must be a floating"),
    (lambda rows: rows.bool(), {}, TypeError, "must be a floating-point tensor, got torch.bool"),
    (None, {"node_embeddings": torch.ones(5, 2).to_sparse()}, TypeError,
     "node_embeddings must be a dense tensor"),
    (None, {"x_embedding": torch.ones(2, device="meta")}, TypeError,
     "x_embedding is on the 'meta' device"),
])
def test_bad_embeddings_raise_and_leave_the_memory_unchanged(embed, kwargs, error, message):
    # before: a (4, h) embedding of one candidate slot merged into a slot outside the
    # class's partition; a list an AttributeError; bool embeddings torch's addmv error
    memory = DualPrototypeMemory(2, num_classes=3, labeled_size=3, unlabeled_size=2)
    memory.update(unit(1.0, 0.0), 0)  # class 0's only slot is full: a class-0 sample merges
    before = memory_state(memory)
    with pytest.raises(error, match=message):
        memory.update(unit(0.6, 0.8), 0, embed, **kwargs)
    assert_same(memory_state(memory), before)
    assert memory.fill_levels == (1, 0, 0, 0)


def test_candidate_slots_names_a_label_on_the_meta_device():
    memory = DualPrototypeMemory(2, num_classes=3, labeled_size=3, unlabeled_size=2)
    with pytest.raises(TypeError, match="label is on the 'meta' device"):
        memory.candidate_slots(torch.tensor(0, device="meta"))


def _failing(rows):
    raise RuntimeError("embedding failed")


@pytest.mark.parametrize("arguments, error, message", [
    (dict(x_embedding=torch.ones(3)), ValueError, r"embedding \(3,\) and the slots' \(1, 2\)"),
    (dict(node_embeddings=torch.ones(3, 2)), ValueError, r"node_embeddings must be \(5, h\)"),
    (dict(node_embeddings=torch.ones(5)), ValueError, r"node_embeddings must be \(5, h\)"),
    (dict(node_embeddings=[[1.0, 0.0]] * 5), TypeError,
     "node_embeddings must be a tensor or None, got list"),
    (dict(x_embedding=(1.0, 0.0)), TypeError, "x_embedding must be a tensor or None, got tuple"),
    (dict(x_embedding=torch.ones(2, dtype=torch.float64)), TypeError,
     r"the sample's embedding \(torch.float64 on cpu\) and the slots' \(torch.float32 on cpu\) "
     "must have one dtype and device"),
    (dict(embed=_failing), RuntimeError, "embedding failed"),
])
def test_a_failing_merge_search_leaves_the_memory_unchanged(arguments, error, message):
    # labeled merges age every labeled slot: nothing may age before the search succeeds
    memory = DualPrototypeMemory(2, num_classes=3, labeled_size=3, unlabeled_size=2)
    memory.update(unit(1.0, 0.0), 0)
    memory.update(unit(0.0, 1.0), 1)
    before = memory_state(memory)
    with pytest.raises(error, match=message):
        memory.update(unit(0.6, 0.8), 0, **{"embed": raw, **arguments})
    assert_same(memory_state(memory), before)


@pytest.mark.parametrize("derive, error, message", [
    (_failing, RuntimeError, "embedding failed"),
    (lambda rows: torch.cat([rows, rows], dim=1), ValueError,
     r"derive's prototype must have shape \(2,\), got \(4,\)"),
    (lambda rows: rows.double(), TypeError, "derive's prototype must be torch.float32"),
])
def test_a_failing_derive_leaves_the_memory_unchanged(derive, error, message):
    # two labeled slots: a merge into one must not age the other before derive succeeds
    memory = DualPrototypeMemory(2, num_classes=1, labeled_size=2, unlabeled_size=1,
                                 source_channels=2, alpha=0.5)
    memory.update(unit(1.0, 0.0), 0, source=torch.ones(2), derive=raw)
    memory.update(unit(0.0, 1.0), 0, source=torch.ones(2), derive=raw)
    before = memory_state(memory)
    version = memory.version
    with pytest.raises(error, match=message):
        memory.update(unit(0.0, 1.0), 0, raw, source=torch.zeros(2), derive=derive)
    assert_same(memory_state(memory), before)
    assert memory.version == version


@pytest.mark.parametrize("derive, message", [
    (lambda rows: torch.cat([rows, rows], dim=1),
     r"derive must map the sources \(3, 2\) to prototypes \(3, 2\), got \(3, 4\)"),
    (lambda rows: rows.tolist(), r"prototypes \(3, 2\), got list"),
])
def test_a_refresh_whose_derive_does_not_fit_leaves_the_memory_unchanged(derive, message):
    memory = DualPrototypeMemory(2, num_classes=2, labeled_size=2, unlabeled_size=1,
                                 source_channels=2)
    memory.update(unit(1.0, 0.0), 0, source=torch.ones(2), derive=raw)
    before = memory_state(memory)
    version = memory.version
    with pytest.raises(ValueError, match=message):
        memory.refresh(derive)
    assert_same(memory_state(memory), before)
    assert memory.version == version


def test_the_version_counts_every_write_and_nothing_else():
    memory = DualPrototypeMemory(2, num_classes=2, labeled_size=2, unlabeled_size=1,
                                 source_channels=2)
    versions = [memory.version]

    def write(step):
        step()
        versions.append(memory.version)

    write(lambda: memory.update(unit(1.0, 0.0), 0, source=torch.ones(2), derive=raw))  # insert
    write(lambda: memory.update(unit(0.6, 0.8), 0, raw, source=torch.ones(2),
                                derive=raw))  # merge
    write(lambda: memory.refresh(raw))
    write(lambda: memory.load_state_dict(memory.state_dict()))
    write(memory.reset_state)
    assert versions == sorted(set(versions))  # each write bumps it
    for read in (memory.nodes, memory.labeled, memory.labeled_index, lambda: memory.num_nodes):
        read()
    with pytest.raises(ValueError):
        memory.update(unit(1.0, 0.0), 2, source=torch.ones(2), derive=raw)
    assert memory.version == versions[-1]  # reads and refused writes do not


def test_a_source_of_the_wrong_width_is_refused():
    memory = DualPrototypeMemory(2, num_classes=1, labeled_size=1, unlabeled_size=1,
                                 source_channels=3)
    with pytest.raises(ValueError, match=r"source must have shape \(3,\)"):
        memory.update(unit(1.0, 0.0), 0, source=torch.ones(2), derive=raw)
    assert memory.num_nodes == 0


def test_update_builds_no_autograd_graph_even_with_a_trainable_embedding():
    # a merge weighed with a trainable f_E must not tie the memory to f_E's graph
    embed = torch.nn.Linear(2, 2)
    memory = DualPrototypeMemory(2, num_classes=1, labeled_size=1, unlabeled_size=1)
    for x, label in ((unit(1.0, 0.0), 0), (unit(0.6, 0.8), 0), (unit(0.0, 1.0), -1),
                     (unit(0.8, 0.6), -1)):
        memory.update(x, label, lambda rows: F.normalize(embed(rows), dim=-1))
    assert memory.prototypes.grad_fn is None and not memory.prototypes.requires_grad


@pytest.mark.parametrize("label, error", [(3, ValueError), (-3, ValueError), (1.0, TypeError)])
def test_candidate_slots_names_a_label_outside_the_classes(label, error):
    memory = DualPrototypeMemory(2, num_classes=3, labeled_size=3, unlabeled_size=2)
    with pytest.raises(error, match="label must be"):
        memory.candidate_slots(label)


@pytest.mark.parametrize("slot, name", [(1, "class 0"), (3, "class 1"), (5, "the unlabeled part")])
def test_a_loaded_mask_with_a_gap_is_refused_and_changes_nothing(slot, name):
    memory = DualPrototypeMemory(2, num_classes=2, labeled_size=4, unlabeled_size=3)
    state = memory.state_dict()
    state["node_mask"] = torch.zeros(7, dtype=torch.bool)
    state["node_mask"][slot] = True  # second slot of its block, first one empty
    state["prototypes"] = torch.ones(7, 2)
    with pytest.raises(ValueError, match=f"node_mask must fill the slots of {name}"):
        memory.load_state_dict(state)
    assert memory.num_nodes == 0 and not memory.node_mask.any()
    assert not memory.prototypes.any()


def test_a_state_of_another_slot_split_is_refused_and_changes_nothing():
    # 7 slots of width 2 in both, split otherwise: torch copies the buffers that fit
    # (prototypes, counts) before it reports the one that does not (ages, one per
    # labeled slot); the memory must roll those copies back
    memory = DualPrototypeMemory(2, num_classes=2, labeled_size=4, unlabeled_size=3)
    memory.update(unit(1.0, 0.0), 1)
    other = DualPrototypeMemory(2, num_classes=3, labeled_size=3, unlabeled_size=4)
    for label in range(3):
        other.update(unit(0.6, 0.8), label)
    before = memory_state(memory)
    with pytest.raises(RuntimeError, match="size mismatch"):
        memory.load_state_dict(other.state_dict())
    assert_same(memory_state(memory), before)
    assert memory.fill_levels == (0, 1, 0) and memory.num_nodes == 1


def test_loading_a_state_by_assignment_is_refused():
    # assign=True would make two memories write into one set of tensors
    memory = DualPrototypeMemory(2, num_classes=2, labeled_size=4, unlabeled_size=3)
    other = DualPrototypeMemory(2, num_classes=2, labeled_size=4, unlabeled_size=3)
    with pytest.raises(ValueError, match="assign=True"):
        memory.load_state_dict(other.state_dict(), assign=True)


@pytest.mark.parametrize("light", ["no", 2, None, 1, 0])
def test_light_must_be_a_boolean(light):
    with pytest.raises(TypeError, match=f"light must be a bool, got {type(light).__name__}"):
        DualPrototypeMemory(2, num_classes=2, labeled_size=4, unlabeled_size=3, light=light)


def test_an_unlabeled_sample_without_unlabeled_slots_is_dropped():
    memory = DualPrototypeMemory(2, num_classes=1, labeled_size=1, unlabeled_size=0)
    memory.update(unit(1.0, 0.0), 0)
    before = memory_state(memory)
    assert memory.candidate_slots(-1) is None
    assert memory.update(unit(0.6, 0.8), -1, raw) is None
    assert_same(memory_state(memory), before)
    assert memory.fill_levels == (1, 0)


def test_a_merge_into_a_zero_prototype_takes_the_new_source():
    # the first source (1, 1) derives to a zero prototype (an online scaler's
    # first row); the merge weight into it is 0, yet the slot takes the new source
    def derive(sources):
        return F.normalize(sources - 1.0, dim=-1)

    memory = DualPrototypeMemory(2, num_classes=1, labeled_size=1, unlabeled_size=0,
                                 source_channels=2)
    first, second = torch.tensor([1.0, 1.0]), torch.tensor([1.0, 2.0])
    memory.update(derive(first.unsqueeze(0))[0], 0, source=first, derive=derive)
    assert torch.equal(memory.prototypes[0], torch.zeros(2))
    memory.update(derive(second.unsqueeze(0))[0], 0, raw, source=second, derive=derive)
    assert torch.equal(memory.sources[0], second)
    assert torch.equal(memory.prototypes[0], torch.tensor([0.0, 1.0]))


@pytest.mark.parametrize("alpha,beta", [(0.0, 1.0), (1.0, 0.0)])
def test_fixed_coefficients_at_the_ends_of_the_unit_interval(alpha, beta):
    # alpha = 0 / beta = 1 keep the old prototype, alpha = 1 / beta = 0 take the sample
    memory, p, x = merged_with_fixed_coefficients(alpha, beta)
    kept = p if alpha == 0.0 else x
    assert torch.equal(memory.prototypes, torch.stack([kept, kept]))


def test_labeled_returns_the_ages_once_the_labeled_memory_is_full():
    memory = DualPrototypeMemory(2, num_classes=2, labeled_size=2, unlabeled_size=1)
    memory.update(unit(1.0, 0.0), 0)
    memory.update(unit(0.0, 1.0), 1)  # full: labeled() returns views of the buffers
    memory.update(unit(0.6, 0.8), 1, raw)  # merge: class 1's slot back to age 0
    rows, labels, ages = memory.labeled()
    assert labels.tolist() == [0, 1] and ages.tolist() == [2, 0]
    assert torch.equal(rows[0], unit(1.0, 0.0))


def test_labeled_index_follows_every_labeled_insert():
    # the cached index must be rebuilt once a labeled slot is filled
    memory = DualPrototypeMemory(2, num_classes=2, labeled_size=4, unlabeled_size=1)
    memory.update(unit(1.0, 0.0), 0)
    assert memory.labeled_index().tolist() == [0]
    memory.update(unit(0.0, 1.0), 1)
    assert memory.labeled_index().tolist() == [0, 2]
    memory.update(unit(0.6, 0.8), 0)
    assert memory.labeled_index().tolist() == [0, 1, 2]
    rows, labels, ages = memory.labeled()
    assert torch.equal(rows, torch.stack([unit(1.0, 0.0), unit(0.6, 0.8), unit(0.0, 1.0)]))
    assert labels.tolist() == [0, 0, 1] and ages.tolist() == [2, 0, 1]


def test_refresh_rederives_the_filled_slots_and_leaves_the_empty_ones_zero():
    def shifted(sources):  # maps a zero source to a non-zero row
        return F.normalize(sources + 1.0, dim=-1)

    memory = DualPrototypeMemory(2, num_classes=2, labeled_size=2, unlabeled_size=2,
                                 source_channels=2)
    memory.update(unit(1.0, 0.0), 1, source=torch.tensor([2.0, -1.0]), derive=shifted)
    memory.update(unit(0.0, 1.0), -1, source=torch.tensor([-1.0, 0.0]), derive=shifted)
    memory.refresh(shifted)
    expected = torch.zeros(4, 2)
    expected[1] = F.normalize(torch.tensor([3.0, 0.0]), dim=0)
    expected[2] = F.normalize(torch.tensor([0.0, 1.0]), dim=0)
    assert torch.equal(memory.prototypes, expected)


def test_a_merge_mixes_the_sources_with_the_shares_of_its_partition():
    # labeled: (1 - alpha) old + alpha new; unlabeled: beta old + (1 - beta) new;
    # the merged source is stored and the prototype derived from it
    memory = DualPrototypeMemory(2, num_classes=1, labeled_size=1, unlabeled_size=1,
                                 alpha=0.25, beta=0.25, source_channels=2)
    old, new = torch.tensor([4.0, 0.0]), torch.tensor([0.0, 8.0])
    memory.update(raw(old.unsqueeze(0))[0], 0, source=old, derive=raw)
    memory.update(raw(old.unsqueeze(0))[0], -1, source=old, derive=raw)
    memory.update(raw(new.unsqueeze(0))[0], 0, raw, source=new, derive=raw)
    memory.update(raw(new.unsqueeze(0))[0], -1, raw, source=new, derive=raw)
    mixed = torch.tensor([[3.0, 2.0], [1.0, 6.0]])
    assert torch.equal(memory.sources, mixed)
    assert torch.equal(memory.prototypes, raw(mixed))


def _filled_memory():
    memory = DualPrototypeMemory(2, num_classes=2, labeled_size=4, unlabeled_size=3)
    for row, label in ((unit(1.0, 0.0), 0), (unit(0.0, 1.0), 1), (unit(1.0, 1.0), -1),
                       (unit(0.6, 0.8), 0)):
        memory.update(row, label)
    return memory


@pytest.mark.parametrize("entry, corrupt, message", [
    # before: loaded; a count below 1 zeroed the adaptive merge weight, a count in an
    # empty slot survived into the slot's first merge, a negative age raised the
    # slot's loss weight exp(-age / tau) above 1, a NaN prototype made every
    # prediction NaN
    ("counts", lambda t: t.fill_(-5), r"counts must be integers >= 1 in the filled slots "
                                      r"\(node_mask\) and 0 in the empty ones, got "
                                      r"counts\[0\] = -5$"),
    ("counts", lambda t: t.masked_fill_(t == 0, 3), "counts must be integers >= 1 in the filled"),
    ("ages", lambda t: t.__setitem__(2, -100),
     r"ages must be integers >= 0, got ages\[2\] = -100$"),
    ("prototypes", lambda t: t.fill_(math.nan), "prototypes holds NaN or inf values")])
def test_a_loaded_value_out_of_range_is_refused_and_changes_nothing(entry, corrupt, message):
    memory = _filled_memory()
    before = memory_state(memory)
    state = copy.deepcopy(before["state_dict"])
    corrupt(state[entry])
    with pytest.raises(ValueError, match=message):
        memory.load_state_dict(state)
    assert_same(memory_state(memory), before)


@pytest.mark.parametrize("corrupt, message", [
    (lambda state: {**state, "counts": state["counts"][:3]},
     r"size mismatch for counts: copying a param with shape torch.Size\(\[3\]\)"),
    (lambda state: {k: v for k, v in state.items() if k != "counts"},
     r"Missing key\(s\) in state_dict: \"counts\"")])
def test_a_state_without_counts_of_the_memory_s_shape_is_refused_by_torch(corrupt, message):
    # the counts are checked only where they fit; torch names the entry, and the
    # other entries (another memory's) are not loaded either
    memory, other = _filled_memory(), DualPrototypeMemory(2, num_classes=2, labeled_size=4,
                                                          unlabeled_size=3)
    other.update(unit(0.3, 0.9), 1)
    before = memory_state(memory)
    with pytest.raises(RuntimeError, match=message):
        memory.load_state_dict(corrupt(copy.deepcopy(other.state_dict())))
    assert_same(memory_state(memory), before)


def _as_floats(entry, index, value):
    def corrupt(state):
        values = state[entry].double()
        values[index] = value
        return {**state, entry: values}
    return corrupt


@pytest.mark.parametrize("corrupt, message", [
    # before: loaded into the int64 buffers as INT64_MIN (1e30, inf, NaN) or cut to 2
    (_as_floats("counts", 0, 1e30),
     r"counts must be integers >= 1 in the filled slots \(node_mask\) and 0 in the empty "
     r"ones, got counts\[0\] = 1e\+30$"),
    (_as_floats("counts", 1, math.nan), r"got counts\[1\] = nan$"),
    (_as_floats("counts", 0, 2.7), r"got counts\[0\] = 2.7$"),
    (_as_floats("counts", 0, 2.0 ** 63), r"got counts\[0\] = 9.223372036854776e\+18$"),
    (_as_floats("ages", 0, math.inf), r"ages must be integers >= 0, got ages\[0\] = inf$"),
    (_as_floats("ages", 1, 0.5), r"ages must be integers >= 0, got ages\[1\] = 0.5$")])
def test_loaded_counts_or_ages_that_are_no_integers_are_refused(corrupt, message):
    memory = _filled_memory()
    before = memory_state(memory)
    with pytest.raises(ValueError, match=message):
        memory.load_state_dict(corrupt(before["state_dict"]))
    assert_same(memory_state(memory), before)


def test_integer_valued_float_counts_and_ages_still_load():
    memory = _filled_memory()
    memory.ages[1] = 7
    state = memory.state_dict()
    other = DualPrototypeMemory(2, num_classes=2, labeled_size=4, unlabeled_size=3)
    other.load_state_dict({**state, "counts": state["counts"].double(),
                           "ages": state["ages"].float()})
    assert other.counts.dtype == other.ages.dtype == torch.long
    assert torch.equal(other.counts, memory.counts) and torch.equal(other.ages, memory.ages)


def test_only_the_filled_slots_prototypes_must_be_finite():
    # an empty slot's row is never read unmasked (an older float16 run's can be NaN);
    # before: refused as 'prototypes holds NaN or inf values'
    memory = _filled_memory()
    state = memory.state_dict()
    prototypes = state["prototypes"].clone()
    prototypes[~state["node_mask"]] = math.nan
    other = DualPrototypeMemory(2, num_classes=2, labeled_size=4, unlabeled_size=3)
    other.load_state_dict({**state, "prototypes": prototypes})
    assert torch.equal(other.node_mask, memory.node_mask)
    assert torch.equal(other.prototypes[memory.node_mask], memory.prototypes[memory.node_mask])
