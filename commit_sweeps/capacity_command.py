"""``commit-sweeps capacity`` (also ``python -m ray_jobs.capacity``): how much commit load one catalog takes.

The flags of one setup (store, catalog, tables, mix, client), checked before
any worker starts; the search is ``ray_jobs.capacity``'s (usable throughput,
or with ``--writers-at-interval-s S`` the most writers committing every S
seconds). Simulations run in local processes (one per core) unless a Ray
cluster is named (``--ray-address`` or ``$RAY_ADDRESS``). The answer is
printed as text, or with ``--json`` as one object.

    commit-sweeps capacity --provider s3 --catalog storage --num-tables 10 --fast-append-ratio 0.9 \\
        --client iceberg-java --seeds 3 --tolerance 0.02 --json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Optional, Sequence

from simcore import ConfigError, SimConfig, bounds
from simcore.bisection import SearchRange, SearchRangeError
from simcore.builder import config_from_flags
from simcore.clients import REFERENCE
from ray_jobs.capacity import Search, extrapolation, find_capacity
from commit_sweeps.flags import (EXIT_OK, OneLineParser, UsageError, add_catalog_flags, add_client_flag,
                                 add_duration_flag, add_latency_flags, add_maintenance_flags, add_protocol_flag,
                                 add_provider_flag, add_retry_flags, add_search_range_flags, add_seeds_flag, bad_input,
                                 given_memory_limit, integer, number, search_range_of)

DEFAULT_MAX_WRITERS = 20_000
MAX_WORKERS = 1024  # local processes; more is a typo, and the pool would fail to start them

CAPACITY_HELP = "usable commits/s (or the most writers at an interval) of one catalog setup, by adaptive search"


def configure(parser: argparse.ArgumentParser) -> None:
    add_provider_flag(parser)
    add_catalog_flags(parser, catalog_default="storage")
    add_client_flag(parser)
    add_retry_flags(parser)
    add_latency_flags(parser)
    add_protocol_flag(parser)
    add = parser.add_argument
    add("--writers-at-interval-s", type=number, default=None,
        help="answer the largest number of writers committing every S seconds instead")
    add_maintenance_flags(parser)
    add("--max-writers", type=integer, default=DEFAULT_MAX_WRITERS,
        help=f"search limit (default {DEFAULT_MAX_WRITERS})")
    add_search_range_flags(parser)
    add_duration_flag(parser)
    add_seeds_flag(parser)
    add("--workers", type=integer, default=None, help="local processes (default: all cores)")
    add("--ray-address", default=None, metavar="ADDRESS",
        help="run on this Ray cluster: HOST:PORT, ray://HOST:PORT or auto (default $RAY_ADDRESS, else local "
             "processes); one that does not answer within 10 s is refused")
    add("--json", action="store_true", help="print the answer as one JSON object")


def _base_config(args: argparse.Namespace) -> SimConfig:
    """The config of the flags (``simcore.builder``), at one writer in writers mode (the search sets how many)."""
    if args.writers_at_interval_s is None and args.maintenance_jobs is not None:
        raise ConfigError("maintenance_jobs", args.maintenance_jobs, "no value without --writers-at-interval-s")
    fields = {}
    if args.writers_at_interval_s is not None:
        fields.update(writers=1, commit_interval_s=args.writers_at_interval_s)
    if args.maintenance_jobs is None:
        fields["maintenance_interval_s"] = None  # an interval without jobs is ignored
    return config_from_flags(args, **fields)


def _search_range(args: argparse.Namespace) -> SearchRange:
    if args.writers_at_interval_s is None:
        return search_range_of(args)
    if args.max_writers < 2:
        raise ConfigError("max_writers", args.max_writers, "an integer >= 2")
    interval_ms = args.writers_at_interval_s * 1000.0
    return SearchRange(interval_ms / args.max_writers, interval_ms, args.tolerance)


def run(args: argparse.Namespace) -> int:
    try:
        seeds = args.seeds
        base = _base_config(args)
        search_range = _search_range(args)
        if args.workers is not None and not 1 <= args.workers <= MAX_WORKERS:
            raise ConfigError("workers", args.workers, f"an integer in [1, {MAX_WORKERS}] (leave it out for one "
                                                       f"per core)")
        # The heaviest probe the search may ask for, checked here before any worker starts: a worker's
        # refusal would reach the user only after the pool and the first probes had started.
        limit = given_memory_limit()  # $SIMCORE_MAX_MEMORY, else each worker's machine's default
        bounds.check(Search(base, args.writers_at_interval_s).config_at(search_range.min_scale_ms),
                     *(limit or bounds.memory_limit()))
        address, field = ((args.ray_address, "ray_address") if args.ray_address is not None
                          else (os.environ.get("RAY_ADDRESS") or None, "RAY_ADDRESS"))
        if address is not None:
            from ray_jobs.connect import reach_ray  # imports Ray: only where a cluster is named

            reach_ray(address, field)  # one line within seconds, not minutes of Ray's retries
    except (ConfigError, SearchRangeError) as error:
        return bad_input(error)
    progress = (lambda line: None) if args.json else (lambda line: print(line, file=sys.stderr, flush=True))
    try:
        result = find_capacity(base, args.writers_at_interval_s, search_range, seeds, ray_address=address,
                               workers=args.workers, max_memory_bytes=limit[0] if limit else None,
                               progress=progress)
    except ConfigError as error:  # the cluster stopped answering between the check and the connection
        return bad_input(error)
    note = extrapolation(base, result)
    if note is not False:  # the profile records the client counts it was fitted on
        if args.json:
            result["extrapolation"] = note
        elif note:
            print(note, file=sys.stderr, flush=True)
    print(json.dumps(result) if args.json else render(base, result))
    return EXIT_OK


def render(base: SimConfig, result: dict) -> str:
    setup = (f"{base.provider} / {base.catalog} catalog, {base.num_tables} table(s), FA {base.fast_append_ratio:g}, "
             f"client {base.client or REFERENCE}, {base.protocol} commit protocol")
    low, high = result["bracket"]
    if "max_writers" in result:
        head = (f"max writers at one commit every {result['commit_interval_s']:g} s: {result['max_writers']}"
                f" (fails at {high})" if result["max_writers"] is not None else "no number of writers is usable")
    else:
        head = (f"usable throughput: {result['usable_throughput_cps']:.3f} commits/s"
                f" (next load tried: {high if high is None else f'{high:.3f}'} c/s, failing)"
                if result["usable_throughput_cps"] is not None else "no load in the search range is usable")
    lines = [setup, head, f"search: {result['status']} ({result['note']})"]
    if result.get("seed_range"):
        metric = result["success_metric"]
        t_lo, t_hi = result["seed_range"]["throughput_cps"]
        lines += [
            f"at that point: {metric} {result['success_rate']:.2%}, throughput over seeds {t_lo:.3f}-{t_hi:.3f} c/s,"
            f" commit latency p50 {result['commit_latency_p50_ms']:.0f} ms, p99 {result['commit_latency_p99_ms']:.0f} ms",
            "requests per commit: " + ", ".join(f"{k.replace('_', ' ')} {v:.2f}"
                                                for k, v in result["requests_per_commit"].items()),
            f"bytes written by attempts that lost: {result['wasted_write_bytes_per_commit']:.0f} per commit",
        ]
    lines.append(f"{result['simulations']} simulations in {result['wall_s']:.1f} s")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = OneLineParser(prog="python -m ray_jobs.capacity", description=CAPACITY_HELP)
    configure(parser)
    try:
        args = parser.parse_args(argv)
    except UsageError as error:
        return bad_input(error)
    return run(args)
