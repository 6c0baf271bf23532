"""The variant comparisons as plain text, for terminals, notes and CI logs.

``python -m dashboards compare`` prints, for each experiment of
study the store's plans declare, one line per curve: every
variant's usable throughput and its change from the baseline, and the
change in VO p99 commit latency at each variant's own knee. The numbers are
the ones dashboard views 9 to 11 draw (same ``compare_variants``, same
answer per curve: the searched knee where the store holds an ended knee
search of the curve, else the grid knee, ``dashboards.answers``). When the
knee search has run on the experiment (``commit-sweeps knee
--experiment NAME``), a second table gives each variant's searched knee,
which is not limited to the grid's ten rates. Pure functions; the CLI does
the reading and printing.
"""

from __future__ import annotations

from typing import Optional, Sequence

from dashboards.answers import curve_answers
from dashboards.frontier import curve_frontiers
from dashboards.points import group_points
from dashboards.snapshot import StoreSnapshot
from dashboards.studies import group_studies
from dashboards.knee import parse_summary
from simcore.usable import FOUND
from dashboards.variants import Comparison, Variant, compare_variants, comparison_specs
from ray_jobs.knee_curves import USABLE_STATISTIC, knee_experiment_name


def comparisons_of(snapshot: StoreSnapshot, experiments: Optional[Sequence[str]] = None) -> list:
    """The non-empty comparisons in ``snapshot`` (all of them, or those named)."""
    studies = group_studies(group_points(snapshot.rows))
    answers = curve_answers(studies, curve_frontiers(studies), snapshot.knee_summaries)

    def frontier_of(study_id, key):
        answer = answers.get((study_id, key))
        return answer.frontier if answer else None

    chosen = [spec for spec in comparison_specs(snapshot.plans) if experiments is None or spec.experiment in experiments]
    return [comparison for comparison in (compare_variants(spec, studies, frontier_of) for spec in chosen)
            if not comparison.is_empty]


def _cps(value: Optional[float]) -> str:
    return "-" if value is None else f"{value:.2f}"


def _signed_percent(ratio: float) -> str:
    return "0%" if abs(ratio) < 0.005 else f"{ratio:+.0%}"


def _percent(ratio: Optional[float]) -> str:
    return "" if ratio is None else f" ({_signed_percent(ratio)})"


def _baseline(comparison: Comparison) -> Optional[Variant]:
    return next((variant for variant in comparison.variants if variant.id == comparison.baseline), None)


def _table(title: str, header: list, rows: list) -> list:
    """The title, then header and rows as left-aligned columns, indented two spaces."""
    widths = [max(len(line[i]) for line in [header] + rows) for i in range(len(header))]
    return [title] + ["  " + "  ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip()
                      for line in [header] + rows]


def format_comparison(comparison: Comparison) -> str:
    """One table: a row per curve, a column per variant (usable c/s, change) and VO p99 changes."""
    spec, variants = comparison.spec, comparison.variants
    others = [variant for variant in variants if variant.id != comparison.baseline]
    header = ["curve"] + [f"{variant.label} c/s" for variant in variants] + \
             [f"VO p99 {variant.label}" for variant in others if comparison.baseline is not None]
    rows = []
    for curve in comparison.curves:
        row = [f"{curve.series} {curve.num_tables}t fa={curve.mix}"]
        for variant in variants:
            frontier = curve.frontiers.get(variant.id)
            difference = curve.differences.get(variant.id)
            row.append(_cps(frontier.usable_cps if frontier else None)
                       + (_percent(difference.usable_ratio) if difference else ""))
        if comparison.baseline is not None:
            for variant in others:
                difference = curve.differences.get(variant.id)
                row.append("-" if difference is None or difference.vo_p99_ratio is None
                           else _signed_percent(difference.vo_p99_ratio))
        rows.append(row)
    lines = _table(f"{spec.experiment}: {spec.field} ({spec.sweep}); usable throughput = {USABLE_STATISTIC.label} "
                   f"(highest mean throughput with mean success above the threshold; the searched knee where an ended "
                   f"knee search of the curve is in the store, else the grid's); VO p99 change at each variant's knee",
                   header, rows)
    if comparison.baseline is None:
        lines.insert(1, "  (the baseline variant is not in the store: no changes shown)")
    if comparison.ignored:
        lines.append(f"  left out (other settings differ too): {', '.join(comparison.ignored)}")
    return "\n".join(lines)


def summary_line(comparison: Comparison) -> str:
    """How many curves each variant gains, loses or keeps (within 1%) usable throughput on."""
    parts = []
    for variant in comparison.variants:
        if variant.id == comparison.baseline:
            continue
        ratios = [curve.differences[variant.id].usable_ratio for curve in comparison.curves
                  if variant.id in curve.differences and curve.differences[variant.id].usable_ratio is not None]
        gained = sum(ratio > 0.01 for ratio in ratios)
        lost = sum(ratio < -0.01 for ratio in ratios)
        parts.append(f"{variant.label}: {len(ratios) - gained - lost} same, {gained} higher, {lost} lower")
    baseline = _baseline(comparison)
    return f"{comparison.spec.experiment}, against {baseline.label if baseline else 'no baseline'}: " + "; ".join(parts)


def searched_knees(comparison: Comparison, summary_content) -> dict:
    """(series, tables, mix) -> {variant id: knee c/s, None where none was found} from a knee search summary."""
    knees: dict = {}
    for variant in comparison.variants:
        entries, _problems = parse_summary(summary_content, {comparison.spec.field: variant.value})
        for key, entry in entries.items():
            knees.setdefault(key, {})[variant.id] = entry.knee_rate_cps if entry.status == FOUND else None
    return knees


def format_searched(comparison: Comparison, knees: dict) -> str:
    """The searched knee of every variant per curve, with its change from the baseline's."""
    spec, variants = comparison.spec, comparison.variants
    baseline = _baseline(comparison)
    header = ["curve"] + [f"{variant.label} knee c/s" for variant in variants]
    rows = []
    for key in sorted(knees):
        by_variant = knees[key]
        base = by_variant.get(baseline.id) if baseline else None
        row = [f"{key[0]} {key[1]}t fa={key[2]}"]
        for variant in variants:
            rate = by_variant.get(variant.id)
            change = rate / base - 1.0 if variant is not baseline and rate is not None and base else None
            row.append(_cps(rate) + _percent(change))
        rows.append(row)
    return "\n".join(_table(f"{spec.experiment}: searched knees ({knee_experiment_name(spec.experiment)}): highest rate "
                            f"with success above the threshold, to within the search's tolerance; '-' where the "
                            f"search found none", header, rows))
