"""Read the results store: the only input of the dashboard.

The store is a Parquet dataset written by the sweeps (see the store contract
in docs/dashboard.md): data files at ``<store>/<experiment>/<name>.parquet``,
one logical row per (experiment, config_hash, seed). This module turns it
into plain Python rows, applying the reader's side of the contract:

- names starting with ``.`` or ``_`` are temporary or internal: skipped;
- duplicate keys keep the row with the latest ``finished_at``;
- a file that cannot be read is skipped and reported, so one torn upload does
  not hide a whole sweep; a store that cannot be read at all raises
  ``StoreError`` with the reason.

It also reads the one internal file the dashboard uses: the knee search's
optional JSON summaries, ``<store>/_knee/<experiment>.json``.

It never writes to the store.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import posixpath
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Optional

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

DEFAULT_STORE = "./results"
STORE_ENV_VAR = "SWEEPS_STORE"

KEY_COLUMNS = ("experiment", "config_hash", "seed")

# Every SimConfig field, by its store column name.
CONFIG_COLUMNS = (
    "provider", "catalog", "catalog_latency_ms", "num_tables", "table_distribution", "zipf_alpha",
    "fast_append_ratio", "merge_append_ratio", "inter_arrival_scale_ms", "arrivals",
    "inter_arrival_sigma", "runtime_median_ms", "runtime_sigma", "runtime_min_ms", "duration_s",
    "retry", "real_conflict_probability", "merge_manifests_per_commit",
    "retry_policy", "backoff_base_ms", "backoff_multiplier", "backoff_cap_ms", "backoff_jitter",
    "cas_throttle_per_s", "cas_throttle_burst", "latency_model",
)

# The simulate() metrics the views use (a store holds more; they are not read,
# which also keeps the read and the seed summaries of a large store quick).
SCALAR_METRIC_COLUMNS = (
    "n_txns", "success_rate", "throughput_cps",
    "commit_latency_mean_ms", "commit_latency_p99_ms", "retries_mean",
    "fa_success_rate", "fa_commit_latency_mean_ms", "fa_commit_latency_p99_ms",
    "vo_success_rate", "vo_commit_latency_mean_ms", "vo_commit_latency_p99_ms",
    "cas_throttled",
)
TABLE_METRIC_COLUMNS = (
    "table_n_txns", "table_n_committed", "table_success_rate", "table_conflicts_same_table",
    "table_conflicts_catalog_only",
)
PROVENANCE_COLUMNS = ("package_version", "git_revision", "wall_s", "finished_at")

READ_COLUMNS = KEY_COLUMNS + CONFIG_COLUMNS + SCALAR_METRIC_COLUMNS + TABLE_METRIC_COLUMNS + PROVENANCE_COLUMNS
# Columns newer than the first stores: absent means null (a config field that
# did not exist then) or not measured (``cas_throttled``), so no warning.
OPTIONAL_COLUMNS = ("retry_policy", "backoff_base_ms", "backoff_multiplier", "backoff_cap_ms", "backoff_jitter",
                    "cas_throttle_per_s", "cas_throttle_burst", "cas_throttled", "latency_model")
# Rows with a null in these cannot be keyed or placed on a curve: dropped and counted.
KEYED_COLUMNS = ("config_hash", "seed", "provider", "num_tables", "fast_append_ratio", "inter_arrival_scale_ms")
# Files without these columns are not results rows at all.
REQUIRED_COLUMNS = ("config_hash", "seed", "provider", "num_tables", "fast_append_ratio", "inter_arrival_scale_ms",
                    "success_rate", "throughput_cps")


class StoreError(Exception):
    """The store cannot be read at all. ``uri`` names it, ``reason`` says why."""

    def __init__(self, uri: str, reason: str):
        self.uri = uri
        self.reason = reason
        super().__init__(f"cannot read the results store {uri!r}: {reason}")


@dataclass(frozen=True)
class SkippedFile:
    path: str
    reason: str


@dataclass(frozen=True)
class KneeSummaryFile:
    """One ``_knee/<name>.json`` of the knee search: its parsed content, or why it could not be read.

    ``experiment`` is the knee experiment it describes (``exp4c_knee`` for
    ``exp4c_knee.json`` and for ``exp4c.json``).
    """

    experiment: str
    path: str
    content: object = None
    problem: Optional[str] = None


@dataclass(frozen=True)
class StoreSnapshot:
    """What a read of the store found.

    ``rows`` hold one dict per (experiment, config_hash, seed) with the
    columns of ``READ_COLUMNS`` that the store has (missing ones are None);
    ``finished_at`` is an ISO-8601 string.
    """

    uri: str
    rows: tuple = ()
    files_read: int = 0
    skipped_files: tuple = ()
    duplicates_dropped: int = 0
    incomplete_rows_dropped: int = 0
    missing_columns: tuple = ()
    knee_summaries: tuple = ()  # KneeSummaryFile, one per _knee/*.json
    read_at: str = field(default_factory=lambda: dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))

    @property
    def is_empty(self) -> bool:
        return not self.rows


def default_store_uri() -> str:
    """``$SWEEPS_STORE`` when set, else ``./results``."""
    return os.environ.get(STORE_ENV_VAR) or DEFAULT_STORE


def resolve_store(uri: str) -> tuple[pafs.FileSystem, str, bool]:
    """(filesystem, root path inside it, is_local) for a store URI or local path."""
    if not uri or not uri.strip():
        raise StoreError(uri, "the store URI is empty; pass a directory or a URI such as s3://bucket/prefix")
    if "://" in uri:
        try:
            filesystem, root = pafs.FileSystem.from_uri(uri)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError, ValueError) as error:
            raise StoreError(uri, f"not a usable filesystem URI ({error})") from None
        return filesystem, root.rstrip("/"), isinstance(filesystem, pafs.LocalFileSystem)
    return pafs.LocalFileSystem(), os.path.abspath(uri), True


def _is_internal(name: str) -> bool:
    return name.startswith(".") or name.startswith("_")


def list_data_files(uri: str) -> list[pafs.FileInfo]:
    """The store's data files: ``<experiment>/<name>.parquet``, internal names skipped.

    Raises:
        StoreError: a local store path that does not exist or is not a
            directory, or a filesystem that refuses the listing.
    """
    filesystem, root, is_local = resolve_store(uri)
    try:
        root_info = filesystem.get_file_info(root)
        if root_info.type == pafs.FileType.NotFound:
            if is_local:
                raise StoreError(uri, f"no such directory: {root}")
            return []  # object stores have no empty directories: nothing written yet
        if root_info.type != pafs.FileType.Directory:
            raise StoreError(uri, f"{root} is a file, not a store directory")
        infos = filesystem.get_file_info(pafs.FileSelector(root, recursive=True, allow_not_found=True))
    except StoreError:
        raise
    except (OSError, pa.ArrowException) as error:
        raise StoreError(uri, f"listing failed ({error})") from None
    files = []
    for info in infos:
        if info.type != pafs.FileType.File:
            continue
        parts = posixpath.relpath(info.path.replace(os.sep, "/"), root.replace(os.sep, "/")).split("/")
        if len(parts) != 2 or any(_is_internal(part) for part in parts) or not parts[1].endswith(".parquet"):
            continue
        files.append(info)
    files.sort(key=lambda info: info.path)
    return files


KNEE_SUMMARY_DIR = "_knee"
KNEE_SUFFIX = "_knee"
MAX_KNEE_SUMMARY_BYTES = 20_000_000  # a summary is a few hundred bytes per curve


def list_knee_summaries(uri: str) -> list[pafs.FileInfo]:
    """The knee search's summaries, ``<store>/_knee/<name>.json`` (temporary names skipped)."""
    filesystem, root, _is_local = resolve_store(uri)
    directory = posixpath.join(root.replace(os.sep, "/"), KNEE_SUMMARY_DIR)
    try:
        infos = filesystem.get_file_info(pafs.FileSelector(directory, recursive=False, allow_not_found=True))
    except (OSError, pa.ArrowException):
        return []  # the summaries are optional: the rows alone must suffice
    return sorted((info for info in infos if info.type == pafs.FileType.File
                   and info.base_name.endswith(".json") and not _is_internal(info.base_name)),
                  key=lambda info: info.path)


