"""The held-out check (benchmarks/holdout.py), the fitted client counts a profile records, the extrapolation
notice of bench and capacity, and the fit's report of how well the data determine its terms."""

from __future__ import annotations

import pathlib
import re
import sys
from dataclasses import replace

import pytest

from simcore import SimConfig, fit
from simcore.cli import main
from simcore.errors import ConfigError
from simcore.fit import fit_operation, read_table
from simcore.profiles import canonical_json, dump_profile, load_profile, profile_from_json
from simcore.providers import PROVIDERS, OperationLatency

REPO_ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))  # benchmarks/, as a checkout runs them

from benchmarks import holdout  # noqa: E402
from ray_jobs.capacity import extrapolation  # noqa: E402

SEED000 = str(REPO_ROOT / "simcore" / "measured" / "seed000_conditional_writes.csv")
SHIPPED_S3 = REPO_ROOT / "simcore" / "measured" / "s3.toml"


def _fitted_on(counts, name="mine"):
    base = replace(PROVIDERS["s3"], name=name)
    return base.with_conditional("cas", replace(base.cas, fitted_clients=tuple(counts)))


def test_the_fitted_client_counts_round_trip_through_the_file_and_the_config(tmp_path):
    profile = _fitted_on([1, 2, 3, 4])
    path = tmp_path / "mine.toml"
    path.write_text(dump_profile(profile))
    assert "fitted_clients = [1, 2, 3, 4]" in path.read_text()
    loaded = load_profile(str(path))
    assert loaded == profile and loaded.cas.fitted_clients == (1, 2, 3, 4)
    assert profile_from_json(canonical_json(profile)) == profile
    config = SimConfig(provider="mine", provider_profile=canonical_json(profile))
    assert config.latency_profile.cas.fitted_clients == (1, 2, 3, 4)


@pytest.mark.parametrize("value", ["[]", "[0, 1]", "[3, 1]", "[1, 1]", "[1.5]", '"1-4"', "[true]"])
def test_bad_fitted_client_counts_name_the_field(tmp_path, value):
    text = dump_profile(PROVIDERS["s3"]).replace("[cas]\n", f"[cas]\nfitted_clients = {value}\n")
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as error:
        load_profile(str(path))
    assert error.value.field == f"{path}: cas.fitted_clients"


def test_old_profiles_load_unchanged_and_say_nothing(tmp_path, capsys):
    old = load_profile(str(SHIPPED_S3))  # written before the record existed
    assert old.cas.fitted_clients is None
    assert "fitted_clients" not in canonical_json(old)
    assert main(["bench", "--provider-file", str(SHIPPED_S3), "--operation", "cas", "--clients", "1-8",
                 "--seeds", "1", "--duration-s", "10", "--json"]) == 0
    assert "extrapolate" not in capsys.readouterr().err


def test_bench_says_when_it_extrapolates_beyond_the_fitted_counts(tmp_path, capsys):
    path = tmp_path / "mine.toml"
    path.write_text(dump_profile(_fitted_on([1, 2, 4])))
    common = ["bench", "--provider-file", str(path), "--operation", "cas", "--seeds", "1", "--duration-s", "10"]
    assert main(common + ["--clients", "1-4"]) == 0  # 3 lies between fitted counts: no note
    assert "extrapolate" not in capsys.readouterr().err
    assert main(common + ["--clients", "2,6,8", "--json"]) == 0
    captured = capsys.readouterr()
    notes = [line for line in captured.err.splitlines() if "extrapolate" in line]
    assert len(notes) == 1 and "(1, 2, 4)" in notes[0] and "6, 8" in notes[0]
    assert "extrapolate" not in captured.out  # the JSON lines are unchanged


def test_capacity_says_when_its_answer_lies_beyond_the_fitted_counts():
    config = SimConfig(provider="mine", provider_profile=canonical_json(_fitted_on([1, 2, 3, 4])))
    busy = {"usable_throughput_cps": 20.0, "commit_latency_p50_ms": 400.0}  # about 8 commit at once
    note = extrapolation(config, busy)
    assert note and "8.0 transactions commit at once" in note and "(1, 2, 3, 4)" in note
    assert extrapolation(config, {"usable_throughput_cps": 5.0, "commit_latency_p50_ms": 400.0}) is None
    assert extrapolation(config, {"usable_throughput_cps": None, "commit_latency_p50_ms": None}) is None
    assert extrapolation(SimConfig(provider="s3"), busy) is False  # no record: no key, no line


