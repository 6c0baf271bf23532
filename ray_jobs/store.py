"""The results store: a Parquet dataset of one row per (experiment, config_hash, seed).

Layout (the contract the dashboards read)::

    <store>/<experiment>/<name>.parquet   complete rows, full schema
    <store>/<experiment>/_sweep.json      the latest sweep's plan (for status)
    names starting with "." or "_"        temporary or internal; readers skip them

A store is a local directory (the default, ``./results``) or any URI that
``pyarrow.fs`` understands, such as ``s3://bucket/prefix`` (credentials,
region and endpoint come from the usual AWS environment variables, e.g.
``AWS_ENDPOINT_URL`` for an S3-compatible server).

Why the write path looks the way it does:

- A file is serialized completely in memory first, so a failure while
  encoding never leaves anything behind.
- On a local disk it is then written under a temporary ``.tmp-*`` name,
  fsynced and renamed over its final name: a reader sees the whole file or
  none of it. Object stores (S3, GCS) have no rename, but a single PUT is
  already all-or-nothing, so there the file is written under its final name.
- A file is named ``part-<keys>-<content>.parquet``: ``<keys>`` is a digest
  of the (experiment, config_hash, seed) keys it holds and ``<content>`` the
  SHA-256 of its bytes. Writing rows whose keys are already in a file
  replaces that file (the older one is deleted after the new one is in
  place), so rewriting is idempotent. Every read checks the bytes against
  the name: a truncated, empty or damaged file is reported as unreadable and
  its rows count as missing, never silently read. (Parquet's own page
  checksums, also written and verified, miss damage to page headers and to
  the footer, which is most of a small file.)

Readers still drop duplicate keys (keeping the latest ``finished_at``): two
drivers sweeping the same store at once can each write a row for a key.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from dataclasses import dataclass
from typing import Iterable, Optional

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from ray_jobs.schema import KEY_COLUMNS, RESULTS_SCHEMA

STORE_ENV = "SWEEPS_STORE"
DEFAULT_STORE = "./results"
PLAN_FILE = "_sweep.json"

# Columns without which a row cannot be placed or deduplicated.
_REQUIRED_COLUMNS = KEY_COLUMNS + ("finished_at",)

# Filesystems whose writes are single all-or-nothing uploads (no rename needed).
_ATOMIC_PUT_FILESYSTEMS = {"s3", "gcs"}


def default_store_uri() -> str:
    """``$SWEEPS_STORE`` when set, else ``./results``."""
    return os.environ.get(STORE_ENV) or DEFAULT_STORE


def is_internal_name(name: str) -> bool:
    """Names readers must skip: temporary files and internal metadata."""
    return name.startswith(".") or name.startswith("_")


class StoreError(RuntimeError):
    """The store cannot be opened or written."""


@dataclass(frozen=True)
class UnreadableFile:
    """A data file that failed verification; its rows are treated as missing."""

    path: str
    reason: str


@dataclass(frozen=True)
class StoreScan:
    """What a store holds.

    Attributes:
        table: every row, one per (experiment, config_hash, seed), the latest
            ``finished_at`` kept where a key was written more than once.
        files_read: data files read and verified.
        rows_read: rows in those files, before dropping duplicates.
        duplicates_dropped: rows dropped because a later row had the same key.
        unreadable: data files that failed verification (never read).
    """

    table: pa.Table
    files_read: int
    rows_read: int
    duplicates_dropped: int
    unreadable: tuple[UnreadableFile, ...]

    def keys(self) -> set[tuple[str, str, int]]:
        """The stored (experiment, config_hash, seed) keys."""
        columns = [self.table.column(name).to_pylist() for name in KEY_COLUMNS]
        return set(zip(*columns))


class ResultsStore:
    """Reads and writes one results store.

    Args:
        uri: a local directory (relative or absolute) or a ``pyarrow.fs`` URI
            such as ``s3://bucket/prefix``.

    Example:
        >>> store = ResultsStore("./results")          # doctest: +SKIP
        >>> store.write_rows(table)                    # doctest: +SKIP
        >>> store.scan(["exp4c"]).table.num_rows       # doctest: +SKIP
    """

    def __init__(self, uri: str):
        if not isinstance(uri, str) or not uri.strip():
            raise StoreError(f"store: {uri!r} is not allowed; expected a directory or a URI such as s3://bucket/prefix")
        self.uri = uri
        try:
            if "://" in uri:
                self._fs, self._root = pafs.FileSystem.from_uri(uri)
            else:
                self._fs, self._root = pafs.LocalFileSystem(), os.path.abspath(uri)
        except Exception as error:  # pyarrow raises several types for bad URIs
            raise StoreError(f"store: {uri!r} cannot be opened: {error}") from error
        self._root = self._root.rstrip("/")
        self._is_local = self._fs.type_name == "local"

    def location(self) -> str:
        """Where the data is, for people: an absolute path for a local store, else the URI."""
        return self._root if self._is_local else self.uri

    def exists(self) -> bool:
        """Whether the store's folder (or prefix) exists; a store that was never written has none."""
        try:
            info = self._fs.get_file_info(self._root)
        except OSError as error:
            raise StoreError(f"store: {self.uri!r} cannot be opened: {error}") from error
        if info.type == pafs.FileType.Directory:
            return True
        if info.type == pafs.FileType.File:
            raise StoreError(f"store: {self.uri!r} is not allowed; expected a directory (this path is a file)")
        if not self._is_local:  # an S3 prefix may hold keys only
            return bool(self._list(self._root))
        return False

    def check_usable(self) -> None:
        """Raise StoreError unless the store can be written: a sweep checks this before
        starting Ray, so a file in the way or a read-only mount fails at once."""
        try:
            info = self._fs.get_file_info(self._root)
        except OSError as error:
            raise StoreError(f"store: {self.uri!r} cannot be opened: {error}") from error
        if info.type not in (pafs.FileType.Directory, pafs.FileType.NotFound):
            raise StoreError(f"store: {self.uri!r} is not allowed; expected a directory (this path is a file)")
        probe = f"{self._root}/.probe-{uuid.uuid4().hex}"
        try:
            self._fs.create_dir(self._root, recursive=True)
            with self._fs.open_output_stream(probe) as out:
                out.write(b"probe")
            self._fs.delete_file(probe)
        except OSError as error:
            raise StoreError(f"store: {self.uri!r} is not writable: {error}") from error

    # -- writing ------------------------------------------------------------

    def write_rows(self, table: pa.Table) -> list[str]:
        """Store complete rows (``RESULTS_SCHEMA``); one file per experiment.

        Returns:
            The paths written (within the store's filesystem).
        """
        if table.num_rows == 0:
            return []
        table = table.select(RESULTS_SCHEMA.names).cast(RESULTS_SCHEMA)
        written = []
        for experiment in sorted(set(table.column("experiment").to_pylist())):
            rows = table.filter(pc.equal(table.column("experiment"), experiment))
            rows = rows.sort_by([("config_hash", "ascending"), ("seed", "ascending")])
            sink = pa.BufferOutputStream()
            pq.write_table(rows, sink, write_page_checksum=True)
            data = sink.getvalue()
            keys_digest = _keys_digest(rows)
            directory = self._experiment_dir(experiment)
            path = f"{directory}/part-{keys_digest}-{_content_digest(data)}.parquet"
            self._put(path, data)
            # Same keys written before (a rerun of the same rows): the new file replaces them.
            for older in self.data_files(experiment):
                if older != path and _name_parts(older)[0] == f"part-{keys_digest}":
                    self._fs.delete_file(older)
            written.append(path)
        return written

    def write_plan(self, experiment: str, plan: dict) -> None:
        """Record the sweep about to run (its configs and seeds), for ``status``."""
        self._put(f"{self._experiment_dir(experiment)}/{PLAN_FILE}",
                  pa.py_buffer(json.dumps(plan, indent=1, sort_keys=True).encode()))

    def _put(self, path: str, data: pa.Buffer) -> None:
        directory = path.rsplit("/", 1)[0]
        try:
            self._fs.create_dir(directory, recursive=True)
            if self._fs.type_name in _ATOMIC_PUT_FILESYSTEMS:
                with self._fs.open_output_stream(path) as out:
                    out.write(data)
                return
            temporary = f"{directory}/.tmp-{uuid.uuid4().hex}-{path.rsplit('/', 1)[1]}"
            try:
                with self._fs.open_output_stream(temporary) as out:
                    out.write(data)
                if self._is_local:  # durable before it becomes visible
                    descriptor = os.open(temporary, os.O_RDONLY)
                    try:
                        os.fsync(descriptor)
                    finally:
                        os.close(descriptor)
                self._fs.move(temporary, path)
            except BaseException:
                if self._exists(temporary):
                    self._fs.delete_file(temporary)
                raise
        except OSError as error:
            raise StoreError(f"cannot write {path} in store {self.uri}: {error}") from error

    # -- reading ------------------------------------------------------------

    def experiments(self) -> list[str]:
        """Experiments that have a folder in the store."""
        infos = self._list(self._root)
        return sorted(info.base_name for info in infos
                      if info.type == pafs.FileType.Directory and not is_internal_name(info.base_name))

    def data_files(self, experiment: str) -> list[str]:
        """Paths of the experiment's data files (internal and temporary names skipped)."""
        infos = self._list(self._experiment_dir(experiment))
        return sorted(info.path for info in infos
                      if info.type == pafs.FileType.File and info.base_name.endswith(".parquet")
                      and not is_internal_name(info.base_name))

    def read_plan(self, experiment: str) -> Optional[dict]:
        """The latest sweep plan of ``experiment``, or None."""
        path = f"{self._experiment_dir(experiment)}/{PLAN_FILE}"
        try:
            if not self._exists(path):
                return None
            with self._fs.open_input_stream(path) as stream:
                return json.loads(stream.read().decode())
        except (OSError, ValueError) as error:
            raise StoreError(f"cannot read {path} in store {self.uri}: {error}") from error

    def scan(self, experiments: Optional[Iterable[str]] = None) -> StoreScan:
        """Read and verify every data file of ``experiments`` (default: all)."""
        names = self.experiments() if experiments is None else sorted(set(experiments))
        tables, unreadable = [], []
        for experiment in names:
            for path in self.data_files(experiment):
                table, reason = self._read_verified(path)
                if reason is None:
                    tables.append(table)
                else:
                    unreadable.append(UnreadableFile(path, reason))
        rows = pa.concat_tables(tables) if tables else RESULTS_SCHEMA.empty_table()
        latest = _latest_per_key(rows)
        return StoreScan(table=latest, files_read=len(tables), rows_read=rows.num_rows,
                         duplicates_dropped=rows.num_rows - latest.num_rows, unreadable=tuple(unreadable))

    def _read_verified(self, path: str) -> tuple[Optional[pa.Table], Optional[str]]:
        try:
            with self._fs.open_input_file(path) as source:
                data = source.read_buffer()
        except OSError as error:
            return None, f"cannot read: {error}"
        expected_digest = _name_parts(path)[1]
        if expected_digest is not None and _content_digest(data) != expected_digest:
            return None, (f"content does not match the digest in its name ({len(data)} bytes): "
                          f"truncated or damaged")
        try:
            table = pq.ParquetFile(pa.BufferReader(data), page_checksum_verification=True).read()
        except Exception as error:  # any failure to decode is a damaged file
            return None, f"{type(error).__name__}: {error}"
        missing = [name for name in _REQUIRED_COLUMNS if name not in table.column_names]
        if missing:
            return None, f"missing required columns {missing}"
        columns = []
        for field in RESULTS_SCHEMA:
            if field.name not in table.column_names:
                # Written before this column existed: it reads as null.
                columns.append(pa.nulls(table.num_rows, field.type))
                continue
            try:
                columns.append(table.column(field.name).cast(field.type))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
                return None, f"column {field.name} has type {table.schema.field(field.name).type}, " \
                             f"expected {field.type}: {error}"
        return pa.Table.from_arrays(columns, schema=RESULTS_SCHEMA), None

    # -- helpers ------------------------------------------------------------

    def _experiment_dir(self, experiment: str) -> str:
        if not experiment or "/" in experiment or is_internal_name(experiment):
            raise StoreError(f"experiment: {experiment!r} is not allowed; expected a name without '/' "
                             f"that does not start with '.' or '_'")
        return f"{self._root}/{experiment}"

    def _list(self, directory: str) -> list:
        try:
            return self._fs.get_file_info(pafs.FileSelector(directory, allow_not_found=True))
        except OSError as error:
            raise StoreError(f"cannot list {directory} in store {self.uri}: {error}") from error

    def _exists(self, path: str) -> bool:
        return self._fs.get_file_info(path).type != pafs.FileType.NotFound


