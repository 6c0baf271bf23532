"""``commit-sweeps sweep`` and ``commit-sweeps knee``: the declared experiments, run by name.

The grids live in ``sweeps/`` (``sweeps.catalog`` lists them); the flags and
the fan-out in ``ray_jobs``. This module only joins the two, so
``commit-sweeps sweep exp4c --quick`` and ``python sweeps/exp4c.py --quick``
run the same thing.
"""

from __future__ import annotations

import argparse

SWEEP_HELP = "run experiments' grids into the results store (resumes; skips what is stored)"
KNEE_HELP = "search each curve's knee to a tolerance by bisection (on Ray)"


def configure_sweep(parser: argparse.ArgumentParser) -> None:
    from ray_jobs.cli import add_memory_argument, add_sweep_arguments
    from sweeps.catalog import EXPERIMENTS, SEED001

    names = ", ".join(EXPERIMENTS)
    parser.add_argument("experiments", nargs="+", metavar="EXPERIMENT", choices=[*EXPERIMENTS, "all"],
                        help=f"one or more of {names}; 'all' is seed 001's "
                             f"({', '.join(grid.experiment for grid in SEED001)})")
    add_sweep_arguments(parser)
    parser.add_argument("--quick", action="store_true",
                        help="run a small, representative subset of each grid (about a minute on 2 cores)")
    add_memory_argument(parser)


def run_sweep(args: argparse.Namespace) -> int:
    from ray_jobs.cli import run_sweep_command
    from sweeps.catalog import EXPERIMENTS, SEED001

    grids = []
    for name in args.experiments:
        for grid in (SEED001 if name == "all" else (EXPERIMENTS[name],)):
            if grid not in grids:
                grids.append(grid)
    return run_sweep_command(grids, args)


def configure_knee(parser: argparse.ArgumentParser) -> None:
    from ray_jobs.knee_cli import configure
    from sweeps.knee import KNEE_GRIDS

    configure(parser, KNEE_GRIDS)


def run_knee(args: argparse.Namespace) -> int:
    from ray_jobs.knee_cli import run_knee_command
    from sweeps.knee import KNEE_GRIDS

    return run_knee_command(KNEE_GRIDS, args)
