"""Lesson 2: back-propagation with the grad_table (Algorithm 6.2), one step per iteration of its loop.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.2.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import viz
from lessons.engine_lines import Bound, EngineLines
from lessons.engine_spans import backprop_call, graph_order
from lessons.step import Question, Step
from micrograph import BackpropStep, Graph, Value, backprop, pseudocode
from micrograph.compile_nodes import METHODS
from micrograph.expr import build
from micrograph.push import plain_loop
from viz.narration import LESSON, Numbers, iteration_text
from viz.words import NamedTable, clean, count, fmt, formula, node_names, node_table

__all__ = ["AT", "EXPR", "steps"]

EXPR = "tanh(x*y)*x"
"""The default expression: x is used twice, so its gradient is a sum of two terms."""
AT = {"x": 0.5, "y": -2.0}
"""The default values: no two nodes share a gradient, so a hand calculation can be checked entry by entry."""

ALGO = pseudocode.ALGORITHM_6_2
LINES = {
    "forward": ALGO.line(0),
    "init": ALGO.line(1, 4),
    "loop": "\n".join([ALGO.lines[4], ALGO.lines[7]]),
    "return": ALGO.line(9),
    "push": pseudocode.PUSH_FORM,
}


def _forward(l: Any) -> None:
    l.leaves = {name: Value(x, label=name) for name, x in l.at.items()}  # one input node per variable
    # l.x, l.y ...: each variable's node, unless the name is taken
    vars(l).update({n: v for n, v in l.leaves.items() if n not in vars(l)})
    l.z = build(l.expr, l.leaves)  # building z runs the forward pass: every u(i) gets its value
    l.graph = Graph(l.z)  # u(1)..u(n)


def _forward_text(l: Any) -> str:
    g = l.graph
    names = node_names(g)
    at = ", ".join(f"{k} = {fmt(x)}" for k, x in l.at.items())
    j = _most_used(g)
    consumers = sorted({i for i, _ in g.consumer_edges[j - 1]})
    edges = len(g.consumer_edges[j - 1])
    u_j = names[g.nodes[j - 1]]
    shared = (
        f" Note that {u_j} ({_who(g, j)}) is an argument of {len(consumers)} node"
        f"{'s' if len(consumers) > 1 else ''}, {', '.join(names[g.nodes[i]] for i in consumers)}, "
        f"by {edges} edge"
        f"{'s' if edges > 1 else ''}: its gradient will be a sum of {edges} terms."
        if edges > 1
        else " Every node here but z has one consumer, so every sum below has one term."
        if len(g.nodes) > 1
        else " z is an input itself: there is no edge, and no sum to compute."
    )
    return (
        f"z = {l.expr} at {at}: n = {count(len(g.nodes), 'node')}, n_i = {count(g.n_inputs, 'input')}, "
        f"{count(g.num_edges, 'edge')}, "
        f"z = {names[g.output]} = {fmt(l.z.data)}. The forward pass has run (building z computed each "
        f"value), and back-propagation needs those stored values.{shared}"
    )


def _who(g: Graph, j: int) -> str:
    """u(j)'s label, or what it computes."""
    node = g.nodes[j - 1]
    return clean(node.label) if node.label else formula(node, node_names(g))


def _most_used(g: Graph) -> int:
    """The book's j of the node below u(n) with the most consumer edges (the latest such node on a tie)."""
    best = max(range(len(g.nodes) - 1), key=lambda p: (len(g.consumer_edges[p]), p), default=0)
    return best + 1


def _init(l: Any) -> None:
    l.grad_table = NamedTable(l.graph)  # a dict node -> number that prints with the names u(i)
    l.grad_table[l.graph.output] = 1.0  # grad_table[u(n)] <- 1, because dz/dz = 1
    l.reported = {}  # j -> iteration j of micrograph's loop (the book's j, from 1)

    def observe(iteration: BackpropStep) -> None:  # called by the loop after each iteration j
        l.reported[iteration.j + 1] = iteration  # its terms and their sum

    # micrograph's Algorithm 6.2 (micrograph/backprop.py), watched
    backprop(l.graph, observe=observe)


