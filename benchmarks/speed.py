"""simcore speed and memory, optionally against the reference simulator.

Three measurements, each printed as a small table:

1. ``--reference``: per-configuration wall time of the reference
   (cdouglas/endive, run from a local checkout) and of simcore on a spread of
   exp4 configs, heavy high-load VO ones included, at the same simulated
   duration; the median speed-up.
2. ``--grid``: the whole exp4a+4b+4c grid (1,380 configs) x N seeds through a
   process pool of ``--jobs`` workers; wall time and the CPU time summed over
   the workers.
3. ``--memory``: peak resident memory of one process simulating the heaviest
   config.

    python benchmarks/speed.py --grid --memory
    python benchmarks/speed.py --reference --endive ../endive --endive-python ../endive-venv/bin/python \
        --duration-s 1900
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from multiprocessing import get_context

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

from simcore import SimConfig, simulate
from simcore.flags import add_seeds_flag

DRIVER = os.path.join(ROOT, "benchmarks", "reference_driver.py")


def exp4_grid(duration_s: float = 3600.0) -> list[SimConfig]:
    """exp4a, exp4b and exp4c (1,380 configs), from the sweep scripts' own grids."""
    from sweeps import exp4a, exp4b, exp4c

    return [c for grid in (exp4a.GRID, exp4b.GRID, exp4c.GRID) for c in grid.configs(duration_s=duration_s)]


def spread(duration_s: float) -> list[SimConfig]:
    """A spread of exp4 configs from light to the heaviest high-load VO ones."""
    d = dict(duration_s=duration_s)
    return [
        SimConfig(provider="s3", catalog="service", catalog_latency_ms=50, num_tables=5,
                  inter_arrival_scale_ms=100, **d),
        SimConfig(provider="s3", catalog="service", catalog_latency_ms=10, num_tables=1, fast_append_ratio=0.9,
                  inter_arrival_scale_ms=20, **d),
        SimConfig(provider="s3x", num_tables=50, inter_arrival_scale_ms=20, **d),
        SimConfig(provider="azurex", num_tables=2, inter_arrival_scale_ms=500, **d),
        SimConfig(provider="azure", num_tables=10, fast_append_ratio=0.9, inter_arrival_scale_ms=200, **d),
        SimConfig(provider="s3", num_tables=20, fast_append_ratio=0.5, inter_arrival_scale_ms=50, **d),
        SimConfig(provider="s3", num_tables=1, fast_append_ratio=0.5, inter_arrival_scale_ms=100, **d),
        SimConfig(provider="gcp", num_tables=1, fast_append_ratio=0.5, inter_arrival_scale_ms=50, **d),
    ]


def _time_simcore(config: SimConfig, seed: int, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        simulate(config, [seed])
        best = min(best, time.perf_counter() - started)
    return best


def _time_reference(config: SimConfig, seed: int, endive: str, python: str, timeout_s: float) -> tuple[float, bool]:
    """(wall seconds, finished); a run stopped at ``timeout_s`` gives a lower bound."""
    with tempfile.TemporaryDirectory() as workdir:
        out = os.path.join(workdir, "ref.parquet")
        started = time.perf_counter()
        try:
            subprocess.run([python, DRIVER, json.dumps(config.to_dict()), str(seed), out], check=True,
                           cwd=workdir, env={**os.environ, "PYTHONPATH": endive}, capture_output=True,
                           timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return time.perf_counter() - started, False
        return time.perf_counter() - started, True


def reference_comparison(args) -> None:
    print(f"\n== simcore vs reference, {args.duration_s:g} simulated s, seed 1, one run at a time ==")
    print(f"(a reference run still going after {args.reference_timeout_s:g} s is stopped: its time and "
          "speed-up are lower bounds, marked >=)")
    print(f"{'config':62s} {'reference s':>12s} {'simcore s':>10s} {'speed-up':>9s}")
    simulate(spread(args.duration_s)[0], [1])  # compile / load the cache first
    ratios = []
    for config in spread(args.duration_s):
        ours = _time_simcore(config, 1)
        theirs, finished = _time_reference(config, 1, args.endive, args.endive_python, args.reference_timeout_s)
        ratios.append(theirs / ours)
        bound = "" if finished else ">="
        label = (f"{config.provider} {config.catalog} {config.catalog_latency_ms or ''} {config.num_tables}t "
                 f"FA{config.fast_append_ratio:g} {config.inter_arrival_scale_ms:g}ms")
        print(f"{label:62s} {bound:>2s}{theirs:10.2f} {ours:10.4f} {bound:>2s}{theirs / ours:6.0f}x", flush=True)
    print(f"median speed-up: {statistics.median(ratios):.0f}x (min {min(ratios):.0f}x; lower bounds where a "
          "reference run was stopped)")


def _run_one(task) -> float:
    config, seeds = task
    started = time.process_time()
    simulate(config, seeds)
    return time.process_time() - started


def grid(args) -> None:
    configs = exp4_grid(args.duration_s)
    seeds = list(args.seeds)
    print(f"\n== exp4a+4b+4c grid: {len(configs)} configs x {len(seeds)} seeds, {args.duration_s:g} s each, "
          f"{args.jobs} worker processes ==")
    context = get_context("spawn")
    with context.Pool(args.jobs) as pool:
        pool.map(_run_one, [(configs[0], [1])] * args.jobs)  # compile / load the cache in every worker
        started = time.perf_counter()
        cpu = pool.map(_run_one, [(c, seeds) for c in configs], chunksize=4)
        wall = time.perf_counter() - started
    cpu.sort(reverse=True)
    print(f"wall {wall:.1f} s; CPU {sum(cpu):.1f} s ({sum(cpu) / 60:.2f} min) summed over workers; "
          f"slowest config {cpu[0]:.2f} s CPU for {len(seeds)} seeds; median {statistics.median(cpu):.3f} s")


def memory(args) -> None:
    heaviest = ("SimConfig(provider='gcp', num_tables=1, fast_append_ratio=0.5, inter_arrival_scale_ms=20, "
                f"duration_s={args.duration_s})")
    code = ("import resource, time; from simcore import SimConfig, simulate; "
            f"c = {heaviest}; t = time.perf_counter(); simulate(c, [1]); "
            "print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": ROOT}, cwd=ROOT).stdout.split()
    print(f"\n== peak memory ==\n{heaviest}: peak RSS {int(out[1]) / 1024:.0f} MiB "
          f"(whole process, Python and Numba included), {float(out[0]):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", action="store_true", help="time the reference beside simcore")
    parser.add_argument("--endive", help="path of a cdouglas/endive checkout (for --reference)")
    parser.add_argument("--endive-python", default=sys.executable, help="a Python that runs the reference")
    parser.add_argument("--reference-timeout-s", type=float, default=900.0,
                        help="stop a reference run after this long and report a lower bound (default 900)")
    parser.add_argument("--grid", action="store_true", help="time the whole exp4 grid")
    parser.add_argument("--memory", action="store_true", help="peak memory of the heaviest config")
    parser.add_argument("--duration-s", type=float, default=3600.0, help="simulated seconds (default 3600)")
    add_seeds_flag(parser)  # of each config, for --grid
    parser.add_argument("--jobs", type=int, default=os.cpu_count(), help="worker processes for --grid")
    args = parser.parse_args()
    if not (args.reference or args.grid or args.memory):
        parser.error("choose at least one of --reference, --grid, --memory")
    if args.reference and not args.endive:
        parser.error("--reference needs --endive PATH")
    if args.memory:
        memory(args)
    if args.grid:
        grid(args)
    if args.reference:
        reference_comparison(args)


if __name__ == "__main__":
    main()
