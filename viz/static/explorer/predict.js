// Predict mode: the student types each grad_table entry in Algorithm 6.2's order, from u(n) down; each is
// checked at once (4 significant digits), and a wrong one is named with the catalogue of mistakes the
// exercise checker names it with (viz.mistakes): its code and words, and the terms of the sum it changes.
import { termList } from "./sum.js";
import { button, fmt, make, say } from "./words.js";

function close(a, b) { return Math.abs(a - b) <= 1e-3 * Math.abs(b) + 1e-12; }

// A recipe's letters, one per term of the sum, its runs spelt out (viz.mistakes.Wrong.as_data: "200pd").
function usesOf(sent) {
  return sent.replace(/(\d+)([pxgdn])/g, function (run, k, use) { return use.repeat(+k); });
}

// The entry a catalogued mistake gives at the current inputs (viz.mistakes.Wrong.value): the terms of the
// sum in Algorithm 6.2's order, each replaced as its recipe's letter says, added one after another from 0.
function wrongEntry(m, terms, uses) {
  var total = 0;
  for (var t = 0; t < terms.length; t++) {
    var c = uses.charAt(t), term = terms[t];
    total += c === "p" ? m.product(term) : c === "n" ? -m.product(term) : c === "g" ? m.gradOf(term.i) : c === "d" ? m.derivative(term) : 0;
  }
  return total;
}

// Builds the question into `ask`. Reads p.m, p.W, p.spec, p.select, p.draw. Gives p.restartPredict (the
// inputs changed: the entries start again from u(n)).
export function predicting(p, ask) {
  var m = p.m, W = p.W, spec = p.spec, n = m.n, nodes = m.nodes, D = m.D, predict = m.predict;

  // The catalogue's mistakes whose entry is the typed number, one row per code in the catalogue's order;
  // when none is, the entry's last row, which stands for any number (seed for u(n), else wrong-sum).
  function diagnose(j, typed) {
    var rows = spec.wrong[j], terms = spec.consumers[j], found = [], named = {};
    rows.forEach(function (row) {
      if (row.uses === null || named[row.code]) { return; }
      var uses = usesOf(row.uses);
      if (close(typed, wrongEntry(m, terms, uses))) { named[row.code] = true; found.push({ code: row.code, uses: uses }); }
    });
    return found.length ? found : [{ code: rows[rows.length - 1].code, uses: null }];
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
    var found = diagnose(j, typed), words = spec.mistakes.words;
    feedback.classList.add("mg-wrong");
    feedback.setAttribute("data-mistakes", found.map(function (row) { return row.code; }).join(" "));
    feedback.appendChild(make("p", null, say(W.wrong, { name: nodes[j].name, typed: fmt(typed, D) })));
    found.forEach(function (row, r) {
      var line = make("p", "mg-mistake", say(r ? W.also : W.mistake, { code: row.code, words: words[row.code] }));
      line.setAttribute("data-mistake", row.code);
      if (r) { line.classList.add("mg-also"); }
      feedback.appendChild(line);
    });
    if (j === n - 1) {
      feedback.appendChild(make("p", null, m.fill(nodes[j].total)));
    } else {
      feedback.appendChild(make("p", null, nodes[j].sum_rule));  // viz.narration.iteration_head
      feedback.appendChild(termList(p, j, found[0].uses));
    }
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
