"""An MLP drawn by layers or neurons: one box per group of :mod:`viz.groups`, G and B side by side.

A group's box (rounded corners) holds its title, the book's formula, and rows of the engine's numbers (its
nodes' values and grad_table entries, :mod:`viz.group_words`). A group of one untagged node is drawn as that
node's own box, as :func:`viz.draw` draws it. A group named in ``expand`` is drawn as its scalars, inside a
cluster titled as its box would be; the edges into and out of it go to the boxes of the other groups. An
arrow joins two boxes when an edge of the graph joins a node of one to a node of the other, once.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.4, section 6.5.7 (a minibatch's
cost drawn one node per layer), section 6.5.6 and figure 6.10 (G and B side by side).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import graphviz

from micrograph.engine import Value
from micrograph.graph import Graph
from viz import style
from viz.boxes import _caption, _fields, _legend_html, _new_digraph, _node_attrs, html_box
from viz.dot import check_size
from viz.group_words import Row, backward_rows, heading, row_text, titles, value_rows
from viz.groups import Group, Grouping, group_backward, group_graph
from viz.words import clean, count, node_names

__all__ = [
    "group_attrs",
    "group_lines",
    "placement",
    "grouped_digraph",
    "grouped_backward",
    "draw_grouped",
    "side_by_side_grouped",
]

_PARAMETERS = ("input", "weights", "biases", "parameters")
_CLUSTER = {
    "style": "rounded,dashed",
    "color": style.OPERATION["color"],
    "fontcolor": style.OPERATION["color"],
    "fontname": style.FONT,
    "fontsize": style.FONTSIZE,
}


def group_attrs(group: Group, *, backward: bool = False, output: bool = False) -> dict[str, str]:
    """A group box's colours: green for parameters and inputs, blue for operations, B's orange; rounded."""
    if backward:
        attrs = dict(style.GRADIENT if group.tagged else style.BACKWARD)
    else:
        attrs = dict(style.VARIABLE if group.kind in _PARAMETERS else style.OPERATION)
    attrs["style"] = f"{attrs.get('style', 'filled')},rounded"
    if output:
        attrs["penwidth"] = style.OUTPUT_PENWIDTH
    return attrs


def group_lines(
    lines: Sequence[str], rows: Sequence[Row], number: Callable[[Row, int], float | None]
) -> list[str]:
    """A box's text: its title lines, then each row of numbers (``number(row, position)``)."""
    return [*lines, *(row_text(r, lambda i, r=r: number(r, i)) for r in rows)]  # type: ignore[misc]


def placement(grouping: Grouping, nodes: Sequence[Value], names: Mapping[Value, str], expand: Collection[int],
              prefix: str) -> list[str]:  # fmt: skip
    """Per node position, the DOT name it is drawn as: its own (a scalar, or in an expanded group) or its
    group's box, ``{prefix}1``, ``{prefix}2``, ... in the grouping's order."""
    where = [""] * len(nodes)
    for g, group in enumerate(grouping.groups):
        own = group.kind == "scalar" or g in expand
        for i in group.members:
            where[i] = names[nodes[i]] if own else f"{prefix}{g + 1}"
    return where


def _edges(dot: Any, nodes: Sequence[Value], parents: Sequence[Sequence[int]], where: Sequence[str],
           scalar: Callable[[int], bool]) -> None:  # fmt: skip
    """The drawing's arrows: each edge of the graph between what its ends are drawn as, once per pair
    (numbered 1, 2 into a scalar whose operation is not commutative)."""
    seen: set[tuple[str, str]] = set()
    for i, pa in enumerate(parents):
        op = nodes[i].op
        numbered = scalar(i) and op is not None and op.arity == 2 and not op.commutative
        for k, j in enumerate(pa):
            tail, head = where[j], where[i]
            if tail == head or (not numbered and (tail, head) in seen):
                continue
            seen.add((tail, head))
            dot.edge(tail, head, **({"headlabel": str(k + 1)} if numbered else {}))


def _ranks(dot: Any, grouping: Grouping, expand: Collection[int], prefix: str) -> None:
    """One column per layer, as a network is drawn: the neurons of a layer applied to one example share a
    rank, and so do the parameters of a layer's neurons, and the inputs (each drawn as a box, not expanded),
    in order from the top."""
    columns: dict[tuple[Any, ...], list[str]] = {}
    for g, group in enumerate(grouping.groups):
        if g in expand or group.kind not in ("input", "neuron", "parameters"):
            continue
        columns.setdefault((group.kind, group.layer, group.example), []).append(f"{prefix}{g + 1}")
    for names in columns.values():
        if len(names) > 1:
            with dot.subgraph() as column:
                column.attr(rank="same")
                for name in names:
                    column.node(name)
                for a, b in itertools.pairwise(names):  # neuron 0 on top, as a network is drawn
                    column.edge(a, b, style="invis")


