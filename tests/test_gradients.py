"""Derivatives checked three ways on every catalogue case and on random DAGs.

Algorithm 6.2 (``Graph.backprop``, ``Value.backward``) against central finite differences of a plain-float
function and against sympy's exact derivatives; Algorithm 6.5 (``grad``) against Algorithm 6.2; the
backward subgraph B re-evaluated at new inputs (Algorithm 6.1) against sympy; second and third derivatives
(``grad(grad(...))``) and Hessian-vector products against sympy.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.3-6.5.6, 6.5.10.
"""

from __future__ import annotations

import itertools
import math

import pytest
import sympy
from catalogue import CATALOGUE, Case, count_edges, sympy_value
from hypothesis import given
from strategies import DAG_SETTINGS, dag_cases

from micrograph import Graph, Value, grad, hessian_vector_product

FD_REL = 1e-6  # central differences, step 1e-6: error ~ 1e-10 relative, generous margin
EXACT_REL = 1e-10  # Algorithm 6.2 in floats against sympy's exact derivative
HIGHER_REL = 1e-9  # second and third derivatives, relative


def assert_close(actual: float, expected: float, rel: float, what: str, abs_: float | None = None) -> None:
    """|actual - expected| <= rel * |expected| (+ a tiny absolute slack for expected values near 0)."""
    slack = rel * 1e-3 if abs_ is None else abs_
    assert math.isfinite(actual), f"{what}: got {actual!r}"
    assert math.isclose(actual, expected, rel_tol=rel, abs_tol=slack), (
        f"{what}: got {actual!r}, expected {expected!r} "
        f"(rel. error {abs(actual - expected) / max(abs(expected), 1e-300):.3g})"
    )


def sympy_gradient(case: Case, point: list[float] | None = None) -> list[float]:
    expr, symbols = case.sympy()
    p = case.point if point is None else point
    return [sympy_value(sympy.diff(expr, s), symbols, p) for s in symbols]


# ---------------------------------------------------------------------------------------------
# the checks, written once for catalogue cases and random DAGs


def check_forward(case: Case) -> None:
    z, _ = case.build_values()
    expr, symbols = case.sympy()
    assert_close(z.data, case.evaluate(), 1e-12, f"{case.name}: z against plain floats")
    assert_close(z.data, sympy_value(expr, symbols, case.point), 1e-12, f"{case.name}: z against sympy")


def check_backprop(case: Case) -> None:
    """Algorithm 6.2 against finite differences and sympy; evaluations == edges; backward() adds the table."""
    z, xs = case.build_values()
    graph = Graph(z)
    table = graph.backprop()
    assert table.graph is graph
    n_nodes, n_edges = count_edges(z)
    assert len(graph.nodes) == n_nodes
    assert graph.num_edges == n_edges
    assert table.evaluations == n_edges, f"{case.name}: {table.evaluations} evaluations, {n_edges} edges"
    assert set(table) == set(graph.nodes)
    assert table[z] == 1.0
    exact = sympy_gradient(case)
    for k, x in enumerate(xs):
        fd = case.finite_difference(k)
        assert_close(table[x], fd, FD_REL, f"{case.name}: dz/d{x.label} vs finite differences", abs_=1e-7)
        assert_close(table[x], exact[k], EXACT_REL, f"{case.name}: dz/d{x.label} against sympy")
    # backward(): the same sums in the push form, added into .grad; touches nothing until called.
    # Equal bit for bit when no node has more than two terms (a + b == b + a); the push adds three or more
    # terms in another order, which can change the last bit of that entry and of those below it.
    assert all(v.grad == 0.0 for v in graph.nodes), "backprop() must not touch .grad"
    z.backward()
    at_most_two = all(len(edges) <= 2 for edges in graph.consumer_edges)
    for v in graph.nodes:
        if at_most_two:
            assert v.grad == table[v], f"{case.name}: .grad of {v!r} differs from the grad_table"
        else:
            assert_close(v.grad, table[v], 1e-13, f"{case.name}: .grad of {v!r} (push form)", abs_=1e-14)


