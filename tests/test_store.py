"""The results store: schema, atomic and idempotent writes, verified reads, S3.

The S3 tests run against a real S3-compatible server (moto's server mode)
started on a loopback port by this module, not against a mock object.
"""

from __future__ import annotations

import dataclasses
import math
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import quote

import pyarrow as pa
import pyarrow.fs as pafs
import pytest

from simcore import SimConfig, simulate
from ray_jobs.schema import (CONFIG_COLUMNS, METRIC_COLUMNS, RESULTS_SCHEMA, SchemaError, make_row,
                             rows_to_table)
from ray_jobs.status import format_seeds, format_status, store_status
from ray_jobs.store import ResultsStore, StoreError
from probe_servers import MotoServer, free_port
from simcore.redaction import redact
from store_fixtures import write_digest_named

REPO_ROOT = Path(__file__).resolve().parents[1]
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)

# Cheap configs (milliseconds each): warm-up 300 s, window 600 s.
FAST = dict(duration_s=1200, runtime_median_ms=20_000, inter_arrival_scale_ms=1000)
STORAGE = SimConfig(provider="s3x", num_tables=3, **FAST)
SERVICE = SimConfig(provider="s3", catalog="service", catalog_latency_ms=50, num_tables=2,
                    fast_append_ratio=0.9, table_distribution="zipf", zipf_alpha=1.5, **FAST)


def rows_for(config, seeds, experiment="exp", finished_at=T0, wall_s=0.01):
    return [make_row(experiment, config, metrics, package_version="9.9.9", git_revision="abc123",
                     wall_s=wall_s, finished_at=finished_at) for metrics in simulate(config, seeds=seeds)]


def table_for(config, seeds, **kwargs):
    return rows_to_table(rows_for(config, seeds, **kwargs))


# -- schema -----------------------------------------------------------------

def test_schema_has_every_simconfig_field_and_every_simulate_metric():
    (metrics,) = simulate(STORAGE, seeds=[1])
    assert set(METRIC_COLUMNS) == set(metrics) - {"seed"}
    assert set(CONFIG_COLUMNS) == {f.name for f in dataclasses.fields(SimConfig)}
    contract = ["experiment", "config_hash", "seed", "provider", "num_tables", "fast_append_ratio",
                "inter_arrival_scale_ms", "success_rate", "throughput_cps", "commit_latency_mean_ms",
                "commit_latency_p99_ms", "catalog", "catalog_latency_ms", "table_distribution", "zipf_alpha",
                "duration_s", "retry", "package_version", "git_revision", "wall_s", "finished_at"]
    assert set(contract) <= set(RESULTS_SCHEMA.names)
    assert RESULTS_SCHEMA.field("seed").type == pa.int64()
    assert RESULTS_SCHEMA.field("finished_at").type == pa.timestamp("us", tz="UTC")
    assert RESULTS_SCHEMA.field("table_success_rate").type == pa.list_(pa.float64())


def test_a_row_with_an_unknown_metric_is_refused_not_dropped():
    (row,) = rows_for(STORAGE, [1])
    with pytest.raises(SchemaError, match="unknown columns \\['new_metric'\\]"):
        rows_to_table([{**row, "new_metric": 1.0}])
    del row["throughput_cps"]
    with pytest.raises(SchemaError, match="missing columns \\['throughput_cps'\\]"):
        rows_to_table([row])


# -- writing and reading ----------------------------------------------------

