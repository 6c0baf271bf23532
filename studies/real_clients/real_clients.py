"""Predicted vs measured with a real table-format client: delta-rs or PyIceberg writers on the lab's S3.

    scripts/store-lab.sh up --delay-ms 20 --jitter-ms 5
    eval "$(scripts/store-lab.sh env)"
    commit-sweeps probe --store-uri "$STORE_LAB_S3_URI" --endpoint-url "$STORE_LAB_S3_ENDPOINT" \\
        --clients 1-4 --duration-s 45 --max-client-lag 1 --out samples.csv
    commit-sweeps fit --samples samples.csv --base s3 --name lab-s3 --out lab-s3.toml
    python -m studies.real_clients --lab-profile lab-s3.toml [--real-client delta-rs|pyiceberg] \\
        [--writers 2,4,8,16] [--intervals-s 1] [--duration-s 60] [--seeds 3] [--work-dir real-clients] [--out FILE]

(``pip install 'commit-sweeps[realclients]'`` installs deltalake and pyiceberg with its SQL catalog.) For each
commit interval S and writer count N, N writer processes append a one-row batch every S seconds to one new,
checkpointed table on the lab's S3, loading the table anew on each call. A call's retries come from the table's
history (delta-rs) or from the retry warnings the call logged (PyIceberg). Beside each point, the model on the
lab profile with the client's preset: over the run's own seconds from a cold start at the run's writer phases,
in the steady state, and ``capacity``'s largest N. A point where this machine rather than the store limited the
writers is marked ``cpu-bound``, ``store-slowed`` or ``call-slowed``. Each point goes to ``points.jsonl`` in
``--work-dir`` and as a row to ``--out`` (default ``studies/real_clients/results/points-<client>-<date>.csv``).
PROTOCOL.md beside this script has the protocol in full.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import numpy as np

from simcore.errors import ConfigError
from commit_sweeps.flags import add_seeds_flag
from studies.real_clients.errors import SetupError
from studies.real_clients.measure import (Attempt, Measured, call_line, largest_passing, logged_retries, measure,
                                         model_call_parts, model_figures, read_slowdown, tagged_retries)
from studies.real_clients.writer_processes import SCHEMA_FIELDS, one_row_batch, run_writers
from studies.results import add_out_flags, command_line, out_path, write_csv

ROOT = Path(__file__).resolve().parents[2]
CPU_BOUND_SHARE = 0.5  # above this share of the cores the writers' own CPU distorts what they measure
# A store read this much slower beside the writers than alone: the lab's store is no longer the profile's
# (studies/real_clients/log.md: at 20 ms each way the reads stayed within x1.03 up to 16 writers, and took x1.15-1.32
# beside 20-28 writer processes, where the model's retries were 38-45% high).
STORE_SLOWED = 1.10
# The writers' own call (its part outside the race, ``call_parts``) this much longer than the model's: the writers'
# requests ran slower than the probe's clients' did (on two cores, with the writers' own CPU; studies/real_clients/log.md, "The
# writers' own CPU"). Near the onset 3% on every latency moves the model's retries by a fifth, so there the point
# compares this machine's load as much as the store.
CALL_SLOWED = 1.05
WINDOW_SEEDS = 20  # the model over a run's own minute: 20 x a few hundred calls
JAVA_WRITERS_DEFAULT = "threads"  # iceberg-java: one JVM, a thread a writer (README: half the CPU of one JVM each)
TARGET_SHARE = 0.20  # the targets: largest N and retries per commit within 20%
CLIENTS = ("delta-rs", "pyiceberg", "ducklake", "iceberg-java")
# The clients whose writers are a JVM or a DuckDB per process: their CPU per commit is larger, and above a third
# of the cores (two of this machine's, shared with MinIO and the proxy) they slow the store they measure.
CPU_BOUND_SHARE_BY_CLIENT = {"ducklake": 1 / 3, "iceberg-java": 1 / 3}


def storage_options() -> dict:
    """delta-rs's object_store options for the lab's S3, from the lab's environment (never printed)."""
    endpoint = os.environ.get("STORE_LAB_S3_ENDPOINT")
    if not endpoint:
        raise SystemExit('real_clients: error: STORE_LAB_S3_ENDPOINT is not set; run eval "$(scripts/store-lab.sh env)"')
    return {"AWS_ENDPOINT_URL": endpoint, "AWS_ALLOW_HTTP": "true", "AWS_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": os.environ["AWS_ACCESS_KEY_ID"],
            "AWS_SECRET_ACCESS_KEY": os.environ["AWS_SECRET_ACCESS_KEY"]}


