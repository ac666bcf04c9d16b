"""Exercise ``backprop``: Algorithm 6.2, the grad_table, one local derivative per edge.

The answer key is :func:`micrograph.backprop` with its observer, which gives the terms of every sum
(consumer i, argument k, grad_table[u(i)], ∂u(i)/∂u(j)); a wrong entry is diagnosed by comparing the
student's number with those terms (one term, the first consumer's, the sum less the second edge of
``a * a`` ...), never by running a second copy of the algorithm. The mistakes it recognises are the rows of
:data:`MISTAKES`.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.2.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from typing import Any

from lessons.exercises.cases import graph_cases, growth_chains
from lessons.exercises.drawing import Mark
from lessons.exercises.imports import HARMLESS, Imports
from lessons.exercises.judge import (
    Case,
    Fail,
    Foreign,
    NodeRef,
    close,
    decode,
    differ,
    draw,
    graph_request,
    mutation_text,
    node_name,
    shown,
)
from lessons.exercises.judges.mistakes import Mistake, failure
from lessons.exercises.judges.scaling import GROWTH_HINT, Tally, growth_case, paths_stop
from lessons.exercises.report import Failure
from micrograph import backprop
from micrograph.backprop import BackpropStep
from micrograph.graph import Graph

__all__ = ["cases", "MISTAKES", "IMPORTS", "algorithm_6_2", "diagnose_entry"]

_LOOP = "for j = n − 1 down to 1: in Python, range(n - 2, -1, -1) over 0-based positions."
_REPEATED = (
    "loop over the argument positions k of each consumer (for k, p in enumerate(C.inputs) if p is "
    "node), not over the distinct consumers only."
)

MISTAKES: dict[str, Mistake] = {
    m.code: m
    for m in [
        Mistake(
            "seed", "grad_table[u(n)] ← 1 before the loop.", "loop", words="grad_table[u(n)] not started at 1"
        ),
        Mistake("forward-loop", _LOOP, "loop", words="the loop runs from u(1) upwards"),
        Mistake(
            "skip-u1",
            "the loop runs down to j = 1 inclusive: in Python, down to position 0 "
            "(range(..., -1, -1), not range(..., 0, -1)).",
            "loop",
            words="the loop stops before u(1)",
        ),
        Mistake(
            "missing-entry",
            "Algorithm 6.2 computes an entry for every node of G.",
            "loop",
            words="a node left without an entry",
        ),
        Mistake("repeated-argument", _REPEATED, "sum", words="one term for a parent used twice"),
        Mistake(
            "first-consumer",
            "sum over every consumer: G.get_consumers(node) lists all of them, and each "
            "contributes a term per edge.",
            "sum",
            words="the first consumer's terms only",
        ),
        Mistake(
            "overwrite",
            "add every consumer's term into the entry (+=, or sum()), do not assign each in turn.",
            "sum",
            words="terms overwritten, not added",
        ),
        Mistake(
            "missing-term",
            "sum over every edge out of u(j): every consumer, every argument position.",
            "loop",
            words="some edges' terms left out",
        ),
        Mistake(
            "sign",
            "the terms are added; a minus sign belongs in a local derivative (∂(a − b)/∂b = −1), "
            "which tools.local_derivative already gives.",
            "loop",
            words="terms added with a wrong sign",
        ),
        Mistake("wrong-sum", "", "loop", words="a wrong sum"),
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
}
"""The mistakes this exercise recognises: {code: the hint and the book's sentence}."""

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


def _forward_loop(calls: list[list[int]]) -> bool:
    """True if the solution's local derivatives were evaluated from u(1) upwards (the loop runs forward)."""
    targets = [i for i, _ in calls[:50] if i >= 0]
    return len(targets) >= 2 and targets[0] < targets[-1] and targets[0] == min(targets)


def _terms_text(j: int, terms: list[Any], e: float, actual: Any) -> list[str]:
    u_j = f"u{j + 1}"
    lines = [
        f"grad_table[{u_j}] = Σ_i grad_table[u(i)] × ∂u(i)/∂{u_j} has {len(terms)} term(s), one per edge "
        f"out of {u_j}:"
    ]
    for t in terms:
        lines.append(
            f"  u{t.i + 1} takes {u_j} as argument {t.k + 1}: grad_table[u{t.i + 1}] × ∂u{t.i + 1}/∂{u_j} "
            f"= {shown(t.grad_i)} × {shown(t.derivative)} = {shown(t.product)}"
        )
    lines.append(f"expected sum {shown(e)}; yours {'no entry' if actual is None else shown(actual)}.")
    return lines + ([differ(e, actual)] if differ(e, actual) else [])


def _which(
    graph: Graph, j: int, actual: Any, e: float, terms: list[Any], calls: list[list[int]] | None
) -> tuple[str, str, list[Mark] | None]:
    """The recognised mistake of a wrong entry: (code, headline, marks or None for the default marks)."""
    name = node_name(graph, j)
    n = len(graph.nodes)
    if j == n - 1:
        return "seed", f"grad_table[u(n)] = {shown(actual)}: it must start at 1 (dz/dz = 1).", None
    if calls is not None and _forward_loop(calls):
        return (
            "forward-loop",
            f"grad_table[{name}] is wrong, and your loop evaluated the local derivatives from u(1) upwards.",
            None,
        )
    if actual is None:
        if j == 0:
            return "skip-u1", "grad_table has no entry for u(1): the loop stops one node early.", None
        return "missing-entry", f"grad_table has no entry for {name}.", None
    evaluated = {(i, k) for i, k in calls or []}
    for t in terms:  # u(i) takes u(j) twice and the second edge was never evaluated
        twice = t.k == 1 and any(s.i == t.i and s.k == 0 for s in terms)
        if twice and close(actual, e - t.product) and (calls is None or (t.i, 1) not in evaluated):
            return (
                "repeated-argument",
                f"grad_table[{name}] misses the term of the second edge from "
                f"u{j + 1} into u{t.i + 1}: u{t.i + 1} takes u{j + 1} twice (as in a * a), so the sum has a "
                "term for each.",
                [Mark(j, t.i, t.k, f"{t.product:.4g} missing")],
            )
    consumers = list(dict.fromkeys(t.i for t in terms))
    if len(consumers) > 1:
        first = [t for t in terms if t.i == consumers[0]]
        others = [t for t in terms if t.i != consumers[0]]
        only_first = close(actual, math.fsum(t.product for t in first))
        if only_first and (calls is None or all((t.i, t.k) not in evaluated for t in others)):
            return (
                "first-consumer",
                f"grad_table[{name}] holds only the term(s) of its first consumer, "
                f"u{consumers[0] + 1}: {len(consumers) - 1} other consumer(s) were never used.",
                [Mark(j, t.i, t.k, f"{t.product:.4g} missing") for t in others],
            )
    if len(terms) > 1:
        kept = [t for t in terms if close(actual, t.product)]
        others = [t for t in terms if kept and t is not kept[-1]]
        if kept and (not calls or all((t.i, t.k) in evaluated for t in others)):
            lost = "the other term was" if len(terms) == 2 else f"the other {len(terms) - 1} were"
            marks = [Mark(j, t.i, t.k, f"{t.product:.4g} lost") for t in others]
            marks.append(Mark(j, kept[-1].i, kept[-1].k, f"{kept[-1].product:.4g} kept"))
            return (
                "overwrite",
                f"grad_table[{name}] holds one term of its sum, {shown(actual)}: {lost} overwritten.",
                marks,
            )
    missing = _missing_terms(terms, actual)
    if missing:
        edges = ", ".join(f"u{t.i + 1} (argument {t.k + 1})" for t in missing)
        return (
            "missing-term",
            f"grad_table[{name}] misses {len(missing)} of its {len(terms)} terms: those of "
            f"the edges into {edges}.",
            [Mark(j, t.i, t.k, f"{t.product:.4g} missing") for t in missing],
        )
    if terms and close(actual, -e):
        return "sign", f"grad_table[{name}] has the wrong sign.", None
    return "wrong-sum", f"grad_table[{name}] is wrong: expected {shown(e)}, yours {shown(actual)}.", None


def diagnose_entry(
    graph: Graph,
    j: int,
    actual: Any,
    expected: list[float],
    steps: dict[int, BackpropStep],
    *,
    what: str,
    calls: list[list[int]] | None,
) -> Fail:
    """The :class:`Fail` for a wrong grad_table[u(j)]: the terms of its sum, the one that differs, a hint.

    Args:
        graph: G. j: the 0-based position of the first wrong entry from u(n) down.
        actual: the solution's entry (None: no entry). expected: the engine's grad_table by position.
        steps: Algorithm 6.2's iterations by position (their terms). what: the function's name.
        calls: the (consumer position, k) of the solution's first local-derivative evaluations, or None
            when they are not known (build_grad).
    """
    e = expected[j]
    terms = list(steps[j].terms) if j in steps else []
    code, headline, marks = _which(graph, j, actual, e, terms, calls)
    lines = _terms_text(j, terms, e, actual)
    if code == "forward-loop":
        lines.append(
            "When a node's entry is computed, the entries of its consumers (which come later in "
            "u(1)..u(n)) must already be in the table: the loop runs from u(n) down."
        )
    default = [Mark(j, t.i, t.k, f"{t.grad_i:.4g} × {t.derivative:.4g} = {t.product:.4g}") for t in terms]
    name = node_name(graph, j)
    picture = draw(
        graph,
        wrong=j,
        expected=shown(e),
        actual=shown(actual),
        grads=expected,
        marks=default if marks is None else marks,
        title=f"{what}: grad_table[{name}] is the first wrong entry from u(n) down. Red edges: its terms. "
        "grad: the right values",
    )
    got = actual if isinstance(actual, (int, float)) else shown(actual)
    return Fail(
        failure(
            MISTAKES[code],
            headline,
            details=[] if code == "seed" else lines,
            node=name,
            expected=e,
            actual=got,
            **picture,
        )
    )


def _missing_terms(terms: list[Any], actual: Any) -> list[Any]:
    """The terms left out, if the student's number is the sum of a proper subset of them (the largest one)."""
    if not isinstance(actual, (int, float)) or not terms or len(terms) > 12:
        return []
    for size in range(len(terms) - 1, -1, -1):
        for kept in itertools.combinations(range(len(terms)), size):
            if close(actual, math.fsum(terms[i].product for i in kept)):
                return [t for i, t in enumerate(terms) if i not in kept]
    return []


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
        failure_.mistake, failure_.book, failure_.hint = "forward-loop", "loop", _LOOP
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
