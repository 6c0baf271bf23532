"""The measured model's failed / successful op latency against seed 000 section 8 (an unfitted check).

    python benchmarks/failed_ratios.py [--duration-s 300] [--seed 1]

Seed 000 prints, per store and operation, the mean latency of failed ops over
that of successful ones, all thread counts pooled. The per-thread CSV the
model is fitted to has no failed latencies, so this is a check the fit did not
see: the benchmark is simulated at 1-16 clients and its ops pooled the same way.
"""

import argparse
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from simcore.bench import run_clients  # noqa: E402
from simcore.profiles import measured_profile  # noqa: E402

# Seed 000, section 8: (store, operation) -> mean failed / mean successful latency.
SEED_000 = {("azure", "append"): 31.59, ("azurex", "append"): 36.24, ("gcp", "cas"): 13.42, ("s3", "cas"): 1.22,
            ("s3x", "cas"): 0.95, ("s3x", "append"): 1.09, ("azure", "cas"): 0.81, ("azurex", "cas"): 1.28}

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration-s", type=float, default=300.0)
    parser.add_argument("--seed", type=int, default=1)
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