def test_rows_round_trip_with_nulls_nans_lists_and_utc_times(tmp_path):
    store = ResultsStore(str(tmp_path))
    store.write_rows(pa.concat_tables([table_for(STORAGE, [1, 2], experiment="exp4c"),
                                       table_for(SERVICE, [1], experiment="exp4b_zipf")]))
    assert store.experiments() == ["exp4b_zipf", "exp4c"]
    scan = store.scan()
    assert scan.unreadable == () and scan.duplicates_dropped == 0 and scan.files_read == 2
    rows = {(r["experiment"], r["seed"]): r for r in scan.table.to_pylist()}
    assert set(rows) == {("exp4c", 1), ("exp4c", 2), ("exp4b_zipf", 1)}
    storage, service = rows[("exp4c", 1)], rows[("exp4b_zipf", 1)]
    assert storage["catalog_latency_ms"] is None and storage["zipf_alpha"] is None
    assert service["catalog_latency_ms"] == 50.0 and service["zipf_alpha"] == 1.5
    assert storage["config_hash"] == STORAGE.config_hash and SimConfig.from_dict(
        {name: storage[name] for name in CONFIG_COLUMNS}) == STORAGE
    assert math.isnan(storage["vo_success_rate"])  # FA only: no VO transactions, NaN not null
    assert len(storage["table_n_txns"]) == 3
    assert storage["finished_at"] == T0 and storage["git_revision"] == "abc123"
    (expected,) = simulate(STORAGE, seeds=[2])
    assert rows[("exp4c", 2)]["throughput_cps"] == expected["throughput_cps"]


def test_rewriting_the_same_rows_replaces_their_file(tmp_path):
    store = ResultsStore(str(tmp_path))
    store.write_rows(table_for(STORAGE, [1, 2], finished_at=T0))
    store.write_rows(table_for(STORAGE, [1, 2], finished_at=T0 + timedelta(hours=1)))
    assert len(store.data_files("exp")) == 1
    scan = store.scan()
    assert scan.rows_read == 2 and scan.duplicates_dropped == 0
    assert set(scan.table.column("finished_at").to_pylist()) == {T0 + timedelta(hours=1)}


def test_duplicate_keys_in_different_files_keep_the_latest_finished_at(tmp_path):
    store = ResultsStore(str(tmp_path))
    store.write_rows(table_for(STORAGE, [1, 2], finished_at=T0 + timedelta(hours=2), wall_s=2.0))
    store.write_rows(table_for(STORAGE, [2, 3], finished_at=T0, wall_s=1.0))
    scan = store.scan()
    assert scan.rows_read == 4 and scan.duplicates_dropped == 1
    by_seed = {r["seed"]: r for r in scan.table.to_pylist()}
    assert sorted(by_seed) == [1, 2, 3]
    assert by_seed[2]["wall_s"] == 2.0  # the later of the two rows for seed 2


def test_readers_skip_temporary_internal_and_foreign_files(tmp_path):
    store = ResultsStore(str(tmp_path))
    (path,) = store.write_rows(table_for(STORAGE, [1]))
    other = ResultsStore(str(tmp_path / "elsewhere"))
    (other_path,) = other.write_rows(table_for(STORAGE, [7]))
    data = Path(other_path).read_bytes()
    (tmp_path / "exp" / ".tmp-123-part-x.parquet").write_bytes(data)
    (tmp_path / "exp" / "_compacting.parquet").write_bytes(data)
    (tmp_path / "exp" / "notes.txt").write_text("not data")
    (tmp_path / "_staging").mkdir()
    (tmp_path / "_staging" / "part.parquet").write_bytes(data)
    scan = store.scan()
    assert [r["seed"] for r in scan.table.to_pylist()] == [1]
    assert scan.files_read == 1 and store.experiments() == ["elsewhere", "exp"]


def damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif how == "empty":
        path.write_bytes(b"")
    else:  # one flipped bit, in a data page or in the footer
        position = 200 if how == "bit flip in data" else len(data) - 100
        damaged = bytearray(data)
        damaged[position] ^= 0x01
        path.write_bytes(bytes(damaged))


@pytest.mark.parametrize("how", ["truncated", "empty", "bit flip in data", "bit flip in footer"])
def test_a_damaged_file_is_reported_and_never_read(tmp_path, how):
    store = ResultsStore(str(tmp_path))
    (good,) = store.write_rows(table_for(STORAGE, [1, 2]))
    (bad,) = store.write_rows(table_for(SERVICE, [1, 2]))
    damage(Path(bad), how)
    report = format_status(store_status(store))  # status is the reader that finds it: it says so, once
    assert "QUARANTINED" in report and Path(bad).name in report and "next sweep recomputes" in report
    (moved,) = store.quarantined()
    assert not Path(bad).exists() and moved.endswith(Path(bad).name + ".quarantined")
    assert "/_quarantine/exp/" in moved and ("-digest-" in moved)
    scan = store.scan()
    assert scan.unreadable == () and scan.files_read == 1
    assert set(scan.table.column("config_hash").to_pylist()) == {STORAGE.config_hash}
    assert "QUARANTINED" not in format_status(store_status(store))


