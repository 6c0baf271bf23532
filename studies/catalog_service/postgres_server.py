"""A private PostgreSQL server for the study and the tests: initdb into a temporary folder, 127.0.0.1 only.

    with private_server() as server:      # None when no initdb/pg_ctl is found (find_binaries)
        server.dsn                        # postgresql://probe:<password>@127.0.0.1:<port>/postgres

It listens on a free port of 127.0.0.1 and on no Unix socket, takes a password (scram-sha-256), and runs with
Debian's defaults otherwise (fsync and synchronous_commit on). PostgreSQL refuses to run as root, so as root
it runs as the ``postgres`` user that Debian's package makes (the temporary folder is given to it). It is
stopped (``pg_ctl stop -m fast``) and its folder removed when the block ends, however it ends.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Optional

RUN_AS = "postgres"
START_TIMEOUT_S = 60


@dataclass(frozen=True)
class Server:
    port: int
    password: str
    data_dir: Path
    version: str

    @property
    def dsn(self) -> str:
        return f"postgresql://probe:{self.password}@127.0.0.1:{self.port}/postgres"


def find_binaries() -> Optional[tuple[str, str]]:
    """(initdb, pg_ctl) from PATH, else from Debian's /usr/lib/postgresql/<version>/bin; None if neither."""
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if initdb and pg_ctl:
        return initdb, pg_ctl
    for folder in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if os.access(f"{folder}/initdb", os.X_OK) and os.access(f"{folder}/pg_ctl", os.X_OK):
            return f"{folder}/initdb", f"{folder}/pg_ctl"
    return None


def unavailable_reason() -> Optional[str]:
    """Why no private server can start here, or None."""
    if find_binaries() is None:
        return "no initdb/pg_ctl found (apt-get install postgresql)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(RUN_AS)
        except KeyError:
            return f"running as root and there is no {RUN_AS!r} user to run PostgreSQL as"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _run(command: list[str], user: Optional[str]) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=START_TIMEOUT_S, user=user,
                          cwd="/", check=False)


@contextlib.contextmanager
def private_server() -> Iterator[Server]:
    """A started server; stopped and removed afterwards. Raises RuntimeError (with the server's log) if it
    does not start."""
    reason = unavailable_reason()
    if reason:
        raise RuntimeError(reason)
    initdb, pg_ctl = find_binaries()
    user = RUN_AS if os.geteuid() == 0 else None
    folder = Path(tempfile.mkdtemp(prefix="commit-sweeps-pg-"))
    data, log = folder / "data", folder / "server.log"
    password = secrets.token_hex(12)
    started = False
    try:
        if user:
            entry = pwd.getpwnam(user)
            os.chown(folder, entry.pw_uid, entry.pw_gid)
        password_file = folder / "password"
        password_file.write_text(password + "\n")
        if user:
            os.chown(password_file, entry.pw_uid, entry.pw_gid)
        answer = _run([initdb, "-D", str(data), "-U", "probe", "--pwfile", str(password_file),
                       "--auth-host=scram-sha-256", "--auth-local=scram-sha-256", "-E", "UTF8", "--no-instructions"],
                      user)
        password_file.unlink()
        if answer.returncode != 0:
            raise RuntimeError(f"initdb failed: {answer.stderr.strip()[-500:]}")
        port = _free_port()
        with open(data / "postgresql.conf", "a") as conf:
            conf.write(f"\nlisten_addresses = '127.0.0.1'\nport = {port}\nunix_socket_directories = ''\n")
        answer = _run([pg_ctl, "-D", str(data), "-l", str(log), "-w", "-t", str(START_TIMEOUT_S), "start"], user)
        started = True
        if answer.returncode != 0:
            tail = log.read_text()[-800:] if log.exists() else answer.stderr
            raise RuntimeError(f"pg_ctl start failed: {tail.strip()}")
        version = _run([initdb, "--version"], user).stdout.strip()
        yield Server(port=port, password=password, data_dir=data, version=version)
    finally:
        if started:
            _run([pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop"], user)
        shutil.rmtree(folder, ignore_errors=True)