def check_grad_against_backprop(case: Case) -> None:
    """Algorithm 6.5's nodes hold Algorithm 6.2's numbers (section 6.5.5: the same computations)."""
    z, xs = case.build_values()
    table = Graph(z).backprop()
    nodes = grad(z, xs)
    assert len(nodes) == len(xs)
    for x, node in zip(xs, nodes):
        assert isinstance(node, Value) and node.in_backward
        assert_close(node.data, table[x], 1e-12, f"{case.name}: grad node for {x.label}", abs_=1e-15)


def check_B_reevaluated(case: Case) -> None:
    """B is an ordinary graph: Algorithm 6.1 re-evaluates it at a new point; compare with sympy there."""
    z, xs = case.build_values()
    new = case.other_point
    exact = sympy_gradient(case, new)
    for k, node in enumerate(grad(z, xs)):
        graph = Graph(node)
        values = {x: v for x, v in zip(xs, new) if x in graph}
        result = graph.forward(values)
        assert result == node.data
        assert_close(result, exact[k], EXACT_REL, f"{case.name}: B for d/d{xs[k].label} at {new}")


def check_higher_order(case: Case) -> None:
    """Second and third derivatives by grad(grad(...)) against sympy, 1e-9 relative."""
    z, xs = case.build_values()
    expr, symbols = case.sympy()
    first = grad(z, xs)
    for i, j in itertools.product(range(len(xs)), repeat=2):
        if j < i:
            continue
        second = grad(first[i], xs)
        d2 = sympy.diff(expr, symbols[i], symbols[j])
        assert_close(second[j].data, sympy_value(d2, symbols, case.point), HIGHER_REL,
                     f"{case.name}: d2z/d{xs[i].label}d{xs[j].label}")  # fmt: skip
        for k in range(j, len(xs)):
            third = grad(second[j], xs[k])
            d3 = sympy.diff(d2, symbols[k])
            assert_close(third.data, sympy_value(d3, symbols, case.point), HIGHER_REL,
                         f"{case.name}: d3z/d{xs[i].label}d{xs[j].label}d{xs[k].label}")  # fmt: skip


def check_hvp(case: Case) -> None:
    """hessian_vector_product against sympy's Hessian times v."""
    z, xs = case.build_values()
    expr, symbols = case.sympy()
    v = [0.3, -1.1, 0.7][: len(xs)]
    hv = hessian_vector_product(z, xs, v)
    H = sympy.hessian(expr, symbols)
    for i in range(len(xs)):
        row = sum(H[i, j] * sympy.Rational(v[j]) for j in range(len(xs)))
        expected = sympy_value(row, symbols, case.point)
        assert_close(hv[i].data, expected, HIGHER_REL, f"{case.name}: (Hv)[{i}]")


# ---------------------------------------------------------------------------------------------
# every catalogue case


def test_catalogue_is_inside_the_domains(catalogue_case: Case) -> None:
    for point in (catalogue_case.point, catalogue_case.other_point):
        assert math.isfinite(catalogue_case.evaluate(point))
        assert catalogue_case.min_kink(point) > 1e-2, "too close to relu's kink for finite differences"


CHECKS = {
    "forward": check_forward,
    "backprop_three_ways": check_backprop,
    "grad_equals_backprop": check_grad_against_backprop,
    "B_reevaluated_at_new_point": check_B_reevaluated,
    "second_and_third_derivatives": check_higher_order,
    "hessian_vector_product": check_hvp,
}
"""What every catalogue case is checked for, each against its oracle."""


@pytest.mark.parametrize("check", list(CHECKS))
def test_catalogue_case(catalogue_case: Case, check: str) -> None:
    CHECKS[check](catalogue_case)


