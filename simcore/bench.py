"""The conditional-write benchmark of seeds 000 and 003, simulated.

N clients share one object. Each, in a closed loop with no retry and no
backoff, reads the object and then conditionally writes it (``cas``: an
overwrite guarded by the version it read; ``append``: an append guarded by the
length it read). A write succeeds when no other write succeeded between the
moment the client's read observed the object and the moment the write is
decided. The client then starts over at once. What is reported per client
count is what seed 000 measured at the client: successful ops/s (goodput), the
failure rate, and the latency of successful ops, read included (seed 000's
op rate x latency is about 1 at one client, so its "CAS latency" spans the
read and the write).

Latencies come from a provider profile: the read, the conditional write (CAS
or append), and the measured model's terms (a failed write answering after
``failed_multiplier`` x its latency (or its latency plus (``failed_multiplier`` - 1) x
an uncontended draw: ``failed_extra``), contention growing the write's latency
with the conditional requests in flight, the read observing the object at
``read_observed_at`` of its latency, the object holding itself ``hold_ms``
after each successful write's decision, so that a write that would succeed
meanwhile waits for it). The write is drawn with the engine's
own contended draw, so bench and the catalog simulation share one model.

Ops completed in the first ``warmup`` seconds (the clients all start at 0,
in step) are not counted; seed 000 likewise measured only the window where
every client ran.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterable, Optional, Sequence

import numba
import numpy as np

from simcore import bounds, kernel_cache
from simcore.errors import ConfigError
from simcore.engine import (JITTER_DOWN, _heap_pop as _pop, _heap_push as _push,  # the engine's event heap
                            backoff_wait_ms, draw_contended, take_token, throttle_terms)
from simcore.providers import Provider

kernel_cache.install()  # this file's kernels too: cached by content (the engine's import has done it already)

OPERATIONS = ("cas", "append")
MAX_CLIENTS = 1024
_BENCH_STREAM = 2  # seeds' third stream (the catalog simulation uses 0 and 1)

_OBSERVED, _READ_DONE, _DECIDED, _REFUSED, _RESEND = range(5)  # event kinds; an event's code is 8 x client + kind


@dataclass(frozen=True)
class BenchResult:
    """One client count, over the given seeds (the ``--json`` object of ``python -m simcore bench``)."""

    provider: str
    operation: str
    clients: int
    goodput_ops: float  # successful ops per second, mean over seeds
    failure_rate: float  # failed / (successful + failed), all seeds pooled
    latency_mean_ms: float  # successful ops, client side, read included, all seeds pooled
    latency_p50_ms: float
    latency_p95_ms: float
    latency_p99_ms: float
    seeds: tuple[int, ...]
    successes: int
    failures: int
    duration_s: float

    def to_json(self) -> dict:
        return {"provider": self.provider, "operation": self.operation, "clients": self.clients,
                "goodput_ops": self.goodput_ops, "failure_rate": self.failure_rate,
                "latency_mean_ms": self.latency_mean_ms, "latency_p50_ms": self.latency_p50_ms,
                "latency_p95_ms": self.latency_p95_ms, "latency_p99_ms": self.latency_p99_ms,
                "seeds": list(self.seeds), "successes": self.successes, "failures": self.failures,
                "duration_s": self.duration_s}


def extrapolation_note(profile: Provider, operation: str, clients: Iterable[float], what: str = "") -> Optional[str]:
    """One line when ``clients`` go beyond the client counts ``operation``'s terms were fitted on, else None.

    Only a profile that records them (``fit`` writes ``fitted_clients``) can
    say; between two fitted counts is not beyond them.
    """
    fitted = profile.conditional(operation).fitted_clients
    if not fitted:
        return None
    outside = sorted({c for c in clients if c > max(fitted) or c < min(fitted)})
    if not outside:
        return None
    shown = ", ".join(f"{c:g}" for c in outside[:4]) + (", ..." if len(outside) > 4 else "")
    return (f"note: {profile.name} {operation} was fitted on {len(fitted)} client count(s) "
            f"({', '.join(map(str, fitted))}); {what or 'results at ' + shown + ' client(s)'} extrapolate beyond "
            f"them (studies/holdout/README.md)")


def warmup_s(duration_s: float) -> float:
    return min(5.0, duration_s / 10.0)


def _kernel_inputs(profile: Provider, operation: str) -> np.ndarray:
    """[read mu, sigma, floor, observed_at, write mu, sigma, floor, failed x, contention exp, contention sigma,
    decided_at, contention delays the read (1) or the write (0), throttle tokens per ms (0: none), burst,
    resends of a refused write, their base ms, multiplier, cap ms, jitter, only a write that would commit takes
    a token (1) or every write (0), commit hold ms (0: none), a failure's extra time drawn without the
    contention terms (1) or as the write's own latency (0)]."""
    if operation not in OPERATIONS:
        raise ConfigError("operation", operation, "one of " + ", ".join(OPERATIONS))
    if operation == "append" and not profile.supports_append:
        raise ConfigError("operation", operation, f"cas ({profile.name} has no conditional append)")
    read = profile.read()
    write = profile.conditional_latency(operation)
    terms = profile.conditional(operation)
    return np.array([math.log(read.median_ms), read.sigma, read.floor_ms, profile.read_observed_at,
                     math.log(write.median_ms), write.sigma, write.floor_ms, terms.failed_multiplier,
                     terms.contention_exponent, terms.contention_sigma, terms.decided_at,
                     1.0 if terms.contention_in == "read" else 0.0, *throttle_terms(terms.throttle), terms.hold_ms,
                     1.0 if terms.failed_extra == "uncontended" else 0.0])


def run_clients(profile: Provider, operation: str, clients: int, duration_s: float, seed: int
                ) -> tuple[np.ndarray, np.ndarray]:
    """(latency ms, succeeded) of every op of one seed completed after the warm-up, in completion order."""
    rng = np.random.default_rng([seed, _BENCH_STREAM])
    return _closed_loop(_kernel_inputs(profile, operation), clients, duration_s * 1000.0,
                        warmup_s(duration_s) * 1000.0, rng)


def bench(profile: Provider, operation: str, clients: Iterable[int], seeds: Sequence[int],
          duration_s: float = 300.0, memory_limit: Optional[tuple[int, str]] = None,
          progress: Optional[Callable[[Optional[BenchResult]], None]] = None) -> list[BenchResult]:
    """The benchmark at each client count, each over every seed; ``memory_limit``: (bytes, where it came from)
    of the work bound (default: ``simcore.bounds.memory_limit()``); ``progress``: called with None once the
    inputs are checked, before the first simulation, then with each client count's result as it is done."""
    params = _kernel_inputs(profile, operation)
    if not seeds:
        raise ConfigError("seeds", list(seeds), "at least one seed")
    if not (isinstance(duration_s, (int, float)) and math.isfinite(duration_s) and duration_s >= 1):
        raise ConfigError("duration_s", duration_s, "a number of seconds >= 1")
    clients = list(clients)
    for n in clients:
        if not isinstance(n, (int, np.integer)) or not 1 <= n <= MAX_CLIENTS:
            raise ConfigError("clients", n, f"an integer in [1, {MAX_CLIENTS}]")
    check_bench(params, max(clients, default=1), duration_s, *(memory_limit or ()))
    window_s = duration_s - warmup_s(duration_s)
    results = []
    if progress:
        progress(None)
    for n in clients:
        ok = failed = 0
        goodputs, latencies = [], []
        for seed in seeds:
            rng = np.random.default_rng([seed, _BENCH_STREAM])
            lat, succeeded = _closed_loop(params, int(n), duration_s * 1000.0, warmup_s(duration_s) * 1000.0, rng)
            s = int(succeeded.sum())
            ok += s
            failed += len(succeeded) - s
            goodputs.append(s / window_s)
            latencies.append(lat[succeeded])
        pooled = np.concatenate(latencies)
        stats = (float(pooled.mean()), *(float(np.percentile(pooled, q)) for q in (50, 95, 99))) if len(pooled) \
            else (math.nan,) * 4
        results.append(BenchResult(
            provider=profile.name, operation=operation, clients=int(n), goodput_ops=float(np.mean(goodputs)),
            failure_rate=failed / (ok + failed) if ok + failed else math.nan,
            latency_mean_ms=stats[0], latency_p50_ms=stats[1], latency_p95_ms=stats[2], latency_p99_ms=stats[3],
            seeds=tuple(int(s) for s in seeds), successes=ok, failures=failed, duration_s=float(duration_s)))
        if progress:
            progress(results[-1])
    return results


# One recorded op: its latency (float64) and outcome (bool), in arrays that grow by doubling and are
# copied once at the end: at most 3 x 9 bytes live per op; doubled, as simcore.bounds' figures.
BYTES_PER_OP = 54


def check_bench(params: np.ndarray, clients: int, duration_s: float,
                limit_bytes: Optional[int] = None, limit_source: str = "the limit") -> float:
    """Refuse a benchmark run whose recorded ops would not fit in memory; returns the ops estimated.

    A client completes one op per read plus write, so one run records about
    clients x duration / (read median + write median) ops; the estimate
    doubles that, as a lognormal's mean is above its median only by a factor
    the contention term can undo.
    """
    if limit_bytes is None:
        limit_bytes, limit_source = bounds.memory_limit()
    op_ms = math.exp(params[0]) + math.exp(params[4])
    ops = 2.0 * clients * duration_s * 1000.0 / op_ms if op_ms > 0 else math.inf
    need = bounds.PROCESS_BYTES + BYTES_PER_OP * ops
    if not need <= limit_bytes:
        raise bounds.WorkBoundError("duration_s", duration_s, (
            f"needs about {bounds.format_bytes(need)} of memory for one run ({ops:.3g} ops of {clients} "
            f"client(s), {op_ms:.3g} ms each), above the limit of {bounds.format_bytes(limit_bytes)} "
            f"({limit_source}); use a shorter duration_s or fewer clients, or raise the limit with "
            f"${bounds.MEMORY_LIMIT_ENV}"))
    return ops


@numba.njit(cache=True)
def _closed_loop(p, clients, duration_ms, warmup_ms, generator):
    rng = generator.bit_generator  # what the engine's draw helpers take (see simcore.engine)
    read_mu, read_sigma, read_floor, observed_at = p[0], p[1], p[2], p[3]
    write_mu, write_sigma, write_floor = p[4], p[5], p[6]
    failed_multiplier, exponent, sigma_per_ln, decided_at = p[7], p[8], p[9], p[10]
    # Contention delays the write, or (Azure CAS) the read before it observes the object.
    read_exponent = exponent if p[11] > 0.0 else 0.0
    read_sigma_per_ln = sigma_per_ln if p[11] > 0.0 else 0.0
    if p[11] > 0.0:
        exponent = 0.0
        sigma_per_ln = 0.0
    # The object's write throttle (GCS), and the client library's resends of refused writes.
    throttle_per_ms, burst = p[12], p[13]
    refused_max, refused_base, refused_multiplier, refused_cap, refused_jitter = p[14], p[15], p[16], p[17], p[18]
    commits_take_tokens = throttle_per_ms > 0.0 and p[19] > 0.0  # a stale write is refused before the bucket
    bucket = np.array([burst, 0.0])
    # The object's commit hold: busy until free_at after a successful write's decision (0 ms: no hold).
    hold_ms = p[20]
    free_at = -1.0
    # A failure's extra answer time, (failed x - 1) x a latency: the write's own, or one drawn without the
    # contention terms (a slow answer that does not grow with the requests in flight).
    failed_uncontended = p[21] > 0.0 and failed_multiplier > 1.0

    version = 0
    inflight = 0
    snapshot = np.zeros(clients, dtype=np.int64)
    started = np.zeros(clients, dtype=np.float64)  # when the client's current op began
    write_ms = np.zeros(clients, dtype=np.float64)
    refusals = np.zeros(clients, dtype=np.int64)  # resends of the client's pending write
    count = 0
    latencies = np.empty(1024, dtype=np.float64)
    succeeded = np.empty(1024, dtype=np.bool_)

    # A binary heap of (time, 8 x client + kind); at most two pending events per client.
    heap = np.empty((2 * clients + 1, 2), dtype=np.float64)
    size = 0
    for i in range(clients):
        size = _start_op(heap, size, i, 0.0, started, rng, read_mu, read_sigma, read_floor, observed_at,
                         inflight, read_exponent, read_sigma_per_ln)

    while size > 0:
        t = heap[0, 0]
        code = np.int64(heap[0, 1])
        if t >= duration_ms:
            break
        size = _pop(heap, size)
        i = code >> 3
        kind = code & 7
        if kind == _OBSERVED:
            snapshot[i] = version
            continue
        if kind == _READ_DONE or kind == _RESEND:
            if kind == _READ_DONE and observed_at >= 1.0:
                snapshot[i] = version
            # The write reaches the object; a throttled object admits it only with a token.
            admitted = throttle_per_ms <= 0.0 or commits_take_tokens or take_token(bucket, t, throttle_per_ms, burst)
            inflight += 1
            write_ms[i] = draw_contended(rng, write_mu, write_sigma, write_floor, inflight, exponent, sigma_per_ln)
            size = _push(heap, size, t + decided_at * write_ms[i], 8 * i + (_DECIDED if admitted else _REFUSED))
            continue
        if kind == _DECIDED and t < free_at and snapshot[i] == version:
            # It would succeed, but the object is still committing the previous success: it waits, still in
            # flight, and is decided again when the object is free (by then it may fail).
            size = _push(heap, size, free_at, code)
            continue
        if commits_take_tokens and kind == _DECIDED and snapshot[i] == version:
            if not take_token(bucket, t, throttle_per_ms, burst):  # it would commit: it needs a token
                kind = _REFUSED
        inflight -= 1
        t_next = t
        if kind == _REFUSED and refusals[i] < refused_max:
            # The client library waits, then resends the same conditional write.
            refusals[i] += 1
            t_next += (1.0 - decided_at) * write_ms[i] + backoff_wait_ms(
                rng, refusals[i], refused_base, refused_multiplier, refused_cap, refused_jitter, JITTER_DOWN)
            size = _push(heap, size, t_next, 8 * i + _RESEND)
            continue
        refusals[i] = 0
        # The write is decided (or refused for good) now.
        ok = kind == _DECIDED and snapshot[i] == version
        if ok:
            version += 1
            free_at = t + hold_ms
            t_next += (1.0 - decided_at) * write_ms[i]  # the answer's way back
        elif failed_uncontended:  # a failure's slow answer, whatever the contention
            t_next += (1.0 - decided_at) * write_ms[i] + (failed_multiplier - 1.0) * draw_contended(
                rng, write_mu, write_sigma, write_floor, 1, 0.0, 0.0)
        else:  # a failure may be answered later still
            t_next += (failed_multiplier - decided_at) * write_ms[i]
        if warmup_ms <= t_next < duration_ms:
            if count == latencies.shape[0]:
                grown_l = np.empty(2 * count, dtype=np.float64)
                grown_l[:count] = latencies
                latencies = grown_l
                grown_s = np.empty(2 * count, dtype=np.bool_)
                grown_s[:count] = succeeded
                succeeded = grown_s
            latencies[count] = t_next - started[i]
            succeeded[count] = ok
            count += 1
        size = _start_op(heap, size, i, t_next, started, rng, read_mu, read_sigma, read_floor,
                         observed_at, inflight, read_exponent, read_sigma_per_ln)
    return latencies[:count].copy(), succeeded[:count].copy()


@numba.njit(cache=True, inline="always")
def _start_op(heap, size, i, t, started, rng, read_mu, read_sigma, read_floor, observed_at, inflight,
              read_exponent, read_sigma_per_ln):
    started[i] = t
    read = draw_contended(rng, read_mu, read_sigma, read_floor, inflight + 1, read_exponent, read_sigma_per_ln)
    if observed_at < 1.0:
        size = _push(heap, size, t + observed_at * read, 8 * i + _OBSERVED)
    return _push(heap, size, t + read, 8 * i + _READ_DONE)


def parse_clients(text: str) -> list[int]:
    """``1-16``, ``4`` or ``1,2,4,8``: the client counts to run."""
    allowed = f"a count, a range like 1-16 or a comma list like 1,2,4 (each in [1, {MAX_CLIENTS}])"
    counts: list[int] = []
    try:
        for part in str(text).split(","):
            part = part.strip()
            if "-" in part:
                lo, hi = (int(x) for x in part.split("-", 1))
                if lo > hi:
                    raise ValueError
                counts.extend(range(lo, hi + 1))
            else:
                counts.append(int(part))
    except ValueError:
        raise ConfigError("clients", text, allowed) from None
    if not counts or any(not 1 <= c <= MAX_CLIENTS for c in counts) or len(set(counts)) != len(counts):
        raise ConfigError("clients", text, allowed)
    return counts
