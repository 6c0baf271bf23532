"""``commit-sweeps probe-catalog`` end to end: real SQLite (and PostgreSQL where initdb is found), real clients.

Each run measures for 2 s per client count at 1 and 2 clients, so a test takes a few seconds. What is checked
is what a user relies on: a fitted database that ``catalog_database_from_json`` reads with plausible figures,
conflicts counted where commits collide, the scratch tables gone afterwards (also after ^C) and the user's
own tables untouched, and no password in any message.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from commit_sweeps.cli import main
from simcore.catalog_databases import catalog_database_from_json
from store_probe.catalog_sql import PREFIX

ROOT = Path(__file__).resolve().parents[1]


def _user_catalog(tmp_path: Path) -> Path:
    """A SQLite catalog file with a table of the user's, in WAL mode."""
    path = tmp_path / "catalog.db"
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("CREATE TABLE iceberg_tables (table_name TEXT, metadata_location TEXT)")
    connection.execute("INSERT INTO iceberg_tables VALUES ('orders', 's3://w/orders/metadata/00001.json')")
    connection.commit()
    connection.close()
    return path


def _tables(path: Path) -> list[tuple]:
    connection = sqlite3.connect(path)
    try:
        return sorted(connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall())
    finally:
        connection.close()


def _plausible(database, *, most_ms: float = 1000.0) -> None:
    assert 0 < database.commit_floor_ms <= database.commit_median_ms < most_ms
    assert 0 < database.commit_sigma < 5
    assert 1 <= database.concurrency <= 64
    assert database.ceiling_cps > 1


def test_sqlite_iceberg_jdbc_commits_are_measured_fitted_and_the_scratch_tables_dropped(tmp_path, capsys):
    path = _user_catalog(tmp_path)
    out = tmp_path / "catalog.json"
    code = main(["probe-catalog", "--dsn", f"sqlite:///{path}", "--clients", "1,2", "--duration-s", "2",
                 "--out", str(out), "--name", "my-sqlite"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    database = catalog_database_from_json(out.read_text())
    assert database.name == "my-sqlite"
    assert "iceberg-jdbc" in database.source and "SQLite" in database.source
    _plausible(database)
    assert "fitted catalog database my-sqlite" in printed.out and "Little's law" in printed.out
    assert "1 client(s):" in printed.err and "2 client(s):" in printed.err  # progress per count
    assert _tables(path) == [("iceberg_tables",)]  # the user's table alone, as it was
    assert sqlite3.connect(path).execute("SELECT count(*) FROM iceberg_tables").fetchone() == (1,)


def test_sqlite_ducklake_commits_collide_on_the_snapshot_id_and_are_counted(tmp_path, capsys):
    path = _user_catalog(tmp_path)
    code = main(["probe-catalog", "--dsn", f"sqlite:///{path}", "--transaction", "ducklake", "--clients", "1,2",
                 "--duration-s", "2", "--json", "--conflict-wait-ms", "1"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    lines = [json.loads(line) for line in printed.out.splitlines()]
    one, two, fitted = lines
    assert one["clients"] == 1 and one["conflicts_per_s"] == 0 and one["commits_per_s"] > 10
    assert two["clients"] == 2 and two["conflicts_per_s"] > 0  # two writers of one snapshot sequence collide
    _plausible(catalog_database_from_json(json.dumps(fitted["catalog_database"])))
    assert _tables(path) == [("iceberg_tables",)]


def test_an_interrupted_probe_drops_its_tables_and_exits_130(tmp_path):
    path = _user_catalog(tmp_path)
    process = subprocess.Popen([sys.executable, "-m", "commit_sweeps", "probe-catalog", "--dsn", f"sqlite:///{path}",
                                "--clients", "1", "--duration-s", "60"], cwd=ROOT, stderr=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 60
        while not any(name.startswith(PREFIX) for (name,) in _tables(path)):  # the probe has made its tables
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.1)
        time.sleep(2.0)  # into the count
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert "interrupted" in err and "dropped the scratch tables" in err
    assert _tables(path) == [("iceberg_tables",)]


def test_a_missing_sqlite_file_is_bad_input_and_is_not_created(tmp_path, capsys):
    missing = tmp_path / "nope.db"
    assert main(["probe-catalog", "--dsn", f"sqlite:///{missing}", "--clients", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: dsn: ") and "does not exist" in err and len(err.splitlines()) == 1
    assert not missing.exists()


def test_clients_without_one_are_refused_before_anything_runs(tmp_path, capsys):
    path = _user_catalog(tmp_path)
    assert main(["probe-catalog", "--dsn", f"sqlite:///{path}", "--clients", "2-4"]) == 2
    assert capsys.readouterr().err.startswith("error: clients: ")
    assert _tables(path) == [("iceberg_tables",)]


def test_a_refused_connection_is_one_line_without_the_password(capsys):
    pytest.importorskip("psycopg")
    import socket

    with socket.socket() as free:  # a port nothing listens on
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    code = main(["probe-catalog", "--dsn", f"postgresql://alice:S3cretPassw0rd@127.0.0.1:{port}/catalog",
                 "--clients", "1", "--duration-s", "2"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: dsn: postgresql://***@127.0.0.1:") and len(err.strip().splitlines()) == 1
    assert "S3cretPassw0rd" not in err


def test_postgresql_commits_on_a_private_server(tmp_path, capsys):
    pytest.importorskip("psycopg")
    from studies.catalog_service.postgres_server import private_server, unavailable_reason

    reason = unavailable_reason()
    if reason:
        pytest.skip(f"no private PostgreSQL server: {reason}")
    out = tmp_path / "pg.json"
    with private_server() as server:
        for transaction in ("iceberg-jdbc", "ducklake"):
            code = main(["probe-catalog", "--dsn", server.dsn, "--transaction", transaction, "--clients", "1,2",
                         "--duration-s", "2", "--out", str(out)])
            printed = capsys.readouterr()
            assert code == 0, printed.err
            assert server.password not in printed.out + printed.err
            database = catalog_database_from_json(out.read_text())
            assert "PostgreSQL" in database.source and transaction in database.source
            _plausible(database)
        import psycopg

        with psycopg.connect(server.dsn) as connection:
            left = connection.execute("SELECT table_name FROM information_schema.tables WHERE table_name LIKE %s",
                                      (PREFIX + "%",)).fetchall()
        assert left == []
