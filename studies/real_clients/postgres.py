"""A PostgreSQL server on 127.0.0.1 for one run, from Debian's packages (``apt-get install postgresql``).

The catalogs' other database: DuckLake's metadata (``--ducklake-catalog postgresql``) and Iceberg's JdbcCatalog
(``--iceberg-database postgresql``). A fresh cluster in a scratch directory, trust authentication on loopback only,
stopped and removed on exit. initdb refuses to run as root: as root it runs as the ``postgres`` user.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
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


class LoopbackPostgres:
    """``with LoopbackPostgres() as pg:`` a server on ``127.0.0.1:pg.port``, database ``postgres``, user ``postgres``."""

    def __init__(self):
        self.port = _free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="commit-sweeps-pg-"))
        self._as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    def _run(self, *command: str) -> None:
        answer = subprocess.run([*self._as_postgres, *command], capture_output=True, text=True)
        if answer.returncode != 0:
            tail = (answer.stderr or answer.stdout).strip().splitlines()[-1:] or [""]
            raise SetupError(f"postgresql: {Path(command[0]).name} exited {answer.returncode}: {tail[0]}")

    def __enter__(self) -> "LoopbackPostgres":
        if self._as_postgres:
            shutil.chown(self.dir, "postgres")
        data = str(self.dir / "data")
        self._run(_binary("initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8")
        # Loopback only; its socket in the scratch directory, not in /var/run/postgresql.
        self._run(_binary("pg_ctl"), "-D", data, "-w", "-l", str(self.dir / "log.txt"), "-o",
                  f"-c listen_addresses=127.0.0.1 -p {self.port} -c unix_socket_directories={self.dir}", "start")
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._run(_binary("pg_ctl"), "-D", str(self.dir / "data"), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    @property
    def libpq(self) -> str:
        """The connection string DuckDB's postgres extension takes."""
        return f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres"

    @property
    def jdbc_url(self) -> str:
        return f"jdbc:postgresql://127.0.0.1:{self.port}/postgres?user=postgres"
