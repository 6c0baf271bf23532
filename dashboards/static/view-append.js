/* The results dashboard page: view 11. conditional-append catalog. page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    state, el, replace, sig, seriesColour, tablesText, variantCurve, mixLabel, yScaleControl, usableCell,
    changeCell, variantFrontiers, studyEntries
  } = window.Dash;

  // -- 11. conditional-append catalog ---------------------------------------------------------------------------------

  function renderAppend() {
    const found = studyEntries("append_catalog", "append-body", "CAS and append catalogs");
    if (!found) return;
    const { comparison, entries, notes } = found;
    const studyIds = comparison.variants.map((v) => v.study);
    const short = (v) => (v.id === "storage" ? "CAS" : v.id === "append" ? "append" : v.label);
    const charts = variantFrontiers(comparison, entries, "append-chart", (provider, pi, variant, vi) => ({
      label: `${provider} ${short(variant)}`, colour: Charts.seriesColour(provider, pi), dashed: vi > 0 }),
      state.yScales.append);
    const others = comparison.variants.filter((v) => v.id !== comparison.baseline);
    const head = el("tr", {}, el("th", {}, "Curve"), comparison.variants.map((v) => el("th", {}, `${short(v)}: usable c/s`)),
      others.map((v) => el("th", {}, `change, ${short(v)}`)),
      comparison.variants.map((v) => el("th", {}, `${short(v)}: FA / VO mean latency at knee`)));
    const latency = (curve) => el("td", {}, curve && curve.usable !== null
      ? `${curve.fa_lat_s ? sig(curve.fa_lat_s.mean) + " s" : "—"} / ${curve.vo_lat_s ? sig(curve.vo_lat_s.mean) + " s" : "—"}` : "–");
    const rows = entries.map((e) => el("tr", {},
      el("td", {}, `${e.p}, ${tablesText(e.t)}, ${mixLabel(studyIds, e.m)}`),
      comparison.variants.map((v) => usableCell(variantCurve(v, e))),
      others.map((v) => changeCell(e.d[v.id] ? e.d[v.id].usable_ratio : null, true)),
      comparison.variants.map((v) => latency(variantCurve(v, e)))));
    replace("append-body", notes, yScaleControl("append-yscale", "append", renderAppend), el("div", { class: "grid" }, charts),
      el("div", { class: "scroll" }, el("table", { class: "data append-table" }, el("thead", {}, head), el("tbody", {}, rows))),
      el("p", { class: "legend-note" }, "Solid: CAS catalog (conditional write of the whole catalog object, as exp4c). " +
        "Dashed: append catalog (position-conditional append of the intention record plus a discovery read). Colour: " +
        "provider. Hollow: a lower bound; cross: no point above the threshold. Change: usable throughput relative to CAS."));
  }

  Object.assign(window.Dash, { renderAppend });
})();
