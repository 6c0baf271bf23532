/* The results dashboard page: filters and twelve views over the data that
 * `python -m dashboards build` computed (window.DASHBOARD_DATA). Everything
 * numeric was computed at build time; this file only selects and draws.
 * Store-provided text is always inserted with textContent. */
"use strict";

(() => {
  const DATA = window.DASHBOARD_DATA;
  const FILTERS = ["experiment", "provider", "mix", "tables"];
  const state = {
    study: null, series: null, mixes: null, tables: null,  // null = all
    frontierAxis: "tables", heatFamily: "success", curveGroup: "tables",
    curveLatency: "fa_commit_latency_mean_ms", zipf: {}, retry: {}, yScales: {}, frontierSearched: "hide", queryProblems: [],
  };
  const indexCache = new Map();

  // -- DOM helpers ----------------------------------------------------------------

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name.startsWith("on") && typeof value === "function") node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.appendChild(typeof child === "string" || typeof child === "number"
        ? document.createTextNode(String(child)) : child);
    }
    return node;
  }

  function replace(id, ...children) {
    const node = document.getElementById(id);
    node.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
    return node;
  }

  const fmt = Charts.formatValue;
  const sig = Charts.sig;
  const pct = (v) => fmt(v, "%");

  // -- data access --------------------------------------------------------------------

  function currentStudy() {
    return DATA.studies.find((s) => s.id === state.study) || null;
  }

  function index(study) {
    if (!indexCache.has(study.id)) {
      const points = new Map(study.points.map((p) => [`${p.s}|${p.t}|${p.m}|${p.x}`, p]));
      const curves = new Map(study.curves.map((c) => [`${c.s}|${c.t}|${c.m}`, c]));
      const series = new Map(study.series.map((s) => [s.id, s]));
      const mixes = new Map(study.mixes.map((m) => [m.id, m]));
      indexCache.set(study.id, { points, curves, series, mixes });
    }
    return indexCache.get(study.id);
  }

  const selected = (all, chosen) => (chosen ? all.filter((v) => chosen.has(v)) : all.slice());
  const selectedSeries = (study) => study.series.filter((s) => !state.series || state.series.has(s.id));
  const selectedMixes = (study) => study.mixes.filter((m) => !state.mixes || state.mixes.has(m.id));
  const selectedTables = (study) => selected(study.tables, state.tables ? new Set([...state.tables].map(Number)) : null);

  function seriesColour(study, series) {
    const position = study.series.findIndex((s) => s.id === series.id);
    return Charts.seriesColour(study.catalog === "service" ? series.id : series.provider, position);
  }

  function metricValue(point, metric) {
    const spread = point && point.v[metric];
    return spread ? spread[0] : null;
  }

  function spreadText(spread, unit) {
    if (!spread) return "no value";
    const [mean, std, lo, hi, n] = spread;
    const range = n > 1 ? `; seeds ${fmt(lo, unit)} to ${fmt(hi, unit)}, sd ${fmt(std, unit === "%" ? "%" : unit)}` : "";
    return `${fmt(mean, unit)} (mean of ${n} seed${n === 1 ? "" : "s"}${range})`;
  }

  const tablesText = (t) => `${t} table${t === 1 ? "" : "s"}`;

  // -- URL state ------------------------------------------------------------------------

  function readQuery() {
    const params = new URLSearchParams(window.location.search);
    const studyIds = DATA.studies.map((s) => s.id);
    const problems = [];
    const experiment = params.get("experiment");
    if (experiment && studyIds.includes(experiment)) state.study = experiment;
    else if (experiment) problems.push(`experiment "${experiment}" is not in this store`);
    if (!state.study) {
      // The widest storage-catalog grid study (exp4c) tells most; else the first.
      const ranked = DATA.studies.slice().sort((a, b) =>
        (b.catalog === "storage") - (a.catalog === "storage") || (a.searched === true) - (b.searched === true)
        || b.series.length - a.series.length || b.provenance.points - a.provenance.points);
      state.study = ranked.length ? ranked[0].id : null;
    }
    const study = currentStudy();
    if (!study) return problems;
    const listParam = (name, allowed, aliases) => {
      const raw = params.get(name);
      if (!raw) return null;
      const chosen = new Set();
      for (const value of raw.split(",")) {
        const mapped = aliases && aliases.has(value) ? aliases.get(value) : [value];
        const valid = mapped.filter((v) => allowed.includes(v));
        if (valid.length) valid.forEach((v) => chosen.add(v));
        else problems.push(`${name} "${value}" is not in ${study.label}`);
      }
      return chosen.size ? chosen : null;
    };
    const providerAliases = new Map();
    for (const s of study.series) {
      providerAliases.set(s.provider, (providerAliases.get(s.provider) || []).concat([s.id]));
    }
    state.series = listParam("provider", study.series.map((s) => s.id), providerAliases);
    state.mixes = listParam("mix", study.mixes.map((m) => m.id));
    state.tables = listParam("tables", study.tables.map(String));
    return problems;
  }

  function writeQuery() {
    const study = currentStudy();
    if (!study) return;
    const params = new URLSearchParams();
    params.set("experiment", study.id);
    if (state.series) params.set("provider", [...state.series].join(","));
    if (state.mixes) params.set("mix", [...state.mixes].join(","));
    if (state.tables) params.set("tables", [...state.tables].join(","));
    try {
      window.history.replaceState(null, "", "?" + params.toString().replace(/%2C/g, ","));
    } catch (error) {
      // Some file:// contexts refuse history changes; the filters still work.
    }
  }

  // -- filters ---------------------------------------------------------------------------

  function chipGroup(name, label, options, chosen, onChange) {
    const allOn = !chosen;
    const chips = options.map((option) => el("button", {
      type: "button", class: "chip", "data-filter": name, "data-value": option.value,
      "aria-pressed": String(allOn || chosen.has(option.value)),
      onclick: () => {
        let next = new Set(chosen ? chosen : options.map((o) => o.value));
        if (allOn) next = new Set([option.value]);  // from "all", a click isolates one value
        else if (next.has(option.value)) next.delete(option.value);
        else next.add(option.value);
        onChange(next.size === 0 || next.size === options.length ? null : next);
      },
    }, option.label));
    const all = el("button", { type: "button", class: "chip chip-all", "data-filter": name, "data-value": "*",
                               "aria-pressed": String(allOn), onclick: () => onChange(null) }, "all");
    return el("div", { class: "filter", role: "group", "aria-label": label },
              el("span", { class: "filter-label" }, label), all, chips);
  }

  function renderFilters() {
    const study = currentStudy();
    document.getElementById("filters").hidden = !study;
    if (!study) { replace("filters"); return; }
    const select = el("select", { id: "filter-experiment", "data-filter": "experiment",
      onchange: (event) => {
        state.study = event.target.value;
        state.series = state.mixes = state.tables = null;
        state.zipf = {};
        update();
      } }, DATA.studies.map((s) => el("option", { value: s.id, selected: s.id === study.id },
                                       `${s.label} (${s.provenance.points} points)`)));
    const seriesLabel = study.catalog === "service" ? "Catalog CAS latency" : "Provider";
    replace("filters",
      el("div", { class: "filter" }, el("label", { class: "filter-label", for: "filter-experiment" }, "Experiment"), select),
      chipGroup("provider", seriesLabel, study.series.map((s) => ({ value: s.id, label: s.label })), state.series,
                (next) => { state.series = next; update(); }),
      chipGroup("mix", "Mix", study.mixes.map((m) => ({ value: m.id, label: m.label })), state.mixes,
                (next) => { state.mixes = next; update(); }),
      chipGroup("tables", "Tables", study.tables.map((t) => ({ value: String(t), label: String(t) })), state.tables,
                (next) => { state.tables = next; update(); }));
  }

  function choice(id, label, options, value, onChange) {
    return el("label", { class: "control" }, label + " ",
      el("select", { id, onchange: (event) => onChange(event.target.value) },
         options.map(([v, text]) => el("option", { value: v, selected: v === value }, text))));
  }

  // -- header and notices ---------------------------------------------------------------------

  function renderHeader() {
    const store = DATA.store;
    replace("store-line",
      `Store ${store.uri}: ${store.rows} rows from ${store.files_read} file${store.files_read === 1 ? "" : "s"}`,
      store.duplicates_dropped ? `, ${store.duplicates_dropped} duplicate rows dropped (latest kept)` : "",
      `. Read ${DATA.generated_at}. Usable = highest throughput with success above ${DATA.threshold * 100}%` +
      " (VO success where the mix has VO).");
  }

  function renderNotices() {
    const notices = [];
    if (!DATA.studies.length) {
      notices.push(el("div", { class: "notice empty", id: "empty-store" },
        el("strong", {}, "This store holds no results yet. "),
        `Nothing was found under ${DATA.store.uri}. Run a sweep into it, e.g. `,
        el("code", {}, `python sweeps/exp4c.py --store ${DATA.store.uri}`),
        ", then rebuild (python -m dashboards build) or reload (python -m dashboards serve rebuilds by itself)."));
    }
    for (const problem of state.queryProblems) {
      notices.push(el("div", { class: "notice" }, `Ignored a filter from the address: ${problem}.`));
    }
    if (DATA.warnings.length) {
      notices.push(el("details", { class: "notice" },
        el("summary", {}, `${DATA.warnings.length} note${DATA.warnings.length === 1 ? "" : "s"} about this store`),
        el("ul", {}, DATA.warnings.map((w) => el("li", {}, w)))));
    }
    replace("notices", notices);
    document.querySelectorAll("main > section").forEach((section) => { section.hidden = !DATA.studies.length; });
  }

  function figure(chart, caption, extra) {
    return el("figure", { class: "card" }, chart, caption ? el("figcaption", {}, caption) : null, extra || null);
  }

  function noData(text) {
    return el("p", { class: "no-data" }, text);
  }

  // -- 1. frontier -------------------------------------------------------------------------------------

  function frontierTip(study, series, mix, tables, curve) {
    const lines = [`${series.label}, ${tablesText(tables)}, ${mix.label}`];
    if (!curve) return lines.concat(["not in the store"]).join("\n");
    const successLabel = curve.success_metric === "vo_success_rate" ? "VO success" : "success";
    if (curve.usable === null) {
      lines.push(`no point with ${successLabel} above ${DATA.threshold * 100}% (${curve.n_points} points tried)`);
    } else {
      lines.push(`usable ${sig(curve.usable)} c/s at ${sig(curve.knee_x)} ms inter-arrival (${successLabel} ${
        pct(curve.knee_success && curve.knee_success[0])})`);
      if (curve.knee_tp) lines.push(`knee throughput over seeds: ${spreadText(curve.knee_tp, "c/s")}`);
    }
    lines.push(`per-seed usable: ${curve.seed_usable.map(([seed, v]) => `seed ${seed}: ${v === null ? "none" : sig(v)}`).join(", ")}`);
    if (curve.at_grid_edge) lines.push("lower bound: the knee is the heaviest load tried");
    if (curve.heavier_missing) lines.push("lower bound: heavier loads are missing from the store");
    if (curve.missing_x.length) lines.push(`missing inter-arrival points: ${curve.missing_x.join(", ")} ms`);
    return lines.join("\n");
  }

  function frontierPoint(study, series, mix, tables, x) {
    const curve = index(study).curves.get(`${series.id}|${tables}|${mix.id}`);
    if (!curve) return null;
    const tip = frontierTip(study, series, mix, tables, curve);
    if (curve.usable === null) return { x, y: null, cross: true, tip };
    return { x, y: curve.usable, lo: curve.knee_tp ? curve.knee_tp[2] : null, hi: curve.knee_tp ? curve.knee_tp[3] : null,
             hollow: curve.at_grid_edge || curve.heavier_missing, tip };
  }

  function renderFrontier(study) {
    const series = selectedSeries(study);
    const mixes = selectedMixes(study);
    const tables = selectedTables(study);
    const latencies = [...new Set(series.map((s) => s.catalog_latency_ms).filter((v) => v !== null))];
    const canUseLatency = latencies.length > 1;
    if (!canUseLatency) state.frontierAxis = "tables";
    const controls = [canUseLatency ? choice("frontier-axis", "x axis:", [["tables", "table count"], ["latency", "catalog CAS latency"]],
      state.frontierAxis, (v) => { state.frontierAxis = v; renderFrontier(study); }) : null];
    // A knee search of this experiment can be drawn on the same axes (dashed).
    const search = !study.searched && state.frontierAxis === "tables" ? kneeSearchFor(study) : null;
    if (search) {
      controls.push(choice("frontier-searched", "searched knees:", [["hide", "hide"], ["show", `show (${search.experiment})`]],
        state.frontierSearched, (v) => { state.frontierSearched = v; renderFrontier(study); }));
    }
    const searchedByKey = new Map(search && state.frontierSearched === "show"
      ? search.curves.map((e) => [`${e.s}|${e.t}|${e.m}`, e]) : []);
    const charts = mixes.map((mix) => {
      let lines;
      let options;
      if (state.frontierAxis === "latency") {
        const dodge = (i) => Math.pow(1.035, i - (tables.length - 1) / 2);
        lines = tables.map((t, i) => ({
          label: tablesText(t), colour: Charts.seriesColour(`t${t}`, i),
          points: series.map((s) => frontierPoint(study, s, mix, t, s.catalog_latency_ms * dodge(i))).filter(Boolean),
        }));
        options = { xLabel: "catalog CAS latency (ms)", xScale: "log", xTicks: latencies.slice().sort((a, b) => a - b) };
      } else {
        // Usable throughputs sit on grid points, so lines often coincide: nudge
        // each series sideways a little (log axis) so none hides another.
        const dodge = (i) => Math.pow(1.035, i - (series.length - 1) / 2);
        lines = series.map((s, i) => ({
          label: s.label, colour: seriesColour(study, s),
          points: tables.map((t) => frontierPoint(study, s, mix, t, t * dodge(i))).filter(Boolean),
        }));
        if (searchedByKey.size) {
          series.forEach((s, i) => {
            const points = tables.map((t) => searchedByKey.get(`${s.id}|${t}|${mix.id}`)).filter(Boolean)
              .map((e) => searchedMark(e, e.t * dodge(i) * 1.02, `${s.label}, ${tablesText(e.t)}, ${mix.label}`));
            if (points.length) lines.push({ label: `${s.label} searched`, colour: seriesColour(study, s), dashed: true, points });
          });
        }
        options = { xLabel: "tables in the catalog", xScale: "log", xTicks: tables };
      }
      const chart = Charts.lineChart(Object.assign(options, {
        title: `${mix.label}: usable throughput`, yLabel: "usable throughput (c/s)", series: lines,
        width: 470, height: 320, xTickLabel: String,
      }));
      chart.classList.add("frontier-chart");
      chart.setAttribute("data-mix", mix.id);
      return figure(chart);
    });
    replace("frontier-body", controls, el("div", { class: "grid" }, charts),
      el("p", { class: "legend-note" },
        "Dots: usable throughput (seed means), nudged sideways so equal values stay visible. Bars: range of the knee's " +
        "throughput over seeds. Hollow: a lower bound " +
        "(knee at the heaviest load tried, or heavier loads missing). Cross: no point above the threshold. Hover for details." +
        (search ? " Dashed (searched knees shown): the knee search's knee, bars spanning its bracket; see 8. Knee search." : "")));
  }

  // -- 2. heatmaps ---------------------------------------------------------------------------------------

  const HEAT_FAMILIES = {
    success: { label: "success rate", fa: "fa_success_rate", vo: "vo_success_rate" },
    throughput: { label: "throughput", all: "throughput_cps" },
    mean: { label: "mean commit latency", fa: "fa_commit_latency_mean_ms", vo: "vo_commit_latency_mean_ms" },
    p99: { label: "p99 commit latency", fa: "fa_commit_latency_p99_ms", vo: "vo_commit_latency_p99_ms" },
  };

  function hatchMetric(metric, mix) {
    const by = DATA.metrics[metric].hatch_by;
    return by === "usable" ? mix.success_metric : by;
  }

  function heatCell(study, series, mix, tables, scale, metric) {
    const point = index(study).points.get(`${series.id}|${tables}|${mix.id}|${scale}`);
    const where = `${series.label}, ${tablesText(tables)}, ${mix.label}, ${sig(scale)} ms inter-arrival`;
    if (!point) return { value: null, tip: `${where}\nmissing from the store` };
    const info = DATA.metrics[metric];
    const spread = point.v[metric];
    const hatchBy = hatchMetric(metric, mix);
    const hatchValue = metricValue(point, hatchBy);
    const hatched = hatchValue !== null && hatchValue <= DATA.threshold;
    const lines = [where, `${info.label}: ${spreadText(spread, info.unit)}`];
    for (const m of ["fa_success_rate", "vo_success_rate", "throughput_cps"]) {
      if (m !== metric && point.v[m]) lines.push(`${DATA.metrics[m].label}: ${fmt(point.v[m][0], DATA.metrics[m].unit)}`);
    }
    if (hatched) lines.push(`hatched: ${DATA.metrics[hatchBy].label} at or below ${DATA.threshold * 100}%`);
    return { value: spread ? spread[0] : null, spread, hatched, tip: lines.join("\n") };
  }

  function heatTable(study, series, mix, metric, tables) {
    const info = DATA.metrics[metric];
    const head = el("tr", {}, el("th", {}, "tables \\ inter-arrival (ms)"), study.scales.map((x) => el("th", {}, sig(x))));
    const rows = tables.slice().reverse().map((t) => el("tr", {}, el("th", {}, String(t)), study.scales.map((x) => {
      const cell = heatCell(study, series, mix, t, x, metric);
      if (cell.value === null) return el("td", { class: "missing", title: cell.tip }, "–");
      const [mean, std, , , n] = cell.spread;
      const text = fmt(mean, info.unit) + (n > 1 && std !== null ? ` ±${fmt(std, info.unit === "%" ? "%" : info.unit)}` : "");
      return el("td", { class: cell.hatched ? "low" : null, title: cell.tip }, text);
    })));
    return el("table", { class: "data" }, el("thead", {}, head), el("tbody", {}, rows));
  }

  function lazyDetails(summary, build) {
    // Built on first open: the page draws dozens of heatmaps, few tables get read.
    const details = el("details", { class: "values" }, el("summary", {}, summary));
    details.addEventListener("toggle", () => {
      if (details.open && details.children.length === 1) details.appendChild(build());
    });
    return details;
  }

  function renderHeatmaps(study) {
    if (study.searched) {
      replace("heatmaps-body", noData(`${study.label} was searched, not swept on a grid: each curve has the inter-arrival ` +
        "scales its search chose, so there is no table × scale grid to draw. See 8. Knee search."));
      return;
    }
    const family = HEAT_FAMILIES[state.heatFamily];
    const tables = selectedTables(study);
    const controls = choice("heat-metric", "show:", Object.entries(HEAT_FAMILIES).map(([k, f]) => [k, f.label]),
      state.heatFamily, (v) => { state.heatFamily = v; renderHeatmaps(study); });
    const cards = [];
    for (const series of selectedSeries(study)) {
      for (const mix of selectedMixes(study)) {
        const metrics = family.all ? [family.all] : [family.fa].concat(mix.has_vo ? [family.vo] : []);
        for (const metric of metrics) {
          const info = DATA.metrics[metric];
          const chart = Charts.heatmap({
            title: `${series.label} · ${mix.label} · ${info.label}`,
            xValues: study.scales, yValues: tables, xLabel: "inter-arrival scale (ms)", yLabel: "tables",
            unit: info.unit, ramp: info.kind === "success" ? "success" : "sequential",
            log: info.kind === "latency", min: info.kind === "success" ? 0 : undefined,
            max: info.kind === "success" ? 1 : undefined,
            cell: (x, t) => heatCell(study, series, mix, t, x, metric),
          });
          chart.classList.add("heatmap");
          cards.push(figure(chart, null, lazyDetails("values as a table",
                                                      () => heatTable(study, series, mix, metric, tables))));
        }
      }
    }
    replace("heatmaps-body", controls, el("div", { class: "grid" }, cards.length ? cards : noData("Nothing selected.")),
      el("p", { class: "legend-note" }, `Hatched cells: the relevant success rate (FA for FA metrics, VO for VO metrics, ` +
        `else the one the frontier reads) is at or below ${DATA.threshold * 100}%. Cell values are seed means; ` +
        "hover or open the table for the seed spread."));
  }

  // -- 3. latency vs throughput ---------------------------------------------------------------------------

  function curveLine(study, series, mix, t, label, colour, metric) {
    const points = study.scales.map((x) => {
      const point = index(study).points.get(`${series.id}|${t}|${mix.id}|${x}`);
      if (!point || !point.v[metric] || !point.v.throughput_cps) return null;
      const [mean, , lo, hi, n] = point.v[metric];
      const success = metricValue(point, mix.success_metric);
      return { x: point.v.throughput_cps[0], y: mean, lo, hi, hollow: success !== null && success <= DATA.threshold,
               tip: `${series.label}, ${tablesText(t)}, ${mix.label}, ${sig(x)} ms inter-arrival\n` +
                    `throughput ${spreadText(point.v.throughput_cps, "c/s")}\n` +
                    `${DATA.metrics[metric].label}: ${spreadText(point.v[metric], "ms")}\n` +
                    `${DATA.metrics[mix.success_metric].label}: ${pct(success)} (${n} seeds)` };
    }).filter(Boolean);
    return { label, colour, points };
  }

  function renderCurves(study) {
    const metric = state.curveLatency;
    const controls = [
      choice("curve-group", "one line per:", [["tables", "table count"], ["mix", "mix"]], state.curveGroup,
             (v) => { state.curveGroup = v; renderCurves(study); }),
      choice("curve-latency", "latency:", [
        ["fa_commit_latency_mean_ms", "FA mean"], ["vo_commit_latency_mean_ms", "VO mean"],
        ["fa_commit_latency_p99_ms", "FA p99"], ["vo_commit_latency_p99_ms", "VO p99"],
        ["commit_latency_mean_ms", "all mean"], ["commit_latency_p99_ms", "all p99"]], metric,
             (v) => { state.curveLatency = v; renderCurves(study); }),
    ];
    const cards = [];
    const tables = selectedTables(study);
    const mixes = selectedMixes(study);
    for (const series of selectedSeries(study)) {
      const panels = state.curveGroup === "tables"
        ? mixes.map((mix) => ({ title: `${series.label} · ${mix.label}`,
            lines: tables.map((t, i) => curveLine(study, series, mix, t, tablesText(t), Charts.seriesColour(`t${t}`, i), metric)) }))
        : tables.map((t) => ({ title: `${series.label} · ${tablesText(t)}`,
            lines: mixes.map((mix, i) => curveLine(study, series, mix, t, mix.label, Charts.seriesColour(`m${mix.id}`, i), metric)) }));
      for (const panel of panels) {
        const lines = panel.lines.filter((line) => line.points.length);
        if (!lines.length) continue;
        const chart = Charts.lineChart({ title: panel.title, series: lines, xLabel: "throughput (c/s)", sortX: false,
          yLabel: `${DATA.metrics[metric].label} (ms)`, yScale: "log", width: 420, height: 290 });
        chart.classList.add("curve-chart");
        cards.push(figure(chart));
      }
    }
    replace("curves-body", controls, el("div", { class: "grid" }, cards.length ? cards
      : noData("No points with this latency in the selection (VO latencies exist only for mixes with VO).")),
      el("p", { class: "legend-note" }, "Each dot is one inter-arrival scale (seed means; bars: range over seeds). " +
        `Hollow dots: success at or below ${DATA.threshold * 100}%, past the knee.`));
  }

  // -- 4. provider tables ------------------------------------------------------------------------------------

  function providerTable(study, t) {
    const mixes = selectedMixes(study);
    const head1 = el("tr", {}, el("th", { rowspan: 2 }, study.catalog === "service" ? "CAS latency" : "Provider"),
                     mixes.map((m) => el("th", { colspan: 2 }, m.label)));
    const head2 = el("tr", {}, mixes.map(() => [el("th", {}, "usable c/s"), el("th", {}, "FA / VO mean latency at knee")]));
    const rows = selectedSeries(study).map((series) => el("tr", {}, el("th", {}, series.label), mixes.map((mix) => {
      const curve = index(study).curves.get(`${series.id}|${t}|${mix.id}`);
      if (!curve) return [el("td", { class: "missing" }, "not run"), el("td", { class: "missing" }, "–")];
      const tip = frontierTip(study, series, mix, t, curve);
      if (curve.usable === null) return [el("td", { class: "low", title: tip }, "none > 95%"), el("td", {}, "–")];
      const range = curve.knee_tp && curve.knee_tp[4] > 1 ? ` (${sig(curve.knee_tp[2])}–${sig(curve.knee_tp[3])})` : "";
      const latency = (spread) => (spread ? `${sig(spread[0])} s` : "—");
      return [el("td", { title: tip, class: curve.at_grid_edge || curve.heavier_missing ? "bound" : null },
                 `${curve.at_grid_edge || curve.heavier_missing ? "≥ " : ""}${sig(curve.usable)}${range}`),
              el("td", { title: tip }, `${latency(curve.fa_lat_s)} / ${latency(curve.vo_lat_s)}`)];
    })));
    const seeds = study.provenance.seeds_per_point;
    const seedText = seeds[0] === seeds[1] ? `${seeds[0]}` : `${seeds[0]} to ${seeds[1]}`;
    return el("div", { class: "card wide" }, el("h3", {}, `${tablesText(t)} (${seedText} seeds per point)`),
              el("table", { class: "data provider-table", "data-tables": t }, el("thead", {}, head1, head2), el("tbody", {}, rows)));
  }

  function renderProviderTables(study) {
    const tables = selectedTables(study);
    let chosen = tables.filter((t) => t === 1 || t === 10);
    if (!chosen.length) chosen = tables.slice(0, 1);
    replace("tables-body", chosen.map((t) => providerTable(study, t)),
      el("p", { class: "legend-note" }, "Usable throughput (seed means) with the knee's range over seeds in brackets; " +
        "≥ marks a lower bound. Latencies: mean commit latency of FA and VO transactions at the knee. Hover for seeds."));
  }

  // -- 5. seed spread ---------------------------------------------------------------------------------------------

  function renderSeedSpread(study) {
    const p = study.provenance;
    const spreads = study.curves.filter((c) => c.seed_usable_range && c.usable)
      .map((c) => ({ c, width: (c.seed_usable_range[1] - c.seed_usable_range[0]) / c.usable }))
      .sort((a, b) => b.width - a.width).slice(0, 8);
    const seriesById = index(study).series;
    const mixById = index(study).mixes;
    const rows = spreads.map(({ c, width }) => el("tr", {},
      el("td", {}, `${seriesById.get(c.s).label}, ${tablesText(c.t)}, ${mixById.get(c.m).label}`),
      el("td", {}, sig(c.usable)),
      el("td", {}, c.seed_usable.map(([seed, v]) => `${seed}: ${v === null ? "none" : sig(v)}`).join(", ")),
      el("td", {}, `${(width * 100).toFixed(0)}%`)));
    const seedsText = p.seeds_per_point[0] === p.seeds_per_point[1] ? String(p.seeds_per_point[0])
      : `${p.seeds_per_point[0]} to ${p.seeds_per_point[1]}`;
    replace("spread-body",
      el("p", {}, `${study.label}: ${seedsText} seed${p.seeds_per_point[1] === 1 ? "" : "s"} per point ` +
        `(seeds ${p.seeds.join(", ")}). Every value shown is a seed mean; charts draw the range over seeds as bars, ` +
        "tooltips and tables give the standard deviation and the seed count."),
      rows.length ? el("table", { class: "data" },
        el("thead", {}, el("tr", {}, ["Curve", "usable c/s", "usable c/s per seed", "range / mean"].map((h) => el("th", {}, h)))),
        el("tbody", {}, rows)) : noData("One seed per point: no spread to show."));
  }

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

  // -- 7. Zipf -----------------------------------------------------------------------------------------------------

  function renderZipf(study) {
    const zipfStudies = DATA.studies.filter((s) => s.zipf);
    if (!study.zipf) {
      replace("zipf-body", zipfStudies.length
        ? el("p", {}, "Zipf runs are in ", zipfStudies.map((s, i) => [i ? ", " : "", el("button", {
            type: "button", class: "link", onclick: () => { state.study = s.id; state.series = state.mixes = state.tables = null; update(); } }, s.label)]),
          "; the current experiment picks tables uniformly.")
        : noData("No Zipf runs in this store."));
      return;
    }
    const entries = study.zipf_points.filter((z) => (!state.series || state.series.has(z.s))
      && (!state.mixes || state.mixes.has(z.m)) && (!state.tables || state.tables.has(String(z.t))));
    if (!entries.length) { replace("zipf-body", noData("No Zipf point with 2 or more tables in the selection.")); return; }
    const options = (key) => [...new Set(entries.map((z) => z[key]))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const pick = (key, preferred) => {
      const values = options(key);
      if (values.includes(state.zipf[key])) return state.zipf[key];
      return values.includes(preferred) ? preferred : values[values.length - 1];
    };
    const z0 = { s: pick("s", study.series.find((s) => s.catalog_latency_ms === 50)?.id), m: pick("m", null),
                 t: pick("t", 50), x: pick("x", 100) };
    const entry = entries.find((z) => z.s === z0.s && z.t === z0.t && z.m === z0.m && z.x === z0.x)
      || entries.find((z) => z.t === z0.t) || entries[0];
    state.zipf = { s: entry.s, t: entry.t, m: entry.m, x: entry.x };
    const seriesById = index(study).series;
    const mixById = index(study).mixes;
    const set = (key, parse) => (v) => { state.zipf[key] = parse(v); renderZipf(study); };
    const controls = [
      choice("zipf-series", "series:", options("s").map((v) => [v, seriesById.get(v).label]), entry.s, set("s", String)),
      choice("zipf-mix", "mix:", options("m").map((v) => [v, mixById.get(v).label]), entry.m, set("m", String)),
      choice("zipf-tables", "tables:", options("t").map((v) => [String(v), String(v)]), String(entry.t), set("t", Number)),
      choice("zipf-scale", "inter-arrival (ms):", options("x").map((v) => [String(v), sig(v)]), String(entry.x), set("x", Number)),
    ];
    const ranks = entry.share.map((_, i) => i + 1);
    const line = (label, colour, values, unit) => ({ label, colour, points: ranks.map((r, i) => ({
      x: r, y: values[i], tip: `rank ${r}: ${label} ${unit === "%" ? pct(values[i]) : sig(values[i])}` })) });
    const where = `${seriesById.get(entry.s).label}, ${tablesText(entry.t)}, ${mixById.get(entry.m).label}, ${sig(entry.x)} ms (${entry.n} seeds)`;
    const success = Charts.lineChart({ title: "Success rate by table rank", xLabel: "table rank (1 = hottest)", yLabel: "success rate",
      xScale: "log", yMax: 1, width: 440, height: 290, series: [line("success", "#1f77b4", entry.success, "%")] });
    const conflicts = Charts.lineChart({ title: "Conflicts per transaction by kind", xLabel: "table rank (1 = hottest)",
      yLabel: "conflicts per transaction", xScale: "log", width: 440, height: 290,
      series: [line("same table", "#d62728", entry.same, ""), line("catalog only", "#2ca02c", entry.catalog, "")] });
    const share = Charts.lineChart({ title: "Share of transactions by rank", xLabel: "table rank (1 = hottest)",
      yLabel: "share of transactions", xScale: "log", yScale: "log", width: 440, height: 290,
      series: [line("share", "#9467bd", entry.share, "%")] });
    [success, conflicts, share].forEach((c) => c.classList.add("zipf-chart"));
    replace("zipf-body", controls, el("p", {}, where), el("div", { class: "grid" }, figure(success), figure(conflicts), figure(share)));
  }

  // -- shared by views 8 to 11 (they set experiments side by side) --------------------------------------------

  const studyById = (id) => DATA.studies.find((s) => s.id === id) || null;
  const percentChange = (ratio) => (ratio === null || ratio === undefined ? "–"
    : `${ratio > 0 ? "+" : ratio < 0 ? "−" : "±"}${Math.abs(ratio * 100).toFixed(Math.abs(ratio) < 0.1 ? 1 : 0)}%`);
  const command = (text) => el("code", {}, `${text} --store ${DATA.store.uri}`);

  // Views 9 to 11 show their own experiments whatever the current one is; the
  // filters apply to them by value (provider name, mix, table count).
  function selectedProviders() {
    const study = currentStudy();
    if (!state.series || !study) return null;
    return new Set(study.series.filter((s) => state.series.has(s.id)).map((s) => s.provider));
  }

  function keepEntry(entry) {
    const providers = selectedProviders();
    return (!providers || providers.has(entry.p)) && (!state.mixes || state.mixes.has(entry.m))
      && (!state.tables || state.tables.has(String(entry.t)));
  }

  function filterText() {
    const parts = [];
    const providers = selectedProviders();
    if (providers) parts.push(`provider ${[...providers].join(", ")}`);
    if (state.mixes) parts.push(`mix ${[...state.mixes].join(", ")}`);
    if (state.tables) parts.push(`tables ${[...state.tables].join(", ")}`);
    return parts.join("; ");
  }

  function filteredAway(experiment) {
    return noData(`The filters (${filterText()}) leave nothing of ${experiment}: press "all" on a filter to widen it.`);
  }

  function variantCurve(variant, entry) {
    const study = studyById(variant.study);
    return study ? index(study).curves.get(`${entry.s}|${entry.t}|${entry.m}`) || null : null;
  }

  function mixLabel(studyIds, mixId) {
    for (const id of studyIds) {
      const study = studyById(id);
      const mix = study && index(study).mixes.get(mixId);
      if (mix) return mix.label;
    }
    return `FA ${Math.round(Number(mixId) * 100)}%`;
  }

  function mixHasVo(studyIds, mixId) {
    for (const id of studyIds) {
      const study = studyById(id);
      const mix = study && index(study).mixes.get(mixId);
      if (mix) return mix.has_vo;
    }
    return Number(mixId) < 1;
  }

  // "FA" for FA only, "90/10" for FA 90% / VO 10%: fits under a bar.
  const shortMix = (mixId) => (Number(mixId) === 1 ? "FA" : `${Math.round(Number(mixId) * 100)}/${Math.round((1 - Number(mixId)) * 100)}`);

  function yScaleControl(id, key, redraw) {
    return choice(id, "y axis:", [["linear", "linear"], ["log", "log"]], state.yScales[key] || "linear",
                  (v) => { state.yScales[key] = v; redraw(); });
  }

  const isLowerBound = (curve) => Boolean(curve && (curve.at_grid_edge || curve.heavier_missing));

  function kneeText(curve) {
    if (!curve) return "not in the store";
    if (curve.usable === null) return `no point above ${DATA.threshold * 100}% success (${curve.n_points} points tried)`;
    const successLabel = curve.success_metric === "vo_success_rate" ? "VO success" : "success";
    const lines = [`usable ${sig(curve.usable)} c/s at ${sig(curve.knee_x)} ms inter-arrival (${successLabel} ${
      pct(curve.knee_success && curve.knee_success[0])})`];
    if (curve.knee_tp) lines.push(`knee throughput over seeds: ${spreadText(curve.knee_tp, "c/s")}`);
    if (curve.vo_p99_s) lines.push(`VO p99 commit latency at the knee: ${sig(curve.vo_p99_s[0])} s`);
    if (isLowerBound(curve)) lines.push("a lower bound: the knee is the heaviest load tried, or heavier loads are missing");
    return lines.join("\n");
  }

  function usableMark(curve, x, where) {
    const tip = `${where}\n${kneeText(curve)}`;
    if (curve.usable === null) return { x, y: null, cross: true, tip };
    return { x, y: curve.usable, lo: curve.knee_tp ? curve.knee_tp[2] : null, hi: curve.knee_tp ? curve.knee_tp[3] : null,
             hollow: isLowerBound(curve), tip };
  }

  function usableCell(curve) {
    if (!curve) return el("td", { class: "missing" }, "not run");
    if (curve.usable === null) return el("td", { class: "low", title: kneeText(curve) }, "none > 95%");
    return el("td", { class: isLowerBound(curve) ? "bound" : null, title: kneeText(curve) },
              `${isLowerBound(curve) ? "≥ " : ""}${sig(curve.usable)}`);
  }

  function changeCell(ratio, moreIsBetter) {
    if (ratio === null || ratio === undefined) return el("td", { class: "missing" }, "–");
    const better = moreIsBetter ? ratio > 0 : ratio < 0;
    return el("td", { class: Math.abs(ratio) < 0.005 ? null : better ? "better" : "worse" }, percentChange(ratio));
  }

  const secondsCell = (spread) => el("td", {}, spread ? `${sig(spread[0])} s` : "–");

  /* One usable-throughput panel per mix, x = table count; styleOf(provider, providerIndex, variant, variantIndex)
   * gives each line's label, colour and dash. */
  function variantFrontiers(comparison, entries, chartClass, styleOf, yScale) {
    const studyIds = comparison.variants.map((v) => v.study);
    const mixes = [...new Set(entries.map((e) => e.m))].sort((a, b) => Number(b) - Number(a));
    return mixes.map((m) => {
      const here = entries.filter((e) => e.m === m);
      const providers = [...new Set(here.map((e) => e.p))].sort();
      const tables = [...new Set(here.map((e) => e.t))].sort((a, b) => a - b);
      const count = providers.length * comparison.variants.length;
      const lines = [];
      providers.forEach((provider, pi) => comparison.variants.forEach((variant, vi) => {
        const style = styleOf(provider, pi, variant, vi);
        // Nudge lines sideways (log axis) so equal values stay visible.
        const dodge = Math.pow(1.035, pi * comparison.variants.length + vi - (count - 1) / 2);
        const points = here.filter((e) => e.p === provider).map((e) => {
          const curve = variantCurve(variant, e);
          return curve ? usableMark(curve, e.t * dodge, `${style.label}, ${tablesText(e.t)}, ${mixLabel(studyIds, m)}`) : null;
        }).filter(Boolean);
        if (points.length) lines.push(Object.assign({}, style, { points }));
      }));
      const chart = Charts.lineChart({ title: `${mixLabel(studyIds, m)}: usable throughput`, series: lines,
        xLabel: "tables in the catalog", yLabel: "usable throughput (c/s)", xScale: "log", xTicks: tables,
        xTickLabel: String, width: 470, height: 330, yScale: yScale || "linear" });
      chart.classList.add(chartClass);
      chart.setAttribute("data-mix", m);
      return figure(chart);
    });
  }

  function comparisonPreamble(comparison, bodyId, what) {
    // Returns null when there is something to draw, else fills the body with what is missing.
    if (!comparison || !comparison.variants.length) {
      replace(bodyId, el("p", { class: "no-data" }, `No ${what} runs in this store yet. Run `,
        command(comparison ? comparison.sweep : `commit-sweeps sweep ${what}`), " (add --quick for a small version), then rebuild or reload."));
      return false;
    }
    return true;
  }

  function variantsNote(comparison, expected) {
    const notes = [];
    if (comparison.variants.length < 2) {
      notes.push(`Only the ${comparison.variants[0].label} runs of ${comparison.experiment} are in the store: ` +
        `nothing to compare them with yet (expected ${expected}). Run ${comparison.sweep} to add the rest.`);
    } else if (comparison.baseline === null) {
      notes.push(`The baseline of ${comparison.experiment} is missing from the store, so no differences are computed.`);
    }
    if (comparison.ignored.length) {
      notes.push(`Left out (other settings differ): ${comparison.ignored.join("; ")}.`);
    }
    return notes.map((text) => el("p", { class: "notice" }, text));
  }

  // -- 8. knee search ----------------------------------------------------------------------------------------------

  function kneeSearchFor(study) {
    // The search of this very study (or variant) first, else any search of its experiment.
    return DATA.knee_searches.find((k) => k.study === study.id || k.source_study === study.id)
      || DATA.knee_searches.find((k) => k.source === study.experiment || k.experiment === study.experiment) || null;
  }

  function searchedMark(entry, x, where) {
    const lines = [where];
    if (entry.status === "below_search_range") {
      lines.push(`searched: no point above ${DATA.threshold * 100}% (${entry.scales} scales tried): below the search range`);
      return { x, y: null, cross: true, tip: lines.join("\n") };
    }
    lines.push(`searched knee ${sig(entry.knee)} c/s at ${sig(entry.knee_x)} ms inter-arrival`);
    if (entry.bracket) {
      lines.push(`bracket ${sig(entry.bracket[0])} to ${sig(entry.bracket[1])} c/s (${entry.width === null ? "?"
        : (entry.width * 100).toFixed(1)}% wide), inter-arrival ${sig(entry.bracket_x[0])} to ${sig(entry.bracket_x[1])} ms`);
    }
    if (entry.knee_tp) lines.push(`knee throughput over seeds: ${spreadText(entry.knee_tp, "c/s")}`);
    lines.push(`${entry.sims} simulations (${entry.scales} scales × seeds ${entry.seeds.join(", ")}); ${entry.status.replace(/_/g, " ")}`);
    const [lo, hi] = entry.bracket ? [Math.min(...entry.bracket), Math.max(...entry.bracket)] : [null, null];
    return { x, y: entry.knee, lo, hi, hollow: entry.status === "above_search_range", tip: lines.join("\n") };
  }

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
          const tip = `${where(e)}\ngrid knee (${search.source}): ` + (g.usable === null ? "no grid point above 95%"
            : `${sig(g.usable)} c/s at ${sig(g.knee_x)} ms${g.lower_bound ? " (a lower bound)" : ""}`) + `\n${g.sims} simulations`;
          return g.usable === null ? { x: e.t * dodge(0), y: null, cross: true, tip }
            : { x: e.t * dodge(0), y: g.usable, hollow: g.lower_bound, tip,
                lo: g.knee_tp ? g.knee_tp[2] : null, hi: g.knee_tp ? g.knee_tp[3] : null };
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
      const gridText = !g ? "not in the store" : g.usable === null ? "none > 95%"
        : `${g.lower_bound ? "≥ " : ""}${sig(g.usable)} @ ${sig(g.knee_x)} ms`;
      const searchedText = e.knee === null ? "none > 95%"
        : `${e.status === "above_search_range" ? "≥ " : ""}${sig(e.knee)} @ ${sig(e.knee_x)} ms`;
      const spread = e.knee_tp && e.knee_tp[4] > 1 ? `${sig(e.knee_tp[2])}–${sig(e.knee_tp[3])} (sd ${sig(e.knee_tp[1])})` : "–";
      const label = (status) => status.replace(/_/g, " ");
      const statusText = e.file_status && e.file_status !== e.status ? `${label(e.status)} (summary: ${label(e.file_status)})` : label(e.status);
      return el("tr", { class: e.status === "found" ? null : "missing" },
        el("td", {}, `${series ? series.label : e.s}, ${tablesText(e.t)}, ${mixLabel(ids, e.m)}`),
        el("td", { class: g && g.lower_bound ? "bound" : null }, gridText),
        el("td", {}, searchedText),
        el("td", {}, e.bracket ? `${sig(e.bracket[0])} – ${sig(e.bracket[1])} c/s (${sig(e.bracket_x[0])}–${sig(e.bracket_x[1])} ms)` : "–"),
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

  function renderKnee(study) {
    const search = kneeSearchFor(study);
    if (!search) {
      const others = DATA.knee_searches;
      replace("knee-body", others.length
        ? el("p", {}, "Knee searches in this store: ", others.map((k, i) => [i ? ", " : "", el("button", {
            type: "button", class: "link", onclick: () => {
              state.study = k.source_study || k.study; state.series = state.mixes = state.tables = null; update(); } },
            `${k.experiment} (of ${k.source})`)]), `; none of ${study.experiment}.`)
        : el("p", { class: "no-data" }, "No knee search in this store yet. Run ",
             command(`python sweeps/knee.py --experiment ${study.searched ? study.experiment.replace(/_knee$/, "") : "exp4c"}`),
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
      `${search.label}: ${t.curves} curves searched: ${t.found} bracketed, ${t["above search range"]} above the search range ` +
      `(knee at the heaviest load tried: a lower bound), ${t["below search range"]} below it (no point passes); ` +
      `${t.within_resolution} bracketed to within ${sig(search.resolution * 100)}% (in offered rate and in throughput). Simulations: ` +
      `${t.searched_sims.toLocaleString("en-US")} for the search${perCurve(t.searched_sims)}` +
      (t.grid_curves ? `, ${t.grid_sims.toLocaleString("en-US")} for the ${search.source} grid on ${t.grid_curves} of these curves` : "") +
      `, and ${t.fine_grid_sims.toLocaleString("en-US")} for a grid with ${sig(search.resolution * 100)}% steps over ` +
      `${sig(search.span_x[0])}–${sig(search.span_x[1])} ms${perCurve(t.fine_grid_sims)}.`);
    if (!entries.length) {
      replace("knee-body", summary, notes.map((n) => el("p", { class: "notice" }, n)), filteredAway(search.experiment));
      return;
    }
    replace("knee-body", summary, notes.map((n) => el("p", { class: "notice" }, n)),
      yScaleControl("knee-yscale", "knee", () => renderKnee(study)),
      el("div", { class: "grid" }, kneeCharts(search, entries, knee)),
      kneeTable(search, entries, knee),
      el("p", { class: "legend-note" }, "Solid: the grid knee (usable throughput read off the grid; hollow = a lower bound). " +
        "Dashed: the searched knee, with bars from its throughput to that of the nearest failing point at a heavier " +
        "load (the bracket the true knee lies in); hollow = above the search range, cross = below it. Bracket width: the " +
        "offered rate of the failing point over the knee's, and |failing − knee| / knee throughput; green when both are " +
        `within ${sig(search.resolution * 100)}%. Fine grid: simulations a geometric grid with that step over ` +
        `${sig(search.span_x[0])}–${sig(search.span_x[1])} ms would need per curve, at the search's seeds per point.`));
  }

  // -- 9. GCS write throttle ----------------------------------------------------------------------------------------

  function renderThrottle() {
    const comparison = DATA.comparisons.gcs_throttle;
    if (!comparisonPreamble(comparison, "throttle-body", "gcs_throttle")) return;
    const entries = comparison.curves.filter(keepEntry);
    const notes = variantsNote(comparison, "unthrottled and throttled runs");
    if (!entries.length) { replace("throttle-body", notes, filteredAway(comparison.experiment)); return; }
    const colours = ["#2ca02c", "#7b3294", "#e66101"];
    const charts = variantFrontiers(comparison, entries, "throttle-chart", (provider, pi, variant, vi) => ({
      label: `${provider} ${variant.label}`, colour: colours[vi % colours.length], dashed: vi > 0 }));
    const studyIds = comparison.variants.map((v) => v.study);
    const others = comparison.variants.filter((v) => v.id !== comparison.baseline);
    const base = comparison.variants.find((v) => v.id === comparison.baseline);
    const head = el("tr", {}, el("th", {}, "Curve"), comparison.variants.map((v) => el("th", {}, `${v.label}: usable c/s`)),
      others.map((v) => el("th", {}, `change, ${v.label}`)),
      comparison.variants.map((v) => el("th", {}, `${v.label}: VO p99 at knee`)),
      others.map((v) => el("th", {}, `CAS refused by the throttle per txn at knee, ${v.label}`)));
    const rows = entries.map((e) => el("tr", {},
      el("td", {}, `${e.p}, ${tablesText(e.t)}, ${mixLabel(studyIds, e.m)}`),
      comparison.variants.map((v) => usableCell(variantCurve(v, e))),
      others.map((v) => changeCell(base && e.d[v.id] ? e.d[v.id][1] : null, true)),
      comparison.variants.map((v) => secondsCell(variantCurve(v, e) && variantCurve(v, e).vo_p99_s)),
      others.map((v) => el("td", {}, e.throttled && e.throttled[v.id] !== undefined ? sig(e.throttled[v.id]) : "–"))));
    replace("throttle-body", notes, el("div", { class: "grid" }, charts),
      el("div", { class: "scroll" }, el("table", { class: "data throttle-table" }, el("thead", {}, head), el("tbody", {}, rows))),
      el("p", { class: "legend-note" }, "Solid: unthrottled (as seed 001). Dashed: with the per-object CAS limit " +
        "(a token bucket on the catalog object; a CAS that finds no token is refused like a 429). Hollow: a lower bound; " +
        "cross: no point above the threshold. Change: usable throughput relative to unthrottled."));
  }

  // -- 10. retry policies --------------------------------------------------------------------------------------------

  function retryBars(comparison, entries, t, column, title, yLabel, moreIsBetter) {
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
    chart.classList.add("retry-chart");
    chart.setAttribute("data-tables", t);
    return figure(chart);
  }

  function retryCurve(comparison, entries) {
    const studyIds = comparison.variants.map((v) => v.study);
    const withVo = entries.filter((e) => mixHasVo(studyIds, e.m));
    if (!withVo.length) return [noData("No mix with VO transactions in the selection: no VO p99 to follow along the curve.")];
    const pick = (key, preferred) => {
      const values = [...new Set(withVo.map((e) => e[key]))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      if (values.includes(state.retry[key])) return state.retry[key];
      return values.includes(preferred) ? preferred : values[0];
    };
    const wanted = { p: pick("p", "s3"), m: pick("m", "0.9"), t: pick("t", 10) };
    const entry = withVo.find((e) => e.p === wanted.p && e.m === wanted.m && e.t === wanted.t)
      || withVo.find((e) => e.p === state.retry.p) || withVo[0];
    state.retry = { p: entry.p, m: entry.m, t: entry.t };
    const set = (key, parse) => (v) => { state.retry[key] = parse(v); renderRetry(); };
    const options = (key) => [...new Set(withVo.map((e) => e[key]))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const controls = [
      choice("retry-provider", "provider:", options("p").map((v) => [v, v]), entry.p, set("p", String)),
      choice("retry-mix", "mix:", options("m").map((v) => [v, mixLabel(studyIds, v)]), entry.m, set("m", String)),
      choice("retry-tables", "tables:", options("t").map((v) => [String(v), String(v)]), String(entry.t), set("t", Number)),
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
    chart.classList.add("retry-curve-chart");
    return [controls, figure(chart)];
  }

  function renderRetry() {
    const comparison = DATA.comparisons.retry_policies;
    if (!comparisonPreamble(comparison, "retry-body", "retry_policies")) return;
    const entries = comparison.curves.filter(keepEntry);
    const notes = variantsNote(comparison, "immediate, backoff and split");
    if (!entries.length) { replace("retry-body", notes, filteredAway(comparison.experiment)); return; }
    const studyIds = comparison.variants.map((v) => v.study);
    const others = comparison.variants.filter((v) => v.id !== comparison.baseline);
    const tableCounts = [...new Set(entries.map((e) => e.t))].sort((a, b) => a - b);
    const charts = [];
    for (const t of tableCounts) {
      charts.push(retryBars(comparison, entries, t, 1, `Usable throughput, ${tablesText(t)}: change vs ${comparison.variants[0].label}`,
        "change in usable throughput", true));
      charts.push(retryBars(comparison, entries, t, 3, `VO p99 at the knee, ${tablesText(t)}: change vs ${comparison.variants[0].label}`,
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
      others.map((v) => changeCell(e.d[v.id] ? e.d[v.id][1] : null, true)),
      comparison.variants.map((v) => secondsCell(variantCurve(v, e) && variantCurve(v, e).vo_p99_s)),
      others.map((v) => changeCell(e.d[v.id] ? e.d[v.id][3] : null, false))));
    replace("retry-body", notes,
      el("div", { class: "grid" }, charts.filter(Boolean).length ? charts.filter(Boolean)
        : noData("No curve has both the baseline and another policy yet: no differences to draw.")),
      el("div", { class: "scroll" }, el("table", { class: "data retry-table" }, el("thead", {}, head1, head2), el("tbody", {}, rows))),
      el("div", { class: "retry-curve" }, retryCurve(comparison, entries)),
      el("p", { class: "legend-note" }, "Bars: each policy's usable throughput (and VO p99 latency at its own knee) relative " +
        `to ${comparison.variants[0].label} retry on the same curve; up is more throughput, down is lower latency. ` +
        "Green: better, red: worse. The curve chart follows VO p99 as load rises, one line per policy; hollow dots are past " +
        "the knee."));
  }

  // -- 11. conditional-append catalog ---------------------------------------------------------------------------------

  function renderAppend() {
    const comparison = DATA.comparisons.append_catalog;
    if (!comparisonPreamble(comparison, "append-body", "append_catalog")) return;
    const entries = comparison.curves.filter(keepEntry);
    const notes = variantsNote(comparison, "CAS and append catalogs");
    if (!entries.length) { replace("append-body", notes, filteredAway(comparison.experiment)); return; }
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
      ? `${curve.fa_lat_s ? sig(curve.fa_lat_s[0]) + " s" : "—"} / ${curve.vo_lat_s ? sig(curve.vo_lat_s[0]) + " s" : "—"}` : "–");
    const rows = entries.map((e) => el("tr", {},
      el("td", {}, `${e.p}, ${tablesText(e.t)}, ${mixLabel(studyIds, e.m)}`),
      comparison.variants.map((v) => usableCell(variantCurve(v, e))),
      others.map((v) => changeCell(e.d[v.id] ? e.d[v.id][1] : null, true)),
      comparison.variants.map((v) => latency(variantCurve(v, e)))));
    replace("append-body", notes, yScaleControl("append-yscale", "append", renderAppend), el("div", { class: "grid" }, charts),
      el("div", { class: "scroll" }, el("table", { class: "data append-table" }, el("thead", {}, head), el("tbody", {}, rows))),
      el("p", { class: "legend-note" }, "Solid: CAS catalog (conditional write of the whole catalog object, as exp4c). " +
        "Dashed: append catalog (position-conditional append of the intention record plus a discovery read). Colour: " +
        "provider. Hollow: a lower bound; cross: no point above the threshold. Change: usable throughput relative to CAS."));
  }

  // -- 12. provenance -------------------------------------------------------------------------------------------

  const shortTime = (iso) => (iso ? iso.replace("T", " ").replace("+00:00", " UTC") : "?");

  function renderProvenance(study) {
    const rows = DATA.studies.map((s) => {
      const p = s.provenance;
      return el("tr", { class: s.id === study.id ? "current" : null },
        el("td", {}, s.label), el("td", {}, String(p.rows)), el("td", {}, s.searched ? `${p.points} (searched)` : `${p.points} of ${p.grid_points}`),
        el("td", {}, p.seeds.join(", ")),
        el("td", {}, p.seeds_per_point ? `${p.seeds_per_point[0]}–${p.seeds_per_point[1]}` : "–"),
        el("td", {}, `${sig(p.fixed.duration_s)} s`),
        el("td", {}, Object.entries(p.package_versions).map(([v, n]) => `${v} (${n})`).join(", ")),
        el("td", {}, Object.entries(p.git_revisions).map(([v, n]) => `${v.slice(0, 12)} (${n})`).join(", ")),
        el("td", {}, `${shortTime(p.finished_first)} to ${shortTime(p.finished_last)}`),
        el("td", {}, p.wall_s_total === null ? "–" : `${sig(p.wall_s_total)} s`));
    });
    const fixed = Object.entries(study.provenance.fixed).map(([k, v]) => `${k}=${v === null ? "none" : v}`).join(", ");
    const missing = study.missing.by_curve.map((m) => el("li", {},
      `${index(study).series.get(m.s).label}, ${tablesText(m.t)}, ${index(study).mixes.get(m.m).label}: ` +
      `inter-arrival ${m.x.map(sig).join(", ")} ms`));
    replace("provenance-body",
      el("div", { class: "scroll" }, el("table", { class: "data provenance-table" },
        el("thead", {}, el("tr", {}, ["Experiment", "Rows", "Points (of grid)", "Seeds", "Seeds/point", "Duration",
          "Package versions (rows)", "Git revisions (rows)", "Finished", "Compute (sum of wall s)"].map((h) => el("th", {}, h)))),
        el("tbody", {}, rows))),
      el("p", {}, `${study.label} fixed settings: ${fixed}.`),
      study.missing.count
        ? el("details", { class: "missing-points" }, el("summary", {},
            `${study.missing.count} of ${study.missing.of} grid points of ${study.label} are missing`), el("ul", {}, missing))
        : el("p", {}, study.searched ? `${study.label} was searched per curve: it has no grid to be missing points of.`
          : `${study.label}: every point of its grid (${study.missing.of}) is present.`),
      DATA.store.skipped_files.length ? el("details", {}, el("summary", {}, `${DATA.store.skipped_files.length} unreadable file(s) skipped`),
        el("ul", {}, DATA.store.skipped_files.map((f) => el("li", {}, `${f.path}: ${f.reason}`)))) : null,
      el("p", { class: "legend-note" }, `Built by dashboards ${DATA.dashboards_version} from ${DATA.store.uri} at ${DATA.generated_at}.`));
  }

  // -- main ------------------------------------------------------------------------------------------------------

  function update() {
    const started = performance.now();
    renderFilters();
    renderNotices();
    const study = currentStudy();
    if (study) {
      writeQuery();
      renderFrontier(study);
      renderHeatmaps(study);
      renderCurves(study);
      renderProviderTables(study);
      renderSeedSpread(study);
      renderPublished(study);
      renderZipf(study);
      renderKnee(study);
      renderThrottle();
      renderRetry();
      renderAppend();
      renderProvenance(study);
    }
    window.DASHBOARD_RENDER_MS = performance.now() - started;
    document.body.dataset.renders = String(Number(document.body.dataset.renders || 0) + 1);
  }

  function start() {
    if (!DATA) {
      replace("notices", el("div", { class: "notice" }, "The dashboard's data (data.js) did not load."));
      return;
    }
    renderHeader();
    state.queryProblems = readQuery();
    update();
    window.DASHBOARD_READY_MS = performance.now();
    document.body.dataset.ready = "1";
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
