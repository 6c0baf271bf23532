"""Compare the variants of one experiment: same curves, one setting changed.

A study runs the exp4c curves (provider, table count, mix, across
inter-arrival scales) under two or three values of one setting, the
*treatment*, which its grid declares (``Grid.compares``) and its sweep
records in the store's plan: ``gcs_throttle`` (``cas_throttle_per_s``),
``retry_policies`` (``retry_policy``), ``append_catalog`` (``catalog``).

The store groups each value's points into its own study (studies.py), so
each variant has its frontier computed as any experiment's. This module
pairs the variants' curves and computes, per curve and per non-baseline
variant, the difference from the baseline variant in usable throughput and
in VO p99 commit latency at each variant's own knee. Pure functions; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Sequence

from dashboards.frontier import CurveFrontier
from dashboards.points import Spread, is_number
from dashboards.studies import FIXED_FIELDS, Study, number_key
from simcore.config import DEFAULT_PROTOCOL


@dataclass(frozen=True)
class ComparisonSpec:
    """One experiment whose variants differ in ``field`` (and the settings that follow from it).

    Built from the study's own declaration (``ray_jobs.grid.Treatment``), which
    its sweep records in the store's plan; nothing here restates it.

    Attributes:
        experiment: the store's experiment name.
        field: the treatment, a fixed config field of each variant's study.
        companions: fields whose value follows from ``field`` (the backoff
            settings of a retry policy): part of a variant, not a reason to
            split one.
        baseline: the treatment's reference value (the reference's behaviour).
        labels: (value, text) pairs; other values are shown as they are.
        sweep: the command that fills the experiment.
    """

    experiment: str
    field: str
    companions: tuple
    baseline: object
    labels: tuple
    sweep: str

    def label(self, value) -> str:
        for known, text in self.labels:
            if known == value:
                return text
        return "unset" if value is None else str(value)

    @classmethod
    def from_plan(cls, experiment: str, plan: Mapping) -> Optional["ComparisonSpec"]:
        """The comparison a sweep plan declares, or None for a plain experiment (or a plan it cannot read)."""
        compares = plan.get("compares") if isinstance(plan, Mapping) else None
        if not isinstance(compares, Mapping) or not isinstance(compares.get("field"), str):
            return None
        labels = tuple((pair[0], str(pair[1])) for pair in compares.get("labels") or ()
                       if isinstance(pair, (list, tuple)) and len(pair) == 2)
        return cls(experiment=experiment, field=compares["field"],
                   companions=tuple(compares.get("companions") or ()), baseline=compares.get("baseline"),
                   labels=labels, sweep=str(plan.get("command") or f"commit-sweeps sweep {experiment}"))


def comparison_specs(plans: Mapping[str, Mapping]) -> tuple:
    """Every comparison the store's plans declare (experiment -> plan), by experiment name."""
    specs = (ComparisonSpec.from_plan(experiment, plan) for experiment, plan in sorted(plans.items()))
    return tuple(spec for spec in specs if spec is not None)


@dataclass(frozen=True)
class Variant:
    """One treatment value: its id (text, unique in the comparison), label and study."""

    id: str
    value: object
    label: str
    study: Study


@dataclass(frozen=True)
class Difference:
    """A variant minus the baseline, on one curve; None where either side has no value.

    ``*_ratio`` is variant / baseline - 1 (0.25 = 25% more).
    """

    usable_cps: Optional[float]
    usable_ratio: Optional[float]
    vo_p99_ms: Optional[float]
    vo_p99_ratio: Optional[float]


@dataclass(frozen=True)
class ComparedCurve:
    """One (series, tables, mix) across the variants."""

    series: str
    provider: str
    num_tables: int
    mix: str
    frontiers: Mapping  # variant id -> CurveFrontier, for the variants that ran this curve
    differences: Mapping  # non-baseline variant id -> Difference (only with a baseline frontier)


@dataclass(frozen=True)
class Comparison:
    """The variants of ``spec.experiment`` side by side.

    Attributes:
        variants: in baseline-first, then label order.
        baseline: the baseline variant's id, or None when the store lacks it.
        curves: every curve that some variant ran, sorted.
        ignored: labels of studies of the experiment left out because they
            differ in other settings too (e.g. another simulated duration).
    """

    spec: ComparisonSpec
    variants: tuple
    baseline: Optional[str]
    curves: tuple
    ignored: tuple

    @property
    def is_empty(self) -> bool:
        return not self.variants


