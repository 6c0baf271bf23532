"""One answer per curve: the usable throughput every view shows, and where it comes from.

A grid's knee is read off the loads the grid ran, so it is only as fine as
the grid: the true knee lies anywhere between the knee and the next heavier
load, and exp4c's loads are 2 to 2.5 times apart. The knee search
(``commit-sweeps knee``) brackets each curve's knee to a tolerance, and
``commit-sweeps capacity`` runs that same search (``ray_jobs.search``) on
one config. The search, capacity and the grid reading all take one seed
statistic, ``ray_jobs.knee_curves.USABLE_STATISTIC``.

So a curve's **answer** (``CurveAnswer``) is:

- ``searched``: where the store holds a knee search of the very curve (an
  ``<exp>_knee`` study whose fixed settings are all the grid study's) and
  that search has ended, the searched knee, with the grid knee kept beside
  it. A search has ended when its summary names the curve with a final
  status, or, where the summary does not name it, when the search's own
  stopping rule (``simcore.bisection.next_step``) finds nothing left to
  measure among the curve's points with every seed, over the summary's
  range or the search's default range;
- ``grid``: else the grid knee, at the grid's resolution.

A knee study's own curves answer with their searched knee, ended or not.
Seed 001's published figures are compared with grid knees (they were read
off seed 001's grid), so that view reads the grid frontiers, not these.
Pure functions; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence

from dashboards.frontier import CurveFrontier, measured
from dashboards.knee import SEARCH_RESOLUTION, SearchedKnee, matching_source_study, parse_summary, searched_knee
from dashboards.studies import Study
from ray_jobs.knee_curves import full_seed_points
from simcore.bisection import SearchRange, SearchRangeError, next_step
from simcore.usable import ABOVE_SEARCH_RANGE, FINAL_STATUSES

SEARCHED = "searched"
GRID = "grid"
SOURCES = (SEARCHED, GRID)


@dataclass(frozen=True)
class CurveSearch:
    """A knee search of one curve, as the store holds it.

    Attributes:
        study_id, experiment: the knee study (``exp4c_knee``).
        knee: the searched knee, from the rows.
        ended: whether the search has ended (see the module).
        summary_status: what the search's summary says of the curve (None:
            no summary names it).
        resolution: the search's tolerance (its summary's, else the default).
    """

    study_id: str
    experiment: str
    knee: SearchedKnee
    ended: bool
    summary_status: Optional[str]
    resolution: float


@dataclass(frozen=True)
class CurveAnswer:
    """The usable throughput a curve shows, and where it comes from.

    Attributes:
        frontier: the knee behind the value: the search's or the grid's.
        source: ``searched`` or ``grid``.
        lower_bound: the value is a lower bound (a grid knee at the heaviest
            load tried or with heavier loads missing; a search above its range).
        grid: the grid's own knee of the curve (None: the store holds no grid
            of the curve with the same settings).
        grid_lower_bound: the grid knee is a lower bound.
        search: the knee search of the curve, ended or not (None: none).
    """

    frontier: CurveFrontier
    source: str
    lower_bound: bool
    grid: Optional[CurveFrontier]
    grid_lower_bound: bool
    search: Optional[CurveSearch]

    @property
    def usable_cps(self) -> Optional[float]:
        return self.frontier.usable_cps


def curve_key(curve) -> tuple:
    return curve.series, curve.num_tables, curve.mix


def grid_bounds(study: Study, curve, frontier: CurveFrontier) -> tuple:
    """(grid scales the curve lacks, heavier loads than the knee missing, knee at the heaviest load tried)."""
    present = {point.scale_ms for point in curve.points}
    # A searched study has no grid: each curve's scales are its own.
    missing_scales = [] if study.is_searched else [scale for scale in study.scales if scale not in present]
    knee_scale = frontier.knee.scale_ms if frontier.knee else None
    # The true frontier may be higher when heavier loads than the knee are
    # absent, or when the knee is the heaviest load the grid tried.
    heavier_missing = bool(knee_scale is not None and any(scale < knee_scale for scale in missing_scales))
    at_grid_edge = bool(knee_scale is not None and knee_scale == min(present))
    return missing_scales, heavier_missing, at_grid_edge


def summary_for(summaries: Iterable, study: Study) -> tuple:
    """(path or None, {curve key: ``ray_jobs.knee_summary.SummaryCurve``}, problems) of ``study``'s knee summary.

    ``summaries``: the store's ``KneeSummaryFile``s; only the curves of the
    study's own variant are kept (``dashboards.knee.parse_summary``).
    """
    for summary in summaries:
        if summary.experiment != study.experiment:
            continue
        if summary.problem:
            return summary.path, {}, [f"could not be read: {summary.problem}"]
        entries, problems = parse_summary(summary.content, study.fixed)
        return summary.path, entries, problems
    return None, {}, []


def _search_range(entry) -> SearchRange:
    """The range the curve was searched over: its summary's, else the search's default."""
    if entry is not None and entry.search_range is not None:
        try:
            return SearchRange(*entry.search_range)
        except SearchRangeError:
            pass
    return SearchRange()


def search_ended(points: Sequence, entry=None) -> bool:
    """Whether a searched curve's search has ended (see the module); ``entry``: its summary's, or None."""
    if entry is not None and entry.status is not None:
        return entry.status in FINAL_STATUSES
    counted = full_seed_points(points, lambda point: point.seeds)
    try:
        return next_step([measured(point) for point in counted], _search_range(entry)).done
    except ValueError:  # two points at one scale (rows of two profiles): not one search's
        return False


def curve_answers(studies: Sequence[Study], frontiers: Mapping, summaries: Iterable = ()) -> dict:
    """(study id, curve key) -> ``CurveAnswer`` for every curve of ``studies``.

    ``frontiers``: (study id, curve key) -> the curve's own ``CurveFrontier``
    (``dashboards.frontier.curve_frontiers``); ``summaries``: the store's
    knee summaries (``StoreSnapshot.knee_summaries``).
    """
    summaries = tuple(summaries)
    searches: dict = {}  # (study id, curve key) -> CurveSearch, for the knee study and its same-settings grid
    grid_study_of: dict = {}  # knee study id -> the grid study with its very settings, or None
    for knee_study in (study for study in studies if study.is_searched):
        source, differing = matching_source_study(knee_study, studies)
        grid_study = source if source is not None and not differing else None
        grid_study_of[knee_study.id] = grid_study
        _path, entries, _problems = summary_for(summaries, knee_study)
        for curve in knee_study.curves:
            key = curve_key(curve)
            entry = entries.get(key)
            search = CurveSearch(knee_study.id, knee_study.experiment, searched_knee(curve.points),
                                 search_ended(curve.points, entry), entry.status if entry else None,
                                 _search_range(entry).tolerance if entry else SEARCH_RESOLUTION)
            searches[(knee_study.id, key)] = search
            if grid_study is not None:
                searches[(grid_study.id, key)] = search

    def grid_knee(study: Study, curve) -> tuple:
        frontier = frontiers[(study.id, curve_key(curve))]
        _missing, heavier_missing, at_edge = grid_bounds(study, curve, frontier)
        return frontier, heavier_missing or at_edge

    answers = {}
    for study in studies:
        for curve in study.curves:
            key = curve_key(curve)
            search = searches.get((study.id, key))
            if study.is_searched:
                grid_study = grid_study_of.get(study.id)
                grid_curve = next((c for c in grid_study.curves if curve_key(c) == key), None) if grid_study else None
                grid, grid_lower = grid_knee(grid_study, grid_curve) if grid_curve is not None else (None, False)
                answers[(study.id, key)] = CurveAnswer(frontiers[(study.id, key)], SEARCHED,
                                                       search.knee.status == ABOVE_SEARCH_RANGE, grid, grid_lower,
                                                       search)
                continue
            grid, grid_lower = grid_knee(study, curve)
            if search is not None and search.ended:
                answers[(study.id, key)] = CurveAnswer(frontiers[(search.study_id, key)], SEARCHED,
                                                       search.knee.status == ABOVE_SEARCH_RANGE, grid, grid_lower,
                                                       search)
            else:
                answers[(study.id, key)] = CurveAnswer(grid, GRID, grid_lower, grid, grid_lower, search)
    return answers
