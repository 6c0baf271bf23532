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

Hostile or careless clients cannot wear the server down. Connections are
coroutines on one asyncio event loop, not threads, so a socket that sends
nothing (or half a request) costs no worker and a normal request is
answered at once beside hundreds of them. A connection idle for
``IDLE_TIMEOUT_S`` is closed (before its first request or between
requests), and so is one whose headers take longer than that from their
first byte, or whose request (headers and answer) takes longer than
``REQUEST_TIMEOUT_S`` (a client trickling bytes); at most
``MAX_CONNECTIONS`` are open at once and the next ones get a 503 at once;
a request's line and headers together are at most ``MAX_HEAD_BYTES``
(longer: 414 or 431); answers are written in slices, so a client that does
not read holds one slice; the listen backlog is ``LISTEN_BACKLOG``; request
lines are logged with control characters escaped; a client that hangs up
mid-answer is not a traceback. Bound to a loopback address (the default),
the server answers only requests whose ``Host`` names a loopback address
(or a name given with ``allowed_hosts``), so a web page cannot reach it by
DNS rebinding.

Why our own loop rather than a kept ASGI server (measured, docs/design.md): uvicorn 0.54
never closed a connection that sent nothing or half a request (0 of 200 in 21 s; a client
trickling a byte a second was still open after 45 s); hypercorn 0.18 closed both but has no cap on
open connections (no 503) and answered 50 concurrent clients slower (p50 20 ms, p99 67 to 118 ms,
against 9 to 12 ms and 14 to 30 ms here). The protections above are this module's own either way.
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import socket
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from email.utils import formatdate
from http import HTTPStatus
from typing import Callable, Iterable, Optional
from urllib.parse import parse_qsl, urlsplit

from dashboards.registry import FILTER_NAMES
from dashboards.site import Site, render_site
from dashboards.snapshot import StoreError, read_store, store_signature
from simcore.redaction import redact

MAX_QUERY_CHARS = 2000

IDLE_TIMEOUT_S = 15.0  # a kept-alive or silent connection is closed after this long without a byte
REQUEST_TIMEOUT_S = 30.0  # the most one request may take, from its first byte to the end of the answer
MAX_CONNECTIONS = 288  # connections open at once; more get a 503 straight away
MAX_WORKERS = 4  # threads for what may block the event loop: looking at the store, rebuilding the site
MAX_HEAD_BYTES = 65536  # a request's line and headers together (the stdlib's limit for one line)
MAX_HEADERS = 100  # header lines in one request (the stdlib's limit)
WRITE_SLICE_BYTES = 65536  # an answer is written this much at a time, each waiting for the client to read
LISTEN_BACKLOG = 256  # connections the kernel queues before accept (the stdlib's 5 made p99 1 s at 50)
SERVER_NAME = "commit-sweeps-dashboard"
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

    def refresh_due(self) -> bool:
        """Whether the next request for the page should look at the store (cheap; no I/O)."""
        return self.refresh_s >= 0 and time.monotonic() - self._checked_at >= self.refresh_s

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
                self._log(f"store check failed, still serving the last build: {redact(str(error), self.store_uri)}")
        return self._site


def answer(site: Site, method: str, target: str, host_header: Optional[str],
           allowed_hosts: Optional[frozenset]) -> tuple:
    """What the dashboard answers to one request: (status, extra headers, body, content type).

    Pure apart from reading ``site``: routing, the Host check, the query check and the read-only
    rule live here, the sockets in :class:`BoundedHTTPServer`.
    """
    if method not in ("GET", "HEAD"):
        return _error(HTTPStatus.METHOD_NOT_ALLOWED, "the dashboard is read-only", {"Allow": "GET, HEAD"})
    if allowed_hosts is not None and host_name(host_header) not in allowed_hosts:
        return _error(HTTPStatus.MISDIRECTED_REQUEST,
                      "this dashboard answers only requests addressed to " + ", ".join(sorted(allowed_hosts)))
    try:
        parts = urlsplit(target)
    except ValueError:
        return _error(HTTPStatus.BAD_REQUEST, "malformed request target")
    path = parts.path
    if path == "/healthz":
        return 200, {}, b"ok\n", "text/plain; charset=utf-8"
    name = "index.html" if path in ("/", "") else path[1:] if path.startswith("/") else None
    if name is None or name not in site.files:
        return _error(HTTPStatus.NOT_FOUND, "no such file in the dashboard")
    try:
        check_query(parts.query, site.filters)
    except QueryError as error:
        return _error(HTTPStatus.BAD_REQUEST, str(error))
    suffix = name[name.rfind("."):]
    return 200, {}, site.files[name], CONTENT_TYPES.get(suffix, "application/octet-stream")