def test_a_file_of_another_shape_is_reported(tmp_path):
    write_digest_named(tmp_path / "exp", pa.table({"experiment": ["exp"], "seed": [1]}))
    scan = ResultsStore(str(tmp_path)).scan()
    assert len(scan.unreadable) == 1 and "missing columns" in scan.unreadable[0].reason
    assert scan.table.num_rows == 0


def test_a_keys_only_file_cannot_pass_for_finished_work(tmp_path):
    store = ResultsStore(str(tmp_path))
    store.write_rows(table_for(STORAGE, [1]))
    keys_only = pa.table({"experiment": ["exp"], "config_hash": [STORAGE.config_hash], "seed": [2],
                          "finished_at": pa.array([datetime(2030, 1, 1, tzinfo=timezone.utc)],
                                                  pa.timestamp("us", tz="UTC"))})
    write_digest_named(tmp_path / "exp", keys_only)
    scan = store.scan()
    assert scan.keys() == {("exp", STORAGE.config_hash, 1)}
    assert len(scan.unreadable) == 1 and "missing columns" in scan.unreadable[0].reason


def test_a_file_without_a_digest_in_its_name_is_not_trusted(tmp_path):
    import pyarrow.parquet as pq
    store = ResultsStore(str(tmp_path))
    (path,) = store.write_rows(table_for(STORAGE, [1]))
    pq.write_table(pq.read_table(path), tmp_path / "exp" / "copied.parquet")
    scan = store.scan()
    assert scan.rows_read == 1 and "no content digest" in scan.unreadable[0].reason


def test_a_file_of_an_older_schema_reads_its_later_columns_as_null(tmp_path):
    from ray_jobs.schema import LATER_COLUMNS
    table = table_for(STORAGE, [1])
    older = table.drop_columns(["retry_policy", "cas_throttle_per_s", "cas_throttled"])
    assert {"retry_policy", "cas_throttle_per_s", "cas_throttled"} <= set(LATER_COLUMNS)
    write_digest_named(tmp_path / "exp", older)
    scan = ResultsStore(str(tmp_path)).scan()
    assert not scan.unreadable and scan.table.column("cas_throttled").to_pylist() == [None]
    assert set(scan.missing_columns) == {"retry_policy", "cas_throttle_per_s", "cas_throttled"}


def test_concurrent_readers_never_see_a_partial_file(tmp_path):
    store = ResultsStore(str(tmp_path))
    tables = [table_for(STORAGE, range(10 * i + 1, 10 * i + 11)) for i in range(15)]
    problems, scans, done = [], [0], threading.Event()

    def read_continuously():
        while not done.is_set():
            scan = store.scan()
            scans[0] += 1
            if scan.unreadable or scan.table.num_rows % 10:
                problems.append((scan.unreadable, scan.table.num_rows))

    reader = threading.Thread(target=read_continuously)
    reader.start()
    try:
        for table in tables:
            store.write_rows(table)
    finally:
        done.set()
        reader.join()
    assert problems == [] and scans[0] > 1
    assert store.scan().table.num_rows == 150


