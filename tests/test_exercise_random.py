"""The checker on random DAGs: a left-out term found at the right node, and correct solutions, two students'
and the reference ones, passing on 40 more random DAGs (the checker never fails correct code)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from exercise_solutions import CORRECT
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lessons import exercises
from lessons.exercises import tools

needs_dot = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")


@pytest.mark.slow  # seconds: run by make test-slow (and CI), keeping make test within minutes
@needs_dot
@settings(max_examples=15)
@given(seed=st.integers(min_value=100, max_value=10_000))
@example(seed=255)  # a node whose only term is left out, once taken for a loop run from u(1) upwards
def test_a_left_out_term_is_found_on_random_dags(seed: int) -> None:
    """On a random DAG, a backprop that leaves out each node's last edge is caught at the right node."""
    from lessons.exercises.cases import Case, random_dag
    from lessons.exercises.judges import backprop as judge
    from micrograph import Graph, backprop

    def drop_last(G):  # type: ignore[no-untyped-def]
        table = {G.nodes[-1]: 1.0}
        for v in reversed(G.nodes[:-1]):
            edges = [(C, k) for C in G.get_consumers(v) for k, p in enumerate(C.inputs) if p is v]
            table[v] = sum(table[C] * tools.local_derivative(C, k) for C, k in edges[:-1])
        return table

    # the first entry from u(n) down whose last term is not zero, by the engine
    graph = Graph(random_dag(seed)[0])
    steps: dict[int, Any] = {}
    backprop(graph, observe=lambda step: steps.__setitem__(step.j, step))
    j = next(j for j in range(len(graph.nodes) - 2, -1, -1) if abs(steps[j].terms[-1].product) > 1e-9)
    case = Case(f"random DAG (seed {seed})", lambda: random_dag(seed))
    original = judge.graph_cases
    judge.graph_cases = lambda **kw: [case]  # the judge builds the cases in this process
    try:
        report = exercises.check("backprop", drop_last, record=False)
    finally:
        judge.graph_cases = original
    assert report.failure is not None, report.text()
    assert report.failure.node.split(" ")[0] == f"u{j + 1}", report.text()
    assert report.failure.mistake == "missing-term", report.text()
    last = steps[j].terms[-1]
    text = " ".join(report.text().split())
    assert f"u{last.i + 1} (argument {last.k + 1})" in text
    assert report.failure.svg is not None and "missing" in report.failure.svg
    assert report.failure.expected == pytest.approx(steps[j].total)


STUDENT_SOLUTIONS = {
    "topo": """
def topological_order(z):
    order, seen, stack = [], {z}, [(z, 0)]
    while stack:
        v, k = stack.pop()
        if k < len(v.inputs):
            stack.append((v, k + 1))
            p = v.inputs[k]
            if p not in seen:
                seen.add(p)
                stack.append((p, 0))
        else:
            order.append(v)
    return [v for v in order if v.op is None] + [v for v in order if v.op is not None]
""",
    "forward": """
def forward(G, x):
    u = list(x) + [None] * (len(G.nodes) - G.n_inputs)
    for i in range(G.n_inputs, len(G.nodes)):
        u[i] = G.nodes[i].op.f(*[u[j] for j in G.parents[i]])
    return u
""",
    "backprop": CORRECT["backprop"],
    "build_grad": """
from micrograph import Value
def build_grad(V, G, G_prime, grad_table):
    if V in grad_table:
        return grad_table[V]
    total = None
    for C in G_prime.get_consumers(V):
        t = C.op.bprop(C.inputs, V, build_grad(C, G, G_prime, grad_table), C)
        if t is not None:
            total = t if total is None else total + t
    grad_table[V] = Value(0.0) if total is None else total
    return grad_table[V]
""",
}


@pytest.mark.parametrize("name", list(STUDENT_SOLUTIONS))
def test_correct_solutions_pass_on_40_more_random_dags(name: str, tmp_path: Path) -> None:
    """The checker never fails correct code: two students' solutions, on 40 other random DAGs."""
    from lessons.exercises import judges
    from lessons.exercises.cases import Case, random_dag

    def more(**kw: Any) -> list[Case]:
        return [Case(f"random DAG (seed {s})", lambda s=s: random_dag(s, n_ops=20)) for s in range(10, 50)]

    path = tmp_path / f"{name}.py"
    path.write_text(STUDENT_SOLUTIONS[name], encoding="utf-8")
    judge = judges.module(name)
    original = judge.graph_cases
    judge.graph_cases = more  # the judge builds the cases in this process
    try:
        for source in (STUDENT_SOLUTIONS[name], CORRECT[name]):
            path.write_text(source, encoding="utf-8")
            report = exercises.check(name, path, record=False)
            assert report.passed, report.text()
            assert len(report.checks) == 40 + (name != "build_grad")  # and the growth case
    finally:
        judge.graph_cases = original
