"""The commit designs (docs/architectures.md), event by event, with fixed latencies worked out by hand.

The store is the 1 ms "instant" one (every read and write takes exactly 1 ms). The catalog services (REST,
DuckLake, Unity Catalog) run over a database made for these tests, given to each config as its JSON (a
probed database's form), whose commits take 3 ms (a floor at the median and a sigma of 1e-9: 3 ms to a few
parts in 10^9), behind the default 1 ms round trip: every catalog call takes 4 ms, a read observes the
catalog at 2 ms, and a CAS that finds a server free is decided at 2 ms (half-way, the corrected protocol)
and answered at 4 ms, its server busy for the first 3. The storage catalog's read and CAS take the store's
1 ms, observed and decided at 0.5 ms. Unless said otherwise each transaction runs 1000 ms between its
snapshot and its commit. tests/test_designs_vs_oracle.py checks the same designs in distribution against
an independent implementation.
"""

from dataclasses import replace

import numpy as np
import pytest

from simcore import SimConfig, engine
from simcore.builder import build_config
from simcore.catalog_databases import CatalogDatabase
from simcore.engine import COMMITTED
from simcore.errors import ConfigError
from simcore.profiles import canonical_json
from simcore.providers import PROVIDERS, OperationLatency
from simcore.simulate import run_seed
from simcore.workload import FAST_APPEND, MERGE_APPEND, VALIDATED_OVERWRITE, writer_phases_s
from timelines import BASE, RUNTIME_MS, commit_latency, run_committed

# A transaction alone is run beside one submitted this much later (long after it ended): a workload of a
# single transaction takes a compiled variant of the kernel of its own (its rows transposed are contiguous
# both ways), a minute or more to compile where Numba's cache does not have it.
LATER_MS = 100_000.0
FIXED = CatalogDatabase("fixed-3ms", 3.0, 1e-9, 3.0, 8, "tests: a 3 ms commit, 8 servers").to_json()
SERIAL = CatalogDatabase("fixed-3ms-serial", 3.0, 1e-9, 3.0, 1, "tests: a 3 ms commit, one server").to_json()


def _service(catalog, **fields):
    return SimConfig(catalog=catalog, catalog_database=fields.pop("catalog_database", FIXED), **{**BASE, **fields})


def _io(outcome, k):
    """(table-metadata reads, writes, manifest-list reads, writes, manifest-file writes, catalog reads) of k."""
    return (outcome.table_metadata_reads[k], outcome.table_metadata_writes[k], outcome.manifest_list_reads[k],
            outcome.manifest_list_writes[k], outcome.manifest_file_writes[k], outcome.catalog_reads[k])


# -- REST catalog: a pointer per table, a catalog service over a database ------------------------------------

def test_rest_two_commits_to_different_tables_at_once_both_succeed_where_the_storage_catalog_retries_one():
    # A (table 0) reads 0-4 (observes at 2), runs to 1004, reads and writes the table metadata and manifest
    # list (1008), sends its CAS: decided 1010, answered 1012. B (table 1), 0.1 ms behind, is decided at
    # 1010.1: its table's pointer has not moved, so it commits too, at 1010.1, answered 1012.1.
    rest = run_committed(_service("rest", num_tables=2), [0.0, 0.1], [0, 1])
    assert rest.commit_ms.tolist() == pytest.approx([1010.0, 1010.1])
    assert rest.end_ms.tolist() == pytest.approx([1012.0, 1012.1])
    assert rest.retries.tolist() == [0, 0]
    assert commit_latency(rest, 0) == pytest.approx(4.0 + 4.0)  # the attempt's four requests and the CAS
    # On the storage catalog one object holds every table: B's CAS (1005.6) finds the catalog moved by A's
    # (1005.5), re-reads it (1007.1) and the table metadata (1008.1), and sends the CAS alone (1009.1).
    storage = run_committed(SimConfig(num_tables=2, **BASE), [0.0, 0.1], [0, 1])
    assert storage.retries.tolist() == [0, 1] and storage.conflicts_catalog_only[1] == 1
    assert storage.end_ms[1] == pytest.approx(1009.1)


