"""The optional approximations of full SLeDGe: ``reselect_every`` (neighbour
sets searched anew only every R steps) and ``search_dtype`` (neighbours chosen
with lower-precision scores). Both off by default; these tests pin down what
each one keeps exact."""
import io

import pytest
import torch
import torch.nn.functional as F

from sledge_stream_helpers import gaussian_stream, small
from torch_geometric_stream.graph import score_neighbors, topk_neighbors
from torch_geometric_stream.graph.dynamic_knn import check_search_dtype


def run(model, x, y, label_every=5):
    """Predicted probabilities of every sample, test-then-train."""
    probs = []
    for i in range(len(x)):
        probs.append(model.predict_proba(x[i]))
        model.learn(x[i], int(y[i]) if i % label_every == 0 else -1)
    return torch.cat(probs)


# ------------------------------------------------------------ search dtype
def test_score_neighbors_hand_checked():
    keys = torch.tensor([[1.0, 0.0], [0.0, 2.0], [3.0, 1.0]])
    query = torch.tensor([[1.0, 1.0], [2.0, 0.0]])
    neighbors = torch.tensor([[2, 1], [0, 0]])
    expected = torch.tensor([[4.0, 2.0], [2.0, 2.0]])
    assert torch.equal(score_neighbors(query, keys, neighbors), expected)


def test_bfloat16_search_keeps_exact_scores_of_the_chosen_pairs():
    torch.manual_seed(0)
    emb = F.normalize(torch.randn(300, 32), dim=-1)
    approx = topk_neighbors(emb, emb, 4, block_size=64, search_dtype="bfloat16")
    exact_scores = emb @ emb.t()
    assert approx.values.dtype == torch.float32
    assert torch.allclose(approx.values, exact_scores.gather(1, approx.indices), atol=1e-6)
    # every row finds itself (score 1, far above any other in 32 dimensions)
    assert all(i in row for i, row in enumerate(approx.indices.tolist()))
    # the chosen sets are the exact ones up to near-ties in bfloat16 (8 mantissa bits)
    exact = topk_neighbors(emb, emb, 4)
    kth_exact = exact.values[:, -1]
    assert (approx.values.min(dim=1).values >= kth_exact - 2e-2).all()


def test_search_in_the_inputs_own_dtype_is_the_exact_search():
    emb = F.normalize(torch.randn(40, 8), dim=-1)
    exact = topk_neighbors(emb, emb, 3)
    same = topk_neighbors(emb, emb, 3, search_dtype=torch.float32)
    assert torch.equal(exact.indices, same.indices) and torch.equal(exact.values, same.values)


@pytest.mark.parametrize("value,error,match", [
    ("int32", ValueError, "floating"), ("no_such_dtype", ValueError, "dtype name"),
    (5, TypeError, "torch.dtype"), (torch.int64, ValueError, "floating")])
def test_bad_search_dtype_is_rejected(value, error, match):
    with pytest.raises(error, match=match):
        check_search_dtype(value)
    with pytest.raises(error, match=match):
        small(search_dtype=value)


def test_bfloat16_search_model_tracks_the_exact_model():
    x, y = gaussian_stream(150)
    exact, approx = small(), small(search_dtype="bfloat16")
    p_exact, p_approx = run(exact, x, y), run(approx, x, y)
    agree = (p_exact.argmax(1) == p_approx.argmax(1)).float().mean()
    assert agree > 0.95
    assert "search_dtype=torch.bfloat16" in repr(approx)


# ---------------------------------------------------------- reselect_every
def test_reselect_every_is_exact_while_embeddings_are_frozen():
    # lr = 0: parameters never move, so neighbour sets kept between searches
    # (with the merged row re-searched) are exactly the searched ones
    x, y = gaussian_stream(120)
    exact, kept = small(lr=0.0), small(lr=0.0, reselect_every=7)
    assert torch.allclose(run(exact, x, y), run(kept, x, y), atol=1e-6)
    assert kept._kept_neighbors is not None


