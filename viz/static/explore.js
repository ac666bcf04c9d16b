// micrograph's explorer: the page side of viz.explore. Shipped with the package; the Python side puts
// d3-zoom (vendored from npm) and the generated program forward_backward(x, u) (Algorithms 6.1 and 6.2 as
// straight-line JavaScript, written by micrograph.compile_javascript from the operation table) in front of
// this file. Nothing here computes a derivative or writes a sentence of its own: every number shown is a
// slot of u, or a product of two of them in a term of Algorithm 6.2's sum, and every sentence is a
// template from Python (viz.frames.frame_text, viz.explore.WORDS) whose holes this file fills. Labels are
// user text: they only ever go into textContent.
var micrographExplorer = (function () {
  "use strict";
  var LEGIBLE = 0.9;  // the least first-view scale: the smallest text, 10 pt argument numbers, at 9 px
  var NATURAL = 4 / 3;  // 1:1, Graphviz's points as CSS pixels (1 pt = 4/3 px)

  // A number as viz.words.fmt writes it (Python's "{:#.4g}"): 4 significant digits, trailing zeros kept.
  function fmt(x, digits) {
    digits = digits || 4;
    if (x === null || x === undefined) { return "?"; }
    if (x !== x) { return "nan"; }
    if (x === Infinity) { return "inf"; }
    if (x === -Infinity) { return "-inf"; }
    if (x === 0) { x = 0; }
    var e = x.toExponential(digits - 1).split("e");
    var exp = parseInt(e[1], 10);
    if (exp < -4 || exp >= digits) {
      var a = Math.abs(exp);
      return e[0] + "e" + (exp < 0 ? "-" : "+") + (a < 10 ? "0" : "") + a;
    }
    var fixed = x.toFixed(digits - 1 - exp);
    return digits - 1 - exp === 0 ? fixed + "." : fixed;  // Python's "#" form keeps the point: "9440."
  }

  function make(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }

  // A template of viz.explore.WORDS with its {fields} filled.
  function say(template, fields) {
    return template.replace(/\{(\w+)\}/g, function (m, key) { return key in fields ? String(fields[key]) : m; });
  }

  function button(words, key, cls, name) {
    var b = make("button", cls, words[key]);
    b.type = "button";
    b.setAttribute("aria-label", name || words[key]);
    return b;
  }

  function mount(el, spec, evaluate, d3, keys) {
    var n = spec.n, W = spec.words, HOLE = spec.hole, D = spec.digits;
    var nodes = spec.nodes, frames = spec.frames;
    var u = new Float64Array(spec.size);
    var x = spec.inputs.map(function (inp) { return inp.value; });
    var k = frames.length - 1;  // the last frame: every value and every grad_table entry filled
    var selected = null;
    var state = { forward: -1, backward: null };
    var predict = spec.predict ? { next: n - 1, ok: new Array(n).fill(false) } : null;
    var edges = {};
    spec.consumers.forEach(function (terms) { terms.forEach(function (t) { edges[t.i + "." + t.k] = t; }); });
    var filledAt = new Array(n).fill(Infinity);  // the frame at which each grad_table entry is filled
    frames.forEach(function (f, idx) {
      if (f.algorithm === "6.2" && f.node !== null && filledAt[f.node] === Infinity) { filledAt[f.node] = idx; }
    });
    var boxData = W.box_data.split("{value}"), boxGrad = W.box_grad.split("{value}");

    function ok() { return state.forward < 0 && state.backward === null; }
    function gradOf(j) { return u[spec.grad_slot[j]]; }
    function derivative(t) { return t.slot !== undefined ? u[t.slot] : t.value; }
    function product(t) { return gradOf(t.i) * derivative(t); }
    function known(i) {  // u(i) is computed at frame k (and Algorithm 6.1 has not stopped before it)
      var f = frames[k];
      if (state.forward >= 0 && i > state.forward) { return false; }
      return f.algorithm === "6.2" || f.lines.indexOf(7) >= 0 || i <= f.node;
    }
    function gradShown(j) { return ok() && filledAt[j] <= k && (!predict || predict.ok[j]); }

    // A template from Python with its holes filled: v/V a value, g/G a grad_table entry, d/D a local
    // derivative, p a term of the sum; the capital letter brackets a negative number (a factor).
    function fill(text) {
      return text.split(HOLE).map(function (part, p) {
        if (p % 2 === 0) { return part; }
        var kind = part.charAt(0), at = part.slice(1), x;
        var lower = kind.toLowerCase();
        if (lower === "v") { x = u[+at]; } else if (lower === "g") {
          if (!gradShown(+at)) { return W.box_unknown; }
          x = gradOf(+at);
        } else if (lower === "d") { x = derivative(edges[at]); } else { x = product(edges[at]); }
        var s = fmt(x, D);
        return kind !== lower && x < 0 ? "(" + s + ")" : s;
      }).join("");
    }

    el.textContent = "";
    el.classList.add("mg-explorer");
    el.appendChild(make("div", "mg-title", spec.heading));

    // --- inputs: a slider and a number box per variable; dz/dw for the targets ------------------------
    var panel = make("div", "mg-inputs");
    spec.inputs.forEach(function (inp, j) {
      if (!inp.variable) { return; }
      var who = inp.name + (inp.label ? " (" + inp.label + ")" : "");
      var row = make("div", "mg-input");
      row.appendChild(make("span", "mg-name", who));
      var s = document.createElement("input");
      s.type = "range"; s.min = inp.min; s.max = inp.max; s.step = inp.step; s.value = inp.value;
      s.className = "mg-slider"; s.setAttribute("data-input", inp.name);
      s.setAttribute("aria-label", say(W.value_of, { name: who }));
      var b = document.createElement("input");
      b.type = "number"; b.step = "any"; b.value = fmt(inp.value, D); b.className = "mg-box";
      b.setAttribute("data-input", inp.name);
      b.setAttribute("aria-label", say(W.value_of, { name: who }));
      s.addEventListener("input", function () { x[j] = parseFloat(s.value); b.value = fmt(x[j], D); changed(); });
      b.addEventListener("input", function () {
        var v = parseFloat(b.value);
        if (isFinite(v)) { x[j] = v; s.value = String(v); changed(); }
      });
      row.appendChild(s); row.appendChild(b);
      panel.appendChild(row);
    });
    var grads = make("div", "mg-dzdw");
    var outs = spec.wrt.map(function (w) {
      var item = make("span", "mg-dzdw-item");
      item.appendChild(make("span", null, w.text));
      var o = make("output", "mg-grad-of");
      item.appendChild(o); grads.appendChild(item);
      return o;
    });
    panel.appendChild(grads);
    var status = make("div", "mg-status");
    status.setAttribute("role", "status");
    panel.appendChild(status);
    el.appendChild(panel);

    // --- stepping through Algorithms 6.1 and 6.2; the drawing's controls -------------------------------
    var nav = make("div", "mg-nav");
    var prev = button(W, "previous", "mg-prev", W.previous_name);
    var counter = make("span", "mg-counter");
    var next = button(W, "next", "mg-next", W.next_name);
    nav.appendChild(prev); nav.appendChild(counter); nav.appendChild(next);
    nav.appendChild(make("span", "mg-help", W.help));
    el.appendChild(nav);
    var tools = make("div", "mg-tools");
    tools.setAttribute("role", "toolbar");
    var zoomIn = button(W, "zoom_in", "mg-zoom-in"), zoomOut = button(W, "zoom_out", "mg-zoom-out");
    var fit = button(W, "fit", "mg-fit"), one = button(W, "one", "mg-one");
    var showG = button(W, "show_g", "mg-show"), showB = button(W, "show_b", "mg-show");
    var showBoth = button(W, "show_both", "mg-show");
    [zoomIn, zoomOut, fit, one, showG, showB, showBoth].forEach(function (b) { tools.appendChild(b); });
    if (!spec.svg_b) { showB.disabled = true; showBoth.disabled = true; }
    el.appendChild(tools);

    var main = make("div", "mg-main");
    var graphs = make("div", "mg-graphs");
    function pane(svg, cls, name) {
      var p = make("div", "mg-pane " + cls);
      p.setAttribute("role", "group");
      p.setAttribute("aria-label", name);
      p.innerHTML = svg;  // Graphviz's drawing, made in Python; labels escaped there
      graphs.appendChild(p);
      return p;
    }
    var paneG = pane(spec.svg_g, "mg-pane-g", W.graph_g);
    var paneB = spec.svg_b ? pane(spec.svg_b, "mg-pane-b", W.graph_b) : null;
    var side = make("div", "mg-side");
    var algoTitle = make("div", "mg-algo-title");
    var algo = make("div", "mg-algo");
    var explain = make("p", "mg-explain");
    explain.setAttribute("aria-live", "polite");
    var sum = make("div", "mg-sum");
    side.appendChild(algoTitle); side.appendChild(algo); side.appendChild(explain);
    var ask = predict ? make("div", "mg-predict") : null;
    if (ask) { side.appendChild(ask); }
    side.appendChild(sum);
    main.appendChild(graphs); main.appendChild(side);
    el.appendChild(main);
    if (spec.note) { el.appendChild(make("p", "mg-note", spec.note)); }

    // --- the nodes of the two drawings ---------------------------------------------------------------
    var gNode = [], dataText = [], gradText = [], bNode = [], bText = [];
    paneG.querySelectorAll("g[data-node]").forEach(function (g) {
      var i = parseInt(g.getAttribute("data-node"), 10);
      gNode[i] = g;
      dataText[i] = g.querySelector("text.mg-data");
      gradText[i] = g.querySelector("text.mg-grad");
      g.addEventListener("click", function () { select(i); });
      g.addEventListener("mouseenter", function () { hover(g, nodes[i].consumers, nodes[i].b_consumers, true); });
      g.addEventListener("mouseleave", function () { hover(g, nodes[i].consumers, nodes[i].b_consumers, false); });
    });
    if (paneB) {
      paneB.querySelectorAll("g[data-bnode]").forEach(function (g) {
        var b = parseInt(g.getAttribute("data-bnode"), 10);
        bNode[b] = g; bText[b] = g.querySelector("text.mg-data");
        g.addEventListener("mouseenter", function () { hover(g, [], spec.b[b].consumers, true); });
        g.addEventListener("mouseleave", function () { hover(g, [], spec.b[b].consumers, false); });
      });
    }
    // The node under the pointer and its consumers (in G and in B) highlighted.
    function hover(g, inG, inB, on) {
      g.classList.toggle("mg-hover", on);
      inG.forEach(function (c) { if (gNode[c]) { gNode[c].classList.toggle("mg-consumer", on); } });
      inB.forEach(function (c) { if (bNode[c]) { bNode[c].classList.toggle("mg-consumer", on); } });
    }

    // --- zoom and pan (d3-zoom: wheel, drag, pinch and touch pan) -------------------------------------
    function zoomable(p) {
      var svg = p.querySelector("svg");
      var box = (svg.getAttribute("viewBox") || "0 0 100 100").split(/[\s,]+/).map(Number);
      ["width", "height", "viewBox"].forEach(function (a) { svg.removeAttribute(a); });
      var g = document.createElementNS("http://www.w3.org/2000/svg", "g");
      g.setAttribute("class", "mg-zoom");
      while (svg.firstChild) { g.appendChild(svg.firstChild); }
      svg.appendChild(g);
      var z = { pane: p, svg: svg, g: g, w: box[2], h: box[3], ready: false, k: 1 };
      z.zoom = d3.zoom().scaleExtent([0.02, 8]).on("zoom", function (e) {
        g.setAttribute("transform", e.transform.toString());
        z.k = e.transform.k;
        p.setAttribute("data-scale", e.transform.k.toFixed(4));
        if (ready) { moved(); }
      });
      z.sel = d3.select(svg).call(z.zoom).on("dblclick.zoom", null);
      return z;
    }
    var ready = false;
    var views = [zoomable(paneG)];
    if (paneB) { views.push(zoomable(paneB)); }
    function size(z) { return [z.pane.clientWidth || 1, z.pane.clientHeight || 1]; }
    function setView(z, scale, cx, cy) {  // scale, and the drawing's point (cx, cy) at the pane's centre
      var s = size(z);
      z.sel.call(z.zoom.transform, d3.zoomIdentity.translate(s[0] / 2 - scale * cx, s[1] / 2 - scale * cy).scale(scale));
    }
    function fitScale(z) { var s = size(z); return Math.min(s[0] / z.w, s[1] / z.h); }
    function center(z, g) {  // a node's centre in the drawing's coordinates
      var b = g.getBBox(), m = z.g.getCTM().inverse().multiply(g.getCTM());
      var pt = z.svg.createSVGPoint();
      pt.x = b.x + b.width / 2; pt.y = b.y + b.height / 2;
      pt = pt.matrixTransform(m);
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
        if (!z.ready && visible(z)) { firstView(z, idx === 0 ? gNode[n - 1] : bNode[bNode.length - 1]); }
      });
    }
    function reveal(i) {  // keep the current step's node in view when it has scrolled out
      var z = views[0], g = gNode[i];
      if (!g || !visible(z)) { return; }
      var r = g.getBoundingClientRect(), p = z.pane.getBoundingClientRect();
      if (r.left >= p.left && r.right <= p.right && r.top >= p.top && r.bottom <= p.bottom) { return; }
      var c = center(z, g);
      setView(z, z.k, c[0], c[1]);
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
      [[showG, "g"], [showB, "b"], [showBoth, "both"]].forEach(function (p) {
        p[0].setAttribute("aria-pressed", String(p[1] === which));
      });
      paneG.hidden = which === "b";
      if (paneB) { paneB.hidden = which === "g"; }
      views.forEach(function (z) { z.ready = false; });
      firstViews();
    }
    showG.addEventListener("click", function () { show("g"); });
    showB.addEventListener("click", function () { show("b"); });
    showBoth.addEventListener("click", function () { show("both"); });

    // --- what the page shows at the current inputs and step -------------------------------------------
    function setText(t, s) { if (t && t.textContent !== s) { t.textContent = s; } }

    // Only the boxes in view are rewritten (SVG text costs style and layout per element: at 400 nodes,
    // rewriting every box made a move miss its frame; docs/performance.md has the figures); a box that comes
    // into view is brought up to date then.
    function inView(z, g) {
      if (!z.open) { return false; }
      if (!g.mgBox) { var b = g.getBBox(), c = center(z, g); g.mgBox = [c[0] - b.width / 2, c[1] - b.height / 2, c[0] + b.width / 2, c[1] + b.height / 2]; }
      var t = z.t, s = z.size, r = g.mgBox;
      return t.x + t.k * r[2] >= 0 && t.x + t.k * r[0] <= s[0] && t.y + t.k * r[3] >= 0 && t.y + t.k * r[1] <= s[1];
    }
    function drawG(i, f) {
      var g = gNode[i], bad = i === state.forward;
      setText(dataText[i], bad ? W.box_outside : boxData[0] + (known(i) ? fmt(u[i], D) : W.box_unknown) + boxData[1]);
      setText(gradText[i], boxGrad[0] + (gradShown(i) ? fmt(gradOf(i), D) : predict && ok() ? W.box_unknown : W.box_empty) + boxGrad[1]);
      var cls = (bad || (state.backward !== null && state.backward.i === i) ? "o" : "") + (f.node === i ? "c" : "") + (selected === i ? "s" : "");
      if (g.mgCls !== cls) {
        g.mgCls = cls;
        g.classList.toggle("mg-outside", cls.indexOf("o") >= 0);
        g.classList.toggle("mg-current", cls.indexOf("c") >= 0);
        g.classList.toggle("mg-selected", cls.indexOf("s") >= 0);
      }
    }
    function draw() {
      var f = frames[k];
      views.forEach(function (z) { z.open = visible(z); z.t = d3.zoomTransform(z.svg); z.size = size(z); });
      for (var i = 0; i < n; i++) {
        var g = gNode[i];
        if (!g) { continue; }
        if (inView(views[0], g) || i === f.node || i === selected || g.mgCls) { drawG(i, f); g.mgStale = false; } else { g.mgStale = true; }
      }
      var open = ok() && (!predict || predict.next < 0);  // B's values are grad_table entries
      var vb = views[1];
      bText.forEach(function (t, b) {
        if (vb && inView(vb, bNode[b])) {
          setText(t, boxData[0] + (open ? fmt(u[spec.b[b].slot], D) : W.box_unknown) + boxData[1]);
          bNode[b].mgStale = false;
        } else { bNode[b].mgStale = true; }
      });
      spec.wrt.forEach(function (w, idx) { outs[idx].textContent = open || gradShown(w.j) ? fmt(gradOf(w.j), D) : W.box_empty; });
    }
    var redraw = 0;
    function moved() {  // after a pan or zoom: the boxes that came into view are brought up to date
      if (!redraw) { redraw = requestAnimationFrame(function () { redraw = 0; draw(); }); }
    }

    function stopped() {  // the sentence for a node outside its operation's domain, and its name
      return { stop: nodes[state.forward].name, outside: fill(nodes[state.forward].outside) };
    }
    function backwardFields() {
      var b = state.backward;
      return { ui: nodes[b.i].name, uj: nodes[b.j].name, j: b.j + 1, op: b.op, domain: b.domain, rule: b.rule || "?" };
    }

    function frameText(f) {
      if (state.forward >= 0) {
        var s = stopped();
        if (f.algorithm === "6.2") { return say(W.no_62, s); }
        if (f.lines.indexOf(7) >= 0 || f.node === state.forward) { return say(W.stopped_61, s); }
        if (f.node > state.forward) { return say(W.not_computed, { i: f.node + 1, stop: s.stop }); }
      } else if (state.backward !== null && f.algorithm === "6.2") {
        return say(W.stops_62, backwardFields());
      }
      return fill(f.text);
    }

    function showFrame() {
      var f = frames[k];
      var lines = f.algorithm === "6.1" ? spec.algorithm_6_1 : spec.algorithm_6_2;
      algoTitle.textContent = f.algorithm === "6.1" ? W.algorithm_6_1 : W.algorithm_6_2;
      algo.textContent = "";
      lines.forEach(function (line, idx) {
        algo.appendChild(make("div", "mg-line" + (f.lines.indexOf(idx) >= 0 ? " mg-current-line" : ""), line));
      });
      counter.textContent = say(W.step, { k: k + 1, total: frames.length });
      el.setAttribute("data-frame", String(k + 1));
      prev.disabled = k === 0;
      next.disabled = k === frames.length - 1;
    }

    function showSum() {
      sum.textContent = "";
      sum.removeAttribute("data-node");
      if (selected === null) { sum.appendChild(make("p", "mg-hint", W.hint)); return; }
      var j = selected, v = nodes[j];
      sum.setAttribute("data-node", String(j));
      sum.appendChild(make("div", "mg-sum-title", v.sum_title));
      if (!ok()) {
        var why = state.forward >= 0 ? stopped().outside : say(W.status_62, backwardFields());
        sum.appendChild(make("p", "mg-total", say(W.not_computed_sum, { why: why })));
        return;
      }
      if (filledAt[j] > k || (predict && !predict.ok[j])) {
        var words = predict && !predict.ok[j] ? W.hidden : W.not_filled;
        sum.appendChild(make("p", "mg-total", say(words, { name: v.name, k: k + 1, at: filledAt[j] + 1 })));
        return;
      }
      if (j < n - 1) {
        sum.appendChild(make("p", "mg-sum-rule", v.sum_rule));
        var list = make("ol", "mg-terms");
        spec.consumers[j].forEach(function (t) { list.appendChild(make("li", "mg-term", fill(t.text))); });
        sum.appendChild(list);
      }
      sum.appendChild(make("p", "mg-total", fill(v.total)));
    }

    function select(i) { selected = i; draw(); showSum(); }

    function failures() {
      state.forward = -1; state.backward = null;
      for (var i = 0; i < n; i++) { if (!isFinite(u[i])) { state.forward = i; return; } }
      for (var j = n - 1; j >= 0; j--) {  // Algorithm 6.2's order: the first local derivative that fails
        var terms = spec.consumers[j];
        for (var t = 0; t < terms.length; t++) {
          if (!isFinite(derivative(terms[t]))) {
            var e = terms[t];
            state.backward = { i: e.i, k: e.k, j: j, rule: e.rule, op: e.op, domain: e.domain };
            return;
          }
        }
      }
    }

    function update() {
      var t0 = performance.now();
      evaluate(x, u);
      failures();
      if (state.forward >= 0) {
        status.textContent = say(W.status_61, stopped());
      } else if (state.backward !== null) {
        status.textContent = fill(spec.status) + "; " + say(W.status_62, backwardFields());
      } else {
        status.textContent = fill(spec.status);
      }
      status.classList.toggle("mg-error", !ok());
      draw();
      explain.textContent = frameText(frames[k]);
      showSum();
      el.setAttribute("data-update-ms", (performance.now() - t0).toFixed(3));
    }

    // --- predict mode: the student types each grad_table entry, from u(n) down -------------------------
    var askInput = null, askLabel = null, feedback = null;
    function close(a, b) { return Math.abs(a - b) <= 1e-3 * Math.abs(b) + 1e-12; }
    function diagnose(j, typed) {  // which term of the sum over consumers differs, as the checker says
      var terms = spec.consumers[j], e = gradOf(j), v = nodes[j];
      var out = { text: [say(W.wrong, { name: v.name, typed: fmt(typed, D) })], term: -1 };
      function found(words, t) { out.text.push(say(W[words], { ui: nodes[terms[t].i].name, name: v.name, term: fill(terms[t].text), count: spec.count_terms[j] })); out.term = t; }
      var t;
      if (j === n - 1) { out.text.push(fill(v.total)); return out; }
      for (t = 0; t < terms.length && out.term < 0; t++) {
        if (terms.length > 1 && close(typed, e - product(terms[t]))) { found("left_out", t); }
      }
      for (t = 0; t < terms.length && out.term < 0; t++) {
        if (terms.length > 1 && close(typed, product(terms[t]))) { found("only_one", t); }
      }
      for (t = 0; t < terms.length && out.term < 0; t++) {
        if (close(typed, e - product(terms[t]) + gradOf(terms[t].i))) { found("no_derivative", t); }
      }
      for (t = 0; t < terms.length && out.term < 0; t++) {
        if (close(typed, e - product(terms[t]) + derivative(terms[t]))) { found("no_grad", t); }
      }
      if (out.term < 0) { out.text.push(close(typed, -e) && e !== 0 ? W.sign : say(W.terms, { count: spec.count_terms[j] })); }
      return out;
    }
    function askNext() {
      if (!ask) { return; }
      if (predict.next < 0) { askLabel.textContent = W.predict_done; askInput.hidden = true; checkButton.hidden = true; return; }
      askInput.hidden = false; checkButton.hidden = false;
      askLabel.textContent = nodes[predict.next].prompt;
      askInput.setAttribute("aria-label", nodes[predict.next].prompt.replace(/ =$/, ""));
      askInput.setAttribute("data-node", String(predict.next));
      askInput.value = "";
    }
    function check() {
      var j = predict.next, typed = parseFloat(askInput.value);
      feedback.textContent = "";
      feedback.className = "mg-feedback";
      if (j < 0) { return; }
      if (!isFinite(typed)) { feedback.textContent = W.predict_nan; return; }
      if (ok() && close(typed, gradOf(j))) {
        predict.ok[j] = true; predict.next = j - 1;
        feedback.classList.add("mg-right");
        feedback.appendChild(make("p", null, fill(nodes[j].right)));
        select(j); askNext(); draw();
        return;
      }
      var d = diagnose(j, typed);
      feedback.classList.add("mg-wrong");
      feedback.setAttribute("data-term", String(d.term));
      d.text.forEach(function (line) { feedback.appendChild(make("p", null, line)); });
      if (j < n - 1 && d.term < 0) {
        var list = make("ol", "mg-terms");
        spec.consumers[j].forEach(function (t) { list.appendChild(make("li", "mg-term", fill(t.text))); });
        feedback.appendChild(list);
      }
      select(j);
    }
    var checkButton = null;
    if (ask) {
      ask.appendChild(make("p", "mg-hint", W.predict_intro));
      var row = make("div", "mg-ask");
      askLabel = make("label", "mg-ask-label");
      askInput = document.createElement("input");
      askInput.type = "text"; askInput.inputMode = "decimal"; askInput.className = "mg-predict-input";
      askInput.id = "mg-ask-" + Math.random().toString(36).slice(2);
      askLabel.htmlFor = askInput.id;
      checkButton = button(W, "check", "mg-check");
      askInput.addEventListener("keydown", function (e) { if (e.key === "Enter") { check(); e.preventDefault(); } });
      checkButton.addEventListener("click", check);
      row.appendChild(askLabel); row.appendChild(askInput); row.appendChild(checkButton);
      ask.appendChild(row);
      feedback = make("div", "mg-feedback");
      feedback.setAttribute("aria-live", "polite");
      ask.appendChild(feedback);
      askNext();
    }

    function changed() {
      if (predict && predict.next < n - 1) {
        predict.next = n - 1; predict.ok.fill(false);
        askNext();
        feedback.className = "mg-feedback"; feedback.textContent = W.predict_reset;
      }
      update();
    }

    function go(to) {
      if (to < 0 || to >= frames.length || to === k) { return; }
      k = to; showFrame(); draw(); explain.textContent = frameText(frames[k]); showSum();
      if (frames[k].node !== null) { reveal(frames[k].node); }
    }
    prev.addEventListener("click", function () { go(k - 1); });
    next.addEventListener("click", function () { go(k + 1); });
    function onKey(e) {
      var t = e.target;
      if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA")) { return; }
      if (e.key === "ArrowRight") { go(k + 1); } else if (e.key === "ArrowLeft") { go(k - 1); }
      else if (e.key === "Home") { go(0); } else if (e.key === "End") { go(frames.length - 1); }
      else { return; }
      e.preventDefault(); e.stopPropagation();
    }
    keys.addEventListener("keydown", onKey);
    showFrame();
    show("both");
    ready = true;
    update();
    if (window.ResizeObserver) {  // a pane that gets its size late (a widget, a rotated phone) is fitted then
      new ResizeObserver(function () { firstViews(); }).observe(graphs);
    }
    return function () { keys.removeEventListener("keydown", onKey); };
  }

  return {
    fmt: fmt,
    mount: mount,
    page: function (evaluate, d3) {
      var spec = JSON.parse(document.getElementById("micrograph-spec").textContent);
      mount(document.getElementById("micrograph-explorer"), spec, evaluate, d3, document);
    },
    widget: function (model, el, evaluate, d3) {
      el.tabIndex = 0;
      return mount(el, JSON.parse(model.get("spec")), evaluate, d3, el);
    }
  };
})();
