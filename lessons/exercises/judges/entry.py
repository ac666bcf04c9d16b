"""A wrong grad_table entry diagnosed: the terms of its sum, the mistake it is, the hint and a drawing.

The exercises ``backprop`` and ``build_grad`` both compute Algorithm 6.2's grad_table (build_grad as B's
values), so a wrong entry of either is diagnosed here. The mistakes of a sum are the catalogue of
:mod:`viz.mistakes`, shared with the explorer's predict mode: an entry is named by the first of the
catalogue's wrong entries whose number it is (to :data:`~lessons.exercises.judge.TOLERANCE`) and which the
solution's own evaluations of local derivatives, when known, do not contradict (a term "overwritten" was
evaluated; a consumer "never used" was not). The rows of ``mistakes.toml``'s ``[entry]`` give each
mistake its hint and the book's sentence; its code and words are the catalogue's, so the report, a class
report and the explorer name the same mistake the same way.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.2.
"""

from __future__ import annotations

from typing import Any

from lessons.exercises.drawing import Mark
from lessons.exercises.judges import mistakes
from lessons.exercises.judges.mistakes import Mistake, failure
from lessons.exercises.verdict import Fail, close, differ, draw, reported_name, shown
from micrograph import backprop
from micrograph.backprop import BackpropStep, Term
from micrograph.graph import Graph, node_name
from viz.mistakes import ENTRY_MISTAKES, Wrong, distinct, wrong_entries
from viz.narration import REPORT, Numbers, iteration_text

__all__ = ["CODES", "ROWS", "algorithm_6_2", "diagnose_entry"]


def algorithm_6_2(graph: Graph) -> tuple[list[float], dict[int, BackpropStep]]:
    """The engine's grad_table (aligned with ``graph.nodes``) and every iteration's terms, by position j."""
    steps: dict[int, BackpropStep] = {}
    table = backprop(graph, observe=lambda step: steps.__setitem__(step.j, step))
    return [table[v] for v in graph.nodes], steps


CODES: tuple[str, ...] = ("forward-loop", "skip-u1", "missing-entry", *ENTRY_MISTAKES)
"""The codes of the mistakes of an entry and its loop, each a row of ``mistakes.toml``'s [entry] table."""

ROWS: dict[str, Mistake] = mistakes.of("entry", CODES, ENTRY_MISTAKES)
"""The mistakes of a grad_table entry and of the loop that fills it, {code: row}: the rows of
``mistakes.toml``'s ``[entry]``, the sum's in :data:`viz.mistakes.ENTRY_MISTAKES`' order and with its
words."""


def _forward_loop(graph: Graph, calls: list[list[int]]) -> bool:
    """True if the solution's local derivatives were evaluated from u(1) upwards (the loop runs forward).

    Each evaluation ∂u(i)/∂u(j) serves the entry of u(j), the parent: from u(n) down, the first ones serve
    falling j; a forward loop's first ones rise from its lowest j. (The consumers u(i) alone do not tell:
    a loop from u(n) down that leaves out some terms can meet rising consumers.)
    """
    parents = graph.parents
    served = [parents[i][k] for i, k in calls[:50] if 0 <= i < len(parents) and k < len(parents[i])]
    return len(served) >= 2 and served[0] < served[-1] and served[0] == min(served)


def _terms_text(graph: Graph, j: int, terms: list[Term], e: float, actual: Any) -> list[str]:
    """The iteration as the lesson and the pages say it (:func:`viz.narration.iteration_text`), a line a
    term, its numbers to a report's 10 digits; then the solution's entry beside the engine's."""
    nodes = graph.nodes
    names = {v: node_name(p + 1) for p, v in enumerate(nodes)}
    grads: list[float | None] = [None] * len(nodes)
    for t in terms:
        grads[t.i] = t.grad_i
    grads[j] = e
    numbers = Numbers([], grads, {(t.i, t.k): t.derivative for t in terms}, write=shown)
    said = iteration_text(j, [(t.i, t.k) for t in terms], graph, names, numbers, REPORT)
    lines = [line for line in said.split("\n") if line]
    lines.append(f"expected {shown(e)}; yours {'no entry' if actual is None else shown(actual)}.")
    return lines + differ(e, actual)


