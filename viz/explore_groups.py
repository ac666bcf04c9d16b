"""The explorer of an MLP: G and B by layers or by neurons, and each group's scalars laid out for a click.

For each level (:data:`viz.groups.LEVELS`) this lays out, once, with Graphviz: G by groups, B by the same
groups (apart, as the explorer lays out G and B), and for every group of at most ``max_nodes`` scalars (in G
and in B) its scalars: the nodes of G it holds (with the nodes of other groups that feed them, faded) and
its nodes of B. The page shows one level at a
time and a group's scalars when the group is clicked, or chosen with the keyboard (Tab, then Enter).

Every number a box shows is a slot of the page's program (the values of Algorithm 6.1, the grad_table
entries as B computes them): a group's rows name the nodes whose slots they show (:mod:`viz.group_words`),
and the SVG's texts carry the marks the page writes them into. Nothing is summed or averaged for a group.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.4 and 6.5.7 (the MLP by
layers), 6.5.6 and figure 6.10 (G and B side by side).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

import graphviz

from micrograph.engine import Value
from micrograph.graph import Graph
from viz import style
from viz.boxes import _fields, _new_digraph, _node_attrs, html_box
from viz.dot import check_size, draw_backward
from viz.explore_layout import BOX_WIDTH, _annotated_svg
from viz.group_words import Row, backward_rows, titles, value_rows
from viz.groups import LEVELS, Grouping, group_backward, group_graph
from viz.groups_dot import grouped_backward, grouped_digraph, placement
from viz.words import clean

__all__ = ["MAX_SCALARS", "checked_levels", "checked_backward", "mlp_views"]

MAX_SCALARS = 20_000
"""The largest G the explorer shows by groups: the page's program computes every node and its grad_table
entry, and every group's scalars are laid out once."""

_NS = "http://www.w3.org/2000/svg"


def _rows(rows: list[Row], slot: Any) -> list[dict[str, Any]]:
    return [
        {"head": r.head, "tail": r.tail, "grad": r.grad, "nodes": [slot(i) for i in r.nodes]} for r in rows
    ]


def _inside(
    graph: Graph, members: list[int], names: dict[Value, str], grads: list[float]
) -> graphviz.Digraph:
    """A group's scalars of G as boxes (values and grad_table entries written by the page), and faded, the
    nodes of other groups that feed them (named only)."""
    nodes, last = graph.nodes, len(graph.nodes) - 1
    mine = set(members)
    dot = _new_digraph("inside", None)
    outside: dict[int, None] = {}
    for i in members:
        v = nodes[i]
        dot.node(names[v], html_box(_fields(names[v], v, names, v.data, grads[i]),
                                    _node_attrs(v, output=i == last), width=BOX_WIDTH))  # fmt: skip
        outside.update((j, None) for j in graph.parents[i] if j not in mine)
    for j in outside:
        v = nodes[j]
        head = f"{clean(v.label)} ({names[v]})" if v.label else names[v]
        dot.node(f"o{j}", html_box([head], {**style.FADED, "style": "filled,dashed"}))
    for i in members:
        for k, j in enumerate(graph.parents[i]):
            op = nodes[i].op
            numbered = op is not None and op.arity == 2 and not op.commutative
            tail = names[nodes[j]] if j in mine else f"o{j}"
            dot.edge(tail, names[nodes[i]], **({"headlabel": str(k + 1)} if numbered else {}))
    return dot


def _mark_groups(svg: str, marks: dict[str, tuple[str, int, str, int]]) -> str:
    """The boxes of groups marked for the page: ``data-group`` (or ``data-bgroup``) and focusable (a button
    named by its title), the texts of their rows of numbers marked ``mg-row`` with ``data-row``; the faded
    nodes of other groups in a group's drawing marked ``data-outside``. The boxes come last in the SVG, in
    the groups' order (reading order, :mod:`viz.groups`), which is the order Tab moves through them.

    Args:
        svg: an SVG that :func:`viz.explore_layout._annotated_svg` has marked.
        marks: {DOT name: (attribute, position, accessible name, how many rows at the box's end)}.
    """
    ET.register_namespace("", _NS)
    ET.register_namespace("xlink", "http://www.w3.org/1999/xlink")
    root = ET.fromstring(svg)
    boxes: list[tuple[int, ET.Element, ET.Element]] = []
    for parent in root.iter():
        for g in parent.findall(f"{{{_NS}}}g"):
            if g.get("class") == "node":
                title = g.find(f"{{{_NS}}}title")
                mark = marks.get(title.text if title is not None and title.text else "")
                if mark is not None:
                    boxes.append((mark[1], parent, g))
    for _, parent, g in sorted(boxes, key=lambda b: b[0]):  # the groups in reading order: the order of Tab
        parent.remove(g)
        parent.append(g)
    for g in root.iter(f"{{{_NS}}}g"):
        if g.get("class") != "node":
            continue
        title = g.find(f"{{{_NS}}}title")
        name = title.text if title is not None and title.text else ""
        if name.startswith("o") and name[1:].isdigit():
            g.set("data-outside", name[1:])
            continue
        mark = marks.get(name)
        if mark is None:
            continue
        attr, position, label, rows = mark
        g.set(attr, str(position))
        g.set("class", "node mg-group")
        g.set("tabindex", "0")
        g.set("role", "button")
        g.set("aria-label", label)
        texts = g.findall(f"{{{_NS}}}text")
        for r, t in enumerate(texts[len(texts) - rows :] if rows else []):
            t.set("class", "mg-row")
            t.set("data-row", str(r))
    return ET.tostring(root, encoding="unicode")


