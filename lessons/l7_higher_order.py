"""Lesson 7: higher-order derivatives and Hessian-vector products (section 6.5.10).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.10, equation 6.59.
"""

# The steps take the live namespace as `l`, the name the student's stepper has in the REPL
# (l = lessons.start(n)), so the code shown for a step is what the student can type: hence E741.
# ruff: noqa: E741

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import viz
from lessons._core import Ours, Step, table
from micrograph import Graph, Value, grad, hessian_vector_product
from micrograph.graph import topological_order
from viz.words import fmt

__all__ = ["NUMBER", "SECTION", "SUMMARY", "TITLE", "steps"]

NUMBER = 7
TITLE = "Higher-order derivatives and Hessian-vector products"
SECTION = "section 6.5.10, equation 6.59"
SUMMARY = "B is a graph, so grad(grad(z, w), w) works; H v = grad((grad f)^T v) costs two gradients, not n."

NO_EXPR = "it differentiates figure 6.10's chain again, to the second and third order."
"""Why this lesson runs on its own example, not on a student's expression."""
LINES = {
    "second": Ours("section 6.5.10: the derivatives are a graph, so we can differentiate them again"),
    "fd": Ours("f''(w) ~ (f'(w + h) - f'(w - h)) / 2h   (central differences, a check)"),
    "hvp": Ours("H v = grad_x [ (grad_x f(x))^T v ]   (equation 6.59)"),
    "cost": Ours("section 6.5.10: form H v without forming H (n x n entries)"),
}

H = 1e-5


def _derivatives(l: Any) -> None:
    l.w = Value(0.5, label="w")
    l.z = l.w.tanh().tanh().tanh()  # figure 6.10's z = f(f(f(w))), f = tanh
    l.d1 = grad(l.z, l.w)  # dz/dw: a node of B
    l.d2 = grad(l.d1, l.w)  # d2z/dw2: grad of a node of B, a new backward graph over G and B
    l.d3 = grad(l.d2, l.w)  # and the third
    l.sizes = [len(Graph(d).nodes) for d in (l.z, l.d1, l.d2, l.d3)]


def _derivatives_text(l: Any) -> str:
    return (
        f"z = tanh(tanh(tanh(w))) at w = {fmt(l.w.data)}. grad(z, w) returns a node d1 = {fmt(l.d1.data)}. "
        f"Because d1 is an ordinary node, grad(d1, w) differentiates the backward graph itself: "
        f"d2 = {fmt(l.d2.data)}, and grad(d2, w) gives d3 = {fmt(l.d3.data)}. The graphs grow with "
        "the order: "
        f"z is computed from {l.sizes[0]} nodes, d1 from {l.sizes[1]}, d2 from {l.sizes[2]}, d3 from "
        f"{l.sizes[3]}. The picture shows the graph of d1 (G with B) and, on the right, the B of d2."
    )


def _check(l: Any) -> None:
    g1, g2 = Graph(l.d1), Graph(l.d2)  # re-evaluate d1 and d2 at w +- h with Algorithm 6.1
    l.fd2 = (g1.forward({l.w: 0.5 + H}) - g1.forward({l.w: 0.5 - H})) / (2 * H)
    l.fd3 = (g2.forward({l.w: 0.5 + H}) - g2.forward({l.w: 0.5 - H})) / (2 * H)
    for d in (l.d1, l.d2, l.d3):
        Graph(d).forward({l.w: 0.5})  # back to w = 0.5 everywhere


def _check_text(l: Any) -> str:
    return (
        f"A check by central differences with h = {H:g}: re-evaluating the graph of d1 at w +- h gives "
        f"(d1(w+h) - d1(w-h)) / 2h = {l.fd2:.8f}, against d2 = {l.d2.data:.8f} (difference "
        f"{abs(l.fd2 - l.d2.data):.1e}); the same for d2 gives {l.fd3:.8f} against d3 = {l.d3.data:.8f} "
        f"(difference {abs(l.fd3 - l.d3.data):.1e}). The differences are those of the approximation, "
        f"about h^2; the nodes of B are exact."
    )


def _hvp(l: Any) -> None:
    l.x = Value(0.7, label="x")
    l.y = Value(-1.2, label="y")
    l.f = l.x * l.x * l.y + (l.x * l.y).sin()  # f(x, y) = x^2 y + sin(x y)
    l.v = [1.0, 2.0]
    l.Hv = hessian_vector_product(l.f, [l.x, l.y], l.v)  # equation 6.59: two gradients
    g = grad(l.f, [l.x, l.y])  # the gradient as nodes; each row of H is the gradient of one entry
    l.H = [[h.data for h in grad(gi, [l.x, l.y])] for gi in g]  # the full Hessian, for comparison
    l.H_times_v = [sum(h * vi for h, vi in zip(row, l.v)) for row in l.H]


