"""``commit-sweeps probe`` against real servers: moto's S3 server (always), MinIO (when its build is cached).

What is checked, each through the command as a user runs it:

- the samples file round-trips through ``fit --samples`` (and ``commit-sweeps fit`` fits a profile from it),
  and ``--json`` carries ``bench --json``'s keys in the same order;
- a proxy that drops If-Match / If-None-Match makes the probe refuse the store, by name;
- a gateway that emulates conditions by checking then writing, without a lock, is refused by the
  single-winner race (moto itself also checks then writes without a lock; its window is short, but on a loaded
  machine two writers on one version can both win, so the tests serve moto with its writes under one lock,
  ``moto_atomic.py``; the race is shown to bite through that gateway, and shown to pass on an atomic store
  with MinIO when its build is cached);
- an interrupted probe (SIGINT, SIGTERM, SIGHUP) leaves no object behind, and its client processes end with
  it, after a SIGKILL too;
- a store that answers a read with a huge body is refused, not read into memory;
- bad input exits 2 with one line, before measuring: a race of one writer, control characters in the
  store's address, credentials the SDK cannot use (naming why), an ``--out`` that is no file to write (a
  device, FIFO, socket or folder, /proc, a full disk); a disk that fills while measuring is one line too.

moto is reached through a proxy adding 5 ms each way, so that an op costs more than the client's own CPU and
the probe's client-overhead check has something real to compare against.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import fields
from pathlib import Path

import pytest

from probe_servers import KEYS, MINIO_VERSION, MinioServer, MotoServer, Proxy, free_port, minio_binary, \
    special_file

ROOT = Path(__file__).resolve().parents[1]
BUCKET = "probe-bucket"


@pytest.fixture(scope="module")
def moto():
    server = MotoServer()
    server.client().create_bucket(Bucket=BUCKET)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def slow_moto(moto):
    proxy = Proxy(moto.endpoint, delay_ms=5.0)
    yield proxy
    proxy.stop()


def probe(*flags: str, env_extra=None, timeout=120) -> subprocess.CompletedProcess:
    env = {**os.environ, **KEYS, "PYTHONPATH": str(ROOT), **(env_extra or {})}
    env = {key: value for key, value in env.items() if value is not None}  # None: unset
    return subprocess.run([sys.executable, "-m", "commit_sweeps", "probe", *flags], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=timeout)


def leftover(server, prefix: str) -> list[str]:
    answer = server.client().list_objects_v2(Bucket=BUCKET, Prefix=prefix)
    return [item["Key"] for item in answer.get("Contents", [])]


def one_error_line(result: subprocess.CompletedProcess) -> str:
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.stderr
    return lines[0]


# -- the pure parts: no server ------------------------------------------------------------------------

def test_store_uris_parse_and_name_one_object_per_run():
    from store_probe.uri import StoreURI, parse_store_uri
    from simcore.errors import ConfigError

    assert parse_store_uri("az://lab/a/b/") == StoreURI("az", "lab", "a/b")
    assert parse_store_uri("GS://bucket.with.dots") == StoreURI("gs", "bucket.with.dots", "")
    uri = parse_store_uri("s3://lab/p")
    first, second = uri.object_name(), uri.object_name()
    assert first != second and first.startswith("p/commit-sweeps-probe-")
    for bad in ("lab/p", "s3://", "s3://ab", "s3://UPPER", "s3://lab/a//b", "s3://lab/p?x=1", "file:///tmp",
                "s3://lab/\x00"):
        with pytest.raises(ConfigError) as refused:
            parse_store_uri(bad)
        assert refused.value.field == "store_uri"


def test_ops_become_bench_figures_and_the_samples_fit_reads(tmp_path):
    from store_probe.samples import Op, Overhead, in_window, samples_csv, summarise
    from simcore.bench import warmup_s
    from simcore.fit import read_samples

    duration = 20.0  # warm-up 2 s
    ops = [Op(0, 1.0, 1.9, True),  # completes in the warm-up: not counted
           Op(0, 1.9, 2.0, True), Op(1, 1.95, 2.05, False), Op(0, 2.0, 2.25, True), Op(1, 2.05, 2.30, False),
           Op(0, 19.9, 20.1, True)]  # completes after the end: not counted
    kept = in_window(ops, duration)
    assert warmup_s(duration) == 2.0 and [op.ended_s for op in kept] == [2.0, 2.05, 2.25, 2.30]
    result = summarise("s3://b", "cas", 2, kept, duration, Overhead(cpu_s=0.4, cores=2, wall_s=20.0, lag_p99_ms=1.0))
    assert (result.bench.successes, result.bench.failures) == (2, 2)
    assert result.bench.goodput_ops == pytest.approx(2 / 18.0) and result.bench.failure_rate == 0.5
    assert result.bench.latency_mean_ms == pytest.approx(175.0) and result.failed_mean_ms == pytest.approx(175.0)
    assert result.overhead.cpu_share == pytest.approx(0.01) and result.cpu_ms_per_op == pytest.approx(100.0)
    path = tmp_path / "samples.csv"
    path.write_text(samples_csv("cas", [(2, kept)]))
    (stats,) = read_samples(str(path))["cas"]
    assert (stats.clients, stats.successes, stats.failures) == (2, 2, 2)
    assert stats.mean_ms == pytest.approx(175.0) and stats.failed_mean_ms == pytest.approx(175.0)


# -- against moto's server --------------------------------------------------------------------------

def test_samples_round_trip_through_fit_and_json_has_bench_keys(moto, slow_moto, tmp_path):
    from simcore.bench import BenchResult
    from simcore.fit import read_samples

    out = tmp_path / "samples.csv"
    result = probe("--store-uri", f"s3://{BUCKET}/round-trip", "--endpoint-url", slow_moto.endpoint,
                   "--clients", "1,2", "--duration-s", "4", "--race-rounds", "3", "--processes", "2",
                   "--out", str(out), "--json", "--max-client-lag", "1", "--write-rounds", "8",
                   "--read-rounds", "4")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["clients"] for line in lines] == [1, 2]
    bench_keys = [field.name for field in fields(BenchResult)]
    assert all(list(line)[:len(bench_keys)] == bench_keys for line in lines)
    assert all(line["provider"] == f"s3://{BUCKET}/round-trip" and line["operation"] == "cas" for line in lines)
    assert lines[0]["failures"] == 0 and lines[0]["successes"] > 10  # one client never loses
    assert lines[1]["client_cpu_share"] > 0 and lines[1]["client_lag_p99_ms"] >= 0
    # The file holds exactly the ops the JSON counted, and fit reads the same counts back.
    stats = read_samples(str(out))["cas"]
    assert [(s.clients, s.successes, s.failures) for s in stats] == [
        (line["clients"], line["successes"], line["failures"]) for line in lines]
    assert stats[0].mean_ms == pytest.approx(lines[0]["latency_mean_ms"], rel=1e-3)
    assert stats[0].mean_ms > 20  # two requests through the proxy, 10 ms added to each
    assert "measuring" in result.stderr and "deleted" in result.stderr  # progress per count; the clean-up
    assert leftover(moto, "round-trip") == []
    # And the command fits a profile from it.
    profile = tmp_path / "mine.toml"
    fitted = subprocess.run([sys.executable, "-m", "commit_sweeps", "fit", "--samples", str(out), "--base", "s3",
                             "--name", "moto", "--max-evaluations", "3", "--out", str(profile), "--quiet"],
                            capture_output=True, text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                            timeout=600)
    assert fitted.returncode == 0, fitted.stderr
    from simcore.fit import SAMPLE_WRITE_BYTES, measured_latency
    from simcore.profiles import load_profile
    mine = load_profile(str(profile))
    assert mine.name == "moto"
    # The probe times each op's read; the profile's read is the one client's reads, not the base's.
    with open(out, newline="") as handle:
        rows = list(csv.DictReader(handle))
    one = [row for row in rows if row["clients"] == "1" and row["operation"] == "cas"]
    reads = [float(row["read_ms"]) for row in one]
    assert all(10.0 < float(row["read_ms"]) < float(row["latency_ms"]) for row in one)  # one request: >= 10 ms
    assert mine.read_median_ms == pytest.approx(measured_latency(reads).median_ms, rel=1e-6)
    # And times one client's plain writes, first: the profile's plain write is theirs, not the base's.
    writes = [float(row["latency_ms"]) for row in rows if row["operation"] == "write"]
    assert len(writes) == 8 and all(row["clients"] == "1" for row in rows[:8]) and min(writes) >= 10.0
    assert mine.write(SAMPLE_WRITE_BYTES).median_ms == pytest.approx(measured_latency(writes).median_ms, rel=1e-3)
    assert "Read from the samples" in profile.read_text() and "write from the samples" in profile.read_text()
    # And rounds of reads sent at once, each size four times, each read through the proxy: the profile's cost
    # of a read past the first is the slope the samples give.
    from simcore.fit import round_ms_per_read
    rounds: dict[int, list[float]] = {}
    for row in rows:
        if row["operation"] == "round":
            rounds.setdefault(int(row["clients"]), []).append(float(row["latency_ms"]))
    assert sorted(rounds) == [1, 8, 32, 64] and all(len(ms) == 4 and min(ms) >= 10.0 for ms in rounds.values())
    assert mine.read_round_ms_per_read == pytest.approx(round_ms_per_read(rounds), rel=1e-9)
    assert "round_ms_per_read" in profile.read_text()


def test_every_put_is_one_round_trip_without_boto3s_handshake(moto, monkeypatch):
    from store_probe.stores import open_store
    from store_probe.uri import parse_store_uri

    for key, value in KEYS.items():
        monkeypatch.setenv(key, value)
    proxy = Proxy(moto.endpoint)
    try:
        store = open_store(parse_store_uri(f"s3://{BUCKET}/puts"), proxy.endpoint)
        for _ in range(3):
            store.put("puts/plain", b"x" * 4096)
        assert (proxy.requests, proxy.expects) == (3, 0)  # what a table-format client's PUT costs
        version = store.read("puts/plain")
        assert store.write("puts/plain", version, b"y" * 4096)  # and its conditional create
        assert not store.write("puts/plain", version, b"z" * 4096)  # still conditional: the version moved on
        assert (proxy.requests, proxy.expects) == (6, 0)
        store.delete("puts/plain")
    finally:
        proxy.stop()
    assert leftover(moto, "puts") == []


def test_a_proxy_that_drops_the_condition_headers_is_refused(moto):
    proxy = Proxy(moto.endpoint, mode="strip")
    try:
        result = probe("--store-uri", f"s3://{BUCKET}/stripped", "--endpoint-url", proxy.endpoint,
                       "--clients", "1", "--duration-s", "2")
    finally:
        proxy.stop()
    assert result.returncode == 2, result.stderr
    line = one_error_line(result)
    assert f"S3 store s3://{BUCKET}/stripped at {proxy.endpoint}" in line and "If-None-Match" in line
    assert "measuring" not in result.stderr and result.stdout == ""
    assert leftover(moto, "stripped") == []


def test_a_gateway_that_checks_then_writes_without_a_lock_fails_the_race(moto):
    proxy = Proxy(moto.endpoint, mode="check-then-write")
    try:
        result = probe("--store-uri", f"s3://{BUCKET}/unlocked", "--endpoint-url", proxy.endpoint,
                       "--clients", "1", "--duration-s", "2", "--race-rounds", "3")
    finally:
        proxy.stop()
    assert result.returncode == 2, result.stderr
    line = one_error_line(result)
    assert re.search(r"\d of 8 concurrent writers on one version won in round \d", line), line  # stale checks pass
    assert leftover(moto, "unlocked") == []


def interrupt(prefix: str, flags: list[str], endpoint: str, wait_for: str, after_s: float, signum,
              check=None, started=None) -> tuple[int, str, str]:
    """Start a probe under ``prefix``, send ``signum`` ``after_s`` after its progress first says ``wait_for``
    (``check()`` runs just before; ``started(pid)`` once it is started); (exit status, the progress up to then,
    the rest of stderr)."""
    env = {**os.environ, **KEYS, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-m", "commit_sweeps", "probe", "--store-uri",
                                f"s3://{BUCKET}/{prefix}", "--endpoint-url", endpoint, *flags],
                               stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    if started is not None:
        started(process.pid)
    try:
        seen = ""
        deadline = time.monotonic() + 90
        while wait_for not in seen:
            line = process.stderr.readline()
            assert line and time.monotonic() < deadline, f"the probe never said {wait_for!r}: {seen}"
            seen += line
        time.sleep(after_s)
        if check is not None:
            check()
        process.send_signal(signum)
        _, rest = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    return process.returncode, seen, rest


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_probe_leaves_no_object_behind(moto, slow_moto, signum, tmp_path):
    prefix = f"interrupted-{signum.name}"

    def exists():
        assert leftover(moto, prefix) != []  # its object exists while it measures

    status, seen, rest = interrupt(prefix, ["--clients", "2", "--duration-s", "60", "--race-rounds", "2",
                                            "--processes", "2", "--read-rounds", "0"], slow_moto.endpoint,
                                   "measuring", 2.0, signum, exists)  # interrupted while its clients write
    assert status == 130, seen + rest
    assert "interrupted" in rest and "deleted" in rest
    assert leftover(moto, prefix) == []


def test_a_probe_interrupted_in_its_rounds_of_reads_stops_as_interrupted(moto, slow_moto, tmp_path):
    # The rounds run inside an event loop of their own: ^C there is still an interruption (130), not a store
    # error, and the object still goes. They start right after the plain writes.
    prefix = "interrupted-rounds"
    status, seen, rest = interrupt(prefix, ["--clients", "1", "--race-rounds", "2", "--write-rounds", "2",
                                            "--read-rounds", "10000"], slow_moto.endpoint,
                                   "plain write", 1.5, signal.SIGINT)
    assert status == 130, seen + rest
    assert "interrupted" in rest and "deleted" in rest and "round of reads failed" not in rest
    assert leftover(moto, prefix) == []


def test_a_client_side_that_distorts_the_result_is_refused(moto, slow_moto):
    result = probe("--store-uri", f"s3://{BUCKET}/strict", "--endpoint-url", slow_moto.endpoint, "--clients", "1",
                   "--duration-s", "2", "--race-rounds", "1", "--max-client-lag", "0.000001", "--read-rounds", "0")
    assert result.returncode == 1, result.stderr
    assert "without distorting the result" in one_error_line(result)
    assert leftover(moto, "strict") == []


def test_bad_input_exits_2_with_one_line(moto, tmp_path):
    no_keys = {"AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": "", "AWS_PROFILE": None,
               "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"), "AWS_CONFIG_FILE": str(tmp_path / "none")}
    cases = [
        (["--store-uri", "ftp://bucket/p"], {}, "unknown scheme 'ftp'"),
        (["--store-uri", "s3://Bad_Bucket"], {}, "bucket name"),
        (["--store-uri", f"s3://{BUCKET}", "--endpoint-url", "localhost:9000"], {}, "endpoint_url"),
        (["--store-uri", f"s3://{BUCKET}", "--endpoint-url", f"http://127.0.0.1:{free_port()}"], {},
         "a reachable S3 endpoint"),
        (["--store-uri", "s3://no-such-bucket", "--endpoint-url", moto.endpoint], {}, "does not exist"),
        (["--store-uri", f"s3://{BUCKET}", "--endpoint-url", moto.endpoint], no_keys, "credentials"),
        (["--store-uri", "gs://bucket", "--operation", "append"], {}, "GCS has no conditional append"),
        (["--store-uri", f"s3://{BUCKET}", "--clients", "0"], {}, "clients"),
        (["--store-uri", f"s3://{BUCKET}", "--clients", "300"], {}, "clients"),
        (["--store-uri", f"s3://{BUCKET}", "--duration-s", "nan"], {}, "duration_s"),
        (["--store-uri", f"s3://{BUCKET}", "--write-rounds", "-1"], {}, "write_rounds: -1 is not allowed"),
        (["--store-uri", f"s3://{BUCKET}", "--out", str(tmp_path / "missing" / "x.csv")], {}, "out"),
    ]
    for flags, env, expected in cases:
        flags = flags + ([] if "--clients" in flags else ["--clients", "1"])
        result = probe(*flags, "--duration-s", "2", env_extra=env) if "--duration-s" not in flags else \
            probe(*flags, env_extra=env)
        assert result.returncode == 2, (flags, result.stderr)
        assert len(result.stderr.strip().splitlines()) == 1 and expected in result.stderr, (flags, result.stderr)
        assert result.stdout == ""


def test_credentials_in_the_urls_are_refused_in_one_line_that_does_not_echo_them(moto):
    secret = "wJalrXUtnFEMI%2FK7MDENGbPxRfiCY"
    moto_host = moto.endpoint.split("://", 1)[1]
    cases = [
        (["--store-uri", f"s3://{BUCKET}/p", "--endpoint-url", f"http://user:{secret}@{moto_host}"], "endpoint_url"),
        (["--store-uri", f"s3://{BUCKET}/p", "--endpoint-url", f"http://user:{secret}@127.0.0.1:{free_port()}"],
         "endpoint_url"),
        (["--store-uri", "az://container/p", "--endpoint-url",
          f"http://127.0.0.1:{free_port()}/account?sv=2024-11-04&sp=rw&sig={secret}"], "endpoint_url"),
        (["--store-uri", f"s3://user:{secret}@{BUCKET}/p", "--endpoint-url", moto.endpoint], "store_uri"),
        (["--store-uri", f"az://container/p?sv=2024-11-04&sig={secret}"], "store_uri"),
    ]
    for flags, field in cases:
        result = probe(*flags, "--clients", "1", "--duration-s", "2")
        assert result.returncode == 2, (flags, result.stderr)
        line = one_error_line(result)
        assert line.startswith(f"error: {field}: ") and "credentials in the UR" in line, line
        assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""
        for spelling in (secret, secret.replace("%2F", "/"), "user:"):
            assert spelling not in result.stderr, (flags, result.stderr)


def test_credentials_the_store_refuses_exit_2():
    server = MotoServer(auth=True)  # checks keys: ours are unknown to it
    try:
        result = probe("--store-uri", f"s3://{BUCKET}", "--endpoint-url", server.endpoint, "--clients", "1",
                       "--duration-s", "2")
    finally:
        server.stop()
    assert result.returncode == 2, result.stderr
    assert "credentials" in one_error_line(result) and "answered 403" in result.stderr
    assert "testing" not in result.stderr  # never printed


def test_minio_passes_the_race_when_its_build_is_cached(tmp_path):
    binary = minio_binary()
    if binary is None:
        pytest.skip("MinIO is not built on this machine (scripts/store-lab.sh up builds and caches it)")
    server = MinioServer(binary, tmp_path / "minio")
    try:
        server.client().create_bucket(Bucket=BUCKET)
        result = probe("--store-uri", f"s3://{BUCKET}/race", "--endpoint-url", server.endpoint, "--clients", "2",
                       "--duration-s", "3", "--race-rounds", "30", "--processes", "2", "--max-client-lag", "100",
                       env_extra=server.keys())
        assert result.returncode == 0, result.stderr
        assert "one winner of 8 concurrent writers in each of 30 rounds" in result.stderr
        assert server.client().list_objects_v2(Bucket=BUCKET, Prefix="race").get("Contents", []) == []
    finally:
        server.stop()


def _lab_tools_cached() -> bool:
    tools = Path(os.environ.get("SWEEPS_TOOLS_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "commit-sweeps", "tools"))
    return all(os.access(tools / path, os.X_OK) for path in (
        f"minio-{MINIO_VERSION}/bin/minio", "fake-gcs-server-v1.56.1/bin/fake-gcs-server",
        "toxiproxy-v2.5.0/bin/server", "azurite-3.37.0/node_modules/.bin/azurite-blob"))


@pytest.mark.slow
def test_the_store_lab_serves_all_three_stores_on_loopback_to_the_probe(tmp_path):
    """scripts/store-lab.sh up / env / down, and a probe of each store, when the lab's tools are cached."""
    if not _lab_tools_cached():
        pytest.skip("the store lab's tools are not built on this machine (scripts/store-lab.sh up builds them, "
                    "about 5 minutes of CPU for MinIO)")
    import psutil

    lab = {**os.environ, "STORE_LAB_DIR": str(tmp_path / "lab"), "PYTHON": sys.executable}
    up = subprocess.run(["bash", "scripts/store-lab.sh", "up", "--delay-ms", "3"], cwd=ROOT, env=lab,
                        capture_output=True, text=True, timeout=300)
    try:
        assert up.returncode == 0, up.stderr
        exports = subprocess.run(["bash", "scripts/store-lab.sh", "env"], cwd=ROOT, env=lab, capture_output=True,
                                 text=True, timeout=30).stdout
        env = {}
        for line in exports.splitlines():
            for assignment in shlex.split(line.removeprefix("export ")):
                key, _, value = assignment.partition("=")
                env[key] = value
        assert env["STORE_LAB_DELAY_MS"] == "3"
        pids = [int((tmp_path / "lab" / f"{name}.pid").read_text()) for name in
                ("minio", "azurite", "fake-gcs-server", "toxiproxy")]
        listening = [c.laddr.ip for c in psutil.net_connections("tcp") if c.status == "LISTEN" and c.pid in pids]
        assert listening and set(listening) <= {"127.0.0.1", "::1"}, listening
        for store in ("S3", "AZ", "GS"):
            result = probe("--store-uri", env[f"STORE_LAB_{store}_URI"], "--endpoint-url",
                           env[f"STORE_LAB_{store}_ENDPOINT"], "--clients", "2", "--duration-s", "3",
                           "--race-rounds", "5", "--json", "--max-client-lag", "100", "--read-rounds", "2",
                           env_extra=env)
            assert result.returncode == 0, (store, result.stderr)
            # Rounds of reads sent at once, through object_store, on each of the three stores.
            assert re.search(r"rounds of reads: 1 reads p50 [\d.]+ ms, .*64 reads p50 [\d.]+ ms", result.stderr), \
                (store, result.stderr)
            (line,) = [json.loads(text) for text in result.stdout.splitlines()]
            assert line["successes"] > 0 and line["latency_p50_ms"] > 4 * 3  # at least two round trips of 2 x 3 ms
        appended = probe("--store-uri", env["STORE_LAB_AZ_URI"], "--endpoint-url", env["STORE_LAB_AZ_ENDPOINT"],
                         "--operation", "append", "--clients", "2", "--duration-s", "3", "--race-rounds", "5",
                         "--json", "--max-client-lag", "100", env_extra=env)
        assert appended.returncode == 0, appended.stderr
        assert json.loads(appended.stdout)["operation"] == "append"
        refused = probe("--store-uri", env["STORE_LAB_S3_URI"], "--endpoint-url", env["STORE_LAB_S3_ENDPOINT"],
                        "--operation", "append", "--clients", "1", "--duration-s", "2", env_extra=env)
        assert refused.returncode == 2 and "conditional appends" in refused.stderr  # MinIO has no WriteOffsetBytes
    finally:
        down = subprocess.run(["bash", "scripts/store-lab.sh", "down"], cwd=ROOT, env=lab, capture_output=True,
                              text=True, timeout=60)
    assert down.returncode == 0 and not (tmp_path / "lab").exists()


