"""studies/real_clients/request_trace.py without the lab: its proxy against a real HTTP server, and how it reads a
call."""

import http.client
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from studies.real_clients.request_trace import LoggingProxy, Request, call_summary, pair_answers, rounds


class _Store(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: several requests on one connection, as an SDK sends them

    def log_message(self, *args):
        pass

    def do_GET(self):
        self._answer(200 if self.path != "/missing" else 404)

    def do_PUT(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self._answer(412)

    def _answer(self, status):
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")


def test_the_proxy_records_each_request_and_its_answer_in_order_on_one_connection():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Store)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        proxy = LoggingProxy("127.0.0.1", server.server_address[1])
        connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=10)
        for method, path, body in (("GET", "/lab/_delta_log/_last_checkpoint", None), ("PUT", "/lab/_delta_log/1.json",
                                                                                        b"{}"), ("GET", "/missing", None)):
            connection.request(method, path, body=body)
            assert connection.getresponse().read() == b"ok"  # the bytes pass through unchanged
        connection.close()
        deadline = time.time() + 5
        while len(proxy.events) < 6 and time.time() < deadline:
            time.sleep(0.01)
        requests = pair_answers(list(proxy.events))
        assert [(r.method, r.path, r.status) for r in requests] == [
            ("GET", "/lab/_delta_log/_last_checkpoint", "200"), ("PUT", "/lab/_delta_log/1.json", "412"),
            ("GET", "/missing", "404")]
        assert all(r.answered >= r.sent for r in requests)
    finally:
        server.shutdown()


def _at(sent_ms, answered_ms, method, path, connection=1):
    return Request(sent_ms / 1000, connection, method, path, answered_ms / 1000, "200")


def test_a_call_is_read_as_its_load_its_rounds_of_entries_and_the_rest():
    log = "/lab/t/_delta_log/"
    call = [_at(0, 40, "GET", log + "_last_checkpoint"),
            _at(41, 80, "GET", "/lab?list-type=2&prefix=t%2F_delta_log%2F&start-after=x"),
            *[_at(81, 81 + 40 + i * 10, "GET", log + f"0000{i}.json", connection=i + 2) for i in range(3)],
            _at(150, 190, "GET", log + "00000.checkpoint.parquet"),
            *[_at(191, 231, "GET", log + f"0000{i}.json", connection=i + 2) for i in range(3)],
            _at(232, 272, "PUT", "/lab/t/part-0.parquet"),
            _at(273, 313, "GET", "/lab?list-type=2&prefix=t%2F_delta_log%2F&start-after=y"),
            _at(314, 354, "PUT", log + "00004.json")]
    assert [len(r) for r in rounds(call)] == [1, 1, 3, 1, 3, 1, 1, 1]
    summary = call_summary(call, start=0.0, end=0.36)
    assert summary["requests"] == 12 and summary["rounds"] == 8
    assert summary["load_rounds"] == 5 and summary["load_ms"] == 232.0
    assert summary["entries_read_at_once"] == 3
    assert [round(x) for x in summary["entry_round_ms"]] == [60, 40]  # the slowest of each round decides
    assert summary["rounds_from_data_file"] == 3


def test_bad_flags_and_an_unreachable_lab_stop_with_one_line_before_any_writer(monkeypatch, capsys):
    from probe_servers import KEYS, free_port

    from studies.real_clients.request_trace import main

    assert main(["--writers", "0"]) == 2
    assert capsys.readouterr().err.strip() == "error: writers: '0' is not allowed; expected a whole number of writers >= 1"
    for key, value in KEYS.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("STORE_LAB_S3_URI", "s3://lab/probes")
    monkeypatch.setenv("STORE_LAB_S3_ENDPOINT", f"http://127.0.0.1:{free_port()}")  # nothing listens there
    assert main(["--writers", "2", "--duration-s", "1"]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and ("endpoint_url" in errors[0] or "store_uri" in errors[0]), errors
