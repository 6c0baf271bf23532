/* The results dashboard page: view 6. published vs simulated. page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    DATA, state, el, replace, sig, pct, selected, figure, noData
  } = window.Dash;

  // -- 6. published vs simulated ------------------------------------------------------------------------------------

  const UNITS = { cps: "c/s", pct: "%", s: "s", ms: "ms" };

  function renderPublished(study) {
    const entries = DATA.published.filter((e) => e.experiment === study.experiment);
    if (!entries.length) {
      replace("published-body", noData(`Seed 001 published no figures for ${study.experiment}.`));
      return;
    }
    const visible = entries.filter((e) => (!state.mixes || state.mixes.has(e.m))
      && (!state.tables || state.tables.has(String(e.t)))
      && (!state.series || state.series.has(e.s)));
    const matched = visible.filter((e) => e.status !== "not in store");
    const absent = visible.filter((e) => e.status === "not in store");
    const usable = matched.filter((e) => e.metric === "usable_throughput");
    const shortWhere = (e) => `${e.s} ${e.t}t FA${Math.round(Number(e.m) * 100)}`;
    let chart = null;
    if (usable.length) {
      chart = Charts.barChart({
        title: "Usable throughput: seed 001 vs this store", yLabel: "usable throughput (c/s)",
        width: Math.max(420, Math.min(44 * usable.length + 100, (document.getElementById("published-body").clientWidth || 1200) - 20)),
        height: 320,
        groups: usable.map(shortWhere),
        bars: [
          { label: "seed 001 (published)", colour: "#9e9e9e",
            values: usable.map((e) => ({ y: e.published, tip: `${e.where}\nseed 001: ${e.published} c/s` })) },
          { label: "this store", colour: "#1f77b4",
            values: usable.map((e) => (e.simulated === null ? null : { y: e.simulated, lo: e.low, hi: e.high,
              tip: `${e.where}\nthis store: ${sig(e.simulated)} c/s (knee range ${sig(e.low)} to ${sig(e.high)}, ${e.n_seeds} seeds)` })) },
        ],
      });
      chart.classList.add("published-chart");
    }
    const row = (e) => el("tr", { class: e.status === "ok" ? null : "missing" },
      el("td", {}, e.quantity), el("td", {}, e.where),
      el("td", {}, `${e.published} ${UNITS[e.unit] || e.unit}`),
      el("td", {}, e.simulated === null ? e.status
        : `${sig(e.simulated)} ${UNITS[e.unit] || e.unit}` + (e.n_seeds > 1 ? ` (${sig(e.low)} to ${sig(e.high)}, ${e.n_seeds} seeds)` : "")),
      el("td", {}, e.simulated === null || !e.published ? "–" : `${sig(e.simulated / e.published)}×`));
    const table = (rows) => el("table", { class: "data published-table" },
      el("thead", {}, el("tr", {}, ["Figure", "Where", "Seed 001", "This store", "store / seed 001"].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows.map(row)));
    replace("published-body", chart ? figure(chart) : null,
      matched.length ? table(matched) : noData("None of the selected published figures has a counterpart in this store yet."),
      absent.length ? el("details", {}, el("summary", {}, `${absent.length} more published figure${absent.length === 1 ? "" : "s"} ` +
        "for configurations this store does not hold"), table(absent)) : null,
      el("p", { class: "legend-note" }, "Seed 001's numbers come from the reference simulator at the time of the post: " +
        "anchors, not exact targets. Ranges: the knee's (or the point's) values over seeds."));
  }

  Object.assign(window.Dash, { renderPublished });
})();
