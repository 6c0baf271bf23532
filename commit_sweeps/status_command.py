"""``commit-sweeps status`` (also ``python -m ray_jobs status``): what a results store holds.

Per experiment: configs done of total, seeds, last update (``ray_jobs.status``);
``--cleanup`` also stops the Ray processes that sweep drivers killed with
SIGKILL left behind (``ray_jobs.orphans``). Exit status: 0, 1 when some file
is unreadable and left in place, 2 when the store cannot be read.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Optional, Sequence

from ray_jobs.store import ResultsStore, StoreError
from commit_sweeps.flags import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, add_store_flag

STATUS_HELP = "per experiment: configs done of total, seeds, last update"


def configure(parser: argparse.ArgumentParser) -> None:
    add_store_flag(parser)
    parser.add_argument("--cleanup", action="store_true",
                        help="also stop the Ray processes that sweep drivers killed with SIGKILL left behind")


def run(args: argparse.Namespace) -> int:
    """Print what the store holds; exit 1 when some file is unreadable, 2 when the store cannot be read."""
    from ray_jobs.status import format_status, store_status

    if args.cleanup:
        from ray_jobs.orphans import cleanup_orphans, describe

        stopped = cleanup_orphans()
        print(describe(stopped) if stopped else "no Ray processes left by killed sweep drivers")
    try:
        store = ResultsStore(args.store)
        store.require_readable()  # a typo in --store is not an empty store
        started = time.perf_counter()
        report = store_status(store)
    except StoreError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(format_status(report, read_s=time.perf_counter() - started))
    # Quarantined files are healed (reported above, once); one left in place still needs a person.
    return EXIT_FAILED if any(bad.quarantined_to is None for bad in report.unreadable) else EXIT_OK


def main(argv: Optional[Sequence[str]] = None) -> int:
    """``python -m ray_jobs status --store URI``."""
    parser = argparse.ArgumentParser(prog="python -m ray_jobs",
                                     description="Inspect a results store written by the sweeps.")
    commands = parser.add_subparsers(dest="command", required=True)
    configure(commands.add_parser("status", help=STATUS_HELP))
    return run(parser.parse_args(argv))