def _keys_digest(rows: pa.Table) -> str:
    keys = zip(*(rows.column(name).to_pylist() for name in KEY_COLUMNS))
    text = "\n".join(f"{experiment}/{config_hash}/{seed}" for experiment, config_hash, seed in keys)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


_CONTENT_DIGEST_HEX = 32
_NAME_WITH_DIGEST = re.compile(r"^(?P<stem>.+)-(?P<digest>[0-9a-f]{%d})\.parquet$" % _CONTENT_DIGEST_HEX)


def _content_digest(data: pa.Buffer) -> str:
    return hashlib.sha256(memoryview(data)).hexdigest()[:_CONTENT_DIGEST_HEX]


def _name_parts(path: str) -> tuple[str, Optional[str]]:
    """(stem, content digest) of a data file name; digest None for files named otherwise."""
    name = path.rsplit("/", 1)[-1]
    match = _NAME_WITH_DIGEST.match(name)
    if match is None:
        return name[: -len(".parquet")], None
    return match["stem"], match["digest"]


def _latest_per_key(rows: pa.Table) -> pa.Table:
    """One row per key: the one with the latest finished_at."""
    if rows.num_rows == 0:
        return rows
    order = pc.sort_indices(rows, sort_keys=[(name, "ascending") for name in KEY_COLUMNS]
                            + [("finished_at", "descending")])
    ordered = rows.take(order)
    keep, previous = [], None
    for key in zip(*(ordered.column(name).to_pylist() for name in KEY_COLUMNS)):
        keep.append(key != previous)
        previous = key
    return ordered.filter(pa.array(keep))
