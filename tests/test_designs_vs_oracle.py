"""The commit designs (docs/architectures.md) in the compiled engine against the scalar oracle, in distribution.

tests/test_engine_vs_oracle.py's test, on the designs: both sides run each config on independent random
streams, six seeds each, and every metric's two seed-means must agree within 5 standard errors of their
difference (plus the same small slack for metrics at a bound). Five or more configs per design: a REST
catalog (v3 and v4), the storage catalog with v4 root manifests, DuckLake, Unity Catalog and group commit,
across stores, table counts, mixes, clients, writers and a database that serves one commit at a time near
its ceiling (a queue), each at a load where commits conflict.

To keep the oracle's share short, each run simulates little more than the shortest duration a config
allows (twice the 300 s warm-up) and is summarised over nearly all of it (``WINDOW_S``) rather than the
steady-state window: the comparison is of two implementations of one model, both started empty, so their
first minutes agree as well as their steady state.
"""

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import replace

import pytest

from oracle import Oracle
from simcore import SimConfig, engine
from simcore.builder import build_config
from simcore.catalog_databases import CatalogDatabase
from simcore.metrics import summarize
from simcore.profiles import canonical_json
from simcore.providers import PROVIDERS, OperationLatency
from simcore.simulate import run_seed
from test_engine_vs_oracle import METRICS, SEEDS, _check, _per_txn

DESIGN = dict(runtime_median_ms=2000.0, runtime_sigma=0.5, runtime_min_ms=500.0, duration_s=610.0)
WINDOW_S = (20.0, 590.0)
# A catalog database that serves one commit at a time, slowly (100 ms median): a few commits a second reach
# its ceiling (about 9 a second) and wait in its queue. Configs carry it as its JSON (a probed database's form).
SLOW_DATABASE = CatalogDatabase("slow-serial", 100.0, 0.3, 30.0, 1, "tests: one server, a slow commit")
SLOW = SLOW_DATABASE.to_json()
# Heavy-tailed writes (median 20 ms, sigma 1.5): a Unity table's publication now and then lags several commits.
HEAVY_WRITES = canonical_json(replace(PROVIDERS["s3x"], name="heavy-writes", write_base_ms=20.0,
                                      write_ms_per_mib=0.0, write_sigma=1.5, cas=OperationLatency(22.0, 0.22),
                                      append=None))