def _fits(wrong: Wrong, terms: list[Term], calls: list[list[int]] | None) -> bool:
    """Whether the solution's evaluations of local derivatives (None: not known) agree with the mistake."""
    changed = [(terms[t].i, terms[t].k) for t in wrong.changed()]
    evaluated = {(i, k) for i, k in calls or []}
    if wrong.code in ("repeated-argument", "first-consumer"):  # the terms left out were never evaluated
        return calls is None or all(edge not in evaluated for edge in changed)
    if wrong.code == "overwrite":  # the terms lost were evaluated, then overwritten
        return not calls or all(edge in evaluated for edge in changed)
    return True


def _said(wrong: Wrong, j: int, name: str, terms: list[Term], actual: Any) -> tuple[str, list[Mark] | None]:
    """The headline of a recognised mistake of the sum, and the edges to mark (None: every term's)."""
    changed = [terms[t] for t in wrong.changed()]
    missing = [Mark(j, t.i, t.k, f"{t.product:.4g} missing") for t in changed]
    code = wrong.code
    uj = node_name(j + 1)
    if code == "repeated-argument":
        ui = node_name(changed[0].i + 1)
        return (
            f"grad_table[{name}] misses the term of the second edge from {uj} into {ui}: "
            f"{ui} takes {uj} twice (as in a * a), so the sum has a term for each.",
            missing,
        )
    if code == "first-consumer":
        first = node_name(terms[0].i + 1)  # the first consumer
        consumers = list(dict.fromkeys(t.i for t in terms))
        return (
            f"grad_table[{name}] holds only the term(s) of its first consumer, {first}: "
            f"{len(consumers) - 1} other consumer(s) were never used.",
            missing,
        )
    if code == "overwrite":
        (kept,) = [t for x, t in enumerate(terms) if x not in wrong.changed()]
        lost = "the other term was" if len(terms) == 2 else f"the other {len(terms) - 1} were"
        marks = [Mark(j, t.i, t.k, f"{t.product:.4g} lost") for t in changed]
        marks.append(Mark(j, kept.i, kept.k, f"{kept.product:.4g} kept"))
        return f"grad_table[{name}] holds one term of its sum, {shown(actual)}: {lost} overwritten.", marks
    if code == "missing-term":
        edges = ", ".join(f"{node_name(t.i + 1)} (argument {t.k + 1})" for t in changed)
        return (
            f"grad_table[{name}] misses {len(changed)} of its {len(terms)} terms: those of the edges into "
            f"{edges}.",
            missing,
        )
    if code in ("no-local-derivative", "no-grad-factor"):
        local = code == "no-local-derivative"
        marks = [
            Mark(j, t.i, t.k, f"{t.grad_i if local else t.derivative:.4g}, not {t.product:.4g}")
            for t in changed
        ]
        d = f"the local derivative ∂u(i)/∂{uj}"
        if len(changed) > 1:
            alone, left = ("grad_table[u(i)]", d) if local else (d, "the factor grad_table[u(i)]")
            return f"every term of grad_table[{name}] is {alone} alone: {left} is missing from each.", marks
        t = changed[0]
        ui = node_name(t.i + 1)
        d = f"the local derivative ∂{ui}/∂{uj}"
        number, left = (t.grad_i, d) if local else (t.derivative, f"its factor grad_table[{ui}]")
        return (
            f"grad_table[{name}]'s term through {ui} (argument {t.k + 1}) is {shown(number)} instead of "
            f"{shown(t.product)}: {left} is missing.",
            marks,
        )
    return f"grad_table[{name}] has the wrong sign.", None  # sign, the one row left


BPROP_LAST = ("no-local-derivative",)
"""The mistakes a sum of ``op.bprop``'s terms can hardly make (the rule's local derivative is inside
``bprop``), tried last for build_grad."""


