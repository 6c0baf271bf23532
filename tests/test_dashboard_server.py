"""Serving is read-only and safe: only the site's files, 400 for bad queries, never a crash."""

import http.client
import os
import re
import subprocess
import sys
import threading
import time

import pytest

from dashboards.server import check_query, make_server, QueryError
from dashboards.snapshot import StoreError
from store_fixtures import contract_row, write_store_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def row(seed=1, **config_fields):
    config = {"provider": "s3", "num_tables": 10, "fast_append_ratio": 0.9, "inter_arrival_scale_ms": 100.0,
              **config_fields}
    return contract_row("exp4c", config, seed, {"success_rate": 1.0, "throughput_cps": 2.0, "vo_success_rate": 1.0})


@pytest.fixture()
def store(tmp_path):
    write_store_file(str(tmp_path), "exp4c", [row(provider="s3"), row(provider="gcp")])
    return tmp_path


@pytest.fixture()
def server(store):
    server = make_server(str(store), port=0, refresh_s=0, quiet=True, log=lambda message: None)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def request(server, method, target, body=None):
    # http.client sends the target exactly as given (no normalisation of ../).
    connection = http.client.HTTPConnection("127.0.0.1", server.server_address[1], timeout=10)
    connection.putrequest(method, target, skip_accept_encoding=True)
    if body is not None:
        connection.putheader("Content-Length", str(len(body)))
    connection.endheaders(body)
    response = connection.getresponse()
    payload = response.read()
    connection.close()
    return response, payload


def test_serves_the_page_and_its_files(server):
    response, body = request(server, "GET", "/")
    assert response.status == 200
    assert response.getheader("Content-Type") == "text/html; charset=utf-8"
    assert b'<script src="data.js">' in body
    assert "default-src 'none'" in response.getheader("Content-Security-Policy")
    for name, kind in (("main.js", "text/javascript"), ("charts.js", "text/javascript"), ("style.css", "text/css"),
                       ("data.js", "text/javascript"), ("index.html", "text/html")):
        response, body = request(server, "GET", "/" + name)
        assert response.status == 200 and response.getheader("Content-Type").startswith(kind), name
        assert body


@pytest.mark.parametrize("target", [
    "/../pyproject.toml", "/..%2f..%2fetc%2fpasswd", "/%2e%2e/%2e%2e/etc/passwd", "//etc/passwd",
    "/static/main.js", "/dashboards/static/main.js", "/./index.html", "/index.html/", "/data.js%00.png",
    "/C:%5cWindows", "/.git/config", "/exp4c/a.parquet", "/%2Findex.html", "/data.js/..",
])
def test_nothing_but_the_sites_files_is_served(server, target):
    response, body = request(server, "GET", target)
    assert response.status == 404, target
    assert b"root:" not in body and b"[project]" not in body


def test_only_reads_are_allowed(server, store):
    before = sorted(os.listdir(store / "exp4c"))
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        response, _ = request(server, method, "/index.html", body=b"x")
        assert response.status == 405, method
        assert response.getheader("Allow") == "GET, HEAD"
    response, body = request(server, "HEAD", "/")
    assert response.status == 200 and body == b""
    assert sorted(os.listdir(store / "exp4c")) == before


@pytest.mark.parametrize("query, message", [
    ("experiment=exp9", "experiment: 'exp9' is not in this store"),
    ("provider=s3,azure", "provider: 'azure' is not in this store"),
    ("mix=0.3", "mix: '0.3' is not in this store"),
    ("tables=abc", "tables: 'abc' is not in this store"),
    ("tables=", "tables: '' is not in this store"),
    ("colour=red", "colour: unknown parameter"),
    ("mix=0.9&mix=1", "mix: given twice"),
    ("experiment", "not a valid query string"),
    ("provider=%ff", "not a valid query string"),
    ("experiment=" + "x" * 3000, "too long"),
])
def test_bad_query_values_get_a_400_that_says_why(server, query, message):
    response, body = request(server, "GET", "/?" + query)
    assert response.status == 400
    assert message in body.decode()
    # The server is still fine afterwards.
    assert request(server, "GET", "/")[0].status == 200


