"""Exercise ``backprop``: Algorithm 6.2, the grad_table, one local derivative per edge.

The answer key is :func:`micrograph.backprop` with its observer, which gives the terms of every sum
(consumer i, argument k, grad_table[u(i)], ∂u(i)/∂u(j)); a wrong entry is diagnosed by comparing the
student's number with what the catalogue of a sum's mistakes (:mod:`viz.mistakes`, the explorer's too)
makes of those terms (one term, the first consumer's, the sum less the second edge of ``a * a`` ...), never
by running a second copy of the algorithm (:mod:`lessons.exercises.judges.entry`). The mistakes it
recognises are the rows of :data:`MISTAKES`.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.2.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lessons.exercises.cases import graph_cases, growth_chains
from lessons.exercises.imports import HARMLESS, Imports
from lessons.exercises.judge import (
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
from lessons.exercises.judges.entry import LOOP, ROWS, diagnose_entry
from lessons.exercises.judges.mistakes import Mistake, failure
from lessons.exercises.judges.scaling import GROWTH_HINT, Tally, growth_case, paths_stop
from lessons.exercises.report import Failure
from micrograph import backprop
from micrograph.backprop import BackpropStep
from micrograph.graph import Graph

__all__ = ["cases", "MISTAKES", "IMPORTS", "algorithm_6_2"]

MISTAKES: dict[str, Mistake] = {
    **ROWS,
    **{
        m.code: m
        for m in [
            Mistake("mutation", "write grad_table[node], not node.grad.", "table", words="wrote node.grad"),
            Mistake(
                "not-a-table",
                "return the grad_table, a dict {node: dz/dnode}.",
                "",
                words="did not return a grad_table",
            ),
            Mistake(
                "keys",
                "use the nodes as keys: grad_table[node] = ..., with node from G.nodes.",
                "table",
                words="grad_table's keys are not the nodes",
            ),
            Mistake(
                "recompute",
                "read each consumer's gradient from grad_table (computed once, from u(n) down) "
                "instead of computing it again.",
                "edges",
                words="gradients recomputed along each path",
            ),
            Mistake(
                "twice-per-edge",
                "evaluate tools.local_derivative(C, k) once per edge and keep the number: "
                "compute each term once.",
                "edges",
                words="each local derivative computed twice",
            ),
            Mistake(
                "edges-skipped",
                "evaluate the local derivative of every edge out of u(j), once.",
                "edges",
                words="local derivatives of edges skipped",
            ),
            Mistake(
                "uncounted",
                "evaluate each local derivative with tools.local_derivative(C, k): the check "
                "counts the evaluations, Algorithm 6.2's cost (one per edge).",
                "edges",
                words="local derivatives not from tools",
            ),
            Mistake(
                "paths",
                "compute each grad_table entry once, from u(n) down, from the consumers' entries already in "
                "grad_table: one local derivative per edge.",
                "recompute",
                words="every path from z walked (no table)",
            ),
            Mistake("growth", GROWTH_HINT, "edges", words="time grows faster than the graph"),
        ]
    },
}
"""The mistakes this exercise recognises: {code: the hint and the book's sentence}; those of a wrong entry
are :data:`lessons.exercises.judges.entry.ROWS`."""

IMPORTS = Imports("Algorithm 6.2 in Python, with math and the counted tools", frozenset({"math", *HARMLESS}))
"""The modules a solution may import (and micrograph's nodes and tools, which the import guard allows)."""

_PATHS = "the naive chain rule: work grows with the number of paths (figure 6.9)."
_NEEDS = (
    "Algorithm 6.2 evaluates one local derivative per edge ({edges} here) and reads each consumer's gradient "
    "from grad_table, where it was stored once."
)


def algorithm_6_2(graph: Graph) -> tuple[list[float], dict[int, BackpropStep]]:
    """The engine's grad_table (aligned with ``graph.nodes``) and every iteration's terms, by position j."""
    steps: dict[int, BackpropStep] = {}
    table = backprop(graph, observe=lambda step: steps.__setitem__(step.j, step))
    return [table[v] for v in graph.nodes], steps


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
    """True if every edge's local derivative was evaluated exactly twice (the calls are all known)."""
    if count != 2 * graph.num_edges or len(calls) != count:
        return False
    times: dict[tuple[int, int], int] = {}
    for i, k in calls:
        times[i, k] = times.get((i, k), 0) + 1
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
    if failure_.node.split(" ")[0] == f"u{len(graph.nodes)}":
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
        failure_.mistake, failure_.book, failure_.hint = "forward-loop", "loop", LOOP
    return failure_


def _part(graph: Graph) -> tuple[dict[str, Any], Any]:
    """A graph's request and the judge of the solution's answer (Algorithm 6.2's grad_table the key)."""
    expected, steps = algorithm_6_2(graph)
    return graph_request(graph), _judge(graph, expected, steps)


def cases(seed: int) -> Iterator[Case]:
    """The graph cases (:func:`~lessons.exercises.cases.graph_cases`), each with Algorithm 6.2's answer,
    then the growth case on :func:`~lessons.exercises.cases.growth_chains`."""
    tally = Tally()
    for spec in graph_cases(seed=seed):
        z, _ = spec.build()
        graph = Graph(z)
        request, judge = _part(graph)
        counted, hooks = tally.add(judge, paths_stop(spec, graph, MISTAKES["paths"], _PATHS, _NEEDS))
        yield Case(
            spec.name,
            request,
            counted,
            graph=graph,
            what="backprop(G)",
            book="reverse",
            extra={"key_error": _key_error, **hooks},
            cpu=spec.cpu,
        )
    parts = [_part(Graph(spec.build()[0])) for spec in growth_chains()]
    yield growth_case(parts, tally, MISTAKES["growth"], "grad_table", "backprop(G)")
