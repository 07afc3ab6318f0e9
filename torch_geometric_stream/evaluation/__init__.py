r"""Prequential evaluation of stream learners: label masks, input transforms, metrics.

.. code-block:: python

    from torch_geometric_stream.evaluation import (make_transform, paper_label_mask,
                                                   prequential)

    mask = paper_label_mask(y, label_ratio=0.01, seed=0)
    result = prequential(learner, zip(X, y), label_mask=mask, transform=make_transform())
    result.metrics["accuracy"]
"""
from torch_geometric_stream.evaluation.bounded import BoundedStreamMetrics, approximate_tails
from torch_geometric_stream.evaluation.delay import DelayedLabels, check_label_delay
from torch_geometric_stream.evaluation.label_query import LABEL_QUERIES, UncertaintyQuery
from torch_geometric_stream.evaluation.label_mask import (
    LABEL_MASKS,
    POSITION_MASKS,
    PositionMask,
    authors_label_mask,
    bernoulli_label_mask,
    capymoa_label_mask,
    make_label_mask,
    paper_label_mask,
    paper_memory_sizes,
)
from torch_geometric_stream.evaluation.metrics import (
    StreamMetrics,
    accuracy_curve,
    class_metrics,
    class_metrics_from_counts,
    tail_accuracy,
)
from torch_geometric_stream.evaluation.prequential import (
    HISTORIES,
    FusedStreamLearner,
    PrequentialRecord,
    PrequentialResult,
    check_history,
    check_plot_path,
    plot_curves,
    plot_running_accuracy,
    StreamLearner,
    prequential,
)
from torch_geometric_stream.evaluation.progress import (LOG_PROGRESS_SECONDS, ProgressLines,
                                                        progress_interval)
from torch_geometric_stream.evaluation.transforms import (
    FEATURE_TRANSFORMS,
    LEARNER_SCALINGS,
    SCALINGS,
    Compose,
    FixedRangeScaler,
    GlobalMinMaxScaler,
    L2Normalize,
    OnlineMinMaxScaler,
    OnlineQuantileRangeScaler,
    SignedLog1p,
    StreamTransform,
    make_transform,
    resolve_feature_transform,
    resolve_scaling,
    unchanged_on_error,
)
from torch_geometric_stream.evaluation.windows import WINDOW_COLUMNS, WindowedMetrics

__all__ = [
    "LABEL_MASKS",
    "POSITION_MASKS",
    "PositionMask",
    "make_label_mask",
    "paper_label_mask",
    "authors_label_mask",
    "bernoulli_label_mask",
    "capymoa_label_mask",
    "paper_memory_sizes",
    "StreamTransform",
    "L2Normalize",
    "SignedLog1p",
    "OnlineMinMaxScaler",
    "OnlineQuantileRangeScaler",
    "GlobalMinMaxScaler",
    "FixedRangeScaler",
    "Compose",
    "SCALINGS",
    "LEARNER_SCALINGS",
    "FEATURE_TRANSFORMS",
    "make_transform",
    "resolve_scaling",
    "resolve_feature_transform",
    "unchanged_on_error",
    "StreamMetrics",
    "BoundedStreamMetrics",
    "tail_accuracy",
    "approximate_tails",
    "accuracy_curve",
    "class_metrics",
    "class_metrics_from_counts",
    "prequential",
    "StreamLearner",
    "FusedStreamLearner",
    "DelayedLabels",
    "check_label_delay",
    "LABEL_QUERIES",
    "UncertaintyQuery",
    "ProgressLines",
    "LOG_PROGRESS_SECONDS",
    "progress_interval",
    "PrequentialResult",
    "PrequentialRecord",
    "HISTORIES",
    "check_history",
    "check_plot_path",
    "plot_curves",
    "plot_running_accuracy",
    "WindowedMetrics",
    "WINDOW_COLUMNS",
]