def _which(
    graph: Graph,
    j: int,
    actual: Any,
    e: float,
    terms: list[Term],
    calls: list[list[int]] | None,
    last: tuple[str, ...] = (),
) -> tuple[str, str, list[Mark] | None]:
    """The recognised mistake of a wrong entry: (code, headline, marks or None for the default marks); the
    catalogue's mistakes are tried in its order, those of ``last`` after the others."""
    name = reported_name(graph, j)
    if j == len(graph.nodes) - 1:
        return "seed", f"grad_table[u(n)] = {shown(actual)}: it must start at 1 (dz/dz = 1).", None
    if calls is not None and _forward_loop(graph, calls):
        return (
            "forward-loop",
            f"grad_table[{name}] is wrong, and your loop evaluated the local derivatives from u(1) upwards.",
            None,
        )
    if actual is None:
        if j == 0:
            return "skip-u1", "grad_table has no entry for u(1): the loop stops one node early.", None
        return "missing-entry", f"grad_table has no entry for {name}.", None
    for wrong in sorted(wrong_entries([(t.i, t.k) for t in terms]), key=lambda w: w.code in last):
        if wrong.uses is not None and close(actual, wrong.value(terms)) and _fits(wrong, terms, calls):
            return (wrong.code, *_said(wrong, j, name, terms, actual))
    return "wrong-sum", f"grad_table[{name}] is wrong: expected {shown(e)}, yours {shown(actual)}.", None


def _also(code: str, actual: Any, terms: list[Term], calls: list[list[int]] | None) -> list[str]:
    """The other mistakes of the catalogue whose entry is the same number (each recipe once, as the
    explorer says them), that the evaluations do not contradict: one line naming each, or none."""
    rows = distinct(wrong_entries([(t.i, t.k) for t in terms]))
    fit = [
        w.code
        for w in rows
        if w.uses is not None and close(actual, w.value(terms)) and _fits(w, terms, calls)
    ]
    return [
        f"The same number is what another mistake gives too: {other} ({ENTRY_MISTAKES[other]})."
        for other in dict.fromkeys(fit)
        if other != code
    ]


def _per_consumer(terms: list[Term]) -> list[Term]:
    """The terms as ``op.bprop`` gives them: one per consumer, the sum of its argument positions' terms
    (``a + a``: one term 2 × (1 + 1)), at the first position."""
    merged: dict[int, Term] = {}
    for t in terms:
        m = merged.get(t.i)
        merged[t.i] = (
            t
            if m is None
            else m._replace(derivative=m.derivative + t.derivative, product=m.product + t.product)
        )
    return list(merged.values())


def diagnose_entry(
    graph: Graph,
    j: int,
    actual: Any,
    expected: list[float],
    steps: dict[int, BackpropStep],
    *,
    what: str,
    calls: list[list[int]] | None,
    bprop: bool = False,
) -> Fail:
    """The :class:`Fail` for a wrong grad_table[u(j)]: the terms of its sum, the mistake it is, a hint.

    Args:
        graph: G. j: the 0-based position of the first wrong entry from u(n) down.
        actual: the solution's entry (None: no entry). expected: the engine's grad_table by position.
        steps: Algorithm 6.2's iterations by position (their terms). what: the function's name.
        calls: the (consumer position, k) of the solution's first local-derivative evaluations, or None
            when they are not known (build_grad).
        bprop: the solution's terms come from ``op.bprop`` (build_grad): one term per consumer, the sum
            over the argument positions where the node stands, so the mistakes are told apart on those, and
            one that leaves out the local derivative (inside ``bprop``) is named last.

    Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.2.
    """
    e = expected[j]
    terms = list(steps[j].terms) if j in steps else []
    judged = _per_consumer(terms) if bprop else terms
    code, headline, marks = _which(graph, j, actual, e, judged, calls, BPROP_LAST if bprop else ())
    lines = _terms_text(graph, j, terms, e, actual) + (
        _also(code, actual, judged, calls) if code in ENTRY_MISTAKES else []
    )
    if code == "forward-loop":
        lines.append(
            "When a node's entry is computed, the entries of its consumers (which come later in "
            "u(1)..u(n)) must already be in the table: the loop runs from u(n) down."
        )
    default = [Mark(j, t.i, t.k, f"{t.grad_i:.4g} × {t.derivative:.4g} = {t.product:.4g}") for t in terms]
    name = reported_name(graph, j)
    yours = "no entry" if actual is None else shown(actual)  # as the text says it
    picture = draw(
        graph,
        wrong=j,
        expected=shown(e),
        actual=yours,
        grads=expected,
        marks=default if marks is None else marks,
        title=f"{what}: grad_table[{name}] is the first wrong entry from u(n) down. Red edges: its terms. "
        "grad: the right values",
    )
    got = actual if isinstance(actual, (int, float)) else yours
    return Fail(
        failure(
            ROWS[code],
            headline,
            details=[] if code == "seed" else lines,
            node=name,
            expected=e,
            actual=got,
            **picture,
        )
    )
