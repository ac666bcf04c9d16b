// The page's Python in a Web Worker of its own: Pyodide with micrograph's files (lessons/publish/web.py), and Graphviz
// compiled to WebAssembly to lay the drawings out, both off the page's thread, so that a large expression's
// minutes of work never freeze the page and the page's Stop button can end it (it terminates this worker and
// starts another). The page (app.js) asks by message, { id, op, args }, and gets { id, result } or
// { id, error }: every result is the text lessons.publish.web returns (JSON, SVG or HTML), which the page shows.
// This worker holds the judge of an exercise check (lessons.publish.web_check.ExerciseCheck), which decides every
// step; the student's code runs in another worker (worker.js), which holds no answer key, and the page
// relays the questions between the two.
import { loadPyodide } from "./pyodide/pyodide.mjs";
import { vizInstance } from "./graphviz.js";
import { importWeb, unpackWheels } from "./python_setup.js";

const now = () => performance.timeOrigin + performance.now(); // the page's clock and this one agree on it

let web = null;
let pyodide = null;
let webCheck = null;  // lessons.publish.web_check, imported at the first check (the judges are not needed before)
let view = null;     // the lesson being stepped, a lessons.publish.web.LessonView
let viewKey = null;  // which lesson, expression and values it was started on
let session = null;  // the exercise check being judged, a lessons.publish.web_check.ExerciseCheck

// Pyodide started from the image of its memory that the site's build saved with micrograph imported
// (snapshot.mjs): the interpreter's start and micrograph's imports are skipped. A site without the image,
// or an image this Pyodide cannot take, starts Python the plain way; `snapshot` says which ran.
async function startPython() {
  const indexURL = new URL("pyodide/", self.location.href).href;
  try {
    const response = await fetch("pyodide/snapshot.gz");
    if (!response.ok) throw new Error(`snapshot: ${response.status}`);
    const image = await new Response(response.body.pipeThrough(new DecompressionStream("gzip"))).arrayBuffer();
    return { py: await loadPyodide({ indexURL, _loadSnapshot: new Uint8Array(image) }), snapshot: true };
  } catch (error) {
    console.warn("micrograph: Python starts without its saved image:", error);
    return { py: await loadPyodide({ indexURL }), snapshot: false };
  }
}

// Graphviz's first layout takes several times as long as the next ones (its WebAssembly not yet optimised):
// a small graph laid out while Python is still starting makes the first lesson's drawing one of the next.
function warmed(viz) {
  viz.renderString("digraph { a -> b }", { format: "svg", engine: "dot" });
  return viz;
}

const booting = (async () => {
  const manifest = fetch("manifest.json").then((r) => r.json());
  const wheels = manifest.then((m) => Promise.all([m.micrograph, ...m.wheels].map(  // fetched meanwhile
    (name) => fetch("wheels/" + name).then((r) => r.arrayBuffer().then((b) => new Uint8Array(b))))));
  const [{ py, snapshot }, viz] = await Promise.all([startPython(), vizInstance().then(warmed)]);
  const python = now(); // Pyodide and Graphviz loaded
  unpackWheels(py, await wheels);
  web = importWeb(py);
  pyodide = py;
  web.setup((source) => viz.renderString(source, { format: "svg", engine: "dot" }));
  return { python, imported: now(), snapshot };
})();

// The lesson a step belongs to: the page names it with every request, so that after a Stop (a new worker,
// which holds no lesson) the next step starts it again, at the step the page shows, before moving.
function lessonAt(lesson, shown) {
  const key = JSON.stringify([lesson.number, lesson.expr, lesson.at]);
  if (key !== viewKey || view === null) {
    startLesson(lesson);
    if (shown > 1) view.move("goto", shown, 0);
  }
  return view;
}

function startLesson(lesson) {
  if (view) view.destroy();
  view = null;
  viewKey = null;
  view = web.LessonView(lesson.number, lesson.expr, lesson.at);
  viewKey = JSON.stringify([lesson.number, lesson.expr, lesson.at]);
  return view;
}

function endCheck() {
  if (session) session.destroy();
  session = null;
}

const OPS = {
  catalogue: () => web.catalogue(),
  readAddress: (query) => web.read_address(query),
  lesson: (lesson, width) => startLesson(lesson).move("here", 0, width),
  move: (lesson, shown, how, k, width) => lessonAt(lesson, shown).move(how, k, width),
  answer: (lesson, shown, text) => lessonAt(lesson, shown).answer(text),
  explorer: (expr, at, predict) => web.explorer_html(expr, at, predict),
  checkStart: (name, source, now) => {
    endCheck();
    webCheck ??= pyodide.pyimport("lessons.publish.web_check");
    session = webCheck.ExerciseCheck(name, source, now, 0);
    return session.action(now);
  },
  checkEvent: (happened, now) => { session.event(happened); return session.action(now); },
  checkResult: () => {
    const result = session.result();
    endCheck();
    return result;
  },
};

booting.then(
  (times) => self.postMessage({ ready: true, times }),
  (error) => self.postMessage({ failed: String(error && error.message ? error.message : error) }),
);

self.onmessage = async (event) => {
  const { id, op, args } = event.data;
  try {
    await booting;
    self.postMessage({ id, result: OPS[op](...args) });
  } catch (error) {  // a Python exception: its message, whose last line the page shows
    self.postMessage({ id, error: String(error && error.message ? error.message : error) });
  }
};
