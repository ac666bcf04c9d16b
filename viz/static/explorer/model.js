// The explorer's numbers at the current inputs and step: the inputs x, every slot u of the generated
// program forward_backward(x, u) (Algorithm 6.1 over G, the grad_table as B, each edge's local
// derivative), the frame k shown, where Algorithm 6.1 or 6.2 stops, predict mode's progress. Nothing here
// computes a derivative: every number is a slot of u, or a product of two in a term of Algorithm 6.2's sum.
import { fmt, say } from "./words.js";

export function model(spec, evaluate) {
  var n = spec.n, frames = spec.frames, W = spec.words, HOLE = spec.hole;
  var m = {
    spec: spec, n: n, nodes: spec.nodes, frames: frames, W: W, D: spec.digits,
    u: new Float64Array(spec.size),
    x: spec.inputs.map(function (inp) { return inp.value; }),
    k: frames.length - 1,  // the last frame: every value and every grad_table entry filled
    selected: null,
    state: { forward: -1, backward: null },
    predict: spec.predict ? { next: n - 1, ok: new Array(n).fill(false) } : null,
    edges: {},
    filledAt: new Array(n).fill(Infinity)  // the frame at which each grad_table entry is filled
  };
  spec.consumers.forEach(function (terms) { terms.forEach(function (t) { m.edges[t.i + "." + t.k] = t; }); });
  frames.forEach(function (f, idx) {
    if (f.algorithm === "6.2" && f.node !== null && m.filledAt[f.node] === Infinity) { m.filledAt[f.node] = idx; }
  });

  m.ok = function () { return m.state.forward < 0 && m.state.backward === null; };
  m.gradOf = function (j) { return m.u[spec.grad_slot[j]]; };
  m.derivative = function (t) { return t.slot !== undefined ? m.u[t.slot] : t.value; };
  m.product = function (t) { return m.gradOf(t.i) * m.derivative(t); };
  m.known = function (i) {  // u(i) is computed at frame k (and Algorithm 6.1 has not stopped before it)
    var f = frames[m.k];
    if (m.state.forward >= 0 && i > m.state.forward) { return false; }
    return f.algorithm === "6.2" || f.lines.indexOf(7) >= 0 || i <= f.node;
  };
  m.gradShown = function (j) { return m.ok() && m.filledAt[j] <= m.k && (!m.predict || m.predict.ok[j]); };

  // A template from Python with its holes filled: v/V a value, g/G a grad_table entry, d/D a local
  // derivative, p a term of the sum; the capital letter brackets a negative number (a factor).
  m.fill = function (text) {
    return text.split(HOLE).map(function (part, p) {
      if (p % 2 === 0) { return part; }
      var kind = part.charAt(0), at = part.slice(1), x;
      var lower = kind.toLowerCase();
      if (lower === "v") { x = m.u[+at]; } else if (lower === "g") {
        if (!m.gradShown(+at)) { return W.box_unknown; }
        x = m.gradOf(+at);
      } else if (lower === "d") { x = m.derivative(m.edges[at]); } else { x = m.product(m.edges[at]); }
      var s = fmt(x, m.D);
      return kind !== lower && x < 0 ? "(" + s + ")" : s;
    }).join("");
  };

  // Run the generated program at the inputs x, then find where the book's algorithms would stop: the
  // first non-finite value in G's order (Algorithm 6.1), else, in Algorithm 6.2's order, the first local
  // derivative that does not exist (NaN) or overflows, term that overflows, or sum (grad_table entry) that
  // overflows, as run_algorithm_6_2 raises; a constant's entry is skipped there (NaN, no stop).
  m.compute = function () {
    evaluate(m.x, m.u);
    m.state.forward = -1; m.state.backward = null;
    for (var i = 0; i < n; i++) { if (!isFinite(m.u[i])) { m.state.forward = i; return; } }
    function stop(e, j, kind) {
      m.state.backward = { i: e ? e.i : j, k: e ? e.k : 0, j: j, rule: e ? e.rule : "", op: e ? e.op : "",
                           domain: e ? e.domain : "", kind: kind };
    }
    for (var j = n - 1; j >= 0; j--) {
      if (m.nodes[j].constant) { continue; }
      var terms = spec.consumers[j];
      for (var t = 0; t < terms.length; t++) {
        var d = m.derivative(terms[t]);  // the generated code: NaN outside a domain, an infinity where it overflows
        if (!isFinite(d)) { stop(terms[t], j, isNaN(d) ? "" : "_overflows"); return; }
        if (!isFinite(m.product(terms[t]))) { stop(terms[t], j, "_term"); return; }
      }
      if (!isFinite(m.gradOf(j))) { stop(null, j, "_sum"); return; }
    }
  };

  m.stopped = function () {  // the sentence for a node outside its operation's domain (or overflowing), its name
    var f = m.nodes[m.state.forward];
    return { stop: f.name, outside: m.fill(isNaN(m.u[m.state.forward]) ? f.outside : f.overflows) };
  };
  m.backwardFields = function () {
    var b = m.state.backward;
    return { ui: m.nodes[b.i].name, uj: m.nodes[b.j].name, j: b.j + 1, op: b.op, domain: b.domain, rule: b.rule || "?" };
  };
  m.backwardSays = function (words) {  // W.status_62 or W.stops_62 in the form for what stopped, filled in
    return say(W[words + m.state.backward.kind], m.backwardFields());
  };
  m.status = function () {  // the status line: z's value, or where an algorithm stops
    if (m.state.forward >= 0) { return say(W.status_61, m.stopped()); }
    if (m.state.backward !== null) { return m.fill(spec.status) + "; " + m.backwardSays("status_62"); }
    return m.fill(spec.status);
  };
  return m;
}
