"""``python -m torch_geometric_stream``: the command line (see :mod:`torch_geometric_stream.cli`)."""
from torch_geometric_stream.cli import main

raise SystemExit(main())
