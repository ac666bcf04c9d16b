// One drawing in a pane that pans and zooms with d3-zoom, the way a page with a map does it: the wheel
// scrolls the page and Ctrl+wheel zooms (a trackpad's pinch arrives as Ctrl+wheel); the mouse drags to pan;
// on a touch screen one finger scrolls the page and two fingers pan and pinch. The explorer's drawings of G
// and B (panes.js) and the lessons' pictures (picture.js) are such panes.

export var NATURAL = 4 / 3;  // 1:1, Graphviz's points as CSS pixels (1 pt = 4/3 px)
export var LEGIBLE_PX = 9;  // the least height of text on screen, in CSS pixels

// The events d3-zoom takes (its filter): the wheel only with Ctrl, a touch only with two fingers or more,
// the mouse's main button without Ctrl. Every other event keeps its default: the wheel and a one-finger
// swipe scroll the page. d3-zoom prevents the default of the events it takes (Ctrl+wheel: no page zoom).
export function gesture(e) {
  if (e.type === "wheel") { return e.ctrlKey; }
  if (e.type === "touchstart") { return e.touches.length >= 2; }
  return !e.ctrlKey && !e.button;
}

// How far one wheel event zooms (d3-zoom's wheelDelta, as a power of 2): d3-zoom's own amount, which is
// made for a trackpad's pinch (many small Ctrl+wheel events), at most 0.3 for one event: a mouse wheel's
// notch with Ctrl (deltaY 100) zooms by 2^0.3 = 1.23, as a button does (1.25), not by 4.
export function wheelDelta(e) {
  var d = -e.deltaY * (e.deltaMode === 1 ? 0.05 : e.deltaMode ? 1 : 0.002) * (e.ctrlKey ? 10 : 1);
  return Math.max(-0.3, Math.min(0.3, d));
}

// Makes `drawing` pan and zoom inside `pane`. `drawing` is an <svg> (its children are moved into one <g>
// whose transform attribute d3-zoom sets; the svg fills the pane) or an HTML element whose content fills
// it, such as a frame (sized w x h CSS pixels times the scale, and moved by a CSS transform: a frame laid
// out at its size on screen is rastered at it, where a scaled one is rastered whole at scale 1, which took
// seconds for a drawing of 6000 x 6000 points; the pane takes the gestures). `w` and `h` are the drawing's
// size in its own units; `least` and `most` bound the scale. `moved(transform)` is called after each move.
// Returns the pane's view z: { pane, svg (the element d3-zoom listens on), g (the element moved), w, h, k
// (the scale now), zoom, sel, ready }.
export function zoomable(d3, pane, drawing, w, h, least, most, moved) {
  var svg = drawing.namespaceURI === "http://www.w3.org/2000/svg", g = drawing, on = pane;
  if (svg) {
    ["width", "height", "viewBox"].forEach(function (a) { drawing.removeAttribute(a); });
    g = document.createElementNS("http://www.w3.org/2000/svg", "g");
    g.setAttribute("class", "mg-zoom");
    while (drawing.firstChild) { g.appendChild(drawing.firstChild); }
    drawing.appendChild(g);
    on = drawing;
  }
  var z = { pane: pane, svg: on, g: g, w: w, h: h, k: 1, ready: false };
  z.zoom = d3.zoom().scaleExtent([least, most]).filter(gesture).wheelDelta(wheelDelta).on("zoom", function (ev) {
    var t = ev.transform;
    if (svg) { g.setAttribute("transform", t.toString()); } else {  // laid out at its size on screen
      g.style.width = w * t.k + "px"; g.style.height = h * t.k + "px";
      g.style.transform = "translate(" + t.x + "px, " + t.y + "px)";
    }
    z.k = t.k;
    pane.setAttribute("data-scale", t.k.toFixed(4));
    if (moved) { moved(t); }
  });
  z.sel = d3.select(on).call(z.zoom).on("dblclick.zoom", null);
  return z;
}

// The pane's size in CSS pixels (at least 1 x 1).
export function size(z) { return [z.pane.clientWidth || 1, z.pane.clientHeight || 1]; }

// The scale at which the whole drawing fits the pane.
export function fitScale(z) { var s = size(z); return Math.min(s[0] / z.w, s[1] / z.h); }

// The view at `scale` with the drawing's point (cx, cy) at the pane's centre.
export function setView(d3, z, scale, cx, cy) {
  var s = size(z);
  z.sel.call(z.zoom.transform, d3.zoomIdentity.translate(s[0] / 2 - scale * cx, s[1] / 2 - scale * cy).scale(scale));
}

// The view at `scale` whose top left corner is the drawing's point (x, y), kept inside the drawing where
// the pane is smaller than it and centred where the pane is larger.
export function setCorner(d3, z, scale, x, y) {
  var s = size(z), hx = s[0] / (2 * scale), hy = s[1] / (2 * scale);  // half the pane, in drawing units
  function place(at, half, whole) { return 2 * half >= whole ? whole / 2 : Math.max(half, Math.min(at + half, whole - half)); }
  setView(d3, z, scale, place(x, hx, z.w), place(y, hy, z.h));
}

// The keys of a focused pane: the arrows pan by a tenth of the pane, + and - zoom (as the buttons do).
export function panKeys(d3, z) {
  z.pane.addEventListener("keydown", function (e) {
    var s = size(z), step = { ArrowLeft: [1, 0], ArrowRight: [-1, 0], ArrowUp: [0, 1], ArrowDown: [0, -1] }[e.key];
    if (step) { z.sel.call(z.zoom.translateBy, step[0] * s[0] / (10 * z.k), step[1] * s[1] / (10 * z.k)); }
    else if (e.key === "+" || e.key === "=") { z.sel.call(z.zoom.scaleBy, 1.25); }
    else if (e.key === "-") { z.sel.call(z.zoom.scaleBy, 0.8); }
    else { return; }
    e.preventDefault(); e.stopPropagation();
  });
}
