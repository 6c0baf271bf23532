"""The arriving transactions, drawn all at once with NumPy.

Everything about a transaction that does not depend on other transactions
(submit time, runtime, operation type, table) is drawn here in a few
vectorized calls; only the commit protocol, where transactions interact
through the catalog, is left to the engine.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from simcore.config import SimConfig

FAST_APPEND = 0
VALIDATED_OVERWRITE = 1
MERGE_APPEND = 2
OP_NAMES = ("fast_append", "validated_overwrite", "merge_append")

ARRIVAL_FLOOR_MS = 1.0  # the reference floors its lognormal gaps at 1 ms


@dataclass(frozen=True)
class Workload:
    """Per-transaction inputs, ordered by submit time (all arrays of length n)."""

    submit_ms: np.ndarray  # float64
    runtime_ms: np.ndarray  # float64
    op: np.ndarray  # int8: FAST_APPEND, VALIDATED_OVERWRITE or MERGE_APPEND
    table: np.ndarray  # int32, 0-based; for Zipf, table k has rank k + 1

    def __len__(self) -> int:
        return len(self.submit_ms)


def zipf_weights(num_tables: int, alpha: float) -> np.ndarray:
    """P(table k) for k = 0..n-1, proportional to 1/(k+1)^alpha."""
    w = 1.0 / np.power(np.arange(1, num_tables + 1, dtype=np.float64), alpha)
    return w / w.sum()


def table_probabilities(config: SimConfig) -> np.ndarray:
    if config.table_distribution == "zipf":
        return zipf_weights(config.num_tables, config.zipf_alpha)
    return np.full(config.num_tables, 1.0 / config.num_tables)


def draw_gaps(config: SimConfig, rng: np.random.Generator, n: int) -> np.ndarray:
    scale = config.inter_arrival_scale_ms
    if config.arrivals == "exponential":
        return rng.exponential(scale, n)
    gaps = rng.lognormal(np.log(scale), config.inter_arrival_sigma, n)
    return np.maximum(gaps, ARRIVAL_FLOOR_MS)


def draw_workload(config: SimConfig, rng: np.random.Generator) -> Workload:
    """Draw every transaction submitted before the end of the simulated time."""
    duration_ms = config.duration_ms
    mean_gap = config.inter_arrival_scale_ms
    if config.arrivals == "lognormal":
        mean_gap = max(ARRIVAL_FLOOR_MS, mean_gap * np.exp(config.inter_arrival_sigma ** 2 / 2))
    # Draw a little more than the expected count, then top up in the rare
    # case the sum falls short of the duration.
    expected = duration_ms / mean_gap
    chunks = [draw_gaps(config, rng, int(expected * 1.05 + 6 * np.sqrt(expected) + 16))]
    total = chunks[0].sum()
    while total < duration_ms:
        chunks.append(draw_gaps(config, rng, int(expected * 0.1) + 16))
        total += chunks[-1].sum()
    submit = np.cumsum(np.concatenate(chunks))
    submit = submit[submit < duration_ms]
    n = len(submit)

    runtime = rng.lognormal(np.log(config.runtime_median_ms), config.runtime_sigma, n)
    runtime = np.maximum(runtime, config.runtime_min_ms)

    u = rng.random(n)
    op = np.full(n, VALIDATED_OVERWRITE, dtype=np.int8)
    op[u < config.fast_append_ratio + config.merge_append_ratio] = MERGE_APPEND
    op[u < config.fast_append_ratio] = FAST_APPEND

    if config.num_tables == 1:
        table = np.zeros(n, dtype=np.int32)
    elif config.table_distribution == "uniform":
        table = rng.integers(0, config.num_tables, n).astype(np.int32)
    else:
        cdf = np.cumsum(table_probabilities(config))
        table = np.minimum(np.searchsorted(cdf, rng.random(n), side="right"),
                           config.num_tables - 1).astype(np.int32)
    return Workload(submit_ms=submit, runtime_ms=runtime, op=op, table=table)
