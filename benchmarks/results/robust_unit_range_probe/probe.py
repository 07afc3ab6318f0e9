"""Probe (not a package feature): the robust range mapped to (0, 1) instead of (-1, 1)."""
import sys
from torch_geometric_stream.cli import models
from torch_geometric_stream.cli.main import main

original = models.quantile_range_options
models.quantile_range_options = lambda config, seed: {**original(config, seed),
                                                      "feature_range": (0.0, 1.0)}
sys.exit(main(sys.argv[1:]))