def _init_text(l: Any) -> str:
    g = l.graph
    n = len(g.nodes)
    names = node_names(g)
    first = (
        f"grad_table is a dict from node to number. Its first entry is grad_table[{names[g.output]}] = "
        f"{fmt(l.grad_table[g.output])}: the derivative of z = u(n) with respect to itself."
    )
    if n == 1:  # z is a variable itself: there is no other node, and the loop has nothing to do
        return first + " z is the only node, so the loop has no entry to fill."
    return (
        f"{first} The loop will fill the other {n - 1} entries, from {names[g.nodes[-2]]} down to "
        f"{names[g.nodes[0]]}."
    )


def _iteration(l: Any, j: int) -> None:
    seen = l.reported[j]  # iteration j of micrograph's Algorithm 6.2, as its observer saw it
    # one term per edge u(j) -> u(i), u(i) taking u(j) as its argument k:
    # (i, k, grad_table[u(i)], du(i)/du(j)), the local derivative by the operation's one rule
    l.terms = [(t.i + 1, t.k, t.grad_i, t.derivative) for t in seen.terms]
    l.grad_table[l.graph.nodes[j - 1]] = seen.total  # the sum of the terms
    l.j = j


def _iteration_text(l: Any) -> str:
    g, j = l.graph, l.j
    grads: list[float | None] = [None] * len(g.nodes)
    for i, _, gi, _ in l.terms:
        grads[i - 1] = gi  # the consumers' entries the sum reads
    grads[j - 1] = l.grad_table[g.nodes[j - 1]]
    numbers = Numbers([], grads, {(i - 1, k): d for i, k, _, d in l.terms})
    edges = [(i - 1, k) for i, k, _, _ in l.terms]
    return iteration_text(j - 1, edges, g, node_names(g), numbers, LESSON)  # the pages' words, a line a term


def _ask(l: Any) -> Question:
    g = l.graph
    j = _most_used(g)
    step = l.reported[j]  # the answer key: the engine's Algorithm 6.2, as its observer saw it
    edges = len(g.consumer_edges[j - 1])
    u_j = node_names(g)[g.nodes[j - 1]]
    return Question(
        f"what will grad_table[{u_j}] ({_who(g, j)}) be? It has {edges} term{'s' if edges > 1 else ''}, "
        f"one per edge from {u_j} into a consumer.",
        step.total,
        "the step for j = " + str(j),
        tuple(t.product for t in step.terms),
    )


def _finish(l: Any) -> None:
    l.engine_table = l.graph.backprop()  # micrograph's Algorithm 6.2 (micrograph/backprop.py)
    l.z.backward()  # micrograd's spelling: adds the same table into every node's .grad


def _filled(n: int) -> str:
    """What the loop did, in words that hold for one node too."""
    if n == 1:
        return "The loop had no entry to fill: grad_table[z] = 1 is the whole table"
    return f"The loop has filled the {n - 1} other {'entry' if n == 2 else 'entries'} after grad_table[z]"


def _finish_text(l: Any) -> str:
    g = l.graph
    names = node_names(g)
    same = all(l.engine_table[v] == l.grad_table[v] for v in g.nodes)
    inputs = ", ".join(f"dz/d{clean(v.label) or names[v]} = {fmt(l.grad_table[v])}" for v in g.leaves)
    grads = ", ".join(f"{clean(v.label)}.grad = {fmt(v.grad)}" for v in g.leaves if v.label)
    first, last = names[g.leaves[0]], names[g.leaves[-1]]
    return (
        f"{_filled(len(l.grad_table))}; the algorithm returns the inputs' entries "
        f"{first if first == last else first + '..' + last}: {inputs}. micrograph's Graph.backprop "
        f"computes the same table "
        f"({'equal for every node' if same else 'DIFFERENT'}) with {l.engine_table.evaluations} "
        f"local-derivative evaluations: one per edge (G has {g.num_edges}). z.backward() adds it into .grad "
        f"as micrograd does{': ' + grads if grads else ''}."
    )


