"""``commit-sweeps``: every user action behind one command.

    commit-sweeps simulate --provider s3 --catalog storage ...   one config over seeds (= python -m simcore run)
    commit-sweeps sweep exp4c [--quick] [--seeds 3]               grids into the results store (= python sweeps/exp4c.py)
    commit-sweeps knee --experiment exp4c                        each curve's knee, by bisection
    commit-sweeps capacity --provider s3 --num-tables 10 ...      one setup's usable commits/s or max writers
    commit-sweeps bench --provider s3 --operation cas ...         seed 000's conditional-write benchmark, simulated
    commit-sweeps probe --store-uri s3://bucket/p --clients 1-4 ...  the same benchmark measured on a real store
    commit-sweeps probe-catalog --dsn postgresql://... --clients 1-8  a catalog's SQL database: service time, concurrency
    commit-sweeps fit --samples latencies.csv --out mine.toml      a provider profile fitted to your measurements
    commit-sweeps status [--store URI]                           what the store holds
    commit-sweeps dashboard build|serve|compare                  the results dashboard

Each subcommand is a module's ``configure(parser)`` and ``run(args)``: the
same functions the older entry points (``python -m simcore run``,
``python sweeps/<experiment>.py``, ``python -m ray_jobs status``,
``python -m dashboards``) call, so a flag is defined once and means the
same everywhere (``--seeds``: a count N, seeds 1..N, or a list such as
1,2,3). Modules are imported when their command runs, except to list help.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from dataclasses import dataclass
from typing import Optional, Sequence


@dataclass(frozen=True)
class Command:
    """A subcommand: its name and the names, in ``module``, of its help line and its functions."""

    name: str
    module: str
    help: str
    configure: str = "configure"
    run: str = "run"

    def attribute(self, which: str):
        return getattr(importlib.import_module(self.module), getattr(self, which))


COMMANDS = (
    Command("simulate", "commit_sweeps.simulate_command", "SIMULATE_HELP"),
    Command("sweep", "commit_sweeps.sweep_command", "SWEEP_HELP", "configure_by_name", "run_by_name"),
    Command("knee", "commit_sweeps.knee_command", "KNEE_HELP", "configure_by_name", "run_by_name"),
    Command("capacity", "commit_sweeps.capacity_command", "CAPACITY_HELP"),
    Command("bench", "commit_sweeps.bench_command", "BENCH_HELP"),
    Command("probe", "commit_sweeps.probe_command", "PROBE_HELP"),
    Command("probe-catalog", "commit_sweeps.probe_catalog_command", "PROBE_CATALOG_HELP"),
    Command("fit", "commit_sweeps.fit_command", "FIT_HELP"),
    Command("status", "commit_sweeps.status_command", "STATUS_HELP"),
    Command("dashboard", "commit_sweeps.dashboard_command", "DASHBOARD_HELP"),
    Command("prepare", "commit_sweeps.kernel_compile", "PREPARE_HELP"),
)


class _OneLineErrors(argparse.ArgumentParser):
    """argparse whose errors are one line and exit status 2, as every command's own checks are.

    argparse prints the whole usage before its error: 20 lines for ``capacity``, in which the
    one that says what was wrong is the last. Its subcommands (``add_parser``) are of this class too.
    """

    def error(self, message: str):
        from simcore.redaction import redact  # an argument it quotes may be a URI with credentials

        message = redact(" ".join(message.splitlines()))
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineErrors(
        prog="commit-sweeps", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="How many commits per second can an Iceberg-style catalog sustain on an object store "
                    "before commits start failing?",
        epilog="Run `commit-sweeps COMMAND --help` for a command's flags. Exit status: 0 ok, 1 some work "
               "failed, 2 bad input (nothing run), 130 interrupted.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        help_line = command.attribute("help")
        sub = commands.add_parser(command.name, help=help_line, description=help_line)
        command.attribute("configure")(sub)
        sub.set_defaults(run=command.attribute("run"))
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except BrokenPipeError:
        # The reader went away (`commit-sweeps status | head`): nothing left to say, and no
        # traceback. Later writes to the closed pipe go to /dev/null instead.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