def lab_s3_uri() -> str:
    """The lab's S3 prefix, as ``scripts/store-lab.sh env`` exports it."""
    return os.environ.get("STORE_LAB_S3_URI", "s3://lab/probes")


def lab_bucket_uri() -> str:
    """The lab's S3 bucket (``STORE_LAB_S3_URI`` less its prefix), where each run makes its tables."""
    return lab_s3_uri().rsplit("/", 1)[0]


def open_lab_store():
    """(the lab's S3 URI, the probe's store adapter for it), checked: ConfigError, one line, when it is not there."""
    from store_probe.stores import open_store
    from store_probe.uri import parse_store_uri

    uri = parse_store_uri(lab_s3_uri())
    store = open_store(uri, os.environ.get("STORE_LAB_S3_ENDPOINT"))
    store.check()
    return uri, store


class StoreReadTimer:
    """Times one small read of the lab's S3 every 50 ms, from a thread of this (otherwise waiting) process.

    The model is fed the probe's latencies, taken by one to four probe clients on an otherwise idle machine;
    N writers load the store, the proxy and this machine's cores more. What a read takes while they run says
    by how much, point by point, beside the same reads with nothing else running (studies/real_clients/log.md: at the
    onset every 2 s the reads took 10% longer, and the model with latencies 10% longer met the retries).
    Its object is its own (named as the probe names its, under the lab's prefix, with ``token``), and is
    deleted by ``close``. One read every 50 ms adds 20 requests a second to the writers' hundreds.
    """

    EVERY_S = 0.05

    def __init__(self, token: str):
        uri, self.store = open_lab_store()  # ConfigError, one line, when the lab's S3 is not there
        self.name = uri.object_name(token)
        self.store.put(self.name, b"x" * 1024)

    def during(self, work):
        """(work()'s answer, the reads' latencies in ms while it ran)."""
        stop, times = threading.Event(), []

        def loop():
            while not stop.is_set():
                start = time.perf_counter()
                self.store.read(self.name)
                times.append((time.perf_counter() - start) * 1000.0)
                stop.wait(self.EVERY_S)

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        try:
            answer = work()
        finally:
            stop.set()
            thread.join(timeout=30)
        return answer, times

    def alone(self, seconds: float) -> list[float]:
        """The reads' latencies in ms with nothing else of this harness running."""
        return self.during(lambda: time.sleep(seconds))[1]

    def close(self) -> None:
        self.store.delete(self.name)


def _delta_table(uri: str, options: dict) -> dict:
    """A new Delta table at ``uri`` (version 0, one untagged row) with a checkpoint; the writers' target.

    The checkpoint makes every load read one, as a table past its 100th version (delta-rs's checkpoint
    interval) always does, and as the ``delta-rs`` preset's ``table_load_reads`` assumes: a fresh table's loads
    read its few log entries only, about 11 round trips fewer (docs/reference/clients.md, "delta-rs on the model").
    """
    from deltalake import DeltaTable, write_deltalake

    write_deltalake(uri, one_row_batch(-1, -1), storage_options=options)
    DeltaTable(uri, storage_options=options).create_checkpoint()
    return {"uri": uri, "options": options}


def _delta_measured(target: dict, attempts: list[Attempt], writers: int, interval_s: float,
                    duration_s: float) -> "Measured":
    from deltalake import DeltaTable
    history = DeltaTable(target["uri"], storage_options=target["options"]).history()
    return measure(attempts, tagged_retries(history), writers, interval_s, duration_s)


def iceberg_properties(db_path: Path, warehouse: str, options: dict) -> dict:
    """The SQL catalog's properties: SQLite at ``db_path``, data and metadata under ``warehouse`` on the lab's S3."""
    return {"uri": f"sqlite:///{db_path}", "warehouse": warehouse, "s3.endpoint": options["AWS_ENDPOINT_URL"],
            "s3.access-key-id": options["AWS_ACCESS_KEY_ID"], "s3.secret-access-key": options["AWS_SECRET_ACCESS_KEY"],
            "s3.region": options["AWS_REGION"]}


