"""The compiled engine against the scalar oracle, in distribution.

Both run the same configs on independent random streams, several seeds
each. For each metric we compare the two seed-means with a two-sample test:
the gap must stay within 5 standard errors of the difference (estimated from
the seed-to-seed spread of both), plus a small absolute slack for metrics
that sit at a bound (a success rate of exactly 1 has no spread). With fixed
seeds the test is deterministic; 5 standard errors keeps a spurious failure
across all comparisons below ~2% even with only 6 seeds a side, while a real
modelling difference (a missing convoy, a wrong retry rule) moves these
metrics by tens of standard errors.
"""

import math
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

import numpy as np
import pytest

from oracle import Oracle
from simcore import SimConfig
from simcore.builder import build_config
from simcore.metrics import summarize
from simcore.profiles import canonical_json
from simcore.providers import PROVIDERS
from simcore.simulate import run_seed

SEEDS = range(6)
SHORT = dict(runtime_median_ms=20_000.0, runtime_min_ms=5_000.0, duration_s=1000.0, protocol="published")
CORRECTED = {**SHORT, "protocol": "corrected"}

CONFIGS = {
    "s3 storage, 1 table, FA": SimConfig(provider="s3", num_tables=1, inter_arrival_scale_ms=300, **SHORT),
    "service 10 ms, 5 tables, FA/VO": SimConfig(provider="s3", catalog="service", catalog_latency_ms=10,
                                                num_tables=5, fast_append_ratio=0.7,
                                                inter_arrival_scale_ms=100, **SHORT),
    "s3x, 10 tables zipf, FA/VO": SimConfig(provider="s3x", num_tables=10, table_distribution="zipf",
                                            fast_append_ratio=0.5, inter_arrival_scale_ms=80, **SHORT),
    "azure, 2 tables, VO heavy": SimConfig(provider="azure", num_tables=2, fast_append_ratio=0.5,
                                           inter_arrival_scale_ms=400, **SHORT),
    "gcp, 1 table, exponential arrivals": SimConfig(provider="gcp", num_tables=1, arrivals="exponential",
                                                    inter_arrival_scale_ms=1000, **SHORT),
    "azurex, 3 tables, merge append + real conflicts": SimConfig(
        provider="azurex", num_tables=3, fast_append_ratio=0.4, merge_append_ratio=0.3,
        real_conflict_probability=0.3, inter_arrival_scale_ms=300, **SHORT),
    "azure append catalog, 2 tables, FA/VO": SimConfig(provider="azure", catalog="append", num_tables=2,
                                                      fast_append_ratio=0.7, inter_arrival_scale_ms=300, **SHORT),
    "s3, 5 tables, split retry policy": SimConfig(provider="s3", num_tables=5, fast_append_ratio=0.8,
                                                  retry_policy="split", inter_arrival_scale_ms=150, **SHORT),
    "s3, 5 tables, FA/VO/MA, convoy of the table's own commits": SimConfig(
        provider="s3", num_tables=5, fast_append_ratio=0.5, merge_append_ratio=0.2, vo_convoy="table",
        inter_arrival_scale_ms=100, **SHORT),
    "gcp throttled to 1 write/s, backoff": SimConfig(provider="gcp", num_tables=4, cas_throttle_per_s=1.0,
                                                     retry_policy="backoff", backoff_base_ms=200.0,
                                                     inter_arrival_scale_ms=1500, **SHORT),
    # Client presets: waits with one-sided jitter, a retry budget (shortened so it binds), manifest-list
    # rewrites on every retry; no wait and no rewrite; DuckLake's shrinking jitter.
    "iceberg-java, s3, 2 tables, real conflicts, tight budget": build_config(
        client="iceberg-java", provider="s3", num_tables=2, fast_append_ratio=0.7, real_conflict_probability=0.3,
        inter_arrival_scale_ms=150, retry_budget_ms=1500.0, **SHORT),
    "delta-rs, s3x, 3 tables": build_config(client="delta-rs", provider="s3x", num_tables=3, fast_append_ratio=0.8,
                                            inter_arrival_scale_ms=60, **SHORT),
    "ducklake, azure, 2 tables": build_config(client="ducklake", provider="azure", num_tables=2, fast_append_ratio=0.8,
                                              inter_arrival_scale_ms=300, **SHORT),
    # Writer workloads: on time, with maintenance; and falling behind (iceberg-go's range jitter).
    "40 writers every 4 s + 2 compactions, s3": SimConfig(
        provider="s3", num_tables=4, writers=40, commit_interval_s=4.0, fast_append_ratio=0.9,
        maintenance_jobs=2, maintenance_interval_s=60.0, **SHORT),
    "12 lagging writers, iceberg-go with 3 retries, gcp": build_config(
        client="iceberg-go", provider="gcp", num_tables=3, writers=12, commit_interval_s=5.0, retry=3, **SHORT),
}


