"""Curves of a grid, and stored rows folded back into per-curve evidence (the knee search's resume)."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import pytest

from simcore import SimConfig, simulate
from ray_jobs import Grid
from ray_jobs.knee_curves import (CURVE_KEY_SCALE_MS, SeedOutcome, complete_points, curve_id_of, curves_from_grid,
                                  evidence_from_rows, knee_experiment_name, measured_point, seed_outcome,
                                  success_metric)
from ray_jobs.schema import make_row, rows_to_table
from sweeps.catalog import KNEE_GRIDS

FAST = {"catalog": "storage", "runtime_median_ms": 20_000.0, "duration_s": 1200.0}


def test_exp4c_folds_into_90_curves_and_its_knee_quick_subset_into_4():
    curves = curves_from_grid(KNEE_GRIDS["exp4c"])
    assert len(curves) == 90 == len({c.curve_id for c in curves})
    quick = curves_from_grid(KNEE_GRIDS["exp4c"], quick=True)
    assert [c.label for c in quick] == [
        "provider=s3x num_tables=1 fast_append_ratio=1.0", "provider=s3x num_tables=10 fast_append_ratio=1.0",
        "provider=s3 num_tables=1 fast_append_ratio=1.0", "provider=s3 num_tables=10 fast_append_ratio=1.0"]


@pytest.mark.parametrize("experiment, curves", [("exp4a", 24), ("exp4b", 24), ("exp4a_zipf", 24),
                                                ("exp4b_zipf", 24), ("gcs_throttle", 36), ("retry_policies", 90),
                                                ("append_catalog", 108)])
def test_every_knee_experiment_has_one_curve_per_grid_point_without_the_scale(experiment, curves):
    grid = KNEE_GRIDS[experiment]
    assert len(curves_from_grid(grid)) == curves == len(grid.configs()) // len(grid.swept["inter_arrival_scale_ms"])
    assert 2 <= len(curves_from_grid(grid, quick=True)) <= 4


def test_a_curve_is_its_config_with_the_scale_left_free():
    (curve,) = curves_from_grid(Grid("g", swept={"inter_arrival_scale_ms": (50, 500)},
                                     fixed={"provider": "s3", "num_tables": 3}), duration_s=2000)
    assert curve.label == "all" and curve.experiment == "g"
    config = curve.config_at(123.4)
    assert config.inter_arrival_scale_ms == 123.4 and config.num_tables == 3 and config.duration_s == 2000
    # every scale of a curve has the curve's id; another table count is another curve
    assert curve_id_of(config) == curve.curve_id == curve.template.config_hash
    assert curve_id_of(config.replace(num_tables=4)) != curve.curve_id
    assert "inter_arrival_scale_ms" not in curve.fixed_fields() and curve.fixed_fields()["num_tables"] == 3
    assert curve.template.inter_arrival_scale_ms == CURVE_KEY_SCALE_MS
    assert knee_experiment_name("exp4c") == "exp4c_knee"


def test_vo_success_counts_where_the_mix_has_vo():
    assert success_metric(SimConfig(fast_append_ratio=1.0)) == "success_rate"
    assert success_metric(SimConfig(fast_append_ratio=0.9)) == "vo_success_rate"
    outcome = seed_outcome(SimConfig(fast_append_ratio=0.9),
                           {"success_rate": 0.99, "vo_success_rate": 0.8, "throughput_cps": 3.0})
    assert outcome == SeedOutcome(0.8, 3.0)
    assert math.isnan(seed_outcome(SimConfig(fast_append_ratio=0.9), {"vo_success_rate": None,
                                                                     "throughput_cps": 1.0}).success)


def test_a_point_is_the_seed_mean_and_a_nan_seed_fails_it():
    point = measured_point(100.0, [SeedOutcome(0.96, 10.0), SeedOutcome(0.98, 12.0)])
    assert (point.success, point.throughput_cps, point.passes) == (pytest.approx(0.97), 11.0, True)
    assert not measured_point(100.0, [SeedOutcome(0.99, 1.0), SeedOutcome(float("nan"), 1.0)]).passes


def test_only_points_with_every_requested_seed_count_and_they_use_every_stored_seed():
    by_scale = {100.0: {1: SeedOutcome(0.9, 1.0), 2: SeedOutcome(1.0, 3.0), 3: SeedOutcome(1.0, 5.0)},
                200.0: {1: SeedOutcome(1.0, 1.0)}}
    points = complete_points(by_scale, seeds=(1, 2))
    assert [(p.scale_ms, p.throughput_cps) for p in points] == [(100.0, 3.0)]  # all three seeds in the mean


def stored_rows(experiment, configs_and_seeds):
    rows = []
    for config, seeds in configs_and_seeds:
        for metrics in simulate(config, seeds=seeds):
            rows.append(make_row(experiment, config, metrics, package_version="test", git_revision=None,
                                 wall_s=0.1, finished_at=datetime.now(timezone.utc)))
    return rows_to_table(rows)


def test_stored_rows_fold_back_into_evidence_per_curve_scale_and_seed():
    grid = Grid("g", swept={"num_tables": (1, 5), "inter_arrival_scale_ms": (100,)}, fixed={"provider": "s3x", **FAST})
    one_table, five_tables = curves_from_grid(grid)
    other_duration = curves_from_grid(grid, duration_s=1300.0)[0]  # another curve: never mixed in
    table = stored_rows("g_knee", [(one_table.config_at(50.0), [1, 2]), (one_table.config_at(70.7), [2]),
                                   (five_tables.config_at(50.0), [1]), (other_duration.config_at(50.0), [1])])
    evidence = evidence_from_rows(table, [one_table, five_tables])
    assert set(evidence) == {one_table.curve_id, five_tables.curve_id}
    assert {scale: sorted(seeds) for scale, seeds in evidence[one_table.curve_id].items()} == {50.0: [1, 2],
                                                                                             70.7: [2]}
    assert list(evidence[five_tables.curve_id]) == [50.0]
    (row,) = [r for r in table.to_pylist()
              if (r["num_tables"], r["seed"], r["inter_arrival_scale_ms"]) == (1, 2, 50.0)]
    assert evidence[one_table.curve_id][50.0][2] == SeedOutcome(row["success_rate"], row["throughput_cps"])


def test_no_stored_rows_means_no_evidence():
    grid = Grid("g", swept={"inter_arrival_scale_ms": (100,)}, fixed={"provider": "s3x", **FAST})
    (curve,) = curves_from_grid(grid)
    assert evidence_from_rows(rows_to_table([]), [curve]) == {curve.curve_id: {}}
