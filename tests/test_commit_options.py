"""Commit options beyond the reference: a CAS throttle, retry policies, an append catalog.

Each behaviour is checked on a tiny hand-made workload on the ``instant``
store (every storage operation takes exactly 1 ms), so every instant can be
worked out by hand. Agreement with the oracle on random workloads is in
test_engine_vs_oracle.py.
"""

import numpy as np
import pytest

from simcore import ConfigError, SimConfig, simulate
from simcore.engine import COMMITTED, run
from simcore.workload import FAST_APPEND, Workload

RUNTIME_MS = 1000.0
# The event timings these tests work out by hand are the published protocol's (tests/test_corrected_protocol.py
# has the corrected one's).
BASE = dict(provider="instant", duration_s=700.0, runtime_median_ms=RUNTIME_MS, runtime_sigma=0.0,
            runtime_min_ms=0.0, protocol="published")


def _run(config, submits, tables, runtimes=None):
    n = len(submits)
    runtimes = np.full(n, RUNTIME_MS) if runtimes is None else np.array(runtimes, float)
    workload = Workload(submit_ms=np.array(submits, float), runtime_ms=runtimes,
                        op=np.full(n, FAST_APPEND, np.int8), table=np.array(tables, np.int32))
    outcome = run(config, workload, np.random.default_rng(0))
    assert np.all(outcome.status == COMMITTED)
    latency = outcome.end_ms - outcome.commit_start_ms
    return latency.tolist(), outcome.retries.tolist()


def test_throttled_cas_without_a_token_is_refused():
    # Three transactions on three tables reach the CAS at 1004, 1014 and 1024 ms; one token a second,
    # a bucket of one; each failure waits 600 ms (backoff without growth or jitter) before retrying.
    # t0 takes the token at 1004 and commits. t1 is refused at 1014 (0.01 token) and at 1616 (0.612),
    # takes the refilled token at 2218 and commits at 2219. t2 is refused at 1024, 1626, 2228 (t1 has
    # just taken the token) and 2830, takes a token at 3432 and commits at 3433.
    config = SimConfig(num_tables=3, cas_throttle_per_s=1.0, retry_policy="backoff", backoff_base_ms=600.0,
                       backoff_multiplier=1.0, backoff_jitter=0.0, **BASE)
    latency, retries = _run(config, [0, 10, 20], [0, 1, 2])
    assert latency == pytest.approx([4, 2219 - 1011, 3433 - 1021])
    assert retries == [0, 2, 4]


def test_unthrottled_same_workload_commits_on_the_next_round_trip():
    latency, retries = _run(SimConfig(num_tables=3, **BASE), [0, 10, 20], [0, 1, 2])
    # t1 fails at 1015, re-reads by 1016, CAS decided 1017; t2 likewise 10 ms later.
    assert latency == pytest.approx([4, 6, 6])
    assert retries == [0, 1, 1]


@pytest.mark.parametrize("policy, tables, expected_ms", [
    # Same table. backoff: B fails at 1015, waits 100 ms (base), re-reads by 1116, rewrites its
    # manifests (3 ms), CAS at 1120: 109 ms after its runtime ended at 1011. split: B re-reads by 1016
    # to learn the conflict's kind, waits 100 ms, reads again by 1117: one read more, 110 ms.
    ("backoff", [0, 0], 109),
    ("split", [0, 0], 110),
    (None, [0, 0], 9),
    # Other table: only "backoff" waits; nobody rewrites manifests.
    ("backoff", [0, 1], 106),
    ("split", [0, 1], 6),
    (None, [0, 1], 6),
])
def test_retry_policies(policy, tables, expected_ms):
    config = SimConfig(num_tables=2, retry_policy=policy, backoff_base_ms=100.0 if policy else None,
                       backoff_jitter=0.0 if policy else None, **BASE)
    latency, _ = _run(config, [0, 10], tables)
    assert latency == pytest.approx([4, expected_ms])


