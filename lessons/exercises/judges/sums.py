"""Algorithm 6.2's sums: the engine's grad_table with the terms of every sum, and which recognised mistake a
wrong entry is.

Each entry grad_table[u(j)] is a sum of one term per edge out of u(j) (consumer i, argument k,
grad_table[u(i)] × ∂u(i)/∂u(j)); :func:`algorithm_6_2` gives the engine's table with those terms, from its
observer. A wrong entry is recognised by comparing the student's number with the terms (one term, the first
consumer's, the sum less the second edge of ``a * a`` ...) and with the order of the local derivatives the
solution evaluated, never by running a second copy of the algorithm: :func:`which` names the mistake (a
code of :data:`lessons.exercises.judges.backprop.MISTAKES`) and the edges to mark, :func:`terms_text` writes
the sum out. backprop's judge and build_grad's (whose B must hold the same sums) both use them.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.2.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from lessons.exercises.drawing import Mark
from lessons.exercises.verdict import close, differ, node_name, shown
from micrograph import backprop
from micrograph.backprop import BackpropStep
from micrograph.graph import Graph

__all__ = ["algorithm_6_2", "terms_text", "which"]


def algorithm_6_2(graph: Graph) -> tuple[list[float], dict[int, BackpropStep]]:
    """The engine's grad_table (aligned with ``graph.nodes``) and every iteration's terms, by position j."""
    steps: dict[int, BackpropStep] = {}
    table = backprop(graph, observe=lambda step: steps.__setitem__(step.j, step))
    return [table[v] for v in graph.nodes], steps


def _forward_loop(calls: list[list[int]]) -> bool:
    """True if the solution's local derivatives were evaluated from u(1) upwards (the loop runs forward)."""
    targets = [i for i, _ in calls[:50] if i >= 0]
    return len(targets) >= 2 and targets[0] < targets[-1] and targets[0] == min(targets)


def terms_text(j: int, terms: list[Any], e: float, actual: Any) -> list[str]:
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
    return lines + differ(e, actual)


def which(
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


def _missing_terms(terms: list[Any], actual: Any) -> list[Any]:
    """The terms left out, if the student's number is the sum of a proper subset of them (the largest one)."""
    if not isinstance(actual, (int, float)) or not terms or len(terms) > 12:
        return []
    for size in range(len(terms) - 1, -1, -1):
        for kept in itertools.combinations(range(len(terms)), size):
            if close(actual, math.fsum(terms[i].product for i in kept)):
                return [t for i, t in enumerate(terms) if i not in kept]
    return []