def _iceberg_table(properties: dict, name: str) -> dict:
    """A new Iceberg table ``commit_sweeps.<name>`` in the SQL catalog; the writers' target."""
    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog

    catalog = SqlCatalog("lab", **properties)
    catalog.create_namespace_if_not_exists("commit_sweeps")
    identifier = f"commit_sweeps.{name}"
    catalog.create_table(identifier, schema=pa.schema([pa.field(n, t) for n, t in SCHEMA_FIELDS]))
    return {"properties": properties, "identifier": identifier}


def _iceberg_measured(target: dict, attempts: list[Attempt], writers: int, interval_s: float,
                      duration_s: float) -> "Measured":
    from pyiceberg.catalog.sql import SqlCatalog
    m = measure(attempts, logged_retries(attempts), writers, interval_s, duration_s)
    snapshots = len(SqlCatalog("lab", **target["properties"]).load_table(target["identifier"]).snapshots())
    if snapshots != m.committed + m.raised_but_committed:
        raise ValueError(f"the table has {snapshots} snapshots; {m.committed} calls returned")
    return m


def time_sql_cas(url: str, rounds: int = 200) -> float:
    """Median ms of the catalog database's conditional UPDATE (a row's value, where it holds the one last written).

    This is the CAS of pyiceberg's SQL catalog (``UPDATE iceberg_tables ...
    WHERE metadata_location = <the one read>``), timed on a scratch table of
    the same database, one transaction each, as the catalog commits.
    """
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    times = []
    with engine.begin() as db:
        db.execute(text("CREATE TABLE IF NOT EXISTS commit_sweeps_cas_probe (k TEXT PRIMARY KEY, v TEXT)"))
        db.execute(text("DELETE FROM commit_sweeps_cas_probe"))
        db.execute(text("INSERT INTO commit_sweeps_cas_probe VALUES ('row', '0')"))
    for i in range(rounds):
        start = time.perf_counter()
        with engine.begin() as db:
            done = db.execute(text("UPDATE commit_sweeps_cas_probe SET v = :new WHERE k = 'row' AND v = :old"),
                              {"new": str(i + 1), "old": str(i)}).rowcount
        times.append((time.perf_counter() - start) * 1000.0)
        if done != 1:
            raise RuntimeError("the database's conditional UPDATE missed its own row")
    with engine.begin() as db:
        db.execute(text("DROP TABLE commit_sweeps_cas_probe"))
    engine.dispose()
    return float(np.median(times))


def _commit_sweeps(args: list[str], log) -> str:
    command = [sys.executable, "-m", "commit_sweeps", *args]
    print("$ commit-sweeps " + " ".join(args), file=log, flush=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + (os.pathsep + os.environ["PYTHONPATH"]
                                                   if os.environ.get("PYTHONPATH") else ""))
    answer = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    log.write(answer.stderr)
    if answer.returncode != 0:
        tail = answer.stderr.strip().splitlines()[-1] if answer.stderr.strip() else ""
        raise SystemExit(f"real_clients: commit-sweeps {args[0]} exited {answer.returncode}: {tail}")
    return answer.stdout


# The simulator's catalog design for each real client's catalog, where one names it apart from the service
# catalog: a DuckLake catalog database, an Iceberg REST server in front of a JDBC catalog.
CATALOG_DESIGNS = {"ducklake": "ducklake", "iceberg-java/rest": "rest"}


