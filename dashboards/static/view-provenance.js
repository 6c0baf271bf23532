/* The results dashboard page: view 12. provenance. page.js says how the scripts fit together. */
"use strict";

(() => {
  const {
    DATA, el, replace, sig, index, tablesText
  } = window.Dash;

  // -- 12. provenance -------------------------------------------------------------------------------------------

  const shortTime = (iso) => (iso ? iso.replace("T", " ").replace("+00:00", " UTC") : "?");

  function renderProvenance(study) {
    const rows = DATA.studies.map((s) => {
      const p = s.provenance;
      return el("tr", { class: s.id === study.id ? "current" : null },
        el("td", {}, s.label), el("td", {}, String(p.rows)), el("td", {}, s.searched ? `${p.points} (searched)` : `${p.points} of ${p.grid_points}`),
        el("td", {}, p.seeds.join(", ")),
        el("td", {}, p.seeds_per_point ? `${p.seeds_per_point.min}–${p.seeds_per_point.max}` : "–"),
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

  Object.assign(window.Dash.views, { provenance: (view, study) => renderProvenance(study) });
})();