# -- what the probe refuses, and how it ends ---------------------------------------------------------

def test_one_race_writer_is_refused_as_it_cannot_race(moto):
    # Through a gateway that is not atomic: one writer always wins its round, so it would "prove" it atomic.
    proxy = Proxy(moto.endpoint, mode="check-then-write")
    try:
        result = probe("--store-uri", f"s3://{BUCKET}/one-racer", "--endpoint-url", proxy.endpoint,
                       "--clients", "1", "--duration-s", "2", "--race-rounds", "2", "--race-writers", "1")
    finally:
        proxy.stop()
    assert result.returncode == 2, result.stderr
    line = one_error_line(result)
    assert line.startswith("error: race_writers: 1 is not allowed; expected an integer in [2, 64]"), line
    assert len(result.stderr.strip().splitlines()) == 1 and result.stdout == ""
    assert proxy.requests == 0 and leftover(moto, "one-racer") == []  # refused before reaching the store


def _tree(pid: int) -> list:
    import psutil

    return psutil.Process(pid).children(recursive=True)


def test_a_hung_up_probe_cleans_up_and_its_clients_end(moto, slow_moto):
    import psutil

    prefix = "hung-up"
    clients = []

    def exists():
        assert leftover(moto, prefix) != []
        clients.extend(_tree(process_pid[0]))

    process_pid = []
    status, seen, rest = interrupt(prefix, ["--clients", "2", "--duration-s", "60", "--race-rounds", "2",
                                            "--processes", "2", "--write-rounds", "2", "--read-rounds", "0"],
                                   slow_moto.endpoint, "measuring", 2.0, signal.SIGHUP, exists,
                                   started=process_pid.append)
    assert status == 130, seen + rest
    assert "interrupted (SIGHUP)" in rest and "deleted" in rest and "Traceback" not in rest
    assert leftover(moto, prefix) == []
    assert len(clients) >= 2 and not psutil.wait_procs(clients, timeout=10)[1]


