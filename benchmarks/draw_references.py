"""How hard is each label draw for learners that see the same labels? Reference
accuracies per seed, with no model run.

With 0.1 % labels a stream reveals a dozen labels, and a seed whose draw
over-represents a rare class can cost any learner many points. For one stream
and label ratio, this script redraws every seed's label mask (the paper's, as
``benchmarks/accuracy.py`` draws it) and scores four references on the whole
stream, each seeing exactly those labels:

- **majority class**: always the stream's most frequent class (knows the class
  shares, sees no label);
- **1-NN, streaming**: test-then-train nearest labeled row (cosine), the labels
  revealed so far only, in the running min-max range, as a streaming learner sees
  them (wrong before the first label);
- **label propagation, offline**: PyG's ``LabelPropagation`` over a symmetric
  cosine k-NN graph of the *whole* stream (transductive: it sees every future row);
- **+ true class shares**: the same, with class mass normalization to the
  stream's true class shares (Zhu et al., 2003), which no learner can know.

Rows take the stream's automatic feature transform, then min-max scaling (the
running range for the 1-NN, the whole stream's for the graph) and L2
normalization. With ``--runs``,
models' whole-stream runs from ``benchmarks/accuracy.py`` stand beside them.

    python benchmarks/draw_references.py --dataset Shopper --ratio 0.001 \\
        --seeds 0 2000 4000 1000 3000 \\
        --runs "SLeDGe=sledge:normalization-symmetric-add,more-seeds-v857"

Writes ``benchmarks/results/draw_references/<dataset>_<ratio>.json`` and ``.md``.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from accuracy_summary import PAPER_SEEDS
from machine import (check_outputs, cpu_model, data_root, dataset_name, int_at_least,
                     load_or_exit, seed_value)
from seed_spread import seed_records
from torch import Tensor
from torch_geometric.nn.conv.gcn_conv import gcn_norm
from torch_geometric.nn.models import LabelPropagation
from torch_geometric.utils import to_undirected

from torch_geometric_stream.cli.arguments import label_ratio
from torch_geometric_stream.datasets import StreamDataset
from torch_geometric_stream.evaluation.label_mask import paper_label_mask
from torch_geometric_stream.evaluation.transforms import make_transform
from torch_geometric_stream.files import atomic_write_text
from torch_geometric_stream.graph import neighbors_to_edge_index, topk_neighbors
from torch_geometric_stream.nn.scaling import min_max_scale

RESULTS = Path(__file__).resolve().parent / "results" / "draw_references"
ACCURACY_RESULTS = Path(__file__).resolve().parent / "results" / "accuracy"
#: Columns of the table: key in a seed's row -> heading.
REFERENCES = {"majority": "majority class", "nearest_labeled": "1-NN, streaming",
              "propagation": "label propagation, offline",
              "propagation_true_shares": "+ true class shares"}


def transformed_rows(dataset: StreamDataset) -> Tensor:
    """The stream's rows :math:`(T, d)` after its automatic feature transform
    (``signed-log1p`` for tabular streams), unscaled, float64."""
    transform = make_transform("none", l2=False, value_range=dataset.value_range,
                               feature_transform="auto")
    return transform.transform_many(dataset.x).double()


def offline_rows(rows: Tensor) -> Tensor:
    """``rows`` :math:`(T, d)` min-max scaled with the whole stream's range, then
    L2-normalized, float32: what an offline learner sees."""
    scaled = min_max_scale(rows, rows.amin(dim=0), rows.amax(dim=0), check=False)
    return F.normalize(scaled, dim=1).float()


def streaming_nearest_labeled(rows: Tensor, labels: np.ndarray, mask: np.ndarray,
                              block_size: int = 4096) -> np.ndarray:
    r"""Test-then-train 1-NN predictions :math:`(T,)`: row ``t`` takes the class of
    the most cosine-similar labeled row before ``t``, all of them min-max scaled
    to :math:`[-1, 1]` with the range of rows ``0..t`` (the running range a
    streaming learner has, as
    :class:`~torch_geometric_stream.evaluation.OnlineMinMaxScaler` keeps it;
    a feature constant so far maps to 0); ``-1`` while no label has been
    revealed. ``rows``: :math:`(T, d)`, unscaled.

    Row ``t``'s scaling is :math:`s_t(x) = a_t \odot x + b_t`, so every cosine
    against the labeled rows :math:`K` comes from three products with
    :math:`K`, without scaling :math:`K` once per row."""
    labeled = torch.from_numpy(np.flatnonzero(mask))
    predictions = np.full(rows.size(0), -1, dtype=np.int64)
    if labeled.numel() == 0:
        return predictions
    classes = torch.from_numpy(labels[labeled.numpy()])
    keys = rows[labeled]  # (L, d)
    low, high = rows.cummin(dim=0).values, rows.cummax(dim=0).values
    width = high - low
    seen = width > 0
    scale = torch.where(seen, 2 / width.where(seen, 1.0), 0.0)  # a_t, (T, d)
    shift = torch.where(seen, -2 * low / width.where(seen, 1.0) - 1, 0.0)  # b_t
    for start in range(0, rows.size(0), block_size):
        block = slice(start, min(start + block_size, rows.size(0)))
        a, b = scale[block], shift[block]
        query = a * rows[block] + b  # s_t(x_t), (B, d)
        dot = (a * query) @ keys.T + (b * query).sum(dim=1, keepdim=True)
        key_norm_sq = (a * a) @ (keys * keys).T + 2 * (a * b) @ keys.T \
            + (b * b).sum(dim=1, keepdim=True)
        norms = query.norm(dim=1, keepdim=True) * key_norm_sq.clamp_min(0).sqrt()
        scores = dot / norms.clamp_min(1e-12)
        positions = torch.arange(block.start, block.stop)
        scores[labeled.unsqueeze(0) >= positions.unsqueeze(1)] = -torch.inf  # not yet revealed
        best, index = scores.max(dim=1)
        predictions[block] = torch.where(best > -torch.inf, classes[index], -1).numpy()
    return predictions


def knn_graph(rows: Tensor, k: int) -> tuple[Tensor, Tensor]:
    """Symmetric cosine k-NN graph of the unit ``rows`` :math:`(T, d)`: each row's
    ``k`` most similar other rows, made undirected; ``edge_index`` :math:`(2, E)`
    and its weights, the cosine clamped at 0, :math:`(E,)`."""
    found = topk_neighbors(rows, rows, min(k + 1, rows.size(0)))
    is_self = found.indices == torch.arange(rows.size(0)).unsqueeze(1)
    no_self = ~is_self.any(dim=1)  # duplicates outranked the row itself: drop the last
    is_self[no_self, -1] = True
    keep = ~is_self
    neighbors = found.indices[keep].view(rows.size(0), -1)
    edge_index = neighbors_to_edge_index(neighbors)
    edge_weight = found.values[keep].clamp_min(0)
    return to_undirected(edge_index, edge_weight, num_nodes=rows.size(0), reduce="max")


def propagate_labels(edge_index: Tensor, edge_weight: Tensor, labels: np.ndarray,
                     mask: np.ndarray, num_classes: int, num_layers: int = 50,
                     alpha: float = 0.9) -> Tensor:
    """Class scores :math:`(T, c)` of PyG's ``LabelPropagation`` from the labeled
    rows ``mask`` over the graph, symmetrically normalized (``LabelPropagation``
    normalizes only a graph without weights)."""
    propagation = LabelPropagation(num_layers=num_layers, alpha=alpha)
    edge_index, edge_weight = gcn_norm(edge_index, edge_weight, labels.size,
                                       add_self_loops=False)
    one_hot = F.one_hot(torch.from_numpy(labels), num_classes).float()
    # it reads the labels of the rows in mask only
    return propagation(one_hot, edge_index, mask=torch.from_numpy(mask),
                       edge_weight=edge_weight)


def decide(scores: Tensor, shares: Optional[Tensor] = None) -> np.ndarray:
    """Predictions :math:`(T,)` from class scores :math:`(T, c)`: the argmax, or
    with ``shares`` :math:`(c,)` the argmax after class mass normalization (each
    class's scores scaled to sum to its share). ``-1`` for rows no label reached."""
    if shares is not None:
        scores = scores / scores.sum(dim=0).clamp_min(1e-30) * shares
    predictions = scores.argmax(dim=1)
    predictions[scores.amax(dim=1) <= 0] = -1
    return predictions.numpy()


def seed_row(seed: int, labels: np.ndarray, ratio: float, rows: Tensor,
             graph: tuple[Tensor, Tensor], num_classes: int) -> dict[str, Any]:
    """One seed's label draw and the references' whole-stream accuracies
    (``rows``: :math:`(T, d)` unscaled; ``graph``: the offline k-NN graph)."""
    mask = paper_label_mask(labels, ratio, seed)
    counts = np.bincount(labels, minlength=num_classes)
    shares = torch.from_numpy(counts / counts.sum()).float()
    scores = propagate_labels(*graph, labels, mask, num_classes)
    predictions = {"nearest_labeled": streaming_nearest_labeled(rows, labels, mask),
                   "propagation": decide(scores),
                   "propagation_true_shares": decide(scores, shares)}
    row = {"seed": seed, "labels": np.bincount(labels[mask], minlength=num_classes).tolist(),
           "majority": float(counts.max() / counts.sum()),
           "unreached": int((scores.amax(dim=1) <= 0).sum())}
    row.update({name: float((found == labels).mean()) for name, found in predictions.items()})
    return row


def references_table(rows: list[dict[str, Any]], runs: Sequence[str] = ()) -> str:
    """Markdown: one row per seed (labels per class, the references, then the
    accuracy of each of ``runs``, ``row["runs"][name]``, ``–`` where a seed has
    none), then the means over the paper's seeds, the other seeds and all (the
    count of seeds in brackets)."""
    def value(row: dict[str, Any], column: str) -> Optional[float]:
        return row[column] if column in REFERENCES else row["runs"].get(column)

    columns = [*REFERENCES, *runs]
    lines = ["| seed | labels per class | "
             + " | ".join(REFERENCES.get(column, column) for column in columns) + " |",
             "|---|---|" + "---|" * len(columns)]
    for row in rows:
        cells = [value(row, column) for column in columns]
        lines.append(f"| {row['seed']} | {' / '.join(map(str, row['labels']))} | "
                     + " | ".join("–" if v is None else f"{v:.4f}" for v in cells) + " |")
    groups = {"mean, the paper's seeds": [r for r in rows if r["seed"] in PAPER_SEEDS],
              "mean, the other seeds": [r for r in rows if r["seed"] not in PAPER_SEEDS]}
    if not all(groups.values()):
        groups = {}
    groups["mean, all seeds"] = rows
    for name, group in groups.items():
        means = []
        for column in columns:
            values = [v for v in (value(r, column) for r in group) if v is not None]
            means.append(f"{statistics.mean(values):.4f} ({len(values)})" if values else "–")
        lines.append(f"| {name} | | " + " | ".join(means) + " |")
    return "\n".join(lines)


def run_spec(text: str) -> tuple[str, str, list[str]]:
    """An argparse type: ``NAME=MODEL:TAG[,TAG...]`` -> ``(NAME, MODEL, [TAG, ...])``."""
    name, _, rest = text.partition("=")
    model, _, tags = rest.partition(":")
    tag_list = [tag for tag in tags.split(",") if tag]
    if not (name and model and tag_list):
        raise argparse.ArgumentTypeError(f"expected NAME=MODEL:TAG[,TAG...], got {text!r}")
    return name, model, tag_list


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=dataset_name, required=True,
                        help="the stream, any case (e.g. Shopper)")
    parser.add_argument("--ratio", type=label_ratio, required=True, help="label ratio in (0, 1]")
    parser.add_argument("--seeds", type=seed_value, nargs="+", default=list(PAPER_SEEDS),
                        help="label-draw seeds (default: the paper's 0 2000 4000)")
    parser.add_argument("--k", type=int_at_least(1), default=10,
                        help="neighbours per row of the offline graph (default 10)")
    parser.add_argument("--runs", type=run_spec, action="append", default=[],
                        metavar="NAME=MODEL:TAG[,TAG...]",
                        help="a column NAME of MODEL's whole-stream runs in these sub-folders "
                             "of benchmarks/results/accuracy (the first tag holding a seed "
                             "wins); repeatable")
    parser.add_argument("--root", type=Path, default=None,
                        help="folder of the datasets (default: $TGS_DATA_ROOT or ../shared/data)")
    parser.add_argument("--results", type=Path, default=ACCURACY_RESULTS,
                        help="folder of accuracy.py's tags, read by --runs (default: "
                             "benchmarks/results/accuracy)")
    parser.add_argument("--out", type=Path, default=RESULTS,
                        help="folder of the written table and JSON (default: "
                             "benchmarks/results/draw_references)")
    args = parser.parse_args(argv)
    check_outputs(parser, {"--out": args.out})
    names = [name for name, _, _ in args.runs]
    if len(set(names)) < len(names):
        parser.error(f"--runs names a column twice: {', '.join(names)}")
    missing = [tag for _, _, tags in args.runs for tag in tags
               if not (args.results / tag).is_dir()]
    if missing:  # a mistyped tag, not a column of dashes
        parser.error(f"--runs: no such tag in {args.results}: {', '.join(missing)}")
    dataset = load_or_exit(parser, args.dataset, data_root(parser, args.root))
    labels = np.asarray(dataset.y, dtype=np.int64)
    started = time.perf_counter()
    rows = transformed_rows(dataset)
    graph = knn_graph(offline_rows(rows), args.k)
    seeds = list(dict.fromkeys(args.seeds))
    table_rows = [seed_row(seed, labels, args.ratio, rows, graph, dataset.num_classes)
                  for seed in seeds]
    for row in table_rows:
        row["runs"] = {}
    for name, model, tags in args.runs:
        found = {record["seed"]: record["accuracy"]
                 for _, record in seed_records(args.results, tags, model, args.dataset,
                                               args.ratio)}
        for row in table_rows:
            row["runs"][name] = found.get(row["seed"])
    table = references_table(table_rows, names)
    print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    stem = f"{args.dataset}_{args.ratio:g}"
    record = {"dataset": args.dataset, "label_ratio": args.ratio, "k": args.k,
              "runs": [{"name": name, "model": model, "tags": tags}
                       for name, model, tags in args.runs], "rows": table_rows,
              "seconds": time.perf_counter() - started, "cpu": cpu_model(),
              "host": platform.node(), "threads": torch.get_num_threads()}
    atomic_write_text(args.out / f"{stem}.json", json.dumps(record, indent=1))
    heading = f"{args.dataset}, {args.ratio:g} labels, k = {args.k}" + "".join(
        f"; {name}: {model} from {', '.join(tags)}" for name, model, tags in args.runs)
    atomic_write_text(args.out / f"{stem}.md", f"{heading}.\n\n{table}\n")
    print(f"wrote {args.out / stem}.json and .md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
