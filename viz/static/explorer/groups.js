// An MLP by layers or by neurons (viz.explore_groups): the boxes of the groups in the drawings of G and B,
// their rows of numbers, a button per level, and a group's scalars opened below the drawings when the group
// is clicked, or focused (Tab) and Enter or Space pressed; Escape or the close button shuts them. Every
// number is a slot of the program, as boxes.js writes the nodes' (a row names the nodes it shows).
import { panKeys } from "./pan.js";
import { drawingPane } from "./panes.js";
import { button, fmt, make, say } from "./words.js";

// Reads p.m, p.W, p.spec, p.el, p.paneG, p.paneB, p.d3, p.draw, p.select. Wraps p.draw (the groups' boxes and
// the open group's scalars are written after the nodes'). `restart(spec)` mounts the explorer again on the
// spec of another level; `keys` is where the page listens for keys.
export function grouping(p, tools, main, keys, restart) {
  var m = p.m, W = p.W, spec = p.spec, D = m.D, mlp = spec.mlp, level = mlp.levels[mlp.level];
  var groups = level.groups, bGroups = level.b_groups;
  var boxData = W.box_data.split("{value}"), boxGrad = W.box_grad.split("{value}");

  Object.keys(mlp.levels).forEach(function (name) {  // the levels, one button each
    var b = button(W, "level_" + name, "mg-level");
    b.setAttribute("data-level", name);
    b.setAttribute("aria-pressed", String(name === mlp.level));
    b.addEventListener("click", function () {
      if (name === mlp.level) { return; }
      var next = Object.assign({}, spec, { svg_g: mlp.levels[name].svg_g, svg_b: mlp.levels[name].svg_b,
        mlp: Object.assign({}, mlp, { level: name }),
        inputs: spec.inputs.map(function (inp, j) { return Object.assign({}, inp, { value: m.x[j] }); }) });
      keys.removeEventListener("keydown", onKey);
      restart(next);
    });
    tools.appendChild(b);
  });
  tools.appendChild(make("span", "mg-help", W.group_hint));

  function rowsOf(g) {  // the texts of a group box's rows of numbers, in order
    var out = [];
    g.querySelectorAll("text.mg-row").forEach(function (t) { out[+t.getAttribute("data-row")] = t; });
    return out;
  }
  var gBox = [], gRows = [], bBox = [], bRows = [];
  p.paneG.querySelectorAll("g[data-group]").forEach(function (g) {
    var k = +g.getAttribute("data-group");
    gBox[k] = g; gRows[k] = rowsOf(g);
    g.addEventListener("click", function () { open(k); });
    g.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") { open(k); e.preventDefault(); e.stopPropagation(); }
    });
  });
  if (p.paneB) {
    p.paneB.querySelectorAll("g[data-bgroup]").forEach(function (g) {
      var k = +g.getAttribute("data-bgroup");
      bBox[k] = g; bRows[k] = rowsOf(g);
      var twin = groups.findIndex(function (d) { return d.b === k; });
      if (twin >= 0) {
        g.addEventListener("click", function () { open(twin); });
        g.addEventListener("keydown", function (e) {
          if (e.key === "Enter" || e.key === " ") { open(twin); e.preventDefault(); e.stopPropagation(); }
        });
      }
    });
  }

  // A node inside a box stands for the box where panes.js looks for a node (the first view is at the output's
  // box, a step keeps its node's box in view); the box's classes are this module's, written after boxes.js's.
  groups.forEach(function (d, k) { if (gBox[k]) { d.members.forEach(function (i) { p.gNode[i] = p.gNode[i] || gBox[k]; }); } });
  bGroups.forEach(function (d, k) { if (bBox[k]) { d.members.forEach(function (b) { p.bNode[b] = p.bNode[b] || bBox[k]; }); } });

  // A node's value, its grad_table entry, a node of B's value: as boxes.js writes them (? before a step
  // computes it, — before Algorithm 6.2 fills it, ✗ where Algorithm 6.1 stops).
  function value(i) { return i === m.state.forward ? W.box_outside : m.known(i) ? fmt(m.u[i], D) : W.box_unknown; }
  function grad(i) { return m.gradShown(i) ? fmt(m.gradOf(i), D) : W.box_empty; }
  function bValue(slot) { return m.ok() ? fmt(m.u[slot], D) : W.box_unknown; }
  function setText(t, s) { if (t && t.textContent !== s) { t.textContent = s; } }
  function writeRows(texts, rows, number) {
    rows.forEach(function (r, k) { setText(texts[k], r.head + r.nodes.map(function (i) { return number(r, i); }).join(", ") + r.tail); });
  }
  function gNumber(r, i) { return r.grad ? grad(i) : value(i); }
  function bNumber(r, slot) { return bValue(slot); }

  // The open group: its scalars of G and its nodes of B, each drawing panned and zoomed (d3-zoom).
  var inside = make("section", "mg-inside");
  inside.hidden = true;
  var head = make("div", "mg-inside-head");
  var title = make("span", "mg-inside-title");
  title.setAttribute("role", "status");
  var shut = button(W, "close", "mg-inside-close");
  head.appendChild(title); head.appendChild(shut);
  var panes = make("div", "mg-inside-panes");
  inside.appendChild(head); inside.appendChild(panes);
  main.parentNode.insertBefore(inside, main.nextSibling);
  var opened = -1, nodes = [], bNodes = [];

  // A drawing of the open group in a pane that pans and zooms as G's and B's do (pan.js's gestures; the
  // arrow keys, + and - when the pane has the focus), opened as theirs are (panes.js): whole where that is
  // legible, else at a legible scale around `last`, the group's last scalar or node of B, as G's pane opens
  // at its output u(n). Its numbers are written whether in view or not (drawGroups), so a move redraws none.
  function pane(svg, cls, name, last) {
    var e = drawingPane(panes, svg, cls, name);
    e.tabIndex = 0;
    var z = p.zoomPane(e, null);
    panKeys(p.d3, z);
    p.firstView(z, e.querySelector(last), false);
    return e;
  }
  function open(k) {
    var d = groups[k];
    if (!d || d.kind === "scalar") { return; }
    opened = k;
    panes.textContent = "";
    inside.hidden = false;
    title.textContent = say(W.inside, { title: d.title, n: d.members.length, nb: d.b_members.length });
    p.el.setAttribute("data-open", String(k));
    if (!d.svg) {  // more scalars than the page draws (max_nodes)
      panes.appendChild(make("p", "mg-note", say(W.too_many, { title: d.title, n: d.members.length, nb: d.b_members.length, max: mlp.max_nodes })));
      p.draw();
      return;
    }
    var last = "g[data-node='" + Math.max.apply(null, d.members) + "']";  // the group's last scalar: u(i), i largest
    var pg = pane(d.svg, "mg-pane-g", say(W.inside_g, { title: d.title }), last);
    nodes = [];
    pg.querySelectorAll("g[data-node]").forEach(function (g) {
      var i = +g.getAttribute("data-node");
      nodes.push({ i: i, g: g, data: g.querySelector("text.mg-data"), grad: g.querySelector("text.mg-grad") });
      g.addEventListener("click", function () { p.select(i); });
    });
    bNodes = [];
    if (d.svg_b) {
      last = "g[data-bnode='" + Math.max.apply(null, d.b_members) + "']";  // and its last node of B, in B's order
      var pb = pane(d.svg_b, "mg-pane-b", say(W.inside_b, { title: d.title }), last);
      pb.querySelectorAll("g[data-bnode]").forEach(function (g) {
        var b = +g.getAttribute("data-bnode");
        bNodes.push({ b: b, g: g, data: g.querySelector("text.mg-data") });
      });
    }
    p.draw();
    inside.scrollIntoView({ block: "nearest" });
  }
  function close() {
    if (opened < 0) { return; }
    var k = opened;
    opened = -1; nodes = []; bNodes = [];
    inside.hidden = true; panes.textContent = "";
    p.el.removeAttribute("data-open");
    p.draw();
    if (gBox[k]) { gBox[k].focus(); }
  }
  shut.addEventListener("click", close);
  function onKey(e) {
    if (e.key === "Escape" && opened >= 0) { close(); e.preventDefault(); }
  }
  keys.addEventListener("keydown", onKey);

  function drawGroups() {
    var f = m.frames[m.k];
    var current = f.node !== null ? level.group_of[f.node] : -1;
    var chosen = m.selected !== null ? level.group_of[m.selected] : -1;
    var stopped = m.state.forward >= 0 ? level.group_of[m.state.forward] : -1;
    groups.forEach(function (d, k) {
      var g = gBox[k];
      if (!g) { return; }
      writeRows(gRows[k], d.rows, gNumber);
      g.classList.toggle("mg-current", k === current);
      g.classList.toggle("mg-outside", k === stopped);
      g.classList.toggle("mg-selected", k === chosen);
      g.classList.toggle("mg-open", k === opened);
    });
    bGroups.forEach(function (d, k) { if (bBox[k]) { writeRows(bRows[k], d.rows, bNumber); } });
    nodes.forEach(function (n) {
      setText(n.data, n.i === m.state.forward ? W.box_outside : boxData[0] + value(n.i) + boxData[1]);
      setText(n.grad, boxGrad[0] + grad(n.i) + boxGrad[1]);
      n.g.classList.toggle("mg-current", n.i === f.node);
      n.g.classList.toggle("mg-selected", n.i === m.selected);
    });
    bNodes.forEach(function (n) { setText(n.data, boxData[0] + bValue(spec.b[n.b].slot) + boxData[1]); });
  }
  var drawNodes = p.draw;
  p.draw = function () { drawNodes(); drawGroups(); };
  p.openGroup = open; p.closeGroup = close;
}
