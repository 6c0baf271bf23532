"""The measurement files ``fit`` reads, and the stats it fits to: one client count of a benchmark. Pure
but for reading the files.

Two formats. Seed 000's per-thread table (``read_table``): one row per
provider, operation and client count, with success and failure counts and
the mean and percentiles of the successful ops' latency. Raw samples
(``read_samples_file``): one row per op (operation, latency_ms, succeeded,
clients, and optionally the op's read, ``read_ms``), summarised into the
same stats. ``commit-sweeps probe`` writes this format, with optional rows
of one client's plain writes and of rounds of reads sent at once; it takes
the column and operation names from here, so the two cannot drift apart.

A table's goodput is taken as successes / T, T the measuring time recovered
from the one-client row (T = successes x mean latency: one client, no
failures, one op after another). Seed 000's printed Azure goodput
(0.1-0.3 op/s) contradicts its own counts; T recovers about 3,000 s there
and about 1,500 s for AWS and GCS, whose printed goodput it reproduces.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field, replace
from typing import Iterator, Mapping, Optional, Sequence

import numpy as np

from simcore.errors import ConfigError
from simcore.input_files import read_text
from simcore.profiles import MAX_FITTED_CLIENTS, MAX_LATENCY_MS


@dataclass(frozen=True)
class ClientStats:
    """One client count of a benchmark: what seed 000's per-thread table gives."""

    clients: int
    successes: int
    failures: int
    goodput_ops: float
    mean_ms: float  # successful ops
    p50_ms: float
    p95_ms: float
    p99_ms: float
    failed_mean_ms: Optional[float] = None  # only from samples

    @property
    def failure_rate(self) -> float:
        return self.failures / (self.successes + self.failures)

    @property
    def odds(self) -> float:
        """Failures per success, f / (1 - f): the stale writes each commit cost (one success counted at least)."""
        return self.failures / max(self.successes, 1)


def summarise(clients: int, latencies: np.ndarray, succeeded: np.ndarray, window_s: Optional[float] = None
              ) -> ClientStats:
    """One client count's stats from its ops. Without ``window_s``, the window is the clients' busy time."""
    latencies = np.asarray(latencies, float)
    succeeded = np.asarray(succeeded, bool)
    ok = latencies[succeeded]
    if len(ok) == 0:
        raise ConfigError("succeeded", f"no successful op at {clients} clients", "at least one success per client count")
    if window_s is None:  # a closed loop keeps every client busy: the window is their total time / clients
        window_s = latencies.sum() / 1000.0 / clients
    failed = latencies[~succeeded]
    return ClientStats(clients=clients, successes=int(len(ok)), failures=int(len(failed)),
                       goodput_ops=len(ok) / window_s, mean_ms=float(ok.mean()),
                       p50_ms=float(np.percentile(ok, 50)), p95_ms=float(np.percentile(ok, 95)),
                       p99_ms=float(np.percentile(ok, 99)),
                       failed_mean_ms=float(failed.mean()) if len(failed) else None)


# A measurements CSV: seed 000's table is a few kB; a samples file of a million ops is about 30 MB.
MAX_CSV_BYTES = 64 * 2**20
# A per-thread table has one row per (provider, operation, client count): seed 000's has 128.
MAX_TABLE_ROWS = 10_000
# A samples file has one row per op: twice the million ops a long probe records. Rows are read one at a time and
# only their known columns kept, so memory grows with the ops, never with the columns a file has.
MAX_SAMPLE_ROWS = 2_000_000
# Seed 000's table has 14 columns and a probe's samples 5; a header far wider is not a measurements file.
MAX_CSV_COLUMNS = 256
# The most clients a row may have measured (and reads a round may send): as many as bench simulates, and the
# most a profile's fitted_clients may name, since the fit simulates every measured client count.
MAX_FIT_CLIENTS = MAX_FITTED_CLIENTS
TABLE_COLUMNS = ("provider", "operation", "clients", "success", "fail", "mean_ms", "p50_ms", "p95_ms", "p99_ms")
SAMPLE_COLUMNS = ("operation", "latency_ms", "succeeded", "clients")
# Optional: how long the op's read took (``commit-sweeps probe`` writes it). Where one client's reads are timed,
# ``fit --samples`` takes the profile's read latency from them instead of from the base profile.
SAMPLE_READ_COLUMN = "read_ms"
# Optional rows: one client's plain (unconditional) writes of a small object of the probe's own, as a commit
# writes its data and metadata files. Where a file has them, ``fit --samples`` takes the profile's plain write
# from them instead of from the base profile.
SAMPLE_WRITE_OPERATION = "write"
SAMPLE_WRITE_BYTES = 4096  # the size the probe writes: a one-row data file, a manifest or a metadata file
# Optional rows: rounds of reads one client sent at once (``clients`` holds the reads in the round), each
# round from a fresh client, as delta-rs's call reads a table's log entries. Where a file has rounds of at
# least two sizes, ``fit --samples`` takes the profile's ``[read] round_ms_per_read`` from them.
SAMPLE_ROUND_OPERATION = "round"


