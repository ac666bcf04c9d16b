"""The catalogue of typical wrong solutions: each must fail with its own diagnosis; the references pass.

Each entry is the source of a student's file, written to a temporary directory and checked as
``micrograph exercise check FILE`` checks it (a child process, the file imported there). The test asserts on
what the student sees: the recognised mistake, a phrase of the report's text, and where one is drawn, the
drawing of the failure. The same check run twice gives the same first failure (the cases are seeded).
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from exercise_solutions import CORRECT

from lessons import exercises
from lessons.exercises.limits import TIME_LIMIT


@dataclass(frozen=True)
class Wrong:
    name: str
    exercise: str
    source: str
    mistake: str
    says: str  # a phrase the report's text must contain
    case: str = ""  # the start of the case it must fail on ("" for any)
    time_limit: float = TIME_LIMIT


_BACKPROP_HEAD = """\
from lessons.exercises import tools
def backprop(G):
    nodes = G.nodes
    n = len(nodes)
"""

CATALOGUE = [
    # --- Algorithm 6.2 --------------------------------------------------------------------------------
    Wrong(
        "overwrite instead of summing at fan-out",
        "backprop",
        _BACKPROP_HEAD
        + """
    grad_table = {nodes[n - 1]: 1.0}
    for j in range(n - 2, -1, -1):
        v = nodes[j]
        for C in G.get_consumers(v):
            for k, p in enumerate(C.inputs):
                if p is v:
                    grad_table[v] = grad_table[C] * tools.local_derivative(C, k)
    return grad_table
""",
        "overwrite",
        "we simply sum the gradients arriving from different paths",
        "a * a",
    ),
    Wrong(
        "iterating forward, missing entries read as 0",
        "backprop",
        _BACKPROP_HEAD
        + """
    grad_table = {nodes[n - 1]: 1.0}
    for j in range(0, n - 1):
        v = nodes[j]
        total = 0.0
        for C in G.get_consumers(v):
            for k, p in enumerate(C.inputs):
                if p is v:
                    total += grad_table.get(C, 0.0) * tools.local_derivative(C, k)
        grad_table[v] = total
    return grad_table
""",
        "forward-loop",
        "for j = n − 1 down to 1",
        "b = a + a",
    ),
    Wrong(
        "iterating forward, a KeyError",
        "backprop",
        _BACKPROP_HEAD
        + """
    grad_table = {nodes[n - 1]: 1.0}
    for j in range(n - 1):
        v = nodes[j]
        grad_table[v] = sum(grad_table[C] * tools.local_derivative(C, k)
                            for C in G.get_consumers(v) for k, p in enumerate(C.inputs) if p is v)
    return grad_table
""",
        "forward-loop",
        "your loop reached a node before its consumers",
        "b = a + a",
    ),
    Wrong(
        "off by one: u(1) skipped",
        "backprop",
        _BACKPROP_HEAD
        + """
    grad_table = {nodes[n - 1]: 1.0}
    for j in range(n - 2, 0, -1):
        v = nodes[j]
        grad_table[v] = sum(grad_table[C] * tools.local_derivative(C, k)
                            for C in G.get_consumers(v) for k, p in enumerate(C.inputs) if p is v)
    return grad_table
""",
        "skip-u1",
        "no entry for u(1)",
        "a * a",
    ),
    Wrong(
        "sums one consumer's edges, overwrites across consumers",
        "backprop",
        _BACKPROP_HEAD
        + """
    grad_table = {nodes[n - 1]: 1.0}
    for j in range(n - 2, -1, -1):
        v = nodes[j]
        for C in G.get_consumers(v):
            grad_table[v] = sum(grad_table[C] * tools.local_derivative(C, k)
                                for k, p in enumerate(C.inputs) if p is v)
    return grad_table
""",
        "overwrite",
        "the other term was overwritten",
        "(2 * x + 3) * x",
    ),
    Wrong(
        "the consumer search stops before u(n)",
        "backprop",
        _BACKPROP_HEAD
        + """
    grad_table = {nodes[n - 1]: 1.0}
    for j in range(n - 2, -1, -1):
        v = nodes[j]
        total = 0.0
        for i in range(j + 1, n - 1):
            C = nodes[i]
            for k, p in enumerate(C.inputs):
                if p is v:
                    total += grad_table[C] * tools.local_derivative(C, k)
        grad_table[v] = total
    return grad_table
