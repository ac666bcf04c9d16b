"""micrograph's lessons: section 6.5 of *Deep Learning* stepped through on live objects, in a REPL.

>>> import lessons
>>> lessons.list()                  # numbered titles with the book section each covers
>>> l = lessons.start(2)            # Algorithm 6.2, one step per iteration of its loop
>>> l = lessons.start(2, expr="x*y + exp(x)", at={"x": 1.0, "y": 2.0})   # ... on your own expression
>>> l                               # the current step: the book's line, the text, the code, the values
>>> l.next(); l.back(); l.goto(5)   # move; l.graph, l.grad_table ... are the live objects to poke at
>>> l.svg("step.svg")               # the diagram of this step

From a shell: ``python -m lessons`` lists them, ``python -m lessons 2`` steps through lesson 2 (Enter for the
next step, ``b`` back, ``q`` quit); ``micrograph tour --out out`` runs them all and writes every picture.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import builtins
import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lessons.step import Live, Step
    from lessons.stepper import Stepper

__all__ = ["LESSONS", "Listing", "Live", "Step", "Stepper", "list", "load", "start"]

LESSONS: dict[int, str] = {
    1: "lessons.l1_forward",
    2: "lessons.l2_backprop",
    3: "lessons.l3_repeated",
    4: "lessons.l4_memory",
    5: "lessons.l5_mlp",
    6: "lessons.l6_symbolic",
    7: "lessons.l7_higher_order",
    8: "lessons.l8_modes",
}
"""Lesson number -> module."""

_LAZY = {"Live": "lessons.step", "Step": "lessons.step", "Stepper": "lessons.stepper"}
"""Names of the lesson machinery, loaded on first use (PEP 562): ``import lessons`` stays light, so the
command line (:mod:`lessons.cli`) builds its parser without the drawing layer."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'lessons' has no attribute {name!r}")


def load(n: int) -> ModuleType:
    """The module of lesson ``n``.

    Raises:
        ValueError: if there is no lesson ``n`` (the message lists the lessons).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n not in LESSONS:
        raise ValueError(
            f"there is no lesson {n!r}; the lessons are numbered {min(LESSONS)} to {max(LESSONS)}"
        )
    return importlib.import_module(LESSONS[n])


class Listing(builtins.list):  # type: ignore[type-arg]
    """The lesson list: a list of lines that shows itself as the numbered list in a REPL."""

    def __repr__(self) -> str:
        return "\n".join(self) + "\n\nlessons.start(n) begins lesson n; python -m lessons n steps through it."

    __str__ = __repr__


def list() -> Listing:
    """The lessons as lines ``"N. title (book section)"``; in a REPL it shows as the numbered list."""
    lines = Listing()
    for n in LESSONS:
        m = load(n)
        lines.append(f"{n}. {m.TITLE} ({m.SECTION})")
    return lines


def start(n: int, *, expr: str | None = None, at: Mapping[str, float] | None = None) -> Stepper:
    """Start lesson ``n`` at its first step; returns the :class:`Stepper` (``repr`` shows the step).

    Args:
        n: the lesson's number.
        expr: your own expression for lessons 1, 2, 6 and 7, e.g. ``"x*y + exp(x)"`` (the same safe
            parser as the ``micrograph`` command: no ``eval``); None for the lesson's own example.
        at: a value for every variable of ``expr``, e.g. ``{"x": 1.0, "y": 2.0}``.

    Raises:
        ValueError: if there is no lesson ``n``; if the lesson takes no expression; if ``expr`` is
            refused by the parser, or ``at`` misses a variable, names one ``expr`` does not use, or gives
            a value that is not a finite number.
        DomainError: an operation of ``expr`` is undefined at ``at`` (``log(0)``).
    """
    module = load(n)
    if expr is not None and getattr(module, "EXPR", None) is None:
        takes = ", ".join(str(k) for k in LESSONS if getattr(load(k), "EXPR", None) is not None)
        raise ValueError(
            f"lesson {n} does not take an expression: "
            f"{getattr(module, 'NO_EXPR', 'it runs on its own example.')} Lessons {takes} run on yours."
        )
    from lessons.stepper import Stepper

    return Stepper(module, expr=expr, at=at)
