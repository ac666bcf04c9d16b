"""Exercise ``backprop``: Algorithm 6.2, the grad_table, one local derivative per edge.

The answer key is :func:`micrograph.backprop` with its observer, which gives the terms of every sum (consumer
i, argument k, grad_table[u(i)], ∂u(i)/∂u(j)); a wrong entry is diagnosed by comparing the student's number
with what the catalogue of a sum's mistakes (:mod:`viz.mistakes`, the explorer's too) makes of those terms,
never by running a second copy of the algorithm (:mod:`lessons.exercises.judges.entry`). The mistakes it
recognises are the rows of :data:`MISTAKES`; the evaluations of ``tools.local_derivative`` are counted against
the edges. How the exercise is judged, template and all, is :data:`JUDGING`; its name and place are a row of
:data:`lessons.exercises.judges.TABLE`.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.2.
"""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Any

from lessons.exercises import answers
from lessons.exercises.cases import Case as GraphCase
from lessons.exercises.cases import graph_cases
from lessons.exercises.exercise import Judging
from lessons.exercises.imports import Imports
from lessons.exercises.judges import mistakes
from lessons.exercises.judges.entry import ROWS, algorithm_6_2, diagnose_entry
from lessons.exercises.judges.mistakes import Mistake, failure
from lessons.exercises.judges.scaling import growth_mistake, measured_cases
from lessons.exercises.report import Failure
from lessons.exercises.schema import list_of
from lessons.exercises.verdict import (
    Case,
    Fail,
    Foreign,
    NodeRef,
    close,
    decode,
    graph_request,
    mutation_text,
    shown,
)
from micrograph import backprop
from micrograph.backprop import BackpropStep
from micrograph.graph import Graph, node_name

__all__ = ["JUDGING", "CODES", "MISTAKES", "cases"]

CODES: tuple[str, ...] = (
    "mutation", "not-a-table", "keys", "recompute", "twice-per-edge", "edges-skipped", "uncounted", "paths",
)  # fmt: skip
"""The codes of the mistakes this judge gives, each a row of ``mistakes.toml``'s [backprop] table."""

MISTAKES: dict[str, Mistake] = {**ROWS, **mistakes.of("backprop", CODES), "growth": growth_mistake("edges")}
"""The mistakes this exercise recognises: {code: the hint and the book's sentence}; those of a wrong entry
and of its loop are :data:`lessons.exercises.judges.entry.ROWS`."""


def _table(result: Any, graph: Graph) -> list[Any]:
    """The solution's grad_table aligned with G's positions (None where it has no entry)."""
    n = len(graph.nodes)
    if isinstance(result, dict):
        if result and not any(isinstance(k, NodeRef) for k in result):
            key = next(iter(result))
            kind = "" if isinstance(key, Foreign) else f" ({type(key).__name__})"
            raise Fail(
                failure(
                    MISTAKES["keys"],
                    f"the grad_table's keys are not the nodes of G: the first is {shown(key)}{kind}.",
                    details=["The book's grad_table[u(i)] is indexed by the node u(i) itself."],
                )
            )
        return [result.get(NodeRef(j)) for j in range(n)]
    if isinstance(result, list):
        return [result[j] if j < len(result) else None for j in range(n)]
    raise Fail(
        failure(
            MISTAKES["not-a-table"],
            f"backprop(G) returned {shown(result)}; it must return the "
            "grad_table, a dict {node: dz/dnode}.",
        )
    )


def _twice(count: int, graph: Graph, calls: list[list[int]]) -> bool:
    """True if every edge's local derivative was evaluated exactly twice: all the calls known, each edge
    twice; on a large graph, whose calls are known only in part (:func:`lessons.exercises.calls.call_backprop`
    sends the first ones), none of those more than twice."""
    if count != 2 * graph.num_edges or len(calls) > count:
        return False
    times: dict[tuple[int, int], int] = {}
    for i, k in calls:
        times[i, k] = times.get((i, k), 0) + 1
    if len(calls) < count:
        return max(times.values(), default=0) <= 2
    edges = {(i, k) for i, pa in enumerate(graph.parents) for k in range(len(pa))}
    return set(times) == edges and set(times.values()) == {2}


def _count(count: int, graph: Graph, calls: list[list[int]]) -> None:
    edges = graph.num_edges
    if count == edges:
        return
    code = (
        "uncounted"
        if count == 0
        else "twice-per-edge"
        if _twice(count, graph, calls)
        else ("recompute" if count > edges else "edges-skipped")
    )
    more = (
        "More means something is recomputed (figure 6.9): a gradient computed again along every path instead "
        "of read from grad_table."
        if count > edges
        else "Fewer means some edges were never evaluated."
    )
    headline = {
        "uncounted": "no local derivative was evaluated with tools.local_derivative, so the check cannot "
        f"count your cost: Algorithm 6.2 evaluates one per edge ({edges:,} here).",
        "twice-per-edge": "a local derivative was evaluated twice per edge: "
        f"{count:,} evaluations for {edges:,} edges.",
    }.get(
        code,
        f"the evaluation count is not the edge count: {count:,} local derivatives evaluated for "
        f"{edges:,} edges.",
    )
    details = (
        []
        if code == "uncounted"
        else ["Algorithm 6.2 evaluates each edge's ∂u(i)/∂u(j) exactly once. " + more]
    )
    raise Fail(failure(MISTAKES[code], headline, details=details))


