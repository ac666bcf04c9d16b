"""Lesson 6: symbol-to-symbol derivatives: G and B side by side (figure 6.10, Algorithms 6.5 and 6.6).

Runs on figure 6.10's chain z = tanh(tanh(tanh(w))) at w = 0.5, or on the student's expression
(``lessons.start(6, expr=..., at=...)``), differentiated with respect to every variable.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.5-6.5.6, figure 6.10,
Algorithms 6.5 and 6.6.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

import viz
from lessons.engine_lines import Bound, EngineLines
from lessons.engine_spans import backprop_call, forward_call, grad_call, graph_order, pulled_term
from lessons.step import Ours, Question, Step
from micrograph import Graph, Value, grad, pseudocode
from micrograph.errors import DomainError
from micrograph.expr import build
from micrograph.order import topological_order
from viz.symbolic_frames import build_grad_call_rows, build_grad_call_text
from viz.words import count, fmt, formula, node_names, table

__all__ = ["AT", "EXPR", "steps"]

EXPR = "tanh(tanh(tanh(w)))"
"""Figure 6.10's chain z = f(f(f(w))) with f = tanh: the lesson's example when the student gives none."""
AT = {"w": 0.5}
"""The value of w for the default example."""
LINES = {
    "G": Ours("figure 6.10 (left): x = f(w), y = f(x), z = f(y)"),
    "prune": pseudocode.ALGORITHM_6_5.line(3),
    "grad": pseudocode.ALGORITHM_6_5.line(5, 10),
    "build": Ours(pseudocode.ALGORITHM_6_6.text),
    "reuse": Ours("section 6.5.5: the derivatives are a computational graph too"),
    # the book's sentence as one line: the page or terminal wraps it as prose
    "same": "The symbol-to-number approach can be understood as performing exactly the same computations "
    "as are done in the graph built by the symbol-to-symbol approach.",
}
MOVES = (0.4, -0.4, 0.1, -0.1)
"""How far step "B is a graph" moves the inputs: the first move at which G and B are both defined."""


def _G(l: Any) -> None:
    l.leaves = {name: Value(x, label=name) for name, x in l.at.items()}  # one input node per variable
    # l.w ...: each variable's node, unless the name is taken
    vars(l).update({n: v for n, v in l.leaves.items() if n not in vars(l)})
    l.z = build(l.expr, l.leaves)  # the command line's safe parser; building z computes every value
    l.graph = Graph(l.z)  # G: u(1)..u(n)
    l.T = list(l.leaves.values())  # T, the targets of Algorithm 6.5: every variable
    if l.expr == EXPR:  # figure 6.10's chain: its nodes get the book's names x, y, z
        x, y = l.graph.nodes[1:3]
        x.label, y.label, l.z.label = "x", "y", "z"


def _targets(l: Any) -> str:
    return "{" + ", ".join(v.label for v in l.T) + "}"


def _at(l: Any) -> str:
    return ", ".join(f"{v.label} = {fmt(v.data)}" for v in l.T)


def _named(v: Value, names: Mapping[Value, str]) -> str:
    """``u3 (y)`` for a labelled node of G, else ``u3``."""
    return f"{names[v]} ({v.label})" if v.label else names[v]


def _G_text(l: Any) -> str:
    g = l.graph
    names = node_names(g)
    book = (
        "Figure 6.10 draws z = f(f(f(w))), the chain of figure 6.9: x = f(w), y = f(x), z = f(y). "
        if l.expr == EXPR
        else "Figure 6.10 draws the chain z = f(f(f(w))); here G is yours. "
    )
    return (
        f"{book}z = {l.expr} at {_at(l)}: G has n = {count(len(g.nodes), 'node')}, n_i = "
        f"{count(g.n_inputs, 'input')}, and z = {names[g.output]} = {fmt(l.z.data)}. Algorithm 6.2 would now "
        f"compute numbers; Algorithm 6.5 will instead add nodes that compute the derivatives of z with "
        f"respect to T = {_targets(l)}: a graph B for them."
    )


def _unused(names: Mapping[str, Any], base: str) -> str:
    """``base``, or base1, base2 ...: the first name the expression does not use."""
    k = 0
    while (f"{base}{k}" if k else base) in names:
        k += 1
    return f"{base}{k}" if k else base


def _prune(l: Any) -> None:
    l.G_prime = l.graph.prune(l.T)  # G': the nodes of G that are descendants of T (and ancestors of z)
    l.other = Value(3.0, label=_unused(l.at, "v"))  # a new input that is not in T
    l.other_exp = l.other.exp()
    l.z2 = l.z * 2 + l.other_exp  # z2 depends on T through z, and on v and the constant 2 besides
    l.two = next(u for u in l.z2.inputs[0].inputs if u is not l.z)  # the constant node 2
    l.graph2 = Graph(l.z2)
    l.G2_prime = l.graph2.prune(l.T)  # G' for z2, with the same T


def _prune_text(l: Any) -> str:
    g, g2 = l.graph, l.graph2
    names, names2 = node_names(g), node_names(g2)
    out = [_named(v, names) for v in g.nodes if v not in l.G_prime]
    left = [u for u in g2.nodes if u not in l.G2_prime]
    out2 = [_named(u, names2) for u in left]
    v = l.other.label
    what = {l.other: v, l.other_exp: f"exp({v})", l.two: "the constant 2"}
    said = [what[u] for u in left if u in what]  # in the order the nodes are named
    mine = (
        f"For z itself nothing goes: every node of G lies on a path from {_targets(l)} to z. "
        if not out
        else f"For z, G' keeps {len(l.G_prime)} of G's {len(g.nodes)} nodes: {', '.join(out)} "
        f"{'does' if len(out) == 1 else 'do'} not depend on any variable of T. "
    )
    return (
        f"Algorithm 6.5 first prunes G to G', with T = {_targets(l)}. {mine}Take z2 = 2z + exp({v}) "
        f"instead, with a new input {v}: its graph has {len(g2.nodes)} nodes, and G' keeps "
        f"{len(l.G2_prime)}. Left out are {', '.join(out2)}, {'among them' if len(out2) > 3 else 'that is'} "
        f"{', '.join(said[:-1])} and {said[-1]}: they do not depend on T, so no gradient flows through "
        "them and build_grad never visits them. "
        f"In the picture the nodes of G' are highlighted; these {len(out2)} are not."
    )


def _ask(l: Any) -> Question:
    answer = l.graph.backprop()[l.T[0]]  # the engine's Algorithm 6.2 is the answer key
    return Question(
        f"grad(z, T) will return one node per variable of T. What will the value (.data) of the node "
        f"for dz/d{l.T[0].label} be at {_at(l)}?",
        answer,
    )


def _grad(l: Any) -> None:
    l.calls = []  # each call of build_grad (Algorithm 6.6), as grad reports it
    l.dz = grad(l.z, l.T, observe=l.calls.append)  # Algorithm 6.5: dz/dV for each V in T, nodes of B
    l.B_nodes = [v for v in topological_order(l.dz) if v not in l.graph]  # B, in the order built
    l.table = l.graph.backprop()  # Algorithm 6.2 on the same G, for comparison


def _grad_text(l: Any) -> str:
    names = node_names(l.graph, l.B_nodes)
    reads = list(dict.fromkeys(_named(p, names) for v in l.B_nodes for p in v.inputs if p in l.graph))
    built = Counter(v.op.symbol if v.op is not None else "constant" for v in l.B_nodes)
    kinds = ", ".join(f"{k} {symbol}" for symbol, k in built.most_common())
    reading = (
        f" They read the stored values {', '.join(reads)} of G (dashed edges)"
        if reads
        else " They read no stored value of G"
    )
    pairs = "; ".join(
        f"dz/d{V.label} = {fmt(d.data)} (Algorithm 6.2: {fmt(l.table[V])})" for V, d in zip(l.T, l.dz)
    )
    return (
        f"grad(z, T) ran Algorithm 6.5: grad_table[z] <- 1, then build_grad for each V in T, which "
        f"builds the gradients of the nodes of G' from z down. It returns nodes, not numbers: {pairs}. "
        f"B has {count(len(l.B_nodes), 'new node')} (by operation: {kinds}), drawn in orange on the right."
        f"{reading}: each operation's one derivative rule (micrograph/ops.py), applied to nodes, "
        f"builds the local derivative as nodes of B, times D, "
        f"summed where a node has several consumers: equation 6.52, evaluated from stored values. "
        f"Figure 6.10 draws B for z = f(f(f(w))): one f' node and one product per step."
    )


def _call(l: Any, k: int) -> None:
    l.call = l.calls[k - 1]  # build_grad's k-th call: V, C, get_inputs, D, the terms, new nodes


def _call_text(l: Any) -> str:
    names = node_names(l.graph, l.B_nodes)  # G's u1..un, then B's nodes as the picture names them
    return build_grad_call_text(l.calls, l.calls.index(l.call) + 1, names)


def _call_values(l: Any) -> str:
    names = node_names(l.graph, l.B_nodes)
    rows = [list(row) for row in build_grad_call_rows(l.call, names)]
    return table(rows, ["new node", "computes", "value"])


def _build(l: Any) -> None:
    l.grad_nodes = [(c.V, c.G_V) for c in l.calls]  # the grad_table, V by V, in the order of the calls


def _build_text(l: Any) -> str:
    names = node_names(l.graph, l.B_nodes)

    def name(v: Value) -> str:
        return v.label or names.get(v, "?")

    if not l.calls:
        return (
            "build_grad (Algorithm 6.6) was never called: z is a variable of T itself, so grad_table[z] "
            "= 1 is already its gradient, and there is no consumer to visit."
        )
    visited = ", ".join(f"{name(c.V)} ({count(len(c.consumers), 'consumer')})" for c in l.calls)
    parts = "; ".join(
        f"dz/d{name(V)} = {names[G_V] if G_V in names else 'the constant'} = {fmt(G_V.data)}"
        for V, G_V in l.grad_nodes
    )
    in_G = [name(V) for V, G_V in l.grad_nodes if G_V in l.graph.index]
    reused = (
        f" The entries for {', '.join(in_G)} are nodes of G itself: the derivative is a value G already "
        f"stores, so no new node was needed."
        if in_G
        else ""
    )
    return (
        f"build_grad (Algorithm 6.6) was called for V = {visited}, each consumer found by "
        f"get_consumers(V, G'). For each consumer it took the gradient D from the "
        f"grad_table and called op.bprop: the operation's one derivative rule from micrograph/ops.py, "
        f"applied to nodes, so it builds nodes. The grad_table holds nodes: {parts}.{reused} The "
        f"picture highlights the grad_table's nodes of B."
    )


def _a_move(l: Any) -> float:
    """The first of MOVES at which G and B are defined (Algorithm 6.1 raises no DomainError)."""
    start = [v.data for v in l.T]
    try:
        for h in MOVES:
            for v, x in zip(l.T, start):
                v.data = x + h
            try:
                l.graph.forward()
                for d in l.dz:
                    Graph(d).forward()
                return h
            except DomainError:
                continue
        return 0.0
    finally:
        for v, x in zip(l.T, start):
            v.data = x
        l.graph.forward()
        for d in l.dz:
            Graph(d).forward()


def _reuse(l: Any) -> None:
    l.before = [d.data for d in l.dz]
    l.h = _a_move(l)  # how far to move the inputs: 0.4 unless an operation is undefined there
    for V in l.T:
        V.data += l.h  # new inputs
    for d in l.dz:
        Graph(d).forward()  # Algorithm 6.1 on B: no new node, every node of B recomputed
    l.graph.forward()  # and on G: z itself is not in B, so it is updated here
    l.table_new = l.graph.backprop()  # Algorithm 6.2 at the new inputs


def _reuse_text(l: Any) -> str:
    now = "; ".join(
        f"dz/d{V.label} {fmt(a)} -> {fmt(d.data)} (Algorithm 6.2: {fmt(l.table_new[V])})"
        for V, d, a in zip(l.T, l.dz, l.before)
    )
    return (
        f"B is an ordinary graph. We move every variable of T by {fmt(l.h)}, to {_at(l)}, and "
        f"Graph(d).forward() re-runs Algorithm 6.1 on the graph of each gradient node d: no new node is "
        f"built, and the values follow: {now}. Because B is a graph it can also be drawn, compiled, and "
        f"differentiated again (lesson 7)."
    )


def _same(l: Any) -> None:
    l.pairs = [(V, G_V.data, l.table_new[V]) for V, G_V in l.grad_nodes]  # B's value vs Algorithm 6.2's


def _same_text(l: Any) -> str:
    g = l.graph
    differ = [(V, a, b) for V, a, b in l.pairs if a != b]
    common = (
        f"Section 6.5.5: both approaches perform exactly the same computations: each ran every operation's "
        f"one rule, once on floats and once on nodes. The picture shows Algorithm 6.2's numbers on G at "
        f"{_at(l)}. "
    )
    if not l.pairs:
        return common + (
            "Here z is a variable of T itself: grad_table[z] = 1 is its gradient, and build_grad had "
            "nothing to build."
        )
    if not differ:
        return common + (
            f"Here literally: for each of the {len(l.pairs)} grad_table entries, the node of B holds the "
            f"same float as Algorithm 6.2's table (all equal, bit for bit)."
        )
    names = node_names(g)
    terms = {V: len(g.consumer_edges[g.index[V]]) for V, _, _ in differ}
    worst = max(abs(a - b) for _, a, b in differ)
    listed = ", ".join(_named(V, names) for V, _, _ in differ)
    if min(terms.values()) < 3:  # two terms add the same in either order: a difference would be a fault
        return common + f"But {listed}: NOT equal to Algorithm 6.2's number, a fault to report."
    return common + (
        f"{len(l.pairs) - len(differ)} of the {len(l.pairs)} grad_table entries hold the same float as "
        f"Algorithm 6.2's table, bit for bit. {listed} {'differs' if len(differ) == 1 else 'differ'} in "
        f"the last bits (by at most {worst:.1e}): each sums three terms or more, and op.bprop "
        f"first adds the terms of one consumer that takes V several times, where Algorithm 6.2 adds "
        f"edge by edge. Floating-point addition is not associative, so the same sums in another "
        f"grouping can round differently."
    )


def _name(l: Any, v: Value | None) -> str:
    """A node's name in the step's picture (G's u1..un, then B's), the constant 1 as grad_table[z]."""
    if v is None:
        return "None"
    names = node_names(l.graph, l.B_nodes)
    return names.get(v) or (f"{fmt(v.data)} (grad_table[z])" if v.op is None else "?")


def _engine_G(l: Any) -> EngineLines:
    return graph_order(l.graph)


def _engine_prune(l: Any) -> EngineLines:
    return EngineLines(
        "micrograph.graph:Graph.prune",
        "descendant = [False]",
        "return SubGraph(",
        (Bound("return SubGraph(", "sum(descendant)", (len(l.G2_prime),)),),
        caption=f"G' for z2, T = {_targets(l)}",
    )


def _engine_grad(l: Any) -> EngineLines:
    names = {d: _name(l, d) for d in l.dz}
    return grad_call(len(l.G_prime), l.dz, names, f"grad(z, T): Algorithm 6.5, T = {_targets(l)}")


def _engine_call(l: Any) -> EngineLines:
    call = l.call
    k = l.calls.index(call) + 1
    return EngineLines(
        "micrograph.symbolic:build_grad",
        "if V in grad_table:",
        "grad_table[V] = G_V",
        (
            Bound("consumers = get_consumers(V, G_prime)", "V", (call.V,), (_name(l, call.V),)),
            Bound(
                "consumers = get_consumers(V, G_prime)",
                "consumers",
                (list(call.consumers),),
                ("[" + ", ".join(_name(l, C) for C in call.consumers) + "]",),
            ),
            Bound("D = build_grad(C,", "D", call.D, tuple(_name(l, D) for D in call.D)),
            Bound("G_i = op.bprop(", "G_i", call.terms, tuple(_name(l, t) for t in call.terms)),
            Bound("G_V = sum_nodes(", "G_V", (call.G_V,), (_name(l, call.G_V),)),
        ),
        caption=f"call {k} of {len(l.calls)}",
        reported=True,
    )


def _engine_build(l: Any) -> EngineLines:
    if not l.calls:  # z is a variable of T: its entry is grad_table[z] = 1 itself
        return EngineLines(
            "micrograph.symbolic:build_grad",
            "if V in grad_table:",
            bound=(Bound("if V in grad_table:", "V", (l.z,), (_name(l, l.z),)),),
            reported=True,
        )
    last = l.calls[-1]
    C, term = last.consumers[-1], last.terms[-1]
    return EngineLines(
        "micrograph.ops:Op.bprop",
        "total = None",
        "return total",
        (
            Bound("total = None", "self.name", (C.op.name,)),
            Bound("return total", "total", (term,), (_name(l, term),)),
        ),
        caption=f"the last call's, V = {_name(l, last.V)}, C = {_name(l, C)}",
        reported=True,
    )


def _engine_reuse(l: Any) -> list[EngineLines]:
    return [
        forward_call(l.z.data, "Graph(z).forward(), after each Graph(d).forward()"),
        backprop_call(l.table_new.evaluations, "Graph.backprop at the new inputs"),
    ]


def _engine_same(l: Any) -> list[EngineLines]:
    return [
        pulled_term("on numbers: Algorithm 6.2's sum"),
        EngineLines(
            "micrograph.ops:Op.bprop",
            "d = self.local_derivative(k, inputs, out)",
            "total = term if total is None else total + term",
            caption="on nodes: op.bprop, the same rule building B",
            reported=True,
        ),
    ]


def _values(l: Any) -> str:
    if hasattr(l, "call") and not hasattr(l, "grad_nodes"):
        return _call_values(l)
    if hasattr(l, "pairs"):
        names = node_names(l.graph)
        rows = [[v.label or names[v], fmt(b), fmt(t)] for v, b, t in l.pairs]
        return table(rows, ["dz/d(.)", "node of B", "Algorithm 6.2"])
    if hasattr(l, "B_nodes"):
        names = node_names(l.graph, l.B_nodes)  # G is u1..un; B's nodes are numbered on, as in the picture
        rows = [
            [names[v], formula(v, names), fmt(v.data), (v.grad_of.label or names.get(v.grad_of, "")
                                                         if v.grad_of else "")]
            for v in l.B_nodes
        ]  # fmt: skip
        return table(rows, ["node", "computes", "value", "grad of"])
    g = l.graph2 if hasattr(l, "graph2") else l.graph
    names = node_names(g)
    keep = getattr(l, "G2_prime", None)
    rows = [
        [
            names[v],
            v.label,
            formula(v, names),
            fmt(v.data),
            "" if keep is None else ("yes" if v in keep else "no"),
        ]
        for v in g.nodes
    ]
    return table(rows, ["u(i)", "label", "computes", "value", "in G'"])


def _figure(l: Any) -> Any:
    if hasattr(l, "pairs"):
        return viz.draw(l.graph, grad_table=l.table_new, title=f"G at {_at(l)}, grad from Algorithm 6.2")
    # B and the grad_table the steps computed (grad, Graph.backprop), drawn: nothing computed for the picture
    table = l.table_new if hasattr(l, "table_new") else getattr(l, "table", None)
    if hasattr(l, "table_new"):
        return viz.draw_side_by_side(l.z, l.T, gradients=l.dz, grad_table=table)
    if hasattr(l, "grad_nodes"):
        entries = [G_V for _, G_V in l.grad_nodes if G_V in l.B_nodes]  # the grad_table's nodes of B
        return viz.draw_side_by_side(l.z, l.T, gradients=l.dz, grad_table=table, highlight=entries)
    if hasattr(l, "call"):  # the very nodes the observer reported, this call's highlighted
        return viz.draw_side_by_side(l.z, l.T, gradients=l.dz, grad_table=table, highlight=l.call.new_nodes)
    if hasattr(l, "dz"):
        return viz.draw_side_by_side(l.z, l.T, gradients=l.dz, grad_table=table)
    if hasattr(l, "G2_prime"):
        return viz.draw(l.graph2, grad_table={}, highlight=l.G2_prime.nodes, title="G' (highlighted) for T")
    return viz.draw(l.graph, grad_table={}, title=f"G: z = {l.expr}")


def steps(l: Any) -> Iterator[Step]:
    """The steps of lesson 6 (see :mod:`lessons.step`)."""
    step = Step.showing(_values, _figure)
    whose = "figure 6.10" if l.expr == EXPR else "your expression"
    yield step(f"The forward graph G of {whose}", LINES["G"], _G, _G_text, _engine_G)
    yield step(
        "Algorithm 6.5: prune G to G'", LINES["prune"], _prune, _prune_text, _engine_prune, question=_ask
    )
    yield step("Algorithm 6.5: grad(z, T) builds B", LINES["grad"], _grad, _grad_text, _engine_grad)
    for k in range(1, len(l.calls) + 1):  # grad has run: one step per call of build_grad it made
        yield step(
            f"Algorithm 6.6, call {k}: build_grad(V)",
            LINES["build"],
            _call,
            _call_text,
            _engine_call,
            params={"k": k},
        )
    yield step("Algorithm 6.6: build_grad and op.bprop", LINES["build"], _build, _build_text, _engine_build)
    yield step("B is a graph: evaluate it again", LINES["reuse"], _reuse, _reuse_text, _engine_reuse)
    yield step("The same computations as Algorithm 6.2", LINES["same"], _same, _same_text, _engine_same)
