"""ReSSL / HDSSL micro-cluster rules and accuracy."""
import warnings

import numpy as np
import pytest

from baseline_stream_helpers import gaussian_stream, prequential_accuracy
from state_helpers import assert_same
from torch_geometric_stream.baselines import HDSSL, ReSSL
from torch_geometric_stream.baselines.hdssl import knn_epsilon, sync_cluster
from torch_geometric_stream.baselines.microclusters import MicroClusterStore, radius_from_sums


def test_radius_formula_and_absorb():
    store = MicroClusterStore(4, 2)
    slot = store.create_point(np.array([0.0, 0.0]), -1, 0.7, now=1)
    assert store.radius[slot] == 0.7            # explicit singleton radius
    store.absorb(slot, np.array([2.0, 0.0]), now=2)
    assert store.count[slot] == 2 and store.time[slot] == 2
    np.testing.assert_allclose(store.centre[slot], [1.0, 0.0])
    assert store.radius[slot] == pytest.approx(1.0)
    assert radius_from_sums(store.ls[slot], store.ss[slot], store.count[slot]) == \
        pytest.approx(1.0)


def test_absorb_or_create_label_rule():
    store = MicroClusterStore(10, 1)
    a = store.create_point(np.array([0.0]), 1, 1.0, now=0)
    assert store.absorb_or_create(np.array([0.5]), -1, now=1) == a       # unlabelled: absorbed
    assert store.absorb_or_create(np.array([0.2]), 1, now=2) == a        # same label: absorbed
    b = store.absorb_or_create(np.array([0.1]), 0, now=3)                # other label: new
    assert b != a and store.label[b] == 0
    assert store.radius[b] == store.radius[a]                            # nearest's radius


def test_capacity_merge_pseudo_labels_closest_pair():
    store = MicroClusterStore(4, 1)
    store.create_point(np.array([0.0]), 0, 0.1, now=0)
    store.create_point(np.array([10.0]), 1, 0.1, now=0)
    u = store.create_point(np.array([9.0]), -1, 0.1, now=0)
    store.create_point(np.array([3.0]), -1, 0.1, now=0)
    store.merge_for_capacity()
    assert store.num_items == 3
    merged = store.labeled_slots()[store.label[store.labeled_slots()] == 1][0]
    assert store.count[merged] == 2 and store.centre[merged, 0] == pytest.approx(9.5)
    assert not store.active[u]
    # no unlabelled cluster left after another merge -> most frequent label merges
    store.merge_for_capacity()
    store.create_point(np.array([11.0]), 1, 0.1, now=0)
    store.create_point(np.array([-1.0]), 1, 0.1, now=0)
    store.merge_for_capacity()          # label 1 has 3 clusters: 9.5(+3.0 merged) ...
    assert store.num_items == 3
    assert set(store.label[store.active]) <= {0, 1}


def test_prune_keeps_last_labelled_cluster_of_each_class():
    store = MicroClusterStore(5, 1)
    for value, label in [(0.0, 0), (1.0, 1), (2.0, 1), (3.0, -1)]:
        store.create_point(np.array([value]), label, 0.1, now=0)
    store.weight[:4] = [0.01, 0.02, 0.03, 0.01]
    gone = store.decay_and_prune(now=0, decay=0.0, threshold=0.5)
    assert sorted(gone.tolist()) == [1, 3]
    assert sorted(store.label[store.active].tolist()) == [0, 1]


def test_decay_compounds_per_step():
    store = MicroClusterStore(2, 1)
    store.create_point(np.array([0.0]), 0, 0.1, now=0)
    store.create_point(np.array([1.0]), 1, 0.1, now=0)
    for now in (1, 2):
        store.decay_and_prune(now=now, decay=0.5, threshold=0.0)
    assert store.weight[0] == pytest.approx(2 ** -0.5 * 2 ** -1.0)


def test_decay_with_elapsed_is_plain_exponential():
    store = MicroClusterStore(2, 1)
    store.create_point(np.array([0.0]), 0, 0.1, now=0)
    store.create_point(np.array([1.0]), 1, 0.1, now=0)
    for now in (1, 2, 3):
        store.decay_and_prune(now=now, decay=0.5, threshold=0.0, elapsed=1.0)
    assert store.weight[0] == pytest.approx(2 ** -1.5)  # 2^(-0.5 * 3), not compounded


