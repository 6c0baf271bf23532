"""The contention fit: the terms of a store that does not throttle, fitted by simulating the benchmark.

After the one-client write (``write_fit``), the terms are fitted by
simulating the benchmark (``simcore.bench``) at every client count and
matching the failure rate, goodput and successful-op latencies
(``scoring``): the contention exponent and sigma (median x c^exponent,
sigma + sigma_per_ln x ln c, c = conditional requests in flight), what
contention delays (the write, or the read before it observes the object:
both are tried), the failed-write multiplier (a failed write answers after
that x its latency), when the read observes the object (0 sent .. 1
returned), and when the write is decided (0 on arrival .. 1 as it answers;
the grid keeps 1, the polish frees it from ``FREE_DECISION_MIN_COUNTS``
client counts on).

Fitted on a few client counts, the prior chooses among equally good fits
(``prior``), a failed write's slow answer is drawn without the contention
terms unless the fit with them is clearly better, and the object's commit
hold (``hold_ms``) is a term too.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Optional, Sequence

import numpy as np

from simcore.errors import ConfigError
from simcore.fit.determination import determination, with_fitted_clients
from simcore.fit.prior import (RECHECK_SEEDS, TREND_TOLERANCE, goodput_change, least_change_fit, prior_clients,
                               uses_prior)
from simcore.fit.samples import ClientStats
from simcore.fit.scoring import NEAR_BEST_LOSS, compared_rows, mismatch, simulated_stats
from simcore.fit.write_fit import capped_read, fit_write
from simcore.providers import OperationLatency, Provider

# Simulations per operation when the caller gives no budget: a grid of 288 points (96 where when reads observe is
# fixed), then the rest shared by two Nelder-Mead polishes.
CONTENTION_FIT_EVALUATIONS = 492
# From this many client counts on, the polish frees when a write is decided (``decided_at``); fewer leave it where
# the grid put it (1, as it answers). One or two counts cannot tell it from the other terms; from three, with the
# prior choosing among the equally good fits (``least_change_fit``), freeing it predicts the held-out counts better
# than fixing it (measured in studies/holdout/README.md).
FREE_DECISION_MIN_COUNTS = 3
# Fitted on a few client counts, the commit holds tried: these shares of 1000 / (the goodput at the largest fitted
# count), the ceiling a hold puts on goodput. Measured: seed 000's S3 Express append levels off at 94-99 op/s from
# 4 clients, and fitted at fixed holds on rows 1-4 its loss has a sharp minimum at 0.94 of 1000 / 94 ms.
HOLD_SHARES = (0.9, 0.95, 1.0)
# Fitted on a few client counts, where the fit with the contention terms answers failures slowly (its failed
# multiplier at least SLOW_FAILURE_MULTIPLIER), the terms are fitted again with a failed write's extra answer time
# drawn without them (OperationLatency.failed_extra), and that fit is kept unless the first is better by more than
# NEAR_BEST_LOSS or it moves flat rows' goodput (FLAT_ROWS_CHANGE). Contended, a slow failure grows with the
# requests in flight: fitted on rows 1-4, Azure Standard's failed appends grew from 3.0 s at 2 clients to 4.4 s at
# 16, where seed 000's take 3.0-3.2 s at every count (Little's law on its counts), and its failure rate fell 5-8
# points short from 12 clients; uncontended they stay flat. Rows that time their failed ops (a probe's samples)
# tell the two apart; seed 000's table does not. A full-table fit keeps them contended, as the shipped profiles are.
FEW_COUNTS_FAILED_EXTRA = "uncontended"
# A failure several times slower than the write is a slow answer of its own (seed 000's failed Azure appends:
# 13-36x the successful ones); below it (S3 Express's fits: 1.6-1.8) how the extra time scales hardly matters, and
# a second fit would only move the fit's path through its noisy loss, which costs held-out cells
# (studies/holdout/README.md).
SLOW_FAILURE_MULTIPLIER = 4.0
# ... but where the rows' goodput is flat (within TREND_TOLERANCE from one client to the last row), not a fit that
# moves it by more than this beyond them: failures that come back in a flat time let more clients race at once as
# they grow, and the model's commits then come faster (the earliest of several racers decides), where Azure
# Standard's appends stay at one client's rate (10.5-11.1 op/s from 1 to 16 clients). Chosen from the held-out
# check's fits of those appends (studies/holdout/README.md): the uncontended fits that predicted the held-out
# counts worse moved goodput by 5.9-8.8% at 16 clients, those kept by -0.3% to +4.5%. The margin is thin: some
# choices of rows move it by about 5%.
FLAT_ROWS_CHANGE = 0.05
HOLD_SEEDS = (1, *RECHECK_SEEDS)  # a hold's fit is compared with the fit without one by its mean loss over these
# seeds: the one least_change_fit computed when it kept each fit



def _point_text(x) -> str:
    """A fit's point in the names ``fit`` explains: [exponent, sigma per ln c, ln failed multiplier, decided at(,
    observed at)]."""
    text = (f"contention exponent {x[0]:.3g}, contention sigma {x[1]:.3g}, failed x {math.exp(x[2]):.3g}, "
            f"decided at {x[3]:.3g}")
    return text + (f", read observed at {x[4]:.3g}" if len(x) > 4 else "")

def _terms(x) -> tuple[float, float, float, float, float]:
    """[exponent, sigma per ln c, ln failed multiplier, decided at(, observed at)], clipped to their ranges."""
    exponent = float(np.clip(x[0], -1.0, 5.0))
    sigma_per_ln = float(np.clip(x[1], 0.0, 3.0))
    decided_at = float(np.clip(x[3], 0.0, 1.0))
    # A failure is answered no earlier than it is decided: multiplier >= decided_at.
    failed = float(math.exp(np.clip(x[2], math.log(max(decided_at, 1e-3)), 6.0)))
    observed_at = float(np.clip(x[4], 0.0, 1.0)) if len(x) > 4 else math.nan
    return exponent, sigma_per_ln, failed, decided_at, observed_at


def with_terms(profile: Provider, operation: str, median_ms: float, sigma: float, exponent: float,
               sigma_per_ln: float, failed: float, decided_at: float, contention_in: str,
               observed_at: float, hold_ms: float = 0.0, failed_extra: str = "contended") -> Provider:
    """``profile`` with ``operation``'s latency and terms replaced (its throttle, if any, kept)."""
    kept = profile.conditional(operation).throttle if operation == "cas" or profile.supports_append else None
    terms = OperationLatency(median_ms=median_ms, sigma=sigma, failed_multiplier=failed, contention_exponent=exponent,
                             contention_sigma=sigma_per_ln, decided_at=decided_at, contention_in=contention_in,
                             throttle=kept, hold_ms=hold_ms, failed_extra=failed_extra)
    return replace(profile.with_conditional(operation, terms), read_observed_at=observed_at)


