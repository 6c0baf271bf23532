"""The DuckLake and Iceberg Java writers as ``real_clients.main`` drives them, point by point: the catalog and its
servers set up once a run, new tables for each point, the writers run, and what they measured read back and checked
against the tables.

``open_driver`` makes the one the run's ``--real-client`` names. Each has ``catalog_latency_ms`` (its database's
commit timed alone: the model's service latency), ``round_trip_ms`` (what the lab's latency proxy adds to that
commit when the database is the lab's PostgreSQL, ``scripts/store-lab.sh up --postgres``: the model's round trip
to the service; 0 for a database on loopback), ``design`` (the simulator's catalog design for it), ``where``,
and ``target(point, writers)``, ``run(target, writers, interval_s, duration_s, seed)``,
``measured(target, attempts, writers, interval_s, duration_s)``, ``close()``.
"""

from __future__ import annotations

import dataclasses
from contextlib import ExitStack
from pathlib import Path

from studies.real_clients.errors import SetupError
from simcore.workload import writer_phases_s
from studies.real_clients import ducklake_writers, iceberg_java
from studies.real_clients.lab_route import LabRoute, lab_proxy_api
from studies.real_clients.postgres import LoopbackPostgres, lab_postgres
from studies.real_clients.writer_processes import run_writers


def table_names(point: str, tables: int) -> list[str]:
    """The point's new tables, ``n4-s2`` -> ``n4_s2_t0, ...`` (names any catalog takes unquoted).

    >>> table_names("n4-s2.5", 2)
    ['n4_s2_5_t0', 'n4_s2_5_t1']
    """
    stem = point.replace("-", "_").replace(".", "_")
    return [f"{stem}_t{i}" for i in range(tables)]


def _postgresql(stack: ExitStack, name: str):
    """(the run's PostgreSQL, the lab's server or None): a database of the run's own, ``name``, on the store lab's
    server when the lab runs one (``scripts/store-lab.sh up --postgres``, reached through its proxy), else a server
    on loopback for the run."""
    lab = lab_postgres()
    if lab is not None:
        lab = lab.new_database(name)
        return lab, lab
    return stack.enter_context(LoopbackPostgres()), None


def _timed_commit(time_commit, address: str, direct, what: str, say) -> tuple[float, float]:
    """(the database's commit timed alone, the round trip the lab's proxy adds to it): ``time_commit(address)``,
    and where the database is the lab's, timed again around the proxy at ``direct``; the first is then that one."""
    timed = time_commit(address)
    alone = time_commit(direct) if direct else timed
    round_trip = max(timed - alone, 0.0)
    say(f"{what}: median {alone:.2f} ms"
        + (f"; through the lab's proxy {timed:.2f} ms (a round trip of {round_trip:.2f} ms)" if direct else ""))
    return alone, round_trip


def _checked(attempts, committed: int, writers: int, interval_s: float, duration_s: float, landed_keys=None):
    """``measure`` on the calls' own retry counts, checked against what the tables hold: a returned call whose
    commit is missing is an error; raised calls whose commit landed are counted apart."""
    from studies.real_clients.measure import logged_retries, measure

    m = measure(attempts, logged_retries(attempts), writers, interval_s, duration_s)
    if landed_keys is not None:
        missing = [(a.writer, a.seq) for a in attempts if not a.raised and (a.writer, a.seq) not in landed_keys]
        if missing:
            raise ValueError(f"{len(missing)} returned commits are missing from the tables, e.g. {missing[0]}")
        landed = sum(1 for a in attempts if a.raised and (a.writer, a.seq) in landed_keys)
        return dataclasses.replace(m, raised_but_committed=landed)
    if committed < m.committed:
        raise ValueError(f"the tables have {committed} snapshots; {m.committed} calls returned")
    return dataclasses.replace(m, raised_but_committed=committed - m.committed)


class DuckLakeDriver:
    """One lake a run: a SQLite catalog in the work directory or PostgreSQL on loopback; data on the lab's S3."""

    def __init__(self, args, work: Path, run_id: str, bucket_uri: str, options: dict, say):
        self.stack = ExitStack()
        self.tables = args.tables
        ducklake_writers.check_duckdb()
        direct = None
        if args.ducklake_catalog == "postgresql":
            pg, lab = _postgresql(self.stack, f"ducklake_{run_id}")
            metadata = "postgres:" + pg.libpq
            direct = "postgres:" + lab.direct_libpq if lab else None
        else:
            metadata = f"sqlite:{(work / f'ducklake-{run_id}.sqlite').resolve()}"
        local = str((work / f"ducklake-{run_id}-data").resolve()) + "/"
        if args.ducklake_data == "s3":
            lake = ducklake_writers.Lake(args.ducklake_catalog, metadata, f"{bucket_uri}/real-clients-{run_id}/ducklake/",
                                         options["AWS_ENDPOINT_URL"])
            try:
                ducklake_writers.check_data_path(lake)
            except SetupError as error:
                say(f"{error}; DATA_PATH falls back to the local directory {local}")
                lake = dataclasses.replace(lake, data_path=local, s3_endpoint="")
        else:
            lake = ducklake_writers.Lake(args.ducklake_catalog, metadata, local)
        self.lake = lake
        self.where = f"DuckLake, catalog {lake.metadata.split(' user=')[0]}, DATA_PATH {lake.data_path}"
        self.catalog_latency_ms, self.round_trip_ms = _timed_commit(
            lambda at: ducklake_writers.time_catalog_commit(dataclasses.replace(lake, metadata=at)), lake.metadata,
            direct, f"DuckLake's catalog commit alone (BEGIN, INSERT of the next id, COMMIT on {args.ducklake_catalog})",
            say)
        self.design = args.model_design or "ducklake"
        self.database = args.ducklake_catalog

    def target(self, point: str, writers: int) -> tuple[str, dict]:
        tables = table_names(point, self.tables)
        ducklake_writers.create_tables(self.lake, tables)
        return f"lake.{{{','.join(tables)}}} ({self.where})", {"tables": tables}

    def run(self, target: dict, writers: int, interval_s: float, duration_s: float, seed: int):
        per_writer = [{"lake": self.lake, "table": target["tables"][w % len(target["tables"])]} for w in range(writers)]
        return run_writers("ducklake", per_writer, writers, interval_s, duration_s, seed)

    def measured(self, target: dict, attempts, writers: int, interval_s: float, duration_s: float):
        keys = ducklake_writers.committed_keys(self.lake, target["tables"])
        return _checked(attempts, len(keys), writers, interval_s, duration_s, landed_keys=keys)

    def close(self) -> None:
        self.stack.close()


