"""One writer at a time: a sweep's lease on the experiments it writes.

Two sweeps writing the same experiments of one store would both compute
everything (the store keeps one row per key, but the work is done twice).
So a sweep takes a lease on each experiment it writes before it reads what
is to do, and keeps it alive with a heartbeat while it runs:

    <store>/_lease/<experiment>.json   {owner, host, pid, acquired_at, heartbeat_at, ttl_s}

The policy (docs/guide/sweeps.md): a second sweep on an experiment whose lease is
alive refuses at once, before Ray starts, naming the holder (host, pid,
since when, last heartbeat) and when the lease lapses. A lease lapses when
its heartbeat is older than its ``ttl_s``, or at once when its holder ran on
this host and that process is gone (a driver killed with SIGKILL); the next
sweep then takes it over.

Every change to a lease is a compare-and-swap, as the catalog commits this
project simulates: creating one succeeds only if none exists, and renewing,
taking over or releasing one succeeds only if it is still the version this
driver last saw. On S3 that is a conditional PUT (``If-None-Match: *`` to
create, ``If-Match: <etag>`` to replace) and a conditional DELETE, sent to
the store's own endpoint with its own keys (``ray_jobs.s3_location``: the
settings in the store URI, as pyarrow reads them for the data); on a
local disk, the same checks made under an exclusive ``flock`` on a lock
file beside the lease. A driver whose heartbeat finds its lease changed by
someone else (it stalled past ``ttl_s`` and was taken over) stops writing:
the next flush raises ``LeaseLost``.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import socket
import threading
import time
import uuid
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Callable, Iterable, Optional

import psutil

from ray_jobs.s3_location import S3Location, s3_location
from ray_jobs.store import StoreError
from simcore.redaction import redact

LEASE_FOLDER = "_lease"
TTL_ENV = "SWEEPS_LEASE_TTL_S"
DEFAULT_TTL_S = 60.0


class LeaseHeld(StoreError):
    """Another live sweep holds the lease; the message names it."""


class LeaseLost(StoreError):
    """This sweep's lease was taken over (it stalled past its ttl); it must stop writing."""


class _Conflict(Exception):
    """A compare-and-swap found another version than expected."""


@dataclass(frozen=True)
class Holder:
    owner: str
    host: str
    pid: int
    pid_started: float
    acquired_at: float
    heartbeat_at: float
    ttl_s: float

    def lapsed(self, now: float) -> bool:
        if now - self.heartbeat_at > self.ttl_s:
            return True
        if self.host == socket.gethostname():  # a holder on this host: is its process still there?
            try:
                return abs(psutil.Process(self.pid).create_time() - self.pid_started) > 1.0
            except psutil.NoSuchProcess:
                return True
            except psutil.AccessDenied:
                return False
        return False

    def describe(self, now: float) -> str:
        since = datetime.fromtimestamp(self.acquired_at, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        lapses = self.heartbeat_at + self.ttl_s - now
        return (f"held by pid {self.pid} on {self.host} since {since}, last heartbeat {now - self.heartbeat_at:.0f} s "
                f"ago; it lapses {max(0.0, lapses):.0f} s after its last heartbeat if that sweep has stopped")


# -- backends: create-if-absent, read with a version token, replace-if-unchanged, delete-if-unchanged -----

class _LocalBackend:
    def __init__(self, directory: str):
        self.directory = directory

    def _paths(self, name: str) -> tuple[str, str]:
        return os.path.join(self.directory, name), os.path.join(self.directory, f".{name}.lock")

    def _locked(self, name: str):
        os.makedirs(self.directory, exist_ok=True)
        lock = open(self._paths(name)[1], "a")
        fcntl.flock(lock, fcntl.LOCK_EX)
        return lock

    def read(self, name: str) -> Optional[tuple[bytes, str]]:
        try:
            with open(self._paths(name)[0], "rb") as source:
                body = source.read()
        except FileNotFoundError:
            return None
        return body, hashlib.sha256(body).hexdigest()

    def write(self, name: str, body: bytes, expected: Optional[str]) -> str:
        """Write ``body`` if the current version is ``expected`` (None: if there is none)."""
        path = self._paths(name)[0]
        with self._locked(name):
            current = self.read(name)
            if (current[1] if current else None) != expected:
                raise _Conflict()
            temporary = f"{path}.{uuid.uuid4().hex}.partial"
            with open(temporary, "wb") as out:
                out.write(body)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, path)
        return hashlib.sha256(body).hexdigest()

    def delete(self, name: str, expected: str) -> None:
        with self._locked(name):
            current = self.read(name)
            if current is None or current[1] != expected:
                raise _Conflict()
            os.remove(self._paths(name)[0])


