"""The page's data for the views that set experiments side by side.

- ``knee_searches_json``: each knee-search experiment (``exp4c_knee``)
  curve by curve: the searched knee with its bracket, seed spread, cost and
  status, beside the grid knee of the source experiment (``exp4c``).
- ``comparisons_json``: the variants of ``gcs_throttle``, ``retry_policies``
  and ``append_catalog`` with each curve's differences from the baseline.

Each variant's or knee study's own curves (usable throughput, knee, latencies
at the knee, lower-bound flags) are already in the study's payload; these
entries add what only the pairing knows, and name the study ids the page
looks the rest up in. Compact keys as in payload.py: ``s`` series id, ``p``
provider, ``t`` table count, ``m`` mix id.
"""

from __future__ import annotations

from typing import Callable, Optional

from simcore.usable import ABOVE_SEARCH_RANGE, BELOW_SEARCH_RANGE, FOUND, success_metric
from dashboards.answers import summary_for
from dashboards.knee import (SEARCH_RESOLUTION, fine_grid_simulations, matching_source_study, searched_knee,
                             within_resolution)
from dashboards.rounding import rounded, spread_json
from dashboards.snapshot import StoreSnapshot
from dashboards.studies import Study
from dashboards.variants import Comparison, compare_variants, comparison_specs, knee_mean
from ray_jobs.knee_curves import source_experiment


def _knee_search_json(knee_study: Study, studies: list, frontier_of: Callable, bounds_of: Callable,
                      snapshot: StoreSnapshot) -> dict:
    source, differing = matching_source_study(knee_study, studies)
    path, summary, problems = summary_for(snapshot.knee_summaries, knee_study)
    # The range and target the search used, from its summary; else the
    # source grid's span (the search's default) at 2%.
    ranges = [entry.search_range for entry in summary.values() if entry.search_range]
    if ranges:
        span, resolution = (min(r[0] for r in ranges), max(r[1] for r in ranges)), max(r[2] for r in ranges)
    elif source is not None:
        span, resolution = (min(source.scales), max(source.scales)), SEARCH_RESOLUTION
    else:
        span, resolution = (min(knee_study.scales), max(knee_study.scales)), SEARCH_RESOLUTION
    source_curves = {(c.series, c.num_tables, c.mix): c for c in source.curves} if source else {}
    curves = []
    totals = {"curves": 0, "searched_sims": 0, "grid_sims": 0, "grid_curves": 0, "fine_grid_sims": 0,
              FOUND: 0, ABOVE_SEARCH_RANGE: 0, BELOW_SEARCH_RANGE: 0, "within_resolution": 0}
    for curve in knee_study.curves:
        key = (curve.series, curve.num_tables, curve.mix)
        searched = searched_knee(curve.points)
        seeds_per_point = max(len(point.seeds) for point in curve.points)
        fine = fine_grid_simulations(span[0], span[1], seeds_per_point, resolution)
        grid = None
        grid_curve = source_curves.get(key)
        if grid_curve is not None:
            frontier = frontier_of(source.id, key)
            _missing, heavier_missing, at_edge = bounds_of(source, grid_curve, frontier)
            grid_sims = sum(len(point.seeds) for point in grid_curve.points)
            grid = {"usable": rounded(frontier.usable_cps), "knee_x": rounded(frontier.knee.scale_ms)
                    if frontier.knee else None, "knee_tp": spread_json(frontier.knee_throughput),
                    "lower_bound": bool(heavier_missing or at_edge), "sims": grid_sims,
                    "n_points": len(grid_curve.points)}
            totals["grid_sims"] += grid_sims
            totals["grid_curves"] += 1
        entry = summary.get(key)
        delta = None
        if grid and grid["usable"] and searched.usable_cps is not None:
            delta = rounded(searched.usable_cps / frontier_of(source.id, key).usable_cps - 1.0)
        within = within_resolution(searched, resolution)
        curves.append({
            "s": curve.series, "t": curve.num_tables, "m": curve.mix,
            "knee": rounded(searched.usable_cps),
            "knee_x": rounded(searched.knee.scale_ms) if searched.knee else None,
            "knee_tp": spread_json(searched.knee_throughput),
            "knee_success": spread_json(searched.knee.metrics.get(success_metric(searched.knee.config)))
            if searched.knee else None,
            "vo_p99_s": spread_json(searched.knee.metrics.get("vo_commit_latency_p99_ms"), 1e-3)
            if searched.knee else None,
            "bracket": ({"knee_cps": rounded(searched.bracket_cps[0]), "failing_cps": rounded(searched.bracket_cps[1])}
                        if searched.bracket_cps else None),
            "bracket_x": ({"failing_ms": rounded(searched.bracket_scale_ms[0]),
                           "knee_ms": rounded(searched.bracket_scale_ms[1])} if searched.bracket_scale_ms else None),
            "width": rounded(searched.width), "offered_width": rounded(searched.offered_width),
            "within": within,
            "sims": searched.n_simulations, "scales": searched.n_scales, "seeds": list(searched.seeds),
            "status": searched.status,
            "file_status": entry.status if entry else None,
            "file_sims": entry.simulations if entry else None,
            "file_knee": rounded(entry.knee_rate_cps) if entry else None,
            "fine_grid_sims": fine,
            "grid": grid, "delta": delta,
        })
        totals["curves"] += 1
        totals["searched_sims"] += searched.n_simulations
        totals["fine_grid_sims"] += fine
        totals[searched.status] += 1
        totals["within_resolution"] += int(within)
    if path and not summary and not problems:
        problems = ["names none of the searched curves"]
    return {
        "experiment": knee_study.experiment, "study": knee_study.id, "label": knee_study.label,
        "source": source_experiment(knee_study.experiment), "source_study": source.id if source else None,
        "source_label": source.label if source else None,
        "settings_differ": [{"field": name, "search": knee_study.fixed.get(name), "grid": source.fixed.get(name)}
                            for name in differing] if source else [],
        "resolution": resolution, "span_x": {"low_ms": rounded(span[0]), "high_ms": rounded(span[1])},
        "summary_file": path, "summary_problems": problems,
        "curves": curves, "totals": totals,
    }


