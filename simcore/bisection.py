"""Where does one curve stop sustaining its load? Bracket-and-bisect over the inter-arrival scale.

A curve is a config with every field fixed except ``inter_arrival_scale_ms``.
A shorter scale offers more load; past some point the success rate (VO
success where the mix has VO) falls to 95% or below. The curve's knee is the
highest throughput among points whose success stays above 95%, the same
rule as the dashboard (``simcore.usable``). This module decides,
from the points measured so far, which scale to measure next, or that the
knee is known well enough. It is pure: no Ray, no simulator, no files, so
the rule can be tested on synthetic curves and shared by the one search
executor (``ray_jobs.search``: the knee search and ``commit-sweeps capacity``)
and the benchmarks.

The search (see ``next_step``):

- The range [min_scale_ms, max_scale_ms] is the bracket at the start. Its
  ends are *assumed* (the fastest scale fails, the slowest passes) and only
  measured when the search gets within tolerance of one of them: the
  fastest scale is the costliest point to simulate, and most curves never
  need it.
- The knee point is the passing point of highest throughput; the bracket's
  other side is the nearest failing point at a smaller scale (the load the
  search could not sustain). Each step measures the geometric midpoint of
  the gap between that failing point and the next measured scale above it,
  which halves the bracket in log-scale (offered rate is 1/scale, so a
  log-scale bisection is a bisection in relative rate).
- It stops when the bracket's offered rates differ by at most ``tolerance``
  (scale ratio <= 1 + tolerance) and the failing point's throughput is at
  most ``tolerance`` above the knee's. (A failing point with *less*
  throughput than the knee is fine: the load past the knee only loses.)
  From the grid's 20-5000 ms range at 2% that takes 9 points where a grid
  of the same resolution needs 280 (``same_resolution_grid_points``).

Noise: points are seed means, so success need not be monotone in the scale.
Because the knee and its failing neighbour are recomputed from every point
at each step, a passing point below a failing one simply becomes the knee
and the search narrows around it; a failing point above the knee is left
alone (the knee rule does not look there). Where noise keeps the bracket
wider than the tolerance, the search still stops once the gap next to the
failing point is an eighth of the tolerance, and says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence

from simcore.usable import (ABOVE_SEARCH_RANGE, BELOW_SEARCH_RANGE, FINAL_STATUSES, FOUND, SEARCHING, MeasuredPoint,
                            failing_neighbour, find_knee)

# Where noise keeps the bracket wide, bisecting the gap next to the failing
# point stops at this fraction of the tolerance (three more halvings).
_NOISE_FLOOR_FRACTION = 1.0 / 8.0
# Probe scales are rounded to this many significant digits: readable in the
# store and the dashboard, and far finer than any tolerance allowed here.
_SIGNIFICANT_DIGITS = 6
MIN_TOLERANCE = 0.001
MAX_TOLERANCE = 1.0
# The slowest scale a search may start from: one commit in about 11.6 days, far past any steady-state window a
# run can afford. Bisection multiplies two scales, which overflows to infinity for scales near 1e154.
MAX_SCALE_MS = 1e9


class SearchRangeError(ValueError):
    """A search range value is not allowed; names the field, the value and what is allowed."""

    def __init__(self, field: str, value, allowed: str):
        self.field, self.value, self.allowed = field, value, allowed
        super().__init__(f"{field}: {value!r} is not allowed; expected {allowed}")


# The workload floors every arrival gap here (simcore.workload.ARRIVAL_FLOOR_MS): a smaller scale offers no
# more load, only slower probes.
MIN_SCALE_MS = 1.0


@dataclass(frozen=True)
class SearchRange:
    """The scales a search may probe and how close it must bracket the knee.

    Attributes:
        min_scale_ms: the fastest inter-arrival scale (highest offered load).
        max_scale_ms: the slowest inter-arrival scale (lowest offered load).
        tolerance: the final bracket's relative width in rate, 0.02 = 2%.
    """

    min_scale_ms: float = 20.0
    max_scale_ms: float = 5000.0
    tolerance: float = 0.02

    def __post_init__(self) -> None:
        for name in ("min_scale_ms", "max_scale_ms", "tolerance"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise SearchRangeError(name, value, "a finite number")
            object.__setattr__(self, name, float(value))
        if self.min_scale_ms < MIN_SCALE_MS:
            raise SearchRangeError("min_scale_ms", self.min_scale_ms,
                                   f"a number >= {MIN_SCALE_MS:g} (ms): arrival gaps are floored at "
                                   f"{MIN_SCALE_MS:g} ms, so a smaller scale offers no more load")
        if not MIN_TOLERANCE <= self.tolerance <= MAX_TOLERANCE:
            raise SearchRangeError("tolerance", self.tolerance,
                                   f"a relative width between {MIN_TOLERANCE:g} and {MAX_TOLERANCE:g} (0.02 = 2%)")
        if self.max_scale_ms > MAX_SCALE_MS:
            raise SearchRangeError("max_scale_ms", self.max_scale_ms, f"a number <= {MAX_SCALE_MS:g} (ms)")
        if self.max_scale_ms <= self.min_scale_ms * (1 + self.tolerance):
            raise SearchRangeError("max_scale_ms", self.max_scale_ms,
                                   f"a number > min_scale_ms x (1 + tolerance) = "
                                   f"{self.min_scale_ms * (1 + self.tolerance):g} (ms)")


@dataclass(frozen=True)
class SearchStep:
    """What the search knows about a curve now, and what to measure next.

    Attributes:
        status: ``searching`` (measure ``next_scale_ms``, or wait for the
            probes in flight when it is None) or a final status: ``found``,
            ``above_search_range``, ``below_search_range``.
        next_scale_ms: the scale to measure next (``searching`` only).
        knee: the passing point of highest throughput, if any.
        failing: the failing point nearest below the knee's scale (the load the
            search could not sustain), if any; when nothing passes, the
            failing point of largest scale.
        within_tolerance: the final bracket meets the tolerance (``found``).
        note: why the search ended where it did, for people.
    """

    status: str
    next_scale_ms: Optional[float] = None
    knee: Optional[MeasuredPoint] = None
    failing: Optional[MeasuredPoint] = None
    within_tolerance: bool = False
    note: str = ""

    @property
    def done(self) -> bool:
        return self.status in FINAL_STATUSES

    @property
    def rate_ratio(self) -> Optional[float]:
        """Offered rate at the failing point over that at the knee (= their scale ratio)."""
        if self.knee is None or self.failing is None or self.failing.scale_ms >= self.knee.scale_ms:
            return None
        return self.knee.scale_ms / self.failing.scale_ms

    @property
    def throughput_ratio(self) -> Optional[float]:
        """Throughput at the failing point over that at the knee."""
        if self.rate_ratio is None or not self.knee.throughput_cps > 0:
            return None
        return self.failing.throughput_cps / self.knee.throughput_cps


def geometric_midpoint(low_ms: float, high_ms: float) -> float:
    """The scale halfway between two scales in log-scale (so halfway in relative rate), rounded."""
    return round_scale(math.sqrt(low_ms * high_ms))


def round_scale(scale_ms: float) -> float:
    digits = _SIGNIFICANT_DIGITS - 1 - math.floor(math.log10(scale_ms))
    return float(round(scale_ms, digits))


def same_resolution_grid_points(search_range: SearchRange) -> int:
    """Points of a geometric grid over the range whose neighbours are within the tolerance.

    That grid resolves every knee in the range as finely as the search does:
    20-5000 ms at 2% needs ceil(ln(250) / ln(1.02)) + 1 = 280 points.
    """
    return geometric_grid_points(search_range.min_scale_ms, search_range.max_scale_ms, search_range.tolerance)


def geometric_grid_points(low_ms: float, high_ms: float, tolerance: float) -> int:
    """Points from ``low_ms`` to ``high_ms`` whose neighbours differ by at most the factor 1 + ``tolerance``.

    >>> geometric_grid_points(20, 5000, 0.02), geometric_grid_points(100, 100, 0.02)
    (280, 1)
    """
    return math.ceil(math.log(high_ms / low_ms) / math.log1p(tolerance) - 1e-9) + 1


def next_step(points: Iterable[MeasuredPoint], search_range: SearchRange,
              pending_ms: Iterable[float] = ()) -> SearchStep:
    """Decide the curve's next probe, or that its knee is known.

    Args:
        points: every measured point of the curve (any order; scales outside
            the range count too, as the dashboard sees them). Two points at
            the same scale are not allowed.
        search_range: the range and tolerance.
        pending_ms: scales being measured right now. The next probe then
            splits the largest gap they leave in the current bracket (so
            several probes of one curve can run at once); ``next_scale_ms`` is
            None when no useful probe is left until one of them returns.

    Returns:
        The step: a final status with the knee and its bracket, or
        ``searching`` with the scale to measure.
    """
    points = sorted(points, key=lambda p: p.scale_ms)
    scales = [p.scale_ms for p in points]
    if len(set(scales)) != len(scales):
        raise ValueError(f"points: two points share a scale in {scales}; expected one point per scale")
    pending = sorted(set(pending_ms))
    low, high, tol = search_range.min_scale_ms, search_range.max_scale_ms, search_range.tolerance
    knee = find_knee(points)

    if knee is None:
        failing = points[-1] if points else None  # the largest scale measured
        if failing is not None and failing.scale_ms >= high:
            return SearchStep(BELOW_SEARCH_RANGE, failing=failing,
                              note=f"fails even at the slowest scale searched, {failing.scale_ms:g} ms")
        gap_low = failing.scale_ms if failing is not None else low
        if high / gap_low <= 1 + tol:  # next to the assumed-passing end: measure the end itself
            return _probe_end(high, pending, failing=failing)
        return _bisect(gap_low, high, pending, tol, failing=failing)

    failing = failing_neighbour(points, knee)
    if failing is None:
        if points[0].scale_ms <= low:
            # The smallest scale measured is at or below the fastest end, and it passes.
            return SearchStep(ABOVE_SEARCH_RANGE, knee=knee,
                              note=f"passes even at the fastest scale searched, {points[0].scale_ms:g} ms")
        gap_high = points[0].scale_ms
        if gap_high / low <= 1 + tol:  # next to the assumed-failing end: measure the end itself
            return _probe_end(low, pending, knee=knee)
        return _bisect(low, gap_high, pending, tol, knee=knee)

    step = SearchStep(FOUND, knee=knee, failing=failing)
    throughput_ratio = step.throughput_ratio
    if step.rate_ratio <= 1 + tol and throughput_ratio is not None and throughput_ratio <= 1 + tol:
        return SearchStep(FOUND, knee=knee, failing=failing, within_tolerance=True,
                          note=f"bracketed to {100 * (step.rate_ratio - 1):.2f}% in rate")
    # The gap to split is the one right above the failing point: below the
    # knee every measured point above the failing one passes.
    gap_high = min(p.scale_ms for p in points if p.scale_ms > failing.scale_ms)
    if gap_high / failing.scale_ms <= 1 + tol * _NOISE_FLOOR_FRACTION:
        return SearchStep(FOUND, knee=knee, failing=failing, within_tolerance=False,
                          note=(f"bracket {100 * (step.rate_ratio - 1):.2f}% wide in rate, throughput ratio "
                                f"{throughput_ratio if throughput_ratio is None else round(throughput_ratio, 4)}: "
                                f"seed noise makes success or throughput non-monotone at this resolution"))
    return _bisect(failing.scale_ms, gap_high, pending, tol * _NOISE_FLOOR_FRACTION, knee=knee, failing=failing)


def _probe_end(end_ms: float, pending: Sequence[float], **known) -> SearchStep:
    return SearchStep(SEARCHING, next_scale_ms=None if end_ms in pending else end_ms,
                      note=f"measuring the end of the range, {end_ms:g} ms", **known)


def _bisect(low_ms: float, high_ms: float, pending: Sequence[float], min_gap: float, **known) -> SearchStep:
    """Probe the middle of the widest gap left between ``low_ms``, the pending probes and ``high_ms``."""
    edges = [low_ms] + [s for s in pending if low_ms < s < high_ms] + [high_ms]
    ratio, gap_low, gap_high = max((b / a, a, b) for a, b in zip(edges, edges[1:]))
    if len(edges) > 2 and ratio <= 1 + min_gap:
        return SearchStep(SEARCHING, note="waiting for the probes in flight", **known)
    return SearchStep(SEARCHING, next_scale_ms=geometric_midpoint(gap_low, gap_high),
                      note=f"bisecting {low_ms:g}-{high_ms:g} ms", **known)


def search_sequentially(measure: Callable[[float], MeasuredPoint], search_range: SearchRange,
                        known: Iterable[MeasuredPoint] = (),
                        max_points: int = 200) -> tuple[SearchStep, list[MeasuredPoint]]:
    """Run one curve's search to the end, one probe at a time (no Ray).

    Args:
        measure: measures the curve at a scale.
        search_range: range and tolerance.
        known: points measured before (resume).
        max_points: a guard against a ``measure`` that never lets the search end.

    Returns:
        The final step and every point, in the order they were measured.

    Example:
        >>> knee_ms = 100.0  # a synthetic curve: passes at scales above 100 ms
        >>> measure = lambda s: MeasuredPoint(s, 1.0 if s > knee_ms else 0.5, 1000.0 / s)
        >>> step, points = search_sequentially(measure, SearchRange(20, 5000, 0.02))
        >>> step.status, len(points), step.knee.scale_ms / step.failing.scale_ms <= 1.02
        ('found', 9, True)
    """
    points = list(known)
    for _ in range(max_points):
        step = next_step(points, search_range)
        if step.done:
            return step, points
        points.append(measure(step.next_scale_ms))
    raise RuntimeError(f"the search did not end within {max_points} points; last step: {step}")