def model_flags(provider_file: str, name: str, client: str, catalog_latency_ms: float | None, design: str = "",
                num_tables: int = 1, database: str = "sqlite", round_trip_ms: float = 0.0) -> tuple[list[str], str]:
    """(the model's flags for the client's writers, a note when an approximation stands in for the design: "" if
    none does).

    One table (or ``num_tables``, writer w on table w mod T), FastAppend only (blind appends never conflict on
    data). delta-rs: the log's next version as the catalog object (docs/reference/clients.md, "delta-rs on the
    model"). ``design``: "" or "service", a catalog service whose latency is the database's commit,
    ``catalog_latency_ms`` (pyiceberg's SQL catalog); ``jdbc``, Iceberg Java's JdbcCatalog (the client writes the
    metadata file and updates the table's row conditionally: ``--catalog rest --rest-metadata-writer client``);
    or a catalog service design of the simulator (``rest``, ``ducklake``). A catalog service's database is the
    lab's own: the built-in of its kind (``database``: sqlite or postgresql) with its commit's median replaced by
    the one this run timed, and ``round_trip_ms`` (what the lab's proxy adds to that commit; 0 on loopback) as the
    round trip to the service. A design the simulator refuses falls back to the service approximation, and the
    note says so.

    >>> model_flags("lab.toml", "lab-s3", "ducklake", 0.8, design="no-such-design")[1]
    '--catalog no-such-design is not in this simulator: the service approximation (--catalog service --catalog-latency-ms 0.800)'
    """
    from simcore.config import CATALOG_BACKENDS, SERVICE_CATALOGS

    flags = ["--provider-file", provider_file, "--provider", name, "--num-tables", str(num_tables),
             "--fast-append-ratio", "1", "--client", client]
    if client == "delta-rs":
        return [*flags, "--catalog", "storage"], ""
    latency = ["--catalog-latency-ms", f"{catalog_latency_ms:.3f}"]
    if design in ("", "service"):
        return [*flags, "--catalog", "service", *latency], ""
    extra = []
    if design == "jdbc":
        design, extra = "rest", ["--rest-metadata-writer", "client"]
    if design in SERVICE_CATALOGS:
        return [*flags, "--catalog", design, *extra, "--catalog-latency-ms", f"{round_trip_ms:.3f}",
                "--catalog-database", lab_database(design, database, catalog_latency_ms)], ""
    if design in CATALOG_BACKENDS:
        return [*flags, "--catalog", design, *latency], ""
    return ([*flags, "--catalog", "service", *latency],
            f"--catalog {design} is not in this simulator: the service approximation (--catalog service "
            f"--catalog-latency-ms {catalog_latency_ms:.3f})")


def lab_database(design: str, database: str, commit_ms: float) -> str:
    """The lab's catalog database as ``--catalog-database`` JSON: the built-in of its kind and the design's commit
    (``postgresql-ducklake`` for DuckLake on PostgreSQL) with the commit median this run timed."""
    import dataclasses

    from simcore.catalog_databases import catalog_database

    built_in = catalog_database(database + ("-ducklake" if design == "ducklake" else ""))
    lab = dataclasses.replace(built_in, name=f"lab-{built_in.name}", commit_median_ms=commit_ms,
                              commit_floor_ms=min(built_in.commit_floor_ms, commit_ms),
                              source=f"{built_in.name}'s sigma and concurrency, this run's commit median")
    return lab.to_json()


def _model_flags(provider_file: str, name: str, client: str, catalog_latency_ms: float | None) -> list[str]:
    """``model_flags`` for the client's own catalog, as delta-rs and pyiceberg are modelled (no design)."""
    return model_flags(provider_file, name, client, catalog_latency_ms)[0]


def _profile_name(provider_file: str) -> str:
    import tomllib
    with open(provider_file, "rb") as f:
        data = tomllib.load(f)
    return data.get("name") or next(iter(data))


