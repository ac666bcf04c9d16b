"""Figure 6.10 as the book draws it, and the size of the higher-order pictures.

The book's B for z = f(f(f(w))) has one node f'(.) per step, reading y, x and w, and one product per step;
its numbers are Algorithm 6.2's, it is re-evaluated by Algorithm 6.1 and differentiated again by ``grad``.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.6, figure 6.10; section 6.5.10.
"""

from __future__ import annotations

import math
import random

import sympy

from micrograph import Graph, Value, grad
from micrograph.families import chain
from micrograph.order import topological_order


def _B(z: Value, dz: Value) -> list[Value]:
    G = Graph(z)
    return [v for v in topological_order([dz]) if v not in G.index]


def test_figure_6_10_has_the_books_structure() -> None:
    z, w = chain(3)
    G = Graph(z)
    _, x, y, _ = G.nodes
    dz_dw = grad(z, w)
    B = _B(z, dz_dw)
    assert len(B) == 5
    derivs = [v for v in B if v.op.name == "tanh_grad"]
    products = [v for v in B if v.op.name == "mul"]
    assert len(derivs) == 3 and len(products) == 2
    assert sorted(G.index[v.inputs[0]] for v in derivs) == [0, 1, 2]  # f'(w), f'(x), f'(y): not z
    # the grad_table entries dz/dy = f'(y), dz/dx = dz/dy × f'(x), dz/dw = dz/dx × f'(w)
    by_target = {v.grad_of: v for v in B if v.grad_of is not None}
    assert set(by_target) == {y, x, w}
    assert by_target[y].op.name == "tanh_grad" and by_target[y].inputs == (y,)
    assert by_target[x].op.name == "mul" and by_target[x].inputs[0] is by_target[y]
    assert by_target[w] is dz_dw and dz_dw.inputs[0] is by_target[x]
    # its numbers are Algorithm 6.2's, bit for bit
    table = G.backprop()
    for u, node in by_target.items():
        assert node.data == table[u]


def test_figure_6_10_B_re_evaluated_and_differentiated_again_on_random_points() -> None:
    rng = random.Random(610)
    s = sympy.Symbol("w", real=True)
    f = sympy.tanh(sympy.tanh(sympy.tanh(s)))
    exact = [sympy.diff(f, s, k) for k in (1, 2, 3)]
    z, w = chain(3)
    d1 = grad(z, w)
    d2 = grad(d1, w)
    d3 = grad(d2, w)
    graphs = [Graph(d) for d in (d1, d2, d3)]
    for _ in range(20):
        at = rng.uniform(-2.0, 2.0)
        for g, e in zip(graphs, exact):
            got = g.forward({w: at})  # Algorithm 6.1 on B
            want = float(e.subs(s, sympy.Rational(at)).evalf(30))
            assert math.isclose(got, want, rel_tol=1e-12, abs_tol=1e-14), (at, got, want)


def test_higher_order_graphs_are_smaller_than_before() -> None:
    """Node counts of the graphs of z, dz/dw, d2z/dw2, d3z/dw3 for figure 6.10's chain.

    Before tanh's derivative was an operation of the table they were 4, 17, 48 and 132.
    """
    z, w = chain(3)
    d1 = grad(z, w)
    d2 = grad(d1, w)
    d3 = grad(d2, w)
    assert [len(Graph(d).nodes) for d in (z, d1, d2, d3)] == [4, 8, 24, 91]


def test_derivative_operations_are_differentiable_to_third_order() -> None:
    from micrograph.ops import SIGMOID_GRAD, TANH_GRAD, TANH_GRAD2

    s = sympy.Symbol("x", real=True)
    for op, expr in (
        (TANH_GRAD, sympy.diff(sympy.tanh(s), s)),
        (TANH_GRAD2, sympy.diff(sympy.tanh(s), s, 2)),
        (SIGMOID_GRAD, sympy.diff(1 / (1 + sympy.exp(-s)), s)),
    ):
        for at in (-1.7, -0.3, 0.0, 0.8, 2.4):
            x = Value(at, label="x")
            u = op(x)
            node = u
            for k in range(4):
                want = float(sympy.diff(expr, s, k).subs(s, sympy.Rational(at)).evalf(30))
                assert math.isclose(node.data, want, rel_tol=1e-12, abs_tol=1e-14), (op, at, k)
                node = grad(node, x)
