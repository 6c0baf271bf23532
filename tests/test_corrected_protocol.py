"""The corrected commit protocol (docs/reference/model.md), event by event, on the 1 ms "instant" store.

Every storage operation takes exactly 1 ms there, so each transaction's
timeline can be worked out by hand: a catalog read observes the catalog
half-way (0.5 ms), an attempt reads and writes the table metadata and the
manifest list (4 ms), the CAS is decided half-way through its 1 ms, a
failed CAS costs a catalog read and a table-metadata read, and a retry with
no overlap is the CAS alone. tests/test_engine_vs_oracle.py checks the same
protocol in distribution against an independent implementation.
"""

from dataclasses import replace

import numpy as np
import pytest

from simcore import SimConfig, simulate
from simcore.builder import build_config
from simcore.errors import ConfigError
from simcore.profiles import canonical_json
from simcore.providers import CATALOG_OBJECT_BYTES, PROVIDERS, OperationLatency
from simcore.workload import FAST_APPEND, VALIDATED_OVERWRITE
from timelines import BASE, RUNTIME_MS, commit_latency, run_committed



def test_the_default_is_corrected_and_published_is_chosen_explicitly():
    assert SimConfig().protocol == "corrected"
    assert SimConfig(protocol="published").config_hash != SimConfig().config_hash
    assert SimConfig(protocol=None).protocol == "published"  # a stored config from before the field


def test_a_lone_commit_pays_table_metadata_and_manifest_list_io_then_the_cas():
    outcome = run_committed(SimConfig(num_tables=1, **BASE), [0.0], [0])
    # read 1 ms, runtime, then TM read + ML read + ML write + TM write (4 ms) and the CAS (1 ms).
    assert outcome.commit_start_ms[0] == pytest.approx(1.0 + RUNTIME_MS)
    assert commit_latency(outcome, 0) == pytest.approx(5.0)
    assert outcome.commit_ms[0] == pytest.approx(outcome.end_ms[0] - 0.5)  # decided half-way
    assert (outcome.table_metadata_reads[0], outcome.manifest_list_reads[0], outcome.manifest_list_writes[0],
            outcome.table_metadata_writes[0], outcome.manifest_file_writes[0]) == (1, 1, 1, 1, 0)
    published = run_committed(SimConfig(num_tables=1, protocol="published", **BASE), [0.0], [0])
    assert commit_latency(published, 0) == pytest.approx(4.0)  # ML read + MF write + ML write + CAS
    assert published.manifest_file_writes[0] == 1 and published.table_metadata_reads[0] == 0


def test_a_retry_without_overlap_is_the_cas_alone():
    # B loses to A, which wrote another table: B re-reads the catalog (1 ms) and the table metadata (1 ms),
    # finds its table unchanged and sends the CAS again at once.
    outcome = run_committed(SimConfig(num_tables=2, **BASE), [0.0, 0.1], [0, 1])
    assert commit_latency(outcome, 0) == pytest.approx(5.0)
    assert commit_latency(outcome, 1) == pytest.approx(5.0 + 1.0 + 1.0 + 1.0)
    assert outcome.retries[1] == 1 and outcome.conflicts_catalog_only[1] == 1
    assert outcome.table_metadata_reads[1] == 2 and outcome.table_metadata_writes[1] == 1
    assert outcome.manifest_list_writes[1] == 1


def test_a_retry_after_a_same_table_conflict_redoes_the_whole_attempt():
    outcome = run_committed(SimConfig(num_tables=1, **BASE), [0.0, 0.1], [0, 0])
    assert commit_latency(outcome, 1) == pytest.approx(5.0 + 1.0 + 1.0 + 4.0 + 1.0)
    assert outcome.conflicts_same_table[1] == 1
    assert (outcome.table_metadata_reads[1], outcome.manifest_list_reads[1], outcome.manifest_list_writes[1],
            outcome.table_metadata_writes[1]) == (3, 2, 2, 2)


@pytest.mark.parametrize("start_ms, conflicts", [(1004.8, 1), (1005.2, 0)])
def test_a_read_observes_the_catalog_half_way(start_ms, conflicts):
    # A's CAS is decided at 1005.5 ms. B's read sent at 1004.8 observes the catalog at 1005.3, before the
    # commit, although it returns after it; sent at 1005.2 it observes at 1005.7 and sees the commit.
    outcome = run_committed(SimConfig(num_tables=1, **BASE), [0.0, start_ms], [0, 0], runtimes=[RUNTIME_MS, 0.0])
    assert outcome.commit_ms[0] == pytest.approx(1005.5)
    assert outcome.retries[1] == conflicts


