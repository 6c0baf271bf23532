"""What each commit design is for, held as properties of the model (docs/architectures.md), on s3 with FA 100%
unless named otherwise: a REST catalog scales with tables, DuckLake does not, group commit takes an order of
magnitude more writers, and Iceberg v4's root manifest beats v3 on every store.

Each usable figure is a searched knee (``simcore.bisection``) of one seed's curve over a short run; the
properties hold with room to spare, so seed noise does not decide them.
"""

import pytest

from simcore.bisection import SearchRange, search_sequentially
from simcore.builder import build_config
from simcore.simulate import simulate
from simcore.usable import MeasuredPoint, passes, success_metric
from ray_jobs.knee_curves import counted_success, measured_point

SHORT = dict(duration_s=1900.0)  # the default runtime's steady-state window (900 s warm-up), 100 s long
RANGE = SearchRange(4.0, 20_000.0, 0.05)


def measured(config) -> MeasuredPoint:
    row, = simulate(config, seeds=[1])
    return measured_point(config.inter_arrival_scale_ms or 0.0, config, [row])


def usable_cps(**fields) -> tuple[float, float]:
    """(usable throughput, the throughput of the failing load above it, or infinity at the range's end)."""
    step, _ = search_sequentially(lambda scale: measured(build_config(inter_arrival_scale_ms=scale, **SHORT,
                                                                       **fields)), RANGE)
    assert step.knee is not None, fields
    return step.knee.throughput_cps, step.failing.throughput_cps if step.failing else float("inf")


def test_a_rest_catalog_takes_five_times_the_commits_over_ten_tables():
    one, _ = usable_cps(catalog="rest", num_tables=1)
    ten, _ = usable_cps(catalog="rest", num_tables=10)
    assert ten >= 5 * one, (one, ten)


def test_ducklake_takes_no_more_over_ten_tables_than_over_one():
    one, _ = usable_cps(catalog="ducklake", client="ducklake", num_tables=1)
    ten, _ = usable_cps(catalog="ducklake", client="ducklake", num_tables=10)
    assert abs(ten / one - 1) <= 0.15, (one, ten)


def writers_pass(writers: int, **fields) -> bool:
    config = build_config(writers=writers, **SHORT, **fields)
    row, = simulate(config, seeds=[1])
    return passes(counted_success(row, success_metric(config)))


def test_group_commit_every_10_s_takes_ten_times_the_writers_of_the_storage_catalog_at_60_s():
    def writers_at(scale_ms):  # the load of a writers search: writers = interval / scale
        count = max(1, round(60_000.0 / scale_ms))
        return MeasuredPoint(scale_ms, 1.0 if writers_pass(count, catalog="storage", commit_interval_s=60.0)
                             else 0.0, count / 60.0)

    step, _ = search_sequentially(writers_at, SearchRange(60_000.0 / 20_000, 60_000.0, 0.05))
    storage_writers = round(60_000.0 / step.knee.scale_ms)
    assert 10 <= storage_writers < 20_000
    assert writers_pass(10 * storage_writers, catalog="storage", commit_interval_s=60.0, group_commit_s=10.0)


@pytest.mark.parametrize("provider", ["s3", "s3x", "azure", "azurex", "gcp", "r2"])
@pytest.mark.parametrize("catalog", ["storage", "rest"])
def test_v4_root_manifests_beat_v3_per_table_on_every_store(provider, catalog):
    """v4 passes at the load past v3's knee: its usable throughput is above v3's."""
    v3, _ = usable_cps(provider=provider, catalog=catalog, num_tables=1)
    step, _ = search_sequentially(lambda scale: measured(build_config(
        provider=provider, catalog=catalog, num_tables=1, metadata_format="v4", inter_arrival_scale_ms=scale,
        **SHORT)), RANGE)
    assert step.knee.throughput_cps > v3, (provider, catalog, v3, step.knee.throughput_cps)
