"""The writer processes of a client driven from Python (delta-rs, PyIceberg, DuckLake): N processes started
together, each appending a one-row batch every interval from its phase (the model's ``--writer-phase-seed``
draws the same phases), each call recorded as an ``Attempt`` with the retries the client itself logged.
``real_clients`` and ``drivers`` give them their tables; ``measure`` reads what they recorded.
"""

from __future__ import annotations

import multiprocessing
import os
import time

from simcore.workload import writer_phases_s
from studies.real_clients.measure import SEQ_KEY, WRITER_KEY, Attempt, is_retry_warning

SCHEMA_FIELDS = (("writer", "int64"), ("seq", "int64"))


def one_row_batch(writer: int, seq: int):
    """The batch each call appends: one row naming its writer and sequence number (a pyarrow Table)."""
    import pyarrow as pa

    return pa.table({"writer": pa.array([writer], pa.int64()), "seq": pa.array([seq], pa.int64())})



class _RetryCounter:
    """A logging handler that counts pyiceberg's retry warnings (installed in each writer process)."""

    def __init__(self):
        import logging

        class Handler(logging.Handler):
            def emit(handler, record):
                if is_retry_warning(record.getMessage()):
                    self.count += 1
        self.count = 0
        self.handler = Handler(level=logging.WARNING)


def _writer(writer: int, client: str, target: dict, interval_s: float, duration_s: float, phase_s: float,
            ready, go, start_at, out) -> None:
    """One writer process: append a one-row batch every interval from its phase; report attempts and CPU."""
    import pyarrow  # noqa: F401  (one_row_batch's, loaded before the start, not in the first timed call)

    counter = None
    if client == "delta-rs":
        from deltalake import CommitProperties, write_deltalake

        def append(batch, seq):
            write_deltalake(target["uri"], batch, mode="append", storage_options=target["options"],
                            commit_properties=CommitProperties(custom_metadata={WRITER_KEY: str(writer),
                                                                                SEQ_KEY: str(seq)}))
    elif client == "ducklake":
        from studies.real_clients.ducklake_writers import Writer, failure_kind

        lake_writer = Writer(target["lake"])
        lake_writer.warm_up(target["table"])

        def append(batch, seq):
            return lake_writer.append(target["table"], writer, seq)  # the retries DuckLake's query log shows
    else:
        import logging
        from pyiceberg.catalog.sql import SqlCatalog

        counter = _RetryCounter()
        log = logging.getLogger("pyiceberg.table")  # Transaction.commit_transaction's logger
        log.addHandler(counter.handler)
        log.setLevel(logging.WARNING)
        log.propagate = False
        catalog = SqlCatalog("lab", **target["properties"])

        def append(batch, seq):
            catalog.load_table(target["identifier"]).append(batch)  # a stateless writer: load, then append

    ready.put(writer)
    go.wait()
    t0 = start_at.value
    attempts, seq = [], 0
    cpu0 = os.times()
    while True:
        due = phase_s + seq * interval_s
        if due >= duration_s:
            break
        now = time.time() - t0
        if now < due:
            time.sleep(due - now)
        start = time.time() - t0
        raised = ""
        before = counter.count if counter else 0
        retries = -1  # delta-rs: read from the table's history afterwards
        try:
            logged = append(one_row_batch(writer, seq), seq)
            retries = counter.count - before if counter else logged if logged is not None else -1
        except Exception as error:  # a commit that raises counts as failed, whatever the reason
            raised = failure_kind(error) if client == "ducklake" else type(error).__name__
        attempts.append(Attempt(writer, seq, due, start, time.time() - t0, raised, retries))
        seq += 1
    cpu1 = os.times()
    out.put((writer, attempts, (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)))


def run_writers(client: str, target: dict | list[dict], writers: int, interval_s: float, duration_s: float,
                seed: int = 0) -> tuple[list[Attempt], float, float, float]:
    """Run N writers on a new table (made by the caller); (attempts, the writers' CPU seconds, the load average
    after, the common start in epoch seconds, from which the attempts' times count).

    ``target`` is every writer's, or a list of one per writer (request_trace.py sends writer 0's
    requests through its logging proxy).
    """
    targets = target if isinstance(target, list) else [target] * writers
    ctx = multiprocessing.get_context("spawn")  # forked children of a process that used deltalake hang
    ready, out, go, start_at = ctx.Queue(), ctx.Queue(), ctx.Event(), ctx.Value("d", 0.0)
    phases = writer_phases_s(seed, writers, interval_s)  # the model's --writer-phase-seed draws the same
    procs = [ctx.Process(target=_writer, args=(w, client, targets[w], interval_s, duration_s, float(phases[w]),
                                               ready, go, start_at, out), daemon=True) for w in range(writers)]
    for p in procs:
        p.start()
    try:
        for _ in procs:
            ready.get(timeout=120)
        start_at.value = time.time() + 0.5
        go.set()
        attempts, cpu_s = [], 0.0
        for _ in procs:
            _, mine, cpu = out.get(timeout=duration_s + 300)
            attempts += mine
            cpu_s += cpu
        for p in procs:
            p.join(timeout=30)
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
    return attempts, cpu_s, os.getloadavg()[0], start_at.value