def test_the_vo_convoy_counts_the_tables_own_commits_less_the_current_list():
    # Two commits land on T's table while it runs (and one on another table): T's convoy reads the one
    # historical manifest list its next attempt's own read does not cover.
    submits = [0.0, 10.0, 20.0, 30.0]
    tables = [0, 0, 0, 1]
    ops = [VALIDATED_OVERWRITE, FAST_APPEND, FAST_APPEND, FAST_APPEND]
    runtimes = [RUNTIME_MS, 100.0, 200.0, 300.0]
    outcome = run_committed(SimConfig(num_tables=2, **BASE), submits, tables, ops, runtimes)
    assert outcome.manifest_list_reads[0] == 1 + 1 + 1  # first attempt, convoy, second attempt
    # fails at 1005.5, answered 1006; catalog read, TM read, one convoy read, a full attempt, the CAS.
    assert commit_latency(outcome, 0) == pytest.approx(5.0 + 1.0 + 1.0 + 1.0 + 4.0 + 1.0)
    published = run_committed(SimConfig(num_tables=2, protocol="published", **BASE), submits, tables, ops, runtimes)
    assert published.manifest_list_reads[0] == 1 + 3 + 1  # the published convoy: every catalog commit


def test_a_manifest_list_client_rewrites_the_table_metadata_on_every_retry():
    config = build_config(client="iceberg-java", num_tables=2, backoff_jitter=0.0, **BASE)
    outcome = run_committed(config, [0.0, 0.1], [0, 1])
    # No overlap, yet the retry writes a new manifest list and table metadata, after the client's 100 ms wait.
    assert outcome.table_metadata_writes[1] == 2 and outcome.manifest_list_writes[1] == 2
    assert commit_latency(outcome, 1) == pytest.approx(5.0 + 100.0 + 1.0 + 1.0 + 4.0 + 1.0)


def test_the_storage_catalog_cas_is_at_least_a_put_of_the_catalog_object():
    # S3: the CAS lognormal (median 61 ms, sigma 0.14) against a PUT (60 ms, sigma 0.29): the larger is slower.
    quiet = dict(inter_arrival_scale_ms=5_000.0, runtime_median_ms=1000.0, runtime_sigma=0.0,
                 runtime_min_ms=1000.0, duration_s=20_000.0)
    corrected, = simulate(SimConfig(provider="s3", **quiet), [1])
    service, = simulate(SimConfig(provider="s3", catalog="service", catalog_latency_ms=61.0, **quiet), [1])
    # Same I/O chain, the CAS is the only difference: E[max(CAS, PUT)] against a fixed 61 ms.
    s3 = PROVIDERS["s3"]
    rng = np.random.default_rng(3)

    def draws(dist):
        return np.maximum(dist.floor_ms, np.exp(dist.mu + dist.sigma * rng.standard_normal(200_000)))

    expected = float(np.maximum(draws(s3.conditional_latency("cas")), draws(s3.write(CATALOG_OBJECT_BYTES))).mean())
    assert expected - 61.0 > 5.0  # the PUT's wider spread makes the larger draw markedly slower
    gap = corrected["commit_latency_mean_ms"] - service["commit_latency_mean_ms"]
    assert gap == pytest.approx(expected - 61.0, abs=1.5)


def test_requests_per_commit_count_the_table_metadata():
    row, = simulate(SimConfig(provider="s3", num_tables=1, inter_arrival_scale_ms=300, duration_s=1900.0), [1])
    assert row["requests_table_metadata_write_per_commit"] == pytest.approx(
        row["requests_manifest_list_write_per_commit"])
    # A failed CAS reads the table metadata once more than it writes it.
    assert row["requests_table_metadata_read_per_commit"] > row["requests_table_metadata_write_per_commit"]
    assert row["requests_manifest_file_write_per_commit"] == 0.0


# -- a delta-rs commit is a write_deltalake call (docs/reference/clients.md, "delta-rs on the model") -------------

def _delta(**fields):
    return build_config(client="delta-rs", num_tables=1, **{**BASE, **fields})


