"""The knee search's JSON summary, ``<store>/_knee/<experiment>.json``: its one writer and its one reader.

The rows under ``<experiment>_knee`` are the record; this file is a small
digest of them for people and for the dashboard's "simulations used"
figure: per curve its fixed fields, status (``found``,
``above_search_range``, ``below_search_range``, or ``searching`` / ``error``
for a search that did not end), knee rate and bracket, seeds and the
simulations spent, next to what a grid of the same resolution would have
cost. The folder starts with ``_`` so store readers skip it.

Runs merge into the file: a ``--quick`` run updates its curves and keeps
the others a full run wrote. It is written whole and atomically (a
temporary file renamed over it on a local disk, one PUT on an object store).

The schema is this module's: ``curve_summary`` and ``run_summary`` write it,
``summary_curves`` reads it back (the dashboard's reader), by the same
keys. The product has written exactly these keys since the knee search
was added (commit 2ae1527; ``git log -p ray_jobs/knee_summary.py``), so no
other spelling is read: an entry without them is reported, not guessed at.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping, Optional

from simcore.usable import USABLE_SUCCESS_THRESHOLD
from simcore.bisection import SearchRange, same_resolution_grid_points
from ray_jobs.knee_curves import CurveOutcome, knee_experiment_name
from ray_jobs.store import ResultsStore, StoreError


def curve_summary(outcome: CurveOutcome, search_range: SearchRange) -> dict:
    """One curve's entry (plain JSON types; NaN written as null)."""
    step, curve = outcome.step, outcome.curve
    grid_points = same_resolution_grid_points(search_range)
    entry = {
        "curve_id": curve.curve_id,
        "label": curve.label,
        "fixed": curve.fixed_fields(),
        "status": outcome.status,
        "within_tolerance": bool(step.within_tolerance),
        "note": outcome.error if outcome.error else step.note,
        "knee_rate_cps": None, "knee_scale_ms": None, "knee_success": None,
        "knee_seed_throughput_cps": [_number(v) for v in outcome.knee_seed_throughputs_cps],
        "bracket": None,
        "points": len(outcome.points),
        "simulations": outcome.simulations_stored,
        "simulations_this_run": outcome.simulations_run,
        "seeds": list(outcome.seeds),
        "search_range": {"min_scale_ms": search_range.min_scale_ms, "max_scale_ms": search_range.max_scale_ms,
                         "tolerance": search_range.tolerance},
        "grid_points_same_resolution": grid_points,
        "grid_simulations_same_resolution": grid_points * len(outcome.seeds),
    }
    if step.knee is not None:
        entry.update(knee_rate_cps=_number(step.knee.throughput_cps), knee_scale_ms=step.knee.scale_ms,
                     knee_success=_number(step.knee.success))
    if step.failing is not None:
        entry["bracket"] = {
            "failing_scale_ms": step.failing.scale_ms,
            "failing_throughput_cps": _number(step.failing.throughput_cps),
            "failing_success": _number(step.failing.success),
            # offered rate at the failing point over that at the knee, minus 1 (0.02 = 2%)
            "rate_width": None if step.rate_ratio is None else step.rate_ratio - 1,
            "throughput_ratio": _number(step.throughput_ratio),
        }
    return entry


def run_summary(experiment: str, outcomes: Iterable[CurveOutcome], search_range: SearchRange,
                previous: Optional[dict] = None) -> dict:
    """The file's content: this run's curves merged over ``previous`` (same curve id: this run wins)."""
    curves = {entry["curve_id"]: entry for entry in (previous or {}).get("curves", [])}
    for outcome in outcomes:
        curves[outcome.curve.curve_id] = curve_summary(outcome, search_range)
    entries = list(curves.values())
    statuses: dict[str, int] = {}
    for entry in entries:
        statuses[entry["status"]] = statuses.get(entry["status"], 0) + 1
    return {
        "experiment": experiment,
        "knee_experiment": knee_experiment_name(experiment),
        "success_threshold": USABLE_SUCCESS_THRESHOLD,
        "updated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "totals": {
            "curves": len(entries),
            "statuses": dict(sorted(statuses.items())),
            "points": sum(e["points"] for e in entries),
            "simulations": sum(e["simulations"] for e in entries),
            "grid_simulations_same_resolution": sum(e["grid_simulations_same_resolution"] for e in entries),
        },
        "curves": entries,
    }


def read_summary(store_uri: str, experiment: str) -> Optional[dict]:
    """The stored summary, or None when there is none or it cannot be parsed (it is rewritten whole)."""
    try:
        return ResultsStore(store_uri).read_knee_summary(experiment)
    except StoreError as error:
        if isinstance(error.__cause__, ValueError):
            return None
        raise


def write_summary(store_uri: str, experiment: str, summary: dict) -> str:
    """Write the summary through the store (whole and atomically); returns its path."""
    return ResultsStore(store_uri).write_knee_summary(experiment, summary)


@dataclass(frozen=True)
class SummaryCurve:
    """What a summary says of one curve: the fields its readers use, by the keys ``curve_summary`` writes.

    Attributes:
        fixed: ``fixed``, every config field of the curve but the scale.
        status: ``status`` (None when absent or not a string).
        simulations: ``simulations``, stored simulations of the curve (None when absent).
        knee_rate_cps: ``knee_rate_cps`` (None: no knee, or absent).
        search_range: ``search_range`` as (min scale ms, max scale ms,
            tolerance); None when absent or not a valid range.
        position: the entry's index in the file's ``curves`` (for messages).
    """

    fixed: Mapping[str, Any]
    status: Optional[str]
    simulations: Optional[int]
    knee_rate_cps: Optional[float]
    search_range: Optional[tuple] = None
    position: int = 0


def summary_curves(content: Any) -> tuple[list[SummaryCurve], list[str]]:
    """(the curves of a summary's JSON content, problems for people): the one reader of the file.

    ``content`` is what ``run_summary`` returned, read back: an object with a
    ``curves`` list whose entries have a ``fixed`` object. Entries that do
    not are reported in ``problems`` and skipped; so are values of the wrong
    type, which read as absent.
    """
    curves = content.get("curves") if isinstance(content, Mapping) else None
    if not isinstance(curves, list) or not curves:
        return [], ["lists no curves (expected an object with a non-empty 'curves' list)"]
    entries, problems = [], []
    for position, raw in enumerate(curves):
        if not isinstance(raw, Mapping):
            problems.append(f"curve {position}: not an object")
            continue
        if not isinstance(raw.get("fixed"), Mapping):
            problems.append(f"curve {position}: has no 'fixed' object (the curve's config fields)")
            continue
        status, simulations, knee = raw.get("status"), raw.get("simulations"), raw.get("knee_rate_cps")
        bounds = None
        search_range = raw.get("search_range")
        if isinstance(search_range, Mapping):
            values = [search_range.get(name) for name in ("min_scale_ms", "max_scale_ms", "tolerance")]
            if all(_is_number(value) for value in values) and 0 < values[0] <= values[1] and values[2] > 0:
                bounds = tuple(float(value) for value in values)
        entries.append(SummaryCurve(
            fixed=raw["fixed"], status=status if isinstance(status, str) else None,
            simulations=int(simulations) if _is_number(simulations) else None,
            knee_rate_cps=float(knee) if _is_number(knee) else None, search_range=bounds, position=position))
    return entries, problems


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _number(value) -> Optional[float]:
    """JSON has no NaN: a missing value is null."""
    if value is None:
        return None
    value = float(value)
    return None if value != value else value
