"""Exercise ``derivatives``: the local derivatives ∂u(i)/∂u(j) of six operations, the factor of each term of
Algorithm 6.2.

The answer key is the operation table's rule (``Op.local_derivative``) at fixed points (the last near the
domain's edge) and at points drawn from the check's seed. Nothing of micrograph is importable by the solution
in this exercise. How the exercise is judged, template and all, is :data:`JUDGING`; its name and place are a
row of :data:`lessons.exercises.judges.TABLE`.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.3, Algorithm 6.2.
"""

from __future__ import annotations

import math
import random
import types
from collections.abc import Callable, Iterator
from typing import Any

from lessons.exercises.answers import Schema
from lessons.exercises.drawing import Mark
from lessons.exercises.exercise import Judging
from lessons.exercises.imports import Imports
from lessons.exercises.judges import mistakes
from lessons.exercises.judges.mistakes import Mistake, failure
from lessons.exercises.schema import list_of, plain
from lessons.exercises.verdict import Case, Fail, close, decode, differ, draw, shown
from micrograph.engine import Value
from micrograph.graph import Graph
from micrograph.ops import OPS

__all__ = ["JUDGING", "CODES", "MISTAKES", "cases", "DERIVATIVE_RULES", "POINTS"]

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

POINTS: dict[str, list[tuple[float, ...]]] = {
    "tanh": [(0.5,), (-1.3,), (2.2,), (0.0,)],
    "sigmoid": [(0.5,), (-3.0,), (4.0,), (0.0,)],
    "div": [(1.5, 2.0), (-0.7, 0.4), (2.0, -3.0), (1.0, 1e-3)],
    "pow": [(2.0, 3.0), (0.5, -1.5), (3.0, 0.5), (1e-3, 2.5)],
    "log": [(0.5,), (2.0,), (10.0,), (1e-3,)],
    "sqrt": [(0.25,), (4.0,), (2.0,), (1e-4,)],
}
"""Fixed points inside each operation's domain, the last near its edge."""

_DRAW: dict[str, Callable[[random.Random], tuple[float, ...]]] = {
    "tanh": lambda r: (round(r.uniform(-3, 3), 3),),
    "sigmoid": lambda r: (round(r.uniform(-5, 5), 3),),
    "div": lambda r: (round(r.uniform(-3, 3), 3), round(r.choice((-1, 1)) * r.uniform(0.2, 3), 3)),
    "pow": lambda r: (round(r.uniform(0.1, 3), 3), round(r.uniform(-2, 3), 3)),
    "log": lambda r: (round(r.uniform(0.05, 10), 3),),
    "sqrt": lambda r: (round(r.uniform(0.01, 9), 3),),
}
"""Random points inside each domain, away from its edge."""

Formula = Callable[[float, float, float], float]
"""A rule as a formula in x, y and out (y is 0.0 for an operation of one argument)."""

_WRONG_RULES: list[tuple[str, str, Formula]] = [
    ("tanh_dx", "tanh-input", lambda x, y, out: 1 - x * x),
    ("tanh_dx", "tanh-unsquared", lambda x, y, out: 1 - out),
    ("sigmoid_dx", "sigmoid-input", lambda x, y, out: x * (1 - x)),
    ("div_dy", "quotient-sign", lambda x, y, out: out / y),
    ("div_dy", "div-dy-as-dx", lambda x, y, out: 1 / y),
    ("div_dy", "div-dy-no-x", lambda x, y, out: -1 / (y * y)),
    ("div_dx", "div-dx-as-dy", lambda x, y, out: -x / (y * y)),
    ("pow_dx", "pow-dx-as-dy", lambda x, y, out: out * math.log(x)),
    ("pow_dx", "pow-exponent", lambda x, y, out: y * x**y),
    ("pow_dy", "pow-dy-power-rule", lambda x, y, out: y * x ** (y - 1)),
    ("log_dx", "log-output", lambda x, y, out: 1 / out),
    ("sqrt_dx", "sqrt-input", lambda x, y, out: 0.5 / x),
    ("sqrt_dx", "sqrt-times", lambda x, y, out: 0.5 * out),
]
"""The recognised wrong rules: (function, the mistake's code, the wrong rule), each function's in the order
they are tried; their hints and words are the rows of ``mistakes.toml``."""

CODES: tuple[str, ...] = (
    *(code for _, code, _ in _WRONG_RULES), "sign", "not-a-number", "wrong-derivative",
)  # fmt: skip
"""The codes of the mistakes this judge gives, each a row of ``mistakes.toml``'s [derivatives] table."""

MISTAKES: dict[str, Mistake] = mistakes.of("derivatives", CODES)
"""The mistakes this exercise recognises, the wrong rules' first; the book's sentence behind each is the one
on local derivatives."""


def _mistake(fname: str, args: tuple[float, ...], out: float, actual: Any, expected: float) -> str:
    """The recognised mistake of a wrong local derivative."""
    if isinstance(actual, bool) or not isinstance(actual, (int, float)):
        return "not-a-number"
    x, y = args[0], args[1] if len(args) > 1 else 0.0
    wrong = [(code, formula) for f, code, formula in _WRONG_RULES if f == fname]
    for code, formula in [*wrong, ("sign", lambda x, y, out: -expected)]:
        try:
            if close(actual, formula(x, y, out)) and not close(actual, expected):
                return code
        except (ArithmeticError, ValueError):
            continue
    return "wrong-derivative"