def _open_rows(path: str, field: str, columns: Sequence[str], optional: Sequence[str] = (), *,
               max_rows: int, rows_are: str) -> Iterator[tuple[int, dict]]:
    """(line, row) of the CSV's rows, one at a time, after checking the file (input_files.read_text) and that its
    header has ``columns``; a row holds only ``columns`` and the ``optional`` ones the header has (a field the
    row lacks is None). ``line`` counts the header as line 1 and skips blank lines; past ``max_rows`` rows (what
    ``rows_are``, for the error) the file is refused."""
    text = read_text(path, field, MAX_CSV_BYTES, "a CSV file")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next((row for row in reader if row), [])
        if len(header) > MAX_CSV_COLUMNS:
            raise ConfigError(field, path, f"a CSV file of at most {MAX_CSV_COLUMNS} columns (this header has "
                                           f"{len(header)})")
        header = [name.strip() for name in header]
        missing = [name for name in columns if name not in header]
        if missing:
            raise ConfigError(field, path, f"a CSV file with the columns {', '.join(columns)} "
                                           f"(missing: {', '.join(missing)})")
        # The first column of a name, as csv.DictReader would keep the last: a repeated name is not ours to guess.
        wanted = {name: header.index(name) for name in (*columns, *optional) if name in header}
        line = 1
        for row in reader:
            if not row:
                continue
            line += 1
            if line - 1 > max_rows:
                raise ConfigError(field, path, f"a CSV file of at most {max_rows:,} rows ({rows_are})")
            yield line, {name: row[index] if index < len(row) else None for name, index in wanted.items()}
    except csv.Error as error:
        raise ConfigError(field, path, f"a CSV file ({error})") from None


def _number(row: Mapping, column: str, line: int, path: str) -> float:
    """The row's ``column`` as a finite number."""
    try:
        value = float(row[column])
    except (KeyError, TypeError, ValueError):
        raise ConfigError(f"{path}:{line}: {column}", row.get(column), "a number") from None
    if not math.isfinite(value):  # as written: 1e400 reads as inf
        raise ConfigError(f"{path}:{line}: {column}", row[column], "a finite number")
    return value


def _whole(row: Mapping, column: str, line: int, path: str, low: int, high: Optional[int], allowed: str) -> int:
    """The row's ``column`` as a whole number in [low, high] (no upper limit where ``high`` is None): written as
    an integer or as a float without a fraction (1e3), never rounded (1.9 is not 1 client)."""
    value = _number(row, column, line, path)
    if not value.is_integer():
        raise ConfigError(f"{path}:{line}: {column}", row[column], allowed)
    if value < low or (high is not None and value > high):
        raise ConfigError(f"{path}:{line}: {column}", int(value), allowed)
    return int(value)


def _latency(row: Mapping, column: str, line: int, path: str) -> float:
    """The row's ``column`` as a latency a profile can hold (ms, > 0 and at most ``MAX_LATENCY_MS``)."""
    value = _number(row, column, line, path)
    if not 0 < value <= MAX_LATENCY_MS:
        raise ConfigError(f"{path}:{line}: {column}", value,
                          f"a latency > 0 (ms) and <= {MAX_LATENCY_MS:g} (what a provider profile allows)")
    return value


_CLIENTS_ALLOWED = f"a whole number of clients in [1, {MAX_FIT_CLIENTS}]"


