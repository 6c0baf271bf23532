"""The Iceberg Java writers for ``python -m studies.real_clients --real-client iceberg-java``: the harness in
``java/`` (built and cached by ``scripts/build-iceberg-writers.sh``), run as writer threads of one JVM or as one
JVM a writer, through a JdbcCatalog (SQLite or PostgreSQL) or a REST catalog (the harness's own server over
Iceberg's CatalogHandlers, on a JdbcCatalog), data and metadata on the lab's MinIO or a local directory.

Each commit is ``table.newFastAppend().appendFile(<a one-row Avro file>).commit()`` on a table loaded anew, and its
attempts are those of the CommitReport that Iceberg's MetricsReporter receives (``CommitMetricsResult.attempts``).
The JVMs print one JSON line per commit, read here into the same ``Attempt`` records as the Python writers'.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from studies.real_clients.errors import SetupError

ROOT = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = ROOT / "scripts" / "build-iceberg-writers.sh"
NAMESPACE = "commit_sweeps"
# The JVM's own CPU, which shares the cores with the store: the serial collector and the client compiler alone
# (no C2 compiler threads) cost less CPU per commit than the defaults; the heap is small, the writers' data tiny.
JVM_FLAGS = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xmx256m", "-Xss512k",
             "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dorg.slf4j.simpleLogger.logFile=System.err")
READY_TIMEOUT_S = 180.0  # JVM start, catalog, warm-up commit: seconds on a loaded two-core machine


def harness_classpath() -> str:
    """The harness's classpath, building it first if the pom or the sources changed since the cached build."""
    answer = subprocess.run(["bash", str(BUILD_SCRIPT)], capture_output=True, text=True)
    if answer.returncode != 0:
        tail = answer.stderr.strip().splitlines()[-1:] or [""]
        raise SetupError(f"iceberg-java: scripts/build-iceberg-writers.sh exited {answer.returncode}: {tail[0]}")
    built = Path(answer.stdout.strip().splitlines()[-1])
    return f"{built / 'iceberg-writers.jar'}{os.pathsep}{built / 'lib' / '*'}"


SERVER_THREADS = 16  # the REST server's request threads, as a servlet container's pool


def java_command(classpath: str, *args: str) -> list[str]:
    return ["java", *JVM_FLAGS, "-cp", classpath, "commitsweeps.Main", *args]


@dataclass(frozen=True)
class Catalog:
    """What every harness command is told of the catalog: ``--catalog``, ``--uri`` and the FileIO's flags."""
    kind: str  # "jdbc" or "rest"
    uri: str  # jdbc:sqlite:..., jdbc:postgresql://..., or http://127.0.0.1:PORT
    warehouse: str = ""  # the JdbcCatalog's (and the REST server's) table root: s3://lab/... or a local directory
    s3_endpoint: str = ""  # the lab's S3 endpoint, when the warehouse is on S3

    def flags(self) -> list[str]:
        flags = ["--catalog", self.kind, "--uri", self.uri]
        if self.warehouse:
            flags += ["--warehouse", self.warehouse]
        if self.s3_endpoint:
            flags += ["--s3-endpoint", self.s3_endpoint]
        return flags


def run_command(classpath: str, *args: str, timeout_s: float = 300.0) -> list[dict]:
    """Run one harness command to its end; its JSON lines (one line of error when it fails)."""
    answer = subprocess.run(java_command(classpath, *args), capture_output=True, text=True, timeout=timeout_s)
    if answer.returncode != 0:
        lines = [line for line in answer.stderr.strip().splitlines() if "error" in line.lower()] or \
            answer.stderr.strip().splitlines()[-1:] or [""]
        raise SetupError(f"iceberg-java: {args[0]} exited {answer.returncode}: {lines[0][:300]}")
    return [json.loads(line) for line in answer.stdout.splitlines() if line.startswith("{")]


def create_tables(classpath: str, catalog: Catalog, tables: list[str]) -> None:
    run_command(classpath, "create", *catalog.flags(), "--namespace", NAMESPACE, "--tables", ",".join(tables))


def snapshot_counts(classpath: str, catalog: Catalog, tables: list[str]) -> dict[str, int]:
    lines = run_command(classpath, "snapshots", *catalog.flags(), "--namespace", NAMESPACE, "--tables", ",".join(tables))
    return {line["table"]: int(line["snapshots"]) for line in lines}


def time_jdbc_cas(classpath: str, jdbc_uri: str, rounds: int = 200) -> float:
    """Median ms of the JdbcCatalog's conditional UPDATE on its database, alone (the harness's ``time-cas``)."""
    return float(run_command(classpath, "time-cas", "--uri", jdbc_uri, "--rounds", str(rounds))[0]["median_ms"])


def attempt_of(line: dict):
    """An ``Attempt`` from one of the harness's commit lines; its retries are the CommitReport's attempts less one.

    >>> attempt_of({"writer": 1, "seq": 3, "table": "t0", "due_s": 6.2, "start_s": 6.2, "end_s": 6.5, "ok": True,
    ...             "attempts": 3, "error": ""})
    Attempt(writer=1, seq=3, due_s=6.2, start_s=6.2, end_s=6.5, raised='', retries=2)
    """
    from studies.real_clients.measure import Attempt

    ok = bool(line["ok"])
    if ok and int(line["attempts"]) < 1:
        raise ValueError(f"writer {line['writer']} commit {line['seq']} returned without a CommitReport")
    return Attempt(int(line["writer"]), int(line["seq"]), float(line["due_s"]), float(line["start_s"]),
                   float(line["end_s"]), "" if ok else (line["error"] or "Exception"),
                   int(line["attempts"]) - 1 if ok else -1)


