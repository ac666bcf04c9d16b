"""A lesson's step: its text, the book's line, the code it runs, the engine's lines it ran, what it leaves.

A lesson is a row of :data:`lessons.LESSONS` (its number, title, the book's section, a summary) and a
module with the book's lines it steps through (``LINES``) and a generator function ``steps(l)`` that yields
:class:`Step` objects.
The generator reads the live objects that the previous steps left on ``l`` (a namespace, :class:`Live`), so
a step can depend on what came before: lesson 2 yields one step per iteration of Algorithm 6.2's loop, as
many as the graph has nodes. :class:`~lessons.stepper.Stepper` moves a student through them.

Each step's ``run(l)`` is ordinary Python, type-checked and linted like the rest of micrograph; its source
(:attr:`Step.lesson_code`) can be typed again in the REPL, where ``l`` is the stepper. What a student sees
as the code that ran is the engine's: ``engine(l)`` names the lines of micrograph's own functions that the
step ran (or whose run it reads from an observer's record), with the values they gave
(:mod:`lessons.engine_lines`). The text is a function of the live objects, so every number a lesson prints
is computed at that moment, never typed in.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import functools
import inspect
import io
import textwrap
import tokenize
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lessons.engine_lines import EngineLines

__all__ = ["CODE_WIDTH", "Live", "Note", "Ours", "Question", "Step", "fit_code"]


class Note(str):
    """A message from the stepper (past the last step, before the first): shows as plain text in a REPL,
    wrapped to an 80-column terminal."""

    def __repr__(self) -> str:
        return "\n".join(textwrap.fill(line, 79, break_long_words=False) for line in str(self).split("\n"))


class Ours(str):
    """A step's line in micrograph's own words (a summary, a formula, an equation number), not a quotation."""


class Live(types.SimpleNamespace):
    """The live objects a lesson's steps leave behind (``l.graph``, ``l.grad_table``, ``l.z`` ...)."""


@dataclass(frozen=True)
class Question:
    """A question a step asks before the step that answers it (predict, then see).

    Attributes:
        text: the question, e.g. "What will grad_table[u3] be?".
        expected: the true answer, computed by the engine (the answer key), never by the lesson's own loop.
        where: which step shows the answer, e.g. "step 5".
        terms: the terms the answer is the sum of, when it is one (a grad_table entry: one per edge), so
            that a prediction of one term alone is told so; empty otherwise.
    """

    text: str
    expected: float
    where: str = "the next step"
    terms: tuple[float, ...] = ()

    def check(self, value: float) -> str:
        """Whether ``value`` is right, within 0.1% (or 0.0005 near zero), with the true value; a wrong
        value that is one of :attr:`terms` is told that the answer sums them all."""
        from viz.words import fmt

        def near(a: float, b: float) -> bool:
            return abs(a - b) <= max(5e-4, 1e-3 * abs(b))

        if near(value, self.expected):
            return f"Right: {fmt(self.expected)} (you said {value:g}). {self.where.capitalize()} shows why."
        said = f"you said {value:g}"
        if len(self.terms) > 1 and any(near(value, t) for t in self.terms):
            said += f": that is one of its {len(self.terms)} terms, and the entry is their sum"
        return (
            f"Not quite: the answer is {fmt(self.expected)}; {said}. "
            f"{self.where.capitalize()} shows how it is computed."
        )