""",
        "missing-term",
        "misses 2 of its 2 terms: those of the edges into u2 (argument 1), u2 (argument 2)",
        "a * a",
    ),
    Wrong(
        "the table keyed by names, not by nodes",
        "backprop",
        """
from lessons.exercises import tools
def backprop(G):
    names = {v: f"u{i + 1}" for i, v in enumerate(G.nodes)}
    table = {names[G.nodes[-1]]: 1.0}
    for v in reversed(G.nodes[:-1]):
        table[names[v]] = sum(table[names[C]] * tools.local_derivative(C, k)
                              for C in G.get_consumers(v) for k, p in enumerate(C.inputs) if p is v)
    return table
""",
        "keys",
        "the grad_table's keys are not the nodes of G: the first is 'u2' (str)",
        "a * a",
    ),
    Wrong(
        "distinct consumers only: a * a counted once",
        "backprop",
        _BACKPROP_HEAD
        + """
    grad_table = {nodes[n - 1]: 1.0}
    for j in range(n - 2, -1, -1):
        v = nodes[j]
        grad_table[v] = sum(grad_table[C] * tools.local_derivative(C, C.inputs.index(v))
                            for C in G.get_consumers(v))
    return grad_table
""",
        "repeated-argument",
        "takes u1 twice",
        "a * a",
    ),
    Wrong(
        "no seed: grad_table[u(n)] never set",
        "backprop",
        _BACKPROP_HEAD
        + """
    grad_table = {}
    for j in range(n - 2, -1, -1):
        v = nodes[j]
        grad_table[v] = sum(grad_table[C] * tools.local_derivative(C, k)
                            for C in G.get_consumers(v) for k, p in enumerate(C.inputs) if p is v)
    return grad_table
""",
        "seed",
        "grad_table[u(n)] ← 1",
        "a * a",
    ),
    Wrong(
        "sign error: the terms subtracted",
        "backprop",
        _BACKPROP_HEAD
        + """
    grad_table = {nodes[n - 1]: 1.0}
    for j in range(n - 2, -1, -1):
        v = nodes[j]
        grad_table[v] = -sum(grad_table[C] * tools.local_derivative(C, k)
                             for C in G.get_consumers(v) for k, p in enumerate(C.inputs) if p is v)
    return grad_table
""",
        "sign",
        "wrong sign",
        "a * a",
    ),
    Wrong(
        "micrograd's habit: writes node.grad",
        "backprop",
        _BACKPROP_HEAD
        + """
    grad_table = {nodes[n - 1]: 1.0}
    for j in range(n - 2, -1, -1):
        v = nodes[j]
        v.grad = sum(grad_table[C] * tools.local_derivative(C, k)
                     for C in G.get_consumers(v) for k, p in enumerate(C.inputs) if p is v)
        grad_table[v] = v.grad
    return grad_table
""",
        "mutation",
        "u1 (a).grad changed from 0 to 3",
        "a * a",
    ),
    Wrong(
        "recursive backward: the recursion limit",
        "backprop",
        """
from lessons.exercises import tools
def backprop(G):
    table = {G.nodes[-1]: 1.0}
    def g(v):
        if v not in table:
            table[v] = sum(g(C) * tools.local_derivative(C, k)
                           for C in G.get_consumers(v) for k, p in enumerate(C.inputs) if p is v)
        return table[v]
    for v in G.nodes:
        g(v)
    return table
""",
        "recursion",
        "recursion limit",
        "a chain 2,000 deep",
    ),
    Wrong(
        "every path recomputed: more evaluations than edges",
        "backprop",
        """
from lessons.exercises import tools
def backprop(G):
    def g(v):
        if v is G.nodes[-1]:
            return 1.0
        return sum(g(C) * tools.local_derivative(C, k)
                   for C in G.get_consumers(v) for k, p in enumerate(C.inputs) if p is v)
    return {v: g(v) for v in G.nodes[-50:]} | {v: 0.0 for v in G.nodes[:-50]} if len(G.nodes) > 50 \\
        else {v: g(v) for v in G.nodes}