def _held(provider: str, operation: str, hold_ms: float) -> str:
    """The built-in profile with a commit hold on its catalog's conditional write, as a config carries it."""
    base = PROVIDERS[provider]
    return canonical_json(base.with_conditional(operation, replace(base.conditional(operation), hold_ms=hold_ms)))


# The object's commit hold (docs/reference/profiles.md, "The measured model's terms"), on a storage and an append catalog.
CONFIGS.update({
    "s3x with a 40 ms commit hold, 2 tables, FA/VO": SimConfig(
        provider="s3x", provider_profile=_held("s3x", "cas", 40.0), num_tables=2, fast_append_ratio=0.7,
        inter_arrival_scale_ms=40, **SHORT),
    "azure append catalog with a 250 ms commit hold, 2 tables": SimConfig(
        provider="azure", catalog="append", provider_profile=_held("azure", "append", 250.0), num_tables=2,
        fast_append_ratio=0.8, inter_arrival_scale_ms=250, **SHORT),
})
# The corrected protocol (docs/reference/model.md) over the same spread of back-ends, mixes, clients and writers.
CONFIGS.update({
    "corrected: s3 storage, 1 table, FA": SimConfig(provider="s3", num_tables=1, inter_arrival_scale_ms=300,
                                                    **CORRECTED),
    "corrected: service 10 ms, 5 tables, FA/VO": SimConfig(provider="s3", catalog="service", catalog_latency_ms=10,
                                                          num_tables=5, fast_append_ratio=0.7,
                                                          inter_arrival_scale_ms=60, **CORRECTED),
    "corrected: azure, 2 tables, VO heavy, real conflicts": SimConfig(
        provider="azure", num_tables=2, fast_append_ratio=0.5, real_conflict_probability=0.3,
        inter_arrival_scale_ms=300, **CORRECTED),
    "corrected: gcp, 4 tables, MA": SimConfig(provider="gcp", num_tables=4, fast_append_ratio=0.5,
                                              merge_append_ratio=0.3, inter_arrival_scale_ms=800, **CORRECTED),
    "corrected: azurex append catalog, 2 tables, FA/VO": SimConfig(provider="azurex", catalog="append", num_tables=2,
                                                                   fast_append_ratio=0.8, inter_arrival_scale_ms=150,
                                                                   **CORRECTED),
    "corrected: s3, 5 tables, split retry policy": SimConfig(provider="s3", num_tables=5, fast_append_ratio=0.8,
                                                             retry_policy="split", inter_arrival_scale_ms=80,
                                                             **CORRECTED),
    "corrected: gcp throttled to 1 write/s, backoff": SimConfig(provider="gcp", num_tables=4, cas_throttle_per_s=1.0,
                                                                retry_policy="backoff", backoff_base_ms=300.0,
                                                                inter_arrival_scale_ms=1000, **CORRECTED),
    "corrected: iceberg-java, s3, 2 tables, real conflicts": build_config(
        client="iceberg-java", provider="s3", num_tables=2, fast_append_ratio=0.6, real_conflict_probability=0.5,
        inter_arrival_scale_ms=150, **CORRECTED),
    "corrected: delta-rs, s3x, 3 tables": build_config(client="delta-rs", provider="s3x", num_tables=3,
                                                       fast_append_ratio=0.8, inter_arrival_scale_ms=50, **CORRECTED),
    # Rounds of entries at 2 ms a read past the first: a load 100 versions past a checkpoint costs ~0.4 s more.
    "corrected: delta-rs writers, s3, rounds of entries cost per read": build_config(
        client="delta-rs", provider="s3-rounds", num_tables=1, fast_append_ratio=1.0, writers=8,
        commit_interval_s=2.0, provider_profile=canonical_json(replace(PROVIDERS["s3"], name="s3-rounds",
                                                                       read_round_ms_per_read=2.0)), **CORRECTED),
    "corrected: delta-rs writers at one pattern of phases (a real run's)": build_config(
        client="delta-rs", provider="s3", num_tables=1, fast_append_ratio=1.0, writers=8, commit_interval_s=2.0,
        writer_phase_seed=0, **CORRECTED),
    "corrected: pyiceberg writers on a SQL catalog, the call as traced": build_config(
        client="pyiceberg", provider="s3", catalog="service", catalog_latency_ms=1.0, num_tables=1,
        fast_append_ratio=1.0, writers=6, commit_interval_s=3.0, **CORRECTED),
    "corrected: 40 writers every 4 s + 2 compactions, s3": SimConfig(
        provider="s3", num_tables=2, writers=40, commit_interval_s=4.0, maintenance_jobs=2,
        maintenance_interval_s=120.0, **CORRECTED),
})

