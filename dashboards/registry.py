"""The page's registry: its views in page order, the scripts that draw them, and its URL filters.

One list says what the page shows. ``site.py`` renders it into index.html
(the table of contents, one numbered section per view, the script tags) and
``payload.py`` hands it to the page (the payload's ``views`` and
``filters``), whose main.js draws each view with the function its kind's
script registers (``Dash.views[kind]``). Views are of two scopes:

- page views (the frontier, the heatmaps, ...) draw the experiment chosen
  in the filters; they are declared here, in ``PAGE_VIEWS``.
- study views draw the experiments that declare them: a study's grid file
  (``sweeps/<study>.py``) names its view (``ray_jobs.grid.View``: kind,
  section, texts) and ``sweeps.catalog`` finds the file. A new study of a
  kind listed in ``KINDS`` needs nothing here.

A new kind of chart is one script, ``static/view-<kind>.js``, plus its line
in ``KINDS`` (which also places its sections on the page). No script names
an experiment: a view learns which to draw from its payload entry.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from dashboards.variants import variant_id
from ray_jobs.grid import Grid
from sweeps.catalog import EXPERIMENTS, KNEE_GRIDS

# Scripts before the views (drawing, the page's state and helpers) and after them (draws every view).
CORE_SCRIPTS = ("charts.js", "page.js", "variants.js")
LAST_SCRIPT = "main.js"

# The URL filters: the page's name for each -> its query parameter. The server accepts exactly these
# parameters (dashboards.server); the page reads and writes them from the payload's ``filters``.
FILTERS = {"experiment": "experiment", "series": "provider", "mix": "mix", "tables": "tables"}
FILTER_NAMES = tuple(FILTERS.values())

PAGE, STUDY = "page", "study"

# The sweep an empty page suggests running first: the widest of seed 001's storage-catalog grids.
EXAMPLE_EXPERIMENT = "exp4c"


@dataclass(frozen=True)
class Kind:
    """A kind of view: one script, ``view-<name>.js``, that registers ``Dash.views[name]``.

    Attributes:
        name: the kind's name (what a grid's ``View.kind`` says).
        draws: what it shows, for a study's author choosing one.
        scope: ``PAGE``, one section declared here drawing the experiment
            the filters choose; or ``STUDY``, one section per study that
            declares the kind.
        treatment: a study kind that sets a treatment's variants side by
            side (the payload's ``comparisons``): its grid must declare
            ``compares``.
    """

    name: str
    draws: str
    scope: str = STUDY
    treatment: bool = False

    @property
    def script(self) -> str:
        return f"view-{self.name}.js"


# Every kind, in page order: a study view's section comes after those of the kinds above it.
KINDS = (
    Kind("frontier", "usable throughput against table count, per provider and mix", PAGE),
    Kind("heatmaps", "a metric over table count x inter-arrival scale, low-success cells hatched", PAGE),
    Kind("curves", "latency against throughput as load rises", PAGE),
    Kind("tables", "usable throughput and latency at the knee, at 1 and 10 tables", PAGE),
    Kind("spread", "the seeds' spread of each point", PAGE),
    Kind("published", "seed 001's published figures beside the store's", PAGE),
    Kind("zipf", "success and conflicts by table rank (Zipf table choice)", PAGE),
    Kind("knee", "the knee search's knees beside the grid's", PAGE),
    Kind("treatment-frontier", "each variant's frontier against table count, the baseline solid and the others "
                               "dashed; usable throughput, its change, VO p99 and CAS refused by a throttle at "
                               "the knee", treatment=True),
    Kind("treatment-change", "per table count, bars of each variant's change in usable throughput and in VO p99 "
                             "at the knee; VO p99 along one load curve per variant", treatment=True),
    Kind("treatment-latency", "frontiers coloured by provider, variants dashed, with FA and VO mean latency at "
                              "the knee", treatment=True),
    Kind("treatment-colours", "frontiers with one colour per variant on a log axis (for many variants), with VO "
                              "p99 at the knee", treatment=True),
    Kind("max-writers", "the most usable writers against commit interval, per writer-workload setup"),
    Kind("designs", "each commit design's usable-throughput frontier against table count, one line per design and "
                    "one panel per store and mix, and the designs ranked per curve (the payload's ``designs``)"),
    Kind("protocol-change", "what the corrected commit protocol changed: usable throughput under the published and "
                            "the corrected protocol, per curve, and both frontiers", PAGE),
    Kind("provenance", "where the rows came from: versions, seeds, settings, missing points", PAGE),
)
KINDS_BY_NAME = {kind.name: kind for kind in KINDS}


@dataclass(frozen=True)
class PageView:
    """One section of the page: what site.py renders and what the payload tells the page.

    Attributes:
        id: the section's id (``#frontier``), the prefix of its elements'
            ids and classes (``frontier-body``).
        kind: the kind that draws it (``KINDS``).
        nav, title, lead: its name in the table of contents, its heading
            (numbered by the page) and the paragraph under it (`backticks`:
            code).
        experiments: what a study view draws (or, for the knee view, the
            experiments the knee search offers); empty for other page views.
        expects, legend, short_labels: a study view's texts
            (``ray_jobs.grid.View``); short labels by variant id.
    """

    id: str
    kind: str
    nav: str
    title: str
    lead: str = ""
    experiments: tuple = ()
    expects: str = ""
    legend: str = ""
    short_labels: tuple = ()

    def payload(self) -> dict:
        """The page's entry for this view (payload.schema.json, ``views``)."""
        return {"id": self.id, "kind": self.kind, "experiments": list(self.experiments), "expects": self.expects,
                "legend": self.legend, "short_labels": dict(self.short_labels)}


PAGE_VIEWS = (
    PageView("frontier", "frontier", "Frontier", "Usable-throughput frontier",
             "Per provider (or catalog CAS latency), the highest throughput whose success rate is above 95% (VO "
             "success where the mix has VO), against table count: one panel per FA/VO mix."),
    PageView("heatmaps", "heatmaps", "Heatmaps", "Heatmaps",
             "Table count \u00d7 inter-arrival scale, per provider and mix, FA and VO apart."),
    PageView("curves", "curves", "Latency vs throughput", "Latency vs throughput",
             "How latency grows as offered load rises, per provider."),
    PageView("tables", "tables", "Provider tables", "Provider tables",
             "Usable commits per second and mean latency at the knee, for 1 and for 10 tables."),
    PageView("spread", "spread", "Seed spread", "Seed spread"),
    PageView("published", "published", "Published", "Published vs simulated",
             "Seed 001's reported figures beside this store's values for the same configurations."),
    PageView("zipf", "zipf", "Zipf", "Zipf: success and conflicts by table rank"),
    PageView("knee", "knee", "Knee search", "Knee search",
             "The knee found by an adaptive search over the inter-arrival scale (`commit-sweeps knee`) beside the "
             "grid's knee, with the bracket it is known to lie in, its seed spread, and the simulations each took."),
    PageView("protocol-change", "protocol-change", "Correction", "What the correction changed",
             "The reference's author corrected its commit protocol in 2026 (a table-metadata read and write in every "
             "attempt, docs/reference/model.md); seed 001's figures came from the protocol as published. For an experiment "
             "swept under both (`--protocol published` and the default `corrected`), each curve's usable throughput "
             "under each and the change, and the published frontier (dashed) beside the corrected one."),
    PageView("provenance", "provenance", "Provenance", "Provenance"),
)


class RegistryError(ValueError):
    """A study's view declaration the page cannot show; the message names the grid, the field and what is allowed."""


def _study_view(grid: Grid) -> PageView:
    view = grid.view
    kind = KINDS_BY_NAME.get(view.kind)
    study_kinds = [k.name for k in KINDS if k.scope == STUDY]
    if kind is None or kind.scope != STUDY:
        raise RegistryError(f"{grid.experiment}: view.kind: {view.kind!r} is not allowed; expected one of "
                            f"{', '.join(study_kinds)} (dashboards/registry.py lists them)")
    if kind.treatment and grid.compares is None:
        raise RegistryError(f"{grid.experiment}: view.kind: {view.kind!r} draws a treatment's variants; expected a "
                            f"grid that declares compares=Treatment(...), or another kind")
    return PageView(view.anchor, view.kind, view.nav, view.title, view.lead, (grid.experiment,), view.expects,
                    view.legend, tuple((variant_id(value), text) for value, text in view.short_labels))


def page_views(grids: Sequence[Grid], knee_experiments: Sequence[str] = ()) -> tuple:
    """Every section of the page, in page order: the page views and the views ``grids`` declare.

    Grids that name the same anchor share its section (their experiments in
    grid order) and must declare the same view.

    Raises:
        RegistryError: an unknown kind, a treatment kind without a
            treatment, or an anchor taken by another view.
    """
    studies: dict = {}
    declared: dict = {}
    for grid in grids:
        if grid.view is None:
            continue
        view = _study_view(grid)
        if view.id in studies:
            if declared[view.id] != grid.view:
                raise RegistryError(f"{grid.experiment}: view.anchor: {view.id!r} is not allowed; another study "
                                    f"({studies[view.id].experiments[0]}) declares another view there")
            studies[view.id] = replace(studies[view.id], experiments=studies[view.id].experiments + view.experiments)
            continue
        if any(page.id == view.id for page in PAGE_VIEWS):
            raise RegistryError(f"{grid.experiment}: view.anchor: {view.id!r} is not allowed; the page's own "
                                f"views use {', '.join(page.id for page in PAGE_VIEWS)}")
        studies[view.id], declared[view.id] = view, grid.view
    knee = tuple(knee_experiments)
    views = [replace(page, experiments=knee) if page.kind == "knee" else page for page in PAGE_VIEWS]
    views += studies.values()
    order = {kind.name: position for position, kind in enumerate(KINDS)}
    return tuple(sorted(views, key=lambda view: order[view.kind]))  # stable: grid order within a kind


# The page's scripts in load order: the core, one per kind, then main.js.
SCRIPTS = CORE_SCRIPTS + tuple(kind.script for kind in KINDS) + (LAST_SCRIPT,)


# The experiments the knee search (``commit-sweeps knee --experiment NAME``) offers.
KNEE_EXPERIMENTS = tuple(KNEE_GRIDS)
# The page of this checkout: its own views and those of every study sweeps.catalog finds.
VIEWS = page_views(list(EXPERIMENTS.values()), KNEE_EXPERIMENTS)
if EXAMPLE_EXPERIMENT not in EXPERIMENTS:
    raise RegistryError(f"EXAMPLE_EXPERIMENT: {EXAMPLE_EXPERIMENT!r} is not allowed; expected one of "
                        f"{', '.join(EXPERIMENTS)}")


def page_json() -> dict:
    """The registry's part of the payload: the views in page order, the URL filters, the example sweep."""
    return {"views": [view.payload() for view in VIEWS], "filters": dict(FILTERS),
            "example_experiment": EXAMPLE_EXPERIMENT}