def _judge(fname: str, opname: str, k: int, points: list[tuple[float, ...]]) -> Any:
    op = OPS[opname]

    def judge(answer: dict[str, Any]) -> None:
        results = decode(answer.get("result"))
        for args, actual in zip(points, results):
            out = op.f(*args)
            expected = float(op.local_derivative(k, args, out))
            if close(actual, expected):
                continue
            call = f"{fname}({', '.join(shown(a) for a in args)}, out={shown(out)})"
            leaves = [Value(a, label="xy"[i]) for i, a in enumerate(args)]
            u = op(*leaves)
            u.label = "u"
            graph = Graph(u)
            where = ", ".join(f"{n} = {shown(a)}" for n, a in zip("xy", args))
            details = [f"u = {opname}({', '.join('xy'[: len(args)])}) at {where}: u = {shown(out)}."]
            raise Fail(
                failure(
                    MISTAKES[_mistake(fname, args, out, actual, expected)],
                    f"{call} returned {shown(actual)}; the derivative is {shown(expected)}.",
                    details=details + differ(expected, actual),
                    node="u",
                    expected=expected,
                    actual=actual if isinstance(actual, (int, float)) else shown(actual),
                    **draw(
                        graph,
                        wrong=graph.index[u],
                        expected=shown(expected),
                        actual=shown(actual),
                        marks=[Mark(graph.index[leaves[k]], graph.index[u], k, f"∂u/∂{'xy'[k]}")],
                        title=f"{fname}: the local derivative on the marked edge is wrong",
                        grads=[None] * len(graph.nodes),
                    ),
                )
            )
        if len(results) < len(points):
            raise Fail(
                failure(
                    MISTAKES["not-a-number"], f"{fname} gave {len(results)} answers for {len(points)} points."
                )
            )

    return judge


def cases(seed: int) -> Iterator[Case]:
    """One case per rule: its fixed points and two drawn from the seed."""
    rng = random.Random(seed)
    for fname, opname, k in DERIVATIVE_RULES:
        points = [*POINTS[opname], _DRAW[opname](rng), _DRAW[opname](rng)]
        op = OPS[opname]
        request = {"function": fname, "points": [[list(args), op.f(*args)] for args in points]}
        yield Case(
            f"{fname}: du/d{'xy'[k]} of {opname} at {len(points)} points",
            request,
            _judge(fname, opname, k, points),
            what=f"{fname}(...)",
            book="local",
            cpu=1.0,
        )


def _reference() -> Any:
    """The operation table's rules in the exercise's shape: ``tanh_dx(x, out)``, ``div_dy(x, y, out)`` ..."""

    def rule(opname: str, k: int) -> Callable[..., float]:
        op = OPS[opname]
        return lambda *args: float(op.local_derivative(k, args[:-1], args[-1]))  # (x[, y], out)

    return types.SimpleNamespace(**{f: rule(op, k) for f, op, k in DERIVATIVE_RULES})


TEMPLATE = '''\
"""Local derivatives: du/dx_k for six operations, the factor ∂u(i)/∂u(j) of
each term of Algorithm 6.2.

Each function gets the argument values and the operation's own output `out`
(u itself), as the rules of micrograph's operation table do: some derivatives
are simplest written with `out`.

The book (section 6.5.3, Algorithm 6.2): "Each ∂u(i)/∂u(j) is a function of the
parents u(j) of u(i)".

@SEE@
@CHECK@
"""
import math


def tanh_dx(x, out):
    """u = tanh(x), out = tanh(x): return du/dx."""
    raise NotImplementedError  # TODO


def sigmoid_dx(x, out):
    """u = sigmoid(x) = 1 / (1 + exp(-x)), out = sigmoid(x): return du/dx."""
    raise NotImplementedError  # TODO


def div_dx(x, y, out):
    """u = x / y: return du/dx (y != 0)."""
    raise NotImplementedError  # TODO


def div_dy(x, y, out):
    """u = x / y: return du/dy (y != 0)."""
    raise NotImplementedError  # TODO


def pow_dx(x, y, out):
    """u = x ** y (x > 0): return du/dx."""
    raise NotImplementedError  # TODO


def pow_dy(x, y, out):
    """u = x ** y (x > 0): return du/dy."""
    raise NotImplementedError  # TODO


def log_dx(x, out):
    """u = log(x) (x > 0): return du/dx."""
    raise NotImplementedError  # TODO


def sqrt_dx(x, out):
    """u = sqrt(x) (x > 0): return du/dx."""
    raise NotImplementedError  # TODO
'''

JUDGING = Judging(
    template=TEMPLATE,
    cases=cases,
    answer=Schema({"result": list_of(plain, lambda ctx: ctx.points)}),
    imports=Imports(
        "the local derivatives with math", frozenset({"math", "__future__", "typing"}), real=True
    ),
    reference=_reference,
    nodes=False,
)
"""How the exercise is judged: the template, the judge (:func:`cases`, :data:`MISTAKES`), what a solution may
import (math, and nothing of micrograph's), the operation table's rules as the reference."""
