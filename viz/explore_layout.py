"""The explorer's drawings: G and B laid out once by Graphviz, apart, the two ``dot`` runs at once.

An edge that would span more than :data:`LONGEST_EDGE` ranks (:func:`far_edges`) is drawn from a copy of
its source beside its consumer: a one-row box with the source's name and colours, rounded. Dot's time grows
with the ranks its edges cross (each crossing is a virtual node to order, place and route): a node feeding
a hundred consumers along the drawing made thirty thousand of them, and a 500-node graph took 15 s.

Each drawing's SVG is marked for the page: every node group carries its position (``data-node`` in G,
``data-bnode`` in B), a copy the position of the node it copies (``data-copy``, ``data-bcopy``), and the
texts the page writes numbers into carry a class (``mg-data``, ``mg-grad``). Why apart, why ``nslimit``
and why copies: docs/architecture.md, "Layout".

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, figure 6.10.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Collection, Sequence

import graphviz

from micrograph.engine import Value
from micrograph.graph import Graph
from viz.boxes import copy_name
from viz.dot import digraph, draw_backward
from viz.render import pipe_svgs, svg_element
from viz.words import clean

__all__ = ["layout", "drawing_g", "drawing_b", "far_edges", "BOX_WIDTH", "LONGEST_EDGE", "COPY_TITLE"]

_SVG_NS = "http://www.w3.org/2000/svg"
BOX_WIDTH = 118
"""Each box's least width in points: room for ``grad -1.234e-100`` when the page writes it in."""
LONGEST_EDGE = 8
"""The most ranks an edge is drawn across; a longer one starts at a copy of its source. Eight ranks are
about 1,200 pt, a screen's width at the first view's scale (0.9 px a point): an edge drawn whole can be
followed on screen. Every graph of tests/catalogue.py and the explorer's examples (``x*y + x``,
``tanh(x*y + exp(x))``, figure 6.9's chain; at most 33 nodes, their longest edges 8 ranks: micrograd's
README example, the shared intermediate's B) is drawn as before. A copy's edge spans one rank, the others
at most eight, so dot's ranking (network simplex: the least total span) leaves at most 7 virtual nodes per
edge in all."""
COPY_TITLE = "{name}, drawn again beside its consumer {consumer}"
"""A copy's title (shown on hover): the node it is, and the consumer it is drawn beside."""


def far_edges(nodes: Sequence[Value], members: Collection[Value]) -> list[tuple[Value, Value]]:
    """The edges (u(j), u(i)) among ``nodes`` that span more than :data:`LONGEST_EDGE` ranks.

    Each node is given a rank as late as its consumers allow (one before its earliest consumer; a node
    without consumer at the last rank of the longest path), which is where dot's ranking puts a node that
    feeds its first consumer directly: a node's far edges are those to its later consumers. Without them
    every edge spans at most :data:`LONGEST_EDGE` ranks in this ranking, so the edges of dot's own ranking
    (network simplex, which minimises the total span) span at most that many in all.

    Args:
        nodes: the drawing's nodes in a topological order (G's u(1)..u(n), or B's).
        members: the nodes drawn; an argument outside them (G's values that B reads) has no edge.

    Returns:
        The far edges in the order of their consumers, then of the arguments (an argument used twice by
        one consumer, as in ``a * a``, once).

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1 (G's edges).
    """
    depth: dict[Value, int] = {}
    for v in nodes:  # the longest path to each node
        depth[v] = max((depth[p] + 1 for p in v.inputs if p in members), default=0)
    last = max(depth.values(), default=0)
    consumers: dict[Value, list[Value]] = {v: [] for v in nodes}
    for v in nodes:
        for p in dict.fromkeys(v.inputs):
            if p in members:
                consumers[p].append(v)
    rank: dict[Value, int] = {}
    for v in reversed(nodes):  # as late as the consumers allow
        rank[v] = min((rank[c] - 1 for c in consumers[v]), default=last)
    return [
        (p, v)
        for v in nodes
        for p in dict.fromkeys(v.inputs)
        if p in members and rank[v] - rank[p] > LONGEST_EDGE
    ]


