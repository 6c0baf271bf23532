"""The store heals: a file that fails its digest, schema or key checks is quarantined (out of every
reader's and every glob's way, named with why and when), reported once, and its runs recomputed; the
DuckDB and pandas recipes of docs/guide/sweeps.md count every key once after kills, quarantine and resume."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from simcore import SimConfig, simulate
from ray_jobs.fanout import SweepPlan, find_work
from ray_jobs.schema import make_row, rows_to_table
from ray_jobs.status import format_status, store_status
from ray_jobs.store import QUARANTINE_FOLDER, ResultsStore
from store_fixtures import write_digest_named

REPO_ROOT = Path(__file__).resolve().parents[1]
FAST = dict(duration_s=1200, runtime_median_ms=20_000, inter_arrival_scale_ms=1000, provider="s3x")
CONFIGS = [SimConfig(num_tables=n, **FAST) for n in (1, 2, 3)]
NOW = datetime.now(timezone.utc).replace(microsecond=0)


def rows(config, seeds, experiment="exp", finished_at=NOW):
    return rows_to_table([make_row(experiment, config, m, package_version="0", git_revision=None, wall_s=0.0,
                                   finished_at=finished_at) for m in simulate(config, seeds=seeds)])


def flip_footer_bit(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) - 100] ^= 0x01
    path.write_bytes(bytes(data))


def test_a_one_bit_flip_is_quarantined_by_the_dashboard_build_and_its_runs_recomputed(tmp_path):
    store = ResultsStore(str(tmp_path / "s"))
    store.write_rows(rows(CONFIGS[0], [1, 2]))
    (bad,) = store.write_rows(rows(CONFIGS[1], [1, 2]))
    flip_footer_bit(Path(bad))
    build = subprocess.run([sys.executable, "-m", "dashboards", "build", "--store", str(tmp_path / "s"),
                            "--out", str(tmp_path / "site")], capture_output=True, text=True, cwd=REPO_ROOT)
    assert build.returncode == 0, build.stderr
    assert Path(bad).name in build.stderr and "moved to" in build.stderr
    (moved,) = store.quarantined()
    name = moved.rsplit("/", 1)[1]
    assert name.endswith(Path(bad).name + ".quarantined") and "-digest-" in name
    assert datetime.strptime(name.split("-", 1)[0], "%Y%m%dT%H%M%SZ")  # named with when
    # The next sweep sees its runs as missing, and nothing else.
    work = find_work([SweepPlan("exp", tuple(CONFIGS[:2]), (1, 2))], store)
    assert {(u.config.config_hash, u.seed) for u in work.todo} == {(CONFIGS[1].config_hash, 1),
                                                                  (CONFIGS[1].config_hash, 2)}
    assert work.unreadable == ()  # reported once, by the build that moved it
    again = subprocess.run([sys.executable, "-m", "dashboards", "build", "--store", str(tmp_path / "s"),
                            "--out", str(tmp_path / "site")], capture_output=True, text=True, cwd=REPO_ROOT)
    assert again.returncode == 0 and "moved to" not in again.stderr


def test_a_foreign_file_with_a_string_seed_hides_no_good_row_and_leaves(tmp_path):
    store = ResultsStore(str(tmp_path))
    store.write_rows(rows(CONFIGS[0], [1, 2, 3]))
    foreign = rows(CONFIGS[1], [1]).to_pylist()
    foreign[0]["seed"] = "one"
    write_digest_named(tmp_path / "exp", pa.Table.from_pylist(foreign))
    scan = store.scan()
    assert scan.table.num_rows == 3 and len(scan.unreadable) == 1
    assert "-schema-" in scan.unreadable[0].quarantined_to


@pytest.mark.parametrize("case, slug", [("future", "keys"), ("other_experiment", "keys"),
                                        ("keys_only", "schema"), ("renamed", "keys")])
def test_files_failing_their_key_checks_are_quarantined(tmp_path, case, slug):
    store = ResultsStore(str(tmp_path))
    store.write_rows(rows(CONFIGS[0], [1]))
    if case == "future":  # a 2030 finished_at would make status say "last update 2030"
        write_digest_named(tmp_path / "exp", rows(CONFIGS[1], [1], finished_at=datetime(2030, 1, 1, tzinfo=timezone.utc)))
    elif case == "other_experiment":
        write_digest_named(tmp_path / "exp", rows(CONFIGS[1], [1], experiment="exp4c"))
    elif case == "keys_only":
        table = rows(CONFIGS[1], [1]).select(["experiment", "config_hash", "seed", "finished_at"])
        write_digest_named(tmp_path / "exp", table)
    else:  # a store file renamed onto other keys: its name's keys digest no longer matches its rows
        (path,) = ResultsStore(str(tmp_path / "x")).write_rows(rows(CONFIGS[1], [1]))
        digest = Path(path).name.rsplit("-", 1)[1]
        (tmp_path / "exp" / f"part-{'0' * 20}-{digest}").write_bytes(Path(path).read_bytes())
    report = format_status(store_status(store))
    assert "QUARANTINED" in report and "2030-01-01 00:00:00" not in report  # not the last update
    (moved,) = store.quarantined()
    assert f"-{slug}-" in moved and f"/{QUARANTINE_FOLDER}/exp/" in moved
    assert store.scan().keys() == {("exp", CONFIGS[0].config_hash, 1)}


def test_a_rewrite_whose_writer_died_before_deleting_the_old_file_leaves_one(tmp_path):
    store = ResultsStore(str(tmp_path))
    (old,) = store.write_rows(rows(CONFIGS[0], [1, 2], finished_at=NOW - timedelta(hours=1)))
    kept = Path(old).read_bytes()
    (new,) = store.write_rows(rows(CONFIGS[0], [1, 2]))
    Path(old).write_bytes(kept)  # as if deleting it had never happened
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    scan = store.scan()
    assert scan.rows_read == 2 and scan.duplicates_dropped == 0
    assert not Path(old).exists() and Path(new).exists()


def _duckdb_count(store_dir: Path) -> tuple[int, int]:
    import duckdb

    # The recipe of docs/guide/sweeps.md.
    query = f"""
        SELECT count(*), count(DISTINCT (experiment, config_hash, seed)) FROM (
            SELECT * FROM read_parquet('{store_dir}/**/*.parquet', union_by_name = true)
            QUALIFY row_number() OVER (PARTITION BY experiment, config_hash, seed ORDER BY finished_at DESC) = 1)
    """
    return duckdb.sql(query).fetchone()


def _pandas_count(store_dir: Path) -> tuple[int, int]:
    import pandas as pd

    # The recipe of docs/guide/sweeps.md.
    frame = pd.read_parquet(store_dir)
    frame = frame.sort_values("finished_at").drop_duplicates(["experiment", "config_hash", "seed"], keep="last")
    return len(frame), len(frame[["experiment", "config_hash", "seed"]].drop_duplicates())


def test_duckdb_and_pandas_recipes_count_every_key_once_after_kills_quarantine_and_resume(tmp_path):
    store_dir = tmp_path / "store"
    # 1. A writer killed at an arbitrary moment, mid-write.
    script = textwrap.dedent(f"""
        import itertools
        from datetime import datetime, timezone
        from simcore import SimConfig, simulate
        from ray_jobs.schema import make_row, rows_to_table
        from ray_jobs.store import ResultsStore
        config = SimConfig(**{FAST!r})
        (metrics,) = simulate(config, seeds=[1])
        store = ResultsStore({str(store_dir)!r})
        print("ready", flush=True)
        for batch in itertools.count(0):
            table = rows_to_table([make_row("exp", config, dict(metrics, seed=batch * 10 + i + 1), package_version="0",
                                            git_revision=None, wall_s=0.0, finished_at=datetime.now(timezone.utc))
                                   for i in range(10)])
            store.write_rows(table)
            store.write_rows(table)  # a rewrite of the same keys: replace, then delete the old file
    """)
    writer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=REPO_ROOT)
    try:
        assert writer.stdout.readline().strip() == "ready"
        deadline = time.monotonic() + 60
        while len(list((store_dir / "exp").glob("part-*.parquet"))) < 8 and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait()
    # The seeds written, before the damage hides any (the truncated file may hold the newest).
    top = max(seed for _, _, seed in ResultsStore(str(store_dir)).scan(heal=False).keys())
    # 2. Damage: a truncated file, a foreign file, a stray temporary file as a killed writer leaves one.
    files = sorted((store_dir / "exp").glob("part-*.parquet"))
    # Truncate a file whose keys no other file holds: killed between a rewrite and its clean-up, the
    # writer can leave two files of the same keys, and damaging one of them loses nothing.
    keys_of = [f.name.rsplit("-", 1)[0] for f in files]
    truncated = next(f for f, keys in zip(files, keys_of) if keys_of.count(keys) == 1)
    files.remove(truncated)
    files.insert(0, truncated)
    truncated.write_bytes(truncated.read_bytes()[:100])
    pq.write_table(pq.read_table(files[1]), store_dir / "exp" / "copied.parquet")
    (store_dir / "exp" / f".tmp-0123-{files[2].name}.partial").write_bytes(files[2].read_bytes()[:50])
    # 3. Resume: the store heals on reading; the missing runs are recomputed and written.
    config = SimConfig(**FAST)
    plan = SweepPlan("exp", (config,), tuple(range(1, top + 1)))
    work = find_work([plan], ResultsStore(str(store_dir)))
    assert len(work.unreadable) == 2 and all(bad.quarantined_to for bad in work.unreadable)
    assert len(work.todo) >= 10  # the truncated file's rows at least
    (metrics,) = simulate(config, seeds=[1])
    ResultsStore(str(store_dir)).write_rows(rows_to_table([
        make_row("exp", config, dict(metrics, seed=u.seed), package_version="0", git_revision=None, wall_s=0.0,
                 finished_at=datetime.now(timezone.utc)) for u in work.todo]))
    assert find_work([plan], ResultsStore(str(store_dir))).todo == ()
    # 4. Every reader counts each key once; the quarantine and temporary files are seen by none.
    assert _duckdb_count(store_dir) == (top, top)
    assert _pandas_count(store_dir) == (top, top)
    import duckdb
    raw = duckdb.sql(f"SELECT count(*) FROM read_parquet('{store_dir}/**/*.parquet', union_by_name = true)")
    assert raw.fetchone()[0] == top  # even without the dedup step: no duplicate file is left


@pytest.mark.parametrize("damage", ["wrong_digest", "zero_bytes"])
@pytest.mark.parametrize("command", ["status", "dashboard_build"])
def test_a_damaged_file_under_a_good_files_stem_is_quarantined_and_the_good_file_kept(tmp_path, damage, command):
    # The superseded-file cleanup must verify the newer file before it deletes the older, good one.
    store = ResultsStore(str(tmp_path / "s"))
    (good,) = store.write_rows(rows(CONFIGS[0], [1, 2, 3]))
    stem = Path(good).name.rsplit("-", 1)[0]
    shadow = Path(good).with_name(f"{stem}-{'0' * 32}.parquet")
    shadow.write_bytes(Path(good).read_bytes() if damage == "wrong_digest" else b"")
    os.utime(shadow, (time.time() + 60, time.time() + 60))  # newer than the good file
    argv = (["status", "--store", str(tmp_path / "s")] if command == "status"
            else ["dashboard", "build", "--store", str(tmp_path / "s"), "--out", str(tmp_path / "site")])
    done = subprocess.run([sys.executable, "-m", "commit_sweeps", *argv], capture_output=True, text=True,
                          cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr
    assert Path(good).exists() and not shadow.exists()
    (moved,) = store.quarantined()
    assert moved.endswith(shadow.name + ".quarantined")
    assert store.scan().table.num_rows == 3


def test_a_foreign_file_that_shadows_good_keys_with_a_later_finish_is_quarantined(tmp_path):
    # A file named outside the writer's scheme must never override good values.
    store = ResultsStore(str(tmp_path))
    store.write_rows(rows(CONFIGS[0], [1, 2]))
    forged = rows(CONFIGS[0], [1, 2], finished_at=NOW + timedelta(hours=1)).to_pylist()
    for row in forged:
        row["throughput_cps"] = 999999.0
    import hashlib
    sink = pa.BufferOutputStream()
    pq.write_table(rows_to_table(forged), sink)
    data = sink.getvalue().to_pybytes()
    (tmp_path / "exp" / f"part-mine-{hashlib.sha256(data).hexdigest()[:32]}.parquet").write_bytes(data)
    scan = store.scan()
    assert scan.table.num_rows == 2 and 999999.0 not in scan.table.column("throughput_cps").to_pylist()
    (bad,) = scan.unreadable
    assert "not written by the results store" in bad.reason and "-foreign-" in bad.quarantined_to


def test_a_castable_wrong_type_is_not_read_as_the_schemas(tmp_path):
    # A seed stored as text ("1") must be refused, not cast silently.
    store = ResultsStore(str(tmp_path))
    store.write_rows(rows(CONFIGS[0], [1]))
    table = rows(CONFIGS[1], [2])
    table = table.set_column(table.schema.get_field_index("seed"), "seed", table.column("seed").cast(pa.string()))
    write_digest_named(tmp_path / "exp", table)
    scan = store.scan()
    assert scan.keys() == {("exp", CONFIGS[0].config_hash, 1)}
    (bad,) = scan.unreadable
    assert "column seed has type string, expected int64" in bad.reason and "-schema-" in bad.quarantined_to


# -- frequent flushes, merged as the sweep goes -----------------------------------------------------------

from ray_jobs import fanout  # noqa: E402
from ray_jobs.fanout import RowCollector  # noqa: E402
from store_fixtures import contract_row  # noqa: E402


def one_row(seed, experiment="exp", **metrics):
    config = {"provider": "s3", "num_tables": 1, "fast_append_ratio": 0.9, "inter_arrival_scale_ms": 100.0}
    return rows_to_table([contract_row(experiment, config, seed, {"throughput_cps": 2.0, **metrics})])


def test_a_collector_writes_each_flush_and_keeps_its_small_files_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(fanout, "MERGE_FILES", 3)  # tiers of 1, 3, 9 and 27 rows in 30 flushes
    store = ResultsStore(str(tmp_path))
    collector = RowCollector(store, flush_interval_s=0.0)
    most = 0
    for seed in range(1, 31):
        collector.add(one_row(seed))
        collector.flush_if_due()
        files = store.data_files("exp")
        most = max(most, len(files))
        assert collector.files_written == len(files)
        if seed % 10 == 0:
            assert len(store.scan(heal=False).keys()) == seed  # every finished run is in the store at once
    # A counter in base 3: at most 2 files per tier; 30 = 1*27 + 1*3.
    assert most <= 2 * 4 and len(files) == 2
    collector.flush(final=True)
    (merged,) = store.data_files("exp")
    scan = store.scan()
    assert scan.table.num_rows == 30 and scan.duplicates_dropped == 0 and scan.unreadable == ()


def test_the_collectors_default_flush_is_seconds_not_half_a_minute():
    assert RowCollector(ResultsStore("unused")).flush_interval_s <= 5.0


def test_a_merge_killed_before_deleting_its_parts_loses_and_duplicates_nothing(tmp_path):
    store = ResultsStore(str(tmp_path))
    parts = [path for seed in (1, 2, 3) for path in store.write_rows(one_row(seed))]
    # Killed after writing the merged file, before deleting the parts it replaces:
    (merged,) = store.write_rows(pa.concat_tables([one_row(seed) for seed in (1, 2, 3)]))
    scan = store.scan()
    assert scan.table.num_rows == 3 and scan.rows_read == 3 and scan.duplicates_dropped == 0
    assert store.data_files("exp") == [merged] and not any(os.path.exists(path) for path in parts)
    assert store.quarantined() == []


def test_a_damaged_merged_file_is_quarantined_and_its_parts_kept(tmp_path):
    store = ResultsStore(str(tmp_path))
    parts = [path for seed in (1, 2, 3) for path in store.write_rows(one_row(seed))]
    (merged,) = store.write_rows(pa.concat_tables([one_row(seed) for seed in (1, 2, 3)]))
    flip_footer_bit(Path(merged))
    scan = store.scan()
    assert scan.table.num_rows == 3 and len(scan.unreadable) == 1 and "-digest-" in scan.unreadable[0].quarantined_to
    assert sorted(store.data_files("exp")) == sorted(parts)


def test_a_file_whose_rows_differ_is_never_deleted_as_a_copy(tmp_path):
    store = ResultsStore(str(tmp_path))
    (small,) = store.write_rows(pa.concat_tables([one_row(1), one_row(2)]))
    other = pa.concat_tables([one_row(1, throughput_cps=3.0), one_row(2), one_row(3)])
    (big,) = store.write_rows(other)
    scan = store.scan()
    assert sorted(store.data_files("exp")) == sorted([small, big])  # seed 1 differs: both kept
    assert scan.table.num_rows == 3 and scan.duplicates_dropped == 2


def test_merge_files_merges_verified_files_and_leaves_a_damaged_one_to_the_readers(tmp_path):
    store = ResultsStore(str(tmp_path))
    parts = [path for seed in (1, 2, 3) for path in store.write_rows(one_row(seed))]
    flip_footer_bit(Path(parts[2]))
    (merged,) = store.merge_files(parts)
    assert sorted(store.data_files("exp")) == sorted([merged, parts[2]])
    scan = store.scan()
    assert len(scan.keys()) == 2 and len(scan.unreadable) == 1  # seed 3 counts as missing: rerun


def _two_copies_of_the_same_keys(tmp_path, first_finished, second_finished):
    """Two verified files of CONFIGS[0]'s keys, as a writer killed between writing and deleting leaves them."""
    store = ResultsStore(str(tmp_path / "s"))
    (first,) = store.write_rows(rows(CONFIGS[0], [1, 2], finished_at=first_finished))
    kept_aside = Path(first).read_bytes()
    (second,) = store.write_rows(rows(CONFIGS[0], [1, 2], finished_at=second_finished))  # deletes the first
    Path(first).write_bytes(kept_aside)
    return store, Path(first), Path(second)


