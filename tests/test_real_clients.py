"""The parts of studies/real_clients/real_clients.py that run without the lab: reading delta-rs history entries and
the figures of a run, the SQL catalog's and the store's timings (on SQLite and moto's S3 server).

The comparison itself needs the store lab and deltalake (opt-in: python -m studies.real_clients)."""

import time
from pathlib import Path

import pytest

from studies.real_clients.measure import (Attempt, is_retry_warning, largest_passing, logged_retries, measure,
                                         tagged_retries)
from studies.real_clients.real_clients import _model_flags, point_note, time_sql_cas

ROOT = Path(__file__).resolve().parents[1]

# What deltalake 1.6.6 returns from DeltaTable.history() (newest first): the custom metadata at the top
# level, the lost conditional PUTs in operationMetrics.num_retries.
HISTORY = [
    {"timestamp": 3, "operation": "WRITE", "operationParameters": {"mode": "Append"},
     "commit_sweeps_writer": "1", "commit_sweeps_seq": "0",
     "operationMetrics": {"num_added_files": 1, "num_retries": 3, "execution_time_ms": 24}, "version": 3},
    {"timestamp": 2, "operation": "WRITE", "commit_sweeps_writer": "0", "commit_sweeps_seq": "1",
     "operationMetrics": {"num_retries": 0}, "version": 2},
    {"timestamp": 1, "operation": "WRITE", "commit_sweeps_writer": "0", "commit_sweeps_seq": "0",
     "operationMetrics": {"num_retries": 1}, "version": 1},
    {"timestamp": 0, "operation": "CREATE TABLE", "operationMetrics": {"num_retries": 0}, "version": 0},
]


def test_tagged_retries_reads_each_writers_commit_and_skips_untagged():
    assert tagged_retries(HISTORY) == {(1, 0): 3, (0, 1): 0, (0, 0): 1}


def test_tagged_retries_refuses_a_commit_without_its_count_or_twice():
    with pytest.raises(ValueError, match="writer 0 commit 1 has no operationMetrics.num_retries"):
        tagged_retries([{"commit_sweeps_writer": "0", "commit_sweeps_seq": "1", "operationMetrics": {}}])
    with pytest.raises(ValueError, match="appears twice"):
        tagged_retries(HISTORY[:1] * 2)


def test_measure_counts_raised_calls_failed_and_averages_retries_over_committed():
    attempts = [Attempt(0, 0, 0.0, 0.0, 0.2, ""), Attempt(0, 1, 1.0, 1.1, 1.5, ""),
                Attempt(1, 0, 0.5, 0.5, 0.9, ""), Attempt(1, 1, 1.5, 1.5, 3.0, "CommitFailedError")]
    m = measure(attempts, tagged_retries(HISTORY), writers=2, interval_s=1.0, duration_s=2.0)
    assert (m.attempts, m.committed, m.success_rate) == (4, 3, 0.75)
    assert m.retries_per_commit == pytest.approx(4 / 3)
    assert m.commits_per_s == 1.5
    assert m.latency_p50_ms == pytest.approx(400.0)
    assert m.lag_p99_s == pytest.approx(0.1, abs=0.01)
    assert m.raised == {"CommitFailedError": 1} and m.raised_but_committed == 0


def test_measure_refuses_a_returned_commit_missing_from_the_history():
    with pytest.raises(ValueError, match="missing from the history"):
        measure([Attempt(5, 0, 0.0, 0.0, 0.1, "")], tagged_retries(HISTORY), 1, 1.0, 1.0)


def test_largest_passing_stops_at_the_first_count_at_or_below_95_percent():
    assert largest_passing({16: 0.99, 2: 1.0, 8: 0.95, 4: 0.97}) == (4, 8)
    assert largest_passing({2: 1.0, 4: 0.999}) == (4, None)


# -- pyiceberg ---------------------------------------------------------------------------------------------

