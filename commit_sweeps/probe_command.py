"""``commit-sweeps probe``: seed 000's conditional-write benchmark against a real store, measured (``store_probe``).

    commit-sweeps probe --store-uri s3://bucket/prefix [--endpoint-url URL] --operation cas \\
                        --clients 1-4 --duration-s 60 --out samples.csv [--json]

For each client count, N clients loop on one object: read it (its ETag or
generation; appending, its length), then write it conditionally on what they
read, no retry. Printed per count: goodput, failure rate and latency
percentiles, ``bench``'s columns (``--json``: ``bench --json``'s keys, then
the failed ops' latency and the client side's own cost). ``--out`` gets one
row per op in the format ``fit --samples`` reads, rewritten whole after each
client count, so an interrupted probe keeps every count it finished. Before
the counts one client times ``--write-rounds`` plain writes of a small object
(``write`` rows in the file: the profile's plain write, which a commit's data
and metadata files take), and ``--read-rounds`` rounds of 1, 8, 32 and 64
reads of the probe's object sent at once, each from a fresh object_store
client (``round`` rows: the profile's ``round_ms_per_read``, what delta-rs's
rounds of log entries take; ``rounds``).

Before measuring, the store must prove its conditional writes atomic
(``store_probe.atomicity``); the probe's object (``<prefix>/commit-sweeps-probe-<random>``,
and ``...-put`` for the plain writes) is deleted at the end, also on ^C, SIGTERM or SIGHUP; the client
processes end when the command does, however it ends. Exit status: 0 measured, 1 the client side distorted a
count (its figures are not printed) or ``--out`` could not be written after a count, 2 bad input or a store
refused (one line, nothing measured), 130 interrupted.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import time
from typing import Callable, Optional
from urllib.parse import urlsplit

from simcore.errors import ConfigError
from simcore.redaction import redact
from commit_sweeps.flags import (EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, Interrupted, add_duration_flag, bad_input,
                                 check_output_path, ignore_stop_signals, number, output_path, positive_int,
                                 stop_signals_interrupt)

PROBE_HELP = ("measure seed 000's conditional-write benchmark on a real store (s3://, az://, gs://): N clients "
              "reading then conditionally writing one object, no retry")
MAX_PROBE_CLIENTS = 256
# The client side distorts a count when a client ready to send waits for its CPU this long, as a share of the
# median successful op: above WARN_LAG the count is printed with a warning, above MAX_LAG it is refused.
WARN_LAG, MAX_LAG = 0.10, 0.25
MIN_RACE_WRITERS = 2  # one writer has no one to race: it always wins, atomic store or not
MAX_RACE_ROUNDS, MAX_RACE_WRITERS, MAX_PROCESSES, MAX_WRITE_ROUNDS, MAX_READ_ROUNDS = 10_000, 64, 256, 100_000, 10_000
WRITE_WARM_UP = 3  # plain writes sent before the timed ones: the first opens the connection
WARN_CPU = 0.8  # the clients used this share of the machine's cores: latencies may include CPU queueing


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store-uri", required=True, metavar="URI",
                        help="s3://bucket/prefix, az://container/prefix or gs://bucket/prefix: where the probe's "
                             "one object goes (deleted at the end)")
    parser.add_argument("--endpoint-url", default=None, metavar="URL",
                        help="the store's endpoint, http(s)://host[:port][/account] (MinIO, Azurite, an emulator); "
                             "default: the SDK's")
    parser.add_argument("--operation", default="cas", choices=("cas", "append"),
                        help="cas (read, then overwrite if unchanged) or append (read the length, then append at "
                             "it: Azure append blobs, S3 Express); default cas")
    parser.add_argument("--clients", required=True, help="client counts: 1-16, 4 or 1,2,4,8 (as bench takes them; "
                                                         f"each in [1, {MAX_PROBE_CLIENTS}])")
    add_duration_flag(parser, default_s=60.0, warm_up=False,
                      what="seconds measured per client count, the first min(5, S/10) a warm-up as in bench")
    parser.add_argument("--out", type=output_path, default=None, metavar="CSV",
                        help="write every measured op here, the format fit --samples reads")
    parser.add_argument("--json", action="store_true", help="one JSON object per client count per line "
                                                            "(bench --json's keys, then the probe's own)")
    parser.add_argument("--race-rounds", type=positive_int, default=20, metavar="N",
                        help="rounds of the single-winner check before measuring (default 20)")
    parser.add_argument("--race-writers", type=positive_int, default=8, metavar="N",
                        help=f"concurrent writers per round of that check (default 8, at least "
                             f"{MIN_RACE_WRITERS})")
    parser.add_argument("--write-rounds", type=int, default=60, metavar="N",
                        help="plain writes of a small object one client times before the counts (the profile's "
                             "plain write; default 60, 0: none)")
    parser.add_argument("--read-rounds", type=int, default=20, metavar="N",
                        help="rounds of 1, 8, 32 and 64 reads sent at once, N of each size, timed before the "
                             "counts (the profile's round_ms_per_read; default 20, 0: none)")
    parser.add_argument("--processes", type=positive_int, default=None, metavar="N",
                        help="client processes (default: 4 per core, at most one per client)")
    parser.add_argument("--max-client-lag", type=number, default=MAX_LAG, metavar="F",
                        help="refuse a client count whose clients, ready to send, waited for their CPU longer "
                             f"than this share of the median op (99th percentile; default {MAX_LAG:g}; a warning "
                             f"from {WARN_LAG:g})")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def parse_endpoint_url(text: Optional[str]) -> Optional[str]:
    """``http(s)://host[:port][/path]`` or None.

    Credentials in the URL (``user:password@``, a SAS's ``?sig=...``) are refused, never echoed: the
    endpoint is printed in every progress line and table header.

    >>> parse_endpoint_url("http://127.0.0.1:9000/")
    'http://127.0.0.1:9000'
    """
    if text is None:
        return None
    allowed = "http://host[:port] or https://host[:port], optionally with a path (Azurite's account)"
    if not text.isprintable():  # urlsplit drops a newline or a tab silently: the URL used is not the one given
        raise ConfigError("endpoint_url", text, f"{allowed}, without control characters")
    if "@" in text.partition("?")[0] or redact(text) != text:
        raise ConfigError("endpoint_url", text, f"{allowed}, without credentials: credentials in the URL are not "
                                                f"accepted; give them through the SDK's usual chain (its "
                                                f"environment variables, a profile, a role)")
    try:
        parts = urlsplit(text)
        parts.port  # raises ValueError on a bad port
    except ValueError:
        raise ConfigError("endpoint_url", text, allowed) from None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ConfigError("endpoint_url", text, allowed)
    return text.rstrip("/")


def run(args: argparse.Namespace) -> int:
    from store_probe.uri import parse_store_uri
    from simcore.bench import parse_clients

    progress: Callable[[str], None] = (lambda line: None) if args.quiet else (
        lambda line: print(line, file=sys.stderr, flush=True))
    try:
        uri = parse_store_uri(args.store_uri)
        endpoint = parse_endpoint_url(args.endpoint_url)
        counts = parse_clients(args.clients)
        if max(counts) > MAX_PROBE_CLIENTS:
            raise ConfigError("clients", args.clients, f"client counts in [1, {MAX_PROBE_CLIENTS}]")
        if not (math.isfinite(args.duration_s) and 2 <= args.duration_s <= 86400):
            raise ConfigError("duration_s", args.duration_s, "seconds in [2, 86400]")
        if not (math.isfinite(args.max_client_lag) and args.max_client_lag > 0):
            raise ConfigError("max_client_lag", args.max_client_lag, "a share > 0 of the median op")
        if not 0 <= args.write_rounds <= MAX_WRITE_ROUNDS:
            raise ConfigError("write_rounds", args.write_rounds, f"an integer in [0, {MAX_WRITE_ROUNDS}]")
        if not 0 <= args.read_rounds <= MAX_READ_ROUNDS:
            raise ConfigError("read_rounds", args.read_rounds, f"an integer in [0, {MAX_READ_ROUNDS}]")
        for field, value, least, most in (("race_rounds", args.race_rounds, 1, MAX_RACE_ROUNDS),
                                          ("race_writers", args.race_writers, MIN_RACE_WRITERS, MAX_RACE_WRITERS),
                                          ("processes", args.processes, 1, MAX_PROCESSES)):
            if value is not None and not least <= value <= most:
                raise ConfigError(field, value, f"an integer in [{least}, {most}]"
                                  + (" (one writer cannot race)" if field == "race_writers" else ""))
        if args.operation == "append" and uri.scheme == "gs":
            raise ConfigError("operation", "append", "cas (GCS has no conditional append)")
        if args.out is not None:  # before measuring, which takes minutes
            check_output_path(args.out)
    except ConfigError as error:
        return bad_input(error)
    # ^C, SIGTERM and SIGHUP (the terminal or the session went away) all unwind through the clean-up below;
    # the client processes leave them to the command, and end themselves when it is gone (store_probe.clients).
    with stop_signals_interrupt():
        return _probe(args, uri, endpoint, counts, progress)


def _probe(args, uri, endpoint, counts, progress) -> int:
    from store_probe.atomicity import prove
    from store_probe.clients import ClientPool, Target, default_processes
    from store_probe.stores import StoreError, open_store

    store = None
    name = uri.object_name()
    put_name = name + "-put"
    created = put_started = False
    pool = None
    try:
        try:
            store = open_store(uri, endpoint)
            store.check()
            racers = [store] + [open_store(uri, endpoint) for _ in range(args.race_writers - 1)]
            created = True  # from here on the object may exist: clean up whatever happens
            progress(f"probe: {store.describe()}: proving conditional writes atomic on {name}")
            prove(racers, name, args.operation, args.race_rounds, progress)
        except ConfigError as error:
            return bad_input(error)
        writes: list[float] = []
        if args.write_rounds:
            put_started = True
            writes = _time_writes(store, put_name, args.write_rounds)
            progress(f"probe: plain write: {_writes_line(writes)}")
        rounds = None
        if args.read_rounds:
            from store_probe.rounds import time_rounds

            rounds = time_rounds(uri, endpoint, name, args.read_rounds)
            progress(f"probe: rounds of reads: {_rounds_line(rounds)}")
            if rounds.cpu_share > WARN_CPU:
                print(f"warning: probe: the rounds' client used {rounds.cpu_share:.0%} of a core: their times "
                      f"may include its own CPU", file=sys.stderr)
        target = Target(uri, endpoint, name, args.operation)
        pool = ClientPool(target, args.processes or default_processes(max(counts)))
        measured: list = []
        for clients in counts:
            if args.operation == "append":  # a fresh append object per count (Azure caps an append blob's blocks)
                store.delete(name)
                if not store.create(name, b"", append=True):
                    raise StoreError("the append object could not be made anew")
            progress(f"probe: {clients} client(s): measuring for {args.duration_s:g} s")
            started = time.monotonic()
            result, ops, verdict = _one_count(pool, store, args, clients)
            if verdict is not None:
                advice = ("use fewer clients or --processes, or a bigger machine" if clients > 1 else
                          "one client is the fewest: the store answers too fast for this machine to time it, so "
                          "give it more latency (the store lab: scripts/store-lab.sh up --delay-ms 16), use "
                          "--processes, or accept more lag with --max-client-lag")
                print(f"error: clients: {clients} is not allowed; expected a client count this machine can run "
                      f"without distorting the result ({verdict}); {advice}", file=sys.stderr)
                return EXIT_FAILED
            measured.append((clients, ops, result))
            if args.out is not None:
                try:
                    _write_samples(args.out, args.operation, measured, writes, rounds)
                except OSError as error:  # the disk filled up while measuring: the counts already written stay
                    kept = f" ({args.out} keeps the {len(measured) - 1} count(s) before)" if len(measured) > 1 else ""
                    print(f"error: out: {args.out!r} cannot be written ({error.strerror}){kept}", file=sys.stderr)
                    return EXIT_FAILED
            if args.json:
                print(json.dumps({key: None if isinstance(value, float) and not math.isfinite(value) else value
                                  for key, value in result.to_json().items()}, allow_nan=False), flush=True)
            progress(_progress_line(result, time.monotonic() - started))
        if not args.json:
            print(_table(store.describe(), args, [r for _, _, r in measured]))
            if writes:
                print(f"plain write, one client: {_writes_line(writes)}")
            if rounds is not None:
                print(f"rounds of reads sent at once, one client: {_rounds_line(rounds)}")
        if args.out is not None:
            timed = len(writes) + (sum(map(len, rounds.latencies_ms.values())) if rounds else 0)
            progress(f"probe: wrote {sum(len(o) for _, o, _ in measured) + timed} samples to {args.out}")
        return EXIT_OK
    except Interrupted as signal_name:
        progress(f"probe: interrupted ({signal_name}); cleaning up")
        return EXIT_INTERRUPTED
    except StoreError as error:
        print(redact(f"error: {store.describe() if store else args.store_uri}: {error}", args.store_uri,
                     args.endpoint_url or ""), file=sys.stderr)
        return EXIT_FAILED
    finally:
        ignore_stop_signals()  # until the objects are gone
        if pool is not None:
            pool.close()
        if created and store is not None:
            _delete(store, name, progress)
        if put_started and store is not None:
            _delete(store, put_name, progress)


def _time_writes(store, name: str, rounds: int) -> list[float]:
    """ms of each of ``rounds`` plain writes of one small object (after a few untimed ones)."""
    from simcore.fit import SAMPLE_WRITE_BYTES

    data = os.urandom(SAMPLE_WRITE_BYTES)
    times = []
    for _ in range(rounds + WRITE_WARM_UP):
        start = time.perf_counter()
        store.put(name, data)
        times.append((time.perf_counter() - start) * 1000.0)
    return times[WRITE_WARM_UP:]


def _writes_line(writes: list[float]) -> str:
    import numpy as np
    from simcore.fit import SAMPLE_WRITE_BYTES

    p50, p99 = np.percentile(writes, [50, 99])
    return f"{len(writes)} x {SAMPLE_WRITE_BYTES} bytes, p50 {p50:.1f} ms, p99 {p99:.1f} ms"


def _rounds_line(rounds) -> str:
    import numpy as np
    from simcore.fit import round_ms_per_read

    medians = ", ".join(f"{size} reads p50 {np.median(ms):.1f} ms" for size, ms in rounds.latencies_ms.items())
    return (f"{medians}: {round_ms_per_read(rounds.latencies_ms):.3g} ms per read past the first "
            f"(client CPU {rounds.cpu_share:.0%} of a core)")


def _delete(store, name: str, progress) -> None:
    """Delete the probe's object and check it is gone; three tries, then say what to delete by hand."""
    why = "it still exists"
    for _ in range(3):
        try:
            store.delete(name)
            if not store.exists(name):
                progress(f"probe: deleted {name}")
                return
        except Exception as error:  # noqa: BLE001 - told to the user below, with the name to delete by hand
            why = redact(f"{type(error).__name__}: {error}")
        time.sleep(1.0)
    print(f"warning: probe: could not delete {store.uri.scheme}://{store.uri.bucket}/{name} ({why}); delete it "
          f"by hand", file=sys.stderr)


def _one_count(pool, store, args, clients: int):
    from store_probe.samples import Overhead, in_window, summarise
    from store_probe.stores import StoreError
    import numpy as np
    import psutil

    batches = pool.run(clients, args.duration_s)
    ops = in_window([op for batch in batches for op in batch.ops], args.duration_s)
    errors = [e for batch in batches for e in batch.errors]
    lags = np.array([lag for batch in batches for lag in batch.lags_ms]) if any(b.lags_ms for b in batches) else \
        np.zeros(1)
    overhead = Overhead(cpu_s=sum(b.cpu_s for b in batches), cores=psutil.cpu_count() or 1,
                        wall_s=max(b.wall_s for b in batches), lag_p99_ms=float(np.percentile(lags, 99)))
    if not any(op.succeeded for op in ops):
        raise StoreError(f"no op succeeded at {clients} clients" + (f" ({len(errors)} errors, first: {errors[0]})"
                                                                    if errors else ""))
    result = summarise(str(store.uri), args.operation, clients, ops, args.duration_s, overhead)
    lag_share = overhead.lag_p99_ms / result.bench.latency_p50_ms
    verdict = None
    if lag_share > args.max_client_lag:
        verdict = (f"a ready client waited {overhead.lag_p99_ms:.1f} ms for the CPU (p99), "
                   f"{lag_share:.0%} of the {result.bench.latency_p50_ms:.1f} ms median op")
    elif lag_share > min(WARN_LAG, args.max_client_lag) or overhead.cpu_share > WARN_CPU:
        print(f"warning: probe: at {clients} clients the client side may distort the result: CPU lag p99 "
              f"{overhead.lag_p99_ms:.1f} ms ({lag_share:.0%} of the median op), clients used "
              f"{overhead.cpu_share:.0%} of {overhead.cores} cores", file=sys.stderr)
    if errors:
        print(f"warning: probe: {len(errors)} request(s) at {clients} clients failed other than by a refused "
              f"condition, not counted (first: {redact(str(errors[0]))})", file=sys.stderr)
    return result, ops, verdict


def _progress_line(result, elapsed_s: float) -> str:
    b = result.bench
    return (f"probe: {b.clients} client(s): {b.goodput_ops:.2f} op/s, {b.failure_rate:.1%} failed, p50 "
            f"{b.latency_p50_ms:.1f} ms, p99 {b.latency_p99_ms:.1f} ms; client CPU {result.overhead.cpu_share:.0%} "
            f"of {result.overhead.cores} cores, lag p99 {result.overhead.lag_p99_ms:.1f} ms ({elapsed_s:.0f} s)")


def _table(store: str, args, results) -> str:
    from commit_sweeps.bench_command import BENCH_COLUMNS

    columns = BENCH_COLUMNS + (("failed_mean_ms", "failed mean ms", "{:.1f}"),)
    cells = [[title for _, title, _ in columns]]
    for result in results:
        row = []
        for key, _, fmt in columns:
            value = getattr(result.bench, key, None) if key != "failed_mean_ms" else result.failed_mean_ms
            row.append("-" if value is None or (isinstance(value, float) and math.isnan(value)) else fmt.format(value))
        cells.append(row)
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    head = (f"{store} {args.operation} probe, {args.duration_s:g} s per client count: closed loop, read then "
            f"conditional write, no retry")
    return head + "\n" + "\n".join("  ".join(c.rjust(w) for c, w in zip(line, widths)) for line in cells)


def _write_samples(path: str, operation: str, measured, writes, rounds) -> None:
    """Rewrite ``path`` with every count measured so far, through a temporary name: never a torn file."""
    from store_probe.samples import samples_csv

    partial = path + ".partial"
    try:
        with open(partial, "w", newline="") as handle:
            handle.write(samples_csv(operation, [(clients, ops) for clients, ops, _ in measured], writes,
                                     rounds.latencies_ms if rounds is not None else {}))
        os.replace(partial, path)
    except OSError:
        with contextlib.suppress(OSError):  # never a .partial left beside the file
            os.remove(partial)
        raise
