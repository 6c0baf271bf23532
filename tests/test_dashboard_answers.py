"""One answer per curve: the searched knee where the store holds an ended search of the curve, else the grid knee.

Hand-made rows pin the rule (which search counts, what the payload says of
each curve, the one seed statistic and its spread); a tiny real knee search
then holds the dashboard and ``commit-sweeps capacity``'s search together.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import Future

import jsonschema
import pytest

from dashboards.payload import build_payload, knee_command
from dashboards.snapshot import read_store
from dashboards.studies import group_studies
from dashboards.points import group_points
from ray_jobs.knee_curves import USABLE_STATISTIC
from store_fixtures import contract_row, write_store_file
from test_dashboard_knee import CURVE, SEARCHED, grid_rows, knee_rows, vo
from test_payload_contract import SCHEMA

# SEARCHED with its bracket closed to within 2%: 45.2 ms fails (VO 94.5%, 7.9 c/s), 46 ms passes (7.8 c/s): the
# search's own stopping rule has nothing left to measure.
ENDED = {**{scale: rows for scale, rows in SEARCHED.items() if scale != 44.0}, 45.2: (vo(0.94, 7.85), vo(0.95, 7.95))}


def curves_of(payload, study_id):
    (study,) = [study for study in payload["studies"] if study["id"] == study_id]
    return {(c["s"], c["t"], c["m"]): c for c in study["curves"]}


def payload_of(store, *stores_rows, summary=None):
    for experiment, rows in stores_rows:
        write_store_file(str(store), experiment, rows)
    if summary is not None:
        (store / "_knee").mkdir()
        (store / "_knee" / "exp4c.json").write_text(json.dumps(summary))
    payload = build_payload(read_store(str(store)))
    jsonschema.validate(payload, SCHEMA, cls=jsonschema.Draft202012Validator)
    return payload


def test_an_ended_search_is_the_curves_answer_and_the_grid_knee_stays_beside_it(tmp_path):
    payload = payload_of(tmp_path, ("exp4c", grid_rows()), ("exp4c_knee", knee_rows(ENDED)))
    curve = curves_of(payload, "exp4c")[("s3", 1, "0.9")]
    assert curve["usable_source"] == "searched" and curve["usable"] == pytest.approx(7.8)
    assert curve["knee_x"] == 46.0 and (curve["knee_tp"]["low"], curve["knee_tp"]["high"]) == (7.7, 7.9)
    assert curve["grid"] == {"usable": pytest.approx(7.5), "knee_x": 50.0, "knee_tp": curve["grid"]["knee_tp"],
                             "lower_bound": False, "n_points": 8}
    assert curve["search"]["experiment"] == "exp4c_knee" and curve["search"]["ended"] is True
    assert curve["search"]["status"] == "found" and curve["search"]["within"] is True
    assert curve["lower_bound"] is False
    # The grid's own facts stay the grid's: its scales, its gaps.
    assert curve["missing_x"] == [] and curve["n_points"] == 6  # the search's points with every seed
    # The searched study answers with the same value.
    searched = curves_of(payload, "exp4c_knee")[("s3", 1, "0.9")]
    assert searched["usable_source"] == "searched" and searched["usable"] == curve["usable"]
    assert searched["grid"]["usable"] == pytest.approx(7.5)


def test_a_search_that_has_not_ended_leaves_the_grid_knee_and_says_so(tmp_path):
    # SEARCHED's bracket is 4.5% wide in rate: the search would measure again.
    payload = payload_of(tmp_path, ("exp4c", grid_rows()), ("exp4c_knee", knee_rows()))
    curve = curves_of(payload, "exp4c")[("s3", 1, "0.9")]
    assert curve["usable_source"] == "grid" and curve["usable"] == pytest.approx(7.5) and curve["knee_x"] == 50.0
    assert curve["search"]["ended"] is False and curve["grid"]["usable"] == curve["usable"]
    assert curve["knee_tp"] == curve["grid"]["knee_tp"]
    # The knee study itself still shows what its search found so far.
    assert curves_of(payload, "exp4c_knee")[("s3", 1, "0.9")]["usable"] == pytest.approx(7.8)


def test_the_summary_says_whether_the_search_ended(tmp_path):
    entry = {"curve_id": "x", "fixed": {**CURVE, "catalog": "storage", "catalog_latency_ms": None},
             "simulations": 12, "knee_rate_cps": 7.8, "seeds": [1, 2],
             "search_range": {"min_scale_ms": 20.0, "max_scale_ms": 5000.0, "tolerance": 0.05}}
    ended = payload_of(tmp_path / "a", ("exp4c", grid_rows()), ("exp4c_knee", knee_rows()),
                       summary={"curves": [{**entry, "status": "found"}]})
    curve = curves_of(ended, "exp4c")[("s3", 1, "0.9")]
    assert curve["usable_source"] == "searched" and curve["usable"] == pytest.approx(7.8)
    assert curve["search"]["summary_status"] == "found" and curve["search"]["resolution"] == 0.05
    interrupted = payload_of(tmp_path / "b", ("exp4c", grid_rows()), ("exp4c_knee", knee_rows(ENDED)),
                             summary={"curves": [{**entry, "status": "searching"}]})
    assert curves_of(interrupted, "exp4c")[("s3", 1, "0.9")]["usable_source"] == "grid"


def test_a_search_of_other_settings_is_not_this_curves_answer(tmp_path):
    payload = payload_of(tmp_path, ("exp4c", grid_rows()), ("exp4c_knee", knee_rows(ENDED, duration_s=1900.0)))
    curve = curves_of(payload, "exp4c")[("s3", 1, "0.9")]
    assert curve["usable_source"] == "grid" and curve["search"] is None
    searched = curves_of(payload, "exp4c_knee")[("s3", 1, "0.9")]
    assert searched["usable_source"] == "searched" and searched["grid"] is None


def test_a_knee_above_the_search_range_is_a_lower_bound(tmp_path):
    # Every point passes down to 20 ms, the default range's fastest end: the knee is at least that fast.
    passing = {20.0: (vo(0.99, 9.0), vo(0.99, 9.2)), 100.0: (vo(1.0, 4.0), vo(1.0, 4.0))}
    payload = payload_of(tmp_path, ("exp4c", grid_rows()), ("exp4c_knee", knee_rows(passing)))
    curve = curves_of(payload, "exp4c")[("s3", 1, "0.9")]
    assert curve["usable_source"] == "searched" and curve["search"]["status"] == "above_search_range"
    assert curve["lower_bound"] is True and curve["usable"] == pytest.approx(9.1)


def test_the_value_its_spread_and_each_seeds_own_knee_are_three_named_things(tmp_path):
    # The seed-mean curve fails at 100 ms (mean VO success 93%) and passes at 200 ms, yet seed 1 alone passes at
    # 100 ms: its own knee (3.9 c/s) lies above the value, and the value's spread is the seeds' throughput at 200 ms.
    rows = [contract_row("exp4c", {**CURVE, "inter_arrival_scale_ms": scale}, seed, vo(success, throughput))
            for scale, per_seed in {100.0: ((0.97, 3.9), (0.89, 4.1)), 200.0: ((0.99, 1.95), (0.98, 2.05))}.items()
            for seed, (success, throughput) in enumerate(per_seed, start=1)]
    payload = payload_of(tmp_path, ("exp4c", rows))
    curve = curves_of(payload, "exp4c")[("s3", 1, "0.9")]
    assert curve["usable"] == pytest.approx(2.0) and curve["knee_x"] == 200.0
    assert curve["seed_knee_tp"] == [{"seed": 1, "tp": 1.95}, {"seed": 2, "tp": 2.05}]
    assert (curve["knee_tp"]["low"], curve["knee_tp"]["high"]) == (1.95, 2.05)  # the values listed, no others
    assert curve["usable"] == pytest.approx(sum(s["tp"] for s in curve["seed_knee_tp"]) / 2)
    assert curve["seed_own_knee"] == [{"seed": 1, "usable": 3.9}, {"seed": 2, "usable": 2.05}]
    assert payload["usable_statistic"]["id"] == USABLE_STATISTIC.id
    assert payload["usable_statistic"]["label"] == "knee of the seed-mean curve"


def test_the_knee_command_names_the_settings_that_make_the_curves_the_studys(tmp_path):
    write_store_file(str(tmp_path), "exp4c", grid_rows() + grid_rows(client="iceberg-java", duration_s=1900.0))
    write_store_file(str(tmp_path), "exp4c_knee", knee_rows())
    studies = {study.label: study for study in group_studies(group_points(read_store(str(tmp_path)).rows))}
    commands = {label: knee_command(study) for label, study in studies.items()}
    assert commands["exp4c (client=reference)"] == "commit-sweeps knee --experiment exp4c --duration-s 3600"
    assert commands["exp4c (client=iceberg-java)"] == \
        "commit-sweeps knee --experiment exp4c --client iceberg-java --duration-s 1900"
    assert commands["exp4c_knee"] == "commit-sweeps knee --experiment exp4c --duration-s 3600"
    rows = [contract_row("no_knee_grid", {**CURVE, "inter_arrival_scale_ms": 100.0}, 1, vo(1.0, 4.0))]
    write_store_file(str(tmp_path / "other"), "no_knee_grid", rows)
    (other,) = group_studies(group_points(read_store(str(tmp_path / "other")).rows))
    assert knee_command(other) is None  # the knee search does not offer it


# -- the dashboard and capacity: one search, one statistic ------------------------------------------------------

def test_the_dashboard_shows_the_knee_capacity_finds_for_the_same_config(tmp_path):
    """A tiny real knee search into a store with a coarse grid of the same curve; capacity's search of that config."""
    from ray_jobs import Grid, ResultsStore
    from ray_jobs.capacity import capacity_search
    from ray_jobs.knee_curves import curves_from_grid
    from ray_jobs.knee_search import run_knee_search
    from ray_jobs.knee_summary import run_summary, write_summary
    from ray_jobs.search import run_seed
    from simcore.bisection import SearchRange
    from store_fixtures import simulated_rows

    def inline(config, seed):
        future = Future()
        future.set_result(run_seed(config, seed))
        return future

    fixed = {"catalog": "storage", "runtime_median_ms": 20_000.0, "duration_s": 1200.0}
    grid = Grid("exp4c", swept={"provider": ("s3x",), "num_tables": (1,), "inter_arrival_scale_ms": (30, 100, 300)},
                fixed=fixed)
    seeds, search_range = (1, 2), SearchRange(30.0, 300.0, 0.05)
    store_uri = str(tmp_path / "store")
    write_store_file(store_uri, "exp4c", simulated_rows("exp4c", grid.configs(), seeds))
    (curve,) = curves_from_grid(grid, duration_s=1200.0)
    run = run_knee_search([curve], seeds, search_range, ResultsStore(store_uri), submit=(inline, 1),
                          log=lambda line: None)
    write_summary(store_uri, "exp4c", run_summary("exp4c", run.outcomes, search_range))

    _search, step = capacity_search(curve.template, None, search_range, inline, seeds, slots=1)
    assert step.status == "found"

    payload = build_payload(read_store(store_uri))
    (shown,) = curves_of(payload, "exp4c").values()
    assert shown["usable_source"] == "searched" and shown["search"]["ended"] is True
    assert shown["usable"] == pytest.approx(step.knee.throughput_cps, rel=0.03)
    assert shown["knee_x"] == pytest.approx(step.knee.scale_ms, rel=0.03)
    # The grid's figure, kept beside it, is another answer: the grid's resolution.
    assert shown["grid"]["usable"] < shown["usable"] * 0.9


