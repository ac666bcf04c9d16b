"""A terminal drawing of a graph that needs no Graphviz.

:func:`text` prints the node list u(1)..u(n) of Algorithm 6.1 as a table, one line per node in
topological order: its name, label, how it is computed from its parents (``u3 = u1 × u2``), its value
and its gradient. Its words (:func:`fmt`, :func:`formula`, :func:`clean`, :func:`node_names`) come from
:mod:`viz.words`, shared with the Graphviz drawings, the step-through pages and the lessons.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1, Algorithm 6.1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from micrograph.engine import Value
from micrograph.graph import Graph
from viz.words import as_graph, check_grad_table, count, fmt, graph_name, node_names, node_table

__all__ = ["text"]


def text(
    target: Value | Graph, *, max_rows: int = 200, grad_table: Mapping[Value, float] | None = None
) -> str:
    """A terminal drawing of G: one line per node u(i) in topological order, leaves first.

    Each line gives the node's name u(i), its label, how it is computed (``u3 = u1 × u2``; edges are
    the names on the right-hand side, in argument order), its value ``data`` and its gradient ``grad``
    (the ``.grad`` field, filled by ``backward()``), with 4 significant digits. Nodes of a backward
    subgraph B built by :func:`micrograph.grad` are marked ``B``; gradient nodes say what they are the
    gradient of. Labels are shown with control characters escaped, so a label cannot move the cursor or
    change the terminal's colours. Drawing runs no algorithm: it shows the fields as they are.

    Args:
        target: the output z (a Value) or a Graph.
        max_rows: at most this many node lines; the middle of a longer graph is elided (one line says
            how many nodes are not shown).
        grad_table: the grad_table of Algorithm 6.2 at the data shown, computed by the caller
            (``Graph(z).backprop()``); each ``.grad`` that differs from its entry is marked ``*``, with a
            line saying why (the data changed after ``backward()``, or ``backward()`` ran twice). Nothing
            is marked before any ``backward()`` (every ``.grad`` 0), or without a table.

    Returns:
        The drawing, lines separated by ``\\n`` (no trailing newline).

    Raises:
        TypeError: if target is neither a Value nor a Graph, grad_table is not a mapping, or max_rows is
            not an int.
        ValueError: if max_rows is not positive.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1, Algorithm 6.1.
    """
    if not isinstance(max_rows, int) or isinstance(max_rows, bool):
        raise TypeError(f"text(max_rows=...) must be a whole number of lines, got {max_rows!r}")
    if max_rows < 1:
        raise ValueError(f"text(max_rows=...) must be a positive number of lines, got {max_rows!r}")
    graph = as_graph(target)
    check_grad_table(grad_table, "text")
    names = node_names(graph)
    n = len(graph.nodes)
    stale = set() if grad_table is None else _stale(graph, grad_table)
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


def _stale(graph: Graph, grad_table: Mapping[Value, float]) -> set[int]:
    """Positions whose ``.grad`` is not their entry of ``grad_table``, once backward() has filled them.

    A gradient is stale when the data changed after ``backward()`` (``Graph.forward`` with new inputs) or
    when ``backward()`` added into ``.grad`` twice. Before any backward() (every .grad 0) nothing is marked;
    a node the table does not hold, or whose entry is nan for a constant, is not compared.
    """
    if graph.output.grad == 0.0:
        return set()
    out = set()
    for i, v in enumerate(graph.nodes):
        g = grad_table.get(v)
        if g is None or (math.isnan(g) and v.is_constant):
            continue
        if not math.isclose(v.grad, g, rel_tol=1e-9, abs_tol=1e-12):
            out.add(i)
    return out
