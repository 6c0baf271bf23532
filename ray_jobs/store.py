"""The results store: a Parquet dataset of one row per (experiment, config_hash, seed).

This is the one module that reads and writes it: sweeps, the knee search,
``status``, the dashboard and the test fixtures all go through
``ResultsStore``. Layout::

    <store>/<experiment>/part-<keys>-<content>.parquet   complete rows, full schema
    <store>/<experiment>/_sweep.json                     the latest sweep's plan (for status)
    <store>/_knee/<experiment>.json                      the knee search's summary of <experiment>
    <store>/_quarantine/<experiment>/<when>-<why>-<name>.quarantined   files that failed verification
    <store>/_lease/<experiment>.json                     the running sweep's lease (ray_jobs.lease)
    names starting with "." or "_"                       temporary or internal; readers skip them

A store is a local directory (the default, ``./results``) or any URI that
``pyarrow.fs`` understands, such as ``s3://bucket/prefix`` (credentials,
region and endpoint come from the usual AWS environment variables, e.g.
``AWS_ENDPOINT_URL`` for an S3-compatible server, or from the URI itself:
``?endpoint_override=host:port&scheme=http&region=...``, ``KEY:SECRET@``).
Credentials in the URI are never shown: every message and ``location()``
give it through ``simcore.redaction.redact``.

A remote store that does not answer is one line, not a silent wait: the
first request a command makes of it (``require_readable``: status and the
dashboard; ``check_usable``: a sweep) waits at most ``STORE_ANSWER_S``, and a
GCS store opened from a URI without its own ``retry_limit_seconds`` retries a
failing request for ``GCS_RETRY_LIMIT_S`` instead of the client's 15 minutes.
(S3's client gives up within seconds already: the AWS SDK's connect and
request timeouts, 1 s and 3 s, over 3 attempts.) A prefix with nothing under
it is an empty store, but one in a bucket that does not exist is an error.

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
  the name: a truncated, empty or damaged file, or a ``.parquet`` file this
  module did not write (no digest in its name), is reported as unreadable
  and its rows count as missing, never silently read. (Parquet's own page
  checksums, also written and verified, miss damage to page headers and to
  the footer, which is most of a small file.)
- A verified file must carry every column of ``RESULTS_SCHEMA`` except
  those newer than the first stores (``schema.LATER_COLUMNS``: optional
  config fields, whose absence means their default, and late metrics),
  with the schema's types; one foreign or damaged file never hides the
  rows of the others.

The store heals itself. A data file that fails its digest, its schema or
its key checks (rows of another experiment than its folder, keys that do
not match the keys digest in its name, a ``finished_at`` in the future) is moved, by whichever reader finds it first, to
``_quarantine/<experiment>/<UTC time>-<why>-<name>.quarantined``: kept for
inspection, seen by no reader and by no ``**/*.parquet`` glob, reported
once (by the reader that moved it), and its runs count as missing, so the
next sweep recomputes them. A file named outside the writer's scheme
(``part-<keys>-<content>.parquet``) is foreign and quarantined too, whatever
it holds, so it can never shadow good rows; a column whose type is not the
schema's (a seed written as text) fails, even where a cast would succeed.
Every file is verified before any is removed: a verified file superseded by
a later-finished verified file of the same keys (a writer killed between
writing the new file and deleting the old) is deleted, where "later" is read
from the rows' ``finished_at``, never from modification times, and only when
every one of its rows is older than the kept file's or identical to it; a file that fails verification
never counts as the newer copy, so a damaged or empty file under a good
file's name stem is quarantined and the good file kept. Likewise a
verified file every row of which a verified file of other keys holds,
identical (the small files a merge replaced, ``merge_files``, when its
writer died before deleting them), is deleted. A file that cannot be read for a passing reason (a network error)
is reported and left alone; so is everything when the reader cannot write
(a read-only mount). Temporary files are named ``.tmp-*.partial``, so no
``*.parquet`` glob sees one either; those older than a day are removed.

Readers still drop duplicate keys (keeping the latest ``finished_at``), as
the DuckDB and pandas recipes in docs/guide/sweeps.md do; with one writer at a
time (``ray_jobs.lease``) there are none left after healing.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import uuid
from datetime import datetime, timezone
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from ray_jobs.knee_curves import KNEE_SUMMARY_FOLDER, is_knee_experiment, knee_experiment_name
from ray_jobs.schema import KEY_COLUMNS, LATER_COLUMNS, LEGACY_VALUES, RESULTS_SCHEMA
from ray_jobs.store_files import (MAX_DOCUMENT_DEPTH, content_digest, copies, depth, key_problem,
                                  keys_digest, latest_per_key, name_parts, plan_problem, same_kind, slug,
                                  superseded)
from simcore.redaction import redact

PLAN_FILE = "_sweep.json"
QUARANTINE_FOLDER = "_quarantine"
QUARANTINE_SUFFIX = ".quarantined"
TEMPORARY_SUFFIX = ".partial"
STALE_TEMPORARY_S = 24 * 3600.0  # a temporary file this old belongs to a writer that died
MAX_DOCUMENT_BYTES = 20_000_000  # plans and summaries are a few hundred bytes per config or curve
MAX_DATA_FILE_BYTES = 512 * 2**20  # no writer of ours writes a larger data file (write_rows splits)

# Filesystems whose writes are single all-or-nothing uploads (no rename needed).
_ATOMIC_PUT_FILESYSTEMS = {"s3", "gcs"}
# How long a remote store has to answer a command's first request (a network with no route to it answers never).
STORE_ANSWER_S = 30.0
# How long GCS's client retries a failing request, where the store's URI does not say (its default: 15 minutes).
GCS_RETRY_LIMIT_S = 20  # under STORE_ANSWER_S: where the client gets an error (a name that does not resolve), it shows
_GCS_SCHEMES = ("gs://", "gcs://")


def is_internal_name(name: str) -> bool:
    """Names readers must skip: temporary files and internal metadata."""
    return name.startswith(".") or name.startswith("_")


class StoreError(RuntimeError):
    """The store cannot be opened, listed, read or written; the message names the store and says why.

    The message is redacted (``simcore.redaction``): a URI in it never shows its credentials.
    """

    def __init__(self, message: str = ""):
        super().__init__(redact(message))


def shown(path: str) -> str:
    """``path`` (or any name read from a store) for a one-line message or a table cell: as it is, or quoted with escapes if it holds a newline or another control."""
    return path if path.isprintable() else repr(path)


@dataclass(frozen=True)
class UnreadableFile:
    """A data file that failed verification; its rows are treated as missing.

    ``quarantined_to``: where it was moved (None: left in place, because the
    failure may pass, e.g. a network error, or the store is read-only).
    """

    path: str
    reason: str
    quarantined_to: Optional[str] = None

    def describe(self) -> str:
        if self.quarantined_to:
            return (f"QUARANTINED {self.path}: {self.reason}; moved to {self.quarantined_to} (its runs count as "
                    f"missing; the next sweep recomputes them)")
        return f"UNREADABLE (left in place; its runs count as missing) {self.path}: {self.reason}"


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
    missing_columns: tuple[str, ...] = ()  # later columns no file read had (they read as null)

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
        >>> import datetime, tempfile
        >>> from simcore import SimConfig
        >>> from ray_jobs.schema import make_row, rows_to_table, unmeasured_metrics
        >>> now = datetime.datetime.now(datetime.timezone.utc)
        >>> rows = [make_row("exp4c", SimConfig(), {**unmeasured_metrics(), "seed": seed}, package_version="0.1.0",
        ...                  git_revision=None, wall_s=0.0, finished_at=now) for seed in (1, 2)]
        >>> store = ResultsStore(tempfile.mkdtemp())
        >>> _ = store.write_rows(rows_to_table(rows))
        >>> scan = store.scan(["exp4c"])
        >>> scan.table.num_rows, scan.files_read, scan.unreadable
        (2, 1, ())
    """

    def __init__(self, uri: str):
        if not isinstance(uri, str) or not uri.strip():
            raise StoreError(f"store: {uri!r} is not allowed; expected a directory or a URI such as s3://bucket/prefix")
        try:
            uri.encode("utf-8")
        except UnicodeEncodeError:  # bytes that were not UTF-8 in argv: pyarrow takes UTF-8 paths only
            raise StoreError(f"store: {redact(uri, uri)!r} is not allowed; expected a path in UTF-8 (this one "
                             f"holds bytes that are not)") from None
        self.uri = uri
        self._shown_uri = redact(uri, uri)  # the URI in every message: its credentials masked
        try:
            if "://" in uri:
                self._fs, self._root = pafs.FileSystem.from_uri(_with_retry_limit(uri))
            else:
                self._fs, self._root = pafs.LocalFileSystem(), os.path.abspath(uri)
        except Exception as error:  # pyarrow raises several types for bad URIs, and quotes the URI in them
            raise StoreError(f"store: {self._shown_uri!r} cannot be opened: {self._quoted(error)}") from None
        self._root = self._root.rstrip("/")
        self._is_local = self._fs.type_name == "local"
        self._bad_documents: list[UnreadableFile] = []

    def location(self) -> str:
        """Where the data is, for people: an absolute path for a local store, else the URI (credentials masked)."""
        return self._root if self._is_local else self._shown_uri

    def _quoted(self, error: BaseException) -> str:
        """A library's error for a message: it may quote the URI or a key from it. GCS's client appends its
        retry policy's metadata, which repeats the message: that is left out."""
        return redact(str(error).split(" error_info={")[0], self.uri)

    def _first_answer(self, call, failing: str):
        """``call()``, the first request a command makes of the store, waited for at most ``STORE_ANSWER_S`` where
        the store is remote; past it a StoreError (``failing``: how the message begins) says it did not answer.

        The request runs in a daemon thread: one that never returns (no route to the store) is left behind,
        and the command still ends.
        """
        if self._is_local:
            return call()
        outcome: dict = {}

        def run() -> None:
            try:
                outcome["value"] = call()
            except BaseException as error:  # noqa: B036 - handed to the caller's thread as it is
                outcome["error"] = error

        thread = threading.Thread(target=run, name="store-first-answer", daemon=True)
        thread.start()
        thread.join(STORE_ANSWER_S)
        if thread.is_alive():
            raise StoreError(f"{failing}: it did not answer within {STORE_ANSWER_S:g} s (no route to it, or a "
                             f"server that does not answer)")
        if "error" in outcome:
            raise outcome["error"]
        return outcome.get("value")

    def _bucket_missing(self) -> Optional[str]:
        """The bucket of an object store whose root prefix holds nothing, where that bucket does not exist (an
        empty prefix is an empty store; a missing bucket is a typo); None otherwise, or where it cannot be told
        (a key may read objects without the right to look at the bucket)."""
        bucket = self._root.split("/", 1)[0]
        if self._is_local or not bucket:
            return None
        try:
            missing = self._fs.get_file_info(bucket).type == pafs.FileType.NotFound
        except OSError:
            return None
        return bucket if missing else None

    def check_usable(self) -> None:
        """Raise StoreError unless the store can be written: a sweep checks this before
        starting Ray, so a file in the way or a read-only mount fails at once."""
        self._first_answer(self._check_usable, f"store: {self._shown_uri!r} cannot be opened")

    def _check_usable(self) -> None:
        try:
            info = self._fs.get_file_info(self._root)
        except OSError as error:
            raise StoreError(f"store: {self._shown_uri!r} cannot be opened: {self._quoted(error)}") from error
        if info.type not in (pafs.FileType.Directory, pafs.FileType.NotFound):
            raise StoreError(f"store: {self._shown_uri!r} is not allowed; expected a directory (this path is a file)")
        probe = f"{self._root}/.probe-{uuid.uuid4().hex}"
        try:
            self._fs.create_dir(self._root, recursive=True)
            with self._fs.open_output_stream(probe) as out:
                out.write(b"probe")
            self._fs.delete_file(probe)
        except OSError as error:
            raise StoreError(f"store: {self._shown_uri!r} is not writable: {self._quoted(error)}") from error

    # -- writing ------------------------------------------------------------

    def write_rows(self, table: pa.Table) -> list[str]:
        """Store complete rows (``RESULTS_SCHEMA``); one file per experiment (more where one would be
        larger than ``MAX_DATA_FILE_BYTES``, the most a reader verifies).

        Returns:
            The paths written (within the store's filesystem).
        """
        if table.num_rows == 0:
            return []
        table = table.select(RESULTS_SCHEMA.names).cast(RESULTS_SCHEMA)
        written = []
        for experiment in sorted(set(table.column("experiment").to_pylist())):
            rows = table.filter(pc.equal(table.column("experiment"), experiment))
            # One row per key in a file (the latest), so even a reader that does not deduplicate counts it once.
            rows = latest_per_key(rows).sort_by([("config_hash", "ascending"), ("seed", "ascending")])
            written += self._write_file(experiment, rows)
        return written

    def _write_file(self, experiment: str, rows: pa.Table) -> list[str]:
        sink = pa.BufferOutputStream()
        pq.write_table(rows, sink, write_page_checksum=True)
        data = sink.getvalue()
        if data.size > MAX_DATA_FILE_BYTES and rows.num_rows > 1:
            half = rows.num_rows // 2
            return self._write_file(experiment, rows.slice(0, half)) + self._write_file(experiment, rows.slice(half))
        keys = keys_digest(rows)
        directory = self._experiment_dir(experiment)
        path = f"{directory}/part-{keys}-{content_digest(data)}.parquet"
        self._put(path, data)
        # Same keys written before (a rerun of the same rows): the new file replaces them.
        for older in self.data_files(experiment):
            if older != path and name_parts(older)[0] == f"part-{keys}":
                try:
                    self._fs.delete_file(older)
                except FileNotFoundError:  # a healing reader deleted it first
                    pass
        return [path]

    def merge_files(self, paths: Sequence[str]) -> list[str]:
        """Replace data files by one per experiment holding all their rows; safe to kill at any point.

        A sweep flushes small files every few seconds (``ray_jobs.fanout.RowCollector``) and merges
        them here. The merged file is written whole before any of the files it replaces is deleted;
        a writer killed in between leaves both, every row of the old files an identical copy of a
        row of the merged one, and the next reader that verifies the merged file deletes the copies
        (``scan``). A file that fails verification is neither merged nor deleted: readers
        quarantine it as usual.

        Returns:
            The paths of the files now holding the verified rows (one per experiment; the input
            path itself when only one file verified).
        """
        verified = [(path, table) for path, (table, reason, _) in zip(paths, map(self._read_verified, paths))
                    if reason is None]
        if len(verified) < 2:
            return [path for path, _ in verified]
        written = self.write_rows(pa.concat_tables([table for _, table in verified]))
        for path, _ in verified:  # only now: each row is in a complete merged file
            if path not in written:
                try:
                    self._fs.delete_file(path)
                except FileNotFoundError:  # a healing reader deleted it first
                    pass
        return written

    def write_plan(self, experiment: str, plan: dict) -> None:
        """Record the sweep about to run (its configs and seeds), for ``status``."""
        self._put(f"{self._experiment_dir(experiment)}/{PLAN_FILE}",
                  pa.py_buffer(json.dumps(plan, indent=1, sort_keys=True).encode()))

    def write_knee_summary(self, experiment: str, summary: dict) -> str:
        """Write the knee search's summary of ``experiment`` whole and atomically; returns its path."""
        path = self._knee_summary_path(experiment)
        self._put(path, pa.py_buffer((json.dumps(summary, indent=1, allow_nan=False) + "\n").encode()))
        return path

    def _put(self, path: str, data: pa.Buffer) -> None:
        directory = path.rsplit("/", 1)[0]
        try:
            self._fs.create_dir(directory, recursive=True)
            if self._fs.type_name in _ATOMIC_PUT_FILESYSTEMS:
                with self._fs.open_output_stream(path) as out:
                    out.write(data)
                return
            # Hidden, and not *.parquet: neither the store's readers nor a DuckDB glob see it.
            temporary = f"{directory}/.tmp-{uuid.uuid4().hex}-{path.rsplit('/', 1)[1]}{TEMPORARY_SUFFIX}"
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
            raise StoreError(f"cannot write {path} in store {self._shown_uri}: {self._quoted(error)}") from error

    # -- reading ------------------------------------------------------------

    def experiments(self) -> list[str]:
        """Experiments that have a folder in the store."""
        infos = self._list(self._root)
        return sorted(info.base_name for info in infos
                      if info.type == pafs.FileType.Directory and not is_internal_name(info.base_name))

    def data_files(self, experiment: str) -> list[str]:
        """Paths of the experiment's data files (internal and temporary names skipped)."""
        return sorted(self._data_file_sizes(experiment))

    def _data_file_sizes(self, experiment: str) -> dict[str, Optional[int]]:
        """path -> size as the listing gave it, of each data file of ``experiment``."""
        return {info.path: info.size for info in self._list(self._experiment_dir(experiment))
                if info.type == pafs.FileType.File and info.base_name.endswith(".parquet")
                and not is_internal_name(info.base_name)}

    def read_plan(self, experiment: str) -> Optional[dict]:
        """The latest sweep plan of ``experiment``, or None.

        A plan that is not one (bad JSON, too deep, not a mapping with a list of seeds and of
        config hashes) is quarantined like a bad data file and reads as none: the rows alone
        still say what is stored. It is reported in ``bad_documents``.
        """
        path = f"{self._experiment_dir(experiment)}/{PLAN_FILE}"
        try:
            plan = self._read_json(path)
        except _BadDocument as bad:
            self._set_aside(path, str(bad))
            return None
        problem = plan_problem(plan) if plan is not None else None
        if problem is not None:
            self._set_aside(path, problem)
            return None
        return plan

    @property
    def bad_documents(self) -> tuple[UnreadableFile, ...]:
        """The plans and summaries this store object found unreadable (and quarantined where it could)."""
        return tuple(self._bad_documents)

    def _set_aside(self, path: str, reason: str) -> None:
        self._bad_documents.append(UnreadableFile(path, reason, self._quarantine(path, reason)))

    def read_knee_summary(self, experiment: str) -> Optional[dict]:
        """The knee search's summary of ``experiment``, or None when there is none."""
        return self._read_json(self._knee_summary_path(experiment))

    def knee_summaries(self) -> tuple["KneeSummaryFile", ...]:
        """Every ``_knee/<name>.json``; one that cannot be read or parsed carries the reason instead.

        The summaries are optional (the rows alone must suffice), so a
        summary folder that cannot be listed reads as none.
        """
        try:
            infos = self._list(f"{self._root}/{KNEE_SUMMARY_FOLDER}")
        except StoreError:
            return ()
        summaries = []
        for info in sorted(infos, key=lambda info: info.path):
            if info.type != pafs.FileType.File or not info.base_name.endswith(".json") \
                    or is_internal_name(info.base_name):
                continue
            stem = info.base_name[:-len(".json")]
            experiment = stem if is_knee_experiment(stem) else knee_experiment_name(stem)
            try:
                content = self._read_json(info.path)
                if not isinstance(content, dict):
                    raise _BadDocument(f"not a JSON object ({type(content).__name__})")
                summaries.append(KneeSummaryFile(experiment, info.path, content=content))
            except _BadDocument as bad:
                self._set_aside(info.path, str(bad))
                summaries.append(KneeSummaryFile(experiment, info.path, problem=f"{info.path}: {bad}"))
            except StoreError as error:
                summaries.append(KneeSummaryFile(experiment, info.path, problem=str(error)))
        return tuple(summaries)

    def require_readable(self) -> None:
        """Raise ``StoreError`` unless the store can be read: a local store must be an existing directory.

        An object store has no empty directories, so a prefix with nothing
        under it is simply an empty store, unless its bucket does not exist.
        """
        self._first_answer(self._require_readable, f"cannot read the results store {self._shown_uri!r}")

    def _require_readable(self) -> None:
        try:
            info = self._fs.get_file_info(self._root)
        except OSError as error:  # an endpoint that does not answer, keys it refuses
            raise StoreError(f"cannot read the results store {self._shown_uri!r}: {self._quoted(error)}") from error
        if self._is_local and info.type == pafs.FileType.NotFound:
            raise StoreError(f"cannot read the results store {self._shown_uri!r}: no such directory: "
                             f"{shown(self._root)}")
        if info.type == pafs.FileType.File:
            raise StoreError(f"cannot read the results store {self._shown_uri!r}: {shown(self._root)} is a file, "
                             f"not a store directory")
        if info.type == pafs.FileType.NotFound:
            bucket = self._bucket_missing()
            if bucket is not None:
                raise StoreError(f"cannot read the results store {self._shown_uri!r}: the bucket {shown(bucket)} "
                                 f"does not exist")
        self._list(self._root)

    def signature(self) -> tuple:
        """A cheap fingerprint of the data files and knee summaries, to notice that the store changed."""
        infos = []
        for experiment in self.experiments():
            infos += [info for info in self._list(self._experiment_dir(experiment)) if info.type == pafs.FileType.File]
        try:
            infos += self._list(f"{self._root}/{KNEE_SUMMARY_FOLDER}")
        except StoreError:
            pass
        return tuple(sorted((info.path, info.size, info.mtime_ns) for info in infos
                            if not info.base_name.startswith(".")))

    def scan(self, experiments: Optional[Iterable[str]] = None,
             columns: Optional[Iterable[str]] = None, heal: bool = True) -> StoreScan:
        """Read and verify every data file of ``experiments`` (default: all).

        Args:
            experiments: the experiment folders to read; default every one.
            columns: the columns to return (the keys and ``finished_at`` are
                always included); default all of ``RESULTS_SCHEMA``. Every
                file is verified whole either way.
            heal: quarantine files that fail verification, delete superseded
                ones and stale temporary files (see the module's notes); when
                False (or the store is read-only) they are only reported.
        """
        names = self.experiments() if experiments is None else sorted(set(experiments))
        schema = _projected_schema(columns)
        sizes = {path: size for experiment in names for path, size in self._data_file_sizes(experiment).items()}
        paths = sorted(sizes)
        if heal:
            for experiment in names:
                self._remove_stale_temporaries(experiment)
        # Every file is verified before any is deleted or moved: only a file proven superseded by a
        # verified file of the same keys is deleted, and a file that fails never wins over one that passes.
        # The listing's sizes: on an object store a second request per file would only repeat them.
        results = dict(zip(paths, _map_threads(lambda path: self._read_verified(path, sizes[path]), paths)))
        redundant = superseded({path: results[path][0] for path in paths if results[path][1] is None})
        redundant |= copies({path: results[path][0] for path in paths
                             if results[path][1] is None and path not in redundant})
        tables, unreadable, seen = [], [], set()
        for path in paths:
            table, reason, present = results[path]
            if reason is None and path in redundant:
                if heal:
                    self._delete(path)
                continue  # its keys are in the verified file that replaced it
            if reason is None:
                tables.append(table.select(schema.names))
                seen.update(present)
            else:
                moved = self._quarantine(path, reason) if heal and not reason.startswith(_PASSING) else None
                unreadable.append(UnreadableFile(path, reason, moved))
        rows = pa.concat_tables(tables) if tables else schema.empty_table()
        latest = latest_per_key(rows)
        missing = tuple(name for name in schema.names if tables and name not in seen)
        return StoreScan(table=latest, files_read=len(tables), rows_read=rows.num_rows,
                         duplicates_dropped=rows.num_rows - latest.num_rows, unreadable=tuple(unreadable),
                         missing_columns=missing)

    def _read_verified(self, path: str, size: Optional[int] = None) -> tuple[Optional[pa.Table], Optional[str],
                                                                             frozenset]:
        """(rows in ``RESULTS_SCHEMA``, None, columns the file had) or (None, why it is unreadable, {})."""
        try:
            if size is None:  # not listed just before (a merge's input)
                size = self._fs.get_file_info(path).size
            if size is not None and size > MAX_DATA_FILE_BYTES:
                return None, (f"too large: {size} bytes, more than the {MAX_DATA_FILE_BYTES} bytes of the largest "
                              f"file the results store writes"), frozenset()
            with self._fs.open_input_file(path) as source:
                # Bounded even where the listing's size was wrong; sized so a small file costs a small buffer.
                data = source.read((MAX_DATA_FILE_BYTES if size is None else min(size, MAX_DATA_FILE_BYTES)) + 1)
        except OSError as error:
            return None, f"cannot read: {error}", frozenset()
        if len(data) > MAX_DATA_FILE_BYTES:
            return None, (f"too large: more than the {MAX_DATA_FILE_BYTES} bytes of the largest file the results "
                          f"store writes"), frozenset()
        data = pa.py_buffer(data)
        stem, expected_digest = name_parts(path)
        if expected_digest is None:
            return None, "not written by the results store (no content digest in its name)", frozenset()
        if not _WRITER_STEM.match(stem):
            return None, ("not written by the results store (its name is not part-<keys>-<content>.parquet)"), \
                frozenset()
        if content_digest(data) != expected_digest:
            return None, (f"content does not match the digest in its name ({len(data)} bytes): "
                          f"truncated or damaged"), frozenset()
        try:
            table = pq.ParquetFile(pa.BufferReader(data), page_checksum_verification=True).read(use_threads=False)
        except Exception as error:  # any failure to decode is a damaged file
            return None, f"{type(error).__name__}: {error}", frozenset()
        missing = [name for name in RESULTS_SCHEMA.names if name not in table.column_names
                   and name not in LATER_COLUMNS]
        if missing:
            return None, f"missing columns {missing}", frozenset()
        columns = []
        for field in RESULTS_SCHEMA:
            if field.name not in table.column_names:
                # Written before this column existed: it reads as null (an optional
                # config field at its default, a metric not measured then), or as
                # what made the rows then (the published commit protocol).
                if field.name in LEGACY_VALUES:
                    columns.append(pa.array([LEGACY_VALUES[field.name]] * table.num_rows, field.type))
                else:
                    columns.append(pa.nulls(table.num_rows, field.type))
                continue
            actual = table.schema.field(field.name).type
            if not same_kind(actual, field.type):  # a cast would hide a wrong type (a seed written as text)
                return None, f"column {field.name} has type {actual}, expected {field.type}", frozenset()
            try:
                columns.append(table.column(field.name).cast(field.type))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as error:
                return None, f"column {field.name} has type {table.schema.field(field.name).type}, " \
                             f"expected {field.type}: {error}", frozenset()
        try:
            verified = pa.Table.from_arrays(columns, schema=RESULTS_SCHEMA)
            verified.validate(full=True)  # non-nullable columns hold no null
        except (pa.ArrowInvalid, ValueError) as error:
            return None, f"rows break the schema: {error}", frozenset()
        problem = key_problem(path, verified)
        if problem is not None:
            return None, problem, frozenset()
        return verified, None, frozenset(table.column_names)

    # -- healing ------------------------------------------------------------

    def quarantined(self) -> list[str]:
        """Paths of every file in the quarantine folder."""
        found = []
        for info in self._list(f"{self._root}/{QUARANTINE_FOLDER}"):
            if info.type == pafs.FileType.Directory:
                found += [i.path for i in self._list(info.path) if i.type == pafs.FileType.File]
        return sorted(found)

    def _inside(self, path: str) -> bool:
        """Whether ``path``'s folder really lies in the store, so healing may move or delete it.

        A local store's folder may be a symbolic link to a directory elsewhere; a reader must not
        move or delete files there (a file that is itself a link is fine: moving it moves the link).
        """
        if not self._is_local:
            return True
        root = os.path.realpath(self._root)
        folder = os.path.realpath(os.path.dirname(path))
        return folder == root or folder.startswith(root + os.sep)

    def _delete(self, path: str) -> None:
        """Delete a file the store proved redundant, unless it lies outside the store; never raises."""
        if self._inside(path):
            try:
                self._fs.delete_file(path)
            except OSError:
                pass

    def _quarantine(self, path: str, reason: str) -> Optional[str]:
        """Move a file that failed verification out of every reader's way; None when it cannot be moved."""
        if not self._inside(path):
            return None  # through a link to a directory outside the store: reported in place
        experiment, name = path.rsplit("/", 2)[-2:]
        when = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        why = slug(reason)
        target = f"{self._root}/{QUARANTINE_FOLDER}/{experiment}/{when}-{why}-{name}{QUARANTINE_SUFFIX}"
        try:
            self._fs.create_dir(target.rsplit("/", 1)[0], recursive=True)
            self._fs.move(path, target)
        except OSError:
            return None  # read-only, or another reader moved it first: reported in place
        return target

    def _remove_stale_temporaries(self, experiment: str) -> None:
        now_ns = time.time_ns()
        for info in self._list(self._experiment_dir(experiment)):
            if info.type == pafs.FileType.File and info.base_name.startswith(".tmp-") \
                    and info.mtime_ns is not None and now_ns - info.mtime_ns > STALE_TEMPORARY_S * 1e9:
                self._delete(info.path)

    def _read_json(self, path: str):
        """A JSON document of the store, or None when there is none.

        Raises StoreError when it cannot be read (which may pass), _BadDocument when what it holds
        is not a document of ours (which will not).
        """
        try:
            info = self._fs.get_file_info(path)
            if info.type == pafs.FileType.NotFound:
                return None
            if info.size is not None and info.size > MAX_DOCUMENT_BYTES:
                raise _BadDocument(f"too large: {info.size} bytes, more than the {MAX_DOCUMENT_BYTES} read")
            with self._fs.open_input_stream(path) as stream:
                data = stream.read((MAX_DOCUMENT_BYTES if info.size is None else info.size) + 1)
        except OSError as error:
            raise StoreError(f"cannot read {path} in store {self._shown_uri}: {type(error).__name__}: "
                             f"{self._quoted(error)}") from error
        if len(data) > MAX_DOCUMENT_BYTES:
            raise _BadDocument(f"too large: more than the {MAX_DOCUMENT_BYTES} bytes read")
        try:
            document = json.loads(data.decode())
        except (ValueError, RecursionError) as error:  # JSONDecodeError and bad UTF-8 are ValueErrors
            raise _BadDocument(f"JSON that cannot be read: {type(error).__name__}: {str(error)[:200]}") from None
        if depth(document) > MAX_DOCUMENT_DEPTH:
            raise _BadDocument(f"JSON nested deeper than {MAX_DOCUMENT_DEPTH} levels")
        return document

    # -- helpers ------------------------------------------------------------

    def _knee_summary_path(self, experiment: str) -> str:
        self._experiment_dir(experiment)  # the same naming rules
        return f"{self._root}/{KNEE_SUMMARY_FOLDER}/{experiment}.json"

    def _experiment_dir(self, experiment: str) -> str:
        if not experiment or "/" in experiment or is_internal_name(experiment):
            raise StoreError(f"experiment: {experiment!r} is not allowed; expected a name without '/' "
                             f"that does not start with '.' or '_'")
        return f"{self._root}/{experiment}"

    def _list(self, directory: str) -> list:
        try:
            return self._fs.get_file_info(pafs.FileSelector(directory, allow_not_found=True))
        except OSError as error:
            raise StoreError(f"cannot list {directory} in store {self._shown_uri}: {self._quoted(error)}") from error

    def _exists(self, path: str) -> bool:
        return self._fs.get_file_info(path).type != pafs.FileType.NotFound