def test_rest_a_same_table_loser_rereads_the_catalog_and_the_table_metadata_then_redoes_its_attempt():
    # B's CAS, decided at 1010.1, finds table 0's pointer moved by A's at 1010; answered 1012.1. It re-reads
    # the catalog (1016.1, observing at 1014.1 A's version), reads the table metadata (1017.1), redoes the
    # four requests (1021.1) and its CAS: decided 1023.1, answered 1025.1.
    outcome = run_committed(_service("rest", num_tables=1), [0.0, 0.1], [0, 0])
    assert outcome.retries.tolist() == [0, 1] and outcome.conflicts_same_table[1] == 1
    assert outcome.commit_ms[1] == pytest.approx(1023.1)
    assert outcome.end_ms[1] == pytest.approx(1025.1)
    assert commit_latency(outcome, 1) == pytest.approx(8.0 + 4.0 + 1.0 + 4.0 + 4.0)
    assert _io(outcome, 1) == (3, 2, 2, 2, 0, 2)
    assert outcome.cas_throttled.tolist() == [0, 0]


def test_the_database_serves_commits_in_turn_at_most_its_concurrency_at_once():
    # One server: A's CAS arrives at 1008 and is served 1008-1011 (decided 1010, answered 1012). B's arrives
    # at 1008.1 and waits for the server: served 1011-1014, decided 1013, answered 1015. C's, at 1008.2,
    # is served 1014-1017: decided 1016, answered 1018. All three tables differ: all commit, no retry.
    serial = run_committed(_service("rest", num_tables=3, catalog_database=SERIAL), [0.0, 0.1, 0.2], [0, 1, 2])
    assert serial.commit_ms.tolist() == pytest.approx([1010.0, 1013.0, 1016.0])
    assert serial.end_ms.tolist() == pytest.approx([1012.0, 1015.0, 1018.0])
    assert serial.retries.tolist() == [0, 0, 0]
    # The catalog reads do not queue: each commit began 1004 ms after it arrived.
    assert serial.commit_start_ms.tolist() == pytest.approx([1004.0, 1004.1, 1004.2])
    # Eight servers: no one waits.
    parallel = run_committed(_service("rest", num_tables=3), [0.0, 0.1, 0.2], [0, 1, 2])
    assert parallel.end_ms.tolist() == pytest.approx([1012.0, 1012.1, 1012.2])


def test_a_waiting_commit_is_decided_against_the_pointer_as_it_is_when_its_turn_comes():
    # One server, one table: B's CAS waits behind A's (served 1011-1014, decided 1013), by when A's commit
    # (1010) has moved the pointer: B fails, answered 1015, re-reads (1019), reads the metadata (1020),
    # redoes its attempt (1024) and finds the server free: decided 1026, answered 1028.
    outcome = run_committed(_service("rest", num_tables=1, catalog_database=SERIAL), [0.0, 0.1], [0, 0])
    assert outcome.retries.tolist() == [0, 1]
    assert outcome.commit_ms[1] == pytest.approx(1026.0)
    assert outcome.end_ms[1] == pytest.approx(1028.0)


# -- Iceberg Java's commit through a REST catalog, as traced -------------------------------------------------

def _traced(**fields):
    return _service("rest", traced_commit="iceberg-java", **fields)


