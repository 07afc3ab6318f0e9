"""Backbones (graph classifiers :math:`f_B`) built from PyG convolutions, the
in-model input scalers (and the errors of the quantile range's settings), and the
optimizer-state helpers of the torch learners."""
from torch_geometric_stream.nn.backbones import (AGGREGATIONS, BIAS_POSITIONS, GCNBackbone,
                                                 GraphBackbone, MLPBackbone)
from torch_geometric_stream.nn.optim import (check_adam_dtype, clear_grads,
                                             fit_optimizer_state, load_optimizer_state,
                                             make_adam, make_adam_capturable)
from torch_geometric_stream.nn.scaling import (QuantileRangeSettingError, QuantileRangeTypeError,
                                               QuantileRangeValueError, RunningMinMax,
                                               RunningQuantileRange, min_max_scale)

__all__ = ["AGGREGATIONS", "BIAS_POSITIONS", "GCNBackbone", "GraphBackbone", "MLPBackbone",
           "QuantileRangeSettingError", "QuantileRangeTypeError", "QuantileRangeValueError",
           "RunningMinMax", "RunningQuantileRange", "check_adam_dtype", "clear_grads",
           "fit_optimizer_state", "load_optimizer_state", "make_adam", "make_adam_capturable",
           "min_max_scale"]
