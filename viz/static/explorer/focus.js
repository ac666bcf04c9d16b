// The drawings from the keyboard. Every node of G and of B is focusable, in reading order: G's u(1)..u(n),
// then B's nodes in B's order (the node groups are put in that order in the drawing, so Tab follows it;
// drawn last, the boxes lie over the edges). A node's accessible name is what its box says (its name, what
// it computes, its value and grad_table entry), read when it gets the focus and whenever its box is
// rewritten. Enter or Space opens the node's grad_table entry as the book's sum, as a click does (a node of
// B that is the entry of a node of G opens that node's). The arrow keys move along the edges: ← to an
// input of the node (argument 1 first), → to a consumer, ↑ ↓ to the other inputs or consumers of the node
// the last ← or → left. A focused node is panned into view and ringed.
var SVG = "http://www.w3.org/2000/svg";

function unique(list) { return list.filter(function (x, at) { return x !== undefined && list.indexOf(x) === at; }); }

// Reads p.m, p.spec, p.gNode, p.bNode, p.views, p.reveal, p.draw, p.select. Gives p.label (called by
// boxes.js when it rewrites a box) and p.focused (the node with the focus, or null).
export function focusing(p) {
  var spec = p.spec, n = p.m.n;
  var parents = [], bParents = spec.b.map(function () { return []; }), entryOf = [];
  for (var i = 0; i < n; i++) { parents.push([]); }
  spec.consumers.forEach(function (terms, j) { terms.forEach(function (t) { parents[t.i][t.k] = j; }); });
  spec.b.forEach(function (b, k) { b.consumers.forEach(function (c) { bParents[c].push(k); }); });
  var slots = {};
  spec.grad_slot.forEach(function (slot, j) { if (!(slot in slots)) { slots[slot] = j; } });
  spec.b.forEach(function (b, k) { entryOf[k] = b.slot in slots ? slots[b.slot] : -1; });
  var last = null;  // the last move by ← or →: { list, at, node }, for ↑ ↓

  function label(g) {
    var said = Array.prototype.map.call(g.querySelectorAll("text"), function (t) { return t.textContent.trim(); });
    g.setAttribute("aria-label", said.filter(Boolean).join(", "));
  }
  function ring(g, on) {
    var r = g.querySelector(":scope > rect.mg-ring");
    if (r) { g.removeChild(r); }
    if (!on) { return; }
    var b = g.getBBox(), pad = 4;
    r = document.createElementNS(SVG, "rect");
    r.setAttribute("class", "mg-ring");
    r.setAttribute("x", b.x - pad); r.setAttribute("y", b.y - pad);
    r.setAttribute("width", b.width + 2 * pad); r.setAttribute("height", b.height + 2 * pad);
    r.setAttribute("rx", pad);
    g.appendChild(r);
  }
  // One drawing's nodes: nodes[i] the group of node i; parentsOf(i), consumersOf(i) its neighbours;
  // open(i) what Enter does (or null); z the drawing's view.
  function wire(nodes, parentsOf, consumersOf, open, z) {
    nodes.forEach(function (g) { if (g) { g.parentNode.appendChild(g); } });  // reading order
    function go(list, at) {
      var g = nodes[list[at]];
      if (!g) { return false; }
      p.reveal(null, z, g);
      g.focus();
      last = { list: list, at: at, node: g };
      return true;
    }
    nodes.forEach(function (g, i) {
      if (!g) { return; }
      g.setAttribute("tabindex", "0");
      g.setAttribute("role", open(i) === null ? "img" : "button");
      g.addEventListener("focus", function () {
        p.reveal(null, z, g);
        p.focused = g;
        p.draw();  // its box, now in view, brought up to date: then its name
        label(g);
        ring(g, g.matches(":focus-visible"));
      });
      g.addEventListener("blur", function () { if (p.focused === g) { p.focused = null; } ring(g, false); });
      g.addEventListener("keydown", function (e) {
        var done = false, k = e.key;
        if (k === "Enter" || k === " ") {
          var j = open(i);
          if (j !== null) { p.select(j); }
          done = true;
        } else if (k === "ArrowLeft") { done = go(unique(parentsOf(i)), 0); }
        else if (k === "ArrowRight") { done = go(unique(consumersOf(i)), 0); }
        else if ((k === "ArrowUp" || k === "ArrowDown") && last && last.node === g && last.list.length > 1) {
          done = go(last.list, (last.at + (k === "ArrowDown" ? 1 : last.list.length - 1)) % last.list.length);
        }
        if (done) { e.preventDefault(); e.stopPropagation(); }
      });
    });
  }
  wire(p.gNode, function (i) { return parents[i]; }, function (i) { return spec.nodes[i].consumers; },
    function (i) { return i; }, p.views[0]);
  if (p.paneB) {
    var openB = function (k) { return entryOf[k] >= 0 ? entryOf[k] : null; };
    wire(p.bNode, function (k) { return bParents[k]; }, function (k) { return spec.b[k].consumers; }, openB, p.views[1]);
    p.bNode.forEach(function (g, k) {  // a click on a node of B that is an entry opens it, as Enter does
      if (openB(k) !== null) { g.addEventListener("click", function () { p.select(openB(k)); }); }
    });
  }
  p.label = label;
  p.focused = null;
}