""",
        "recompute",
        "the evaluation count is not the edge count",
        "b = a + a",
    ),
    Wrong(
        "an infinite loop: j never decreases",
        "backprop",
        _BACKPROP_HEAD
        + """
    grad_table = {nodes[n - 1]: 1.0}
    j = n - 2
    while j >= 0:
        grad_table[nodes[j]] = 0.0
    return grad_table
""",
        "timeout",
        "used more than 1 s of CPU time",
        "a * a",
        time_limit=1.0,
    ),
    # --- the topological order ----------------------------------------------------------------------------
    Wrong(
        "a recursive topological sort",
        "topo",
        """
def topological_order(z):
    order, seen = [], set()
    def visit(v):
        if v in seen:
            return
        seen.add(v)
        for p in v.inputs:
            visit(p)
        order.append(v)
    visit(z)
    return [v for v in order if v.op is None] + [v for v in order if v.op is not None]
""",
        "recursion",
        "recursion limit",
        "a chain 2,000 deep",
    ),
    Wrong(
        "no visited set: shared nodes expanded again",
        "topo",
        """
def topological_order(z):
    order, stack = [], [(z, False)]
    while stack:
        v, done = stack.pop()
        if done:
            order.append(v)
            continue
        stack.append((v, True))
        stack.extend((p, False) for p in reversed(v.inputs))
    return [v for v in order if v.op is None] + [v for v in order if v.op is not None]
""",
        "no-visited",
        "appears twice",
        "a * a",
    ),
    Wrong(
        "reversed: z first",
        "topo",
        """
def topological_order(z):
    order, seen, stack = [], set(), [(z, False)]
    while stack:
        v, done = stack.pop()
        if done:
            order.append(v)
        elif v not in seen:
            seen.add(v)
            stack.append((v, True))
            stack.extend((p, False) for p in v.inputs if p not in seen)
    order = [v for v in order if v.op is None] + [v for v in order if v.op is not None]
    return order[::-1]
""",
        "reversed",
        "z comes first",
        "a * a",
    ),
    Wrong(
        "leaves not first: a plain post-order",
        "topo",
        """
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
    return order
""",
        "leaves-not-first",
        "the leaves are not first",
        "(2 * x + 3) * x",
    ),
    # --- Algorithm 6.1 ---------------------------------------------------------------------------------
    Wrong(
        "off by one: the first operation skipped",
        "forward",
        """
def forward(G, x):
    n = len(G.nodes)
    u = [None] * n
    for i in range(G.n_inputs):
        u[i] = x[i]
    for i in range(G.n_inputs + 1, n):
        u[i] = G.nodes[i].op.f(*[u[j] if u[j] is not None else 0.0 for j in G.parents[i]])
    return u
""",
        "skip-first",
        "range(n_inputs, n)",
        "a * a",
    ),
    Wrong(
        "reads the stored node.data of the parents",
        "forward",
        """
def forward(G, x):
    n = len(G.nodes)
    u = list(x) + [None] * (n - G.n_inputs)
    for i in range(G.n_inputs, n):
        u[i] = G.nodes[i].op.f(*[p.data for p in G.nodes[i].inputs])
    return u
""",
        "stale",
        "not parent.data",
        "a * a",
    ),
    Wrong(
        "writes node.data (mutates G)",
        "forward",
        """
def forward(G, x):
    for i in range(G.n_inputs):
        G.nodes[i].data = x[i]
    for i in range(G.n_inputs, len(G.nodes)):
        v = G.nodes[i]
        v.data = v.op.f(*[p.data for p in v.inputs])
    return [v.data for v in G.nodes]
""",
        "mutation",
        "do not assign node.data",
        "a * a",
    ),
    Wrong(
        "arguments in the wrong order",
        "forward",
        """
def forward(G, x):
    n = len(G.nodes)
    u = list(x) + [None] * (n - G.n_inputs)
    for i in range(G.n_inputs, n):
        u[i] = G.nodes[i].op.f(*[u[j] for j in reversed(G.parents[i])])
    return u
