"""Exercise ``topo``: the ordered node list u(1)..u(n), every node after its parents, the leaves first.

The graph is sent to the solution as its node records in a shuffled order with shuffled ids, so nothing the
solution's process holds reveals the order; the answer key is :class:`micrograph.Graph`'s order. How the
exercise is judged, template and all, is :data:`JUDGING`; its name and place are a row of
:data:`lessons.exercises.judges.TABLE`.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3.
"""

from __future__ import annotations

import random
import types
from collections.abc import Iterator
from typing import Any

from lessons.exercises import answers, verdict
from lessons.exercises.cases import Case as GraphCase
from lessons.exercises.cases import graph_cases
from lessons.exercises.drawing import Mark
from lessons.exercises.exercise import Judging
from lessons.exercises.imports import Imports
from lessons.exercises.judges import mistakes
from lessons.exercises.judges.mistakes import Mistake, failure
from lessons.exercises.judges.scaling import growth_mistake, measured_cases
from lessons.exercises.verdict import Case, Fail, NodeRef
from micrograph.engine import Value
from micrograph.graph import Graph

__all__ = ["JUDGING", "CODES", "MISTAKES", "cases"]

CODES: tuple[str, ...] = (
    "mutation", "not-a-list", "stranger", "no-visited", "missing-node", "reversed", "parent-after",
    "leaves-not-first", "paths",
)  # fmt: skip
"""The codes of the mistakes this judge gives, each a row of ``mistakes.toml``'s [topo] table."""

MISTAKES: dict[str, Mistake] = {**mistakes.of("topo", CODES), "growth": growth_mistake()}
"""The mistakes this exercise recognises."""


def _fail(code: str, headline: str, **kw: Any) -> Fail:
    return Fail(failure(MISTAKES[code], headline, **kw))


def _positions(graph: Graph, order: Any, ids: dict[int, Value]) -> list[int]:
    """The solution's order as positions in G; fails on anything that is not a node of G, or repeats."""
    if not isinstance(order, list):
        raise _fail(
            "not-a-list",
            f"topological_order(z) returned {verdict.shown(order)}; it must return a list of the nodes.",
        )
    seen: dict[int, int] = {}
    out: list[int] = []
    for pos, item in enumerate(order):
        node = ids.get(item.j) if isinstance(item, NodeRef) else None
        if node is None:
            shown = verdict.shown(item)
            raise _fail("stranger", f"item {pos} of your order, {shown}, is not a node of z's graph.")
        j = graph.index[node]
        if j in seen:
            raise _fail(
                "no-visited",
                f"{verdict.reported_name(graph, j)} appears twice in your order (items {seen[j]} and {pos}).",
                details=[
                    "A node reached by several paths (a shared parent, or the same parent "
                    "twice as in a * a) is visited once per path unless the search remembers it."
                ],
                node=verdict.reported_name(graph, j),
                **verdict.draw(graph, wrong=j, title="this node appears twice in your order"),
            )
        seen[j] = pos
        out.append(j)
    return out


def _check_order(graph: Graph, order: list[int]) -> None:
    place = {j: pos for pos, j in enumerate(order)}
    missing = [j for j in range(len(graph.nodes)) if j not in place]
    if missing:
        j = missing[0]
        constant = (
            " (a constant: constants are leaves of the graph too)." if graph.nodes[j].is_constant else "."
        )
        raise _fail(
            "missing-node",
            f"{len(missing)} node(s) of the graph are missing from your order, the first "
            f"{verdict.reported_name(graph, j)}{constant}",
            node=verdict.reported_name(graph, j),
            **verdict.draw(graph, wrong=j, title="this node is missing from your order"),
        )
    parents = graph.parents
    if len(order) > 1 and all(place[p] > place[i] for i in range(len(order)) for p in parents[i]):
        raise _fail("reversed", "your order is reversed: z comes first and the leaves last.")
    for i in order:
        for k, j in enumerate(parents[i]):
            if place[j] > place[i]:
                raise _fail(
                    "parent-after",
                    f"{verdict.reported_name(graph, i)} comes before its parent "
                    f"{verdict.reported_name(graph, j)} (argument {k + 1}): it cannot be computed before its "
                    "argument is.",
                    node=verdict.reported_name(graph, i),
                    **verdict.draw(
                        graph,
                        wrong=i,
                        marks=[Mark(j, i, k, "comes later in your order")],
                        title="a node before its parent",
                    ),
                )
    n_i = graph.n_inputs
    first_op = next((pos for pos, j in enumerate(order) if graph.nodes[j].op is not None), len(order))
    if first_op < n_i:
        j = next(j for j in order[first_op:] if graph.nodes[j].op is None)
        raise _fail(
            "leaves-not-first",
            f"the leaves are not first: {verdict.reported_name(graph, order[first_op])} (an "
            f"operation) comes at item {first_op}, before the leaf {verdict.reported_name(graph, j)}.",
            details=[
                f"The graph has n_i = {n_i} leaves; u(1)..u(n_i) must be exactly these inputs, which "
                "Algorithm 6.1 sets first (u(i) ← x_i), and u(n_i+1)..u(n) the operations."
            ],
            node=verdict.reported_name(graph, j),
            **verdict.draw(graph, wrong=j, title="this leaf comes after an operation in your order"),
        )


