"""Lesson 1: forward propagation over the ordered node list u(1)..u(n) (Algorithm 6.1).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.1.
"""

# The steps take the live namespace as `l`, the name the student's stepper has in the REPL
# (l = lessons.start(n)), so the code shown for a step is what the student can type: hence E741.
# ruff: noqa: E741

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import viz
from lessons._core import Ours, Step, table
from micrograph import Graph, Value, pseudocode
from viz.dot import digraph
from viz.text import fmt, formula, node_names

__all__ = ["NUMBER", "SECTION", "SUMMARY", "TITLE", "steps"]

NUMBER = 1
TITLE = "Forward propagation over u(1)..u(n)"
SECTION = "section 6.5.3, Algorithm 6.1"
SUMMARY = (
    "A graph is an ordered node list; Algorithm 6.1 computes each u(i) from its parents Pa(u(i)), in order."
)

ALGO = pseudocode.ALGORITHM_6_1
LINES = {
    "list": Ours("u(1), ..., u(n_i) are the inputs; u(n) is the output"),
    "inputs": ALGO.line(0, 2),
    "loop": ALGO.line(3, 6),
    "return": ALGO.line(7),
}


def _build(l: Any) -> None:
    l.x = Value(1.0, label="x")
    l.y = Value(-0.5, label="y")
    l.z = (l.x * l.y + 2 * l.x).tanh()  # building z computes every value once, as it goes
    l.graph = Graph(l.z)  # the ordered node list u(1)..u(n), inputs first


def _build_text(l: Any) -> str:
    g = l.graph
    names = node_names(g)
    consts = [names[v] for v in g.leaves if v.is_constant]
    return (
        f"We build z = tanh(x*y + 2*x) at x = {fmt(l.x.data)}, y = {fmt(l.y.data)}. micrograph orders the "
        f"graph G as the book does: a list u(1)..u(n) with n = {len(g.nodes)} nodes, each after its parents. "
        f"The first n_i = {g.n_inputs} are the inputs: the variables x and y, and the constant 2 "
        f"({', '.join(consts)}): a number in an expression is an input node too. G has {g.num_edges} edges, "
        f"one per argument of each operation.\n\n"
        f"Building z already computed every value (z = {fmt(l.z.data)}). Next we run Algorithm 6.1 ourselves "
        f"on the list, with new inputs, to see the loop do it."
    )


def _inputs(l: Any) -> None:
    l.x_new = {l.x: 0.5, l.y: -1.5}  # the new input vector: x = 0.5, y = -1.5
    l.u = [None] * len(l.graph.nodes)  # the values of u(1)..u(n); None = not computed yet
    for i, node in enumerate(l.graph.leaves):  # for i = 1, ..., n_i
        l.u[i] = l.x_new.get(node, node.data)  # u(i) <- x_i (a constant keeps its value)


def _inputs_text(l: Any) -> str:
    g = l.graph
    names = node_names(g)
    shown = ", ".join(f"{names[v]} = {fmt(l.u[i])}" for i, v in enumerate(g.leaves))
    return (
        f"Lines 1-3 copy the input vector into the first n_i = {g.n_inputs} nodes: {shown}. The other "
        f"{len(g.nodes) - g.n_inputs} values are unknown (shown as ?) until the loop reaches them."
    )


def _compute(l: Any, i: int) -> None:
    node = l.graph.nodes[i]
    l.A = [l.u[j] for j in l.graph.parents[i]]  # A(i) <- {u(j) | j in Pa(u(i))}
    l.u[i] = node.op.f(*l.A)  # u(i) <- f(i)(A(i))
    l.i = i


def _compute_text(l: Any) -> str:
    g, i = l.graph, l.i
    names = node_names(g)
    node = g.nodes[i]
    pa = [names[g.nodes[j]] for j in g.parents[i]]
    args = ", ".join(fmt(a) for a in l.A)
    done = sum(v is not None for v in l.u)
    return (
        f"i = {i + 1}: node u{i + 1} = {formula(node, names)}. Its parents Pa(u{i + 1}) = "
        f"{{{', '.join(pa)}}} "
        f"come earlier in the list, so their values are known: A({i + 1}) = ({args}). Applying f({i + 1}) = "
        f"{node.op.name} gives u{i + 1} = {fmt(l.u[i])}. {done} of {len(g.nodes)} values are now known."
    )


def _finish(l: Any) -> None:
    l.result = l.graph.forward(l.x_new)  # micrograph's own Algorithm 6.1 (micrograph/forward.py)


def _finish_text(l: Any) -> str:
    same = l.result == l.u[-1]
    return (
        f"The loop returns u(n) = u{len(l.u)} = {fmt(l.u[-1])}. micrograph's Graph.forward, the same "
        f"algorithm in micrograph/forward.py, returns {fmt(l.result)} "
        f"({'identical' if same else 'different!'}) "
        f"and stores the new values in the nodes: z.data is now {fmt(l.z.data)}. Re-running Algorithm 6.1 "
        f"with other inputs reuses the list; no node is built again."
    )


def _values(l: Any) -> str:
    g = l.graph
    names = node_names(g)
    u = getattr(l, "u", None)
    rows = []
    for i, v in enumerate(g.nodes):
        val = v.data if u is None else u[i]
        rows.append([names[v], v.label or "", formula(v, names), fmt(val)])
    return table(rows, ["u(i)", "label", "computes", "value"])


def _figure(l: Any) -> Any:
    g = l.graph
    u = getattr(l, "u", None)
    if u is None:
        return viz.draw(g, title="G: z = tanh(x*y + 2*x)")
    i = getattr(l, "i", None)
    mark = [g.nodes[i]] if i is not None else g.leaves
    return digraph(g, data=u, grads=[None] * len(u), highlight=mark, title="Algorithm 6.1")


def steps(l: Any) -> Iterator[Step]:
    """The steps of lesson 1 (see :mod:`lessons._core`)."""
    yield Step(
        "The graph G as the ordered list u(1)..u(n)", LINES["list"], _build, _build_text, _values, _figure
    )
    yield Step("Lines 1-3: the inputs", LINES["inputs"], _inputs, _inputs_text, _values, _figure)
    for i in range(l.graph.n_inputs, len(l.graph.nodes)):
        yield Step(
            f"Loop, i = {i + 1}: compute u({i + 1})",
            LINES["loop"],
            _compute,
            _compute_text,
            _values,
            _figure,
            params={"i": i},
        )
    yield Step("Return u(n); the engine agrees", LINES["return"], _finish, _finish_text, _values, _figure)