@dataclass(frozen=True)
class Step:
    """One step of a lesson: what the student reads, the code that runs, and what it leaves behind.

    Attributes:
        title: a short title.
        line: the book's pseudo-code line or equation this step is about (shown verbatim), shown as "Book:"
            when it is the book's own words, as "micrograph:" when it is :class:`Ours` (micrograph's
            summary or formula): only the book is labelled the book.
        run: ``run(l)`` does the step's work on the live namespace ``l`` (sets ``l.z``, ``l.graph`` ...).
        text: ``text(l)`` -> the explanation, written after ``run`` so its numbers are the live ones.
        engine: ``engine(l)`` -> the lines of micrograph's own code this step ran, with their values
            (:class:`~lessons.engine_lines.EngineLines`: one, or several in the order they ran), written
            after ``run``: the "Code that ran".
        values: ``values(l)`` -> a small plain-text table of "the values now", or None.
        figure: ``figure(l)`` -> a ``graphviz.Digraph`` (a diagram) or a ``viz.charts.Chart`` (a plot) for
            this step, or None for no picture.
        params: values bound into ``run`` (shown as assignments before its code), e.g. ``{"j": 4}``.
        question: ``question(l)`` -> a :class:`Question` to predict before moving on, or None.
    """

    title: str
    line: str
    run: Callable[..., None]
    text: Callable[[Any], str]
    engine: Callable[[Any], EngineLines | Sequence[EngineLines]]
    values: Callable[[Any], str] | None = None
    figure: Callable[[Any], Any] | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    question: Callable[[Any], Question | None] | None = None

    @classmethod
    def showing(
        cls, values: Callable[[Any], str] | None, figure: Callable[[Any], Any] | None
    ) -> functools.partial[Step]:
        """:class:`Step`, with ``values`` and ``figure`` given: a lesson's steps each show the lesson's one
        table of the values now and its one picture, so its ``steps`` names them once (``step =
        Step.showing(_values, _figure)``); a step without a picture says ``figure=None``."""
        return functools.partial(cls, values=values, figure=figure)

    def ran(self, live: Any) -> tuple[EngineLines, ...]:
        """The engine's lines this step ran (``engine(live)``, after ``run``), in the order they ran."""
        lines = self.engine(live)
        return tuple(lines) if isinstance(lines, Sequence) else (lines,)

    @property
    def quoted(self) -> bool:
        """True when ``line`` is the book's own words; False when it is :class:`Ours` (micrograph's)."""
        return not isinstance(self.line, Ours)

    @property
    def source(self) -> str:
        """Who wrote ``line``: ``"Book"`` (the book's words) or ``"micrograph"`` (micrograph's words)."""
        return "Book" if self.quoted else "micrograph"

    @property
    def lesson_code(self) -> str:
        """The lesson's own code for the step, to type in the REPL (``l`` is the stepper) or run in a
        notebook: the source of ``run`` without its ``def`` line and docstring, after the bound parameters.

        Lines are at most :data:`CODE_WIDTH` columns where they can be: a trailing comment that makes a
        line longer goes on its own line(s) above the code it explains (:func:`fit_code`).
        """
        return fit_code(_body(self.run, self.params))


CODE_WIDTH = 76
"""Columns of a line of shown code: indented by four in the terminal, it fits an 80-column screen."""


def fit_code(code: str, width: int = CODE_WIDTH) -> str:
    """``code`` with every comment that makes a line longer than ``width`` moved onto lines of its own.

    A trailing comment goes above its line, at the line's indentation, wrapped to ``width``; a long
    comment line is wrapped. Code itself is never changed or cut: the result runs as the original does.
    Comments are found with :mod:`tokenize`, so a ``#`` inside a string is not one.

    Args:
        code: Python source.
        width: the longest line wanted, in columns.

    Returns:
        The source, with the same statements in the same order.
    """
    lines = code.split("\n")
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(code + "\n").readline))
    except (tokenize.TokenError, SyntaxError):
        return code
    comments = {t.start[0] - 1: t.start[1] for t in tokens if t.type == tokenize.COMMENT}
    out: list[str] = []
    for k, line in enumerate(lines):
        column = comments.get(k)
        if len(line) <= width or column is None:
            out.append(line)
            continue
        before = line[:column].rstrip()
        indent = line[: len(line) - len(line.lstrip())]
        text = line[column:].lstrip("#").strip()
        wrapped = textwrap.wrap(text, width=max(20, width - len(indent) - 2), break_on_hyphens=False)
        out += [f"{indent}# {w}" for w in wrapped or [""]]
        if before.strip():
            out.append(before)
    return "\n".join(out)


def _body(fn: Callable[..., Any], params: Mapping[str, Any]) -> str:
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return ""
    lines = src.splitlines()
    # Drop decorators and the signature (which may span lines), up to the line ending with ':'.
    k = 0
    while k < len(lines) and not lines[k].rstrip().endswith(":"):
        k += 1
    body = textwrap.dedent("\n".join(lines[k + 1 :]))
    if body.lstrip().startswith(('"""', "'''")):
        quote = body.lstrip()[:3]
        start = body.index(quote)
        end = body.find(quote, start + 3)
        body = body[end + 3 :].lstrip("\n")
    shown = [f"{name} = {value!r}" for name, value in params.items()]
    return "\n".join([*shown, body.rstrip()]).strip("\n")
