"""The catalog database's commit service time and ceiling, measured: PostgreSQL and SQLite on this machine.

    python -m studies.catalog_service [--duration-s 5] [--database postgresql|sqlite|both] \\
                                      [--clients 1,2,4,8,16] [--out FILE] [--overwrite]

For each database it runs the user's command, ``commit-sweeps probe-catalog --json``, once per commit
transaction (``iceberg-jdbc``: one row per client, the database's own ceiling; ``ducklake``: every client on
the one snapshot sequence, conflicts inherent) at each client count, then Iceberg's commit at ``--workers-clients``
clients spread three ways (one process of threads, one per core, one per client; in turns, ``--workers-repeats``
rounds), to see whether the GIL, or a process per client, distorts the figures. PostgreSQL is a private server (``postgres_server``:
Debian's package, initdb into a temporary folder, 127.0.0.1 only, stopped afterwards); SQLite a file in a
temporary folder in WAL mode. Each row carries the load average when its count ended (the machine's 2 cores
are shared). Writes ``results/catalog-service-<date>.csv`` (a row per count) and ``.json`` (the fitted
databases, the servers, the load), and prints the fitted databases as the TOML of
``simcore/catalog_databases.toml``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

from studies.results import add_out_flags, command_line, out_path, write_csv, write_json

ROOT = Path(__file__).resolve().parents[2]
STUDY = "catalog_service"
TRANSACTIONS = ("iceberg-jdbc", "ducklake")
NAMES = {("postgresql", "iceberg-jdbc"): "postgresql", ("sqlite", "iceberg-jdbc"): "sqlite",
         ("postgresql", "ducklake"): "postgresql-ducklake", ("sqlite", "ducklake"): "sqlite-ducklake"}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m studies.catalog_service", description=__doc__.split("\n")[0])
    parser.add_argument("--duration-s", type=float, default=5.0, help="seconds per client count (default 5)")
    parser.add_argument("--database", choices=("postgresql", "sqlite", "both"), default="both")
    parser.add_argument("--clients", default="1,2,4,8,16", help="client counts (default 1,2,4,8,16)")
    parser.add_argument("--workers-clients", type=int, default=8,
                        help="the client count of the threads-or-processes check (default 8; 0: none)")
    parser.add_argument("--workers-repeats", type=int, default=3,
                        help="rounds of that check, each running every way of spreading the clients once (default 3)")
    add_out_flags(parser, "the per-count rows (CSV; the fitted databases go beside it as .json)")
    return parser


def _probe(dsn: str, transaction: str, clients: str, duration_s: float, name: str, processes=None) -> tuple:
    """Run probe-catalog; (its per-count rows, each stamped with the load average as it arrived; the fitted
    database)."""
    command = [sys.executable, "-m", "commit_sweeps", "probe-catalog", "--dsn", dsn, "--transaction", transaction,
               "--clients", clients, "--duration-s", f"{duration_s:g}", "--json", "--name", name]
    if processes is not None:
        command += ["--processes", str(processes)]
    env = {**os.environ, "PYTHONPATH": str(ROOT) + (os.pathsep + os.environ["PYTHONPATH"]
                                                    if os.environ.get("PYTHONPATH") else "")}
    rows, database = [], None
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                          cwd=ROOT) as process:
        for line in process.stdout:
            answer = json.loads(line)
            if "catalog_database" in answer:
                database = answer["catalog_database"]
                continue
            load = os.getloadavg()
            rows.append({**{k: round(v, 4) if isinstance(v, float) else v for k, v in answer.items()},
                         "load_1m": round(load[0], 2), "load_5m": round(load[1], 2)})
            print(f"  {name} {transaction} {answer['clients']:>2} clients"
                  + (f" (processes {processes})" if processes else "")
                  + f": {answer['commits_per_s']:.1f} commits/s, {answer['conflicts_per_s']:.1f} conflicts/s, "
                    f"p50 {answer['latency_p50_ms']:.2f} ms, client CPU {answer['client_cpu_share']:.0%}, "
                    f"load {load[0]:.2f}", flush=True)
        errors = process.stderr.read()
    for line in errors.splitlines():
        if line.startswith(("warning:", "error:")):
            print(f"  {line}", flush=True)
    if process.returncode != 0:
        raise SystemExit(f"catalog_service: probe-catalog {transaction} exited {process.returncode}")
    return rows, database


def _workers_check(kind: str, dsn: str, clients: int, duration_s: float, repeats: int) -> list[dict]:
    """Iceberg JDBC commits at ``clients`` clients spread over 1 process (threads behind one GIL), one per core,
    and one per client, in turns (``repeats`` rounds, so a change in the shared machine's load falls on every
    way alike). Through the probe's own pool and summary, without its fit."""
    import psutil
    from store_probe.catalog_clients import CatalogClientPool, Work
    from store_probe.catalog_results import summarise
    from store_probe.catalog_sql import ScratchTables, connect, create_tables, drop_tables, parse_dsn

    parsed = parse_dsn(dsn)
    tables = ScratchTables.new()
    admin = connect(parsed)
    cores = psutil.cpu_count() or 1
    ways = {"1 (threads)": 1, f"{cores} (one per core)": cores, f"{clients} (one per client)": clients}
    rows = []
    try:
        create_tables(admin, parsed.kind, tables, "iceberg-jdbc", clients)
        pools = {way: CatalogClientPool(Work(parsed, tables, "iceberg-jdbc"), processes) for way, processes in
                 ways.items()}
        try:
            for round_ in range(1, repeats + 1):
                for way, pool in pools.items():
                    result, _ = summarise(clients, pool.run(clients, duration_s), duration_s, cores)
                    load = os.getloadavg()
                    rows.append({"database": kind, "transaction": "iceberg-jdbc", "processes": way,
                                 "workers_round": round_, **{k: round(v, 4) if isinstance(v, float) else v
                                                             for k, v in result.to_json().items()},
                                 "load_1m": round(load[0], 2), "load_5m": round(load[1], 2)})
                    print(f"  {kind} workers check round {round_}, {clients} clients over {way}: "
                          f"{result.commits_per_s:.1f} commits/s, p50 {result.latency_p50_ms:.2f} ms, client CPU "
                          f"{result.client_cpu_share:.0%}, load {load[0]:.2f}", flush=True)
        finally:
            for pool in pools.values():
                pool.close()
    finally:
        drop_tables(admin, parsed.kind, tables)
        admin.close()
    return rows


