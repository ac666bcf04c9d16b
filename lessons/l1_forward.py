"""Lesson 1: forward propagation over the ordered node list u(1)..u(n) (Algorithm 6.1).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.1.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import viz
from lessons.engine_lines import Bound, EngineLines
from lessons.engine_spans import forward_call, graph_order
from lessons.step import Ours, Question, Step
from micrograph import DomainError, Graph, Value, pseudocode
from micrograph.expr import build
from micrograph.forward import evaluate
from viz.dot import digraph
from viz.words import clean, fmt, formula, node_names, node_table

__all__ = ["AT", "EXPR", "new_inputs", "steps"]

EXPR = "tanh(x*y + x + 2)"
"""The default expression (``lessons.start(1, expr=..., at=...)`` runs the lesson on another)."""
AT = {"x": 0.8, "y": -0.5}
"""The default values: every input's gradient differs from the others' (a hand calculation can be checked)."""

ALGO = pseudocode.ALGORITHM_6_1
LINES = {
    "list": Ours("u(1), ..., u(n_i) are the inputs; u(n) is the output"),
    "inputs": ALGO.line(0, 2),
    "loop": ALGO.line(3, 6),
    "return": ALGO.line(7),
}


def _build(l: Any) -> None:
    l.leaves = {name: Value(x, label=name) for name, x in l.at.items()}  # one input node per variable
    # l.x, l.y ...: each variable's node, unless the name is taken
    vars(l).update({n: v for n, v in l.leaves.items() if n not in vars(l)})
    l.z = build(l.expr, l.leaves)  # the command line's safe parser; building z computes every value
    l.graph = Graph(l.z)  # the ordered node list u(1)..u(n), inputs first


def _build_text(l: Any) -> str:
    g = l.graph
    names = node_names(g)
    at = ", ".join(f"{k} = {fmt(x)}" for k, x in l.at.items())
    consts = [f"{names[v]} = {fmt(v.data)}" for v in g.leaves if v.is_constant]
    variables = [f"{names[v]} ({clean(v.label)})" for v in g.leaves if not v.is_constant]
    const_text = (
        f" and the constant{'s' if len(consts) > 1 else ''} {', '.join(consts)}: a number in an expression "
        f"is an input node too"
        if consts
        else ""
    )
    return (
        f"We build z = {l.expr} at {at}. micrograph orders the graph G as the book does: a list "
        f"u(1)..u(n) with n = {len(g.nodes)} nodes, each after its parents. The first n_i = {g.n_inputs} are "
        f"the inputs: the variable{'s' if len(variables) > 1 else ''} {', '.join(variables)}{const_text}. "
        f"G has {g.num_edges} edge{'s' if g.num_edges != 1 else ''}, one per argument of each operation."
        f"\n\nBuilding z already computed every value (z = {fmt(l.z.data)}). Next we run Algorithm 6.1 "
        f"ourselves on the list, with new inputs (each variable at half its value), to see the loop do it."
    )


def _inputs(l: Any) -> None:
    l.x_new = new_inputs(l.graph)  # the new input vector: each variable at half its value
    l.u = [None] * len(l.graph.nodes)  # the values of u(1)..u(n); None = not computed yet
    l.reported = {}  # i -> u(i), as micrograph's loop reports it (the book's i, from 1)

    def observe(i: int, u_i: float) -> None:  # called by the loop after each u(i+1)
        l.reported[i + 1] = u_i

    # micrograph's Algorithm 6.1 (micrograph/forward.py), watched
    values = evaluate(l.graph, l.x_new, observe=observe)
    n_i = l.graph.n_inputs
    l.u[:n_i] = values[:n_i]  # lines 1-3: u(i) <- x_i for i = 1..n_i (a constant keeps its value)


def new_inputs(graph: Graph) -> dict[Value, float]:
    """Each variable at half its value (where every operation is still defined there; else as it is)."""
    halved = {v: v.data / 2 for v in graph.leaves if not v.is_constant}
    try:
        evaluate(graph, halved)
    except DomainError:
        return {v: v.data for v in graph.leaves if not v.is_constant}
    return halved


def _inputs_text(l: Any) -> str:
    g = l.graph
    names = node_names(g)
    shown = ", ".join(f"{names[v]} = {fmt(l.u[i])}" for i, v in enumerate(g.leaves))
    return (
        f"Lines 1-3 copy the new input vector (each variable at half the value z was built at; a constant "
        f"keeps its own) into the first n_i = {g.n_inputs} nodes: {shown}. The other "
        f"{len(g.nodes) - g.n_inputs} values are unknown (shown as ?) until the loop reaches them."
    )


def _ask_first(l: Any) -> Question | None:
    g = l.graph
    i = g.n_inputs  # 0-based position of u(n_i + 1), the first node the loop computes
    if i == len(g.nodes):  # a variable alone (--expr w): the loop computes nothing, nothing to predict
        return None
    node = g.nodes[i]
    names = node_names(g)
    answer = evaluate(g, l.x_new)[i]  # the engine's Algorithm 6.1 is the answer key
    return Question(
        f"{names[node]} = {formula(node, names)}. What will {names[node]} be at these inputs?", answer
    )


def _compute(l: Any, i: int) -> None:
    # the book's i counts from 1, Python's list from 0
    l.A = [l.u[j] for j in l.graph.parents[i - 1]]  # A(i) <- {u(j) | j in Pa(u(i))}
    l.u[i - 1] = l.reported[i]  # u(i) <- f(i)(A(i)), as micrograph's loop computed it
    l.i = i


def _compute_text(l: Any) -> str:
    g, i = l.graph, l.i
    names = node_names(g)
    node = g.nodes[i - 1]
    pa = [names[g.nodes[j]] for j in g.parents[i - 1]]
    args = ", ".join(fmt(a) for a in l.A)
    done = sum(v is not None for v in l.u)
    return (
        f"i = {i}: node {names[node]} = {formula(node, names)}. Its parents Pa({names[node]}) = "
        f"{{{', '.join(pa)}}} come earlier in the list, so their values are known: A({i}) = ({args}). "
        f"Applying f({i}) = {node.op.name} gives {names[node]} = {fmt(l.u[i - 1])}. {done} of "
        f"{len(g.nodes)} values are now known."
    )


def _finish(l: Any) -> None:
    l.result = l.graph.forward(l.x_new)  # micrograph's own Algorithm 6.1 (micrograph/forward.py)


def _finish_text(l: Any) -> str:
    same = l.result == l.u[-1]
    return (
        f"The loop returns u(n) = {node_names(l.graph)[l.graph.output]} = {fmt(l.u[-1])}. "
        f"micrograph's Graph.forward, the same "
        f"algorithm in micrograph/forward.py, returns {fmt(l.result)} "
        f"({'identical' if same else 'different!'}) "
        f"and stores the new values in the nodes: z.data is now {fmt(l.z.data)}. Re-running Algorithm 6.1 "
        f"with other inputs reuses the list; no node is built again."
    )


def _engine_build(l: Any) -> EngineLines:
    return graph_order(l.graph)


def _engine_inputs(l: Any) -> EngineLines:
    n_i = l.graph.n_inputs
    return EngineLines(
        "micrograph.forward:evaluate",
        bound=(Bound("u = input_values(graph, values)", "u[:graph.n_inputs]", (l.u[:n_i],)),),
        caption="lines 1-3, then the loop (the next steps)",
    )


def _engine_compute(l: Any) -> EngineLines:
    g, i = l.graph, l.i
    node = g.nodes[i - 1]
    name = node_names(g)[node]
    counted = f"{i - 1} ({name}; Python counts from 0)"
    args = [Bound("x = f(u[a]) if b < 0", "u[a]", (l.A[0],))]
    if len(l.A) > 1:
        args.append(Bound("x = f(u[a]) if b < 0", "u[b]", (l.A[1],)))
    return EngineLines(
        "micrograph.forward:_run",
        "for i, f, a, b in steps:",
        "u[i] = x",
        (
            Bound("for i, f, a, b in steps:", "i", (i - 1,), (counted,)),
            Bound("for i, f, a, b in steps:", "f", (node.op.f,), (node.op.name,)),
            *args,
            Bound("x = f(u[a]) if b < 0", "x", (l.u[i - 1],)),
        ),
        caption=f"lines 4-6 at {name}, the book's i = {i}",
        reported=True,
    )


def _engine_finish(l: Any) -> EngineLines:
    return forward_call(l.result, "Graph.forward: Algorithm 6.1, then the nodes updated")


def _values(l: Any) -> str:
    g = l.graph
    names = node_names(g)
    u = getattr(l, "u", None)
    return node_table(g, {"value": [v.data for v in g.nodes] if u is None else u}, names=names)


def _figure(l: Any) -> Any:
    g = l.graph
    u = getattr(l, "u", None)
    if u is None:
        return viz.draw(g, grad_table={}, title=f"G: z = {l.expr}")  # forward only: grad —
    i = getattr(l, "i", None)
    mark = [g.nodes[i - 1]] if i is not None else g.leaves
    title = "Algorithm 6.1: return u(n)" if hasattr(l, "result") else "Algorithm 6.1"
    return digraph(g, data=u, grads=[None] * len(u), highlight=mark, title=title)


def steps(l: Any) -> Iterator[Step]:
    """The steps of lesson 1 (see :mod:`lessons.step`)."""
    step = Step.showing(_values, _figure)
    yield step(
        "The graph G as the ordered list u(1)..u(n)", LINES["list"], _build, _build_text, _engine_build
    )
    yield step(
        "Lines 1-3: the inputs", LINES["inputs"], _inputs, _inputs_text, _engine_inputs, question=_ask_first
    )
    for i in range(l.graph.n_inputs + 1, len(l.graph.nodes) + 1):  # the book's i, from 1
        yield step(
            f"Loop, i = {i}: compute u({i})",
            LINES["loop"],
            _compute,
            _compute_text,
            _engine_compute,
            params={"i": i},
        )
    yield step("Return u(n); the engine agrees", LINES["return"], _finish, _finish_text, _engine_finish)