def test_traced_commit_through_the_reference_server_checks_at_its_load_and_reads_back_what_it_wrote():
    # A reads 0-4, runs to 1004, and makes the first attempt's five requests (the load's metadata, the manifest
    # list's HEAD and GET, its manifest and manifest list): 1009. The server loads the table as the commit
    # arrives: half the round trip and half a database call, 1011, where the pointer is checked. Unchanged, it
    # finishes the load (1.5 ms), reads the metadata, writes the next (1014.5), reads the row again (1017.5);
    # the update's call, sent at 1017 less the half round trip the check counted, is decided at 1019 and
    # answered at 1021; the server reads back what it wrote (1025); the client refreshes: 4 + 1, 1030.
    outcome = run_committed(_traced(num_tables=1), [0.0, LATER_MS], [0, 0])
    assert outcome.commit_ms[0] == pytest.approx(1019.0)
    assert outcome.end_ms[0] == pytest.approx(1030.0)
    assert commit_latency(outcome, 0) == pytest.approx(26.0)
    # The check and the refresh are catalog reads beside the first; the metadata is read four times: with the
    # client's load, the server's, the server's read-back and the client's refresh. The manifest list is read
    # twice (a HEAD and a GET) and written once, the manifest written once, the metadata written by the server.
    assert _io(outcome, 0) == (4, 1, 2, 1, 1, 3)


def test_traced_commit_a_pointer_moved_before_the_servers_load_fails_there_without_a_cas():
    # B (submitted at 10) reads 10-14 (observing at 12), is ready at 1019 and checked at 1021, after A's commit
    # at 1019: the server's 409 comes after its load and metadata read (1021 + 1.5 + 1 + 0.5 = 1024). B re-reads
    # the catalog (1028), the metadata (1029), makes a retry's three requests (1032), is checked at 1034, and
    # its update is decided at 1040 + 2 = 1042; answered, read back and refreshed at 1053.
    outcome = run_committed(_traced(num_tables=1), [0.0, 10.0], [0, 0])
    assert outcome.retries.tolist() == [0, 1] and outcome.conflicts_same_table[1] == 1
    assert outcome.commit_ms[1] == pytest.approx(1042.0)
    assert outcome.end_ms[1] == pytest.approx(1053.0)
    # B's metadata reads: its load's, the server's before the 409, its re-read after it, the server's at the
    # second load, the read-back and the refresh. Its retry reads the manifest list twice more and writes one
    # manifest list and (the server) one metadata file; its manifest is the first attempt's.
    assert _io(outcome, 1) == (6, 2, 4, 2, 1, 5)


def test_traced_commit_an_update_lost_after_the_servers_check_waits_the_servers_retry_before_its_409():
    # B, 0.1 ms behind A, passes its check at 1011.1 (A commits at 1019) and loses its update at 1019.1: the
    # answer would come at 1021.1, but the server waits 100 ms + U[0, 10), reloads (3 + 1) and only then
    # answers 409: 1125.1 + U[0, 10). B re-reads the catalog (+4) and the metadata (+1), makes the retry's
    # three requests (+3), is checked 2 later, decided 8 after that (1.5 + 1 + 1 + 3 - 0.5 + 2): 1143.1 + U.
    outcome = run_committed(_traced(num_tables=1), [0.0, 0.1], [0, 0])
    assert outcome.retries.tolist() == [0, 1]
    assert 1143.1 <= outcome.commit_ms[1] < 1153.1
    # Without the trace the loser hears at 1012.1 (its CAS decided at 1010.1 after A's at 1010).
    plain = run_committed(_service("rest", num_tables=1), [0.0, 0.1], [0, 0])
    assert plain.commit_ms[1] == pytest.approx(1023.1)


def test_traced_commit_through_a_jdbc_catalog_the_client_reads_the_row_before_its_update():
    # A: ready at 1009 (the manifest list's HEAD and GET; manifest, manifest list, metadata), its SELECT of the
    # row observes at 1011 and answers at 1013, the update is decided at 1015 and answered at 1017; the refresh
    # (4 + 1) ends the call at 1022. B (at 10) is checked at 1021, after A's commit: CommitFailedException at
    # 1023; it re-reads (1027) the catalog and the metadata (1028), makes the retry's four requests (1032), is
    # checked at 1034 and decided at 1038; answered and refreshed at 1045.
    outcome = run_committed(_traced(num_tables=1, rest_metadata_writer="client"), [0.0, 10.0], [0, 0])
    assert outcome.commit_ms.tolist() == pytest.approx([1015.0, 1038.0])
    assert outcome.end_ms.tolist() == pytest.approx([1022.0, 1045.0])
    assert outcome.retries.tolist() == [0, 1]
    # A reads no metadata file before its update (its refresh after: one); B reads one after its conflict and
    # one with its refresh. Each attempt reads the manifest list twice (a HEAD and a GET) and writes it and a
    # metadata file; the manifest is written once, in the first attempt, and kept. Catalog reads: A's snapshot,
    # check and refresh; B's, and its re-read and second check.
    assert _io(outcome, 0) == (1, 1, 2, 1, 1, 3)
    assert _io(outcome, 1) == (2, 2, 4, 2, 1, 5)


