"""The words every view of a graph uses: numbers, node names, formulas, and the node table, written once.

The terminal drawing (:mod:`viz.text`), the Graphviz drawings (:mod:`viz.dot`), the step-through pages
(:mod:`viz.steps`), the lessons and the exercises all say a node's name, value and formula through these
functions, so a node keeps its u(i) and a number its digits in every view of the same graph.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.1 (the node list u(1)..u(n)).
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence

from micrograph.engine import Value
from micrograph.errors import typed_repr
from micrograph.graph import Graph, node_name
from micrograph.meta import NodeMeta
from viz import style

__all__ = [
    "as_graph",
    "clean",
    "count",
    "factor",
    "fmt",
    "formula",
    "formula_numbers",
    "graph_name",
    "kind",
    "node_names",
    "node_rows",
    "node_table",
    "table",
    "NamedTable",
]


def as_graph(target: Value | Graph) -> Graph:
    """``target`` as a :class:`~micrograph.graph.Graph`: a Graph as is, a Value as ``Graph(value)``.

    Raises:
        TypeError: if target is neither.
    """
    if isinstance(target, Graph):
        return target
    if isinstance(target, Value):
        return Graph(target)
    raise TypeError(f"expected a Value or a Graph to draw, got {typed_repr(target)}")


def check_grad_table(grad_table: object, where: str) -> None:
    """Refuse a ``grad_table=`` that is neither None nor a mapping {node: dz/dnode}, naming ``where``.

    Raises:
        TypeError: the message shows how to make one (``Graph(z).backprop()``, Algorithm 6.2).
    """
    if grad_table is not None and not isinstance(grad_table, Mapping):
        raise TypeError(
            f"{where}(grad_table=...) must be a mapping {{node: dz/dnode}} such as Graph(z).backprop(), "
            f"got {typed_repr(grad_table)}"
        )


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
    if op.notation == "infix":
        return f"{args[0]} {op.symbol} {args[1]}"
    if op.notation == "prefix":
        return f"{op.symbol}{args[0]}"
    if op.notation == "postfix":  # x ** c
        return f"{args[0]}{op.symbol}"
    return f"{op.symbol}({', '.join(args)})"


def formula_numbers(node: Value, number: Callable[[Value, bool], str]) -> str:
    """How a node is computed, its arguments written as numbers: ``0.5000 × (-2.000)``, ``log(-1.000)``.

    ``number(argument, bracketed)`` writes one argument; ``bracketed`` is True where a negative number
    needs brackets to read right (an operand of a binary operation, of ``-x`` or of ``x^c``), False inside
    a function's own parentheses (``log(-1.000)``, never ``log((-1.000))``).
    """
    op = node.op
    if op is None:
        return formula(node, {})
    bracketed = op.arity == 2 or op.name == "neg" or op.param is not None
    return formula(node, {p: number(p, bracketed) for p in node.inputs})


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


def node_names(graph: Graph, extra: Iterable[Value] = ()) -> dict[Value, str]:
    """{node: "u1", ...}: the book's names, one name per node in every view of the same graph.

    A graph without nodes built by :func:`~micrograph.grad` is named u1..un in its topological order. A
    graph holding nodes of a backward subgraph B names them as figure 6.10 does: the nodes of the graph G
    that B was built for keep their names in G (u1..un), B's nodes are u(n+1), u(n+2), ... in B's order
    (``grad`` records G and the targets on each node of B), and any other node is numbered on after them
    in the graph's order. This repeats for B's built from B's (second and higher derivatives), without
    recursion. A view of one gradient of several names its B as ``draw_side_by_side`` for that target.

    Args:
        graph: the graph to name.
        extra: further nodes drawn with it (figure 6.10's B next to G), named after the same rule.

    Returns:
        A dict from each node of ``graph`` and ``extra`` to its name.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.1 and 6.5.6 (figure 6.10).
    """
    view = list(graph.nodes)
    view += [v for v in dict.fromkeys(extra) if v not in graph.index]
    # The chain of derivations below the view: the G of the newest grad call among the view's nodes, the
    # G of the newest call among that G's nodes, ... down to a graph that holds no such node.
    levels: list[tuple[list[Value], NodeMeta | None]] = []
    nodes, below = view, _newest_call(view, None)
    while below is not None:
        levels.append((nodes, below))
        nodes = Graph(below.z).nodes  # type: ignore[arg-type]
        below = _newest_call(nodes, below.call)
    levels.append((nodes, None))
    names: dict[Value, str] = {}
    count = 0
    for nodes, built_by in reversed(levels):  # innermost G first
        if built_by is not None:  # this graph holds the B of the call whose G was just named
            for v in _backward_order(nodes, built_by):
                if v not in names:
                    count += 1
                    names[v] = node_name(count)
        for v in nodes:
            if v not in names:
                count += 1
                names[v] = node_name(count)
    return names


def _backward_order(nodes: Sequence[Value], record: NodeMeta) -> list[Value]:
    """The nodes of B (built by the call of ``record``) among ``nodes``, in B's order.

    B's order is figure 6.10's: ``topological_order`` of the gradients for the targets T (in T's order)
    that no other node of B uses, without G's nodes; then from any other node of B that none uses. So
    the same nodes get the same names whichever gradients of the call are shown. The search stops at
    nodes that are not of this B (G's), which emit none of B's, so the order is the same as a search
    through G too.
    """
    ours = {}
    for v in nodes:
        m = v.meta
        if m is not None and m.call == record.call and m.z is record.z:
            ours[v] = m
    entry: dict[Value, Value] = {}
    targets = set(record.targets)
    for v, m in ours.items():
        for u in m.grad_of:
            if u in targets and u not in entry:
                entry[u] = v
    used = {p for v in ours for p in v.inputs if p in ours}  # a gradient another one is computed from
    results = [entry[t] for t in record.targets if t in entry and entry[t] not in used]
    order: list[Value] = []
    seen: set[Value] = set()
    for root in results + [v for v in ours if v not in used] + list(ours):
        if root in seen:
            continue
        seen.add(root)
        stack = [root]  # the path of an iterative depth-first search, parents in argument order
        while stack:
            node = stack[-1]
            for p in node.inputs:
                if p in ours and p not in seen:
                    seen.add(p)
                    stack.append(p)
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def _newest_call(nodes: Sequence[Value], before: int | None) -> NodeMeta | None:
    """The record of the newest grad call (before call ``before``) that built one of ``nodes``, or None."""
    newest: NodeMeta | None = None
    for v in nodes:
        m = v.meta
        if m is None or m.call is None or m.z is None or (before is not None and m.call >= before):
            continue
        if newest is None or m.call > newest.call:  # type: ignore[operator]
            newest = m
    return newest


def graph_name(node: Value, names: Mapping[Value, str]) -> str:
    """A node's label if it has one, else its u-name in ``names``, else ``""``."""
    return clean(node.label) if node.label else names.get(node, "")


def count(k: int, noun: str) -> str:
    """``"1 node"``, ``"3 nodes"``: a number and its noun, plural unless the number is 1."""
    return f"{k} {noun}" if k == 1 else f"{k} {noun}s"


def factor(x: float | None) -> str:
    """A number as a factor of a written-out product: :func:`fmt`, bracketed when negative (``(-1.000)``)."""
    return f"({fmt(x)})" if x is not None and x < 0 else fmt(x)


def table(rows: Sequence[Sequence[str]], header: Sequence[str], *, align: str | None = None) -> str:
    """A plain-text table under a ruled header, columns two spaces apart, trailing spaces removed.

    Args:
        rows: the cells, one sequence of strings per row.
        header: the column headings.
        align: one character per column, ``<`` (left) or ``>`` (right); right everywhere by default.
    """
    cols = [list(header), *[list(r) for r in rows]]
    widths = [max(len(r[c]) for r in cols) for c in range(len(header))]
    align = align or ">" * len(header)
    line = "  ".join(f"{{:{a}{w}}}" for a, w in zip(align, widths))
    out = [line.format(*header), "  ".join(("-" if h else " ") * w for h, w in zip(header, widths))]
    out += [line.format(*r) for r in cols[1:]]
    return "\n".join(row.rstrip() for row in out)


def _cell(x: float | str | None) -> str:
    return x if isinstance(x, str) else fmt(x)


def node_rows(
    graph: Graph,
    columns: Mapping[str, Sequence[float | str | None]],
    *,
    names: Mapping[Value, str] | None = None,
    empty: str = "?",
) -> list[list[str]]:
    """The node list u(1)..u(n) as rows of text: name, label, what it computes, then one cell per column.

    The one model of a node table: :func:`node_table` lays it out for the terminal, :mod:`viz.steps` as
    HTML. A number is shown by :func:`fmt`, None (not known yet) as ``empty``, a str as it is.
    """
    names = node_names(graph) if names is None else names
    rows = []
    for i, v in enumerate(graph.nodes):
        cells = [empty if c[i] is None else _cell(c[i]) for c in columns.values()]
        rows.append([names[v], clean(v.label), formula(v, names), *cells])
    return rows


def node_table(
    graph: Graph,
    columns: Mapping[str, Sequence[float | str | None]] | None = None,
    *,
    names: Mapping[Value, str] | None = None,
    notes: Sequence[str] | None = None,
    max_rows: int | None = None,
) -> str:
    """The node list u(1)..u(n) as a table: name, label, what it computes, then one column per entry.

    Args:
        graph: the graph G.
        columns: ``{heading: one entry per node}``; a number is shown by :func:`fmt` (None, not known
            yet, as ``?``), a str as it is. By default ``{"value": each node's data}``.
        names: the nodes' names (default :func:`node_names` of ``graph``).
        notes: a last, unheaded column of remarks, one per node (``"output z"``).
        max_rows: at most this many node rows; the middle of a longer graph is left out, with one row
            saying how many nodes are not shown.

    Returns:
        The table as lines of text (no trailing newline): the text columns left-aligned, the numbers
        right-aligned.
    """
    names = node_names(graph) if names is None else names
    cols = {"value": [v.data for v in graph.nodes]} if columns is None else columns
    cells = node_rows(graph, cols, names=names)
    n = len(graph.nodes)
    shown: list[int | None] = list(range(n))
    if max_rows is not None and n > max_rows:
        head = max_rows // 2
        shown = [*range(head), None, *range(n - (max_rows - head), n)]
    rows = []
    for i in shown:
        if i is None:
            rows.append(["...", "", f"({n - len(shown) + 1} nodes not shown)", *([""] * len(cols)), ""])
            continue
        rows.append([*cells[i], notes[i] if notes else ""])
    header = ["u(i)", "label", "computes", *cols.keys(), ""]
    return table(rows, header, align="<<<" + ">" * len(cols) + "<")


class NamedTable(dict):  # type: ignore[type-arg]
    """A dict from node to number (a grad_table) that shows itself with the book's names u(i).

    ``repr`` lists ``grad_table[u3] (x) = 0.2100`` lines in the graph's order, instead of the Values' own
    long reprs; everything else is the plain dict.

    Args:
        graph: the graph whose nodes are the keys (their names come from it).
        entries: the initial entries.
        title: the name shown for the table (default ``"grad_table"``).
    """

    def __init__(self, graph: Graph, entries: Iterable[tuple[Value, float]] = (), title: str = "grad_table"):
        super().__init__(entries)
        self.graph = graph
        self.title = title

    def __repr__(self) -> str:
        names = node_names(self.graph)
        lines = []
        for v in self.graph.nodes:
            if v in self:
                label = f" ({clean(v.label)})" if v.label else ""
                lines.append(f"{self.title}[{names[v]}]{label} = {fmt(self[v])}")
        others = len(self) - len(lines)
        if others:
            lines.append(f"... and {others} entries for nodes outside the graph")
        return "\n".join(lines) if lines else f"{self.title}: empty"

    __str__ = __repr__
