"""The knee search's bracket-and-bisect rule, on synthetic curves whose knee is known (no Ray, no simulator)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore.bisection import (ABOVE_SEARCH_RANGE, BELOW_SEARCH_RANGE, FOUND, SEARCHING, MeasuredPoint,
                               SearchRange, SearchRangeError, geometric_midpoint, next_step,
                               same_resolution_grid_points, search_sequentially)

DEFAULT = SearchRange(20.0, 5000.0, 0.02)


def step_curve(knee_scale_ms: float):
    """Passes (success 1.0) at scales above the knee, fails (0.5) at or below it; throughput = offered x success."""
    def measure(scale_ms: float) -> MeasuredPoint:
        success = 1.0 if scale_ms > knee_scale_ms else 0.5
        return MeasuredPoint(scale_ms, success, 1000.0 / scale_ms * success)
    return measure


def smooth_curve(knee_scale_ms: float, width: float = 0.3):
    """Success falls smoothly with load and crosses 0.95 exactly at ``knee_scale_ms``."""
    def success(scale_ms: float) -> float:
        # logistic in log-scale, 0.95 at the knee
        x = math.log(scale_ms / knee_scale_ms) / width + math.log(19.0)
        return 1.0 / (1.0 + math.exp(-x))

    def measure(scale_ms: float) -> MeasuredPoint:
        return MeasuredPoint(scale_ms, success(scale_ms), 1000.0 / scale_ms * success(scale_ms))
    return measure


def dashboard_knee(points):
    """The dashboard's reading, written independently: best passing point, nearest failing point below it."""
    passing = [p for p in points if not math.isnan(p.success) and p.success > 0.95]
    if not passing:
        return None, None
    knee = max(passing, key=lambda p: p.throughput_cps)
    below = [p for p in points if p.scale_ms < knee.scale_ms and not p in passing]
    return knee, (max(below, key=lambda p: p.scale_ms) if below else None)


def test_a_grid_of_the_same_resolution_has_280_points_over_20_to_5000_ms_at_2_percent():
    # ln(250) / ln(1.02) = 278.8: 279 gaps, 280 points
    assert same_resolution_grid_points(DEFAULT) == 280
    assert same_resolution_grid_points(SearchRange(100, 200, 0.1)) == 9  # ln 2 / ln 1.1 = 7.27 -> 8 gaps


def test_the_first_probe_is_the_geometric_middle_of_the_range():
    step = next_step([], DEFAULT)
    assert step.status == SEARCHING and step.next_scale_ms == pytest.approx(math.sqrt(20 * 5000), rel=1e-6)


def test_a_knee_in_the_middle_is_bracketed_to_2_percent_in_9_points():
    step, points = search_sequentially(step_curve(100.0), DEFAULT)
    assert step.status == FOUND and step.within_tolerance
    assert step.failing.scale_ms <= 100.0 < step.knee.scale_ms
    assert step.knee.scale_ms / step.failing.scale_ms <= 1.02
    # log2(ln 250 / ln 1.02) = 8.1: nine halvings of the range, and the ends are never measured
    assert len(points) == 9
    assert all(20.0 < p.scale_ms < 5000.0 for p in points)


@settings(max_examples=200, deadline=None)
@given(knee_scale_ms=st.floats(20.5, 4900.0), tolerance=st.sampled_from([0.005, 0.02, 0.1]))
def test_any_knee_inside_the_range_is_found_within_tolerance(knee_scale_ms, tolerance):
    search_range = SearchRange(20.0, 5000.0, tolerance)
    step, points = search_sequentially(step_curve(knee_scale_ms), search_range)
    assert step.status == FOUND and step.within_tolerance
    assert step.failing.scale_ms <= knee_scale_ms < step.knee.scale_ms
    assert step.rate_ratio <= 1 + tolerance
    # bisection, plus at most one end of the range measured
    halvings = math.ceil(math.log2(math.log(250) / math.log1p(tolerance)))
    assert len(points) <= halvings + 1
    assert len({p.scale_ms for p in points}) == len(points)  # never the same scale twice
    assert dashboard_knee(points) == (step.knee, step.failing)


