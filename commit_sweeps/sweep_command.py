"""``commit-sweeps sweep`` and the command line every sweep script shares.

    python sweeps/exp4c.py [--seeds SEEDS] [--duration-s S] [--store URI] [--quick] [--max-parallel N]
                           [--latency-model reference|measured] [--provider-file PATH]
    commit-sweeps sweep exp4c [the same flags]

Order of work: parse flags, build and validate every config and check it
against the work bounds (a bad value exits 2 before Ray starts or the store
is touched), check the store is writable and take the lease on its
experiments (another live sweep on them: exit 2), connect to Ray, run,
print a summary and where the results are. Exit status: 0 when every run is
stored, 1 when some failed, 2 for bad input, 130 when interrupted.

The grids live in ``sweeps/`` (``sweeps.catalog`` lists them), the fan-out
and the store in ``ray_jobs``: ``commit-sweeps sweep exp4c --quick`` and
``python sweeps/exp4c.py --quick`` run the same thing.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import sys
from typing import Optional, Sequence

from simcore import bounds
from simcore.errors import ConfigError
from simcore.redaction import redact
from commit_sweeps.kernel_compile import prepare_kernels
from ray_jobs.grid import Grid, GridError
from ray_jobs.latency_variant import client_variant, latency_variant
from ray_jobs.lease import Lease
from ray_jobs.store import ResultsStore, StoreError
from commit_sweeps.flags import (EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, STORE_ENV, add_client_flag,
                                 add_duration_flag, add_latency_flags, add_max_memory_flag, add_protocol_flag,
                                 add_seeds_flag, add_store_flag, bad_input, memory_limit, positive_int)

DASHBOARD_URL = "http://127.0.0.1:8080"


def add_sweep_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags every command that runs simulations into the store shares: seeds, duration, store, parallelism,
    latency model and client (``commit_sweeps.flags``)."""
    add_seeds_flag(parser)
    add_duration_flag(parser)
    add_store_flag(parser)
    parser.add_argument("--max-parallel", type=positive_int, default=None, metavar="N",
                        help="at most N tasks at once (default: as many as the cluster has CPUs)")
    add_latency_flags(parser, variant=True)
    add_client_flag(parser, variant=True)
    add_protocol_flag(parser)


def add_plan_arguments(parser: argparse.ArgumentParser) -> None:
    """``--quick`` and ``--max-memory``: what a sweep of grids plans (``sweeps/<experiment>.py``, ``commit-sweeps
    sweep``)."""
    parser.add_argument("--quick", action="store_true",
                        help="run a small, representative subset of each grid (about a minute on 2 cores)")
    add_max_memory_flag(parser)


def build_parser(grids: Sequence[Grid], prog: Optional[str] = None) -> argparse.ArgumentParser:
    sizes = ", ".join(f"{g.experiment} ({len(g.points())} configs, quick {len(g.points(quick=True))})"
                      for g in grids)
    description = "; ".join(g.description for g in grids if g.description) or "Run a sweep."
    parser = argparse.ArgumentParser(
        prog=prog, description=f"{description}\nGrids: {sizes}.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=("Runs on the Ray cluster in RAY_ADDRESS when set (as `ray job submit` sets it),\n"
                "else on a local Ray using every core. Runs already in the store are skipped,\n"
                "so an interrupted sweep resumes where it stopped. Exit status: 0 all stored,\n"
                "1 some runs failed, 2 bad input (nothing run), 130 interrupted."))
    add_sweep_arguments(parser)
    add_plan_arguments(parser)
    return parser


def sweep_main(grids: Sequence[Grid], argv: Optional[Sequence[str]] = None, *,
               prog: Optional[str] = None, flush_interval_s: Optional[float] = None) -> int:
    """Entry point of a sweep script: ``sys.exit(sweep_main([GRID]))``.

    Args:
        grids: the experiments to sweep, together in one fan-out.
        argv: command-line arguments (default: ``sys.argv[1:]``).
        prog: program name for ``--help``.
        flush_interval_s: override how often rows are written (tests).
    """
    return run_sweep_command(grids, build_parser(grids, prog).parse_args(argv), flush_interval_s=flush_interval_s)