def _knee_experiment(file_name: str) -> str:
    stem = file_name[:-len(".json")]
    return stem if stem.endswith(KNEE_SUFFIX) else stem + KNEE_SUFFIX


def read_knee_summaries(uri: str) -> tuple:
    """Every knee summary of the store as ``KneeSummaryFile``; unreadable ones carry the reason."""

    filesystem, _root, _is_local = resolve_store(uri)
    summaries = []
    for info in list_knee_summaries(uri):
        experiment = _knee_experiment(info.base_name)
        try:
            if info.size is not None and info.size > MAX_KNEE_SUMMARY_BYTES:
                raise ValueError(f"{info.size} bytes is more than the {MAX_KNEE_SUMMARY_BYTES} read")
            with filesystem.open_input_stream(info.path) as stream:
                content = json.loads(stream.read().decode("utf-8"))
            summaries.append(KneeSummaryFile(experiment, info.path, content=content))
        except (OSError, pa.ArrowException, ValueError) as error:  # JSONDecodeError is a ValueError
            summaries.append(KneeSummaryFile(experiment, info.path, problem=f"{type(error).__name__}: {error}"))
    return tuple(summaries)


def store_signature(uri: str) -> tuple:
    """A cheap fingerprint of the store's data files and knee summaries, to notice that it changed."""
    return tuple((info.path, info.size, info.mtime_ns) for info in list_data_files(uri) + list_knee_summaries(uri))


