"""``commit-sweeps capacity``: how much commit load one catalog takes, in one command.

Answers the storage engineer's question for one setup (store, catalog,
tables, mix, client): the usable throughput (the highest throughput whose
success rate, the one ``simcore.usable`` says counts, stays above 95%) or,
with ``--writers-at-interval-s S``, the largest number of writers committing
every S seconds that the catalog still serves usably. It is a front end of
the one search executor (``ray_jobs.search``, the knee search's too): the
bracket-and-bisect of ``simcore.bisection.next_step`` over the offered load,
in rounds of probes that fill the workers, each probe the seed mean over
``--seeds``, after a one-seed screening pass when there are several seeds:

- open-loop arrivals: the probe is the inter-arrival scale itself;
- writers: the probe scale is the interval divided by the number of writers
  (the mean gap between their commits), rounded to a whole number of
  writers; probes that round to a number already measured reuse it.

Simulations run in local processes (one per core) unless a Ray cluster is
named (``--ray-address`` or ``$RAY_ADDRESS``). At the knee it reports the
seed range, p50/p99 commit latency, requests per committed transaction by
kind and the bytes written by attempts that lost.

    commit-sweeps capacity --provider s3 --catalog storage --num-tables 10 --fast-append-ratio 0.9 \\
        --client iceberg-java --seeds 3 --tolerance 0.02 --json

The module exposes ``configure(parser)`` and ``run(args)`` (the commit-sweeps
subcommand shape) and ``main(argv)`` for ``python -m ray_jobs.capacity``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from simcore import ConfigError, SimConfig, bounds
from simcore.bisection import SearchRange, SearchRangeError, SearchStep
from simcore.builder import config_from_flags
from simcore.clients import REFERENCE
from commit_sweeps.flags import (EXIT_OK, OneLineParser, UsageError, add_catalog_flags, add_client_flag,
                           add_duration_flag, add_latency_flags, add_maintenance_flags, add_protocol_flag, add_provider_flag,
                           add_retry_flags, add_search_range_flags, add_seeds_flag, bad_input, integer, number,
                           search_range_of)
from simcore.metrics import REQUEST_KINDS
from simcore.usable import ERROR, success_metric
from ray_jobs.search import CurveSpec, Events, Probe, fill_slots, process_pool, ray_tasks, search_curves

DEFAULT_MAX_WRITERS = 20_000
MAX_WORKERS = 1024  # local processes; more is a typo, and the pool would fail to start them


# -- the question as a search (the executor is ``ray_jobs.search``) ---------------------------------

@dataclass
class Search:
    """The load-to-config mapping of one capacity question, and the points of its final pass."""

    base: SimConfig
    interval_s: Optional[float]  # writers mode when set
    probes: dict = field(default_factory=dict)  # scale_ms -> ray_jobs.search.Probe

    def config_at(self, scale_ms: float) -> SimConfig:
        if self.interval_s is None:
            return self.base.replace(inter_arrival_scale_ms=scale_ms)
        return self.base.replace(writers=self.writers_at(scale_ms), commit_interval_s=self.interval_s)

    def writers_at(self, scale_ms: float) -> int:
        return max(1, round(self.interval_s * 1000.0 / scale_ms))

    def describe(self, probe: Probe) -> str:
        """A progress line for one measured probe."""
        point = probe.point()
        load = f"{self.writers_at(probe.scale_ms)} writers" if self.interval_s is not None else \
            f"scale {probe.scale_ms:g} ms"
        return (f"  {load}: success {point.success:.2%}, {point.throughput_cps:.3f} c/s"
                f" ({'passes' if point.passes else 'fails'})")


def capacity_search(base: SimConfig, interval_s: Optional[float], search_range: SearchRange,
                    submit: Callable[[SimConfig, int], Future], seeds: Sequence[int], slots: int,
                    progress: Callable[[str], None] = lambda line: None) -> tuple[Search, SearchStep]:
    """Search one setup's knee with ``ray_jobs.search``: one curve, rounds that fill ``slots``.

    With several seeds the search screens with one seed first (``ray_jobs.search``
    says why). ``submit(config, seed)`` starts one simulation and returns a
    future of its ``ray_jobs.search.SeedRun``; each (config, seed) is
    simulated once. Raises ``SearchFailed`` when a simulation failed.
    """
    search = Search(base, interval_s)
    events = Events(on_pass=lambda key, line: progress(line),
                    on_probe=lambda key, probe: progress(search.describe(probe)))
    (result,) = search_curves([CurveSpec("capacity", search.config_at)], seeds, search_range, submit, slots,
                              fill_slots(slots), events)
    if result.status == ERROR:
        raise SearchFailed(result.error)
    search.probes = result.probes
    return search, result.step


class SearchFailed(RuntimeError):
    """A simulation of the search raised (or its worker died beyond retries)."""


def answer(search: Search, step: SearchStep, simulations: int, wall_s: float) -> dict:
    """The --json answer: the figure, its bracket, and what the store serves at that point."""
    writers_mode = search.interval_s is not None
    knee = search.probes[step.knee.scale_ms] if step.knee is not None else None
    failing = search.probes[step.failing.scale_ms] if step.failing is not None else None

    def value(probe: Optional[Probe]):
        if probe is None:
            return None
        return probe.config.writers if writers_mode else _finite(probe.mean("throughput_cps"))

    out = {"max_writers" if writers_mode else "usable_throughput_cps": value(knee),
           "protocol": search.base.protocol,
           "bracket": [value(knee), value(failing)],
           "status": step.status, "within_tolerance": step.within_tolerance, "note": step.note}
    if writers_mode:
        out["commit_interval_s"] = search.interval_s
        out["throughput_cps"] = _finite(knee.mean("throughput_cps")) if knee else None
    else:
        out["inter_arrival_scale_ms"] = knee.scale_ms if knee else None
    if knee is not None:
        metric = success_metric(knee.config)
        throughputs = [r["throughput_cps"] for r in knee.rows]
        successes = [r[metric] for r in knee.rows]
        out.update({
            "success_rate": _finite(knee.mean(metric)),
            "success_metric": metric,
            "seed_range": {"throughput_cps": [_finite(min(throughputs)), _finite(max(throughputs))],
                           metric: [_finite(min(successes)), _finite(max(successes))]},
            "commit_latency_p50_ms": _finite(knee.mean("commit_latency_p50_ms")),
            "commit_latency_p99_ms": _finite(knee.mean("commit_latency_p99_ms")),
            "requests_per_commit": {kind: _finite(knee.mean(f"requests_{kind}_per_commit"))
                                    for kind in REQUEST_KINDS},
            "wasted_write_bytes_per_commit": _finite(knee.mean("wasted_write_bytes_per_commit")),
            "config_hash": knee.config.config_hash,
        })
    else:
        out.update({"success_rate": None, "commit_latency_p50_ms": None, "commit_latency_p99_ms": None,
                    "requests_per_commit": None})
    out.update({"seeds": [r["seed"] for r in (knee or next(iter(search.probes.values()))).rows]
                if search.probes else [],
                "simulations": simulations, "wall_s": round(wall_s, 3)})
    return out


def _finite(value):
    return None if value is None or (isinstance(value, float) and not math.isfinite(value)) else value


# -- executors ------------------------------------------------------------------------------------------

@contextlib.contextmanager
def _executor(address: Optional[str], workers: Optional[int], progress: Callable[[str], None]):
    """(submit, slots) on the named Ray cluster, else on local processes; torn down on the way out."""
    if address:
        from ray_jobs.connect import ray_session

        previous = os.environ.get("RAY_ADDRESS")
        os.environ["RAY_ADDRESS"] = address  # ray_session connects to $RAY_ADDRESS
        try:
            with ray_session(log=progress), ray_tasks() as (submit, slots):
                progress(f"capacity search on Ray ({slots} CPUs)")
                yield submit, slots
        finally:
            if previous is None:
                os.environ.pop("RAY_ADDRESS", None)
            else:
                os.environ["RAY_ADDRESS"] = previous
        return
    with process_pool(workers) as (submit, slots):
        progress(f"capacity search in {slots} local processes")
        yield submit, slots


# -- command line -------------------------------------------------------------------------------------------

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
    add("--ray-address", default=None, help="run on this Ray cluster (default $RAY_ADDRESS, else local processes)")
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
    started = time.perf_counter()
    try:
        seeds = args.seeds
        base = _base_config(args)
        search_range = _search_range(args)
        if args.workers is not None and not 1 <= args.workers <= MAX_WORKERS:
            raise ConfigError("workers", args.workers, f"an integer in [1, {MAX_WORKERS}] (leave it out for one "
                                                       f"per core)")
        # The heaviest probe the search may ask for, checked here before any worker starts: a worker's
        # refusal would reach the user only after the pool and the first probes had started.
        bounds.check(Search(base, args.writers_at_interval_s).config_at(search_range.min_scale_ms))
    except (ConfigError, SearchRangeError) as error:
        return bad_input(error)
    progress = (lambda line: None) if args.json else (lambda line: print(line, file=sys.stderr, flush=True))
    address = args.ray_address or os.environ.get("RAY_ADDRESS")
    simulations = 0
    with _executor(address, args.workers, progress) as (submit_one, slots):
        def submit(config, seed):
            nonlocal simulations
            simulations += 1
            return submit_one(config, seed)

        search, step = capacity_search(base, args.writers_at_interval_s, search_range, submit, seeds, slots,
                                       progress)
    result = answer(search, step, simulations, time.perf_counter() - started)
    note = extrapolation(base, result)
    if note is not False:  # the profile records the client counts it was fitted on
        if args.json:
            result["extrapolation"] = note
        elif note:
            print(note, file=sys.stderr, flush=True)
    print(json.dumps(result) if args.json else render(base, result))
    return EXIT_OK


def extrapolation(base: SimConfig, result: dict):
    """A line saying the answer lies beyond the client counts the profile's terms were fitted on; None when it
    does not; False when the profile does not record them (the built-in and older profiles).

    The transactions committing at once at the usable point (Little's law: throughput x median commit
    latency) stand for the benchmark's clients, each always reading or writing the catalog object.
    """
    from simcore.bench import extrapolation_note

    if base.catalog == "service":
        return False
    operation = "append" if base.catalog == "append" else "cas"
    if not base.latency_profile.conditional(operation).fitted_clients:
        return False
    rate = result.get("throughput_cps", result.get("usable_throughput_cps"))
    latency_ms = result.get("commit_latency_p50_ms")
    if rate is None or latency_ms is None:
        return None
    committing = rate * latency_ms / 1000.0
    return extrapolation_note(base.latency_profile, operation, [round(committing, 1)],
                              f"at the usable point about {committing:.1f} transactions commit at once "
                              "(throughput x median commit latency), so the answer and its figures")


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


if __name__ == "__main__":
    sys.exit(main())
