"""Every colour, font and shape of micrograph's drawings, in one place.

The palette tells the forward graph G (blues) from the backward subgraph B (oranges), two hues that
stay apart for the common forms of colour blindness; grey means "outside G'" (faded) or "a constant".
Change a drawing's look here and nowhere else.

Legend (used by :func:`viz.draw` and :func:`viz.draw_side_by_side`):

* blue box: a node of G computed by an operation; green box: a variable (an input leaf);
* white dashed box: a constant (a number wrapped implicitly, the ``2`` in ``2 * x``);
* grey faded box: a node of G outside G' (z does not depend on the targets through it);
* orange box: a node of B built by :func:`micrograph.grad`; dark-orange bold box: a gradient dz/du of B
  (a grad_table entry), captioned with what it is;
* yellow thick box: the node highlighted (the step being computed in :func:`viz.steps`);
* red thick box and red edges: in an exercise's failure drawing, the first wrong node and the edges of
  the terms (or arguments) that explain it (``lessons.exercises``);
* solid arrow u -> v: u is an argument of v, numbered 1, 2 where the operation is not commutative;
* dashed arrow from G into B: B consumes a value of G (figure 6.10 draws these as the links between the
  two halves).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, figure 6.10.
"""

from __future__ import annotations

__all__ = [
    "FONT",
    "FONTSIZE",
    "EDGE_FONTSIZE",
    "GRAPH",
    "NODE",
    "EDGE",
    "OPERATION",
    "VARIABLE",
    "CONSTANT",
    "FADED",
    "BACKWARD",
    "GRADIENT",
    "HIGHLIGHT",
    "OUTPUT_PENWIDTH",
    "CROSS_EDGE",
    "CLUSTER_G",
    "CLUSTER_B",
    "LEGEND",
    "SIGNIFICANT_DIGITS",
    "HTML_CSS",
    "EXPLORER",
    "PICTURE_CSS",
    "PLOT_COLORS",
    "PLOT_RC",
    "WRONG",
    "WRONG_EDGE",
]

FONT = "Helvetica"
FONTSIZE = "12"
EDGE_FONTSIZE = "10"
SIGNIFICANT_DIGITS = 4

GRAPH: dict[str, str] = {
    "rankdir": "LR",  # left-to-right flow, as micrograd and figure 6.10 read
    "fontname": FONT,
    "fontsize": "14",
    "nodesep": "0.25",
    "ranksep": "0.45",
    "labelloc": "t",
    # At most 2 x (number of nodes) iterations of network simplex when dot places the nodes within their
    # ranks: the same drawing for small graphs (it converges sooner), and a 400-node graph laid out several
    # times sooner, no taller (the figures: docs/performance.md, "Graph layout").
    "nslimit": "2",
}
NODE: dict[str, str] = {"shape": "plain", "fontname": FONT, "fontsize": FONTSIZE}
"""A node's box is its HTML-like label (viz.dot.html_box), in the colours of its kind below."""
EDGE: dict[str, str] = {"fontname": FONT, "fontsize": EDGE_FONTSIZE, "color": "#555555", "arrowsize": "0.7"}

# Node kinds: each a dict of Graphviz node attributes.
OPERATION: dict[str, str] = {"fillcolor": "#dbe9f6", "color": "#2b6cb0", "fontcolor": "#1a1a1a"}
VARIABLE: dict[str, str] = {"fillcolor": "#d9f0d3", "color": "#2f7d32", "fontcolor": "#1a1a1a"}
CONSTANT: dict[str, str] = {"fillcolor": "#ffffff", "color": "#888888", "fontcolor": "#444444",
                            "style": "filled,dashed"}  # fmt: skip
FADED: dict[str, str] = {"fillcolor": "#f4f4f4", "color": "#c8c8c8", "fontcolor": "#a0a0a0"}
BACKWARD: dict[str, str] = {"fillcolor": "#fde5cc", "color": "#d46a00", "fontcolor": "#1a1a1a"}
GRADIENT: dict[str, str] = {"fillcolor": "#f9b36b", "color": "#a84300", "fontcolor": "#1a1a1a",
                            "penwidth": "2", "style": "filled,bold"}  # fmt: skip