def _annotated_svg(svg: str, marks: dict[str, tuple[str, int]], rows: int,
                   copies: dict[str, tuple[str, int, str]] | None = None) -> str:  # fmt: skip
    """Graphviz's SVG with each node group marked (``data-node`` for G, ``data-bnode`` for B) and the texts
    the page writes numbers into marked by class: the last two rows of a G box (``data``, ``grad``), the
    last row of a B box (``data``); each copy marked with the position of the node it copies and titled.
    Ids are dropped: two drawings share one page.

    Args:
        svg: Graphviz's SVG.
        marks: {node name in the DOT source: (attribute, position)}.
        rows: how many rows at the end of a box are numbers (2 in G, 1 in B).
        copies: {a copy's name in the DOT source: (attribute, position of the node copied, title)}; none
            by default (a drawing without far edges, such as an MLP's groups).
    """
    ET.register_namespace("", _SVG_NS)
    ET.register_namespace("xlink", "http://www.w3.org/1999/xlink")
    root = ET.fromstring(svg_element(svg))
    ns = {"s": _SVG_NS}
    drawing = root.find("s:g", ns)
    background = drawing.find("s:polygon", ns) if drawing is not None else None
    if drawing is not None and background is not None:  # the page's pane is the background
        drawing.remove(background)
    for g in root.iter(f"{{{_SVG_NS}}}g"):
        g.attrib.pop("id", None)
        if g.get("class") != "node":
            continue
        title = g.find("s:title", ns)
        name = title.text if title is not None and title.text else ""
        copy = (copies or {}).get(name)
        if copy is not None and title is not None:
            g.set(copy[0], str(copy[1]))
            title.text = copy[2]
            continue
        mark = marks.get(name)
        if mark is None:
            continue
        g.set(mark[0], str(mark[1]))
        texts = g.findall("s:text", ns)
        for cls, t in zip(("mg-data", "mg-grad")[:rows], texts[len(texts) - rows :]):
            t.set("class", cls)
    return ET.tostring(root, encoding="unicode")


def drawing_g(graph: Graph) -> tuple[graphviz.Digraph, list[tuple[Value, Value]]]:
    """G's drawing for the page, and its far edges (each drawn from a copy of its source)."""
    cut = far_edges(graph.nodes, graph.index)
    return digraph(graph, width=BOX_WIDTH, cut=set(cut)), cut


def drawing_b(
    graph: Graph, B: list[Value], names: dict[Value, str]
) -> tuple[graphviz.Digraph, list[tuple[Value, Value]]]:
    """B's drawing for the page (G's values it reads named in its formulas), and its far edges."""
    cut = far_edges(B, set(B))
    return draw_backward(graph, B, names, width=BOX_WIDTH, cut=set(cut)), cut


def layout(graph: Graph, B: list[Value], names: dict[Value, str], max_nodes: int) -> tuple[str, str, str]:
    """G and B laid out apart, the two ``dot`` runs at once: (G's SVG, B's SVG or "", a note)."""
    drawings = [drawing_g(graph)]
    note = ""
    if not B:
        note = "B is empty: no gradient flows to the targets."
    elif len(B) > max_nodes:
        note = f"B has {len(B)} nodes, more than the {max_nodes} drawn at once: B is not drawn."
    else:
        drawings.append(drawing_b(graph, B, names))
    dots = [d for d, _ in drawings]
    svgs = pipe_svgs(dots)
    g_marks = {names[v]: ("data-node", i) for i, v in enumerate(graph.nodes)}
    svg_g = _annotated_svg(svgs[0], g_marks, 2, _copies(drawings[0][1], names, g_marks, "data-copy"))
    if len(svgs) == 1:
        return svg_g, "", note
    b_marks = {names[v]: ("data-bnode", k) for k, v in enumerate(B)}
    return (
        svg_g,
        _annotated_svg(svgs[1], b_marks, 1, _copies(drawings[1][1], names, b_marks, "data-bcopy")),
        note,
    )


def _copies(cut: list[tuple[Value, Value]], names: dict[Value, str], marks: dict[str, tuple[str, int]],
            attribute: str) -> dict[str, tuple[str, int, str]]:  # fmt: skip
    """{a copy's DOT name: (its mark, the position of the node it copies, its title)} for the far edges."""
    out = {}
    for p, v in cut:
        head = f"{clean(p.label)} ({names[p]})" if p.label else names[p]
        title = COPY_TITLE.format(name=head, consumer=names[v])
        out[copy_name(names[p], names[v])] = (attribute, marks[names[p]][1], title)
    return out
