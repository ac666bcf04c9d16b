// micrograph's site: the lessons, the exercises and the explorer, with micrograph's Python running in this
// page's Web Workers. Every text, number and picture comes from micrograph's Python (lessons/publish/web.py), which
// runs in python.js's worker with Graphviz beside it; this file keeps only the page: it asks that worker by
// message (Python, below), shows its answers (a plot is drawn here, by charts.js), and drives exercise
// checks: the judge runs in python.js, the student's code in another worker (worker.js, no answer key),
// terminated when a case runs out of time, and this file relays each question and answer between the two.
// While Python works the page stays live: the controls that would queue more work are disabled, the status
// says "Working…" with the seconds spent, and Stop terminates the Python worker and starts a fresh one.
import { EditorView, basicSetup, indentWithTab, keymap, python as pythonMode } from "./vendor.js";
import { drawChart } from "./charts.js";
import { fitExplorer, showExplorer, showSvg } from "./drawings.js";
import { Python, SolutionWorker } from "./workers.js";

const $ = (id) => document.getElementById(id);
const say = (text) => { $("status").textContent = text; };
// A Python exception's last line without its class's module path: "syntax error: '(' was never closed ..."
const lastLine = (error) => String(error && error.message ? error.message : error).trim().split("\n").pop()
  .replace(/^(?:[A-Za-z_][\w]*\.)*(?:ExprError|DomainError|ValueError): /, "");

// An expression's syntax error names its column (micrograph.expr.ExprError): the cursor goes to that
// character of the box, as a caret under it does in the terminal.
function pointAt(input, error) {
  const column = / at column (\d+)$/.exec(lastLine(error));
  if (!column) return;
  const k = Math.min(Number(column[1]) - 1, input.value.length);
  input.focus();
  input.setSelectionRange(k, Math.min(k + 1, input.value.length));
}

let catalogue = null;
let address = { lesson: null, expr: "", at: "", step: null, exercise: null, explore: null, explore_at: "", predict: false, notes: [] };
let lesson = null;  // the lesson shown: { number, expr, at }, as it was started; null when none is
let shown = 0;      // the number of the step shown
let editor = null;
let spare = null;
let readyText = "";
window.micrographTimes = {};

let python = null;  // the page's Python (workers.js), started by boot and again after a Stop

// --- work: while Python works, a busy page that can stop it ---------------------------------------------
const WORK_CONTROLS = ["lesson", "start", "next", "back", "goto", "go", "answer", "x-draw", "check"];
const BUSY_AFTER_MS = 200;  // work shorter than this (a step) shows no status nor Stop (style.css: nor greys)
let phase = "loading";      // "loading", "ready", "working" (Python at work), "restarting" (after a Stop)
let work = null;            // the work under way: { what, t0, shown, halt, stop, focus }

class Stopped extends Error {}

function controls() {
  const off = phase !== "ready";
  const noLesson = lesson === null;
  for (const id of WORK_CONTROLS) {
    $(id).disabled = off || (noLesson && ["next", "back", "goto", "go"].includes(id));
  }
}

function tick() {
  $("elapsed").textContent = work ? `${Math.floor((performance.now() - work.t0) / 1000)} s` : "";
}

function showBusy() {
  if (!work || work.shown) return;
  work.shown = true;
  say(`Working… ${work.what}`);
  tick();
  $("stop").hidden = false;
  document.body.dataset.busy = "true";
}

// Run `job(halt)` as the page's one piece of work on Python: `halt` is a promise that fails when Stop is
// pressed (race a wait on anything but Python against it). Returns what the job returns; throws Stopped.
async function working(what, job) {
  if (phase !== "ready") throw new Error("the page is busy");
  phase = "working";
  let stopWork;
  work = { what, t0: performance.now(), shown: false, halt: new Promise((_, reject) => { stopWork = reject; }) };
  work.halt.catch(() => {});
  work.stop = stopWork;
  // the control that asked (a button, the lesson list) is disabled with the others, which takes its focus:
  // it gets it back when the work is over, so that Enter on Next steps on
  work.focus = WORK_CONTROLS.includes(document.activeElement && document.activeElement.id) ? document.activeElement : null;
  controls();
  const timers = [setTimeout(showBusy, BUSY_AFTER_MS), setInterval(tick, 250)];
  const mine = work;
  try {
    return await job(work.halt);
  } finally {
    clearTimeout(timers[0]);
    clearInterval(timers[1]);
    if (work === mine) {  // not stopped: the page is ready again, as it was
      work = null;
      phase = "ready";
      say(readyText);
      finishBusy(mine);
    }
  }
}

