"""The explorer computes each number once: no algorithm runs on numbers it throws away, and its program has
one slot per node of G and of B (each local derivative the node of B that build_grad built, not a copy).

The page's numbers themselves are checked in the browser (tests/test_explore_browser.py) and against the
engine in tests/test_compile_js.py.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3 and 6.5.6.
"""

from __future__ import annotations

import importlib
import math
import re
import shutil
from typing import Any

import pytest
from hypothesis import given
from strategies import DAG_SETTINGS, dag_cases

import viz.frames
from micrograph import Graph, Value, grad
from micrograph.order import topological_order
from viz.explore import edge_derivatives, explore, frame_plan
from viz.frames import observe
from viz.narration import HOLE, Holes, iteration_head, right_text
from viz.words import node_names

pytestmark = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")


def _example() -> tuple[Value, Value]:
    x, y = Value(1.0, label="x"), Value(2.0, label="y")
    return (x * y + x.exp()).tanh(), x


def _repeated_arguments() -> Value:
    """Every way a consumer takes one node twice (a + a, a − a, a × a, a ÷ a, a ** a), a constant factor,
    a step function's zero derivative and a constant exponent."""
    a, b = Value(0.7, label="a"), Value(1.3, label="b")
    return (a + a) * (a - a + b) + a * a + a / a + a**a + 2.0 * b + (b - 1.5).relu() + b**3 + (-b).exp()


def _statements(source: str) -> list[str]:
    """The right-hand side of every statement of the generated program that computes a slot."""
    return [
        m.group(1) for m in re.finditer(r"u\[\d+\] = (.*?); //", source) if not m.group(1).startswith("x[")
    ]


def test_default_example_program_has_each_expression_once() -> None:
    z, x = _example()
    explorer = explore(z, [x])
    spec, source = explorer.spec, explorer.program
    statements = _statements(source)
    assert len(statements) == len(set(statements)), statements
    # tanh'(u5) computed once: grad_table[u3]'s slot is also the local derivative du6/du5
    assert sum("Math.tanh(u[4]) * Math.tanh(u[4])" in s for s in statements) == 1
    assert spec["size"] == 12  # 6 nodes of G, 6 of B (5 entries, one product D x u2 ... and the seed 1)


@pytest.mark.parametrize("make", [lambda: _example()[0], _repeated_arguments])
def test_every_slot_is_a_node_of_g_or_of_b(make: Any) -> None:
    z = make()
    g = Graph(z)
    explorer = explore(z)
    spec, source = explorer.spec, explorer.program
    B = [v for v in topological_order(grad(z, g.nodes)) if v not in g.index]
    assert spec["size"] == len(g.nodes) + len(B)  # no local derivative built a second time
    assert source.count("\n  u[") == spec["size"]


def _derivative_numbers(z: Value) -> dict[tuple[int, int], float]:
    g = Graph(z)
    calls: list[Any] = []
    grad(z, g.nodes, observe=calls.append)
    return {e: (d.data if isinstance(d, Value) else d) for e, d in edge_derivatives(g, calls).items()}


def _agree(found: dict[tuple[int, int], float], expected: dict[tuple[int, int], float]) -> None:
    assert found.keys() == expected.keys()
    for e, d in expected.items():
        assert math.isclose(found[e], d, rel_tol=1e-12, abs_tol=1e-12), (e, found[e], d)


def test_edge_derivatives_read_from_build_grad_are_algorithm_6_2s() -> None:
    z = _repeated_arguments()
    _agree(_derivative_numbers(z), observe(Graph(z)).derivatives)


@DAG_SETTINGS
@given(case=dag_cases())
def test_edge_derivatives_and_frames_of_random_dags(case) -> None:  # type: ignore[no-untyped-def]
    z, _ = case.build_values()
    g = Graph(z)
    run = observe(g)
    _agree(_derivative_numbers(z), run.derivatives)
    plan = frame_plan(g)
    assert [(f.algorithm, f.lines, f.node) for f in plan] == [
        (f.algorithm, f.lines, f.node) for f in run.frames
    ]
    assert [[(t[0], t[1], t[4]) for t in f.terms] for f in plan] == [
        [(t[0], t[1], t[4]) for t in f.terms] for f in run.frames
    ]


def test_explore_runs_no_algorithm_on_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def counted(module: Any, name: str) -> None:
        original = getattr(module, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls.append(f"{module.__name__}.{name}")
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    engine_6_2 = importlib.import_module("micrograph.backprop")  # the package's backprop is the function
    engine_6_1 = importlib.import_module("micrograph.forward")
    counted(engine_6_2, "run_algorithm_6_2")
    counted(viz.frames, "run_algorithm_6_2")
    for name in ("evaluate", "forward", "_run"):
        counted(engine_6_1, name)
    counted(viz.frames, "evaluate")
    z, x = _example()
    explore(z, [x])
    explore(_repeated_arguments(), predict=True)
    assert calls == []
    observe(Graph(z))  # the counting itself is live: the step pages' frames do run both
    assert {"viz.frames.evaluate", "viz.frames.run_algorithm_6_2"} <= set(calls)


def test_predict_mode_says_the_narrations_sentences() -> None:
    """An entry typed right is confirmed, and a wrong one's terms introduced, in viz.narration's words: the
    assignment of Algorithm 6.2 that fills it (the seed for u(n)), the head of its iteration."""
    z, x = _example()
    spec = explore(z, [x], predict=True).spec
    g = Graph(z)
    names = node_names(g)
    n = len(g.nodes)
    for j, node in enumerate(spec["nodes"]):
        edges = g.consumer_edges[j]
        assert node["right"] == right_text(j, edges, g, names, Holes())
        assert node["sum_rule"] == iteration_head(j, edges, g, names)
    h = HOLE
    assert spec["nodes"][0]["right"] == f"Right: grad_table[u1] ← {h}P2.0{h} + {h}P3.0{h} = {h}g0{h}."
    assert spec["nodes"][n - 1]["right"] == "Right: grad_table[u6] ← 1 (Algorithm 6.2, line 4): ∂u6/∂u6 = 1."
    assert "terms" not in spec["words"] and "count_terms" not in spec
