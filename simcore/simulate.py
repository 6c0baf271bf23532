"""The one entry point: ``simulate(config, seeds)``.

Each seed gets its own random streams, derived from the seed alone through
NumPy's SeedSequence, so a (config, seed) pair gives the same numbers in any
process, on any machine, whatever else runs beside it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Optional, Union

import numpy as np

from simcore import bounds, engine, jit_start, metrics
from simcore.config import SimConfig
from simcore.errors import ConfigError
from simcore.workload import Workload, draw_workload, submitted_when_started

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
    if config.group_commit_s == 0.0:
        workload = submitted_when_started(workload, outcome.start_ms)
    return workload, outcome


#: Called with (seed, workload, outcome) as each seed's run ends: what else a caller keeps of a seed
#: (its per-transaction table) comes from the same run as its summary, not from a second one.
SeedHook = Callable[[int, Workload, engine.Outcome], None]


def seed_runs(config: SimConfig, seeds: Iterable[int], max_memory_bytes: Optional[int] = None,
              each_seed: Optional[SeedHook] = None) -> Iterator[tuple[int, Workload, engine.Outcome]]:
    """(seed, workload, outcome) of each seed in turn, one seed's arrays held at a time; ``each_seed`` sees
    each run as it ends. Every summary of a list of seeds (``simulate``, ``metric_sets.simulate``) runs them
    here."""
    for seed in seeds:
        workload, outcome = run_seed(config, seed, max_memory_bytes)
        if each_seed is not None:
            each_seed(int(seed), workload, outcome)
        yield int(seed), workload, outcome


def simulate(config: SimConfig, seeds: Union[int, Iterable[int]] = (1,), *,
             max_memory_bytes: Optional[int] = None, window_s: Optional[tuple[float, float]] = None,
             each_seed: Optional[SeedHook] = None) -> list[dict]:
    """Simulate ``config`` once per seed.

    ``max_memory_bytes`` overrides the work bound's memory limit (see
    ``simcore.bounds``); a run beyond the bounds raises ``WorkBoundError``
    (a ``ConfigError``) before any work. ``window_s`` (start, end): summarise
    the transactions submitted in [start, end) s instead of the steady-state
    window (``check_window`` says what is allowed). ``each_seed`` (a
    ``SeedHook``) sees each seed's workload and outcome as its run ends,
    before the next seed runs (``seed_runs``).

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
    if window_s is not None:
        window_s = check_window(config, window_s)
    rows = []
    for seed, workload, outcome in seed_runs(config, seed_list, max_memory_bytes, each_seed):
        row = {"seed": seed, **metrics.summarize(config, workload, outcome, window_s)}
        if window_s is not None:  # said in each row, so that no one reads it as the steady state
            row["window_start_s"], row["window_end_s"] = window_s
        rows.append(row)
    return rows


def check_window(config: SimConfig, window_s) -> tuple[float, float]:
    """(start, end) in seconds with 0 <= start < end <= the run's duration, else ConfigError; ``window_s``
    a pair or the command line's text ``START,END``.

    >>> from simcore import SimConfig
    >>> check_window(SimConfig(duration_s=3600), (0, 60))
    (0.0, 60.0)
    >>> check_window(SimConfig(duration_s=3600), "0,60")
    (0.0, 60.0)
    >>> check_window(SimConfig(duration_s=3600), (60, 60))
    Traceback (most recent call last):
    ...
    simcore.errors.ConfigError: window_s: (60, 60) is not allowed; expected START,END seconds with 0 <= START < END <= the duration (3600 s)
    """
    allowed = f"START,END seconds with 0 <= START < END <= the duration ({config.duration_s:g} s)"
    try:
        start, end = (float(v) for v in (window_s.split(",") if isinstance(window_s, str) else window_s))
    except (TypeError, ValueError):
        raise ConfigError("window_s", window_s, allowed) from None
    if not (0.0 <= start < end <= config.duration_s):  # False for nan
        raise ConfigError("window_s", window_s, allowed)
    return start, end


def simulate_transactions(config: SimConfig, seed: int, *, max_memory_bytes: Optional[int] = None) -> pa.Table:
    """The per-transaction Arrow table of one seed (``metrics.transactions_table`` of its run)."""
    workload, outcome = run_seed(config, seed, max_memory_bytes)
    return metrics.transactions_table(config, workload, outcome)


def prepare_kernel(variant: str) -> None:
    """Compile ``variant`` of the kernel (``engine.KERNEL_VARIANTS``) into this process, or load it from
    Numba's disk cache, by running one small seed through it: the first run of a config then starts at
    once. A compile takes a minute or more of CPU, once per install; a load, about a second."""
    if variant not in engine.KERNEL_VARIANTS:
        raise ConfigError("variant", variant, f"one of {list(engine.KERNEL_VARIANTS)}")
    small = SimConfig(protocol="published" if variant == "plain" else "corrected", num_tables=1,
                      inter_arrival_scale_ms=5_000.0)
    assert engine.kernel_variant(small) == variant
    run_seed(small, 1)
