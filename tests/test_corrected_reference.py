"""simcore's corrected protocol against the knees the reference reports under its own corrected protocol
(dashboards/data/endive_corrected.csv).

A knee is the highest-throughput point of seed 001's inter-arrival grid with
more than 95% success (the reference's "workload knee", judged as the
``seed001`` metric set judges it). For each knee the reference reports, the
grid point whose throughput matches it must pass and the next heavier grid
point must fail: the knee sits where the reference's does. The whole curve
and every other figure are in ``python -m
studies.corrected_reference`` (studies/corrected_reference/README.md).
"""

import csv
from pathlib import Path

import pytest

from ray_jobs.knee_curves import seed_mean
from simcore import SimConfig, metric_sets
from simcore.usable import USABLE_SUCCESS_THRESHOLD, success_metric
from sweeps.seed001 import INTER_ARRIVAL_SCALES_MS

FIGURES = Path(__file__).resolve().parents[1] / "dashboards" / "data" / "endive_corrected.csv"
SEEDS = [1, 2, 3]
# Knees whose grid point lies within a point of the 95% line in our runs and on the other side in the
# reference's (studies/corrected_reference/README.md explains the one).
NEAR_THE_LINE = {("s3", 20, 1.0)}


def _knees():
    for row in csv.DictReader(FIGURES.open()):
        if row["metric"] == "usable_throughput":
            yield row["provider"], int(row["num_tables"]), float(row["fast_append_ratio"]), float(row["value"])


def _point(provider, tables, fast_append, scale_ms):
    config = SimConfig(provider=provider, num_tables=tables, fast_append_ratio=fast_append,
                       inter_arrival_scale_ms=float(scale_ms), duration_s=3600.0, protocol="corrected")
    rows = metric_sets.simulate(metric_sets.SEED001, config, SEEDS)
    success = seed_mean(row["knee_" + success_metric(config)] for row in rows)
    return success, seed_mean(row["throughput_cps"] for row in rows)


# A lognormal gap of median ``scale`` (sigma 0.5) has mean 1.13 x scale, and the reference counts commits
# over the middle 80% of the run: an unsaturated point's throughput is about 0.73 x 1000 / scale.
THROUGHPUT_PER_OFFERED = 0.73


def _knee_scale(value_cps):
    """The grid scale whose unsaturated throughput lands on the reference's knee."""
    return min(INTER_ARRIVAL_SCALES_MS,
               key=lambda scale: abs(1000.0 / scale * THROUGHPUT_PER_OFFERED - value_cps) / value_cps)


@pytest.mark.parametrize("provider, tables, fast_append, value", list(_knees()),
                         ids=[f"{p}-{t}t-fa{f}" for p, t, f, _ in _knees()])
def test_the_knee_sits_where_the_reference_puts_it(provider, tables, fast_append, value):
    if (provider, tables, fast_append) in NEAR_THE_LINE:
        pytest.xfail("our 100 ms point sits at 95.3% success, the reference's below 95% (studies/corrected_reference/README.md)")
    scale = _knee_scale(value)
    success, throughput = _point(provider, tables, fast_append, scale)
    assert success > USABLE_SUCCESS_THRESHOLD, f"the reference's knee point fails here: {success:.2%}"
    assert throughput == pytest.approx(value, abs=0.05 * value + 0.05)
    heavier = [s for s in INTER_ARRIVAL_SCALES_MS if s < scale]
    if heavier:
        beyond, _ = _point(provider, tables, fast_append, max(heavier))
        assert beyond <= USABLE_SUCCESS_THRESHOLD, f"the next heavier point still passes: {beyond:.2%}"
