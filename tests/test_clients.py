"""Client presets and writer workloads, pinned on hand-computed timelines.

On the ``instant`` store every storage and catalog operation takes exactly
1 ms, so each instant below is worked out by hand. Two transactions on one
table: A is submitted at 0 and B at 10, both with a 1000 ms runtime. A reads
the catalog by 1, ends its runtime at 1001, writes its manifests (ML read, MF
write, ML write) by 1004 and commits at 1005. B reads by 11, ends its runtime
at 1011 (its commit starts), writes its manifests by 1014 and its CAS fails
at 1015. What B does next is the client's retry behaviour. Agreement with
the oracle on random workloads is in test_engine_vs_oracle.py.
"""

import numpy as np
import pytest

from simcore import ConfigError, SimConfig
from simcore.builder import build_config
from simcore.clients import client_fields, client_names
from simcore.engine import (ABORTED_BUDGET, ABORTED_MAX_RETRIES, ABORTED_VALIDATION, COMMITTED, run)
from simcore.workload import (FAST_APPEND, MAINTENANCE, VALIDATED_OVERWRITE, WRITER, Workload,
                              draw_writer_workload)

RUNTIME_MS = 1000.0
# The event timings these tests work out by hand are the published protocol's (tests/test_corrected_protocol.py
# has the corrected one's).
BASE = dict(provider="instant", duration_s=700.0, runtime_median_ms=RUNTIME_MS, runtime_sigma=0.0,
            runtime_min_ms=0.0, protocol="published")


def _run(config, submits, tables=None, ops=None, runtimes=None, seed=0, chain_next=None):
    n = len(submits)
    workload = Workload(
        submit_ms=np.array(submits, float),
        runtime_ms=np.full(n, RUNTIME_MS) if runtimes is None else np.array(runtimes, float),
        op=np.full(n, FAST_APPEND, np.int8) if ops is None else np.array(ops, np.int8),
        table=np.zeros(n, np.int32) if tables is None else np.array(tables, np.int32),
        chain_next=None if chain_next is None else np.array(chain_next, np.int64))
    return run(config, workload, np.random.default_rng(seed))


def _latency(outcome):
    return (outcome.end_ms - outcome.commit_start_ms).tolist()


def test_every_preset_loads_and_reference_is_todays_behaviour():
    assert {"reference", "iceberg-java", "pyiceberg", "iceberg-go", "delta-rs", "ducklake"} <= set(client_names())
    assert client_fields("reference") == {}
    assert build_config(client="reference", num_tables=10) == SimConfig(num_tables=10)
    assert build_config(client="reference").config_hash == SimConfig().config_hash
    java = build_config(client="iceberg-java")
    assert (java.retry, java.backoff_base_ms, java.backoff_multiplier, java.backoff_cap_ms, java.backoff_jitter,
            java.backoff_jitter_shape, java.retry_budget_ms) == (4, 100.0, 2.0, 60000.0, 0.1, "up", 1_800_000.0)
    assert build_config(client="delta-rs").retry == 15 and build_config(client="delta-rs").retry_policy is None
    assert build_config(client="ducklake").retry == 9  # ten attempts
    assert build_config(client="iceberg-java", retry=7).retry == 7  # any field stays overridable
    with pytest.raises(ConfigError) as error:
        build_config(client="iceberg-rust")
    assert error.value.field == "client"


@pytest.mark.parametrize("tables, expected_ms", [
    # Waits 100 ms (jitter off), re-reads by 1116, writes a new manifest list over its reused manifest
    # (ML read + ML write) by 1118, CAS at 1119: 108 ms after 1011. Iceberg Java rewrites the manifest
    # list after a conflict on another table too (the reference would skip the rewrite: 106).
    ([0, 0], 108),
    ([0, 1], 108),
])
def test_iceberg_java_waits_then_refreshes_and_rewrites_only_the_manifest_list(tables, expected_ms):
    config = build_config(client="iceberg-java", num_tables=2, backoff_jitter=0.0, **BASE)
    outcome = _run(config, [0, 10], tables)
    assert _latency(outcome) == pytest.approx([4, expected_ms])
    assert outcome.manifest_file_writes.tolist() == [1, 1]  # the data manifest is written once
    assert outcome.manifest_list_writes.tolist() == [1, 2]