def test_a_killed_probe_s_clients_end_at_once_without_tracebacks(moto, slow_moto):
    import psutil

    prefix = "killed"
    env = {**os.environ, **KEYS, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-m", "commit_sweeps", "probe", "--store-uri",
                                f"s3://{BUCKET}/{prefix}", "--endpoint-url", slow_moto.endpoint, "--clients", "2",
                                "--duration-s", "60", "--race-rounds", "2", "--processes", "2", "--write-rounds", "2",
                                "--read-rounds", "0"],
                               stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        seen = ""
        while "measuring" not in seen:
            line = process.stderr.readline()
            assert line, seen
            seen += line
        time.sleep(1.0)
        clients = _tree(process.pid)
        assert len(clients) >= 2
        process.kill()  # no handler runs: only the kernel and the clients themselves can end them
        # The clients hold the same stderr: it reaches its end only once every one of them has exited.
        _, rest = process.communicate(timeout=15)
        assert not psutil.wait_procs(clients, timeout=5)[1]
        assert "Traceback" not in rest and "Error" not in rest, rest
        # No clean-up after kill -9 (the object and the plain writes' are left); but nothing writes them any more.
        (key,) = [key for key in leftover(moto, prefix) if not key.endswith("-put")]
        before = moto.client().head_object(Bucket=BUCKET, Key=key)["ETag"]
        time.sleep(1.0)
        assert moto.client().head_object(Bucket=BUCKET, Key=key)["ETag"] == before
    finally:
        if process.poll() is None:
            process.kill()
        for key in leftover(moto, prefix):
            moto.client().delete_object(Bucket=BUCKET, Key=key)