def test_a_writer_killed_mid_write_leaves_only_complete_files(tmp_path):
    # A real process writing as fast as it can, killed at an arbitrary moment.
    script = textwrap.dedent(f"""
        import itertools, sys
        sys.path.insert(0, {str(REPO_ROOT)!r})
        from datetime import datetime, timezone
        from simcore import SimConfig, simulate
        from ray_jobs.schema import make_row, rows_to_table
        from ray_jobs.store import ResultsStore
        config = SimConfig(provider="s3x", duration_s=1200, runtime_median_ms=20000, inter_arrival_scale_ms=1000)
        (metrics,) = simulate(config, seeds=[1])
        store = ResultsStore({str(tmp_path)!r})
        print("ready", flush=True)
        for seed in itertools.count(1):
            rows = [make_row("exp", config, dict(metrics, seed=seed * 100 + i), package_version="0",
                             git_revision=None, wall_s=0.0, finished_at=datetime.now(timezone.utc))
                    for i in range(100)]
            store.write_rows(rows_to_table(rows))
    """)
    writer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 60
        while len(list((tmp_path / "exp").glob("part-*.parquet"))) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    scan = ResultsStore(str(tmp_path)).scan()
    assert scan.unreadable == ()
    assert scan.files_read >= 5 and scan.table.num_rows == 100 * scan.files_read


@pytest.mark.parametrize("name", ["", "a/b", "_internal", ".hidden"])
def test_experiment_names_that_readers_would_skip_are_refused(tmp_path, name):
    rows = rows_for(STORAGE, [1])
    rows[0]["experiment"] = name
    with pytest.raises(StoreError, match="experiment: .* is not allowed"):
        ResultsStore(str(tmp_path)).write_rows(rows_to_table(rows))


# -- status -----------------------------------------------------------------

def test_status_counts_configs_done_of_the_latest_plan(tmp_path):
    store = ResultsStore(str(tmp_path))
    other = STORAGE.replace(num_tables=5)
    never_run = STORAGE.replace(num_tables=7)
    store.write_plan("exp", {"config_hashes": [STORAGE.config_hash, other.config_hash, never_run.config_hash],
                             "seeds": [1, 2], "quick": False})
    store.write_rows(table_for(STORAGE, [1, 2], finished_at=T0))
    store.write_rows(table_for(other, [1], finished_at=T0 + timedelta(minutes=5)))
    (status,) = store_status(store).experiments
    assert (status.planned_done, status.planned_configs, status.rows, status.seeds) == (1, 3, 3, (1, 2))
    assert status.last_update == T0 + timedelta(minutes=5)
    report = format_status(store_status(store))
    assert "1/3 x seeds 1-2" in report and "2026-01-01 00:05:00" in report


