"""Load on the dashboard server: 50 clients x 20 requests of the page, at once; prints p50/p99.

    python benchmarks/server_load.py
"""
import os, sys, threading, time, http.client, statistics, tempfile
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__))); sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]
from store_fixtures import contract_row, write_store_file
from dashboards.server import make_server
d = tempfile.mkdtemp()
rows = [contract_row("exp4c", {"provider": p, "num_tables": 10, "fast_append_ratio": 0.9, "inter_arrival_scale_ms": 100.0}, 1,
        {"success_rate": 1.0, "throughput_cps": 2.0, "vo_success_rate": 1.0}) for p in ("s3", "gcp")]
write_store_file(d, "exp4c", rows)
srv = make_server(d, port=0, refresh_s=-1, quiet=True, log=lambda m: None)
threading.Thread(target=srv.serve_forever, daemon=True).start()
port = srv.server_address[1]; lat = []; errors = []
def client():
    for _ in range(20):
        t = time.perf_counter()
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10); c.request("GET", "/"); r = c.getresponse(); r.read(); c.close()
            lat.append(time.perf_counter() - t) if r.status == 200 else errors.append(r.status)
        except Exception as e:
            errors.append(type(e).__name__)
ts = [threading.Thread(target=client) for _ in range(50)]
[t.start() for t in ts]; [t.join() for t in ts]
lat.sort()
print(f"50 clients x 20 requests of /: ok {len(lat)}, errors {len(errors)}, p50 {lat[len(lat)//2]*1000:.1f} ms, p99 {lat[int(len(lat)*0.99)]*1000:.1f} ms")
