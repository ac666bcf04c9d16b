// The page's drawings: a lesson's picture or an exercise's failure (a Graphviz drawing, kept legible and
// panned and zoomed where its place is too narrow: micrographPictures, pictures.js, the explorer's own pane
// code), and the explorer, viz.explore's own page in a frame made as tall as that page, so that the page
// scrolls as one page and nothing scrolls inside the frame.

// A drawing's SVG into `box`: inline, as Graphviz wrote it, up to INLINE_CHARS (a lesson's own drawings are
// 40 kB at most); a larger one (0.4 MB for lesson 2 on a product of 201 factors: its parsing, layout and
// painting held the page's thread for 100 ms and more, at once and again at each repaint) in a sandboxed
// frame of its own (no scripts, an origin of its own), which the browser may lay out and paint in a process
// of its own, off this page's thread. Either is then laid out by micrographPictures: at 1:1 where the box
// holds it, shrunk while its smallest text stays 9 px high or more, else at that scale in a pane that pans
// and zooms (the frame is moved as a whole: its drawing's size and smallest text are read here, from the
// SVG's text, as the page cannot read the frame's document).
const INLINE_CHARS = 100_000;
export function showSvg(box, svg) {
  if (svg.length <= INLINE_CHARS) {
    box.innerHTML = svg;
    window.micrographPictures.show(box);  // nothing to lay out in a box left empty
    return;
  }
  const size = /<svg[^>]*?\swidth="([\d.]+)pt"[^>]*?\sheight="([\d.]+)pt"/.exec(svg.slice(0, 2000));
  const [width, height] = size ? [Number(size[1]), Number(size[2])] : [600, 450];  // in points
  const fonts = Array.from(svg.matchAll(/font-size="([\d.]+)"/g), (m) => Number(m[1])).filter((f) => f > 0);
  const node = svg.indexOf('class="node"');  // the first node's first text, in the graph's translated units
  const text = node < 0 ? null : /<text[^>]*?\sx="([-\d.]+)"[^>]*?\sy="([-\d.]+)"/.exec(svg.slice(node, node + 4000));
  const shift = /class="graph"[^>]*?translate\(([-\d.]+)[\s,]+([-\d.]+)\)/.exec(svg.slice(0, 4000));
  const first = text ? [Number(text[1]) + (shift ? Number(shift[1]) : 0), Number(text[2]) + (shift ? Number(shift[2]) : 0)] : null;
  const frame = document.createElement("iframe");
  frame.className = "drawing";
  frame.title = box.getAttribute("aria-label") || "Drawing";
  frame.setAttribute("sandbox", "");  // no scripts, no forms, an origin of its own
  frame.srcdoc = "<!doctype html><meta charset=\"utf-8\">" +
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">" +
    "<style>html, body { margin: 0; overflow: hidden; } svg { display: block; width: 100%; height: auto; }</style>" + svg;
  box.replaceChildren(frame);
  window.micrographPictures.show(box, { w: width, h: height, font: fonts.length ? Math.min(...fonts) : 10, first });
}

// The explorer's page (HTML made by viz.explore in the page's Python) into the frame `frame`, marked to fit
// the frame to itself (explorer.js: class mg-embedded, its panes' heights from this window's --mg-vh). The frame
// loads explorer.html afresh, which asks for the page as it starts (fitExplorer answers) and writes it into
// itself under that page's own policy: as a srcdoc the page would inherit this page's Content-Security-Policy,
// which cannot admit its script, whose digest changes with the expression (viz/page.py). A frame that starts
// while an earlier one was still loading is sent the latest page too.
const EXPLORER_FRAME = "explorer.html";
const explorerPages = new WeakMap();
export function showExplorer(frame, html) {
  const vh = `--mg-vh: ${window.innerHeight / 100}px`;
  explorerPages.set(frame, html.replace(/^(<!DOCTYPE html>\s*<html\b)/i, `$1 class="mg-embedded" style="${vh}"`));
  frame.src = EXPLORER_FRAME;
}

// The explorer's frame is sent its page when it asks, and takes the height its page says (messages from that
// frame's window only); the page in it is told this window's height when it changes. The frame's origin is
// opaque ("null"), so the page is sent to no named origin; explorer.html hears it only from this window.
export function fitExplorer(frame) {
  window.addEventListener("message", (e) => {
    if (e.source !== frame.contentWindow || !e.data) return;
    if (e.data.micrographFrameReady === true && explorerPages.has(frame)) {
      frame.contentWindow.postMessage({ micrographExplorer: explorerPages.get(frame) }, "*");
    }
    const h = e.data.micrographHeight;
    if (typeof h === "number" && h > 0 && h < 1e6) frame.style.height = `${Math.ceil(h)}px`;
  });
  window.addEventListener("resize", () => {
    if (frame.contentWindow) frame.contentWindow.postMessage({ micrographViewport: window.innerHeight }, "*");
  });
}