def test_status_command_exit_codes(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    empty = subprocess.run([sys.executable, "-m", "ray_jobs", "status", "--store", str(tmp_path / "none")],
                           capture_output=True, text=True, env=env, cwd=tmp_path)
    assert empty.returncode == 2 and "no such directory" in empty.stderr  # a typo in --store is not an empty store
    (tmp_path / "e").mkdir()
    empty = subprocess.run([sys.executable, "-m", "ray_jobs", "status", "--store", str(tmp_path / "e")],
                           capture_output=True, text=True, env=env, cwd=tmp_path)
    assert empty.returncode == 0 and "nothing stored yet" in empty.stdout
    (tmp_path / "f").write_text("not a store")
    a_file = subprocess.run([sys.executable, "-m", "ray_jobs", "status", "--store", str(tmp_path / "f")],
                            capture_output=True, text=True, env=env, cwd=tmp_path)
    assert a_file.returncode == 2 and "is a file" in a_file.stderr
    store = ResultsStore(str(tmp_path / "s"))
    (path,) = store.write_rows(table_for(STORAGE, [1]))
    damage(Path(path), "truncated")
    damaged = subprocess.run([sys.executable, "-m", "ray_jobs", "status", "--store", str(tmp_path / "s")],
                             capture_output=True, text=True, env=env, cwd=tmp_path)
    assert damaged.returncode == 0 and "QUARANTINED" in damaged.stdout  # healed, and said so once
    again = subprocess.run([sys.executable, "-m", "ray_jobs", "status", "--store", str(tmp_path / "s")],
                           capture_output=True, text=True, env=env, cwd=tmp_path)
    assert again.returncode == 0 and "QUARANTINED" not in again.stdout


def test_seed_ranges_are_compact():
    assert format_seeds((1, 2, 3, 5, 7, 8)) == "1-3,5,7-8"
    assert format_seeds((4,)) == "4" and format_seeds(()) == "-"


# -- S3 ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def s3_endpoint():
    """A real S3-compatible server (moto, its writes atomic: probe_servers) on a loopback port, with one bucket."""
    try:
        server = MotoServer()
    except RuntimeError as error:
        pytest.fail(f"the S3 test server (moto, from the 'moto[server]' test dependency): {error}")
    try:
        pafs.S3FileSystem(endpoint_override=server.endpoint, scheme="http", region="us-east-1", access_key="testing",
                          secret_key="testing", allow_bucket_creation=True).create_dir("results-bucket")
        yield server.endpoint
    finally:
        server.stop()


@pytest.fixture
def s3_env(s3_endpoint, monkeypatch):
    env = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_REGION": "us-east-1", "AWS_ENDPOINT_URL": s3_endpoint, "AWS_EC2_METADATA_DISABLED": "true"}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


def test_s3_store_writes_reads_and_rewrites_through_a_real_s3_server(s3_env, s3_endpoint, request):
    uri = f"s3://results-bucket/{request.node.name}"
    store = ResultsStore(uri)
    assert store.location() == uri
    store.write_plan("exp4c", {"config_hashes": [STORAGE.config_hash], "seeds": [1, 2], "quick": True})
    store.write_rows(table_for(STORAGE, [1, 2], experiment="exp4c", finished_at=T0))
    store.write_rows(table_for(STORAGE, [1, 2], experiment="exp4c", finished_at=T0 + timedelta(hours=1)))
    store.write_rows(table_for(SERVICE, [1], experiment="exp4a"))
    fresh = ResultsStore(uri)  # a new reader, as another process would be
    scan = fresh.scan()
    assert scan.unreadable == () and scan.duplicates_dropped == 0
    assert sorted(scan.keys()) == sorted([("exp4c", STORAGE.config_hash, 1), ("exp4c", STORAGE.config_hash, 2),
                                          ("exp4a", SERVICE.config_hash, 1)])
    assert len(fresh.data_files("exp4c")) == 1  # the rewrite replaced the first file
    assert fresh.read_plan("exp4c")["seeds"] == [1, 2]
    # Only final objects exist: no temporary ones were left behind.
    s3 = pafs.S3FileSystem(endpoint_override=s3_endpoint, scheme="http", region="us-east-1",
                           access_key="testing", secret_key="testing")
    names = [info.base_name for info in s3.get_file_info(pafs.FileSelector(f"results-bucket/{request.node.name}",
                                                                             recursive=True))
             if info.type == pafs.FileType.File]
    assert sorted(n.split("-")[0] for n in names) == ["_sweep.json", "part", "part"]


def test_s3_damaged_object_is_reported_and_status_command_reads_s3(s3_env, s3_endpoint, request):
    uri = f"s3://results-bucket/{request.node.name}"
    store = ResultsStore(uri)
    (path,) = store.write_rows(table_for(STORAGE, [1, 2], experiment="exp4c"))
    store.write_rows(table_for(SERVICE, [1], experiment="exp4c"))
    s3 = pafs.S3FileSystem(endpoint_override=s3_endpoint, scheme="http", region="us-east-1",
                           access_key="testing", secret_key="testing")
    with s3.open_input_file(path) as source:
        data = source.read()
    with s3.open_output_stream(path) as out:  # as a torn upload by some other tool would look
        out.write(data[:-50])
    result = subprocess.run([sys.executable, "-m", "ray_jobs", "status", "--store", uri], capture_output=True,
                            text=True, env={**os.environ, **s3_env, "PYTHONPATH": str(REPO_ROOT)})
    assert result.returncode == 0, result.stderr  # healed: reported once, moved aside
    assert "exp4c" in result.stdout and "QUARANTINED" in result.stdout
    (moved,) = store.quarantined()
    assert moved.startswith(f"results-bucket/{request.node.name}/_quarantine/exp4c/") and "-digest-" in moved
    scan = ResultsStore(uri).scan()
    assert scan.unreadable == () and scan.keys() == {("exp4c", SERVICE.config_hash, 1)}


# -- credentials in the store URI ---------------------------------------------------------------------------

URI_SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYzSECRET"  # an AWS-style secret key: "/" and "+" among its letters


def credentialed_uri(endpoint: str, prefix: str, secret: str = URI_SECRET) -> str:
    """An s3:// store URI that names its own keys and endpoint, as pyarrow reads them (moto takes any keys)."""
    return (f"s3://testing:{quote(secret, safe='')}@results-bucket/{prefix}?endpoint_override="
            f"{endpoint.split('://', 1)[1]}&scheme=http&region=us-east-1")


def without_aws_environment() -> dict:
    """This process's environment without AWS settings: only the URI can say where the store is."""
    return {**{key: value for key, value in os.environ.items() if not key.startswith("AWS_")},
            "AWS_EC2_METADATA_DISABLED": "true", "PYTHONPATH": str(REPO_ROOT)}


@pytest.fixture
def bare_aws_env(monkeypatch):
    for key in [key for key in os.environ if key.startswith("AWS_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


def test_a_store_uri_s_keys_and_endpoint_are_used_and_never_shown(s3_endpoint, bare_aws_env, request):
    uri = credentialed_uri(s3_endpoint, request.node.name)
    store = ResultsStore(uri)
    store.write_rows(table_for(STORAGE, [1], experiment="exp4c"))
    assert ResultsStore(uri).scan().keys() == {("exp4c", STORAGE.config_hash, 1)}
    assert store.location() == redact(uri) and URI_SECRET not in store.location() and "testing" not in store.location()
    assert store.location().startswith("s3://***@results-bucket/") and "endpoint_override=" in store.location()
    result = subprocess.run([sys.executable, "-m", "commit_sweeps", "status", "--store", uri], capture_output=True,
                            text=True, env=without_aws_environment(), timeout=120)
    assert result.returncode == 0, result.stderr
    assert "exp4c" in result.stdout and f"store: {redact(uri)}" in result.stdout
    for secret in (URI_SECRET, quote(URI_SECRET, safe="")):
        assert secret not in result.stdout + result.stderr


@pytest.mark.parametrize("spelling", ["encoded", "raw"])
def test_a_store_that_cannot_be_opened_says_so_without_its_keys(spelling, bare_aws_env):
    secret = quote(URI_SECRET, safe="") if spelling == "encoded" else URI_SECRET  # raw: pyarrow cannot parse it
    for uri in (f"s3://testing:{secret}@results-bucket/p?region=us-east-1&no_such_option=1",
                f"s3://testing:{secret}@results-bucket/p?region=us-east-1&endpoint_override=h:1:2:3"):
        with pytest.raises(StoreError) as refused:
            ResultsStore(uri).check_usable()
        assert "secret" not in str(refused.value).lower() and "wJal" not in str(refused.value), str(refused.value)
        assert "s3://***@results-bucket/p" in str(refused.value)


def test_status_of_an_unreachable_store_is_one_line_without_its_keys():
    uri = credentialed_uri(f"http://127.0.0.1:{free_port()}", "p")
    result = subprocess.run([sys.executable, "-m", "commit_sweeps", "status", "--store", uri], capture_output=True,
                            text=True, env=without_aws_environment(), timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: cannot read the results store "
                                                                       "'s3://***@results-bucket/p?")
    assert "wJal" not in result.stderr and "testing" not in result.stderr


# -- a remote store that does not answer, refuses the keys, or is not there ---------------------------------

def _command(argv, env=None, patch: str = "") -> tuple[subprocess.CompletedProcess, float]:
    """``commit-sweeps argv`` as its own process (``patch``: Python run first, to shorten a wait), timed."""
    code = f"import sys\n{patch}\nfrom commit_sweeps.cli import main\nsys.exit(main(sys.argv[1:]))"
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120,
                            env=env or without_aws_environment())
    return result, time.monotonic() - started


@pytest.mark.parametrize("command", [["status"], ["dashboard", "compare"], ["dashboard", "build", "--out", "SITE"]])
def test_a_bucket_that_does_not_exist_is_named_not_read_as_an_empty_store(s3_endpoint, command, tmp_path):
    uri = credentialed_uri(s3_endpoint, "p").replace("@results-bucket/", "@no-such-bucket/")
    argv = [part.replace("SITE", str(tmp_path / "site")) for part in command]
    result, _ = _command([*argv, "--store", uri])
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"error: cannot read the results store {redact(uri)!r}: the bucket "
                                    f"no-such-bucket does not exist"), result.stderr
    assert not (tmp_path / "site").exists() and "wJal" not in result.stderr


def test_an_empty_prefix_of_a_bucket_that_exists_is_still_an_empty_store(s3_endpoint, request):
    result, _ = _command(["status", "--store", credentialed_uri(s3_endpoint, f"{request.node.name}-empty")])
    assert result.returncode == 0 and "nothing stored yet" in result.stdout, result.stderr


@pytest.fixture(scope="module")
def s3_refusing_keys():
    """moto's S3 server checking credentials: the keys a URI names are unknown to it, so every request is a 403."""
    server = MotoServer(auth=True)
    try:
        yield server.endpoint
    finally:
        server.stop()


@pytest.mark.parametrize("command", [["status"], ["dashboard", "compare"], ["dashboard", "build", "--out", "SITE"]])
def test_a_store_that_refuses_the_keys_is_one_line_about_the_store(s3_refusing_keys, command, tmp_path):
    uri = credentialed_uri(s3_refusing_keys, "p")
    argv = [part.replace("SITE", str(tmp_path / "site")) for part in command]
    result, _ = _command([*argv, "--store", uri])
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"error: cannot read the results store {redact(uri)!r}: ")
    assert "ACCESS_DENIED" in result.stderr and "--out" not in result.stderr and "wJal" not in result.stderr