def test_hdssl_idle_cluster_lives_until_its_weight_decays_below_threshold():
    # an idle cluster weighs 2^(-0.01 n) after n steps: >= 0.5 up to n = 100,
    # pruned at n = 101 (compounding, 2^(-0.01 n(n+1)/2), would prune it at n = 14)
    model = HDSSL(1, 2, decay=0.01, prune_threshold=0.5)
    for x, y in [(0.0, 0), (10.0, 1), (5.0, -1), (-50.0, -1)]:
        model.learn(np.array([x]), y)
    store = model.micro_clusters

    def idle_cluster_alive() -> bool:
        return bool((store.active & (store.centre[:, 0] == -50.0)).any())

    for _ in range(100):
        model.learn(np.array([5.0]), -1)  # absorbed by the cluster at 5
    assert idle_cluster_alive() and model.num_items == 4
    model.learn(np.array([5.0]), -1)
    assert not idle_cluster_alive() and model.num_items == 3  # the labelled ones stay


def test_ressl_voter_window_is_fifo_and_prefers_small_k():
    model = ReSSL(1, 2, window=3, ks=(1, 3))
    assert model._best_voter() == 0
    model._acc_window.extend([np.array([False, True])] * 3)
    assert model._best_voter() == 1
    model._acc_window.extend([np.array([True, True])] * 3)      # old rows fall out
    assert len(model._acc_window) == 3 and model._best_voter() == 0


def test_sync_cluster_cannot_link():
    x = np.array([[0.0, 0.0], [0.01, 0.0], [0.02, 0.0], [5.0, 5.0], [5.01, 5.0]])
    y = np.array([0, -1, 1, -1, -1])
    groups = sync_cluster(x, y, eps=0.5)
    covered = np.sort(np.concatenate(groups))
    assert covered.tolist() == list(range(5))
    for g in groups:
        labels = set(y[g][y[g] >= 0].tolist())
        assert len(labels) <= 1
    assert any(set(g.tolist()) == {3, 4} for g in groups)


@pytest.mark.parametrize("make, floor", [
    (lambda: ReSSL(4, 3), 0.95),
    (lambda: HDSSL(4, 3), 0.95),
    (lambda: HDSSL(4, 3, k=1), 0.95),
    (lambda: HDSSL(4, 3, chunk_size=50), 0.9),
])
def test_accuracy_on_separated_gaussians(make, floor):
    # measured: 0.998 (ReSSL, HDSSL per-instance), 0.98-0.986 (HDSSL chunks of 50)
    x, y, observed = gaussian_stream(n=2000, dim=4, label_ratio=0.05, seed=0)
    assert prequential_accuracy(make(), x, y, observed) > floor


# ---- exact, hand-checked rules (each kills a hand mutant that survived the tests above)
def test_radius_is_the_standard_deviation_not_the_variance():
    store = MicroClusterStore(2, 1)
    slot = store.create_point(np.array([0.0]), -1, 0.0, now=0)
    store.absorb(slot, np.array([4.0]), now=1)
    assert store.radius[slot] == 2.0                    # variance 4


def test_merge_adds_sums_and_takes_the_latest_time_the_largest_weight_and_a_label():
    store = MicroClusterStore(3, 1)
    unl = store.create_point(np.array([0.0]), -1, 0.0, now=5)
    lab = store.create_point(np.array([2.0]), 1, 0.0, now=2)
    store.weight[[unl, lab]] = [0.3, 0.8]
    store.merge(unl, lab)                               # an unlabelled keep takes the label
    assert (store.label[unl], store.time[unl], store.weight[unl]) == (1, 5.0, 0.8)
    assert store.count[unl] == 2 and store.centre[unl, 0] == 1.0
    assert store.num_items == 1 and not store.active[lab]


def _labelled_store(points):
    store = MicroClusterStore(len(points), 1)
    for value, label in points:
        store.create_point(np.array([value]), label, 0.0, now=0)
    return store