@pytest.mark.parametrize("mode, said", [("huge-get", "5368709120 bytes, more than the 1,048,576"),
                                        ("huge-get-unsized", "answered more than the 1,048,576 bytes")])
def test_a_store_that_answers_a_huge_body_is_refused_in_one_line(moto, mode, said):
    import resource

    def bounded_memory():  # a read into memory fails here, well short of the body (5 GiB)
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, resource.RLIM_INFINITY))

    proxy = Proxy(moto.endpoint, mode=mode)
    try:
        env = {**os.environ, **KEYS, "PYTHONPATH": str(ROOT)}
        result = subprocess.run([sys.executable, "-m", "commit_sweeps", "probe", "--store-uri",
                                 f"s3://{BUCKET}/huge", "--endpoint-url", proxy.endpoint, "--clients", "1",
                                 "--duration-s", "2", "--race-rounds", "2"], capture_output=True, text=True, env=env,
                                cwd=ROOT, timeout=120, preexec_fn=bounded_memory)
    finally:
        proxy.stop()
    assert result.returncode == 2, result.stderr
    line = one_error_line(result)
    assert f"S3 store s3://{BUCKET}/huge" in line and said in line, line
    assert "Traceback" not in result.stderr and "measuring" not in result.stderr and proxy.huge_gets >= 1
    assert leftover(moto, "huge") == []


