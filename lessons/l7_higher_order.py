"""Lesson 7: higher-order derivatives and Hessian-vector products (section 6.5.10).

Runs on figure 6.10's chain z = tanh(tanh(tanh(w))) at w = 0.5, or on the student's expression
(``lessons.start(7, expr=..., at=...)``): its derivatives of order 1 to 3 with respect to its first
variable, and, for two variables or more, its Hessian-vector product.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.10, equation 6.59.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import viz
from lessons.engine_lines import Bound, EngineLines
from lessons.engine_spans import forward_call, hessian_vector
from lessons.l6_symbolic import AT, EXPR  # lesson 6's example, figure 6.10's chain, differentiated again
from lessons.step import Ours, Step
from micrograph import Graph, Value, grad, hessian_vector_product
from micrograph.errors import DomainError
from micrograph.expr import build
from micrograph.order import topological_order
from viz.words import count, fmt, table

__all__ = ["AT", "EXPR", "steps"]

LINES = {
    "second": Ours("section 6.5.10: the derivatives are a graph, so we can differentiate them again"),
    "fd": Ours("f''(w) ~ (f'(w + h) - f'(w - h)) / 2h   (central differences, a check)"),
    "hvp": Ours("H v = grad_x [ (grad_x f(x))^T v ]   (equation 6.59)"),
    "cost": Ours("section 6.5.10: form H v without forming H (n x n entries)"),
}

H = 1e-5


def _derivatives(l: Any) -> None:
    l.leaves = {name: Value(x, label=name) for name, x in l.at.items()}  # one input node per variable
    # l.w ...: each variable's node, unless the name is taken
    vars(l).update({n: v for n, v in l.leaves.items() if n not in vars(l)})
    l.z = build(l.expr, l.leaves)  # the command line's safe parser
    if l.expr == EXPR:  # figure 6.10's chain: its nodes get the book's names x, y, z
        x, y = Graph(l.z).nodes[1:3]
        x.label, y.label, l.z.label = "x", "y", "z"
    l.wrt = next(iter(l.leaves.values()))  # the variable to differentiate by: the first one
    l.d1 = grad(l.z, l.wrt)  # dz/dw: a node of B
    l.d2 = grad(l.d1, l.wrt)  # d2z/dw2: grad of a node of B, a new backward graph over G and B
    l.d3 = grad(l.d2, l.wrt)  # and the third
    l.sizes = [len(Graph(d).nodes) for d in (l.z, l.d1, l.d2, l.d3)]
    l.d1_table = _grad_table(l.d1)  # Algorithm 6.2 on the graph of d1, for the drawing's grad


def _grad_table(z: Value) -> dict[Value, float]:
    """Algorithm 6.2's grad_table of z (``Graph(z).backprop()``), or {} where a local derivative does not
    exist at z's values (the drawing then shows no grad)."""
    try:
        return Graph(z).backprop()
    except DomainError:
        return {}


def _at(l: Any) -> str:
    return ", ".join(f"{v.label} = {fmt(v.data)}" for v in l.leaves.values())


def _d(l: Any, k: int) -> str:
    """The k-th derivative's name: dz/dw, d2z/dw2, d3z/dw3."""
    w = l.wrt.label
    return f"dz/d{w}" if k == 1 else f"d{k}z/d{w}{k}"


def _derivatives_text(l: Any) -> str:
    others = [v.label for v in l.leaves.values() if v is not l.wrt]
    held = (
        f" The other variables ({', '.join(others)}) keep their values: these are partial derivatives."
        if others
        else ""
    )
    grow = ", growing with the order" if l.sizes == sorted(l.sizes) and l.sizes[0] < l.sizes[-1] else ""
    return (
        f"z = {l.expr} at {_at(l)}. grad(z, {l.wrt.label}) returns a node d1 = {_d(l, 1)} = "
        f"{fmt(l.d1.data)}. Because d1 is an ordinary node, grad(d1, {l.wrt.label}) differentiates the "
        f"backward graph itself: d2 = {_d(l, 2)} = {fmt(l.d2.data)}, and grad(d2, {l.wrt.label}) gives "
        f"d3 = {_d(l, 3)} = {fmt(l.d3.data)}.{held} Each is a graph of its own{grow}: z is computed from "
        f"{count(l.sizes[0], 'node')}, d1 from {count(l.sizes[1], 'node')}, d2 from "
        f"{count(l.sizes[2], 'node')}, d3 from {count(l.sizes[3], 'node')}. The "
        f"picture shows the graph of d1 (G with its B) and, on the right, the B that grad(d1, "
        f"{l.wrt.label}) built for d2."
    )


