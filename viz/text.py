"""A terminal drawing of a graph that needs no Graphviz.

:func:`text` prints the node list u(1)..u(n) of Algorithm 6.1 as a table, one line per node in
topological order: its name, label, how it is computed from its parents (``u3 = u1 × u2``), its value
and its gradient. Its words (:func:`fmt`, :func:`formula`, :func:`clean`, :func:`node_names`) come from
:mod:`viz.words`, shared with the Graphviz drawings, the step-through pages and the lessons.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1, Algorithm 6.1.
"""

from __future__ import annotations

import math

from micrograph.engine import Value
from micrograph.graph import Graph
from viz.words import as_graph, count, fmt, graph_name, node_names, node_table

__all__ = ["text"]


def text(target: Value | Graph, *, max_rows: int = 200) -> str:
    """A terminal drawing of G: one line per node u(i) in topological order, leaves first.

    Each line gives the node's name u(i), its label, how it is computed (``u3 = u1 × u2``; edges are
    the names on the right-hand side, in argument order), its value ``data`` and its gradient ``grad``
    (the ``.grad`` field, filled by ``backward()``), with 4 significant digits. Nodes of a backward
    subgraph B built by :func:`micrograph.grad` are marked ``B``; gradient nodes say what they are the
    gradient of. Labels are shown with control characters escaped, so a label cannot move the cursor or
    change the terminal's colours.

    Args:
        target: the output z (a Value) or a Graph.
        max_rows: at most this many node lines; the middle of a longer graph is elided (one line says
            how many nodes are not shown).

    Returns:
        The drawing, lines separated by ``\\n`` (no trailing newline).

    Raises:
        TypeError: if target is neither a Value nor a Graph.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1, Algorithm 6.1.
    """
    graph = as_graph(target)
    names = node_names(graph)
    n = len(graph.nodes)
    stale = _stale(graph)
    notes = []
    for i, v in enumerate(graph.nodes):
        note = ""
        if v.in_backward:
            note = "B"
            if v.grad_of is not None:
                of = graph_name(v.grad_of, names)
                note = f"B: dz/d{of}" if of else "B: a gradient dz/du"
        if i == n - 1:
            # u(n) is z, unless it is a derivative of z (a node of B): then it is just this view's output
            note = (note + ", " if note else "") + ("output" if v.in_backward else "output z")
        notes.append(note)
    columns: dict[str, list[float | str | None]] = {
        "data": [v.data for v in graph.nodes],
        "grad": [fmt(v.grad) + ("*" if i in stale else "") for i, v in enumerate(graph.nodes)],
    }
    inputs, edges = count(graph.n_inputs, "input"), count(graph.num_edges, "edge")
    lines = [f"G: {count(n, 'node')} (n_i = {inputs}), {edges}"]
    lines += node_table(graph, columns, names=names, notes=notes, max_rows=max_rows).splitlines()
    if stale:
        lines.append(f"* {count(len(stale), 'grad')} not dz/du at the data shown: the data changed after")
        lines.append("  backward(), or backward() ran twice; set .grad = 0 and call backward() again")
    return "\n".join(lines)


STALE_CHECK_LIMIT = 100_000
"""Graphs up to this many nodes have their .grad fields checked against the data (one Algorithm 6.2 run)."""


def _stale(graph: Graph) -> set[int]:
    """Positions whose ``.grad`` is not dz/du at the nodes' current data, once backward() has filled them.

    A gradient is stale when the data changed after ``backward()`` (``Graph.forward`` with new inputs) or
    when ``backward()`` added into ``.grad`` twice. The engine's Algorithm 6.2 at the current data is the
    reference; where it is undefined, or before any backward() (every .grad 0), nothing is marked.
    """
    if len(graph.nodes) > STALE_CHECK_LIMIT or graph.output.grad == 0.0:
        return set()
    try:
        table = list(graph.backprop().values())
    except (ArithmeticError, ValueError):
        return set()
    out = set()
    for i, (v, g) in enumerate(zip(graph.nodes, table)):
        if not math.isclose(v.grad, g, rel_tol=1e-9, abs_tol=1e-12) and not (math.isnan(g) and v.is_constant):
            out.add(i)
    return out
