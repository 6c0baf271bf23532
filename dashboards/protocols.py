"""What the corrected commit protocol changed: each experiment's published and corrected runs side by side.

A sweep run under each protocol (``--protocol published|corrected``) writes
into one experiment; ``studies.group_studies`` makes each protocol's rows
their own study (the corrected one keeps the plain experiment id). This
module pairs them as the variants of one treatment, the protocol, with the
published protocol (what seed 001's figures were made with) as the
baseline, so each curve's change is the corrected usable throughput against
the published one. The pairing, the differences and the knees are
``variants.compare_variants``'s and ``frontier.py``'s: nothing is computed
twice. Pure functions; no I/O.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Mapping, Optional, Sequence

from dashboards.frontier import CurveFrontier
from dashboards.studies import FIXED_FIELDS, PUBLISHED_PROTOCOL, Study
from dashboards.variants import Comparison, ComparisonSpec, compare_variants
from simcore.config import DEFAULT_PROTOCOL, PROTOCOLS

PROTOCOL_FIELD = "protocol"
PROTOCOL_LABELS = ((PUBLISHED_PROTOCOL, "published (seed 001)"), (DEFAULT_PROTOCOL, "corrected"))


def protocol_spec(experiment: str, plan: Optional[Mapping] = None) -> ComparisonSpec:
    """The protocol as a treatment of ``experiment``: baseline published, the sweep that adds its published rows."""
    command = plan.get("command") if isinstance(plan, Mapping) else None
    sweep = f"{command or f'commit-sweeps sweep {experiment}'} --protocol {PUBLISHED_PROTOCOL}"
    return ComparisonSpec(experiment=experiment, field=PROTOCOL_FIELD, companions=(), baseline=PUBLISHED_PROTOCOL,
                          labels=PROTOCOL_LABELS, sweep=sweep)


def _others(study: Study) -> tuple:
    return tuple(study.fixed.get(name) for name in FIXED_FIELDS if name != PROTOCOL_FIELD)


def protocol_comparisons(studies: Sequence[Study], frontier_of: Callable[[str, tuple], Optional[CurveFrontier]],
                         plans: Optional[Mapping] = None) -> dict:
    """experiment -> ``Comparison`` of its published and corrected studies, for each experiment that has both.

    Only studies whose other fixed settings (duration, client, ...) some study
    of the other protocol shares are paired, so a change is never a change of
    something else too; the experiment's other studies are named in the
    comparison's ``ignored``. Writer workloads form no study and are not
    compared here.
    """
    plans = plans or {}
    by_experiment: dict = {}
    for study in studies:
        by_experiment.setdefault(study.experiment, []).append(study)
    comparisons = {}
    for experiment, members in sorted(by_experiment.items()):
        protocols_by_setting: dict = {}
        for study in members:
            protocols_by_setting.setdefault(_others(study), set()).add(study.protocol)
        paired = [study for study in members if len(protocols_by_setting[_others(study)] & set(PROTOCOLS)) > 1]
        if not paired:
            continue
        comparison = compare_variants(protocol_spec(experiment, plans.get(experiment)), paired, frontier_of)
        paired_ids = {study.id for study in paired}
        left_out = tuple(study.label for study in members if study.id not in paired_ids)
        comparisons[experiment] = replace(comparison, ignored=comparison.ignored + left_out)
    return comparisons