function finishBusy(done) {
  $("stop").hidden = true;
  $("elapsed").textContent = "";
  delete document.body.dataset.busy;
  controls();
  if (done.focus && !done.focus.disabled && (document.activeElement === document.body || !document.activeElement)) {
    done.focus.focus();
  }
}

// Stop: the Python worker is terminated (its work cannot be interrupted otherwise) and a fresh one started;
// the work's own caller says what was not done, this says how long it ran and when the page is ready again.
async function stop() {
  if (phase !== "working") return;
  const stopped = work;
  work = null;
  phase = "restarting";
  const seconds = ((performance.now() - stopped.t0) / 1000).toFixed(1);
  const error = new Stopped(`stopped after ${seconds} s`);
  python.end(error);
  stopped.stop(error);
  say(`Stopped after ${seconds} s (${stopped.what}). Starting Python again…`);
  finishBusy(stopped);
  python = new Python();
  try {
    await python.ready;
  } catch (e) {
    say("micrograph could not start again: " + lastLine(e) + " Reload the page.");
    return;
  }
  phase = "ready";
  say(`Stopped after ${seconds} s (${stopped.what}); Python started again and the page is ready.`);
  controls();
}
$("stop").onclick = () => { stop(); };

// --- start-up ------------------------------------------------------------------------------------------
async function boot() {
  const t0 = performance.now();
  const since = (clock) => clock - (performance.timeOrigin + t0);  // a worker's time, from this script's start
  say("Loading Python…"); // loading.js may have said, after a slow start, that this script had not loaded
  // The page's Python starts alone: the Web Worker for the first exercise check starts its own Python once
  // the page is interactive, not beside it, where on a laptop's two cores it took a core from the page's
  // start (interactive in 2.0 s instead of 3.5 s, paired, on a loaded machine); a check made at once waits
  // for that worker, within the check's budget of 3 s (benchmarks/site.py measures both).
  python = new Python();
  const [manifest, times, listed, asked] = await Promise.all([
    fetch("manifest.json").then((r) => r.json()),
    python.ready, python.call("catalogue"), python.call("readAddress", location.search),
  ]);
  window.micrographTimes.python = since(times.python);  // Pyodide and Graphviz loaded, in the worker
  window.micrographTimes.imported = since(times.imported);  // micrograph's modules imported
  window.micrographTimes.snapshot = times.snapshot;  // whether Python started from its saved image
  catalogue = JSON.parse(listed);
  address = JSON.parse(asked);  // a link's parts, checked; notes for the rest
  readyText = `Ready: micrograph ${manifest.version} in Python ${manifest.python} (Pyodide ${manifest.pyodide}).`;
  setUpLessons();
  phase = "ready";
  controls();
  // the first lesson is asked for first: the page's Python works on it while this thread sets up the tabs
  const started = startLesson();
  setUpExercises();
  setUpExplorer();
  await started;
  if (address.step !== null && lesson !== null) await move("goto", address.step);
  if (address.exercise !== null) { $("exercise").value = address.exercise; loadDraft(); showTab("exercises"); }
  if (address.notes.length) $("lesson-note").textContent = [$("lesson-note").textContent, ...address.notes].filter(Boolean).join(" ");
  if (address.explore !== null) { showTab("explorer"); await drawExplorer(); }
  window.micrographTimes.interactive = performance.now() - t0;
  if (phase === "ready") say(readyText);
  document.body.dataset.ready = "true";
  setTimeout(solution);  // the editor, if a link did not show the Exercises tab
  spare = spare || new SolutionWorker();
}

function showTab(which) {
  for (const name of ["lessons", "exercises", "explorer"]) {
    $(name).hidden = name !== which;
    $("tab-" + name).setAttribute("aria-pressed", String(name === which));
  }
  if (which === "exercises" && catalogue !== null) solution();  // before the exercises are known: once ready
}
$("tab-lessons").onclick = () => showTab("lessons");
$("tab-exercises").onclick = () => showTab("exercises");
$("tab-explorer").onclick = () => showTab("explorer");

