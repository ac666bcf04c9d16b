"""What the lesson tests share: random expressions for a student's own input, and a lesson walked through."""

from __future__ import annotations

import random
import re

import lessons

# ruff: noqa: E741  (l is the stepper, as in the lessons' REPL)


def random_expression(seed: int) -> tuple[str, dict[str, float]]:
    """A random expression over two or three variables (reused variables included), with its values."""
    rng = random.Random(seed)
    names = ["a", "b", "c"][: rng.choice([2, 3])]
    terms = list(names)
    for _ in range(rng.randint(3, 6)):
        kind = rng.random()
        if kind < 0.3:
            terms.append(f"{rng.choice(['tanh', 'sigmoid', 'sin', 'exp', 'relu'])}({rng.choice(terms)})")
        else:
            op = rng.choice(["+", "-", "*", "*"])
            terms.append(f"({rng.choice(terms)} {op} {rng.choice(terms)})")
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
