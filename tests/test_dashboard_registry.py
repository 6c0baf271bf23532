"""The page's registry: one list of views, scripts and filters, and no script that names an experiment."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from dashboards import registry, server
from dashboards.registry import FILTER_NAMES, KINDS, PAGE_VIEWS, SCRIPTS, VIEWS, RegistryError, page_views
from dashboards.site import render_page
from ray_jobs import Grid, Treatment, View
from sweeps.catalog import EXPERIMENTS, KNEE_GRIDS

STATIC = Path(__file__).resolve().parents[1] / "dashboards" / "static"


def test_every_kind_has_its_script_and_the_script_registers_that_kind():
    for kind in KINDS:
        text = (STATIC / kind.script).read_text()
        registered = re.findall(r"Object\.assign\(window\.Dash\.views, \{ \"?([a-z-]+)\"?:", text)
        assert registered == [kind.name], (kind.script, registered)
    assert sorted(SCRIPTS) == sorted(path.name for path in STATIC.glob("*.js"))


def test_the_page_frame_lists_no_view_and_no_script():
    frame = (STATIC / "index.html").read_text()
    assert "<section" not in frame and "<script" not in frame and 'href="#' not in frame


def test_the_page_shows_each_declared_study_view_in_page_order():
    ids = [view.id for view in VIEWS]
    assert ids == ["frontier", "heatmaps", "curves", "tables", "spread", "published", "zipf", "knee", "throttle",
                   "retry", "append", "clients", "writers", "designs", "protocol-change", "provenance"]
    by_id = {view.id: view for view in VIEWS}
    assert by_id["throttle"].experiments == ("gcs_throttle",) and by_id["throttle"].kind == "treatment-frontier"
    assert by_id["writers"].experiments == ("writers", "writers_maintenance")
    assert by_id["knee"].experiments == tuple(KNEE_GRIDS)
    assert by_id["append"].payload()["short_labels"] == {"storage": "CAS", "append": "append"}
    page = render_page("<!-- registry: nav -->\n<!-- registry: sections -->\n<!-- registry: scripts -->")
    assert "<h2>9. GCS single-object write throttle</h2>" in page and "<h2>16. Provenance</h2>" in page
    assert "<h2>15. What the correction changed</h2>" in page
    assert "<h2>14. Commit designs</h2>" in page and by_id["designs"].experiments == ("architectures",)
    assert page.count("<script src=") == len(SCRIPTS) + 1  # and data.js first
    assert page.index('src="data.js"') < page.index('src="page.js"') < page.index('src="main.js"')


def test_no_script_names_an_experiment():
    names = set(EXPERIMENTS) | {name + "_knee" for name in KNEE_GRIDS}
    for path in STATIC.glob("*.js"):
        text = path.read_text()
        for name in names:
            literal = rf"""["'`]{re.escape(name)}["'`]|sweeps/{re.escape(name)}\.py|sweep {re.escape(name)}\b"""
            found = re.findall(literal, text)
            if re.search(r"\d", name):  # exp4c and the like are no English word: any mention counts
                found += re.findall(rf"\b{re.escape(name)}\b", text)
            assert not found, (path.name, name, found)


def test_the_server_and_the_page_take_the_filter_names_from_the_registry():
    assert server.FILTER_NAMES is FILTER_NAMES
    assert tuple(registry.page_json()["filters"].values()) == FILTER_NAMES
    page_js = (STATIC / "page.js").read_text()
    for name in FILTER_NAMES:
        assert not re.search(rf"params\.(get|set)\(\"{name}\"", page_js)


def grid(name="study", view=None, compares=True):
    return Grid(name, swept={"retry_policy": [None, "backoff"], "num_tables": [1]},
                compares=Treatment("retry_policy") if compares else None, view=view)


@pytest.mark.parametrize("grids, message", [
    ([grid(view=View("pie-chart", anchor="x", nav="X", title="X"))], "view.kind: 'pie-chart' is not allowed"),
    ([grid(view=View("frontier", anchor="x", nav="X", title="X"))], "view.kind: 'frontier' is not allowed"),
    ([grid(view=View("treatment-colours", anchor="x", nav="X", title="X"), compares=False)],
     "draws a treatment's variants; expected a grid that declares compares"),
    ([grid(view=View("treatment-colours", anchor="knee", nav="X", title="X"))], "view.anchor: 'knee' is not allowed"),
    ([grid("a", View("treatment-colours", anchor="x", nav="X", title="X")),
      grid("b", View("treatment-frontier", anchor="x", nav="X", title="X"))], "view.anchor: 'x' is not allowed"),
])
def test_a_view_the_page_cannot_show_is_refused_naming_the_study(grids, message):
    with pytest.raises(RegistryError, match=message):
        page_views(grids)


def test_study_views_follow_their_kind_and_share_an_anchor():
    colours = View("treatment-colours", anchor="x", nav="X", title="X")
    writers = View("max-writers", anchor="w", nav="W", title="W")
    views = page_views([grid("a", colours), grid("b", colours), grid("c", writers, compares=False)])
    assert [view.id for view in views] == [page.id for page in PAGE_VIEWS[:-2]] + ["x", "w", "protocol-change", "provenance"]
    assert views[-4].experiments == ("a", "b")
