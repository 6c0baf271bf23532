"""The page's data: everything the views draw, computed once at build time.

``build_payload(snapshot)`` turns a store snapshot into one JSON-ready dict:
per study its axes, every point's seed spread of the metrics the views use,
every curve's usable throughput and knee (one answer per curve: the searched
knee where the store holds an ended knee search of it, else the grid knee,
``answers.py``), the gaps in its grid, the Zipf
per-rank breakdowns, and provenance; then the published-vs-simulated table,
which commit protocol the default answers use, what the corrected
protocol changed where the store holds both (``protocols.py``), and which
study holds each commit design's curves (``design_frontiers.py``).
The page only filters and draws, so every number it shows is computed here,
where tests can check it. Numbers are rounded to 4 significant digits to keep
the page small.

Points, curves and Zipf entries are keyed compactly, as the page indexes
thousands of them: ``s`` series id (``s3``, ``s3@10ms``), ``t`` table count,
``m`` mix id (``fast_append_ratio`` as text: ``1``, ``0.9``), ``x``
inter-arrival scale in ms, ``n`` seeds, ``v`` metric -> its seed spread
(``{"mean", "sd", "low", "high", "n"}``). ``dashboards/static/payload.schema.json``
is the written contract: every key, checked against the payload built here
and against what the page reads (tests/test_payload_contract.py).
"""

from __future__ import annotations

from collections import Counter
from typing import Optional

from dashboards import __version__
from dashboards.answers import CurveAnswer, curve_answers, curve_key, grid_bounds
from dashboards.compared_payload import comparison_json, comparisons_json, knee_searches_json
from dashboards.design_frontiers import designs_json
from dashboards.frontier import CurveFrontier, curve_frontiers
from dashboards.knee import within_resolution
from simcore.usable import USABLE_SUCCESS_THRESHOLD
from dashboards.points import Spread, elementwise_mean, group_points, is_number
from dashboards.published import compare, describe, load_published
from dashboards.protocols import protocol_comparisons
from dashboards.published_explained import PREFERRED_LABEL, STEADY_STATE_LABEL, explanation_for, load_explained
from dashboards.registry import FILTERS, KNEE_EXPERIMENTS, VIEWS, page_json
from dashboards.rounding import rounded, spread_json
from dashboards.snapshot import TABLE_METRIC_COLUMNS, StoreSnapshot
from dashboards.studies import PUBLISHED_PROTOCOL, Study, group_studies, mix_id, number_key, protocol_of, series_id
from dashboards.writers import writer_frontiers
from ray_jobs.knee_curves import USABLE_STATISTIC, source_experiment
from ray_jobs.schema import LEGACY_VALUES
from simcore.config import DEFAULT_PROTOCOL
from simcore.redaction import redact

# 3: named keys throughout (spreads, brackets, differences), a written schema;
# 4: the page's registry (views, filters, example_experiment: dashboards.registry)
# 5: the commit protocol (``protocol``, each study's and writer setup's ``protocol``, ``protocol_changes``)
# 6: one answer per curve (``usable_source``, ``lower_bound``, ``grid``, ``search``, each study's ``knee_command``,
#    ``usable_statistic``); each seed's throughput at the knee (``seed_knee_tp``) and each seed's own knee
#    (``seed_own_knee``) apart
# 7: the commit designs side by side (``designs``: dashboards.design_frontiers)
PAYLOAD_SCHEMA_VERSION = 7

