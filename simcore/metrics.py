"""From per-transaction outcomes to the one summary row per (config, seed).

All metrics are taken over the steady-state window: transactions *submitted*
in [W, D - W) that finished (committed or aborted) before the simulated time
ran out. Transactions still running at the end are never recorded, as in
the reference, so they count nowhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import numpy as np

from simcore.config import SimConfig
from simcore.engine import (ABORT_REASONS, ABORTED_BUDGET, ABORTED_MAX_RETRIES, ABORTED_VALIDATION, COMMITTED,
                            STATUS_NAMES, UNFINISHED, Outcome)
from simcore.providers import MANIFEST_FILE_BYTES, MANIFEST_LIST_BYTES, TABLE_METADATA_BYTES
from simcore.workload import (FAST_APPEND, JOB_CLASS_NAMES, JOB_CLASS_PREFIXES, MERGE_APPEND, OP_NAMES,
                              VALIDATED_OVERWRITE, Workload)

if TYPE_CHECKING:  # pyarrow loads only where a transactions table is made
    import pyarrow as pa

NAN = float("nan")

# Prefix and op code of the per-type metric groups.
OP_PREFIXES = (("fa", FAST_APPEND), ("vo", VALIDATED_OVERWRITE), ("ma", MERGE_APPEND))

# Kinds of summary metric; the results store derives its column types from them.
COUNT, REAL, COUNT_PER_TABLE, REAL_PER_TABLE = "count", "real", "count per table", "real per table"

# Every key of a ``summarize`` row (besides the seed), with its kind. Per-table
# lists have one entry per table; table 0 is Zipf rank 1.
SUMMARY_METRICS = (
    ("n_arrivals", COUNT), ("n_unfinished", COUNT), ("n_txns", COUNT), ("n_committed", COUNT),
    ("n_aborted", COUNT), ("aborted_max_retries", COUNT), ("aborted_validation", COUNT),
    ("success_rate", REAL), ("throughput_cps", REAL), ("commit_latency_mean_ms", REAL),
    ("commit_latency_p50_ms", REAL), ("commit_latency_p95_ms", REAL), ("commit_latency_p99_ms", REAL),
    ("retries_mean", REAL), ("conflicts_same_table", COUNT), ("conflicts_catalog_only", COUNT),
    ("cas_throttled", COUNT),
    *((f"{prefix}_{name}", kind) for prefix, _ in OP_PREFIXES
      for name, kind in (("n_txns", COUNT), ("success_rate", REAL), ("throughput_cps", REAL),
                         ("commit_latency_mean_ms", REAL), ("commit_latency_p99_ms", REAL))),
    ("table_n_txns", COUNT_PER_TABLE), ("table_n_committed", COUNT_PER_TABLE),
    ("table_success_rate", REAL_PER_TABLE), ("table_conflicts_same_table", COUNT_PER_TABLE),
    ("table_conflicts_catalog_only", COUNT_PER_TABLE),
)
# Requests by kind per committed transaction: the work the store serves for each commit it keeps.
REQUEST_KINDS = ("catalog_read", "cas", "manifest_list_read", "manifest_list_write", "manifest_file_read",
                 "manifest_file_write", "table_metadata_read", "table_metadata_write")
# Client presets and writer workloads: retry-budget aborts, wasted work, per writer class.
CLIENT_METRICS = (
    ("aborted_retry_budget", COUNT),
    *((f"requests_{kind}_per_commit", REAL) for kind in REQUEST_KINDS),
    ("wasted_write_bytes_per_commit", REAL),
    *((f"{prefix}_{name}", kind) for prefix, _ in JOB_CLASS_PREFIXES
      for name, kind in (("n_txns", COUNT), ("success_rate", REAL), ("aborted", COUNT),
                         ("commit_latency_p50_ms", REAL), ("commit_latency_p99_ms", REAL),
                         ("lag_p50_s", REAL), ("lag_p99_s", REAL), ("lag_max_s", REAL))),
)
SUMMARY_METRICS += CLIENT_METRICS
# Window arrivals still committing at the end, their commit begun at least STUCK_AFTER_S before it: commits that
# cannot finish (a Delta loser reading more winners than land while it reads), which success_rate, over the
# recorded transactions only, does not see; the usable rule counts them as failed (ray_jobs.knee_curves).
STUCK_AFTER_S = 300.0
SUMMARY_METRICS += (("n_stuck", COUNT),)
# Metrics added after the first stored results: older rows have none (null).
LATER_METRICS = ("cas_throttled", *(name for name, _ in CLIENT_METRICS), "n_stuck")


def window_ms(config: SimConfig, window_s: Optional[tuple[float, float]] = None) -> tuple[float, float]:
    """[start, end) in ms of the transactions a summary counts, by submit time: the steady-state window
    [W, D - W) unless ``window_s`` names another (e.g. (0, 60): a real run's first minute from a cold start,
    to hold the model against that run, studies/real_clients/log.md)."""
    if window_s is None:
        return config.warmup_s * 1000.0, config.duration_ms - config.warmup_s * 1000.0
    return window_s[0] * 1000.0, window_s[1] * 1000.0


def submitted_in(config: SimConfig, workload: Workload,
                 window_s: Optional[tuple[float, float]] = None) -> np.ndarray:
    """Transactions submitted inside the window (the steady-state one by default), recorded or not."""
    start, end = window_ms(config, window_s)
    submit = workload.submit_ms
    return (submit >= start) & (submit < end)


def window_mask(config: SimConfig, workload: Workload, outcome: Outcome,
                window_s: Optional[tuple[float, float]] = None) -> np.ndarray:
    """Recorded transactions submitted inside the window (the steady-state one by default)."""
    return (outcome.status != UNFINISHED) & submitted_in(config, workload, window_s)


def _span_s(submit_ms: np.ndarray) -> float:
    return float(submit_ms.max() - submit_ms.min()) / 1000.0 if len(submit_ms) > 1 else NAN


def _rate(count: int, span_s: float) -> float:
    return count / span_s if span_s and span_s > 0 else NAN


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if len(values) else NAN


def _percentile(values: np.ndarray, q: float) -> float:
    # Linear interpolation, as numpy's and pandas' defaults (the reference's analysis).
    return float(np.percentile(values, q)) if len(values) else NAN


def _percentiles(values: np.ndarray, qs: tuple[float, ...]) -> list[float]:
    """``[_percentile(values, q) for q in qs]`` with one partial sort: numpy computes each from the same
    order statistics by the same formula, so the numbers are those of separate calls, bit for bit."""
    return [float(v) for v in np.percentile(values, qs)] if len(values) else [NAN] * len(qs)


def summarize(config: SimConfig, workload: Workload, outcome: Outcome,
              window_s: Optional[tuple[float, float]] = None) -> dict:
    """The summary metrics of one run (no config fields, no seed), over the steady-state window or
    ``window_s`` (seconds, [start, end) by submit time)."""
    # The window's transactions are picked once by position (``take`` is cheaper than a mask per array).
    rows = np.flatnonzero(window_mask(config, workload, outcome, window_s))
    status = outcome.status.take(rows)
    submit = workload.submit_ms.take(rows)
    op = workload.op.take(rows)
    table = workload.table.take(rows)
    committed = status == COMMITTED
    latency = outcome.end_ms.take(rows) - outcome.commit_start_ms.take(rows)
    retries = outcome.retries.take(rows)
    same = outcome.conflicts_same_table.take(rows)
    catalog_only = outcome.conflicts_catalog_only.take(rows)

    # Throughput divides by the span of submit times of all recorded window
    # transactions, as the reference's analysis does.
    span_s = _span_s(submit)
    n_txns = int(len(status))
    n_committed = int(np.count_nonzero(committed))
    arrived = submitted_in(config, workload, window_s)
    committed_latency = latency[committed]
    latency_mean = _mean(committed_latency)
    p50, p95, p99 = _percentiles(committed_latency, (50, 95, 99))
    row = {
        "n_arrivals": int(np.count_nonzero(arrived)),
        "n_unfinished": int(np.count_nonzero(arrived & (outcome.status == UNFINISHED))),
        "n_txns": n_txns,
        "n_committed": n_committed,
        "n_aborted": n_txns - n_committed,
        "aborted_max_retries": int(np.count_nonzero(status == ABORTED_MAX_RETRIES)),
        "aborted_validation": int(np.count_nonzero(status == ABORTED_VALIDATION)),
        "success_rate": n_committed / n_txns if n_txns else NAN,
        "throughput_cps": _rate(n_committed, span_s),
        "commit_latency_mean_ms": latency_mean,
        "commit_latency_p50_ms": p50,
        "commit_latency_p95_ms": p95,
        "commit_latency_p99_ms": p99,
        "retries_mean": _mean(retries[committed]),
        "conflicts_same_table": int(same.sum()),
        "conflicts_catalog_only": int(catalog_only.sum()),
        "cas_throttled": int(outcome.cas_throttled.take(rows).sum()),
        "aborted_retry_budget": int(np.count_nonzero(status == ABORTED_BUDGET)),
        "n_stuck": int(np.count_nonzero(arrived & (outcome.status == UNFINISHED) & (outcome.commit_start_ms > 0.0)
                                        & (outcome.commit_start_ms < config.duration_ms - STUCK_AFTER_S * 1000.0))),
    }
    row.update(_requests_per_commit(outcome, rows, committed, n_committed, retries, config.protocol,
                                    config.traced_commit is not None))
    row.update(_job_classes(workload, outcome, rows, committed, latency))
    for prefix, code in OP_PREFIXES:
        of_type = op == code
        n_type = int(np.count_nonzero(of_type))
        type_committed = committed & of_type
        n_type_committed = int(np.count_nonzero(type_committed))
        row[f"{prefix}_n_txns"] = n_type
        row[f"{prefix}_success_rate"] = n_type_committed / n_type if n_type else NAN
        row[f"{prefix}_throughput_cps"] = _rate(n_type_committed, span_s) if n_type else NAN
        if n_type_committed == n_committed:  # every commit is of this type (an FA-only mix): the same numbers
            row[f"{prefix}_commit_latency_mean_ms"] = latency_mean
            row[f"{prefix}_commit_latency_p99_ms"] = p99
        else:
            row[f"{prefix}_commit_latency_mean_ms"] = _mean(latency[type_committed])
            row[f"{prefix}_commit_latency_p99_ms"] = _percentile(latency[type_committed], 99)

    tables = config.num_tables
    per_table_txns = np.bincount(table, minlength=tables)
    per_table_committed = np.bincount(table[committed], minlength=tables)
    row["table_n_txns"] = per_table_txns.tolist()
    row["table_n_committed"] = per_table_committed.tolist()
    row["table_success_rate"] = [c / n if n else NAN for c, n in zip(per_table_committed, per_table_txns)]
    row["table_conflicts_same_table"] = np.bincount(table, weights=same, minlength=tables).astype(int).tolist()
    row["table_conflicts_catalog_only"] = np.bincount(table, weights=catalog_only,
                                                      minlength=tables).astype(int).tolist()
    return row


def _requests_per_commit(outcome: Outcome, rows: np.ndarray, committed: np.ndarray, n_committed: int,
                         retries: np.ndarray, protocol: str, traced_commit: bool) -> dict:
    """Requests of every recorded window transaction (committed or not) per commit, by kind, and the
    bytes written by attempts that lost: everything an aborted transaction's attempts wrote, and what a
    committed one wrote beyond its final attempt's (a manifest file and list, published; a manifest list
    and table metadata, corrected, whose manifest file is written during the runtime, or, for a traced
    commit, in its first attempt and kept by every retry). ``rows``: the window's transactions;
    ``retries``: theirs."""
    list_writes = outcome.manifest_list_writes.take(rows)
    file_writes = outcome.manifest_file_writes.take(rows)
    metadata_writes = _or_zeros(outcome.table_metadata_writes, len(outcome.status)).take(rows)
    totals = {
        "catalog_read": int(outcome.catalog_reads.take(rows).sum()) if outcome.catalog_reads is not None else 0,
        "cas": int(retries.sum()) + len(rows),  # every recorded transaction made retries + 1 CAS requests
        "manifest_list_read": int(outcome.manifest_list_reads.take(rows).sum()),
        "manifest_list_write": int(list_writes.sum()),
        "manifest_file_read": int(outcome.manifest_file_reads.take(rows).sum()),
        "manifest_file_write": int(file_writes.sum()),
        "table_metadata_read": int(_or_zeros(outcome.table_metadata_reads, len(outcome.status)).take(rows).sum()),
        "table_metadata_write": int(metadata_writes.sum()),
    }
    row = {f"requests_{kind}_per_commit": totals[kind] / n_committed if n_committed else NAN
           for kind in REQUEST_KINDS}
    written = (file_writes.astype(np.float64) * MANIFEST_FILE_BYTES + list_writes * MANIFEST_LIST_BYTES
               + metadata_writes * TABLE_METADATA_BYTES)
    final_attempt = (MANIFEST_LIST_BYTES + TABLE_METADATA_BYTES if protocol == "corrected"
                     else MANIFEST_FILE_BYTES + MANIFEST_LIST_BYTES)
    if traced_commit:
        final_attempt += MANIFEST_FILE_BYTES
    kept = committed * float(final_attempt)
    row["wasted_write_bytes_per_commit"] = (float(np.maximum(written - kept, 0.0).sum()) / n_committed
                                            if n_committed else NAN)
    return row


def _or_zeros(counts, n: int) -> np.ndarray:
    return counts if counts is not None else np.zeros(n, np.int32)


def _job_classes(workload: Workload, outcome: Outcome, rows: np.ndarray, committed: np.ndarray,
                 latency: np.ndarray) -> dict:
    """Per writer class (writers, maintenance jobs): success, time to commit, lag behind the schedule.
    ``rows``: the window's transactions; ``committed`` and ``latency``: theirs."""
    row = {}
    if workload.job_class is None:  # open-loop arrivals: no writer class has a transaction
        for prefix, _ in JOB_CLASS_PREFIXES:
            row.update({f"{prefix}_n_txns": 0, f"{prefix}_success_rate": NAN, f"{prefix}_aborted": 0,
                        f"{prefix}_commit_latency_p50_ms": NAN, f"{prefix}_commit_latency_p99_ms": NAN,
                        f"{prefix}_lag_p50_s": NAN, f"{prefix}_lag_p99_s": NAN, f"{prefix}_lag_max_s": NAN})
        return row
    job_class = workload.job_class.take(rows)
    lag_s = ((outcome.start_ms.take(rows) - workload.submit_ms.take(rows)) / 1000.0 if outcome.start_ms is not None
             else np.full(len(rows), NAN))
    for prefix, code in JOB_CLASS_PREFIXES:
        of_class = job_class == code
        n_class = int(np.count_nonzero(of_class))
        class_committed = committed & of_class
        n_class_committed = int(np.count_nonzero(class_committed))
        row[f"{prefix}_n_txns"] = n_class
        row[f"{prefix}_success_rate"] = n_class_committed / n_class if n_class else NAN
        row[f"{prefix}_aborted"] = n_class - n_class_committed
        row[f"{prefix}_commit_latency_p50_ms"], row[f"{prefix}_commit_latency_p99_ms"] = _percentiles(
            latency[class_committed], (50, 99))
        class_lag = lag_s[of_class]
        row[f"{prefix}_lag_p50_s"], row[f"{prefix}_lag_p99_s"] = _percentiles(class_lag, (50, 99))
        row[f"{prefix}_lag_max_s"] = float(class_lag.max()) if n_class else NAN
    return row