def read_table(path: str, provider: str) -> dict[str, list[ClientStats]]:
    """Seed-000-style per-thread rows of ``provider``: operation -> stats by client count.

    Goodput is recomputed as successes / T with T recovered from the one-client row (see the module doc).
    """
    rows = _open_rows(path, "table", TABLE_COLUMNS, max_rows=MAX_TABLE_ROWS,
                      rows_are="one per provider, operation and client count")
    by_op: dict[str, list[ClientStats]] = {}
    seen: dict[tuple[str, int], int] = {}
    for line, row in rows:
        if row.get("provider") != provider:
            continue
        operation = row.get("operation")
        if operation not in ("cas", "append"):
            raise ConfigError(f"{path}:{line}: operation", operation, "cas or append")
        clients = _whole(row, "clients", line, path, 1, MAX_FIT_CLIENTS, _CLIENTS_ALLOWED)
        if (operation, clients) in seen:
            raise ConfigError(f"{path}:{line}: clients", clients, f"one row per operation and client count "
                                                                   f"({operation} at {clients} is on line "
                                                                   f"{seen[operation, clients]} too)")
        seen[operation, clients] = line
        counts = {}
        for column in ("success", "fail"):
            counts[column] = _whole(row, column, line, path, 0, None, "a count >= 0 (a whole number)")
        if counts["success"] + counts["fail"] == 0:
            raise ConfigError(f"{path}:{line}: success", 0, "at least one op (success + fail >= 1)")
        times = {}
        for column in ("mean_ms", "p50_ms", "p95_ms", "p99_ms"):
            times[column] = _latency(row, column, line, path)
        by_op.setdefault(operation, []).append(ClientStats(
            clients=clients, successes=counts["success"], failures=counts["fail"], goodput_ops=math.nan, **times))
    if not by_op:
        raise ConfigError("provider", provider, f"a provider with rows in {path}")
    return {op: with_recovered_goodput(sorted(s, key=lambda x: x.clients)) for op, s in by_op.items()}


def measuring_time_s(stats: Sequence[ClientStats]) -> float:
    """T: one client, no failures, ops back to back, so T = successes x mean latency."""
    one = [s for s in stats if s.clients == 1]
    if not one:
        raise ConfigError("clients", sorted(s.clients for s in stats), "a row at 1 client (it gives the measuring time)")
    if one[0].successes < 1:
        raise ConfigError("success", one[0].successes, "at least one success at 1 client (it gives the measuring time)")
    return one[0].successes * one[0].mean_ms / 1000.0


def with_recovered_goodput(stats: Sequence[ClientStats]) -> list[ClientStats]:
    seconds = measuring_time_s(stats)
    return [replace(s, goodput_ops=s.successes / seconds) for s in stats]


@dataclass(frozen=True)
class MeasuredLatency:
    """One client's latency of one kind of request, as a lognormal: what the profile's read or plain write
    becomes."""

    median_ms: float
    sigma: float  # half the log distance from the 16th to the 84th percentile: a tail of stalls does not widen it
    min_ms: float
    samples: int


def measured_latency(latency_ms: Sequence[float]) -> MeasuredLatency:
    """The lognormal of these latencies (ms, all > 0).

    >>> r = measured_latency([20.0] * 10 + [500.0])  # one stall in eleven reads
    >>> (round(r.median_ms, 6), round(r.sigma, 6), round(r.min_ms, 6), r.samples)
    (20.0, 0.0, 20.0, 11)
    """
    logs = np.log(np.asarray(latency_ms, float))
    low, mid, high = np.percentile(logs, [15.87, 50.0, 84.13])
    return MeasuredLatency(median_ms=float(math.exp(mid)), sigma=float((high - low) / 2.0),
                           min_ms=float(math.exp(logs.min())), samples=len(logs))


def round_ms_per_read(rounds: Mapping[int, Sequence[float]]) -> float:
    """What each read beyond the first adds to a round of reads sent at once (ms, >= 0): the least-squares
    slope of each size's median round against its reads less one. Rounds of at least two sizes.

    >>> round(round_ms_per_read({1: [40.0, 42.0, 41.0], 33: [57.0], 65: [73.0, 74.0, 72.0]}), 6)
    0.5
    """
    sizes = sorted(rounds)
    if len(sizes) < 2:
        raise ValueError("rounds of at least two sizes are needed for a cost per read")
    extra = np.array([k - 1 for k in sizes], float)
    medians = np.array([np.median(rounds[k]) for k in sizes])
    slope = np.polyfit(extra, medians, 1)[0]
    return float(max(slope, 0.0))  # rounds that grow no slower than one read: no cost, not a negative one


