"""The command line every sweep script shares.

    python sweeps/exp4c.py [--seeds SEEDS] [--duration-s S] [--store URI] [--quick] [--max-parallel N]
    commit-sweeps sweep exp4c [the same flags]

Order of work: parse flags, build and validate every config (a bad value
exits 2 before Ray starts or the store is touched), connect to Ray, run,
print a summary and where the results are. Exit status: 0 when every run is
stored, 1 when some failed, 2 for bad input, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from typing import Optional, Sequence

from simcore.cli import SEEDS_HELP, parse_seeds
from simcore.config import ConfigError
from ray_jobs.grid import Grid, GridError
from ray_jobs.store import STORE_ENV, ResultsStore, StoreError, default_store_uri

DEFAULT_SEEDS = 3
DEFAULT_DURATION_S = 3600.0
DASHBOARD_URL = "http://127.0.0.1:8080"

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; expected an integer >= 1")
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not allowed; expected an integer >= 1")
    return value


def seeds_value(text: str) -> tuple[int, ...]:
    """``--seeds`` as every command reads it (``simcore.cli.parse_seeds``), for argparse."""
    try:
        return parse_seeds(text)
    except ConfigError as error:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed; expected {error.allowed}") from None


def add_sweep_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags every command that runs simulations into the store shares: seeds, duration, store, quick, parallelism."""
    parser.add_argument("--seeds", type=seeds_value, default=tuple(range(1, DEFAULT_SEEDS + 1)), metavar="SEEDS",
                        help=f"seeds of every config: {SEEDS_HELP} (default {DEFAULT_SEEDS})")
    parser.add_argument("--duration-s", type=float, default=DEFAULT_DURATION_S, metavar="S",
                        help=f"simulated seconds per run (default {DEFAULT_DURATION_S:g}); must exceed twice the "
                             f"warm-up, 1800 s with the default runtime")
    parser.add_argument("--store", default=default_store_uri(), metavar="URI",
                        help=f"results store: a directory or a pyarrow URI such as s3://bucket/prefix "
                             f"(default ${STORE_ENV} if set, else ./results; now {default_store_uri()})")
    parser.add_argument("--max-parallel", type=positive_int, default=None, metavar="N",
                        help="at most N tasks at once (default: as many as the cluster has CPUs)")


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
    parser.add_argument("--quick", action="store_true",
                        help="run a small, representative subset of the grid (about a minute on 2 cores)")
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
    """Run ``grids`` with parsed sweep flags (``add_sweep_arguments`` and ``--quick``); returns the exit status."""
    seeds = args.seeds

    # Every config is built, and so validated, before anything runs.
    from ray_jobs.fanout import SweepPlan  # imports Ray: after the cheap checks above
    try:
        plans = [SweepPlan(g.experiment, g.configs(quick=args.quick, duration_s=args.duration_s), seeds, args.quick,
                           g.compares.record() if g.compares else None)
                 for g in grids]
        store = ResultsStore(args.store)
    except (GridError, StoreError) as error:
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
        # A finished sweep needs no cluster.
        with ray_session(args.max_parallel, connect=bool(work.todo)) as session:
            options = {} if flush_interval_s is None else {"flush_interval_s": flush_interval_s}
            summary = run_sweep(work, store, max_parallel=args.max_parallel, **options)
    except StoreError as error:
        print(f"error: {error}\nRows already written are kept; rerun to resume.", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:  # before the fan-out started: nothing to save
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    connect_s = session.connect_s
    print(format_summary(summary, args.store, connect_s), flush=True)
    if summary.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_OK if summary.ok else EXIT_FAILED


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
        lines.append(f"UNREADABLE (rows counted as missing and run again): {bad.path}: {bad.reason}")
    quoted = shlex.quote(store_uri)
    lines += [f"Results:   {ResultsStore(store_uri).location()}",
              f"Status:    commit-sweeps status --store {quoted}",
              f"Dashboard: commit-sweeps dashboard serve --store {quoted}   (then open {DASHBOARD_URL})"]
    return "\n".join(lines)


def warn_if_store_is_temporary(store_uri: str) -> None:
    # A job started by `ray job submit` runs in a temporary copy of the working
    # directory on the head node: a relative store would end up (and be lost) there.
    if "RAY_JOB_CONFIG_JSON_ENV_VAR" in os.environ and "://" not in store_uri and not os.path.isabs(store_uri):
        print(f"warning: running as a Ray job with the relative store {store_uri!r}: it resolves to "
              f"{os.path.abspath(store_uri)}, inside the job's temporary working directory. Pass --store with an "
              f"absolute path or an s3:// URI, or set {STORE_ENV}.", file=sys.stderr, flush=True)


STATUS_HELP = "per experiment: configs done of total, seeds, last update"


def configure_status(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", default=default_store_uri(), metavar="URI",
                        help=f"results store (default ${STORE_ENV} if set, else ./results)")


def run_status(args: argparse.Namespace) -> int:
    """Print what the store holds; exit 1 when some file is unreadable, 2 when the store cannot be read."""
    from ray_jobs.status import format_status, store_status

    try:
        store = ResultsStore(args.store)
        started = time.perf_counter()
        report = store_status(store)
    except StoreError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(format_status(report, read_s=time.perf_counter() - started))
    return EXIT_FAILED if report.unreadable else EXIT_OK


def status_main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m ray_jobs status --store URI``."""
    parser = argparse.ArgumentParser(prog="python -m ray_jobs",
                                     description="Inspect a results store written by the sweeps.")
    commands = parser.add_subparsers(dest="command", required=True)
    configure_status(commands.add_parser("status", help=STATUS_HELP))
    return run_status(parser.parse_args(argv))
