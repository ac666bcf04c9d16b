"""Lesson 2: back-propagation with the grad_table (Algorithm 6.2), one step per iteration of its loop.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.2.
"""

# The steps take the live namespace as `l`, the name the student's stepper has in the REPL
# (l = lessons.start(n)), so the code shown for a step is what the student can type: hence E741.
# ruff: noqa: E741

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import viz
from lessons._core import Step, table
from micrograph import Graph, Value, pseudocode
from viz.text import fmt, formula, node_names

__all__ = ["NUMBER", "SECTION", "SUMMARY", "TITLE", "steps"]

NUMBER = 2
TITLE = "Back-propagation with the grad_table"
SECTION = "section 6.5.3, Algorithm 6.2"
SUMMARY = "Algorithm 6.2 fills grad_table from u(n) down to u(1); each entry sums over the node's consumers."

ALGO = pseudocode.ALGORITHM_6_2
LINES = {
    "forward": ALGO.line(0),
    "init": ALGO.line(1, 4),
    "loop": "\n".join([ALGO.lines[4], ALGO.lines[7]]),
    "return": ALGO.line(9),
}


def _forward(l: Any) -> None:
    l.x = Value(0.5, label="x")
    l.y = Value(-2.0, label="y")
    l.z = (l.x * l.y + l.x).tanh()  # x is used twice: it has two consumers
    l.graph = Graph(l.z)  # u(1)..u(n); building z ran the forward pass, so every u(i) has its value


def _forward_text(l: Any) -> str:
    g = l.graph
    names = node_names(g)
    consumers = g.get_consumers(l.x)
    return (
        f"z = tanh(x*y + x) at x = {fmt(l.x.data)}, y = {fmt(l.y.data)}: n = {len(g.nodes)} nodes, "
        f"n_i = {g.n_inputs} inputs, {g.num_edges} edges, z = {fmt(l.z.data)}. The forward pass has run "
        f"(building z computed each value), and back-propagation needs those stored values. Note that x "
        f"({names[l.x]}) has {len(consumers)} consumers, {', '.join(names[c] for c in consumers)}: its "
        f"gradient will be a sum of {len(consumers)} terms."
    )


def _init(l: Any) -> None:
    l.grad_table = {l.graph.output: 1.0}  # grad_table[u(n)] <- 1, because dz/dz = 1


def _init_text(l: Any) -> str:
    n = len(l.graph.nodes)
    return (
        f"grad_table is a dict from node to number. Its first entry is grad_table[u{n}] = "
        f"{fmt(l.grad_table[l.graph.output])}: the derivative of z = u(n) with respect to itself. The loop "
        f"will fill the other {n - 1} entries, from u{n - 1} down to u1."
    )


def _iteration(l: Any, j: int) -> None:
    u_j = l.graph.nodes[j]
    l.terms = []  # one term per edge u(j) -> u(i): i is a consumer of u(j), k the argument position
    for i, k in l.graph.consumer_edges[j]:
        u_i = l.graph.nodes[i]
        args = tuple(p.data for p in u_i.inputs)
        du_i_du_j = u_i.op.local_derivative(k, args, u_i.data)  # the operation's one derivative rule
        l.terms.append((i, l.grad_table[u_i], du_i_du_j))
    l.grad_table[u_j] = sum(g * d for _, g, d in l.terms)
    l.j = j


def _iteration_text(l: Any) -> str:
    g, j = l.graph, l.j
    names = node_names(g)
    node = g.nodes[j]
    who = f"u{j + 1}" + (f" ({node.label})" if node.label else "")
    if not l.terms:
        return f"j = {j + 1}: {who} has no consumers, so grad_table[u{j + 1}] = 0."
    parts = [f"grad_table[u{i + 1}] × ∂u{i + 1}/∂u{j + 1} = {fmt(gi)} × {fmt(d)}" for i, gi, d in l.terms]
    rules = "; ".join(
        f"u{i + 1} = {formula(g.nodes[i], names)} so ∂u{i + 1}/∂u{j + 1} = {fmt(d)}" for i, _, d in l.terms
    )
    many = (
        f" {who} has {len(l.terms)} consumers, so the gradients from both add up." if len(l.terms) > 1 else ""
    )
    return (
        f"j = {j + 1}: {who}. The sum runs over the nodes that take u{j + 1} as an argument: "
        f"{' + '.join(parts)} = {fmt(l.grad_table[node])}.{many} ({rules}.) Every grad_table[u(i)] used "
        f"here was filled earlier, because consumers come later in the list."
    )


def _finish(l: Any) -> None:
    l.engine_table = l.graph.backprop()  # micrograph's Algorithm 6.2 (micrograph/backprop.py)
    l.z.backward()  # micrograd's spelling: adds the same table into every node's .grad


def _finish_text(l: Any) -> str:
    g = l.graph
    same = all(l.engine_table[v] == l.grad_table[v] for v in g.nodes)
    return (
        f"The loop has filled all {len(l.grad_table)} entries; the algorithm returns the inputs' entries: "
        f"dz/dx = {fmt(l.grad_table[l.x])}, dz/dy = {fmt(l.grad_table[l.y])}. micrograph's Graph.backprop "
        f"computes the same table ({'equal for every node' if same else 'DIFFERENT'}) with "
        f"{l.engine_table.evaluations} local-derivative evaluations: one per edge (G has {g.num_edges}). "
        f"z.backward() adds it into .grad as micrograd does: x.grad = {fmt(l.x.grad)}, y.grad = "
        f"{fmt(l.y.grad)}."
    )


def _values(l: Any) -> str:
    g = l.graph
    names = node_names(g)
    gt = getattr(l, "grad_table", {})
    rows = [[names[v], v.label, formula(v, names), fmt(v.data), fmt(gt.get(v))] for v in g.nodes]
    return table(rows, ["u(i)", "label", "computes", "value", "grad_table"])


def _figure(l: Any) -> Any:
    g = l.graph
    j = getattr(l, "j", None)
    mark = [g.nodes[j]] if j is not None else []
    return viz.draw(g, grad_table=getattr(l, "grad_table", {}), highlight=mark, title="Algorithm 6.2")


def steps(l: Any) -> Iterator[Step]:
    """The steps of lesson 2 (see :mod:`lessons._core`)."""
    yield Step("The forward pass has run", LINES["forward"], _forward, _forward_text, _values, _figure)
    yield Step("Start the table at the output", LINES["init"], _init, _init_text, _values, _figure)
    for j in range(len(l.graph.nodes) - 2, -1, -1):
        yield Step(
            f"Loop, j = {j + 1}",
            LINES["loop"],
            _iteration,
            _iteration_text,
            _values,
            _figure,
            params={"j": j},
        )
    yield Step(
        "Return the table; the engine agrees", LINES["return"], _finish, _finish_text, _values, _figure
    )
