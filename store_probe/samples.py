"""What one client count of a probe measured, as ``bench --json`` and ``fit --samples`` read it. Pure.

A client's op is a read then a conditional write; its latency spans both, as
seed 000 measured and ``simcore.bench`` simulates. Every client starts at 0,
in step; ops completing in the first ``simcore.bench.warmup_s`` seconds or
after the duration are left out, as ``bench`` leaves them out, so goodput is
successes over the same window and the two commands' lines compare key by key.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Iterable, Mapping, Sequence

import numpy as np

from simcore.bench import BenchResult, warmup_s
from simcore.fit.samples import SAMPLE_COLUMNS, SAMPLE_READ_COLUMN, SAMPLE_ROUND_OPERATION, SAMPLE_WRITE_OPERATION


@dataclass(frozen=True)
class Op:
    """One client's read-then-write: when it started and ended (s from the common start), whether it won, and
    how long its read took (the read of the version, or of the length before an append)."""

    client: int
    started_s: float
    ended_s: float
    succeeded: bool
    read_ms: float = math.nan

    @property
    def latency_ms(self) -> float:
        return (self.ended_s - self.started_s) * 1000.0


@dataclass(frozen=True)
class Overhead:
    """The client side's own cost during one client count (``clients`` measures it)."""

    cpu_s: float  # CPU time of every client process (user + system)
    cores: int  # the cores this machine has
    wall_s: float  # how long the clients ran
    lag_p99_ms: float  # scheduling lag of a 5 ms sleep in the client processes, 99th percentile

    @property
    def cpu_share(self) -> float:
        """The share of the machine's CPU the clients used (1 = every core busy)."""
        return self.cpu_s / (self.wall_s * self.cores) if self.wall_s > 0 else math.nan


@dataclass(frozen=True)
class ClientCount:
    """One client count's result: ``bench``'s figures, the failed ops' latency, and the client side's cost."""

    bench: BenchResult
    failed_mean_ms: float
    failed_p50_ms: float
    failed_p99_ms: float
    cpu_ms_per_op: float
    overhead: Overhead

    def to_json(self) -> dict:
        """``bench --json``'s keys first (``seeds`` is empty: a real run has none), then the probe's own."""
        return {**self.bench.to_json(), "failed_latency_mean_ms": self.failed_mean_ms,
                "failed_latency_p50_ms": self.failed_p50_ms, "failed_latency_p99_ms": self.failed_p99_ms,
                "client_cpu_share": self.overhead.cpu_share, "client_cpu_ms_per_op": self.cpu_ms_per_op,
                "client_lag_p99_ms": self.overhead.lag_p99_ms}


def in_window(ops: Iterable[Op], duration_s: float) -> list[Op]:
    """The ops ``bench`` would count: completed after the warm-up and before the end."""
    start = warmup_s(duration_s)
    return sorted((op for op in ops if start <= op.ended_s < duration_s), key=lambda op: (op.ended_s, op.client))


def _stats(latencies: np.ndarray) -> tuple[float, float, float, float]:
    if len(latencies) == 0:
        return (math.nan,) * 4
    return (float(latencies.mean()), *(float(np.percentile(latencies, q)) for q in (50, 95, 99)))


def summarise(store: str, operation: str, clients: int, ops: Sequence[Op], duration_s: float,
              overhead: Overhead) -> ClientCount:
    """One client count's figures from its ops (already ``in_window``).

    >>> ops = [Op(0, 0.5, 0.6, True), Op(0, 0.6, 0.75, False), Op(0, 0.75, 0.85, True)]
    >>> r = summarise("s3://b", "cas", 1, ops, 10.0, Overhead(0.1, 2, 10.0, 0.2))
    >>> (r.bench.successes, r.bench.failures, round(r.bench.goodput_ops, 3), round(r.bench.latency_mean_ms, 1))
    (2, 1, 0.222, 100.0)
    """
    latencies = np.array([op.latency_ms for op in ops], float)
    won = np.array([op.succeeded for op in ops], bool)
    ok, failed = latencies[won], latencies[~won]
    mean, p50, p95, p99 = _stats(ok)
    f_mean, f_p50, _, f_p99 = _stats(failed)
    window_s = duration_s - warmup_s(duration_s)
    result = BenchResult(provider=store, operation=operation, clients=clients,
                         goodput_ops=len(ok) / window_s, failure_rate=len(failed) / len(ops) if len(ops) else math.nan,
                         latency_mean_ms=mean, latency_p50_ms=p50, latency_p95_ms=p95, latency_p99_ms=p99,
                         seeds=(), successes=int(len(ok)), failures=int(len(failed)), duration_s=float(duration_s))
    cpu_per_op = overhead.cpu_s * 1000.0 / len(ops) if len(ops) else math.nan
    return ClientCount(result, f_mean, f_p50, f_p99, cpu_per_op, overhead)


def samples_csv(operation: str, counts: Iterable[tuple[int, Sequence[Op]]], writes_ms: Sequence[float] = (),
                rounds_ms: Mapping[int, Sequence[float]] = MappingProxyType({})) -> str:
    """The samples file ``fit --samples`` reads: one row per plain write one client timed (operation
    ``write``), one per round of reads it sent at once (``round``, the round's reads in ``clients``), then one
    per op (operation, latency_ms, succeeded, clients, read_ms; the last empty where the read was not timed).

    >>> print(samples_csv("cas", [(2, [Op(1, 0.0, 0.0125, True, 5.25)])], [20.5], {8: [30.25]}), end="")
    operation,latency_ms,succeeded,clients,read_ms
    write,20.500,1,1,
    round,30.250,1,8,
    cas,12.500,1,2,5.250
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(SAMPLE_COLUMNS + (SAMPLE_READ_COLUMN,))
    for latency in writes_ms:
        writer.writerow((SAMPLE_WRITE_OPERATION, f"{max(latency, 0.001):.3f}", 1, 1, ""))
    for size, latencies in rounds_ms.items():
        for latency in latencies:
            writer.writerow((SAMPLE_ROUND_OPERATION, f"{max(latency, 0.001):.3f}", 1, size, ""))
    for clients, ops in counts:
        for op in ops:
            # Microsecond resolution, and never 0: fit refuses a latency that is not > 0.
            read = f"{max(op.read_ms, 0.001):.3f}" if math.isfinite(op.read_ms) else ""
            writer.writerow((operation, f"{max(op.latency_ms, 0.001):.3f}", int(op.succeeded), clients, read))
    return out.getvalue()