@pytest.mark.parametrize("points, merged", [
    # label 0 has three clusters, label 1 two (the closer pair): label 0's closest pair merges
    ([(0.0, 0), (1.0, 0), (5.0, 0), (10.0, 1), (10.25, 1)], (0, 1)),
    # two clusters each: the tie goes to the smaller label
    ([(10.0, 1), (10.25, 1), (0.0, 0), (1.0, 0)], (2, 3)),
])
def test_capacity_merge_without_unlabelled_merges_the_most_frequent_label(points, merged):
    store = _labelled_store(points)
    assert store.merge_for_capacity()
    keep, drop = merged
    assert not store.active[drop] and store.count[keep] == 2
    assert store.num_items == len(points) - 1


def test_capacity_merge_of_single_clusters_keeps_the_lower_slot_on_a_count_tie():
    store = _labelled_store([(0.0, 0), (1.0, 1)])
    assert store.merge_for_capacity()
    assert store.active.tolist() == [True, False]
    assert (store.label[0], store.count[0], store.centre[0, 0]) == (0, 2.0, 0.5)


def test_capacity_merge_without_labelled_clusters_merges_the_closest_unlabelled_pair():
    store = _labelled_store([(0.0, -1), (5.0, -1), (5.5, -1)])
    assert store.merge_for_capacity()
    assert store.active.tolist() == [True, True, False]
    assert (store.label[1], store.count[1], store.centre[1, 0]) == (-1, 2.0, 5.25)


@pytest.mark.parametrize("points", [[], [(1.0, -1)], [(1.0, 0)]])
def test_capacity_merge_of_at_most_one_cluster_merges_nothing(points):
    store = MicroClusterStore(2, 1)
    for value, label in points:
        store.create_point(np.array([value]), label, 0.0, now=0)
    before = store.state_dict()
    assert not store.merge_for_capacity()
    assert_same(store.state_dict(), before)


def test_creating_in_a_full_store_is_refused_and_changes_nothing():
    store = _labelled_store([(0.0, 0), (1.0, -1)])
    before = store.state_dict()
    with pytest.raises(RuntimeError, match="^micro-cluster store is full; merge before creating$"):
        store.create_point(np.array([2.0]), 1, 0.0, now=1)
    assert_same(store.state_dict(), before)


def test_a_weight_equal_to_the_threshold_is_not_pruned():
    store = MicroClusterStore(2, 1)
    store.create_point(np.array([0.0]), -1, 0.0, now=0)
    store.weight[0] = 0.5
    assert store.decay_and_prune(now=3, decay=0.0, threshold=0.5).size == 0
    assert store.num_items == 1


def test_ressl_rewards_and_penalises_the_chosen_voters_neighbours():
    model = ReSSL(1, 2, ks=(1, 3), decay=0.0, prune_threshold=0.0)
    stream = [(0.0, 0), (1.0, 1), (2.0, 1), (0.875, -1), (0.375, 1), (3.0, 1)]
    for x, y in stream:
        model.learn(np.array([x]), y)
    # t=2: k=1 (empty window) uses A(0): -1.  t=3: tie -> k=1 uses B(1): +1.
    # t=4: unlabelled, no reward.  t=5: tie -> k=1 uses A: -1 (kept: last of class 0).
    # t=6: k=3 is now better (2/3 vs 1/3) and uses C(2), B(1), E(0.375): +1 and time 6.
    store = model.micro_clusters
    assert store.centre[:6, 0].tolist() == [x for x, _ in stream]
    assert store.weight[:6].tolist() == [-1.0, 3.0, 2.0, 1.0, 2.0, 1.0]
    assert store.time[:6].tolist() == [1.0, 6.0, 6.0, 4.0, 6.0, 6.0]
    assert [row.tolist() for row in model._acc_window] == [
        [False, False], [True, True], [False, True], [True, True]]


@pytest.mark.parametrize("ks, error, message", [
    ((), ValueError, "^ks must name at least one neighbour count$"),
    ((1, 0), ValueError, "ks entry must be")])
def test_ressl_refuses_ks_that_name_no_neighbour_count(ks, error, message):
    with pytest.raises(error, match=message):
        ReSSL(1, 2, ks=ks)


