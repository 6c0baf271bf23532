"""What "usable" means: the one rule every part of the product applies.

A load is **usable** when the success rate that counts is strictly above
95%. The rate that counts is the ValidatedOverwrite one (``vo_success_rate``)
when the mix has ValidatedOverwrite transactions, else the overall one
(``success_rate``): a FastAppend or MergeAppend never fails validation, so
in a mix it is the overwrites that run out of luck first, as seed 001 reads
its tables. The share comes from ``SimConfig.validated_overwrite_ratio``
(1 - FastAppend - MergeAppend), so a FastAppend + MergeAppend mix with no
overwrite reads the overall rate.

A *curve* is the points of one config that differ only in inter-arrival
scale (offered load). Its **usable throughput** is the highest throughput
among its passing points; the point that attains it is the **knee**. Ties:
of points with equal throughput, the knee is the one with the higher
success rate, then the one with the lighter load (larger scale), so the
result never depends on input order. The knee's **bracket** is the failing
point nearest below its scale (the heavier load it could not sustain). A
curve's **status** is ``found`` (knee and failing neighbour both known),
``above_search_range`` (nothing failed at a heavier load: the knee is a
lower bound) or ``below_search_range`` (nothing passes).

The simulator's helpers, the dashboard, the knee search, the capacity
command and the benchmarks all import this module; none restates the rule.
Pure functions, no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional, TypeVar, Union

from simcore.config import SimConfig, validated_overwrite_ratio

USABLE_SUCCESS_THRESHOLD = 0.95  # a point passes when its success rate is strictly above this

# Statuses of a curve, as stored, sent to the page and printed by the knee search.
SEARCHING = "searching"
FOUND = "found"
ABOVE_SEARCH_RANGE = "above_search_range"  # passes even at the heaviest load tried: the knee is faster still
BELOW_SEARCH_RANGE = "below_search_range"  # fails even at the lightest load tried: the knee is slower still
FINAL_STATUSES = (FOUND, ABOVE_SEARCH_RANGE, BELOW_SEARCH_RANGE)
ERROR = "error"  # not decided by the rule: a driver marks a curve whose simulation raised
STATUS_LABELS = {FOUND: "found", ABOVE_SEARCH_RANGE: "above search range",
                 BELOW_SEARCH_RANGE: "below search range", SEARCHING: "searching", ERROR: "error"}

# VO shares below this count as "no VO in the mix" (float noise of 1 - 0.9 - 0.1).
_NO_SHARE = 1e-9

T = TypeVar("T")


def success_metric(config: Union[SimConfig, Mapping[str, Any]]) -> str:
    """The success-rate column that must be above the threshold for ``config``.

    ``config`` is a ``SimConfig`` or a mapping of its fields (a store row).

    >>> success_metric(SimConfig(fast_append_ratio=0.9))
    'vo_success_rate'
    >>> success_metric({"fast_append_ratio": 0.5, "merge_append_ratio": 0.5})
    'success_rate'
    """
    if isinstance(config, SimConfig):
        share = config.validated_overwrite_ratio
    else:
        share = validated_overwrite_ratio(config["fast_append_ratio"], config.get("merge_append_ratio") or 0.0)
    return "vo_success_rate" if share > _NO_SHARE else "success_rate"


def passes(success: Optional[float]) -> bool:
    """The rule itself: strictly above the threshold; a missing or NaN rate fails."""
    return success is not None and not math.isnan(success) and success > USABLE_SUCCESS_THRESHOLD


@dataclass(frozen=True)
class MeasuredPoint:
    """One scale of a curve: the success rate that counts and the throughput (seed means, or one seed).

    A NaN success (for example no VO transaction at all) counts as failing;
    a NaN throughput makes the point unusable as a knee.
    """

    scale_ms: float
    success: float
    throughput_cps: float

    @property
    def passes(self) -> bool:
        return passes(self.success)


def _identity(point):
    return point


def _is_number(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


def knee_key(point: MeasuredPoint) -> tuple:
    """Sort key of candidate knees: highest throughput, then highest success, then lightest load."""
    return (point.throughput_cps, point.success, point.scale_ms)


def find_knee(points: Iterable[T], measured: Callable[[T], MeasuredPoint] = _identity) -> Optional[T]:
    """The passing point of highest throughput (see the module's tie-breaks); None when none passes.

    ``measured`` turns each of ``points`` into a ``MeasuredPoint`` (points
    are ``MeasuredPoint`` already by default), so callers keep their own
    point type and get one of their own points back.

    >>> find_knee([MeasuredPoint(50, 0.90, 18.0), MeasuredPoint(100, 0.99, 9.5), MeasuredPoint(200, 1.0, 5.0)])
    MeasuredPoint(scale_ms=100, success=0.99, throughput_cps=9.5)
    """
    best, best_key = None, None
    for point in points:
        value = measured(point)
        if not value.passes or not _is_number(value.throughput_cps):
            continue
        key = knee_key(value)
        if best_key is None or key > best_key:
            best, best_key = point, key
    return best


def failing_neighbour(points: Iterable[T], knee: T, measured: Callable[[T], MeasuredPoint] = _identity) -> Optional[T]:
    """The failing point at the largest scale below the knee's: the other side of its bracket."""
    knee_scale = measured(knee).scale_ms
    heavier = [(value.scale_ms, point) for point, value in ((point, measured(point)) for point in points)
               if value.scale_ms < knee_scale and not value.passes]
    return max(heavier, key=lambda pair: pair[0], default=(None, None))[1]


def curve_status(knee: Optional[Any], failing: Optional[Any]) -> str:
    """``found``, ``above_search_range`` or ``below_search_range`` from a curve's knee and bracket."""
    if knee is None:
        return BELOW_SEARCH_RANGE
    return FOUND if failing is not None else ABOVE_SEARCH_RANGE


def usable_throughput(points: Iterable[tuple]) -> Optional[float]:
    """Highest throughput among ``(success_rate, throughput_cps)`` pairs that pass; None when none does.

    >>> usable_throughput([(0.99, 9.5), (0.96, 12.0), (0.95, 14.0), (float("nan"), 20.0)])
    12.0
    """
    best = None
    for success, throughput in points:
        if passes(success) and _is_number(throughput) and (best is None or throughput > best):
            best = throughput
    return best
