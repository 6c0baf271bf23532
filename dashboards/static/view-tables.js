/* The results dashboard page: view 4. provider tables. page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    el, replace, sig, index, selectedSeries, selectedMixes, selectedTables, tablesText, frontierTip, noneAbove,
    statistic, sourceNote
  } = window.Dash;

  // -- 4. provider tables ------------------------------------------------------------------------------------

  function providerTable(study, t) {
    const mixes = selectedMixes(study);
    const head1 = el("tr", {}, el("th", { rowspan: 2 }, study.catalog === "service" ? "CAS latency" : "Provider"),
                     mixes.map((m) => el("th", { colspan: 2 }, m.label)));
    const head2 = el("tr", {}, mixes.map(() => [el("th", {}, "usable c/s"), el("th", {}, "FA / VO mean latency at knee")]));
    const rows = selectedSeries(study).map((series) => el("tr", {}, el("th", {}, series.label), mixes.map((mix) => {
      const curve = index(study).curves.get(`${series.id}|${t}|${mix.id}`);
      if (!curve) return [el("td", { class: "missing" }, "not run"), el("td", { class: "missing" }, "–")];
      const tip = frontierTip(study, series, mix, t, curve);
      if (curve.usable === null) return [el("td", { class: "low", title: tip }, noneAbove()), el("td", {}, "–")];
      const range = curve.knee_tp && curve.knee_tp.n > 1 ? ` (${sig(curve.knee_tp.low)}–${sig(curve.knee_tp.high)})` : "";
      const latency = (spread) => (spread ? `${sig(spread.mean)} s` : "—");
      const grid = curve.usable_source === "searched" && curve.grid && curve.grid.usable !== null
        ? `; grid ${curve.grid.lower_bound ? "≥ " : ""}${sig(curve.grid.usable)}` : "";
      return [el("td", { title: tip, class: curve.lower_bound ? "bound" : null, "data-source": curve.usable_source },
                 `${curve.lower_bound ? "≥ " : ""}${sig(curve.usable)}${range}`,
                 curve.usable_source === "searched" ? el("span", { class: "source" }, ` searched${grid}`) : null),
              el("td", { title: tip }, `${latency(curve.fa_lat_s)} / ${latency(curve.vo_lat_s)}`)];
    })));
    const seeds = study.provenance.seeds_per_point;
    const seedText = seeds.min === seeds.max ? `${seeds.min}` : `${seeds.min} to ${seeds.max}`;
    return el("div", { class: "card wide" }, el("h3", {}, `${tablesText(t)} (${seedText} seeds per point)`),
              el("table", { class: "data provider-table", "data-tables": t }, el("thead", {}, head1, head2), el("tbody", {}, rows)));
  }

  function renderProviderTables(study) {
    const tables = selectedTables(study);
    let chosen = tables.filter((t) => t === 1 || t === 10);
    if (!chosen.length) chosen = tables.slice(0, 1);
    const shown = study.curves.filter((c) => chosen.includes(c.t));
    replace("tables-body", chosen.map((t) => providerTable(study, t)),
      el("p", { class: "legend-note" }, `Usable throughput, the ${statistic().label}, with its spread in brackets ` +
        `(${statistic().spread}, lowest to highest); ≥ marks a lower bound. Latencies: mean commit latency of FA and VO ` +
        "transactions at the knee. Hover for each seed. ", sourceNote(study, shown)));
  }

  Object.assign(window.Dash.views, { tables: (view, study) => renderProviderTables(study) });
})();