// --- lessons -------------------------------------------------------------------------------------------
function setUpLessons() {
  for (const l of catalogue.lessons) {
    $("lesson").add(new Option(`${l.number}. ${l.title} (${l.section})`, l.number));
  }
  $("lesson").onchange = () => { fillExample(); startLesson(); };
  $("lesson-form").onsubmit = (e) => { e.preventDefault(); startLesson(); };
  $("predict").onsubmit = answer;
  $("next").onclick = () => move("next");
  $("back").onclick = () => move("back");
  $("go").onclick = () => move("goto", Number($("goto").value));
  for (const id of ["lesson", "expr", "at"]) $(id).disabled = false;
  if (address.lesson !== null) $("lesson").value = String(address.lesson);
  fillExample();
  if (address.expr) { $("expr").value = address.expr; $("at").value = address.at; }
}

function fillExample() {
  const l = catalogue.lessons.find((x) => String(x.number) === $("lesson").value);
  $("expr").value = l.expr || "";
  $("at").value = l.at || "";
  $("expr").disabled = $("at").disabled = !l.expr;
  $("expr").placeholder = l.expr ? "" : "this lesson runs on its own example";
}

async function startLesson() {
  if (phase !== "ready") return;
  const asked = { number: $("lesson").value | 0, expr: $("expr").value, at: $("at").value };
  $("lesson-note").textContent = "";
  lesson = null;  // the worker drops the lesson it had before it starts this one
  let json;
  try {
    json = await working(`starting lesson ${asked.number}`, () => python.call("lesson", asked, columns()));
  } catch (error) {  // the page stays usable: the failed lesson's controls reset, the boxes enabled
    $("lesson-note").textContent = error instanceof Stopped
      ? `Stopped: lesson ${asked.number} was not started.` : lastLine(error);
    $("lesson-text").textContent = "";
    showSvg($("lesson-picture"), "");
    $("where").textContent = "";
    $("predict").hidden = true;
    controls();
    if (!(error instanceof Stopped)) pointAt($("expr"), error);
    return;
  }
  lesson = asked;
  const url = new URL(location.href);  // what was started, whatever the boxes hold by now
  url.searchParams.set("lesson", String(asked.number));
  if (catalogue.lessons.find((l) => l.number === asked.number).expr) {
    url.searchParams.set("expr", asked.expr);
    url.searchParams.set("at", asked.at);
  } else { url.searchParams.delete("expr"); url.searchParams.delete("at"); }
  history.replaceState(null, "", url);
  show(json);
  controls();
}

async function move(how, k = 0) {
  if (!lesson || phase !== "ready") return;
  try {
    const what = { next: "the next step", back: "the step before", goto: `step ${k}`, here: "the step again" }[how];
    show(await working(`lesson ${lesson.number}, ${what}`, () => python.call("move", lesson, shown, how, k, columns())));
  } catch (error) {
    $("lesson-note").textContent = error instanceof Stopped ? "Stopped: the step was not shown." : lastLine(error);
  }
}

// The step's text is wrapped by Python to the columns its box holds now: measured, not a fixed width.
function columns() {
  const box = $("lesson-text");
  const probe = document.createElement("span");
  probe.textContent = "0".repeat(50);
  probe.style.visibility = "hidden";
  probe.style.position = "absolute";
  box.appendChild(probe);
  const glyph = probe.getBoundingClientRect().width / 50;
  box.removeChild(probe);
  const style = getComputedStyle(box);
  const inner = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return glyph > 0 ? Math.max(40, Math.min(200, Math.floor(inner / glyph))) : 0;
}

let rewrap = null;
function wrapAgain() {  // a turned phone or a resized window: the same step, wrapped again once Python is free
  clearTimeout(rewrap);
  rewrap = setTimeout(() => { if (phase === "ready") { if (lesson) move("here"); } else wrapAgain(); }, 150);
}
window.addEventListener("resize", wrapAgain);
let wrappedAgainTo = 0;  // a step shown in a box of another width (a scroll bar came): wrapped again, once