def test_logged_retries_keeps_the_calls_that_returned_and_refuses_a_missing_count():
    attempts = [Attempt(0, 0, 0.0, 0.0, 0.2, "", 0), Attempt(0, 1, 1.0, 1.0, 1.9, "", 3),
                Attempt(1, 0, 0.5, 0.5, 2.5, "CommitFailedException", 4)]
    assert logged_retries(attempts) == {(0, 0): 0, (0, 1): 3}
    m = measure(attempts, logged_retries(attempts), writers=2, interval_s=1.0, duration_s=2.0)
    assert (m.committed, m.retries_per_commit, m.raised) == (2, 1.5, {"CommitFailedException": 1})
    with pytest.raises(ValueError, match="writer 2 commit 0 logged no retry count"):
        logged_retries([Attempt(2, 0, 0.0, 0.0, 0.1, "")])


def test_only_pyiceberg_s_retry_warning_counts_as_a_retry():
    # pyiceberg 0.12.0's Transaction.commit_transaction logs this before each retry.
    assert is_retry_warning("Commit failed due to a concurrent update, retrying (2/4) in 215 ms")
    assert not is_retry_warning("Table has been updated by another process: commit_sweeps.t")
    assert not is_retry_warning("retrying (2/4)")


def test_time_sql_cas_times_a_conditional_update_on_a_real_database(tmp_path):
    pytest.importorskip("sqlalchemy")
    url = f"sqlite:///{tmp_path / 'catalog.db'}"
    median_ms = time_sql_cas(url, rounds=20)
    assert 0.0 < median_ms < 1000.0
    from sqlalchemy import create_engine, inspect
    assert "commit_sweeps_cas_probe" not in inspect(create_engine(url)).get_table_names()  # it cleans up


def test_the_model_of_each_client():
    delta = _model_flags("lab.toml", "lab-s3", "delta-rs", None)
    assert delta[delta.index("--catalog") + 1] == "storage" and "--catalog-latency-ms" not in delta
    iceberg = _model_flags("lab.toml", "lab-s3", "pyiceberg", 0.8345)
    assert iceberg[iceberg.index("--catalog") + 1] == "service"
    assert iceberg[iceberg.index("--catalog-latency-ms") + 1] == "0.835"
    assert iceberg[iceberg.index("--client") + 1] == "pyiceberg"


def test_store_read_timer_times_reads_while_work_runs_and_deletes_its_object(monkeypatch):
    from probe_servers import KEYS, MotoServer, Proxy

    from studies.real_clients.measure import read_slowdown
    from studies.real_clients.real_clients import StoreReadTimer

    server = MotoServer()
    proxy = Proxy(server.endpoint, delay_ms=5.0)  # each read at least two 5 ms hops
    try:
        server.client().create_bucket(Bucket="lab")
        for key, value in KEYS.items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("STORE_LAB_S3_URI", "s3://lab/probes")
        monkeypatch.setenv("STORE_LAB_S3_ENDPOINT", proxy.endpoint)
        timer = StoreReadTimer("timer-test")
        assert server.client().list_objects_v2(Bucket="lab", Prefix="probes/")["KeyCount"] == 1
        answer, reads = timer.during(lambda: time.sleep(0.5) or 42)
        alone = timer.alone(0.3)
        timer.close()
        assert answer == 42
        assert len(reads) >= 3 and len(alone) >= 2
        assert min(reads) >= 10.0 and min(alone) >= 10.0  # the proxy's delay, both ways
        assert 0.5 < read_slowdown(reads, alone) < 2.0
        assert server.client().list_objects_v2(Bucket="lab", Prefix="probes/")["KeyCount"] == 0
    finally:
        proxy.stop()
        server.stop()


def test_measure_splits_a_call_into_its_part_outside_the_race_and_a_retry():
    history = [{"commit_sweeps_writer": "0", "commit_sweeps_seq": str(k), "operationMetrics": {"num_retries": r}}
               for k, r in enumerate([0, 1, 3, 0])]
    attempts = [Attempt(0, k, float(k), float(k), k + (600.0 + 150.0 * r) / 1000.0, "")
                for k, r in enumerate([0, 1, 3, 0])]
    m = measure(attempts, tagged_retries(history), writers=1, interval_s=1.0, duration_s=4.0)
    assert m.call_fixed_ms == pytest.approx(600.0, abs=1e-3) and m.call_ms_per_retry == pytest.approx(150.0, abs=1e-3)
    same = measure(attempts[:1] + attempts[3:], tagged_retries(history), writers=1, interval_s=1.0, duration_s=4.0)
    # No call retried: no line, the call's mean (both took 600 ms) and no time a retry (nan).
    assert same.call_fixed_ms == pytest.approx(600.0, abs=1e-3) and same.call_ms_per_retry != same.call_ms_per_retry
    retried = measure(attempts[1:2], tagged_retries(history), writers=1, interval_s=1.0, duration_s=4.0)
    assert retried.call_fixed_ms != retried.call_fixed_ms  # one retry count above none: nothing to say


