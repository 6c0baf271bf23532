"""The commit-protocol event loop, compiled with Numba.

Transactions only interact at two kinds of instants: a CAS decision (which
reads the catalog sequence number and may advance it and a table version)
and the completion of a catalog read (which observes them). Everything
between two such instants is a chain of independent storage latencies, so
the loop keeps one pending instant per transaction in a binary heap and
collapses each chain (per-attempt manifest I/O, a VO's convoy of historical
manifest-list reads) into one sum drawn on the spot.

Why a compiled loop rather than array-at-a-time NumPy: the CAS outcome of
each attempt depends on every commit decided before it, so the work is a
strict sequence of tiny steps. See docs/design.md for the measurements
behind the choice. This module is the only one that knows about Numba.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numba
import numpy as np
from numba.np.random.distributions import random_standard_normal
from numba.np.random.generator_core import next_double

from simcore import kernel_cache
from simcore.catalog_databases import catalog_database
from simcore.catalog_latency import catalog_latencies
from simcore.config import (SERVICE_CALL_CATALOGS, SERVICE_CATALOGS, TABLE_POINTER_CATALOGS, SimConfig, delta_rs_call,
                            log_entry_commits)
from simcore.providers import (CATALOG_OBJECT_BYTES, MANIFEST_FILE_BYTES, MANIFEST_LIST_BYTES, TABLE_METADATA_BYTES,
                               Throttle)
from simcore.workload import MERGE_APPEND, VALIDATED_OVERWRITE, Workload

# The compiled kernels' cache is named by this file's content, so a copy of the tree loads them (kernel_cache).
kernel_cache.install()

# Latency slots, in the order of the arrays handed to the kernel.
CATALOG_READ, CATALOG_CAS, ML_READ, MF_WRITE, ML_WRITE, MF_READ, TM_READ, TM_WRITE, CATALOG_PUT = range(9)

# Transaction outcomes.
UNFINISHED, COMMITTED, ABORTED_MAX_RETRIES, ABORTED_VALIDATION, ABORTED_BUDGET = range(5)
STATUS_NAMES = ("unfinished", "committed", "aborted", "aborted", "aborted")
ABORT_REASONS = ("", "", "max_retries_exceeded", "validation_exception", "retry_budget_exceeded")

# Event kinds; an event's code is 4 x transaction + kind.
_READ_DONE = 0  # a catalog read completed: it observes the catalog now
_CAS_DECIDED = 1  # a CAS (or conditional append) is decided now
_CAS_ISSUED = 2  # a CAS request reaches a throttled object (it needs a token) or a catalog service's queue
_CAS_REFUSED = 3  # a throttled CAS found no token: it fails now, whatever the catalog holds

# Retry policies (SimConfig.retry_policy).
IMMEDIATE, BACKOFF, SPLIT = range(3)
_POLICY_CODES = {None: IMMEDIATE, "backoff": BACKOFF, "split": SPLIT}

# Slots of the protocol-parameter array handed to the kernel.
(P_MAX_RETRIES, P_REAL_CONFLICT, P_MERGE_MANIFESTS, P_DURATION_MS, P_POLICY, P_BACKOFF_BASE_MS,
 P_BACKOFF_MULTIPLIER, P_BACKOFF_CAP_MS, P_BACKOFF_JITTER, P_THROTTLE_PER_MS, P_THROTTLE_BURST,
 P_DISCOVERY_READ, P_FAILED_MULTIPLIER, P_CONTENTION_EXPONENT, P_CONTENTION_SIGMA,
 P_READ_OBSERVED_AT, P_DECIDED_AT, P_READ_CONTENTION_EXPONENT, P_READ_CONTENTION_SIGMA, P_CONVOY_PER_TABLE,
 P_JITTER_SHAPE, P_RETRY_BUDGET_MS, P_REWRITE, P_REFUSED_MAX, P_REFUSED_BASE_MS, P_REFUSED_MULTIPLIER,
 P_REFUSED_CAP_MS, P_REFUSED_JITTER, P_CORRECTED, P_CAS_AT_LEAST_PUT, P_DELTA_CALL, P_HOLD_MS, P_LOAD_READS,
 P_UPDATE_READS, P_CLOSING_LISTING, P_THROTTLE_COMMITS, P_ATTEMPT_READS, P_ATTEMPT_WRITES, P_RETRY_READS,
 P_RETRY_WRITES, P_FAILED_UNCONTENDED, P_ROUND_MS_PER_READ, P_TABLE_POINTER, P_QUEUE_SERVERS, P_SERVICE_RTT_MS,
 P_ATTEMPT_KIND, P_UNPUBLISHED_CAP, P_LOG_ENTRIES, P_TRACED_CHECK, P_SERVER_DB_MS, P_SERVER_RETRY_MS,
 P_SERVER_RETRY_JITTER_MS) = range(52)

# What an attempt of the corrected protocol writes before its CAS (the commit design, docs/architectures.md):
# table metadata around a manifest list (Iceberg v3), a root manifest (v4, the catalog holding the table's
# state), nothing (DuckLake: rows in the catalog database), or a staged Delta commit (Unity Catalog).
ATTEMPT_TABLE_METADATA, ATTEMPT_ROOT_MANIFEST, ATTEMPT_NONE, ATTEMPT_STAGED = range(4)
# How many ratified Delta commits a Unity Catalog table may hold unpublished; a commit beyond it is refused
# until the backlog is published (docs/architectures.md, "Delta catalog-managed commits").
UNITY_UNPUBLISHED_CAP = 10

# Client retry behaviour (SimConfig.backoff_jitter_shape, retry_rewrite).
JITTER_SYMMETRIC, JITTER_UP, JITTER_DOWN, JITTER_RANGE = range(4)
_JITTER_CODES = {None: JITTER_SYMMETRIC, "up": JITTER_UP, "down": JITTER_DOWN, "range": JITTER_RANGE}
REWRITE_CONFLICT, REWRITE_MANIFEST_LIST, REWRITE_NONE = range(3)
_REWRITE_CODES = {None: REWRITE_CONFLICT, "manifest_list": REWRITE_MANIFEST_LIST, "none": REWRITE_NONE}


@dataclass(frozen=True)
class Outcome:
    """What happened to each transaction (arrays aligned with the Workload)."""

    status: np.ndarray  # int8, one of UNFINISHED .. ABORTED_VALIDATION
    end_ms: np.ndarray  # commit or abort instant; NaN when unfinished
    commit_start_ms: np.ndarray  # end of the initial read + runtime
    retries: np.ndarray  # int32
    conflicts_same_table: np.ndarray  # failed CAS where our table had changed
    conflicts_catalog_only: np.ndarray  # failed CAS where only other tables had
    manifest_list_reads: np.ndarray
    manifest_list_writes: np.ndarray
    manifest_file_reads: np.ndarray
    manifest_file_writes: np.ndarray
    cas_throttled: np.ndarray  # CAS attempts refused by the object-write throttle
    snapshot_ms: np.ndarray  # when the snapshot used by the last CAS was read
    commit_ms: np.ndarray  # when the successful CAS was decided (NaN: none)
    snapshot_seq: np.ndarray  # the catalog seq that snapshot saw
    commit_seq: np.ndarray  # catalog seq after our commit; -1 when none
    final_seq: int  # catalog seq at the end of the simulated time
    catalog_reads: np.ndarray = None  # int32; catalog reads made (initial, after failures, discovery)
    start_ms: np.ndarray = None  # when it started (its initial read); a late writer starts after its due time
    table_metadata_reads: np.ndarray = None  # int32; the corrected protocol's table-metadata file I/O
    table_metadata_writes: np.ndarray = None

    @classmethod
    def from_records(cls, status, end_ms, commit_start_ms, retries, conflicts_same_table=None,
                     conflicts_catalog_only=None, final_seq: int = 0, start_ms=None) -> "Outcome":
        """An Outcome from per-transaction records made elsewhere (the reference's output, the
        test oracle, hand-made cases): the engine's I/O counters and snapshot bookkeeping,
        which only the metrics of the engine's own runs use, are left empty."""
        n = len(status)
        zeros = np.zeros(n, dtype=np.int32)
        return cls(status=np.asarray(status, np.int8), end_ms=np.asarray(end_ms, float),
                   commit_start_ms=np.asarray(commit_start_ms, float), retries=np.asarray(retries, np.int32),
                   conflicts_same_table=zeros if conflicts_same_table is None
                   else np.asarray(conflicts_same_table, np.int32),
                   conflicts_catalog_only=zeros if conflicts_catalog_only is None
                   else np.asarray(conflicts_catalog_only, np.int32),
                   manifest_list_reads=zeros, manifest_list_writes=zeros, manifest_file_reads=zeros,
                   manifest_file_writes=zeros, cas_throttled=zeros, snapshot_ms=np.zeros(n),
                   commit_ms=np.full(n, np.nan), snapshot_seq=np.zeros(n, np.int64),
                   commit_seq=np.full(n, -1, np.int64), final_seq=final_seq, catalog_reads=zeros,
                   start_ms=np.full(n, np.nan) if start_ms is None else np.asarray(start_ms, float),
                   table_metadata_reads=zeros, table_metadata_writes=zeros)


