"""The seven checkers: each runs a student's solution on the cases and compares it with micrograph's engine.

The engine is the answer key: Algorithm 6.1 is :func:`micrograph.forward.evaluate`, Algorithm 6.2 is
:func:`micrograph.backprop` (its ``observe`` callback gives the terms of every sum, which the diagnosis
shows), Algorithms 6.5/6.6 are :func:`micrograph.grad`, the topological order is :class:`micrograph.Graph`,
the naive chain rule and its counts are :func:`micrograph.naive_grad` and
:func:`micrograph.families.expected_counts`, Algorithm 6.4 is :func:`micrograph.nn.backward_mlp`, and the
local derivatives are the operation table's rules. Nothing here computes a derivative itself: a recognised
mistake is found by comparing the student's number with the engine's terms (one term of a sum, the sum less
the second edge of ``a * a`` ...), never by running a second copy of an algorithm.

Every checker takes the student's namespace (a module, or an object with the exercise's function names)
and a :class:`~lessons.exercises.checking.Checker`, and raises :class:`~lessons.exercises.checking.Fail`
at the first failure.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, sections 6.5.1-6.5.6.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from lessons.exercises import tools
from lessons.exercises.cases import Case, graph_cases, random_dag
from lessons.exercises.checking import Checker, Fail, close, mutation, shown, snapshot
from lessons.exercises.drawing import Mark, failure_svg
from micrograph import Graph, backprop, grad, nn
from micrograph.backprop import BackpropStep
from micrograph.engine import Value, as_value
from micrograph.errors import DomainError
from micrograph.families import chain, expected_counts, ladder
from micrograph.forward import evaluate
from micrograph.naive import naive_cost
from micrograph.ops import OPS

__all__ = [
    "check_derivatives",
    "check_topo",
    "check_forward",
    "check_backprop",
    "check_build_grad",
    "check_mlp",
    "check_naive",
    "DERIVATIVE_RULES",
    "MLPExample",
]


def _name(graph: Graph, j: int) -> str:
    v = graph.nodes[j]
    return f"u{j + 1}" + (f" ({v.label})" if v.label else "")


def _draw(graph: Graph, **kw: Any) -> dict[str, Any]:
    svg, note = failure_svg(graph, **kw)
    return {"svg": svg, "drawing_note": note}


def _fn(ns: Any, name: str, C: Checker) -> Callable[..., Any]:
    fn = getattr(ns, name, None)
    if not callable(fn):
        raise C.fail(
            f"the solution has no function {name}(): define it with exactly this name (see the template).",
            mistake="missing-function",
        )
    return fn  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------------------------------
# 1. Local derivatives: du/dx_k for tanh, sigmoid, division, power, log, sqrt.

DERIVATIVE_RULES: list[tuple[str, str, int]] = [
    ("tanh_dx", "tanh", 0),
    ("sigmoid_dx", "sigmoid", 0),
    ("div_dx", "div", 0),
    ("div_dy", "div", 1),
    ("pow_dx", "pow", 0),
    ("pow_dy", "pow", 1),
    ("log_dx", "log", 0),
    ("sqrt_dx", "sqrt", 0),
]
"""(function name, operation, argument k): the rules the student writes, du/dx_k of the operation."""

_POINTS: dict[str, list[tuple[float, ...]]] = {
    "tanh": [(0.5,), (-1.3,), (2.2,), (0.0,)],
    "sigmoid": [(0.5,), (-3.0,), (4.0,), (0.0,)],
    "div": [(1.5, 2.0), (-0.7, 0.4), (2.0, -3.0), (1.0, 1e-3)],
    "pow": [(2.0, 3.0), (0.5, -1.5), (3.0, 0.5), (1e-3, 2.5)],
    "log": [(0.5,), (2.0,), (10.0,), (1e-3,)],
    "sqrt": [(0.25,), (4.0,), (2.0,), (1e-4,)],
}
"""Points inside each operation's domain, the last near its edge (division by a small y, log and sqrt
near 0, a power of a small x)."""


def _derivative_mistake(
    fname: str, args: tuple[float, ...], out: float, actual: float, expected: float
) -> tuple[str, str]:
    """A recognised mistake in a local derivative: (code, hint), or ("", "")."""
    x = args[0]
    y = args[1] if len(args) > 1 else 0.0
    candidates: list[tuple[Callable[[], float], str, str]] = []
    if fname == "tanh_dx":
        candidates.append(
            (
                lambda: 1 - x * x,
                "tanh-input",
                "the derivative of tanh is written with its output: tanh′(x) = 1 − tanh(x)² = "
                "1 − out², not 1 − x².",
            )
        )
    if fname == "sigmoid_dx":
        candidates.append(
            (
                lambda: x * (1 - x),
                "sigmoid-input",
                "σ′(x) = σ(x)(1 − σ(x)) = out·(1 − out): it is written with the output.",
            )
        )
    if fname == "div_dy":
        candidates += [
            (lambda: out / y, "quotient-sign", "d(x/y)/dy = −x/y² (the quotient rule's minus sign)."),
            (lambda: 1 / y, "div-dy-as-dx", "1/y is d(x/y)/dx; with respect to y the result is −x/y²."),
            (lambda: -1 / (y * y), "div-dy-no-x", "d(x/y)/dy = −x/y²: the x is missing."),
        ]
    if fname == "div_dx":
        candidates.append(
            (lambda: -x / (y * y), "div-dx-as-dy", "d(x/y)/dx = 1/y; −x/y² is the derivative in y.")
        )
    if fname == "pow_dx":
        candidates += [
            (lambda: out * math.log(x), "pow-dx-as-dy", "out·log x is d(x^y)/dy; in x it is y·x^(y−1)."),
            (lambda: y * x**y, "pow-exponent", "d(x^y)/dx = y·x^(y−1): the exponent goes down by one."),
        ]
    if fname == "pow_dy":
        candidates.append(
            (
                lambda: y * x ** (y - 1),
                "pow-dy-power-rule",
                "the power rule is for the base; for the exponent d(x^y)/dy = x^y·log x = out·log x.",
            )
        )
    if fname == "log_dx":
        candidates.append((lambda: 1 / out, "log-output", "log′(x) = 1/x, with the input x, not the output."))
    if fname == "sqrt_dx":
        candidates += [
            (
                lambda: 0.5 / x,
                "sqrt-input",
                "√′(x) = 1/(2√x) = 0.5/out: divide by the square root, not by x.",
            ),
            (lambda: 0.5 * out, "sqrt-times", "√′(x) = 0.5/out, a division."),
        ]
    candidates.append(
        (lambda: -expected, "sign", "the sign is wrong: check which way u moves when x_k grows.")
    )
    for value, code, hint in candidates:
        try:
            if close(actual, value()) and not close(actual, expected):
                return code, hint
        except (ArithmeticError, ValueError):
            continue
    return "", ""


def check_derivatives(ns: Any, C: Checker) -> None:
    """Each rule at four points (the last near the domain's edge) against the operation table's rule."""
    for fname, opname, k in DERIVATIVE_RULES:
        op = OPS[opname]
        with C.case(f"{fname}: du/d{'xy'[k]} of {opname} at {len(_POINTS[opname])} points"):
            fn = _fn(ns, fname, C)
            for args in _POINTS[opname]:
                out = op.f(*args)
                expected = float(op.local_derivative(k, args, out))
                call = f"{fname}({', '.join(shown(a) for a in args)}, out={shown(out)})"
                actual = C.call(fn, *args, out, what=call)
                if close(actual, expected):
                    continue
                code, hint = _derivative_mistake(fname, args, out, actual, expected)
                if isinstance(actual, bool) or not isinstance(actual, (int, float)):
                    code, hint = "not-a-number", "return a number (a float)."
                leaves = [Value(a, label="xy"[i]) for i, a in enumerate(args)]
                u = op(*leaves)
                u.label = "u"
                graph = Graph(u)
                raise C.fail(
                    f"{call} returned {shown(actual)}; the derivative is {shown(expected)}.",
                    details=[
                        f"u = {opname}({', '.join('xy'[: len(args)])}) at "
                        f"{', '.join(f'{n} = {shown(a)}' for n, a in zip('xy', args))}: u = {shown(out)}."
                    ],
                    mistake=code or "wrong-derivative",
                    hint=hint,
                    book="local",
                    node="u",
                    expected=expected,
                    actual=actual if isinstance(actual, (int, float)) else shown(actual),
                    **_draw(
                        graph,
                        wrong=graph.index[u],
                        expected=shown(expected),
                        actual=shown(actual),
                        marks=[Mark(graph.index[leaves[k]], graph.index[u], k, f"∂u/∂{'xy'[k]}")],
                        title=f"{fname}: the local derivative on the marked edge is wrong",
                        grads=[None] * len(graph.nodes),
                    ),
                )


# ------------------------------------------------------------------------------------------------------
# 2. The topological order u(1)..u(n), leaves first.


def check_topo(ns: Any, C: Checker) -> None:
    """The student's order: every ancestor of z once, each after its parents, the leaves first, z last."""
    for case in graph_cases():
        with C.case(case.name):
            fn = _fn(ns, "topological_order", C)
            z, _ = case.build()
            graph = Graph(z)  # the engine's order: the answer key, and the u(i) names of the report
            before = snapshot(graph.nodes)
            order = C.call(fn, z, what="topological_order(z)", graph=graph, deep=case.deep)
            changed = mutation(graph, before)
            if changed:
                raise C.fail(
                    f"topological_order(z) changed the graph: {changed}.",
                    mistake="mutation",
                    hint="only read the nodes (.inputs); build a new list.",
                )
            _check_order(C, graph, order)


def _check_order(C: Checker, graph: Graph, order: Any) -> None:
    if not isinstance(order, (list, tuple)):
        raise C.fail(
            f"topological_order(z) returned {shown(order)}; it must return a list of the nodes.",
            mistake="not-a-list",
        )
    index = graph.index
    seen: dict[Value, int] = {}
    for pos, v in enumerate(order):
        if not isinstance(v, Value) or v not in index:
            raise C.fail(
                f"item {pos} of your order, {shown(v)}, is not a node of z's graph.", mistake="stranger"
            )
        if v in seen:
            j = index[v]
            raise C.fail(
                f"{_name(graph, j)} appears twice in your order (items {seen[v]} and {pos}).",
                details=[
                    "A node reached by several paths (a shared parent, or the same parent twice as in "
                    "a * a) is visited once per path unless the search remembers it."
                ],
                mistake="no-visited",
                hint="keep a set of the nodes already visited and skip them.",
                node=_name(graph, j),
                **_draw(graph, wrong=j, title="this node appears twice in your order"),
            )
        seen[v] = pos
    missing = [j for j, v in enumerate(graph.nodes) if v not in seen]
    if missing:
        j = missing[0]
        raise C.fail(
            f"{len(missing)} node(s) of the graph are missing from your order, the first {_name(graph, j)}"
            + (
                " (a constant: constants are leaves of the graph too)." if graph.nodes[j].is_constant else "."
            ),
            mistake="missing-node",
            node=_name(graph, j),
            **_draw(graph, wrong=j, title="this node is missing from your order"),
        )
    if len(order) > 1 and all(seen[p] > seen[v] for v in graph.nodes for p in v.inputs):
        raise C.fail(
            "your order is reversed: z comes first and the leaves last.",
            mistake="reversed",
            hint="u(1)..u(n) starts with the inputs and ends with the output u(n) = z.",
            book="order",
        )
    for v in order:
        for k, p in enumerate(v.inputs):
            if seen[p] > seen[v]:
                i, j = index[v], index[p]
                raise C.fail(
                    f"{_name(graph, i)} comes before its parent {_name(graph, j)} (argument {k + 1}): "
                    "it cannot be computed before its argument is.",
                    mistake="parent-after",
                    book="order",
                    node=_name(graph, i),
                    **_draw(
                        graph,
                        wrong=i,
                        marks=[Mark(j, i, k, "comes later in your order")],
                        title="a node before its parent",
                    ),
                )
    n_i = graph.n_inputs
    first_op = next(pos for pos, v in enumerate(order) if v.op is not None) if len(order) > n_i else n_i
    if first_op < n_i:
        late = next(v for v in order[first_op:] if v.op is None)
        j = index[late]
        raise C.fail(
            f"the leaves are not first: {_name(graph, index[order[first_op]])} (an operation) comes at item "
            f"{first_op}, before the leaf {_name(graph, j)}.",
            details=[
                f"The graph has n_i = {n_i} leaves; u(1)..u(n_i) must be exactly these inputs, which "
                "Algorithm 6.1 sets first (u(i) ← x_i), and u(n_i+1)..u(n) the operations."
            ],
            mistake="leaves-not-first",
            hint="put the leaves first, in the order you met them, then the other nodes in your order.",
            book="inputs",
            node=_name(graph, j),
            **_draw(graph, wrong=j, title="this leaf comes after an operation in your order"),
        )


# ------------------------------------------------------------------------------------------------------
# 3. Algorithm 6.1: forward propagation.


def _new_inputs(case: Case) -> tuple[list[float], list[float]]:
    """New input values x (variables moved by 10 %, constants kept) and the engine's u(1)..u(n) for them."""
    for factor in (1.1, 0.9, 1.0):
        z, _ = case.build()
        graph = Graph(z)
        x = [v.data if v.is_constant else v.data * factor for v in graph.nodes[: graph.n_inputs]]
        try:
            return x, evaluate(graph, x)
        except DomainError:
            continue
    raise AssertionError(f"no input values in the domain for {case.name}")  # the cases are built inside


def check_forward(ns: Any, C: Checker) -> None:
    """u(1)..u(n) for new inputs x against Algorithm 6.1 (:func:`micrograph.forward.evaluate`)."""
    for case in graph_cases():
        with C.case(case.name):
            fn = _fn(ns, "forward", C)
            x, expected = _new_inputs(case)
            z, _ = case.build()
            graph = Graph(z)
            stale = [v.data for v in graph.nodes]
            before = snapshot(graph.nodes)
            u = C.call(fn, graph, list(x), what="forward(G, x)", graph=graph, deep=case.deep)
            changed = mutation(graph, before)
            if changed:
                raise C.fail(
                    f"forward(G, x) changed the graph: {changed}.",
                    details=[
                        "The nodes are the graph G, shared with whoever called you; the values of this "
                        "pass belong in the list u that you return."
                    ],
                    mistake="mutation",
                    hint="keep every value in u[i]; do not assign node.data.",
                )
            _compare_forward(C, graph, x, u, expected, stale)


def _compare_forward(
    C: Checker, graph: Graph, x: list[float], u: Any, expected: list[float], stale: list[float]
) -> None:
    n, n_i = len(graph.nodes), graph.n_inputs
    if not isinstance(u, (list, tuple)) or len(u) != n:
        size = f"a list of {len(u)}" if isinstance(u, (list, tuple)) else shown(u)
        raise C.fail(
            f"forward(G, x) returned {size}; it must return the list u of all n = {n} values u(1)..u(n).",
            mistake="not-a-list",
        )
    for i in range(n):
        e, a = expected[i], u[i]
        if close(a, e):
            continue
        v = graph.nodes[i]
        name = _name(graph, i)
        kw: dict[str, Any] = {
            "node": name,
            "expected": e,
            "actual": a if isinstance(a, (int, float)) else shown(a),
        }
        draw = {
            "wrong": i,
            "expected": shown(e),
            "actual": shown(a),
            "data": expected,
            "grads": [None] * n,
            "title": f"forward: {name} is the first wrong value",
            "show_data": False,
        }
        if i < n_i:
            raise C.fail(
                f"u[{i}] = {shown(a)}, but the input x[{i}] is {shown(x[i])}.",
                mistake="inputs",
                hint="set the inputs first: u[i] = x[i] for i < n_i.",
                book="inputs",
                **kw,
                **_draw(graph, **draw),
            )
        pa = [graph.index[p] for p in v.inputs]
        marks = [Mark(j, i, k, f"u{j + 1} = {shown(expected[j])}") for k, j in enumerate(pa)]
        draw["marks"] = marks
        formula = f"{v.op.name}({', '.join(f'u{j + 1}' for j in pa)})"
        details = [
            f"{name} = {formula} = {v.op.name}({', '.join(shown(expected[j]) for j in pa)}) "
            f"= {shown(e)}; yours is {shown(a)}."
        ]
        if a is None:
            skipped = i == n_i
            raise C.fail(
                f"u[{i}], {name}, was never computed.",
                details=details,
                mistake="skip-first" if skipped else "not-computed",
                hint="the loop runs for i = n_i + 1, ..., n: in Python, range(n_inputs, n), which starts at "
                "the first operation."
                if skipped
                else "compute every node after the inputs.",
                book="order",
                **kw,
                **_draw(graph, **draw),
            )
        if close(a, stale[i]) and not close(e, stale[i]):
            raise C.fail(
                f"{name} is {shown(a)}, its value before this pass: your code read the stored node.data.",
                details=details,
                mistake="stale",
                hint="A(i) is the values this pass computed: u[j] for each parent j, not parent.data.",
                book="parents",
                **kw,
                **_draw(graph, **draw),
            )
        if len(pa) == 2:
            try:
                swapped = v.op.f(expected[pa[1]], expected[pa[0]])
            except (ArithmeticError, ValueError):
                swapped = math.nan
            if close(a, swapped):
                raise C.fail(
                    f"{name} = {formula} came out as {formula.split('(')[0]}(u{pa[1] + 1}, u{pa[0] + 1}): "
                    "the arguments are swapped.",
                    details=details,
                    mistake="argument-order",
                    hint="Pa(u(i)) is ordered: pass the parents in argument order (node.inputs), "
                    "never through a set.",
                    book="parents",
                    **kw,
                    **_draw(graph, **draw),
                )
        raise C.fail(
            f"{name} is wrong: expected {shown(e)}, yours {shown(a)}.",
            details=details,
            mistake="wrong-value",
            book="parents",
            **kw,
            **_draw(graph, **draw),
        )


# ------------------------------------------------------------------------------------------------------
# 4. Algorithm 6.2: back-propagation with the grad_table.


def algorithm_6_2(graph: Graph) -> tuple[list[float], dict[int, BackpropStep]]:
    """The engine's grad_table (aligned with ``graph.nodes``) and every iteration's terms, by position j."""
    steps: dict[int, BackpropStep] = {}
    table = backprop(graph, observe=lambda step: steps.__setitem__(step.j, step))
    return [table[v] for v in graph.nodes], steps


def _table_entry(table: Any, graph: Graph, j: int) -> Any:
    v = graph.nodes[j]
    if isinstance(table, dict):
        return table.get(v)
    return table[j] if j < len(table) else None


def _forward_loop(graph: Graph, calls: list[tuple[Value, int]]) -> bool:
    """True if the solution's local derivatives were evaluated from u(1) upwards (the loop runs forward)."""
    found = [graph.index.get(node.inputs[k]) for node, k in calls[:50] if node in graph.index]
    targets = [t for t in found if t is not None]
    return len(targets) >= 2 and targets[0] < targets[-1] and targets[0] == min(targets)


def diagnose_entry(
    C: Checker,
    graph: Graph,
    j: int,
    actual: Any,
    expected: list[float],
    steps: dict[int, BackpropStep],
    *,
    what: str,
    calls: list[tuple[Value, int]],
) -> Any:
    """The :class:`Fail` for a wrong grad_table[u(j)]: the terms of its sum, the one that differs, a hint."""
    e = expected[j]
    name = _name(graph, j)
    n = len(graph.nodes)
    step = steps.get(j)
    terms = list(step.terms) if step is not None else []
    u_j = f"u{j + 1}"
    lines = [
        f"grad_table[{u_j}] = Σ_i grad_table[u(i)] × ∂u(i)/∂{u_j} has {len(terms)} term(s), one per edge "
        f"out of {u_j}:"
    ]
    for t in terms:
        lines.append(
            f"  u{t.i + 1} takes {u_j} as argument {t.k + 1}: grad_table[u{t.i + 1}] × ∂u{t.i + 1}/∂{u_j} "
            f"= {shown(t.grad_i)} × {shown(t.derivative)} = {shown(t.product)}"
        )
    lines.append(f"expected sum {shown(e)}; yours {'no entry' if actual is None else shown(actual)}.")
    kw: dict[str, Any] = {
        "node": name,
        "expected": e,
        "actual": actual if isinstance(actual, (int, float)) else shown(actual),
    }
    marks = [Mark(j, t.i, t.k, f"{t.grad_i:.4g} × {t.derivative:.4g} = {t.product:.4g}") for t in terms]
    draw: dict[str, Any] = {
        "wrong": j,
        "expected": shown(e),
        "actual": shown(actual),
        "grads": expected,
        "marks": marks,
        "title": f"{what}: grad_table[{name}] is the first wrong entry from u(n) down. Red edges: its terms. "
        "grad: the right values",
    }
    if j == n - 1:
        return C.fail(
            f"grad_table[u(n)] = {shown(actual)}: it must start at 1 (dz/dz = 1).",
            mistake="seed",
            hint="grad_table[u(n)] ← 1 before the loop.",
            book="loop",
            **kw,
            **_draw(graph, **draw),
        )
    if _forward_loop(graph, calls):
        return C.fail(
            f"grad_table[{name}] is wrong, and your loop evaluated the local derivatives from u(1) upwards.",
            details=[
                *lines,
                "When a node's entry is computed, the entries of its consumers (which come later "
                "in u(1)..u(n)) must already be in the table: the loop runs from u(n) down.",
            ],
            mistake="forward-loop",
            hint="for j = n − 1 down to 1: in Python, range(n - 2, -1, -1) over 0-based positions.",
            book="loop",
            **kw,
            **_draw(graph, **draw),
        )
    if actual is None:
        if j == 0:
            return C.fail(
                "grad_table has no entry for u(1): the loop stops one node early.",
                details=lines,
                mistake="skip-u1",
                hint="the loop runs down to j = 1 inclusive: in Python, down to position 0 "
                "(range(..., -1, -1), not range(..., 0, -1)).",
                book="loop",
                **kw,
                **_draw(graph, **draw),
            )
        return C.fail(
            f"grad_table has no entry for {name}.",
            details=lines,
            mistake="missing-entry",
            hint="Algorithm 6.2 computes an entry for every node of G.",
            book="loop",
            **kw,
            **_draw(graph, **draw),
        )
    evaluated = {(id(node), k) for node, k in calls}
    for t in terms:  # u(i) takes u(j) twice and the second edge was never evaluated
        twice = t.k == 1 and any(s.i == t.i and s.k == 0 for s in terms)
        if twice and calls and (id(graph.nodes[t.i]), 1) not in evaluated and close(actual, e - t.product):
            draw["marks"] = [Mark(j, t.i, t.k, f"{t.product:.4g} missing")]
            return C.fail(
                f"grad_table[{name}] misses the term of the second edge from u{j + 1} into u{t.i + 1}: "
                f"u{t.i + 1} takes u{j + 1} twice (as in a * a), so the sum has a term for each.",
                details=lines,
                mistake="repeated-argument",
                hint="loop over the argument positions k of each consumer (for k, p in "
                "enumerate(C.inputs) if p is node), not over the distinct consumers only.",
                book="sum",
                **kw,
                **_draw(graph, **draw),
            )
    if len(terms) > 1:
        kept = [t for t in terms if close(actual, t.product)]
        others = [t for t in terms if kept and t is not kept[-1]]
        # overwritten, not left out: the other terms' edges were evaluated (when the calls are known)
        if kept and (not calls or all((id(graph.nodes[t.i]), t.k) in evaluated for t in others)):
            draw["marks"] = [Mark(j, t.i, t.k, f"{t.product:.4g} lost") for t in others] + [
                Mark(j, kept[-1].i, kept[-1].k, f"{kept[-1].product:.4g} kept")
            ]
            lost = "the other term was" if len(terms) == 2 else f"the other {len(terms) - 1} were"
            return C.fail(
                f"grad_table[{name}] holds one term of its sum, {shown(actual)}: {lost} overwritten.",
                details=lines,
                mistake="overwrite",
                hint="add every consumer's term into the entry (+=, or sum()), do not assign each in turn.",
                book="sum",
                **kw,
                **_draw(graph, **draw),
            )
        repeated = [t for t in terms if t.k == 1 and any(s.i == t.i and s.k == 0 for s in terms)]
        for t in repeated:
            if close(actual, e - t.product):
                draw["marks"] = [Mark(j, t.i, t.k, f"{t.product:.4g} missing")]
                return C.fail(
                    f"grad_table[{name}] misses the term of the second edge from {name} into u{t.i + 1}: "
                    f"u{t.i + 1} takes {name} twice (as in a * a), so the sum has a term for each.",
                    details=lines,
                    mistake="repeated-argument",
                    hint="loop over the argument positions k of each consumer (for k, p in "
                    "enumerate(C.inputs) if p is node), not over the distinct consumers only.",
                    book="sum",
                    **kw,
                    **_draw(graph, **draw),
                )
    missing = _missing_terms(terms, actual)
    if missing:
        draw["marks"] = [Mark(j, t.i, t.k, f"{t.product:.4g} missing") for t in missing]
        edges = ", ".join(f"u{t.i + 1} (argument {t.k + 1})" for t in missing)
        last = any(t.i == n - 1 for t in missing)
        return C.fail(
            f"grad_table[{name}] misses {len(missing)} of its {len(terms)} terms: those of the edges "
            f"into {edges}.",
            details=lines,
            mistake="missing-term",
            hint="sum over every consumer u(i) of u(j), u(n) included: the consumers are among the nodes "
            "after u(j), up to and including u(n)."
            if last
            else "sum over every edge out of u(j): every consumer, every argument position.",
            book="loop",
            **kw,
            **_draw(graph, **draw),
        )
    if terms and close(actual, -e):
        return C.fail(
            f"grad_table[{name}] has the wrong sign.",
            details=lines,
            mistake="sign",
            hint="the terms are added; a minus sign belongs in a local derivative (∂(a − b)/∂b = −1), "
            "which tools.local_derivative already gives.",
            book="loop",
            **kw,
            **_draw(graph, **draw),
        )
    return C.fail(
        f"grad_table[{name}] is wrong: expected {shown(e)}, yours {shown(actual)}.",
        details=lines,
        mistake="wrong-sum",
        book="loop",
        **kw,
        **_draw(graph, **draw),
    )


def _missing_terms(terms: list[Any], actual: Any) -> list[Any]:
    """The terms left out, if the student's number is the sum of a proper subset of them (the largest one)."""
    if not isinstance(actual, (int, float)) or not terms or len(terms) > 12:
        return []
    for size in range(len(terms) - 1, -1, -1):
        for kept in itertools.combinations(range(len(terms)), size):
            if close(actual, math.fsum(terms[i].product for i in kept)):
                return [t for i, t in enumerate(terms) if i not in kept]
    return []


def check_backprop(ns: Any, C: Checker) -> None:
    """The student's grad_table against Algorithm 6.2, entry by entry from u(n) down; its cost in edges."""
    for case in graph_cases():
        with C.case(case.name):
            fn = _fn(ns, "backprop", C)
            expected, steps = algorithm_6_2(Graph(case.build()[0]))
            z, _ = case.build()
            graph = Graph(z)
            before = snapshot(graph.nodes)
            tools.reset_counts()
            try:
                table = C.call(fn, graph, what="backprop(G)", graph=graph, deep=case.deep, book="reverse")
            except Fail as e:
                f = e.failure
                if f.mistake == "missing-entry" and f.node.split(" ")[0] == f"u{len(graph.nodes)}":
                    f.headline = (
                        f"{f.headline[:-1]}: that is u(n), the output z, whose entry starts the table."
                    )
                    f.mistake, f.book, f.hint = "seed", "loop", "grad_table[u(n)] ← 1 before the loop."
                elif f.mistake == "missing-entry":  # a consumer's entry read before it was computed
                    f.headline = (
                        f"{f.headline[:-1]}: it is a consumer, so your loop reached a node before "
                        "its consumers, which come later in u(1)..u(n)."
                    )
                    f.details = [
                        "Algorithm 6.2 runs from u(n) down: then every consumer's entry is in the "
                        "table when a node needs it."
                    ]
                    f.mistake, f.book = "forward-loop", "loop"
                    f.hint = (
                        "for j = n − 1 down to 1: in Python, range(n - 2, -1, -1) over 0-based positions."
                    )
                raise
            count, calls = tools.counts()["local_derivatives"], tools.calls()
            changed = mutation(graph, before)
            if changed:
                raise C.fail(
                    f"backprop(G) changed the graph: {changed}.",
                    details=[
                        "micrograd's backward() writes node.grad; Algorithm 6.2 keeps dz/du(j) in its "
                        "own table and leaves the graph as it found it."
                    ],
                    mistake="mutation",
                    hint="write grad_table[node], not node.grad.",
                    book="table",
                )
            if not isinstance(table, (dict, list, tuple)):
                raise C.fail(
                    f"backprop(G) returned {shown(table)}; it must return the grad_table, a dict "
                    "{node: dz/dnode}.",
                    mistake="not-a-table",
                )
            if isinstance(table, dict) and table and not any(key in graph.index for key in table):
                key = next(iter(table))
                raise C.fail(
                    f"the grad_table's keys are not the nodes of G: the first is {shown(key)} "
                    f"({type(key).__name__}).",
                    details=["The book's grad_table[u(i)] is indexed by the node u(i) itself."],
                    mistake="keys",
                    hint="use the nodes as keys: grad_table[node] = ..., with node from G.nodes.",
                    book="table",
                )
            for j in range(len(graph.nodes) - 1, -1, -1):
                actual = _table_entry(table, graph, j)
                if not close(actual, expected[j]):
                    raise diagnose_entry(C, graph, j, actual, expected, steps, what="backprop", calls=calls)
            if count == 0:
                count = getattr(table, "evaluations", 0)  # the engine's own table says what it evaluated
            if count and count != graph.num_edges:
                more = count > graph.num_edges
                raise C.fail(
                    f"the evaluation count is not the edge count: {count:,} local derivatives evaluated for "
                    f"{graph.num_edges:,} edges.",
                    details=[
                        "Algorithm 6.2 evaluates each edge's ∂u(i)/∂u(j) exactly once. "
                        + (
                            "More means something is recomputed (figure 6.9): a gradient computed "
                            "again along every path instead of read from grad_table."
                            if more
                            else "Fewer means some edges were never evaluated."
                        )
                    ],
                    mistake="recompute" if more else "edges-skipped",
                    hint="read each consumer's gradient from grad_table (computed once, from u(n) down) "
                    "instead of computing it again."
                    if more
                    else "evaluate the local derivative of every edge out of u(j), once.",
                    book="edges",
                )


# ------------------------------------------------------------------------------------------------------
# 5. Algorithm 6.6: build_grad, symbol-to-symbol.


def _counting(ns: Any, name: str) -> tuple[Callable[..., Any], list[int]]:
    """The student's function wrapped to count its calls, the recursive ones included.

    The wrapper replaces the global name the function's own recursive calls look up (the module's, or the
    defining namespace's for a function typed in a REPL); the check runs in a child process, so nothing
    of the student's session is changed.
    """
    fn = getattr(ns, name)
    count = [0]

    def wrapper(*args: Any, **kw: Any) -> Any:
        count[0] += 1
        return fn(*args, **kw)

    module_globals = getattr(fn, "__globals__", None)
    if isinstance(module_globals, dict) and module_globals.get(name) is fn:
        module_globals[name] = wrapper
    return wrapper, count


def check_build_grad(ns: Any, C: Checker) -> None:
    """build_grad driven as Algorithm 6.5 drives it; B checked by value, re-evaluated, differentiated."""
    for case in graph_cases(deep=False):
        with C.case(case.name):
            _fn(ns, "build_grad", C)
            fn, count = _counting(ns, "build_grad")
            z, T = case.build()
            G = Graph(z)
            G_prime = G.prune(T)
            before = snapshot(G.nodes)
            seed = as_value(1.0)
            grad_table: dict[Value, Any] = {z: seed}  # grad_table[z] <- 1
            results = []
            for V in T:  # for V in T: build_grad(V, G, G', grad_table)
                results.append(
                    C.call(fn, V, G, G_prime, grad_table, what="build_grad(V, G, G', grad_table)", graph=G)
                )
            changed = mutation(G, before)
            if changed:
                raise C.fail(
                    f"build_grad changed G: {changed}.",
                    mistake="mutation",
                    hint="B is new nodes that consume G's nodes; G itself stays as it was.",
                )
            _check_B(C, case, G, T, results, grad_table, count[0], len(G_prime.nodes), seed)


def _check_B(
    C: Checker,
    case: Case,
    G: Graph,
    T: list[Value],
    results: list[Any],
    grad_table: dict[Value, Any],
    calls: int,
    n_prime: int,
    seed: Value,
) -> None:
    expected, steps = algorithm_6_2(Graph(case.build()[0]))
    if grad_table.get(G.output) is not seed:
        raise C.fail(
            "grad_table[z], set to 1 before build_grad was called, was replaced: build_grad built the "
            "gradient "
            "of a node that was already in grad_table.",
            details=[
                "Algorithm 6.6 first returns grad_table[V] when V is already in it (section 6.5.6): that "
                "is how grad_table[z] = 1 starts the recursion, and how each gradient is built once."
            ],
            mistake="no-memo",
            hint="begin with: if V in grad_table: return grad_table[V].",
        )
    for V, r in zip(T, results):
        name = _name(G, G.index[V])
        if not isinstance(r, Value):
            raise C.fail(
                f"build_grad returned {shown(r)} for {name}: a number, where symbol-to-symbol "
                "back-propagation "
                "returns a node of B.",
                details=[
                    "B must be a graph that can be evaluated again for new inputs and differentiated "
                    "again; a number can be neither."
                ],
                mistake="number",
                hint="build nodes: op.bprop on Value arguments returns Value nodes; sum them "
                "with +, never take .data.",
                book="symbolic",
                node=name,
            )
        if grad_table.get(V) is not r:
            raise C.fail(
                f"grad_table[{name}] is not the node build_grad returned for it.",
                mistake="not-stored",
                hint="store the sum in grad_table[V] before returning it.",
                node=name,
            )
    for j in range(len(G.nodes) - 1, -1, -1):
        v = G.nodes[j]
        if v in grad_table:
            entry = grad_table[v]
            actual = entry.data if isinstance(entry, Value) else entry
            if not close(actual, expected[j]):
                raise diagnose_entry(C, G, j, actual, expected, steps, what="build_grad", calls=[])
    if calls > max(1, n_prime) + G.num_edges + len(T):
        raise C.fail(
            f"build_grad was called {calls:,} times on a graph whose G' has {n_prime} nodes: gradients "
            "already "
            "in grad_table were built again.",
            details=[
                "Algorithm 6.6 first returns grad_table[V] when V is already in it (section 6.5.6); "
                "without that, every path from z is walked again (figure 6.9's blowup)."
            ],
            mistake="no-memo",
            hint="begin with: if V in grad_table: return grad_table[V].",
        )
    # B is a graph of nodes: evaluate it again at new inputs (Algorithm 6.1), and differentiate it again.
    key_z, key_T = case.build()
    key = grad(key_z, key_T)
    key_G = Graph(key_z)
    variables = [i for i in range(G.n_inputs) if not G.nodes[i].is_constant]
    start = {i: G.nodes[i].data for i in variables}
    wants: list[float] = []
    for factor in (1.1, 0.9, 1.05, 0.95):  # new inputs where the engine's B is defined
        key_new = {key_G.nodes[i]: start[i] * factor for i in variables}
        try:
            wants = [
                KB.forward({u: x for u, x in key_new.items() if u in KB.index}) for KB in map(Graph, key)
            ]
            break
        except DomainError:
            continue
    if not wants:
        return  # no nearby inputs keep this graph in every domain: checked by value above only
    new = {G.nodes[i]: start[i] * factor for i in variables}
    for V, r, kV, kr, want in zip(T, results, key_T, key, wants):
        name = _name(G, G.index[V])
        B = Graph(r)
        try:
            value = B.forward({u: x for u, x in new.items() if u in B.index})
        except DomainError as e:
            raise C.fail(
                f"your B for dz/d{V.label or name} cannot be evaluated at inputs moved by "
                f"{abs(factor - 1):.0%}, where the derivative is {shown(want)}: {e}",
                mistake="B-domain",
                book="symbolic",
                node=name,
            ) from None
        if not close(value, want):
            numbers = [
                i for i, u in enumerate(B.nodes) if u.op is None and u not in G.index and not u.is_constant
            ]
            draw: dict[str, Any] = {"drawing_note": "no number of G was found as a leaf of your B"}
            if numbers:
                draw = _draw(
                    B,
                    wrong=numbers[0],
                    grads=[None] * len(B.nodes),
                    title=f"your B for dz/d{V.label or name} with G's nodes: {len(numbers)} leaf number(s) "
                    "where nodes of G belong",
                )
            raise C.fail(
                f"B does not follow G's inputs: at inputs moved by {abs(factor - 1):.0%}, your "
                f"dz/d{V.label or name} "
                "evaluates to "
                f"{shown(value)}, the derivative there is {shown(want)}.",
                details=[
                    "Some node of B holds a number read from G (.data) where it should consume G's node, "
                    "so evaluating B again for new inputs keeps the old number."
                ],
                mistake="numbers-in-B",
                hint="pass the nodes themselves (C, its inputs) to op.bprop, never their .data.",
                book="symbolic",
                node=name,
                expected=want,
                actual=value,
                **draw,
            )
        second, want2 = grad(r, V), grad(kr, kV)
        if not close(second.data, want2.data):
            raise C.fail(
                f"differentiating your B again gives d²z/d{V.label or name}² = {shown(second.data)}; "
                f"the second derivative is {shown(want2.data)}.",
                mistake="not-differentiable",
                book="again",
                node=name,
                expected=want2.data,
                actual=second.data,
            )


# ------------------------------------------------------------------------------------------------------
# 6. Algorithm 6.4: the MLP's backward pass on floats, layer by layer.


@dataclass
class MLPExample:
    """What ``backward_mlp(net)`` receives: one example's forward pass (Algorithm 6.3) as floats.

    Indices follow the book: layers k = 1..l; index 0 of W, b, a is unused (None), h[0] = x.

    Attributes:
        l: the number of layers.
        W: W[k][m][i], the weight of layer k from unit i of h(k-1) to unit m of h(k) (m rows, i columns).
        b: b[k][m]. a: a[k][m] = b(k) + W(k) h(k-1), the pre-activations. h: h[k][m] = f(a(k)); h[0] = x.
        g: ∇_ŷ J, the gradient on the output layer (one number per output).
        lam: λ of the penalty Ω(θ) = Σ w² over the weights (not the biases), so λ ∇_W Ω = 2 λ W.
        f_prime: ``f_prime(k, a, h)``: f′(a) for layer k's activation f, at the pre-activation a whose
            activation is h (1.0 for the last, linear, layer).
    """

    l: int  # noqa: E741 -- the book's name for the number of layers
    W: list[Any]
    b: list[Any]
    a: list[Any]
    h: list[Any]
    g: list[float]
    lam: float
    f_prime: Callable[[int, float, float], float]
    model: Any = None
    x: Any = None
    y: Any = None


_NETS = [
    ("MLP(3, [2, 1]), tanh, λ = 0.01", 3, [2, 1], "tanh", 0.01, 1),
    ("MLP(3, [4, 2]), tanh, λ = 0.05", 3, [4, 2], "tanh", 0.05, 2),
    ("MLP(2, [3, 3, 2]), sigmoid, λ = 0.1", 2, [3, 3, 2], "sigmoid", 0.1, 3),
]


def mlp_example(nin: int, nouts: list[int], activation: str, lam: float, seed: int) -> tuple[MLPExample, Any]:
    """An MLP and one example through Algorithm 6.3 (:func:`micrograph.nn.forward_mlp`), MSE loss."""
    model = nn.MLP(nin, nouts, activation=activation, seed=seed)
    x = [round(0.3 + 0.4 * i, 2) * (-1) ** i for i in range(nin)]
    y = [0.5 - 0.3 * m for m in range(nouts[-1])]
    fwd = nn.forward_mlp(model, x, y, loss="mse", l2=lam)
    table = Graph(fwd.J).backprop()
    ops = [None] + [nn.ACTIVATIONS[layer.neurons[0].activation] for layer in model.layers]

    def f_prime(k: int, a: float, h: float) -> float:
        op = ops[k]
        return 1.0 if op is None else float(op.local_derivative(0, (float(a),), float(h)))

    net = MLPExample(
        l=len(model.layers),
        W=[None] + [[[w.data for w in n.w] for n in layer.neurons] for layer in model.layers],
        b=[None] + [[n.b.data for n in layer.neurons] for layer in model.layers],
        a=[None] + [[v.data for v in a_k] for a_k in fwd.a[1:]],
        h=[[v.data for v in h_k] for h_k in fwd.h],
        g=[table[v] for v in fwd.y_hat],
        lam=lam,
        f_prime=f_prime,
        model=model,
        x=x,
        y=y,
    )
    return net, fwd


def _layers(result: Any, l: int, what: str, C: Checker) -> dict[int, Any]:  # noqa: E741
    if isinstance(result, dict):
        return result
    if isinstance(result, (list, tuple)):
        if len(result) == l + 1:
            return dict(enumerate(result))
        if len(result) == l:
            return {k + 1: r for k, r in enumerate(result)}
    raise C.fail(
        f"{what} must be a dict {{k: ...}} (or a list indexed by k) for the layers k = 1..{l}; got "
        f"{shown(result)}.",
        mistake="shape",
    )


def check_mlp(ns: Any, C: Checker) -> None:
    """grad_W(k), grad_b(k) for k = l down to 1 against :func:`micrograph.nn.backward_mlp`."""
    for title, nin, nouts, act, lam, seed in _NETS:
        with C.case(title):
            fn = _fn(ns, "backward_mlp", C)
            net, fwd = mlp_example(nin, nouts, act, lam, seed)
            key = nn.backward_mlp(net.model, net.x, net.y, loss="mse", l2=lam)
            snap = (repr(net.W), repr(net.b), repr(net.a), repr(net.h), repr(net.g))
            result = C.call(fn, net, what="backward_mlp(net)")
            if (repr(net.W), repr(net.b), repr(net.a), repr(net.h), repr(net.g)) != snap:
                raise C.fail(
                    "backward_mlp(net) changed net's lists (W, b, a, h or g).",
                    mistake="mutation",
                    hint="build new lists for the gradients; g ← ... rebinds g, it does not write into "
                    "net.g.",
                )
            if not (isinstance(result, (tuple, list)) and len(result) == 2):
                raise C.fail(
                    f"backward_mlp(net) returned {shown(result)}; it must return (grad_W, grad_b).",
                    mistake="shape",
                )
            gW, gb = _layers(result[0], net.l, "grad_W", C), _layers(result[1], net.l, "grad_b", C)
            _compare_mlp(C, net, fwd, key, gW, gb)


def _compare_mlp(
    C: Checker, net: MLPExample, fwd: Any, key: dict[Value, float], gW: dict[int, Any], gb: dict[int, Any]
) -> None:
    graph = Graph(fwd.J)
    for k in range(net.l, 0, -1):  # Algorithm 6.4's order: k = l, l - 1, ..., 1
        layer = net.model.layers[k - 1]
        rows, cols = len(layer.neurons), len(net.h[k - 1])
        Wk: Any = gW.get(k)
        bk: Any = gb.get(k)
        shape_W = _shape(Wk)
        if shape_W != (rows, cols):
            raise C.fail(
                f"grad_W[{k}] has shape {shape_W}; W({k}) is {rows} × {cols} (a row per unit of h({k}), a "
                "column "
                f"per unit of h({k - 1})), and so is its gradient.",
                mistake="transposed" if shape_W == (cols, rows) else "shape",
                hint=f"∇W({k}) J = g h({k - 1})ᵀ: entry [m][i] = g[m] × h({k - 1})[i].",
                book="mlp_w",
            )
        if _shape(bk) != (rows,):
            raise C.fail(
                f"grad_b[{k}] has shape {_shape(bk)}; b({k}) has {rows} entries.",
                mistake="shape",
                book="mlp_b",
            )
        for m, neuron in enumerate(layer.neurons):
            e, a = key[neuron.b], bk[m]
            if not close(a, e):
                fp = net.f_prime(k, net.a[k][m], net.h[k][m])
                code, hint, book = "wrong-b", "", "mlp_b"
                if close(a, e + 2 * net.lam * neuron.b.data) and net.lam:
                    code, hint = "bias-decay", "Ω(θ) here penalises the weights only: ∇b Ω = 0."
                marks: tuple[Mark, ...] = ()
                if code == "wrong-b" and fp != 1.0 and close(a, e / fp):
                    code, hint, book = "no-f-prime", f"multiply g by f′(a({k})) element-wise first.", "mlp_f"
                    marks = _activation_edge(graph, fwd, k, m, f"f′(a) = {fp:.4g} missing")
                raise C.fail(
                    f"grad_b[{k}][{m}] is wrong (layer {k}, unit {m}): expected {shown(e)}, yours "
                    f"{shown(a)}.",
                    mistake=code,
                    hint=hint,
                    book=book,
                    node=f"b({k})[{m}]",
                    expected=e,
                    actual=a,
                    **_mlp_draw(graph, neuron.b, e, a, f"grad_b[{k}][{m}]", marks),
                )
            for i, w in enumerate(neuron.w):
                e, a = key[w], Wk[m][i]
                if not close(a, e):
                    code, hint, book = "wrong-W", "", "mlp_w"
                    if net.lam and close(a, e - 2 * net.lam * w.data):
                        code, hint = "no-penalty", f"add λ ∇W Ω = 2λ W({k}) to g h({k - 1})ᵀ."
                    raise C.fail(
                        f"grad_W[{k}][{m}][{i}] is wrong (layer {k}, row {m}, column {i}): expected "
                        f"{shown(e)}, yours {shown(a)}.",
                        mistake=code,
                        hint=hint,
                        book=book,
                        node=f"W({k})[{m}][{i}]",
                        expected=e,
                        actual=a,
                        **_mlp_draw(graph, w, e, a, f"grad_W[{k}][{m}][{i}]"),
                    )


def _mlp_draw(graph: Graph, param: Value, e: float, a: Any, what: str, marks: tuple[Mark, ...] = ()
              ) -> dict[str, Any]:  # fmt: skip
    return _draw(
        graph,
        wrong=graph.index[param],
        expected=shown(e),
        actual=shown(a),
        marks=marks,
        grads=list(backprop(graph).values()),
        title=f"Algorithm 6.4: {what} is the first wrong gradient (grad: the right values)",
    )


def _activation_edge(graph: Graph, fwd: Any, k: int, m: int, text: str) -> tuple[Mark, ...]:
    """The edge a(k)[m] -> h(k)[m] (the activation f), marked; none for a linear unit."""
    a_node, h_node = fwd.a[k][m], fwd.h[k][m]
    if a_node is h_node or h_node not in graph.index:
        return ()
    return (Mark(graph.index[a_node], graph.index[h_node], 0, text),)


def _shape(x: Any) -> tuple[int, ...] | None:
    if not isinstance(x, (list, tuple)):
        return None
    if x and all(isinstance(r, (list, tuple)) for r in x):
        widths = {len(r) for r in x}
        return (len(x), widths.pop()) if len(widths) == 1 else None
    return (len(x),)


# ------------------------------------------------------------------------------------------------------
# 7. The naive chain rule of equation 6.53, counted.

_NAIVE_VALUE_CASES: list[tuple[str, Callable[[], tuple[Value, Value]]]] = [
    ("a * a: one node takes the same parent twice", lambda: (lambda a: (a * a, a))(Value(1.5, label="a"))),
    (
        "b = a + a, c = b + b: a reused node",
        lambda: (lambda a: ((a + a) + (a + a), a))(Value(0.5, label="a")),
    ),
    (
        "random DAG (seed 1), with respect to x1",
        lambda: (lambda zT: (zT[0], zT[1][0]))(random_dag(1, n_ops=8)),
    ),
]


def check_naive(ns: Any, C: Checker) -> None:
    """dz/dw against the engine, and the counts against the closed forms of figure 6.9's families."""
    cases: list[tuple[str, Callable[[], tuple[Value, Value]], str, int]] = [
        (f"figure 6.9's chain, depth {d}", partial(chain, d), "chain", d) for d in (1, 3, 6)
    ]
    cases += [(name, build, "", 0) for name, build in _NAIVE_VALUE_CASES]
    cases += [(f"the ladder, depth {d}: 2^{d} paths", partial(ladder, d), "ladder", d) for d in (1, 2, 4)]
    for title, build, family, d in cases:
        with C.case(title):
            fn = _fn(ns, "naive_grad", C)
            z, w = build()
            graph = Graph(z)
            want = backprop(graph)[w]
            before = snapshot(graph.nodes)
            tools.reset_counts()
            result = C.call(fn, z, w, what="naive_grad(z, w)", graph=graph)
            counted = tools.counts()
            changed = mutation(graph, before)
            if changed:
                raise C.fail(f"naive_grad(z, w) changed the graph: {changed}.", mistake="mutation")
            value = getattr(result, "value", result)
            if not counted["local_derivatives"] and hasattr(result, "local_derivatives"):
                counted = {"local_derivatives": result.local_derivatives, "evaluations": result.recomputed}
            if not close(value, want):
                shared = any(
                    len([p for p in v.inputs if p.op is not None or p is w]) > 1 for v in graph.nodes
                )
                raise C.fail(
                    f"naive_grad(z, w) = {shown(value)}; dz/dw = {shown(want)}.",
                    details=[
                        "Equation 6.51's sum runs over every path from w to z; a node whose arguments both "
                        "depend on w (a * a, sin(u) + cos(u)) starts two paths."
                    ],
                    mistake="wrong-value",
                    book="sum" if shared else "recompute",
                    hint="sum the terms of every argument that depends on w." if shared else "",
                    expected=want,
                    actual=value if isinstance(value, (int, float)) else shown(value),
                )
            _check_counts(C, family, d, counted, graph.num_edges, naive_cost(z, w))


def _check_counts(
    C: Checker, family: str, d: int, counted: dict[str, int], edges: int, cost: dict[str, int]
) -> None:
    """The counts against figure 6.9's closed forms for a family, else against the engine's naive_cost."""
    if family:
        want = expected_counts(family, d)
        want_local, want_re = want["naive_local_derivatives"], want["naive_recomputed"]
        source = f"figure 6.9's closed forms for the {family} of depth {d}"
    else:
        want_local, want_re = cost["local_derivatives"], cost["recomputed"]
        source = f"the naive rule's counts on this graph ({cost['paths']:,} path(s) from w to z)"
    local, recomputed = counted["local_derivatives"], counted["evaluations"]
    if local == want_local and recomputed == want_re:
        return
    details = [
        f"{source}: {want_local:,} local derivative(s) (one per edge per path) and {want_re:,} recomputed "
        f"operation(s); yours: {local:,} and {recomputed:,}. Back-propagation would evaluate {edges:,} local "
        "derivative(s) and recompute nothing."
    ]
    if local == 0 and recomputed == 0:
        raise C.fail(
            "nothing was counted: use tools.local_derivative and tools.evaluate, which count.",
            details=details,
            mistake="uncounted",
        )
    if recomputed < want_re and (recomputed == 0 or local == edges):
        raise C.fail(
            "your naive rule stores values (or gradients) instead of recomputing them.",
            details=details,
            mistake="stored",
            hint="equation 6.53 recomputes every subexpression from the leaves each time it needs it: "
            "f′(f(f(w))) f′(f(w)) f′(w). Read no .data of a non-leaf; recompute it with tools.evaluate.",
            book="recompute",
        )
    raise C.fail(
        f"the operation counts differ: {local:,} local derivatives and {recomputed:,} recomputations, where "
        f"the naive rule needs {want_local:,} and {want_re:,}.",
        details=details,
        mistake="count",
        hint="for each argument k of u that depends on w: recompute u's arguments and u itself from the "
        "leaves, "
        "then evaluate du/dx_k once.",
        book="recompute",
    )


CHECKERS: dict[str, Callable[[Any, Checker], None]] = {
    "derivatives": check_derivatives,
    "topo": check_topo,
    "forward": check_forward,
    "backprop": check_backprop,
    "build_grad": check_build_grad,
    "mlp_backward": check_mlp,
    "naive": check_naive,
}
