// The student's side of an exercise check in the browser: a Web Worker running Pyodide with micrograph's
// files and lessons/exercises/child.py, the same per-message core (Child.handle) as the CPython child of
// `micrograph exercise check`. It holds no answer key and no judge: it receives each question as JSON and
// posts back the solution's answer as JSON, with what the solution printed. The page stops it with
// terminate() when a case runs out of time, and starts a new one.
import { loadPyodide } from "./pyodide/pyodide.mjs";

let py = null;
let printed = [];

const CHILD = `
import importlib.util, json, sys
sys.path.insert(0, "/mg")  # child.py's siblings (what the solution is given, the calls) are imported from here
_spec = importlib.util.spec_from_file_location("micrograph_child", "/mg/lessons/exercises/child.py")
_child_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_child_module)
_CHILD = None

def start(exercise):
    global _CHILD
    _CHILD = _child_module.Child("/mg", exercise)
    sys.setrecursionlimit(1000)

def handle(text):
    return json.dumps(_CHILD.handle(json.loads(text)), allow_nan=True)
`;

const booting = (async () => {
  const manifest = await (await fetch("manifest.json")).json();
  py = await loadPyodide({
    indexURL: new URL("pyodide/", self.location.href).href,
    stdout: (line) => printed.push(line),
    stderr: (line) => printed.push(line),
  });
  const wheel = await (await fetch("wheels/" + manifest.micrograph)).arrayBuffer();
  py.unpackArchive(wheel, "zip", { extractDir: "/mg" });
  py.runPython(CHILD);
  self.postMessage({ ready: true });
})();

self.onmessage = async (event) => {
  await booting;
  const message = event.data;
  if (message.exercise) {
    py.globals.get("start")(message.exercise);
    self.postMessage({ started: message.exercise });
    return;
  }
  printed = [];
  let answer;
  try {
    answer = py.globals.get("handle")(message.request);
  } catch (error) {
    // Child.handle turns the solution's exceptions into answers; this is the interpreter itself failing
    self.postMessage({ failed: String(error).split("\n").pop() });
    return;
  }
  self.postMessage({ answer, printed: printed.map((line) => line + "\n").join("") });
};