def run_sweep_command(grids: Sequence[Grid], args: argparse.Namespace, *,
                      flush_interval_s: Optional[float] = None) -> int:
    """Run ``grids`` with parsed sweep flags (``add_sweep_arguments`` and ``add_plan_arguments``); returns the exit
    status."""
    seeds = args.seeds

    # Every config is built, validated and checked against the work bounds, and the
    # store is checked writable, before anything runs or Ray starts.
    from ray_jobs.fanout import SweepPlan  # imports Ray: after the cheap checks above
    try:
        limit_bytes, limit_source = memory_limit(args.max_memory)
        if max(seeds) > bounds.MAX_STORED_SEED:  # the store keeps seeds as int64
            raise ConfigError("seeds", max(seeds), f"seeds <= {bounds.MAX_STORED_SEED} (the store's seed column "
                                                   f"is a signed 64-bit integer)")
        points = sum(len(g.points(quick=args.quick)) for g in grids)
        bounds.check_planned_runs(points * len(seeds), limit_bytes, limit_source, "seeds", len(seeds))
        # Another latency model is another experiment (ray_jobs/latency_variant.py).
        variants = [client_variant(g.experiment, args.client,
                                   latency_variant(g.experiment, args.latency_model, args.provider_file)) for g in grids]
        plans = [SweepPlan(v.apply(g).experiment,
                           g.configs(quick=args.quick, duration_s=args.duration_s, protocol=args.protocol,
                                     **v.overrides), seeds, args.quick,
                           g.compares.record() if g.compares else None)
                 for g, v in zip(grids, variants)]
        check_work_bounds(plans, limit_bytes, limit_source)
        store = ResultsStore(args.store)
        store.check_usable()
        # One writer per experiment: a second sweep on them refuses here (ray_jobs.lease).
        lease = Lease(args.store, [plan.experiment for plan in plans])
        lease.acquire()
    except (GridError, StoreError, ConfigError) as error:
        print(f"error: {error}\nNothing was run.", file=sys.stderr)
        return EXIT_BAD_INPUT
    warn_if_store_is_temporary(args.store)

    from ray_jobs.connect import ray_session
    from ray_jobs.fanout import find_work, run_sweep

    runs = sum(len(p.configs) * len(p.seeds) for p in plans)
    print(f"Sweeping {', '.join(f'{p.experiment} ({len(p.configs)} configs)' for p in plans)}"
          f"{' [quick]' if args.quick else ''} x {len(seeds)} seeds = {runs} runs of {args.duration_s:g} "
          f"simulated s; store {store.location()}", flush=True)
    try:
        work = find_work(plans, store)
        print(f"{len(work.todo)} runs to do, {runs - len(work.todo)} already stored", flush=True)
        if work.todo and not os.environ.get("RAY_ADDRESS"):
            # A local Ray's workers share this machine's kernel cache: compile here once, not in each.
            prepare_kernels(unit.config for unit in work.todo)
        # A finished sweep needs no cluster.
        with ray_session(args.max_parallel, connect=bool(work.todo)) as session:
            options = {"max_memory_bytes": limit_bytes}
            if flush_interval_s is not None:
                options["flush_interval_s"] = flush_interval_s
            summary = run_sweep(work, store, max_parallel=args.max_parallel, guard=lease.check, **options)
    except StoreError as error:
        print(f"error: {error}\nRows already written are kept; rerun to resume.", file=sys.stderr)
        return EXIT_FAILED
    except ConfigError as error:  # the cluster named cannot be reached (ray_jobs.connect): nothing ran
        return bad_input(error)
    except KeyboardInterrupt:  # before the fan-out started: nothing to save
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        lease.release()
    connect_s = session.connect_s
    print(format_summary(summary, args.store, connect_s), flush=True)
    if summary.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_OK if summary.ok else EXIT_FAILED


def check_work_bounds(plans, limit_bytes: int, limit_source: str) -> None:
    """Every config of every plan within the work bounds (simcore.bounds), else a WorkBoundError naming it."""
    for plan in plans:
        for config in plan.configs:
            try:
                bounds.check(config, limit_bytes, limit_source)
            except bounds.WorkBoundError as error:
                raise bounds.WorkBoundError(f"{plan.experiment}: {error.field}", error.value,
                                            f"{error.allowed} (config {config.config_hash})") from error