def _configs():
    rest = dict(catalog="rest", **DESIGN)
    unity = dict(client="delta-kernel", catalog="unity", **DESIGN)
    return {
        # -- REST catalog: a pointer per table, a catalog service over a database ---------------------------
        "rest: s3, 1 table, FA": SimConfig(provider="s3", num_tables=1, inter_arrival_scale_ms=400, **rest),
        "rest: s3x, 4 tables zipf, FA/VO, real conflicts": SimConfig(
            provider="s3x", num_tables=4, table_distribution="zipf", fast_append_ratio=0.6,
            real_conflict_probability=0.3, inter_arrival_scale_ms=200, **rest),
        "rest: a one-server database near its ceiling, s3x, 8 tables": SimConfig(
            provider="s3x", num_tables=8, catalog_database=SLOW, inter_arrival_scale_ms=300, **rest),
        "rest: iceberg-java, s3, 2 tables, real conflicts, tight budget": build_config(
            client="iceberg-java", provider="s3", num_tables=2, fast_append_ratio=0.7, real_conflict_probability=0.3,
            retry_budget_ms=1500.0, inter_arrival_scale_ms=300, **rest),
        "rest: iceberg-java's traced commit through a JdbcCatalog, s3, 1 table, 20 ms away": build_config(
            client="iceberg-java", provider="s3", num_tables=1, rest_metadata_writer="client",
            catalog_latency_ms=20.0, inter_arrival_scale_ms=500, **rest),
        "rest: iceberg-java's traced commit, 12 writers every 2 s on 1 table, 20 ms away, s3": build_config(
            client="iceberg-java", provider="s3", num_tables=1, writers=12, commit_interval_s=2.0,
            catalog_latency_ms=20.0, **rest),
        "rest: iceberg-java's retries, the corrected attempt's four requests, s3": build_config(
            client="iceberg-java", provider="s3", num_tables=1, traced_commit=None, inter_arrival_scale_ms=400,
            **rest),
        "rest: 10 writers every 3 s on 2 tables, azure": SimConfig(
            provider="azure", num_tables=2, writers=10, commit_interval_s=3.0, **rest),
        "rest: r2, 2 tables, FA/MA": SimConfig(provider="r2", num_tables=2, fast_append_ratio=0.6,
                                               merge_append_ratio=0.4, inter_arrival_scale_ms=1500, **rest),
        # -- REST catalog with Iceberg v4 root manifests ------------------------------------------------------
        "rest-v4: s3, 1 table, FA": SimConfig(provider="s3", num_tables=1, metadata_format="v4",
                                              inter_arrival_scale_ms=250, **rest),
        "rest-v4: gcp, 3 tables, FA/VO/MA, real conflicts": SimConfig(
            provider="gcp", num_tables=3, metadata_format="v4", fast_append_ratio=0.5, merge_append_ratio=0.3,
            real_conflict_probability=0.3, inter_arrival_scale_ms=800, **rest),
        "rest-v4: iceberg-java, s3, 2 tables": build_config(
            client="iceberg-java", provider="s3", num_tables=2, metadata_format="v4", inter_arrival_scale_ms=250,
            **rest),
        "rest-v4: a one-server database near its ceiling, s3x, 6 tables, FA/VO": SimConfig(
            provider="s3x", num_tables=6, metadata_format="v4", catalog_database=SLOW, fast_append_ratio=0.7,
            inter_arrival_scale_ms=350, **rest),
        "rest-v4: 8 writers every 2 s on 1 table, s3": SimConfig(
            provider="s3", num_tables=1, metadata_format="v4", writers=8, commit_interval_s=2.0, **rest),
        # -- the storage catalog with Iceberg v4 root manifests -----------------------------------------------
        "storage-v4: s3, 1 table, FA": SimConfig(provider="s3", num_tables=1, metadata_format="v4",
                                                 inter_arrival_scale_ms=300, **DESIGN),
        "storage-v4: s3x, 5 tables zipf, FA/VO": SimConfig(
            provider="s3x", num_tables=5, table_distribution="zipf", metadata_format="v4", fast_append_ratio=0.5,
            inter_arrival_scale_ms=200, **DESIGN),
        "storage-v4: azure, 2 tables, MA, real conflicts": SimConfig(
            provider="azure", num_tables=2, metadata_format="v4", fast_append_ratio=0.4, merge_append_ratio=0.3,
            real_conflict_probability=0.3, inter_arrival_scale_ms=400, **DESIGN),
        "storage-v4: gcp throttled to 1 write/s, backoff": SimConfig(
            provider="gcp", num_tables=4, metadata_format="v4", cas_throttle_per_s=1.0, retry_policy="backoff",
            backoff_base_ms=300.0, inter_arrival_scale_ms=1000, **DESIGN),
        "storage-v4: iceberg-java, 10 writers every 3 s on 2 tables, s3": build_config(
            client="iceberg-java", provider="s3", num_tables=2, metadata_format="v4", writers=10,
            commit_interval_s=3.0, **DESIGN),
        "service-v4: a 10 ms catalog service, 5 tables, FA/VO": SimConfig(
            provider="s3", catalog="service", catalog_latency_ms=10.0, num_tables=5, metadata_format="v4",
            fast_append_ratio=0.7, inter_arrival_scale_ms=200, **DESIGN),
        # -- DuckLake: one snapshot id for the lake, no store I/O in a commit --------------------------------
        "ducklake: postgresql, 4 tables, FA/VO": build_config(
            client="ducklake", catalog="ducklake", num_tables=4, fast_append_ratio=0.7, inter_arrival_scale_ms=300,
            **DESIGN),
        "ducklake: a one-server database near its ceiling, 3 tables": build_config(
            client="ducklake", catalog="ducklake", catalog_database=SLOW, num_tables=3,
            inter_arrival_scale_ms=500, **DESIGN),
        "ducklake: retries at once, 2 tables, FA/VO, real conflicts": SimConfig(
            catalog="ducklake", num_tables=2, fast_append_ratio=0.5, real_conflict_probability=0.3,
            inter_arrival_scale_ms=200, **DESIGN),
        "ducklake: 20 writers every 5 s on 4 tables": build_config(
            client="ducklake", catalog="ducklake", num_tables=4, writers=20, commit_interval_s=5.0, **DESIGN),
        "ducklake: sqlite behind a 30 ms round trip, 5 tables, FA/MA": build_config(
            client="ducklake", catalog="ducklake", catalog_database="sqlite", catalog_latency_ms=30.0, num_tables=5,
            fast_append_ratio=0.6, merge_append_ratio=0.4, inter_arrival_scale_ms=250, **DESIGN),
        # -- Unity Catalog: staged commits, ratified per table, published in order ---------------------------
        "unity: delta-kernel, s3, 1 table": build_config(provider="s3", num_tables=1, inter_arrival_scale_ms=250,
                                                         **unity),
        "unity: s3x, 3 tables, FA/VO, real conflicts": build_config(
            provider="s3x", num_tables=3, fast_append_ratio=0.5, real_conflict_probability=0.3,
            inter_arrival_scale_ms=200, **unity),
        "unity: a one-server database near its ceiling, s3x, 4 tables": build_config(
            provider="s3x", num_tables=4, catalog_database=SLOW, inter_arrival_scale_ms=330, **unity),
        "unity: 10 writers every 2 s on 1 table, s3": build_config(
            provider="s3", num_tables=1, writers=10, commit_interval_s=2.0, **unity),
        "unity: reference client, s3, 2 tables, FA/MA/VO": SimConfig(
            catalog="unity", provider="s3", num_tables=2, fast_append_ratio=0.5, merge_append_ratio=0.3,
            inter_arrival_scale_ms=300, **DESIGN),
        "unity: a cap of 2 unpublished versions, heavy-tailed writes, 2 tables": build_config(
            provider="heavy-writes", provider_profile=HEAVY_WRITES, num_tables=2, inter_arrival_scale_ms=150,
            **unity),
        # -- group commit: one committer per table ------------------------------------------------------------
        "group: storage, s3, 4 tables every 1 s": SimConfig(
            provider="s3", num_tables=4, writers=40, commit_interval_s=1.0, group_commit_s=1.0, **DESIGN),
        "group: storage, gcp, 3 tables back to back": SimConfig(
            provider="gcp", num_tables=3, writers=12, commit_interval_s=1.0, group_commit_s=0.0, **DESIGN),
        "group: rest, s3, 4 tables every 1 s, FA/VO": SimConfig(
            provider="s3", num_tables=4, writers=40, commit_interval_s=1.0, group_commit_s=1.0,
            fast_append_ratio=0.5, **rest),
        "group: ducklake on a one-server database, 5 tables every 1 s": build_config(
            client="ducklake", catalog="ducklake", catalog_database=SLOW, num_tables=5, writers=50,
            commit_interval_s=1.0, group_commit_s=1.0, **DESIGN),
        "group: unity on a one-server database, 2 tables back to back, s3": build_config(
            provider="s3", catalog_database=SLOW, num_tables=2, writers=10, commit_interval_s=1.0,
            group_commit_s=0.0, **unity),
        "group: storage-v4, iceberg-java, s3x, 4 tables every 1 s": build_config(
            client="iceberg-java", provider="s3x", num_tables=4, metadata_format="v4", writers=40,
            commit_interval_s=1.0, group_commit_s=1.0, **DESIGN),
    }


