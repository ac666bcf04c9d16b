"""Hypothesis strategies: random DAGs with shared nodes, built as Values, sympy and plain floats.

A random DAG is a *recipe*: 1-3 variables, then 1-8 steps; each step picks an operation and one or two
earlier nodes (variables or earlier steps), so a node often has several consumers (fan-out). Every node
that no later step consumes is added into the output, so every node and every variable is part of the
graph of z. The recipe becomes a :class:`~catalogue.Case`, whose ``build`` interprets it over any
namespace, so the same recipe gives a micrograph graph, an exact sympy expression and a plain-float
function, exactly like the hand-written catalogue.

The operations stay inside their domains by construction: ``log(x*x + 1)``, ``sqrt(x*x + 1)``,
``x / (y*y + 1)``, ``(x*x + 1) ** y``, ``(x*x + 1) ** c``, ``exp(tanh(x))``; ``relu`` and growth are
filtered: a recipe whose values leave [-1e3, 1e3] or whose relu arguments come within 1e-3 of the kink is
rejected (``hypothesis.assume``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from catalogue import Case
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

__all__ = ["DAG_SETTINGS", "OPERATIONS", "dag_cases", "on_catalogue_and_random_dags", "recipes"]

DAG_SETTINGS = settings(
    max_examples=settings().max_examples,  # the profile loaded by conftest.py: 30, or 500 "thorough"
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
"""Modest: 2 shared cores. ``HYPOTHESIS_PROFILE=thorough`` (see conftest.py) runs 500 examples."""

# name -> (arity, function of (ns, x[, y])), each inside its domain for every real input
OPERATIONS: dict[str, tuple[int, Callable[..., Any]]] = {
    "add": (2, lambda ns, x, y: x + y),
    "sub": (2, lambda ns, x, y: x - y),
    "mul": (2, lambda ns, x, y: x * y),
    "div": (2, lambda ns, x, y: x / (y * y + 1.0)),
    "rdiv": (1, lambda ns, x: 1.0 / (x * x + 0.5)),
    "pow": (2, lambda ns, x, y: (x * x + 1.0) ** y),
    "neg": (1, lambda ns, x: -x),
    "square": (1, lambda ns, x: x**2),
    "cube": (1, lambda ns, x: x**3),
    "pow_neg_frac": (1, lambda ns, x: (x * x + 1.0) ** -1.5),
    "pow_frac": (1, lambda ns, x: (x * x + 1.0) ** 0.5),
    "exp": (1, lambda ns, x: ns.exp(ns.tanh(x))),
    "log": (1, lambda ns, x: ns.log(x * x + 1.0)),
    "sqrt": (1, lambda ns, x: ns.sqrt(x * x + 1.0)),
    "tanh": (1, lambda ns, x: ns.tanh(x)),
    "sigmoid": (1, lambda ns, x: ns.sigmoid(x)),
    "relu": (1, lambda ns, x: ns.relu(x)),
    "sin": (1, lambda ns, x: ns.sin(x)),
    "cos": (1, lambda ns, x: ns.cos(x)),
}

Recipe = tuple[tuple[float, ...], tuple[tuple[str, int, int], ...]]


@st.composite
def recipes(draw: Any, max_vars: int = 3, max_steps: int = 8) -> Recipe:
    """A random DAG recipe: (variable values, steps (op name, first argument, second argument))."""
    n_vars = draw(st.integers(1, max_vars))
    values = tuple(draw(st.floats(-1.5, 1.5, allow_nan=False, allow_infinity=False)) for _ in range(n_vars))
    n_steps = draw(st.integers(1, max_steps))
    steps = []
    for s in range(n_steps):
        available = n_vars + s
        op = draw(st.sampled_from(sorted(OPERATIONS)))
        # bias towards recent nodes (deeper graphs) while any earlier node can be picked (fan-out)
        i = draw(st.one_of(st.just(available - 1), st.integers(0, available - 1)))
        j = draw(st.integers(0, available - 1))
        steps.append((op, i, j))
    return values, tuple(steps)


def interpret(recipe: Recipe) -> Callable[..., Any]:
    """The recipe as a ``build(ns, *variables)`` function, usable with every namespace."""
    _, steps = recipe

    def build(ns: Any, *xs: Any) -> Any:
        nodes = list(xs)
        used = [False] * (len(xs) + len(steps))
        for op, i, j in steps:
            arity, f = OPERATIONS[op]
            args = (nodes[i], nodes[j]) if arity == 2 else (nodes[i],)
            used[i] = True
            if arity == 2:
                used[j] = True
            nodes.append(f(ns, *args))
        z = nodes[-1]
        used[-1] = True
        for k, node in enumerate(nodes):  # every unconsumed node (and variable) flows into z
            if not used[k]:
                z = z + node
        return z

    return build


def _describe(recipe: Recipe) -> str:
    values, steps = recipe
    names = [f"x{k}" for k in range(len(values))]
    parts = []
    for s, (op, i, j) in enumerate(steps):
        arity = OPERATIONS[op][0]
        args = f"{names[i]}, {names[j]}" if arity == 2 else names[i]
        names.append(f"t{s}")
        parts.append(f"t{s}={op}({args})")
    return "dag[" + "; ".join(parts) + "]"


def as_case(recipe: Recipe) -> Case:
    """The recipe as a catalogue :class:`~catalogue.Case` (name, variables x0.., build)."""
    values, _ = recipe
    return Case(
        _describe(recipe), {f"x{k}": v for k, v in enumerate(values)}, interpret(recipe), tags=("dag",)
    )


def _well_behaved(case: Case) -> bool:
    """Inside [-1e3, 1e3] at both points, and relu's arguments at least 1e-3 from the kink."""
    for point in (case.point, case.other_point):
        try:
            z = case.evaluate(point)
        except (ArithmeticError, ValueError):
            return False
        if not math.isfinite(z) or abs(z) > 1e3 or case.min_kink(point) < 1e-3:
            return False
        # every intermediate of the finite-difference evaluations stays moderate too
        for k in range(len(point)):
            if abs(case.finite_difference(k, point)) > 1e4:
                return False
    return True


@st.composite
def dag_cases(draw: Any, max_vars: int = 3, max_steps: int = 8) -> Case:
    """A random DAG with shared nodes, as a :class:`~catalogue.Case` (rejects the ill-behaved ones)."""
    case = as_case(draw(recipes(max_vars, max_steps)))
    assume(_well_behaved(case))
    return case


def on_catalogue_and_random_dags(
    check: Callable[[Case], object],
) -> tuple[Callable[..., None], Callable[..., None]]:
    """``check(case)`` as two tests: once per catalogue case, and on random DAGs (:func:`dag_cases`).

    Written ``test_x_on_catalogue, test_x_on_random_dags = on_catalogue_and_random_dags(check)``: pytest
    collects them by those names. The first takes the argument ``catalogue_case``, which tests/conftest.py
    makes one run per catalogue case; the second runs under hypothesis with :data:`DAG_SETTINGS`.
    """

    def on_catalogue(catalogue_case: Case) -> None:
        check(catalogue_case)

    @DAG_SETTINGS
    @given(dag_cases())
    def on_random_dags(case: Case) -> None:
        check(case)

    return on_catalogue, on_random_dags
