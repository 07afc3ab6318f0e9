"""ReSSL / HDSSL micro-cluster rules and accuracy."""
import numpy as np
import pytest

from baseline_stream_helpers import gaussian_stream, prequential_accuracy
from torch_geometric_stream.baselines import HDSSL, ReSSL
from torch_geometric_stream.baselines.hdssl import sync_cluster
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