CONFIGS = _configs()
# Unity Catalog's cap, lowered for the config that tests it (both sides); the others keep the engine's.
UNITY_CAPS = {"unity: a cap of 2 unpublished versions, heavy-tailed writes, 2 tables": 2}
DESIGNS = ("rest:", "rest-v4:", "storage-v4:", "ducklake:", "unity:", "group:")


@contextmanager
def _unity_cap(cap):
    """The engine's Unity Catalog cap set to ``cap`` (None: as it is) while the block runs."""
    if cap is None:
        yield
        return
    kept = engine.UNITY_UNPUBLISHED_CAP
    engine.UNITY_UNPUBLISHED_CAP = cap
    try:
        yield
    finally:
        engine.UNITY_UNPUBLISHED_CAP = kept


def _engine_summaries(config: SimConfig, cap) -> list:
    with _unity_cap(cap):
        return [summarize(config, *run_seed(config, seed), WINDOW_S) for seed in SEEDS]


def _oracle_summary(config: SimConfig, cap, seed: int) -> dict:
    oracle = Oracle(config, seed) if cap is None else Oracle(config, seed, unity_cap=cap)
    return summarize(config, *oracle.run(), WINDOW_S)


@pytest.fixture(scope="module")
def summaries():
    # As tests/test_engine_vs_oracle.py: one spawned process per core, the engine's runs first.
    with ProcessPoolExecutor(max_workers=os.cpu_count() or 1, mp_context=multiprocessing.get_context("spawn")) as pool:
        engine_runs = {name: pool.submit(_engine_summaries, config, UNITY_CAPS.get(name))
                       for name, config in CONFIGS.items()}
        oracle_runs = {(name, seed): pool.submit(_oracle_summary, config, UNITY_CAPS.get(name), seed)
                       for name, config in CONFIGS.items() for seed in SEEDS}
        return {name: (engine_runs[name].result(), [oracle_runs[name, seed].result() for seed in SEEDS])
                for name in CONFIGS}