class IcebergJavaDriver:
    """The Java harness on a JdbcCatalog (SQLite or PostgreSQL), or on the harness's REST server over one."""

    def __init__(self, args, work: Path, run_id: str, bucket_uri: str, options: dict, say):
        self.stack = ExitStack()
        self.tables, self.mode = args.tables, args.java_writers
        self.classpath = iceberg_java.harness_classpath()
        direct_uri = None
        if args.iceberg_database == "postgresql":
            pg, lab = _postgresql(self.stack, f"iceberg_{run_id}")
            jdbc_uri = pg.jdbc_url
            direct_uri = lab.direct_jdbc_url if lab else None
        else:
            jdbc_uri = f"jdbc:sqlite:{(work / f'iceberg-{run_id}.db').resolve()}"
        if args.iceberg_warehouse == "s3":
            warehouse, endpoint = f"{bucket_uri}/real-clients-{run_id}/iceberg-java", options["AWS_ENDPOINT_URL"]
        else:
            warehouse, endpoint = str((work / f"iceberg-{run_id}-warehouse").resolve()), ""
        self.catalog_latency_ms, self.round_trip_ms = _timed_commit(
            lambda at: iceberg_java.time_jdbc_cas(self.classpath, at), jdbc_uri, direct_uri,
            f"the JdbcCatalog's conditional UPDATE alone ({args.iceberg_database})", say)
        jdbc = iceberg_java.Catalog("jdbc", jdbc_uri, warehouse, endpoint)
        if args.iceberg_catalog == "rest":
            # As deployed: the writers reach the server across the lab's proxy, the server its database around it.
            backing = dataclasses.replace(jdbc, uri=direct_uri) if direct_uri else jdbc
            server_log = (work / f"rest-server-{run_id}.log").resolve()
            uri = served = self.stack.enter_context(iceberg_java.RestServer(self.classpath, backing, server_log))
            reached = ""
            if lab_proxy_api() is not None:
                route = LabRoute(int(served.rsplit(":", 1)[1]))
                uri = f"http://127.0.0.1:{self.stack.enter_context(route)}"
                if not direct_uri:  # a database on loopback: the route's own delay is the round trip
                    self.round_trip_ms = 2.0 * route.delay_ms
                reached = f", reached through the lab's proxy at {uri}"
            say(f"the harness's REST catalog (CatalogHandlers over that JdbcCatalog{' around the proxy' if direct_uri else ''})"
                f" at {served}{reached}; its log {server_log}")
            self.catalog = iceberg_java.Catalog("rest", uri, "", endpoint)
        else:
            self.catalog = jdbc
        self.where = f"{args.iceberg_catalog} catalog on {args.iceberg_database}, warehouse {warehouse}"
        self.design = args.model_design or ("rest" if args.iceberg_catalog == "rest" else "jdbc")
        self.database = args.iceberg_database

    def target(self, point: str, writers: int) -> tuple[str, dict]:
        tables = table_names(point, self.tables)
        iceberg_java.create_tables(self.classpath, self.catalog, tables)
        return f"{iceberg_java.NAMESPACE}.{{{','.join(tables)}}} ({self.where})", {"tables": tables}

    def run(self, target: dict, writers: int, interval_s: float, duration_s: float, seed: int):
        phases = [float(p) for p in writer_phases_s(seed, writers, interval_s)]  # as the model's --writer-phase-seed
        return iceberg_java.run_writers(self.classpath, self.catalog, target["tables"], phases, interval_s, duration_s,
                                        self.mode)

    def measured(self, target: dict, attempts, writers: int, interval_s: float, duration_s: float):
        snapshots = sum(iceberg_java.snapshot_counts(self.classpath, self.catalog, target["tables"]).values())
        return _checked(attempts, snapshots, writers, interval_s, duration_s)

    def close(self) -> None:
        self.stack.close()


DRIVERS = {"ducklake": DuckLakeDriver, "iceberg-java": IcebergJavaDriver}


def open_driver(client: str, args, work: Path, run_id: str, bucket_uri: str, options: dict, say):
    return DRIVERS[client](args, work, run_id, bucket_uri, options, say)
