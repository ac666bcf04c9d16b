"""The catalogue of typical wrong solutions of the exercises, each with the diagnosis it must get.

Each entry is the source of a student's file and what the check must say of it: the recognised mistake, a
phrase of the report's text, the case it fails on. Where the mistake is a correct solution
(tests/exercise_solutions.py) with a line changed, the entry is that solution and that change (``mutant``,
which fails if the line is no longer there); the others are programs of their own (recursion, a table keyed
by names, a crash). tests/test_exercises_catalogue.py checks each one.
"""

from __future__ import annotations

from dataclasses import dataclass

from exercise_solutions import CORRECT, LOOP_BACKPROP, mutant

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


# The lines of the correct solutions (tests/exercise_solutions.py) that the mistakes change
BACKPROP, LOOP, TOPO, FORWARD = CORRECT["backprop"], LOOP_BACKPROP, CORRECT["topo"], CORRECT["forward"]
BACKWARD_LOOP = "    for j in range(n - 2, -1, -1):"
ADD_TERM = "                    grad_table[v] += grad_table[C] * tools.local_derivative(C, k)"
TOPO_RETURN = "    return [v for v in order if v.op is None] + [v for v in order if v.op is not None]"
FORWARD_OP = "        u[i] = G.nodes[i].op.f(*[u[j] for j in G.parents[i]])"
MLP_GRAD_W = (
    "        grad_W[k] = [[g[m] * net.h[k-1][i] + 2 * net.lam * net.W[k][m][i]"
    " for i in range(len(net.h[k-1]))]"
)


def _derivative(title: str, wrong: str, mistake: str, says: str) -> Wrong:
    """The derivatives exercise's correct solution with one function's line, ``def name(...): return ...``,
    replaced by ``wrong``; the case is that function."""
    name = wrong.removeprefix("def ").split("(")[0]
    (line,) = [t for t in CORRECT["derivatives"].splitlines() if t.startswith(f"def {name}(")]
    return Wrong(title, "derivatives", mutant(CORRECT["derivatives"], (line, wrong)), mistake, says, name)


