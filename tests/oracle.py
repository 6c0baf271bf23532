"""A scalar, event-by-event oracle of the commit model, written for clarity.

Each transaction is a Python generator that yields one latency per storage
or catalog operation; a heap of (time, tiebreak, transaction) drives them.
Every single I/O is its own draw (the engine collapses chains of them into
sums, long ones into one draw of the sum), and its own event, except a run
of reads whose count grows with the load (the log entries a commit missed, a
convoy): nothing is observed between them, so they are one event of the sum
of their draws, which keeps the heap small under contention. Randomness comes from Python's ``random`` module (the engine uses
NumPy streams), and nothing is shared with the engine but the provider
figures, the catalog databases' figures, Unity Catalog's cap and the metric code.
Agreement between the two is therefore evidence that the engine's shortcuts
do not change the model.

The commit designs (docs/architectures.md) are the same transaction with
other steps: which pointer a CAS compares (the catalog's, or with a REST
catalog or Unity Catalog the table's own), a catalog service over a database
whose commits wait in turn for one of its servers, what an attempt writes
before its CAS (table metadata and a manifest list; Iceberg v4's root
manifest; nothing, DuckLake; a staged Delta commit, Unity Catalog) and what
a lost CAS reads to learn what beat it; group commit is a workload of one
committer per table.
"""

from __future__ import annotations

import heapq
import math
import random
from dataclasses import replace

import numpy as np

from simcore.catalog_databases import catalog_database
from simcore.config import SimConfig
from simcore.engine import (ABORTED_BUDGET, ABORTED_MAX_RETRIES, ABORTED_VALIDATION, COMMITTED, UNFINISHED,
                            UNITY_UNPUBLISHED_CAP, Outcome)
from simcore.providers import (CATALOG_OBJECT_BYTES, MANIFEST_FILE_BYTES, MANIFEST_LIST_BYTES,
                               TABLE_METADATA_BYTES, Lognormal)
from simcore.workload import FAST_APPEND, MAINTENANCE, MERGE_APPEND, OPEN_LOOP, VALIDATED_OVERWRITE, WRITER, Workload


# From this many reads in turn, one NumPy draw of them all costs less than the loop (a call costs a few reads).
BULK_READS = 24