def test_traced_commit_applies_to_a_v3_rest_catalog_only_and_the_preset_carries_it():
    assert build_config(client="iceberg-java", catalog="rest").traced_commit == "iceberg-java"
    assert build_config(client="iceberg-java", catalog="storage").traced_commit is None
    assert build_config(client="iceberg-java", catalog="rest", metadata_format="v4").traced_commit is None
    assert build_config(client="pyiceberg", catalog="rest").traced_commit is None
    # Dropped where it does not apply, so a storage catalog's configs hash as before.
    assert build_config(client="iceberg-java").config_hash == \
        build_config(client="iceberg-java", traced_commit=None).config_hash
    with pytest.raises(ConfigError, match="traced_commit"):
        SimConfig(catalog="rest", traced_commit="pyiceberg")


# -- Iceberg v4: a root manifest, no table-metadata file ----------------------------------------------------

def test_rest_v4_an_attempt_is_two_requests_a_root_manifest_read_and_write_not_four():
    # A alone: its snapshot (0-4), the runtime, the parent's root manifest read and a new one written
    # (1004-1006), the CAS (decided 1008, answered 1010): 6 ms where v3 takes 8.
    lone = run_committed(_service("rest", num_tables=1, metadata_format="v4"), [0.0, LATER_MS], [0, 0])
    assert commit_latency(lone, 0) == pytest.approx(2.0 + 4.0)
    assert _io(lone, 0) == (0, 0, 1, 1, 0, 1)
    v3 = run_committed(_service("rest", num_tables=1), [0.0, LATER_MS], [0, 0])
    assert commit_latency(v3, 0) == pytest.approx(4.0 + 4.0)


def test_rest_v4_a_same_table_loser_reads_no_table_metadata_and_rewrites_only_the_root_manifest():
    # B: CAS decided 1008.1 after A's at 1008: lost, answered 1010.1; re-reads the catalog (1014.1, no
    # metadata file to read), writes a new root over the reused leaves (1016.1), CAS decided 1018.1,
    # answered 1020.1.
    outcome = run_committed(_service("rest", num_tables=1, metadata_format="v4"), [0.0, 0.1], [0, 0])
    assert outcome.retries.tolist() == [0, 1] and outcome.conflicts_same_table[1] == 1
    assert outcome.commit_ms[1] == pytest.approx(1018.1)
    assert outcome.end_ms[1] == pytest.approx(1020.1)
    assert _io(outcome, 1) == (0, 0, 2, 2, 0, 2)


def test_storage_v4_keeps_the_one_catalog_object_and_drops_the_metadata_files():
    config = SimConfig(num_tables=2, metadata_format="v4", **BASE)
    # A alone: read 0-1, runtime, root manifest 1001-1003, CAS decided 1003.5, answered 1004: 3 ms (v3: 5).
    lone = run_committed(config, [0.0, LATER_MS], [0, 0])
    assert commit_latency(lone, 0) == pytest.approx(3.0)
    assert _io(lone, 0) == (0, 0, 1, 1, 0, 1)
    # B on A's table: decided 1003.6 after A's 1003.5, lost; answered 1004.1, re-read 1005.1, a new root
    # (1007.1), CAS answered 1008.1: 7 ms (v3: 12, with a metadata read and a four-request attempt).
    same = run_committed(config, [0.0, 0.1], [0, 0])
    assert same.conflicts_same_table[1] == 1
    assert commit_latency(same, 1) == pytest.approx(2.0 + 1.0 + 1.0 + 2.0 + 1.0)
    assert _io(same, 1) == (0, 0, 2, 2, 0, 2)
    # B on the other table still loses (one object for every table), re-reads and sends the CAS alone:
    # answered 1006.1, 5 ms (v3: 8).
    other = run_committed(config, [0.0, 0.1], [0, 1])
    assert other.conflicts_catalog_only[1] == 1
    assert commit_latency(other, 1) == pytest.approx(2.0 + 1.0 + 1.0 + 1.0)
    assert _io(other, 1) == (0, 0, 1, 1, 0, 2)


