"""Compose the package's modules by hand into your own streaming GNN.

A ``DynamicKNNGraph`` learns the graph, a ``DualPrototypeMemory`` keeps the
stream's prototypes, and a ``GraphBackbone`` of PyG ``GraphConv`` layers (any
conv called as ``conv(x, edge_index, edge_weight)`` works, e.g. ``LEConv`` or
``GCNConv(i, o, normalize=False)``, since the backbone normalizes the graph itself;
``SAGEConv`` takes no edge weights) classifies. The loop is the paper's order:
predict, update memory, train on the memory.

    python examples/custom_gnn.py --samples 2000 --seed 0
"""
import argparse
from typing import Optional, Sequence

import torch
import torch.nn.functional as F
from torch_geometric.nn import GraphConv

from torch_geometric_stream import DualPrototypeMemory, DynamicKNNGraph, GraphBackbone
from torch_geometric_stream.cli.arguments import positive_int, seed_value
from torch_geometric_stream.datasets import SyntheticStream


class MyStreamGNN(torch.nn.Module):
    def __init__(self, in_channels: int, num_classes: int, k: int = 4):
        super().__init__()
        self.memory = DualPrototypeMemory(in_channels, num_classes, labeled_size=20,
                                          unlabeled_size=100)
        self.graph = DynamicKNNGraph(in_channels, k=k + 1, hidden_channels=32)
        # GraphConv accepts edge weights; normalization "mean" averages neighbours.
        self.gnn = GraphBackbone(in_channels, 32, num_classes, num_layers=2,
                                 conv=lambda i, o: GraphConv(i, o), normalization="mean")
        self.optimizer = torch.optim.Adam(self.parameters(), lr=5e-3)

    def logits(self, rows: torch.Tensor) -> torch.Tensor:
        mask = torch.cat([self.memory.node_mask, torch.ones(rows.size(0) - self.memory.capacity,
                                                             dtype=torch.bool)])
        edge_index, edge_weight = self.graph(rows, node_mask=mask)
        return self.gnn(rows, edge_index, edge_weight)

    @torch.no_grad()
    def predict(self, x: torch.Tensor) -> int:
        rows = torch.cat([self.memory.nodes(), x.unsqueeze(0)])
        return int(self.logits(rows)[-1].argmax())

    def learn(self, x: torch.Tensor, y: int) -> None:
        self.memory.update(x, y, self.graph.embed)
        if self.memory.num_labeled == 0:
            return
        index = self.memory.labeled_index()
        loss = F.cross_entropy(self.logits(self.memory.nodes())[index],
                               self.memory.slot_labels[index])
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()


def main(argv: Optional[Sequence[str]] = None) -> float:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=positive_int, default=2000,
                        help="stream length (default: %(default)s)")
    parser.add_argument("--seed", type=seed_value, default=0,
                        help="stream and model seed (default: %(default)s)")
    args = parser.parse_args(argv)
    torch.manual_seed(args.seed)  # the modules' initial weights
    stream = SyntheticStream(args.samples, num_features=8, num_classes=3, seed=args.seed)
    model = MyStreamGNN(stream.num_features, stream.num_classes)
    correct = 0
    for t, (features, y) in enumerate(stream):
        x = F.normalize(torch.as_tensor(features), dim=0)
        correct += model.predict(x) == y
        model.learn(x, y if t % 20 == 0 else -1)
    accuracy = correct / args.samples
    print(f"prequential accuracy of the hand-built model: {accuracy:.3f}")
    return accuracy


if __name__ == "__main__":
    main()
