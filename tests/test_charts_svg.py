"""charts.js, the page's own charting, pinned by SVG snapshots, and its export.

The page keeps its 430-line charts.js rather than a charting library
(docs/design.md says why, with the measurements). These tests draw each
chart kind from fixed inputs (linear and log axes, legends, gaps, hatched
cells, negative bars) in headless Chromium and compare the SVG with the
files in tests/data/svg: a change to the drawing shows up as a diff to
review. ``UPDATE_SVG_SNAPSHOTS=1`` rewrites them after a deliberate change.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from headless import Browser, find_chromium

STATIC = Path(__file__).resolve().parents[1] / "dashboards" / "static"
SNAPSHOTS = Path(__file__).resolve().parent / "data" / "svg"

CHARTS = {
    "line_log_x": """Charts.lineChart({title: "usable throughput", xLabel: "tables", yLabel: "c/s", xScale: "log",
        xTicks: [1, 2, 5, 10, 20, 50], xTickLabel: String, width: 470, height: 330,
        series: [{label: "s3x", colour: "#1f77b4", points: [{x: 1, y: 16.4, lo: 15.9, hi: 16.8, tip: "s3x 1"},
                                                            {x: 10, y: 14.9}, {x: 50, y: 9.5, hollow: true}]},
                 {label: "gcp", colour: "#d62728", dashed: true, points: [{x: 1, y: 0.7}, {x: 10, y: null},
                                                                          {x: 50, y: 0.2, cross: true}]}]})""",
    "line_log_y": """Charts.lineChart({title: "commit latency", xLabel: "throughput (c/s)", yLabel: "ms",
        yScale: "log", width: 460, height: 300,
        series: [{label: "FA", colour: "#2ca02c", points: [{x: 0.5, y: 80}, {x: 2, y: 120}, {x: 8, y: 4000}]}]})""",
    "heatmap": """Charts.heatmap({title: "success rate", xValues: [20, 100, 500], yValues: [1, 10], xLabel: "ms",
        yLabel: "tables", unit: "%", ramp: "success", min: 0, max: 1,
        cell: (x, y) => (x === 20 && y === 10 ? null
                         : {value: Math.min(1, x / 500 + y / 100), tip: `${x} ms, ${y} tables`,
                            hatched: x / 500 + y / 100 <= 0.95})})""",
    "bars": """Charts.barChart({title: "change vs immediate", yLabel: "%", groups: ["s3x FA", "s3 90/10"],
        yTickLabel: (v) => `${v}%`, width: 420, height: 300,
        bars: [{label: "backoff", colour: "#ff7f0e", values: [{y: 12.5, tip: "+12.5%"}, {y: -4}]},
               {label: "split", colour: "#9467bd", values: [{y: 30}, null]}]})""",
}


@pytest.fixture(scope="module")
def page():
    chromium = find_chromium()
    if chromium is None:
        if os.environ.get("CI", "").lower() not in ("", "0", "false", "no"):
            pytest.fail("CI is set but no Chromium was found: install Debian's chromium")
        pytest.skip("no Chromium (apt-get install -y chromium); under CI this fails instead")
    with Browser(executable=chromium, width=1200, height=900) as browser:
        browser.navigate("about:blank")
        browser.evaluate((STATIC / "charts.js").read_text() + "; 'loaded'")
        yield browser


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_each_chart_kind_draws_as_its_snapshot(page, name):
    svg = page.evaluate(f"({CHARTS[name]}).outerHTML")
    snapshot = SNAPSHOTS / f"{name}.svg"
    if os.environ.get("UPDATE_SVG_SNAPSHOTS") == "1":
        snapshot.write_text(svg + "\n")
    assert snapshot.exists(), f"no snapshot {snapshot}; run with UPDATE_SVG_SNAPSHOTS=1 once and review it"
    assert svg + "\n" == snapshot.read_text()


def test_snapshots_hold_what_the_options_asked_for():
    """The snapshots themselves are checked, so a wrong drawing cannot be pinned unnoticed."""
    line = (SNAPSHOTS / "line_log_x.svg").read_text()
    assert 'aria-label="usable throughput"' in line and "s3x" in line and "gcp" in line
    assert line.count("<title>") >= 1 and "stroke-dasharray" in line  # a tip, and the dashed series
    heat = (SNAPSHOTS / "heatmap.svg").read_text()
    assert "pattern" in heat and "20 ms, 1 tables" in heat
    bars = (SNAPSHOTS / "bars.svg").read_text()
    assert "backoff" in bars and "split" in bars and "+12.5%" in bars
