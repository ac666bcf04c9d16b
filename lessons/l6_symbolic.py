"""Lesson 6: symbol-to-symbol derivatives: G and B side by side (figure 6.10, Algorithms 6.5 and 6.6).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.5-6.5.6, figure 6.10,
Algorithms 6.5 and 6.6.
"""

# The steps take the live namespace as `l`, the name the student's stepper has in the REPL
# (l = lessons.start(n)), so the code shown for a step is what the student can type: hence E741.
# ruff: noqa: E741

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import viz
from lessons._core import Ours, Question, Step, table
from micrograph import Graph, Value, grad, pseudocode
from micrograph.graph import topological_order
from viz.words import fmt, formula, node_names

__all__ = ["NUMBER", "SECTION", "SUMMARY", "TITLE", "steps"]

NUMBER = 6
TITLE = "Symbol-to-symbol derivatives: G and B side by side"
SECTION = "sections 6.5.5-6.5.6, figure 6.10, Algorithms 6.5 and 6.6"
SUMMARY = "grad(z, w) adds the derivative to the graph as new nodes B: evaluate, draw, differentiate them."

NO_EXPR = "it draws figure 6.10's own chain z = tanh(tanh(tanh(w))) and its B, as the book does."
"""Why this lesson runs on its own example, not on a student's expression."""
LINES = {
    "G": Ours("figure 6.10 (left): x = f(w), y = f(x), z = f(y)"),
    "prune": pseudocode.ALGORITHM_6_5.line(3),
    "grad": pseudocode.ALGORITHM_6_5.line(5, 10),
    "build": Ours(pseudocode.ALGORITHM_6_6.text),
    "reuse": Ours("section 6.5.5: the derivatives are a computational graph too"),
    "same": "The symbol-to-number approach can be understood as performing exactly the same computations\n"
    "as are done in the graph built by the symbol-to-symbol approach.",
}


def _G(l: Any) -> None:
    l.w = Value(0.5, label="w")
    l.x = l.w.tanh()  # x = f(w), with f = tanh
    l.x.label = "x"
    l.y = l.x.tanh()  # y = f(x)
    l.y.label = "y"
    l.z = l.y.tanh()  # z = f(y)
    l.z.label = "z"
    l.graph = Graph(l.z)


def _G_text(l: Any) -> str:
    return (
        f"Figure 6.10 starts from the chain of figure 6.9: x = f(w), y = f(x), z = f(y). We take f = tanh "
        f"and w = {fmt(l.w.data)}: x = {fmt(l.x.data)}, y = {fmt(l.y.data)}, z = {fmt(l.z.data)}. G has "
        f"{len(l.graph.nodes)} nodes. Algorithm 6.2 would now compute numbers; Algorithm 6.5 will instead "
        f"add nodes that compute the derivative: a graph for dz/dw."
    )


def _prune(l: Any) -> None:
    l.v = Value(3.0, label="v")  # a second input that has nothing to do with w
    l.z2 = l.z * 2 + l.v.exp()  # z2 depends on w through z, and on v and the constant 2 besides
    l.graph2 = Graph(l.z2)
    l.G_prime = l.graph2.prune([l.w])  # G': ancestors of z2 that are also descendants of T = {w}


def _prune_text(l: Any) -> str:
    g2 = l.graph2
    names = node_names(g2)
    out = [names[v] for v in g2.nodes if v not in l.G_prime]
    return (
        f"Algorithm 6.5 first prunes G to G'. For z itself nothing goes: every node lies on the path from "
        f"w to z. Take z2 = 2z + exp(v) instead: its graph has {len(g2.nodes)} nodes, and G' with T = {{w}} "
        f"keeps {len(l.G_prime)}. Left out are {', '.join(out)}: v, exp(v) and the constant 2 do not "
        f"depend on w, so no gradient flows through them and build_grad never visits them. In the picture "
        f"the "
        f"nodes of G' are highlighted; these {len(out)} are not."
    )


def _ask(l: Any) -> Question:
    answer = l.graph.backprop()[l.w]  # the engine's Algorithm 6.2 is the answer key
    return Question(
        f"grad(z, w) will return a node dz_dw. What will its value dz_dw.data be at w = {fmt(l.w.data)}?",
        answer,
    )


def _grad(l: Any) -> None:
    l.calls = []  # each call of build_grad (Algorithm 6.6), as grad reports it
    l.dz_dw = grad(l.z, l.w, observe=l.calls.append)  # Algorithm 6.5: dz/dw, a new node of B
    l.B = Graph(l.dz_dw)  # everything dz_dw is computed from: B's nodes and the nodes of G they read
    l.B_nodes = [v for v in topological_order([l.dz_dw]) if v not in l.graph]  # B, in the order built
    l.table = l.graph.backprop()  # Algorithm 6.2 on the same G, for comparison