def page_name(target: str) -> Optional[str]:
    """The site file a request target names when it may need a fresh site (the page, its data)."""
    path = target.split("?", 1)[0]
    name = "index.html" if path in ("/", "") else path[1:]
    return name if name in ("index.html", "data.js") else None


def _error(status: HTTPStatus, message: str, extra: Optional[dict] = None) -> tuple:
    body = f"{status.value} {status.phrase}: {message}\n".encode("utf-8", "replace")
    return status.value, extra or {}, body, "text/plain; charset=utf-8"


class BadRequest(Exception):
    """A request the server cannot parse; answered with ``status`` and the connection closed."""

    def __init__(self, status: HTTPStatus, message: str):
        super().__init__(message)
        self.status = status


def parse_head(lines: list) -> tuple:
    """(method, target, version, headers) of a request's line and header lines (bytes, CRLF kept).

    Headers come back lower-cased by name; a repeated name keeps its last value.

    Raises:
        BadRequest: not ``METHOD TARGET HTTP/1.x`` (400, 505 for other versions), a header line
            without a colon, or two Host headers (400).
    """
    request_line = lines[0].decode("latin-1").rstrip("\r\n")
    words = request_line.split()
    if len(words) != 3 or not words[2].startswith("HTTP/"):
        raise BadRequest(HTTPStatus.BAD_REQUEST, f"bad request line {request_line!r}")
    method, target, version = words
    if version not in ("HTTP/1.0", "HTTP/1.1"):
        status = HTTPStatus.HTTP_VERSION_NOT_SUPPORTED if version[5:6].isdigit() and version[5:6] != "0" \
            else HTTPStatus.BAD_REQUEST
        raise BadRequest(status, f"{version!r}: this server speaks HTTP/1.0 and HTTP/1.1")
    headers = {}
    for raw_line in lines[1:]:
        line = raw_line.decode("latin-1").rstrip("\r\n")
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            raise BadRequest(HTTPStatus.BAD_REQUEST, f"bad header line {line[:80]!r}")
        if name.lower() == "host" and "host" in headers:  # which one would the Host check read?
            raise BadRequest(HTTPStatus.BAD_REQUEST, "more than one Host header")
        headers[name.lower()] = value.strip()
    return method, target, version, headers


def _response_head(status: int, content_type: str, length: int, extra: dict, close: bool) -> bytes:
    lines = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}", f"Server: {SERVER_NAME}",
             f"Date: {formatdate(usegmt=True)}", f"Content-Type: {content_type}", f"Content-Length: {length}",
             *(f"{name}: {value}" for name, value in {**SECURITY_HEADERS, **extra}.items())]
    if close:
        lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


_BUSY_BODY = b"503 Service Unavailable: the dashboard is serving as many connections as it allows; retry\n"
BUSY_ANSWER = (b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nConnection: close\r\n"
               b"Content-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s" % (len(_BUSY_BODY), _BUSY_BODY))


class _ClientGone(Exception):
    """The client hung up, went silent past a timeout, or took too long: close without an answer."""