def format_summary(summary, store_uri: str, connect_s: float = 0.0) -> str:
    """The closing report: counts, failures, time, and where to look next."""
    lines = []
    for c in summary.counts:
        line = f"{c.experiment}: {c.total} runs: {c.run} run, {c.skipped} skipped (already stored), {c.failed} failed"
        lines.append(line + (f", {c.not_run} not run (interrupted)" if c.not_run else ""))
    if len(summary.counts) > 1:
        lines.append(f"all: {summary.total} runs: {summary.run} run, {summary.skipped} skipped, "
                     f"{summary.failed} failed")
    lines.append(f"time: Ray start {connect_s:.1f} s, then {summary.wall_s:.1f} s = store scan {summary.scan_s:.1f} s + fan-out "
                 f"{summary.fanout_s:.1f} s ({summary.batches} tasks, {summary.simulate_s:.1f} s of simulation "
                 f"summed over workers; {summary.write_s:.1f} s writing {summary.files_written} files)")
    shown = summary.failures[:20]
    if shown:
        lines.append(f"FAILED ({summary.failed}):")
        lines += ["  " + failure.describe() for failure in shown]
        if summary.failed > len(shown):
            lines.append(f"  ... and {summary.failed - len(shown)} more (see the log above)")
    for bad in summary.unreadable:
        lines.append(bad.describe())
    quoted = shlex.quote(redact(store_uri, store_uri))  # a command to copy, its credentials masked
    command = console_command()
    lines += [f"Results:   {ResultsStore(store_uri).location()}",
              f"Status:    {command} status --store {quoted}",
              f"Dashboard: {command} dashboard serve --store {quoted}   (then open {DASHBOARD_URL})"]
    return "\n".join(lines)


def console_command() -> str:
    """``commit-sweeps`` as the user's shell can run it: the bare name when the shell finds this installation's
    script on PATH, else that script's path (``.venv/bin/commit-sweeps`` after the README's setup, which never
    activates the venv), else this interpreter with ``-m commit_sweeps``.

    The script is looked for beside ``sys.executable``, unresolved: a venv's python is a link to the system's,
    and the script lives in the venv.
    """
    script = os.path.join(os.path.dirname(sys.executable), "commit-sweeps")
    on_path = shutil.which("commit-sweeps")
    if os.path.isfile(script) and os.access(script, os.X_OK):
        if on_path and os.path.samefile(on_path, script):
            return "commit-sweeps"
        return shlex.quote(_path_to_type(script))
    if on_path:
        return "commit-sweeps"
    return f"{shlex.quote(_path_to_type(sys.executable))} -m commit_sweeps"


def _path_to_type(path: str) -> str:
    """``path`` relative to the working directory when it is below it (with a slash, so the shell does not
    look it up on PATH), else absolute."""
    try:
        absolute = os.path.abspath(path)
        relative = os.path.relpath(absolute)
    except (OSError, ValueError):  # no working directory left: the path as given (sys.executable's is absolute)
        return path
    if relative.startswith(os.pardir):
        return absolute
    return relative if os.sep in relative else os.path.join(os.curdir, relative)


def warn_if_store_is_temporary(store_uri: str) -> None:
    # A job started by `ray job submit` runs in a temporary copy of the working
    # directory on the head node: a relative store would end up (and be lost) there.
    if "RAY_JOB_CONFIG_JSON_ENV_VAR" in os.environ and "://" not in store_uri and not os.path.isabs(store_uri):
        print(f"warning: running as a Ray job with the relative store {store_uri!r}: it resolves to "
              f"{os.path.abspath(store_uri)}, inside the job's temporary working directory. Pass --store with an "
              f"absolute path or an s3:// URI, or set {STORE_ENV}.", file=sys.stderr, flush=True)


SWEEP_HELP = "run experiments' grids into the results store (resumes; skips what is stored)"


def configure_by_name(parser: argparse.ArgumentParser) -> None:
    """``commit-sweeps sweep EXPERIMENT...``: the declared experiments (``sweeps.catalog``), by name."""
    from sweeps.catalog import EXPERIMENTS, SEED001

    names = ", ".join(EXPERIMENTS)
    parser.add_argument("experiments", nargs="+", metavar="EXPERIMENT", choices=[*EXPERIMENTS, "all"],
                        help=f"one or more of {names}; 'all' is seed 001's "
                             f"({', '.join(grid.experiment for grid in SEED001)})")
    add_sweep_arguments(parser)
    add_plan_arguments(parser)


def run_by_name(args: argparse.Namespace) -> int:
    """Sweep the experiments ``configure_by_name``'s flags name, together in one fan-out."""
    from sweeps.catalog import EXPERIMENTS, SEED001

    grids = []
    for name in args.experiments:
        for grid in (SEED001 if name == "all" else (EXPERIMENTS[name],)):
            if grid not in grids:
                grids.append(grid)
    return run_sweep_command(grids, args)
