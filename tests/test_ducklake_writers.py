"""DuckLake writers against a real lake: a SQLite catalog file and a local DATA_PATH (and PostgreSQL on loopback
where Debian's server is installed), a couple of writer processes for a few seconds.

Needs DuckDB 1.4.4 with the duckdb-ext-ducklake and duckdb-ext-sqlite wheels of the same release (the
``realclients`` extra); skipped without them."""

import shutil
import tempfile
from pathlib import Path

import pytest

from studies.real_clients.errors import SetupError
from studies.real_clients import ducklake_writers as dw
from studies.real_clients import postgres
from studies.real_clients.measure import logged_retries, measure
from studies.real_clients.writer_processes import run_writers

try:
    dw.check_duckdb()
    dw.extension_path("ducklake"), dw.extension_path("sqlite_scanner")
except SetupError as missing:
    pytest.skip(f"{missing}", allow_module_level=True)


def _needs_postgresql():
    if not postgres.available():
        pytest.skip("Debian's postgresql (initdb, pg_ctl) is not installed")
    try:
        dw.extension_path("postgres_scanner")
    except SetupError as missing:
        pytest.skip(f"{missing}")


def _lake(tmp_path, metadata=None):
    return dw.Lake("sqlite" if metadata is None else "postgresql",
                   metadata or f"sqlite:{tmp_path / 'catalog.sqlite'}", f"{tmp_path / 'data'}/")


def test_two_writers_on_a_sqlite_catalog_land_their_commits_and_read_their_retries(tmp_path):
    lake = _lake(tmp_path)
    dw.create_tables(lake, ["t0"])
    attempts, cpu_s, _, _ = run_writers("ducklake", [{"lake": lake, "table": "t0"}] * 2, 2, 0.5, 3.0, seed=0)
    assert len(attempts) == 12  # 2 writers x 6 due in 3 s every 0.5 s
    returned = [a for a in attempts if not a.raised]
    assert returned and all(a.retries >= 0 for a in returned)  # every returned call's retries were read
    # A lost race on SQLite is "database is locked", never retried; anything else raised is a harness error.
    assert all(a.raised == "TransactionException(database-locked)" for a in attempts if a.raised)
    landed = dw.committed_keys(lake, ["t0"])
    assert {(a.writer, a.seq) for a in returned} <= landed
    m = measure(attempts, logged_retries(attempts), 2, 0.5, 3.0)
    assert m.committed == len(returned) and cpu_s > 0


def test_a_commit_that_lost_the_race_on_postgresql_reports_its_retry(tmp_path):
    _needs_postgresql()
    with postgres.LoopbackPostgres() as pg:
        lake = _lake(tmp_path, "postgres:" + pg.libpq)
        dw.create_tables(lake, ["t0"])
        late, early = dw.Writer(lake), dw.Writer(lake)
        late.con.execute("CALL truncate_duckdb_logs()")
        late.con.execute("BEGIN")
        late.con.execute("INSERT INTO lake.t0 VALUES (0, 0)")  # its snapshot read here
        assert early.append("t0", 1, 0) == 0  # commits the snapshot the late one will also try to take
        late.con.execute("COMMIT")
        assert dw.retries_in_log(late.log()) == 1
        assert dw.committed_keys(lake, ["t0"]) == {(0, 0), (1, 0)}
        assert dw.time_catalog_commit(lake, rounds=5) > 0


def test_a_data_path_duckdb_cannot_write_is_one_line(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(SetupError, match="cannot write its DATA_PATH"):
        dw.check_data_path(dw.Lake("sqlite", f"sqlite:{tmp_path / 'c.sqlite'}", f"{tmp_path / 'file'}/sub/"))


def test_the_catalog_commit_is_timed_on_a_scratch_table_that_is_dropped(tmp_path):
    import sqlite3

    lake = _lake(tmp_path)
    assert 0 < dw.time_catalog_commit(lake, rounds=10) < 1000
    names = [n for (n,) in sqlite3.connect(tmp_path / "catalog.sqlite").execute("SELECT name FROM sqlite_master")]
    assert "commit_sweeps_cas_probe" not in names


def test_a_writer_whose_commits_raise_records_each_as_failed_and_goes_on(tmp_path):
    import queue
    import threading
    import time
    from types import SimpleNamespace

    from studies.real_clients.writer_processes import _writer

    lake = _lake(tmp_path)
    dw.create_tables(lake, ["t0"])
    go, ready, out = threading.Event(), queue.Queue(), queue.Queue()
    go.set()
    # No such table: every insert raises, and the writer records each call rather than stopping.
    _writer(0, "ducklake", {"lake": lake, "table": "missing"}, 0.2, 0.6, 0.0, ready, go,
            SimpleNamespace(value=time.time()), out)
    _, attempts, _ = out.get(timeout=5)
    assert len(attempts) == 3
    assert all(a.raised.endswith("(other)") for a in attempts)


def test_the_store_labs_postgresql_keeps_its_cluster_and_gives_each_run_a_database_of_its_own(tmp_path):
    _needs_postgresql()
    assert postgres.lab_postgres({}) is None  # no lab server named: each run starts its own
    cluster = Path(tempfile.mkdtemp(prefix="lab-pg-"))  # not under tmp_path: the postgres user must reach it
    port = postgres._free_port()
    assert postgres.main(["start", str(cluster), str(port)]) == 0  # as scripts/store-lab.sh up --postgres does
    try:
        lab = postgres.lab_postgres({"STORE_LAB_PG_PORT": str(port), "STORE_LAB_PG_DIRECT_PORT": str(port)})
        first, second = lab.new_database("run_a"), lab.new_database("run_b")
        assert "dbname=run_a" in first.libpq and first.jdbc_url.endswith("/run_a?user=postgres")
        # Two runs' lakes, each with its own DATA_PATH, on one server: each catalog starts empty.
        for run in (first, second):
            lake = dw.Lake("postgresql", "postgres:" + run.libpq, f"{tmp_path / run.dbname}/")
            dw.create_tables(lake, ["t0"])
            assert dw.Writer(lake).append("t0", 0, 0) == 0
            assert dw.committed_keys(lake, ["t0"]) == {(0, 0)}
    finally:
        assert postgres.main(["stop", str(cluster)]) == 0
    assert (cluster / "data").is_dir()  # the lab's to remove, with the rest of its state
    shutil.rmtree(cluster)