# What the heatmaps and curves can show. ``hatch_by`` names the success rate
# that marks a cell when it is at or below the threshold (the cell is not
# usable); "usable" means the rate the frontier reads for that mix.
METRICS = {
    "success_rate": {"label": "Success rate, all transactions", "unit": "%", "kind": "success",
                     "hatch_by": "success_rate"},
    "fa_success_rate": {"label": "FA success rate", "unit": "%", "kind": "success",
                        "hatch_by": "fa_success_rate"},
    "vo_success_rate": {"label": "VO success rate", "unit": "%", "kind": "success",
                        "hatch_by": "vo_success_rate"},
    "throughput_cps": {"label": "Throughput", "unit": "c/s", "kind": "throughput", "hatch_by": "usable"},
    "commit_latency_mean_ms": {"label": "Mean commit latency, all", "unit": "ms", "kind": "latency",
                               "hatch_by": "usable"},
    "commit_latency_p99_ms": {"label": "p99 commit latency, all", "unit": "ms", "kind": "latency",
                              "hatch_by": "usable"},
    "fa_commit_latency_mean_ms": {"label": "FA mean commit latency", "unit": "ms", "kind": "latency",
                                  "hatch_by": "fa_success_rate"},
    "fa_commit_latency_p99_ms": {"label": "FA p99 commit latency", "unit": "ms", "kind": "latency",
                                 "hatch_by": "fa_success_rate"},
    "vo_commit_latency_mean_ms": {"label": "VO mean commit latency", "unit": "ms", "kind": "latency",
                                  "hatch_by": "vo_success_rate"},
    "vo_commit_latency_p99_ms": {"label": "VO p99 commit latency", "unit": "ms", "kind": "latency",
                                 "hatch_by": "vo_success_rate"},
    "retries_mean": {"label": "Mean retries per commit", "unit": "", "kind": "count", "hatch_by": "usable"},
    # Wasted work against load: every request of every transaction, per committed one.
    "requests_cas_per_commit": {"label": "CAS requests per commit", "unit": "", "kind": "count",
                                "hatch_by": "usable"},
    "requests_catalog_read_per_commit": {"label": "Catalog reads per commit", "unit": "", "kind": "count",
                                         "hatch_by": "usable"},
    "requests_manifest_list_read_per_commit": {"label": "Manifest-list reads per commit", "unit": "",
                                               "kind": "count", "hatch_by": "usable"},
    "requests_manifest_list_write_per_commit": {"label": "Manifest-list writes per commit", "unit": "",
                                                "kind": "count", "hatch_by": "usable"},
    "requests_manifest_file_write_per_commit": {"label": "Manifest-file writes per commit", "unit": "",
                                                "kind": "count", "hatch_by": "usable"},
    "wasted_write_bytes_per_commit": {"label": "Bytes written by lost attempts per commit", "unit": "B",
                                      "kind": "count", "hatch_by": "usable"},
}


def _spread_json(spread: Optional[Spread]):
    return spread_json(spread)


def _point_json(point) -> dict:
    config = point.config
    return {
        "s": series_id(config), "t": config["num_tables"], "m": mix_id(config),
        "x": rounded(point.scale_ms), "n": len(point.seeds),
        "v": {name: _spread_json(point.metrics.get(name)) for name in METRICS if name in point.metrics},
    }


def _seed_knee_throughputs(frontier: CurveFrontier) -> list:
    """Per seed, the throughput at the knee point: the values whose range is the knee's spread."""
    if frontier.knee is None:
        return []
    return [{"seed": seed, "tp": rounded(row.get("throughput_cps") if is_number(row.get("throughput_cps")) else None)}
            for seed, row in sorted(frontier.knee.seed_metrics.items())]


def _grid_json(answer: CurveAnswer) -> Optional[dict]:
    grid = answer.grid
    if grid is None:
        return None
    return {"usable": rounded(grid.usable_cps), "knee_x": rounded(grid.knee.scale_ms) if grid.knee else None,
            "knee_tp": _spread_json(grid.knee_throughput), "lower_bound": answer.grid_lower_bound,
            "n_points": grid.n_points}


def _search_json(answer: CurveAnswer) -> Optional[dict]:
    search = answer.search
    if search is None:
        return None
    knee = search.knee
    return {"experiment": search.experiment, "study": search.study_id, "status": knee.status, "ended": search.ended,
            "summary_status": search.summary_status,
            "bracket": ({"knee_cps": rounded(knee.bracket_cps[0]), "failing_cps": rounded(knee.bracket_cps[1])}
                        if knee.bracket_cps else None),
            "width": rounded(knee.width), "offered_width": rounded(knee.offered_width),
            "within": within_resolution(knee, search.resolution), "resolution": search.resolution,
            "sims": knee.n_simulations}