@pytest.mark.parametrize("reader", ["status", "scan_without_healing"])
def test_of_two_files_of_the_same_keys_the_later_finished_is_kept_whatever_the_mtimes(tmp_path, reader):
    # A copy, rsync or restore gives the later-finished file the older modification time.
    store, earlier, later = _two_copies_of_the_same_keys(tmp_path, NOW - timedelta(hours=1), NOW)
    os.utime(later, (time.time() - 3600, time.time() - 3600))
    os.utime(earlier, (time.time(), time.time()))
    if reader == "status":
        done = subprocess.run([sys.executable, "-m", "commit_sweeps", "status", "--store", str(tmp_path / "s")],
                              capture_output=True, text=True, cwd=REPO_ROOT)
        assert done.returncode == 0, done.stderr
        assert later.exists() and not earlier.exists()
        table = store.scan(heal=False).table
    else:
        table = store.scan(heal=False).table
        assert later.exists() and earlier.exists()  # only reported, nothing deleted
    assert set(table.column("finished_at").to_pylist()) == {NOW}
    assert table.num_rows == 2


def test_a_file_with_any_row_newer_than_the_kept_file_is_not_deleted(tmp_path):
    store, first, second = _two_copies_of_the_same_keys(tmp_path, NOW - timedelta(hours=1), NOW)
    # Rewrite the first copy so one of its rows finished after the second file's.
    mixed = rows(CONFIGS[0], [1, 2], finished_at=NOW - timedelta(hours=1)).to_pylist()
    mixed[0]["finished_at"] = NOW + timedelta(minutes=5)
    first.unlink()
    mixed_path = write_digest_named(tmp_path / "s" / "exp", rows_to_table(mixed))
    assert mixed_path.name.rsplit("-", 1)[0] == second.name.rsplit("-", 1)[0]  # the same keys
    table = store.scan().table
    assert mixed_path.exists() and second.exists()  # neither proven redundant: both kept
    latest = {row["seed"]: row["finished_at"] for row in table.to_pylist()}
    assert latest == {mixed[0]["seed"]: NOW + timedelta(minutes=5), mixed[1]["seed"]: NOW}