def test_reads_stop_at_the_bound_when_the_length_is_not_told():
    # GCS downloads into this buffer chunk by chunk; Azure's answer is refused by its length before its body.
    from types import SimpleNamespace

    from store_probe import stores

    def answer(method, length):
        return SimpleNamespace(http_request=SimpleNamespace(method=method),
                               http_response=SimpleNamespace(headers={"Content-Length": str(length)}))

    stores._refuse_large_get(answer("GET", stores.MAX_READ_BYTES))
    stores._refuse_large_get(answer("PUT", 5 * 2**30))  # an upload's answer is no read
    with pytest.raises(stores.StoreError, match="5368709120 bytes, more than the 1,048,576 bytes"):
        stores._refuse_large_get(answer("GET", 5 * 2**30))

    buffer = stores._BoundedBuffer()
    buffer.write(b"x" * stores.MAX_READ_BYTES)
    with pytest.raises(stores.StoreError, match="answered more than the 1,048,576 bytes"):
        buffer.write(b"x")
    buffer.seek(0)
    buffer.write(b"y" * 10)
    assert buffer.getvalue() == b"y" * 10


@pytest.mark.parametrize("flag, value, field", [
    ("--store-uri", "s3://lab/p\nq", "store_uri"), ("--store-uri", "s3://lab/p\tq", "store_uri"),
    ("--endpoint-url", "http://127.0.0.1:9\n", "endpoint_url"),
    ("--endpoint-url", "http://127.0.0.1\t:9", "endpoint_url"),
])
def test_control_characters_in_the_store_s_address_are_refused(flag, value, field):
    flags = {"--store-uri": "s3://lab/p", "--endpoint-url": "http://127.0.0.1:9", flag: value}
    result = probe(*[part for pair in flags.items() for part in pair], "--clients", "1", "--duration-s", "2")
    assert result.returncode == 2, result.stderr
    line = one_error_line(result)
    assert line.startswith(f"error: {field}: {value!r} is not allowed") and "without control characters" in line


