// micrograph's site: the lessons and the exercises, with micrograph running in Pyodide on this page.
// Every text, number and picture comes from micrograph's Python (lessons/web.py); this file moves between
// steps, lays drawings out with Graphviz compiled to WebAssembly, and drives exercise checks: the judge runs
// here, the student's code in a Web Worker (worker.js) that is terminated when a case runs out of time.
import { EditorView, basicSetup, indentWithTab, keymap, python, vizInstance } from "./vendor.js";
import { loadPyodide } from "./pyodide/pyodide.mjs";
import { drawChart } from "./charts.js";

const $ = (id) => document.getElementById(id);
const say = (text) => { $("status").textContent = text; };
// A Python exception's last line without its class's module path: "syntax error: '(' was never closed ..."
const lastLine = (error) => String(error && error.message ? error.message : error).trim().split("\n").pop()
  .replace(/^(?:[A-Za-z_][\w]*\.)*(?:ExprError|DomainError|ValueError): /, "");

let web = null;
let catalogue = null;
let address = { lesson: null, expr: "", at: "", step: null, exercise: null, explore: null, explore_at: "", predict: false, notes: [] };
let view = null;
let editor = null;
let spare = null;
let checking = false;
let caseSeconds = 4;     // a case's seconds of the page's clock when it sets none (manifest.json says)
let slower = 2;          // a case's own CPU limit times this, in the page
let budgetSeconds = 30;  // the whole check's seconds spent in cases, after which the rest are not run
let wallSeconds = 90;
window.micrographTimes = {};

// --- start-up ------------------------------------------------------------------------------------------
async function boot() {
  const t0 = performance.now();
  say("Loading Python…"); // loading.js may have said, after a slow start, that this script had not loaded
  // The Web Worker for the first exercise check starts its Python beside the page's: the page becomes
  // interactive a little later, and a check made at once answers several times sooner, which keeps both
  // budgets wider (benchmarks/site.py measures them; docs/performance.md, "The site in the browser").
  spare = new SolutionWorker();
  const manifest = await (await fetch("manifest.json")).json();
  caseSeconds = manifest.case_seconds;
  slower = manifest.slower;
  budgetSeconds = manifest.budget_seconds;
  wallSeconds = manifest.wall_seconds;
  const [py, viz] = await Promise.all([
    loadPyodide({ indexURL: new URL("pyodide/", location.href).href }),
    vizInstance(),
  ]);
  window.micrographTimes.python = performance.now() - t0; // Pyodide and Graphviz loaded
  for (const name of [manifest.micrograph, ...manifest.wheels]) {
    const data = await (await fetch("wheels/" + name)).arrayBuffer();
    py.unpackArchive(data, "zip", { extractDir: "/mg" });
  }
  py.runPython("import sys; sys.path.insert(0, '/mg')");
  web = py.pyimport("lessons.web");
  window.micrographTimes.imported = performance.now() - t0; // micrograph's modules imported
  web.setup((source) => viz.renderString(source, { format: "svg", engine: "dot" }));
  catalogue = JSON.parse(web.catalogue());
  address = JSON.parse(web.read_address(location.search));  // a link's parts, checked; notes for the rest
  setUpLessons();
  setUpExercises();
  setUpExplorer();
  await startLesson();
  if (address.step !== null) move("goto", address.step);
  if (address.exercise !== null) { $("exercise").value = address.exercise; loadDraft(); showTab("exercises"); }
  if (address.notes.length) $("lesson-note").textContent = [$("lesson-note").textContent, ...address.notes].filter(Boolean).join(" ");
  window.micrographTimes.interactive = performance.now() - t0;
  say(`Ready: micrograph ${manifest.version} in Python ${manifest.python} (Pyodide ${manifest.pyodide}).`);
  document.body.dataset.ready = "true";
}

function showTab(which) {
  for (const name of ["lessons", "exercises", "explorer"]) {
    $(name).hidden = name !== which;
    $("tab-" + name).setAttribute("aria-pressed", String(name === which));
  }
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
  for (const id of ["lesson", "expr", "at", "start", "next", "back", "goto", "go"]) $(id).disabled = false;
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
  $("lesson-note").textContent = "";
  if (view) { view.destroy(); view = null; }
  try {
    view = web.LessonView($("lesson").value | 0, $("expr").value, $("at").value);
  } catch (error) {  // the page stays usable: the failed lesson's controls reset, the boxes enabled
    $("lesson-note").textContent = lastLine(error);
    $("lesson-text").textContent = "";
    $("lesson-picture").innerHTML = "";
    $("where").textContent = "";
    $("predict").hidden = true;
    for (const id of ["next", "back", "goto", "go"]) $(id).disabled = true;
    return;
  }
  for (const id of ["next", "back", "goto", "go"]) $(id).disabled = false;
  const url = new URL(location.href);
  url.searchParams.set("lesson", $("lesson").value);
  if (!$("expr").disabled) { url.searchParams.set("expr", $("expr").value); url.searchParams.set("at", $("at").value); }
  else { url.searchParams.delete("expr"); url.searchParams.delete("at"); }
  history.replaceState(null, "", url);
  show(view.move("here", 0, columns()));
}