@settings(max_examples=100, deadline=None)
@given(knee_scale_ms=st.floats(25.0, 4000.0), width=st.floats(0.05, 1.0))
def test_a_smooth_success_curve_is_bracketed_around_its_095_crossing(knee_scale_ms, width):
    step, points = search_sequentially(smooth_curve(knee_scale_ms, width), DEFAULT)
    assert step.status == FOUND and step.within_tolerance
    # the crossing lies inside the final bracket
    assert step.failing.scale_ms <= knee_scale_ms * (1 + 1e-9) and step.knee.scale_ms >= knee_scale_ms * (1 - 1e-9)
    assert step.rate_ratio <= 1.02
    assert dashboard_knee(points) == (step.knee, step.failing)


def test_a_curve_that_passes_everywhere_is_above_the_range_after_measuring_its_fastest_end():
    step, points = search_sequentially(step_curve(1.0), DEFAULT)
    assert step.status == ABOVE_SEARCH_RANGE
    assert step.knee.scale_ms == 20.0 and step.failing is None
    assert points[-1].scale_ms == 20.0  # the end is measured last, only once the bracket reaches it
    assert len(points) == 10
    assert "passes even at the fastest scale" in step.note


def test_a_curve_that_fails_everywhere_is_below_the_range_after_measuring_its_slowest_end():
    step, points = search_sequentially(step_curve(1e6), DEFAULT)
    assert step.status == BELOW_SEARCH_RANGE
    assert step.knee is None and step.failing.scale_ms == 5000.0
    assert points[-1].scale_ms == 5000.0 and len(points) == 10
    assert "fails even at the slowest scale" in step.note


def test_a_knee_just_inside_an_end_is_found_next_to_that_end():
    step, points = search_sequentially(step_curve(20.1), DEFAULT)  # 20 ms fails, 20.4 passes
    assert step.status == FOUND and step.failing.scale_ms == 20.0 and step.rate_ratio <= 1.02
    step, points = search_sequentially(step_curve(4950.0), DEFAULT)
    assert step.status == FOUND and step.knee.scale_ms == 5000.0 and step.rate_ratio <= 1.02


def test_nan_success_counts_as_failing():
    # e.g. a VO mix in which no VO transaction finished inside the window
    nan_point = MeasuredPoint(100.0, float("nan"), 9.0)
    assert not nan_point.passes
    step = next_step([nan_point, MeasuredPoint(101.0, 0.99, 8.9)], DEFAULT)
    assert step.status == FOUND and step.failing == nan_point


def test_noisy_non_monotone_points_still_end_with_the_dashboards_knee_and_bracket():
    # Deterministic "noise": near the knee, success flips on a pseudo-random pattern of the scale.
    def measure(scale_ms: float) -> MeasuredPoint:
        base = 1.0 if scale_ms > 150.0 else 0.5
        if 130.0 < scale_ms < 170.0:
            base = 0.97 if int(scale_ms * 1000) % 3 else 0.90
        return MeasuredPoint(scale_ms, base, 1000.0 / scale_ms * base)

    step, points = search_sequentially(measure, DEFAULT)
    assert step.status == FOUND
    knee, failing = dashboard_knee(points)
    assert (step.knee, step.failing) == (knee, failing)
    # every point between the failing one and the knee passes: nothing left to narrow below the knee
    assert all(p.passes for p in points if failing.scale_ms < p.scale_ms <= knee.scale_ms)
    assert step.rate_ratio <= 1.02 or not step.within_tolerance


def test_a_passing_point_with_less_throughput_inside_the_bracket_ends_the_search_with_a_note():
    # The knee (highest throughput) sits at 110 ms although 105 ms passes too with less throughput:
    # throughput noise. The gap next to the failing point is narrowed to an eighth of the tolerance,
    # then the search stops and says the bracket is wider than asked.
    points = [MeasuredPoint(100.0, 0.90, 9.0), MeasuredPoint(110.0, 0.97, 9.5), MeasuredPoint(105.0, 0.96, 9.1)]
    probes = []
    for _ in range(20):
        step = next_step(points, DEFAULT)
        if step.done:
            break
        probes.append(step.next_scale_ms)
        points.append(MeasuredPoint(step.next_scale_ms, 0.96, 9.2))  # passes, below the knee's throughput
    assert step.status == FOUND and not step.within_tolerance and "noise" in step.note
    assert step.knee.scale_ms == 110.0 and step.failing.scale_ms == 100.0
    assert all(100.0 < s < 105.0 for s in probes)
    assert min(p.scale_ms for p in points if p.scale_ms > 100.0) / 100.0 <= 1 + 0.02 / 8


