// Draws a plot of micrograph's, a viz.charts.Chart (its to_dict data, made by micrograph's Python in this
// page), with Observable Plot: the chart that viz.plots.figure draws with matplotlib in Python. Every
// number, text, colour and scale comes from the chart; this file only maps its marks onto Plot's.
import { Plot } from "./vendor.js";

const PX = 96; // CSS pixels per inch: a chart's size is given in inches
const DASH = { solid: undefined, dashed: "6,4", dotted: "1.5,3", none: undefined };
const DIVERGING = { type: "diverging", scheme: "RdBu", reverse: true }; // -limit blue, +limit red (RdBu_r)
const STYLE = { fontSize: "12px", background: "white", color: "black" };
const SVG = "http://www.w3.org/2000/svg";
const NARROW = 560; // CSS pixels: below this width, panels are stacked

const points = (x, y) => x.map((v, i) => ({ x: v, y: y[i] }));
const step = (v) => (v.length > 1 ? v[1] - v[0] : 1);

// A grid's samples are the centres of its pixels: the raster spans half a step beyond them.
function grid(m) {
  const dx = step(m.x), dy = step(m.y);
  return {
    width: m.x.length, height: m.y.length,
    x1: m.x[0] - dx / 2, x2: m.x[m.x.length - 1] + dx / 2,
    y1: m.y[0] - dy / 2, y2: m.y[m.y.length - 1] + dy / 2,
  };
}

const MARKS = {
  line(m) {
    const data = points(m.x, m.y);
    const out = [];
    if (m.dash !== "none") {
      out.push(Plot.line(data, { x: "x", y: "y", stroke: m.color, strokeWidth: 1.5, strokeDasharray: DASH[m.dash] }));
    }
    if (m.marker) {
      out.push(Plot.dot(data, { x: "x", y: "y", symbol: m.marker, r: 3, stroke: m.color,
                                fill: m.hollow ? "white" : m.color, title: (d) => `${d.x}: ${d.y}` }));
    }
    return out;
  },
  rule: (m) => [Plot.ruleY([m.y], { stroke: m.color, strokeDasharray: DASH.dotted })],
  points: (m) => [Plot.dot(points(m.x, m.y), { x: "x", y: "y", r: 3.5, fill: m.color, stroke: "black", strokeWidth: 0.5 })],
  regions: (m) => [Plot.raster(m.classes.flat(), { ...grid(m), fill: (c) => m.colors[c], fillOpacity: m.opacity,
                                                     imageRendering: "pixelated" })],
  contour: (m) => [Plot.contour(m.values.flat(), { ...grid(m), value: (v) => v, thresholds: m.levels,
                                                     stroke: m.color, strokeWidth: 1.2, fill: "none" })],
  cells(m) {
    const data = m.values.flatMap((row, i) => row.map((v, j) => ({ i, j, v, text: m.texts[i][j], ink: m.inks[i][j] })));
    return [
      Plot.cell(data, { x: "j", y: "i", fill: "v", inset: 0 }),
      Plot.text(data, { x: "j", y: "i", text: "text", fill: "ink", fontSize: 13 }),
    ];
  },
};

// The scales of a panel of cells: columns and rows by index, ticks from the chart's labels.
function cellScales(m) {
  const columns = m.values[0].map((_, j) => j), rows = m.values.map((_, i) => i);
  const band = (domain, labels) => (labels === null
    ? { domain, padding: 0, axis: null }
    : { domain, padding: 0, tickFormat: (k) => labels[k], tickSize: 0, label: null });
  return {
    x: band(columns, m.x_labels),
    y: band(rows, m.y_labels),
    color: { ...DIVERGING, domain: [-m.limit, m.limit], legend: m.colorbar, label: null },
  };
}

function integerTicks(panel) {
  const xs = panel.marks.flatMap((m) => m.x || []);
  const lo = Math.ceil(Math.min(...xs)), hi = Math.floor(Math.max(...xs));
  const by = Math.max(1, Math.ceil((hi - lo) / 10));
  const ticks = [];
  for (let t = lo; t <= hi; t += by) ticks.push(t);
  return ticks;
}

