"""Predicted vs measured with a real table-format client: delta-rs writers on the lab's S3.

    scripts/store-lab.sh up --delay-ms 10
    eval "$(scripts/store-lab.sh env)"
    commit-sweeps probe --store-uri "$STORE_LAB_S3_URI" --endpoint-url "$STORE_LAB_S3_ENDPOINT" \\
        --clients 1-4 --duration-s 20 --max-client-lag 1 --out samples.csv
    commit-sweeps fit --samples samples.csv --base s3 --name lab-s3 --out lab-s3.toml
    python -m benchmarks.real_clients --lab-profile lab-s3.toml [--writers 2,4,8,16] [--intervals-s 1] \\
        [--duration-s 30] [--seeds 3] [--work-dir real-clients]

(``pip install 'commit-sweeps[realclients]'`` installs deltalake.) For each
interval S and each writer count N it starts N writer processes (the spawn
method: forked children of a process that used deltalake hang), each
appending a one-row batch to one new Delta table on the lab's MinIO every S
seconds (``write_deltalake(uri, batch, mode="append")``, the table loaded by
URI on each call, as a stateless writer does) for ``--duration-s``, each
commit tagged with its writer and sequence number in the commit's
``commitInfo``. Afterwards it reads the table's history: a commit that
raised counts as failed, and each committed one's ``operationMetrics.num_retries``
(delta-rs counts its lost conditional PUTs there) gives the retries per
commit. Beside it, the model: ``commit-sweeps capacity --client delta-rs
--writers-at-interval-s S`` and ``commit-sweeps simulate --client delta-rs
--writers N --commit-interval-s S`` on the fitted profile, one table,
FastAppend only, storage catalog (docs/clients.md, "delta-rs on the model").

The writers share this machine's cores with MinIO and the proxy: each
point reports the writers' own CPU (share of all cores) and how late they
started their commits (lag p99); where the writers use more than half the
cores, the point is marked ``cpu-bound``: its latencies measure this
machine, not the store.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simcore.flags import add_seeds_flag

ROOT = Path(__file__).resolve().parents[1]
WRITER_KEY, SEQ_KEY = "commit_sweeps_writer", "commit_sweeps_seq"  # the tags each commit carries
SUCCESS_TARGET = 0.95  # simcore.usable's rule: usable above 95% success
CPU_BOUND_SHARE = 0.5  # above this share of the cores the writers' own CPU distorts what they measure
TARGET_SHARE = 0.20  # the targets: largest N and retries per commit within 20%


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
    lag = np.array([a.start_s - a.due_s for a in attempts])
    return Measured(
        writers=writers, interval_s=interval_s, attempts=len(attempts), committed=len(ok),
        success_rate=len(ok) / len(attempts) if attempts else float("nan"),
        retries_per_commit=float(np.mean([retries[(a.writer, a.seq)] for a in ok])) if ok else float("nan"),
        commits_per_s=len(ok) / duration_s,
        latency_p50_ms=float(np.percentile(latency, 50)) if ok else float("nan"),
        latency_p99_ms=float(np.percentile(latency, 99)) if ok else float("nan"),
        lag_p99_s=float(np.percentile(lag, 99)) if attempts else float("nan"),
        raised=raised,
        raised_but_committed=sum(1 for a in attempts if a.raised and (a.writer, a.seq) in retries))


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


def storage_options() -> dict:
    """delta-rs's object_store options for the lab's S3, from the lab's environment (never printed)."""
    endpoint = os.environ.get("STORE_LAB_S3_ENDPOINT")
    if not endpoint:
        raise SystemExit('real_clients: error: STORE_LAB_S3_ENDPOINT is not set; run eval "$(scripts/store-lab.sh env)"')
    return {"AWS_ENDPOINT_URL": endpoint, "AWS_ALLOW_HTTP": "true", "AWS_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": os.environ["AWS_ACCESS_KEY_ID"],
            "AWS_SECRET_ACCESS_KEY": os.environ["AWS_SECRET_ACCESS_KEY"]}


def _writer(writer: int, uri: str, options: dict, interval_s: float, duration_s: float, phase_s: float,
            ready, go, start_at, out) -> None:
    """One writer process: append a one-row batch every interval from its phase; report attempts and CPU."""
    import pyarrow as pa
    from deltalake import CommitProperties, write_deltalake

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
        try:
            write_deltalake(uri, pa.table({"writer": [writer], "seq": [seq]}), mode="append",
                            storage_options=options,
                            commit_properties=CommitProperties(custom_metadata={WRITER_KEY: str(writer),
                                                                                SEQ_KEY: str(seq)}))
        except Exception as error:  # a commit that raises counts as failed, whatever the reason
            raised = type(error).__name__
        attempts.append(Attempt(writer, seq, due, start, time.time() - t0, raised))
        seq += 1
    cpu1 = os.times()
    out.put((writer, attempts, (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)))


