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

A client process never outlives the command: on Linux the kernel kills it
when the command's process dies (``PR_SET_PDEATHSIG``, even after a
``kill -9``), and everywhere a watcher thread ends it once its parent is
gone (its parent pid changed), and a closed pipe ends it quietly, so no
orphan goes on rewriting the object for the rest of ``--duration-s``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
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
PARENT_CHECK_S = 0.2  # how often a client process looks whether the command is still there
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
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


def _die_with_parent(parent_pid: int) -> None:
    """End this process when the command's process ends, however it ends (see the module docstring)."""
    if os.getppid() != parent_pid:  # gone before we got here
        os._exit(0)
    try:  # Linux: the kernel sends SIGKILL the moment the parent dies
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # no libc prctl (not Linux): the watcher alone
        pass
    if os.getppid() != parent_pid:  # died between the first check and prctl
        os._exit(0)

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(PARENT_CHECK_S)
        os._exit(0)  # nothing to flush or send: the command that would read it is gone

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


def _process_main(connection, target: Target, stop, parent_pid: Optional[int] = None) -> None:
    """A client process: make adapters when asked, run a client count when told, send back what it measured."""
    # The command handles ^C and SIGHUP (a closed terminal sends both to the whole group) and tells the
    # processes to stop; they must not die first, under clients still writing.
    for number in (signal.SIGINT, signal.SIGHUP):
        signal.signal(number, signal.SIG_IGN)
    _die_with_parent(os.getppid() if parent_pid is None else parent_pid)
    try:
        _serve(connection, target, stop)
    except (EOFError, BrokenPipeError, ConnectionResetError):  # the pipe closed: the command is gone, and with
        # it the reader of a traceback
        os._exit(0)


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
            process = context.Process(target=_process_main, args=(child, target, self.stop, os.getpid()),
                                      daemon=True)
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
