// The explorer's two drawings, G and B, each in a pane that pans and zooms (pan.js: drag, Ctrl+wheel,
// two-finger pan and pinch; the wheel and a one-finger swipe scroll the page), with the toolbar's buttons:
// zoom in and out, fit, 1:1, show G, B or both.
import { LEGIBLE_PX, NATURAL, fitScale, setCorner, setView, size, zoomable } from "./pan.js";
import { button, make } from "./words.js";

var LEGIBLE = LEGIBLE_PX / 10;  // the least first-view scale: the smallest text, 10 pt argument numbers, at 9 px
var NARROW = "(max-width: 760px)";  // a phone, as micrograph.css's explorer section says

// A pane holding a drawing (Graphviz's SVG, made in Python, its labels escaped there), added to `into`: a
// group named `name` for a screen reader, of class `cls` (mg-pane-g or mg-pane-b).
export function drawingPane(into, svg, cls, name) {
  var e = make("div", "mg-pane " + cls);
  e.setAttribute("role", "group");
  e.setAttribute("aria-label", name);
  e.innerHTML = svg;
  into.appendChild(e);
  return e;
}

// Builds the panes into `graphs` and the buttons into `tools`. Reads p.W, p.d3, p.spec; p.gNode and
// p.bNode (the drawings' nodes) and p.moved (a pan or zoom has moved boxes into view) when called.
// Gives p.paneG, p.paneB, p.views and p.firstViews, p.reveal, p.show, p.size, p.visible, p.center,
// p.inView, and p.zoomPane and p.firstView, with which groups.js opens a group's drawings as G's and B's.
export function panes(p, tools, graphs) {
  var W = p.W, d3 = p.d3, spec = p.spec;
  var zoomIn = button(W, "zoom_in", "mg-zoom-in"), zoomOut = button(W, "zoom_out", "mg-zoom-out");
  var fit = button(W, "fit", "mg-fit"), one = button(W, "one", "mg-one");
  var showG = button(W, "show_g", "mg-show"), showB = button(W, "show_b", "mg-show");
  var showBoth = button(W, "show_both", "mg-show");
  [zoomIn, zoomOut, fit, one, showG, showB, showBoth].forEach(function (b) { tools.appendChild(b); });
  if (!spec.svg_b) { showB.disabled = true; showBoth.disabled = true; }

  var paneG = drawingPane(graphs, spec.svg_g, "mg-pane-g", W.graph_g);
  var paneB = spec.svg_b ? drawingPane(graphs, spec.svg_b, "mg-pane-b", W.graph_b) : null;

  // The drawing in pane `e` made to pan and zoom (pan.js); `moved` is called after each move, or null.
  function zoomPane(e, moved) {
    var svg = e.querySelector("svg");
    var box = (svg.getAttribute("viewBox") || "0 0 100 100").split(/[\s,]+/).map(Number);
    return zoomable(d3, e, svg, box[2], box[3], 0.02, 8, moved);
  }
  function boxesMoved() { if (p.ready) { p.moved(); } }  // the numbers of the boxes brought into view
  var views = [zoomPane(paneG, boxesMoved)];
  if (paneB) { views.push(zoomPane(paneB, boxesMoved)); }
  function center(z, g) {  // a node's centre in the drawing's coordinates
    var b = g.getBBox(), mat = z.g.getCTM().inverse().multiply(g.getCTM());
    var pt = z.svg.createSVGPoint();
    pt.x = b.x + b.width / 2; pt.y = b.y + b.height / 2;
    pt = pt.matrixTransform(mat);
    return [pt.x, pt.y];
  }
  // The inputs in the drawing: the box [left, top, right, bottom] around G's variables (the leaves with a
  // slider; all its leaves u(1)..u(n_i) if it has none), and the first one's, u(1)'s where it is one.
  function inputs(z) {
    var all = [Infinity, Infinity, -Infinity, -Infinity], first = null, leaves = p.spec.inputs;
    var some = leaves.some(function (inp) { return inp.variable; });
    for (var j = 0; j < leaves.length; j++) {
      var g = p.gNode[j];
      if (!g || (some && !leaves[j].variable)) { continue; }
      var b = g.getBBox(), c = center(z, g);
      var box = [c[0] - b.width / 2, c[1] - b.height / 2, c[0] + b.width / 2, c[1] + b.height / 2];
      all = [Math.min(all[0], box[0]), Math.min(all[1], box[1]), Math.max(all[2], box[2]), Math.max(all[3], box[3])];
      first = first || box;
    }
    return first ? { all: all, first: first } : { all: [0, 0, 0, 0], first: [0, 0, 0, 0] };
  }
  // The first view: the whole drawing if it is legible so. Else, at a legible scale: on a phone, G from its
  // inputs (the whole width if it is legible so): all of them where the pane holds them (from their left,
  // centred up and down), else from the first, u(1), at the top left; on a wider screen, and for B, the
  // output `focus` (G's u(n), B's last node; a group's last scalar and last node of B in groups.js).
  function firstView(z, focus, fromInputs) {
    var f = fitScale(z), s = size(z), margin = 8;
    if (f >= LEGIBLE) { setView(d3, z, Math.min(f, NATURAL), z.w / 2, z.h / 2); } else if (fromInputs) {
      var k = Math.max(LEGIBLE, Math.min(s[0] / z.w, NATURAL)), at = inputs(z), m = margin / k;
      var wide = (at.all[2] - at.all[0]) * k + 2 * margin > s[0], tall = (at.all[3] - at.all[1]) * k + 2 * margin > s[1];
      var x = (wide ? at.first[0] : at.all[0]) - m;
      var y = tall ? at.first[1] - m : (at.all[1] + at.all[3]) / 2 - s[1] / (2 * k);
      setCorner(d3, z, k, x, y);
    } else {
      var c = focus ? center(z, focus) : [z.w / 2, z.h / 2];
      setCorner(d3, z, LEGIBLE, c[0] - s[0] / (2 * LEGIBLE), c[1] - s[1] / (2 * LEGIBLE));
    }
    z.ready = true;
  }
  function visible(z) { return z.pane.offsetParent !== null; }
  function firstViews() {
    var narrow = window.matchMedia(NARROW).matches;
    views.forEach(function (z, idx) {
      if (!z.ready && visible(z)) {
        firstView(z, idx === 0 ? p.gNode[p.m.n - 1] : p.bNode[p.bNode.length - 1], idx === 0 && narrow);
      }
    });
  }
  function reveal(i, z, g) {  // keep a node (the current step's, or the focused one) in view when it is out
    z = z || views[0]; g = g || p.gNode[i];
    if (!g || !visible(z)) { return; }
    var r = g.getBoundingClientRect(), q = z.pane.getBoundingClientRect();
    if (r.left >= q.left && r.right <= q.right && r.top >= q.top && r.bottom <= q.bottom) { return; }
    var c = center(z, g);
    setView(d3, z, z.k, c[0], c[1]);
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
    views.forEach(function (z) { if (visible(z)) { setView(d3, z, fitScale(z), z.w / 2, z.h / 2); } });
  });
  one.addEventListener("click", function () {
    views.forEach(function (z) {
      if (!visible(z)) { return; }
      var s = size(z), t = d3.zoomTransform(z.svg);
      setView(d3, z, NATURAL, (s[0] / 2 - t.x) / t.k, (s[1] / 2 - t.y) / t.k);
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
  p.zoomPane = zoomPane; p.firstView = firstView;
}