def test_ressl_vote_tie_goes_to_the_nearer_neighbours_label():
    model = ReSSL(1, 3, ks=(2,))
    model.learn(np.array([0.0]), 2)
    model.learn(np.array([1.0]), 1)
    assert model.predict(np.array([0.25])).item() == 2
    assert model.predict(np.array([0.75])).item() == 1
    proba = model.predict_proba(np.array([0.25]))[0].tolist()
    assert proba[0] == 0.0 and proba[2] > proba[1] == pytest.approx(0.5)


def test_ressl_importance_decay_compounds_per_step():
    model = ReSSL(1, 2, decay=0.5, prune_threshold=0.0)
    for x, y in [(0.0, 0), (5.0, -1), (10.0, -1)]:
        model.learn(np.array([x]), y)
    # the cluster made at t=1 decays by 2^-0.5 at t=2 and 2^-1 at t=3
    assert model.micro_clusters.weight[:3].tolist() == pytest.approx([2 ** -1.5, 2 ** -0.5, 1.0])


def test_hdssl_penalises_only_for_a_wrong_label_and_sizes_new_clusters_by_knn():
    model = HDSSL(1, 2, decay=0.0, prune_threshold=0.0)
    model.learn(np.array([0.0]), 0)
    model.learn(np.array([3.0]), 1)     # nearest labelled (0) is wrong: -1
    store = model.micro_clusters
    assert store.weight[:2].tolist() == [0.0, 1.0]
    assert store.radius[:2].tolist() == [0.0, 3.0]  # eps over the centre and the point
    model.learn(np.array([0.125]), -1)  # unlabelled: no reward, no penalty
    assert store.weight[:3].tolist() == [0.0, 1.0, 1.0]


def test_hdssl_loaded_into_another_seed_draws_the_radius_samples_of_the_saved_one():
    # the k-NN radius estimate samples its points with a generator seeded by
    # (seed, time): a state loaded into a learner built with another seed must
    # go on with the saved learner's samples. Before, the seed was no state
    # entry and the copy's new cluster got another radius.
    model = HDSSL(2, 2, k=1, seed=0)
    for row in ([0.0, 0.0], [10.0, 0.0]):  # radii 0 (alone) and 10 (eps of the two)
        model.learn(np.array(row), -1)
    copy = HDSSL(2, 2, k=1, seed=5)
    copy.load_state_dict(model.state_dict())
    for learner in (model, copy):  # nearest (0, 0) has radius 0: eps over one sampled centre
        learner.learn(np.array([1.0, 0.0]), -1)
    assert model.micro_clusters.radius[2] == 9.0  # seed 0 at time 3 samples (10, 0)
    assert copy.micro_clusters.radius[2] == 9.0   # before: 1.0 (seed 5 samples another)
    assert copy.seed == 0
    assert_same(model.state_dict(), copy.state_dict())


@pytest.mark.parametrize("seed, error, message", [
    (np.int64(-1), ValueError, "state seed must be >= 0"),
    (np.float64(0.0), TypeError, "state seed must be an integer")])
def test_hdssl_refuses_a_state_seed_that_is_no_seed(seed, error, message):
    model = HDSSL(2, 2, seed=3)
    model.learn(np.array([1.0, 2.0]), 0)
    before = model.state_dict()
    with pytest.raises(error, match=message):
        model.load_state_dict({**before, "seed": seed})
    assert model.seed == 3
    assert_same(model.state_dict(), before)


def test_hdssl_chunk_mode_copy_in_another_seed_continues_exactly():
    # every chunk's eps samples a tenth of the chunk with the same generator
    x, _, observed = gaussian_stream(n=200, dim=4, spread=1.5, seed=5)
    model = HDSSL(4, 3, memory_size=40, chunk_size=25, seed=0)
    for i in range(60):
        model.learn(x[i], int(observed[i]))
    copy = HDSSL(4, 3, memory_size=40, chunk_size=25, seed=5)
    copy.load_state_dict(model.state_dict())
    for i in range(60, len(x)):
        model.learn(x[i], int(observed[i]))
        copy.learn(x[i], int(observed[i]))
    assert_same(model.state_dict(), copy.state_dict())


