"""The drawings' DOT vocabulary: a node u(i) as a box, an edge as an arrow, user text made literal.

Every drawing of micrograph (:mod:`viz.dot`, :mod:`viz.groups_dot`, the explorer's layouts, the exercise
checker's failure drawing) is made of these pieces. A node's box is a Graphviz HTML-like table holding its
name and label (or, in B, its caption ``∂z/∂w``), how it is computed from its parents, its value and its
gradient (4 significant digits), in the colours of its kind (:mod:`viz.style`, which also documents the
legend). An edge u(j) -> u(i) says u(j) is an argument of u(i); where the operation is not commutative
(a - b, a / b, a ** b) the edge carries the argument's position, 1 or 2. An edge too long to draw whole
starts at a copy of u(j) beside u(i).

Labels are user text: they are escaped for HTML (``& < > "``) and control characters are shown as
``\\xNN``, so a label renders as exactly the text typed (``&lt;b&gt;`` stays ``&lt;b&gt;``).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1 and figure 6.10.
"""

from __future__ import annotations

import html
import math
import re
import textwrap
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

import graphviz

from micrograph.engine import Value
from viz import style
from viz.widths import text_width
from viz.words import clean, fmt, formula, kind

__all__ = ["copy_name", "escape_record", "escape_text", "html_box"]

_RECORD_SPECIAL = re.compile(r'([{}|<>"\\])')
_QUOTED_SPECIAL = re.compile(r'(["\\])')


def _no_entities(s: str) -> str:
    # Graphviz decodes character entities (``&amp;``, ``&lt;``, ``&#65;``) in every label, record or
    # quoted string alike; writing ``&`` as ``&amp;`` makes a label show exactly the text typed.
    return s.replace("&", "&amp;")


def escape_record(s: str, limit: int = 40) -> str:
    """User text as a literal field of a DOT record label: ``{ } | < > " \\`` escaped, ``&`` written as
    ``&amp;`` (Graphviz decodes entities), control characters shown as ``\\xNN`` (see
    :func:`viz.words.clean`), cut to ``limit`` characters (before escaping, so no escape is cut in two)."""
    return _no_entities(_RECORD_SPECIAL.sub(r"\\\1", clean(s, limit)))


def escape_text(s: str, limit: int = 120) -> str:
    """User text as a literal DOT quoted string (a title): ``"`` and ``\\`` escaped, ``&`` written as
    ``&amp;``, never HTML."""
    return _no_entities(_QUOTED_SPECIAL.sub(r"\\\1", clean(s, limit)))


def _head(name: str, node: Value, caption: str | None = None) -> str:
    """A box's first row: the name, with the caption or else the label before it."""
    if caption:
        return f"{clean(caption)} ({name})"
    return name if not node.label else f"{clean(node.label)} ({name})"


def _fields(name: str, node: Value, names: Mapping[Value, str], data: float | None, grad: float | None,
            *, show_grad: bool = True, caption: str | None = None) -> list[str]:  # fmt: skip
    """The rows of a node's box, as plain text: name (and label or caption), computation, data, grad."""
    fields = [_head(name, node, caption), clean(formula(node, names), 60), f"data {fmt(data)}"]
    if show_grad:
        fields.append(f"grad {fmt(grad) if grad is not None else '—'}")
    return fields


_FIRST, _RULED = ' BORDER="0"', ' BORDER="1" SIDES="T"'  # a rule above every row but the first
_PADDING = 2
"""A cell's CELLPADDING: points between its text and its edges, above and below as well as to the sides."""
MARGIN = 2
"""Points of room each side of a box's widest line beyond the cell padding: Graphviz's own measure of the
text leaves none, and a renderer may draw the text wider than Graphviz measured it (:mod:`viz.widths`)."""
CORNER = 5
"""Points a rounded box's corners take from each side of its first and last rows: Graphviz rounds a table's
corners with a radius of 12, which comes 3.5 points in from the side at the height of the first row's
tallest glyphs (and of the last row's descenders), and a border of 2 points a point more."""


