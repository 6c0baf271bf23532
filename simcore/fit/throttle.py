"""The throttle fit: a store that throttles conditional writes to one object (GCS's and Azure's CAS).

The model is a token bucket that admitted writes draw on and a client
library that resends a refused write after a growing wait; the write's
latency is fitted together with the throttle, by differential evolution
with a fixed seed. Fitted on a few client counts, what the bucket counts is
a term too (every write, or only the writes that would commit): both kinds
are fitted, in two processes where the machine has a second core, and the
prior chooses (``kept_kind``), expecting a bucket of writes that binds from
one client on to follow its rows' lines (``expected_write_bucket_change``,
``expected_write_bucket_failure``).
"""

from __future__ import annotations

import math
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from functools import partial
from typing import Mapping, NamedTuple, Optional, Sequence

import numpy as np

from simcore.errors import ConfigError
from simcore.fit.determination import determination, with_fitted_clients
from simcore.fit.prior import (TREND_TOLERANCE, competitor_odds_rate, least_change_fit, near_failure_line,
                               prior_clients, prior_prediction, uses_prior)
from simcore.fit.samples import ClientStats
from simcore.fit.scoring import NEAR_BEST_LOSS, compared_rows, mismatch, simulated_stats
from simcore.fit.write_fit import capped_read
from simcore.providers import OperationLatency, Provider, Throttle

# Simulations per kind of bucket when the caller gives no budget. It sets the generations, budget /
# (THROTTLE_POPULATION x terms) - 1, of a population scipy rounds up to a power of two (its Sobol start): 5,376
# simulations on 10 terms, 9,728 on 11.
THROTTLE_FIT_EVALUATIONS = 5040
# The throttle fit's search space: [write median (share of the one-client op median), write sigma,
# decided at, token rate (x one-client goodput), burst, resends, wait base ms, multiplier, cap ms, jitter].
THROTTLE_BOUNDS = ((0.3, 1.0), (0.05, 1.2), (0.0, 1.0), (0.5, 3.0), (1.0, 8.0), (0.0, 6.49), (200.0, 8000.0),
                   (1.0, 3.0), (1000.0, 32000.0), (0.0, 1.0))
# Fitted on a few client counts (``uses_prior``), the throttle fit frees one more term, the failed write's answer
# time (``failed_multiplier``, within these bounds; 1 otherwise). Held at 1, the rows can make failures slow only
# by refusals and resends: from rows 1-4 of Azure Premium's CAS, whose failures take 280-356 ms at every count
# (Little's law on seed 000's counts), the fit's took 570-580 ms and its failure rate fell 5-6 points short from
# 8 clients; freed, it predicts every held-out count (studies/holdout/README.md). A full-table fit keeps 1, as the
# shipped profiles are fitted.
FEW_COUNTS_FAILED_MULTIPLIER = (1.0, 16.0)
THROTTLE_POPULATION = 6  # x parameters per generation
THROTTLE_FIT_SECONDS = 600.0  # simulated per client count and evaluation (seed 000: 300 s runs)


class _KindFit(NamedTuple):
    """One kind of bucket's throttle fit: its loss with seed 1, the fit kept, every fit simulated, and (fitted on
    a few counts) the kept fit's mean loss over ``RECHECK_SEEDS`` too."""
    loss: float
    profile: Provider
    evaluated: list[tuple[float, Provider]]
    mean: Optional[float]