class _Alarm:
    """Cancels a connection's task when its current time limit passes.

    One timer per connection, moved as the request goes on (idle, headers, answer): cheaper than a
    ``wait_for`` (a new task each) around every read and write.
    """

    def __init__(self, task: asyncio.Task):
        self._task = task
        self._loop = asyncio.get_running_loop()
        self._handle: Optional[asyncio.TimerHandle] = None

    def set(self, seconds: float) -> None:
        self.clear()
        self._handle = self._loop.call_later(max(0.0, seconds), self._task.cancel)

    def clear(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


class BoundedHTTPServer:
    """The dashboard's HTTP/1.1 server: one asyncio event loop, bounded in every dimension.

    A connection costs a coroutine and a socket, not a thread, so idle or half-sent connections
    cannot starve the ones that ask for the page: with the stdlib's thread-per-connection model
    (even with a fixed pool) 33 idle sockets made a GET wait 15 s and 200 made it time out; here
    a GET stays fast while ``max_connections`` are held open (benchmarks/idle_connections.py).
    Only work that may block (looking at the store and rebuilding the site) goes to a pool of
    ``max_workers`` threads. The interface is socketserver's: ``serve_forever``, ``shutdown``,
    ``server_close``, ``server_address``.
    """

    request_queue_size = LISTEN_BACKLOG

    def __init__(self, listener: socket.socket, state: DashboardState, quiet: bool = False,
                 allowed_hosts: Optional[frozenset] = None, max_connections: int = MAX_CONNECTIONS,
                 max_workers: int = MAX_WORKERS):
        self.socket = listener
        self.server_address = listener.getsockname()
        self.dashboard_state = state
        self._quiet = quiet
        self._allowed_hosts = allowed_hosts
        self._max_connections = max_connections
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="dashboard")
        self._open = 0
        self._tasks: set = set()
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._stop: Optional[asyncio.Event] = None
        self._stopped = threading.Event()
        self._shutdown_requested = False

    # -- socketserver's interface ------------------------------------------------------------

    def serve_forever(self, poll_interval: float = 0.5) -> None:  # noqa: ARG002 (kept for socketserver's callers)
        """Serve until :meth:`shutdown` (from another thread) or Ctrl-C."""
        self._stopped.clear()
        try:
            asyncio.run(self._serve())
        finally:
            self._loop = self._stop = None
            self._shutdown_requested = False
            self._stopped.set()

    def shutdown(self) -> None:
        """Stop serve_forever and wait for it (call from another thread)."""
        self._shutdown_requested = True  # a serve_forever not yet started returns at once
        loop, stop = self._loop, self._stop
        if loop is None or stop is None or self._stopped.is_set():
            return
        try:
            loop.call_soon_threadsafe(stop.set)
        except RuntimeError:  # the loop already closed
            return
        self._stopped.wait(timeout=10)

    def server_close(self) -> None:
        self.socket.close()
        self._pool.shutdown(wait=False, cancel_futures=True)

    # -- the event loop ----------------------------------------------------------------------

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        if self._shutdown_requested:
            return
        server = await asyncio.start_server(self._accept, sock=self.socket, limit=MAX_HEAD_BYTES,
                                            backlog=LISTEN_BACKLOG)  # start_server listens again: 100 by default
        try:
            await self._stop.wait()
        finally:
            server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        self._tasks.add(task)
        alarm = _Alarm(task)
        try:
            if self._open >= self._max_connections:
                await self._refuse_busy(reader, writer, alarm)
                return
            self._open += 1
            try:
                await self._converse(reader, writer, alarm)
            finally:
                self._open -= 1
        except (_ClientGone, ConnectionError, TimeoutError, asyncio.IncompleteReadError, OSError):
            pass  # the client left or misbehaved: nothing to answer
        except asyncio.CancelledError:
            pass  # its time ran out (the alarm) or the server is stopping; ending quietly also keeps
            # asyncio's stream callback from logging the cancellation as a traceback
        except Exception:  # noqa: BLE001 (a bug: say so, and keep serving the others)
            traceback.print_exc(file=sys.stderr)
        finally:
            alarm.clear()
            writer.transport.abort()  # no lingering: the socket is gone now, whatever the client does
            self._tasks.discard(task)

    @staticmethod
    async def _refuse_busy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, alarm: "_Alarm") -> None:
        alarm.set(1.5)
        writer.write(BUSY_ANSWER)
        await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
        # Let the client read the 503 before the socket closes (closing on unread input resets it).
        await reader.read(MAX_HEAD_BYTES)

    async def _converse(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, alarm: "_Alarm") -> None:
        """Answer requests on one connection until it closes, goes idle, runs out of time or misbehaves."""
        peer = writer.get_extra_info("peername") or ("-",)
        while True:
            alarm.set(IDLE_TIMEOUT_S)  # idle before a request: the alarm ends the connection
            first = await reader.read(1)
            if not first:
                return
            deadline = time.monotonic() + REQUEST_TIMEOUT_S  # from the first byte to the end of the answer
            alarm.set(min(IDLE_TIMEOUT_S, REQUEST_TIMEOUT_S))  # the headers, from their first byte
            lines: list = []
            try:
                lines = await self._head_lines(reader, first)
                method, target, version, headers = parse_head(lines)
            except BadRequest as error:
                alarm.set(deadline - time.monotonic())
                status, extra, body, content_type = _error(error.status, str(error))
                await self._write(writer, _response_head(status, content_type, len(body), extra, True) + body)
                self._log_request(peer, lines[0] if lines else b"", status, len(body))
                return
            alarm.set(deadline - time.monotonic())  # the rest of the request: its body, the answer
            close = self._wants_close(version, headers)
            if not await self._discard_body(reader, headers):
                close = True
            site = self.dashboard_state.site
            if method in ("GET", "HEAD") and page_name(target) and self.dashboard_state.refresh_due():
                site = await asyncio.get_running_loop().run_in_executor(self._pool,
                                                                        self.dashboard_state.refresh_if_changed)
            status, extra, body, content_type = answer(site, method, target, headers.get("host"),
                                                       self._allowed_hosts)
            head = _response_head(status, content_type, len(body), extra, close)
            await self._write(writer, head if method == "HEAD" else head + body)
            self._log_request(peer, lines[0], status, len(body))
            if close:
                return

    @staticmethod
    async def _head_lines(reader: asyncio.StreamReader, first: bytes) -> list:
        """Lines up to the blank one, bounded in size (``MAX_HEAD_BYTES``) and count (``MAX_HEADERS``)."""
        lines: list = []
        size = 0
        pending = first
        while True:
            try:
                line = pending + await reader.readuntil(b"\n")
            except asyncio.LimitOverrunError:
                line = None
            except asyncio.IncompleteReadError as error:
                raise _ClientGone("hung up mid-request") from error
            pending = b""
            if line is None or size + len(line) > MAX_HEAD_BYTES:
                if not lines:
                    raise BadRequest(HTTPStatus.REQUEST_URI_TOO_LONG,
                                     f"the request line is longer than {MAX_HEAD_BYTES} bytes")
                raise BadRequest(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE,
                                 f"the request's headers are longer than {MAX_HEAD_BYTES} bytes")
            size += len(line)
            if line in (b"\r\n", b"\n"):
                if not lines:
                    continue  # a stray blank line before a request (RFC 9112 lets servers skip it)
                return lines
            lines.append(line)
            if len(lines) > MAX_HEADERS + 1:
                raise BadRequest(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, f"more than {MAX_HEADERS} headers")

    @staticmethod
    def _wants_close(version: str, headers: dict) -> bool:
        options = {option.strip() for option in headers.get("connection", "").lower().split(",")}
        if version == "HTTP/1.0":
            return "keep-alive" not in options
        return "close" in options

    @staticmethod
    async def _discard_body(reader: asyncio.StreamReader, headers: dict) -> bool:
        """Read and drop a small request body (no request here takes one); False: close after answering."""
        if "transfer-encoding" in headers:
            return False
        length = headers.get("content-length", "0")
        if not length.isdigit() or int(length) > MAX_HEAD_BYTES:
            return False
        if int(length):
            await reader.readexactly(int(length))
        return True

    @staticmethod
    async def _write(writer: asyncio.StreamWriter, data: bytes) -> None:
        """Write in slices, so a client that does not read holds at most one slice in memory."""
        view = memoryview(data)
        for start in range(0, len(view), WRITE_SLICE_BYTES):
            if writer.transport.is_closing():
                raise _ClientGone("hung up mid-answer")
            writer.write(view[start:start + WRITE_SLICE_BYTES])
            if writer.transport.get_write_buffer_size():
                await writer.drain()  # the client reads slowly: wait for it (the alarm bounds the wait)

    def _log_request(self, peer: tuple, request_line: bytes, status: int, size: int) -> None:
        if not self._quiet:
            line = request_line.decode("latin-1").rstrip("\r\n")
            sys.stderr.write(escape_for_log(f'{peer[0]} - "{line}" {status} {size}') + "\n")