def _boxes(grouping: Grouping) -> int:
    """The boxes of a drawing by groups: one per group, and a group of one untagged node is that node."""
    return sum(1 if g.kind != "scalar" else len(g.members) for g in grouping.groups)


def checked_levels(graph: Graph, max_nodes: int) -> dict[str, Grouping]:
    """G grouped at every level (:data:`viz.groups.LEVELS`), each drawing's size checked first: the page holds
    every level whatever level it opens at, so a network too large at any level is refused here, before
    B, the frames or any layout is made.

    Args:
        graph: G. max_nodes: the most boxes of any one drawing.

    Returns:
        ``{level: G's grouping}``.

    Raises:
        GraphTooLarge: G has more than :data:`MAX_SCALARS` nodes (``what`` is ``"G"``), or G's drawing at a
            level more than max_nodes boxes (``what`` is ``"G by layers"``, ``"G by neurons"``).

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.4 and 6.5.7.
    """
    check_size(len(graph.nodes), MAX_SCALARS, "G", network=True)
    out = {}
    for level in LEVELS:
        out[level] = group_graph(graph, level)
        check_size(_boxes(out[level]), max_nodes, f"G by {level}", network=True)
    return out


def checked_backward(
    graph: Graph, levels: dict[str, Grouping], B: list[Value], max_nodes: int
) -> dict[str, tuple[Grouping, Grouping]]:
    """B grouped as G is at every level, each drawing's size checked before anything is laid out.

    Args:
        graph: G. levels: G's grouping at every level (:func:`checked_levels`). B: the drawn part of B, in
            B's order. max_nodes: the most boxes of any one drawing.

    Returns:
        ``{level: (G's grouping, B's grouping)}``, as :func:`mlp_views` takes them.

    Raises:
        GraphTooLarge: B's drawing at a level has more than max_nodes boxes (``"B by layers"`` ...).

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.6 and 6.5.7.
    """
    out = {}
    for level, grouping in levels.items():
        b_grouping = group_backward(graph, grouping, B)
        check_size(len(b_grouping.groups), max_nodes, f"B by {level}", network=True)
        out[level] = (grouping, b_grouping)
    return out


def _level(graph: Graph, B: list[Value], names: dict[Value, str], zname: str, level: str, program: Any,
           table: list[Value], max_nodes: int, grouping: Grouping,
           b_grouping: Grouping) -> tuple[dict[str, Any], list[graphviz.Digraph]]:  # fmt: skip
    """One level's data for the page and its drawings (G, B, then each group's G and B scalars)."""
    nodes = graph.nodes
    b_of = {grp.key: k for k, grp in enumerate(b_grouping.groups)}
    grads = [table[i].data for i in range(len(nodes))]
    dots = [
        grouped_digraph(nodes, graph.parents, grouping, names, zname, data=[v.data for v in nodes],
                        grads=grads, width=BOX_WIDTH),
        grouped_backward(B, b_grouping, grouping, nodes, names, zname, width=BOX_WIDTH),
    ]  # fmt: skip
    groups = []
    for grp in grouping.groups:
        twin = b_of.get(grp.key, -1)
        b_members = b_grouping.groups[twin].members if twin >= 0 else []
        lines = titles(grp, nodes, level, names, zname)
        groups.append({
            "kind": grp.kind, "title": lines[0], "members": grp.members, "b": twin, "b_members": b_members,
            "rows": _rows(value_rows(grp, nodes, level, zname), lambda i: i),
        })  # fmt: skip
        if grp.kind != "scalar" and len(grp.members) <= max_nodes and len(b_members) <= max_nodes:
            dots.append(_inside(graph, grp.members, names, grads))
            dots.append(draw_backward(graph, [B[k] for k in b_members], names, width=BOX_WIDTH))
        else:  # a single node is in the drawing already; too many are not drawn (the page says so)
            groups[-1]["svg"] = groups[-1]["svg_b"] = ""
    b_groups = []
    in_g = {grp.key: grp for grp in grouping.groups}
    for grp in b_grouping.groups:
        rows = backward_rows(grp, in_g.get(grp.key), B, nodes, level, zname)
        b_groups.append({"kind": grp.kind, "members": grp.members,
                         "rows": _rows(rows, lambda k: program.slot[B[k]])})  # fmt: skip
    return {"groups": groups, "b_groups": b_groups, "group_of": grouping.group_of,
            "b_group_of": b_grouping.group_of, "_g": grouping, "_b": b_grouping}, dots  # fmt: skip