def test_good_queries_are_served(server):
    for query in ("experiment=exp4c", "provider=s3,gcp&mix=0.9&tables=10", "experiment=exp4c&provider=gcp"):
        assert request(server, "GET", "/?" + query)[0].status == 200, query


def test_check_query_returns_the_chosen_values():
    filters = {"experiment": frozenset({"exp4c"}), "provider": frozenset({"s3", "gcp"}), "mix": frozenset(),
               "tables": frozenset({"1"})}
    assert check_query("experiment=exp4c&provider=s3,gcp", filters) == {"experiment": ["exp4c"],
                                                                        "provider": ["s3", "gcp"]}
    assert check_query("", filters) == {}
    with pytest.raises(QueryError, match="none \\(the store is empty\\)"):
        check_query("mix=1", filters)


def test_health_check(server):
    response, body = request(server, "GET", "/healthz")
    assert response.status == 200 and body == b"ok\n"


def test_the_site_is_rebuilt_when_the_store_changes(server, store):
    _, before = request(server, "GET", "/data.js")
    assert b'"rows":2' in before
    time.sleep(0.01)
    write_store_file(str(store), "exp4c", [row(provider="s3x")])
    _, after = request(server, "GET", "/data.js")
    assert b'"rows":3' in after
    assert request(server, "GET", "/?provider=s3x")[0].status == 200


