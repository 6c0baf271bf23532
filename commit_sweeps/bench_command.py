"""``commit-sweeps bench`` (also ``python -m simcore bench``): seed 000's conditional-write benchmark, simulated.

N clients loop on one object, reading it and then writing it conditionally
on what they read, no retry (``simcore.bench``); printed per client count:
goodput, failure rate and latency percentiles (``--json``: one object per
count). ``commit-sweeps probe`` measures the same benchmark on a real store
and prints the same columns (``BENCH_COLUMNS``).

A run estimated to take ``PROGRESS_FROM_S`` or more first says how long, on
stderr; any run then says on stderr how far it got, at most every
``PROGRESS_EVERY_S`` as client counts finish (1-1024 clients x 300 s is about
ten minutes).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Optional, Sequence

from simcore.errors import ConfigError
from commit_sweeps.flags import (EXIT_OK, add_duration_flag, add_latency_flags, add_provider_flag, add_seeds_flag,
                                 bad_input, memory_limit)
from commit_sweeps.simulate_command import format_cell, json_value

BENCH_HELP = ("simulate seed 000's conditional-write benchmark: N clients reading then conditionally writing one "
              "object, no retry")


def configure(bench: argparse.ArgumentParser) -> None:
    """The benchmark's flags: ``python -m simcore bench`` and ``commit-sweeps bench``."""
    add_provider_flag(bench)
    bench.add_argument("--operation", required=True, help="cas (read, then conditional overwrite) or append "
                       "(read the length, then position-conditional append)")
    bench.add_argument("--clients", required=True, help="client counts: 1-16, 4 or 1,2,4,8")
    add_duration_flag(bench, default_s=300.0, warm_up=False)
    add_latency_flags(bench)
    add_seeds_flag(bench, required=True)
    bench.add_argument("--json", action="store_true", help="one JSON object per client count per line")


def run(args: argparse.Namespace) -> int:
    """Run the benchmark the flags describe; bad values exit 2 with one line."""
    try:
        return _bench(args, list(args.seeds))
    except ConfigError as error:
        return bad_input(error)


# The estimate: check_bench's ops (2 x clients x duration / (read + write median), an upper bound) simulated at
# about this rate; measured 7-12 million a second for S3's profiles, more for a throttled store's waiting clients.
ESTIMATED_OPS_PER_S = 5e6
PROGRESS_FROM_S = 10.0  # a run estimated shorter says nothing before it ends
PROGRESS_EVERY_S = 10.0  # at most one progress line this often


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


class _Progress:
    """``simcore.bench.bench``'s progress callback: the estimate before the first simulation, then a line on
    stderr at most every ``PROGRESS_EVERY_S`` as client counts finish. A client count's work grows with its
    clients (each loops on its own), so what is left is the elapsed time scaled by the clients left."""

    def __init__(self, op_ms: float, clients: Sequence[int], seeds: Sequence[int], duration_s: float):
        self.clients, self.seeds, self.duration_s = list(clients), list(seeds), duration_s
        self.ops = 2.0 * sum(self.clients) * len(self.seeds) * duration_s * 1000.0 / op_ms
        self.started = self.printed = time.perf_counter()
        self.done = 0
        self.spoke = False

    def __call__(self, result) -> None:
        now = time.perf_counter()
        if result is None:
            self.started = self.printed = now
            estimate_s = self.ops / ESTIMATED_OPS_PER_S
            if estimate_s >= PROGRESS_FROM_S:
                self._say(f"bench: {len(self.clients)} client count(s) x {len(self.seeds)} seed(s) x "
                          f"{self.duration_s:g} s, at most about {self.ops:.2g} ops to simulate: estimated "
                          f"{_duration(estimate_s)}; progress follows as client counts finish")
            return
        self.done += 1
        finished = self.done == len(self.clients)
        if now - self.printed < PROGRESS_EVERY_S and not (finished and self.spoke):
            return
        elapsed = now - self.started
        done_clients = sum(self.clients[:self.done])
        left = elapsed * (sum(self.clients) - done_clients) / max(done_clients, 1)
        self._say(f"bench: {self.done}/{len(self.clients)} client counts done (last: {result.clients} clients), "
                  f"{_duration(elapsed)} elapsed" + ("" if finished else f", about {_duration(left)} left"))

    def _say(self, line: str) -> None:
        self.spoke = True
        self.printed = time.perf_counter()
        print(line, file=sys.stderr, flush=True)


def _op_ms(profile, operation: str) -> Optional[float]:
    """One client's read plus conditional write (median ms), as ``check_bench`` counts an op."""
    try:
        return profile.read().median_ms + profile.conditional_latency(operation).median_ms
    except (ConfigError, AttributeError, ValueError):  # no such operation: bench refuses it first
        return None


BENCH_COLUMNS = (("clients", "clients", "{:d}"), ("goodput_ops", "goodput op/s", "{:.2f}"),
                 ("failure_rate", "failed", "{:.1%}"), ("latency_mean_ms", "mean ms", "{:.1f}"),
                 ("latency_p50_ms", "p50 ms", "{:.1f}"), ("latency_p95_ms", "p95 ms", "{:.1f}"),
                 ("latency_p99_ms", "p99 ms", "{:.1f}"))


def _bench(args: argparse.Namespace, seeds: list[int]) -> int:
    """``bench``: bad input raises ConfigError (exit 2 in ``run``) before anything runs."""
    from simcore.bench import OPERATIONS, bench, extrapolation_note, parse_clients
    from simcore.profiles import resolve_profile

    profile = resolve_profile(args.provider, args.latency_model, args.provider_file)
    if args.operation not in OPERATIONS:
        raise ConfigError("operation", args.operation, "one of " + ", ".join(OPERATIONS))
    clients = parse_clients(args.clients)
    started = time.perf_counter()
    op_ms = _op_ms(profile, args.operation)
    progress = _Progress(op_ms, clients, seeds, args.duration_s) if op_ms else None
    results = bench(profile, args.operation, clients, seeds, args.duration_s, memory_limit(), progress=progress)
    elapsed = time.perf_counter() - started
    if args.json:
        for result in results:
            print(json.dumps({k: json_value(v) for k, v in result.to_json().items()}, allow_nan=False))
    else:
        model = f"profile {args.provider_file}" if args.provider_file else f"{args.latency_model} latency model"
        print(f"{profile.name} {args.operation} benchmark, {model}, {args.duration_s:g} s x seeds "
              f"{','.join(map(str, seeds))}: closed loop, read then conditional write, no retry")
        cells = [[title for _, title, _ in BENCH_COLUMNS]]
        cells += [[format_cell(getattr(r, key), fmt) for key, _, fmt in BENCH_COLUMNS] for r in results]
        widths = [max(len(line[i]) for line in cells) for i in range(len(BENCH_COLUMNS))]
        print("\n".join("  ".join(c.rjust(w) for c, w in zip(line, widths)) for line in cells))
    print(f"simulated {len(clients)} client counts x {len(seeds)} seeds x {args.duration_s:g} s in {elapsed:.2f} s",
          file=sys.stderr)
    note = extrapolation_note(profile, args.operation, clients)
    if note:
        print(note, file=sys.stderr)
    return EXIT_OK
