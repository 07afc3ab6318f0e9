"""Graph structure learning: learned and static top-k graphs, edge normalization,
and the structure regularizer."""
from torch_geometric_stream.graph.dynamic_knn import (DynamicKNNGraph, EmbeddingMLP,
                                                      ReceptiveTopK, StaticKNNGraph, TopK,
                                                      neighbors_to_edge_index, receptive_topk,
                                                      score_neighbors, topk_neighbors)
from torch_geometric_stream.graph.normalization import (NORMALIZATIONS, dense_adjacency,
                                                        normalize_edge_weight)
from torch_geometric_stream.graph.regularizer import STRUCTURE_LOSS_FORMS, structure_loss

__all__ = ["DynamicKNNGraph", "StaticKNNGraph", "EmbeddingMLP", "TopK", "topk_neighbors",
           "ReceptiveTopK", "receptive_topk", "score_neighbors",
           "neighbors_to_edge_index", "normalize_edge_weight", "dense_adjacency", "NORMALIZATIONS",
           "structure_loss", "STRUCTURE_LOSS_FORMS"]
