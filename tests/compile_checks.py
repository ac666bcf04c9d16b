"""What the compiler's tests check a compiled graph against: Algorithms 6.1 and 6.2 run on the same graph.

Shared by tests/test_compile.py (the numbers), tests/test_compile_source.py (the code written) and
tests/test_compile_train.py (training on compiled graphs).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pytest
from catalogue import Case

from micrograph import DomainError, Graph, Value, compile_graph
from micrograph.compile import CompiledGraph


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def same_float(a: float, b: float) -> bool:
    """Equal bit for bit, but for the sign of a zero (the interpreter's sums start at 0.0), or both nan."""
    return a == b or (math.isnan(a) and math.isnan(b))


def interpreted(g: Graph, wrt: list[Value], values: list[float]) -> tuple[float, list[float]]:
    """Algorithms 6.1 and 6.2 on the graph, the oracle (changes the nodes' .data)."""
    z = g.forward(values)
    table = g.backprop()
    return z, [table[w] if w in table else 0.0 for w in wrt]


def check_same(g: Graph, wrt: list[Value], f: CompiledGraph, values: list[float]) -> None:
    value, grads = f(values)
    z, expected = interpreted(g, wrt, values)
    assert close(value, z), (value, z)
    assert len(grads) == len(wrt)
    for k, (a, b) in enumerate(zip(grads, expected)):
        assert close(a, b), (k, a, b)


def check_case(case: Case, part_size: int = 5000) -> None:
    z, xs = case.build_values()
    g = Graph(z)
    f = compile_graph(g, xs, part_size=part_size)
    variables = g.variables
    for point in (case.point, case.other_point):
        by_var = dict(zip(xs, point))
        values = [by_var.get(v, v.data) for v in variables]  # variables order (every x is a variable of G)
        check_same(g, xs, f, values)


def check_as_interpreted(
    g: Graph,
    f: CompiledGraph,
    values: dict[Value, float],
    wrt: list[Value],
    same: Callable[[float, float], bool] = same_float,
) -> None:
    """``f(values)`` gives what Algorithms 6.1 and 6.2 give on ``g`` at ``values``: the value and the
    gradients with respect to ``wrt`` (0 for a node ``g`` lacks), equal by ``same``; or the same error."""
    try:
        z = g.forward(values)
        table = g.backprop()
    except DomainError as e:
        with pytest.raises(DomainError) as compiled:
            f(values)
        assert str(compiled.value) == str(e)
        return
    value, grads = f(values)
    assert same(value, z), (value, z)
    for w, got in zip(wrt, grads):
        expected = table[w] if w in table else 0.0
        assert same(got, expected), (w, got, expected)
