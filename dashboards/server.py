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
"""

from __future__ import annotations

import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable, Optional
from urllib.parse import parse_qsl, urlsplit

from dashboards.site import Site, render_site
from dashboards.snapshot import StoreError, read_store, store_signature

FILTER_NAMES = ("experiment", "provider", "mix", "tables")
MAX_QUERY_CHARS = 2000

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
            except (StoreError, OSError) as error:
                self._log(f"store check failed, still serving the last build: {error}")
        return self._site


def make_handler(state: DashboardState, quiet: bool = False):
    """The request handler class bound to ``state``."""

    class DashboardHandler(BaseHTTPRequestHandler):
        server_version = "commit-sweeps-dashboard"
        sys_version = ""

        def log_message(self, format, *args):  # noqa: A002 (the base class's name)
            if not quiet:
                sys.stderr.write(f"{self.address_string()} - {format % args}\n")

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


def make_server(store_uri: str, host: str = "127.0.0.1", port: int = 8080, refresh_s: float = 5.0,
                quiet: bool = False, log: Callable[[str], None] = print) -> ThreadingHTTPServer:
    """A ready (not yet serving) HTTP server for the store's dashboard; port 0 picks a free port.

    Raises:
        StoreError: the store cannot be read.
        OSError: the address cannot be bound.
    """
    state = DashboardState(store_uri, refresh_s=refresh_s, log=log)
    server = ThreadingHTTPServer((host, port), make_handler(state, quiet=quiet))
    server.daemon_threads = True
    server.dashboard_state = state
    return server
