"""Which requests one delta-rs call sends, in which rounds, and how long each round takes, while others race it.

    eval "$(scripts/store-lab.sh env)"
    python -m studies.real_clients.request_trace --writers 8 --interval-s 2 --duration-s 40 [--out FILE]

Writer 0 of ``--writers`` (each appending a one-row batch every ``--interval-s`` to one new, checkpointed table
on the lab's S3, as ``real_clients.py`` runs them) sends its requests through a logging TCP proxy on
127.0.0.1 in this process; the others go to the lab directly. For each of writer 0's calls it prints its
retries (the table's history), the entries its load read at once (K: the entries since the last checkpoint),
the load's rounds and the time of its rounds of entries, and the rounds from the data file to the end. A round
is the requests sent while an earlier one of it is still in flight (``rounds``). The proxy sees HTTP/1.1
request and status lines only (no TLS: the lab's S3 is plain HTTP), so it adds a copy of each byte and no delay
worth counting. The per-call summaries go to ``--out`` as JSON (default
``studies/real_clients/results/trace-<date>.json``).
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Optional
from urllib.parse import urlparse

from simcore.errors import ConfigError
from studies.real_clients.measure import tagged_retries
from studies.real_clients.real_clients import _delta_table, lab_bucket_uri, open_lab_store, storage_options
from studies.real_clients.writer_processes import run_writers
from studies.results import add_out_flags, command_line, out_path, write_json

REQUEST_LINE = re.compile(rb"(GET|PUT|HEAD|POST|DELETE) (\S+) HTTP/1\.1\r\n")
STATUS_LINE = re.compile(rb"HTTP/1\.1 (\d{3}) ")


@dataclass
class Request:
    """One request writer 0 sent: when (epoch seconds), on which connection, and its answer's status and time."""
    sent: float
    connection: int
    method: str
    path: str
    answered: Optional[float] = None
    status: str = ""


def pair_answers(events: list[tuple[float, int, str, str]]) -> list[Request]:
    """Requests from the proxy's events (time, connection, "request" | "status", text), each given the first
    unanswered status on its connection (HTTP/1.1 answers in order).

    >>> r = pair_answers([(0.0, 1, "request", "GET /a"), (0.0, 2, "request", "PUT /b"), (0.04, 2, "status", "412"),
    ...                   (0.05, 1, "status", "200")])
    >>> [(x.path, x.status, x.answered) for x in r]
    [('/a', '200', 0.05), ('/b', '412', 0.04)]
    """
    requests: list[Request] = []
    waiting: dict[int, list[Request]] = {}
    for when, connection, what, text in sorted(events, key=lambda e: e[0]):
        if what == "request":
            method, path = text.split(" ", 1)
            requests.append(Request(when, connection, method, path))
            waiting.setdefault(connection, []).append(requests[-1])
        elif waiting.get(connection):
            answered = waiting[connection].pop(0)
            answered.answered, answered.status = when, text
    return requests


def rounds(requests: list[Request]) -> list[list[Request]]:
    """Requests in rounds: a request sent while one of the current round is unanswered joins it.

    >>> rs = [Request(0.0, 1, "GET", "/x", 0.04), Request(0.05, 1, "GET", "/a", 0.09),
    ...       Request(0.051, 2, "GET", "/b", 0.1), Request(0.11, 1, "PUT", "/c", 0.15)]
    >>> [len(r) for r in rounds(rs)]
    [1, 2, 1]
    """
    grouped: list[list[Request]] = []
    busy_until = float("-inf")
    for request in sorted(requests, key=lambda r: r.sent):
        if request.sent >= busy_until:
            grouped.append([])
        grouped[-1].append(request)
        busy_until = max(busy_until, request.answered if request.answered is not None else request.sent)
    return grouped


def kind(request: Request) -> str:
    """What a delta-rs request is for: a listing, _last_checkpoint, the checkpoint, a log entry, or data."""
    path = request.path
    if "list-type=" in path:
        return "list"
    if "_last_checkpoint" in path:
        return "last_checkpoint"
    if "_delta_log/" in path:
        return "checkpoint" if ".checkpoint." in path else "entry"
    return "data"


def call_summary(requests: list[Request], start: float, end: float) -> dict:
    """One call's rounds: the load's (before the data file), its rounds of entries (ms) and K, the rest."""
    mine = [r for r in requests if start - 0.001 <= r.sent <= end]
    grouped = rounds(mine)
    data = next((i for i, g in enumerate(grouped) if any(kind(r) == "data" and r.method == "PUT" for r in g)),
                len(grouped))
    entry_rounds = [g for g in grouped[:data] if all(kind(r) == "entry" for r in g)]
    return {"requests": len(mine), "rounds": len(grouped), "load_rounds": data,
            "load_ms": 1000 * ((grouped[data][0].sent if data < len(grouped) else end) - start),
            "entries_read_at_once": max((len(g) for g in entry_rounds), default=0),
            "entry_round_ms": [1000 * (max(r.answered or r.sent for r in g) - g[0].sent) for g in entry_rounds],
            "rounds_from_data_file": len(grouped) - data}