# Files are read one by one on a few threads (pyarrow decodes without the
# GIL): a store holds one small file per sweep batch, and a dataset scan pays
# a per-file setup cost that dominated the build for ~1,000 files.
READ_THREADS = max(1, min(4, os.cpu_count() or 1))


def _read_file(filesystem, path: str) -> pa.Table:
    """One data file's ``READ_COLUMNS`` that it has.

    The sweeps write page checksums: they are verified, so a damaged page is
    reported as an unreadable file instead of being read as numbers.
    """
    with filesystem.open_input_file(path) as source:
        parquet = pq.ParquetFile(source, page_checksum_verification=True)
        names = set(parquet.schema_arrow.names)
        return parquet.read(columns=[name for name in READ_COLUMNS if name in names], use_threads=False)


def _read_files(filesystem, paths: list[str]) -> list:
    """(path, table or None, error text or None) for each path, in order."""
    def attempt(path):
        try:
            return path, _read_file(filesystem, path), None
        except (OSError, pa.ArrowException) as error:
            return path, None, f"{type(error).__name__}: {error}"

    if len(paths) < 2 or READ_THREADS == 1:
        return [attempt(path) for path in paths]
    with ThreadPoolExecutor(max_workers=READ_THREADS, thread_name_prefix="store-read") as pool:
        return list(pool.map(attempt, paths))


def _combine(results: list) -> tuple[Optional[pa.Table], list[SkippedFile]]:
    """One experiment's file tables as one table; files that failed alone are skipped."""
    skipped = [SkippedFile(path, error) for path, table, error in results if table is None]
    tables = [table for _, table, _ in results if table is not None]
    if not tables:
        return None, skipped
    try:
        # Permissive: a column that is all null in one file (a writer that
        # inferred types) and typed in another still combines.
        return pa.concat_tables(tables, promote_options="permissive"), skipped
    except pa.ArrowException as error:
        return None, skipped + [SkippedFile(path, f"schema clash: {error}")
                                for path, table, _ in results if table is not None]