def _grad_text(l: Any) -> str:
    reads = sorted({p.label or "?" for v in l.B_nodes for p in v.inputs if not p.in_backward})
    return (
        f"grad(z, w) ran Algorithm 6.5: grad_table[z] <- 1, then build_grad for the nodes of G' from z "
        f"down. It returns a node, not a number: dz_dw, whose value is {fmt(l.dz_dw.data)}. Algorithm 6.2 "
        f"on G gives {fmt(l.table[l.w])}. B has {len(l.B_nodes)} new nodes (orange on the right); they read "
        f"the stored values {', '.join(reads)} of G (dashed edges): tanh's derivative rule is the "
        f"operation tanh'(a) = 1 - tanh(a)^2 of its argument a, one node f'(y), f'(x), f'(w) per step as "
        f"in figure 6.10, and one product per step: equation 6.52, evaluated from stored values."
    )


def _call(l: Any, k: int) -> None:
    l.call = l.calls[k - 1]  # build_grad's k-th call: V, C, get_inputs, D, the terms, new nodes


def _call_text(l: Any) -> str:
    c, k = l.call, l.calls.index(l.call) + 1
    names = node_names(l.graph, l.B_nodes)  # G's u1..un, then B's nodes as the picture names them

    def name(v: Value) -> str:
        if v not in names:  # grad_table[z], the seed 1: a constant that no node of B reads
            return f"the constant {fmt(v.data)}"
        return f"{names[v]} ({v.label})" if v.label and not v.in_backward else names[v]

    lines = []
    for C, inputs, D, term in zip(c.consumers, c.inputs, c.D, c.terms):
        built = "nothing (every local derivative is 0)"
        if term is not None:
            built = f"{name(term)} = {formula(term, names)}"
        lines.append(
            f"C = {name(C)}, a {C.op.name}: get_inputs(C, G') = ({', '.join(name(a) for a in inputs)}), "
            f"D = grad_table[C] = {name(D)}; op.bprop builds {built}"
        )
    added = ", ".join(names[v] for v in c.new_nodes) or "none"
    return (
        f"Call {k} of {len(l.calls)}: build_grad(V = {name(c.V)}). get_consumers(V, G') gives "
        f"{len(c.consumers)} consumer(s). For each, micrograph's op.bprop applies the operation's one "
        f"derivative rule (micrograph/ops.py) to nodes, so it builds nodes: the term G(i) = D times the "
        f"local derivative.\n\n" + "\n\n".join(lines) + "\n\n"
        f"G <- the sum of the terms: grad_table[{name(c.V)}] = {name(c.G_V)} = {fmt(c.G_V.data)}. This "
        f"call added {len(c.new_nodes)} node(s) to B: {added}, highlighted in the picture. The grad_table "
        f"entries it used were built by earlier calls: consumers come later in G, so they are done first."
    )


def _call_values(l: Any) -> str:
    names = node_names(l.graph, l.B_nodes)
    rows = [[names[v], formula(v, names), fmt(v.data)] for v in l.call.new_nodes]
    return table(rows, ["new node", "computes", "value"])


def _build(l: Any) -> None:
    l.grad_nodes = [(v.grad_of, v) for v in l.B.nodes if v.grad_of is not None]  # the grad_table entries


def _build_text(l: Any) -> str:
    names = node_names(l.graph)
    order = list(reversed(l.graph.nodes[:-1]))  # the nodes of G' below z, consumers first
    visited = [v.label or names[v] for v in order]
    consumers = [len(l.graph.get_consumers(v)) for v in order]
    parts = [f"dz/d{u.label or names.get(u, '?')} = {fmt(b.data)}" for u, b in l.grad_nodes]
    return (
        f"build_grad (Algorithm 6.6) visits V = {', '.join(visited)}. For each it asks get_consumers(V, G') "
        f"({', '.join(str(c) for c in consumers)} consumer(s) respectively), takes the consumer's "
        "gradient D from the grad_table, and calls op.bprop: tanh's one "
        f"derivative rule from micrograph/ops.py, applied to nodes, so it builds nodes. The grad_table "
        f"entries are nodes of B: {'; '.join(parts)}. The picture draws B alone, each node with the "
        "name it has in figure 6.10, the grad_table entries highlighted."
    )


def _reuse(l: Any) -> None:
    l.B.forward({l.w: 0.9})  # Algorithm 6.1 on B: new w; x, y, z and every node of B recomputed
    l.graph.forward({l.w: 0.9})  # and on G: z itself is not in B (B reads w, x, y), so it is updated here
    l.table_09 = l.graph.backprop()  # Algorithm 6.2 at w = 0.9
    w_y_x = (0.9, math.tanh(0.9), math.tanh(math.tanh(0.9)))  # the arguments of the three tanh
    l.exact_09 = math.prod(1 - math.tanh(a) ** 2 for a in w_y_x)


