"""The page's data for the "designs" view: each commit design of an experiment beside the others, curve by curve.

An experiment such as ``architectures`` runs every commit design
(``simcore.designs``) on the same curves (store, table count, mix). A design is
a set of config fields (catalog, metadata format, client), so each design's
points form a study of their own (studies.py), whose curves already carry their
answer (usable throughput, searched or grid knee, seed spread). This module
names each study's design (``simcore.designs.design_of``, from the study's
fixed fields) and pairs the designs' curves; the page looks each curve up in its
design's study. Compact keys as in payload.py: ``p`` provider, ``t`` table
count, ``m`` mix id, ``s`` design id -> the series id of the curve in that
design's study (a catalog service's series carries its round trip, ``s3@1ms``).
Pure functions; no I/O.
"""

from __future__ import annotations

from typing import Callable, Mapping, Optional, Sequence

from dashboards.studies import Study
from simcore.config import DEFAULT_PROTOCOL
from simcore.designs import DESIGNS, design_of

DESIGNS_KIND = "designs"


def _chosen(studies: Sequence[Study]) -> tuple[dict, list]:
    """design name -> the study the view draws for it, and the labels of the studies left out.

    Of several studies of one design (another duration, another protocol), the
    default protocol's with the most points is drawn; a study that runs no
    design (a hand-made catalog) is left out too.
    """
    by_design: dict = {}
    ignored = []
    for study in studies:
        name = design_of(study.fixed)
        if name is None:
            ignored.append(study.label)
            continue
        by_design.setdefault(name, []).append(study)
    chosen = {}
    for name, group in by_design.items():
        ranked = sorted(group, key=lambda study: (study.protocol != DEFAULT_PROTOCOL, -len(study.points), study.id))
        chosen[name] = ranked[0]
        ignored += [study.label for study in ranked[1:]]
    return chosen, ignored


def design_entry(experiment: str, studies: Sequence[Study], plan: Optional[Mapping],
                 knee_command: Callable[[Study], Optional[str]]) -> dict:
    """The designs view's entry for ``experiment`` (payload.schema.json, ``designs``): empty when the store lacks it.

    ``knee_command(study)`` is the command that searches a study's knees; the
    entry names one for every design, from a study of a design without a client
    of its own (the search gives DuckLake and Unity their own clients).
    """
    grid_studies = [study for study in studies if study.experiment == experiment and not study.is_searched]
    chosen, ignored = _chosen(grid_studies)
    designs = [design for design in DESIGNS if design.name in chosen]
    curves: dict = {}
    for design in designs:
        study = chosen[design.name]
        provider_of = {series.id: series.provider for series in study.series}
        for curve in study.curves:
            key = (provider_of[curve.series], curve.num_tables, curve.mix)
            curves.setdefault(key, {})[design.name] = curve.series
    plain = [chosen[design.name] for design in designs if design.client is None]
    command = plan.get("command") if isinstance(plan, Mapping) else None
    return {
        "experiment": experiment,
        "sweep": str(command or f"commit-sweeps sweep {experiment}"),
        "knee_command": knee_command(plain[0]) if plain else None,
        "designs": [{"id": design.name, "label": design.name, "summary": design.summary,
                     "study": chosen[design.name].id} for design in designs],
        "ignored": ignored,
        "curves": [{"p": provider, "t": tables, "m": mix, "s": series}
                   for (provider, tables, mix), series in sorted(curves.items(), key=lambda item: (
                       item[0][0], item[0][1], -float(item[0][2].split("+")[0])))],
    }


def designs_json(views: Sequence, studies: Sequence[Study], plans: Mapping,
                 knee_command: Callable[[Study], Optional[str]]) -> dict:
    """experiment -> its designs entry, for every experiment a view of kind "designs" draws (empty ones too)."""
    return {experiment: design_entry(experiment, studies, plans.get(experiment), knee_command)
            for view in views if view.kind == DESIGNS_KIND for experiment in view.experiments}
