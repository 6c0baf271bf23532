"""Group config points into studies, series, mixes and curves, and find gaps.

A *study* is what one chart compares: the points of one experiment that
share every config field except the swept axes (provider, catalog latency,
table count, mix, inter-arrival scale). An experiment normally is one study;
if it mixes, say, two simulated durations, it becomes one study per
duration, labelled by what differs, so no chart silently averages unlike runs.
The commit protocol (``SimConfig.protocol``) is one such field: a sweep run
under each protocol writes into one experiment, and the corrected rows (the
default answer) keep the plain experiment id whatever the sizes, the
published rows (seed 001's model) being the variant.

Within a study a *series* is one line of the frontier chart: a provider
(storage catalog) or a catalog CAS latency (service catalog), or both when
both vary. A *curve* is (series, table count, mix) across scales.

Gaps are reported against the study's own grid: the cross product of the
axis values it holds. A sweep that has run part of its grid shows what is
present and lists the rest. The knee search's experiments (``<exp>_knee``)
have no grid: each curve has the inter-arrival scales its search chose, so
they are *searched* studies and report no gaps. Pure functions; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from simcore.config import DEFAULT_PROTOCOL
from simcore.usable import success_metric
from dashboards.points import Point
from dashboards.snapshot import CONFIG_COLUMNS
from ray_jobs.knee_curves import is_knee_experiment
from ray_jobs.schema import LEGACY_VALUES

SWEPT_AXES = ("provider", "catalog_latency_ms", "num_tables", "fast_append_ratio", "merge_append_ratio",
              "inter_arrival_scale_ms")
# ``provider_profile`` (a profile's content) follows from the provider and the latency model:
# it must not split a study into one per provider.
FIXED_FIELDS = tuple(name for name in CONFIG_COLUMNS if name not in SWEPT_AXES and name != "provider_profile")
# How a null reads in a study label, where "none" would mislead.
# A null protocol is a row from before the field existed: the published protocol made it.
_NULL_TEXT = {"retry_policy": "immediate", "cas_throttle_per_s": "unthrottled", "latency_model": "reference",
              "client": "reference", "protocol": "published"}
PUBLISHED_PROTOCOL = LEGACY_VALUES["protocol"]  # seed 001's protocol, which made every row older than the column
# Considered first when telling variants apart: a client preset's name determines its retry fields.
_LEADING_FIELDS = ("client",)


def number_key(value) -> str:
    """A short, stable text form of a number for ids and URL values (0.9, 10, 1.5)."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return f"{value:g}"


def series_id(config: Mapping) -> str:
    latency = config.get("catalog_latency_ms")
    return config["provider"] if latency is None else f"{config['provider']}@{number_key(latency)}ms"


def mix_id(config: Mapping) -> str:
    merge = config.get("merge_append_ratio") or 0.0
    fast = number_key(config["fast_append_ratio"])
    return fast if not merge else f"{fast}+ma{number_key(merge)}"


def mix_label(config: Mapping) -> str:
    fast = config["fast_append_ratio"]
    merge = config.get("merge_append_ratio") or 0.0
    validated = max(0.0, 1.0 - fast - merge)
    parts = [f"FA {fast * 100:.0f}%"]
    if merge:
        parts.append(f"MA {merge * 100:.0f}%")
    if validated > 1e-9:
        parts.append(f"VO {validated * 100:.0f}%")
    return " / ".join(parts)


@dataclass(frozen=True)
class Series:
    id: str
    label: str
    provider: str
    catalog_latency_ms: Optional[float]


@dataclass(frozen=True)
class Curve:
    series: str
    num_tables: int
    mix: str
    points: tuple  # Points ordered by inter-arrival scale, heaviest load first


@dataclass(frozen=True)
class Study:
    """Points of one experiment that differ only along the swept axes.

    Attributes:
        id: unique across the store: the experiment name, with ``~2``, ``~3``
            appended for further variants of one experiment.
        label: the experiment name, plus the fixed fields that tell its
            variants apart.
        fixed: the fixed config fields' values.
        series, mixes, tables, scales: the axis values present, sorted.
        curves: every (series, tables, mix) present.
        missing: (series, tables, mix, scale) grid cells with no point
            (always empty for a searched study).
    """

    id: str
    experiment: str
    label: str
    fixed: Mapping
    points: tuple
    series: tuple
    mixes: tuple  # (mix id, label, fast_append_ratio, success column the frontier reads)
    tables: tuple
    scales: tuple
    curves: tuple
    missing: tuple

    @property
    def is_zipf(self) -> bool:
        return self.fixed.get("table_distribution") == "zipf"

    @property
    def catalog(self) -> str:
        return self.fixed.get("catalog") or ""

    @property
    def protocol(self) -> str:
        """The commit protocol that made the study's rows (a null from an old row reads as published)."""
        return protocol_of(self.fixed)

    @property
    def is_searched(self) -> bool:
        """Written by the knee search: its scales are chosen per curve, there is no grid."""
        return is_knee_experiment(self.experiment)


def protocol_of(fixed: Mapping) -> str:
    """The commit protocol of a study's fixed fields (or a config): null means published, as the store reads it."""
    return fixed.get("protocol") or PUBLISHED_PROTOCOL