class LoggingProxy:
    """A TCP proxy on 127.0.0.1 that records request and status lines (``events``), in a thread of its own.

    It matches the lines in each chunk it forwards (64 KiB at most): a line split across two chunks is missed,
    which delta-rs's small requests, each written at once, do not do; ``pair_answers`` leaves such a request's
    answer to the next one on the connection, so a trace with a miss shows it as a request never answered.
    """

    def __init__(self, upstream_host: str, upstream_port: int):
        self.events: list[tuple[float, int, str, str]] = []
        self._upstream = (upstream_host, upstream_port)
        self._connections = 0
        self._ready = threading.Event()
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self.port = 0
        threading.Thread(target=lambda: asyncio.run(self._serve()), daemon=True).start()
        if not self._ready.wait(10):
            raise RuntimeError("the logging proxy did not start")

    async def _serve(self) -> None:
        self._loop = asyncio.get_running_loop()
        server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await server.serve_forever()

    async def _handle(self, client_reader, client_writer) -> None:
        self._connections += 1
        connection = self._connections
        upstream_reader, upstream_writer = await asyncio.open_connection(*self._upstream)
        await asyncio.gather(self._pipe(client_reader, upstream_writer, connection, REQUEST_LINE, "request"),
                             self._pipe(upstream_reader, client_writer, connection, STATUS_LINE, "status"))

    async def _pipe(self, reader, writer, connection: int, line: re.Pattern, what: str) -> None:
        try:
            while data := await reader.read(65536):
                for match in line.finditer(data):
                    text = b" ".join(match.groups()).decode() if what == "request" else match.group(1).decode()
                    self.events.append((time.time(), connection, what, text))
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()


def trace(writers: int, interval_s: float, duration_s: float, seed: int = 0) -> list[dict]:
    """Run the writers with writer 0 traced; one summary per call of writer 0, in order."""
    options = storage_options()
    endpoint = urlparse(options["AWS_ENDPOINT_URL"])
    proxy = LoggingProxy(endpoint.hostname, endpoint.port)
    traced = dict(options, AWS_ENDPOINT_URL=f"http://127.0.0.1:{proxy.port}")
    uri = f"{lab_bucket_uri()}/request-trace-{uuid.uuid4().hex[:8]}"
    _delta_table(uri, options)
    attempts, _, _, t0 = run_writers("delta-rs", [{"uri": uri, "options": traced if w == 0 else options}
                                                  for w in range(writers)], writers, interval_s, duration_s, seed)
    from deltalake import DeltaTable
    retries = tagged_retries(DeltaTable(uri, storage_options=options).history())
    requests = pair_answers(list(proxy.events))
    return [{"seq": a.seq, "retries": retries.get((0, a.seq)), "raised": a.raised,
             "call_ms": 1000 * (a.end_s - a.start_s), **call_summary(requests, t0 + a.start_s, t0 + a.end_s)}
            for a in sorted((a for a in attempts if a.writer == 0), key=lambda a: a.seq)]


def main(argv=None) -> int:
    prog = "python -m studies.real_clients.request_trace"
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--writers", type=int, default=8, help="writers, one of them traced (default 8)")
    parser.add_argument("--interval-s", type=float, default=2.0, help="each writer's commit interval (default 2)")
    parser.add_argument("--duration-s", type=float, default=40.0, help="seconds the writers run (default 40)")
    add_out_flags(parser, "the per-call summaries, as JSON")
    args = parser.parse_args(argv)
    for name, value, ok, allowed in (("writers", args.writers, args.writers >= 1, "a whole number of writers >= 1"),
                                     ("interval_s", args.interval_s, args.interval_s > 0, "seconds > 0"),
                                     ("duration_s", args.duration_s, args.duration_s > 0, "seconds > 0")):
        if not ok:
            print(f"error: {name}: '{value}' is not allowed; expected {allowed}", file=sys.stderr)
            return 2
    try:
        open_lab_store()  # before any table or writer: a lab that is not up stops here, in one line
    except ConfigError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    out = out_path(args, "real_clients", "trace", "json")
    calls = trace(args.writers, args.interval_s, args.duration_s)
    print("seq  retries  call ms  requests  rounds  load rounds  load ms  K  entry rounds ms  rounds from data file")
    for c in calls:
        print(f"{c['seq']:3}  {c['retries'] if c['retries'] is not None else '-':>7}  {c['call_ms']:7.0f}  "
              f"{c['requests']:8}  {c['rounds']:6}  {c['load_rounds']:11}  {c['load_ms']:7.0f}  "
              f"{c['entries_read_at_once']:2}  {' '.join(f'{x:.0f}' for x in c['entry_round_ms']):>15}  "
              f"{c['rounds_from_data_file']:21}")
    write_json(out, {"writers": args.writers, "interval_s": args.interval_s, "duration_s": args.duration_s,
                     "calls": calls}, command_line(prog, argv))
    print(f"wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
