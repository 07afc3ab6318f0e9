"""The accuracy runs in the paper's layout, at the configuration the command line
resolves today.

``benchmarks/accuracy.py render`` keeps every run in one long table (one row per
tag, i.e. per variant that was tried). This module answers the reader's question
instead: *what does each method score now?* For every (model, dataset, label
ratio) the configuration that ``python -m torch_geometric_stream run`` would use
today is resolved (:func:`current_config`: the paper preset, the measured
per-dataset settings, the stream-dependent ``"auto"`` entries). A run counts for
that cell only if

- it was made with exactly that configuration (entries recorded before an option
  existed count with the value every older run had,
  :data:`torch_geometric_stream.cli.run.OLDER_RECORDS`; ``light_memory`` counts for
  ``sledge-light`` only, the other models ignore it),
- on the whole stream, with the paper's label mask and the preset asked for (the
  paper's for the paper-layout tables; :func:`targets_table` also counts
  ``--preset package``),
- with one of the paper's seeds (:data:`PAPER_SEEDS`: issue 6's targets are means
  over them; runs of other seeds, e.g. a study of the label draw's spread, stay in
  the table of every run),
- in a folder not listed in :data:`SUPERSEDED` (runs made before a fix that changed
  results without changing any configuration entry),
- on MKL's own code path for the CPU (``machine.mkl_cbwr`` unset: a run with the
  kernels pinned by ``MKL_CBWR`` answers a reproducibility question, not what a run
  scores on that machine).

Of the tags holding such runs the cell takes the one with the most seeds (then the
most seeds on the CPU, then the latest ``finished_at`` of its runs, then the tag
name; records older than ``finished_at`` come after every dated one); seeds of one
tag on the CPU and on a GPU are averaged together and marked. Cells without any
such run are listed with the command that fills them.

Results differ between hosts, so a table whose columns are compared with each other
(the ablations, the memory-size study with its gains, the coefficient ablation) takes
each row's runs from one host where one host ran every column of the row
(:func:`one_host_row`), and says which host, or that the row mixes hosts.
"""
from __future__ import annotations

import statistics
from collections import defaultdict
from datetime import datetime
from typing import Any, Callable, Iterable, Mapping, Optional

from torch_geometric_stream.cli.configs import resolve_config, resolve_stream_entries
from torch_geometric_stream.cli.record_origin import UNKNOWN, host_name
from torch_geometric_stream.cli.run import recorded_config
from torch_geometric_stream.datasets import DATASETS

__all__ = ["SUPERSEDED", "PAPER_SEEDS", "PACKAGE_MARGIN", "MEMORY_SIZES", "COEFFICIENTS",
           "HOST_NOTE", "current_config", "config_differences", "matches_current",
           "matching_runs", "select_cells", "choose_runs", "one_host_row", "summary_tables",
           "targets_table", "readme_table", "memory_study_tables", "mean_std"]

#: Result folders whose runs no longer stand for their configuration, and why.
SUPERSEDED = {
    "hdssl-compounding": "HDSSL before its decay fix (session 5)",
    "hdssl-compounding-scaling-global": "HDSSL before its decay fix (session 5)",
    "session2": "SLeDGe before the zero-prototype rule (session 2); re-run since",
}

#: The seeds the paper averages over, and issue 6's targets with it.
PAPER_SEEDS = (0, 2000, 4000)

#: How far below a target the package-wide defaults (``--preset package``, no
#: per-dataset settings) may stay (issue 6: "the targets minus 0.03").
PACKAGE_MARGIN = 0.03

#: Columns of the paper's accuracy table and of its ablation table.
METHODS = ("tlp", "ressl", "hdssl", "sledge", "sledge-light")
ABLATIONS = ("base", "memory", "static", "gsl", "sledge")
NAMES = {"tlp": "TLP", "ressl": "ReSSL", "hdssl": "HDSSL", "sledge": "SLeDGe",
         "sledge-light": "SLeDGe-L", "base": "Base", "memory": "+M", "static": "+Static",
         "gsl": "+GSL"}
DATASETS_SHOWN = ("MNIST", "Shopper", "Shuttle", "GSAD")
RATIOS = (0.001, 0.01)

