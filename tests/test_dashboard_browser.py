"""The dashboard in a real headless Chromium: it loads, draws, filters and stays quiet.

The store is small but real: rows made by ``simcore.simulate``. The page is
served by ``dashboards.server`` and driven over the DevTools pipe
(``dashboards.headless``). Screenshots land in ``artifacts/`` for CI to keep.

Without /usr/bin/chromium these tests skip with the reason, unless CI is
set: in CI a missing browser is a failure (install Debian's ``chromium``).
"""

import json
import os
import shutil
import threading

import pytest

from headless import Browser, find_chromium
from dashboards.server import make_server
from dashboards.site import build_site

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARTIFACTS = os.path.join(ROOT, "artifacts")
THRESHOLD = 0.95


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@pytest.fixture(scope="module")
def chromium():
    path = find_chromium()
    if path is None:
        if _in_ci():
            pytest.fail("CI is set but no Chromium was found: install Debian's chromium (apt-get install -y chromium)")
        pytest.skip("no Chromium at /usr/bin/chromium (apt-get install -y chromium); under CI this fails instead")
    return path


@pytest.fixture(scope="module")
def real_store(tmp_path_factory):
    from simcore import SimConfig

    from store_fixtures import simulated_rows, write_store_file

    store = tmp_path_factory.mktemp("store")
    short = {"duration_s": 1200, "runtime_median_ms": 20_000}  # warm-up 300 s: a short but real run
    storage = [SimConfig(provider=provider, num_tables=tables, fast_append_ratio=mix, inter_arrival_scale_ms=scale,
                         **short)
               for provider in ("s3x", "s3") for tables in (1, 10) for mix in (1.0, 0.9) for scale in (50, 200, 1000)]
    write_store_file(str(store), "exp4c", simulated_rows("exp4c", storage, seeds=[1, 2]))
    # The same sweep under the published protocol (what seed 001 ran): the published view reads these rows, the
    # correction's view sets them beside the corrected (default) ones.
    published = [config.replace(protocol="published") for config in storage]
    write_store_file(str(store), "exp4c", simulated_rows("exp4c", published, seeds=[1, 2]))
    zipf = [SimConfig(provider="s3", catalog="service", catalog_latency_ms=latency, table_distribution="zipf",
                      num_tables=tables, fast_append_ratio=0.9, inter_arrival_scale_ms=scale, **short)
            for latency in (10, 50) for tables in (1, 10) for scale in (100, 1000)]
    write_store_file(str(store), "exp4b_zipf", simulated_rows("exp4b_zipf", zipf, seeds=[1, 2]))
    return store


@pytest.fixture(scope="module")
def study_store(real_store, tmp_path_factory):
    """exp4c of ``real_store`` plus small real runs of the experiments that declare their own views (the variant
    comparisons, client presets, writers) and a knee search's rows."""
    from simcore import SimConfig

    from store_fixtures import simulated_rows, write_store_file

    from simcore.builder import build_config

    store = tmp_path_factory.mktemp("study-store")
    shutil.copytree(real_store / "exp4c", store / "exp4c")
    short = {"duration_s": 1200, "runtime_median_ms": 20_000}
    experiments = {
        "gcs_throttle": [SimConfig(provider="gcp", num_tables=tables, inter_arrival_scale_ms=scale,
                                   cas_throttle_per_s=throttle, **short)
                         for tables in (1, 10) for scale in (500, 1000, 5000) for throttle in (None, 1.0)],
        "retry_policies": [SimConfig(provider=provider, num_tables=tables, fast_append_ratio=0.9,
                                     inter_arrival_scale_ms=scale, retry_policy=policy, **short)
                           for provider in ("s3x", "s3") for tables in (1, 10) for scale in (50, 200, 1000)
                           for policy in (None, "backoff", "split")],
        "append_catalog": [SimConfig(provider=provider, catalog=catalog, num_tables=tables,
                                     inter_arrival_scale_ms=scale, **short)
                           for provider in ("s3x", "azure") for tables in (1, 10) for scale in (50, 200, 1000)
                           for catalog in ("storage", "append")],
        # Client presets beside the reference, and writer workloads.
        "clients": [build_config(client=client, provider=provider, num_tables=tables, fast_append_ratio=0.9,
                                 inter_arrival_scale_ms=scale, **short)
                    for client in ("reference", "iceberg-java") for provider in ("s3x", "s3") for tables in (1, 10)
                    for scale in (50, 200, 1000)],
        "writers": [SimConfig(provider=provider, num_tables=10, writers=count, commit_interval_s=interval, **short)
                    for provider in ("s3x", "s3") for interval in (60.0, 300.0) for count in (50, 400, 3200)],
        # A knee search's rows: the exp4c curves at scales off the grid.
        "exp4c_knee": [SimConfig(provider=provider, num_tables=1, fast_append_ratio=mix, inter_arrival_scale_ms=scale,
                                 **short)
                       for provider in ("s3x", "s3") for mix in (1.0, 0.9) for scale in (35, 70, 140, 300)],
    }
    # Commit designs: a storage catalog, the append catalog (s3x only: s3 has no conditional append), a REST catalog
    # and DuckLake, each named by its config fields (simcore.designs).
    from simcore.designs import DESIGNS, design_fields
    from simcore.providers import PROVIDERS

    experiments["architectures"] = [
        build_config(**design_fields(design, None), provider=provider, num_tables=tables, inter_arrival_scale_ms=scale,
                     **short)
        for design in DESIGNS if design.name in ("storage", "append", "rest", "ducklake")
        for provider in ("s3x", "s3") if design.applies_to(PROVIDERS[provider], writers=False)
        for tables in (1, 10) for scale in (50, 200, 1000)]
    for experiment, configs in experiments.items():
        write_store_file(str(store), experiment, simulated_rows(experiment, configs, seeds=[1, 2]))
    return store


