"""The knee search's view: searched knee, bracket and cost from hand-made rows, beside the grid knee.

The knee search (sweeps/knee.py) stores ordinary rows under ``<exp>_knee`` at
the scales it tried. These tests write such rows with known success and
throughput and check what the dashboard derives from the rows alone, what it
takes from the optional ``_knee/<experiment>.json`` summary, and that the
search's rows never leak into the grid experiment's views.
"""

import json
import math

import pytest

from simcore.usable import ABOVE_SEARCH_RANGE as STATUS_ABOVE, BELOW_SEARCH_RANGE as STATUS_BELOW, FOUND as STATUS_FOUND
from dashboards.knee import fine_grid_simulations, parse_summary, searched_knee, within_resolution
from dashboards.payload import build_payload
from dashboards.points import group_points
from dashboards.snapshot import read_store, store_signature
from store_fixtures import contract_row, write_store_file

CURVE = {"provider": "s3", "num_tables": 1, "fast_append_ratio": 0.9}


def vo(vo_success, throughput):
    # Overall success stays high: only the VO rate decides, as the mix has VO.
    return {"success_rate": 0.99, "vo_success_rate": vo_success, "throughput_cps": throughput,
            "vo_commit_latency_p99_ms": 12_000.0}


# Per scale: (seed 1 metrics, seed 2 metrics). Means: 44 ms fails (VO 94.5%, 8.0 c/s),
# 46 ms passes (VO 96.5%, 7.8 c/s): the knee is 46 ms, bracketed by 44 ms.
SEARCHED = {
    20.0: (vo(0.20, 9.0), vo(0.30, 9.2)),
    40.0: (vo(0.90, 8.0), vo(0.92, 8.2)),
    44.0: (vo(0.94, 7.9), vo(0.95, 8.1)),
    46.0: (vo(0.96, 7.7), vo(0.97, 7.9)),
    100.0: (vo(1.0, 4.0), vo(1.0, 4.0)),
    5000.0: (vo(1.0, 0.2), vo(1.0, 0.2)),
}


def knee_rows(curve=SEARCHED, experiment="exp4c_knee", **fields):
    return [contract_row(experiment, {**CURVE, **fields, "inter_arrival_scale_ms": scale}, seed, metrics)
            for scale, per_seed in curve.items() for seed, metrics in enumerate(per_seed, start=1)]


def grid_rows(**fields):
    # The exp4c grid of the same curve: passes from 50 ms (7.5 c/s), fails at 20 ms.
    curve = {20.0: vo(0.25, 9.1), 50.0: vo(0.97, 7.5), 100.0: vo(1.0, 4.0), 200.0: vo(1.0, 2.0),
             500.0: vo(1.0, 0.8), 1000.0: vo(1.0, 0.4), 2000.0: vo(1.0, 0.2), 5000.0: vo(1.0, 0.08)}
    return [contract_row("exp4c", {**CURVE, **fields, "inter_arrival_scale_ms": scale}, seed, metrics)
            for scale, metrics in curve.items() for seed in (1, 2)]


def test_the_searched_knee_and_its_bracket_from_rows():
    knee = searched_knee(group_points(knee_rows()))
    assert knee.status == STATUS_FOUND
    assert knee.knee.scale_ms == 46.0 and knee.usable_cps == pytest.approx(7.8)
    assert knee.failing.scale_ms == 44.0
    assert knee.bracket_cps == (pytest.approx(7.8), pytest.approx(8.0))
    assert knee.bracket_scale_ms == (44.0, 46.0)
    assert knee.width == pytest.approx(0.2 / 7.8)
    assert knee.offered_width == pytest.approx(46 / 44 - 1)
    assert (knee.knee_throughput.low, knee.knee_throughput.high, knee.knee_throughput.n) == (7.7, 7.9, 2)
    assert knee.n_simulations == 12 and knee.n_scales == 6 and knee.seeds == (1, 2)


def test_within_resolution_needs_both_rate_and_throughput_within_2_percent():
    near = dict(SEARCHED)
    del near[44.0]
    near[45.2] = (vo(0.94, 7.85), vo(0.95, 7.95))  # rate 46 / 45.2 = +1.8%, throughput 7.9 / 7.8 = +1.3%
    assert within_resolution(searched_knee(group_points(knee_rows(near))))
    near[45.2] = (vo(0.94, 8.0), vo(0.95, 8.0))  # throughput +2.6%: not yet
    assert not within_resolution(searched_knee(group_points(knee_rows(near))))
    # The original bracket is 4.5% wide in rate.
    assert not within_resolution(searched_knee(group_points(knee_rows())))
    assert within_resolution(searched_knee(group_points(knee_rows())), resolution=0.05)


def test_the_bracket_takes_the_nearest_failing_point_not_the_heaviest():
    # 40 ms and 20 ms fail too, but 44 ms is the nearest heavier load to the knee.
    points = group_points(knee_rows())
    assert searched_knee(list(reversed(points))).failing.scale_ms == 44.0


