"""The one entry point: ``simulate(config, seeds)``.

Each seed gets its own random streams, derived from the seed alone through
NumPy's SeedSequence, so a (config, seed) pair gives the same numbers in any
process, on any machine, whatever else runs beside it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Optional, Union

import numpy as np

from simcore import bounds, engine, jit_start, metrics
from simcore.config import SimConfig
from simcore.errors import ConfigError
from simcore.workload import draw_workload

if TYPE_CHECKING:  # pyarrow loads only where a transactions table is made
    import pyarrow as pa

_WORKLOAD_STREAM = 0
_PROTOCOL_STREAM = 1


def _check(config: SimConfig, max_memory_bytes: Optional[int]) -> None:
    if max_memory_bytes is None:
        bounds.check(config)
    else:
        bounds.check(config, max_memory_bytes, "the caller's max_memory_bytes")


def run_seed(config: SimConfig, seed: int, max_memory_bytes: Optional[int] = None):
    """(workload, outcome) of one seed: the raw material of every metric.

    Raises:
        ConfigError: a bad seed, or (``bounds.WorkBoundError``) a run beyond the
            work bounds, before anything is allocated.
    """
    seed = bounds.check_seed(seed)
    _check(config, max_memory_bytes)
    workload = draw_workload(config, np.random.default_rng([seed, _WORKLOAD_STREAM]))
    jit_start.start()  # Numba's target, loaded without the SciPy import the kernels do not need
    outcome = engine.run(config, workload, np.random.default_rng([seed, _PROTOCOL_STREAM]))
    return workload, outcome


def simulate(config: SimConfig, seeds: Union[int, Iterable[int]] = (1,), *,
             max_memory_bytes: Optional[int] = None) -> list[dict]:
    """Simulate ``config`` once per seed.

    ``max_memory_bytes`` overrides the work bound's memory limit (see
    ``simcore.bounds``); a run beyond the bounds raises ``WorkBoundError``
    (a ``ConfigError``) before any work.

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
    for seed in seed_list:  # every seed and the work bounds are checked before any work
        bounds.check_seed(seed)
    _check(config, max_memory_bytes)
    rows = []
    for seed in seed_list:
        workload, outcome = run_seed(config, seed, max_memory_bytes)
        rows.append({"seed": int(seed), **metrics.summarize(config, workload, outcome)})
    return rows


def simulate_transactions(config: SimConfig, seed: int, *, max_memory_bytes: Optional[int] = None) -> pa.Table:
    """The per-transaction Arrow table of one seed."""
    workload, outcome = run_seed(config, seed, max_memory_bytes)
    return metrics.transactions_table(config, workload, outcome)
