// Graphviz compiled to WebAssembly (@viz-js/viz), bundled into one file by esbuild when the site is built:
// the worker that runs the page's Python (python.js) lays every drawing out with it, off the page's thread.
export { instance as vizInstance } from "@viz-js/viz";
