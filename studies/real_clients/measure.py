"""What a real-client run measured, from its writers' records: each call's retries (from the table's history or
the call's own log), a point's success, retries per commit and call latency, the call's part outside the race
and per retry (and the model's, beside it), the largest writer count above the target, and how much the store's
reads slowed beside the writers. Pure functions of the records; ``real_clients`` runs the writers.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

WRITER_KEY, SEQ_KEY = "commit_sweeps_writer", "commit_sweeps_seq"  # the tags each commit carries
SUCCESS_TARGET = 0.95  # simcore.usable's rule: usable above 95% success
MODEL_KEYS = ("writer_success_rate", "retries_mean", "writer_commit_latency_p50_ms", "writer_commit_latency_p99_ms")
PYICEBERG_RETRY_LOG = "Commit failed due to a concurrent update, retrying"  # pyiceberg 0.12's warning per retry


def tagged_retries(history: list[dict]) -> dict[tuple[int, int], int]:
    """(writer, seq) -> num_retries for every commit of the history that a benchmark writer tagged.

    ``history`` is ``DeltaTable.history()``: one dict per commit; delta-rs puts
    the commit's custom metadata at the entry's top level and its retry count
    in ``operationMetrics.num_retries``. Untagged commits (the table's
    creation) are skipped; a tagged commit without the count is an error, as
    the comparison would be silently wrong without it.

    >>> tagged_retries([{"operation": "CREATE TABLE"},
    ...                 {"commit_sweeps_writer": "3", "commit_sweeps_seq": "7",
    ...                  "operationMetrics": {"num_retries": 2}}])
    {(3, 7): 2}
    """
    out = {}
    for entry in history:
        if WRITER_KEY not in entry:
            continue
        key = (int(entry[WRITER_KEY]), int(entry[SEQ_KEY]))
        metrics = entry.get("operationMetrics") or {}
        if "num_retries" not in metrics:
            raise ValueError(f"history entry of writer {key[0]} commit {key[1]} has no operationMetrics.num_retries")
        if key in out:
            raise ValueError(f"writer {key[0]} commit {key[1]} appears twice in the history")
        out[key] = int(metrics["num_retries"])
    return out


@dataclass(frozen=True)
class Attempt:
    """One write_deltalake call of one writer, as the writer saw it."""
    writer: int
    seq: int
    due_s: float  # when it was due, seconds from the common start
    start_s: float  # when the call began
    end_s: float  # when it returned or raised
    raised: str  # the exception's type name; "" when the call returned
    retries: int = -1  # the retries the call itself logged (pyiceberg); -1: read from the table's history


@dataclass(frozen=True)
class Measured:
    writers: int
    interval_s: float
    attempts: int
    committed: int
    success_rate: float
    retries_per_commit: float  # mean num_retries over committed commits
    commits_per_s: float
    latency_p50_ms: float  # of the calls that committed: table load, data file, commit
    latency_p99_ms: float
    lag_p99_s: float  # start minus due
    raised: dict  # exception type -> count
    raised_but_committed: int  # calls that raised yet whose commit is in the history
    # A committed call's duration as fixed + per_retry x its retries (``call_parts``: least squares; where no
    # call retried, the mean and nan): the part of the call outside the race, and what a lost race costs.
    call_fixed_ms: float = float("nan")
    call_ms_per_retry: float = float("nan")


def measure(attempts: list[Attempt], retries: dict[tuple[int, int], int], writers: int, interval_s: float,
            duration_s: float) -> Measured:
    """The figures of one run, from the writers' records and the history's retry counts.

    A commit succeeded when its call returned; its retries are the history's.
    A call that returned but whose commit is missing from the history is an
    error (the table lost a commit). Calls that raised count as failed even if
    their commit landed (counted apart), as a writer would retry them.
    """
    ok = [a for a in attempts if not a.raised]
    missing = [(a.writer, a.seq) for a in ok if (a.writer, a.seq) not in retries]
    if missing:
        raise ValueError(f"{len(missing)} returned commits are missing from the history, e.g. {missing[0]}")
    raised: dict[str, int] = {}
    for a in attempts:
        if a.raised:
            raised[a.raised] = raised.get(a.raised, 0) + 1
    latency = np.array([(a.end_s - a.start_s) * 1000.0 for a in ok])
    ok_retries = [retries[(a.writer, a.seq)] for a in ok]
    call_fixed_ms, call_ms_per_retry = call_parts(ok_retries, latency.tolist())
    lag = np.array([a.start_s - a.due_s for a in attempts])
    return Measured(
        writers=writers, interval_s=interval_s, attempts=len(attempts), committed=len(ok),
        success_rate=len(ok) / len(attempts) if attempts else float("nan"),
        retries_per_commit=float(np.mean(ok_retries)) if ok else float("nan"),
        commits_per_s=len(ok) / duration_s,
        latency_p50_ms=float(np.percentile(latency, 50)) if ok else float("nan"),
        latency_p99_ms=float(np.percentile(latency, 99)) if ok else float("nan"),
        lag_p99_s=float(np.percentile(lag, 99)) if attempts else float("nan"),
        raised=raised,
        raised_but_committed=sum(1 for a in attempts if a.raised and (a.writer, a.seq) in retries),
        call_fixed_ms=call_fixed_ms, call_ms_per_retry=call_ms_per_retry)


def call_parts(retries: list[int], latency_ms: list[float]) -> tuple[float, float]:
    """(ms at no retry, ms a retry): the least-squares line of the calls' durations on their retries. Calls that
    all retried alike give no line: their mean where none retried (below the onset), else nothing.

    >>> call_parts([0, 1, 2, 2], [500.0, 640.0, 780.0, 780.0])
    (500.0, 140.0)
    >>> call_parts([0, 0], [500.0, 510.0])
    (505.0, nan)
    >>> call_parts([1, 1], [500.0, 510.0])
    (nan, nan)
    """
    if len(set(retries)) < 2:
        none_retried = bool(retries) and retries[0] == 0
        return (round(float(np.mean(latency_ms)), 6) if none_retried else float("nan")), float("nan")
    slope, intercept = np.polyfit(np.asarray(retries, float), np.asarray(latency_ms, float), 1)
    return round(float(intercept), 6), round(float(slope), 6)


def call_line(fixed_ms: float, per_retry_ms: float, short: bool = False) -> str:
    """``call_parts`` for the progress line: ``a call 1201 ms + 239 ms a retry`` (short: ``1201 + 239``), or the
    call alone where none retried.

    >>> call_line(1201.4, 238.6), call_line(1201.4, float("nan")), call_line(1201.4, 238.6, short=True)
    ('a call 1201 ms + 239 ms a retry', 'a call 1201 ms, no retries', '1201 + 239')
    """
    if math.isnan(per_retry_ms):
        return f"{fixed_ms:.0f} ms, no retries" if short else f"a call {fixed_ms:.0f} ms, no retries"
    return f"{fixed_ms:.0f} + {per_retry_ms:.0f}" if short else f"a call {fixed_ms:.0f} ms + {per_retry_ms:.0f} ms a retry"


def model_call_parts(transactions_dir: Path, window_s: float) -> tuple[float, float]:
    """``call_parts`` of the model's committed calls due in the first ``window_s`` seconds, each timed from its
    start (due + lag) to its end, as the run times its own: every seed ``simulate --transactions-dir`` wrote to
    ``transactions_dir``. Beside the run's it says whether the model's call is as long as the real one, outside
    the race and per retry (studies/real_clients/log.md: where the onset's retries go wrong, look here first)."""
    import pyarrow.parquet as pq

    retries: list[int] = []
    durations: list[float] = []
    for path in sorted(Path(transactions_dir).glob("*.parquet")):
        table = pq.read_table(path, columns=["submit_ms", "status", "retries", "end_ms", "lag_ms"]).to_pydict()
        for submit, status, tries, end, lag in zip(table["submit_ms"], table["status"], table["retries"],
                                                   table["end_ms"], table["lag_ms"]):
            if status == "committed" and submit < window_s * 1000.0:
                retries.append(int(tries))
                durations.append(float(end) - float(submit) - float(lag or 0.0))
    return call_parts(retries, durations)


def logged_retries(attempts: list[Attempt]) -> dict[tuple[int, int], int]:
    """(writer, seq) -> retries of every call that returned, as the calls logged them (pyiceberg).

    >>> logged_retries([Attempt(0, 0, 0.0, 0.0, 0.1, "", 2), Attempt(0, 1, 1.0, 1.0, 1.1, "CommitFailedException", 4)])
    {(0, 0): 2}
    """
    out = {}
    for a in attempts:
        if a.raised:
            continue
        if a.retries < 0:
            raise ValueError(f"writer {a.writer} commit {a.seq} logged no retry count")
        out[(a.writer, a.seq)] = a.retries
    return out


def is_retry_warning(message: str) -> bool:
    """Whether a pyiceberg log message is its warning before a commit retry (0.12: one per retry).

    >>> is_retry_warning("Commit failed due to a concurrent update, retrying (1/4) in 104 ms")
    True
    >>> is_retry_warning("Table has been updated by another process")
    False
    """
    return message.startswith(PYICEBERG_RETRY_LOG)


def model_figures(json_lines: str) -> dict[str, float]:
    """The model's figures a point's row shows, each the mean over the seeds of ``simulate --json``'s lines.

    >>> model_figures('{"writer_success_rate": 1.0, "retries_mean": 2.0, "writer_commit_latency_p50_ms": 900, '
    ...               '"writer_commit_latency_p99_ms": 2000}\\n{"writer_success_rate": 0.9, "retries_mean": 3.0, '
    ...               '"writer_commit_latency_p50_ms": 1100, "writer_commit_latency_p99_ms": 2400}\\n')
    {'writer_success_rate': 0.95, 'retries_mean': 2.5, 'writer_commit_latency_p50_ms': 1000.0, 'writer_commit_latency_p99_ms': 2200.0}
    """
    rows = [json.loads(line) for line in json_lines.splitlines() if line.strip()]
    return {key: float(np.mean([row[key] for row in rows])) for key in MODEL_KEYS}


def largest_passing(points: dict[int, float]) -> tuple[int | None, int | None]:
    """(largest N above the target with every smaller N above it too, the first N below it), from N -> success.

    >>> largest_passing({2: 1.0, 4: 0.99, 8: 0.9, 16: 0.97})
    (4, 8)
    >>> largest_passing({2: 0.5})
    (None, 2)
    """
    best = None
    for n in sorted(points):
        if points[n] <= SUCCESS_TARGET:
            return best, n
        best = n
    return best, None


def read_slowdown(during: list[float], alone: list[float]) -> float:
    """How much longer the median read took while the writers ran than alone (1.0: as long).

    >>> read_slowdown([26.0, 27.0, 25.0], [23.0, 24.0, 25.0])
    1.0833333333333333
    >>> read_slowdown([], [23.0])
    nan
    """
    if not during or not alone:
        return float("nan")
    return float(np.median(during) / np.median(alone))
