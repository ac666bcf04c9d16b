"""The stepper a student moves through a lesson with, in a REPL: ``next``, ``back``, ``goto``, ``restart``.

A :class:`Stepper` runs a lesson's steps (:mod:`lessons.step`) one at a time on its live objects, on the
lesson's own example or on the student's expression (``expr=``, ``at=``), and shows the current step (its
record, :class:`lessons.shown.Shown`, rendered by :mod:`lessons.showing`). Going back replays the lesson
from its start up to the step asked for (the steps mutate live objects, such as a node's value, so a
replay is the simple way to be exact). Expensive results that do not depend on the student (training a
network) are kept in ``l.memo`` across replays.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import types
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lessons import Lesson
from lessons.engine_lines import EngineLines, render
from lessons.showing import as_html, as_text, picture_svg
from lessons.shown import Shown
from lessons.step import CODE_WIDTH, Live, Note, Question, Step
from micrograph import Graph, Value
from micrograph.expr import bind, build, variables

__all__ = ["Stepper"]


def _expression(
    lesson: Lesson, expr: str | None, at: Mapping[str, float] | None
) -> tuple[str | None, dict[str, float]]:
    """The expression and values a lesson runs on: the student's, checked, or the lesson's default.

    Raises:
        ValueError: the lesson takes no expression; ``at`` without ``expr``; ``expr`` that the parser
            refuses (an :class:`~micrograph.expr.ExprError`, a ValueError), or that has no variable;
            values that :func:`micrograph.expr.bind` refuses (a variable with no
            value in ``at``, a name in ``at`` the expression does not use, a value that is not a finite
            number).
        DomainError: an operation of ``expr``, or its local derivative, is undefined at ``at`` (a
            ValueError too; Algorithm 6.2 on the expression's graph raises it, naming the node).
    """
    if expr is None:
        if at is not None:
            raise ValueError(f"lesson {lesson.number}: at={dict(at)!r} given without expr=")
        if not lesson.takes_expr:
            return None, {}
        module = lesson.load()  # the lesson's default example is its own: EXPR and AT
        return str(module.EXPR), dict(module.AT)
    if not lesson.takes_expr:
        raise ValueError(f"lesson {lesson.number} does not take an expression: {lesson.no_expr}")
    if not isinstance(expr, str):
        raise ValueError(
            f'lesson {lesson.number}: expr must be a string such as "x*y + exp(x)", got {expr!r}'
        )
    if not variables(expr):  # the safe parser of the command line: ExprError (a ValueError) if refused
        raise ValueError(f"lesson {lesson.number}: expr={expr!r} has no variable to differentiate by")
    values = bind(expr, at or {}, option="at")
    z = build(expr, {n: Value(x, label=n) for n, x in values.items()})
    # Every lesson that takes an expression differentiates it: refuse, before any step runs, a point
    # where an operation or a local derivative is undefined (DomainError names the node and value).
    Graph(z).backprop()
    return expr, values


def exercises_of(lesson: int) -> tuple[str, ...]:
    """The exercises where the student writes the algorithm lesson ``lesson`` steps through, in the book's
    order: those whose module names this lesson (:attr:`lessons.exercises.exercise.Exercise.lesson`)."""
    from lessons.exercises import EXERCISES  # the exercises' judges, loaded at a lesson's last step only

    return tuple(e.name for e in EXERCISES.values() if e.lesson == lesson)


def _exercise_note(names: tuple[str, ...]) -> str:
    """The closing paragraph of a lesson: the exercises where the student writes its algorithm."""
    if len(names) == 1:
        n = names[0]
        return (
            f"Write it yourself: the exercise {n}. micrograph exercise start {n} writes {n}.py, a template "
            f"with the book's pseudo-code; micrograph exercise check {n}.py checks your code against "
            "micrograph's own algorithm."
        )
    return (
        f"Write it yourself: the exercises {', '.join(names[:-1])} and {names[-1]}. micrograph exercise "
        "start NAME writes NAME.py, a template with the book's pseudo-code; micrograph exercise check "
        "NAME.py checks your code against micrograph's own algorithm."
    )


class Stepper:
    """A lesson being stepped through: shows the current step on ``repr``; ``next``/``back``/``goto``.

    The live objects of the lesson are attributes: ``l.graph``, ``l.grad_table``, ``l.z`` ... (see
    :meth:`objects`). Moving past either end returns a message and stays put; it never raises.

    Args:
        lesson: the lesson's row of :data:`lessons.LESSONS` (its number, title, section, module).
    """

    def __init__(
        self,
        lesson: Lesson,
        *,
        memo: dict[str, Any] | None = None,
        expr: str | None = None,
        at: Mapping[str, float] | None = None,
    ) -> None:
        self._lesson = lesson
        self._module = lesson.load()
        self._memo: dict[str, Any] = {} if memo is None else memo
        self._expr, self._at = _expression(lesson, expr, at)
        self._reset()

    # --- the lesson ---------------------------------------------------------------------------------
    @property
    def number(self) -> int:
        """The lesson's number."""
        return self._lesson.number

    @property
    def title(self) -> str:
        """The lesson's title."""
        return self._lesson.title

    @property
    def section(self) -> str:
        """The book's section and algorithm the lesson covers."""
        return self._lesson.section

    def _reset(self) -> None:
        self._live = Live(memo=self._memo)
        if self._expr is not None:
            self._live.expr, self._live.at = self._expr, dict(self._at)
        self._gen: Iterator[Step] = self._module.steps(self._live)
        self._steps: list[Step] = []
        self._texts: list[str] = []
        self._engines: list[tuple[EngineLines, ...]] = []
        self._questions: list[Question | None] = []
        self._peeked: Step | None = None
        self._done = False
        self._pos = -1
        self._advance()

    def _has_next(self) -> bool:
        """Whether the lesson has a step after the last one run (the generator only builds Steps; running
        them is :meth:`_advance`'s job, so looking ahead changes nothing)."""
        if self._peeked is None and not self._done:
            self._peeked = next(self._gen, None)
            self._done = self._peeked is None
        return self._peeked is not None

    def _advance(self) -> bool:
        """Run the next step of the lesson and make it current; False at the end."""
        if not self._has_next():
            return False
        step, self._peeked = self._peeked, None
        assert step is not None
        step.run(self._live, **step.params)
        self._steps.append(step)
        self._texts.append(step.text(self._live))
        self._engines.append(step.ran(self._live))
        self._questions.append(step.question(self._live) if step.question is not None else None)
        self._pos = len(self._steps) - 1
        return True

    @property
    def step(self) -> Step:
        """The current :class:`Step`."""
        return self._steps[self._pos]

    @property
    def index(self) -> int:
        """The current step's number, 1-based."""
        return self._pos + 1

    def __len__(self) -> int:
        """The number of steps (runs the lesson to its end in a separate copy to count them)."""
        if self._done or (self._pos == len(self._steps) - 1 and not self._has_next()):
            return len(self._steps)
        if "_steps" not in self._memo:  # the count is the same on every run of a lesson: count it once
            probe = Stepper(
                self._lesson, memo=self._memo, expr=self._expr, at=self._at if self._expr else None
            )
            while probe._advance():
                pass
            self._memo["_steps"] = len(probe._steps)
        return int(self._memo["_steps"])

    @property
    def at_end(self) -> bool:
        """True on the last step."""
        return self._pos == len(self._steps) - 1 and not self._has_next()

    # --- moving -------------------------------------------------------------------------------------
    def next(self) -> Stepper | Note:
        """Go to the next step and show it; at the last step, say so and stay."""
        if self._pos < len(self._steps) - 1:
            self._pos += 1
            return self
        if self._advance():
            return self
        return Note(f"That was the last step ({self.index}) of lesson {self.number}.")

    def back(self) -> Stepper | Note:
        """Go to the previous step (replaying the lesson up to it); at the first step, say so and stay."""
        if self._pos == 0:
            return Note(f"This is the first step of lesson {self.number}.")
        return self._replay(self._pos - 1)

    def goto(self, k: int) -> Stepper | Note:
        """Go to step k (1-based); a k outside the lesson gets a message saying how many steps there are."""
        if not isinstance(k, int) or isinstance(k, bool):
            return Note(f"goto takes a step number, got {k!r}")
        if k < 1 or (k > len(self._steps) and k > len(self)):
            return Note(
                f"Lesson {self.number} has steps 1 to {len(self)}; there is no step {k}. "
                f"You are at step {self.index}."
            )
        while len(self._steps) < k and self._advance():
            pass
        return self._replay(k - 1)

    def restart(self) -> Stepper:
        """Start the lesson again from step 1 with fresh objects."""
        self._reset()
        return self

    def _replay(self, pos: int) -> Stepper:
        """Make step ``pos`` (0-based, already run) current with the live objects exactly as it left them."""
        if pos == len(self._steps) - 1:
            self._pos = pos
            return self
        # A step's run changes live objects; replaying from the start is the exact way back.
        self._reset()
        while self._pos < pos and self._advance():
            pass
        return self

    # --- predict, then see ------------------------------------------------------------------------
    @property
    def question(self) -> Question | None:
        """The current step's :class:`Question` (answer it with :meth:`answer`), or None."""
        return self._questions[self._pos]

    def answer(self, value: float) -> Note:
        """Check your answer to the current step's question: right or wrong, with the true value.

        Args:
            value: your prediction, a number.

        Returns:
            A message saying whether ``value`` is right (within 0.1%) and what the true value is.
        """
        q = self.question
        if q is None:
            return Note(f"Step {self.index} of lesson {self.number} asks no question.")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return Note(f"answer takes a number, got {value!r}")
        return Note(q.check(float(value)))

    # --- what is live ---------------------------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        live = self.__dict__.get("_live")
        if live is not None and name in vars(live):
            return vars(live)[name]
        raise AttributeError(
            f"lesson {self.__dict__.get('_lesson', types.SimpleNamespace(number='?')).number} has no live "
            f"object {name!r} at this step; live now: {', '.join(self.objects()) or 'none'}"
        )

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.objects()))

    def objects(self) -> list[str]:
        """The names of the live objects at this step (``l.<name>``), in the order they were made."""
        return [k for k in vars(self._live) if k != "memo" and not k.startswith("_")]

    # --- showing ------------------------------------------------------------------------------------
    @property
    def text(self) -> str:
        """The current step's explanation, with the live numbers; the last step's ends by naming the
        exercise (``micrograph exercise start NAME``) where the student writes the lesson's algorithm."""
        text = self._texts[self._pos]
        names = exercises_of(self.number) if self.at_end else ()
        if names:
            text += "\n\n" + _exercise_note(names)
        return text

    @property
    def engine(self) -> tuple[EngineLines, ...]:
        """The lines of micrograph's own code the current step ran, with the values they gave."""
        return self._engines[self._pos]

    @property
    def code(self) -> str:
        """The current step's "Code that ran": the engine's lines (:attr:`engine`) as every view shows
        them, at most :data:`~lessons.step.CODE_WIDTH` columns a line ('' when it names none)."""
        return render(self.engine, CODE_WIDTH)

    def values(self) -> str:
        """The current step's table of values now ('' when it has none)."""
        v = self.step.values
        return v(self._live) if v is not None else ""

    def figure(self) -> Any:
        """The current step's picture: a ``graphviz.Digraph``, a ``viz.charts.Chart``, or None."""
        f = self.step.figure
        return f(self._live) if f is not None else None

    def __repr__(self) -> str:
        return self.show()

    def show(self, *, width: int | None = None, keys: str | None = None, place: str = "terminal") -> str:
        """The current step as plain text: title, the book's line, the text, the code, the values now.

        Args:
            width: wrap the text to this many columns (default: the terminal's width, at most 100).
            keys: the last line, the keys that move on (default: the REPL's ``l.next()  l.back() ...``).
            place: ``"terminal"`` or ``"page"``, for how a question is answered there.
        """
        return as_text(Shown.of(self), width=width, keys=keys, place=place)

    def _repr_html_(self) -> str:
        """The current step as HTML, with the step's picture inlined as SVG (for Jupyter)."""
        return as_html(Shown.of(self, picture=True))

    def svg_text(self) -> str:
        """The current step's picture as SVG source ('' when the step has none)."""
        return picture_svg(self.figure())

    def svg(self, path: str | Path = "step.svg", *, overwrite: bool = True) -> Path | Note:
        """Write the current step's picture to ``path`` (.svg, .png, .pdf; a diagram also .dot).

        Returns:
            The path written, or a message when this step has no picture.

        Raises:
            FileExistsError: if the file exists and ``overwrite`` is False.
        """
        fig = self.figure()
        if fig is None:
            return Note(f"Step {self.index} of lesson {self.number} has no picture.")
        import viz

        return viz.save(fig, Path(path), overwrite=overwrite)
