"""What the lesson tests share: random expressions for a student's own input, and a lesson walked through."""

from __future__ import annotations

import random
import re

import lessons

# ruff: noqa: E741  (l is the stepper, as in the lessons' REPL)


def random_expression(seed: int) -> tuple[str, dict[str, float]]:
    """A random expression over two or three variables (reused variables included), with its values.

    Its terms: the variables; a function of a term (tanh, sigmoid, sin, cos, exp, relu); a term with a
    number (``2 * t``, ``t / 2``, ``t ** 3``, ``-t``); log and sqrt of a positive term; two terms added,
    subtracted, multiplied or divided (by a positive term), as a student might type them.
    """
    rng = random.Random(seed)
    names = ["a", "b", "c"][: rng.choice([2, 3])]
    terms = list(names)
    for _ in range(rng.randint(3, 6)):
        kind, t, u = rng.random(), rng.choice(terms), rng.choice(terms)
        c = rng.choice(["2", "0.5", "3", "1.5"])
        if kind < 0.25:
            terms.append(f"{rng.choice(['tanh', 'sigmoid', 'sin', 'cos', 'exp', 'relu'])}({t})")
        elif kind < 0.35:
            terms.append(
                rng.choice(
                    [f"log(1 + {t} * {t})", f"sqrt({t} * {t} + 1)", f"-{t}", f"({t}) ** {rng.choice([2, 3])}"]
                )
            )
        elif kind < 0.5:
            terms.append(
                rng.choice([f"({t} * {c})", f"({c} * {t})", f"({t} + {c})", f"({c} - {t})", f"({t} / {c})"])
            )
        else:
            op = rng.choice(["+", "-", "*", "*", "/"])
            terms.append(f"({t} / (1 + {u} * {u}))" if op == "/" else f"({t} {op} {u})")
    expr = " * ".join(terms[-2:]) if rng.random() < 0.5 else terms[-1]
    used = [n for n in names if re.search(rf"\b{n}\b", expr)]
    return expr, {n: round(rng.uniform(-1.5, 1.5), 2) or 0.5 for n in used}


CASES = [random_expression(seed) for seed in range(6)]
"""Six random expressions with their values: what a student might type."""


def all_steps(n: int) -> list[lessons.Step]:
    """Every step of lesson ``n``, in order."""
    l = lessons.start(n)
    seen = []
    while True:
        seen.append(l.step)
        if isinstance(l.next(), str):
            break
    return seen


def walk(l: lessons.Stepper) -> list[str]:
    """What a student sees at each step of a lesson started as ``l``, 80 columns wide."""
    views = [l.show(width=80)]
    while not isinstance(l.next(), str):
        views.append(l.show(width=80))
    return views
