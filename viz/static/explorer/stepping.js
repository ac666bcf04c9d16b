// Stepping through the frames of Algorithms 6.1 and 6.2: the buttons and keys (← → Home End), the
// pseudo-code with the current lines marked, and the frame's sentence (viz.narration.frame_text, its
// holes filled), or why the frame is not reached when an algorithm stops first.
import { button, make, say } from "./words.js";

// Builds the buttons into `nav` and the pseudo-code and sentence into `side`. Reads p.m, p.W, p.spec,
// p.el, p.draw, p.showSum, p.reveal. Gives p.go, p.showFrame, p.explainFrame and p.unkey (stops
// listening to the keys).
export function stepping(p, nav, side, keys) {
  var m = p.m, W = p.W, spec = p.spec, frames = m.frames;
  var prev = button(W, "previous", "mg-prev", W.previous_name);
  var counter = make("span", "mg-counter");
  var next = button(W, "next", "mg-next", W.next_name);
  nav.appendChild(prev); nav.appendChild(counter); nav.appendChild(next);
  nav.appendChild(make("span", "mg-help", W.help));
  var algoTitle = make("div", "mg-algo-title");
  var algo = make("div", "mg-algo");
  var explain = make("p", "mg-explain");
  explain.setAttribute("aria-live", "polite");
  side.appendChild(algoTitle); side.appendChild(algo); side.appendChild(explain);

  function frameText(f) {
    if (m.state.forward >= 0) {
      var s = m.stopped();
      if (f.algorithm === "6.2") { return say(W.no_62, s); }
      if (f.lines.indexOf(7) >= 0 || f.node === m.state.forward) { return say(W.stopped_61, s); }
      if (f.node > m.state.forward) { return say(W.not_computed, { i: f.node + 1, stop: s.stop }); }
    } else if (m.state.backward !== null && f.algorithm === "6.2") {
      return m.backwardSays("stops_62");
    }
    return m.fill(f.text);
  }
  function explainFrame() { explain.textContent = frameText(frames[m.k]); }

  function showFrame() {
    var f = frames[m.k];
    var lines = f.algorithm === "6.1" ? spec.algorithm_6_1 : spec.algorithm_6_2;
    algoTitle.textContent = f.algorithm === "6.1" ? W.algorithm_6_1 : W.algorithm_6_2;
    algo.textContent = "";
    lines.forEach(function (line, idx) {
      algo.appendChild(make("div", "mg-line" + (f.lines.indexOf(idx) >= 0 ? " mg-current-line" : ""), line));
    });
    counter.textContent = say(W.step, { k: m.k + 1, total: frames.length });
    p.el.setAttribute("data-frame", String(m.k + 1));
    prev.disabled = m.k === 0;
    next.disabled = m.k === frames.length - 1;
  }

  function go(to) {
    if (to < 0 || to >= frames.length || to === m.k) { return; }
    m.k = to; showFrame(); p.draw(); explainFrame(); p.showSum();
    if (frames[m.k].node !== null) { p.reveal(frames[m.k].node); }
  }
  prev.addEventListener("click", function () { go(m.k - 1); });
  next.addEventListener("click", function () { go(m.k + 1); });
  function onKey(e) {
    var t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA")) { return; }
    if (e.key === "ArrowRight") { go(m.k + 1); } else if (e.key === "ArrowLeft") { go(m.k - 1); }
    else if (e.key === "Home") { go(0); } else if (e.key === "End") { go(frames.length - 1); }
    else { return; }
    e.preventDefault(); e.stopPropagation();
  }
  keys.addEventListener("keydown", onKey);
  p.go = go; p.showFrame = showFrame; p.explainFrame = explainFrame;
  p.unkey = function () { keys.removeEventListener("keydown", onKey); };
}
