"""A catalog's SQL database for ``probe-catalog``: the DSN, the probe's scratch tables, and two real commits.

    postgresql://user[:password]@host[:port]/database[?options]   PostgreSQL (psycopg, the ``catalog`` extra)
    sqlite:///relative/file.db, sqlite:////absolute/file.db         SQLite (Python's sqlite3), SQLAlchemy's form

The two commit transactions, each as the real system sends it:

- ``iceberg-jdbc``: Iceberg's JDBC catalog (``core/.../jdbc/JdbcUtil.java``, ``DO_COMMIT_SQL``, apache/iceberg at
  03239a33): one autocommit ``UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ?
  WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ?`` as a prepared
  statement; 0 rows updated is a lost commit. Each client owns one row (one table), so no commit loses on
  its logic and what is measured is the database.
- ``ducklake``: DuckLake's commit of one inserted data file (the specification's catalog tables,
  ducklake.select/docs, 0.3 to 1.0): one transaction that reads the latest ``ducklake_snapshot``, inserts
  snapshot latest + 1, its ``ducklake_snapshot_changes`` row and the ``ducklake_data_file`` row, then commits.
  Every client writes the one snapshot sequence, so concurrent writers collide on the primary key, as they
  do in DuckLake (its conflict resolution retries; the probe does not, and counts the collision). On
  PostgreSQL the transaction begins ``ISOLATION LEVEL REPEATABLE READ``, the default of DuckDB's postgres
  extension (duckdb-postgres ``src/postgres_storage.cpp``), and is sent as that extension sends it: literal
  SQL in three round trips (the BEGIN with the snapshot read, the inserts, the COMMIT). Left out: the table
  and column statistics rows a real insert also updates.

The scratch tables are named ``commit_sweeps_probe_<random>_<table>``: the probe makes, writes and drops
only those, in the DSN's database (PostgreSQL: the first schema of the connection's search_path).
Nothing here prints; messages that quote the DSN go through ``redact``.
"""

from __future__ import annotations

import re
import secrets
import sqlite3
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional
from urllib.parse import unquote, urlsplit

from simcore.errors import ConfigError
from simcore.redaction import redact

TRANSACTIONS = ("iceberg-jdbc", "ducklake")
PREFIX = "commit_sweeps_probe_"
# A deferred SQLite transaction that has read loses its write to a concurrent writer as SQLITE_BUSY at once
# (waiting could deadlock: its snapshot would be stale by then), or as SQLITE_BUSY_SNAPSHOT when the other has
# already committed. Either is DuckLake's conflict on SQLite.
SQLITE_BUSY, SQLITE_BUSY_SNAPSHOT = 5, 517
SQLITE_BUSY_TIMEOUT_S = 30.0  # how long a SQLite writer waits for the write lock before giving up
CONNECT_TIMEOUT_S = 10
_DSN_ALLOWED = ("postgresql://user[:password]@host[:port]/database or sqlite:///path/file.db (an existing file; "
                "sqlite:////absolute/path.db)")
_TABLE_TOKEN = re.compile(r"^[0-9a-f]{8}$")


class CatalogSQLError(Exception):
    """The database refused or failed something other than a commit's conflict; the message is redacted."""


@dataclass(frozen=True)
class CatalogDSN:
    """Which database: ``kind`` postgresql or sqlite; ``text`` as given (it may hold a password: never shown)."""

    kind: str
    text: str
    path: Optional[str] = None  # the SQLite file

    def describe(self) -> str:
        return redact(self.text, self.text)

    def redact(self, message: str) -> str:
        """``message`` with this DSN's credentials masked wherever it quotes them."""
        return redact(str(message), self.text)


