"""One client count of ``probe-catalog``, summarised: commits/s, conflicts/s, latency, the client side's cost.

Only commits that end inside the window count: the count runs ``duration_s``, of which the first
``warm_up_s(duration_s)`` (a tenth, at most 1 s) is a warm-up, so the rates are of a steady loop and not of
connections' first statements. Pure.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

from store_probe.catalog_clients import Batch, Commit


def warm_up_s(duration_s: float) -> float:
    return min(1.0, duration_s / 10.0)


@dataclass(frozen=True)
class CountResult:
    """What ``clients`` concurrent clients did in the window."""

    clients: int
    window_s: float
    commits_per_s: float  # successful commits
    conflicts_per_s: float  # commits that lost to a concurrent one
    finished_per_s: float  # both: transactions the database ran to their end
    conflict_share: float
    latency_p50_ms: float  # of successful commits
    latency_p99_ms: float
    errors: int  # failures other than a conflict
    first_error: str
    client_cpu_share: float  # of the machine's cores
    lag_p99_ms: float

    def to_json(self) -> dict:
        return {key: (None if isinstance(value, float) and not math.isfinite(value) else value)
                for key, value in asdict(self).items()}


def in_window(commits: Sequence[Commit], duration_s: float) -> list[Commit]:
    start = warm_up_s(duration_s)
    return [c for c in commits if start <= c.began_s + c.latency_ms / 1000.0 <= duration_s]


def summarise(clients: int, batches: Sequence[Batch], duration_s: float, cores: int) -> tuple[CountResult,
                                                                                              list[Commit]]:
    """The count's result, and the commits in its window (the latencies a fit takes)."""
    import numpy as np

    commits = in_window([c for b in batches for c in b.commits], duration_s)
    window = duration_s - warm_up_s(duration_s)
    won = [c.latency_ms for c in commits if c.committed]
    lost = len(commits) - len(won)
    p50, p99 = (float(v) for v in np.percentile(won, [50, 99])) if won else (math.nan, math.nan)
    lags = [lag for b in batches for lag in b.lags_ms] or [0.0]
    errors = sum(b.error_count for b in batches)
    first = next((e for b in batches for e in b.errors), "")
    wall = max((b.wall_s for b in batches), default=duration_s) or duration_s
    result = CountResult(clients=clients, window_s=window, commits_per_s=len(won) / window,
                         conflicts_per_s=lost / window, finished_per_s=len(commits) / window,
                         conflict_share=lost / len(commits) if commits else math.nan, latency_p50_ms=p50,
                         latency_p99_ms=p99, errors=errors, first_error=first,
                         client_cpu_share=sum(b.cpu_s for b in batches) / (wall * cores),
                         lag_p99_ms=float(np.percentile(lags, 99)))
    return result, commits
