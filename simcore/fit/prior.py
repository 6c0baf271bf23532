"""The prior that chooses among equally good fits where a few client counts leave the terms undetermined.

Fitted on a few client counts (fewer than ``PRIOR_BELOW_COUNTS``, all below
``PRIOR_AT_CLIENTS``), many fits match the rows about equally well (their
losses differ by less than the loss's own noise from one simulated seed) and
part ways beyond them. The fit then re-simulates some of them with more
seeds and, among those still equally good, keeps the one whose goodput
changes least from the largest fitted count to 16 clients
(``least_change_fit``), refusing fits whose failure rate strays from the
rows' failures per competitor where the rows say nothing (``gap_counts``)
or, for the contention terms, at 16 clients. What the prior pays on
held-out client counts is measured in studies/holdout/README.md.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Optional, Sequence

import numpy as np

from simcore.fit.determination import term_key
from simcore.fit.samples import ClientStats
from simcore.fit.scoring import NEAR_BEST_LOSS, mismatch, simulated_stats
from simcore.providers import Provider

# Fitted on fewer client counts than PRIOR_BELOW_COUNTS, all below PRIOR_AT_CLIENTS, the best loss is a poor guide
# to what lies beyond the rows (the module doc); from six counts on, the rows determine the terms well enough.
PRIOR_BELOW_COUNTS = 6
PRIOR_AT_CLIENTS = 16  # where the prior compares goodput; rows that reach it need no prior (nothing lies beyond)
RECHECK_FITS = 24
RECHECK_LOSS = 2.0  # the fits re-simulated are drawn from those within this of the best loss with seed 1
RECHECK_SEEDS = (2, 3)  # besides seed 1, which every fit's simulation uses
# The held-out check's tolerances (studies/holdout/README.md), which the prior's rules are written in: goodput
# within 10%, failure rate within 5 points. Where the rows' goodput rose by more than TREND_TOLERANCE, a fit that
# predicts it falling more than that below the last row is not kept (``least_change_index``), and where it fell,
# a kind of bucket predicting it rising again by more than that (``throttle.kept_kind``).
TREND_TOLERANCE = 0.10
FAILURE_TOLERANCE = 0.05


# Between one client and the first row above it the rows say nothing, and equally good fits can part ways there
# too (fitted on rows 1,7,8 of S3 Express's append, one put two clients in lockstep: 0% failed against 30.7%
# measured). What does not part ways is the failures per success per competitor (odds / (clients - 1)): seed 000
# holds it about constant on every store and operation from 2 to 16 clients, and its mean over the rows puts the
# failure rate at 2 clients and just below the first row within about 6 points of the measured one. So a fit whose
# failure rate there (``gap_counts``) is further than GAP_TOLERANCE from that line (``competitor_odds_rate``) is
# kept only when every fit is: twice the held-out check's tolerance, so that only a fit already wrong is refused.
GAP_TOLERANCE = 0.10
# Beyond the rows the same line holds within about 3 points on every store and operation without a throttle (not
# on a throttled one, whose odds per competitor move), so the contention terms' fits also refuse a fit whose
# failure rate at PRIOR_AT_CLIENTS is further than this from it: the held-out check's own tolerance (measured in
# studies/holdout/README.md).
FAILURE_LINE_TOLERANCE = FAILURE_TOLERANCE


def prior_clients(counts: Sequence[int]) -> int:
    """The client count where the prior compares fits: ``PRIOR_AT_CLIENTS``, or the largest fitted count above it.

    >>> prior_clients([1, 2, 4]), prior_clients([1, 8, 20])
    (16, 20)
    """
    return max(PRIOR_AT_CLIENTS, max(counts))


def near_failure_line(failure_rates: Sequence[float], line: float) -> list[bool]:
    """Which of ``failure_rates`` (fits' predictions at ``prior_clients``) are within ``FAILURE_LINE_TOLERANCE`` of
    the rows' failures per competitor there (``line``): the others are kept only when none is."""
    return [abs(failed - line) <= FAILURE_LINE_TOLERANCE for failed in failure_rates]


def uses_prior(counts: Sequence[int]) -> bool:
    """Whether a fit on these client counts ends with ``least_change_fit``: few counts, all below the
    client count where it compares goodput."""
    return len(counts) < PRIOR_BELOW_COUNTS and max(counts) < PRIOR_AT_CLIENTS


def least_change_fit(operation: str, evaluated: Sequence[tuple[float, Provider]], measured: Sequence[ClientStats],
                     duration_s: float, progress=None, failed_ratio: Optional[float] = None,
                     expected_change: float = 0.0, expected_failure: Optional[float] = None,
                     failure_line: bool = False) -> tuple[float, Provider, float]:
    """Among the fits that match ``measured`` about equally well, the one whose goodput changes least beyond it.

    A few client counts leave the terms undetermined: fits whose losses differ
    by less than one simulated seed's noise part ways beyond the rows, and the
    one of lowest loss is the luckiest draw, not the likeliest store. Up to
    ``RECHECK_FITS`` distinct fits, evenly across the ranks of those within
    ``RECHECK_LOSS`` of the best loss, are simulated again with
    ``RECHECK_SEEDS``; of those whose mean loss is within ``NEAR_BEST_LOSS`` of
    the lowest, the kept one predicts at ``PRIOR_AT_CLIENTS`` clients (mean of
    two seeds) the goodput nearest (in ratio) the measured one at the largest
    fitted count (``least_change_index``: where the rows' goodput rose, not
    one that predicts a fall). The prior is the
    object's: it decides writes one after another at a rate of its own, so
    once a few clients contend, more of them change goodput little (seed 000:
    within 10% from 4 to 16 clients on every store but GCS, whose throttle
    then costs it a third). ``failed_ratio``: as ``mismatch`` takes it, the
    same for every seed (``evaluated``'s losses were scored with it).
    ``expected_change``: the change the kept fit is nearest instead of none
    (``throttle.continued_change``, for a bucket of writes that binds from one
    client); ``expected_failure``: the failure rate at ``PRIOR_AT_CLIENTS`` it
    is nearest too (``throttle.expected_write_bucket_failure``), where given. Where the rows leave
    a gap above one client (``gap_counts``), only fits whose failure rate there
    is within ``GAP_TOLERANCE`` of the rows' failures per competitor are kept,
    unless none is; with ``failure_line`` (the contention terms' fits), the same
    at ``PRIOR_AT_CLIENTS`` with ``FAILURE_LINE_TOLERANCE``.
    Returns (the kept fit's loss with seed 1, the fit, its mean loss over the
    seeds).
    """
    measured = sorted(measured, key=lambda s: s.clients)
    counts = [s.clients for s in measured]
    ranked = sorted(evaluated, key=lambda item: item[0])
    distinct, seen = [], set()
    for loss, profile in ranked:
        if loss > ranked[0][0] + RECHECK_LOSS:
            break
        key = term_key(profile, operation)
        if key not in seen:
            seen.add(key)
            distinct.append((loss, profile))
    # Evenly across the ranks, not the best few: a polish crowds one basin with near-copies of its best point.
    step = max(1, len(distinct) // RECHECK_FITS)
    distinct = distinct[::step][:RECHECK_FITS]
    rechecked = []
    for loss, profile in distinct:
        losses = [loss] + [mismatch(simulated_stats(profile, operation, counts, duration_s, seed), measured,
                                    failed_ratio) for seed in RECHECK_SEEDS]
        rechecked.append((float(np.mean(losses)), loss, profile))
    lowest = min(mean for mean, _, _ in rechecked)
    near = [item for item in rechecked if item[0] <= lowest + NEAR_BEST_LOSS]
    predictions = [prior_prediction(item[2], operation, measured, duration_s) for item in near]
    rose = measured[-1].goodput_ops > measured[0].goodput_ops * (1.0 + TREND_TOLERANCE)
    at = prior_clients(counts)
    gaps = gap_counts(counts)
    admitted = None
    if gaps:
        expected_gap = [competitor_odds_rate(measured, c) for c in gaps]
        admitted = [max(abs(failed - want) for failed, want in zip(gap_failure_rates(item[2], operation, gaps,
                                                                                    duration_s), expected_gap))
                    <= GAP_TOLERANCE for item in near]
    if failure_line:
        near_line = near_failure_line([failed for _, failed in predictions], competitor_odds_rate(measured, at))
        admitted = near_line if admitted is None else [a and b for a, b in zip(admitted, near_line)]
    choose = partial(least_change_index, [change for change, _ in predictions], rose, expected_change,
                     [failed for _, failed in predictions], expected_failure)
    kept_index = choose(admitted)
    mean, loss, profile = near[kept_index]
    if progress:
        if not expected_change:
            kept = f"changes least from {counts[-1]}"
        elif expected_failure is None:
            kept = f"is nearest the rows' line ({math.exp(expected_change) - 1.0:+.0%}) from {counts[-1]}"
        else:
            kept = (f"is nearest the rows' lines ({math.exp(expected_change) - 1.0:+.0%}, and {expected_failure:.1%} "
                    f"failed) from {counts[-1]}")
        gap_note = ""
        if admitted is not None and not all(admitted):
            moved = ", which moved the choice" if kept_index != choose(None) else ""
            where = [f"{', '.join(map(str, gaps))} clients more than {GAP_TOLERANCE * 100:g}"] if gaps else []
            if failure_line:
                where.append(f"{at} clients more than {FAILURE_LINE_TOLERANCE * 100:g}")
            gap_note = (f"; {len(admitted) - sum(admitted)} of them failed at {' or at '.join(where)} points away "
                        f"from the rows' failures per competitor{moved}")
        progress(f"{profile.name} {operation}: {len(near)} of {len(rechecked)} fits equally good over "
                 f"{1 + len(RECHECK_SEEDS)} seeds (mean loss within {NEAR_BEST_LOSS:g} of {lowest:.3f}); kept the one "
                 f"whose goodput {kept} to {at} clients (mean loss {mean:.3f})"
                 f"{gap_note}")
    return loss, profile, mean


def least_change_index(changes: Sequence[float], rose: bool, expected: float = 0.0,
                       failure_rates: Optional[Sequence[float]] = None, expected_failure: Optional[float] = None,
                       admitted: Optional[Sequence[bool]] = None) -> int:
    """Which of equally good fits the prior keeps, from each one's ``goodput_change``: the least change; where the
    rows' goodput ``rose`` by more than ``TREND_TOLERANCE`` from one client to the last row, not one that predicts
    it more than ``TREND_TOLERANCE`` below the last row (goodput that more clients raised within the rows does not
    fall back with more of them: fitted on the lab's MinIO, equally good fits split into rises of 24-42% and falls
    of 11-15%, and the least change alone keeps a fall), unless every fit does. The mirror of
    ``throttle.kept_kind``'s rule. ``expected``: the change to be nearest instead of none
    (``throttle.continued_change``). With ``expected_failure``, the fits' ``failure_rates`` at the same count
    count too: the distance is the goodput's in units of ``TREND_TOLERANCE`` plus the failure rate's in units of
    ``FAILURE_TOLERANCE`` (the held-out check's two). ``admitted``: which fits pass ``least_change_fit``'s checks
    against the rows' failures per competitor (in the gap, and at 16 clients); the others are kept only when none
    does.

    >>> least_change_index([-0.12, 0.24, 0.3], rose=True)
    1
    >>> least_change_index([-0.12, 0.24, 0.3], rose=False)
    0
    >>> least_change_index([-0.12, -0.2], rose=True)  # every fit falls: the least change still
    0
    >>> least_change_index([-0.1, -0.3, -0.6], rose=False, expected=-0.5)
    2
    >>> least_change_index([-0.24, -0.28], rose=False, expected=-0.3)
    1
    >>> least_change_index([-0.24, -0.28], rose=False, expected=-0.3, failure_rates=[0.70, 0.62], expected_failure=0.7)
    0
    >>> least_change_index([0.0, 0.2], rose=False, admitted=[False, True])
    1
    """
    floor = -math.log(1.0 + TREND_TOLERANCE)
    candidates = [i for i in range(len(changes)) if admitted is None or admitted[i]] or list(range(len(changes)))
    allowed = [i for i in candidates if not (rose and changes[i] < floor)] or candidates

    def distance(i: int) -> float:
        apart = abs(changes[i] - expected) / -floor
        if expected_failure is not None:
            apart += abs(failure_rates[i] - expected_failure) / FAILURE_TOLERANCE
        return apart

    return min(allowed, key=distance)


def gap_counts(counts: Sequence[int]) -> list[int]:
    """The client counts below the first fitted one above one where ``least_change_fit`` checks the failure rate:
    2 and the count just below that row, where it is above 2.

    >>> gap_counts([1, 7, 8]), gap_counts([1, 3, 6]), gap_counts([1, 2, 4])
    ([2, 6], [2], [])
    """
    above = sorted(c for c in counts if c > 1)
    if not above or above[0] <= 2:
        return []
    return sorted({2, above[0] - 1})


def competitor_odds_rate(measured: Sequence[ClientStats], clients: int) -> float:
    """The failure rate at ``clients`` from the rows' mean failures per success per competitor (odds / (clients -
    1)), which seed 000 holds about constant on every store.

    >>> rows = [ClientStats(c, 100, round(100 * 0.45 * (c - 1)), 1.0, 1.0, 1.0, 1.0, 1.0) for c in (1, 7, 8)]
    >>> round(competitor_odds_rate(rows, 2), 3)  # odds 0.45
    0.31
    """
    per = [s.odds / (s.clients - 1) for s in measured if s.clients > 1]
    odds = float(np.mean(per)) * (clients - 1) if per else 0.0
    return odds / (1.0 + odds)


def gap_failure_rates(profile: Provider, operation: str, clients: Sequence[int], duration_s: float) -> list[float]:
    """``profile``'s failure rate at each of ``clients``, two seeds pooled (as ``prior_prediction``)."""
    return [two_seed_stats(profile, operation, count, duration_s)[1] for count in clients]


def goodput_change(profile: Provider, operation: str, measured: Sequence[ClientStats], duration_s: float) -> float:
    """The prior's measure: ln(goodput at ``PRIOR_AT_CLIENTS`` clients, mean of two seeds / the measured goodput at
    the largest fitted count) (``least_change_fit`` takes its size)."""
    return prior_prediction(profile, operation, measured, duration_s)[0]


def prior_prediction(profile: Provider, operation: str, measured: Sequence[ClientStats], duration_s: float
                     ) -> tuple[float, float]:
    """(``goodput_change``, the failure rate at the same count, both seeds pooled): one simulation per seed."""
    last = max(measured, key=lambda s: s.clients)
    goodput, failure_rate = two_seed_stats(profile, operation, prior_clients([last.clients]), duration_s)
    return math.log(goodput / last.goodput_ops), failure_rate


def two_seed_stats(profile: Provider, operation: str, clients: int, duration_s: float) -> tuple[float, float]:
    """(mean goodput, failure rate with both seeds' ops pooled) of ``profile`` at ``clients``, simulated with
    seeds 1 and 2: what the prior compares fits by."""
    stats = [simulated_stats(profile, operation, [clients], duration_s, seed)[0] for seed in (1, *RECHECK_SEEDS[:1])]
    failures = sum(s.failures for s in stats)
    return float(np.mean([s.goodput_ops for s in stats])), failures / max(failures + sum(s.successes for s in stats), 1)