def parse_dsn(text: str) -> CatalogDSN:
    """``--dsn``: a PostgreSQL URI or a SQLite file.

    >>> parse_dsn("postgresql://me:secret@127.0.0.1:5432/cat").describe()
    'postgresql://***@127.0.0.1:5432/cat'
    >>> parse_dsn("sqlite:////tmp").kind
    Traceback (most recent call last):
    ...
    simcore.errors.ConfigError: dsn: 'sqlite:////tmp' is not allowed; expected ... (this is a directory)
    """
    if not isinstance(text, str) or not text.isprintable():
        raise ConfigError("dsn", text, f"{_DSN_ALLOWED}, without control characters")
    scheme = text.partition("://")[0].lower()
    if scheme in ("postgresql", "postgres"):
        try:
            parts = urlsplit(text)
            parts.port  # raises ValueError on a bad port
        except ValueError:
            raise ConfigError("dsn", text, _DSN_ALLOWED) from None
        if not parts.hostname or not parts.path.strip("/"):
            raise ConfigError("dsn", text, f"{_DSN_ALLOWED} (a host and a database name)")
        return CatalogDSN("postgresql", text)
    if scheme == "sqlite" and text.startswith("sqlite:///"):
        path = unquote(text[len("sqlite:///"):].partition("?")[0])
        if not path or path == ":memory:":
            raise ConfigError("dsn", text, f"{_DSN_ALLOWED} (a file: an in-memory database has one connection)")
        file = Path(path)
        if file.is_dir():
            raise ConfigError("dsn", text, f"{_DSN_ALLOWED} (this is a directory)")
        if not file.is_file():
            # Opening a missing file would create a database the probe then leaves behind.
            raise ConfigError("dsn", text, f"{_DSN_ALLOWED} ({path} does not exist)")
        return CatalogDSN("sqlite", text, str(file))
    raise ConfigError("dsn", text, _DSN_ALLOWED)


def connect(dsn: CatalogDSN):
    """An autocommit DB-API connection: transactions are begun and ended by the commits themselves."""
    if dsn.kind == "sqlite":
        try:
            return sqlite3.connect(dsn.path, isolation_level=None, timeout=SQLITE_BUSY_TIMEOUT_S,
                                   check_same_thread=False)
        except sqlite3.Error as error:
            raise CatalogSQLError(dsn.redact(f"{dsn.describe()}: {error}")) from None
    try:
        import psycopg
    except ImportError:
        raise CatalogSQLError("PostgreSQL needs psycopg: pip install 'commit-sweeps[catalog]'") from None
    try:
        return psycopg.connect(dsn.text, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S,
                               application_name="commit-sweeps probe-catalog")
    except psycopg.Error as error:
        detail = " ".join(str(error).split())
        raise CatalogSQLError(dsn.redact(f"{dsn.describe()}: {detail}")) from None


def database_errors(kind: str) -> tuple[type, ...]:
    """The exception types a database's driver raises (a commit catches these and nothing wider)."""
    if kind == "sqlite":
        return (sqlite3.Error,)
    import psycopg

    return (psycopg.Error,)


def is_conflict(kind: str, error: Exception) -> bool:
    """Did a transaction that has read lose to a concurrent commit (a primary key taken, a stale snapshot, the
    write lock taken), rather than fail?"""
    if kind == "sqlite":
        return isinstance(error, sqlite3.IntegrityError) or getattr(error, "sqlite_errorcode", None) in \
            (SQLITE_BUSY, SQLITE_BUSY_SNAPSHOT)
    # 23505 unique_violation: the snapshot id was taken; 40001 serialization_failure: the same under a stricter
    # isolation level.
    return getattr(error, "sqlstate", None) in ("23505", "40001")


@dataclass(frozen=True)
class ScratchTables:
    """The probe's own tables: ``commit_sweeps_probe_<token>_<table>``, one token per run."""

    token: str

    @staticmethod
    def new() -> "ScratchTables":
        return ScratchTables(secrets.token_hex(4))

    def __post_init__(self):
        if not _TABLE_TOKEN.match(self.token):  # the names are put into SQL text: only these characters
            raise ConfigError("token", self.token, "8 lowercase hexadecimal digits")

    def name(self, table: str) -> str:
        return f"{PREFIX}{self.token}_{table}"

    def names(self, transaction: str) -> tuple[str, ...]:
        if transaction == "iceberg-jdbc":
            return (self.name("iceberg_tables"),)
        return tuple(self.name(t) for t in ("ducklake_snapshot", "ducklake_snapshot_changes", "ducklake_data_file"))


CATALOG_NAME, NAMESPACE = "commit_sweeps_probe", "probe"


def _metadata_location(client: int, version: int) -> str:
    # The length of a real one: a warehouse path, a zero-padded version and a UUID.
    return f"s3://warehouse/probe.db/table_{client}/metadata/{version:05d}-{uuid.uuid4()}.metadata.json"


