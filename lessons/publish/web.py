"""What the site's page asks of micrograph running in Pyodide: lesson steps and exercise checks as JSON.

The static site (``micrograph site``) runs micrograph in the browser with Pyodide, in a Web Worker of the
page's (``site/src/python.js``), off the page's thread. The worker calls the functions here when the page
asks; every answer is a string (JSON, SVG or HTML) that the page only displays:

* :class:`LessonView` steps a lesson (next, back, go to step) and returns what the REPL shows (the same
  :meth:`~lessons.stepper.Stepper.show` text) with the step's picture: a drawing laid out by the page's
  Graphviz (see :func:`viz.render.set_layout`), or a plot as its :class:`viz.charts.Chart`'s data, which the
  page draws with Observable Plot (the REPL draws the same Chart with matplotlib, which is not part of the
  browser's Python);
* an exercise check is :class:`lessons.publish.web_check.ExerciseCheck`: the judge of ``micrograph exercise
  check``, driven by the page one action at a time.

Reference: Goodfellow, Bengio & Courville (2016), Deep Learning, section 6.5.
"""

from __future__ import annotations

import functools
import json
import re
import urllib.parse
from collections.abc import Callable
from typing import Any

import tqdm

import lessons
from lessons.exercises import EXERCISES
from lessons.exercises.templates import template
from lessons.showing import as_text, picture_svg
from lessons.shown import Shown
from micrograph.engine import Value
from micrograph.expr import bind, build, parse_binding
from viz.charts import Chart
from viz.dot import GraphTooLarge
from viz.explore import explore
from viz.render import set_layout, svg_element

__all__ = ["setup", "catalogue", "parse_at", "explorer_html", "LessonView", "step_json"]

tqdm.tqdm.monitor_interval = 0  # the page's Python starts no thread: no monitor, no warning that it cannot

WIDTH = 99
"""Columns of a step's text: ``python -m lessons N`` in a terminal 100 columns wide prints the same."""


def setup(layout: Callable[[str], str]) -> None:
    """Lay drawings out with the page's Graphviz: ``layout(dot_source) -> svg_text``."""
    set_layout(layout)


@functools.cache
def catalogue() -> str:
    """The lessons (number, title, section, whether it takes an expression, its default expression and
    values), the exercises (name, title, book, template) and the note shown for a solution that names numpy
    (:data:`NUMPY_NOTE`), as JSON. Computed once (it depends on nothing the page says)."""
    items = []
    for n, row in lessons.LESSONS.items():
        expr, at = None, ""
        if row.takes_expr:  # its default example, the lesson's own
            m = row.load()
            expr, at = m.EXPR, ", ".join(f"{k}={v:g}" for k, v in m.AT.items())
        items.append({"number": n, "title": row.title, "section": row.section, "expr": expr, "at": at})
    exercises = [
        {"name": e.name, "title": e.title, "book": e.book, "template": template(e.name, "page")}
        for e in EXERCISES.values()
    ]
    return json.dumps({"lessons": items, "exercises": exercises, "numpy_note": NUMPY_NOTE})


def prepare() -> None:
    """What every start of the page computes first, computed once by the site's build before it saves
    Python's memory (``site/src/snapshot.mjs``), so that the page starts with it in memory: the
    :func:`catalogue`, and lesson 1's first step as :meth:`LessonView.state` makes it, but for the
    layout of its drawing (the build has no Graphviz), which imports what a lesson's step imports and reads
    the engine's source that its "Code that ran" quotes. Nothing it computes is kept but the catalogue."""
    catalogue()
    shown = Shown.of(lessons.start(1), picture=True)
    as_text(shown, width=WIDTH, keys="", place="page")


VALUES = "the Values box"
"""Where the page's student types an expression's values: the page's words where the command line says
``--at`` and Python ``at=``."""

NUMPY_NOTE = (
    "numpy is not available in this page (Python here runs in your browser, without numpy): a solution that "
    "imports it cannot load. Write it with lists and loops; numpy solutions pass when checked on a computer "
    "with micrograph installed."
)
"""What the page's exercise editor says, before Check, when the solution names numpy."""


