"""The dashboard's side of the results-store contract: what it reads, skips and keeps."""

import datetime as dt
import os
import struct

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dashboards.store import StoreError, default_store_uri, read_store, store_signature
from dashboards.testing import contract_row, write_store_file

UTC = dt.timezone.utc


def row(experiment="exp4c", seed=1, scale_ms=100.0, throughput_cps=5.0, finished_at=None, **config_fields):
    config = {"provider": "s3", "num_tables": 1, "inter_arrival_scale_ms": scale_ms, **config_fields}
    return contract_row(experiment, config, seed, {"success_rate": 1.0, "throughput_cps": throughput_cps},
                        finished_at=finished_at)


def test_reads_every_data_file_of_every_experiment(tmp_path):
    write_store_file(str(tmp_path), "exp4c", [row(seed=1), row(seed=2)], name="a")
    write_store_file(str(tmp_path), "exp4c", [row(seed=3)], name="b")
    write_store_file(str(tmp_path), "exp4a", [row("exp4a", catalog="service", catalog_latency_ms=10.0)])
    snapshot = read_store(str(tmp_path))
    assert snapshot.files_read == 3
    assert sorted((r["experiment"], r["seed"]) for r in snapshot.rows) == [
        ("exp4a", 1), ("exp4c", 1), ("exp4c", 2), ("exp4c", 3)]
    exp4a = next(r for r in snapshot.rows if r["experiment"] == "exp4a")
    assert exp4a["catalog_latency_ms"] == 10.0 and exp4a["catalog"] == "service"
    assert exp4a["finished_at"] == "2025-01-01T00:00:00+00:00"


def test_ignores_internal_temporary_and_foreign_files(tmp_path):
    write_store_file(str(tmp_path), "exp4c", [row(seed=1)])
    write_store_file(str(tmp_path), "exp4c", [row(seed=2)], name="_temporary")
    write_store_file(str(tmp_path), "exp4c", [row(seed=3)], name=".part-upload")
    write_store_file(str(tmp_path), "_staging", [row(seed=4)])
    write_store_file(str(tmp_path), ".trash", [row(seed=5)])
    write_store_file(str(tmp_path / "exp4c"), "nested", [row(seed=6)])  # too deep for the layout
    (tmp_path / "exp4c" / "notes.txt").write_text("not data")
    (tmp_path / "top-level.parquet").write_bytes((tmp_path / "exp4c" / "part-0000.parquet").read_bytes())
    snapshot = read_store(str(tmp_path))
    assert [r["seed"] for r in snapshot.rows] == [1]
    assert snapshot.files_read == 1


def test_duplicate_keys_keep_the_latest_finished_row(tmp_path):
    early = dt.datetime(2025, 1, 1, tzinfo=UTC)
    late = dt.datetime(2025, 3, 1, tzinfo=UTC)
    write_store_file(str(tmp_path), "exp4c", [row(throughput_cps=1.0, finished_at=late)], name="a")
    write_store_file(str(tmp_path), "exp4c", [row(throughput_cps=2.0, finished_at=early)], name="b")
    snapshot = read_store(str(tmp_path))
    assert len(snapshot.rows) == 1
    assert snapshot.rows[0]["throughput_cps"] == 1.0
    assert snapshot.duplicates_dropped == 1


def test_a_torn_file_is_skipped_and_reported(tmp_path):
    write_store_file(str(tmp_path), "exp4c", [row(seed=1)], name="good")
    (tmp_path / "exp4c" / "torn.parquet").write_bytes(b"PAR1 this is not a parquet file")
    snapshot = read_store(str(tmp_path))
    assert [r["seed"] for r in snapshot.rows] == [1]
    assert len(snapshot.skipped_files) == 1
    assert snapshot.skipped_files[0].path.endswith("torn.parquet")


def test_a_column_that_is_all_null_in_one_file_and_typed_in_another_still_reads(tmp_path):
    # A writer inferring types from a batch where every zipf_alpha is None writes a null column.
    good = row(seed=1, table_distribution="zipf", zipf_alpha=1.5)
    write_store_file(str(tmp_path), "exp4c", [good], name="typed")
    plain = pa.Table.from_pylist([dict(row(seed=2), zipf_alpha=None, table_distribution="uniform")])
    assert plain.schema.field("zipf_alpha").type == pa.null()
    pq.write_table(plain, str(tmp_path / "exp4c" / "untyped.parquet"))
    snapshot = read_store(str(tmp_path))
    assert sorted((r["seed"], r["zipf_alpha"]) for r in snapshot.rows) == [(1, 1.5), (2, None)]
    assert not snapshot.skipped_files


