"""Usable throughput and the knee of each curve of the store (seed 001's headline figure).

A *curve* is the set of points of one (series, table count, mix) that differ
only in inter-arrival scale, i.e. in offered load. What makes a point
usable, which success rate counts and how ties break is ``simcore.usable``'s
rule; this module applies it to the store's seed-aggregated points.

With several seeds, the value is the one seed statistic every part of
the product takes, ``ray_jobs.knee_curves.USABLE_STATISTIC``: the knee of
the seed-mean curve (mean success above the threshold, highest mean
throughput; a seed without a value is left out,
``ray_jobs.knee_curves.seed_mean``), what the knee search and
``commit-sweeps capacity`` report. On a knee search's curve only the points
with every seed count (``ray_jobs.knee_curves.full_seed_points``). Its
spread is the knee's throughput over its seeds. Apart from it, each seed's
own knee (the usable throughput of that seed's runs alone): another
statistic, which shows how far the knee moves from seed to seed and can lie
on either side of the value. Which knee a curve shows, the grid's or a
search's, is ``dashboards.answers``'s. Pure functions; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

from dashboards.points import Point, Spread
from ray_jobs.knee_curves import full_seed_points, measured_point
from simcore.usable import MeasuredPoint, find_knee as find_usable_knee, success_metric, usable_throughput


def measured(point: Point) -> MeasuredPoint:
    """A store point as the usable rule reads it: ``ray_jobs.knee_curves.measured_point`` of its rows."""
    return measured_point(point.scale_ms, point.config, point.rows)


@dataclass(frozen=True)
class CurveFrontier:
    """The usable throughput of one curve, with its knee and seed spread.

    Attributes:
        usable_cps: mean throughput at the knee; None when no point of the
            curve has a mean success above the threshold.
        knee: the point attaining it, or None.
        knee_throughput: seed spread of the knee's throughput (None without knee).
        success_metric: the success column the threshold was applied to.
        seed_usable_cps: per seed, that seed's own knee: the usable throughput
            of its runs alone (None where none of them passes), in ascending
            seed order; not the spread of ``usable_cps``.
        n_points: points on the curve with a usable success value.
    """

    usable_cps: Optional[float]
    knee: Optional[Point]
    knee_throughput: Optional[Spread]
    success_metric: str
    seed_usable_cps: tuple
    n_points: int

    @property
    def seeds(self) -> tuple:
        return tuple(seed for seed, _ in self.seed_usable_cps)


def find_knee(points: Iterable[Point]) -> Optional[Point]:
    """The point with the highest mean throughput whose mean success passes (``simcore.usable``)."""
    return find_usable_knee(points, measured)


def usable_by_seed(points: Sequence[Point]) -> tuple:
    """((seed, usable throughput of that seed's runs or None), ...) in ascending seed order."""
    pairs_by_seed: dict = {}
    for point in points:
        metric = success_metric(point.config)
        for seed, values in point.seed_metrics.items():
            pairs_by_seed.setdefault(seed, []).append((values.get(metric), values.get("throughput_cps")))
    return tuple((seed, usable_throughput(pairs)) for seed, pairs in sorted(pairs_by_seed.items()))


def curve_frontiers(studies) -> dict:
    """(study id, (series, tables, mix)) -> CurveFrontier, for every curve of ``studies``."""
    return {(study.id, (curve.series, curve.num_tables, curve.mix)): curve_frontier(_counted(study, curve.points))
            for study in studies for curve in study.curves}


def _counted(study, points: Sequence[Point]) -> Sequence[Point]:
    """A searched curve's points that count: those with every seed (not the search's screening points)."""
    return full_seed_points(points, lambda point: point.seeds) if study.is_searched else points


def curve_frontier(points: Sequence[Point]) -> CurveFrontier:
    """Usable throughput, knee and seed spread of one curve's points."""
    if not points:
        raise ValueError("points: an empty curve has no frontier; expected at least one point")
    metric = success_metric(points[0].config)
    knee = find_knee(points)
    n_points = sum(1 for point in points
                   if point.mean(success_metric(point.config)) is not None
                   and point.mean("throughput_cps") is not None)
    return CurveFrontier(
        usable_cps=knee.mean("throughput_cps") if knee else None,
        knee=knee,
        knee_throughput=knee.metrics.get("throughput_cps") if knee else None,
        success_metric=metric,
        seed_usable_cps=usable_by_seed(points),
        n_points=n_points,
    )
