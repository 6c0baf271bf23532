"""How much the Ray fan-out costs, and where a whole sweep's time goes.

    python -m studies.fanout overhead [--seeds SEEDS] [--repeat R] [--out FILE]  # ray_jobs vs a plain loop
    python -m studies.fanout full [--seeds SEEDS] [--duration-s S] [--out FILE]  # exp4a + exp4b + exp4c

``overhead`` runs one batch of configs (the exp4c quick grid) four ways and
prints wall seconds for each:

- a plain loop over ``simcore.simulate`` in this process (after numba's
  cache is loaded, so the loop pays no compilation);
- ray_jobs on a local Ray with 1 worker, batched as sweeps batch;
- the same with one run per task (no batching), to show what batching saves;
- ray_jobs with 2 workers.

Ray start-up is reported apart; the ray_jobs figures include starting the
worker processes and their first import of simcore, as a real sweep does.

``full`` runs the three seed-001 grids in one fan-out into a temporary store,
as ``sweeps/all.py`` does for all five, and breaks the time down: Ray
start-up, store scan, fan-out, writes, and the simulation time by
experiment and inter-arrival scale, from the ``wall_s`` of every stored row.

Figures depend on what else the machine runs: the load average is printed
with them. ``overhead`` writes one row per variant to ``--out`` (default
``studies/fanout/results/overhead-<date>.csv``), ``full`` its breakdown
(default ``studies/fanout/results/full-<date>.json``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import ray

from simcore import SimConfig, simulate
from commit_sweeps.flags import add_seeds_flag
from ray_jobs.connect import connect_ray
from ray_jobs.fanout import SweepPlan, find_work, run_sweep
from ray_jobs.progress import ProgressPrinter
from ray_jobs.store import ResultsStore
from sweeps import exp4a, exp4b, exp4c
from studies.results import add_out_flags, command_line, out_path, write_csv, write_json


def load_average() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def warm_up_workers(store: ResultsStore, workers: int) -> float:
    """Start every worker process and load simcore in it (one ~0.3 s run each, one per task)."""
    configs = tuple(SimConfig(provider="s3x", duration_s=1200, runtime_median_ms=20_000, inter_arrival_scale_ms=50,
                              num_tables=n) for n in range(1, workers + 1))
    started = time.perf_counter()
    run_sweep(find_work([SweepPlan("warmup", configs, (1,))], store), store, batch_target_s=1e-9,
              max_batch_units=1, progress=ProgressPrinter(live=False, interval_s=1e9))
    return time.perf_counter() - started


_TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def ray_cpu_s() -> dict:
    """CPU seconds used so far by this process's descendants (the local Ray), split into
    task workers and Ray's own daemons, plus this driver process."""
    parents, cpu_s, titles = {}, {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            title = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        parents[int(entry)] = int(fields[1])
        cpu_s[int(entry)] = (int(fields[11]) + int(fields[12])) / _TICKS_PER_S
        titles[int(entry)] = title
    me, totals = os.getpid(), {"workers": 0.0, "daemons": 0.0}
    for pid in cpu_s:
        ancestor = parents.get(pid)
        while ancestor not in (None, 0, 1, me):
            ancestor = parents.get(ancestor)
        if ancestor == me:
            worker = titles[pid].startswith("ray::") and not titles[pid].endswith("Agent")
            totals["workers" if worker else "daemons"] += cpu_s[pid]
    totals["driver"] = time.process_time()
    return totals


def sweep_once(plans, num_cpus: int, warm: bool = False, **options) -> dict:
    """One ray_jobs run into a fresh store; Ray started and stopped around it."""
    store_dir = tempfile.mkdtemp(prefix="fanout-bench-")
    try:
        store = ResultsStore(store_dir)
        work = find_work(plans, store)
        started = time.perf_counter()
        connect_ray(num_cpus=num_cpus)
        connect_s = time.perf_counter() - started
        try:
            warm_up_s = warm_up_workers(store, num_cpus) if warm else 0.0
            cpu_before = ray_cpu_s()
            summary = run_sweep(work, store, progress=ProgressPrinter(live=False, interval_s=30), **options)
            cpu_after = ray_cpu_s()  # before shutdown: the workers are still there to be counted
        finally:
            ray.shutdown()
        assert summary.ok and summary.run == len(work.todo), summary
        cpu = {part: cpu_after[part] - cpu_before[part] for part in cpu_after}
        return {"connect_s": connect_s, "warm_up_s": warm_up_s, "fanout_s": summary.fanout_s, "tasks": summary.batches,
                "simulate_s": summary.simulate_s, "write_s": summary.write_s, "cpu": cpu}
    finally:
        shutil.rmtree(store_dir, ignore_errors=True)


def plain_loop(configs, seeds: tuple[int, ...]) -> dict:
    started, cpu_started = time.perf_counter(), time.process_time()
    for config in configs:
        for seed in seeds:
            simulate(config, seeds=[seed])
    return {"fanout_s": time.perf_counter() - started, "tasks": 0,
            "cpu": {"workers": time.process_time() - cpu_started, "daemons": 0.0, "driver": 0.0}}


def overhead(seeds: tuple[int, ...], repeat: int) -> list[dict]:
    configs = exp4c.GRID.configs(quick=True)
    plans = [SweepPlan("bench", configs, seeds)]
    runs = len(configs) * len(seeds)
    print(f"batch: exp4c quick grid, {len(configs)} configs x {len(seeds)} seeds = {runs} runs of 3600 simulated s; "
          f"each variant {repeat} times, interleaved, best and median shown")
    print(f"load average before: {load_average()} (on {os.cpu_count()} cores)")
    simulate(SimConfig(duration_s=1200, runtime_median_ms=20_000), seeds=[1])  # load numba's cache

    variants = {
        "plain loop, 1 process": lambda: plain_loop(configs, seeds),
        "ray_jobs, 1 worker, cold": lambda: sweep_once(plans, num_cpus=1),
        "ray_jobs, 1 worker, warm": lambda: sweep_once(plans, num_cpus=1, warm=True),
        "ray_jobs, 1 worker, warm, unbatched": lambda: sweep_once(plans, num_cpus=1, warm=True,
                                                                  batch_target_s=1e-9, max_batch_units=1),
        "ray_jobs, 2 workers, warm": lambda: sweep_once(plans, num_cpus=2, warm=True),
    }
    results = {name: [] for name in variants}
    for _ in range(repeat):
        for name, run in variants.items():
            results[name].append(run())
    best = {name: min(r["fanout_s"] for r in rs) for name, rs in results.items()}
    plain_s = best["plain loop, 1 process"]
    print("wall seconds (best, median) and CPU seconds (median: in the simulating process(es) | "
          "the Ray driver | Ray's daemons):")
    for name, rs in results.items():
        times = sorted(r["fanout_s"] for r in rs)
        cpu = {part: sorted(r["cpu"][part] for r in rs)[len(rs) // 2] for part in ("workers", "driver", "daemons")}
        tasks = f"{rs[0]['tasks']} tasks; " if rs[0]["tasks"] else ""
        print(f"  {name + ':':<38}best {times[0]:6.2f} s, median {times[len(times) // 2]:6.2f} s "
              f"({tasks}best {100 * (times[0] / plain_s - 1):+.1f}% vs plain); "
              f"CPU {cpu['workers']:.2f} | {cpu['driver']:.2f} | {cpu['daemons']:.2f} s")
    print("    cold = including the worker's start and first import of simcore; Ray start "
          f"({min(r['connect_s'] for r in results['ray_jobs, 1 worker, cold']):.1f} s) is never counted")
    one, unbatched = results["ray_jobs, 1 worker, warm"], results["ray_jobs, 1 worker, warm, unbatched"]
    extra_tasks = unbatched[0]["tasks"] - one[0]["tasks"]
    print(f"    per-task cost: {1000 * (best['ray_jobs, 1 worker, warm, unbatched'] - best['ray_jobs, 1 worker, warm']) / extra_tasks:.1f} ms "
          f"(best unbatched - best batched, over the {extra_tasks} extra tasks)")
    print(f"    speed-up 1 -> 2 workers: {best['ray_jobs, 1 worker, warm'] / best['ray_jobs, 2 workers, warm']:.2f}x (best vs best)")
    print(f"load average after: {load_average()}")
    rows = []
    for name, rs in results.items():
        times = sorted(r["fanout_s"] for r in rs)
        rows.append({"variant": name, "best_s": times[0], "median_s": times[len(times) // 2], "tasks": rs[0]["tasks"],
                     **{f"cpu_{part}_s": sorted(r["cpu"][part] for r in rs)[len(rs) // 2]
                        for part in ("workers", "driver", "daemons")},
                     "configs": len(configs), "seeds": len(seeds), "repeat": repeat, "cores": os.cpu_count()})
    return rows


def full(seeds: tuple[int, ...], duration_s: float) -> dict:
    grids = [exp4a.GRID, exp4b.GRID, exp4c.GRID]
    plans = [SweepPlan(g.experiment, g.configs(duration_s=duration_s), seeds) for g in grids]
    runs = sum(len(p.configs) * len(seeds) for p in plans)
    print(f"sweep: exp4a + exp4b + exp4c, {sum(len(p.configs) for p in plans)} configs x {len(seeds)} seeds = "
          f"{runs} runs of {duration_s:g} simulated s, {os.cpu_count()} cores")
    print(f"load average before: {load_average()}")
    store_dir = tempfile.mkdtemp(prefix="fanout-full-")
    try:
        started = time.perf_counter()
        store = ResultsStore(store_dir)
        work = find_work(plans, store)
        connect_started = time.perf_counter()
        connect_ray()
        connect_s = time.perf_counter() - connect_started
        try:
            cpu_before = ray_cpu_s()
            summary = run_sweep(work, store, progress=ProgressPrinter(live=False, interval_s=30))
            cpu_after = ray_cpu_s()
        finally:
            ray.shutdown()
        cpu = {part: cpu_after[part] - cpu_before[part] for part in cpu_after}
        total_s = time.perf_counter() - started
        print(f"load average after: {load_average()}")
        print(f"END TO END: {total_s:.1f} s wall ({total_s / 60:.2f} min), {summary.run} runs stored, "
              f"{summary.failed} failed")
        print(f"  Ray start {connect_s:.1f} s, store scan {summary.scan_s:.2f} s, fan-out {summary.fanout_s:.1f} s "
              f"({summary.batches} tasks), writes {summary.write_s:.2f} s in {summary.files_written} files")
        print(f"  CPU seconds during the fan-out: workers {cpu['workers']:.1f}, driver {cpu['driver']:.1f}, "
              f"Ray daemons {cpu['daemons']:.1f} (total / cores = {sum(cpu.values()) / os.cpu_count():.1f} s: "
              f"the fan-out's wall time on an otherwise idle machine, if perfectly balanced)")
        print(f"  simulation wall summed over workers: {summary.simulate_s:.1f} s "
              f"= {summary.simulate_s / os.cpu_count():.1f} s per core if perfectly balanced; "
              f"fan-out spent {summary.fanout_s - summary.simulate_s / os.cpu_count():.1f} s beyond that")
        rows = store.scan().table.select(["experiment", "inter_arrival_scale_ms", "provider", "num_tables",
                                          "fast_append_ratio", "catalog_latency_ms", "seed", "wall_s"]).to_pylist()
        by_experiment, by_scale = defaultdict(float), defaultdict(float)
        for row in rows:
            by_experiment[row["experiment"]] += row["wall_s"]
            by_scale[row["inter_arrival_scale_ms"]] += row["wall_s"]
        print("  simulation by experiment: " + ", ".join(f"{e} {s:.0f} s" for e, s in sorted(by_experiment.items())))
        print("  simulation by inter-arrival (ms): " + ", ".join(f"{int(k)}: {v:.0f} s" for k, v in sorted(by_scale.items())))
        print("  longest single runs:")
        for row in sorted(rows, key=lambda r: -r["wall_s"])[:5]:
            print(f"    {row['wall_s']:6.1f} s  {row['experiment']} {row['provider']} tables={row['num_tables']} "
                  f"FA={row['fast_append_ratio']} catalog_ms={row['catalog_latency_ms']} "
                  f"inter-arrival={row['inter_arrival_scale_ms']:g} seed={row['seed']}")
        return {"runs": runs, "seeds": len(seeds), "duration_s": duration_s, "cores": os.cpu_count(),
                "end_to_end_s": total_s, "runs_stored": summary.run, "runs_failed": summary.failed,
                "ray_start_s": connect_s, "store_scan_s": summary.scan_s, "fanout_s": summary.fanout_s,
                "tasks": summary.batches, "write_s": summary.write_s, "files_written": summary.files_written,
                "cpu_s": cpu, "simulate_s": summary.simulate_s,
                "simulate_s_by_experiment": dict(sorted(by_experiment.items())),
                "simulate_s_by_inter_arrival_ms": {f"{k:g}": v for k, v in sorted(by_scale.items())}}
    finally:
        shutil.rmtree(store_dir, ignore_errors=True)


def main(argv=None) -> int:
    prog = "python -m studies.fanout"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    modes = parser.add_subparsers(dest="mode", required=True)
    overhead_mode = modes.add_parser("overhead", help="ray_jobs vs a plain loop; 1 vs 2 workers")
    add_seeds_flag(overhead_mode)
    overhead_mode.add_argument("--repeat", type=int, default=3)
    add_out_flags(overhead_mode, "one row per variant, as CSV")
    full_mode = modes.add_parser("full", help="exp4a + exp4b + exp4c end to end")
    add_seeds_flag(full_mode)
    full_mode.add_argument("--duration-s", type=float, default=3600.0)
    add_out_flags(full_mode, "the breakdown, as JSON")
    args = parser.parse_args(argv)
    command = command_line(prog, argv)
    if args.mode == "overhead":
        out = out_path(args, "fanout", "overhead", "csv")
        write_csv(out, overhead(args.seeds, args.repeat), command)
    else:
        out = out_path(args, "fanout", "full", "json")
        write_json(out, full(args.seeds, args.duration_s), command)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