def main(argv=None) -> int:
    prog = "python -m studies.real_clients"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--lab-profile", required=True, help="the lab S3's profile (probe, then fit --samples)")
    parser.add_argument("--real-client", default="delta-rs",
                        help="the table-format client the writers run: delta-rs (default), pyiceberg, ducklake or "
                             "iceberg-java (named apart from the shared --client, the model's preset, which follows "
                             "from it)")
    parser.add_argument("--tables", type=int, default=1,
                        help="tables the writers share, writer w on table w mod T (ducklake, iceberg-java; default 1)")
    parser.add_argument("--ducklake-catalog", default="sqlite",
                        help="DuckLake's catalog database: sqlite (a file in --work-dir, default) or postgresql "
                             "(a server on 127.0.0.1 for the run)")
    parser.add_argument("--ducklake-data", default="s3",
                        help="DuckLake's DATA_PATH: s3 (the lab's MinIO through httpfs, default; a local directory "
                             "if httpfs cannot write there, said) or local")
    parser.add_argument("--iceberg-catalog", default="jdbc",
                        help="iceberg-java's catalog: jdbc (JdbcCatalog, default) or rest (the harness's REST server "
                             "over Iceberg's CatalogHandlers and a JdbcCatalog)")
    parser.add_argument("--iceberg-database", default="sqlite",
                        help="the JdbcCatalog's database: sqlite (default) or postgresql (a server on 127.0.0.1)")
    parser.add_argument("--iceberg-warehouse", default="s3",
                        help="iceberg-java's data and metadata: s3 (the lab's MinIO, default) or local")
    parser.add_argument("--java-writers", default=JAVA_WRITERS_DEFAULT,
                        help=f"iceberg-java's writers: threads of one JVM or processes (one JVM each; default "
                             f"{JAVA_WRITERS_DEFAULT}, the one whose own CPU lengthens a commit less)")
    parser.add_argument("--model-design", default="",
                        help="the simulator's --catalog for the model of ducklake or iceberg-java (default: ducklake, "
                             "rest for a REST catalog, service for a JdbcCatalog; a design the simulator does not "
                             "have yet falls back to service, said)")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object per point and one per interval's largest N, not the table")
    parser.add_argument("--writers", default="2,4,8,16", help="writer counts (default 2,4,8,16)")
    parser.add_argument("--intervals-s", default="1", help="commit intervals in seconds (default 1)")
    # A run starts with every writer on time; at the onset of contention the writers fall behind over tens of
    # seconds, and a 20 s run under-reads the retries the model's steady state has (studies/real_clients/log.md).
    parser.add_argument("--duration-s", type=float, default=60.0, help="seconds each point runs (default 60)")
    add_seeds_flag(parser, default=3)  # the model's seeds (capacity, and the steady state)
    parser.add_argument("--window-seeds", type=int, default=WINDOW_SEEDS,
                        help=f"seeds 1..K of the model over each run's own seconds (default {WINDOW_SEEDS}: a "
                             "minute holds a few hundred calls)")
    parser.add_argument("--phase-seed", type=int, default=0,
                        help="the seed of the real writers' phases, which the model's columns over the run's own "
                             "seconds share (default 0)")
    parser.add_argument("--sim-duration-s", type=float, default=3600.0, help="simulated seconds (default 3600)")
    parser.add_argument("--max-writers", type=int, default=200,
                        help="capacity's upper bound on writers (default 200; a store near this lab's takes tens)")
    parser.add_argument("--work-dir", default="real-clients", help="where the log and the JSON lines go")
    add_out_flags(parser, "one row per point, as CSV")
    args = parser.parse_args(argv)
    try:
        writer_counts = sorted({int(n) for n in args.writers.split(",")})
        intervals = [float(s) for s in args.intervals_s.split(",")]
        if min(writer_counts) < 1 or min(intervals) <= 0:
            raise ValueError
    except ValueError:
        print(f"error: writers/intervals_s: '{args.writers}'/'{args.intervals_s}' is not allowed; expected "
              "comma-separated positive numbers", file=sys.stderr)
        return 2
    if not 0 <= args.phase_seed < 2**63:
        print(f"error: phase_seed: '{args.phase_seed}' is not allowed; expected an integer from 0 to 2^63 - 1",
              file=sys.stderr)
        return 2
    if args.real_client not in CLIENTS:
        print(f"error: real_client: '{args.real_client}' is not allowed; expected one of {', '.join(CLIENTS)}", file=sys.stderr)
        return 2
    if not Path(args.lab_profile).is_file():
        print(f"error: lab_profile: '{args.lab_profile}' is not allowed; expected a profile file", file=sys.stderr)
        return 2
    for flag, value, allowed in (("ducklake_catalog", args.ducklake_catalog, ("sqlite", "postgresql")),
                                 ("ducklake_data", args.ducklake_data, ("s3", "local")),
                                 ("iceberg_catalog", args.iceberg_catalog, ("jdbc", "rest")),
                                 ("iceberg_database", args.iceberg_database, ("sqlite", "postgresql")),
                                 ("iceberg_warehouse", args.iceberg_warehouse, ("s3", "local")),
                                 ("java_writers", args.java_writers, ("threads", "processes"))):
        if value not in allowed:
            print(f"error: {flag}: '{value}' is not allowed; expected {' or '.join(allowed)}", file=sys.stderr)
            return 2
    if args.tables < 1:
        print(f"error: tables: '{args.tables}' is not allowed; expected a whole number >= 1", file=sys.stderr)
        return 2
    options = storage_options()
    bucket_uri = lab_bucket_uri()
    run_id = uuid.uuid4().hex[:8]
    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    name = _profile_name(args.lab_profile)
    seeds = ",".join(str(s) for s in args.seeds)
    window_seeds = f"1-{args.window_seeds}"
    cores = os.cpu_count() or 1
    rows = []
    catalog_latency_ms = None
    driver = None  # ducklake and iceberg-java (drivers.py); delta-rs and pyiceberg run inline below
    model_note = ""
    db_path = (work / f"catalog-{run_id}.db").resolve()
    try:
        timer = StoreReadTimer(f"reads-{run_id}")  # before the log and the writers: a store it cannot reach stops here
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    try:
        out = out_path(args, "real_clients", f"points-{args.real_client}", "csv")  # after the store: its error first
        with open(work / "log.txt", "a") as log, open(work / "points.jsonl", "a") as points:
            print(f"# {time.strftime('%Y-%m-%d %H:%M:%S %Z')} {command_line(prog, argv)}", file=log, flush=True)
            def say(message: str) -> None:
                print(f"real_clients: {message}", file=sys.stderr, flush=True)
                print(f"# {message}", file=log, flush=True)

            if args.real_client == "pyiceberg":
                catalog_latency_ms = time_sql_cas(f"sqlite:///{db_path}")
                print(f"real_clients: the SQL catalog's conditional UPDATE (SQLite at {db_path}): "
                      f"median {catalog_latency_ms:.2f} ms", file=sys.stderr, flush=True)
                print(f"# catalog conditional UPDATE median {catalog_latency_ms:.3f} ms", file=log, flush=True)
            if args.real_client in ("ducklake", "iceberg-java"):
                from studies.real_clients.drivers import open_driver
                try:
                    driver = open_driver(args.real_client, args, work, run_id, bucket_uri, options, say)
                except SetupError as error:
                    print(f"error: {error}", file=sys.stderr)
                    return 2
                catalog_latency_ms = driver.catalog_latency_ms
                flags, model_note = model_flags(args.lab_profile, name, args.real_client, catalog_latency_ms,
                                                design=driver.design, num_tables=args.tables,
                                                database=driver.database, round_trip_ms=driver.round_trip_ms)
                if model_note:
                    say(f"the model: {model_note}")
            else:
                flags = _model_flags(args.lab_profile, name, args.real_client, catalog_latency_ms)
            alone = timer.alone(5.0)
            alone_p50 = float(np.median(alone))
            print(f"real_clients: a 1 KiB read of the lab's S3 alone: median {alone_p50:.1f} ms "
                  f"({len(alone)} reads)", file=sys.stderr, flush=True)
            print(f"# store read alone median {alone_p50:.3f} ms", file=log, flush=True)
            for interval in intervals:
                capacity = json.loads(_commit_sweeps(
                    ["capacity", *flags, "--writers-at-interval-s", f"{interval:g}",
                     "--max-writers", str(args.max_writers), "--seeds", seeds, "--json"], log))
                measured, modelled = {}, {}
                for n in writer_counts:
                    point_name = f"n{n}-s{interval:g}"
                    if driver:
                        where, target = driver.target(point_name, n)
                    elif args.real_client == "delta-rs":
                        where = f"{bucket_uri}/real-clients-{run_id}/{point_name}"
                        target = _delta_table(where, options)
                    else:
                        table_name = point_name.replace("-", "_").replace(".", "_")
                        where = f"commit_sweeps.{table_name} in {db_path}"
                        target = _iceberg_table(iceberg_properties(db_path, f"{bucket_uri}/real-clients-{run_id}",
                                                                   options), table_name)
                    print(f"real_clients: {n} {args.real_client} writers every {interval:g} s for {args.duration_s:g} s "
                          f"on {where}", file=sys.stderr, flush=True)
                    if driver:
                        (attempts, cpu_s, load, _), reads = timer.during(
                            lambda: driver.run(target, n, interval, args.duration_s, args.phase_seed))
                        m = driver.measured(target, attempts, n, interval, args.duration_s)
                    else:
                        (attempts, cpu_s, load, _), reads = timer.during(
                            lambda: run_writers(args.real_client, target, n, interval, args.duration_s,
                                                args.phase_seed))
                        measured_of = _delta_measured if args.real_client == "delta-rs" else _iceberg_measured
                        m = measured_of(target, attempts, n, interval, args.duration_s)
                    cpu_share = cpu_s / (args.duration_s * cores)
                    slowdown = read_slowdown(reads, alone)
                    model = ["simulate", *flags, "--writers", str(n), "--commit-interval-s", f"{interval:g}",
                             "--duration-s", f"{args.sim_duration_s:g}", "--json"]
                    # Like for like: the calls due in the run's own seconds from a cold start (all writers
                    # idle, the table's log as the run found it), as the run measured them; near the onset
                    # a minute is far from the steady state, where the writers' lag has built up.
                    # And at the run's own phases: they hold for the whole run, and near the onset a pattern of
                    # phases moves the retries as much as the store does (docs/reference/profiles.md).
                    # The model's calls, to hold the run's call line against: its per-transaction files (about
                    # 10 MB a point) are read once, then removed; the config and seeds give them again.
                    with tempfile.TemporaryDirectory(prefix="model-calls-", dir=work) as model_calls:
                        predicted = model_figures(_commit_sweeps(
                            [*model, "--seeds", window_seeds, "--window-s", f"0,{args.duration_s:g}",
                             "--writer-phase-seed", str(args.phase_seed), "--transactions-dir", model_calls], log))
                        model_fixed_ms, model_per_retry_ms = model_call_parts(Path(model_calls), args.duration_s)
                    steady = model_figures(_commit_sweeps([*model, "--seeds", seeds], log))
                    measured[n] = m.success_rate
                    modelled[n] = predicted["writer_success_rate"]
                    point = {"client": args.real_client, "measured": m.__dict__, "client_cpu_share": cpu_share,
                             "load_average": load, "predicted": predicted,
                             "predicted_window_s": [0.0, args.duration_s], "phase_seed": args.phase_seed,
                             "steady": steady, "where": where,
                             "store_read_p50_ms": float(np.median(reads)) if reads else None,
                             "store_read_alone_p50_ms": alone_p50,
                             "catalog_latency_ms": catalog_latency_ms,
                             "catalog_round_trip_ms": driver.round_trip_ms if driver else 0.0, "model_flags": flags,
                             "model_note": model_note,
                             "model_call_fixed_ms": model_fixed_ms, "model_call_ms_per_retry": model_per_retry_ms}
                    points.write(json.dumps(point) + "\n")
                    points.flush()
                    print(f"real_clients:   success {m.success_rate:.1%} (model {predicted['writer_success_rate']:.1%}), "
                          f"retries/commit {m.retries_per_commit:.2f} (model {predicted['retries_mean']:.2f}; "
                          f"steady state {steady['retries_mean']:.2f}), "
                          f"writers' CPU {cpu_share:.0%} of {cores} cores, a store read x{slowdown:.2f} "
                          f"its time alone; {call_line(m.call_fixed_ms, m.call_ms_per_retry)} "
                          f"(model {call_line(model_fixed_ms, model_per_retry_ms, short=True)})",
                          file=sys.stderr, flush=True)
                    call_slowdown = m.call_fixed_ms / model_fixed_ms if model_fixed_ms else float("nan")
                    rows.append((m, predicted, steady, cpu_share, slowdown, call_slowdown, load))
                best, first_failing = largest_passing(measured)
                rows.append(("largest", interval, best, first_failing, capacity, largest_passing(modelled)[0]))
    except SetupError as error:  # a catalog, a server or the harness that failed on the way: one line
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        timer.close()
        if driver:
            driver.close()
    results = [dict(result_row(row, args.real_client), model_note=model_note) for row in rows]
    if args.json:
        for result in results:
            print(json.dumps(result))
    else:
        print(_table(rows, args.real_client))
        if model_note:
            print(f"the model: {model_note}")
    write_csv(out, results, command_line(prog, argv))
    print(f"wrote {out}", file=sys.stderr)
    return 0


