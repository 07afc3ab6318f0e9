"""Every example runs on a tiny stream, so none of them rots."""
import importlib.util
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def load(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quickstart_learns_the_synthetic_stream():
    # measured 0.600 on 600 samples, 6 labels, 4 classes with a sudden drift (chance 0.25);
    # 0.543 with the scaling done outside the model
    assert load("quickstart").main(["--samples", "600"]) > 0.4


def test_custom_gnn_beats_chance():
    # measured 0.815 on 400 samples (3 classes, chance 0.33)
    assert load("custom_gnn").main(["--samples", "400"]) > 0.5


def test_image_encoder_runs_end_to_end():
    # synthetic 784-d noise has no image structure: this only checks that the CNN
    # encoder plugs into SLeDGe and the stream runs to the end
    accuracy = load("image_encoder").main(["--samples", "120"])
    assert 0.0 <= accuracy <= 1.0