def test_the_failing_points_throughput_must_also_be_within_tolerance_of_the_knees():
    # A bracket 1% wide in rate, but the failing point commits 5% more: keep bisecting.
    points = [MeasuredPoint(100.0, 0.94, 10.5), MeasuredPoint(101.0, 0.96, 10.0)]
    step = next_step(points, DEFAULT)
    assert step.status == SEARCHING and 100.0 < step.next_scale_ms < 101.0
    # The failing point committing *less* than the knee does not hold the search up.
    points = [MeasuredPoint(100.0, 0.60, 8.0), MeasuredPoint(101.0, 0.96, 10.0)]
    assert next_step(points, DEFAULT).status == FOUND


def test_probes_in_flight_split_the_bracket_further_and_then_wait():
    first = next_step([], DEFAULT).next_scale_ms  # 316.228
    second = next_step([], DEFAULT, pending_ms=[first]).next_scale_ms
    third = next_step([], DEFAULT, pending_ms=[first, second]).next_scale_ms
    # the quarter points of the range in log-scale
    assert {round(second, 2), round(third, 2)} == {round(geometric_midpoint(20, first), 2),
                                                   round(geometric_midpoint(first, 5000), 2)}
    # an end of the range already being measured: nothing else to do until it returns
    near_end = [MeasuredPoint(20.2, 0.99, 49.0)]
    assert next_step(near_end, DEFAULT).next_scale_ms == 20.0
    waiting = next_step(near_end, DEFAULT, pending_ms=[20.0])
    assert waiting.status == SEARCHING and waiting.next_scale_ms is None


def test_two_points_at_one_scale_are_refused():
    with pytest.raises(ValueError, match="two points share a scale"):
        next_step([MeasuredPoint(100.0, 1.0, 1.0), MeasuredPoint(100.0, 0.5, 1.0)], DEFAULT)


def test_probe_scales_are_rounded_to_six_significant_digits():
    assert geometric_midpoint(20.0, 5000.0) == 316.228
    assert geometric_midpoint(1.0, 2.0) == 1.41421


MIN_SCALE_ALLOWED = "a number >= 1 (ms): arrival gaps are floored at 1 ms, so a smaller scale offers no more load"


def test_the_search_range_starts_where_the_workload_floors_arrival_gaps():
    from simcore.bisection import MIN_SCALE_MS
    from simcore.workload import ARRIVAL_FLOOR_MS

    assert MIN_SCALE_MS == ARRIVAL_FLOOR_MS


@pytest.mark.parametrize("values, field, allowed", [
    ((0.0, 5000.0, 0.02), "min_scale_ms", MIN_SCALE_ALLOWED),
    ((1e-308, 5000.0, 0.02), "min_scale_ms", MIN_SCALE_ALLOWED),  # probes that offer no more load, slowly
    ((100.0, 101.0, 0.02), "max_scale_ms", "a number > min_scale_ms x (1 + tolerance) = 102 (ms)"),
    ((20.0, 5000.0, 0.0), "tolerance", "a relative width between 0.001 and 1 (0.02 = 2%)"),
    ((20.0, 5000.0, float("nan")), "tolerance", "a finite number"),
    ((20.0, "5000", 0.02), "max_scale_ms", "a finite number"),
    ((20.0, 1e308, 0.02), "max_scale_ms", "a number <= 1e+09 (ms)"),  # 20 x 1e308 would overflow the midpoint
])
def test_a_bad_search_range_names_the_field_the_value_and_what_is_allowed(values, field, allowed):
    with pytest.raises(SearchRangeError) as caught:
        SearchRange(*values)
    assert caught.value.field == field and caught.value.allowed == allowed
    assert str(caught.value).startswith(f"{field}: ")
