"""Stream learners composed from the package's modules."""
from torch_geometric_stream.models.online_mlp import OnlineMLP
from torch_geometric_stream.models.registry import (BASELINE_HYPERPARAMETERS, MODELS,
                                                    SLEDGE_VARIANTS, build_model, fixed_entries,
                                                    model_names, unread_entries)
from torch_geometric_stream.models.sledge import (CLASS_PRIORS, GRAPHS, LIGHT_MEMORIES,
                                                  MERGE_SIMILARITIES, PROPAGATIONS,
                                                  SOURCE_MERGES, SLeDGe, unread_arguments)
from torch_geometric_stream.models.cuda_graph import CUDAGraphStep

__all__ = ["SLeDGe", "CUDAGraphStep", "OnlineMLP", "PROPAGATIONS", "GRAPHS", "CLASS_PRIORS",
           "LIGHT_MEMORIES", "MERGE_SIMILARITIES", "SOURCE_MERGES",
           "MODELS", "SLEDGE_VARIANTS", "BASELINE_HYPERPARAMETERS", "build_model", "fixed_entries",
           "model_names", "unread_arguments", "unread_entries"]
