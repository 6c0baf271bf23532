/* The results dashboard page: view 1. usable-throughput frontier. page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    state, el, replace, index, selectedSeries, selectedMixes, selectedTables, seriesColour, tablesText,
    choice, figure, frontierTip, kneeSearchFor, searchedMark
  } = window.Dash;

  // -- 1. frontier -------------------------------------------------------------------------------------


  function frontierPoint(study, series, mix, tables, x) {
    const curve = index(study).curves.get(`${series.id}|${tables}|${mix.id}`);
    if (!curve) return null;
    const tip = frontierTip(study, series, mix, tables, curve);
    if (curve.usable === null) return { x, y: null, cross: true, tip };
    return { x, y: curve.usable, lo: curve.knee_tp ? curve.knee_tp.low : null, hi: curve.knee_tp ? curve.knee_tp.high : null,
             hollow: curve.at_grid_edge || curve.heavier_missing, tip };
  }

  function renderFrontier(study) {
    const series = selectedSeries(study);
    const mixes = selectedMixes(study);
    const tables = selectedTables(study);
    const latencies = [...new Set(series.map((s) => s.catalog_latency_ms).filter((v) => v !== null))];
    const canUseLatency = latencies.length > 1;
    if (!canUseLatency) state.frontierAxis = "tables";
    const controls = [canUseLatency ? choice("frontier-axis", "x axis:", [["tables", "table count"], ["latency", "catalog CAS latency"]],
      state.frontierAxis, (v) => { state.frontierAxis = v; renderFrontier(study); }) : null];
    // A knee search of this experiment can be drawn on the same axes (dashed).
    const search = !study.searched && state.frontierAxis === "tables" ? kneeSearchFor(study) : null;
    if (search) {
      controls.push(choice("frontier-searched", "searched knees:", [["hide", "hide"], ["show", `show (${search.experiment})`]],
        state.frontierSearched, (v) => { state.frontierSearched = v; renderFrontier(study); }));
    }
    const searchedByKey = new Map(search && state.frontierSearched === "show"
      ? search.curves.map((e) => [`${e.s}|${e.t}|${e.m}`, e]) : []);
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
        if (searchedByKey.size) {
          series.forEach((s, i) => {
            const points = tables.map((t) => searchedByKey.get(`${s.id}|${t}|${mix.id}`)).filter(Boolean)
              .map((e) => searchedMark(e, e.t * dodge(i) * 1.02, `${s.label}, ${tablesText(e.t)}, ${mix.label}`));
            if (points.length) lines.push({ label: `${s.label} searched`, colour: seriesColour(study, s), dashed: true, points });
          });
        }
        options = { xLabel: "tables in the catalog", xScale: "log", xTicks: tables };
      }
      const chart = Charts.lineChart(Object.assign(options, {
        title: `${mix.label}: usable throughput`, yLabel: "usable throughput (c/s)", series: lines,
        width: 470, height: 320, xTickLabel: String,
      }));
      chart.classList.add("frontier-chart");
      chart.setAttribute("data-mix", mix.id);
      return figure(chart);
    });
    replace("frontier-body", controls, el("div", { class: "grid" }, charts),
      el("p", { class: "legend-note" },
        "Dots: usable throughput (seed means), nudged sideways so equal values stay visible. Bars: range of the knee's " +
        "throughput over seeds. Hollow: a lower bound " +
        "(knee at the heaviest load tried, or heavier loads missing). Cross: no point above the threshold. Hover for details." +
        (search ? " Dashed (searched knees shown): the knee search's knee, bars spanning its bracket; see 8. Knee search." : "")));
  }

  Object.assign(window.Dash.views, { frontier: (view, study) => renderFrontier(study) });
})();