def _hvp_text(l: Any) -> str:
    hv = ", ".join(fmt(h.data) for h in l.Hv)
    hv2 = ", ".join(fmt(h) for h in l.H_times_v)
    return (
        f"f(x, y) = x^2 y + sin(xy) at x = {fmt(l.x.data)}, y = {fmt(l.y.data)}, v = "
        f"({', '.join(map(fmt, l.v))})"
        f". hessian_vector_product differentiates the scalar (grad f)^T v once more (equation 6.59) and "
        f"returns H v = ({hv}). Forming H row by row, H = [[{fmt(l.H[0][0])}, {fmt(l.H[0][1])}], "
        f"[{fmt(l.H[1][0])}, {fmt(l.H[1][1])}]], and multiplying by v gives ({hv2}). H is symmetric: "
        f"H[0][1] = H[1][0] = {fmt(l.H[0][1])}."
    )


def _cost(l: Any) -> None:
    l.n = 24
    l.xs = [Value(0.1 * (k + 1), label=f"x{k + 1}") for k in range(l.n)]
    l.fn = sum(((a * b).tanh() for a, b in zip(l.xs, l.xs[1:])), Value(0.0))  # sum_k tanh(x_k x_(k+1))
    before = len(topological_order([l.fn]))
    hv = hessian_vector_product(l.fn, l.xs, [1.0] * l.n)
    l.hvp_nodes = len(topological_order(hv)) - before  # nodes built for H v
    g = grad(l.fn, l.xs)
    rows = [grad(gi, l.xs) for gi in g]  # n more gradients: the whole Hessian
    entries = [h for row in rows for h in row]
    l.hessian_nodes = len(topological_order(entries)) - before


def _cost_text(l: Any) -> str:
    return (
        f"Why not form H? For f = sum_k tanh(x_k x_(k+1)) over n = {l.n} variables, H has n^2 = {l.n**2} "
        f"entries and costs n + 1 gradients: {l.hessian_nodes} new nodes. H v costs two gradients: "
        f"{l.hvp_nodes} new nodes, {l.hessian_nodes / l.hvp_nodes:.1f} times fewer, and the ratio "
        "grows with n. "
        f"This is what Krylov methods (conjugate gradient) need: products H v, never H itself."
    )


def _values(l: Any) -> str:
    if hasattr(l, "hvp_nodes"):
        return table(
            [["H v (two gradients)", str(l.hvp_nodes)], ["all of H (n + 1 gradients)", str(l.hessian_nodes)]],
            ["what", "nodes built"],
        )
    if hasattr(l, "Hv"):
        rows = [[str(k + 1), fmt(a.data), fmt(b)] for k, (a, b) in enumerate(zip(l.Hv, l.H_times_v))]
        return table(rows, ["row", "hessian_vector_product", "H @ v"])
    rows = [
        ["z", fmt(l.z.data), str(l.sizes[0]), ""],
        ["dz/dw", fmt(l.d1.data), str(l.sizes[1]), ""],
        ["d2z/dw2", fmt(l.d2.data), str(l.sizes[2]), fmt(getattr(l, "fd2", None))],
        ["d3z/dw3", fmt(l.d3.data), str(l.sizes[3]), fmt(getattr(l, "fd3", None))],
    ]
    return table(rows, ["node", "value", "graph size", "central difference"])


def _figure(l: Any) -> Any:
    if hasattr(l, "Hv") and not hasattr(l, "hvp_nodes"):
        return viz.draw_side_by_side(l.f, [l.x, l.y])
    if hasattr(l, "hvp_nodes"):
        return None
    if hasattr(l, "fd2"):
        return None  # the check is in numbers; the drawing of the previous step is unchanged
    return viz.draw_side_by_side(l.d1, l.w)


def steps(l: Any) -> Iterator[Step]:
    """The steps of lesson 7 (see :mod:`lessons._core`)."""
    yield Step(
        "Second and third derivatives", LINES["second"], _derivatives, _derivatives_text, _values, _figure
    )
    yield Step("Check them by finite differences", LINES["fd"], _check, _check_text, _values, _figure)
    yield Step("Hessian-vector product", LINES["hvp"], _hvp, _hvp_text, _values, _figure)
    yield Step("H v costs two gradients; H costs n", LINES["cost"], _cost, _cost_text, _values, _figure)