def test_iceberg_java_jitter_only_lengthens_the_wait():
    # Wait before retry 1: 100 ms + U[0, 10%): B's latency is in [108, 118), never below.
    config = build_config(client="iceberg-java", **BASE)
    latencies = [_latency(_run(config, [0, 10], seed=seed))[1] for seed in range(40)]
    assert min(latencies) >= 108 and max(latencies) < 118
    assert max(latencies) - min(latencies) > 5  # the jitter is really drawn


def test_iceberg_java_waits_double_per_retry():
    # Ten transactions 1 ms apart on one table: the last to commit lost k times and waited
    # 100 + 200 + ... (k terms) ms, each retry then costing a read, an ML rewrite and a CAS (4 ms).
    config = build_config(client="iceberg-java", backoff_jitter=0.0, **BASE)
    outcome = _run(config, list(range(0, 10)))
    for retries, latency, status in zip(outcome.retries, _latency(outcome), outcome.status):
        if status == COMMITTED:
            assert latency == pytest.approx(4 + sum(100 * 2 ** i + 4 for i in range(retries)))
    assert outcome.retries.max() >= 2


def _budget_case(budget_ms):
    # C (submitted at 1110, runtime 3 ms) reads by 1111, writes manifests by 1117 and commits at 1118,
    # while B, back from its 100 ms wait, re-read at 1116 and sends its CAS at 1118: B fails again at
    # 1119, 108 ms into its commit, on its second attempt.
    config = build_config(client="iceberg-java", backoff_jitter=0.0, retry_budget_ms=budget_ms, **BASE)
    return _run(config, [0, 10, 1110], runtimes=[RUNTIME_MS, RUNTIME_MS, 3.0])


def test_retry_budget_is_checked_from_the_second_attempt_on():
    outcome = _budget_case(1.0)  # already exceeded at B's first failure (4 ms), but that one is retried
    assert outcome.status.tolist() == [COMMITTED, ABORTED_BUDGET, COMMITTED]
    assert outcome.end_ms[1] == pytest.approx(1119)  # gives up at once, without looking again
    assert outcome.retries[1] == 1


def test_within_the_budget_the_second_retry_waits_twice_as_long():
    outcome = _budget_case(1_800_000.0)
    # B fails at 1119, waits 200 ms, reads by 1320, rewrites its ML by 1322, commits at 1323.
    assert outcome.status.tolist() == [COMMITTED] * 3
    assert _latency(outcome)[1] == pytest.approx(1323 - 1011)


def test_iceberg_java_validation_conflict_fails_at_once_with_retries_left():
    # B is an overwrite that really conflicts: after its wait and refresh (1116) it reads the one
    # manifest list it fell behind (1117) and fails validation there, not retried.
    config = build_config(client="iceberg-java", backoff_jitter=0.0, real_conflict_probability=1.0, **BASE)
    outcome = _run(config, [0, 10], ops=[FAST_APPEND, VALIDATED_OVERWRITE])
    assert outcome.status.tolist() == [COMMITTED, ABORTED_VALIDATION]
    assert outcome.end_ms[1] == pytest.approx(1117) and outcome.retries[1] == 0


def test_iceberg_go_without_retries_fails_on_the_first_conflict():
    # No retry by default: B's CAS fails at 1015; it reads the catalog (1016) and gives up.
    outcome = _run(build_config(client="iceberg-go", **BASE), [0, 10])
    assert outcome.status.tolist() == [COMMITTED, ABORTED_MAX_RETRIES]
    assert outcome.end_ms[1] == pytest.approx(1016)


def test_pyiceberg_0_12_retries_as_iceberg_java_does():
    # 0.12.0's Transaction.commit_transaction: Java's defaults. B fails, waits 100 ms (no jitter here),
    # refreshes, rewrites its manifest list and commits: the same timeline as Java's under the published
    # protocol. Under the corrected one its attempts are its call as traced (test_corrected_protocol.py).
    traced = ("client", "attempt_reads", "attempt_writes", "retry_reads", "retry_writes")
    fields = {k: v for k, v in build_config(client="pyiceberg").to_dict().items() if k not in traced}
    assert fields == {k: v for k, v in build_config(client="iceberg-java").to_dict().items() if k not in traced}
    assert build_config(client="iceberg-java").attempt_reads is None
    pyiceberg = _run(build_config(client="pyiceberg", backoff_jitter=0.0, **BASE), [0, 10])
    java = _run(build_config(client="iceberg-java", backoff_jitter=0.0, **BASE), [0, 10])
    assert pyiceberg.status.tolist() == [COMMITTED, COMMITTED] and pyiceberg.retries[1] == 1
    assert _latency(pyiceberg) == pytest.approx(_latency(java))
    assert _latency(pyiceberg)[1] > 100.0


