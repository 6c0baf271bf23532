"""A PostgreSQL server on 127.0.0.1 for one run, from Debian's packages (``apt-get install postgresql``).

The catalogs' other database: DuckLake's metadata (``--ducklake-catalog postgresql``) and Iceberg's JdbcCatalog
(``--iceberg-database postgresql``). A fresh cluster in a scratch directory, trust authentication on loopback only,
stopped and removed on exit; or the store lab's server (``scripts/store-lab.sh up --postgres``, which starts it with
this module's ``start``), reached through the lab's latency proxy. initdb refuses to run as root: as root it runs as
the ``postgres`` user.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from studies.real_clients.errors import SetupError


def _binary(name: str) -> str:
    """Debian keeps initdb and pg_ctl in /usr/lib/postgresql/<major>/bin, off PATH."""
    found = shutil.which(name) or next(iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)), None)
    if not found:
        raise SetupError(f"postgresql: '{name}' is not installed; expected Debian's postgresql package "
                          "(apt-get install postgresql)")
    return found


def available() -> bool:
    """Whether this machine can start a PostgreSQL server (initdb and pg_ctl found)."""
    try:
        _binary("initdb"), _binary("pg_ctl")
        return True
    except SetupError:
        return False


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def libpq(port: int, dbname: str = "postgres") -> str:
    """The connection string DuckDB's postgres extension takes, for the server at 127.0.0.1:``port``."""
    return f"host=127.0.0.1 port={port} user=postgres dbname={dbname}"


def jdbc_url(port: int, dbname: str = "postgres") -> str:
    return f"jdbc:postgresql://127.0.0.1:{port}/{dbname}?user=postgres"


class LoopbackPostgres:
    """``with LoopbackPostgres() as pg:`` a server on ``127.0.0.1:pg.port``, database ``postgres``, user ``postgres``.

    ``directory`` and ``port`` given (the store lab's server, ``scripts/store-lab.sh up --postgres``): the cluster
    lives there and stays when stopped, for the lab to remove; by default a scratch directory removed on exit.
    """

    def __init__(self, directory: str | None = None, port: int | None = None):
        self.port = port or _free_port()
        self._scratch = directory is None
        self.dir = Path(tempfile.mkdtemp(prefix="commit-sweeps-pg-")) if directory is None else Path(directory)
        self._as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    def _run(self, *command: str) -> None:
        answer = subprocess.run([*self._as_postgres, *command], capture_output=True, text=True)
        if answer.returncode != 0:
            tail = (answer.stderr or answer.stdout).strip().splitlines()[-1:] or [""]
            raise SetupError(f"postgresql: {Path(command[0]).name} exited {answer.returncode}: {tail[0]}")

    def start(self) -> "LoopbackPostgres":
        self.dir.mkdir(parents=True, exist_ok=True)
        if self._as_postgres:
            shutil.chown(self.dir, "postgres")
        data = str(self.dir / "data")
        self._run(_binary("initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8")
        # Loopback only; its socket in the cluster's directory, not in /var/run/postgresql.
        self._run(_binary("pg_ctl"), "-D", data, "-w", "-l", str(self.dir / "log.txt"), "-o",
                  f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.dir}", "start")
        return self

    def stop(self) -> None:
        try:
            self._run(_binary("pg_ctl"), "-D", str(self.dir / "data"), "-m", "fast", "-w", "stop")
        finally:
            if self._scratch:
                shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> "LoopbackPostgres":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def libpq(self) -> str:
        return libpq(self.port)

    @property
    def jdbc_url(self) -> str:
        return jdbc_url(self.port)


@dataclass(frozen=True)
class LabPostgres:
    """The store lab's server (``scripts/store-lab.sh up --postgres``): ``port`` through its latency proxy, as the
    writers reach it, and ``direct_port`` around it, where a commit timed alone is the database's own work."""

    port: int
    direct_port: int
    dbname: str = "postgres"

    @property
    def libpq(self) -> str:
        return libpq(self.port, self.dbname)

    @property
    def jdbc_url(self) -> str:
        return jdbc_url(self.port, self.dbname)

    @property
    def direct_libpq(self) -> str:
        return libpq(self.direct_port, self.dbname)

    @property
    def direct_jdbc_url(self) -> str:
        return jdbc_url(self.direct_port, self.dbname)

    def new_database(self, name: str) -> "LabPostgres":
        """A database of the run's own on the lab's server, which outlives runs: a run's catalog starts empty."""
        try:
            import psycopg
        except ImportError:
            raise SetupError("postgresql: psycopg is not installed; expected pip install 'commit-sweeps[realclients]'") \
                from None
        with psycopg.connect(libpq(self.direct_port), autocommit=True) as con:
            con.execute(f'CREATE DATABASE "{name}"')
        return LabPostgres(self.port, self.direct_port, name)


def lab_postgres(environ=os.environ) -> LabPostgres | None:
    """The lab's server from ``eval "$(scripts/store-lab.sh env)"`` (STORE_LAB_PG_PORT, STORE_LAB_PG_DIRECT_PORT);
    None when the lab runs none."""
    port, direct = environ.get("STORE_LAB_PG_PORT"), environ.get("STORE_LAB_PG_DIRECT_PORT")
    return LabPostgres(int(port), int(direct)) if port and direct else None


def main(argv: list[str] | None = None) -> int:
    """``python -m studies.real_clients.postgres start|stop DIR [PORT]``: the store lab's server, kept in DIR."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m studies.real_clients.postgres")
    parser.add_argument("action", choices=("start", "stop"))
    parser.add_argument("directory")
    parser.add_argument("port", type=int, nargs="?", default=None)
    args = parser.parse_args(argv)
    server = LoopbackPostgres(args.directory, args.port)
    try:
        if args.action == "start":
            server.start()
        else:
            server.stop()
    except SetupError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
