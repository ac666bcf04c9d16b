// Predict mode: the student types each grad_table entry in Algorithm 6.2's order, from u(n) down; each is
// checked at once (4 significant digits), and a wrong one is told which term of its sum over consumers
// differs, as the exercise checker says it.
import { termList } from "./sum.js";
import { button, fmt, make, say } from "./words.js";

function close(a, b) { return Math.abs(a - b) <= 1e-3 * Math.abs(b) + 1e-12; }

// Builds the question into `ask`. Reads p.m, p.W, p.spec, p.select, p.draw. Gives p.restartPredict (the
// inputs changed: the entries start again from u(n)).
export function predicting(p, ask) {
  var m = p.m, W = p.W, spec = p.spec, n = m.n, nodes = m.nodes, D = m.D, predict = m.predict;

  function diagnose(j, typed) {  // which term of the sum over consumers differs, as the checker says
    var terms = spec.consumers[j], e = m.gradOf(j), v = nodes[j];
    var out = { text: [say(W.wrong, { name: v.name, typed: fmt(typed, D) })], term: -1 };
    function found(words, t) { out.text.push(say(W[words], { ui: nodes[terms[t].i].name, name: v.name, term: m.fill(terms[t].text), count: spec.count_terms[j] })); out.term = t; }
    var t;
    if (j === n - 1) { out.text.push(m.fill(v.total)); return out; }
    for (t = 0; t < terms.length && out.term < 0; t++) {
      if (terms.length > 1 && close(typed, e - m.product(terms[t]))) { found("left_out", t); }
    }
    for (t = 0; t < terms.length && out.term < 0; t++) {
      if (terms.length > 1 && close(typed, m.product(terms[t]))) { found("only_one", t); }
    }
    for (t = 0; t < terms.length && out.term < 0; t++) {
      if (close(typed, e - m.product(terms[t]) + m.gradOf(terms[t].i))) { found("no_derivative", t); }
    }
    for (t = 0; t < terms.length && out.term < 0; t++) {
      if (close(typed, e - m.product(terms[t]) + m.derivative(terms[t]))) { found("no_grad", t); }
    }
    if (out.term < 0) { out.text.push(close(typed, -e) && e !== 0 ? W.sign : say(W.terms, { count: spec.count_terms[j] })); }
    return out;
  }

  ask.appendChild(make("p", "mg-hint", W.predict_intro));
  var row = make("div", "mg-ask");
  var askLabel = make("label", "mg-ask-label");
  var askInput = document.createElement("input");
  askInput.type = "text"; askInput.inputMode = "decimal"; askInput.className = "mg-predict-input";
  askInput.id = "mg-ask-" + Math.random().toString(36).slice(2);
  askLabel.htmlFor = askInput.id;
  var checkButton = button(W, "check", "mg-check");
  row.appendChild(askLabel); row.appendChild(askInput); row.appendChild(checkButton);
  ask.appendChild(row);
  var feedback = make("div", "mg-feedback");
  feedback.setAttribute("aria-live", "polite");
  ask.appendChild(feedback);

  function askNext() {
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
    if (m.ok() && close(typed, m.gradOf(j))) {
      predict.ok[j] = true; predict.next = j - 1;
      feedback.classList.add("mg-right");
      feedback.appendChild(make("p", null, m.fill(nodes[j].right)));
      p.select(j); askNext(); p.draw();
      return;
    }
    var d = diagnose(j, typed);
    feedback.classList.add("mg-wrong");
    feedback.setAttribute("data-term", String(d.term));
    d.text.forEach(function (line) { feedback.appendChild(make("p", null, line)); });
    if (j < n - 1 && d.term < 0) { feedback.appendChild(termList(p, j)); }
    p.select(j);
  }
  askInput.addEventListener("keydown", function (e) { if (e.key === "Enter") { check(); e.preventDefault(); } });
  checkButton.addEventListener("click", check);
  askNext();

  p.restartPredict = function () {
    if (predict.next < n - 1) {
      predict.next = n - 1; predict.ok.fill(false);
      askNext();
      feedback.className = "mg-feedback"; feedback.textContent = W.predict_reset;
    }
  };
}
