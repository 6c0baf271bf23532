"""The conditional write's latency at one client, where nothing contends: the first step of every fit.

The measured op spans the read and the conditional write (at one client, op
rate x mean latency is about 1). The read keeps the base profile's figures
(a per-thread table has no read-only measurement), its median capped at half
the one-client op's median (``capped_read``); the write's lognormal
(median, sigma) is fitted so that read + write matches the one-client mean,
p50, p95 and p99 (``fit_write``).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from simcore.fit.samples import ClientStats
from simcore.providers import Provider

# Fixed normal draws for read + write: the loss is then a deterministic, smooth function of (median, sigma).
_NORMALS = np.random.default_rng(20250601).standard_normal((2, 100_000))


def fit_write(base: Provider, one_client: ClientStats) -> tuple[float, float]:
    """(median ms, sigma) of the conditional write such that read + write matches the one-client op."""
    from scipy.optimize import minimize

    read = base.read()
    read_ms = np.maximum(np.exp(read.mu + read.sigma * _NORMALS[0]), read.floor_ms)
    targets = np.log([one_client.mean_ms, one_client.p50_ms, one_client.p95_ms, one_client.p99_ms])
    weights = np.array([3.0, 1.0, 0.5, 0.25])  # the mean most: at one client, goodput = 1 / mean

    def loss(x):
        write_ms = np.maximum(np.exp(x[0] + abs(x[1]) * _NORMALS[1]), base.floor_ms)
        total = read_ms + write_ms
        got = np.log([total.mean(), *np.percentile(total, [50, 95, 99])])
        return float(np.sum(weights * (got - targets) ** 2))

    start = math.log(max(one_client.p50_ms - read.median_ms, one_client.p50_ms / 4, 0.1))
    best = minimize(loss, [start, 0.2], method="Nelder-Mead", options={"xatol": 1e-4, "fatol": 1e-9, "maxiter": 400})
    return float(math.exp(best.x[0])), float(abs(best.x[1]))


READ_SHARE_CAP = 0.5  # the most of the one-client op's median the base's read may take


def capped_read(base: Provider, one_client: ClientStats) -> Provider:
    """The base profile, its read median capped at half the one-client op's median.

    The op is a read and a write, two round trips; a read slower than that
    contradicts the measurement (GCS: the reference's 200 ms read against a
    173 ms median read-then-write op), so it is scaled down to fit.
    """
    cap = READ_SHARE_CAP * one_client.p50_ms
    return base if base.read_median_ms <= cap else replace(base, read_median_ms=cap)