def test_v4_applies_only_to_an_iceberg_tables_catalog_and_v3_is_stored_as_the_default():
    assert SimConfig(metadata_format="v3").metadata_format is None
    assert SimConfig(metadata_format="v3").config_hash == SimConfig().config_hash
    with pytest.raises(ConfigError, match="metadata_format"):
        _service("ducklake", metadata_format="v4")
    with pytest.raises(ConfigError, match="metadata_format"):
        _service("unity", metadata_format="v4")


# -- DuckLake: one snapshot id for the lake, no store I/O in a commit ------------------------------------------

def _ducklake(**fields):
    return build_config(client="ducklake", catalog="ducklake", catalog_database=FIXED,
                        backoff_jitter=0.0, **{**BASE, **fields})


def test_ducklake_two_commits_to_different_tables_at_once_one_retries_after_its_backoff():
    # A: snapshot 0-4, runtime, its data file written inside the transaction (1005), then the commit: decided
    # 1007, answered 1009. B (table 1) is decided at 1007.1, after A took the lake's next snapshot id: lost,
    # answered 1009.1. DuckLake waits 100 ms (base 100, jitter off here), re-reads the catalog (1113.1) and,
    # reusing its data file, sends the commit again: decided 1115.1, answered 1117.1.
    outcome = run_committed(_ducklake(num_tables=2), [0.0, 0.1], [0, 1])
    assert outcome.end_ms[0] == pytest.approx(1009.0) and commit_latency(outcome, 0) == pytest.approx(1.0 + 4.0)
    assert outcome.retries.tolist() == [0, 1] and outcome.conflicts_catalog_only[1] == 1
    assert outcome.commit_ms[1] == pytest.approx(1115.1)
    assert outcome.end_ms[1] == pytest.approx(1117.1)
    # Two catalog reads; no metadata or manifest of the store (its data file is not counted as a commit's).
    assert _io(outcome, 1) == (0, 0, 0, 0, 0, 2)
    # The reference client retries at once: answered 1009.1, re-read 1013.1, decided 1015.1, answered 1017.1.
    immediate = run_committed(_service("ducklake", num_tables=2), [0.0, 0.1], [0, 1])
    assert immediate.end_ms[1] == pytest.approx(1017.1)


def test_ducklake_a_same_table_conflict_rewrites_nothing_and_a_validated_overwrite_reads_no_convoy():
    # The same timeline as on two tables: the loser's retry is the commit alone, whatever beat it.
    outcome = run_committed(_ducklake(num_tables=1), [0.0, 0.1], [0, 0], ops=[FAST_APPEND, VALIDATED_OVERWRITE])
    assert outcome.conflicts_same_table[1] == 1
    assert outcome.end_ms[1] == pytest.approx(1117.1)
    assert _io(outcome, 1) == (0, 0, 0, 0, 0, 2)


def test_a_ducklake_merge_append_has_no_manifests_to_merge_again():
    # A merge append that loses to another commit of its table re-merges the manifests it missed on an
    # Iceberg catalog; DuckLake's tables have none: its retry is the commit alone, as a fast append's.
    outcome = run_committed(_ducklake(num_tables=1), [0.0, 0.1], [0, 0], ops=[FAST_APPEND, MERGE_APPEND])
    assert outcome.end_ms[1] == pytest.approx(1117.1)
    assert (outcome.manifest_file_reads[1], outcome.manifest_file_writes[1]) == (0, 0)