function move(how, k = 0) {
  if (!view) return;
  try {
    show(view.move(how, k, columns()));
  } catch (error) {
    $("lesson-note").textContent = lastLine(error);
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
window.addEventListener("resize", () => {  // a turned phone or a resized window: the same step, wrapped again
  clearTimeout(rewrap);
  rewrap = setTimeout(() => { if (view) move("here"); }, 150);
});

function show(json) {
  const s = JSON.parse(json);
  $("lesson-text").textContent = s.text;
  $("lesson-picture").innerHTML = s.svg;
  $("lesson-picture").classList.toggle("wide", Boolean(s.chart)); // a plot takes the row under the text
  if (s.chart) drawChart(s.chart, $("lesson-picture"));
  $("lesson-note").textContent = s.note || s.picture_note;
  $("where").textContent = `Step ${s.index} of ${s.count}` + (s.at_end ? " (the last)" : "");
  $("goto").max = s.count;
  $("goto").value = s.index;
  $("lesson-text").dataset.index = s.index;
  $("predict").hidden = !s.question;  // predict, then see: the step's question and the Answer box
  $("question").textContent = s.question ? "Predict: " + s.question : "";
  $("prediction").value = "";
  $("verdict").textContent = "";
}

function answer(event) {
  event.preventDefault();
  if (!view) return;
  try {
    $("verdict").textContent = view.answer($("prediction").value);
  } catch (error) {
    $("verdict").textContent = lastLine(error);
  }
}

// --- the explorer: viz.explore's own self-contained page, made in Python here and shown in a frame ----------
function setUpExplorer() {
  if (address.explore !== null) {
    $("x-expr").value = address.explore;
    $("x-at").value = address.explore_at;
    $("x-predict").checked = address.predict;
  }
  $("explorer-form").onsubmit = (e) => { e.preventDefault(); drawExplorer(); };
  for (const id of ["x-expr", "x-at", "x-predict", "x-draw"]) $(id).disabled = false;
  if (address.explore !== null) { showTab("explorer"); drawExplorer(); }
}

function drawExplorer() {
  $("explorer-note").textContent = "";
  const t0 = performance.now();
  let html;
  try {
    html = web.explorer_html($("x-expr").value, $("x-at").value, $("x-predict").checked);
  } catch (error) {
    $("explorer-note").textContent = lastLine(error);
    return;
  }
  $("explorer-frame").srcdoc = html;
  window.micrographTimes.explorer = performance.now() - t0;
  const url = new URL(location.href);  // the expression and its values in the address: a link shares the graph
  url.searchParams.set("explore", $("x-expr").value);
  url.searchParams.set("explore_at", $("x-at").value);
  if ($("x-predict").checked) url.searchParams.set("predict", "1"); else url.searchParams.delete("predict");
  history.replaceState(null, "", url);
}

// --- exercises -----------------------------------------------------------------------------------------
const PROGRESS = "micrograph.progress";
const draftKey = (name) => "micrograph.draft." + name;
const progress = () => JSON.parse(localStorage.getItem(PROGRESS) || "{}");

function setUpExercises() {
  for (const e of catalogue.exercises) $("exercise").add(new Option(`${e.name}: ${e.title} (${e.book})`, e.name));
  editor = new EditorView({
    doc: "",
    // Tab indents; Escape then Tab leaves the editor (CodeMirror's convention, so no keyboard trap)
    extensions: [basicSetup, keymap.of([indentWithTab]), python(), EditorView.updateListener.of((u) => {
      if (u.docChanged) {
        localStorage.setItem(draftKey($("exercise").value), u.state.doc.toString());
        noteNumpy(u.state.doc.toString());
      }
    })],
    parent: $("editor"),
  });
  editor.contentDOM.setAttribute("aria-label", "Solution");
  $("exercise").onchange = () => loadDraft();
  $("template").onclick = () => { localStorage.removeItem(draftKey($("exercise").value)); loadDraft(); };
  $("check").onclick = () => check();
  for (const id of ["exercise", "check", "template"]) $(id).disabled = false;
  loadDraft();
  showProgress();
}

// numpy is not in this page's Python: say so before Check, as soon as the solution names it.
function noteNumpy(text) {
  const uses = /^\s*(import\s+numpy\b|from\s+numpy\b)/m.test(text);
  $("numpy-note").hidden = !uses;
  $("numpy-note").textContent = uses ? catalogue.numpy_note : "";
}

function loadDraft() {
  const e = catalogue.exercises.find((x) => x.name === $("exercise").value);
  const text = localStorage.getItem(draftKey(e.name)) ?? e.template;
  editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: text } });
  noteNumpy(text);
  $("report").textContent = "";
  $("report").className = "";
  $("failure").innerHTML = "";
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