# Sums of more draws than this (long VO convoys) are drawn in one go from a
# shifted lognormal with the sum's exact mean, variance and skewness; its
# quantiles match those of the exact sum to within sampling noise from 8
# terms up (tests/test_engine_sums.py), and it keeps heavy configs cheap.
EXACT_SUM_MAX_TERMS = 32


def latency_table(config: SimConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(median, sigma, floor, moments[mean, var, third central]) per latency slot."""
    provider = config.latency_profile
    catalog_read, catalog_cas = catalog_latencies(config)
    slots = [None] * 9
    slots[CATALOG_READ] = catalog_read
    slots[CATALOG_CAS] = catalog_cas
    slots[ML_READ] = provider.read()
    slots[MF_WRITE] = provider.write(MANIFEST_FILE_BYTES)
    slots[ML_WRITE] = provider.write(MANIFEST_LIST_BYTES)
    slots[MF_READ] = provider.read()
    slots[TM_READ] = provider.read()
    slots[TM_WRITE] = provider.write(TABLE_METADATA_BYTES)
    slots[CATALOG_PUT] = provider.write(CATALOG_OBJECT_BYTES)
    # float64 whatever the profile wrote (a floor of 10 reads as an int): one array type, one compiled kernel.
    return (np.array([s.median_ms for s in slots], dtype=np.float64),
            np.array([s.sigma for s in slots], dtype=np.float64),
            np.array([s.floor_ms for s in slots], dtype=np.float64),
            np.array([s.moments() for s in slots], dtype=np.float64))


def attempt_kind(config: SimConfig) -> int:
    """What a corrected attempt writes before its CAS (ATTEMPT_*), from the catalog and metadata format."""
    if config.catalog == "ducklake":
        return ATTEMPT_NONE
    if config.catalog == "unity":
        return ATTEMPT_STAGED
    return ATTEMPT_ROOT_MANIFEST if config.metadata_format == "v4" else ATTEMPT_TABLE_METADATA


def protocol_parameters(config: SimConfig) -> np.ndarray:
    params = np.zeros(P_SERVER_RETRY_JITTER_MS + 1)
    service = config.catalog in SERVICE_CALL_CATALOGS  # no storage object is raced
    profile = config.latency_profile  # read once: a profile file's content is parsed on each access
    params[P_MAX_RETRIES] = config.retry
    params[P_REAL_CONFLICT] = config.real_conflict_probability
    params[P_MERGE_MANIFESTS] = config.merge_manifests_per_commit
    params[P_DURATION_MS] = config.duration_ms
    params[P_POLICY] = _POLICY_CODES[config.retry_policy]
    if config.retry_policy is not None:
        params[P_BACKOFF_BASE_MS] = config.backoff_base_ms
        params[P_BACKOFF_MULTIPLIER] = config.backoff_multiplier
        params[P_BACKOFF_CAP_MS] = config.backoff_cap_ms
        params[P_BACKOFF_JITTER] = config.backoff_jitter
    # The store's own throttle on the catalog object (a catalog service has none), and how its client
    # library answers a refused (429) write; a what-if throttle replaces the store's bucket.
    operation = "append" if config.catalog == "append" else "cas"
    store_throttle = None if service else profile.conditional(operation).throttle
    throttle = throttle_terms(store_throttle)
    params[P_THROTTLE_PER_MS], params[P_THROTTLE_BURST] = throttle[:2]
    params[P_REFUSED_MAX:P_REFUSED_JITTER + 1] = throttle[2:7]
    params[P_THROTTLE_COMMITS] = throttle[7]
    if config.cas_throttle_per_s is not None:  # the what-if bucket: every write takes a token
        params[P_THROTTLE_PER_MS] = config.cas_throttle_per_s / 1000.0
        params[P_THROTTLE_BURST] = config.cas_throttle_burst
        params[P_THROTTLE_COMMITS] = 0.0
    # An append catalog learns its commit's outcome by reading the log back.
    params[P_DISCOVERY_READ] = 1.0 if config.catalog == "append" else 0.0
    # The convoy counts the table's own commits with vo_convoy="table", and always in the corrected protocol.
    params[P_CONVOY_PER_TABLE] = 1.0 if config.vo_convoy == "table" or config.protocol == "corrected" else 0.0
    # The measured model's terms (all at their no-op values for the reference
    # profiles, where the kernel then draws exactly as before).
    params[P_READ_OBSERVED_AT] = 1.0
    params[P_FAILED_MULTIPLIER] = 1.0
    params[P_DECIDED_AT] = 1.0
    if not service:  # a catalog service's latency has no storage terms
        terms = profile.conditional(operation)  # the catalog's conditional write: CAS or append
        params[P_FAILED_MULTIPLIER] = terms.failed_multiplier
        params[P_DECIDED_AT] = terms.decided_at
        params[P_HOLD_MS] = terms.hold_ms  # the object's commit hold after a successful write (0: none)
        # A failure's extra answer time drawn without the contention terms (OperationLatency.failed_extra).
        params[P_FAILED_UNCONTENDED] = 1.0 if terms.failed_extra == "uncontended" else 0.0
        # Contention delays the CAS, or the catalog reads (before they observe it). The terms are the raced
        # object's: fitted to clients reading and writing one object, they say how its reads slow while
        # conditional writes to it are in flight. A log-entry commit (below) reads no such object: its
        # catalog read lists the log, and each create is of a new key, so its listings keep the store's read.
        into_read = terms.contention_in == "read"
        if not (into_read and log_entry_commits(config)):
            params[P_READ_CONTENTION_EXPONENT if into_read else P_CONTENTION_EXPONENT] = terms.contention_exponent
            params[P_READ_CONTENTION_SIGMA if into_read else P_CONTENTION_SIGMA] = terms.contention_sigma
        params[P_READ_OBSERVED_AT] = profile.read_observed_at
    if config.protocol == "corrected":
        params[P_CORRECTED] = 1.0
        # The corrected reference decides a CAS, and a catalog read observes the catalog, half-way
        # through the round trip. A profile with measured terms (the measured model, a fitted file) says
        # where its store does; a catalog service and the reference's kind of profile take the half.
        reference_kind = not profile.has_measured_terms
        if service or reference_kind:
            params[P_DECIDED_AT] = CORRECTED_DECIDED_AT
            params[P_READ_OBSERVED_AT] = CORRECTED_DECIDED_AT
        # Its storage catalog's CAS writes the catalog object: it takes at least a PUT of it (the
        # reference's 7cfec8b: the larger of a CAS draw and a PUT draw). A measured conditional write
        # was measured whole, so only the reference's kind of profile gets the second draw.
        if config.catalog == "storage" and reference_kind:
            params[P_CAS_AT_LEAST_PUT] = 1.0
    params[P_JITTER_SHAPE] = _JITTER_CODES[config.backoff_jitter_shape]
    params[P_RETRY_BUDGET_MS] = config.retry_budget_ms or 0.0
    params[P_REWRITE] = _REWRITE_CODES[config.retry_rewrite]
    # A delta-rs commit is a write_deltalake call (docs/reference/clients.md, "delta-rs on the model"): its table
    # load and data file come before the commit, a snapshot update follows each listing that found new
    # entries, and another the created one. Keyed on the client's label so that no config's hash moves.
    if delta_rs_call(config):
        params[P_DELTA_CALL] = 1.0
        # The rounds of reads after its load's listing, and in each snapshot update; whether the post-commit
        # hook lists the log once more. Without table_load_reads, the call as modelled before it was traced.
        traced = config.table_load_reads is not None
        params[P_LOAD_READS] = config.table_load_reads if traced else 1.0
        params[P_UPDATE_READS] = DELTA_UPDATE_READS if traced else 1.0
        params[P_CLOSING_LISTING] = 1.0 if traced else 0.0
        # A traced call's rounds of entries take longer the more entries they hold (a profile's term; 0 in
        # every profile made before probe timed it, so those calls run as before).
        params[P_ROUND_MS_PER_READ] = profile.read_round_ms_per_read if traced else 0.0
    # A traced call's attempts (PyIceberg's): the requests between the snapshot and the CAS, for the first
    # attempt and for each retry that rewrites; -1: the corrected attempt's four requests, as before.
    params[P_ATTEMPT_READS:P_RETRY_WRITES + 1] = -1.0
    if config.attempt_reads is not None:
        params[P_ATTEMPT_READS], params[P_ATTEMPT_WRITES] = config.attempt_reads, config.attempt_writes
    if config.retry_reads is not None:
        params[P_RETRY_READS], params[P_RETRY_WRITES] = config.retry_reads, config.retry_writes
    # The commit design: which pointer the CAS compares (the catalog's, or the table's), the database serving a
    # catalog service's commits (how many at once; the round trip that is not its work), what an attempt writes.
    params[P_TABLE_POINTER] = 1.0 if config.catalog in TABLE_POINTER_CATALOGS else 0.0
    if config.catalog in SERVICE_CATALOGS:
        params[P_QUEUE_SERVERS] = catalog_database(config.catalog_database).concurrency
        params[P_SERVICE_RTT_MS] = config.catalog_latency_ms
    params[P_ATTEMPT_KIND] = attempt_kind(config)
    params[P_UNPUBLISHED_CAP] = UNITY_UNPUBLISHED_CAP if config.catalog == "unity" else 0.0
    params[P_LOG_ENTRIES] = 1.0 if log_entry_commits(config) else 0.0
    if config.traced_commit is not None:
        _traced_commit(params, config)
    return params


# Where a traced REST commit checks the table's pointer before its conditional update (TRACED_CHECK_*): the
# client's read of the row (a JdbcCatalog), or the server's load of the table (the reference REST server).
TRACED_CHECK_NONE, TRACED_CHECK_CLIENT, TRACED_CHECK_SERVER = range(3)
# The reference server's own retry of a lost update: a wait of 100 ms + U[0, 10%) before it reloads the table
# (CatalogHandlers.commit's Tasks...exponentialBackoff(100, ...), its first retry; docs/architectures.md).
SERVER_RETRY_MS, SERVER_RETRY_JITTER_MS = 100.0, 10.0


def _traced_commit(params: np.ndarray, config: SimConfig) -> None:
    """Iceberg Java 1.12's FastAppend through a REST catalog, as traced on the lab (docs/architectures.md,
    "Iceberg Java's commit, as traced"): the store requests from the snapshot to the pointer's check, for the
    first attempt (which writes the manifest) and for a retry (whose catalog read found the conflict and whose
    refresh read the new metadata file: that read among the retry's), and where the pointer is checked.

    Through the reference server the client's load answers with the metadata file the server read (a read in
    the window); the client reads the parent's manifest list (a HEAD and a GET) and writes its manifest list;
    the server then loads the table, checks it, and writes the metadata file. Through a JdbcCatalog the client
    does all of it: no metadata read after an unchanged refresh, the metadata file written before the check."""
    server = config.rest_metadata_writer is None
    params[P_TRACED_CHECK] = TRACED_CHECK_SERVER if server else TRACED_CHECK_CLIENT
    if server:  # first: metadata (the load's), manifest-list HEAD + GET; manifest, manifest list
        params[P_ATTEMPT_READS], params[P_ATTEMPT_WRITES] = 3, 2
        params[P_RETRY_READS], params[P_RETRY_WRITES] = 3, 1
    else:  # first: manifest-list HEAD + GET; manifest, manifest list, metadata
        params[P_ATTEMPT_READS], params[P_ATTEMPT_WRITES] = 2, 3
        params[P_RETRY_READS], params[P_RETRY_WRITES] = 3, 2
    # The server's own calls to its database (its load, its check before the update) take the database's
    # service time, with no round trip: the server sits beside its database.
    params[P_SERVER_DB_MS] = catalog_database(config.catalog_database).commit_median_ms
    params[P_SERVER_RETRY_MS], params[P_SERVER_RETRY_JITTER_MS] = SERVER_RETRY_MS, SERVER_RETRY_JITTER_MS


# delta-rs's snapshot update reads the new log entries twice, each round all at once, and its table load
# reads the entries since the last checkpoint twice the same way (traced with deltalake 1.6.6 on the lab:
# docs/reference/clients.md, "delta-rs on the model").
DELTA_UPDATE_READS = 2
# delta-rs checkpoints a table every 100 versions (delta.checkpointInterval's default): a load reads the
# entries after the last one, the table's version modulo this.
DELTA_CHECKPOINT_INTERVAL = 100


# Where the corrected protocol decides a CAS and observes a catalog read: half the round trip.
CORRECTED_DECIDED_AT = 0.5


def throttle_terms(throttle: Optional[Throttle]) -> list[float]:
    """[tokens per ms (0: no throttle), burst, resends, wait base ms, multiplier, cap ms, jitter, only a write
    that would commit takes a token (1) or every write (0)] for the kernels."""
    if throttle is None:
        return [0.0] * 8
    return [throttle.writes_per_s / 1000.0, throttle.burst, float(throttle.retry_max), throttle.retry_base_ms,
            throttle.retry_multiplier, throttle.retry_cap_ms, throttle.retry_jitter,
            1.0 if throttle.counts == "commits" else 0.0]


def kernel_parts(params: np.ndarray, chains: bool) -> tuple[bool, ...]:
    """Which of the kernel's optional parts a run uses, in the order of ``_event_loop``'s ``use_*`` arguments:
    the throttle, contention, reads that observe the catalog late, writer chains, the corrected protocol's
    steps, a CAS that takes at least a PUT, refused-write resends, a retry budget, the object's commit hold, a
    catalog service's queue of commits."""
    contention = any(params[slot] != 0.0 for slot in (P_CONTENTION_EXPONENT, P_CONTENTION_SIGMA,
                                                         P_READ_CONTENTION_EXPONENT, P_READ_CONTENTION_SIGMA))
    return (bool(params[P_THROTTLE_PER_MS] > 0.0), contention, bool(params[P_READ_OBSERVED_AT] < 1.0),
            bool(chains), bool(params[P_CORRECTED] > 0.0), bool(params[P_CAS_AT_LEAST_PUT] > 0.0),
            bool(params[P_REFUSED_MAX] > 0.0), bool(params[P_RETRY_BUDGET_MS] > 0.0), bool(params[P_HOLD_MS] > 0.0),
            bool(params[P_QUEUE_SERVERS] > 0.0))