def read_address(query: str) -> str:
    """What a link asks the page for, checked: its ``?lesson=N&expr=...&at=...&step=K``, ``?exercise=NAME``
    and ``?explore=...&explore_at=...&predict=1``, as JSON with a sentence for each part that cannot be
    used (the page falls back to its lists and says why, instead of failing).

    Args:
        query: the address's query string (``location.search``), with or without its ``?``.

    Returns:
        JSON: ``lesson`` (a lesson's number, or None), ``expr`` and ``at`` ("" where the lesson takes no
        expression), ``step`` (a step number, or None), ``exercise`` (a name, or None), ``explore``,
        ``explore_at``, ``predict`` and ``notes`` (the sentences).
    """
    params = urllib.parse.parse_qs(query.lstrip("?"), keep_blank_values=True)

    def one(name: str) -> str | None:
        values = params.get(name)
        return values[-1] if values else None

    notes: list[str] = []
    out: dict[str, Any] = {"lesson": None, "expr": "", "at": "", "step": None, "exercise": None}
    lesson = one("lesson")
    if lesson is not None:
        number = int(lesson) if lesson.strip().isdecimal() else None
        if number in lessons.LESSONS:
            out["lesson"] = number
        else:
            notes.append(
                f"There is no lesson {lesson.strip()[:20]!r} here: choose one of lessons "
                f"{min(lessons.LESSONS)} to {max(lessons.LESSONS)} in the list."
            )
    expr = one("expr")
    if expr is not None and out["lesson"] is not None:
        if lessons.LESSONS[out["lesson"]].takes_expr:
            out["expr"], out["at"] = expr, one("at") or ""
        else:
            notes.append(
                f"Lesson {out['lesson']} runs on its own example, so the expression in the address was left "
                "out."
            )
    step = one("step")
    if step is not None:
        if step.strip().isdecimal() and int(step) >= 1:
            out["step"] = int(step)
        else:
            notes.append(f"{step.strip()[:20]!r} is not a step number; the lesson starts at step 1.")
    exercise = one("exercise")
    if exercise is not None:
        if exercise in EXERCISES:
            out["exercise"] = exercise
        else:
            notes.append(
                f"There is no exercise {exercise.strip()[:30]!r} here: choose one in the Exercises list."
            )
    out["explore"] = one("explore")
    out["explore_at"] = one("explore_at") or ""
    out["predict"] = one("predict") == "1"
    out["notes"] = notes
    return json.dumps(out)


def parse_at(text: str) -> dict[str, float]:
    """The values typed for an expression's variables: ``"x=1, y=2"`` -> ``{"x": 1.0, "y": 2.0}``.

    Raises:
        ValueError: a binding that is not ``NAME=NUMBER`` (the command line's ``--at`` parser says which),
            or a name given twice.
    """
    values: dict[str, float] = {}
    for word in (w for w in re.split(r"[,\s]+", text.strip()) if w):
        name, value = parse_binding(word, option=VALUES)
        if name in values:
            raise ValueError(f"{name} is given twice ({values[name]:g} and {value:g}); give it once")
        values[name] = value
    return values


EXPLORER_MAX_NODES = 1000
"""The largest G (and B) the page's explorer draws: an edge longer than 8 ranks is drawn from a copy of its
source (:mod:`viz.explore_layout`), so Graphviz lays out even inputs with a hundred consumers in a fraction of
a second; ``make bench`` (benchmarks/site.py) draws G of 502 nodes and B of 698 in the page."""


def explorer_html(expr: str, at: str, predict: bool = False) -> str:
    """The explorer (:func:`viz.explore.explore`) of the student's expression, as its self-contained page.

    Args:
        expr: the expression, e.g. ``"tanh(tanh(tanh(w)))"`` (the command line's parser, no ``eval``).
        at: the values of its variables, ``"w=0.5"``.
        predict: predict mode (the student types the grad_table entries).

    Raises:
        ValueError: the expression refused by the parser (ExprError), a variable without a value, a value
            for a name the expression does not use, or an operation undefined at the values (DomainError);
            G or B with more than :data:`EXPLORER_MAX_NODES` nodes (in the page's words).
    """
    values = bind(expr, parse_at(at), option=VALUES)
    z = build(expr, {n: Value(x, label=n) for n, x in values.items()})
    if not isinstance(z, Value):
        raise ValueError(f"{expr} is a constant: there is nothing to differentiate")
    try:
        return explore(z, predict=predict, max_nodes=EXPLORER_MAX_NODES).html()
    except GraphTooLarge as e:  # in the page's words: it has no max_nodes to pass
        raise ValueError(e.text("page")) from None


