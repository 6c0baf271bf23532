"""Curves of an experiment, and what the store already knows about them.

A curve is every config of a grid that differs only in
``inter_arrival_scale_ms`` (provider or catalog latency, tables, mix, ...).
The knee search runs per curve, so a grid is folded into its curves here,
and stored rows are folded back into per-curve, per-scale, per-seed
outcomes: the search's evidence, and what lets a rerun resume without
repeating a point. ``CurveOutcome`` is where a curve's search stands, as the
summary and the command line report it.

The success rate that counts is ``simcore.usable``'s, as everywhere.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Sequence

import pyarrow as pa

from simcore import ConfigError, SimConfig
from ray_jobs.grid import Grid
from simcore.bisection import SearchStep
from simcore.usable import MeasuredPoint, success_metric
from ray_jobs.schema import CONFIG_COLUMNS

SCALE_FIELD = "inter_arrival_scale_ms"
KNEE_SUFFIX = "_knee"
# A curve is named by the hash of its config at this scale: any fixed scale
# would do; this one is a valid value of every grid.
CURVE_KEY_SCALE_MS = 1000.0


def knee_experiment_name(experiment: str) -> str:
    """Where a search over ``experiment``'s curves stores its rows: ``exp4c`` -> ``exp4c_knee``."""
    return experiment + KNEE_SUFFIX


def curve_id_of(config: SimConfig) -> str:
    """The id of the curve a config lies on: the config hash at the key scale."""
    return config.replace(**{SCALE_FIELD: CURVE_KEY_SCALE_MS}).config_hash


@dataclass(frozen=True)
class Curve:
    """One curve of a source experiment.

    Attributes:
        experiment: the source experiment (``exp4c``); rows go to its
            ``knee_experiment_name``.
        template: the curve's config at ``CURVE_KEY_SCALE_MS``.
        label: the grid's swept values that pick this curve, for people
            (``provider=s3x num_tables=1 fast_append_ratio=1.0``).
    """

    experiment: str
    template: SimConfig
    label: str

    @property
    def curve_id(self) -> str:
        return self.template.config_hash

    @property
    def success_metric(self) -> str:
        return success_metric(self.template)

    def config_at(self, scale_ms: float) -> SimConfig:
        return self.template.replace(**{SCALE_FIELD: scale_ms})

    def fixed_fields(self) -> dict:
        """Every config field of the curve except the inter-arrival scale."""
        fields = self.template.to_dict()
        del fields[SCALE_FIELD]
        return fields


def curves_from_grid(grid: Grid, quick: bool = False, **overrides: Any) -> tuple[Curve, ...]:
    """The curves of a grid (or of its quick subset), in grid order.

    Args:
        grid: the experiment's grid; it must sweep ``inter_arrival_scale_ms``
            or fix it (the search replaces it either way).
        quick: only the grid's quick subset.
        **overrides: config fields set on every curve (e.g. ``duration_s``).

    Raises:
        GridError: a curve is not a valid config.
    """
    swept = [name for name in grid.swept if name != SCALE_FIELD]
    configs = grid.configs(quick=quick, **overrides, **{SCALE_FIELD: CURVE_KEY_SCALE_MS})
    return tuple(Curve(experiment=grid.experiment, template=config,
                       label=" ".join(f"{name}={getattr(config, name)}" for name in swept) or "all")
                 for config in configs)


@dataclass(frozen=True)
class SeedOutcome:
    """What the search reads from one simulated seed."""

    success: float
    throughput_cps: float


def seed_outcome(config: SimConfig, metrics: Mapping[str, Any]) -> SeedOutcome:
    """The success that counts and the throughput, from one ``simulate`` row (or stored row)."""
    return SeedOutcome(success=_as_float(metrics.get(success_metric(config))),
                       throughput_cps=_as_float(metrics.get("throughput_cps")))


