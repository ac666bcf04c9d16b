// The explorer's two drawings, G and B, each in a pane that pans and zooms (d3-zoom: wheel, drag, pinch
// and touch pan), with the toolbar's buttons: zoom in and out, fit, 1:1, show G, B or both.
import { button, make } from "./words.js";

var LEGIBLE = 0.9;  // the least first-view scale: the smallest text, 10 pt argument numbers, at 9 px
var NATURAL = 4 / 3;  // 1:1, Graphviz's points as CSS pixels (1 pt = 4/3 px)

// Builds the panes into `graphs` and the buttons into `tools`. Reads p.W, p.d3, p.spec; p.gNode and
// p.bNode (the drawings' nodes) and p.moved (a pan or zoom has moved boxes into view) when called.
// Gives p.paneG, p.paneB, p.views and p.firstViews, p.reveal, p.show, p.size, p.visible, p.center,
// p.inView.
export function panes(p, tools, graphs) {
  var W = p.W, d3 = p.d3, spec = p.spec;
  var zoomIn = button(W, "zoom_in", "mg-zoom-in"), zoomOut = button(W, "zoom_out", "mg-zoom-out");
  var fit = button(W, "fit", "mg-fit"), one = button(W, "one", "mg-one");
  var showG = button(W, "show_g", "mg-show"), showB = button(W, "show_b", "mg-show");
  var showBoth = button(W, "show_both", "mg-show");
  [zoomIn, zoomOut, fit, one, showG, showB, showBoth].forEach(function (b) { tools.appendChild(b); });
  if (!spec.svg_b) { showB.disabled = true; showBoth.disabled = true; }

  function pane(svg, cls, name) {
    var e = make("div", "mg-pane " + cls);
    e.setAttribute("role", "group");
    e.setAttribute("aria-label", name);
    e.innerHTML = svg;  // Graphviz's drawing, made in Python; labels escaped there
    graphs.appendChild(e);
    return e;
  }
  var paneG = pane(spec.svg_g, "mg-pane-g", W.graph_g);
  var paneB = spec.svg_b ? pane(spec.svg_b, "mg-pane-b", W.graph_b) : null;

  function zoomable(e) {
    var svg = e.querySelector("svg");
    var box = (svg.getAttribute("viewBox") || "0 0 100 100").split(/[\s,]+/).map(Number);
    ["width", "height", "viewBox"].forEach(function (a) { svg.removeAttribute(a); });
    var g = document.createElementNS("http://www.w3.org/2000/svg", "g");
    g.setAttribute("class", "mg-zoom");
    while (svg.firstChild) { g.appendChild(svg.firstChild); }
    svg.appendChild(g);
    var z = { pane: e, svg: svg, g: g, w: box[2], h: box[3], ready: false, k: 1 };
    z.zoom = d3.zoom().scaleExtent([0.02, 8]).on("zoom", function (ev) {
      g.setAttribute("transform", ev.transform.toString());
      z.k = ev.transform.k;
      e.setAttribute("data-scale", ev.transform.k.toFixed(4));
      if (p.ready) { p.moved(); }
    });
    z.sel = d3.select(svg).call(z.zoom).on("dblclick.zoom", null);
    return z;
  }
  var views = [zoomable(paneG)];
  if (paneB) { views.push(zoomable(paneB)); }
  function size(z) { return [z.pane.clientWidth || 1, z.pane.clientHeight || 1]; }
  function setView(z, scale, cx, cy) {  // scale, and the drawing's point (cx, cy) at the pane's centre
    var s = size(z);
    z.sel.call(z.zoom.transform, d3.zoomIdentity.translate(s[0] / 2 - scale * cx, s[1] / 2 - scale * cy).scale(scale));
  }
  function fitScale(z) { var s = size(z); return Math.min(s[0] / z.w, s[1] / z.h); }
  function center(z, g) {  // a node's centre in the drawing's coordinates
    var b = g.getBBox(), mat = z.g.getCTM().inverse().multiply(g.getCTM());
    var pt = z.svg.createSVGPoint();
    pt.x = b.x + b.width / 2; pt.y = b.y + b.height / 2;
    pt = pt.matrixTransform(mat);
    return [pt.x, pt.y];
  }
  function firstView(z, focus) {  // the whole drawing if it is legible so; else legible, at the output
    var f = fitScale(z);
    if (f >= LEGIBLE) { setView(z, Math.min(f, NATURAL), z.w / 2, z.h / 2); } else {
      var c = focus ? center(z, focus) : [z.w / 2, z.h / 2], s = size(z);
      var hx = s[0] / (2 * LEGIBLE), hy = s[1] / (2 * LEGIBLE);  // half the pane, in the drawing's units
      setView(z, LEGIBLE, Math.max(hx, Math.min(c[0], z.w - hx)), Math.max(hy, Math.min(c[1], z.h - hy)));
    }
    z.ready = true;
  }
  function visible(z) { return z.pane.offsetParent !== null; }
  function firstViews() {
    views.forEach(function (z, idx) {
      if (!z.ready && visible(z)) { firstView(z, idx === 0 ? p.gNode[p.m.n - 1] : p.bNode[p.bNode.length - 1]); }
    });
  }
  function reveal(i) {  // keep the current step's node in view when it has scrolled out
    var z = views[0], g = p.gNode[i];
    if (!g || !visible(z)) { return; }
    var r = g.getBoundingClientRect(), q = z.pane.getBoundingClientRect();
    if (r.left >= q.left && r.right <= q.right && r.top >= q.top && r.bottom <= q.bottom) { return; }
    var c = center(z, g);
    setView(z, z.k, c[0], c[1]);
  }
  // Whether a node's box is in its pane's view, from the view's state that p.draw reads once per frame
  // (z.open, z.t, z.size); the box's place in the drawing is measured once.
  function inView(z, g) {
    if (!z.open) { return false; }
    if (!g.mgBox) { var b = g.getBBox(), c = center(z, g); g.mgBox = [c[0] - b.width / 2, c[1] - b.height / 2, c[0] + b.width / 2, c[1] + b.height / 2]; }
    var t = z.t, s = z.size, r = g.mgBox;
    return t.x + t.k * r[2] >= 0 && t.x + t.k * r[0] <= s[0] && t.y + t.k * r[3] >= 0 && t.y + t.k * r[1] <= s[1];
  }
  zoomIn.addEventListener("click", function () { views.forEach(function (z) { if (visible(z)) { z.sel.call(z.zoom.scaleBy, 1.25); } }); });
  zoomOut.addEventListener("click", function () { views.forEach(function (z) { if (visible(z)) { z.sel.call(z.zoom.scaleBy, 0.8); } }); });
  fit.addEventListener("click", function () {
    views.forEach(function (z) { if (visible(z)) { setView(z, fitScale(z), z.w / 2, z.h / 2); } });
  });
  one.addEventListener("click", function () {
    views.forEach(function (z) {
      if (!visible(z)) { return; }
      var s = size(z), t = d3.zoomTransform(z.svg);
      setView(z, NATURAL, (s[0] / 2 - t.x) / t.k, (s[1] / 2 - t.y) / t.k);
    });
  });
  function show(which) {
    graphs.setAttribute("data-show", which);
    [[showG, "g"], [showB, "b"], [showBoth, "both"]].forEach(function (b) {
      b[0].setAttribute("aria-pressed", String(b[1] === which));
    });
    paneG.hidden = which === "b";
    if (paneB) { paneB.hidden = which === "g"; }
    views.forEach(function (z) { z.ready = false; });
    firstViews();
  }
  showG.addEventListener("click", function () { show("g"); });
  showB.addEventListener("click", function () { show("b"); });
  showBoth.addEventListener("click", function () { show("both"); });

  p.paneG = paneG; p.paneB = paneB; p.views = views;
  p.firstViews = firstViews; p.reveal = reveal; p.show = show;
  p.size = size; p.visible = visible; p.center = center; p.inView = inView;
}
