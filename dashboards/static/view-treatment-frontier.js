/* The results dashboard page, study view kind "treatment-frontier": each variant's usable-throughput frontier against
 * table count (the baseline solid, the others dashed), and a table of usable throughput, its change, VO p99 and CAS
 * refused by a throttle at the knee. The study it draws, and its texts, come from its view entry (DATA.views; the
 * study's grid declares them). page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    el, replace, sig, tablesText, variantCurve, mixLabel, usableCell, changeCell, secondsCell,
    variantFrontiers, studyEntries, legendNote
  } = window.Dash;

  function renderTreatmentFrontier(view) {
    const found = studyEntries(view);
    if (!found) return;
    const { comparison, entries, notes } = found;
    const colours = ["#2ca02c", "#7b3294", "#e66101"];
    const charts = variantFrontiers(comparison, entries, `${view.id}-chart`, (provider, pi, variant, vi) => ({
      label: `${provider} ${variant.label}`, colour: colours[vi % colours.length], dashed: vi > 0 }));
    const studyIds = comparison.variants.map((v) => v.study);
    const others = comparison.variants.filter((v) => v.id !== comparison.baseline);
    const base = comparison.variants.find((v) => v.id === comparison.baseline);
    const head = el("tr", {}, el("th", {}, "Curve"), comparison.variants.map((v) => el("th", {}, `${v.label}: usable c/s`)),
      others.map((v) => el("th", {}, `change, ${v.label}`)),
      comparison.variants.map((v) => el("th", {}, `${v.label}: VO p99 at knee`)),
      others.map((v) => el("th", {}, `CAS refused by the throttle per txn at knee, ${v.label}`)));
    const rows = entries.map((e) => el("tr", {},
      el("td", {}, `${e.p}, ${tablesText(e.t)}, ${mixLabel(studyIds, e.m)}`),
      comparison.variants.map((v) => usableCell(variantCurve(v, e))),
      others.map((v) => changeCell(base && e.d[v.id] ? e.d[v.id].usable_ratio : null, true)),
      comparison.variants.map((v) => secondsCell(variantCurve(v, e) && variantCurve(v, e).vo_p99_s)),
      others.map((v) => el("td", {}, e.throttled && e.throttled[v.id] !== undefined ? sig(e.throttled[v.id]) : "–"))));
    replace(`${view.id}-body`, notes, el("div", { class: "grid" }, charts),
      el("div", { class: "scroll" }, el("table", { class: `data ${view.id}-table` }, el("thead", {}, head), el("tbody", {}, rows))),
      legendNote(view, comparison));
  }

  Object.assign(window.Dash.views, { "treatment-frontier": renderTreatmentFrontier });
})();