def test_iceberg_go_waits_uniformly_between_the_minimum_and_the_doubling_ceiling():
    # With retries raised: the first wait is U[100, 100] = 100 ms exactly; B then commits like Java's.
    config = build_config(client="iceberg-go", retry=3, **BASE)
    assert _latency(_run(config, [0, 10]))[1] == pytest.approx(108)


def test_delta_rs_retries_at_once_and_rewrites_nothing():
    # B fails at 1015, reads the winning commit by 1016 and writes its log entry again at 1017.
    outcome = _run(build_config(client="delta-rs", **BASE), [0, 10])
    assert _latency(outcome) == pytest.approx([4, 6])
    # Sixteen transactions at once on one table: with 15 retries every one of them commits;
    # the reference's 10 retries lose the last ones.
    assert (_run(build_config(client="delta-rs", **BASE), list(range(16))).status == COMMITTED).all()
    assert (_run(SimConfig(**BASE), list(range(16))).status == ABORTED_MAX_RETRIES).any()


def test_ducklake_wait_shrinks_by_up_to_half():
    # Wait before retry 1: 100 ms x U(0.5, 1]; then a read and the CAS (no rewrite): 6 + wait.
    config = build_config(client="ducklake", **BASE)
    latencies = [_latency(_run(config, [0, 10], seed=seed))[1] for seed in range(40)]
    assert min(latencies) > 56 and max(latencies) <= 106
    assert max(latencies) - min(latencies) > 20


# -- writer workloads ------------------------------------------------------------------------------

def test_a_late_writer_commits_at_once_and_then_keeps_its_schedule():
    # One writer, 1 s interval: commits due at 0, 1000 and 2000. The first has a 1500 ms runtime
    # (a slow batch): it reads by 1, commits at 1505. The second, due at 1000, starts at once when
    # the first ends (1505): read 1506, manifests 1509, CAS 1510. The third is due one interval
    # after the second was *due*, 2000, and starts then: read 2001, manifests 2004, CAS 2005.
    config = SimConfig(**BASE, writers=1, commit_interval_s=1.0)
    outcome = _run(config, [0, 1000, 2000], runtimes=[1500, 0, 0], chain_next=[1, 2, -1])
    assert outcome.status.tolist() == [COMMITTED] * 3
    assert outcome.start_ms.tolist() == pytest.approx([0, 1505, 2000])
    assert outcome.end_ms.tolist() == pytest.approx([1505, 1510, 2005])


def test_maintenance_overlapping_writers_pays_their_commits():
    # A compaction (VO, 1500 ms runtime) of table 0 reads the catalog by 1; a writer on the same table
    # commits at 5 and 1005 meanwhile. The compaction's CAS fails at 1505; it re-reads by 1506, reads
    # the 2 manifest lists it fell behind (1508), rewrites its manifests (1511) and commits at 1512.
    # The writer's commit due at 1503 is not slowed: read 1504, manifests 1507, CAS at 1508 succeeds
    # (between the compaction's failed CAS and its retry), so the compaction fails a second time at 1512,
    # re-reads (1513), reads 1 more manifest list (1514), rewrites (1517) and commits at 1518.
    config = SimConfig(**BASE, writers=1, commit_interval_s=1.0, maintenance_jobs=1, maintenance_interval_s=600.0)
    submits = [0, 0, 1000, 1503]
    outcome = _run(config, submits, runtimes=[1500, 0, 0, 0],
                   ops=[VALIDATED_OVERWRITE, FAST_APPEND, FAST_APPEND, FAST_APPEND], chain_next=[-1, 2, 3, -1])
    assert outcome.status.tolist() == [COMMITTED] * 4
    assert outcome.end_ms.tolist() == pytest.approx([1518, 5, 1005, 1508])
    assert outcome.retries.tolist() == [2, 0, 0, 0]
    assert outcome.manifest_list_reads[0] == 1 + 2 + 1 + 1 + 1  # first attempt, convoy 2, rewrite, convoy 1, rewrite


