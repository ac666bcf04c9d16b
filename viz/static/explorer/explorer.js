// micrograph's explorer: the page side of viz.explore. The Python side puts d3-zoom (vendored from npm) and
// the generated program forward_backward(x, u) (Algorithms 6.1 and 6.2 as straight-line JavaScript,
// written by micrograph.compile_javascript from the operation table) in front of these modules, joined
// into one script (viz.explore_page.explorer_script). This module lays the page out, gives each part its
// place and joins them through one object, p:
//   words.js     numbers as Python formats them, Python's templates filled, elements
//   model.js     p.m: the inputs, the program's slots, the frame shown, where an algorithm stops
//   panes.js     the drawings of G and B, panned and zoomed; the toolbar
//   pan.js       a drawing in a pane that pans and zooms as a page with a map does (the lessons' pictures too)
//   boxes.js     the numbers written into the boxes in view; hovering a node
//   focus.js     the nodes from the keyboard: Tab, Enter, the arrows along the edges
//   stepping.js  the frames of Algorithms 6.1 and 6.2, their pseudo-code and sentence; the keys
//   sum.js       the clicked node's grad_table entry as the book's sum
//   predict.js   predict mode: the student types each grad_table entry
//   groups.js    an MLP by layers or neurons: the groups' boxes, the level, a group's scalars opened
import { boxes } from "./boxes.js";
import { focusing } from "./focus.js";
import { grouping } from "./groups.js";
import { model } from "./model.js";
import { panes } from "./panes.js";
import { predicting } from "./predict.js";
import { stepping } from "./stepping.js";
import { sums } from "./sum.js";
import { fmt, make, say } from "./words.js";

// The inputs: a slider and a number box per variable, dz/dw for the targets, the status line.
function inputs(p) {
  var m = p.m, W = p.W, D = m.D;
  var panel = make("div", "mg-inputs");
  p.spec.inputs.forEach(function (inp, j) {
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
    var said = make("span", "mg-refused");  // why a typed value was refused, beside its box
    said.setAttribute("role", "alert");
    // The page always shows the numbers of the value in the box: a finite number typed is computed at once;
    // while the box holds no finite number, and once such a text is left (Enter, Tab, a click elsewhere),
    // the page keeps the value last accepted (a slider's, or a box's left holding a finite number) and the
    // box shows it again. A finite number beyond the slider's range is accepted (the slider stays at its
    // end). The box's value is "" unless its text is a finite number (an input of type number reads
    // "1e400", like "1e", as no number, and takes no letters: "nan" or "inf" cannot be typed).
    var accepted = inp.value;
    function set(v) { if (v !== m.x[j]) { m.x[j] = v; s.value = String(v); p.changed(); } }
    function typed() { var v = b.value === "" ? NaN : Number(b.value); return isFinite(v) ? v : null; }
    function refuse(words) {
      said.textContent = say(words, { name: who, value: fmt(accepted, D) });
      b.setAttribute("aria-invalid", "true");
    }
    function clear() { said.textContent = ""; b.removeAttribute("aria-invalid"); }
    s.addEventListener("input", function () {
      accepted = parseFloat(s.value); b.value = fmt(accepted, D); clear(); set(accepted);
    });
    b.addEventListener("input", function () {  // each key typed
      var v = typed();
      if (v !== null) { clear(); set(v); return; }
      if (b.validity.badInput) { refuse(W.refused); } else { clear(); }  // "": being typed again
      set(accepted);
    });
    b.addEventListener("change", function () {  // the box left: its value accepted, or refused
      var v = typed();
      if (v !== null) { accepted = v; clear(); set(v); return; }
      refuse(b.validity.badInput ? W.refused : W.refused_empty);
      b.value = fmt(accepted, D);
      set(accepted);
    });
    row.appendChild(s); row.appendChild(b); row.appendChild(said);
    panel.appendChild(row);
  });
  var grads = make("div", "mg-dzdw");
  p.outs = p.spec.wrt.map(function (w) {
    var item = make("span", "mg-dzdw-item");
    item.appendChild(make("span", null, w.text));
    var o = make("output", "mg-grad-of");
    item.appendChild(o); grads.appendChild(item);
    return o;
  });
  panel.appendChild(grads);
  p.status = make("div", "mg-status");
  p.status.setAttribute("role", "status");
  panel.appendChild(p.status);
  return panel;
}