def _serve(store):
    server = make_server(str(store), port=0, refresh_s=-1, quiet=True, log=lambda message: None)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def page_url(real_store):
    server = _serve(real_store)
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def study_url(study_store):
    server = _serve(study_store)
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser(chromium):
    with Browser(executable=chromium, width=1400, height=1000) as browser:
        yield browser


def open_page(browser, url):
    browser.console_errors.clear()
    browser.navigate(url)
    browser.wait_for("document.body.dataset.ready === '1'")


def count(browser, selector):
    return browser.evaluate(f"document.querySelectorAll({selector!r}).length")


def marks(browser, selector):
    return browser.evaluate(
        f"[...document.querySelectorAll({selector!r})].map((svg) => Number(svg.getAttribute('data-marks')))")


def test_the_served_page_draws_every_view_without_console_errors(browser, page_url):
    open_page(browser, page_url)
    assert browser.console_errors == []
    assert browser.evaluate("location.search") == "?experiment=exp4c"
    # 1. one frontier panel per mix, a dot (or cross) per provider and table count
    assert marks(browser, "svg.frontier-chart") == [4, 4]
    # 2. per provider and mix, FA success, plus VO success for the 90/10 mix; 2 x 3 cells each
    assert count(browser, "svg.heatmap") == 2 * (1 + 2)
    assert all(n == 6 for n in marks(browser, "svg.heatmap"))
    # 3. latency vs throughput, 4. provider tables, 6. published figures, 8. provenance
    assert count(browser, "svg.curve-chart") >= 2 and min(marks(browser, "svg.curve-chart")) > 0
    assert count(browser, "table.provider-table") == 2
    assert marks(browser, "svg.published-chart")[0] > 0
    assert count(browser, "table.provenance-table tbody tr") == 3  # exp4c under each protocol, exp4b_zipf
    # 14. what the correction changed: per mix, both protocols' frontiers (2 providers x 2 table counts each)
    assert marks(browser, "svg.protocol-change-chart") == [8, 8]
    assert count(browser, "table.protocol-change-table tbody tr") == 2 * 2 * 2
    # 5. seed counts are stated
    assert "2 seeds per point" in browser.evaluate("document.getElementById('spread-body').textContent")
    os.makedirs(ARTIFACTS, exist_ok=True)
    browser.screenshot(os.path.join(ARTIFACTS, "dashboard.png"))


def test_hatched_cells_are_exactly_those_at_or_below_95_percent(browser, page_url):
    open_page(browser, page_url)
    cells = browser.evaluate("[...document.querySelectorAll('svg.heatmap g.cell')]"
                             ".map((g) => [Number(g.dataset.value), g.classList.contains('hatched')])")
    assert len(cells) == 36
    assert any(hatched for _, hatched in cells) and not all(hatched for _, hatched in cells)
    for value, hatched in cells:  # the success family: each cell is hatched by its own rate
        assert hatched == (value <= THRESHOLD), (value, hatched)