def test_a_failure_reading_the_store_in_dashboard_build_is_not_blamed_on_out(tmp_path, monkeypatch, capsys):
    import dashboards.site
    from commit_sweeps import dashboard_command
    from commit_sweeps.cli import main

    def refused(uri):
        raise PermissionError(13, "Permission denied", uri)  # as a library may raise it, unwrapped

    monkeypatch.setattr(dashboard_command, "read_store", refused)
    monkeypatch.setattr(dashboards.site, "read_store", refused)
    assert main(["dashboard", "build", "--store", str(tmp_path / "store"), "--out", str(tmp_path / "site")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: cannot read the results store ") and "--out" not in err, err
    assert not (tmp_path / "site").exists()


@pytest.fixture
def silent_server():
    """A loopback port whose server takes connections (the kernel's backlog) and never answers a byte."""
    import socket

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        yield server.getsockname()[1]


@pytest.mark.parametrize("command", [["status"], ["dashboard", "compare"]])
def test_a_store_that_never_answers_is_one_line_within_the_stated_time(silent_server, command):
    uri = f"gs://anonymous@bucket/p?scheme=http&endpoint_override=127.0.0.1:{silent_server}"
    result, seconds = _command([*command, "--store", uri], patch="import ray_jobs.store\n"
                                                                 "ray_jobs.store.STORE_ANSWER_S = 2.0")
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith(f"error: cannot read the results store {redact(uri)!r}: it did not answer "
                                    f"within 2 s"), result.stderr
    assert seconds < 30, seconds  # the wait, the interpreter's start and its exit: not GCS's 15 minutes of retries


def test_a_gcs_store_retries_a_failing_request_for_a_bounded_time():
    from ray_jobs import store

    limit = lambda uri: ResultsStore(uri)._fs.__reduce__()[1][0]["retry_time_limit"].total_seconds()
    assert limit("gs://anonymous@bucket/p") == store.GCS_RETRY_LIMIT_S < store.STORE_ANSWER_S
    assert limit("gs://anonymous@bucket/p?scheme=http&endpoint_override=h:1") == store.GCS_RETRY_LIMIT_S
    assert limit("gs://anonymous@bucket/p?retry_limit_seconds=300") == 300  # the URI's own limit is kept
    assert ResultsStore("gs://anonymous@bucket/p?scheme=http").location() == "gs://***@bucket/p?scheme=http"
