/* The results dashboard page: main: draws every view the payload lists (DATA.views, in page order, each with the
 * function its kind's script registered) and starts the page. page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    DATA, state, el, replace, currentStudy, readQuery, writeQuery, renderFilters, renderHeader, renderNotices, views
  } = window.Dash;

  // -- main ------------------------------------------------------------------------------------------------------

  function update() {
    const started = performance.now();
    renderFilters();
    renderNotices();
    const study = currentStudy();
    if (study) {
      writeQuery();
      for (const view of DATA.views) {
        const draw = views[view.kind];
        if (!draw) throw new Error(`no script draws the view kind "${view.kind}" (dashboards/registry.py lists them)`);
        draw(view, study);
      }
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
