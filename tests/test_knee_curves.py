"""Curves of a grid, and stored rows folded back into per-curve evidence (the knee search's resume)."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import pytest

from simcore import SimConfig, simulate
from ray_jobs import Grid
from ray_jobs.knee_curves import (CURVE_KEY_SCALE_MS, Curve, complete_points, curve_id_of, curves_from_grid,
                                  evidence_from_rows, full_seed_points, is_knee_experiment, knee_experiment_name,
                                  measured_point, seed_mean, source_experiment, success_metric)
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
    assert knee_experiment_name("exp4c") == "exp4c_knee" and source_experiment("exp4c_knee") == "exp4c"
    assert is_knee_experiment("exp4c_knee") and not is_knee_experiment("exp4c") and not is_knee_experiment("_knee")
    with pytest.raises(ValueError, match="expected a name ending in '_knee'"):
        source_experiment("exp4c")


def row(success, throughput, vo=float("nan")):
    return {"success_rate": success, "vo_success_rate": vo, "throughput_cps": throughput}


def test_vo_success_counts_where_the_mix_has_vo():
    assert success_metric(SimConfig(fast_append_ratio=1.0)) == "success_rate"
    assert success_metric(SimConfig(fast_append_ratio=0.9)) == "vo_success_rate"
    assert measured_point(10.0, SimConfig(fast_append_ratio=0.9), [row(0.99, 3.0, vo=0.8)]).success == 0.8
    assert measured_point(10.0, SimConfig(fast_append_ratio=1.0), [row(0.99, 3.0, vo=0.8)]).success == 0.99
    assert math.isnan(measured_point(10.0, SimConfig(fast_append_ratio=0.9), [row(0.99, 1.0, vo=None)]).success)


def test_a_point_is_the_seed_mean_over_the_seeds_that_have_a_value():
    point = measured_point(100.0, SimConfig(), [row(0.96, 10.0), row(0.98, 12.0)])
    assert (point.success, point.throughput_cps, point.passes) == (pytest.approx(0.97), 11.0, True)
    # A NaN seed measured nothing (no transaction of the kind): it is left out, not counted as failing.
    point = measured_point(100.0, SimConfig(), [row(0.99, 1.0), row(float("nan"), 1.2), row(0.98, None)])
    assert point.passes and point.success == pytest.approx(0.985) and point.throughput_cps == pytest.approx(1.1)
    # No seed with a value: NaN, which fails.
    assert not measured_point(100.0, SimConfig(), [row(float("nan"), 1.0), row(None, 1.0)]).passes
    assert seed_mean([1, 2, None, float("nan")]) == 1.5 and math.isnan(seed_mean([]))


def test_only_points_with_every_requested_seed_count_and_they_use_every_stored_seed():
    curve = Curve("g", SimConfig(), "all")
    by_scale = {100.0: {1: row(0.9, 1.0), 2: row(1.0, 3.0), 3: row(1.0, 5.0)}, 200.0: {1: row(1.0, 1.0)}}
    points = complete_points(curve, by_scale, seeds=(1, 2))
    assert [(p.scale_ms, p.throughput_cps) for p in points] == [(100.0, 3.0)]  # all three seeds in the mean
    # Without the search's seeds (the dashboard): the points with as many seeds as the best-measured one.
    seeds = {"a": (1, 2), "b": (1,), "c": (2, 3), "d": (1, 2, 3)}
    assert full_seed_points(seeds, seeds.get) == ["d"]
    assert full_seed_points(seeds, seeds.get, seeds=(1, 2)) == ["a", "d"]


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
    (stored,) = [r for r in table.to_pylist()
                 if (r["num_tables"], r["seed"], r["inter_arrival_scale_ms"]) == (1, 2, 50.0)]
    kept = evidence[one_table.curve_id][50.0][2]
    assert {name: kept[name] for name in ("seed", "success_rate", "throughput_cps")} == \
        {name: stored[name] for name in ("seed", "success_rate", "throughput_cps")}
    assert math.isnan(kept["vo_success_rate"])  # FastAppend only: no VO transaction, no VO success rate


def test_no_stored_rows_means_no_evidence():
    grid = Grid("g", swept={"inter_arrival_scale_ms": (100,)}, fixed={"provider": "s3x", **FAST})
    (curve,) = curves_from_grid(grid)
    assert evidence_from_rows(rows_to_table([]), [curve]) == {curve.curve_id: {}}


def test_a_nan_seed_reads_the_same_in_the_search_in_capacity_and_on_the_dashboard(tmp_path):
    """Seeds [0.99, NaN, 0.98]: the seed that saw no VO transaction is left out everywhere, and the point passes.

    The rows go through the real store; the dashboard (frontier and searched
    knee), the knee search (evidence from the store) and capacity's probe read
    them back and must agree on the knee and on its measured values exactly.
    """
    from dashboards.frontier import curve_frontier, measured
    from dashboards.knee import searched_knee
    from dashboards.points import group_points
    from dashboards.snapshot import read_store
    from ray_jobs.search import Probe
    from ray_jobs.store import ResultsStore
    from simcore.bisection import SearchRange, next_step
    from store_fixtures import contract_row, write_store_file

    nan = float("nan")
    mix = {"provider": "s3", "num_tables": 1, "fast_append_ratio": 0.9}
    # VO success of seeds 1-3 and a throughput: 50 ms fails, 100 ms passes on the seeds that have a VO rate.
    curve = {50.0: ((0.90, 0.91, 0.92), 9.0), 100.0: ((0.99, nan, 0.98), 6.0), 200.0: ((1.0, 1.0, 1.0), 3.0)}
    rows = [contract_row("mix_knee", {**mix, "inter_arrival_scale_ms": scale}, seed,
                         {"success_rate": 0.99, "vo_success_rate": vo, "throughput_cps": throughput + seed / 100})
            for scale, (per_seed, throughput) in curve.items() for seed, vo in enumerate(per_seed, start=1)]
    write_store_file(str(tmp_path), "mix_knee", rows)

    points = group_points(read_store(str(tmp_path)).rows)
    frontier, searched = curve_frontier(points), searched_knee(points)

    (search_curve,) = curves_from_grid(Grid("mix", swept={"inter_arrival_scale_ms": [50.0, 100.0, 200.0]}, fixed=mix))
    evidence = evidence_from_rows(ResultsStore(str(tmp_path)).scan(["mix_knee"]).table, [search_curve])
    step = next_step(complete_points(search_curve, evidence[search_curve.curve_id], seeds=(1, 2, 3)),
                     SearchRange(50.0, 200.0, 0.5))

    probe = Probe(100.0, search_curve.config_at(100.0),
                  tuple(row for row in rows if row["inter_arrival_scale_ms"] == 100.0))

    assert frontier.knee.scale_ms == searched.knee.scale_ms == step.knee.scale_ms == 100.0
    assert measured(frontier.knee) == step.knee == probe.point()
    assert step.knee.passes and step.knee.success == pytest.approx(0.985)
    assert frontier.knee.metrics["vo_success_rate"].n == 2  # the dashboard's spread says two seeds had a value
    assert step.failing.scale_ms == searched.failing.scale_ms == 50.0