def test_ressl_starts_with_radius_0_and_every_new_cluster_inherits_it():
    # the spec's empty start-up: a tight blob is never absorbed, each point stays a
    # cluster of its own (no capacity merge at 200 of 1000)
    x = 0.5 + 0.01 * np.random.default_rng(0).normal(size=(200, 2))
    model = ReSSL(2, 2, memory_size=1000)
    for row in x:
        model.learn(row, -1)
    store = model.micro_clusters
    assert model.num_items == 200 and (store.radius[store.active] == 0.0).all()
    # radius_k: a new cluster whose inherited radius is 0 gets the k-NN estimate
    model = ReSSL(2, 2, memory_size=1000, radius_k=5)
    for row in x:
        model.learn(row, -1)
    store = model.micro_clusters
    assert model.num_items == 150 and store.count[store.active].sum() == 200


def test_ressl_radius_k_gives_a_new_cluster_hdssl_s_knn_radius_only_for_radius_0():
    # 0: alone, radius 0; 10: nearest 0 has radius 0, eps over {0, 10} = 10;
    # 5: nearest (tie: the lower slot) is 0, radius 0: eps over {0, 10, 5} with
    # k = 1 is 5 whichever point is sampled. Without radius_k every radius stays 0.
    for make, radii in ((lambda: ReSSL(1, 2), [0.0, 0.0, 0.0]),
                        (lambda: ReSSL(1, 2, radius_k=1), [0.0, 10.0, 5.0]),
                        (lambda: HDSSL(1, 2, k=1), [0.0, 10.0, 5.0])):
        model = make()
        for value in (0.0, 10.0, 5.0):
            model.learn(np.array([value]), -1)
        assert model.micro_clusters.radius[:3].tolist() == radii
    model = ReSSL(1, 2, radius_k=1)
    for value in (0.0, 10.0, 30.0):     # 30: its nearest (10) has radius 10, kept
        model.learn(np.array([value]), -1)
    assert model.micro_clusters.radius[:3].tolist() == [0.0, 10.0, 10.0]


@pytest.mark.parametrize("radius_k, entries", [(None, False), (3, True)])
def test_ressl_state_holds_the_seed_only_with_radius_k(radius_k, entries):
    # without radius_k ReSSL draws nothing (and its older states hold no seed)
    model = ReSSL(2, 2, radius_k=radius_k, seed=4)
    assert ("seed" in model.state_dict()) is entries
    copy = ReSSL(2, 2, radius_k=radius_k, seed=9)
    copy.load_state_dict(model.state_dict())
    assert copy.seed == (4 if entries else 9)


@pytest.mark.parametrize("radius_k, error", [(0, ValueError), (2.5, TypeError)])
def test_ressl_refuses_a_radius_k_that_is_no_neighbour_count(radius_k, error):
    with pytest.raises(error, match="radius_k"):
        ReSSL(2, 2, radius_k=radius_k)


def test_hdssl_new_cluster_copies_a_nonzero_radius_of_its_nearest():
    # the k-NN estimate stands in only for a radius of 0 (official createMC);
    # over (0, 3, 20) with k = 2 it would be 11.5, 10 or 18.5, never 3
    model = HDSSL(1, 2, k=2, decay=0.0, prune_threshold=0.0)
    for value in (0.0, 3.0, 20.0):
        model.learn(np.array([value]), -1)
    assert model.micro_clusters.radius[:3].tolist() == [0.0, 3.0, 3.0]


class _FirstRows:
    """A stand-in generator whose 'random' sample is the first rows (records its size)."""

    def choice(self, m, size, replace):
        assert not replace
        self.size = size
        return np.arange(size)


@pytest.mark.parametrize("k, fraction, expected", [
    (1, 1.0, 4 / 3),    # nearest other point: 1, 1, 2
    (2, 1.0, 2.0),      # (1 + 3) / 2, (1 + 2) / 2, (2 + 3) / 2
    (5, 1.0, 2.0),      # k clipped to m - 1 = 2
    (1, 0.5, 1.0),      # a sample of one point: row 0
])
def test_knn_epsilon_exact(k, fraction, expected):
    rng = _FirstRows()
    assert knn_epsilon(np.array([[0.0], [1.0], [3.0]]), k, rng, fraction) == expected
    assert rng.size == max(1, int(3 * fraction))


