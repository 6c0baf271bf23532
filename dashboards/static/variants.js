/* The results dashboard page: helpers of the views that set experiments side by side (the knee search and the study
 * views, each drawing the experiments its view entry in DATA.views names). page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    DATA, state, el, replace, sig, currentStudy, index, spreadText, tablesText, choice, figure, noData,
    noneAbove, isLowerBound, usableLines
  } = window.Dash;

  // -- shared by the views that set experiments side by side --------------------------------------------------------

  const studyById = (id) => DATA.studies.find((s) => s.id === id) || null;
  const percentChange = (ratio) => (ratio === null || ratio === undefined ? "–"
    : `${ratio > 0 ? "+" : ratio < 0 ? "−" : "±"}${Math.abs(ratio * 100).toFixed(Math.abs(ratio) < 0.1 ? 1 : 0)}%`);
  const command = (text) => el("code", {}, `${text} --store ${DATA.store.uri}`);

  // Study views show their own experiments whatever the current one is; the
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

  function kneeText(curve) {
    if (!curve) return "not in the store";
    const lines = usableLines(curve, null);
    if (curve.vo_p99_s) lines.push(`VO p99 commit latency at the knee: ${sig(curve.vo_p99_s.mean)} s`);
    return lines.join("\n");
  }

  function usableMark(curve, x, where) {
    const tip = `${where}\n${kneeText(curve)}`;
    if (curve.usable === null) return { x, y: null, cross: true, tip };
    return { x, y: curve.usable, lo: curve.knee_tp ? curve.knee_tp.low : null, hi: curve.knee_tp ? curve.knee_tp.high : null,
             hollow: isLowerBound(curve), tip };
  }

  function usableCell(curve) {
    if (!curve) return el("td", { class: "missing" }, "not run");
    if (curve.usable === null) return el("td", { class: "low", title: kneeText(curve) }, noneAbove());
    return el("td", { class: isLowerBound(curve) ? "bound" : null, title: kneeText(curve), "data-source": curve.usable_source },
              `${isLowerBound(curve) ? "≥ " : ""}${sig(curve.usable)}`,
              curve.usable_source === "searched" ? el("span", { class: "source" }, " searched") : null);
  }

  function changeCell(ratio, moreIsBetter) {
    if (ratio === null || ratio === undefined) return el("td", { class: "missing" }, "–");
    const better = moreIsBetter ? ratio > 0 : ratio < 0;
    return el("td", { class: Math.abs(ratio) < 0.005 ? null : better ? "better" : "worse" }, percentChange(ratio));
  }

  const secondsCell = (spread) => el("td", {}, spread ? `${sig(spread.mean)} s` : "–");

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

  function studyEntries(view) {
    // A study view's curves that the filters keep, with its notes; null once the body says what is missing.
    // The view draws the first experiment its entry names (the study's grid declares the view).
    const experiment = view.experiments[0], bodyId = `${view.id}-body`;
    const comparison = DATA.comparisons[experiment];
    if (!comparisonPreamble(comparison, bodyId, experiment)) return null;
    const entries = comparison.curves.filter(keepEntry);
    const notes = variantsNote(comparison, view.expects);
    if (!entries.length) { replace(bodyId, notes, filteredAway(comparison.experiment)); return null; }
    return { comparison, entries, notes };
  }

  // The note under a study view's charts, as its grid words it; {baseline} is the first (baseline) variant's label.
  const legendNote = (view, comparison) => el("p", { class: "legend-note" },
    view.legend.split("{baseline}").join(comparison.variants[0].label));

  // A variant's short label where the study declares one (for legends and column heads), else its label.
  const shortLabel = (view, variant) => (Object.prototype.hasOwnProperty.call(view.short_labels, variant.id)
    ? view.short_labels[variant.id] : variant.label);

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
      lines.push(`bracket ${sig(entry.bracket.knee_cps)} to ${sig(entry.bracket.failing_cps)} c/s (${entry.width === null ? "?"
        : (entry.width * 100).toFixed(1)}% wide), inter-arrival ${sig(entry.bracket_x.failing_ms)} to ${sig(entry.bracket_x.knee_ms)} ms`);
    }
    if (entry.knee_tp) lines.push(`spread (${DATA.usable_statistic.spread}): ${spreadText(entry.knee_tp, "c/s")}`);
    lines.push(`${entry.sims} simulations (${entry.scales} scales × seeds ${entry.seeds.join(", ")}); ${entry.status.replace(/_/g, " ")}`);
    const bracket = entry.bracket ? [entry.bracket.knee_cps, entry.bracket.failing_cps] : null;
    const [lo, hi] = bracket ? [Math.min(...bracket), Math.max(...bracket)] : [null, null];
    return { x, y: entry.knee, lo, hi, hollow: entry.status === "above_search_range", tip: lines.join("\n") };
  }

  Object.assign(window.Dash, {
    studyEntries, studyById, percentChange, command, selectedProviders, keepEntry, filterText, filteredAway,
    variantCurve, mixLabel, mixHasVo, shortMix, yScaleControl, kneeText, usableMark, usableCell,
    changeCell, secondsCell, variantFrontiers, comparisonPreamble, variantsNote, kneeSearchFor, searchedMark,
    legendNote, shortLabel
  });
})();
