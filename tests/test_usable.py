"""The one definition of "usable", and every consumer reading it the same way."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simcore import SimConfig, usable_throughput
from simcore.bisection import SearchRange, next_step
from simcore.usable import (ABOVE_SEARCH_RANGE, BELOW_SEARCH_RANGE, FOUND, USABLE_SUCCESS_THRESHOLD, MeasuredPoint,
                            curve_status, failing_neighbour, find_knee, passes, success_metric)

NAN = float("nan")


@pytest.mark.parametrize("fast, merge, expected", [
    (1.0, 0.0, "success_rate"),
    (0.9, 0.0, "vo_success_rate"),
    (0.5, 0.0, "vo_success_rate"),
    (0.7, 0.3, "success_rate"),      # FastAppend + MergeAppend: no overwrite to read
    (0.6, 0.3, "vo_success_rate"),   # a 10% VO share remains
    (0.0, 1.0, "success_rate"),
])
def test_the_success_rate_that_counts_follows_the_validated_overwrite_share(fast, merge, expected):
    config = SimConfig(fast_append_ratio=fast, merge_append_ratio=merge)
    assert success_metric(config) == expected
    assert success_metric({"fast_append_ratio": fast, "merge_append_ratio": merge}) == expected
    assert success_metric(config.to_dict()) == expected


def test_the_threshold_is_strict_and_a_missing_rate_fails():
    assert USABLE_SUCCESS_THRESHOLD == 0.95
    assert not passes(0.95)
    assert passes(0.9500001)
    assert not passes(NAN)
    assert not passes(None)


def test_ties_break_on_success_then_on_the_lighter_load():
    heavy = MeasuredPoint(50, 0.97, 10.0)
    light = MeasuredPoint(100, 0.97, 10.0)
    surer = MeasuredPoint(70, 0.99, 10.0)
    assert find_knee([heavy, light]) is light
    assert find_knee([light, heavy]) is light
    assert find_knee([heavy, light, surer]) is surer


def test_bracket_and_status_of_a_curve():
    points = [MeasuredPoint(20, 0.40, 30.0), MeasuredPoint(40, 0.90, 22.0), MeasuredPoint(80, 0.99, 12.0),
              MeasuredPoint(160, 1.0, 6.0)]
    knee = find_knee(points)
    assert knee.scale_ms == 80
    assert failing_neighbour(points, knee).scale_ms == 40
    assert curve_status(knee, failing_neighbour(points, knee)) == FOUND
    only_passing = points[2:]
    assert curve_status(find_knee(only_passing), failing_neighbour(only_passing, find_knee(only_passing))) \
        == ABOVE_SEARCH_RANGE
    assert curve_status(find_knee(points[:2]), None) == BELOW_SEARCH_RANGE


@given(st.lists(st.tuples(st.one_of(st.floats(0, 1), st.just(NAN)),
                          st.one_of(st.floats(0, 100, allow_nan=False), st.just(NAN))), max_size=12))
def test_usable_throughput_is_the_knees_throughput(pairs):
    points = [MeasuredPoint(float(i + 1), success, throughput) for i, (success, throughput) in enumerate(pairs)]
    knee = find_knee(points)
    assert usable_throughput(pairs) == (knee.throughput_cps if knee else None)


def test_the_search_reads_the_same_knee_as_the_rule():
    points = [MeasuredPoint(20, 0.40, 30.0), MeasuredPoint(40, 0.90, 22.0), MeasuredPoint(41, 0.96, 21.9)]
    step = next_step(points, SearchRange(20, 5000, 0.05))
    assert step.status == FOUND
    assert step.knee == find_knee(points)
    assert step.failing == failing_neighbour(points, step.knee)
    assert math.isclose(step.knee.throughput_cps, usable_throughput([(p.success, p.throughput_cps) for p in points]))


def test_every_consumer_reads_the_same_knee_of_a_fast_append_and_merge_append_mix(tmp_path):
    """FA 0.7 + MA 0.3 has no overwrite: every consumer must read the overall success rate.

    The rows are made so the two possible readings disagree: the overall
    success passes at 100 ms, while a stray VO column (as a mix with
    overwrites would have) fails there. The store is written by the real
    writer and read back by the dashboard and by the knee search.
    """
    from dashboards.frontier import curve_frontier
    from dashboards.points import group_points
    from dashboards.snapshot import read_store
    from ray_jobs.grid import Grid
    from ray_jobs.knee_curves import complete_points, curves_from_grid, evidence_from_rows
    from ray_jobs.store import ResultsStore
    from store_fixtures import contract_row, write_store_file

    mix = {"provider": "s3", "num_tables": 1, "fast_append_ratio": 0.7, "merge_append_ratio": 0.3}
    curve = {50: (0.90, 9.0, 0.10), 100: (0.97, 6.0, 0.50), 200: (1.0, 3.0, 1.0)}
    rows = [contract_row("mix", {**mix, "inter_arrival_scale_ms": float(scale)}, seed,
                         {"success_rate": success, "throughput_cps": throughput, "vo_success_rate": vo})
            for scale, (success, throughput, vo) in curve.items() for seed in (1, 2)]
    write_store_file(str(tmp_path), "mix", rows)

    config = SimConfig(**mix)
    assert success_metric(config) == "success_rate"

    # The dashboard's frontier.
    frontier = curve_frontier(group_points(read_store(str(tmp_path)).rows))
    assert frontier.success_metric == "success_rate"
    assert frontier.usable_cps == 6.0 and frontier.knee.scale_ms == 100

    # The knee search's reading of the same rows.
    grid = Grid("mix", swept={"inter_arrival_scale_ms": [50.0, 100.0, 200.0]}, fixed=mix)
    (search_curve,) = curves_from_grid(grid)
    assert search_curve.success_metric == "success_rate"
    evidence = evidence_from_rows(ResultsStore(str(tmp_path)).scan(["mix"]).table, [search_curve])
    points = complete_points(search_curve, evidence[search_curve.curve_id], seeds=(1, 2))
    step = next_step(points, SearchRange(50, 200, 0.5))
    assert step.knee.scale_ms == 100 and step.knee.throughput_cps == 6.0
    assert step.failing.scale_ms == 50

    # simcore's helper over the same pairs.
    assert usable_throughput([(success, throughput) for success, throughput, _ in curve.values()]) == 6.0