def test_a_curve_that_passes_everywhere_is_above_the_search_range():
    curve = {scale: per_seed for scale, per_seed in SEARCHED.items() if scale >= 46.0}
    knee = searched_knee(group_points(knee_rows(curve)))
    assert knee.status == STATUS_ABOVE
    assert knee.knee.scale_ms == 46.0 and knee.failing is None and knee.bracket_cps is None and knee.width is None


def test_a_curve_that_never_passes_is_below_the_search_range():
    curve = {scale: per_seed for scale, per_seed in SEARCHED.items() if scale <= 44.0}
    knee = searched_knee(group_points(knee_rows(curve)))
    assert knee.status == STATUS_BELOW
    assert knee.usable_cps is None and knee.knee is None and knee.n_simulations == 6


def test_a_grid_as_fine_as_the_search_target():
    # 2% steps from 20 to 5000 ms: ceil(ln(250) / ln(1.02)) = 279 steps, 280 points, x 3 seeds.
    assert math.ceil(math.log(250) / math.log(1.02)) == 279
    assert fine_grid_simulations(20, 5000, 3) == 840
    assert fine_grid_simulations(100, 100, 2) == 2
    assert fine_grid_simulations(100, 102, 1) == 2  # exactly one 2% step
    with pytest.raises(ValueError, match="low_scale_ms"):
        fine_grid_simulations(0, 5000, 3)
    with pytest.raises(ValueError, match="resolution"):
        fine_grid_simulations(20, 5000, 3, resolution=0)


def test_the_payload_sets_the_searched_knee_beside_the_grid_knee(tmp_path):
    write_store_file(str(tmp_path), "exp4c", grid_rows())
    write_store_file(str(tmp_path), "exp4c_knee", knee_rows())
    payload = build_payload(read_store(str(tmp_path)))
    (search,) = payload["knee_searches"]
    assert (search["experiment"], search["source"], search["source_study"]) == ("exp4c_knee", "exp4c", "exp4c")
    assert search["settings_differ"] == [] and search["span_x"] == {"low_ms": 20.0, "high_ms": 5000.0}
    (curve,) = search["curves"]
    assert (curve["s"], curve["t"], curve["m"], curve["status"]) == ("s3", 1, "0.9", "found")
    assert curve["knee"] == pytest.approx(7.8) and curve["knee_x"] == 46.0
    assert curve["bracket"] == {"knee_cps": pytest.approx(7.8), "failing_cps": pytest.approx(8.0)}
    assert curve["bracket_x"] == {"failing_ms": 44.0, "knee_ms": 46.0}
    assert curve["width"] == pytest.approx(0.02564, rel=1e-3) and curve["within"] is False
    assert curve["sims"] == 12 and curve["fine_grid_sims"] == 280 * 2
    assert curve["grid"]["usable"] == pytest.approx(7.5) and curve["grid"]["knee_x"] == 50.0
    assert curve["grid"]["sims"] == 16 and curve["grid"]["lower_bound"] is False
    assert curve["delta"] == pytest.approx(7.8 / 7.5 - 1, rel=1e-3)
    assert curve["file_status"] is None  # no summary file
    assert search["totals"] == {"curves": 1, "searched_sims": 12, "grid_sims": 16, "grid_curves": 1,
                                "fine_grid_sims": 560, "found": 1, "above_search_range": 0,
                                "below_search_range": 0, "within_resolution": 0}


def test_the_search_rows_do_not_leak_into_the_grid_views(tmp_path):
    write_store_file(str(tmp_path), "exp4c", grid_rows())
    write_store_file(str(tmp_path), "exp4c_knee", knee_rows())
    payload = build_payload(read_store(str(tmp_path)))
    studies = {study["id"]: study for study in payload["studies"]}
    (grid_curve,) = studies["exp4c"]["curves"]
    assert grid_curve["usable"] == pytest.approx(7.5) and grid_curve["n_points"] == 8
    assert studies["exp4c"]["scales"] == [20, 50, 100, 200, 500, 1000, 2000, 5000]
    searched = studies["exp4c_knee"]
    assert searched["searched"] is True and searched["missing"]["count"] == 0
    (searched_curve,) = searched["curves"]
    assert searched_curve["missing_x"] == [] and searched_curve["heavier_missing"] is False
    assert not any("missing" in warning for warning in payload["warnings"])


def test_a_search_with_other_settings_is_still_compared_and_says_so(tmp_path):
    write_store_file(str(tmp_path), "exp4c", grid_rows())
    write_store_file(str(tmp_path), "exp4c_knee", knee_rows(duration_s=1900.0))
    (search,) = build_payload(read_store(str(tmp_path)))["knee_searches"]
    assert search["settings_differ"] == [{"field": "duration_s", "search": 1900.0, "grid": 3600.0}]
    assert search["curves"][0]["grid"]["usable"] == pytest.approx(7.5)


def test_a_search_without_its_grid_experiment_stands_alone(tmp_path):
    write_store_file(str(tmp_path), "exp4c_knee", knee_rows())
    (search,) = build_payload(read_store(str(tmp_path)))["knee_searches"]
    assert search["source_study"] is None and search["curves"][0]["grid"] is None
    assert search["span_x"] == {"low_ms": 20.0, "high_ms": 5000.0}  # the search's own span


