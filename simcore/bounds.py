"""Work bounds: what one run of a config will cost, known before any work.

The engine's arrays are sized by the number of arriving transactions and
the number of tables, both known from the config alone, so a run that
would exhaust the machine (or one that cannot mean anything, such as a
window with no transaction in it) is refused before a single array is
allocated, with one line naming the field, its value, the estimate, the
limit and how to raise it.

The limit is half of this machine's physical memory unless the caller
says otherwise, e.g. ``512M`` or ``4G``; half, because a sweep runs one
simulation per core beside the driver and the rest of the machine. simcore
reads no environment variable: the command line takes the limit from
``--max-memory`` or ``$SIMCORE_MAX_MEMORY`` (``commit_sweeps.flags``) and
passes it in.

Memory figures were measured with ``studies/memory_bounds/bounds.py`` (peak resident
size of one run, minus the process's size before it): about 125 bytes per
transaction and 62 bytes per table. The estimate doubles both, so it errs
on the side of refusing.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Optional

from simcore.config import SimConfig
from simcore.errors import ConfigError
from simcore.workload import ARRIVAL_FLOOR_MS, committers

MEMORY_LIMIT_ENV = "SIMCORE_MAX_MEMORY"
BYTES_PER_TRANSACTION = 250
BYTES_PER_TABLE = 128
# A writer or maintenance job of a writer workload: its phase, its arrays' headers and its
# bookkeeping while the workload is drawn (measured 0.82 KB per writer with studies/memory_bounds/bounds.py,
# 200,000 and 400,000 writers committing at most once; doubled, as the other figures).
BYTES_PER_JOB = 1640
# Python, NumPy, Numba and pyarrow loaded: measured 170-230 MB before a run.
PROCESS_BYTES = 256 * 2**20
# A table index is an int32 in the workload and the engine.
MAX_TABLES = 2**31 - 1
# NumPy seeds streams from unsigned 64-bit words; the results store keeps seeds as int64.
MAX_SEED = 2**64 - 1
MAX_STORED_SEED = 2**63 - 1
# The driver of a sweep holds a few Python objects per (config, seed) run while planning
# (the unit, its key in two sets, its batch entry): measured 0.7 KB per run over find_work
# and make_batches of 180,000 runs; rounded up for what Ray and the row collector add.
BYTES_PER_PLANNED_RUN = 2048

_SIZE = re.compile(r"^\s*(?P<number>[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*(?P<unit>[kKmMgGtT]?)i?[bB]?\s*$")
_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


class WorkBoundError(ConfigError):
    """A run would exceed a work bound, or could not produce a meaningful result."""

    def __init__(self, field: str, value, message: str):
        self.field = field
        self.value = value
        self.allowed = message
        ValueError.__init__(self, f"{field}: {value!r} {message}")


@dataclass(frozen=True)
class WorkEstimate:
    """What one seed of a config costs, estimated from the config alone.

    Attributes:
        transactions: arrivals the workload draws arrays for (an upper
            estimate: the expected count plus six standard deviations).
        window_transactions: expected arrivals in the steady-state window.
        max_events: an upper bound on event-loop steps (every attempt of
            every transaction retried to the limit).
        peak_bytes: estimated peak memory of the process running it.
    """

    transactions: float
    window_transactions: float
    max_events: float
    peak_bytes: float


def mean_gap_ms(config: SimConfig) -> float:
    """A lower bound of the mean gap between arrivals (so the count errs high)."""
    if config.arrivals == "exponential":
        return config.inter_arrival_scale_ms
    return max(ARRIVAL_FLOOR_MS, config.inter_arrival_scale_ms * math.exp(config.inter_arrival_sigma ** 2 / 2))


def _jobs(config: SimConfig) -> tuple[tuple[int, float], ...]:
    """(jobs, interval in ms) of a writer workload's writers and maintenance jobs; () for open-loop arrivals."""
    if config.writers is None:
        return ()
    jobs = (committers(config),)
    if config.maintenance_jobs:
        jobs += ((config.maintenance_jobs, config.maintenance_interval_s * 1000.0),)
    return jobs


def estimate(config: SimConfig) -> WorkEstimate:
    """The cost of one seed of ``config`` (pure arithmetic; allocates nothing)."""
    jobs = _jobs(config)
    if jobs:
        # Each job commits at most floor(duration / interval) + 1 times (simcore.workload), and the
        # workload holds a few Python objects per job besides its commits.
        transactions = sum(count * (math.floor(config.duration_ms / interval) + 1) for count, interval in jobs)
        window = sum(count * (config.duration_s - 2.0 * config.warmup_s) * 1000.0 / interval
                     for count, interval in jobs)
        job_bytes = BYTES_PER_JOB * sum(count for count, _ in jobs)
    else:
        gap = mean_gap_ms(config)
        expected = config.duration_ms / gap
        # As simcore.workload draws: 5% more than expected, plus six standard deviations.
        transactions = expected * 1.05 + 6.0 * math.sqrt(expected) + 16.0
        window = (config.duration_s - 2.0 * config.warmup_s) * 1000.0 / gap
        job_bytes = 0.0
    # Per attempt: a CAS and the read after it; a throttled CAS queues first; split may read twice.
    per_attempt = 2 + (config.cas_throttle_per_s is not None) + (config.retry_policy == "split")
    events = transactions * (1 + per_attempt * (config.retry + 1))
    peak = PROCESS_BYTES + BYTES_PER_TRANSACTION * transactions + BYTES_PER_TABLE * config.num_tables + job_bytes
    return WorkEstimate(transactions=transactions, window_transactions=window, max_events=events,
                        peak_bytes=peak)


