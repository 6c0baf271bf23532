"""How long the capacity command takes to answer, end to end, against a baseline.

    python -m benchmarks.capacity [--repeat N] [--save-baseline] [-- extra capacity flags]

Runs ``commit-sweeps capacity`` (``commit_sweeps.capacity_command``) in this process for
its target case, FA-only S3 at 10 tables, 3 seeds, 2% tolerance, in local
processes on every core, and prints the answer, the simulations it ran and
its wall time, with the load average (the machine is shared: wall time
depends on what else runs; CPU seconds do not, and on two idle cores the
wall time is about half of them). Target: at most 10 s on a 2-core machine.
The medians over the runs are printed beside every baseline in
``benchmarks/capacity_baseline.json`` taken with the same flags
(``benchmarks/baseline.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # run from a checkout, as a script too

from benchmarks.baseline import add_baseline_flags, compare_and_save  # noqa: E402
from commit_sweeps import capacity_command as capacity  # noqa: E402

BASELINE_PATH = os.path.join(ROOT, "benchmarks", "capacity_baseline.json")
WHAT = ("benchmarks/capacity.py figures: median wall and CPU seconds (this process and its simulation "
        "processes) of one capacity answer, and the simulations it ran")

TARGET = ["--provider", "s3", "--catalog", "storage", "--num-tables", "10", "--fast-append-ratio", "1.0",
          "--seeds", "3", "--tolerance", "0.02", "--json"]


def _cpu_s() -> float:
    """CPU seconds of this process and its finished children (the simulation processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.capacity", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs to time (default 1)")
    add_baseline_flags(parser, BASELINE_PATH)
    parser.add_argument("extra", nargs="*", help="more capacity flags, after --")
    args = parser.parse_args(argv)
    walls, cpus, simulations = [], [], []
    load_first = os.getloadavg()[0]
    for run in range(1, args.repeat + 1):
        load_before = os.getloadavg()[0]
        cpu_before = _cpu_s()
        out = io.StringIO()
        started = time.perf_counter()
        with contextlib.redirect_stdout(out):
            code = capacity.main(TARGET + args.extra)
        wall = time.perf_counter() - started
        if code:
            return code
        result = json.loads(out.getvalue())
        cpu = _cpu_s() - cpu_before
        walls.append(wall)
        cpus.append(cpu)
        simulations.append(result["simulations"])
        print(f"run {run}: usable {result['usable_throughput_cps']:.3f} c/s, bracket {result['bracket']}, "
              f"{result['simulations']} simulations, {wall:.1f} s wall on {os.cpu_count()} cores, {cpu:.1f} CPU s "
              f"(load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after; target <= 10 s)")
    command = " ".join(["python -m benchmarks.capacity", "--repeat", str(args.repeat)]
                       + (["--", *args.extra] if args.extra else []))
    compare_and_save(args, ROOT, WHAT, {"extra": args.extra}, command,
                     f"{load_first:.1f} before, {os.getloadavg()[0]:.1f} after",
                     {"wall_s": statistics.median(walls), "cpu_s": statistics.median(cpus),
                      "simulations": statistics.median(simulations)},
                     {"wall_s": "s", "cpu_s": "s", "simulations": ""})
    return 0


if __name__ == "__main__":
    sys.exit(main())
