"""A small CNN encoder before the graph: domain-specific backbones plug into SLeDGe.

The paper notes that the backbone can be domain-specific. Here each 28x28 image
row is encoded by a tiny CNN; the encoder is a ``GraphBackbone`` whose first
"conv" ignores the graph and whose later layers propagate over the learned
graph, so SLeDGe's memory, graph learner and training loop are reused as they
are.

    python examples/image_encoder.py --samples 600            # synthetic 28x28 rows
    python examples/image_encoder.py --root DIR     # real MNIST prefix (DIR/MNIST/)
"""
import argparse
from typing import Optional, Sequence

import torch
from torch import Tensor, nn
from torch_geometric.nn import GCNConv

from torch_geometric_stream import SLeDGe
from torch_geometric_stream.cli.arguments import positive_int, seed_value
from torch_geometric_stream.cli.errors import one_line
from torch_geometric_stream.datasets import DatasetError, StreamDataset
from torch_geometric_stream.evaluation import make_transform, paper_label_mask, prequential
from torch_geometric_stream.nn import GraphBackbone


class ImageEncoderConv(nn.Module):
    """Graph-agnostic first layer: rows of 784 pixels -> CNN features."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.side = int(in_channels ** 0.5)
        self.cnn = nn.Sequential(nn.Conv2d(1, 8, 5, stride=2), nn.ReLU(),
                                 nn.Conv2d(8, 16, 5, stride=2), nn.ReLU(), nn.Flatten(),
                                 nn.LazyLinear(out_channels))

    def forward(self, x: Tensor, edge_index: Optional[Tensor] = None,
                edge_weight: Optional[Tensor] = None) -> Tensor:
        return self.cnn(x.view(-1, 1, self.side, self.side))


def conv_factory(in_channels: int, out_channels: int) -> nn.Module:
    if in_channels == 784:
        return ImageEncoderConv(in_channels, out_channels)
    return GCNConv(in_channels, out_channels, normalize=False, add_self_loops=False)


def load_stream(args: argparse.Namespace) -> StreamDataset:
    if args.root:
        from torch_geometric_stream.datasets import load_dataset
        return load_dataset("MNIST", args.root).head(args.samples)
    from torch_geometric_stream.datasets import make_synthetic_dataset
    # ten Gaussian class centres as 28x28 "images", with little noise (the
    # default noise, 1 per pixel, buries them at this length: chance accuracy)
    return make_synthetic_dataset(args.samples, num_features=784, num_classes=10, noise=0.1,
                                  seed=args.seed)


def main(argv: Optional[Sequence[str]] = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=positive_int, default=600,
                        help="stream length (default: %(default)s)")
    parser.add_argument("--root", default=None,
                        help="folder holding MNIST/; without it, a synthetic stream")
    parser.add_argument("--seed", type=seed_value, default=0,
                        help="stream, label and model seed (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        stream = load_stream(args)
    except DatasetError as error:  # no MNIST under --root: one line, not a traceback
        parser.error(one_line(error))
    model = SLeDGe(784, 10, labeled_size=20, unlabeled_size=100, k=5, hidden_channels=64,
                   lr=2e-3, seed=args.seed)
    model.backbone = GraphBackbone(784, 64, 10, num_layers=2, conv=conv_factory)
    model.backbone(torch.zeros(1, 784), torch.zeros(2, 0, dtype=torch.long))  # init lazy layer
    model.reset_parameters()  # rebuild the optimizer over the new backbone
    mask = paper_label_mask(stream.y, 0.05, seed=args.seed)
    result = prequential(model, stream, label_mask=mask, transform=make_transform())
    print(f"accuracy with a CNN encoder before the graph: {result.metrics['accuracy']:.3f}")
    return result.metrics["accuracy"]


if __name__ == "__main__":
    main()