class _S3Backend:
    def __init__(self, store: S3Location, store_uri: str):
        import boto3  # only S3 stores need it
        from botocore.exceptions import BotoCoreError, ClientError

        self.store, self._store_uri = store, store_uri
        self._client_error, self._errors = ClientError, (ClientError, BotoCoreError)
        try:
            self.client = boto3.client("s3", **store.client_options())
        except BotoCoreError as error:  # a named profile that does not exist, a bad config file
            raise self._failed("open the leases", error) from None

    def _key(self, name: str) -> str:
        return self.store.key(f"{LEASE_FOLDER}/{name}")

    def _failed(self, what: str, error: Exception) -> StoreError:
        """A request that failed other than by a refused condition, as one line without the store's keys."""
        message = (str(error).splitlines() or [""])[0]
        return StoreError(f"cannot {what} in store {redact(self._store_uri, self._store_uri)}: "
                          f"{type(error).__name__}: {redact(message, self._store_uri)}")

    def _conflict(self, error) -> bool:
        code = error.response.get("Error", {}).get("Code", "")
        return code in ("PreconditionFailed", "ConditionalRequestConflict", "NoSuchKey", "412", "409", "404")

    def read(self, name: str) -> Optional[tuple[bytes, str]]:
        try:
            response = self.client.get_object(Bucket=self.store.bucket, Key=self._key(name))
            return response["Body"].read(), response["ETag"]
        except self._client_error as error:
            if error.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise self._failed(f"read the lease {self._key(name)}", error) from None
        except self._errors as error:
            raise self._failed(f"read the lease {self._key(name)}", error) from None

    def write(self, name: str, body: bytes, expected: Optional[str]) -> str:
        condition = {"IfNoneMatch": "*"} if expected is None else {"IfMatch": expected}
        try:
            response = self.client.put_object(Bucket=self.store.bucket, Key=self._key(name), Body=body, **condition)
        except self._client_error as error:
            if self._conflict(error):
                raise _Conflict() from None
            raise self._failed(f"write the lease {self._key(name)}", error) from None
        except self._errors as error:
            raise self._failed(f"write the lease {self._key(name)}", error) from None
        return response["ETag"]

    def delete(self, name: str, expected: str) -> None:
        try:
            self.client.delete_object(Bucket=self.store.bucket, Key=self._key(name), IfMatch=expected)
        except self._client_error as error:
            if self._conflict(error):
                raise _Conflict() from None
            raise self._failed(f"delete the lease {self._key(name)}", error) from None
        except self._errors as error:
            raise self._failed(f"delete the lease {self._key(name)}", error) from None


def _backend(store_uri: str):
    if store_uri.startswith("s3://"):
        return _S3Backend(s3_location(store_uri), store_uri)
    if "://" in store_uri and not store_uri.startswith("file://"):
        raise StoreError(f"store: {redact(store_uri, store_uri)!r}: leases work on local directories and s3:// stores")
    root = store_uri[len("file://"):] if store_uri.startswith("file://") else store_uri
    return _LocalBackend(os.path.join(os.path.abspath(root), LEASE_FOLDER))


def default_ttl_s() -> float:
    text = os.environ.get(TTL_ENV)
    try:
        ttl = float(text) if text else DEFAULT_TTL_S
    except ValueError:
        raise StoreError(f"{TTL_ENV}: {text!r} is not allowed; expected a number of seconds >= 1") from None
    if not ttl >= 1.0:
        raise StoreError(f"{TTL_ENV}: {text!r} is not allowed; expected a number of seconds >= 1")
    return ttl