def _moved(l: Any, x: float) -> list[float] | None:
    """d1 and d2 re-evaluated (Algorithm 6.1) with the variable at x; None where they are undefined."""
    l.wrt.data = x
    try:
        return [Graph(d).forward() for d in (l.d1, l.d2)]
    except DomainError:
        return None


def _check(l: Any) -> None:
    l.x0 = l.wrt.data
    up, down = _moved(l, l.x0 + H), _moved(l, l.x0 - H)  # d1 and d2 at x0 + h and x0 - h
    l.wrt.data = l.x0  # back to the lesson's value, everywhere
    for d in (l.z, l.d1, l.d2, l.d3):
        Graph(d).forward()
    l.fd2 = l.fd3 = None  # central differences need both sides defined
    if up is not None and down is not None:
        l.fd2, l.fd3 = ((a - b) / (2 * H) for a, b in zip(up, down))


def _check_text(l: Any) -> str:
    if l.fd2 is None:
        return (
            f"A check by central differences with h = {H:g} needs d1 and d2 at {l.wrt.label} +- h, and "
            f"one of them is outside an operation's domain there: no check at this point."
        )
    return (
        f"A check by central differences with h = {H:g}: re-evaluating the graph of d1 at "
        f"{l.wrt.label} +- h gives (d1({l.wrt.label}+h) - d1({l.wrt.label}-h)) / 2h = {l.fd2:.8f}, "
        f"against d2 = {l.d2.data:.8f} (difference {abs(l.fd2 - l.d2.data):.1e}); the same for d2 gives "
        f"{l.fd3:.8f} against d3 = {l.d3.data:.8f} (difference {abs(l.fd3 - l.d3.data):.1e}). The "
        f"differences are those of the approximation, about h^2 and rounding; the nodes of B are exact."
    )


def _hvp(l: Any) -> None:
    if len(l.leaves) >= 2:  # z itself, with respect to all its variables
        l.f, l.xs = l.z, list(l.leaves.values())
    else:  # z has one variable, so its Hessian is d2z/dw2: take f(x, y) = x^2 y + sin(x y)
        l.xs = [Value(0.7, label="x"), Value(-1.2, label="y")]
        l.f = l.xs[0] * l.xs[0] * l.xs[1] + (l.xs[0] * l.xs[1]).sin()
    l.v = [float(k + 1) for k in range(len(l.xs))]  # the vector v = (1, 2, ...)
    l.Hv = hessian_vector_product(l.f, l.xs, l.v)  # equation 6.59: two gradients
    l.g = g = grad(l.f, l.xs)  # the gradient as nodes; each row of H is the gradient of one entry
    l.f_table = _grad_table(l.f)  # Algorithm 6.2 on the graph of f, for the drawing's grad
    l.H = [[h.data for h in grad(gi, l.xs)] for gi in g]  # the full Hessian, for comparison
    l.H_times_v = [sum(h * vi for h, vi in zip(row, l.v)) for row in l.H]


def _vector(xs: Sequence[float]) -> str:
    return "(" + ", ".join(fmt(x) for x in xs) + ")"


