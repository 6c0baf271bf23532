"""Serve the dashboard: read-only, only the site's own files, rebuilt when the store changes.

The site is built in memory and requests are answered from a dict of its
file names, so no request path ever reaches the filesystem: ``..``,
encoded slashes or absolute paths simply name no file (404). Only GET and
HEAD exist (anything else is 405). The page's filters travel in the query
string (``?experiment=exp4c&provider=s3,gcp&mix=0.9&tables=1,10``); a query
naming an unknown filter or a value the store does not hold is answered 400
with the allowed values, never with a crash.

At most every ``refresh_s`` seconds, a request for the page checks the
store's file listing; if it changed, the site is rebuilt (a failed rebuild
keeps the last good site and is logged).

Hostile or careless clients cannot wear the server down: a connection idle
for ``IDLE_TIMEOUT_S`` is closed, and so is one whose request (headers and
answer) takes longer than ``REQUEST_TIMEOUT_S`` (a client trickling bytes);
at most ``MAX_WORKERS`` connections are served at once, ``MAX_QUEUED`` more
wait for a worker, and the next ones get a 503 at once rather than a
thread each; the listen backlog is
``LISTEN_BACKLOG``; request lines are logged with control characters
escaped; a client that hangs up mid-answer is not a traceback. Bound to a
loopback address (the default), the server answers only requests whose
``Host`` names a loopback address (or a name given with ``allowed_hosts``),
so a web page cannot reach it by DNS rebinding.
"""

from __future__ import annotations

import ipaddress
import socket
import socketserver
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Callable, Iterable, Optional
from urllib.parse import parse_qsl, urlsplit

from dashboards.registry import FILTER_NAMES
from dashboards.site import Site, render_site
from dashboards.snapshot import StoreError, read_store, store_signature

MAX_QUERY_CHARS = 2000

IDLE_TIMEOUT_S = 15.0  # a kept-alive or silent connection is closed after this long without a byte
REQUEST_TIMEOUT_S = 30.0  # the most one request may take, from its first byte to the end of the answer
MAX_WORKERS = 32  # connections served at once ...
MAX_QUEUED = 256  # ... and waiting for a worker; more get a 503 straight away
LISTEN_BACKLOG = 256  # connections the kernel queues before accept (the stdlib's 5 made p99 1 s at 50)
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]", "::1")

# Bytes below 0x20 and DEL, as \xNN: a client's request line must not write terminal escapes to the log.
_CONTROL_CHARACTERS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F)}


def escape_for_log(text: str) -> str:
    return text.translate(_CONTROL_CHARACTERS)


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(header: Optional[str]) -> str:
    """The name part of a Host header, lower-cased, without the port ("[::1]:80" -> "[::1]")."""
    value = (header or "").strip().lower()
    if value.startswith("["):
        return value[: value.find("]") + 1] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
}

# Everything the page needs is its own files; forbid the rest.
SECURITY_HEADERS = {
    "Content-Security-Policy": ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                                "img-src 'self' data:; base-uri 'none'; form-action 'none'; "
                                "frame-ancestors 'none'"),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


class QueryError(ValueError):
    """A bad query string; the message names the parameter, the value and what is allowed."""


def check_query(query: str, filters) -> dict:
    """Parse and validate the page's filter query.

    Returns:
        filter name -> list of values.

    Raises:
        QueryError: unknown or repeated parameter, malformed encoding, or a
            value the site does not hold.
    """
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(f"query: {len(query)} characters is too long; at most {MAX_QUERY_CHARS}")
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query), errors="strict")
    except (ValueError, UnicodeDecodeError) as error:
        raise QueryError(f"query: {query!r} is not a valid query string ({error})") from None
    chosen: dict = {}
    for name, value in pairs:
        if name not in FILTER_NAMES:
            raise QueryError(f"{name}: unknown parameter; allowed: {', '.join(FILTER_NAMES)}")
        if name in chosen:
            raise QueryError(f"{name}: given twice; give one comma-separated list")
        values = value.split(",")
        allowed = filters.get(name, frozenset())
        for item in values:
            if item not in allowed:
                shown = ", ".join(sorted(allowed)[:40]) or "none (the store is empty)"
                raise QueryError(f"{name}: {item!r} is not in this store; allowed: {shown}")
        chosen[name] = values
    return chosen


