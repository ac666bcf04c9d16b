"""The explorer's drawings of G and B: far edges start at copies, every edge is drawn, small graphs as before.

An edge spanning more than ``LONGEST_EDGE`` ranks starts at a copy of its source beside its consumer
(viz/explore_layout.py). These tests read the SVG the page gets: the copies, their marks and titles, every
edge of G and B once (from the node or from its copy), the nodes' names, and the catalogue's graphs drawn
with no copy. The page's clicks and hovers on a copy are in tests/test_explore_browser.py; the layout's
seconds in benchmarks/layout.py (``make bench``).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.1 and 6.5.6, figure 6.10.
"""

from __future__ import annotations

import importlib.util
import itertools
import re
import shutil
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
from catalogue import CATALOGUE

from micrograph import Graph, Value
from micrograph.expr import build
from micrograph.graph import topological_order
from micrograph.symbolic import grad
from viz import explore
from viz.boxes import copy_name
from viz.dot import digraph
from viz.explore_layout import COPY_TITLE, LONGEST_EDGE, far_edges
from viz.render import pipe_svg
from viz.words import node_names

pytestmark = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")

ROOT = Path(__file__).resolve().parent.parent
SVG = "{http://www.w3.org/2000/svg}"


def nested_tanh(depth: int) -> Value:
    """``tanh(...tanh(tanh(x*y + x*1)*y + x*2)...*y + x*depth)`` as ``micrograph explore`` parses it."""
    text = "tanh(x*y + x*1)"
    for k in range(2, depth + 1):
        text = f"tanh({text}*y + x*{k})"
    return build(text, {"x": 0.5, "y": 0.3})


def _groups(svg: str, cls: str) -> list[ET.Element]:
    return [g for g in ET.fromstring(svg).iter(f"{SVG}g") if g.get("class") == cls]


def _title(g: ET.Element) -> str:
    t = g.find(f"{SVG}title")
    return t.text or "" if t is not None else ""


def _texts(g: ET.Element) -> list[str]:
    return [t.text or "" for t in g.iter(f"{SVG}text")]


def _drawn_edges(svg: str) -> Counter[tuple[str, str]]:
    """(tail, head) of every edge drawn, as DOT names (a copy's ``u1~u37``), counted."""
    return Counter(tuple(_title(g).split("->")) for g in _groups(svg, "edge"))  # type: ignore[misc]


def _expected_edges(
    nodes: list[Value], members: set[Value], names: dict[Value, str]
) -> Counter[tuple[str, str]]:
    """Every edge among ``nodes`` once per argument, from a copy where the edge is far."""
    far = set(far_edges(nodes, members))
    return Counter(
        (copy_name(names[p], names[v]) if (p, v) in far else names[p], names[v])
        for v in nodes
        for p in v.inputs
        if p in members
    )


def _x(g: ET.Element) -> float:
    """The middle of a node's box (its widest polygon or path) along the drawing's ranks."""
    xs = [
        float(x)
        for e in g.iter()
        for x in re.findall(r"(-?\d+(?:\.\d+)?),-?\d", e.get("points", e.get("d", "")))
    ]
    return (min(xs) + max(xs)) / 2


def test_an_edge_is_far_past_eight_ranks_and_listed_once() -> None:
    x = Value(0.3, label="x")
    u = x
    for _ in range(LONGEST_EDGE):
        u = u.tanh()
    near = Graph(u + x)  # the sum is LONGEST_EDGE + 1 ranks after x: the edge spans LONGEST_EDGE + 1
    assert far_edges(near.nodes, near.index) == [(x, near.output)]
    shorter = Graph(u.inputs[0] + x)
    assert far_edges(shorter.nodes, shorter.index) == []  # LONGEST_EDGE ranks: drawn whole
    twice = x - x  # one consumer reading x twice: one far edge, two drawn edges (arguments 1 and 2)
    g = Graph(u.tanh() + twice)  # twice is placed just before the sum, LONGEST_EDGE + 1 ranks after x
    assert far_edges(g.nodes, g.index) == [(x, twice)]
    assert far_edges(g.nodes, set(g.nodes) - {x}) == []  # x not drawn (as G's values B reads): no edge


def test_a_copy_is_drawn_once_for_a_consumer_that_reads_it_twice() -> None:
    x = Value(0.3, label="x")
    u = x
    for _ in range(LONGEST_EDGE):
        u = u.tanh()
    twice = x - x
    g = Graph(u.tanh() + twice)
    names = node_names(g)
    svg = pipe_svg(digraph(g, cut=set(far_edges(g.nodes, g.index))))
    copy = copy_name(names[x], names[twice])
    assert [_title(n) for n in _groups(svg, "node")].count(copy) == 1
    assert _texts(next(n for n in _groups(svg, "node") if _title(n) == copy)) == [f"x ({names[x]})"]
    from_copy = [e for e in _groups(svg, "edge") if _title(e) == f"{copy}->{names[twice]}"]
    assert sorted(t for e in from_copy for t in _texts(e)) == ["1", "2"]  # a - b: each argument numbered


