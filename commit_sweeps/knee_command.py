"""``commit-sweeps knee`` (also ``python sweeps/knee.py``): each curve's knee, searched to a tolerance.

    python sweeps/knee.py --experiment exp4c [--quick] [--store URI] [--seeds SEEDS] [--duration-s S]
                          [--max-parallel N] [--tolerance F] [--min-scale-ms MS] [--max-scale-ms MS]
                          [--latency-model reference|measured] [--provider-file PATH]

Order of work, as in ``commit_sweeps.sweep_command``: parse and validate every flag and
every curve (bad input exits 2 before Ray starts or the store is touched),
read what the store already holds, search what is left on Ray
(``ray_jobs.knee_search``), write the JSON summary, print the outcome. Exit status: 0 when every curve's
search ended, 1 when some curve failed, 2 for bad input, 130 when
interrupted (rerun to resume).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Mapping, Optional, Sequence

from simcore.bisection import SearchRange, SearchRangeError, same_resolution_grid_points
from simcore.errors import ConfigError
from simcore.usable import ERROR, FINAL_STATUSES, USABLE_SUCCESS_THRESHOLD
from simcore.redaction import redact
from ray_jobs.grid import Grid, GridError
from ray_jobs.latency_variant import client_variant, latency_variant
from ray_jobs.knee_curves import curves_from_grid, evidence_from_rows, knee_experiment_name
from ray_jobs.lease import Lease
from ray_jobs.store import ResultsStore, StoreError
from commit_sweeps.flags import (EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, add_search_range_flags,
                                 bad_input, given_memory_limit, positive_int, search_range_of)
from commit_sweeps.sweep_command import (DASHBOARD_URL, add_sweep_arguments, console_command,
                                         warn_if_store_is_temporary)


def build_parser(grids: Mapping[str, Grid], prog: Optional[str] = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, formatter_class=argparse.RawDescriptionHelpFormatter)
    configure(parser, grids)
    return parser


_CURVE_COUNTS = "{curve counts}"  # in the description until help is shown; see configure


def _curve_counts(grids: Mapping[str, Grid]) -> str:
    return ", ".join(f"{name} ({len(curves_from_grid(grid))} curves, quick {len(curves_from_grid(grid, quick=True))})"
                     for name, grid in grids.items())


def configure(parser: argparse.ArgumentParser, grids: Mapping[str, Grid]) -> None:
    """The knee search's flags: ``python sweeps/knee.py`` and ``commit-sweeps knee``."""

    class CountCurvesInHelp(argparse.RawDescriptionHelpFormatter):
        # Counting the curves builds every config of every grid (about a second): done when help is shown,
        # not each time the parser is built, which every `commit-sweeps` command does.
        def add_text(self, text):
            super().add_text(text.replace(_CURVE_COUNTS, _curve_counts(grids)) if text else text)

    parser.formatter_class = CountCurvesInHelp
    parser.description = ("Find each curve's knee (the highest commit rate whose success rate stays above "
                          f"{USABLE_SUCCESS_THRESHOLD:.0%}, VO "
                          "success where the mix has VO) to within a tolerance, by bracketing and bisecting the "
                          f"inter-arrival scale on Ray.\nExperiments: {_CURVE_COUNTS}.")
    parser.epilog = ("Rows go to the experiment <name>_knee of the store (one per point and seed), a summary to\n"
                     "<store>/_knee/<name>.json. Runs on the Ray cluster in RAY_ADDRESS when set, else on a local\n"
                     "Ray. Points already in the store are not run again: a finished curve costs nothing and an\n"
                     "interrupted search resumes. Exit status: 0 every search ended, 1 some curve failed, 2 bad\n"
                     "input (nothing run), 130 interrupted.")
    parser.add_argument("--experiment", required=True, choices=list(grids), metavar="NAME",
                        help=f"whose curves to search: one of {', '.join(grids)}")
    parser.add_argument("--quick", action="store_true",
                        help="search a few representative curves only (about a minute on 2 cores)")
    add_sweep_arguments(parser)
    add_search_range_flags(parser)
    parser.add_argument("--probes-per-curve", type=positive_int, default=None, metavar="N",
                        help="at most N points of one curve at once (default: 1, more when the cluster has "
                             "more CPUs than curves left)")