class Lease:
    """A sweep's lease on some experiments of a store.

    Example (a sweep runs ``run_sweep(work, store, guard=lease.check)`` inside the block)::

        >>> import tempfile
        >>> store = tempfile.mkdtemp()
        >>> with Lease(store, ["exp4c"]) as lease:
        ...     Lease(store, ["exp4c"]).acquire()  # a second sweep of the same experiment
        Traceback (most recent call last):
        ...
        ray_jobs.lease.LeaseHeld: experiment 'exp4c' is being swept by another driver: ...
    """

    def __init__(self, store_uri: str, experiments: Iterable[str], ttl_s: Optional[float] = None,
                 clock: Callable[[], float] = time.time):
        self.experiments = sorted(set(experiments))  # always in one order: two sweeps cannot deadlock
        self.ttl_s = default_ttl_s() if ttl_s is None else float(ttl_s)
        self._backend = _backend(store_uri)
        self._clock = clock
        self._owner = uuid.uuid4().hex
        self._versions: dict[str, str] = {}
        self._lost: Optional[str] = None
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._acquired_at = 0.0

    def _body(self) -> bytes:
        me = psutil.Process()
        holder = Holder(owner=self._owner, host=socket.gethostname(), pid=me.pid, pid_started=me.create_time(),
                        acquired_at=self._acquired_at, heartbeat_at=self._clock(), ttl_s=self.ttl_s)
        return json.dumps(asdict(holder), indent=1).encode()

    def acquire(self) -> None:
        """Take every experiment's lease, or none: raises LeaseHeld naming the live holder."""
        self._acquired_at = self._clock()
        try:
            for experiment in self.experiments:
                self._take(f"{experiment}.json", experiment)
        except BaseException:
            self.release()
            raise
        self._thread = threading.Thread(target=self._heartbeat, name="sweep-lease", daemon=True)
        self._thread.start()

    def _take(self, name: str, experiment: str) -> None:
        for _ in range(5):  # lost races against another taker are retried a few times
            current = self._backend.read(name)
            try:
                if current is None:
                    self._versions[name] = self._backend.write(name, self._body(), None)
                    return
                holder = _parse(current[0])
                now = self._clock()
                if holder is not None and not holder.lapsed(now):
                    raise LeaseHeld(f"experiment {experiment!r} is being swept by another driver: "
                                    f"{holder.describe(now)}. Wait for it to finish, or sweep other experiments "
                                    f"(one writer per experiment; see docs/guide/sweeps.md)")
                self._versions[name] = self._backend.write(name, self._body(), current[1])  # take over
                return
            except _Conflict:
                continue
        raise LeaseHeld(f"experiment {experiment!r}: its lease kept changing under this driver; another sweep "
                        f"is starting on it")

    def renew(self) -> None:
        """Heartbeat: rewrite each lease if it is still ours; LeaseLost otherwise."""
        for name, version in list(self._versions.items()):
            try:
                self._versions[name] = self._backend.write(name, self._body(), version)
            except _Conflict:
                self._lost = (f"the lease on {name[:-len('.json')]!r} was taken over by another sweep (this one "
                              f"went {self.ttl_s:g} s without a heartbeat); stopped writing")
                raise LeaseLost(self._lost) from None

    def check(self) -> None:
        """Raise LeaseLost if the heartbeat found the lease taken over (call before every write)."""
        if self._lost:
            raise LeaseLost(self._lost)

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.ttl_s / 3):
            try:
                self.renew()
            except LeaseLost:
                return
            except Exception:  # a passing store error: try again next beat, the ttl allows two misses
                continue

    def release(self) -> None:
        """Give the leases back (only those still ours)."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=10)
        for name, version in list(self._versions.items()):
            try:
                self._backend.delete(name, version)
            except Exception:  # taken over, or the store is gone: nothing of ours to delete
                pass
            del self._versions[name]

    def __enter__(self) -> "Lease":
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def _parse(body: bytes) -> Optional[Holder]:
    try:
        return Holder(**json.loads(body.decode()))
    except (ValueError, TypeError, UnicodeDecodeError):
        return None  # unreadable: treated as lapsed, and replaced by compare-and-swap
