"""Exercise ``forward``: Algorithm 6.1, forward propagation over u(1)..u(n).

The solution gets G (its nodes still holding the values of an earlier pass) and new inputs x; the answer key
is :func:`micrograph.forward.evaluate` at x. How the exercise is judged, template and all, is :data:`JUDGING`;
its name and place are a row of :data:`lessons.exercises.judges.TABLE`.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.1.
"""

from __future__ import annotations

import math
import types
from collections.abc import Iterator
from typing import Any

from lessons.exercises import answers
from lessons.exercises.cases import Case as GraphCase
from lessons.exercises.cases import graph_cases
from lessons.exercises.drawing import Mark
from lessons.exercises.exercise import Judging
from lessons.exercises.imports import Imports
from lessons.exercises.judges import mistakes
from lessons.exercises.judges.mistakes import Mistake, failure
from lessons.exercises.judges.scaling import growth_mistake, measured_cases
from lessons.exercises.verdict import (
    Case,
    Fail,
    close,
    decode,
    differ,
    draw,
    graph_request,
    mutation_text,
    reported_name,
    shown,
)
from micrograph.errors import DomainError
from micrograph.forward import evaluate
from micrograph.graph import Graph, node_name

__all__ = ["JUDGING", "CODES", "MISTAKES", "cases"]


def _new_inputs(spec: GraphCase) -> tuple[Graph, list[float], list[float]]:
    """G, new input values x (variables moved by 10 %, constants kept), and the engine's u(1)..u(n) at x."""
    for factor in (1.1, 0.9, 1.0):
        z, _ = spec.build()
        graph = Graph(z)
        x = [v.data if v.is_constant else v.data * factor for v in graph.nodes[: graph.n_inputs]]
        try:
            return graph, x, evaluate(graph, x)
        except DomainError:
            continue
    raise AssertionError(f"no input values in the domain for {spec.name}")  # the cases are built inside


CODES: tuple[str, ...] = (
    "mutation", "not-a-list", "skip-u1", "inputs", "skip-first", "not-computed", "stale", "argument-order",
    "wrong-value", "none-read", "paths",
)  # fmt: skip
"""The codes of the mistakes this judge gives, each a row of ``mistakes.toml``'s [forward] table."""

MISTAKES: dict[str, Mistake] = {**mistakes.of("forward", CODES), "growth": growth_mistake()}
"""The mistakes this exercise recognises."""


def _fail(code: str, headline: str, **kw: Any) -> Fail:
    return Fail(failure(MISTAKES[code], headline, **kw))


def _compare(graph: Graph, x: list[float], u: Any, expected: list[float], stale: list[float]) -> None:
    n = len(graph.nodes)
    if not isinstance(u, list) or len(u) != n:
        size = f"a list of {len(u)}" if isinstance(u, list) else shown(u)
        raise _fail(
            "not-a-list",
            f"forward(G, x) returned {size}; it must return the list u of all n = {n} values u(1)..u(n).",
        )
    for i in range(n):
        if not close(u[i], expected[i]):
            _wrong(graph, x, u, expected, stale, i)


def _wrong(
    graph: Graph, x: list[float], u: list[Any], expected: list[float], stale: list[float], i: int
) -> None:
    e, a = expected[i], u[i]
    n, n_i = len(graph.nodes), graph.n_inputs
    v = graph.nodes[i]
    name = reported_name(graph, i)
    kw: dict[str, Any] = {
        "node": name,
        "expected": e,
        "actual": a if isinstance(a, (int, float)) else shown(a),
    }
    picture: dict[str, Any] = {
        "wrong": i,
        "expected": shown(e),
        "actual": shown(a),
        "data": expected,
        "grads": [None] * n,
        "title": f"forward: {name} is the first wrong value",
        "show_data": False,
    }
    if i < n_i:
        code = "skip-u1" if i == 0 and a is None else "inputs"
        headline = (
            "u(1), the first input, was never set: u[0] is None."
            if code == "skip-u1"
            else f"u[{i}] = {shown(a)}, but the input x[{i}] is {shown(x[i])}."
        )
        raise _fail(code, headline, details=differ(e, a), **kw, **draw(graph, **picture))
    pa = list(graph.parents[i])
    picture["marks"] = [Mark(j, i, k, f"{node_name(j + 1)} = {shown(expected[j])}") for k, j in enumerate(pa)]
    formula = f"{v.op.name}({', '.join(node_name(j + 1) for j in pa)})"
    details = [
        f"{name} = {formula} = {v.op.name}({', '.join(shown(expected[j]) for j in pa)}) = {shown(e)}; "
        f"yours is {shown(a)}."
    ]
    details += differ(e, a)
    if a is None:
        code = "skip-first" if i == n_i else "not-computed"
        raise _fail(
            code, f"u[{i}], {name}, was never computed.", details=details, **kw, **draw(graph, **picture)
        )
    if close(a, stale[i]) and not close(e, stale[i]):
        raise _fail(
            "stale",
            f"{name} is {shown(a)}, its value before this pass: your code read the stored node.data.",
            details=details,
            **kw,
            **draw(graph, **picture),
        )
    if len(pa) == 2:
        try:
            swapped = v.op.f(expected[pa[1]], expected[pa[0]])
        except (ArithmeticError, ValueError):
            swapped = math.nan
        if close(a, swapped):
            raise _fail(
                "argument-order",
                f"{name} = {formula} came out as "
                f"{v.op.name}({node_name(pa[1] + 1)}, {node_name(pa[0] + 1)}): the arguments are swapped.",
                details=details,
                **kw,
                **draw(graph, **picture),
            )
    raise _fail(
        "wrong-value",
        f"{name} is wrong: expected {shown(e)}, yours {shown(a)}.",
        details=details,
        **kw,
        **draw(graph, **picture),
    )


