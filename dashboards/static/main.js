/* The results dashboard page: main: draws every view and starts the page. page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    DATA, state, el, replace, currentStudy, readQuery, writeQuery, renderFilters, renderHeader, renderNotices,
    renderFrontier, renderHeatmaps, renderCurves, renderProviderTables, renderSeedSpread, renderPublished,
    renderZipf, renderKnee, renderThrottle, renderRetry, renderAppend, renderProvenance
  } = window.Dash;

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

  Object.assign(window.Dash, { update });

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
