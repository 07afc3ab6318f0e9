"""Host rows go to a CUDA device without a sync (``non_blocking``) unless
they are pinned, which the caller may refill as soon as a call returns; and no
per-sample index is copied to the device (checked without a GPU: recorded
moves; on a GPU in ``tests/test_cuda.py``)."""
import pytest
import torch
from device_helpers import MovedToCuda, record_moves
from sledge_stream_helpers import D, small

from torch_geometric_stream.memory import DualPrototypeMemory
from torch_geometric_stream.models import CUDAGraphStep, SLeDGe
from torch_geometric_stream.validation import as_feature_matrix, to_device

CUDA = torch.device("cuda")


@pytest.mark.parametrize("pinned", [False, True])
def test_host_rows_go_to_cuda_without_a_sync_unless_pinned(monkeypatch, pinned):
    # before: non_blocking=True for pinned rows too
    moves = record_moves(monkeypatch, stop_at_cuda=True, pinned=pinned)
    with pytest.raises(MovedToCuda):
        as_feature_matrix(torch.ones(2, 3), 3, device=CUDA)
    assert [move[:3] for move in moves] == [("cpu", "cuda", not pinned)]


def test_is_pinned_is_not_asked_on_the_cpu(monkeypatch):
    def asked(self, *args):
        raise AssertionError("is_pinned asked for a CPU target")
    monkeypatch.setattr(torch.Tensor, "is_pinned", asked)
    rows = torch.ones(2, 3)
    assert as_feature_matrix(rows, 3) is rows
    assert as_feature_matrix(rows, 3, device=torch.device("cpu")) is rows
    assert to_device(rows, torch.device("cpu")) is rows


@pytest.mark.parametrize("pinned", [False, True])
def test_cuda_graph_step_sends_host_scaled_rows_without_a_sync(monkeypatch, pinned):
    # a model that scales its input checks the rows on the host, then copies
    # them to its device; before: a blocking copy (a sync per step)
    stepper = CUDAGraphStep(small(input_scaling="online"))
    monkeypatch.setattr(SLeDGe, "device", property(lambda self: CUDA))
    moves = record_moves(monkeypatch, stop_at_cuda=True, pinned=pinned)
    with pytest.raises(MovedToCuda):
        stepper.predict_learn(torch.ones(D), 0)
    assert [move[:3] for move in moves] == [("cpu", "cuda", not pinned)]


def test_labeled_index_is_built_on_the_prototypes_device(monkeypatch):
    # before: built on the host, then copied (a sync per labeled insert on a GPU)
    memory = DualPrototypeMemory(2, num_classes=2, labeled_size=4, unlabeled_size=1)
    memory.update(torch.tensor([1.0, 0.0]), 0)
    memory.update(torch.tensor([0.0, 1.0]), 1)
    assert memory.labeled_index().tolist() == [0, 2]
    memory.to("meta")  # a device without CUDA: no values, but a device of its own
    moves = record_moves(monkeypatch)
    index = memory.labeled_index()
    assert moves == [] and index.is_meta and index.shape == (2,)
    assert index.dtype == torch.long
