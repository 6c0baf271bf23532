"""From per-seed store rows to config points with seed-to-seed spread.

A *point* is one simulated configuration (experiment, config_hash): the
store holds one row per seed of it. Every view shows seed means and says how
far the seeds spread, so this module summarises each metric over the seeds
once (mean, sample standard deviation, min, max, how many seeds had a value)
and keeps the per-seed values for the computations that need them (the
usable throughput of each seed). Pure functions; no I/O.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional

from dashboards.snapshot import CONFIG_COLUMNS, SCALAR_METRIC_COLUMNS
from ray_jobs.knee_curves import seed_mean, seed_values


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


@dataclass(frozen=True)
class Spread:
    """A metric over the seeds that had a value for it (NaN and missing skipped, as ``seed_mean`` says)."""

    mean: float
    std: Optional[float]  # sample standard deviation; None with a single seed
    low: float
    high: float
    n: int

    @classmethod
    def of(cls, values: Iterable) -> Optional["Spread"]:
        # The seeds that count and their mean: the one rule (ray_jobs.knee_curves.seed_mean).
        numbers = seed_values(values)
        if not numbers:
            return None
        count = len(numbers)
        mean = seed_mean(numbers)
        std = None
        if count > 1:
            std = math.sqrt(sum((value - mean) ** 2 for value in numbers) / (count - 1))
        return cls(mean=mean, std=std, low=min(numbers), high=max(numbers), n=count)


@dataclass(frozen=True)
class Point:
    """One configuration and its seeds.

    Attributes:
        experiment, config_hash: the store key without the seed.
        config: every SimConfig field (from the first seed's row).
        seeds: the seeds stored for it, ascending.
        metrics: seed spread of each scalar metric that has any value.
        seed_metrics: per seed, its store row (for per-seed results).
        rows: the store rows, one per seed (provenance lives there).
    """

    experiment: str
    config_hash: str
    config: Mapping
    seeds: tuple
    metrics: Mapping
    seed_metrics: Mapping
    rows: tuple

    @property
    def scale_ms(self) -> float:
        return self.config["inter_arrival_scale_ms"]

    def mean(self, metric: str) -> Optional[float]:
        spread = self.metrics.get(metric)
        return spread.mean if spread else None


def elementwise_mean(lists: list) -> tuple:
    """Rank-by-rank mean of per-table lists (one list per seed); None where no seed has a value."""
    lists = [values for values in lists if isinstance(values, (list, tuple))]
    if not lists:
        return ()
    width = max(len(values) for values in lists)
    means = []
    for index in range(width):
        column = [values[index] for values in lists if index < len(values) and is_number(values[index])]
        means.append(seed_mean(column) if column else None)
    return tuple(means)


def make_point(rows: list[dict]) -> Point:
    """Summarise the rows of one (experiment, config_hash); all rows share it."""
    rows = sorted(rows, key=lambda row: row["seed"] if row["seed"] is not None else -1)
    first = rows[0]
    metrics = {}
    for name in SCALAR_METRIC_COLUMNS:
        spread = Spread.of(row.get(name) for row in rows)
        if spread is not None:
            metrics[name] = spread
    return Point(
        experiment=first["experiment"],
        config_hash=first["config_hash"],
        config={name: first.get(name) for name in CONFIG_COLUMNS},
        seeds=tuple(row["seed"] for row in rows),
        metrics=metrics,
        seed_metrics={row["seed"]: row for row in rows},
        rows=tuple(rows),
    )


def group_points(rows: Iterable[dict]) -> list[Point]:
    """One ``Point`` per (experiment, config_hash), in store order."""
    groups: dict = {}
    for row in rows:
        groups.setdefault((row["experiment"], row["config_hash"]), []).append(row)
    return [make_point(group) for group in groups.values()]