def kernel_features(params: np.ndarray, chains: bool) -> tuple:
    """The kernel's ``use_*`` arguments for a run: which compiled variant it takes.

    Numba compiles one variant of ``_event_loop`` per combination of its
    argument types, and a variant takes a minute or more of CPU to compile
    (the disk cache keeps it for later processes). There are two:

    - the plain loop, every ``use_*`` None: the reference's published
      protocol with none of the optional parts, whose branches compile away;
    - the general loop, every ``use_*`` a bool saying whether the run uses
      that part: every other config, so one compile serves every client
      preset, profile and protocol.

    Both give the draws a loop compiled for exactly the parts used would
    give: a part's branches run if and only if its flag is set.
    """
    parts = kernel_parts(params, chains)
    return parts if any(parts) else (None,) * len(parts)


KERNEL_VARIANTS = ("plain", "general")


def kernel_variant(config: SimConfig, chains: bool = False) -> str:
    """"plain" or "general": the compiled variant of the kernel ``config``'s runs take."""
    features = kernel_features(protocol_parameters(config), chains or config.writers is not None)
    return "plain" if features[0] is None else "general"


def run(config: SimConfig, workload: Workload, rng: np.random.Generator) -> Outcome:
    """Run the commit protocol for every transaction of ``workload``."""
    median, sigma, floor, moments = latency_table(config)
    n = len(workload)
    # Per-transaction state, a row per transaction: an event touches one transaction's row (a cache line or
    # two) rather than a line in each of twenty arrays; the kernel sees each column as a strided array.
    # At least two rows: the kernel sees each table transposed, which for one row would be C- as well as
    # F-contiguous, and Numba would compile another kernel for that layout (a minute) for a lone transaction.
    rows = max(n, 2)
    floats = np.zeros((rows, _FLOAT_COLUMNS), dtype=np.float64)
    floats[:, 4] = np.nan  # start times: NaN until a transaction starts
    ints = np.zeros((rows, _INT_COLUMNS), dtype=np.int32)
    longs = np.zeros((rows, _LONG_COLUMNS), dtype=np.int64)
    longs[:, 1] = -1  # commit sequence numbers: -1 for none
    longs[:n, 3] = workload.table
    longs[:n, 4] = workload.op
    # A writer's next commit (a chain) starts when this one ends; -1: none.
    chain_next = workload.chain_next if workload.chain_next is not None else np.full(n, -1, np.int64)
    params = protocol_parameters(config)
    final_seq = _event_loop(
        workload.submit_ms, workload.runtime_ms, config.num_tables, np.log(median), sigma, floor, moments, params,
        rng, floats.T, ints.T, longs.T, chain_next, *kernel_features(params, workload.chain_next is not None))

    def column(table, j):
        return np.ascontiguousarray(table[:n, j])

    status = ints[:n, 11].astype(np.int8)
    end = column(floats, 0)
    end[status == UNFINISHED] = np.nan
    commit_seq = column(longs, 1)
    return Outcome(status=status, end_ms=end, commit_start_ms=column(floats, 1), retries=column(ints, 0),
                   conflicts_same_table=column(ints, 1), conflicts_catalog_only=column(ints, 2),
                   manifest_list_reads=column(ints, 3), manifest_list_writes=column(ints, 4),
                   manifest_file_reads=column(ints, 5), manifest_file_writes=column(ints, 6),
                   cas_throttled=column(ints, 7), snapshot_ms=column(floats, 2),
                   commit_ms=np.where(commit_seq >= 0, floats[:n, 3], np.nan),
                   snapshot_seq=column(longs, 0), commit_seq=commit_seq,
                   final_seq=int(final_seq), catalog_reads=column(ints, 8),
                   start_ms=column(floats, 4), table_metadata_reads=column(ints, 9),
                   table_metadata_writes=column(ints, 10))


# Columns of the per-transaction rows (see ``run`` and the views at the top of ``_event_loop``).
_FLOAT_COLUMNS, _INT_COLUMNS, _LONG_COLUMNS = 7, 16, 5


# ---------------------------------------------------------------------------
# Compiled core
# ---------------------------------------------------------------------------

@numba.njit(cache=True, inline="always")
def _slots(values):
    """The nine latency slots' values of ``values`` as a tuple."""
    return (values[0], values[1], values[2], values[3], values[4], values[5], values[6], values[7], values[8])


