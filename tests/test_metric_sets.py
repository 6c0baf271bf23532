"""The named metric sets (simcore.metric_sets) and the table-convoy model option."""

import math

import numpy as np
import pytest

from simcore import SimConfig, metric_sets
from simcore.errors import ConfigError
from simcore.metric_sets import Recorded, heatmap_window, summarize, summarize_recorded
from simcore.metrics import summarize as steady_summarize
from simcore.simulate import run_seed
from simcore.workload import FAST_APPEND, VALIDATED_OVERWRITE

SHORT = dict(runtime_median_ms=20_000.0, runtime_min_ms=5_000.0, duration_s=1000.0, protocol="published")


def _recorded(rows):
    """rows: (submit_ms, commit_ms or None for aborted, op, commit_latency_ms)."""
    submit = np.array([r[0] for r in rows], float)
    committed = np.array([r[1] is not None for r in rows])
    commit = np.array([r[1] if r[1] is not None else -1.0 for r in rows], float)
    op = np.array([r[2] for r in rows], np.int8)
    latency = np.array([r[3] if r[1] is not None else np.nan for r in rows], float)
    return Recorded(submit, commit, committed, op, latency)


FA, VO = FAST_APPEND, VALIDATED_OVERWRITE
# Run: first submit 0, last commit 1000 ms -> trim 100 ms at each end: window submits >= 100,
# commits <= 900. Aborted rows carry commit -1 and so pass the commit test, as in the reference.
ROWS = [
    (0.0, 300.0, FA, 10.0),      # submitted before the window: not counted
    (150.0, 400.0, FA, 20.0),    # in the window
    (200.0, 880.0, VO, 60.0),    # in the window
    (300.0, None, VO, None),     # aborted, in the window (not a commit)
    (500.0, 950.0, FA, 30.0),    # commits after the window: not counted
    (600.0, 1000.0, FA, 40.0),   # likewise (the last commit)
]


def test_heatmap_window_counts_the_middle_80_percent():
    window = heatmap_window(_recorded(ROWS))
    assert window.run_s == 1.0
    assert window.window_commits == 2
    assert window.success_rate == pytest.approx(5 / 6)        # every recorded row, no window
    assert window.commit_latency_mean_ms == pytest.approx(40.0)  # (20 + 60) / 2
    assert window.throughput_cps == pytest.approx(2.0)          # 2 commits over the 1 s run
    assert window.window_rate_cps == pytest.approx(2.5)         # ... over the 0.8 s window


def test_each_set_reads_the_same_rows_differently():
    recorded = _recorded(ROWS)
    heatmap = summarize_recorded("heatmap", recorded)
    per_type = summarize_recorded("per-type", recorded)
    seed001 = summarize_recorded("seed001", recorded)
    assert heatmap["vo_success_rate"] == per_type["vo_success_rate"] == 0.5
    # The per-type path averages every committed row; the heatmap path only the window's.
    assert per_type["fa_commit_latency_mean_ms"] == pytest.approx(25.0)
    # Filtered to FA first, the FA run spans 0..1000 ms too: window submits >= 100, commits <= 900.
    assert heatmap["fa_commit_latency_mean_ms"] == pytest.approx(20.0)
    assert seed001["throughput_cps"] == pytest.approx(2.5)
    assert heatmap["throughput_cps"] == pytest.approx(2.0)
    assert per_type["throughput_cps"] == pytest.approx(5.0)    # 5 commits over the 1 s run
    assert {k for k in seed001} == set(metric_sets.KEYS)


def test_empty_types_are_nan_not_errors():
    only_fa = _recorded([row for row in ROWS if row[2] == FA])
    for name in ("heatmap", "per-type", "seed001"):
        row = summarize_recorded(name, only_fa)
        assert math.isnan(row["vo_success_rate"]) and math.isnan(row["vo_commit_latency_mean_ms"])


def test_steady_state_is_simcores_own_summary():
    config = SimConfig(provider="s3", num_tables=5, fast_append_ratio=0.8, inter_arrival_scale_ms=150, **SHORT)
    workload, outcome = run_seed(config, 3)
    full = steady_summarize(config, workload, outcome)
    row = summarize("steady-state", config, workload, outcome)
    assert row == {k: full[k] for k in metric_sets.KEYS if not k.startswith("knee_")} | {
        "knee_success_rate": full["success_rate"], "knee_vo_success_rate": full["vo_success_rate"]}
    # seed001 prints success over every recorded transaction but judges usability on the window.
    seed001 = summarize("seed001", config, workload, outcome)
    assert (seed001["knee_success_rate"], seed001["knee_vo_success_rate"]) == (full["success_rate"],
                                                                             full["vo_success_rate"])
    assert seed001["success_rate"] != full["success_rate"]


