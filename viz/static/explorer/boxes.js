// The boxes of the two drawings: each node of G shows its value and grad_table entry, each node of B its
// value, at the current inputs and step. Only the boxes in view are rewritten (SVG text costs style and
// layout per element: at 400 nodes, rewriting every box made a move miss its frame; docs/performance.md has
// the figures); a box that comes into view is brought up to date then. Hovering a node highlights its consumers in both drawings.
import { fmt } from "./words.js";

// Reads p.m, p.W, p.spec, p.paneG, p.paneB, p.views, p.inView, p.size, p.visible, p.outs (the dz/dw
// outputs), p.select (a click on a node of G), p.focused and p.label (the focused node's accessible name,
// focus.js). Gives p.gNode, p.bNode, p.draw and p.moved.
export function boxes(p) {
  var m = p.m, W = p.W, spec = p.spec, n = m.n, nodes = m.nodes, D = m.D;
  var gNode = [], dataText = [], gradText = [], bNode = [], bText = [];
  var boxData = W.box_data.split("{value}"), boxGrad = W.box_grad.split("{value}");
  p.paneG.querySelectorAll("g[data-node]").forEach(function (g) {
    var i = parseInt(g.getAttribute("data-node"), 10);
    gNode[i] = g;
    dataText[i] = g.querySelector("text.mg-data");
    gradText[i] = g.querySelector("text.mg-grad");
    g.addEventListener("click", function () { p.select(i); });
    g.addEventListener("mouseenter", function () { hover(g, nodes[i].consumers, nodes[i].b_consumers, true); });
    g.addEventListener("mouseleave", function () { hover(g, nodes[i].consumers, nodes[i].b_consumers, false); });
  });
  if (p.paneB) {
    p.paneB.querySelectorAll("g[data-bnode]").forEach(function (g) {
      var b = parseInt(g.getAttribute("data-bnode"), 10);
      bNode[b] = g; bText[b] = g.querySelector("text.mg-data");
      g.addEventListener("mouseenter", function () { hover(g, [], spec.b[b].consumers, true); });
      g.addEventListener("mouseleave", function () { hover(g, [], spec.b[b].consumers, false); });
    });
  }
  // A copy of a node, drawn beside a far consumer (viz/explore_layout.py), is that node: a click and hovering
  // do what they do on the node, and the copy is lit with it.
  function copies(pane, attr, node, click, hovered) {
    if (!pane) { return; }
    pane.querySelectorAll("g[" + attr + "]").forEach(function (g) {
      var i = parseInt(g.getAttribute(attr), 10);
      if (click) { g.addEventListener("click", function () { click(i); }); }
      g.addEventListener("mouseenter", function () { g.classList.add("mg-hover"); hovered(node[i], i, true); });
      g.addEventListener("mouseleave", function () { g.classList.remove("mg-hover"); hovered(node[i], i, false); });
    });
  }
  copies(p.paneG, "data-copy", gNode, function (i) { p.select(i); }, function (g, i, on) { hover(g, nodes[i].consumers, nodes[i].b_consumers, on); });
  copies(p.paneB, "data-bcopy", bNode, null, function (g, b, on) { hover(g, [], spec.b[b].consumers, on); });
  // The node under the pointer and its consumers (in G and in B) highlighted.
  function hover(g, inG, inB, on) {
    g.classList.toggle("mg-hover", on);
    inG.forEach(function (c) { if (gNode[c]) { gNode[c].classList.toggle("mg-consumer", on); } });
    inB.forEach(function (c) { if (bNode[c]) { bNode[c].classList.toggle("mg-consumer", on); } });
  }

  function setText(t, s) { if (t && t.textContent !== s) { t.textContent = s; } }
  function drawG(i, f) {
    var g = gNode[i], bad = i === m.state.forward;
    setText(dataText[i], bad ? W.box_outside : boxData[0] + (m.known(i) ? fmt(m.u[i], D) : W.box_unknown) + boxData[1]);
    setText(gradText[i], boxGrad[0] + (m.gradShown(i) ? fmt(m.gradOf(i), D) : m.predict && m.ok() ? W.box_unknown : W.box_empty) + boxGrad[1]);
    var cls = (bad || (m.state.backward !== null && m.state.backward.i === i) ? "o" : "") + (f.node === i ? "c" : "") + (m.selected === i ? "s" : "");
    if (g.mgCls !== cls) {
      g.mgCls = cls;
      g.classList.toggle("mg-outside", cls.indexOf("o") >= 0);
      g.classList.toggle("mg-current", cls.indexOf("c") >= 0);
      g.classList.toggle("mg-selected", cls.indexOf("s") >= 0);
    }
    if (g === p.focused) { p.label(g); }
  }
  function draw() {
    var f = m.frames[m.k];
    p.views.forEach(function (z) { z.open = p.visible(z); z.t = p.d3.zoomTransform(z.svg); z.size = p.size(z); });
    for (var i = 0; i < n; i++) {
      var g = gNode[i];
      if (!g) { continue; }
      if (p.inView(p.views[0], g) || i === f.node || i === m.selected || g.mgCls) { drawG(i, f); g.mgStale = false; } else { g.mgStale = true; }
    }
    var open = m.ok() && (!m.predict || m.predict.next < 0);  // B's values are grad_table entries
    var vb = p.views[1];
    bText.forEach(function (t, b) {
      if (vb && p.inView(vb, bNode[b])) {
        setText(t, boxData[0] + (open ? fmt(m.u[spec.b[b].slot], D) : W.box_unknown) + boxData[1]);
        bNode[b].mgStale = false;
        if (bNode[b] === p.focused) { p.label(bNode[b]); }
      } else { bNode[b].mgStale = true; }
    });
    spec.wrt.forEach(function (w, idx) { p.outs[idx].textContent = open || m.gradShown(w.j) ? fmt(m.gradOf(w.j), D) : W.box_empty; });
  }
  var redraw = 0;
  function moved() {  // after a pan or zoom: the boxes that came into view are brought up to date
    if (!redraw) { redraw = requestAnimationFrame(function () { redraw = 0; draw(); }); }
  }
  p.gNode = gNode; p.bNode = bNode; p.draw = draw; p.moved = moved;
}
