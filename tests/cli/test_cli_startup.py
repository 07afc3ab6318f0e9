"""The command line starts without PyTorch Geometric and ``torch._dynamo`` (each
over a second to import) where it builds no model: help, ``--version``,
``datasets``, ``compare`` and bad arguments."""
import importlib
import os
import subprocess
import sys
import types

import pytest
from torch_geometric import typing as pyg_typing

import torch_geometric_stream
from torch_geometric_stream.cli import main

#: The module ``cli.main`` (its name in ``cli`` is the function ``main``).
cli_main = importlib.import_module("torch_geometric_stream.cli.main")

#: Runs ``python -m torch_geometric_stream ARGS`` in this process, then prints
#: whether PyTorch Geometric or ``torch._dynamo`` (which PyG imports) was imported.
_IMPORTS_PYG = """
import runpy, sys
sys.argv = ["torch_geometric_stream", *sys.argv[1:]]
try:
    runpy.run_module("torch_geometric_stream", run_name="__main__")
except SystemExit:
    pass
print(any(name in sys.modules for name in ("torch_geometric", "torch._dynamo")))
"""


def _imports_pyg(*arguments: str) -> tuple[bool, subprocess.CompletedProcess]:
    """Whether the command line run with ``arguments`` imports PyTorch Geometric or
    ``torch._dynamo`` (the last line of the run's stdout), and the run."""
    done = subprocess.run([sys.executable, "-c", _IMPORTS_PYG, *arguments],
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, OMP_NUM_THREADS="1"))
    return done.stdout.splitlines()[-1] == "True", done


@pytest.mark.parametrize("arguments", [
    ["--help"], ["--version"], ["run", "--help"], ["tune", "--help"], ["compare", "--help"],
    ["run", "--labl-ratio", "0.1"], ["run", "--label-ratio", "2"], ["tune"]])
def test_help_version_and_argument_errors_do_not_import_pyg(arguments):
    # before: 'import torch_geometric_stream' imported PyG (graph.normalization,
    # nn.backbones), and so did the command line (cli.main, cli.report); until
    # session 86, ops.csr imported torch._dynamo (torch.compiler.disable)
    imports, done = _imports_pyg(*arguments)
    assert not imports, done.stderr


def test_datasets_and_compare_do_not_import_pyg(tmp_path):
    imports, done = _imports_pyg("datasets", "--root", str(tmp_path))
    assert not imports and done.returncode == 0, done.stderr
    record = tmp_path / "run.json"
    assert main(["run", "--dataset", "synthetic", "--synthetic-samples", "30", "--model",
                     "tlp", "--quiet", "--output", str(record)]) == 0
    imports, done = _imports_pyg("compare", str(record))
    assert not imports and "tlp on synthetic-sudden" in done.stdout, done.stderr


def test_importing_the_package_leaves_pyg_and_dynamo_until_a_gcn_is_built():
    script = ("import sys, torch_geometric_stream as t\n"
              "names = ('torch_geometric', 'torch._dynamo')\n"
              "def imported(): return [name in sys.modules for name in names]\n"
              "before = imported(); t.SLeDGe(3, 2); print(*before, *imported())")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert done.stdout.split() == ["False", "False", "True", "True"], done.stderr


def test_public_names_import_and_are_listed():
    from torch_geometric_stream import SLeDGe
    assert SLeDGe.__module__ == "torch_geometric_stream.models.sledge"
    for name in torch_geometric_stream.__all__:
        assert hasattr(torch_geometric_stream, name) and name in dir(torch_geometric_stream)


def test_version_names_the_accelerators_pyg_uses(monkeypatch):
    # read without importing PyG: the same words as PyG's own flags
    expected = ", ".join(f"{name} {'found' if found else 'not installed'}" for name, found in
                         (("torch-scatter", pyg_typing.WITH_TORCH_SCATTER),
                          ("torch-sparse", pyg_typing.WITH_TORCH_SPARSE)))
    assert cli_main.version_line().endswith(f"; {expected})")
    monkeypatch.setitem(sys.modules, "torch_scatter", types.ModuleType("torch_scatter"))
    assert "torch-scatter found, torch-sparse" in cli_main.version_line()