def test_seed001_throughput_is_the_heatmap_window_over_its_own_length():
    config = SimConfig(provider="s3x", num_tables=10, inter_arrival_scale_ms=200, **SHORT)
    workload, outcome = run_seed(config, 1)
    heatmap = summarize("heatmap", config, workload, outcome)
    seed001 = summarize("seed001", config, workload, outcome)
    assert seed001["throughput_cps"] == pytest.approx(heatmap["throughput_cps"] / 0.8)
    assert seed001["success_rate"] == heatmap["success_rate"]
    # Over the whole run (warm-up included), success at this light load is still near 1.
    assert 0.95 < seed001["success_rate"] <= 1.0


def test_unknown_metric_set_names_the_field():
    config = SimConfig(**SHORT)
    with pytest.raises(ValueError, match="metric_set"):
        summarize("median", config, *run_seed(config, 1))


def test_table_convoy_is_off_by_default_and_keeps_hashes():
    base = SimConfig(provider="s3", num_tables=10, fast_append_ratio=0.9, inter_arrival_scale_ms=100,
                     protocol="published")
    assert base.vo_convoy is None
    assert SimConfig(provider="s3", num_tables=10, fast_append_ratio=0.9, inter_arrival_scale_ms=100,
                     vo_convoy="catalog", protocol="published") == base
    assert base.config_hash == "f6741f1855404752"  # pinned in test_commit_options too
    assert base.replace(vo_convoy="table").config_hash != base.config_hash
    with pytest.raises(ConfigError) as error:
        SimConfig(vo_convoy="partition")
    assert error.value.field == "vo_convoy"


def test_table_convoy_changes_nothing_with_one_table():
    # With one table, every catalog commit is a commit to that table: the two counts agree.
    config = SimConfig(provider="azure", num_tables=1, fast_append_ratio=0.5, inter_arrival_scale_ms=300, **SHORT)
    _, plain = run_seed(config, 2)
    _, per_table = run_seed(config.replace(vo_convoy="table"), 2)
    np.testing.assert_array_equal(plain.status, per_table.status)
    np.testing.assert_array_equal(plain.manifest_list_reads, per_table.manifest_list_reads)
    np.testing.assert_allclose(plain.end_ms, per_table.end_ms)


def test_table_convoy_shortens_vo_convoys_with_many_tables():
    config = SimConfig(provider="s3", num_tables=20, fast_append_ratio=0.8, inter_arrival_scale_ms=100, **SHORT)
    workload, plain = run_seed(config, 4)
    _, per_table = run_seed(config.replace(vo_convoy="table"), 4)
    vo = workload.op == VALIDATED_OVERWRITE
    assert per_table.manifest_list_reads[vo].sum() < 0.5 * plain.manifest_list_reads[vo].sum()
    fa = workload.op == FAST_APPEND
    # FA transactions pay no convoy: their manifest-list reads count only per-attempt I/O either way.
    assert per_table.manifest_list_reads[fa].max() <= config.retry + 1


CLI_ARGS = ["run", "--provider", "s3", "--catalog", "storage", "--num-tables", "5", "--fast-append-ratio", "0.8",
            "--inter-arrival-scale-ms", "150", "--duration-s", "1900", "--seeds", "1"]


def test_cli_prints_a_named_metric_set(capsys):
    import json

    from commit_sweeps.simcore_command import main
    assert main(CLI_ARGS + ["--metric-set", "seed001", "--vo-convoy", "table", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["metric_set"] == "seed001" and record["vo_convoy"] == "table"
    assert set(metric_sets.KEYS) <= set(record) and "commit_latency_p99_ms" not in record
    assert main(CLI_ARGS + ["--metric-set", "heatmap"]) == 0
    assert "metric set heatmap" in capsys.readouterr().out


@pytest.mark.parametrize("flag, value, field", [("--metric-set", "median", "metric_set"),
                                                ("--vo-convoy", "partition", "vo_convoy")])
def test_cli_rejects_unknown_choices_in_one_line(capsys, flag, value, field):
    from commit_sweeps.simcore_command import main
    assert main(CLI_ARGS + [flag, value]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith(f"error: {field}: ") and repr(value) in err