def default_allowed_hosts(host: str, extra: Iterable[str] = ()) -> Optional[frozenset]:
    """Host header names to answer: bound to loopback, loopback names only (plus ``extra``); else any."""
    if not is_loopback(host) and not extra:
        return None
    names = set(LOOPBACK_NAMES) if is_loopback(host) else set()
    return frozenset(names | {host_name(name) for name in extra})


def listen_error(host: str, port: int, error: OSError) -> str:
    """One line saying why ``host:port`` cannot be listened on, naming the flag to change."""
    # socket.create_server re-raises as a plain OSError with the address appended; the original
    # (a gaierror for a name that does not resolve) is its context.
    if isinstance(error.__context__, OSError):
        error = error.__context__
    if isinstance(error, socket.gaierror):
        return (f"--host: {host!r} does not resolve to an address ({error.strerror}); "
                f"give an address of this machine such as 127.0.0.1 or 0.0.0.0")
    if error.errno == errno.EADDRINUSE:
        return f"--port: {port} on {host} is in use; pick another with --port (0 picks a free one)"
    if error.errno == errno.EADDRNOTAVAIL:
        return f"--host: {host!r} is not an address of this machine; give one such as 127.0.0.1 or 0.0.0.0"
    if error.errno == errno.EACCES:
        return f"--port: {port} on {host} needs privileges this process lacks; pick one above 1023"
    return f"cannot listen on {host}:{port}: {error.strerror or error}"


