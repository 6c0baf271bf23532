/* Small SVG charts for the results dashboard: line charts with error bars,
 * heatmaps with hatched cells, grouped bars. Written for this page so it
 * needs no chart library and no network; every mark carries a <title> so
 * values read on hover. Text always goes through textContent, never HTML,
 * because labels come from the store. */
"use strict";

const Charts = (() => {
  const SVG_NS = "http://www.w3.org/2000/svg";
  let uniqueId = 0;

  function svgEl(tag, attrs, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value !== null && value !== undefined) node.setAttribute(name, String(value));
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }

  function titled(node, text) {
    if (text) node.appendChild(svgEl("title", {}, text));
    return node;
  }

  // -- number formatting ------------------------------------------------

  function sig(value, digits = 3) {
    if (value === null || value === undefined || Number.isNaN(value)) return "–";
    if (value === 0) return "0";
    const magnitude = Math.abs(value);
    if (magnitude >= 1000) return Math.round(value).toLocaleString("en-US");
    return String(Number(value.toPrecision(digits)));
  }

  function formatValue(value, unit) {
    if (value === null || value === undefined) return "–";
    if (unit === "%") return (value * 100).toFixed(value >= 0.9995 || value < 0.001 ? 0 : 1) + "%";
    if (unit === "ms") return value >= 1000 ? sig(value / 1000) + " s" : sig(value) + " ms";
    if (unit === "c/s") return sig(value) + " c/s";
    return sig(value);
  }

  function shortValue(value, unit) {
    // Fits in a heatmap cell.
    if (value === null || value === undefined) return "";
    if (unit === "%") return (value * 100).toFixed(value >= 0.9995 ? 0 : value >= 0.1 ? 1 : 1);
    if (unit === "ms") return value >= 10000 ? (value / 1000).toFixed(0) + "s"
      : value >= 1000 ? (value / 1000).toFixed(1) + "s" : value.toFixed(0);
    return sig(value, 3);
  }

  // -- scales -------------------------------------------------------------

  function niceStep(span, count) {
    const raw = span / Math.max(1, count);
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    const fraction = raw / power;
    return (fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10) * power;
  }

  function linearScale(min, max, from, to, count = 5) {
    if (!(max > min)) { max = min + 1; }
    const step = niceStep(max - min, count);
    const lo = Math.floor(min / step) * step;
    const hi = Math.ceil(max / step) * step;
    const scale = (value) => from + (value - lo) / (hi - lo) * (to - from);
    scale.ticks = () => {
      const ticks = [];
      for (let tick = lo; tick <= hi + step / 2; tick += step) ticks.push(Number(tick.toPrecision(12)));
      return ticks;
    };
    scale.domain = [lo, hi];
    return scale;
  }

  function logScale(min, max, from, to, snap = true) {
    if (!(min > 0)) min = 1e-3;
    if (!(max > min)) max = min * 10;
    // Snap to powers of ten, unless the caller gives the ticks (e.g. table counts 1..50).
    const lo = snap ? Math.pow(10, Math.floor(Math.log10(min) + 1e-9)) : min;
    const hi = snap ? Math.pow(10, Math.ceil(Math.log10(max) - 1e-9)) : max;
    const span = Math.log10(hi) - Math.log10(lo);
    const scale = (value) => from + (Math.log10(Math.max(value, lo)) - Math.log10(lo)) / span * (to - from);
    scale.ticks = () => {
      const ticks = [];
      const steps = span > 4 ? [1] : span > 2 ? [1, 3] : [1, 2, 5];
      for (let power = lo; power <= hi * 1.0001; power *= 10) {
        for (const m of steps) {
          const tick = Number((power * m).toPrecision(6));
          if (tick >= lo && tick <= hi * 1.0001) ticks.push(tick);
        }
      }
      return ticks;
    };
    scale.domain = [lo, hi];
    return scale;
  }

  function makeScale(kind, values, from, to, options = {}) {
    const finite = values.filter((v) => v !== null && v !== undefined && Number.isFinite(v));
    if (kind === "log") {
      const positive = finite.filter((v) => v > 0);
      return logScale(Math.min(...positive, Infinity) === Infinity ? 1 : Math.min(...positive),
                      Math.max(...positive, -Infinity) === -Infinity ? 10 : Math.max(...positive), from, to,
                      !options.exact);
    }
    let min = finite.length ? Math.min(...finite) : 0;
    let max = finite.length ? Math.max(...finite) : 1;
    if (options.zero !== false) min = Math.min(0, min);
    if (options.max !== undefined) max = Math.max(max, options.max);
    return linearScale(min, max, from, to);
  }

  function tickLabel(value) {
    if (Math.abs(value) >= 1000) return (value / 1000) + "k";
    return String(Number(value.toPrecision(4)));
  }

  // -- colours ------------------------------------------------------------

  const SERIES_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                          "#17becf", "#7f7f7f", "#bcbd22"];
  // One hue per provider, the extended and plain tiers of one store told apart by hue, not shade (azurex blue,
  // azure purple; s3x red, s3 orange).
  const PROVIDER_COLOURS = { s3x: "#d62728", s3: "#ff7f0e", azurex: "#1f77b4", azure: "#9467bd",
                             gcp: "#2ca02c", instant: "#7f7f7f" };

  function seriesColour(key, index) {
    return PROVIDER_COLOURS[key] || SERIES_COLOURS[index % SERIES_COLOURS.length];
  }

  // Perceptual ramps (approximations of viridis and a red-yellow-green).
  const RAMPS = {
    sequential: ["#440154", "#3b528b", "#21918c", "#5ec962", "#fde725"],
    success: ["#a50026", "#f46d43", "#fee08b", "#a6d96a", "#1a9850"],
  };

  function hexToRgb(hex) {
    const n = parseInt(hex.slice(1), 16);
    return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
  }

  function ramp(name, t) {
    const stops = RAMPS[name];
    const clamped = Math.min(1, Math.max(0, t));
    const position = clamped * (stops.length - 1);
    const index = Math.min(stops.length - 2, Math.floor(position));
    const a = hexToRgb(stops[index]);
    const b = hexToRgb(stops[index + 1]);
    const f = position - index;
    const rgb = a.map((channel, i) => Math.round(channel + (b[i] - channel) * f));
    return `rgb(${rgb[0]},${rgb[1]},${rgb[2]})`;
  }

  function isDark(colour) {
    const [r, g, b] = colour.match(/\d+/g).map(Number);
    return 0.299 * r + 0.587 * g + 0.114 * b < 140;
  }

  // -- axes and frame -------------------------------------------------------

  const legendWidth = (entry) => 18 + 6.6 * entry.label.length;

  function legendRows(entries, available) {
    let rows = entries.length ? 1 : 0;
    let used = 0;
    for (const entry of entries) {
      const width = legendWidth(entry) + 8;
      if (used > 0 && used + width > available) { rows += 1; used = 0; }
      used += width;
    }
    return rows;
  }

  // The plot area, below the title and a legend that never covers data.
  function frame(options) {
    const width = options.width || 460;
    const height = options.height || 300;
    const margin = Object.assign({ top: 30, right: 16, bottom: 44, left: 58 }, options.margin || {});
    const entries = options.legend || [];
    const rows = legendRows(entries, width - margin.left - margin.right);
    margin.top += rows * 15;
    const root = svgEl("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "chart",
                                role: "img", "aria-label": options.title || "chart" });
    if (options.title) {
      root.appendChild(svgEl("text", { x: options.titleX !== undefined ? options.titleX : margin.left, y: 18,
                                       class: "chart-title" }, options.title));
    }
    const f = { root, width, height, margin,
                plotLeft: margin.left, plotRight: width - margin.right,
                plotTop: margin.top, plotBottom: height - margin.bottom };
    if (entries.length) drawLegend(f, entries);
    return f;
  }

  function drawLegend(f, entries) {
    const group = svgEl("g", { class: "legend" });
    let x = f.plotLeft;
    let y = 34;
    for (const entry of entries) {
      const width = legendWidth(entry);
      if (x > f.plotLeft && x + width > f.plotRight) { x = f.plotLeft; y += 15; }
      group.appendChild(svgEl("line", { x1: x, x2: x + 12, y1: y - 4, y2: y - 4, stroke: entry.colour,
                                        "stroke-width": 2.5, "stroke-dasharray": entry.dashed ? "4 2" : null }));
      group.appendChild(svgEl("text", { x: x + 15, y, class: "legend-text" }, entry.label));
      x += width + 8;
    }
    f.root.appendChild(group);
  }

  function drawAxes(f, xScale, yScale, options) {
    const group = svgEl("g", { class: "axes" });
    const xTicks = options.xTicks || xScale.ticks();
    for (const tick of xTicks) {
      const x = xScale(tick);
      if (x < f.plotLeft - 0.5 || x > f.plotRight + 0.5) continue;
      group.appendChild(svgEl("line", { x1: x, x2: x, y1: f.plotTop, y2: f.plotBottom, class: "grid" }));
      group.appendChild(svgEl("text", { x, y: f.plotBottom + 15, class: "tick", "text-anchor": "middle" },
                              (options.xTickLabel || tickLabel)(tick)));
    }
    for (const tick of yScale.ticks()) {
      const y = yScale(tick);
      if (y < f.plotTop - 0.5 || y > f.plotBottom + 0.5) continue;
      group.appendChild(svgEl("line", { x1: f.plotLeft, x2: f.plotRight, y1: y, y2: y, class: "grid" }));
      group.appendChild(svgEl("text", { x: f.plotLeft - 6, y: y + 4, class: "tick", "text-anchor": "end" },
                              (options.yTickLabel || tickLabel)(tick)));
    }
    group.appendChild(svgEl("rect", { x: f.plotLeft, y: f.plotTop, width: f.plotRight - f.plotLeft,
                                      height: f.plotBottom - f.plotTop, class: "plot-frame" }));
    if (options.xLabel) {
      group.appendChild(svgEl("text", { x: (f.plotLeft + f.plotRight) / 2, y: f.height - 8, class: "axis-label",
                                        "text-anchor": "middle" }, options.xLabel));
    }
    if (options.yLabel) {
      const y = (f.plotTop + f.plotBottom) / 2;
      group.appendChild(svgEl("text", { x: 14, y, class: "axis-label", "text-anchor": "middle",
                                        transform: `rotate(-90 14 ${y})` }, options.yLabel));
    }
    f.root.appendChild(group);
  }

  // -- line chart -------------------------------------------------------------

  /* options: {title, width, height, xLabel, yLabel, xScale: "log"|"linear", yScale,
   *           xTicks, series: [{label, colour, dashed, points: [{x, y, lo, hi, tip, hollow, cross}]}]} */
  function lineChart(options) {
    const f = frame(Object.assign({}, options, {
      legend: options.series.map((s) => ({ label: s.label, colour: s.colour, dashed: s.dashed })) }));
    const all = options.series.flatMap((s) => s.points);
    const xs = all.map((p) => p.x).concat(options.xTicks || []);
    const ys = all.flatMap((p) => [p.y, p.lo, p.hi]);
    const xScale = makeScale(options.xScale || "linear", xs, f.plotLeft + 10, f.plotRight - 10,
                             { zero: options.xZero, exact: Boolean(options.xTicks) });
    const yScale = makeScale(options.yScale || "linear", ys, f.plotBottom, f.plotTop + 8,
                             { zero: options.yZero, max: options.yMax });
    drawAxes(f, xScale, yScale, options);
    let marks = 0;
    const layer = svgEl("g", { class: "marks" });
    options.series.forEach((series) => {
      // Lines join points in x order, unless the caller's order means more
      // (a load sweep traced through throughput, which can fall past saturation).
      const drawn = series.points.filter((p) => p.y !== null && p.y !== undefined && Number.isFinite(p.y));
      if (options.sortX !== false) drawn.sort((a, b) => a.x - b.x);
      if (drawn.length > 1) {
        layer.appendChild(svgEl("polyline", {
          points: drawn.map((p) => `${xScale(p.x).toFixed(1)},${yScale(p.y).toFixed(1)}`).join(" "),
          fill: "none", stroke: series.colour, "stroke-width": 2,
          "stroke-dasharray": series.dashed ? "5 3" : null, class: "series-line" }));
      }
      for (const p of series.points) {
        const x = xScale(p.x);
        if (p.cross) {  // no value: a cross on the axis, so absence is visible
          const y = f.plotBottom - 6;
          layer.appendChild(titled(svgEl("path", { d: `M${x - 4},${y - 4}L${x + 4},${y + 4}M${x - 4},${y + 4}L${x + 4},${y - 4}`,
                                                   stroke: series.colour, "stroke-width": 2, class: "mark cross" }), p.tip));
          marks += 1;
          continue;
        }
        if (p.y === null || p.y === undefined || !Number.isFinite(p.y)) continue;
        const y = yScale(p.y);
        if (p.lo !== null && p.lo !== undefined && p.hi !== null && p.hi !== undefined && p.hi > p.lo) {
          const top = yScale(p.hi);
          const bottom = yScale(p.lo);
          layer.appendChild(svgEl("path", { d: `M${x},${top}L${x},${bottom}M${x - 3},${top}L${x + 3},${top}M${x - 3},${bottom}L${x + 3},${bottom}`,
                                            stroke: series.colour, "stroke-width": 1.2, class: "error-bar" }));
        }
        layer.appendChild(titled(svgEl("circle", { cx: x, cy: y, r: 4, class: "mark" + (p.hollow ? " hollow" : ""),
                                                   stroke: series.colour, fill: p.hollow ? "white" : series.colour,
                                                   "stroke-width": 2 }), p.tip));
        marks += 1;
      }
    });
    f.root.appendChild(layer);
    f.root.setAttribute("data-marks", String(marks));
    return f.root;
  }

  // -- heatmap -----------------------------------------------------------------

  /* options: {title, xValues, yValues, xLabel, yLabel, unit, ramp: "success"|"sequential", log,
   *           cell(x, y) -> {value, tip, hatched} | null, min, max} */
  function heatmap(options) {
    const cellWidth = options.cellWidth || 44;
    const cellHeight = options.cellHeight || 24;
    const margin = { top: 30, right: 70, bottom: 44, left: 58 };
    // Wide enough for the title: heatmaps of a short grid would clip it.
    const width = Math.max(margin.left + margin.right + cellWidth * options.xValues.length,
                           Math.ceil(7.8 * (options.title || "").length) + 16);
    const height = margin.top + margin.bottom + cellHeight * options.yValues.length;
    const f = frame({ title: options.title, titleX: 8, width, height, margin });
    const patternId = `hatch-${++uniqueId}`;
    f.root.appendChild(svgEl("defs", {},
      svgEl("pattern", { id: patternId, width: 6, height: 6, patternUnits: "userSpaceOnUse",
                         patternTransform: "rotate(45)" },
            svgEl("line", { x1: 0, y1: 0, x2: 0, y2: 6, stroke: "rgba(0,0,0,0.55)", "stroke-width": 1.6 }))));
    const cells = options.xValues.map((x) => options.yValues.map((y) => options.cell(x, y)));
    const values = cells.flat().filter((c) => c && c.value !== null && c.value !== undefined).map((c) => c.value);
    let min = options.min !== undefined ? options.min : Math.min(...values);
    let max = options.max !== undefined ? options.max : Math.max(...values);
    const useLog = options.log && min > 0;
    const position = (value) => {
      if (!(max > min)) return 0.5;
      return useLog ? (Math.log(value) - Math.log(min)) / (Math.log(max) - Math.log(min)) : (value - min) / (max - min);
    };
    const grid = svgEl("g", { class: "cells" });
    let drawn = 0;
    options.xValues.forEach((x, i) => {
      options.yValues.forEach((y, j) => {
        const cell = cells[i][j];
        const left = margin.left + i * cellWidth;
        const top = margin.top + (options.yValues.length - 1 - j) * cellHeight;
        if (!cell || cell.value === null || cell.value === undefined) {
          grid.appendChild(titled(svgEl("rect", { x: left, y: top, width: cellWidth, height: cellHeight,
                                                  class: "cell empty" }), cell && cell.tip ? cell.tip : "no data"));
          return;
        }
        const colour = ramp(options.ramp || "sequential", position(cell.value));
        const group = svgEl("g", { class: "cell" + (cell.hatched ? " hatched" : ""), "data-value": cell.value });
        group.appendChild(svgEl("rect", { x: left, y: top, width: cellWidth, height: cellHeight, fill: colour }));
        if (cell.hatched) {
          group.appendChild(svgEl("rect", { x: left, y: top, width: cellWidth, height: cellHeight,
                                            fill: `url(#${patternId})`, class: "hatch" }));
        }
        group.appendChild(svgEl("text", { x: left + cellWidth / 2, y: top + cellHeight / 2 + 4,
                                          "text-anchor": "middle", class: "cell-text" + (cell.hatched ? " on-hatch" : ""),
                                          fill: isDark(colour) && !cell.hatched ? "white" : "black" },
                                shortValue(cell.value, options.unit)));
        titled(group, cell.tip);
        grid.appendChild(group);
        drawn += 1;
      });
    });
    f.root.appendChild(grid);
    const axes = svgEl("g", { class: "axes" });
    options.xValues.forEach((x, i) => axes.appendChild(svgEl("text", {
      x: margin.left + (i + 0.5) * cellWidth, y: height - margin.bottom + 14, class: "tick", "text-anchor": "middle" },
      tickLabel(x))));
    options.yValues.forEach((y, j) => axes.appendChild(svgEl("text", {
      x: margin.left - 6, y: margin.top + (options.yValues.length - 1 - j + 0.5) * cellHeight + 4, class: "tick",
      "text-anchor": "end" }, String(y))));
    axes.appendChild(svgEl("text", { x: margin.left + cellWidth * options.xValues.length / 2, y: height - 8,
                                     class: "axis-label", "text-anchor": "middle" }, options.xLabel || ""));
    const midY = margin.top + cellHeight * options.yValues.length / 2;
    axes.appendChild(svgEl("text", { x: 14, y: midY, class: "axis-label", "text-anchor": "middle",
                                     transform: `rotate(-90 14 ${midY})` }, options.yLabel || ""));
    // Colour bar.
    const barLeft = width - margin.right + 12;
    const barHeight = cellHeight * options.yValues.length;
    for (let k = 0; k < 20; k += 1) {
      axes.appendChild(svgEl("rect", { x: barLeft, y: margin.top + barHeight * (1 - (k + 1) / 20), width: 12,
                                       height: barHeight / 20 + 0.5, fill: ramp(options.ramp || "sequential", (k + 0.5) / 20) }));
    }
    if (values.length) {
      axes.appendChild(svgEl("text", { x: barLeft + 15, y: margin.top + 8, class: "tick" }, shortValue(max, options.unit)));
      axes.appendChild(svgEl("text", { x: barLeft + 15, y: margin.top + barHeight, class: "tick" }, shortValue(min, options.unit)));
    }
    f.root.appendChild(axes);
    f.root.setAttribute("data-marks", String(drawn));
    return f.root;
  }

  // -- grouped bars --------------------------------------------------------------

  /* options: {title, groups: [label], bars: [{label, colour, values: [{y, lo, hi, tip}]}], yLabel, yTickLabel}
   * Bars grow from zero, so negative values (a decrease) hang below the zero line. */
  function barChart(options) {
    const f = frame(Object.assign({ margin: { bottom: 70 } }, options, {
      legend: options.bars.map((bar) => ({ label: bar.label, colour: bar.colour })) }));
    const ys = options.bars.flatMap((bar) => bar.values.flatMap((v) => (v ? [v.y, v.hi, v.lo] : [])));
    const yScale = makeScale("linear", ys, f.plotBottom, f.plotTop + 14, {});
    const groupWidth = (f.plotRight - f.plotLeft) / Math.max(1, options.groups.length);
    const barWidth = Math.min(22, (groupWidth - 8) / Math.max(1, options.bars.length));
    drawAxes(f, { ticks: () => [] }, yScale, { yLabel: options.yLabel, yTickLabel: options.yTickLabel });
    const zero = yScale(0);
    if (yScale.domain[0] < 0) {
      f.root.appendChild(svgEl("line", { x1: f.plotLeft, x2: f.plotRight, y1: zero, y2: zero, class: "zero-line" }));
    }
    const layer = svgEl("g", { class: "marks" });
    let marks = 0;
    options.groups.forEach((label, g) => {
      const centre = f.plotLeft + (g + 0.5) * groupWidth;
      const y = f.plotBottom + 12;
      layer.appendChild(svgEl("text", { x: centre, y, class: "tick", "text-anchor": "end",
                                        transform: `rotate(-35 ${centre} ${y})` }, label));
      options.bars.forEach((bar, b) => {
        const value = bar.values[g];
        const left = centre - (options.bars.length * barWidth) / 2 + b * barWidth;
        if (!value || value.y === null || value.y === undefined) return;
        const top = yScale(Math.max(0, value.y));
        const bottom = yScale(Math.min(0, value.y));
        layer.appendChild(titled(svgEl("rect", { x: left, y: top, width: barWidth - 2, height: Math.max(0, bottom - top),
                                                 fill: bar.colour, class: "mark bar" + (value.y < 0 ? " negative" : ""),
                                                 "data-value": value.y }), value.tip));
        marks += 1;
        if (value.lo !== null && value.lo !== undefined && value.hi > value.lo) {
          const x = left + (barWidth - 2) / 2;
          layer.appendChild(svgEl("path", { d: `M${x},${yScale(value.hi)}L${x},${yScale(value.lo)}`,
                                            stroke: "black", "stroke-width": 1.2, class: "error-bar" }));
        }
      });
    });
    f.root.appendChild(layer);
    f.root.setAttribute("data-marks", String(marks));
    return f.root;
  }

  return { lineChart, heatmap, barChart, seriesColour, formatValue, sig };
})();