def machine_memory_bytes() -> Optional[int]:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX: no derived limit
        return None


def parse_size(text: str, field: str = MEMORY_LIMIT_ENV) -> int:
    """Bytes from ``4G``, ``512M``, ``1.5GiB``, ``1e9``; ConfigError otherwise."""
    match = _SIZE.match(str(text))
    if match is None:
        raise ConfigError(field, text, "a size such as 512M, 4G or 1e9 (bytes)")
    size = float(match["number"]) * _UNITS[match["unit"].lower()]
    if not math.isfinite(size) or size < PROCESS_BYTES:
        raise ConfigError(field, text, f"a size of at least {PROCESS_BYTES // 2**20}M (what a simulating "
                                       f"process takes before its first run)")
    return int(size)


def memory_limit(size: Optional[str] = None, field: str = "max_memory", source: str = "--max-memory"
                 ) -> tuple[int, str]:
    """(limit in bytes, where it came from): ``size`` (``parse_size``'s; ``field`` names it in an error,
    ``source`` is where it came from), else half of this machine's memory (16 GiB when that cannot be read)."""
    if size is not None:
        return parse_size(size, field), source
    total = machine_memory_bytes()
    if total is None:
        return 16 * 2**30, "the default (this machine's memory is unknown)"
    return total // 2, "half this machine's memory"


def format_bytes(size: float) -> str:
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size / 1e3:.3g} kB"


def _driving_field(config: SimConfig) -> tuple[str, object]:
    """The field a user would change to make the run smaller."""
    if BYTES_PER_TABLE * config.num_tables > BYTES_PER_TRANSACTION * estimate(config).transactions:
        return "num_tables", config.num_tables
    if config.writers is not None:
        # The job class with the most commits, and within it whichever of count and interval is further out.
        fields = [("writers", "commit_interval_s"), ("maintenance_jobs", "maintenance_interval_s")]
        (count, interval), name = max(zip(_jobs(config), fields),
                                      key=lambda pair: pair[0][0] * config.duration_ms / pair[0][1])
        if count * interval >= 60_000.0:  # relative to one job committing every minute
            return name[0], getattr(config, name[0])
        return name[1], getattr(config, name[1])
    # Relative to the defaults (3600 s, 100 ms): whichever is further out is the cause.
    if config.duration_s / 3600.0 >= 100.0 / config.inter_arrival_scale_ms:
        return "duration_s", config.duration_s
    return "inter_arrival_scale_ms", config.inter_arrival_scale_ms


def check(config: SimConfig, limit_bytes: Optional[int] = None, limit_source: str = "the limit") -> WorkEstimate:
    """Refuse a config whose run would exceed ``limit_bytes`` or could mean nothing.

    Args:
        config: the run to check.
        limit_bytes: the memory limit (default: ``memory_limit()``).
        limit_source: how the limit was set, for the message.

    Returns:
        The estimate, when the run is within bounds.

    Raises:
        WorkBoundError: one line naming the field, its value, the estimate,
            the limit and how to raise it.
    """
    if limit_bytes is None:
        limit_bytes, limit_source = memory_limit()
    if config.num_tables > MAX_TABLES:
        raise WorkBoundError("num_tables", config.num_tables,
                             f"is not allowed; expected at most {MAX_TABLES} (table indexes are 32-bit)")
    work = estimate(config)
    if not work.window_transactions >= 1.0 and config.writers is None:
        window_s = config.duration_s - 2.0 * config.warmup_s
        raise WorkBoundError("inter_arrival_scale_ms", config.inter_arrival_scale_ms,
                             f"gives {work.window_transactions:.2g} expected transactions in the "
                             f"{window_s:g} s steady-state window; expected a gap that gives at least one "
                             f"(below {window_s * 1000.0:g} ms) or a longer duration_s")
    if work.peak_bytes > limit_bytes:
        field, value = _driving_field(config)
        raise WorkBoundError(field, value, (
            f"needs about {format_bytes(work.peak_bytes)} of memory for one run "
            f"({work.transactions:.3g} transactions, {config.num_tables} table(s)"
            f"{'' if config.writers is None else f', {config.writers} writer(s)'}), above the limit of "
            f"{format_bytes(limit_bytes)} ({limit_source}); make the run smaller, or raise the limit "
            f"with --max-memory or ${MEMORY_LIMIT_ENV} (e.g. {MEMORY_LIMIT_ENV}=64G)"))
    return work


def check_seed(seed, maximum: int = MAX_SEED) -> int:
    """A seed as an int, or ConfigError: an integer in [0, maximum]."""
    import numbers

    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed <= maximum:
        raise ConfigError("seed", seed, f"an integer in [0, {maximum}]")
    return int(seed)


def check_planned_runs(runs: int, limit_bytes: int, limit_source: str, field: str = "seeds", value=None) -> None:
    """Refuse a sweep whose plan alone (one entry per config and seed) would not fit in memory."""
    need = runs * BYTES_PER_PLANNED_RUN
    if need > limit_bytes:
        raise WorkBoundError(field, runs if value is None else value, (
            f"makes {runs} runs, whose plan alone needs about {format_bytes(need)} of memory, above the limit "
            f"of {format_bytes(limit_bytes)} ({limit_source}); use fewer seeds or configs, or raise the limit "
            f"with --max-memory or ${MEMORY_LIMIT_ENV}"))
