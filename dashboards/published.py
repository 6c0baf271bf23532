"""Seed 001's published figures, and the store's value for each of them.

``data/seed001_published.csv`` lists numbers the study reported: usable
throughput per provider, mix and table count, mean latencies at the knee,
and success rates and latencies at single grid points. ``compare`` finds
the same quantity in the store (same experiment, provider, catalog latency,
table distribution, tables, mix and, for point figures, inter-arrival
scale) and returns both side by side, in the published unit. The published
numbers are anchors from the reference simulator, not exact targets.

Seed 001's figures were made with the published commit protocol, so they
are compared with the store's published-protocol rows only (``--protocol
published``; rows written before the protocol column existed read as
such). A figure whose configuration the store holds only under the
corrected protocol is ``not in store``: comparing it with another model's
numbers would say nothing about the reproduction.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from importlib import resources
from typing import Callable, Optional

from dashboards.frontier import CurveFrontier
from dashboards.studies import PUBLISHED_PROTOCOL, Study, mix_id, number_key, series_id

PUBLISHED_RESOURCE = "seed001_published.csv"

# metric name -> (what it is, store column or knee column, factor from the store's unit)
_KNEE_METRICS = {
    "usable_throughput": ("usable throughput", None, 1.0),
    "fa_mean_latency_at_knee": ("FA mean latency at the knee", "fa_commit_latency_mean_ms", 1e-3),
    "vo_mean_latency_at_knee": ("VO mean latency at the knee", "vo_commit_latency_mean_ms", 1e-3),
}
_POINT_METRICS = {
    "fa_success_rate": ("FA success rate", "fa_success_rate", 100.0),
    "vo_success_rate": ("VO success rate", "vo_success_rate", 100.0),
    "fa_mean_latency": ("FA mean commit latency", "fa_commit_latency_mean_ms", 1.0),
    "vo_mean_latency": ("VO mean commit latency", "vo_commit_latency_mean_ms", 1.0),
}


@dataclass(frozen=True)
class PublishedFigure:
    experiment: str
    provider: str
    catalog_latency_ms: Optional[float]
    table_distribution: str
    zipf_alpha: Optional[float]
    num_tables: int
    fast_append_ratio: float
    inter_arrival_scale_ms: Optional[float]
    metric: str
    value: float
    unit: str


@dataclass(frozen=True)
class Comparison:
    """A published figure and the store's value for the same quantity.

    ``status`` is ``ok``, ``not in store`` (no such curve or point),
    ``no usable point`` (the curve has no point above 95% success) or
    ``no value`` (the point exists but the metric is NaN in every seed).
    """

    figure: PublishedFigure
    quantity: str
    study_id: Optional[str]
    simulated: Optional[float]
    low: Optional[float]
    high: Optional[float]
    n_seeds: int
    status: str


def _optional_float(text: str) -> Optional[float]:
    return float(text) if text.strip() else None


def parse_published(text: str) -> tuple:
    """Parse the published-figures CSV (columns as in ``data/seed001_published.csv``)."""
    figures = []
    for line_number, record in enumerate(csv.DictReader(io.StringIO(text)), start=2):
        try:
            distribution = record["table_dist"].strip()
            alpha = None
            if distribution.startswith("zipf"):
                alpha = float(distribution[len("zipf"):] or 1.5)
                distribution = "zipf"
            figures.append(PublishedFigure(
                experiment=record["experiment"].strip(), provider=record["provider"].strip(),
                catalog_latency_ms=_optional_float(record["catalog_latency_ms"]),
                table_distribution=distribution, zipf_alpha=alpha,
                num_tables=int(record["num_tables"]), fast_append_ratio=float(record["fast_append_ratio"]),
                inter_arrival_scale_ms=_optional_float(record["inter_arrival_scale_ms"]),
                metric=record["metric"].strip(), value=float(record["value"]), unit=record["unit"].strip()))
        except (KeyError, ValueError) as error:
            raise ValueError(f"published figures, line {line_number}: {error}; expected the columns "
                             "experiment,provider,catalog_latency_ms,table_dist,num_tables,"
                             "fast_append_ratio,inter_arrival_scale_ms,metric,value,unit") from None
    return tuple(figures)


def load_published() -> tuple:
    """The figures shipped with the package."""
    text = resources.files("dashboards").joinpath("data", PUBLISHED_RESOURCE).read_text(encoding="utf-8")
    return parse_published(text)


def _find_study(figure: PublishedFigure, studies: list[Study]) -> Optional[Study]:
    names = [figure.experiment] if figure.table_distribution == "uniform" else \
        [f"{figure.experiment}_zipf", figure.experiment]
    for name in names:
        for study in studies:  # studies are ordered main variant first
            if study.experiment != name or study.protocol != PUBLISHED_PROTOCOL:
                continue  # another experiment, or rows of the corrected protocol (not what seed 001 ran)
            if (study.fixed.get("table_distribution") or "uniform") != figure.table_distribution:
                continue
            if figure.zipf_alpha is not None and study.fixed.get("zipf_alpha") != figure.zipf_alpha:
                continue
            return study
    return None


def _curve_key(figure: PublishedFigure) -> tuple:
    config = {"provider": figure.provider, "catalog_latency_ms": figure.catalog_latency_ms,
              "fast_append_ratio": figure.fast_append_ratio, "merge_append_ratio": 0.0}
    return series_id(config), figure.num_tables, mix_id(config)


def compare(figures, studies: list[Study],
            frontier_of: Callable[[str, tuple], Optional[CurveFrontier]]) -> list[Comparison]:
    """Each published figure with the store's value (``frontier_of(study_id, curve_key)``)."""
    comparisons = []
    for figure in figures:
        if figure.metric in _KNEE_METRICS:
            quantity, column, factor = _KNEE_METRICS[figure.metric]
        elif figure.metric in _POINT_METRICS:
            quantity, column, factor = _POINT_METRICS[figure.metric]
        else:
            comparisons.append(Comparison(figure, figure.metric, None, None, None, None, 0, "unknown metric"))
            continue
        study = _find_study(figure, studies)
        key = _curve_key(figure)
        if study is None:
            comparisons.append(Comparison(figure, quantity, None, None, None, None, 0, "not in store"))
            continue
        if figure.metric in _KNEE_METRICS:
            frontier = frontier_of(study.id, key)
            if frontier is None:
                comparisons.append(Comparison(figure, quantity, study.id, None, None, None, 0, "not in store"))
                continue
            if frontier.knee is None:
                comparisons.append(Comparison(figure, quantity, study.id, None, None, None,
                                              len(frontier.seed_usable_cps), "no usable point"))
                continue
            spread = frontier.knee_throughput if column is None else frontier.knee.metrics.get(column)
            n_seeds = len(frontier.knee.seeds)
        else:
            point = next((point for curve in study.curves
                          if (curve.series, curve.num_tables, curve.mix) == key
                          for point in curve.points if point.scale_ms == figure.inter_arrival_scale_ms), None)
            if point is None:
                comparisons.append(Comparison(figure, quantity, study.id, None, None, None, 0, "not in store"))
                continue
            spread = point.metrics.get(column)
            n_seeds = len(point.seeds)
        if spread is None:
            comparisons.append(Comparison(figure, quantity, study.id, None, None, None, n_seeds, "no value"))
            continue
        comparisons.append(Comparison(figure, quantity, study.id, spread.mean * factor, spread.low * factor,
                                      spread.high * factor, n_seeds, "ok"))
    return comparisons


def describe(figure: PublishedFigure) -> str:
    """Where a figure sits, in words: 's3x, 10 tables, FA 90%, 20 ms inter-arrival'."""
    parts = [figure.provider]
    if figure.catalog_latency_ms is not None:
        parts.append(f"CAS {number_key(figure.catalog_latency_ms)} ms")
    if figure.table_distribution == "zipf":
        parts.append(f"Zipf {number_key(figure.zipf_alpha)}")
    parts.append(f"{figure.num_tables} table{'s' if figure.num_tables != 1 else ''}")
    parts.append(f"FA {figure.fast_append_ratio * 100:.0f}%")
    if figure.inter_arrival_scale_ms is not None:
        parts.append(f"{number_key(figure.inter_arrival_scale_ms)} ms inter-arrival")
    return ", ".join(parts)