""",
        "argument-order",
        "the arguments are swapped",
        "z = tanh(x * y + x - y / x)",
    ),
    # --- local derivatives ---------------------------------------------------------------------------
    *[
        Wrong(
            title,
            "derivatives",
            CORRECT["derivatives"] + line,
            mistake,
            says,
            case,
        )
        for title, line, mistake, says, case in [
            (
                "tanh' written with x instead of out",
                "def tanh_dx(x, out): return 1 - x * x\n",
                "tanh-input",
                "1 − out²",
                "tanh_dx",
            ),
            (
                "the quotient rule's sign",
                "def div_dy(x, y, out): return x / (y * y)\n",
                "quotient-sign",
                "−x/y²",
                "div_dy",
            ),
            (
                "sqrt' divided by x",
                "def sqrt_dx(x, out): return 0.5 / x\n",
                "sqrt-input",
                "0.5/out",
                "sqrt_dx",
            ),
            (
                "the power rule used for the exponent",
                "def pow_dy(x, y, out): return y * x ** (y - 1)\n",
                "pow-dy-power-rule",
                "out·log x",
                "pow_dy",
            ),
        ]
    ],
    # --- Algorithm 6.6 ---------------------------------------------------------------------------------
    Wrong(
        "build_grad returns a number",
        "build_grad",
        """
def build_grad(V, G, G_prime, grad_table):
    if V in grad_table:
        return grad_table[V]
    total = 0.0
    for C in G_prime.get_consumers(V):
        D = build_grad(C, G, G_prime, grad_table)
        t = C.op.bprop(C.inputs, V, D, C)
        total += t.data if hasattr(t, "data") else (t or 0.0)
    grad_table[V] = total
    return total
""",
        "number",
        "a number, where symbol-to-symbol",
        "a * a",
    ),
    Wrong(
        "B reads numbers of G (.data)",
        "build_grad",
        """
from micrograph import Value
def build_grad(V, G, G_prime, grad_table):
    if V in grad_table:
        return grad_table[V]
    total = None
    for C in G_prime.get_consumers(V):
        D = Value(build_grad(C, G, G_prime, grad_table).data)
        t = C.op.bprop(C.inputs, V, D, C)
        if t is not None:
            total = t if total is None else total + t
    grad_table[V] = total if total is not None else Value(0.0)
    return grad_table[V]
""",
        "numbers-in-B",
        "does not follow G's inputs",
        "(2 * x + 3) * x",
    ),
    Wrong(
        "no memo: grad_table[z] rebuilt",
        "build_grad",
        """
from micrograph import Value
def build_grad(V, G, G_prime, grad_table):
    total = None
    for C in G_prime.get_consumers(V):
        D = build_grad(C, G, G_prime, grad_table)
        t = C.op.bprop(C.inputs, V, D, C)
        if t is not None:
            total = t if total is None else total + t
    grad_table[V] = total if total is not None else Value(0.0)
    return grad_table[V]
""",
        "no-memo",
        "if V in grad_table: return grad_table[V]",
        "a * a",
    ),
    # --- Algorithm 6.4 ---------------------------------------------------------------------------------
    Wrong(
        "f'(a) forgotten",
        "mlp_backward",
        """
def backward_mlp(net):
    grad_W, grad_b = {}, {}
    g = list(net.g)
    for k in range(net.l, 0, -1):
        grad_b[k] = list(g)
        grad_W[k] = [[g[m] * net.h[k-1][i] + 2 * net.lam * net.W[k][m][i] for i in range(len(net.h[k-1]))]
                     for m in range(len(g))]
        g = [sum(net.W[k][m][i] * g[m] for m in range(len(g))) for i in range(len(net.h[k-1]))]
    return grad_W, grad_b
""",
        "no-f-prime",
        "f′(a(1))",
        "MLP(3, [2, 1])",
    ),
    Wrong(
        "the penalty's gradient forgotten",
        "mlp_backward",
        """
def backward_mlp(net):
    grad_W, grad_b = {}, {}
    g = list(net.g)
    for k in range(net.l, 0, -1):
        g = [g[m] * net.f_prime(k, net.a[k][m], net.h[k][m]) for m in range(len(g))]
        grad_b[k] = list(g)
        grad_W[k] = [[g[m] * net.h[k-1][i] for i in range(len(net.h[k-1]))] for m in range(len(g))]
        g = [sum(net.W[k][m][i] * g[m] for m in range(len(g))) for i in range(len(net.h[k-1]))]
    return grad_W, grad_b