def test_knn_epsilon_samples_a_tenth_of_the_points():
    rng = _FirstRows()
    points = np.arange(19, dtype=np.float64)[:, None] ** 2
    assert knn_epsilon(points, 1, rng) == 1.0     # one row (19 // 10), row 0
    assert rng.size == 1


def test_sync_cluster_keeps_iterating_until_synchronized():
    # one step only moves the ends to 0.24 / 0.76; the loop runs until they meet
    groups = sync_cluster(np.array([[0.0], [0.5], [1.0]]), np.full(3, -1), eps=0.6)
    assert [g.tolist() for g in groups] == [[0, 1, 2]]


# ---- chunk mode, exact (each kills a hand mutant of the chunk code that survived)
def _clusters(model):
    """(centre, count, label, radius, time, weight) of every active cluster, by slot."""
    store = model.micro_clusters
    return [(store.centre[s].tolist(), store.count[s], store.label[s], store.radius[s],
             store.time[s], store.weight[s]) for s in np.flatnonzero(store.active)]


def test_hdssl_chunk_is_clustered_when_full_and_the_next_one_starts_empty():
    model = HDSSL(1, 2, k=1, decay=0.0, prune_threshold=0.0, chunk_size=2)
    model.learn(np.array([0.0]), 1)
    assert model.num_items == 0 and model.num_buffered == 1   # buffered, not clustered
    model.learn(np.array([4.0]), 0)                          # the chunk is full
    assert model.num_items == 2 and model.num_buffered == 0
    state = model.state_dict()                               # the flushed buffer is blank
    assert state["buffer_x"].tolist() == [[0.0], [0.0]]
    assert state["buffer_y"].tolist() == [-1, -1]
    model.learn(np.array([7.0]), -1)                         # first row of the next chunk
    state = model.state_dict()
    assert model.num_buffered == 1 and model.num_items == 2
    assert state["buffer_x"].tolist() == [[7.0], [0.0]]
    assert state["buffer_y"].tolist() == [-1, -1]
    # the per-instance learner has no chunk buffer (none in its state either)
    assert HDSSL(1, 2).state_dict()["buffer_x"].shape == (0, 1)


def test_hdssl_chunk_singletons_get_the_mean_radius_of_the_chunk_s_groups():
    # k = 2 over the chunk: eps is 1.75, 1.5 or 2.75 (whichever point the 10 %
    # sample holds), always > 0.5, so the two 0s link; 3.0 (label 1) cannot link.
    # Groups {0, 0.5} (radius 0.25) and {3}: the singleton gets mean(0.25, 0).
    model = HDSSL(1, 2, k=2, decay=0.0, prune_threshold=0.0, chunk_size=3)
    for value, label in ((0.0, 0), (0.5, 0), (3.0, 1)):
        model.learn(np.array([value]), label)
    assert _clusters(model) == [([0.25], 2.0, 0, 0.25, 3.0, 1.0),
                                ([3.0], 1.0, 1, 0.125, 3.0, 1.0)]


def test_hdssl_chunk_of_isolated_points_gives_each_the_knn_radius():
    # unit square, k = 2: every point's two nearest are at 1, so eps = 1; no pair
    # lies strictly within it, every group is a singleton (mean radius 0) and
    # each cluster gets eps
    model = HDSSL(2, 2, k=2, decay=0.0, prune_threshold=0.0, chunk_size=4)
    corners = [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]
    for corner in corners:
        model.learn(np.array(corner), -1)
    assert _clusters(model) == [(c, 1.0, -1, 1.0, 4.0, 1.0) for c in corners]


def _sync_groups(points, labels, eps, **kwargs):
    groups = sync_cluster(np.array(points, dtype=np.float64)[:, None], np.array(labels), eps,
                          **kwargs)
    return [g.tolist() for g in groups]


@pytest.mark.parametrize("gap, groups", [
    (1e-4, [[0], [1]]),   # the order moves by ~2e-6 a step: stagnation stops it at once
    (1e-2, [[0, 1]]),     # by ~2e-4 a step (> 1e-5): it goes on until the two meet
])
def test_sync_cluster_stops_when_the_order_stagnates(gap, groups):
    # two points pi - gap apart barely pull (sin(pi - gap) = gap): the gap doubles
    # a step until they fall together, within the 20 iterations
    assert _sync_groups([0.0, np.pi - gap], [-1, -1], eps=4.0) == groups


