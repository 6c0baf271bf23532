"""``python -m simcore run|bench|fit``: the simulator's own command line, the commands of ``commit-sweeps
simulate|bench|fit`` (``simulate_command``, ``bench_command``, ``fit_command``) under one parser."""

from __future__ import annotations

import argparse
from typing import Optional, Sequence

from simcore.errors import ConfigError
from commit_sweeps import bench_command, fit_command, simulate_command
from commit_sweeps.flags import OneLineParser, UsageError, bad_input

DESCRIPTION = ("Command line: ``python -m simcore run ...`` (also ``commit-sweeps simulate``) simulates one config "
               "over seeds.")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m simcore", description=DESCRIPTION)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    simulate_command.configure(commands.add_parser("run", help=simulate_command.SIMULATE_HELP))
    bench_command.configure(commands.add_parser("bench", help=bench_command.BENCH_HELP))
    fit = commands.add_parser("fit", help=fit_command.FIT_HELP, description=fit_command.__doc__.split("\n\n")[0])
    fit_command.configure(fit)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.command == "fit":
            return fit_command.run(args)
        if args.command == "bench":
            return bench_command.run(args)
    except (UsageError, ConfigError) as error:
        return bad_input(error)
    return simulate_command.run(args)
