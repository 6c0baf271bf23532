"""The probe's clients: threads in a few spawned processes, each client with its own SDK connection.

Clients are spread over processes so that no single interpreter (one GIL)
serialises them, and over threads within a process so that 256 clients do
not need 256 interpreters; each client's adapter is made before the count
starts, so connection set-up is outside the measured window. The processes,
their protocol, their cost measurement and how they die with the command are
``store_probe.client_processes``'s, shared with ``probe-catalog``.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Optional

from store_probe.client_processes import ClientProcesses, run_threads
from store_probe.samples import Op
from store_probe.stores import StoreError, open_store
from store_probe.uri import StoreURI

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


def _serve(connection, target: Target, stop) -> None:
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
        cpu, wall, lags = run_threads([(_client_loop, (stores[c], target, c, start_at, deadline, stop, ops, errors))
                                       for c in clients], start_at, deadline, stop)
        connection.send(("done", Batch(tuple(ops), tuple(errors[:20]) + ((f"... {len(errors)} in all",)
                                                                         if len(errors) > 20 else ()),
                                       cpu, wall, lags)))


class ClientPool(ClientProcesses):
    """``processes`` spawned client processes; ``run(n, duration_s)`` runs clients 0..n-1 spread over them."""

    def __init__(self, target: Target, processes: int):
        super().__init__(_serve, target, processes, StoreError, "open the store")


def default_processes(clients: int) -> int:
    """Enough interpreters that no GIL serialises the clients, few enough to stay cheap: 4 per core."""
    return max(1, min(clients, 4 * (os.cpu_count() or 1)))
