"""How well a profile matches measured rows: the benchmark simulated at their client counts, and the loss.

The loss (``mismatch``) is a mean over client counts of squared deviations
in tolerance units: failure rate, goodput and the successful ops' latencies.
Fits whose loss is within ``NEAR_BEST_LOSS`` of the best one are "equally
good": the data cannot tell them apart.
"""

from __future__ import annotations

import math
from typing import Iterable, Optional, Sequence

import numpy as np

from simcore.bench import run_clients, warmup_s
from simcore.fit.samples import ClientStats, summarise
from simcore.providers import Provider

FIT_CLIENTS = (1, 2, 3, 4, 6, 8, 12, 16)  # the counts a fit compares from more rows than these (compared_rows)
# Fits whose loss is within this of the best one are "equally good": the data cannot tell them apart
# (the loss is a mean over client counts of squared deviations in tolerance units).
NEAR_BEST_LOSS = 1.0


def simulated_stats(profile: Provider, operation: str, clients: Iterable[int], duration_s: float,
                    seed: int = 1) -> list[ClientStats]:
    """``profile``'s benchmark at each of ``clients``, as ``bench`` runs it: the stats a fit compares with the rows."""
    window = duration_s - warmup_s(duration_s)
    out = []
    for n in clients:
        lat, ok = run_clients(profile, operation, n, duration_s, seed)
        if not ok.any():
            lat, ok = np.append(lat, 1e9), np.append(ok, True)  # no success at all: a terrible, finite score
        out.append(summarise(n, lat, ok, window_s=window))
    return out


def failed_to_success_ratio(stats: Sequence[ClientStats]) -> Optional[float]:
    """Mean failed-op latency / mean successful-op latency, all client counts pooled (seed 000 section 8)."""
    failures = sum(s.failures for s in stats if s.failed_mean_ms is not None)
    if not failures:
        return None
    failed = sum(s.failed_mean_ms * s.failures for s in stats if s.failed_mean_ms is not None) / failures
    succeeded = sum(s.mean_ms * s.successes for s in stats) / sum(s.successes for s in stats)
    return failed / succeeded


def mismatch(simulated: Sequence[ClientStats], measured: Sequence[ClientStats],
             failed_ratio: Optional[float] = None) -> float:
    """The fit's loss: failure-rate points, and log ratios of goodput and latencies, each scaled by its tolerance.

    ``failed_ratio``: the measured failed/successful mean-latency ratio, all client counts pooled, where
    only that aggregate is known (seed 000 prints it, not per client count).
    """
    total = 0.0
    if failed_ratio is not None and (ratio := failed_to_success_ratio(simulated)) is not None:
        total += len(measured) * (math.log(ratio / failed_ratio) / 0.25) ** 2
    for s, m in zip(simulated, measured):
        # Goodput and failure rate are what the catalog simulation turns on: they weigh most.
        total += ((s.failure_rate - m.failure_rate) / 0.02) ** 2
        total += (math.log(s.goodput_ops / m.goodput_ops) / 0.03) ** 2
        for got, want, tolerance in ((s.p50_ms, m.p50_ms, 0.15), (s.mean_ms, m.mean_ms, 0.40),
                                     (s.p95_ms, m.p95_ms, 0.80), (s.p99_ms, m.p99_ms, 1.60)):
            total += (math.log(got / want) / tolerance) ** 2
        if m.failed_mean_ms is not None and s.failed_mean_ms is not None:
            total += (math.log(s.failed_mean_ms / m.failed_mean_ms) / 0.15) ** 2
    return total / max(1, len(measured))


def compared_rows(measured: Sequence[ClientStats]) -> list[ClientStats]:
    """The rows a fit simulates and compares (``measured`` sorted by clients): every one, up to
    ``len(FIT_CLIENTS)`` client counts; from more, those at ``FIT_CLIENTS`` where the rows have them all (seed
    000's sixteen counts: the simulations cost time in proportion to the counts), else as many spread evenly
    over the rows' ranks, the first and the last included.

    Every row of a few counts is data the fit needs: of rows at 1, 3, 5 and 7 clients, those at ``FIT_CLIENTS``
    would be 1 and 3 alone.

    >>> rows = lambda *counts: [ClientStats(c, 1, 0, 1.0, 1.0, 1.0, 1.0, 1.0) for c in counts]
    >>> [s.clients for s in compared_rows(rows(1, 3, 5, 7))]
    [1, 3, 5, 7]
    >>> [s.clients for s in compared_rows(rows(*range(1, 17)))]
    [1, 2, 3, 4, 6, 8, 12, 16]
    >>> [s.clients for s in compared_rows(rows(*range(1, 20, 2)))]
    [1, 3, 7, 9, 11, 13, 17, 19]
    """
    measured = sorted(measured, key=lambda s: s.clients)
    if len(measured) <= len(FIT_CLIENTS):
        return list(measured)
    at = [s for s in measured if s.clients in FIT_CLIENTS]
    if len(at) == len(FIT_CLIENTS):
        return at
    ranks = np.round(np.linspace(0, len(measured) - 1, len(FIT_CLIENTS))).astype(int)
    return [measured[i] for i in ranks]
