#!/bin/sh
# Rebuild d3-zoom.bundle.js from the versions package-lock.json pins: `npm ci --ignore-scripts && ./build.sh`.
# The UMD builds are concatenated in dependency order inside one function whose globalThis, exports,
# module and define are its own, so the page gets `micrographD3` and nothing else (Jupyter's require.js
# `define` is never called). Their licenses are collected in LICENSES.txt beside the bundle.
set -eu
cd "$(dirname "$0")"
PACKAGES="d3-dispatch d3-selection d3-drag d3-color d3-interpolate d3-ease d3-timer d3-transition d3-zoom"
{
  echo "// d3-zoom and its dependencies (ISC license, https://d3js.org; see LICENSES.txt), from npm:"
  for p in $PACKAGES; do echo "//   $p $(node -p "require('./node_modules/$p/package.json').version")"; done
  echo "var micrographD3 = (function (globalThis, self, exports, module, define) {"
  for p in $PACKAGES; do cat "node_modules/$p/dist/$p.min.js"; echo; done
  echo "return globalThis.d3; })({}, undefined, undefined, undefined, undefined);"
} > d3-zoom.bundle.js
{
  for p in $PACKAGES; do echo "== $p $(node -p "require('./node_modules/$p/package.json').version") =="; cat "node_modules/$p/LICENSE"; echo; done
} > LICENSES.txt