def _marked(
    level: dict[str, Any], svgs: list[str], graph: Graph, B: list[Value], names: dict[Value, str]
) -> None:
    """The level's SVGs marked for the page, into ``level`` (svg_g, svg_b, each group's svg and svg_b)."""
    grouping: Grouping = level.pop("_g")
    b_grouping: Grouping = level.pop("_b")
    g_marks = {
        names[graph.nodes[i]]: ("data-node", i)
        for i, w in enumerate(placement(grouping, graph.nodes, names, (), "g"))
        if w.startswith("u")
    }
    b_marks = {
        names[B[k]]: ("data-bnode", k)
        for k, w in enumerate(placement(b_grouping, B, names, (), "b"))
        if w.startswith("u")
    }
    groups = level["groups"]
    level["svg_g"] = _mark_groups(
        _annotated_svg(svgs[0], g_marks, 2),
        {
            f"g{g + 1}": ("data-group", g, d["title"], len(d["rows"]))
            for g, d in enumerate(groups)
            if d["kind"] != "scalar"
        },
    )
    twins = {d["b"]: d["title"] for d in groups if d["b"] >= 0}
    level["svg_b"] = _mark_groups(
        _annotated_svg(svgs[1], b_marks, 1),
        {
            f"b{g + 1}": ("data-bgroup", g, f"B: {twins.get(g, 'nodes of B')}", len(d["rows"]))
            for g, d in enumerate(level["b_groups"])
            if d["kind"] != "scalar"
        },
    )
    rest = iter(svgs[2:])
    for d in groups:
        if "svg" in d:  # not drawn
            continue
        inside, inside_b = next(rest), next(rest)
        d["svg"] = _mark_groups(
            _annotated_svg(inside, {names[graph.nodes[i]]: ("data-node", i) for i in d["members"]}, 2), {}
        )
        d["svg_b"] = (
            _annotated_svg(inside_b, {names[B[k]]: ("data-bnode", k) for k in d["b_members"]}, 1)
            if d["b_members"]
            else ""
        )


def mlp_views(graph: Graph, B: list[Value], names: dict[Value, str], program: Any, table: list[Value],
              level: str, max_nodes: int,
              grouped: dict[str, tuple[Grouping, Grouping]] | None = None) -> dict[str, Any]:  # fmt: skip
    """The page's data for an MLP at every level (``spec["mlp"]``), ``level`` shown first.

    Args:
        graph: G. B: the drawn part of B, in B's order. names: every node's name. program: the page's
            generated program (its slots). table: per node of G, its grad_table entry as a node of B.
        level: the level shown first. max_nodes: the most boxes of any one drawing.
        grouped: G and B grouped at every level, their sizes checked (:func:`checked_levels`, then
            :func:`checked_backward`); None: grouped and checked here.

    Returns:
        ``{"level": level, "levels": {name: {"svg_g", "svg_b", "groups", "b_groups", "group_of", ...}}}``.

    Raises:
        GraphTooLarge: G has more than :data:`MAX_SCALARS` nodes, or a drawing more than max_nodes boxes.
        GraphvizMissing: Graphviz's ``dot`` program is not installed.
    """
    if grouped is None:
        grouped = checked_backward(graph, checked_levels(graph, max_nodes), B, max_nodes)
    z = graph.output
    zname = clean(z.label, 12) or names[z]
    levels, dots, counts = {}, [], []
    for name in LEVELS:
        data, drawings = _level(graph, B, names, zname, name, program, table, max_nodes, *grouped[name])
        levels[name] = data
        dots += drawings
        counts.append(len(drawings))
    from viz.render import pipe_svgs

    svgs = pipe_svgs(dots)
    start = 0
    for name, n in zip(LEVELS, counts):
        _marked(levels[name], svgs[start : start + n], graph, B, names)
        start += n
    return {"level": level, "levels": levels, "max_nodes": max_nodes}
