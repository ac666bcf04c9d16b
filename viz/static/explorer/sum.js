// The grad_table panel: the node clicked, its entry as the book's sum over its consumers, term by term
// (grad_table[u(i)] × ∂u(i)/∂u(j), each a template of Python's with its holes filled), or why the entry
// is not there yet (not filled at this step, hidden in predict mode, an algorithm stopped first).
import { make, say } from "./words.js";

// The terms of grad_table[u(j)]'s sum as a list, one item per consumer edge. `uses` (predict mode: a
// mistake's recipe, viz.mistakes) marks each term the mistake changes with what it does to it.
export function termList(p, j, uses) {
  var list = make("ol", "mg-terms");
  p.spec.consumers[j].forEach(function (t, at) {
    var use = uses ? uses.charAt(at) : "p", text = p.m.fill(t.text);
    var item = make("li", "mg-term", use === "p" ? text : say(p.W.term_use, { use: p.spec.mistakes.uses[use], term: text }));
    if (uses) { item.setAttribute("data-use", use); }
    if (use !== "p") { item.classList.add("mg-term-changed"); }
    list.appendChild(item);
  });
  return list;
}

// Writes into `sum`. Reads p.m, p.W. Gives p.showSum.
export function sums(p, sum) {
  var m = p.m, W = p.W, n = m.n;
  p.showSum = function () {
    sum.textContent = "";
    sum.removeAttribute("data-node");
    if (m.selected === null) { sum.appendChild(make("p", "mg-hint", W.hint)); return; }
    var j = m.selected, v = m.nodes[j];
    sum.setAttribute("data-node", String(j));
    sum.appendChild(make("div", "mg-sum-title", v.sum_title));
    if (!m.ok()) {
      var why = m.state.forward >= 0 ? m.stopped().outside : m.backwardSays("status_62");
      sum.appendChild(make("p", "mg-total", say(W.not_computed_sum, { why: why })));
      return;
    }
    if (m.filledAt[j] > m.k || (m.predict && !m.predict.ok[j])) {
      var words = m.predict && !m.predict.ok[j] ? W.hidden : W.not_filled;
      sum.appendChild(make("p", "mg-total", say(words, { name: v.name, k: m.k + 1, at: m.filledAt[j] + 1 })));
      return;
    }
    if (j < n - 1) {
      sum.appendChild(make("p", "mg-sum-rule", v.sum_rule));
      sum.appendChild(termList(p, j));
    }
    sum.appendChild(make("p", "mg-total", m.fill(v.total)));
  };
}
