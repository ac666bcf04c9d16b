"""Lesson 8: forward mode and reverse mode (section 6.5.9, with 6.5.10).

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.9 and 6.5.10.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import viz
from lessons.engine_lines import Bound, EngineLines
from lessons.engine_spans import hessian_vector, pulled_term
from lessons.step import Ours, Step
from micrograph import Value, grad, hessian_vector_product, jacobian_forward, jacobian_reverse, jvp
from viz.words import fmt, table

__all__ = ["steps"]

LINES = {
    "jvp": Ours("section 6.5.9: forward mode carries u' = sum_k du/dx_k x_k' along with each value u"),
    "count": Ours("section 6.5.9: a Jacobian of f: R^n -> R^m costs n forward passes or m reverse passes"),
    "chain": Ours("section 6.5.9: the order of a product of Jacobians, (A B) C or A (B C), sets the cost"),
    "hessian": Ours("section 6.5.10: H v = grad_x [ (grad_x f(x))^T v ]   (equation 6.59)"),
}


def _jvp(l: Any) -> None:
    l.x = Value(0.7, label="x")
    l.y = Value(-1.2, label="y")
    l.outs = [l.x * l.y + l.x.sin(), (l.x * l.x).tanh() - l.y, l.y.exp() * l.x]  # f: R^2 -> R^3
    l.v = [1.0, 2.0]
    l.r = jvp(l.outs, [l.x, l.y], l.v)  # one forward pass: J v for all three outputs
    l.J, _ = jacobian_reverse(l.outs, [l.x, l.y])  # three reverse passes (Algorithm 6.2), for comparison
    l.Jv = [row[0] * l.v[0] + row[1] * l.v[1] for row in l.J]


def _jvp_text(l: Any) -> str:
    return (
        f"f(x, y) = (xy + sin x, tanh(x^2) - y, e^y x) at x = {fmt(l.x.data)}, y = {fmt(l.y.data)}. "
        f"Forward mode gives each node a second number, its tangent: the inputs start with the direction "
        f"v = ({fmt(l.v[0])}, {fmt(l.v[1])}), and every node u adds up du/dx_k times its arguments' "
        f"tangents, with the same local derivatives Algorithm 6.2 uses (micrograph.ops). One pass, "
        f"{l.r.evaluations} local derivatives, gives J v for all three outputs at once. Back-propagation "
        f"gives J one row per output; J times v agrees to the last digits."
    )


def _values(l: Any) -> str:
    if hasattr(l, "Hv"):
        rows = [[f"row {k + 1}", fmt(a), fmt(b)] for k, (a, b) in enumerate(zip(l.Hv_numbers, l.H_v))]
        return table(rows, ["", "hessian_vector_product", "H @ v"])
    if hasattr(l, "chain_costs"):
        return table([[k, str(c)] for k, c in l.chain_costs.items()], ["order", "multiply-adds"])
    if hasattr(l, "costs"):
        rows = [[name, str(n), str(m), str(f), str(r)] for name, n, m, f, r in l.costs]
        return table(rows, ["f", "n", "m", "forward (n passes)", "reverse (m passes)"])
    rows = [[f"f{k + 1}", fmt(t), fmt(j)] for k, (t, j) in enumerate(zip(l.r.tangents, l.Jv))]
    return table(rows, ["output", "J v by forward mode", "J v from reverse rows"])


def _count(l: Any) -> None:
    n = 16
    l.xs = [Value(0.05 * (k + 1), label=f"x{k + 1}") for k in range(n)]
    s = sum(((a * b).tanh() for a, b in zip(l.xs, l.xs[1:])), Value(0.0))  # many inputs, one output
    t = Value(0.3, label="t")
    h = t.tanh().tanh().tanh().tanh().tanh().tanh()  # a shared part, then many outputs of one input
    fan = [(h * (k + 1)).sin() for k in range(n)]
    l.costs = []
    for name, outs, ins in (("R^16 -> R", [s], l.xs), ("R -> R^16", fan, [t])):
        J_f, cost_f = jacobian_forward(outs, ins)
        J_r, cost_r = jacobian_reverse(outs, ins)
        pairs = [(a, b) for ra, rb in zip(J_f, J_r) for a, b in zip(ra, rb)]
        assert all(abs(a - b) <= 1e-12 * max(1.0, abs(b)) for a, b in pairs)
        l.costs.append((name, len(ins), len(outs), cost_f, cost_r))


def _count_text(l: Any) -> str:
    (a, n1, _, f1, r1), (b, _, _, f2, r2) = l.costs
    return (
        f"A Jacobian of f: R^n -> R^m takes n forward passes (one per input direction e_j, a column) or m "
        f"reverse passes (one per output, a row); each pass evaluates about one local derivative per edge. "
        f"For {a} (a loss of {n1} parameters), forward mode evaluated {f1} local derivatives and reverse "
        f"mode {r1}: back-propagation wins by about n. For {b} it is the other way round: forward {f2}, "
        f"reverse {r2}. Both give the same Jacobian (checked to 1e-12). Deep learning differentiates a "
        f"scalar cost with respect to many parameters, which is why back-propagation is its method."
    )


def _matmul_cost(shapes: list[tuple[int, int]], order: str) -> int:
    """Multiply-adds of a matrix product A1 A2 ... Ak taken left to right or right to left."""
    if order == "left to right":
        rows, inner = shapes[0]
        cost = 0
        for _, cols in shapes[1:]:
            cost += rows * inner * cols  # (rows x inner) times (inner x cols)
            inner = cols
        return cost
    inner, cols = shapes[-1]
    cost = 0
    for rows, _ in reversed(shapes[:-1]):
        cost += rows * inner * cols  # (rows x inner) times (inner x cols)
        inner = rows
    return cost


def _chain(l: Any) -> None:
    l.shapes = [(100, 100), (100, 100), (100, 100), (100, 1)]  # A B C D, D a column vector
    orders = ("left to right", "right to left")
    l.chain_costs = {order: _matmul_cost(l.shapes, order) for order in orders}


def _chain_text(l: Any) -> str:
    shapes = " ".join(f"{r}x{c}" for r, c in l.shapes)
    lr, rl = l.chain_costs["left to right"], l.chain_costs["right to left"]
    return (
        f"The chain rule multiplies Jacobians, and the order of the products is free. The book's example "
        f"(section 6.5.9, in our words): a product ABCD where D is a column vector and A has many rows "
        f"({l.shapes[0][0]} here). "
        f"With shapes {shapes}, multiplying from the left makes matrix-matrix products: {lr} multiply-adds; "
        f"from the right (D first) every product is a matrix times a vector: {rl}, {lr // rl} times fewer. "
        f"In the book's terms the right-to-left order is back-propagation (reverse mode) and the "
        f"left-to-right order forward mode; were A the one with a single row, left to right would win."
    )


def _hessian(l: Any) -> None:
    l.a = Value(0.6, label="a")
    l.b = Value(-0.4, label="b")
    l.c = Value(1.1, label="c")
    ws = [l.a, l.b, l.c]
    l.f = (l.a * l.b).tanh() + l.b * l.c * l.c + (l.a + l.c).sin()
    g = grad(l.f, ws)  # the gradient as nodes of B
    l.H = [[h.data for h in grad(gi, ws)] for gi in g]  # each row of H: the gradient of one entry of g
    l.hv_v = [1.0, 0.0, -1.0]
    l.Hv = hessian_vector_product(l.f, ws, l.hv_v)  # equation 6.59: two gradients, H never formed
    l.Hv_numbers = [h.data for h in l.Hv]
    l.H_v = [sum(h * v for h, v in zip(row, l.hv_v)) for row in l.H]


def _hessian_text(l: Any) -> str:
    sym = max(abs(l.H[i][j] - l.H[j][i]) for i in range(3) for j in range(3))
    return (
        f"f(a, b, c) = tanh(ab) + b c^2 + sin(a + c) at a = {fmt(l.a.data)}, b = {fmt(l.b.data)}, c = "
        f"{fmt(l.c.data)}. The heat map is its Hessian H, each row the gradient of one entry of grad f "
        f"(grad applied to B); it is symmetric (largest |H_ij - H_ji| = {sym:.1e}). Beside it, "
        f"hessian_vector_product for v = ({', '.join(fmt(v) for v in l.hv_v)}): two gradients, never H, "
        f"and it equals H times v."
    )


def _engine_jvp(l: Any) -> EngineLines:
    return EngineLines(
        "micrograph.forward_mode:jvp",
        "evaluations = 0",
        "tangent[u] = total",
        (Bound("evaluations += 1", "evaluations", (l.r.evaluations,), last=True),),
        caption="forward mode: each node's tangent from its arguments'",
    )


def _engine_count(l: Any) -> list[EngineLines]:
    name, _, _, forward, reverse = l.costs[0]

    def passes(function: str, last: str, result: str, evaluations: int, what: str) -> EngineLines:
        """A Jacobian's loop, which adds up the evaluations of its passes' ``result``."""
        counted = Bound(f"evaluations += {result}.evaluations", "evaluations", (evaluations,), last=True)
        where = f"micrograph.forward_mode:{function}"
        return EngineLines(where, "evaluations = 0", last, (counted,), caption=f"{what}, for {name}")

    return [
        passes("jacobian_forward", "J[i][j] = t", "r", forward, "n passes of jvp"),
        passes("jacobian_reverse", "J.append(", "table", reverse, "m passes of Algorithm 6.2"),
    ]


def _engine_chain(l: Any) -> list[EngineLines]:
    return [
        EngineLines(
            "micrograph.forward_mode:jvp",
            "total += d * tp",
            caption="forward mode (step 1): a node's tangent from its arguments'",
            reported=True,
        ),
        pulled_term("reverse mode (step 2): a node's gradient from its consumers'"),
    ]


def _engine_hessian(l: Any) -> EngineLines:
    return hessian_vector(l.hv_v)


def _figure(l: Any) -> Any:
    if hasattr(l, "Hv"):
        return viz.charts.hessian(l.H, ["a", "b", "c"], Hv=l.Hv_numbers, v=l.hv_v)
    return None


def steps(l: Any) -> Iterator[Step]:
    """The steps of lesson 8 (see :mod:`lessons.step`)."""
    step = Step.showing(_values, _figure)
    yield step("Forward mode: J v in one pass", LINES["jvp"], _jvp, _jvp_text, _engine_jvp)
    yield step("n forward passes or m reverse passes", LINES["count"], _count, _count_text, _engine_count)
    yield step("The order of a chain of products", LINES["chain"], _chain, _chain_text, _engine_chain)
    yield step("The Hessian and H v", LINES["hessian"], _hessian, _hessian_text, _engine_hessian)