class _BadDocument(StoreError):
    """A plan or summary whose content is not one of ours (as opposed to one that cannot be read now)."""


def _with_retry_limit(uri: str) -> str:
    """``uri`` as pyarrow opens it: a GCS URI without its own ``retry_limit_seconds`` gets
    ``GCS_RETRY_LIMIT_S``; every other URI as it is."""
    if not uri.lower().startswith(_GCS_SCHEMES) or "#" in uri or "retry_limit_seconds=" in uri:
        return uri
    return f"{uri}{'&' if '?' in uri else '?'}retry_limit_seconds={GCS_RETRY_LIMIT_S}"


_WRITER_STEM = re.compile(r"^part-[0-9a-f]{20}$")  # part-<keys digest>, as write_rows names files

# Reasons that may pass (the file itself may be fine): never quarantined.
_PASSING = "cannot read:"


@dataclass(frozen=True)
class KneeSummaryFile:
    """One ``_knee/<name>.json``: its parsed content, or why it could not be read.

    ``experiment`` is the knee experiment it describes (``exp4c_knee`` for
    ``exp4c_knee.json`` and for ``exp4c.json``).
    """

    experiment: str
    path: str
    content: object = None
    problem: Optional[str] = None


# Files are read on a few threads: pyarrow hashes and decodes without the
# GIL, and a store holds one small file per sweep batch.
READ_THREADS = max(1, min(4, os.cpu_count() or 1))


def _map_threads(function, items: list) -> list:
    if len(items) < 2 or READ_THREADS == 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=READ_THREADS, thread_name_prefix="store-read") as pool:
        return list(pool.map(function, items))


def _projected_schema(columns: Optional[Iterable[str]]) -> pa.Schema:
    if columns is None:
        return RESULTS_SCHEMA
    wanted = set(columns) | set(KEY_COLUMNS) | {"finished_at"}
    unknown = sorted(wanted - set(RESULTS_SCHEMA.names))
    if unknown:
        raise StoreError(f"columns: {unknown} are not results-store columns; expected names of RESULTS_SCHEMA")
    return pa.schema([field for field in RESULTS_SCHEMA if field.name in wanted])
