/* The results dashboard page: view 5. seed spread. page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    el, replace, sig, index, tablesText, noData
  } = window.Dash;

  // -- 5. seed spread ---------------------------------------------------------------------------------------------

  function renderSeedSpread(study) {
    const p = study.provenance;
    const spreads = study.curves.filter((c) => c.seed_usable_range && c.usable)
      .map((c) => ({ c, width: (c.seed_usable_range.high - c.seed_usable_range.low) / c.usable }))
      .sort((a, b) => b.width - a.width).slice(0, 8);
    const seriesById = index(study).series;
    const mixById = index(study).mixes;
    const rows = spreads.map(({ c, width }) => el("tr", {},
      el("td", {}, `${seriesById.get(c.s).label}, ${tablesText(c.t)}, ${mixById.get(c.m).label}`),
      el("td", {}, sig(c.usable)),
      el("td", {}, c.seed_usable.map(({ seed, usable }) => `${seed}: ${usable === null ? "none" : sig(usable)}`).join(", ")),
      el("td", {}, `${(width * 100).toFixed(0)}%`)));
    const seedsText = p.seeds_per_point.min === p.seeds_per_point.max ? String(p.seeds_per_point.min)
      : `${p.seeds_per_point.min} to ${p.seeds_per_point.max}`;
    replace("spread-body",
      el("p", {}, `${study.label}: ${seedsText} seed${p.seeds_per_point.max === 1 ? "" : "s"} per point ` +
        `(seeds ${p.seeds.join(", ")}). Every value shown is a seed mean; charts draw the range over seeds as bars, ` +
        "tooltips and tables give the standard deviation and the seed count."),
      rows.length ? el("table", { class: "data" },
        el("thead", {}, el("tr", {}, ["Curve", "usable c/s", "usable c/s per seed", "range / mean"].map((h) => el("th", {}, h)))),
        el("tbody", {}, rows)) : noData("One seed per point: no spread to show."));
  }

  Object.assign(window.Dash.views, { spread: (view, study) => renderSeedSpread(study) });
})();
