"""``probe-catalog``'s clients: N connections committing in a closed loop, in spawned processes or threads.

Each client owns one connection, made before its count starts (so connecting is outside the measured
window), and loops: time one commit, record it, commit again, no pause and no retry. Clients are spread
over ``processes`` spawned processes (spawn, not fork, as ``store_probe.clients``: a forked copy of a
process that holds a driver's connections can hang), as threads within each: ``processes`` equal to the
clients gives each its own interpreter, 1 puts them all behind one GIL. sqlite3 and psycopg release the
GIL while the database works, so threads serve while commits wait on the database, and the GIL shows only
where the client's own Python work is the bottleneck; ``studies/catalog_service`` measured both.

Every process measures its CPU time and how late a thread sleeping 5 ms at a time wakes (the lag of a
client ready to commit), as ``store_probe.clients`` does, so a count the client side distorted can be
told. The processes, their protocol and how they die with the command are ``store_probe.client_processes``'s.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass

from store_probe.catalog_sql import CatalogDSN, CatalogSQLError, ScratchTables, commit_function, connect, \
    database_errors
from store_probe.client_processes import ClientProcesses, run_threads

MAX_ERRORS_KEPT = 20


@dataclass(frozen=True)
class Work:
    """What every client commits to (picklable: it crosses to the spawned processes)."""

    dsn: CatalogDSN
    tables: ScratchTables
    transaction: str
    conflict_wait_ms: float = 0.0  # a client whose commit lost waits up to this long before its next one


@dataclass(frozen=True)
class Commit:
    """One commit attempt: its client, when it began (s after the count's start), how long it took, its outcome."""

    client: int
    began_s: float
    latency_ms: float
    committed: bool  # False: it lost to a concurrent commit (a conflict)


@dataclass(frozen=True)
class Batch:
    """What one process sends back after a client count."""

    commits: tuple[Commit, ...]
    errors: tuple[str, ...]  # failures other than a conflict (redacted)
    error_count: int
    cpu_s: float
    wall_s: float
    lags_ms: tuple[float, ...]


def _client_loop(commit, client: int, kind: str, conflict_wait_s: float, start_at: float, deadline: float, stop,
                 commits: list, errors: list) -> None:
    failures = database_errors(kind)
    jitter = random.Random(client)
    while not stop.is_set():
        began = time.perf_counter()
        began_at = time.monotonic()
        if began_at >= deadline:
            return
        try:
            committed = commit()
        except failures as error:
            errors.append(f"{type(error).__name__}: {' '.join(str(error).split())}")
            time.sleep(0.01)  # a database that errors at once must not turn the loop into a busy spin
            continue
        commits.append(Commit(client, began_at - start_at, (time.perf_counter() - began) * 1000.0, committed))
        if not committed and conflict_wait_s > 0:
            # As DuckLake's and Iceberg's clients wait before a retry (DuckLake's jitter: up to half less).
            # Without it a SQLite loser, refused at once, spins and starves the winner of the CPU.
            stop.wait(conflict_wait_s * (1.0 - 0.5 * jitter.random()))


def _serve(pipe, work: Work, stop) -> None:
    commits_by_client: dict[int, object] = {}
    while True:
        message = pipe.recv()
        if message[0] == "exit":
            return
        if message[0] == "prepare":
            try:
                for client in message[1]:
                    if client not in commits_by_client:
                        commits_by_client[client] = commit_function(connect(work.dsn), work.dsn.kind, work.tables,
                                                                    work.transaction, client)
                pipe.send(("ready",))
            except Exception as error:  # noqa: BLE001 - sent to the command, which says it in one line
                pipe.send(("error", work.dsn.redact(f"{type(error).__name__}: {error}")))
            continue
        _, clients, start_at, duration_s = message
        pipe.send(("done", run_clients({c: commits_by_client[c] for c in clients}, work, start_at, duration_s, stop)))


def run_clients(commits_by_client: dict, work: Work, start_at: float, duration_s: float, stop) -> Batch:
    """Run each client's commit in a closed loop on its own thread from ``start_at`` for ``duration_s``."""
    deadline = start_at + duration_s
    commits: list = []
    errors: list = []
    cpu, wall, lags = run_threads([(_client_loop, (commit, client, work.dsn.kind, work.conflict_wait_ms / 1000.0,
                                                   start_at, deadline, stop, commits, errors))
                                   for client, commit in commits_by_client.items()], start_at, deadline, stop)
    return Batch(tuple(commits), tuple(work.dsn.redact(e) for e in errors[:MAX_ERRORS_KEPT]), len(errors),
                 cpu, wall, lags)


class CatalogClientPool(ClientProcesses):
    """``processes`` spawned processes; ``run(n, duration_s)`` runs clients 0..n-1 spread over them."""

    def __init__(self, work: Work, processes: int):
        super().__init__(_serve, work, processes, CatalogSQLError, "connect")
