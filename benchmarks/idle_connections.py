"""Idle sockets against the dashboard server: does a normal GET stay fast? Figures against a baseline.

    python -m benchmarks.idle_connections [--idle 200] [--gets 40] [--hold-s 20] [--port N] [--save-baseline]

Starts `python -m dashboards serve` on a free loopback port over a two-row store (written by the
store's own writer), then opens ``--idle`` connections that never finish a request: a third send
nothing, a third half a request line (``GET / HT``), a third a request line and one header but
never the blank line that ends the headers. Whenever the server closes one, it is opened again, as
a client trying to starve the server would. Meanwhile ``--gets`` normal requests for the page
(each on a new connection) are sent, evenly spread over ``--hold-s`` seconds, so some land
before the server's idle timeout has closed anything and some after. Prints how many answered
200 and their p50 and worst latency; the target is a worst case under one second at 200 idle
connections. ``--port N`` attacks a server already listening on loopback port N instead (how
other servers were compared: docs/guide/dashboard.md). The figures are printed beside every baseline
in ``benchmarks/idle_connections_baseline.json`` taken with the same settings
(``benchmarks/baseline.py``).
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

from benchmarks.baseline import add_baseline_flags, compare_and_save  # noqa: E402
from store_fixtures import contract_row, write_store_file  # noqa: E402

BASELINE_PATH = os.path.join(ROOT, "benchmarks", "idle_connections_baseline.json")
WHAT = ("benchmarks/idle_connections.py figures: GET / in ms with no idle connection, then its p50 and worst "
        "with the idle ones held, and the GETs that failed")

# What each kind of idle client sends, once, before going quiet.
IDLE_OPENINGS = (b"", b"GET / HT", b"GET / HTTP/1.1\r\nHost: localhost\r\n")
GET_TIMEOUT_S = 60.0


def two_row_store() -> str:
    store = tempfile.mkdtemp(prefix="idle-connections-")
    config = {"num_tables": 10, "fast_append_ratio": 0.9, "inter_arrival_scale_ms": 100.0}
    write_store_file(store, "exp4c", [contract_row("exp4c", {**config, "provider": provider}, 1,
                                                   {"success_rate": 1.0, "throughput_cps": 2.0})
                                      for provider in ("s3", "gcp")])
    return store


class IdleClients:
    """``count`` connections that never finish a request; each one the server closes is opened again."""

    def __init__(self, port: int, count: int):
        self.port = port
        self.count = count
        self.closed_by_server = 0
        self.refused = 0
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._hold, args=(IDLE_OPENINGS[i % len(IDLE_OPENINGS)],),
                                          daemon=True) for i in range(count)]
        self.open_now = 0
        self._lock = threading.Lock()

    def start(self) -> None:
        for thread in self._threads:
            thread.start()

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=5)

    def _hold(self, opening: bytes) -> None:
        while not self._stop.is_set():
            try:
                connection = socket.create_connection(("127.0.0.1", self.port), timeout=5)
            except OSError:
                with self._lock:
                    self.refused += 1
                self._stop.wait(0.2)
                continue
            with self._lock:
                self.open_now += 1
            try:
                if opening:
                    connection.sendall(opening)
                connection.settimeout(0.2)
                while not self._stop.is_set():
                    try:
                        if connection.recv(65536) == b"":  # the server hung up (or answered 503 and did)
                            with self._lock:
                                self.closed_by_server += 1
                            break
                    except socket.timeout:
                        continue
            except OSError:
                with self._lock:
                    self.closed_by_server += 1
            finally:
                with self._lock:
                    self.open_now -= 1
                connection.close()


def timed_get(port: int) -> tuple:
    """(seconds, HTTP status) of one GET / on a new connection; status is an error name if it failed."""
    started = time.perf_counter()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=GET_TIMEOUT_S)
        connection.request("GET", "/", headers={"Connection": "close"})
        response = connection.getresponse()
        response.read()
        connection.close()
        return time.perf_counter() - started, response.status
    except OSError as error:
        return time.perf_counter() - started, type(error).__name__


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.idle_connections",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=int, default=200, help="idle connections held open (default 200)")
    parser.add_argument("--gets", type=int, default=40, help="normal requests sent meanwhile (default 40)")
    parser.add_argument("--hold-s", type=float, default=20.0,
                        help="seconds over which the requests are spread (default 20, past the idle timeout)")
    parser.add_argument("--port", type=int, default=None,
                        help="attack a server already listening on this loopback port (default: start one)")
    add_baseline_flags(parser, BASELINE_PATH)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    server = None
    if args.port is None:
        server = subprocess.Popen([sys.executable, "-m", "dashboards", "serve", "--store", two_row_store(),
                                   "--port", "0", "--quiet"], cwd=ROOT, env={**os.environ, "PYTHONPATH": ROOT},
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        if server is None:
            port = args.port
        else:
            port = int(re.search(r"http://127\.0\.0\.1:(\d+)/", server.stdout.readline()).group(1))
        quiet_latency, quiet_status = timed_get(port)
        idle = IdleClients(port, args.idle)
        idle.start()
        time.sleep(1.0)  # let them connect and send their openings
        results: list = []

        def one_get():
            results.append(timed_get(port))

        getters = []
        for _ in range(args.gets):
            getters.append(threading.Thread(target=one_get, daemon=True))
            getters[-1].start()
            time.sleep(args.hold_s / args.gets)
        for thread in getters:
            thread.join(timeout=GET_TIMEOUT_S + 5)
        open_at_end = idle.open_now
        idle.stop()
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
    ok = sorted(seconds for seconds, status in results if status == 200)
    failed = [status for _, status in results if status != 200]
    p50 = ok[len(ok) // 2] * 1000 if ok else float("nan")
    worst = max((seconds for seconds, _ in results), default=float("nan")) * 1000
    print(f"idle connections: {args.idle} held ({open_at_end} open at the end); the server closed "
          f"{idle.closed_by_server}, refused {idle.refused} connects")
    print(f"GET / with no idle connections: {quiet_latency * 1000:.1f} ms (status {quiet_status})")
    print(f"GET / with {args.idle} idle, {len(results)} sent over {args.hold_s:.0f} s: {len(ok)} ok, "
          f"{len(failed)} failed {sorted(set(map(str, failed)))}, p50 {p50:.1f} ms, worst {worst:.1f} ms "
          f"({'under' if worst < 1000 else 'NOT under'} 1 s)")
    load = f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
    print(f"(1-minute load average: {load}; {os.cpu_count()} CPUs)")
    settings = {"idle": args.idle, "gets": args.gets, "hold_s": args.hold_s,
                "server": "dashboards serve" if args.port is None else "another, on a port given"}
    command = (f"python -m benchmarks.idle_connections --idle {args.idle} --gets {args.gets} --hold-s {args.hold_s:g}"
               + (f" --port {args.port}" if args.port is not None else ""))
    compare_and_save(args, ROOT, WHAT, settings, command, load,
                     {"quiet_get_ms": quiet_latency * 1000, "p50_ms": p50, "worst_ms": worst, "failed": len(failed)},
                     {"quiet_get_ms": "ms", "p50_ms": "ms", "worst_ms": "ms", "failed": ""})


if __name__ == "__main__":
    main()