def measured_point(scale_ms: float, outcomes: Iterable[SeedOutcome]) -> MeasuredPoint:
    """Seed means, as the dashboard takes them (a NaN seed makes the mean NaN: the point fails)."""
    outcomes = list(outcomes)
    if not outcomes:
        raise ValueError(f"outcomes: none for scale {scale_ms} ms; expected at least one seed")
    return MeasuredPoint(scale_ms=scale_ms,
                         success=math.fsum(o.success for o in outcomes) / len(outcomes),
                         throughput_cps=math.fsum(o.throughput_cps for o in outcomes) / len(outcomes))


# Per curve id: scale (ms) -> seed -> outcome.
Evidence = dict[str, dict[float, dict[int, SeedOutcome]]]


def complete_points(by_scale: Mapping[float, Mapping[int, SeedOutcome]], seeds: Sequence[int]) -> list[MeasuredPoint]:
    """The points that have every requested seed, each the mean over all its stored seeds.

    A point stored with fewer seeds than requested is not used until its
    missing seeds are run; one stored with more uses them all (as the
    dashboard, which reads every stored row, does).
    """
    wanted = set(seeds)
    return [measured_point(scale, outcomes.values()) for scale, outcomes in sorted(by_scale.items())
            if wanted <= set(outcomes)]


def evidence_from_rows(rows: pa.Table, curves: Sequence[Curve]) -> Evidence:
    """Fold stored rows (one experiment's, ``RESULTS_SCHEMA``) into evidence for ``curves``.

    Rows of other curves (another duration, a grid that changed) are ignored,
    as are rows whose config no longer validates.
    """
    by_id = {curve.curve_id: curve for curve in curves}
    evidence: Evidence = {curve_id: {} for curve_id in by_id}
    if rows.num_rows == 0:
        return evidence
    config_names = [name for name in CONFIG_COLUMNS if name in rows.column_names]
    read = ("config_hash", "seed", "success_rate", "vo_success_rate", "throughput_cps")
    columns = {name: rows.column(name).to_pylist() for name in read}
    curve_of: dict[str, Any] = {}  # config hash -> (config, curve), or None when not one of these curves
    for index, config_hash in enumerate(columns["config_hash"]):
        if config_hash not in curve_of:
            curve_of[config_hash] = _config_and_curve(rows, index, config_names, by_id)
        if curve_of[config_hash] is None:
            continue
        config, curve = curve_of[config_hash]
        metrics = {name: columns[name][index] for name in read}
        by_scale = evidence[curve.curve_id].setdefault(config.inter_arrival_scale_ms, {})
        by_scale[metrics["seed"]] = seed_outcome(config, metrics)
    return evidence


def _config_and_curve(rows: pa.Table, index: int, config_names: Sequence[str], by_id: Mapping[str, Curve]):
    values = {name: rows.column(name)[index].as_py() for name in config_names}
    try:
        config = SimConfig.from_dict(values)
    except (ConfigError, TypeError):  # written by another simcore: not one of these curves
        return None
    curve = by_id.get(curve_id_of(config))
    return None if curve is None else (config, curve)


@dataclass(frozen=True)
class CurveOutcome:
    """Where one curve's search stands.

    Attributes:
        curve: the curve.
        status: a final status of ``simcore.usable`` (``found``,
            ``above_search_range``, ``below_search_range``), ``searching``
            (interrupted: a rerun continues) or ``error``.
        step: the search's last step (knee, bracket, note).
        points: the points measured with every requested seed (seed means).
        seeds: the requested seeds.
        simulations_stored: (scale, seed) simulations the store holds for the
            curve, this run's included.
        simulations_run: simulations run by this run.
        knee_seed_throughputs_cps: per-seed throughput at the knee point (its spread).
        error: what failed, for ``error``.
    """

    curve: Curve
    status: str
    step: SearchStep
    points: tuple[MeasuredPoint, ...]
    seeds: tuple[int, ...]
    simulations_stored: int
    simulations_run: int
    knee_seed_throughputs_cps: tuple[float, ...] = ()
    error: Optional[str] = None


def _as_float(value: Any) -> float:
    return float("nan") if value is None else float(value)
