"""simcore speed and memory, optionally against the reference simulator.

With no mode flag (``python -m benchmarks.speed``): the speed guard. Per-seed
time of a fixed set of configs (``GUARD_CONFIGS``: two reference-protocol
configs, a throttled GCS one, a writers one, a client-preset one, and the two
reference ones again under the corrected protocol)
and the whole-process time of a short one-seed run, against every baseline
stored in ``benchmarks/speed_baseline.json`` (an earlier release's figures,
with the machine, date and commit they were measured at), as a ratio: above
1.0 is slower than that baseline. ``--save-baseline`` stores this
measurement as the baseline of the measured commit (replacing an older one of
the same commit); ``--tree PATH`` measures the simcore of another checkout
(an older release, to record its baseline on this machine). Times are medians
over ``--repeats`` of CPU time (the process's own; for the start-up figure,
the whole child process's user + system time), not wall time, which other
processes on a shared machine stretch far more; still, compare figures taken
while the machine was about as busy.

Three more measurements, each printed as a small table:

1. ``--reference``: per-configuration wall time of the reference
   (cdouglas/endive, run from a local checkout) and of simcore on a spread of
   exp4 configs, heavy high-load VO ones included, at the same simulated
   duration; the median speed-up.
2. ``--grid``: the whole exp4a+4b+4c grid (1,380 configs) x N seeds through a
   process pool of ``--jobs`` workers; wall time and the CPU time summed over
   the workers.
3. ``--memory``: peak resident memory of one process simulating the heaviest
   config.

    python -m benchmarks.speed                      # the guard, against the stored baselines
    python -m benchmarks.speed --tree ../old-checkout --save-baseline
    python -m benchmarks.speed --grid --memory
    python -m benchmarks.speed --reference --endive ../endive --endive-python ../endive-venv/bin/python \
        --duration-s 1900
    python -m benchmarks.speed --reference --whole-process --seeds 4 --endive ../endive \
        --endive-python ../endive-venv/bin/python     # whole processes, four seeds
        [--cpu-time]                                  # ... in CPU time, for a machine that is not idle
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from multiprocessing import get_context

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)  # run from a checkout, as a script too

from benchmarks.baseline import git_commit, machine  # noqa: E402
from simcore import SimConfig, simulate  # noqa: E402
from commit_sweeps.flags import add_seeds_flag  # noqa: E402

DRIVER = os.path.join(ROOT, "studies", "fidelity", "reference_driver.py")  # the reference, run on one config
BASELINE_PATH = os.path.join(ROOT, "benchmarks", "speed_baseline.json")

# The speed guard's configs, as `python -m simcore run` flags (so an older checkout, whose Python API may
# differ, runs them too; a flag it does not know gives no figure). The first two are reference-protocol
# configs; then one per model feature that has a cost of its own, all under the published protocol (the
# only one an older checkout may have: it runs them without the flag); then the two reference configs under
# the corrected protocol, the default.
GUARD_CONFIGS = (
    ("s3 storage 50t FA1.0 50ms", "--provider s3 --catalog storage --num-tables 50 --fast-append-ratio 1.0 "
                                  "--inter-arrival-scale-ms 50 --protocol published"),
    ("s3 service 1ms 1t FA0.9 100ms", "--provider s3 --catalog service --catalog-latency-ms 1 --num-tables 1 "
                                      "--fast-append-ratio 0.9 --inter-arrival-scale-ms 100 --protocol published"),
    ("gcp throttled 10t FA0.9 500ms", "--provider gcp --catalog storage --num-tables 10 --fast-append-ratio 0.9 "
                                      "--inter-arrival-scale-ms 500 --throttle-object-writes --protocol published"),
    ("writers 100x60s + 2 maint, iceberg-java", "--provider s3 --catalog storage --num-tables 10 "
                                                "--fast-append-ratio 1.0 --client iceberg-java --writers 100 "
                                                "--commit-interval-s 60 --maintenance-jobs 2 "
                                                "--maintenance-interval-s 600 --protocol published"),
    ("client iceberg-java 10t FA0.9 100ms", "--provider s3 --catalog storage --num-tables 10 --fast-append-ratio 0.9 "
                                            "--client iceberg-java --inter-arrival-scale-ms 100 --protocol published"),
    ("corrected: s3 storage 50t FA1.0 50ms", "--provider s3 --catalog storage --num-tables 50 "
                                             "--fast-append-ratio 1.0 --inter-arrival-scale-ms 50 --protocol corrected"),
    ("corrected: s3 service 1ms 1t FA0.9 100ms", "--provider s3 --catalog service --catalog-latency-ms 1 "
                                                 "--num-tables 1 --fast-append-ratio 0.9 "
                                                 "--inter-arrival-scale-ms 100 --protocol corrected"),
)
GUARD_SEEDS = (1, 2, 3, 4)
# The start-up figure: a whole `python -m simcore run` process for one seed of a light config.
START_UP_FLAGS = ("--provider s3 --catalog storage --num-tables 1 --fast-append-ratio 1.0 "
                  "--inter-arrival-scale-ms 100 --duration-s 1801 --seeds 1 --json")
START_UP = "start-up: one short seed, whole process"

# Runs in a fresh interpreter whose simcore is the measured tree's: builds the config from the run command's
# flags (the parser of that tree), loads the kernels with one seed, then times the seeds `repeats` times.
# CPU time of the process, not wall: other processes on a shared machine stretch wall time far more.
_GUARD_DRIVER = """
import json, shlex, sys, time
from simcore import simulate
try:
    from commit_sweeps.simcore_command import build_parser
    from commit_sweeps.simulate_command import config_of
