"""Connect the driver to Ray: the cluster in ``RAY_ADDRESS``, else an embedded one.

``ray job submit`` sets ``RAY_ADDRESS`` for the driver it starts; the job's
runtime environment (its uploaded working directory) then applies to every
task, so nothing is added here. Without it, a local Ray is started with one
worker slot per core of this machine. Its workers start in the driver's
current directory, which need not be the checkout, so the folder holding
``simcore`` and ``ray_jobs`` is put on their ``PYTHONPATH``: a sweep then
runs from a plain checkout without installing the package.

Ray starts its workers at niceness 15 by default, so that on a shared
machine they yield to everything else, even to processes niced below them.
An embedded sweep is the job its user started, so its workers run at the
driver's own niceness instead (``nice python sweeps/exp4c.py`` still lowers
it); ``RAY_worker_niceness`` in the environment overrides this.

A task killed for running out of memory is retried at most
``OOM_RETRIES`` times (Ray's default is forever, which turns one
oversized point into an endless loop); ``RAY_task_oom_retries`` in the
environment overrides this. Before starting a local Ray, the processes a
killed driver left behind are stopped, and the new session is marked as
this driver's (see ``ray_jobs.orphans``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional

import ray

from ray_jobs.orphans import cleanup_orphans, mark_session
from ray_jobs.orphans import describe as describe_orphans

# The embedded cluster only moves small result tables through its object store.
_LOCAL_OBJECT_STORE_BYTES = 256 * 1024 * 1024
_WORKER_NICENESS_ENV = "RAY_worker_niceness"
_OOM_RETRIES_ENV = "RAY_task_oom_retries"
OOM_RETRIES = 2
_TOKEN_SETUP_LOGGER = "ray._private.authentication.authentication_token_setup"


class _DropTokenEnabledNotice(logging.Filter):
    """Drops Ray's "Token authentication is enabled for this Ray cluster" notice.

    A new embedded cluster turns token authentication on by itself (good: the
    job API runs code) and says so at WARNING on every run, which tells a
    sweep's user nothing they can act on. Every other message of that logger,
    the warning that authentication is *disabled* included, still shows.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Token authentication is enabled")


def _quiet_token_notice() -> None:
    logger = logging.getLogger(_TOKEN_SETUP_LOGGER)
    if not any(isinstance(f, _DropTokenEnabledNotice) for f in logger.filters):
        logger.addFilter(_DropTokenEnabledNotice())


@dataclass(frozen=True)
class RayConnection:
    description: str  # for people: where the sweep runs
    started_local: bool
    cleaned: tuple = ()  # ray_jobs.orphans.Stopped: what a killed driver had left, stopped first


def connect_ray(num_cpus: int | None = None) -> RayConnection:
    """Connect to ``$RAY_ADDRESS`` or start local Ray with ``num_cpus`` (default: all cores)."""
    # Read by this driver's core worker, which owns (and so retries) the tasks it submits.
    os.environ.setdefault(_OOM_RETRIES_ENV, str(OOM_RETRIES))
    address = os.environ.get("RAY_ADDRESS")
    if address:
        ray.init(address=address, logging_level=logging.WARNING)
        cpus = int(ray.cluster_resources().get("CPU", 0))
        return RayConnection(f"Ray cluster at {address} ({cpus} CPUs now)", started_local=False)
    cleaned = tuple(cleanup_orphans())
    num_cpus = num_cpus or os.cpu_count() or 1
    _quiet_token_notice()
    code_root = str(Path(__file__).resolve().parent.parent)
    python_path = os.pathsep.join(p for p in (code_root, os.environ.get("PYTHONPATH")) if p)
    # The raylet reads its settings from RAY_<name> variables when it starts.
    niceness_was_set = _WORKER_NICENESS_ENV in os.environ
    os.environ.setdefault(_WORKER_NICENESS_ENV, str(os.nice(0)))
    try:
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, logging_level=logging.WARNING,
                 object_store_memory=_LOCAL_OBJECT_STORE_BYTES,
                 runtime_env={"env_vars": {"PYTHONPATH": python_path}})
    finally:
        if not niceness_was_set:
            del os.environ[_WORKER_NICENESS_ENV]
    mark_session(ray._private.worker._global_node.get_session_dir_path())
    return RayConnection(f"local Ray with {num_cpus} CPUs", started_local=True, cleaned=cleaned)


@dataclass(frozen=True)
class RaySession:
    """A connected driver: where it runs, and how long connecting took (0 when nothing was connected)."""

    connection: Optional[RayConnection]
    connect_s: float


def raise_keyboard_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextlib.contextmanager
def ray_session(max_parallel: Optional[int] = None, *, connect: bool = True,
                on_sigterm: Callable = raise_keyboard_interrupt,
                log: Callable[[str], None] = lambda line: print(line, flush=True)) -> Iterator[RaySession]:
    """Connect a driver to Ray for the length of a ``with`` block, and always leave cleanly.

    The one place that connects (the cluster in ``RAY_ADDRESS``, else an
    embedded Ray with ``max_parallel`` or every core), handles SIGTERM (what
    ``ray job stop`` and Kubernetes send; by default it becomes a
    KeyboardInterrupt, so the block stops as on Ctrl-C and keeps what it
    finished) and shuts Ray down and restores the signal handler on the way
    out. ``connect=False`` skips Ray altogether (nothing left to run).
    """
    previous_handler = signal.getsignal(signal.SIGTERM)
    connection, connect_s = None, 0.0
    try:
        if connect:
            started = time.perf_counter()
            cores = os.cpu_count() or 1
            connection = connect_ray(num_cpus=min(max_parallel or cores, cores))
            connect_s = time.perf_counter() - started
            if connection.cleaned:
                log(describe_orphans(list(connection.cleaned)))
            log(f"running on {connection.description} (connected in {connect_s:.1f} s)")
        # Installed after ray.init, which sets a SIGTERM handler of its own that just exits.
        signal.signal(signal.SIGTERM, on_sigterm)
        yield RaySession(connection, connect_s)
    finally:
        if previous_handler is not None:  # None: a handler set outside Python, left as it is
            signal.signal(signal.SIGTERM, previous_handler)
        if ray.is_initialized():
            ray.shutdown()