def _curve_json(study: Study, curve, answer: CurveAnswer) -> dict:
    frontier = answer.frontier
    knee = frontier.knee
    own = frontier if study.is_searched else answer.grid  # the gaps and edges of this study's own grid
    missing_scales, heavier_missing, at_grid_edge = grid_bounds(study, curve, own)

    def knee_seconds(metric: str):
        return spread_json(knee.metrics.get(metric), 1e-3) if knee else None

    return {
        "s": curve.series, "t": curve.num_tables, "m": curve.mix,
        "usable": rounded(frontier.usable_cps),
        "usable_source": answer.source,
        "lower_bound": answer.lower_bound,
        "knee_x": rounded(knee.scale_ms) if knee else None,
        "knee_tp": _spread_json(frontier.knee_throughput),
        "seed_knee_tp": _seed_knee_throughputs(frontier),
        "knee_success": _spread_json(knee.metrics.get(frontier.success_metric)) if knee else None,
        "success_metric": frontier.success_metric,
        "fa_lat_s": knee_seconds("fa_commit_latency_mean_ms"),
        "vo_lat_s": knee_seconds("vo_commit_latency_mean_ms"),
        "vo_p99_s": knee_seconds("vo_commit_latency_p99_ms"),
        "seed_own_knee": [{"seed": seed, "usable": rounded(value)} for seed, value in frontier.seed_usable_cps],
        "n_seeds": len(frontier.seed_usable_cps),
        "n_points": frontier.n_points,
        "grid": _grid_json(answer),
        "search": _search_json(answer),
        "missing_x": [rounded(scale) for scale in missing_scales],
        "heavier_missing": heavier_missing,
        "at_grid_edge": at_grid_edge,
    }


def _zipf_json(point) -> Optional[dict]:
    if point.config["num_tables"] < 2:
        return None
    means = {name: elementwise_mean([row[name] for row in point.rows]) for name in TABLE_METRIC_COLUMNS}
    txns = means["table_n_txns"]
    if not txns:
        return None
    total = sum(value for value in txns if value is not None)

    def per_txn(name):
        values = means[name]
        return [rounded(value / count, 3) if is_number(value) and is_number(count) and count else None
                for value, count in zip(values, txns)]

    config = point.config
    return {
        "s": series_id(config), "t": config["num_tables"], "m": mix_id(config), "x": rounded(point.scale_ms),
        "n": len(point.seeds),
        "share": [rounded(value / total, 3) if is_number(value) and total else None for value in txns],
        "success": [rounded(value, 3) for value in means["table_success_rate"]],
        "same": per_txn("table_conflicts_same_table"),
        "catalog": per_txn("table_conflicts_catalog_only"),
    }


def _provenance_json(study: Study) -> dict:
    rows = [row for point in study.points for row in point.rows]
    seeds_per_point = [len(point.seeds) for point in study.points]
    finished = sorted(row["finished_at"] for row in rows if row["finished_at"])
    wall = [row["wall_s"] for row in rows if is_number(row["wall_s"])]
    return {
        "rows": len(rows),
        "points": len(study.points),
        "grid_points": len(study.points) + len(study.missing),
        "seeds": sorted({row["seed"] for row in rows if row["seed"] is not None}),
        "seeds_per_point": ({"min": min(seeds_per_point), "max": max(seeds_per_point)}
                            if seeds_per_point else None),
        "package_versions": dict(Counter(str(row["package_version"]) for row in rows).most_common()),
        "git_revisions": dict(Counter(str(row["git_revision"] or "unknown") for row in rows).most_common()),
        "finished_first": finished[0] if finished else None,
        "finished_last": finished[-1] if finished else None,
        "wall_s_total": rounded(sum(wall)) if wall else None,
        "fixed": {name: rounded(value) if isinstance(value, float) else value
                  for name, value in study.fixed.items()},
    }


def _missing_json(study: Study) -> dict:
    by_curve: dict = {}
    for series, tables, mix, scale in study.missing:
        by_curve.setdefault((series, tables, mix), []).append(rounded(scale))
    return {
        "count": len(study.missing),
        "of": len(study.points) + len(study.missing),
        "by_curve": [{"s": key[0], "t": key[1], "m": key[2], "x": scales} for key, scales in by_curve.items()],
    }


