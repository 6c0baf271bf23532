"""Why each of seed 001's published figures differs from simcore's steady-state number.

``benchmarks/published_repro.py`` simulates the configuration behind every
published figure and computes it under each metric set of
``simcore.metric_sets`` from the same runs; it writes the outcome to
``data/published_explained.json`` with ``explain`` below. The dashboard's
published view reads that file (``load_explained``, ``explanation_for``) to
show, per figure, each set's value, whether it lands within the printed
rounding, and a sentence saying why the numbers differ.

Verdicts: ``within rounding`` (within half a unit of the last printed digit),
``within noise`` (within that plus two standard errors over the seeds),
``off`` (further), ``no usable point`` (a knee figure whose curve has no
point above 95% success under that set).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib import resources
from typing import Optional

from dashboards.published import PublishedFigure, describe

DATA_RESOURCE = "published_explained.json"
# The candidate that runs the model with SimConfig.vo_convoy="table" under the seed001 metric set.
TABLE_CONVOY_LABEL = "seed001+table-convoy"
STEADY_STATE_LABEL = "steady-state"
WITHIN_ROUNDING, WITHIN_NOISE, OFF, NO_USABLE = "within rounding", "within noise", "off", "no usable point"
NOISE_STANDARD_ERRORS = 2.0

# Why a definition moves each kind of figure (seed 001 used the reference's
# analysis paths; simcore's default is the steady-state window of MODEL.md).
_WHY = {
    "usable_throughput": (
        "seed 001's throughput is the commit rate inside the reference heatmap path's middle-80% window "
        "(commits of transactions submitted after the first 10% of the run that committed before the last 10%, "
        "over the window's length); long transactions submitted near the window's end commit after it and are "
        "not counted, so it reads about 10% below simcore's steady-state rate (window commits over the span of "
        "window submits). Usability is judged on success over every recorded transaction."),
    "fa_mean_latency_at_knee": (
        "mean FA commit latency over every recorded committed FA transaction at the knee; the knee itself "
        "moves with the throughput definition, so it is read at the point the published definitions pick."),
    "vo_mean_latency_at_knee": (
        "mean VO commit latency over every recorded committed VO transaction at the knee; VO latency grows "
        "steeply with load, so the knee the published definitions pick matters more than the window."),
    "fa_success_rate": (
        "success over every recorded transaction of the type (the reference's per-type and heatmap paths use "
        "no warm-up window): the first minutes of a run are less contended, so it reads a little higher than "
        "the steady-state window at high load."),
    "vo_success_rate": (
        "success over every recorded VO transaction (no warm-up window), as the reference's per-type path."),
    "fa_mean_latency": (
        "mean commit latency of every recorded committed FA transaction (per-type path, no window)."),
    "vo_mean_latency": (
        "mean commit latency of every recorded committed VO transaction (per-type path, no window)."),
}


@dataclass(frozen=True)
class SetValue:
    """One metric set's value for one figure, in the published unit."""

    metric_set: str
    value: Optional[float]
    sem: Optional[float]        # standard error of the mean over seeds
    scale_ms: Optional[float]   # the grid point read (the knee for knee figures)
    n_seeds: int


def rounding_half_unit(printed: str) -> float:
    """Half a unit of the last printed digit: '14.9' -> 0.05, '1089' -> 0.5."""
    text = printed.strip()
    decimals = len(text.split(".", 1)[1]) if "." in text else 0
    return 0.5 * 10.0 ** -decimals


def figure_key(figure: PublishedFigure) -> str:
    """A stable id of a figure: every field that places it, joined by '|'."""
    def number(value):
        return "" if value is None else f"{value:g}"
    distribution = figure.table_distribution + (number(figure.zipf_alpha) if figure.zipf_alpha else "")
    return "|".join((figure.experiment, figure.provider, number(figure.catalog_latency_ms), distribution,
                     str(figure.num_tables), number(figure.fast_append_ratio),
                     number(figure.inter_arrival_scale_ms), figure.metric))


