"""Client processes, as both probes run them: spawned once, dying with the command, each running its clients
as threads while it measures its own cost.

``probe`` (a store) and ``probe-catalog`` (a catalog's database) put their clients in a few spawned
processes (spawn, not fork: forked children of a process that has used an SDK's or a driver's connection
pool can hang) and reuse them for every client count. A process serves a small protocol over its pipe:
``("prepare", clients)`` makes those clients' connections before the count (answered ``("ready",)`` or
``("error", text)``), ``("run", clients, start_at, duration_s)`` runs them and answers ``("done", batch)``,
``("exit",)`` ends it. What a client does is the probe's own ``serve`` function.

While the clients run, every process measures its CPU time (user + system, all threads) and the lag of a
thread that sleeps 5 ms at a time (how late a client that is ready to send waits for the CPU or the GIL), so
the command can say when the client side, not the server, set the figures.

A client process never outlives the command: on Linux the kernel kills it when the command's process dies
(``PR_SET_PDEATHSIG``, even after a ``kill -9``), everywhere a watcher thread ends it once its parent is gone
(its parent pid changed), and a closed pipe ends it quietly.
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
from typing import Any, Callable, Sequence

LAG_TICK_S = 0.005
PARENT_CHECK_S = 0.2  # how often a client process looks whether the command is still there
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
START_MARGIN_S = 0.5  # the clients start together this long after the last process is ready
PREPARE_TIMEOUT_S = 120.0


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _lag_loop(deadline: float, stop, lags: list) -> None:
    while not stop.is_set() and time.monotonic() < deadline:
        before = time.monotonic()
        time.sleep(LAG_TICK_S)
        lags.append((time.monotonic() - before - LAG_TICK_S) * 1000.0)


def run_threads(loops: Sequence[tuple[Callable, tuple]], start_at: float, deadline: float, stop
                ) -> tuple[float, float, tuple[float, ...]]:
    """Run each (function, args) on its own thread from ``start_at`` until they return, beside the lag thread;
    (CPU seconds, wall seconds, lags in ms) of this process over the run."""
    lags: list = []
    threads = [threading.Thread(target=target, args=args, daemon=True) for target, args in loops]
    threads.append(threading.Thread(target=_lag_loop, args=(deadline, stop, lags), daemon=True))
    time.sleep(max(0.0, start_at - time.monotonic()))
    cpu0, wall0 = cpu_s(), time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return cpu_s() - cpu0, time.monotonic() - wall0, tuple(lags)


def die_with_parent(parent_pid: int) -> None:
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


def process_main(connection, serve: Callable, work: Any, stop, parent_pid: int) -> None:
    """A client process: ``serve(connection, work, stop)`` until told to exit or the command is gone."""
    # The command handles ^C and SIGHUP (a closed terminal sends both to the whole group) and tells the
    # processes to stop; they must not die first, under clients still writing.
    for number in (signal.SIGINT, signal.SIGHUP):
        signal.signal(number, signal.SIG_IGN)
    die_with_parent(parent_pid)
    try:
        serve(connection, work, stop)
    except (EOFError, BrokenPipeError, ConnectionResetError):  # the pipe closed: the command is gone, and with
        # it the reader of a traceback
        os._exit(0)


class ClientProcesses:
    """``processes`` spawned client processes serving ``serve``; ``run(n, duration_s)`` runs clients 0..n-1 spread
    over them and returns each used process's batch. ``error``: the exception a failure raises, ``preparing``:
    what a failed prepare could not do ("open the store")."""

    def __init__(self, serve: Callable, work: Any, processes: int, error: type, preparing: str):
        context = multiprocessing.get_context("spawn")
        self.stop = context.Event()
        self.error, self.preparing = error, preparing
        self.connections = []
        self.processes = []
        for _ in range(processes):
            parent, child = context.Pipe()
            process = context.Process(target=process_main, args=(child, serve, work, self.stop, os.getpid()),
                                      daemon=True)
            process.start()
            self.connections.append(parent)
            self.processes.append(process)

    def _receive(self, index: int, timeout_s: float):
        connection, process = self.connections[index], self.processes[index]
        deadline = time.monotonic() + timeout_s
        while not connection.poll(0.2):
            if time.monotonic() > deadline or not process.is_alive():
                raise self.error("a client process stopped answering")
        try:
            return connection.recv()
        except (EOFError, OSError):  # it died: its end of the pipe closed
            raise self.error("a client process ended before it answered") from None

    def run(self, clients: int, duration_s: float) -> list:
        """Run ``clients`` clients for ``duration_s`` seconds, all starting together; one batch per process used."""
        used = min(clients, len(self.connections))
        plan = [list(range(p, clients, used)) for p in range(used)]
        for connection, ids in zip(self.connections, plan):
            connection.send(("prepare", ids))
        for index in range(used):
            answer = self._receive(index, PREPARE_TIMEOUT_S)
            if answer[0] != "ready":
                raise self.error(f"a client process could not {self.preparing}: {answer[1]}")
        start_at = time.monotonic() + START_MARGIN_S
        for connection, ids in zip(self.connections, plan):
            connection.send(("run", ids, start_at, duration_s))
        return [self._receive(index, duration_s + PREPARE_TIMEOUT_S)[1] for index in range(used)]

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