@numba.njit(cache=True, inline="always")
def _draw(bits, slot, mu, sigma, floor):
    if sigma[slot] == 0.0:
        return np.exp(mu[slot])
    value = np.exp(mu[slot] + sigma[slot] * random_standard_normal(bits))
    return value if value > floor[slot] else floor[slot]


@numba.njit(cache=True, inline="always")
def _draw_sum(bits, slot, count, mu, sigma, floor, moments):
    """The sum of ``count`` independent draws of one latency slot."""
    if count <= EXACT_SUM_MAX_TERMS or sigma[slot] == 0.0:
        total = 0.0
        for _ in range(count):
            total += _draw(bits, slot, mu, sigma, floor)
        return total
    return _draw_long_sum(bits, count, moments[0][slot], moments[1][slot], moments[2][slot])


@numba.njit(cache=True)
def _draw_long_sum(bits, count, mean, variance, third_moment):
    """One draw of shift + exp(c + s Z), fitted to the sum's first three moments."""
    sum_mean = count * mean
    sum_var = count * variance
    skew = count * third_moment / sum_var ** 1.5
    # A shifted lognormal of skewness g has w = sqrt(exp(s^2) - 1) solving w^3 + 3w = g (Cardano).
    root = np.sqrt(skew * skew / 4.0 + 1.0)
    w = np.cbrt(skew / 2.0 + root) + np.cbrt(skew / 2.0 - root)
    s2 = np.log1p(w * w)
    c = 0.5 * np.log(sum_var / (np.exp(s2) * np.expm1(s2)))
    shift = sum_mean - np.exp(c + s2 / 2.0)
    return shift + np.exp(c + np.sqrt(s2) * random_standard_normal(bits))


@numba.njit(cache=True, inline="always")
def _next_instant(heap, size, far, far_size):
    """The earliest pending instant of the two heaps (infinity when both are empty)."""
    t = heap[0, 0] if size > 0 else np.inf
    if far_size > 0 and far[0, 0] < t:
        return far[0, 0]
    return t


# An event heap is one (capacity, 2) float array, a row per event: its instant, then its code (an integer,
# exact in a float below 2^53); one array rather than two halves the reference counting of each call, and
# an event's instant and code share a cache line.

@numba.njit(cache=True)
def _heap_push(heap, size, t, code):
    i = size
    heap[i, 0] = t
    heap[i, 1] = code
    while i > 0:
        parent = (i - 1) >> 1
        if heap[parent, 0] <= heap[i, 0]:
            break
        heap[parent, 0], heap[i, 0] = heap[i, 0], heap[parent, 0]
        heap[parent, 1], heap[i, 1] = heap[i, 1], heap[parent, 1]
        i = parent
    return size + 1


@numba.njit(cache=True)
def _heap_pop(heap, size):
    """Remove the root; the caller has read heap[0] already."""
    size -= 1
    heap[0, 0] = heap[size, 0]
    heap[0, 1] = heap[size, 1]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= size:
            break
        child = left
        if left + 1 < size and heap[left + 1, 0] < heap[left, 0]:
            child = left + 1
        if heap[i, 0] <= heap[child, 0]:
            break
        heap[child, 0], heap[i, 0] = heap[i, 0], heap[child, 0]
        heap[child, 1], heap[i, 1] = heap[i, 1], heap[child, 1]
        i = child
    return size


