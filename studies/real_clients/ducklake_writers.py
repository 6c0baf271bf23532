"""DuckLake writers for ``python -m studies.real_clients --real-client ducklake``: N writer processes, each inserting
a one-row batch every S seconds into one of T tables of one lake, and the retries DuckLake itself made per commit.

The lake: its catalog a SQLite file (or PostgreSQL on loopback, ``postgres.py``), its DATA_PATH on the lab's
MinIO through httpfs (or a local directory). DuckDB and its extensions come from PyPI, pinned together: the
``duckdb-ext-*`` wheels ship each extension's binary for one DuckDB version, LOADed by path (no download).

**Retries per commit.** DuckLake 1.4.4 (the v1.4-andium branch, ``DuckLakeTransaction::FlushChanges`` in
``src/storage/ducklake_transaction.cpp``) reports no count: it retries a commit whose error names a primary key,
a unique constraint, a conflict or concurrent access, up to ``ducklake_max_retry_count`` (10) attempts in all
(``i + 1 >= max_retry_count`` stops it: 9 retries at most), sleeping ``ducklake_retry_wait_ms`` x U[0.5, 1) x
``ducklake_retry_backoff``^i between them, and raises "Exceeded the maximum retry count of 10 set by the
ducklake_max_retry_count setting" when they run out. Every retry first reads the changes committed since its
snapshot (``GetSnapshotAndStatsAndChanges``: ``STRING_AGG(changes_made, ',')``), which the first attempt never
does; DuckDB's query log (``enable_logging('QueryLog')``) records the metadata connection's queries too, so a
call's retries are the times that query appears in the log during it.

**SQLite.** Across processes a lost race on SQLite is "database is locked" (SQLITE_BUSY: a writer that read the
old snapshot cannot take the write lock while another holds it), which DuckLake does not retry: the commit fails
at once or after the driver's busy wait, and a SQLite catalog shows failures, not retries. PostgreSQL answers a
lost race with a duplicate snapshot id (a unique violation), which DuckLake retries.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from studies.real_clients.errors import SetupError

DUCKDB_VERSION = "1.4.4"
EXTENSIONS_RELEASE = "1.4.4.20260205"  # the duckdb-ext-* wheels built for DUCKDB_VERSION
RETRY_QUERY_MARK = "STRING_AGG(changes_made"  # the conflict check only a retry runs (see above)
EXHAUSTED = "Exceeded the maximum retry count"
LOCKED = "database is locked"
COLUMNS = "writer BIGINT, seq BIGINT"  # as the other clients' one-row batches (writer_processes.SCHEMA_FIELDS)


def extension_path(name: str) -> Path:
    """The binary of DuckDB extension ``name`` that its ``duckdb-ext-*`` wheel installed, for DUCKDB_VERSION."""
    spec = importlib.util.find_spec("duckdb_ext")
    roots = list(spec.submodule_search_locations or []) if spec else []
    for root in roots:
        path = Path(root) / "extensions" / f"v{DUCKDB_VERSION}" / "linux_amd64" / f"{name}.duckdb_extension"
        if path.is_file():
            return path
    wheel = {"sqlite_scanner": "sqlite", "postgres_scanner": "postgres"}.get(name, name)
    raise SetupError(f"ducklake: extension '{name}' is not installed; expected "
                      f"pip install 'duckdb=={DUCKDB_VERSION}' 'duckdb-ext-{wheel}=={EXTENSIONS_RELEASE}'")


def check_duckdb() -> None:
    """DuckDB itself at DUCKDB_VERSION: an extension binary loads only into the version it was built for."""
    try:
        import duckdb
    except ImportError:
        raise SetupError(f"ducklake: duckdb is not installed; expected pip install 'duckdb=={DUCKDB_VERSION}'") from None
    if duckdb.__version__ != DUCKDB_VERSION:
        raise SetupError(f"ducklake: duckdb {duckdb.__version__} is installed; expected {DUCKDB_VERSION}, the "
                          f"version of the duckdb-ext-* {EXTENSIONS_RELEASE} wheels")


@dataclass(frozen=True)
class Lake:
    """Where one lake lives: its catalog database (``ATTACH 'ducklake:<metadata>'``) and its data files."""
    catalog: str  # "sqlite" or "postgresql"
    metadata: str  # "sqlite:/path/catalog.sqlite" or "postgres:host=127.0.0.1 port=... dbname=..."
    data_path: str  # "s3://lab/..." or a local directory
    s3_endpoint: str = ""  # the lab's S3 endpoint (through its latency proxy) when data_path is on S3


def connect(lake: Lake, log_queries: bool = False):
    """A DuckDB connection with the lake attached as ``lake``; with ``log_queries``, DuckDB's query log on."""
    import duckdb

    check_duckdb()
    con = duckdb.connect(config={"allow_unsigned_extensions": "true", "autoinstall_known_extensions": "false",
                                 "autoload_known_extensions": "false"})
    needed = ["ducklake", "sqlite_scanner" if lake.catalog == "sqlite" else "postgres_scanner"]
    if lake.data_path.startswith("s3://"):
        needed.append("httpfs")
    for name in needed:
        con.execute(f"LOAD '{extension_path(name)}'")
    if lake.data_path.startswith("s3://"):
        endpoint = urlparse(lake.s3_endpoint)
        con.execute("CREATE SECRET lab (TYPE s3, KEY_ID ?, SECRET ?, ENDPOINT ?, URL_STYLE 'path', USE_SSL ?, "
                    "REGION ?)", [os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"],
                                  endpoint.netloc, endpoint.scheme == "https",
                                  os.environ.get("AWS_DEFAULT_REGION", "us-east-1")])
    con.execute(f"ATTACH 'ducklake:{lake.metadata}' AS lake (DATA_PATH '{lake.data_path}')")
    if log_queries:
        con.execute("CALL enable_logging('QueryLog')")
    return con


