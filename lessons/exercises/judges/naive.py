"""Exercise ``naive``: the naive chain rule of equation 6.53, every subexpression recomputed, counted.

The answer key is Algorithm 6.2's dz/dw (:func:`micrograph.backprop`) for the value, and figure 6.9's closed
forms (:func:`micrograph.families.expected_counts`) or the engine's path count
(:func:`micrograph.naive.naive_cost`) for the counts. How the exercise is judged, template and all, is
:data:`JUDGING`; its name and place are a row of :data:`lessons.exercises.judges.TABLE`.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.2, figure 6.9, equation 6.53.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from lessons.exercises import answers
from lessons.exercises.cases import random_dag, random_seeds
from lessons.exercises.exercise import Judging
from lessons.exercises.imports import Imports
from lessons.exercises.judges import mistakes
from lessons.exercises.judges.mistakes import Mistake, failure
from lessons.exercises.schema import plain
from lessons.exercises.tools import NAN_READ
from lessons.exercises.verdict import Case, Fail, close, decode, differ, graph_request, mutation_text, shown
from micrograph import backprop, naive_grad
from micrograph.engine import Value
from micrograph.families import chain, expected_counts, ladder
from micrograph.graph import Graph
from micrograph.naive import naive_cost

__all__ = ["JUDGING", "CODES", "MISTAKES", "cases"]

CODES: tuple[str, ...] = ("mutation", "wrong-value", "uncounted", "stored", "count")
"""The codes of the mistakes this judge gives, each a row of ``mistakes.toml``'s [naive] table."""

MISTAKES: dict[str, Mistake] = mistakes.of("naive", CODES)
"""The mistakes this exercise recognises."""

_VALUE_CASES: list[tuple[str, Callable[[], tuple[Value, Value]]]] = [
    ("a * a: one node takes the same parent twice", lambda: (lambda a: (a * a, a))(Value(1.5, label="a"))),
    (
        "b = a + a, c = b + b: a reused node",
        lambda: (lambda a: ((a + a) + (a + a), a))(Value(0.5, label="a")),
    ),
    (
        "relu(-w) + sin(w): a path whose local derivative is 0 is still a path",
        lambda: (lambda w: ((w * -1.0).relu() + w.sin(), w))(Value(0.5, label="w")),
    ),
]


def _random(s: int) -> tuple[Value, Value]:
    z, leaves = random_dag(s, n_ops=8)
    return z, leaves[0]


def _check_counts(family: str, d: int, counted: dict[str, int], edges: int, cost: dict[str, int]) -> None:
    """The counts against figure 6.9's closed forms for a family, else against the engine's naive_cost."""
    if family:
        want = expected_counts(family, d)
        want_local, want_re = want["naive_local_derivatives"], want["naive_recomputed"]
        source = f"figure 6.9's closed forms for the {family} of depth {d}"
    else:
        want_local, want_re = cost["local_derivatives"], cost["recomputed"]
        source = f"the naive rule's counts on this graph ({cost['paths']:,} path(s) from w to z)"
    local, recomputed = int(counted.get("local_derivatives", 0)), int(counted.get("evaluations", 0))
    if local == want_local and recomputed == want_re:
        return
    details = [
        f"{source}: {want_local:,} local derivative(s) (one per edge per path) and {want_re:,} recomputed "
        f"operation(s); yours: {local:,} and {recomputed:,}. Back-propagation would evaluate {edges:,} local "
        "derivative(s) and recompute nothing."
    ]
    if local == 0 and recomputed == 0:
        raise Fail(
            failure(
                MISTAKES["uncounted"],
                "nothing was counted: use tools.local_derivative and tools.evaluate, which count.",
                details=details,
            )
        )
    if recomputed < want_re and (recomputed == 0 or local == edges):
        raise Fail(
            failure(
                MISTAKES["stored"],
                "your naive rule stores values (or gradients) instead of recomputing them.",
                details=details,
            )
        )
    raise Fail(
        failure(
            MISTAKES["count"],
            f"the operation counts differ: {local:,} local derivatives and "
            f"{recomputed:,} recomputations, where the naive rule needs {want_local:,} and {want_re:,}.",
            details=details,
        )
    )


def _nan_read(case: Case, failure_: Any, error: dict[str, Any]) -> Any:
    """A tool given nan: the value of a node that is not a leaf, which holds nan here, was read."""
    if error.get("type") == "ValueError" and NAN_READ in str(error.get("message", "")):
        failure_.mistake, failure_.hint, failure_.book = "stored", MISTAKES["stored"].hint, "recompute"
        failure_.details = [
            "Here the nodes that are not leaves hold nan in place of their values: equation 6.53 recomputes "
            "each value from the leaves (tools.evaluate), and tools.local_derivative(u, k, args, out) takes "
            "those recomputed values. Without args and out it reads the stored ones."
        ]
    return failure_


