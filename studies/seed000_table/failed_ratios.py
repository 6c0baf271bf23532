"""The measured model's failed / successful op latency against seed 000 section 8 (an unfitted check).

    python -m studies.seed000_table.failed_ratios [--duration-s 300] [--seed 1] [--by-clients gcp:cas]
                                                  [--out FILE]

Seed 000 prints, per store and operation, the mean latency of failed ops over
that of successful ones, all thread counts pooled. The per-thread CSV the
model is fitted to has no failed latencies, so this is a check the fit did not
see: the benchmark is simulated at 1-16 clients and its ops pooled the same way.

``--by-clients STORE:OP`` also prints, per client count, the mean failed-op
latency that seed 000's counts imply: its clients never pause, so over the
measuring time T each client is always in an op, and clients x T = successes x
their mean latency + failures x theirs (Little's law; T as simcore/fit/samples.py
recovers it from the one-client row).

Every printed row goes to ``--out`` (default
``studies/seed000_table/results/failed-ratios-<date>.csv``).
"""

import argparse
import pathlib
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from simcore.bench import run_clients  # noqa: E402
from simcore.fit import measuring_time_s, read_table  # noqa: E402
from simcore.profiles import measured_profile  # noqa: E402
from studies.results import add_out_flags, command_line, out_path, write_csv  # noqa: E402

# Seed 000, section 8: (store, operation) -> mean failed / mean successful latency.
SEED_000 = {("azure", "append"): 31.59, ("azurex", "append"): 36.24, ("gcp", "cas"): 13.42, ("s3", "cas"): 1.22,
            ("s3x", "cas"): 0.95, ("s3x", "append"): 1.09, ("azure", "cas"): 0.81, ("azurex", "cas"): 1.28}


def main(argv=None) -> int:
    prog = "python -m studies.seed000_table.failed_ratios"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--duration-s", type=float, default=300.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--by-clients", default=None, metavar="STORE:OP",
                        help="also the failed-op mean per client count, implied by seed 000 and simulated")
    parser.add_argument("--data", default=str(ROOT / "simcore" / "measured" / "seed000_conditional_writes.csv"))
    add_out_flags(parser, "every printed row, as CSV")
    args = parser.parse_args(argv)
    out = out_path(args, "seed000_table", "failed-ratios", "csv")
    rows = []
    print("| store, operation | seed 000 failed / successful mean | measured model |\n|---|---:|---:|")
    for (store, operation), ratio in SEED_000.items():
        succeeded, failed = [], []
        for clients in range(1, 17):
            latencies, ok = run_clients(measured_profile(store), operation, clients, args.duration_s, args.seed)
            succeeded.append(latencies[ok])
            failed.append(latencies[~ok])
        s, f = np.concatenate(succeeded).mean(), np.concatenate(failed).mean()
        print(f"| {store} {operation} | {ratio:.2f} | {f / s:.2f} ({f:,.0f} / {s:,.0f} ms) |")
        rows.append({"store": store, "operation": operation, "clients": "1-16", "seed000_failed_over_succeeded": ratio,
                     "model_failed_over_succeeded": f / s, "model_failed_mean_ms": f, "model_succeeded_mean_ms": s})
    if args.by_clients:
        store, _, operation = args.by_clients.partition(":")
        operation = operation or "cas"
        stats = read_table(args.data, store)[operation]
        seconds = measuring_time_s(stats)
        print(f"\n{store} {operation}: mean failed-op latency, ms (T = {seconds:,.0f} s)\n"
              "| clients | seed 000, implied | measured model |\n|---:|---:|---:|")
        for s in stats:
            if s.failures < 10:  # one client: a handful of failures, no mean worth printing
                continue
            implied = (s.clients * seconds * 1000.0 - s.successes * s.mean_ms) / s.failures
            latencies, ok = run_clients(measured_profile(store), operation, s.clients, args.duration_s, args.seed)
            simulated = float(latencies[~ok].mean()) if (~ok).any() else None
            print(f"| {s.clients} | {implied:,.0f} | {'no failures' if simulated is None else f'{simulated:,.0f}'} |")
            rows.append({"store": store, "operation": operation, "clients": s.clients,
                         "seed000_failed_mean_ms_implied": implied, "model_failed_mean_ms": simulated})
    settings = {"duration_s": args.duration_s, "seed": args.seed}
    write_csv(out, [{**row, **settings} for row in rows], command_line(prog, argv))
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
