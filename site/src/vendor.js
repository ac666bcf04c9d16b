// The page's JavaScript from npm, bundled into one file by esbuild when the site is built (no CDN):
// CodeMirror 6 (the exercise editor, Python mode; Tab indents, Escape then Tab leaves it) and Observable Plot
// (the lessons' plots, from viz.charts data: site/src/charts.js). Graphviz is graphviz.js's, in the worker
// that runs the page's Python (python.js).
export { EditorView, basicSetup } from "codemirror";
export { keymap } from "@codemirror/view";
export { indentWithTab } from "@codemirror/commands";
export { python } from "@codemirror/lang-python";
export * as Plot from "@observablehq/plot";