def _judge(graph: Graph, w: Value, family: str, d: int) -> Any:
    want = backprop(graph)[w]
    cost = naive_cost(graph.output, w)

    def judge(answer: dict[str, Any]) -> None:
        changed = mutation_text(graph, answer.get("mutation") or [])
        if changed:
            raise Fail(failure(MISTAKES["mutation"], f"naive_grad(z, w) changed the graph: {changed}."))
        value = decode(answer.get("result"))
        if isinstance(value, float) and value != value and want == want:  # nan: a stored value was read
            raise Fail(
                failure(
                    MISTAKES["stored"],
                    "naive_grad(z, w) = nan: it read a value stored in a node that is not a leaf (its .data, "
                    "or tools.local_derivative(u, k) without args and out). Here those nodes hold nan: "
                    "equation 6.53 recomputes every value from the leaves.",
                )
            )
        if not close(value, want):
            shared = any(len([p for p in v.inputs if p.op is not None or p is w]) > 1 for v in graph.nodes)
            details = [
                "Equation 6.51's sum runs over every path from w to z; a node whose arguments both depend "
                "on w (a * a, sin(u) + cos(u)) starts two paths."
            ]
            raise Fail(
                failure(
                    MISTAKES["wrong-value"],
                    f"naive_grad(z, w) = {shown(value)}; dz/dw = {shown(want)}.",
                    details=details + differ(want, value),
                    book="sum" if shared else "recompute",
                    hint=MISTAKES["wrong-value"].hint if shared else "",
                    expected=want,
                    actual=value if isinstance(value, (int, float)) else shown(value),
                )
            )
        counted = answer.get("counts") or {}  # the tools' counts: nothing the solution reports counts
        _check_counts(family, d, counted, graph.num_edges, cost)

    return judge


def cases(seed: int) -> Iterator[Case]:
    """Figure 6.9's chain and ladder at several depths, small shared graphs, and random DAGs from the seed."""
    specs: list[tuple[str, Callable[[], tuple[Value, Value]], str, int]] = [
        (f"figure 6.9's chain, depth {d}", partial(chain, d), "chain", d) for d in (1, 3, 6)
    ]
    specs += [(name, build, "", 0) for name, build in _VALUE_CASES]
    specs += [
        (f"random DAG (seed {s}), with respect to x1", partial(_random, s), "", 0)
        for s in random_seeds(seed, 2)
    ]
    specs += [(f"the ladder, depth {d}: 2^{d} paths", partial(ladder, d), "ladder", d) for d in (1, 2, 4)]
    for title, build, family, d in specs:
        z, w = build()
        graph = Graph(z)
        request = {**graph_request(graph), "w": graph.index[w]}
        yield Case(
            title,
            request,
            _judge(graph, w, family, d),
            graph=graph,
            what="naive_grad(z, w)",
            book="recompute",
            extra={"exception": _nan_read},
            cpu=1.0,
        )


TEMPLATE = '''\
"""The naive chain rule of equation 6.53: dz/dw as a sum over paths, every
subexpression recomputed.

The book (section 6.5.2, figure 6.9): for x = f(w), y = f(x), z = f(y),
    dz/dw = f'(y) f'(x) f'(w)                (6.52: values stored;
                                              back-propagation)
          = f'(f(f(w))) f'(f(w)) f'(w)       (6.53: "f(w) is recomputed each
                                              time it is needed")

Write 6.53 for any graph: D(w) = 1, and for a node u that depends on w,
    D(u) = sum over the arguments x_k of u that depend on w of
           du/dx_k * D(x_k).
For each such argument k: recompute u's argument values from the leaves
(a leaf's value is leaf.data; every other value is recomputed with
tools.evaluate(node, argument_values)), recompute u itself
(out = tools.evaluate(u, args)), then evaluate du/dx_k once with
tools.local_derivative(u, k, args, out).
Read no .data of a node that is not a leaf.
Both tools count: the checker compares your counts with the closed forms for
figure 6.9's chain (d local derivatives, d(d + 1)/2 recomputations) and for a
ladder whose paths double at every level.

@SEE@
@CHECK@
"""
from lessons.exercises import tools


def naive_grad(z, w):
    """Return dz/dw, a number, by the naive chain rule (recursion is fine:
    these graphs are shallow)."""
    # TODO
    raise NotImplementedError
'''

JUDGING = Judging(
    template=TEMPLATE,
    cases=cases,
    answer=answers.Schema({"result": plain, "mutation": answers.GRAPH_MUTATION, "counts": answers.COUNTS}),
    imports=Imports.python("the naive chain rule in Python, with math and the counted tools"),
    reference=lambda: types.SimpleNamespace(naive_grad=naive_grad),  # equation 6.53
)
"""How the exercise is judged: the template, the judge (:func:`cases`, :data:`MISTAKES`), what a solution may
import (and micrograph's nodes and tools, which the import guard allows), micrograph's own naive_grad as the
reference."""