# -- the page: one value per curve, said the same way in every view ------------------------------------------------

def test_the_page_shows_each_curves_answer_its_source_and_one_spread(tmp_path):
    """Hand-made rows (no simulation): s3's curve searched to the end, the other providers on the grid alone."""
    from dashboards.site import build_site
    from headless import Browser, find_chromium
    from test_payload_contract import RECORDER, resolve

    chromium = find_chromium()
    if chromium is None:
        if os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
            pytest.fail("CI is set but no Chromium was found: install Debian's chromium")
        pytest.skip("no Chromium (apt-get install -y chromium); under CI this fails instead")
    store = tmp_path / "store"
    write_store_file(str(store), "exp4c", grid_rows() + [row for provider in ("s3x", "azure", "azurex")
                                                        for row in grid_rows(provider=provider)])
    write_store_file(str(store), "exp4c_knee", knee_rows(ENDED))
    build_site(str(store), str(tmp_path / "site"))
    with Browser(executable=chromium, width=1400, height=1000) as browser:
        browser.send("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
        browser.navigate("file://" + str(tmp_path / "site" / "index.html") + "?experiment=exp4c&mix=0.9")
        browser.wait_for("document.body.dataset.ready === '1'")
        assert browser.console_errors == []
        text = lambda element_id: browser.evaluate(f"document.getElementById({element_id!r}).textContent")
        tips = browser.evaluate("Object.fromEntries([...document.querySelectorAll('svg.frontier-chart circle.mark')]"
                                ".map((c) => [c.querySelector('title').textContent.split(',')[0],"
                                " [c.querySelector('title').textContent, c.getAttribute('stroke')]]))")
        # s3's dot is its searched knee, the grid's knee beside it in the tooltip; the others say they are grid knees.
        assert "usable 7.8 c/s (knee of the seed-mean curve)" in tips["s3"][0]
        assert "source: the searched knee (exp4c_knee, found" in tips["s3"][0]
        assert "grid knee, at the grid's resolution: 7.5 c/s at 50 ms" in tips["s3"][0]
        assert "spread (the throughput of each seed at that same point): seed 1: 7.7, seed 2: 7.9" in tips["s3"][0]
        assert "source: the grid knee, at the grid's resolution" in tips["azure"][0]
        assert "to search it: commit-sweeps knee --experiment exp4c --duration-s 3600" in tips["azure"][0]
        # Each provider its own hue: azure and azurex apart.
        assert len({tips[name][1] for name in ("s3", "s3x", "azure", "azurex")}) == 4
        assert browser.evaluate("document.getElementById('frontier-yscale').value") == "log"
        assert "1 of 4 curves show their searched knee" in text("frontier-body")
        assert "commit-sweeps knee --experiment exp4c --duration-s 3600 --store" in text("frontier-body")
        # The grid knees can be drawn beside the searched one: one more dot, s3's.
        assert browser.evaluate("Number(document.querySelector('svg.frontier-chart').dataset.marks)") == 4
        browser.evaluate("(() => { const s = document.getElementById('frontier-grid'); s.value = 'show';"
                         " s.dispatchEvent(new Event('change')); })()")
        assert browser.evaluate("Number(document.querySelector('svg.frontier-chart').dataset.marks)") == 5
        # The provider table: the searched value with its spread (the seeds' throughputs at that knee) and the grid's.
        cells = browser.evaluate("Object.fromEntries([...document.querySelectorAll('table.provider-table tbody tr')]"
                                 ".map((tr) => [tr.cells[0].textContent, tr.cells[1].textContent]))")
        assert cells["s3"] == "7.8 (7.7–7.9) searched; grid 7.5" and cells["azure"].startswith("7.5 (")
        # The seed spread view names the statistic and lists the very values its range spans.
        spread = text("spread-body")
        assert "Every usable throughput on this page is the knee of the seed-mean curve" in spread
        assert "7.7–7.9 (seed 1: 7.7, seed 2: 7.9)" in spread
        assert browser.console_errors == []
        reads = [json.loads(path) for path in browser.evaluate("window.__payloadReads()")]
    assert [path for path in reads if not resolve(SCHEMA, path)] == []
