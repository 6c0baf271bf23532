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