@pytest.mark.parametrize("uri, env, expected", [
    ("az://cont/p", {"AZURE_STORAGE_CONNECTION_STRING": "garbage"},
     "credentials: '$AZURE_STORAGE_CONNECTION_STRING' is not allowed; expected a connection string"),
    ("az://cont/p", {"AZURE_STORAGE_CONNECTION_STRING": "AccountName=a;AccountKey=not base64!;BlobEndpoint="
                                                        "http://127.0.0.1:9/a"},
     "the AccountKey of $AZURE_STORAGE_CONNECTION_STRING' is not allowed; expected an Azure storage account key "
     "in base64"),
    ("az://cont/p", {"AZURE_STORAGE_ACCOUNT": "a", "AZURE_STORAGE_KEY": "not base64!"},
     "credentials: '$AZURE_STORAGE_KEY' is not allowed; expected an Azure storage account key in base64"),
    ("gs://cont/p", {"GOOGLE_APPLICATION_CREDENTIALS": "{creds}"}, "is not a valid json file"),
    ("gs://cont/p", {"GOOGLE_APPLICATION_CREDENTIALS": "{creds}.missing"}, ".missing was not found"),
])
def test_credentials_the_sdk_cannot_use_are_refused_naming_why(tmp_path, uri, env, expected):
    creds = tmp_path / "creds.json"
    creds.write_text('{"type": "service_account", "private_key": "SECRET-KEY-TEXT",')  # cut short
    env = {"AZURE_STORAGE_CONNECTION_STRING": None, "STORAGE_EMULATOR_HOST": None,
           **{key: value.format(creds=creds) for key, value in env.items()}}
    flags = ["--endpoint-url", "http://127.0.0.1:9/a"] if "AZURE_STORAGE_KEY" in env else []
    result = probe("--store-uri", uri, *flags, "--clients", "1", "--duration-s", "2", env_extra=env, timeout=60)
    assert result.returncode == 2, result.stderr
    line = one_error_line(result)
    assert expected.format(creds=creds) in line and len(result.stderr.strip().splitlines()) == 1, line
    assert "answered None" not in line and "none found" not in line
    assert "not base64!" not in line and "SECRET-KEY-TEXT" not in line  # what the secret is, never shown


