"""``commit-sweeps bench`` (also ``python -m simcore bench``): seed 000's conditional-write benchmark, simulated.

N clients loop on one object, reading it and then writing it conditionally
on what they read, no retry (``simcore.bench``); printed per client count:
goodput, failure rate and latency percentiles (``--json``: one object per
count). ``commit-sweeps probe`` measures the same benchmark on a real store
and prints the same columns (``BENCH_COLUMNS``).
"""

from __future__ import annotations

import argparse
import json
import sys

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


BENCH_COLUMNS = (("clients", "clients", "{:d}"), ("goodput_ops", "goodput op/s", "{:.2f}"),
                 ("failure_rate", "failed", "{:.1%}"), ("latency_mean_ms", "mean ms", "{:.1f}"),
                 ("latency_p50_ms", "p50 ms", "{:.1f}"), ("latency_p95_ms", "p95 ms", "{:.1f}"),
                 ("latency_p99_ms", "p99 ms", "{:.1f}"))


def _bench(args: argparse.Namespace, seeds: list[int]) -> int:
    """``bench``: bad input raises ConfigError (exit 2 in ``run``) before anything runs."""
    import time

    from simcore.bench import OPERATIONS, bench, extrapolation_note, parse_clients
    from simcore.profiles import resolve_profile

    profile = resolve_profile(args.provider, args.latency_model, args.provider_file)
    if args.operation not in OPERATIONS:
        raise ConfigError("operation", args.operation, "one of " + ", ".join(OPERATIONS))
    clients = parse_clients(args.clients)
    started = time.perf_counter()
    results = bench(profile, args.operation, clients, seeds, args.duration_s, memory_limit())
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
