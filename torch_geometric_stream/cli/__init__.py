"""Command line of torch_geometric_stream:
``python -m torch_geometric_stream run|tune|compare|datasets``.

See :func:`main`; configurations live in :mod:`~torch_geometric_stream.cli.configs`,
model names in :mod:`~torch_geometric_stream.cli.models`.
"""
from torch_geometric_stream.cli.main import build_parser, main

__all__ = ["main", "build_parser"]