def _series_label(provider: str, latency: Optional[float], providers: set, latencies: set) -> str:
    latency_text = f"CAS {number_key(latency)} ms" if latency is not None else ""
    if latency is None:
        return provider
    if len(providers) == 1 and len(latencies) > 0:
        return latency_text
    return f"{provider} · {latency_text}"


def _make_study(study_id: str, experiment: str, label: str, fixed: Mapping, points: list[Point]) -> Study:
    providers = {point.config["provider"] for point in points}
    latencies = {point.config["catalog_latency_ms"] for point in points}
    series_by_id = {}
    for point in points:
        config = point.config
        sid = series_id(config)
        if sid not in series_by_id:
            series_by_id[sid] = Series(sid, _series_label(config["provider"], config["catalog_latency_ms"],
                                                          providers, latencies),
                                       config["provider"], config["catalog_latency_ms"])
    series = tuple(sorted(series_by_id.values(),
                          key=lambda s: (s.provider, -1 if s.catalog_latency_ms is None else s.catalog_latency_ms)))
    mixes_by_id = {mix_id(point.config): (mix_id(point.config), mix_label(point.config),
                                          point.config["fast_append_ratio"], success_metric(point.config))
                   for point in points}
    mixes = tuple(sorted(mixes_by_id.values(), key=lambda mix: (-mix[2], mix[0])))
    tables = tuple(sorted({point.config["num_tables"] for point in points}))
    scales = tuple(sorted({point.scale_ms for point in points}))

    by_curve: dict = {}
    for point in points:
        key = (series_id(point.config), point.config["num_tables"], mix_id(point.config))
        by_curve.setdefault(key, []).append(point)
    curves = tuple(Curve(series=key[0], num_tables=key[1], mix=key[2],
                         points=tuple(sorted(curve_points, key=lambda point: point.scale_ms)))
                   for key, curve_points in sorted(by_curve.items(), key=lambda item: item[0]))
    present = {(series_id(point.config), point.config["num_tables"], mix_id(point.config), point.scale_ms)
               for point in points}
    missing = () if is_knee_experiment(experiment) else tuple(
        (s.id, table_count, mix[0], scale)
        for s in series for table_count in tables for mix in mixes for scale in scales
        if (s.id, table_count, mix[0], scale) not in present)
    return Study(id=study_id, experiment=experiment, label=label, fixed=dict(fixed), points=tuple(points),
                 series=series, mixes=mixes, tables=tables, scales=scales, curves=curves, missing=missing)


def group_studies(points: list[Point]) -> list[Study]:
    """Split points into studies: by experiment, then by the fixed config fields."""
    by_experiment: dict = {}
    for point in points:
        if point.config.get("writers") is not None:
            continue  # writer workloads are not inter-arrival curves: dashboards/writers.py reads them
        by_experiment.setdefault(point.experiment, []).append(point)
    studies = []
    for experiment in sorted(by_experiment):
        variants: dict = {}
        for point in by_experiment[experiment]:
            fixed = tuple((name, point.config[name]) for name in FIXED_FIELDS)
            variants.setdefault(fixed, []).append(point)
        # The default protocol's (corrected) variants first, whatever their sizes, so the
        # plain experiment id is the default answer; then the biggest variant, so
        # it names the main sweep; of equal ones, the plainest (most unset optional
        # fields: immediate retry, no throttle) first.
        ordered = sorted(variants.items(), key=lambda item: (protocol_of(dict(item[0])) != DEFAULT_PROTOCOL,
                                                             -len(item[1]),
                                                             -sum(value is None for _, value in item[0]),
                                                             repr(item[0])))
        differing = telling_fields([dict(fixed) for fixed, _ in ordered])
        for position, (fixed, variant_points) in enumerate(ordered):
            fixed_map = dict(fixed)
            label = experiment
            if differing:
                label += " (" + ", ".join(f"{name}={_plain(fixed_map[name], name)}" for name in differing) + ")"
            study_id = experiment if position == 0 else f"{experiment}~{position + 1}"
            studies.append(_make_study(study_id, experiment, label, fixed_map, variant_points))
    return studies


def telling_fields(variants: list) -> list:
    """The fixed fields that tell ``variants`` (dicts of fixed fields) apart, without redundant ones.

    A field that differs between variants is left out when the fields kept
    before it already determine its value: the backoff settings follow from
    ``retry_policy``, the throttle's burst from its rate. Fields are taken
    in ``FIXED_FIELDS`` order, a client preset's name first (it determines
    the retry settings).
    """
    kept: list = []
    for name in _LEADING_FIELDS + tuple(f for f in FIXED_FIELDS if f not in _LEADING_FIELDS):
        if len({variant.get(name) for variant in variants}) < 2:
            continue
        value_by_kept: dict = {}
        determined = True
        for variant in variants:
            key = tuple(variant.get(field) for field in kept)
            if value_by_kept.setdefault(key, variant.get(name)) != variant.get(name):
                determined = False
                break
        if not kept or not determined:
            kept.append(name)
    return kept


def _plain(value, name: str = "") -> str:
    if value is None:
        return _NULL_TEXT.get(name, "none")
    return number_key(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)