class Oracle:
    def __init__(self, config: SimConfig, seed: int, unity_cap: int = UNITY_UNPUBLISHED_CAP):
        self.config = config
        self.random = random.Random(seed * 7919 + 17)
        # Long runs of reads (reads_in_turn) are drawn in one array from a stream of their own, seeded from it.
        self.bulk_random = np.random.default_rng(self.random.getrandbits(64))
        provider = config.latency_profile  # a built-in provider, or a profile file's (its commit hold)
        # A catalog service over a database (a REST catalog, DuckLake, Unity Catalog): every call is the round
        # trip to the service plus one draw of the database's commit service time.
        self.database = (catalog_database(config.catalog_database) if config.catalog in ("rest", "ducklake", "unity")
                         else None)
        if self.database is not None:
            db, rtt = self.database, config.catalog_latency_ms
            self.catalog_read = self.catalog_cas = Lognormal(db.commit_median_ms + rtt, db.commit_sigma,
                                                             db.commit_floor_ms + rtt)
        elif config.catalog == "service":
            self.catalog_read = self.catalog_cas = Lognormal.fixed(config.catalog_latency_ms)
        elif config.catalog == "append":
            self.catalog_read, self.catalog_cas = provider.read(), provider.conditional_latency("append")
        else:
            self.catalog_read, self.catalog_cas = provider.read(), provider.conditional_latency("cas")
        # The catalog object's commit hold: after a successful write's decision it is busy until free_at.
        # A catalog service has no object of the store to hold.
        self.hold_ms = provider.conditional("append" if config.catalog == "append" else "cas").hold_ms \
            if config.catalog in ("storage", "append") else 0.0
        self.free_at = 0.0
        # The throttled catalog object's token bucket: tokens, as of when.
        self.tokens, self.tokens_at = config.cas_throttle_burst, 0.0
        self.storage_read = provider.read()
        self.mf_write = provider.write(MANIFEST_FILE_BYTES)
        self.ml_write = provider.write(MANIFEST_LIST_BYTES)
        self.tm_write = provider.write(TABLE_METADATA_BYTES)
        self.catalog_put = provider.write(CATALOG_OBJECT_BYTES)
        # The corrected protocol (docs/reference/model.md): table-metadata I/O, decisions at half the round trip.
        self.corrected = config.protocol == "corrected"
        # The catalog: a global sequence number and one version per table.
        self.seq = 0
        self.table_version = [0] * config.num_tables
        self.now = 0.0
        # The commit design. A REST catalog's and Unity Catalog's CAS compares the table's own pointer, every
        # other catalog's the one pointer of the whole catalog (a storage object, DuckLake's snapshot id).
        self.table_pointer = config.catalog in ("rest", "unity")
        self.ducklake = config.catalog == "ducklake"
        self.unity = config.catalog == "unity"
        self.v4 = config.metadata_format == "v4"
        # The database's servers: when each is next free, as a heap (its commits are served in their order of
        # arrival, at most ``concurrency`` at once).
        self.servers = [0.0] * self.database.concurrency if self.database is not None else None
        # Iceberg Java's commit through a REST catalog, as traced (docs/architectures.md): the reference server
        # checks the table at its load and retries a lost update itself; a JdbcCatalog's client reads the row
        # before its update.
        self.traced = config.traced_commit is not None
        self.server_checks = self.traced and config.rest_metadata_writer is None
        # Unity Catalog: when each ratified version of each table is (to be) published to the table's log.
        self.unity_cap = unity_cap
        self.published_at = [[] for _ in range(config.num_tables)]

    def latency(self, dist: Lognormal) -> float:
        if dist.sigma == 0:
            return dist.median_ms
        # exp of a normal draw is the lognormal; gauss is random's faster normal (this is the suite's hot loop).
        return max(dist.floor_ms, math.exp(self.random.gauss(math.log(dist.median_ms), dist.sigma)))

    # -- the workload ---------------------------------------------------------

    def draw_op(self):
        c = self.config
        u = self.random.random()
        return FAST_APPEND if u < c.fast_append_ratio else (
            MERGE_APPEND if u < c.fast_append_ratio + c.merge_append_ratio else VALIDATED_OVERWRITE)

    def jobs(self):
        """Writer workloads: (job class, table, due times, [(runtime, op)] per commit), one per job."""
        c = self.config
        weights = [1.0 / (k + 1) ** c.zipf_alpha for k in range(c.num_tables)] \
            if c.table_distribution == "zipf" else None
        writers, writer_interval_s = c.writers, c.commit_interval_s
        if c.group_commit_s is not None:
            # Group commit: the writers hand their files to one committer per table, which commits every
            # group_commit_s, or (0) as soon as its previous commit lands: then its commits are due an
            # uncontended catalog read and CAS apart (their medians), so it is never waiting on the schedule.
            writers = c.num_tables
            writer_interval_s = (c.group_commit_s if c.group_commit_s > 0
                                 else (self.catalog_read.median_ms + self.catalog_cas.median_ms) / 1000.0)
        specs = [(WRITER, writer_interval_s, w) for w in range(writers)]
        specs += [(MAINTENANCE, c.maintenance_interval_s, m) for m in range(c.maintenance_jobs or 0)]
        for job_class, interval_s, index in specs:
            interval = interval_s * 1000.0
            if c.group_commit_s is not None and job_class == WRITER:
                table = index  # committer k commits table k
            elif job_class == MAINTENANCE or weights is None:
                table = index % c.num_tables
            else:
                table = self.random.choices(range(c.num_tables), weights)[0]
            due = self.random.uniform(0, interval)
            if job_class == WRITER and c.writer_phase_seed is not None:  # one pattern of phases for every seed
                due = float(np.random.default_rng(c.writer_phase_seed).uniform(0.0, interval_s, writers)[index])
                due *= 1000.0
            commits = []
            while due < c.duration_ms:
                if job_class == WRITER:
                    commits.append((due, 0.0, self.draw_op()))
                else:
                    runtime = max(c.runtime_min_ms,
                                  self.random.lognormvariate(math.log(c.runtime_median_ms), c.runtime_sigma))
                    commits.append((due, runtime, VALIDATED_OVERWRITE))
                due += interval
            yield job_class, table, commits

    def arrivals(self):
        c = self.config
        t = 0.0
        weights = [1.0 / (k + 1) ** c.zipf_alpha for k in range(c.num_tables)] \
            if c.table_distribution == "zipf" else [1.0] * c.num_tables
        while True:
            if c.arrivals == "exponential":
                gap = self.random.expovariate(1.0 / c.inter_arrival_scale_ms)
            else:
                gap = max(1.0, self.random.lognormvariate(math.log(c.inter_arrival_scale_ms), c.inter_arrival_sigma))
            t += gap
            if t >= c.duration_ms:
                return
            runtime = max(c.runtime_min_ms, self.random.lognormvariate(math.log(c.runtime_median_ms), c.runtime_sigma))
            u = self.random.random()
            op = FAST_APPEND if u < c.fast_append_ratio else (
                MERGE_APPEND if u < c.fast_append_ratio + c.merge_append_ratio else VALIDATED_OVERWRITE)
            table = self.random.choices(range(c.num_tables), weights)[0]
            yield t, runtime, op, table

    # -- one transaction --------------------------------------------------------

    def read_catalog(self, table: int):
        """A catalog read: the state it returns is the catalog's at its end (published) or half-way (corrected)."""
        latency = self.latency(self.catalog_read)
        if self.corrected:
            yield latency / 2
            state = (self.seq, self.table_version[table])
            yield latency / 2
        else:
            yield latency
            state = (self.seq, self.table_version[table])
        return state

    def reads_in_turn(self, count: int) -> float:
        """How long ``count`` storage reads sent one after another take, each drawn on its own.

        Each read is ``latency``'s lognormal, its normal drawn the way ``random.gauss`` draws one (Box-Muller:
        two normals from each pair of uniforms), in one loop: the log entries a delta-rs commit reads under
        load are most of the oracle's draws, and a call of ``gauss`` per read was most of its time. From
        ``BULK_READS`` reads on, one NumPy array of them (the same lognormal, from the oracle's second stream)."""
        dist = self.storage_read
        if dist.sigma == 0:
            return count * dist.median_ms
        mu, sigma, floor = math.log(dist.median_ms), dist.sigma, dist.floor_ms
        if count >= BULK_READS:
            return float(np.maximum(self.bulk_random.lognormal(mu, sigma, count), floor).sum())
        uniform, exp, log, sqrt, cos, sin = self.random.random, math.exp, math.log, math.sqrt, math.cos, math.sin
        total = 0.0
        pairs, odd = divmod(count, 2)
        for _ in range(pairs):
            angle = uniform() * math.tau
            radius = sqrt(-2.0 * log(1.0 - uniform())) * sigma
            first, second = exp(mu + cos(angle) * radius), exp(mu + sin(angle) * radius)
            total += (first if first > floor else floor) + (second if second > floor else floor)
        if odd:   # the last read: one normal of one more pair
            angle = uniform() * math.tau
            last = exp(mu + cos(angle) * sqrt(-2.0 * log(1.0 - uniform())) * sigma)
            total += last if last > floor else floor
        return total

    def round_extra(self, entries: int) -> float:
        """What a traced call's round of ``entries`` reads sent at once takes beyond one read."""
        if self.config.table_load_reads is None:
            return 0.0
        return self.config.latency_profile.read_round_ms_per_read * max(entries - 1, 0)

    def snapshot_update(self, table: int, entries: int):
        """delta-rs updates its snapshot to a version it knows: a listing, then the new entries, each round
        all at once (two rounds as traced, with table_load_reads; one before)."""
        yield from self.read_catalog(table)
        for _ in range(1 if self.config.table_load_reads is None else 2):
            yield self.latency(self.storage_read) + self.round_extra(entries)

    def attempt_io(self, first: bool = True):
        c = self.config
        reads, writes = (c.attempt_reads, c.attempt_writes) if first else (c.retry_reads, c.retry_writes)
        if self.traced:   # Iceberg Java's requests from the snapshot to the check, as traced
            if self.server_checks:   # the load's metadata, the manifest list (HEAD, GET); manifest (first), list
                reads, writes = (3, 2) if first else (3, 1)
            else:                    # the manifest list (HEAD, GET); manifest (first), list, metadata
                reads, writes = (2, 3) if first else (3, 2)
        if self.corrected and reads is not None:   # a traced call's requests (PyIceberg's), reads then writes
            for _ in range(reads if first else reads - 1):   # a retry's first read found its conflict
                yield self.latency(self.storage_read)
            for _ in range(writes):
                yield self.latency(self.ml_write)
            return
        if self.ducklake:   # the commit is rows of the catalog database: nothing of the store to read or write,
            if first:       # but the data file, written inside the transaction (after its snapshot) and reused
                yield self.latency(self.mf_write)
            return
        if self.unity:
            yield self.latency(self.tm_write)       # write a staged commit file for the next version
            return
        if self.v4:   # Iceberg v4: the catalog holds the table's state; only the root manifest is rewritten
            yield self.latency(self.storage_read)   # read the parent's root manifest
            yield self.latency(self.ml_write)       # write a new root over the reused leaf manifests
            return
        if self.corrected:   # the manifest file was written during the runtime
            yield self.latency(self.storage_read)   # read the table metadata
            yield self.latency(self.storage_read)   # read the manifest list
            yield self.latency(self.ml_write)       # write the new manifest list
            yield self.latency(self.tm_write)       # write the new table metadata
        else:
            yield self.latency(self.storage_read)   # read the manifest list
            yield self.latency(self.mf_write)       # write a new manifest file
            yield self.latency(self.ml_write)       # write the new manifest list

    def transaction(self, record: dict):
        c = self.config
        table = record["table"]
        snapshot = yield from self.read_catalog(table)
        yield record["runtime"]
        rewrite_manifests = True
        # Corrected, a commit that is a log entry (delta-rs): list the log as the commit begins, read each
        # entry missed since, and create the next one: no metadata or manifest I/O.
        # A catalog service's commit is its own call, whatever the client retries with (DuckLake's rows, Unity
        # Catalog's ratified versions): no log of the store to list.
        log_entries = self.corrected and c.retry_rewrite == "none" and self.database is None
        # A delta-rs commit is a write_deltalake call: the read above was its table load's listing; the
        # load then reads the log's entries (all at once) and the call writes its data file; a listing that
        # finds new entries is followed by a snapshot update (a listing, the entries at once), and so is
        # the created entry.
        delta_call = log_entries and c.client == "delta-rs"
        if delta_call:
            for _ in range(c.table_load_reads or 1):   # the load reads its checkpoint and the log's entries
                yield self.latency(self.storage_read)
            since_checkpoint = snapshot[1] % 100   # ... those since the last checkpoint in two of its rounds
            yield 2 * self.round_extra(since_checkpoint)
            yield self.latency(self.mf_write)       # the data file
        record["commit_start"] = self.now
        if log_entries:
            listed = yield from self.read_catalog(table)
            if listed[0] > snapshot[0]:
                yield self.reads_in_turn(listed[0] - snapshot[0])
            if delta_call and listed[0] > snapshot[0]:
                yield from self.snapshot_update(table, listed[0] - snapshot[0])
            snapshot = listed
            rewrite_manifests = False
        for attempt in range(c.retry + 1):
            if self.unity:   # every attempt stages its own commit file, whatever else it reuses
                yield from self.attempt_io(first=attempt == 0)
            elif rewrite_manifests or (self.corrected and attempt > 0 and c.retry_rewrite == "manifest_list"):
                yield from self.attempt_io(first=attempt == 0)
            elif attempt > 0 and c.retry_rewrite == "manifest_list":
                yield self.latency(self.storage_read)   # read the parent's manifest list
                yield self.latency(self.ml_write)       # write a new one over the reused manifests
            # A traced commit checks its table's pointer first: one that moved fails the attempt before its CAS.
            moved = (yield from self.check_pointer(table, snapshot)) if self.traced else False
            if not moved:
                yield from self.cas(record, table, snapshot, delta_call)
                if record["status"] == COMMITTED:
                    return
                if self.server_checks:   # the server lost its update: it waits, reloads, and only then answers 409
                    yield 100.0 + 10.0 * self.random.random() + self.database.commit_median_ms + \
                        self.latency(self.storage_read)
            if c.retry_budget_ms is not None and attempt >= 1 and self.now - record["commit_start"] > c.retry_budget_ms:
                record["status"] = ABORTED_BUDGET      # out of budget: give up without looking again
                return
            retrying = attempt < c.retry
            if retrying and c.retry_policy == "backoff":
                yield self.backoff(record["retries"] + 1)   # wait, then look
            new_snapshot = yield from self.read_catalog(table)   # learn what changed
            if log_entries:
                if new_snapshot[0] > snapshot[0]:   # ... from each log entry that beat it
                    yield self.reads_in_turn(new_snapshot[0] - snapshot[0])
                if delta_call and new_snapshot[0] > snapshot[0]:
                    yield from self.snapshot_update(table, new_snapshot[0] - snapshot[0])
            elif self.unity:   # ... from the commit file of each version ratified since its snapshot
                if new_snapshot[1] > snapshot[1]:
                    yield self.reads_in_turn(new_snapshot[1] - snapshot[1])
            elif self.corrected and not (self.ducklake or self.v4):
                # ... from the table metadata the catalog points at (v4 and DuckLake have no such file: the
                # catalog's answer already says what changed)
                yield self.latency(self.storage_read)
            same_table = new_snapshot[1] != snapshot[1]
            record["same" if same_table else "catalog_only"] += 1
            if retrying and same_table and c.retry_policy == "split":
                yield self.backoff(record["same"])      # wait, then look again
                new_snapshot = yield from self.read_catalog(table)
                if log_entries:
                    if new_snapshot[0] > snapshot[0]:
                        yield self.reads_in_turn(new_snapshot[0] - snapshot[0])
                    if delta_call and new_snapshot[0] > snapshot[0]:
                        yield from self.snapshot_update(table, new_snapshot[0] - snapshot[0])
                elif self.unity:
                    if new_snapshot[1] > snapshot[1]:
                        yield self.reads_in_turn(new_snapshot[1] - snapshot[1])
                elif self.corrected and not (self.ducklake or self.v4):
                    yield self.latency(self.storage_read)
            # Commits missed: to any table (the reference) or, with vo_convoy="table" or corrected, to ours.
            counted = 1 if c.vo_convoy == "table" or self.corrected else 0
            behind = new_snapshot[counted] - snapshot[counted]
            if same_table and record["op"] == VALIDATED_OVERWRITE:
                # The corrected attempt's own manifest-list read covers the newest version.
                convoy = max(behind - 1, 0) if self.corrected else behind   # the I/O convoy
                if self.ducklake or self.unity:   # no manifest lists: it validates against what it has read
                    convoy = 0
                if convoy > 0:
                    yield self.reads_in_turn(convoy)
                if self.random.random() < c.real_conflict_probability:
                    record["status"] = ABORTED_VALIDATION
                    return
            if same_table and record["op"] == MERGE_APPEND and not (self.ducklake or self.unity):
                # (DuckLake's and Delta's tables have no manifests to merge)
                merged = int(behind * c.merge_manifests_per_commit)   # read and rewrite each, one after another
                if merged > 0:
                    yield sum(self.latency(self.storage_read) + self.latency(self.mf_write) for _ in range(merged))
            if not retrying:
                break
            record["retries"] += 1
            snapshot = new_snapshot
            rewrite_manifests = same_table and c.retry_rewrite is None
        record["status"] = ABORTED_MAX_RETRIES

    def cas(self, record: dict, table: int, snapshot, delta_call: bool):
        """An attempt's CAS, decided against the table's pointer or the whole catalog's; a commit that lands
        ends the transaction (its status COMMITTED)."""
        c = self.config
        refused = c.cas_throttle_per_s is not None and not self.take_token(self.now)
        if refused:
            record["throttled"] += 1
        cas = self.latency(self.catalog_cas)
        if self.corrected and c.catalog == "storage":   # at least a PUT of the catalog object
            cas = max(cas, self.latency(self.catalog_put))
        decided_at = 0.5 if self.corrected else 1.0
        if self.servers is not None:
            # The call reaches the service after half its round trip and waits for a free server of the
            # database, which works on it for the call's latency less the round trip, deciding half-way.
            rtt = c.catalog_latency_ms
            work = cas - rtt
            arrives = self.now + rtt / 2
            starts = max(arrives, heapq.heappop(self.servers))
            heapq.heappush(self.servers, starts + work)
            yield starts - self.now + work / 2
        else:
            yield cas * decided_at
        while not refused and self.seq == snapshot[0] and self.now < self.free_at:
            yield self.free_at - self.now   # it would succeed: it waits for the object's hold to end
        # The CAS is decided now: against the table's pointer, or the whole catalog's.
        current = self.table_version[table] == snapshot[1] if self.table_pointer else self.seq == snapshot[0]
        if not refused and current and self.unity and self.unpublished(table) >= self.unity_cap:
            refused = True   # the table holds as many unpublished versions as Unity Catalog allows
            record["throttled"] += 1
        committed = not refused and current
        published = None   # Unity Catalog: when the version it ratified is published
        if committed:
            self.free_at = self.now + self.hold_ms
            self.seq += 1
            self.table_version[table] += 1
            if self.unity:
                # The committer publishes the ratified version to the table's log once it hears of it
                # (the answer's way back, then a write), and versions are published in order.
                written = self.now + cas * (1.0 - decided_at) + self.latency(self.tm_write)
                earlier = self.published_at[table]
                published = max(written, earlier[-1]) if earlier else written
                earlier.append(published)
        if decided_at < 1.0:
            yield cas * (1.0 - decided_at)   # the answer's way back
        if c.catalog == "append":
            yield self.latency(self.catalog_read)   # read the log back to learn the outcome
        if published is not None:
            yield published - self.now   # the backfill: the commit ends once its version is published
        if committed:
            if self.traced:
                if self.server_checks:   # the server reads back what it wrote, to answer
                    yield self.database.commit_median_ms + self.latency(self.storage_read)
                yield from self.read_catalog(table)        # the client's refresh after its commit ...
                yield self.latency(self.storage_read)      # ... and the new metadata file
            if delta_call:
                yield from self.snapshot_update(table, 1)   # the post-commit hook
                if c.table_load_reads is not None:
                    yield from self.read_catalog(table)   # ... and its closing listing
            record["status"] = COMMITTED
            return

    def check_pointer(self, table: int, snapshot):
        """A traced commit's check of its table's pointer before the update: whether it moved since the
        snapshot (then the attempt has failed, its answer arrived). A JdbcCatalog's client reads the row (a
        catalog call, observing half-way); the reference server loads the table as the commit arrives (half a
        round trip, then a database call, then the metadata file) and, when unchanged, writes the next metadata
        file and reads the row again before the update, whose call the CAS draws."""
        if not self.server_checks:
            call = self.latency(self.catalog_read)
            yield call / 2
            moved = self.table_version[table] != snapshot[1]
            yield call / 2
            return moved
        db, rtt = self.database.commit_median_ms, self.config.catalog_latency_ms
        yield (rtt + db) / 2
        moved = self.table_version[table] != snapshot[1]
        yield db / 2
        if moved:
            yield self.latency(self.storage_read) + rtt / 2   # the metadata file read with the load; the 409 back
            return True
        # ... the load's metadata read, the new metadata written, the row read; the CAS's call goes there and back
        yield max(self.latency(self.storage_read) + self.latency(self.tm_write) + db - rtt / 2, 0.0)
        return False

    def unpublished(self, table: int) -> int:
        """How many of ``table``'s ratified versions are not yet published to its log now."""
        count = 0
        for publish in reversed(self.published_at[table]):
            if publish <= self.now:
                break   # versions are published in order: every earlier one is published too
            count += 1
        return count

    def take_token(self, now: float) -> bool:
        """Token bucket of the throttled object: does a CAS sent now get a token?"""
        refill = (now - self.tokens_at) * self.config.cas_throttle_per_s / 1000.0
        self.tokens = min(self.config.cas_throttle_burst, self.tokens + refill)
        self.tokens_at = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    def backoff(self, n: int) -> float:
        """The nth wait: base x multiplier^(n-1), capped, jittered."""
        c = self.config
        delay = min(c.backoff_cap_ms, c.backoff_base_ms * c.backoff_multiplier ** (n - 1))
        shape = c.backoff_jitter_shape
        if shape == "range":
            return self.random.uniform(min(c.backoff_base_ms, delay), delay)
        if shape == "up":
            return delay * (1 + c.backoff_jitter * self.random.random())
        if shape == "down":
            return delay * (1 - c.backoff_jitter * self.random.random())
        return delay * (1 + c.backoff_jitter * (2 * self.random.random() - 1))

    # -- the event loop -----------------------------------------------------------

    @staticmethod
    def new_record(submit, runtime, op, table, job_class=OPEN_LOOP):
        return dict(submit=submit, runtime=runtime, op=op, table=table, status=UNFINISHED, retries=0, same=0,
                    catalog_only=0, throttled=0, end=math.nan, start=math.nan, commit_start=math.nan,
                    job_class=job_class)

    def single(self, record):
        """An open-loop arrival: one transaction."""
        record["start"] = self.now
        yield from self.transaction(record)
        record["end"] = self.now

    def job(self, records):
        """A writer or maintenance job: each commit when due, or when the previous one ends if later."""
        for record in records:
            if record["submit"] > self.now:
                yield record["submit"] - self.now
            record["start"] = self.now
            yield from self.transaction(record)
            record["end"] = self.now

    def run(self) -> tuple[Workload, Outcome]:
        records = []
        heap = []
        tiebreak = 0
        if self.config.writers is not None:
            for job_class, table, commits in self.jobs():
                mine = [self.new_record(due, runtime, op, table, job_class) for due, runtime, op in commits]
                records += mine
                if mine:
                    heapq.heappush(heap, (mine[0]["submit"], tiebreak, self.job(mine)))
                    tiebreak += 1
        else:
            for submit, runtime, op, table in self.arrivals():
                record = self.new_record(submit, runtime, op, table)
                records.append(record)
                heapq.heappush(heap, (submit, tiebreak, self.single(record)))
                tiebreak += 1
        while heap:
            now, _, process = heapq.heappop(heap)
            if now >= self.config.duration_ms:
                break
            self.now = now
            try:
                delay = next(process)
            except StopIteration:
                continue
            heapq.heappush(heap, (now + delay, tiebreak, process))
            tiebreak += 1
        for record in records:
            if math.isnan(record["end"]):
                record["status"] = UNFINISHED
            if self.config.group_commit_s == 0.0:
                # A back-to-back committer's commit is submitted when it starts (its due time is only the
                # committer's pace); one that never started was never submitted.
                record["submit"] = record["start"] if not math.isnan(record["start"]) else math.inf
        records.sort(key=lambda r: r["submit"])
        return self._arrays(records)

    def _arrays(self, records) -> tuple[Workload, Outcome]:
        def column(name, dtype):
            return np.array([r[name] for r in records], dtype=dtype)

        workload = Workload(submit_ms=column("submit", float), runtime_ms=column("runtime", float),
                            op=column("op", np.int8), table=column("table", np.int32),
                            job_class=column("job_class", np.int8) if self.config.writers is not None else None)
        outcome = Outcome.from_records(
            status=column("status", np.int8), end_ms=column("end", float),
            commit_start_ms=column("commit_start", float), retries=column("retries", np.int32),
            conflicts_same_table=column("same", np.int32), conflicts_catalog_only=column("catalog_only", np.int32),
            final_seq=self.seq, start_ms=column("start", float))
        return workload, replace(outcome, cas_throttled=column("throttled", np.int32))