def test_a_delta_rs_call_loads_the_table_and_writes_its_data_before_the_commit():
    # As traced (table_load_reads 14, a table with a checkpoint): the load's listing (0-1 ms), the runtime,
    # 14 rounds of reads (_last_checkpoint, the checkpoint and the log's entries) and the data file: the
    # commit starts at 1016. It lists (1017), creates (decided 1017.5, answered 1018), and the post-commit
    # hook updates the snapshot (a listing and two rounds of the new entry: 1021) and lists the log once
    # more (1022).
    outcome = run_committed(_delta(), [0.0], [0])
    assert outcome.commit_start_ms[0] == pytest.approx(1016.0)
    assert outcome.commit_ms[0] == pytest.approx(1017.5)
    assert outcome.end_ms[0] == pytest.approx(1022.0)
    assert outcome.table_metadata_reads[0] == 16  # the load's 14, the hook's 2
    assert outcome.catalog_reads[0] == 4  # the load's listing, the commit's, the hook's two
    # A log-entry commit by another client (no load, no hook): list at 1002, create by 1003.
    generic = run_committed(SimConfig(num_tables=1, retry_rewrite="none", retry=15, **BASE), [0.0], [0])
    assert (generic.commit_start_ms[0], generic.end_ms[0]) == pytest.approx((1001.0, 1003.0))
    assert generic.table_metadata_reads[0] == 0


def test_a_delta_rs_config_without_table_load_reads_keeps_the_call_as_modelled_before_the_trace():
    # One round of reads in the load and in each update, no closing listing: what a stored config made.
    config = _delta(table_load_reads=None)
    assert config.table_load_reads is None and config.config_hash != _delta().config_hash
    outcome = run_committed(config, [0.0], [0])
    assert outcome.commit_start_ms[0] == pytest.approx(1003.0)
    assert outcome.commit_ms[0] == pytest.approx(1004.5)
    assert outcome.end_ms[0] == pytest.approx(1007.0)
    assert outcome.table_metadata_reads[0] == 2
    # Another client, or the published protocol, has no such call: the field is dropped.
    assert build_config(client="delta-rs", protocol="published", **BASE).table_load_reads is None
    assert SimConfig(table_load_reads=13, retry_rewrite="none").table_load_reads is None


def test_a_delta_rs_commit_reads_what_landed_since_its_load_and_updates_its_snapshot_in_the_window():
    # B loads at 10 (observes version 0 at 10.5); A creates version 1 at 1017.5, while B loads and writes
    # its data. B's commit (1026) lists version 1 (1027), reads that entry (1028), updates its snapshot (a
    # listing and two rounds of the entry: 1031), creates version 2 (decided 1031.5) and runs the hook
    # (1036): no retry.
    outcome = run_committed(_delta(), [0.0, 10.0], [0, 0])
    assert outcome.commit_start_ms[1] == pytest.approx(1026.0)
    assert outcome.commit_ms[1] == pytest.approx(1031.5)
    assert outcome.end_ms[1] == pytest.approx(1036.0)
    assert outcome.retries[1] == 0 and outcome.table_metadata_reads[1] == 14 + 1 + 2 + 2


def test_a_lost_delta_rs_create_relists_reads_the_winner_updates_and_creates_at_once():
    # B's listing observes version 0 at 1016.7; A's create is decided at 1017.5, B's at 1017.7: lost,
    # answered at 1018.2. B lists (1019.2), reads A's entry (1020.2), updates its snapshot (1023.2),
    # creates again at once (decided 1023.7) and runs the hook (1028.2).
    outcome = run_committed(_delta(), [0.0, 0.2], [0, 0])
    assert outcome.retries.tolist() == [0, 1]
    assert outcome.commit_ms[1] == pytest.approx(1023.7)
    assert outcome.end_ms[1] - outcome.commit_start_ms[1] == pytest.approx(12.0)


def test_a_delta_rs_round_of_entries_takes_longer_by_the_profiles_cost_per_read():
    # The instant store with a round costing 0.25 ms more per read past the first. Four writers' calls in
    # turn: each loads the table at the version its predecessors left (0, 1, 2, 3 entries since the
    # checkpoint) and its load's two rounds of entries take 2 x 0.25 x (entries - 1) longer.
    # (The instant store as a profile: medians under the 1 ms floor, so that every draw is the floor.)
    low = OperationLatency(0.5, 0.01)
    instant = replace(PROVIDERS["instant"], name="instant-rounds", read_median_ms=0.5, read_sigma=0.01,
                      write_base_ms=0.5, write_sigma=0.01, cas=low, append=low, all_fixed=False,
                      read_round_ms_per_read=0.25)
    config = _delta(provider="instant-rounds", provider_profile=canonical_json(instant))
    plain = run_committed(_delta(), [0.0, 5000.0, 10000.0, 15000.0], [0] * 4)
    rounds = run_committed(config, [0.0, 5000.0, 10000.0, 15000.0], [0] * 4)
    load = np.array(rounds.commit_start_ms) - np.array(plain.commit_start_ms)
    assert load.tolist() == pytest.approx([0.0, 0.0, 0.5, 1.0])
    # A snapshot update reads the entries it missed in two rounds too: B misses A's and C's entries.
    both = run_committed(config, [0.0, 0.0, 10.0], [0, 0, 0])
    few = run_committed(_delta(), [0.0, 0.0, 10.0], [0, 0, 0])
    assert np.sum(both.end_ms - few.end_ms) > 0.0
    # A config whose call was modelled before the trace keeps one read per round, whatever the profile says.
    old = run_committed(_delta(provider="instant-rounds", provider_profile=canonical_json(instant), table_load_reads=None),
               [0.0, 5000.0, 10000.0, 15000.0], [0] * 4)
    assert old.commit_start_ms.tolist() == run_committed(_delta(table_load_reads=None), [0.0, 5000.0, 10000.0, 15000.0],
                                                [0] * 4).commit_start_ms.tolist()


