"""A terminal drawing of a graph that needs no Graphviz, and the words every drawing uses for a node.

:func:`text` prints the node list u(1)..u(n) of Algorithm 6.1 as a table, one line per node in
topological order: its name, label, how it is computed from its parents (``u3 = u1 × u2``), its value
and its gradient. The helpers :func:`fmt`, :func:`formula` and :func:`clean` are shared with the
Graphviz drawings (:mod:`viz.dot`) and the step-by-step page (:mod:`viz.steps`), so the three say the
same thing in the same words.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1, Algorithm 6.1.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping
from typing import Any

from micrograph.engine import Value
from micrograph.graph import Graph
from viz import style

__all__ = ["text", "fmt", "formula", "clean", "kind", "as_graph", "node_names", "graph_name"]


def as_graph(target: Value | Graph) -> Graph:
    """``target`` as a :class:`~micrograph.graph.Graph`: a Graph as is, a Value as ``Graph(value)``.

    Raises:
        TypeError: if target is neither.
    """
    if isinstance(target, Graph):
        return target
    if isinstance(target, Value):
        return Graph(target)
    raise TypeError(f"expected a Value or a Graph to draw, got {type(target).__name__} {target!r}")


def fmt(x: float | None, digits: int = style.SIGNIFICANT_DIGITS) -> str:
    """A number with ``digits`` significant digits, trailing zeros kept (``0.4200``, ``1.000``)

    None (a value not computed yet) is shown as ``"?"``; -0.0 as ``0.000``.
    """
    if x is None:
        return "?"
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if x == 0:
        x = 0.0
    return f"{x:#.{digits}g}"


def clean(label: str, limit: int = 40) -> str:
    """User text made safe to show on one line: control characters (ANSI escapes, newlines) as ``\\xNN``.

    Longer than ``limit`` characters, the text is cut with an ellipsis. The result is still raw text:
    each output format escapes it its own way (DOT records, HTML).
    """
    out = []
    for ch in label:
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            out.append(f"\\x{ord(ch):02x}" if ord(ch) < 256 else f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    s = "".join(out)
    return s if len(s) <= limit else s[: limit - 1] + "…"


def formula(node: Value, names: Mapping[Value, str]) -> str:
    """How a node is computed from its parents, named by ``names``: ``u1 × u2``, ``tanh(u3)``, ``u2^2``.

    A leaf is ``"input"`` (a variable) or ``"constant"``.
    """
    op = node.op
    if op is None:
        return "constant" if node.is_constant else "input"
    args = [names.get(p, "?") for p in node.inputs]
    if op.arity == 2:
        return f"{args[0]} {op.symbol} {args[1]}"
    if op.name == "neg":
        return f"{op.symbol}{args[0]}"
    if op.param is not None:  # x ** c
        return f"{args[0]}{op.symbol}"
    return f"{op.symbol}({args[0]})"


def kind(node: Value) -> str:
    """What a node is, in one word: ``"variable"``, ``"constant"``, ``"gradient"`` (a grad_table entry of
    B), ``"backward"`` (another node of B) or ``"operation"``."""
    if node.in_backward:
        if node.grad_of is not None:
            return "gradient"
        return "constant" if node.is_constant else "backward"
    if node.op is None:
        return "constant" if node.is_constant else "variable"
    return "operation"


def node_names(graph: Graph) -> dict[Value, str]:
    """{node: "u1", ...}: the book's names in the graph's topological order."""
    return {v: f"u{i}" for i, v in enumerate(graph.nodes, 1)}


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
    rows: list[tuple[str, ...]] = []
    n = len(graph.nodes)
    shown: list[Any] = list(range(n))
    if n > max_rows:
        head = max_rows // 2
        shown = [*range(head), None, *range(n - (max_rows - head), n)]
    for i in shown:
        if i is None:
            rows.append(("...", "", f"({n - max_rows} nodes not shown)", "", "", ""))
            continue
        v = graph.nodes[i]
        what = formula(v, names)
        note = ""
        if v.in_backward:
            note = "B"
            if v.grad_of is not None:
                of = graph_name(v.grad_of, names)
                note = f"B: dz/d{of}" if of else "B: a gradient dz/du"
        if i == n - 1:
            note = (note + ", " if note else "") + "output z"
        rows.append((names[v], clean(v.label), what, fmt(v.data), fmt(v.grad), note))
    header = ("node", "label", "computation", "data", "grad", "")
    widths = [max(len(r[c]) for r in [header, *rows]) for c in range(6)]
    inputs, edges = _count(graph.n_inputs, "input"), _count(graph.num_edges, "edge")
    lines = [f"G: {_count(n, 'node')} (n_i = {inputs}), {edges}"]
    for r in [header, *rows]:
        cells = [
            r[0].ljust(widths[0]),
            r[1].ljust(widths[1]),
            r[2].ljust(widths[2]),
            r[3].rjust(widths[3]),
            r[4].rjust(widths[4]),
            r[5],
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _count(k: int, noun: str) -> str:
    return f"{k} {noun}" if k == 1 else f"{k} {noun}s"


def graph_name(node: Value, names: Mapping[Value, str]) -> str:
    """A node's label if it has one, else its u-name in ``names``, else ``""``."""
    return clean(node.label) if node.label else names.get(node, "")