def least_width(rows: Sequence[str], size: float, *, rounded: bool = False, border: int = 0) -> int:
    """The width, in points, a cell needs so that each of ``rows`` (drawn at ``size`` points) fits with
    :data:`MARGIN` to spare whichever font draws it (:func:`viz.widths.text_width`, an upper bound), its
    padding and ``border`` included, the first and last rows of a ``rounded`` box clear of its corners.

    It is the cell's ``WIDTH``: Graphviz then sizes the box to the larger of it and its own measure."""
    last = len(rows) - 1
    need = [text_width(row, size) + (2 * CORNER if rounded and k in (0, last) else 0)
            for k, row in enumerate(rows)]  # fmt: skip
    return math.ceil(max(need, default=0.0) + 2 * (_PADDING + MARGIN + border))


def html_box(rows: Sequence[str], attrs: Mapping[str, str], *, width: int | None = None) -> str:
    """A node's box as a Graphviz HTML-like label: one row per text, in the colours of ``attrs``.

    Rows are user text, escaped for HTML (``&`` ``<`` ``>`` ``"``), so a label is drawn exactly as typed.
    HTML-like labels (not record shapes) also keep Graphviz 2.43 from losing edges between adjacent
    nodes inside clusters ("flat edge between adjacent nodes one of which has a record shape").

    Args:
        rows: the lines of the box, top to bottom (plain text).
        attrs: a node style of :mod:`viz.style` (``fillcolor``, ``color``, ``fontcolor``, ``penwidth``,
            ``style`` with ``dashed`` and/or ``rounded``).
        width: the box's least width in points (room for numbers a page writes in later), or None; the
            box is at least as wide as its rows need (:func:`least_width`) in any case.
    """
    border = attrs.get("penwidth", "1")
    styles = [s for s in ("rounded", "dashed") if s in attrs.get("style", "")]
    styled = f' STYLE="{",".join(styles)}"' if styles else ""
    font = attrs.get("fontcolor", style.BOX_DEFAULT["fontcolor"])
    # Every cell asks for the width the widest row needs (a one-column table: they share it anyway), so
    # the box is sized by an upper bound of the text's drawn width rather than Graphviz's measure alone.
    need = least_width(rows, float(style.NODE["fontsize"]), rounded="rounded" in styles)
    wide = f' WIDTH="{max(width or 0, need)}"'
    cells = "".join(
        f'<TR><TD{_FIRST if k == 0 else _RULED}{wide}><FONT COLOR="{font}">{html.escape(row)}</FONT></TD>'
        "</TR>"
        for k, row in enumerate(rows)
    )
    return (
        f'<<TABLE BORDER="{border}" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2" '
        f'BGCOLOR="{attrs.get("fillcolor", style.BOX_DEFAULT["fillcolor"])}" '
        f'COLOR="{attrs.get("color", style.BOX_DEFAULT["color"])}"{styled}>'
        f"{cells}</TABLE>>"
    )


def _node_attrs(
    node: Value, *, faded: bool = False, highlighted: bool = False, output: bool = False
) -> dict[str, str]:
    attrs = dict(
        {
            "variable": style.VARIABLE,
            "constant": style.CONSTANT,
            "operation": style.OPERATION,
            "backward": style.BACKWARD,
            "gradient": style.GRADIENT,
        }[kind(node)]
    )
    if faded:
        attrs.update(style.FADED)
    if output and not faded:
        attrs["penwidth"] = style.OUTPUT_PENWIDTH
    if highlighted:
        attrs.update(style.HIGHLIGHT)
    return attrs


def _node(dot: graphviz.Digraph, name: str, rows: Sequence[str], attrs: Mapping[str, str],
          width: int | None = None) -> None:  # fmt: skip
    """Add a node drawn as an HTML-like box (the node's own shape is plain: the table is the box)."""
    dot.node(name, html_box(rows, attrs, width=width))


def copy_name(source: str, consumer: str) -> str:
    """The DOT name of the copy of node ``source`` drawn beside its consumer ``consumer`` (``u1~u37``)."""
    return f"{source}~{consumer}"