def _status(store_dir: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "commit_sweeps", "status", "--store", str(store_dir)],
                          capture_output=True, text=True, cwd=REPO_ROOT)


def test_healing_never_moves_or_deletes_files_behind_a_link_to_a_folder_outside_the_store(tmp_path):
    elsewhere = tmp_path / "elsewhere" / "data"
    foreign = write_digest_named(elsewhere, rows(CONFIGS[0], [1]))
    foreign = foreign.rename(foreign.with_name("notours.parquet"))  # fails verification: foreign name
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "exp").symlink_to(elsewhere, target_is_directory=True)
    done = _status(tmp_path / "s")
    assert done.returncode == 1, done.stderr  # a file left unreadable in place
    assert foreign.exists()  # reported, left where it is
    assert "UNREADABLE" in done.stdout and "notours.parquet" in done.stdout
    assert not (tmp_path / "s" / QUARANTINE_FOLDER).exists()


@pytest.mark.parametrize("as_link", [False, True])
def test_a_data_file_larger_than_any_the_store_writes_is_quarantined_without_reading_it(tmp_path, as_link):
    from ray_jobs.store import MAX_DATA_FILE_BYTES
    store = ResultsStore(str(tmp_path / "s"))
    store.write_rows(rows(CONFIGS[0], [1]))
    big = tmp_path / ("big.bin" if as_link else f"s/exp/part-{'a' * 20}-{'b' * 32}.parquet")
    with open(big, "wb") as out:
        out.truncate(MAX_DATA_FILE_BYTES + 1)  # sparse: no disk, but its size says what it is
    if as_link:
        (tmp_path / "s" / "exp" / f"part-{'a' * 20}-{'b' * 32}.parquet").symlink_to(big)
    done = _status(tmp_path / "s")
    assert done.returncode == 0, done.stderr
    assert "QUARANTINED" in done.stdout and "too large" in done.stdout
    (moved,) = store.quarantined()
    assert "-size-" in moved
    assert big.exists() == as_link  # a link is moved, never what it points at
    assert store.scan().table.num_rows == 1