def _hvp_text(l: Any) -> str:
    at = ", ".join(f"{x.label} = {fmt(x.data)}" for x in l.xs)
    what = (
        f"f = z = {l.expr}, at {at}"
        if l.f is l.z
        else f"z has one variable, so its Hessian is the single number d2 above. Take f(x, y) = x^2 y + "
        f"sin(xy) at {at}"
    )
    n = len(l.xs)
    asym = max(abs(l.H[i][j] - l.H[j][i]) for i in range(n) for j in range(n))
    return (
        f"{what}, and v = {_vector(l.v)}. hessian_vector_product differentiates the scalar (grad f)^T v "
        f"once more (equation 6.59) and returns H v = {_vector([h.data for h in l.Hv])}. Forming H row "
        f"by row, H = [{', '.join('[' + ', '.join(fmt(h) for h in row) + ']' for row in l.H)}], and "
        f"multiplying by v gives {_vector(l.H_times_v)}. H is symmetric: H[i][j] and H[j][i] differ by "
        f"at most {asym:.1e}."
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
        f"Why not form H? Take a function of many variables, f = sum_k tanh(x_k x_(k+1)) over n = {l.n}: "
        f"H has n^2 = {l.n**2} entries and costs n + 1 gradients: {l.hessian_nodes} new nodes. H v costs "
        f"two gradients: {l.hvp_nodes} new nodes, {l.hessian_nodes / l.hvp_nodes:.1f} times fewer, and "
        "the ratio grows with n. This is what Krylov methods (conjugate gradient) need: products H v, "
        "never H itself."
    )


def _engine_derivatives(l: Any) -> EngineLines:
    return EngineLines(
        "micrograph.symbolic:grad",
        "with paused_gc():",
        "result = [grad_table[V] for V in targets]",
        (
            Bound("G = Graph(z)", "len(G.nodes)", (l.sizes[2],)),
            Bound("result = [grad_table[V]", "result", ([l.d3],), ("[d3]",)),
        ),
        caption=f"the third call, grad(d2, {l.wrt.label}): G is the graph of d2",
    )


def _engine_check(l: Any) -> EngineLines:
    return forward_call(l.d3.data, "Graph(d).forward(), the last for d3 at the lesson's value")


def _engine_hvp(l: Any) -> EngineLines:
    return hessian_vector(l.v)


def _engine_cost(l: Any) -> EngineLines:
    return hessian_vector([1.0] * l.n, Bound("g = grad(z, wrt)", "len(wrt)", (l.n,)), caption=f"n = {l.n}")


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
        [_d(l, 1), fmt(l.d1.data), str(l.sizes[1]), ""],
        [_d(l, 2), fmt(l.d2.data), str(l.sizes[2]), fmt(getattr(l, "fd2", None))],
        [_d(l, 3), fmt(l.d3.data), str(l.sizes[3]), fmt(getattr(l, "fd3", None))],
    ]
    return table(rows, ["node", "value", "graph size", "central difference"])


def _figure(l: Any) -> Any:
    # B and the grad_table the steps computed (grad, Graph.backprop), drawn: nothing computed for the picture
    if hasattr(l, "Hv") and not hasattr(l, "hvp_nodes"):
        return viz.draw_side_by_side(l.f, l.xs, gradients=l.g, grad_table=l.f_table)
    if hasattr(l, "hvp_nodes"):
        return None
    if hasattr(l, "fd2"):
        return None  # the check is in numbers; the drawing of the previous step is unchanged
    # d2 = grad(d1, wrt): B drawn as built
    return viz.draw_side_by_side(l.d1, l.wrt, gradients=l.d2, grad_table=l.d1_table)


def steps(l: Any) -> Iterator[Step]:
    """The steps of lesson 7 (see :mod:`lessons.step`)."""
    step = Step.showing(_values, _figure)
    yield step(
        "Second and third derivatives", LINES["second"], _derivatives, _derivatives_text, _engine_derivatives
    )
    yield step("Check them by finite differences", LINES["fd"], _check, _check_text, _engine_check)
    yield step("Hessian-vector product", LINES["hvp"], _hvp, _hvp_text, _engine_hvp)
    yield step("H v costs two gradients; H costs n", LINES["cost"], _cost, _cost_text, _engine_cost)