function scales(panel) {
  const cells = panel.marks.find((m) => m.kind === "cells");
  if (cells) return cellScales(cells);
  const axis = { grid: panel.grid, labelAnchor: "center", labelArrow: "none" };
  const x = { ...axis, label: panel.x_label || null };
  if (panel.x_integers) x.ticks = integerTicks(panel);
  const y = { ...axis, label: panel.y_label || null, type: panel.y_log ? "log" : "linear" };
  if (panel.y_range) y.domain = panel.y_range;
  return { x, y, color: { type: "identity" }, inset: 6 };
}

// A legend entry's sample: the mark's line (with its dashes) and marker, or its swatch.
function sample(m) {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("width", "30");
  svg.setAttribute("height", "12");
  svg.setAttribute("aria-hidden", "true");
  const add = (name, attrs) => {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attrs)) if (v !== undefined) e.setAttribute(k, v);
    svg.append(e);
  };
  if (m.kind === "points") {
    add("circle", { cx: 15, cy: 6, r: 4, fill: m.color, stroke: "black", "stroke-width": 0.5 });
  } else {
    if (m.dash !== "none") {
      add("line", { x1: 1, x2: 29, y1: 6, y2: 6, stroke: m.color, "stroke-width": 1.5,
                    "stroke-dasharray": m.kind === "rule" ? DASH.dotted : DASH[m.dash] });
    }
    if (m.marker === "circle") add("circle", { cx: 15, cy: 6, r: 3, fill: m.hollow ? "white" : m.color, stroke: m.color });
    if (m.marker === "square") add("rect", { x: 12, y: 3, width: 6, height: 6, fill: m.hollow ? "white" : m.color, stroke: m.color });
  }
  return svg;
}

function legend(panel) {
  const list = document.createElement("ul");
  list.className = "chart-legend";
  const lines = panel.marks.filter((m) => m.kind === "contour"); // last, as matplotlib lists them
  for (const m of [...panel.marks.filter((m) => m.kind !== "contour"), ...lines]) {
    if (!m.label) continue;
    const item = document.createElement("li");
    item.append(sample(m), document.createTextNode(m.label));
    list.append(item);
  }
  return list.children.length ? list : null;
}

/**
 * Draw `chart` (viz.charts.Chart.to_dict's data) into `container`, replacing what it held: the chart's
 * title, then its panels side by side (wrapping on a narrow screen), each a Plot figure with its legend.
 */
export function drawChart(chart, container) {
  container.replaceChildren();
  const figure = document.createElement("figure");
  figure.className = "chart";
  figure.dataset.chart = chart.name;
  if (chart.title) {
    const title = document.createElement("figcaption");
    title.className = "chart-title";
    title.textContent = chart.title;
    figure.append(title);
  }
  const row = document.createElement("div");
  row.className = "chart-panels";
  figure.append(row);
  container.append(figure);
  // Side by side at the chart's size or the container's width; on a narrow screen (a phone), one panel
  // under the other, each as wide as the screen in proportion to its weight.
  const available = Math.max(240, container.clientWidth || chart.width * PX);
  const total = Math.min(chart.width * PX, available);
  const weights = chart.panels.reduce((s, p) => s + p.weight, 0);
  const widest = Math.max(...chart.panels.map((p) => p.weight));
  const narrow = available < NARROW;
  for (const panel of chart.panels) {
    const cell = document.createElement("div");
    cell.className = "chart-panel";
    const share = narrow ? (available * panel.weight) / widest : (total * panel.weight) / weights;
    const width = Math.max(120, Math.floor(share) - 8);
    const plot = Plot.plot({
      title: panel.title,
      width,
      height: Math.round(chart.height * PX * 0.8),
      marginLeft: panel.y_label ? 70 : 40,
      marginBottom: panel.x_label ? 44 : 30,
      style: STYLE,
      ariaLabel: panel.title,
      ...scales(panel),
      marks: panel.marks.flatMap((m) => MARKS[m.kind](m)),
    });
    if (panel.small_title) plot.classList.add("small-title");
    cell.append(plot);
    const entries = panel.legend ? legend(panel) : null;
    if (entries) cell.append(entries);
    row.append(cell);
  }
}
