"""The simulation config: one frozen, validated value per experiment point.

A ``SimConfig`` names everything that changes a simulation's outcome. It is
checked when built, so a bad value fails at once with a ``ConfigError`` that
names the field, the value and what is allowed, long before any work is
scheduled. ``config_hash`` is derived from the content only, so the same
point has the same hash whichever grid or process produced it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any, Mapping, Optional

from simcore.clients import client_names
from simcore.errors import ConfigError
from simcore.profiles import canonical_json, measured_profile, profile_from_json
from simcore.providers import PROVIDERS, Provider

CATALOG_BACKENDS = ("storage", "service", "append", "rest", "ducklake", "unity")
# The catalogs whose commits go through a catalog service backed by a database (docs/architectures.md): a
# REST catalog's per-table pointer, DuckLake's global snapshot id, Unity Catalog's ratified Delta versions.
SERVICE_CATALOGS = ("rest", "ducklake", "unity")
# Every catalog whose reads and commits are calls to a service, so that no object of the store is raced: seed
# 001's service of fixed latency and the catalog services over a database.
SERVICE_CALL_CATALOGS = ("service", *SERVICE_CATALOGS)
# The catalogs whose pointer is per table, so only commits to the same table conflict.
TABLE_POINTER_CATALOGS = ("rest", "unity")
# The database behind each catalog service by default: PostgreSQL, measured with the catalog's own commit
# transaction (Iceberg JDBC's conditional UPDATE; DuckLake's snapshot insert), studies/catalog_service.
DEFAULT_CATALOG_DATABASES = {"rest": "postgresql", "unity": "postgresql", "ducklake": "postgresql-ducklake"}
DEFAULT_SERVICE_ROUND_TRIP_MS = 1.0  # client to catalog service and back, in one region
# The table-metadata format: Iceberg v3 (metadata.json, a manifest list) or v4 (a root manifest, no metadata file
# where the catalog holds the table's state). The first is the default (stored as None).
METADATA_FORMATS = ("v3", "v4")
V4_CATALOGS = ("storage", "service", "rest")
# Who writes a REST catalog's new metadata file: its server (the reference server, Polaris, Lakekeeper) or the
# client before its conditional update (Glue, S3 Tables, JDBC). The first is the default (stored as None).
METADATA_WRITERS = ("server", "client")
RETRY_POLICIES = ("immediate", "backoff", "split")
VO_CONVOYS = ("catalog", "table")
TABLE_DISTRIBUTIONS = ("uniform", "zipf")
ARRIVAL_DISTRIBUTIONS = ("lognormal", "exponential")
# Client retry behaviour (see simcore/clients.py); the first of each is the default (stored as None).
JITTER_SHAPES = ("symmetric", "up", "down", "range")
RETRY_REWRITES = ("conflict", "manifest_list", "none")
# The commit protocol (SimConfig.protocol): the reference as published (seed 001's figures) or as its
# author corrected it (the errata of 2026-04/06). The default is the corrected one.
PROTOCOLS = ("corrected", "published")
DEFAULT_PROTOCOL = "corrected"

DEFAULT_ZIPF_ALPHA = 1.5
DEFAULT_CATALOG_LATENCY_MS = 10.0

DEFAULT_BACKOFF = {"backoff_base_ms": 10.0, "backoff_multiplier": 2.0, "backoff_cap_ms": 5000.0,
                   "backoff_jitter": 0.1}

# Steady-state window bounds: W = clamp(5 x runtime median, 5 min, 15 min).
WARMUP_RUNTIME_MULTIPLE = 5
WARMUP_MIN_S = 300.0
WARMUP_MAX_S = 900.0


@dataclass(frozen=True)
class SimConfig:
    """One simulated experiment point. Times are ms unless the name says ``_s``.

    Args:
        provider: object-store tier (``s3x, s3, azurex, azure, gcp, instant``).
        catalog: ``storage`` (the catalog is an object of ``provider``; its read
            and CAS are storage operations) or ``service`` (a catalog service
            whose read and CAS each take exactly ``catalog_latency_ms``), or a
            catalog service over a database (``catalog_database``): ``rest``
            (an Iceberg REST catalog: a pointer per table, so only commits to
            one table conflict), ``ducklake`` (one snapshot id for the whole
            lake; a retry writes nothing to the store) or ``unity`` (Delta's
            catalog-managed commits: a staged commit, ratified as the table's
            next version, then published to the log); docs/architectures.md.
            ``append`` is a catalog log object of ``provider`` committed to by a
            position-conditional append plus a discovery read (S3 Express and
            Azure only), as the reference's append catalog.
        catalog_latency_ms: the service's fixed latency; only for ``service``.
        num_tables: tables in the one catalog object; every commit to any of
            them advances the shared sequence number.
        table_distribution: ``uniform`` or ``zipf`` (P(rank k) ~ 1/k^alpha,
            table 0 is rank 1).
        zipf_alpha: the Zipf exponent; only for ``zipf``.
        fast_append_ratio: share of FastAppend transactions.
        merge_append_ratio: share of MergeAppend; the rest are ValidatedOverwrite.
        inter_arrival_scale_ms: median gap between arrivals (lognormal) or its
            mean (exponential).
        arrivals: ``lognormal`` (the reference's sigma-0.5 lognormal, floored
            at 1 ms, which it calls "exponential") or ``exponential``.
        duration_s: simulated time; transactions unfinished at its end are
            not recorded.
        retry: retries after the first attempt (at most ``retry + 1`` CAS).
        real_conflict_probability: chance a VO aborts on a same-table conflict.
        retry_policy: when a failed attempt retries. None or ``immediate`` (at
            once, the reference's behaviour), ``backoff`` (wait
            min(cap, base x multiplier^(n-1)) x (1 +/- jitter) before the n-th
            retry) or ``split`` (catalog-only conflicts at once, same-table
            conflicts back off, n counting same-table conflicts), as seed 001
            recommends. The wait comes before the catalog re-read, so a
            retry builds on a snapshot taken after it; ``split`` reads once
            to classify the conflict, and again after a same-table wait.
        backoff_base_ms, backoff_multiplier, backoff_cap_ms, backoff_jitter: the
            backoff; only with ``backoff`` or ``split`` (defaults 10 ms, 2,
            5000 ms, 0.1).
        cas_throttle_per_s: a per-object write rate limit on the catalog
            object: a token bucket of ``cas_throttle_burst`` tokens refilled at
            this rate; a CAS request that finds a token takes it, one that
            finds none is refused after its round trip (a failed attempt, as a
            429 from GCS). None: unlimited, or the profile's own throttle
            (``OperationLatency.throttle``, the measured GCS and Azure profiles),
            which this replaces when set; the profile's resends of refused
            requests apply either way. GCS documents about 1 write/s.
        cas_throttle_burst: the bucket's size (default 1); only with a throttle.
        client: the client preset these settings came from (a label; the
            behaviour is in the fields, see ``simcore.builder.build_config``,
            except that ``delta-rs`` under the corrected protocol with
            ``retry_rewrite`` "none" also models its write_deltalake call:
            docs/reference/clients.md).
        backoff_jitter_shape: how the jitter spreads a wait w: None or
            ``symmetric`` (w x (1 +/- j)), ``up`` (w x (1 + U[0, j)), Iceberg
            Java), ``down`` (w x (1 - U[0, j)), DuckLake) or ``range``
            (U[base, w], iceberg-go); only with a retry policy.
        retry_budget_ms: a commit that has failed at least twice and has
            spent more than this since its runtime ended aborts at once
            (``retry_budget_exceeded``), as Iceberg's
            ``commit.retry.total-timeout-ms``. None: no budget.
        retry_rewrite: what each retry writes before its CAS. None or
            ``conflict`` (the reference: read the manifest list, write a
            manifest file and a manifest list, after a same-table conflict
            only), ``manifest_list`` (every retry reads the parent's manifest
            list and writes a new one; the data manifests are reused) or
            ``none`` (only the commit itself, as a Delta log entry).
        table_load_reads: delta-rs's write_deltalake call as traced
            (deltalake 1.6.6, docs/reference/clients.md): the rounds of reads its table
            load makes after the listing that fixes its snapshot (14 on a
            table with a checkpoint, as every table past its 100th version
            has, its ``_last_checkpoint`` read counted; 2 without), each
            snapshot update's two rounds of entry reads, the load's two rounds
            of the entries since the last checkpoint (each round longer by the
            profile's ``[read] round_ms_per_read`` for each entry past the
            first), and the post-commit hook's closing listing. None: the call as
            modelled before the trace (one round each, no closing listing),
            so a config stored before reads as what made it. Only with client
            ``delta-rs`` under the corrected protocol with ``retry_rewrite``
            "none"; elsewhere it is dropped.
        attempt_reads, attempt_writes: the requests a first attempt makes,
            one after another, between its snapshot and its CAS, as a
            client's call was traced (PyIceberg 0.12 with a SQL catalog: 9
            reads and 12 writes: the load's metadata, the data file, the
            manifest and the manifest list as multipart uploads, the
            catalog's checks and the new metadata file; docs/reference/clients.md).
            They replace the corrected attempt's four requests (table
            metadata and manifest list, read then written). None: those four.
        retry_reads, retry_writes: the same for each retry that rewrites,
            from its catalog read to its CAS, the table-metadata read that
            finds the conflict counted among the reads (PyIceberg: 8 and 9).
            Each pair is given together, and only under the corrected
            protocol for a commit that swaps a catalog object (not a log
            entry); elsewhere they are dropped.
        writers: a writer workload instead of open-loop arrivals: this many
            streaming writers, each committing every ``commit_interval_s``
            (its next commit is due one interval after the previous one was
            due, or at once if that one ended late). A writer's commit reads
            the catalog when it starts and goes straight to its commit (its
            data files were written during the interval); writer ``w`` writes
            table ``w mod num_tables`` (Zipf: a table drawn once per writer).
            ``inter_arrival_*`` fields are ignored.
        commit_interval_s: the writers' interval.
        writer_phase_seed: the writers' phases (when in the interval each
            one's first commit is due) drawn from this seed
            (``simcore.workload.writer_phases_s``, as the real writers of
            ``studies.real_clients`` draw theirs), the same in every run
            seed; None (the default): each run seed draws its own. A fixed
            pattern of phases holds for a whole run, and near the onset of
            contention it moves the retries as much as the store does
            (studies/real_clients/README.md), so a run of real writers is compared with
            the model at its own phases.
        maintenance_jobs, maintenance_interval_s: optional maintenance jobs
            on the same tables (only with writers): job ``m`` runs a
            ValidatedOverwrite (compaction) of table ``m mod num_tables``
            every interval, each with a runtime drawn as ``runtime_*``.
        vo_convoy: how many historical manifest lists a ValidatedOverwrite
            (and a MergeAppend's re-merge) reads after a same-table conflict.
            None or ``catalog``: one per catalog commit it fell behind, to any
            table (the reference at revision 3bded463, docs/reference/model.md). ``table``:
            one per commit to its own table, as Iceberg's validation history
            reads and as seed 001 describes; its multi-table VO figures need
            it (studies/published_repro/README.md). A published-protocol choice: the corrected
            protocol's convoy always counts the table's own commits (less
            the one its attempt reads anyway), so there it is None.
        latency_model: None or ``reference`` (docs/reference/model.md's provider table, as the
            reference simulator) or ``measured`` (the profiles fitted to seed
            000's conditional-write benchmark: failed vs successful conditional
            writes, latency growing with concurrent conditional requests, the
            read observed when sent; docs/reference/profiles.md). ``measured`` fills in
            ``provider_profile`` with the provider's measured profile.
        provider_profile: the latency profile simulated instead of the built-in
            one, as canonical JSON (``simcore.profiles.canonical_json``; a
            ``--provider-file`` is read into it). The content, not a path, so
            the config hash names the figures and workers need no file;
            ``provider`` must equal the profile's name.
        protocol: the commit protocol. ``corrected`` (the default) is the
            reference's protocol as its author corrected it (2026-04 to
            2026-06): runtime includes the manifest-file write, every attempt
            reads and writes the table metadata around the manifest list,
            a failed CAS re-reads the table metadata, a retry with no overlap
            is the CAS alone (docs/reference/model.md). ``published`` is the
            protocol seed 001's figures came from (the reference as of
            2026-03-01, docs/reference/model.md), which every config had before this field
            existed: None means ``published``, so a stored config without the
            field reads as what made it.

        catalog_database: the database behind a catalog service (``rest``,
            ``ducklake``, ``unity``): a built-in name in
            ``simcore.catalog_databases`` (default ``postgresql``, for
            DuckLake ``postgresql-ducklake``: each measured with the catalog's
            own commit), or a probed database's JSON content
            (``probe-catalog --out``; the figures, not a path). Its commit service time is drawn for
            each commit, and it serves at most its ``concurrency`` commits at
            once, the rest waiting in turn (a queue): the design's ceiling.
            With these catalogs ``catalog_latency_ms`` is the round trip to the
            service (default 1 ms), added to each call.
        metadata_format: None or ``v3`` (metadata.json and a manifest list, the
            default) or ``v4`` (Iceberg v4's root manifest: an attempt reads
            the parent's root and writes a new one, its leaf manifests reused;
            the catalog holds the table's state, so no metadata file is read
            or written): catalogs storage, service and rest.
        rest_metadata_writer: who writes a REST catalog's new metadata file:
            None or ``server`` (the reference server, Polaris, Lakekeeper) or
            ``client`` (Glue, S3 Tables, JDBC), before the conditional update.
        group_commit_s: with writers: each writer hands its files to one
            committer per table, which commits them every this many seconds
            (0: as soon as its previous commit lands); the catalog sees the
            committers' commits only (docs/architectures.md, "Group commit").
        traced_commit: a REST catalog's commit as a real client makes it,
            request by request, as traced on the lab (``iceberg-java``: Iceberg
            Java 1.12's FastAppend through the reference REST server or, with
            ``rest_metadata_writer`` ``client``, a JdbcCatalog; docs/architectures.md,
            "Iceberg Java's commit, as traced"): the manifest written inside
            the first attempt, the manifest list's HEAD before its GET, the
            check of the table's pointer before the conditional update (a
            409 there, before the CAS), the server's own retry of a lost
            update, the refresh after a commit. None: the corrected attempt's
            four requests. Only with catalog ``rest``, v3, under the corrected
            protocol; elsewhere it is dropped.

    Fields that are None do not enter ``config_hash``, so adding an optional
    behaviour later leaves the hash of every existing config unchanged; a
    ``published`` protocol stays out of the hash for the same reason.
    """

    provider: str = "s3"
    catalog: str = "storage"
    catalog_latency_ms: Optional[float] = None
    num_tables: int = 1
    table_distribution: str = "uniform"
    zipf_alpha: Optional[float] = None
    fast_append_ratio: float = 1.0
    merge_append_ratio: float = 0.0
    inter_arrival_scale_ms: float = 100.0
    arrivals: str = "lognormal"
    inter_arrival_sigma: float = 0.5
    runtime_median_ms: float = 180_000.0
    runtime_sigma: float = 1.5
    runtime_min_ms: float = 30_000.0
    duration_s: float = 3600.0
    retry: int = 10
    real_conflict_probability: float = 0.0
    merge_manifests_per_commit: float = 1.5
    retry_policy: Optional[str] = None
    backoff_base_ms: Optional[float] = None
    backoff_multiplier: Optional[float] = None
    backoff_cap_ms: Optional[float] = None
    backoff_jitter: Optional[float] = None
    cas_throttle_per_s: Optional[float] = None
    cas_throttle_burst: Optional[float] = None
    client: Optional[str] = None
    backoff_jitter_shape: Optional[str] = None
    retry_budget_ms: Optional[float] = None
    retry_rewrite: Optional[str] = None
    table_load_reads: Optional[int] = None
    attempt_reads: Optional[int] = None
    attempt_writes: Optional[int] = None
    retry_reads: Optional[int] = None
    retry_writes: Optional[int] = None
    writers: Optional[int] = None
    commit_interval_s: Optional[float] = None
    writer_phase_seed: Optional[int] = None
    maintenance_jobs: Optional[int] = None
    maintenance_interval_s: Optional[float] = None
    vo_convoy: Optional[str] = None
    latency_model: Optional[str] = None
    provider_profile: Optional[str] = None
    protocol: Optional[str] = DEFAULT_PROTOCOL
    catalog_database: Optional[str] = None
    metadata_format: Optional[str] = None
    rest_metadata_writer: Optional[str] = None
    group_commit_s: Optional[float] = None
    traced_commit: Optional[str] = None

    def __post_init__(self) -> None:
        # Normalise the fields that only apply to one mode, so that two configs
        # that simulate the same thing are equal and hash the same.
        if self.catalog == "service" and self.catalog_latency_ms is None:
            object.__setattr__(self, "catalog_latency_ms", DEFAULT_CATALOG_LATENCY_MS)
        if self.catalog in SERVICE_CATALOGS:
            if self.catalog_latency_ms is None:
                object.__setattr__(self, "catalog_latency_ms", DEFAULT_SERVICE_ROUND_TRIP_MS)
            if self.catalog_database is None:
                object.__setattr__(self, "catalog_database", DEFAULT_CATALOG_DATABASES[self.catalog])
            elif self.catalog_database.lstrip().startswith("{"):  # a probed database: its content, canonical
                from simcore.catalog_databases import catalog_database

                object.__setattr__(self, "catalog_database", catalog_database(self.catalog_database).to_json())
        for name, default in (("metadata_format", METADATA_FORMATS[0]), ("rest_metadata_writer", METADATA_WRITERS[0])):
            if getattr(self, name) == default:  # the default is stored as None: hashes stay as they were
                object.__setattr__(self, name, None)
        if self.table_distribution == "zipf" and self.zipf_alpha is None:
            object.__setattr__(self, "zipf_alpha", DEFAULT_ZIPF_ALPHA)
        if self.retry_policy == "immediate":
            object.__setattr__(self, "retry_policy", None)
        if self.vo_convoy == "catalog":
            object.__setattr__(self, "vo_convoy", None)
        if self.retry_policy in ("backoff", "split"):
            for name, default in DEFAULT_BACKOFF.items():
                if getattr(self, name) is None:
                    object.__setattr__(self, name, default)
        for name, default in (("client", "reference"), ("backoff_jitter_shape", JITTER_SHAPES[0]),
                              ("retry_rewrite", RETRY_REWRITES[0])):
            if getattr(self, name) == default:  # the default is stored as None: hashes stay as they were
                object.__setattr__(self, name, None)
        if self.cas_throttle_per_s is not None and self.cas_throttle_burst is None:
            object.__setattr__(self, "cas_throttle_burst", 1.0)
        if self.latency_model == "reference":
            object.__setattr__(self, "latency_model", None)
        if self.protocol is None:  # a config from before the field: the protocol that made it
            object.__setattr__(self, "protocol", "published")
        if not delta_rs_call(self):
            object.__setattr__(self, "table_load_reads", None)  # only delta-rs's call reads a table load
        if not (self.protocol == "corrected" and not log_entry_commits(self)) or self.catalog in SERVICE_CATALOGS:
            for name in TRACED_ATTEMPT_FIELDS:  # a traced call's attempts: a corrected catalog swap's only
                object.__setattr__(self, name, None)
        if not (self.catalog == "rest" and self.protocol == "corrected" and self.metadata_format is None):
            object.__setattr__(self, "traced_commit", None)  # traced through a REST or JDBC catalog, v3 only
        if self.protocol == "corrected" and self.vo_convoy in VO_CONVOYS:  # it always counts the table's own
            object.__setattr__(self, "vo_convoy", None)
        if self.latency_model == "measured" and self.provider_profile is None and isinstance(self.provider, str):
            object.__setattr__(self, "provider_profile", canonical_json(measured_profile(self.provider)))
        if self.provider_profile is not None:
            object.__setattr__(self, "provider_profile", canonical_json(profile_from_json(self.provider_profile)))
        for name in ("catalog_latency_ms", "zipf_alpha", "fast_append_ratio", "merge_append_ratio",
                     "inter_arrival_scale_ms", "inter_arrival_sigma", "runtime_median_ms",
                     "runtime_sigma", "runtime_min_ms", "duration_s", "real_conflict_probability",
                     "merge_manifests_per_commit", *DEFAULT_BACKOFF, "cas_throttle_per_s", "cas_throttle_burst",
                     "retry_budget_ms", "commit_interval_s", "maintenance_interval_s", "group_commit_s"):
            value = getattr(self, name)
            if value is not None and _is_real(value):
                object.__setattr__(self, name, float(value))
        _validate(self)

    # -- derived values ---------------------------------------------------

    @property
    def duration_ms(self) -> float:
        return self.duration_s * 1000.0

    @property
    def warmup_s(self) -> float:
        """W: transactions submitted in [W, D - W) form the steady-state window."""
        return min(WARMUP_MAX_S, max(WARMUP_MIN_S, WARMUP_RUNTIME_MULTIPLE * self.runtime_median_ms / 1000.0))

    @property
    def latency_profile(self) -> Provider:
        """The provider profile this config simulates: its own, or the built-in one."""
        if self.provider_profile is not None:
            return profile_from_json(self.provider_profile)
        return PROVIDERS[self.provider]

    @property
    def validated_overwrite_ratio(self) -> float:
        return validated_overwrite_ratio(self.fast_append_ratio, self.merge_append_ratio)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> "SimConfig":
        """A config from field values, every key a field (else a ConfigError naming it).

        The values are taken as they are: a ``client`` is a label here. To fill
        a named client's preset fields (or read a provider file, or resolve
        command-line flags), build the config with ``simcore.builder``, which
        ends here.
        """
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(unknown[0], values[unknown[0]], f"one of the config fields {sorted(known)}")
        return cls(**values)

    def replace(self, **changes: Any) -> "SimConfig":
        return dataclasses.replace(self, **changes)

    @property
    def config_hash(self) -> str:
        """A stable 16-hex-digit digest of the config's content."""
        content = {k: v for k, v in self.to_dict().items() if v is not None}
        if content["protocol"] == "published":  # as every config hashed before the field existed
            del content["protocol"]
        canonical = json.dumps(content, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def validated_overwrite_ratio(fast_append_ratio: float, merge_append_ratio: float) -> float:
    """The ValidatedOverwrite share of a mix: what FastAppend and MergeAppend leave."""
    return max(0.0, 1.0 - fast_append_ratio - merge_append_ratio)


def _is_real(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _require_real(config: SimConfig, field: str, allowed: str, ok) -> None:
    value = getattr(config, field)
    if not _is_real(value) or not math.isfinite(value) or not ok(value):
        raise ConfigError(field, value, allowed)


def _require_choice(config: SimConfig, field: str, choices) -> None:
    value = getattr(config, field)
    if value not in choices:
        raise ConfigError(field, value, "one of " + ", ".join(choices))


def _validate(c: SimConfig) -> None:
    _require_choice(c, "protocol", PROTOCOLS)
    if c.latency_model is not None:
        _require_choice(c, "latency_model", ("reference", "measured"))
    if c.provider_profile is None:
        _require_choice(c, "provider", tuple(PROVIDERS))
    elif c.provider != c.latency_profile.name:
        raise ConfigError("provider", c.provider, f"the provider profile's name {c.latency_profile.name!r}")
    _require_choice(c, "catalog", CATALOG_BACKENDS)
    if c.catalog == "service":
        _require_real(c, "catalog_latency_ms", "a number > 0 (ms)", lambda v: v > 0)
    elif c.catalog in SERVICE_CATALOGS:
        _require_real(c, "catalog_latency_ms", "a round trip to the catalog service >= 0 (ms)", lambda v: v >= 0)
    elif c.catalog_latency_ms is not None:
        raise ConfigError("catalog_latency_ms", c.catalog_latency_ms,
                          f"no value with catalog={c.catalog} (the provider's CAS latency applies)")
    if not isinstance(c.num_tables, int) or isinstance(c.num_tables, bool) or c.num_tables < 1:
        raise ConfigError("num_tables", c.num_tables, "an integer >= 1")
    _require_choice(c, "table_distribution", TABLE_DISTRIBUTIONS)
    if c.table_distribution == "zipf":
        _require_real(c, "zipf_alpha", "a number > 0", lambda v: v > 0)
    elif c.zipf_alpha is not None:
        raise ConfigError("zipf_alpha", c.zipf_alpha, "no value with table_distribution=uniform")
    _require_real(c, "fast_append_ratio", "a fraction in [0, 1]", lambda v: 0 <= v <= 1)
    _require_real(c, "merge_append_ratio", "a fraction in [0, 1 - fast_append_ratio]",
                  lambda v: 0 <= v <= 1 - c.fast_append_ratio + 1e-12)
    _require_real(c, "inter_arrival_scale_ms", "a number > 0 (ms)", lambda v: v > 0)
    _require_choice(c, "arrivals", ARRIVAL_DISTRIBUTIONS)
    _require_real(c, "inter_arrival_sigma", "a number >= 0", lambda v: v >= 0)
    _require_real(c, "runtime_median_ms", "a number > 0 (ms)", lambda v: v > 0)
    _require_real(c, "runtime_sigma", "a number >= 0", lambda v: v >= 0)
    _require_real(c, "runtime_min_ms", "a number >= 0 (ms)", lambda v: v >= 0)
    _require_real(c, "duration_s", f"a number of seconds > 2 x the warm-up ({2 * c.warmup_s:g} s)",
                  lambda v: v > 2 * c.warmup_s)
    if not isinstance(c.retry, int) or isinstance(c.retry, bool) or not 0 <= c.retry <= 1000:
        raise ConfigError("retry", c.retry, "an integer in [0, 1000]")
    _require_real(c, "real_conflict_probability", "a probability in [0, 1]", lambda v: 0 <= v <= 1)
    _require_real(c, "merge_manifests_per_commit", "a number >= 0", lambda v: v >= 0)
    if c.catalog == "append" and not c.latency_profile.supports_append:
        raise ConfigError("provider", c.provider, "a provider with conditional append ("
                          + ", ".join(p for p in PROVIDERS if PROVIDERS[p].supports_append)
                          + ", or a profile with an [append] table) for catalog=append")
    if c.retry_policy is not None:
        _require_choice(c, "retry_policy", RETRY_POLICIES)
        _require_real(c, "backoff_base_ms", "a number >= 0 (ms)", lambda v: v >= 0)
        _require_real(c, "backoff_multiplier", "a number >= 1", lambda v: v >= 1)
        _require_real(c, "backoff_cap_ms", "a number >= 0 (ms)", lambda v: v >= 0)
        _require_real(c, "backoff_jitter", "a fraction in [0, 1]", lambda v: 0 <= v <= 1)
    else:
        for name in DEFAULT_BACKOFF:
            if getattr(c, name) is not None:
                raise ConfigError(name, getattr(c, name), "no value unless retry_policy is backoff or split")
    if c.vo_convoy is not None:
        _require_choice(c, "vo_convoy", VO_CONVOYS)
    if c.cas_throttle_per_s is not None:
        if c.catalog == "service":
            raise ConfigError("cas_throttle_per_s", c.cas_throttle_per_s,
                              "no value with catalog=service (the throttle limits writes to a storage object)")
        _require_real(c, "cas_throttle_per_s", "a rate > 0 (writes per second)", lambda v: v > 0)
        _require_real(c, "cas_throttle_burst", "a number of tokens >= 1", lambda v: v >= 1)
    elif c.cas_throttle_burst is not None:
        raise ConfigError("cas_throttle_burst", c.cas_throttle_burst, "no value unless cas_throttle_per_s is set")
    _validate_client_and_writers(c)
    _validate_design(c)


def _validate_design(c: SimConfig) -> None:
    """The commit design's fields: a catalog service's database, the metadata format, group commit."""
    if c.catalog in SERVICE_CATALOGS:
        if c.protocol != "corrected":
            raise ConfigError("protocol", c.protocol, f"corrected with catalog={c.catalog} (the published "
                              "protocol is the reference's catalog object)")
        from simcore.catalog_databases import catalog_database  # checks the name
        catalog_database(c.catalog_database)
    elif c.catalog_database is not None:
        raise ConfigError("catalog_database", c.catalog_database,
                          "no value unless catalog is " + ", ".join(SERVICE_CATALOGS))
    if c.metadata_format is not None:
        _require_choice(c, "metadata_format", METADATA_FORMATS)
        if c.catalog not in V4_CATALOGS:
            raise ConfigError("metadata_format", c.metadata_format, "v3 with catalog=" + c.catalog
                              + " (v4's root manifest applies to an Iceberg table's catalog: "
                              + ", ".join(V4_CATALOGS) + ")")
        if c.protocol != "corrected" or log_entry_commits(c) or c.attempt_reads is not None:
            raise ConfigError("metadata_format", c.metadata_format,
                              "v3 for this client (v4 applies to the corrected protocol's Iceberg commits, "
                              "not a log entry's or a traced v3 call's)")
    if c.rest_metadata_writer is not None:
        _require_choice(c, "rest_metadata_writer", METADATA_WRITERS)
        if c.catalog != "rest":
            raise ConfigError("rest_metadata_writer", c.rest_metadata_writer, "no value unless catalog is rest")
    if c.traced_commit is not None:
        _require_choice(c, "traced_commit", TRACED_COMMITS)
    if c.group_commit_s is not None:
        _require_real(c, "group_commit_s", "a number of seconds >= 0", lambda v: v >= 0)
        if c.writers is None:
            raise ConfigError("group_commit_s", c.group_commit_s, "no value unless writers is set")
        if c.maintenance_jobs is not None:
            raise ConfigError("group_commit_s", c.group_commit_s, "no value with maintenance_jobs")


def log_entry_commits(config: SimConfig) -> bool:
    """Whether a commit creates the log's next entry (delta-rs, DuckLake: the corrected protocol with retries
    that rewrite nothing), listing the log to learn the latest, rather than swapping one catalog object.
    The kernel's ``log_entries`` is the same test."""
    return (config.protocol == "corrected" and config.retry_rewrite == "none"
            and config.catalog not in SERVICE_CATALOGS)


def delta_rs_call(config: SimConfig) -> bool:
    """Whether a commit is a whole write_deltalake call (table load, data file, commit, post-commit hook):
    delta-rs's log-entry commits (docs/reference/clients.md, "delta-rs on the model")."""
    return config.client == "delta-rs" and log_entry_commits(config)


# Clients whose commit through a REST catalog (or its JDBC sibling) was traced request by request on the lab.
TRACED_COMMITS = ("iceberg-java",)

# A traced call's attempts (PyIceberg's): the requests of a first attempt and of each retry, reads and writes.
TRACED_ATTEMPT_FIELDS = ("attempt_reads", "attempt_writes", "retry_reads", "retry_writes")


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _validate_client_and_writers(c: SimConfig) -> None:
    if c.client is not None:
        _require_choice(c, "client", client_names())
    if c.backoff_jitter_shape is not None:
        if c.retry_policy is None:
            raise ConfigError("backoff_jitter_shape", c.backoff_jitter_shape,
                              "no value unless retry_policy is backoff or split")
        _require_choice(c, "backoff_jitter_shape", JITTER_SHAPES)
    if c.retry_budget_ms is not None:
        _require_real(c, "retry_budget_ms", "a number > 0 (ms)", lambda v: v > 0)
    if c.retry_rewrite is not None:
        _require_choice(c, "retry_rewrite", RETRY_REWRITES)
    if c.table_load_reads is not None and not (_is_count(c.table_load_reads) and c.table_load_reads <= 1000):
        raise ConfigError("table_load_reads", c.table_load_reads, "an integer from 1 to 1000")
    for pair in (TRACED_ATTEMPT_FIELDS[:2], TRACED_ATTEMPT_FIELDS[2:]):
        given = [name for name in pair if getattr(c, name) is not None]
        if len(given) == 1:
            missing = next(name for name in pair if name not in given)
            raise ConfigError(missing, None, f"a count of requests, given with {given[0]}")
        least = 1 if pair[0] == "retry_reads" else 0  # a retry reads the table metadata to find its conflict
        for name in given:
            value = getattr(c, name)
            if not (isinstance(value, int) and not isinstance(value, bool) and least <= value <= 1000):
                raise ConfigError(name, value, f"an integer from {least} to 1000")
    if c.writers is not None:
        if not _is_count(c.writers):
            raise ConfigError("writers", c.writers, "an integer >= 1")
        _require_real(c, "commit_interval_s", "a number of seconds > 0 (required with writers)", lambda v: v > 0)
    elif c.commit_interval_s is not None:
        raise ConfigError("commit_interval_s", c.commit_interval_s, "no value unless writers is set")
    if c.writer_phase_seed is not None:
        if c.writers is None:
            raise ConfigError("writer_phase_seed", c.writer_phase_seed, "no value unless writers is set")
        seed = c.writer_phase_seed
        if not (isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < 2**63):
            raise ConfigError("writer_phase_seed", c.writer_phase_seed, "an integer from 0 to 2^63 - 1")
    if c.maintenance_jobs is not None:
        if c.writers is None:
            raise ConfigError("maintenance_jobs", c.maintenance_jobs, "no value unless writers is set")
        if not _is_count(c.maintenance_jobs):
            raise ConfigError("maintenance_jobs", c.maintenance_jobs, "an integer >= 1")
        _require_real(c, "maintenance_interval_s", "a number of seconds > 0 (required with maintenance_jobs)",
                      lambda v: v > 0)
    elif c.maintenance_interval_s is not None:
        raise ConfigError("maintenance_interval_s", c.maintenance_interval_s, "no value unless maintenance_jobs is set")