def test_writer_schedule_draws_one_chain_per_job():
    config = SimConfig(provider="s3", num_tables=3, writers=5, commit_interval_s=60.0, maintenance_jobs=2,
                       maintenance_interval_s=900.0, duration_s=3600.0)
    workload = draw_writer_workload(config, np.random.default_rng(3))
    assert np.all(np.diff(workload.submit_ms) >= 0)
    heads = set(range(len(workload))) - set(workload.chain_next[workload.chain_next >= 0].tolist())
    chains = []
    for head in heads:
        chain, k = [head], head
        while workload.chain_next[k] >= 0:
            k = workload.chain_next[k]
            chain.append(k)
        chains.append(chain)
    assert sorted(len(c) for c in chains) == [4, 4, 60, 60, 60, 60, 60]
    for chain in chains:
        due = workload.submit_ms[chain]
        kind = workload.job_class[chain[0]]
        interval = 60_000.0 if kind == WRITER else 900_000.0
        assert np.allclose(np.diff(due), interval) and 0 <= due[0] < interval
        assert len(set(workload.table[chain].tolist())) == 1 and set(workload.job_class[chain].tolist()) == {kind}
        if kind == MAINTENANCE:
            assert (workload.op[chain] == VALIDATED_OVERWRITE).all() and (workload.runtime_ms[chain] >= 30_000).all()
        else:
            assert (workload.runtime_ms[chain] == 0).all()
    writer_tables = sorted(workload.table[c[0]] for c in chains if workload.job_class[c[0]] == WRITER)
    assert writer_tables == [0, 0, 1, 1, 2]  # writer w writes table w mod 3


@pytest.mark.parametrize("changes, field", [
    (dict(writers=0, commit_interval_s=60.0), "writers"),
    (dict(writers=10), "commit_interval_s"),
    (dict(commit_interval_s=60.0), "commit_interval_s"),
    (dict(maintenance_jobs=1, maintenance_interval_s=600.0), "maintenance_jobs"),
    (dict(writers=2, commit_interval_s=60.0, maintenance_jobs=1), "maintenance_interval_s"),
    (dict(retry_budget_ms=0.0), "retry_budget_ms"),
    (dict(retry_rewrite="everything"), "retry_rewrite"),
    (dict(backoff_jitter_shape="up"), "backoff_jitter_shape"),
    (dict(retry_policy="backoff", backoff_jitter_shape="sideways"), "backoff_jitter_shape"),
    (dict(client="iceberg-rust"), "client"),
    (dict(client="delta-rs", retry_rewrite="none", table_load_reads=0), "table_load_reads"),
    (dict(client="delta-rs", retry_rewrite="none", table_load_reads=2.5), "table_load_reads"),
])
def test_new_fields_are_validated(changes, field):
    with pytest.raises(ConfigError) as error:
        SimConfig(**changes)
    assert error.value.field == field


def test_new_fields_at_their_defaults_leave_hashes_alone():
    pinned = SimConfig(provider="s3", num_tables=10, fast_append_ratio=0.9, inter_arrival_scale_ms=100,
                       protocol="published")
    assert pinned.config_hash == "f6741f1855404752"
    assert pinned.replace(client="reference", retry_rewrite="conflict").config_hash == "f6741f1855404752"
    assert SimConfig(retry_policy="backoff", backoff_jitter_shape="symmetric") == SimConfig(retry_policy="backoff")
    assert build_config(client="iceberg-java").config_hash != SimConfig().config_hash


# -- sweeps -----------------------------------------------------------------------------------------

def test_clients_sweep_applies_each_preset_on_exp4c():
    from sweeps import clients, exp4c

    configs = clients.GRID.configs()
    assert {c.client for c in configs} == set(client_names()) - {"reference"} | {None}
    assert len(configs) == len(client_names()) * len(exp4c.GRID.configs())
    for config in configs:
        expected = build_config(client=config.client or "reference", **{
            k: getattr(config, k) for k in ("catalog", "provider", "num_tables", "fast_append_ratio",
                                            "inter_arrival_scale_ms")})
        assert config == expected
    # The reference points are exp4c's own: same hashes, so stored exp4c rows serve them.
    assert {c.config_hash for c in configs if c.client is None} == {c.config_hash for c in exp4c.GRID.configs()}