def grouped_digraph(
    nodes: Sequence[Value],
    parents: Sequence[Sequence[int]],
    grouping: Grouping,
    names: Mapping[Value, str],
    zname: str,
    *,
    data: Sequence[float | None],
    grads: Sequence[float | None],
    expand: Collection[int] = (),
    width: int | None = None,
    title: str | None = None,
    into: Any = None,
) -> graphviz.Digraph:
    """G drawn by groups: a box per group, the groups in ``expand`` (their positions) as their scalars.

    Args:
        nodes: G's nodes u(1)..u(n). parents: each node's parents' positions (``Graph.parents``).
        grouping: G's :class:`~viz.groups.Grouping`. names: every node's name (u1, ...). zname: z's name,
            for the rows ``∂z/∂a(1) = ``.
        data, grads: per node position, the value and the grad_table entry to write (None: ``?``; a row of
            grad_table entries none of which is given is left out).
        expand: groups drawn as their scalars. width: each box's least width in points.
        title: a caption above the drawing. into: draw into this (sub)graph instead of a new one.

    Returns:
        The ``graphviz.Digraph`` drawn into.
    """
    dot = into if into is not None else _new_digraph("G", title)
    last = len(nodes) - 1
    where = placement(grouping, nodes, names, expand, "g")

    def scalars(into: Any, members: Sequence[int]) -> None:
        for i in members:
            v = nodes[i]
            into.node(names[v], html_box(_fields(names[v], v, names, data[i], grads[i]),
                                         _node_attrs(v, output=i == last), width=width))  # fmt: skip

    for g, group in enumerate(grouping.groups):
        lines = heading(group, titles(group, nodes, grouping.level, names, zname))
        if group.kind == "scalar":
            scalars(dot, group.members)
        elif g in expand:
            with dot.subgraph(name=f"cluster_g{g + 1}") as sub:
                sub.attr(label=lines[0], **_CLUSTER)
                scalars(sub, group.members)
        else:
            rows = [r for r in value_rows(group, nodes, grouping.level, zname)  # no entries: no row
                    if not r.grad or any(grads[i] is not None for i in r.nodes)]  # fmt: skip
            text = group_lines(lines, rows, lambda r, i: grads[i] if r.grad else data[i])
            dot.node(
                f"g{g + 1}", html_box(text, group_attrs(group, output=last in group.members), width=width)
            )
    _ranks(dot, grouping, expand, "g")
    _edges(dot, nodes, parents, where, lambda i: not where[i].startswith("g"))
    return dot


def grouped_backward(
    B: Sequence[Value],
    grouping: Grouping,
    g_grouping: Grouping,
    G: Sequence[Value],
    names: Mapping[Value, str],
    zname: str,
    *,
    expand: Collection[int] = (),
    width: int | None = None,
    into: Any = None,
) -> graphviz.Digraph:
    """B drawn by groups (:func:`viz.groups.group_backward`), each box the values of its gradient nodes.

    Args:
        B: B's nodes in B's order. grouping: B's grouping. g_grouping: G's (for the names of the roles).
        G: G's nodes. names: every node's name, G's and B's. zname: z's name.
        expand: B's groups drawn as their nodes. width: each box's least width. into: draw into this graph.

    Returns:
        The ``graphviz.Digraph`` drawn into.
    """
    dot = into if into is not None else _new_digraph("B", None)
    position = {v: k for k, v in enumerate(B)}
    parents = [[position[p] for p in v.inputs if p in position] for v in B]
    twins = {grp.key: grp for grp in g_grouping.groups}
    where = placement(grouping, B, names, expand, "b")
    for g, group in enumerate(grouping.groups):
        if group.kind == "scalar" or g in expand:
            for k in group.members:
                v = B[k]
                dot.node(names[v], html_box(_fields(names[v], v, names, v.data, None, show_grad=False,
                                                    caption=_caption(v, zname, names)),
                                            _node_attrs(v), width=width))  # fmt: skip
            continue
        twin = twins.get(group.key)
        head = titles(twin or group, G if twin else B, grouping.level, names, zname)[0]
        lines = [f"B: {head} · {count(len(group.members), 'node')} of B"]
        rows = backward_rows(group, twin, B, G, grouping.level, zname)
        text = group_lines(lines, rows, lambda r, k: B[k].data)
        dot.node(f"b{g + 1}", html_box(text, group_attrs(group, backward=True), width=width))
    _edges(dot, B, parents, where, lambda k: not where[k].startswith("b"))
    return dot