def test_the_holdout_scorer_fits_on_few_counts_and_scores_the_rest(capsys):
    assert holdout.main(["--fit", "1-3", "--only", "s3:cas", "--seeds", "1", "--duration-s", "20",
                         "--max-evaluations", "3"]) == 0
    captured = capsys.readouterr()
    out = captured.out
    assert re.search(r"^s3 cas: fitted in \d+ s$", captured.err, re.M)  # each operation's fit reports its own time
    row = next(line for line in out.splitlines() if line.startswith("| s3 cas |"))
    within, held = (int(x) for x in row.split("|")[2].split("/"))
    assert held == 13 and 0 <= within <= 13  # 16 client counts, 3 of them fitted
    assert "**all**" in out
    assert holdout.main(["--fit", "2-4"]) == 2  # no one-client row: nothing to fit the write to
    assert "fit" in capsys.readouterr().err


def test_scoring_an_append_alone_still_fits_its_stores_cas_first(monkeypatch, capsys):
    # A whole run fits the CAS first, which fixes when reads observe the object for the append too
    # (fit_profile); --only STORE:append must fit what the whole run fits, and score only the append.
    fitted_ops = []

    def fake_fit_store(store, measured, fitted, max_evaluations=None, progress=None):
        fitted_ops.append((store, sorted(measured)))
        return PROVIDERS[store]

    monkeypatch.setattr(holdout, "fit_store", fake_fit_store)
    assert holdout.main(["--fit", "1-3", "--only", "s3x:append", "--seeds", "1", "--duration-s", "5"]) == 0
    assert fitted_ops == [("s3x", ["append", "cas"])]
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| s3x")]
    assert [row.split("|")[1].strip() for row in rows] == ["s3x append"]


def test_the_scorer_holds_goodput_within_10_percent_and_failures_within_5_points():
    measured = read_table(SEED000, "s3")["cas"]
    cells = [holdout.Cell(16, 15.0, 16.4, 0.90, 0.94), holdout.Cell(15, 15.0, 16.6, 0.90, 0.90),
             holdout.Cell(14, 15.0, 15.0, 0.90, 0.96)]
    assert [c.within for c in cells] == [True, False, False]
    text = holdout.drift(cells)
    assert "failure 6 points high at 14 clients" in text and "goodput 11% high at 15 clients" in text
    exact = holdout.held_out_cells(PROVIDERS["s3"], "cas", measured[:3], [1, 2], [1], 10.0)
    assert [c.clients for c in exact] == [3] and exact[0].measured_goodput == measured[2].goodput_ops


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


def test_among_equally_good_fits_the_fit_keeps_the_one_whose_goodput_changes_least(monkeypatch):
    measured = [s for s in read_table(SEED000, "s3")["cas"] if s.clients <= 3]
    flat = load_profile(str(SHIPPED_S3))  # seed 000: 15.4 op/s at 3 clients, 15.1 at 16
    falling = replace(flat, read_observed_at=0.5).with_conditional(
        "cas", replace(flat.cas, contention_in="write", contention_exponent=0.6))
    lines = []
    monkeypatch.setattr(fit, "NEAR_BEST_LOSS", 1e9)  # both count as equally good: only the prior decides
    loss, kept, _ = fit.least_change_fit("cas", [(0.2, falling), (0.9, flat)], measured, 60.0, lines.append)
    assert kept == flat and loss == 0.9  # not the lower loss: the least change beyond the rows
    assert "2 of 2 fits equally good" in lines[0] and "from 3 to 16 clients" in lines[0]
    # Fits that match the rows clearly worse over the three seeds are not candidates, however flat.
    monkeypatch.setattr(fit, "NEAR_BEST_LOSS", 1.0)
    slow = flat.with_conditional("cas", replace(flat.cas, median_ms=2 * flat.cas.median_ms))
    assert fit.least_change_fit("cas", [(0.4, flat), (0.3, slow)], measured, 60.0)[1] == flat