@dataclass(frozen=True)
class Samples:
    """A samples file: the conditional ops' stats by client count, and what one client's plain requests took
    where the file times them (None where it does not)."""

    stats: dict[str, list[ClientStats]]
    read: Optional[MeasuredLatency]
    write: Optional[MeasuredLatency]
    rounds: Mapping[int, list[float]] = field(default_factory=dict)  # a round's reads -> its latencies (ms)

    @property
    def round_ms_per_read(self) -> Optional[float]:
        """``round_ms_per_read`` of the file's rounds; None where it has fewer than two sizes."""
        return round_ms_per_read(self.rounds) if len(self.rounds) >= 2 else None


def read_samples(path: str) -> dict[str, list[ClientStats]]:
    """Raw samples (operation, latency_ms, succeeded, clients): operation -> stats by client count."""
    return read_samples_file(path).stats


def read_samples_file(path: str) -> Samples:
    """``read_samples``, with the read latency of the one-client ops where the file times their reads
    (``SAMPLE_READ_COLUMN``), the plain writes' latency where it has ``write`` rows and the rounds of reads
    where it has ``round`` rows."""
    groups: dict[tuple[str, int], tuple[list, list]] = {}
    reads: list[float] = []
    writes: list[float] = []
    rounds: dict[int, list[float]] = {}
    rows = _open_rows(path, "samples", SAMPLE_COLUMNS, (SAMPLE_READ_COLUMN,), max_rows=MAX_SAMPLE_ROWS,
                      rows_are="one per measured op")
    for line, row in rows:
        operation = row.get("operation")
        if operation not in ("cas", "append", SAMPLE_WRITE_OPERATION, SAMPLE_ROUND_OPERATION):
            raise ConfigError(f"{path}:{line}: operation", operation,
                              f"cas, append, {SAMPLE_WRITE_OPERATION} or {SAMPLE_ROUND_OPERATION}")
        latency = _latency(row, "latency_ms", line, path)
        flag = str(row.get("succeeded", "")).strip().lower()
        if flag not in ("1", "0", "true", "false"):
            raise ConfigError(f"{path}:{line}: succeeded", row.get("succeeded"), "1/0 or true/false")
        clients = _whole(row, "clients", line, path, 1, MAX_FIT_CLIENTS,
                         f"a whole number of reads in [1, {MAX_FIT_CLIENTS}]" if operation == SAMPLE_ROUND_OPERATION
                         else _CLIENTS_ALLOWED)
        if operation == SAMPLE_WRITE_OPERATION:
            if clients != 1 or flag not in ("1", "true"):
                raise ConfigError(f"{path}:{line}: {SAMPLE_WRITE_OPERATION}", f"clients {clients}, succeeded {flag}",
                                  "a plain write one client made and the store took (clients 1, succeeded 1)")
            writes.append(latency)
            continue
        if operation == SAMPLE_ROUND_OPERATION:
            if flag not in ("1", "true"):
                raise ConfigError(f"{path}:{line}: {SAMPLE_ROUND_OPERATION}", f"succeeded {flag}",
                                  "a round of reads the store answered (succeeded 1)")
            rounds.setdefault(clients, []).append(latency)
            continue
        lat, ok = groups.setdefault((operation, clients), ([], []))
        lat.append(latency)
        ok.append(flag in ("1", "true"))
        if clients == 1 and str(row.get(SAMPLE_READ_COLUMN) or "").strip():
            read = _number(row, SAMPLE_READ_COLUMN, line, path)
            if not 0 < read <= latency:
                raise ConfigError(f"{path}:{line}: {SAMPLE_READ_COLUMN}", read,
                                  f"a latency > 0 (ms) and at most the op's latency_ms ({latency:g})")
            reads.append(read)
    if not groups:
        raise ConfigError("csv", path, "at least one cas or append sample row")
    out: dict[str, list[ClientStats]] = {}
    for (operation, clients), (lat, ok) in sorted(groups.items()):
        out.setdefault(operation, []).append(summarise(clients, np.array(lat), np.array(ok)))
    return Samples(out, measured_latency(reads) if reads else None, measured_latency(writes) if writes else None,
                   rounds)