def _none_read(case: Case, failure_: Any, error: dict[str, Any]) -> Any:
    """An exception on None (a value of u read before it was set): u(1) skipped, or a node too early."""
    if error.get("type") == "TypeError" and "NoneType" in str(error.get("message", "")):
        failure_.details = [
            "A value of u was still None when a node read it: an input that was never set "
            "(u(1), the first input, is position 0: a loop from 1 skips it), or a node computed "
            "before its parents."
        ]
        failure_.mistake, failure_.hint, failure_.book = "none-read", MISTAKES["none-read"].hint, "inputs"
    return failure_


def _judge(graph: Graph, x: list[float], expected: list[float], stale: list[float]) -> Any:
    def judge(answer: dict[str, Any]) -> None:
        changed = mutation_text(graph, answer.get("mutation") or [])
        if changed:
            raise _fail(
                "mutation",
                f"forward(G, x) changed the graph: {changed}.",
                details=[
                    "The nodes are the graph G, shared with whoever called you; the values of this pass "
                    "belong in "
                    "the list u that you return."
                ],
            )
        _compare(graph, x, decode(answer.get("result")), expected, stale)

    return judge


def _part(spec: GraphCase, number: int) -> tuple[Graph, dict[str, Any], Any, dict[str, Any]]:
    """A case's G, its request (G and new inputs), the judge of the solution's answer, and the case's own
    hook (an exception on None read as a value never set)."""
    graph, x, expected = _new_inputs(spec)
    stale = [v.data for v in graph.nodes]
    request = {**graph_request(graph), "x": x}
    return graph, request, _judge(graph, x, expected, stale), {"exception": _none_read}


def cases(seed: int) -> Iterator[Case]:
    """The graph cases with inputs moved by 10 %; the answer key is Algorithm 6.1 at those inputs. Then the
    growth case on :func:`~lessons.exercises.cases.growth_graphs`."""
    return measured_cases(
        graph_cases(seed=seed), _part, MISTAKES, what="forward(G, x)", book="order", right="values"
    )


TEMPLATE = '''\
"""Algorithm 6.1, forward propagation over the ordered node list u(1)..u(n).

The book (section 6.5.3, Algorithm 6.1):

@ALGORITHM_6_1@

Here positions are 0-based: G.nodes[0] is u(1), G.nodes[n - 1] is u(n);
G.n_inputs is n_i.
G.parents[i] is the tuple of positions j of the parents of G.nodes[i], in
argument order.
G.nodes[i].op.f is f(i) on numbers: G.nodes[i].op.f(2.0, 3.0) for a
two-argument operation.
Return the whole list u (the checker reads every u(i)), and leave the nodes
as they are: do not assign node.data (the graph is shared with whoever
called you).

@SEE@
@CHECK@
"""


def forward(G, x):
    """Return the list u of the values of u(1)..u(n) for the inputs x
    (a list of n_i numbers)."""
    n = len(G.nodes)
    u = [None] * n
    # TODO: lines 1-3, the inputs.
    # TODO: lines 4-7, every other node in order, from the values in u.
    raise NotImplementedError
'''

JUDGING = Judging(
    template=TEMPLATE,
    cases=cases,
    answer=answers.ON_G,
    imports=Imports.python("Algorithm 6.1 in Python, with math or numpy", "numpy"),
    reference=lambda: types.SimpleNamespace(forward=lambda G, x: evaluate(G, x)),  # Algorithm 6.1
)
"""How the exercise is judged: the template, the judge (:func:`cases`, :data:`MISTAKES`), what a solution may
import (and micrograph's nodes, which the import guard allows), micrograph's own forward pass as the
reference."""