@pytest.mark.parametrize("out", ["CHAR", "FIFO", "SOCKET", "DIR", "/proc/version"])
def test_an_out_that_is_no_file_to_write_is_refused_before_measuring(moto, tmp_path, out):
    out = out if out.startswith("/") else special_file(tmp_path, out)
    kind = os.stat(out).st_mode
    result = probe("--store-uri", f"s3://{BUCKET}/devices", "--endpoint-url", moto.endpoint, "--clients", "1",
                   "--duration-s", "2", "--out", out)
    assert result.returncode == 2, result.stderr
    line = one_error_line(result)
    assert line.startswith(f"error: out: {out!r} is not allowed; expected a regular file path"), line
    assert "measuring" not in result.stderr and leftover(moto, "devices") == []
    assert os.stat(out).st_mode == kind  # the device (or FIFO, socket, folder) is still what it was
    assert not os.path.exists(out + ".partial")


@contextlib.contextmanager
def _small_tmpfs(folder: Path, size: str):
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                             capture_output=True)
    if mounted.returncode != 0:
        pytest.skip("mounting a tmpfs needs root (CAP_SYS_ADMIN)")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


def test_an_out_on_a_full_disk_is_refused_before_measuring(moto, tmp_path):
    with _small_tmpfs(tmp_path / "full", "64k") as folder:
        with contextlib.suppress(OSError), open(folder / "filler", "wb") as filler:
            while True:
                filler.write(b"x" * 4096)
                filler.flush()
        out = folder / "samples.csv"
        result = probe("--store-uri", f"s3://{BUCKET}/full", "--endpoint-url", moto.endpoint, "--clients", "1",
                       "--duration-s", "2", "--out", str(out))
        assert result.returncode == 2, result.stderr
        line = one_error_line(result)
        assert line.startswith(f"error: out: {str(out)!r} is not allowed") and "No space left" in line, line
        assert "measuring" not in result.stderr and sorted(p.name for p in folder.iterdir()) == ["filler"]
    assert leftover(moto, "full") == []