def create_tables(lake: Lake, tables: list[str]) -> None:
    con = connect(lake)
    try:
        for table in tables:
            con.execute(f"CREATE TABLE lake.{table} ({COLUMNS})")
    finally:
        con.close()


def retries_in_log(messages: list[str]) -> int:
    """The retries one commit made: the conflict checks its retries ran, in its part of the query log.

    >>> retries_in_log(["INSERT INTO lake.t VALUES (1, 2)", "SELECT snapshot_id, ... STRING_AGG(changes_made, ',')",
    ...                 "INSERT INTO ... ducklake_snapshot VALUES (7, NOW(), 1, 2, 6)"])
    1
    >>> retries_in_log(["INSERT INTO lake.t VALUES (1, 2)", "COMMIT"])
    0
    """
    return sum(1 for message in messages if RETRY_QUERY_MARK in message)


def failure_kind(error: Exception) -> str:
    """A raised call's name in the results: its type, and which of DuckLake's failures it was.

    >>> failure_kind(RuntimeError("Failed to commit DuckLake transaction. Exceeded the maximum retry count of 10"))
    'RuntimeError(retries-exhausted)'
    >>> failure_kind(RuntimeError("Failed to flush changes into DuckLake: database is locked"))
    'RuntimeError(database-locked)'
    """
    message = str(error)
    kind = "retries-exhausted" if EXHAUSTED in message else "database-locked" if LOCKED in message else "other"
    return f"{type(error).__name__}({kind})"


class Writer:
    """One writer process's lake connection: ``append`` inserts one row and returns the retries it took."""

    def __init__(self, lake: Lake):
        self.con = connect(lake, log_queries=True)

    def append(self, table: str, writer: int, seq: int) -> int:
        self.con.execute("CALL truncate_duckdb_logs()")
        self.con.execute(f"INSERT INTO lake.{table} VALUES (?, ?)", [writer, seq])
        return retries_in_log(self.log())

    def log(self) -> list[str]:
        return [m for (m,) in self.con.execute("SELECT message FROM duckdb_logs WHERE type = 'QueryLog'").fetchall()]

    def retries_of_failed_call(self) -> int:
        return retries_in_log(self.log())

    def warm_up(self, table: str) -> None:
        warm_up_writer(self, table)


def committed_keys(lake: Lake, tables: list[str]) -> set[tuple[int, int]]:
    """(writer, seq) of every row the lake's tables hold: the commits that landed."""
    con = connect(lake)
    try:
        keys = set()
        for table in tables:
            keys |= {(int(w), int(s)) for w, s in con.execute(f"SELECT writer, seq FROM lake.{table}").fetchall()}
        return keys
    finally:
        con.close()


def time_catalog_commit(lake: Lake, rounds: int = 100) -> float:
    """Median ms of one transaction inserting the next id into a keyed table of the lake's catalog database,
    through DuckDB's sqlite/postgres extension as DuckLake writes it (its commit inserts the next snapshot id,
    the row two racing commits collide on), on a scratch table dropped afterwards."""
    import duckdb

    check_duckdb()
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    try:
        kind, target = lake.metadata.split(":", 1)
        con.execute(f"LOAD '{extension_path('sqlite_scanner' if kind == 'sqlite' else 'postgres_scanner')}'")
        con.execute(f"ATTACH '{target}' AS meta (TYPE {'sqlite' if kind == 'sqlite' else 'postgres'})")
        con.execute("CREATE TABLE IF NOT EXISTS meta.commit_sweeps_cas_probe (k BIGINT PRIMARY KEY)")
        con.execute("DELETE FROM meta.commit_sweeps_cas_probe")
        times = []
        for i in range(rounds):
            start = time.perf_counter()
            con.execute("BEGIN")
            con.execute("INSERT INTO meta.commit_sweeps_cas_probe VALUES (?)", [i])
            con.execute("COMMIT")
            times.append((time.perf_counter() - start) * 1000.0)
        con.execute("DROP TABLE meta.commit_sweeps_cas_probe")
    finally:
        con.close()
    times.sort()
    return times[len(times) // 2]


def warm_up_writer(writer: "Writer", table: str) -> None:
    """An insert rolled back before the start: the first timed call then does not load the Parquet writer and
    the lake's catalog (a second or more on this machine); nothing is committed."""
    try:
        writer.con.execute("BEGIN")
        writer.con.execute(f"INSERT INTO lake.{table} VALUES (-1, -1)")
        writer.con.execute("ROLLBACK")
    except Exception as error:  # the timed calls meet it again, and count it as theirs
        try:
            writer.con.execute("ROLLBACK")
        except Exception:
            pass  # the failed insert left no transaction open
        print(f"ducklake: the warm-up insert failed ({failure_kind(error)}); going on", file=sys.stderr)


def check_data_path(lake: Lake) -> None:
    """One small file written to and deleted from the lake's DATA_PATH through DuckDB: SetupError, one line, when
    httpfs cannot write there (then the run may fall back to a local DATA_PATH and says so)."""
    con = connect(lake)
    probe = lake.data_path.rstrip("/") + "/commit-sweeps-probe.parquet"
    try:
        con.execute(f"COPY (SELECT 1 AS x) TO '{probe}' (FORMAT parquet)")
        con.execute(f"SELECT count(*) FROM read_parquet('{probe}')").fetchall()
    except Exception as error:
        raise SetupError(f"ducklake: DuckDB cannot write its DATA_PATH {lake.data_path}: "
                          f"{' '.join(str(error).split())[:200]}") from None
    finally:
        con.close()
