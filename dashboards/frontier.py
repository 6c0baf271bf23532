"""Usable throughput and the knee of a throughput curve (seed 001's headline figure).

A *curve* is the set of points of one (series, table count, mix) that differ
only in inter-arrival scale, i.e. in offered load. Its **usable throughput**
is the highest throughput among its points whose success rate is above 95%;
the success rate read is the ValidatedOverwrite one (``vo_success_rate``)
where the mix has VO transactions, else the overall one. The point that
attains it is the **knee**: the latencies the provider tables report are
those of the knee.

With several seeds, the headline value is taken from seed means (mean
success above the threshold, highest mean throughput), which is what a
chart of averaged curves shows. The spread reported with it is the range of
the knee's throughput over its seeds, and, separately, the usable throughput
each seed alone would give (the selection itself can move from seed to
seed). Pure functions; no I/O.

Ties: of points with equal mean throughput, the knee is the one with the
higher mean success rate, then the one with the lighter load (larger
inter-arrival scale), so the result never depends on input order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence

from dashboards.points import Point, Spread, is_number

USABLE_SUCCESS_THRESHOLD = 0.95

# Shares below this count as "no VO in the mix" (float noise of 1 - 0.9 - 0.1).
_NO_SHARE = 1e-9


def validated_overwrite_share(config: Mapping) -> float:
    merge = config.get("merge_append_ratio") or 0.0
    return max(0.0, 1.0 - config["fast_append_ratio"] - merge)


def usable_success_metric(config: Mapping) -> str:
    """The success-rate column whose value must exceed the threshold for ``config``."""
    return "vo_success_rate" if validated_overwrite_share(config) > _NO_SHARE else "success_rate"


@dataclass(frozen=True)
class CurveFrontier:
    """The usable throughput of one curve, with its knee and seed spread.

    Attributes:
        usable_cps: mean throughput at the knee; None when no point of the
            curve has a mean success above the threshold.
        knee: the point attaining it, or None.
        knee_throughput: seed spread of the knee's throughput (None without knee).
        success_metric: the success column the threshold was applied to.
        seed_usable_cps: per seed, the usable throughput of that seed's runs
            alone (None where none of them passes), in ascending seed order.
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


def _knee_order(point: Point, success_metric: str):
    # Sort key: highest throughput, then highest success, then lightest load.
    return (point.mean("throughput_cps"), point.mean(success_metric), point.scale_ms)


def find_knee(points: Iterable[Point], threshold: float = USABLE_SUCCESS_THRESHOLD) -> Optional[Point]:
    """The point with the highest mean throughput whose mean success is above ``threshold``.

    Points without a usable success value or throughput (NaN in every seed)
    are skipped; so are points at or below the threshold (it is strict).
    """
    qualifying = []
    for point in points:
        metric = usable_success_metric(point.config)
        success, throughput = point.mean(metric), point.mean("throughput_cps")
        if success is None or throughput is None:
            continue
        if success > threshold:
            qualifying.append((_knee_order(point, metric), point))
    if not qualifying:
        return None
    return max(qualifying, key=lambda pair: pair[0])[1]


def usable_throughput_of(success_throughput_pairs: Iterable[tuple],
                         threshold: float = USABLE_SUCCESS_THRESHOLD) -> Optional[float]:
    """Highest throughput among (success, throughput) pairs with success above ``threshold``."""
    best = None
    for success, throughput in success_throughput_pairs:
        if is_number(success) and is_number(throughput) and success > threshold:
            best = throughput if best is None else max(best, throughput)
    return best


def usable_by_seed(points: Sequence[Point], threshold: float = USABLE_SUCCESS_THRESHOLD) -> tuple:
    """((seed, usable throughput of that seed's runs or None), ...) in ascending seed order."""
    pairs_by_seed: dict = {}
    for point in points:
        metric = usable_success_metric(point.config)
        for seed, values in point.seed_metrics.items():
            pairs_by_seed.setdefault(seed, []).append((values.get(metric), values.get("throughput_cps")))
    return tuple((seed, usable_throughput_of(pairs, threshold)) for seed, pairs in sorted(pairs_by_seed.items()))


def curve_frontiers(studies) -> dict:
    """(study id, (series, tables, mix)) -> CurveFrontier, for every curve of ``studies``."""
    return {(study.id, (curve.series, curve.num_tables, curve.mix)): curve_frontier(curve.points)
            for study in studies for curve in study.curves}


def curve_frontier(points: Sequence[Point], threshold: float = USABLE_SUCCESS_THRESHOLD) -> CurveFrontier:
    """Usable throughput, knee and seed spread of one curve's points."""
    if not points:
        raise ValueError("points: an empty curve has no frontier; expected at least one point")
    metric = usable_success_metric(points[0].config)
    knee = find_knee(points, threshold)
    n_points = sum(1 for point in points
                   if point.mean(usable_success_metric(point.config)) is not None
                   and point.mean("throughput_cps") is not None)
    return CurveFrontier(
        usable_cps=knee.mean("throughput_cps") if knee else None,
        knee=knee,
        knee_throughput=knee.metrics.get("throughput_cps") if knee else None,
        success_metric=metric,
        seed_usable_cps=usable_by_seed(points, threshold),
        n_points=n_points,
    )
