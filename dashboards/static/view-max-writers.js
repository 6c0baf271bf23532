/* The results dashboard page, study view kind "max-writers": max usable writers against commit interval, per setup.
 * It draws every writer setup of the payload (DATA.writers); the experiments it names come from its view entry.
 * Part of the page's scripts (loaded in order by index.html): page.js holds the
 * data, state, filters and helpers, each view-*.js draws one view, main.js
 * draws them all. The payload they read is dashboards/static/payload.schema.json.
 * Store-provided text is always inserted with textContent. */
"use strict";

(() => {
  const { DATA, el, replace, tablesText, keepEntry, filteredAway, command } = window.Dash;

  function writerSetupLabel(w) {
    return `${w.s} ${w.client}` + (w.maintenance_jobs ? ` + ${w.maintenance_jobs} compactions` : "")
      + (w.protocol === DATA.protocol.default ? "" : `, ${w.protocol} protocol`);
  }

  function renderWriters(view) {
    const setups = DATA.writers || [];
    const body = `${view.id}-body`, experiment = view.experiments[0];
    if (!setups.length) {
      replace(body, el("p", { class: "no-data" }, "No writer-workload runs in this store yet. Run ",
        command(`commit-sweeps sweep ${experiment}`), " (add --quick for a small version), then rebuild or reload."));
      return;
    }
    const kept = setups.filter((w) => keepEntry({ p: w.s, t: w.t, m: w.m }));
    if (!kept.length) { replace(body, filteredAway(experiment)); return; }
    const colours = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666"];
    const groups = [...new Set(kept.map((w) => `${w.t}|${w.m}`))];
    const charts = groups.map((group) => {
      const here = kept.filter((w) => `${w.t}|${w.m}` === group);
      const labels = [...new Set(here.map(writerSetupLabel))].sort();
      const intervals = [...new Set(here.map((w) => w.interval_s))].sort((a, b) => a - b);
      const series = labels.map((label, i) => ({
        label, colour: colours[i % colours.length], dashed: label.includes("compactions"),
        points: here.filter((w) => writerSetupLabel(w) === label).map((w) => w.max_writers === null
          ? { x: w.interval_s, cross: true, tip: `${label}: no number of writers passes at ${w.interval_s} s` }
          : { x: w.interval_s, y: w.max_writers,
              tip: `${label}, one commit every ${w.interval_s} s: ${w.max_writers} writers` +
                   (w.failing_writers === null ? " (a lower bound: none failed)" : `, fails at ${w.failing_writers}`) })
      }));
      const [t, m] = group.split("|");
      const chart = Charts.lineChart({ title: `${tablesText(Number(t))}, FA share ${m}: max writers`, series,
        xLabel: "commit interval (s)", yLabel: "max usable writers", xScale: "log", yScale: "log", xTicks: intervals,
        xTickLabel: String, width: 470, height: 330 });
      chart.classList.add(`${view.id}-chart`);
      return el("figure", {}, chart);
    });
    const head = el("tr", {}, ["Setup", "Tables", "Mix", "Interval (s)", "Max writers", "Fails at", "Writers' p99 lag at max (s)"]
      .map((text) => el("th", {}, text)));
    const rows = kept.map((w) => {
      const atMax = w.points.find((p) => p[0] === w.max_writers);
      return el("tr", {}, el("td", {}, writerSetupLabel(w)), el("td", {}, String(w.t)), el("td", {}, w.m),
        el("td", {}, String(w.interval_s)), el("td", {}, w.max_writers === null ? "none" : String(w.max_writers)),
        el("td", {}, w.failing_writers === null ? "–" : String(w.failing_writers)),
        el("td", {}, atMax && atMax[3] !== null ? String(atMax[3]) : "–"));
    });
    replace(body, el("div", { class: "grid" }, charts),
      el("div", { class: "scroll" }, el("table", { class: `data ${view.id}-table` }, el("thead", {}, head), el("tbody", {}, rows))),
      el("p", { class: "legend-note" }, "Each writer commits every interval (the next commit is due one interval after the " +
        "previous one was due, or at once if it ended late). Max writers: the most whose success rate stays above the " +
        "threshold. Dashed: with compaction jobs on the same tables. Cross: no number of writers passes."));
  }

  Object.assign(window.Dash.views, { "max-writers": renderWriters });
})();