def test_reselect_every_reuses_and_then_searches_again():
    x, y = gaussian_stream(80)
    model = small(reselect_every=4)
    run(model, x[:60], y[:60])
    assert model.memory.is_full
    counts = []
    for i in range(60, 80):
        snap = model._snapshot_graph(model._snapshot_now())
        reused = model._steps_since_search < 4
        emb = snap.emb
        if reused:  # the kept sets, re-scored with the current embeddings
            assert torch.equal(snap.top_index, model._kept_neighbors)
            assert torch.allclose(snap.top_value,
                                  score_neighbors(emb, emb, snap.top_index), atol=1e-6)
        else:  # a full search
            fresh = topk_neighbors(emb, emb, snap.top_index.size(1))
            assert torch.equal(snap.top_index, fresh.indices)
        counts.append(model._steps_since_search)
        model.predict(x[i])
        model.learn(x[i], -1)
    assert counts[:8] == [counts[0], *[(c % 4) + 1 for c in counts[:7]]]
    assert set(counts) == {1, 2, 3, 4}


def test_kept_sets_are_reused_before_the_memory_is_full_and_dropped_on_insertion():
    # scarce labels: the labeled slots never all fill, the unlabeled ones do
    x, y = gaussian_stream(80)
    model = small(reselect_every=50, labeled_size=30, unlabeled_size=20)
    run(model, x[:60], y[:60], label_every=30)
    assert not model.memory.is_full and model.memory.num_unlabeled == 20
    steps = model._steps_since_search
    model.learn(x[60], -1)  # a merge: the kept sets are reused
    assert model._steps_since_search == steps + 1
    assert model.memory.candidate_slots(0) is None  # class 0 has free slots
    model.learn(x[61], 0)  # inserted into a new labeled slot: a full search
    filled = model.memory.num_nodes
    assert model._steps_since_search == 1 and model._kept_num_nodes == filled


def test_reselect_every_one_is_the_default_method():
    x, y = gaussian_stream(60)
    assert torch.equal(run(small(), x, y), run(small(reselect_every=1), x, y))


def test_kept_neighbours_survive_a_state_dict_round_trip():
    x, y = gaussian_stream(140)
    model = small(reselect_every=5)
    run(model, x[:97], y[:97])
    assert model._kept_neighbors is not None and model._steps_since_search not in (0, 5)
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    expected = run(model, x[97:], y[97:])
    clone = small(reselect_every=5, seed=1)
    buffer.seek(0)
    clone.load_state_dict(torch.load(buffer, weights_only=False))
    assert torch.equal(run(clone, x[97:], y[97:]), expected)


def test_kept_neighbours_move_with_the_model():
    # .double() (as .to(device)) keeps the kept sets and their count: the next
    # step re-uses them, as the float32 model's does
    x, y = gaussian_stream(100)
    model = small(reselect_every=50)
    run(model, x[:80], y[:80])
    kept, steps = model._kept_neighbors.clone(), model._steps_since_search
    assert steps == 30  # the sets of the search at the 50th step, neither new nor due
    model.double()
    assert torch.equal(model._kept_neighbors, kept)
    assert model._kept_neighbors.device == model.device
    model.learn(x[80].double(), -1)
    assert model._steps_since_search == steps + 1


def test_state_reset_forgets_the_kept_neighbours():
    x, y = gaussian_stream(60)
    model = small(reselect_every=3)
    run(model, x, y)
    model.reset_state()
    assert model._kept_neighbors is None and model._steps_since_search == 0


def test_reselect_every_must_be_a_positive_int():
    with pytest.raises(ValueError, match="reselect_every"):
        small(reselect_every=0)


def test_light_mode_ignores_reselect_every():
    x, y = gaussian_stream(60)
    light, light_kept = small(light=True), small(light=True, reselect_every=5)
    assert torch.equal(run(light, x, y), run(light_kept, x, y))
    assert light_kept._kept_neighbors is None


def test_a_grown_input_range_searches_the_kept_neighbours_anew():
    # input_scaling re-derives every prototype once the range grows: the sets
    # kept over the old prototypes must not stand in for the next search, so
    # the step equals that of a copy that kept no sets
    x, y = gaussian_stream(80)
    model = small(reselect_every=50, input_scaling="online")
    run(model, x[:60], y[:60])
    assert model.memory.is_full and model._steps_since_search > 1
    state = model.state_dict()
    state["_extra_state"] = {**state["_extra_state"], "kept_neighbors": None,
                             "steps_since_search": 0}
    searched = small(reselect_every=50, input_scaling="online")
    searched.load_state_dict(state)
    wider = x[60] * 0 + 2 * x[:60].abs().max()  # beyond the range in every feature
    for learner in (model, searched):
        learner.learn(wider, -1)
    assert model._steps_since_search == 1
    assert torch.equal(model._kept_neighbors, searched._kept_neighbors)
    for (name, a), b in zip(model.named_parameters(), searched.parameters()):
        assert torch.equal(a, b), name
