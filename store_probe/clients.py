"""The probe's clients: threads in a few spawned processes, each client with its own SDK connection.

Clients are spread over processes so that no single interpreter (one GIL)
serialises them, and over threads within a process so that 256 clients do
not need 256 interpreters. The processes are started once (spawn, not fork:
forked children of a process that has used an SDK's connection pool can
hang) and reused for every client count; each client's adapter is made
before the count starts, so connection set-up is outside the measured window.

Every process measures its own cost while the clients run: its CPU time
(user + system, all threads) and the lag of a thread that sleeps 5 ms at a
time (how late it wakes: how long a client that is ready to send waits for
the CPU or the GIL). Both come back with the ops, so the command can say
when the client side, not the store, set the figures.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import signal
import threading
import time
from dataclasses import dataclass
from typing import Optional

from store_probe.samples import Op
from store_probe.stores import StoreError, open_store
from store_probe.uri import StoreURI

LAG_TICK_S = 0.005
START_MARGIN_S = 0.5  # the clients start together this long after the last process is ready
PAYLOAD_BYTES = 1024  # the object a cas writes; an append adds APPEND_BYTES
APPEND_BYTES = 64


@dataclass(frozen=True)
class Target:
    """What every client works on (picklable: it crosses to the spawned processes)."""

    uri: StoreURI
    endpoint_url: Optional[str]
    name: str
    operation: str


@dataclass(frozen=True)
class Batch:
    """What one process sends back after a client count."""

    ops: tuple[Op, ...]
    errors: tuple[str, ...]  # requests that failed other than by a refused condition
    cpu_s: float
    wall_s: float
    lags_ms: tuple[float, ...]


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _client_loop(store, target: Target, client: int, start_at: float, deadline: float, stop,
                 ops: list, errors: list) -> None:
    append = target.operation == "append"
    count = 0
    while not stop.is_set():
        began = time.monotonic()
        if began >= deadline:
            return
        count += 1
        try:
            # The read is timed on its own too: fit takes the profile's read latency from it.
            if append:
                seen = store.length(target.name)
                read = time.monotonic()
                won = store.append(target.name, seen, b"c" * APPEND_BYTES)
            else:
                body = f"client {client} op {count} ".encode().ljust(PAYLOAD_BYTES, b".")
                seen = store.read(target.name)
                read = time.monotonic()
                won = store.write(target.name, seen, body)
        except StoreError as error:
            errors.append(str(error))
            time.sleep(0.01)  # a store that errors at once must not turn the loop into a busy spin
            continue
        ops.append(Op(client, began - start_at, time.monotonic() - start_at, bool(won), (read - began) * 1000.0))


def _lag_loop(deadline: float, stop, lags: list) -> None:
    while not stop.is_set() and time.monotonic() < deadline:
        before = time.monotonic()
        time.sleep(LAG_TICK_S)
        lags.append((time.monotonic() - before - LAG_TICK_S) * 1000.0)


def _process_main(connection, target: Target, stop) -> None:
    """A client process: make adapters when asked, run a client count when told, send back what it measured."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the command handles ^C and tells the processes to stop
    stores: dict[int, object] = {}
    while True:
        message = connection.recv()
        if message[0] == "exit":
            return
        if message[0] == "prepare":
            try:
                for client in message[1]:
                    if client not in stores:
                        stores[client] = open_store(target.uri, target.endpoint_url)
                connection.send(("ready",))
            except Exception as error:  # reported by the command as one line
                connection.send(("error", f"{type(error).__name__}: {error}"))
            continue
        _, clients, start_at, duration_s = message
        deadline = start_at + duration_s
        ops: list = []
        errors: list = []
        lags: list = []
        threads = [threading.Thread(target=_client_loop, daemon=True,
                                    args=(stores[c], target, c, start_at, deadline, stop, ops, errors))
                   for c in clients]
        threads.append(threading.Thread(target=_lag_loop, args=(deadline, stop, lags), daemon=True))
        time.sleep(max(0.0, start_at - time.monotonic()))
        cpu0, wall0 = _cpu_s(), time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        connection.send(("done", Batch(tuple(ops), tuple(errors[:20]) + ((f"... {len(errors)} in all",)
                                                                         if len(errors) > 20 else ()),
                                       _cpu_s() - cpu0, time.monotonic() - wall0, tuple(lags))))


class ClientPool:
    """``processes`` spawned client processes; ``run(n, duration_s)`` runs clients 0..n-1 spread over them."""

    def __init__(self, target: Target, processes: int):
        context = multiprocessing.get_context("spawn")
        self.stop = context.Event()
        self.connections = []
        self.processes = []
        for _ in range(processes):
            parent, child = context.Pipe()
            process = context.Process(target=_process_main, args=(child, target, self.stop), daemon=True)
            process.start()
            self.connections.append(parent)
            self.processes.append(process)

    def _receive(self, connection, timeout_s: float):
        deadline = time.monotonic() + timeout_s
        while not connection.poll(0.2):
            if time.monotonic() > deadline or not any(p.is_alive() for p in self.processes):
                raise StoreError("a client process stopped answering")
        return connection.recv()

    def run(self, clients: int, duration_s: float) -> list[Batch]:
        """Run ``clients`` clients for ``duration_s`` seconds, all starting together; one Batch per process used."""
        used = min(clients, len(self.connections))
        plan = [list(range(p, clients, used)) for p in range(used)]
        for connection, ids in zip(self.connections, plan):
            connection.send(("prepare", ids))
        for connection in self.connections[:used]:
            answer = self._receive(connection, 120.0)
            if answer[0] != "ready":
                raise StoreError(f"a client process could not open the store: {answer[1]}")
        start_at = time.monotonic() + START_MARGIN_S
        for connection, ids in zip(self.connections, plan):
            connection.send(("run", ids, start_at, duration_s))
        return [self._receive(connection, duration_s + 120.0)[1] for connection in self.connections[:used]]

    def close(self, timeout_s: float = 10.0) -> None:
        """Stop every client (mid-count too), then the processes; those that do not stop in time are killed."""
        self.stop.set()
        for connection in self.connections:
            try:
                connection.send(("exit",))
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + timeout_s
        for process in self.processes:
            process.join(max(0.0, deadline - time.monotonic()))
            if process.is_alive():
                process.kill()
                process.join(5)


def default_processes(clients: int) -> int:
    """Enough interpreters that no GIL serialises the clients, few enough to stay cheap: 4 per core."""
    return max(1, min(clients, 4 * (os.cpu_count() or 1)))
