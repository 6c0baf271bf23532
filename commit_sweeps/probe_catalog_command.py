"""``commit-sweeps probe-catalog``: a catalog's SQL database measured, and fitted as a ``CatalogDatabase``.

    commit-sweeps probe-catalog --dsn postgresql://user@host:5432/db | sqlite:///path/file.db \\
                                [--transaction iceberg-jdbc|ducklake] [--clients 1-8] [--duration-s 10] \\
                                [--out catalog.json] [--json]

For each client count, N clients commit in a closed loop, no retry (a client whose commit lost waits
``--conflict-wait-ms`` first, as the real clients wait before a retry), each on its own connection: Iceberg's
JDBC catalog commit (one row per client, so no commit loses on its logic and the database's own ceiling
shows) or DuckLake's (every client on the one snapshot sequence, so concurrent commits collide as they do
in DuckLake, and are counted). Printed per count: commits/s, conflicts/s, latency percentiles, the client
side's cost; then the fitted database (``simcore.catalog_databases``): one client's median, sigma and
floor, and the concurrency by Little's law. ``--out`` gets the JSON ``catalog_database_from_json`` reads.

The probe works in scratch tables of its own (``commit_sweeps_probe_<random>_...``) and touches no other;
it drops them at the end, also on ^C, SIGTERM or SIGHUP, and says which to drop by hand if it could not.
Passwords in the DSN are masked in every message. Exit status: 0 measured, 1 the database failed a count
or ``--out`` could not be written, 2 bad input or the database refused the probe (one line, nothing
measured), 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import math
import os
import sys
import time
from typing import Callable

from simcore.errors import ConfigError
from commit_sweeps.flags import (EXIT_BAD_INPUT, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, Interrupted,
                                 add_duration_flag, bad_input, check_output_path, ignore_stop_signals, number,
                                 output_path, positive_int, stop_signals_interrupt)

PROBE_CATALOG_HELP = ("measure a catalog's SQL database (postgresql://, sqlite:///): N clients committing Iceberg's "
                      "JDBC or DuckLake's transaction; fits its service time and concurrency")
MAX_CLIENTS = 256
MAX_PROCESSES = 256
WARN_LAG = 0.10  # a ready client waited this share of the median commit for its CPU: the count may be distorted
WARN_CPU = 0.8  # the clients used this share of the machine's cores
DEFAULT_CONFLICT_WAIT_MS = 100.0  # ducklake_retry_wait_ms's default, and Iceberg's commit.retry.min-wait-ms


def configure(parser: argparse.ArgumentParser) -> None:
    from store_probe.catalog_sql import TRANSACTIONS

    parser.add_argument("--dsn", required=True, metavar="DSN",
                        help="postgresql://user[:password]@host[:port]/database (psycopg: pip install "
                             "'commit-sweeps[catalog]'; a password may also come from PGPASSWORD or ~/.pgpass) or "
                             "sqlite:///path/file.db (an existing file; sqlite:////absolute/path.db)")
    parser.add_argument("--transaction", default="iceberg-jdbc", choices=TRANSACTIONS,
                        help="iceberg-jdbc (the JDBC catalog's UPDATE ... WHERE metadata_location = ?, one row per "
                             "client) or ducklake (read the latest snapshot, insert the next, its changes and a data "
                             "file, in one transaction, all clients on one snapshot sequence); default iceberg-jdbc")
    parser.add_argument("--clients", default="1-8",
                        help=f"client counts, including 1: 1-8, or 1,2,4,8,16 (each in [1, {MAX_CLIENTS}]; "
                             f"default 1-8)")
    add_duration_flag(parser, default_s=10.0, warm_up=False,
                      what="seconds measured per client count, the first min(1, S/10) a warm-up")
    parser.add_argument("--name", default=None, metavar="NAME",
                        help="the fitted database's name (default: probed-postgresql or probed-sqlite)")
    parser.add_argument("--out", type=output_path, default=None, metavar="JSON",
                        help="write the fitted database here, the JSON catalog_database_from_json reads")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per client count per line, then the fitted database's")
    parser.add_argument("--conflict-wait-ms", type=number, default=DEFAULT_CONFLICT_WAIT_MS, metavar="MS",
                        help="a client whose commit lost waits this long, less up to half at random, before its next "
                             f"(default {DEFAULT_CONFLICT_WAIT_MS:g}: DuckLake's and Iceberg's first retry wait; 0: "
                             "none)")
    parser.add_argument("--processes", type=positive_int, default=None, metavar="N",
                        help="client processes, the clients spread over them as threads (default: one per core, "
                             "at most one per client; 1: all behind one interpreter)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def default_processes(clients: int) -> int:
    """One interpreter per core, the clients as threads within: the drivers release the GIL while the database
    works, and on 2 cores threads committed as fast as a process per client or faster (studies/catalog_service,
    the threads-or-processes check), where each process more competes with the database for the cores."""
    return max(1, min(clients, os.cpu_count() or 1))


def run(args: argparse.Namespace) -> int:
    from simcore.bench import parse_clients
    from simcore.catalog_databases import CatalogDatabase
    from store_probe.catalog_sql import parse_dsn

    progress: Callable[[str], None] = (lambda line: None) if args.quiet else (
        lambda line: print(line, file=sys.stderr, flush=True))
    try:
        dsn = parse_dsn(args.dsn)
        counts = parse_clients(args.clients)
        if max(counts) > MAX_CLIENTS or 1 not in counts:
            raise ConfigError("clients", args.clients, f"client counts in [1, {MAX_CLIENTS}] including 1 (the fit "
                                                       f"takes the service time from one client)")
        if not (math.isfinite(args.duration_s) and 2 <= args.duration_s <= 86400):
            raise ConfigError("duration_s", args.duration_s, "seconds in [2, 86400]")
        if not (math.isfinite(args.conflict_wait_ms) and 0 <= args.conflict_wait_ms <= 60_000):
            raise ConfigError("conflict_wait_ms", args.conflict_wait_ms, "milliseconds in [0, 60000]")
        if args.processes is not None and not 1 <= args.processes <= MAX_PROCESSES:
            raise ConfigError("processes", args.processes, f"an integer in [1, {MAX_PROCESSES}]")
        name = args.name or f"probed-{dsn.kind}"
        CatalogDatabase(name, 1.0, 1.0, 1.0, 1, "check")  # the name's rules, before measuring
        if args.out is not None:
            check_output_path(args.out)
    except ConfigError as error:
        return bad_input(error)
    with stop_signals_interrupt():
        return _probe(args, dsn, counts, name, progress)


def _probe(args, dsn, counts, name, progress) -> int:
    import psutil
    from store_probe.catalog_clients import CatalogClientPool, Work
    from store_probe.catalog_results import summarise
    from store_probe.catalog_sql import CatalogSQLError, ScratchTables, connect, create_tables, database_errors, \
        describe_server

    tables = ScratchTables.new()
    admin = pool = None
    created = False
    try:
        try:
            admin = connect(dsn)
            server = describe_server(admin, dsn.kind)
            created = True  # from here on some of the tables may exist: clean up whatever happens
            create_tables(admin, dsn.kind, tables, args.transaction, max(counts))
        except CatalogSQLError as error:
            print(f"error: dsn: {error}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except database_errors(dsn.kind) as error:
            print(dsn.redact(f"error: dsn: {dsn.describe()} refused the probe's scratch tables "
                             f"({tables.name('*')}): {' '.join(str(error).split())}"), file=sys.stderr)
            return EXIT_BAD_INPUT
        progress(f"probe-catalog: {dsn.describe()}: {server}; {args.transaction} commits in "
                 f"{', '.join(tables.names(args.transaction))}")
        pool = CatalogClientPool(Work(dsn, tables, args.transaction, args.conflict_wait_ms),
                                 args.processes or default_processes(max(counts)))
        cores = psutil.cpu_count() or 1
        results, one_client = [], []
        for clients in counts:
            progress(f"probe-catalog: {clients} client(s): measuring for {args.duration_s:g} s")
            started = time.monotonic()
            result, commits = summarise(clients, pool.run(clients, args.duration_s), args.duration_s, cores)
            if result.commits_per_s == 0:
                print(f"error: {dsn.describe()}: no commit succeeded at {clients} client(s)"
                      + (f" ({result.errors} errors, first: {result.first_error})" if result.errors else ""),
                      file=sys.stderr)
                return EXIT_FAILED
            if clients == 1:
                one_client = [c.latency_ms for c in commits if c.committed]
            _warn(result, cores)
            results.append(result)
            if args.json:
                print(json.dumps({"transaction": args.transaction, **result.to_json()}, allow_nan=False), flush=True)
            progress(_progress_line(result, time.monotonic() - started))
        database, saturated = _fit(name, args, server, counts, one_client, results)
        if args.json:
            print(json.dumps({"catalog_database": json.loads(database.to_json())}), flush=True)
        else:
            print(_table(dsn.describe(), args, results))
            print(_fitted(database, saturated))
        if saturated.clients == max(counts) and len(counts) > 1:
            print(f"warning: probe-catalog: the most commits/s were at the most clients ({saturated.clients}): "
                  f"the database may not have saturated, and concurrency {database.concurrency} may be low; probe "
                  f"more clients", file=sys.stderr)
        if args.out is not None:
            try:
                _write(args.out, database.to_json())
            except OSError as error:
                print(f"error: out: {args.out!r} cannot be written ({error.strerror})", file=sys.stderr)
                return EXIT_FAILED
            progress(f"probe-catalog: wrote {args.out}")
        return EXIT_OK
    except Interrupted as signal_name:
        progress(f"probe-catalog: interrupted ({signal_name}); cleaning up")
        return EXIT_INTERRUPTED
    except (CatalogSQLError, ConfigError) as error:
        print(dsn.redact(f"error: {dsn.describe()}: {error}"), file=sys.stderr)
        return EXIT_FAILED
    finally:
        ignore_stop_signals()  # until the tables are gone
        if pool is not None:
            pool.close()  # first: a client mid-transaction would hold the locks DROP TABLE waits for
        if created:
            _drop(dsn, tables, admin, progress)
        if admin is not None:
            with contextlib.suppress(Exception):
                admin.close()


def _fit(name, args, server, counts, one_client, results):
    from simcore.catalog_databases import fit_catalog_database

    saturated = max(results, key=lambda r: r.commits_per_s)
    source = (f"commit-sweeps probe-catalog {datetime.date.today().isoformat()}: {args.transaction} commits on "
              f"{server}, {args.duration_s:g} s per count at {','.join(map(str, counts))} clients")
    database = fit_catalog_database(name, one_client, {r.clients: r.commits_per_s for r in results}, source[:400])
    return database, saturated


def _warn(result, cores: int) -> None:
    lag_share = result.lag_p99_ms / result.latency_p50_ms
    if lag_share > WARN_LAG or result.client_cpu_share > WARN_CPU:
        print(f"warning: probe-catalog: at {result.clients} clients the client side may distort the result: CPU "
              f"lag p99 {result.lag_p99_ms:.2f} ms ({lag_share:.0%} of the median commit), clients used "
              f"{result.client_cpu_share:.0%} of {cores} cores", file=sys.stderr)
    if result.errors:
        print(f"warning: probe-catalog: {result.errors} commit(s) at {result.clients} clients failed other than by a "
              f"conflict, not counted (first: {result.first_error})", file=sys.stderr)


def _progress_line(result, elapsed_s: float) -> str:
    return (f"probe-catalog: {result.clients} client(s): {result.commits_per_s:.1f} commits/s, "
            f"{result.conflicts_per_s:.1f} conflicts/s, p50 {result.latency_p50_ms:.2f} ms, p99 "
            f"{result.latency_p99_ms:.2f} ms; client CPU {result.client_cpu_share:.0%}, lag p99 "
            f"{result.lag_p99_ms:.2f} ms ({elapsed_s:.0f} s)")


COLUMNS = (("clients", "clients", "{:d}"), ("commits_per_s", "commits/s", "{:.1f}"),
           ("conflicts_per_s", "conflicts/s", "{:.1f}"), ("conflict_share", "conflicts", "{:.1%}"),
           ("latency_p50_ms", "p50 ms", "{:.2f}"), ("latency_p99_ms", "p99 ms", "{:.2f}"),
           ("client_cpu_share", "client CPU", "{:.0%}"), ("lag_p99_ms", "lag p99 ms", "{:.2f}"))


def _table(where: str, args, results) -> str:
    cells = [[title for _, title, _ in COLUMNS]]
    for result in results:
        row = []
        for key, _, fmt in COLUMNS:
            value = getattr(result, key)
            row.append("-" if isinstance(value, float) and math.isnan(value) else fmt.format(value))
        cells.append(row)
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS))]
    head = (f"{where} {args.transaction} probe, {args.duration_s:g} s per client count: closed loop, each client "
            f"its own connection, no retry")
    return head + "\n" + "\n".join("  ".join(c.rjust(w) for c, w in zip(line, widths)) for line in cells)


def _fitted(database, saturated) -> str:
    return "\n".join([
        f"fitted catalog database {database.name}:",
        f"  commit service time  median {database.commit_median_ms:.3g} ms, sigma {database.commit_sigma:.3g}, "
        f"floor {database.commit_floor_ms:.3g} ms (one client)",
        f"  concurrency          {database.concurrency} (Little's law: {saturated.commits_per_s:.1f} commits/s at "
        f"{saturated.clients} clients x {database.commit_median_ms:.3g} ms)",
        f"  ceiling              {database.ceiling_cps:.1f} commits/s",
        f"  source               {database.source}",
    ])


def _drop(dsn, tables, admin, progress) -> None:
    """Drop the scratch tables and check they are gone: three tries (a fresh connection after the first), then
    say what to drop by hand."""
    from store_probe.catalog_sql import connect, drop_tables

    why = "they still exist"
    for attempt in range(3):
        try:
            if attempt or admin is None:
                with contextlib.suppress(Exception):
                    admin.close()
                admin = connect(dsn)
            left = drop_tables(admin, dsn.kind, tables)
            if not left:
                progress(f"probe-catalog: dropped the scratch tables {tables.name('*')}")
                return
        except Exception as error:  # noqa: BLE001 - told to the user below, with the tables to drop by hand
            why = dsn.redact(f"{type(error).__name__}: {' '.join(str(error).split())}")
        time.sleep(1.0)
    print(f"warning: probe-catalog: could not drop {tables.name('*')} in {dsn.describe()} ({why}); drop them by "
          f"hand", file=sys.stderr)


def _write(path: str, text: str) -> None:
    """Written beside ``path`` then renamed: never a torn file."""
    partial = path + ".partial"
    try:
        with open(partial, "w") as handle:
            handle.write(text)
        os.replace(partial, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(partial)
        raise