def knee_command(study: Study) -> Optional[str]:
    """The command that searches the knees of ``study``'s curves, with the settings that make them its own.

    None where the knee search does not offer the experiment. The duration
    is always named (the search's default need not be the sweep's); the
    client, commit protocol and latency model where the study sets them.
    """
    experiment = source_experiment(study.experiment) if study.is_searched else study.experiment
    if experiment not in KNEE_EXPERIMENTS:
        return None
    fixed = study.fixed
    parts = ["commit-sweeps knee", f"--experiment {experiment}"]
    if fixed.get("client"):
        parts.append(f"--client {fixed['client']}")
    if study.protocol != DEFAULT_PROTOCOL:
        parts.append(f"--protocol {study.protocol}")
    if fixed.get("latency_model"):
        parts.append(f"--latency-model {fixed['latency_model']}")
    if is_number(fixed.get("duration_s")):
        parts.append(f"--duration-s {number_key(fixed['duration_s'])}")
    return " ".join(parts)


def _study_json(study: Study, answers: dict) -> dict:
    zipf = [entry for entry in (_zipf_json(point) for point in study.points) if entry] if study.is_zipf else []
    return {
        "id": study.id, "experiment": study.experiment, "label": study.label, "catalog": study.catalog,
        "protocol": study.protocol,
        "zipf": study.is_zipf, "searched": study.is_searched,
        # The experiment a searched study's curves come from, so the page never parses the naming.
        "searched_from": source_experiment(study.experiment) if study.is_searched else None,
        "knee_command": knee_command(study),
        "series": [{"id": s.id, "label": s.label, "provider": s.provider,
                    "catalog_latency_ms": rounded(s.catalog_latency_ms)} for s in study.series],
        "mixes": [{"id": mix, "label": label, "fast_append_ratio": rounded(fast), "success_metric": metric,
                   "has_vo": metric == "vo_success_rate"}
                  for mix, label, fast, metric in study.mixes],
        "tables": list(study.tables),
        "scales": [rounded(scale) for scale in study.scales],
        "points": [_point_json(point) for point in study.points],
        "curves": [_curve_json(study, curve, answers[(study.id, curve_key(curve))]) for curve in study.curves],
        "missing": _missing_json(study),
        "zipf_points": zipf,
        "provenance": _provenance_json(study),
    }


def _definition_json(entry) -> dict:
    """A figure under seed 001's definition, from its ``published_explained.json`` entry (or None)."""
    if entry is None or PREFERRED_LABEL not in entry["sets"]:
        return None
    cell, steady = entry["sets"][PREFERRED_LABEL], entry["sets"].get(STEADY_STATE_LABEL, {})
    return {"label": PREFERRED_LABEL, "value": rounded(cell["value"]), "x": rounded(cell["scale_ms"]),
            "verdict": cell["verdict"], "steady_state": rounded(steady.get("value")), "n_seeds": cell["n_seeds"]}


def _published_json(comparisons, explained=None) -> list:
    explained = explained if explained is not None else {}
    entries = []
    for item in comparisons:
        figure = item.figure
        entry = explanation_for(figure, explained)
        config = {"provider": figure.provider, "catalog_latency_ms": figure.catalog_latency_ms,
                  "fast_append_ratio": figure.fast_append_ratio, "merge_append_ratio": 0.0}
        entries.append({
            "experiment": figure.experiment + ("" if figure.table_distribution == "uniform" else "_zipf"),
            "metric": figure.metric, "quantity": item.quantity, "where": describe(figure),
            "provider": figure.provider, "t": figure.num_tables, "m": mix_id(config), "s": series_id(config),
            "x": rounded(figure.inter_arrival_scale_ms),
            "published": rounded(figure.value), "unit": figure.unit,
            "simulated": rounded(item.simulated), "low": rounded(item.low), "high": rounded(item.high),
            "n_seeds": item.n_seeds, "status": item.status, "study": item.study_id,
            "definition": _definition_json(entry), "explanation": entry["explanation"] if entry else None,
        })
    return entries