class DashboardState:
    """The current site and when the store was last looked at. Thread-safe."""

    def __init__(self, store_uri: str, refresh_s: float = 5.0, log: Callable[[str], None] = print):
        self.store_uri = store_uri
        self.refresh_s = refresh_s
        self._log = log
        self._lock = threading.Lock()
        self._signature = store_signature(store_uri)
        self._site = render_site(read_store(store_uri))
        self._checked_at = time.monotonic()

    @property
    def site(self) -> Site:
        return self._site

    def refresh_if_changed(self) -> Site:
        """The site, rebuilt first if the store's files changed since the last look."""
        if self.refresh_s < 0 or time.monotonic() - self._checked_at < self.refresh_s:
            return self._site
        with self._lock:
            if time.monotonic() - self._checked_at < self.refresh_s:
                return self._site
            self._checked_at = time.monotonic()
            try:
                signature = store_signature(self.store_uri)
                if signature != self._signature:
                    self._site = render_site(read_store(self.store_uri))
                    self._signature = signature
                    self._log(f"store changed: rebuilt the dashboard ({len(signature)} data files, "
                              f"{self._site.build_s:.2f} s)")
                    for item in self._site.payload["store"]["skipped_files"]:  # named once: then moved aside
                        where = f"; moved to {item['quarantined_to']}" if item.get("quarantined_to") else ""
                        self._log(f"warning: {item['path']}: {item['reason']}{where}")
            except (StoreError, OSError) as error:
                self._log(f"store check failed, still serving the last build: {error}")
        return self._site


def make_handler(state: DashboardState, quiet: bool = False, allowed_hosts: Optional[frozenset] = None):
    """The request handler class bound to ``state``.

    ``allowed_hosts``: Host header names answered (None: any).
    """

    class DashboardHandler(BaseHTTPRequestHandler):
        server_version = "commit-sweeps-dashboard"
        sys_version = ""
        protocol_version = "HTTP/1.1"  # keep-alive, bounded by the idle timeout
        timeout = IDLE_TIMEOUT_S  # every socket read and write

        def log_message(self, format, *args):  # noqa: A002 (the base class's name)
            if not quiet:
                sys.stderr.write(escape_for_log(f"{self.address_string()} - {format % args}") + "\n")

        def handle_one_request(self):
            # The socket timeout bounds each read; the server's watchdog bounds the whole
            # request, so a client sending a byte every few seconds cannot hold a worker forever.
            watchdog = getattr(self.server, "watchdog", None)
            if watchdog is not None:
                watchdog.arm(self.connection, REQUEST_TIMEOUT_S)
            try:
                super().handle_one_request()
            except (ConnectionError, TimeoutError, socket.timeout, OSError):
                self.close_connection = True  # the client left or was too slow: nothing to answer
            finally:
                if watchdog is not None:
                    watchdog.disarm(self.connection)

        def _host_allowed(self, head_only: bool) -> bool:
            if allowed_hosts is None or host_name(self.headers.get("Host")) in allowed_hosts:
                return True
            self._error(HTTPStatus.MISDIRECTED_REQUEST,
                        "this dashboard answers only requests addressed to " + ", ".join(sorted(allowed_hosts)),
                        head_only)
            return False

        def _send(self, status: int, body: bytes, content_type: str, head_only: bool,
                  extra: Optional[dict] = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in {**SECURITY_HEADERS, **(extra or {})}.items():
                self.send_header(name, value)
            self.end_headers()
            if not head_only:
                self.wfile.write(body)

        def _error(self, status: HTTPStatus, message: str, head_only: bool, extra: Optional[dict] = None):
            body = f"{status.value} {status.phrase}: {message}\n".encode("utf-8", "replace")
            self._send(status.value, body, "text/plain; charset=utf-8", head_only, extra)

        def _serve(self, head_only: bool) -> None:
            if not self._host_allowed(head_only):
                return
            try:
                parts = urlsplit(self.path)
            except ValueError:
                self._error(HTTPStatus.BAD_REQUEST, "malformed request target", head_only)
                return
            path = parts.path
            if path == "/healthz":
                self._send(200, b"ok\n", "text/plain; charset=utf-8", head_only)
                return
            name = "index.html" if path in ("/", "") else path[1:] if path.startswith("/") else None
            site = state.refresh_if_changed() if name in ("index.html", "data.js") else state.site
            if name is None or name not in site.files:
                self._error(HTTPStatus.NOT_FOUND, "no such file in the dashboard", head_only)
                return
            try:
                check_query(parts.query, site.filters)
            except QueryError as error:
                self._error(HTTPStatus.BAD_REQUEST, str(error), head_only)
                return
            suffix = name[name.rfind("."):]
            self._send(200, site.files[name], CONTENT_TYPES.get(suffix, "application/octet-stream"), head_only)

        def do_GET(self):  # noqa: N802 (the base class's naming)
            self._serve(head_only=False)

        def do_HEAD(self):  # noqa: N802
            self._serve(head_only=True)

        def _read_only(self):
            self._error(HTTPStatus.METHOD_NOT_ALLOWED, "the dashboard is read-only", False,
                        {"Allow": "GET, HEAD"})

        do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = do_TRACE = do_CONNECT = _read_only

    return DashboardHandler


class Watchdog:
    """One thread that hangs up connections whose request outlived its deadline."""

    def __init__(self, tick_s: float = 0.25):
        self._deadlines: dict = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._tick_s = tick_s
        self._thread = threading.Thread(target=self._run, name="dashboard-watchdog", daemon=True)
        self._thread.start()

    def arm(self, connection, timeout_s: float) -> None:
        with self._lock:
            self._deadlines[connection] = time.monotonic() + timeout_s

    def disarm(self, connection) -> None:
        with self._lock:
            self._deadlines.pop(connection, None)

    def stop(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self._tick_s):
            now = time.monotonic()
            with self._lock:
                late = [c for c, deadline in self._deadlines.items() if deadline <= now]
                for connection in late:
                    del self._deadlines[connection]
            for connection in late:
                try:
                    connection.shutdown(socket.SHUT_RDWR)  # the worker's next read or write fails
                except OSError:
                    pass


class BoundedHTTPServer(HTTPServer):
    """An HTTP server whose connections are served by a fixed pool of threads.

    The stdlib's ThreadingHTTPServer starts a thread per connection, without
    limit (1,500 idle sockets held 1,500 threads). Here connections wait
    for one of ``max_workers`` threads, ``max_queued`` at most; one beyond
    that is answered 503 by the accepting thread and closed. The pool's
    threads and one watchdog are the only threads ever started.
    """

    request_queue_size = LISTEN_BACKLOG
    allow_reuse_address = True

    def __init__(self, address, handler, max_workers: int = MAX_WORKERS, max_queued: int = MAX_QUEUED):
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, handler)
        self._slots = threading.BoundedSemaphore(max_workers + max_queued)
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="dashboard")
        self.watchdog = Watchdog()

    def process_request(self, request, client_address):
        if not self._slots.acquire(blocking=False):
            self._refuse_busy(request)
            return
        self._pool.submit(self._work, request, client_address)

    def _work(self, request, client_address):
        try:
            self.finish_request(request, client_address)
        except Exception:
            self.handle_error(request, client_address)
        finally:
            self.shutdown_request(request)
            self._slots.release()

    def _refuse_busy(self, request):
        body = b"503 Service Unavailable: the dashboard is serving as many connections as it allows; retry\n"
        try:
            request.settimeout(1.0)
            request.sendall(b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n"
                            b"Content-Type: text/plain; charset=utf-8\r\nContent-Length: "
                            + str(len(body)).encode() + b"\r\n\r\n" + body)
        except OSError:
            pass
        self.shutdown_request(request)

    def handle_error(self, request, client_address):
        # A client that hangs up (broken pipe, reset) is routine, not a traceback.
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError, socket.timeout)):
            return
        super().handle_error(request, client_address)

    def server_close(self):
        super().server_close()
        self.watchdog.stop()
        self._pool.shutdown(wait=False, cancel_futures=True)