def _reuse_text(l: Any) -> str:
    return (
        f"B is an ordinary graph. Graph(dz_dw).forward({{w: 0.9}}) re-runs Algorithm 6.1 on it: no new node, "
        f"and now dz_dw.data = {fmt(l.dz_dw.data)}. Algorithm 6.2 at w = 0.9 gives {fmt(l.table_09[l.w])}; "
        f"the chain rule by hand, f'(y) f'(x) f'(w) with f' = 1 - tanh^2, gives {fmt(l.exact_09)}. "
        f"Because B is a graph it can also be drawn, compiled, and differentiated again (lesson 7)."
    )


def _same(l: Any) -> None:
    l.pairs = [(u, b.data, l.table_09[u]) for u, b in l.grad_nodes]  # B's value vs Algorithm 6.2's number


def _same_text(l: Any) -> str:
    equal = all(a == b for _, a, b in l.pairs)
    return (
        f"Section 6.5.5: both approaches perform exactly the same computations. Here literally: for each of "
        f"the {len(l.pairs)} grad_table entries, the node of B holds the same float as Algorithm 6.2's "
        f"table ({'all equal, bit for bit' if equal else 'NOT all equal'}), because both ran "
        "tanh's one rule, "
        f"once on floats and once on nodes. The picture shows Algorithm 6.2's numbers on G at w = 0.9."
    )


def _values(l: Any) -> str:
    if hasattr(l, "call") and not hasattr(l, "grad_nodes"):
        return _call_values(l)
    if hasattr(l, "pairs"):
        rows = [[u.label, fmt(b), fmt(t)] for u, b, t in l.pairs]
        return table(rows, ["dz/d(.)", "node of B", "Algorithm 6.2"])
    if hasattr(l, "B_nodes"):
        names = node_names(l.graph, l.B_nodes)  # G is u1..un; B's nodes are numbered on, as in the picture
        rows = [
            [names[v], formula(v, names), fmt(v.data), (v.grad_of.label if v.grad_of else "")]
            for v in l.B_nodes
        ]
        return table(rows, ["node", "computes", "value", "grad of"])
    g = l.graph2 if hasattr(l, "graph2") else l.graph
    names = node_names(g)
    keep = getattr(l, "G_prime", None)
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
        return viz.draw(l.graph, grad_table=l.table_09, title="G at w = 0.9, grad from Algorithm 6.2")
    if hasattr(l, "table_09"):
        return viz.draw_side_by_side(l.z, l.w)
    if hasattr(l, "grad_nodes"):
        entries = [b for _, b in l.grad_nodes]
        return viz.draw(l.dz_dw, highlight=entries, title="B alone: the grad_table entries highlighted")
    if hasattr(l, "call"):  # the very nodes the observer reported, this call's highlighted
        return viz.draw_side_by_side(l.z, l.w, gradients=l.dz_dw, highlight=l.call.new_nodes)
    if hasattr(l, "dz_dw"):
        return viz.draw_side_by_side(l.z, l.w)
    if hasattr(l, "G_prime"):
        return viz.draw(l.graph2, highlight=l.G_prime.nodes, title="G' (highlighted) for T = {w}")
    return viz.draw(l.graph, title="G: z = f(f(f(w)))")


def steps(l: Any) -> Iterator[Step]:
    """The steps of lesson 6 (see :mod:`lessons._core`)."""
    yield Step("The forward graph G of figure 6.10", LINES["G"], _G, _G_text, _values, _figure)
    yield Step(
        "Algorithm 6.5: prune G to G'", LINES["prune"], _prune, _prune_text, _values, _figure, question=_ask
    )
    yield Step("Algorithm 6.5: grad(z, w) builds B", LINES["grad"], _grad, _grad_text, _values, _figure)
    for k in range(1, len(l.calls) + 1):  # grad has run: one step per call of build_grad it made
        yield Step(
            f"Algorithm 6.6, call {k}: build_grad(V)", LINES["build"], _call, _call_text, _values, _figure,
            params={"k": k},
        )  # fmt: skip
    yield Step(
        "Algorithm 6.6: build_grad and op.bprop", LINES["build"], _build, _build_text, _values, _figure
    )
    yield Step("B is a graph: evaluate it again", LINES["reuse"], _reuse, _reuse_text, _values, _figure)
    yield Step("The same computations as Algorithm 6.2", LINES["same"], _same, _same_text, _values, _figure)
