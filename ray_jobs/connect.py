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

A cluster's address is checked before ``ray.init``, which retries an
address where no cluster answers for minutes, printing a warning every few
seconds: ``check_ray_address`` refuses what is no Ray address at all, and
``connect_ray`` first reaches the address itself, so a host that does not
resolve, a port where nothing listens and a server that is not Ray (or does
not answer) are each one ``ConfigError`` line within ``RAY_CONNECT_TIMEOUT_S``.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import os
import re
import signal
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Optional

import ray

from ray_jobs.orphans import cleanup_orphans, mark_session
from ray_jobs.orphans import describe as describe_orphans
from simcore.errors import ConfigError

# The embedded cluster only moves small result tables through its object store.
_LOCAL_OBJECT_STORE_BYTES = 256 * 1024 * 1024
_WORKER_NICENESS_ENV = "RAY_worker_niceness"
_OOM_RETRIES_ENV = "RAY_task_oom_retries"
OOM_RETRIES = 2
_TOKEN_SETUP_LOGGER = "ray._private.authentication.authentication_token_setup"

# How long a named cluster has to accept a connection and answer, before ray.init is called at all.
RAY_CONNECT_TIMEOUT_S = 10.0
RAY_CLIENT_PORT = 10001  # Ray Client's port, where a ray:// address names none
RAY_ADDRESS_ALLOWED = ("a Ray cluster's address: HOST:PORT (its GCS, e.g. 10.0.0.5:6379), ray://HOST[:PORT] "
                       "(Ray Client), auto or local")
_HOST_NAME = re.compile(r"(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
                        r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?")
# A gRPC server (the GCS, which a HOST:PORT address names) answers HTTP/2's connection preface with its SETTINGS.
_HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])  # + empty SETTINGS
_HTTP2_SETTINGS = 4


@dataclass(frozen=True)
class RayAddress:
    """Where a named cluster is: ``host`` and ``port``; ``client``: a ray:// (Ray Client) address."""

    host: str
    port: int
    client: bool


def check_ray_address(address: str, field: str = "ray_address") -> Optional[RayAddress]:
    """The host and port ``address`` names (None for ``auto``, which Ray resolves on this machine, and ``local``,
    a new cluster on it), or a ConfigError naming ``field`` (a flag, or ``RAY_ADDRESS``).

    >>> check_ray_address("ray://head:10001"), check_ray_address("10.0.0.5:6379").port, check_ray_address("auto")
    (RayAddress(host='head', port=10001, client=True), 6379, None)
    """
    text = address.strip() if isinstance(address, str) else address
    if text in ("auto", "local"):
        return None
    client = isinstance(text, str) and text.startswith("ray://")
    rest = text[len("ray://"):] if client else text
    if not isinstance(rest, str) or not rest.isascii() or not rest.isprintable():
        raise ConfigError(field, address, RAY_ADDRESS_ALLOWED)
    if rest.startswith("["):  # [IPv6]:port
        host, _, port_text = rest[1:].partition("]")
        port_text = port_text[1:] if port_text.startswith(":") else ("" if not port_text else "x")
        valid_host = _is_ip(host, 6)
    else:
        host, colon, port_text = rest.rpartition(":")
        if not colon:
            host, port_text = rest, ""
        valid_host = _HOST_NAME.fullmatch(host) is not None or _is_ip(host, 4)
    if not port_text and client:
        port_text = str(RAY_CLIENT_PORT)
    if not valid_host or not port_text.isdigit() or not 1 <= int(port_text) <= 65535:
        raise ConfigError(field, address, RAY_ADDRESS_ALLOWED)
    return RayAddress(host, int(port_text), client)


def _is_ip(text: str, version: int) -> bool:
    try:
        return ipaddress.ip_address(text).version == version
    except ValueError:
        return False


def reach_ray(address: str, field: str = "ray_address", timeout_s: Optional[float] = None) -> None:
    """Raise a ConfigError unless a server at ``address`` accepts a connection and, for a GCS address, answers
    as a gRPC server does, all within ``timeout_s`` (default ``RAY_CONNECT_TIMEOUT_S``). Ray's own connection
    attempts, which this saves the user from, retry for minutes."""
    where = check_ray_address(address, field)
    if where is None:
        return
    timeout_s = RAY_CONNECT_TIMEOUT_S if timeout_s is None else timeout_s
    deadline = time.monotonic() + timeout_s

    def refuse(why: str):
        return ConfigError(field, address, f"a Ray cluster that answers there within {timeout_s:g} s ({why})")

    try:
        with socket.create_connection((where.host, where.port), timeout=timeout_s) as connection:
            # Ray Client's server is gRPC too, but may sit behind a proxy that speaks first; TLS (RAY_USE_TLS)
            # would not answer a plain preface: only a plain GCS address is asked to answer.
            if where.client or os.environ.get("RAY_USE_TLS", "0").lower() in ("1", "true"):
                return
            connection.settimeout(max(deadline - time.monotonic(), 0.1))
            connection.sendall(_HTTP2_PREFACE)
            answer = connection.recv(9)
    except socket.gaierror:
        raise refuse(f"the host {where.host} is not known") from None
    except (socket.timeout, TimeoutError):
        raise refuse(f"no answer from {where.host}:{where.port}") from None
    except OSError as error:
        raise refuse(f"{where.host}:{where.port}: {error.strerror or error}") from None
    if len(answer) < 4 or answer[3] != _HTTP2_SETTINGS:
        raise refuse(f"the server at {where.host}:{where.port} does not answer as a Ray cluster's GCS")


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
        reach_ray(address, "RAY_ADDRESS")  # one line now, not minutes of ray.init's retries
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
