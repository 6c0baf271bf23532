/* The results dashboard page, core: the data, the state, the filters and the shared helpers.
 * Part of the page's scripts, loaded in the order dashboards/registry.py lists them (site.py writes the
 * script tags): page.js holds the data, state, filters and helpers; each view-<kind>.js registers the
 * function that draws its kind of view (Dash.views[kind]); main.js draws every view the payload lists
 * (DATA.views), in page order. No script names an experiment: a view's entry says which to draw.
 * The payload they read is dashboards/static/payload.schema.json.
 * Store-provided text is always inserted with textContent. */
"use strict";

(() => {
  const DATA = window.DASHBOARD_DATA;
  // The URL filters, the page's name for each -> its query parameter: declared once, in dashboards/registry.py
  // (the server accepts exactly these parameters).
  const FILTERS = DATA ? DATA.filters : {};
  const state = {
    study: null, series: null, mixes: null, tables: null,  // null = all
    frontierAxis: "tables", heatFamily: "success", curveGroup: "tables",
    curveLatency: "fa_commit_latency_mean_ms", zipf: {}, curvePick: {}, yScales: { frontier: "log" }, frontierGrid: "hide", queryProblems: [], publishedDefinition: "store",
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
    return spread ? spread.mean : null;
  }

  function spreadText(spread, unit) {
    if (!spread) return "no value";
    const { mean, sd: std, low: lo, high: hi, n } = spread;
    const range = n > 1 ? `; seeds ${fmt(lo, unit)} to ${fmt(hi, unit)}, sd ${fmt(std, unit === "%" ? "%" : unit)}` : "";
    return `${fmt(mean, unit)} (mean of ${n} seed${n === 1 ? "" : "s"}${range})`;
  }

  const tablesText = (t) => `${t} table${t === 1 ? "" : "s"}`;

  // -- URL state ------------------------------------------------------------------------

  function readQuery() {
    const params = new URLSearchParams(window.location.search);
    const studyIds = DATA.studies.map((s) => s.id);
    const problems = [];
    const experiment = params.get(FILTERS.experiment);
    if (experiment && studyIds.includes(experiment)) state.study = experiment;
    else if (experiment) problems.push(`${FILTERS.experiment} "${experiment}" is not in this store`);
    if (!state.study) {
      // The widest storage-catalog grid study tells most (seed 001's provider frontier); else the first.
      // Of those, the default (corrected) protocol's answers.
      const ranked = DATA.studies.slice().sort((a, b) =>
        (b.catalog === "storage") - (a.catalog === "storage") || (a.searched === true) - (b.searched === true)
        || (b.protocol === DATA.protocol.default) - (a.protocol === DATA.protocol.default)
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
    state.series = listParam(FILTERS.series, study.series.map((s) => s.id), providerAliases);
    state.mixes = listParam(FILTERS.mix, study.mixes.map((m) => m.id));
    state.tables = listParam(FILTERS.tables, study.tables.map(String));
    return problems;
  }

  function writeQuery() {
    const study = currentStudy();
    if (!study) return;
    const params = new URLSearchParams();
    params.set(FILTERS.experiment, study.id);
    if (state.series) params.set(FILTERS.series, [...state.series].join(","));
    if (state.mixes) params.set(FILTERS.mix, [...state.mixes].join(","));
    if (state.tables) params.set(FILTERS.tables, [...state.tables].join(","));
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

  // A study's protocol where its label does not already name it (a variant of two protocols: "... (protocol=published)").
  const studyProtocolText = (study) => (study.label.includes("protocol=") ? "" : `, ${study.protocol} protocol`);

  function renderFilters() {
    const study = currentStudy();
    document.getElementById("filters").hidden = !study;
    if (!study) { replace("filters"); return; }
    const select = el("select", { id: "filter-experiment", "data-filter": FILTERS.experiment,
      onchange: (event) => {
        state.study = event.target.value;
        state.series = state.mixes = state.tables = null;
        state.zipf = {};
        requestUpdate();
      } }, DATA.studies.map((s) => el("option", { value: s.id, selected: s.id === study.id },
                                       `${s.label} (${s.provenance.points} points${studyProtocolText(s)})`)));
    const seriesLabel = study.catalog === "service" ? "Catalog CAS latency" : "Provider";
    replace("filters",
      el("div", { class: "filter" }, el("label", { class: "filter-label", for: "filter-experiment" }, "Experiment"), select),
      chipGroup(FILTERS.series, seriesLabel, study.series.map((s) => ({ value: s.id, label: s.label })), state.series,
                (next) => { state.series = next; requestUpdate(); }),
      chipGroup(FILTERS.mix, "Mix", study.mixes.map((m) => ({ value: m.id, label: m.label })), state.mixes,
                (next) => { state.mixes = next; requestUpdate(); }),
      chipGroup(FILTERS.tables, "Tables", study.tables.map((t) => ({ value: String(t), label: String(t) })), state.tables,
                (next) => { state.tables = next; requestUpdate(); }));
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
      `. Read ${DATA.generated_at}. Usable throughput = the ${DATA.usable_statistic.label}: ` +
      `${DATA.usable_statistic.description}; a point passes with success above ${thresholdText()} (VO success where ` +
      "the mix has VO). It is the searched knee where the store holds an ended knee search of the curve, else the grid " +
      "knee, at the grid's resolution.");
    replace("protocol-line", protocolText());
  }

  // Which commit protocol made the answers: the corrected one by default (the studies with plain experiment ids);
  // seed 001's figures came from the published one (the published view compares them with those rows only).
  function protocolText() {
    const { default: main, published, rows } = DATA.protocol;
    const count = (name) => rows[name] || 0;
    const total = Object.values(rows).reduce((a, b) => a + b, 0);
    const link = el("a", { href: "#protocol-change" }, "what the correction changed");
    if (total && !count(main)) {
      return [el("strong", {}, `Commit protocol: ${Object.keys(rows).join(", ")} only. `),
        `This store holds no rows of the ${main} protocol, the default answer (the reference's 2026 errata: every ` +
        `attempt also reads and writes the table metadata); its numbers are those of the ${published} protocol ` +
        "seed 001 used. Sweep again without --protocol for the corrected answers, then see ", link, "."];
    }
    const others = Object.keys(rows).filter((name) => name !== main);
    return [el("strong", {}, `Commit protocol: ${main}. `),
      `The default answers (the studies with plain experiment ids) use the ${main} protocol (the reference's 2026 ` +
      "errata: every attempt also reads and writes the table metadata, one round trip dearer than as published). " +
      `Seed 001's figures came from the ${published} protocol` +
      (others.length ? `; this store also holds ${others.map((name) => `${count(name)} rows of the ${name}`).join(", ")} ` +
        "protocol (studies labelled protocol=…): see " : ": see "), link, "."];
  }

  function renderNotices() {
    const notices = [];
    if (!DATA.studies.length) {
      notices.push(el("div", { class: "notice empty", id: "empty-store" },
        el("strong", {}, "This store holds no results yet. "),
        `Nothing was found under ${DATA.store.uri}. Run a sweep into it, e.g. `,
        el("code", {}, `python sweeps/${DATA.example_experiment}.py --store ${DATA.store.uri}`),
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
    const exports = chart instanceof SVGElement ? exportLinks(chart) : null;
    return el("figure", { class: "card" }, chart, caption ? el("figcaption", {}, caption) : null, extra || null,
              exports);
  }

  // -- export: every chart downloads as SVG (as drawn) or PNG (rasterised at twice its size) ----------------------

  function chartFileName(chart) {
    const title = chart.getAttribute("aria-label") || "chart";
    return title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "chart";
  }

  function pageStyles() {
    // The page's stylesheet travels inside the file, so the chart looks as it does here.
    try {
      return [...document.styleSheets].flatMap((sheet) => [...sheet.cssRules].map((rule) => rule.cssText)).join("\n");
    } catch (error) {
      return "";  // a browser that keeps file:// stylesheets from scripts: the shapes still export
    }
  }

  function svgBlob(chart) {
    const copy = chart.cloneNode(true);
    copy.setAttribute("xmlns", "http://www.w3.org/2000/svg");
    const style = document.createElementNS("http://www.w3.org/2000/svg", "style");
    style.textContent = pageStyles();
    copy.insertBefore(style, copy.firstChild);
    return new Blob([new XMLSerializer().serializeToString(copy)], { type: "image/svg+xml" });
  }

  function download(blob, name) {
    const link = el("a", { href: URL.createObjectURL(blob), download: name });
    document.body.appendChild(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  }

  function downloadPng(chart) {
    const width = Number(chart.getAttribute("width")), height = Number(chart.getAttribute("height"));
    const image = new Image();
    image.onload = () => {
      const canvas = el("canvas", { width: 2 * width, height: 2 * height });
      const context = canvas.getContext("2d");
      context.fillStyle = "#fff";
      context.fillRect(0, 0, canvas.width, canvas.height);
      context.drawImage(image, 0, 0, canvas.width, canvas.height);
      URL.revokeObjectURL(image.src);
      canvas.toBlob((blob) => download(blob, `${chartFileName(chart)}.png`), "image/png");
    };
    image.src = URL.createObjectURL(svgBlob(chart));
  }

  function exportLinks(chart) {
    return el("div", { class: "export" }, "download: ",
      el("button", { type: "button", class: "link", onclick: () => download(svgBlob(chart), `${chartFileName(chart)}.svg`) },
         "SVG"), " ",
      el("button", { type: "button", class: "link", onclick: () => downloadPng(chart) }, "PNG"));
  }

  function noData(text) {
    return el("p", { class: "no-data" }, text);
  }

  // -- helpers two views share --------------------------------------------------------------------------------------

  // -- one answer per curve: its value, spread and source, said the same way in every view -------------------------

  const statistic = () => DATA.usable_statistic;
  const isLowerBound = (curve) => Boolean(curve && curve.lower_bound);
  const seedList = (entries, key) => entries.map((e) => `seed ${e.seed}: ${e[key] === null ? "none" : sig(e[key])}`).join(", ");

  // The value's seed spread: the statistic's own words, then each seed's value (low to high is knee_tp's range).
  function spreadLine(curve) {
    return `spread (${statistic().spread}): ${curve.seed_knee_tp.length ? seedList(curve.seed_knee_tp, "tp") : "–"}`;
  }

  // Where a curve's usable throughput comes from, for people.
  function sourceLine(curve) {
    if (curve.usable_source === "searched") {
      const s = curve.search;
      const bracket = s && s.bracket ? `, bracketed ${sig(s.bracket.knee_cps)} to ${sig(s.bracket.failing_cps)} c/s` : "";
      const state = s && !s.ended ? "; the search has not ended: rerunning it finishes it" : "";
      return `source: the searched knee (${s ? `${s.experiment}, ${s.status.replace(/_/g, " ")}` : "knee search"}${bracket}), ` +
        `what commit-sweeps capacity reports for this config${state}`;
    }
    return "source: the grid knee, at the grid's resolution (the true knee lies between it and the next heavier load tried)";
  }

  // What searches a grid-read value, for a study (null: nothing to add).
  function searchHint(study, curve) {
    if (curve.usable_source === "searched" && curve.search && curve.search.ended) return null;
    if (curve.search && !curve.search.ended) {
      return `a knee search of this curve (${curve.search.experiment}) has not ended` +
        (study && study.knee_command ? `: ${study.knee_command} finishes it` : "");
    }
    if (!study) return null;
    return study.knee_command ? `to search it: ${study.knee_command}`
      : `the knee search does not offer ${study.experiment}; commit-sweeps capacity searches one config`;
  }

  function lowerBoundLines(curve) {
    if (curve.usable_source === "searched") {
      return curve.lower_bound ? ["lower bound: it passes even at the heaviest load the search tried"] : [];
    }
    const lines = [];
    if (curve.at_grid_edge) lines.push("lower bound: the knee is the heaviest load tried");
    if (curve.heavier_missing) lines.push("lower bound: heavier loads are missing from the store");
    return lines;
  }

  const gridKneeText = (grid) => (grid.usable === null ? `no grid point above ${thresholdText()}`
    : `${grid.lower_bound ? "≥ " : ""}${sig(grid.usable)} c/s at ${sig(grid.knee_x)} ms`);

  /* Every line a curve's tooltip gives about its usable throughput; ``study`` (or null) for the command hint. */
  function usableLines(curve, study) {
    const successLabel = curve.success_metric === "vo_success_rate" ? "VO success" : "success";
    const lines = [];
    if (curve.usable === null) {
      lines.push(`no point with ${successLabel} above ${thresholdText()} (${curve.n_points} points tried)`);
    } else {
      lines.push(`usable ${isLowerBound(curve) ? "≥ " : ""}${sig(curve.usable)} c/s (${statistic().label}) at ${
        sig(curve.knee_x)} ms inter-arrival (${successLabel} ${pct(curve.knee_success && curve.knee_success.mean)})`);
      lines.push(spreadLine(curve));
    }
    lines.push(sourceLine(curve));
    if (curve.usable_source === "searched" && curve.grid) {
      lines.push(`grid knee, at the grid's resolution: ${gridKneeText(curve.grid)}`);
    }
    const hint = searchHint(study, curve);
    if (hint) lines.push(hint);
    lines.push(...lowerBoundLines(curve));
    lines.push(`each seed's own knee (another statistic, not averaged into the value): ${seedList(curve.seed_own_knee, "usable")}`);
    return lines;
  }

  function frontierTip(study, series, mix, tables, curve) {
    const lines = [`${series.label}, ${tablesText(tables)}, ${mix.label}`];
    if (!curve) return lines.concat(["not in the store"]).join("\n");
    lines.push(...usableLines(curve, study));
    if (curve.missing_x.length) lines.push(`missing inter-arrival points: ${curve.missing_x.join(", ")} ms`);
    return lines.join("\n");
  }

  // Where a study's values come from, for a view's legend: how many curves are searched, and the command for the rest.
  function sourceNote(study, curves) {
    const searched = curves.filter((c) => c.usable_source === "searched" && (!c.search || c.search.ended)).length;
    const pending = curves.filter((c) => c.search && !c.search.ended).length;
    const command = (what) => (study.knee_command
      ? [" ", el("code", {}, `${study.knee_command} --store ${DATA.store.uri}`), ` ${what} (the search commit-sweeps ` +
         "capacity runs on one config); rebuild or reload after."]
      : [` The knee search does not offer ${study.experiment}; commit-sweeps capacity searches one config.`]);
    const unfinished = pending ? ` ${pending} curve(s) have a knee search that has not ended.` : "";
    if (study.searched) {
      return [`Every value here is a searched knee (${study.experiment}).${unfinished}`,
              pending ? command("finishes them") : ""];
    }
    const grid = "grid knees, at the grid's resolution (the true knee lies between a grid knee and the next heavier load " +
      "the grid tried)";
    if (!searched) return [`Every value here is one of the ${grid}.${unfinished}`, command("searches them")];
    return [`${searched} of ${curves.length} curves show their searched knee (marked searched; the grid's knee is in ` +
      `the tooltip); the others are ${grid}.${unfinished}`, searched < curves.length ? command("searches them") : ""];
  }

  function curveLine(study, series, mix, t, label, colour, metric) {
    const points = study.scales.map((x) => {
      const point = index(study).points.get(`${series.id}|${t}|${mix.id}|${x}`);
      if (!point || !point.v[metric] || !point.v.throughput_cps) return null;
      const { mean, low: lo, high: hi, n } = point.v[metric];
      const success = metricValue(point, mix.success_metric);
      return { x: point.v.throughput_cps.mean, y: mean, lo, hi, hollow: success !== null && success <= DATA.threshold,
               tip: `${series.label}, ${tablesText(t)}, ${mix.label}, ${sig(x)} ms inter-arrival\n` +
                    `throughput ${spreadText(point.v.throughput_cps, "c/s")}\n` +
                    `${DATA.metrics[metric].label}: ${spreadText(point.v[metric], "ms")}\n` +
                    `${DATA.metrics[mix.success_metric].label}: ${pct(success)} (${n} seeds)` };
    }).filter(Boolean);
    return { label, colour, points };
  }

  // The usable threshold as people read it ("95%"), from the payload (simcore.usable's rule).
  const thresholdText = () => `${Number((DATA.threshold * 100).toPrecision(4))}%`;
  const noneAbove = () => `none > ${thresholdText()}`;

  // Views ask for a redraw through this; main.js sets what a redraw is.
  function requestUpdate() {
    window.Dash.update();
  }

  window.Dash = {
    views: {},  // view kind -> function (view, study) that draws it; each view-<kind>.js adds its own
    DATA, FILTERS, state, indexCache, el, replace, fmt, sig, pct, currentStudy, index, selected,
    selectedSeries, selectedMixes, selectedTables, seriesColour, metricValue, spreadText, tablesText,
    readQuery, writeQuery, chipGroup, renderFilters, choice, renderHeader, renderNotices, figure, noData, svgBlob,
    frontierTip, curveLine, requestUpdate, thresholdText, noneAbove, statistic, isLowerBound, spreadLine, sourceLine,
    searchHint, usableLines, gridKneeText, seedList, sourceNote
  };
})();