def test_a_filter_click_changes_the_views_in_place(browser, page_url):
    open_page(browser, page_url)
    browser.evaluate("window.notReloaded = true")
    before = browser.evaluate("Number(document.body.dataset.renders)")
    browser.click('button.chip[data-filter="mix"][data-value="0.9"]')
    browser.wait_for(f"Number(document.body.dataset.renders) > {before}")
    assert browser.evaluate("window.notReloaded") is True
    assert browser.evaluate("[...document.querySelectorAll('svg.frontier-chart')].map((s) => s.dataset.mix)") == ["0.9"]
    assert count(browser, "svg.heatmap") == 2 * 2
    assert "mix=0.9" in browser.evaluate("location.search")
    browser.click('button.chip[data-filter="provider"][data-value="s3x"]')
    browser.wait_for("document.querySelectorAll('svg.heatmap').length === 2")
    assert marks(browser, "svg.frontier-chart") == [2]
    assert browser.evaluate("location.search") == "?experiment=exp4c&provider=s3x&mix=0.9"
    assert browser.console_errors == []
    browser.screenshot(os.path.join(ARTIFACTS, "dashboard-filtered.png"), full_page=False)


def test_a_deep_link_opens_the_zipf_views(browser, page_url):
    open_page(browser, page_url + "?experiment=exp4b_zipf&tables=10&provider=s3@50ms")
    assert browser.console_errors == []
    zipf_marks = marks(browser, "svg.zipf-chart")
    assert len(zipf_marks) == 3 and min(zipf_marks) >= 10  # one dot per table rank
    assert count(browser, "svg.heatmap") == 2  # FA and VO success at the one CAS latency chosen
    assert browser.evaluate("document.querySelector('#filters select').value") == "exp4b_zipf"


def test_the_built_site_works_opened_from_disk(browser, real_store, tmp_path):
    build_site(str(real_store), str(tmp_path / "site"))
    open_page(browser, "file://" + str(tmp_path / "site" / "index.html"))
    assert browser.console_errors == []
    assert marks(browser, "svg.frontier-chart") == [4, 4]


def test_an_empty_store_says_so_without_errors(browser, tmp_path):
    (tmp_path / "empty").mkdir()
    server = _serve(tmp_path / "empty")
    try:
        open_page(browser, f"http://127.0.0.1:{server.server_address[1]}/")
        assert browser.console_errors == []
        assert "holds no results yet" in browser.evaluate("document.getElementById('empty-store').textContent")
        assert count(browser, "svg.chart") == 0
    finally:
        server.shutdown()
        server.server_close()


def test_every_view_control_redraws_without_errors(browser, page_url):
    for experiment in ("exp4c", "exp4b_zipf"):
        open_page(browser, f"{page_url}?experiment={experiment}")
        controls = browser.evaluate("[...document.querySelectorAll('main select')].map((s) => s.id)")
        assert {"heat-metric", "curve-group", "curve-latency"} <= set(controls)
        if experiment == "exp4b_zipf":  # two CAS latencies: the frontier can also run against latency
            assert {"frontier-axis", "zipf-series", "zipf-scale"} <= set(controls)
        for control in controls:
            options = browser.evaluate(f"[...document.getElementById({control!r}).options].map((o) => o.value)")
            for value in options:
                # Controls are re-created on redraw: look each one up again.
                browser.evaluate(f"(() => {{ const s = document.getElementById({control!r}); s.value = {value!r};"
                                 " s.dispatchEvent(new Event('change')); })()")
                assert browser.console_errors == [], (experiment, control, value)
        assert count(browser, "svg.chart") > 0


def test_heatmap_values_read_as_a_table_with_seed_spread(browser, page_url):
    open_page(browser, page_url + "?experiment=exp4c&provider=s3&mix=0.9")
    browser.click("svg.heatmap + details.values > summary")
    browser.wait_for("!!document.querySelector('details.values[open] table')")
    cells = browser.evaluate("[...document.querySelectorAll('details.values[open] td')].map((td) => td.textContent)")
    assert len(cells) == 2 * 3  # tables x inter-arrival scales
    assert all(cell.endswith("%") or "±" in cell for cell in cells)
    hover = browser.evaluate("document.querySelector('svg.heatmap g.cell title').textContent")
    assert "mean of 2 seeds" in hover
    assert browser.console_errors == []


def text_of(browser, element_id):
    return browser.evaluate(f"document.getElementById({element_id!r}).textContent")


