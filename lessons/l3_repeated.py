"""Lesson 3: repeated subexpressions: the naive chain rule against back-propagation (figure 6.9,
equations 6.50-6.53), counted, and the blowup plot.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.2-6.5.3, figure 6.9,
equations 6.50-6.53.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import viz
from lessons.engine_lines import Bound, EngineLines
from lessons.engine_spans import naive_sum, stored
from lessons.step import Ours, Step
from micrograph import Graph
from micrograph.families import blowup_rows, chain, expected_counts, ladder
from micrograph.naive import naive_grad
from micrograph.store import store_grad
from viz.words import fmt, table

__all__ = ["steps"]

LINES = {
    "chain": Ours(
        "dz/dw = dz/dy dy/dx dx/dw                      (6.50-6.51)\n"
        "      = f'(y) f'(x) f'(w)                        (6.52)\n"
        "      = f'(f(f(w))) f'(f(w)) f'(w)               (6.53)"
    ),
    "naive": Ours("(6.53): recompute f(w), f(f(w)) wherever they appear"),
    "store": Ours("(6.52): compute f(w) once, store it in x; back-propagation"),
    "long": Ours("the naive cost of (6.53) grows with the square of the depth"),
    "ladder": Ours("the number of paths can grow exponentially with the depth (section 6.5.3)"),
    "rows": Ours(
        "back-propagation: one local derivative per edge; naive: one per edge of G unrolled into a tree"
    ),
    "budget": Ours("naive_grad(z, w, max_operations=...): stop, and say how far it got"),
}

LONG, LADDER, HOPELESS = 50, 4, 30  # depths of the long chain, the small ladder, the ladder too deep
BUDGET = 200_000  # the naive rule's budget per depth in this lesson (operations)
DEPTH = 14


def _chain(l: Any) -> None:
    l.z, l.w = chain(3, "tanh", 0.5)  # figure 6.9: x = f(w), y = f(x), z = f(y), f = tanh
    l.graph = Graph(l.z)
    l.x, l.y = l.graph.nodes[1], l.graph.nodes[2]
    l.f_prime = [1 - v.data**2 for v in (l.z, l.y, l.x)]  # f'(y), f'(x), f'(w): tanh' = 1 - tanh^2


def _chain_text(l: Any) -> str:
    a, b, c = l.f_prime
    return (
        f"Figure 6.9's chain at w = {fmt(l.w.data)}: x = {fmt(l.x.data)}, y = {fmt(l.y.data)}, z = "
        f"{fmt(l.z.data)}. By the chain rule dz/dw = f'(y) f'(x) f'(w). With f = tanh, f'(a) = 1 - "
        "tanh(a)^2, "
        f"so each factor reuses a stored value: f'(y) = 1 - z^2 = {fmt(a)}, f'(x) = 1 - y^2 = {fmt(b)}, "
        f"f'(w) = 1 - x^2 = {fmt(c)}; the product is {fmt(a * b * c)}. Equation 6.53 writes the same "
        f"product without the names x and y: f'(f(f(w))) f'(f(w)) f'(w), recomputing f(w) and f(f(w))."
    )


def _naive(l: Any) -> None:
    l.naive = naive_grad(l.z, l.w)  # equation 6.53: no table, every subexpression recomputed
    l.store = store_grad(l.z, l.w)  # equation 6.52: what back-propagation does
    l.grad_table = l.graph.backprop()  # Algorithm 6.2 on the chain: reads the stored x and y


def _naive_text(l: Any) -> str:
    n, s = l.naive, l.store
    return (
        f"Both give dz/dw = {fmt(n.value)} (naive) and {fmt(s.value)} (store). The naive rule evaluated "
        f"{n.local_derivatives} local derivatives and recomputed {n.recomputed} forward values: "
        f"{' + '.join(str(k) for k in range(len(l.graph.nodes) - 1, 0, -1))}, "
        f"because the derivative at each level recomputes everything below it. Back-propagation evaluated "
        f"{s.local_derivatives} local derivatives and recomputed {s.recomputed}: it reads x, y, z from the "
        f"forward pass. Memory goes the other way: the naive rule held at most {n.peak_values} "
        "values at once, "
        f"back-propagation {s.peak_values}. The picture highlights the stored x and y and shows each "
        "node's grad, dz/du, as Algorithm 6.2 computes it from them."
    )


def _long(l: Any) -> None:
    l.z50, l.w50 = chain(LONG)
    l.naive50 = naive_grad(l.z50, l.w50)
    l.store50 = store_grad(l.z50, l.w50)
    l.expected50 = expected_counts("chain", LONG)  # the closed forms
    # depths 1..50
    l.chain_plot = viz.charts.blowup(
        LONG,
        families=("chain",),
        max_operations=BUDGET,
    )


def _long_text(l: Any) -> str:
    n, s = l.naive50, l.store50
    return (
        f"A chain of depth d = {LONG}: the naive rule recomputes {n.recomputed} values (the closed form "
        f"d(d+1)/2 gives {l.expected50['naive_recomputed']}), for {n.local_derivatives} local derivatives. "
        f"Back-propagation: {s.local_derivatives} local derivatives, one per edge, nothing recomputed. "
        f"Quadratic against linear, on a graph with a single path: the plot shows both counts for every "
        f"depth from 1 to {LONG}."
    )


def _ladder(l: Any) -> None:
    l.zl, l.wl = ladder(LADDER)  # each level is sin + cos of the level below, which it uses twice
    l.ladder_graph = Graph(l.zl)
    l.ladder_counts = expected_counts("ladder", LADDER)
    l.naive_l = naive_grad(l.zl, l.wl)
    l.store_l = store_grad(l.zl, l.wl)


def _ladder_text(l: Any) -> str:
    c, n, s = l.ladder_counts, l.naive_l, l.store_l
    return (
        "Now a ladder: each level is the sine plus the cosine of the level below, which it uses twice, so "
        f"the number of paths from w to z doubles per level: {c['paths']} paths at depth {LADDER}, over a "
        "graph of "
        f"{len(l.ladder_graph.nodes)} nodes and {l.ladder_graph.num_edges} edges. The naive rule sums over "
        f"every path: {n.operations} operations ({n.local_derivatives} local derivatives, {n.recomputed} "
        f"recomputations). Back-propagation: {s.operations}. Same answer, {fmt(n.value)} and {fmt(s.value)}."
    )


def _rows(l: Any) -> None:
    l.rows = blowup_rows("ladder", DEPTH, max_operations=BUDGET)  # depths 1..14, naive vs back-propagation


def _rows_text(l: Any) -> str:
    last = l.rows[-1]
    measured = [r for r in l.rows if r["naive_complete"]]
    m = measured[-1]
    return (
        f"Depths 1 to {DEPTH}, measured while the naive rule stays within {BUDGET} operations (up to depth "
        f"{m['depth']}: {m['naive_ops']} operations against {m['backprop_ops']}), then from the closed form. "
        f"At depth {last['depth']}: {last['paths']} paths, {last['naive_ops']} naive operations, "
        f"{last['backprop_ops']} for back-propagation. Each level multiplies the naive cost by about "
        f"{l.rows[-1]['naive_ops'] / l.rows[-2]['naive_ops']:.2f} and adds {last['backprop_ops'] // DEPTH} "
        f"to back-propagation's."
    )


def _plot(l: Any) -> None:
    l.plot = viz.charts.blowup(DEPTH, max_operations=BUDGET)  # both families, log scale


def _plot_text(l: Any) -> str:
    return (
        "The plot puts both families on a log scale: back-propagation grows linearly in the depth for both; "
        "the naive rule grows quadratically on the chain and exponentially on the ladder. Points the budget "
        "stopped are drawn from the closed form (dashed). micrograph blowup --family ladder --max-depth 24 "
        "draws it deeper."
    )


def _budget(l: Any) -> None:
    l.z30, l.w30 = ladder(HOPELESS)
    l.stopped = naive_grad(l.z30, l.w30, max_operations=100_000)  # 2**30 paths: it would never finish
    l.store30 = store_grad(l.z30, l.w30)


def _budget_text(l: Any) -> str:
    return (
        f"On a ladder of depth {HOPELESS} ({expected_counts('ladder', HOPELESS)['paths']} paths) "
        "the naive rule cannot "
        f"finish, so it is given a budget: complete = {l.stopped.complete}; it says: {l.stopped.stopped}. "
        f"Back-propagation finishes with {l.store30.operations} operations: dz/dw = {fmt(l.store30.value)}."
    )


def _engine_chain(l: Any) -> EngineLines:
    levels = (l.x, l.y, l.z)
    return EngineLines(
        "micrograph.families:chain",
        'leaf = Value(w, label="w")',
        "return u, leaf",
        (
            Bound("u = op(u)", "u.data", tuple(v.data for v in levels)),
            Bound("u.label = ", "u.label", tuple(v.label for v in levels)),
        ),
        caption="figure 6.9's chain, f = tanh",
    )


def _engine_naive(l: Any) -> list[EngineLines]:
    return [naive_sum(l.naive), stored(l.store)]


def _engine_long(l: Any) -> EngineLines:
    e = l.expected50
    return EngineLines(
        "micrograph.families:expected_counts",
        'if family == "chain":',
        '"naive_peak": 2 if d else 0,',
        (
            Bound('if family == "chain":', "d", (e["edges"],)),
            Bound("counts = {", 'counts["naive_recomputed"]', (e["naive_recomputed"],)),
        ),
        caption="the closed forms on a chain of depth d",
    )


def _engine_ladder(l: Any) -> EngineLines:
    sums = tuple(v.data for v in l.ladder_graph.nodes if v.op is not None and v.op.name == "add")
    return EngineLines(
        "micrograph.families:ladder",
        'leaf = Value(w, label="w")',
        "return level, leaf",
        (Bound("level = s + c", "level.data", sums),),
        caption="each level uses the one below twice",
    )


def _engine_rows(l: Any) -> EngineLines:
    last = l.rows[-1]
    return EngineLines(
        "micrograph.families:blowup_rows",
        "for d in range(1, top + 1):",
        "stopped = naive is None or not naive.complete",
        (
            Bound("for d in range(1, top + 1):", "d", (last["depth"],)),
            Bound("store = store_grad(z, w)", "store.operations", (last["backprop_ops"],)),
            Bound("stopped = naive is None", "stopped", (not last["naive_complete"],)),
        ),
        caption=f"the last depth, {last['depth']}",
    )


def _engine_plot(l: Any) -> EngineLines:
    last = l.rows[-1]
    return EngineLines(
        "micrograph.families:blowup_rows",
        "if naive is None or stopped:",
        "rows.append(",
        (
            Bound('naive_ops = expected["naive_operations"]', "d", (last["depth"],)),
            Bound('naive_ops = expected["naive_operations"]', "naive_ops", (last["naive_ops"],)),
        ),
        caption="a depth the budget stopped: the closed form",
    )


def _engine_budget(l: Any) -> EngineLines:
    return EngineLines(
        "micrograph.naive:_Naive.check",
        bound=(
            Bound("ops = self.local_derivatives + self.recomputed", "ops", (l.stopped.operations,)),
            Bound("ops = self.local_derivatives + self.recomputed", "self.limit", (100_000,)),
        ),
        caption="the budget, checked every 4,096 operations",
    )


def _values(l: Any) -> str:
    if hasattr(l, "stopped"):
        return ""
    if hasattr(l, "rows"):
        rows = [
            [
                str(r["depth"]),
                str(r["paths"]),
                str(r["naive_ops"]) + ("" if r["naive_complete"] else " *"),
                str(r["backprop_ops"]),
            ]
            for r in l.rows
        ]
        return (
            table(rows, ["depth", "paths", "naive ops", "backprop ops"]) + "\n* closed form (budget reached)"
        )
    results = [("naive (6.53)", l.naive), ("store (6.52)", l.store)] if hasattr(l, "naive") else []
    if hasattr(l, "naive50"):
        results += [(f"naive, d = {LONG}", l.naive50), (f"store, d = {LONG}", l.store50)]
    if hasattr(l, "naive_l"):
        results += [(f"naive, ladder {LADDER}", l.naive_l), (f"store, ladder {LADDER}", l.store_l)]
    if not results:
        return ""
    rows = [
        [name, fmt(r.value), str(r.local_derivatives), str(r.recomputed), str(r.peak_values)]
        for name, r in results
    ]
    return table(rows, ["method", "dz/dw", "local derivs", "recomputed", "peak values"])


def _figure(l: Any) -> Any:
    """Each step's own picture (none where the step's numbers are the picture): no two steps repeat one."""
    if hasattr(l, "stopped"):
        return None
    if hasattr(l, "plot"):
        return l.plot
    if hasattr(l, "rows"):
        return None  # the table of counts is this step's picture; the next step plots it
    if hasattr(l, "ladder_graph"):
        return viz.draw(  # no grad_table: the step computed dz/dw only, by the two rules
            l.ladder_graph,
            grad_table={},
            title=f"ladder of depth {LADDER}: {l.ladder_counts['paths']} paths from w to z",
        )
    if hasattr(l, "chain_plot"):
        return l.chain_plot
    if hasattr(l, "grad_table"):
        return viz.draw(
            l.graph,
            grad_table=l.grad_table,
            highlight=[l.x, l.y],
            title="(6.52): x and y computed once, stored, and read back; grad = dz/du by Algorithm 6.2",
        )
    return viz.draw(l.graph, grad_table={}, title="figure 6.9: z = f(f(f(w)))")


def steps(l: Any) -> Iterator[Step]:
    """The steps of lesson 3 (see :mod:`lessons.step`)."""
    step = Step.showing(_values, _figure)
    yield step("Figure 6.9: the chain rule on a chain", LINES["chain"], _chain, _chain_text, _engine_chain)
    yield step("Naive (6.53) against stored (6.52)", LINES["naive"], _naive, _naive_text, _engine_naive)
    yield step("A longer chain: quadratic", LINES["long"], _long, _long_text, _engine_long)
    yield step("A ladder: the paths double per level", LINES["ladder"], _ladder, _ladder_text, _engine_ladder)
    yield step("Counting depth by depth", LINES["rows"], _rows, _rows_text, _engine_rows)
    yield step("The blowup plot", LINES["rows"], _plot, _plot_text, _engine_plot)
    yield step("A budget for the naive rule", LINES["budget"], _budget, _budget_text, _engine_budget)
