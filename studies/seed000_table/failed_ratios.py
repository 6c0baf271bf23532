"""The measured model's failed / successful op latency against seed 000 section 8 (an unfitted check).

    python benchmarks/failed_ratios.py [--duration-s 300] [--seed 1] [--by-clients gcp:cas]

Seed 000 prints, per store and operation, the mean latency of failed ops over
that of successful ones, all thread counts pooled. The per-thread CSV the
model is fitted to has no failed latencies, so this is a check the fit did not
see: the benchmark is simulated at 1-16 clients and its ops pooled the same way.

``--by-clients STORE:OP`` also prints, per client count, the mean failed-op
latency that seed 000's counts imply: its clients never pause, so over the
measuring time T each client is always in an op, and clients x T = successes x
their mean latency + failures x theirs (Little's law; T as simcore/fit.py
recovers it from the one-client row).
"""

import argparse
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from simcore.bench import run_clients  # noqa: E402
from simcore.fit import measuring_time_s, read_table  # noqa: E402
from simcore.profiles import measured_profile  # noqa: E402

# Seed 000, section 8: (store, operation) -> mean failed / mean successful latency.
SEED_000 = {("azure", "append"): 31.59, ("azurex", "append"): 36.24, ("gcp", "cas"): 13.42, ("s3", "cas"): 1.22,
            ("s3x", "cas"): 0.95, ("s3x", "append"): 1.09, ("azure", "cas"): 0.81, ("azurex", "cas"): 1.28}

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration-s", type=float, default=300.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--by-clients", default=None, metavar="STORE:OP",
                        help="also the failed-op mean per client count, implied by seed 000 and simulated")
    parser.add_argument("--data", default=str(pathlib.Path(__file__).resolve().parents[1] / "simcore" / "measured"
                                              / "seed000_conditional_writes.csv"))
    args = parser.parse_args()
    print("| store, operation | seed 000 failed / successful mean | measured model |\n|---|---:|---:|")
    for (store, operation), ratio in SEED_000.items():
        succeeded, failed = [], []
        for clients in range(1, 17):
            latencies, ok = run_clients(measured_profile(store), operation, clients, args.duration_s, args.seed)
            succeeded.append(latencies[ok])
            failed.append(latencies[~ok])
        s, f = np.concatenate(succeeded).mean(), np.concatenate(failed).mean()
        print(f"| {store} {operation} | {ratio:.2f} | {f / s:.2f} ({f:,.0f} / {s:,.0f} ms) |")
    if args.by_clients:
        store, _, operation = args.by_clients.partition(":")
        stats = read_table(args.data, store)[operation or "cas"]
        seconds = measuring_time_s(stats)
        print(f"\n{store} {operation or 'cas'}: mean failed-op latency, ms (T = {seconds:,.0f} s)\n"
              "| clients | seed 000, implied | measured model |\n|---:|---:|---:|")
        for s in stats:
            if s.failures < 10:  # one client: a handful of failures, no mean worth printing
                continue
            implied = (s.clients * seconds * 1000.0 - s.successes * s.mean_ms) / s.failures
            latencies, ok = run_clients(measured_profile(store), operation or "cas", s.clients, args.duration_s,
                                        args.seed)
            simulated = f"{latencies[~ok].mean():,.0f}" if (~ok).any() else "no failures"
            print(f"| {s.clients} | {implied:,.0f} | {simulated} |")