def test_a_fit_that_fails_nothing_where_the_rows_say_nothing_is_not_kept(monkeypatch):
    # Fitted on rows 1,7,8 of S3 Express's append, a write of almost no spread decided as it is sent put two
    # clients in lockstep: 0% failed at 2 clients, 30.7% measured. Both fits below match rows 7 and 8 about as
    # well; the lockstep one (held a little shorter) changes goodput least beyond them (96 op/s at 16 clients, 96
    # at 8 as recovered from the counts), and fails nothing at 2 clients where the rows' failures per competitor
    # (0.45) say 31%.
    rows = [s for s in read_table(SEED000, "s3x")["append"] if s.clients in (1, 7, 8)]
    base = PROVIDERS["s3x"]
    lockstep = base.with_conditional("append", OperationLatency(
        median_ms=10.04, sigma=0.003, failed_multiplier=1.06, contention_exponent=0.006, contention_sigma=0.014,
        decided_at=0.0, contention_in="read", hold_ms=10.4))
    spread = base.with_conditional("append", replace(lockstep.append, decided_at=0.17, contention_in="write",
                                                     hold_ms=10.8))
    assert fit.gap_failure_rates(lockstep, "append", [2], 60.0)[0] < 0.05
    assert fit.gap_failure_rates(spread, "append", [2], 60.0)[0] > 0.2
    monkeypatch.setattr(fit, "NEAR_BEST_LOSS", 1e9)  # both count as equally good: only the prior decides
    lines = []
    assert fit.least_change_fit("append", [(0.1, lockstep), (0.2, spread)], rows, 60.0, lines.append)[1] == spread
    assert "1 of them failed at 2, 6 clients more than 10 points away" in lines[0] and "moved the choice" in lines[0]
    # Rows that include 2 clients leave no gap to check: the least change alone decides.
    with_two = [s for s in read_table(SEED000, "s3x")["append"] if s.clients in (1, 2, 8)]
    assert fit.gap_counts([1, 2, 8]) == []
    assert fit.least_change_fit("append", [(0.1, lockstep), (0.2, spread)], with_two, 60.0)[1] == lockstep


def test_a_contention_fit_far_from_the_rows_failure_line_at_16_clients_is_not_kept(monkeypatch):
    # Rows 1-3 of S3's CAS: 0.85 failures per success per competitor, 92.7% failed at 16 clients on that line
    # (seed 000: 92.5%). Of two equally good fits, the one whose goodput changes least fails 80% there: kept by
    # the least change alone, refused by the line (``failure_line``, the contention terms' fits).
    rows = [s for s in read_table(SEED000, "s3")["cas"] if s.clients <= 3]
    near_line = load_profile(str(SHIPPED_S3))
    off_line = near_line.with_conditional("cas", replace(near_line.cas, median_ms=near_line.cas.median_ms * 1.01))
    predicted = {off_line: (0.02, 0.80), near_line: (0.06, 0.92)}
    monkeypatch.setattr(fit, "prior_prediction", lambda profile, *_: predicted[profile])
    monkeypatch.setattr(fit, "NEAR_BEST_LOSS", 1e9)
    assert fit.competitor_odds_rate(rows, 16) == pytest.approx(0.927, abs=0.001)
    fits = [(0.1, off_line), (0.2, near_line)]
    assert fit.least_change_fit("cas", fits, rows, 60.0)[1] == off_line
    lines = []
    assert fit.least_change_fit("cas", fits, rows, 60.0, lines.append, failure_line=True)[1] == near_line
    assert "1 of them failed at 16 clients more than 5 points away" in lines[0] and "moved the choice" in lines[0]


def test_the_gap_check_admits_before_the_rising_goodput_rule():
    # A fit outside the gap check is not kept however little its goodput changes; where none is inside, all are.
    assert fit.least_change_index([0.0, 0.2], rose=False, admitted=[False, True]) == 1
    assert fit.least_change_index([0.0, 0.2], rose=False, admitted=[False, False]) == 0
    assert fit.least_change_index([-0.3, 0.2, 0.0], rose=True, admitted=[True, True, False]) == 1