def test_every_design_has_five_configs_or_more():
    for design in DESIGNS:
        assert sum(name.startswith(design) for name in CONFIGS) >= 5, design


@pytest.mark.parametrize("name", list(CONFIGS))
def test_engine_matches_oracle_in_distribution(summaries, name):
    engine_rows, oracle_rows = summaries[name]
    failures = []
    for metric, slack in METRICS.items():
        problem = _check([r[metric] for r in engine_rows], [r[metric] for r in oracle_rows], slack)
        if problem:
            failures.append(f"{metric}: {problem}")
    for metric in ("conflicts_same_table", "conflicts_catalog_only", "cas_throttled"):
        problem = _check([_per_txn(r, metric) for r in engine_rows], [_per_txn(r, metric) for r in oracle_rows],
                         0.002)
        if problem:
            failures.append(f"{metric} per txn: {problem}")
    assert not failures, f"{name}:\n" + "\n".join(failures)


@pytest.mark.parametrize("design", DESIGNS)
def test_each_designs_configs_exercise_contention(summaries, design):
    """Each design's spread includes commits that lose and retry, or agreement would be vacuous."""
    rows = [r for name, (engine_rows, _) in summaries.items() if name.startswith(design) for r in engine_rows]
    assert max(r["retries_mean"] for r in rows) > 0.5
    assert sum(r["conflicts_same_table"] + r["conflicts_catalog_only"] for r in rows) > 1000
    assert min(r["success_rate"] for r in rows) < 0.995 or design == "group:"


def test_the_unity_cap_refuses_commits_on_both_sides(summaries):
    for rows in summaries["unity: a cap of 2 unpublished versions, heavy-tailed writes, 2 tables"]:
        assert min(r["cas_throttled"] for r in rows) > 0