def transactions_table(config: SimConfig, workload: Workload, outcome: Outcome) -> pa.Table:
    """Every transaction of one run, one row each (unfinished ones included)."""
    import pyarrow as pa  # here, not at the top: a run that writes no transactions never loads it (~30-80 ms)

    status = outcome.status
    committed = status == COMMITTED
    in_window = window_mask(config, workload, outcome)
    commit_latency = np.where(committed, outcome.end_ms - outcome.commit_start_ms, np.nan)
    return pa.table({
        "txn_id": np.arange(len(workload), dtype=np.int64),
        "submit_ms": workload.submit_ms,
        "runtime_ms": workload.runtime_ms,
        "operation_type": pa.array(np.asarray(OP_NAMES)[workload.op]).dictionary_encode(),
        "table": workload.table,
        "status": pa.array(np.asarray(STATUS_NAMES)[status]).dictionary_encode(),
        "abort_reason": pa.array(np.asarray(ABORT_REASONS)[status]).dictionary_encode(),
        "retries": outcome.retries,
        "commit_latency_ms": pa.array(commit_latency, from_pandas=True),
        "total_latency_ms": pa.array(outcome.end_ms - workload.submit_ms, from_pandas=True),
        "end_ms": pa.array(outcome.end_ms, from_pandas=True),
        "conflicts_same_table": outcome.conflicts_same_table,
        "conflicts_catalog_only": outcome.conflicts_catalog_only,
        "cas_throttled": outcome.cas_throttled,
        "manifest_list_reads": outcome.manifest_list_reads,
        "manifest_list_writes": outcome.manifest_list_writes,
        "manifest_file_reads": outcome.manifest_file_reads,
        "manifest_file_writes": outcome.manifest_file_writes,
        "table_metadata_reads": _or_zeros(outcome.table_metadata_reads, len(workload)),
        "table_metadata_writes": _or_zeros(outcome.table_metadata_writes, len(workload)),
        "catalog_reads": outcome.catalog_reads if outcome.catalog_reads is not None
        else np.zeros(len(workload), np.int32),
        # Writer workloads: who committed, and how late it started against its due time (0 for open loop).
        "job_class": pa.array(np.asarray(JOB_CLASS_NAMES)[workload.job_class if workload.job_class is not None
                                                          else np.zeros(len(workload), np.int8)]).dictionary_encode(),
        "lag_ms": pa.array(outcome.start_ms - workload.submit_ms if outcome.start_ms is not None
                           else np.full(len(workload), np.nan), from_pandas=True),
        "in_window": in_window,
    })
