"""Deep graphs: no recursion over the graph, at Python's default recursion limit.

micrograd's recursive topological sort crashes at about 330 steps of ``relu(u * 0.999 + 0.1)``; here a
chain of 1,000,000 operations builds, runs forward and backward, and ``grad`` works on a chain of 100,000
nodes. The numbers are checked against plain-float loops, not just "no exception".
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator

import pytest

from micrograph import Graph, Value, build_grad, grad

STEPS = 333_334  # three operations per step (mul, add, relu): 1,000,002 operations


@pytest.fixture
def recursion_limit_unchanged() -> Iterator[None]:
    limit = sys.getrecursionlimit()
    yield
    assert sys.getrecursionlimit() == limit, "the recursion limit was changed"


@pytest.mark.slow
def test_million_operation_relu_chain(recursion_limit_unchanged: None) -> None:
    x = Value(0.5, label="x")
    u = x
    for _ in range(STEPS):
        u = (u * 0.999 + 0.1).relu()
    g = Graph(u)
    operations = len(g.nodes) - g.n_inputs
    assert operations == 3 * STEPS >= 1_000_000
    assert g.n_inputs == 1 + 2 * STEPS  # x and the two constants of every step
    assert g.num_edges == 5 * STEPS

    # Algorithm 6.1 from a new input, against the same loop on plain floats
    expected = 0.7
    for _ in range(STEPS):
        expected = max(expected * 0.999 + 0.1, 0.0)
    assert g.forward({x: 0.7}) == expected
    assert u.data == expected

    # Algorithm 6.2 through backward(): relu is on its linear side, so dz/dx = 0.999 ** STEPS
    u.backward()
    assert math.isclose(x.grad, 0.999**STEPS, rel_tol=1e-8)
    assert x.grad > 0.0

    del g, u, x  # freeing a million-node chain (by reference counting) must not overflow the C stack


@pytest.mark.slow
def test_grad_on_a_100000_node_chain(recursion_limit_unchanged: None) -> None:
    n = 100_000
    w = Value(0.5, label="w")
    z = w
    for _ in range(n - 1):
        z = z.tanh()
    assert len(Graph(z).nodes) == n
    dz = grad(z, w)

    def closed_form(w0: float) -> float:
        t, d = w0, 1.0
        for _ in range(n - 1):
            t = math.tanh(t)
            d *= 1.0 - t * t
        return d

    assert math.isclose(dz.data, closed_form(0.5), rel_tol=1e-9)
    assert math.isclose(Graph(dz).forward({w: 0.7}), closed_form(0.7), rel_tol=1e-9)


@pytest.mark.slow
def test_second_derivative_of_a_10000_node_chain(recursion_limit_unchanged: None) -> None:
    """grad(grad(z, w), w) on z = tanh^n(w), against a recurrence on plain floats.

    t_i = tanh(t_(i-1)); t_i' = (1 - t_i^2) t_(i-1)'; t_i'' = -2 t_i t_i' t_(i-1)' + (1 - t_i^2) t_(i-1)''.
    """
    n = 10_000
    w = Value(0.3, label="w")
    z = w
    for _ in range(n):
        z = z.tanh()
    d2 = grad(grad(z, w), w)
    t, a, b = 0.3, 1.0, 0.0  # t_0 = w, t_0' = 1, t_0'' = 0
    for _ in range(n):
        t = math.tanh(t)
        a_new = (1.0 - t * t) * a
        b = -2.0 * t * a_new * a + (1.0 - t * t) * b
        a = a_new
    assert math.isclose(d2.data, b, rel_tol=1e-9)


def test_build_grad_called_directly_on_a_deep_chain(recursion_limit_unchanged: None) -> None:
    n = 5_000
    w = Value(0.5, label="w")
    z = w
    for _ in range(n):
        z = z.tanh()
    G = Graph(z)
    dw = build_grad(w, G, G.prune([w]), {z: Value(1.0)})
    assert math.isclose(dw.data, G.backprop()[w], rel_tol=1e-12)
