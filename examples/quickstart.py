"""SLeDGe on a drifting stream, test-then-train, printing the running accuracy
and the accuracy of each fifth of the stream (a window: the sudden drift halfway
shows there, while the running accuracy averages it away).
On a GPU the step is replayed from CUDA graphs (``CUDAGraphStep``).

    python examples/quickstart.py --samples 3000
"""
import argparse
from typing import Optional, Sequence

import torch

from torch_geometric_stream import SLeDGe
from torch_geometric_stream.cli.arguments import (device_value, label_ratio, positive_int,
                                                  seed_value)
from torch_geometric_stream.datasets import SyntheticStream
from torch_geometric_stream.evaluation import paper_label_mask, prequential
from torch_geometric_stream.models import CUDAGraphStep


def main(argv: Optional[Sequence[str]] = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=positive_int, default=3000,
                        help="stream length (default: %(default)s)")
    parser.add_argument("--label-ratio", type=label_ratio, default=0.01,
                        help="share of labelled samples, in (0, 1] (default: %(default)s)")
    parser.add_argument("--light", action="store_true", help="SLeDGe-L")
    parser.add_argument("--seed", type=seed_value, default=0,
                        help="stream, label and model seed (default: %(default)s)")
    parser.add_argument("--device", type=device_value,
                        default="cuda" if torch.cuda.is_available() else "cpu",
                        help="cpu or cuda (default: cuda when there is one)")
    args = parser.parse_args(argv)

    stream = SyntheticStream(args.samples, num_features=16, num_classes=4, drift="sudden",
                             seed=args.seed).take(args.samples)
    # raw rows in: the model keeps the running min-max range itself and
    # re-scales its memory when the range grows (input_scaling="online")
    model = SLeDGe(stream.num_features, stream.num_classes, labeled_size=40,
                   unlabeled_size=200, k=5, hidden_channels=64, lr=5e-3, light=args.light,
                   input_scaling="online", seed=args.seed, device=args.device)
    learner = CUDAGraphStep(model) if model.device.type == "cuda" else model
    mask = paper_label_mask(stream.y, args.label_ratio, seed=args.seed)
    # windows of a fifth of the stream (of one sample each below five samples)
    result = prequential(learner, stream, label_mask=mask, window=-(-args.samples // 5))
    windows, correct = result.windows, result.correct
    assert windows is not None and correct is not None  # a window, and the full history
    for start, end, accuracy in zip(windows["start"], windows["end"], windows["accuracy"]):
        print(f"after {end:6d} samples: running accuracy {correct[:end].mean():.3f}, "
              f"samples {start}-{end}: {accuracy:.3f}")
    print({key: result.metrics[key] for key in ("accuracy", "accuracy_last_20", "n_labels")})
    return result.metrics["accuracy"]


if __name__ == "__main__":
    main()