def knee_mean(frontier: Optional[CurveFrontier], metric: str) -> Optional[float]:
    """Seed mean of ``metric`` at the frontier's knee (None: no knee or no value)."""
    if frontier is None or frontier.knee is None:
        return None
    spread: Optional[Spread] = frontier.knee.metrics.get(metric)
    return spread.mean if spread else None


def _difference(value: Optional[float], base: Optional[float]) -> tuple:
    if not (is_number(value) and is_number(base)):
        return None, None
    return value - base, (value / base - 1.0) if base else None


def difference(variant: Optional[CurveFrontier], baseline: Optional[CurveFrontier]) -> Difference:
    """``variant`` minus ``baseline`` in usable throughput and in VO p99 latency at each knee."""
    usable, usable_ratio = _difference(variant.usable_cps if variant else None,
                                       baseline.usable_cps if baseline else None)
    p99, p99_ratio = _difference(knee_mean(variant, "vo_commit_latency_p99_ms"),
                                 knee_mean(baseline, "vo_commit_latency_p99_ms"))
    return Difference(usable_cps=usable, usable_ratio=usable_ratio, vo_p99_ms=p99, vo_p99_ratio=p99_ratio)


def variant_id(value) -> str:
    """A treatment value as the page names its variant: "none" for unset, numbers as number_key, text as it is."""
    if value is None:
        return "none"
    return number_key(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def compare_variants(spec: ComparisonSpec, studies: Sequence[Study],
                     frontier_of: Callable[[str, tuple], Optional[CurveFrontier]]) -> Comparison:
    """The variants of ``spec.experiment`` among ``studies``, with per-curve differences.

    ``frontier_of(study_id, (series, tables, mix))`` gives a curve's frontier.
    Studies of the experiment that also differ in a field other than the
    treatment and its companions are grouped apart; the group of the default
    commit protocol (corrected) with the most points is compared and the
    others are listed in ``ignored``, so rows of the two protocols are never
    set side by side as one treatment's variants.
    """
    treatment = (spec.field,) + tuple(spec.companions)
    others = tuple(name for name in FIXED_FIELDS if name not in treatment)
    groups: dict = {}
    for study in studies:
        if study.experiment == spec.experiment:
            groups.setdefault(tuple(study.fixed.get(name) for name in others), []).append(study)
    if not groups:
        return Comparison(spec=spec, variants=(), baseline=None, curves=(), ignored=())
    # The default (corrected) protocol's group first, whatever its size: the page's answers are corrected ones.
    ranked = sorted(groups.values(), key=lambda group: (all(study.protocol != DEFAULT_PROTOCOL for study in group),
                                                        -sum(len(study.points) for study in group),
                                                        [study.id for study in group]))
    chosen, ignored = ranked[0], tuple(study.label for group in ranked[1:] for study in group)

    variants, used_ids = [], set()
    for study in chosen:
        value = study.fixed.get(spec.field)
        key, label = variant_id(value), spec.label(value)
        if key in used_ids:  # same treatment value, other companion settings
            key, label = f"{key}~{len(used_ids) + 1}", f"{label} ({study.label})"
        used_ids.add(key)
        variants.append(Variant(id=key, value=value, label=label, study=study))
    variants.sort(key=lambda variant: (variant.value != spec.baseline, variant.label))
    baseline = variants[0].id if variants[0].value == spec.baseline else None

    keys: dict = {}
    for variant in variants:
        for curve in variant.study.curves:
            provider = next(s.provider for s in variant.study.series if s.id == curve.series)
            keys.setdefault((curve.series, curve.num_tables, curve.mix), provider)
    curves = []
    for key in sorted(keys, key=lambda k: (k[0], k[1], k[2])):
        frontiers = {variant.id: frontier for variant in variants
                     if (frontier := frontier_of(variant.study.id, key)) is not None}
        differences = {}
        if baseline is not None and baseline in frontiers:
            differences = {variant.id: difference(frontiers.get(variant.id), frontiers[baseline])
                           for variant in variants if variant.id != baseline and variant.id in frontiers}
        curves.append(ComparedCurve(series=key[0], provider=keys[key], num_tables=key[1], mix=key[2],
                                    frontiers=frontiers, differences=differences))
    return Comparison(spec=spec, variants=tuple(variants), baseline=baseline, curves=tuple(curves), ignored=ignored)
