"""How well the data determined a fit's terms: the fits about as good as the best one, and what they predict
where the data stop. ``fit`` prints the report beside the profile, and the profile records the client counts
it was fitted on (``fitted_clients``), so that ``bench`` and ``capacity`` can say when they extrapolate.

The spread is that of this model's equally good fits, not the model's own error: where a store's mechanism is
not the model's, every such fit can miss together.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional, Sequence

from simcore.fit.scoring import NEAR_BEST_LOSS, simulated_stats
from simcore.providers import Provider

NEAR_BEST_FITS = 8  # at most this many of the equally good fits are simulated for the report


@dataclass(frozen=True)
class Determination:
    """How well the data determined one operation's terms: the fits about as good as the best one, and what
    they predict where the data stop (``fit`` prints it beside the profile)."""

    operation: str
    fitted_clients: tuple[int, ...]
    best_loss: float
    fits: int  # equally good fits (loss within NEAR_BEST_LOSS of the best), the best included
    at_clients: int
    goodput_ops: tuple[float, float]  # lowest and highest predicted at at_clients
    failure_rate: tuple[float, float]
    best_goodput_ops: float
    best_failure_rate: float
    terms: dict  # term -> (lowest, highest) over those fits

    def lines(self) -> list[str]:
        terms = ", ".join(f"{name} {low:.3g}-{high:.3g}" if not math.isclose(low, high, rel_tol=1e-3, abs_tol=1e-6)
                          else f"{name} {low:.3g}" for name, (low, high) in self.terms.items())
        return [f"{self.operation}: fitted on clients {','.join(map(str, self.fitted_clients))}; {self.fits} fit(s) "
                f"within {NEAR_BEST_LOSS:g} of the best loss {self.best_loss:.2f} predict at {self.at_clients} clients "
                f"goodput {self.goodput_ops[0]:.3g}-{self.goodput_ops[1]:.3g} op/s (this profile "
                f"{self.best_goodput_ops:.3g}), failure rate {self.failure_rate[0]:.1%}-{self.failure_rate[1]:.1%} "
                f"(this profile {self.best_failure_rate:.1%})",
                f"{self.operation}: their terms: {terms}"]


def term_values(profile: Provider, operation: str) -> dict[str, float]:
    """``operation``'s fitted terms in ``profile`` by the names the report gives them."""
    terms = profile.conditional(operation)
    out = {"write median ms": terms.median_ms, "write sigma": terms.sigma, "decided at": terms.decided_at,
           "failed x": terms.failed_multiplier}
    if terms.throttle is not None:
        t = terms.throttle
        out.update({"writes/s": t.writes_per_s, "burst": t.burst, "resends": float(t.retry_max),
                    "resend wait ms": t.retry_base_ms, "wait x": t.retry_multiplier,
                    "token per commit": 1.0 if t.counts == "commits" else 0.0})  # 0: a token per write
    else:
        out.update({"contention exponent": terms.contention_exponent, "contention sigma": terms.contention_sigma,
                    "read observed at": profile.read_observed_at})
    if terms.hold_ms > 0.0:
        out["commit hold ms"] = terms.hold_ms
    if terms.failed_extra != "contended":
        out["failed extra uncontended"] = 1.0
    return out


def term_key(profile: Provider, operation: str) -> tuple:
    """The terms rounded: fits with the same key count as one (a polish crowds its basin with near-copies)."""
    return tuple(round(v, 3) for v in term_values(profile, operation).values())


def determination(operation: str, evaluated: Sequence[tuple[float, Provider]], fitted_clients: Sequence[int],
                  duration_s: float, chosen: Optional[Provider] = None) -> Determination:
    """The near-best fits among ``evaluated`` ((loss, profile) pairs), simulated at 16 clients (or more, when
    fitted on more): the spread of their predictions and terms says how well the data fixed the terms.

    ``chosen``: the fit the profile keeps, when not the one of lowest loss (``least_change_fit``)."""
    ranked = sorted(evaluated, key=lambda item: item[0])
    best_loss = ranked[0][0]
    near, seen = [], set()
    if chosen is not None:
        seen.add(term_key(chosen, operation))
        near.append(chosen)
    for loss, profile in ranked:
        if loss > best_loss + NEAR_BEST_LOSS or len(near) == NEAR_BEST_FITS:
            break
        key = term_key(profile, operation)
        if key not in seen:
            seen.add(key)
            near.append(profile)
    at = max(16, max(fitted_clients))
    predicted = [simulated_stats(p, operation, [at], duration_s)[0] for p in near]
    values = [term_values(p, operation) for p in near]
    return Determination(
        operation=operation, fitted_clients=tuple(fitted_clients), best_loss=best_loss, fits=len(near), at_clients=at,
        goodput_ops=(min(s.goodput_ops for s in predicted), max(s.goodput_ops for s in predicted)),
        failure_rate=(min(s.failure_rate for s in predicted), max(s.failure_rate for s in predicted)),
        best_goodput_ops=predicted[0].goodput_ops, best_failure_rate=predicted[0].failure_rate,
        terms={name: (min(v[name] for v in values), max(v[name] for v in values)) for name in values[0]})


def with_fitted_clients(profile: Provider, operation: str, counts: Sequence[int]) -> Provider:
    """``profile`` recording the client counts ``operation`` was fitted on (``bench`` and ``capacity`` read it)."""
    return profile.with_conditional(operation, replace(profile.conditional(operation),
                                                       fitted_clients=tuple(sorted(counts))))