def test_the_study_views_say_what_a_store_without_their_runs_lacks(browser, page_url):
    open_page(browser, page_url)
    assert browser.console_errors == []
    assert "No knee search in this store yet" in text_of(browser, "knee-body")
    assert "commit-sweeps knee --experiment exp4c" in text_of(browser, "knee-body")
    assert "No gcs_throttle runs in this store yet" in text_of(browser, "throttle-body")
    assert "commit-sweeps sweep retry_policies" in text_of(browser, "retry-body")
    assert "No append_catalog runs" in text_of(browser, "append-body")
    assert count(browser, "svg.knee-chart, svg.throttle-chart, svg.retry-chart, svg.append-chart") == 0
    assert "No clients runs in this store yet" in text_of(browser, "clients-body")
    assert "commit-sweeps sweep writers" in text_of(browser, "writers-body")
    assert count(browser, "svg.clients-chart, svg.writers-chart") == 0
    assert "No architectures runs in this store yet" in text_of(browser, "designs-body")
    assert "commit-sweeps sweep architectures --store" in text_of(browser, "designs-body")
    assert count(browser, "svg.designs-chart") == 0


def test_the_knee_and_variant_views_draw_with_data_beside_the_grid_views(browser, study_url):
    open_page(browser, study_url)
    assert browser.console_errors == []
    assert browser.evaluate("location.search") == "?experiment=exp4c"  # the grid study stays the default
    # exp4c's frontier holds exp4c's points only: still 2 providers x 2 table counts per mix.
    assert marks(browser, "svg.frontier-chart") == [4, 4]
    # 8. knee search: one panel per mix; per provider the grid knee and the searched knee of the 1-table curve.
    assert browser.evaluate("[...document.querySelectorAll('svg.knee-chart')].map((s) => s.dataset.mix)") == ["1", "0.9"]
    assert marks(browser, "svg.knee-chart") == [4, 4]
    assert count(browser, "table.knee-table tbody tr") == 4
    assert "4 curves searched" in text_of(browser, "knee-body")
    # 9. throttle: one mix, 2 variants x 2 table counts.
    assert marks(browser, "svg.throttle-chart") == [4]
    assert count(browser, "table.throttle-table tbody tr") == 2
    # 10. retry: per table count, bars of the usable-throughput change and of the VO p99 change,
    # two policies against immediate for 2 providers (fewer where a curve has no knee).
    retry = browser.evaluate("[...document.querySelectorAll('svg.retry-chart')].map((s) => s.dataset.tables)")
    assert sorted(set(retry)) == ["1", "10"] and len(retry) >= 2
    assert all(0 < n <= 4 for n in marks(browser, "svg.retry-chart"))
    assert marks(browser, "svg.retry-curve-chart")[0] >= 3 * 2  # 3 policies, most of 3 scales drawn
    assert count(browser, "table.retry-table tbody tr") == 4
    # 11. append: providers s3x and azure, CAS and append, 1 and 10 tables.
    assert marks(browser, "svg.append-chart") == [8]
    assert count(browser, "table.append-table tbody tr") == 4
    os.makedirs(ARTIFACTS, exist_ok=True)
    browser.screenshot(os.path.join(ARTIFACTS, "dashboard-study-views.png"))


def test_the_clients_and_writers_views_draw_presets_and_writers(browser, study_url):
    open_page(browser, study_url)
    assert browser.console_errors == []
    # 12. clients: one mix (0.9); reference and iceberg-java for 2 providers at 1 and 10 tables (fewer marks where a
    # curve has no usable point); one table row per curve.
    assert count(browser, "svg.clients-chart") == 1
    assert 0 < marks(browser, "svg.clients-chart")[0] <= 8
    assert count(browser, "table.clients-table tbody tr") == 4
    assert "iceberg-java: usable c/s" in text_of(browser, "clients-body")
    # 13. writers: one chart (10 tables, FA only), 2 providers x 2 intervals in the table.
    assert count(browser, "svg.writers-chart") == 1
    assert marks(browser, "svg.writers-chart") == [4]
    assert count(browser, "table.writers-table tbody tr") == 4
    # Writer points are not inter-arrival curves: no study is made of them.
    assert browser.evaluate("DASHBOARD_DATA.studies.some((s) => s.experiment === 'writers')") is False