class LessonView:
    """One lesson being stepped in the page.

    Args:
        number: the lesson's number.
        expr: the student's expression for lessons 1, 2, 6 and 7 ("" for the lesson's own example).
        at: the values of its variables, ``"x=1, y=2"``.

    Raises:
        ValueError: as :func:`lessons.start` (no such lesson, an expression refused, a missing value), or
            :func:`parse_at`; DomainError (a ValueError) where an operation is undefined at the values.
    """

    def __init__(self, number: int, expr: str = "", at: str = "") -> None:
        if expr.strip():
            values = parse_at(at)
            bind(expr, values, option=VALUES)  # the page's words for a missing or extra value, first
            self.stepper = lessons.start(number, expr=expr, at=values)
        else:
            self.stepper = lessons.start(number)

    def move(self, how: str, k: int = 0, width: int = 0) -> str:
        """``"next"``, ``"back"``, ``"goto"`` (step ``k``) or ``"here"``; returns :meth:`state`'s JSON, its
        text wrapped to ``width`` columns (what the page's box holds, measured there; 0: :data:`WIDTH`)."""
        note = ""
        if how == "next":
            moved = self.stepper.next()
        elif how == "back":
            moved = self.stepper.back()
        elif how == "goto":
            moved = self.stepper.goto(k)
        else:
            moved = self.stepper
        if isinstance(moved, str):
            note = str(moved)
        return self.state(note, width)

    def state(self, note: str = "", width: int = 0) -> str:
        """The current step as JSON (:func:`step_json` of its :class:`~lessons.shown.Shown`), its text
        wrapped to ``width`` columns (0: :data:`WIDTH`), with ``note``."""
        wrap = min(max(int(width), 40), 200) if width else WIDTH
        return step_json(Shown.of(self.stepper, picture=True), len(self.stepper), wrap, note)

    def answer(self, text: str) -> str:
        """Check the number typed in the page's Answer box against the current step's question, as the
        REPL's ``l.answer`` does: the sentence saying whether it is right and what the true value is."""
        words = text.strip()
        try:
            value = float(words)
        except ValueError:
            return f"Type a number in the Answer box (for example 0.25), not {words!r}."
        if value != value or value in (float("inf"), float("-inf")):
            return f"Type a finite number in the Answer box, not {words!r}."
        return str(self.stepper.answer(value))


def step_json(shown: Shown, count: int, width: int, note: str = "") -> str:
    """A step as the page shows it, as JSON: number, title (the lesson's), index, count (the lesson's steps),
    at_end, text (the REPL's text wrapped to ``width`` columns, its question answered in the page's box),
    code (the engine's lines the step ran, with their values, as in the text), width, the picture (``svg``:
    a drawing's SVG, or ``chart``: a plot's :meth:`viz.charts.Chart.to_dict`, else "" and None),
    picture_note (why a drawing is missing: too large, or Graphviz failed), note, question (the text of the
    step's question to predict, answered with :meth:`LessonView.answer`, or None)."""
    svg, chart, picture_note = _picture(shown)
    return json.dumps(
        {
            "number": shown.number,
            "title": shown.lesson,
            "index": shown.index,
            "count": count,
            "at_end": shown.at_end,
            "text": as_text(shown, width=width, keys="", place="page"),
            "code": shown.code,
            "width": width,
            "svg": svg,
            "chart": chart,
            "picture_note": picture_note,
            "note": note,
            "question": shown.question,
        }
    )


def _picture(shown: Shown) -> tuple[str, dict[str, Any] | None, str]:
    """The step's picture: (a drawing's SVG, a plot's chart data, why there is no picture)."""
    figure = shown.picture
    if shown.picture_note or figure is None:
        return "", None, shown.picture_note
    if isinstance(figure, Chart):
        try:
            return "", json.loads(figure.to_json()), ""
        except ValueError as e:  # a number that is not finite: JSON, and so the page, has none
            return "", None, f"the plot {figure.name} cannot be drawn in the page: {e}"
    try:
        svg = picture_svg(figure)
    except (ValueError, RuntimeError) as e:  # too large to draw readably, or Graphviz failed
        return "", None, str(e)
    return svg_element(svg), None, ""
