/* The results dashboard page: view 2. heatmaps. page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    DATA, state, el, replace, fmt, sig, index, selected, selectedSeries, selectedMixes, selectedTables,
    metricValue, spreadText, tablesText, choice, figure, noData
  } = window.Dash;

  // -- 2. heatmaps ---------------------------------------------------------------------------------------

  const HEAT_FAMILIES = {
    success: { label: "success rate", fa: "fa_success_rate", vo: "vo_success_rate" },
    throughput: { label: "throughput", all: "throughput_cps" },
    mean: { label: "mean commit latency", fa: "fa_commit_latency_mean_ms", vo: "vo_commit_latency_mean_ms" },
    p99: { label: "p99 commit latency", fa: "fa_commit_latency_p99_ms", vo: "vo_commit_latency_p99_ms" },
  };

  function hatchMetric(metric, mix) {
    const by = DATA.metrics[metric].hatch_by;
    return by === "usable" ? mix.success_metric : by;
  }

  function heatCell(study, series, mix, tables, scale, metric) {
    const point = index(study).points.get(`${series.id}|${tables}|${mix.id}|${scale}`);
    const where = `${series.label}, ${tablesText(tables)}, ${mix.label}, ${sig(scale)} ms inter-arrival`;
    if (!point) return { value: null, tip: `${where}\nmissing from the store` };
    const info = DATA.metrics[metric];
    const spread = point.v[metric];
    const hatchBy = hatchMetric(metric, mix);
    const hatchValue = metricValue(point, hatchBy);
    const hatched = hatchValue !== null && hatchValue <= DATA.threshold;
    const lines = [where, `${info.label}: ${spreadText(spread, info.unit)}`];
    for (const m of ["fa_success_rate", "vo_success_rate", "throughput_cps"]) {
      if (m !== metric && point.v[m]) lines.push(`${DATA.metrics[m].label}: ${fmt(point.v[m].mean, DATA.metrics[m].unit)}`);
    }
    if (hatched) lines.push(`hatched: ${DATA.metrics[hatchBy].label} at or below ${DATA.threshold * 100}%`);
    return { value: spread ? spread.mean : null, spread, hatched, tip: lines.join("\n") };
  }

  function heatTable(study, series, mix, metric, tables) {
    const info = DATA.metrics[metric];
    const head = el("tr", {}, el("th", {}, "tables \\ inter-arrival (ms)"), study.scales.map((x) => el("th", {}, sig(x))));
    const rows = tables.slice().reverse().map((t) => el("tr", {}, el("th", {}, String(t)), study.scales.map((x) => {
      const cell = heatCell(study, series, mix, t, x, metric);
      if (cell.value === null) return el("td", { class: "missing", title: cell.tip }, "–");
      const { mean, sd: std, n } = cell.spread;
      const text = fmt(mean, info.unit) + (n > 1 && std !== null ? ` ±${fmt(std, info.unit === "%" ? "%" : info.unit)}` : "");
      return el("td", { class: cell.hatched ? "low" : null, title: cell.tip }, text);
    })));
    return el("table", { class: "data" }, el("thead", {}, head), el("tbody", {}, rows));
  }

  function lazyDetails(summary, build) {
    // Built on first open: the page draws dozens of heatmaps, few tables get read.
    const details = el("details", { class: "values" }, el("summary", {}, summary));
    details.addEventListener("toggle", () => {
      if (details.open && details.children.length === 1) details.appendChild(build());
    });
    return details;
  }

  function renderHeatmaps(study) {
    if (study.searched) {
      replace("heatmaps-body", noData(`${study.label} was searched, not swept on a grid: each curve has the inter-arrival ` +
        "scales its search chose, so there is no table × scale grid to draw. See 8. Knee search."));
      return;
    }
    const family = HEAT_FAMILIES[state.heatFamily];
    const tables = selectedTables(study);
    const controls = choice("heat-metric", "show:", Object.entries(HEAT_FAMILIES).map(([k, f]) => [k, f.label]),
      state.heatFamily, (v) => { state.heatFamily = v; renderHeatmaps(study); });
    const cards = [];
    for (const series of selectedSeries(study)) {
      for (const mix of selectedMixes(study)) {
        const metrics = family.all ? [family.all] : [family.fa].concat(mix.has_vo ? [family.vo] : []);
        for (const metric of metrics) {
          const info = DATA.metrics[metric];
          const chart = Charts.heatmap({
            title: `${series.label} · ${mix.label} · ${info.label}`,
            xValues: study.scales, yValues: tables, xLabel: "inter-arrival scale (ms)", yLabel: "tables",
            unit: info.unit, ramp: info.kind === "success" ? "success" : "sequential",
            log: info.kind === "latency", min: info.kind === "success" ? 0 : undefined,
            max: info.kind === "success" ? 1 : undefined,
            cell: (x, t) => heatCell(study, series, mix, t, x, metric),
          });
          chart.classList.add("heatmap");
          cards.push(figure(chart, null, lazyDetails("values as a table",
                                                      () => heatTable(study, series, mix, metric, tables))));
        }
      }
    }
    replace("heatmaps-body", controls, el("div", { class: "grid" }, cards.length ? cards : noData("Nothing selected.")),
      el("p", { class: "legend-note" }, `Hatched cells: the relevant success rate (FA for FA metrics, VO for VO metrics, ` +
        `else the one the frontier reads) is at or below ${DATA.threshold * 100}%. Cell values are seed means; ` +
        "hover or open the table for the seed spread."));
  }

  Object.assign(window.Dash.views, { heatmaps: (view, study) => renderHeatmaps(study) });
})();
