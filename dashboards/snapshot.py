"""What the dashboard reads from the results store, as plain rows.

The store has one reader, ``ray_jobs.store.ResultsStore``: it verifies every
file against its content digest and the schema, drops duplicate keys and
reports unreadable files. This module only asks it for the columns the views
use and turns them into plain Python rows for the pure view code, with the
knee search's JSON summaries beside them. It never writes to the store.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Mapping, Optional

from ray_jobs.schema import CONFIG_COLUMNS, KEY_COLUMNS, PROVENANCE_COLUMNS
from ray_jobs.store import KneeSummaryFile, ResultsStore, StoreError, UnreadableFile
from simcore.redaction import redact

__all__ = ["CONFIG_COLUMNS", "READ_COLUMNS", "SCALAR_METRIC_COLUMNS", "TABLE_METRIC_COLUMNS",
           "KneeSummaryFile", "StoreError", "StoreSnapshot", "UnreadableFile", "read_store", "store_signature"]

# The simulate() metrics the views use (a store holds more; reading only these
# keeps the seed summaries of a large store quick).
SCALAR_METRIC_COLUMNS = (
    "n_txns", "success_rate", "throughput_cps",
    "commit_latency_mean_ms", "commit_latency_p99_ms", "retries_mean",
    "fa_success_rate", "fa_commit_latency_mean_ms", "fa_commit_latency_p99_ms",
    "vo_success_rate", "vo_commit_latency_mean_ms", "vo_commit_latency_p99_ms",
    "cas_throttled",
    # Wasted work per commit, and writer workloads (docs/reference/clients.md).
    "requests_catalog_read_per_commit", "requests_cas_per_commit", "requests_manifest_list_read_per_commit",
    "requests_manifest_list_write_per_commit", "requests_manifest_file_write_per_commit",
    "wasted_write_bytes_per_commit", "writer_success_rate", "writer_commit_latency_p99_ms", "writer_lag_p99_s",
    "maint_success_rate",
)
TABLE_METRIC_COLUMNS = (
    "table_n_txns", "table_n_committed", "table_success_rate", "table_conflicts_same_table",
    "table_conflicts_catalog_only",
)
READ_COLUMNS = KEY_COLUMNS + CONFIG_COLUMNS + SCALAR_METRIC_COLUMNS + TABLE_METRIC_COLUMNS + PROVENANCE_COLUMNS


@dataclass(frozen=True)
class StoreSnapshot:
    """What a read of the store found.

    ``rows`` hold one dict per (experiment, config_hash, seed) with the
    columns of ``READ_COLUMNS``; ``finished_at`` is an ISO-8601 string.
    ``skipped_files`` are the files the store's reader refused (each with
    why); ``missing_columns`` the later columns no file had.
    """

    uri: str  # as shown: credentials masked (simcore.redaction)
    rows: tuple = ()
    files_read: int = 0
    skipped_files: tuple = ()  # UnreadableFile
    duplicates_dropped: int = 0
    missing_columns: tuple = ()
    knee_summaries: tuple = ()  # KneeSummaryFile, one per _knee/*.json
    plans: Mapping = field(default_factory=dict)  # experiment -> its latest sweep plan (what a study compares)
    read_at: str = field(default_factory=lambda: dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))

    @property
    def is_empty(self) -> bool:
        return not self.rows


def _iso_utc(value) -> Optional[str]:
    if value is None:
        return None
    return value.astimezone(dt.timezone.utc).isoformat(timespec="seconds")


def read_store(uri: str) -> StoreSnapshot:
    """Read the store at ``uri`` (a directory or a pyarrow URI) for the dashboard.

    Raises:
        StoreError: the store cannot be opened or listed, or it has data
            files and none of them can be read.
    """
    store = ResultsStore(uri)
    store.require_readable()
    experiments = store.experiments()  # listed once, for the rows and the plans alike
    scan = store.scan(experiments, columns=READ_COLUMNS)
    left = [bad for bad in scan.unreadable if bad.quarantined_to is None]
    if left and not scan.files_read:
        first = left[0]
        raise StoreError(f"cannot read the results store {redact(uri, uri)!r}: none of its {len(left)} data files "
                         f"could be read; first: {first.path}: {first.reason}")
    table = scan.table.sort_by([(name, "ascending") for name in KEY_COLUMNS])
    rows = table.select(list(READ_COLUMNS)).to_pylist()
    for row in rows:
        row["finished_at"] = _iso_utc(row["finished_at"])
    knee_summaries, plans = store.knee_summaries(), _plans(store, experiments)
    # The URI as every page and report shows it: a page is served to anyone who can reach it.
    return StoreSnapshot(uri=redact(uri, uri), rows=tuple(rows), files_read=scan.files_read,
                         skipped_files=scan.unreadable + store.bad_documents,
                         duplicates_dropped=scan.duplicates_dropped, missing_columns=scan.missing_columns,
                         knee_summaries=knee_summaries, plans=plans)


def _plans(store: ResultsStore, experiments: list) -> dict:
    """experiment -> its latest sweep plan; a plan that cannot be read is left out (the rows still show)."""
    plans = {}
    for experiment in experiments:
        try:
            plan = store.read_plan(experiment)
        except StoreError:
            continue
        if isinstance(plan, dict):
            plans[experiment] = plan
    return plans


def store_signature(uri: str) -> tuple:
    """A cheap fingerprint of the store's files, to notice that it changed."""
    return ResultsStore(uri).signature()