def test_the_designs_view_draws_one_line_per_design_on_each_store(browser, study_url):
    open_page(browser, study_url)
    assert browser.console_errors == []
    # 14. commit designs: one panel per store (one mix), a mark per design and table count; append on s3x only.
    panels = browser.evaluate("[...document.querySelectorAll('svg.designs-chart')]"
                              ".map((s) => `${s.dataset.provider}|${s.dataset.mix}`)")
    assert panels == ["s3|1", "s3x|1"]
    assert marks(browser, "svg.designs-chart") == [3 * 2, 4 * 2]
    assert count(browser, "table.designs-table tbody tr") == 4
    assert count(browser, "table.designs-table td.missing") == 2  # append on s3: does not apply
    heads = browser.evaluate("[...document.querySelectorAll('table.designs-table th')].map((th) => th.textContent)")
    assert heads == ["Curve", "storage: usable c/s", "append: usable c/s", "rest: usable c/s", "ducklake: usable c/s",
                     "designs, highest first"]
    body = text_of(browser, "designs-body")
    # The values' provenance, as the other views state it: the statistic, grid or searched knee, what searches them.
    assert "knee of the seed-mean curve" in body and "grid knees, at the grid's resolution" in body
    assert "commit-sweeps knee --experiment architectures --duration-s 1200 --store" in body
    assert "DuckLake over PostgreSQL" in body  # each design's summary (simcore.designs)
    tip = browser.evaluate("document.querySelector('svg.designs-chart .mark title').textContent")
    assert "source: the grid knee" in tip and "spread (" in tip
    browser.evaluate("(() => { const s = document.getElementById('designs-yscale'); s.value = 'linear';"
                     " s.dispatchEvent(new Event('change')); })()")
    assert marks(browser, "svg.designs-chart") == [6, 8]
    browser.click('button.chip[data-filter="provider"][data-value="s3x"]')
    browser.wait_for("document.querySelectorAll('svg.designs-chart').length === 1")
    assert count(browser, "table.designs-table tbody tr") == 2
    assert browser.console_errors == []
    os.makedirs(ARTIFACTS, exist_ok=True)
    browser.screenshot(os.path.join(ARTIFACTS, "dashboard-designs.png"))


def test_a_filter_narrows_the_knee_and_variant_views_in_place(browser, study_url):
    open_page(browser, study_url)
    browser.evaluate("window.notReloaded = true")
    before = browser.evaluate("Number(document.body.dataset.renders)")
    browser.click('button.chip[data-filter="mix"][data-value="0.9"]')
    browser.wait_for(f"Number(document.body.dataset.renders) > {before}")
    assert browser.evaluate("window.notReloaded") is True
    assert browser.evaluate("[...document.querySelectorAll('svg.knee-chart')].map((s) => s.dataset.mix)") == ["0.9"]
    assert count(browser, "table.knee-table tbody tr") == 2
    # append_catalog and gcs_throttle ran FA only: the filter leaves nothing, and the views say so.
    assert "leave nothing of append_catalog" in text_of(browser, "append-body")
    assert "leave nothing of gcs_throttle" in text_of(browser, "throttle-body")
    assert count(browser, "table.retry-table tbody tr") == 4  # retry_policies ran the 90/10 mix
    browser.click('button.chip[data-filter="tables"][data-value="10"]')
    browser.wait_for("document.querySelectorAll('table.retry-table tbody tr').length === 2")
    assert set(browser.evaluate("[...document.querySelectorAll('svg.retry-chart')].map((s) => s.dataset.tables)")) \
        == {"10"}
    browser.click('button.chip[data-filter="provider"][data-value="s3x"]')
    browser.wait_for("document.querySelectorAll('table.retry-table tbody tr').length === 1")
    assert browser.evaluate("document.querySelector('table.retry-table tbody td').textContent").startswith("s3x")
    assert browser.evaluate("location.search") == "?experiment=exp4c&provider=s3x&mix=0.9&tables=10"
    assert browser.console_errors == []


def test_every_knee_and_variant_control_redraws_without_errors(browser, study_url):
    open_page(browser, study_url)
    controls = browser.evaluate("[...document.querySelectorAll('#knee select, #throttle select, #retry select, "
                                "#append select')].map((s) => s.id)")
    assert {"knee-yscale", "retry-provider", "retry-mix", "retry-tables", "append-yscale"} <= set(controls)
    for control in controls:
        options = browser.evaluate(f"[...document.getElementById({control!r}).options].map((o) => o.value)")
        for value in options:
            browser.evaluate(f"(() => {{ const s = document.getElementById({control!r}); s.value = {value!r};"
                             " s.dispatchEvent(new Event('change')); })()")
            assert browser.console_errors == [], (control, value)
            assert browser.evaluate(f"document.getElementById({control!r}).value") == value
    assert marks(browser, "svg.append-chart") == [8]  # log axis: the same marks
    # The knee search's rows end no search (no summary, brackets wide): the frontier keeps the grid's knees and says so.
    assert "4 curve(s) have a knee search that has not ended" in text_of(browser, "frontier-body")
    assert marks(browser, "svg.frontier-chart") == [4, 4]
    assert browser.console_errors == []


