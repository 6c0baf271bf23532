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