HIGHLIGHT: dict[str, str] = {"fillcolor": "#ffe14d", "color": "#b8860b", "penwidth": "3"}
OUTPUT_PENWIDTH = "2"

CROSS_EDGE: dict[str, str] = {"style": "dashed", "color": "#d46a00", "arrowsize": "0.6"}

CLUSTER_G: dict[str, str] = {
    "label": "forward graph G",
    "style": "rounded,filled",
    "fillcolor": "#f3f8fd",
    "color": "#2b6cb0",
    "fontcolor": "#2b6cb0",
    "fontname": FONT,
    "fontsize": "14",
}
CLUSTER_B: dict[str, str] = {
    "label": "backward subgraph B",
    "style": "rounded,filled",
    "fillcolor": "#fff6ec",
    "color": "#d46a00",
    "fontcolor": "#a84300",
    "fontname": FONT,
    "fontsize": "14",
}

LEGEND: list[tuple[str, dict[str, str]]] = [
    ("variable (input)", VARIABLE),
    ("operation of G", OPERATION),
    ("constant", CONSTANT),
    ("outside G' (faded)", FADED),
    ("node of B", BACKWARD),
    ("gradient dz/du in B", GRADIENT),
]
"""(text, style) pairs drawn as the legend of :func:`viz.draw_side_by_side`."""

# The step-by-step HTML page (viz.steps): one stylesheet, inlined.
HTML_CSS = """
body { font-family: Helvetica, Arial, sans-serif; margin: 1.2em; color: #1a1a1a; background: #ffffff; }
h1 { font-size: 1.3em; margin: 0 0 0.4em 0; }
.nav { margin: 0.5em 0 0.8em 0; display: flex; gap: 0.6em; align-items: center; }
.nav button { font-size: 1em; padding: 0.3em 1em; }
.counter { font-weight: bold; min-width: 9em; }
.frame { display: none; }
.frame.current { display: block; }
.cols { display: flex; gap: 1.5em; align-items: flex-start; flex-wrap: wrap; }
.graph svg { max-width: 62vw; height: auto; }
.cols.wide .graph svg { max-width: 96vw; }  /* G and B side by side: the code goes below */
.algo { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.92em; white-space: pre;
        line-height: 1.5; background: #f7f7f7; border: 1px solid #dddddd; padding: 0.6em; }
.algo .line { padding: 0 0.3em; }
.algo .line.current { background: #ffe14d; font-weight: bold; }
.algo .line.current::before { content: "\\25B6  "; }
.algo .line:not(.current)::before { content: "   "; }
.explain { margin: 0.6em 0; font-size: 1.02em; max-width: 60em; }
figure.code { margin: 0; }
figure.code figcaption { font-size: 0.85em; font-weight: bold; color: #444444; margin: 0 0 0.2em 0; }
figure.code[data-words="summary"] figcaption { font-style: italic; }
table.gt { border-collapse: collapse; margin-top: 0.6em; font-size: 0.95em; }
table.gt th, table.gt td { border: 1px solid #cccccc; padding: 0.15em 0.6em; text-align: left; }
table.gt td.num { font-family: monospace; text-align: right; }
table.gt tr.current td { background: #ffe14d; }
table.gt tr.empty td.num { color: #aaaaaa; }
.help { color: #666666; font-size: 0.9em; }
"""

# The exercises' failure drawings (lessons.exercises): the first wrong node and the edges of its wrong term.
WRONG: dict[str, str] = {"fillcolor": "#f8c9c9", "color": "#c0392b", "fontcolor": "#1a1a1a", "penwidth": "3",
                         "style": "filled,bold"}  # fmt: skip
WRONG_EDGE: dict[str, str] = {"color": "#c0392b", "penwidth": "2.5", "fontcolor": "#c0392b"}