def _copy_title(p: Value, v: Value, names: dict[Value, str]) -> str:
    return COPY_TITLE.format(name=f"{p.label} ({names[p]})" if p.label else names[p], consumer=names[v])


def _b_nodes(z: Value, g: Graph) -> list[Value]:
    """The drawn B for every variable, in B's topological order, as the explorer draws it."""
    table = grad(z, g.nodes)
    return [v for v in topological_order([table[g.index[w]] for w in g.variables]) if v not in g.index]


def test_far_edges_start_at_copies_and_every_edge_is_drawn() -> None:
    z = nested_tanh(12)
    g = Graph(z)
    spec = explore(z).spec
    B = _b_nodes(z, g)
    names = node_names(g, B)
    svg_g, svg_b = spec["svg_g"], spec["svg_b"]
    # the nodes: every node of G once, with its name, as without copies
    nodes = {int(n.get("data-node", "")): n for n in _groups(svg_g, "node") if n.get("data-node") is not None}
    assert sorted(nodes) == list(range(len(g.nodes)))
    assert all(_title(n) == names[g.nodes[i]] for i, n in nodes.items())
    # the copies: one per far edge, marked with the node's position, titled, showing its box's first row
    cut = {_copy_title(p, v, names): (p, v) for p, v in far_edges(g.nodes, g.index)}
    x = next(v for v in g.nodes if v.label == "x")
    assert sum(1 for p, _ in cut.values() if p is x) >= 6  # x's later consumers are far: copies are drawn
    copies = {_title(n): n for n in _groups(svg_g, "node") if n.get("data-copy") is not None}
    assert sorted(copies) == sorted(cut)
    for title, n in copies.items():
        p, v = cut[title]
        assert n.get("data-copy") == str(g.index[p])
        assert _texts(n) == [_texts(nodes[g.index[p]])[0]]  # "x (u1)", the box's first row
        # beside its consumer: in the rank before it, not across the drawing
        assert 0 < _x(nodes[g.index[v]]) - _x(n) <= 1.5 * _rank_step(list(nodes.values())), title
    # every edge of G drawn once per argument, from the node or from its copy; so in B
    assert _drawn_edges(svg_g) == _expected_edges(g.nodes, set(g.nodes), names)
    assert _drawn_edges(svg_b) == _expected_edges(B, set(B), names)
    b_copies = [n for n in _groups(svg_b, "node") if n.get("data-bcopy") is not None]
    assert len(b_copies) == len(far_edges(B, set(B))) > 0
    # the grad_table sum of x has a term for each edge drawn out of x or one of its copies
    out_of_x = sum(c for (tail, _), c in _drawn_edges(svg_g).items() if tail.split("~")[0] == names[x])
    assert len(spec["consumers"][g.index[x]]) == out_of_x == len(g.consumer_edges[g.index[x]])


def _rank_step(nodes: list[ET.Element]) -> float:
    """The distance between neighbouring ranks: the smallest gap between two boxes' middles."""
    xs = sorted({round(_x(n)) for n in nodes})
    return min(b - a for a, b in itertools.pairwise(xs))


@pytest.mark.parametrize("case", CATALOGUE, ids=[c.name for c in CATALOGUE])
def test_the_catalogues_graphs_have_no_far_edge(case) -> None:  # type: ignore[no-untyped-def]
    """The small graphs the lessons and tests use are drawn as before the copies: no edge is that long."""
    z, _ = case.build_values()
    g = Graph(z)
    B = _b_nodes(z, g)
    assert far_edges(g.nodes, g.index) == []
    assert far_edges(B, set(B)) == []


def test_the_benchmarks_families_are_of_400_to_500_nodes_and_fan_out_as_named() -> None:
    """benchmarks/layout.py times five families of 400-500 nodes in G; (a) and (b) feed 100 consumers."""
    spec = importlib.util.spec_from_file_location("layout_families", ROOT / "benchmarks" / "layout.py")
    assert spec is not None and spec.loader is not None
    families = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(families)
    fan_out = {}
    for family in families.FAMILIES:
        g = Graph(family.build())
        assert 400 <= len(g.nodes) <= 502, family.key  # (a), the expression as reported, has 502
        fan_out[family.key] = max(len({i for i, _ in edges}) for edges in g.consumer_edges)
    assert [f.key for f in families.FAMILIES] == ["a", "b", "c", "d", "e"]
    assert fan_out["a"] >= 100 and fan_out["b"] >= 100 and fan_out["c"] == fan_out["d"] == 1
