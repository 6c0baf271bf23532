/* The results dashboard page, study view kind "treatment-change": per table count, bars of each variant's change from
 * the baseline in usable throughput and in VO p99 at its knee, a table of both, and VO p99 along one load curve per
 * variant. The study it draws, and its texts, come from its view entry (DATA.views; the study's grid declares them).
 * page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    state, el, replace, index, tablesText, choice, figure, noData, curveLine, studyById, percentChange,
    variantCurve, mixLabel, mixHasVo, shortMix, usableCell, changeCell, secondsCell, studyEntries, legendNote
  } = window.Dash;

  function changeBars(view, comparison, entries, t, column, title, yLabel, moreIsBetter) {
    const studyIds = comparison.variants.map((v) => v.study);
    const others = comparison.variants.filter((v) => v.id !== comparison.baseline);
    const here = entries.filter((e) => e.t === t && others.some((v) => e.d[v.id] && e.d[v.id][column] !== null));
    if (!here.length) return null;
    const colours = ["#ff7f0e", "#9467bd", "#17becf"];
    const chart = Charts.barChart({
      title, yLabel, width: Math.max(420, Math.min(34 * here.length * others.length + 120, 1300)), height: 330,
      margin: { bottom: 78, left: 70 },
      groups: here.map((e) => `${e.p} ${shortMix(e.m)}`),
      yTickLabel: (v) => `${v > 0 ? "+" : ""}${Number(v.toPrecision(3))}%`,
      bars: others.map((v, i) => ({ label: `${v.label} vs ${comparison.variants[0].label}`, colour: colours[i % colours.length],
        values: here.map((e) => {
          const d = e.d[v.id];
          if (!d || d[column] === null) return null;
          const better = moreIsBetter ? d[column] > 0 : d[column] < 0;
          return { y: d[column] * 100, tip: `${e.p}, ${tablesText(e.t)}, ${mixLabel(studyIds, e.m)}\n${v.label}: ` +
            `${percentChange(d[column])} (${better ? "better" : "worse"} than ${comparison.variants[0].label})` };
        }) })),
    });
    chart.classList.add(`${view.id}-chart`);
    chart.setAttribute("data-tables", t);
    return figure(chart);
  }

  function loadCurve(view, comparison, entries) {
    const studyIds = comparison.variants.map((v) => v.study);
    const withVo = entries.filter((e) => mixHasVo(studyIds, e.m));
    if (!withVo.length) return [noData("No mix with VO transactions in the selection: no VO p99 to follow along the curve.")];
    const picked = state.curvePick[view.id] || {};
    const pick = (key, preferred) => {
      const values = [...new Set(withVo.map((e) => e[key]))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      if (values.includes(picked[key])) return picked[key];
      return values.includes(preferred) ? preferred : values[0];
    };
    const wanted = { p: pick("p", "s3"), m: pick("m", "0.9"), t: pick("t", 10) };
    const entry = withVo.find((e) => e.p === wanted.p && e.m === wanted.m && e.t === wanted.t)
      || withVo.find((e) => e.p === picked.p) || withVo[0];
    state.curvePick[view.id] = { p: entry.p, m: entry.m, t: entry.t };
    const set = (key, parse) => (v) => { state.curvePick[view.id][key] = parse(v); renderTreatmentChange(view); };
    const options = (key) => [...new Set(withVo.map((e) => e[key]))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const controls = [
      choice(`${view.id}-provider`, "provider:", options("p").map((v) => [v, v]), entry.p, set("p", String)),
      choice(`${view.id}-mix`, "mix:", options("m").map((v) => [v, mixLabel(studyIds, v)]), entry.m, set("m", String)),
      choice(`${view.id}-tables`, "tables:", options("t").map((v) => [String(v), String(v)]), String(entry.t), set("t", Number)),
    ];
    const colours = ["#1f77b4", "#ff7f0e", "#9467bd", "#17becf"];
    const lines = comparison.variants.map((v, i) => {
      const study = studyById(v.study);
      const series = study && index(study).series.get(entry.s);
      const mix = study && index(study).mixes.get(entry.m);
      if (!series || !mix) return null;
      return curveLine(study, series, mix, entry.t, v.label, colours[i % colours.length], "vo_commit_latency_p99_ms");
    }).filter((line) => line && line.points.length);
    if (!lines.length) return [controls, noData("No VO p99 latencies for this curve.")];
    const chart = Charts.lineChart({ title: `${entry.p} · ${tablesText(entry.t)} · ${mixLabel(studyIds, entry.m)}: VO p99 along the load curve`,
      series: lines, xLabel: "throughput (c/s)", yLabel: "VO p99 commit latency (ms)", yScale: "log", sortX: false,
      width: 560, height: 330 });
    chart.classList.add(`${view.id}-curve-chart`);
    return [controls, figure(chart)];
  }

  function renderTreatmentChange(view) {
    const found = studyEntries(view);
    if (!found) return;
    const { comparison, entries, notes } = found;
    const studyIds = comparison.variants.map((v) => v.study);
    const others = comparison.variants.filter((v) => v.id !== comparison.baseline);
    const tableCounts = [...new Set(entries.map((e) => e.t))].sort((a, b) => a - b);
    const charts = [];
    for (const t of tableCounts) {
      charts.push(changeBars(view, comparison, entries, t, "usable_ratio", `Usable throughput, ${tablesText(t)}: change vs ${comparison.variants[0].label}`,
        "change in usable throughput", true));
      charts.push(changeBars(view, comparison, entries, t, "vo_p99_ratio", `VO p99 at the knee, ${tablesText(t)}: change vs ${comparison.variants[0].label}`,
        "change in VO p99 latency", false));
    }
    const head1 = el("tr", {}, el("th", { rowspan: 2 }, "Curve"),
      el("th", { colspan: comparison.variants.length + others.length }, "usable throughput (c/s)"),
      el("th", { colspan: comparison.variants.length + others.length }, "VO p99 commit latency at the knee"));
    const head2 = el("tr", {}, [0, 1].map(() => [comparison.variants.map((v) => el("th", {}, v.label)),
      others.map((v) => el("th", {}, `Δ ${v.label}`))]));
    const rows = entries.map((e) => el("tr", {},
      el("td", {}, `${e.p}, ${tablesText(e.t)}, ${mixLabel(studyIds, e.m)}`),
      comparison.variants.map((v) => usableCell(variantCurve(v, e))),
      others.map((v) => changeCell(e.d[v.id] ? e.d[v.id].usable_ratio : null, true)),
      comparison.variants.map((v) => secondsCell(variantCurve(v, e) && variantCurve(v, e).vo_p99_s)),
      others.map((v) => changeCell(e.d[v.id] ? e.d[v.id].vo_p99_ratio : null, false))));
    replace(`${view.id}-body`, notes,
      el("div", { class: "grid" }, charts.filter(Boolean).length ? charts.filter(Boolean)
        : noData("No curve has both the baseline and another policy yet: no differences to draw.")),
      el("div", { class: "scroll" }, el("table", { class: `data ${view.id}-table` }, el("thead", {}, head1, head2), el("tbody", {}, rows))),
      el("div", { class: `${view.id}-curve` }, loadCurve(view, comparison, entries)),
      legendNote(view, comparison));
  }

  Object.assign(window.Dash.views, { "treatment-change": renderTreatmentChange });
})();