# A bucket of writes that binds from one client on (``binds_at_one_client``) spends a token on every stale write:
# once it is drained, each commit costs its own token and the stale writes of the clients competing for the next
# one, a number that grows with the clients, so the time between commits (1 / goodput) grows linearly with them.
# Seed 000's GCS CAS bears it out: 1/goodput within 4.0% of a line over all 16 counts (0.70 s at one client, 1.40
# s at 16). Among equally good fits of such a bucket, the kept one is nearest that line's continuation
# (``continued_change``) instead of the least change (studies/holdout/README.md measures what it pays).
REFUSAL_TAIL = 3.0  # one client's p99 / p50 from which its rows show refusals (GCS 54; Azure 2.4, Premium 1.4)
# The same bucket's failures per success (the odds, f / (1 - f)) are the stale writes each commit costs: they too
# grow linearly with the clients (seed 000's GCS: a line over 2-16 clients, 0.155 a client, within 2.3 points of
# failure rate), and the kept fit is nearest that line's continuation too (``continued_failure_rate``), in the
# held-out check's units. Only from rows that reach ODDS_LINE_FROM_CLIENTS: below it the odds per competitor
# still fall (0.22 at 2 clients, 0.19 at 4, 0.16 from 7 on), and a line through rows 1-4 overshoots 16 clients
# by 4-5 points.
ODDS_LINE_FROM_CLIENTS = 5


def binds_at_one_client(one: ClientStats) -> bool:
    """Whether one client's own ops already show a throttle's refusals: a tail of resent writes, p99 at least
    ``REFUSAL_TAIL`` x p50 (seed 000: GCS's CAS does, 9,350 / 173 ms; Azure Standard's does not, 231 / 94.8)."""
    return one.p99_ms >= REFUSAL_TAIL * one.p50_ms


def continued_change(measured: Sequence[ClientStats]) -> float:
    """ln(the goodput at ``PRIOR_AT_CLIENTS`` clients on the least-squares line of 1 / goodput over the rows'
    client counts / the goodput of the last row), the continuation a drained bucket of writes implies.

    >>> rows = [ClientStats(c, 1, 0, 1.0 / (0.66 + 0.05 * c), 1.0, 1.0, 1.0, 1.0) for c in (1, 2, 3, 4)]
    >>> round(math.exp(continued_change(rows)) * rows[-1].goodput_ops, 3)  # 1 / (0.66 + 0.05 x 16)
    0.685
    """
    measured = sorted(measured, key=lambda s: s.clients)
    counts = np.array([s.clients for s in measured], float)
    slope, intercept = np.polyfit(counts, [1.0 / s.goodput_ops for s in measured], 1)
    at = prior_clients([s.clients for s in measured])
    return math.log(1.0 / max(intercept + slope * at, 1e-9) / measured[-1].goodput_ops)


def continued_failure_rate(measured: Sequence[ClientStats]) -> float:
    """The failure rate at ``PRIOR_AT_CLIENTS`` clients on the least-squares line of the failures per success (the
    odds, f / (1 - f)) over the rows' client counts: the continuation a drained bucket of writes implies.

    >>> rows = [ClientStats(c, 100, round(100 * (0.155 * c - 0.1)), 1.0, 1.0, 1.0, 1.0, 1.0) for c in (2, 5, 8)]
    >>> round(continued_failure_rate(rows), 3)  # odds 0.155 x 16 - 0.1 = 2.38
    0.704
    """
    measured = sorted(measured, key=lambda s: s.clients)
    counts = np.array([s.clients for s in measured], float)
    odds = [s.odds for s in measured]
    slope, intercept = np.polyfit(counts, odds, 1)
    at = prior_clients([s.clients for s in measured])
    continued = max(float(intercept + slope * at), 0.0)
    return continued / (1.0 + continued)


def drains_write_bucket(measured: Sequence[ClientStats]) -> bool:
    """Whether ``measured`` looks like a drained bucket of writes: one client's ops show refusals
    (``binds_at_one_client``) and the rows' goodput fell by more than ``TREND_TOLERANCE`` from one client to the
    last row."""
    measured = sorted(measured, key=lambda s: s.clients)
    first, last = measured[0], measured[-1]
    return (first.clients == 1 and binds_at_one_client(first)
            and last.goodput_ops * (1.0 + TREND_TOLERANCE) < first.goodput_ops)


def expected_write_bucket_change(measured: Sequence[ClientStats]) -> float:
    """The goodput change beyond ``measured`` (as ``goodput_change`` measures it) that the prior expects of a
    bucket of writes: the rows' line (``continued_change``) where they drain one (``drains_write_bucket``); none
    (0) otherwise, the least change."""
    return continued_change(measured) if drains_write_bucket(measured) else 0.0