def test_the_searched_experiment_opens_without_a_grid(browser, study_url):
    open_page(browser, study_url + "?experiment=exp4c_knee")
    assert browser.console_errors == []
    assert "searched, not swept on a grid" in text_of(browser, "heatmaps-body")
    assert count(browser, "svg.heatmap") == 0
    assert count(browser, "svg.knee-chart") == 2  # the same search, from its own side
    assert "has no grid to be missing points of" in text_of(browser, "provenance-body")


def test_the_page_reads_only_keys_the_payload_contract_declares(chromium, study_url, page_url):
    """Every key path the page's scripts read, over every view, is declared in payload.schema.json."""
    from test_payload_contract import RECORDER, SCHEMA, resolve

    reads = set()
    with Browser(executable=chromium, width=1400, height=1000) as recording:
        recording.send("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
        for url in (page_url, page_url + "?experiment=exp4b_zipf", study_url,
                    study_url + "?experiment=exp4c_knee"):
            open_page(recording, url)
            assert recording.console_errors == []
            reads |= set(recording.evaluate("window.__payloadReads()"))
    assert len(reads) > 100  # every view read its data through the proxy
    undeclared = sorted(path for path in reads if not resolve(SCHEMA, json.loads(path)))
    assert undeclared == []


def test_every_chart_exports_as_a_standalone_svg(browser, page_url):
    open_page(browser, page_url)
    charts, links = count(browser, "figure svg.chart"), count(browser, "figure .export button")
    assert charts > 0 and links == 2 * charts  # SVG and PNG under each chart
    text = browser.evaluate("window.Dash.svgBlob(document.querySelector('figure svg.chart')).text()")
    assert text.startswith("<svg") and 'xmlns="http://www.w3.org/2000/svg"' in text
    assert "<style>" in text and ".chart" in text  # the page's styles travel with it
    assert browser.console_errors == []


def test_published_figures_carry_their_explanation_and_seed_001s_definition(browser, page_url):
    open_page(browser, page_url + "?experiment=exp4c")
    assert count(browser, "table.published-table tr.explanation") > 0
    header = browser.evaluate("[...document.querySelectorAll('table.published-table th')].map((th) => th.textContent)")
    assert "seed 001's definition (simcore)" in header and "store / seed 001" in header
    browser.evaluate("(() => { const s = document.getElementById('published-definition'); s.value = 'seed001';"
                     " s.dispatchEvent(new Event('change')); })()")
    header = browser.evaluate("[...document.querySelectorAll('table.published-table th')].map((th) => th.textContent)")
    assert "definition / seed 001" in header
    assert browser.console_errors == []


def test_the_page_says_which_protocol_made_its_answers(browser, page_url):
    open_page(browser, page_url)
    header = text_of(browser, "protocol-line")
    assert "Commit protocol: corrected." in header and "48 rows of the published protocol" in header
    options = browser.evaluate("[...document.querySelectorAll('#filter-experiment option')].map((o) => o.textContent)")
    assert options == ["exp4b_zipf (8 points, corrected protocol)",  # one protocol: said beside its label
                       "exp4c (protocol=corrected) (24 points)", "exp4c (protocol=published) (24 points)"]
    change = text_of(browser, "protocol-change-body")
    assert "curves moved by 1% or more" in change and "Seed 001 (as printed)" in change
    # The published view compares with the published rows (exp4c~2); exp4b_zipf has none, and says so.
    assert "published-protocol rows" in text_of(browser, "published-body")
    assert count(browser, ".published-protocol-note") == 0
    open_page(browser, page_url + "?experiment=exp4b_zipf")
    assert "corrected protocol only" in text_of(browser, "protocol-change-body")
    assert "commit-sweeps sweep exp4b_zipf --protocol published" in text_of(browser, "protocol-change-body")
    assert count(browser, ".published-protocol-note") == 1
    # Filters narrow the correction's view in place.
    browser.click('button.chip[data-filter="tables"][data-value="10"]')
    browser.wait_for("document.querySelectorAll('svg.protocol-change-chart').length === 0")
    open_page(browser, page_url + "?experiment=exp4c&provider=s3x&mix=0.9")
    assert marks(browser, "svg.protocol-change-chart") == [4]
    assert count(browser, "table.protocol-change-table tbody tr") == 2
    assert browser.console_errors == []
