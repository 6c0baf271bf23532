/* The results dashboard page, page view kind "protocol-change": what the corrected commit protocol changed. For the
 * chosen experiment, when the store holds it under both protocols (DATA.protocol_changes, dashboards/protocols.py):
 * per mix, the usable-throughput frontier under the corrected protocol (solid) and the published one (dashed, what
 * seed 001's figures came from) against table count; and per curve, both usable throughputs, the change, seed 001's
 * own figure where it published one, and VO p99 at each knee. page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    DATA, state, el, replace, sig, noData, figure, index, tablesText, studyById, variantCurve, usableMark, usableCell,
    changeCell, secondsCell, percentChange, command, seriesColour
  } = window.Dash;

  const BODY = "protocol-change-body";

  function seriesOf(studies, id) {
    for (const study of studies) {
      const series = index(study).series.get(id);
      if (series) return { study, series };
    }
    return null;
  }

  function mixOf(studies, id) {
    for (const study of studies) {
      const mix = index(study).mixes.get(id);
      if (mix) return mix;
    }
    return { id, label: `FA ${Math.round(Number(id) * 100)}%` };
  }

  // Seed 001's own usable-throughput figure for a curve, where it published one.
  function seed001Figure(experiment, entry) {
    const figure = DATA.published.find((p) => p.experiment === experiment && p.metric === "usable_throughput"
      && p.s === entry.s && p.t === entry.t && p.m === entry.m);
    return figure ? figure.published : null;
  }

  function renderProtocolChange(view, study) {
    const change = DATA.protocol_changes[study.experiment];
    if (!change) {
      const here = DATA.studies.filter((s) => s.experiment === study.experiment).map((s) => s.protocol);
      const missing = here.includes(DATA.protocol.default) ? DATA.protocol.published : DATA.protocol.default;
      replace(BODY, el("p", { class: "no-data" },
        `${study.experiment} is in this store under the ${[...new Set(here)].join(" and ")} protocol only, ` +
        "with no runs of the same settings under the other: nothing to compare yet. Run ",
        command(`commit-sweeps sweep ${study.experiment} --protocol ${missing}`),
        " (add --quick for a small version; seed 001's figures were made with the published protocol), then rebuild or reload."));
      return;
    }
    const published = change.variants.find((v) => v.id === change.baseline) || null;
    const corrected = change.variants.find((v) => v.id !== change.baseline) || null;
    const studies = change.variants.map((v) => studyById(v.study)).filter(Boolean);
    const notes = [];
    if (!published || !corrected) {
      notes.push(el("p", { class: "notice" }, `Only the ${change.variants.map((v) => v.label).join(", ")} runs of ` +
        `${change.experiment} pair up: nothing to compare them with. Run `, command(change.sweep), "."));
    }
    if (change.ignored.length) {
      notes.push(el("p", { class: "notice" }, `Left out (other settings differ too): ${change.ignored.join("; ")}.`));
    }
    const entries = change.curves.filter((e) => (!state.series || state.series.has(e.s))
      && (!state.mixes || state.mixes.has(e.m)) && (!state.tables || state.tables.has(String(e.t))));
    if (!entries.length) {
      replace(BODY, notes, noData(`The filters leave nothing of ${change.experiment}: press "all" on a filter to widen it.`));
      return;
    }
    const variants = [corrected, published].filter(Boolean);  // corrected solid, published dashed
    const mixes = [...new Set(entries.map((e) => e.m))].sort((a, b) => Number(b) - Number(a));
    const charts = mixes.map((m) => {
      const here = entries.filter((e) => e.m === m);
      const seriesIds = [...new Set(here.map((e) => e.s))].sort();
      const tables = [...new Set(here.map((e) => e.t))].sort((a, b) => a - b);
      const mix = mixOf(studies, m);
      const count = seriesIds.length * variants.length;
      const lines = [];
      seriesIds.forEach((id, si) => variants.forEach((variant, vi) => {
        const found = seriesOf(studies, id);
        const name = found ? found.series.label : id;
        const colour = found ? seriesColour(found.study, found.series) : Charts.seriesColour(id, si);
        const label = `${name}, ${variant.id === change.baseline ? "published" : "corrected"}`;
        // Nudge lines sideways (log axis) so equal values stay visible.
        const dodge = Math.pow(1.035, si * variants.length + vi - (count - 1) / 2);
        const points = here.filter((e) => e.s === id).map((e) => {
          const curve = variantCurve(variant, e);
          return curve ? usableMark(curve, e.t * dodge, `${label} protocol, ${tablesText(e.t)}, ${mix.label}`) : null;
        }).filter(Boolean);
        if (points.length) lines.push({ label, colour, dashed: variant === published, points });
      }));
      const chart = Charts.lineChart({ title: `${mix.label}: usable throughput`, series: lines,
        xLabel: "tables in the catalog", yLabel: "usable throughput (c/s)", xScale: "log", xTicks: tables,
        xTickLabel: String, width: 470, height: 330 });
      chart.classList.add("protocol-change-chart");
      chart.setAttribute("data-mix", m);
      return figure(chart);
    });
    const head = el("tr", {}, ["Curve", "Seed 001 (as printed)", "Published protocol: usable c/s", "Corrected: usable c/s",
      "Change", "VO p99 at knee, published", "VO p99 at knee, corrected"].map((text) => el("th", {}, text)));
    let moved = 0, compared = 0;
    const rows = entries.map((e) => {
      const found = seriesOf(studies, e.s);
      const before = published ? variantCurve(published, e) : null;
      const after = corrected ? variantCurve(corrected, e) : null;
      const difference = corrected ? e.d[corrected.id] : null;
      const ratio = difference ? difference.usable_ratio : null;
      if (ratio !== null && ratio !== undefined) {
        compared += 1;
        if (Math.abs(ratio) >= 0.01) moved += 1;
      }
      const printed = seed001Figure(change.experiment, e);
      return el("tr", { "data-curve": `${e.s}|${e.t}|${e.m}` },
        el("td", {}, `${found ? found.series.label : e.s}, ${tablesText(e.t)}, ${mixOf(studies, e.m).label}`),
        el("td", {}, printed === null ? "–" : `${sig(printed)} c/s`),
        usableCell(before), usableCell(after), changeCell(ratio, true),
        secondsCell(before && before.vo_p99_s), secondsCell(after && after.vo_p99_s));
    });
    const summary = el("p", { class: "protocol-change-summary" }, compared
      ? `${moved} of ${compared} curves moved by 1% or more under the corrected protocol (usable throughput, the ${DATA.usable_statistic.label}).`
      : "No curve has a usable throughput under both protocols yet.");
    replace(BODY, notes, summary, el("div", { class: "grid" }, charts),
      el("div", { class: "scroll" }, el("table", { class: "data protocol-change-table" }, el("thead", {}, head),
        el("tbody", {}, rows))),
      el("p", { class: "legend-note" }, "Solid: the corrected protocol (this page's default answers); dashed: the " +
        "protocol as published, which seed 001's figures came from. Change: corrected against published " +
        `(${percentChange(0.1)} = 10% more usable throughput). Usable throughput, knees and their marks (hollow: a lower ` +
        "bound; cross: no point above the threshold) are read exactly as in view 1. 'Seed 001 (as printed)': the figure " +
        "the study published for that curve, where it published one (see the published view)."));
  }

  Object.assign(window.Dash.views, { "protocol-change": renderProtocolChange });
})();
