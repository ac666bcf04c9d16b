"""One iteration of Algorithm 6.2 reads the same wherever it is said: lesson 2, the step page, the explorer
(its frames and its grad_table panel) and the exercise checker's report, each from viz.narration."""

from __future__ import annotations

# l is the stepper, as in the lessons' REPL (l = lessons.start(n)).
# ruff: noqa: E741
import re
from typing import Any

import pytest

import lessons
from lessons.exercises.judges.entry import algorithm_6_2, diagnose_entry
from micrograph import Graph, Value
from viz import explore
from viz.frames import frames
from viz.narration import LESSON, PAGE, REPORT, WHY, Holes, Numbers, iteration_text
from viz.words import fmt, node_names


def _fill(text: str, g: Graph) -> str:
    """The explorer's text with its holes filled from the engine's numbers, as the page fills them."""
    steps: list[Any] = []
    table = g.backprop(observe=steps.append)
    grads = [table[v] for v in g.nodes]
    derivative = {(t.i, t.k): t.derivative for s in steps for t in s.terms}
    numbers = Numbers([v.data for v in g.nodes], grads, derivative)

    def hole(h: str) -> str:
        kind, at = h[0], h[1:]
        bracketed = kind.isupper()
        if kind.lower() == "v":
            return numbers.value(int(at), bracketed)
        if kind.lower() == "g":
            return numbers.grad(int(at), bracketed)
        i, k = (int(a) for a in at.split("."))
        return (numbers.derivative if kind.lower() == "d" else numbers.product)(i, k, bracketed)

    return "".join(hole(p) if n % 2 else p for n, p in enumerate(text.split("\x00")))


def _report(g: Graph, j: int) -> list[str]:
    """The checker's details for a wrong grad_table[u(j+1)] (the entry plus one)."""
    expected, steps = algorithm_6_2(g)
    fail = diagnose_entry(g, j, expected[j] + 1.0, expected, steps, what="backprop", calls=None)
    return list(fail.failure.details)


def _unwrapped(lines: list[str]) -> list[str]:
    """A lesson's lines as a report writes them: a line that goes on (indented by six) joined to its own."""
    out: list[str] = []
    for line in lines:
        if line.startswith("      ") and out:
            more = line.strip()
            out[-1] += ("    " if more.startswith("(") else " ") + more
        else:
            out.append(line)
    return out


def _four_digits(line: str) -> str:
    """A report's line with each number of its arithmetic written as the pages write it (4 digits)."""
    arithmetic, _, formula = line.partition("    (")
    number = r"(?<=[=×+←] )\(?-?\d[\d.]*(?:e[+-]\d+)?\)?"  # a number after a sign of the arithmetic

    def four(m: re.Match[str]) -> str:
        x = float(m.group(0).strip("()"))
        return f"({fmt(x)})" if m.group(0).startswith("(") else fmt(x)

    return re.sub(number, four, arithmetic) + (f"    ({formula}" if formula else "")


@pytest.mark.parametrize("case", [None, ("a * a * b + b", {"a": 0.5, "b": -1.5})], ids=["default", "a*a"])
def test_an_iteration_reads_the_same_in_the_lesson_the_pages_the_explorer_and_the_report(case) -> None:  # type: ignore[no-untyped-def]
    l = lessons.start(2) if case is None else lessons.start(2, expr=case[0], at=case[1])
    g = l.graph
    said = {f.node: f.explanation for f in frames(g) if f.algorithm == "6.2" and f.node is not None}
    spec = explore(l.z).spec
    page = {f["node"]: _fill(f["text"], g) for f in spec["frames"] if f["algorithm"] == "6.2"}
    seen = 0
    while not isinstance(l.next(), str):
        if not l.step.title.startswith("Loop, j = "):
            continue
        j = l.j - 1
        head, lines = l.text.split("\n\n")
        assert all(len(line) <= 80 for line in lines.splitlines())
        lines = _unwrapped(lines.splitlines())
        assert head.endswith(f" {WHY}")  # the lesson says why; the rest is the pages' words
        head = head.removesuffix(f" {WHY}")
        terms = [line.strip().split("    (")[0] for line in lines]
        # the step page and the explorer's frame: the same sentence, the same terms, one paragraph
        assert said[j] == page[j] == f"{head} {'; '.join(terms)}."
        # the explorer's panel, when u(j) is clicked: the same sentence, each term, the sum
        node = spec["nodes"][j]
        assert node["sum_rule"] == head
        assert [_fill(t["text"], g).split(", where ")[0] for t in spec["consumers"][j]] == terms[:-1]
        assert _fill(node["total"], g) == terms[-1]
        # the checker's report: the same lines, to 10 digits, then the entry the solution gave
        report = _report(g, j)
        assert report[0] == head
        assert [_four_digits(line) for line in report[1 : len(lines) + 1]] == lines
        entry = l.grad_table[g.nodes[j]]
        assert report[len(lines) + 1] == f"expected {entry:.10g}; yours {entry + 1.0:.10g}."
        seen += 1
    assert seen == len(g.nodes) - 1


