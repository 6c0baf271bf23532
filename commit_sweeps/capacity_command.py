"""``commit-sweeps capacity`` (also ``python -m ray_jobs.capacity``): how much commit load one catalog takes.

The flags of one setup (store, catalog, tables, mix, client), checked before
any worker starts; the search is ``ray_jobs.capacity``'s (usable throughput,
or with ``--writers-at-interval-s S`` the most writers committing every S
seconds). Simulations run in local processes (one per core) unless a Ray
cluster is named (``--ray-address`` or ``$RAY_ADDRESS``). The answer is
printed as text, or with ``--json`` as one object: the figure with its p50
and p99 commit latency, the load offered and what got through at it and at
the next load tried, whether it is only a lower bound, and how far to trust
it (``commit_sweeps.accuracy``, from docs/accuracy.md).

    commit-sweeps capacity --provider s3 --catalog storage --num-tables 10 --fast-append-ratio 0.9 \\
        --client iceberg-java --seeds 3 --tolerance 0.02 --json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Optional, Sequence

from simcore import ConfigError, SimConfig, bounds
from simcore.bisection import MAX_SCALE_MS, MIN_SCALE_MS, SearchRange, SearchRangeError
from simcore.builder import config_from_flags
from simcore.clients import REFERENCE
from simcore.config import SERVICE_CALL_CATALOGS, SERVICE_CATALOGS
from simcore.usable import ABOVE_SEARCH_RANGE, BELOW_SEARCH_RANGE, USABLE_SUCCESS_THRESHOLD
from simcore.designs import DESIGNS, design_fields
from simcore.request_prices import cost_per_1000_commits, list_prices, parse_prices, store_requests
from commit_sweeps.kernel_compile import prepare_kernels
from ray_jobs.capacity import Search, extrapolation, find_capacities, find_capacity, group_commit_answer
from commit_sweeps.accuracy import accuracy, accuracy_lines
from commit_sweeps.flags import (EXIT_OK, OneLineParser, UsageError, add_catalog_flags, add_client_flag,
                                 add_duration_flag, add_group_commit_flag, add_latency_flags, add_maintenance_flags,
                                 add_object_write_throttle_flag, add_protocol_flag,
                                 add_provider_flag, add_retry_flags, add_search_range_flags, add_seeds_flag, bad_input,
                                 given_memory_limit, integer, number, search_range_of, COMPARE_MIN_SCALE_MS)

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
    add_object_write_throttle_flag(parser)
    add = parser.add_argument
    add("--writers-at-interval-s", type=number, default=None,
        help="answer the largest number of writers committing every S seconds instead")
    add_maintenance_flags(parser)
    add("--max-writers", type=integer, default=None,
        help=f"search limit (default {DEFAULT_MAX_WRITERS}, or fewer where the writers' mean gap would fall below "
             f"{MIN_SCALE_MS:g} ms: at most S x 1000 / {MIN_SCALE_MS:g})")
    add_search_range_flags(parser)
    add_duration_flag(parser)
    add_seeds_flag(parser)
    add("--workers", type=integer, default=None, help="local processes (default: all cores)")
    add("--ray-address", default=None, metavar="ADDRESS",
        help="run on this Ray cluster: HOST:PORT, ray://HOST:PORT or auto (default $RAY_ADDRESS, else local "
             "processes); one that does not answer within 10 s is refused")
    add("--json", action="store_true", help="print the answer as one JSON object (with --compare: one per design)")
    add("--compare", action="store_true",
        help="every commit design valid for the store side by side (docs/architectures.md): usable c/s, max writers "
             "with --writers-at-interval-s, p50/p99 commit latency, requests and store cost per commit")
    add("--writers", type=integer, default=None,
        help="with --compare and --writers-at-interval-s: mark the first design that takes this many writers")
    add("--request-prices", default=None, metavar="WRITE,READ",
        help="store request prices in US dollars per 1,000 write-class and read-class requests, for --compare's "
             "cost (default: the store's list prices, docs/reference/prices.md)")
    add_group_commit_flag(parser)


def _base_config(args: argparse.Namespace) -> SimConfig:
    """The config of the flags (``simcore.builder``), at one writer in writers mode (the search sets how many)."""
    if args.writers_at_interval_s is None and args.maintenance_jobs is not None:
        raise ConfigError("maintenance_jobs", args.maintenance_jobs, "no value without --writers-at-interval-s")
    if not args.compare:
        for name in ("writers", "request_prices"):
            if getattr(args, name) is not None:
                raise ConfigError(name, getattr(args, name), "no value without --compare")
    if args.writers_at_interval_s is None and args.group_commit_s is not None:
        raise ConfigError("group_commit_s", args.group_commit_s, "no value without --writers-at-interval-s")
    fields = {}
    if args.writers_at_interval_s is not None:
        fields.update(writers=1, commit_interval_s=args.writers_at_interval_s)
    if args.maintenance_jobs is None:
        fields["maintenance_interval_s"] = None  # an interval without jobs is ignored
    return config_from_flags(args, **fields)


def _search_range(args: argparse.Namespace) -> SearchRange:
    if args.writers_at_interval_s is None:
        return search_range_of(args)
    interval_ms = args.writers_at_interval_s * 1000.0
    if not 2 * MIN_SCALE_MS <= interval_ms <= MAX_SCALE_MS:  # two writers 1 ms apart, up to the search's limit
        raise ConfigError("writers_at_interval_s", args.writers_at_interval_s,
                          f"a number of seconds in [{2 * MIN_SCALE_MS / 1000.0:g}, {MAX_SCALE_MS / 1000.0:g}]")
    most = max_writers_at(args.writers_at_interval_s)
    if args.max_writers is None:
        args.max_writers = min(DEFAULT_MAX_WRITERS, most)
    if args.max_writers < 2:
        raise ConfigError("max_writers", args.max_writers, "an integer >= 2")
    if args.max_writers > most:
        raise ConfigError("max_writers", args.max_writers,
                          f"an integer <= {most} at one commit every {args.writers_at_interval_s:g} s (the writers' "
                          f"mean gap, S / N, is floored at {MIN_SCALE_MS:g} ms)")
    return SearchRange(interval_ms / args.max_writers, interval_ms, args.tolerance)


def max_writers_at(interval_s: float) -> int:
    """The most writers a search at one commit every ``interval_s`` can try: their mean gap stays >= 1 ms."""
    return math.floor(interval_s * 1000.0 / MIN_SCALE_MS)


def run(args: argparse.Namespace) -> int:
    if args.compare:
        return run_compare(args)
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
    if address is None:  # local workers share this machine's kernel cache: compile here once, not in each
        prepare_kernels([Search(base, args.writers_at_interval_s).config_at(search_range.min_scale_ms)])
    try:
        if base.group_commit_s is not None:  # the committers' load does not move with the writers: no search
            result = group_commit_answer(base, args.writers_at_interval_s, args.max_writers, seeds,
                                         limit[0] if limit else None)
        else:
            result = find_capacity(base, args.writers_at_interval_s, search_range, seeds, ray_address=address,
                                   workers=args.workers, max_memory_bytes=limit[0] if limit else None,
                                   progress=progress)
    except ConfigError as error:  # the cluster stopped answering between the check and the connection
        return bad_input(error)
    note = extrapolation(base, result)
    if note is not False:  # the profile records the client counts it was fitted on
        result["extrapolation"] = note
    result["accuracy"] = accuracy(base, note or None)
    print(json.dumps(result) if args.json else render(base, result))
    return EXIT_OK


# -- the printed answer: every figure with what it means, no Python in it ---------------------------------

def _ms(value: Optional[float]) -> str:
    if value is None:
        return "not measured"
    if value >= 10_000:
        return f"{value / 1000:.0f} s"
    return f"{value / 1000:.1f} s" if value >= 1000 else f"{value:.0f} ms"


def _cps(value: Optional[float], digits: int = 3) -> str:
    return "not measured" if value is None else f"{value:.{digits}f} c/s"


def _success(metric: str, value: Optional[float]) -> str:
    name = {"vo_success_rate": "VO success", "success_rate": "success"}.get(metric, metric.replace("_", " "))
    return f"{name} {'not measured' if value is None else f'{value:.2%}'}"


def _latencies(result: dict) -> str:
    return f"commit latency p50 {_ms(result['commit_latency_p50_ms'])}, p99 {_ms(result['commit_latency_p99_ms'])}"


def _object_write_limit(base: SimConfig) -> Optional[float]:
    """Writes/s the catalog object admits (the config's throttle, else the profile's own), None when unlimited."""
    if base.cas_throttle_per_s is not None:
        return base.cas_throttle_per_s
    if base.catalog == "service":
        return None
    throttle = base.latency_profile.conditional("append" if base.catalog == "append" else "cas").throttle
    return throttle.writes_per_s if throttle is not None else None


def _load_of(point: dict) -> str:
    """A load as offered: writers, or open-loop arrivals at their scale."""
    if "writers" in point:
        return f"{point['writers']} writer(s), {_cps(point['offered_cps'], 2)} offered"
    return f"inter-arrival {point['inter_arrival_scale_ms']:g} ms, {_cps(point['offered_cps'], 2)} offered"


def _headline(base: SimConfig, result: dict) -> str:
    writers_mode = result["load"] == "writers"
    figure = result["max_writers"] if writers_mode else result["usable_throughput_cps"]
    what = (f"max writers at one commit every {result['commit_interval_s']:g} s" if writers_mode
            else "usable throughput")
    search = result.get("search_range") or {}
    if figure is None:
        failing = result["next_load"]
        lightest = (f"even 1 writer committing every {result['commit_interval_s']:g} s" if writers_mode
                    else "even the lightest load searched" + (f" ({_load_of(failing)})" if failing else ""))
        how = "" if writers_mode else "; raise --max-scale-ms to search lighter loads"
        fails = (f" ({_success(failing['success_metric'], failing['success_rate'])}, "
                 f"{_cps(failing['throughput_cps'])} through)" if failing else "")
        return f"{what}: none usable: {lightest} fails{fails}{how}"
    shown = f"{figure}" if writers_mode else f"{figure:.3f} commits/s"
    if result["lower_bound"] and writers_mode and base.group_commit_s is not None:
        return (f"{what}: at least {shown}, the --max-writers limit: the catalog sees one committer per table every "
                f"{base.group_commit_s:g} s whatever the writers' count, so the committer, which the model does not "
                f"bound, limits them; {_latencies(result)}")
    if result["lower_bound"]:
        if writers_mode:
            end = f"{figure} writers, the --max-writers limit, still pass; raise --max-writers"
        else:
            scale = f", inter-arrival {search['min_scale_ms']:g} ms =" if search else ","
            end = (f"the heaviest load searched{scale} {_cps(result['offered_cps'], 2)} offered, still passes; "
                   f"lower --min-scale-ms")
        return (f"{what}: at least {shown}: the search's range ends here ({end} to search further); "
                f"{_latencies(result)}")
    if writers_mode and result["next_load"] is not None:
        shown += f" ({result['next_load']['writers']} fail)"
    return f"{what}: {shown}, {_latencies(result)}"


def _load_line(base: SimConfig, result: dict) -> Optional[str]:
    """How the load arrives, so that the open-loop and the writers answers are not read as contradicting."""
    runtime = f"{base.runtime_median_ms / 1000:g} s"
    if result["load"] == "writers" and base.group_commit_s is not None:
        if result["max_writers"] is None:
            return None
        return (f"load: {result['max_writers']} writers hand {_cps(result['offered_cps'], 2).removesuffix(' c/s')} "
                f"batches of files a second to {base.num_tables} committer(s), one per table, each committing every "
                f"{base.group_commit_s:g} s: {_cps(result['throughput_cps'])} through")
    if result["load"] == "writers":
        if result["max_writers"] is None:
            return None
        return (f"load: {result['max_writers']} closed-loop writers, {_cps(result['offered_cps'], 2)} offered, "
                f"{_cps(result['throughput_cps'])} through: each commits to one table every "
                f"{result['commit_interval_s']:g} s straight from its snapshot and waits for that commit before its "
                f"next, so the load eases when commits slow; their rate can pass the usable throughput of "
                f"open-loop arrivals (capacity without --writers-at-interval-s), which arrive at random whatever "
                f"the catalog's state and each work a median {runtime} between snapshot and commit")
    if result["usable_throughput_cps"] is None:
        return None
    return (f"load: open-loop arrivals, {_cps(result['offered_cps'], 2)} offered at the answer: transactions arrive "
            f"at random whether or not earlier ones have committed, each working a median {runtime} between its "
            f"snapshot and its commit; closed-loop writers (--writers-at-interval-s) wait for each commit and "
            f"commit straight from their snapshot: another question, often a higher rate")


def _next_load_line(base: SimConfig, result: dict) -> Optional[str]:
    failing = result["next_load"]
    if failing is None or (result["max_writers" if result["load"] == "writers" else "usable_throughput_cps"]
                           is None):
        return None
    line = (f"next load tried: {_load_of(failing)}, {_cps(failing['throughput_cps'])} through, "
            f"{_success(failing['success_metric'], failing['success_rate'])}: fails (usable needs above "
            f"{USABLE_SUCCESS_THRESHOLD:.0%})")
    answer_through = result["throughput_cps"] if result["load"] == "writers" else result["usable_throughput_cps"]
    if failing["throughput_cps"] is not None and answer_through is not None and \
            failing["throughput_cps"] < answer_through:
        limit = _object_write_limit(base)
        why = "past the answer the extra attempts conflict and retry"
        if limit is not None:
            per_commit = (result.get("requests_per_commit") or {}).get("append" if base.catalog == "append"
                                                                       else "cas")
            used = (f"at the answer the catalog object already takes {answer_through:.3f} c/s x {per_commit:.2f} "
                    f"conditional writes per commit = {answer_through * per_commit:.2f} writes/s of its "
                    f"throttle's {limit:.3g}, and " if per_commit is not None else
                    f"the catalog object's write throttle admits about {limit:.3g} writes/s, and ")
            why = used + "past the answer its throttle refuses the extra attempts, which wait and retry"
        line += f"; a heavier load, yet fewer commits through: {why}, so what gets through falls"
    return line


def _search_line(result: dict) -> str:
    status = result["status"]
    if status == ABOVE_SEARCH_RANGE:
        return "search: the range ended before any load failed, so the answer is a lower bound"
    if status == BELOW_SEARCH_RANGE:
        return "search: every load in the range failed"
    tolerance = (result.get("search_range") or {}).get("tolerance")
    asked = f" (asked: within {tolerance:.0%})" if tolerance is not None else ""
    failing = result["next_load"]
    wider = ""
    if failing is not None and failing["offered_cps"] and result["offered_cps"]:
        wider = f"{100 * (failing['offered_cps'] / result['offered_cps'] - 1):.2f}% "
    if result["within_tolerance"]:
        return (f"search: found; the failing load offers {wider}more than the answer's{asked}; answers a few per "
                f"cent apart are within seed noise (docs/accuracy.md#noise-in-any-one-answer)")
    return (f"search: stopped with the failing load offering {wider}more than the answer's{asked}: the loads "
            f"between them do not pass and fail in order (seed noise, or a heavier load committing less), so a "
            f"finer step would not sharpen it; more seeds (--seeds 5) narrow the noise")


def render(base: SimConfig, result: dict) -> str:
    database = base.catalog_database and (base.catalog_database if not base.catalog_database.lstrip().startswith("{")
                                          else "a probed database")
    setup = (f"{base.provider} / {base.catalog} catalog" + (f" over {database}" if database else "")
             + f", {base.num_tables} table(s), FA {base.fast_append_ratio:g}, "
             f"client {base.client or REFERENCE}, {base.protocol} commit protocol"
             + (", Iceberg v4 root manifests" if base.metadata_format == "v4" else "")
             + (f", group commit every {base.group_commit_s:g} s" if base.group_commit_s is not None else "")
             + (f", catalog object throttled to {base.cas_throttle_per_s:g} writes/s"
                if base.cas_throttle_per_s is not None else ""))
    lines = [setup, _headline(base, result)]
    lines += [line for line in (_load_line(base, result), _next_load_line(base, result)) if line]
    lines.append(_search_line(result))
    if result.get("seed_range"):
        metric = result["success_metric"]
        t_lo, t_hi = result["seed_range"]["throughput_cps"]
        lines += [
            f"at that point: {_success(metric, result['success_rate'])}, throughput over seeds "
            f"{_cps(t_lo).removesuffix(' c/s')}-{_cps(t_hi)}",
            "requests per commit: " + ", ".join(f"{k.replace('_', ' ')} "
                                                f"{'not measured' if v is None else f'{v:.2f}'}"
                                                for k, v in result["requests_per_commit"].items()),
            "bytes written by attempts that lost: " + (
                "not measured" if result["wasted_write_bytes_per_commit"] is None
                else f"{result['wasted_write_bytes_per_commit']:.0f} per commit"),
        ]
    lines += accuracy_lines(result["accuracy"] if "accuracy" in result else accuracy(base))
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


# -- --compare: every design valid for the store, one search each, side by side ---------------------------

def compare_configs(args: argparse.Namespace, writers_mode: bool) -> dict[str, SimConfig]:
    """The base config of each design valid for the store (``simcore.designs``), from the flags: the store,
    tables, mix, retry flags and search are the user's; the catalog, metadata and client the design's."""
    base = _base_config(args)
    designs = {}
    for design in DESIGNS:
        if not design.applies_to(base.latency_profile, writers_mode):
            continue
        fields = design_fields(design, args.client)
        if writers_mode:
            fields.update(writers=1, commit_interval_s=args.writers_at_interval_s)
        # The design sets the catalog and what goes with it; the round trip to a catalog service is the user's.
        service = fields["catalog"] in SERVICE_CATALOGS
        fields = {"catalog_latency_ms": args.catalog_latency_ms if service else None, "metadata_format": None,
                  "group_commit_s": None, "rest_metadata_writer": None,
                  "catalog_database": args.catalog_database if service else None, **fields}
        designs[design.name] = config_from_flags(args, **fields)
    return designs


def run_compare(args: argparse.Namespace) -> int:
    writers_mode = args.writers_at_interval_s is not None
    try:
        for name, flag in (("metadata", "--metadata"), ("group_commit_s", "--group-commit-s"),
                           ("rest_metadata_writer", "--rest-metadata-writer")):
            if getattr(args, name) is not None:
                raise ConfigError(name, getattr(args, name), f"no value with --compare (every design is compared; "
                                                             f"{flag} is one design's)")
        if args.writers is not None and not writers_mode:
            raise ConfigError("writers", args.writers, "no value without --writers-at-interval-s")
        if args.writers is not None and args.writers < 1:
            raise ConfigError("writers", args.writers, "an integer >= 1")
        bases = compare_configs(args, writers_mode)
        open_loop = {name: base.replace(writers=None, commit_interval_s=None, group_commit_s=None)
                     for name, base in bases.items() if base.group_commit_s is None}
        usable_range = search_range_of(args, min_scale_ms=COMPARE_MIN_SCALE_MS)
        limit = given_memory_limit()
        for base in open_loop.values():
            bounds.check(Search(base, None).config_at(usable_range.min_scale_ms), *(limit or bounds.memory_limit()))
        writers_range = _search_range(args) if writers_mode else None
        if writers_mode:
            for base in bases.values():
                bounds.check(Search(base, args.writers_at_interval_s).config_at(writers_range.min_scale_ms),
                             *(limit or bounds.memory_limit()))
        address = args.ray_address if args.ray_address is not None else (os.environ.get("RAY_ADDRESS") or None)
        if address is not None:
            from ray_jobs.connect import reach_ray

            reach_ray(address, "ray_address" if args.ray_address is not None else "RAY_ADDRESS")
        prices = (parse_prices(args.request_prices) if args.request_prices is not None
                  else list_prices(next(iter(bases.values())).provider))
    except (ConfigError, SearchRangeError) as error:
        return bad_input(error)
    progress = (lambda line: None) if args.json else (lambda line: print(line, file=sys.stderr, flush=True))
    if address is None:
        prepare_kernels([Search(b, None).config_at(usable_range.min_scale_ms) for b in open_loop.values()])
    common = dict(seeds=args.seeds, ray_address=address, workers=args.workers,
                  max_memory_bytes=limit[0] if limit else None, progress=progress)
    try:
        usable = find_capacities(open_loop, None, usable_range, **common)
        writers = {}
        if writers_mode:
            searched = {name: base for name, base in bases.items() if base.group_commit_s is None}
            writers = find_capacities(searched, args.writers_at_interval_s, writers_range, **common)
            for name, base in bases.items():
                if base.group_commit_s is not None:  # the committers' load does not move with the writers
                    writers[name] = group_commit_answer(base, args.writers_at_interval_s, args.max_writers,
                                                        args.seeds, common["max_memory_bytes"])
    except ConfigError as error:
        return bad_input(error)
    rows = [compare_row(name, bases[name], usable.get(name), writers.get(name), prices) for name in bases]
    rows.sort(key=lambda row: -(row["max_writers"] or 0) if writers_mode else -(row["usable_throughput_cps"] or 0))
    if args.writers is not None:
        for row in rows:
            row["meets"] = row["max_writers"] is not None and row["max_writers"] >= args.writers
        first = next((row for row in rows if row["meets"]), None)
        if first is not None:
            first["first_to_meet"] = True
    if args.json:
        for row in rows:
            print(json.dumps(row))
    else:
        print(render_compare(args, next(iter(bases.values())), rows, prices))
    return EXIT_OK


def compare_row(name: str, base: SimConfig, usable: Optional[dict], writers: Optional[dict], prices) -> dict:
    """One design's line of ``--compare --json``: the contract's keys, then what qualifies them."""
    at = usable if usable is not None else writers  # group commit: only the writers' answer
    per_commit = (at or {}).get("requests_per_commit") or {}
    store_writes, store_reads = store_requests(base, per_commit) if per_commit else (None, None)
    row = {
        "design": name,
        "usable_throughput_cps": usable["usable_throughput_cps"] if usable else None,
        "commit_latency_p50_ms": at.get("commit_latency_p50_ms") if at else None,
        "commit_latency_p99_ms": at.get("commit_latency_p99_ms") if at else None,
        "requests_per_commit": per_commit or None,
        "cost_per_1000_commits_usd": (round(cost_per_1000_commits(base, per_commit, prices), 6)
                                      if per_commit and prices is not None else None),
    }
    if writers is not None:
        row["max_writers"] = writers["max_writers"]
        row["max_writers_lower_bound"] = writers["lower_bound"]
    row.update({"usable_lower_bound": usable["lower_bound"] if usable else None,
                "store_requests_per_commit": {"write": store_writes, "read": store_reads},
                "catalog_calls_per_commit": ((per_commit.get("catalog_read") or 0.0) + (per_commit.get("cas") or 0.0)
                                             if base.catalog in SERVICE_CALL_CATALOGS else 0.0),
                "catalog": base.catalog, "metadata": base.metadata_format or "v3", "client": base.client or REFERENCE,
                "group_commit_s": base.group_commit_s,
                "config_hash": (at or {}).get("config_hash")})
    return row


def render_compare(args: argparse.Namespace, base: SimConfig, rows: list[dict], prices) -> str:
    writers_mode = args.writers_at_interval_s is not None
    head = (f"{base.provider}, {base.num_tables} table(s), FA {base.fast_append_ratio:g}: every commit design "
            f"(docs/architectures.md), best first")
    lines = [head]
    header = ["design", "usable c/s"] + ([f"writers @{args.writers_at_interval_s:g} s"] if writers_mode else []) + [
        "p50", "p99", "store req/commit (write+read)", "catalog calls/commit", "$/1000 commits"]
    table = [header]
    for row in rows:
        usable = row["usable_throughput_cps"]
        shown = ("n/a (paced)" if row["group_commit_s"] is not None else "none" if usable is None
                 else (">= " if row["usable_lower_bound"] else "") + f"{usable:.2f}")
        cells = [row["design"] + (" *" if row.get("first_to_meet") else ""), shown]
        if writers_mode:
            cells.append("none" if row["max_writers"] is None
                         else (">= " if row["max_writers_lower_bound"] else "") + f"{row['max_writers']}")
        store = row["store_requests_per_commit"]
        cells += [_ms(row["commit_latency_p50_ms"]), _ms(row["commit_latency_p99_ms"]),
                  "not measured" if store["write"] is None else f"{store['write']:.1f}+{store['read']:.1f}",
                  f"{row['catalog_calls_per_commit']:.1f}",
                  "no price" if row["cost_per_1000_commits_usd"] is None else f"{row['cost_per_1000_commits_usd']:.4f}"]
        table.append(cells)
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in table]
    if args.writers is not None:
        first = next((row for row in rows if row.get("first_to_meet")), None)
        lines.append(f"* the first design, best first, that takes {args.writers} writers every "
                     f"{args.writers_at_interval_s:g} s" if first else
                     f"no design takes {args.writers} writers every {args.writers_at_interval_s:g} s")
    lines.append("usable c/s: the searched knee of open-loop arrivals (95% success), seed mean; "
                 ">= a bound at the search's end; group commit's commits are paced by its committers")
    lines.append("cost: store requests only, at " + (f"{prices.source}" if prices is not None else
                                                       "no cited price (give --request-prices WRITE,READ)")
                 + "; a catalog service's own cost is not included")
    return "\n".join(lines)