def test_sync_cluster_cannot_link_keeps_a_bridge_point_from_pulling():
    # 0.9 (label 1) is within eps of both others (label 0), but may link with
    # neither: nothing moves, three groups (linked, all three would meet)
    assert _sync_groups([0.0, 0.9, 1.8], [0, 1, 0], eps=1.0) == [[0], [1], [2]]


def test_sync_cluster_links_a_labelled_point_with_an_unlabelled_one_both_ways():
    assert _sync_groups([0.0, 0.5], [0, -1], eps=1.0) == [[0, 1]]


def test_sync_cluster_groups_points_strictly_within_the_tolerance():
    # no link (eps 0.1), no move: 0.5 apart is not within group_tol = 0.5
    assert _sync_groups([0.0, 0.5], [-1, -1], eps=0.1, group_tol=0.5) == [[0], [1]]
    assert _sync_groups([0.0, 0.5], [-1, -1], eps=0.1, group_tol=0.51) == [[0, 1]]


def test_sync_cluster_groups_hold_one_label_the_first_member_s():
    # two labelled copies that may not link, and an unlabelled one: the first
    # group takes the unlabelled copy and the first label; the other label alone
    assert _sync_groups([0.0, 0.0, 0.0], [0, 1, -1], eps=1.0) == [[0, 2], [1]]


def test_sync_cluster_of_duplicates_at_eps_zero_is_one_group_without_nan():
    # eps 0 (the k-NN distance of a chunk of copies) links a point with itself
    # only: no 0 / 0 in the pull or the order
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _sync_groups([2.0, 2.0], [-1, -1], eps=0.0) == [[0, 1]]


def test_sync_cluster_with_a_zero_group_tolerance_makes_singletons():
    assert _sync_groups([2.0, 2.0], [-1, -1], eps=1.0, group_tol=0.0) == [[0], [1]]


@pytest.mark.parametrize("max_iter, groups", [(1, [[0], [1]]), (2, [[0, 1]])])
def test_sync_cluster_runs_at_most_max_iter_steps(max_iter, groups):
    # 0.5 apart: one step leaves them 0.5 - sin(0.5) = 0.02 apart, two 2e-6
    assert _sync_groups([0.0, 0.5], [-1, -1], eps=1.0, max_iter=max_iter) == groups


def test_sync_cluster_order_counts_an_isolated_point_as_synchronized():
    # the pair 1 apart scores (1 + e^-1) / 2 = 0.68, each of the six isolated
    # points 1: the order (6 + 1.37) / 8 = 0.92 passes 0.9 after the first step,
    # which leaves the pair 0.16 apart (isolated points counted as 0, or by 1 / m,
    # the loop would go on until the pair met)
    points = [0.0, 1.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0]
    assert _sync_groups(points, [-1] * 8, eps=1.5, order_threshold=0.9) == [[i] for i in range(8)]


def _learned(model, rows=12):
    """``model`` after ``rows`` labelled and unlabelled samples of a small stream."""
    rng = np.random.default_rng(0)
    for row, label in zip(rng.normal(size=(rows, 2)), [0, -1, 1, -1] * rows):
        model.learn(row, label)
    return model


@pytest.mark.parametrize("make, entry, value, message", [
    # before: 4 and 9 were loaded, the next learn_one raised IndexError writing the
    # buffer; -1 wrote the next sample into the buffer's last row
    (lambda: HDSSL(2, 2, chunk_size=4), "buffered", np.int64(4),
     r"state buffered must be below chunk_size 4 \(a full chunk is clustered at once\), "
     r"got 4"),
    (lambda: HDSSL(2, 2, chunk_size=4), "buffered", np.int64(9), "must be below chunk_size 4"),
    (lambda: HDSSL(2, 2, chunk_size=4), "buffered", np.int64(-1),
     "state buffered must be >= 0, got -1"),
    (lambda: HDSSL(2, 2), "buffered", np.int64(1), "must be below chunk_size 1"),
    # before: loaded, then chunk mode's radius generator raised at the next flush
    (lambda: HDSSL(2, 2, chunk_size=4), "now", np.int64(-5), "state now must be >= 0, got -5"),
    (lambda: ReSSL(2, 2), "now", np.int64(-5), "state now must be >= 0, got -5")])
