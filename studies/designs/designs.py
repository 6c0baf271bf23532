"""Every commit design on each store: ``commit-sweeps capacity --compare --json`` per store, table count and mix,
one CSV row per design (its usable commits/s, p50 and p99 commit latency, requests per commit by kind, store
cost per 1,000 commits), for docs/architectures.md's "What the study shows".

    python -m studies.designs [--providers s3,gcp] [--tables 1,10] [--mixes 1.0,0.9] [--client NAME]
        [--seeds N|LIST] [--out FILE] [--overwrite]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time

from commit_sweeps.cli import main as commit_sweeps
from commit_sweeps.flags import add_client_flag, add_seeds_flag
from studies.results import add_out_flags, command_line, out_path, write_csv

PROG = "python -m studies.designs"


def compare(provider: str, tables: int, fa: float, client: str, seeds: str) -> list[dict]:
    """The designs' JSON lines of one ``capacity --compare``."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = commit_sweeps(["capacity", "--compare", "--json", "--provider", provider, "--num-tables", str(tables),
                              "--fast-append-ratio", str(fa), "--client", client, "--seeds", seeds])
    if code:
        raise SystemExit(code)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def row_of(provider: str, tables: int, fa: float, line: dict, wall_s: float) -> dict:
    store = line["store_requests_per_commit"]
    return {"provider": provider, "num_tables": tables, "fast_append_ratio": fa, "design": line["design"],
            "client": line["client"], "usable_throughput_cps": line["usable_throughput_cps"],
            "usable_lower_bound": line["usable_lower_bound"],
            "commit_latency_p50_ms": line["commit_latency_p50_ms"],
            "commit_latency_p99_ms": line["commit_latency_p99_ms"],
            "store_writes_per_commit": store["write"], "store_reads_per_commit": store["read"],
            "catalog_calls_per_commit": line["catalog_calls_per_commit"],
            "cost_per_1000_commits_usd": line["cost_per_1000_commits_usd"], "compare_wall_s": round(wall_s, 1),
            "config_hash": line["config_hash"]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("--providers", default="s3,gcp", help="stores (default s3,gcp)")
    parser.add_argument("--tables", default="1,10", help="table counts (default 1,10)")
    parser.add_argument("--mixes", default="1.0,0.9", help="FastAppend shares (default 1.0,0.9)")
    add_client_flag(parser)
    parser.set_defaults(client="iceberg-java")  # the Iceberg designs' client: the one most deployments run
    add_seeds_flag(parser)
    add_out_flags(parser, "one row per design and setup")
    args = parser.parse_args(argv)
    path = out_path(args, "designs", "compare", "csv")
    rows = []
    for provider in args.providers.split(","):
        for tables in (int(t) for t in args.tables.split(",")):
            for fa in (float(m) for m in args.mixes.split(",")):
                started = time.perf_counter()
                lines = compare(provider, tables, fa, args.client, ",".join(map(str, args.seeds)))
                wall = time.perf_counter() - started
                print(f"{provider}, {tables} table(s), FA {fa:g}: " + ", ".join(
                    f"{line['design']} {line['usable_throughput_cps'] or 0:.2f}" for line in lines)
                      + f" c/s ({wall:.0f} s)", file=sys.stderr, flush=True)
                rows += [row_of(provider, tables, fa, line, wall) for line in lines]
    write_csv(path, rows, command_line(PROG, argv))
    print(f"wrote {path}", file=sys.stderr)
    return 0
