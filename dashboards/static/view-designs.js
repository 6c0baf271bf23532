/* The results dashboard page, study view kind "designs": each commit design's usable-throughput frontier against table
 * count, one line per design, one panel per store and mix, and a table ranking the designs per curve. The experiment it
 * draws and its texts come from its view entry (DATA.views; the study's grid declares them), which study holds each
 * design's curves from DATA.designs. page.js says how the scripts fit together. Store-provided text is always inserted
 * with textContent. */
"use strict";

(() => {
  const {
    DATA, state, el, replace, sig, tablesText, figure, noData, statistic, studyById, index, command, keepEntry,
    filteredAway, mixLabel, usableMark, usableCell, yScaleControl, noneAbove, isLowerBound
  } = window.Dash;

  const colours = ["#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#666666"];

  // A design's curve on one entry (store, tables, mix), from the design's own study; null where it did not run.
  function designCurve(design, entry) {
    const series = entry.s[design.id];
    const study = series === undefined ? null : studyById(design.study);
    return study ? index(study).curves.get(`${series}|${entry.t}|${entry.m}`) || null : null;
  }

  // Where the values come from, said once: the statistic, how many curves are searched knees, what searches the rest.
  function provenanceNote(set, curves) {
    const searched = curves.filter((c) => c.usable_source === "searched" && (!c.search || c.search.ended)).length;
    const pending = curves.filter((c) => c.search && !c.search.ended).length;
    const grid = "grid knees, at the grid's resolution (the true knee lies between a grid knee and the next heavier " +
      "load the grid tried)";
    const parts = [`Values: the ${statistic().label}, ${statistic().description}; bars: its spread, ${statistic().spread}. `,
      searched ? `${searched} of ${curves.length} curves show their searched knee (marked searched; the grid's knee is in ` +
        `the tooltip), the others are ${grid}.` : `Every value here is one of the ${grid}.`,
      pending ? ` ${pending} curve(s) have a knee search that has not ended.` : ""];
    if (searched < curves.length) {
      parts.push(...(set.knee_command ? [" ", command(set.knee_command), " searches them; rebuild or reload after."]
        : [` The knee search does not offer ${set.experiment}; commit-sweeps capacity --compare searches one config.`]));
    }
    return el("p", { class: "legend-note designs-provenance" }, parts);
  }

  // "ducklake > unity ≥ rest-v4 …": the designs by usable throughput on one curve, the highest first.
  function ranking(set, entry) {
    const ranked = set.designs.map((d) => ({ d, curve: designCurve(d, entry) })).filter((r) => r.curve)
      .sort((a, b) => (b.curve.usable === null ? -1 : b.curve.usable) - (a.curve.usable === null ? -1 : a.curve.usable));
    return ranked.map((r) => `${r.d.label} ${r.curve.usable === null ? noneAbove()
      : `${isLowerBound(r.curve) ? "≥ " : ""}${sig(r.curve.usable)}`}`).join(" > ");
  }

  function renderDesigns(view) {
    const experiment = view.experiments[0], bodyId = `${view.id}-body`;
    const set = DATA.designs[experiment];
    if (!set || !set.designs.length) {
      replace(bodyId, noData([`No ${experiment} runs in this store yet. Run `,
        command(set ? set.sweep : `commit-sweeps sweep ${experiment}`),
        " (add --quick for a small version), then rebuild or reload."]));
      return;
    }
    const notes = [];
    if (set.ignored.length) notes.push(el("p", { class: "notice" }, `Left out (other settings differ): ${set.ignored.join("; ")}.`));
    const entries = set.curves.filter(keepEntry);
    if (!entries.length) { replace(bodyId, notes, filteredAway(experiment)); return; }
    if (!state.yScales[view.id]) state.yScales[view.id] = "log";  // the designs differ tenfold and more
    const redraw = () => renderDesigns(view);
    const studyIds = set.designs.map((d) => d.study);
    const colourOf = new Map(set.designs.map((d, i) => [d.id, colours[i % colours.length]]));
    const panels = [...new Set(entries.map((e) => `${e.p}|${e.m}`))];
    const charts = panels.map((panel) => {
      const here = entries.filter((e) => `${e.p}|${e.m}` === panel);
      const [provider, mix] = [here[0].p, here[0].m];
      const tables = [...new Set(here.map((e) => e.t))].sort((a, b) => a - b);
      const count = set.designs.length;
      const lines = set.designs.map((design, i) => {
        const dodge = Math.pow(1.035, i - (count - 1) / 2);  // equal values stay visible side by side
        const points = here.map((e) => {
          const curve = designCurve(design, e);
          return curve ? usableMark(curve, e.t * dodge, `${design.label} on ${provider}, ${tablesText(e.t)}, ` +
            `${mixLabel(studyIds, mix)}`) : null;
        }).filter(Boolean);
        return points.length ? { label: design.label, colour: colourOf.get(design.id), points } : null;
      }).filter(Boolean);
      const chart = Charts.lineChart({ title: `${provider}, ${mixLabel(studyIds, mix)}: usable throughput`, series: lines,
        xLabel: "tables in the catalog", yLabel: "usable throughput (c/s)", xScale: "log", xTicks: tables,
        xTickLabel: String, width: 470, height: 330, yScale: state.yScales[view.id] });
      chart.classList.add(`${view.id}-chart`);
      chart.setAttribute("data-provider", provider);
      chart.setAttribute("data-mix", mix);
      return figure(chart);
    });
    const head = el("tr", {}, el("th", {}, "Curve"), set.designs.map((d) => el("th", { title: d.summary }, `${d.label}: usable c/s`)),
      el("th", {}, "designs, highest first"));
    const rows = entries.map((e) => el("tr", {},
      el("td", {}, `${e.p}, ${tablesText(e.t)}, ${mixLabel(studyIds, e.m)}`),
      set.designs.map((d) => (e.s[d.id] === undefined ? el("td", { class: "missing" }, "does not apply")
        : usableCell(designCurve(d, e)))),
      el("td", { class: "ranking" }, ranking(set, e))));
    const shown = entries.flatMap((e) => set.designs.map((d) => designCurve(d, e))).filter(Boolean);
    const legend = el("dl", { class: `${view.id}-designs` },
      set.designs.map((d) => [el("dt", {}, el("span", { style: `color: ${colourOf.get(d.id)}` }, "● "), d.label),
        el("dd", {}, d.summary)]));
    replace(bodyId, notes, yScaleControl(`${view.id}-yscale`, view.id, redraw), el("div", { class: "grid" }, charts),
      el("div", { class: "scroll" }, el("table", { class: `data ${view.id}-table` }, el("thead", {}, head), el("tbody", {}, rows))),
      legend, el("p", { class: "legend-note" }, view.legend), provenanceNote(set, shown));
  }

  Object.assign(window.Dash.views, { designs: renderDesigns });
})();