@numba.njit(cache=True)
def _event_loop(submit, runtime, num_tables, mu_array, sigma_array, floor_array, moments_array, params, rng,
                out_f64, out_i32, out_i64, chain_next, use_throttle, use_contention, use_lag, use_chains,
                use_corrected, use_cas_put, use_refusals, use_budget, use_hold, use_queue):
    """The loop. Each ``use_*`` argument is None (the part is unused: its branches compile away) or a bool
    (whether the run uses the part, checked where its branches start; ``kernel_features``). ``out_*`` are the transposed per-transaction rows of ``run``: one row each here."""
    # Every draw takes the Generator's bit generator, a plain struct: the Generator itself is reference
    # counted, and passing it to each inlined helper cost two atomic operations per draw, about half
    # the loop's time. The draws are the Generator's own functions on it, the same numbers.
    bits = rng.bit_generator
    # Likewise the latency terms, as tuples: an array handed to an inlined helper is reference counted, a
    # tuple of floats is not.
    mu, sigma, floor = _slots(mu_array), _slots(sigma_array), _slots(floor_array)
    moments = (_slots(moments_array[:, 0]), _slots(moments_array[:, 1]), _slots(moments_array[:, 2]))
    contention = (params[P_CONTENTION_EXPONENT], params[P_CONTENTION_SIGMA], params[P_READ_CONTENTION_EXPONENT],
                  params[P_READ_CONTENTION_SIGMA])
    backoff = (params[P_BACKOFF_BASE_MS], params[P_BACKOFF_MULTIPLIER], params[P_BACKOFF_CAP_MS],
               params[P_BACKOFF_JITTER], params[P_JITTER_SHAPE])
    n = submit.shape[0]
    end_ms = out_f64[0]
    commit_start = out_f64[1]
    snapshot_ms = out_f64[2]
    commit_ms = out_f64[3]
    start_ms = out_f64[4]
    cas_ms = out_f64[5]  # each transaction's last CAS latency
    read_ms = out_f64[6]  # ... and last catalog-read latency
    retries = out_i32[0]
    same_table = out_i32[1]
    catalog_only = out_i32[2]
    ml_reads = out_i32[3]
    ml_writes = out_i32[4]
    mf_reads = out_i32[5]
    mf_writes = out_i32[6]
    throttled = out_i32[7]
    catalog_reads = out_i32[8]
    tm_reads = out_i32[9]
    tm_writes = out_i32[10]
    status = out_i32[11]
    started = out_i32[12]  # its initial catalog read has completed
    refreshing = out_i32[13]  # its pending read follows a split-policy backoff
    # Its pending read is the log's listing as its commit begins (log_entries below), or a traced commit's
    # check of its table's pointer (traced_check below): one column, as no config has both.
    listing = out_i32[14]
    checking = listing
    refusals = out_i32[15]  # resends of the CAS now pending
    # What of the check's call remains after it observed the pointer (the call's latency so far, as read_ms
    # holds a read's; the next read draws its own).
    check_rest_ms = read_ms
    snapshot_seq = out_i64[0]
    commit_seq = out_i64[1]
    snapshot_version = out_i64[2]
    table = out_i64[3]
    op = out_i64[4]
    retry_budget_ms = params[P_RETRY_BUDGET_MS]
    rewrite = params[P_REWRITE]
    # A transaction some other one's chain leads to is started by that one's end, not admitted.
    follower = np.zeros(n if (use_chains is not None and use_chains) else 1, dtype=np.bool_)
    if (use_chains is not None and use_chains):
        for k in range(n):
            if chain_next[k] >= 0:
                follower[chain_next[k]] = True

    max_retries = np.int64(params[P_MAX_RETRIES])
    duration_ms = params[P_DURATION_MS]
    throttle_per_ms = params[P_THROTTLE_PER_MS]
    throttle_burst = params[P_THROTTLE_BURST]
    commits_take_tokens = params[P_THROTTLE_COMMITS] > 0.0  # only a write that would commit takes a token
    discovery_read = params[P_DISCOVERY_READ] > 0.0
    policy = params[P_POLICY]
    convoy_per_table = params[P_CONVOY_PER_TABLE] > 0.0
    decided_at = params[P_DECIDED_AT]  # share of a CAS's latency before the object decides it
    success_tail = 1.0 - decided_at  # ... and after, until the answer arrives
    failure_tail = params[P_FAILED_MULTIPLIER] - decided_at  # a failure may answer later still
    # ... or (failed_extra "uncontended") the answer's way back, then (failed x - 1) x a conditional write drawn
    # without the contention terms: a slow failure answer that does not grow with the requests in flight.
    failed_uncontended = params[P_FAILED_UNCONTENDED] > 0.0 and params[P_FAILED_MULTIPLIER] > 1.0
    failed_extra = params[P_FAILED_MULTIPLIER] - 1.0
    read_lag = 1.0 - params[P_READ_OBSERVED_AT]  # share of a read's latency after it observed the catalog
    # The object's commit hold: after a successful write's decision it is busy committing it for hold_ms,
    # until free_at; a write that would succeed meanwhile waits for it (docs/reference/profiles.md, "The measured model's terms").
    hold_ms = params[P_HOLD_MS]
    free_at = -1.0

    table_version = np.zeros(num_tables, dtype=np.int64)
    # Corrected, a client whose commit is a log entry (retry_rewrite "none", delta-rs): its pending read
    # is the listing of the log as its commit begins, after the runtime.
    log_entries = (use_corrected is not None and use_corrected) and params[P_LOG_ENTRIES] > 0.0
    delta_call = log_entries and params[P_DELTA_CALL] > 0.0  # ... made by write_deltalake (delta-rs)
    load_reads = int(params[P_LOAD_READS])  # its rounds of reads after the load's listing
    update_reads = int(params[P_UPDATE_READS])  # ... in each snapshot update, after its listing
    closing_listing = params[P_CLOSING_LISTING] > 0.0  # the post-commit hook lists the log once more
    round_per_read = params[P_ROUND_MS_PER_READ]  # what each further entry in a round of reads adds
    # A traced call's attempts (PyIceberg's): its requests replace the corrected attempt's four.
    attempt_reads, attempt_writes = int(params[P_ATTEMPT_READS]), int(params[P_ATTEMPT_WRITES])
    retry_reads, retry_writes = int(params[P_RETRY_READS]), int(params[P_RETRY_WRITES])
    # The commit design (docs/architectures.md): a CAS compares the table's pointer (a REST catalog, Unity
    # Catalog) or the catalog's (one object, DuckLake's snapshot id); what an attempt writes before it.
    table_pointer = params[P_TABLE_POINTER] > 0.0
    kind_of_attempt = int(params[P_ATTEMPT_KIND])
    staged = kind_of_attempt == ATTEMPT_STAGED
    # A traced REST commit (Iceberg Java's) checks the table's pointer before its conditional update: the client
    # reads the row (a JdbcCatalog) or the server loads the table (the reference server), and a pointer that
    # moved since the snapshot fails the attempt there; the reference server retries an update it lost itself.
    traced_check = int(params[P_TRACED_CHECK])
    server_db_ms = params[P_SERVER_DB_MS]
    server_retry_ms, server_retry_jitter_ms = params[P_SERVER_RETRY_MS], params[P_SERVER_RETRY_JITTER_MS]
    # A catalog service's database serves its commits in turn, at most ``servers`` at once: each server's next
    # free instant (the round trip to the service is not its work).
    servers = int(params[P_QUEUE_SERVERS])
    server_free = np.zeros(servers if (use_queue is not None and use_queue) else 1, dtype=np.float64)
    service_rtt = params[P_SERVICE_RTT_MS]
    # Unity Catalog: when each table's ratified versions are published to its log, in a ring of the last
    # ``cap`` versions (a version is admitted only once the one ``cap`` before it is published).
    cap = int(params[P_UNPUBLISHED_CAP])
    published = np.zeros((num_tables if staged else 1, cap if staged else 1), dtype=np.float64)
    last_published = np.zeros(num_tables if staged else 1, dtype=np.float64)
    seq = 0
    bucket = np.array([throttle_burst, 0.0])  # the throttled object's tokens, as of an instant
    refused_max = params[P_REFUSED_MAX]
    # The measured model's bookkeeping: conditional requests in flight on the
    # catalog object, and when each commit happened and to which table (a
    # read that observed the catalog before it returned sees the state as of then).
    inflight = 0
    commit_at = np.zeros(n + 1 if (use_lag is not None and use_lag) else 1, dtype=np.float64)
    commit_table = np.zeros(n + 1 if (use_lag is not None and use_lag) else 1, dtype=np.int64)

    # Two event heaps: the near one for the I/O-scale steps of commits in progress (a few hundred at most),
    # the far one for each transaction's end of runtime (every transaction in its runtime, thousands).
    # A retry's steps then sift through a small heap; the far heap is touched twice per transaction.
    heap = np.empty((n + 1, 2), dtype=np.float64)
    size = 0
    far = np.empty((n + 1, 2), dtype=np.float64)
    far_size = 0
    next_arrival = 0

    while True:
        # Admit arrivals up to the next pending instant: each starts with a
        # catalog read, whose completion is its first instant of interest.
        while next_arrival < n and submit[next_arrival] <= _next_instant(heap, size, far, far_size):
            k = next_arrival
            next_arrival += 1
            if (use_chains is not None and use_chains):
                if follower[k]:
                    continue
            start_ms[k] = submit[k]
            catalog_reads[k] += 1
            read_ms[k] = _draw_read(bits, mu, sigma, floor, contention, inflight, use_contention)
            t_read = submit[k] + read_ms[k]
            size = _heap_push(heap, size, t_read, 4 * k + _READ_DONE)
        if size == 0 and far_size == 0:
            break
        if far_size == 0 or (size > 0 and heap[0, 0] <= far[0, 0]):
            t = heap[0, 0]
            code = np.int64(heap[0, 1])
            if t >= duration_ms:
                break  # everything still pending ends after the simulated time
            size = _heap_pop(heap, size)
        else:
            t = far[0, 0]
            code = np.int64(far[0, 1])
            if t >= duration_ms:
                break
            far_size = _heap_pop(far, far_size)
        k = code >> 2
        kind = code & 3
        tbl = table[k]

        if ((use_throttle is not None and use_throttle) or (use_queue is not None and use_queue)) \
                and kind == _CAS_ISSUED:
            # Token bucket: a CAS that finds a token proceeds; one that finds
            # none is refused (GCS answers 429) after the same round trip. A bucket
            # that counts commits is asked at the decision instead (below).
            outcome = _CAS_DECIDED
            if (use_throttle is not None and use_throttle):
                if not commits_take_tokens and not take_token(bucket, t, throttle_per_ms, throttle_burst):
                    outcome = _CAS_REFUSED
                    throttled[k] += 1
            inflight += 1
            cas_ms[k] = _draw_cas(bits, mu, sigma, floor, contention, inflight, use_contention, use_cas_put)
            t_start = t
            if (use_queue is not None and use_queue):
                # The database takes commits in the order they arrive: this one starts when a server is free.
                j = 0
                for other in range(1, servers):
                    if server_free[other] < server_free[j]:
                        j = other
                if server_free[j] > t_start:
                    t_start = server_free[j]
                server_free[j] = t_start + max(cas_ms[k] - service_rtt, 0.0)
            size = _heap_push(heap, size, t_start + decided_at * cas_ms[k], 4 * k + outcome)
            continue

        if kind == _CAS_DECIDED or kind == _CAS_REFUSED:
            if (use_hold is not None and use_hold):
                if kind == _CAS_DECIDED and seq == snapshot_seq[k] and t < free_at:
                    # It would succeed, but the object is still committing the previous success: it waits,
                    # still in flight, and is decided again when the object is free (by then it may fail).
                    size = _heap_push(heap, size, free_at, code)
                    continue
            if (use_throttle is not None and use_throttle):
                if commits_take_tokens and kind == _CAS_DECIDED and seq == snapshot_seq[k]:
                    # It would commit: the object admits it only with a token.
                    if not take_token(bucket, t, throttle_per_ms, throttle_burst):
                        kind = _CAS_REFUSED
                        throttled[k] += 1
            inflight -= 1
            if (use_refusals is not None and use_refusals):
                if kind == _CAS_REFUSED and refusals[k] < refused_max:
                    # The client library waits, then resends the same conditional write.
                    refusals[k] += 1
                    t_resend = t + success_tail * cas_ms[k] + refused_wait_ms(bits, refusals[k], params)
                    size = _heap_push(heap, size, t_resend, 4 * k + _CAS_ISSUED)
                    continue
                refusals[k] = 0
            current = table_version[tbl] == snapshot_version[k] if table_pointer else seq == snapshot_seq[k]
            if staged and kind == _CAS_DECIDED and current and published[tbl, (table_version[tbl] + 1) % cap] > t:
                kind = _CAS_REFUSED  # the table holds ``cap`` unpublished versions: refused until one is published
                throttled[k] += 1
            t_learned = t
            if discovery_read:
                t_learned += _draw_read(bits, mu, sigma, floor, contention, inflight, use_contention)
                catalog_reads[k] += 1
            if kind == _CAS_DECIDED and current:
                seq += 1
                table_version[tbl] += 1
                if (use_hold is not None and use_hold):
                    free_at = t + hold_ms
                commit_seq[k] = seq
                if (use_lag is not None and use_lag):
                    commit_at[seq] = t
                    commit_table[seq] = tbl
                commit_ms[k] = t
                if success_tail > 0.0:
                    t_learned += success_tail * cas_ms[k]
                if (use_corrected is not None and use_corrected) and traced_check != TRACED_CHECK_NONE:
                    # The server reads back what it wrote to answer (the reference server); the client then
                    # refreshes the table, to find its snapshot (a catalog read and the new metadata file).
                    if traced_check == TRACED_CHECK_SERVER:
                        t_learned += server_db_ms + _draw(bits, TM_READ, mu, sigma, floor)
                        tm_reads[k] += 1
                    t_learned += (_draw_read(bits, mu, sigma, floor, contention, inflight, use_contention)
                                  + _draw(bits, TM_READ, mu, sigma, floor))
                    catalog_reads[k] += 1
                    tm_reads[k] += 1
                if staged:  # the backfill: the client publishes the ratified version to the log, in order
                    t_learned += _draw(bits, TM_WRITE, mu, sigma, floor)
                    tm_writes[k] += 1
                    if t_learned < last_published[tbl]:
                        t_learned = last_published[tbl]
                    last_published[tbl] = t_learned
                    published[tbl, table_version[tbl] % cap] = t_learned
                if delta_call:  # the post-commit hook updates the call's snapshot to the created entry
                    t_learned += _snapshot_update(bits, mu, sigma, floor, moments, update_reads, 1, round_per_read,
                                                  contention, inflight, use_contention)
                    catalog_reads[k] += 1
                    tm_reads[k] += update_reads
                    if closing_listing:
                        t_learned += _draw_read(bits, mu, sigma, floor, contention, inflight, use_contention)
                        catalog_reads[k] += 1
                if t_learned < duration_ms:
                    status[k] = COMMITTED
                    end_ms[k] = t_learned
                    if (use_chains is not None and use_chains):  # a writer's next commit starts when this one ends
                        far_size = _start_next(far, far_size, k, t_learned, chain_next, submit, start_ms,
                                               catalog_reads, read_ms, bits, mu, sigma, floor, contention, inflight,
                                               use_contention)
            else:
                # Failed: re-read the catalog to learn what changed. These are _after_failure's steps, written out:
                # called here, the helper cost the general kernel a tenth of its time (benchmarks/speed.py).
                t_read = t_learned
                if failed_uncontended:
                    t_read += success_tail * cas_ms[k] + failed_extra * _draw(bits, CATALOG_CAS, mu, sigma, floor)
                elif failure_tail > 0.0:  # the answer arrives after the decision
                    t_read += failure_tail * cas_ms[k]
                if (use_corrected is not None and use_corrected) and traced_check == TRACED_CHECK_SERVER:
                    # The reference server lost the update it sent: it waits, reloads the table (its database,
                    # the metadata file), finds its requirement failed and answers 409 only then.
                    t_read += (server_retry_ms + server_retry_jitter_ms * next_double(bits) + server_db_ms
                               + _draw(bits, TM_READ, mu, sigma, floor))
                    tm_reads[k] += 1
                if (use_budget is not None and use_budget) and retries[k] >= 1 and t_read - commit_start[k] > retry_budget_ms:
                    # Out of retry budget (checked from the second failed attempt on): give up at once.
                    if t_read < duration_ms:
                        status[k] = ABORTED_BUDGET
                        end_ms[k] = t_read
                        if (use_chains is not None and use_chains):  # a writer's next commit starts when this one ends
                            far_size = _start_next(far, far_size, k, t_read, chain_next, submit, start_ms,
                                                   catalog_reads, read_ms, bits, mu, sigma, floor, contention, inflight,
                                                   use_contention)
                    continue
                if policy == BACKOFF and retries[k] < max_retries:
                    t_read += _backoff_ms(backoff, bits, retries[k] + 1)
                read_ms[k] = _draw_read(bits, mu, sigma, floor, contention, inflight, use_contention)
                t_read += read_ms[k]
                catalog_reads[k] += 1
                size = _heap_push(heap, size, t_read, 4 * k + _READ_DONE)
            continue

        if (use_corrected is not None and use_corrected) and traced_check != TRACED_CHECK_NONE and checking[k]:
            # A traced commit's check of the table's pointer, observed now (the catalog's database: no lag).
            checking[k] = False
            t_answer = t + check_rest_ms[k]
            if table_version[tbl] != snapshot_version[k]:
                # Moved since the snapshot: the attempt fails here, before its CAS (the server's 409 after its
                # load, which read the metadata file too; the JdbcCatalog's CommitFailedException).
                if traced_check == TRACED_CHECK_SERVER:
                    t_answer += _draw(bits, TM_READ, mu, sigma, floor) + 0.5 * service_rtt
                    tm_reads[k] += 1
                size, far_size = _after_failure(k, t_answer, heap, size, far, far_size, status, end_ms, retries,
                                                commit_start, catalog_reads, read_ms, start_ms, chain_next, submit,
                                                policy, max_retries, backoff, retry_budget_ms, duration_ms, bits, mu,
                                                sigma, floor, contention, inflight, use_contention, use_budget,
                                                use_chains)
                continue
            t_send = t_answer
            if traced_check == TRACED_CHECK_SERVER:
                # The server read the metadata file with its load, writes the next one and reads the row again
                # before its update; the update's own call (the CAS below) counts the way back to the client and
                # half of the way there, which the check's instant already did.
                t_send += (_draw(bits, TM_READ, mu, sigma, floor) + _draw(bits, TM_WRITE, mu, sigma, floor)
                           + server_db_ms - 0.5 * service_rtt)
                t_send = max(t_send, t)
                tm_reads[k] += 1  # (the attempt's I/O counted the metadata write)
            t_cas, code, cas_ms[k], inflight = _send_cas(k, t_send, bits, mu, sigma, floor, contention, decided_at,
                                                         inflight, use_throttle, use_contention, use_cas_put,
                                                         use_queue)
            size = _heap_push(heap, size, t_cas, code)
            continue

        # A catalog read completed at t: it observed the state now, or (the
        # measured model) when the request reached the object.
        seen_seq = seq
        seen_version = table_version[tbl]
        if (use_lag is not None and use_lag):
            seen_seq, seen_version = _observed(t - read_lag * read_ms[k], seq, tbl, table_version, commit_at,
                                               commit_table)
        if not started[k]:
            started[k] = True
            snapshot_seq[k] = seen_seq
            snapshot_version[k] = seen_version
            snapshot_ms[k] = t
            commit_start[k] = t + runtime[k]
            if delta_call:
                # write_deltalake loaded the table: its listing was this read, then it read its checkpoint
                # and the log's entries (load_reads rounds, two of them the entries since the last
                # checkpoint, each all at once and longer by the round's cost per entry) and wrote the
                # data file; the snapshot is the load's.
                commit_start[k] += (_draw_sum(bits, TM_READ, load_reads, mu, sigma, floor, moments)
                                    + update_reads * _round_extra_ms(round_per_read,
                                                                     seen_version % DELTA_CHECKPOINT_INTERVAL)
                                    + _draw(bits, MF_WRITE, mu, sigma, floor))
                tm_reads[k] += load_reads
            if log_entries:
                # A log-entry commit: its data was written during the runtime; the commit lists the log
                # again (the read it builds on), reads the entries it missed, then creates the next one.
                listing[k] = True
                read_ms[k] = _draw_read(bits, mu, sigma, floor, contention, inflight, use_contention)
                catalog_reads[k] += 1
                far_size = _heap_push(far, far_size, commit_start[k] + read_ms[k], 4 * k + _READ_DONE)
                continue
            if (use_corrected is not None and use_corrected):  # the manifest file was written during the runtime
                t_ready = commit_start[k]
                if kind_of_attempt == ATTEMPT_TABLE_METADATA:
                    if attempt_reads >= 0:  # the call as traced: its requests from the snapshot to the CAS
                        t_ready += _call_io(bits, attempt_reads, attempt_writes, mu, sigma, floor, moments)
                    else:
                        t_ready += _corrected_attempt_io(bits, mu, sigma, floor)
                    tm_writes[k] += 1
                    ml_writes[k] += 1
                    if (use_corrected is not None and use_corrected) and traced_check != TRACED_CHECK_NONE:
                        # Iceberg Java's first attempt, counted as traced: the manifest list read as a HEAD and
                        # a GET, the manifest written here (not during the runtime), and the metadata file read
                        # only by the server's load (a JdbcCatalog's refresh found the table unchanged).
                        ml_reads[k] += 2
                        mf_writes[k] += 1
                        if traced_check == TRACED_CHECK_SERVER:
                            tm_reads[k] += 1
                    else:
                        tm_reads[k] += 1
                        ml_reads[k] += 1
                elif kind_of_attempt == ATTEMPT_ROOT_MANIFEST:  # read the parent's root manifest, write a new one
                    t_ready += _draw(bits, ML_READ, mu, sigma, floor) + _draw(bits, ML_WRITE, mu, sigma, floor)
                    ml_reads[k] += 1
                    ml_writes[k] += 1
                elif staged:  # write the staged commit file
                    t_ready += _draw(bits, TM_WRITE, mu, sigma, floor)
                    tm_writes[k] += 1
                else:
                    # DuckLake writes its data file inside the transaction, after the snapshot it builds on (the
                    # race runs from that read to the commit); a retry reuses it. Not counted: no design counts
                    # its data files among a commit's requests.
                    t_ready += _draw(bits, MF_WRITE, mu, sigma, floor)
            else:
                t_ready = commit_start[k] + _attempt_io(bits, mu, sigma, floor)
                mf_writes[k] += 1
                ml_reads[k] += 1
                ml_writes[k] += 1
            if (use_corrected is not None and use_corrected) and traced_check != TRACED_CHECK_NONE:
                far_size = _heap_push(far, far_size, _check_at(k, t_ready, traced_check, checking, check_rest_ms,
                                                               catalog_reads, bits, mu, sigma, floor, contention,
                                                               inflight, use_contention, server_db_ms, service_rtt),
                                      4 * k + _READ_DONE)
                continue
            t_cas, code, cas_ms[k], inflight = _send_cas(k, t_ready, bits, mu, sigma, floor, contention, decided_at,
                                                         inflight, use_throttle, use_contention, use_cas_put,
                                                         use_queue)
            far_size = _heap_push(far, far_size, t_cas, code)
            continue

        t_known = t  # when the transaction knows what changed
        if log_entries:
            # A log-entry commit reads each entry made since its snapshot (delta-rs then updates its
            # snapshot), on the listing as its commit begins and on the one after a lost create alike.
            missed = seen_seq - snapshot_seq[k]
            t_known += _draw_sum(bits, TM_READ, missed, mu, sigma, floor, moments)
            tm_reads[k] += missed
            if delta_call and missed > 0:
                t_known += _snapshot_update(bits, mu, sigma, floor, moments, update_reads, missed, round_per_read,
                                            contention, inflight, use_contention)
                catalog_reads[k] += 1
                tm_reads[k] += update_reads
            if listing[k]:  # the listing as its commit begins: it builds on what it read, then creates
                listing[k] = False
                snapshot_seq[k] = seen_seq
                snapshot_version[k] = seen_version
                snapshot_ms[k] = t
                t_cas, code, cas_ms[k], inflight = _send_cas(k, t_known, bits, mu, sigma, floor, contention,
                                                             decided_at, inflight, use_throttle, use_contention,
                                                             use_cas_put, use_queue)
                size = _heap_push(heap, size, t_cas, code)
                continue
        elif (use_corrected is not None and use_corrected):
            if kind_of_attempt == ATTEMPT_TABLE_METADATA:
                # The catalog names the table-metadata file; reading it tells which
                # tables (partitions) changed, so the conflict is known only after it.
                t_known += _draw(bits, TM_READ, mu, sigma, floor)
                tm_reads[k] += 1
            elif staged:  # the versions ratified since its snapshot: each one's commit file, read in turn
                missed = seen_version - snapshot_version[k]
                t_known += _draw_sum(bits, TM_READ, missed, mu, sigma, floor, moments)
                tm_reads[k] += missed
        # A read after a failed CAS. A refresh is the second read of the split
        # policy, made after backing off from a same-table conflict (already counted).
        refresh = refreshing[k]
        refreshing[k] = False
        overlap = refresh or seen_version != snapshot_version[k]
        if not refresh:
            if overlap:
                same_table[k] += 1
            else:
                catalog_only[k] += 1
            if overlap and policy == SPLIT and retries[k] < max_retries:
                # Same-table conflict: wait, then read again before redoing the work.
                refreshing[k] = True
                t_read = t_known + _backoff_ms(backoff, bits, same_table[k])  # drawn first, as it always was
                read_ms[k] = _draw_read(bits, mu, sigma, floor, contention, inflight, use_contention)
                t_read += read_ms[k]
                catalog_reads[k] += 1
                size = _heap_push(heap, size, t_read, 4 * k + _READ_DONE)
                continue
        # The convoy's length: commits missed since the snapshot, to any table
        # (the published reference) or, with vo_convoy="table" and in the
        # corrected protocol, to this table only.
        behind = seen_version - snapshot_version[k] if convoy_per_table else seen_seq - snapshot_seq[k]
        t_next = t_known
        if overlap:
            if op[k] == VALIDATED_OVERWRITE:  # the I/O convoy, then validation
                # Corrected: the attempt's own manifest-list read covers the newest version. A design without
                # manifest lists validates against what its catalog read or staged reads already returned.
                convoy = max(behind - 1, 0) if (use_corrected is not None and use_corrected) else behind
                if kind_of_attempt == ATTEMPT_NONE or staged:
                    convoy = 0
                t_next += _draw_sum(bits, ML_READ, convoy, mu, sigma, floor, moments)
                ml_reads[k] += convoy
                if params[P_REAL_CONFLICT] > 0.0 and next_double(bits) < params[P_REAL_CONFLICT]:
                    if _finish(status, end_ms, k, ABORTED_VALIDATION, t_next, duration_ms):
                        if (use_chains is not None and use_chains):  # a writer's next commit starts when this one ends
                            far_size = _start_next(far, far_size, k, t_next, chain_next, submit, start_ms,
                                                   catalog_reads, read_ms, bits, mu, sigma, floor, contention, inflight,
                                                   use_contention)
                    continue
            elif op[k] == MERGE_APPEND and kind_of_attempt != ATTEMPT_NONE and not staged:
                # Re-merge the manifests it missed (DuckLake's and Delta's tables have none).
                m = np.int64(behind * params[P_MERGE_MANIFESTS])
                t_next += (_draw_sum(bits, MF_READ, m, mu, sigma, floor, moments)
                           + _draw_sum(bits, MF_WRITE, m, mu, sigma, floor, moments))
                mf_reads[k] += m
                mf_writes[k] += m
        if retries[k] >= max_retries:
            if _finish(status, end_ms, k, ABORTED_MAX_RETRIES, t_next, duration_ms):
                if (use_chains is not None and use_chains):  # a writer's next commit starts when this one ends
                    far_size = _start_next(far, far_size, k, t_next, chain_next, submit, start_ms,
                                           catalog_reads, read_ms, bits, mu, sigma, floor, contention, inflight,
                                           use_contention)
            continue
        retries[k] += 1
        snapshot_seq[k] = seen_seq
        snapshot_version[k] = seen_version
        snapshot_ms[k] = t
        if (use_corrected is not None and use_corrected):
            # A full attempt (table metadata and manifest list, read then written) after a same-table
            # conflict, or on every retry for a client that rewrites its manifest list; else the CAS alone.
            if staged:  # a staged commit for the next version, whatever else the client reuses
                t_next += _draw(bits, TM_WRITE, mu, sigma, floor)
                tm_writes[k] += 1
            elif rewrite == REWRITE_MANIFEST_LIST or (rewrite == REWRITE_CONFLICT and overlap):
                if kind_of_attempt == ATTEMPT_TABLE_METADATA:
                    if retry_reads >= 0:  # the call as traced: the table-metadata read above was the first read
                        t_next += _call_io(bits, retry_reads - 1, retry_writes, mu, sigma, floor, moments)
                    else:
                        t_next += _corrected_attempt_io(bits, mu, sigma, floor)
                    ml_writes[k] += 1
                    tm_writes[k] += 1
                    if (use_corrected is not None and use_corrected) and traced_check != TRACED_CHECK_NONE:
                        # Iceberg Java's retry, counted as traced: the conflict's metadata read above is its only
                        # one, and the manifest list is read as a HEAD and a GET.
                        ml_reads[k] += 2
                    else:
                        tm_reads[k] += 1
                        ml_reads[k] += 1
                elif kind_of_attempt == ATTEMPT_ROOT_MANIFEST:  # a new root over the reused leaf manifests
                    t_next += _draw(bits, ML_READ, mu, sigma, floor) + _draw(bits, ML_WRITE, mu, sigma, floor)
                    ml_reads[k] += 1
                    ml_writes[k] += 1
        elif rewrite == REWRITE_CONFLICT:
            if overlap:  # only a same-table conflict forces the manifests to be rewritten
                t_next += _attempt_io(bits, mu, sigma, floor)
                ml_reads[k] += 1
                mf_writes[k] += 1
                ml_writes[k] += 1
        elif rewrite == REWRITE_MANIFEST_LIST:  # every retry: a new manifest list over the reused manifests
            t_next += _draw(bits, ML_READ, mu, sigma, floor) + _draw(bits, ML_WRITE, mu, sigma, floor)
            ml_reads[k] += 1
            ml_writes[k] += 1
        if (use_corrected is not None and use_corrected) and traced_check != TRACED_CHECK_NONE:
            size = _heap_push(heap, size, _check_at(k, t_next, traced_check, checking, check_rest_ms, catalog_reads,
                                                    bits, mu, sigma, floor, contention, inflight, use_contention,
                                                    server_db_ms, service_rtt), 4 * k + _READ_DONE)
            continue
        t_cas, code, cas_ms[k], inflight = _send_cas(k, t_next, bits, mu, sigma, floor, contention, decided_at,
                                                     inflight, use_throttle, use_contention, use_cas_put, use_queue)
        size = _heap_push(heap, size, t_cas, code)
    return seq


