"""The drawing of a failure: G as :func:`viz.dot.digraph` draws it, the first wrong node and its edges in red.

The wrong node's record shows the expected value (the engine's) and the student's; the marked edges are
the terms of the sum that differ (Algorithm 6.2), the arguments A(i) of a wrong node (Algorithm 6.1), or
the edge a topological order breaks. Colours are :data:`viz.style.WRONG` and :data:`viz.style.WRONG_EDGE`.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1 (the graph G).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import graphviz

from micrograph.graph import Graph
from viz import style
from viz.boxes import html_box
from viz.dot import digraph
from viz.render import pipe_svg, svg_element
from viz.words import clean, fmt, formula, node_names

__all__ = ["Mark", "failure_drawing", "failure_svg", "MAX_DRAWN"]

MAX_DRAWN = 60
"""Graphs with more nodes are not drawn: the drawing would be unreadable (the report still names the node)."""


@dataclass(frozen=True)
class Mark:
    """An edge u(j) -> u(i) to mark: u(i) takes u(j) as its argument k; ``text`` is written beside it."""

    j: int
    i: int
    k: int
    text: str = ""


def failure_drawing(
    graph: Graph,
    *,
    wrong: int | None,
    expected: str = "",
    actual: str = "",
    marks: Iterable[Mark] = (),
    data: Sequence[float | None] | None = None,
    grads: Sequence[float | None] | None = None,
    title: str = "",
    show_data: bool = True,
) -> graphviz.Digraph:
    """G with the wrong node u(wrong + 1) and the marked edges drawn in red.

    Args:
        graph: G.
        wrong: the 0-based position of the first wrong node, or None.
        expected, actual: the two values shown in the wrong node's record (already formatted).
        marks: edges to draw in red, with a short text beside each.
        data, grads: the values and gradients shown in every record (as :func:`viz.dot.digraph`).
        title: a caption above the drawing.
        show_data: show the wrong node's value (off where its value is what is wrong: Algorithm 6.1).

    Returns:
        A ``graphviz.Digraph`` (no file written).
    """
    dot = digraph(graph, data=data, grads=grads, title=title or None)
    names = node_names(graph)
    nodes = graph.nodes
    for m in marks:
        tail, head = names[nodes[m.j]], names[nodes[m.i]]
        # the edges into u(i) are drawn in argument order: the k-th argument is this pair's n-th edge
        nth = sum(1 for p in nodes[m.i].inputs[: m.k] if p is nodes[m.j])
        op = nodes[m.i].op
        position = str(m.k + 1) if op is not None and op.arity == 2 and not op.commutative else ""
        label = " ".join(t for t in (position, m.text) if t)
        _restyle_edge(
            dot, tail, head, nth, {"label": label, **style.WRONG_EDGE} if label else style.WRONG_EDGE
        )
    if wrong is not None:
        v = nodes[wrong]
        name = names[v]
        head = name if not v.label else f"{clean(v.label)} ({name})"
        value = data[wrong] if data is not None else v.data
        fields = [head, clean(formula(v, names), 60)] + ([f"data {fmt(value)}"] if show_data else [])
        if expected:
            fields.append(clean(f"expected {expected}", 60))
        if actual:
            fields.append(clean(f"yours {actual}", 60))
        dot.node(name, html_box(fields, style.WRONG))  # drawn again over the node's first box
    return dot


_EDGE = re.compile(r"^\t(\S+) -> (\S+)(?: \[.*\])?\n?$")


def _restyle_edge(dot: graphviz.Digraph, tail: str, head: str, nth: int, attrs: dict[str, str]) -> None:
    """Give the nth edge tail -> head of the drawing the attributes ``attrs`` (kept: its position label)."""
    seen = 0
    for index, line in enumerate(dot.body):
        m = _EDGE.match(line)
        if m and m.group(1) == tail and m.group(2) == head:
            if seen == nth:
                one = graphviz.Digraph()
                one.edge(tail, head, **attrs)
                dot.body[index] = one.body[0]
                return
            seen += 1


def failure_svg(graph: Graph, **kw: object) -> tuple[str | None, str]:
    """The SVG text of :func:`failure_drawing`, or None and the reason there is none.

    Returns:
        ``(svg, note)``: the SVG (without its XML prolog, ready to inline) and "", or None and why.
    """
    if len(graph.nodes) > MAX_DRAWN:
        return None, f"the graph has {len(graph.nodes):,} nodes, more than {MAX_DRAWN} can be drawn readably"
    try:
        svg = pipe_svg(failure_drawing(graph, **kw))  # type: ignore[arg-type]
    except RuntimeError as e:  # Graphviz missing (GraphvizMissing is a RuntimeError) or failing
        return None, str(e).splitlines()[0] if str(e) else "Graphviz could not draw it"
    return svg_element(svg), ""
