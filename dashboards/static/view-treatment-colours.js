/* The results dashboard page, study view kind "treatment-colours": usable-throughput frontiers with one colour per
 * variant on a log axis (for studies of many variants), and a table of usable throughput, its change and VO p99 at
 * the knee. The study it draws, and its texts, come from its view entry (DATA.views; the study's grid declares them).
 * page.js says how the scripts fit together. Store-provided text is always inserted with textContent. */
"use strict";

(() => {
  const {
    el, replace, tablesText, variantCurve, mixLabel, usableCell, changeCell, secondsCell, variantFrontiers,
    studyEntries, legendNote
  } = window.Dash;

  function renderTreatmentColours(view) {
    const found = studyEntries(view);
    if (!found) return;
    const { comparison, entries, notes } = found;
    const colours = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02"];
    const charts = variantFrontiers(comparison, entries, `${view.id}-chart`, (provider, pi, variant, vi) => ({
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
    replace(`${view.id}-body`, notes, el("div", { class: "grid" }, charts),
      el("div", { class: "scroll" }, el("table", { class: `data ${view.id}-table` }, el("thead", {}, head), el("tbody", {}, rows))),
      legendNote(view, comparison));
  }

  Object.assign(window.Dash.views, { "treatment-colours": renderTreatmentColours });
})();