@numba.njit(cache=True, inline="always")
def _check_at(k, t_ready, traced_check, checking, check_rest_ms, catalog_reads, bits, mu, sigma, floor, contention,
              inflight, use_contention, server_db_ms, service_rtt):
    """Transaction k's traced commit is ready for its pointer's check at t_ready: the instant the check observes
    the table (half-way through the client's read of the row; the server's load, half a round trip and half a
    database call after the client sent its commit), what of that call remains kept for after it."""
    checking[k] = True
    catalog_reads[k] += 1
    if traced_check == TRACED_CHECK_CLIENT:
        call = _draw_read(bits, mu, sigma, floor, contention, inflight, use_contention)
        check_rest_ms[k] = 0.5 * call
        return t_ready + 0.5 * call
    check_rest_ms[k] = 0.5 * server_db_ms
    return t_ready + 0.5 * (service_rtt + server_db_ms)


@numba.njit(cache=True, inline="always")
def _after_failure(k, t_read, heap, size, far, far_size, status, end_ms, retries, commit_start, catalog_reads,
                   read_ms, start_ms, chain_next, submit, policy, max_retries, backoff, retry_budget_ms, duration_ms,
                   bits, mu, sigma, floor, contention, inflight, use_contention, use_budget, use_chains):
    """Transaction k's attempt failed, its answer arriving at t_read: it re-reads the catalog to learn what
    changed (a backoff policy waits first, so that the read, and the retry built on it, sees the commits made
    meanwhile), or gives up at once when out of its retry budget. The two heaps' new sizes."""
    if (use_budget is not None and use_budget) and retries[k] >= 1 and t_read - commit_start[k] > retry_budget_ms:
        # Out of retry budget (checked from the second failed attempt on): give up at once.
        if t_read < duration_ms:
            status[k] = ABORTED_BUDGET
            end_ms[k] = t_read
            if (use_chains is not None and use_chains):  # a writer's next commit starts when this one ends
                far_size = _start_next(far, far_size, k, t_read, chain_next, submit, start_ms, catalog_reads,
                                       read_ms, bits, mu, sigma, floor, contention, inflight, use_contention)
        return size, far_size
    if policy == BACKOFF and retries[k] < max_retries:
        t_read += _backoff_ms(backoff, bits, retries[k] + 1)
    read_ms[k] = _draw_read(bits, mu, sigma, floor, contention, inflight, use_contention)
    t_read += read_ms[k]
    catalog_reads[k] += 1
    return _heap_push(heap, size, t_read, 4 * k + _READ_DONE), far_size