def result_row(row: tuple, client: str) -> dict:
    """A row of the printed table as a results row: a point (kind ``point``) or an interval's largest N
    (``largest``)."""
    if row[0] == "largest":
        _, interval, best, failing, capacity, modelled_best = row
        return {"kind": "largest", "client": client, "interval_s": interval,
                "measured": best, "predicted": capacity.get("max_writers"), "largest_writers_measured": best,
                "first_failing_writers_measured": failing, "largest_writers_capacity": capacity.get("max_writers"),
                "capacity_bracket": capacity.get("bracket"), "largest_writers_model_run_seconds": modelled_best}
    m, p, steady, cpu, slowdown, call_slowdown, load = row
    return {"kind": "point", "client": client, "interval_s": m.interval_s, "writers": m.writers,
            "success_measured": m.success_rate, "success_predicted": p["writer_success_rate"],
            "retries_per_commit_measured": m.retries_per_commit, "retries_per_commit_predicted": p["retries_mean"],
            "retries_per_commit_steady": steady["retries_mean"], "commits_per_s_measured": m.commits_per_s,
            "call_p50_ms": m.latency_p50_ms, "call_p99_ms": m.latency_p99_ms,
            "model_commit_p50_ms": p["writer_commit_latency_p50_ms"],
            "model_commit_p99_ms": p["writer_commit_latency_p99_ms"], "lag_p99_s": m.lag_p99_s,
            "writers_cpu_share": cpu, "load_average": load, "store_read_x_alone": slowdown,
            "call_fixed_x_model": call_slowdown, "raised": json.dumps(m.raised, sort_keys=True),
            "note": point_note(cpu, slowdown, m.retries_per_commit, p["retries_mean"], call_slowdown,
                               CPU_BOUND_SHARE_BY_CLIENT.get(client, CPU_BOUND_SHARE))}


