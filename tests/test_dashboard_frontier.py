"""Usable throughput and knees on hand-made stores with known answers.

Each test writes a small Parquet store that follows the store contract,
reads it back through the dashboard's reader and checks the frontier, the
knee and the seed spread that the page would show.
"""

import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dashboards.frontier import curve_frontier, find_knee
from dashboards.payload import build_payload
from dashboards.points import group_points
from dashboards.snapshot import read_store
from dashboards.studies import group_studies
from store_fixtures import contract_row, write_store_file

NAN = float("nan")
SCALES_MS = (20, 50, 100, 200, 500, 1000)


def config(scale_ms, provider="s3", num_tables=1, fast_append_ratio=1.0, **extra):
    return {"provider": provider, "num_tables": num_tables, "fast_append_ratio": fast_append_ratio,
            "inter_arrival_scale_ms": float(scale_ms), **extra}


def rows_for(curve, seed=1, experiment="exp4c", **config_fields):
    """Rows of one curve: {scale_ms: metrics dict} -> contract rows for ``seed``."""
    return [contract_row(experiment, config(scale, **config_fields), seed, metrics)
            for scale, metrics in curve.items()]


def ok(success, throughput, **more):
    return {"success_rate": success, "throughput_cps": throughput, **more}


def store_with(tmp_path, rows, experiment="exp4c"):
    write_store_file(str(tmp_path), experiment, rows)
    return read_store(str(tmp_path))


def only_curve(snapshot):
    (study,) = group_studies(group_points(snapshot.rows))
    (curve,) = study.curves
    return curve_frontier(curve.points), curve


def test_usable_throughput_is_the_highest_throughput_above_95_percent(tmp_path):
    curve = {20: ok(0.40, 9.0), 50: ok(0.90, 8.0), 100: ok(0.97, 6.5), 200: ok(0.999, 4.0), 1000: ok(1.0, 0.9)}
    frontier, _ = only_curve(store_with(tmp_path, rows_for(curve)))
    assert frontier.usable_cps == pytest.approx(6.5)
    assert frontier.knee.scale_ms == 100
    assert frontier.success_metric == "success_rate"


def test_the_threshold_is_strict(tmp_path):
    curve = {50: ok(0.95, 8.0), 100: ok(0.9501, 6.0), 200: ok(1.0, 3.0)}
    frontier, _ = only_curve(store_with(tmp_path, rows_for(curve)))
    assert frontier.usable_cps == pytest.approx(6.0)


def test_mixes_with_validated_overwrites_read_vo_success(tmp_path):
    # Overall success is high everywhere, but VO success only passes at 500 ms.
    curve = {
        100: ok(0.99, 8.0, vo_success_rate=0.60),
        200: ok(0.99, 4.0, vo_success_rate=0.94),
        500: ok(1.0, 1.8, vo_success_rate=0.99),
    }
    frontier, _ = only_curve(store_with(tmp_path, rows_for(curve, fast_append_ratio=0.9)))
    assert frontier.success_metric == "vo_success_rate"
    assert frontier.usable_cps == pytest.approx(1.8)
    assert frontier.knee.scale_ms == 500


def test_no_point_above_95_percent_gives_no_frontier_and_says_so(tmp_path):
    curve = {20: ok(0.10, 3.0), 100: ok(0.50, 2.0), 1000: ok(0.95, 0.9)}
    # Published-protocol rows: the published view compares seed 001 with them only.
    snapshot = store_with(tmp_path, rows_for(curve, provider="gcp", num_tables=10, protocol="published"))
    frontier, _ = only_curve(snapshot)
    assert frontier.usable_cps is None and frontier.knee is None
    assert frontier.seed_usable_cps == ((1, None),)
    payload = build_payload(snapshot)
    (curve_json,) = payload["studies"][0]["curves"]
    assert curve_json["usable"] is None and curve_json["knee_x"] is None
    gcp_10_fa = [entry for entry in payload["published"]
                 if entry["metric"] == "usable_throughput" and entry["provider"] == "gcp" and entry["t"] == 10
                 and entry["m"] == "1"]
    assert [entry["status"] for entry in gcp_10_fa] == ["no usable point"]


def test_ties_prefer_higher_success_then_lighter_load_whatever_the_order():
    snapshot_rows = rows_for({50: ok(0.96, 5.0), 100: ok(0.99, 5.0), 200: ok(0.99, 5.0), 500: ok(1.0, 2.0)})
    points = group_points(snapshot_rows)
    for _ in range(5):
        random.shuffle(points)
        knee = find_knee(points)
        # 100 and 200 tie on throughput and success: the lighter load (200) wins.
        assert knee.scale_ms == 200
        assert knee.mean("throughput_cps") == 5.0