def knee_searches_json(studies: list, frontier_of: Callable, bounds_of: Callable, snapshot: StoreSnapshot) -> list:
    """One entry per knee-search study, in store order.

    ``frontier_of(study_id, curve key)`` gives a curve's ``CurveFrontier``;
    ``bounds_of(study, curve, frontier)`` its (missing scales, heavier
    missing, knee at the heaviest load) as the frontier view reports them.
    """
    return [_knee_search_json(study, studies, frontier_of, bounds_of, snapshot)
            for study in studies if study.is_searched]


def _difference_json(difference) -> dict:
    return {"usable_cps": rounded(difference.usable_cps), "usable_ratio": rounded(difference.usable_ratio),
            "vo_p99_s": rounded(difference.vo_p99_ms / 1000 if difference.vo_p99_ms is not None else None),
            "vo_p99_ratio": rounded(difference.vo_p99_ratio)}


def _throttled_per_txn(frontier) -> Optional[float]:
    refused, txns = knee_mean(frontier, "cas_throttled"), knee_mean(frontier, "n_txns")
    return refused / txns if refused is not None and txns else None


def comparison_json(comparison: Comparison) -> dict:
    spec = comparison.spec
    curves = []
    for curve in comparison.curves:
        entry = {"s": curve.series, "p": curve.provider, "t": curve.num_tables, "m": curve.mix,
                 "in": [variant.id for variant in comparison.variants if variant.id in curve.frontiers],
                 "d": {variant_id: _difference_json(difference)
                       for variant_id, difference in curve.differences.items()}}
        throttled = {variant_id: rounded(_throttled_per_txn(frontier), 3)
                     for variant_id, frontier in curve.frontiers.items() if _throttled_per_txn(frontier) is not None}
        if throttled:
            entry["throttled"] = throttled
        curves.append(entry)
    return {
        "id": spec.experiment, "experiment": spec.experiment, "field": spec.field, "sweep": spec.sweep,
        "baseline": comparison.baseline,
        "variants": [{"id": variant.id, "label": variant.label, "study": variant.study.id,
                      "value": rounded(variant.value) if not isinstance(variant.value, str) else variant.value}
                     for variant in comparison.variants],
        "ignored": list(comparison.ignored),
        "curves": curves,
    }


def comparisons_json(snapshot: StoreSnapshot, studies: list, frontier_of: Callable) -> dict:
    """experiment -> comparison entry, for every study the store's plans declare (empty ones too)."""
    return {spec.experiment: comparison_json(compare_variants(spec, studies, frontier_of))
            for spec in comparison_specs(snapshot.plans)}