// The student's side: one Web Worker, booted ahead of time; used for one check, then thrown away.
class SolutionWorker {
  constructor() {
    this.worker = new Worker("worker.js", { type: "module" });
    this.waiting = null;
    this.ready = new Promise((resolve) => { this.onReady = resolve; });
    this.worker.onmessage = (e) => {
      if (e.data.ready) { this.onReady(); return; }
      const w = this.waiting; this.waiting = null;
      if (w) w(e.data);
    };
    this.worker.onerror = (e) => {
      const w = this.waiting; this.waiting = null;
      if (w) w({ stop: { kind: "crash", detail: "the solution's interpreter stopped: " + (e.message || "an error") } });
    };
  }
  post(message, seconds) {
    return new Promise((resolve) => {
      const timer = seconds ? setTimeout(() => {
        this.waiting = null;
        this.terminate();
        resolve({ stop: { kind: "cpu", detail: `the case ran longer than ${seconds.toFixed(1)} s of the page's clock`, seconds } });
      }, seconds * 1000) : null;
      this.waiting = (data) => { if (timer) clearTimeout(timer); resolve(data); };
      this.worker.postMessage(message);
    });
  }
  async start(exercise) { await this.ready; return this.post({ exercise }, 0); }
  ask(request, seconds) { return this.post({ request }, seconds); }
  terminate() { this.worker.terminate(); }
}

async function freshWorker(exercise) {
  const w = spare || new SolutionWorker();
  spare = new SolutionWorker();  // the next one starts its Python now, while this one works
  await w.start(exercise);
  return w;
}

async function check() {
  if (checking) return;
  checking = true;
  $("check").disabled = true;
  const t0 = performance.now();
  const name = $("exercise").value;
  $("check-status").textContent = "Checking…";
  $("report").textContent = "";
  $("report").className = "";
  $("failure").innerHTML = "";
  let session = null;
  let worker = null;
  try {
    session = web.ExerciseCheck(name, editor.state.doc.toString(), 0);
    const asked = performance.now();
    worker = await freshWorker(name);
    window.micrographTimes.checkWorkerWait = performance.now() - asked;  // a worker still starting Python
    let question = session.first();
    const deadline = t0 + wallSeconds * 1000;
    let spent = 0;  // seconds the cases and the restarts took, charged to the budget as the command line does
    while (question) {
      if (performance.now() > deadline) {  // the whole check's limit, on this page's clock
        question = session.send(JSON.stringify({ stop: { kind: "wall", detail: `the whole check's time limit (${wallSeconds} s) was reached before this case` } }), "");
        continue;
      }
      const left = budgetSeconds - spent;
      if (left <= 0.01) {
        question = session.send(JSON.stringify({ stop: { kind: "budget", detail: `not run: the check's time budget (${budgetSeconds} s of the page's clock) was spent` } }), "");
        continue;
      }
      if (worker === null) {  // the last worker was stopped: a new one, with the solution loaded again
        const restarted = performance.now();  // charged to the budget, as the command line charges start-ups
        worker = await freshWorker(name);
        const loaded = await worker.ask(session.reload());
        spent += (performance.now() - restarted) / 1000;
        if (loaded.stop || !JSON.parse(loaded.answer).ok) {
          worker.terminate(); worker = null;
          question = session.send(JSON.stringify({ stop: { kind: "crash", detail: "the solution could not be loaded again" } }), "");
          continue;
        }
      }
      const own = JSON.parse(question).cpu;  // the case's CPU limit on the command line, if it sets one
      const seconds = Math.min(own ? own * slower : caseSeconds, left);
      const started = performance.now();
      const reply = await worker.ask(question, seconds);
      spent += (performance.now() - started) / 1000;
      if (reply.stop && reply.stop.kind === "cpu" && seconds === left && seconds < (own ? own * slower : caseSeconds)) {
        reply.stop = { kind: "budget", detail: `the check's time budget (${budgetSeconds} s of the page's clock) was spent during this case`, seconds };
      }
      if (reply.stop) {
        worker.terminate(); worker = null;
        question = session.send(JSON.stringify({ stop: reply.stop }), "");
      } else {
        question = session.send(reply.answer, reply.printed);
      }
    }
    const r = JSON.parse(session.result());
    $("report").textContent = r.text;
    $("report").className = r.passed ? "passed" : "failed";
    $("failure").innerHTML = r.svg;
    const done = progress();
    const before = done[name] || {};
    done[name] = { passed: r.passed, passed_earlier: r.passed || Boolean(before.passed || before.passed_earlier), score: r.score, max_score: r.max_score };
    localStorage.setItem(PROGRESS, JSON.stringify(done));
    showProgress();
    window.micrographTimes.check = performance.now() - t0;
    $("check-status").textContent = (r.passed ? "PASS" : "FAIL") + ` (${r.seconds.toFixed(1)} s, as the report says)`;
  } catch (error) {
    $("check-status").textContent = "The check could not run: " + lastLine(error);
  } finally {
    if (worker) worker.terminate();
    if (session) session.destroy();
    spare = spare || new SolutionWorker();
    checking = false;
    $("check").disabled = false;
  }
}

boot().catch((error) => { say("micrograph could not start: " + lastLine(error)); console.error(error); });
