// The page's Python made ready, written once for the two places that do it: the worker that runs it
// (python.js, in the browser) and the site's build (snapshot.mjs, in Node), which saves Pyodide's memory
// once this has run, so that the page starts from that image instead of starting Python and importing
// micrograph again.

// micrograph's wheel and the others, unpacked where the page's Python imports them from; on a Python
// started from the image the modules already imported are in memory, and the files are unpacked again
// for the ones imported later.
export function unpackWheels(py, wheels) {
  for (const data of wheels) py.unpackArchive(data, "zip", { extractDir: "/mg" });
  py.runPython("import sys\nif '/mg' not in sys.path: sys.path.insert(0, '/mg')");
}

// What the page asks of micrograph (lessons/publish/web.py), imported.
export function importWeb(py) {
  return py.pyimport("lessons.publish.web");
}