def fit_operation(base: Provider, operation: str, measured: Sequence[ClientStats], *,
                  observed_at: Optional[float] = None, failed_ratio: Optional[float] = None,
                  max_evaluations: Optional[int] = None, read_measured: bool = False,
                  progress=None, report: Optional[dict] = None) -> tuple[Provider, float]:
    """``base`` with ``operation``'s write and terms fitted to ``measured``; also the final loss.

    ``observed_at`` fixes when reads observe the object (a profile has one
    value for both operations); None fits it too. ``read_measured``: the
    base's read was measured with these ops (``profile.with_measured_read``), so it is
    not capped (``capped_read``). ``report``: a dict that
    receives ``operation``'s ``Determination``. The profile records the
    client counts fitted (``fitted_clients``).

    Fitted on a few client counts (``uses_prior``) where the fit answers
    failures slowly (``SLOW_FAILURE_MULTIPLIER``), the terms are fitted
    again with a failure's extra time drawn without the contention terms
    (``FEW_COUNTS_FAILED_EXTRA``), kept unless the contended fit's mean loss
    over ``HOLD_SEEDS`` is lower by more than ``NEAR_BEST_LOSS`` or, the rows'
    goodput being flat, it moves goodput by more than ``FLAT_ROWS_CHANGE``; and the
    object's commit hold is a term too: the terms are fitted again at each of ``HOLD_SHARES`` x
    1000 / (goodput at the largest fitted count) ms, and a hold is kept only
    when its fit's mean loss over ``HOLD_SEEDS`` is lower than the fit
    without one by more than ``NEAR_BEST_LOSS``.
    """
    measured = sorted(measured, key=lambda s: s.clients)
    one = [s for s in measured if s.clients == 1]
    if not one:
        raise ConfigError("clients", [s.clients for s in measured], "a measurement at 1 client")
    base = base if read_measured else capped_read(base, one[0])
    median, sigma = fit_write(base, one[0])
    compared = compared_rows(measured)
    # Enough simulated time for about 3,000 ops at one client, and at least a minute.
    duration_s = max(60.0, 3000.0 * one[0].mean_ms / 1000.0)
    counts = [s.clients for s in compared]

    def fit_at(hold_ms: float, failed_extra: str = "contended"):
        return _contention_fit(base, operation, compared, median, sigma, duration_s, observed_at, failed_ratio,
                               max_evaluations, progress, hold_ms, failed_extra)

    loss_value, fitted, evaluated, chosen, without = fit_at(0.0)
    failed_extra = "contended"
    if uses_prior(counts) and fitted.conditional(operation).failed_multiplier >= SLOW_FAILURE_MULTIPLIER:
        # The failures answer slowly: their extra time drawn without the contention terms, kept unless the
        # contended fit is clearly better (FEW_COUNTS_FAILED_EXTRA); the holds are then tried with the one kept.
        drawn = fit_at(0.0, FEW_COUNTS_FAILED_EXTRA)
        contended_mean = without
        change = goodput_change(drawn[1], operation, compared, duration_s)
        flat_rows = abs(math.log(compared[-1].goodput_ops / one[0].goodput_ops)) <= math.log(1.0 + TREND_TOLERANCE)
        moves_flat_rows = flat_rows and abs(change) > math.log(1.0 + FLAT_ROWS_CHANGE)
        if not (contended_mean < drawn[4] - NEAR_BEST_LOSS or moves_flat_rows):
            loss_value, fitted, evaluated, chosen, without = drawn
            failed_extra = FEW_COUNTS_FAILED_EXTRA
        if progress:
            progress(f"{base.name} {operation}: a failure's extra time drawn {failed_extra} (mean loss: contended "
                     f"{contended_mean:.3f}, {FEW_COUNTS_FAILED_EXTRA} {drawn[4]:.3f}, whose goodput changes "
                     f"{math.exp(change) - 1.0:+.1%} from {counts[-1]} to {prior_clients(counts)} clients)")
    if uses_prior(counts):
        best_mean = without
        ceiling_ms = 1000.0 / max(compared[-1].goodput_ops, 1e-9)
        for share in HOLD_SHARES:
            hold_ms = share * ceiling_ms
            if hold_ms >= one[0].mean_ms:
                continue  # one client would wait for its own last write, which its fitted write leaves out
            found = fit_at(hold_ms, failed_extra)
            mean = found[4]
            if progress:
                progress(f"{base.name} {operation}: commit hold {hold_ms:.3g} ms -> mean loss {mean:.3f} over "
                         f"{len(HOLD_SEEDS)} seeds (none: {without:.3f})")
            if mean < best_mean and mean < without - NEAR_BEST_LOSS:
                best_mean, (loss_value, fitted, evaluated, chosen, _) = mean, found
        if progress and fitted.conditional(operation).hold_ms > 0.0:
            progress(f"{base.name} {operation}: kept a commit hold of {fitted.conditional(operation).hold_ms:.3g} ms "
                     f"(mean loss {best_mean:.3f} against {without:.3f} without)")
    if report is not None:
        report[operation] = determination(operation, evaluated, counts, duration_s, chosen)
    return with_fitted_clients(fitted, operation, counts), loss_value


