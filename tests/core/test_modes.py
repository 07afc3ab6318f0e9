"""set_training: the flags nn.Module.train sets, and the learners' modes while
they predict and while they train."""
import copy

import pytest
import torch
from torch import nn

from torch_geometric_stream import SLeDGe
from torch_geometric_stream.models.online_mlp import OnlineMLP
from torch_geometric_stream.nn.modes import set_training


class CountingTrain(nn.Module):
    """A module whose train() does more than set flags (here: counts its calls)."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = nn.Dropout(0.5)
        self.calls = 0

    def train(self, mode: bool = True):
        self.calls += 1
        return super().train(mode)


class OwnSetattr(nn.Module):
    """A module with its own __setattr__ (which sees every flag it is given)."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = nn.Linear(2, 2)
        self.seen = []

    def __setattr__(self, name, value):
        if name == "training":
            self.__dict__.setdefault("seen", []).append(value)
        super().__setattr__(name, value)


def tree() -> nn.Module:
    shared = nn.Dropout(0.1)
    root = nn.Sequential(nn.Linear(2, 2), nn.ModuleList([shared, nn.Dropout(0.2)]),
                         CountingTrain(), OwnSetattr())
    root.twice = shared  # one module under two names
    root.register_module("empty", None)  # a registered slot without a module
    root.add_module("again", root[2])  # the custom train() one under two names
    return root


def flags(module: nn.Module) -> list:
    return [m.training for _, m in module.named_modules(remove_duplicate=False)]


@pytest.mark.parametrize("start", [True, False])
@pytest.mark.parametrize("mode", [True, False])
def test_set_training_sets_what_module_train_sets(start, mode):
    mine = tree()
    mine.train(start)
    mine[2].inner.train(not start)  # a subtree left in the other mode
    theirs = copy.deepcopy(mine)
    calls, seen = mine[2].calls, list(mine[3].seen)
    theirs.train(mode)
    set_training(mine, mode)
    assert flags(mine) == flags(theirs) and all(flag == mode for flag in flags(mine))
    # the custom train() ran as often as under Module.train (once per parent), and
    # the module with its own __setattr__ saw the flag through it
    assert mine[2].calls - calls == theirs[2].calls - calls == 1
    assert mine[3].seen == theirs[3].seen == seen + [mode]


class FrozenChild(nn.Module):
    """A module whose train() keeps a child in evaluation mode (a frozen part)."""

    def __init__(self) -> None:
        super().__init__()
        self.frozen = nn.Dropout(0.5)

    def train(self, mode: bool = True):
        super().train(mode)
        self.frozen.eval()
        return self


def test_a_custom_train_has_the_last_word_on_its_subtree():
    root = nn.Sequential(FrozenChild(), nn.Dropout(0.1))
    set_training(root, True)
    assert [root.training, root[0].training, root[0].frozen.training, root[1].training] == [
        True, True, False, True]


def test_a_module_under_two_names_of_a_two_child_parent_trains_once():
    counting = CountingTrain()
    root = nn.Module()
    root.first, root.second = counting, counting
    set_training(root, False)
    assert counting.calls == 1 and not counting.training and not counting.inner.training


@pytest.mark.parametrize("kw", [dict(), dict(light=True), dict(dropout=0.3)])
def test_sledge_predicts_in_evaluation_and_trains_in_training_mode(kw):
    """A module added after construction (here a dropout next to the first GCN
    layer, as a custom backbone would have) is in evaluation mode while the
    learner predicts and in training mode while it trains; the learner's own
    flag after a prediction is what it was before."""
    torch.manual_seed(0)
    model = SLeDGe(4, 2, labeled_size=4, unlabeled_size=6, k=2, hidden_channels=8, seed=0,
                   **kw)
    model.backbone.added = nn.Dropout(0.5)
    seen = []
    model.backbone.convs[0].lin.register_forward_pre_hook(
        lambda module, args: seen.append((model.backbone.added.training, model.training)))
    for i in range(6):
        model.learn(torch.randn(4), torch.tensor(i % 2))
    seen.clear()
    model.predict_proba(torch.randn(4))
    assert seen and set(seen) == {(False, False)}
    assert model.training
    seen.clear()
    model.learn(torch.randn(4), torch.tensor(1))
    assert seen and set(seen) == {(True, True)}
    model.eval()
    model.predict_proba(torch.randn(4))
    assert not model.training and not model.backbone.added.training


def test_online_mlp_predicts_in_evaluation_and_trains_in_training_mode():
    model = OnlineMLP(4, 2, seed=0)
    model.backbone.added = nn.Dropout(0.5)
    seen = []
    model.backbone.lins[0].register_forward_pre_hook(
        lambda module, args: seen.append(model.backbone.added.training))
    model.predict_proba(torch.randn(4))
    assert seen == [False] and model.training
    model.learn(torch.randn(4), torch.tensor(1))
    assert seen == [False, True]