def _iso_utc(value) -> Optional[str]:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.timezone.utc)
    return value.astimezone(dt.timezone.utc).isoformat(timespec="seconds")


def _table_rows(table: pa.Table, experiment_dir: str) -> list[dict]:
    names = [name for name in READ_COLUMNS if name in table.column_names]
    columns = []
    for name in names:
        values = table.column(name).to_pylist()
        if name == "finished_at":
            values = [_iso_utc(value) for value in values]
        columns.append(values)
    absent = dict.fromkeys(name for name in READ_COLUMNS if name not in table.column_names)
    rows = []
    for values in zip(*columns):
        row = dict(absent)
        row.update(zip(names, values))
        if not row["experiment"]:
            row["experiment"] = experiment_dir
        rows.append(row)
    return rows


def _latest_first_key(row: dict):
    # ISO-8601 UTC strings sort in time order; unknown finish times count as oldest.
    return row["finished_at"] or ""


def drop_duplicates(rows: list[dict]) -> tuple[list[dict], int]:
    """Keep one row per (experiment, config_hash, seed): the latest ``finished_at``."""
    latest: dict = {}
    for row in rows:
        key = tuple(row[name] for name in KEY_COLUMNS)
        kept = latest.get(key)
        if kept is None or _latest_first_key(row) > _latest_first_key(kept):
            latest[key] = row
    return list(latest.values()), len(rows) - len(latest)


def read_store(uri: str) -> StoreSnapshot:
    """Read every data file of the store at ``uri`` (a directory or a pyarrow URI).

    Returns:
        A ``StoreSnapshot``; ``is_empty`` when the store holds no rows yet.

    Raises:
        StoreError: the store cannot be listed, or data files exist but none
            is readable as results rows.
    """
    filesystem, _root, _is_local = resolve_store(uri)
    files = list_data_files(uri)
    by_experiment: dict[str, list[str]] = {}
    for info in files:
        by_experiment.setdefault(posixpath.basename(posixpath.dirname(info.path.replace(os.sep, "/"))),
                                 []).append(info.path)
    rows, skipped, seen_columns = [], [], set()
    results = iter(_read_files(filesystem, [path for _, paths in sorted(by_experiment.items()) for path in paths]))
    for experiment_dir, paths in sorted(by_experiment.items()):
        table, skipped_here = _combine([next(results) for _ in paths])
        skipped.extend(skipped_here)
        absent = [name for name in REQUIRED_COLUMNS if table is not None and name not in table.column_names]
        if absent:
            read_here = {item.path for item in skipped_here}
            skipped.extend(SkippedFile(path, f"not results-store rows: no columns {absent}")
                           for path in paths if path not in read_here)
            table = None
        if table is not None:
            seen_columns.update(table.column_names)
            rows.extend(_table_rows(table, experiment_dir))
    if files and len(skipped) == len(files):
        raise StoreError(uri, f"none of its {len(files)} data files could be read; first: "
                              f"{skipped[0].path}: {skipped[0].reason}")
    complete = [row for row in rows if all(row[name] is not None for name in KEYED_COLUMNS)]
    incomplete = len(rows) - len(complete)
    rows, duplicates = drop_duplicates(complete)
    rows.sort(key=lambda row: (row["experiment"], row["config_hash"] or "", row["seed"] or 0))
    missing = tuple(name for name in READ_COLUMNS if rows and name not in seen_columns and name != "experiment"
                    and name not in OPTIONAL_COLUMNS)
    return StoreSnapshot(uri=uri, rows=tuple(rows), files_read=len(files) - len(skipped),
                         skipped_files=tuple(skipped), duplicates_dropped=duplicates,
                         incomplete_rows_dropped=incomplete, missing_columns=missing,
                         knee_summaries=read_knee_summaries(uri))