def point_note(cpu_share: float, slowdown: float, measured_retries: float, predicted_retries: float,
               call_slowdown: float = float("nan"), cpu_bound_share: float = CPU_BOUND_SHARE) -> str:
    """What a point's row says beside its figures: where the lab stopped being the profile's store (or the writers
    the model's clients: ``call_slowdown``, the writers' call's fixed part / the model's), and the model's retries
    against the measured ones where the target applies (above 0.5 a commit).

    >>> point_note(0.3, 1.02, 2.0, 2.4)
    'retries +20%'
    >>> point_note(0.6, 1.21, 7.0, 9.9)
    'cpu-bound store-slowed retries +41%'
    >>> point_note(0.25, 1.06, 3.39, 1.88, call_slowdown=1.12)
    'call-slowed retries -45%'
    >>> point_note(0.1, float("nan"), 0.2, 0.6)
    ''
    """
    marks = ["cpu-bound"] if cpu_share > cpu_bound_share else []
    if slowdown > STORE_SLOWED:  # False for nan (no reads timed)
        marks.append("store-slowed")
    if call_slowdown > CALL_SLOWED:  # False for nan (no call line: no calls, or every call retried alike)
        marks.append("call-slowed")
    if measured_retries > 0.5:
        marks.append(f"retries {predicted_retries / measured_retries - 1:+.0%}")
    return " ".join(marks)