function show(json) {
  const s = JSON.parse(json);
  $("lesson-text").textContent = s.text;
  showSvg($("lesson-picture"), s.svg);
  $("lesson-picture").classList.toggle("wide", Boolean(s.chart)); // a plot takes the row under the text
  if (s.chart) drawChart(s.chart, $("lesson-picture"));
  $("lesson-note").textContent = s.note || s.picture_note;
  $("where").textContent = `Step ${s.index} of ${s.count}` + (s.at_end ? " (the last)" : "");
  shown = s.index;
  $("goto").max = s.count;
  $("goto").value = s.index;
  $("lesson-text").dataset.index = s.index;
  $("lesson-text").dataset.columns = s.width;  // the columns Python wrapped the text to (the box's, measured)
  const fits = columns();
  if (fits && fits !== s.width && fits !== wrappedAgainTo) { wrappedAgainTo = fits; wrapAgain(); }
  else wrappedAgainTo = 0;
  $("predict").hidden = !s.question;  // predict, then see: the step's question and the Answer box
  $("question").textContent = s.question ? "Predict: " + s.question : "";
  $("prediction").value = "";
  $("verdict").textContent = "";
}

async function answer(event) {
  event.preventDefault();
  if (!lesson || phase !== "ready") return;
  try {
    $("verdict").textContent = await working("checking your answer",
      () => python.call("answer", lesson, shown, $("prediction").value));
  } catch (error) {
    $("verdict").textContent = error instanceof Stopped ? "Stopped: the answer was not checked." : lastLine(error);
  }
}

// --- the explorer: viz.explore's own self-contained page, made in Python, in a frame as tall as it ------------
function setUpExplorer() {
  if (address.explore !== null) {
    $("x-expr").value = address.explore;
    $("x-at").value = address.explore_at;
    $("x-predict").checked = address.predict;
  }
  $("explorer-form").onsubmit = (e) => { e.preventDefault(); drawExplorer(); };
  fitExplorer($("explorer-frame"));
  for (const id of ["x-expr", "x-at", "x-predict"]) $(id).disabled = false;
}

async function drawExplorer() {
  if (phase !== "ready") return;
  $("explorer-note").textContent = "";
  const t0 = performance.now();
  const expr = $("x-expr").value, at = $("x-at").value, predict = $("x-predict").checked;
  let html;
  try {
    html = await working("drawing G and B", () => python.call("explorer", expr, at, predict));
  } catch (error) {
    $("explorer-note").textContent = error instanceof Stopped ? "Stopped: G and B were not drawn." : lastLine(error);
    if (!(error instanceof Stopped)) pointAt($("x-expr"), error);
    return;
  }
  // The frame is sandboxed (scripts only: an origin of its own), so the browser may run it in a process of
  // its own: its page's layout of a graph of hundreds of nodes then holds that process, not this page's.
  showExplorer($("explorer-frame"), html);
  window.micrographTimes.explorer = performance.now() - t0;
  const url = new URL(location.href);  // the expression and its values in the address: a link shares the graph
  url.searchParams.set("explore", expr);
  url.searchParams.set("explore_at", at);
  if (predict) url.searchParams.set("predict", "1"); else url.searchParams.delete("predict");
  history.replaceState(null, "", url);
}

// --- exercises -----------------------------------------------------------------------------------------
const PROGRESS = "micrograph.progress";
const draftKey = (name) => "micrograph.draft." + name;
const progress = () => JSON.parse(localStorage.getItem(PROGRESS) || "{}");

function setUpExercises() {
  for (const e of catalogue.exercises) $("exercise").add(new Option(`${e.name}: ${e.title} (${e.book})`, e.name));
  $("exercise").onchange = () => loadDraft();
  $("template").onclick = () => { localStorage.removeItem(draftKey($("exercise").value)); loadDraft(); };
  $("check").onclick = () => check();
  for (const id of ["exercise", "template"]) $(id).disabled = false;
  showProgress();
}

// The solution's editor, holding the exercise's draft. It is made on first use (the Exercises tab shown, a
// draft loaded, a check), or once the page is interactive: making it holds this thread for tens of
// milliseconds, which the first lesson shown does not wait for.
function solution() {
  if (editor === null) {
    editor = new EditorView({
      doc: "",
      // Tab indents; Escape then Tab leaves the editor (CodeMirror's convention, so no keyboard trap)
      extensions: [basicSetup, keymap.of([indentWithTab]), pythonMode(), EditorView.updateListener.of((u) => {
        if (u.docChanged) {
          localStorage.setItem(draftKey($("exercise").value), u.state.doc.toString());
          noteNumpy(u.state.doc.toString());
        }
      })],
      parent: $("editor"),
    });
    editor.contentDOM.setAttribute("aria-label", "Solution");
    loadDraft();
  }
  return editor;
}

