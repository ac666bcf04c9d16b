// Run by `micrograph site` (lessons/publish/site.py) in Node on the site it has staged: starts the site's own
// Pyodide with its memory snapshot enabled, makes micrograph ready as the page's worker does
// (python_setup.js) and computes what every start of the page computes first (lessons.publish.web.prepare),
// and saves the memory into OUT, gzip-compressed. The page's worker starts Pyodide from it
// (python.js), which skips starting the interpreter and importing micrograph. Not shipped in the site.
// Usage: node snapshot.mjs SITE_DIRECTORY OUT
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { importWeb, unpackWheels } from "./python_setup.js";

const [site, out] = process.argv.slice(2);
const manifest = JSON.parse(readFileSync(join(site, "manifest.json"), "utf8"));
const { loadPyodide } = await import(pathToFileURL(join(site, "pyodide", "pyodide.mjs")).href);
const py = await loadPyodide({ indexURL: join(site, "pyodide") + "/", _makeSnapshot: true });
const wheels = [manifest.micrograph, ...manifest.wheels].map(
  (name) => new Uint8Array(readFileSync(join(site, "wheels", name))));
unpackWheels(py, wheels);
const web = importWeb(py);
web.prepare();  // what every start of the page computes first: the catalogue, lesson 1's first step
web.destroy();
writeFileSync(out, gzipSync(py.makeMemorySnapshot(), { level: 9 }));