def run_writers(writers: int, interval_s: float, duration_s: float, uri: str, options: dict,
                seed: int = 0) -> tuple[list[Attempt], float, float]:
    """Run N writers on a new table; (attempts, the writers' CPU seconds, the load average after)."""
    from deltalake import write_deltalake
    import pyarrow as pa

    write_deltalake(uri, pa.table({"writer": [-1], "seq": [-1]}), storage_options=options)  # version 0
    ctx = multiprocessing.get_context("spawn")  # forked children of a process that used deltalake hang
    ready, out, go, start_at = ctx.Queue(), ctx.Queue(), ctx.Event(), ctx.Value("d", 0.0)
    phases = np.random.default_rng(seed).uniform(0.0, interval_s, writers)  # as the model: a random phase in [0, S)
    procs = [ctx.Process(target=_writer, args=(w, uri, options, interval_s, duration_s, float(phases[w]),
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
    return attempts, cpu_s, os.getloadavg()[0]


def _commit_sweeps(args: list[str], log) -> str:
    command = [sys.executable, "-m", "commit_sweeps", *args]
    print("$ commit-sweeps " + " ".join(args), file=log, flush=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + (os.pathsep + os.environ["PYTHONPATH"]
                                                   if os.environ.get("PYTHONPATH") else ""))
    answer = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    log.write(answer.stderr)
    if answer.returncode != 0:
        tail = answer.stderr.strip().splitlines()[-1] if answer.stderr.strip() else ""
        raise SystemExit(f"real_clients: commit-sweeps {args[0]} exited {answer.returncode}: {tail}")
    return answer.stdout


def _model_flags(provider_file: str, name: str) -> list[str]:
    # A Delta table is one log: one table, FastAppend only (blind appends never conflict on data),
    # the log's next version as the catalog object (docs/clients.md, "delta-rs on the model").
    return ["--provider-file", provider_file, "--provider", name, "--catalog", "storage", "--num-tables", "1",
            "--fast-append-ratio", "1", "--client", "delta-rs"]


def _profile_name(provider_file: str) -> str:
    import tomllib
    with open(provider_file, "rb") as f:
        data = tomllib.load(f)
    return data.get("name") or next(iter(data))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lab-profile", required=True, help="the lab S3's profile (probe, then fit --samples)")
    parser.add_argument("--writers", default="2,4,8,16", help="writer counts (default 2,4,8,16)")
    parser.add_argument("--intervals-s", default="1", help="commit intervals in seconds (default 1)")
    parser.add_argument("--duration-s", type=float, default=30.0, help="seconds each point runs (default 30)")
    add_seeds_flag(parser, default=3)  # the model's seeds
    parser.add_argument("--sim-duration-s", type=float, default=3600.0, help="simulated seconds (default 3600)")
    parser.add_argument("--max-writers", type=int, default=200,
                        help="capacity's upper bound on writers (default 200; a store near this lab's takes tens)")
    parser.add_argument("--work-dir", default="real-clients", help="where the log and the JSON lines go")
    args = parser.parse_args(argv)
    try:
        writer_counts = sorted({int(n) for n in args.writers.split(",")})
        intervals = [float(s) for s in args.intervals_s.split(",")]
        if min(writer_counts) < 1 or min(intervals) <= 0:
            raise ValueError
    except ValueError:
        print(f"error: writers/intervals_s: '{args.writers}'/'{args.intervals_s}' is not allowed; expected "
              "comma-separated positive numbers", file=sys.stderr)
        return 2
    if not Path(args.lab_profile).is_file():
        print(f"error: lab_profile: '{args.lab_profile}' is not allowed; expected a profile file", file=sys.stderr)
        return 2
    options = storage_options()
    bucket_uri = os.environ.get("STORE_LAB_S3_URI", "s3://lab/probes").rsplit("/", 1)[0]
    run_id = uuid.uuid4().hex[:8]
    work = Path(args.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    name = _profile_name(args.lab_profile)
    seeds = ",".join(str(s) for s in args.seeds)
    cores = os.cpu_count() or 1
    rows = []
    with open(work / "log.txt", "a") as log, open(work / "points.jsonl", "a") as points:
        print(f"# {time.strftime('%Y-%m-%d %H:%M:%S %Z')} python -m benchmarks.real_clients "
              f"{' '.join(argv if argv is not None else sys.argv[1:])}", file=log, flush=True)
        for interval in intervals:
            capacity = json.loads(_commit_sweeps(
                ["capacity", *_model_flags(args.lab_profile, name), "--writers-at-interval-s", f"{interval:g}",
                 "--max-writers", str(args.max_writers), "--seeds", seeds, "--json"], log))
            measured = {}
            for n in writer_counts:
                from deltalake import DeltaTable
                uri = f"{bucket_uri}/real-clients-{run_id}/n{n}-s{interval:g}"
                print(f"real_clients: {n} writers every {interval:g} s for {args.duration_s:g} s on {uri}",
                      file=sys.stderr, flush=True)
                attempts, cpu_s, load = run_writers(n, interval, args.duration_s, uri, options)
                m = measure(attempts, tagged_retries(DeltaTable(uri, storage_options=options).history()),
                            n, interval, args.duration_s)
                cpu_share = cpu_s / (args.duration_s * cores)
                simulated = [json.loads(line) for line in _commit_sweeps(
                    ["simulate", *_model_flags(args.lab_profile, name), "--writers", str(n),
                     "--commit-interval-s", f"{interval:g}", "--duration-s", f"{args.sim_duration_s:g}",
                     "--seeds", seeds, "--json"], log).splitlines() if line.strip()]
                predicted = {key: float(np.mean([s[key] for s in simulated]))
                             for key in ("writer_success_rate", "retries_mean", "writer_commit_latency_p50_ms",
                                         "writer_commit_latency_p99_ms")}
                measured[n] = m.success_rate
                point = {"measured": m.__dict__, "client_cpu_share": cpu_share, "load_average": load,
                         "predicted": predicted, "uri": uri}
                points.write(json.dumps(point) + "\n")
                points.flush()
                print(f"real_clients:   success {m.success_rate:.1%} (model {predicted['writer_success_rate']:.1%}), "
                      f"retries/commit {m.retries_per_commit:.2f} (model {predicted['retries_mean']:.2f}), "
                      f"writers' CPU {cpu_share:.0%} of {cores} cores", file=sys.stderr, flush=True)
                rows.append((m, predicted, cpu_share))
            best, first_failing = largest_passing(measured)
            rows.append(("largest", interval, best, first_failing, capacity))
    print(_table(rows))
    return 0


def _table(rows) -> str:
    head = ("S s", "N", "success meas", "success pred", "retries/commit meas", "retries/commit pred",
            "commits/s meas", "call p50 ms", "call p99 ms", "model commit p50 ms", "model commit p99 ms",
            "lag p99 s", "writers' CPU", "note")
    cells = [list(head)]
    for row in rows:
        if row[0] == "largest":
            _, interval, best, failing, capacity = row
            pred = capacity.get("max_writers")
            line = (f"S = {interval:g} s: largest N above 95% measured {best} (first below: {failing}); "
                    f"predicted {pred} (capacity, bracket {capacity.get('bracket')})")
            if best and pred:
                line += f"; diff {pred / best - 1:+.0%}"
            cells.append([line])
            continue
        m, p, cpu = row
        retry_diff = (p["retries_mean"] / m.retries_per_commit - 1) if m.retries_per_commit > 0.5 else None
        note = "cpu-bound" if cpu > CPU_BOUND_SHARE else ""
        if retry_diff is not None:
            note += (" " if note else "") + f"retries {retry_diff:+.0%}"
        cells.append([f"{m.interval_s:g}", str(m.writers), f"{m.success_rate:.1%}",
                      f"{p['writer_success_rate']:.1%}", f"{m.retries_per_commit:.2f}", f"{p['retries_mean']:.2f}",
                      f"{m.commits_per_s:.2f}", f"{m.latency_p50_ms:.0f}", f"{m.latency_p99_ms:.0f}",
                      f"{p['writer_commit_latency_p50_ms']:.0f}", f"{p['writer_commit_latency_p99_ms']:.0f}",
                      f"{m.lag_p99_s:.2f}", f"{cpu:.0%}", note])
    widths = [max(len(line[i]) for line in cells if len(line) == len(head)) for i in range(len(head))]
    return "\n".join("  ".join(c.rjust(w) for c, w in zip(line, widths)) if len(line) == len(head) else line[0]
                     for line in cells)


if __name__ == "__main__":
    sys.exit(main())