// numpy is not in this page's Python: say so before Check, as soon as the solution names it.
function noteNumpy(text) {
  const uses = /^\s*(import\s+numpy\b|from\s+numpy\b)/m.test(text);
  $("numpy-note").hidden = !uses;
  $("numpy-note").textContent = uses ? catalogue.numpy_note : "";
}

function loadDraft() {
  if (editor === null) { solution(); return; }  // made holding the draft
  const e = catalogue.exercises.find((x) => x.name === $("exercise").value);
  const text = localStorage.getItem(draftKey(e.name)) ?? e.template;
  editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: text } });
  noteNumpy(text);
  $("report").textContent = "";
  $("report").className = "";
  showSvg($("failure"), "");
}

function showProgress() {
  const done = progress();
  $("progress").replaceChildren(...catalogue.exercises.map((e) => {
    const li = document.createElement("li");
    const p = done[e.name];
    li.textContent = e.name + (p ? ` ${p.score}/${p.max_score}` : "") + (p && !p.passed && p.passed_earlier ? " (passed earlier)" : "");
    li.className = p ? (p.passed ? "passed" : "tried") : "";
    return li;
  }));
}

function takeWorker() {
  const w = spare || new SolutionWorker();
  spare = null;
  return w;
}

async function check() {
  if (phase !== "ready") return;
  const t0 = performance.now();
  const name = $("exercise").value;
  const source = solution().state.doc.toString();
  $("check-status").textContent = "Checking…";
  $("report").textContent = "";
  $("report").className = "";
  showSvg($("failure"), "");
  let worker = null;
  try {
    // The judge (lessons/publish/web_check.py, in the page's Python) decides every step and writes every word; the
    // page carries its questions to the student's worker and reports, by its clock, what happened.
    const r = await working(`checking ${name}`, async (halt) => {
      const until = (promise) => Promise.race([promise, halt]);  // a wait on the student's worker, stoppable
      const clock = () => performance.now() / 1000;
      let action = JSON.parse(await python.call("checkStart", name, source, clock()));
      while (!action.done) {
        let started = 0;
        if (action.fresh || worker === null) {  // a new worker: the first, or one after a stopped case
          if (worker) worker.terminate();
          const t = performance.now();
          worker = takeWorker();
          await until(worker.start(name));
          started = (performance.now() - t) / 1000;
          window.micrographTimes.checkWorkerWait ??= started * 1000;  // a worker still starting Python
        }
        const t = performance.now();
        const reply = await until(worker.ask(action.ask, action.seconds));
        if (!("answer" in reply)) { worker.terminate(); worker = null; }
        const happened = { ...reply, seconds: (performance.now() - t) / 1000, started };
        action = JSON.parse(await python.call("checkEvent", JSON.stringify(happened), clock()));
      }
      return JSON.parse(await python.call("checkResult"));
    });
    $("report").textContent = r.text;
    $("report").className = r.passed ? "passed" : "failed";
    showSvg($("failure"), r.svg);
    const done = progress();
    const before = done[name] || {};
    done[name] = { passed: r.passed, passed_earlier: r.passed || Boolean(before.passed || before.passed_earlier), score: r.score, max_score: r.max_score };
    localStorage.setItem(PROGRESS, JSON.stringify(done));
    showProgress();
    window.micrographTimes.check = performance.now() - t0;
    $("check-status").textContent = (r.passed ? "PASS" : "FAIL") + ` (${r.seconds.toFixed(1)} s, as the report says)`;
  } catch (error) {
    $("check-status").textContent = error instanceof Stopped
      ? "Stopped: the check did not finish, and nothing was scored." : "The check could not run: " + lastLine(error);
  } finally {
    if (worker) worker.terminate();
    spare = spare || new SolutionWorker();
  }
}

boot().catch((error) => { say("micrograph could not start: " + lastLine(error)); console.error(error); });