def _judge(graph: Graph, ids: dict[int, Value], rid_to_pos: dict[int, int]) -> Any:
    def judge(answer: dict[str, Any]) -> None:
        change = list(answer.get("mutation") or [])
        if change:
            change[0] = rid_to_pos.get(change[0], 0)
            raise _fail(
                "mutation", f"topological_order(z) changed the graph: {verdict.mutation_text(graph, change)}."
            )
        _check_order(graph, _positions(graph, verdict.decode(answer.get("result")), ids))

    return judge


def _part(spec: GraphCase, rng: random.Random) -> tuple[Graph, dict[str, Any], Any, dict[int, int]]:
    """A case's G, its request (the records shuffled, with shuffled ids), the judge of the solution's answer,
    and {id: position in G}."""
    z, _ = spec.build()
    graph = Graph(z)
    rids = rng.sample(range(10 * len(graph.nodes) + 10), len(graph.nodes))
    records = verdict.graph_request(graph)["records"]
    for record, rid in zip(records, rids):
        record[0] = rid
        record[3] = [rids[p] for p in record[3]]
    rng.shuffle(records)
    ids = {rid: graph.nodes[j] for j, rid in enumerate(rids)}
    positions = {rid: j for j, rid in enumerate(rids)}
    return graph, {"records": records, "z": rids[-1]}, _judge(graph, ids, positions), positions


def cases(seed: int) -> Iterator[Case]:
    """The graph cases, sent shuffled; the answer key is the engine's order. Then the growth case on
    :func:`~lessons.exercises.cases.growth_graphs`, its graphs shuffled by one generator of their own."""
    growth = random.Random(seed * 7919 - 1)

    def part(spec: GraphCase, number: int) -> tuple[Graph, dict[str, Any], Any, dict[str, Any]]:
        rng = random.Random(seed * 7919 + number) if number >= 0 else growth
        graph, request, judge, positions = _part(spec, rng)
        return graph, request, judge, {"ref_to_pos": positions}

    specs = graph_cases(seed=seed)
    what = "topological_order(z)"
    return measured_cases(specs, part, MISTAKES, what=what, book="order", right="order")


TEMPLATE = '''\
"""The ordered node list u(1)..u(n): every node after its parents, the n_i
leaves first, z last.

The book (section 6.5.3): "We will assume that the nodes of the graph have been
ordered in such a way that we can compute their output one after the other,
starting at u(n_i+1) and going up to u(n)."
Algorithm 6.1 sets the inputs first: for i = 1, ..., n_i do u(i) <- x_i.

A node is a micrograph Value: node.inputs is the tuple of its parents Pa(u) in
argument order (a * a has the same parent twice); node.op is None for a leaf
(an input or a constant).

The checker's graphs include a chain 2,000 nodes deep: Python allows about
1,000 nested calls.

@SEE@
@CHECK@
"""


def topological_order(z):
    """Return a list of every node z depends on (z included), each once:
    leaves first, z last."""
    # TODO: a depth-first search from z that emits a node after all its parents
    #       have been emitted.
    #       Remember the nodes already seen: a shared node is reached by
    #       several paths.
    # TODO: then put the leaves (node.op is None) first.
    raise NotImplementedError
'''

JUDGING = Judging(
    template=TEMPLATE,
    cases=cases,
    answer=answers.ON_G,
    imports=Imports.python("the order u(1)..u(n) in Python"),
    reference=lambda: types.SimpleNamespace(topological_order=lambda z: Graph(z).nodes),
)
"""How the exercise is judged: the template, the judge (:func:`cases`, :data:`MISTAKES`), what a solution may
import (and micrograph's nodes, which the import guard allows), micrograph's own order as the reference."""