CATALOGUE = [
    # --- Algorithm 6.2 --------------------------------------------------------------------------------
    Wrong(
        "overwrite instead of summing at fan-out",
        "backprop",
        mutant(LOOP, (ADD_TERM, ADD_TERM.replace("+=", "="))),
        "overwrite",
        "we simply sum the gradients arriving from different paths",
        "a * a",
    ),
    Wrong(
        "iterating forward, missing entries read as 0",
        "backprop",
        mutant(
            LOOP,
            (BACKWARD_LOOP, "    for j in range(0, n - 1):"),
            (ADD_TERM, ADD_TERM.replace("grad_table[C]", "grad_table.get(C, 0.0)")),
        ),
        "forward-loop",
        "for j = n − 1 down to 1",
        "b = a + a",
    ),
    Wrong(
        "iterating forward, a KeyError",
        "backprop",
        mutant(BACKPROP, (BACKWARD_LOOP, "    for j in range(n - 1):")),
        "forward-loop",
        "your loop reached a node before its consumers",
        "b = a + a",
    ),
    Wrong(
        "off by one: u(1) skipped",
        "backprop",
        mutant(BACKPROP, (BACKWARD_LOOP, "    for j in range(n - 2, 0, -1):")),
        "skip-u1",
        "no entry for u(1)",
        "a * a",
    ),
    Wrong(
        "sums one consumer's edges, overwrites across consumers",
        "backprop",
        mutant(
            LOOP,
            (
                "        for C in G.get_consumers(v):",
                "        for C in G.get_consumers(v):\n            grad_table[v] = 0.0",
            ),
        ),
        "overwrite",
        "the other term was overwritten",
        "(2 * x + 3) * x",
    ),
    Wrong(
        "the consumer search stops before u(n)",
        "backprop",
        mutant(
            BACKPROP, ("            for C in G.get_consumers(v)", "            for C in nodes[j + 1 : n - 1]")
        ),
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
        mutant(BACKPROP, ("            if p is v", "            if k == C.inputs.index(v)")),
        "repeated-argument",
        "takes u1 twice",
        "a * a",
    ),
    Wrong(
        "no seed: grad_table[u(n)] never set",
        "backprop",
        mutant(BACKPROP, ("    grad_table = {nodes[n - 1]: 1.0}", "    grad_table = {}")),
        "seed",
        "grad_table[u(n)] ← 1",
        "a * a",
    ),
    Wrong(
        "sign error: the terms subtracted",
        "backprop",
        mutant(LOOP, (ADD_TERM, ADD_TERM.replace("+=", "-="))),
        "sign",
        "wrong sign",
        "a * a",
    ),
    Wrong(
        "the local derivative left out: grad_table[C] alone",
        "backprop",
        mutant(LOOP, (ADD_TERM, ADD_TERM.replace(" * tools.local_derivative(C, k)", ""))),
        "no-local-derivative",
        "every term of grad_table[u1 (a)] is grad_table[u(i)] alone",
        "a * a",
    ),
    Wrong(  # on b = a + a, 1 + 1 is also one of the terms 2 × 1: the first mistake in the catalogue's order
        "the grad_table factor left out: the local derivative alone, the same number as an overwrite",
        "backprop",
        mutant(LOOP, (ADD_TERM, ADD_TERM.replace("grad_table[C] * ", ""))),
        "overwrite",
        "another mistake gives too: no-grad-factor (terms without their grad_table factor)",
        "b = a + a",
    ),
    Wrong(
        "micrograd's habit: writes node.grad",
        "backprop",
        mutant(LOOP, (ADD_TERM, ADD_TERM + "\n                    v.grad = grad_table[v]")),
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
        mutant(BACKPROP, (BACKWARD_LOOP, "    j = n - 2\n    while j >= 0:")),
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
        "the visited set never filled: shared nodes expanded again",
        "topo",
        mutant(TOPO, ("        seen.add(v)", "")),
        "no-visited",
        "appears twice",
        "a * a",
    ),
    Wrong(
        "reversed: z first",
        "topo",
        mutant(TOPO, (TOPO_RETURN, TOPO_RETURN.replace("return ", "return (") + ")[::-1]")),
        "reversed",
        "z comes first",
        "a * a",
    ),
    Wrong(
        "leaves not first: a plain post-order",
        "topo",
        mutant(TOPO, (TOPO_RETURN, "    return order")),
        "leaves-not-first",
        "the leaves are not first",
        "(2 * x + 3) * x",
    ),
    # --- Algorithm 6.1 ---------------------------------------------------------------------------------
    Wrong(
        "off by one: the first operation skipped",
        "forward",
        mutant(FORWARD, ("    for i in range(G.n_inputs, n):", "    for i in range(G.n_inputs + 1, n):")),
        "skip-first",
        "range(n_inputs, n)",
        "a * a",
    ),
    Wrong(
        "reads the stored node.data of the parents",
        "forward",
        mutant(FORWARD, (FORWARD_OP, "        u[i] = G.nodes[i].op.f(*[p.data for p in G.nodes[i].inputs])")),
        "stale",
        "not parent.data",
        "a * a",
    ),
    Wrong(
        "writes node.data (mutates G)",
        "forward",
        mutant(FORWARD, (FORWARD_OP, FORWARD_OP.replace("u[i] = ", "u[i] = G.nodes[i].data = "))),
        "mutation",
        "do not assign node.data",
        "a * a",
    ),
    Wrong(
        "arguments in the wrong order",
        "forward",
        mutant(
            FORWARD,
            (FORWARD_OP, FORWARD_OP.replace("for j in G.parents[i]", "for j in reversed(G.parents[i])")),
        ),
        "argument-order",
        "the arguments are swapped",
        "z = tanh(x * y + x - y / x)",
    ),
    # --- local derivatives: each a wrong rule in place of the correct one of the same function -------------
    _derivative(
        "tanh' written with x instead of out",
        "def tanh_dx(x, out): return 1 - x * x",
        "tanh-input",
        "1 − out²",
    ),
    _derivative(
        "tanh' without the square", "def tanh_dx(x, out): return 1 - out", "tanh-unsquared", "1 − out²"
    ),
    _derivative(
        "the quotient rule's sign", "def div_dy(x, y, out): return x / (y * y)", "quotient-sign", "−x/y²"
    ),
    _derivative("sqrt' divided by x", "def sqrt_dx(x, out): return 0.5 / x", "sqrt-input", "0.5/out"),
    _derivative(
        "the power rule used for the exponent",
        "def pow_dy(x, y, out): return y * x ** (y - 1)",
        "pow-dy-power-rule",
        "out·log x",
    ),
    # --- Algorithm 6.6 ---------------------------------------------------------------------------------
    Wrong(
        "build_grad returns a number",
        "build_grad",
        mutant(CORRECT["build_grad"], ("    return grad_table[V]", "    return grad_table[V].data")),
        "number",
        "a number, where symbol-to-symbol",
        "a * a",
    ),
    Wrong(
        "B reads numbers of G (.data)",
        "build_grad",
        mutant(
            CORRECT["build_grad"],
            (
                "        D = build_grad(C, G, G_prime, grad_table)",
                "        D = Value(build_grad(C, G, G_prime, grad_table).data)",
            ),
        ),
        "numbers-in-B",
        "does not follow G's inputs",
        "(2 * x + 3) * x",
    ),
    Wrong(
        "no memo: grad_table[z] rebuilt",
        "build_grad",
        mutant(CORRECT["build_grad"], ("    if V in grad_table:", ""), ("        return grad_table[V]", "")),
        "no-memo",
        "if V in grad_table: return grad_table[V]",
        "a * a",
    ),
    Wrong(
        "bprop given grad_table[z], not the consumer's gradient D",
        "build_grad",
        mutant(
            CORRECT["build_grad"],
            (
                "        t = C.op.bprop(C.inputs, V, D, C)",
                "        t = C.op.bprop(C.inputs, V, grad_table[G.output], C)",
            ),
        ),
        "no-grad-factor",
        "its factor grad_table[u2] is missing",
        "b = a + a, c = b + b",
    ),
    # --- Algorithm 6.4 ---------------------------------------------------------------------------------
    Wrong(
        "f'(a) forgotten",
        "mlp_backward",
        mutant(
            CORRECT["mlp_backward"],
            ("        g = [g[m] * net.f_prime(k, net.a[k][m], net.h[k][m]) for m in range(len(g))]", ""),
        ),
        "no-f-prime",
        "f′(a(1))",
        "MLP(3, [2, 1])",
    ),
    Wrong(
        "the penalty's gradient forgotten",
        "mlp_backward",
        mutant(
            CORRECT["mlp_backward"], (MLP_GRAD_W, MLP_GRAD_W.replace(" + 2 * net.lam * net.W[k][m][i]", ""))
        ),
        "no-penalty",
        "2λ W(2)",
        "MLP(3, [2, 1])",
    ),
    Wrong(
        "grad_W with λ W for the penalty's gradient (the 2 of ∇ ΣW² left out)",
        "mlp_backward",
        mutant(
            CORRECT["mlp_backward"],
            (
                MLP_GRAD_W,
                MLP_GRAD_W.replace(" + 2 * net.lam * net.W[k][m][i]", " + net.lam * net.W[k][m][i]"),
            ),
        ),
        "penalty-half",
        "2λ W(k), not λ W(k)",
        "MLP(3, [2, 1])",
    ),
    Wrong(
        "grad_W transposed: h(k-1) g^T",
        "mlp_backward",
        mutant(
            CORRECT["mlp_backward"],
            (MLP_GRAD_W, MLP_GRAD_W.replace("for i in range(len(net.h[k-1]))]", "for m in range(len(g))]")),
            (
                "                     for m in range(len(g))]",
                "                     for i in range(len(net.h[k-1]))]",
            ),
        ),
        "transposed",
        "has shape (2, 1)",
        "MLP(3, [2, 1])",
    ),
    # --- the naive chain rule ------------------------------------------------------------------------
    Wrong(
        "stored values: the naive rule reads z.data",
        "naive",
        mutant(CORRECT["naive"], ("        out = tools.evaluate(z, args)", "        out = z.data")),
        "stored",
        "f(w) is recomputed each time it is needed",
        "figure 6.9's chain, depth 1",
    ),
    Wrong(
        "stored values: the tool reads them, no args and out given",
        "naive",
        mutant(
            CORRECT["naive"],
            (
                "        total += tools.local_derivative(z, k, args, out) * d",
                "        total += tools.local_derivative(z, k) * d",
            ),
        ),
        "stored",
        "hold nan in place of their values",
        "figure 6.9's chain, depth 1",
    ),
    Wrong(
        "a path skipped where its derivative is 0 (relu at a negative argument)",
        "naive",
        mutant(CORRECT["naive"], ("        if d == 0.0 and not depends(x, w):", "        if d == 0.0:")),
        "count",
        "the naive rule needs 5 and 12",
        "relu(-w) + sin(w): a path whose local derivative is 0 is still a path",
    ),
    # --- anything ------------------------------------------------------------------------------------
    Wrong(
        "a syntax error",
        "backprop",
        mutant(BACKPROP, ("def backprop(G):", "def backprop(G)")),
        "syntax",
        "syntax error (line 5)",
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
        exercises.templates.template("topo"),
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
