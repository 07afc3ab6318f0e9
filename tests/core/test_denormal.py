"""``flush_denormal``: denormal floats read as zero inside the block, the
process's previous setting back after it."""
from __future__ import annotations

import pytest
import torch

from torch_geometric_stream.ops import flush_denormal, flushes_denormal

#: float32's denormals lie under 1.18e-38.
FLOAT32_DENORMAL = 1e-40


def _supported() -> bool:
    supported = torch.set_flush_denormal(True)
    torch.set_flush_denormal(False)
    return supported


pytestmark = pytest.mark.skipif(not _supported(), reason="this CPU cannot flush denormals")


@pytest.fixture(autouse=True)
def _flushing_off():
    torch.set_flush_denormal(False)
    yield
    torch.set_flush_denormal(False)


def _denormal_product() -> float:
    return (torch.tensor([FLOAT32_DENORMAL]) * 1.0).item()


def test_denormals_read_as_zero_inside_and_survive_after():
    assert not flushes_denormal() and _denormal_product() > 0.0
    with flush_denormal() as supported:
        assert supported and flushes_denormal()
        assert _denormal_product() == 0.0
    assert not flushes_denormal() and _denormal_product() == pytest.approx(FLOAT32_DENORMAL)


def test_a_process_that_flushed_before_still_flushes_after():
    torch.set_flush_denormal(True)
    with flush_denormal():
        pass
    assert flushes_denormal()


def test_nested_blocks_keep_the_outer_setting_until_the_outer_exit():
    with flush_denormal():
        with flush_denormal():
            pass
        assert flushes_denormal()
    assert not flushes_denormal()


def test_the_setting_is_restored_when_the_block_raises():
    with pytest.raises(RuntimeError, match="inside"):
        with flush_denormal():
            raise RuntimeError("inside")
    assert not flushes_denormal()
