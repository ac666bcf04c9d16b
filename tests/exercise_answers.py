"""The engine's right answer to a case as the student's side sends it, and the changes tests make to it.

tests/test_exercise_answers.py and tests/test_exercise_answers_json.py forge answers from these: the
judge's schemas must accept the right one (:func:`right`) and turn every change into that case's failure.
"""

from __future__ import annotations

import json
import types
from collections.abc import Callable
from typing import Any

from exercise_solutions import CORRECT

from lessons.exercises import given as harness
from lessons.exercises import judges
from lessons.exercises.judges.derivatives import DERIVATIVE_RULES
from lessons.exercises.report import CaseResult, Failure, Report
from lessons.exercises.verdict import Case
from micrograph import backprop, grad
from micrograph.forward import evaluate
from micrograph.naive import naive_cost
from micrograph.ops import OPS

HUGE = 10**400
"""An integer no float holds."""


def first(name: str, index: int = 0) -> Case:
    """Case ``index`` of an exercise (seed 0)."""
    for i, case in enumerate(judges.cases(name, 0)):
        if i == index:
            return case
    raise IndexError(index)


def _mlp_answer(request: dict[str, Any]) -> Any:
    """The correct solution's (grad_W, grad_b), run here on the net the child would build."""
    namespace: dict[str, Any] = {}
    exec(CORRECT["mlp_backward"], namespace)
    acts = [None if a is None else OPS[a] for a in request["activations"]]

    def f_prime(k: int, a: float, h: float) -> float:
        op = acts[k]
        return 1.0 if op is None else float(op.local_derivative(0, (a,), h))

    keys = ("l", "W", "b", "a", "h", "g", "lam")
    net = types.SimpleNamespace(**{k: request[k] for k in keys}, f_prime=f_prime)
    return namespace["backward_mlp"](net)


def right(case: Case) -> dict[str, Any]:
    """The right answer to a case as the child sends it (plain data made by the child's own converter)."""
    request, graph = case.request, case.graph
    assert case.exercise is not None
    name = case.exercise.name
    if name == "derivatives":
        opname, k = next((op, k) for f, op, k in DERIVATIVE_RULES if f == request["function"])
        derivative = OPS[opname].local_derivative
        return {"ok": True, "result": [float(derivative(k, tuple(a), out)) for a, out in request["points"]]}
    if name == "mlp_backward":
        return {"ok": True, "result": harness.Plain({})(_mlp_answer(request)), "mutation": []}
    assert graph is not None
    convert = harness.Plain({id(v): j for j, v in enumerate(graph.nodes)})
    if name == "topo":
        rid = {pos: r for r, pos in case.extra["ref_to_pos"].items()}
        return {"ok": True, "result": [{"node": rid[j]} for j in range(len(graph.nodes))], "mutation": []}
    if name == "forward":
        return {"ok": True, "result": evaluate(graph, request["x"]), "mutation": []}
    if name == "backprop":
        counts = {"local_derivatives": graph.num_edges, "evaluations": 0}
        return {"ok": True, "result": convert(backprop(graph)), "mutation": [], "counts": counts, "calls": []}
    if name == "naive":
        w = graph.nodes[request["w"]]
        cost = naive_cost(graph.output, w)
        counts = {"local_derivatives": cost["local_derivatives"], "evaluations": cost["recomputed"]}
        value = backprop(graph)[w]
        return {"ok": True, "result": value, "mutation": [], "counts": counts, "reported": None}
    assert name == "build_grad"
    results = grad(graph.output, [graph.nodes[j] for j in request["targets"]])
    B = harness.records_of_B(graph, results)
    return {
        "ok": True,
        "result": [B["ref"](r) for r in results],
        "entries": [[j, B["ref"](r)] for j, r in zip(request["targets"], results)],
        "B": B["records"],
        "seed_kept": True,
        "calls": len(results),
        "mutation": [],
    }


def shown_to_the_user(failure: Failure) -> str:
    """The report of one failed case as text, and its JSON read back: what a student and a teacher see."""
    case = CaseResult(failure.case, False, 0.0, 1.0, failure.headline, failure.mistake)
    report = Report("backprop", "backprop", [case], failure, seed=0)
    json.loads(report.to_json())
    return " ".join(report.text().split())  # the lines as wrapped, joined again


def change(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    """A change to an answer: the item at ``path`` set to ``value`` (:data:`DELETE`: removed)."""

    def changed(answer: dict[str, Any]) -> None:
        where: Any = answer
        for part in path[:-1]:
            where = where[part]
        if value is DELETE:
            del where[path[-1]]
        else:
            where[path[-1]] = value

    return changed


DELETE = object()
"""Remove the field instead of setting it."""
