"""The one entry point: ``simulate(config, seeds)``.

Each seed gets its own random streams, derived from the seed alone through
NumPy's SeedSequence, so a (config, seed) pair gives the same numbers in any
process, on any machine, whatever else runs beside it.
"""

from __future__ import annotations

from typing import Iterable, Union

import numpy as np
import pyarrow as pa

from simcore import engine, metrics
from simcore.config import ConfigError, SimConfig
from simcore.workload import draw_workload

_WORKLOAD_STREAM = 0
_PROTOCOL_STREAM = 1


def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError("seed", seed, "an integer >= 0")
    return int(seed)


def run_seed(config: SimConfig, seed: int):
    """(workload, outcome) of one seed: the raw material of every metric."""
    seed = _check_seed(seed)
    workload = draw_workload(config, np.random.default_rng([seed, _WORKLOAD_STREAM]))
    outcome = engine.run(config, workload, np.random.default_rng([seed, _PROTOCOL_STREAM]))
    return workload, outcome


def simulate(config: SimConfig, seeds: Union[int, Iterable[int]] = (1,)) -> list[dict]:
    """Simulate ``config`` once per seed.

    Returns:
        One flat dict per seed: ``seed``, then every metric of
        ``metrics.summarize`` (plain Python numbers and lists, ready for
        ``pyarrow.Table.from_pylist`` or JSON).

    Example:
        >>> from simcore import SimConfig, simulate
        >>> row, = simulate(SimConfig(provider="s3x", num_tables=10,
        ...                           inter_arrival_scale_ms=500, duration_s=2400), seeds=[7])
        >>> row["success_rate"] > 0.99
        True
    """
    if not isinstance(config, SimConfig):
        raise TypeError(f"config must be a SimConfig, not {type(config).__name__}")
    seed_list = [seeds] if isinstance(seeds, (int, np.integer)) else list(seeds)
    if not seed_list:
        raise ConfigError("seeds", seed_list, "at least one seed")
    rows = []
    for seed in seed_list:
        workload, outcome = run_seed(config, seed)
        rows.append({"seed": int(seed), **metrics.summarize(config, workload, outcome)})
    return rows


def simulate_transactions(config: SimConfig, seed: int) -> pa.Table:
    """The per-transaction Arrow table of one seed."""
    workload, outcome = run_seed(config, seed)
    return metrics.transactions_table(config, workload, outcome)
