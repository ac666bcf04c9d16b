"""Every colour, font and shape of micrograph's drawings, in one place.

The palette tells the forward graph G (blues) from the backward subgraph B (oranges), two hues that
stay apart for the common forms of colour blindness; grey means "outside G'" (faded) or "a constant".
Change a drawing's look here and nowhere else; the pages' colours too (:data:`PAGE`), which the pages'
one stylesheet, ``static/micrograph.css``, reads as CSS custom properties (:func:`stylesheet`).

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

import re
from importlib import resources

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
    "PAGE",
    "STYLESHEET",
    "SECTIONS",
    "css_variables",
    "stylesheet",
    "HTML_CSS",
    "PICTURE_CSS",
    "TOUR_CSS",
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
"""A node's box is its HTML-like label (viz.boxes.html_box), in the colours of its kind below."""
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


def _cluster(label: str, fillcolor: str, color: str, fontcolor: str) -> dict[str, str]:
    """A side of figure 6.10's drawing: a rounded, filled box with its label in the drawings' font."""
    return {"label": label, "style": "rounded,filled", "fillcolor": fillcolor, "color": color,
            "fontcolor": fontcolor, "fontname": FONT, "fontsize": "14"}  # fmt: skip


CLUSTER_G = _cluster("forward graph G", "#f3f8fd", "#2b6cb0", "#2b6cb0")
CLUSTER_B = _cluster("backward subgraph B", "#fff6ec", "#d46a00", "#a84300")

LEGEND: list[tuple[str, dict[str, str]]] = [
    ("variable (input)", VARIABLE),
    ("operation of G", OPERATION),
    ("constant", CONSTANT),
    ("outside G' (faded)", FADED),
    ("node of B", BACKWARD),
    ("gradient dz/du in B", GRADIENT),
]
"""(text, style) pairs drawn as the legend of :func:`viz.draw_side_by_side`."""

# The exercises' failure drawings (lessons.exercises): the first wrong node and the edges of its wrong term.
WRONG: dict[str, str] = {"fillcolor": "#f8c9c9", "color": "#c0392b", "fontcolor": "#1a1a1a", "penwidth": "3",
                         "style": "filled,bold"}  # fmt: skip
WRONG_EDGE: dict[str, str] = {"color": "#c0392b", "penwidth": "2.5", "fontcolor": "#c0392b"}

# The pages' colours (the step pages, the tour's pages, the lessons' pictures, the explorer, the site's page),
# written once: static/micrograph.css reads each as a CSS custom property, var(--mg-NAME).
PAGE: dict[str, str] = {
    "text": "#1a1a1a",
    "background": "#ffffff",
    "muted": "#555555",
    "rule": "#dddddd",
    "code": "#f7f7f7",
    "current": HIGHLIGHT["fillcolor"],  # the node, the pseudo-code line and the grad_table row of the step
    "current-edge": HIGHLIGHT["color"],
    "selected": "#6a1b9a",  # the node whose sum the explorer's panel shows
    "hover": OPERATION["color"],  # the node under the pointer; its consumers are drawn in B's orange
    "consumer": BACKWARD["color"],
    "wrong": WRONG_EDGE["color"],  # outside a domain; a wrong prediction
    "right": VARIABLE["color"],
    "pane-g": CLUSTER_G["fillcolor"],
    "pane-b": CLUSTER_B["fillcolor"],
    "focus": "#000000",  # the ring around what has the keyboard's focus
    "caption": "#444444",  # a step page's caption over its code
    "cell": "#cccccc",  # a grad_table's cells; a picture's pane
    "empty": "#aaaaaa",  # a grad_table entry not computed yet
    "aside": "#666666",  # a help line, a remark aside
    "ink": "#222222",  # the tour's and the site's text
    "pre": "#f6f6f6",  # preformatted text on the tour's and the site's pages
    "book": "#eef2ff",  # the book's own words on the tour's pages
    "faint": "#eeeeee",  # a picture's frame on the tour's pages
    "field": "#bbbbbb",  # the site's editor and explorer frame
    "passed": "#22aa22",  # an exercise's report: passed, failed
    "failed": "#cc2222",
}

# A node box drawn by viz.boxes.html_box when its style leaves a colour out.
BOX_DEFAULT: dict[str, str] = {"fillcolor": "#ffffff", "color": "#555555", "fontcolor": "#1a1a1a"}

STYLESHEET = "micrograph.css"
"""The pages' one stylesheet (``viz/static``): a section per kind of page, every colour a ``var(--mg-NAME)``
of :data:`PAGE`."""

_SECTION = re.compile(r"^/\* @section ([a-z]+)\b", re.M)


def _sections() -> dict[str, str]:
    """The stylesheet's sections by name, each from its ``/* @section NAME ... */`` line to the next's."""
    text = resources.files("viz").joinpath("static").joinpath(STYLESHEET).read_text(encoding="utf-8")
    marks = list(_SECTION.finditer(text))
    ends = [m.start() for m in marks[1:]] + [len(text)]
    return {m.group(1): text[m.start() : end].strip() + "\n" for m, end in zip(marks, ends)}


SECTIONS = _sections()
"""The stylesheet's sections: steps, tour, picture, explorer, site."""


def css_variables(scope: str = ":root") -> str:
    """The pages' colours (:data:`PAGE`) as CSS custom properties (``--mg-NAME: COLOUR;``) set on ``scope``.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
    """
    return f"{scope} {{ " + "".join(f"--mg-{k}: {v}; " for k, v in PAGE.items()) + "}\n"


def stylesheet(kind: str, scope: str = ":root") -> str:
    """The rules of one kind of page, after the colours they use set on ``scope`` (a CSS selector).

    Args:
        kind: one of :data:`SECTIONS` (``steps``, ``tour``, ``picture``, ``explorer``, ``site``).
        scope: where the colours are set: the whole page (``:root``), or the element that holds the page's
            part (the explorer's ``.mg-explorer``, so that a notebook's other colours are left alone).

    Raises:
        ValueError: ``kind`` is not a section of the stylesheet.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
    """
    if kind not in SECTIONS:
        raise ValueError(f"kind {kind!r} is not a section of {STYLESHEET}: one of {', '.join(SECTIONS)}")
    return css_variables(scope) + SECTIONS[kind]


HTML_CSS = stylesheet("steps")
"""The step-through page's stylesheet (viz.steps), inlined."""
PICTURE_CSS = stylesheet("picture")
"""A lesson's picture on a page (viz.pictures: the site and the tour's lesson pages), put in the page by the
pictures' script."""
TOUR_CSS = stylesheet("tour")
"""The tour's pages (lessons.publish.tour), inlined."""

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