# -- Unity Catalog: staged commits ratified as the table's next version, then published -----------------------

def _unity(**fields):
    return build_config(client="delta-kernel", catalog="unity", catalog_database=FIXED, **{**BASE, **fields})


def test_unity_an_attempt_stages_a_commit_file_and_a_commit_ends_once_published():
    # A: snapshot 0-4, runtime, the staged commit (1004-1005), the CAS (decided 1007, answered 1009), then
    # the backfill: the version copied into the table's log (1010).
    outcome = run_committed(_unity(num_tables=2), [0.0, 0.1], [0, 1])
    assert outcome.commit_ms.tolist() == pytest.approx([1007.0, 1007.1])
    assert outcome.end_ms.tolist() == pytest.approx([1010.0, 1010.1])  # B's table is its own: no conflict
    assert outcome.retries.tolist() == [0, 0]
    assert _io(outcome, 0) == (0, 2, 0, 0, 0, 1)  # the staged commit and the published one


def test_unity_the_loser_reads_the_winners_commit_file_then_stages_a_new_commit():
    # B: decided 1007.1 after A ratified version 1 at 1007: lost, answered 1009.1. It re-reads the catalog
    # (1013.1, observing version 1 at 1011.1), reads version 1's commit file (1014.1), stages a new commit
    # for version 2 (1015.1), CAS decided 1017.1, answered 1019.1, published 1020.1.
    outcome = run_committed(_unity(num_tables=1), [0.0, 0.1], [0, 0])
    assert outcome.retries.tolist() == [0, 1] and outcome.conflicts_same_table[1] == 1
    assert outcome.commit_ms[1] == pytest.approx(1017.1)
    assert outcome.end_ms[1] == pytest.approx(1020.1)
    assert _io(outcome, 1) == (1, 3, 0, 0, 0, 2)  # 1 commit file read; 2 staged commits and the backfill


def test_unity_a_loser_reads_the_commit_file_of_each_version_it_missed():
    # A ratifies version 1 at 1007. C took its snapshot at version 0 (observed 2.1) and runs 2000 ms. B
    # starts after A's commit (1010, observing version 1 at 1012), runs no time, stages (1015) and ratifies
    # version 2 at 1017. C: staged 2005.1, decided 2007.1: lost; answered 2009.1, re-read 2013.1 (version 2),
    # reads the two commit files it missed (2015.1), stages again (2016.1), decided 2018.1, answered 2020.1,
    # published 2021.1.
    outcome = run_committed(_unity(num_tables=1), [0.0, 0.1, 1010.0], [0, 0, 0], runtimes=[RUNTIME_MS, 2000.0, 0.0])
    assert outcome.commit_ms.tolist() == pytest.approx([1007.0, 2018.1, 1017.0])
    assert outcome.commit_seq.tolist() == [1, 3, 2]
    assert outcome.end_ms[1] == pytest.approx(2021.1)
    assert outcome.retries[1] == 1 and _io(outcome, 1) == (2, 3, 0, 0, 0, 2)


def _tail_profile():
    """A store with 1 ms reads and heavy-tailed writes (median 1 ms, sigma 2): now and then a version's
    publication takes seconds, while later commits of its table are ratified behind it."""
    return canonical_json(replace(PROVIDERS["instant"], name="heavy-writes", read_median_ms=1.0, read_sigma=0.1,
                                  write_base_ms=1.0, write_ms_per_mib=0.0, write_sigma=2.0,
                                  cas=OperationLatency(1.0, 0.1), append=None, floor_ms=0.1, all_fixed=False))