def _warnings(snapshot: StoreSnapshot, studies: list[Study]) -> list:
    warnings = []
    for skipped in snapshot.skipped_files:
        warnings.append(skipped.describe())
    lacking = [name for name in snapshot.missing_columns if name not in LEGACY_VALUES]
    if lacking:
        warnings.append("The store lacks the columns " + ", ".join(lacking) + "; the views that need them are empty.")
    for name in snapshot.missing_columns:
        if name in LEGACY_VALUES:  # not empty: read as what made the rows then
            warnings.append(f"The store's files were written before the {name} column existed: their rows read as "
                            f"{name}={LEGACY_VALUES[name]}.")
    for summary in snapshot.knee_summaries:
        if summary.problem:
            warnings.append(f"Could not read the knee search summary {summary.path}: {summary.problem} "
                            "(the knee view uses the rows alone).")
    for study in studies:
        if study.missing:
            warnings.append(f"{study.label}: {len(study.missing)} of {len(study.points) + len(study.missing)} "
                            "grid points are missing (partial sweep?); see Provenance for which.")
        seeds = [len(point.seeds) for point in study.points]
        if seeds and min(seeds) != max(seeds):
            warnings.append(f"{study.label}: points have between {min(seeds)} and {max(seeds)} seeds.")
    return warnings


def _protocol_json(snapshot: StoreSnapshot) -> dict:
    """Which commit protocol the page's default answers use, and how many of the store's rows each protocol made."""
    rows: Counter = Counter(protocol_of(row) for row in snapshot.rows)
    return {"default": DEFAULT_PROTOCOL, "published": PUBLISHED_PROTOCOL, "rows": dict(sorted(rows.items()))}


def build_payload(snapshot: StoreSnapshot, published=None) -> dict:
    """The page's data for ``snapshot``; ``published`` defaults to seed 001's figures."""
    points = group_points(snapshot.rows)
    studies = group_studies(points)
    frontiers = curve_frontiers(studies)
    answers = curve_answers(studies, frontiers, snapshot.knee_summaries)
    figures = load_published() if published is None else published

    def grid_of(study_id, key):
        return frontiers.get((study_id, key))

    def answer_of(study_id, key):
        answer = answers.get((study_id, key))
        return answer.frontier if answer else None

    # Seed 001 read its figures off its grid: they are compared with grid knees. Every other view shows the answer.
    comparisons = compare(figures, studies, grid_of)
    return {
        "schema": PAYLOAD_SCHEMA_VERSION,
        "dashboards_version": __version__,
        "generated_at": snapshot.read_at,
        "threshold": USABLE_SUCCESS_THRESHOLD,
        "usable_statistic": {"id": USABLE_STATISTIC.id, "label": USABLE_STATISTIC.label,
                             "description": USABLE_STATISTIC.description, "spread": USABLE_STATISTIC.spread},
        "store": {
            "uri": redact(snapshot.uri), "rows": len(snapshot.rows), "files_read": snapshot.files_read,
            "skipped_files": [{"path": item.path, "reason": item.reason, "quarantined_to": item.quarantined_to}
                              for item in snapshot.skipped_files],
            "duplicates_dropped": snapshot.duplicates_dropped,
            "missing_columns": list(snapshot.missing_columns),
        },
        "metrics": METRICS,
        "studies": [_study_json(study, answers) for study in studies],
        "published": _published_json(comparisons, load_explained()),
        "knee_searches": knee_searches_json(studies, grid_of, grid_bounds, snapshot),
        "comparisons": comparisons_json(snapshot, studies, answer_of),
        "designs": designs_json(VIEWS, studies, snapshot.plans, knee_command),
        "protocol": _protocol_json(snapshot),
        "protocol_changes": {experiment: comparison_json(comparison) for experiment, comparison
                             in protocol_comparisons(studies, answer_of, snapshot.plans).items()},
        "writers": writer_frontiers(points),
        "warnings": _warnings(snapshot, studies),
        **page_json(),
    }


def filter_values(payload: dict) -> dict:
    """Every value each URL filter may take in this payload (the server checks queries against it)."""
    studies = payload["studies"]
    return {
        FILTERS["experiment"]: {study["id"] for study in studies},
        FILTERS["series"]: {series["id"] for study in studies for series in study["series"]}
        | {series["provider"] for study in studies for series in study["series"]},
        FILTERS["mix"]: {mix["id"] for study in studies for mix in study["mixes"]},
        FILTERS["tables"]: {number_key(count) for study in studies for count in study["tables"]},
    }
