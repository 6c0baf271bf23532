"""The dashboard's read of the results store: the store's one reader, its columns, its errors.

Reading rules themselves (digests, schema, duplicates, temporary files) are
the store's and are tested in test_store.py; here, what the dashboard gets.
"""

import datetime as dt
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dashboards.snapshot import READ_COLUMNS, StoreError, read_store, store_signature
from ray_jobs.store import ResultsStore
from store_fixtures import contract_row, write_digest_named, write_store_file

UTC = dt.timezone.utc


def row(experiment="exp4c", seed=1, scale_ms=100.0, throughput_cps=5.0, finished_at=None, **config_fields):
    config = {"provider": "s3", "num_tables": 1, "inter_arrival_scale_ms": scale_ms, **config_fields}
    return contract_row(experiment, config, seed, {"success_rate": 1.0, "throughput_cps": throughput_cps},
                        finished_at=finished_at)


def test_reads_every_experiment_as_plain_rows_with_iso_times(tmp_path):
    write_store_file(str(tmp_path), "exp4c", [row(seed=1), row(seed=2)])
    write_store_file(str(tmp_path), "exp4c", [row(seed=3)])
    write_store_file(str(tmp_path), "exp4a", [row("exp4a", catalog="service", catalog_latency_ms=10.0)])
    snapshot = read_store(str(tmp_path))
    assert snapshot.files_read == 3
    assert [(r["experiment"], r["seed"]) for r in snapshot.rows] == [
        ("exp4a", 1), ("exp4c", 1), ("exp4c", 2), ("exp4c", 3)]
    exp4a = snapshot.rows[0]
    assert set(exp4a) == set(READ_COLUMNS)
    assert exp4a["catalog_latency_ms"] == 10.0 and exp4a["catalog"] == "service"
    assert exp4a["finished_at"] == "2025-01-01T00:00:00+00:00"


def test_the_dashboard_and_the_sweeps_read_the_same_rows(tmp_path):
    early, late = dt.datetime(2025, 1, 1, tzinfo=UTC), dt.datetime(2025, 3, 1, tzinfo=UTC)
    write_store_file(str(tmp_path), "exp4c", [row(seed=1, throughput_cps=1.0, finished_at=late), row(seed=2)])
    write_store_file(str(tmp_path), "exp4c", [row(seed=1, throughput_cps=2.0, finished_at=early)])
    (tmp_path / "exp4c" / "torn.parquet").write_bytes(b"PAR1 this is not a parquet file")
    scan = ResultsStore(str(tmp_path)).scan(heal=False)  # reports it, leaves it for the dashboard to find
    snapshot = read_store(str(tmp_path))
    assert [(r["seed"], r["throughput_cps"]) for r in snapshot.rows] == \
        sorted(zip(scan.table.column("seed").to_pylist(), scan.table.column("throughput_cps").to_pylist()))
    assert snapshot.duplicates_dropped == scan.duplicates_dropped == 1
    assert [item.path for item in snapshot.skipped_files] == [item.path for item in scan.unreadable]
    assert snapshot.skipped_files[0].path.endswith("torn.parquet")


def test_a_foreign_parquet_file_hides_no_good_row(tmp_path):
    write_store_file(str(tmp_path), "exp4c", [row(seed=1), row(seed=2)])
    foreign = pa.Table.from_pylist([{**row(seed=3), "seed": "three"}])
    write_digest_named(tmp_path / "exp4c", foreign)
    snapshot = read_store(str(tmp_path))
    assert [r["seed"] for r in snapshot.rows] == [1, 2]
    assert len(snapshot.skipped_files) == 1


def test_a_file_the_store_did_not_write_is_not_trusted(tmp_path):
    write_store_file(str(tmp_path), "exp4c", [row(seed=1)])
    pq.write_table(pa.Table.from_pylist([row(seed=2)]), str(tmp_path / "exp4c" / "handmade.parquet"))
    snapshot = read_store(str(tmp_path))
    assert [r["seed"] for r in snapshot.rows] == [1]
    assert "no content digest" in snapshot.skipped_files[0].reason


def test_an_empty_store_is_empty_not_an_error(tmp_path):
    snapshot = read_store(str(tmp_path))
    assert snapshot.is_empty and snapshot.files_read == 0


def test_a_missing_local_store_is_an_error_naming_it(tmp_path):
    with pytest.raises(StoreError, match="no such directory") as raised:
        read_store(str(tmp_path / "nope"))
    assert str(tmp_path / "nope") in str(raised.value)


def test_a_store_that_is_a_file_is_an_error(tmp_path):
    (tmp_path / "results").write_text("not a store")
    with pytest.raises(StoreError, match="is a file"):
        read_store(str(tmp_path / "results"))


def test_a_store_with_only_unreadable_files_is_an_error_unless_they_were_quarantined(tmp_path, monkeypatch):
    os.makedirs(tmp_path / "exp4c")
    (tmp_path / "exp4c" / "bad.parquet").write_bytes(b"garbage")
    # A store the dashboard cannot heal (read-only to it): its bad files stay, and say so.
    monkeypatch.setattr(ResultsStore, "_quarantine", lambda self, path, reason: None)
    with pytest.raises(StoreError, match="none of its 1 data files could be read"):
        read_store(str(tmp_path))
    monkeypatch.undo()
    snapshot = read_store(str(tmp_path))  # healed: an empty store, with the file named once
    assert snapshot.rows == () and snapshot.skipped_files[0].quarantined_to.endswith("bad.parquet.quarantined")
    assert read_store(str(tmp_path)).skipped_files == ()


def test_a_file_uri_reads_like_a_path(tmp_path):
    write_store_file(str(tmp_path), "exp4c", [row()])
    assert len(read_store("file://" + str(tmp_path)).rows) == 1


def test_an_unknown_uri_scheme_is_an_error_not_a_traceback():
    with pytest.raises(StoreError, match="cannot be opened"):
        read_store("nosuchscheme://bucket/prefix")


def test_the_default_store_follows_sweeps_store(monkeypatch):
    from commit_sweeps.dashboard_command import _parser

    monkeypatch.delenv("SWEEPS_STORE", raising=False)
    assert _parser().parse_args(["build"]).store == "./results"
    monkeypatch.setenv("SWEEPS_STORE", "s3://bucket/results")
    assert _parser().parse_args(["compare"]).store == "s3://bucket/results"


def test_the_signature_changes_when_a_file_lands_or_a_summary_is_written(tmp_path):
    write_store_file(str(tmp_path), "exp4c", [row(seed=1)])
    before = store_signature(str(tmp_path))
    assert store_signature(str(tmp_path)) == before
    write_store_file(str(tmp_path), "exp4c", [row(seed=2)])
    after_rows = store_signature(str(tmp_path))
    assert after_rows != before
    ResultsStore(str(tmp_path)).write_knee_summary("exp4c_knee", {"curves": []})
    assert store_signature(str(tmp_path)) != after_rows


def test_knee_summaries_are_read_and_a_bad_one_carries_its_reason(tmp_path):
    store = ResultsStore(str(tmp_path))
    store.write_knee_summary("exp4c_knee", {"curves": [{"status": "found"}]})
    (tmp_path / "_knee" / "exp4b.json").write_text("{not json")
    summaries = read_store(str(tmp_path)).knee_summaries
    by_experiment = {summary.experiment: summary for summary in summaries}
    assert by_experiment["exp4c_knee"].content == {"curves": [{"status": "found"}]}
    assert by_experiment["exp4b_knee"].content is None and "JSONDecodeError" in by_experiment["exp4b_knee"].problem