def test_a_state_counter_out_of_range_is_refused(make, entry, value, message):
    model = _learned(make())
    before = model.state_dict()
    with pytest.raises(ValueError, match=message):
        model.load_state_dict({**before, entry: value})
    assert_same(model.state_dict(), before)


@pytest.mark.parametrize("make", [ReSSL, HDSSL])
@pytest.mark.parametrize("entry", ["mc_centre", "mc_weight", "mc_radius", "mc_count"])
def test_a_state_with_nan_in_a_micro_cluster_is_refused(make, entry):
    # before: a NaN centre was loaded and ReSSL's next capacity merge raised
    # 'micro-cluster store is full' (a NaN distance is never the closest pair)
    model = _learned(make(2, 2, memory_size=4))
    before = model.state_dict()
    corrupt = before[entry].clone()
    corrupt[0] = np.nan
    with pytest.raises(ValueError, match=f"state {entry} holds NaN or inf values"):
        model.load_state_dict({**before, entry: corrupt})
    assert_same(model.state_dict(), before)


def _added(entry, *cells, by=0.5, value=None):
    """A corruption of ``state[entry]``: ``by`` added at each of ``cells`` (index
    tuples), or ``value`` set there."""
    def corrupt(state):
        spoiled = state[entry].clone()
        for cell in cells:
            spoiled[cell] = spoiled[cell] + by if value is None else value
        return spoiled
    return corrupt


@pytest.mark.parametrize("make", [ReSSL, HDSSL])
@pytest.mark.parametrize("entry, corrupt, message", [
    # before: each loaded, and the learner computed with one entry here and the other
    # there (nearest clusters by the centre, merged ones by ls / count; absorbing by
    # a radius its sums disagree with; merging the pair of another distance, or a
    # cluster with itself; a centre ls / 0)
    ("mc_centre", _added("mc_centre", (1, 0)),
     r"^state mc_centre must be mc_ls / mc_count to rounding, as a run keeps it; got "
     r"[-\d.]+ at \[1, 0\] where that is [-\d.]+$"),
    ("mc_radius", _added("mc_radius", (0,)),
     r"^state mc_radius must be radius_from_sums\(mc_ls, mc_ss, mc_count\) where mc_count > "
     r"1, to rounding, as a run keeps it; got [\d.]+ at \[0\] where that is [\d.]+$"),
    ("mc_dist2", _added("mc_dist2", (0, 2), (2, 0)),
     r"^state mc_dist2 must be the squared distance between the mc_centre rows, to "
     r"rounding, as a run keeps it; got [\d.]+ at \[0, 2\] where that is [\d.]+$"),
    ("mc_dist2", _added("mc_dist2", (2, 2), value=0.0),
     r"^state mc_dist2 must be inf on the diagonal of an active slot \(a cluster never "
     r"pairs with itself\), got 0\.0 at \[2, 2\]$"),
    ("mc_count", _added("mc_count", (1,), value=0.0),
     r"^state mc_count must be >= 1 in an active slot \(a cluster holds a point\), got 0$")])
def test_a_state_whose_cluster_entries_disagree_is_refused(make, entry, corrupt, message):
    model = _learned(make(2, 2, memory_size=4))
    before = model.state_dict()
    assert before["mc_active"].all() and before["mc_count"].tolist()[:3] == [6.0, 1.0, 4.0]
    with pytest.raises(ValueError, match=message):
        model.load_state_dict({**before, entry: corrupt(before)})
    assert_same(model.state_dict(), before)


@pytest.mark.parametrize("make", [ReSSL, HDSSL])
def test_a_singleton_keeps_the_radius_it_got(make):
    """Only a cluster of several points has its radius from its sums: a singleton's
    radius (inherited, or HDSSL's estimate) loads whatever it is."""
    model = _learned(make(2, 2, memory_size=4))
    state = model.state_dict()
    radius = state["mc_radius"].clone()
    radius[1] = 7.5  # slot 1 holds one point
    model.load_state_dict({**state, "mc_radius": radius})
    assert model.micro_clusters.radius.tolist() == radius.tolist()