def make_server(store_uri: str, host: str = "127.0.0.1", port: int = 8080, refresh_s: float = 5.0,
                quiet: bool = False, log: Callable[[str], None] = print, allowed_hosts: Iterable[str] = (),
                max_connections: int = MAX_CONNECTIONS, max_workers: int = MAX_WORKERS) -> BoundedHTTPServer:
    """A ready (not yet serving) HTTP server for the store's dashboard; port 0 picks a free port.

    Args:
        allowed_hosts: more Host names to answer (a loopback server answers loopback names only;
            one bound elsewhere answers any Host unless names are given here).
        max_connections: connections open at once; more are answered 503.
        max_workers: threads that look at the store and rebuild the site.

    Raises:
        StoreError: the store cannot be read.
        OSError: the address cannot be bound.
    """
    # Bound first: a busy port or a bad host fails at once, before the store is read.
    listener = socket.create_server((host, port), family=socket.AF_INET6 if ":" in host else socket.AF_INET,
                                    backlog=LISTEN_BACKLOG)
    try:
        state = DashboardState(store_uri, refresh_s=refresh_s, log=log)
    except BaseException:
        listener.close()
        raise
    return BoundedHTTPServer(listener, state, quiet=quiet, allowed_hosts=default_allowed_hosts(host, allowed_hosts),
                             max_connections=max_connections, max_workers=max_workers)