def _tail(dot: graphviz.Digraph, node: Value, k: int, names: Mapping[Value, str],
          cut: Collection[tuple[Value, Value]], head: Callable[[Value], str]) -> str:  # fmt: skip
    """The DOT node the edge of argument k of ``node`` starts from: the argument itself, or, for an edge
    in ``cut``, a copy of it beside ``node`` (one row, the argument's first, in its colours with rounded
    corners), added with the first edge that needs it."""
    p = node.inputs[k]
    if (p, node) not in cut:
        return names[p]
    tail = copy_name(names[p], names[node])
    if p not in node.inputs[:k]:
        attrs = _node_attrs(p)
        attrs["style"] = attrs.get("style", "filled") + ",rounded"
        _node(dot, tail, [head(p)], attrs)
    return tail


def _edges(dot: graphviz.Digraph, node: Value, names: Mapping[Value, str], *, cross: Iterable[Value] = (),
           cut: Collection[tuple[Value, Value]] = ()) -> None:  # fmt: skip
    """The edges Pa(node) -> node, in argument order, numbered where the operation is not commutative;
    an edge (u(j), node) in ``cut`` starts at a copy of u(j)."""
    op = node.op
    numbered = op is not None and op.arity == 2 and not op.commutative
    cross_set = set(cross)

    def first_row(v: Value) -> str:
        return _head(names[v], v)

    for k, p in enumerate(node.inputs):
        attrs: dict[str, str] = {}
        if numbered:  # at the arrow head: a mid-edge label would double the ranks (and dot's time)
            attrs["headlabel"] = str(k + 1)
        if p in cross_set:
            attrs.update(style.CROSS_EDGE)
        dot.edge(_tail(dot, node, k, names, cut, first_row), names[node], **attrs)


TITLE_COLUMNS = 64
"""The longest line of a drawing's title, in characters: a longer title is wrapped."""


def _new_digraph(name: str, title: str | None) -> graphviz.Digraph:
    dot = graphviz.Digraph(name=name, graph_attr=style.GRAPH, node_attr=style.NODE, edge_attr=style.EDGE)
    if title:
        # Lines of at most TITLE_COLUMNS, each left-justified (DOT's \l), the block at the drawing's left:
        # where a narrow screen shows a part of the drawing, its first view (the left) holds all the title.
        lines = textwrap.wrap(
            clean(title, 120), TITLE_COLUMNS, break_long_words=False, break_on_hyphens=False
        )
        dot.attr(label=graphviz.nohtml("".join(escape_text(line) + "\\l" for line in lines)), labeljust="l")
    return dot


def _caption(v: Value, zname: str, names: Mapping[Value, str]) -> str | None:
    """A gradient node's caption in B, ``∂z/∂w`` (the first grad_table entry of a node shared by several)."""
    if v.grad_of is None:
        return None
    return f"∂{zname}/∂{clean(v.grad_of.label, 12) or names.get(v.grad_of, '?')}"


def _legend_html() -> str:
    """The legend as a Graphviz HTML-like label: one swatch per node kind, then the two edge kinds."""
    cells = []
    for text, attrs in style.LEGEND:
        dashed = ' STYLE="dashed"' if "dashed" in attrs.get("style", "") else ""
        wide = least_width([text], 10, border=1)  # a swatch is a box too: room for its words, as html_box
        cells.append(
            f'<TD BGCOLOR="{attrs["fillcolor"]}" COLOR="{attrs["color"]}" BORDER="1"{dashed} WIDTH="{wide}">'
            f'<FONT COLOR="{attrs["fontcolor"]}" POINT-SIZE="10">{html.escape(text)}</FONT></TD>'
        )
    cells.append('<TD BORDER="0"><FONT POINT-SIZE="10">→ argument (1, 2: position)</FONT></TD>')
    cells.append(f'<TD BORDER="0"><FONT POINT-SIZE="10" COLOR="{style.CROSS_EDGE["color"]}">'
                 "⇢ dashed: B uses a value of G</FONT></TD>")  # fmt: skip
    return f'<<TABLE BORDER="0" CELLSPACING="4"><TR>{"".join(cells)}</TR></TABLE>>'
