/* The results dashboard page, view 12. Client presets beside the reference.
 * Part of the page's scripts (loaded in order by index.html): page.js holds the
 * data, state, filters and helpers, each view-*.js draws one view, main.js
 * draws them all. The payload they read is dashboards/static/payload.schema.json.
 * Store-provided text is always inserted with textContent. */
"use strict";

(() => {
  const {
    DATA, el, replace, tablesText, keepEntry, filteredAway, variantCurve, mixLabel, usableCell, changeCell,
    secondsCell, variantFrontiers, comparisonPreamble, variantsNote
  } = window.Dash;

  // -- 12. Client presets ----------------------------------------------------------------------------------------

  function renderClients() {
    const comparison = DATA.comparisons.clients;
    if (!comparisonPreamble(comparison, "clients-body", "clients")) return;
    const entries = comparison.curves.filter(keepEntry);
    const notes = variantsNote(comparison, "the reference and each client preset");
    if (!entries.length) { replace("clients-body", notes, filteredAway(comparison.experiment)); return; }
    const colours = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02"];
    const charts = variantFrontiers(comparison, entries, "clients-chart", (provider, pi, variant, vi) => ({
      label: `${provider} ${variant.label}`, colour: colours[vi % colours.length], dashed: pi % 2 === 1 }), "log");
    const studyIds = comparison.variants.map((v) => v.study);
    const others = comparison.variants.filter((v) => v.id !== comparison.baseline);
    const head = el("tr", {}, el("th", {}, "Curve"), comparison.variants.map((v) => el("th", {}, `${v.label}: usable c/s`)),
      others.map((v) => el("th", {}, `change, ${v.label}`)),
      comparison.variants.map((v) => el("th", {}, `${v.label}: VO p99 at knee`)));
    const rows = entries.map((e) => el("tr", {},
      el("td", {}, `${e.p}, ${tablesText(e.t)}, ${mixLabel(studyIds, e.m)}`),
      comparison.variants.map((v) => usableCell(variantCurve(v, e))),
      others.map((v) => changeCell(e.d[v.id] ? e.d[v.id].usable_ratio : null, true)),
      comparison.variants.map((v) => secondsCell(variantCurve(v, e) && variantCurve(v, e).vo_p99_s))));
    replace("clients-body", notes, el("div", { class: "grid" }, charts),
      el("div", { class: "scroll" }, el("table", { class: "data clients-table" }, el("thead", {}, head), el("tbody", {}, rows))),
      el("p", { class: "legend-note" }, "One colour per client preset (docs/clients.md cites each one's retry settings); " +
        "the reference retries at once, up to 10 times, as seed 001. Change: usable throughput relative to the reference. " +
        "Hollow: a lower bound; cross: no point above the threshold."));
  }

  Object.assign(window.Dash, { renderClients });
})();