@numba.njit(cache=True, inline="always")
def _send_cas(k, t_ready, bits, mu, sigma, floor, contention, decided_at, inflight, use_throttle, use_contention,
              use_cas_put, use_queue):
    """Transaction k sends its CAS at t_ready: (instant, event code) of its decision, its latency, and the
    conditional requests in flight after it; to a throttled object or a catalog service's queue, its arrival
    there, where its latency is drawn and it joins those in flight (latency 0 and the count unchanged here)."""
    if (use_throttle is not None and use_throttle) or (use_queue is not None and use_queue):
        return t_ready, 4 * k + _CAS_ISSUED, 0.0, inflight
    cas = _draw_cas(bits, mu, sigma, floor, contention, inflight + 1, use_contention, use_cas_put)
    return t_ready + decided_at * cas, 4 * k + _CAS_DECIDED, cas, inflight + 1


@numba.njit(cache=True, inline="always")
def _draw_cas(bits, mu, sigma, floor, contention, in_flight, use_contention, use_cas_put):
    """A conditional write's latency, issued now with ``in_flight`` conditional requests on the object,
    itself included (read only where contention terms use them)."""
    if (use_contention is not None and use_contention):
        value = draw_contended(bits, mu[CATALOG_CAS], sigma[CATALOG_CAS], floor[CATALOG_CAS], in_flight,
                               contention[0], contention[1])
    else:
        value = _draw(bits, CATALOG_CAS, mu, sigma, floor)
    if (use_cas_put is not None and use_cas_put):
        return max(value, _draw(bits, CATALOG_PUT, mu, sigma, floor))
    return value