def verdict(published: float, half_unit: float, value: Optional[float], sem: Optional[float]) -> str:
    if value is None or math.isnan(value):
        return NO_USABLE
    distance = abs(value - published)
    if distance <= half_unit + 1e-12:
        return WITHIN_ROUNDING
    if distance <= half_unit + NOISE_STANDARD_ERRORS * (sem or 0.0):
        return WITHIN_NOISE
    return OFF


def _relative(value: Optional[float], published: float) -> Optional[float]:
    if value is None or math.isnan(value) or published == 0:
        return None
    return value / published - 1.0


def _sentence(figure: PublishedFigure, cells: dict, best: str) -> str:
    published = figure.value
    best_cell = cells[best]
    steady = cells.get(STEADY_STATE_LABEL)
    parts = []
    if best_cell["verdict"] in (WITHIN_ROUNDING, WITHIN_NOISE):
        parts.append(f"Reproduced by the '{best}' metric set ({best_cell['value']:.{best_cell['decimals']}f} "
                     f"vs {figure.value:g}, {best_cell['verdict']}).")
    else:
        parts.append(f"No metric set lands within the printed rounding; closest is '{best}' at "
                     + ("no usable point" if best_cell["value"] is None
                        else f"{best_cell['value']:.{best_cell['decimals']}f} ({best_cell['relative'] * 100:+.1f}%)")
                     + ".")
    if steady is not None and steady["value"] is not None and best != STEADY_STATE_LABEL:
        parts.append(f"simcore's default steady-state window gives {steady['value']:.{steady['decimals']}f} "
                     f"({steady['relative'] * 100:+.1f}% from the published value).")
    elif steady is not None and steady["value"] is None:
        parts.append("The steady-state window finds no point above 95% success on this curve.")
    reference_model = cells.get("seed001")
    if (best == TABLE_CONVOY_LABEL and reference_model is not None
            and reference_model["verdict"] not in (WITHIN_ROUNDING, WITHIN_NOISE)):
        parts.append("The same metrics on the reference model (revision 3bded463, whose VO convoy reads one "
                     "manifest list per commit to any table) give "
                     + ("no usable point" if reference_model["value"] is None
                        else f"{reference_model['value']:.{reference_model['decimals']}f}")
                     + ": seed 001's multi-table VO figures need a convoy of the table's own commits "
                       "(SimConfig.vo_convoy='table'), as the post itself describes VO retries.")
    parts.append("Published: " + _WHY.get(figure.metric, "as printed in seed 001."))
    return " ".join(parts)


def explain(figure: PublishedFigure, half_unit: float, values: list[SetValue]) -> dict:
    """One figure's entry of ``published_explained.json``: every set's value, verdict and a sentence."""
    decimals = max(0, round(-math.log10(half_unit * 2))) + 1
    cells = {}
    for value in values:
        cells[value.metric_set] = {
            "value": None if value.value is None or math.isnan(value.value) else value.value,
            "sem": value.sem, "scale_ms": value.scale_ms, "n_seeds": value.n_seeds, "decimals": decimals,
            "relative": _relative(value.value, figure.value),
            "verdict": verdict(figure.value, half_unit, value.value, value.sem)}
    rank = {WITHIN_ROUNDING: 0, WITHIN_NOISE: 1, OFF: 2, NO_USABLE: 3}
    best = min(cells, key=lambda name: (rank[cells[name]["verdict"]],
                                        abs(cells[name]["relative"]) if cells[name]["relative"] is not None
                                        else math.inf))
    return {"key": figure_key(figure), "where": describe(figure), "metric": figure.metric,
            "published": figure.value, "unit": figure.unit, "half_unit": half_unit, "sets": cells,
            "best": best, "explanation": _sentence(figure, cells, best)}


def load_explained() -> dict:
    """The shipped ``published_explained.json`` (an empty figure list if it is absent)."""
    resource = resources.files("dashboards").joinpath("data", DATA_RESOURCE)
    if not resource.is_file():
        return {"metric_sets": [], "figures": []}
    return json.loads(resource.read_text(encoding="utf-8"))


def explanation_for(figure: PublishedFigure, explained: dict) -> Optional[dict]:
    """The entry of ``explained`` (as ``load_explained`` returns) for ``figure``, or None."""
    key = figure_key(figure)
    return next((entry for entry in explained.get("figures", []) if entry["key"] == key), None)