#: What a table's host column says (:func:`one_host_row`).
HOST_NOTE = ("host = the machine all of the row's runs ran on, as its kernel release names "
             "it; \"mixed: A / B / C\" = no one host ran every column, each column's hosts "
             "in order, and the row's differences mix hosts")

#: The paper's memory-size study (its Table B.3: SLeDGe at 1 % labels, one memory cut
#: to a fifth of L = 100, U = 900 at a time) and its memory-coefficient ablation (Table
#: B.2, also at 1 %): column -> the entries changed from today's configuration, as
#: ``run`` options that give it (``L = 20`` names U: alone it would take the rest of
#: the 1,000 slots).
STUDY_RATIO = 0.01
MEMORY_SIZES: dict[str, dict[str, Any]] = {
    "L = 20": {"labeled_size": 20, "unlabeled_size": 900}, "L = 100, U = 900": {},
    "U = 180": {"unlabeled_size": 180}}
COEFFICIENTS: dict[str, dict[str, Any]] = {
    "alpha = beta = 0.05": {"alpha": 0.05, "beta": 0.05},
    "alpha = beta = 0.95": {"alpha": 0.95, "beta": 0.95}, "adaptive": {}}


def mean_std(values: list[float]) -> str:
    """``mean ± std`` to four places (the value alone for one run)."""
    if len(values) == 1:
        return f"{values[0]:.4f}"
    return f"{statistics.mean(values):.4f} ± {statistics.stdev(values):.4f}"


