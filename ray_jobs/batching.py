"""Units of work and how they are grouped into Ray tasks.

A unit is one (experiment, config, seed): the grain at which results are
stored and resumed. Running each unit as its own Ray task would cost a few
milliseconds of scheduling per unit, while most units of a sweep simulate
in 2-10 ms; so cheap units are packed into batches, and the expensive ones
(up to a second or two at the highest load) fill batches of a few units.

Batches are handed out most expensive first, so that the last tasks of a
sweep are short and no worker is left finishing a long run while the others
idle (the longest-processing-time-first rule).

The cost estimate only orders and packs units; a wrong estimate costs some
balance, never correctness.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from simcore import SimConfig

# A rough model of simcore's cost per seed: a fixed part plus a part per
# arrival that shrinks slowly with load. Its shape was fitted to the 5,904
# runs of a full exp4 sweep (``python scripts/fit_cost_model.py``): taken most
# expensive first, as the sweep runs them, its cumulative cost share stays
# within 8 points of the measured one (the earlier model's, 32 points, made
# the progress ETA promise a quarter of the real time left). Its scale keeps
# the total close to the earlier model's, so batch sizes stay as measured.
FIXED_COST_S = 0.0008
SECONDS_PER_ARRIVAL = 2.7e-6  # at the reference inter-arrival
REFERENCE_INTER_ARRIVAL_MS = 100.0
LOAD_EXPONENT = -0.2
NON_FAST_APPEND_WEIGHT = 0.0  # the fit found no extra cost for ValidatedOverwrite convoys

# Measured here: a Ray task costs 5-9 ms beyond its work (submit, schedule,
# return the rows), so ~2 s batches keep that under 1%; expensive units
# still run alone, and the cheap batches that come last keep the tail short.
DEFAULT_BATCH_TARGET_S = 2.0
DEFAULT_MAX_BATCH_UNITS = 64
# At least this many tasks per CPU, so that a small sweep balances too.
MIN_TASKS_PER_CPU = 4


@dataclass(frozen=True)
class WorkUnit:
    """One simulation to run and store: (experiment, config, seed)."""

    experiment: str
    config: SimConfig
    seed: int

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.experiment, self.config.config_hash, self.seed)


def estimated_cost_s(config: SimConfig) -> float:
    """A rough guess of the seconds one seed of ``config`` takes to simulate."""
    arrivals = config.duration_s * 1000.0 / config.inter_arrival_scale_ms
    load = (REFERENCE_INTER_ARRIVAL_MS / config.inter_arrival_scale_ms) ** LOAD_EXPONENT
    mix = 1.0 + NON_FAST_APPEND_WEIGHT * (1.0 - config.fast_append_ratio)
    return FIXED_COST_S + SECONDS_PER_ARRIVAL * arrivals * load * mix


def make_batches(units: Iterable[WorkUnit], target_s: float = DEFAULT_BATCH_TARGET_S,
                 max_units: int = DEFAULT_MAX_BATCH_UNITS, min_batches: int = 1) -> list[tuple[WorkUnit, ...]]:
    """Pack units into batches, most expensive first.

    Args:
        units: the units to run.
        target_s: most estimated seconds of work per batch; a unit estimated
            at more than this runs alone. Larger batches amortise task
            overhead, smaller ones balance better.
        max_units: most units in one batch (keeps progress updates frequent).
        min_batches: make batches small enough that there are at least this
            many (when there are as many units), so that a small sweep still
            spreads over every worker.

    Returns:
        Batches in the order they should be submitted.
    """
    if target_s <= 0:
        raise ValueError(f"target_s: {target_s!r} is not allowed; expected a number of seconds > 0")
    if max_units < 1:
        raise ValueError(f"max_units: {max_units!r} is not allowed; expected an integer >= 1")
    costed = sorted(((estimated_cost_s(unit.config), unit) for unit in units),
                    key=lambda pair: (-pair[0], pair[1].key))
    target_s = min(target_s, _balancing_target_s([cost for cost, _ in costed], min_batches))
    batches: list[tuple[WorkUnit, ...]] = []
    current: list[WorkUnit] = []
    current_cost_s = 0.0
    for cost_s, unit in costed:
        # Close the batch rather than let it pass the target, so no batch but a
        # single expensive unit exceeds it (and there are >= min_batches of them).
        if current and (current_cost_s + cost_s > target_s or len(current) >= max_units):
            batches.append(tuple(current))
            current, current_cost_s = [], 0.0
        current.append(unit)
        current_cost_s += cost_s
    if current:
        batches.append(tuple(current))
    return batches


def _balancing_target_s(costs_descending: Sequence[float], min_batches: int) -> float:
    """The batch size that yields ``min_batches`` batches: units too big to share a
    batch take one each, the rest of the work is split over the remaining batches."""
    remaining_s, slots = sum(costs_descending), max(1, min_batches)
    for cost_s in costs_descending:
        if slots <= 1 or cost_s < remaining_s / slots:
            break
        remaining_s -= cost_s
        slots -= 1
    if remaining_s <= 0:  # every unit takes a batch of its own
        return min(costs_descending, default=float("inf"))
    return remaining_s / slots


def batch_cost_s(batch: Sequence[WorkUnit]) -> float:
    return sum(estimated_cost_s(unit.config) for unit in batch)
