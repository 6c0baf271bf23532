"""Real servers for the probe's tests: moto's S3 server, MinIO when its build is cached, and an HTTP proxy.

- ``MotoServer``: moto's S3 server (the ``moto[server]`` test dependency), its writes atomic
  (``moto_atomic.py``), on a free loopback port; with ``auth=True`` it checks credentials
  (``INITIAL_NO_AUTH_ACTION_COUNT=0``), so unknown keys get 403.
- ``minio_binary``: the MinIO ``scripts/store-lab.sh`` builds, if it is in the cache (else None).
- ``special_file``: a device node, FIFO, socket or folder to point an ``--out`` at.
- ``Proxy``: a threaded HTTP/1.1 proxy on a free loopback port in front of a server, adding ``delay_ms`` each
  way. ``mode="strip"`` drops If-Match and If-None-Match (a gateway that ignores conditions);
  ``mode="check-then-write"`` answers a conditional PUT itself, as a gateway that emulates conditions would:
  a HEAD upstream to compare the ETag, a pause, then an unconditional PUT, with no lock (not atomic);
  ``mode="huge-get"`` answers every GET of an object with its headers and a body of ``HUGE_BODY_BYTES`` (5 GiB)
  of zeros, sent until the client hangs up (a hostile or broken store); ``mode="huge-get-unsized"`` the same
  without a Content-Length (the body ends when the connection closes).
"""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Optional

import boto3