def current_config(model: str, dataset: str, ratio: float, preset: str = "paper",
                   overrides: Optional[Mapping[str, Any]] = None,
                   config_file: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    """The configuration ``run --model MODEL --dataset DATASET --label-ratio RATIO
    --preset PRESET`` resolves today, as a run records it (from the registry's
    metadata: no data read); ``overrides`` (the flags' values, ``None`` for not
    given) and ``config_file`` (a ``--config`` file's object) as ``run`` takes them."""
    info = DATASETS[dataset]
    config = resolve_config(dataset, ratio, model, overrides or {}, config_file,
                            num_classes=info.paper_classes, preset=preset)
    return resolve_stream_entries(config, model, info.value_range)


def config_differences(record: dict[str, Any], config: dict[str, Any], preset: str = "paper",
                       label_mask: str = "paper") -> list[str]:
    """What keeps a run's record from counting as made with ``config`` on the whole
    stream, with ``label_mask`` and ``preset`` (see the module doc for entries older
    runs lack): ``KEY RECORDED (today WANTED)`` each, none where it counts."""
    # both sides as run.recorded_config reads them: entries the record predates
    # with the value older runs had, none that the model fixes or ignores
    recorded = recorded_config(record)
    wanted = recorded_config({"model": record["model"], "config": config})
    run = [("limit", record.get("limit") or None, None),
           ("preset", record.get("preset", "paper"), preset),
           ("label_mask", record.get("label_mask", "paper"), label_mask)]
    return ([f"{key} {had} (today {want})" for key, had, want in run if had != want]
            + [f"{key} {recorded.get(key, 'missing')} (today {value})"
               for key, value in wanted.items()
               if key not in recorded or recorded[key] != value])


def matches_current(record: dict[str, Any], config: dict[str, Any],
                    preset: str = "paper") -> bool:
    """Whether a run's record was made with ``config`` on the whole stream, with the
    paper's label mask and ``preset`` (:func:`config_differences` finds none)."""
    return not config_differences(record, config, preset)


def matching_runs(records: Iterable[tuple[str, dict[str, Any]]], preset: str = "paper",
                  variant: Optional[Mapping[str, Any]] = None
                  ) -> dict[tuple[str, str, float], list[tuple[str, dict[str, Any]]]]:
    """``(tag, record)`` pairs -> those that count for each (model, dataset, ratio)
    cell at today's configuration of ``preset`` with the entries of ``variant``
    changed (see the module doc), in the order given."""
    configs: dict[tuple[str, str, float], dict[str, Any]] = {}
    cells: dict[tuple[str, str, float], list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    for tag, record in records:
        cell = (record["model"], record["dataset"], record["label_ratio"])
        if (tag in SUPERSEDED or cell[1] not in DATASETS or record["seed"] not in PAPER_SEEDS
                or record.get("machine", {}).get("mkl_cbwr")):
            continue
        if cell not in configs:
            configs[cell] = {**current_config(*cell, preset=preset), **(variant or {})}
        if matches_current(record, configs[cell], preset):
            cells[cell].append((tag, record))
    return dict(cells)


def select_cells(records: Iterable[tuple[str, dict[str, Any]]], preset: str = "paper",
                 variant: Optional[Mapping[str, Any]] = None
                 ) -> dict[tuple[str, str, float], list[dict[str, Any]]]:
    """``(tag, record)`` pairs -> the chosen runs of each (model, dataset, ratio)
    cell at today's configuration of ``preset``, with the entries of ``variant``
    changed (one run per seed; see the module doc)."""
    return {cell: choose_runs(runs)
            for cell, runs in matching_runs(records, preset, variant).items()}


def choose_runs(runs: Iterable[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """The runs of one cell that stand for it (``(tag, record)`` pairs, all counting
    for the cell): those of the tag with the most seeds (see the module doc), one per
    seed (the CPU run of a seed run on both), in seed order; none for none."""
    by_tag: dict[str, dict[int, dict[str, Any]]] = defaultdict(dict)
    for tag, record in runs:
        seeds = by_tag[tag]
        # one seed twice in a tag (CPU and GPU): the CPU run
        if record["seed"] not in seeds or record.get("device", "cpu") == "cpu":
            seeds[record["seed"]] = record

    def rank(item: tuple[str, dict[int, dict[str, Any]]]) -> tuple:
        tag, seeds = item
        on_cpu = sum(r.get("device", "cpu") == "cpu" for r in seeds.values())
        return (-len(seeds), -on_cpu, -_finished(seeds.values()), tag)

    if not by_tag:
        return []
    _, seeds = min(by_tag.items(), key=rank)
    return [seeds[seed] for seed in sorted(seeds)]


def one_host_row(columns: list[list[tuple[str, dict[str, Any]]]]
                 ) -> tuple[list[list[dict[str, Any]]], str]:
    """The runs of a table row whose columns are compared with each other (each
    column: the ``(tag, record)`` pairs that count for its cell), chosen so that the
    comparison is paired on one host (:func:`host_name`; results differ between hosts).

    Among the hosts with runs in every column that has any, the row takes the one
    with the most seeds over the row (then the latest ``finished_at``, then the name)
    and each column's runs on it (:func:`choose_runs`). Without such a host
    (:data:`UNKNOWN` is none: a record without its machine pairs with nothing) each
    column takes its own runs, as :func:`select_cells` would.

    Returns:
        The chosen runs of each column, in column order, and the row's host: its name;
        ``mixed: A / B+C / –`` (each column's hosts) where no one host ran every column
        with runs; the hosts of the one column with runs; ``–`` for a row without runs.
    """
    filled = [runs for runs in columns if runs]
    hosts = set.intersection(*({host_name(r) for _, r in runs} for runs in filled)
                             ) - {UNKNOWN} if filled else set()
    if hosts:
        choices = {host: [choose_runs((tag, r) for tag, r in runs if host_name(r) == host)
                          for runs in columns] for host in hosts}

        def rank(host: str) -> tuple:
            chosen = [r for column in choices[host] for r in column]
            return (-len(chosen), -_finished(chosen), host)

        best = min(hosts, key=rank)
        return choices[best], best
    chosen = [choose_runs(runs) for runs in columns]
    names = ["+".join(sorted({host_name(r) for r in runs})) or "–" for runs in chosen]
    if len(filled) <= 1:
        return chosen, next((name for name in names if name != "–"), "–")
    return chosen, "mixed: " + " / ".join(names)


def _finished(runs: Iterable[dict[str, Any]]) -> float:
    """The latest ``finished_at`` of ``runs`` as a POSIX time; 0 when none recorded it."""
    return max((datetime.fromisoformat(r["finished_at"]).timestamp()
                for r in runs if r.get("finished_at")), default=0.0)


def differs(runs: list[dict[str, Any]], paper: Optional[float],
            paper_std: Optional[float]) -> bool:
    """Whether our mean, at the four places shown, is further from the paper's mean
    than the paper's std."""
    if not runs or paper is None or paper_std is None:
        return False
    ours = round(statistics.mean(r["accuracy"] for r in runs), 4)
    return abs(ours - paper) > paper_std + 1e-9


def _accuracy_cell(runs: list[dict[str, Any]], paper: Optional[float],
                   paper_std: Optional[float] = None) -> str:
    if not runs:
        return "–"
    marks = _marks(runs)
    ours = mean_std([r["accuracy"] for r in runs])
    if paper is None:
        return ours + marks
    star = " *" if differs(runs, paper, paper_std) else ""
    return f"{ours}{marks} ({_paper_value(paper, paper_std)}){star}"


def _paper_value(paper: float, paper_std: Optional[float]) -> str:
    """The paper's mean, with `` ± std`` where it gives one."""
    return f"{paper:.4f}" if paper_std is None else f"{paper:.4f} ± {paper_std:.4f}"


def _marks(runs: list[dict[str, Any]]) -> str:
    """`` n=SEEDS`` where fewer than 3 seeds ran, `` †`` where some ran on a GPU."""
    return (f" n={len(runs)}" if len(runs) < 3 else "") + (
        " †" if any(r.get("device", "cpu") != "cpu" for r in runs) else "")


def _time_cell(runs: list[dict[str, Any]], paper: Optional[float]) -> str:
    """The cell's 1-thread runs (the table's heading says 1 thread): their mean seconds
    and median ms per sample; ``–`` when none ran with 1 thread."""
    runs = [r for r in runs if r.get("threads", 1) == 1]
    if not runs:
        return "–"
    device = " †" if any(r.get("device", "cpu") != "cpu" for r in runs) else ""
    return (f"{statistics.mean(r['seconds'] for r in runs):.0f} s / "
            f"{statistics.median(r['ms_per_sample_median'] for r in runs):.1f} ms{device}"
            + ("" if paper is None else f" ({paper:g} s)"))


def _table(cells: dict[tuple[str, str, float], list[dict[str, Any]]],
           models: tuple[str, ...],
           cell_text: Callable[[list[dict[str, Any]], str, str, float], str], header: str,
           skip_empty_rows: bool = False,
           hosts: Optional[dict[tuple[str, float], str]] = None) -> list[str]:
    """One row per shown (dataset, ratio), one column per model; a last column with
    each row's host where ``hosts`` (``(dataset, ratio) -> host``) is given."""
    host_column = [] if hosts is None else ["host"]
    lines = [f"| {header} | " + " | ".join([NAMES[m] for m in models] + host_column) + " |",
             "|---" * (len(models) + len(host_column) + 1) + "|"]
    for dataset in DATASETS_SHOWN:
        for ratio in RATIOS:
            if skip_empty_rows and not any((m, dataset, ratio) in cells for m in models):
                continue
            host = [] if hosts is None else [hosts[dataset, ratio]]
            lines.append(f"| {dataset} {100 * ratio:g} % | " + " | ".join([
                cell_text(cells.get((m, dataset, ratio), []), m, dataset, ratio)
                for m in models] + host) + " |")
    return lines


def _one_host_table(matching: dict[tuple[str, str, float], list[tuple[str, dict[str, Any]]]],
                    models: tuple[str, ...]
                    ) -> tuple[dict[tuple[str, str, float], list[dict[str, Any]]],
                               dict[tuple[str, float], str]]:
    """The runs of a table whose columns (``models``) are compared within each shown
    (dataset, ratio) row, each row on one host (:func:`one_host_row`; ``matching`` as
    :func:`matching_runs` gives it): the chosen runs of each cell, and each row's host."""
    cells: dict[tuple[str, str, float], list[dict[str, Any]]] = {}
    hosts: dict[tuple[str, float], str] = {}
    for dataset in DATASETS_SHOWN:
        for ratio in RATIOS:
            keys = [(model, dataset, ratio) for model in models]
            chosen, hosts[dataset, ratio] = one_host_row([matching.get(key, []) for key in keys])
            cells.update((key, runs) for key, runs in zip(keys, chosen) if runs)
    return cells, hosts


def _class_metrics_table(records: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Balanced accuracy / kappa_m of the cells with runs that recorded them (the
    runs of each cell chosen as in :func:`select_cells`, among those runs only);
    only the streams and ratios with such a cell get a row."""
    cells = select_cells((tag, r) for tag, r in records if r.get("balanced_accuracy") is not None)
    if not cells:
        return []
    return _table(cells, METHODS + ABLATIONS[:-1], _balanced_cell, "stream, labels",
                  skip_empty_rows=True)


def _balanced_cell(runs: list[dict[str, Any]], *_cell: Any) -> str:
    if not runs:
        return "–"
    kappas = [r["kappa_m"] for r in runs if r.get("kappa_m") is not None]
    kappa = f"{statistics.mean(kappas):+.3f}" if kappas else "–"
    seeds = f" n={len(runs)}" if len(runs) < 3 else ""
    return f"{statistics.mean(r['balanced_accuracy'] for r in runs):.3f} / {kappa}{seeds}"


def summary_tables(records: Iterable[tuple[str, dict[str, Any]]],
                   paper: dict[tuple[str, str, float], float],
                   paper_seconds: dict[tuple[str, str, float], float],
                   paper_std: Optional[dict[tuple[str, str, float], float]] = None) -> str:
    """Markdown: the methods table and the ablation table (the paper's accuracy, and
    its std where ``paper_std`` has it, in brackets; ``*`` where our mean is further
    from the paper's than that std), the running-time table (the paper's seconds per
    run in brackets), the balanced accuracy / kappa_m table where runs recorded them,
    and the cells not yet run at today's configuration."""
    records = list(records)
    matching = matching_runs(records)
    cells = {cell: choose_runs(runs) for cell, runs in matching.items()}
    ablations, hosts = _one_host_table(matching, ABLATIONS)
    paper_std = paper_std or {}

    def accuracy(runs: list[dict[str, Any]], model: str, dataset: str, ratio: float) -> str:
        key = (model, dataset, ratio)
        return _accuracy_cell(runs, paper.get(key), paper_std.get(key))

    def seconds(runs: list[dict[str, Any]], model: str, dataset: str, ratio: float) -> str:
        return _time_cell(runs, paper_seconds.get((model, dataset, ratio)))

    lines = ["Mean accuracy over the whole stream (± std over seeds; n = seeds where "
             "fewer than 3; † = some seeds ran on a GPU; the paper's value in brackets, "
             "with its std over 5 runs for the methods; * = our mean differs from the "
             "paper's by more than that std). Methods:", ""]
    lines += _table(cells, METHODS, accuracy, "stream, labels")
    compared = [(key, runs) for key, runs in cells.items() if key in paper_std]
    if compared:
        far = sum(differs(runs, paper.get(key), paper_std[key]) for key, runs in compared)
        lines += ["", f"{far} of the {len(compared)} method cells run so far differ from "
                  "the paper by more than the paper's std."]
    lines += ["", f"Ablations (each row's runs on one host, so that its columns compare "
              f"on one machine: {HOST_NOTE}):", ""]
    lines += _table(ablations, ABLATIONS, accuracy, "stream, labels", hosts=hosts)
    lines += ["", "Seconds per run / median ms per sample, 1 thread (CPU runs on the "
              "shared 2-core VM, † GPU runs with several runs sharing the GPU: compare "
              "within a device only; the paper's seconds per run, on its GPU machine, in "
              "brackets):", ""]
    lines += _table(cells, METHODS, seconds, "stream, labels")
    balanced = _class_metrics_table(records)
    if balanced:
        lines += ["", "Balanced accuracy (mean recall over classes) / kappa_m (against the "
                  "prequential majority class: below 0 is worse than predicting the most "
                  "frequent class so far), mean over seeds, for the runs that recorded them "
                  "(n = seeds where fewer than 3):", ""]
        lines += balanced
    missing = [(m, d, r) for d in DATASETS_SHOWN for r in RATIOS
               for m in METHODS + ABLATIONS[:-1] if (m, d, r) not in cells]
    if missing:
        lines += ["", "Not run at today's configuration (fill with `python benchmarks/"
                  "accuracy.py run --models M --datasets D --ratios R --tag current`):", ""]
        lines += [f"- {NAMES[m]} on {d} at {100 * r:g} %" for m, d, r in missing]
    return "\n".join(lines)


def targets_table(records: Iterable[tuple[str, dict[str, Any]]],
                  targets: dict[tuple[str, str, float], float]) -> str:
    """Markdown: SLeDGe and SLeDGe-L against their targets, with the paper preset
    (``targets``) and with the package-wide defaults (``--preset package``, the
    targets minus :data:`PACKAGE_MARGIN`), at today's configuration of each preset;
    a cell without a target only reports the mean. Then the cells not yet run."""
    records = list(records)
    cells = {preset: select_cells(records, preset) for preset in ("paper", "package")}
    models = ("sledge", "sledge-light")
    margin = {"paper": 0.0, "package": PACKAGE_MARGIN}
    lines = ["| stream, labels | " + " | ".join(
        f"{NAMES[m]}, {preset} preset" for m in models for preset in cells) + " |",
        "|---" * (2 * len(models) + 1) + "|"]
    missing = []
    for dataset in DATASETS_SHOWN:
        for ratio in RATIOS:
            row = []
            for model in models:
                key = (model, dataset, ratio)
                for preset, chosen in cells.items():
                    target = targets.get(key)
                    row.append(_target_cell(chosen.get(key, []), None if target is None
                                            else round(target - margin[preset], 4)))
                    if key not in chosen:
                        missing.append((model, dataset, ratio, preset))
            lines.append(f"| {dataset} {100 * ratio:g} % | " + " | ".join(row) + " |")
    if missing:
        lines += ["", "Not run at today's configuration of that preset (fill with `python "
                  "benchmarks/accuracy.py run --models M --datasets D --ratios R --tag TAG "
                  "-- --preset P`):", ""]
        lines += [f"- {NAMES[m]} on {d} at {100 * r:g} %, {p} preset"
                  for m, d, r, p in missing]
    return "\n".join(lines)


def readme_table(records: Iterable[tuple[str, dict[str, Any]]],
                 paper: dict[tuple[str, str, float], float],
                 paper_std: dict[tuple[str, str, float], float]) -> str:
    """Markdown for README.md: SLeDGe and SLeDGe-L at today's configuration of the
    paper preset and of the package preset (mean ± std over the paper's seeds, marked
    as in :func:`summary_tables`), each beside the paper's mean ± std."""
    records = list(records)
    cells = [select_cells(records, preset) for preset in ("paper", "package")]
    models = ("sledge", "sledge-light")
    columns = ("paper preset", "package preset", "paper")
    lines = ["| stream, labels | " + " | ".join(
        f"{NAMES[m]}, {column}" for m in models for column in columns) + " |",
        "|---" * (len(models) * len(columns) + 1) + "|"]
    for dataset in DATASETS_SHOWN:
        for ratio in RATIOS:
            row = []
            for model in models:
                key = (model, dataset, ratio)
                row += [_accuracy_cell(chosen.get(key, []), None) for chosen in cells]
                row.append(_paper_value(paper[key], paper_std.get(key)) if key in paper
                           else "–")
            lines.append(f"| {dataset} {100 * ratio:g} % | " + " | ".join(row) + " |")
    return "\n".join(lines)


def _target_cell(runs: list[dict[str, Any]], target: Optional[float]) -> str:
    """``mean`` (n, †), then ``>= target: met`` / ``missed`` where there is a target."""
    if not runs:
        return "–"
    mean = round(statistics.mean(r["accuracy"] for r in runs), 4)
    marks = _marks(runs)
    if target is None:
        return f"{mean:.4f}{marks}"
    return f"{mean:.4f}{marks} (>= {target:.4f}: {'met' if mean >= target else 'missed'})"


def memory_study_tables(records: Iterable[tuple[str, dict[str, Any]]],
                        paper_sizes: dict[str, tuple[float, float, float]],
                        paper_coefficients: dict[str, tuple[float, float, float]]) -> str:
    """Markdown: SLeDGe's memory-size study and memory-coefficient ablation at 1 %
    labels, at today's configuration otherwise, the paper's values in brackets
    (``paper_sizes[dataset]`` in the order of :data:`MEMORY_SIZES`,
    ``paper_coefficients[dataset]`` in that of :data:`COEFFICIENTS`); the relative
    gain of each larger memory, as the paper gives it (ours on the seeds both sizes
    ran); each row's runs on one host where one ran every column (:func:`one_host_row`,
    named in a last column); then the changed cells not yet run."""
    records = list(records)
    missing: list[str] = []

    def rows(variants: dict[str, dict[str, Any]], paper: Mapping[str, tuple[float, ...]]
             ) -> dict[str, tuple[list[tuple[list[dict[str, Any]], Optional[float]]], str]]:
        """dataset -> ((runs, the paper's value) per column, the row's host)."""
        matching = {name: matching_runs(records, variant=variant)
                    for name, variant in variants.items()}
        by_dataset = {}
        for dataset in DATASETS_SHOWN:
            key = ("sledge", dataset, STUDY_RATIO)
            chosen, host = one_host_row([matching[name].get(key, []) for name in variants])
            value = paper.get(dataset)
            by_dataset[dataset] = ([(runs, None if value is None else value[index])
                                    for index, runs in enumerate(chosen)], host)
        for name, variant in variants.items():
            for dataset in DATASETS_SHOWN:
                if (("sledge", dataset, STUDY_RATIO) not in matching[name]
                        and variant):  # today's cell itself: the summary lists it
                    options = " ".join(f"--{entry.replace('_', '-')} {setting}"
                                       for entry, setting in variant.items())
                    missing.append(f"- {name} on {dataset}: `-- {options}`")
        return by_dataset

    sizes = rows(MEMORY_SIZES, paper_sizes)
    lines = ["| stream | " + " | ".join(MEMORY_SIZES) + " | larger L | larger U | host |",
             "|---" * (len(MEMORY_SIZES) + 4) + "|"]
    for dataset, (row, host) in sizes.items():
        small_l, default, small_u = row
        cells = [_accuracy_cell(runs, paper) for runs, paper in row]
        gains = [_gain_cell(small, default) for small in (small_l, small_u)]
        lines.append(f"| {dataset} | " + " | ".join(cells + gains + [host]) + " |")
    coefficients = rows(COEFFICIENTS, paper_coefficients)
    lines += ["", "| stream | " + " | ".join(COEFFICIENTS) + " | host |",
              "|---" * (len(COEFFICIENTS) + 2) + "|"]
    lines += [f"| {dataset} | " + " | ".join([_accuracy_cell(runs, paper)
                                              for runs, paper in row] + [host]) + " |"
              for dataset, (row, host) in coefficients.items()]
    if missing:
        lines += ["", "Not run at today's configuration (fill with `python benchmarks/"
                  "accuracy.py run --models sledge --datasets D --ratios 0.01 --tag TAG -- "
                  "OPTIONS`):", ""] + missing
    return "\n".join(lines)


def _gain_cell(small: tuple[list[dict[str, Any]], Optional[float]],
               large: tuple[list[dict[str, Any]], Optional[float]]) -> str:
    """The relative gain of the larger memory over the smaller, in % of the smaller's
    accuracy (the paper's "Gain"): ours over the seeds both ran (n = those seeds where
    fewer than 3), then the paper's in brackets. Each argument: (runs, the paper's
    accuracy)."""
    (small_runs, paper_small), (large_runs, paper_large) = small, large
    small_by_seed = {r["seed"]: r["accuracy"] for r in small_runs}
    large_by_seed = {r["seed"]: r["accuracy"] for r in large_runs}
    seeds = sorted(small_by_seed.keys() & large_by_seed.keys())
    if not seeds:
        return "–"
    ours = _relative_gain(statistics.mean(small_by_seed[s] for s in seeds),
                          statistics.mean(large_by_seed[s] for s in seeds))
    text = f"{ours:+.2f} %" + (f" n={len(seeds)}" if len(seeds) < 3 else "")
    if paper_small is None or paper_large is None:
        return text
    return f"{text} ({_relative_gain(paper_small, paper_large):+.2f} %)"


def _relative_gain(small: float, large: float) -> float:
    return 100 * (large - small) / small