# metric -> absolute slack
METRICS = {
    "success_rate": 0.004,
    "throughput_cps": 0.0,
    "commit_latency_mean_ms": 0.0,
    "commit_latency_p50_ms": 0.0,
    "retries_mean": 0.0,
    "fa_success_rate": 0.004,
    "vo_success_rate": 0.01,
    "aborted_validation": 1.0,
    "aborted_retry_budget": 1.0,
    "writer_success_rate": 0.004,
    "writer_commit_latency_p50_ms": 0.0,
    "writer_lag_p50_s": 0.01,
}


def _per_txn(row, key):
    # Conflict counts scale with the number of transactions; compare rates.
    return row[key] / row["n_txns"]


def _oracle_summary(config: SimConfig, seed: int) -> dict:
    return summarize(config, *Oracle(config, seed).run())


def _engine_summaries(config: SimConfig) -> list:
    return [summarize(config, *run_seed(config, seed)) for seed in SEEDS]


@pytest.fixture(scope="module")
def summaries():
    # Both sides run in one process per core (spawned, so each child imports afresh and shares nothing with
    # this process's Ray or numba state). The engine's runs go first: on a machine without Numba's on-disk
    # cache each config's first run compiles a specialisation of the kernel (tens of seconds), and spread
    # over the cores those compiles no longer queue one after another; the scalar oracle's runs follow.
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1, mp_context=multiprocessing.get_context("spawn")) as pool:
        engine = {name: pool.submit(_engine_summaries, config) for name, config in CONFIGS.items()}
        oracle = {(name, seed): pool.submit(_oracle_summary, config, seed)
                  for name, config in CONFIGS.items() for seed in SEEDS}
        return {name: (engine[name].result(), [oracle[name, seed].result() for seed in SEEDS]) for name in CONFIGS}


def _check(engine_values, oracle_values, slack):
    a, b = np.asarray(engine_values, float), np.asarray(oracle_values, float)
    if np.isnan(a).all() and np.isnan(b).all():
        return None
    se = math.sqrt(a.var(ddof=1) / len(a) + b.var(ddof=1) / len(b))
    gap = abs(a.mean() - b.mean())
    if gap > 5 * se + slack:
        return f"engine {a.mean():.5g} vs oracle {b.mean():.5g} (gap {gap:.3g} > 5 x se {se:.3g} + {slack})"
    return None


@pytest.mark.parametrize("name", list(CONFIGS))
def test_engine_matches_oracle_in_distribution(summaries, name):
    engine, oracle = summaries[name]
    failures = []
    for metric, slack in METRICS.items():
        problem = _check([r[metric] for r in engine], [r[metric] for r in oracle], slack)
        if problem:
            failures.append(f"{metric}: {problem}")
    for metric in ("conflicts_same_table", "conflicts_catalog_only"):
        problem = _check([_per_txn(r, metric) for r in engine], [_per_txn(r, metric) for r in oracle], 0.002)
        if problem:
            failures.append(f"{metric} per txn: {problem}")
    assert not failures, f"{name}:\n" + "\n".join(failures)


def test_configs_exercise_contention(summaries):
    """The spread must include real contention, or agreement would be vacuous."""
    lowest = min(np.mean([r["success_rate"] for r in engine]) for engine, _ in summaries.values())
    retries = max(np.mean([r["retries_mean"] for r in engine]) for engine, _ in summaries.values())
    same_table = sum(r["conflicts_same_table"] for engine, _ in summaries.values() for r in engine)
    validation = sum(r["aborted_validation"] for engine, _ in summaries.values() for r in engine)
    assert lowest < 0.9 and retries > 2 and same_table > 0 and validation > 0
