"""How a fit scores a profile against the rows (simcore/fit/scoring.py): the loss, and the rows it compares."""

from __future__ import annotations

import math
import pathlib
from dataclasses import replace

import pytest

from simcore.fit import FIT_CLIENTS, compared_rows, fit_operation, mismatch, read_table
from simcore.providers import PROVIDERS

SEED000 = str(pathlib.Path(__file__).resolve().parents[1] / "simcore" / "measured" / "seed000_conditional_writes.csv")


def test_the_loss_is_zero_on_the_rows_themselves_and_one_for_a_tolerance_off():
    rows = [s for s in read_table(SEED000, "s3")["cas"] if s.clients <= 3]
    assert mismatch(rows, rows) == 0.0
    # Goodput 3% high at every count (its tolerance): about one unit.
    high = [replace(s, goodput_ops=s.goodput_ops * 1.03) for s in rows]
    assert mismatch(high, rows) == pytest.approx((math.log(1.03) / 0.03) ** 2)
    # Where only the pooled failed / successful latency ratio is known, it is compared too (tolerance 25%).
    pooled = sum(s.mean_ms * s.successes for s in rows) / sum(s.successes for s in rows)
    slow = [replace(s, failed_mean_ms=2.0 * pooled) for s in rows]
    assert mismatch(slow, rows, failed_ratio=2.0) == pytest.approx(0.0, abs=1e-12)
    assert mismatch(slow, rows, failed_ratio=1.0) == pytest.approx((math.log(2.0) / 0.25) ** 2)


def test_a_fit_compares_every_row_of_a_few_client_counts():
    # Rows at 1, 3, 5 and 7 clients are all data: the fit once kept only those at FIT_CLIENTS (1 and 3 here).
    rows = [s for s in read_table(SEED000, "s3")["cas"] if s.clients in (1, 3, 5, 7)]
    report = {}
    fitted, _ = fit_operation(PROVIDERS["s3"], "cas", rows, observed_at=0.0, max_evaluations=3, report=report)
    assert fitted.cas.fitted_clients == (1, 3, 5, 7)
    assert report["cas"].fitted_clients == (1, 3, 5, 7)
    # All sixteen of seed 000's counts: the eight the simulations compare, as before.
    assert [s.clients for s in compared_rows(read_table(SEED000, "s3")["cas"])] == list(FIT_CLIENTS)