def test_the_search_summary_file_is_read_beside_the_rows(tmp_path):
    write_store_file(str(tmp_path), "exp4c", grid_rows())
    write_store_file(str(tmp_path), "exp4c_knee", knee_rows())
    (tmp_path / "_knee").mkdir()
    # As ray_jobs/knee_summary.py writes it: named after the source experiment.
    summary = {"experiment": "exp4c", "knee_experiment": "exp4c_knee", "curves": [
        {"curve_id": "x", "fixed": {**CURVE, "catalog": "storage", "catalog_latency_ms": None},
         "status": "above_search_range", "simulations": 14, "knee_rate_cps": 7.8, "seeds": [1, 2],
         "search_range": {"min_scale_ms": 10.0, "max_scale_ms": 1000.0, "tolerance": 0.05}}]}
    (tmp_path / "_knee" / "exp4c.json").write_text(json.dumps(summary))
    snapshot = read_store(str(tmp_path))
    assert [row["experiment"] for row in snapshot.rows].count("_knee") == 0
    (search,) = build_payload(snapshot)["knee_searches"]
    (curve,) = search["curves"]
    # The page's numbers come from the rows; the summary's own claims are shown beside them.
    assert curve["status"] == "found" and curve["file_status"] == "above_search_range"
    assert curve["file_sims"] == 14 and curve["file_knee"] == pytest.approx(7.8)
    assert search["summary_file"].endswith("exp4c.json") and search["summary_problems"] == []
    # The search's own range and target: 10-1000 ms at 5% is ceil(ln(100) / ln(1.05)) + 1 = 96 points.
    assert search["span_x"] == {"low_ms": 10.0, "high_ms": 1000.0} and search["resolution"] == 0.05
    assert curve["fine_grid_sims"] == 96 * 2


def test_a_broken_summary_file_is_reported_and_the_rows_suffice(tmp_path):
    write_store_file(str(tmp_path), "exp4c_knee", knee_rows())
    (tmp_path / "_knee").mkdir()
    (tmp_path / "_knee" / "exp4c.json").write_text("{not json")
    payload = build_payload(read_store(str(tmp_path)))
    (search,) = payload["knee_searches"]
    assert search["curves"][0]["knee"] == pytest.approx(7.8)
    assert search["summary_problems"] and "could not be read" in search["summary_problems"][0]
    assert any("knee search summary" in warning for warning in payload["warnings"])


def test_parse_summary_reads_the_keys_the_search_writes_and_names_what_it_cannot_use():
    curve = {"provider": "gcp", "num_tables": 10, "fast_append_ratio": 1.0}
    entries, problems = parse_summary({"curves": [
        "junk", {"fixed": curve, "status": "found", "simulations": 20, "knee_rate_cps": 3.5},
        {"fixed": {"provider": "gcp"}, "status": "found"}, {"status": "found"}]})
    assert (entries[("gcp", 10, "1")].simulations, entries[("gcp", 10, "1")].knee_rate_cps) == (20, 3.5)
    assert problems == ["curve 0: not an object", "curve 3: has no 'fixed' object (the curve's config fields)",
                        "curve 2: does not name provider, num_tables and fast_append_ratio"]
    # Only the written keys are read: other spellings (never written by the search) are not guessed at.
    entries, problems = parse_summary({"curves": [{"fixed": curve, "n_simulations": 20, "knee_cps": 3.5}]})
    assert (entries[("gcp", 10, "1")].simulations, entries[("gcp", 10, "1")].knee_rate_cps) == (None, None)
    assert parse_summary([{"fixed": curve}])[1] == ["lists no curves (expected an object with a non-empty 'curves' "
                                                    "list)"]
    assert parse_summary({"curves": "none"})[1] == [
        "lists no curves (expected an object with a non-empty 'curves' list)"]


def test_parse_summary_keeps_each_variant_apart_when_given_the_study_settings():
    # A search over retry_policies lists the same curve once per policy.
    curve = {"provider": "s3", "num_tables": 10, "fast_append_ratio": 1.0, "duration_s": 3600.0}
    content = {"curves": [{"fixed": {**curve, "retry_policy": None}, "status": "found", "knee_rate_cps": 9.8},
                          {"fixed": {**curve, "retry_policy": "backoff"}, "status": "found", "knee_rate_cps": 7.6}]}
    key = ("s3", 10, "1")
    assert parse_summary(content, {"retry_policy": None, "duration_s": 3600})[0][key].knee_rate_cps == 9.8
    assert parse_summary(content, {"retry_policy": "backoff", "duration_s": float("nan")})[0] == {}
    assert parse_summary(content, {"retry_policy": "backoff"})[0][key].knee_rate_cps == 7.6


def test_the_store_signature_notices_a_new_summary(tmp_path):
    write_store_file(str(tmp_path), "exp4c_knee", knee_rows())
    before = store_signature(str(tmp_path))
    (tmp_path / "_knee").mkdir()
    (tmp_path / "_knee" / "exp4c_knee.json").write_text("[]")
    assert store_signature(str(tmp_path)) != before
