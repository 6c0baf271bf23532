/* The results dashboard page: view 6. published vs simulated. page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    DATA, state, el, replace, sig, figure, noData, choice, requestUpdate
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
          { label: "this store (published protocol)", colour: "#1f77b4",
            values: usable.map((e) => (e.simulated === null ? null : { y: e.simulated, lo: e.low, hi: e.high,
              tip: `${e.where}\nthis store: ${sig(e.simulated)} c/s (knee range ${sig(e.low)} to ${sig(e.high)}, ${e.n_seeds} seeds)` })) },
          { label: "simcore, seed 001's definition", colour: "#2ca02c",
            values: usable.map((e) => (!e.definition || e.definition.value === null ? null : { y: e.definition.value,
              tip: `${e.where}\nseed 001's definition: ${sig(e.definition.value)} c/s (${e.definition.verdict})` })) },
        ],
      });
      chart.classList.add("published-chart");
    }
    // Seed 001's figures came from the published protocol: they are compared with that protocol's rows only.
    const protocolNote = DATA.studies.some((s) => s.experiment === study.experiment && s.protocol === DATA.protocol.published)
      ? null : el("p", { class: "notice published-protocol-note" },
        `This store holds no ${DATA.protocol.published}-protocol rows of ${study.experiment}. Seed 001's figures are ` +
        `compared only with rows of the protocol that made them (not with the ${DATA.protocol.default} protocol's), ` +
        "so none has a counterpart here. Run ",
        el("code", {}, `commit-sweeps sweep ${study.experiment} --protocol ${DATA.protocol.published} --store ${DATA.store.uri}`),
        " to add them.");
    const unit = (e) => UNITS[e.unit] || e.unit;
    const seed001 = state.publishedDefinition === "seed001";
    // The value compared with the published one: the store's (steady-state window), or simcore's under
    // the definition seed 001 was read with (studies/published_repro/README.md).
    const compared = (e) => (seed001 ? (e.definition ? e.definition.value : null) : e.simulated);
    const storeCell = (e) => el("td", {}, e.simulated === null ? e.status
      : `${sig(e.simulated)} ${unit(e)}` + (e.n_seeds > 1 ? ` (${sig(e.low)} to ${sig(e.high)}, ${e.n_seeds} seeds)` : ""));
    const definitionCell = (e) => el("td", { class: e.definition && e.definition.verdict === "off" ? "low" : null },
      !e.definition ? "–" : `${e.definition.value === null ? "no usable point" : `${sig(e.definition.value)} ${unit(e)}`}` +
        ` (${e.definition.verdict})`);
    const row = (e) => [
      el("tr", { class: e.status === "ok" ? null : "missing" },
        el("td", {}, e.quantity), el("td", {}, e.where),
        el("td", {}, `${e.published} ${unit(e)}`), storeCell(e), definitionCell(e),
        el("td", {}, compared(e) === null || !e.published ? "–" : `${sig(compared(e) / e.published)}×`)),
      e.explanation ? el("tr", { class: "explanation" }, el("td", { colspan: 6 }, e.explanation)) : null];
    const table = (rows) => el("table", { class: "data published-table" },
      el("thead", {}, el("tr", {}, ["Figure", "Where", "Seed 001", "This store (steady state)",
                                    "seed 001's definition (simcore)", seed001 ? "definition / seed 001" : "store / seed 001"]
        .map((h) => el("th", {}, h)))),
      el("tbody", {}, rows.flatMap(row)));
    const definitionChoice = choice("published-definition", "Compare seed 001 with",
      [["store", "this store (steady-state window)"], ["seed001", "seed 001's own definition"]],
      state.publishedDefinition || "store", (value) => { state.publishedDefinition = value; requestUpdate(); });
    replace("published-body", protocolNote, definitionChoice, chart ? figure(chart) : null,
      matched.length ? table(matched) : noData("None of the selected published figures has a counterpart in this store yet."),
      absent.length ? el("details", {}, el("summary", {}, `${absent.length} more published figure${absent.length === 1 ? "" : "s"} ` +
        "for configurations this store does not hold"), table(absent)) : null,
      el("p", { class: "legend-note" }, `This store's values are from its ${DATA.protocol.published}-protocol rows ` +
        `(the model seed 001 ran; rows older than the protocol column read as such), never the ${DATA.protocol.default} ` +
        "protocol's. Seed 001 read its tables with the reference's own analysis (success over every " +
        "recorded transaction, latency and throughput over the middle 80% of the run, usability on the steady-state " +
        "success) and, for its multi-table VO figures, a convoy that counts commits to the transaction's own table. " +
        "The 'seed 001's definition' column is simcore under those definitions " +
        "(studies/published_repro/published_repro.py); each row's " +
        "note says why the figures differ and how far every candidate definition landed (studies/published_repro/README.md). " +
        "Ranges: the knee's (or the point's) values over seeds."));
  }

  Object.assign(window.Dash.views, { published: (view, study) => renderPublished(study) });
})();
