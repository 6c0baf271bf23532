"""Clean up what a killed sweep driver left of its embedded Ray.

A driver that starts a local Ray owns its processes (GCS, raylet, agents,
workers). ``ray.shutdown`` stops them; a driver killed with SIGKILL cannot,
and some (``ray::DashboardAgent``, ``ray::RuntimeEnvAgent``, about 200 MB
together) outlive it, reparented to init and ignoring SIGTERM.

So a driver marks the Ray session it starts with a small owner file
(its pid and start time) in the session's folder. The next start, or
``python -m ray_jobs status --cleanup``, looks at every marked session:
when its owner is gone, the processes still holding files in that session's
folder are stopped (SIGTERM, then SIGKILL after a grace period). Sessions
without the mark (someone else's Ray, a cluster started with ``ray
start``) and processes of other users are never touched.
"""

from __future__ import annotations

import glob
import json
import os
import tempfile
from dataclasses import dataclass
from typing import Optional

import psutil

OWNER_FILE = "commit-sweeps-owner.json"
GRACE_S = 3.0


@dataclass(frozen=True)
class Stopped:
    """A process stopped because its session's owner was gone."""

    pid: int
    name: str
    session: str
    rss_bytes: int


def ray_temp_dir() -> str:
    """Where Ray puts its sessions (``$RAY_TMPDIR/ray``, else the system temp dir's ``ray``)."""
    return os.path.join(os.environ.get("RAY_TMPDIR") or tempfile.gettempdir(), "ray")


def mark_session(session_dir: str, pid: Optional[int] = None) -> None:
    """Record that process ``pid`` (default: this one) owns the Ray session in ``session_dir``."""
    pid = os.getpid() if pid is None else pid
    owner = {"pid": pid, "create_time": psutil.Process(pid).create_time()}
    temporary = os.path.join(session_dir, f".{OWNER_FILE}.{pid}")
    with open(temporary, "w") as out:
        json.dump(owner, out)
    os.replace(temporary, os.path.join(session_dir, OWNER_FILE))


def _owner_alive(owner: dict) -> bool:
    try:
        process = psutil.Process(int(owner["pid"]))
        # A recycled pid belongs to another process, started later.
        return abs(process.create_time() - float(owner["create_time"])) < 1.0
    except (psutil.NoSuchProcess, psutil.AccessDenied, KeyError, ValueError, TypeError):
        return False


def _session_processes(session_dir: str) -> list[psutil.Process]:
    """This user's processes holding a file in ``session_dir`` or naming it on their command line."""
    prefix = session_dir.rstrip("/") + "/"
    uid = os.getuid()
    found = []
    for process in psutil.process_iter(["pid", "uids", "cmdline"]):
        try:
            if process.info["uids"] is None or process.info["uids"].real != uid or process.pid == os.getpid():
                continue
            if any(prefix in part or part.endswith(session_dir) for part in process.info["cmdline"] or ()):
                found.append(process)
                continue
            if any(f.path.startswith(prefix) for f in process.open_files()):
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def stale_sessions(temp_dir: Optional[str] = None) -> list[str]:
    """Session folders marked by a driver that is no longer running."""
    stale = []
    for marker in sorted(glob.glob(os.path.join(temp_dir or ray_temp_dir(), "session_*", OWNER_FILE))):
        if os.path.islink(os.path.dirname(marker)):  # session_latest: a link to a session seen anyway
            continue
        try:
            with open(marker) as source:
                owner = json.load(source)
        except (OSError, ValueError):
            owner = {}
        if not _owner_alive(owner):
            stale.append(os.path.dirname(marker))
    return stale


def cleanup_orphans(temp_dir: Optional[str] = None, grace_s: float = GRACE_S) -> list[Stopped]:
    """Stop the processes of every marked session whose driver is gone; unmark it.

    Returns:
        The processes stopped (empty when there was nothing to clean).
    """
    stopped: list[Stopped] = []
    for session in stale_sessions(temp_dir):
        processes = _session_processes(session)
        for process in processes:
            try:
                stopped.append(Stopped(process.pid, process.name(), session, process.memory_info().rss))
                process.terminate()
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
        _, alive = psutil.wait_procs(processes, timeout=grace_s)
        for process in alive:  # Ray's agents ignore SIGTERM once their raylet is gone
            try:
                process.kill()
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                pass
        psutil.wait_procs(alive, timeout=grace_s)
        try:
            os.remove(os.path.join(session, OWNER_FILE))
        except OSError:
            pass
    return stopped


def describe(stopped: list[Stopped]) -> str:
    sessions = sorted({s.session for s in stopped})
    total = sum(s.rss_bytes for s in stopped) / 2**20
    names = ", ".join(sorted({s.name for s in stopped}))
    return (f"stopped {len(stopped)} processes ({names}; {total:.0f} MB) left by killed sweep drivers "
            f"in {len(sessions)} Ray session(s)")