def _table(rows, client: str) -> str:
    head = ("S s", "N", "success meas", "success pred", "retries/commit meas", "retries/commit pred",
            "retries/commit steady",
            "commits/s meas", "call p50 ms", "call p99 ms", "model commit p50 ms", "model commit p99 ms",
            "lag p99 s", "writers' CPU", "store read x alone", "note")
    cells = [list(head)]
    for row in rows:
        if row[0] == "largest":
            _, interval, best, failing, capacity, modelled_best = row
            pred = capacity.get("max_writers")
            line = (f"S = {interval:g} s: largest N above 95% measured {best} (first below: {failing}); "
                    f"predicted {pred} (capacity, bracket {capacity.get('bracket')}); the model over the runs' "
                    f"own seconds, of the N tried: {modelled_best}")
            if best and pred:
                line += f"; diff {pred / best - 1:+.0%}"
            cells.append([line])
            continue
        m, p, steady, cpu, slowdown, call_slowdown, _ = row
        note = point_note(cpu, slowdown, m.retries_per_commit, p["retries_mean"], call_slowdown,
                          CPU_BOUND_SHARE_BY_CLIENT.get(client, CPU_BOUND_SHARE))
        cells.append([f"{m.interval_s:g}", str(m.writers), f"{m.success_rate:.1%}",
                      f"{p['writer_success_rate']:.1%}", f"{m.retries_per_commit:.2f}", f"{p['retries_mean']:.2f}",
                      f"{steady['retries_mean']:.2f}",
                      f"{m.commits_per_s:.2f}", f"{m.latency_p50_ms:.0f}", f"{m.latency_p99_ms:.0f}",
                      f"{p['writer_commit_latency_p50_ms']:.0f}", f"{p['writer_commit_latency_p99_ms']:.0f}",
                      f"{m.lag_p99_s:.2f}", f"{cpu:.0%}", f"{slowdown:.2f}", note])
    widths = [max(len(line[i]) for line in cells if len(line) == len(head)) for i in range(len(head))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(line, widths)) if len(line) == len(head) else line[0]
                     for line in cells)


if __name__ == "__main__":
    sys.exit(main())