def test_an_out_that_fills_up_while_measuring_is_one_line_and_leaves_no_partial(moto, tmp_path):
    with _small_tmpfs(tmp_path / "small", "4k") as folder:  # a page: the check's byte fits, the samples do not
        out = folder / "samples.csv"
        result = probe("--store-uri", f"s3://{BUCKET}/filled", "--endpoint-url", moto.endpoint, "--clients", "1",
                       "--duration-s", "2", "--race-rounds", "2", "--max-client-lag", "100", "--read-rounds", "0",
                       "--write-rounds", "250", "--out", str(out))  # 250 rows of plain writes: over 4 KB
        assert result.returncode == 1, result.stderr
        line = one_error_line(result)
        assert line == f"error: out: {str(out)!r} cannot be written (No space left on device)", line
        assert "Traceback" not in result.stderr and "deleted" in result.stderr
        assert list(folder.iterdir()) == []
    assert leftover(moto, "filled") == []


def test_a_client_process_ends_when_its_parent_does_without_the_kernel_s_help():
    # Where PR_SET_PDEATHSIG is not to be had, the watcher ends the process once its parent is gone.
    grandchild = ("import ctypes, os, time\n"
                  "from store_probe.client_processes import die_with_parent\n"
                  "def no_prctl(*args, **kwargs): raise OSError('no prctl here')\n"
                  "ctypes.CDLL = no_prctl  # after the imports, which load libraries of their own\n"
                  "die_with_parent(os.getppid())\n"
                  "print('watching', flush=True)\n"
                  "time.sleep(60)\n")
    parent = ("import subprocess, sys\n"
              f"child = subprocess.Popen([sys.executable, '-c', {grandchild!r}], stdout=subprocess.PIPE, text=True)\n"
              "assert child.stdout.readline() == 'watching\\n'\n"
              "print(child.pid, flush=True)\n")  # and exits: the grandchild's parent is gone
    import psutil

    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    orphan = int(result.stdout)
    with contextlib.suppress(psutil.NoSuchProcess):
        psutil.Process(orphan).wait(timeout=5)  # psutil.TimeoutExpired: the orphan went on
    assert not psutil.pid_exists(orphan) or psutil.Process(orphan).status() == psutil.STATUS_ZOMBIE
    assert time.monotonic() - started < 30