def test_the_writer_splits_rows_that_would_make_a_file_larger_than_a_reader_verifies(tmp_path, monkeypatch):
    import ray_jobs.store as store_module
    store = ResultsStore(str(tmp_path))
    table = rows(CONFIGS[0], [1, 2, 3, 4])
    one_file = store.write_rows(table)
    size = Path(one_file[0]).stat().st_size
    monkeypatch.setattr(store_module, "MAX_DATA_FILE_BYTES", size - 1)
    fresh = ResultsStore(str(tmp_path / "other"))
    written = fresh.write_rows(table)
    assert len(written) >= 2 and all(Path(path).stat().st_size <= size for path in written)
    scan = fresh.scan()
    assert scan.table.num_rows == 4 and not scan.unreadable


@pytest.mark.parametrize("plan", ['"a string"', "[1, 2]", '{"config_hashes": []}', '{"seeds": "1", "config_hashes": []}',
                                  "[" * 100_000 + "]" * 100_000, '{"seeds": [1], "config_hashes": [' + "[" * 40 + "]" * 40 + "]}",
                                  "{not json"])
def test_a_plan_that_is_not_one_is_quarantined_and_status_still_answers(tmp_path, plan):
    store = ResultsStore(str(tmp_path / "s"))
    store.write_rows(rows(CONFIGS[0], [1, 2]))
    (tmp_path / "s" / "exp" / "_sweep.json").write_text(plan)
    done = _status(tmp_path / "s")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "QUARANTINED" in done.stdout and "_sweep.json" in done.stdout and "no plan recorded" in done.stdout
    assert not (tmp_path / "s" / "exp" / "_sweep.json").exists()
    (moved,) = store.quarantined()
    assert "-document-" in moved
    assert len(done.stdout.splitlines()) < 10  # one line for the plan, not the document


