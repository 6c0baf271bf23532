"""The knee search's results beside the grid's: where each curve really saturates, and how sure that is.

``commit-sweeps knee --experiment exp4c`` searches, per curve, the
inter-arrival scale at which the success rate stops being above 95%, and
stores ordinary result rows under the experiment ``exp4c_knee`` at the
scales it tried (any positive value, several seeds each). From those rows
alone this module derives, per curve (all config fields equal except the
scale and the seed):

- the **searched knee**: the highest seed-mean throughput among points whose
  seed-mean success (VO success where the mix has VO) is above 95%, with the
  frontier's own rule (``frontier.find_knee``), so grid and search agree on
  what a knee is; only points measured with every seed count (the search's
  one-seed screening points do not, ``ray_jobs.knee_curves.full_seed_points``);
- its **bracket**: the knee's throughput and the seed-mean throughput of the
  nearest failing point at a smaller inter-arrival scale (heavier load), and
  the two scales; the true knee lies between them;
- the **seed spread** at the knee and the **simulations spent** (distinct
  scales x seeds, screening included);
- a **status**: ``found`` (bracketed), ``above_search_range`` (no failing
  point at a heavier load: the knee is a lower bound) or
  ``below_search_range`` (no point passes), ``simcore.usable``'s names.

Beside it, the grid knee of the source experiment's curve (``exp4c``) and
the simulations that grid spent, and how many a grid as fine as the search's
target (2% steps over the source grid's span of scales) would need.

If the search also wrote ``<store>/_knee/<experiment>.json``, its per-curve
``status``, ``simulations`` and knee are shown and compared with the rows';
the numbers on the page come from the rows. Pure functions; no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence

from dashboards.frontier import find_knee, measured
from dashboards.points import Point, Spread, is_number
from simcore.bisection import SearchRange, geometric_grid_points
from simcore.usable import FINAL_STATUSES, curve_status, failing_neighbour
from dashboards.studies import FIXED_FIELDS, Study, mix_id, series_id
from ray_jobs.knee_curves import full_seed_points, source_experiment
from ray_jobs.knee_summary import summary_curves

# The precision the search aims for by default: the knee's rate to within 2%.
SEARCH_RESOLUTION = SearchRange().tolerance

STATUSES = FINAL_STATUSES


@dataclass(frozen=True)
class SearchedKnee:
    """The knee of one searched curve, from its rows.

    Attributes:
        usable_cps: seed-mean throughput at the knee (None: no point passes).
        knee: the knee point, or None.
        knee_throughput: seed spread of the knee's throughput.
        failing: the nearest point at a smaller scale whose mean success is
            at or below the threshold (None: none was tried).
        bracket_cps: (knee throughput, failing point's throughput), both seed
            means; None without both points.
        bracket_scale_ms: (failing scale, knee scale); None without both.
        width: |failing - knee throughput| / knee throughput (None without a
            bracket): how far the knee's throughput can still be off.
        offered_width: knee scale / failing scale - 1: the bracket in offered
            load (commits requested per second), as a fraction.
        n_simulations: runs spent on the curve (distinct scales x seeds).
        n_scales: distinct scales tried.
        seeds: every seed used on the curve, ascending.
        status: one of ``STATUSES``.
    """

    usable_cps: Optional[float]
    knee: Optional[Point]
    knee_throughput: Optional[Spread]
    failing: Optional[Point]
    bracket_cps: Optional[tuple]
    bracket_scale_ms: Optional[tuple]
    width: Optional[float]
    offered_width: Optional[float]
    n_simulations: int
    n_scales: int
    seeds: tuple
    status: str


def searched_knee(points: Sequence[Point]) -> SearchedKnee:
    """Knee, bracket, spread and cost of one searched curve's points (any scales, any order).

    The knee and its bracket come from the points measured with every seed
    (``ray_jobs.knee_curves.full_seed_points``, as the search reads them); the
    cost counts every point, the search's one-seed screening points too.
    """
    if not points:
        raise ValueError("points: an empty curve has no knee; expected at least one point")
    counted = full_seed_points(points, lambda point: point.seeds)
    knee = find_knee(counted)
    failing = failing_neighbour(counted, knee, measured) if knee is not None else None
    bracket_cps = bracket_scale = width = offered_width = None
    if knee is not None and failing is not None:
        knee_tp, failing_tp = knee.mean("throughput_cps"), failing.mean("throughput_cps")
        bracket_scale = (failing.scale_ms, knee.scale_ms)
        offered_width = knee.scale_ms / failing.scale_ms - 1.0
        if failing_tp is not None:
            bracket_cps = (knee_tp, failing_tp)
            width = abs(failing_tp - knee_tp) / knee_tp if knee_tp else None
    status = curve_status(knee, failing)
    return SearchedKnee(
        usable_cps=knee.mean("throughput_cps") if knee else None,
        knee=knee,
        knee_throughput=knee.metrics.get("throughput_cps") if knee else None,
        failing=failing,
        bracket_cps=bracket_cps,
        bracket_scale_ms=bracket_scale,
        width=width,
        offered_width=offered_width,
        n_simulations=sum(len(point.seeds) for point in points),
        n_scales=len({point.scale_ms for point in points}),
        seeds=tuple(sorted({seed for point in points for seed in point.seeds})),
        status=status,
    )


def within_resolution(knee: SearchedKnee, resolution: float = SEARCH_RESOLUTION) -> bool:
    """The bracket meets the search's target, as the search itself judges it.

    Both the offered rate (failing over knee) and the throughput (failing
    over knee) may differ by at most ``resolution``; a failing point with
    less throughput than the knee passes the second test.
    """
    if knee.bracket_cps is None or knee.offered_width is None or not knee.bracket_cps[0]:
        return False
    slack = 1e-9  # scales are stored rounded; 2.0000001% is 2%
    return (knee.offered_width <= resolution + slack
            and knee.bracket_cps[1] / knee.bracket_cps[0] - 1.0 <= resolution + slack)


def fine_grid_simulations(low_scale_ms: float, high_scale_ms: float, seeds_per_point: int,
                          resolution: float = SEARCH_RESOLUTION) -> int:
    """Runs a geometric grid needs to place every knee between low and high to within ``resolution``.

    Neighbouring scales of such a grid differ by the factor 1 + resolution,
    so it has ceil(ln(high / low) / ln(1 + resolution)) + 1 points, each run
    with ``seeds_per_point`` seeds.
    """
    if not (low_scale_ms > 0 and high_scale_ms >= low_scale_ms):
        raise ValueError(f"low_scale_ms, high_scale_ms: {low_scale_ms!r}, {high_scale_ms!r} are not allowed; "
                         "expected 0 < low <= high")
    if not resolution > 0:
        raise ValueError(f"resolution: {resolution!r} is not allowed; expected a fraction above 0")
    return geometric_grid_points(low_scale_ms, high_scale_ms, resolution) * seeds_per_point


def matching_source_study(knee_study: Study, studies: Sequence[Study]) -> tuple:
    """(the source experiment's study to compare with, fixed fields that differ from the search's).

    The study with the very same fixed settings when there is one; else the
    source experiment's main study, with the fields that differ (so the page
    can say, e.g., that the grid ran 3,600 s and the search 1,200 s).
    (None, ()) when the source experiment is not in the store.
    """
    source = source_experiment(knee_study.experiment)
    candidates = [study for study in studies if study.experiment == source]
    if not candidates:
        return None, ()
    for study in candidates:
        if dict(study.fixed) == dict(knee_study.fixed):
            return study, ()
    main = candidates[0]
    differing = tuple(name for name in FIXED_FIELDS if main.fixed.get(name) != knee_study.fixed.get(name))
    return main, differing


# -- the search's optional JSON summary -------------------------------------------------------------

_CURVE_KEY_FIELDS = ("provider", "catalog_latency_ms", "num_tables", "fast_append_ratio", "merge_append_ratio")


def _same_setting(a, b) -> bool:
    """Equal config values, a null and a NaN alike, 10 and 10.0 alike."""
    a, b = (None if isinstance(v, float) and math.isnan(v) else v for v in (a, b))
    if is_number(a) and is_number(b):
        return float(a) == float(b)
    return a == b


def parse_summary(content, fixed: Optional[Mapping] = None) -> tuple:
    """(curve key -> ``SummaryCurve``, problems) from a knee summary's JSON content.

    The file is read by its one reader, ``ray_jobs.knee_summary.summary_curves``
    (exact keys); this keys its curves as the page does, (series, tables,
    mix), from each curve's ``fixed`` fields.

    ``fixed``: a study's fixed settings. A search over a grid with variants
    (``retry_policies``: one curve key per policy) lists a curve key once per
    variant; only the entries that agree with ``fixed`` on the settings both
    name are kept, so each variant's study gets its own curves. Entries that
    name no curve are reported, not fatal.
    """
    curves, problems = summary_curves(content)
    entries = {}
    for curve in curves:
        fields = curve.fixed
        if fields.get("provider") is None or fields.get("num_tables") is None \
                or fields.get("fast_append_ratio") is None:
            problems.append(f"curve {curve.position}: does not name provider, num_tables and fast_append_ratio")
            continue
        if fixed and any(name in fields and not _same_setting(fields[name], value) for name, value in fixed.items()):
            continue  # another variant's curve
        key_fields = {name: fields.get(name) for name in _CURVE_KEY_FIELDS}
        try:
            key = (series_id(key_fields), int(fields["num_tables"]), mix_id(key_fields))
        except (TypeError, ValueError) as error:
            problems.append(f"curve {curve.position}: {error}")
            continue
        entries[key] = curve
    return entries, problems