""",
        "no-penalty",
        "2λ W(2)",
        "MLP(3, [2, 1])",
    ),
    Wrong(
        "grad_W transposed: h(k-1) g^T",
        "mlp_backward",
        """
def backward_mlp(net):
    grad_W, grad_b = {}, {}
    g = list(net.g)
    for k in range(net.l, 0, -1):
        g = [g[m] * net.f_prime(k, net.a[k][m], net.h[k][m]) for m in range(len(g))]
        grad_b[k] = list(g)
        grad_W[k] = [[g[m] * net.h[k-1][i] + 2 * net.lam * net.W[k][m][i] for m in range(len(g))]
                     for i in range(len(net.h[k-1]))]
        g = [sum(net.W[k][m][i] * g[m] for m in range(len(g))) for i in range(len(net.h[k-1]))]
    return grad_W, grad_b
""",
        "transposed",
        "has shape (2, 1)",
        "MLP(3, [2, 1])",
    ),
    # --- the naive chain rule ------------------------------------------------------------------------
    Wrong(
        "stored values: the naive rule reads .data",
        "naive",
        """
from lessons.exercises import tools
def naive_grad(z, w):
    if z is w:
        return 1.0
    if z.op is None:
        return 0.0
    args = [p.data for p in z.inputs]
    return sum(tools.local_derivative(z, k, args, z.data) * naive_grad(x, w) for k, x in enumerate(z.inputs))
""",
        "stored",
        "f(w) is recomputed each time it is needed",
        "figure 6.9's chain, depth 1",
    ),
    # --- anything ------------------------------------------------------------------------------------
    Wrong(
        "a syntax error", "backprop", "def backprop(G)\n    return {}\n", "syntax", "syntax error (line 1)"
    ),
    Wrong(
        "an exception in the student's code",
        "forward",
        """
def helper(v):
    return 1 / 0
def forward(G, x):
    return [helper(v) for v in G.nodes]
""",
        "exception",
        "ZeroDivisionError",
        "a * a",
    ),
    Wrong(
        "the template's TODO left in place",
        "topo",
        exercises.templates.TEMPLATES["topo"],
        "todo",
        "not written yet",
        "a * a",
    ),
    Wrong(
        "the process killed by the solution",
        "backprop",
        # os through a module the exercise allows (the allow-list refuses `import os`)
        "from collections import _sys\ndef backprop(G):\n    _sys.modules['os']._exit(3)\n",
        "crash",
        "exit code 3",
        "a * a",
    ),
]


@pytest.mark.parametrize("wrong", CATALOGUE, ids=[w.name for w in CATALOGUE])
def test_each_wrong_solution_fails_with_its_own_diagnosis(wrong: Wrong, tmp_path: Path) -> None:
    path = tmp_path / f"{wrong.exercise}.py"
    path.write_text(textwrap.dedent(wrong.source), encoding="utf-8")
    report = exercises.check(
        wrong.exercise, path, record=False, time_limit=wrong.time_limit, drawing=tmp_path / "failure.svg"
    )
    text = report.text()
    assert not report.passed, text
    assert report.failure is not None
    assert report.failure.mistake == wrong.mistake, text
    assert wrong.says in " ".join(text.split()), text
    assert report.failure.case.startswith(wrong.case), text
    assert "lessons/exercises" not in report.failure.traceback  # the checker's frames are never shown
    assert "micrograph/" not in report.failure.traceback


def test_the_catalogue_holds_at_least_15_mistakes_each_diagnosed_differently() -> None:
    assert len(CATALOGUE) >= 15
    assert len({w.mistake for w in CATALOGUE}) >= 15
    assert {w.exercise for w in CATALOGUE} == set(exercises.EXERCISES)


@pytest.mark.parametrize("name", list(exercises.EXERCISES))
def test_a_correct_solution_passes_every_check(name: str, tmp_path: Path) -> None:
    path = tmp_path / f"{name}.py"
    path.write_text(CORRECT[name], encoding="utf-8")
    report = exercises.check(name, path, record=False)
    assert report.passed, report.text()
    assert len(report.checks) >= 5
    assert all(ok for _, ok in report.checks)
    assert report.score == report.max_score == len(report.cases)
    assert f"All {len(report.checks)} checks passed" in report.text()
