"""The explorer's drawings: G and B laid out once by Graphviz, apart, the two ``dot`` runs at once.

Each drawing's SVG is marked for the page: every node group carries its position (``data-node`` in G,
``data-bnode`` in B) and the texts the page writes numbers into carry a class (``mg-data``, ``mg-grad``).
Why apart and why ``nslimit``: docs/architecture.md, "Layout".

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, figure 6.10.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor

from micrograph.engine import Value
from micrograph.graph import Graph
from viz.dot import digraph, draw_backward
from viz.render import pipe_svg, svg_element

__all__ = ["layout", "BOX_WIDTH"]

_SVG_NS = "http://www.w3.org/2000/svg"
BOX_WIDTH = 118
"""Each box's least width in points: room for ``grad -1.234e-100`` when the page writes it in."""


def _annotated_svg(svg: str, marks: dict[str, tuple[str, int]], rows: int) -> str:
    """Graphviz's SVG with each node group marked (``data-node`` for G, ``data-bnode`` for B) and the texts
    the page writes numbers into marked by class: the last two rows of a G box (``data``, ``grad``), the
    last row of a B box (``data``). Ids are dropped: two drawings share one page.

    Args:
        svg: Graphviz's SVG.
        marks: {node name in the DOT source: (attribute, position)}.
        rows: how many rows at the end of a box are numbers (2 in G, 1 in B).
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
        mark = marks.get(title.text if title is not None and title.text else "")
        if mark is None:
            continue
        g.set(mark[0], str(mark[1]))
        texts = g.findall("s:text", ns)
        for cls, t in zip(("mg-data", "mg-grad")[:rows], texts[len(texts) - rows :]):
            t.set("class", cls)
    return ET.tostring(root, encoding="unicode")


def layout(graph: Graph, B: list[Value], names: dict[Value, str], max_nodes: int) -> tuple[str, str, str]:
    """G and B laid out apart, the two ``dot`` runs at once: (G's SVG, B's SVG or "", a note)."""
    dots = [digraph(graph, width=BOX_WIDTH)]
    note = ""
    if not B:
        note = "B is empty: no gradient flows to the targets."
    elif len(B) > max_nodes:
        note = f"B has {len(B)} nodes, more than max_nodes={max_nodes}: B is not drawn."
    else:
        dots.append(draw_backward(graph, B, names, width=BOX_WIDTH))
    if sys.platform == "emscripten":  # Python in a browser page (Pyodide) has no threads
        svgs = [pipe_svg(d) for d in dots]
    else:
        with ThreadPoolExecutor(max_workers=2) as pool:
            svgs = list(pool.map(pipe_svg, dots))
    g_marks = {names[v]: ("data-node", i) for i, v in enumerate(graph.nodes)}
    b_marks = {names[v]: ("data-bnode", k) for k, v in enumerate(B)}
    svg_b = _annotated_svg(svgs[1], b_marks, 1) if len(svgs) > 1 else ""
    return _annotated_svg(svgs[0], g_marks, 2), svg_b, note
