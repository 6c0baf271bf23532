/* The results dashboard page: view 9. GCS write throttle. page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    el, replace, sig, tablesText, variantCurve, mixLabel, usableCell, changeCell, secondsCell,
    variantFrontiers, studyEntries
  } = window.Dash;

  // -- 9. GCS write throttle ----------------------------------------------------------------------------------------

  function renderThrottle() {
    const found = studyEntries("gcs_throttle", "throttle-body", "unthrottled and throttled runs");
    if (!found) return;
    const { comparison, entries, notes } = found;
    const colours = ["#2ca02c", "#7b3294", "#e66101"];
    const charts = variantFrontiers(comparison, entries, "throttle-chart", (provider, pi, variant, vi) => ({
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
    replace("throttle-body", notes, el("div", { class: "grid" }, charts),
      el("div", { class: "scroll" }, el("table", { class: "data throttle-table" }, el("thead", {}, head), el("tbody", {}, rows))),
      el("p", { class: "legend-note" }, "Solid: unthrottled (as seed 001). Dashed: with the per-object CAS limit " +
        "(a token bucket on the catalog object; a CAS that finds no token is refused like a 429). Hollow: a lower bound; " +
        "cross: no point above the threshold. Change: usable throughput relative to unthrottled."));
  }

  Object.assign(window.Dash, { renderThrottle });
})();
