// micrograph's explorer: the page side of viz.explore. Shipped with the package; the Python side puts the
// generated program forward_backward(x, u) (Algorithms 6.1 and 6.2 as straight-line JavaScript, written by
// micrograph.compile_javascript from the operation table) in front of this file. Nothing here computes a
// derivative: every number shown is a slot of u, or a product of two of them in a term of Algorithm 6.2's
// sum. Labels are user text: they only ever go into textContent.
var micrographExplorer = (function () {
  "use strict";
  var MARK = "\u0000";

  // A number as viz.text.fmt writes it (Python's "{:#.4g}"): 4 significant digits, trailing zeros kept.
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

  function num(x, digits) { var s = fmt(x, digits); return x < 0 ? "(" + s + ")" : s; }

  function make(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }

  function mount(el, spec, evaluate, keys) {
    var n = spec.n, ni = spec.n_i, D = spec.digits;
    var nodes = spec.nodes, frames = spec.frames;
    var u = new Float64Array(spec.size);
    var x = spec.inputs.map(function (inp) { return inp.value; });
    var k = frames.length - 1;  // the last frame: every value and every grad_table entry filled
    var selected = null;
    var state = { forward: -1, backward: null };

    // when each grad_table entry is filled (frame index), from the frames of Algorithm 6.2
    var filledAt = new Array(n).fill(Infinity);
    frames.forEach(function (f, idx) {
      if (f.algorithm === "6.2" && f.node !== null && filledAt[f.node] === Infinity) { filledAt[f.node] = idx; }
    });

    el.textContent = "";
    el.classList.add("mg-explorer");
    var title = make("div", "mg-title", "Explorer of " + spec.title + " (" + n + " nodes, n_i = " + ni + ")");
    el.appendChild(title);

    // --- inputs: a slider and a number box per variable; dz/dw for the targets ---------------------------
    var panel = make("div", "mg-inputs");
    var boxes = [], sliders = [];
    spec.inputs.forEach(function (inp, j) {
      if (!inp.variable) { return; }
      var row = make("div", "mg-input");
      row.appendChild(make("span", "mg-name", inp.name + (inp.label ? " (" + inp.label + ")" : "")));
      var s = document.createElement("input");
      s.type = "range"; s.min = inp.min; s.max = inp.max; s.step = inp.step; s.value = inp.value;
      s.className = "mg-slider"; s.setAttribute("data-input", inp.name);
      s.setAttribute("aria-label", "value of " + inp.name);
      var b = document.createElement("input");
      b.type = "number"; b.step = "any"; b.value = String(inp.value); b.className = "mg-box";
      b.setAttribute("data-input", inp.name);
      b.setAttribute("aria-label", "value of " + inp.name);
      s.addEventListener("input", function () { x[j] = parseFloat(s.value); b.value = s.value; update(); });
      b.addEventListener("input", function () {
        var v = parseFloat(b.value);
        if (isFinite(v)) { x[j] = v; s.value = String(v); update(); }
      });
      row.appendChild(s); row.appendChild(b);
      sliders[j] = s; boxes[j] = b;
      panel.appendChild(row);
    });
    var grads = make("div", "mg-dzdw");
    var outs = spec.wrt.map(function (w) {
      var item = make("span", "mg-dzdw-item");
      item.appendChild(make("span", null, "∂" + spec.title + "/∂" + (w.label || w.name) + " = "));
      var o = make("output", "mg-grad-of"); o.setAttribute("data-name", w.label || w.name);
      item.appendChild(o); grads.appendChild(item);
      return o;
    });
    panel.appendChild(grads);
    var status = make("div", "mg-status");
    panel.appendChild(status);
    el.appendChild(panel);

    // --- stepping through Algorithms 6.1 and 6.2 ----------------------------------------------------
    var nav = make("div", "mg-nav");
    var prev = make("button", "mg-prev", "◀ previous"); prev.type = "button";
    var counter = make("span", "mg-counter");
    var next = make("button", "mg-next", "next ▶"); next.type = "button";
    nav.appendChild(prev); nav.appendChild(counter); nav.appendChild(next);
    nav.appendChild(make("span", "mg-help", "← → step (Home, End); drag a slider; click a node for its sum"));
    el.appendChild(nav);

    var main = make("div", "mg-main");
    var graph = make("div", "mg-graph");
    graph.innerHTML = spec.svg;  // Graphviz's drawing, made in Python; labels escaped there
    if (spec.fit) { graph.classList.add("mg-fit"); }  // a small graph fits the width; a large one scrolls
    var side = make("div", "mg-side");
    var algoTitle = make("div", "mg-algo-title");
    var algo = make("div", "mg-algo");
    var explain = make("p", "mg-explain");
    var sum = make("div", "mg-sum");
    side.appendChild(algoTitle); side.appendChild(algo); side.appendChild(explain); side.appendChild(sum);
    main.appendChild(graph); main.appendChild(side);
    el.appendChild(main);
    if (spec.note) { el.appendChild(make("p", "mg-note", spec.note)); }

    var gNode = [], dataText = [], gradText = [];
    graph.querySelectorAll("g[data-node]").forEach(function (g) {
      var i = parseInt(g.getAttribute("data-node"), 10);
      gNode[i] = g;
      dataText[i] = g.querySelector("text.mg-data");
      gradText[i] = g.querySelector("text.mg-grad");
      g.addEventListener("click", function () { select(i); });
    });
    var bNodes = [];
    graph.querySelectorAll("g[data-bnode]").forEach(function (g) {
      bNodes.push([parseInt(g.getAttribute("data-bnode"), 10), g.querySelector("text.mg-data"), g]);
    });

    function known(i) {  // u(i) is computed at frame k (and Algorithm 6.1 has not stopped before it)
      var f = frames[k];
      if (state.forward >= 0 && i > state.forward) { return false; }
      return f.algorithm === "6.2" || f.lines.indexOf(7) >= 0 || i <= f.node;
    }
    function filled(j) { return state.forward < 0 && state.backward === null && filledAt[j] <= k; }
    function value(i) { return u[i]; }
    function gradOf(j) { return u[spec.grad_slot[j]]; }
    function derivative(t) { return t.slot !== undefined ? u[t.slot] : t.value; }
    function name(i) { return nodes[i].name + (nodes[i].label ? " (" + nodes[i].label + ")" : ""); }
    function numbers(i) {
      return nodes[i].numbers.split(MARK).map(function (part, p) {
        return p % 2 === 1 ? num(value(parseInt(part, 10)), D) : part;
      }).join("");
    }
    function outside(i) {
      var v = nodes[i];
      return "outside the domain of " + v.op + " (" + v.domain + ")";
    }

    function setText(t, s) { if (t && t.textContent !== s) { t.textContent = s; } }

    function draw() {
      var f = frames[k];
      for (var i = 0; i < n; i++) {
        var g = gNode[i];
        if (!g) { continue; }
        var bad = i === state.forward;
        setText(dataText[i], bad ? "data: outside domain" : "data " + (known(i) ? fmt(value(i), D) : "?"));
        setText(gradText[i], "grad " + (filled(i) ? fmt(gradOf(i), D) : "—"));
        g.classList.toggle("mg-outside", bad || (state.backward !== null && state.backward.i === i));
        g.classList.toggle("mg-current", f.node === i);
        g.classList.toggle("mg-selected", selected === i);
      }
      var ok = state.forward < 0 && state.backward === null;
      bNodes.forEach(function (b) { setText(b[1], "data " + (ok ? fmt(u[b[0]], D) : "?")); });
    }

    function termsText(j, terms) {
      var symbolic = terms.map(function (t) {
        return "grad_table[u" + (t.i + 1) + "] · ∂u" + (t.i + 1) + "/∂u" + (j + 1);
      }).join(" + ");
      var numeric = terms.map(function (t) { return num(gradOf(t.i), D) + " × " + num(derivative(t), D); })
        .join(" + ");
      return "grad_table[u" + (j + 1) + "] ← " + symbolic + " = " + numeric + " = " + fmt(gradOf(j), D) + ".";
    }

    function frameText(f) {
      var i = f.node;
      if (f.algorithm === "6.1") {
        if (f.lines.indexOf(7) >= 0) {
          return state.forward >= 0 ? "Algorithm 6.1 stopped at u" + (state.forward + 1) + ": " +
            nodes[state.forward].formula + " is " + outside(state.forward) + "." :
            "return u(n) = u" + n + " = " + fmt(value(n - 1), D) + ".";
        }
        if (i < ni) {
          var inp = spec.inputs[i];
          return "u" + (i + 1) + " ← x_" + (i + 1) + ": u" + (i + 1) + " is " +
            (inp.variable ? "the input x_" + (i + 1) + " = " : "the constant ") + fmt(value(i), D) +
            (inp.label ? " (" + inp.label + ")" : "") + ".";
        }
        if (state.forward >= 0 && i > state.forward) {
          return "i = " + (i + 1) + ": not computed: Algorithm 6.1 stopped at u" + (state.forward + 1) + ".";
        }
        var pa = [];
        nodes[i].numbers.split(MARK).forEach(function (part, p) {
          if (p % 2 === 1 && pa.indexOf(+part) < 0) { pa.push(+part); }
        });
        var A = pa.map(function (j) { return "u" + (j + 1) + " = " + fmt(value(j), D); }).join(", ");
        var result = i === state.forward ? outside(i) : fmt(value(i), D);
        return "i = " + (i + 1) + ": A(" + (i + 1) + ") = {" + A + "}; " + name(i) + " ← f(" + (i + 1) +
          ")(A(" + (i + 1) + ")) = " + nodes[i].formula + " = " + numbers(i) + " = " + result + ".";
      }
      if (state.forward >= 0) { return "Algorithm 6.2 does not run: Algorithm 6.1 stopped at u" + (state.forward + 1) + "."; }
      if (state.backward !== null) {
        var b = state.backward;
        return "Algorithm 6.2 stops at j = " + (b.j + 1) + ": ∂u" + (b.i + 1) + "/∂u" + (b.j + 1) + " = " +
          (b.formula || "the local derivative") + " does not exist here (" + nodes[b.i].op + ", " + nodes[b.i].domain + ").";
      }
      if (f.lines.indexOf(9) >= 0) { return "return the grad_table: ∂u(n)/∂u(i) for every node, as the drawing shows."; }
      if (f.lines.indexOf(3) >= 0) {
        return "Forward propagation has computed every u(i). grad_table[u" + n + "] ← 1: ∂u" + n + "/∂u" + n + " = 1.";
      }
      var terms = spec.consumers[i];
      var users = [];
      terms.forEach(function (t) { var s = "u" + (t.i + 1); if (users.indexOf(s) < 0) { users.push(s); } });
      return "j = " + (i + 1) + ": " + name(i) + " is an argument of " + users.join(", ") + ". " + termsText(i, terms);
    }

    function showFrame() {
      var f = frames[k];
      var lines = f.algorithm === "6.1" ? spec.algorithm_6_1 : spec.algorithm_6_2;
      algoTitle.textContent = "Algorithm " + f.algorithm + (f.algorithm === "6.1" ? " (forward propagation)" : " (back-propagation)");
      algo.textContent = "";
      lines.forEach(function (line, idx) {
        var s = make("div", "mg-line" + (f.lines.indexOf(idx) >= 0 ? " mg-current-line" : ""), line);
        algo.appendChild(s);
      });
      counter.textContent = "step " + (k + 1) + " of " + frames.length;
      el.setAttribute("data-frame", String(k + 1));
      prev.disabled = k === 0;
      next.disabled = k === frames.length - 1;
    }

    function showSum() {
      sum.textContent = "";
      if (selected === null) { sum.appendChild(make("p", "mg-hint", "Click a node to see its grad_table entry as the book's sum.")); return; }
      var j = selected;
      sum.setAttribute("data-node", String(j));
      sum.appendChild(make("div", "mg-sum-title", "∂" + spec.title + "/∂u" + (j + 1) + (nodes[j].label ? " (" + nodes[j].label + ")" : "") + " = grad_table[u" + (j + 1) + "]"));
      if (state.forward >= 0 || state.backward !== null) {
        sum.appendChild(make("p", "mg-total", "not computed: " + (state.forward >= 0 ? "u" + (state.forward + 1) + " is " + outside(state.forward) : "a local derivative does not exist here") + "."));
        return;
      }
      if (j === n - 1) {
        sum.appendChild(make("p", "mg-total", "grad_table[u" + n + "] ← 1 (Algorithm 6.2, line 4): ∂u(n)/∂u(n) = 1."));
        return;
      }
      sum.appendChild(make("p", "mg-sum-rule", "= Σ_{i: " + (j + 1) + " ∈ Pa(u(i))} grad_table[u(i)] · ∂u(i)/∂u(" + (j + 1) + ")"));
      var list = make("ol", "mg-terms");
      spec.consumers[j].forEach(function (t) {
        var g = gradOf(t.i), d = derivative(t);
        list.appendChild(make("li", "mg-term",
          "grad_table[u" + (t.i + 1) + "] · ∂u" + (t.i + 1) + "/∂u" + (j + 1) + " (argument " + (t.k + 1) + " of " + nodes[t.i].op + ") = " +
          fmt(g, D) + " × " + (t.formula && t.slot !== undefined ? t.formula + " = " : "") + num(d, D) + " = " + fmt(g * d, D)));
      });
      sum.appendChild(list);
      sum.appendChild(make("p", "mg-total", "sum = " + fmt(gradOf(j), D)));
    }

    function select(i) { selected = i; draw(); showSum(); }

    function failures() {
      state.forward = -1; state.backward = null;
      for (var i = 0; i < n; i++) { if (!isFinite(u[i])) { state.forward = i; return; } }
      for (var j = n - 1; j >= 0; j--) {  // Algorithm 6.2's order: the first local derivative that fails
        var terms = spec.consumers[j];
        for (var t = 0; t < terms.length; t++) {
          if (!isFinite(derivative(terms[t]))) {
            state.backward = { i: terms[t].i, k: terms[t].k, j: j, formula: terms[t].formula };
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
        status.textContent = "u" + (state.forward + 1) + " = " + nodes[state.forward].formula + " = " +
          numbers(state.forward) + " is " + outside(state.forward) + ": Algorithm 6.1 stops there.";
      } else if (state.backward !== null) {
        var b = state.backward;
        status.textContent = spec.title + " = " + fmt(value(n - 1), D) + "; ∂u" + (b.i + 1) + "/∂u" + (b.j + 1) +
          " does not exist here (" + nodes[b.i].op + ": " + nodes[b.i].domain + "): Algorithm 6.2 stops.";
      } else {
        status.textContent = (spec.title === "u" + n ? "" : spec.title + " = ") + "u" + n + " = " + fmt(value(n - 1), D);
      }
      status.classList.toggle("mg-error", state.forward >= 0 || state.backward !== null);
      var ok = state.forward < 0 && state.backward === null;
      spec.wrt.forEach(function (w, idx) { outs[idx].textContent = ok ? fmt(gradOf(w.j), D) : "—"; });
      draw();
      explain.textContent = frameText(frames[k]);
      showSum();
      el.setAttribute("data-update-ms", (performance.now() - t0).toFixed(3));
    }

    function go(to) {
      if (to < 0 || to >= frames.length || to === k) { return; }
      k = to; showFrame(); draw(); explain.textContent = frameText(frames[k]);
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
    update();
    return function () { keys.removeEventListener("keydown", onKey); };
  }

  return {
    fmt: fmt,
    mount: mount,
    page: function (evaluate) {
      var spec = JSON.parse(document.getElementById("micrograph-spec").textContent);
      mount(document.getElementById("micrograph-explorer"), spec, evaluate, document);
    },
    widget: function (model, el, evaluate) {
      el.tabIndex = 0;
      return mount(el, JSON.parse(model.get("spec")), evaluate, el);
    }
  };
})();