except ImportError:  # a tree whose command line was still simcore.cli
    from simcore import cli
    build_parser = cli.build_parser
    config_of = cli.config_of if hasattr(cli, "config_of") else cli._config_from_args
flags, duration, seeds, repeats = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
def parse(words):
    return build_parser().parse_args(["run", *words, "--duration-s", duration, "--seeds", "1"])
words = shlex.split(flags)
def parse_or_none(words):
    try:
        return parse(words)
    except (SystemExit, Exception):  # a flag this version does not have
        return None
args = parse_or_none(words)
if args is None and flags.endswith("--protocol published"):  # a version from before the flag has only this one
    args = parse_or_none(words[:-2])
if args is None:
    print("null"); sys.exit(0)
config = config_of(args)
simulate(config, seeds[:1])
times = []
for _ in range(repeats):
    started = time.process_time()
    simulate(config, seeds)
    times.append((time.process_time() - started) / len(seeds))
print(json.dumps(sorted(times)[len(times) // 2]))
"""


def exp4_grid(duration_s: float = 3600.0) -> list[SimConfig]:
    """exp4a, exp4b and exp4c (1,380 configs), from the sweep scripts' own grids."""
    from sweeps import exp4a, exp4b, exp4c

    return [c for grid in (exp4a.GRID, exp4b.GRID, exp4c.GRID) for c in grid.configs(duration_s=duration_s)]


def spread(duration_s: float) -> list[SimConfig]:
    """A spread of exp4 configs from light to the heaviest high-load VO ones."""
    d = dict(duration_s=duration_s, protocol="published")  # the reference's snapshot runs the published protocol
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


# A whole simcore process, as a user runs it: imports, Numba's start, the seeds, the summaries.
_WHOLE_PROCESS = ("import json, sys; from simcore import SimConfig, simulate; "
                  "simulate(SimConfig.from_dict(json.loads(sys.argv[1])), json.loads(sys.argv[2]))")


def _child_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _time_simcore_process(config: SimConfig, seeds, cpu_time: bool = False) -> float:
    """Seconds of one fresh ``python`` process simulating ``seeds`` of ``config`` (best of three): wall, or
    with ``cpu_time`` the process's user + system CPU time."""
    best = float("inf")
    for _ in range(3):
        started, cpu_started = time.perf_counter(), _child_cpu_s()
        subprocess.run([sys.executable, "-c", _WHOLE_PROCESS, json.dumps(config.to_dict()), json.dumps(list(seeds))],
                       check=True, cwd=ROOT, capture_output=True)
        took = _child_cpu_s() - cpu_started if cpu_time else time.perf_counter() - started
        best = min(best, took)
    return best


def _limit_cpu(seconds: float):
    """A preexec function: the child is stopped (SIGXCPU, then SIGKILL) after ``seconds`` of CPU time."""
    def limit():
        whole = max(1, int(seconds))
        resource.setrlimit(resource.RLIMIT_CPU, (whole, whole + 5))
    return limit


def _time_reference(config: SimConfig, seed: int, endive: str, python: str, timeout_s: float,
                    cpu_time: bool = False) -> tuple[float, bool]:
    """(seconds, finished); a run stopped at ``timeout_s`` gives a lower bound. Wall seconds, or with
    ``cpu_time`` CPU seconds with the limit on CPU time too (so other processes on the machine change
    neither the figure nor where the run is stopped)."""
    with tempfile.TemporaryDirectory() as workdir:
        out = os.path.join(workdir, "ref.parquet")
        started, cpu_started = time.perf_counter(), _child_cpu_s()
        command = [python, DRIVER, json.dumps(config.to_dict()), str(seed), out]
        environment = {**os.environ, "PYTHONPATH": endive}
        if cpu_time:
            done = subprocess.run(command, cwd=workdir, env=environment, capture_output=True,
                                  preexec_fn=_limit_cpu(timeout_s))
            took = _child_cpu_s() - cpu_started
            if done.returncode != 0 and took < 0.9 * timeout_s:  # failed, not stopped
                raise RuntimeError(f"the reference failed: {done.stderr.decode()[-500:]}")
            return took, done.returncode == 0
        try:
            subprocess.run(command, check=True, cwd=workdir, env=environment, capture_output=True,
                           timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return time.perf_counter() - started, False
        return time.perf_counter() - started, True


def reference_comparison(args) -> None:
    """Each simulator's wall time per config of the spread, and the median speed-up.

    By default one in-process simcore run of seed 1 against one reference process. With
    ``--whole-process`` each simulator as a user runs it: one simcore process for
    all of ``--seeds`` (imports and Numba's start included), one reference process per seed (its driver
    runs one), summed.
    """
    seeds = list(args.seeds) if args.whole_process else [1]
    how = "whole process" if args.whole_process else "one run at a time"
    how += ", CPU time" if args.cpu_time else ", wall time"
    print(f"\n== simcore vs reference, {args.duration_s:g} simulated s, seeds {','.join(map(str, seeds))}, {how} ==")
    print(f"(a reference run still going after {args.reference_timeout_s:g} s{' of CPU' if args.cpu_time else ''} "
          "is stopped: its time and speed-up are lower bounds, marked >=)")
    print(f"{'config':62s} {'reference s':>12s} {'simcore s':>10s} {'speed-up':>9s}")
    simulate(spread(args.duration_s)[0], [1])  # compile / load the cache first
    ratios = []
    for config in spread(args.duration_s):
        ours = (_time_simcore_process(config, seeds, args.cpu_time) if args.whole_process
                else _time_simcore(config, 1))
        theirs, finished = 0.0, True
        for seed in seeds:
            took, done = _time_reference(config, seed, args.endive, args.endive_python, args.reference_timeout_s,
                                         args.cpu_time)
            theirs, finished = theirs + took, finished and done
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


def _tree_env(tree: str) -> dict:
    return {**os.environ, "PYTHONPATH": tree}


def guard_measure(tree: str, duration_s: float, repeats: int, progress=print) -> dict:
    """{config name: median CPU seconds per seed, or None where the tree cannot run it; START_UP: the short run's
    CPU seconds, the whole process (user + system)}."""
    figures = {}
    for name, flags in GUARD_CONFIGS:
        out = subprocess.run([sys.executable, "-c", _GUARD_DRIVER, flags, f"{duration_s:g}", json.dumps(GUARD_SEEDS),
                              str(repeats)], cwd=tree, env=_tree_env(tree), capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"{name}: the driver failed in {tree}: {out.stderr.strip().splitlines()[-1:]}")
        figures[name] = json.loads(out.stdout)
        progress(f"  measured {name}", file=sys.stderr)
    cpu = []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-m", "simcore", "run", *START_UP_FLAGS.split()], cwd=tree,
                       env=_tree_env(tree), capture_output=True, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    figures[START_UP] = statistics.median(cpu)
    return figures


def load_baselines(path: str) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path) as handle:
        return json.load(handle)["baselines"]


def save_baseline(path: str, entry: dict) -> None:
    """Store ``entry`` beside the others, in the place of one of the same commit (else last); written whole,
    then renamed, so a crash leaves the old file."""
    baselines = load_baselines(path)
    commits = [b["commit"] for b in baselines]
    if entry["commit"] in commits:
        baselines[commits.index(entry["commit"])] = entry
    else:
        baselines.append(entry)
    partial = path + ".partial"
    with open(partial, "w") as handle:
        json.dump({"what": "benchmarks/speed.py guard figures: median CPU seconds per seed of each config "
                           f"({len(GUARD_SEEDS)} seeds per timing), and whole-process CPU seconds of '{START_UP}'",
                   "baselines": baselines}, handle, indent=1)
        handle.write("\n")
    os.replace(partial, path)


def _cell(seconds) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f} ms"


def guard(args) -> None:
    tree = os.path.abspath(args.tree or ROOT)
    commit = git_commit(tree)
    print(f"== speed guard: {tree} (commit {commit}), {args.duration_s:g} simulated s, seeds "
          f"{','.join(map(str, GUARD_SEEDS))}, CPU time, median of {args.repeats}; ratio > 1: slower than then ==")
    load_before = os.getloadavg()[0]
    figures = guard_measure(tree, args.duration_s, args.repeats)
    load = f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
    print(f"(1-minute load average while measuring: {load}; {os.cpu_count()} CPUs)")
    baselines = [b for b in load_baselines(args.baseline) if b["duration_s"] == args.duration_s]
    header = f"{'config':42s} {'per seed':>10s}" + "".join(f" {b['commit']:>10s} {'ratio':>6s}" for b in baselines)
    print(header)
    for name in [name for name, _ in GUARD_CONFIGS] + [START_UP]:
        line = f"{name:42s} {_cell(figures[name]):>10s}"
        for b in baselines:
            then = b["seconds"].get(name)
            ratio = f"{figures[name] / then:.2f}" if then and figures[name] else "-"
            line += f" {_cell(then):>10s} {ratio:>6s}"
        print(line)
    for b in baselines:
        busy = f", load average {b['load_average']}" if b.get("load_average") else ""
        print(f"baseline {b['commit']}: measured {b['date']} on {b['machine']}{busy}")
    if not baselines:
        print(f"(no stored baseline at {args.duration_s:g} s in {args.baseline})")
    if args.save_baseline:
        save_baseline(args.baseline, {"commit": commit, "date": datetime.date.today().isoformat(),
                                      "machine": machine(), "load_average": load, "duration_s": args.duration_s,
                                      "repeats": args.repeats,
                                      "seconds": figures})
        print(f"stored as the baseline of {commit} in {args.baseline}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", action="store_true", help="time the reference beside simcore")
    parser.add_argument("--endive", help="path of a cdouglas/endive checkout (for --reference)")
    parser.add_argument("--endive-python", default=sys.executable, help="a Python that runs the reference")
    parser.add_argument("--whole-process", action="store_true",
                        help="with --reference: time each simulator as a whole process over --seeds instead of "
                             "one in-process run of seed 1")
    parser.add_argument("--cpu-time", action="store_true",
                        help="with --reference --whole-process: compare CPU time (user + system) of the "
                             "processes, and stop a reference run after --reference-timeout-s of CPU; other "
                             "processes on a shared machine then change neither figure")
    parser.add_argument("--reference-timeout-s", type=float, default=900.0,
                        help="stop a reference run after this long and report a lower bound (default 900)")
    parser.add_argument("--grid", action="store_true", help="time the whole exp4 grid")
    parser.add_argument("--memory", action="store_true", help="peak memory of the heaviest config")
    parser.add_argument("--duration-s", type=float, default=3600.0, help="simulated seconds (default 3600)")
    add_seeds_flag(parser)  # of each config, for --grid
    parser.add_argument("--jobs", type=int, default=os.cpu_count(), help="worker processes for --grid")
    parser.add_argument("--baseline", default=BASELINE_PATH, help="the guard's baseline file (default %(default)s)")
    parser.add_argument("--save-baseline", action="store_true",
                        help="store this measurement as the baseline of the measured commit")
    parser.add_argument("--tree", default=None, help="measure the simcore of this checkout (default: this one)")
    parser.add_argument("--repeats", type=int, default=5, help="guard: timings per config, median reported")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error(f"--repeats: {args.repeats} is not allowed; expected an integer >= 1")
    if not (args.reference or args.grid or args.memory):
        guard(args)
        return
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
