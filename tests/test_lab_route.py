"""studies.real_clients.lab_route: a route through the lab's latency proxy, against a stand-in for toxiproxy's API
that records what it is asked (the real proxy runs in the store lab, which CI does not start)."""

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from studies.real_clients.errors import SetupError
from studies.real_clients.lab_route import LabRoute


class _Api(BaseHTTPRequestHandler):
    calls: list = []

    def _record(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        self.calls.append((self.command, self.path, body))
        self.send_response(201 if self.command == "POST" else 204)
        self.end_headers()

    do_POST = do_DELETE = _record

    def log_message(self, *args):
        pass


@pytest.fixture
def api():
    _Api.calls = []
    server = HTTPServer(("127.0.0.1", 0), _Api)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", _Api.calls
    server.shutdown()


def test_a_route_proxies_the_port_with_the_labs_delay_each_way_and_is_removed_on_exit(api):
    url, calls = api
    environ = {"STORE_LAB_TOXIPROXY": url, "STORE_LAB_DELAY_MS": "20", "STORE_LAB_JITTER_MS": "5"}
    with LabRoute(4321, environ) as port:
        assert port > 0
        (method, path, proxy), *toxics = calls
        assert (method, path) == ("POST", "/proxies")
        assert proxy["listen"] == f"127.0.0.1:{port}" and proxy["upstream"] == "127.0.0.1:4321"
        assert [(t[1], t[2]["stream"], t[2]["attributes"]) for t in toxics] == [
            (f"/proxies/{proxy['name']}/toxics", stream, {"latency": 20, "jitter": 5})
            for stream in ("upstream", "downstream")]
    assert calls[-1] == ("DELETE", f"/proxies/{proxy['name']}", None)


def test_a_route_without_a_delay_adds_no_toxic(api):
    url, calls = api
    with LabRoute(4321, {"STORE_LAB_TOXIPROXY": url}):
        assert [c[1] for c in calls] == ["/proxies"]


def test_a_route_needs_the_lab(api):
    with pytest.raises(SetupError, match="STORE_LAB_TOXIPROXY"):
        LabRoute(4321, {})
    with pytest.raises(SetupError, match="refused POST /proxies"):
        with LabRoute(4321, {"STORE_LAB_TOXIPROXY": "http://127.0.0.1:9"}):
            pass
