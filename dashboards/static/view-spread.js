/* The results dashboard page: view 5. seed spread. page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    el, replace, sig, index, tablesText, noData, statistic, seedList
  } = window.Dash;

  // -- 5. seed spread ---------------------------------------------------------------------------------------------

  // How far apart the seeds' own knees are, relative to the value: how much the knee itself moves from seed to seed.
  function ownKneeWidth(curve) {
    const values = curve.seed_own_knee.map((e) => e.usable).filter((v) => v !== null);
    return values.length > 1 && curve.usable ? (Math.max(...values) - Math.min(...values)) / curve.usable : null;
  }

  function renderSeedSpread(study) {
    const p = study.provenance;
    const stat = statistic();
    const spreads = study.curves.filter((c) => c.usable && c.seed_knee_tp.length > 1)
      .map((c) => ({ c, width: ownKneeWidth(c) }))
      .sort((a, b) => (b.width || 0) - (a.width || 0)).slice(0, 8);
    const seriesById = index(study).series;
    const mixById = index(study).mixes;
    const range = (c) => (c.knee_tp && c.knee_tp.n > 1 ? `${sig(c.knee_tp.low)}–${sig(c.knee_tp.high)}` : "–");
    const rows = spreads.map(({ c, width }) => el("tr", { "data-source": c.usable_source },
      el("td", {}, `${seriesById.get(c.s).label}, ${tablesText(c.t)}, ${mixById.get(c.m).label}`),
      el("td", {}, `${c.lower_bound ? "≥ " : ""}${sig(c.usable)}`,
         c.usable_source === "searched" ? el("span", { class: "source" }, " searched") : null),
      el("td", {}, `${range(c)} (${seedList(c.seed_knee_tp, "tp")})`),
      el("td", {}, seedList(c.seed_own_knee, "usable")),
      el("td", {}, width === null ? "–" : `${(width * 100).toFixed(0)}%`)));
    const seedsText = p.seeds_per_point.min === p.seeds_per_point.max ? String(p.seeds_per_point.min)
      : `${p.seeds_per_point.min} to ${p.seeds_per_point.max}`;
    replace("spread-body",
      el("p", {}, `${study.label}: ${seedsText} seed${p.seeds_per_point.max === 1 ? "" : "s"} per point ` +
        `(seeds ${p.seeds.join(", ")}). Every usable throughput on this page is the ${stat.label}: ${stat.description}. ` +
        `Its spread, drawn as bars, bracketed in tables and listed in tooltips, is ${stat.spread}. ` +
        "Each seed's own knee (the usable throughput of that seed's runs alone) is another statistic, shown here only " +
        "to say how far the knee moves from seed to seed: a seed can pass at a load the seed mean fails, or fail at one " +
        "it passes, so the value can lie below or above every seed's own knee. Point metrics elsewhere (heatmaps, " +
        "curves) are seed means at one load; tooltips and tables give their standard deviation and seed count."),
      rows.length ? el("table", { class: "data spread-table" },
        el("thead", {}, el("tr", {}, ["Curve", `usable c/s (${stat.label})`, `its spread: ${stat.spread}`,
          "each seed's own knee", "own knees' range / value"].map((h) => el("th", {}, h)))),
        el("tbody", {}, rows)) : noData("One seed per point: no spread to show."));
  }

  Object.assign(window.Dash.views, { spread: (view, study) => renderSeedSpread(study) });
})();
