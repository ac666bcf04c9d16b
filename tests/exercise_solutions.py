"""Correct solutions of the seven exercises, written as a student writes them (one file each), and numpy ones.

The checks must pass every one of them; tests/wrong_solutions.py and tests/test_exercise_attacks.py
use them. They are the student's side of the exercises and live with the tests: the engine's own algorithms
are in micrograph/, written once. A typical wrong solution is one of them with a line changed
(:func:`mutant`), so that it cannot drift from the solution it is a mistake of.
"""

from __future__ import annotations

CORRECT: dict[str, str] = {
    "derivatives": """\
# micrograph exercise: derivatives
import math
def tanh_dx(x, out): return 1 - out * out
def sigmoid_dx(x, out): return out * (1 - out)
def div_dx(x, y, out): return 1 / y
def div_dy(x, y, out): return -x / (y * y)
def pow_dx(x, y, out): return y * x ** (y - 1)
def pow_dy(x, y, out): return out * math.log(x)
def log_dx(x, out): return 1 / x
def sqrt_dx(x, out): return 0.5 / out
""",
    "topo": """\
# micrograph exercise: topo
def topological_order(z):
    order, seen, stack = [], set(), [(z, False)]
    while stack:
        v, done = stack.pop()
        if done:
            order.append(v)
            continue
        if v in seen:
            continue
        seen.add(v)
        stack.append((v, True))
        for p in reversed(v.inputs):
            if p not in seen:
                stack.append((p, False))
    return [v for v in order if v.op is None] + [v for v in order if v.op is not None]
""",
    "forward": """\
# micrograph exercise: forward
def forward(G, x):
    n = len(G.nodes)
    u = [None] * n
    for i in range(G.n_inputs):
        u[i] = x[i]
    for i in range(G.n_inputs, n):
        u[i] = G.nodes[i].op.f(*[u[j] for j in G.parents[i]])
    return u
""",
    "backprop": """\
# micrograph exercise: backprop
from lessons.exercises import tools


def backprop(G):
    nodes = G.nodes
    n = len(nodes)
    grad_table = {nodes[n - 1]: 1.0}
    for j in range(n - 2, -1, -1):
        v = nodes[j]
        grad_table[v] = sum(
            grad_table[C] * tools.local_derivative(C, k)
            for C in G.get_consumers(v)
            for k, p in enumerate(C.inputs)
            if p is v
        )
    return grad_table
""",
    "build_grad": """\
# micrograph exercise: build_grad
from micrograph import Value
def build_grad(V, G, G_prime, grad_table):
    if V in grad_table:
        return grad_table[V]
    total = None
    for C in G_prime.get_consumers(V):
        D = build_grad(C, G, G_prime, grad_table)
        t = C.op.bprop(C.inputs, V, D, C)
        if t is not None:
            total = t if total is None else total + t
    grad_table[V] = total if total is not None else Value(0.0)
    return grad_table[V]
""",
    "mlp_backward": """\
# micrograph exercise: mlp_backward
def backward_mlp(net):
    grad_W, grad_b = {}, {}
    g = list(net.g)
    for k in range(net.l, 0, -1):
        g = [g[m] * net.f_prime(k, net.a[k][m], net.h[k][m]) for m in range(len(g))]
        grad_b[k] = list(g)
        grad_W[k] = [[g[m] * net.h[k-1][i] + 2 * net.lam * net.W[k][m][i] for i in range(len(net.h[k-1]))]
                     for m in range(len(g))]
        g = [sum(net.W[k][m][i] * g[m] for m in range(len(g))) for i in range(len(net.h[k-1]))]
    return grad_W, grad_b
""",
    "naive": """\
# micrograph exercise: naive
from lessons.exercises import tools
def value(v):
    if v.op is None:
        return v.data
    return tools.evaluate(v, [value(p) for p in v.inputs])
def naive_grad(z, w):
    if z is w:
        return 1.0
    if z.op is None:
        return 0.0
    total = 0.0
    for k, x in enumerate(z.inputs):
        d = naive_grad(x, w)
        if d == 0.0 and not depends(x, w):
            continue
        args = [value(p) for p in z.inputs]
        out = tools.evaluate(z, args)
        total += tools.local_derivative(z, k, args, out) * d
    return total
def depends(v, w):
    return v is w or any(depends(p, w) for p in v.inputs)
""",
}
"""{exercise: the source of a correct solution}."""

NUMPY: dict[str, str] = {
    "mlp_backward": """\
# micrograph exercise: mlp_backward
import numpy as np
def backward_mlp(net):
    grad_W, grad_b = {}, {}
    g = np.array(net.g)
    for k in range(net.l, 0, -1):
        fp = np.array([net.f_prime(k, a, h) for a, h in zip(net.a[k], net.h[k])])
        g = g * fp
        W = np.array(net.W[k])
        grad_b[k] = g
        grad_W[k] = np.outer(g, np.array(net.h[k - 1])) + 2 * net.lam * W
        g = W.T @ g
    return grad_W, grad_b
""",
    "forward": """\
# micrograph exercise: forward
import numpy as np
def forward(G, x):
    n = len(G.nodes)
    u = np.zeros(n)
    u[: G.n_inputs] = x
    for i in range(G.n_inputs, n):
        u[i] = G.nodes[i].op.f(*[float(u[j]) for j in G.parents[i]])
    return u
""",
}
"""Correct solutions written with numpy: arrays and numpy scalars where the templates show lists."""


def mutant(source: str, *changes: tuple[str, str]) -> str:
    """``source`` with each ``(line, replacement)`` of ``changes`` made, in order.

    Args:
        source: a solution's source (one of :data:`CORRECT`'s, or :data:`LOOP_BACKPROP`).
        changes: ``line`` is one whole line of the source, indentation included, found there exactly once;
            ``replacement`` takes its place (several lines, joined by newlines; ``""`` deletes the line).

    Raises:
        ValueError: a ``line`` holds a newline, or is not in the source exactly once (the source changed
            under the mutation, which would otherwise test the correct solution or another mistake).
    """
    lines = source.splitlines()
    for line, replacement in changes:
        if "\n" in line:
            raise ValueError(f"a mutation replaces one line; {line!r} holds several")
        found = [i for i, text in enumerate(lines) if text == line]
        if len(found) != 1:
            raise ValueError(f"the line {line!r} is in the source {len(found)} times, not once:\n{source}")
        lines[found[0] : found[0] + 1] = replacement.split("\n") if replacement else []
    return "\n".join(lines) + "\n"


LOOP_BACKPROP = mutant(
    CORRECT["backprop"],
    (
        "        grad_table[v] = sum(",
        "        grad_table[v] = 0.0\n"
        "        for C in G.get_consumers(v):\n"
        "            for k, p in enumerate(C.inputs):\n"
        "                if p is v:\n"
        "                    grad_table[v] += grad_table[C] * tools.local_derivative(C, k)",
    ),
    ("            grad_table[C] * tools.local_derivative(C, k)", ""),
    ("            for C in G.get_consumers(v)", ""),
    ("            for k, p in enumerate(C.inputs)", ""),
    ("            if p is v", ""),
    ("        )", ""),
)
"""Algorithm 6.2 with its sum written as a loop adding one term per edge, as many students write it: correct
too, and one line away from the mistakes that overwrite a term instead of adding it."""
