/* The results dashboard page: view 8. knee search. page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    DATA, state, el, replace, sig, index, seriesColour, tablesText, figure, requestUpdate, studyById,
    percentChange, command, filteredAway, mixLabel, yScaleControl, kneeSearchFor, searchedMark, noneAbove,
    thresholdText
  } = window.Dash;

  // -- 8. knee search ----------------------------------------------------------------------------------------------



  function kneeCharts(search, entries, knee) {
    const mixes = [...new Set(entries.map((e) => e.m))].sort((a, b) => Number(b) - Number(a));
    const ids = [search.study, search.source_study].filter(Boolean);
    return mixes.map((m) => {
      const here = entries.filter((e) => e.m === m);
      const seriesIds = [...new Set(here.map((e) => e.s))];
      const tables = [...new Set(here.map((e) => e.t))].sort((a, b) => a - b);
      const lines = [];
      seriesIds.forEach((sid, i) => {
        const series = index(knee).series.get(sid);
        const colour = seriesColour(knee, series);
        const dodge = (k) => Math.pow(1.035, 2 * i + k - (2 * seriesIds.length - 1) / 2);
        const mine = here.filter((e) => e.s === sid);
        const where = (e) => `${series.label}, ${tablesText(e.t)}, ${mixLabel(ids, m)}`;
        const grid = mine.filter((e) => e.grid).map((e) => {
          const g = e.grid;
          const tip = `${where(e)}\ngrid knee (${search.source}): ` + (g.usable === null ? `no grid point above ${thresholdText()}`
            : `${sig(g.usable)} c/s at ${sig(g.knee_x)} ms${g.lower_bound ? " (a lower bound)" : ""}`) + `\n${g.sims} simulations`;
          return g.usable === null ? { x: e.t * dodge(0), y: null, cross: true, tip }
            : { x: e.t * dodge(0), y: g.usable, hollow: g.lower_bound, tip,
                lo: g.knee_tp ? g.knee_tp.low : null, hi: g.knee_tp ? g.knee_tp.high : null };
        });
        if (grid.length) lines.push({ label: `${series.label} grid`, colour, points: grid });
        lines.push({ label: `${series.label} searched`, colour, dashed: true,
                     points: mine.map((e) => searchedMark(e, e.t * dodge(1), where(e))) });
      });
      const chart = Charts.lineChart({ title: `${mixLabel(ids, m)}: grid knee vs searched knee`, series: lines,
        xLabel: "tables in the catalog", yLabel: "usable throughput (c/s)", xScale: "log", xTicks: tables,
        xTickLabel: String, width: 520, height: 360, yScale: state.yScales.knee || "linear" });
      chart.classList.add("knee-chart");
      chart.setAttribute("data-mix", m);
      return figure(chart);
    });
  }

  function kneeTable(search, entries, knee) {
    const ids = [search.study, search.source_study].filter(Boolean);
    const rows = entries.map((e) => {
      const series = index(knee).series.get(e.s);
      const g = e.grid;
      const gridText = !g ? "not in the store" : g.usable === null ? noneAbove()
        : `${g.lower_bound ? "≥ " : ""}${sig(g.usable)} @ ${sig(g.knee_x)} ms`;
      const searchedText = e.knee === null ? noneAbove()
        : `${e.status === "above_search_range" ? "≥ " : ""}${sig(e.knee)} @ ${sig(e.knee_x)} ms`;
      const spread = e.knee_tp && e.knee_tp.n > 1 ? `${sig(e.knee_tp.low)}–${sig(e.knee_tp.high)} (sd ${sig(e.knee_tp.sd)})` : "–";
      const label = (status) => status.replace(/_/g, " ");
      const statusText = e.file_status && e.file_status !== e.status ? `${label(e.status)} (summary: ${label(e.file_status)})` : label(e.status);
      return el("tr", { class: e.status === "found" ? null : "missing" },
        el("td", {}, `${series ? series.label : e.s}, ${tablesText(e.t)}, ${mixLabel(ids, e.m)}`),
        el("td", { class: g && g.lower_bound ? "bound" : null }, gridText),
        el("td", {}, searchedText),
        el("td", {}, e.bracket ? `${sig(e.bracket.knee_cps)} – ${sig(e.bracket.failing_cps)} c/s (${sig(e.bracket_x.failing_ms)}–${sig(e.bracket_x.knee_ms)} ms)` : "–"),
        el("td", { class: e.offered_width === null ? null : e.within ? "better" : "worse" },
           e.offered_width === null ? "–" : `${(e.offered_width * 100).toFixed(1)}% / ${
             e.width === null ? "–" : (e.width * 100).toFixed(1) + "%"}`),
        el("td", {}, spread),
        el("td", {}, statusText),
        el("td", {}, `${e.sims} / ${g ? g.sims : "–"} / ${e.fine_grid_sims.toLocaleString("en-US")}`),
        el("td", {}, e.delta === null ? "–" : percentChange(e.delta)));
    });
    return el("div", { class: "scroll" }, el("table", { class: "data knee-table" },
      el("thead", {}, el("tr", {}, ["Curve", `Grid knee (${search.source})`, "Searched knee", "Bracket", "Bracket width: rate / throughput",
        "Seed range at knee", "Status", "Simulations: search / grid / fine grid", "Searched vs grid"].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows)));
  }

  // What to suggest searching: this experiment where the knee search offers it, else the first it offers (the knee
  // view's entry lists them: every grid that declares a knee_quick).
  const suggestedSearch = (view, study) => (view.experiments.includes(study.experiment) ? study.experiment
    : view.experiments[0] || "NAME");

  function renderKnee(study, view) {
    const search = kneeSearchFor(study);
    if (!search) {
      const others = DATA.knee_searches;
      replace("knee-body", others.length
        ? el("p", {}, "Knee searches in this store: ", others.map((k, i) => [i ? ", " : "", el("button", {
            type: "button", class: "link", onclick: () => {
              state.study = k.source_study || k.study; state.series = state.mixes = state.tables = null; requestUpdate(); } },
            `${k.experiment} (of ${k.source})`)]), `; none of ${study.experiment}.`)
        : el("p", { class: "no-data" }, "No knee search in this store yet. Run ",
             command(study.knee_command || `commit-sweeps knee --experiment ${suggestedSearch(view, study)}`),
             " (add --quick for a small version), then rebuild or reload."));
      return;
    }
    const knee = studyById(search.study);
    const sameFamily = study.id === search.study || study.id === search.source_study;
    const seriesOk = (sid) => !state.series || !sameFamily || state.series.has(sid);
    const entries = search.curves.filter((e) => seriesOk(e.s) && (!state.mixes || state.mixes.has(e.m))
      && (!state.tables || state.tables.has(String(e.t))));
    const t = search.totals;
    const perCurve = (n) => (t.curves ? ` (${sig(n / t.curves)} per curve)` : "");
    const notes = [];
    if (!search.source_study) {
      notes.push(`${search.source} is not in the store: no grid knees to compare with. Run python sweeps/${search.source}.py.`);
    } else if (search.settings_differ.length) {
      notes.push(`The search and the ${search.source_label} grid differ in ` + search.settings_differ.map((d) =>
        `${d.field} (search ${d.search === null ? "none" : d.search}, grid ${d.grid === null ? "none" : d.grid})`).join(", ") +
        ": compare with care.");
    }
    if (search.summary_problems.length) {
      notes.push(`The search's summary ${search.summary_file}: ${search.summary_problems.join("; ")}. The rows alone are used.`);
    }
    const disagree = search.curves.filter((e) => e.file_status && e.file_status !== e.status).length;
    if (disagree) notes.push(`For ${disagree} curve(s) the search's summary states another status than its rows show (see Status).`);
    const summary = el("p", { class: "summary-line" },
      `${search.label}: ${t.curves} curves searched: ${t.found} bracketed, ${t.above_search_range} above the search range ` +
      `(knee at the heaviest load tried: a lower bound), ${t.below_search_range} below it (no point passes); ` +
      `${t.within_resolution} bracketed to within ${sig(search.resolution * 100)}% (in offered rate and in throughput). Simulations: ` +
      `${t.searched_sims.toLocaleString("en-US")} for the search${perCurve(t.searched_sims)}` +
      (t.grid_curves ? `, ${t.grid_sims.toLocaleString("en-US")} for the ${search.source} grid on ${t.grid_curves} of these curves` : "") +
      `, and ${t.fine_grid_sims.toLocaleString("en-US")} for a grid with ${sig(search.resolution * 100)}% steps over ` +
      `${sig(search.span_x.low_ms)}–${sig(search.span_x.high_ms)} ms${perCurve(t.fine_grid_sims)}.`);
    if (!entries.length) {
      replace("knee-body", summary, notes.map((n) => el("p", { class: "notice" }, n)), filteredAway(search.experiment));
      return;
    }
    replace("knee-body", summary, notes.map((n) => el("p", { class: "notice" }, n)),
      yScaleControl("knee-yscale", "knee", () => renderKnee(study, view)),
      el("div", { class: "grid" }, kneeCharts(search, entries, knee)),
      kneeTable(search, entries, knee),
      el("p", { class: "legend-note" }, "Solid: the grid knee (usable throughput read off the grid; hollow = a lower bound). " +
        "Dashed: the searched knee, with bars from its throughput to that of the nearest failing point at a heavier " +
        "load (the bracket the true knee lies in); hollow = above the search range, cross = below it. Bracket width: the " +
        "offered rate of the failing point over the knee's, and |failing − knee| / knee throughput; green when both are " +
        `within ${sig(search.resolution * 100)}%. Fine grid: simulations a geometric grid with that step over ` +
        `${sig(search.span_x.low_ms)}–${sig(search.span_x.high_ms)} ms would need per curve, at the search's seeds per point.`));
  }

  Object.assign(window.Dash.views, { knee: (view, study) => renderKnee(study, view) });
})();