def test_only_a_fit_on_few_client_counts_uses_the_prior():
    rows = read_table(SEED000, "s3")["cas"]
    # Six counts determine the terms well enough; rows that reach 16 clients leave nothing beyond them.
    for counts, uses_prior in (((1, 2), True), ((1, 2, 3), True), ((1, 2, 3, 4, 6, 8), False),
                               ((1, 2, 4, 16), False)):
        lines, report = [], {}
        fitted, loss = fit_operation(PROVIDERS["s3"], "cas", [s for s in rows if s.clients in counts],
                                     observed_at=0.0, max_evaluations=3, progress=lines.append, report=report)
        assert any("equally good" in line for line in lines) == uses_prior
        if len(counts) < fit.FREE_DECISION_MIN_COUNTS:
            assert fitted.cas.decided_at == 1.0  # one or two counts do not free the decision point
        assert report["cas"].best_loss <= loss  # the kept fit is among the best, not always the best


def test_a_fit_compares_every_row_of_a_few_client_counts():
    # Rows at 1, 3, 5 and 7 clients are all data: the fit keeps every one, not only those at FIT_CLIENTS (1 and 3 here).
    rows = [s for s in read_table(SEED000, "s3")["cas"] if s.clients in (1, 3, 5, 7)]
    report = {}
    fitted, _ = fit_operation(PROVIDERS["s3"], "cas", rows, observed_at=0.0, max_evaluations=3, report=report)
    assert fitted.cas.fitted_clients == (1, 3, 5, 7)
    assert report["cas"].fitted_clients == (1, 3, 5, 7)
    # All sixteen of seed 000's counts: the eight the simulations compare, as before.
    assert [s.clients for s in fit.compared_rows(read_table(SEED000, "s3")["cas"])] == list(fit.FIT_CLIENTS)


def test_the_recheck_scores_every_seed_with_the_measured_failed_ratio(monkeypatch):
    # Seed 1's loss comes with the fit (scored with the ratio); seeds 2 and 3 must be scored the same way, or
    # the mean mixes two losses.
    measured = [s for s in read_table(SEED000, "s3")["cas"] if s.clients <= 3]
    flat = load_profile(str(SHIPPED_S3))
    ratio = 4.0  # far from what the profile simulates: the ratio's term dominates the loss
    seeds = [fit.mismatch(fit.simulated_stats(flat, "cas", [1, 2, 3], 60.0, seed), measured, ratio)
             for seed in fit.RECHECK_SEEDS]
    _, kept, mean = fit.least_change_fit("cas", [(0.5, flat)], measured, 60.0, failed_ratio=ratio)
    assert kept == flat and mean == pytest.approx((0.5 + sum(seeds)) / 3)
    _, _, without = fit.least_change_fit("cas", [(0.5, flat)], measured, 60.0)
    assert mean > without + 1.0


def test_a_known_store_gives_rows_as_a_per_thread_table_holds_them():
    # Seed 000's S3 CAS rows at 1 and 2 clients, the one-client row cut to 20 s of measuring time (T =
    # successes x mean): the known store's rows are the shipped measured profile simulated that long.
    rows = [s for s in read_table(SEED000, "s3")["cas"] if s.clients <= 2]
    one = rows[0]
    rows = [replace(one, successes=int(20_000 / one.mean_ms))] + rows[1:]
    known = holdout.known_store_table("s3", {"cas": rows}, seed=1)["cas"]
    assert [s.clients for s in known] == [1, 2]
    assert all(s.failed_mean_ms is None for s in known)  # a per-thread table times no failed op
    seconds = known[0].successes * known[0].mean_ms / 1000.0  # T, recovered as read_table recovers it
    assert [s.goodput_ops for s in known] == pytest.approx([s.successes / seconds for s in known])
    assert known[1].failures > 0 and known[0].failures == 0  # two clients race; one does not
    assert holdout.known_store_table("s3", {"cas": rows}, seed=1)["cas"] == known
    assert holdout.known_store_table("s3", {"cas": rows}, seed=2)["cas"] != known
    longer = holdout.known_store_table("s3", {"cas": rows}, seed=1, time_x=3.0)["cas"]
    assert longer[0].successes == pytest.approx(3 * known[0].successes, rel=0.1)  # three times the ops
    assert holdout.main(["--fit", "1-3", "--only", "s3:cas", "--known-store", "-1"]) == 2
    assert holdout.main(["--fit", "1-3", "--only", "s3:cas", "--known-store-time-x", "10"]) == 2  # no known store