KEYS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_EC2_METADATA_DISABLED": "true"}
MINIO_VERSION = "v0.0.0-20260212201848-7aac2a2c5b7c"  # as scripts/store-lab.sh pins it


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for(url: str, process: subprocess.Popen, what: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except urllib.error.HTTPError:
            return  # it answers
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{what} did not start (exit {process.poll()})")
            time.sleep(0.1)


class MotoServer:
    def __init__(self, auth: bool = False):
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, **({"INITIAL_NO_AUTH_ACTION_COUNT": "0"} if auth else {})}
        # moto.server, each write under one lock (moto_atomic.py): an atomic store, however loaded the machine.
        self.process = subprocess.Popen([sys.executable, str(Path(__file__).with_name("moto_atomic.py")),
                                         "-H", "127.0.0.1", "-p", str(self.port)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            _wait_for(f"{self.endpoint}/moto-api/", self.process, "moto's S3 server (tests/moto_atomic.py)")
        except Exception:
            self.stop()
            raise

    def client(self, endpoint: Optional[str] = None):
        return boto3.client("s3", endpoint_url=endpoint or self.endpoint, aws_access_key_id=KEYS["AWS_ACCESS_KEY_ID"],
                            aws_secret_access_key=KEYS["AWS_SECRET_ACCESS_KEY"], region_name="us-east-1")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def minio_binary() -> Optional[Path]:
    """The cached MinIO build (scripts/store-lab.sh's), or None when it has not been built on this machine."""
    tools = os.environ.get("SWEEPS_TOOLS_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "commit-sweeps", "tools")
    path = Path(tools) / f"minio-{MINIO_VERSION}" / "bin" / "minio"
    return path if os.access(path, os.X_OK) else None


class MinioServer:
    USER, PASSWORD = "probeadmin", "probeadmin-secret"

    def __init__(self, binary: Path, data_dir: Path):
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "MINIO_ROOT_USER": self.USER, "MINIO_ROOT_PASSWORD": self.PASSWORD,
               "MINIO_BROWSER": "off"}
        self.process = subprocess.Popen([str(binary), "server", str(data_dir), "--quiet", "--address",
                                         f"127.0.0.1:{self.port}", "--console-address", f"127.0.0.1:{free_port()}"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        _wait_for(f"{self.endpoint}/minio/health/live", self.process, "MinIO")

    def keys(self) -> dict:
        return {**KEYS, "AWS_ACCESS_KEY_ID": self.USER, "AWS_SECRET_ACCESS_KEY": self.PASSWORD}

    def client(self):
        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=self.USER,
                            aws_secret_access_key=self.PASSWORD, region_name="us-east-1")

    def stop(self) -> None:
        MotoServer.stop(self)


HUGE_BODY_BYTES = 5 * 2**30
_HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "expect", "proxy-connection", "upgrade", "te"}
_CONDITIONS = {"if-match", "if-none-match"}


class Proxy:
    """See the module docstring. ``requests`` counts what passed (``expects`` those with ``Expect:
    100-continue``); ``stop()`` closes it."""

    def __init__(self, upstream: str, delay_ms: float = 0.0, mode: str = "pass"):
        host, port = upstream.split("//", 1)[1].rsplit(":", 1)
        proxy = self
        self.requests = 0
        self.huge_gets = 0  # GETs answered with a huge body (mode="huge-get")
        self.expects = 0  # requests that carried Expect: 100-continue (a second round trip before the body)

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, and Expect: 100-continue answered here

            def log_message(self, *args):  # quiet
                pass

            def _forward(self):
                proxy.requests += 1
                proxy.expects += bool(self.headers.get("Expect"))
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
                conditional = {k: v for k, v in headers.items() if k.lower() in _CONDITIONS}
                time.sleep(delay_ms / 1000.0)
                if mode in ("strip", "check-then-write"):
                    headers = {k: v for k, v in headers.items() if k.lower() not in _CONDITIONS}
                status, reason, answer_headers, data = None, None, [], b""
                if mode == "check-then-write" and self.command == "PUT" and conditional:
                    status = self._check(headers, conditional)
                if status is None:
                    connection = http.client.HTTPConnection(host, int(port), timeout=30)
                    try:
                        connection.request(self.command, self.path, body=body, headers=headers)
                        answer = connection.getresponse()
                        status, reason, answer_headers, data = (answer.status, answer.reason, answer.getheaders(),
                                                                answer.read())
                    finally:
                        connection.close()
                time.sleep(delay_ms / 1000.0)
                if mode.startswith("huge-get") and self.command == "GET" and status == 200 and "/" in self.path.strip("/"):
                    return self._huge(answer_headers)
                self.send_response(status, reason)
                for key, value in answer_headers:
                    if key.lower() not in _HOP_BY_HOP and not (key.lower() == "content-length"
                                                               and self.command != "HEAD"):
                        self.send_header(key, value)
                if self.command != "HEAD":
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            def _huge(self, answer_headers):
                """The object's own headers, then zeros, as if it were HUGE_BODY_BYTES long."""
                proxy.huge_gets += 1
                self.send_response(200)
                for key, value in answer_headers:
                    if key.lower() not in _HOP_BY_HOP and key.lower() != "content-length":
                        self.send_header(key, value)
                if mode == "huge-get":
                    self.send_header("Content-Length", str(HUGE_BODY_BYTES))
                else:
                    self.send_header("Connection", "close")
                self.end_headers()
                chunk, sent = bytes(2**20), 0
                try:
                    while sent < HUGE_BODY_BYTES:
                        self.wfile.write(chunk)
                        sent += len(chunk)
                except OSError:  # the client hung up: what a bounded read does
                    pass
                self.close_connection = True

            def _check(self, headers, conditional):
                """A gateway's emulation of a condition: look, pause, then let the write through (or 412)."""
                connection = http.client.HTTPConnection(host, int(port), timeout=30)
                try:
                    connection.request("HEAD", self.path, headers={k: v for k, v in headers.items()
                                                                   if k.lower() in ("host", "authorization")})
                    answer = connection.getresponse()
                    answer.read()
                finally:
                    connection.close()
                etag = (answer.getheader("ETag") or "").strip('"')
                for key, value in conditional.items():
                    if key.lower() == "if-match" and (answer.status != 200 or value.strip('"') != etag):
                        return 412
                    if key.lower() == "if-none-match" and answer.status == 200:
                        return 412
                time.sleep(0.05)  # the gap a lock would close
                return None

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _forward

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def special_file(folder: Path, kind: str) -> str:
    """A path in ``folder`` of ``kind``: CHAR (a character device, /dev/full's twin: never the real one, which a
    probe that wrongly wrote there would replace), FIFO, SOCKET or DIR."""
    import stat

    import pytest

    path = folder / kind.lower()
    if kind == "CHAR":
        try:
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))
        except PermissionError:
            pytest.skip("making a device node needs root")
    elif kind == "FIFO":
        os.mkfifo(path)
    elif kind == "SOCKET":
        with socket.socket(socket.AF_UNIX) as unix:
            unix.bind(str(path))  # the socket file stays after the socket closes
    else:
        path.mkdir()
    return str(path)
