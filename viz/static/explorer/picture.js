// A lesson's picture (a Graphviz drawing) in its place on a page: at 1:1 (1 pt = 4/3 px) where its place
// holds it, else shrunk to its place's width while its smallest text stays at least 9 px high, and where
// even that is too wide, at that legible scale in a pane that pans and zooms as the explorer's drawings do
// (pan.js: drag, Ctrl+wheel, pinch, the buttons, the arrow keys; the wheel scrolls the page). It is never
// shown smaller than legible: the least zoom is the legible scale. Used by the site's page (app.js), the
// tour's lesson pages and the step-through pages (viz.steps: a hidden frame's drawing is laid out when it is
// shown).
import { LEGIBLE_PX, NATURAL, gesture, panKeys, setCorner, zoomable } from "./pan.js";
import { button, make } from "./words.js";

var TALLEST = 0.7;  // a pane's greatest height, as a share of the window's
var FONT = 10;  // the smallest text's size, in points, of a drawing that names none (its text is paths)

// Where a Graphviz drawing's first node is (its first text), in the drawing's units: the first node of the
// graph, u(1) in micrograph's drawings, where the drawing is read from; null in a drawing of another kind.
function firstNode(drawing) {
  var t = drawing.querySelector("g.node > text"), graph = drawing.querySelector("g.graph");
  if (!t) { return null; }
  var shift = /translate\(\s*([-\d.]+)[\s,]+([-\d.]+)\s*\)/.exec(graph ? graph.getAttribute("transform") || "" : "");
  return [parseFloat(t.getAttribute("x")) + (shift ? +shift[1] : 0), parseFloat(t.getAttribute("y")) + (shift ? +shift[2] : 0)];
}

// The drawing's size, smallest text and first node, in its own units (Graphviz's and matplotlib's:
// points), from an inline <svg>; `given` (the same fields) for a drawing in a frame, whose document this
// page cannot read.
function measure(drawing, given) {
  if (given) { return given; }
  var box = (drawing.getAttribute("viewBox") || "").split(/[\s,]+/).map(Number);
  var w = box[2] || drawing.width.baseVal.value || 100, h = box[3] || drawing.height.baseVal.value || 100;
  var font = Infinity;
  drawing.querySelectorAll("text[font-size]").forEach(function (t) {
    var f = parseFloat(t.getAttribute("font-size"));
    if (f > 0) { font = Math.min(font, f); }
  });
  return { w: w, h: h, font: font < Infinity ? font : FONT, first: firstNode(drawing) };
}

// The pictures of a page: `show(box, given)` lays out the drawing in `box` (an inline <svg>, or an <iframe>
// of one with `given` = { w, h, font, first }); `showAll(root)` every element of class mg-picture under
// `root`.
// `W` is the page's words (viz.pictures.PICTURE_WORDS), `css` the pictures' style, put in the page here.
export function pictures(d3, W, css) {
  var sheet = make("style", null, css);
  document.head.appendChild(sheet);
  function show(box, given) {
    if (box.mgPicture) { box.mgPicture.stop(); }  // the drawing shown before this one is gone
    box.mgPicture = null;
    box.classList.remove("mg-panned");
    box.style.minWidth = "";
    var drawing = box.querySelector("svg, iframe");
    if (!drawing) { return; }
    box.classList.add("mg-picture");
    var m = measure(drawing, given), least = LEGIBLE_PX / m.font;
    var pane = make("div", "mg-picture-pane");
    box.insertBefore(pane, drawing);
    pane.appendChild(drawing);
    pane.style.cssText = "position: relative; overflow: hidden; touch-action: pan-x pan-y; max-width: 100%; box-sizing: border-box;";
    drawing.style.cssText = drawing.tagName.toLowerCase() === "svg" ? "display: block; width: 100%; height: 100%;"
      : "position: absolute; left: 0; top: 0; border: 0; pointer-events: none;";  // the pane takes the gestures
    var tools = make("div", "mg-picture-tools");
    var zoomIn = button(W, "zoom_in", "mg-zoom-in"), zoomOut = button(W, "zoom_out", "mg-zoom-out");
    tools.appendChild(zoomIn); tools.appendChild(zoomOut); tools.appendChild(make("span", "mg-picture-help", W.picture_help));
    box.appendChild(tools);
    // a row of flex items puts the picture on a line of its own rather than shrink it below legible
    box.style.minWidth = "min(100%, " + Math.ceil(m.w * least) + "px)";
    var z = zoomable(d3, pane, drawing, m.w, m.h, least, 8, null);
    var panned = false, width = -1;
    z.zoom.filter(function (e) { return panned && gesture(e); });
    zoomIn.addEventListener("click", function () { z.sel.call(z.zoom.scaleBy, 1.25); });
    zoomOut.addEventListener("click", function () { z.sel.call(z.zoom.scaleBy, 0.8); });
    panKeys(d3, z);
    function firstView() {  // at the first node, at the left and half-way down; else from the top left
      var s = [pane.clientWidth, pane.clientHeight], f = m.first;
      setCorner(d3, z, least, f ? f[0] - s[0] / (4 * least) : 0, f ? f[1] - s[1] / (2 * least) : 0);
    }
    function layout() {
      var avail = box.clientWidth;
      if (avail === width || avail === 0) { return; }
      width = avail;
      var k = Math.min(NATURAL, avail / m.w), was = panned;
      panned = k < least;
      box.classList.toggle("mg-panned", panned);
      tools.hidden = !panned;
      if (panned) {
        pane.tabIndex = 0;
        pane.setAttribute("role", "group");
        pane.setAttribute("aria-label", W.picture);
        pane.style.width = "100%";
        pane.style.height = Math.ceil(Math.min(m.h * least, window.innerHeight * TALLEST)) + "px";
        if (!was) { firstView(); }
      } else {
        pane.removeAttribute("tabindex"); pane.removeAttribute("role"); pane.removeAttribute("aria-label");
        pane.style.width = m.w * k + "px";
        pane.style.height = m.h * k + "px";
        z.sel.call(z.zoom.transform, d3.zoomIdentity.scale(k));
      }
    }
    var watch = window.ResizeObserver ? new ResizeObserver(layout) : null;
    box.mgPicture = { z: z, stop: function () { if (watch) { watch.disconnect(); } } };
    layout();
    if (watch) { watch.observe(box); }
  }
  function showAll(root) {
    (root || document).querySelectorAll(".mg-picture").forEach(function (box) { show(box); });
  }
  return { show: show, showAll: showAll };
}