def test_with_fixed_latencies_each_unity_version_is_published_before_the_next_is_ratified(monkeypatch):
    # Version v + 1 is ratified at the earliest half a read, a staged write and half a CAS after version v
    # (its committer's snapshot observed v); v is published half a CAS and one write after its ratification.
    # With every write the same length, v is always published first: even a cap of one never refuses.
    monkeypatch.setattr(engine, "UNITY_UNPUBLISHED_CAP", 1)
    config = _unity(num_tables=1, inter_arrival_scale_ms=10.0, duration_s=610.0)
    workload, outcome = run_seed(config, 1)
    assert outcome.retries.max() > 0  # a hot table: many commits lose and retry
    assert outcome.cas_throttled.sum() == 0


def _unpublished_at_ratification(workload, outcome):
    """For each committed transaction: how many of its table's versions were ratified before its own and not
    yet published when it was ratified (a commit still unpublished at the end counts as never published)."""
    committed = np.flatnonzero(~np.isnan(outcome.commit_ms))
    counts = []
    for table in np.unique(workload.table[committed]):
        mine = committed[workload.table[committed] == table]
        mine = mine[np.argsort(outcome.commit_ms[mine])]
        ratified = outcome.commit_ms[mine]
        published = np.where(outcome.status[mine] == COMMITTED, outcome.end_ms[mine], np.inf)
        # Publication is in order: the published instants of a table's versions never decrease.
        assert np.all(np.diff(published[np.isfinite(published)]) >= 0)
        counts += [int(np.count_nonzero((ratified < t) & (published > t))) for t in ratified]
    return np.array(counts)


@pytest.mark.parametrize("cap", [1, 3])
def test_a_unity_table_with_cap_unpublished_versions_refuses_the_next_until_one_is_published(monkeypatch, cap):
    # With heavy-tailed writes a version's publication sometimes lags several commits of its table; in-order
    # publication holds every later version back with it. A commit that would be ratified while `cap`
    # versions of its table wait is refused (counted as throttled), re-reads the catalog, finds its table
    # unchanged unless another commit slipped in, and stages a new commit.
    monkeypatch.setattr(engine, "UNITY_UNPUBLISHED_CAP", cap)
    config = _unity(num_tables=2, provider="heavy-writes", provider_profile=_tail_profile(),
                    inter_arrival_scale_ms=20.0, duration_s=610.0)
    workload, outcome = run_seed(config, 1)
    unpublished = _unpublished_at_ratification(workload, outcome)
    assert unpublished.max() == cap - 1  # the cap is reached, never passed
    refused = outcome.cas_throttled
    assert refused.sum() > 0
    # A refusal is answered like a lost CAS: a re-read that finds the table unchanged is a catalog-only
    # conflict, and only a refusal makes one on a per-table pointer.
    finished = outcome.status != 0
    assert np.all(outcome.conflicts_catalog_only[finished] <= refused[finished])
    assert outcome.conflicts_catalog_only.sum() > 0
    # Without the cap's bite (the real one, 10) the same run refuses far less.
    monkeypatch.setattr(engine, "UNITY_UNPUBLISHED_CAP", 10)
    assert run_seed(config, 1)[1].cas_throttled.sum() < refused.sum()


# -- group commit: one committer per table ------------------------------------------------------------------