def _contention_fit(base: Provider, operation: str, compared: Sequence[ClientStats], median: float, sigma: float,
                    duration_s: float, observed_at: Optional[float], failed_ratio: Optional[float],
                    max_evaluations: Optional[int], progress, hold_ms: float, failed_extra: str = "contended"
                    ) -> tuple[float, Provider, list[tuple[float, Provider]], Optional[Provider], Optional[float]]:
    """The contention terms fitted at a fixed commit hold and kind of failure answer (``failed_extra``): (loss
    with seed 1, the fit, every fit simulated, the fit kept by ``least_change_fit`` and its mean loss over
    ``RECHECK_SEEDS`` too, or None, None)."""
    from scipy.optimize import minimize

    counts = [s.clients for s in compared]

    def profile_for(x, contention_in):
        exponent, sigma_per_ln, failed, decided_at, seen = _terms(x)
        return with_terms(base, operation, median, sigma, exponent, sigma_per_ln, failed, decided_at, contention_in,
                          seen if observed_at is None else observed_at, hold_ms, failed_extra)

    evaluated: list[tuple[float, Provider]] = []

    def loss(x, where):
        profile = profile_for(x, where)
        value = mismatch(simulated_stats(profile, operation, counts, duration_s), compared, failed_ratio)
        evaluated.append((value, profile))
        return value

    # A coarse grid first (the loss is rough: Nelder-Mead alone stalls in the
    # wrong basin), writes decided as they answer; then Nelder-Mead from the two
    # best grid points, free to move the decision earlier too. Points are
    # [exponent, sigma per ln c, ln failed multiplier, decided at(, observed at)].
    seen_values = (0.0, 0.5, 1.0) if observed_at is None else (None,)
    grid = [(where, [a, b, math.log(m), 1.0] + ([] if seen is None else [seen]))
            for where in ("write", "read") for a in (0.0, 0.25, 0.5, 1.0) for b in (0.0, 0.4, 0.8)
            for m in (1.0, 2.0, 8.0, 32.0) for seen in seen_values]
    scored = sorted(((loss(x, where), where, x) for where, x in grid), key=lambda item: item[0])
    held = f", hold {hold_ms:.3g} ms" if hold_ms else ""
    if failed_extra != "contended":
        held += f", failures {failed_extra}"
    if progress:
        progress(f"{base.name} {operation}{held}: {len(grid)} starting terms tried; the closest to the measurements "
                 f"(loss {scored[0][0]:.3f}, lower is closer) has contention delaying the {scored[0][1]}, "
                 f"{_point_text(scored[0][2])}")
    best = (scored[0][0], scored[0][1], np.asarray(scored[0][2], float))
    polish = max(1, ((max_evaluations or CONTENTION_FIT_EVALUATIONS) - len(grid)) // 2)
    free_decision = len(counts) >= FREE_DECISION_MIN_COUNTS
    for _, where, start in scored[:2]:
        start = np.array(start, float)
        if free_decision:
            start[3] = 0.9  # inside the range, so the simplex can move either way
            free = list(range(len(start)))
        else:
            free = [i for i in range(len(start)) if i != 3]  # the decision point stays where the grid put it

        def partial_loss(y, where=where, start=start, free=free):
            x = start.copy()
            x[free] = y
            return loss(x, where)

        result = minimize(partial_loss, start[free], method="Nelder-Mead",
                          options={"maxfev": polish, "xatol": 1e-3, "fatol": 1e-3})
        x = start.copy()
        x[free] = result.x
        if progress:
            progress(f"{base.name} {operation}{held}: refined from contention delaying the {where}, "
                     f"{_point_text(start)} -> loss {result.fun:.3f} ({result.nfev} simulations)")
        if result.fun < best[0]:
            best = (float(result.fun), where, x)
    loss_value, fitted = float(best[0]), profile_for(best[2], best[1])
    chosen = mean = None
    if uses_prior(counts):
        loss_value, fitted, mean = least_change_fit(operation, evaluated, compared, duration_s, progress,
                                                    failed_ratio, failure_line=True)
        chosen = fitted
    return loss_value, fitted, evaluated, chosen, mean