def test_catalogue_covers_every_operation() -> None:
    """Every operation of the table appears in some case, but those that only derivatives use (the step
    function, relu's derivative; xlogy, the derivative of x ** y in y), which appear in B."""
    from micrograph.ops import OPS

    seen: set[str] = set()
    for case in CATALOGUE:
        z, _ = case.build_values()
        seen.update(v.op.name for v in Graph(z).nodes if v.op is not None)
    assert set(OPS) - {"step", "xlogy"} <= seen, sorted(set(OPS) - seen)
    exponents: set[float] = set()
    for case in CATALOGUE:
        z, _ = case.build_values()
        exponents.update(v.op.param for v in Graph(z).nodes if v.op is not None and v.op.param is not None)
    assert {2.0, 3.0, -1.0, -2.5, 0.5} <= exponents
    assert any(c < 0 and c != int(c) for c in exponents) and any(0 < c < 1 for c in exponents)


# ---------------------------------------------------------------------------------------------
# random DAGs with shared nodes


@DAG_SETTINGS
@given(dag_cases())
def test_dag_backprop_three_ways(case: Case) -> None:
    check_forward(case)
    check_backprop(case)


@DAG_SETTINGS
@given(dag_cases())
def test_dag_grad_and_B(case: Case) -> None:
    check_grad_against_backprop(case)
    check_B_reevaluated(case)


@pytest.mark.slow
@DAG_SETTINGS
@given(dag_cases(max_vars=2, max_steps=5))
def test_dag_higher_order_and_hvp(case: Case) -> None:
    check_higher_order(case)
    check_hvp(case)


# ---------------------------------------------------------------------------------------------
# exact values at shared nodes: gradients add up


@pytest.mark.parametrize("x0", [1.5, -0.25, 3.0, 0.125])
def test_x_times_x_plus_x_is_exactly_2x_plus_1(x0: float) -> None:
    x = Value(x0, label="x")
    z = x * x + x
    assert Graph(z).backprop()[x] == 2 * x0 + 1
    assert grad(z, x).data == 2 * x0 + 1
    z.backward()
    assert x.grad == 2 * x0 + 1


def test_a_times_a_has_two_edges_and_gradient_2a() -> None:
    a = Value(-1.25, label="a")
    z = a * a
    g = Graph(z)
    assert z.inputs == (a, a)
    assert g.num_edges == 2
    assert g.get_consumers(a) == [z]
    table = g.backprop()
    assert table.evaluations == 2
    assert table[a] == -2.5
    assert grad(z, a).data == -2.5


def test_gradients_add_up_over_consumers() -> None:
    """t has three consumers (one of them twice): dz/dt is the sum of one term per edge."""
    x, y = Value(3.0, label="x"), Value(0.5, label="y")
    t = x * y  # 1.5
    z = (t + t) * 2.0 + t * t + t.relu()  # dz/dt = 2*2 + 2t + 1 = 8.0
    table = Graph(z).backprop()
    assert table[t] == 8.0
    assert table[x] == 8.0 * 0.5
    assert table[y] == 8.0 * 3.0
    gx, gy = grad(z, [x, y])
    assert (gx.data, gy.data) == (4.0, 24.0)


def test_fan_out_ladder_counts_paths_not_work() -> None:
    """u = u*u + u, d levels: 3**d paths from x to z, but Algorithm 6.2 evaluates one derivative per edge."""
    x = Value(0.5, label="x")
    u = x
    d = 6
    for _ in range(d):
        u = u * u + u
    g = Graph(u)
    assert g.num_edges == 4 * d
    assert g.backprop().evaluations == 4 * d
    # d(u*u + u)/du = 2u + 1, chained: the product over levels
    expected, v = 1.0, 0.5
    for _ in range(d):
        expected *= 2 * v + 1
        v = v * v + v
    assert math.isclose(g.backprop()[x], expected, rel_tol=1e-14)
