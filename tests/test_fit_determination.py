"""The fit's report of how well the rows determine its terms (simcore/fit/determination.py)."""

from __future__ import annotations

import pathlib

from simcore.fit import fit_operation, read_table
from simcore.providers import PROVIDERS

SEED000 = str(pathlib.Path(__file__).resolve().parents[1] / "simcore" / "measured" / "seed000_conditional_writes.csv")


def test_fit_records_its_counts_and_reports_how_well_they_determine_the_terms():
    measured = [s for s in read_table(SEED000, "s3")["cas"] if s.clients <= 3]
    report = {}
    fitted, loss = fit_operation(PROVIDERS["s3"], "cas", measured, observed_at=0.0, max_evaluations=3,
                                 report=report)
    assert fitted.cas.fitted_clients == (1, 2, 3)
    spread = report["cas"]
    # Three counts: the kept fit is the equally good one whose goodput changes least, not always the best.
    assert spread.best_loss <= loss and spread.fits >= 1 and spread.at_clients == 16
    assert spread.goodput_ops[0] <= spread.best_goodput_ops <= spread.goodput_ops[1]
    assert "predict at 16 clients" in spread.lines()[0] and "contention exponent" in spread.lines()[1]