@pytest.mark.parametrize("policy, tables, expected_ms", [
    ("backoff", [0, 1, 2], 106),  # fails 1015, waits to 1115, reads 1116, CAS 1117
    ("split", [0, 0, 0], 110),  # fails 1015, reads 1016, waits to 1116, reads 1117, manifests 1120, CAS 1121
])
def test_a_retry_after_backing_off_sees_the_commits_made_while_waiting(policy, tables, expected_ms):
    # A commits at 1005. C reads at 1011 (after A) and, with a 40 ms runtime, commits at 1055 while B
    # (failed at 1015) is waiting. B reads the catalog after its wait, so it sees C's commit and its
    # one retry succeeds; a snapshot taken before the wait would fail again.
    config = SimConfig(num_tables=3, retry_policy=policy, backoff_base_ms=100.0, backoff_jitter=0.0, **BASE)
    latency, retries = _run(config, [0, 10, 1010], tables, runtimes=[RUNTIME_MS, RUNTIME_MS, 40.0])
    assert latency == pytest.approx([4, expected_ms, 4])
    assert retries == [0, 1, 0]


def test_backoff_grows_geometrically_up_to_the_cap():
    # Eleven transactions on one table at 1 ms steps: the last one loses ten times in a row.
    config = SimConfig(num_tables=1, retry_policy="backoff", backoff_base_ms=1.0, backoff_multiplier=3.0,
                       backoff_cap_ms=50.0, backoff_jitter=0.0, **BASE)
    latency, retries = _run(config, list(range(0, 6)), [0] * 6)
    assert retries[0] == 0 and max(retries) >= 2
    # Waits are 1, 3, 9, 27, 50, 50 ms ...: a transaction with r retries waited sum(min(50, 3^i)) ms.
    for r, lat in zip(retries, latency):
        waited = sum(min(50.0, 3.0 ** i) for i in range(r))
        assert lat >= 4 + waited


def test_append_catalog_pays_the_append_and_a_discovery_read():
    config = SimConfig(provider="instant", catalog="append", num_tables=1, **{k: v for k, v in BASE.items()
                                                                               if k != "provider"})
    latency, retries = _run(config, [0, 10], [0, 0])
    # A: manifests 3 ms, append 1 ms, read back 1 ms. B: append fails at 1015, learns it at 1016,
    # re-reads by 1017, rewrites manifests (same table) by 1020, appends at 1021, learns at 1022.
    assert latency == pytest.approx([5, 11])
    assert retries == [0, 1]


def test_gcs_throttle_caps_throughput_near_one_commit_per_second():
    base = dict(provider="gcp", num_tables=10, inter_arrival_scale_ms=300, fast_append_ratio=1.0, protocol="published")
    free, = simulate(SimConfig(**base), [1])
    throttled, = simulate(SimConfig(**base, cas_throttle_per_s=1.0), [1])
    assert free["throughput_cps"] > 2.5  # seed 001 reads ~2.4 c/s usable for GCS at 10 tables
    assert throttled["throughput_cps"] <= 1.0
    assert throttled["success_rate"] < 0.5 < free["success_rate"]
    assert free["cas_throttled"] == 0 and throttled["cas_throttled"] > throttled["n_txns"]


@pytest.mark.parametrize("changes, field", [
    (dict(catalog="append", provider="s3"), "provider"),
    (dict(catalog="append", provider="gcp"), "provider"),
    (dict(retry_policy="sometimes"), "retry_policy"),
    (dict(backoff_base_ms=10.0), "backoff_base_ms"),
    (dict(retry_policy="backoff", backoff_multiplier=0.5), "backoff_multiplier"),
    (dict(retry_policy="split", backoff_jitter=2.0), "backoff_jitter"),
    (dict(cas_throttle_per_s=0.0), "cas_throttle_per_s"),
    (dict(cas_throttle_per_s=1.0, cas_throttle_burst=0.5), "cas_throttle_burst"),
    (dict(cas_throttle_burst=2.0), "cas_throttle_burst"),
    (dict(catalog="service", cas_throttle_per_s=1.0), "cas_throttle_per_s"),
])
def test_extension_fields_are_validated(changes, field):
    with pytest.raises(ConfigError) as error:
        SimConfig(**changes)
    assert error.value.field == field


def test_optional_fields_left_unset_do_not_change_existing_hashes():
    # Pinned: the hash of a plain exp4c config as the stored sweeps hold it. An optional field left
    # unset must leave it alone, or every stored row would look new and be recomputed.
    assert SimConfig(provider="s3", num_tables=10, fast_append_ratio=0.9, inter_arrival_scale_ms=100,
                     protocol="published").config_hash == "f6741f1855404752"
    assert SimConfig(retry_policy="immediate") == SimConfig()
    assert SimConfig(retry_policy="split").backoff_base_ms == 10.0
