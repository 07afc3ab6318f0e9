import pytest
import torch

from torch_geometric_stream.nn.generators import (generator_on, generator_state,
                                                  load_generator_state, seeded_generator)

CPU = torch.device("cpu")


def test_a_saved_state_goes_on_with_the_same_draws():
    generator = seeded_generator(3, CPU)
    torch.rand(5, generator=generator)
    target = seeded_generator(0, CPU)
    untouched = target.get_state()
    loaded = load_generator_state(target, generator_state(generator))
    assert torch.equal(torch.rand(5, generator=loaded), torch.rand(5, generator=generator))
    assert loaded is not target and torch.equal(target.get_state(), untouched)


def test_a_state_of_another_kind_of_device_seeds_the_same_generator_every_time():
    cuda_state = {"cuda": True, "state": torch.arange(16, dtype=torch.uint8)}
    first, second = (load_generator_state(seeded_generator(0, CPU), cuda_state)
                     for _ in range(2))
    draws = torch.rand(5, generator=first)
    assert torch.equal(draws, torch.rand(5, generator=second))
    assert not torch.equal(draws, torch.rand(5, generator=seeded_generator(0, CPU)))
    # the seed is pinned (the first 8 bytes of the state's BLAKE2b digest, little
    # endian, halved into [0, 2^63)): a checkpoint's CUDA state draws alike on the
    # CPU across versions
    assert torch.equal(draws, torch.rand(5, generator=seeded_generator(8451994526492543866, CPU)))


def test_a_generator_on_its_device_is_kept():
    generator = seeded_generator(1, CPU)
    assert generator_on(generator, CPU) is generator


@pytest.mark.parametrize("state", [
    None, {"cuda": False}, {"cuda": "no", "state": torch.zeros(5056, dtype=torch.uint8)},
    {"cuda": False, "state": torch.zeros(5056)},
    {"cuda": True, "state": torch.zeros(1, 5056, dtype=torch.uint8)}])
def test_a_malformed_state_is_named(state):
    with pytest.raises(ValueError, match="a generator state must be a dict"):
        load_generator_state(seeded_generator(0, CPU), state)


def test_an_unmoved_generator_gives_back_the_previous_state_tensor():
    # one tensor for two states of an unmoved generator: they pickle alike
    generator = seeded_generator(3, CPU)
    first = generator_state(generator)
    again = generator_state(generator, first["state"])
    assert again["state"] is first["state"] and again is not first
    torch.rand(1, generator=generator)
    moved = generator_state(generator, first["state"])
    assert not torch.equal(moved["state"], first["state"])
    assert torch.equal(moved["state"], generator.get_state())


def test_bytes_of_no_cpu_generator_state_are_named():
    state = {"cuda": False, "state": torch.zeros(3, dtype=torch.uint8)}
    with pytest.raises(ValueError, match="^the saved generator state does not fit a CPU "
                                         "generator: .*size 5056.* 3$"):
        load_generator_state(seeded_generator(0, CPU), state)