def test_a_damaged_file_is_quarantined_on_rebuild_and_logged_once(store):
    messages = []
    server = make_server(str(store), port=0, refresh_s=0, quiet=True, log=messages.append)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        path = write_store_file(str(store), "exp4c", [row(provider="s3x")])
        data = open(path, "rb").read()
        with open(path, "wb") as out:
            out.write(data[: len(data) // 2])
        _, page = request(server, "GET", "/data.js")
        assert b'"rows":2' in page and b"QUARANTINED" in page  # good rows kept, the file named
        request(server, "GET", "/data.js")
        warned = [m for m in messages if m.startswith("warning:")]
        assert len(warned) == 1 and "moved to" in warned[0] and not os.path.exists(path)
    finally:
        server.shutdown()
        server.server_close()


def test_a_missing_store_refuses_to_start(tmp_path):
    with pytest.raises(StoreError):
        make_server(str(tmp_path / "missing"), port=0)


def test_serve_command_listens_on_loopback_and_stops_cleanly(store):
    process = subprocess.Popen([sys.executable, "-m", "dashboards", "serve", "--store", str(store), "--port", "0",
                                "--quiet"], cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        match = re.search(r"at http://127\.0\.0\.1:(\d+)/", line)
        assert match, line + process.stderr.read()
        connection = http.client.HTTPConnection("127.0.0.1", int(match.group(1)), timeout=10)
        connection.request("GET", "/")
        assert connection.getresponse().status == 200
        connection.close()
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_serve_command_reports_an_unreadable_store_without_a_traceback(tmp_path):
    result = subprocess.run([sys.executable, "-m", "dashboards", "serve", "--store", str(tmp_path / "missing"),
                             "--port", "0"], cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT},
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr and "no such directory" in result.stderr


# -- hardening: timeouts, a bounded pool, escaped logs, Host allow-list ------------------------------

import socket as _socket

from dashboards import server as server_module


def raw(server, data: bytes, timeout: float = 5.0) -> bytes:
    with _socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=timeout) as s:
        s.sendall(data)
        chunks = []
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                chunks.append(chunk)
        except _socket.timeout:
            pass
        return b"".join(chunks)


def test_a_foreign_host_header_is_refused_on_loopback(server):
    answer = raw(server, b"GET / HTTP/1.1\r\nHost: evil.example:8080\r\nConnection: close\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 421") and b"127.0.0.1" in answer
    for host in (b"127.0.0.1:8080", b"localhost", b"[::1]:1"):
        answer = raw(server, b"GET /healthz HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 200"), host


def test_allowed_hosts_add_names_and_a_public_bind_answers_any(store):
    assert server_module.default_allowed_hosts("0.0.0.0") is None
    assert "dash.internal" in server_module.default_allowed_hosts("127.0.0.1", ["Dash.Internal:8080"])
    assert server_module.default_allowed_hosts("0.0.0.0", ["dash.internal"]) == frozenset({"dash.internal"})


@pytest.fixture()
def tight_server(store, monkeypatch):
    monkeypatch.setattr(server_module, "IDLE_TIMEOUT_S", 0.5)
    monkeypatch.setattr(server_module, "REQUEST_TIMEOUT_S", 1.5)
    messages = []
    server = make_server(str(store), port=0, refresh_s=0, quiet=True, log=messages.append, max_connections=8,
                         max_workers=4)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_idle_connections_are_closed(tight_server):
    with _socket.create_connection(("127.0.0.1", tight_server.server_address[1]), timeout=5) as s:
        started = time.monotonic()
        assert s.recv(1) == b""  # the server hung up on a silent client
        assert time.monotonic() - started < 3


def test_a_trickling_client_is_cut_off_at_the_request_timeout(tight_server):
    with _socket.create_connection(("127.0.0.1", tight_server.server_address[1]), timeout=5) as s:
        started = time.monotonic()
        closed = False
        for byte in b"GET / HTTP/1.1\r\nX-Slow: " + b"a" * 100:  # one byte per 0.2 s: never idle for long
            try:
                s.sendall(bytes([byte]))
            except OSError:
                closed = True
                break
            time.sleep(0.2)
            if time.monotonic() - started > 4:
                break
        if not closed:
            s.settimeout(2)
            closed = s.recv(1) == b""
    assert closed and time.monotonic() - started < 4


def test_connections_beyond_the_pool_get_503_and_no_thread(tight_server):
    threads_before = threading.active_count()
    idle = [_socket.create_connection(("127.0.0.1", tight_server.server_address[1])) for _ in range(20)]
    try:
        time.sleep(0.2)
        answer = raw(tight_server, b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n", timeout=2)
        assert answer.startswith(b"HTTP/1.1 503")
        assert threading.active_count() - threads_before <= 4  # the pool's threads, none per connection
    finally:
        for s in idle:
            s.close()
    time.sleep(2.0)  # the idle ones time out; the pool serves again
    assert raw(tight_server, b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
               timeout=2).startswith(b"HTTP/1.1 200")


def test_backlog_is_large():
    assert server_module.BoundedHTTPServer.request_queue_size >= 128


def test_request_lines_are_logged_with_control_characters_escaped(store):
    process = subprocess.Popen([sys.executable, "-m", "dashboards", "serve", "--store", str(store), "--port", "0"],
                               cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = int(re.search(r":(\d+)/", process.stdout.readline()).group(1))
        with _socket.create_connection(("127.0.0.1", port), timeout=5) as s:
            s.sendall(b"GET /\x1b[31mred\x07 HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            s.recv(65536)
        # A client that hangs up before reading its (large) answer.
        for _ in range(5):
            with _socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                s.setsockopt(_socket.SOL_SOCKET, _socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                s.sendall(b"GET /data.js HTTP/1.1\r\nHost: localhost\r\n\r\n")
        time.sleep(0.5)
    finally:
        process.terminate()
        _, err = process.communicate(timeout=10)
    assert "\\x1b[31mred\\x07" in err and "\x1b" not in err and "\x07" not in err
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_idle_and_half_sent_connections_do_not_hold_up_a_request(server):
    # More than the old thread pool's 32 workers, each holding a socket that never finishes a request:
    # the page is still answered (the server's idle timeout, 15 s, is far beyond the client's 5 s).
    openings = (b"", b"GET / HT", b"GET / HTTP/1.1\r\nHost: localhost\r\n")
    idle = [_socket.create_connection(("127.0.0.1", server.server_address[1])) for _ in range(45)]
    try:
        for number, connection in enumerate(idle):
            if openings[number % 3]:
                connection.sendall(openings[number % 3])
        time.sleep(0.2)
        answer = raw(server, b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n", timeout=5)
        assert answer.startswith(b"HTTP/1.1 200")
    finally:
        for connection in idle:
            connection.close()


@pytest.mark.parametrize("request_bytes, status", [
    (b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n", b"414"),
    (b"GET / HTTP/1.1\r\nX-Big: " + b"a" * 70000 + b"\r\n\r\n", b"431"),
    (b"GET / HTTP/1.1\r\n" + b"".join(b"X-%d: 1\r\n" % n for n in range(150)) + b"\r\n", b"431"),
    (b"GET /\r\n\r\n", b"400"),
    (b"GET / HTTP/2.0\r\n\r\n", b"505"),
    (b"GET / HTTP/1.1\r\nno colon here\r\n\r\n", b"400"),
    (b"GET / HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n\r\n", b"400"),
])
def test_malformed_or_oversized_requests_are_refused_and_closed(server, request_bytes, status):
    answer = raw(server, request_bytes)
    assert answer.startswith(b"HTTP/1.1 " + status), answer[:80]
    assert b"Connection: close" in answer.split(b"\r\n\r\n")[0]
    assert request(server, "GET", "/")[0].status == 200


def test_keep_alive_answers_pipelined_requests_and_http_1_0_closes(server):
    two = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\nGET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
    with _socket.create_connection(("127.0.0.1", server.server_address[1]), timeout=5) as s:
        s.sendall(two)
        received = b""
        while received.count(b"ok\n") < 2:
            received += s.recv(65536)
    assert received.count(b"HTTP/1.1 200") == 2
    # HTTP/1.0 without keep-alive: one answer, then the server closes (raw() reads to the end).
    answer = raw(server, b"GET /healthz HTTP/1.0\r\nHost: localhost\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"ok\n")
    # HEAD: the GET's headers (its length too), no body.
    answer = raw(server, b"HEAD /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    assert b"Content-Length: 3" in answer and answer.endswith(b"\r\n\r\n")


# -- the serve command's own mistakes: one line, exit 2, before the store is read --------------------

from commit_sweeps import dashboard_command as dashboard_cli


def test_serve_on_a_busy_port_says_so_in_one_line(store):
    with _socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "commit_sweeps", "dashboard", "serve", "--store", str(store),
                                 "--port", str(port)], cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT},
                                capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert result.stderr == f"error: --port: {port} on 127.0.0.1 is in use; pick another with --port " \
                            f"(0 picks a free one)\n"


@pytest.mark.parametrize("host, message", [
    ("nohost.invalid", "--host: 'nohost.invalid' does not resolve to an address"),
    ("192.0.2.1", "--host: '192.0.2.1' is not an address of this machine"),  # TEST-NET-1: never local
])
def test_serve_on_a_host_it_cannot_listen_on_says_so_in_one_line(store, capsys, host, message):
    assert dashboard_cli.main(["serve", "--store", str(store), "--host", host, "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: " + message) and err.count("\n") == 1


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-2", "-0.5"])
def test_serve_refuses_a_refresh_interval_that_is_not_seconds(tmp_path, capsys, value):
    # The store does not exist: the flag is refused before anything is read.
    assert dashboard_cli.main(["serve", "--store", str(tmp_path / "missing"), "--port", "0",
                               f"--refresh-s={value}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: --refresh-s: {float(value)} is not allowed; expected a number of seconds >= 0")
    assert "-1 for never" in err and err.count("\n") == 1


def test_an_unreadable_store_leaves_the_port_free(tmp_path):
    with _socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(StoreError):
        make_server(str(tmp_path / "missing"), port=port)
    # The port was bound before the store was read, and is closed again: it can be bound once more.
    make_server(str(tmp_path), port=port, quiet=True, log=lambda message: None).server_close()