def test_missing_points_are_skipped_and_flagged(tmp_path):
    # The grid of this study has 20..1000 ms; this curve lacks 20 and 50, and its
    # 100 ms point has no usable success value (NaN in its only seed).
    full = {scale: ok(1.0, 1000.0 / scale) for scale in SCALES_MS}
    partial = {100: ok(NAN, 9.0), 200: ok(0.99, 4.0), 500: ok(1.0, 2.0), 1000: ok(1.0, 1.0)}
    snapshot = store_with(tmp_path, rows_for(full, provider="s3x") + rows_for(partial, provider="s3"))
    (study,) = group_studies(group_points(snapshot.rows))
    assert sorted(study.missing) == [("s3", 1, "1", 20.0), ("s3", 1, "1", 50.0)]
    payload = build_payload(snapshot)
    curves = {curve["s"]: curve for curve in payload["studies"][0]["curves"]}
    assert curves["s3"]["usable"] == pytest.approx(4.0)
    assert curves["s3"]["knee_x"] == 200
    assert curves["s3"]["missing_x"] == [20, 50]
    assert curves["s3"]["heavier_missing"] is True
    assert curves["s3"]["n_points"] == 3
    # s3x passes everywhere: its knee is the heaviest load tried, a lower bound.
    assert curves["s3x"]["usable"] == pytest.approx(50.0)
    assert curves["s3x"]["at_grid_edge"] is True and curves["s3x"]["heavier_missing"] is False
    assert payload["studies"][0]["missing"]["count"] == 2


def test_several_seeds_use_seed_means_and_report_each_seed(tmp_path):
    seed_1 = {100: ok(0.99, 6.0), 200: ok(1.0, 4.0), 500: ok(1.0, 2.0)}
    seed_2 = {100: ok(0.90, 6.4), 200: ok(0.98, 4.2), 500: ok(1.0, 2.1)}
    seed_3 = {100: ok(0.97, 5.6), 200: ok(0.99, 3.8), 500: ok(1.0, 1.9)}
    rows = rows_for(seed_1, seed=1) + rows_for(seed_2, seed=2) + rows_for(seed_3, seed=3)
    frontier, _ = only_curve(store_with(tmp_path, rows))
    # Mean success at 100 ms is 0.9533 > 0.95, so the knee is 100 ms with mean throughput 6.0.
    assert frontier.knee.scale_ms == 100
    assert frontier.usable_cps == pytest.approx(6.0)
    assert frontier.knee_throughput.low == pytest.approx(5.6)
    assert frontier.knee_throughput.high == pytest.approx(6.4)
    assert frontier.knee_throughput.n == 3
    assert frontier.knee_throughput.std == pytest.approx(0.4)
    # Seed by seed, seed 2 fails at 100 ms and its own usable throughput is 4.2.
    assert frontier.seed_usable_cps == ((1, 6.0), (2, 4.2), (3, 5.6))


def test_a_seed_without_a_value_does_not_drag_the_mean(tmp_path):
    rows = rows_for({100: ok(0.99, 6.0)}, seed=1) + rows_for({100: ok(NAN, NAN)}, seed=2)
    frontier, _ = only_curve(store_with(tmp_path, rows))
    assert frontier.usable_cps == pytest.approx(6.0)
    assert frontier.knee_throughput.n == 1
    assert frontier.seed_usable_cps == ((1, 6.0), (2, None))


def test_knee_latencies_are_the_knee_points_in_seconds(tmp_path):
    curve = {
        100: ok(0.99, 7.0, vo_success_rate=0.80, fa_commit_latency_mean_ms=900.0, vo_commit_latency_mean_ms=30000.0),
        200: ok(1.0, 4.0, vo_success_rate=0.97, fa_commit_latency_mean_ms=750.0, vo_commit_latency_mean_ms=8200.0),
    }
    payload = build_payload(store_with(tmp_path, rows_for(curve, num_tables=10, fast_append_ratio=0.9,
                                                          protocol="published")))
    (curve_json,) = payload["studies"][0]["curves"]
    assert curve_json["knee_x"] == 200
    assert curve_json["fa_lat_s"]["mean"] == pytest.approx(0.75)
    assert curve_json["vo_lat_s"]["mean"] == pytest.approx(8.2)
    published = {(entry["metric"], entry["provider"]): entry for entry in payload["published"]
                 if entry["t"] == 10 and entry["m"] == "0.9"}
    assert published[("vo_mean_latency_at_knee", "s3")]["simulated"] == pytest.approx(8.2)
    assert published[("vo_mean_latency_at_knee", "s3")]["published"] == 8.2
    assert published[("usable_throughput", "s3")]["simulated"] == pytest.approx(4.0)


def test_an_empty_curve_is_refused_with_a_named_field():
    with pytest.raises(ValueError, match="points"):
        curve_frontier([])


@given(st.lists(st.tuples(st.sampled_from(SCALES_MS), st.floats(0, 1), st.floats(0, 50)), min_size=1, max_size=6,
                unique_by=lambda item: item[0]))
def test_the_knee_is_the_best_qualifying_point(curve):
    rows = rows_for({scale: ok(success, throughput) for scale, success, throughput in curve})
    knee = find_knee(group_points(rows))
    qualifying = [throughput for _, success, throughput in curve if success > 0.95]
    if not qualifying:
        assert knee is None
    else:
        assert knee.mean("throughput_cps") == max(qualifying)
        assert knee.mean("success_rate") > 0.95
        assert not math.isnan(knee.mean("throughput_cps"))