def create_tables(connection, kind: str, tables: ScratchTables, transaction: str, clients: int) -> None:
    """Make the scratch tables and the rows the commits start from: one Iceberg table per client, or
    DuckLake's snapshot 0."""
    cursor = connection.cursor()
    if transaction == "iceberg-jdbc":
        name = tables.name("iceberg_tables")
        # JdbcUtil.CREATE_CATALOG_TABLE's columns and key.
        cursor.execute(f"CREATE TABLE {name} (catalog_name VARCHAR(255) NOT NULL, table_namespace VARCHAR(255) "
                       f"NOT NULL, table_name VARCHAR(255) NOT NULL, metadata_location VARCHAR(1000), "
                       f"previous_metadata_location VARCHAR(1000), PRIMARY KEY (catalog_name, table_namespace, "
                       f"table_name))")
        for client in range(clients):
            cursor.execute(_placeholders(kind, f"INSERT INTO {name} (catalog_name, table_namespace, table_name, "
                                               f"metadata_location, previous_metadata_location) "
                                               f"VALUES (?, ?, ?, ?, NULL)"),
                           (CATALOG_NAME, NAMESPACE, f"table_{client}", _metadata_location(client, 0)))
        return
    snapshot, changes, data_file = tables.names("ducklake")
    # The specification's columns (ducklake_snapshot, ducklake_snapshot_changes, ducklake_data_file).
    cursor.execute(f"CREATE TABLE {snapshot} (snapshot_id BIGINT PRIMARY KEY, snapshot_time TIMESTAMP, "
                   f"schema_version BIGINT, next_catalog_id BIGINT, next_file_id BIGINT)")
    cursor.execute(f"CREATE TABLE {changes} (snapshot_id BIGINT PRIMARY KEY, changes_made VARCHAR, author VARCHAR, "
                   f"commit_message VARCHAR, commit_extra_info VARCHAR)")
    cursor.execute(f"CREATE TABLE {data_file} (data_file_id BIGINT PRIMARY KEY, table_id BIGINT, begin_snapshot "
                   f"BIGINT, end_snapshot BIGINT, file_order BIGINT, path VARCHAR, path_is_relative BOOLEAN, "
                   f"file_format VARCHAR, record_count BIGINT, file_size_bytes BIGINT, footer_size BIGINT, "
                   f"row_id_start BIGINT, partition_id BIGINT, encryption_key VARCHAR, partial_file_info VARCHAR, "
                   f"mapping_id BIGINT)")
    # Snapshot 0 made the schema, 1 the table (table_id 1, so the next catalog id is 2).
    cursor.execute(f"INSERT INTO {snapshot} VALUES (0, CURRENT_TIMESTAMP, 0, 1, 0), (1, CURRENT_TIMESTAMP, 1, 2, 0)")
    cursor.execute(f"INSERT INTO {changes} VALUES (0, 'created_schema:\"main\"', NULL, NULL, NULL), "
                   f"(1, 'created_table:\"main\".\"probe\"', NULL, NULL, NULL)")


def present_tables(connection, kind: str, tables: ScratchTables) -> list[str]:
    """Which of this run's scratch tables exist."""
    cursor = connection.cursor()
    pattern = f"{PREFIX}{tables.token}_%"
    if kind == "sqlite":
        cursor.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ?", (pattern,))
    else:
        cursor.execute("SELECT table_name FROM information_schema.tables WHERE table_name LIKE %s "
                       "AND table_schema = current_schema()", (pattern,))
    return sorted(row[0] for row in cursor.fetchall())


def drop_tables(connection, kind: str, tables: ScratchTables) -> list[str]:
    """Drop this run's scratch tables (whichever exist); the names still there afterwards (none, normally)."""
    cursor = connection.cursor()
    for name in present_tables(connection, kind, tables):
        cursor.execute(f"DROP TABLE IF EXISTS {name}")
    return present_tables(connection, kind, tables)


def _placeholders(kind: str, sql: str) -> str:
    return sql if kind == "sqlite" else sql.replace("?", "%s")


def commit_function(connection, kind: str, tables: ScratchTables, transaction: str, client: int) -> Callable[[], bool]:
    """One client's commit: a call runs one transaction and says whether it committed (False: it lost to a
    concurrent commit). Any other database error is raised."""
    if transaction == "iceberg-jdbc":
        return _IcebergJdbcCommit(connection, kind, tables.name("iceberg_tables"), client)
    return _DuckLakeCommit(connection, kind, tables, client)


