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
told. A process dies with the command (``store_probe.clients._die_with_parent``).
"""

from __future__ import annotations

import multiprocessing
import os
import random
import resource
import signal
import threading
import time
from dataclasses import dataclass

from store_probe.catalog_sql import CatalogDSN, CatalogSQLError, ScratchTables, commit_function, connect, \
    database_errors
from store_probe.clients import _die_with_parent

LAG_TICK_S = 0.005
START_MARGIN_S = 0.5  # the clients start together this long after the last is connected
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


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


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


def _lag_loop(deadline: float, stop, lags: list) -> None:
    while not stop.is_set() and time.monotonic() < deadline:
        before = time.monotonic()
        time.sleep(LAG_TICK_S)
        lags.append((time.monotonic() - before - LAG_TICK_S) * 1000.0)


def _process_main(pipe, work: Work, stop, parent_pid: int) -> None:
    # The command handles ^C and SIGHUP and tells the processes to stop; they must not die first.
    for number in (signal.SIGINT, signal.SIGHUP):
        signal.signal(number, signal.SIG_IGN)
    _die_with_parent(parent_pid)
    try:
        _serve(pipe, work, stop)
    except (EOFError, BrokenPipeError, ConnectionResetError):  # the command is gone
        os._exit(0)


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
    lags: list = []
    threads = [threading.Thread(target=_client_loop, daemon=True,
                                args=(commit, client, work.dsn.kind, work.conflict_wait_ms / 1000.0, start_at,
                                      deadline, stop, commits, errors))
               for client, commit in commits_by_client.items()]
    threads.append(threading.Thread(target=_lag_loop, args=(deadline, stop, lags), daemon=True))
    time.sleep(max(0.0, start_at - time.monotonic()))
    cpu0, wall0 = _cpu_s(), time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return Batch(tuple(commits), tuple(work.dsn.redact(e) for e in errors[:MAX_ERRORS_KEPT]), len(errors),
                 _cpu_s() - cpu0, time.monotonic() - wall0, tuple(lags))


class CatalogClientPool:
    """``processes`` spawned processes; ``run(n, duration_s)`` runs clients 0..n-1 spread over them."""

    def __init__(self, work: Work, processes: int):
        context = multiprocessing.get_context("spawn")
        self.stop = context.Event()
        self.pipes = []
        self.processes = []
        for _ in range(processes):
            parent, child = context.Pipe()
            process = context.Process(target=_process_main, args=(child, work, self.stop, os.getpid()), daemon=True)
            process.start()
            self.pipes.append(parent)
            self.processes.append(process)

    def _receive(self, pipe, timeout_s: float):
        deadline = time.monotonic() + timeout_s
        while not pipe.poll(0.2):
            if time.monotonic() > deadline or not all(p.is_alive() for p in self.processes):
                raise CatalogSQLError("a client process stopped answering")
        try:
            return pipe.recv()
        except (EOFError, OSError):  # it died: its end of the pipe closed
            raise CatalogSQLError("a client process ended before it answered") from None

    def run(self, clients: int, duration_s: float) -> list[Batch]:
        """Run ``clients`` clients for ``duration_s`` seconds, all starting together; one Batch per process used."""
        used = min(clients, len(self.pipes))
        plan = [list(range(p, clients, used)) for p in range(used)]
        for pipe, ids in zip(self.pipes, plan):
            pipe.send(("prepare", ids))
        for pipe in self.pipes[:used]:
            answer = self._receive(pipe, 120.0)
            if answer[0] != "ready":
                raise CatalogSQLError(f"a client could not connect: {answer[1]}")
        start_at = time.monotonic() + START_MARGIN_S
        for pipe, ids in zip(self.pipes, plan):
            pipe.send(("run", ids, start_at, duration_s))
        return [self._receive(pipe, duration_s + 120.0)[1] for pipe in self.pipes[:used]]

    def close(self, timeout_s: float = 10.0) -> None:
        """Stop every client (mid-count too), then the processes; those that do not stop in time are killed."""
        self.stop.set()
        for pipe in self.pipes:
            try:
                pipe.send(("exit",))
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + timeout_s
        for process in self.processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(5)
