"""Writer workloads: the most writers each setup serves usably, per commit interval.

A writer sweep (sweeps/writers.py) measures, per setup (client, provider,
tables, mix, interval, maintenance), one point per number of writers. The
largest number whose success rate (the one ``simcore.usable`` says counts)
stays above 95% is the setup's **max writers**; the failing count just
above it is the other side of its bracket. The rule is ``simcore.usable``'s
knee rule over the writers' mean gap between commits (interval / writers),
so a knee here is found exactly as on an inter-arrival curve. These points
are not inter-arrival curves, so ``studies.group_studies`` leaves them out.
Pure: points in, plain dicts out.
"""

from __future__ import annotations

from typing import Iterable, Optional

from dashboards.points import Point
from dashboards.rounding import rounded
from dashboards.studies import mix_id, protocol_of, series_id
from ray_jobs.knee_curves import measured_point
from simcore.usable import MeasuredPoint, curve_status, failing_neighbour, find_knee, success_metric

# Fields that tell one writers setup from another (besides writers itself and the seed-level metrics).
_SETUP_EXCLUDED = ("writers",)


def is_writer_point(point: Point) -> bool:
    return point.config.get("writers") is not None


def _measured(point: Point) -> MeasuredPoint:
    """A writers point on its setup's curve: at the writers' mean gap between commits (interval / writers)."""
    config = point.config
    return measured_point(config["commit_interval_s"] * 1000.0 / config["writers"], config, point.rows)


def writer_frontiers(points: Iterable[Point]) -> list[dict]:
    """One entry per writers setup: its max writers, bracket, status and every point measured."""
    setups: dict = {}
    for point in points:
        if not is_writer_point(point):
            continue
        key = (point.experiment,) + tuple(sorted((name, repr(value)) for name, value in point.config.items()
                                                  if name not in _SETUP_EXCLUDED))
        setups.setdefault(key, []).append(point)
    out = []
    for key in sorted(setups, key=repr):
        setup = sorted(setups[key], key=lambda p: p.config["writers"])
        knee = find_knee(setup, _measured)
        failing = failing_neighbour(setup, knee, _measured) if knee is not None else None
        config = setup[0].config
        out.append({
            "experiment": setup[0].experiment,
            "client": config.get("client") or "reference",
            "protocol": protocol_of(config),
            "s": series_id(config), "t": config["num_tables"], "m": mix_id(config),
            "interval_s": rounded(config["commit_interval_s"]),
            "maintenance_jobs": config.get("maintenance_jobs") or 0,
            "max_writers": knee.config["writers"] if knee is not None else None,
            "failing_writers": failing.config["writers"] if failing is not None else None,
            "status": curve_status(knee, failing),
            "success_metric": success_metric(config),
            # [writers, success that counts, throughput c/s, writers' p99 lag s, maintenance success]
            "points": [[p.config["writers"], rounded(_value(p.mean(success_metric(config)))),
                        rounded(_value(p.mean("throughput_cps"))), rounded(_value(p.mean("writer_lag_p99_s"))),
                        rounded(_value(p.mean("maint_success_rate")))] for p in setup],
        })
    return out


def _value(value: Optional[float]) -> Optional[float]:
    return None if value is None or value != value else value