@contextlib.contextmanager
def _database(kind: str):
    """(dsn, what it is) of a fresh database of ``kind``, gone afterwards."""
    if kind == "postgresql":
        from studies.catalog_service.postgres_server import private_server

        with private_server() as server:
            yield server.dsn, f"{server.version}, private server on 127.0.0.1, data on {_filesystem(server.data_dir)}"
        return
    with tempfile.TemporaryDirectory(prefix="commit-sweeps-sqlite-") as folder:
        path = Path(folder) / "catalog.db"
        connection = sqlite3.connect(path)
        connection.execute("PRAGMA journal_mode=WAL")  # persistent in the file: every probe connection gets it
        connection.close()
        yield f"sqlite:///{path}", f"SQLite {sqlite3.sqlite_version}, WAL, file on {_filesystem(path.parent)}"


def _filesystem(path: Path) -> str:
    answer = subprocess.run(["df", "--output=fstype", str(path)], capture_output=True, text=True)
    return answer.stdout.split()[-1] if answer.returncode == 0 and answer.stdout.split() else "unknown"


def main(argv=None) -> int:
    args = _parser().parse_args(argv)
    csv_path = out_path(args, STUDY, "catalog-service", "csv")
    json_path = csv_path.with_suffix(".json")
    command = command_line("python -m studies.catalog_service", argv)
    kinds = ("postgresql", "sqlite") if args.database == "both" else (args.database,)
    rows, fitted, servers = [], {}, {}
    load_before = os.getloadavg()
    for kind in kinds:
        with _database(kind) as (dsn, what):
            servers[kind] = what
            print(f"{kind}: {what}", flush=True)
            for transaction in TRANSACTIONS:
                name = NAMES[kind, transaction]
                counted, database = _probe(dsn, transaction, args.clients, args.duration_s, name)
                rows += [{"database": kind, "transaction": transaction, "processes": "default: one per core", **row}
                         for row in counted]
                fitted[name] = database
            if args.workers_clients:
                rows += _workers_check(kind, dsn, args.workers_clients, args.duration_s, args.workers_repeats)
    write_csv(csv_path, rows, command)
    write_json(json_path, {"servers": servers, "cores": os.cpu_count(), "load_before": load_before,
                           "load_after": os.getloadavg(), "duration_s": args.duration_s, "clients": args.clients,
                           "catalog_databases": fitted}, command)
    print(f"wrote {csv_path} and {json_path}")
    print("\n# simcore/catalog_databases.toml")
    for name, database in fitted.items():
        print(f"\n[{name}]")
        for key in ("commit_median_ms", "commit_sigma", "commit_floor_ms"):
            print(f"{key} = {database[key]:.4g}")
        print(f"concurrency = {database['concurrency']}")
        print(f"source = {json.dumps(database['source'])}")
    return 0