def _push(l: Any) -> None:
    for node in l.graph.nodes:
        node.grad = 0.0  # micrograd's zero_grad, on every node of G
    # micrograph's push form (Value.backward): walking back from z, each node adds
    # its .grad × the local derivative into each of its parents' .grad
    with plain_loop():  # its plain loop, whose lines are shown (compiled, the same bits)
        l.z.backward()
    l.pushed = NamedTable(l.graph, title="pushed")  # the same sums, in the push form of section 6.5.6
    for node in l.graph.nodes:
        l.pushed[node] = node.grad


def _push_text(l: Any) -> str:
    g = l.graph
    same = all(abs(l.pushed[v] - l.grad_table[v]) <= 1e-12 * max(1.0, abs(l.grad_table[v])) for v in g.nodes)
    return (
        f"The same sums can be added up in the other order. Algorithm 6.2 pulls: at u(j) it asks its "
        f"consumers (the nodes i with j in Pa(u(i))), so it needs an index from each node to its consumers "
        f"(Graph.consumer_edges). Section 6.5.6's prose pushes instead: walking back from z, each node u(i) "
        f"multiplies its gradient by the local derivative for each of its own arguments and adds the product "
        f"into that parent's entry. A node's arguments are stored with it (u_i.inputs), so the push form "
        f"needs "
        f"no consumer index; a parent's entry is complete once every consumer has pushed, which the order "
        f"u(n) down to u(1) guarantees. Both orders add the same {g.num_edges} products, one per edge: the "
        f"tables agree ({'equal for every node' if same else 'DIFFERENT'}). micrograd's and micrograph's "
        f"z.backward() use the push form."
    )


def _engine_forward(l: Any) -> EngineLines:
    z = l.z
    if z.op is None:  # z is a variable: no operation built it
        return graph_order(l.graph)
    caption = f"building a node computes its value: z = {node_names(l.graph)[z]}, the last built"
    if z.op in METHODS:  # a node apply does not build: compiled, the lines from its value d to the node's
        where = f"micrograph.engine:Value.{METHODS[z.op]}"
        return EngineLines(where, "d = ", "out.data = d", (Bound("d = ", "d", (z.data,)),), caption=caption)
    return EngineLines(
        "micrograph.engine:apply",
        "try:",
        "out.data = float(d)",
        (Bound("d = op.f(", "op.name", (z.op.name,)), Bound("d = op.f(", "d", (z.data,))),
        caption=caption,
    )


def _engine_init(l: Any) -> EngineLines:
    g = l.graph
    return EngineLines(
        "micrograph.backprop:run_algorithm_6_2",
        "n = len(graph.nodes)",
        "grad_table = known",
        (
            Bound("n = len(graph.nodes)", "n", (len(g.nodes),)),
            Bound("grad_table[n - 1] = seed", "grad_table[n - 1]", (l.grad_table[g.output],)),
        ),
        caption="grad_table[u(n)] <- 1, then the loop (the next steps)",
    )


