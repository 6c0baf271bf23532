"""The conditional write's latency at one client (simcore/fit/write_fit.py): fitted so that read + write matches
the one-client op, with a base read slower than the op allows capped first."""

from __future__ import annotations

import pathlib
from dataclasses import replace

import pytest

from simcore.fit import READ_SHARE_CAP, capped_read, fit_write, read_table, simulated_stats
from simcore.providers import PROVIDERS, OperationLatency

SEED000 = str(pathlib.Path(__file__).resolve().parents[1] / "simcore" / "measured" / "seed000_conditional_writes.csv")


def test_the_write_is_fitted_so_that_read_plus_write_matches_one_clients_op():
    truth = replace(PROVIDERS["s3"], name="truth", cas=OperationLatency(median_ms=40.0, sigma=0.2))
    one, = simulated_stats(truth, "cas", [1], 300.0, seed=11)
    median_ms, sigma = fit_write(PROVIDERS["s3"], one)  # the same read as the truth's: the write is what is left
    assert median_ms == pytest.approx(40.0, rel=0.05)
    assert sigma == pytest.approx(0.2, abs=0.08)  # seen only through read + write: loosely identified
    slower = replace(one, mean_ms=1.5 * one.mean_ms, p50_ms=1.5 * one.p50_ms, p95_ms=1.5 * one.p95_ms,
                     p99_ms=1.5 * one.p99_ms)
    assert fit_write(PROVIDERS["s3"], slower)[0] > 1.5 * median_ms  # the read stays: the write takes the rest


def test_a_base_read_slower_than_the_measured_op_allows_is_capped():
    # GCS: the reference read's 200 ms median against seed 000's 173 ms median read-then-write op.
    one = read_table(SEED000, "gcp")["cas"][0]
    gcp = PROVIDERS["gcp"]
    assert gcp.read_median_ms > READ_SHARE_CAP * one.p50_ms
    capped = capped_read(gcp, one)
    assert capped.read_median_ms == pytest.approx(READ_SHARE_CAP * one.p50_ms)
    assert replace(capped, read_median_ms=gcp.read_median_ms) == gcp  # nothing else changes
    s3 = PROVIDERS["s3"]
    assert capped_read(s3, read_table(SEED000, "s3")["cas"][0]) is s3  # a read within the cap is kept as it is