def test_group_commit_one_committer_per_table_commits_every_interval_whatever_the_number_of_writers():
    # Three tables, committers at the phases writer_phase_seed 0 gives over a 50 ms interval (31.85, 13.49
    # and 2.05 ms). On the REST catalog a commit takes 12 ms (a 4 ms read, the 4 ms attempt, a 4 ms CAS),
    # less than the interval: each starts when due, none conflicts (a table's committer is its only writer).
    config = _service("rest", num_tables=3, writers=40, commit_interval_s=4.0, group_commit_s=0.05,
                      writer_phase_seed=0)
    workload, outcome = run_seed(config, 1)
    phases = writer_phases_s(0, 3, 0.05) * 1000.0
    for table in range(3):
        mine = np.flatnonzero(workload.table == table)
        due = phases[table] + 50.0 * np.arange(len(mine))
        assert workload.submit_ms[mine] == pytest.approx(due)
        assert len(mine) == int((700_000.0 - phases[table]) // 50.0) + 1
        done = mine[outcome.status[mine] == COMMITTED]
        assert outcome.start_ms[done] == pytest.approx(workload.submit_ms[done])
        assert outcome.end_ms[done] - outcome.start_ms[done] == pytest.approx(np.full(len(done), 12.0))
    assert outcome.retries.max() == 0
    # The writers only hand over files: two writers or forty, the catalog sees the same committers.
    fewer, _ = run_seed(replace(config, writers=2), 1)
    assert fewer.submit_ms.tolist() == workload.submit_ms.tolist()


def _committers(workload, outcome, table):
    mine = np.flatnonzero((workload.table == table) & ~np.isnan(outcome.start_ms))
    return mine[np.argsort(outcome.start_ms[mine])]


def test_group_commit_at_zero_commits_back_to_back_each_commit_submitted_as_it_starts():
    # Two tables on the storage catalog, committers paced a read and a CAS apart (2 ms): phases 1.274 (table
    # 0) and 0.540 ms (table 1). Table 1's committer reads (to 1.540), writes (5.540) and commits (decided
    # 6.040, answered 6.540). Table 0's snapshot (observed 1.774) is older than that commit: its CAS (6.774)
    # loses; answered 7.274, it re-reads (8.274) and reads the metadata (9.274), finds its table unchanged
    # and sends the CAS alone: decided 9.774, answered 10.274. Each committer starts its next commit as its
    # last one ends.
    config = SimConfig(num_tables=2, writers=8, commit_interval_s=1.0, group_commit_s=0.0, writer_phase_seed=0,
                       **BASE)
    workload, outcome = run_seed(config, 1)
    p0, p1 = writer_phases_s(0, 2, 0.002) * 1000.0
    zero, one = _committers(workload, outcome, 0), _committers(workload, outcome, 1)
    assert outcome.start_ms[one[0]] == pytest.approx(p1) and outcome.start_ms[zero[0]] == pytest.approx(p0)
    assert outcome.end_ms[one[0]] == pytest.approx(p1 + 6.0) and outcome.retries[one[0]] == 0
    assert outcome.end_ms[zero[0]] == pytest.approx(p0 + 9.0) and outcome.retries[zero[0]] == 1
    for mine in (zero, one):
        finished = mine[outcome.status[mine] != 0]
        # Back to back: each commit starts as the one before it ends, and is submitted then.
        assert outcome.start_ms[finished[1:]] == pytest.approx(outcome.end_ms[finished[:-1]])
        assert workload.submit_ms[mine] == pytest.approx(outcome.start_ms[mine])
    assert np.isinf(workload.submit_ms[np.isnan(outcome.start_ms)]).all()  # never started: never submitted
    # The two committers share the one catalog object: their commits keep colliding.
    assert outcome.conflicts_catalog_only.sum() > 100
    # On the REST catalog each table has its own pointer: 12 ms commits, one after another, never a retry.
    rest = _service("rest", num_tables=2, writers=8, commit_interval_s=1.0, group_commit_s=0.0, writer_phase_seed=0)
    workload, outcome = run_seed(rest, 1)
    phases = writer_phases_s(0, 2, 0.008) * 1000.0  # paced 8 ms apart: the read's and the CAS's 4 ms
    for table in (0, 1):
        mine = _committers(workload, outcome, table)[:1000]
        assert outcome.start_ms[mine] == pytest.approx(phases[table] + 12.0 * np.arange(len(mine)))
    assert outcome.retries.max() == 0


def test_group_commit_needs_writers_and_takes_no_maintenance_jobs():
    with pytest.raises(ConfigError, match="group_commit_s"):
        SimConfig(group_commit_s=1.0, **BASE)
    with pytest.raises(ConfigError, match="group_commit_s"):
        SimConfig(writers=4, commit_interval_s=1.0, group_commit_s=1.0, maintenance_jobs=1,
                  maintenance_interval_s=60.0, **BASE)
    with pytest.raises(ConfigError, match="group_commit_s"):
        SimConfig(writers=4, commit_interval_s=1.0, group_commit_s=-1.0, **BASE)