def default_allowed_hosts(host: str, extra: Iterable[str] = ()) -> Optional[frozenset]:
    """Host header names to answer: bound to loopback, loopback names only (plus ``extra``); else any."""
    if not is_loopback(host) and not extra:
        return None
    names = set(LOOPBACK_NAMES) if is_loopback(host) else set()
    return frozenset(names | {host_name(name) for name in extra})


def make_server(store_uri: str, host: str = "127.0.0.1", port: int = 8080, refresh_s: float = 5.0,
                quiet: bool = False, log: Callable[[str], None] = print, allowed_hosts: Iterable[str] = (),
                max_workers: int = MAX_WORKERS, max_queued: int = MAX_QUEUED) -> BoundedHTTPServer:
    """A ready (not yet serving) HTTP server for the store's dashboard; port 0 picks a free port.

    Args:
        allowed_hosts: more Host names to answer (a loopback server answers loopback names only;
            one bound elsewhere answers any Host unless names are given here).
        max_workers: connections served at once.
        max_queued: connections waiting for a worker; more are answered 503.

    Raises:
        StoreError: the store cannot be read.
        OSError: the address cannot be bound.
    """
    state = DashboardState(store_uri, refresh_s=refresh_s, log=log)
    hosts = default_allowed_hosts(host, allowed_hosts)
    server = BoundedHTTPServer((host, port), make_handler(state, quiet=quiet, allowed_hosts=hosts),
                               max_workers=max_workers, max_queued=max_queued)
    server.dashboard_state = state
    return server