def test_an_unreachable_lab_store_stops_the_run_with_one_line_before_any_writer(monkeypatch, capsys, tmp_path):
    from probe_servers import KEYS, free_port

    from studies.real_clients.real_clients import main

    for key, value in KEYS.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("STORE_LAB_S3_URI", "s3://lab/probes")
    monkeypatch.setenv("STORE_LAB_S3_ENDPOINT", f"http://127.0.0.1:{free_port()}")  # nothing listens there
    code = main(["--lab-profile", str(ROOT / "simcore" / "measured" / "s3.toml"), "--work-dir", str(tmp_path)])
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert code == 2
    assert len(errors) == 1 and ("endpoint_url" in errors[0] or "store_uri" in errors[0]), errors
    assert not (tmp_path / "points.jsonl").exists()  # nothing measured, nothing written


def test_the_call_cpu_benchmark_stops_with_one_line_where_the_lab_store_is_not_there(monkeypatch, capsys):
    from probe_servers import KEYS, free_port

    from studies.real_clients.delta_call_cpu import main

    for key, value in KEYS.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("STORE_LAB_S3_URI", "s3://lab/probes")
    monkeypatch.setenv("STORE_LAB_S3_ENDPOINT", f"http://127.0.0.1:{free_port()}")  # nothing listens there
    assert main(["--calls", "3"]) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "endpoint_url" in errors[0], errors


def test_a_point_is_marked_where_the_lab_stops_being_the_profiles_store():
    # The retries' target applies above 0.5 a commit; the marks say which points measure the lab, not the store.
    assert point_note(0.30, 1.02, 2.0, 2.4) == "retries +20%"
    assert point_note(0.30, 1.02, 0.4, 0.9) == ""
    assert point_note(0.52, 1.05, 7.0, 6.3) == "cpu-bound retries -10%"
    assert point_note(0.49, 1.15, 7.1, 10.0) == "store-slowed retries +41%"
    assert point_note(0.10, float("nan"), 1.0, 1.0) == "retries +0%"  # no reads timed: no mark
    # The writers' call's fixed part against the model's: 1,384 ms against 1,239 at 12 writers every 4 s, 20 ms
    # each way (studies/real_clients/log.md); 2,228 against 2,230 at 10 writers every 8 s, 40 ms each way; no line: no mark.
    assert point_note(0.23, 1.07, 3.39, 1.88, 1384.0 / 1239.0) == "call-slowed retries -45%"
    assert point_note(0.06, 0.99, 0.96, 1.01, 2228.0 / 2230.0) == "retries +5%"
    assert point_note(0.23, 1.07, 3.39, 1.88, float("nan")) == "retries -45%"


def test_model_call_parts_line_up_the_models_committed_calls_as_the_run_times_its_own(tmp_path):
    # simulate's own per-transaction files: 8 delta-rs writers every 2 s on the built-in S3 profile, two seeds.
    import subprocess
    import sys

    import numpy as np
    import pyarrow.parquet as pq

    from studies.real_clients.measure import call_parts, model_call_parts

    out = tmp_path / "calls"
    subprocess.run([sys.executable, "-m", "commit_sweeps", "simulate", "--provider", "s3", "--num-tables", "1",
                    "--fast-append-ratio", "1", "--client", "delta-rs", "--catalog", "storage", "--writers", "8",
                    "--commit-interval-s", "2", "--duration-s", "3601", "--seeds", "1,2", "--window-s", "0,120",
                    "--json", "--transactions-dir", str(out)], check=True, capture_output=True, cwd=ROOT)
    files = sorted(out.glob("*.parquet"))
    assert len(files) == 2
    fixed, per_retry = model_call_parts(out, 120.0)
    # By hand from the same files: committed calls due before 120 s, from their start (due + lag) to their end.
    retries, durations = [], []
    for path in files:
        t = pq.read_table(path).to_pandas()
        t = t[(t.status == "committed") & (t.submit_ms < 120_000.0)]
        retries += t.retries.tolist()
        durations += (t.end_ms - t.submit_ms - t.lag_ms.fillna(0.0)).tolist()
    assert len(set(retries)) >= 2, "the point should have calls with different retries"
    assert (fixed, per_retry) == call_parts(retries, durations)
    # A call costs something outside the race and something per lost race; with no files there is no line.
    assert fixed > 0 and per_retry > 0
    assert all(np.isnan(model_call_parts(tmp_path / "none", 120.0)))