def test_writers_sweeps_differ_only_by_maintenance():
    from sweeps import writers

    plain, maintained = (grid.configs() for grid in writers.GRIDS)
    assert len(plain) == len(maintained) > 0
    assert all(c.writers and c.commit_interval_s in (60.0, 300.0) and c.maintenance_jobs is None for c in plain)
    assert all(c.maintenance_jobs == 2 and c.maintenance_interval_s == 600.0 for c in maintained)
    assert [c.replace(maintenance_jobs=None, maintenance_interval_s=None) for c in maintained] == list(plain)


def test_transactions_table_shows_each_writer_commit_lag():
    from simcore import simulate_transactions

    config = SimConfig(provider="s3", num_tables=2, writers=20, commit_interval_s=2.0, maintenance_jobs=1,
                       maintenance_interval_s=300.0, duration_s=1900.0)
    table = simulate_transactions(config, 1)
    classes = set(table.column("job_class").to_pylist())
    assert classes == {"writer", "maintenance"}
    lag = table.column("lag_ms").to_numpy(zero_copy_only=False)
    started = ~np.isnan(lag)
    assert started.sum() > 0.9 * len(lag) and (lag[started] >= 0).all()
    assert (lag[started] > 0).any()  # 20 writers every 2 s on s3 fall behind now and then
    assert (table.column("catalog_reads").to_numpy() >= 1).sum() == started.sum()


def test_command_line_flags_override_the_preset(capsys):
    import json

    from commit_sweeps.simcore_command import main

    base = ["run", "--provider", "instant", "--catalog", "storage", "--num-tables", "2", "--fast-append-ratio", "1",
            "--inter-arrival-scale-ms", "500", "--duration-s", "1900", "--seeds", "1", "--json"]
    assert main(base + ["--client", "iceberg-java", "--retry", "7", "--retry-policy", "immediate"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert (row["client"], row["retry"], row["retry_policy"], row["backoff_base_ms"], row["retry_rewrite"]) == \
        ("iceberg-java", 7, None, None, "manifest_list")
    assert main(base + ["--client", "ducklake"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert (row["retry"], row["retry_policy"], row["backoff_jitter_shape"]) == (9, "backoff", "down")
    assert main(base[:-1] + ["--client", "spark"]) == 2
    assert capsys.readouterr().err.startswith("error: client: 'spark'")


def test_a_log_entry_commits_listings_keep_the_stores_read_without_the_objects_contention():
    # The measured S3 profile's contention slows reads of the raced catalog object (contention_in "read").
    # A delta-rs commit lists the log instead and creates new keys: its listings take the store's read as
    # drawn without those terms, so it runs exactly as under the profile with them zeroed; a CAS of the
    # catalog object (Iceberg) still pays them.
    from dataclasses import replace

    from simcore.engine import P_READ_CONTENTION_EXPONENT, P_READ_CONTENTION_SIGMA, protocol_parameters
    from simcore.profiles import canonical_json, measured_profile
    from simcore.simulate import simulate

    profile = measured_profile("s3")
    assert profile.cas.contention_in == "read" and profile.cas.contention_exponent > 0
    quiet = profile.with_conditional("cas", replace(profile.cas, contention_exponent=0.0, contention_sigma=0.0))
    fields = dict(provider="s3", num_tables=1, duration_s=3700.0, writers=12, commit_interval_s=1.0,
                  fast_append_ratio=1.0, catalog="storage")

    def outcome(client, chosen):
        config = build_config(client=client, provider_profile=canonical_json(chosen), **fields)
        return config, simulate(config, seeds=(1,))

    delta, delta_result = outcome("delta-rs", profile)
    assert protocol_parameters(delta)[[P_READ_CONTENTION_EXPONENT, P_READ_CONTENTION_SIGMA]].tolist() == [0.0, 0.0]
    assert delta_result == outcome("delta-rs", quiet)[1]
    java, java_result = outcome("iceberg-java", profile)
    assert protocol_parameters(java)[P_READ_CONTENTION_EXPONENT] == profile.cas.contention_exponent
    assert java_result != outcome("iceberg-java", quiet)[1]