class _IcebergJdbcCommit:
    def __init__(self, connection, kind: str, table: str, client: int):
        self.cursor = connection.cursor()
        self.kind = kind
        self.client = client
        self.sql = _placeholders(kind, f"UPDATE {table} SET metadata_location = ? , previous_metadata_location = ? "
                                       f" WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND "
                                       f"metadata_location = ?")
        self.read_sql = _placeholders(kind, f"SELECT metadata_location FROM {table} WHERE catalog_name = ? AND "
                                            f"table_namespace = ? AND table_name = ?")
        self.current = self._read()
        self.version = 0

    def _read(self) -> str:
        self.cursor.execute(self.read_sql, (CATALOG_NAME, NAMESPACE, f"table_{self.client}"))
        return self.cursor.fetchone()[0]

    def __call__(self) -> bool:
        self.version += 1
        new = _metadata_location(self.client, self.version)
        self.cursor.execute(self.sql, (new, self.current, CATALOG_NAME, NAMESPACE, f"table_{self.client}",
                                       self.current))
        if self.cursor.rowcount != 1:  # someone else moved the pointer: JdbcTableOperations' CommitFailedException
            self.current = self._read()
            return False
        self.current = new
        return True


class _DuckLakeCommit:
    def __init__(self, connection, kind: str, tables: ScratchTables, client: int):
        self.connection = connection
        self.cursor = connection.cursor()
        self.kind = kind
        self.client = client
        self.snapshot, self.changes, self.data_file = tables.names("ducklake")
        self.errors = database_errors(kind)

    def __call__(self) -> bool:
        cursor = self.cursor
        read = (f"SELECT snapshot_id, schema_version, next_catalog_id, next_file_id FROM {self.snapshot} "
                f"WHERE snapshot_id = (SELECT max(snapshot_id) FROM {self.snapshot})")
        try:
            if self.kind == "sqlite":
                cursor.execute("BEGIN")  # deferred, as DuckDB's sqlite extension begins: the write lock comes later
                cursor.execute(read)
            else:
                cursor.execute(f"BEGIN TRANSACTION ISOLATION LEVEL REPEATABLE READ;\n{read}")
                cursor.nextset()  # past the BEGIN's result to the read's
            latest, schema_version, next_catalog_id, next_file_id = cursor.fetchone()
            snapshot_id = latest + 1
            path = f"ducklake-{uuid.uuid4()}.parquet"  # hexadecimal and dashes only: safe as literal SQL
            inserts = [
                f"INSERT INTO {self.snapshot} (snapshot_id, snapshot_time, schema_version, next_catalog_id, "
                f"next_file_id) VALUES ({snapshot_id}, CURRENT_TIMESTAMP, {schema_version}, {next_catalog_id}, "
                f"{next_file_id + 1})",
                f"INSERT INTO {self.changes} (snapshot_id, changes_made, author, commit_message, commit_extra_info) "
                f"VALUES ({snapshot_id}, 'inserted_into_table:1', NULL, NULL, NULL)",
                f"INSERT INTO {self.data_file} (data_file_id, table_id, begin_snapshot, end_snapshot, file_order, "
                f"path, path_is_relative, file_format, record_count, file_size_bytes, footer_size, row_id_start, "
                f"partition_id, encryption_key, partial_file_info, mapping_id) VALUES ({next_file_id}, 1, "
                f"{snapshot_id}, NULL, NULL, '{path}', TRUE, 'parquet', 1000, 65536, 1024, {next_file_id * 1000}, "
                f"NULL, NULL, NULL, NULL)",
            ]
            if self.kind == "sqlite":
                for statement in inserts:
                    cursor.execute(statement)
            else:
                cursor.execute(";\n".join(inserts))
            cursor.execute("COMMIT")
            return True
        except self.errors as error:
            self._rollback()
            if is_conflict(self.kind, error):
                return False
            raise

    def _rollback(self) -> None:
        try:
            self.cursor.execute("ROLLBACK")
        except self.errors:  # nothing to roll back (the error ended the transaction): fine
            pass


def describe_server(connection, kind: str) -> str:
    """The database's version and the settings that set a commit's cost (its durability)."""
    cursor = connection.cursor()
    if kind == "sqlite":
        mode = cursor.execute("PRAGMA journal_mode").fetchone()[0]
        synchronous = cursor.execute("PRAGMA synchronous").fetchone()[0]
        names = {0: "off", 1: "normal", 2: "full", 3: "extra"}
        synchronous = names.get(synchronous, synchronous)
        return f"SQLite {sqlite3.sqlite_version} (journal_mode {mode}, synchronous {synchronous})"
    settings = []
    for name in ("server_version", "fsync", "synchronous_commit", "wal_sync_method"):
        cursor.execute(f"SHOW {name}")
        settings.append(cursor.fetchone()[0])
    version, *rest = settings
    return f"PostgreSQL {version.split()[0]} (fsync {rest[0]}, synchronous_commit {rest[1]}, wal_sync_method {rest[2]})"
