/* The results dashboard page, study view kind "treatment-latency": usable-throughput frontiers coloured by provider,
 * each variant but the baseline dashed, and a table of usable throughput, its change and FA / VO mean latency at the
 * knee. The study it draws, and its texts, come from its view entry (DATA.views; the study's grid declares them).
 * page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    state, el, replace, sig, tablesText, variantCurve, mixLabel, yScaleControl, usableCell,
    changeCell, variantFrontiers, studyEntries, legendNote, shortLabel
  } = window.Dash;

  function renderTreatmentLatency(view) {
    const found = studyEntries(view);
    if (!found) return;
    const { comparison, entries, notes } = found;
    const studyIds = comparison.variants.map((v) => v.study);
    const short = (v) => shortLabel(view, v);
    const charts = variantFrontiers(comparison, entries, `${view.id}-chart`, (provider, pi, variant, vi) => ({
      label: `${provider} ${short(variant)}`, colour: Charts.seriesColour(provider, pi), dashed: vi > 0 }),
      state.yScales[view.id]);
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
    replace(`${view.id}-body`, notes, yScaleControl(`${view.id}-yscale`, view.id, () => renderTreatmentLatency(view)),
      el("div", { class: "grid" }, charts),
      el("div", { class: "scroll" }, el("table", { class: `data ${view.id}-table` }, el("thead", {}, head), el("tbody", {}, rows))),
      legendNote(view, comparison));
  }

  Object.assign(window.Dash.views, { "treatment-latency": renderTreatmentLatency });
})();