def _engine_iteration(l: Any) -> EngineLines:
    g, j = l.graph, l.j
    names = node_names(g)
    u = [names[v] for v in g.nodes]  # u[i] is the name of the node at position i
    seen = l.reported[j]
    partial, sums = 0.0, []
    for t in seen.terms:
        partial += t.product  # the sum as the loop adds it, term by term
        sums.append(partial)
    return EngineLines(
        "micrograph.backprop:run_algorithm_6_2",
        "for j in order:",
        "grad_table[j] = total",
        (
            Bound("total = grad_table[j]", "j", (j - 1,), (f"{j - 1} ({u[j - 1]}; Python counts from 0)",)),
            Bound("total = grad_table[j]", "total", (0.0,)),
            Bound(
                "d = rule(",
                "i",
                tuple(t.i for t in seen.terms),
                tuple(f"{t.i} ({u[t.i]})" for t in seen.terms),
            ),
            Bound("d = rule(", "d", tuple(t.derivative for t in seen.terms)),
            Bound("term = grad_table[i] * d", "term", tuple(t.product for t in seen.terms)),
            Bound("total += term", "total", tuple(sums)),
            Bound("grad_table[j] = total", "grad_table[j]", (seen.total,)),
        ),
        caption=f"the book's j = {j}, {u[j - 1]}",
        reported=True,
    )


def _engine_finish(l: Any) -> list[EngineLines]:
    g = l.graph
    return [
        backprop_call(l.engine_table.evaluations, "Graph.backprop: Algorithm 6.2's loop, then the table"),
        EngineLines(
            "micrograph.backprop:run_algorithm_6_2",
            "# return {grad_table",
            "return grad_table, evaluations",
            (
                Bound(
                    "return grad_table, evaluations",
                    "grad_table[: graph.n_inputs]",
                    ([l.engine_table[v] for v in g.leaves],),
                ),
            ),
            caption="Algorithm 6.2's last line",
        ),
    ]


def _engine_push(l: Any) -> EngineLines:
    z = l.z
    return EngineLines(
        "micrograph.push:backward",
        "order = topological_order((z,))",
        "node._backward()",
        (
            Bound("order.reverse()", "order[0]", (z,), (node_names(l.graph)[z],)),
            Bound("order.reverse()", "len(order)", (len(l.graph.nodes),)),
            Bound("z.grad = gradient", "z.grad", (1.0,)),
        ),
        caption="z.backward(), the push form",
    )


def _values(l: Any) -> str:
    g = l.graph
    gt = getattr(l, "grad_table", {})
    cols = {"value": [v.data for v in g.nodes], "grad_table": [gt.get(v) for v in g.nodes]}
    if hasattr(l, "pushed"):
        cols["pushed"] = [l.pushed.get(v) for v in g.nodes]
    return node_table(g, cols)


def _figure(l: Any) -> Any:
    g = l.graph
    if hasattr(l, "pushed"):
        return viz.draw(
            g, grad_table=l.pushed, title="The push form: the same table, summed into the parents"
        )
    if hasattr(l, "engine_table"):  # the return line: the inputs' entries
        return viz.draw(
            g, grad_table=l.grad_table, highlight=g.leaves, title="return grad_table[u(i)], i ≤ n_i"
        )
    j = getattr(l, "j", None)
    mark = [g.nodes[j - 1]] if j is not None else []
    return viz.draw(g, grad_table=getattr(l, "grad_table", {}), highlight=mark, title="Algorithm 6.2")


def steps(l: Any) -> Iterator[Step]:
    """The steps of lesson 2 (see :mod:`lessons.step`)."""
    step = Step.showing(_values, _figure)
    yield step("The forward pass has run", LINES["forward"], _forward, _forward_text, _engine_forward)
    n = len(l.graph.nodes)
    asked = _most_used(l.graph)  # the question is asked on the step before the one that answers it
    yield step(
        "Start the table at the output",
        LINES["init"],
        _init,
        _init_text,
        _engine_init,
        question=_ask if asked == n - 1 else None,
    )
    for j in range(n - 1, 0, -1):  # the book's j, from n - 1 down to 1
        yield step(
            f"Loop, j = {j}",
            LINES["loop"],
            _iteration,
            _iteration_text,
            _engine_iteration,
            params={"j": j},
            question=_ask if j == asked + 1 else None,
        )
    yield step("Return the table; the engine agrees", LINES["return"], _finish, _finish_text, _engine_finish)
    yield step("The same sums, pushed instead of pulled", LINES["push"], _push, _push_text, _engine_push)
