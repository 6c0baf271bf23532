/* The results dashboard page: view 7. Zipf ranks. page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    DATA, state, el, replace, sig, pct, index, tablesText, choice, figure, noData, requestUpdate
  } = window.Dash;

  // -- 7. Zipf -----------------------------------------------------------------------------------------------------

  function renderZipf(study) {
    const zipfStudies = DATA.studies.filter((s) => s.zipf);
    if (!study.zipf) {
      replace("zipf-body", zipfStudies.length
        ? el("p", {}, "Zipf runs are in ", zipfStudies.map((s, i) => [i ? ", " : "", el("button", {
            type: "button", class: "link", onclick: () => { state.study = s.id; state.series = state.mixes = state.tables = null; requestUpdate(); } }, s.label)]),
          "; the current experiment picks tables uniformly.")
        : noData("No Zipf runs in this store."));
      return;
    }
    const entries = study.zipf_points.filter((z) => (!state.series || state.series.has(z.s))
      && (!state.mixes || state.mixes.has(z.m)) && (!state.tables || state.tables.has(String(z.t))));
    if (!entries.length) { replace("zipf-body", noData("No Zipf point with 2 or more tables in the selection.")); return; }
    const options = (key) => [...new Set(entries.map((z) => z[key]))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const pick = (key, preferred) => {
      const values = options(key);
      if (values.includes(state.zipf[key])) return state.zipf[key];
      return values.includes(preferred) ? preferred : values[values.length - 1];
    };
    const z0 = { s: pick("s", study.series.find((s) => s.catalog_latency_ms === 50)?.id), m: pick("m", null),
                 t: pick("t", 50), x: pick("x", 100) };
    const entry = entries.find((z) => z.s === z0.s && z.t === z0.t && z.m === z0.m && z.x === z0.x)
      || entries.find((z) => z.t === z0.t) || entries[0];
    state.zipf = { s: entry.s, t: entry.t, m: entry.m, x: entry.x };
    const seriesById = index(study).series;
    const mixById = index(study).mixes;
    const set = (key, parse) => (v) => { state.zipf[key] = parse(v); renderZipf(study); };
    const controls = [
      choice("zipf-series", "series:", options("s").map((v) => [v, seriesById.get(v).label]), entry.s, set("s", String)),
      choice("zipf-mix", "mix:", options("m").map((v) => [v, mixById.get(v).label]), entry.m, set("m", String)),
      choice("zipf-tables", "tables:", options("t").map((v) => [String(v), String(v)]), String(entry.t), set("t", Number)),
      choice("zipf-scale", "inter-arrival (ms):", options("x").map((v) => [String(v), sig(v)]), String(entry.x), set("x", Number)),
    ];
    const ranks = entry.share.map((_, i) => i + 1);
    const line = (label, colour, values, unit) => ({ label, colour, points: ranks.map((r, i) => ({
      x: r, y: values[i], tip: `rank ${r}: ${label} ${unit === "%" ? pct(values[i]) : sig(values[i])}` })) });
    const where = `${seriesById.get(entry.s).label}, ${tablesText(entry.t)}, ${mixById.get(entry.m).label}, ${sig(entry.x)} ms (${entry.n} seeds)`;
    const success = Charts.lineChart({ title: "Success rate by table rank", xLabel: "table rank (1 = hottest)", yLabel: "success rate",
      xScale: "log", yMax: 1, width: 440, height: 290, series: [line("success", "#1f77b4", entry.success, "%")] });
    const conflicts = Charts.lineChart({ title: "Conflicts per transaction by kind", xLabel: "table rank (1 = hottest)",
      yLabel: "conflicts per transaction", xScale: "log", width: 440, height: 290,
      series: [line("same table", "#d62728", entry.same, ""), line("catalog only", "#2ca02c", entry.catalog, "")] });
    const share = Charts.lineChart({ title: "Share of transactions by rank", xLabel: "table rank (1 = hottest)",
      yLabel: "share of transactions", xScale: "log", yScale: "log", width: 440, height: 290,
      series: [line("share", "#9467bd", entry.share, "%")] });
    [success, conflicts, share].forEach((c) => c.classList.add("zipf-chart"));
    replace("zipf-body", controls, el("p", {}, where), el("div", { class: "grid" }, figure(success), figure(conflicts), figure(share)));
  }

  Object.assign(window.Dash.views, { zipf: (view, study) => renderZipf(study) });
})();