# The explorer's page (viz.explore): its colours, given to explore.css as CSS variables (--mg-text, ...).
EXPLORER: dict[str, str] = {
    "text": "#1a1a1a",
    "background": "#ffffff",
    "muted": "#555555",
    "rule": "#dddddd",
    "code": "#f7f7f7",
    "current": HIGHLIGHT["fillcolor"],  # the node and the pseudo-code line of the current step
    "current-edge": HIGHLIGHT["color"],
    "selected": "#6a1b9a",  # the node whose sum the panel shows
    "hover": OPERATION["color"],  # the node under the pointer; its consumers are drawn in B's orange
    "consumer": BACKWARD["color"],
    "wrong": WRONG_EDGE["color"],  # outside a domain; a wrong prediction
    "right": VARIABLE["color"],
    "pane-g": CLUSTER_G["fillcolor"],
    "pane-b": CLUSTER_B["fillcolor"],
    "focus": "#000000",  # the ring around the node that has the keyboard's focus
}

# A node box drawn by viz.dot.html_box when its style leaves a colour out.
BOX_DEFAULT: dict[str, str] = {"fillcolor": "#ffffff", "color": "#555555", "fontcolor": "#1a1a1a"}

# A lesson's picture on a page (viz.pictures: the site and the tour's lesson pages), put in the page by the
# pictures' script: framed when it pans and zooms, its buttons and help line below it, a ring when it has the
# keyboard's focus.
PICTURE_CSS = """
.mg-picture { margin: 0.6em 0; }
.mg-picture.mg-panned .mg-picture-pane { border: 1px solid #ccc; cursor: grab; }
.mg-picture-pane:focus-visible { outline: 3px solid #000; outline-offset: 2px; }
.mg-picture-tools { display: flex; flex-wrap: wrap; gap: 0.3em 0.6em; align-items: center; margin: 0.3em 0; }
.mg-picture-tools[hidden] { display: none; }
.mg-picture-help { color: #555; font-size: 0.9em; }
"""

# The tour's pages (lessons.publish.tour): one stylesheet, inlined; pre.book holds the book's own words.
TOUR_CSS = """
body { font-family: system-ui, sans-serif; max-width: 70em; margin: 2em auto; padding: 0 1em; color: #222; }
h1, h2, h3 { font-weight: 600; } code, pre { font-family: ui-monospace, monospace; font-size: 0.92em; }
pre { background: #f6f6f6; padding: 0.6em 0.9em; overflow-x: auto; } pre.book { background: #eef2ff; }
.step { border-top: 1px solid #ddd; padding-top: 1em; margin-top: 1.5em; }
img { max-width: 100%; border: 1px solid #eee; } li { margin: 0.25em 0; } .muted { color: #666; }
.who { font-size: 0.8em; font-weight: 600; color: #555; margin: 0.8em 0 0.2em 0; }
"""

# matplotlib: colours for the plots (back-propagation in the blue of G, the naive rule in orange).
PLOT_COLORS: dict[str, str] = {
    "backprop": "#2b6cb0",
    "naive": "#d46a00",
    "store": "#2b6cb0",
    "recompute": "#d46a00",
    "checkpoint": "#2f7d32",
    "train": "#2b6cb0",
    "test": "#d46a00",
}
PLOT_CLASS_COLORS: list[str] = [
    "#2b6cb0", "#d46a00", "#2f7d32", "#8e44ad", "#c0392b", "#7f8c8d", "#b7950b", "#16a085",
]  # fmt: skip
"""One colour per class in decision-boundary plots (viz.plot_decision_boundary), in class order."""
PLOT_BOUNDARY = "#333333"
"""The decision boundary's line, and its legend entry."""
PLOT_REFERENCE = "#888888"
"""A reference line in a plot (the limit in the naive rule's operation counts)."""
PLOT_RC: dict[str, object] = {
    "font.size": 11,
    "axes.titlesize": 12,
    "axes.labelsize": 11,
    "legend.fontsize": 10,
    "axes.grid": True,
    "grid.alpha": 0.3,
}