def expected_write_bucket_failure(measured: Sequence[ClientStats]) -> Optional[float]:
    """The failure rate at ``PRIOR_AT_CLIENTS`` the prior expects of a bucket of writes beside its goodput: the
    rows' line of failures per success (``continued_failure_rate``) where they drain one and reach
    ``ODDS_LINE_FROM_CLIENTS`` clients; None otherwise (goodput alone)."""
    if not drains_write_bucket(measured) or max(s.clients for s in measured) < ODDS_LINE_FROM_CLIENTS:
        return None
    return continued_failure_rate(measured)


def _fit_kind(base: Provider, operation: str, compared: Sequence[ClientStats], one: ClientStats, seen: float,
              bounds: tuple, failed_ratio: Optional[float], max_evaluations: Optional[int], few_counts: bool,
              expected_change: Mapping[str, float], expected_failure: Mapping[str, Optional[float]],
              counts_what: str, progress=None) -> _KindFit:
    """``fit_throttled_operation``'s fit of one kind of bucket (``counts_what``: "writes" or "commits"); the
    prior's expectations are per kind."""
    from scipy.optimize import differential_evolution

    counts = [s.clients for s in compared]

    def profile_for(x):
        throttle = Throttle(writes_per_s=float(x[3] * one.goodput_ops), burst=float(x[4]),
                            retry_max=int(round(x[5])), retry_base_ms=float(x[6]), retry_multiplier=float(x[7]),
                            retry_cap_ms=float(x[8]), retry_jitter=float(x[9]), counts=counts_what)
        failed = float(x[len(THROTTLE_BOUNDS)]) if len(x) > len(THROTTLE_BOUNDS) else 1.0
        terms = OperationLatency(median_ms=max(base.floor_ms, x[0] * one.p50_ms), sigma=float(x[1]),
                                 decided_at=float(x[2]), failed_multiplier=failed, throttle=throttle)
        return replace(base.with_conditional(operation, terms), read_observed_at=seen)

    evaluated: list[tuple[float, Provider]] = []

    def loss(x):
        profile = profile_for(x)
        value = mismatch(simulated_stats(profile, operation, counts, THROTTLE_FIT_SECONDS), compared, failed_ratio)
        evaluated.append((value, profile))
        return value

    budget = max_evaluations or THROTTLE_FIT_EVALUATIONS
    generations = max(1, budget // (THROTTLE_POPULATION * len(bounds)) - 1)
    result = differential_evolution(loss, bounds, popsize=THROTTLE_POPULATION, maxiter=generations,
                                    seed=20250601, polish=False, tol=0.0, init="sobol")
    if progress:
        progress(f"{base.name} {operation}: throttle fit (a token per {counts_what[:-1]}), {result.nfev} "
                 f"simulations -> loss {result.fun:.3f}")
    if not few_counts:
        return _KindFit(float(result.fun), profile_for(result.x), evaluated, None)
    loss_value, fitted, mean = least_change_fit(operation, evaluated, compared, THROTTLE_FIT_SECONDS, progress,
                                                failed_ratio, expected_change[counts_what],
                                                expected_failure[counts_what])
    return _KindFit(loss_value, fitted, evaluated, mean)


def _fit_kind_quietly(fit_kind, counts_what: str) -> tuple[_KindFit, list[str]]:
    """``fit_kind`` in a worker process: its progress lines come back with it, for the caller to print."""
    lines: list[str] = []
    return fit_kind(counts_what, lines.append), lines


def _both_kinds(fit_kind, progress) -> tuple[_KindFit, _KindFit]:
    """Both kinds of bucket fitted (a token per write, a token per commit), at once where the machine has a second
    core: they share nothing, and each is deterministic, so the fits are the same either way and take half the
    time (a throttled operation's fit should take at most about five minutes on two cores). A forked worker fits
    the bucket of commits; its progress lines follow those of the bucket of writes."""
    if (os.cpu_count() or 1) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return fit_kind("writes", progress), fit_kind("commits", progress)
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork")) as pool:
        per_commit = pool.submit(_fit_kind_quietly, fit_kind, "commits")
        per_write = fit_kind("writes", progress)
        per_commit, lines = per_commit.result()
    for line in lines if progress else ():
        progress(line)
    return per_write, per_commit


def fit_throttled_operation(base: Provider, operation: str, measured: Sequence[ClientStats], *,
                            observed_at: Optional[float] = None, failed_ratio: Optional[float] = None,
                            max_evaluations: Optional[int] = None, read_measured: bool = False, progress=None,
                            report: Optional[dict] = None) -> tuple[Provider, float]:
    """``base`` with ``operation``'s write and the object's write throttle fitted to ``measured``.

    The model of a store that throttles conditional writes to one object
    (GCS): a token bucket that every admitted write draws on, and a client
    library that resends a refused write after a growing wait (refusals and
    waits are what make GCS's failed CAS take seconds, and its successful ones
    have a multi-second tail even at one client). The write's latency is
    fitted together with the throttle, since at one client the throttle
    already shapes the measured op. Differential evolution with a fixed seed:
    the loss is rough (integer resends, a noisy simulation), and the fit stays
    deterministic.

    Fitted on a few client counts (``uses_prior``), what the bucket counts is a
    term too: every write, or only the writes that would commit (a stale one
    refused on its precondition first). Both are fitted, and ``kept_kind``
    chooses by the prior of ``least_change_fit`` (rows 1-4 of Azure
    Standard's CAS fit either about as well, and only the bucket of commits
    predicts the rest: studies/holdout/README.md). There the failed write's multiplier is a term
    too (``FEW_COUNTS_FAILED_MULTIPLIER``); a full-table fit keeps it at 1.
    """
    measured = sorted(measured, key=lambda s: s.clients)
    one = [s for s in measured if s.clients == 1]
    if not one:
        raise ConfigError("clients", [s.clients for s in measured], "a measurement at 1 client")
    base = base if read_measured else capped_read(base, one[0])
    compared = compared_rows(measured)
    counts = [s.clients for s in compared]
    seen = 1.0 if observed_at is None else observed_at
    few_counts = uses_prior(counts)  # then both kinds of bucket, the prior's choice, and the failed multiplier
    fell = compared[-1].goodput_ops < one[0].goodput_ops
    expected = {"writes": expected_write_bucket_change(compared), "commits": 0.0}
    expected_failure = {"writes": expected_write_bucket_failure(compared), "commits": None}
    bounds = THROTTLE_BOUNDS + ((FEW_COUNTS_FAILED_MULTIPLIER,) if few_counts else ())

    fit_kind = partial(_fit_kind, base, operation, compared, one[0], seen, bounds, failed_ratio, max_evaluations,
                       few_counts, expected, expected_failure)
    chosen = None
    if not few_counts:
        per_write = fit_kind("writes", progress)
        loss_value, fitted, evaluated = per_write.loss, per_write.profile, per_write.evaluated
    else:
        per_write, per_commit = _both_kinds(fit_kind, progress)
        kinds = (per_write, per_commit)
        predictions = [prior_prediction(kind.profile, operation, compared, THROTTLE_FIT_SECONDS) for kind in kinds]
        changes = [change for change, _ in predictions]
        failure_rates = [failed for _, failed in predictions]
        line = kinds_failure_line(compared)
        kept = kinds[kept_kind([kind.mean for kind in kinds], changes, fell,
                               [expected["writes"], expected["commits"]], failure_rates, line)]
        loss_value, fitted = kept.loss, kept.profile
        chosen = fitted
        evaluated = per_write.evaluated + per_commit.evaluated  # the spread the report gives spans both kinds
        if progress:
            at = prior_clients(counts)
            weighed = ("" if line is None else
                       f"; failed at {at} clients: per write {failure_rates[0]:.1%}, per commit "
                       f"{failure_rates[1]:.1%}, the rows' failures per competitor {line:.1%}")
            progress(f"{base.name} {operation}: a token per {fitted.conditional(operation).throttle.counts[:-1]} "
                     f"kept (mean loss {kept.mean:.3f}; per write {per_write.mean:.3f}, per commit "
                     f"{per_commit.mean:.3f}){weighed}")
    if report is not None:
        report[operation] = determination(operation, evaluated, counts, THROTTLE_FIT_SECONDS, chosen)
    return with_fitted_clients(fitted, operation, counts), loss_value


def kinds_failure_line(measured: Sequence[ClientStats]) -> Optional[float]:
    """The failure rate at ``PRIOR_AT_CLIENTS`` clients (or the last row's count) that ``kept_kind`` weighs the
    kinds of bucket by: the rows' failures per competitor (``competitor_odds_rate``), where one client's ops show no
    refusals (``binds_at_one_client``); None where they do.

    Without refusals at one client a stale write is refused on its precondition before it costs a token, and the
    failures per competitor hold beyond the rows as on a store without a throttle (seed 000's Azure Standard CAS:
    0.21-0.27 from 2 to 16 clients). Fitted on 1,4,5 and 1,4,7, its bucket of commits keeps goodput flat but puts
    failures 7-13 points under the line at 16 clients, the bucket of writes 1-3. Where one client already waits
    out refusals (GCS), the tokens stale writes spend make the failures per competitor fall, and its bucket of
    writes has a line of its own (``expected_write_bucket_failure``)."""
    measured = sorted(measured, key=lambda s: s.clients)
    if measured[0].clients != 1 or binds_at_one_client(measured[0]):
        return None
    return competitor_odds_rate(measured, prior_clients([s.clients for s in measured]))


def kept_kind(mean_losses: Sequence[float], changes: Sequence[float], fell: bool,
              expected: Optional[Sequence[float]] = None, failure_rates: Optional[Sequence[float]] = None,
              expected_failure: Optional[float] = None) -> int:
    """Which of a throttled operation's fits to keep, one per kind of bucket (``fit_throttled_operation``): of
    those whose mean loss is within ``NEAR_BEST_LOSS`` of the lowest, the one whose goodput changes least beyond
    the rows (``changes``: ``goodput_change``), as ``least_change_fit`` chooses, or is nearest the change its kind
    is ``expected`` to make (``continued_change``; none where not given); where the rows' goodput ``fell``
    from one client to the last row, not one that predicts it rising again by more than ``TREND_TOLERANCE``
    (goodput that a throttle wastes as clients grow does not come back with more of them). With
    ``expected_failure`` (``kinds_failure_line``), a kind whose predicted failure rate at the same count
    (``failure_rates``) is more than ``FAILURE_LINE_TOLERANCE`` from it is not kept while another is within it;
    where none is, the one nearest it is kept (fitted on 1,3,4,5, Azure Standard's bucket of writes puts 48.1%
    failed at 16 clients and its bucket of commits 72.3%, against the line's 78.0%; the one nearest the line
    predicts the held-out counts far better: studies/holdout/README.md). The first kind when none qualifies.

    >>> kept_kind([1.0, 1.5], [-0.5, -0.05], fell=True)
    1
    >>> kept_kind([1.0, 1.5], [-0.5, -0.05], fell=True, expected=[-0.48, 0.0])
    0
    >>> kept_kind([7.1, 6.6], [-0.02, 0.05], fell=False, failure_rates=[0.481, 0.723], expected_failure=0.780)
    1
    >>> kept_kind([7.1, 6.6], [-0.02, 0.05], fell=False, failure_rates=[0.760, 0.723], expected_failure=0.780)
    0
    """
    expected = expected or [0.0] * len(changes)
    lowest = min(mean_losses)
    eligible = [i for i, (mean, change) in enumerate(zip(mean_losses, changes))
                if mean <= lowest + NEAR_BEST_LOSS and not (fell and change > math.log(1.0 + TREND_TOLERANCE))]
    if expected_failure is not None and eligible:
        near = near_failure_line(failure_rates, expected_failure)
        eligible = ([i for i in eligible if near[i]]
                    or [min(eligible, key=lambda i: abs(failure_rates[i] - expected_failure))])
    return min(eligible, key=lambda i: abs(changes[i] - expected[i])) if eligible else 0