def test_a_knee_summary_nested_too_deep_is_quarantined_and_the_dashboard_still_builds(tmp_path):
    store = ResultsStore(str(tmp_path / "s"))
    store.write_rows(rows(CONFIGS[0], [1, 2]))
    (tmp_path / "s" / "_knee").mkdir()
    (tmp_path / "s" / "_knee" / "exp.json").write_text("[" * 100_000 + "]" * 100_000)
    build = subprocess.run([sys.executable, "-m", "commit_sweeps", "dashboard", "build", "--store",
                            str(tmp_path / "s"), "--out", str(tmp_path / "site")],
                           capture_output=True, text=True, cwd=REPO_ROOT)
    assert build.returncode == 0, build.stderr
    assert "Traceback" not in build.stderr
    assert not (tmp_path / "s" / "_knee" / "exp.json").exists()
    assert any(path.endswith("exp.json.quarantined") for path in store.quarantined())


def test_status_shows_control_characters_in_a_shared_stores_names_escaped(tmp_path):
    store = ResultsStore(str(tmp_path / "s"))
    store.write_rows(rows(CONFIGS[0], [1], experiment="exp"))
    (tmp_path / "s" / "exp").rename(tmp_path / "s" / "evil\x1b[2J\x1b[31mRED")
    (tmp_path / "s" / "two\nlines").mkdir()
    done = _status(tmp_path / "s")
    assert "\x1b" not in done.stdout + done.stderr
    assert "two\nlines" not in done.stdout