def _expanded(graph: Graph, grouping: Grouping, expand: Iterable[Value], where: str) -> set[int]:
    """The groups of the nodes in ``expand``.

    Raises:
        ValueError: a node not in the graph.
    """
    out = set()
    for k, v in enumerate(expand):
        if not isinstance(v, Value) or v not in graph.index:
            raise ValueError(f"{where}: expand[{k}] = {v!r} is not a node of the graph drawn")
        out.add(grouping.group_of[graph.index[v]])
    return out


def _size(grouping: Grouping, expand: Collection[int]) -> int:
    """How many boxes a grouped drawing has: one per group, a scalar's per node of an expanded one."""
    return sum(
        len(g.members) if g.kind == "scalar" or k in expand else 1 for k, g in enumerate(grouping.groups)
    )


def draw_grouped(
    graph: Graph,
    level: str,
    *,
    grads: Sequence[float | None],
    expand: Iterable[Value] = (),
    title: str | None = None,
    max_nodes: int,
) -> graphviz.Digraph:
    """:func:`viz.draw` at ``level`` ``"layers"`` or ``"neurons"`` (see there).

    Raises:
        ValueError: an unknown level, or a node of ``expand`` not in the graph.
        GraphTooLarge: more than ``max_nodes`` boxes.
    """
    grouping = group_graph(graph, level)
    opened = _expanded(graph, grouping, expand, "draw(expand=...)")
    check_size(_size(grouping, opened), max_nodes, f"the drawing by {level}", network=True)
    names = node_names(graph)
    z = graph.output
    zname = clean(z.label, 12) or names[z]
    data = [v.data for v in graph.nodes]
    return grouped_digraph(
        graph.nodes, graph.parents, grouping, names, zname, data=data, grads=grads, expand=opened, title=title
    )


def side_by_side_grouped(
    G: Graph,
    B: Sequence[Value],
    grads: Sequence[float | None],
    level: str,
    *,
    expand: Iterable[Value] = (),
    max_nodes: int,
) -> graphviz.Digraph:
    """:func:`viz.draw_side_by_side` at ``level``: G and B grouped the same way, in two clusters.

    A dashed arrow goes from a box of G to a box of B when a node of B reads a node of G, once per pair.

    Raises:
        ValueError: an unknown level, or a node of ``expand`` not in G.
        GraphTooLarge: more than ``max_nodes`` boxes in G and B together.
    """
    g_grouping = group_graph(G, level)
    b_grouping = group_backward(G, g_grouping, B)
    opened = _expanded(G, g_grouping, expand, "draw_side_by_side(expand=...)")
    keys = {g_grouping.groups[g].key for g in opened}
    b_opened = {g for g, grp in enumerate(b_grouping.groups) if grp.key in keys}
    check_size(
        _size(g_grouping, opened) + _size(b_grouping, b_opened),
        max_nodes,
        f"the drawing of G and B by {level}",
        network=True,
    )
    names = node_names(G, B)
    z = G.output
    zname = clean(z.label, 12) or names[z]
    dot = _new_digraph("figure_6_10", None)
    dot.attr(compound="true", newrank="true")
    with dot.subgraph(name="cluster_G") as g:
        g.attr(**style.CLUSTER_G)
        grouped_digraph(G.nodes, G.parents, g_grouping, names, zname, data=[v.data for v in G.nodes],
                        grads=grads, expand=opened, into=g)  # fmt: skip
    with dot.subgraph(name="cluster_B") as b:
        b.attr(**style.CLUSTER_B)
        grouped_backward(B, b_grouping, g_grouping, G.nodes, names, zname, expand=b_opened, into=b)
    in_g = placement(g_grouping, G.nodes, names, opened, "g")
    in_b = placement(b_grouping, B, names, b_opened, "b")
    crossing: dict[tuple[str, str], None] = {}
    first: dict[str, None] = {}
    B_set = set(B)
    for k, v in enumerate(B):
        for p in v.inputs:
            if p in G.index:
                crossing[(in_g[G.index[p]], in_b[k])] = None
        if not any(p in B_set for p in v.inputs):
            first[in_b[k]] = None
    for tail, head in crossing:
        dot.edge(tail, head, **style.CROSS_EDGE)
    for head in first:  # B to the right of G, as figure 6.10 draws it (invisible: no meaning)
        dot.edge(in_g[len(G.nodes) - 1], head, style="invis")
    dot.attr(label=_legend_html(), labelloc="b", labeljust="l")
    return dot