export function mount(el, spec, evaluate, d3, keys) {
  var m = model(spec, evaluate);
  var p = { m: m, W: spec.words, spec: spec, el: el, d3: d3, ready: false };
  el.textContent = "";
  el.classList.add("mg-explorer");
  el.appendChild(make("div", "mg-title", spec.heading));
  el.appendChild(inputs(p));
  var nav = make("div", "mg-nav");
  el.appendChild(nav);
  var tools = make("div", "mg-tools");
  tools.setAttribute("role", "toolbar");
  el.appendChild(tools);
  var main = make("div", "mg-main");
  var graphs = make("div", "mg-graphs");
  var side = make("div", "mg-side");
  main.appendChild(graphs); main.appendChild(side);
  el.appendChild(main);
  if (spec.note) { el.appendChild(make("p", "mg-note", spec.note)); }

  panes(p, tools, graphs);
  boxes(p);
  focusing(p);
  if (spec.mlp) { grouping(p, tools, main, keys, function (next) { p.unkey(); mount(el, next, evaluate, d3, keys); }); }
  stepping(p, nav, side, keys);
  if (m.predict) {
    var ask = make("div", "mg-predict");
    side.appendChild(ask);
    predicting(p, ask);
  }
  var sum = make("div", "mg-sum");
  sum.setAttribute("aria-live", "polite");  // a node opened from the keyboard: its sum is read out
  side.appendChild(sum);
  sums(p, sum);

  p.select = function (i) { m.selected = i; p.draw(); p.showSum(); };
  function update() {  // the program run at the current inputs, and everything that shows its numbers
    var t0 = performance.now();
    m.compute();
    p.status.textContent = m.status();
    p.status.classList.toggle("mg-error", !m.ok());
    p.draw();
    p.explainFrame();
    p.showSum();
    el.setAttribute("data-update-ms", (performance.now() - t0).toFixed(3));
  }
  p.changed = function () {
    if (m.predict) { p.restartPredict(); }
    update();
  };

  p.showFrame();
  p.show("both");
  p.ready = true;
  update();
  if (window.ResizeObserver) {  // a pane that gets its size late (a widget, a rotated phone) is fitted then
    new ResizeObserver(function () { p.firstViews(); }).observe(graphs);
  }
  return p.unkey;
}

export function page(evaluate, d3) {
  var spec = JSON.parse(document.getElementById("micrograph-spec").textContent);
  if (document.documentElement.classList.contains("mg-embedded")) { embedded(); }
  mount(document.getElementById("micrograph-explorer"), spec, evaluate, d3, document);
}

// The page in a frame that the page holding it makes as tall as this page (the site's explorer tab marks
// the page so: class mg-embedded on <html>, --mg-vh its own window's 1vh), so that nothing scrolls inside
// the frame: this page says its height whenever it changes, and takes the new --mg-vh when that window's
// height changes. Messages from any other window are ignored.
function embedded() {
  var root = document.documentElement, body = document.body, said = -1;
  function tell() {
    var st = getComputedStyle(body);
    var h = Math.ceil(body.getBoundingClientRect().height + parseFloat(st.marginTop) + parseFloat(st.marginBottom));
    if (h !== said) { said = h; window.parent.postMessage({ micrographHeight: h }, "*"); }
  }
  window.addEventListener("message", function (e) {
    var vh = e.source === window.parent && e.data ? e.data.micrographViewport : null;
    if (typeof vh === "number" && vh > 0) { root.style.setProperty("--mg-vh", vh / 100 + "px"); }
  });
  if (window.ResizeObserver) { new ResizeObserver(tell).observe(body); }
  tell();
}

export function widget(widgetModel, el, evaluate, d3) {  // anywidget's model: the spec, synced from Python
  el.tabIndex = 0;
  return mount(el, JSON.parse(widgetModel.get("spec")), evaluate, d3, el);
}

export { fmt };
