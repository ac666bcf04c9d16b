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
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lessons.step import Live, Step
    from lessons.stepper import Stepper

__all__ = ["LESSONS", "Lesson", "Listing", "Live", "Step", "Stepper", "lesson", "list", "load", "start"]


@dataclass(frozen=True)
class Lesson:
    """A lesson, as the lists name it: a row of :data:`LESSONS`, read without importing the lesson.

    Attributes:
        number: the lesson's number, from 1.
        module: the module that holds its steps (``steps(l)``, the book's ``LINES`` and, for a lesson that
            takes an expression, its default ``EXPR`` and ``AT``), imported by :meth:`load`.
        title: its title.
        section: the book's section and algorithm it covers.
        summary: one line on what it shows.
        no_expr: why it runs on its own example and takes no expression of the student's; None: it takes
            one (``lessons.start(n, expr=..., at=...)``).
    """

    number: int
    module: str
    title: str
    section: str
    summary: str
    no_expr: str | None = None

    @property
    def takes_expr(self) -> bool:
        """True when the lesson runs on the student's expression too."""
        return self.no_expr is None

    def load(self) -> ModuleType:
        """The lesson's module (imported on first use: it draws, so ``import lessons`` stays light)."""
        return importlib.import_module(self.module)


LESSONS: dict[int, Lesson] = {
    row.number: row
    for row in (
        Lesson(
            1,
            "lessons.l1_forward",
            title="Forward propagation over u(1)..u(n)",
            section="section 6.5.3, Algorithm 6.1",
            summary=(
                "A graph is an ordered node list; Algorithm 6.1 computes each u(i) from its parents "
                "Pa(u(i)), in order."
            ),
        ),
        Lesson(
            2,
            "lessons.l2_backprop",
            title="Back-propagation with the grad_table",
            section="section 6.5.3, Algorithm 6.2",
            summary=(
                "Algorithm 6.2 fills grad_table from u(n) down to u(1); each entry sums over the node's "
                "consumers."
            ),
        ),
        Lesson(
            3,
            "lessons.l3_repeated",
            title="Repeated subexpressions: the naive chain rule against back-propagation",
            section="sections 6.5.2-6.5.3, figure 6.9, equations 6.50-6.53",
            summary=(
                "Summing over paths recomputes shared subexpressions: quadratic on a chain, exponential on "
                "a ladder."
            ),
            no_expr=(
                "it studies the shapes of figure 6.9 (chains and ladders of growing depth), built by the "
                "lesson."
            ),
        ),
        Lesson(
            4,
            "lessons.l4_memory",
            title="Store or recompute: memory against time",
            section="section 6.5.2, equations 6.52-6.53; checkpointing",
            summary=(
                "Back-propagation stores every value (memory n, time n); recomputing trades time for memory."
            ),
            no_expr="it measures memory on chains of growing length, built by the lesson.",
        ),
        Lesson(
            5,
            "lessons.l5_mlp",
            title="The MLP: Algorithms 6.3 and 6.4, then training on Iris",
            section="section 6.5.4, Algorithms 6.3 and 6.4",
            summary=(
                "A network is a graph: Algorithm 6.4's layer-by-layer gradients equal Algorithm 6.2's; then"
                " we train."
            ),
            no_expr="it trains a network on the Iris data, not a formula.",
        ),
        Lesson(
            6,
            "lessons.l6_symbolic",
            title="Symbol-to-symbol derivatives: G and B side by side",
            section="sections 6.5.5-6.5.6, figure 6.10, Algorithms 6.5 and 6.6",
            summary=(
                "grad(z, T) adds the derivatives to the graph as new nodes B: evaluate, draw, differentiate"
                " them."
            ),
        ),
        Lesson(
            7,
            "lessons.l7_higher_order",
            title="Higher-order derivatives and Hessian-vector products",
            section="section 6.5.10, equation 6.59",
            summary=(
                "B is a graph, so grad(grad(z, w), w) works; H v = grad((grad f)^T v) costs two gradients, "
                "not n."
            ),
        ),
        Lesson(
            8,
            "lessons.l8_modes",
            title="Forward mode and reverse mode",
            section="sections 6.5.9-6.5.10",
            summary=(
                "The same local derivatives, multiplied from the inputs (J v) or from the outputs: n or m "
                "passes."
            ),
            no_expr=(
                "it compares the two modes on functions of several inputs and outputs, built by the lesson."
            ),
        ),
    )
}
"""The lessons, by number: the one place that says which lessons there are and what each is called."""

_LAZY = {"Live": "lessons.step", "Step": "lessons.step", "Stepper": "lessons.stepper"}
"""Names of the lesson machinery, loaded on first use (PEP 562): ``import lessons`` stays light, so the
command line (:mod:`lessons.cli`) builds its parser without the drawing layer."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'lessons' has no attribute {name!r}")


def lesson(n: int) -> Lesson:
    """The row of lesson ``n`` in :data:`LESSONS`.

    Raises:
        ValueError: if there is no lesson ``n`` (the message lists the lessons).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n not in LESSONS:
        from micrograph.errors import short_repr

        raise ValueError(
            f"there is no lesson {short_repr(n)}; the lessons are numbered {min(LESSONS)} to {max(LESSONS)}"
        )
    return LESSONS[n]


def load(n: int) -> ModuleType:
    """The module of lesson ``n``.

    Raises:
        ValueError: if there is no lesson ``n`` (the message lists the lessons).
    """
    return lesson(n).load()


class Listing(builtins.list):  # type: ignore[type-arg]
    """The lesson list: a list of lines that shows itself as the numbered list in a REPL, each line wrapped
    to an 80-column terminal."""

    def __repr__(self) -> str:
        shown = [textwrap.fill(line, 79, subsequent_indent="   ", break_long_words=False) for line in self]
        how = "lessons.start(n) begins lesson n; python -m lessons n steps through it."
        return "\n".join(shown) + "\n\n" + how

    __str__ = __repr__


def list() -> Listing:
    """The lessons as lines ``"N. title (book section)"``; in a REPL it shows as the numbered list."""
    lines = Listing()
    for n, row in LESSONS.items():
        lines.append(f"{n}. {row.title} ({row.section})")
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
    row = lesson(n)
    if expr is not None and not row.takes_expr:
        takes = ", ".join(str(k) for k, other in LESSONS.items() if other.takes_expr)
        raise ValueError(
            f"lesson {n} does not take an expression: {row.no_expr} Lessons {takes} run on yours."
        )
    from lessons.stepper import Stepper

    return Stepper(row, expr=expr, at=at)