def test_the_report_writes_the_iteration_to_ten_digits() -> None:
    x, y = Value(0.5, label="x"), Value(-2.0, label="y")
    g = Graph((x * y).tanh() * x)
    assert _report(g, 0)[:5] == [
        "j = 1: u1 (x) is an argument of u3, u5, so its sum has 2 terms, one per edge out of u1.",
        "  grad_table[u3] × ∂u3/∂u1 = 0.2099871708 × (-2) = -0.4199743416    (u3 = u1 × u2)",
        "  grad_table[u5] × ∂u5/∂u1 = 1 × (-0.761594156) = -0.761594156    (u5 = u4 × u1)",
        "  grad_table[u1] ← (-0.4199743416) + (-0.761594156) = -1.181568498",
        "expected -1.181568498; yours -0.1815684976.",
    ]


def test_a_line_too_long_for_the_lessons_terminal_goes_on_indented() -> None:
    x = Value(0.3, label="x")
    z = x.tanh()
    for k in range(11):  # x is an argument of 12 nodes: a sum of 12 terms
        z = z + x * float(k + 2)
    g = Graph(z)
    j = g.index[x]
    steps: list[Any] = []
    table = g.backprop(observe=steps.append)
    terms = next(s for s in steps if s.j == j).terms
    numbers = Numbers([], [table[v] for v in g.nodes], {(t.i, t.k): t.derivative for t in terms})
    edges = [(t.i, t.k) for t in terms]
    names = node_names(g)
    wide = iteration_text(j, edges, g, names, numbers, REPORT)
    narrow = iteration_text(j, edges, g, names, numbers, LESSON)
    assert max(len(line) for line in wide.splitlines()) > 80
    assert max(len(line) for line in narrow.splitlines()[2:]) <= 80
    assert narrow.count("\n      ") >= 1  # the sum of 12 terms goes on, indented under its first line
    # the same words, only broken at spaces: the lesson's lines joined are the report's
    assert " ".join(narrow.removeprefix(narrow.split("\n\n")[0] + "\n\n").split()) == " ".join(
        wide.split("\n\n")[1].split()
    )
    assert f"grad_table[{names[x]}] ← " in narrow and narrow.endswith(f"= {fmt(table[x])}")


def test_an_empty_sum_says_so_in_every_place() -> None:
    a, b = Value(1.0, label="a"), Value(2.0, label="b")
    g = Graph(a * b)
    names = node_names(g)
    numbers = Numbers([1.0, 2.0, 2.0], [0.0, 0.0, 1.0], {})
    page = "j = 1: u1 (a) has no consumers, so its sum is empty. grad_table[u1] ← 0."
    assert iteration_text(0, [], g, names, numbers, PAGE) == page
    assert iteration_text(0, [], g, names, Holes(), PAGE) == page
    lesson = iteration_text(0, [], g, names, numbers, LESSON)
    assert lesson == "j = 1: u1 (a) has no consumers, so its sum is empty.\n\n  grad_table[u1] ← 0"
