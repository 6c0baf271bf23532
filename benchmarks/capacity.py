"""How long the capacity command takes to answer, end to end, against a baseline.

    python -m benchmarks.capacity [--repeat N] [--save-baseline] [-- extra capacity flags]
    python -m benchmarks.capacity --cold [--save-baseline]   # the README's example, first answer vs rerun
    python -m benchmarks.capacity --compare [--save-baseline]  # every design side by side vs one design

Runs ``commit-sweeps capacity`` (``commit_sweeps.capacity_command``) in this process for
its target case, FA-only S3 at 10 tables, 3 seeds, 2% tolerance, in local
processes on every core, and prints the answer, the simulations it ran and
its wall time, with the load average (the machine is shared: wall time
depends on what else runs; CPU seconds do not, and on two idle cores the
wall time is about half of them). Target: at most 10 s on a 2-core machine.
The medians over the runs are printed beside every baseline in
``benchmarks/capacity_baseline.json`` taken with the same flags
(``benchmarks/baseline.py``).

``--cold`` times the README's example (Iceberg Java's client on S3, 10
tables, FA 0.9) as whole ``commit-sweeps capacity`` processes on a fresh
install: ``commit-sweeps prepare`` (the README's install step, which compiles
every kernel variant), then the first answer, then two later ones; and, apart,
the first answer on an empty cache where prepare was skipped (it compiles its
kernel first). Target: the first answer after the install costs at most 3x a
later one.

``--compare`` times ``capacity --compare`` on S3, 10 tables, FA 0.9 (every commit design) as a whole process,
warm, against one design's answer (the same flags without ``--compare``: the storage catalog), and then each
design's own search alone, one after another on every core, so that the ratio says where the time goes.
Target: the comparison in at most 10x one design's answer.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
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


README_EXAMPLE = ["capacity", "--provider", "s3", "--catalog", "storage", "--num-tables", "10",
                  "--fast-append-ratio", "0.9", "--client", "iceberg-java", "--json"]


def _timed_process(cache_dir, command=README_EXAMPLE) -> float:
    """Wall seconds of one whole ``commit-sweeps`` process (the README's capacity example by default), on the
    kernel cache in ``cache_dir`` (None: the install's own)."""
    started = time.perf_counter()
    env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir} if cache_dir else None
    subprocess.run([sys.executable, "-m", "commit_sweeps", *command], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - started


def cold_start(args: argparse.Namespace) -> int:
    load_first = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache_dir:  # an install, as the README sets it up
        prepare = _timed_process(cache_dir, ["prepare"])
        first = _timed_process(cache_dir)
        warm = statistics.median(_timed_process(cache_dir) for _ in range(2))
    with tempfile.TemporaryDirectory(prefix="numba-cache-") as cache_dir:  # an install that skipped prepare
        unprepared = _timed_process(cache_dir)
    print(f"README example: `commit-sweeps prepare` (the install's last step) {prepare:.1f} s; then the first "
          f"answer {first:.1f} s, later answers {warm:.1f} s (median of 2): ratio {first / warm:.2f} (target <= 3); "
          f"on an empty kernel cache without prepare the first answer compiles its kernel: {unprepared:.1f} s "
          f"(load average {load_first:.1f} before, {os.getloadavg()[0]:.1f} after)")
    compare_and_save(args, ROOT, WHAT, {"mode": "cold"}, "python -m benchmarks.capacity --cold",
                     f"{load_first:.1f} before, {os.getloadavg()[0]:.1f} after",
                     {"prepare_wall_s": prepare, "first_answer_wall_s": first, "cached_wall_s": warm,
                      "empty_cache_wall_s": unprepared},
                     {"prepare_wall_s": "s", "first_answer_wall_s": "s", "cached_wall_s": "s",
                      "empty_cache_wall_s": "s"})
    return 0


COMPARE_CASE = ["capacity", "--provider", "s3", "--num-tables", "10", "--fast-append-ratio", "0.9", "--json"]


def compare_designs(args: argparse.Namespace) -> int:
    from commit_sweeps.flags import COMPARE_MIN_SCALE_MS, search_range_of
    from ray_jobs.capacity import find_capacity

    load_first = os.getloadavg()[0]
    one_design = COMPARE_CASE + ["--catalog", "storage"]
    _timed_process(None, one_design)  # warm: the kernels loaded once
    one = statistics.median(_timed_process(None, one_design) for _ in range(3))
    together = _timed_process(None, COMPARE_CASE + ["--compare"])
    print(f"capacity --compare (s3, 10 tables, FA 0.9): {together:.1f} s; one design's answer (storage, the same "
          f"flags): {one:.2f} s (median of 3): ratio {together / one:.0f}x (target <= 10x)")
    parser = argparse.ArgumentParser()
    capacity.configure(parser)
    flags = parser.parse_args(COMPARE_CASE[1:] + ["--compare"])
    search = search_range_of(flags, min_scale_ms=COMPARE_MIN_SCALE_MS)
    alone = {}
    for name, base in capacity.compare_configs(flags, writers_mode=False).items():
        started = time.perf_counter()
        answer = find_capacity(base, None, search, flags.seeds)
        alone[name] = time.perf_counter() - started
        print(f"  {name}: {alone[name]:.1f} s alone, {answer['simulations']} simulations, usable "
              f"{answer['usable_throughput_cps']:.2f} c/s at p50 {answer['commit_latency_p50_ms']:.0f} ms")
    print(f"each design's search alone: {sum(alone.values()):.1f} s in all (load average {load_first:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after)")
    compare_and_save(args, ROOT, WHAT, {"mode": "compare"}, "python -m benchmarks.capacity --compare",
                     f"{load_first:.1f} before, {os.getloadavg()[0]:.1f} after",
                     {"compare_wall_s": together, "one_design_wall_s": one, "ratio": together / one,
                      **{f"{name}_alone_s": value for name, value in alone.items()}},
                     {"compare_wall_s": "s", "one_design_wall_s": "s", "ratio": "x",
                      **{f"{name}_alone_s": "s" for name in alone}})
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.capacity", description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs to time (default 1)")
    add_baseline_flags(parser, BASELINE_PATH)
    parser.add_argument("--cold", action="store_true",
                        help="time the README's example on an empty kernel cache, then on a filled one")
    parser.add_argument("extra", nargs="*", help="more capacity flags, after --")
    parser.add_argument("--compare", action="store_true",
                        help="time capacity --compare against one design's answer, and each design alone")
    args = parser.parse_args(argv)
    if args.cold:
        return cold_start(args)
    if args.compare:
        return compare_designs(args)
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