def knee_main(grids: Mapping[str, Grid], argv: Optional[Sequence[str]] = None, *,
              prog: Optional[str] = None, flush_interval_s: Optional[float] = None) -> int:
    """Entry point of ``sweeps/knee.py``: ``sys.exit(knee_main(KNEE_GRIDS))``.

    Args:
        grids: experiment name -> its grid, whose ``quick`` subset is the
            knee search's (the inter-arrival values are ignored: the search
            picks its own).
        argv: command-line arguments (default: ``sys.argv[1:]``).
        prog: program name for ``--help``.
        flush_interval_s: override how often rows are written (tests).
    """
    return run_knee_command(grids, build_parser(grids, prog).parse_args(argv), flush_interval_s=flush_interval_s)


def run_knee_command(grids: Mapping[str, Grid], args: argparse.Namespace, *,
                     flush_interval_s: Optional[float] = None) -> int:
    """Search the knees of ``args.experiment``'s curves with parsed flags; returns the exit status."""
    seeds = args.seeds
    try:
        search_range = search_range_of(args)
        limit = given_memory_limit()  # $SIMCORE_MAX_MEMORY, else each worker's machine's default
        variant = client_variant(args.experiment, args.client,
                                 latency_variant(args.experiment, args.latency_model, args.provider_file))
        curves = curves_from_grid(variant.apply(grids[args.experiment]), quick=args.quick, duration_s=args.duration_s,
                                  protocol=args.protocol, **variant.overrides)
        store = ResultsStore(args.store)
        store.check_usable()
        knee_experiment = knee_experiment_name(args.experiment)
        # One writer per experiment, as for sweeps: a second search of it refuses here.
        lease = Lease(args.store, [knee_experiment])
        lease.acquire()
    except (SearchRangeError, GridError, StoreError, ConfigError) as error:
        print(f"error: {error}\nNothing was run.", file=sys.stderr)
        return EXIT_BAD_INPUT
    warn_if_store_is_temporary(args.store)
    experiment = variant.apply(grids[args.experiment]).experiment
    knee_experiment = knee_experiment_name(experiment)
    print(f"Knee search over {experiment} ({len(curves)} curves){' [quick]' if args.quick else ''}: "
          f"{search_range.min_scale_ms:g}-{search_range.max_scale_ms:g} ms to {100 * search_range.tolerance:g}% "
          f"in rate, {len(seeds)} seeds per point, {args.duration_s:g} simulated s per run; rows to "
          f"{knee_experiment} in {store.location()}", flush=True)

    # Ray loads only once the input is known to be good.
    from ray_jobs.connect import ray_session
    from ray_jobs.knee_search import curves_done, run_knee_search
    from ray_jobs.knee_summary import read_summary, run_summary, write_summary

    options = {} if flush_interval_s is None else {"flush_interval_s": flush_interval_s}
    try:
        scan = store.scan([knee_experiment])
        for bad in scan.unreadable:
            print("warning: " + bad.describe(), file=sys.stderr)
        evidence = evidence_from_rows(scan.table, curves)
        left = curves_done(curves, seeds, search_range, evidence).count(False)
        print(f"{left} curves to search, {len(curves) - left} already done", flush=True)
        # A finished search needs no cluster. `ray job stop` sends SIGTERM: stop as
        # on Ctrl-C, keeping the points finished so far.
        with ray_session(args.max_parallel, connect=bool(left)) as session:
            run = run_knee_search(curves, seeds, search_range, store, evidence, max_parallel=args.max_parallel,
                                  probes_per_curve=args.probes_per_curve, log=lambda line: print(line, flush=True),
                                  max_memory_bytes=limit[0] if limit else None, **options)
        summary = run_summary(experiment, run.outcomes, search_range,
                              previous=read_summary(args.store, experiment))
        summary_path = write_summary(args.store, experiment, summary)
    except StoreError as error:
        print(f"error: {error}\nRows already written are kept; rerun to resume.", file=sys.stderr)
        return EXIT_FAILED
    except ConfigError as error:  # the cluster named cannot be reached (ray_jobs.connect): nothing ran
        return bad_input(error)
    except KeyboardInterrupt:
        print("interrupted; rerun to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        lease.release()
    connect_s = session.connect_s
    print(format_run(run, search_range, args.store, summary_path, connect_s), flush=True)
    if any(outcome.status == ERROR for outcome in run.outcomes):
        return EXIT_FAILED
    return EXIT_INTERRUPTED if run.interrupted else EXIT_OK


def format_run(run, search_range: SearchRange, store_uri: str, summary_path: str, connect_s: float = 0.0) -> str:
    """The closing report: statuses, simulations against a grid of the same resolution, time, where to look."""
    statuses: dict[str, int] = {}
    for outcome in run.outcomes:
        statuses[outcome.status] = statuses.get(outcome.status, 0) + 1
    ended = [o for o in run.outcomes if o.status in FINAL_STATUSES]
    grid_points = same_resolution_grid_points(search_range)
    lines = [f"curves: {len(run.outcomes)}: " + ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))]
    if ended:
        simulations = sum(o.simulations_stored for o in ended)
        points = sum(len(o.points) for o in ended)
        # The rest are the one-seed screening pass's runs (ray_jobs.search).
        screening = simulations - sum(len(o.points) * len(o.seeds) for o in ended)
        grid_simulations = sum(grid_points * len(o.seeds) for o in ended)
        lines.append(f"simulations for the {len(ended)} curves searched to the end: {simulations} "
                     f"({points / len(ended):.1f} points per curve x seeds"
                     + (f", {screening / len(ended):.1f} one-seed screening runs per curve" if screening > 0 else "")
                     + f"), against {grid_simulations} for a grid of the same resolution ({grid_points} points per "
                     f"curve): {grid_simulations / max(simulations, 1):.0f}x fewer")
    lines.append(f"time: Ray start {connect_s:.1f} s, then {run.wall_s:.1f} s ({run.trials} trials, "
                 f"{run.simulations_run} simulations run now, {run.simulate_s:.1f} s of simulation summed over "
                 f"workers; {run.files_written} files written)")
    for outcome in run.outcomes:
        if outcome.status == ERROR:
            lines.append(f"FAILED: {outcome.curve.label}: {outcome.error}")
    if run.interrupted:
        lines.append("interrupted: rerun the same command to resume")
    quoted = shlex.quote(redact(store_uri, store_uri))  # a command to copy, its credentials masked
    experiments = sorted({knee_experiment_name(o.curve.experiment) for o in run.outcomes})
    lines += [f"Results:   {ResultsStore(store_uri).location()} (experiment {', '.join(experiments)})",
              f"Summary:   {summary_path}",
              f"Status:    {console_command()} status --store {quoted}",
              f"Dashboard: {console_command()} dashboard serve --store {quoted}   (then open {DASHBOARD_URL})"]
    return "\n".join(lines)


KNEE_HELP = "search each curve's knee to a tolerance by bisection (on Ray)"


def configure_by_name(parser: argparse.ArgumentParser) -> None:
    """``commit-sweeps knee --experiment NAME``: the experiments that declare knee curves (``sweeps.catalog``)."""
    from sweeps.catalog import KNEE_GRIDS

    configure(parser, KNEE_GRIDS)


def run_by_name(args: argparse.Namespace) -> int:
    from sweeps.catalog import KNEE_GRIDS

    return run_knee_command(KNEE_GRIDS, args)