def run_writers(classpath: str, catalog: Catalog, tables: list[str], phases_s: list[float], interval_s: float,
                duration_s: float, mode: str) -> tuple[list, float, float, float]:
    """N writers (one per phase; writer w on table w mod T, as the model's uniform table choice) as threads of one
    JVM (``mode`` "threads") or one JVM each ("processes"); (attempts, the JVMs' CPU seconds while writing, the
    load average after, the common start in epoch seconds)."""
    if mode not in ("threads", "processes"):
        raise ValueError(f"mode: '{mode}' is not allowed; expected threads or processes")
    writers = list(range(len(phases_s)))
    groups = [writers] if mode == "threads" else [[w] for w in writers]
    procs = []
    for group in groups:
        # A JdbcCatalog's connection pool holds 2 connections by default (CatalogProperties.CLIENT_POOL_SIZE):
        # threads sharing one would queue for them, where writer processes each hold their own.
        pool = ["--prop.clients", str(len(group))] if catalog.kind == "jdbc" else []
        args = ["write", *catalog.flags(), *pool, "--namespace", NAMESPACE, "--writers", ",".join(map(str, group)),
                "--writer-tables", ",".join(tables[w % len(tables)] for w in group),
                "--phases-s", ",".join(f"{phases_s[w]:.6f}" for w in group),
                "--interval-s", f"{interval_s:g}", "--duration-s", f"{duration_s:g}"]
        procs.append(subprocess.Popen(java_command(classpath, *args), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    try:
        deadline = time.time() + READY_TIMEOUT_S
        for proc in procs:
            _wait_ready(proc, deadline)
        start_at = time.time() + 0.5
        for proc in procs:
            proc.stdin.write(f"{start_at * 1000.0:.3f}\n")
            proc.stdin.flush()
        outputs = [_Reader(proc) for proc in procs]
        attempts, cpu_s = [], 0.0
        for proc, reader in zip(procs, outputs):
            proc.wait(timeout=duration_s + 300)
            reader.join()
            if proc.returncode != 0:
                raise SetupError(f"iceberg-java: a writer JVM exited {proc.returncode}: {reader.error_line()}")
            for line in reader.lines:
                if line.get("kind") == "cpu":
                    cpu_s += float(line["cpu_s"])
                elif "writer" in line:
                    attempts.append(attempt_of(line))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return attempts, cpu_s, os.getloadavg()[0], start_at


def _wait_ready(proc: subprocess.Popen, deadline: float) -> None:
    """Read the JVM's stdout up to its ``{"kind": "ready"}`` (a line the first call's class loading precedes)."""
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            tail = proc.stderr.read().strip().splitlines()
            errors = [t for t in tail if "error" in t.lower()] or tail[-1:] or [""]
            raise SetupError(f"iceberg-java: a writer JVM exited before it was ready: {errors[0][:300]}")
        if line.startswith("{") and json.loads(line).get("kind") == "ready":
            return
    raise SetupError(f"iceberg-java: a writer JVM was not ready within {READY_TIMEOUT_S:g} s")


class _Reader:
    """Reads one JVM's stdout and stderr in threads while it writes, so that neither pipe fills."""

    def __init__(self, proc: subprocess.Popen):
        self.lines: list[dict] = []
        self.stderr: list[str] = []
        self.threads = [threading.Thread(target=self._out, args=(proc.stdout,), daemon=True),
                        threading.Thread(target=self._err, args=(proc.stderr,), daemon=True)]
        for thread in self.threads:
            thread.start()

    def _out(self, stream) -> None:
        for line in stream:
            if line.startswith("{"):
                self.lines.append(json.loads(line))

    def _err(self, stream) -> None:
        self.stderr.extend(stream)

    def join(self) -> None:
        for thread in self.threads:
            thread.join(timeout=30)

    def error_line(self) -> str:
        errors = [line for line in self.stderr if "error" in line.lower()] or self.stderr[-1:] or [""]
        return errors[0].strip()[:300]


class RestServer:
    """``with RestServer(classpath, jdbc_catalog) as uri:`` the harness's REST catalog on 127.0.0.1, over a
    JdbcCatalog on ``jdbc_catalog``'s database and warehouse; stopped on exit. Its log (a server-side failure's
    stack trace) goes to ``log_path``, or is dropped."""

    def __init__(self, classpath: str, backing: Catalog, log_path: Path | None = None):
        self.classpath, self.backing, self.log_path = classpath, backing, log_path
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> str:
        # One database connection for each of the server's request threads (16), not the pool's default 2.
        args = ["serve", "--uri", self.backing.uri, "--warehouse", self.backing.warehouse, "--port", "0",
                "--threads", str(SERVER_THREADS), "--prop.clients", str(SERVER_THREADS)]
        if self.backing.s3_endpoint:
            args += ["--s3-endpoint", self.backing.s3_endpoint]
        log = open(self.log_path, "a") if self.log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen(java_command(self.classpath, *args), stdout=subprocess.PIPE, stderr=log, text=True)
        if self.log_path:
            log.close()  # the server holds its own descriptor
        line = self.proc.stdout.readline()
        if not line.startswith("{"):
            self.__exit__()
            raise SetupError(f"iceberg-java: the REST server did not start (its log: {self.log_path or 'none'})")
        return f"http://127.0.0.1:{json.loads(line)['port']}"

    def __exit__(self, *exc) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def java_available() -> bool:
    """Whether ``java`` and ``mvn`` are on PATH (the harness builds with Maven)."""
    from shutil import which
    return bool(which("java") and which("mvn"))


if __name__ == "__main__":  # python -m studies.real_clients.iceberg_java: build, print the classpath
    try:
        print(harness_classpath())
    except SetupError as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(2)