@numba.njit(cache=True, inline="always")
def _snapshot_update(bits, mu, sigma, floor, moments, rounds, entries, per_read, contention, inflight,
                     use_contention):
    """delta-rs's snapshot update to a known version: a listing of the log, then ``rounds`` rounds of reads of
    its ``entries`` new entries (each round all at once, longer by ``per_read`` for each entry past the first)."""
    return (_draw_read(bits, mu, sigma, floor, contention, inflight, use_contention)
            + _draw_sum(bits, TM_READ, rounds, mu, sigma, floor, moments) + rounds * _round_extra_ms(per_read, entries))


@numba.njit(cache=True, inline="always")
def _round_extra_ms(per_read, reads):
    """What a round of ``reads`` reads sent at once takes beyond one read: ``per_read`` for each further one."""
    return per_read * (reads - 1) if reads > 1 else 0.0


@numba.njit(cache=True, inline="always")
def _draw_read(bits, mu, sigma, floor, contention, inflight, use_contention):
    """A catalog read's latency, sent now (the conditional requests in flight may slow it)."""
    if (use_contention is None or not use_contention):
        return _draw(bits, CATALOG_READ, mu, sigma, floor)
    return draw_contended(bits, mu[CATALOG_READ], sigma[CATALOG_READ], floor[CATALOG_READ], inflight + 1,
                          contention[2], contention[3])


@numba.njit(cache=True, inline="always")
def draw_contended(bits, mu, sigma, floor, in_flight, exponent, sigma_per_ln):
    """A floored lognormal whose median grows as in_flight^exponent and sigma by sigma_per_ln x ln(in_flight).

    Without contention terms (the reference) it draws exactly as ``_draw``:
    one normal, the same value.
    """
    if sigma == 0.0:
        return np.exp(mu)
    if in_flight > 1 and (exponent != 0.0 or sigma_per_ln != 0.0):
        log_c = np.log(in_flight)
        mu = mu + exponent * log_c
        sigma = sigma + sigma_per_ln * log_c
    value = np.exp(mu + sigma * random_standard_normal(bits))
    return value if value > floor else floor


@numba.njit(cache=True, inline="always")
def _observed(t_seen, seq, tbl, table_version, commit_at, commit_table):
    """(catalog seq, version of table tbl) as of t_seen, from the commits so far (commit_at is sorted).

    Walks back from the newest commit: a read observes the catalog at most one
    read latency before it returns, so only the last few commits are undone.
    """
    j = seq
    version = table_version[tbl]
    while j > 0 and commit_at[j] > t_seen:
        if commit_table[j] == tbl:
            version -= 1
        j -= 1
    return j, version


@numba.njit(cache=True, inline="always")
def take_token(bucket, t, per_ms, burst):
    """Refill ``bucket`` ([tokens, as of ms]) to instant t, then take a token if there is one."""
    bucket[0] = min(burst, bucket[0] + (t - bucket[1]) * per_ms)
    bucket[1] = t
    if bucket[0] >= 1.0:
        bucket[0] -= 1.0
        return True
    return False


@numba.njit(cache=True, inline="always")
def _backoff_ms(backoff, bits, nth):
    """The nth backoff wait of the committer's retry policy (SimConfig.backoff_*, as the kernel's tuple)."""
    return backoff_wait_ms(bits, nth, backoff[0], backoff[1], backoff[2], backoff[3], backoff[4])


@numba.njit(cache=True)
def refused_wait_ms(bits, nth, params):
    """The wait before the nth resend of a refused conditional write (the store client's own retry)."""
    return backoff_wait_ms(bits, nth, params[P_REFUSED_BASE_MS], params[P_REFUSED_MULTIPLIER],
                           params[P_REFUSED_CAP_MS], params[P_REFUSED_JITTER], JITTER_DOWN)


@numba.njit(cache=True, inline="always")
def backoff_wait_ms(bits, nth, base, multiplier, cap, jitter, shape):
    """The nth backoff wait (n >= 1): base x multiplier^(n-1), capped, then jittered.

    The caller counts: retries for the backoff policy, same-table conflicts
    for the split policy (whose catalog-only conflicts never wait). Jitter
    shapes: symmetric w(1 +/- j), up w(1 + U[0, j)), down w(1 - U[0, j)),
    range U[base, w].
    """
    delay = min(cap, base * multiplier ** (nth - 1))
    if shape == JITTER_RANGE:
        low = min(base, delay)
        return low + (delay - low) * next_double(bits)
    if jitter > 0.0:
        if shape == JITTER_UP:
            delay *= 1.0 + jitter * next_double(bits)
        elif shape == JITTER_DOWN:
            delay *= 1.0 - jitter * next_double(bits)
        else:
            delay *= 1.0 + jitter * (2.0 * next_double(bits) - 1.0)
    return delay


@numba.njit(cache=True, inline="always")
def _attempt_io(bits, mu, sigma, floor):
    """One commit attempt's manifest I/O: read the ML, write an MF, write the ML."""
    return (_draw(bits, ML_READ, mu, sigma, floor) + _draw(bits, MF_WRITE, mu, sigma, floor)
            + _draw(bits, ML_WRITE, mu, sigma, floor))


@numba.njit(cache=True, inline="always")
def _corrected_attempt_io(bits, mu, sigma, floor):
    """One attempt of the corrected protocol, in order: read the table metadata and the manifest list,
    write a new manifest list and table metadata (the manifest file was written during the runtime)."""
    return (_draw(bits, TM_READ, mu, sigma, floor) + _draw(bits, ML_READ, mu, sigma, floor)
            + _draw(bits, ML_WRITE, mu, sigma, floor) + _draw(bits, TM_WRITE, mu, sigma, floor))


@numba.njit(cache=True, inline="always")
def _call_io(bits, reads, writes, mu, sigma, floor, moments):
    """A traced call's requests of one attempt, one after another: reads of the store's read latency, writes
    of a manifest list's (small objects: the data file, manifest and metadata it writes are a few KiB each)."""
    return (_draw_sum(bits, TM_READ, reads, mu, sigma, floor, moments)
            + _draw_sum(bits, ML_WRITE, writes, mu, sigma, floor, moments))


@numba.njit(cache=True, inline="always")
def _finish(status, end_ms, k, outcome, t, duration_ms):
    """Record an abort, unless it lands after the simulated time (then it never happened)."""
    if t < duration_ms:
        status[k] = outcome
        end_ms[k] = t
        return True
    return False


@numba.njit(cache=True)
def _start_next(heap, size, k, t_end, chain_next, submit, start_ms, catalog_reads, read_ms, bits, mu,
                sigma, floor, contention, inflight, use_contention):
    """Transaction k ended at t_end: start its writer's next commit, when due (at once if already late)."""
    nxt = chain_next[k]
    if nxt < 0:
        return size
    start = max(submit[nxt], t_end)
    start_ms[nxt] = start
    catalog_reads[nxt] += 1
    read_ms[nxt] = _draw_read(bits, mu, sigma, floor, contention, inflight, use_contention)
    return _heap_push(heap, size, start + read_ms[nxt], 4 * nxt + _READ_DONE)
