/* The results dashboard page: view 3. latency vs throughput. page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    DATA, state, el, replace, selectedSeries, selectedMixes, selectedTables, seriesColour, tablesText, choice,
    figure, noData, curveLine
  } = window.Dash;

  // -- 3. latency vs throughput ---------------------------------------------------------------------------


  function renderCurves(study) {
    const metric = state.curveLatency;
    const controls = [
      choice("curve-group", "one line per:", [["tables", "table count"], ["mix", "mix"]], state.curveGroup,
             (v) => { state.curveGroup = v; renderCurves(study); }),
      choice("curve-latency", "latency:", [
        ["fa_commit_latency_mean_ms", "FA mean"], ["vo_commit_latency_mean_ms", "VO mean"],
        ["fa_commit_latency_p99_ms", "FA p99"], ["vo_commit_latency_p99_ms", "VO p99"],
        ["commit_latency_mean_ms", "all mean"], ["commit_latency_p99_ms", "all p99"]], metric,
             (v) => { state.curveLatency = v; renderCurves(study); }),
    ];
    const cards = [];
    const tables = selectedTables(study);
    const mixes = selectedMixes(study);
    for (const series of selectedSeries(study)) {
      const panels = state.curveGroup === "tables"
        ? mixes.map((mix) => ({ title: `${series.label} · ${mix.label}`,
            lines: tables.map((t, i) => curveLine(study, series, mix, t, tablesText(t), Charts.seriesColour(`t${t}`, i), metric)) }))
        : tables.map((t) => ({ title: `${series.label} · ${tablesText(t)}`,
            lines: mixes.map((mix, i) => curveLine(study, series, mix, t, mix.label, Charts.seriesColour(`m${mix.id}`, i), metric)) }));
      for (const panel of panels) {
        const lines = panel.lines.filter((line) => line.points.length);
        if (!lines.length) continue;
        const chart = Charts.lineChart({ title: panel.title, series: lines, xLabel: "throughput (c/s)", sortX: false,
          yLabel: `${DATA.metrics[metric].label} (ms)`, yScale: "log", width: 420, height: 290 });
        chart.classList.add("curve-chart");
        cards.push(figure(chart));
      }
    }
    replace("curves-body", controls, el("div", { class: "grid" }, cards.length ? cards
      : noData("No points with this latency in the selection (VO latencies exist only for mixes with VO).")),
      el("p", { class: "legend-note" }, "Each dot is one inter-arrival scale (seed means; bars: range over seeds). " +
        `Hollow dots: success at or below ${DATA.threshold * 100}%, past the knee.`));
  }

  Object.assign(window.Dash.views, { curves: (view, study) => renderCurves(study) });
})();
