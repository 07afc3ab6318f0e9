"""What a SLeDGe learner's graph looks like over a stream, and where its predictions drift.

Runs one learner test-then-train over a stream exactly as ``python -m
torch_geometric_stream run`` configures it (paper preset, paper label mask) and
records:

- every ``--every`` samples, over the filled memory slots: the mean pairwise cosine
  of the graph's embeddings and of the raw rows (near 1: the embedding collapsed),
  and for the labeled slots' top-k neighbours in the learned graph and in a
  raw-cosine graph, the share of neighbours that are labeled, the share of
  labeled-to-labeled edges whose classes agree (homophily), the share of all
  their neighbours whose class agrees (estimated homophily: an unlabeled slot's
  class is the true class of the stream row seen so far that lies nearest to
  it, every row scaled with the input range of the snapshot), and the largest
  in-degree (hubs);
- per window of ``--window`` samples: accuracy and each class's share of the
  predictions and of the labels (a learner whose predicted share runs away from
  the true one is drifting in its class prior).

    OMP_NUM_THREADS=1 python benchmarks/graph_diagnostics.py --dataset Shopper --ratio 0.01 --seed 0

Writes ``benchmarks/results/graph_diagnostics/<model>_<dataset>_<ratio>_seed<seed>.json``
(skipped when present, unless ``--force``) and prints both tables.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Optional

import numpy as np
import torch
from torch import Tensor
from torch.nn.functional import normalize

# (benchmarks/ is on sys.path)
from machine import (check_outputs, data_root, dataset_name, load_or_exit, read_result,
                     seed_value, usage_errors)
from torch_geometric_stream.cli.arguments import label_ratio, positive_int
from torch_geometric_stream.cli.configs import resolve_config, resolve_stream_entries
from torch_geometric_stream.cli.models import build_learner, build_transform
from torch_geometric_stream.datasets.synthetic import make_synthetic_dataset
from torch_geometric_stream.evaluation import paper_label_mask, prequential
from torch_geometric_stream.files import atomic_write_text
from torch_geometric_stream.models import SLEDGE_VARIANTS

RESULTS = Path(__file__).resolve().parent / "results" / "graph_diagnostics"


def mean_cosine(rows: Tensor) -> float:
    """Mean cosine similarity over the distinct pairs of ``rows`` :math:`(N, d)`."""
    unit = normalize(rows, dim=-1)
    n = unit.size(0)
    if n < 2:
        return float("nan")
    total = unit.sum(dim=0).square().sum() - unit.square().sum()
    return float(total / (n * (n - 1)))


def nearest_classes(rows: Tensor, seen: Tensor, seen_labels: Tensor,
                    block_size: int = 8192) -> Tensor:
    """The class of the row of ``seen`` :math:`(n, d)` with the largest dot
    product with each of ``rows`` :math:`(N, d)`: ``seen_labels[argmax]``
    :math:`(N,)`, searched ``block_size`` rows of ``seen`` at a time (ties: the
    earliest row)."""
    best_value = rows.new_full((rows.size(0),), float("-inf"))
    best_index = torch.zeros(rows.size(0), dtype=torch.long, device=rows.device)
    for start in range(0, seen.size(0), block_size):
        value, index = (rows @ seen[start:start + block_size].T).max(dim=1)
        better = value > best_value
        best_value = torch.where(better, value, best_value)
        best_index = torch.where(better, index + start, best_index)
    return seen_labels[best_index]


def neighbour_stats(emb: Tensor, labels: Tensor, k: int,
                    classes: Optional[Tensor] = None) -> dict[str, float]:
    """Top-k graph statistics of the labeled rows.

    Args:
        emb: row vectors :math:`(N, h)`, compared by dot product (pass unit rows
            for cosine).
        labels: class of each row :math:`(N,)`, ``-1`` for unlabeled rows.
        k: neighbours per row, the row itself excluded.
        classes: a class for every row :math:`(N,)`, labeled or not (e.g. an
            estimate for the unlabeled ones); adds ``estimated_homophily``.

    Returns:
        ``labeled_neighbours`` (share of the labeled rows' neighbours that are
        labeled), ``homophily`` (share of labeled-to-labeled edges within one
        class; NaN without such edges), ``estimated_homophily`` with ``classes``
        (share of all the labeled rows' neighbours whose class in ``classes``
        is the row's label; NaN without labeled rows) and ``max_in_degree``
        (over every row's top-k, the most times one row is chosen).
    """
    n = emb.size(0)
    k = min(k, n - 1)
    scores = emb @ emb.T
    scores.fill_diagonal_(float("-inf"))
    neighbours = scores.topk(k, dim=1).indices  # (N, k)
    labeled = labels >= 0
    own = labels[labeled].unsqueeze(1)  # (L, 1)
    theirs = labels[neighbours[labeled]]  # (L, k)
    both = theirs >= 0
    edges = int(both.sum())
    stats = {
        "labeled_neighbours": float(both.float().mean()) if own.numel() else float("nan"),
        "homophily": float((theirs == own)[both].float().mean()) if edges else float("nan"),
    }
    if classes is not None:
        stats["estimated_homophily"] = (float((classes[neighbours[labeled]] == own).float().mean())
                                        if own.numel() else float("nan"))
    stats["max_in_degree"] = int(torch.bincount(neighbours.reshape(-1), minlength=n).max())
    return stats


def memory_snapshot(learner: Any, seen: Optional[Tensor] = None,
                    seen_labels: Optional[Tensor] = None) -> dict[str, Any]:
    """Graph statistics of ``learner``'s filled memory slots (see the module
    docstring); with the stream rows seen so far in the memory's space ``seen``
    :math:`(n, d)` and their true classes ``seen_labels`` :math:`(n,)`, also the
    estimated homophily.

    Raises:
        ValueError: where only one of ``seen`` and ``seen_labels`` is given.
    """
    if (seen is None) != (seen_labels is None):
        raise ValueError("seen and seen_labels go together: got only "
                         + ("seen" if seen_labels is None else "seen_labels"))
    memory = learner.memory
    filled = memory.node_mask
    rows = memory.nodes()[filled]
    labels = torch.full((memory.capacity,), -1, dtype=torch.long, device=rows.device)
    labels[:memory.labeled_size] = memory.slot_labels
    labels = labels[filled]
    unit = normalize(rows, dim=-1)
    classes = None if seen is None or seen_labels is None else torch.where(
        labels >= 0, labels, nearest_classes(unit, seen, seen_labels))
    k = learner.k  # the neighbours each row keeps besides itself
    raw = neighbour_stats(unit, labels, k, classes)
    snapshot: dict[str, Any] = {"fill_levels": list(memory.fill_levels),
                                "cosine_raw": mean_cosine(rows),
                                **{f"{key}_raw": value for key, value in raw.items()}}
    if learner.graph is not None:
        with torch.no_grad():
            emb = learner.graph.embed(rows)
        snapshot["cosine_graph"] = mean_cosine(emb)
        snapshot.update({f"{key}_graph": value
                         for key, value in neighbour_stats(emb, labels, k, classes).items()})
    return snapshot


def memory_space(learner: Any, transform: Any, x: Any) -> Tensor:
    """Stream rows ``x`` :math:`(n, d_{in})` as the memory stores them
    :math:`(n, d)`: through the stream's transform and the learner's input
    scaler as they stand now (neither updated), L2-normalized."""
    rows = torch.as_tensor(transform.transform_many(x, update=False)).to(learner.dtype)
    if learner.input_scaler is not None:
        rows = learner.input_scaler.peek(rows)
    return normalize(rows, dim=-1)


def window_shares(predictions: np.ndarray, labels: np.ndarray, num_classes: int,
                  window: int) -> list[dict[str, Any]]:
    """Accuracy and per-class predicted / true shares of consecutive windows."""
    rows = []
    for start in range(0, labels.size, window):
        pred, true = predictions[start:start + window], labels[start:start + window]
        rows.append({"start": start, "accuracy": float((pred == true).mean()),
                     "predicted_share": (np.bincount(pred, minlength=num_classes)
                                         / pred.size).tolist(),
                     "true_share": (np.bincount(true, minlength=num_classes)
                                    / true.size).tolist()})
    return rows


def diagnose(dataset: Any, name: str, model: str, ratio: float, seed: int, every: int,
             window: int, overrides: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """Run ``model`` over ``dataset`` and collect the snapshots and window shares."""
    config = resolve_config(name, ratio, model, overrides or {}, None,
                            num_classes=dataset.num_classes)
    resolve_stream_entries(config, model, dataset.value_range)
    learner = build_learner(model, dataset.num_features, dataset.num_classes, config, seed,
                            "cpu")
    transform = build_transform(config, dataset, seed)
    snapshots = []

    true_labels = torch.as_tensor(np.asarray(dataset.y), dtype=torch.long)

    def callback(position: int, record: Any) -> None:
        if (position + 1) % every == 0 and learner.memory.num_nodes > 1:
            seen = memory_space(learner, transform, dataset.x[:position + 1])
            snapshots.append({"position": position + 1,
                              **memory_snapshot(learner, seen, true_labels[:position + 1])})

    result = prequential(learner, dataset, label_mask=paper_label_mask(dataset.y, ratio, seed),
                         transform=transform, progress=False, callback=callback)
    predictions, labels = np.asarray(result.predictions), np.asarray(result.labels)
    return {"dataset": name, "model": model, "label_ratio": ratio, "seed": seed,
            "config": config, "accuracy": float((predictions == labels).mean()),
            "snapshots": snapshots,
            "windows": window_shares(predictions, labels, dataset.num_classes, window)}


def _format(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, list):
        return "/".join(_format(item) for item in value)
    return str(value)


def print_tables(report: dict[str, Any]) -> None:
    """The snapshots and the windows as plain-text tables."""
    print(f"{report['model']} on {report['dataset']}, {report['label_ratio']}, "
          f"seed {report['seed']}: accuracy {report['accuracy']:.4f}")
    for rows in (report["snapshots"], report["windows"]):
        if rows:
            keys = list(rows[0])
            print(" | ".join(keys))
            for row in rows:
                print(" | ".join(_format(row.get(key)) for key in keys))


def diagnosed_dataset(text: str) -> str:
    """An argparse type: ``synthetic`` or a paper dataset's canonical name; an
    unknown name's error lists both."""
    if text == "synthetic":
        return text
    try:
        return dataset_name(text)
    except argparse.ArgumentTypeError as error:
        raise argparse.ArgumentTypeError(f"{error}, or synthetic") from None


def spacing(report: dict[str, Any]) -> dict[str, Optional[int]]:
    """The ``--every`` and ``--window`` a report was made with, read off its last two
    snapshots and windows (``None`` where it has fewer than two)."""

    def step(rows: list[dict[str, Any]], key: str) -> Optional[int]:
        return rows[-1][key] - rows[-2][key] if len(rows) >= 2 else None

    return {"every": step(report["snapshots"], "position"),
            "window": step(report["windows"], "start")}


def main(argv: Optional[list[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="Shopper", type=diagnosed_dataset,
                        help="a paper dataset under --root, or 'synthetic'")
    parser.add_argument("--root", default=None, help="data folder (default: TGS_DATA_ROOT)")
    parser.add_argument("--model", default="sledge", choices=tuple(SLEDGE_VARIANTS),
                        help="a model with a memory (default: %(default)s)")
    parser.add_argument("--ratio", type=label_ratio, default=0.01,
                        help="label ratio in (0, 1] (default: 0.01)")
    parser.add_argument("--seed", type=seed_value, default=0,
                        help="label-draw and model seed (default: 0)")
    parser.add_argument("--limit", type=positive_int, help="first N samples only")
    parser.add_argument("--every", type=positive_int, default=1000,
                        help="samples between snapshots")
    parser.add_argument("--window", type=positive_int, default=1000, help="samples per window")
    parser.add_argument("--out-dir", type=Path, default=RESULTS,
                        help="folder of the JSONs (default: benchmarks/results/graph_diagnostics)")
    parser.add_argument("--force", action="store_true", help="run even if the JSON exists")
    args = parser.parse_args(argv)
    with usage_errors(parser):
        check_outputs(parser, {"--out-dir": args.out_dir})
        torch.set_num_threads(1)
        if args.dataset == "synthetic":
            dataset = make_synthetic_dataset(args.limit or 2000)
        else:
            dataset = load_or_exit(parser, args.dataset, data_root(parser, args.root))
        if args.limit:
            dataset = dataset.head(args.limit)
        name = dataset.name
        limit = f"_limit{args.limit}" if args.limit else ""
        path = args.out_dir / f"{args.model}_{name}_{args.ratio}_seed{args.seed}{limit}.json"
        if path.exists() and not args.force:
            report = read_result(parser, path)
            made_with = [f"--{name} {value}" for name, value in spacing(report).items()
                         if value is not None and value != getattr(args, name)]
            if made_with:  # (its file name does not say: it was shown as if made with these)
                parser.error(f"{path} exists, made with {' '.join(made_with)}: pass that, or "
                             "--force to rerun it")
            print(f"skip {path.name} (exists; --force reruns it)")
        else:
            report = diagnose(dataset, name, args.model, args.ratio, args.seed, args.every,
                              args.window)
            args.out_dir.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps(report, indent=1))
        print_tables(report)


if __name__ == "__main__":
    main()