def _judge(graph: Graph, expected: list[float], steps: dict[int, BackpropStep]) -> Any:
    def judge(answer: dict[str, Any]) -> None:
        changed = mutation_text(graph, answer.get("mutation") or [])
        if changed:
            raise Fail(
                failure(
                    MISTAKES["mutation"],
                    f"backprop(G) changed the graph: {changed}.",
                    details=[
                        "micrograd's backward() writes node.grad; Algorithm 6.2 keeps dz/du(j) in its own "
                        "table and "
                        "leaves the graph as it found it."
                    ],
                )
            )
        table = _table(decode(answer.get("result")), graph)
        calls = [list(c) for c in answer.get("calls") or []]
        for j in range(len(graph.nodes) - 1, -1, -1):
            actual = table[j]
            if isinstance(actual, Foreign) or not close(actual, expected[j]):
                raise diagnose_entry(graph, j, actual, expected, steps, what="backprop", calls=calls)
        counts = answer.get("counts") or {}
        _count(int(counts.get("local_derivatives", 0)), graph, calls)

    return judge


def _key_error(case: Case, failure_: Failure, error: dict[str, Any]) -> Failure:
    """A KeyError on u(n) means no seed; on another node, a consumer read before it was computed."""
    graph = case.graph
    assert graph is not None
    if failure_.node.split(" ")[0] == node_name(len(graph.nodes)):
        failure_.headline = (
            failure_.headline[:-1] + ": that is u(n), the output z, whose entry starts the table."
        )
        failure_.mistake, failure_.book, failure_.hint = "seed", "loop", MISTAKES["seed"].hint
    else:
        failure_.headline = (
            failure_.headline[:-1] + ": it is a consumer, so your loop reached a node before its "
            "consumers, which come later in u(1)..u(n)."
        )
        failure_.details = [
            "Algorithm 6.2 runs from u(n) down: then every consumer's entry is in the table when "
            "a node needs it."
        ]
        failure_.mistake, failure_.book, failure_.hint = "forward-loop", "loop", MISTAKES["forward-loop"].hint
    return failure_


def _part(spec: GraphCase, number: int) -> tuple[Graph, dict[str, Any], Any, dict[str, Any]]:
    """A case's G, its request, the judge of the solution's answer (Algorithm 6.2's grad_table the key) and
    the case's own hook (a KeyError read as the loop's order)."""
    graph = Graph(spec.build()[0])
    expected, steps = algorithm_6_2(graph)
    return graph, graph_request(graph), _judge(graph, expected, steps), {"key_error": _key_error}


def cases(seed: int) -> Iterator[Case]:
    """The graph cases (:func:`~lessons.exercises.cases.graph_cases`), each with Algorithm 6.2's answer,
    then the growth case on :func:`~lessons.exercises.cases.growth_graphs`."""
    return measured_cases(
        graph_cases(seed=seed), _part, MISTAKES, what="backprop(G)", book="reverse", right="grad_table"
    )


TEMPLATE = '''\
"""Algorithm 6.2, back-propagation with the grad_table.

The book (section 6.5.3, Algorithm 6.2):

@ALGORITHM_6_2@

Return the grad_table for every node of G (a dict {node: du(n)/dnode}).

Positions are 0-based: G.nodes[0] is u(1), G.nodes[n - 1] is u(n).
G.get_consumers(node) lists the nodes u(i) that take node as an argument (each
once); node.inputs is a node's arguments in order: a consumer may take the same
node twice (a * a), at positions k = 0 and k = 1.
tools.local_derivative(C, k) is du(C)/d(argument k of C) at the stored values:
the operation table's rule, counted (the checker compares the count with the
number of edges).
Leave the nodes as they are (do not assign node.grad: that is micrograd's
backward(), not the book's).

@SEE@
@CHECK@
"""
from lessons.exercises import tools


def backprop(G):
    """Return grad_table: {node: du(n)/dnode} for every node of G."""
    nodes = G.nodes
    n = len(nodes)
    grad_table = {}
    grad_table[nodes[n - 1]] = 1.0
    # TODO: the loop over j, from u(n-1) down to u(1).
    # TODO: each entry is a sum of one term per edge out of nodes[j].
    raise NotImplementedError
'''

JUDGING = Judging(
    template=TEMPLATE,
    cases=cases,
    answer=answers.Schema(
        {
            **answers.ON_G.fields,
            "counts": answers.COUNTS,
            "calls": list_of(answers.CALL, lambda ctx: answers.MAX_CALLS),
        },
        answers.ON_G.measured,
    ),
    imports=Imports.python("Algorithm 6.2 in Python, with math and the counted tools"),
    reference=lambda: types.SimpleNamespace(backprop=lambda G: backprop(G)),  # Algorithm 6.2
)
"""How the exercise is judged: the template, the judge (:func:`cases`, :data:`MISTAKES`), what a solution may
import (and micrograph's nodes and tools, which the import guard allows), micrograph's own backprop as the
reference."""