# -- the model of ducklake and iceberg-java ----------------------------------------------------------------

def test_a_catalog_design_the_simulator_lacks_falls_back_to_the_service_catalog_and_says_so():
    from studies.real_clients.real_clients import model_flags

    flags, note = model_flags("lab.toml", "lab-s3", "ducklake", 4.0834, design="lakehouse", num_tables=3)
    assert flags[flags.index("--catalog") + 1] == "service"
    assert flags[flags.index("--catalog-latency-ms") + 1] == "4.083"
    assert flags[flags.index("--num-tables") + 1] == "3" and flags[flags.index("--client") + 1] == "ducklake"
    assert note.startswith("--catalog lakehouse is not in this simulator: the service approximation")


def test_each_real_catalog_is_modelled_by_its_design_with_the_lab_database_this_run_timed():
    from simcore.catalog_databases import catalog_database
    from studies.real_clients.real_clients import model_flags

    def value(flags, name):
        return flags[flags.index(name) + 1]

    lake, note = model_flags("lab.toml", "lab-s3", "ducklake", 4.0834, design="ducklake", database="postgresql")
    assert value(lake, "--catalog") == "ducklake" and note == "" and value(lake, "--catalog-latency-ms") == "0.000"
    database = catalog_database(value(lake, "--catalog-database"))
    assert database.commit_median_ms == 4.0834
    assert database.concurrency == catalog_database("postgresql-ducklake").concurrency
    jdbc, _ = model_flags("lab.toml", "lab-s3", "iceberg-java", 16.0, design="jdbc")
    assert value(jdbc, "--catalog") == "rest" and value(jdbc, "--rest-metadata-writer") == "client"
    assert catalog_database(value(jdbc, "--catalog-database")).concurrency == catalog_database("sqlite").concurrency
    rest, _ = model_flags("lab.toml", "lab-s3", "iceberg-java", 16.0, design="rest")
    assert value(rest, "--catalog") == "rest" and "--rest-metadata-writer" not in rest
    # The lab's PostgreSQL behind its proxy: what the proxy adds to the timed commit is the round trip.
    proxied, _ = model_flags("lab.toml", "lab-s3", "ducklake", 1.2, design="ducklake", database="postgresql",
                             round_trip_ms=163.9)
    assert value(proxied, "--catalog-latency-ms") == "163.900"
    assert catalog_database(value(proxied, "--catalog-database")).commit_median_ms == 1.2
    sql, _ = model_flags("lab.toml", "lab-s3", "pyiceberg", 16.0, design="service")
    assert value(sql, "--catalog") == "service" and value(sql, "--catalog-latency-ms") == "16.000"


def test_an_intervals_largest_row_names_the_measured_and_the_predicted_writers():
    from studies.real_clients.real_clients import result_row

    row = result_row(("largest", 2.0, 4, 6, {"max_writers": 5, "bracket": [5, 6]}, 4), "iceberg-java")
    assert (row["kind"], row["interval_s"], row["measured"], row["predicted"]) == ("largest", 2.0, 4, 5)


def test_jvm_and_duckdb_writers_are_cpu_bound_above_a_third_of_the_cores():
    from studies.real_clients.real_clients import CPU_BOUND_SHARE_BY_CLIENT

    assert point_note(0.4, 1.0, 0.1, 0.1, cpu_bound_share=CPU_BOUND_SHARE_BY_CLIENT["iceberg-java"]) == "cpu-bound"
    assert point_note(0.4, 1.0, 0.1, 0.1) == ""  # the Python writers' threshold: half the cores