def test_an_empty_store_is_empty_not_an_error(tmp_path):
    snapshot = read_store(str(tmp_path))
    assert snapshot.is_empty and snapshot.files_read == 0


def test_a_missing_local_store_is_an_error_naming_it(tmp_path):
    with pytest.raises(StoreError, match="no such directory") as raised:
        read_store(str(tmp_path / "nope"))
    assert raised.value.uri == str(tmp_path / "nope")


def test_a_store_with_only_unreadable_files_is_an_error(tmp_path):
    os.makedirs(tmp_path / "exp4c")
    (tmp_path / "exp4c" / "bad.parquet").write_bytes(b"garbage")
    with pytest.raises(StoreError, match="none of its 1 data files could be read"):
        read_store(str(tmp_path))


def test_a_parquet_dataset_that_is_not_a_results_store_is_an_error(tmp_path):
    os.makedirs(tmp_path / "exp4c")
    pq.write_table(pa.table({"a": [1, 2]}), str(tmp_path / "exp4c" / "x.parquet"))
    with pytest.raises(StoreError, match="not results-store rows: no columns"):
        read_store(str(tmp_path))


def test_a_file_uri_reads_like_a_path(tmp_path):
    write_store_file(str(tmp_path), "exp4c", [row()])
    assert len(read_store("file://" + str(tmp_path)).rows) == 1


def test_an_unknown_uri_scheme_is_an_error_not_a_traceback():
    with pytest.raises(StoreError, match="not a usable filesystem URI"):
        read_store("nosuchscheme://bucket/prefix")


def test_the_default_store_follows_sweeps_store(monkeypatch):
    monkeypatch.delenv("SWEEPS_STORE", raising=False)
    assert default_store_uri() == "./results"
    monkeypatch.setenv("SWEEPS_STORE", "s3://bucket/results")
    assert default_store_uri() == "s3://bucket/results"


def test_the_signature_changes_when_a_file_lands(tmp_path):
    write_store_file(str(tmp_path), "exp4c", [row(seed=1)], name="a")
    before = store_signature(str(tmp_path))
    assert store_signature(str(tmp_path)) == before
    write_store_file(str(tmp_path), "exp4c", [row(seed=2)], name="b")
    assert store_signature(str(tmp_path)) != before


def test_a_damaged_page_is_caught_by_its_checksum(tmp_path):
    # Plain, uncompressed pages: a flipped byte still decodes, as a wrong number.
    # Only the page checksum (which the sweeps write) can tell.
    rows = [row(seed=seed, throughput_cps=seed + 0.123456789) for seed in range(1, 50)]
    path = write_store_file(str(tmp_path), "exp4c", rows, name="damaged")
    pq.write_table(pq.read_table(path), path, write_page_checksum=True, compression="none", use_dictionary=False)
    data = bytearray(open(path, "rb").read())
    offset = data.index(struct.pack("<d", 7.123456789))
    data[offset + 7] ^= 0x01
    open(path, "wb").write(bytes(data))
    write_store_file(str(tmp_path), "exp4c", [row(seed=500)], name="good")
    snapshot = read_store(str(tmp_path))
    assert [r["seed"] for r in snapshot.rows] == [500]
    assert [os.path.basename(item.path) for item in snapshot.skipped_files] == ["damaged.parquet"]


def test_rows_without_a_grid_value_are_dropped_and_counted(tmp_path):
    write_store_file(str(tmp_path), "exp4c", [row(seed=1)], name="full")
    partial = pa.Table.from_pylist([{key: value for key, value in row(seed=2).items() if key != "provider"}])
    pq.write_table(partial, str(tmp_path / "exp4c" / "older.parquet"))
    snapshot = read_store(str(tmp_path))
    assert [r["seed"] for r in snapshot.rows] == [1]
    assert snapshot.incomplete_rows_dropped == 1