# -- a PyIceberg append is its call as traced (docs/reference/clients.md, "PyIceberg on the model") --------------

def _pyiceberg(**fields):
    return build_config(client="pyiceberg", num_tables=1, backoff_jitter=0.0, **BASE, **fields)


def test_a_pyiceberg_attempt_makes_the_traced_calls_requests_between_its_snapshot_and_its_cas():
    # The snapshot's read (0-1 ms), the runtime, then 9 reads and 12 writes (1001-1022) and the CAS
    # (decided 1022.5, answered 1023), where the corrected attempt has its four requests (1005).
    outcome = run_committed(_pyiceberg(), [0.0], [0])
    assert outcome.commit_start_ms[0] == pytest.approx(1001.0)
    assert outcome.commit_ms[0] == pytest.approx(1022.5)
    assert outcome.end_ms[0] == pytest.approx(1023.0)
    # The commit's objects are counted as before (the call's other requests are timed, not counted).
    assert (outcome.table_metadata_reads[0], outcome.manifest_list_reads[0], outcome.manifest_list_writes[0],
            outcome.table_metadata_writes[0]) == (1, 1, 1, 1)
    generic = run_committed(_pyiceberg(attempt_reads=None, attempt_writes=None), [0.0], [0])
    assert commit_latency(generic, 0) == pytest.approx(5.0)


def test_a_pyiceberg_retry_makes_the_traced_retrys_requests_after_its_wait():
    # A commits at 1022.5. B (snapshot 0.7) is decided at 1022.7, fails, hears so at 1023.2, waits 100 ms,
    # reads the catalog (1124.2) and the table metadata that shows the conflict (1125.2), then makes the
    # retry's other 7 reads and 9 writes (1141.2) and its CAS (decided 1141.7, answered 1142.2).
    outcome = run_committed(_pyiceberg(), [0.0, 0.2], [0, 0])
    assert outcome.commit_ms[0] == pytest.approx(1022.5)
    assert outcome.commit_ms[1] == pytest.approx(1141.7)
    assert outcome.end_ms[1] == pytest.approx(1142.2)
    assert outcome.retries[1] == 1
    # The corrected retry without the trace: the wait, the two reads and the four requests, then the CAS.
    generic = run_committed(_pyiceberg(retry_reads=None, retry_writes=None), [0.0, 0.2], [0, 0])
    assert generic.end_ms[1] == pytest.approx(1023.2 + 100.0 + 2.0 + 4.0 + 1.0)


def test_the_traced_calls_fields_come_in_pairs_and_only_where_a_commit_swaps_a_catalog_object():
    config = _pyiceberg()
    assert (config.attempt_reads, config.attempt_writes, config.retry_reads, config.retry_writes) == (9, 12, 8, 9)
    # A config stored before the trace (no fields) is another config and simulates as it did.
    assert _pyiceberg(attempt_reads=None, attempt_writes=None, retry_reads=None,
                      retry_writes=None).config_hash != config.config_hash
    # The published protocol, and a log-entry commit, have no such attempts: the fields are dropped.
    assert build_config(client="pyiceberg", protocol="published", **BASE).attempt_reads is None
    assert SimConfig(retry_rewrite="none", attempt_reads=9, attempt_writes=12).attempt_reads is None
    with pytest.raises(ConfigError, match="attempt_writes"):
        SimConfig(attempt_reads=9)
    with pytest.raises(ConfigError, match="retry_reads: 0 .*from 1 to 1000"):
        SimConfig(retry_reads=0, retry_writes=9)
    with pytest.raises(ConfigError, match="attempt_writes"):
        SimConfig(attempt_reads=9, attempt_writes=-1)
