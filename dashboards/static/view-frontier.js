/* The results dashboard page: view 1. usable-throughput frontier. page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    state, el, replace, index, selectedSeries, selectedMixes, selectedTables, seriesColour, tablesText,
    choice, figure, frontierTip, statistic, gridKneeText, sourceNote
  } = window.Dash;

  // -- 1. frontier -------------------------------------------------------------------------------------

  function frontierPoint(study, series, mix, tables, x) {
    const curve = index(study).curves.get(`${series.id}|${tables}|${mix.id}`);
    if (!curve) return null;
    const tip = frontierTip(study, series, mix, tables, curve);
    if (curve.usable === null) return { x, y: null, cross: true, tip };
    return { x, y: curve.usable, lo: curve.knee_tp ? curve.knee_tp.low : null, hi: curve.knee_tp ? curve.knee_tp.high : null,
             hollow: curve.lower_bound, tip };
  }

  // The grid's own knee of a curve whose value is a searched knee (drawn dashed beside it on request).
  function gridPoint(study, series, mix, tables, x) {
    const curve = index(study).curves.get(`${series.id}|${tables}|${mix.id}`);
    if (!curve || curve.usable_source !== "searched" || !curve.grid) return null;
    const g = curve.grid;
    const tip = `${series.label}, ${tablesText(tables)}, ${mix.label}\ngrid knee, at the grid's resolution: ${gridKneeText(g)}`;
    if (g.usable === null) return { x, y: null, cross: true, tip };
    return { x, y: g.usable, lo: g.knee_tp ? g.knee_tp.low : null, hi: g.knee_tp ? g.knee_tp.high : null,
             hollow: g.lower_bound, tip };
  }

  function renderFrontier(study) {
    const series = selectedSeries(study);
    const mixes = selectedMixes(study);
    const tables = selectedTables(study);
    const latencies = [...new Set(series.map((s) => s.catalog_latency_ms).filter((v) => v !== null))];
    const canUseLatency = latencies.length > 1;
    if (!canUseLatency) state.frontierAxis = "tables";
    const redraw = () => renderFrontier(study);
    const controls = [canUseLatency ? choice("frontier-axis", "x axis:", [["tables", "table count"], ["latency", "catalog CAS latency"]],
      state.frontierAxis, (v) => { state.frontierAxis = v; redraw(); }) : null,
      // Providers differ tenfold in usable throughput: a log axis keeps the slow ones apart.
      choice("frontier-yscale", "y axis:", [["log", "log"], ["linear", "linear"]], state.yScales.frontier || "log",
        (v) => { state.yScales.frontier = v; redraw(); })];
    const shown = study.curves.filter((c) => series.some((s) => s.id === c.s) && mixes.some((m) => m.id === c.m)
      && tables.includes(c.t));
    const searched = !study.searched && shown.some((c) => c.usable_source === "searched" && c.grid);
    if (searched) {
      controls.push(choice("frontier-grid", "grid knees:", [["hide", "hide"], ["show", "show beside the searched"]],
        state.frontierGrid, (v) => { state.frontierGrid = v; redraw(); }));
    }
    const showGrid = searched && state.frontierGrid === "show";
    const charts = mixes.map((mix) => {
      let lines;
      let options;
      if (state.frontierAxis === "latency") {
        const dodge = (i) => Math.pow(1.035, i - (tables.length - 1) / 2);
        lines = tables.map((t, i) => ({
          label: tablesText(t), colour: Charts.seriesColour(`t${t}`, i),
          points: series.map((s) => frontierPoint(study, s, mix, t, s.catalog_latency_ms * dodge(i))).filter(Boolean),
        }));
        options = { xLabel: "catalog CAS latency (ms)", xScale: "log", xTicks: latencies.slice().sort((a, b) => a - b) };
      } else {
        // Usable throughputs sit on grid points, so lines often coincide: nudge
        // each series sideways a little (log axis) so none hides another.
        const dodge = (i) => Math.pow(1.035, i - (series.length - 1) / 2);
        lines = series.map((s, i) => ({
          label: s.label, colour: seriesColour(study, s),
          points: tables.map((t) => frontierPoint(study, s, mix, t, t * dodge(i))).filter(Boolean),
        }));
        if (showGrid) {
          series.forEach((s, i) => {
            const points = tables.map((t) => gridPoint(study, s, mix, t, t * dodge(i) * 1.02)).filter(Boolean);
            if (points.length) lines.push({ label: `${s.label} grid`, colour: seriesColour(study, s), dashed: true, points });
          });
        }
        options = { xLabel: "tables in the catalog", xScale: "log", xTicks: tables };
      }
      const chart = Charts.lineChart(Object.assign(options, {
        title: `${mix.label}: usable throughput`, yLabel: "usable throughput (c/s)", series: lines,
        width: 470, height: 320, xTickLabel: String, yScale: state.yScales.frontier || "log",
      }));
      chart.classList.add("frontier-chart");
      chart.setAttribute("data-mix", mix.id);
      return figure(chart);
    });
    replace("frontier-body", controls, el("div", { class: "grid" }, charts),
      el("p", { class: "legend-note" },
        `Dots: usable throughput, the ${statistic().label} (as the line under the page's title says), nudged sideways ` +
        `so equal values stay visible. Bars: its spread, ${statistic().spread}. Hollow: a lower bound (a grid knee at the ` +
        "heaviest load tried or with heavier loads missing, or a searched knee above its search range). Cross: no point " +
        "above the threshold. Hover for details. ",
        sourceNote(study, shown),
        showGrid ? " Dashed: the grid's knees of the searched curves, at the grid's resolution." : ""));
  }

  Object.assign(window.Dash.views, { frontier: (view, study) => renderFrontier(study) });
})();
