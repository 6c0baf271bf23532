"""Measure what one run costs in memory, to check simcore.bounds' estimate.

    python -m studies.memory_bounds [--out FILE]    # a few sizes, one fresh process each

Prints per run: transactions drawn, tables, peak resident size minus the
process's size before the run, bytes per transaction (or per table), and
simcore.bounds' estimate of the same (without the process's own size); the
same rows go to ``--out`` (default
``studies/memory_bounds/results/runs-<date>.csv``).
"""

import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from studies.results import add_out_flags, command_line, out_path, write_csv  # noqa: E402

PROG = "python -m studies.memory_bounds"

PROBE = """
import resource, sys, time
from simcore import SimConfig, bounds, simulate
simulate(SimConfig(provider="instant", duration_s=1900, inter_arrival_scale_ms=1000), [1])  # compile first
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
config = SimConfig(provider="instant", num_tables=int(sys.argv[2]), duration_s=3600.0,
                   inter_arrival_scale_ms=3600e3 / float(sys.argv[1]), arrivals="exponential")
started = time.perf_counter()
simulate(config, [1])
used = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
work = bounds.estimate(config)
print(int(work.transactions), config.num_tables, used, int(work.peak_bytes - bounds.PROCESS_BYTES),
      round(time.perf_counter() - started, 1))
"""

CASES = ((1e6, 1), (2e6, 1), (4e6, 1), (1000, 1_000_000), (1000, 4_000_000))

# Writer workloads: many jobs that commit at most once (the per-job cost), and one with many commits.
WRITER_PROBE = """
import resource, sys
from simcore import SimConfig, bounds, simulate
simulate(SimConfig(provider="instant", duration_s=1900, inter_arrival_scale_ms=1000), [1])  # compile first
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
config = SimConfig(provider="instant", num_tables=10, writers=int(sys.argv[1]), commit_interval_s=float(sys.argv[2]))
simulate(config, [1])
used = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
print(used, int(bounds.estimate(config).peak_bytes - bounds.PROCESS_BYTES))
"""
WRITER_CASES = ((200_000, 1e7), (400_000, 1e7), (20_000, 60.0))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    add_out_flags(parser, "one row per run, as CSV")
    args = parser.parse_args(argv)
    results_file = out_path(args, "memory_bounds", "runs", "csv")
    rows = []
    print(f"{'transactions':>12} {'tables':>9} {'measured MB':>11} {'B/unit':>7} {'estimate MB':>11} {'run s':>6}")
    for transactions, tables in CASES:
        out = subprocess.run([sys.executable, "-c", PROBE, str(transactions), str(tables)], check=True, cwd=ROOT,
                             capture_output=True, text=True).stdout.split()
        drawn, tables, used, estimated, seconds = int(out[0]), int(out[1]), int(out[2]), int(out[3]), out[4]
        per_unit = used / (drawn if tables == 1 else tables)
        print(f"{drawn:>12} {tables:>9} {used / 1e6:>11.0f} {per_unit:>7.0f} {estimated / 1e6:>11.0f} {seconds:>6}")
        rows.append({"kind": "arrivals", "transactions": drawn, "tables": tables, "measured_bytes": used,
                     "bytes_per_unit": per_unit, "estimated_bytes": estimated, "run_s": float(seconds)})
    print(f"\n{'writers':>12} {'interval s':>10} {'measured MB':>11} {'B/writer':>8} {'estimate MB':>11}")
    for writers, interval_s in WRITER_CASES:
        out = subprocess.run([sys.executable, "-c", WRITER_PROBE, str(writers), str(interval_s)], check=True, cwd=ROOT,
                             capture_output=True, text=True).stdout.split()
        used, estimated = int(out[0]), int(out[1])
        print(f"{writers:>12} {interval_s:>10g} {used / 1e6:>11.0f} {used / writers:>8.0f} {estimated / 1e6:>11.0f}")
        rows.append({"kind": "writers", "writers": writers, "commit_interval_s": interval_s, "measured_bytes": used,
                     "bytes_per_unit": used / writers, "estimated_bytes": estimated})
    write_csv(results_file, rows, command_line(PROG, argv))
    print(f"wrote {results_file}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
