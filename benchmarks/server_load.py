"""Load on the dashboard server: many clients at once, each asking for the page; p50 and p99 against a baseline.

    python -m benchmarks.server_load [--clients 50] [--requests 20] [--save-baseline]

Serves a two-row store (written by the store's own writer) on a free
loopback port in this process, then runs the clients on threads, one new
connection per request, as browsers behind a proxy would. Prints p50 and
p99 beside every baseline in ``benchmarks/server_load_baseline.json``
measured with the same clients and requests (``benchmarks/baseline.py``).
"""

from __future__ import annotations

import argparse
import http.client
import os
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]
BASELINE_PATH = os.path.join(ROOT, "benchmarks", "server_load_baseline.json")
WHAT = "benchmarks/server_load.py figures: p50 and p99 of GET / in ms, and the requests that failed"

from benchmarks.baseline import add_baseline_flags, compare_and_save  # noqa: E402
from dashboards.server import make_server  # noqa: E402
from store_fixtures import contract_row, write_store_file  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.server_load", description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--requests", type=int, default=20, help="requests per client")
    add_baseline_flags(parser, BASELINE_PATH)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    store = tempfile.mkdtemp(prefix="server-load-")
    config = {"num_tables": 10, "fast_append_ratio": 0.9, "inter_arrival_scale_ms": 100.0}
    write_store_file(store, "exp4c", [contract_row("exp4c", {**config, "provider": provider}, 1,
                                                   {"success_rate": 1.0, "throughput_cps": 2.0})
                                      for provider in ("s3", "gcp")])
    server = make_server(store, port=0, refresh_s=-1, quiet=True, log=lambda message: None)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    latencies, errors = [], []

    def client() -> None:
        for _ in range(args.requests):
            started = time.perf_counter()
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                connection.request("GET", "/")
                response = connection.getresponse()
                response.read()
                connection.close()
            except OSError as error:
                errors.append(type(error).__name__)
                continue
            (latencies if response.status == 200 else errors).append(
                time.perf_counter() - started if response.status == 200 else response.status)

    clients = [threading.Thread(target=client) for _ in range(args.clients)]
    for thread in clients:
        thread.start()
    for thread in clients:
        thread.join()
    server.shutdown()
    server.server_close()
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1000 if latencies else float("nan")
    p99 = latencies[int(len(latencies) * 0.99)] * 1000 if latencies else float("nan")
    print(f"{args.clients} clients x {args.requests} requests of /: {len(latencies)} ok, {len(errors)} errors, "
          f"p50 {p50:.1f} ms, p99 {p99:.1f} ms (load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} "
          f"after, {os.cpu_count()} CPUs)")
    compare_and_save(args, ROOT, WHAT, {"clients": args.clients, "requests": args.requests},
                     f"python -m benchmarks.server_load --clients {args.clients} --requests {args.requests}",
                     f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after",
                     {"p50_ms": p50, "p99_ms": p99, "errors": len(errors)},
                     {"p50_ms": "ms", "p99_ms": "ms", "errors": ""})


if __name__ == "__main__":
    main()
