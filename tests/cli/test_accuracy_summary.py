"""``benchmarks/accuracy_summary.py``: which runs stand for a cell at today's
configuration, and the paper-layout tables made of them."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from accuracy_summary import (  # noqa: E402
    COEFFICIENTS,
    DATASETS_SHOWN,
    MEMORY_SIZES,
    STUDY_RATIO,
    SUPERSEDED,
    config_differences,
    current_config,
    matches_current,
    matching_runs,
    mean_std,
    memory_study_tables,
    one_host_row,
    readme_table,
    select_cells,
    summary_tables,
    targets_table,
)

from torch_geometric_stream.cli.configs import resolve_config, resolve_stream_entries  # noqa: E402
from torch_geometric_stream.datasets import DATASETS  # noqa: E402


def record(model="sledge", dataset="Shuttle", ratio=0.01, seed=0, accuracy=0.9,
           device="cpu", curve=None, preset="paper", host="fc-v1", **config_changes):
    config = {**current_config(model, dataset, ratio, preset), **config_changes}
    return {"model": model, "dataset": dataset, "label_ratio": ratio, "seed": seed,
            "accuracy": accuracy, "device": device, "limit": None, "preset": preset,
            "label_mask": "paper", "seconds": 100.0, "ms_per_sample_median": 2.0,
            "config": config, **({} if curve is None else {"curve": curve}),
            "machine": {"platform": f"Linux-6.18.44-{host}-x86_64-with-glibc2.36",
                        "machine": "x86_64"}}


def test_mean_std_is_the_mean_and_the_sample_std_to_four_places():
    assert mean_std([0.5, 0.6, 0.9]) == "0.6667 ± 0.2082"   # not the median, 0.6
    assert mean_std([0.91236]) == "0.9124"


def test_current_config_is_what_run_resolves_for_the_stream():
    shuttle = current_config("sledge", "Shuttle", 0.01)
    assert shuttle["scaling"] == "online-rescale"          # tabular, SLeDGe scales itself
    assert shuttle["feature_transform"] == "signed-log1p"  # measured per-dataset setting
    assert shuttle["labeled_size"] == 100 and shuttle["k"] == 5
    assert current_config("sledge", "MNIST", 0.01)["scaling"] == "range"  # pixel range
    assert current_config("ressl", "Shuttle", 0.01) == {
        "memory_size": 1000, "scaling": "online", "feature_transform": "none",
        "robust_quantile": 0.01, "robust_tolerance": 0.05, "robust_reservoir": 1000,
        "robust_window": None, "robust_clip": True, "feature_range": [-1.0, 1.0], "decay": None,
        "prune_threshold": None, "window": None, "radius_k": None}
    light = current_config("sledge-light", "Shuttle", 0.001)
    assert light["feature_transform"] == "none"            # the measured exception


def test_a_run_matches_only_with_the_whole_stream_and_the_same_configuration():
    config = current_config("sledge", "Shuttle", 0.01)
    assert matches_current(record(), config)
    assert not matches_current({**record(), "limit": 3000}, config)
    assert not matches_current({**record(), "preset": "package"}, config)
    assert not matches_current(record(feature_transform="none"), config)
    assert not matches_current(record(lr=5e-3), config)


def test_entries_older_runs_lack_count_with_the_value_they_had():
    config = current_config("sledge", "Shuttle", 0.01)
    old = record()
    for key in ("count_offset", "alpha", "beta", "class_prior", "reselect_every"):
        del old["config"][key]
    assert matches_current(old, config)
    del old["config"]["feature_transform"]   # older runs had none; today's Shuttle has it
    assert not matches_current(old, config)
    tlp = current_config("tlp", "Shuttle", 0.01)
    old_tlp = record("tlp", knn=None)
    del old_tlp["config"]["sigma"], old_tlp["config"]["knn"]   # before they were options
    assert matches_current(old_tlp, tlp)
    assert not matches_current(record("tlp", knn=10), tlp)
    # records before --preset and --label-mask: the paper's
    older = {key: value for key, value in record().items() if key not in ("preset", "label_mask")}
    assert matches_current(older, config)
    # an entry without a value for older runs (none before it was recorded) never counts
    del older["config"]["lr"]
    assert config_differences(older, config) == [f"lr missing (today {config['lr']})"]


def test_an_older_record_of_a_fixed_entry_counts_with_the_value_the_model_ran_with():
    # before runs recorded +GSL's lam = 0 and +Static's raw merges, they held the value given
    for model in ("gsl", "static"):
        config = current_config(model, "Shuttle", 0.01)
        assert config["lam"] == 0.0
        assert matches_current(record(model, lam=0.1, merge_similarity="embedding"), config)
    assert not matches_current(record(lam=0.01), current_config("sledge", "Shuttle", 0.01))


def test_light_memory_counts_for_sledge_light_only():
    assert matches_current(record(light_memory="per-class"),
                           current_config("sledge", "Shuttle", 0.01))
    light = current_config("sledge-light", "Shuttle", 0.01)
    assert matches_current(record("sledge-light", light_memory="full"), light)
    assert not matches_current(record("sledge-light", light_memory="per-class"), light)
    older = record("sledge-light")
    del older["config"]["light_memory"]  # a run before the entry: one slot per class
    assert not matches_current(older, light)
    assert matches_current(older, {**light, "light_memory": "per-class"})


def test_the_cell_takes_the_tag_with_most_seeds_and_the_cpu_run_of_a_seed():
    superseded = next(iter(SUPERSEDED))
    runs = [("a", record(seed=0, accuracy=0.1)),
            ("b", record(seed=0, accuracy=0.5, device="cuda")),
            ("b", record(seed=0, accuracy=0.6)),
            ("b", record(seed=2000, accuracy=0.7, device="cuda")),
            ("old", record(seed=0, accuracy=0.2, lr=5e-3)),
            (superseded, record(seed=0, accuracy=0.3)),
            (superseded, record(seed=2000, accuracy=0.3)),
            (superseded, record(seed=4000, accuracy=0.3))]
    cells = select_cells(runs)
    assert [(r["seed"], r["accuracy"]) for r in cells["sledge", "Shuttle", 0.01]] == [
        (0, 0.6), (2000, 0.7)]


def test_among_tags_with_as_many_seeds_the_one_with_more_cpu_runs_wins():
    cpu = [("cpu", {**record(seed=seed, accuracy=0.5), "finished_at": "2026-12-01T10:00:00"})
           for seed in (0, 2000)]
    gpu = [("gpu", {**record(seed=seed, accuracy=0.6, device="cuda" if seed else "cpu"),
                    "finished_at": "2026-12-05T10:00:00"}) for seed in (0, 2000)]
    assert [r["accuracy"] for r in select_cells(gpu + cpu)["sledge", "Shuttle", 0.01]] == [
        0.5, 0.5]


def test_runs_with_mkl_kernels_pinned_do_not_count_for_a_cell():
    runs = [("default", {**record(seed=seed, accuracy=0.4),
                         "machine": {"mkl_cbwr": None}, "finished_at": "2026-12-01T10:00:00"})
            for seed in (0, 2000, 4000)]
    runs += [("pinned", {**record(seed=seed, accuracy=0.5), "machine": {"mkl_cbwr": "AVX2"},
                         "finished_at": "2026-12-02T10:00:00"}) for seed in (0, 2000, 4000)]
    assert {r["accuracy"] for r in select_cells(runs)["sledge", "Shuttle", 0.01]} == {0.4}
    assert ("sledge", "Shuttle", 0.01) not in select_cells(runs[3:])


def test_among_tags_with_as_many_seeds_the_latest_finished_run_wins():
    def dated(tag, accuracy, finished=None):
        extra = {} if finished is None else {"finished_at": finished}
        return [(tag, {**record(seed=seed, accuracy=accuracy), **extra})
                for seed in (0, 2000, 4000)]
    # without dates the tag name decides; a dated tag comes before every undated one
    runs = dated("a-undated", 0.1) + dated("b-older", 0.2, "2026-11-28T10:00:00+00:00")
    runs += dated("c-newer", 0.3, "2026-11-29T09:30:00+00:00")
    assert select_cells(runs)["sledge", "Shuttle", 0.01][0]["accuracy"] == 0.3
    assert select_cells(runs[:6])["sledge", "Shuttle", 0.01][0]["accuracy"] == 0.2
    assert select_cells(runs[:3])["sledge", "Shuttle", 0.01][0]["accuracy"] == 0.1
    # the number of seeds still comes first
    assert select_cells(runs[:5])["sledge", "Shuttle", 0.01][0]["accuracy"] == 0.1
    # a tag's latest run dates it: one seed of "d" rerun after "c" finished
    rerun = dated("d-rerun", 0.4, "2026-11-01T10:00:00+00:00")
    rerun[0][1]["finished_at"] = "2026-12-10T10:00:00+00:00"
    assert select_cells(runs + rerun)["sledge", "Shuttle", 0.01][0]["accuracy"] == 0.4


def test_only_the_paper_seeds_count_for_a_cell():
    # a study of the label draw's spread runs more seeds at today's configuration:
    # its tag holds the most seeds but the cell keeps the paper's three
    runs = [("paper", record(seed=seed, accuracy=0.5)) for seed in (0, 2000, 4000)]
    runs += [("spread", record(seed=seed, accuracy=0.9)) for seed in (1000, 3000, 5000, 6000)]
    cells = select_cells(runs)
    assert [(r["seed"], r["accuracy"]) for r in cells["sledge", "Shuttle", 0.01]] == [
        (0, 0.5), (2000, 0.5), (4000, 0.5)]
    assert select_cells(runs[3:]) == {}
    # in seed order, whatever the order of the records
    assert [r["seed"] for r in select_cells(runs[::-1])["sledge", "Shuttle", 0.01]] == [
        0, 2000, 4000]


def test_tables_show_mean_std_seed_count_gpu_mark_and_paper_value():
    runs = [("t", record(seed=0, accuracy=0.8)),
            ("t", record(seed=2000, accuracy=0.9, device="cuda"))]
    text = summary_tables(runs, {("sledge", "Shuttle", 0.01): 0.937},
                          {("sledge", "Shuttle", 0.01): 415.2})
    assert "| Shuttle 1 % | – | – | – | 0.8500 ± 0.0707 n=2 † (0.9370) | – |" in text
    assert "| Shuttle 1 % | – | – | – | 100 s / 2.0 ms † (415.2 s) | – |" in text
    assert text.count("- SLeDGe on Shuttle at 0.1 %") == 1   # a method and an ablation
    assert "- SLeDGe on Shuttle at 1 %" not in text


def test_the_time_table_gives_the_mean_seconds_and_the_median_ms_per_sample():
    runs = [("t", {**record(seed=seed), "seconds": seconds, "ms_per_sample_median": ms})
            for seed, seconds, ms in ((0, 100.0, 1.0), (2000, 110.0, 2.0), (4000, 150.0, 6.0))]
    assert "| Shuttle 1 % | – | – | – | 120 s / 2.0 ms | – |" in summary_tables(runs, {}, {})


def test_the_time_table_leaves_out_runs_with_more_than_one_thread():
    runs = [("t", {**record(seed=0), "threads": 1, "seconds": 100.0}),
            ("t", {**record(seed=2000), "threads": 2, "seconds": 40.0,
                   "ms_per_sample_median": 0.5}),
            ("t", {**record(seed=4000), "seconds": 140.0})]   # older records: 1 thread
    text = summary_tables(runs, {}, {})
    assert "| Shuttle 1 % | – | – | – | 120 s / 2.0 ms | – |" in text
    only_two = [("t", {**record(seed=0), "threads": 2})]
    assert "| Shuttle 1 % | – | – | – | – | – |" in summary_tables(only_two, {}, {})


def test_paper_std_beside_the_paper_value_and_cells_further_than_it_starred():
    runs = [("t", record(seed=0, accuracy=0.90)), ("t", record(seed=2000, accuracy=0.92)),
            ("t", record("tlp", seed=0, accuracy=0.786004))]  # equal at four places
    paper = {("sledge", "Shuttle", 0.01): 0.937, ("tlp", "Shuttle", 0.01): 0.786}
    std = {("sledge", "Shuttle", 0.01): 0.0132, ("tlp", "Shuttle", 0.01): 0.0001}
    text = summary_tables(runs, paper, {}, std)
    # sledge: 0.91 is 0.027 from 0.937 > 0.0132; tlp: equal to the paper
    assert ("| Shuttle 1 % | 0.7860 n=1 (0.7860 ± 0.0001) | – | – | "
            "0.9100 ± 0.0141 n=2 (0.9370 ± 0.0132) * | – |") in text
    assert "1 of the 2 method cells run so far differ" in text


def test_a_mean_as_far_from_the_paper_as_its_std_at_four_places_is_not_starred():
    runs = [("t", record(seed=0, accuracy=0.92384)),       # 0.9238: 0.0132 below
            ("t", record("tlp", seed=0, accuracy=0.78614)),  # 0.7861: 0.0001 above
            ("t", record("tlp", "Shopper", seed=0, accuracy=0.8453))]
    paper = {("sledge", "Shuttle", 0.01): 0.937, ("tlp", "Shuttle", 0.01): 0.786,
             ("tlp", "Shopper", 0.01): 0.8453}
    std = {("sledge", "Shuttle", 0.01): 0.0132, ("tlp", "Shuttle", 0.01): 0.0001,
           ("tlp", "Shopper", 0.01): 0.0}
    text = summary_tables(runs, paper, {}, std)
    assert ("| Shuttle 1 % | 0.7861 n=1 (0.7860 ± 0.0001) | – | – | "
            "0.9238 n=1 (0.9370 ± 0.0132) | – |") in text
    assert "| Shopper 1 % | 0.8453 n=1 (0.8453 ± 0.0000) | – | – | – | – |" in text
    assert "0 of the 3 method cells run so far differ" in text


def test_class_metrics_table_only_for_runs_that_recorded_them():
    runs = [("t", record(seed=0)),
            ("cm", {**record(seed=0), "balanced_accuracy": 0.6, "kappa_m": -0.25}),
            ("cm", {**record(seed=2000), "balanced_accuracy": 0.8, "kappa_m": None}),
            ("cm", {**record(dataset="GSAD"), "balanced_accuracy": 0.5, "kappa_m": 0.125})]
    text = summary_tables(runs, {}, {})
    # SLeDGe is the 4th of the 8 columns; kappa_m averages the defined values only
    assert "| Shuttle 1 % | – | – | – | 0.700 / -0.250 n=2 | – | – | – | – | – |" in text
    assert "| GSAD 1 % | – | – | – | 0.500 / +0.125 n=1 | – | – | – | – | – |" in text
    assert "| Shuttle 0.1 % | – | – | – | – | – | – | – | – | – |" not in text.split(
        "Balanced accuracy")[1]
    assert "Balanced accuracy" not in summary_tables(runs[:1], {}, {})


@pytest.mark.parametrize("model", ["sledge", "sledge-light", "memory", "base", "tlp"])
def test_every_cell_resolves_without_data(model):
    for dataset in ("MNIST", "Shopper", "Shuttle", "GSAD"):
        assert current_config(model, dataset, 0.001)["memory_size"] == 1000


def test_current_plots_draw_the_counted_sledge_runs_per_stream_and_ratio(tmp_path, monkeypatch):
    import torch_geometric_stream.evaluation as evaluation
    from accuracy import current_plots

    drawn = {}
    monkeypatch.setattr(evaluation, "plot_curves",
                        lambda curves, path, title: drawn.setdefault(path, curves) and path)
    # a real PNG per plot is plot_curves' own test; here: which runs, named how
    curve = {"position": [1, 2], "running_accuracy": [0.5, 0.75]}
    runs = [record(seed=0, curve=curve), record(seed=2000, accuracy=0.91, curve=curve),
            record(model="sledge-light", accuracy=0.8, device="cuda", curve=curve),
            record(seed=4000, lam=0.5, curve=curve),   # another configuration: not counted
            record(model="tlp", curve=curve),           # not a SLeDGe model
            record(dataset="GSAD", ratio=0.001)]        # counted, but no curve recorded
    paths = current_plots([("tag", run) for run in runs], tmp_path)
    assert paths == {("Shuttle", 0.01): tmp_path / "current_Shuttle_0.01.png"}
    assert set(drawn[paths["Shuttle", 0.01]]) == {
        "SLeDGe seed 0 (0.9000)", "SLeDGe seed 2000 (0.9100)", "SLeDGe-L seed 0 † (0.8000)"}


def test_targets_table_counts_each_preset_against_its_own_target():
    runs = [record(seed=seed, accuracy=0.94) for seed in (0, 2000, 4000)]
    runs += [record(preset="package", accuracy=0.91),                 # met: 0.93 - 0.03
             record(model="sledge-light", preset="package", accuracy=0.81),  # missed
             record(dataset="GSAD", accuracy=0.7, device="cuda")]         # no target
    text = targets_table([("tag", run) for run in runs],
                         {("sledge", "Shuttle", 0.01): 0.93,
                          ("sledge-light", "Shuttle", 0.01): 0.85})
    assert ("| Shuttle 1 % | 0.9400 (>= 0.9300: met) | 0.9100 n=1 (>= 0.9000: met) | – "
            "| 0.8100 n=1 (>= 0.8200: missed) |") in text
    assert "| GSAD 1 % | 0.7000 n=1 † | – | – | – |" in text
    assert "- SLeDGe-L on Shuttle at 1 %, paper preset" in text
    assert "- SLeDGe on Shuttle at 1 %, package preset" not in text


def test_readme_table_sets_each_preset_beside_the_paper():
    runs = [record(seed=seed, accuracy=acc) for seed, acc in ((0, 0.9), (2000, 0.95),
                                                              (4000, 0.92))]
    runs += [record(preset="package", accuracy=0.91, device="cuda"),
             record(model="sledge-light", dataset="GSAD", ratio=0.001, accuracy=0.3)]
    text = readme_table([("tag", run) for run in runs],
                        {("sledge", "Shuttle", 0.01): 0.937,
                         ("sledge-light", "GSAD", 0.001): 0.3031},
                        {("sledge", "Shuttle", 0.01): 0.0132,
                         ("sledge-light", "GSAD", 0.001): 0.0534})
    lines = text.splitlines()
    assert lines[0] == ("| stream, labels | SLeDGe, paper preset | SLeDGe, package preset "
                        "| SLeDGe, paper | SLeDGe-L, paper preset | SLeDGe-L, package preset "
                        "| SLeDGe-L, paper |")
    assert lines[1] == "|---|---|---|---|---|---|---|"
    assert len(lines) == 2 + len(DATASETS_SHOWN) * 2
    assert ("| Shuttle 1 % | 0.9233 ± 0.0252 | 0.9100 n=1 † | 0.9370 ± 0.0132 | – | – | – |"
            in lines)
    assert "| GSAD 0.1 % | – | – | – | 0.3000 n=1 | – | 0.3031 ± 0.0534 |" in lines
    assert "| MNIST 1 % | – | – | – | – | – | – |" in lines


def test_a_mean_equal_to_its_target_at_four_places_meets_it():
    # 0.84996 shows as 0.8500; 0.5247 - 0.03 is 0.49470000000000003 in floats
    runs = [record(accuracy=0.93), record(preset="package", accuracy=0.9),
            record(model="sledge-light", accuracy=0.84996),
            record(dataset="GSAD", preset="package", accuracy=0.4947)]
    text = targets_table([("tag", run) for run in runs],
                         {("sledge", "Shuttle", 0.01): 0.93,
                          ("sledge-light", "Shuttle", 0.01): 0.85,
                          ("sledge", "GSAD", 0.01): 0.5247})
    assert ("| Shuttle 1 % | 0.9300 n=1 (>= 0.9300: met) | 0.9000 n=1 (>= 0.9000: met) "
            "| 0.8500 n=1 (>= 0.8500: met) | – |") in text
    assert "| GSAD 1 % | – | 0.4947 n=1 (>= 0.4947: met) | – | – |" in text


def test_memory_study_counts_each_run_under_the_one_entry_it_changed():
    runs = [record(seed=0, accuracy=0.90), record(seed=2000, accuracy=0.94),
            record(seed=4000, accuracy=0.98),
            record(seed=0, accuracy=0.80, labeled_size=20),
            record(seed=2000, accuracy=0.70, labeled_size=20),   # L = 20 at U = 900
            record(seed=0, accuracy=0.50, labeled_size=20, unlabeled_size=180),  # both cut
            record(seed=0, accuracy=0.93, alpha=0.95, beta=0.95),
            record(seed=0, accuracy=0.10, alpha=0.95, beta=0.05)]  # neither column
    text = memory_study_tables([("tag", run) for run in runs],
                               {"Shuttle": (0.7707, 0.9370, 0.9439)},
                               {"Shuttle": (0.9415, 0.9372, 0.9403)})
    # larger L on seeds 0 and 2000 only: (0.92 - 0.75) / 0.75 = +22.67 %; the paper's
    # (0.9370 - 0.7707) / 0.7707 = +21.58 %
    assert ("| Shuttle | 0.7500 ± 0.0707 n=2 (0.7707) | 0.9400 ± 0.0400 (0.9370) | – "
            "| +22.67 % n=2 (+21.58 %) | – | fc-v1 |") in text
    assert "| Shuttle | – | 0.9300 n=1 (0.9372) | 0.9400 ± 0.0400 (0.9403) | fc-v1 |" in text
    assert "| GSAD | – | – | – | – | – | – |" in text
    assert "- U = 180 on Shuttle: `-- --unlabeled-size 180`" in text
    assert "- alpha = beta = 0.05 on Shuttle: `-- --alpha 0.05 --beta 0.05`" in text
    assert "- L = 20 on Shuttle" not in text
    assert "- L = 20 on GSAD: `-- --labeled-size 20 --unlabeled-size 900`" in text
    assert "- alpha = beta = 0.95 on GSAD: `-- --alpha 0.95 --beta 0.95`" in text
    assert "adaptive on GSAD" not in text   # today's cell: the summary's own list has it


@pytest.mark.parametrize("dataset", DATASETS_SHOWN)
def test_a_run_with_the_listed_options_counts_in_its_memory_study_column(dataset):
    # `--labeled-size 20` alone would leave U = 1000 - 20 = 980: not the paper's L = 20
    info = DATASETS[dataset]
    for variant in (*MEMORY_SIZES.values(), *COEFFICIENTS.values()):
        config = resolve_config(dataset, STUDY_RATIO, "sledge", variant, None,
                                num_classes=info.paper_classes)
        run = {**record(dataset=dataset, ratio=STUDY_RATIO),
               "config": resolve_stream_entries(config, "sledge", info.value_range)}
        assert matches_current(run, {**current_config("sledge", dataset, STUDY_RATIO),
                                     **variant})


def _dated(tag, host, finished, seeds=(0, 2000, 4000), **changes):
    """``(tag, record)`` of SLeDGe on Shuttle at 1 % per seed on ``host``; accuracy
    0.8 + seed / 10^5 (+ ``accuracy``), finished at ``finished``."""
    shift = changes.pop("accuracy", 0.0)
    return [(tag, {**record(seed=seed, accuracy=round(0.8 + seed / 1e5 + shift, 4), host=host,
                            **changes), "finished_at": finished}) for seed in seeds]


def test_a_study_row_compares_its_columns_on_one_host():
    """Every column ran on fc-a; today's configuration was rerun later on fc-b (0.02
    higher). Picking each cell's newest runs (as the methods table does) would compare
    L = 20 on fc-a with L = 100 on fc-b; the row takes fc-a for all three."""
    runs = (_dated("old", "fc-a", "2026-12-01T10:00:00", labeled_size=20, accuracy=-0.1)
            + _dated("old", "fc-a", "2026-12-01T10:00:00")
            + _dated("old", "fc-a", "2026-12-01T10:00:00", unlabeled_size=180, accuracy=-0.05)
            + _dated("new", "fc-b", "2026-12-05T10:00:00", accuracy=0.02))
    # the cell alone: the newest runs, on fc-b (0.82, 0.84, 0.86)
    assert [r["accuracy"] for r in select_cells(runs)["sledge", "Shuttle", 0.01]] == [
        0.82, 0.84, 0.86]
    text = memory_study_tables(runs, {}, {})
    # on fc-a: L = 20's mean 0.72 against 0.82, +13.89 % (against fc-b's 0.84, the
    # mixed gain, +16.67 %); U = 180's 0.77 against 0.82, +6.49 % (mixed: +9.09 %)
    assert ("| Shuttle | 0.7200 ± 0.0200 | 0.8200 ± 0.0200 | 0.7700 ± 0.0200 | +13.89 % | "
            "+6.49 % | fc-a |") in text
    # the coefficient table's adaptive column alone has runs: its newest, on fc-b
    assert "| Shuttle | – | – | 0.8400 ± 0.0200 | fc-b |" in text


def test_a_row_no_single_host_could_fill_is_marked_mixed_with_each_columns_hosts():
    runs = (_dated("small", "fc-a", "2026-12-01T10:00:00", labeled_size=20, accuracy=-0.1)
            + _dated("today", "fc-b", "2026-12-05T10:00:00", seeds=(0,))
            + _dated("today", "fc-c", "2026-12-05T10:00:00", seeds=(2000, 4000)))
    columns = [matching_runs(runs, variant=variant).get(("sledge", "Shuttle", 0.01), [])
               for variant in MEMORY_SIZES.values()]
    chosen, host = one_host_row(columns)
    assert host == "mixed: fc-a / fc-b+fc-c / –"
    assert [[r["accuracy"] for r in column] for column in chosen] == [
        [0.7, 0.72, 0.74], [0.8, 0.82, 0.84], []]
    assert "| Shuttle | 0.7200 ± 0.0200 | 0.8200 ± 0.0200 | – | +13.89 % | – | " \
        "mixed: fc-a / fc-b+fc-c / – |" in memory_study_tables(runs, {}, {})


def test_the_host_of_a_row_has_the_most_seeds_then_the_newest_runs():
    both = (_dated("a", "fc-a", "2026-12-01T10:00:00", seeds=(0,), labeled_size=20)
            + _dated("a", "fc-a", "2026-12-01T10:00:00", seeds=(0,))
            + _dated("b", "fc-b", "2026-12-02T10:00:00", seeds=(0,), labeled_size=20)
            + _dated("b", "fc-b", "2026-12-02T10:00:00", seeds=(0,)))

    def row(runs):
        return one_host_row([matching_runs(runs, variant=variant).get(
            ("sledge", "Shuttle", 0.01), []) for variant in MEMORY_SIZES.values()])[1]
    assert row(both) == "fc-b"                       # as many seeds: the newer
    more = _dated("a", "fc-a", "2026-11-01T10:00:00", seeds=(2000,))
    assert row(both + more) == "fc-a"                # more seeds over the row
    # a record without a machine entry never pairs: its host is unknown
    unknown = [(tag, {key: value for key, value in r.items() if key != "machine"})
               for tag, r in both[:2]]
    assert row(unknown) == "mixed: unknown / unknown / –"
    assert one_host_row([[], []]) == ([[], []], "–")
    assert one_host_row([both[2:3], []])[1] == "fc-b"


def test_the_ablation_table_takes_each_row_from_one_host_the_methods_table_each_cell():
    # +M ran on fc-a only; SLeDGe on fc-a and, newer, on fc-b
    runs = (_dated("old", "fc-a", "2026-12-01T10:00:00")
            + _dated("old", "fc-a", "2026-12-01T10:00:00", model="memory", accuracy=-0.1)
            + _dated("new", "fc-b", "2026-12-05T10:00:00", accuracy=0.02))
    text = summary_tables(runs, {}, {})
    methods, ablations = text.split("Ablations")[0], text.split("Ablations")[1].split(
        "Seconds")[0]
    assert "| Shuttle 1 % | – | – | – | 0.8400 ± 0.0200 | – |" in methods
    assert ("| Shuttle 1 % | – | 0.7200 ± 0.0200 | – | – | 0.8200 ± 0.0200 | fc-a |"
            in ablations)
    assert "| MNIST 1 % | – | – | – | – | – | – |" in ablations
